//! Link-level retry in a scenario (UEC 1.0 specification 5.1, `fabricsim_mech::llr`):
//!
//! ```toml
//! [sim]
//! llr = true                  # every Ethernet link retries corrupted frames itself (default off)
//! llr_replay_buffer = "64KB"  # per link direction (default: the link's round trip at its rate
//!                             # plus one frame, so a loss-free link never stalls)
//! ```

use super::value::SizeValue;
use fabricsim_core::error::{InputError, Source};
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

/// Applies `sim.llr` and `sim.llr_replay_buffer` to `p`.
pub fn apply(
    src: &Source,
    on: Option<bool>,
    buffer: Option<&SizeValue>,
    p: &mut SimParams,
) -> Result<(), InputError> {
    match on {
        Some(true) => p.llr = Some(p.llr.unwrap_or_default()),
        Some(false) => p.llr = None,
        None => {}
    }
    let Some(b) = buffer else {
        return Ok(());
    };
    let bytes = b.bytes(src, "sim.llr_replay_buffer")?;
    let frame = p.mtu_frame_wire_bytes();
    let Some(llr) = p.llr.as_mut() else {
        return Err(InputError::at_key(
            src,
            "sim.llr_replay_buffer",
            bytes,
            "a replay buffer given but link-level retry is off",
            "llr = true in [sim]",
        ));
    };
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
    Ok(())
}
