//! Choosing what carries each link: the cheapest catalog cable or transceiver pair whose reach
//! fits the link's length at the link's rate, given how each end's cage is built.
//!
//! An end is `Single` (a NIC, or a switch with one port per cage at this rate) or `Twin` (two
//! logical ports per cage: a twin-port OSFP switch cage or a 2-way breakout). Candidates:
//! - a cable whose mode at the rate is `straight` (Single-Single), `twin` (Twin-Twin) or
//!   `split` (Twin-Single, the twin cage on either side); its cost per link is its price over
//!   the links it carries;
//! - a pair of transceivers of one class (SR, DR, FR) and one lane rate, each serving as many
//!   ports per module as its end has per cage, plus the fibre cords between them; the cost per
//!   link is each module's price over its ports plus the cords at this length.
//!
//! Modules of the drive `[layout] optics` prefers (`dsp`, `lpo`, `lro`) come first: a pair with
//! another drive at either end is taken only where no cable or preferred pair reaches.
//! Ties go to the earlier candidate (catalog order), so the choice is deterministic.

use fabricsim_core::topology::{Medium, NodeKind, Topology};
use fabricsim_core::units::Time;
use fabricsim_input::catalog::{CableShape, Catalog, Drive, MediumClass};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum End {
    Single,
    Twin,
}

/// One way to carry a link (`Medium::Catalog(i)` is `Media::defs[i]`).
#[derive(Clone, Debug, PartialEq)]
pub enum MediumDef {
    Cable {
        cable: usize,
        shape: CableShape,
        /// For a split cable: whether the twin cage is at the lower end.
        twin_lower: bool,
    },
    Optics {
        /// Transceiver at the lower end and at the upper end.
        lower: usize,
        upper: usize,
        fiber: usize,
        /// Fibre cords per link.
        cords: f64,
    },
}

#[derive(Clone, Debug)]
struct Candidate {
    def: usize,
    reach_m: f64,
    /// Cost per link that does not depend on length.
    usd_fixed: f64,
    /// Cost per metre of link.
    usd_per_m: f64,
    /// A cable, or modules of the preferred drive at both ends.
    preferred: bool,
}

/// The media in use and per-link choices.
#[derive(Clone, Debug, Default)]
pub struct Media {
    pub defs: Vec<MediumDef>,
}

impl Media {
    pub fn class(&self, c: &Catalog, def: usize) -> MediumClass {
        match &self.defs[def] {
            MediumDef::Cable { cable, .. } => c.cables[*cable].class,
            MediumDef::Optics { lower, .. } => c.transceivers[*lower].class,
        }
    }
    /// The lane rate of the cable or transceiver.
    pub fn lane_gbps(&self, c: &Catalog, def: usize) -> u32 {
        match &self.defs[def] {
            MediumDef::Cable { cable, .. } => c.cables[*cable].lane_gbps,
            MediumDef::Optics { lower, .. } => c.transceivers[*lower].lane_gbps,
        }
    }
    pub fn ns_per_m(&self, c: &Catalog, def: usize) -> f64 {
        match &self.defs[def] {
            MediumDef::Cable { cable, .. } => c.cables[*cable].ns_per_m,
            MediumDef::Optics { fiber, .. } => c.fibers[*fiber].ns_per_m,
        }
    }
}

/// A link no catalog medium can carry.
#[derive(Clone, Debug, PartialEq)]
pub struct NoMedium {
    pub rate_gbps: u32,
    pub length_m: f64,
    pub ends: (End, End),
}

/// The end type of a node at `gbps` (None: more than two ports per cage, which no cable or
/// transceiver in this model serves).
fn end_of(t: &Topology, c: &Catalog, switch_id: &str, n: usize, gbps: u32) -> Option<End> {
    match t.nodes[n].kind {
        NodeKind::Nic { .. } => Some(End::Single),
        NodeKind::Switch { .. } => match c.switch(switch_id)?.ports_per_cage(gbps)? {
            1 => Some(End::Single),
            2 => Some(End::Twin),
            _ => None,
        },
    }
}

