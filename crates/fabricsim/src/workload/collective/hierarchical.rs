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
use super::{Builder, Comm, Frontier, Lane, piece, start_frontier};

fn gather(ready: &Frontier, ranks: &[usize]) -> Frontier {
    ranks.iter().map(|&p| ready[p].clone()).collect()
}

fn scatter(out: &mut Frontier, ranks: &[usize], f: Frontier) {
    for (&p, v) in ranks.iter().zip(f) {
        out[p] = v;
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Rail {
    AllReduce,
    ReduceScatter,
    AllGather,
}

pub fn all_reduce(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    run(b, comm, bytes, lane, ready, Rail::AllReduce)
}

pub fn reduce_scatter(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    run(b, comm, bytes, lane, ready, Rail::ReduceScatter)
}

pub fn all_gather(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    run(b, comm, bytes, lane, ready, Rail::AllGather)
}

fn run(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    rail_op: Rail,
) -> Frontier {
    let servers = comm.by_server();
    let k = servers[0].len();
    let mut after_rs = ready.clone();
    if rail_op != Rail::AllGather && k > 1 {
        for ranks in &servers {
            let f = ring::reduce_scatter(b, &comm.sub(ranks), bytes, lane, &gather(ready, ranks));
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
            let f = match rail_op {
                Rail::AllReduce => ring::all_reduce(b, &sub, seg_bytes, lane, &before),
                Rail::ReduceScatter => ring::reduce_scatter(b, &sub, seg_bytes, lane, &before),
                Rail::AllGather => ring::all_gather(b, &sub, seg_bytes, lane, &before),
            };
            scatter(&mut after_rail, &rail, f);
        }
    }
    if rail_op == Rail::ReduceScatter || k == 1 {
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
