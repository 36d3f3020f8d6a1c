//! REPS, recycled entropy packet spraying (Bonato et al., "REPS: Recycled Entropy Packet
//! Spraying for Adaptive Load Balancing and Failure Mitigation", arXiv 2407.21625, §3; the
//! path-aware spraying of UEC 1.0 3.6.16, "a cache of about 8" entropies, read through
//! github.com/KaiLv16/UEC-Notes, its multipath notes): the sender keeps the entropy values
//! whose packets came back acknowledged without an ECN mark and reuses them, oldest first, one
//! per packet; with none cached it explores a fresh random one. An entropy whose packets are
//! marked (a congested path), trimmed or lost (a failed path) is not recycled, so the sender
//! drifts off that path within a few round trips, where oblivious spraying keeps sending it
//! its share.

use super::spray::Spray;
use fabricsim_core::rng::Rng;

/// Entropies a sender caches (the paper's and the spec's 8).
pub const CACHE: usize = 8;

/// The largest entropy count REPS sprays over: an ACK echoes the entropy in one byte.
pub const MAX_ENTROPIES: u16 = 256;

/// One sender's recycled entropies, a ring of at most `CACHE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reps {
    ring: [u8; CACHE],
    head: u8,
    len: u8,
}

impl Reps {
    /// The entropy of the next packet: the oldest recycled one, else a random one of `s`'s.
    #[inline]
    pub fn next(&mut self, s: Spray, rng: &mut Rng) -> u32 {
        if self.len == 0 {
            return s.random(rng);
        }
        let e = self.ring[self.head as usize];
        self.head = (self.head + 1) % CACHE as u8;
        self.len -= 1;
        e as u32
    }

    /// A packet sent with entropy `ev` was acknowledged, `congested` if it came back marked or
    /// trimmed: an uncongested entropy is cached (the oldest dropped when full).
    #[inline]
    pub fn on_ack(&mut self, ev: u8, congested: bool) {
        if congested {
            return;
        }
        if self.len as usize == CACHE {
            self.head = (self.head + 1) % CACHE as u8;
            self.len -= 1;
        }
        let tail = (self.head as usize + self.len as usize) % CACHE;
        self.ring[tail] = ev;
        self.len += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::spray::SprayPick;

    const S: Spray = Spray {
        entropies: 256,
        pick: SprayPick::Reps,
    };

    /// Unmarked entropies come back in order; marked ones are never reused; an empty cache
    /// explores at random.
    #[test]
    fn recycles_unmarked_entropies_oldest_first() {
        let mut r = Reps::default();
        let mut rng = Rng::new(1);
        r.on_ack(5, false);
        r.on_ack(9, true);
        r.on_ack(7, false);
        assert_eq!((r.next(S, &mut rng), r.next(S, &mut rng)), (5, 7));
        let mut fresh = Rng::new(1);
        assert_eq!(
            r.next(S, &mut rng),
            S.random(&mut fresh),
            "explores when empty"
        );
        // A full cache drops its oldest.
        for e in 0..=CACHE as u8 {
            r.on_ack(e, false);
        }
        assert_eq!(r.next(S, &mut rng), 1);
    }
}
