//! What `fabricsim tune` reports: the best settings with their objective's interval against the
//! profile's default, the improvement (per-seed differences, and whether the intervals
//! overlap), each knob's setting as the vendor names it, each knob's main effect, every round;
//! as text, JSON and CSV, and the best settings as a profile file.

use serde::Serialize;

use super::Tuning;
use super::screen::Screened;
use super::search::{self, Found, Improvement, Round, Scored, Sensitivity};
use crate::columns::{Cells, Table};
use fabricsim_core::estimate::Estimate;

/// One knob's setting: the profile's, the best's, and the best as the vendor writes it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Setting {
    pub knob: &'static str,
    pub profile_key: &'static str,
    /// The profile's value (written, or its named DCQCN set's); `None`: neither has one.
    pub default: Option<f64>,
    pub best: f64,
    pub vendor: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TuneReport {
    pub scenario: String,
    pub profile: String,
    pub objective: &'static str,
    pub unit: &'static str,
    /// Whether the runs' packet counters are measured (`Objective::counts_packets`).
    #[serde(skip)]
    counts_packets: bool,
    pub method: &'static str,
    pub eta: usize,
    pub seed: u64,
    pub seeds: u32,
    pub grid_points: u64,
    pub knobs: Vec<&'static str>,
    /// complete | interrupted
    pub status: &'static str,
    /// The flow engine's screen before the rounds, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<Screened>,
    pub rounds: Vec<Round>,
    pub best: Option<Scored>,
    pub default: Option<Scored>,
    pub improvement: Option<Improvement>,
    pub settings: Vec<Setting>,
    pub sensitivity: Vec<Sensitivity>,
    /// The best settings as a profile file (`--fabric FILE`).
    pub profile_toml: Option<String>,
}

