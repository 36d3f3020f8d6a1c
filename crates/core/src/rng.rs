//! Deterministic random streams: SplitMix64 to derive seeds, xoshiro256++ to draw numbers.
//!
//! Algorithms are written out here (Blackman & Vigna, "Scrambled linear pseudorandom number
//! generators", 2021) so results never change with a dependency's version. Each component takes
//! its own stream: `Rng::stream(seed, Stream::Kind, id)`, its kind named in [`Stream`].

/// SplitMix64 step (Steele, Lea & Flood, OOPSLA 2014): a good 64-bit mixer for seeding.
#[inline]
pub fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Mixes several words into one seed (order-sensitive): each word is folded into the previous
/// SplitMix64 output, not its counter, so every word passes through the full avalanche (a
/// counter only moves by a constant: nearby (seed, id) pairs would share a stream).
pub fn mix(words: &[u64]) -> u64 {
    let mut h = 0x5EED_F00D_CAFE_BABEu64;
    for &w in words {
        let mut s = h ^ w;
        h = splitmix64(&mut s);
    }
    h
}

/// Declares the registry: one variant per stream kind with its number, plus `ALL` and `kind`.
macro_rules! streams {
    ($($(#[$doc:meta])* $name:ident = $kind:expr,)*) => {
        /// The registry of random stream kinds: every component that draws random numbers in a run
        /// names its kind here, so no two share a stream. The numbers enter every seeded output
        /// (changing one changes results).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Stream {
            $($(#[$doc])* $name,)*
            /// A test's own stream (never drawn from in a simulation).
            Test(u64),
        }

        impl Stream {
            /// Every kind a simulation draws from.
            pub const ALL: &'static [Stream] = &[$(Stream::$name),*];

            /// The number mixed into the stream's seed.
            pub const fn kind(self) -> u64 {
                match self {
                    $(Stream::$name => $kind,)*
                    Stream::Test(k) => k,
                }
            }
        }
    };
}

streams! {
    /// Packet engine: a port's loss and bit-error draws (`packet::engine::wire`); id: the port.
    LinkLoss = 1,
    /// Traffic: the Sattolo permutation of `Traffic::Permutation` (`core::traffic`); id 0.
    Permutation = 2,
    /// Traffic: a host's Poisson arrivals and sizes of `Traffic::Uniform`; id: the host.
    UniformArrivals = 3,
    /// Packet engine: a node's probabilistic ECN marking (`packet::congestion::state`); id: the node.
    EcnMarking = 7,
    /// Seeded initial PSNs (`mech::psn`); id: the QP.
    InitialPsn = 0x95_0000,
    /// Flow engine: a message's tail-loss timeout draws (`flow::loss`); id: the message.
    TailLoss = 0x7a11_1055,
    /// Packet engine: a sender NIC's random spray entropies (`mech::route::spray`); id: the host.
    Spray = 0x5_9a7,
    /// `fabricsim tune`: the grid points its first round samples (`fabricsim::tune`); id 0.
    TuneSample = 0x70_4e,
    /// Serving: the Poisson request arrivals (`workload::serve::arrivals`); id 0.
    ServeArrivals = 0x5e_7e_a7,
    /// Tenants: the free servers a `random` placement draws (`workload::tenants::placement`);
    /// id: the job's index.
    Placement = 0x91ace,
    /// Loss in expectation: where a collective's stalls fall along its DAG
    /// (`workload::train::stall_path`); id: fixed, so the expectation ignores the run's seed.
    StallPlacement = 0x57a1_1a7,
}

/// xoshiro256++ generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng {
            s: [
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
                splitmix64(&mut x),
            ],
        }
    }

    /// An independent stream for component `id` of kind `kind` under a run's `seed`.
    pub fn stream(seed: u64, kind: Stream, id: u64) -> Rng {
        Rng::new(mix(&[seed, kind.kind(), id]))
    }

    /// Whether any of `streams`, made as `Rng::stream(seed, kind, i)` for i = 0, 1, .., has
    /// been drawn from (its state moved on from the stream's start).
    pub fn any_drawn(streams: &[Rng], seed: u64, kind: Stream) -> bool {
        streams
            .iter()
            .enumerate()
            .any(|(i, r)| *r != Rng::stream(seed, kind, i as u64))
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift; n > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `p`.
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }

    /// Exponential with the given mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.next_f64()).ln()
    }

    /// Fisher-Yates shuffle.
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_are_stable() {
        // xoshiro256++ from state seeded by SplitMix64(0): fixed forever, so results are too.
        let mut r = Rng::new(0);
        let a = r.next_u64();
        let mut r2 = Rng::new(0);
        assert_eq!(a, r2.next_u64());
        assert_ne!(
            Rng::stream(1, Stream::Permutation, 3).next_u64(),
            Rng::stream(1, Stream::Permutation, 4).next_u64()
        );
    }

    /// Two components drawing from one kind would share streams: every kind is its own.
    #[test]
    fn stream_kinds_are_distinct() {
        let mut kinds: Vec<u64> = Stream::ALL.iter().map(|s| s.kind()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), Stream::ALL.len());
    }

    /// Nearby (seed, kind, id) words must give unrelated seeds: every pair of seeds 1-64 and
    /// ids 0-479 its own stream (the counter-folding mix gave 512 distinct seeds for these 30,720).
    #[test]
    fn nearby_seeds_and_ids_give_distinct_streams() {
        let mut seeds: Vec<u64> = (1..=64u64)
            .flat_map(|seed| (0..480u64).map(move |id| mix(&[seed, 7, id])))
            .collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 64 * 480);
        // And order matters: (seed, id) and (id, seed) differ.
        assert_ne!(mix(&[1, 7, 2]), mix(&[2, 7, 1]));
    }

    #[test]
    fn uniform_mean() {
        let mut r = Rng::new(42);
        let n = 100_000;
        let m: f64 = (0..n).map(|_| r.next_f64()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.01, "{m}");
    }
}
