//! InfiniBand FECN marking (IBA Vol. 1 Annex A10, congestion control, the switch's part): a
//! port whose output queue is above its Threshold marks FECN on the packets it sends, one in
//! Marking_Rate + 1, and a port congested only for lack of credits downstream (a victim) marks
//! only with Victim_Mask set.

use super::red::Red;
use fabricsim_mech::ibcc::IbCcParams;

/// The rule with its per-port Marking_Rate countdown.
pub struct Fecn {
    /// When the queue counts as congested: a step at `threshold_bytes`, or the run's ECN rule
    /// when it also sets one (`CcParams::ecn`), as a RED curve (a step is one with Kmin = Kmax).
    congested: Red,
    threshold_bytes: u64,
    victim_mask: bool,
    marking_rate: u32,
    /// Per port: packets still to let pass unmarked.
    skip: Vec<u32>,
}

impl Fecn {
    /// Whether the congested-queue rule drew from its streams under `seed`.
    pub fn drew(&self, seed: u64) -> bool {
        self.congested.drew(seed)
    }

    /// IB CC `ib`'s marking on `ports` ports, over `congested` (see the field).
    pub fn new(ib: &IbCcParams, congested: Red, ports: usize) -> Fecn {
        Fecn {
            congested,
            threshold_bytes: ib.threshold_bytes,
            victim_mask: ib.victim_mask,
            marking_rate: ib.marking_rate,
            skip: vec![0; ports],
        }
    }

    /// Whether a packet that leaves `queue_bytes` in egress `out` of switch `node` is marked.
    /// `victim(bytes)`: whether the port waited for credits within the time its link drains
    /// `bytes`; asked only without Victim_Mask, of a congested port.
    #[inline]
    pub fn mark(
        &mut self,
        queue_bytes: u64,
        node: usize,
        out: usize,
        victim: impl FnOnce(u64) -> bool,
    ) -> bool {
        if !self.congested.mark(queue_bytes, node) {
            return false;
        }
        // A port held up for credits within the time its link drains a threshold's worth of
        // queue could not have kept its queue below the threshold by itself, so its congestion
        // comes from downstream [E: the window].
        if !self.victim_mask && victim(self.threshold_bytes) {
            return false;
        }
        let skip = &mut self.skip[out];
        if *skip > 0 {
            *skip -= 1;
            return false;
        }
        *skip = self.marking_rate;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::units::Time;
    use fabricsim_mech::ibcc::Cct;

    fn ib(marking_rate: u32, victim_mask: bool) -> IbCcParams {
        IbCcParams {
            threshold_bytes: 10_000,
            marking_rate,
            victim_mask,
            ccti_increase: 1,
            ccti_limit: 127,
            ccti_min: 0,
            ccti_timer: Time::from_us(50),
            cct: Cct::mellanox_default(),
        }
    }

    fn at(threshold: u64) -> Red {
        Red::new(threshold, threshold, 1.0, 1, 1)
    }

    /// Above the threshold every packet is marked with Marking_Rate 0; at or below it none.
    #[test]
    fn marks_above_its_threshold() {
        let mut f = Fecn::new(&ib(0, true), at(10_000), 1);
        assert!(!f.mark(10_000, 0, 0, |_| unreachable!()));
        assert!((0..5).all(|_| f.mark(10_001, 0, 0, |_| unreachable!())));
    }

    /// Marking_Rate 2: one packet in three per port, each port counting its own.
    #[test]
    fn marks_one_in_marking_rate_plus_one_per_port() {
        let mut f = Fecn::new(&ib(2, true), at(10_000), 2);
        let a: Vec<bool> = (0..6).map(|_| f.mark(20_000, 0, 0, |_| false)).collect();
        assert_eq!(a, [true, false, false, true, false, false]);
        assert!(f.mark(20_000, 0, 1, |_| false), "port 1 has its own count");
        // Below the threshold nothing is counted.
        assert!(!f.mark(5_000, 0, 0, |_| false));
        assert!(f.mark(20_000, 0, 0, |_| false));
    }

    /// Without Victim_Mask a victim port does not mark (and its count does not move); the
    /// question is asked with the threshold's bytes. With it, a victim marks like a root.
    #[test]
    fn victims_mark_only_with_victim_mask() {
        let mut f = Fecn::new(&ib(1, false), at(10_000), 1);
        assert!(!f.mark(20_000, 0, 0, |b| {
            assert_eq!(b, 10_000);
            true
        }));
        assert!(f.mark(20_000, 0, 0, |_| false));
        assert!(
            !f.mark(20_000, 0, 0, |_| false),
            "Marking_Rate 1 skips the next"
        );
        let mut m = Fecn::new(&ib(0, true), at(10_000), 1);
        assert!(m.mark(20_000, 0, 0, |_| true));
    }
}
