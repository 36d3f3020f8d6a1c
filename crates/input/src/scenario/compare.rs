//! The `[compare]` section: which fabrics to put side by side, and the user's constraints and
//! weights that the recommendation ([`super::recommend`]) scores them by.

use serde::Deserialize;

/// One fabric of the comparison: a profile, plus the transport parameters the packet engine
/// takes (loss, loss recovery) that stand in for "untuned" until PFC/ECN/DCQCN are modelled.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FabricEntry {
    /// Label in reports (default: the profile id).
    pub name: Option<String>,
    /// Fabric profile id (`ib-ndr`, `roce-400g`, ...).
    pub profile: String,
    /// `go-back-n` (default, the RC transport of ConnectX NICs) or `selective-repeat` (IRN).
    pub transport: Option<String>,
    /// Per-packet random loss rate on every link (default 0).
    pub loss_rate: Option<f64>,
    /// Pre-FEC bit error ratio on every link (default 0): each frame of the profile's MTU lost
    /// as RS(544,514) fails (`mech::fec`), on top of `loss_rate`.
    pub ber: Option<f64>,
    /// The loss rates the verdict is re-derived under, `[low, high]` around `loss_rate`
    /// (0 <= low <= loss_rate <= high < 0.5; default `loss_rate` x0.1 and x10, none for a
    /// lossless fabric).
    pub loss_rate_interval: Option<[f64; 2]>,
    /// The profile's tuned parameters (default) or its documented untuned variant (RoCE: DCQCN
    /// off, ECN thresholds above PFC XOFF, legacy fixed headroom; see data/profiles).
    pub tuned: Option<bool>,
}

/// What to do with a fabric whose switches come from a single vendor in the catalog.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SingleVendor {
    /// No effect on the score (default).
    #[default]
    Accept,
    /// Subtract `single_vendor_penalty` from the score.
    Penalize,
    /// Not eligible for the recommendation.
    Exclude,
}

impl SingleVendor {
    pub fn name(self) -> &'static str {
        match self {
            SingleVendor::Accept => "accept",
            SingleVendor::Penalize => "penalize",
            SingleVendor::Exclude => "exclude",
        }
    }
}

/// Which points of the claims section (`compare::claims`: the field's claims answered by runs
/// at other cluster sizes) a comparison runs.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimsMode {
    /// The points that fit the default comparison's time: the resized clusters on the
    /// scenario's engine, the loss rows, and the 16,384-GPU point in closed form (default).
    #[default]
    Quick,
    /// Every point, the 16,384-GPU one on the flow engine too.
    Full,
    /// No claims section.
    Off,
}

impl ClaimsMode {
    pub fn name(self) -> &'static str {
        match self {
            ClaimsMode::Quick => "quick",
            ClaimsMode::Full => "full",
            ClaimsMode::Off => "off",
        }
    }
}

/// Relative weights of the two score terms; they need not add up to 1.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Weights {
    /// Weight of delivered training throughput (tokens/s relative to the best).
    pub performance: f64,
    /// Weight of cost per delivered throughput (best USD per token over this one's).
    pub cost: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            performance: 0.5,
            cost: 0.5,
        }
    }
}

/// Seeds of a comparison by default: 5 keep the built-in comparison
/// (examples/compare-default.toml) under a minute on 2 cores, with a t quantile of 2.78.
pub const DEFAULT_SEEDS: u32 = 5;
/// Seeds of `collective` and `train --calibrate` by default: 3, the fewest that give an
/// interval (t quantile 4.30), since their default runs are larger than compare's (the default
/// collective is one 1,024-GPU packet run of ~10 s CPU and 3.7 GB per seed).
pub const DEFAULT_ENGINE_SEEDS: u32 = 3;
/// Most seeds a run takes (the Student-t table of `fabricsim_core::estimate` covers 30; beyond
/// it the normal quantile).
pub const MAX_SEEDS: u32 = 100;

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CompareSection {
    /// The fabrics, in report order (default: those of the built-in comparison,
    /// examples/compare-default.toml: ib-ndr, roce-400g tuned, roce-400g untuned).
    pub fabrics: Option<Vec<FabricEntry>>,
    /// Upper bound on network CAPEX, USD (none by default).
    pub network_budget_usd: Option<f64>,
    /// Upper bound on cluster CAPEX (servers + network), USD (none by default).
    pub cluster_budget_usd: Option<f64>,
    /// GPUs the fabric must be able to grow to with its switch in at most 3 tiers (default:
    /// the cluster's size).
    pub scale_gpus: Option<i64>,
    pub single_vendor: SingleVendor,
    /// Score points taken off a single-vendor fabric under `single_vendor = "penalize"`.
    pub single_vendor_penalty: f64,
    pub weights: Weights,
    /// Seed of the packet-engine runs (default 1): the first of the `seeds` seeds, the others
    /// derived from it.
    pub seed: u64,
    /// Seeds every simulated figure is measured over, reported as mean and 95% interval
    /// (default [`DEFAULT_SEEDS`]).
    pub seeds: u32,
    /// Share of the TCO period the cluster trains (default 1.0: every hour of `cost.years`).
    pub utilization: f64,
    /// Run the per-fabric packet-engine measurements besides the step: busbw curves, the
    /// stress run and the latency and bandwidth probes (default true; false: step and cost only).
    pub fabric_runs: bool,
    /// The claims section's points: `quick` (default), `full` or `off` ([`ClaimsMode`]).
    pub claims: ClaimsMode,
}

