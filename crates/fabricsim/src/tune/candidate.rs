//! The candidates of a search: points of the grid of the `[tune.knobs]` values (ids row-major,
//! the last knob fastest), and each one's fabric profile, written as a profile file that
//! `extends` the shipped profile it starts from with the tables it changes
//! (`fabricsim_input::profile_extends`). A candidate is run from that very text, so the file
//! `tune` writes is the profile its figures were measured with.

use std::collections::BTreeSet;

use crate::error::Error;
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_input::profile::{Family, Profile};
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::tune::TuneSpec;

/// The profile the search starts from.
#[derive(Clone, Debug)]
pub struct Base {
    /// Its id (the shipped id, or the file's `id`).
    pub id: String,
    pub name: String,
    pub family: Family,
    /// The shipped profile a written one extends: the base's own id when it is shipped, the
    /// one its file extends otherwise (`None`: a file that extends none; its tables are all
    /// written).
    pub root: Option<String>,
    /// The base, composed (every table).
    pub doc: toml::Table,
    root_doc: Option<toml::Table>,
}

fn table(src: &Source, text: &str) -> Result<toml::Table, InputError> {
    toml::from_str(text).map_err(|e| InputError::from_toml(src, &e))
}

impl Base {
    /// The scenario's `fabric.profile` (a shipped id or a .toml file).
    pub fn of(sc: &Scenario) -> Result<Base, Error> {
        let design = sc.design()?;
        let p = &design.profile;
        let name = sc.file.fabric.profile.trim();
        let composed =
            |id: &str| Profile::builtin_text(id).map(|t| table(&Source::new(id, t.as_str()), &t));
        let (doc, root) = if name.ends_with(".toml") {
            let path = sc.relative_path("fabric.profile", name);
            let text = fabricsim_input::io::input::read_input(path.as_ref())
                .map_err(|e| InputError::io(&path, "fabric profile", e))?;
            let src = Source::new(path.as_str(), text.as_str());
            let own = table(&src, &text)?;
            match own.get("extends").and_then(|e| e.as_str()) {
                Some(x) => {
                    let base = Profile::builtin_text(x).unwrap_or_default();
                    let text = fabricsim_input::profile_extends::compose(&text, &base);
                    (table(&src, &text)?, Some(x.to_string()))
                }
                None => (own, None),
            }
        } else {
            let doc = composed(name).transpose()?.unwrap_or_default();
            (doc, Some(name.to_string()))
        };
        let root_doc = match &root {
            Some(r) => composed(r).transpose()?,
            None => None,
        };
        Ok(Base {
            id: p.id.clone(),
            name: p.name.clone(),
            family: p.family,
            root,
            doc,
            root_doc,
        })
    }
}

/// One candidate: its grid id and a value per knob of the spec (in its order).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    pub id: u64,
    pub values: Vec<f64>,
}

/// Points of the grid.
pub fn grid_size(spec: &TuneSpec) -> u64 {
    spec.knobs
        .iter()
        .fold(1u64, |n, (_, v)| n.saturating_mul(v.len() as u64))
}

/// The candidate with grid id `id`.
pub fn decode(spec: &TuneSpec, id: u64) -> Candidate {
    let mut rest = id;
    let mut values = vec![0.0; spec.knobs.len()];
    for (i, (_, v)) in spec.knobs.iter().enumerate().rev() {
        values[i] = v[(rest % v.len() as u64) as usize];
        rest /= v.len() as u64;
    }
    Candidate { id, values }
}

/// The candidate with `values` (one per knob, each among the knob's values).
pub fn encode(spec: &TuneSpec, values: Vec<f64>) -> Candidate {
    let id = spec
        .knobs
        .iter()
        .zip(&values)
        .fold(0u64, |id, ((_, v), x)| {
            let at = v.iter().position(|y| y == x).expect("a value of the knob");
            id * v.len() as u64 + at as u64
        });
    Candidate { id, values }
}

/// The first round's candidates: the whole grid when it has at most `spec.candidates` points,
/// else that many distinct points drawn with `seed` (Floyd's sampling, Bentley and Floyd,
/// CACM 30(9) 1987), in id order.
pub fn first_round(spec: &TuneSpec, seed: u64) -> Vec<Candidate> {
    let n = grid_size(spec);
    let k = spec.candidates as u64;
    let ids: Vec<u64> = if n <= k {
        (0..n).collect()
    } else {
        let mut rng = Rng::stream(seed, Stream::TuneSample, 0);
        let mut set = BTreeSet::new();
        for j in n - k..n {
            let t = rng.below(j + 1);
            if !set.insert(t) {
                set.insert(j);
            }
        }
        set.into_iter().collect()
    };
    ids.into_iter().map(|id| decode(spec, id)).collect()
}

