//! The fixed benchmark scenarios of issue 3: the peer simulators' fat trees and flows in the
//! ns-3 HPCC format (../shared/peer-scenarios), run here so speeds compare on identical work.

use std::path::Path;

use super::{Faults, RunOptions, SimParams, Status};
use crate::error::{InputError, Source};
use crate::io::ns3;

/// (file stem, description) of each case, in the order of the issue.
pub const CASES: [(&str, &str); 3] = [
    (
        "ft8_perm128",
        "(a) k=8 fat-tree, 128 hosts, permutation of 2 MB at 100G",
    ),
    (
        "ft8_incast128",
        "(b) k=8 fat-tree, 127-to-1 incast of 2 MB at 100G",
    ),
    (
        "ft16_perm1024",
        "(c) k=16 fat-tree, 1,024 hosts, permutation of 2 MB at 100G",
    ),
];

#[derive(Clone, Debug)]
pub struct Figures {
    pub case: &'static str,
    pub hosts: usize,
    pub flows: usize,
    pub events: u64,
    pub data_packets: u64,
    pub wall_s: f64,
    pub events_per_s: f64,
    pub packets_per_s: f64,
    pub sim_end_ps: u64,
    pub completed: u64,
    pub status: Status,
}

fn read(dir: &Path, file: &str) -> Result<Source, InputError> {
    let path = dir.join(file);
    let name = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| InputError::io(&name, &e))?;
    Ok(Source::new(name, text))
}

/// Reads case `stem` from `dir` and runs it with `params`; the wall time covers the run only.
pub fn run_case(dir: &Path, stem: &'static str, params: &SimParams) -> Result<Figures, InputError> {
    let net = ns3::read_topology(&read(dir, &format!("{stem}.topo.txt"))?)?;
    let dag = ns3::read_flows(&read(dir, &format!("{stem}.flow.txt"))?, &net)?;
    let faults = Faults {
        faults: net.link_loss.clone(),
        ..Faults::default()
    };
    let r = super::run(&net.topo, params, &dag, &faults, RunOptions::default()).map_err(|e| {
        InputError::at_line(
            &Source::new(stem, ""),
            1,
            "scenario",
            stem,
            e,
            "a runnable scenario",
        )
    })?;
    Ok(Figures {
        case: stem,
        hosts: net.topo.num_hosts(),
        flows: dag.messages.len(),
        events: r.sim.events,
        data_packets: r.counters.data_packets,
        wall_s: r.sim.wall_s,
        events_per_s: r.sim.events_per_s,
        packets_per_s: r.sim.packets_per_s,
        sim_end_ps: r.sim.end_ps,
        completed: r.summary.messages_completed,
        status: r.sim.status,
    })
}

/// One line per case, for terminals and logs.
pub fn format_row(f: &Figures) -> String {
    format!(
        "{:<14} {:>5} {:>6} {:>11} {:>10} {:>8.3} {:>8.2} {:>8.2} {:>10.1} {:>5}/{:<5}",
        f.case,
        f.hosts,
        f.flows,
        f.events,
        f.data_packets,
        f.wall_s,
        f.events_per_s / 1e6,
        f.packets_per_s / 1e6,
        f.sim_end_ps as f64 / 1e6,
        f.completed,
        f.flows
    )
}

pub const HEADER: &str =
    "case           hosts  flows      events    packets   wall_s   Mev/s  Mpkt/s  sim_end_us  done";
