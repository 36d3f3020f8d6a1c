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
}

pub fn run(a: BenchArgs) -> Outcome {
    let params = match a.fabric.as_str() {
        "roce" => SimParams::roce(),
        "ib" => SimParams::ib(),
        other => {
            return Err(InputError::flag("--fabric", other, "unknown fabric", "roce, ib").into());
        }
    };
    if let Some(o) = &a.only
        && !CASES.iter().any(|c| c.0 == o)
    {
        let names: Vec<&str> = CASES.iter().map(|c| c.0).collect();
        return Err(InputError::flag("--only", o, "unknown case", names.join(", ")).into());
    }
    println!(
        "fabric {}: MTU {} B, {} B headers + {} B wire overhead, ack every {} packet(s)",
        a.fabric,
        params.mtu_bytes,
        params.header_bytes,
        params.wire_overhead_bytes,
        params.ack_every
    );
    println!("{HEADER}");
    for (stem, _) in CASES {
        if a.only.as_deref().is_some_and(|o| o != stem) {
            continue;
        }
        let f = run_case(Path::new(&a.dir), stem, &params)?;
        println!("{}", format_row(&f));
    }
    Ok(())
}
