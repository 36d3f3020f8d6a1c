//! `[fabric]`: the fabric profile (`data/profiles/<id>.toml`) and overrides of its values.

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FabricSection {
    /// Profile id: `ib-ndr`, `ib-xdr`, `roce-400g` (default), `roce-800g`, `roce-400g-hpcc`, `roce-400g-ar`, `roce-800g-ar`, `uec-400g`, `uec-800g`.
    /// A path ending in `.toml` loads a user profile file (relative to the scenario file).
    pub profile: String,
    /// Overrides the profile's MTU (256, 512, 1024, 2048 or 4096 bytes).
    pub mtu_bytes: Option<i64>,
}

impl Default for FabricSection {
    fn default() -> Self {
        FabricSection {
            profile: "roce-400g".into(),
            mtu_bytes: None,
        }
    }
}
