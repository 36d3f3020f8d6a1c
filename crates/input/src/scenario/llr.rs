//! Link-level retry in a scenario (UEC 1.0 specification 5.1, `fabricsim_mech::llr`):
//!
//! ```toml
//! [sim]
//! llr = true                  # every Ethernet link retries corrupted frames itself (default off)
//! llr_replay_buffer = "64KB"  # per link direction (default: the link's round trip, with the
//!                             # ACK's coalescing delay, at its rate plus one frame, so a
//!                             # loss-free link never stalls)
//! llr_ack_spacing = "2KB"     # the receiver ACKs once the frames it accepted since its last ACK
//!                             # reach this many wire bytes (default 2048, the OCP SAI LLR
//!                             # proposal's CtlOS spacing; 0: an ACK per frame)
//! llr_ack_timer = "1us"       # ... or this long after the first of them (default 1us, estimate)
//! ```

use super::sim::SimSection;
use super::value::{SizeValue, time};
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::Time;
use fabricsim_mech::llr::Llr;
use fabricsim_mech::params::SimParams;

/// LLR is refused with a link going down or up: the frames in a failed link's replay buffer
/// are not followed.
pub fn check_faults(
    src: &Source,
    faults: &super::faults::FaultsSection,
    p: &SimParams,
) -> Result<(), InputError> {
    if p.llr.is_none() || !faults.changes_links() {
        return Ok(());
    }
    Err(InputError::at_key(
        src,
        "sim.llr",
        true,
        "link-level retry across a link going down or up ([[faults.link]] down_at, up_at) is not modelled",
        "llr = false, or no link going down or up",
    ))
}

/// Applies `sim.llr`, `sim.llr_replay_buffer`, `sim.llr_ack_spacing` and `sim.llr_ack_timer`
/// of `s` to `p`.
pub fn apply(src: &Source, s: &SimSection, p: &mut SimParams) -> Result<(), InputError> {
    match s.llr {
        Some(true) => p.llr = Some(p.llr.unwrap_or_default()),
        Some(false) => p.llr = None,
        None => {}
    }
    let given = [
        s.llr_replay_buffer
            .as_ref()
            .map(|b| ("sim.llr_replay_buffer", size(b))),
        s.llr_ack_spacing
            .as_ref()
            .map(|b| ("sim.llr_ack_spacing", size(b))),
        s.llr_ack_timer
            .as_ref()
            .map(|t| ("sim.llr_ack_timer", format!("\"{t}\""))),
    ];
    let frame = p.mtu_frame_wire_bytes();
    let Some(llr) = p.llr.as_mut() else {
        return match given.into_iter().flatten().next() {
            Some((key, value)) => Err(InputError::at_key(
                src,
                key,
                value,
                "a link-level retry setting given but link-level retry is off",
                "llr = true in [sim]",
            )),
            None => Ok(()),
        };
    };
    if let Some(b) = &s.llr_replay_buffer {
        let bytes = b.bytes(src, "sim.llr_replay_buffer")?;
        if bytes < frame {
            return Err(InputError::at_key(
                src,
                "sim.llr_replay_buffer",
                bytes,
                "the replay buffer holds less than one full frame",
                format!("at least {frame} B (one MTU frame on the wire)"),
            ));
        }
        llr.replay_buffer = Some(bytes);
    }
    if let Some(b) = &s.llr_ack_spacing {
        llr.ack_spacing = b.bytes(src, "sim.llr_ack_spacing")?;
    }
    if let Some(t) = &s.llr_ack_timer {
        let v = time(src, "sim.llr_ack_timer", t)?;
        if v == Time::ZERO {
            return Err(InputError::at_key(
                src,
                "sim.llr_ack_timer",
                format!("\"{t}\""),
                "must be positive (it bounds how long a frame waits for its ACK)",
                "a duration such as 500ns or 1us",
            ));
        }
        llr.ack_timer = v;
    }
    Ok(())
}

/// `[sim]`'s link-level retry on a design's fabric (`profile`, tuned), for every command that
/// takes its engine parameters from the design (`sim`, `collective`, `train`, `compare`): `None`
/// when off; refused on a credit-based fabric, as `sim` refuses it.
pub fn of_design(
    src: &Source,
    s: Option<&SimSection>,
    profile: &crate::profile::Profile,
) -> Result<Option<Llr>, InputError> {
    let Some(s) = s else {
        return Ok(None);
    };
    // A profile that gives no parameters is refused where they are built (`params_from_design`).
    let Ok(mut p) = crate::profile_fc::from_profile(profile, true) else {
        return Ok(None);
    };
    apply(src, s, &mut p)?;
    p.check_llr().map_err(|e| {
        InputError::at_key(
            src,
            "sim.llr",
            true,
            format!("{} on profile {}", e.problem, profile.id),
            "llr = false, or fabrics whose flow_control is \"none\" or \"pfc\" (Ethernet links)",
        )
    })?;
    Ok(p.llr)
}

/// A size as written in the scenario.
fn size(b: &SizeValue) -> String {
    match b {
        SizeValue::Int(n) => n.to_string(),
        SizeValue::Text(t) => format!("\"{t}\""),
    }
}
