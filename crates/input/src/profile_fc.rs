//! The `[flow_control]` sub-table of a fabric profile (data/profiles) and its mapping into the
//! engine's parameters: IB credits per VL, or PFC on the RoCE lossless priority with the SONiC
//! headroom (tuned) and a documented untuned variant.

use serde::Deserialize;

use crate::error::ProfileError;
use crate::profile::{Family, Profile};
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::{MAX_BYTES, Time};
use fabricsim_mech::params::{
    CreditParams, FlowControl, Headroom, PfcParams, PfcThreshold, SimParams,
};

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowControlProfile {
    /// credits | cbfc (UEC 1.0 5.2: credits with spaced updates) | pfc | none
    pub kind: String,
    /// Credits: data VLs, receive buffer per VL of a switch port and of a NIC port.
    pub data_vls: Option<u8>,
    pub switch_vl_buffer_bytes: Option<u64>,
    pub nic_vl_buffer_bytes: Option<u64>,
    /// PFC: the lossless 802.1p priority (carried by the engine's data class).
    pub priority: Option<u8>,
    pub xoff_alpha: Option<f64>,
    pub headroom_scale: Option<f64>,
    pub watchdog_ms: Option<u64>,
    /// The untuned variant: what changes (a fixed headroom, no watchdog).
    pub untuned: Option<UntunedPfc>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UntunedPfc {
    /// A fixed headroom per (port, priority) instead of the formula.
    pub headroom_bytes: u64,
    /// 0: watchdog off.
    pub watchdog_ms: u64,
}

impl FlowControlProfile {
    /// Range checks of the table's numbers, each an error at its key in the profile file.
    pub fn check(&self, src: &Source) -> Result<(), InputError> {
        let key = |k: &str| format!("flow_control.{k}");
        if let Some(a) = self.xoff_alpha.filter(|a| !(*a > 0.0 && *a <= 64.0)) {
            return Err(InputError::at_key(
                src,
                &key("xoff_alpha"),
                a,
                "out of range",
                "0 < alpha <= 64",
            ));
        }
        if let Some(x) = self.headroom_scale.filter(|x| !(*x >= 0.0 && *x <= 100.0)) {
            return Err(InputError::at_key(
                src,
                &key("headroom_scale"),
                x,
                "out of range",
                "0 to 100 (1 = the SONiC formula)",
            ));
        }
        if let Some(v) = self.priority.filter(|&v| v > 7) {
            return Err(InputError::at_key(
                src,
                &key("priority"),
                v,
                "out of range",
                "0 to 7 (802.1p)",
            ));
        }
        if let Some(v) = self.data_vls.filter(|v| !(2..=8).contains(v)) {
            return Err(InputError::at_key(
                src,
                &key("data_vls"),
                v,
                "out of range",
                "2 to 8",
            ));
        }
        let buffers = [
            ("switch_vl_buffer_bytes", self.switch_vl_buffer_bytes),
            ("nic_vl_buffer_bytes", self.nic_vl_buffer_bytes),
            (
                "untuned.headroom_bytes",
                self.untuned.as_ref().map(|u| u.headroom_bytes),
            ),
        ];
        for (k, b) in buffers {
            if let Some(b) = b.filter(|&b| b == 0 || b > MAX_BYTES) {
                return Err(InputError::at_key(
                    src,
                    &key(k),
                    b,
                    "out of range",
                    "1 B to 2^50 B",
                ));
            }
        }
        Ok(())
    }

    /// The engine's flow control for this profile (`tuned` false: the untuned variant).
    pub fn flow_control(&self, p: &SimParams, tuned: bool) -> Result<FlowControl, ProfileError> {
        match self.kind.as_str() {
            "none" => Ok(FlowControl::None),
            "credits" | "cbfc" => {
                let d = if self.kind == "cbfc" {
                    CreditParams::cbfc()
                } else {
                    CreditParams::default_ib()
                };
                Ok(FlowControl::Credits(CreditParams {
                    switch_vl_buffer_bytes: self
                        .switch_vl_buffer_bytes
                        .unwrap_or(d.switch_vl_buffer_bytes),
                    nic_vl_buffer_bytes: self.nic_vl_buffer_bytes.unwrap_or(d.nic_vl_buffer_bytes),
                    ..d
                }))
            }
            "pfc" => {
                if self.priority.is_some_and(|x| x > 7) {
                    return Err(ProfileError::new(
                        "flow_control.priority",
                        "0 to 7 (802.1p)",
                    ));
                }
                let frame = p.mtu_frame_wire_bytes();
                let mut pp = PfcParams::tuned(p.data_tc, frame);
                if let Some(a) = self.xoff_alpha {
                    pp.xoff = PfcThreshold::Dynamic(a);
                }
                if let Some(s) = self.headroom_scale {
                    pp.headroom = Headroom::Formula { scale: s };
                }
                if let Some(w) = self.watchdog_ms {
                    pp.watchdog = (w > 0).then(|| Time::from_ms(w));
                }
                if !tuned {
                    let u = self.untuned.as_ref().ok_or_else(|| {
                        ProfileError::new(
                            "flow_control.untuned",
                            "the profile has no untuned variant",
                        )
                    })?;
                    pp.headroom = Headroom::Bytes(u.headroom_bytes);
                    pp.watchdog = (u.watchdog_ms > 0).then(|| Time::from_ms(u.watchdog_ms));
                }
                Ok(FlowControl::Pfc(pp))
            }
            other => Err(ProfileError::new(
                "flow_control.kind",
                format!("unknown `{other}` (allowed: credits, pfc, none)"),
            )),
        }
    }
}

/// The engine parameters of a fabric profile: the family's defaults, the profile's packet
/// format and its flow control (`tuned` false: the documented untuned variant).
pub fn from_profile(pr: &Profile, tuned: bool) -> Result<SimParams, ProfileError> {
    let mut p = match pr.family {
        Family::Infiniband => SimParams::ib(),
        Family::Roce => SimParams::roce(),
        Family::Uec => SimParams::uec(),
    };
    p.mtu_bytes = pr.packet.mtu_bytes;
    p.header_bytes = pr.packet.header_bytes;
    p.wire_overhead_bytes = pr.packet.wire_overhead_bytes;
    if let Some(fc) = &pr.flow_control {
        if let Some(v) = fc.data_vls {
            if !(2..=8).contains(&v) {
                return Err(ProfileError::new("flow_control.data_vls", "2 to 8"));
            }
            p.traffic_classes = v;
        }
        p.flow_control = fc.flow_control(&p, tuned)?;
    }
    // Congestion control and routing (`sim::cc_profile`).
    let tuning = if tuned {
        super::cc_profile::Tuning::Tuned
    } else {
        super::cc_profile::Tuning::Untuned
    };
    let line = fabricsim_core::units::BitRate::gbps(pr.ports.rate_gbps as u64);
    super::cc_profile::apply(pr.cc_sections(), tuning, line, &mut p)?;
    if let Some(t) = &pr.transport {
        t.apply(&mut p)?;
    }
    Ok(p)
}

/// [`from_profile`] with its error placed as the profile's (`profile ID`, key `flow_control`).
pub fn sim_params(pr: &Profile, tuned: bool) -> Result<SimParams, InputError> {
    from_profile(pr, tuned).map_err(|problem| InputError {
        file: format!("profile {}", pr.id),
        line: None,
        key: "flow_control".into(),
        value: String::new(),
        problem: problem.to_string(),
        allowed: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles_map_to_their_flow_control() {
        for id in ["ib-ndr", "ib-xdr"] {
            let p = from_profile(&Profile::builtin(id).unwrap(), true).unwrap();
            assert!(matches!(p.flow_control, FlowControl::Credits(_)), "{id}");
            assert_eq!(p.traffic_classes, 4, "{id}: ConnectX NUM_OF_VL = 4");
        }
        for id in ["roce-400g", "roce-800g"] {
            let pr = Profile::builtin(id).unwrap();
            let tuned = from_profile(&pr, true).unwrap();
            let FlowControl::Pfc(t) = tuned.flow_control else {
                panic!("{id}: PFC expected");
            };
            assert_eq!(t.headroom, Headroom::Formula { scale: 1.0 });
            let untuned = from_profile(&pr, false).unwrap();
            let FlowControl::Pfc(u) = untuned.flow_control else {
                panic!("{id}: PFC expected");
            };
            assert!(matches!(u.headroom, Headroom::Bytes(_)) && u.watchdog.is_none());
        }
    }
}
