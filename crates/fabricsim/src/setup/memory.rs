//! The memory a run will take, estimated before it starts, against what the machine has: a
//! run that would not fit is refused with the estimate and what brings it down, instead of
//! growing until the kernel kills it.
//!
//! Both engines hold per-message state (the DAG, queue pairs, routes, the flow engine's
//! subflows and rate-solver rows, the packet engine's packets in flight, which grow with the
//! messages posted at once), so the estimate is a fixed part plus a cost per message, per
//! engine and kind of run ([`Run`]), fitted on the peak RSS of collectives, `sim` and
//! training-step runs (`/usr/bin/time -v`; docs/memory.md has the table). The count comes
//! from the run's shape before anything is built ([`admit`]: the collective's, the traffic's,
//! the step DAG's closed form) and again from each built DAG ([`check`]).

use crate::setup::engine_choice::{EngineChoice, EngineKind};
use fabricsim_core::error::InputError;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_input::scenario::Scenario;

/// Bytes outside the per-message state (the program, the topology of these sizes).
const BASE_BYTES: u64 = 8 << 20;

/// What a run keeps per message besides the engine's state, which sets its cost per message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// A collective's DAG (`collective`): totals only.
    Collective,
    /// `sim`: a result record per message, cloned and written as JSON after the run.
    Sim,
    /// A training step's DAG (`train --step-model flow_dag`): mostly NVLink operations, which
    /// hold no flow state.
    TrainStep,
}

/// Bytes per message, measured (peak RSS, docs/memory.md): a collective 390 B on the flow
/// engine (all-to-all), 750 B on the packet engine; `sim` 730 B and 750 B; a training step's
/// DAG 270 B on the flow engine (the only one that runs it).
fn per_message(kind: EngineKind, run: Run) -> u64 {
    match (run, kind) {
        (Run::Collective, EngineKind::Flow) => 390,
        (Run::Sim, EngineKind::Flow) => 730,
        (Run::TrainStep, EngineKind::Flow) => 270,
        (_, EngineKind::Packet) => 750,
    }
}

/// The estimated peak memory of `run` with `messages` messages on engine `kind`, bytes.
pub fn estimate(kind: EngineKind, run: Run, messages: u64) -> u64 {
    BASE_BYTES.saturating_add(messages.saturating_mul(per_message(kind, run)))
}

/// The engine whose estimate decides before a DAG exists: the scenario's, or under `auto`
/// (which picks by the DAG's packets) the flow engine, the smaller of the two, so a run
/// refused then fits on neither; the built DAG is checked again on the engine `auto` picks.
pub fn before_dag(choice: EngineChoice) -> EngineKind {
    match choice {
        EngineChoice::Packet => EngineKind::Packet,
        EngineChoice::Flow | EngineChoice::Auto => EngineKind::Flow,
    }
}

/// MemAvailable of /proc/meminfo, bytes (`None` where there is none).
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The bound of `s`: its `max_memory` key (or `--max-memory`), else 90% of what the machine
/// has available now; `None` when neither is known.
pub fn bound(s: &Scenario) -> Result<Option<u64>, InputError> {
    match &s.file.max_memory {
        Some(v) => {
            let b = v.bytes(&s.source, "max_memory")?;
            if b == 0 {
                return Err(s.error(
                    "max_memory",
                    0,
                    "no memory to run in",
                    "a size such as 16GB",
                ));
            }
            Ok(Some(b))
        }
        None => Ok(mem_available().map(|a| a / 10 * 9)),
    }
}

/// Refuses a run of `messages` messages on `kind` when its estimate passes `s`'s bound,
/// saying what would bring it down: `advice(fits)`, given how many messages fit.
pub fn admit(
    s: &Scenario,
    kind: EngineKind,
    run: Run,
    messages: u64,
    advice: impl FnOnce(u64) -> String,
) -> Result<(), InputError> {
    let Some(bound) = bound(s)? else {
        return Ok(());
    };
    let need = estimate(kind, run, messages);
    if need <= bound {
        return Ok(());
    }
    let fits = bound.saturating_sub(BASE_BYTES) / per_message(kind, run);
    let source = if s.file.max_memory.is_some() {
        "the bound set"
    } else {
        "90% of MemAvailable"
    };
    Err(s.error(
        "max_memory",
        human(bound),
        format!(
            "the run needs an estimated {} ({messages} messages at {} B each on the {} \
             engine), above {source}",
            human(need),
            per_message(kind, run),
            kind.name()
        ),
        format!(
            "at most {fits} messages within {}: {}",
            human(bound),
            advice(fits)
        ),
    ))
}

/// Refuses the run of the built `dag` on `kind` when its estimate passes `s`'s bound.
pub fn check(s: &Scenario, kind: EngineKind, run: Run, dag: &MessageDag) -> Result<(), InputError> {
    admit(s, kind, run, dag.messages.len() as u64, |_| {
        "fewer GPUs or ranks, an operation with fewer messages (all-to-all has one per pair), \
         or a larger max_memory on a larger machine"
            .into()
    })
}

