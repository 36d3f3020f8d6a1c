//! Network power: switch boxes (without optics), pluggable optics and active cables, NICs.

use super::bom::{Bom, Category};

#[derive(Clone, Debug, PartialEq)]
pub struct Power {
    pub switches_kw: f64,
    /// Transceivers and active cables (AOC, ACC/AEC; passive DAC draws ~0).
    pub optics_kw: f64,
    pub nics_kw: f64,
}

impl Power {
    pub fn total_kw(&self) -> f64 {
        self.switches_kw + self.optics_kw + self.nics_kw
    }
}

pub fn of(bom: &Bom) -> Power {
    let w = |cat| bom.total(cat).2 / 1000.0;
    Power {
        switches_kw: w(Category::Switch),
        optics_kw: w(Category::Transceiver) + w(Category::Cable),
        nics_kw: w(Category::Nic),
    }
}
