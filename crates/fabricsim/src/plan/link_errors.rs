//! The plan's link classes with their error figures: the pre-FEC BER each class typically runs
//! at and the FEC's limit (`data/phy/link-errors.toml`), the RS(544,514) codeword failure and
//! MTU frame loss that follow (`mech::fec`), and the frames one link direction loses per day at
//! line rate; and for `sim`, each link's loss as a fault (`[faults] link_loss = "medium"`).

use fabricsim_core::topology::{Medium, Topology};
use fabricsim_input::catalog::{Catalog, MediumClass};
use fabricsim_input::link_errors::{self, LinkErrors};
use fabricsim_input::scenario::faults::MediumLoss;
use fabricsim_mech::faults::{Dir, Fault, LinkLoss};

use super::media::Media;

/// What a class of links loses.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassErrors {
    pub class: MediumClass,
    pub lane_gbps: u32,
    pub links: u64,
    /// None when the table has no figures for this class and lane rate (a user catalog's).
    pub figures: Option<Figures>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Figures {
    pub errors: LinkErrors,
    /// At the typical BER.
    pub codeword_failure: f64,
    pub frame_loss: f64,
    /// At the FEC's limit BER.
    pub frame_loss_at_limit: f64,
    /// Frames of the MTU one direction of one link loses per day at line rate, typical BER.
    pub frames_lost_per_day: f64,
}

/// The classes carrying `t`'s links, in order of first use; frames of `wire_bytes` at `gbps`.
pub fn of(
    t: &Topology,
    c: &Catalog,
    media: &Media,
    wire_bytes: u32,
    gbps: u32,
) -> Vec<ClassErrors> {
    let table = link_errors::table().expect("the shipped link-error table parses (its tests)");
    let mut out: Vec<ClassErrors> = Vec::new();
    for l in &t.links {
        let Medium::Catalog(def) = l.medium else {
            continue;
        };
        let (class, lane) = (
            media.class(c, def as usize),
            media.lane_gbps(c, def as usize),
        );
        if let Some(x) = out
            .iter_mut()
            .find(|x| x.class == class && x.lane_gbps == lane)
        {
            x.links += 1;
            continue;
        }
        let figures = link_errors::find(&table, class, lane).map(|e| {
            let fec = e.code();
            let frame_loss = fec.frame_loss(e.typical_ber, wire_bytes as u64);
            let frames_per_day = gbps as f64 * 1e9 / 8.0 / wire_bytes as f64 * 86_400.0;
            Figures {
                codeword_failure: fec.codeword_failure(e.typical_ber),
                frame_loss,
                frame_loss_at_limit: fec.frame_loss(e.limit_ber, wire_bytes as u64),
                frames_lost_per_day: frame_loss * frames_per_day,
                errors: e.clone(),
            }
        });
        out.push(ClassErrors {
            class,
            lane_gbps: lane,
            links: 1,
            figures,
        });
    }
    out
}

/// Every link of `t` with a catalog medium losing, both ways, what its class's pre-FEC BER
/// (`loss`'s, else the table's typical one) costs under the class's FEC, and taking the FEC's
/// decode latency on its delay (`RsFec::latency`, once per hop); `Err` names the first class
/// and lane rate the table has no figures for.
pub fn link_faults(
    t: &mut Topology,
    c: &Catalog,
    media: &Media,
    loss: &MediumLoss,
) -> Result<Vec<Fault>, (MediumClass, u32)> {
    let table = link_errors::table().expect("the shipped link-error table parses (its tests)");
    let mut out = Vec::new();
    for (i, l) in t.links.iter_mut().enumerate() {
        let Medium::Catalog(def) = l.medium else {
            continue;
        };
        let (class, lane) = (
            media.class(c, def as usize),
            media.lane_gbps(c, def as usize),
        );
        let e = link_errors::find(&table, class, lane).ok_or((class, lane))?;
        let gbps = (l.rate.bps() / 1_000_000_000) as u32;
        l.delay = l.delay + e.code().latency(gbps);
        out.push(Fault::Loss {
            link: fabricsim_core::topology::LinkId(i as u32),
            dir: Dir::Both,
            loss: LinkLoss::Fec {
                fec: e.code(),
                ber: loss.ber(class).unwrap_or(e.typical_ber),
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use fabricsim_input::catalog::MediumClass;

    /// A plan's link classes carry every link that has a catalog medium, each class with the
    /// table's figures for its medium and lane rate.
    #[test]
    fn every_planned_link_is_in_one_class_with_the_figures_of_its_medium() {
        let s = fabricsim_input::scenario::Scenario::parse("t.toml", "[cluster]\ngpus = 1024\n")
            .unwrap();
        let (_, t, p) = crate::plan::run(&s).unwrap();
        let total: u64 = p.link_errors.iter().map(|x| x.links).sum();
        let with_medium = t
            .links
            .iter()
            .filter(|l| matches!(l.medium, fabricsim_core::topology::Medium::Catalog(_)))
            .count() as u64;
        assert_eq!(total, with_medium);
        let table = fabricsim_input::link_errors::table().unwrap();
        for x in &p.link_errors {
            let f = x
                .figures
                .as_ref()
                .expect("the shipped catalog's media all have figures");
            let e = fabricsim_input::link_errors::find(&table, x.class, x.lane_gbps).unwrap();
            assert_eq!(f.errors, *e);
            assert!(f.frame_loss_at_limit > f.frame_loss);
        }
        assert!(p.link_errors.iter().any(|x| x.class != MediumClass::Dac));
    }
}
