//! `fabricsim tenants`: the scenario's `[[jobs]]` on one fabric, each alone and together, and
//! the slowdown each inflicts on the others (`workload::tenants`).

use clap::Args;
use std::path::PathBuf;

use fabricsim::workload::tenants::{self, report};

use crate::outcome::{Outcome, unless_interrupted};
use crate::outpath;
use crate::output::{self, Format};
use crate::progress::Bar;
use crate::scenario_flags::{self, ScenarioFlags};

/// Flags override the scenario file's [cluster], [fabric] and [topology] sections; the jobs are
/// its [[jobs]] entries.
#[derive(Args)]
pub struct TenantsArgs {
    /// Scenario file: the cluster as for `plan`, the jobs in [[jobs]].
    pub scenario: PathBuf,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Cluster>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn run(args: TenantsArgs) -> Outcome {
    outpath::check(&[("--out", args.out.as_deref())])?;
    let scenario = args.flags.load(Some(&args.scenario))?;
    let t = tenants::resolve(&scenario)?;
    let bar = Bar::new();
    let shown = std::sync::Mutex::new(());
    let progress = |done: usize, total: usize| {
        let _one = shown.lock();
        bar.show(done, total, "runs", "jobs alone, in pairs and together");
    };
    let result = tenants::run::run(&t, &progress)?;
    bar.finish();
    let Some(r) = result else {
        return unless_interrupted(|| "nothing written: the runs did not finish".into());
    };
    let text = match args.format {
        Format::Text => report::to_text(&r),
        Format::Csv => report::table(&r).to_csv(),
        Format::Json => output::json(serde_json::to_string_pretty(&r))?,
    };
    output::emit(args.out.as_deref(), &text)
}
