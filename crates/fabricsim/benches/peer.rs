//! `cargo bench -p fabricsim`: the packet engine on the three peer scenarios (issue 3), as
//! `fabricsim bench` runs them by default (lossless RoCE). Scenarios from $FABRICSIM_PEER_DIR, else shared/peer-scenarios
//! next to the repository or next to its parent directory.

use std::path::PathBuf;

use fabricsim::sim::bench::{CASES, HEADER, Mode, describe, format_row, peer_params, run_case};

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
    let params = peer_params("roce", Mode::Lossless).expect("a known fabric");
    println!("roce (lossless): {}", describe(&params));
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