/// The profile file of `c`: root keys, `extends`, and every table that differs from the root
/// profile's once the knobs are set. `header` lines are written first as comments.
pub fn profile_text(base: &Base, spec: &TuneSpec, c: &Candidate, header: &[String]) -> String {
    let mut doc = base.doc.clone();
    for ((knob, _), v) in spec.knobs.iter().zip(&c.values) {
        knob.set(&mut doc, *v);
    }
    let mut tables = toml::Table::new();
    for (k, v) in &doc {
        let root_keys = ["id", "name", "family", "extends"];
        let same = base.root_doc.as_ref().is_some_and(|r| r.get(k) == Some(v));
        if v.is_table() && !root_keys.contains(&k.as_str()) && !same {
            tables.insert(k.clone(), v.clone());
        }
    }
    let mut out = String::new();
    for h in header {
        out += &format!("# {h}\n");
    }
    let q = |s: &str| toml::Value::String(s.to_string()).to_string();
    out += &format!("id = {}\n", q(&format!("{}-tuned", base.id)));
    out += &format!("name = {}\n", q(&format!("{} (fabricsim tune)", base.name)));
    out += &format!("family = {}\n", q(base.family.name()));
    if let Some(r) = &base.root {
        out += &format!("extends = {}\n", q(r));
    }
    out += "\n";
    out += &toml::to_string(&tables).unwrap_or_default();
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// The profile `text` (from [`profile_text`]) as a candidate runs it.
pub fn profile(text: &str, c: &Candidate) -> Result<Profile, InputError> {
    Profile::parse(&Source::new(format!("(tune candidate {})", c.id), text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(knobs: &str) -> TuneSpec {
        let sc = Scenario::parse("t.toml", &format!("[tune]\n[tune.knobs]\n{knobs}")).unwrap();
        fabricsim_input::scenario::tune::resolve(&sc, Family::Roce).unwrap()
    }

    #[test]
    fn grid_ids_are_row_major_and_sampling_is_seeded_and_distinct() {
        let s = spec("ecn_kmin_bytes = [1, 2, 3]\necn_kmax_bytes = [10, 20]\n");
        assert_eq!(grid_size(&s), 6);
        for id in 0..grid_size(&s) {
            assert_eq!(encode(&s, decode(&s, id).values), decode(&s, id));
        }
        assert_eq!(decode(&s, 0).values, [1.0, 10.0]);
        assert_eq!(decode(&s, 1).values, [1.0, 20.0]);
        assert_eq!(decode(&s, 5).values, [3.0, 20.0]);
        let mut small = s.clone();
        small.candidates = 4;
        let a = first_round(&small, 7);
        assert_eq!(a.len(), 4);
        assert_eq!(a, first_round(&small, 7));
        assert!(a.windows(2).all(|w| w[0].id < w[1].id));
    }

    #[test]
    fn a_candidate_profile_extends_its_base_with_the_changed_tables_only() {
        let sc = Scenario::parse("t.toml", "[fabric]\nprofile = \"roce-400g\"\n").unwrap();
        let base = Base::of(&sc).unwrap();
        let s = spec("ecn_kmin_bytes = [40000]\nrpg_time_reset_us = [50]\n");
        let c = decode(&s, 0);
        let text = profile_text(&base, &s, &c, &["a header".into()]);
        assert!(
            text.starts_with("# a header\nid = \"roce-400g-tuned\""),
            "{text}"
        );
        assert!(text.contains("extends = \"roce-400g\""));
        assert!(text.contains("[congestion]") && text.contains("ecn_kmin_bytes = 40000"));
        assert!(text.contains("[congestion.dcqcn_params]\nrpg_time_reset_us = 50"));
        assert!(
            !text.contains("[ports]"),
            "unchanged tables are inherited: {text}"
        );
        let p = profile(&text, &c).unwrap();
        let tuned = fabricsim_input::profile_fc::from_profile(&p, true).unwrap();
        let d = tuned.cc.algo.dcqcn().unwrap();
        assert_eq!(
            d.rate_increase_timer,
            fabricsim_core::units::Time::from_us(50)
        );
    }
}
