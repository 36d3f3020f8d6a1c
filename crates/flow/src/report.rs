//! The flow engine's results in the packet engine's schema (`sim::results`), so runs of the two
//! engines compare record by record.

use std::time::Instant;

use super::paths;
use super::state::{MsgState, NONE, PS_PER_S, QpState};
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_mech::SimParams;
use fabricsim_mech::results::{
    ClassSummary, Counters, MessageResult, RunResult, SimInfo, Status, Summary,
};

/// What the event loop leaves behind.
pub(super) struct Timeline<'a> {
    pub msgs: &'a [MsgState],
    pub routes: &'a paths::RouteInfos,
    pub qps: &'a [QpState],
    pub subflows: u32,
    pub end_ps: u64,
    pub events: u64,
    /// Whether loss draws were taken (`loss`: the one random stream of a flow run).
    pub drew_random: bool,
}

/// Per-message records, counters and the summary.
pub(super) fn results(p: &SimParams, dag: &MessageDag, tl: &Timeline, wall: Instant) -> RunResult {
    let mut messages = Vec::with_capacity(dag.messages.len());
    let mut c = Counters::default();
    for (i, m) in dag.messages.iter().enumerate() {
        let st = &tl.msgs[i];
        let qp = st.qp;
        let ideal = match m.path {
            Path::NvLink => dag.nvlink_rate.map_or(0, |r| r.serialize(m.bytes).ps()),
            // Alone on the fabric: the NIC pipeline, the wire bytes at the first subflow's
            // bottleneck (Hash and Spray routes are per QP; an adaptive route's first one),
            // the path and the ACK back.
            Path::Net => {
                let route = tl.routes.checked(qp * tl.subflows);
                let cap = route.map_or(0, |e| e.line);
                let lat = route.map_or(0, |e| e.lat_ps as u64);
                let wire = paths::wire_bytes(p, m.bytes);
                let line =
                    (cap != 0).then(|| (wire as u128 * 8 * PS_PER_S).div_ceil(cap as u128) as u64);
                p.nic_latency.ps() + line.unwrap_or(0) + lat + tl.qps[qp as usize].ack as u64
            }
        };
        let opt = |t: u64| (t != NONE).then_some(t);
        let fct = (st.finish != NONE).then(|| st.finish - st.post);
        if fct.is_some() {
            if m.path == Path::Net {
                c.bytes_offered += m.bytes;
                c.bytes_delivered += m.bytes;
                c.data_packets += m.bytes.div_ceil(p.mtu_bytes as u64).max(1);
            }
        }
        messages.push(MessageResult {
            id: i as u32,
            qp: (m.path == Path::Net).then_some(qp),
            class: (m.path == Path::Net)
                .then(|| p.engine_class(m.class))
                .flatten(),
            src: m.src.0,
            dst: m.dst.0,
            bytes: m.bytes,
            start_ps: opt(st.post),
            recv_ps: opt(st.recv),
            finish_ps: opt(st.finish),
            fct_ps: fct,
            ideal_fct_ps: ideal,
        });
    }
    let summary = Summary::of(&messages, 0, c.bytes_delivered);
    let completed = summary.messages_completed;
    let status = if completed == messages.len() as u64 {
        Status::Complete
    } else {
        Status::Unfinished
    };
    let wall_s = wall.elapsed().as_secs_f64();
    RunResult {
        sim: SimInfo {
            engine: "flow",
            status,
            partial: false,
            seed: p.seed,
            end_ps: tl.end_ps,
            events: tl.events,
            wall_s,
            events_per_s: tl.events as f64 / wall_s.max(1e-9),
            packets_per_s: 0.0,
            peak_packets: 0,
            drew_random: tl.drew_random,
            warnings: Vec::new(),
        },
        counters: c,
        flow_control: None,
        summary,
        classes: ClassSummary::of(&messages, None),
        messages,
        series: None,
    }
}
