//! Behaviour under stress (issue 8, item 2): one packet-engine run per fabric of an incast on
//! top of random background load, on the compared cluster's topology with the fabric's engine
//! parameters. It reports the completion-time percentiles of the background ("victim") and
//! incast messages, and what the fabric's mechanisms did: pause frames and paused time (PFC),
//! credit stall time (InfiniBand), drops, retransmissions, timeouts, ECN marks and CNPs.
//!
//! The pattern is small enough to keep `fabricsim compare` well under a minute: an ESTIMATE of
//! a bad moment in a training cluster (a many-to-one exchange hitting one NIC while the rest of
//! the fabric carries unrelated flows), not a trace.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::engine::params;
use super::engine::run_dag;
use super::variant::Variant;
use crate::error::Error;
use crate::setup::engine_choice::EngineName;
use fabricsim_core::estimate::Estimate;
use fabricsim_core::topology::Topology;
use fabricsim_core::traffic::{self, SizeDist, Traffic};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_input::scenario::Design;
use fabricsim_mech::Status;
use fabricsim_mech::results::percentile;

/// Incast senders (the lowest-numbered hosts: a few servers' NICs under one leaf) and bytes
/// each sends to the last host of the cluster, all at time 0.
pub const INCAST_SENDERS: u32 = 32;
pub const INCAST_BYTES: u64 = 256 << 10;
/// Background: Poisson arrivals at every host at this share of its line rate, destinations
/// uniform over the other hosts, sizes uniform in [4 KiB, 256 KiB], for BACKGROUND_US.
pub const BACKGROUND_LOAD: f64 = 0.25;
pub const BACKGROUND_MIN_BYTES: u64 = 4 << 10;
pub const BACKGROUND_MAX_BYTES: u64 = 256 << 10;
pub const BACKGROUND_US: u64 = 100;
/// A run still going this long after the last post is stopped and reported partial (longer than
/// two RC timeouts at NCCL's default ib_timeout 20, 4.29 s: a tail loss under go-back-N waits
/// for one; idle simulated time costs nothing).
const HORIZON: Time = Time::from_ms(10_000);

/// Completion-time percentiles of one class of messages.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FctStats {
    pub messages: u64,
    pub completed: u64,
    pub fct_p50_ps: Option<u64>,
    pub fct_p99_ps: Option<u64>,
    pub fct_p999_ps: Option<u64>,
    pub fct_max_ps: Option<u64>,
}

