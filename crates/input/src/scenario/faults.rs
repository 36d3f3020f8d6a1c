//! `[faults]`: injected link faults for `fabricsim sim`.
//!
//! ```toml
//! [faults]
//! local_repair_delay = "2ms"      # link state change -> its two ends reflect it ("off": never)
//! global_reroute_delay = "10s"    # -> every switch avoids what it can no longer reach ("off")
//! # (both default to the fabric profile's [reroute]; see sim::reroute)
//! [[faults.link]]
//! link = 12                 # link index: the order of the topology's links (for an ns-3 file,
//!                           # of its link lines; for a topology built from [cluster]/[topology],
//!                           # of the link lines `fabricsim plan --export-ns3` writes)
//! direction = "both"        # up | down | both (loss, drop_nth and drop_every only)
//! loss_rate = 1e-3          # or ber = 1e-12, or drop_nth = 5 (the 5th packet sent on it),
//!                           # or drop_every = 256 (every 256th packet sent on it)
//! down_at = "10us"          # and/or up_at = "50us"
//! flap_period = "40us"      # or a flapping link: from down_at, down for flap_down every
//! flap_down = "10us"        # flap_period, `flaps` times (no up_at)
//! flaps = 5
//! lane_ber = [1e-8, 1e-8, 2e-3, 1e-8]   # or a bad lane; rate_gbps = 200: a degraded link
//!                           # (`scenario::link_phy`)
//!
//! [faults]
//! link_loss = "medium"      # every planned link loses what its medium's pre-FEC BER costs
//!                           # after RS FEC (data/phy/link-errors.toml; default "none")
//! [faults.class_ber]        # pre-FEC BER per link class in place of the table's typical one
//! dr = 1e-4                 # dac, acc, aoc, sr, dr, fr (at every lane rate)
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use super::value::time;
use crate::catalog::MediumClass;
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::topology::LinkId;
use fabricsim_core::units::Time;
use fabricsim_mech::faults::{Dir, Fault, Faults, LinkLoss};
use fabricsim_mech::reroute::RerouteDelays;

/// Largest `drop_every`: one packet in 2^40, past any run's packet count.
pub const MAX_DROP_EVERY: u64 = 1 << 40;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultsSection {
    pub local_repair_delay: Option<String>,
    pub global_reroute_delay: Option<String>,
    /// `none` (default) or `medium`: each planned link's loss from its medium (`medium_loss`).
    pub link_loss: Option<String>,
    #[serde(default)]
    pub class_ber: BTreeMap<String, f64>,
    #[serde(default)]
    pub link: Vec<LinkFaultEntry>,
    /// Receive stalls and forced routes (`scenario::flowctl`).
    #[serde(default)]
    pub nic: Vec<super::flowctl::NicFaultEntry>,
    #[serde(default)]
    pub route: Vec<super::flowctl::RouteFaultEntry>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkFaultEntry {
    pub link: u32,
    pub direction: Option<String>,
    pub loss_rate: Option<f64>,
    pub ber: Option<f64>,
    pub drop_nth: Option<u64>,
    pub drop_every: Option<u64>,
    pub down_at: Option<String>,
    pub up_at: Option<String>,
    pub flap_period: Option<String>,
    pub flap_down: Option<String>,
    pub flaps: Option<u32>,
    /// A pre-FEC BER per lane (`scenario::link_phy`).
    pub lane_ber: Option<Vec<f64>>,
    /// A degraded link's rate (`scenario::link_phy`).
    pub rate_gbps: Option<u32>,
}

/// Most flaps of one link in a run.
pub const MAX_FLAPS: u32 = 10_000;

/// What `[faults] link_loss = "medium"` asks: the pre-FEC BER of each link class that the
/// scenario sets (`class_ber`), the others at the link-error table's typical one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MediumLoss {
    pub class_ber: Vec<(MediumClass, f64)>,
}

impl MediumLoss {
    pub fn ber(&self, class: MediumClass) -> Option<f64> {
        self.class_ber
            .iter()
            .find(|(c, _)| *c == class)
            .map(|(_, b)| *b)
    }
}

impl FaultsSection {
    /// `Some` when every planned link is to take its medium's loss (`link_loss = "medium"`).
    pub fn medium_loss(&self, src: &Source) -> Result<Option<MediumLoss>, InputError> {
        let on = match self.link_loss.as_deref() {
            None | Some("none") => false,
            Some("medium") => true,
            Some(other) => {
                return Err(InputError::at_key(
                    src,
                    "faults.link_loss",
                    format!("\"{other}\""),
                    "unknown link loss",
                    "none, medium",
                ));
            }
        };
        let mut class_ber = Vec::new();
        for (k, &b) in &self.class_ber {
            let key = format!("faults.class_ber.{k}");
            let Some(class) = MediumClass::ALL.into_iter().find(|c| c.key() == k) else {
                return Err(InputError::at_key(
                    src,
                    &key,
                    b,
                    "unknown link class",
                    MediumClass::ALL.map(|c| c.key()).join(", "),
                ));
            };
            if !on {
                return Err(InputError::at_key(
                    src,
                    &key,
                    b,
                    "a class BER applies only when links take their medium's loss",
                    "faults.link_loss = \"medium\" with it, or no [faults.class_ber]",
                ));
            }
            if !(0.0..1e-2).contains(&b) {
                return Err(InputError::at_key(
                    src,
                    &key,
                    b,
                    "out of range",
                    "0 <= BER < 0.01",
                ));
            }
            class_ber.push((class, b));
        }
        Ok(on.then_some(MediumLoss { class_ber }))
    }

