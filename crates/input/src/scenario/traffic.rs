//! `[traffic]`: what `fabricsim sim` offers the fabric.
//!
//! ```toml
//! [traffic]
//! kind = "permutation"   # permutation | incast | all_to_all | uniform | list | ns3 | htsim | chakra
//! bytes = "2MB"          # permutation, incast, all_to_all
//! senders = 127          # incast
//! dst = 0                # incast
//! load = 0.3             # uniform: fraction of the host link rate
//! duration = "1ms"       # uniform
//! sizes = "fixed"        # uniform: fixed (bytes) | uniform (size_min, size_max) | cdf (size_cdf)
//! size_cdf = [[1000, 0.0], [2000, 0.5], [10000, 1.0]]
//! flow_file = "x.flow.txt"                                   # ns3, htsim (relative to the scenario)
//! start_unit = "us"      # htsim: the connection matrix's start unit, us (uet-htsim) or ps (csg-htsim)
//! trace_files = "step.{rank}.et"  # chakra: one Chakra trace per GPU rank, `{rank}` its number
//! flows = [{ src = 0, dst = 1, bytes = "1MB", start = "0us", class = 2 }]  # list
//! class = 1              # traffic class of every message (a flow's own `class` wins);
//!                        # 0 to the fabric's traffic classes - 1; default: its data class.
//!                        # ns3 flow files give it per flow in the priority-group column.
//! ```

use serde::Deserialize;

