//! Link-level flow control in a scenario: `sim.flow_control` with `[sim.pfc]` / `[sim.credits]`
//! overrides, and the faults that only make sense with it (`[[faults.nic]]` receive stalls,
//! `[[faults.route]]` forced next hops).
//!
//! ```toml
//! [sim]
//! flow_control = "pfc"        # none | credits | cbfc | pfc (default: ib -> credits, roce -> none)
//!                             # cbfc: UEC credits per virtual channel, spaced updates (UEC 1.0 5.2)
//! [sim.pfc]
//! xoff_alpha = 0.125          # dynamic XOFF = alpha x free shared buffer; or xoff = "20KB"
//! xon_offset = "8KB"          # XON this far below XOFF (default 2 x MTU frame)
//! headroom_scale = 1.0        # x the SONiC formula; or headroom = "50KB"
//! peer_response = "1.2us"     # default: IEEE 802.3 31B.3.7 bound for the rate
//! watchdog = "200ms"          # or "off"
//! deadlock_check = "100us"    # or "off"
//! [sim.credits]
//! switch_vl_buffer = "256KB"  # receive buffer per VL per switch port
//! nic_vl_buffer = "256KB"
//! credit_update = "6400B"     # cbfc: bytes freed between two credit updates (800 B to 1 MB)
//! deadlock_check = "100us"
//! [[faults.nic]]
//! node = 3                    # the host's node id in the topology file
//! stall_at = "20us"           # stops receiving (pause storm under PFC); stall_until = ...
//! [[faults.route]]
//! node = 40                   # switch node id
//! dst = 7                     # destination node id (a host)
//! via = 45                    # neighbour node id: lossless packets for dst go there
//! ```

use serde::Deserialize;

