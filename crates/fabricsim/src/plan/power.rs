//! Network power: switch boxes (without optics), pluggable optics and active cables, NICs; the
//! optics at switch ends (what a switch draws with its cages full) and the optics' share.

use fabricsim_core::topology::{Medium, NodeKind, Topology};
use fabricsim_input::catalog::Catalog;

use super::bom::{Bom, Category};
use super::media::{Media, MediumDef};

#[derive(Clone, Debug, PartialEq)]
pub struct Power {
    pub switches_kw: f64,
    /// Transceivers and active cables (AOC, ACC/AEC; passive DAC draws ~0).
    pub optics_kw: f64,
    /// The part of `optics_kw` in switch cages (each module's watts per port it serves; an
    /// active cable's half per end).
    pub switch_optics_kw: f64,
    pub nics_kw: f64,
    pub switches: u64,
}

impl Power {
    pub fn total_kw(&self) -> f64 {
        self.switches_kw + self.optics_kw + self.nics_kw
    }
    /// The optics' share of network power (0 with no power at all).
    pub fn optics_share(&self) -> f64 {
        let t = self.total_kw();
        if t > 0.0 { self.optics_kw / t } else { 0.0 }
    }
    /// One switch box with its cages' optics, in W (`None` without switches).
    pub fn switch_with_optics_w(&self) -> Option<f64> {
        (self.switches > 0)
            .then(|| 1000.0 * (self.switches_kw + self.switch_optics_kw) / self.switches as f64)
    }
    pub fn switch_without_optics_w(&self) -> Option<f64> {
        (self.switches > 0).then(|| 1000.0 * self.switches_kw / self.switches as f64)
    }
}

/// Watts of one link's medium at its (lower, upper) end.
fn end_watts(c: &Catalog, media: &Media, def: usize, gbps: u32) -> (f64, f64) {
    match &media.defs[def] {
        MediumDef::Cable { cable, shape, .. } => {
            let w = c.cables[*cable].power_w / shape.links() as f64 / 2.0;
            (w, w)
        }
        MediumDef::Optics { lower, upper, .. } => {
            let per = |m: usize| {
                let x = &c.transceivers[m];
                x.power_w / x.ports_at(gbps).unwrap_or(1) as f64
            };
            (per(*lower), per(*upper))
        }
    }
}

/// The optics' kW at each node: each link end its module's watts per port it serves (an
/// active cable's half), scaled so the nodes add up to the BOM's whole modules.
pub fn optics_at_nodes(bom: &Bom, t: &Topology, c: &Catalog, media: &Media) -> Vec<f64> {
    let mut at = vec![0.0; t.nodes.len()];
    for l in &t.links {
        let Medium::Catalog(def) = l.medium else {
            continue;
        };
        let gbps = (l.rate.bps() / 1_000_000_000) as u32;
        let (lo, up) = end_watts(c, media, def as usize, gbps);
        for (e, watts) in [(0, lo), (1, up)] {
            at[t.ports[l.ends[e].idx()].node.idx()] += watts;
        }
    }
    let all: f64 = at.iter().sum();
    let kw = optics_kw(bom);
    for x in &mut at {
        *x = if all > 0.0 { kw * *x / all } else { 0.0 };
    }
    at
}

fn optics_kw(bom: &Bom) -> f64 {
    bom.total(Category::Transceiver).2 / 1000.0 + bom.total(Category::Cable).2 / 1000.0
}

pub fn of(bom: &Bom, t: &Topology, c: &Catalog, media: &Media) -> Power {
    let w = |cat| bom.total(cat).2 / 1000.0;
    let at = optics_at_nodes(bom, t, c, media);
    let switch_optics_kw = t
        .nodes
        .iter()
        .zip(&at)
        .filter(|(n, _)| matches!(n.kind, NodeKind::Switch { .. }))
        .map(|(_, kw)| kw)
        .sum();
    Power {
        switches_kw: w(Category::Switch),
        optics_kw: optics_kw(bom),
        switch_optics_kw,
        nics_kw: w(Category::Nic),
        switches: bom.total(Category::Switch).0,
    }
}
