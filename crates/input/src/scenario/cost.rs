//! `[cost]`: the operating-cost assumptions and price overrides.

use crate::catalog::OpticsPrices;
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
    /// Switch OS licence and its software support per switch per year (default 1,500 USD, an
    /// estimate: a NOS subscription for a data-centre switch, a few percent of its price).
    pub switch_software_usd_per_year: f64,
    /// Fabric manager licence (UFM or an Ethernet fabric controller) per server per year
    /// (default 150 USD, an estimate: a per-managed-node subscription).
    pub fabric_manager_usd_per_node_year: f64,
    /// Hardware support contract per year as a share of the network hardware price (default
    /// 0.10, an estimate: vendor support plans run at about 8-15% of list a year).
    pub support_share_per_year: f64,
    /// Installation labour per cable or fibre cord (default 30 USD, an estimate: about 0.3 h of
    /// technician time at 100 USD/h to route, label and test it).
    pub install_usd_per_cable: f64,
    /// Installation labour per switch (default 300 USD, an estimate: about 3 h to rack, power
    /// and bring it up at 100 USD/h).
    pub install_usd_per_switch: f64,
    /// Spares kept on site as a share of the network hardware price (default 0.02, an estimate).
    pub spares_share: f64,
    /// Out-of-band management network per managed device (every switch and server): one 1GbE
    /// port and its patch cord (default 60 USD, an estimate: a 48-port 1GbE management switch
    /// of about 2,400 USD per port plus a 10 USD cord).
    pub oob_usd_per_port: f64,
    /// Whose optics the plan buys: `"third_party"` (default, compatible modules) or
    /// `"vendor"` (the switch vendor's own, at its catalog `vendor_price_usd`).
    pub optics: String,
}

impl Default for CostSection {
    fn default() -> Self {
        CostSection {
            years: 5,
            usd_per_kwh: 0.08,
            pue: 1.3,
            prices_usd: BTreeMap::new(),
            switch_software_usd_per_year: 1500.0,
            fabric_manager_usd_per_node_year: 150.0,
            support_share_per_year: 0.10,
            install_usd_per_cable: 30.0,
            install_usd_per_switch: 300.0,
            spares_share: 0.02,
            oob_usd_per_port: 60.0,
            optics: OpticsPrices::default().key().to_string(),
        }
    }
}
