//! The bill of materials: switches per tier, links per tier, NICs, transceivers, cable
//! assemblies and fibre cords (by type and by length bin), each with unit price and power.
//!
//! Module counting: a transceiver serving `k` ports sits in one cage and serves `k` links of
//! that switch, so a switch with `n` links on a twin-port module type needs ceil(n / 2) modules.
//! A twin cable carries two links between the same two switches; a split cable carries two
//! links from one twin cage; both are counted per (cage owner(s), cable type) the same way.

use super::media::{Media, MediumDef};
use fabricsim_core::topology::{Medium, Topology};
use fabricsim_input::catalog::{CableShape, Catalog, MediumClass};

/// Upper bounds of the length bins, metres (the last bin is open).
pub const LENGTH_BINS_M: [f64; 9] = [1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 50.0, 100.0, 500.0];

/// Label of the bin holding `len`.
pub fn bin_label(len: f64) -> String {
    let mut lo = 0.0;
    for hi in LENGTH_BINS_M {
        if len <= hi {
            return format!("{lo}-{hi} m");
        }
        lo = hi;
    }
    format!(">{lo} m")
}

fn bin_index(len: f64) -> usize {
    LENGTH_BINS_M
        .iter()
        .position(|&hi| len <= hi)
        .unwrap_or(LENGTH_BINS_M.len())
}

#[derive(Clone, Debug, PartialEq)]
pub struct TierCount {
    /// 1 = leaf, 2 = spine, 3 = core.
    pub tier: u8,
    pub switches: u64,
    pub ports_total: u64,
    pub ports_used: u64,
    pub ports_free: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkTier {
    /// The upper end's tier: 1 = NIC-leaf, 2 = leaf-spine, 3 = spine-core.
    pub tier: u8,
    pub links: u64,
    pub total_length_m: f64,
    pub max_length_m: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Switch,
    Nic,
    Transceiver,
    Cable,
    Fiber,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Switch => "switch",
            Category::Nic => "nic",
            Category::Transceiver => "transceiver",
            Category::Cable => "cable",
            Category::Fiber => "fiber",
        }
    }
}

/// One line of the bill: `count` of catalog item `id`.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub category: Category,
    pub id: String,
    pub name: String,
    /// The medium class for transceivers, cables and fibre.
    pub class: Option<MediumClass>,
    pub count: u64,
    pub usd: f64,
    /// What the same count costs under the other `[cost] optics` choice (`usd` for items with
    /// one price).
    pub other_usd: f64,
    pub watts: f64,
}