/// Bytes a dense all-to-all run as flow classes (`flow::dense`) holds per host and per class
/// (a pair of leaves with ranks), fitted on the peak RSS of `collective --op all_to_all` at
/// 1,024, 4,096 and 16,384 GPUs (docs/memory.md): its rows and weights per class, the shape's
/// maps and the topology's routing per host.
const DENSE_PER_HOST: u64 = 200;
const DENSE_PER_CLASS: u64 = 700;

/// The estimated peak memory of a dense all-to-all over `ranks` ranks on `topo`, bytes: its
/// classes are at most the pairs of leaves.
pub fn estimate_dense(topo: &Topology, ranks: u64) -> u64 {
    let leaves = topo.switches().filter(|(_, n)| n.tier() == 1).count() as u64;
    let hosts = (topo.num_hosts() as u64).max(ranks);
    BASE_BYTES
        .saturating_add(hosts.saturating_mul(DENSE_PER_HOST))
        .saturating_add(
            leaves
                .saturating_mul(leaves)
                .saturating_mul(DENSE_PER_CLASS),
        )
}

/// Refuses a dense all-to-all over `ranks` ranks on `topo` whose estimate passes `s`'s bound.
pub fn admit_dense(s: &Scenario, topo: &Topology, ranks: u64) -> Result<(), InputError> {
    let Some(bound) = bound(s)? else {
        return Ok(());
    };
    let need = estimate_dense(topo, ranks);
    if need <= bound {
        return Ok(());
    }
    Err(s.error(
        "max_memory",
        human(bound),
        format!(
            "the all-to-all as flow classes needs an estimated {} ({} hosts)",
            human(need),
            topo.num_hosts(),
        ),
        "fewer GPUs, or a larger max_memory on a larger machine",
    ))
}

/// How many runs of `messages` messages on `kind` fit in `s`'s bound at once (at least 1: a
/// single run is refused by [`admit`], not here), for runs over seeds on several threads.
pub fn runs_at_once(
    s: &Scenario,
    kind: EngineKind,
    run: Run,
    messages: u64,
) -> Result<usize, InputError> {
    Ok(match bound(s)? {
        Some(b) => (b / estimate(kind, run, messages).max(1)).max(1) as usize,
        None => usize::MAX,
    })
}

/// Bytes as decimal megabytes or gigabytes, as `--max-memory` takes them.
fn human(b: u64) -> String {
    if b < 1_000_000_000 {
        format!("{:.1}MB", b as f64 / 1e6)
    } else {
        format!("{:.2}GB", b as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::topology::HostId;
    use fabricsim_core::units::Time;

    fn dag(n: u32) -> MessageDag {
        let mut d = MessageDag::default();
        for i in 0..n {
            d.push(HostId(i % 7), HostId(i % 7 + 1), 1000, Time::ZERO, &[]);
        }
        d
    }

    #[test]
    fn a_dense_all_to_all_is_estimated_by_its_hosts_and_leaf_pairs() {
        let topo = fabricsim_core::topology::build(&fabricsim_core::topology::TopologySpec {
            gpus: 256,
            gpus_per_node: 8,
            nics_per_node: 8,
            kind: fabricsim_core::topology::Kind::FatTree,
            tiers: fabricsim_core::topology::Tiers::Fixed(2),
            oversubscription: (1, 1),
            switch_radix: 32,
            port_rate: fabricsim_core::units::BitRate::gbps(400),
            planes: 1,
        })
        .unwrap();
        // 256 hosts under 16 leaves of 16: 8 MiB + 256 x 200 B + 16^2 x 700 B.
        assert_eq!(estimate_dense(&topo, 256), (8 << 20) + 51_200 + 179_200);
        let s = Scenario::parse("s.toml", "max_memory = \"8MB\"\n").unwrap();
        let e = admit_dense(&s, &topo, 256).unwrap_err().to_string();
        assert!(e.contains("needs an estimated 8.6MB (256 hosts)"), "{e}");
        let s = Scenario::parse("s.toml", "max_memory = \"9MB\"\n").unwrap();
        assert!(admit_dense(&s, &topo, 256).is_ok());
    }

    #[test]
    fn a_run_past_the_bound_is_refused_with_the_estimate_and_what_fits() {
        let s = Scenario::parse("s.toml", "max_memory = \"20MB\"\n").unwrap();
        assert!(check(&s, EngineKind::Flow, Run::Collective, &dag(1000)).is_ok());
        let e = check(&s, EngineKind::Flow, Run::Collective, &dag(40_000)).unwrap_err();
        let shown = e.to_string();
        assert!(shown.starts_with("s.toml:1: `max_memory`"), "{shown}");
        assert!(
            shown.contains("40000 messages") && shown.contains("at most 29772 messages"),
            "{shown}"
        );
        // The packet engine holds more per message.
        assert!(
            estimate(EngineKind::Packet, Run::Collective, 10)
                > estimate(EngineKind::Flow, Run::Collective, 10)
        );
        // Before a DAG exists the count alone decides, with the caller's advice.
        let e = admit(&s, EngineKind::Flow, Run::Collective, 40_000, |fits| {
            format!("{fits} fit")
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("at most 29772 messages within 20.0MB: 29772 fit")
        );
        assert!(
            admit(
                &s,
                EngineKind::Flow,
                Run::Collective,
                1000,
                |_| unreachable!()
            )
            .is_ok()
        );
    }
}
