//! NCCL's ring: reduce-scatter in n-1 steps, all-gather in n-1 steps, all-reduce as both.
//!
//! The buffer is cut into n segments; each segment into pipeline chunks of at most
//! `chunk_bytes`. At step k the rank at ring position i forwards one segment to position i+1,
//! and that send waits for the segment it received from position i-1 at step k-1 (NCCL
//! `prims.recvReduceSend` / `directRecvCopySend`; Patarasuk and Yuan 2009). Each rank sends
//! (n-1)/n of the buffer per phase, so all-reduce moves 2(n-1)/n * S per rank (nccl-tests
//! nccl-tests). Each channel rotates the GPUs inside every server by `channel * k /
//! channels`; the hop to the next server leaves through the NIC of the GPU the ring entered
//! the server by, and arrives at the same rail's GPU there (NCCL rings use one NIC per node
//! and channel, NCCL_CROSS_NIC=0), so channels spread over the rails and stay rail-aligned.

use super::{Builder, Comm, Frontier, Lane, Phases, piece, start_frontier};

/// The ring of `lane`'s channel as comm ranks: servers in order of appearance, the ranks of
/// each server rotated by the channel.
pub fn ring_order(comm: &Comm, lane: Lane) -> Vec<usize> {
    let mut order = Vec::with_capacity(comm.len());
    for server in comm.by_server() {
        let k = server.len();
        let off = (lane.channel as usize * k / lane.channels.max(1) as usize) % k;
        order.extend(server[off..].iter().chain(&server[..off]));
    }
    order
}

/// Every step of a ring pass (`run`).
pub const ALL_STEPS: usize = usize::MAX;

/// A ring pass running `ph`, its first `steps` steps (all: `ALL_STEPS`, or any `steps` >= its
/// 2(n-1) or n-1; fewer for simulations that derive the remaining steps of a ring that repeats
/// itself). After a reduce-scatter, ring position i holds segment i+1 and the all-gather starts
/// from it. The frontier is the last compiled step's.
pub fn run(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    ph: Phases,
    steps: usize,
) -> Frontier {
    let ag_offset = usize::from(ph.reduce_scatter);
    pass(b, comm, bytes, lane, ready, ph, ag_offset, steps)
}

/// The all-gather half of a ring all-reduce: position i starts holding segment i+1, as a ring
/// reduce-scatter over the same comm and lane leaves it.
pub fn all_gather_after_reduce_scatter(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    pass(
        b,
        comm,
        bytes,
        lane,
        ready,
        Phases::ALL_GATHER,
        1,
        usize::MAX,
    )
}

/// `ag_offset`: the segment a rank holds before the all-gather, relative to its ring position;
/// `max_steps`: how many of the pass's steps to compile.
#[allow(clippy::too_many_arguments)]
fn pass(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    ph: Phases,
    ag_offset: usize,
    max_steps: usize,
) -> Frontier {
    let n = comm.len();
    let order = ring_order(comm, lane);
    // The GPU each ring position's server was entered by (the first of its block).
    let place = comm.place;
    let mut entry = vec![0u32; n];
    for i in 0..n {
        let g = comm.gpus[order[i]];
        entry[i] = if i > 0 && place.same_server(g, comm.gpus[order[i - 1]]) {
            entry[i - 1]
        } else {
            g
        };
    }
    // Pipeline chunks per segment, sized by the largest segment.
    let chunks = lane.chunks(piece(bytes, n as u64, 0));
    // Per step, the shift a: ring position i sends segment (i + a) mod n.
    let mut steps: Vec<usize> = Vec::new();
    if ph.reduce_scatter {
        steps.extend((0..n - 1).map(|k| n - k));
    }
    if ph.all_gather {
        steps.extend((0..n - 1).map(|j| ag_offset + n - j));
    }
    steps.truncate(max_steps);
    // prev[c * n + i]: the message ring position i sent for chunk c at the previous step.
    let mut prev = vec![u32::MAX; chunks as usize * n];
    let mut cur = prev.clone();
    let mut deps = Vec::new();
    for (t, &shift) in steps.iter().enumerate() {
        for c in 0..chunks {
            for i in 0..n {
                let seg = (i + shift) % n;
                let seg_bytes = piece(bytes, n as u64, seg as u64);
                let len = piece(seg_bytes, chunks, c);
                deps.clear();
                deps.extend_from_slice(&ready[order[i]]);
                if t > 0 {
                    deps.push(prev[c as usize * n + (i + n - 1) % n]);
                }
                let from = comm.gpus[order[i]];
                let to = comm.gpus[order[(i + 1) % n]];
                cur[c as usize * n + i] =
                    b.send_via(entry[i], from, to, len, &deps, lane.channel, t as u32);
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let mut out = start_frontier(n);
    for c in 0..chunks as usize {
        for i in 0..n {
            out[order[i]].push(prev[c * n + i]);
            out[order[i]].push(prev[c * n + (i + n - 1) % n]);
        }
    }
    out
}
