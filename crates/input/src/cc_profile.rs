//! The congestion-control and routing sub-tables of a fabric profile (`data/profiles/*.toml`)
//! and their mapping into `SimParams`: the one place where profile data becomes `CcParams` and
//! the routing policy.
//!
//! ```toml
//! [congestion]                # RoCE: ECN at switch egress + DCQCN at the NICs
//! ecn = "red"                 # red | step | off
//! ecn_kmin_bytes = 150000
//! ecn_kmax_bytes = 1500000    # (step: ecn_kmin_bytes is K)
//! ecn_pmax = 1.0
//! base_rtt_ns = 6000          # with ecn_kmin_bdp / ecn_kmax_bdp: thresholds as fractions of
//! ecn_kmin_bdp = 0.2          # the BDP, line rate x base RTT (UEC 1.0 3.6.17); they replace
//! ecn_kmax_bdp = 0.8          # ecn_kmin_bytes / ecn_kmax_bytes
//! trim_bdp = 1.0              # packet trimming past this x the BDP (absent: none)
//! dcqcn = "connectx_fw"       # paper | hpcc_sim_mlx | connectx_fw | off
//! [congestion.hpcc]           # HPCC instead (dcqcn = "off"): eta, max_stage, w_ai_bytes
//! [congestion.nscc]           # UEC NSCC instead (dcqcn = "off"): gamma, max_md_jump,
//!                             # delay_ewma, max_wnd_bdp, target_qdelay_rtt, quick_adapt, qa_gate
//! [congestion.rccc]           # UEC RCCC (alone, or with [congestion.nscc]: both):
//!                             # credit_bdp, unscheduled_packets
//! qps_per_connection = 1
//! hash_dest_qp = false
//! [congestion_untuned]        # same keys: the documented untuned variant
//! [routing]
//! policy = "adaptive"         # ecmp | dmodk | adaptive | spray
//! ar_select = "credits"       # adaptive: credits (most VL credits, by link length) | queue
//! ar_threshold_bytes = 8192
//! reorder_window_packets = 512  # adaptive, spray: out-of-order window of the receiver
//! spray_entropies = 0         # spray: entropy values per QP (0: all candidates)
//! spray_pick = "round_robin"  # spray: round_robin | random | reps (recycled entropies)
//! [ib_cc]                     # InfiniBand congestion control (IBA annex A10)
//! enabled = false
//! threshold_bytes = 64000
//! marking_rate = 0
//! ccti_increase = 1
//! ccti_limit = 127
//! ccti_timer_us = 51
//! cct = "mellanox_default"
//! [vl_arbitration]            # IBA Vol. 1 7.6.9, one entry per data VL
//! high_weights_64b = [4, 0, 0, 0]
//! low_weights_64b = [0, 4, 4, 4]
//! high_limit_4kb = 0
//! ```

use serde::Deserialize;

use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::cc::{ArSelect, CcParams};
use fabricsim_mech::cc_algo::CcAlgo;
use fabricsim_mech::dcqcn::{DcqcnParams, DcqcnSet};
use fabricsim_mech::ecn::EcnMarking;
use fabricsim_mech::error::ParamError;
use fabricsim_mech::hpcc::HpccParams;
use fabricsim_mech::ibcc::{Cct, IbCcParams};
use fabricsim_mech::nscc::NsccParams;
use fabricsim_mech::params::{FlowControl, MAX_TC, RoutePolicy, Scheduling, SimParams, Transport};
use fabricsim_mech::rccc::RcccParams;
use fabricsim_mech::route::spray::{Spray, SprayPick};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMode {
    Red,
    Step,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DcqcnChoice {
    Paper,
    HpccSimMlx,
    ConnectxFw,
    Off,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoutingChoice {
    Ecmp,
    /// Enhanced ECMP: the 5-tuple and the destination QP hashed (`cc.hash_dest_qp`).
    EcmpDestQp,
    Dmodk,
    Adaptive,
    Spray,
}

/// `[routing] spray_pick` (`sim::route::spray::SprayPick`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SprayPickChoice {
    #[default]
    RoundRobin,
    Random,
    Reps,
}

/// `[routing] ar_select`: what adaptive routing ranks the allowed ports by (`CcParams::ar_select`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArSelectChoice {
    /// The most credits of the packet's VL, normalized by link length, less the port's queue
    /// (`ArSelect::Credits`).
    Credits,
    /// The fewest bytes queued at the egress (`ArSelect::Queue`); the default.
    #[default]
    Queue,
}