impl CompareSection {
    /// Range checks of the section's numbers, each an error at its key in `s`'s file.
    pub fn check(
        &self,
        s: &crate::scenario::Scenario,
    ) -> Result<(), fabricsim_core::error::InputError> {
        let w = self.weights;
        for (key, v) in [
            ("compare.weights.performance", w.performance),
            ("compare.weights.cost", w.cost),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(s.error(key, v, "is not a weight", "a finite number >= 0"));
            }
        }
        if w.performance + w.cost == 0.0 {
            return Err(s.error(
                "compare.weights",
                "0 and 0",
                "both weights are zero: nothing to score by",
                "weights >= 0, at least one above 0",
            ));
        }
        if !(self.utilization > 0.0 && self.utilization <= 1.0) {
            return Err(s.error(
                "compare.utilization",
                self.utilization,
                "is out of range",
                "a share of the period above 0 and at most 1",
            ));
        }
        if !(self.single_vendor_penalty.is_finite() && self.single_vendor_penalty >= 0.0) {
            return Err(s.error(
                "compare.single_vendor_penalty",
                self.single_vendor_penalty,
                "is not a penalty",
                "a finite number of score points >= 0",
            ));
        }
        for (key, b) in [
            ("compare.network_budget_usd", self.network_budget_usd),
            ("compare.cluster_budget_usd", self.cluster_budget_usd),
        ] {
            if let Some(b) = b.filter(|b| !(b.is_finite() && *b > 0.0)) {
                return Err(s.error(key, b, "is not a budget", "a finite number of USD above 0"));
            }
        }
        self.checked_seeds(s)?;
        if let Some(g) = self.scale_gpus.filter(|&g| !(1..=1 << 24).contains(&g)) {
            return Err(s.error(
                "compare.scale_gpus",
                g,
                "out of range",
                "1 to 16777216 GPUs",
            ));
        }
        Ok(())
    }
}

impl CompareSection {
    /// The number of seeds, checked (1 to [`MAX_SEEDS`]); an error at its key or flag.
    pub fn checked_seeds(
        &self,
        s: &crate::scenario::Scenario,
    ) -> Result<u32, fabricsim_core::error::InputError> {
        checked_seeds(s, "compare.seeds", self.seeds)
    }
}

/// `n` seeds at `key`, checked (1 to [`MAX_SEEDS`]); an error at the key or its flag.
pub fn checked_seeds(
    s: &crate::scenario::Scenario,
    key: &str,
    n: u32,
) -> Result<u32, fabricsim_core::error::InputError> {
    if !(1..=MAX_SEEDS).contains(&n) {
        return Err(s.error(
            key,
            n,
            "is not a number of seeds",
            format!("1 to {MAX_SEEDS} seeds (each simulated figure is measured once per seed)"),
        ));
    }
    Ok(n)
}

impl Default for CompareSection {
    fn default() -> Self {
        CompareSection {
            fabrics: None,
            network_budget_usd: None,
            cluster_budget_usd: None,
            scale_gpus: None,
            single_vendor: SingleVendor::Accept,
            single_vendor_penalty: 0.1,
            weights: Weights::default(),
            utilization: 1.0,
            seed: 1,
            seeds: DEFAULT_SEEDS,
            fabric_runs: true,
            claims: ClaimsMode::Quick,
        }
    }
}
