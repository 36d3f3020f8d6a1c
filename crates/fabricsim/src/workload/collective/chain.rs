//! Broadcast and reduce as NCCL runs them: a pipelined chain along the ring starting (or
//! ending) at the root. The buffer is cut into chunks of at most `chunk_bytes`; a rank
//! forwards chunk c as soon as it has received chunk c, so for large S the time tends to
//! S/B plus (n-1) hop latencies (busbw factor 1, nccl-tests PERFORMANCE.md).

use super::ring::ring_order;
use super::{Builder, Comm, Frontier, Lane, piece, start_frontier};

/// The ring of the lane, rotated so the root comes first.
fn chain_from(comm: &Comm, root: usize, lane: Lane) -> Vec<usize> {
    let mut order = ring_order(comm, lane);
    let at = order
        .iter()
        .position(|&p| p == root)
        .expect("root is in the comm");
    order.rotate_left(at);
    order
}

fn chunks(bytes: u64, lane: Lane) -> u64 {
    if lane.chunk_bytes == 0 {
        1
    } else {
        bytes.div_ceil(lane.chunk_bytes).max(1)
    }
}

pub fn broadcast(
    b: &mut Builder,
    comm: &Comm,
    root: usize,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let order = chain_from(comm, root, lane);
    let n = order.len();
    let mut out = start_frontier(n);
    let nchunks = chunks(bytes, lane);
    let mut deps = Vec::new();
    for c in 0..nchunks {
        let len = piece(bytes, nchunks, c);
        let mut prev = None;
        for i in 0..n - 1 {
            deps.clear();
            deps.extend_from_slice(&ready[order[i]]);
            deps.extend(prev);
            let (from, to) = (comm.gpus[order[i]], comm.gpus[order[i + 1]]);
            let m = b.send(from, to, len, &deps, lane.channel, i as u32);
            out[order[i + 1]].push(m);
            if i == 0 {
                out[order[0]].push(m);
            }
            prev = Some(m);
        }
    }
    out
}

pub fn reduce(
    b: &mut Builder,
    comm: &Comm,
    root: usize,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let order = chain_from(comm, root, lane);
    let n = order.len();
    let mut out = start_frontier(n);
    let nchunks = chunks(bytes, lane);
    let mut deps = Vec::new();
    for c in 0..nchunks {
        let len = piece(bytes, nchunks, c);
        let mut prev = None;
        for i in (1..n).rev() {
            deps.clear();
            deps.extend_from_slice(&ready[order[i]]);
            deps.extend(prev);
            let (from, to) = (comm.gpus[order[i]], comm.gpus[order[i - 1]]);
            let m = b.send(from, to, len, &deps, lane.channel, (n - 1 - i) as u32);
            out[order[i]].push(m);
            if i == 1 {
                out[order[0]].push(m);
            }
            prev = Some(m);
        }
    }
    out
}
