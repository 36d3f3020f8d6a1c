//! The marking seam of the packet engine: how a switch egress marks the data packets it sends
//! by the queue they leave behind, one file per rule, and `Marking`, the run's rule as an enum
//! resolved once per run and matched at the one place that marks (`engine/mark.rs`, at
//! dequeue). The receiver's reaction to a mark is the congestion control's (`congestion`).
//!
//! - `red`: RED ECN (Kmin, Kmax, Pmax; DCQCN's congestion point);
//! - `step`: step ECN at K (DCTCP);
//! - `fecn`: InfiniBand FECN (Threshold, Marking_Rate, Victim_Mask; IB CC).
//!
//! The parameters are engine-neutral and live in `fabricsim_mech` (`ecn::EcnMarking`,
//! `ibcc::IbCcParams`), where the flow engine's models read them too.
//!
//! Adding a rule: a file here with its state and `mark`, a variant in `Marking` with its arm
//! in `Marking::new` and `Marking::mark`, and its parameters in `fabricsim_mech`.

mod fecn;
mod red;
mod step;

pub use fecn::Fecn;
pub use red::Red;
pub use step::Step;

use fabricsim_mech::cc::CcParams;
use fabricsim_mech::ecn::EcnMarking;

/// The run's marking rule. Tagged by a byte (`repr(u8)`): a match reads it rather than
/// decoding a niche in a variant's fields.
#[repr(u8)]
pub enum Marking {
    Off,
    Red(Red),
    Step(Step),
    Fecn(Fecn),
}

impl Marking {
    /// The rule of `cc` for a topology of `nodes` nodes and `ports` ports under `seed`: IB FECN
    /// under IB CC (over the ECN rule if `cc` sets one too), else the ECN rule, else none.
    pub fn new(cc: &CcParams, seed: u64, nodes: usize, ports: usize) -> Marking {
        let red = |kmin, kmax, pmax| Red::new(kmin, kmax, pmax, seed, nodes);
        if let Some(ib) = cc.algo.ibcc() {
            let congested = match cc.ecn {
                Some(EcnMarking::Red {
                    kmin_bytes,
                    kmax_bytes,
                    pmax,
                }) => red(kmin_bytes, kmax_bytes, pmax),
                Some(EcnMarking::Step { k_bytes }) => red(k_bytes, k_bytes, 1.0),
                None => red(ib.threshold_bytes, ib.threshold_bytes, 1.0),
            };
            return Marking::Fecn(Fecn::new(ib, congested, ports));
        }
        match cc.ecn {
            Some(EcnMarking::Red {
                kmin_bytes,
                kmax_bytes,
                pmax,
            }) => Marking::Red(red(kmin_bytes, kmax_bytes, pmax)),
            Some(EcnMarking::Step { k_bytes }) => Marking::Step(Step::new(k_bytes)),
            None => Marking::Off,
        }
    }

    #[inline(always)]
    pub fn is_off(&self) -> bool {
        matches!(self, Marking::Off)
    }

    /// Whether a data packet that leaves `queue_bytes` of its class in egress `out` of switch
    /// `node` is marked; `victim` as `Fecn::mark` asks it.
    #[inline]
    pub fn mark(
        &mut self,
        queue_bytes: u64,
        node: usize,
        out: usize,
        victim: impl FnOnce(u64) -> bool,
    ) -> bool {
        match self {
            Marking::Off => false,
            Marking::Red(r) => r.mark(queue_bytes, node),
            Marking::Step(s) => s.mark(queue_bytes),
            Marking::Fecn(f) => f.mark(queue_bytes, node, out, victim),
        }
    }

    /// Whether the rule drew from its random streams under `seed` (RED between Kmin and Kmax).
    pub fn drew(&self, seed: u64) -> bool {
        match self {
            Marking::Off | Marking::Step(_) => false,
            Marking::Red(r) => r.drew(seed),
            Marking::Fecn(f) => f.drew(seed),
        }
    }
}
