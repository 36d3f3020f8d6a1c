//! The knobs `fabricsim tune` can search: one row per fabric-profile key, with the fabrics that
//! have it, its range and how the vendor names the setting. A new knob is one row of [`KNOBS`]
//! (and, when it is a new profile key, that key in its table's file).

use crate::profile::Family;

/// How a knob's profile value is written as the vendor's setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VendorUnit {
    /// The same number.
    Same,
    /// x 100 (a percentage).
    Percent,
    /// log2 of the value (SONiC `dynamic_th`: alpha = 2^dynamic_th).
    Log2,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Knob {
    /// The key in `[tune.knobs]`.
    pub name: &'static str,
    /// The profile key it sets, dotted from the top-level table.
    pub path: &'static str,
    pub families: &'static [Family],
    /// Whole numbers only.
    pub integer: bool,
    /// The values allowed, inclusive.
    pub min: f64,
    pub max: f64,
    /// The vendor's name of the setting and how its value is written.
    pub vendor: &'static str,
    pub unit: VendorUnit,
}

const ROCE: &[Family] = &[Family::Roce];
const ETHERNET: &[Family] = &[Family::Roce, Family::Uec];
const IB: &[Family] = &[Family::Infiniband];
const UEC: &[Family] = &[Family::Uec];
const BYTES: f64 = (1u64 << 50) as f64;

const fn row(
    name: &'static str,
    path: &'static str,
    families: &'static [Family],
    (integer, min, max): (bool, f64, f64),
    vendor: &'static str,
    unit: VendorUnit,
) -> Knob {
    Knob {
        name,
        path,
        families,
        integer,
        min,
        max,
        vendor,
        unit,
    }
}

use VendorUnit::{Log2, Percent, Same};

/// Every knob. Vendor names: SONiC `WRED_PROFILE` / `BUFFER_PROFILE` fields (sonic-buildimage
/// files/build_templates/qos_config.j2, buffers_config.j2); ConnectX DCQCN firmware parameters
/// (NVIDIA "DCQCN Parameters", DOC-2790); NCCL environment (NCCL net_ib.cc); IB CC
/// (IBA Vol. 1 annex A10 CongestionControl attributes); UEC 1.0 3.6.17 (ECN, trimming) and
/// 3.6.13 (NSCC).
#[rustfmt::skip]
pub const KNOBS: &[Knob] = &[
    row("ecn_kmin_bytes", "congestion.ecn_kmin_bytes", ETHERNET, (true, 1.0, BYTES),
        "SONiC WRED_PROFILE green_min_threshold (bytes)", Same),
    row("ecn_kmax_bytes", "congestion.ecn_kmax_bytes", ETHERNET, (true, 1.0, BYTES),
        "SONiC WRED_PROFILE green_max_threshold (bytes)", Same),
    row("ecn_pmax", "congestion.ecn_pmax", ETHERNET, (false, 0.0, 1.0),
        "SONiC WRED_PROFILE green_drop_probability (%)", Percent),
    row("qps_per_connection", "congestion.qps_per_connection", ETHERNET, (true, 1.0, 128.0),
        "NCCL_IB_QPS_PER_CONNECTION", Same),
    row("rpg_time_reset_us", "congestion.dcqcn_params.rpg_time_reset_us", ROCE,
        (true, 1.0, 1e6), "ConnectX RPG_TIME_RESET (us)", Same),
    row("rpg_byte_reset", "congestion.dcqcn_params.rpg_byte_reset", ROCE, (true, 0.0, 1e9),
        "ConnectX RPG_BYTE_RESET (64-byte units)", Same),
    row("rpg_ai_rate_mbps", "congestion.dcqcn_params.rpg_ai_rate_mbps", ROCE, (true, 1.0, 1e5),
        "ConnectX RPG_AI_RATE (Mb/s)", Same),
    row("rpg_hai_rate_mbps", "congestion.dcqcn_params.rpg_hai_rate_mbps", ROCE,
        (true, 1.0, 1e6), "ConnectX RPG_HAI_RATE (Mb/s)", Same),
    row("rate_reduce_monitor_period_us", "congestion.dcqcn_params.rate_reduce_monitor_period_us",
        ROCE, (true, 1.0, 1e6), "ConnectX RATE_REDUCE_MONITOR_PERIOD (us)", Same),
    row("min_time_between_cnps_us", "congestion.dcqcn_params.min_time_between_cnps_us", ROCE,
        (true, 0.0, 1e6), "ConnectX MIN_TIME_BETWEEN_CNPS (us)", Same),
    row("dce_tcp_g", "congestion.dcqcn_params.dce_tcp_g", ROCE, (true, 0.0, 1023.0),
        "ConnectX DCE_TCP_G (alpha gain (1024 - g) / 1024)", Same),
    row("dce_tcp_rtt_us", "congestion.dcqcn_params.dce_tcp_rtt_us", ROCE, (true, 1.0, 1e6),
        "ConnectX DCE_TCP_RTT (us)", Same),
    row("xoff_alpha", "flow_control.xoff_alpha", ROCE, (false, 1.0 / 128.0, 64.0),
        "SONiC BUFFER_PROFILE dynamic_th (log2 alpha)", Log2),
    row("headroom_scale", "flow_control.headroom_scale", ROCE, (false, 0.0, 100.0),
        "SONiC BUFFER_PROFILE xoff (x the buffer_headroom_mellanox.lua size)", Same),
    row("ib_cc_threshold_bytes", "ib_cc.threshold_bytes", IB, (true, 1.0, BYTES),
        "IB CC Switch Congestion Setting Threshold (bytes)", Same),
    row("ib_cc_marking_rate", "ib_cc.marking_rate", IB, (true, 0.0, 65535.0),
        "IB CC Switch Congestion Setting Marking_Rate", Same),
    row("ccti_increase", "ib_cc.ccti_increase", IB, (true, 1.0, 127.0),
        "IB CC CA Congestion Setting CCTI_Increase", Same),
    row("ccti_limit", "ib_cc.ccti_limit", IB, (true, 0.0, 127.0),
        "IB CC CA Congestion Setting CCTI_Limit", Same),
    row("ccti_timer_us", "ib_cc.ccti_timer_us", IB, (true, 1.0, 65535.0),
        "IB CC CA Congestion Setting CCTI_Timer (us)", Same),
    row("ar_threshold_bytes", "routing.ar_threshold_bytes", IB, (true, 0.0, BYTES),
        "adaptive routing: messages below stay on the static route (bytes)", Same),
    row("ecn_kmin_bdp", "congestion.ecn_kmin_bdp", UEC, (false, 0.0, 100.0),
        "UEC 1.0 3.6.17 ECN min threshold (x BDP)", Same),
    row("ecn_kmax_bdp", "congestion.ecn_kmax_bdp", UEC, (false, 0.0, 100.0),
        "UEC 1.0 3.6.17 ECN max threshold (x BDP)", Same),
    row("trim_bdp", "congestion.trim_bdp", UEC, (false, 0.0, 100.0),
        "UEC 1.0 3.6.17 packet trimming threshold (x BDP)", Same),
    row("nscc_gamma", "congestion.nscc.gamma", UEC, (false, 0.01, 1.0),
        "UEC 1.0 3.6.13 NSCC multiplicative-decrease gain", Same),
    row("nscc_max_md_jump", "congestion.nscc.max_md_jump", UEC, (false, 0.05, 0.95),
        "UEC 1.0 3.6.13 NSCC smallest factor of one decrease", Same),
    row("nscc_target_qdelay_rtt", "congestion.nscc.target_qdelay_rtt", UEC, (false, 0.05, 10.0),
        "UEC 1.0 3.6.13 NSCC target queueing delay (x base RTT)", Same),
    row("nscc_max_wnd_bdp", "congestion.nscc.max_wnd_bdp", UEC, (false, 0.1, 16.0),
        "UEC 1.0 3.6.13.6 NSCC MaxWnd (x BDP)", Same),
];

