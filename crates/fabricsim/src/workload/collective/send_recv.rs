//! Point-to-point: explicit pairs (pipeline-parallel activations) and nccl-tests' sendrecv
//! pattern, where every rank sends S to rank+1 and receives S from rank-1 (busbw factor 1).

use super::{Builder, Comm, Frontier, Lane, start_frontier};

/// One message of `bytes` per (from, to) pair of comm ranks, each after its sender's `ready`.
pub fn pairs(
    b: &mut Builder,
    comm: &Comm,
    pairs: &[(usize, usize)],
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let mut out = start_frontier(comm.len());
    for &(p, q) in pairs {
        let m = b.send(
            comm.gpus[p],
            comm.gpus[q],
            bytes,
            &ready[p],
            lane.channel,
            0,
        );
        out[p].push(m);
        out[q].push(m);
    }
    out
}

/// nccl-tests sendrecv: rank p sends to p+1 (mod n).
pub fn shift(b: &mut Builder, comm: &Comm, bytes: u64, lane: Lane, ready: &Frontier) -> Frontier {
    let n = comm.len();
    let ps: Vec<(usize, usize)> = (0..n).map(|p| (p, (p + 1) % n)).collect();
    pairs(b, comm, &ps, bytes, lane, ready)
}
