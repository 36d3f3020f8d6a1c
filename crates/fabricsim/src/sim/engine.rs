//! The event loop and the packet path: NIC -> link -> switch (route, admit, queue, schedule)
//! -> link -> ... -> NIC (RC receiver, ACK back).
//!
//! One event per packet per hop (`Arrive`, at the time the packet can leave the next node), plus
//! `TxFree` only while a port has a backlog: an idle port sends at once. Time is integer
//! picoseconds; ties pop in insertion order, so a run is a pure function of its inputs.

mod cc;

use std::collections::VecDeque;
use std::time::Instant;

use super::cc::{CcState, CcTimer};
use super::entropy;
pub mod llfc;
use llfc::{FcEv, LinkFc};

use super::faults::{Dir, Fault, Faults, LinkLoss};
use super::packet::{F_CORRUPT, F_ECN, F_LAST, Fifo, Kind, NIL, Packet, Slab, prefetch};
use super::params::{RoutePolicy, SimParams};
use super::queue::RadixQueue;
use super::results::{
    Counters, DropReason, MessageResult, PortSeries, RunResult, Series, SimInfo, Status, Summary,
};
use super::sched::{self, SchedState};
use super::transport::{Qp, Reply, Rx};
use super::{ibroute, route};
use crate::message::{MessageDag, Path};
use crate::rng::Rng;
use crate::topology::{HostId, NodeId, NodeKind, PortId, Topology};
use crate::units::Time;

const NO_TIME: u64 = u64::MAX;
/// Events between progress checks (stop flag, progress callback).
const CHECK_EVERY: u64 = 1 << 18;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Packet `pkt` can leave the node of its ingress port `Packet::port` (switch) or has
    /// arrived (NIC).
    Arrive {
        pkt: u32,
    },
    /// Egress `port` finished serializing; pull the next packet.
    TxFree {
        port: u32,
    },
    /// The application posts message `msg`.
    Post {
        msg: u32,
    },
    /// After the sender NIC's latency, `msg` joins its QP.
    Start {
        msg: u32,
    },
    /// The rate limiter lets `qp` send again.
    QpWake {
        qp: u32,
    },
    /// Check `qp`'s local ACK timer.
    Timer {
        qp: u32,
    },
    /// An NVLink transfer completes.
    NvDone {
        msg: u32,
    },
    /// A link changes physical state.
    Link {
        link: u32,
        up: bool,
    },
    /// Routing reflects a link state change.
    Route {
        link: u32,
        up: bool,
    },
    Sample,
    /// A congestion-control timer of `qp` (`sim::cc`).
    CcTimer {
        qp: u32,
        timer: CcTimer,
    },
    /// Link-level flow control (credits, PAUSE, watchdog, deadlock checks): `llfc`.
    Fc(FcEv),
}

/// `Engine::pflags` bits: per-port state the arrival path reads, packed densely.
const P_LINK_UP: u8 = 1;
/// Routing may choose the port (its link is up, or went down less than the reroute delay ago).
const P_ROUTE_OK: u8 = 2;
/// The port is a NIC's.
const P_NIC: u8 = 4;

/// An egress port. The fields the packet path reads come first and fill one cache line.
#[derive(Clone, Debug)]
#[repr(C)]
struct PortState {
    busy_until: Time,
    /// Propagation plus the latency of the node at the other end (switch pipeline or NIC).
    hop_delay: Time,
    /// Bytes queued in all classes.
    queued: u64,
    tx_bytes: u64,
    /// Loss per packet as a fraction of 2^64 (0: none).
    loss_threshold: u64,
    /// Picoseconds per byte when exact at this rate (0: compute from `rate`).
    ps_per_byte: u32,
    node: u32,
    peer: u32,
    /// Host index when the node is a NIC, else NIL.
    host: u32,
    /// A `TxFree` is scheduled.
    wake: bool,
    /// Link-level flow control: bit `tc` set = that class may not send (credits, PFC).
    blocked: u8,
    /// The peer switch cuts through (all its ports at one rate).
    peer_cut_through: bool,
    // Colder fields.
    rate: crate::units::BitRate,
    /// Bit error rate (0: none).
    ber: f64,
    /// Corrupt the n-th packet sent (0: none); `tx_packets` counts only while it is set.
    drop_nth: u64,
    tx_packets: u64,
    sched: SchedState,
}

impl PortState {
    #[inline]
    fn ser(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            Time(bytes as u64 * self.ps_per_byte as u64)
        } else {
            self.rate.serialize(bytes as u64)
        }
    }
}

#[derive(Default)]
struct Nic {
    /// ACK/NAKs waiting for the wire (sent before data).
    ctrl: Fifo,
    /// QPs with something to send, served round robin.
    ring: VecDeque<u32>,
}

#[derive(Clone, Copy, Debug)]
struct MsgState {
    /// The QP of its first part; part j is on QP `qp + j`.
    qp: u32,
    /// Parts the message is split into (QPs per connection), parts not yet completed at the
    /// sender, parts not yet received in full.
    parts: u16,
    send_left: u16,
    recv_left: u16,
    pending_deps: u32,
    post: u64,
    recv: u64,
    finish: u64,
    failed: bool,
}

/// What the caller learns every few hundred thousand events; return false to stop.
pub struct Progress {
    pub now: Time,
    pub events: u64,
    pub completed: u64,
    pub total: u64,
}

