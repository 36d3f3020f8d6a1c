//! `[[faults.link]]` keys for a link that stays up but runs worse: `lane_ber` (a pre-FEC BER per
//! lane under RS(544,514), IEEE 802.3 Clause 91/119: one bad lane of a link) and `rate_gbps`
//! (a degraded link: lanes lost, the port trained down to a lower rate, as IBTA's link width
//! down-grade, IBA 5.6.3). The rate is applied to the topology, so both engines run it.
//!
//! ```toml
//! [[faults.link]]
//! link = 12
//! lane_ber = [1e-8, 1e-8, 2e-3, 1e-8]   # one BER per lane (400G: 4 x 100G or 2 x 200G)
//! [[faults.link]]
//! link = 13
//! rate_gbps = 200                       # a 400G link running on 2 of its 4 lanes
//! ```

use super::faults::{FaultsSection, LinkFaultEntry};
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::topology::{LinkId, Topology};
use fabricsim_core::units::BitRate;
use fabricsim_mech::faults::{Dir, Fault, LinkLoss};
use fabricsim_mech::fec::{KP4, MAX_LANES};

/// The lane rates of the catalog's SerDes (100G and 200G PAM4, `data/catalog/optics.toml`).
const LANE_GBPS: [u64; 2] = [100, 200];

/// The loss fault of an entry's `lane_ber`, if it has one (checked here; the lane count against
/// the link's rate in [`apply`]).
pub fn lane_loss(src: &Source, e: &LinkFaultEntry, dir: Dir) -> Result<Option<Fault>, InputError> {
    let Some(bers) = &e.lane_ber else {
        return Ok(None);
    };
    let key = "faults.link.lane_ber";
    if e.loss_rate.is_some() || e.ber.is_some() {
        return Err(InputError::at_key(
            src,
            key,
            format!("{bers:?}"),
            "given with loss_rate or ber",
            "one of loss_rate, ber or lane_ber",
        ));
    }
    if ![1, 2, 4, 8].contains(&bers.len()) {
        return Err(InputError::at_key(
            src,
            key,
            format!("{} BERs", bers.len()),
            "not a lane count",
            "1, 2, 4 or 8 BERs, one per lane",
        ));
    }
    let mut ber = [0.0; MAX_LANES];
    for (i, &b) in bers.iter().enumerate() {
        if !(0.0..0.5).contains(&b) {
            return Err(InputError::at_key(
                src,
                key,
                b,
                format!("lane {i} is not a bit error ratio"),
                "0 <= BER < 0.5",
            ));
        }
        ber[i] = b;
    }
    Ok(Some(Fault::Loss {
        link: LinkId(e.link),
        dir,
        loss: LinkLoss::FecLanes {
            fec: KP4,
            ber,
            lanes: bers.len() as u8,
        },
    }))
}

/// Whether a `gbps` link has `lanes` lanes of 100G or 200G.
pub fn lanes_fit(gbps: u64, lanes: u64) -> bool {
    lanes > 0 && gbps % lanes == 0 && LANE_GBPS.contains(&(gbps / lanes))
}

/// The lane counts a `gbps` link has, in words.
pub fn lanes_allowed(gbps: u64) -> String {
    format!("{} or {} BERs", gbps / 100, gbps / 200)
}

/// The rate of a `gbps` link trained down to `g` Gb/s; `Err`: the rates allowed.
pub fn degraded(gbps: u64, g: u32) -> Result<BitRate, String> {
    match g > 0 && (g as u64) < gbps {
        true => Ok(BitRate::gbps(g as u64)),
        false => Err(format!("1 to {}", gbps.saturating_sub(1))),
    }
}

/// Checks each entry's `lane_ber` count and `rate_gbps` against its link in `t` (entries'
/// link indices already checked by `FaultsSection::resolve`) and runs each degraded link at
/// its lower rate, both ways.
pub fn apply(src: &Source, f: &FaultsSection, t: &mut Topology) -> Result<(), InputError> {
    for e in &f.link {
        let Some(link) = t.links.get_mut(e.link as usize) else {
            continue;
        };
        let gbps = link.rate.bps() / 1_000_000_000;
        if let Some(bers) = &e.lane_ber {
            let lanes = bers.len() as u64;
            if !lanes_fit(gbps, lanes) {
                return Err(InputError::at_key(
                    src,
                    "faults.link.lane_ber",
                    format!("{lanes} BERs"),
                    format!(
                        "link {} runs at {gbps}G: not {lanes} lanes of 100G or 200G",
                        e.link
                    ),
                    lanes_allowed(gbps),
                ));
            }
        }
        if let Some(g) = e.rate_gbps {
            link.rate = degraded(gbps, g).map_err(|allowed| {
                InputError::at_key(
                    src,
                    "faults.link.rate_gbps",
                    g,
                    format!(
                        "link {} runs at {gbps}G: a degraded link runs slower",
                        e.link
                    ),
                    allowed,
                )
            })?;
        }
    }
    Ok(())
}
