//! Which engine runs a message DAG: the packet engine (the ground truth for mechanisms), the
//! flow engine (max-min fluid rates, for 10K-131K GPUs), or `auto`, which takes the packet
//! engine up to a work size and the flow engine above it.
//!
//! The scenario's top-level `engine` key (flag `--engine`) holds the choice; every command
//! that runs a DAG (`sim`, `collective`, `train`, `sweep`, `compare`) reads it from here.

use crate::error::InputError;
use crate::scenario::Scenario;

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
