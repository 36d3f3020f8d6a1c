//! The recommendation: a documented score over the comparison's results and the user's
//! constraints and weights, with the numbers that drove it. No verdict is written in.
//!
//! Scoring (higher is better), for each fabric with a modelled training step, seed by seed
//! (every fabric ran the same seeds: common random numbers):
//! 1. Constraints make a fabric ineligible: network CAPEX over `network_budget_usd`, cluster
//!    CAPEX over `cluster_budget_usd`, a switch that cannot reach `scale_gpus` GPUs in 3 tiers,
//!    or a single-vendor fabric under `single_vendor = "exclude"`.
//! 2. performance = tokens/s / best tokens/s; cost = lowest USD per token / USD per token
//!    (both in (0, 1], 1 = the best of the compared fabrics in that seed).
//! 3. score = (w_perf x performance + w_cost x cost) / (w_perf + w_cost), minus
//!    `single_vendor_penalty` for a single-vendor fabric under `single_vendor = "penalize"`;
//!    each fabric's score is the mean over the seeds with its 95% interval.
//! 4. The eligible fabric with the highest mean score is recommended. The runner-up is too
//!    close to call when the leader's mean is ahead by less than `CLOSE`, or when their
//!    intervals overlap and the seed-by-seed difference's interval reaches zero; the report then
//!    says what would separate them (more seeds, a larger or different job).
//!
//! The verdict's robustness (prices, loss rate) is re-derived from the same results by
//! [`super::robust`].
//!
//! A fabric is single-vendor when every switch of its link layer in the catalog comes from one
//! vendor (the first word of the catalog names): the catalog decides, not this file.

use serde::Serialize;

use super::model::{Comparison, period_s, usd_per_million_tokens};
use super::robust::Robustness;
use fabricsim_core::estimate::Estimate;
use fabricsim_core::topology::max_gpus;
use fabricsim_input::scenario::compare::SingleVendor;

/// Scores closer than this (absolute) are reported as too close to call.
pub const CLOSE: f64 = 0.02;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Score {
    pub fabric: String,
    pub eligible: bool,
    /// Why a fabric is not eligible, or the penalties applied.
    pub constraints: Vec<String>,
    pub performance: Option<Estimate>,
    pub cost: Option<Estimate>,
    pub score: Option<Estimate>,
    pub single_vendor: bool,
    /// Switch vendors of this link layer in the catalog.
    pub switch_vendors: Vec<String>,
    /// Most GPUs this switch reaches in 3 tiers (fat-tree, this oversubscription).
    pub max_gpus_3_tiers: u64,
    /// The score of each seed (the separation compares them seed by seed).
    #[serde(skip)]
    pub by_seed: Vec<f64>,
}

/// Whether the seeds separate the leader from the runner-up, and what would.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Separation {
    pub leader: String,
    pub runner_up: String,
    pub leader_score: Estimate,
    pub runner_up_score: Estimate,
    /// The two scores' 95% intervals share a point.
    pub intervals_overlap: bool,
    /// Leader's score minus the runner-up's, seed by seed.
    pub difference: Estimate,
    /// The difference is at least `CLOSE`, and its interval excludes zero or the two score
    /// intervals do not overlap.
    pub separated: bool,
    /// About how many seeds would narrow the difference's interval to exclude zero (its half
    /// width falls as 1/sqrt(n)), when more seeds can separate them.
    pub seeds_to_separate: Option<u32>,
    pub advice: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recommendation {
    /// The recommended fabric, or None when no fabric is eligible.
    pub fabric: Option<String>,
    /// True when the runner-up is not separated from it ([`Separation`]).
    pub too_close_to_call: bool,
    pub separation: Option<Separation>,
    pub scores: Vec<Score>,
    /// The numbers that drove the result, one sentence each.
    pub reasons: Vec<String>,
    /// The scoring rule, as applied (weights and constraints).
    pub rule: String,
    /// The verdict under price changes and the loss-rate interval.
    pub robustness: Option<Robustness>,
}

/// What the score reads of one fabric: its throughput seed by seed (None without a modelled
/// step) and its costs. [`super::robust`] changes these and scores again.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    pub tokens_per_s_by_seed: Option<Vec<f64>>,
    pub network_capex_usd: f64,
    pub cluster_capex_usd: f64,
    pub cluster_tco_usd: f64,
    /// Training seconds over the TCO period.
    pub period_s: f64,
    /// Why the fabric has no throughput in this case (a run that failed).
    pub missing: Option<String>,
}

/// The comparison's own inputs (its results at catalog prices).
pub fn inputs(c: &Comparison) -> Vec<Inputs> {
    c.fabrics
        .iter()
        .map(|f| Inputs {
            tokens_per_s_by_seed: f.delivered.as_ref().map(|d| d.tokens_per_s_by_seed.clone()),
            network_capex_usd: f.plan.cost.network_capex_usd,
            cluster_capex_usd: f.plan.cost.cluster_capex_usd,
            cluster_tco_usd: f.plan.cost.cluster_tco_usd,
            period_s: period_s(&f.design, c.section.utilization),
            missing: None,
        })
        .collect()
}

