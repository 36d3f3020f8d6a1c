//! Hierarchical all-reduce across servers, as NCCL's NVLink + rails layout does it
//! (the 2D/"NVLS+rails" pattern; also Horovod's hierarchical all-reduce):
//! 1. inside every server, a ring reduce-scatter over NVLink leaves GPU j with one segment;
//! 2. across servers, GPU j of every server all-reduces that segment with GPU j of the others
//!    over rail j (its own NIC), all rails at once;
//! 3. inside every server, a ring all-gather over NVLink spreads the reduced segments.
//!
//! Each step waits for the previous one on the same GPU, so the DAG keeps the three phases'
//! real order. Needs the same number of ranks on every server.

use super::ring::{self, ring_order};
use super::{Builder, Comm, Frontier, Lane, piece, start_frontier};

fn gather(ready: &Frontier, ranks: &[usize]) -> Frontier {
    ranks.iter().map(|&p| ready[p].clone()).collect()
}

fn scatter(out: &mut Frontier, ranks: &[usize], f: Frontier) {
    for (&p, v) in ranks.iter().zip(f) {
        out[p] = v;
    }
}

pub fn all_reduce(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let servers = comm.by_server();
    let k = servers[0].len();
    let mut after_rs = ready.clone();
    for ranks in &servers {
        let sub = comm.sub(ranks);
        let f = if k > 1 {
            ring::reduce_scatter(b, &sub, bytes, lane, &gather(ready, ranks))
        } else {
            gather(ready, ranks)
        };
        scatter(&mut after_rs, ranks, f);
    }
    // Member j of every server holds the same segment: ring position i ends with segment i+1.
    let order = ring_order(&comm.sub(&servers[0]), lane);
    let mut after_ar = after_rs.clone();
    for j in 0..k {
        let pos = order.iter().position(|&m| m == j).expect("member in ring");
        let seg = (pos + 1) % k;
        let seg_bytes = piece(bytes, k as u64, seg as u64);
        let rail: Vec<usize> = servers.iter().map(|s| s[j]).collect();
        if rail.len() > 1 {
            let sub = comm.sub(&rail);
            let f = ring::all_reduce(b, &sub, seg_bytes, lane, &gather(&after_rs, &rail));
            scatter(&mut after_ar, &rail, f);
        }
    }
    let mut out = start_frontier(comm.len());
    for ranks in &servers {
        let f = if k > 1 {
            ring::all_gather_after_reduce_scatter(
                b,
                &comm.sub(ranks),
                bytes,
                lane,
                &gather(&after_ar, ranks),
            )
        } else {
            gather(&after_ar, ranks)
        };
        scatter(&mut out, ranks, f);
    }
    out
}
