//! `cargo bench -p fabricsim`: the packet engine on the three peer scenarios (issue 3), as
//! `fabricsim bench` runs them. Scenarios from $FABRICSIM_PEER_DIR, else shared/peer-scenarios
//! next to the repository or next to its parent directory.

use std::path::PathBuf;

use fabricsim::sim::SimParams;
use fabricsim::sim::bench::{CASES, HEADER, format_row, run_case};

fn peer_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("FABRICSIM_PEER_DIR") {
        return Some(d.into());
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    ["..", "../.."]
        .iter()
        .map(|up| root.join(up).join("shared/peer-scenarios"))
        .find(|d| d.is_dir())
}

fn main() {
    let Some(dir) = peer_dir() else {
        eprintln!("peer scenarios not found: set FABRICSIM_PEER_DIR");
        std::process::exit(2);
    };
    let params = SimParams::roce();
    println!("{HEADER}");
    for (stem, what) in CASES {
        match run_case(&dir, stem, &params) {
            Ok(f) => println!("{}   {what}", format_row(&f)),
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(2);
            }
        }
    }
}
