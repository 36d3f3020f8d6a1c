//! Setting up a run: per-port state from the topology and parameters, queue pairs, the message
//! table and the first events.

use super::link::prob_threshold;
use super::llfc::LinkFc;
use super::{
    Engine, Ev, Events, MsgState, NO_TIME, Nic, P_LINK_UP, P_LLR, P_NIC, P_ROUTE_OK, PortInfo,
    PortLoss, PortState,
};
use crate::congestion::CcState;
use crate::error::SimError;
use crate::packet::{Fifo, NIL, QueueArena, Slab};
use crate::ring::{Ring, RingArena};
use crate::sched::SchedState;
use crate::transport::Qp;
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::release::Release;
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_core::topology::{HostId, NodeKind, Topology};
use fabricsim_core::units::Time;
use fabricsim_mech::entropy;
use fabricsim_mech::faults::Faults;
use fabricsim_mech::params::{RoutePolicy, SimParams, SprayPick};
use fabricsim_mech::results::{Counters, PortSeries};
use fabricsim_mech::route;
use fabricsim_mech::route::reps::Reps;

impl<'a> Engine<'a> {
    /// Sets up a run; `Err` when the traffic does not fit the topology.
    pub fn new(
        topo: &'a Topology,
        p: &'a SimParams,
        dag: &'a MessageDag,
        faults: &Faults,
    ) -> Result<Engine<'a>, SimError> {
        p.validate()?;
        super::llr::check_faults(p, faults)?;
        let ntc = p.traffic_classes as usize;
        let nports = topo.ports.len();
        // What makes every id the engine holds valid in its tables (`tab`).
        topo.check()?;
        if !route::candidates_within(topo) {
            return Err(SimError::Topology(
                "a routing candidate is not a port of the topology".into(),
            ));
        }
        if let Some(h) = topo.nodes.iter().find_map(|n| match n.kind {
            NodeKind::Nic { host, .. } if host.idx() >= topo.num_hosts() => Some(host.0),
            _ => None,
        }) {
            return Err(SimError::Topology(format!(
                "a NIC of host {h} past its {} hosts",
                topo.num_hosts()
            )));
        }
        // Switches whose ports all run at one rate may cut through.
        let uniform: Vec<bool> = topo
            .nodes
            .iter()
            .map(|n| {
                let mut rates = n
                    .ports()
                    .map(|q| topo.links[topo.ports[q as usize].link.idx()].rate);
                let first = rates.next();
                rates.all(|r| Some(r) == first)
            })
            .collect();
        let mut ports = Vec::with_capacity(nports);
        let mut info = Vec::with_capacity(nports);
        for port in &topo.ports {
            let link = &topo.links[port.link.idx()];
            let peer_node = topo.ports[port.peer.idx()].node;
            let peer_is_switch = topo.nodes[peer_node.idx()].is_switch();
            let host = match topo.nodes[port.node.idx()].kind {
                NodeKind::Nic { host, .. } => host.0,
                NodeKind::Switch { .. } => NIL,
            };
            ports.push(PortState {
                node: port.node.0,
                peer: port.peer.0,
                host,
                ps_per_byte: link.rate.ps_per_byte().unwrap_or(0) as u32,
                rate: link.rate,
                hop_delay: link.delay
                    + if peer_is_switch {
                        p.switch_latency
                    } else {
                        p.nic_latency
                    },
                peer_cut_through: p.cut_through && peer_is_switch && uniform[peer_node.idx()],
                busy_until: Time::ZERO,
                wake: false,
                blocked: 0,
                tx_bytes: 0,
                queued: 0,
                tx_hook: false,
                wd_off: 0,
                llr_hold: false,
            });
            info.push(PortInfo {
                node: port.node.0,
                flags: P_LINK_UP
                    | P_ROUTE_OK
                    | if host != NIL { P_NIC } else { 0 }
                    | if p.llr.is_some() { P_LLR } else { 0 },
            });
        }
        let mut loss = vec![
            PortLoss {
                threshold: prob_threshold(p.loss_rate),
                ber: p.ber,
                ..PortLoss::default()
            };
            nports
        ];
        let rngs = (0..nports)
            .map(|i| Rng::stream(p.seed, Stream::LinkLoss, i as u64))
            .collect();
        let mut q = Events::new();
        let misroutes = super::link::apply_faults(topo, faults, &mut loss, &mut q)?;
        for (ps, l) in ports.iter_mut().zip(&loss) {
            ps.tx_hook = l.any() || p.llr.is_some();
        }
        dag.check_hosts(topo.num_hosts() as u32)?;
        // Queue pairs as the flow engine numbers them (`route::number_qps`): a connection's
        // QPs (QPs per connection) are consecutive, each message's first QP is `msg_qp`.
        let (msg_qp, qp_ends) = route::connection_qps(&dag.messages, &p.cc);
        let recovery = p.transport.under(p.routing);
        // Per QP, the data packets its messages carry at most (a split message counted whole on
        // each of its QPs): no more can be outstanding, so its PSN rings (selective repeat's
        // bitmaps, RUD's timers) need no room past them, whatever the window.
        let mut qp_packets = vec![0u64; qp_ends.len()];
        for (i, m) in dag.messages.iter().enumerate() {
            if m.path == Path::Net {
                let first = msg_qp[i] as usize;
                let n = m.bytes.div_ceil(p.mtu_bytes.max(1) as u64).max(1);
                for q in &mut qp_packets[first..first + p.cc.qps_per_message().max(1) as usize] {
                    *q += n;
                }
            }
        }
        let mut qps = Vec::with_capacity(qp_ends.len());
        for (id, &(s, d)) in qp_ends.iter().enumerate() {
            let (fwd, rev) = entropy::flow_hashes(s, d, id as u32, p.udp_dport, p.cc.hash_dest_qp);
            let ring = match p.window_packets {
                0 => 0,
                w => w.min(qp_packets[id].clamp(1, u32::MAX as u64) as u32),
            };
            let mut qp = Qp::new(s, d, fwd, rev, recovery, ring);
            qp.limit_ps_per_byte = SimParams::limiter_ps_per_byte(p.qp_rate_limit);
            qp.ipsn = p.initial_psn.of(p.seed, id as u32);
            qps.push(qp);
        }
        // Each QP's traffic class: its messages' (one class per QP, `route::number_qps`).
        let mut data_tcs = 0u8;
        for (i, m) in dag.messages.iter().enumerate() {
            if m.path != Path::Net {
                continue;
            }
            let tc = p.message_class(i, m.class).map_err(SimError::Traffic)?;
            data_tcs |= 1 << tc;
            let first = msg_qp[i] as usize;
            for qp in &mut qps[first..first + p.cc.qps_per_message().max(1) as usize] {
                qp.tc = tc;
            }
        }
        // Each QP's NIC line rate (congestion control paces below it).
        let qp_line = qps
            .iter()
            .map(|q| topo.links[topo.ports[topo.host_port(HostId(q.src)).idx()].link.idx()].rate)
            .collect();
        // The slab's room: every data packet of the run in flight at once, plus an ACK per QP
        // (a lossless fabric with unlimited windows comes close), capped: it only grows past.
        let data_packets: u64 = dag
            .messages
            .iter()
            .filter(|m| m.path == Path::Net)
            .map(|m| m.bytes.div_ceil(p.mtu_bytes.max(1) as u64))
            .sum();
        let slab_room = (data_packets + qps.len() as u64).min(1 << 22) as usize;
        // A NIC's QP ring holds each of its QPs at most once (4 slots at least, doubling).
        let qp_ring_room = 2 * qps.len() + 4 * topo.num_hosts();
        let n_qps = qps.len();
        // Dependencies must point backwards (checked by the release tracker).
        let n = dag.messages.len();
        let release = Release::new(dag)?;
        let mut msgs = Vec::with_capacity(n);
        for (i, m) in dag.messages.iter().enumerate() {
            let parts = if m.path == Path::Net {
                entropy::parts(m.bytes, p.cc.qps_per_message())
            } else {
                1
            };
            msgs.push(MsgState {
                qp: msg_qp[i],
                parts,
                send_left: parts,
                recv_left: parts,
                post: NO_TIME,
                recv: NO_TIME,
                finish: NO_TIME,
                failed: false,
            });
            if m.deps_len == 0 {
                q.push(m.start.0, Ev::Post { msg: i as u32 });
            }
        }
        let fc = LinkFc::new(topo, p, misroutes)?;
        if let Some((t, ev)) = fc.first_events() {
            q.push_fc(t, ev);
        }
        let series = p.sample_interval.map(|iv| {
            q.push(0, Ev::Sample);
            let ps = (0..nports)
                .map(|i| PortSeries {
                    port: i as u32,
                    node: topo.ports[i].node.0,
                    queue_bytes: Vec::new(),
                    tx_bytes: Vec::new(),
                    paused_ps: Vec::new(),
                    pause_frames: Vec::new(),
                    credit_stall_ps: Vec::new(),
                })
                .collect();
            super::finish::Sampler::new(iv, ps)
        });
        // A congestion control that cannot run on these routes (HPCC past its INT hops).
        let cc = CcState::new(p, topo, &qps, qp_line, slab_room)?;
        for ps in &mut ports {
            ps.tx_hook |= cc.telemetry && ps.host == NIL;
        }
        Ok(Engine {
            topo,
            p,
            dag,
            now: Time::ZERO,
            q,
            pkts: Slab::with_capacity(slab_room),
            qps: qps.into(),
            sched: vec![SchedState::default(); nports].into(),
            ports: ports.into(),
            info: info.into(),
            loss,
            tcq: vec![Fifo::default(); nports * ntc].into(),
            // Every queued entry is a live packet: room for the slab's.
            queued: QueueArena::with_capacity(slab_room),
            qp_rings: RingArena::with_capacity(qp_ring_room),
            ntc,
            data_tcs,
            buf_used: vec![0; topo.nodes.len()].into(),
            // D-mod-K routing reads its per-switch divisor where ECMP reads its salt.
            // The hop routes inline unless routing adapts or a fault forces a next hop.
            routes: route::RouteTable::new(
                topo,
                p.routing,
                !p.routing.reorders() && !fc.has_misroutes(),
            ),
            nics: (0..topo.num_hosts())
                .map(|h| Nic {
                    ctrl: Fifo::default(),
                    ring: Ring::default(),
                    port: topo.host_port(HostId(h as u32)).0,
                })
                .collect::<Vec<_>>()
                .into(),
            nv_free: vec![0; topo.num_hosts()],
            msgs,
            release,
            rngs,
            spray_rngs: match p.routing {
                RoutePolicy::Spray(s) if s.pick != SprayPick::RoundRobin => (0..topo.num_hosts())
                    .map(|h| Rng::stream(p.seed, fabricsim_core::rng::Stream::Spray, h as u64))
                    .collect(),
                _ => Vec::new(),
            },
            reps: match p.routing {
                RoutePolicy::Spray(s) if s.pick == SprayPick::Reps => vec![Reps::default(); n_qps],
                _ => Vec::new(),
            },
            recovery,
            rud_done: Vec::new(),
            rto: p.ack_timeout(),
            alpha_x1024: (p.dt_alpha * 1024.0).round().max(1.0) as u64,
            wire_extra: p.wire_overhead_bytes,
            remaining: n as u64,
            stop: n == 0,
            c: Counters::default(),
            events: 0,
            data_sent: 0,
            series,
            reroute: faults.reroute,
            reach: fabricsim_mech::reroute::Reach::healthy(nports),
            cc,
            fc,
            llr: super::llr::links(topo, p),
        })
    }
}