fn vendor(name: &str) -> String {
    name.split_whitespace().next().unwrap_or("").to_string()
}

fn usd(x: f64) -> String {
    format!("{:.2} M USD", x / 1e6)
}

/// The recommendation of `c` at its own results, with its robustness.
pub fn recommend(c: &Comparison) -> Recommendation {
    let mut r = score(c, &inputs(c));
    r.robustness = Some(super::robust::derive(c, &r));
    r
}

/// The leader against the runner-up.
fn separation(a: &Score, b: &Score) -> Option<Separation> {
    let (sa, sb) = (a.score?, b.score?);
    let diffs: Vec<f64> = a
        .by_seed
        .iter()
        .zip(&b.by_seed)
        .map(|(x, y)| x - y)
        .collect();
    let d = Estimate::of(&diffs)?;
    let overlap = sa.overlaps(&sb);
    let separated = d.mean >= CLOSE && (d.lo > 0.0 || !overlap);
    let n = d.n;
    let (seeds, advice) = if d.mean < CLOSE {
        (
            None,
            format!(
                "{} leads {} by {} in score, under {CLOSE}: more seeds would narrow the interval but not make a gap this small matter; a larger job (more GPUs, where the network weighs more), another model or other weights and constraints could separate them",
                a.fabric,
                b.fabric,
                d.text(3)
            ),
        )
    } else if n < 2 {
        (
            None,
            format!(
                "one seed: no interval was measured; run with --seeds 5 or more to see whether seed noise explains the {:.3} gap between {} and {}",
                d.mean, a.fabric, b.fabric
            ),
        )
    } else if separated {
        (
            None,
            format!(
                "{} leads {} by {} in score over {n} seeds: seed noise does not explain the gap",
                a.fabric,
                b.fabric,
                d.text(3)
            ),
        )
    } else {
        let need = ((n as f64 * (d.half_width() / d.mean).powi(2)).ceil() as u32 + 1).max(n + 1);
        (
            Some(need),
            format!(
                "{} leads {} by {} in score over {n} seeds, an interval that reaches zero: about {need} seeds would separate them if the gap holds (the interval's half width falls as 1/sqrt(seeds)); a larger job would widen the gap",
                a.fabric,
                b.fabric,
                d.text(3)
            ),
        )
    };
    Some(Separation {
        leader: a.fabric.clone(),
        runner_up: b.fabric.clone(),
        leader_score: sa,
        runner_up_score: sb,
        intervals_overlap: overlap,
        difference: d,
        separated,
        seeds_to_separate: seeds,
        advice,
    })
}

