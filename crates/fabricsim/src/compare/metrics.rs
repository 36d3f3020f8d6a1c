//! The metrics table architects compare fabrics by (issue 8, item 7), measured or derived
//! rather than quoted, each figure with its provenance: the plan, a simulation, the fabric
//! profile, or a catalog entry with its source.
//!
//! Rows that need the packet engine (ping-pong latency through 1, 3 and 5 switch hops,
//! achieved per-NIC bandwidth, what a drop costs in time) are added when it is merged; until
//! then they are absent, not estimated.

use serde::Serialize;

use super::model::{Comparison, FabricResult};
use crate::topology::max_gpus;

/// One figure and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// The figure as shown (numbers formatted with their precision).
    pub text: String,
    /// The number, when the figure is one.
    pub value: Option<f64>,
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
        provenance,
    }
}

fn text(t: String, provenance: String) -> Cell {
    Cell {
        text: t,
        value: None,
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

pub fn table(c: &Comparison) -> Vec<Row> {
    let plan = |what: &str| format!("plan: {what}");
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
            let lossless = match f.design.profile.family.name() {
                "infiniband" => "credit-based link-level flow control (IBA Vol. 1 7.9), lossless",
                _ => {
                    "PFC per priority (IEEE 802.1Qbb) with computed headroom; lossless while the headroom holds"
                }
            };
            let t = if f.variant.loss_rate > 0.0 {
                format!(
                    "lossy: random loss {}; a drop triggers {} recovery",
                    f.variant.loss_rate,
                    f.variant.recovery.name()
                )
            } else {
                format!(
                    "{lossless}; {} on a corruption drop",
                    f.variant.recovery.name()
                )
            };
            text(
                t,
                format!(
                    "profile: {} family; [compare] fabric entry",
                    f.design.profile.id
                ),
            )
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
