//! ECMP entropy of RoCEv2 connections: each QP has its own UDP source port (`route::qp_sport`),
//! a connection may open several QPs and split each message across them, as NCCL does with
//! NCCL_IB_QPS_PER_CONNECTION (net_ib.cc: each QP carries a chunk of DIVUP(size, nqps) rounded
//! up to 128 bytes), and switches may add the destination QP of the BTH to the hash (the
//! "RoCE-aware"/enhanced ECMP of recent switch ASICs).

use super::route;

/// NCCL aligns each QP's chunk to 128 bytes (net_ib.cc `ncclIbMultiSend`).
pub const CHUNK_ALIGN: u64 = 128;

/// Number of non-empty parts a message of `bytes` has on `qps` QPs (at least one).
pub fn parts(bytes: u64, qps: u16) -> u16 {
    let chunk = chunk(bytes, qps);
    bytes.div_ceil(chunk).clamp(1, qps as u64) as u16
}

fn chunk(bytes: u64, qps: u16) -> u64 {
    (bytes.div_ceil(qps as u64).div_ceil(CHUNK_ALIGN) * CHUNK_ALIGN).max(CHUNK_ALIGN)
}

/// Bytes of part `j` (0-based) of a message of `bytes` split over `qps` QPs.
pub fn part_bytes(bytes: u64, qps: u16, j: u16) -> u64 {
    let c = chunk(bytes, qps);
    bytes.saturating_sub(j as u64 * c).min(c)
}

/// The (forward, reverse) ECMP hashes of QP `qp` between hosts `src` and `dst`: the 5-tuple with
/// the QP's UDP source port, plus the destination QP number when `dest_qp` is set.
pub fn flow_hashes(src: u32, dst: u32, qp: u32, dport: u16, dest_qp: bool) -> (u32, u32) {
    let sport = route::qp_sport(qp);
    let f = route::five_tuple_hash(src, dst, sport, dport);
    let r = route::five_tuple_hash(dst, src, sport, dport);
    if !dest_qp {
        return (f, r);
    }
    // The 24-bit destination QP number (both ends use the same QP index here) folded in with
    // CRC-32 over (5-tuple hash, dest QP).
    let with_qp = |h: u32| {
        let mut b = [0u8; 7];
        b[0..4].copy_from_slice(&h.to_be_bytes());
        b[4..7].copy_from_slice(&qp.to_be_bytes()[1..4]);
        route::crc32(&b)
    };
    (with_qp(f), with_qp(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NCCL's split: DIVUP(size, nqps) rounded up to 128 B per QP; the parts add up.
    #[test]
    fn parts_cover_the_message_in_aligned_chunks() {
        for (bytes, q) in [
            (1u64, 4u16),
            (1000, 4),
            (1 << 20, 4),
            (1_000_001, 3),
            (64, 1),
        ] {
            let n = parts(bytes, q);
            let sum: u64 = (0..n).map(|j| part_bytes(bytes, q, j)).sum();
            assert_eq!(sum, bytes, "{bytes} on {q}");
            for j in 0..n {
                assert!(part_bytes(bytes, q, j) > 0);
            }
        }
        assert_eq!(parts(1 << 20, 4), 4);
        assert_eq!(part_bytes(1 << 20, 4, 0), 1 << 18);
        // 1000 B on 4 QPs: 256-byte chunks (250 rounded up to 128).
        assert_eq!(parts(1000, 4), 4);
        assert_eq!(part_bytes(1000, 4, 3), 1000 - 768);
        assert_eq!(parts(100, 4), 1);
    }

    #[test]
    fn dest_qp_hash_differs_from_the_five_tuple() {
        let (f, r) = flow_hashes(1, 2, 5, 4791, false);
        assert_eq!(f, route::five_tuple_hash(1, 2, route::qp_sport(5), 4791));
        assert_eq!(r, route::five_tuple_hash(2, 1, route::qp_sport(5), 4791));
        let (g, _) = flow_hashes(1, 2, 5, 4791, true);
        assert_ne!(f, g);
    }
}