use super::value::{SizeValue, in_range, time};
use crate::io::htsim_cm::StartUnit;
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::traffic::{Flow, SizeDist, Traffic};
use fabricsim_core::units::Time;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrafficSection {
    pub kind: String,
    pub bytes: Option<SizeValue>,
    pub senders: Option<u32>,
    pub dst: Option<u32>,
    pub load: Option<f64>,
    pub duration: Option<String>,
    pub sizes: Option<String>,
    pub size_min: Option<SizeValue>,
    pub size_max: Option<SizeValue>,
    pub size_cdf: Option<Vec<(u64, f64)>>,
    pub flow_file: Option<String>,
    pub start_unit: Option<String>,
    pub trace_files: Option<String>,
    pub flows: Option<Vec<FlowEntry>>,
    pub class: Option<u8>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowEntry {
    pub src: u32,
    pub dst: u32,
    pub bytes: SizeValue,
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub class: Option<u8>,
}

/// The traffic asked for: generated, or an ns-3 flow file to read against the topology.
#[derive(Clone, Debug, PartialEq)]
pub enum TrafficSource {
    /// Generated traffic and the class of its messages that name none.
    Generated(Traffic, Option<u8>),
    Ns3File(String),
    /// An htsim connection matrix (`io::htsim_cm`) and the unit of its start times.
    HtsimFile(String, StartUnit),
    /// Chakra execution traces (`io::chakra`): the path pattern, `{rank}` standing for the rank.
    Chakra(String),
}

const KINDS: &str = "permutation, incast, all_to_all, uniform, list, ns3, htsim, chakra";

/// Checks a message's class label against the fabric's `classes` labels (`SimParams::class_labels`).
fn check_class(
    src: &Source,
    key: &str,
    line: Option<usize>,
    class: u8,
    classes: u8,
) -> Result<u8, InputError> {
    if class < classes {
        return Ok(class);
    }
    let mut e = InputError::at_key(
        src,
        key,
        class,
        format!("beyond the fabric's {classes} class labels"),
        format!(
            "0 to {} (the fabric's traffic classes, or the labels of [classes] sl_to_vl or \
             priority_to_tc)",
            classes - 1
        ),
    );
    if line.is_some() {
        e.line = line;
    }
    Err(e)
}

/// The line where the `i`-th entry of `traffic.flows` starts: its `{` in an inline array, or
/// its `[[traffic.flows]]` header.
fn flow_line(src: &Source, i: usize) -> Option<usize> {
    let lines: Vec<&str> = src.text.lines().collect();
    let headers: Vec<usize> = (0..lines.len())
        .filter(|&l| lines[l].trim().starts_with("[[traffic.flows]]"))
        .collect();
    if !headers.is_empty() {
        return headers.get(i).map(|l| l + 1);
    }
    let first = src.locate_key("traffic.flows")?;
    let mut seen = 0;
    for (l, text) in lines.iter().enumerate().skip(first - 1) {
        for _ in text.matches('{') {
            if seen == i {
                return Some(l + 1);
            }
            seen += 1;
        }
    }
    None
}

impl TrafficSection {
    /// The traffic asked for; classes are checked against the fabric's `classes` classes.
    pub fn resolve(&self, src: &Source, classes: u8) -> Result<TrafficSource, InputError> {
        let key = |k: &str| format!("traffic.{k}");
        let need = |present: bool, k: &str, what: &str| -> Result<(), InputError> {
            if present {
                Ok(())
            } else {
                Err(InputError::at_key(
                    src,
                    "traffic.kind",
                    &self.kind,
                    format!("kind {} needs `{k}`", self.kind),
                    what,
                ))
            }
        };
        // Keys a kind uses; any other key set is an error, so a typo never goes unnoticed.
        let used: &[&str] = match self.kind.as_str() {
            "permutation" | "all_to_all" => &["bytes", "class"],
            "incast" => &["bytes", "senders", "dst", "class"],
            "uniform" => &[
                "load", "duration", "sizes", "bytes", "size_min", "size_max", "size_cdf", "class",
            ],
            "list" => &["flows", "class"],
            "ns3" => &["flow_file"],
            "htsim" => &["flow_file", "start_unit"],
            "chakra" => &["trace_files"],
            other => {
                return Err(InputError::at_key(
                    src,
                    "traffic.kind",
                    format!("\"{other}\""),
                    "unknown traffic kind",
                    KINDS,
                ));
            }
        };
        let set = [
            ("bytes", self.bytes.is_some()),
            ("senders", self.senders.is_some()),
            ("dst", self.dst.is_some()),
            ("load", self.load.is_some()),
            ("duration", self.duration.is_some()),
            ("sizes", self.sizes.is_some()),
            ("size_min", self.size_min.is_some()),
            ("size_max", self.size_max.is_some()),
            ("size_cdf", self.size_cdf.is_some()),
            ("flow_file", self.flow_file.is_some()),
            ("start_unit", self.start_unit.is_some()),
            ("trace_files", self.trace_files.is_some()),
            ("flows", self.flows.is_some()),
            ("class", self.class.is_some()),
        ];
        for (k, present) in set {
            if present && !used.contains(&k) {
                return Err(InputError::at_key(
                    src,
                    &key(k),
                    "(set)",
                    format!("not used by traffic kind {}", self.kind),
                    format!("for {}: {}", self.kind, used.join(", ")),
                ));
            }
        }
        let bytes = |s: &Self| -> Result<u64, InputError> {
            need(s.bytes.is_some(), "bytes", "bytes = \"2MB\"")?;
            let b = s
                .bytes
                .as_ref()
                .expect("checked")
                .bytes(src, "traffic.bytes")?;
            in_range(src, "traffic.bytes", b, 1, u64::MAX, "at least 1 byte")
        };
        let t = match self.kind.as_str() {
            "permutation" => Traffic::Permutation {
                bytes: bytes(self)?,
            },
            "all_to_all" => Traffic::AllToAll {
                bytes: bytes(self)?,
            },
            "incast" => {
                need(self.senders.is_some(), "senders", "senders = 127")?;
                need(self.dst.is_some(), "dst", "dst = 0")?;
                Traffic::Incast {
                    senders: self.senders.expect("checked"),
                    dst: self.dst.expect("checked"),
                    bytes: bytes(self)?,
                }
            }
            "uniform" => {
                need(self.load.is_some(), "load", "load = 0.3")?;
                need(self.duration.is_some(), "duration", "duration = \"1ms\"")?;
                let load = self.load.expect("checked");
                if !(load > 0.0 && load <= 1.0) {
                    return Err(InputError::at_key(
                        src,
                        "traffic.load",
                        load,
                        "out of range",
                        "0 < load <= 1",
                    ));
                }
                let duration = time(
                    src,
                    "traffic.duration",
                    self.duration.as_deref().expect("checked"),
                )?;
                let sizes = match self.sizes.as_deref().unwrap_or("fixed") {
                    "fixed" => SizeDist::Fixed(bytes(self)?),
                    "uniform" => {
                        need(
                            self.size_min.is_some() && self.size_max.is_some(),
                            "size_min and size_max",
                            "size_min = \"1KB\", size_max = \"1MB\"",
                        )?;
                        let min = self
                            .size_min
                            .as_ref()
                            .expect("checked")
                            .bytes(src, "traffic.size_min")?;
                        let max = self
                            .size_max
                            .as_ref()
                            .expect("checked")
                            .bytes(src, "traffic.size_max")?;
                        if min == 0 || min > max {
                            return Err(InputError::at_key(
                                src,
                                "traffic.size_max",
                                max,
                                "must be at least size_min, and size_min at least 1",
                                "1 <= size_min <= size_max",
                            ));
                        }
                        SizeDist::Uniform { min, max }
                    }
                    "cdf" => {
                        need(
                            self.size_cdf.is_some(),
                            "size_cdf",
                            "size_cdf = [[bytes, cumulative probability], ...]",
                        )?;
                        let pts = self.size_cdf.clone().expect("checked");
                        let ok = pts.len() >= 2
                            && pts.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
                            && pts.iter().all(|p| (0.0..=1.0).contains(&p.1))
                            && (pts.last().expect("len >= 2").1 - 1.0).abs() < 1e-9;
                        if !ok {
                            return Err(InputError::at_key(
                                src,
                                "traffic.size_cdf",
                                format!("{pts:?}"),
                                "not a CDF",
                                "at least two [bytes, p] points, non-decreasing in both, ending at p = 1",
                            ));
                        }
                        SizeDist::Cdf(pts)
                    }
                    other => {
                        return Err(InputError::at_key(
                            src,
                            "traffic.sizes",
                            format!("\"{other}\""),
                            "unknown size distribution",
                            "fixed, uniform, cdf",
                        ));
                    }
                };
                Traffic::Uniform {
                    load,
                    sizes,
                    duration,
                }
            }
            "list" => {
                need(
                    self.flows.is_some(),
                    "flows",
                    "flows = [{ src = 0, dst = 1, bytes = \"1MB\" }]",
                )?;
                let mut flows = Vec::new();
                for (i, f) in self.flows.as_ref().expect("checked").iter().enumerate() {
                    let class = f
                        .class
                        .map(|c| {
                            let key = format!("traffic.flows[{i}].class");
                            check_class(src, &key, flow_line(src, i), c, classes)
                        })
                        .transpose()?;
                    flows.push(Flow {
                        class,
                        src: f.src,
                        dst: f.dst,
                        bytes: f.bytes.bytes(src, "traffic.flows")?,
                        start: match &f.start {
                            Some(s) => time(src, "traffic.flows", s)?,
                            None => Time::ZERO,
                        },
                    });
                }
                Traffic::List(flows)
            }
            "chakra" => {
                need(
                    self.trace_files.is_some(),
                    "trace_files",
                    "trace_files = \"step.{rank}.et\"",
                )?;
                let pattern = self.trace_files.clone().expect("checked");
                if pattern.matches("{rank}").count() != 1 {
                    return Err(InputError::at_key(
                        src,
                        "traffic.trace_files",
                        format!("\"{pattern}\""),
                        "names no rank",
                        "a path with `{rank}` once, as Chakra names its files: \"prefix.{rank}.et\"",
                    ));
                }
                return Ok(TrafficSource::Chakra(pattern));
            }
            "htsim" => {
                need(
                    self.flow_file.is_some(),
                    "flow_file",
                    "flow_file = \"conns.cm\"",
                )?;
                // The trees differ (uet-htsim: µs; csg-htsim since 2023-11: ps), so no default.
                need(
                    self.start_unit.is_some(),
                    "start_unit",
                    "start_unit = \"us\" (uet-htsim) or \"ps\" (csg-htsim)",
                )?;
                let unit = match self.start_unit.as_deref() {
                    Some("us") => StartUnit::Us,
                    Some("ps") => StartUnit::Ps,
                    other => {
                        return Err(InputError::at_key(
                            src,
                            "traffic.start_unit",
                            format!("\"{}\"", other.unwrap_or("")),
                            "not a start unit",
                            "\"us\" (uet-htsim) or \"ps\" (csg-htsim)",
                        ));
                    }
                };
                return Ok(TrafficSource::HtsimFile(
                    self.flow_file.clone().expect("checked"),
                    unit,
                ));
            }
            // "ns3": the only kind left (kinds were checked above).
            _ => {
                need(
                    self.flow_file.is_some(),
                    "flow_file",
                    "flow_file = \"flows.txt\"",
                )?;
                return Ok(TrafficSource::Ns3File(
                    self.flow_file.clone().expect("checked"),
                ));
            }
        };
        let class = self
            .class
            .map(|c| check_class(src, "traffic.class", None, c, classes))
            .transpose()?;
        Ok(TrafficSource::Generated(t, class))
    }
}
