//! The scenario a Python call names: a file path, TOML text, a dict (sent as JSON and written
//! as TOML so that the schema checks it exactly as a file), or none (the command's defaults).

use std::path::{Path, PathBuf};

use fabricsim::InputError;
use fabricsim::scenario::Scenario;

/// What the `scenario` argument of a call was.
pub enum ScenarioArg {
    None,
    Path(String),
    Toml(String),
    /// A dict, as JSON text.
    Json(String),
}

/// The name error messages give a scenario passed as text or a dict.
pub const TEXT_NAME: &str = "(scenario string)";
pub const DICT_NAME: &str = "(scenario dict)";

impl ScenarioArg {
    /// The parsed scenario (`default` when none was given) and the folder its relative paths
    /// are taken from: a file's own, else the working directory (as the CLI does).
    pub fn load(
        &self,
        default: impl FnOnce() -> Scenario,
    ) -> Result<(Scenario, PathBuf), InputError> {
        let here = PathBuf::from(".");
        Ok(match self {
            ScenarioArg::None => (default(), here),
            ScenarioArg::Path(p) => {
                let base = Path::new(p)
                    .parent()
                    .unwrap_or(Path::new("."))
                    .to_path_buf();
                (Scenario::load(p)?, base)
            }
            ScenarioArg::Toml(t) => (Scenario::parse(TEXT_NAME, t)?, here),
            ScenarioArg::Json(j) => (Scenario::parse(DICT_NAME, &dict_as_toml(j)?)?, here),
        })
    }
}

/// A dict's JSON as TOML text (a dict that TOML cannot hold, such as one with a None value, is
/// an input error).
fn dict_as_toml(json: &str) -> Result<String, InputError> {
    let bad = |problem: String| InputError {
        file: DICT_NAME.into(),
        line: None,
        key: "scenario".into(),
        value: String::new(),
        problem,
        allowed: "a dict of TOML values: str, int, float, bool, lists and dicts (no None)".into(),
    };
    let value: toml::Table = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
    toml::to_string(&value).map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dict_is_read_as_the_same_toml_would_be() {
        let arg = ScenarioArg::Json(r#"{"cluster": {"gpus": 64, "gpu": "h100"}}"#.into());
        let (s, _) = arg.load(Scenario::defaults).unwrap();
        assert_eq!(s.file.cluster.gpus, 64);
    }

    #[test]
    fn a_dict_with_none_names_the_dict() {
        let arg = ScenarioArg::Json(r#"{"cluster": {"gpus": null}}"#.into());
        let e = arg.load(Scenario::defaults).unwrap_err();
        assert_eq!(e.file, DICT_NAME);
    }
}