/// `[congestion]` / `[congestion_untuned]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Congestion {
    pub ecn: EcnMode,
    #[serde(default)]
    pub ecn_kmin_bytes: u64,
    #[serde(default)]
    pub ecn_kmax_bytes: u64,
    #[serde(default)]
    pub ecn_pmax: f64,
    /// The base round trip the BDP fractions below refer to (0: none).
    #[serde(default)]
    pub base_rtt_ns: u64,
    /// ECN thresholds as fractions of the BDP, line rate x `base_rtt_ns` (UEC 1.0 3.6.17: the
    /// switch configured from the plane BDP); when set they replace the byte thresholds.
    #[serde(default)]
    pub ecn_kmin_bdp: Option<f64>,
    #[serde(default)]
    pub ecn_kmax_bdp: Option<f64>,
    /// Packet trimming at this fraction of the BDP of a switch queue (UEC 1.0 3.6.17: 1 x BDP);
    /// absent: no trimming.
    #[serde(default)]
    pub trim_bdp: Option<f64>,
    pub dcqcn: DcqcnChoice,
    /// `[congestion.hpcc]`: HPCC at the NICs (`sim::congestion::hpcc`), with `dcqcn = "off"`.
    #[serde(default)]
    pub hpcc: Option<HpccParams>,
    /// `[congestion.dcqcn_params]`: DCQCN parameters by their ConnectX names over the set's.
    #[serde(default)]
    pub dcqcn_params: Option<crate::profile_dcqcn::DcqcnKeys>,
    /// `[congestion.nscc]`: UEC NSCC at the NICs (`sim::congestion::nscc`), with `dcqcn = "off"`.
    #[serde(default)]
    pub nscc: Option<NsccParams>,
    /// `[congestion.rccc]`: UEC RCCC at the receivers (`sim::congestion::rccc`), alone or with
    /// `[congestion.nscc]` (both: the sender keeps the smaller window).
    #[serde(default)]
    pub rccc: Option<RcccParams>,
    pub qps_per_connection: u16,
    #[serde(default)]
    pub hash_dest_qp: bool,
}

/// `[routing]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Routing {
    pub policy: RoutingChoice,
    /// Messages below this stay on the static route under adaptive routing (0: none).
    #[serde(default)]
    pub ar_threshold_bytes: u64,
    /// Adaptive routing's rule (absent: queue).
    #[serde(default)]
    pub ar_select: ArSelectChoice,
    /// Adaptive routing: the receiver accepts out-of-order packets within this many PSNs
    /// (the transport becomes the selective-repeat receiver path).
    #[serde(default)]
    pub reorder_window_packets: u32,
    /// Spraying: entropy values per QP (0: all of a switch's candidates).
    #[serde(default)]
    pub spray_entropies: u16,
    /// Spraying: how a packet's entropy is picked (absent: round robin).
    #[serde(default)]
    pub spray_pick: SprayPickChoice,
}

/// `[transport]`: the loss recovery a profile's NICs run (UEC: `rud`, UEC 1.0 3.5.7) and its
/// retransmission timeout, 4.096 us x 2^`timeout_exp`; it replaces the one its routing implies.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportTable {
    pub recovery: String,
    pub timeout_exp: u8,
}

