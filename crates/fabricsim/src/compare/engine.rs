//! The engines as the comparison uses them: engine parameters for a compared fabric, and runs of
//! message DAGs on the engine the scenario's `engine` choice picks for each DAG's size
//! (`engine_choice`: packet, flow, or auto), each result saying which engine ran.

use super::variant::{Tune, Variant};
use crate::error::Error;
use crate::setup::engine_choice::{self, EngineChoice, EngineKind};
use crate::setup::params_from_design::params_from_design;
use crate::workload::run_engine::fabric_packets;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_input::error::ProfileError;
use fabricsim_input::scenario::Design;
use fabricsim_input::scenario::link_phy;
use fabricsim_mech::ecn::EcnMarking;
use fabricsim_mech::results::Counters;
use fabricsim_mech::{Faults, RunResult, SimParams, Status};
use fabricsim_packet::RunOptions;

/// Round trip used to size selective repeat's window (IRN caps outstanding packets at the
/// BDP): 2 x (NIC + 3 switches + NIC) latencies of the profile's parameters plus 2 us of links
/// and serialization, an ESTIMATE that covers a 2-tier fabric.
fn bdp_rtt(p: &SimParams) -> Time {
    Time(2 * (2 * p.nic_latency.0 + 3 * p.switch_latency.0) + 2_000_000)
}

/// Engine parameters for `v` on `design`'s fabric (`sim::params_from_design`: the profile's
/// packet format, the catalog's switch and NIC latencies and buffer) with the run's `seed`;
/// `v`'s pre-FEC BER becomes the RS(544,514) loss of an MTU frame (`mech::fec`), independent
/// of `v.loss_rate` (a frame survives both).
pub fn params(v: &Variant, design: &Design, seed: u64) -> Result<SimParams, Error> {
    let mut p = params_from_design(design, v.tuned)?;
    let kp4 = fabricsim_mech::fec::KP4;
    let lanes = &v.phy.lane_ber;
    let ln_ok = if lanes.is_empty() {
        kp4.codeword_ln_ok(v.ber)
    } else {
        let gbps = design.profile.ports.rate_gbps as u64;
        if !link_phy::lanes_fit(gbps, lanes.len() as u64) || v.ber > 0.0 {
            return Err(Error::Unsupported(format!(
                "lane_ber gives {} lanes (with ber {}): a {gbps}G link takes {}, and no ber",
                lanes.len(),
                v.ber,
                link_phy::lanes_allowed(gbps)
            )));
        }
        kp4.codeword_ln_ok_lanes(lanes)
    };
    let fec = kp4.frame_loss_given(ln_ok, p.mtu_frame_wire_bytes());
    p.loss_rate = v.loss_rate + fec - v.loss_rate * fec;
    if p.loss_rate >= 0.5 {
        return Err(Error::Unsupported(format!(
            "pre-FEC BER {} loses {:.3} of the {}-byte frames after RS(544,514), with loss_rate {}: \
             past the 0.5 the loss model takes",
            v.ber,
            fec,
            p.mtu_frame_wire_bytes(),
            v.loss_rate
        )));
    }
    p.seed = seed;
    p.transport = v.recovery;
    if p.transport.places_out_of_order() {
        let rate = BitRate::gbps(design.profile.ports.rate_gbps as u64);
        p.window_packets = p.bdp_packets(rate, bdp_rtt(&p));
    }
    tune(&mut p, &v.tune, &design.profile.id)?;
    Ok(p)
}

/// Applies `t` over the profile's congestion control; `Err` when the fabric has no mechanism
/// to set or the result is inconsistent (Kmin not below Kmax).
fn tune(p: &mut SimParams, t: &Tune, profile: &str) -> Result<(), Error> {
    if t.ecn_kmin_bytes.is_some() || t.ecn_kmax_bytes.is_some() {
        match &mut p.cc.ecn {
            Some(EcnMarking::Red {
                kmin_bytes,
                kmax_bytes,
                ..
            }) => {
                *kmin_bytes = t.ecn_kmin_bytes.unwrap_or(*kmin_bytes);
                *kmax_bytes = t.ecn_kmax_bytes.unwrap_or(*kmax_bytes);
            }
            Some(EcnMarking::Step { k_bytes }) if t.ecn_kmax_bytes.is_none() => {
                *k_bytes = t.ecn_kmin_bytes.unwrap_or(*k_bytes);
            }
            Some(EcnMarking::Step { .. }) => {
                return Err(Error::Unsupported(format!(
                    "{profile} marks ECN at one step threshold: no Kmax to set"
                )));
            }
            None => {
                return Err(Error::Unsupported(format!(
                    "{profile} has no ECN marking to set (a RoCE profile has)"
                )));
            }
        }
    }
    if t.dcqcn_rai.is_some() || t.dcqcn_rate_increase_timer.is_some() {
        let Some(d) = p.cc.algo.dcqcn_mut() else {
            return Err(Error::Unsupported(format!(
                "{profile} runs without DCQCN here (tuned RoCE profiles run it)"
            )));
        };
        d.rate_ai = t.dcqcn_rai.unwrap_or(d.rate_ai);
        d.rate_increase_timer = t.dcqcn_rate_increase_timer.unwrap_or(d.rate_increase_timer);
    }
    // The profile's parameters as tuned: named as a profile's ("field: problem (allowed: ..)").
    p.validate()
        .map_err(|e| Error::Profile(ProfileError::from(e)))
}

/// The choice as the scenario spells it.
pub fn choice_name(c: EngineChoice) -> &'static str {
    match c {
        EngineChoice::Packet => "packet",
        EngineChoice::Flow => "flow",
        EngineChoice::Auto => "auto",
    }
}

/// Runs `dag` on the engine `choice` picks for its size (the packet engine stops at `until`;
/// the flow engine runs to the end) and checks byte conservation.
pub fn run_dag(
    t: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    choice: EngineChoice,
    until: Option<Time>,
) -> Result<(RunResult, EngineKind), Error> {
    let kind = choice.resolve(fabric_packets(p, dag));
    let opts = RunOptions {
        until: until.filter(|_| kind == EngineKind::Packet),
        progress: None,
    };
    let r = engine_choice::run(kind, t, p, dag, &Faults::default(), opts)?;
    r.check_conservation()
        .map_err(|e| Error::Run(e.to_string()))?;
    Ok((r, kind))
}

/// What [`makespan`] measured of one run.
pub struct Span {
    /// The last message's sender completion.
    pub time: Time,
    pub counters: Counters,
    pub kind: EngineKind,
    /// The run drew from its seed's random streams (`SimInfo::drew_random`).
    pub drew_random: bool,
}

/// Completion time of `dag` (the last message's sender completion), the run's counters and the
/// engine that ran it; `Err` when the run does not complete (a QP out of retries, a parameter
/// out of range).
pub fn makespan(
    t: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    choice: EngineChoice,
) -> Result<Span, Error> {
    let (r, kind) = run_dag(t, p, dag, choice, None)?;
    if r.sim.status != Status::Complete {
        return Err(Error::Run(format!(
            "{} of {} messages did not complete ({:?})",
            r.summary.messages_total - r.summary.messages_completed,
            r.summary.messages_total,
            r.sim.status
        )));
    }
    let end = r
        .messages
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    Ok(Span {
        time: Time(end),
        drew_random: r.sim.drew_random,
        counters: r.counters,
        kind,
    })
}