    /// Whether a link goes down or up (a flapping link starts with `down_at`).
    pub fn changes_links(&self) -> bool {
        self.link
            .iter()
            .any(|e| e.down_at.is_some() || e.up_at.is_some())
    }

    /// The faults for a topology of `links` links; recovery delays not set here come from
    /// `profile` (the fabric profile's `[reroute]`, if it has one).
    pub fn resolve(
        &self,
        src: &Source,
        links: usize,
        profile: Option<RerouteDelays>,
    ) -> Result<Faults, InputError> {
        let changes_links = self.changes_links();
        let delay = |key: &str, set: &Option<String>, default: Option<Option<Time>>| {
            match (set.as_deref(), default) {
                (Some("off"), _) => Ok(None),
                (Some(s), _) => time(src, key, s).map(Some),
                (None, Some(d)) => Ok(d),
                // Without a link going down or up the delays never act.
                (None, None) if !changes_links => Ok(None),
                (None, None) => Err(InputError::at_key(
                    src,
                    key,
                    "(unset)",
                    "a link goes down or up, and the fabric profile has no [reroute] table",
                    "a duration such as 2ms, or \"off\"",
                )),
            }
        };
        let mut out = Faults {
            faults: Vec::new(),
            reroute: RerouteDelays {
                local_repair: delay(
                    "faults.local_repair_delay",
                    &self.local_repair_delay,
                    profile.map(|p| p.local_repair),
                )?,
                global: delay(
                    "faults.global_reroute_delay",
                    &self.global_reroute_delay,
                    profile.map(|p| p.global),
                )?,
            },
        };
        for e in &self.link {
            let k = |f: &str| format!("faults.link.{f}");
            if e.link as usize >= links {
                return Err(InputError::at_key(
                    src,
                    &k("link"),
                    e.link,
                    "no such link",
                    format!("0 to {}", links.saturating_sub(1)),
                ));
            }
            let link = LinkId(e.link);
            let dir = match e.direction.as_deref().unwrap_or("both") {
                "up" => Dir::Up,
                "down" => Dir::Down,
                "both" => Dir::Both,
                other => {
                    return Err(InputError::at_key(
                        src,
                        &k("direction"),
                        format!("\"{other}\""),
                        "unknown direction",
                        "up, down, both",
                    ));
                }
            };
            if e.loss_rate.is_some() && e.ber.is_some() {
                return Err(InputError::at_key(
                    src,
                    &k("ber"),
                    e.ber.unwrap_or(0.0),
                    "both loss_rate and ber given",
                    "one of loss_rate or ber",
                ));
            }
            if let Some(p) = e.loss_rate {
                if !(0.0..1.0).contains(&p) {
                    return Err(InputError::at_key(
                        src,
                        &k("loss_rate"),
                        p,
                        "out of range",
                        "0 <= p < 1",
                    ));
                }
                out.faults.push(Fault::Loss {
                    link,
                    dir,
                    loss: LinkLoss::Rate(p),
                });
            }
            if let Some(b) = e.ber {
                if !(0.0..1e-2).contains(&b) {
                    return Err(InputError::at_key(
                        src,
                        &k("ber"),
                        b,
                        "out of range",
                        "0 <= BER < 0.01",
                    ));
                }
                out.faults.push(Fault::Loss {
                    link,
                    dir,
                    loss: LinkLoss::Ber(b),
                });
            }
            out.faults.extend(super::link_phy::lane_loss(src, e, dir)?);
            if let Some(nth) = e.drop_nth {
                if nth == 0 {
                    return Err(InputError::at_key(
                        src,
                        &k("drop_nth"),
                        nth,
                        "packets count from 1",
                        "1 or more",
                    ));
                }
                out.faults.push(Fault::DropNth { link, dir, nth });
            }
            if let Some(every) = e.drop_every {
                if !(2..=MAX_DROP_EVERY).contains(&every) {
                    return Err(InputError::at_key(
                        src,
                        &k("drop_every"),
                        every,
                        "out of range (1 would drop every packet)",
                        format!("2 to {MAX_DROP_EVERY}"),
                    ));
                }
                out.faults.push(Fault::DropEvery { link, dir, every });
            }
            let down = e
                .down_at
                .as_deref()
                .map(|s| time(src, &k("down_at"), s))
                .transpose()?;
            let up = e
                .up_at
                .as_deref()
                .map(|s| time(src, &k("up_at"), s))
                .transpose()?;
            if let (Some(d), Some(u)) = (down, up)
                && u <= d
            {
                return Err(InputError::at_key(
                    src,
                    &k("up_at"),
                    u,
                    "the link comes up before it goes down",
                    "a time after down_at",
                ));
            }
            if let Some(flaps) = flap(src, e, down, up)? {
                out.faults.extend(
                    flaps.into_iter().flat_map(|(d, u)| {
                        [Fault::Down { link, at: d }, Fault::Up { link, at: u }]
                    }),
                );
                continue;
            }
            if let Some(at) = down {
                out.faults.push(Fault::Down { link, at });
            }
            if let Some(at) = up {
                out.faults.push(Fault::Up { link, at });
            }
        }
        Ok(out)
    }
}

