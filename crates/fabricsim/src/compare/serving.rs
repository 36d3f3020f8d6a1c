//! The serving deployment of a scenario's `[serve]` section on each compared fabric
//! (`workload::serve` on the fabric's own design and topology, the flow engine): TTFT, TPOT and
//! goodput over the comparison's seed count, and the cluster's cost per million output tokens
//! delivered within the SLOs (its TCO from the plan over the TCO period at `[compare]
//! utilization`, as the training cost per token is).

use serde::Serialize;

use super::model::{FabricResult, period_s, usd_per_million_tokens};
use crate::setup::engine_choice::EngineChoice;
use crate::workload::run_engine::Cluster;
use crate::workload::serve::report::Report;
use crate::workload::serve::{self, ServeJob};
use fabricsim_core::error::InputError;
use fabricsim_core::estimate::Estimate;
use fabricsim_input::scenario::Scenario;

/// One fabric's serving figures.
#[derive(Clone, Debug, Serialize)]
pub struct ServingFabric {
    pub fabric: String,
    pub report: Report,
    /// Cluster TCO per million output tokens of requests meeting both SLOs.
    pub usd_per_million_good_tokens: Estimate,
}

/// Serves `s`'s deployment on each fabric with `seeds` seeds (from `[serve] seed`); `Ok(Err)`
/// names a fabric whose run failed (a note of the comparison).
pub fn run(
    s: &Scenario,
    fabrics: &[FabricResult],
    seeds: u32,
    utilization: f64,
) -> Result<Result<Vec<ServingFabric>, String>, InputError> {
    let mut out = Vec::with_capacity(fabrics.len());
    for f in fabrics {
        let job = ServeJob::resolve(s, &f.design)?;
        let cluster = Cluster::of(f.design.clone(), f.topology.clone(), EngineChoice::Flow)?;
        let seeds = crate::workload::seeds::derive(job.spec.seed, seeds);
        let report = match serve::run(&job, &cluster, &seeds, &mut |_| {}) {
            Ok(r) => r,
            Err(e) => {
                return Ok(Err(format!(
                    "{}: the serving run failed: {e}",
                    f.variant.name
                )));
            }
        };
        let tco = f.plan.cost.cluster_tco_usd;
        let period = period_s(&f.design, utilization);
        let cost: Vec<f64> = report
            .per_seed
            .iter()
            .map(|m| usd_per_million_tokens(tco, m.get("good_tokens_per_s"), period))
            .collect();
        let usd = match crate::workload::seeds::estimate("USD per million good tokens", &cost) {
            Ok(e) => e,
            Err(_) => {
                return Ok(Err(format!(
                    "{}: no request met both SLOs, so no cost per delivered token",
                    f.variant.name
                )));
            }
        };
        out.push(ServingFabric {
            fabric: f.variant.name.clone(),
            report,
            usd_per_million_good_tokens: usd,
        });
    }
    Ok(Ok(out))
}
