//! NSCC's parameters (UEC 1.0 specification 3.6.13.3, table 3-76: network-signal congestion
//! control, read through the public notes in github.com/KaiLv16/UEC-Notes, its UET-CC notes),
//! engine-neutral: the packet engine's algorithm is `fabricsim_packet::congestion`'s `nscc`.
//! The constants derived from the base RTT and the BDP follow the spec's formulas and, where the
//! spec leaves a value open, the UEC working group's htsim (`ultraethernet/uet-htsim`
//! `htsim/sim/uec.cpp` `initNsccParams`).

use serde::Deserialize;

/// `[congestion.nscc]` (a profile's or `[sim.congestion]`'s): NSCC on, with these parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "NsccTable")]
pub struct NsccParams {
    /// Multiplicative decrease gain γ (htsim 0.8).
    pub gamma: f64,
    /// The smallest factor one decrease may apply (htsim 0.5).
    pub max_md_jump: f64,
    /// Weight of a new delay sample in the average delay (htsim 0.0125).
    pub delay_ewma: f64,
    /// The largest window in BDPs (spec: 1.5 x link speed x base RTT).
    pub max_wnd_bdp: f64,
    /// Target queueing delay as a fraction of the base RTT; `None`: the spec's default, 0.75
    /// with trimming, 1.0 without.
    pub target_qdelay_rtt: Option<f64>,
    /// Quick adapt on (spec: `disable_quick_adapt` false).
    pub quick_adapt: bool,
    /// Quick adapt acts only when the bytes achieved in its period are below max_wnd >> qa_gate
    /// (htsim 3).
    pub qa_gate: u8,
}

/// The table as written; every key optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NsccTable {
    gamma: Option<f64>,
    max_md_jump: Option<f64>,
    delay_ewma: Option<f64>,
    max_wnd_bdp: Option<f64>,
    target_qdelay_rtt: Option<f64>,
    quick_adapt: Option<bool>,
    qa_gate: Option<u8>,
}

const ALLOWED: &str = "0 < gamma <= 1, 0 < max_md_jump < 1, 0 < delay_ewma <= 1, \
max_wnd_bdp > 0, 0 < target_qdelay_rtt <= 10, qa_gate <= 16";

impl TryFrom<NsccTable> for NsccParams {
    type Error = String;
    fn try_from(t: NsccTable) -> Result<NsccParams, String> {
        let p = NsccParams {
            gamma: t.gamma.unwrap_or(0.8),
            max_md_jump: t.max_md_jump.unwrap_or(0.5),
            delay_ewma: t.delay_ewma.unwrap_or(0.0125),
            max_wnd_bdp: t.max_wnd_bdp.unwrap_or(1.5),
            target_qdelay_rtt: t.target_qdelay_rtt,
            quick_adapt: t.quick_adapt.unwrap_or(true),
            qa_gate: t.qa_gate.unwrap_or(3),
        };
        let bad = |k: &str, v: f64| Err(format!("nscc.{k} = {v}: allowed {ALLOWED}"));
        if !(p.gamma > 0.0 && p.gamma <= 1.0) {
            return bad("gamma", p.gamma);
        }
        if !(p.max_md_jump > 0.0 && p.max_md_jump < 1.0) {
            return bad("max_md_jump", p.max_md_jump);
        }
        if !(p.delay_ewma > 0.0 && p.delay_ewma <= 1.0) {
            return bad("delay_ewma", p.delay_ewma);
        }
        if !(p.max_wnd_bdp > 0.0 && p.max_wnd_bdp.is_finite()) {
            return bad("max_wnd_bdp", p.max_wnd_bdp);
        }
        if let Some(f) = p.target_qdelay_rtt
            && !(f > 0.0 && f <= 10.0)
        {
            return bad("target_qdelay_rtt", f);
        }
        if p.qa_gate > 16 {
            return bad("qa_gate", p.qa_gate as f64);
        }
        Ok(p)
    }
}

impl Default for NsccParams {
    fn default() -> NsccParams {
        NsccTable {
            gamma: None,
            max_md_jump: None,
            delay_ewma: None,
            max_wnd_bdp: None,
            target_qdelay_rtt: None,
            quick_adapt: None,
            qa_gate: None,
        }
        .try_into()
        .expect("the spec's parameters")
    }
}

