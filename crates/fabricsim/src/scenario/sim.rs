//! `[sim]`: how `fabricsim sim` runs: the topology file, the fabric's engine parameters (a
//! RoCE-like or IB-like default, with overrides), the seed, an end time and the sample interval.
//!
//! ```toml
//! [sim]
//! topology_file = "ft8.topo.txt"   # ns-3 HPCC format, relative to the scenario file
//! fabric = "roce"                  # roce | ib: SimParams::roce() / SimParams::ib()
//! seed = 1
//! until = "10ms"                   # stop there (partial results)
//! sample_interval = "10us"         # per-port time series
//! # overrides: mtu, transport (go_back_n | selective_repeat), window_packets, timeout_exp,
//! # retry_count, ack_every, switch_buffer, dt_alpha, cut_through, switch_latency, nic_latency,
//! # loss_rate, ber, routing (ecmp | static), qp_rate_limit
//! [sim.congestion]                 # ECN + DCQCN: the keys of a profile's [congestion]
//! ecn = "red"                      # red | step (K = ecn_kmin_bytes) | off
//! ecn_kmin_bytes = 150000
//! ecn_kmax_bytes = 1500000
//! ecn_pmax = 0.1
//! dcqcn = "connectx_fw"            # paper | hpcc_sim_mlx | connectx_fw | off
//! qps_per_connection = 1
//! hash_dest_qp = false             # enhanced ECMP: the destination QP in the hash
//! ```

use std::path::Path;

use serde::Deserialize;

use super::Scenario;
use super::traffic::TrafficSource;
use super::value::{SizeValue, in_range, time};
use crate::error::{InputError, Source};
use crate::io::ns3::{self, Ns3Topology};
use crate::message::MessageDag;
use crate::sim::faults::Faults;
use crate::sim::params::{RoutePolicy, SimParams, Transport};
use crate::traffic;
use crate::units::Time;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SimSection {
    pub topology_file: Option<String>,
    pub fabric: Option<String>,
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
    pub qp_rate_limit: Option<String>,
    /// none | credits | pfc, with `[sim.pfc]` / `[sim.credits]` (see `scenario::flowctl`).
    pub flow_control: Option<String>,
    pub pfc: Option<super::flowctl::PfcSection>,
    pub credits: Option<super::flowctl::CreditsSection>,
    /// ECN marking, DCQCN and ECMP entropy (`sim::cc_profile::Congestion`).
    pub congestion: Option<crate::sim::cc_profile::Congestion>,
}

/// Everything one packet-level run needs.
#[derive(Clone, Debug)]
pub struct SimSetup {
    pub net: Ns3Topology,
    pub params: SimParams,
    pub dag: MessageDag,
    pub faults: Faults,
    pub until: Option<Time>,
}

