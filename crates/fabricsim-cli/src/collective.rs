//! `fabricsim collective`: an NCCL collective over an nccl-tests size sweep, each size compiled
//! into a message DAG and run on the scenario's engine (`--engine`); nccl-tests' table and its closing
//! "Avg bus bandwidth" line, and with `--fit` the alpha-beta fit and its error at sizes the
//! fit did not use.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fabricsim::InputError;
use fabricsim::moe_skew::{self, Skew};
use fabricsim::sim::SimParams;
use fabricsim::workload::collective::count::{self, Shape};
use fabricsim::workload::collective::{self, Algo, CollectiveSpec, Comm, Op};
use fabricsim::workload::holdout::{Check, Holdout, holdout};
use fabricsim::workload::measure::{SeedsOutcome, SweepError, measure_seeds};
use fabricsim::workload::moe::Route;
use fabricsim::workload::run_engine::{Cluster, run_collective};
use fabricsim::workload::sweep::sizes;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::outcome::{Failure, Outcome, unless_interrupted};
use crate::outpath;
use crate::output;
use crate::scenario_flags::{self, ScenarioFlags};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Flags override the scenario file's [cluster], [fabric] and [topology] sections.
#[derive(Args)]
pub struct CollectiveArgs {
    /// Scenario file: the cluster as for `plan`.
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Cluster>,
    /// Collective: all_reduce, all_gather, reduce_scatter, all_to_all (alltoall), broadcast,
    /// reduce, sendrecv, moe_dispatch, moe_combine (an all-to-all routed by --skew; the size is
    /// each rank's routed buffer, tokens x top-k x hidden x bytes per element).
    #[arg(long, default_value = "all_reduce")]
    pub op: String,
    /// Smallest size (nccl-tests -b): 64K, 1M, 1G are powers of 1024 (as nccl-tests), 1MB is 10^6.
    #[arg(long, default_value = "1M")]
    pub min_bytes: String,
    /// Largest size (nccl-tests -e). Default: 64M on 16 GPUs, scaled by 16/GPUs (at least
    /// --min-bytes), so a default run takes seconds; packet runs grow with GPUs x size.
    #[arg(long)]
    pub max_bytes: Option<String>,
    /// Multiplication factor between sizes (nccl-tests -f).
    #[arg(long, default_value_t = 2)]
    pub step_factor: u64,
    /// Algorithm: ring, tree, hd (halving-doubling), hierarchical, chain, direct; default the
    /// op's first (ring; chain for broadcast/reduce; direct for all_to_all/sendrecv).
    #[arg(long)]
    pub algo: Option<String>,
    /// NCCL channels, each its own connection per peer (default NCCL's: 2 per NIC for ring and
    /// tree under [nccl] min/max_nchannels; for all-to-all and sendrecv one per NIC halved with
    /// the rank count as NCCL does, `collective::p2p_channels_per_peer`).
    #[arg(long)]
    pub channels: Option<u32>,
    /// Root rank of broadcast and reduce.
    #[arg(long, default_value_t = 0)]
    pub root: u32,
    /// Routing skew of moe_dispatch and moe_combine: uniform, zipf:S or histogram:FILE (one
    /// load per expert per line, expert 0 first).
    #[arg(long, default_value = "uniform")]
    pub skew: String,
    /// Routed experts of moe_dispatch and moe_combine, a multiple of the GPU count (default:
    /// one per GPU).
    #[arg(long)]
    pub experts: Option<u64>,
    /// Experts per token of moe_dispatch and moe_combine (a token's top-k are distinct).
    #[arg(long, default_value_t = 1)]
    pub top_k: u64,
    /// Expert capacity of moe_dispatch and moe_combine as a multiple of the even share, the
    /// tokens over it dropped (Switch Transformer's capacity factor); default none dropped.
    #[arg(long)]
    pub capacity_factor: Option<f64>,
    /// Fit alpha-beta to every other size and report its error at the sizes left out.
    #[arg(long)]
    pub fit: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// The alpha-beta fit of the sweep with its error at the sizes it left out.
struct FitReport {
    alpha_us: f64,
    bandwidth_gbps: f64,
    fitted_sizes_bytes: Vec<u64>,
    held_out: Vec<Check>,
    max_abs_rel_err: f64,
}

impl FitReport {
    fn of(h: &Holdout) -> FitReport {
        FitReport {
            alpha_us: h.fit.model.alpha_s * 1e6,
            bandwidth_gbps: h.fit.model.bytes_per_s / 1e9,
            fitted_sizes_bytes: h.fitted_sizes.clone(),
            held_out: h.checks.clone(),
            max_abs_rel_err: h.max_abs_rel_err(),
        }
    }