impl TuneReport {
    pub fn new(t: &Tuning, found: Found) -> TuneReport {
        let spec = &t.spec;
        let best = found.best.as_ref().filter(|b| b.feasible);
        let improvement = best
            .zip(found.default.as_ref())
            .and_then(|(b, d)| search::improvement(b, d));
        let settings = best
            .and_then(|b| b.candidate.as_ref())
            .map(|c| {
                spec.knobs
                    .iter()
                    .zip(&c.values)
                    .zip(&t.defaults)
                    .map(|(((k, _), &v), &default)| Setting {
                        knob: k.name,
                        profile_key: k.path,
                        default,
                        best: v,
                        vendor: k.vendor_setting(v),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut r = TuneReport {
            scenario: t.sc.source.name.clone(),
            profile: t.base.id.clone(),
            objective: spec.objective.name(),
            unit: spec.objective.unit(),
            counts_packets: spec.objective.counts_packets(),
            method: match spec.method {
                fabricsim_input::scenario::tune::Method::Grid => "grid",
                fabricsim_input::scenario::tune::Method::SuccessiveHalving => "successive_halving",
            },
            eta: spec.eta,
            seed: t.seed,
            seeds: spec.seeds,
            grid_points: super::candidate::grid_size(spec),
            knobs: spec.knobs.iter().map(|(k, _)| k.name).collect(),
            status: if found.complete {
                "complete"
            } else {
                "interrupted"
            },
            sensitivity: found
                .rounds
                .first()
                .map(|r| search::sensitivity(spec, r))
                .unwrap_or_default(),
            improvement,
            settings,
            best: found.best.clone(),
            default: found.default,
            screen: found.screen,
            rounds: found.rounds,
            profile_toml: None,
        };
        r.profile_toml = best
            .and_then(|b| b.candidate.as_ref())
            .map(|c| t.profile_text(c.id, &r.header()));
        r
    }

    /// The written profile's leading comments: what it was measured on and how it did.
    fn header(&self) -> Vec<String> {
        let mut h = vec![format!(
            "fabricsim tune {} --seed {}: {} over {} seeds, {}",
            self.scenario, self.seed, self.objective, self.seeds, self.method
        )];
        if let (Some(b), Some(d)) = (
            self.best.as_ref().and_then(|b| b.objective),
            self.default.as_ref().and_then(|d| d.objective),
        ) {
            h.push(format!(
                "best {} {u}, the {} default {} {u} [simulated]",
                est(&b),
                self.profile,
                est(&d),
                u = self.unit
            ));
        }
        h
    }

    pub fn json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(self).map(|s| s + "\n")
    }

    pub fn text(&self) -> String {
        let mut o = format!(
            "tune {} on {}: minimize {} ({}), {} (eta {}), {} knobs, {} grid points, seed {}\n",
            self.scenario,
            self.profile,
            self.objective,
            self.unit,
            self.method.replace('_', " "),
            self.eta,
            self.knobs.len(),
            self.grid_points,
            self.seed
        );
        if let Some(sc) = &self.screen {
            let n = sc.round.ranked.len();
            o += &format!(
                "  screen: {n} candidates x {} seeds on the {} engine ({} more runs to check the knobs), best {}; ",
                sc.round.seeds,
                sc.engine,
                sc.probes.len(),
                sc.round
                    .ranked
                    .first()
                    .and_then(|s| s.objective)
                    .map_or("-".into(), |e| est(&e)),
            );
            o += &match &sc.skipped {
                None => format!("{} passed on to round 1\n", sc.passed),
                Some(why) => format!("skipped, all {n} go on: {why}\n"),
            };
        }
        for (i, r) in self.rounds.iter().enumerate() {
            let feasible = r.ranked.iter().filter(|s| s.feasible).count();
            o += &format!(
                "  round {}: {} candidates x {} seeds, {} feasible, best {}\n",
                i + 1,
                r.ranked.len(),
                r.seeds,
                feasible,
                r.ranked
                    .first()
                    .and_then(|s| s.objective)
                    .map_or("-".into(), |e| est(&e))
            );
        }
        if self.status != "complete" {
            o += "status: interrupted (the rounds above finished; run again to finish)\n";
        }
        let counted = self.counts_packets;
        let line = |what: &str, s: &Scored| {
            let counters = match counted {
                true => format!(
                    ", drops max {}, PFC pause max {:.1} us",
                    s.samples
                        .iter()
                        .map(|x| x.packets_dropped)
                        .max()
                        .unwrap_or(0),
                    s.samples.iter().map(|x| x.pause_us).fold(0.0, f64::max)
                ),
                false => String::new(),
            };
            format!(
                "{what:<8} {} {} over {} seeds{counters}{}\n",
                s.objective.map_or("-".into(), |e| est(&e)),
                self.unit,
                s.samples.len(),
                s.why
                    .as_ref()
                    .map_or(String::new(), |w| format!(" (not feasible: {w})"))
            )
        };
        if let Some(b) = &self.best {
            o += &line("best", b);
        }
        if let Some(d) = &self.default {
            o += &line("default", d);
        }
        match &self.improvement {
            Some(i) => {
                o += &format!(
                    "improvement: {} {} per seed ({:.1}% of the default), paired over the same seeds; the intervals {}\n",
                    est(&i.difference),
                    self.unit,
                    i.fraction * 100.0,
                    if i.intervals_overlap {
                        "overlap: the seeds do not separate the two"
                    } else {
                        "do not overlap"
                    }
                )
            }
            None if self.status == "complete" => {
                o += "improvement: none measured (no feasible best, or no default figure)\n"
            }
            None => {}
        }
        if !self.settings.is_empty() {
            o += "settings (profile default -> best; as the vendor names it):\n";
            for s in &self.settings {
                o += &format!(
                    "  {:<30} {:>12} -> {:<12} {}\n",
                    s.knob,
                    s.default.map_or("-".into(), |d| format!("{d}")),
                    format!("{}", s.best),
                    s.vendor
                );
            }
        }
        if !self.sensitivity.is_empty() {
            o += &format!(
                "sensitivity (round 1 main effects: mean {} per value; spread = max - min):\n",
                self.objective
            );
            for s in &self.sensitivity {
                let levels: Vec<String> = s
                    .levels
                    .iter()
                    .map(|(v, m, _)| format!("{v}: {m:.2}"))
                    .collect();
                o += &format!(
                    "  {:<30} spread {:>10.2}  {}\n",
                    s.knob,
                    s.spread,
                    levels.join(", ")
                );
            }
        }
        o
    }

    /// One row per candidate's result: each round's (the screen's first, and its knob checks
    /// as `screen_check`), then the best and the default over all seeds (`final`).
    pub fn table(&self) -> Table {
        let mut rows: Vec<(String, usize, usize, &Scored)> = Vec::new();
        if let Some(sc) = &self.screen {
            let seeds = sc.round.seeds as usize;
            let ranked = sc.round.ranked.iter().enumerate();
            rows.extend(ranked.map(|(j, s)| ("screen".into(), seeds, j + 1, s)));
            rows.extend(
                sc.probes
                    .iter()
                    .map(|s| ("screen_check".into(), seeds, 0, s)),
            );
        }
        for (i, r) in self.rounds.iter().enumerate() {
            let ranked = r.ranked.iter().enumerate();
            rows.extend(ranked.map(|(j, s)| ((i + 1).to_string(), r.seeds as usize, j + 1, s)));
        }
        for s in self.best.iter().chain(&self.default) {
            rows.push(("final".into(), s.samples.len(), 0, s));
        }
        let mut t = Table::default();
        t.push("round", Cells::text(rows.iter().map(|r| Some(&r.0))));
        t.push("seeds", Cells::u64(rows.iter().map(|r| Some(r.1 as u64))));
        t.push("rank", Cells::u64(rows.iter().map(|r| Some(r.2 as u64))));
        let id = |s: &Scored| {
            s.candidate
                .as_ref()
                .map_or("default".into(), |c| c.id.to_string())
        };
        t.push("candidate", Cells::text(rows.iter().map(|r| Some(id(r.3)))));
        for (i, k) in self.knobs.iter().enumerate() {
            let v = rows
                .iter()
                .map(|r| r.3.candidate.as_ref().map(|c| c.values[i]));
            t.push(k.to_string(), Cells::f64(v));
        }
        let parts: [(&str, fn(Estimate) -> f64); 3] = [
            ("objective", |e| e.mean),
            ("objective_lo", |e| e.lo),
            ("objective_hi", |e| e.hi),
        ];
        for (name, part) in parts {
            t.push(
                name,
                Cells::f64(rows.iter().map(|r| r.3.objective.map(part))),
            );
        }
        t.push(
            "feasible",
            Cells::text(rows.iter().map(|r| Some(r.3.feasible))),
        );
        let drops = |s: &Scored| {
            s.samples
                .iter()
                .map(|x| x.packets_dropped)
                .max()
                .unwrap_or(0)
        };
        t.push(
            "packets_dropped_max",
            Cells::u64(rows.iter().map(|r| Some(drops(r.3)))),
        );
        let pause = |s: &Scored| s.samples.iter().map(|x| x.pause_us).fold(0.0, f64::max);
        t.push(
            "pause_us_max",
            Cells::f64(rows.iter().map(|r| Some(pause(r.3)))),
        );
        t.push("note", Cells::text(rows.iter().map(|r| r.3.why.as_deref())));
        t
    }
}

fn est(e: &Estimate) -> String {
    match e.n {
        0 | 1 => format!("{:.2}", e.mean),
        _ => format!("{:.2} [{:.2}, {:.2}]", e.mean, e.lo, e.hi),
    }
}
