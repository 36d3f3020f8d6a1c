//! The fixed benchmark scenarios of issue 3: the peer simulators' fat trees and flows in the
//! ns-3 HPCC format (../shared/peer-scenarios), run here so speeds compare on identical work.

use std::path::Path;

use fabricsim_core::error::{InputError, Source};
use fabricsim_input::io::ns3;
use fabricsim_mech::{Faults, FlowControl, PfcParams, SimParams, Status};
use fabricsim_packet::RunOptions;

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

/// How the peer cases are run. htsim RoCE, the fastest peer (docs/validation.md, "Against the
/// peer simulators"), runs them lossless with PFC and no end-to-end congestion control;
/// `Lossless` does the same here (PFC on the data class for RoCE, credits for InfiniBand).
/// `Lossy` is drop-tail with go-back-N recovery: the incast then ends in retransmission
/// timeouts, seconds of simulated time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Lossless,
    Lossy,
}

/// The engine parameters of the peer cases for `fabric` ("roce" or "ib") in `mode`; `None` for
/// an unknown fabric.
pub fn peer_params(fabric: &str, mode: Mode) -> Option<SimParams> {
    let mut p = match fabric {
        "roce" => SimParams::roce(),
        "ib" => SimParams::ib(),
        _ => return None,
    };
    p.flow_control = match (mode, p.flow_control) {
        (Mode::Lossy, _) => FlowControl::None,
        (Mode::Lossless, FlowControl::None) => FlowControl::Pfc(PfcParams::tuned(
            p.data_tc,
            p.data_frame_bytes(p.mtu_bytes) as u64,
        )),
        (Mode::Lossless, fc) => fc,
    };
    Some(p)
}

/// One line naming the mechanisms that are on in `p`, printed above the figures.
pub fn describe(p: &SimParams) -> String {
    let fc = match p.flow_control {
        FlowControl::None => "none (lossy, drop-tail)",
        FlowControl::Credits(_) => "credits per VL (lossless)",
        FlowControl::Pfc(_) => "PFC on the data class (lossless)",
    };
    let cc = p.cc.algo.name();
    format!(
        "MTU {} B, {} B headers + {} B wire overhead; flow control: {fc}; congestion control: {cc}; \
         routing: {:?}; transport: {:?}, ack every {} packet(s), window {}",
        p.mtu_bytes,
        p.header_bytes,
        p.wire_overhead_bytes,
        p.routing,
        p.transport,
        p.ack_every,
        match p.window_packets {
            0 => "unlimited".to_string(),
            w => format!("{w} packets"),
        }
    )
}

#[derive(Clone, Debug, serde::Serialize)]
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
    let text = fabricsim_input::io::input::read_input(&path)
        .map_err(|e| InputError::io(&name, "--dir", e))?;
    Ok(Source::new(name, text))
}

/// Reads case `stem` from `dir` and runs it with `params`; the wall time covers the run only.
pub fn run_case(dir: &Path, stem: &'static str, params: &SimParams) -> Result<Figures, InputError> {
    let net = ns3::read_topology(&read(dir, &format!("{stem}.topo.txt"))?)?;
    let flows = read(dir, &format!("{stem}.flow.txt"))?;
    let dag = ns3::read_flows(&flows, &net, params.traffic_classes)?;
    let faults = Faults {
        faults: net.link_loss.clone(),
        ..Faults::default()
    };
    let r = fabricsim_packet::run(&net.topo, params, &dag, &faults, RunOptions::default())
        .map_err(|e| {
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
        "{:<14} {:>5} {:>6} {:>11} {:>10} {:>8.3} {:>8.2} {:>8.2} {:>10.1} {:>7.2} {:>5}/{:<5}",
        f.case,
        f.hosts,
        f.flows,
        f.events,
        f.data_packets,
        f.wall_s,
        f.events_per_s / 1e6,
        f.packets_per_s / 1e6,
        f.sim_end_ps as f64 / 1e6,
        f.events as f64 / f.data_packets.max(1) as f64,
        f.completed,
        f.flows
    )
}

/// Column heads of [`format_row`]. An event is one popped from the queue: a packet reaching a
/// node (one per packet per hop, ACKs included), a port becoming free with a backlog, and the
/// NIC, timer and flow-control events; `ev/pkt` is events per data packet sent.
pub const HEADER: &str = "case           hosts  flows      events    packets   wall_s   Mev/s  Mpkt/s  sim_end_us  ev/pkt  done";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossless_mode_keeps_ib_credits_and_adds_pfc_to_roce() {
        let roce = peer_params("roce", Mode::Lossless).unwrap();
        assert!(matches!(roce.flow_control, FlowControl::Pfc(_)));
        assert!(describe(&roce).contains("PFC"));
        let ib = peer_params("ib", Mode::Lossless).unwrap();
        assert!(matches!(ib.flow_control, FlowControl::Credits(_)));
        let lossy = peer_params("ib", Mode::Lossy).unwrap();
        assert_eq!(lossy.flow_control, FlowControl::None);
        assert!(peer_params("token-ring", Mode::Lossy).is_none());
    }
}
