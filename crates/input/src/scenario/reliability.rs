//! `[reliability]`: how the plan's failure rates and the job's checkpointing are taken
//! (`plan::reliability`), so that a sweep over MTBF or checkpoint interval is a scenario.
//!
//! ```toml
//! [reliability]
//! mtbf_scale = 0.5             # every MTBF of data/reliability/failure-rates.toml x0.5
//!                              # (parts fail twice as often; default 1)
//! checkpoint_interval_s = 1800 # checkpoint every 1800 s of work (default: Daly's optimum)
//! ```

use serde::Deserialize;

use super::Scenario;
use fabricsim_core::error::InputError;

/// The bounds of `mtbf_scale`: a hundredth to a hundred times the table's MTBFs.
pub const MTBF_SCALE: (f64, f64) = (0.01, 100.0);
/// The bounds of `checkpoint_interval_s`: a second to 30 days of work.
pub const CHECKPOINT_INTERVAL_S: (f64, f64) = (1.0, 30.0 * 86_400.0);

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReliabilitySection {
    pub mtbf_scale: Option<f64>,
    pub checkpoint_interval_s: Option<f64>,
}

/// The validated `[reliability]` keys.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReliabilityParams {
    pub mtbf_scale: f64,
    /// `None`: Daly's optimum interval.
    pub checkpoint_interval_s: Option<f64>,
}

impl Default for ReliabilityParams {
    fn default() -> Self {
        ReliabilityParams {
            mtbf_scale: 1.0,
            checkpoint_interval_s: None,
        }
    }
}

/// `v` when it lies in `[lo, hi]`, else the error naming `key` (or its flag).
fn bounded(s: &Scenario, key: &str, v: f64, (lo, hi): (f64, f64)) -> Result<f64, InputError> {
    match v.is_finite() && (lo..=hi).contains(&v) {
        true => Ok(v),
        false => Err(s.error(
            key,
            v,
            "is out of range",
            format!("a number from {lo} to {hi}"),
        )),
    }
}

impl Scenario {
    /// The scenario's `[reliability]` keys, checked.
    pub fn reliability(&self) -> Result<ReliabilityParams, InputError> {
        let Some(r) = &self.file.reliability else {
            return Ok(ReliabilityParams::default());
        };
        Ok(ReliabilityParams {
            mtbf_scale: match r.mtbf_scale {
                Some(x) => bounded(self, "reliability.mtbf_scale", x, MTBF_SCALE)?,
                None => 1.0,
            },
            checkpoint_interval_s: r
                .checkpoint_interval_s
                .map(|x| {
                    bounded(
                        self,
                        "reliability.checkpoint_interval_s",
                        x,
                        CHECKPOINT_INTERVAL_S,
                    )
                })
                .transpose()?,
        })
    }
}