/// Cable assemblies and fibre cords of one type in one length bin.
#[derive(Clone, Debug, PartialEq)]
pub struct LengthBin {
    pub id: String,
    pub bin: String,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bom {
    pub tiers: Vec<TierCount>,
    pub links: Vec<LinkTier>,
    pub lines: Vec<Line>,
    pub lengths: Vec<LengthBin>,
    /// Links carried by each medium class.
    pub links_by_class: Vec<(MediumClass, u64)>,
}

impl Bom {
    /// Total over lines of a category: (count, usd, watts).
    pub fn total(&self, cat: Category) -> (u64, f64, f64) {
        self.lines
            .iter()
            .filter(|l| l.category == cat)
            .fold((0, 0.0, 0.0), |a, l| {
                (a.0 + l.count, a.1 + l.usd, a.2 + l.watts)
            })
    }
}

/// Counts everything in `t` (whose links carry lengths and media from `media`).
/// `nic_cards`: the NIC cards of the cluster (a card may give several ports, `Nic::ports_at`).
pub fn count(
    t: &Topology,
    c: &Catalog,
    media: &Media,
    switch_id: &str,
    (nic_id, nic_cards): (&str, u64),
) -> Bom {
    let mut tiers: Vec<TierCount> = Vec::new();
    for (_, n) in t.switches() {
        let tier = n.tier();
        let i = match tiers.iter().position(|x| x.tier == tier) {
            Some(i) => i,
            None => {
                tiers.push(TierCount {
                    tier,
                    switches: 0,
                    ports_total: 0,
                    ports_used: 0,
                    ports_free: 0,
                });
                tiers.len() - 1
            }
        };
        let x = &mut tiers[i];
        x.switches += 1;
        x.ports_total += n.radix as u64;
        x.ports_used += n.num_ports as u64;
        x.ports_free += n.radix.saturating_sub(n.num_ports) as u64;
    }
    tiers.sort_by_key(|x| x.tier);

    let mut links: Vec<LinkTier> = Vec::new();
    // Per-end module ports: (node, transceiver); cable groups: (node a, node b, cable).
    let mut module_ports: Vec<(u32, u32)> = Vec::new();
    let mut grouped: Vec<(u32, u32, u32, usize)> = Vec::new();
    let mut straight = vec![[0u64; LENGTH_BINS_M.len() + 1]; c.cables.len()];
    let mut cords = vec![[0f64; LENGTH_BINS_M.len() + 1]; c.fibers.len()];
    let mut cord_usd = vec![0f64; c.fibers.len()];
    let mut by_class: Vec<(MediumClass, u64)> = Vec::new();
    for l in &t.links {
        let lower = t.ports[l.ends[0].idx()].node;
        let upper = t.ports[l.ends[1].idx()].node;
        match links.iter_mut().find(|x| x.tier == l.tier) {
            Some(x) => {
                x.links += 1;
                x.total_length_m += l.length_m;
                x.max_length_m = x.max_length_m.max(l.length_m);
            }
            None => links.push(LinkTier {
                tier: l.tier,
                links: 1,
                total_length_m: l.length_m,
                max_length_m: l.length_m,
            }),
        }
        let Medium::Catalog(def) = l.medium else {
            continue;
        };
        let def = def as usize;
        let class = media.class(c, def);
        match by_class.iter_mut().find(|x| x.0 == class) {
            Some(x) => x.1 += 1,
            None => by_class.push((class, 1)),
        }
        let bin = bin_index(l.length_m);
        match &media.defs[def] {
            MediumDef::Cable {
                cable,
                shape,
                twin_lower,
            } => match shape {
                CableShape::Straight => straight[*cable][bin] += 1,
                CableShape::Twin => grouped.push((lower.0, upper.0, *cable as u32, bin)),
                CableShape::Split => {
                    // Group on the twin-cage side.
                    let twin = if *twin_lower { lower.0 } else { upper.0 };
                    grouped.push((twin, u32::MAX, *cable as u32, bin))
                }
            },
            MediumDef::Optics {
                lower: ml,
                upper: mu,
                fiber,
                cords: k,
            } => {
                module_ports.push((lower.0, *ml as u32));
                module_ports.push((upper.0, *mu as u32));
                cords[*fiber][bin] += k;
                cord_usd[*fiber] += k * c.fibers[*fiber].price(l.length_m);
            }
        }
    }
    links.sort_by_key(|x| x.tier);
    by_class.sort();

    // Modules: ceil(ports / ports per module) per (node, module type).
    module_ports.sort_unstable();
    let mut modules = vec![0u64; c.transceivers.len()];
    let gbps = t
        .links
        .first()
        .map(|l| (l.rate.bps() / 1_000_000_000) as u32)
        .unwrap_or(0);
    for run in module_ports.chunk_by(|a, b| a == b) {
        let x = &c.transceivers[run[0].1 as usize];
        let per = x.ports_at(gbps).unwrap_or(1) as u64;
        modules[run[0].1 as usize] += (run.len() as u64).div_ceil(per);
    }
    // Two-link cables: ceil(links / 2) per group, in the bin of the group's longest link.
    grouped.sort_unstable();
    let mut paired = vec![[0u64; LENGTH_BINS_M.len() + 1]; c.cables.len()];
    for run in grouped.chunk_by(|a, b| (a.0, a.1, a.2) == (b.0, b.1, b.2)) {
        let bin = run.iter().map(|g| g.3).max().unwrap_or(0);
        paired[run[0].2 as usize][bin] += (run.len() as u64).div_ceil(2);
    }

    let mut lines = Vec::new();
    let mut lengths = Vec::new();
    if let Some(sw) = c.switch(switch_id) {
        let n: u64 = tiers.iter().map(|x| x.switches).sum();
        lines.push(line(
            Category::Switch,
            &sw.id,
            &sw.name,
            None,
            n,
            (sw.price_usd, None),
            sw.power_w,
        ));
    }
    if let Some(nic) = c.nic(nic_id) {
        let n = nic_cards;
        lines.push(line(
            Category::Nic,
            &nic.id,
            &nic.name,
            None,
            n,
            (nic.price_usd, None),
            nic.power_w,
        ));
    }
    for (i, x) in c.transceivers.iter().enumerate() {
        if modules[i] > 0 {
            lines.push(line(
                Category::Transceiver,
                &x.id,
                &x.name,
                Some(x.class),
                modules[i],
                (x.price_usd, x.other_price_usd),
                x.power_w,
            ));
        }
    }
    for (i, x) in c.cables.iter().enumerate() {
        let bins: Vec<u64> = (0..=LENGTH_BINS_M.len())
            .map(|b| straight[i][b] + paired[i][b])
            .collect();
        let n: u64 = bins.iter().sum();
        if n > 0 {
            lines.push(line(
                Category::Cable,
                &x.id,
                &x.name,
                Some(x.class),
                n,
                (x.price_usd, x.other_price_usd),
                x.power_w,
            ));
            push_bins(&mut lengths, &x.id, &bins);
        }
    }
    for (i, f) in c.fibers.iter().enumerate() {
        let bins: Vec<u64> = cords[i].iter().map(|k| k.round() as u64).collect();
        let n: u64 = bins.iter().sum();
        if n > 0 {
            let class = media
                .defs
                .iter()
                .enumerate()
                .find(|(_, d)| matches!(d, MediumDef::Optics { fiber, .. } if *fiber == i))
                .map(|(d, _)| media.class(c, d));
            lines.push(Line {
                category: Category::Fiber,
                id: f.id.clone(),
                name: f.name.clone(),
                class,
                count: n,
                usd: cord_usd[i],
                other_usd: cord_usd[i],
                watts: 0.0,
            });
            push_bins(&mut lengths, &f.id, &bins);
        }
    }
    Bom {
        tiers,
        links,
        lines,
        lengths,
        links_by_class: by_class,
    }
}

/// `unit_usd` is the price in use, `other_usd` the price under the other optics choice.
#[allow(clippy::too_many_arguments)] // each argument is one field of the line
fn line(
    category: Category,
    id: &str,
    name: &str,
    class: Option<MediumClass>,
    count: u64,
    (unit_usd, other_usd): (f64, Option<f64>),
    unit_w: f64,
) -> Line {
    Line {
        category,
        id: id.to_string(),
        name: name.to_string(),
        class,
        count,
        usd: count as f64 * unit_usd,
        other_usd: count as f64 * other_usd.unwrap_or(unit_usd),
        watts: count as f64 * unit_w,
    }
}

fn push_bins(out: &mut Vec<LengthBin>, id: &str, bins: &[u64]) {
    for (b, &n) in bins.iter().enumerate() {
        if n > 0 {
            let label = if b < LENGTH_BINS_M.len() {
                bin_label(LENGTH_BINS_M[b])
            } else {
                bin_label(f64::INFINITY)
            };
            out.push(LengthBin {
                id: id.to_string(),
                bin: label,
                count: n,
            });
        }
    }
}
