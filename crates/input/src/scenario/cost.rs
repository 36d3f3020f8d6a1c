//! `[cost]`: the operating-cost assumptions and price overrides.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CostSection {
    /// Years of operation for the TCO (default 5).
    pub years: i64,
    /// Electricity price (default 0.08 USD/kWh, a placeholder estimate).
    pub usd_per_kwh: f64,
    /// Power usage effectiveness of the facility (default 1.3, a placeholder estimate).
    pub pue: f64,
    /// Price overrides by catalog id (`qm9700 = 36000`); for a fibre, its price per metre.
    pub prices_usd: BTreeMap<String, f64>,
}

impl Default for CostSection {
    fn default() -> Self {
        CostSection {
            years: 5,
            usd_per_kwh: 0.08,
            pue: 1.3,
            prices_usd: BTreeMap::new(),
        }
    }
}
