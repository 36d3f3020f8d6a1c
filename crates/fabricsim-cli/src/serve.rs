//! `fabricsim serve`: an inference deployment on a cluster: TTFT, TPOT, tokens/s per GPU and
//! goodput, with the network's share, over seeds (`workload::serve`).

use clap::Args;
use std::path::PathBuf;

use fabricsim::workload::run_engine::Cluster;
use fabricsim::workload::seeds;
use fabricsim::workload::serve::{self, ServeJob};

use crate::outcome::{Outcome, unless_interrupted};
use crate::outpath;
use crate::output::{self, Format};
use crate::progress::Bar;
use crate::scenario_flags::{self, ScenarioFlags};

/// Flags override the scenario file's [cluster], [fabric], [topology] and [serve] sections.
#[derive(Args)]
pub struct ServeArgs {
    /// Scenario file: the cluster as for `plan`, the deployment in [serve].
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Serve>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: ServeArgs) -> Outcome {
    outpath::check(&[("--out", args.out.as_deref())])?;
    let scenario = args.flags.load(args.scenario.as_deref())?;
    let engine = serve::engine_of(&scenario)?;
    let (design, topology) = scenario.design_and_topology()?;
    let cluster = Cluster::of(design, topology, engine)?;
    let job = ServeJob::resolve(&scenario, &cluster.design)?;
    let seeds = seeds::derive(job.spec.seed, scenario.engine_seeds()?);
    let bar = Bar::new();
    let n = seeds.len();
    bar.show(0, n, "seeds", "serving");
    let report = serve::run(&job, &cluster, &seeds, &mut |done| {
        bar.show(done, n, "seeds", "serving")
    })?;
    bar.finish();
    let text = match args.format {
        Format::Text => report.to_text(),
        Format::Json => output::json(serde_json::to_string_pretty(&report))?,
        Format::Csv => report.table().to_csv(),
    };
    output::emit(args.out.as_deref(), &text)?;
    unless_interrupted(|| "the seeds that finished are written".into())
}