    fn to_text(&self) -> String {
        let mut s = format!(
            "# alpha-beta fit to the engine runs at {} B: alpha {:.3} us, bandwidth {:.3} GB/s\n",
            self.fitted_sizes_bytes
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            self.alpha_us,
            self.bandwidth_gbps
        );
        s.push_str("#  held-out size (B)   simulated (us)    fitted (us)   error\n");
        for c in &self.held_out {
            s.push_str(&format!(
                "# {:>18}  {:>15.2}  {:>13.2}  {:>+6.2}%\n",
                c.size_bytes,
                c.measured_s * 1e6,
                c.model_s * 1e6,
                100.0 * c.rel_err
            ));
        }
        s.push_str(&format!(
            "# max |error| at held-out sizes: {:.2}%\n",
            100.0 * self.max_abs_rel_err
        ));
        s
    }

    fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "alpha_us": self.alpha_us,
            "bandwidth_GBps": self.bandwidth_gbps,
            "fitted_sizes_bytes": self.fitted_sizes_bytes,
            "held_out": self.held_out,
            "max_abs_rel_err": self.max_abs_rel_err,
        })
    }
}

/// A size flag in the one size convention (`units::parse_bytes`): a bare K, M, G is a power of
/// 1024 as in nccl-tests' `-b`/`-e` (src/common.cu `parsesize`), KB/MB/GB powers of 1000.
fn bytes_flag(flag: &str, s: &str) -> Result<u64, InputError> {
    fabricsim::units::parse_bytes(s).map_err(|e| {
        InputError::flag(
            flag,
            s,
            e,
            "a size such as 8, 64K, 1M (powers of 1024) or 4MB (powers of 1000), at most 2^50 B",
        )
    })
}

/// Each rank's server, in comm order.
fn servers_of(comm: &Comm) -> Vec<u32> {
    comm.gpus.iter().map(|&g| comm.place.server(g)).collect()
}

/// The routing of an MoE op from `--skew`, `--experts`, `--top-k` and `--capacity-factor`,
/// with the text report's line on it; `None` for the other ops.
fn moe_route(
    a: &CollectiveArgs,
    op: Op,
    comm: &Comm,
) -> Result<Option<(Route, String)>, InputError> {
    let ranks = comm.len();
    if !matches!(op, Op::MoeDispatch | Op::MoeCombine) {
        return Ok(None);
    }
    let skew = Skew::parse(
        &a.skew,
        &|problem| InputError::flag("--skew", &a.skew, problem, moe_skew::ALLOWED),
        &|f| f.to_string(),
    )?;
    let experts = a.experts.unwrap_or(ranks as u64);
    if experts == 0 || experts % ranks as u64 != 0 {
        return Err(InputError::flag(
            "--experts",
            experts,
            format!("the experts do not split evenly over the {ranks} GPUs"),
            format!("a multiple of {ranks}"),
        ));
    }
    if a.top_k == 0 || a.top_k > experts {
        return Err(InputError::flag(
            "--top-k",
            a.top_k,
            "a token picks 1 to experts distinct experts",
            format!("1 to {experts}"),
        ));
    }
    if let Some(c) = a.capacity_factor.filter(|c| !(c.is_finite() && *c > 0.0)) {
        return Err(InputError::flag(
            "--capacity-factor",
            c,
            "not a positive multiple of the even share",
            "a number above 0, such as 1.25",
        ));
    }
    let route = Route::new(&skew, experts, a.top_k, ranks, a.capacity_factor)
        .map_err(|problem| InputError::flag("--skew", &a.skew, problem, moe_skew::ALLOWED))?;
    let sl = route.slowest(&servers_of(comm));
    let line = format!(
        "# routing: {} over {experts} experts, top-{}{}, expected loads: rank 0 takes {:.4} of each buffer; the slowest rank moves {:.3}x the mean rank's bytes ({:.3}x a uniform rank's)\n",
        skew.name(),
        a.top_k,
        a.capacity_factor
            .map(|c| format!(", capacity factor {c}"))
            .unwrap_or_default(),
        route.row(1 << 40)[0] as f64 / (1u64 << 40) as f64,
        sl.over_mean,
        sl.over_uniform,
    );
    Ok(Some((route, line)))
}