impl TransportTable {
    /// Sets `p.transport` and `p.timeout_exp`; the error names the key.
    pub fn apply(&self, p: &mut SimParams) -> Result<(), ParamError> {
        p.transport = Transport::parse(&self.recovery).ok_or_else(|| {
            ParamError::new(
                "transport.recovery",
                format!("unknown `{}`", self.recovery),
                Transport::allowed(),
            )
        })?;
        if self.timeout_exp > 31 {
            return Err(ParamError::new(
                "transport.timeout_exp",
                format!("{} out of range", self.timeout_exp),
                "0 to 31 (timeout = 4.096 us x 2^t)",
            ));
        }
        p.timeout_exp = self.timeout_exp;
        Ok(())
    }
}

/// `[ib_cc]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IbCc {
    pub enabled: bool,
    pub threshold_bytes: u64,
    pub marking_rate: u32,
    pub ccti_increase: u16,
    pub ccti_limit: u16,
    pub ccti_timer_us: u64,
    pub cct: CctChoice,
}

/// `[ib_cc] cct`: the congestion control table the manager loads (`sim::ibcc::Cct`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CctChoice {
    MellanoxDefault,
}

/// `[vl_arbitration]`: per data VL its weight in the high- or the low-priority table (in
/// 64-byte units, exactly one of the two non-zero), and Limit_of_High_Priority in 4 KB units
/// (255: unlimited), IBA Vol. 1 7.6.9.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VlArbitration {
    pub high_weights_64b: Vec<u32>,
    pub low_weights_64b: Vec<u32>,
    pub high_limit_4kb: u8,
}

impl VlArbitration {
    /// The scheduling discipline for `vls` data VLs; the error names the profile key.
    pub fn scheduling(&self, vls: usize) -> Result<Scheduling, ParamError> {
        let (h, l) = (&self.high_weights_64b, &self.low_weights_64b);
        if h.len() != vls || l.len() != vls {
            return Err(ParamError::new(
                "vl_arbitration.high_weights_64b",
                format!(
                    "{} high and {} low weights for {vls} data VLs",
                    h.len(),
                    l.len()
                ),
                "one weight per data VL in each table",
            ));
        }
        let mut high = 0u8;
        let mut weight_bytes = [0u32; MAX_TC];
        for vl in 0..vls {
            if (h[vl] == 0) == (l[vl] == 0) {
                return Err(ParamError::new(
                    "vl_arbitration.low_weights_64b",
                    format!("VL {vl}: high weight {}, low weight {}", h[vl], l[vl]),
                    "a non-zero weight in exactly one of the two tables",
                ));
            }
            if h[vl] > 0 {
                high |= 1 << vl;
            }
            weight_bytes[vl] = h[vl].max(l[vl]) * 64;
        }
        let high_limit_bytes = match self.high_limit_4kb {
            255 => u32::MAX,
            n => n as u32 * 4096,
        };
        Ok(Scheduling::VlArb {
            high,
            weight_bytes,
            high_limit_bytes,
        })
    }
}

/// IB CC parameters from an `[ib_cc]` table (whether or not it is enabled there).
pub fn ib_cc_params(i: &IbCc) -> IbCcParams {
    IbCcParams {
        threshold_bytes: i.threshold_bytes,
        marking_rate: i.marking_rate,
        victim_mask: false,
        ccti_increase: i.ccti_increase,
        ccti_limit: i.ccti_limit,
        ccti_min: 0,
        ccti_timer: Time::from_us(i.ccti_timer_us),
        cct: match i.cct {
            CctChoice::MellanoxDefault => Cct::mellanox_default(),
        },
    }
}

/// Which congestion settings of a profile to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tuning {
    /// `[congestion]`: the profile as it should be deployed.
    Tuned,
    /// `[congestion_untuned]`: the documented untuned variant (`[congestion]` if there is none).
    Untuned,
}

/// The congestion-control and routing sections of one profile.
#[derive(Clone, Copy, Debug)]
pub struct CcSections<'a> {
    pub congestion: Option<&'a Congestion>,
    pub congestion_untuned: Option<&'a Congestion>,
    pub routing: Option<&'a Routing>,
    pub ib_cc: Option<&'a IbCc>,
    pub vl_arbitration: Option<&'a VlArbitration>,
}

