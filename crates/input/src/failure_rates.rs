//! Component failure rates and a job's recovery costs (`data/reliability/failure-rates.toml`,
//! every number sourced or an estimate): MTBF per device kind and per medium class, link flaps,
//! and the detection, restart, restore and checkpoint times.

use serde::Deserialize;

use crate::catalog::MediumClass;
use fabricsim_core::error::{InputError, Source};

const FILE: (&str, &str) = (
    "data/reliability/failure-rates.toml",
    include_str!("../../../data/reliability/failure-rates.toml"),
);

/// The kinds of device a plan counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    Gpu,
    /// The host without its GPUs and NICs.
    Server,
    Nic,
    Switch,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub kind: DeviceKind,
    pub mtbf_hours: f64,
}

/// One cable assembly or transceiver module of a class.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediumRate {
    pub class: MediumClass,
    pub mtbf_hours: f64,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flaps {
    pub per_link_day: f64,
}

/// Seconds an interruption and a checkpoint cost the job.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobCosts {
    pub detect_s: f64,
    pub restart_s: f64,
    pub restore_s: f64,
    /// The checkpoint stall when the job's model is not known.
    pub checkpoint_s: f64,
    /// Storage write bandwidth per GPU of the cluster, when the scenario has no `[storage]`.
    #[serde(rename = "storage_GBps_per_gpu")]
    pub storage_gbps_per_gpu: f64,
}

impl JobCosts {
    /// From a failure to training again: detection, restart and restore.
    pub fn recovery_s(&self) -> f64 {
        self.detect_s + self.restart_s + self.restore_s
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureRates {
    pub device: Vec<Device>,
    pub medium: Vec<MediumRate>,
    pub flaps: Flaps,
    pub job: JobCosts,
}

impl FailureRates {
    pub fn device(&self, kind: DeviceKind) -> f64 {
        self.device
            .iter()
            .find(|d| d.kind == kind)
            .map_or(f64::INFINITY, |d| d.mtbf_hours)
    }

    /// MTBF of one unit of `class`; `None` when the table has no row for it.
    pub fn medium(&self, class: MediumClass) -> Option<f64> {
        self.medium
            .iter()
            .find(|m| m.class == class)
            .map(|m| m.mtbf_hours)
    }
}

/// The shipped table, checked.
pub fn table() -> Result<FailureRates, InputError> {
    parse(&Source::new(FILE.0, FILE.1))
}

pub fn parse(src: &Source) -> Result<FailureRates, InputError> {
    let f: FailureRates = toml::from_str(&src.text).map_err(|e| InputError::from_toml(src, &e))?;
    let mtbfs = f
        .device
        .iter()
        .enumerate()
        .map(|(i, d)| (format!("device[{i}].mtbf_hours"), d.mtbf_hours))
        .chain(
            f.medium
                .iter()
                .enumerate()
                .map(|(i, m)| (format!("medium[{i}].mtbf_hours"), m.mtbf_hours)),
        );
    for (key, v) in mtbfs {
        if !(v.is_finite() && v > 0.0) {
            return Err(InputError::at_key(
                src,
                &key,
                v,
                "not a mean time between failures",
                "a positive number of hours",
            ));
        }
    }
    let j = &f.job;
    let costs = [
        ("job.detect_s", j.detect_s),
        ("job.restart_s", j.restart_s),
        ("job.restore_s", j.restore_s),
        ("job.checkpoint_s", j.checkpoint_s),
        ("flaps.per_link_day", f.flaps.per_link_day),
    ];
    if !(j.storage_gbps_per_gpu.is_finite() && j.storage_gbps_per_gpu > 0.0) {
        return Err(InputError::at_key(
            src,
            "job.storage_GBps_per_gpu",
            j.storage_gbps_per_gpu,
            "not a bandwidth",
            "a positive number of GB/s",
        ));
    }
    for (key, v) in costs {
        if !(v.is_finite() && v >= 0.0) {
            return Err(InputError::at_key(
                src,
                key,
                v,
                "out of range",
                "a number >= 0",
            ));
        }
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_cites_a_source_or_says_estimate() {
        for line in FILE.1.lines() {
            let code = line.split('#').next().unwrap_or("");
            if code.contains('=') && code.chars().any(|c| c.is_ascii_digit()) && !code.contains('"')
            {
                let comment = line.split_once('#').map(|x| x.1).unwrap_or("");
                assert!(
                    ["[V", "[S", "[E"].iter().any(|t| comment.contains(t)),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn every_device_and_medium_class_has_a_rate_and_bad_entries_are_located() {
        let t = table().unwrap();
        for k in [
            DeviceKind::Gpu,
            DeviceKind::Server,
            DeviceKind::Nic,
            DeviceKind::Switch,
        ] {
            assert!(t.device(k).is_finite(), "{k:?}");
        }
        for c in MediumClass::ALL {
            assert!(t.medium(c).is_some(), "{c:?}");
        }
        let bad = FILE.1.replacen("mtbf_hours = 50000", "mtbf_hours = -5", 1);
        let e = parse(&Source::new("r.toml", bad)).unwrap_err().to_string();
        assert!(
            e.contains("r.toml") && e.contains("device[0].mtbf_hours") && e.contains("positive"),
            "{e}"
        );
    }
}
