//! Where a report goes: a file (`--out FILE`) or standard output; JSON is pretty-printed with
//! a final newline.

use std::path::Path;

use crate::outcome::{Failure, Outcome};

pub fn write_file(path: &Path, bytes: &[u8]) -> Outcome {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Run(format!("cannot write {}: {e}", path.display())))
}

/// Writes `report` to `out`, or prints it.
pub fn emit(out: Option<&Path>, report: &str) -> Outcome {
    match out {
        Some(path) => write_file(path, report.as_bytes()),
        None => {
            print!("{report}");
            Ok(())
        }
    }
}

/// serde_json's pretty text with a final newline.
pub fn json(text: serde_json::Result<String>) -> Result<String, Failure> {
    text.map(|t| t + "\n")
        .map_err(|e| Failure::Run(e.to_string()))
}
