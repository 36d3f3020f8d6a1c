//! Reed-Solomon forward error correction on a link: from the pre-FEC bit error ratio to the
//! probability that a codeword is uncorrectable and that a frame of a given size is lost.
//!
//! RS(544,514) "KP4" over GF(2^10) (IEEE 802.3 Clause 91 / 119 / 172; used by 100G/200G-per-lane
//! Ethernet and by InfiniBand NDR/XDR): 544 ten-bit symbols carry 514 symbols of data and
//! correct up to t = 15 symbol errors. An uncorrectable codeword is flagged and the PCS corrupts
//! the frames it carries so the MAC discards them (Clause 91.5.3.3), so a frame is lost when any
//! codeword it touches fails. The model assumes independent bit errors (no bursts, no codeword
//! interleaving gain): with real burst errors the failure rate at a given BER is higher, which is
//! why the standards keep margin below the 2.4e-4 pre-FEC limit.

use fabricsim_core::units::Time;

/// Most lanes a link's codewords are spread over (an 800G port of 8 x 100G lanes).
pub const MAX_LANES: usize = 8;

/// The decoder pipeline after the last symbol of a codeword arrives: 37 ns, the IEEE P802.3dj
/// task force's RS-FEC latency assumptions (1 GHz core clock; 3 cycles encode, 3 decode
/// miscellany, 31 correction; codewords corrected in parallel). Estimate for other clocks.
const DECODE_PIPELINE_PS: u64 = 37_000;

/// A Reed-Solomon code as a link's PCS uses it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RsFec {
    /// Symbols per codeword.
    pub n: u32,
    /// Data symbols per codeword.
    pub k: u32,
    /// Bits per symbol.
    pub m: u32,
    /// Symbol errors it corrects.
    pub t: u32,
}

/// RS(544,514), t = 15, 10-bit symbols (IEEE 802.3 Clause 91.5.2.7, "RS(544,514)").
pub const KP4: RsFec = RsFec {
    n: 544,
    k: 514,
    m: 10,
    t: 15,
};

/// RS(528,514), t = 7, 10-bit symbols (IEEE 802.3 Clause 91, "KR4", 25G-per-lane links).
pub const KR4: RsFec = RsFec {
    n: 528,
    k: 514,
    m: 10,
    t: 7,
};

impl RsFec {
    /// Data bits a codeword carries.
    pub fn data_bits(self) -> u64 {
        self.k as u64 * self.m as u64
    }

    /// Probability that a symbol has at least one of its m bits in error.
    pub fn symbol_error(self, ber: f64) -> f64 {
        -((self.m as f64) * (-ber).ln_1p()).exp_m1()
    }

    /// Probability that a codeword has more than t symbol errors (binomial tail, summed in log
    /// space so that 1e-30 is as exact as 1e-3).
    pub fn codeword_failure(self, ber: f64) -> f64 {
        if ber <= 0.0 {
            return 0.0;
        }
        let p = self.symbol_error(ber);
        if p >= 1.0 {
            return 1.0;
        }
        let (lp, lq) = (p.ln(), (-p).ln_1p());
        let mut ln_choose = 0.0; // ln C(n, 0)
        let mut tail = 0.0;
        for i in 1..=self.n {
            ln_choose += ((self.n - i + 1) as f64).ln() - (i as f64).ln();
            if i > self.t {
                tail += (ln_choose + i as f64 * lp + (self.n - i) as f64 * lq).exp();
            }
        }
        tail.min(1.0)
    }

    /// Probability that a frame of `bytes` on the wire is lost: it is discarded when any
    /// codeword it touches fails; placed at a uniformly random bit offset in the codeword
    /// stream, it touches floor((8B-1)/D)+1 codewords, or one more with probability
    /// ((8B-1) mod D)/D, for D data bits per codeword.
    pub fn frame_loss(self, ber: f64, bytes: u64) -> f64 {
        if bytes == 0 {
            return 0.0;
        }
        self.frame_loss_given(self.codeword_ln_ok(ber), bytes)
    }