fn candidates(
    c: &Catalog,
    gbps: u32,
    (a, b): (End, End),
    prefer: Drive,
    defs: &mut Vec<MediumDef>,
) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut push = |def: MediumDef, reach_m: f64, usd_fixed: f64, usd_per_m: f64, preferred| {
        let i = match defs.iter().position(|d| *d == def) {
            Some(i) => i,
            None => {
                defs.push(def);
                defs.len() - 1
            }
        };
        out.push(Candidate {
            def: i,
            reach_m,
            usd_fixed,
            usd_per_m,
            preferred,
        });
    };
    for (i, cable) in c.cables.iter().enumerate() {
        let Some(shape) = cable.shape_at(gbps) else {
            continue;
        };
        let fits = match shape {
            CableShape::Straight => a == End::Single && b == End::Single,
            CableShape::Twin => a == End::Twin && b == End::Twin,
            CableShape::Split => a != b,
        };
        if fits {
            let per_link = cable.price_usd / shape.links() as f64;
            push(
                MediumDef::Cable {
                    cable: i,
                    shape,
                    twin_lower: shape == CableShape::Split && a == End::Twin,
                },
                cable.reach_m,
                per_link,
                0.0,
                true,
            );
        }
    }
    let want = |e: End| if e == End::Twin { 2 } else { 1 };
    for (i, lo) in c.transceivers.iter().enumerate() {
        if lo.ports_at(gbps) != Some(want(a)) {
            continue;
        }
        for (j, up) in c.transceivers.iter().enumerate() {
            if up.ports_at(gbps) != Some(want(b))
                || up.class != lo.class
                || up.lane_gbps != lo.lane_gbps
                || up.fiber != lo.fiber
            {
                continue;
            }
            let Some(fiber) = c.fiber_index(&lo.fiber) else {
                continue;
            };
            // Cords per link: the lower module's cords spread over its ports.
            let cords = lo.fibers as f64 / want(a) as f64;
            let f = &c.fibers[fiber];
            push(
                MediumDef::Optics {
                    lower: i,
                    upper: j,
                    fiber,
                    cords,
                },
                lo.reach_m.min(up.reach_m),
                lo.price_usd / want(a) as f64 + up.price_usd / want(b) as f64 + cords * f.usd_fixed,
                cords * f.usd_per_m,
                lo.drive == prefer && up.drive == prefer,
            );
        }
    }
    out
}

/// Gives every link of `t` its medium and propagation delay (`length_m` must already be set).
/// `switch_id` is the catalog switch every switch node is; `prefer` the module drive to use
/// where one reaches.
pub fn assign(
    t: &mut Topology,
    c: &Catalog,
    switch_id: &str,
    prefer: Drive,
) -> Result<Media, NoMedium> {
    let mut media = Media::default();
    // Candidate lists per (rate, lower end, upper end), built on first use.
    let mut lists: Vec<((u32, End, End), Vec<Candidate>)> = Vec::new();
    for li in 0..t.links.len() {
        let link = &t.links[li];
        let gbps = (link.rate.bps() / 1_000_000_000) as u32;
        let lower = t.ports[link.ends[0].idx()].node.idx();
        let upper = t.ports[link.ends[1].idx()].node.idx();
        let len = link.length_m;
        let no = |ends| NoMedium {
            rate_gbps: gbps,
            length_m: len,
            ends,
        };
        let (Some(a), Some(b)) = (
            end_of(t, c, switch_id, lower, gbps),
            end_of(t, c, switch_id, upper, gbps),
        ) else {
            return Err(no((End::Twin, End::Twin)));
        };
        let key = (gbps, a, b);
        let k = match lists.iter().position(|l| l.0 == key) {
            Some(k) => k,
            None => {
                lists.push((key, candidates(c, gbps, (a, b), prefer, &mut media.defs)));
                lists.len() - 1
            }
        };
        let best = lists[k]
            .1
            .iter()
            .filter(|cand| cand.reach_m >= len)
            .min_by(|x, y| {
                let cx = x.usd_fixed + x.usd_per_m * len;
                let cy = y.usd_fixed + y.usd_per_m * len;
                y.preferred.cmp(&x.preferred).then(cx.total_cmp(&cy))
            })
            .ok_or_else(|| no((a, b)))?;
        let def = best.def;
        let ns = media.ns_per_m(c, def);
        let link = &mut t.links[li];
        link.medium = Medium::Catalog(def as u16);
        link.delay = Time::from_ps((len * ns * 1000.0).round() as u64);
    }
    Ok(media)
}
