//! `fabricsim bench`: the three peer scenarios of issue 3 (k=8 permutation, 127-to-1 incast,
//! k=16 permutation, all 2 MB at 100G), reporting events/s, packets/s, wall time and the
//! simulated end time. By default run as htsim RoCE ran them (lossless, no congestion control).
//! A benchmark: its wall-clock figures (wall_s, Mev/s, Mpkt/s) differ between runs by design.

use std::path::{Path, PathBuf};

use clap::Args;
use fabricsim::InputError;
use fabricsim::sim::bench::{CASES, HEADER, Mode, describe, format_row, peer_params, run_case};

use crate::interrupt;
use crate::outcome::{Outcome, unless_interrupted};
use crate::outpath;
use crate::output;

#[derive(Args)]
pub struct BenchArgs {
    /// Directory with the peer scenarios (ns-3 HPCC topology and flow files).
    #[arg(long, default_value = "../shared/peer-scenarios")]
    pub dir: String,
    /// Engine defaults: roce or ib.
    #[arg(long, default_value = "roce")]
    pub fabric: String,
    /// lossless (PFC for roce, credits for ib; as htsim RoCE ran the cases) or lossy (drop-tail,
    /// go-back-N: the incast then ends in retransmission timeouts).
    #[arg(long, default_value = "lossless")]
    pub mode: String,
    /// Run only the case with this name (e.g. ft8_perm128).
    #[arg(long)]
    pub only: Option<String>,
    /// Run each case this many times and report the fastest (wall time on a shared machine
    /// varies with the other load; the simulation itself is identical every time).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Limit each QP to this many outstanding packets (0: unlimited, the RC default).
    #[arg(long, default_value_t = 0)]
    pub window_packets: u32,
    /// Also write the cases' figures as JSON to FILE (a stopped run: the cases that finished,
    /// marked `"status": "interrupted"`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub fn run(a: BenchArgs) -> Outcome {
    outpath::check(&[("--json", a.json.as_deref())])?;
    let mode = match a.mode.as_str() {
        "lossless" => Mode::Lossless,
        "lossy" => Mode::Lossy,
        other => {
            return Err(
                InputError::flag("--mode", other, "unknown mode", "lossless, lossy").into(),
            );
        }
    };
    let Some(mut params) = peer_params(&a.fabric, mode) else {
        return Err(InputError::flag("--fabric", &a.fabric, "unknown fabric", "roce, ib").into());
    };
    params.window_packets = a.window_packets;
    if a.repeat == 0 {
        return Err(InputError::flag("--repeat", 0, "must run at least once", "1 or more").into());
    }
    if let Some(o) = &a.only
        && !CASES.iter().any(|c| c.0 == o)
    {
        let names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
        return Err(InputError::flag("--only", o, "unknown case", names.join(", ")).into());
    }
    println!("fabric {} ({}): {}", a.fabric, a.mode, describe(&params));
    println!("{HEADER}");
    let mut done = Vec::new();
    let cases: Vec<&str> = CASES
        .iter()
        .map(|c| c.0)
        .filter(|stem| a.only.as_deref().is_none_or(|o| o == *stem))
        .collect();
    for stem in cases.iter().copied() {
        let mut best = run_case(Path::new(&a.dir), stem, &params)?;
        for _ in 1..a.repeat {
            let f = run_case(Path::new(&a.dir), stem, &params)?;
            if f.wall_s < best.wall_s {
                best = f;
            }
        }
        if interrupt::received().is_some() {
            println!("# interrupted: {stem} and the cases after it did not finish");
            break;
        }
        println!("{}", format_row(&best));
        done.push(best);
    }
    if let Some(path) = &a.json {
        let mut v = serde_json::json!({
            "fabric": a.fabric,
            "mode": a.mode,
            "window_packets": a.window_packets,
            "cases": done,
        });
        if interrupt::received().is_some() {
            v["status"] = "interrupted".into();
            v["unfinished"] = cases[done.len()..].into();
        }
        outpath::write(
            path,
            output::json(serde_json::to_string_pretty(&v))?.as_bytes(),
        )?;
    }
    unless_interrupted(|| "the cases that finished are written".into())
}
