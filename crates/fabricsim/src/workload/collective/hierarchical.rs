//! Hierarchical collectives across servers, as NCCL's NVLink + rails layout runs them (the 2D
//! pattern of NCCL's NVLS/CollNet algorithms; also Horovod's hierarchical all-reduce):
//! 1. inside every server, a ring reduce-scatter over NVLink leaves GPU j with one segment;
//! 2. across servers, GPU j of every server combines that segment with GPU j of the others
//!    over rail j (its own NIC), all rails at once: all-reduce, reduce-scatter or all-gather;
//! 3. inside every server, a ring all-gather over NVLink spreads the segments.
//!
//! All-reduce runs 1-2-3, reduce-scatter 1-2, all-gather 2-3. Per rank the bytes equal the
//! flat ring's: (k-1)/k S + (N-1)/N S/k = (n-1)/n S for k GPUs on each of N servers. Each
//! phase waits for the previous one on the same GPU. Needs the same rank count per server.

use super::ring::{self, ring_order};
use super::{Builder, Comm, Frontier, Lane, Phases, piece, start_frontier};

fn gather(ready: &Frontier, ranks: &[usize]) -> Frontier {
    ranks.iter().map(|&p| ready[p].clone()).collect()
}

fn scatter(out: &mut Frontier, ranks: &[usize], f: Frontier) {
    for (&p, v) in ranks.iter().zip(f) {
        out[p] = v;
    }
}

/// Phase 1 runs with a reduce-scatter, phase 3 with an all-gather; the rails run `ph`.
pub fn run(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    ph: Phases,
) -> Frontier {
    let servers = comm.by_server();
    let k = servers[0].len();
    let mut after_rs = ready.clone();
    if ph.reduce_scatter && k > 1 {
        for ranks in &servers {
            let (sub, before) = (comm.sub(ranks), gather(ready, ranks));
            let f = ring::run(
                b,
                &sub,
                bytes,
                lane,
                &before,
                Phases::REDUCE_SCATTER,
                ring::ALL_STEPS,
            );
            scatter(&mut after_rs, ranks, f);
        }
    }
    // Member j of every server holds the same segment: ring position i ends with segment i+1.
    let order = ring_order(&comm.sub(&servers[0]), lane);
    let mut after_rail = after_rs.clone();
    for j in 0..k {
        let pos = order.iter().position(|&m| m == j).expect("member in ring");
        let seg_bytes = piece(bytes, k as u64, ((pos + 1) % k) as u64);
        let rail: Vec<usize> = servers.iter().map(|s| s[j]).collect();
        if rail.len() > 1 {
            let (sub, before) = (comm.sub(&rail), gather(&after_rs, &rail));
            let f = ring::run(b, &sub, seg_bytes, lane, &before, ph, ring::ALL_STEPS);
            scatter(&mut after_rail, &rail, f);
        }
    }
    if !ph.all_gather || k == 1 {
        return after_rail;
    }
    let mut out = start_frontier(comm.len());
    for ranks in &servers {
        let before = gather(&after_rail, ranks);
        let f = ring::all_gather_after_reduce_scatter(b, &comm.sub(ranks), bytes, lane, &before);
        scatter(&mut out, ranks, f);
    }
    out
}
