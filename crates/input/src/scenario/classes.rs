//! `[classes]`: the fabric's traffic classes, how each port's egress serves them and which are
//! lossless. A message's `class` (`[traffic] class`, a flow's own, a job's) is a label the fabric
//! maps to an engine class: an InfiniBand service level to a virtual lane (`sl_to_vl`, IBA Vol.
//! 1 7.6.6), an Ethernet 802.1Q priority to a traffic class (`priority_to_tc`, IEEE 802.1Q
//! 8.6.6; RoCE, UEC); without a table, one to one. Class 0 carries the ACKs, NAKs and CNPs.
//!
//! ```toml
//! [classes]
//! count = 3                    # 2 to 8: IB data VLs, Ethernet traffic classes (default: the profile's)
//! # RoCE and UEC (IEEE 802.1Qaz ETS, 37.3): strict, or ETS with per-class bandwidth percent
//! scheduling = "ets"           # strict | ets   (InfiniBand: vl_arbitration)
//! ets_percent = [0, 0, 100]    # ets: per class, 0 = strict priority, else its ETS share (sum 100)
//! lossless = [1, 2]            # PFC on these classes (IEEE 802.1Qbb); needs PFC flow control
//! # InfiniBand (IBA Vol. 1 7.6.9): per VL its weight in the high or the low table (64 B units)
//! high_weights_64b = [4, 4, 0]
//! low_weights_64b = [0, 0, 4]
//! high_limit_4kb = 255         # Limit_of_High_Priority, 4 KB units; 255: unlimited
//! sl_to_vl = [1, 1, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]  # InfiniBand: SL 0-15 to a data VL
//! priority_to_tc = [1, 1, 1, 2, 1, 1, 1, 1]                    # Ethernet: priority 0-7 to a TC
//! ```

use serde::Deserialize;

use crate::cc_profile::VlArbitration;
use fabricsim_core::error::{InputError, Source};
use fabricsim_mech::class_map::ClassMap;
use fabricsim_mech::params::{FlowControl, MAX_TC, Scheduling, SimParams};

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClassesSection {
    pub count: Option<u8>,
    pub scheduling: Option<String>,
    pub ets_percent: Option<Vec<u32>>,
    pub lossless: Option<Vec<u8>>,
    pub high_weights_64b: Option<Vec<u32>>,
    pub low_weights_64b: Option<Vec<u32>>,
    pub high_limit_4kb: Option<u8>,
    pub sl_to_vl: Option<Vec<u8>>,
    pub priority_to_tc: Option<Vec<u8>>,
}

/// ETS's DWRR quantum per percent of bandwidth (the weights' ratio is what the standard sets;
/// 1 KB per percent keeps a 50% class's turn at about 12 full frames, an estimate).
const ETS_QUANTUM_PER_PERCENT: u32 = 1024;

impl ClassesSection {
    /// Applies the section to `p`, the parameters of a fabric of `family` (`infiniband`, `roce`,
    /// `uec`); every error names its key.
    pub fn apply(&self, src: &Source, family: &str, p: &mut SimParams) -> Result<(), InputError> {
        // A missing key is reported at the section's line.
        let err = |k: &str, v: String, problem: &str, allowed: String| {
            let mut e = InputError::at_key(src, &format!("classes.{k}"), v, problem, allowed);
            e.line = e.line.or_else(|| src.locate_key("classes"));
            e
        };
        let ib = family == "infiniband";
        let before = p.traffic_classes;
        if let Some(n) = self.count {
            if !(2..=MAX_TC as u8).contains(&n) {
                return Err(err(
                    "count",
                    n.to_string(),
                    "out of range",
                    "2 to 8 (class 0 carries ACKs)".into(),
                ));
            }
            p.traffic_classes = n;
        }
        let n = p.traffic_classes as usize;
        let vl_keys = [
            ("high_weights_64b", self.high_weights_64b.is_some()),
            ("low_weights_64b", self.low_weights_64b.is_some()),
            ("high_limit_4kb", self.high_limit_4kb.is_some()),
        ];
        let default = if ib { "vl_arbitration" } else { "" };
        let how = self.scheduling.as_deref().unwrap_or(default);
        let allowed = if ib {
            "vl_arbitration (IBA 7.6.9)"
        } else {
            "strict, ets (IEEE 802.1Qaz)"
        };
        match how {
            "vl_arbitration" if ib => {
                let given = vl_keys.iter().filter(|k| k.1).count();
                if given == 0 && p.traffic_classes == before {
                    // The profile's tables stand.
                } else if given < 3 {
                    let missing = vl_keys.iter().find(|k| !k.1).expect("one").0;
                    return Err(err(
                        missing,
                        "(missing)".into(),
                        "VL arbitration needs both tables and the high limit for the VLs",
                        format!("{missing} for the {n} VLs of classes.count"),
                    ));
                } else {
                    let v = VlArbitration {
                        high_weights_64b: self.high_weights_64b.clone().expect("given"),
                        low_weights_64b: self.low_weights_64b.clone().expect("given"),
                        high_limit_4kb: self.high_limit_4kb.expect("given"),
                    };
                    p.scheduling = v.scheduling(n).map_err(|e| {
                        let key = e.field.trim_start_matches("vl_arbitration.");
                        let value = format!("{:?}", self.high_weights_64b);
                        err(key, value, &e.problem, e.allowed)
                    })?;
                }
            }
            "strict" | "ets" | "" if !ib => {
                if let Some((k, _)) = vl_keys.iter().find(|k| k.1) {
                    return Err(err(
                        k,
                        "(set)".into(),
                        "VL arbitration is InfiniBand's",
                        format!("on {family}: scheduling and ets_percent"),
                    ));
                }
                if how == "strict" {
                    p.scheduling = Scheduling::StrictPriority;
                }
                if how == "ets" {
                    p.scheduling = self.ets(src, n, p.mtu_frame_wire_bytes())?;
                } else if self.ets_percent.is_some() {
                    return Err(err(
                        "ets_percent",
                        "(set)".into(),
                        "applies to scheduling = \"ets\"",
                        "scheduling = \"ets\"".into(),
                    ));
                }
            }
            other => {
                return Err(err(
                    "scheduling",
                    format!("\"{other}\""),
                    &format!("not a scheduling of {family}"),
                    allowed.into(),
                ));
            }
        }
        if let Some(list) = &self.lossless {
            let FlowControl::Pfc(pp) = &mut p.flow_control else {
                let why = if ib {
                    "InfiniBand's credits make every VL lossless"
                } else {
                    "this fabric runs without PFC"
                };
                return Err(err(
                    "lossless",
                    format!("{list:?}"),
                    why,
                    "no lossless key, or [sim] flow_control = \"pfc\" on Ethernet".into(),
                ));
            };
            let mut mask = 0u8;
            for &c in list {
                if c as usize >= n {
                    return Err(err(
                        "lossless",
                        c.to_string(),
                        "beyond the fabric's classes",
                        format!("0 to {}", n - 1),
                    ));
                }
                mask |= 1 << c;
            }
            pp.lossless = mask;
        }
        self.class_map(&err, ib, family, n, p)?;
        if p.data_tc as usize >= n {
            return Err(err(
                "count",
                n.to_string(),
                "leaves out the fabric's data class",
                format!("{} or more", p.data_tc + 1),
            ));
        }
        Ok(())
    }