/// A flapping link's (down, up) times: from `down`, down for `flap_down` every `flap_period`,
/// `flaps` times; `None` without flap keys.
fn flap(
    src: &Source,
    e: &LinkFaultEntry,
    down: Option<Time>,
    up: Option<Time>,
) -> Result<Option<Vec<(Time, Time)>>, InputError> {
    let k = |f: &str| format!("faults.link.{f}");
    let (Some(period), Some(lasts), Some(n)) = (&e.flap_period, &e.flap_down, e.flaps) else {
        if let Some(key) = [
            ("flap_period", e.flap_period.is_some()),
            ("flap_down", e.flap_down.is_some()),
            ("flaps", e.flaps.is_some()),
        ]
        .iter()
        .find(|x| x.1)
        {
            return Err(InputError::at_key(
                src,
                &k(key.0),
                "(set)",
                "a flapping link needs all three flap keys",
                "flap_period, flap_down and flaps together, with down_at",
            ));
        }
        return Ok(None);
    };
    let period = time(src, &k("flap_period"), period)?;
    let lasts = time(src, &k("flap_down"), lasts)?;
    let Some(first) = down.filter(|_| up.is_none()) else {
        return Err(InputError::at_key(
            src,
            &k("flaps"),
            n,
            "a flapping link starts at down_at and comes up by itself",
            "down_at set and up_at unset",
        ));
    };
    if lasts == Time::ZERO || lasts >= period {
        return Err(InputError::at_key(
            src,
            &k("flap_down"),
            lasts,
            "the link must come up before it next goes down",
            "more than 0 and less than flap_period",
        ));
    }
    if !(1..=MAX_FLAPS).contains(&n) {
        return Err(InputError::at_key(
            src,
            &k("flaps"),
            n,
            "out of range",
            format!("1 to {MAX_FLAPS}"),
        ));
    }
    Ok(Some(
        (0..n as u64)
            .map(|i| {
                let d = first + period * i;
                (d, d + lasts)
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> (Source, FaultsSection) {
        let f: FaultsSection = toml::from_str(text).unwrap();
        (Source::new("f.toml", text), f)
    }

    #[test]
    fn a_flapping_link_goes_down_and_up_flaps_times() {
        let text = "[[link]]\nlink = 2\ndown_at = \"10us\"\nflap_period = \"40us\"\n\
                    flap_down = \"5us\"\nflaps = 3\n";
        let (src, f) = section(text);
        let faults = f.resolve(&src, 8, Some(RerouteDelays::default())).unwrap();
        let us = Time::from_us;
        let want: Vec<Fault> = [(10, 15), (50, 55), (90, 95)]
            .iter()
            .flat_map(|&(d, u)| {
                [
                    Fault::Down {
                        link: LinkId(2),
                        at: us(d),
                    },
                    Fault::Up {
                        link: LinkId(2),
                        at: us(u),
                    },
                ]
            })
            .collect();
        assert_eq!(faults.faults, want);
        for (bad, key) in [
            (text.replace("5us", "40us"), "flap_down"),
            (text.replace("flaps = 3", "flaps = 0"), "flaps"),
            (text.replace("flaps = 3\n", ""), "flap_period"),
            (
                text.replace("down_at = \"10us\"", "up_at = \"10us\""),
                "flaps",
            ),
        ] {
            let (src, f) = section(&bad);
            let e = f
                .resolve(&src, 8, Some(RerouteDelays::default()))
                .unwrap_err();
            assert!(e.key.ends_with(key), "{bad}: {e}");
        }
    }

    #[test]
    fn drop_every_is_a_periodic_drop_from_2_on() {
        let (src, f) = section("[[link]]\nlink = 3\ndirection = \"up\"\ndrop_every = 256\n");
        let faults = f.resolve(&src, 8, None).unwrap();
        assert_eq!(
            faults.faults,
            vec![Fault::DropEvery {
                link: LinkId(3),
                dir: Dir::Up,
                every: 256
            }]
        );
        for bad in ["1", "0", "1099511627777"] {
            let (src, f) = section(&format!("[[link]]\nlink = 3\ndrop_every = {bad}\n"));
            let e = f.resolve(&src, 8, None).unwrap_err();
            assert!(e.key.ends_with("drop_every"), "{e}");
            assert_eq!(e.value, bad);
            assert!(e.allowed.contains("2 to"), "{e}");
        }
    }
}
