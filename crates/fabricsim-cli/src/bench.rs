//! `fabricsim bench`: the three peer scenarios of issue 3 (k=8 permutation, 127-to-1 incast,
//! k=16 permutation, all 2 MB at 100G), reporting events/s, packets/s and wall time.

use std::path::Path;

use clap::Args;
use fabricsim::InputError;
use fabricsim::sim::SimParams;
use fabricsim::sim::bench::{CASES, HEADER, format_row, run_case};

use crate::outcome::Outcome;

#[derive(Args)]
pub struct BenchArgs {
    /// Directory with the peer scenarios (ns-3 HPCC topology and flow files).
    #[arg(long, default_value = "../shared/peer-scenarios")]
    pub dir: String,
    /// Engine defaults: roce or ib.
    #[arg(long, default_value = "roce")]
    pub fabric: String,
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
}

pub fn run(a: BenchArgs) -> Outcome {
    let mut params = match a.fabric.as_str() {
        "roce" => SimParams::roce(),
        "ib" => SimParams::ib(),
        other => {
            return Err(InputError::flag("--fabric", other, "unknown fabric", "roce, ib").into());
        }
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
    println!(
        "fabric {}: MTU {} B, {} B headers + {} B wire overhead, ack every {} packet(s), window {}",
        a.fabric,
        params.mtu_bytes,
        params.header_bytes,
        params.wire_overhead_bytes,
        params.ack_every,
        match params.window_packets {
            0 => "unlimited".to_string(),
            w => format!("{w} packets"),
        }
    );
    println!("{HEADER}");
    for (stem, _) in CASES {
        if a.only.as_deref().is_some_and(|o| o != stem) {
            continue;
        }
        let mut best = run_case(Path::new(&a.dir), stem, &params)?;
        for _ in 1..a.repeat {
            let f = run_case(Path::new(&a.dir), stem, &params)?;
            if f.wall_s < best.wall_s {
                best = f;
            }
        }
        println!("{}", format_row(&best));
    }
    Ok(())
}
