//! Helpers shared by the unit tests.

use crate::scenario::Scenario;

/// The default scenario with command-line `flags` applied, as `fabricsim --flag value` would.
pub fn scenario(flags: &[(&str, &str)]) -> Scenario {
    let mut s = Scenario::defaults();
    let pairs: Vec<_> = flags
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    s.apply_flags(&pairs).unwrap();
    s
}
