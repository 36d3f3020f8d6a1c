//! All-to-all as NCCL runs it: every rank cuts its S-byte buffer into n blocks and posts the send of block q to rank q to every other rank at once
//! (grouped ncclSend/ncclRecv), so each rank sends (n-1)/n * S (busbw factor (n-1)/n,
//! nccl-tests). Peers are visited in the order p+1, p+2, ... to spread load.

use super::{Builder, Comm, Frontier, Lane, piece, start_frontier};

pub fn all_to_all(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let n = comm.len() as u64;
    // Block q of rank p's S-byte send buffer (S/n per peer; nccl-tests alltoall).
    pairs(b, comm, lane, ready, |_, q| piece(bytes, n, q as u64))
}

/// Every rank p sends `len(p, q)` bytes to every other rank q at once (an all-to-allv, as
/// the MoE dispatch and combine post it: grouped ncclSend/ncclRecv), peers in the order p+1,
/// p+2, ...; a rank's result is every message it sends or receives.
pub fn pairs(
    b: &mut Builder,
    comm: &Comm,
    lane: Lane,
    ready: &Frontier,
    len: impl Fn(usize, usize) -> u64,
) -> Frontier {
    let n = comm.len();
    let mut out = start_frontier(n);
    for p in 0..n {
        for step in 1..n {
            let q = (p + step) % n;
            let m = b.send(
                comm.gpus[p],
                comm.gpus[q],
                len(p, q),
                &ready[p],
                lane.channel,
                step as u32,
            );
            out[q].push(m);
            out[p].push(m);
        }
    }
    out
}