    /// `sl_to_vl` (InfiniBand: 16 SLs, IBA Vol. 1 7.6.6) or `priority_to_tc` (Ethernet: 8
    /// priorities, IEEE 802.1Q 8.6.6), each entry one of the `n` engine classes.
    fn class_map(
        &self,
        err: &dyn Fn(&str, String, &str, String) -> InputError,
        ib: bool,
        family: &str,
        n: usize,
        p: &mut SimParams,
    ) -> Result<(), InputError> {
        let (key, table, labels, other) = match ib {
            true => (
                "sl_to_vl",
                &self.sl_to_vl,
                16,
                ("priority_to_tc", &self.priority_to_tc),
            ),
            false => (
                "priority_to_tc",
                &self.priority_to_tc,
                8,
                ("sl_to_vl", &self.sl_to_vl),
            ),
        };
        if other.1.is_some() {
            return Err(err(
                other.0,
                "(set)".into(),
                &format!("not a table of {family}"),
                format!("{key} on {family}"),
            ));
        }
        let Some(t) = table else {
            return Ok(());
        };
        if t.len() != labels {
            return Err(err(
                key,
                format!("{t:?}"),
                &format!("{} entries", t.len()),
                format!("{labels} entries, one engine class per label"),
            ));
        }
        if let Some(&c) = t.iter().find(|&&c| c as usize >= n) {
            return Err(err(
                key,
                c.to_string(),
                "beyond the fabric's classes",
                format!("0 to {} (classes.count)", n - 1),
            ));
        }
        p.class_map = Some(ClassMap::new(t));
        Ok(())
    }

    /// ETS: strict classes first (served in turn), the others by DWRR with their percents.
    fn ets(&self, src: &Source, n: usize, frame: u64) -> Result<Scheduling, InputError> {
        let key = "classes.ets_percent";
        let Some(pct) = &self.ets_percent else {
            let mut e = InputError::at_key(
                src,
                key,
                "(missing)",
                "ETS needs each class's share",
                format!("{n} percents, 0 for a strict class"),
            );
            e.line = src.locate_key("classes");
            return Err(e);
        };
        let sum: u32 = pct.iter().sum();
        if pct.len() != n || sum != 100 {
            return Err(InputError::at_key(
                src,
                key,
                format!("{pct:?}"),
                format!("{} percents summing to {sum}", pct.len()),
                format!(
                    "{n} percents (one per class), the ETS ones summing to 100 (802.1Qaz 37.3)"
                ),
            ));
        }
        let mut high = 0u8;
        let mut weight_bytes = [0u32; MAX_TC];
        for (c, &w) in pct.iter().enumerate() {
            if w == 0 {
                high |= 1 << c;
                weight_bytes[c] = frame as u32;
            } else {
                weight_bytes[c] = w * ETS_QUANTUM_PER_PERCENT;
            }
        }
        Ok(Scheduling::VlArb {
            high,
            weight_bytes,
            high_limit_bytes: u32::MAX,
        })
    }
}
