//! The pre-FEC bit error ratio of each link class and the FEC it runs (`data/phy/link-errors.toml`,
//! every number sourced or an estimate), looked up by medium class and lane rate.

use serde::Deserialize;

use crate::catalog::MediumClass;
use fabricsim_core::error::{InputError, Source};
use fabricsim_mech::fec::{KP4, KR4, RsFec};

const FILE: (&str, &str) = (
    "data/phy/link-errors.toml",
    include_str!("../../../data/phy/link-errors.toml"),
);

/// One link class's error figures.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkErrors {
    pub class: MediumClass,
    pub lane_gbps: u32,
    /// `rs544` (RS(544,514), KP4) or `rs528` (RS(528,514), KR4).
    pub fec: String,
    /// The pre-FEC BER the FEC is designed to (post-FEC BER <= 1e-12 up to it).
    pub limit_ber: f64,
    /// A healthy deployed link's pre-FEC BER.
    pub typical_ber: f64,
}

impl LinkErrors {
    pub fn code(&self) -> RsFec {
        match self.fec.as_str() {
            "rs528" => KR4,
            _ => KP4,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    link: Vec<LinkErrors>,
}

/// The shipped table, checked.
pub fn table() -> Result<Vec<LinkErrors>, InputError> {
    parse(&Source::new(FILE.0, FILE.1))
}

pub fn parse(src: &Source) -> Result<Vec<LinkErrors>, InputError> {
    let f: File = toml::from_str(&src.text).map_err(|e| InputError::from_toml(src, &e))?;
    for (i, l) in f.link.iter().enumerate() {
        let key = |k: &str| format!("link[{i}].{k}");
        if !["rs544", "rs528"].contains(&l.fec.as_str()) {
            return Err(InputError::at_key(
                src,
                &key("fec"),
                &l.fec,
                "unknown FEC",
                "rs544, rs528",
            ));
        }
        for (k, v) in [("limit_ber", l.limit_ber), ("typical_ber", l.typical_ber)] {
            if !(0.0..0.5).contains(&v) {
                return Err(InputError::at_key(
                    src,
                    &key(k),
                    v,
                    "not a bit error ratio",
                    "0 <= BER < 0.5",
                ));
            }
        }
        if f.link[..i]
            .iter()
            .any(|o| o.class == l.class && o.lane_gbps == l.lane_gbps)
        {
            return Err(InputError::at_key(
                src,
                &key("class"),
                l.class.name(),
                "a second entry for this class and lane rate",
                "one entry per class and lane_gbps",
            ));
        }
    }
    Ok(f.link)
}

/// The entry of `class` at `lane_gbps`.
pub fn find(table: &[LinkErrors], class: MediumClass, lane_gbps: u32) -> Option<&LinkErrors> {
    table
        .iter()
        .find(|l| l.class == class && l.lane_gbps == lane_gbps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn every_catalog_medium_has_its_link_errors() {
        let t = table().unwrap();
        let c = Catalog::builtin().unwrap();
        let media = c
            .cables
            .iter()
            .map(|x| (x.class, x.lane_gbps, &x.id))
            .chain(c.transceivers.iter().map(|x| (x.class, x.lane_gbps, &x.id)));
        for (class, lane, id) in media {
            assert!(
                find(&t, class, lane).is_some(),
                "{id}: {} at {lane}G",
                class.name()
            );
        }
    }

    #[test]
    fn every_number_cites_a_source_or_says_estimate() {
        // `lane_gbps` names the class (with `class`); it is not a figure.
        for line in FILE.1.lines().filter(|l| !l.starts_with("lane_gbps")) {
            let code = line.split('#').next().unwrap_or("");
            if code.contains('=') && code.chars().any(|c| c.is_ascii_digit()) && !code.contains('"')
            {
                let comment = line.split_once('#').map(|x| x.1).unwrap_or("");
                assert!(
                    ["[V", "[S", "[E"].iter().any(|t| comment.contains(t)),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn typical_links_run_below_their_limit_and_bad_entries_are_located() {
        for l in table().unwrap() {
            assert!(l.typical_ber < l.limit_ber, "{:?}", l);
        }
        let bad = FILE.1.replacen("fec = \"rs544\"", "fec = \"ldpc\"", 1);
        let e = parse(&Source::new("x.toml", bad)).unwrap_err().to_string();
        assert!(
            e.contains("x.toml") && e.contains("link[0].fec") && e.contains("rs544, rs528"),
            "{e}"
        );
    }
}
