//! Bytes a training step puts on the scale-out fabric: for each collective of the step, the
//! share of each GPU's traffic that leaves its server's NVLink domain, under the algorithm
//! `comm_model::AlphaBetaModel::closed_form` times it with (Thakur et al. 2005 rings; NCCL's
//! hierarchical all-reduce: k GPUs of a server split the buffer over their k rails, so the
//! fabric ring over N servers carries 1/k of it per GPU). Traffic among the GPUs of one server
//! (an HGX baseboard, an NVL72 rack) never reaches the fabric.

use super::step::{CommRow, StepReport};
use crate::workload::collective::Op;
use crate::workload::comm_model::GroupShape;

/// Bytes one GPU sends over the fabric in one call of `op` of nccl-tests size `bytes` on `g`.
pub fn per_call(op: Op, bytes: u64, g: GroupShape) -> f64 {
    if g.servers <= 1 || g.ranks <= 1 {
        return 0.0;
    }
    let (b, n, nodes, k) = (
        bytes as f64,
        g.ranks as f64,
        g.servers as f64,
        g.per_server().max(1) as f64,
    );
    match op {
        Op::AllReduce => 2.0 * (nodes - 1.0) / nodes * b / k,
        Op::AllGather | Op::ReduceScatter => (nodes - 1.0) / nodes * b / k,
        // Each GPU sends 1/n of its buffer to every rank; those on other servers cross.
        Op::AllToAll | Op::MoeDispatch | Op::MoeCombine => (n - k) / n * b,
        // A pipelined chain: nodes - 1 of its n - 1 hops cross, each carrying the buffer.
        Op::Broadcast | Op::Reduce => (nodes - 1.0) / n * b,
        Op::SendRecv => b,
    }
}

/// The fabric bytes of one row of the step's report: per GPU, over the whole step.
pub fn of_row(row: &CommRow) -> f64 {
    let op = Op::ALL
        .into_iter()
        .find(|o| o.name() == row.op)
        .expect("a CommRow's op is an Op::name");
    let g = GroupShape {
        ranks: row.ranks,
        servers: row.servers,
    };
    per_call(op, row.bytes_per_call, g) * row.calls_per_step as f64
}

/// Fabric bytes per GPU per step, summed over the step's collectives (the GPU 0 groups the
/// report describes; every GPU's groups have the same shape under the Megatron layout).
pub fn per_gpu(r: &StepReport) -> f64 {
    r.collectives.iter().map(of_row).sum()
}
