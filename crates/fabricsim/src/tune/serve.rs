//! `objective = "ttft_p99"`: a candidate's `[serve]` deployment as `fabricsim serve` runs one
//! seed (`workload::serve`: the arrivals, the batching, and the KV-cache transfers and prefill
//! collectives on the engine), scored by its p99 time to first token.

use crate::setup::engine_choice::EngineChoice;
use crate::workload::run_engine::Cluster;
use crate::workload::serve::report::{FIGURES, Metrics};
use crate::workload::serve::{self, ServeJob, net::Net, sim};
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;

/// The p99 TTFT in ms of `sc`'s `[serve]` with `profile` (`None`: its own) and `seed`, on
/// `engine` (`None`: the one `fabricsim serve` takes, `serve::engine_of`).
pub fn ttft_p99_ms(
    sc: &Scenario,
    profile: Option<&Profile>,
    engine: Option<EngineChoice>,
    seed: u64,
) -> Result<f64, String> {
    let run = || -> Result<f64, crate::error::Error> {
        let engine = match engine {
            Some(e) => e,
            None => serve::engine_of(sc)?,
        };
        let (mut design, topology) = sc.design_and_topology()?;
        if let Some(p) = profile {
            design.profile = p.clone();
        }
        let cluster = Cluster::of(design, topology, engine)?;
        let job = ServeJob::resolve(sc, &cluster.design)?;
        let net = Net::new(&cluster, seed, job.spec.ideal_network);
        let served = sim::run_seed(&job, &net, seed)?;
        let at = FIGURES
            .iter()
            .position(|f| f.0 == "ttft_p99")
            .expect("the serving figures have ttft_p99");
        Ok(Metrics::of(&job, &served).0[at] * 1e3)
    };
    run().map_err(|e| e.to_string())
}
