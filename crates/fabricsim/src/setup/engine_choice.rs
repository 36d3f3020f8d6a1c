//! Which engine runs a message DAG: the packet engine (the ground truth for mechanisms), the
//! flow engine (max-min fluid rates, for 10K-131K GPUs), or `auto`, which takes the packet
//! engine up to a work size and the flow engine above it.
//!
//! The scenario's top-level `engine` key (flag `--engine`) holds the choice; every command
//! that runs a DAG (`sim`, `collective`, `train`, `sweep`, `compare`) reads it from here and
//! runs it through [`run`], which returns the packet engine's `RunResult` from either engine,
//! with `sim.engine` naming the one that ran.

use crate::error::{Error, InputError};
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{LinkId, Topology};
use fabricsim_core::units::Time;
use fabricsim_flow::{self as flow, FlowParams, PathModel, RateModel};
use fabricsim_input::scenario::Scenario;
use fabricsim_mech::{Fault, Faults, RoutePolicy, RunResult, SimParams};
use fabricsim_packet::{self as sim, RunOptions};

/// What the user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineChoice {
    Packet,
    Flow,
    #[default]
    Auto,
}

/// The engine a run actually uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    Packet,
    Flow,
}

/// `auto` takes the flow engine above this many fabric packets (MTU-sized segments of the
/// DAG's network messages). The packet engine runs about 4-10 M events/s with about 17 events
/// per packet on a 3-tier path (`fabricsim bench`), so 20 M packets is roughly a minute of
/// packet simulation on one core: an estimate of where waiting stops being worth it.
pub const AUTO_FLOW_ABOVE_PACKETS: u64 = 20_000_000;

impl EngineChoice {
    /// The allowed spellings, for error messages and help.
    pub const ALLOWED: &'static str = "packet, flow, auto";

    /// Parses `packet`, `flow` or `auto`.
    pub fn parse(s: &str) -> Option<EngineChoice> {
        match s {
            "packet" => Some(EngineChoice::Packet),
            "flow" => Some(EngineChoice::Flow),
            "auto" => Some(EngineChoice::Auto),
            _ => None,
        }
    }

    /// The scenario's `engine` key (default `auto`), or an error naming it.
    pub fn of(s: &Scenario) -> Result<EngineChoice, InputError> {
        match s.file.engine.as_deref() {
            None => Ok(EngineChoice::Auto),
            Some(v) => EngineChoice::parse(v).ok_or_else(|| {
                s.error(
                    "engine",
                    format!("\"{v}\""),
                    "unknown engine",
                    EngineChoice::ALLOWED,
                )
            }),
        }
    }

    /// The engine for a run of `fabric_packets` packets.
    pub fn resolve(self, fabric_packets: u64) -> EngineKind {
        match self {
            EngineChoice::Packet => EngineKind::Packet,
            EngineChoice::Flow => EngineKind::Flow,
            EngineChoice::Auto if fabric_packets > AUTO_FLOW_ABOVE_PACKETS => EngineKind::Flow,
            EngineChoice::Auto => EngineKind::Packet,
        }
    }
}

impl EngineKind {
    /// The name written in results (`sim.engine`) and reports.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Packet => "packet",
            EngineKind::Flow => "flow",
        }
    }
}

/// An engine's name in a record ([`EngineKind::name`]); an alias, so serde's derive does not
/// take the `'static` for a borrow of the input.
pub type EngineName = &'static str;

/// Reads back an engine name written by [`EngineKind::name`] (a resumed sweep's records).
pub fn deserialize_name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<EngineName, D::Error> {
    let s = <String as serde::Deserialize>::deserialize(d)?;
    [EngineKind::Packet, EngineKind::Flow]
        .into_iter()
        .map(EngineKind::name)
        .find(|n| *n == s)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown engine {s:?}: packet or flow")))
}

/// Runs `dag` on `topo` with the engine `kind`. The flow engine has no per-packet mechanisms:
/// a fault it cannot model, or a stop time, is an `Err` that names it and points to
/// `--engine packet`; the progress callback sees the flow engine's sent messages. What the flow
/// engine does not model but the run met (an RTO below its queueing delay) is in `sim.warnings`.
pub fn run(
    kind: EngineKind,
    topo: &Topology,
    params: &SimParams,
    dag: &MessageDag,
    faults: &Faults,
    opts: RunOptions,
) -> Result<RunResult, Error> {
    // Cross-plane messages leave from the port on the destination's plane (PXN).
    let dag = &*fabricsim_core::topology::pxn::relay(topo, dag)?;
    let mut r = match kind {
        EngineKind::Packet => sim::run(topo, params, dag, faults, opts)?,
        EngineKind::Flow => {
            let failed_links = flow_supports(faults, &opts)?;
            let fp = FlowParams {
                failed_links,
                ..flow_params(topo, params)
            };
            let mut cb = opts.progress;
            let mut observe = |f: &flow::Progress| match cb.as_mut() {
                Some(cb) => cb(&sim::Progress {
                    now: fabricsim_core::units::Time(f.now_ps),
                    events: f.batches,
                    completed: f.sent,
                    total: f.total,
                }),
                None => true,
            };
            let (mut r, stats) = flow::run_observed(topo, params, dag, &fp, Some(&mut observe))?;
            r.sim
                .warnings
                .extend(fp.loss.and_then(|l| l.rto_warning(stats.max_wait_ps)));
            if !fp.failed_links.is_empty() {
                let ids: Vec<String> = fp.failed_links.iter().map(|l| l.0.to_string()).collect();
                r.sim.warnings.push(format!(
                    "link(s) {} down from the start: the flow engine routes around them from \
                     time 0, as the fabric does after its local repair and global reroute (the \
                     packet engine also runs the loss before them)",
                    ids.join(", ")
                ));
            }
            r
        }
    };
    r.sim.engine = kind.name();
    Ok(r)
}