/// Sets `p.cc` and `p.routing` from a profile's sections for NICs of `line` rate; the error names
/// the profile key at fault.
pub fn apply(
    s: CcSections,
    tuning: Tuning,
    line: BitRate,
    p: &mut SimParams,
) -> Result<(), ParamError> {
    let mut cc = CcParams::default();
    // A profile without an untuned variant of its congestion control (InfiniBand: its untuned
    // variant is in link-level flow control only) uses `[congestion]` for both.
    let cong = match tuning {
        Tuning::Untuned if s.congestion_untuned.is_some() => s.congestion_untuned,
        _ => s.congestion,
    };
    if let Some(c) = cong {
        apply_congestion(c, line, &mut cc)?;
    }
    if let Some(r) = s.routing {
        p.routing = match r.policy {
            RoutingChoice::Ecmp | RoutingChoice::EcmpDestQp => RoutePolicy::EcmpFlowHash,
            RoutingChoice::Dmodk => RoutePolicy::DModK,
            RoutingChoice::Adaptive => RoutePolicy::Adaptive,
            RoutingChoice::Spray => RoutePolicy::Spray(Spray {
                entropies: r.spray_entropies,
                pick: match r.spray_pick {
                    SprayPickChoice::RoundRobin => SprayPick::RoundRobin,
                    SprayPickChoice::Random => SprayPick::Random,
                    SprayPickChoice::Reps => SprayPick::Reps,
                },
            }),
        };
        cc.hash_dest_qp |= r.policy == RoutingChoice::EcmpDestQp;
        cc.ar_threshold_bytes = r.ar_threshold_bytes;
        cc.ar_select = match r.ar_select {
            ArSelectChoice::Credits => ArSelect::Credits,
            ArSelectChoice::Queue => ArSelect::Queue,
        };
        if cc.ar_select == ArSelect::Credits && !matches!(p.flow_control, FlowControl::Credits(_)) {
            return Err(ParamError::new(
                "routing.ar_select",
                "\"credits\" without credit-based flow control",
                "\"queue\", or flow_control kind \"credits\"",
            ));
        }
        if p.routing.reorders() {
            if r.reorder_window_packets == 0 {
                return Err(ParamError::new(
                    "routing.reorder_window_packets",
                    format!(
                        "{} routing without an out-of-order window",
                        p.routing.name()
                    ),
                    "1 or more packets",
                ));
            }
            // Adaptive routing's receiver is selective repeat's, unordered under it
            // (`Transport::under`); spraying's is named so.
            p.transport = if p.routing == RoutePolicy::Adaptive {
                Transport::SelectiveRepeat
            } else {
                Transport::Unordered
            };
            p.window_packets = r.reorder_window_packets;
        }
    }
    if let Some(i) = s.ib_cc
        && i.enabled
    {
        cc.algo
            .set(CcAlgo::IbCc(ib_cc_params(i)))
            .map_err(|(prob, allowed)| ParamError::new("cc.ibcc", prob, allowed))?;
    }
    if let Some(v) = s.vl_arbitration {
        p.scheduling = v.scheduling(p.traffic_classes as usize)?;
    }
    p.cc = cc;
    p.cc.validate(p)
}

