//! Broadcast and reduce as NCCL runs them: a pipelined chain along the ring starting (or
//! ending) at the root. The buffer is cut into chunks of at most `chunk_bytes`; a rank
//! forwards chunk c as soon as it has received chunk c, so for large S the time tends to
//! S/B plus (n-1) hop latencies (busbw factor 1, nccl-tests).

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

pub fn broadcast(
    b: &mut Builder,
    comm: &Comm,
    root: usize,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let path = chain_from(comm, root, lane);
    // Each rank holds the chunk it received; the root the one it sent first.
    pipeline(b, comm, &path, bytes, lane, ready, |j| j.saturating_sub(1))
}

pub fn reduce(
    b: &mut Builder,
    comm: &Comm,
    root: usize,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let mut path = chain_from(comm, root, lane);
    path.reverse();
    let last_hop = path.len().saturating_sub(2);
    // Each rank holds the partial sum it sent; the root the last one it received.
    pipeline(b, comm, &path, bytes, lane, ready, |j| j.min(last_hop))
}

/// Sends every chunk hop by hop from `path[0]` to its end: hop h goes from `path[h]` to
/// `path[h + 1]` once that rank is ready and has received hop h-1 of the same chunk. Per
/// chunk, `path[j]` holds the message of hop `held(j)`.
fn pipeline(
    b: &mut Builder,
    comm: &Comm,
    path: &[usize],
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    held: impl Fn(usize) -> usize,
) -> Frontier {
    let n = path.len();
    let mut out = start_frontier(n);
    if n < 2 {
        return out;
    }
    let nchunks = lane.chunks(bytes);
    let mut hops = vec![u32::MAX; n - 1];
    let mut deps = Vec::new();
    for c in 0..nchunks {
        let len = piece(bytes, nchunks, c);
        for h in 0..n - 1 {
            deps.clear();
            deps.extend_from_slice(&ready[path[h]]);
            if h > 0 {
                deps.push(hops[h - 1]);
            }
            let (from, to) = (comm.gpus[path[h]], comm.gpus[path[h + 1]]);
            hops[h] = b.send(from, to, len, &deps, lane.channel, h as u32);
        }
        for (j, &r) in path.iter().enumerate() {
            out[r].push(hops[held(j)]);
        }
    }
    out
}
