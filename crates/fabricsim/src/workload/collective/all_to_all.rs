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
    let n = comm.len();
    let mut out = start_frontier(n);
    for p in 0..n {
        for step in 1..n {
            let q = (p + step) % n;
            // Block q of rank p's S-byte send buffer (S/n per peer; nccl-tests alltoall).
            let len = piece(bytes, n as u64, q as u64);
            let m = b.send(
                comm.gpus[p],
                comm.gpus[q],
                len,
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
