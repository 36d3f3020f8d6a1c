//! Fabric profiles: which link layer, port rate, switch and NIC, and the packet format.
//!
//! Profiles are data (`data/profiles/*.toml`, embedded). A profile is a set of sub-tables;
//! `[ports]`, `[packet]` and `[comm]` exist now, and the issues that model flow control, congestion
//! control, routing and transport add their own sub-tables (and fields here) without touching
//! these.

use serde::Deserialize;

use fabricsim_core::error::{InputError, Source};

/// The shipped profiles: (id, file name, text).
const BUILTIN: [(&str, &str, &str); 9] = [
    (
        "ib-ndr",
        "data/profiles/ib-ndr.toml",
        include_str!("../../../data/profiles/ib-ndr.toml"),
    ),
    (
        "ib-xdr",
        "data/profiles/ib-xdr.toml",
        include_str!("../../../data/profiles/ib-xdr.toml"),
    ),
    (
        "roce-400g",
        "data/profiles/roce-400g.toml",
        include_str!("../../../data/profiles/roce-400g.toml"),
    ),
    (
        "roce-800g",
        "data/profiles/roce-800g.toml",
        include_str!("../../../data/profiles/roce-800g.toml"),
    ),
    (
        "roce-400g-hpcc",
        "data/profiles/roce-400g-hpcc.toml",
        include_str!("../../../data/profiles/roce-400g-hpcc.toml"),
    ),
    (
        "roce-400g-ar",
        "data/profiles/roce-400g-ar.toml",
        include_str!("../../../data/profiles/roce-400g-ar.toml"),
    ),
    (
        "roce-800g-ar",
        "data/profiles/roce-800g-ar.toml",
        include_str!("../../../data/profiles/roce-800g-ar.toml"),
    ),
    (
        "uec-400g",
        "data/profiles/uec-400g.toml",
        include_str!("../../../data/profiles/uec-400g.toml"),
    ),
    (
        "uec-800g",
        "data/profiles/uec-800g.toml",
        include_str!("../../../data/profiles/uec-800g.toml"),
    ),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Infiniband,
    Roce,
    /// Ultra Ethernet (UEC 1.0): Ethernet switches, the UET transport at the NICs.
    Uec,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Infiniband => "infiniband",
            Family::Roce => "roce",
            Family::Uec => "uec",
        }
    }
    /// The switch/NIC link layer this family runs on.
    pub fn link_layer(self) -> crate::catalog::LinkLayer {
        match self {
            Family::Infiniband => crate::catalog::LinkLayer::Infiniband,
            Family::Roce | Family::Uec => crate::catalog::LinkLayer::Ethernet,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ports {
    /// Rate of every switch port and NIC port.
    pub rate_gbps: u32,
    /// Default switch (catalog id).
    pub switch: String,
    /// Default NIC (catalog id).
    pub nic: String,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Packet {
    /// Largest payload per packet.
    pub mtu_bytes: u32,
    /// Per-packet header and trailer bytes (IB: LRH+BTH+ICRC+VCRC; RoCEv2: Eth+IP+UDP+BTH+
    /// ICRC+FCS).
    pub header_bytes: u32,
    /// Extra wire bytes per packet that are not a header (Ethernet preamble, SFD and IFG).
    pub wire_overhead_bytes: u32,
}

/// Estimates for the closed-form communication model (`workload::comm_model`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Comm {
    /// Per-message latency (alpha) of a collective step across the fabric, microseconds.
    pub message_latency_us: f64,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub family: Family,
    /// The shipped profile this one starts from (`profile_extends`: the tables written here
    /// replace the base's, the others are inherited).
    pub extends: Option<String>,
    pub ports: Ports,
    pub packet: Packet,
    pub comm: Comm,
    /// Link-level flow control (`sim::profile_fc`; `profile_fc::from_profile` maps it).
    pub flow_control: Option<crate::profile_fc::FlowControlProfile>,
    /// Congestion control, routing and IB CC sub-tables (`sim::cc_profile`).
    pub congestion: Option<crate::cc_profile::Congestion>,
    pub congestion_untuned: Option<crate::cc_profile::Congestion>,
    pub routing: Option<crate::cc_profile::Routing>,
    pub ib_cc: Option<crate::cc_profile::IbCc>,
    /// Link-failure recovery delays (`sim::reroute`).
    pub reroute: Option<fabricsim_mech::reroute::RerouteProfile>,
    pub vl_arbitration: Option<crate::cc_profile::VlArbitration>,
    /// The NICs' loss recovery and timeout when not the routing's default (UEC: RUD).
    pub transport: Option<crate::cc_profile::TransportTable>,
}

impl Profile {
    /// Ids of the shipped profiles.
    pub fn ids() -> Vec<&'static str> {
        BUILTIN.iter().map(|b| b.0).collect()
    }

    /// A shipped profile by id. Errors are `(problem, allowed)` for the caller to place.
    pub fn builtin(id: &str) -> Result<Profile, (String, String)> {
        let allowed = Profile::ids().join(", ");
        let Some((_, name, text)) = BUILTIN.iter().find(|b| b.0 == id) else {
            return Err((format!("unknown fabric profile `{id}`"), allowed));
        };
        Profile::parse(&Source::new(*name, *text)).map_err(|e| (e.to_string(), allowed))
    }

    /// A shipped profile's file name and text as shipped (its `extends` not composed in).
    pub fn shipped(id: &str) -> Option<(&'static str, &'static str)> {
        BUILTIN.iter().find(|b| b.0 == id).map(|b| (b.1, b.2))
    }

    /// The text of a shipped profile with its `extends` composed in (`profile_extends`).
    pub fn builtin_text(id: &str) -> Option<String> {
        let (_, name, text) = BUILTIN.iter().find(|b| b.0 == id)?;
        let src = Source::new(*name, *text);
        Some(
            Profile::composed(&src)
                .expect("a shipped profile composes")
                .text,
        )
    }

    /// `src` with the tables of the profile it `extends` appended (`profile_extends`); `src`
    /// itself when it extends none.
    fn composed(src: &Source) -> Result<Source, InputError> {
        let table: toml::Table =
            toml::from_str(&src.text).map_err(|e| InputError::from_toml(src, &e))?;
        let Some(base) = table.get("extends") else {
            return Ok(src.clone());
        };
        let allowed = format!("a shipped profile: {}", Profile::ids().join(", "));
        let id = base.as_str().unwrap_or_default();
        let text = match Profile::builtin_text(id) {
            Some(t) if table.get("id").and_then(|v| v.as_str()) != Some(id) => t,
            Some(_) => {
                return Err(InputError::at_key(
                    src,
                    "extends",
                    base,
                    "a profile cannot extend itself",
                    allowed,
                ));
            }
            None => {
                return Err(InputError::at_key(
                    src,
                    "extends",
                    base,
                    "is not a shipped profile",
                    allowed,
                ));
            }
        };
        Ok(Source::new(
            src.name.clone(),
            crate::profile_extends::compose(&src.text, &text),
        ))
    }

    /// Parses a profile file (composing the profile it `extends`, if any).
    pub fn parse(src: &Source) -> Result<Profile, InputError> {
        let src = &Profile::composed(src)?;
        let p: Profile = toml::from_str(&src.text).map_err(|e| InputError::from_toml(src, &e))?;
        for (key, v) in [
            ("ports.rate_gbps", p.ports.rate_gbps),
            ("packet.mtu_bytes", p.packet.mtu_bytes),
        ] {
            if v == 0 {
                return Err(InputError::at_key(src, key, v, "must be positive", "> 0"));
            }
        }
        if let Some(fc) = &p.flow_control {
            fc.check(src)?;
        }
        let alpha = p.comm.message_latency_us;
        if !(alpha.is_finite() && alpha >= 0.0) {
            return Err(InputError::at_key(
                src,
                "comm.message_latency_us",
                alpha,
                "is not a latency",
                "a number of microseconds >= 0",
            ));
        }
        Ok(p)
    }

    /// The congestion-control and routing sections, for `sim::cc_profile::apply`.
    pub fn cc_sections(&self) -> crate::cc_profile::CcSections<'_> {
        crate::cc_profile::CcSections {
            congestion: self.congestion.as_ref(),
            congestion_untuned: self.congestion_untuned.as_ref(),
            routing: self.routing.as_ref(),
            ib_cc: self.ib_cc.as_ref(),
            vl_arbitration: self.vl_arbitration.as_ref(),
        }
    }

    /// Wire bytes of one full packet: payload + headers + preamble/IFG.
    pub fn wire_bytes(&self, payload: u32) -> u32 {
        payload + self.packet.header_bytes + self.packet.wire_overhead_bytes
    }

    /// Payload bytes per second of one port sending full-MTU packets: line rate x MTU / wire
    /// bytes per packet.
    pub fn payload_bytes_per_s(&self) -> f64 {
        let mtu = self.packet.mtu_bytes;
        self.ports.rate_gbps as f64 * 1e9 / 8.0 * mtu as f64 / self.wire_bytes(mtu) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_profiles_parse_and_reference_catalog_items() {
        let cat = crate::catalog::Catalog::builtin().unwrap();
        for id in Profile::ids() {
            let p = Profile::builtin(id).unwrap();
            assert_eq!(p.id, id);
            let sw = cat.switch(&p.ports.switch).unwrap();
            assert!(sw.mode(p.ports.rate_gbps).is_some(), "{id}");
            assert_eq!(sw.family, p.family.link_layer(), "{id}");
            let nic = cat.nic(&p.ports.nic).unwrap();
            assert_eq!(nic.port_gbps, p.ports.rate_gbps, "{id}");
        }
    }

    /// IB: LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B; RoCEv2: Eth 14 + IPv4 20 + UDP 8 + BTH 12 +
    /// ICRC 4 + FCS 4 = 62 B, plus 20 B preamble/SFD/IFG (IEEE 802.3).
    #[test]
    fn header_bytes_match_the_header_arithmetic() {
        let ib = Profile::builtin("ib-ndr").unwrap();
        assert_eq!(ib.wire_bytes(4096), 4096 + 8 + 12 + 4 + 2);
        let roce = Profile::builtin("roce-400g").unwrap();
        assert_eq!(roce.wire_bytes(4096), 4096 + 14 + 20 + 8 + 12 + 4 + 4 + 20);
    }

    /// Every number in the shipped profiles carries a source tag in its comment.
    #[test]
    fn every_profile_number_cites_a_source() {
        for (_, name, text) in BUILTIN {
            for line in text.lines() {
                let code = line.split('#').next().unwrap_or("");
                if code.contains('=')
                    && code.chars().any(|c| c.is_ascii_digit())
                    && !code.contains('"')
                {
                    let comment = line.split_once('#').map(|x| x.1).unwrap_or("");
                    assert!(
                        ["[V", "[S", "[E", "[U", "[P"]
                            .iter()
                            .any(|t| comment.contains(t)),
                        "{name}: {line}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_user_profile_file_parses_and_bad_ones_are_located() {
        let text = BUILTIN[0].2.replace("id = \"ib-ndr\"", "id = \"my-ndr\"");
        let p = Profile::parse(&Source::new("my.toml", text)).unwrap();
        assert_eq!(p.id, "my-ndr");
        let bad = BUILTIN[0]
            .2
            .replace("[packet]", "[packet]\nflow_control = 1");
        let e = Profile::parse(&Source::new("my.toml", bad)).unwrap_err();
        assert_eq!(e.key, "packet.flow_control");
        assert!(e.line.is_some());
    }

    #[test]
    fn unknown_profiles_are_clear_errors() {
        let (p, allowed) = Profile::builtin("fddi").unwrap_err();
        assert!(p.contains("unknown"), "{p}");
        assert!(allowed.contains("roce-800g") && allowed.contains("uec-800g"));
    }

    /// UEC 1.0 profiles: Ethernet switches and NICs, lossy, sprayed; uec-800g inherits
    /// uec-400g's tables except its ports.
    #[test]
    fn uec_profiles_extend_and_stay_lossy() {
        let (a, b) = (
            Profile::builtin("uec-400g").unwrap(),
            Profile::builtin("uec-800g").unwrap(),
        );
        assert_eq!((a.family, b.family), (Family::Uec, Family::Uec));
        assert_eq!((a.ports.rate_gbps, b.ports.rate_gbps), (400, 800));
        assert_eq!(
            (a.packet.clone(), a.congestion.clone()),
            (b.packet, b.congestion)
        );
        assert_eq!(a.flow_control.unwrap().kind, "none");
    }

    #[test]
    fn a_user_profile_extends_a_shipped_one_and_its_errors_name_its_own_lines() {
        let text = "id = \"my-roce\"\nname = \"mine\"\nfamily = \"roce\"\nextends = \"roce-400g\"\n\n[ports]\nrate_gbps = 200\nswitch = \"sn5600\"\nnic = \"cx7\"\n";
        let p = Profile::parse(&Source::new("my.toml", text)).unwrap();
        let base = Profile::builtin("roce-400g").unwrap();
        assert_eq!(p.ports.rate_gbps, 200);
        assert_eq!(
            (p.id.as_str(), p.extends.as_deref()),
            ("my-roce", Some("roce-400g"))
        );
        assert_eq!(
            p.flow_control, base.flow_control,
            "tables not written are inherited"
        );
        assert_eq!(p.congestion, base.congestion);
        let bad = text.replace("rate_gbps = 200", "rate_gbps = 200\nspeed = 1");
        let e = Profile::parse(&Source::new("my.toml", bad)).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            ("my.toml", Some(8), "ports.speed")
        );
        let zero = text.replace("rate_gbps = 200", "rate_gbps = 0");
        let e = Profile::parse(&Source::new("my.toml", zero)).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(7), "ports.rate_gbps"));
        for (base, problem) in [
            ("fddi", "not a shipped profile"),
            ("my-roce", "not a shipped"),
        ] {
            let t = text.replace("extends = \"roce-400g\"", &format!("extends = \"{base}\""));
            let e = Profile::parse(&Source::new("my.toml", t)).unwrap_err();
            assert_eq!((e.line, e.key.as_str()), (Some(4), "extends"), "{base}");
            assert!(
                e.problem.contains(problem) && e.allowed.contains("roce-400g-hpcc"),
                "{e}"
            );
        }
        let own = text.replace("id = \"my-roce\"", "id = \"roce-400g\"");
        let e = Profile::parse(&Source::new("my.toml", own)).unwrap_err();
        assert!(e.problem.contains("itself"), "{e}");
    }
}
