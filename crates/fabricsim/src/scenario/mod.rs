//! The scenario: what the user asks for, from a TOML file and/or CLI flags, validated once.
//!
//! Each `[section]` has its own file and type. Unknown keys, wrong types and out-of-range values
//! are [`InputError`]s naming the file, line, key, value and what is allowed.

pub mod train;

use serde::Deserialize;

use crate::error::{InputError, Source};

/// The whole scenario file. Every section is optional; defaults are documented per field.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Free text shown in reports.
    #[serde(default)]
    pub name: Option<String>,
    /// `fabricsim train`: model, parallelism and cluster size.
    #[serde(default)]
    pub train: Option<train::TrainSection>,
}

/// A parsed scenario together with where it came from (for error messages).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub file: ScenarioFile,
    pub source: Source,
}

impl Scenario {
    /// Parses and validates scenario text; `name` is used in error messages.
    pub fn parse(name: &str, text: &str) -> Result<Scenario, InputError> {
        let source = Source::new(name, text);
        let file: ScenarioFile =
            toml::from_str(text).map_err(|e| InputError::from_toml(&source, &e))?;
        Ok(Scenario { file, source })
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &str) -> Result<Scenario, InputError> {
        let text = std::fs::read_to_string(path).map_err(|e| InputError::io(path, &e))?;
        Scenario::parse(path, &text)
    }
}