    /// ln(1 - codeword failure) at `ber`: what a link keeps to price each frame by
    /// [`Self::frame_loss_given`] without the binomial sum.
    pub fn codeword_ln_ok(self, ber: f64) -> f64 {
        (-self.codeword_failure(ber)).ln_1p()
    }

    /// What the FEC adds to one hop (Sella, Moore, Zilberman 2018, "FEC killed the cut-through
    /// switch": the receiver holds a whole codeword before it can correct it): the interleaved
    /// codewords of one FEC flow at the flow's rate, plus the decoder pipeline. A flow is at most
    /// 400G (800GBASE-R runs two 400G flows, IEEE 802.3df); 200G and 400G flows interleave two
    /// codewords symbol by symbol (IEEE 802.3 Clause 119.2.4.4), 100G carries one (Clause 91).
    pub fn latency(self, port_gbps: u32) -> Time {
        let flow = port_gbps.clamp(1, 400) as u64;
        let codewords = if flow >= 200 { 2 } else { 1 };
        let bits = codewords * self.n as u64 * self.m as u64;
        Time::from_ps(bits * 1000 / flow + DECODE_PIPELINE_PS)
    }

    /// ln(1 - codeword failure) when the codeword's symbols are spread evenly over lanes of
    /// pre-FEC BERs `lane_ber` (the PCS distributes each codeword's symbols round-robin over its
    /// lanes, IEEE 802.3 Clause 119.2.4.5, so each lane carries n / lanes of them): the symbol
    /// errors are a sum of per-lane binomials, convolved exactly; the tail above t is summed
    /// directly so that a failure of 1e-40 keeps its digits.
    pub fn codeword_ln_ok_lanes(self, lane_ber: &[f64]) -> f64 {
        let n = self.n as usize;
        let per = n / lane_ber.len().max(1);
        let mut total = vec![0.0f64; n + 1];
        total[0] = 1.0;
        let mut lane = vec![0.0f64; per + 1];
        let mut next = vec![0.0f64; n + 1];
        let mut filled = 0;
        for &ber in lane_ber {
            let p = self.symbol_error(ber);
            binomial_pmf(per, p, &mut lane);
            next.iter_mut().for_each(|x| *x = 0.0);
            for (i, &a) in total[..=filled].iter().enumerate() {
                for (j, &b) in lane.iter().enumerate() {
                    next[i + j] += a * b;
                }
            }
            filled += per;
            std::mem::swap(&mut total, &mut next);
        }
        let fail: f64 = total[self.t as usize + 1..].iter().sum();
        (-fail.min(1.0)).ln_1p()
    }

    /// [`Self::frame_loss`] from `ln_ok` = ln(1 - codeword failure).
    pub fn frame_loss_given(self, ln_ok: f64, bytes: u64) -> f64 {
        if bytes == 0 {
            return 0.0;
        }
        let d = self.data_bits();
        let span = 8 * bytes - 1;
        let (c0, frac) = (span / d + 1, (span % d) as f64 / d as f64);
        let lost = |c: u64| -((c as f64) * ln_ok).exp_m1();
        (1.0 - frac) * lost(c0) + frac * lost(c0 + 1)
    }
}

