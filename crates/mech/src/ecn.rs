//! ECN marking at a switch egress queue (RFC 3168 CE codepoint), for the data class only.
//!
//! RED-style marking as RoCE switches configure it (NVIDIA Onyx `roce lossless` defaults; HPCC
//! `switch-mmu.cc`
//! `ShouldSendCN`): below Kmin never, above Kmax always, in between with probability
//! Pmax·(q − Kmin)/(Kmax − Kmin). The DCTCP-style step option marks every packet that finds the
//! queue above K (Alizadeh et al., SIGCOMM 2010). The same rule, as a plain threshold, marks
//! InfiniBand FECN (IBA annex A10).

use fabricsim_core::rng::Rng;

/// How a queue length turns into a mark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EcnMarking {
    /// RED between `kmin_bytes` and `kmax_bytes` with top probability `pmax`.
    Red {
        kmin_bytes: u64,
        kmax_bytes: u64,
        pmax: f64,
    },
    /// Mark every packet that finds the queue above `k_bytes` (DCTCP).
    Step { k_bytes: u64 },
}

impl EcnMarking {
    /// Checks the thresholds; `Err((problem, allowed))`.
    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        if let EcnMarking::Step { k_bytes: 0 } = *self {
            return Err(("step marking with K = 0 B".into(), "K > 0 bytes"));
        }
        if let EcnMarking::Red {
            kmin_bytes,
            kmax_bytes,
            pmax,
        } = *self
        {
            if kmax_bytes <= kmin_bytes {
                return Err((
                    format!("kmin {kmin_bytes} B is not below kmax {kmax_bytes} B"),
                    "kmin < kmax",
                ));
            }
            if !(pmax > 0.0 && pmax <= 1.0) {
                return Err((format!("pmax {pmax}"), "0 < pmax <= 1"));
            }
        }
        Ok(())
    }
}

/// The marking rule in integer form: probabilities as fractions of 2^32.
#[derive(Clone, Copy, Debug)]
pub struct Marker {
    kmin: u64,
    kmax: u64,
    pmax_q32: u64,
}

impl Marker {
    pub fn new(m: EcnMarking) -> Marker {
        match m {
            EcnMarking::Red {
                kmin_bytes,
                kmax_bytes,
                pmax,
            } => Marker {
                kmin: kmin_bytes,
                kmax: kmax_bytes,
                pmax_q32: (pmax * 4_294_967_296.0).round() as u64,
            },
            // A step is RED with Kmin = Kmax = K and Pmax = 1.
            EcnMarking::Step { k_bytes } => Marker {
                kmin: k_bytes,
                kmax: k_bytes,
                pmax_q32: 1 << 32,
            },
        }
    }

    /// A plain threshold (IB FECN): mark whenever the queue is above `bytes`.
    pub fn threshold(bytes: u64) -> Marker {
        Marker::new(EcnMarking::Step { k_bytes: bytes })
    }

    /// Whether a packet that finds `queue_bytes` in its egress queue is marked; draws from
    /// `rng` only between the thresholds.
    #[inline]
    pub fn mark(&self, queue_bytes: u64, rng: &mut Rng) -> bool {
        if queue_bytes <= self.kmin {
            return false;
        }
        if queue_bytes > self.kmax {
            return true;
        }
        let p = self.pmax_q32 * (queue_bytes - self.kmin) / (self.kmax - self.kmin);
        (rng.next_u64() >> 32) < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RED curve of HPCC `switch-mmu.cc` `ShouldSendCN`: 0 below Kmin,
    /// Pmax·(q−Kmin)/(Kmax−Kmin) between, 1 above.
    #[test]
    fn red_marks_with_the_linear_probability() {
        let m = Marker::new(EcnMarking::Red {
            kmin_bytes: 100_000,
            kmax_bytes: 400_000,
            pmax: 0.2,
        });
        let mut rng = Rng::new(7);
        let n = 200_000;
        for (q, expect) in [
            (50_000u64, 0.0),
            (250_000, 0.1),
            (400_000, 0.2),
            (400_001, 1.0),
        ] {
            let hits = (0..n).filter(|_| m.mark(q, &mut rng)).count() as f64 / n as f64;
            assert!((hits - expect).abs() < 0.005, "q {q}: {hits} vs {expect}");
        }
    }

    #[test]
    fn step_marks_above_k_only() {
        let m = Marker::new(EcnMarking::Step { k_bytes: 30_000 });
        let mut rng = Rng::new(1);
        assert!(!m.mark(30_000, &mut rng));
        assert!(m.mark(30_001, &mut rng));
        assert!(
            EcnMarking::Red {
                kmin_bytes: 5,
                kmax_bytes: 5,
                pmax: 0.1
            }
            .validate()
            .is_err()
        );
        assert!(EcnMarking::Step { k_bytes: 0 }.validate().is_err());
    }
}
