//! One `collective` job from a scenario, the road the CLI and the Python package share: an NCCL
//! collective over an nccl-tests size sweep, each size compiled into a message DAG and run on
//! the scenario's engine over its seeds; nccl-tests' table (text and JSON) and with `fit` the
//! alpha-beta fit and its error at sizes the fit did not use.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};

use fabricsim_input::moe_skew::{self, Skew};
use fabricsim_input::scenario::Scenario;
use fabricsim_mech::params::SimParams;

use super::count::{self, Shape};
use super::{Algo, CollectiveSpec, Comm, Op};
use crate::error::{Error, InputError};
use crate::setup::memory;
use crate::workload::holdout::{Check, Holdout, holdout};
use crate::workload::measure::{SeedsOutcome, SweepError, measure_seeds};
use crate::workload::moe::Route;
use crate::workload::run_engine::{Cluster, CollectiveRun, run_collective};
use crate::workload::sweep::sizes;
use crate::workload::table::Table;

/// The smallest size by default (nccl-tests `-b`).
pub const DEFAULT_MIN_BYTES: &str = "1M";
/// The collective run by default.
pub const DEFAULT_OP: &str = "all_reduce";
/// The routing skew of the MoE ops by default.
pub const DEFAULT_SKEW: &str = "uniform";

/// What to run beyond the scenario: the CLI's flags (`--op`, `--min-bytes`, ...), each field
/// named as its flag.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub op: String,
    pub min_bytes: String,
    /// Default: 64M on 16 GPUs, scaled by 16/GPUs (at least `min_bytes`).
    pub max_bytes: Option<String>,
    pub step_factor: u64,
    pub algo: Option<String>,
    pub channels: Option<u32>,
    pub root: u32,
    pub skew: String,
    pub experts: Option<u64>,
    pub top_k: u64,
    pub capacity_factor: Option<f64>,
    pub fit: bool,
}

impl Default for Request {
    /// The CLI's defaults.
    fn default() -> Request {
        Request {
            op: DEFAULT_OP.into(),
            min_bytes: DEFAULT_MIN_BYTES.into(),
            max_bytes: None,
            step_factor: 2,
            algo: None,
            channels: None,
            root: 0,
            skew: DEFAULT_SKEW.into(),
            experts: None,
            top_k: 1,
            capacity_factor: None,
            fit: false,
        }
    }
}

/// The request's flags, as `Request::set` takes them.
pub const FLAGS: &str = "--op, --min-bytes, --max-bytes, --step-factor, --algo, --channels, \
                         --root, --skew, --experts, --top-k, --capacity-factor, --fit";

