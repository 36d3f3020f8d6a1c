//! `fabricsim plan`: the bill of materials, power and cost of a cluster's fabric.

use clap::Args;
use std::path::PathBuf;

use crate::outcome::{Failure, Outcome};
use crate::outpath;
use crate::output::{self, Format};
use crate::scenario_flags::{self, ScenarioFlags};

#[derive(Args)]
pub struct PlanArgs {
    /// Scenario file (TOML); without one, the built-in defaults and the flags below are used.
    pub scenario: Option<PathBuf>,
    #[command(flatten)]
    pub flags: ScenarioFlags<scenario_flags::Plan>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the largest GPU count each topology reaches in 1, 2 and 3 tiers with the
    /// scenario's switch and server instead of the plan.
    #[arg(long)]
    pub max: bool,
    /// Also write the topology as a Graphviz DOT file.
    #[arg(long, value_name = "FILE")]
    pub export_dot: Option<PathBuf>,
    /// Also write the topology as an ns-3 HPCC topology file (link delays from the layout).
    #[arg(long, value_name = "FILE")]
    pub export_ns3: Option<PathBuf>,
}

pub fn run(args: PlanArgs) -> Outcome {
    outpath::check(&[
        ("--out", args.out.as_deref()),
        ("--export-dot", args.export_dot.as_deref()),
        ("--export-ns3", args.export_ns3.as_deref()),
    ])?;
    let scenario = args.flags.load(args.scenario.as_deref())?;
    if args.max {
        let format = match args.format {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
        };
        let table = fabricsim::report::plan::max_table(&scenario.design()?, format);
        return output::emit(args.out.as_deref(), &table);
    }
    let (design, topo, plan) = fabricsim::plan::run(&scenario)?;
    let plan = fabricsim::workload::tenants::storage::with_job_checkpoint(
        &scenario, &design, &topo, plan,
    )?;
    for w in &design.warnings {
        eprintln!("warning: {w}");
    }
    let traffic = fabricsim::report::plan_traffic::of(&scenario, &design, &topo)?;
    let traffic = traffic.as_ref();
    let report = match args.format {
        Format::Text => fabricsim::report::plan::text(&plan, &design, traffic),
        Format::Json => output::json(serde_json::to_string_pretty(
            &fabricsim::report::plan::json(&plan, &design, traffic),
        ))?,
        Format::Csv => fabricsim::report::plan::csv(&plan, &design, traffic),
    };
    if let Some(path) = &args.export_dot {
        let mut buf = Vec::new();
        fabricsim::topology::dot::write(&topo, &mut buf)
            .map_err(|e| Failure::Run(e.to_string()))?;
        outpath::write(path, &buf)?;
    }
    if let Some(path) = &args.export_ns3 {
        outpath::write(path, fabricsim::io::ns3::write_topology(&topo).as_bytes())?;
    }
    output::emit(args.out.as_deref(), &report)
}
