//! The `fabricsim` Python package's native part: `jobs` runs `plan`, `sim` and `compare` from a
//! scenario (a path, TOML text or a dict as JSON) and keyword overrides as the CLI's flags, and
//! returns the JSON text the CLI writes for the same scenario and seed; `module` (feature
//! `python`, built by maturin) wraps it for Python. See docs/python.md.

pub mod jobs;
pub mod scenario_arg;

#[cfg(feature = "python")]
mod module;
