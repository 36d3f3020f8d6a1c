//! Bus bandwidth as nccl-tests reports it (nccl-tests,
//! https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
//! algbw = S / t, busbw = algbw * factor, where the factor makes busbw comparable to the
//! hardware's link bandwidth whatever the rank count.

use super::collective::Op;

/// The nccl-tests factor for `op` on `n` ranks: all-reduce 2(n-1)/n; reduce-scatter,
/// all-gather and all-to-all (n-1)/n; broadcast, reduce and send/recv 1.
pub fn factor(op: Op, n: u32) -> f64 {
    let n = n as f64;
    match op {
        Op::AllReduce => 2.0 * (n - 1.0) / n,
        // The MoE exchanges as the all-to-all they are (algbw from the routed buffer S).
        Op::AllGather | Op::ReduceScatter | Op::AllToAll | Op::MoeDispatch | Op::MoeCombine => {
            (n - 1.0) / n
        }
        Op::Broadcast | Op::Reduce | Op::SendRecv => 1.0,
    }
}

/// Bytes each rank sends in the bandwidth-optimal algorithm for a buffer of `size` bytes: the
/// factor times S (what a ring or direct DAG must put on the wire per rank).
pub fn bytes_per_rank(op: Op, n: u32, size: u64) -> f64 {
    factor(op, n) * size as f64
}

/// algbw in GB/s (1e9 bytes per second), as nccl-tests computes it.
pub fn algbw_gbps(size: u64, secs: f64) -> f64 {
    size as f64 / 1e9 / secs
}

/// busbw in GB/s.
pub fn busbw_gbps(op: Op, n: u32, size: u64, secs: f64) -> f64 {
    algbw_gbps(size, secs) * factor(op, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_from_performance_md() {
        assert_eq!(factor(Op::AllReduce, 8), 1.75);
        assert_eq!(factor(Op::AllGather, 8), 0.875);
        assert_eq!(factor(Op::ReduceScatter, 4), 0.75);
        assert_eq!(factor(Op::AllToAll, 2), 0.5);
        assert_eq!(factor(Op::Broadcast, 64), 1.0);
        assert_eq!(factor(Op::Reduce, 64), 1.0);
        // 1 GB all-reduce on 8 ranks in 10 ms: algbw 100 GB/s, busbw 175 GB/s.
        assert!((busbw_gbps(Op::AllReduce, 8, 1_000_000_000, 0.01) - 175.0).abs() < 1e-9);
    }
}