/// The knob named `name`.
pub fn knob(name: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.name == name)
}

/// The knob names, for an error's "allowed".
pub fn names() -> String {
    KNOBS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
}

impl Knob {
    /// `v` as the profile writes it (an integer key gets an integer).
    pub fn toml_value(&self, v: f64) -> toml::Value {
        match self.integer {
            true => toml::Value::Integer(v as i64),
            false => toml::Value::Float(v),
        }
    }

    /// Sets the knob to `v` in a profile document (tables created as needed).
    pub fn set(&self, doc: &mut toml::Table, v: f64) {
        let mut t = doc;
        let mut parts = self.path.split('.').peekable();
        while let Some(p) = parts.next() {
            if parts.peek().is_none() {
                t.insert(p.to_string(), self.toml_value(v));
                return;
            }
            let entry = t
                .entry(p.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            let toml::Value::Table(next) = entry else {
                return;
            };
            t = next;
        }
    }

    /// The knob's value in a profile document, when it is set there.
    pub fn get(&self, doc: &toml::Table) -> Option<f64> {
        let mut parts = self.path.split('.');
        let mut v = doc.get(parts.next()?)?;
        for p in parts {
            v = v.as_table()?.get(p)?;
        }
        v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
    }

    /// `v` as the vendor's setting, e.g. `SONiC BUFFER_PROFILE dynamic_th (log2 alpha) = -3`.
    pub fn vendor_setting(&self, v: f64) -> String {
        let x = match self.unit {
            VendorUnit::Same => v,
            VendorUnit::Percent => v * 100.0,
            VendorUnit::Log2 => v.log2(),
        };
        format!("{} = {}", self.vendor, x)
    }

    /// Why `v` is not a value of this knob, if it is not.
    pub fn refuse(&self, v: f64) -> Option<String> {
        if !v.is_finite() || v < self.min || v > self.max {
            return Some(format!("out of range for {}", self.name));
        }
        (self.integer && v.fract() != 0.0).then(|| format!("{} takes whole numbers", self.name))
    }

    /// The allowed values, for an error.
    pub fn allowed(&self) -> String {
        format!(
            "{}{} to {}",
            if self.integer { "whole numbers " } else { "" },
            self.min,
            self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_unique_and_set_and_get_their_profile_key() {
        for (i, k) in KNOBS.iter().enumerate() {
            assert!(KNOBS[..i].iter().all(|o| o.name != k.name), "{}", k.name);
            let mut doc = toml::Table::new();
            k.set(&mut doc, k.min.max(1.0));
            assert_eq!(k.get(&doc), Some(k.min.max(1.0)), "{}", k.name);
        }
        let k = knob("xoff_alpha").unwrap();
        assert_eq!(k.vendor_setting(0.125), format!("{} = -3", k.vendor));
        assert!(knob("ecn_kmin_bytes").unwrap().refuse(1.5).is_some());
        assert!(knob("ecn_pmax").unwrap().refuse(1.5).is_some());
        assert!(knob("ecn_pmax").unwrap().refuse(0.5).is_none());
    }

    #[test]
    fn every_dcqcn_knob_is_a_key_of_the_dcqcn_table() {
        for k in KNOBS.iter().filter(|k| k.path.contains("dcqcn_params")) {
            let key = k.path.rsplit('.').next().unwrap();
            let t: Result<crate::profile_dcqcn::DcqcnKeys, _> =
                toml::from_str(&format!("{key} = 1"));
            assert!(t.is_ok(), "{}", k.name);
        }
    }
}