impl SimSection {
    /// The engine parameters: the fabric's defaults with this section's overrides.
    pub fn params(&self, src: &Source) -> Result<SimParams, InputError> {
        let mut p = match self.fabric.as_deref().unwrap_or("roce") {
            "roce" => SimParams::roce(),
            "ib" => SimParams::ib(),
            other => {
                return Err(InputError::at_key(
                    src,
                    "sim.fabric",
                    format!("\"{other}\""),
                    "unknown fabric",
                    "roce, ib",
                ));
            }
        };
        if let Some(s) = self.seed {
            p.seed = s;
        }
        if let Some(m) = self.mtu {
            p.mtu_bytes = in_range(src, "sim.mtu", m, 256, 9000, "256 to 9000 bytes")?;
        }
        if let Some(t) = &self.transport {
            p.transport = match t.as_str() {
                "go_back_n" => Transport::GoBackN,
                "selective_repeat" => Transport::SelectiveRepeat,
                other => {
                    return Err(InputError::at_key(
                        src,
                        "sim.transport",
                        format!("\"{other}\""),
                        "unknown transport",
                        "go_back_n, selective_repeat",
                    ));
                }
            };
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
            p.switch_buffer_bytes = b.bytes(src, "sim.switch_buffer")?;
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
            p.routing = match r.as_str() {
                "ecmp" => RoutePolicy::EcmpFlowHash,
                "static" => RoutePolicy::DestStatic,
                other => {
                    return Err(InputError::at_key(
                        src,
                        "sim.routing",
                        format!("\"{other}\""),
                        "unknown routing",
                        "ecmp, static",
                    ));
                }
            };
        }
        if let Some(r) = &self.qp_rate_limit {
            let rate = crate::units::parse_rate(r).map_err(|p| {
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
        p.validate().map_err(|(field, problem, allowed)| {
            let key = match field {
                "mtu_bytes" => "sim.mtu",
                "window_packets" => "sim.window_packets",
                "loss_rate" => "sim.loss_rate",
                "dt_alpha" => "sim.dt_alpha",
                "ack_every" => "sim.ack_every",
                "timeout_exp" => "sim.timeout_exp",
                _ => "sim.fabric",
            };
            InputError::at_key(src, key, "(value)", problem, allowed)
        })?;
        Ok(p)
    }
}

/// Reads a file named in the scenario, relative to the scenario's directory.
fn read_rel(base: &Path, src: &Source, key: &str, name: &str) -> Result<Source, InputError> {
    let path = base.join(name);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        InputError::at_key(
            src,
            key,
            format!("\"{name}\""),
            format!("cannot read {}: {e}", path.display()),
            "a readable file, relative to the scenario file",
        )
    })?;
    Ok(Source::new(path.display().to_string(), text))
}

/// Builds a run from a scenario's [sim], [traffic] and [faults]; files are found relative to
/// `base` (the scenario's directory). `seed` (the `--seed` flag) overrides `sim.seed`.
pub fn build(sc: &Scenario, base: &Path, seed: Option<u64>) -> Result<SimSetup, InputError> {
    let src = &sc.source;
    let section = sc.file.sim.clone().unwrap_or_default();
    let mut params = section.params(src)?;
    if let Some(s) = seed {
        params.seed = s;
    }
    let Some(topo_name) = &section.topology_file else {
        return Err(InputError::at_key(
            src,
            "sim",
            "(missing)",
            "no topology: set sim.topology_file",
            "sim.topology_file = \"an ns-3 HPCC topology file\"",
        ));
    };
    let net = ns3::read_topology(&read_rel(base, src, "sim.topology_file", topo_name)?)?;
    // The NICs' line rate: host 0's link.
    let line = net.topo.links[net.topo.ports[net.topo.host_port(crate::topology::HostId(0)).idx()]
        .link
        .idx()]
    .rate;
    if let Some(c) = &section.congestion {
        crate::sim::cc_profile::apply_congestion(c, line, &mut params.cc);
        params
            .cc
            .validate(&params)
            .map_err(|(field, problem, allowed)| {
                let key = match field {
                    "cc.ecn" => "sim.congestion.ecn",
                    "cc.dcqcn" => "sim.congestion.dcqcn",
                    "cc.qps_per_connection" => "sim.congestion.qps_per_connection",
                    _ => "sim.congestion",
                };
                InputError::at_key(src, key, "(see the table)", problem, allowed)
            })?;
    }
    let until = section
        .until
        .as_deref()
        .map(|s| time(src, "sim.until", s))
        .transpose()?;
    let Some(tr) = &sc.file.traffic else {
        return Err(InputError::at_key(
            src,
            "traffic",
            "(missing)",
            "no [traffic] section",
            "a [traffic] section with kind = ...",
        ));
    };
    let dag = match tr.resolve(src)? {
        TrafficSource::Ns3File(name) => {
            ns3::read_flows(&read_rel(base, src, "traffic.flow_file", &name)?, &net)?
        }
        TrafficSource::Generated(t) => {
            let hosts = net.topo.num_hosts() as u32;
            traffic::generate(&t, hosts, line, params.seed).map_err(|p| {
                InputError::at_key(
                    src,
                    "traffic.kind",
                    &tr.kind,
                    p,
                    "traffic that fits the topology",
                )
            })?
        }
    };
    let fsec = sc.file.faults.clone().unwrap_or_default();
    let mut faults = fsec.resolve(src, net.topo.links.len())?;
    faults.faults.extend(super::flowctl::node_faults(
        src,
        &fsec.nic,
        &fsec.route,
        &net,
    )?);
    // The topology file's per-link error rates come first; [faults] entries override them.
    let mut all = net.link_loss.clone();
    all.append(&mut faults.faults);
    faults.faults = all;
    Ok(SimSetup {
        net,
        params,
        dag,
        faults,
        until,
    })
}
