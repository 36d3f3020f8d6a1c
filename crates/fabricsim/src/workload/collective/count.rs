//! How many messages a collective compiles into, in closed form from its shape (op, algorithm,
//! ranks, ranks per server, channels, size, chunk), without building it: the memory estimate
//! (`setup::memory`) needs the count before a DAG of a hundred million messages is built. Each
//! arm counts what its builder in this folder pushes; the tests hold every arm to the length of
//! the DAG [`super::compile`] builds.

use super::{Algo, CollectiveSpec, Comm, Lane, Op, Phases, piece};
use crate::setup::engine_choice::EngineChoice;
use crate::setup::memory;
use fabricsim_core::error::InputError;
use fabricsim_input::scenario::Scenario;

/// The shape of a communicator that decides its message count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub ranks: u64,
    /// Ranks on each server (the hierarchical algorithm needs the same on every one).
    pub per_server: u64,
}

impl Shape {
    pub fn of(comm: &Comm) -> Shape {
        Shape {
            ranks: comm.len() as u64,
            per_server: comm.by_server().first().map_or(1, |s| s.len() as u64),
        }
    }
}

/// Messages of `spec` over a communicator of `shape` (saturating; 0 for a pair of op and
/// algorithm `compile` refuses).
pub fn messages(spec: &CollectiveSpec, shape: Shape) -> u64 {
    (0..spec.channels)
        .map(|channel| {
            let lane = Lane {
                channel,
                channels: spec.channels,
                chunk_bytes: spec.chunk_bytes,
            };
            let bytes = piece(spec.bytes, spec.channels as u64, channel as u64);
            per_channel(spec, shape, lane, bytes)
        })
        .fold(0, u64::saturating_add)
}

fn per_channel(spec: &CollectiveSpec, shape: Shape, lane: Lane, bytes: u64) -> u64 {
    let n = shape.ranks;
    match (spec.op, spec.algo, Phases::of(spec.op)) {
        // Per tree and chunk: n - 1 sends up, n - 1 down (tree.rs).
        (Op::AllReduce, Algo::Tree, _) => (0..2)
            .map(|t| {
                lane.chunks(piece(bytes, 2, t))
                    .saturating_mul(2 * n.saturating_sub(1))
            })
            .fold(0, u64::saturating_add),
        (_, Algo::Ring, Some(ph)) => ring(n, bytes, lane, ph, u64::MAX),
        // n per distance, log2(n) distances per half (halving_doubling.rs).
        (_, Algo::HalvingDoubling, Some(ph)) => n * n.max(1).ilog2() as u64 * halves(ph),
        (_, Algo::Hierarchical, Some(ph)) => hierarchical(shape, bytes, lane, ph),
        // n - 1 hops per chunk (chain.rs).
        (Op::Broadcast | Op::Reduce, Algo::Chain, _) => {
            n.saturating_sub(1).saturating_mul(lane.chunks(bytes))
        }
        // Every ordered pair once (all_to_all.rs `pairs`), whatever the routing.
        (Op::AllToAll | Op::MoeDispatch | Op::MoeCombine, Algo::Direct, _) => {
            n.saturating_mul(n.saturating_sub(1))
        }
        (Op::SendRecv, Algo::Direct, _) => n,
        _ => 0,
    }
}

fn halves(ph: Phases) -> u64 {
    u64::from(ph.reduce_scatter) + u64::from(ph.all_gather)
}

/// A ring pass over `n` ranks (ring.rs): its first `steps` of (n - 1) steps per half, each
/// step one message per rank and pipeline chunk of the largest segment.
pub fn ring(n: u64, bytes: u64, lane: Lane, ph: Phases, steps: u64) -> u64 {
    let steps = (n.saturating_sub(1) * halves(ph)).min(steps);
    let chunks = lane.chunks(piece(bytes, n.max(1), 0));
    steps.saturating_mul(chunks).saturating_mul(n)
}

/// NVLink rings inside the servers around one ring per rail (hierarchical.rs): a ring over
/// one rank is no message, so one GPU per server or one server counts no phase there.
fn hierarchical(shape: Shape, bytes: u64, lane: Lane, ph: Phases) -> u64 {
    let k = shape.per_server.max(1);
    let servers = shape.ranks / k;
    // The reduce-scatter and the all-gather inside every server, as `ph` asks.
    let inside = |on: bool, half: Phases| match on {
        true => servers.saturating_mul(ring(k, bytes, lane, half, u64::MAX)),
        false => 0,
    };
    let mut total = inside(ph.reduce_scatter, Phases::REDUCE_SCATTER)
        .saturating_add(inside(ph.all_gather, Phases::ALL_GATHER));
    // Member j of the servers holds one segment each, the k segments between them.
    for seg in 0..k {
        let seg_bytes = piece(bytes, k, seg);
        total = total.saturating_add(ring(servers, seg_bytes, lane, ph, u64::MAX));
    }
    total
}

