//! The `fabricsim` command: parse, call the library, show progress, print.
//!
//! Each subcommand lives in its own file with its clap `Args` and a `run(args) -> Outcome`.

mod bench;
mod catalog;
mod collective;
mod compare;
mod interrupt;
mod outcome;
mod outpath;
mod output;
mod plan;
mod profiles;
mod progress;
mod scenario_flags;
mod serve;
mod sim;
mod slurm;
mod sweep;
mod sweep_dir;
mod table;
mod tenants;
mod train;
mod tune;
mod tune_dir;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fabricsim",
    version,
    about = "Plan, simulate and compare AI training fabrics (InfiniBand, RoCEv2, Ultra Ethernet)",
    // A flag given twice takes its last value, so a base command line can be extended.
    args_override_self = true
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Bill of materials, power and cost of a cluster's fabric.
    Plan(plan::PlanArgs),
    /// The same cluster and training step on each fabric, side by side, with a recommendation.
    Compare(compare::CompareArgs),
    /// Sweep one or two parameters (loss rate, transport, GPUs, ...): step time and MFU per point.
    Sweep(sweep::SweepArgs),
    /// Step time, tokens/s and MFU of a model on a cluster.
    Train(train::TrainArgs),
    /// Search a fabric profile's ECN/DCQCN/PFC (IB CC, UEC) knobs for a scenario's traffic.
    Tune(tune::TuneArgs),
    /// An inference deployment (disaggregated or colocated): TTFT, TPOT, tokens/s per GPU, goodput.
    Serve(serve::ServeArgs),
    /// An NCCL collective over a size sweep on the packet or flow engine (`--engine`): nccl-tests' table.
    Collective(collective::CollectiveArgs),
    /// Several jobs ([[jobs]]) on one fabric: each alone and together, and the slowdown matrix.
    Tenants(tenants::TenantsArgs),
    /// Run the packet-level simulator on a scenario.
    Sim(sim::SimArgs),
    /// Time the packet engine on the fixed peer scenarios.
    Bench(bench::BenchArgs),
    /// List the shipped fabric profiles, or print one as TOML to copy and edit.
    Profiles(profiles::ProfilesArgs),
    /// List the shipped component catalog, or print items as TOML to copy and edit.
    Catalog(catalog::CatalogArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    interrupt::install();
    let outcome: outcome::Outcome = match cli.cmd {
        Cmd::Plan(a) => plan::run(a),
        Cmd::Train(a) => train::run(a),
        Cmd::Tune(a) => tune::run(a),
        Cmd::Compare(a) => compare::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Serve(a) => serve::run(a),
        Cmd::Collective(a) => collective::run(a),
        Cmd::Tenants(a) => tenants::run(a),
        Cmd::Sim(a) => sim::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Profiles(a) => profiles::run(a),
        Cmd::Catalog(a) => catalog::run(a),
    };
    outcome::exit_code(outcome)
}
