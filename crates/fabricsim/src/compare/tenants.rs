//! The multi-tenant section of a comparison: the scenario's `[[jobs]]` run on each fabric's
//! profile (`workload::tenants`): each job's time alone and together and its slowdown, per
//! fabric. The jobs run with each entry's profile and its tuned or untuned set; its loss rate
//! and transport apply to the training step only (its loss is costed in expectation there, and
//! a sampled loss would put seed noise in the slowdowns).

use serde::Serialize;

use super::variant::Variant;
use crate::workload::tenants::{self, run::TenantsResult};
use fabricsim_core::error::InputError;
use fabricsim_input::scenario::Scenario;

#[derive(Clone, Debug, Serialize)]
pub struct FabricTenants {
    pub fabric: String,
    #[serde(flatten)]
    pub result: TenantsResult,
}

/// The jobs of `s` on every fabric of `variants` (none when `s` has no `[[jobs]]`); the
/// fabrics a stop request cut short are left out.
pub fn run(s: &Scenario, variants: &[Variant]) -> Result<Vec<FabricTenants>, InputError> {
    if s.file.jobs.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for v in variants {
        let mut sv = s.clone();
        sv.file.fabric.profile = v.profile.clone();
        sv.file.sim.get_or_insert_with(Default::default).tuned = Some(v.tuned);
        let t = tenants::resolve(&sv)?;
        let r = tenants::run::run(&t, &|_, _| {}).map_err(|e| {
            s.error(
                "jobs",
                &v.name,
                format!("the jobs on {}: {e}", v.name),
                "jobs the fabric's engine can run",
            )
        })?;
        if let Some(result) = r {
            out.push(FabricTenants {
                fabric: v.name.clone(),
                result,
            });
        }
    }
    Ok(out)
}
