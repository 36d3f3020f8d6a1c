//! Per-packet spraying over the ECMP set (Dixit et al., "On the impact of packet spraying in
//! data center networks", INFOCOM 2013; Ultra Ethernet 1.0 sprays by varying the entropy value
//! a packet carries): the sender picks an entropy index `j` for each
//! data packet, and every switch takes the `j`-th candidate after its ECMP choice for the flow,
//! `(ecmp + j) mod n`. Round robin over `entropies` values (`j` = the packet's sequence number
//! mod `entropies`; 0: no bound, so each switch cycles over all its candidates), or a random `j`
//! per packet from the sender NIC's seeded stream. The flow engine's `PathModel::Spray { paths }`
//! is the fluid view of the same choice: subflow `j` takes `(hashed + j) mod n` at every switch.
//! Spraying reorders packets: it needs the unordered-placement receiver (`sim::transport`).

use fabricsim_core::rng::Rng;

/// How the sender picks the entropy of each packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprayPick {
    /// The packet's sequence number modulo the entropy count (a resend takes its first path).
    RoundRobin,
    /// Uniform over the entropy values, from the sender NIC's stream (`Rng::stream`).
    Random,
    /// REPS (`route::reps`): recycle the entropies that came back unmarked, else random.
    Reps,
}

/// `RoutePolicy::Spray`'s parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spray {
    /// Entropy values a QP sprays over (0: unbounded, all of each switch's candidates).
    pub entropies: u16,
    pub pick: SprayPick,
}

/// The names of [`SprayPick`] in TOML.
pub const PICKS: [(&str, SprayPick); 3] = [
    ("round_robin", SprayPick::RoundRobin),
    ("random", SprayPick::Random),
    ("reps", SprayPick::Reps),
];

/// The pick named `s` in TOML.
pub fn pick_named(s: &str) -> Option<SprayPick> {
    PICKS.iter().find(|(n, _)| *n == s.trim()).map(|&(_, p)| p)
}

/// The pick names, for an error's "allowed" part.
pub fn pick_names() -> String {
    PICKS.map(|(n, _)| n).join(", ")
}

impl Spray {
    /// Round robin over every candidate of each switch.
    pub const DEFAULT: Spray = Spray {
        entropies: 0,
        pick: SprayPick::RoundRobin,
    };

    /// `RoundRobin`'s entropy index of the packet with sequence number `seq`.
    #[inline]
    pub fn round_robin(self, seq: u32) -> u32 {
        match self.entropies {
            0 => seq,
            k => seq % k as u32,
        }
    }

    /// `Random`'s entropy index of a packet, drawn from `rng` (the sender NIC's stream; REPS
    /// explores so).
    #[inline]
    pub fn random(self, rng: &mut Rng) -> u32 {
        match self.entropies {
            0 => rng.next_u64() as u32,
            k => rng.below(k as u64) as u32,
        }
    }
}

/// The candidate a packet with entropy index `j` takes among `n`, `ecmp` being the flow's ECMP
/// choice there.
#[inline]
pub fn pick(ecmp: usize, j: u32, n: usize) -> usize {
    (ecmp + (j as usize % n)) % n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_cycles_over_the_candidates_after_the_ecmp_choice() {
        let s = Spray {
            entropies: 4,
            pick: SprayPick::RoundRobin,
        };
        let picks: Vec<usize> = (0..8).map(|seq| pick(2, s.round_robin(seq), 4)).collect();
        assert_eq!(picks, vec![2, 3, 0, 1, 2, 3, 0, 1]);
    }

    #[test]
    fn random_stays_within_the_entropy_count() {
        let s = Spray {
            entropies: 3,
            pick: SprayPick::Random,
        };
        let mut rng = Rng::new(7);
        let mut seen = [0u32; 3];
        for _ in 0..300 {
            seen[s.random(&mut rng) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 60), "{seen:?}");
    }
}
