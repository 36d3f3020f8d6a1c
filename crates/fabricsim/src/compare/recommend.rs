//! The recommendation: a documented score over the comparison's results and the user's
//! constraints and weights, with the numbers that drove it. No verdict is written in.
//!
//! Scoring (higher is better), for each fabric with a modelled training step:
//! 1. Constraints make a fabric ineligible: network CAPEX over `network_budget_usd`, cluster
//!    CAPEX over `cluster_budget_usd`, a switch that cannot reach `scale_gpus` GPUs in 3 tiers,
//!    or a single-vendor fabric under `single_vendor = "exclude"`.
//! 2. performance = tokens/s / best tokens/s; cost = lowest USD per token / USD per token
//!    (both in (0, 1], 1 = the best of the compared fabrics).
//! 3. score = (w_perf x performance + w_cost x cost) / (w_perf + w_cost), minus
//!    `single_vendor_penalty` for a single-vendor fabric under `single_vendor = "penalize"`.
//! 4. The eligible fabric with the highest score is recommended; when the runner-up is within
//!    `CLOSE` of it, the report says the numbers do not separate them.
//!
//! A fabric is single-vendor when every switch of its link layer in the catalog comes from one
//! vendor (the first word of the catalog names): the catalog decides, not this file.

use serde::Serialize;

use super::model::Comparison;
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
    pub performance: Option<f64>,
    pub cost: Option<f64>,
    pub score: Option<f64>,
    pub single_vendor: bool,
    /// Switch vendors of this link layer in the catalog.
    pub switch_vendors: Vec<String>,
    /// Most GPUs this switch reaches in 3 tiers (fat-tree, this oversubscription).
    pub max_gpus_3_tiers: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Recommendation {
    /// The recommended fabric, or None when no fabric is eligible.
    pub fabric: Option<String>,
    /// True when the runner-up scores within `CLOSE` of it.
    pub too_close_to_call: bool,
    pub scores: Vec<Score>,
    /// The numbers that drove the result, one sentence each.
    pub reasons: Vec<String>,
    /// The scoring rule, as applied (weights and constraints).
    pub rule: String,
}

fn vendor(name: &str) -> String {
    name.split_whitespace().next().unwrap_or("").to_string()
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn usd(x: f64) -> String {
    format!("{:.2} M USD", x / 1e6)
}

pub fn recommend(c: &Comparison) -> Recommendation {
    let sec = &c.section;
    let w = sec.weights;
    let wsum = w.performance + w.cost;
    let best_tps = c
        .fabrics
        .iter()
        .filter_map(|f| f.delivered.as_ref().map(|d| d.tokens_per_s))
        .fold(0.0, f64::max);
    let low_cpt = c
        .fabrics
        .iter()
        .filter_map(|f| f.delivered.as_ref().map(|d| d.usd_per_million_tokens))
        .fold(f64::INFINITY, f64::min);
    let mut scores = Vec::new();
    for f in &c.fabrics {
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
        let cost = &f.plan.cost;
        if let Some(b) = sec
            .network_budget_usd
            .filter(|&b| cost.network_capex_usd > b)
        {
            why.push(format!(
                "network CAPEX {} is over the budget of {}",
                usd(cost.network_capex_usd),
                usd(b)
            ));
        }
        if let Some(b) = sec
            .cluster_budget_usd
            .filter(|&b| cost.cluster_capex_usd > b)
        {
            why.push(format!(
                "cluster CAPEX {} is over the budget of {}",
                usd(cost.cluster_capex_usd),
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
        let eligible = why.is_empty() && f.delivered.is_some();
        if f.delivered.is_none() {
            why.push("no modelled training step (see notes)".into());
        }
        let perf = f.delivered.as_ref().map(|x| x.tokens_per_s / best_tps);
        let costr = f
            .delivered
            .as_ref()
            .map(|x| low_cpt / x.usd_per_million_tokens);
        let mut score = match (perf, costr) {
            (Some(p), Some(k)) if wsum > 0.0 => Some((w.performance * p + w.cost * k) / wsum),
            _ => None,
        };
        if single && sec.single_vendor == SingleVendor::Penalize {
            score = score.map(|s| s - sec.single_vendor_penalty);
            why.push(format!(
                "single-vendor ({}): score - {}",
                vendors.join(", "),
                sec.single_vendor_penalty
            ));
        }
        scores.push(Score {
            fabric: f.variant.name.clone(),
            eligible,
            constraints: why,
            performance: perf,
            cost: costr,
            score,
            single_vendor: single,
            switch_vendors: vendors,
            max_gpus_3_tiers: max3,
        });
    }
    let mut ranked: Vec<&Score> = scores
        .iter()
        .filter(|s| s.eligible && s.score.is_some())
        .collect();
    ranked.sort_by(|a, b| b.score.partial_cmp(&a.score).expect("finite scores"));
    let mut reasons = Vec::new();
    let top = ranked.first().map(|s| s.fabric.clone());
    let close = ranked.len() >= 2
        && ranked[0].score.unwrap_or(0.0) - ranked[1].score.unwrap_or(0.0) < CLOSE;
    for s in &ranked {
        reasons.push(format!(
            "{}: score {:.3} from throughput {} of the best and cost score {} (lowest USD per token over its own){}",
            s.fabric,
            s.score.unwrap_or(0.0),
            pct(s.performance.unwrap_or(0.0)),
            pct(s.cost.unwrap_or(0.0)),
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
    if close {
        reasons.push(format!(
            "{} and {} score within {CLOSE}: on these numbers they do not separate; decide on what is not scored (operations skills, supply, vendor policy)",
            ranked[0].fabric, ranked[1].fabric
        ));
    }
    let rule = format!(
        "score = ({} x throughput/best + {} x lowest cost per token/cost per token) / {}; constraints: network budget {}, cluster budget {}, scale {} GPUs in 3 tiers, single vendor {}",
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
        scores,
        reasons,
        rule,
    }
}
