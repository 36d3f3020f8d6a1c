//! CAPEX, OPEX and TCO of the network, and its share of the whole cluster.
//!
//! OPEX per year = power (kW) x PUE x price (USD/kWh) x 8760 h. TCO = CAPEX + years x OPEX.
//! The cluster adds the GPU servers (catalog price and power); when a server's price includes
//! its scale-out NICs, their price moves from compute to network so nothing is counted twice.

use super::bom::{Bom, Category};
use super::power::Power;
use fabricsim_input::scenario::Design;

pub const HOURS_PER_YEAR: f64 = 8760.0;

#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    pub switches_usd: f64,
    pub nics_usd: f64,
    pub optics_usd: f64,
    /// Cable assemblies and fibre cords.
    pub cables_usd: f64,
    pub network_capex_usd: f64,
    pub network_opex_usd_per_year: f64,
    pub network_tco_usd: f64,
    pub network_capex_usd_per_gpu: f64,
    pub network_tco_usd_per_gpu: f64,
    pub servers: u64,
    /// Servers without the NICs counted under the network.
    pub compute_capex_usd: f64,
    pub compute_power_kw: f64,
    pub cluster_capex_usd: f64,
    pub cluster_opex_usd_per_year: f64,
    pub cluster_tco_usd: f64,
    /// Network CAPEX over cluster CAPEX.
    pub network_share_of_capex: f64,
    /// Network TCO over cluster TCO.
    pub network_share_of_tco: f64,
}

/// Yearly energy cost of `kw` running all year in a facility with `pue`.
pub fn opex_per_year(kw: f64, pue: f64, usd_per_kwh: f64) -> f64 {
    kw * pue * usd_per_kwh * HOURS_PER_YEAR
}

pub fn of(d: &Design, bom: &Bom, power: &Power, servers: u64) -> Cost {
    let usd = |cat| bom.total(cat).1;
    let (switches_usd, nics_usd) = (usd(Category::Switch), usd(Category::Nic));
    let optics_usd = usd(Category::Transceiver);
    let cables_usd = usd(Category::Cable) + usd(Category::Fiber);
    let network_capex_usd = switches_usd + nics_usd + optics_usd + cables_usd;
    let k = &d.cost;
    let network_opex = opex_per_year(power.total_kw(), k.pue, k.usd_per_kwh);
    let years = k.years as f64;
    let network_tco = network_capex_usd + years * network_opex;
    let nic_in_server = if d.server.includes_nics {
        d.spec.nics_per_node as f64 * d.nic.price_usd
    } else {
        0.0
    };
    let compute_capex_usd = servers as f64 * (d.server.price_usd - nic_in_server).max(0.0);
    let compute_power_kw = servers as f64 * d.server.power_w / 1000.0;
    let compute_opex = opex_per_year(compute_power_kw, k.pue, k.usd_per_kwh);
    let cluster_capex_usd = network_capex_usd + compute_capex_usd;
    let cluster_opex = network_opex + compute_opex;
    let cluster_tco_usd = cluster_capex_usd + years * cluster_opex;
    let gpus = d.spec.gpus as f64;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    Cost {
        switches_usd,
        nics_usd,
        optics_usd,
        cables_usd,
        network_capex_usd,
        network_opex_usd_per_year: network_opex,
        network_tco_usd: network_tco,
        network_capex_usd_per_gpu: network_capex_usd / gpus,
        network_tco_usd_per_gpu: network_tco / gpus,
        servers,
        compute_capex_usd,
        compute_power_kw,
        cluster_capex_usd,
        cluster_opex_usd_per_year: cluster_opex,
        cluster_tco_usd,
        network_share_of_capex: ratio(network_capex_usd, cluster_capex_usd),
        network_share_of_tco: ratio(network_tco, cluster_tco_usd),
    }
}