impl FctStats {
    fn of(fcts: &mut [u64], messages: u64) -> FctStats {
        fcts.sort_unstable();
        FctStats {
            messages,
            completed: fcts.len() as u64,
            fct_p50_ps: percentile(fcts, 0.5),
            fct_p99_ps: percentile(fcts, 0.99),
            fct_p999_ps: percentile(fcts, 0.999),
            fct_max_ps: fcts.last().copied(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StressResult {
    /// The pattern in words.
    pub pattern: String,
    /// `complete`, or how the run ended (a deadlock, QPs out of retries, the horizon).
    pub status: Status,
    /// The engine that ran it (packet, or flow when chosen; the flow engine has no pauses,
    /// credits or marks, so those read 0).
    #[serde(deserialize_with = "crate::setup::engine_choice::deserialize_name")]
    pub engine: EngineName,
    pub background: FctStats,
    pub incast: FctStats,
    pub pause_frames: u64,
    /// PFC: time ports spent paused, summed over ports.
    pub pause_time_ps: u64,
    /// InfiniBand: time ports waited for credits, summed over ports.
    pub credit_stall_time_ps: u64,
    pub packets_dropped: u64,
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    pub ecn_marks: u64,
    pub cnps: u64,
    /// Completion times (µs) of the completed background and incast messages, for the CDFs.
    #[serde(skip)]
    pub background_fct_us: Vec<f64>,
    #[serde(skip)]
    pub incast_fct_us: Vec<f64>,
}

/// The pattern's description.
pub fn pattern(hosts: u32) -> String {
    format!(
        "{INCAST_SENDERS} hosts send {} KiB each to host {} at t = 0, over Poisson background \
         traffic at {:.0}% of every NIC's line rate for {BACKGROUND_US} us (sizes uniform in \
         {}-{} KiB, random destinations)",
        INCAST_BYTES >> 10,
        hosts - 1,
        100.0 * BACKGROUND_LOAD,
        BACKGROUND_MIN_BYTES >> 10,
        BACKGROUND_MAX_BYTES >> 10
    )
}

/// Runs the stress pattern on `topo` with `v`'s engine parameters and `seed`.
pub fn run(
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
) -> Result<StressResult, Error> {
    let p = params(v, design, seed)?;
    let hosts = topo.num_hosts() as u32;
    let rate = BitRate::gbps(design.profile.ports.rate_gbps as u64);
    let incast = Traffic::Incast {
        senders: INCAST_SENDERS.min(hosts - 1),
        dst: hosts - 1,
        bytes: INCAST_BYTES,
    };
    let background = Traffic::Uniform {
        load: BACKGROUND_LOAD,
        sizes: SizeDist::Uniform {
            min: BACKGROUND_MIN_BYTES,
            max: BACKGROUND_MAX_BYTES,
        },
        duration: Time::from_us(BACKGROUND_US),
    };
    let mut dag = traffic::generate(&incast, hosts, rate, seed)?;
    let n_incast = dag.messages.len();
    let bg = traffic::generate(&background, hosts, rate, seed)?;
    for m in &bg.messages {
        dag.push(m.src, m.dst, m.bytes, m.start, &[]);
    }
    let until = Time(Time::from_us(BACKGROUND_US).0 + HORIZON.0);
    let (r, kind) = run_dag(topo, &p, &dag, v.engine, Some(until))?;
    let (mut inc, mut bgf) = (Vec::new(), Vec::new());
    for m in &r.messages {
        if let Some(f) = m.fct_ps {
            if (m.id as usize) < n_incast {
                inc.push(f);
            } else {
                bgf.push(f);
            }
        }
    }
    let us = |v: &[u64]| v.iter().map(|&f| f as f64 / 1e6).collect::<Vec<f64>>();
    let (incast_fct_us, background_fct_us) = (us(&inc), us(&bgf));
    let fc = r.flow_control.as_ref();
    let c = &r.counters;
    Ok(StressResult {
        pattern: pattern(hosts),
        status: r.sim.status,
        engine: kind.name(),
        incast: FctStats::of(&mut inc, n_incast as u64),
        background: FctStats::of(&mut bgf, (dag.messages.len() - n_incast) as u64),
        pause_frames: c.pause_frames,
        pause_time_ps: fc.map_or(0, |f| f.pause_time_ps_total),
        credit_stall_time_ps: fc.map_or(0, |f| f.credit_stall_ps_total),
        packets_dropped: c.drops.total(),
        retransmitted_packets: c.retransmitted_packets,
        timeouts: c.timeouts,
        ecn_marks: c.ecn_marks,
        cnps: c.cnps,
        background_fct_us,
        incast_fct_us,
    })
}

/// One figure of the stress run as it is measured over seeds: its key (JSON, CSV), its label
/// (text, HTML), decimals, and how to read it from one seed's run (`None`: the run has none).
pub struct Figure {
    pub key: &'static str,
    pub label: &'static str,
    pub decimals: usize,
    pub get: fn(&StressResult) -> Option<f64>,
}

const fn fig(
    key: &'static str,
    label: &'static str,
    decimals: usize,
    get: fn(&StressResult) -> Option<f64>,
) -> Figure {
    Figure {
        key,
        label,
        decimals,
        get,
    }
}

fn us(ps: Option<u64>) -> Option<f64> {
    ps.map(|p| p as f64 / 1e6)
}

/// The figures of the stress run, in report order.
pub const FIGURES: [Figure; 16] = [
    fig("bg_fct_p50_us", "background FCT p50 (us)", 1, |s| {
        us(s.background.fct_p50_ps)
    }),
    fig("bg_fct_p99_us", "background FCT p99 (us)", 1, |s| {
        us(s.background.fct_p99_ps)
    }),
    fig("bg_fct_p999_us", "background FCT p99.9 (us)", 1, |s| {
        us(s.background.fct_p999_ps)
    }),
    fig("bg_messages", "background messages", 1, |s| {
        Some(s.background.messages as f64)
    }),
    fig("bg_not_completed", "background not completed", 1, |s| {
        Some((s.background.messages - s.background.completed) as f64)
    }),
    fig("incast_fct_p50_us", "incast FCT p50 (us)", 1, |s| {
        us(s.incast.fct_p50_ps)
    }),
    fig("incast_fct_p99_us", "incast FCT p99 (us)", 1, |s| {
        us(s.incast.fct_p99_ps)
    }),
    fig("incast_fct_max_us", "incast FCT max (us)", 1, |s| {
        us(s.incast.fct_max_ps)
    }),
    fig("pause_frames", "pause frames", 0, |s| {
        Some(s.pause_frames as f64)
    }),
    fig("pause_time_us", "PFC pause time, all ports (us)", 1, |s| {
        us(Some(s.pause_time_ps))
    }),
    fig(
        "credit_stall_us",
        "credit stall time, all ports (us)",
        1,
        |s| us(Some(s.credit_stall_time_ps)),
    ),
    fig("packets_dropped", "packets dropped", 0, |s| {
        Some(s.packets_dropped as f64)
    }),
    fig("retransmitted_packets", "retransmitted packets", 0, |s| {
        Some(s.retransmitted_packets as f64)
    }),
    fig("timeouts", "timeouts", 1, |s| Some(s.timeouts as f64)),
    fig("ecn_marks", "ECN marks", 0, |s| Some(s.ecn_marks as f64)),
    fig("cnps", "CNPs", 0, |s| Some(s.cnps as f64)),
];

/// The stress run over seeds: each figure of [`FIGURES`] by key (`None` when a seed's run has
/// none, such as a percentile with no message completed) and how the runs ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StressOverSeeds {
    pub seeds: u32,
    /// How many runs ended in each status, such as "complete x 5".
    pub status: Vec<String>,
    pub figures: BTreeMap<String, Option<Estimate>>,
}

impl StressOverSeeds {
    pub fn get(&self, key: &str) -> Option<Estimate> {
        self.figures.get(key).copied().flatten()
    }
}

/// The runs of every seed (each from [`run`] with that seed) as one summary.
pub fn over_seeds(runs: &[StressResult]) -> StressOverSeeds {
    let figures = FIGURES
        .iter()
        .map(|f| {
            let xs: Option<Vec<f64>> = runs.iter().map(f.get).collect();
            (
                f.key.to_string(),
                xs.and_then(|xs| Estimate::of_positive(&xs)),
            )
        })
        .collect();
    let mut status: Vec<(String, u32)> = Vec::new();
    for r in runs {
        let name = serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        match status.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1 += 1,
            None => status.push((name, 1)),
        }
    }
    StressOverSeeds {
        seeds: runs.len() as u32,
        status: status
            .into_iter()
            .map(|(s, n)| format!("{s} x {n}"))
            .collect(),
        figures,
    }
}
