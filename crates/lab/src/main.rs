//! The calibration lab of the flow engine (issue 7): each flow effect's fitted constant, its
//! cross-check against the packet engine, and the traces that found the mechanism behind it.
//! One sub-command per mechanism, one file each; the cases it runs are the tests' own
//! (`fabricsim_cases`).
//!
//! Run: `cargo run --release -p fabricsim-lab -- SUB [ARGS]` (`--help` lists the sub-commands,
//! `SUB --help` describes each and its arguments; the dev profile is optimized too and needs no
//! fat-LTO build). `ar-trace` needs `--features trace`.

mod ar_trace;
mod cases;
mod credits;
mod dense;
mod excess;
mod hol;
mod hol_trace;
mod incast;
mod loss;
mod loss_expect;
mod nicsend_trace;
mod nicshare;
mod ports;
mod roce_nic_trace;
mod rr;
mod timeouts;
mod util;
mod victim_cnp;
mod victim_pause;

use clap::{Parser, Subcommand};

/// The calibration lab of fabricsim's flow engine: fits of its effects' constants and
/// cross-checks against the packet engine.
#[derive(Parser)]
#[command(name = "fabricsim-lab", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Loss(loss::Args),
    LossExpect(loss_expect::Args),
    Credits(credits::Args),
    Timeouts(timeouts::Args),
    Excess(excess::Args),
    Incast(incast::Args),
    Hol(hol::Args),
    HolTrace(hol_trace::Args),
    Ports(ports::Args),
    Rr(rr::Args),
    Nicshare(nicshare::Args),
    NicsendTrace(nicsend_trace::Args),
    Cases(cases::Args),
    VictimCnp(victim_cnp::Args),
    VictimPause(victim_pause::Args),
    ArTrace(ar_trace::Args),
    RoceNicTrace(roce_nic_trace::Args),
    Dense(dense::Args),
}

fn main() {
    match Cli::parse().command {
        Command::Loss(_) => loss::run(),
        Command::LossExpect(a) => loss_expect::run(&a),
        Command::Credits(_) => credits::run(),
        Command::Timeouts(a) => timeouts::run(a.name.as_deref()),
        Command::Excess(a) => excess::run(a.case.as_deref(), a.seeds),
        Command::Incast(_) => incast::run(),
        Command::Hol(a) => hol::run(a.case.gpus, a.case.senders, a.victims, a.kb << 10),
        Command::HolTrace(a) => hol_trace::run(a.case.gpus, a.case.senders),
        Command::Ports(ports::Args {
            xval: Some(ports::Xval::Xval { case }),
            ..
        }) => ports::xval(case.as_deref()),
        Command::Ports(a) => ports::run(a.gpus),
        Command::Rr(a) => rr::run(a.gpus, a.kb),
        Command::Nicshare(_) => nicshare::run(),
        Command::NicsendTrace(a) if a.cases.is_some() => nicsend_trace::cases(),
        Command::NicsendTrace(a) => nicsend_trace::run(a.case.gpus, a.case.senders, a.kb, a.dmodk),
        Command::Cases(a) => cases::run(a.name.as_deref()),
        Command::VictimCnp(a) => victim_cnp::run(a.case.gpus, a.case.senders),
        Command::VictimPause(a) => victim_pause::run(a.case.gpus, a.case.senders),
        Command::ArTrace(a) => ar_trace::run(a.case.gpus, a.case.senders),
        Command::RoceNicTrace(a) => roce_nic_trace::run(a.case.gpus, a.case.senders),
        Command::Dense(a) => dense::run(a.gpus, a.kb, a.forced, a.fabric.as_deref()),
    }
}
