//! The `fabricsim` command: parse, call the library, show progress, print.
//!
//! Each subcommand lives in its own file with its clap `Args` and a `run(args) -> Outcome`.

mod bench;
mod collective;
mod compare;
mod interrupt;
mod outcome;
mod outpath;
mod output;
mod plan;
mod progress;
mod scenario_flags;
mod sim;
mod sweep;
mod train;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "fabricsim",
    version,
    about = "Plan, simulate and compare AI training fabrics (InfiniBand, RoCEv2, Ultra Ethernet)"
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
    /// An NCCL collective over a size sweep on the packet or flow engine (`--engine`): nccl-tests' table.
    Collective(collective::CollectiveArgs),
    /// Run the packet-level simulator on a scenario.
    Sim(sim::SimArgs),
    /// Time the packet engine on the fixed peer scenarios.
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    interrupt::install();
    let outcome: outcome::Outcome = match cli.cmd {
        Cmd::Plan(a) => plan::run(a),
        Cmd::Train(a) => train::run(a),
        Cmd::Compare(a) => compare::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Collective(a) => collective::run(a),
        Cmd::Sim(a) => sim::run(a),
        Cmd::Bench(a) => bench::run(a),
    };
    outcome::exit_code(outcome)
}