/// Options of one run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Stop at this simulated time (results are then partial).
    pub until: Option<Time>,
    /// Called every few hundred thousand events (never per event); false stops the run.
    pub progress: Option<&'a mut dyn FnMut(&Progress) -> bool>,
}

pub struct Engine<'a> {
    topo: &'a Topology,
    p: &'a SimParams,
    dag: &'a MessageDag,
    now: Time,
    q: RadixQueue<Ev>,
    pkts: Slab,
    ports: Vec<PortState>,
    /// Per port: `P_*` bits.
    pflags: Vec<u8>,
    tcq: Vec<Fifo>,
    ntc: usize,
    buf_used: Vec<u64>,
    salt: Vec<u32>,
    nics: Vec<Nic>,
    /// Per host: when its GPU's NVLink egress is next free; one GPU's transfers share its
    /// one-way NVLink rate (`MessageDag::nvlink_rate` is per GPU) one after another.
    nv_free: Vec<u64>,
    qps: Vec<Qp>,
    msgs: Vec<MsgState>,
    children_start: Vec<u32>,
    children: Vec<u32>,
    rngs: Vec<Rng>,
    rto: Time,
    alpha_x1024: u64,
    wire_extra: u32,
    remaining: u64,
    c: Counters,
    events: u64,
    data_sent: u64,
    series: Option<(Time, Vec<PortSeries>, Vec<u64>)>,
    reroute_delay: Time,
    cc: CcState,
    /// Link-level flow control state (credits or PFC).
    fc: LinkFc,
}

