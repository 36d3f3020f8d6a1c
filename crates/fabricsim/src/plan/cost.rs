//! CAPEX, OPEX and TCO of the network, and its share of the whole cluster.
//!
//! Network CAPEX = hardware (switches, NICs, optics, cables) + installation labour (per switch
//! and per cable or cord) + spares (a share of the hardware) + the out-of-band management
//! network (one port per switch and server). OPEX per year = energy (power (kW) x PUE x price
//! (USD/kWh) x 8760 h) + switch software licences (per switch) + fabric manager licences (per
//! server) + support (a share of the hardware). TCO = CAPEX + years x OPEX. Every rate is a
//! `[cost]` key (`fabricsim_input::scenario::cost`, its defaults estimates with their reasons).
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
    /// Installation labour: switches and cables (with cords).
    pub install_usd: f64,
    /// Spares on site.
    pub spares_usd: f64,
    /// Out-of-band management network, and the ports it has (one per switch and server).
    pub oob_usd: f64,
    pub oob_ports: u64,
    pub network_capex_usd: f64,
    /// Energy per year.
    pub energy_usd_per_year: f64,
    /// Switch OS and fabric manager licences per year.
    pub software_usd_per_year: f64,
    /// Hardware support contracts per year.
    pub support_usd_per_year: f64,
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

impl Cost {
    /// The network CAPEX line by line (they sum to `network_capex_usd`).
    pub fn capex_lines(&self) -> [(&'static str, f64); 7] {
        [
            ("switches", self.switches_usd),
            ("NICs", self.nics_usd),
            ("optics", self.optics_usd),
            ("cables", self.cables_usd),
            ("install", self.install_usd),
            ("spares", self.spares_usd),
            ("OOB mgmt", self.oob_usd),
        ]
    }
}

/// What the CAPEX difference `b − a` between two fabrics depends on: each line's share of it,
/// the largest in magnitude first (the shares sum to 1; a negative share is a line that
/// narrows the difference); empty when the two CAPEX are equal.
pub fn difference_shares(a: &Cost, b: &Cost) -> Vec<(&'static str, f64)> {
    let total = b.network_capex_usd - a.network_capex_usd;
    if total.abs() < 0.5 {
        return Vec::new();
    }
    let mut v: Vec<(&'static str, f64)> = a
        .capex_lines()
        .iter()
        .zip(b.capex_lines())
        .map(|(&(name, x), (_, y))| (name, (y - x) / total))
        .collect();
    v.sort_by(|p, q| q.1.abs().total_cmp(&p.1.abs()));
    v
}

/// Yearly energy cost of `kw` running all year in a facility with `pue`.
pub fn opex_per_year(kw: f64, pue: f64, usd_per_kwh: f64) -> f64 {
    kw * pue * usd_per_kwh * HOURS_PER_YEAR
}

/// The network cost of a plan (see the module doc).
pub fn of(d: &Design, bom: &Bom, power: &Power, servers: u64) -> Cost {
    let usd = |cat| bom.total(cat).1;
    let (switches_usd, nics_usd) = (usd(Category::Switch), usd(Category::Nic));
    let optics_usd = usd(Category::Transceiver);
    let cables_usd = usd(Category::Cable) + usd(Category::Fiber);
    let hardware = switches_usd + nics_usd + optics_usd + cables_usd;
    let k = &d.cost;
    let count = |cat| bom.total(cat).0;
    let switches = count(Category::Switch);
    let cables = count(Category::Cable) + count(Category::Fiber);
    let install_usd =
        switches as f64 * k.install_usd_per_switch + cables as f64 * k.install_usd_per_cable;
    let spares_usd = hardware * k.spares_share;
    let oob_ports = switches + servers;
    let oob_usd = oob_ports as f64 * k.oob_usd_per_port;
    let network_capex_usd = hardware + install_usd + spares_usd + oob_usd;
    let energy_usd_per_year = opex_per_year(power.total_kw(), k.pue, k.usd_per_kwh);
    let software_usd_per_year = switches as f64 * k.switch_software_usd_per_year
        + servers as f64 * k.fabric_manager_usd_per_node_year;
    let support_usd_per_year = hardware * k.support_share_per_year;
    let network_opex = energy_usd_per_year + software_usd_per_year + support_usd_per_year;
    let years = k.years as f64;
    let network_tco = network_capex_usd + years * network_opex;
    let nic_in_server = if d.server.includes_nics {
        d.nic_cards_per_node as f64 * d.nic.price_usd
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
        install_usd,
        spares_usd,
        oob_usd,
        oob_ports,
        network_capex_usd,
        energy_usd_per_year,
        software_usd_per_year,
        support_usd_per_year,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(lines: [f64; 7]) -> Cost {
        let [
            switches_usd,
            nics_usd,
            optics_usd,
            cables_usd,
            install_usd,
            spares_usd,
            oob_usd,
        ] = lines;
        Cost {
            switches_usd,
            nics_usd,
            optics_usd,
            cables_usd,
            install_usd,
            spares_usd,
            oob_usd,
            oob_ports: 0,
            network_capex_usd: lines.iter().sum(),
            energy_usd_per_year: 0.0,
            software_usd_per_year: 0.0,
            support_usd_per_year: 0.0,
            network_opex_usd_per_year: 0.0,
            network_tco_usd: 0.0,
            network_capex_usd_per_gpu: 0.0,
            network_tco_usd_per_gpu: 0.0,
            servers: 0,
            compute_capex_usd: 0.0,
            compute_power_kw: 0.0,
            cluster_capex_usd: 0.0,
            cluster_opex_usd_per_year: 0.0,
            cluster_tco_usd: 0.0,
            network_share_of_capex: 0.0,
            network_share_of_tco: 0.0,
        }
    }

    #[test]
    fn the_difference_is_shared_by_line_largest_first() {
        let a = cost([100.0, 50.0, 80.0, 10.0, 5.0, 2.0, 1.0]);
        // +60 switches, -20 NICs, +40 optics: a difference of 80.
        let b = cost([160.0, 30.0, 120.0, 10.0, 5.0, 2.0, 1.0]);
        let s = difference_shares(&a, &b);
        assert_eq!(
            &s[..3],
            &[("switches", 0.75), ("optics", 0.5), ("NICs", -0.25)]
        );
        assert!((s.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(difference_shares(&a, &a).is_empty());
    }
}
