//! ECN marking at a switch egress queue (RFC 3168 CE codepoint), for the data class only: its
//! parameters, engine-neutral (the packet engine marks by them in `fabricsim_packet::marking`,
//! the flow engine's DCQCN models take their expected marking probability).
//!
//! RED-style marking as RoCE switches configure it (NVIDIA Onyx `roce lossless` defaults; HPCC
//! `switch-mmu.cc` `ShouldSendCN`): below Kmin never, above Kmax always, in between with
//! probability Pmax·(q − Kmin)/(Kmax − Kmin). The DCTCP-style step option marks every packet that
//! finds the queue above K (Alizadeh et al., SIGCOMM 2010). InfiniBand FECN (IBA annex A10) marks
//! above its threshold (`ibcc::IbCcParams`).

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_out_of_order_are_refused() {
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