use super::value::{SizeValue, time};
use crate::io::imported::ImportedTopology;
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::Time;
use fabricsim_mech::faults::Fault;
use fabricsim_mech::params::{
    CreditParams, FlowControl, Headroom, PfcParams, PfcThreshold, SimParams,
};

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PfcSection {
    pub xoff_alpha: Option<f64>,
    pub xoff: Option<SizeValue>,
    pub xon_offset: Option<SizeValue>,
    pub headroom_scale: Option<f64>,
    pub headroom: Option<SizeValue>,
    pub peer_response: Option<String>,
    pub watchdog: Option<String>,
    pub deadlock_check: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CreditsSection {
    pub switch_vl_buffer: Option<SizeValue>,
    pub nic_vl_buffer: Option<SizeValue>,
    pub credit_update: Option<SizeValue>,
    pub deadlock_check: Option<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NicFaultEntry {
    pub node: u32,
    pub stall_at: String,
    pub stall_until: Option<String>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteFaultEntry {
    pub node: u32,
    pub dst: u32,
    pub via: u32,
}

/// A duration or "off".
fn opt_time(src: &Source, key: &str, s: &str) -> Result<Option<Time>, InputError> {
    if s == "off" {
        return Ok(None);
    }
    time(src, key, s).map(Some)
}

/// Applies `flow_control` and its sub-table to `p` (whose fabric default is already set).
pub fn apply(
    src: &Source,
    kind: Option<&str>,
    pfc: Option<&PfcSection>,
    credits: Option<&CreditsSection>,
    p: &mut SimParams,
) -> Result<(), InputError> {
    let frame = p.mtu_frame_wire_bytes();
    match kind {
        None => {}
        Some("none") => p.flow_control = FlowControl::None,
        Some("credits") => {
            if !matches!(p.flow_control, FlowControl::Credits(c) if c.update_bytes == 0) {
                p.flow_control = FlowControl::Credits(CreditParams::default_ib());
            }
        }
        Some("cbfc") => {
            if !matches!(p.flow_control, FlowControl::Credits(c) if c.update_bytes > 0) {
                p.flow_control = FlowControl::Credits(CreditParams::cbfc());
            }
        }
        Some("pfc") => {
            if !matches!(p.flow_control, FlowControl::Pfc(_)) {
                p.flow_control = FlowControl::Pfc(PfcParams::tuned(p.data_tc, frame));
            }
        }
        Some(other) => {
            return Err(InputError::at_key(
                src,
                "sim.flow_control",
                format!("\"{other}\""),
                "unknown flow control",
                "none, credits, cbfc, pfc",
            ));
        }
    }
    if let Some(s) = pfc {
        let FlowControl::Pfc(pp) = &mut p.flow_control else {
            return Err(InputError::at_key(
                src,
                "sim.pfc",
                "(table)",
                "[sim.pfc] given but flow control is not PFC",
                "flow_control = \"pfc\"",
            ));
        };
        if s.xoff_alpha.is_some() && s.xoff.is_some() {
            return Err(InputError::at_key(
                src,
                "sim.pfc.xoff",
                "(both)",
                "both xoff and xoff_alpha given",
                "one of xoff (static bytes) or xoff_alpha (dynamic)",
            ));
        }
        if let Some(a) = s.xoff_alpha {
            if !(a > 0.0 && a <= 64.0) {
                return Err(InputError::at_key(
                    src,
                    "sim.pfc.xoff_alpha",
                    a,
                    "out of range",
                    "0 < alpha <= 64",
                ));
            }
            pp.xoff = PfcThreshold::Dynamic(a);
        }
        if let Some(b) = &s.xoff {
            pp.xoff = PfcThreshold::Static(b.bytes(src, "sim.pfc.xoff")?);
        }
        if let Some(b) = &s.xon_offset {
            pp.xon_offset_bytes = b.bytes(src, "sim.pfc.xon_offset")?;
        }
        if s.headroom_scale.is_some() && s.headroom.is_some() {
            return Err(InputError::at_key(
                src,
                "sim.pfc.headroom",
                "(both)",
                "both headroom and headroom_scale given",
                "one of headroom (bytes) or headroom_scale (x the formula)",
            ));
        }
        if let Some(x) = s.headroom_scale {
            if !(x >= 0.0 && x <= 100.0) {
                return Err(InputError::at_key(
                    src,
                    "sim.pfc.headroom_scale",
                    x,
                    "out of range",
                    "0 to 100 (1 = the SONiC formula)",
                ));
            }
            pp.headroom = Headroom::Formula { scale: x };
        }
        if let Some(b) = &s.headroom {
            pp.headroom = Headroom::Bytes(b.bytes(src, "sim.pfc.headroom")?);
        }
        if let Some(t) = &s.peer_response {
            pp.peer_response = Some(time(src, "sim.pfc.peer_response", t)?);
        }
        if let Some(t) = &s.watchdog {
            pp.watchdog = opt_time(src, "sim.pfc.watchdog", t)?;
        }
        if let Some(t) = &s.deadlock_check {
            pp.deadlock_check = opt_time(src, "sim.pfc.deadlock_check", t)?;
        }
    }
    if let Some(s) = credits {
        let FlowControl::Credits(c) = &mut p.flow_control else {
            return Err(InputError::at_key(
                src,
                "sim.credits",
                "(table)",
                "[sim.credits] given but flow control is not credits",
                "flow_control = \"credits\"",
            ));
        };
        if let Some(b) = &s.switch_vl_buffer {
            c.switch_vl_buffer_bytes = b.buffer_bytes(src, "sim.credits.switch_vl_buffer")?;
        }
        if let Some(b) = &s.nic_vl_buffer {
            c.nic_vl_buffer_bytes = b.buffer_bytes(src, "sim.credits.nic_vl_buffer")?;
        }
        if let Some(t) = &s.deadlock_check {
            c.deadlock_check = opt_time(src, "sim.credits.deadlock_check", t)?;
        }
        if let Some(b) = &s.credit_update {
            let key = "sim.credits.credit_update";
            let v = b.bytes(src, key)?;
            let range = fabricsim_mech::params::CBFC_UPDATE_RANGE;
            if c.update_bytes == 0 || !range.contains(&(v.min(u32::MAX as u64) as u32)) {
                return Err(InputError::at_key(
                    src,
                    key,
                    v,
                    "not a CBFC credit-update spacing",
                    "800 B to 1 MB, with flow_control = \"cbfc\" (UEC 1.0 5.2)",
                ));
            }
            c.update_bytes = v as u32;
        }
    }
    Ok(())
}

/// The `[[faults.nic]]` and `[[faults.route]]` entries for the topology file's node ids.
pub fn node_faults(
    src: &Source,
    nics: &[NicFaultEntry],
    routes: &[RouteFaultEntry],
    net: &ImportedTopology,
) -> Result<Vec<Fault>, InputError> {
    let n = net.node_of.len();
    let node = |key: &str, id: u32| {
        if (id as usize) < n {
            Ok(net.node_of[id as usize])
        } else {
            Err(InputError::at_key(
                src,
                key,
                id,
                "no such node",
                format!("0 to {}", n.saturating_sub(1)),
            ))
        }
    };
    let host = |key: &str, id: u32| {
        node(key, id)?;
        net.host_of[id as usize]
            .ok_or_else(|| InputError::at_key(src, key, id, "not a host", "a host's node id"))
    };
    let mut out = Vec::new();
    for e in nics {
        let h = host("faults.nic.node", e.node)?;
        let until = e
            .stall_until
            .as_deref()
            .map(|s| time(src, "faults.nic.stall_until", s))
            .transpose()?;
        out.push(Fault::RxStall {
            host: h,
            at: time(src, "faults.nic.stall_at", &e.stall_at)?,
            until,
        });
    }
    for e in routes {
        let at = node("faults.route.node", e.node)?;
        if !net.topo.nodes[at.idx()].is_switch() {
            return Err(InputError::at_key(
                src,
                "faults.route.node",
                e.node,
                "not a switch",
                "a switch's node id",
            ));
        }
        let dst = host("faults.route.dst", e.dst)?;
        let via = node("faults.route.via", e.via)?;
        let port = net.topo.nodes[at.idx()]
            .ports()
            .map(fabricsim_core::topology::PortId)
            .find(|&p| net.topo.peer_node(p) == via)
            .ok_or_else(|| {
                InputError::at_key(
                    src,
                    "faults.route.via",
                    e.via,
                    "not a neighbour of faults.route.node",
                    "a node linked to the switch",
                )
            })?;
        out.push(Fault::Misroute {
            node: at,
            dst,
            port,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credits(update: Option<u64>) -> CreditsSection {
        CreditsSection {
            credit_update: update.map(SizeValue::Int),
            ..CreditsSection::default()
        }
    }

    /// `cbfc` is the credits mode with 6,400 B updates (UEC 1.0 5.2); `credit_update` sets the
    /// spacing within 800 B to 1 MB and only under CBFC, each refusal naming the key.
    #[test]
    fn cbfc_is_credits_with_spaced_updates() {
        let src = Source::new("s.toml", "");
        let mut p = SimParams::uec();
        apply(&src, Some("cbfc"), None, None, &mut p).unwrap();
        assert_eq!(p.flow_control, FlowControl::Credits(CreditParams::cbfc()));
        apply(&src, Some("cbfc"), None, Some(&credits(Some(800))), &mut p).unwrap();
        let FlowControl::Credits(c) = p.flow_control else {
            panic!("credits")
        };
        assert_eq!(c.update_bytes, 800);
        let e = apply(&src, Some("cbfc"), None, Some(&credits(Some(799))), &mut p).unwrap_err();
        assert!(e.to_string().contains("sim.credits.credit_update"), "{e}");
        let e = apply(
            &src,
            Some("credits"),
            None,
            Some(&credits(Some(6400))),
            &mut p,
        );
        assert!(e.unwrap_err().to_string().contains("cbfc"));
        apply(&src, Some("credits"), None, None, &mut p).unwrap();
        assert_eq!(
            p.flow_control,
            FlowControl::Credits(CreditParams::default_ib())
        );
    }
}