/// Sets the marking, congestion-control and entropy fields of `cc` from one `[congestion]`
/// table for NICs of `line` rate (a profile's, or a scenario's `[sim.congestion]`);
/// `Err` names the field, the problem and what is allowed.
pub fn apply_congestion(
    c: &Congestion,
    line: BitRate,
    cc: &mut CcParams,
) -> Result<(), ParamError> {
    let (kmin, kmax) = (
        bdp_bytes(c, "congestion.ecn_kmin_bdp", c.ecn_kmin_bdp, line)?.unwrap_or(c.ecn_kmin_bytes),
        bdp_bytes(c, "congestion.ecn_kmax_bdp", c.ecn_kmax_bdp, line)?.unwrap_or(c.ecn_kmax_bytes),
    );
    cc.ecn = match c.ecn {
        EcnMode::Red => Some(EcnMarking::Red {
            kmin_bytes: kmin,
            kmax_bytes: kmax,
            pmax: c.ecn_pmax,
        }),
        EcnMode::Step => Some(EcnMarking::Step { k_bytes: kmin }),
        EcnMode::Off => None,
    };
    let set = match c.dcqcn {
        DcqcnChoice::Paper => Some(DcqcnSet::Paper),
        DcqcnChoice::HpccSimMlx => Some(DcqcnSet::HpccMlx),
        DcqcnChoice::ConnectxFw => Some(DcqcnSet::ConnectxFw),
        DcqcnChoice::Off => None,
    };
    // The table owns DCQCN, HPCC, NSCC and RCCC (IB CC is `[ib_cc]`'s).
    if matches!(
        cc.algo,
        CcAlgo::Dcqcn(_)
            | CcAlgo::Hpcc(_)
            | CcAlgo::Nscc(_)
            | CcAlgo::Rccc(_)
            | CcAlgo::NsccRccc(..)
    ) {
        cc.algo = CcAlgo::None;
    }
    let dcqcn = match (set, &c.dcqcn_params) {
        (Some(s), keys) => {
            let mut d = DcqcnParams::set(s, line);
            if let Some(k) = keys {
                k.apply(&mut d)?;
            }
            Some(d)
        }
        (None, Some(_)) => {
            return Err(ParamError::new(
                "congestion.dcqcn_params",
                "set with dcqcn = \"off\"",
                "a DCQCN set (paper, hpcc_sim_mlx, connectx_fw) for its parameters",
            ));
        }
        (None, None) => None,
    };
    let algos = [
        dcqcn.map(|d| ("cc.dcqcn", CcAlgo::Dcqcn(d))),
        c.hpcc.map(|h| ("cc.hpcc", CcAlgo::Hpcc(h))),
        match (c.nscc, c.rccc) {
            (Some(n), Some(r)) => Some(("cc.rccc", CcAlgo::NsccRccc(n, r))),
            (Some(n), None) => Some(("cc.nscc", CcAlgo::Nscc(n))),
            (None, Some(r)) => Some(("cc.rccc", CcAlgo::Rccc(r))),
            (None, None) => None,
        },
    ];
    for (field, a) in algos.into_iter().flatten() {
        cc.algo
            .set(a)
            .map_err(|(prob, allowed)| ParamError::new(field, prob, allowed))?;
    }
    cc.qps_per_connection = c.qps_per_connection;
    cc.hash_dest_qp = c.hash_dest_qp;
    cc.trim_bytes = bdp_bytes(c, "congestion.trim_bdp", c.trim_bdp, line)?.unwrap_or(0);
    Ok(())
}