/// Binomial(k; trials, p) for k = 0..=trials into `out`, each term in log space.
fn binomial_pmf(trials: usize, p: f64, out: &mut [f64]) {
    if p <= 0.0 {
        out.iter_mut()
            .enumerate()
            .for_each(|(k, x)| *x = (k == 0) as u8 as f64);
        return;
    }
    let (lp, lq) = (p.ln(), (-p).ln_1p());
    let mut ln_choose = 0.0;
    for (k, x) in out.iter_mut().enumerate().take(trials + 1) {
        if k > 0 {
            ln_choose += ((trials - k + 1) as f64).ln() - (k as f64).ln();
        }
        *x = (ln_choose + k as f64 * lp + (trials - k) as f64 * lq).exp();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::rng::Rng;

    /// Bit errors over `bits` bit positions, by geometric gaps: the positions in error.
    fn bit_errors(rng: &mut Rng, ber: f64, bits: u64, out: &mut Vec<u64>) {
        out.clear();
        let l = (-ber).ln_1p();
        let mut at = 0u64;
        loop {
            let u = 1.0 - rng.next_f64();
            let gap = (u.ln() / l).floor() as u64;
            at = at.saturating_add(gap);
            if at >= bits {
                return;
            }
            out.push(at);
            at += 1;
        }
    }

    /// Monte Carlo of whole codewords: independent bit errors, a symbol in error when any of
    /// its bits is, the codeword failing above t symbol errors.
    fn mc_codeword_failure(fec: RsFec, ber: f64, codewords: u64, seed: u64) -> f64 {
        let mut rng = Rng::new(seed);
        let bits = fec.n as u64 * fec.m as u64;
        let mut errs = Vec::new();
        let mut failed = 0u64;
        for _ in 0..codewords {
            bit_errors(&mut rng, ber, bits, &mut errs);
            let mut symbols = 0u32;
            let mut last = u64::MAX;
            for &b in &errs {
                let s = b / fec.m as u64;
                if s != last {
                    symbols += 1;
                    last = s;
                }
            }
            failed += (symbols > fec.t) as u64;
        }
        failed as f64 / codewords as f64
    }

    #[test]
    fn codeword_failure_matches_a_monte_carlo_of_bit_errors_within_sampling_error() {
        for (ber, codewords) in [(1.0e-3, 400_000u64), (1.5e-3, 100_000), (2.0e-3, 20_000)] {
            let p = KP4.codeword_failure(ber);
            let mc = mc_codeword_failure(KP4, ber, codewords, 7);
            // Four standard errors of a binomial proportion.
            let se = (p * (1.0 - p) / codewords as f64).sqrt();
            assert!(
                (mc - p).abs() < 4.0 * se,
                "BER {ber}: formula {p:.3e}, MC {mc:.3e} (se {se:.1e})"
            );
        }
    }

    #[test]
    fn the_cliff_below_the_pre_fec_limit() {
        // Where the standard puts the limit, 2.4e-4, a codeword fails about once in 1e12.
        let at_limit = KP4.codeword_failure(2.4e-4);
        assert!(at_limit > 1e-13 && at_limit < 1e-11, "{at_limit:e}");
        // Monotone and steep: each halving of the BER buys orders of magnitude.
        let mut last = 1.0;
        for ber in [2e-3, 1e-3, 5e-4, 2.4e-4, 1e-4, 1e-5, 1e-6] {
            let p = KP4.codeword_failure(ber);
            assert!(p < last, "{ber}");
            last = p;
        }
        assert!(KP4.codeword_failure(1e-6) < 1e-40);
        // KR4 corrects 7 symbols: far weaker at the same BER.
        assert!(KR4.codeword_failure(2.4e-4) > 1e3 * at_limit);
        assert_eq!(KP4.codeword_failure(0.0), 0.0);
    }

    #[test]
    fn frame_loss_grows_with_the_codewords_a_frame_touches() {
        let ber = 1e-3;
        let fail = KP4.codeword_failure(ber);
        // A 64-byte frame touches one codeword, or two when it straddles a boundary.
        let small = KP4.frame_loss(ber, 64);
        assert!(
            small > fail && small < 2.0 * fail * 1.0001,
            "{small:e} vs {fail:e}"
        );
        // 5140 data bits per codeword: a 4,096 + 64-byte frame touches 7 or 8.
        let mtu = KP4.frame_loss(ber, 4160);
        let span = (8 * 4160 - 1) as f64 / 5140.0 + 1.0;
        assert!(
            (mtu / (span * fail) - 1.0).abs() < 1e-3,
            "{mtu:e} vs {:e}",
            span * fail
        );
        assert!(KP4.frame_loss(ber, 9216) > mtu);
    }

    #[test]
    fn frame_loss_matches_a_monte_carlo_of_frames_at_random_offsets() {
        // Frames of 4,160 B at uniform offsets over a stream of codewords failing at rate f.
        let (f, frames, bytes) = (2e-3, 200_000u64, 4160u64);
        let d = KP4.data_bits();
        let mut rng = Rng::new(11);
        let mut lost = 0u64;
        for _ in 0..frames {
            let start = (rng.next_f64() * d as f64) as u64;
            let touched = (start + 8 * bytes - 1) / d + 1;
            lost += (0..touched).any(|_| rng.next_f64() < f) as u64;
        }
        let mc = lost as f64 / frames as f64;
        // The same closed form as frame_loss, at codeword failure f.
        let span = 8 * bytes - 1;
        let (c0, frac) = (span / d + 1, (span % d) as f64 / d as f64);
        let p = (1.0 - frac) * (1.0 - (1.0 - f).powi(c0 as i32))
            + frac * (1.0 - (1.0 - f).powi(c0 as i32 + 1));
        let se = (p * (1.0 - p) / frames as f64).sqrt();
        assert!((mc - p).abs() < 4.0 * se, "MC {mc:.4e}, formula {p:.4e}");
    }

    #[test]
    fn lanes_at_one_ber_are_the_single_ber_codeword() {
        for ber in [1e-6, 2.4e-4, 1.5e-3] {
            let one = KP4.codeword_ln_ok(ber);
            for lanes in [1usize, 4, 8] {
                let spread = KP4.codeword_ln_ok_lanes(&vec![ber; lanes]);
                assert!(
                    ((spread - one) / one).abs() < 1e-9,
                    "BER {ber}, {lanes} lanes: {spread:e} vs {one:e}"
                );
            }
        }
    }

    /// One lane of four at 6e-3, the others healthy: a Monte Carlo of symbol errors lane by lane
    /// (136 symbols each) agrees with the convolution.
    #[test]
    fn one_bad_lane_matches_a_monte_carlo_of_lane_symbol_errors() {
        let lanes = [1e-8, 1e-8, 6e-3, 1e-8];
        let fail = -KP4.codeword_ln_ok_lanes(&lanes).exp_m1();
        let mut rng = Rng::new(11);
        let codewords = 100_000u64;
        let mut failed = 0u64;
        for _ in 0..codewords {
            let mut errs = 0u32;
            for &ber in &lanes {
                let p = KP4.symbol_error(ber);
                errs += (0..136).filter(|_| rng.next_f64() < p).count() as u32;
            }
            failed += (errs > KP4.t) as u64;
        }
        let mc = failed as f64 / codewords as f64;
        let se = (fail * (1.0 - fail) / codewords as f64).sqrt();
        assert!(fail > 1e-3, "{fail:e}");
        assert!((mc - fail).abs() < 4.0 * se, "MC {mc:e}, model {fail:e}");
    }

    #[test]
    fn fec_latency_is_the_interleaved_codewords_plus_the_pipeline() {
        // 100G: one 5440-bit codeword at 100 Gb/s, 54.4 ns; 400G: two at 400 Gb/s, 27.2 ns.
        assert_eq!(KP4.latency(100).ps(), 54_400 + DECODE_PIPELINE_PS);
        assert_eq!(KP4.latency(400).ps(), 27_200 + DECODE_PIPELINE_PS);
        // 800G runs two 400G flows side by side: the same wait as 400G.
        assert_eq!(KP4.latency(800), KP4.latency(400));
        assert!(KP4.latency(200) > KP4.latency(400));
    }
}