impl<'a> Engine<'a> {
    /// Sets up a run; `Err` when the traffic does not fit the topology.
    pub fn new(
        topo: &'a Topology,
        p: &'a SimParams,
        dag: &'a MessageDag,
        faults: &Faults,
    ) -> Result<Engine<'a>, String> {
        p.validate()
            .map_err(|(f, prob, allowed)| format!("parameter {f}: {prob} (allowed: {allowed})"))?;
        let ntc = p.traffic_classes as usize;
        let nports = topo.ports.len();
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
                loss_threshold: prob_threshold(p.loss_rate),
                ber: p.ber,
                drop_nth: 0,
                tx_packets: 0,
                tx_bytes: 0,
                queued: 0,
                sched: SchedState::default(),
            });
        }
        let rngs = (0..nports)
            .map(|i| Rng::stream(p.seed, 1, i as u64))
            .collect();
        let mut q = RadixQueue::new();
        let mut misroutes = Vec::new();
        for f in &faults.faults {
            let link_ok = |l: crate::topology::LinkId| {
                if l.idx() < topo.links.len() {
                    Ok(())
                } else {
                    Err(format!(
                        "fault on link {} but the topology has {} links",
                        l.0,
                        topo.links.len()
                    ))
                }
            };
            match *f {
                Fault::Loss { link, dir, loss } => {
                    link_ok(link)?;
                    for pt in dir_ports(topo, link, dir) {
                        let ps = &mut ports[pt];
                        match loss {
                            LinkLoss::Rate(r) => {
                                ps.loss_threshold = prob_threshold(r);
                                ps.ber = 0.0;
                            }
                            LinkLoss::Ber(b) => {
                                ps.loss_threshold = 0;
                                ps.ber = b;
                            }
                        }
                    }
                }
                Fault::DropNth { link, dir, nth } => {
                    link_ok(link)?;
                    for pt in dir_ports(topo, link, dir) {
                        ports[pt].drop_nth = nth;
                    }
                }
                Fault::Down { link, at } => {
                    link_ok(link)?;
                    q.push(
                        at.0,
                        Ev::Link {
                            link: link.0,
                            up: false,
                        },
                    );
                }
                Fault::RxStall { host, at, until } => {
                    if host.idx() >= topo.num_hosts() {
                        return Err(format!(
                            "stall of host {} but the topology has {} hosts",
                            host.0,
                            topo.num_hosts()
                        ));
                    }
                    q.push(
                        at.0,
                        Ev::Fc(FcEv::Stall {
                            host: host.0,
                            on: true,
                        }),
                    );
                    if let Some(u) = until {
                        q.push(
                            u.0,
                            Ev::Fc(FcEv::Stall {
                                host: host.0,
                                on: false,
                            }),
                        );
                    }
                }
                Fault::Misroute { node, dst, port } => misroutes.push((node, dst, port)),
                Fault::Up { link, at } => {
                    link_ok(link)?;
                    q.push(
                        at.0,
                        Ev::Link {
                            link: link.0,
                            up: true,
                        },
                    );
                }
            }
        }
        // Queue pairs: one per (src, dst, qp index, part), numbered in order of first use; the
        // parts of a connection (QPs per connection) get consecutive ids.
        let qpc = p.cc.qps_per_connection;
        let mut qp_keys: Vec<((u32, u32, u32), u32)> = Vec::new();
        let mut msg_qp = vec![NIL; dag.messages.len()];
        let nh = topo.num_hosts() as u32;
        for (i, m) in dag.messages.iter().enumerate() {
            if m.src.0 >= nh || m.dst.0 >= nh {
                return Err(format!(
                    "message {i}: host {} -> {} but the topology has {nh} hosts",
                    m.src.0, m.dst.0
                ));
            }
            if m.path == Path::Net {
                if m.src == m.dst {
                    return Err(format!(
                        "message {i}: source and destination are both host {}",
                        m.src.0
                    ));
                }
                for j in 0..qpc as u32 {
                    qp_keys.push(((m.src.0, m.dst.0, m.qp as u32 * qpc as u32 + j), i as u32));
                }
            } else if dag.nvlink_rate.is_none() {
                return Err(format!(
                    "message {i} uses NVLink but the DAG has no NVLink rate"
                ));
            }
        }
        let mut sorted_keys: Vec<(u32, u32, u32)> = qp_keys.iter().map(|k| k.0).collect();
        sorted_keys.sort_unstable();
        sorted_keys.dedup();
        // QP ids in order of first appearance.
        let mut qp_id_of_key = vec![NIL; sorted_keys.len()];
        let mut qps = Vec::new();
        for &(key, mi) in &qp_keys {
            let k = sorted_keys.binary_search(&key).expect("key present");
            if qp_id_of_key[k] == NIL {
                let id = qps.len() as u32;
                qp_id_of_key[k] = id;
                let (s, d) = (key.0, key.1);
                let (fwd, rev) = entropy::flow_hashes(s, d, id, p.udp_dport, p.cc.hash_dest_qp);
                let mut qp = Qp::new(s, d, fwd, rev, p.transport, p.window_packets);
                qp.limit_ps_per_byte = SimParams::limiter_ps_per_byte(p.qp_rate_limit);
                qps.push(qp);
            }
            if msg_qp[mi as usize] == NIL {
                msg_qp[mi as usize] = qp_id_of_key[k];
            }
        }
        // Each QP's NIC line rate (congestion control paces below it).
        let qp_line = qps
            .iter()
            .map(|q| topo.links[topo.ports[topo.host_port(HostId(q.src)).idx()].link.idx()].rate)
            .collect();
        // Dependencies must point backwards; the children lists (CSR) come from the DAG.
        let n = dag.messages.len();
        for i in 0..n {
            if let Some(&d) = dag.deps_of(i as u32).iter().find(|&&d| d as usize >= i) {
                return Err(format!(
                    "message {i} depends on {d}, which does not come before it"
                ));
            }
        }
        let (children_start, children) = dag.children();
        let mut msgs = Vec::with_capacity(n);
        for (i, m) in dag.messages.iter().enumerate() {
            let parts = if m.path == Path::Net {
                entropy::parts(m.bytes, qpc)
            } else {
                1
            };
            msgs.push(MsgState {
                qp: msg_qp[i],
                parts,
                send_left: parts,
                recv_left: parts,
                pending_deps: m.deps_len,
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
            q.push(t, ev);
        }
        let series = p.sample_interval.map(|iv| {
            q.push(0, Ev::Sample);
            let ps = (0..nports)
                .map(|i| PortSeries {
                    port: i as u32,
                    node: topo.ports[i].node.0,
                    queue_bytes: Vec::new(),
                    tx_bytes: Vec::new(),
                })
                .collect();
            (iv, ps, vec![0u64; nports])
        });
        Ok(Engine {
            topo,
            p,
            dag,
            now: Time::ZERO,
            q,
            pkts: Slab::new(),
            pflags: ports
                .iter()
                .map(|ps| P_LINK_UP | P_ROUTE_OK | if ps.host != NIL { P_NIC } else { 0 })
                .collect(),
            qps,
            ports,
            tcq: vec![Fifo::default(); nports * ntc],
            ntc,
            buf_used: vec![0; topo.nodes.len()],
            // D-mod-K routing reads its per-switch divisor where ECMP reads its salt.
            salt: match p.routing {
                RoutePolicy::DModK | RoutePolicy::Adaptive => ibroute::divisors(topo),
                _ => (0..topo.nodes.len() as u32)
                    .map(route::switch_salt)
                    .collect(),
            },
            nics: (0..topo.num_hosts()).map(|_| Nic::default()).collect(),
            nv_free: vec![0; topo.num_hosts()],
            msgs,
            children_start,
            children,
            rngs,
            rto: p.ack_timeout(),
            alpha_x1024: (p.dt_alpha * 1024.0).round().max(1.0) as u64,
            wire_extra: p.wire_overhead_bytes,
            remaining: n as u64,
            c: Counters::default(),
            events: 0,
            data_sent: 0,
            series,
            reroute_delay: faults.reroute_delay,
            cc: CcState::new(&p.cc, p.seed, topo.nodes.len(), nports, qp_line),
            fc,
        })
    }

    /// Runs to the end (or `until`, or a stop from the progress callback) and returns the results.
    pub fn run(mut self, mut opts: RunOptions) -> RunResult {
        let wall = Instant::now();
        let until = opts.until.map(|t| t.0).unwrap_or(u64::MAX);
        let mut status = Status::Complete;
        let mut next_check = CHECK_EVERY;
        loop {
            let (pkts, ports) = (&self.pkts, &self.ports);
            let Some((t, ev)) = self.q.pop_with(|e| match e {
                Ev::Arrive { pkt } => pkts.prefetch(*pkt),
                Ev::TxFree { port } => prefetch(&ports[*port as usize]),
                _ => {}
            }) else {
                break;
            };
            if t > until {
                self.q.push(t, ev);
                self.now = Time(until);
                status = Status::StoppedAtUntil;
                break;
            }
            self.now = Time(t);
            self.events += 1;
            self.dispatch(ev);
            if self.remaining == 0 {
                break;
            }
            if self.fc.halt {
                status = Status::Deadlock;
                break;
            }
            if self.events >= next_check {
                next_check += CHECK_EVERY;
                if let Some(cb) = opts.progress.as_mut() {
                    let pr = Progress {
                        now: self.now,
                        events: self.events,
                        completed: self.msgs.len() as u64 - self.remaining,
                        total: self.msgs.len() as u64,
                    };
                    if !cb(&pr) {
                        status = Status::Interrupted;
                        break;
                    }
                }
            }
        }
        if status == Status::Complete && self.remaining > 0 {
            status = Status::Unfinished;
        }
        let wall_s = wall.elapsed().as_secs_f64();
        self.finish(status, wall_s)
    }

    #[inline]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { pkt } => {
                let port = self.pkts.get(pkt).port;
                self.arrive(pkt, port as usize)
            }
            Ev::TxFree { port } => {
                self.ports[port as usize].wake = false;
                self.kick(port as usize);
            }
            Ev::Post { msg } => self.post(msg),
            Ev::Start { msg } => {
                let m = &self.dag.messages[msg as usize];
                let st = self.msgs[msg as usize];
                let qpc = self.p.cc.qps_per_connection;
                for j in 0..st.parts {
                    let qp = st.qp + j as u32;
                    if self.qps[qp as usize].failed {
                        self.msgs[msg as usize].failed = true;
                        return;
                    }
                    let bytes = entropy::part_bytes(m.bytes, qpc, j);
                    self.qps[qp as usize].post(msg, bytes, self.p.mtu_bytes);
                    self.activate(qp);
                }
            }
            Ev::QpWake { qp } => self.activate(qp),
            Ev::Timer { qp } => self.timer(qp),
            Ev::NvDone { msg } => {
                self.msgs[msg as usize].recv = self.now.0;
                self.complete(msg);
            }
            Ev::Link { link, up } => self.link_state(link, up),
            Ev::Route { link, up } => {
                for e in self.topo.links[link as usize].ends {
                    set_bit(&mut self.pflags[e.idx()], P_ROUTE_OK, up);
                }
            }
            Ev::Sample => self.sample(),
            Ev::CcTimer { qp, timer } => self.cc_timer(qp, timer),
            Ev::Fc(e) => self.fc_event(e),
        }
    }

    fn post(&mut self, msg: u32) {
        let m = &self.dag.messages[msg as usize];
        self.msgs[msg as usize].post = self.now.0;
        match m.path {
            Path::Net => self
                .q
                .push((self.now + self.p.nic_latency).0, Ev::Start { msg }),
            Path::NvLink => {
                let rate = self.dag.nvlink_rate.expect("checked in new");
                let free = &mut self.nv_free[m.src.idx()];
                *free = (*free).max(self.now.0) + rate.serialize(m.bytes).0;
                self.q.push(*free, Ev::NvDone { msg });
            }
        }
    }

    /// Puts `qp` in its NIC's ring if it has something to send, and wakes the NIC port.
    fn activate(&mut self, qp: u32) {
        let q = &mut self.qps[qp as usize];
        if q.active || !q.can_send(self.p.transport, self.p.window_packets) {
            return;
        }
        q.active = true;
        let h = q.src as usize;
        self.nics[h].ring.push_back(qp);
        let port = self.topo.host_port(HostId(h as u32)).idx();
        self.kick(port);
    }

    /// Starts the next transmission on `port` if it is idle, or makes sure it will look again
    /// when it becomes idle.
    #[inline]
    fn kick(&mut self, pi: usize) {
        let port = &mut self.ports[pi];
        if port.wake || self.pflags[pi] & P_LINK_UP == 0 {
            return;
        }
        if port.busy_until > self.now {
            port.wake = true;
            self.q
                .push(port.busy_until.0, Ev::TxFree { port: pi as u32 });
            return;
        }
        let host = port.host;
        let next = if host != NIL {
            self.nic_next(host as usize)
        } else {
            self.switch_next(pi)
        };
        if let Some(id) = next {
            self.transmit(pi, id);
            let more = if host != NIL {
                let nic = &self.nics[host as usize];
                !nic.ctrl.is_empty() || !nic.ring.is_empty()
            } else {
                self.ports[pi].queued > 0
            };
            if more {
                let port = &mut self.ports[pi];
                port.wake = true;
                self.q
                    .push(port.busy_until.0, Ev::TxFree { port: pi as u32 });
            }
        }
    }

    /// Serializes packet `id` on `pi` and schedules its arrival at the other end.
    #[inline]
    fn transmit(&mut self, pi: usize, id: u32) {
        let now = self.now;
        let port = &mut self.ports[pi];
        let pk = self.pkts.get_mut(id);
        let wire = pk.frame as u32 + self.wire_extra;
        let ser = port.ser(wire);
        port.busy_until = now + ser;
        port.tx_bytes += wire as u64;
        let (tc, frame) = (pk.tc, pk.frame as u32);

        if port.loss_threshold != 0 && self.rngs[pi].next_u64() < port.loss_threshold {
            pk.flags |= F_CORRUPT;
        } else if port.ber > 0.0 {
            let p_loss = -((8 * wire) as f64 * (-port.ber).ln_1p()).exp_m1();
            if self.rngs[pi].next_f64() < p_loss {
                pk.flags |= F_CORRUPT;
            }
        }
        if port.drop_nth != 0 {
            port.tx_packets += 1;
            if port.tx_packets == port.drop_nth {
                pk.flags |= F_CORRUPT;
            }
        }
        let head_start = if port.peer_cut_through {
            Time::ZERO
        } else {
            ser
        };
        pk.port = port.peer;
        let at = now + head_start + port.hop_delay;
        self.q.push(at.0, Ev::Arrive { pkt: id });
        self.fc_sent(pi, tc, frame);
    }

    /// The next packet a switch port sends, by the port's scheduling discipline.
    #[inline]
    fn switch_next(&mut self, pi: usize) -> Option<u32> {
        let base = pi * self.ntc;
        if self.ports[pi].queued == 0 {
            return None;
        }
        let credit_blocked = self.fc_credit_blocked(pi);
        let port = &mut self.ports[pi];
        let queues = &self.tcq[base..base + self.ntc];
        let how = self.p.scheduling;
        let tc = sched::pick(how, &mut port.sched, port.blocked | credit_blocked, queues)?;
        let (id, frame) = self.tcq[base + tc].pop()?;
        sched::served(how, &mut port.sched, tc, &self.tcq[base..base + self.ntc]);
        // The buffer is released at dequeue (as ns-3's switch MMU does).
        port.queued -= frame as u64;
        let node = port.node as usize;
        let in_port = self.pkts.get(id).port as usize;
        self.fc_release(in_port, tc as u8, frame as u32, node);
        if tc == self.p.data_tc as usize {
            self.cc_mark(id, node, pi, self.tcq[base + tc].bytes);
        }
        Some(id)
    }

    /// The next packet a NIC sends: ACK/NAKs first, then its QPs round robin.
    #[inline]
    fn nic_next(&mut self, h: usize) -> Option<u32> {
        let pi = self.topo.host_port(HostId(h as u32)).idx();
        if let Some((id, f)) = self.nics[h].ctrl.head()
            && self.fc_may_send(pi, self.pkts.get(id).tc, f as u32)
        {
            self.nics[h].ctrl.pop().expect("a head");
            if self.pkts.get(id).kind != Kind::Cnp {
                self.c.ack_packets += 1;
            }
            return Some(id);
        }
        let full = self.p.data_frame_bytes(self.p.mtu_bytes);
        if !self.fc_may_send(pi, self.p.data_tc, full) {
            return None;
        }
        let (kind, window, mtu) = (self.p.transport, self.p.window_packets, self.p.mtu_bytes);
        for _ in 0..self.nics[h].ring.len() {
            let qi = self.nics[h].ring.pop_front()?;
            let qp = &mut self.qps[qi as usize];
            if qp.next_send > self.now {
                qp.active = false;
                self.q.push(qp.next_send.0, Ev::QpWake { qp: qi });
                continue;
            }
            let was_idle = !qp.outstanding();
            let Some((psn, retx)) = qp.next_psn(kind, window) else {
                qp.active = false;
                continue;
            };
            let (payload, last) = qp.packet_of(psn, mtu);
            let frame = self.p.data_frame_bytes(payload);
            if qp.can_send(kind, window) {
                self.nics[h].ring.push_back(qi);
            } else {
                qp.active = false;
            }
            if qp.limit_ps_per_byte > 0 {
                qp.next_send =
                    self.now + Time((frame + self.wire_extra) as u64 * qp.limit_ps_per_byte);
            }
            if was_idle {
                qp.rto_deadline = self.now + self.rto;
            }
            if !qp.timer_pending {
                qp.timer_pending = true;
                self.q
                    .push(qp.rto_deadline.0.max(self.now.0), Ev::Timer { qp: qi });
            }
            let pkt = Packet {
                qp: qi,
                psn,
                aux: 0,
                dst: qp.dst,
                hash: qp.hash_fwd,
                payload: payload as u16,
                frame: frame as u16,
                port: NIL,
                kind: Kind::Data,
                tc: self.p.data_tc,
                flags: if last { F_LAST } else { 0 } | self.ar_flags(qi, psn),
            };
            self.cc_sent(qi, (frame + self.wire_extra) as u64);
            self.c.bytes_offered += payload as u64;
            self.c.data_packets += 1;
            self.data_sent += 1;
            if retx {
                self.c.retransmitted_packets += 1;
            }
            return Some(self.pkts.alloc(pkt));
        }
        None
    }

    /// Drops packet `id` for `reason`, counting its payload.
    fn drop_pkt(&mut self, id: u32, reason: DropReason) {
        assert!(
            self.fc.credits.is_none() || reason != DropReason::Buffer,
            "buffer drop in a credit (lossless) fabric: engine bug"
        );
        let pk = self.pkts.get(id);
        if pk.kind == Kind::Data {
            self.c.bytes_dropped += pk.payload as u64;
        }
        self.c.drops.add(reason);
        self.pkts.free(id);
    }

    #[inline]
    fn arrive(&mut self, id: u32, in_port: usize) {
        let pk = *self.pkts.get(id);
        if pk.flags & F_CORRUPT != 0 {
            return self.drop_pkt(id, DropReason::Corruption);
        }
        let flags = self.pflags[in_port];
        if flags & P_LINK_UP == 0 {
            return self.drop_pkt(id, DropReason::LinkDown);
        }
        if flags & P_NIC != 0 {
            if self.fc.lossless != 0 && !self.fc_nic_arrived(id, in_port, &pk) {
                return;
            }
            return self.nic_receive(id, &pk);
        }
        // Switch: route, admit, enqueue.
        let topo = self.topo;
        let node = topo.ports[in_port].node.0;
        if let Some(out) = self.fc.misroute(node, pk.dst, pk.tc) {
            return self.fc_enqueue(id, in_port, out, &pk);
        }
        let cands = topo.routing.next_hops(NodeId(node), HostId(pk.dst));
        if cands.is_empty() {
            return self.drop_pkt(id, DropReason::NoRoute);
        }
        let n = cands.len();
        let mut k = route::choose(self.p.routing, n, pk.hash, pk.dst, self.salt[node as usize]);
        k = self.ar_pick(cands, k, pk.flags);
        if self.pflags[cands[k].idx()] & P_ROUTE_OK == 0 {
            match (1..n)
                .map(|j| (k + j) % n)
                .find(|&j| self.pflags[cands[j].idx()] & P_ROUTE_OK != 0)
            {
                Some(j) => k = j,
                None => return self.drop_pkt(id, DropReason::NoRoute),
            }
        }
        let out = cands[k].idx();
        if self.pflags[out] & P_LINK_UP == 0 {
            return self.drop_pkt(id, DropReason::LinkDown);
        }
        if self.fc.lossless(pk.tc) {
            return self.fc_enqueue(id, in_port, out, &pk);
        }
        // Shared buffer with dynamic thresholds: a queue may grow to alpha x free buffer
        // (Choudhury & Hahne, IEEE/ACM ToN 1998).
        let frame = pk.frame as u64;
        let used = self.buf_used[node as usize];
        let size = self.p.switch_buffer_bytes;
        let port = &self.ports[out];
        let idle = port.queued == 0 && !port.wake && port.busy_until <= self.now;
        if idle && port.blocked & (1 << pk.tc) == 0 {
            // An idle egress with empty queues: straight to the wire (the packet passes through
            // the buffer in no time, so admission sees an empty queue).
            if used + frame > size || frame * 1024 > self.alpha_x1024 * (size - used) {
                return self.drop_pkt(id, DropReason::Buffer);
            }
            return self.transmit(out, id);
        }
        let qi = out * self.ntc + pk.tc as usize;
        let qlen = self.tcq[qi].bytes;
        if used + frame > size || (qlen + frame) * 1024 > self.alpha_x1024 * (size - used) {
            return self.drop_pkt(id, DropReason::Buffer);
        }
        self.enqueue(node as usize, out, id, &pk);
    }

    /// Queues packet `id` at egress `out` of switch `node` and wakes the port.
    fn enqueue(&mut self, node: usize, out: usize, id: u32, pk: &Packet) {
        let frame = pk.frame as u64;
        self.buf_used[node] += frame;
        self.ports[out].queued += frame;
        self.tcq[out * self.ntc + pk.tc as usize].push(id, pk.frame);
        self.kick(out);
    }

    fn nic_receive(&mut self, id: u32, pk: &Packet) {
        let (kind, window) = (self.p.transport, self.p.window_packets);
        let qi = pk.qp;
        match pk.kind {
            Kind::Data => {
                let qp = &mut self.qps[qi as usize];
                let (rx, reply) = qp.on_data(
                    pk.psn,
                    kind,
                    window,
                    self.p.ack_every,
                    pk.flags & F_LAST != 0,
                );
                match rx {
                    Rx::Accepted => {
                        self.c.bytes_delivered += pk.payload as u64;
                        self.pkts.free(id);
                        // Messages whose every PSN is now in order are received.
                        while let Some(s) = qp.segs.get((qp.rx_seg - qp.segs_popped) as usize) {
                            if s.end > qp.expected {
                                break;
                            }
                            let st = &mut self.msgs[s.msg as usize];
                            st.recv_left -= 1;
                            if st.recv_left == 0 {
                                st.recv = self.now.0;
                            }
                            qp.rx_seg += 1;
                        }
                    }
                    Rx::OutOfSequence => self.drop_pkt(id, DropReason::OutOfSequence),
                    Rx::Duplicate => self.drop_pkt(id, DropReason::Duplicate),
                }
                if pk.flags & F_ECN != 0 {
                    self.cc_marked_rx(qi);
                }
                let (k, psn, aux) = match self.ar_reply(reply) {
                    Reply::None => return,
                    Reply::Ack(e) => (Kind::Ack, e, 0),
                    Reply::Nak(e) => (Kind::Nak, e, 0),
                    Reply::Sack(e, s) => (Kind::Sack, e, s),
                };
                if k != Kind::Ack {
                    self.c.naks += 1;
                }
                let qp = &self.qps[qi as usize];
                let ack = Packet {
                    qp: qi,
                    psn,
                    aux,
                    dst: qp.src,
                    hash: qp.hash_rev,
                    payload: 0,
                    frame: self.p.ack_frame_bytes() as u16,
                    port: NIL,
                    kind: k,
                    tc: self.p.ack_tc,
                    flags: 0,
                };
                let h = qp.dst as usize;
                let aid = self.pkts.alloc(ack);
                self.nics[h].ctrl.push(aid, self.p.ack_frame_bytes() as u16);
                let port = self.topo.host_port(HostId(h as u32)).idx();
                self.kick(port);
            }
            Kind::Ack | Kind::Nak | Kind::Sack => {
                self.pkts.free(id);
                let qp = &mut self.qps[qi as usize];
                let advanced = match pk.kind {
                    Kind::Ack => qp.on_ack(pk.psn),
                    Kind::Nak => qp.on_nak(pk.psn),
                    _ => qp.on_sack(pk.psn, pk.aux),
                };
                if advanced {
                    qp.retries = 0;
                    qp.rto_deadline = self.now + self.rto;
                    loop {
                        let qp = &mut self.qps[qi as usize];
                        match qp.segs.front() {
                            Some(s) if s.end <= qp.una => {
                                let m = s.msg;
                                qp.segs.pop_front();
                                qp.segs_popped += 1;
                                self.complete(m);
                            }
                            _ => break,
                        }
                    }
                }
                self.activate(qi);
            }
            Kind::Cnp => {
                self.pkts.free(id);
                self.cc_notified(qi);
            }
        }
    }

    /// The local ACK timer of `qp` fires (lazily re-armed: one pending event per QP).
    fn timer(&mut self, qi: u32) {
        let now = self.now;
        let qp = &mut self.qps[qi as usize];
        qp.timer_pending = false;
        if !qp.outstanding() || qp.failed {
            return;
        }
        if now < qp.rto_deadline {
            qp.timer_pending = true;
            self.q.push(qp.rto_deadline.0, Ev::Timer { qp: qi });
            return;
        }
        qp.retries += 1;
        if qp.retries > self.p.retry_count {
            // IBA: retries exhausted, the QP enters the error state; its messages fail.
            qp.failed = true;
            self.c.qp_errors += 1;
            let failed: Vec<u32> = qp.segs.iter().map(|s| s.msg).collect();
            for m in failed {
                self.msgs[m as usize].failed = true;
            }
            return;
        }
        self.c.timeouts += 1;
        qp.on_timeout(self.p.transport);
        qp.rto_deadline = now + self.rto;
        qp.timer_pending = true;
        self.q.push(qp.rto_deadline.0, Ev::Timer { qp: qi });
        self.activate(qi);
    }

    /// Message `m` completed at the sender: release its dependants.
    fn complete(&mut self, m: u32) {
        let st = &mut self.msgs[m as usize];
        st.send_left -= 1;
        if st.send_left > 0 {
            return;
        }
        st.finish = self.now.0;
        self.remaining -= 1;
        let (a, b) = (
            self.children_start[m as usize] as usize,
            self.children_start[m as usize + 1] as usize,
        );
        for i in a..b {
            let c = self.children[i];
            let st = &mut self.msgs[c as usize];
            st.pending_deps -= 1;
            if st.pending_deps == 0 {
                let msg = &self.dag.messages[c as usize];
                let at = msg.start.max(self.now + msg.delay);
                self.q.push(at.0, Ev::Post { msg: c });
            }
        }
    }

    fn link_state(&mut self, link: u32, up: bool) {
        let ends = self.topo.links[link as usize].ends;
        for e in ends {
            let pi = e.idx();
            set_bit(&mut self.pflags[pi], P_LINK_UP, up);
            if !up {
                // Packets queued for a dead link are lost.
                for tc in 0..self.ntc {
                    while let Some((id, frame)) = self.tcq[pi * self.ntc + tc].pop() {
                        self.ports[pi].queued -= frame as u64;
                        let node = self.ports[pi].node as usize;
                        let in_port = self.pkts.get(id).port as usize;
                        self.fc_release(in_port, tc as u8, frame as u32, node);
                        self.drop_pkt(id, DropReason::LinkDown);
                    }
                }
            }
        }
        self.q
            .push((self.now + self.reroute_delay).0, Ev::Route { link, up });
        if up {
            for e in ends {
                self.kick(e.idx());
            }
        }
    }

    fn sample(&mut self) {
        let Some((iv, series, last_tx)) = self.series.as_mut() else {
            return;
        };
        for (i, s) in series.iter_mut().enumerate() {
            let port = &self.ports[i];
            let queued = if port.host != NIL {
                self.nics[port.host as usize].ctrl.bytes
            } else {
                port.queued
            };
            s.queue_bytes.push(queued);
            s.tx_bytes.push(port.tx_bytes - last_tx[i]);
            last_tx[i] = port.tx_bytes;
        }
        if self.remaining > 0 && !self.q.is_empty() {
            self.q.push((self.now + *iv).0, Ev::Sample);
        }
    }

    /// Payload bytes of data packets still in the system, counted from the queues and pending
    /// events (independently of the send/deliver/drop counters).
    fn payload_in_flight(&self) -> u64 {
        let mut total = 0;
        for f in &self.tcq {
            total += f
                .ids()
                .map(|id| self.pkts.get(id).payload as u64)
                .sum::<u64>();
        }
        for (_, ev) in self.q.iter() {
            if let Ev::Arrive { pkt } = ev {
                total += self.pkts.get(*pkt).payload as u64;
            }
        }
        total
    }

    /// The unloaded completion time of `bytes` from `src` to `dst` along the path its flow hash
    /// takes: the first packet's latency, the rest serialized at the path's bottleneck, the last
    /// packet's ACK back.
    fn ideal_fct(&self, qp: &Qp, bytes: u64) -> Time {
        let p = self.p;
        let fwd = self.path(qp.src, qp.dst, qp.hash_fwd);
        let rev = self.path(qp.dst, qp.src, qp.hash_rev);
        let mtu = p.mtu_bytes as u64;
        let n = bytes.div_ceil(mtu).max(1);
        let last_payload = (bytes - (n - 1) * mtu) as u32;
        let full = p.data_frame_bytes(p.mtu_bytes.min(bytes.max(1) as u32)) + self.wire_extra;
        let last = p.data_frame_bytes(last_payload) + self.wire_extra;
        let ack = p.ack_frame_bytes() + self.wire_extra;
        // From the head of the sender's NIC pipeline to the receiver's processing of the packet.
        let one_way = |path: &[usize], wire: u32| {
            let mut t = Time::ZERO;
            for &pi in path {
                let s = &self.ports[pi];
                t += if s.peer_cut_through {
                    Time::ZERO
                } else {
                    s.ser(wire)
                } + s.hop_delay;
            }
            t
        };
        let bottleneck = fwd
            .iter()
            .map(|&pi| &self.ports[pi])
            .max_by_key(|s| s.ser(full))
            .expect("a path has links");
        let host = &self.ports[fwd[0]];
        // The last packet's tail arrives when the sender has streamed the others, or when the
        // first one has crossed and the others have passed the bottleneck, whichever is later.
        let by_host = host.ser(full) * (n - 1) + one_way(&fwd, last);
        let by_bottleneck = if n > 1 {
            one_way(&fwd, full) + bottleneck.ser(full) * (n - 2) + bottleneck.ser(last)
        } else {
            Time::ZERO
        };
        let mut rx_last = by_host.max(by_bottleneck);
        // The ACK of the last packet may wait behind the previous ACK on the receiver's link
        // (ACKs go every `ack_every` packets: packet j, 1-based, arrives at one_way + (j-1) x
        // bottleneck serialization).
        let k = p.ack_every as u64;
        let prev_acked = (n - 1) / k * k;
        if prev_acked >= 1 {
            let prev = one_way(&fwd, full) + bottleneck.ser(full) * (prev_acked - 1);
            rx_last = rx_last.max(prev + self.ports[rev[0]].ser(ack));
        }
        // Data wait for the sender NIC's latency; the receiver NIC returns the ACK at once.
        p.nic_latency + rx_last + one_way(&rev, ack)
    }

    /// Egress ports along the route of a flow with `hash` from host `src` to `dst`.
    fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<usize> {
        let topo = self.topo;
        let mut out = vec![topo.host_port(HostId(src)).idx()];
        let mut node = topo.ports[topo.ports[out[0]].peer.idx()].node;
        while topo.nics[dst as usize] != node {
            let c = topo.routing.next_hops(node, HostId(dst));
            let k = route::choose(self.p.routing, c.len(), hash, dst, self.salt[node.idx()]);
            let pi: PortId = c[k];
            out.push(pi.idx());
            node = topo.ports[topo.ports[pi.idx()].peer.idx()].node;
        }
        out
    }

    fn finish(mut self, status: Status, wall_s: f64) -> RunResult {
        self.c.bytes_in_flight = self.payload_in_flight();
        let mut messages = Vec::with_capacity(self.msgs.len());
        let mut failed = 0;
        for (i, st) in self.msgs.iter().enumerate() {
            let m = &self.dag.messages[i];
            let ideal = if st.qp != NIL {
                self.ideal_fct(&self.qps[st.qp as usize], m.bytes).0
            } else {
                self.dag
                    .nvlink_rate
                    .map(|r| r.serialize(m.bytes).0)
                    .unwrap_or(0)
            };
            let opt = |t: u64| (t != NO_TIME).then_some(t);
            failed += st.failed as u64;
            messages.push(MessageResult {
                id: i as u32,
                qp: (st.qp != NIL).then_some(st.qp),
                src: m.src.0,
                dst: m.dst.0,
                bytes: m.bytes,
                start_ps: opt(st.post),
                recv_ps: opt(st.recv),
                finish_ps: opt(st.finish),
                fct_ps: (st.finish != NO_TIME).then(|| st.finish - st.post),
                ideal_fct_ps: ideal,
            });
        }
        let summary = Summary::of(&messages, failed, self.c.bytes_delivered);
        let sim_s = wall_s.max(1e-9);
        RunResult {
            sim: SimInfo {
                engine: "packet",
                status,
                partial: matches!(status, Status::StoppedAtUntil | Status::Interrupted),
                seed: self.p.seed,
                end_ps: self.now.0,
                events: self.events,
                wall_s,
                events_per_s: self.events as f64 / sim_s,
                packets_per_s: self.data_sent as f64 / sim_s,
                peak_packets: self.pkts.capacity_used() as u64,
            },
            counters: self.c.clone(),
            flow_control: self.fc.result(self.topo, self.now.0),
            summary,
            messages,
            series: self.series.take().map(|(iv, ports, _)| Series {
                interval_ps: iv.0,
                ports,
            }),
        }
    }
}

fn set_bit(flags: &mut u8, bit: u8, on: bool) {
    if on {
        *flags |= bit;
    } else {
        *flags &= !bit;
    }
}

/// Rounds to 6 decimals so floats print the same everywhere.

/// A probability as a threshold on a uniform u64 draw.
fn prob_threshold(p: f64) -> u64 {
    if p <= 0.0 {
        0
    } else {
        (p * 18_446_744_073_709_551_616.0).min(u64::MAX as f64) as u64
    }
}

/// The egress ports of `link` that send in direction `dir`.
fn dir_ports(topo: &Topology, link: crate::topology::LinkId, dir: Dir) -> Vec<usize> {
    let [lower, upper] = topo.links[link.idx()].ends;
    match dir {
        Dir::Up => vec![lower.idx()],
        Dir::Down => vec![upper.idx()],
        Dir::Both => vec![lower.idx(), upper.idx()],
    }
}