/// Bytes of `fraction` x the BDP, `line` x `c.base_rtt_ns` (UEC 1.0 3.6.17); `None` when the
/// fraction is absent; an error names the key when the fraction or the base RTT is unusable.
fn bdp_bytes(
    c: &Congestion,
    key: &'static str,
    fraction: Option<f64>,
    line: BitRate,
) -> Result<Option<u64>, ParamError> {
    let Some(f) = fraction else {
        return Ok(None);
    };
    if !(f.is_finite() && f > 0.0 && f <= 100.0) {
        return Err(ParamError::new(
            key,
            format!("{f} is not a fraction of the BDP"),
            "a number in (0, 100]",
        ));
    }
    if c.base_rtt_ns == 0 || c.base_rtt_ns > 1_000_000_000 {
        return Err(ParamError::new(
            "congestion.base_rtt_ns",
            format!("{} with {key}", c.base_rtt_ns),
            "a base round trip of 1 ns to 1 s",
        ));
    }
    let bdp = line.bps() as f64 / 8.0 * c.base_rtt_ns as f64 * 1e-9;
    Ok(Some((f * bdp).round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// UEC's ECN band is 0.2-0.8 x the BDP (line rate x base RTT, spec 3.6.17): at 400G and
    /// 6 us, BDP = 50 GB/s x 6 us = 300 KB, so 60 KB and 240 KB; at 800G twice that.
    #[test]
    fn uec_ecn_thresholds_are_fractions_of_the_bdp() {
        for (id, bdp) in [("uec-400g", 300_000), ("uec-800g", 600_000)] {
            let p = mapped(id, Tuning::Tuned);
            let Some(EcnMarking::Red {
                kmin_bytes,
                kmax_bytes,
                ..
            }) = p.cc.ecn
            else {
                panic!("{id}: RED expected");
            };
            assert_eq!((kmin_bytes, kmax_bytes), (bdp / 5, bdp * 4 / 5), "{id}");
        }
    }

    /// The profile mapped through `profile_fc::from_profile` (flow control, then this module).
    fn mapped(id: &str, tuning: Tuning) -> SimParams {
        let prof = Profile::builtin(id).unwrap();
        let mut p = crate::profile_fc::from_profile(&prof, tuning == Tuning::Tuned).unwrap();
        // Flow control differs between the variants; compare congestion settings only.
        p.flow_control = fabricsim_mech::params::FlowControl::None;
        p
    }

    /// `[congestion.rccc]` selects RCCC: with `[congestion.nscc]` both (the smaller window),
    /// alone RCCC only; a bad value names its key.
    #[test]
    fn an_rccc_table_selects_rccc_alone_or_with_nscc() {
        let base = include_str!("../../../data/profiles/uec-400g.toml");
        let parse = |text: &str| {
            Profile::parse(&fabricsim_core::error::Source::new("uec-rccc.toml", text)).and_then(
                |p| crate::profile_fc::from_profile(&p, true).map_err(|e| panic!("{e:?}")),
            )
        };
        let rccc = "[congestion.rccc]\ncredit_bdp = 1.5\n";
        // The table's header line (a comment above names it too).
        let header = "\n[congestion.nscc]\n";
        let with_both = base.replacen(header, &format!("\n{rccc}{}", &header[1..]), 1);
        let r = RcccParams {
            credit_bdp: 1.5,
            ..RcccParams::default()
        };
        let p = parse(&with_both).unwrap();
        assert_eq!(p.cc.algo, CcAlgo::NsccRccc(NsccParams::default(), r));
        let nscc_at = base.find(header).unwrap() + 1;
        let nscc_end = base[nscc_at..].find("\n\n").unwrap() + nscc_at;
        let alone = format!("{}{rccc}{}", &base[..nscc_at], &base[nscc_end..]);
        assert_eq!(parse(&alone).unwrap().cc.algo, CcAlgo::Rccc(r));
        let bad = with_both.replacen("credit_bdp = 1.5", "credit_bdp = 0.0", 1);
        let e = parse(&bad).unwrap_err();
        assert!(e.to_string().contains("rccc.credit_bdp = 0"), "{e}");
    }

    /// `[routing] policy = "spray"` maps to the engine's spraying with the unordered receiver;
    /// a policy that is not one gives the file, line, key and the allowed names.
    #[test]
    fn spray_is_a_routing_policy_and_a_bad_policy_is_named() {
        let base = include_str!("../../../data/profiles/roce-400g.toml");
        let line = base
            .lines()
            .position(|l| l.starts_with("policy = "))
            .unwrap()
            + 1;
        let with = |policy: &str| {
            let text = base.replacen(
                "policy = \"ecmp\"",
                &format!(
                    "policy = \"{policy}\"\nreorder_window_packets = 128\nspray_pick = \"random\""
                ),
                1,
            );
            Profile::parse(&fabricsim_core::error::Source::new(
                "roce-spray.toml",
                &text,
            ))
        };
        let p = crate::profile_fc::from_profile(&with("spray").unwrap(), true).unwrap();
        assert_eq!(
            (p.routing, p.transport, p.window_packets),
            (
                RoutePolicy::Spray(Spray {
                    entropies: 0,
                    pick: SprayPick::Random
                }),
                Transport::Unordered,
                128
            )
        );
        let e = with("sprinkle").unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            ("roce-spray.toml", Some(line), "routing.policy")
        );
        assert!(e.allowed.contains("spray"), "{e}");
    }

    /// Tuned RoCE: DCQCN on with ECN Kmax below the PFC XOFF point (dynamic 1/8 of the free
    /// buffer, `PfcParams::tuned`); untuned: DCQCN off, Kmin above it.
    #[test]
    fn roce_profiles_map_tuned_and_untuned() {
        for id in ["roce-400g", "roce-800g"] {
            let p = mapped(id, Tuning::Tuned);
            // Dynamic XOFF: at most 1/8 of the (empty) buffer (`PfcParams::tuned`).
            let xoff_max = p.switch_buffer_bytes / 8;
            assert!(p.cc.algo.dcqcn().is_some(), "{id}");
            let Some(EcnMarking::Red { kmax_bytes, .. }) = p.cc.ecn else {
                panic!("{id}: RED expected")
            };
            assert!(kmax_bytes < xoff_max, "{id}");
            assert_eq!(p.routing, RoutePolicy::EcmpFlowHash);
            let u = mapped(id, Tuning::Untuned);
            assert!(u.cc.algo.dcqcn().is_none(), "{id}");
            let Some(EcnMarking::Red { kmin_bytes, .. }) = u.cc.ecn else {
                panic!("{id}: RED expected")
            };
            assert!(kmin_bytes > xoff_max, "{id}");
        }
    }

    /// roce-400g-hpcc is roce-400g with HPCC (η 0.95, maxStage 5, the ns-3 W_AI) in place of
    /// ECN and DCQCN; its untuned variant is roce-400g's.
    #[test]
    fn the_hpcc_profile_is_roce_400g_with_hpcc_for_dcqcn() {
        use fabricsim_mech::hpcc::HpccParams;
        let (h, d) = (
            mapped("roce-400g-hpcc", Tuning::Tuned),
            mapped("roce-400g", Tuning::Tuned),
        );
        let want = HpccParams {
            eta: 0.95,
            max_stage: 5,
            w_ai_bytes: None,
        };
        assert_eq!((&h.cc.algo, h.cc.ecn), (&CcAlgo::Hpcc(want), None));
        let mut same = h.clone();
        (same.cc.algo, same.cc.ecn) = (d.cc.algo.clone(), d.cc.ecn);
        assert_eq!(same, d);
        assert_eq!(
            mapped("roce-400g-hpcc", Tuning::Untuned),
            mapped("roce-400g", Tuning::Untuned)
        );
    }

    #[test]
    fn ib_profiles_map_adaptive_routing_and_ib_cc_off() {
        for id in ["ib-ndr", "ib-xdr"] {
            let p = mapped(id, Tuning::Tuned);
            assert_eq!(p.routing, RoutePolicy::Adaptive, "{id}");
            assert_eq!(p.cc.ar_threshold_bytes, 8192);
            assert_eq!(p.cc.ar_select, ArSelect::Credits, "{id}: US 10,200,294 B2");
            assert_eq!(p.transport, Transport::SelectiveRepeat);
            assert!(p.cc.algo == CcAlgo::None, "{id}");
            // OpenSM's default QoS tables (osm_base.h): VL0 high, VL1-3 low, weight 4 x 64 B,
            // Limit_of_High_Priority 0.
            let mut w = [0u32; MAX_TC];
            w[..4].fill(256);
            assert_eq!(
                p.scheduling,
                Scheduling::VlArb {
                    high: 0b0001,
                    weight_bytes: w,
                    high_limit_bytes: 0
                },
                "{id}"
            );
            assert_eq!(
                mapped(id, Tuning::Untuned),
                p,
                "{id}: one congestion setting"
            );
        }
    }

    /// `[routing] ar_select`: a value outside the two rules is refused with the file, key, value
    /// and the allowed values; "credits" on links without credits is refused; absent, the queue.
    #[test]
    fn ar_select_key_parses_and_refuses_bad_input() {
        use fabricsim_core::error::Source;
        let text = include_str!("../../../data/profiles/ib-ndr.toml");
        let with = |v: &str| text.replace("ar_select = \"credits\"", v);
        let e =
            Profile::parse(&Source::new("my.toml", with("ar_select = \"fastest\""))).unwrap_err();
        let msg = e.to_string();
        for part in [
            "my.toml",
            "routing.ar_select",
            "fastest",
            "credits",
            "queue",
        ] {
            assert!(msg.contains(part), "{part} missing from: {msg}");
        }
        let queue = Profile::parse(&Source::new("q.toml", with("ar_select = \"queue\""))).unwrap();
        let p = crate::profile_fc::from_profile(&queue, true).unwrap();
        assert_eq!(p.cc.ar_select, ArSelect::Queue);
        let absent = Profile::parse(&Source::new("a.toml", with(""))).unwrap();
        let p = crate::profile_fc::from_profile(&absent, true).unwrap();
        assert_eq!(p.cc.ar_select, ArSelect::Queue);
        let lossy = text.replace("kind = \"credits\"", "kind = \"none\"");
        let lossy = Profile::parse(&Source::new("l.toml", lossy)).unwrap();
        let e = crate::profile_fc::from_profile(&lossy, true).unwrap_err();
        assert_eq!(e.key, "routing.ar_select", "{e}");
    }

    /// The DCTCP-style step option and the enhanced-ECMP key of a `[congestion]` table reach
    /// `CcParams`; a step without its K is refused.
    #[test]
    fn step_marking_and_dest_qp_hash_from_profile_keys() {
        let c: Congestion = toml::from_str(
            "ecn = \"step\"\necn_kmin_bytes = 300000\ndcqcn = \"off\"\n\
             qps_per_connection = 4\nhash_dest_qp = true",
        )
        .unwrap();
        let s = CcSections {
            congestion: Some(&c),
            congestion_untuned: None,
            routing: None,
            ib_cc: None,
            vl_arbitration: None,
        };
        let mut p = SimParams::roce();
        apply(s, Tuning::Tuned, BitRate::gbps(100), &mut p).unwrap();
        assert_eq!(p.cc.ecn, Some(EcnMarking::Step { k_bytes: 300_000 }));
        assert!(p.cc.hash_dest_qp && p.cc.algo.dcqcn().is_none());
        assert_eq!(p.cc.qps_per_connection, 4);
        // The routing option `ecmp_dest_qp` (enhanced ECMP) is ECMP with the dest-QP hash.
        let plain = Congestion {
            hash_dest_qp: false,
            ..c.clone()
        };
        for (policy, dest_qp) in [("ecmp", false), ("ecmp_dest_qp", true)] {
            let r: Routing = toml::from_str(&format!("policy = \"{policy}\"")).unwrap();
            let s = CcSections {
                congestion: Some(&plain),
                routing: Some(&r),
                ..s
            };
            let mut p = SimParams::roce();
            apply(s, Tuning::Tuned, BitRate::gbps(100), &mut p).unwrap();
            assert_eq!(
                (p.routing, p.cc.hash_dest_qp),
                (RoutePolicy::EcmpFlowHash, dest_qp),
                "{policy}"
            );
        }
        let no_k = Congestion {
            ecn_kmin_bytes: 0,
            ..c.clone()
        };
        let s = CcSections {
            congestion: Some(&no_k),
            ..s
        };
        let e = apply(s, Tuning::Tuned, BitRate::gbps(100), &mut p).unwrap_err();
        assert_eq!(e.field, "cc.ecn");
    }
}