pub fn run(a: CollectiveArgs) -> Outcome {
    outpath::check(&[("--out", a.out.as_deref())])?;
    let scenario = a.flags.load(a.scenario.as_deref())?;
    let op = Op::parse("--op", &a.op)?;
    let algo = match &a.algo {
        Some(s) => Algo::parse("--algo", s)?,
        None => Algo::for_op(op)[0],
    };
    let min = bytes_flag("--min-bytes", &a.min_bytes)?;
    let cluster = Cluster::new(&scenario)?;
    let comm = Comm::world(&cluster.place);
    let max = match &a.max_bytes {
        Some(m) => bytes_flag("--max-bytes", m)?,
        None => ((64u64 << 20) * 16 / comm.len() as u64).max(min),
    };
    let sweep = sizes(op, comm.len() as u32, min, max, a.step_factor)?;
    if a.fit && sweep.len() < 3 {
        return Err(InputError::flag(
            "--fit",
            "true",
            format!(
                "the sweep has {} size(s); a fit checked at held-out sizes needs 3",
                sweep.len()
            ),
            "a --min-bytes .. --max-bytes range with at least 3 sizes",
        )
        .into());
    }
    let channels = a.channels.unwrap_or_else(|| {
        collective::nccl_channels(
            &cluster.design.nccl,
            cluster.design.spec.nics_per_node,
            algo,
            comm.len() as u32,
        )
    });
    let route = moe_route(&a, op, &comm)?;
    let spec = CollectiveSpec {
        algo,
        root: a.root,
        route: route.as_ref().map(|(r, _)| r),
        ..CollectiveSpec::with_defaults(op, 0, channels)
    };
    // Refused from the collective's shape before any DAG is built when the largest size that
    // runs per message would not fit in memory (exit 2); a dense all-to-all runs as flow
    // classes (`flow::dense`) and is estimated as such; each built DAG is checked again on the
    // engine that runs it.
    let bytes: Vec<u64> = sweep.iter().map(|s| s.bytes).collect();
    let at = |b: u64| CollectiveSpec { bytes: b, ..spec };
    let per_message: Vec<u64> = bytes
        .iter()
        .copied()
        .filter(|&b| !cluster.dense_candidate(&at(b), &comm))
        .collect();
    count::admit(
        &scenario,
        cluster.engine,
        &spec,
        Shape::of(&comm),
        &per_message,
    )?;
    if per_message.len() < bytes.len() {
        fabricsim::memory::admit_dense(&scenario, &cluster.topology, comm.len() as u64)?;
    }
    let seeds = fabricsim::workload::seeds::derive(cluster.params.seed, scenario.engine_seeds()?);
    // Runs over the seeds share the cores, as many at once as fit in memory.
    let largest = per_message
        .iter()
        .map(|&b| CollectiveSpec { bytes: b, ..spec })
        .map(|s| count::messages(&s, Shape::of(&comm)))
        .max()
        .unwrap_or(0);
    let threads = fabricsim::workload::seeds::threads().min(fabricsim::memory::runs_at_once(
        &scenario,
        fabricsim::memory::before_dag(cluster.engine),
        fabricsim::memory::Run::Collective,
        largest,
    )?);
    let tty = crate::progress::wanted();
    let total = sweep.len();
    let size = AtomicUsize::new(0);
    let runs = AtomicUsize::new(0);
    // The engines that ran the sizes (with `auto`, small sizes may run on one, large on the
    // other).
    let engines = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let (topology, params) = (&cluster.topology, &cluster.params);
    let outcome = measure_seeds(
        &spec,
        &comm,
        cluster.nvlink(),
        &sweep,
        &seeds,
        threads,
        // A dense all-to-all on the flow engine runs as flow classes, without its DAG.
        |s| {
            let why = match cluster.run_dense(s, &comm).map_err(Failure::from)? {
                Ok(r) => {
                    engines.borrow_mut().insert("flow");
                    return Ok(Some(fabricsim::workload::run_engine::CollectiveRun::from(
                        r,
                    )));
                }
                Err(why) => why,
            };
            if let Some(why) = why {
                if let Some(said) = why.said() {
                    eprintln!("[collective] {} B runs per message: {said}", s.bytes);
                }
                // Not estimated before the sweep: estimated now, before its DAG is built.
                count::admit(&scenario, cluster.engine, s, Shape::of(&comm), &[s.bytes])?;
            }
            Ok(None)
        },
        |dag| {
            // Refused before it runs when it would not fit in memory (exit 2).
            let kind = cluster.engine_for(dag);
            fabricsim::memory::check(&scenario, kind, fabricsim::memory::Run::Collective, dag)?;
            engines.borrow_mut().insert(kind.name());
            let size = size.fetch_add(1, Ordering::Relaxed) + 1;
            runs.store(0, Ordering::Relaxed);
            if tty {
                eprint!(
                    "\r[collective] size {size}/{total}: {} messages, {} seeds   ",
                    dag.messages.len(),
                    seeds.len()
                );
            }
            Ok::<_, Failure>(kind)
        },
        |dag, &kind, seed| {
            let p = SimParams {
                seed,
                ..params.clone()
            };
            let r = run_collective(kind, topology, &p, dag, None);
            let done = runs.fetch_add(1, Ordering::Relaxed) + 1;
            let size = size.load(Ordering::Relaxed);
            if tty {
                eprint!(
                    "\r[collective] size {size}/{total}: {done}/{} seeds run   ",
                    seeds.len()
                );
            }
            r.map_err(Failure::from)
        },
    )
    .map_err(|e| match e {
        SweepError::Input(e) => Failure::Input(e),
        SweepError::Run { bytes, error } => match error {
            Failure::Run(m) => Failure::Run(format!("the engine run of {bytes} bytes failed: {m}")),
            input => input,
        },
    })?;
    if tty {
        eprint!("\r{:60}\r", "");
    }
    let SeedsOutcome {
        table,
        points,
        interrupted,
    } = outcome;
    let mark = format!(
        "# interrupted: {} of {total} sizes finished{}\n",
        points.len(),
        if a.fit { "; no fit" } else { "" }
    );
    let fit = if a.fit && !interrupted {
        let h = holdout(&points).map_err(|e| Failure::Run(format!("alpha-beta fit: {e}")))?;
        Some(FitReport::of(&h))
    } else {
        None
    };
    let fabric = &cluster.design.profile.id;
    let engine = engines
        .into_inner()
        .into_iter()
        .collect::<Vec<_>>()
        .join("+");
    let (ranks, servers) = (comm.len(), cluster.place.servers());
    let text = match a.format {
        Format::Text => {
            let mut s = format!(
                "# fabricsim collective: {op} ({}, {channels} channel{}) on {ranks} GPUs in {servers} servers, {fabric}, {engine} engine\n",
                algo.name(),
                if channels == 1 { "" } else { "s" },
            );
            if let Some((_, line)) = &route {
                s.push_str(line);
            }
            s.push_str(&table.to_text());
            if let Some(f) = &fit {
                s.push_str(&f.to_text());
            }
            if interrupted {
                s.push_str(&mark);
            }
            s
        }
        Format::Json => {
            let mut v = serde_json::json!({
            "op": op.name(),
            "algo": algo.name(),
            "ranks": ranks,
            "servers": servers,
            "channels": channels,
            "fabric": fabric,
            "engine": engine,
            "seeds": seeds,
            "table": table,
            "fit": fit.as_ref().map(FitReport::to_json),
            });
            if let Some((r, _)) = &route {
                let sl = r.slowest(&servers_of(&comm));
                v["routing"] = serde_json::json!({
                    "skew": a.skew,
                    "experts": a.experts.unwrap_or(ranks as u64),
                    "top_k": a.top_k,
                    "capacity_factor": a.capacity_factor,
                    "slowest_over_mean": sl.over_mean,
                    "slowest_over_uniform": sl.over_uniform,
                    "kept_share": sl.kept,
                });
            }
            if interrupted {
                v["status"] = "interrupted".into();
                v["unfinished_sizes_bytes"] = bytes[points.len()..].into();
            }
            output::json(serde_json::to_string_pretty(&v))?
        }
    };
    output::emit(a.out.as_deref(), &text)?;
    unless_interrupted(|| mark.trim_start_matches("# interrupted: ").trim_end().into())
}
