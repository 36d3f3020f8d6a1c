//! The metrics table architects compare fabrics by (issue 8, item 7), measured or derived
//! rather than quoted, each figure with its provenance: the plan, a simulation, the fabric
//! profile, or a catalog entry with its source.
//!
//! The latency and bandwidth rows are packet-engine runs ([`super::probe`]); congestion control
//! and routing are what the engine ran with (the profile's tuned or untuned set).

use fabricsim_core::estimate::Estimate;
use serde::Serialize;

use super::model::{Comparison, FabricResult};
use super::probe::{LONG_FLOW_BYTES, PING_BYTES};
use fabricsim_core::topology::max_gpus;
use fabricsim_mech::cc::ArSelect;
use fabricsim_mech::{FlowControl, RoutePolicy, SimParams};

/// One figure and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// The figure as shown (numbers formatted with their precision).
    pub text: String,
    /// The number, when the figure is one (a simulated figure's mean over the seeds).
    pub value: Option<f64>,
    /// A simulated figure's 95% interval over the seeds.
    pub interval: Option<Estimate>,
    /// `plan: ...`, `simulation: ...`, `profile: ...` or `catalog: <id> (<source>)`.
    pub provenance: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub metric: String,
    /// The unit of the values ("" for text rows).
    pub unit: String,
    /// One cell per fabric, in comparison order.
    pub cells: Vec<Cell>,
}

fn num(value: f64, decimals: usize, provenance: String) -> Cell {
    Cell {
        text: format!("{value:.decimals$}"),
        value: Some(value),
        interval: None,
        provenance,
    }
}

/// A simulated figure: its mean ± half width over the seeds.
fn est(e: Estimate, decimals: usize, provenance: String) -> Cell {
    Cell {
        text: e.text(decimals),
        value: Some(e.mean),
        interval: Some(e),
        provenance,
    }
}

fn text(t: String, provenance: String) -> Cell {
    Cell {
        text: t,
        value: None,
        interval: None,
        provenance,
    }
}

fn row(metric: &str, unit: &str, c: &Comparison, f: impl Fn(&FabricResult) -> Cell) -> Row {
    Row {
        metric: metric.into(),
        unit: unit.into(),
        cells: c.fabrics.iter().map(f).collect(),
    }
}

fn catalog_switch(f: &FabricResult) -> String {
    format!(
        "catalog: {} ({})",
        f.design.switch.id, f.design.switch.source
    )
}

/// Bytes on the wire per full MTU packet over its payload, from the profile's packet format.
fn payload_gbps(f: &FabricResult) -> f64 {
    let p = &f.design.profile;
    p.ports.rate_gbps as f64 * p.packet.mtu_bytes as f64 / p.wire_bytes(p.packet.mtu_bytes) as f64
}

fn absent(why: &str) -> Cell {
    text("-".into(), why.into())
}

/// Ping-pong latency through `hops` switches, in ns.
fn ping(f: &FabricResult, hops: u32) -> Cell {
    let Some(x) = f
        .probes
        .as_ref()
        .and_then(|p| p.ping_pong.iter().find(|x| x.switch_hops == hops))
    else {
        return absent(&format!(
            "simulation: no pair of hosts {hops} switches apart in this cluster or its 3-tier build"
        ));
    };
    est(
        x.latency_ns,
        0,
        format!(
            "simulation: packet engine, {PING_BYTES} B ping-pong host {} <-> host {} on {}, half the round trip, {} seed(s)",
            x.src_host, x.dst_host, x.topology, x.latency_ns.n
        ),
    )
}

/// The engine's congestion control for a fabric, in words.
fn cc_text(p: &SimParams) -> String {
    use fabricsim_mech::ecn::EcnMarking;
    let ecn = match p.cc.ecn {
        Some(EcnMarking::Red {
            kmin_bytes,
            kmax_bytes,
            pmax,
        }) => format!("RED ECN marking Kmin {kmin_bytes} B, Kmax {kmax_bytes} B, Pmax {pmax}"),
        Some(EcnMarking::Step { k_bytes }) => format!("step ECN marking above {k_bytes} B"),
        None => String::new(),
    };
    if let Some(d) = p.cc.algo.describe(&ecn) {
        d
    } else if !ecn.is_empty() {
        format!("none at the NICs ({ecn} without a reaction point)")
    } else {
        "none (link-level back-pressure only)".into()
    }
}

fn routing_text(p: &SimParams) -> String {
    let r = match p.routing {
        RoutePolicy::EcmpFlowHash => "ECMP on the 5-tuple hash (per flow)",
        RoutePolicy::DModK => "D-mod-K static tables",
        RoutePolicy::Adaptive => match p.cc.ar_select {
            ArSelect::Credits => {
                "adaptive per packet (most credits by link length, less the local queue), D-mod-K fallback"
            }
            ArSelect::Queue => "adaptive per packet (least queued port), D-mod-K fallback",
        },
        RoutePolicy::Spray(_) => "spraying per packet over the ECMP set",
    };
    format!("{r}; {} QP(s) per connection", p.cc.qps_per_connection)
}

