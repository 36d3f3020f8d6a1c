//! `[sim]`: how `fabricsim sim` runs: where the topology comes from, the fabric's engine
//! parameters (with overrides), the seed, an end time and the sample interval.
//!
//! The topology is either the scenario's `[cluster]`/`[fabric]`/`[topology]`/`[layout]` (built and
//! cabled as `fabricsim plan` does, engine parameters from the profile by
//! `sim::params_from_design`), or a topology file (an ns-3 HPCC topology, or an OFED
//! `ibnetdiscover` dump: `io::ibnetdiscover`) with a RoCE-like or IB-like default.
//! The two are exclusive: with `topology_file`, those sections are an error.
//!
//! ```toml
//! [sim]
//! tuned = true                     # without topology_file: the profile's tuned or untuned set
//! # or:
//! topology_file = "ft8.topo.txt"   # ns-3 HPCC or ibnetdiscover, relative to the scenario file
//! fabric = "roce"                  # with topology_file: roce | ib (SimParams::roce() / ib())
//! seed = 1
//! until = "10ms"                   # stop there (partial results)
//! sample_interval = "10us"         # per-port time series
//! # overrides: mtu, transport (go_back_n | go_back_0 | selective_repeat | unordered | rud), window_packets, timeout_exp,
//! # retry_count, ack_every, switch_buffer, dt_alpha, cut_through, switch_latency, nic_latency,
//! # loss_rate, ber, routing (see ROUTINGS), spray_entropies, spray_pick, qp_rate_limit,
//! # llr, llr_replay_buffer, llr_ack_spacing, llr_ack_timer (link-level retry: see scenario::llr)
//! initial_psn = "seeded"          # each QP's first PSN: "zero" (default), "seeded" or a number
//!                                  # 0 to 16777215 (24-bit PSNs wrap: sim::psn)
//! ib_cc_profile = "ib-ndr"         # fabric ib: IB CC with that profile's [ib_cc] settings, on
//! [sim.congestion]                 # ECN + DCQCN: the keys of a profile's [congestion]
//! ecn = "red"                      # red | step (K = ecn_kmin_bytes) | off
//! ecn_kmin_bytes = 150000
//! ecn_kmax_bytes = 1500000
//! ecn_pmax = 0.1
//! dcqcn = "connectx_fw"            # paper | hpcc_sim_mlx | connectx_fw | off
//! qps_per_connection = 1
//! hash_dest_qp = false             # enhanced ECMP: the destination QP in the hash (as
//!                                  # routing = "ecmp_dest_qp")
//! ```

use serde::Deserialize;

use super::value::{SizeValue, in_range, time};
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::Time;
use fabricsim_mech::ParamError;
use fabricsim_mech::cc_algo::CcAlgo;
use fabricsim_mech::params::{RoutePolicy, SimParams, Spray, Transport};
use fabricsim_mech::psn::{InitialPsn, PSN_MASK};
use fabricsim_mech::route::spray;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    pub topology_file: Option<String>,
    pub fabric: Option<String>,
    pub tuned: Option<bool>,
    pub seed: Option<u64>,
    pub until: Option<String>,
    pub sample_interval: Option<String>,
    pub mtu: Option<u32>,
    pub transport: Option<String>,
    pub window_packets: Option<u32>,
    pub timeout_exp: Option<u8>,
    pub retry_count: Option<u8>,
    pub ack_every: Option<u32>,
    pub switch_buffer: Option<SizeValue>,
    pub dt_alpha: Option<f64>,
    pub cut_through: Option<bool>,
    pub switch_latency: Option<String>,
    pub nic_latency: Option<String>,
    pub loss_rate: Option<f64>,
    pub ber: Option<f64>,
    pub routing: Option<String>,
    /// With `routing = "spray"`: entropy values per QP (0: all candidates) and how a packet's
    /// is picked (`sim::route::spray`).
    pub spray_entropies: Option<u16>,
    pub spray_pick: Option<String>,
    pub qp_rate_limit: Option<String>,
    pub initial_psn: Option<PsnSetting>,
    /// IB congestion control with the `[ib_cc]` settings of this built-in profile, switched on.
    pub ib_cc_profile: Option<String>,
    /// none | credits | pfc, with `[sim.pfc]` / `[sim.credits]` (see `scenario::flowctl`).
    pub flow_control: Option<String>,
    pub pfc: Option<super::flowctl::PfcSection>,
    pub credits: Option<super::flowctl::CreditsSection>,
    /// Link-level retry (UEC 1.0 5.1), its replay buffer and ACK coalescing (`scenario::llr`).
    pub llr: Option<bool>,
    pub llr_replay_buffer: Option<SizeValue>,
    pub llr_ack_spacing: Option<SizeValue>,
    pub llr_ack_timer: Option<String>,
    /// ECN marking, DCQCN and ECMP entropy (`sim::cc_profile::Congestion`).
    pub congestion: Option<crate::cc_profile::Congestion>,
}

/// `sim.initial_psn`: a name or a PSN.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum PsnSetting {
    Name(String),
    At(i64),
}

