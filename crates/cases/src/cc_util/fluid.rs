//! The fixed point of the DCQCN fluid model (Zhu et al., "ECN or Delay: Lessons Learnt from
//! Analysis of DCQCN and TIMELY", CoNEXT 2016, §3, eqs. 1-4) for N identical flows sharing one
//! RED-marked bottleneck.
//!
//! With per-packet marking probability p, each flow at R_C packets/s (R_C = C/N at the fixed
//! point), rate-decrease period τ, α period τ', timer T and byte counter B (packets):
//! - a = 1 − (1 − p)^(τ·R_C): the chance of a cut in a period τ;
//! - α* = 1 − (1 − p)^(τ'·R_C) (dα/dt = 0);
//! - I = R_C·p / ((1 − p)^(−T·R_C) − 1) + R_C·p / ((1 − p)^(−B) − 1): the rate of
//!   increase events (a timer period or B packets with no mark);
//! - dR_T/dt = 0: R_T − R_C = R_AI·I·τ / a; dR_C/dt = 0: R_C·α*·a / (2τ) = (R_T − R_C)·I / 2;
//!   together R_C·α*·a² = R_AI·τ²·I², solved for p by bisection (the left side grows with p
//!   faster than the right).
//!
//! The queue then sits where RED marks with p: q* = Kmin + (Kmax − Kmin)·p / Pmax. The model
//! has the paper's rules (Rt = Rc at every cut, additive increase at every increase event);
//! it does not describe the firmware's grid-timed cuts, target clamp rules or F stages.

use fabricsim::sim::dcqcn::DcqcnParams;
use fabricsim::units::BitRate;

/// The fluid model's fixed point: marking probability and queue, or `None` if it would need
/// p > Pmax (the queue above Kmax).
#[derive(Clone, Copy, Debug)]
pub struct FixedPoint {
    pub p: f64,
    pub queue_bytes: f64,
}

/// `flows` flows of `d` through a bottleneck of rate `line` with RED (`kmin`, `kmax`, `pmax`);
/// `wire_bytes` per packet (frame + preamble and gap), which sets the packet rate and B in
/// packets.
pub fn fixed_point(
    d: &DcqcnParams,
    line: BitRate,
    flows: u32,
    wire_bytes: u64,
    (kmin, kmax, pmax): (u64, u64, f64),
) -> Option<FixedPoint> {
    let rc = line.bps() as f64 / (8.0 * wire_bytes as f64) / flows as f64;
    let secs = |t: fabricsim::units::Time| t.0 as f64 * 1e-12;
    let tau = secs(d.rate_decrease_interval.max(d.cnp_interval));
    let tau_alpha = secs(d.alpha_update);
    let timer_pkts = secs(d.rate_increase_timer) * rc;
    let byte_pkts = d.byte_counter_bytes as f64 / wire_bytes as f64;
    let rai = d.rate_ai.bps() as f64 / (8.0 * wire_bytes as f64);
    // Rate of runs of n packets with no mark: R_C·p / ((1 − p)^−n − 1).
    let runs = |p: f64, n: f64| {
        let x = -n * (-p).ln_1p();
        if x > 700.0 { 0.0 } else { rc * p / x.exp_m1() }
    };
    let excess = |p: f64| {
        let a = -(tau * rc * (-p).ln_1p()).exp_m1();
        let alpha = -(tau_alpha * rc * (-p).ln_1p()).exp_m1();
        let mut i = runs(p, timer_pkts);
        if byte_pkts > 0.0 {
            i += runs(p, byte_pkts);
        }
        rc * alpha * a * a - rai * tau * tau * i * i
    };
    let (mut lo, mut hi) = (1e-12f64, pmax.min(0.999));
    if excess(hi) < 0.0 {
        return None;
    }
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if excess(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(FixedPoint {
        p: hi,
        queue_bytes: kmin as f64 + (kmax - kmin) as f64 * hi / pmax,
    })
}