/// How a fabric without injected loss handles a full queue, from its flow control and its
/// trimming threshold (bytes, 0: none).
fn loss_text(fc: Option<(FlowControl, u64)>) -> String {
    match fc {
        Some((FlowControl::Credits(_), _)) => {
            "credit-based link-level flow control (IBA Vol. 1 7.9), lossless".into()
        }
        Some((FlowControl::Pfc(_), _)) => {
            "PFC per priority (IEEE 802.1Qbb) with computed headroom; lossless while the headroom holds"
                .into()
        }
        Some((FlowControl::None, trim)) if trim > 0 => format!(
            "lossy, no PFC: a packet that would take a switch queue past {} KB is trimmed to \
             its header and NACKed, the sender resends it at once (UEC 1.0 3.6.17)",
            trim / 1000
        ),
        Some((FlowControl::None, _)) => "lossy, no PFC: tail drop at a full buffer".into(),
        None => "no engine parameters".into(),
    }
}

fn engine_params(f: &FabricResult) -> Option<SimParams> {
    super::engine::params(&f.variant, &f.design, 1).ok()
}

pub fn table(c: &Comparison) -> Vec<Row> {
    let plan = |what: &str| format!("plan: {what}");
    let profile_set = |f: &FabricResult, table: &str| {
        let set = if f.variant.tuned { "tuned" } else { "untuned" };
        format!("profile: {} [{table}], {set} set", f.design.profile.id)
    };
    vec![
        row("switch", "", c, |f| {
            text(
                format!(
                    "{} ({} x {}G)",
                    f.design.switch.id,
                    f.design.spec.switch_radix,
                    f.design.profile.ports.rate_gbps
                ),
                catalog_switch(f),
            )
        }),
        row("switch port-to-port latency", "ns", c, |f| {
            num(f.design.switch.latency_ns, 0, catalog_switch(f))
        }),
        row("NIC latency", "ns", c, |f| {
            num(
                f.design.nic.latency_ns,
                0,
                format!("catalog: {} ({})", f.design.nic.id, f.design.nic.source),
            )
        }),
        row("end-to-end latency through 1 switch", "ns", c, |f| {
            ping(f, 1)
        }),
        row("end-to-end latency through 3 switches", "ns", c, |f| {
            ping(f, 3)
        }),
        row("end-to-end latency through 5 switches", "ns", c, |f| {
            ping(f, 5)
        }),
        row("achieved per-NIC bandwidth", "Gb/s", c, |f| {
            match f.probes.as_ref().and_then(|p| p.long_flow.as_ref()) {
                Some(l) => est(
                    l.goodput_gbps,
                    1,
                    format!(
                        "simulation: packet engine, one {} MiB flow host {} -> host {} through {} switches, payload over completion time, {} seed(s)",
                        LONG_FLOW_BYTES >> 20,
                        l.src_host,
                        l.dst_host,
                        l.switch_hops,
                        l.goodput_gbps.n
                    ),
                ),
                None => absent("simulation: no pair of hosts for a long flow"),
            }
        }),
        row("per-NIC payload rate at full MTU", "Gb/s", c, |f| {
            let p = &f.design.profile;
            num(
                payload_gbps(f),
                1,
                format!(
                    "profile: {} line rate x MTU {} / wire bytes {} (not a measurement)",
                    p.id,
                    p.packet.mtu_bytes,
                    p.wire_bytes(p.packet.mtu_bytes)
                ),
            )
        }),
        row("loss handling", "", c, |f| {
            let t = if f.variant.loss_rate > 0.0 {
                format!(
                    "lossy: random loss {}; a drop triggers {} recovery",
                    f.variant.loss_rate,
                    f.variant.recovery.name()
                )
            } else {
                let fc = engine_params(f).map(|p| (p.flow_control, p.cc.trim_bytes));
                format!(
                    "{}; {} on a corruption drop",
                    loss_text(fc),
                    f.variant.recovery.name()
                )
            };
            text(
                t,
                format!(
                    "profile: {} family, [flow_control] and trim_bdp; [compare] fabric entry",
                    f.design.profile.id
                ),
            )
        }),
        row("congestion control", "", c, |f| match engine_params(f) {
            Some(p) => text(cc_text(&p), profile_set(f, "congestion / ib_cc")),
            None => absent("profile: no engine parameters"),
        }),
        row("routing", "", c, |f| match engine_params(f) {
            Some(p) => text(routing_text(&p), profile_set(f, "routing")),
            None => absent("profile: no engine parameters"),
        }),
        row("tiers in this cluster", "", c, |f| {
            num(f.plan.tiers as f64, 0, plan("topology builder"))
        }),
        row("largest cluster in 2 tiers", "GPUs", c, |f| {
            num(
                max_gpus(&f.design.spec, 2) as f64,
                0,
                plan("topology sizing, this switch and oversubscription"),
            )
        }),
        row("largest cluster in 3 tiers", "GPUs", c, |f| {
            num(
                max_gpus(&f.design.spec, 3) as f64,
                0,
                plan("topology sizing, this switch and oversubscription"),
            )
        }),
        row("switch cost per port", "USD", c, |f| {
            let s = &f.design.switch;
            num(
                s.price_usd / f.design.spec.switch_radix as f64,
                0,
                catalog_switch(f),
            )
        }),
        row("switch power per port", "W", c, |f| {
            let s = &f.design.switch;
            num(
                s.power_w / f.design.spec.switch_radix as f64,
                1,
                catalog_switch(f),
            )
        }),
        row("network CAPEX per GPU", "USD", c, |f| {
            num(
                f.plan.cost.network_capex_usd_per_gpu,
                0,
                plan("bill of materials at catalog prices"),
            )
        }),
        row("network power", "kW", c, |f| {
            num(
                f.plan.power.total_kw(),
                1,
                plan("switches, optics and NICs at catalog power"),
            )
        }),
    ]
}
