//! Vendor-branded or third-party optics: which of a module's two catalog prices a plan pays
//! (`[cost] optics`), as the cost model asks (vendor list vs compatible street price).

use super::Catalog;

/// Whose transceivers and optical cables the plan buys.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpticsPrices {
    /// Compatible modules from an optics maker (the catalog's `price_usd`).
    #[default]
    ThirdParty,
    /// The switch or NIC vendor's own modules (the catalog's `vendor_price_usd`).
    Vendor,
}

impl OpticsPrices {
    pub const ALL: [OpticsPrices; 2] = [OpticsPrices::ThirdParty, OpticsPrices::Vendor];

    /// The `[cost] optics` value.
    pub fn key(self) -> &'static str {
        match self {
            OpticsPrices::ThirdParty => "third_party",
            OpticsPrices::Vendor => "vendor",
        }
    }

    pub fn from_key(s: &str) -> Option<OpticsPrices> {
        Self::ALL.into_iter().find(|x| x.key() == s)
    }

    /// The other choice.
    pub fn other(self) -> OpticsPrices {
        match self {
            OpticsPrices::ThirdParty => OpticsPrices::Vendor,
            OpticsPrices::Vendor => OpticsPrices::ThirdParty,
        }
    }
}

/// (price in use, price under the other choice) of an item shipped at third-party price `tp`
/// with vendor price `vendor` (None: one price for both).
fn pick(p: OpticsPrices, tp: f64, vendor: Option<f64>) -> (f64, Option<f64>) {
    match (p, vendor) {
        (_, None) => (tp, None),
        (OpticsPrices::ThirdParty, Some(v)) => (tp, Some(v)),
        (OpticsPrices::Vendor, Some(v)) => (v, Some(tp)),
    }
}

impl Catalog {
    /// Sets every transceiver's and cable's price in use to `p`'s and remembers the other one
    /// (`other_price_usd`). Call once, on the catalog as loaded (prices third-party).
    pub fn choose_optics(&mut self, p: OpticsPrices) {
        for x in &mut self.transceivers {
            (x.price_usd, x.other_price_usd) = pick(p, x.price_usd, x.vendor_price_usd);
        }
        for x in &mut self.cables {
            (x.price_usd, x.other_price_usd) = pick(p, x.price_usd, x.vendor_price_usd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendor_swaps_the_two_prices_and_third_party_keeps_them() {
        let mut c = Catalog::builtin().unwrap();
        let tp = c.transceivers[0].price_usd;
        let v = c.transceivers[0]
            .vendor_price_usd
            .expect("shipped with a vendor price");
        assert!(v > tp);
        let mut third = c.clone();
        third.choose_optics(OpticsPrices::ThirdParty);
        assert_eq!(third.transceivers[0].price_usd, tp);
        assert_eq!(third.transceivers[0].other_price_usd, Some(v));
        c.choose_optics(OpticsPrices::Vendor);
        assert_eq!(c.transceivers[0].price_usd, v);
        assert_eq!(c.transceivers[0].other_price_usd, Some(tp));
        // Copper without a vendor price costs the same either way.
        let dac = c
            .cables
            .iter()
            .find(|x| x.vendor_price_usd.is_none())
            .unwrap();
        assert_eq!(dac.other_price_usd, None);
        assert_eq!(OpticsPrices::from_key("vendor"), Some(OpticsPrices::Vendor));
        assert_eq!(OpticsPrices::from_key("oem"), None);
    }
}