impl NsccParams {
    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        NsccParams::try_from(NsccTable {
            gamma: Some(self.gamma),
            max_md_jump: Some(self.max_md_jump),
            delay_ewma: Some(self.delay_ewma),
            max_wnd_bdp: Some(self.max_wnd_bdp),
            target_qdelay_rtt: self.target_qdelay_rtt,
            quick_adapt: Some(self.quick_adapt),
            qa_gate: Some(self.qa_gate),
        })
        .map(|_| ())
        .map_err(|e| (e, ALLOWED))
    }

    /// The constants of a sender at `line_bps` over base RTT `base_rtt_ps` with packets of
    /// `mtu` bytes on the wire, `trimming` whether the switches trim (spec 3.6.13.3).
    pub fn derive(&self, line_bps: u64, base_rtt_ps: u64, mtu: u64, trimming: bool) -> NsccDerived {
        let rtt = base_rtt_ps.max(1) as f64;
        let bdp = line_bps as f64 / 8.0 * rtt * 1e-12;
        // The spec's reference network: 100 Gb/s x 12 us (htsim `_reference_network_*`).
        let (ref_rtt, ref_bdp) = (12e6, 100e9 / 8.0 * 12e-6);
        let target = rtt
            * self
                .target_qdelay_rtt
                .unwrap_or(if trimming { 0.75 } else { 1.0 });
        let (a, b) = (bdp / ref_bdp, target / ref_rtt);
        let mtu = mtu.max(1) as f64;
        NsccDerived {
            bdp,
            max_wnd: self.max_wnd_bdp * bdp,
            target_ps: target,
            // qa_threshold = 4 x target_qdelay (spec, with a 5 x BDP tail-drop threshold).
            qa_threshold_ps: 4.0 * target,
            // alpha = 4.0 x scaling_a x scaling_b x MTU / target_qdelay (bytes per ps).
            alpha: 4.0 * a * b * mtu / target,
            // htsim: fi = 5 MTU x a, eta = 0.15 MTU x a, fi_scale = 0.25 a.
            fi: 5.0 * mtu * a,
            eta: 0.15 * mtu * a,
            fi_scale: 0.25 * a,
            // htsim: the adjust period is the base RTT, the byte threshold 8 MTUs.
            adjust_period_ps: rtt,
            adjust_bytes: 8.0 * mtu,
            // htsim's fast-increase test "delay ~= 0": below 1 us.
            near_zero_ps: 1e6,
            mtu,
        }
    }
}

/// NSCC's constants for one sender (spec 3.6.13.3), in bytes and picoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NsccDerived {
    pub bdp: f64,
    pub max_wnd: f64,
    pub target_ps: f64,
    pub qa_threshold_ps: f64,
    pub alpha: f64,
    pub fi: f64,
    pub eta: f64,
    pub fi_scale: f64,
    pub adjust_period_ps: f64,
    pub adjust_bytes: f64,
    pub near_zero_ps: f64,
    pub mtu: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the spec's reference network (100 Gb/s x 12 us, no trimming) the scalings are 1:
    /// alpha = 4 MTU / target, fi = 5 MTU, the window 1.5 BDP.
    #[test]
    fn the_reference_network_has_unit_scalings() {
        let d = NsccParams::default().derive(100_000_000_000, 12_000_000, 4160, false);
        assert!((d.bdp - 150_000.0).abs() < 1e-6);
        assert!((d.max_wnd - 225_000.0).abs() < 1e-6);
        assert_eq!(d.target_ps, 12e6);
        assert!((d.alpha - 4.0 * 4160.0 / 12e6).abs() < 1e-12);
        assert!((d.fi - 5.0 * 4160.0).abs() < 1e-9);
        let t = NsccParams::default().derive(100_000_000_000, 12_000_000, 4160, true);
        assert_eq!(t.target_ps, 9e6, "0.75 x base RTT with trimming");
    }

    #[test]
    fn bad_values_are_refused() {
        let p = NsccParams {
            gamma: 0.0,
            ..NsccParams::default()
        };
        assert!(p.validate().unwrap_err().0.contains("nscc.gamma = 0"));
        let p = NsccParams {
            max_md_jump: 1.0,
            ..NsccParams::default()
        };
        assert!(p.validate().unwrap_err().0.contains("nscc.max_md_jump = 1"));
    }
}
