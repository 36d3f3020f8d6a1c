//! `fabricsim collective`: an NCCL collective over an nccl-tests size sweep, each size compiled
//! into a message DAG and run on the scenario's engine (`--engine`); nccl-tests' table and its closing
//! "Avg bus bandwidth" line, and with `--fit` the alpha-beta fit and its error at sizes the
//! fit did not use.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fabricsim::InputError;
use fabricsim::sim::Progress;
use fabricsim::workload::collective::count::{self, Shape};
use fabricsim::workload::collective::{Algo, CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::holdout::{Check, Holdout, holdout};
use fabricsim::workload::measure::{SweepError, SweepOutcome, measure_by};
use fabricsim::workload::run_engine::Cluster;
use fabricsim::workload::sweep::sizes;

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
    /// reduce, sendrecv.
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
    /// NCCL channels (default: the NICs per server, so the rings use every rail).
    #[arg(long)]
    pub channels: Option<u32>,
    /// Root rank of broadcast and reduce.
    #[arg(long, default_value_t = 0)]
    pub root: u32,
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

/// nccl-tests' binary names (`alltoall`) and the spelled-out forms both name an op.
fn parse_op(s: &str) -> Result<Op, InputError> {
    let name = match s {
        "all_to_all" => "alltoall",
        other => other,
    };
    Op::parse("--op", name).map_err(|e| InputError {
        value: s.into(),
        ..e
    })
}

fn parse_algo(s: &str) -> Result<Algo, InputError> {
    let name = match s {
        "hd" => "halving-doubling",
        other => other,
    };
    Algo::parse("--algo", name).map_err(|e| InputError {
        value: s.into(),
        ..e
    })
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

pub fn run(a: CollectiveArgs) -> Outcome {
    outpath::check(&[("--out", a.out.as_deref())])?;
    let scenario = a.flags.load(a.scenario.as_deref())?;
    let op = parse_op(&a.op)?;
    let algo = match &a.algo {
        Some(s) => parse_algo(s)?,
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
    let channels = a.channels.unwrap_or(cluster.design.spec.nics_per_node);
    let spec = CollectiveSpec {
        algo,
        root: a.root,
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
    let tty = crate::progress::wanted();
    let total = sweep.len();
    let mut done = 0usize;
    // The engines that ran the sizes (with `auto`, small sizes may run on one, large on the
    // other).
    let mut engines = std::collections::BTreeSet::new();
    let outcome = measure_by(&spec, &comm, &sweep, |s| {
        done += 1;
        if tty {
            eprint!("\r[collective] size {done}/{total}: {} B   ", s.bytes);
        }
        let why = match cluster.run_dense(s, &comm).map_err(|e| SweepError::Run {
            bytes: s.bytes,
            error: Failure::from(e),
        })? {
            Ok(r) => {
                if tty {
                    eprint!("\r{:60}\r", "");
                }
                engines.insert("flow");
                return Ok(Ok(
                    fabricsim::workload::run_engine::CollectiveRun::from(r).time
                ));
            }
            Err(why) => why,
        };
        if let Some(why) = why {
            eprintln!(
                "\r[collective] {} B: per message ({why:?} for flow classes)",
                s.bytes
            );
            // Not estimated before the sweep: estimated now, before its DAG is built.
            count::admit(&scenario, cluster.engine, s, Shape::of(&comm), &[s.bytes]).map_err(
                |e| SweepError::Run {
                    bytes: s.bytes,
                    error: Failure::Input(e),
                },
            )?;
        }
        let dag = compile(s, &comm, cluster.nvlink()).map_err(SweepError::Input)?;
        let dag = &dag;
        Ok((|| {
            // Refused before it runs when it would not fit in memory (exit 2).
            let kind = cluster.engine_for(dag);
            fabricsim::memory::check(&scenario, kind, fabricsim::memory::Run::Collective, dag)?;
            if tty {
                eprint!(
                    "\r[collective] size {done}/{total}: {} messages   ",
                    dag.messages.len()
                );
            }
            let mut progress = |p: &Progress| {
                eprint!(
                    "\r[collective] size {done}/{total}: t = {:.1} us, {}/{} messages   ",
                    p.now.as_us_f64(),
                    p.completed,
                    p.total
                );
                true
            };
            let r = cluster.run(dag, if tty { Some(&mut progress) } else { None });
            if tty {
                eprint!("\r{:60}\r", "");
            }
            r.map(|r| {
                engines.insert(r.engine.name());
                r.time
            })
            .map_err(Failure::from)
        })())
    })
    .map_err(|e| match e {
        SweepError::Input(e) => Failure::Input(e),
        SweepError::Run { bytes, error } => match error {
            Failure::Run(m) => Failure::Run(format!("the engine run of {bytes} bytes failed: {m}")),
            input => input,
        },
    })?;
    let SweepOutcome {
        table,
        points,
        interrupted,
        ..
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
    let engine = engines.into_iter().collect::<Vec<_>>().join("+");
    let (ranks, servers) = (comm.len(), cluster.place.servers());
    let text = match a.format {
        Format::Text => {
            let mut s = format!(
                "# fabricsim collective: {op} ({}, {channels} channel{}) on {ranks} GPUs in {servers} servers, {fabric}, {engine} engine\n",
                algo.name(),
                if channels == 1 { "" } else { "s" },
            );
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
            "table": table,
            "fit": fit.as_ref().map(FitReport::to_json),
            });
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
