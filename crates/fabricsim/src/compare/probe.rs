//! Small-message latency and per-NIC bandwidth measured on the packet engine (issue 8, item 7),
//! with the compared fabric's engine parameters on the cluster's own topology:
//! - a ping-pong of 8-byte messages between two hosts whose path crosses 1, 3 or 5 switches
//!   (perftest `ib_send_lat` reports half the round trip; here the ping's and the pong's
//!   one-way times, sender post to receiver holding the message, are averaged);
//! - one long flow between two hosts across the spine: its payload over its completion time.
//!
//! A hop count the cluster's topology does not have (5 switches in a 2-tier fabric) is measured
//! on the smallest 3-tier build of the same servers and switch that has two pods (the 2-tier
//! limit plus one server), and said so.

use serde::Serialize;

use super::engine::params;
use super::engine::run_dag;
use super::variant::Variant;
use crate::error::Error;
use crate::setup::engine_choice::EngineChoice;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{HostId, Topology};
use fabricsim_core::units::Time;
use fabricsim_input::scenario::{Design, Scenario};
use fabricsim_mech::SimParams;

/// perftest-style small message (ib_send_lat's default is 2 B; 8 B is a typical latency point).
pub const PING_BYTES: u64 = 8;
/// Long enough that the first packet's latency is under 1% of the flow time at 400G.
pub const LONG_FLOW_BYTES: u64 = 32 << 20;
/// The switch hop counts of the latency rows.
pub const HOPS: [u32; 3] = [1, 3, 5];

/// Switches on the up/down path from `src` to `dst`: up from `src`'s leaf to the first switch
/// that has `dst` below it (tier T), then down: 2T - 1. `None` when `dst` is unreachable.
pub fn switch_hops(t: &Topology, src: HostId, dst: HostId) -> Option<u32> {
    let mut n = t.peer_node(t.host_port(src));
    while !t.routing.is_below(n, dst) {
        n = t.peer_node(*t.routing.up_ports(n).first()?);
    }
    Some(2 * t.node(n).tier() as u32 - 1)
}

/// The first host (in host order) `hops` switches away from host 0.
pub fn partner(t: &Topology, hops: u32) -> Option<HostId> {
    (1..t.num_hosts() as u32)
        .map(HostId)
        .find(|&d| switch_hops(t, HostId(0), d) == Some(hops))
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PingPong {
    pub switch_hops: u32,
    pub src_host: u32,
    pub dst_host: u32,
    /// Half the round trip: (ping one-way + pong one-way) / 2.
    pub latency_ps: u64,
    /// Which topology the pair is on.
    pub topology: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LongFlow {
    pub src_host: u32,
    pub dst_host: u32,
    pub switch_hops: u32,
    pub bytes: u64,
    /// Payload bits over the time from post to the receiver holding the last byte.
    pub goodput_gbps: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Probes {
    /// One per entry of [`HOPS`] that some pair of hosts has.
    pub ping_pong: Vec<PingPong>,
    pub long_flow: Option<LongFlow>,
}

/// One-way times (receiver holds the message minus post) of every message of `dag`.
fn one_way(
    t: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    engine: EngineChoice,
) -> Result<Vec<u64>, Error> {
    let (r, _) = run_dag(t, p, dag, engine, None)?;
    r.messages
        .iter()
        .map(|m| match (m.start_ps, m.recv_ps) {
            (Some(s), Some(e)) => Ok(e - s),
            _ => Err(Error::Run(format!("probe message {} did not arrive", m.id))),
        })
        .collect()
}

fn ping_pong(
    t: &Topology,
    p: &SimParams,
    hops: u32,
    label: &str,
    engine: EngineChoice,
) -> Result<Option<PingPong>, Error> {
    let Some(dst) = partner(t, hops) else {
        return Ok(None);
    };
    let mut dag = MessageDag::default();
    let ping = dag.push(HostId(0), dst, PING_BYTES, Time::ZERO, &[]);
    dag.push(dst, HostId(0), PING_BYTES, Time::ZERO, &[ping]);
    let w = one_way(t, p, &dag, engine)?;
    Ok(Some(PingPong {
        switch_hops: hops,
        src_host: 0,
        dst_host: dst.0,
        latency_ps: (w[0] + w[1]) / 2,
        topology: label.to_string(),
    }))
}

/// Measures the probes for fabric `v` on `design`/`topo` (the cluster of scenario `s` with the
/// fabric's profile applied).
pub fn run(
    s: &Scenario,
    design: &Design,
    topo: &Topology,
    v: &Variant,
    seed: u64,
) -> Result<Probes, Error> {
    let p = params(v, design, seed)?;
    let mut ping = Vec::new();
    let mut three_tier: Option<(Design, Topology)> = None;
    for hops in HOPS {
        if let Some(x) = ping_pong(topo, &p, hops, "this cluster", v.engine)? {
            ping.push(x);
            continue;
        }
        if topo.tiers >= 3 {
            continue;
        }
        if three_tier.is_none() {
            let mut s3 = s.clone();
            s3.file.topology.tiers = toml::Value::Integer(3);
            let pod = fabricsim_core::topology::max_gpus(&design.spec, 2);
            s3.file.cluster.gpus = (pod + design.spec.gpus_per_node as u64) as i64;
            let (d3, t3, _) = crate::plan::run(&s3)?;
            three_tier = Some((d3, t3));
        }
        let (d3, t3) = three_tier.as_ref().expect("built above");
        let p3 = params(v, d3, seed)?;
        if let Some(x) = ping_pong(t3, &p3, hops, "a 3-tier build with two pods", v.engine)? {
            ping.push(x);
        }
    }
    let long_flow = match partner(topo, 3).or_else(|| partner(topo, 1)) {
        Some(dst) => {
            let mut dag = MessageDag::default();
            dag.push(HostId(0), dst, LONG_FLOW_BYTES, Time::ZERO, &[]);
            let w = one_way(topo, &p, &dag, v.engine)?;
            Some(LongFlow {
                src_host: 0,
                dst_host: dst.0,
                switch_hops: switch_hops(topo, HostId(0), dst).unwrap_or(0),
                bytes: LONG_FLOW_BYTES,
                goodput_gbps: LONG_FLOW_BYTES as f64 * 8.0 / w[0] as f64 * 1e3,
            })
        }
        None => None,
    };
    Ok(Probes {
        ping_pong: ping,
        long_flow,
    })
}
