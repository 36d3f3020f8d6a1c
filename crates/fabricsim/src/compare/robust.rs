//! Robustness of the verdict (issue 23, item 4): the recommendation re-derived under a price
//! change of -20% and +20% for each cost class of the plan (`plan::cost`: switches, NICs,
//! optics, cables and fibre, GPU servers, energy), and under the loss-rate interval (each
//! fabric's `[[compare.fabrics]] loss_rate_interval`, else a lossy fabric's rate x0.1 and x10), saying which changes flip it. Price cases are scored again
//! from the same results (CAPEX, TCO and cost per token recomputed, nothing re-simulated); the
//! loss cases use the lossy fabrics' steps re-run at those rates (`model::LossCase`).

use serde::Serialize;

use super::model::{Comparison, FabricResult, LOSS_ENDS, LOSS_FACTORS, loss_ends};
use super::recommend::{Inputs, Recommendation, inputs, score};

/// The price changes tried per class.
pub const PRICE_CHANGES: [f64; 2] = [-0.2, 0.2];

/// A cost class of the plan (`plan::cost::Cost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Switches,
    Nics,
    Optics,
    Cables,
    Servers,
    Energy,
}

impl Class {
    pub const ALL: [Class; 6] = [
        Class::Switches,
        Class::Nics,
        Class::Optics,
        Class::Cables,
        Class::Servers,
        Class::Energy,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Class::Switches => "switch prices",
            Class::Nics => "NIC prices",
            Class::Optics => "optics (transceiver) prices",
            Class::Cables => "cable and fibre prices",
            Class::Servers => "GPU server prices",
            Class::Energy => "energy price",
        }
    }
}

/// One changed case and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Case {
    /// What was changed, such as "switch prices +20%".
    pub change: String,
    /// The recommended fabric in this case (None: no fabric eligible).
    pub fabric: Option<String>,
    pub too_close_to_call: bool,
    /// The recommended fabric differs from the comparison's own.
    pub flips: bool,
    /// Each fabric's mean score in this case, in comparison order.
    pub scores: Vec<(String, Option<f64>)>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Robustness {
    /// The verdict being tested.
    pub fabric: Option<String>,
    pub cases: Vec<Case>,
    /// The changes that flip it.
    pub flipped_by: Vec<String>,
    /// Loss cases not run and why (no lossy fabric, a rate at or above 0.5, a failed run).
    pub notes: Vec<String>,
}

/// `x` with class `k`'s prices scaled by `1 + change`: CAPEX and TCO recomputed as
/// `plan::cost::of` adds them (spares and support follow the hardware; labour, the management
/// network and licences do not move; TCO = CAPEX + years x (energy + licences + support)).
fn priced(f: &FabricResult, x: &Inputs, k: Class, change: f64) -> Inputs {
    let c = &f.plan.cost;
    let rates = &f.design.cost;
    let m = |class: Class| if class == k { 1.0 + change } else { 1.0 };
    let hardware = c.switches_usd * m(Class::Switches)
        + c.nics_usd * m(Class::Nics)
        + c.optics_usd * m(Class::Optics)
        + c.cables_usd * m(Class::Cables);
    let network = hardware * (1.0 + rates.spares_share) + c.install_usd + c.oob_usd;
    let cluster = network + c.compute_capex_usd * m(Class::Servers);
    let energy = c.cluster_opex_usd_per_year - c.network_opex_usd_per_year + c.energy_usd_per_year;
    let opex = energy * m(Class::Energy)
        + c.software_usd_per_year
        + hardware * rates.support_share_per_year;
    let years = rates.years as f64;
    Inputs {
        network_capex_usd: network,
        cluster_capex_usd: cluster,
        cluster_tco_usd: cluster + years * opex,
        ..x.clone()
    }
}

fn case(c: &Comparison, base: &Recommendation, change: String, x: &[Inputs]) -> Case {
    let r = score(c, x);
    Case {
        change,
        flips: r.fabric != base.fabric,
        too_close_to_call: r.too_close_to_call,
        scores: r
            .scores
            .iter()
            .map(|s| (s.fabric.clone(), s.score.map(|e| e.mean)))
            .collect(),
        fabric: r.fabric,
    }
}

/// The verdict `base` of `c` under every price change and the loss-rate interval.
pub fn derive(c: &Comparison, base: &Recommendation) -> Robustness {
    let own = inputs(c);
    let mut cases = Vec::new();
    for k in Class::ALL {
        for ch in PRICE_CHANGES {
            let x: Vec<Inputs> = c
                .fabrics
                .iter()
                .zip(&own)
                .map(|(f, x)| priced(f, x, k, ch))
                .collect();
            let name = format!("{} {:+.0}%", k.name(), 100.0 * ch);
            cases.push(case(c, base, name, &x));
        }
    }
    let mut notes = Vec::new();
    let lossy: Vec<&FabricResult> = c
        .fabrics
        .iter()
        .filter(|f| loss_ends(&f.variant).is_some())
        .collect();
    if lossy.is_empty() {
        notes.push("no fabric has random loss: no loss-rate interval to test".into());
    }
    // Scenario-given intervals name their ends; the default one its factors.
    let given = lossy.iter().any(|f| f.variant.loss_interval.is_some());
    for (end, k) in LOSS_ENDS.into_iter().zip(LOSS_FACTORS) {
        let mut x = own.clone();
        let mut rates = Vec::new();
        for (f, xi) in c.fabrics.iter().zip(x.iter_mut()) {
            if loss_ends(&f.variant).is_none() {
                continue;
            }
            match f.loss_cases.iter().find(|l| l.end == end) {
                Some(l) if l.error.is_none() => {
                    xi.tokens_per_s_by_seed = Some(l.tokens_per_s_by_seed.clone());
                    rates.push(format!("{} at {}", f.variant.name, l.loss_rate));
                }
                Some(l) => {
                    xi.tokens_per_s_by_seed = None;
                    xi.missing = Some(format!(
                        "its step at loss rate {} did not complete",
                        l.loss_rate
                    ));
                    rates.push(format!("{} at {} (failed)", f.variant.name, l.loss_rate));
                    notes.push(format!(
                        "{} at loss rate {}: {}",
                        f.variant.name,
                        l.loss_rate,
                        l.error.as_deref().unwrap_or_default()
                    ));
                }
                None => notes.push(format!(
                    "{} at the {end} end of its loss-rate interval was not run (a rate of 0.5 \
                     or more, or interrupted)",
                    f.variant.name
                )),
            }
        }
        if !rates.is_empty() {
            let name = match given {
                true => format!(
                    "loss rate at the interval's {end} end ({})",
                    rates.join(", ")
                ),
                false => format!("loss rate x{k} ({})", rates.join(", ")),
            };
            cases.push(case(c, base, name, &x));
        }
    }
    Robustness {
        fabric: base.fabric.clone(),
        flipped_by: cases
            .iter()
            .filter(|c| c.flips)
            .map(|c| c.change.clone())
            .collect(),
        cases,
        notes,
    }
}