/// `sim.routing` names (as a profile's `[routing] policy`), the engine's policies and whether
/// the switches also hash the destination QP (`cc.hash_dest_qp`): `ecmp_dest_qp` is enhanced
/// ECMP, the ECMP pick on the 5-tuple and the BTH destination QP (`entropy::flow_hashes`; the
/// RoCE-aware hashing of NVIDIA Spectrum and Broadcom switch ASICs).
pub const ROUTINGS: [(&str, RoutePolicy, bool); 5] = [
    ("ecmp", RoutePolicy::EcmpFlowHash, false),
    ("ecmp_dest_qp", RoutePolicy::EcmpFlowHash, true),
    ("dmodk", RoutePolicy::DModK, false),
    ("adaptive", RoutePolicy::Adaptive, false),
    ("spray", RoutePolicy::Spray(Spray::DEFAULT), false),
];

impl SimSection {
    /// With an ns-3 topology file: the defaults of `sim.fabric` (roce or ib).
    pub fn fabric_defaults(&self, src: &Source) -> Result<SimParams, InputError> {
        match self.fabric.as_deref().unwrap_or("roce") {
            "roce" => Ok(SimParams::roce()),
            "ib" => Ok(SimParams::ib()),
            other => Err(InputError::at_key(
                src,
                "sim.fabric",
                format!("\"{other}\""),
                "unknown fabric",
                "roce, ib",
            )),
        }
    }

