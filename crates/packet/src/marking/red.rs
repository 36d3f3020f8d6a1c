//! RED ECN marking (Floyd & Jacobson, IEEE/ACM ToN 1993; the CE codepoint of RFC 3168) with the
//! DCQCN congestion point's Kmin/Kmax/Pmax (Zhu et al., SIGCOMM 2015, section 3.1).
//!
//! As RoCE switches configure it (NVIDIA Onyx `roce lossless` defaults; HPCC ns-3
//! `switch-mmu.cc` `ShouldSendCN`), on the instantaneous queue: below Kmin never, above Kmax
//! always, in between with probability Pmax·(q − Kmin)/(Kmax − Kmin).

use fabricsim_core::rng::{Rng, Stream};

/// The rule in integer form (the probability as a fraction of 2^32), with its randomness.
pub struct Red {
    kmin: u64,
    kmax: u64,
    pmax_q32: u64,
    /// Per switch node: its marking stream.
    rng: Vec<Rng>,
}

impl Red {
    /// RED between `kmin` and `kmax` bytes (`kmin <= kmax`; equal: a step at `kmin` that never
    /// draws) with top probability `pmax`, for `nodes` nodes under `seed`.
    pub fn new(kmin: u64, kmax: u64, pmax: f64, seed: u64, nodes: usize) -> Red {
        Red {
            kmin,
            kmax,
            pmax_q32: (pmax * 4_294_967_296.0).round() as u64,
            rng: (0..nodes as u64)
                .map(|i| Rng::stream(seed, Stream::EcnMarking, i))
                .collect(),
        }
    }

    /// Whether any node's stream was drawn from (a queue between the thresholds) under `seed`.
    pub fn drew(&self, seed: u64) -> bool {
        Rng::any_drawn(&self.rng, seed, Stream::EcnMarking)
    }

    /// Whether a packet that leaves `queue_bytes` in its egress queue at switch `node` is
    /// marked; draws from the node's stream only between the thresholds.
    #[inline]
    pub fn mark(&mut self, queue_bytes: u64, node: usize) -> bool {
        if queue_bytes <= self.kmin {
            return false;
        }
        if queue_bytes > self.kmax {
            return true;
        }
        let p = self.pmax_q32 * (queue_bytes - self.kmin) / (self.kmax - self.kmin);
        (self.rng[node].next_u64() >> 32) < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RED curve of HPCC `switch-mmu.cc` `ShouldSendCN`: 0 at and below Kmin,
    /// Pmax·(q−Kmin)/(Kmax−Kmin) between (Pmax/2 midway, Pmax at Kmax), 1 above Kmax.
    #[test]
    fn red_marks_with_the_linear_probability() {
        let mut m = Red::new(100_000, 400_000, 0.2, 7, 1);
        let n = 200_000;
        for (q, expect) in [
            (50_000u64, 0.0),
            (100_000, 0.0),
            (250_000, 0.1),
            (400_000, 0.2),
            (400_001, 1.0),
        ] {
            let hits = (0..n).filter(|_| m.mark(q, 0)).count() as f64 / n as f64;
            assert!((hits - expect).abs() < 0.005, "q {q}: {hits} vs {expect}");
        }
    }

    /// Each node draws from its own stream: one node's marks do not move another's.
    #[test]
    fn nodes_draw_from_their_own_streams() {
        let mut a = Red::new(0, 1000, 0.5, 3, 2);
        let mut b = Red::new(0, 1000, 0.5, 3, 2);
        for _ in 0..100 {
            a.mark(500, 0);
        }
        let x: Vec<bool> = (0..64).map(|_| a.mark(500, 1)).collect();
        let y: Vec<bool> = (0..64).map(|_| b.mark(500, 1)).collect();
        assert_eq!(x, y);
    }
}
