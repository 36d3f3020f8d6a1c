//! The same bill of materials under the other `[cost] optics` choice (vendor-branded against
//! third-party modules, `fabricsim_input::catalog::OpticsPrices`): what choosing the other
//! source changes in the network CAPEX and TCO, spares and support included (both are shares of
//! the hardware, so dearer optics raise them too). The media stay as chosen: the comparison is
//! of prices for the same modules, not of a re-optimised build.

use super::bom::Bom;
use super::cost::{self, Cost};
use super::power::Power;
use fabricsim_input::catalog::OpticsPrices;
use fabricsim_input::scenario::Design;

#[derive(Clone, Debug, PartialEq)]
pub struct OtherOptics {
    /// The choice not taken.
    pub optics: OpticsPrices,
    /// The plan's cost with every line at that choice's price.
    pub cost: Cost,
}

/// `bom` priced at the other optics choice; `None` when no line has two prices.
pub fn of(d: &Design, bom: &Bom, power: &Power, servers: u64) -> Option<OtherOptics> {
    if bom.lines.iter().all(|l| l.other_usd == l.usd) {
        return None;
    }
    let mut other = bom.clone();
    for l in &mut other.lines {
        std::mem::swap(&mut l.usd, &mut l.other_usd);
    }
    Some(OtherOptics {
        optics: d.cost.optics.other(),
        cost: cost::of(d, &other, power, servers),
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Plan, run};
    use fabricsim_input::catalog::{Catalog, OpticsPrices};
    use fabricsim_input::scenario::Scenario;
    use fabricsim_input::scenario::cost::CostSection;

    fn plan_of(text: &str) -> Plan {
        run(&Scenario::parse("t.toml", text).unwrap()).unwrap().2
    }

    const BASE: &str = "[fabric]\nprofile = \"ib-ndr\"\n[cluster]\ngpus = 512\n\
                        [topology]\nkind = \"fat-tree\"\n";

    /// Vendor optics cost, module by module, the catalog's vendor price times the count; the
    /// difference reaches the CAPEX through the optics line and the spares share, and the TCO
    /// through the support share as well; and the two plans mirror each other.
    #[test]
    fn vendor_optics_cost_the_vendor_price_per_module_and_mirror_third_party() {
        let third = plan_of(BASE);
        let vendor = plan_of(&format!("{BASE}[cost]\noptics = \"vendor\"\n"));
        let d = Catalog::builtin().unwrap();
        // Same modules either way in this build (the SR and DR links have no cheaper copper
        // that reaches), so the two plans differ in prices only.
        let counts = |p: &Plan| {
            p.bom
                .lines
                .iter()
                .map(|l| (l.id.clone(), l.count))
                .collect::<Vec<_>>()
        };
        assert_eq!(counts(&third), counts(&vendor));
        let mut optics_delta = 0.0;
        for l in third.bom.lines.iter().filter(|l| l.other_usd != l.usd) {
            let price = |id: &str| {
                d.transceivers
                    .iter()
                    .find(|x| x.id == id)
                    .map(|x| (x.price_usd, x.vendor_price_usd))
                    .or_else(|| {
                        d.cables
                            .iter()
                            .find(|x| x.id == id)
                            .map(|x| (x.price_usd, x.vendor_price_usd))
                    })
                    .unwrap()
            };
            let (tp, v) = price(&l.id);
            assert_eq!(l.usd, l.count as f64 * tp);
            assert_eq!(l.other_usd, l.count as f64 * v.unwrap());
            optics_delta += l.other_usd - l.usd;
        }
        assert!(optics_delta > 0.0);
        let (t, v) = (&third.cost, &vendor.cost);
        let k = CostSection::default();
        let capex = optics_delta * (1.0 + k.spares_share);
        assert!((v.network_capex_usd - t.network_capex_usd - capex).abs() < 1e-6);
        let opex = optics_delta * k.support_share_per_year;
        let tco = capex + k.years as f64 * opex;
        assert!((v.network_tco_usd - t.network_tco_usd - tco).abs() < 1e-6);
        // Each plan's other choice is the other plan.
        let to = third.optics_other.as_ref().unwrap();
        assert_eq!(to.optics, OpticsPrices::Vendor);
        assert_eq!(to.cost, vendor.cost);
        let vo = vendor.optics_other.as_ref().unwrap();
        assert_eq!(vo.optics, OpticsPrices::ThirdParty);
        assert_eq!(vo.cost, third.cost);
    }
}
