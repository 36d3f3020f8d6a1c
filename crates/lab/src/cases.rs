//! `cases`: the cross-validation cases of `tests/flow_xval.rs`, packet vs flow.

use fabricsim::engine_choice::EngineKind;
use fabricsim_cases::flow_cases;
use std::time::Instant;

/// The cross-validation cases of `crates/fabricsim/tests/flow_xval.rs`, packet vs flow.
///
/// Each case pooled over its seeds (`fabricsim_cases::flow_cases::cases`): mean FCT, pooled
/// p99, the mean of each run's p99 and the collective time, packet / flow, with each engine's
/// seconds and the packet engine's standard errors (the table of the issue-7 note).
#[derive(clap::Args)]
pub struct Args {
    /// Only the cases whose name contains this
    pub name: Option<String>,
}

pub fn run(only: Option<&str>) {
    println!("{}", flow_cases::HEADER);
    for c in flow_cases::cases() {
        if only.is_some_and(|o| !c.name.contains(o)) {
            continue;
        }
        let t = Instant::now();
        let p = flow_cases::pooled(&c, EngineKind::Packet);
        let tp = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let f = flow_cases::pooled(&c, EngineKind::Flow);
        let tf = t.elapsed().as_secs_f64();
        let (se_mean, se_last) = p.rel_se();
        println!(
            "{}  [{tp:.1} s / {tf:.2} s; packet s.e. mean {:.1}%, collective {:.1}%]",
            flow_cases::row(&c, &p, &f),
            100.0 * se_mean,
            100.0 * se_last
        );
    }
}