/// The links down from the start of the run and never back, which the flow engine routes
/// around as the fabric does once it has converged (`reroute::Converged`: local repair and the
/// global reroute done; the packet engine runs the transient before them), or `Err` naming the
/// first thing of the run the flow engine does not model.
fn flow_supports(faults: &Faults, opts: &RunOptions) -> Result<Vec<LinkId>, Error> {
    let unsupported = |what: String| {
        Err(Error::Unsupported(format!(
            "the flow engine does not model {what}; run it with --engine packet"
        )))
    };
    let comes_back = |l: LinkId| {
        faults
            .faults
            .iter()
            .any(|f| matches!(f, Fault::Up { link, .. } if *link == l))
    };
    let converges = faults.reroute.global.is_some();
    let (failed, others): (Vec<&Fault>, Vec<&Fault>) = faults.faults.iter().partition(|f| {
        matches!(f, Fault::Down { link, at } if *at == Time::ZERO && !comes_back(*link) && converges)
    });
    if let Some(f) = others.first() {
        let what = match f {
            Fault::Loss { link, .. } => format!("the loss fault on link {}", link.0),
            Fault::DropNth { link, nth, .. } => {
                format!("the dropped packet {nth} on link {}", link.0)
            }
            Fault::DropEvery { link, every, .. } => {
                format!("every {every}-th packet dropped on link {}", link.0)
            }
            Fault::Down { link, at } if *at == Time::ZERO && !comes_back(*link) => format!(
                "link {} down from the start without a global reroute (it routes around a \
                 failed link as the converged fabric does: set the profile's or [faults] \
                 global_reroute_delay)",
                link.0
            ),
            Fault::Down { link, .. } => format!(
                "link {} going down during the run (it takes a link down from the start, \
                 down_at = \"0\", never back up)",
                link.0
            ),
            Fault::Up { link, .. } => format!("link {} coming up", link.0),
            Fault::RxStall { host, .. } => format!("the receive stall of host {}", host.0),
            Fault::Misroute { node, .. } => format!("the misroute at switch {}", node.0),
        };
        return unsupported(what);
    }
    if let Some(t) = opts.until {
        return unsupported(format!("a stop time ({} ps)", t.ps()));
    }
    Ok(failed
        .iter()
        .filter_map(|f| match f {
            Fault::Down { link, .. } => Some(*link),
            _ => None,
        })
        .collect())
}

/// Most subflows an adaptively routed message is split into (memory grows with it): the
/// fluid view of per-packet adaptive routing spreading a message over the leaf's up ports.
const MAX_ADAPTIVE_SUBFLOWS: u16 = 8;

/// The flow engine's parameters for a run the packet engine would make with `p`.
pub fn flow_params(topo: &Topology, p: &SimParams) -> FlowParams {
    let widest = || {
        let w = topo
            .nodes
            .iter()
            .filter(|n| n.is_switch() && n.tier() == 1)
            .map(|n| n.up_ports().len())
            .max()
            .unwrap_or(1);
        (w as u16).clamp(1, MAX_ADAPTIVE_SUBFLOWS)
    };
    let paths = match p.routing {
        RoutePolicy::Adaptive => PathModel::Adaptive { paths: widest() },
        // The packet engine's entropies; unbounded ones cycle over a leaf's up ports.
        RoutePolicy::Spray(s) => PathModel::Spray {
            paths: if s.entropies == 0 {
                widest()
            } else {
                s.entropies.min(MAX_ADAPTIVE_SUBFLOWS)
            },
        },
        _ => PathModel::Hash,
    };
    FlowParams {
        paths,
        rates: RateModel {
            max_rate: p.qp_rate_limit,
            ..RateModel::default()
        },
        loss: fabricsim_flow::llr::loss_model(topo, p),
        ..FlowParams::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_switches_above_the_limit() {
        assert_eq!(
            EngineChoice::Auto.resolve(AUTO_FLOW_ABOVE_PACKETS),
            EngineKind::Packet
        );
        assert_eq!(
            EngineChoice::Auto.resolve(AUTO_FLOW_ABOVE_PACKETS + 1),
            EngineKind::Flow
        );
        assert_eq!(EngineChoice::Packet.resolve(u64::MAX), EngineKind::Packet);
        assert_eq!(EngineChoice::Flow.resolve(0), EngineKind::Flow);
    }

    #[test]
    fn bad_engine_names_the_key_and_the_choices() {
        let s = Scenario::parse("s.toml", "engine = \"fluid\"\n").unwrap();
        let e = EngineChoice::of(&s).unwrap_err().to_string();
        assert!(
            e.contains("s.toml") && e.contains("engine") && e.contains("fluid"),
            "{e}"
        );
        assert!(e.contains("packet, flow, auto"), "{e}");
    }
}