    /// `p` (the topology file's or the design's parameters) with this section's overrides,
    /// validated.
    pub fn apply(&self, src: &Source, mut p: SimParams) -> Result<SimParams, InputError> {
        if let Some(s) = self.seed {
            p.seed = s;
        }
        if let Some(m) = self.mtu {
            p.mtu_bytes = in_range(src, "sim.mtu", m, 256, 9000, "256 to 9000 bytes")?;
        }
        if let Some(t) = &self.transport {
            p.transport = Transport::parse(t).ok_or_else(|| {
                InputError::at_key(
                    src,
                    "sim.transport",
                    format!("\"{t}\""),
                    "unknown transport",
                    Transport::allowed(),
                )
            })?;
        }
        if let Some(w) = self.window_packets {
            p.window_packets = w;
        }
        if let Some(t) = self.timeout_exp {
            p.timeout_exp = in_range(
                src,
                "sim.timeout_exp",
                t,
                0,
                31,
                "0 to 31 (timeout = 4.096 us x 2^t)",
            )?;
        }
        if let Some(r) = self.retry_count {
            p.retry_count = in_range(src, "sim.retry_count", r, 0, 7, "0 to 7 (IBA 3-bit field)")?;
        }
        if let Some(a) = self.ack_every {
            p.ack_every = in_range(src, "sim.ack_every", a, 1, 1 << 20, "1 or more packets")?;
        }
        if let Some(b) = &self.switch_buffer {
            p.switch_buffer_bytes = b.buffer_bytes(src, "sim.switch_buffer")?;
        }
        if let Some(a) = self.dt_alpha {
            if !(a > 0.0 && a <= 64.0) {
                return Err(InputError::at_key(
                    src,
                    "sim.dt_alpha",
                    a,
                    "out of range",
                    "0 < alpha <= 64",
                ));
            }
            p.dt_alpha = a;
        }
        if let Some(c) = self.cut_through {
            p.cut_through = c;
        }
        if let Some(s) = &self.switch_latency {
            p.switch_latency = time(src, "sim.switch_latency", s)?;
        }
        if let Some(s) = &self.nic_latency {
            p.nic_latency = time(src, "sim.nic_latency", s)?;
        }
        if let Some(l) = self.loss_rate {
            if !(0.0..1.0).contains(&l) {
                return Err(InputError::at_key(
                    src,
                    "sim.loss_rate",
                    l,
                    "out of range",
                    "0 <= p < 1",
                ));
            }
            p.loss_rate = l;
        }
        if let Some(b) = self.ber {
            if !(0.0..1e-2).contains(&b) {
                return Err(InputError::at_key(
                    src,
                    "sim.ber",
                    b,
                    "out of range",
                    "0 <= BER < 0.01",
                ));
            }
            p.ber = b;
        }
        if let Some(r) = &self.routing {
            (p.routing, p.cc.hash_dest_qp) = match ROUTINGS.iter().find(|(name, ..)| name == r) {
                Some(&(_, policy, dest_qp)) => (policy, dest_qp),
                None => {
                    let names: Vec<&str> = ROUTINGS.iter().map(|(n, ..)| *n).collect();
                    return Err(InputError::at_key(
                        src,
                        "sim.routing",
                        format!("\"{r}\""),
                        "unknown routing",
                        format!(
                            "{} (ECMP 5-tuple hash, enhanced ECMP also on the destination QP, \
                             static D-mod-K per tier, \
                             adaptive per packet with D-mod-K fallback, spraying per packet)",
                            names.join(", ")
                        ),
                    ));
                }
            };
        }
        self.apply_spray(src, &mut p)?;
        if let Some(r) = &self.qp_rate_limit {
            let rate = fabricsim_core::units::parse_rate(r).map_err(|p| {
                InputError::at_key(
                    src,
                    "sim.qp_rate_limit",
                    format!("\"{r}\""),
                    p,
                    "a rate such as 25Gbps",
                )
            })?;
            p.qp_rate_limit = Some(rate);
        }
        if let Some(s) = &self.initial_psn {
            let allowed = "\"zero\", \"seeded\" or a PSN 0 to 16777215 (24 bits)";
            p.initial_psn = match s {
                PsnSetting::Name(n) if n == "zero" => InitialPsn::Zero,
                PsnSetting::Name(n) if n == "seeded" => InitialPsn::Seeded,
                PsnSetting::At(v) if (0..=PSN_MASK as i64).contains(v) => InitialPsn::At(*v as u32),
                PsnSetting::Name(n) => {
                    let v = format!("\"{n}\"");
                    return Err(InputError::at_key(
                        src,
                        "sim.initial_psn",
                        v,
                        "unknown",
                        allowed,
                    ));
                }
                PsnSetting::At(v) => {
                    return Err(InputError::at_key(
                        src,
                        "sim.initial_psn",
                        v,
                        "out of range",
                        allowed,
                    ));
                }
            };
        }
        if let Some(s) = &self.sample_interval {
            let t = time(src, "sim.sample_interval", s)?;
            if t == Time::ZERO {
                return Err(InputError::at_key(
                    src,
                    "sim.sample_interval",
                    format!("\"{s}\""),
                    "must be positive",
                    "a duration such as 10us",
                ));
            }
            p.sample_interval = Some(t);
        }
        super::flowctl::apply(
            src,
            self.flow_control.as_deref(),
            self.pfc.as_ref(),
            self.credits.as_ref(),
            &mut p,
        )?;
        super::llr::apply(src, self, &mut p)?;
        if let Some(id) = &self.ib_cc_profile {
            let ib_cc = crate::profile::Profile::builtin(id)
                .ok()
                .and_then(|pr| pr.ib_cc)
                .filter(|_| self.fabric.as_deref() == Some("ib"));
            let Some(i) = ib_cc else {
                return Err(InputError::at_key(
                    src,
                    "sim.ib_cc_profile",
                    format!("\"{id}\""),
                    "not a built-in profile with an [ib_cc] table, or fabric is not ib",
                    "ib-ndr, ib-xdr (with fabric = \"ib\")",
                ));
            };
            let ib = CcAlgo::IbCc(crate::cc_profile::ib_cc_params(&i));
            p.cc.algo.set(ib).map_err(|(problem, allowed)| {
                InputError::at_key(
                    src,
                    "sim.ib_cc_profile",
                    format!("\"{id}\""),
                    problem,
                    allowed,
                )
            })?;
        }
        p.validate().map_err(
            |ParamError {
                 field,
                 problem,
                 allowed,
             }| {
                let (key, value) = match field {
                    "mtu_bytes" => ("sim.mtu", p.mtu_bytes.to_string()),
                    "window_packets" => ("sim.window_packets", p.window_packets.to_string()),
                    "loss_rate" => ("sim.loss_rate", p.loss_rate.to_string()),
                    "dt_alpha" => ("sim.dt_alpha", p.dt_alpha.to_string()),
                    "ack_every" => ("sim.ack_every", p.ack_every.to_string()),
                    "timeout_exp" => ("sim.timeout_exp", p.timeout_exp.to_string()),
                    "llr" => ("sim.llr", "true".to_string()),
                    "routing" => (
                        "sim.routing",
                        format!("\"{}\"", self.routing.as_deref().unwrap_or("(default)")),
                    ),
                    "cc.ibcc" => (
                        "sim.ib_cc_profile",
                        format!("\"{}\"", self.ib_cc_profile.as_deref().unwrap_or("")),
                    ),
                    _ => ("sim.fabric", "(value)".to_string()),
                };
                InputError::at_key(src, key, value, problem, allowed)
            },
        )?;
        Ok(p)
    }
}

impl SimSection {
    /// `spray_entropies` and `spray_pick` over `p`'s spraying; refused with any other routing.
    fn apply_spray(&self, src: &Source, p: &mut SimParams) -> Result<(), InputError> {
        let (key, value) = match (&self.spray_entropies, &self.spray_pick) {
            (None, None) => return Ok(()),
            (Some(k), _) => ("sim.spray_entropies", k.to_string()),
            (None, Some(n)) => ("sim.spray_pick", format!("\"{n}\"")),
        };
        let RoutePolicy::Spray(s) = &mut p.routing else {
            return Err(InputError::at_key(
                src,
                key,
                value,
                "spray settings without spraying",
                "routing = \"spray\" in the same section",
            ));
        };
        if let Some(k) = self.spray_entropies {
            s.entropies = k;
        }
        if let Some(name) = &self.spray_pick {
            s.pick = spray::pick_named(name).ok_or_else(|| {
                InputError::at_key(
                    src,
                    "sim.spray_pick",
                    format!("\"{name}\""),
                    "unknown spray pick",
                    spray::pick_names(),
                )
            })?;
        }
        Ok(())
    }
}