/// Refuses, before any DAG is built, a sweep of `spec` over `shape` at `sizes` whose largest
/// size would not fit in memory (`setup::memory`), saying which GPU count, channel count or
/// size would.
pub fn admit(
    s: &Scenario,
    engine: EngineChoice,
    spec: &CollectiveSpec,
    shape: Shape,
    sizes: &[u64],
) -> Result<(), InputError> {
    let at = |bytes| CollectiveSpec { bytes, ..*spec };
    let Some(largest) = sizes
        .iter()
        .copied()
        .max_by_key(|&b| messages(&at(b), shape))
    else {
        return Ok(());
    };
    let spec = at(largest);
    memory::admit(
        s,
        memory::before_dag(engine),
        memory::Run::Collective,
        messages(&spec, shape),
        |fits| {
            let mut ways = within(&spec, shape, fits);
            ways.push("a larger max_memory on a larger machine".into());
            ways.join(", or ")
        },
    )
}

/// What brings `spec` over `shape` within `fits` messages: the most whole servers, the most
/// channels and the largest size that do (those that can).
fn within(spec: &CollectiveSpec, shape: Shape, fits: u64) -> Vec<String> {
    let k = shape.per_server.max(1);
    let mut ways = Vec::new();
    let gpus = (1..shape.ranks / k)
        .rev()
        .map(|servers| servers * k)
        .filter(|&n| n >= 2 && (spec.algo != Algo::HalvingDoubling || n.is_power_of_two()))
        .find(|&n| messages(spec, Shape { ranks: n, ..shape }) <= fits);
    if let Some(n) = gpus {
        ways.push(format!("{n} GPUs ({} servers)", n / k));
    }
    let channels = (1..spec.channels)
        .rev()
        .find(|&channels| messages(&CollectiveSpec { channels, ..*spec }, shape) <= fits);
    if let Some(c) = channels {
        ways.push(format!("--channels {c}"));
    }
    // The count grows with the size (more pipeline chunks): the largest size within `fits`.
    let count = |bytes| messages(&CollectiveSpec { bytes, ..*spec }, shape);
    if count(0) <= fits && count(spec.bytes) > fits {
        let (mut lo, mut hi) = (0, spec.bytes);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if count(mid) <= fits {
                lo = mid
            } else {
                hi = mid
            }
        }
        ways.push(format!("--max-bytes {lo}"));
    }
    ways
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::collective::compile;
    use crate::workload::placement::Placement;
    use fabricsim_core::units::BitRate;

    /// Every op and algorithm, over shapes and sizes that hit each case of the builders (one
    /// rank per server, one server, odd ranks, sizes below one byte per rank, several chunks,
    /// no chunking), counts what `compile` builds.
    #[test]
    fn the_closed_form_counts_every_message_the_builders_push() {
        let mut checked = 0;
        for (servers, per) in [
            (1, 2),
            (1, 8),
            (2, 1),
            (3, 1),
            (4, 2),
            (2, 4),
            (3, 4),
            (8, 8),
        ] {
            let place = Placement::dense(servers, per);
            let comm = Comm::world(&place);
            for op in Op::ALL {
                for &algo in Algo::for_op(op) {
                    for channels in [1, 3, 8] {
                        for bytes in [0, 5, 4096, 3 << 20, 9 << 20] {
                            for chunk_bytes in [0, 512 << 10] {
                                let spec = CollectiveSpec {
                                    algo,
                                    bytes,
                                    root: 1,
                                    channels,
                                    chunk_bytes,
                                    ..CollectiveSpec::with_defaults(op, bytes, channels)
                                };
                                let Ok(dag) = compile(&spec, &comm, BitRate::gbps(900)) else {
                                    continue; // a shape the algorithm refuses
                                };
                                let want = dag.messages.len() as u64;
                                assert_eq!(
                                    messages(&spec, Shape::of(&comm)),
                                    want,
                                    "{spec:?} on {servers} x {per}"
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} cases");
    }

    /// The 4,096-GPU all-to-all of issue 21 is refused from its shape alone, naming the GPU
    /// and channel counts that would fit; one size below the bound passes.
    #[test]
    fn a_collective_past_the_bound_is_refused_before_its_dag_with_what_fits() {
        let s = Scenario::parse("s.toml", "max_memory = \"16GB\"\n").unwrap();
        let spec = CollectiveSpec::with_defaults(Op::AllToAll, 64 << 20, 8);
        let shape = Shape {
            ranks: 4096,
            per_server: 8,
        };
        assert_eq!(messages(&spec, shape), 8 * 4096 * 4095);
        let e = admit(&s, EngineChoice::Flow, &spec, shape, &[1 << 20, 64 << 20])
            .unwrap_err()
            .to_string();
        // 16 GB holds (16e9 - 8 MiB) / 390 = 41,004,131 messages: 2,264 GPUs on 8 channels
        // (8 x 2264 x 2263 = 40.99 M; 2,272 make 41.28 M), or 2 channels on 4,096 GPUs (33.5 M).
        for want in [
            "134184960 messages",
            "2264 GPUs (283 servers)",
            "--channels 2",
        ] {
            assert!(e.contains(want), "missing {want}: {e}");
        }
        let small = Shape {
            ranks: 64,
            per_server: 8,
        };
        assert!(admit(&s, EngineChoice::Flow, &spec, small, &[64 << 20]).is_ok());
        // A ring grows with the size: the refusal names the largest size that fits.
        let ring = CollectiveSpec::with_defaults(Op::AllReduce, 1 << 50, 8);
        let e = admit(&s, EngineChoice::Packet, &ring, small, &[1 << 50]).unwrap_err();
        assert!(e.to_string().contains("--max-bytes "), "{e}");
    }
}
