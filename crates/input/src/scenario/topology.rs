//! `[topology]`: the shape of the fabric the builders make.

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopologySection {
    /// `fat-tree` (default), `rail-optimized`, `rail-only`, `dual-tor`, `pods`, or `auto`
    /// (`plan`: the cheapest kind that fits).
    pub kind: String,
    /// Parallel fabrics (multi-plane): NIC port `r` of every server on plane `r mod planes`
    /// (default 1; a divisor of `cluster.nics_per_node`).
    pub planes: u32,
    /// `"auto"` (default: the fewest tiers that fit), 2 or 3.
    pub tiers: toml::Value,
    /// Leaf down:up ratio, `"1:1"` (default, non-blocking), `"2:1"`, `"3:1"` ...
    pub oversubscription: String,
    /// Switch catalog id (default: the fabric profile's switch).
    pub switch: Option<String>,
    /// Kind `pods`: scalable units per pod (default: the most a pod spine takes).
    pub pod_sus: Option<i64>,
    /// Kind `pods`: a pod spine's down:up towards the core, `"1:1"` (default) or e.g. `"15:1"`.
    pub core_oversubscription: Option<String>,
}

impl Default for TopologySection {
    fn default() -> Self {
        TopologySection {
            kind: "fat-tree".into(),
            planes: 1,
            tiers: toml::Value::String("auto".into()),
            oversubscription: "1:1".into(),
            switch: None,
            pod_sus: None,
            core_oversubscription: None,
        }
    }
}
