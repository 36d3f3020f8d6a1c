//! Where a report goes: a file (`--out FILE`, written atomically by `outpath`) or standard
//! output; JSON is pretty-printed with a final newline.

use std::path::Path;

use clap::ValueEnum;

use crate::outcome::{Failure, Outcome};
use crate::outpath;

/// `--format` of the commands that write a table three ways (`plan`, `serve`, `tenants`,
/// `train`).
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Csv,
}

/// Writes `report` to `out`, or prints it.
pub fn emit(out: Option<&Path>, report: &str) -> Outcome {
    match out {
        Some(path) => outpath::write(path, report.as_bytes()),
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