/// The recommendation from `inputs` (one per fabric of `c`, in its order); no robustness.
pub fn score(c: &Comparison, inputs: &[Inputs]) -> Recommendation {
    let sec = &c.section;
    let w = sec.weights;
    let wsum = w.performance + w.cost;
    let seeds = inputs
        .iter()
        .filter_map(|x| x.tokens_per_s_by_seed.as_ref().map(Vec::len))
        .min()
        .unwrap_or(0);
    let cpt = |x: &Inputs, i: usize| {
        x.tokens_per_s_by_seed
            .as_ref()
            .map(|t| usd_per_million_tokens(x.cluster_tco_usd, t[i], x.period_s))
    };
    let best_tps: Vec<f64> = (0..seeds)
        .map(|i| {
            inputs
                .iter()
                .filter_map(|x| x.tokens_per_s_by_seed.as_ref().map(|t| t[i]))
                .fold(0.0, f64::max)
        })
        .collect();
    let low_cpt: Vec<f64> = (0..seeds)
        .map(|i| {
            inputs
                .iter()
                .filter_map(|x| cpt(x, i))
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let mut scores = Vec::new();
    for (f, x) in c.fabrics.iter().zip(inputs) {
        let d = &f.design;
        let layer = d.switch.family;
        let mut vendors: Vec<String> = d
            .catalog
            .switches
            .iter()
            .filter(|s| s.family == layer)
            .map(|s| vendor(&s.name))
            .collect();
        vendors.sort();
        vendors.dedup();
        let single = vendors.len() <= 1;
        let max3 = max_gpus(&d.spec, 3);
        let mut why = Vec::new();
        if let Some(b) = sec.network_budget_usd.filter(|&b| x.network_capex_usd > b) {
            why.push(format!(
                "network CAPEX {} is over the budget of {}",
                usd(x.network_capex_usd),
                usd(b)
            ));
        }
        if let Some(b) = sec.cluster_budget_usd.filter(|&b| x.cluster_capex_usd > b) {
            why.push(format!(
                "cluster CAPEX {} is over the budget of {}",
                usd(x.cluster_capex_usd),
                usd(b)
            ));
        }
        let scale = sec
            .scale_gpus
            .map(|g| g as u64)
            .unwrap_or(d.spec.gpus as u64);
        if max3 < scale {
            why.push(format!(
                "{} reaches at most {max3} GPUs in 3 tiers, short of the {scale} required",
                d.switch.id
            ));
        }
        if single && sec.single_vendor == SingleVendor::Exclude {
            why.push(format!(
                "single-vendor ({}) and single_vendor = \"exclude\"",
                vendors.join(", ")
            ));
        }
        let tps = x.tokens_per_s_by_seed.as_ref().filter(|t| t.len() >= seeds);
        let eligible = why.is_empty() && tps.is_some() && seeds > 0;
        if tps.is_none() {
            why.push(
                x.missing
                    .clone()
                    .unwrap_or_else(|| "no modelled training step (see notes)".into()),
            );
        }
        let penalty = match single && sec.single_vendor == SingleVendor::Penalize {
            true => {
                why.push(format!(
                    "single-vendor ({}): score - {}",
                    vendors.join(", "),
                    sec.single_vendor_penalty
                ));
                sec.single_vendor_penalty
            }
            false => 0.0,
        };
        let (mut perf, mut costr, mut by_seed) = (Vec::new(), Vec::new(), Vec::new());
        if let Some(t) = tps {
            for i in 0..seeds {
                let p = t[i] / best_tps[i];
                let k = low_cpt[i] / cpt(x, i).unwrap_or(f64::INFINITY);
                perf.push(p);
                costr.push(k);
                by_seed.push((w.performance * p + w.cost * k) / wsum - penalty);
            }
        }
        scores.push(Score {
            fabric: f.variant.name.clone(),
            eligible,
            constraints: why,
            performance: Estimate::of(&perf),
            cost: Estimate::of(&costr),
            score: Estimate::of(&by_seed),
            single_vendor: single,
            switch_vendors: vendors,
            max_gpus_3_tiers: max3,
            by_seed,
        });
    }
    let mut ranked: Vec<&Score> = scores
        .iter()
        .filter(|s| s.eligible && s.score.is_some())
        .collect();
    let mean = |s: &Score| s.score.map_or(f64::NEG_INFINITY, |e| e.mean);
    ranked.sort_by(|a, b| mean(b).total_cmp(&mean(a)));
    let mut reasons = Vec::new();
    let top = ranked.first().map(|s| s.fabric.clone());
    let sep = match ranked.as_slice() {
        [a, b, ..] => separation(a, b),
        _ => None,
    };
    let close = sep.as_ref().is_some_and(|s| !s.separated);
    let est = |e: Option<Estimate>, pct: bool| {
        e.map(|e| match (pct, e.n) {
            (true, 0 | 1) => format!("{:.1}%", 100.0 * e.mean),
            (true, _) => format!("{:.1}% ± {:.1}%", 100.0 * e.mean, 100.0 * e.half_width()),
            (false, _) => e.text(3),
        })
        .unwrap_or_else(|| "-".into())
    };
    for s in &ranked {
        reasons.push(format!(
            "{}: score {} from throughput {} of the best and cost score {} (lowest USD per token over its own){}",
            s.fabric,
            est(s.score, false),
            est(s.performance, true),
            est(s.cost, true),
            if s.constraints.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.constraints.join("; "))
            }
        ));
    }
    for s in scores.iter().filter(|s| !s.eligible) {
        reasons.push(format!(
            "{}: not eligible: {}",
            s.fabric,
            s.constraints.join("; ")
        ));
    }
    if let Some(sp) = &sep {
        if sp.intervals_overlap {
            reasons.push(format!(
                "the score intervals of {} ({}) and {} ({}) overlap",
                sp.leader,
                sp.leader_score.text(3),
                sp.runner_up,
                sp.runner_up_score.text(3)
            ));
        }
        reasons.push(sp.advice.clone());
        if close {
            reasons.push(format!(
                "{} and {} do not separate on these numbers; decide on what is not scored (operations skills, supply, vendor policy) or measure what would separate them",
                sp.leader, sp.runner_up
            ));
        }
    }
    let rule = format!(
        "score = ({} x throughput/best + {} x lowest cost per token/cost per token) / {}, seed by seed, mean and 95% interval over {seeds} seed(s); constraints: network budget {}, cluster budget {}, scale {} GPUs in 3 tiers, single vendor {}",
        w.performance,
        w.cost,
        wsum,
        sec.network_budget_usd.map(usd).unwrap_or("none".into()),
        sec.cluster_budget_usd.map(usd).unwrap_or("none".into()),
        sec.scale_gpus
            .map(|g| g.to_string())
            .unwrap_or("= cluster size".into()),
        sec.single_vendor.name()
    );
    Recommendation {
        fabric: top,
        too_close_to_call: close,
        separation: sep,
        scores,
        reasons,
        rule,
        robustness: None,
    }
}