impl Request {
    /// Sets the field `flag` names from its text (the Python package's keyword overrides);
    /// `Ok(false)` when `flag` is not one of [`FLAGS`] (a scenario flag, then).
    pub fn set(&mut self, flag: &str, value: &str) -> Result<bool, InputError> {
        fn num<T: std::str::FromStr>(flag: &str, v: &str, what: &str) -> Result<T, InputError> {
            v.parse()
                .map_err(|_| InputError::flag(flag, v, "not a number", what.to_string()))
        }
        let v = value.to_string();
        match flag {
            "--op" => self.op = v,
            "--min-bytes" => self.min_bytes = v,
            "--max-bytes" => self.max_bytes = Some(v),
            "--step-factor" => self.step_factor = num(flag, value, "a whole number such as 2")?,
            "--algo" => self.algo = Some(v),
            "--channels" => self.channels = Some(num(flag, value, "a whole number such as 4")?),
            "--root" => self.root = num(flag, value, "a rank, 0 or more")?,
            "--skew" => self.skew = v,
            "--experts" => self.experts = Some(num(flag, value, "a whole number such as 64")?),
            "--top-k" => self.top_k = num(flag, value, "a whole number such as 2")?,
            "--capacity-factor" => {
                self.capacity_factor = Some(num(flag, value, "a number above 0, such as 1.25")?)
            }
            "--fit" => {
                self.fit = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(InputError::flag(flag, value, "not a bool", "true or false")),
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// What the job tells its caller while it runs (the CLI's progress line and notes).
pub enum Event {
    /// A dense all-to-all size runs per message, and why.
    PerMessage { bytes: u64, why: &'static str },
    /// Size `size` of `total` starts: its messages and seeds.
    Size {
        size: usize,
        total: usize,
        messages: usize,
        seeds: usize,
    },
    /// A seed of the current size finished.
    Seed {
        size: usize,
        total: usize,
        done: usize,
        seeds: usize,
    },
}

/// The routing of an MoE op as run: its skew, experts and top-k, and the text report's line.
pub struct Routing {
    pub route: Route,
    pub line: String,
    pub skew: String,
    pub experts: u64,
    pub top_k: u64,
    pub capacity_factor: Option<f64>,
    pub slowest_over_mean: f64,
    pub slowest_over_uniform: f64,
    pub kept_share: f64,
}

/// What a `collective` job measured.
pub struct Outcome {
    pub op: Op,
    pub algo: Algo,
    pub channels: u32,
    pub ranks: usize,
    pub servers: u32,
    pub fabric: String,
    /// The engines that ran the sizes, `+`-joined (with `auto`, small sizes may run on one,
    /// large on the other).
    pub engine: String,
    pub seeds: Vec<u64>,
    pub table: Table,
    pub fit: Option<FitReport>,
    pub routing: Option<Routing>,
    /// Every size of the sweep, in bytes.
    pub sizes_bytes: Vec<u64>,
    /// Sizes finished (fewer than `sizes_bytes` when interrupted).
    pub finished: usize,
    /// A stop request (`fabricsim::stop`) ended the sweep early.
    pub interrupted: bool,
    /// `fit` was asked (an interrupted sweep has no fit).
    pub fit_asked: bool,
}

/// The alpha-beta fit of the sweep with its error at the sizes it left out.
pub struct FitReport {
    pub alpha_us: f64,
    pub bandwidth_gbps: f64,
    pub fitted_sizes_bytes: Vec<u64>,
    pub held_out: Vec<Check>,
    pub max_abs_rel_err: f64,
}

impl FitReport {
    pub fn of(h: &Holdout) -> FitReport {
        FitReport {
            alpha_us: h.fit.model.alpha_s * 1e6,
            bandwidth_gbps: h.fit.model.bytes_per_s / 1e9,
            fitted_sizes_bytes: h.fitted_sizes.clone(),
            held_out: h.checks.clone(),
            max_abs_rel_err: h.max_abs_rel_err(),
        }
    }

    pub fn to_text(&self) -> String {
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

    pub fn to_json(&self) -> serde_json::Value {
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
    fabricsim_core::units::parse_bytes(s).map_err(|e| {
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

/// The routing of an MoE op from `skew`, `experts`, `top_k` and `capacity_factor`; `None`
/// for the other ops.
fn moe_route(r: &Request, op: Op, comm: &Comm) -> Result<Option<Routing>, InputError> {
    let ranks = comm.len();
    if !matches!(op, Op::MoeDispatch | Op::MoeCombine) {
        return Ok(None);
    }
    let skew = Skew::parse(
        &r.skew,
        &|problem| InputError::flag("--skew", &r.skew, problem, moe_skew::ALLOWED),
        &|f| f.to_string(),
    )?;
    let experts = r.experts.unwrap_or(ranks as u64);
    if experts == 0 || experts % ranks as u64 != 0 {
        return Err(InputError::flag(
            "--experts",
            experts,
            format!("the experts do not split evenly over the {ranks} GPUs"),
            format!("a multiple of {ranks}"),
        ));
    }
    if r.top_k == 0 || r.top_k > experts {
        return Err(InputError::flag(
            "--top-k",
            r.top_k,
            "a token picks 1 to experts distinct experts",
            format!("1 to {experts}"),
        ));
    }
    if let Some(c) = r.capacity_factor.filter(|c| !(c.is_finite() && *c > 0.0)) {
        return Err(InputError::flag(
            "--capacity-factor",
            c,
            "not a positive multiple of the even share",
            "a number above 0, such as 1.25",
        ));
    }
    let route = Route::new(&skew, experts, r.top_k, ranks, r.capacity_factor)
        .map_err(|problem| InputError::flag("--skew", &r.skew, problem, moe_skew::ALLOWED))?;
    let sl = route.slowest(&servers_of(comm));
    let line = format!(
        "# routing: {} over {experts} experts, top-{}{}, expected loads: rank 0 takes {:.4} of each buffer; the slowest rank moves {:.3}x the mean rank's bytes ({:.3}x a uniform rank's)\n",
        skew.name(),
        r.top_k,
        r.capacity_factor
            .map(|c| format!(", capacity factor {c}"))
            .unwrap_or_default(),
        route.row(1 << 40)[0] as f64 / (1u64 << 40) as f64,
        sl.over_mean,
        sl.over_uniform,
    );
    Ok(Some(Routing {
        route,
        line,
        skew: r.skew.clone(),
        experts,
        top_k: r.top_k,
        capacity_factor: r.capacity_factor,
        slowest_over_mean: sl.over_mean,
        slowest_over_uniform: sl.over_uniform,
        kept_share: sl.kept,
    }))
}

/// Runs the collective `r` asks on `scenario`'s cluster, engine and seeds; `on` hears of each
/// size and seed (called from the worker threads too). Input that cannot run (sizes, flags, a
/// sweep that would not fit in memory) is refused before any engine runs.
pub fn run(
    scenario: &Scenario,
    r: &Request,
    on: &(dyn Fn(Event) + Sync),
) -> Result<Outcome, Error> {
    let op = Op::parse("--op", &r.op)?;
    let algo = match &r.algo {
        Some(s) => Algo::parse("--algo", s)?,
        None => Algo::for_op(op)[0],
    };
    let min = bytes_flag("--min-bytes", &r.min_bytes)?;
    let cluster = Cluster::new(scenario)?;
    let comm = Comm::world(&cluster.place);
    let max = match &r.max_bytes {
        Some(m) => bytes_flag("--max-bytes", m)?,
        None => ((64u64 << 20) * 16 / comm.len() as u64).max(min),
    };
    let sweep = sizes(op, comm.len() as u32, min, max, r.step_factor)?;
    if r.fit && sweep.len() < 3 {
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
    let channels = r.channels.unwrap_or_else(|| {
        super::nccl_channels(
            &cluster.design.nccl,
            cluster.design.spec.nics_per_node,
            algo,
            comm.len() as u32,
        )
    });
    let routing = moe_route(r, op, &comm)?;
    let spec = CollectiveSpec {
        algo,
        root: r.root,
        route: routing.as_ref().map(|m| &m.route),
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
        scenario,
        cluster.engine,
        &spec,
        Shape::of(&comm),
        &per_message,
    )?;
    if per_message.len() < bytes.len() {
        memory::admit_dense(scenario, &cluster.topology, comm.len() as u64)?;
    }
    let seeds = crate::workload::seeds::derive(cluster.params.seed, scenario.engine_seeds()?);
    // Runs over the seeds share the cores, as many at once as fit in memory.
    let largest = per_message
        .iter()
        .map(|&b| count::messages(&at(b), Shape::of(&comm)))
        .max()
        .unwrap_or(0);
    let threads = crate::workload::seeds::threads().min(memory::runs_at_once(
        scenario,
        memory::before_dag(cluster.engine),
        memory::Run::Collective,
        largest,
    )?);
    let total = sweep.len();
    let size = AtomicUsize::new(0);
    let runs = AtomicUsize::new(0);
    let engines = RefCell::new(BTreeSet::new());
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
            let why = match cluster.run_dense(s, &comm)? {
                Ok(r) => {
                    engines.borrow_mut().insert("flow");
                    return Ok(Some(CollectiveRun::from(r)));
                }
                Err(why) => why,
            };
            if let Some(why) = why {
                if let Some(said) = why.said() {
                    on(Event::PerMessage {
                        bytes: s.bytes,
                        why: said,
                    });
                }
                // Not estimated before the sweep: estimated now, before its DAG is built.
                count::admit(scenario, cluster.engine, s, Shape::of(&comm), &[s.bytes])?;
            }
            Ok(None)
        },
        |dag| {
            // Refused before it runs when it would not fit in memory (exit 2).
            let kind = cluster.engine_for(dag);
            memory::check(scenario, kind, memory::Run::Collective, dag)?;
            engines.borrow_mut().insert(kind.name());
            let size = size.fetch_add(1, Ordering::Relaxed) + 1;
            runs.store(0, Ordering::Relaxed);
            on(Event::Size {
                size,
                total,
                messages: dag.messages.len(),
                seeds: seeds.len(),
            });
            Ok::<_, Error>(kind)
        },
        |dag, &kind, seed| {
            let p = SimParams {
                seed,
                ..params.clone()
            };
            let r = run_collective(kind, topology, &p, dag, None);
            on(Event::Seed {
                size: size.load(Ordering::Relaxed),
                total,
                done: runs.fetch_add(1, Ordering::Relaxed) + 1,
                seeds: seeds.len(),
            });
            r
        },
    )
    .map_err(|e| match e {
        SweepError::Input(e) => Error::Input(e),
        SweepError::Run {
            error: Error::Input(e),
            ..
        } => Error::Input(e),
        SweepError::Run { bytes, error } => {
            Error::Run(format!("the engine run of {bytes} bytes failed: {error}"))
        }
    })?;
    let SeedsOutcome {
        table,
        points,
        interrupted,
    } = outcome;
    let fit = if r.fit && !interrupted {
        let h = holdout(&points).map_err(|e| Error::Run(format!("alpha-beta fit: {e}")))?;
        Some(FitReport::of(&h))
    } else {
        None
    };
    Ok(Outcome {
        op,
        algo,
        channels,
        ranks: comm.len(),
        servers: cluster.place.servers(),
        fabric: cluster.design.profile.id.clone(),
        engine: engines
            .into_inner()
            .into_iter()
            .collect::<Vec<_>>()
            .join("+"),
        seeds,
        table,
        fit,
        routing,
        sizes_bytes: bytes,
        finished: points.len(),
        interrupted,
        fit_asked: r.fit,
    })
}

impl Outcome {
    /// The line an interrupted sweep ends with (text), and what it says (the CLI's message).
    pub fn interrupted_mark(&self) -> String {
        format!(
            "# interrupted: {} of {} sizes finished{}\n",
            self.finished,
            self.sizes_bytes.len(),
            if self.fit_asked { "; no fit" } else { "" }
        )
    }

    /// nccl-tests' table with a header line, the routing, the fit and the interrupted mark.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "# fabricsim collective: {} ({}, {} channel{}) on {} GPUs in {} servers, {}, {} engine\n",
            self.op,
            self.algo.name(),
            self.channels,
            if self.channels == 1 { "" } else { "s" },
            self.ranks,
            self.servers,
            self.fabric,
            self.engine,
        );
        if let Some(m) = &self.routing {
            s.push_str(&m.line);
        }
        s.push_str(&self.table.to_text());
        if let Some(f) = &self.fit {
            s.push_str(&f.to_text());
        }
        if self.interrupted {
            s.push_str(&self.interrupted_mark());
        }
        s
    }

    /// The JSON `fabricsim collective --format json` writes.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "op": self.op.name(),
            "algo": self.algo.name(),
            "ranks": self.ranks,
            "servers": self.servers,
            "channels": self.channels,
            "fabric": self.fabric,
            "engine": self.engine,
            "seeds": self.seeds,
            "table": self.table,
            "fit": self.fit.as_ref().map(FitReport::to_json),
        });
        if let Some(m) = &self.routing {
            v["routing"] = serde_json::json!({
                "skew": m.skew,
                "experts": m.experts,
                "top_k": m.top_k,
                "capacity_factor": m.capacity_factor,
                "slowest_over_mean": m.slowest_over_mean,
                "slowest_over_uniform": m.slowest_over_uniform,
                "kept_share": m.kept_share,
            });
        }
        if self.interrupted {
            v["status"] = "interrupted".into();
            v["unfinished_sizes_bytes"] = self.sizes_bytes[self.finished..].into();
        }
        v
    }

    /// [`Self::to_json`] as pretty text with a final newline, as the CLI writes it.
    pub fn json_text(&self) -> Result<String, Error> {
        serde_json::to_string_pretty(&self.to_json())
            .map(|t| t + "\n")
            .map_err(|e| Error::Run(e.to_string()))
    }
}
