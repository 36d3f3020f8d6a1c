//! Pipeline schedules: the order in which a pipeline rank runs its micro-batches' forward and
//! backward passes, and what that order keeps in memory.
//!
//! 1F1B (Narayanan et al. 2021, arXiv 2104.04473, §2.2.1; Megatron-LM
//! `forward_backward_pipelining_without_interleaving`): rank s warms up with min(pp - 1 - s, m)
//! forwards, then alternates one forward and one backward. Interleaved 1F1B (§2.2.2;
//! `forward_backward_pipelining_with_interleaving`): each rank holds `vp` model chunks, virtual
//! stage c * pp + s being chunk c of rank s; forwards run chunk-major in groups of pp
//! micro-batches, warm-up (pp - 1 - s) * 2 + (vp - 1) * pp forwards; the bubble shrinks to
//! (pp - 1) / (vp * m) of the ideal step, while every micro-batch crosses pp * vp - 1 stage
//! boundaries each way instead of pp - 1 (more pipeline sends).

/// One operation of a pipeline rank: a micro-batch's forward or backward through one chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipeOp {
    pub backward: bool,
    /// Model chunk of the rank (0 without interleaving).
    pub chunk: u64,
    pub micro: u64,
}

/// The operations of rank `s` of `pp` with `vp` chunks each and `m` micro-batches, in order.
/// With `vp` > 1, `m` must be a multiple of `pp` (Megatron's requirement; validated by
/// `config`).
pub fn order(pp: u64, vp: u64, m: u64, s: u64) -> Vec<PipeOp> {
    let total = m * vp;
    let warm = warmup(pp, vp, m, s);
    let group = pp * vp;
    let micro = |k: u64| (k / group) * pp + k % pp;
    let fwd = |k: u64| PipeOp {
        backward: false,
        chunk: (k % group) / pp,
        micro: micro(k),
    };
    let bwd = |k: u64| PipeOp {
        backward: true,
        chunk: vp - 1 - (k % group) / pp,
        micro: micro(k),
    };
    let mut ops: Vec<PipeOp> = (0..warm).map(fwd).collect();
    for j in 0..total - warm {
        ops.push(fwd(warm + j));
        ops.push(bwd(j));
    }
    ops.extend((total - warm..total).map(bwd));
    ops
}

/// The warm-up forwards of rank `s` (the first operations of [`order`]); as many backwards end
/// it (the flush), the operations between are the steady 1F1B phase.
pub fn warmup(pp: u64, vp: u64, m: u64, s: u64) -> u64 {
    if vp == 1 {
        (pp - 1 - s).min(m)
    } else {
        ((pp - 1 - s) * 2 + (vp - 1) * pp).min(m * vp)
    }
}

/// Layers of each of the `vp` chunks of a rank holding `layers` layers: as even as possible;
/// the shorter chunks are the first ones on the first rank (its first chunk also runs the
/// embedding) and the last ones elsewhere (the last rank's last chunk runs the output
/// projection). Llama 3 405B, 7 layers in 8 chunks on the first stage: the first chunk holds
/// only the embedding (Dubey et al. 2024, arXiv 2407.21783, §3.3.2).
pub fn chunk_layers(layers: u64, vp: u64, first_rank: bool) -> Vec<u64> {
    let q = layers.div_ceil(vp);
    let short = q * vp - layers;
    (0..vp)
        .map(|c| {
            let from_short_end = if first_rank { c } else { vp - 1 - c };
            if from_short_end < short { q - 1 } else { q }
        })
        .collect()
}

/// The most layer-activations (layers x micro-batches) rank `s` holds at once under its
/// order: a chunk's forward stores its layers' activations until its backward frees them.
pub fn peak_layers_in_flight(order: &[PipeOp], chunks: &[u64]) -> u64 {
    let (mut now, mut peak) = (0u64, 0u64);
    for op in order {
        let l = chunks[op.chunk as usize];
        if op.backward {
            now -= l;
        } else {
            now += l;
            peak = peak.max(now);
        }
    }
    peak
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_f_one_b_is_the_single_chunk_case() {
        let o = order(4, 1, 3, 2);
        let ids: Vec<(bool, u64)> = o.iter().map(|p| (p.backward, p.micro)).collect();
        assert_eq!(
            ids,
            vec![
                (false, 0),
                (false, 1),
                (true, 0),
                (false, 2),
                (true, 1),
                (true, 2)
            ]
        );
        assert!(o.iter().all(|p| p.chunk == 0));
    }

    #[test]
    fn interleaved_order_is_megatrons() {
        // pp 2, vp 2, m 4, rank 0: warm-up (2-1-0)*2 + (2-1)*2 = 4 forwards: micro 0, 1 of
        // chunk 0, micro 0, 1 of chunk 1; then F(c0 m2) B(c1 m0) F(c0 m3) B(c1 m1) F(c1 m2)
        // B(c0 m0) F(c1 m3) B(c0 m1), then B(c1 m2) B(c1 m3) B(c0 m2) B(c0 m3).
        let o = order(2, 2, 4, 0);
        let f = |chunk, micro| PipeOp {
            backward: false,
            chunk,
            micro,
        };
        let b = |chunk, micro| PipeOp {
            backward: true,
            chunk,
            micro,
        };
        assert_eq!(
            o,
            vec![
                f(0, 0),
                f(0, 1),
                f(1, 0),
                f(1, 1),
                f(0, 2),
                b(1, 0),
                f(0, 3),
                b(1, 1),
                f(1, 2),
                b(0, 0),
                f(1, 3),
                b(0, 1),
                b(1, 2),
                b(1, 3),
                b(0, 2),
                b(0, 3)
            ]
        );
        // Every (chunk, micro) runs forward once and backward once.
        for s in 0..4 {
            let o = order(4, 3, 8, s);
            assert_eq!(o.len(), 2 * 8 * 3);
            for c in 0..3 {
                for u in 0..8 {
                    for bw in [false, true] {
                        assert_eq!(
                            o.iter()
                                .filter(|p| **p
                                    == PipeOp {
                                        backward: bw,
                                        chunk: c,
                                        micro: u
                                    })
                                .count(),
                            1
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn in_flight_activations_follow_korthikanti() {
        // 1F1B: rank s holds pp - s micro-batches of its layers. Interleaved, rank 0 holds
        // (pp * vp + pp - 1) chunks: L (1 + (pp - 1) / (pp * vp)) of a 1F1B rank's pp * L
        // (Korthikanti et al. 2022, arXiv 2205.05198, §4.2.3), when m is large enough.
        let (pp, vp, m, layers) = (4, 2, 16, 8);
        for s in 0..pp {
            let one = peak_layers_in_flight(&order(pp, 1, m, s), &[layers]);
            assert_eq!(one, (pp - s) * layers);
        }
        let chunks = chunk_layers(layers, vp, true);
        assert_eq!(chunks, vec![4, 4]);
        let inter = peak_layers_in_flight(&order(pp, vp, m, 0), &chunks);
        assert_eq!(inter, (pp * vp + pp - 1) * layers / vp);
        assert_eq!(chunk_layers(7, 8, true), vec![0, 1, 1, 1, 1, 1, 1, 1]);
        assert_eq!(chunk_layers(7, 8, false), vec![1, 1, 1, 1, 1, 1, 1, 0]);
        assert_eq!(chunk_layers(10, 4, false), vec![3, 3, 2, 2]);
    }
}
