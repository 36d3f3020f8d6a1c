//! Packet sequence numbers as the wire carries them: 24 bits in the BTH (IBA Vol. 1 9.2), so
//! they wrap, and every comparison is serial-number arithmetic modulo 2^24 (IBA Vol. 1
//! 9.7.5.1.1: the 2^23 PSNs behind the responder's expected PSN are its duplicate region, the
//! others lie ahead; RFC 1982 defines the same arithmetic). A QP's first PSN is chosen at its
//! setup (`ibv_modify_qp` `sq_psn` / `rq_psn`).

use fabricsim_core::rng::{Rng, Stream};

pub const PSN_BITS: u32 = 24;
pub const PSN_MASK: u32 = (1 << PSN_BITS) - 1;

/// `base + n` on the 24-bit circle.
#[inline]
pub fn add(base: u32, n: u32) -> u32 {
    base.wrapping_add(n) & PSN_MASK
}

/// The signed distance from `b` to `a` modulo 2^24, in [-2^23, 2^23): positive when `a` is
/// ahead of `b`.
#[inline]
pub fn diff(a: u32, b: u32) -> i32 {
    ((a.wrapping_sub(b) << (32 - PSN_BITS)) as i32) >> (32 - PSN_BITS)
}

/// How each QP's initial PSN is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum InitialPsn {
    /// Every QP starts at 0.
    #[default]
    Zero,
    /// A pseudo-random PSN per QP from the run's seed, as librdmacm draws one at connection
    /// set-up (`rdma_create_qp`: `sq_psn = rand() & 0xffffff`).
    Seeded,
    /// Every QP starts here (modulo 2^24): starting just below 2^24 makes messages cross the
    /// wrap.
    At(u32),
}

impl InitialPsn {
    /// The initial PSN of QP `qp` in a run with `seed`.
    pub fn of(self, seed: u64, qp: u32) -> u32 {
        match self {
            InitialPsn::Zero => 0,
            InitialPsn::Seeded => {
                Rng::stream(seed, Stream::InitialPsn, qp as u64).next_u64() as u32 & PSN_MASK
            }
            InitialPsn::At(p) => p & PSN_MASK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_arithmetic_wraps_at_two_to_the_24() {
        assert_eq!(add(PSN_MASK, 1), 0);
        assert_eq!(add(PSN_MASK - 2, 5), 2);
        assert_eq!(diff(2, PSN_MASK - 2), 5);
        assert_eq!(diff(PSN_MASK - 2, 2), -5);
        assert_eq!(diff(7, 7), 0);
        // Half the circle ahead is the farthest "ahead"; one more is behind (IBA 9.7.5.1.1).
        assert_eq!(diff(1 << 23, 0), -(1 << 23));
        assert_eq!(diff((1 << 23) - 1, 0), (1 << 23) - 1);
    }

    #[test]
    fn seeded_initial_psns_are_per_qp_and_deterministic() {
        let a: Vec<u32> = (0..8).map(|q| InitialPsn::Seeded.of(5, q)).collect();
        let b: Vec<u32> = (0..8).map(|q| InitialPsn::Seeded.of(5, q)).collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|&p| p <= PSN_MASK));
        assert!(a.windows(2).any(|w| w[0] != w[1]));
    }
}
