//! The scenario: what the user asks for, from a TOML file and/or CLI flags, validated once.
//!
//! Each `[section]` has its own file and type. Unknown keys, wrong types and out-of-range values
//! are [`InputError`]s naming the file, line, key, value and what is allowed; a value set by a
//! command-line flag is reported against that flag.

pub mod classes;
pub mod cluster;
pub mod compare;
pub mod compat;
pub mod cost;
pub mod fabric;
pub mod flag_keys;
pub mod flags;
pub mod jobs;
pub mod layout;
pub mod nccl;
pub mod reliability;
pub mod resolve;
mod scaleup;
pub mod serve;
pub mod serve_trace;
pub mod topology;

pub mod train;

pub mod faults;
pub mod flowctl;
pub mod frontend;
pub mod link_phy;
pub mod llr;
pub mod sim;
pub mod traffic;
pub mod tune;
pub mod value;

use serde::Deserialize;
use std::collections::BTreeMap;

use fabricsim_core::error::{InputError, Source};
pub use resolve::Design;

/// The whole scenario file. Every section is optional; defaults are documented per field.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Free text shown in reports.
    #[serde(default)]
    pub name: Option<String>,
    /// A user catalog file merged over the built-in one (path relative to the scenario file).
    #[serde(default)]
    pub catalog: Option<String>,
    /// Which engine runs DAGs: packet, flow or auto (`crate::setup::engine_choice`).
    #[serde(default)]
    pub engine: Option<String>,
    /// The most memory a run may take (`crate::memory`; default 90% of MemAvailable).
    #[serde(default)]
    pub max_memory: Option<value::SizeValue>,
    /// Seeds the engine runs of `collective` and `train --calibrate` are measured over
    /// (default [`compare::DEFAULT_ENGINE_SEEDS`]; compare and sweep take `[compare] seeds`).
    #[serde(default)]
    pub seeds: Option<u32>,
    #[serde(default)]
    pub cluster: cluster::ClusterSection,
    #[serde(default)]
    pub fabric: fabric::FabricSection,
    #[serde(default)]
    pub topology: topology::TopologySection,
    #[serde(default)]
    pub layout: layout::LayoutSection,
    #[serde(default)]
    pub cost: cost::CostSection,
    /// MTBF scale and checkpoint interval (`scenario::reliability`).
    #[serde(default)]
    pub reliability: Option<reliability::ReliabilitySection>,
    /// `fabricsim train`: the model, its parallelism and overlap (the cluster is above).
    #[serde(default)]
    pub train: Option<train::TrainSection>,
    /// `fabricsim serve`: an inference deployment and its requests (the cluster is above).
    #[serde(default)]
    pub serve: Option<serve::ServeSection>,
    /// `fabricsim compare`: the fabrics side by side, constraints and weights.
    #[serde(default)]
    pub compare: Option<crate::scenario::compare::CompareSection>,
    /// How `fabricsim sim` runs (topology file, engine parameters, seed, end time).
    #[serde(default)]
    pub sim: Option<sim::SimSection>,
    /// The traffic `fabricsim sim` offers.
    #[serde(default)]
    pub traffic: Option<traffic::TrafficSection>,
    /// Injected link faults.
    #[serde(default)]
    pub faults: Option<faults::FaultsSection>,
    /// NCCL's channels and QPs (`scenario::nccl`).
    #[serde(default)]
    pub nccl: Option<nccl::NcclSection>,
    #[serde(default)]
    pub tune: Option<tune::TuneSection>,
    /// The traffic classes, their scheduling and which are lossless (`scenario::classes`).
    #[serde(default)]
    pub classes: Option<classes::ClassesSection>,
    /// `fabricsim tenants`: several jobs sharing the fabric (`scenario::jobs`).
    #[serde(default)]
    pub jobs: Vec<jobs::JobSection>,
    /// Storage servers for the jobs' data loading and checkpoints (`scenario::jobs`).
    #[serde(default)]
    pub storage: Option<jobs::StorageSection>,
    /// Front-end hosts sending a serving deployment's prompts (`scenario::frontend`).
    #[serde(default)]
    pub frontend: Option<frontend::FrontendSection>,
}

/// A parsed scenario together with where it came from (for error messages).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub file: ScenarioFile,
    pub source: Source,
    /// Keys set from the command line, with the flag that set them.
    pub flags: BTreeMap<String, String>,
    /// The file's TOML tree with the flags written in (`file` is read from it).
    doc: toml::Table,
}

impl Scenario {
    /// Parses scenario text; `name` is used in error messages.
    pub fn parse(name: &str, text: &str) -> Result<Scenario, InputError> {
        let source = Source::new(name, text);
        let located = |e: toml::de::Error| InputError::from_toml(&source, &e);
        let file: ScenarioFile = toml::from_str(text).map_err(located)?;
        let doc: toml::Table = toml::from_str(text).map_err(located)?;
        Ok(Scenario {
            file,
            source,
            flags: BTreeMap::new(),
            doc,
        })
    }

    /// Reads and parses a scenario file; a file with no keys (empty, or only comments) is an
    /// error, not a silent run of the defaults.
    pub fn load(path: &str) -> Result<Scenario, InputError> {
        let text = crate::io::input::read_input(path.as_ref())
            .map_err(|e| InputError::io(path, "scenario", e))?;
        let s = Scenario::parse(path, &text)?;
        if s.doc.is_empty() {
            return Err(InputError {
                file: path.to_string(),
                line: None,
                key: String::new(),
                value: String::new(),
                problem: "empty scenario: the file sets no key".into(),
                allowed: "a scenario with at least one section (see examples/), or no file at all for the built-in defaults".into(),
            });
        }
        Ok(s)
    }

    /// The built-in defaults, for runs without a scenario file.
    pub fn defaults() -> Scenario {
        Scenario {
            file: ScenarioFile::default(),
            source: Source::new("(built-in defaults)", ""),
            flags: BTreeMap::new(),
            doc: toml::Table::new(),
        }
    }

    /// An error about `key`: against the flag that set it, or else against the file.
    pub fn error(
        &self,
        key: &str,
        value: impl std::fmt::Display,
        problem: impl std::fmt::Display,
        allowed: impl Into<String>,
    ) -> InputError {
        match self.flags.get(key) {
            Some(flag) => InputError::flag(flag, value, problem, allowed),
            None => InputError::at_key(&self.source, key, value, problem, allowed),
        }
    }

    /// The engine seeds of `collective` and `train` (`seeds`), checked like `[compare] seeds`.
    pub fn engine_seeds(&self) -> Result<u32, InputError> {
        compare::checked_seeds(
            self,
            "seeds",
            self.file.seeds.unwrap_or(compare::DEFAULT_ENGINE_SEEDS),
        )
    }

    /// Whether the file or a flag sets the top-level key or section `key`.
    pub fn sets(&self, key: &str) -> bool {
        self.doc.contains_key(key)
    }

    /// A path written in the scenario file, taken relative to the file's directory.
    pub fn relative_path(&self, key: &str, path: &str) -> String {
        if self.flags.contains_key(key) || std::path::Path::new(path).is_absolute() {
            return path.to_string();
        }
        match std::path::Path::new(&self.source.name).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(path).display().to_string(),
            _ => path.to_string(),
        }
    }
}

#[cfg(test)]
mod tests;
