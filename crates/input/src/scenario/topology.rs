//! `[topology]`: the shape of the fabric the builders make.

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TopologySection {
    /// `fat-tree` (default) or `rail-optimized`.
    pub kind: String,
    /// `"auto"` (default: the fewest tiers that fit), 2 or 3.
    pub tiers: toml::Value,
    /// Leaf down:up ratio, `"1:1"` (default, non-blocking), `"2:1"`, `"3:1"` ...
    pub oversubscription: String,
    /// Switch catalog id (default: the fabric profile's switch).
    pub switch: Option<String>,
}

impl Default for TopologySection {
    fn default() -> Self {
        TopologySection {
            kind: "fat-tree".into(),
            tiers: toml::Value::String("auto".into()),
            oversubscription: "1:1".into(),
            switch: None,
        }
    }
}
