//! The fluid event loop over a message DAG: flows drain at their max-min rates, which stay
//! constant between events, so every completion time is exact.
//!
//! A message is posted at `max(start, last dependency's finish) + delay` (its `start` when it
//! has no dependencies), as in the packet engine. A `Net` message then starts after the
//! sender's NIC pipeline latency as one flow per subflow (see `paths`), carrying its wire
//! bytes (payload plus per-packet headers); with several QPs per connection, each QP carries
//! its part of the message (`sim::entropy`, NCCL's split). A QP sends its messages in order (an RC send
//! queue, IBA Vol. 1 9.5): a message posted while an earlier one of its QP still has bytes to
//! send waits until that one has drained, as in the packet engine. When its last byte has drained, the receiver holds
//! it one path latency later (`recv_ps`) and the sender's completion, which releases the
//! dependants, comes one ACK latency after that (`finish_ps`); messages drained together on
//! one NIC end a frame apart in its per-QP round-robin order (`nic_rr`), before the fluid's
//! end. `NvLink` messages take a fixed-rate intra-server pipe: `bytes` at the DAG's NVLink
//! rate, as the packet engine does.
//!
//! Remaining work is kept exactly in bit-picoseconds per second (`bits x 10^12`), so with an
//! integer rate r (bit/s) a flow's progress over dt ps is `r x dt` and its drain time
//! `ceil(work / r)` ps: integer, deterministic, rounded up to the picosecond.
//! All events at the same picosecond form one batch; the rates are re-solved incrementally once
//! a pending start or finish falls due (`FlowParams::batch_tol`: at once when it is 0), so
//! near-simultaneous changes (a ring step's flows finishing a few ns apart) share one solve.

use std::collections::BTreeMap;
use std::time::Instant;

use super::credits;
use super::dcqcn_incast;
use super::dcqcn_victim;
use super::hol::{FlowNow, Hol, Progress};
use super::loss::LossModel;
use super::maxmin::{AHEAD, MaxMin, NO_CAP, Routes, SolveStats};
use super::nic_rr::NicRounds;
use super::nic_send::{self, NicSend};
use super::paths::{self, PathModel, RouteInfo, RouteInfos};
use super::rate_model::RateModel;
use super::report;
use crate::error::FlowError;
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::prefetch::prefetch;
use fabricsim_core::release::Release;
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_core::topology::Topology;
use fabricsim_core::units::Time;
use fabricsim_mech::{FlowControl, RunResult, SimParams, Status, entropy, route};

/// What the flow engine is told beyond the packet engine's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowParams {
    pub paths: PathModel,
    pub rates: RateModel,
    /// Random packet loss and its recovery (`None`: no loss).
    pub loss: Option<LossModel>,
    /// Flow rates the repeated-component cache may hold (0 disables it).
    pub cache_entries: usize,
    /// Batching tolerance (0, the default everywhere: exact). A flow's start or finish
    /// reaches the other rates at most `batch_tol` x its span later, its span being a starting
    /// flow's drain time alone on its route or a finishing flow's age; changes falling due by
    /// then share one re-solve. Meanwhile the other flows keep their rates (the allocation
    /// stays feasible) and a new flow waits at rate 0. The shift reaches other flows through
    /// the shared links and the DAG, so the error is measured, not bounded: along a chain of
    /// dependent transfers it adds up to about `batch_tol` of the chain (`tests/flow_batch.rs`).
    pub batch_tol: f64,
    /// The most port-service work of a run (`SolveStats::port_work`) before the lossless
    /// models end ([`LOSSLESS_MODELS_MAX_PORT_WORK`]).
    pub lossless_max_port_work: u64,
    /// The most flows active at once before the lossless models end
    /// ([`LOSSLESS_MODELS_MAX_ACTIVE`]).
    pub lossless_max_active: u64,
}

/// A batching tolerance whose error stays within 0.1% of the exact solve on the 256-GPU ring
/// all-reduce and all-to-all of `tests/flow_batch.rs` (10^-4 of a span: 0.1 us of a 1 ms
/// flow). The exact solve meets the scale targets by itself (`examples/flow_bench.rs`), so
/// no command sets it by default.
pub const BATCH_TOL: f64 = 1e-4;

impl Default for FlowParams {
    fn default() -> Self {
        FlowParams {
            paths: PathModel::Hash,
            rates: RateModel::default(),
            loss: None,
            cache_entries: 1 << 22,
            batch_tol: 0.0,
            lossless_max_port_work: LOSSLESS_MODELS_MAX_PORT_WORK,
            lossless_max_active: LOSSLESS_MODELS_MAX_ACTIVE,
        }
    }
}

/// The engine's own counters (beside the results schema).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    pub solve: SolveStats,
    pub flows: u64,
    pub routes: u64,
    /// Most flows active at once.
    pub peak_active: u64,
    /// Distinct event times (one incremental solve each, at most).
    pub batches: u64,
    /// The longest a message drained beyond its drain alone on its route (ps): the queueing
    /// delay a packet network would add (`loss::LossModel::rto_warning`).
    pub max_wait_ps: u64,
    /// Caps the NICs' send stage set or lifted (`nic_send`; 0: it changed no rate).
    pub nic_caps: u64,
    /// When the lossless fabrics' models ended, more than [`LOSSLESS_MODELS_MAX_ACTIVE`] flows
    /// being active or their work over `FlowParams::lossless_max_port_work` (ps; `None`: they
    /// did not, or were never on).
    pub lossless_models_end_ps: Option<u64>,
}

/// Most flows active at once for which the lossless fabrics' models stay on: the egresses to
/// NICs served per input port (`maxmin`) and the NICs' send stage (`nic_send`). A change that
/// reaches a link served per port re-solves whole components, a fixed point of several fills
/// (`maxmin`), and a NIC's update costs its flows, so a run costs about (flows active at once)
/// x solves: the 16 KB all-to-all among 128 GPUs (16,256 flows at once) takes 0.03 s in 2
/// solves; among 256 GPUs (65,280) its fills took ~30 ms each, ~28 a solve, and 34 solves had
/// run after 30 s (`flow_calibrate -- ports 256` without this limit, release, loaded machine).
/// The first time more flows are active (or `FlowParams::lossless_max_port_work` is spent)
/// both models end for the rest of the run (every link
/// then shared per flow, `MaxMin::end_port_service`, `NicSend::lift`); runs of many flows but
/// few at once keep them (the 131,072-GPU step of `examples/flow_bench.rs`: 1.5 M flows,
/// at most 8,192 at once).
pub const LOSSLESS_MODELS_MAX_ACTIVE: u64 = 20_000;

/// The most port-service work of a run (flows re-solved times fills in solves that reach a
/// link shared per port, `SolveStats::port_work`) before the lossless models end as above: a
/// run of at most 20,000 flows at once can still take many whole-component solves. Measured
/// (release, loaded machine): the ib-ndr stress run of the default `compare --engine flow`
/// (19,056 flows) spends 1.37 x 10^8 in 19,168 solves, about 9 s (0.065 us a flow and fill);
/// fills of 65,263 flows took ~30 ms (0.5 us; `flow_calibrate -- ports 256` without the
/// limits). 2^28 keeps that compare's output and bounds the models' solves at about 17 s at
/// the first rate (estimate); with 2^25 that run's models ended midway (incast p50 182.6 ->
/// 184.8 us, 6.6 s user for the whole compare against 15.7).
pub const LOSSLESS_MODELS_MAX_PORT_WORK: u64 = 1 << 28;

/// Event kinds.
const DRAINED: u8 = 0;
const DONE: u8 = 1;
const START: u8 = 2;
const NIC_SEND: u8 = 3;
/// A step of a synchronized incast flow's cap (`dcqcn_incast::Onsets`; id: the flow, version:
/// the step).
const ONSET: u8 = 4;
const NONE: u64 = u64::MAX;
/// Batches between polls of the stop request (`fabricsim_core::stop`).
const STOP_CHECK_BATCHES: u64 = 1 << 12;
const NONE32: u32 = u32::MAX;
const PS_PER_S: u128 = 1_000_000_000_000;

/// Pending events by time: (kind, id, version).
type Events = BTreeMap<u64, Vec<(u8, u32, u32)>>;

/// Per-message state (40 bytes; an event reads it with its QP).
#[derive(Clone, Copy)]
pub(super) struct MsgState {
    pub post: u64,
    pub recv: u64,
    pub finish: u64,
    /// When its bytes started to drain (its QP free): the loss model's tail and the batching
    /// window start there.
    sent: u64,
    subflows_left: u32,
    /// Its QP (`route::number_qps`; `NONE32` for NVLink).
    pub qp: u32,
}

/// Per-QP state a message's start and completion read together (24 bytes).
#[derive(Clone, Copy)]
pub(super) struct QpState {
    /// When its latest message was received (a QP delivers in order).
    recv: u64,
    /// The ACK path's latency (ps).
    pub ack: u32,
    /// The first and last of the messages waiting behind the draining one (`NONE32`).
    head: u32,
    tail: u32,
    /// Whether a message is draining.
    busy: bool,
}

// What a message, a QP and a flow cost (16.7 M of each in a 4,096-GPU all-to-all).
const _: () = assert!(size_of::<MsgState>() == 40);
const _: () = assert!(size_of::<QpState>() == 24);
const _: () = assert!(size_of::<FlowRun>() == 32);

/// Per-flow state an event reads together (32 bytes, half a cache line): its remaining work as
/// of `last`, the version of its pending drain event, its message.
#[derive(Clone, Copy)]
struct FlowRun {
    work: u128,
    last: u64,
    ver: u32,
    msg: u32,
}

impl FlowRun {
    /// The work left at `now` moving at `rate` since `last`.
    fn left_at(&self, rate: u64, now: u64) -> u128 {
        self.work
            .saturating_sub(rate as u128 * now.saturating_sub(self.last) as u128)
    }
}

struct Loop<'a> {
    topo: &'a Topology,
    p: &'a SimParams,
    fp: &'a FlowParams,
    dag: &'a MessageDag,
    router: paths::Router,
    solver: MaxMin,
    /// Per route: its cap, line rate, latency and links (`paths::RouteInfo`).
    routes: RouteInfos,
    qps: Vec<QpState>,
    /// Per QP: its flow hash (adaptive routing only).
    qp_hash: Vec<u32>,
    /// Per QP (with a loss model only): a message whose lost tail waits for the timer or for
    /// the next message on the QP to reveal it (`NONE32` when none), and its path's one-way
    /// latency.
    qp_stall: Vec<(u32, u32)>,
    /// Per message: the next one waiting on its QP (`QpState::head`).
    msg_next: Vec<u32>,
    /// First flow of each Net message (its subflows follow).
    msg_flow: Vec<u32>,
    /// The flows of synchronized DCQCN incasts and their victims: caps and queueing delays
    /// (`dcqcn_incast`, `dcqcn_victim`; sorted by flow).
    flow_cap: Vec<dcqcn_incast::GroupFlow>,
    /// When the caps of synchronized incasts' flows take hold.
    onsets: dcqcn_incast::Onsets,
    /// Head-of-line blocking of victims behind an incast (lossless fabrics only, `hol`).
    hol: Option<Hol>,
    /// The sender NICs' per-QP round robin at message end (`nic_rr`).
    rounds: NicRounds,
    /// The sender NICs' send stage: round-robin injection and back-pressure (`nic_send`).
    nic_send: Option<NicSend>,
    msgs: Vec<MsgState>,
    /// Per host: when its GPU's NVLink egress is next free; as in the packet engine, one GPU's
    /// transfers share its one-way NVLink rate one after another.
    nv_free: Vec<u64>,
    release: Release,
    flows: Vec<FlowRun>,
    /// Pending events by time: (kind, id, version). Flows sharing a bottleneck drain at the
    /// same picosecond, so there are far fewer distinct times than events, and a time's
    /// events sit together.
    events: Events,
    /// Messages without dependencies, by (time they start moving bytes, id).
    initial: Vec<u32>,
    next_initial: usize,
    now: u64,
    /// The latest completion recorded without an event.
    last_finish: u64,
    /// When the pending starts and finishes are due in the rates (`NONE`: none pending).
    resolve_at: u64,
    active: u64,
    stats: FlowStats,
    scratch: Vec<u32>,
}

/// Runs `dag` on `topo` with the packet engine's `p` and the flow engine's `fp`.
pub fn run(
    topo: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    fp: &FlowParams,
) -> Result<(RunResult, FlowStats), FlowError> {
    let wall = Instant::now();
    let mut lp = Loop::new(topo, p, dag, fp)?;
    let interrupted = lp.run();
    // The rest of the loop's state goes before the per-message records are built.
    let Loop {
        msgs,
        routes,
        qps,
        now,
        last_finish,
        stats,
        ..
    } = { lp };
    let events = stats.batches;
    let mut result = report::results(
        p,
        dag,
        &report::Timeline {
            msgs: &msgs,
            routes: &routes,
            qps: &qps,
            subflows: fp.paths.subflows(),
            end_ps: now.max(last_finish),
            events,
        },
        wall,
    );
    if interrupted {
        result.sim.status = Status::Interrupted;
        result.sim.partial = true;
    }
    Ok((result, stats))
}

impl<'a> Loop<'a> {
    fn new(
        topo: &'a Topology,
        p: &'a SimParams,
        dag: &'a MessageDag,
        fp: &'a FlowParams,
    ) -> Result<Loop<'a>, FlowError> {
        p.validate()?;
        fp.rates.validate()?;
        dag.check_hosts(topo.num_hosts() as u32)
            .map_err(FlowError::Traffic)?;
        let k = fp.paths.subflows();
        let qpc = p.cc.qps_per_connection.max(1) as u32;
        let router = paths::Router::new(topo, p.routing);
        let (msg_qp, ends) = route::number_qps(&dag.messages, qpc as u16);
        let nq = ends.len();
        let mut routes = Routes::new();
        let adaptive = matches!(fp.paths, PathModel::Adaptive { .. });
        let mut infos = RouteInfos::with_capacity(if adaptive { 0 } else { nq * k as usize });
        let mut qp_ack = Vec::with_capacity(nq);
        let mut qp_hash = Vec::with_capacity(if adaptive { nq } else { 0 });
        let caps = credits::limit(topo, p, paths::capacities(topo));
        let mut links = Vec::new();
        // With the same delay on every link of a tier, an ACK's path (same tiers, reverse
        // order) has its data path's latency: no reverse walk needed.
        let symmetric = paths::delays_uniform_per_tier(topo);
        for (q, &(s, d)) in ends.iter().enumerate() {
            let (fwd, rev) = paths::qp_hashes(p, q as u32, s, d);
            links.clear();
            let (from, to, hash) = if symmetric { (s, d, fwd) } else { (d, s, rev) };
            let h = PathModel::Hash;
            paths::subflow_links(topo, &router, h, from, to, hash, 0, |_| 0, &mut links);
            qp_ack.push(paths::one_way_ps(topo, p, &links) as u32);
            if adaptive {
                qp_hash.push(fwd);
                continue; // placed when each subflow starts
            }
            for j in 0..k {
                if !(symmetric && fp.paths == PathModel::Hash) {
                    links.clear();
                    paths::subflow_links(topo, &router, fp.paths, s, d, fwd, j, |_| 0, &mut links);
                }
                routes.push(&links);
                let slowest = links.iter().map(|&l| caps[l as usize]).min().unwrap_or(0);
                infos.push(route_entry(topo, p, fp, &links, slowest));
            }
        }
        let mut msg_flow = vec![u32::MAX; dag.messages.len()];
        let mut nflows = 0u32;
        for (i, m) in dag.messages.iter().enumerate() {
            if m.path == Path::Net {
                msg_flow[i] = nflows;
                nflows += qpc * k;
            }
        }
        let loop_ps = |m: usize| 2 * qp_ack[msg_qp[m] as usize] as u64;
        let (mut flow_cap, onsets) =
            dcqcn_incast::synchronized_caps(topo, p, dag, &msg_flow, k, loop_ps);
        // Flows over queues an incast's burst fills (`dcqcn_victim`; static routes only).
        if !adaptive {
            let route = |m: usize, part: u32, j: u32| routes.get((msg_qp[m] + part) * k + j);
            let cap = |l: u32| caps[l as usize];
            let victims = dcqcn_victim::victim_caps(
                topo, p, dag, &msg_flow, k, route, cap, loop_ps, &flow_cap,
            );
            flow_cap.extend(victims);
            flow_cap.sort_unstable_by_key(|c| c.flow);
        }
        let qps: Vec<QpState> = qp_ack
            .into_iter()
            .map(|ack| QpState {
                recv: 0,
                ack,
                head: NONE32,
                tail: NONE32,
                busy: false,
            })
            .collect();
        let n = dag.messages.len();
        let release = Release::new(dag).map_err(FlowError::Traffic)?;
        let msgs: Vec<MsgState> = msg_qp
            .into_iter()
            .map(|qp| MsgState {
                post: NONE,
                recv: NONE,
                finish: NONE,
                sent: NONE,
                subflows_left: 0,
                qp,
            })
            .collect();
        // Messages without dependencies by the time each starts moving bytes (a Net message
        // after the NIC's latency), keyed once: a comparison sort reading the DAG per
        // comparison was seconds on the 16.7 M messages of a 4,096-GPU all-to-all.
        let start = |i: usize| dag.messages[i].start.ps();
        let mut keyed: Vec<(u64, u32)> = (0..n)
            .filter(|&i| dag.messages[i].deps_len == 0)
            .map(|i| {
                (
                    bytes_start(dag, p.nic_latency, i as u32, start(i)),
                    i as u32,
                )
            })
            .collect();
        keyed.sort_unstable();
        let mut initial: Vec<u32> = keyed.into_iter().map(|k| k.1).collect();
        initial.shrink_to_fit();
        let nf = nflows as usize;
        let mut solver = MaxMin::new(caps, routes, nf);
        // Lossless back-pressure (credits, PFC) makes a congested egress to a NIC serve its
        // input ports in turn (`maxmin`'s port service; `flow_calibrate -- incast`); a lossy
        // egress drops instead and is shared per flow. Inner switch egresses stay per flow
        // (`flow::rate_model`: measured there, per port moved the all-to-all off).
        if p.flow_control != FlowControl::None {
            solver = solver.with_port_service(|l| paths::into_nic(topo, l));
        }
        if fp.cache_entries > 0 {
            solver = solver.with_cache(fp.cache_entries);
        }
        Ok(Loop {
            nv_free: vec![0; topo.num_hosts()],
            topo,
            p,
            fp,
            dag,
            router,
            solver,
            routes: infos,
            qps,
            qp_hash,
            qp_stall: vec![(NONE32, 0); if fp.loss.is_some() { nq } else { 0 }],
            msg_next: vec![NONE32; n],
            msg_flow,
            flow_cap,
            onsets,
            hol: Hol::new(topo, p, nf),
            rounds: NicRounds::new(
                topo.num_hosts(),
                n,
                paths::wire_bytes(p, p.mtu_bytes as u64),
            ),
            nic_send: NicSend::new(p, topo.num_hosts(), nflows),
            msgs,
            release,
            flows: vec![
                FlowRun {
                    work: 0,
                    last: 0,
                    ver: 0,
                    msg: u32::MAX,
                };
                nf
            ],
            events: BTreeMap::new(),
            initial,
            next_initial: 0,
            now: 0,
            last_finish: 0,
            resolve_at: NONE,
            active: 0,
            stats: FlowStats {
                flows: nflows as u64,
                ..FlowStats::default()
            },
            scratch: Vec::new(),
        })
    }

    /// The time of the next event, initial posts included.
    fn next_time(&self) -> Option<u64> {
        let heap = self.events.first_key_value().map(|e| *e.0);
        let heap = match (heap, self.resolve_at) {
            (h, NONE) => h,
            (Some(h), r) => Some(h.min(r)),
            (None, r) => Some(r),
        };
        let init = self
            .initial
            .get(self.next_initial)
            .map(|&m| self.start_time(m, self.dag.messages[m as usize].start.ps()));
        match (heap, init) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When a message posted at `post` starts moving bytes.
    fn start_time(&self, m: u32, post: u64) -> u64 {
        bytes_start(self.dag, self.p.nic_latency, m, post)
    }

    /// Runs the batches in time order; true when a stop request (`fabricsim_core::stop`) ended it early.
    fn run(&mut self) -> bool {
        let mut interrupted = false;
        while let Some(t) = self.next_time() {
            if self.stats.batches % STOP_CHECK_BATCHES == 0 && fabricsim_core::stop::requested() {
                interrupted = true;
                break;
            }
            self.now = t;
            self.stats.batches += 1;
            // Events first (a release at a zero delay joins this batch), then initial posts.
            while let Some(entry) = self.events.first_entry() {
                if *entry.key() != t {
                    break;
                }
                let batch = entry.remove();
                for (i, &(kind, id, ver)) in batch.iter().enumerate() {
                    self.prefetch_events(&batch, i);
                    match kind {
                        DRAINED => self.drained(id, ver),
                        DONE => self.done(id),
                        NIC_SEND => self.nic_due(id, ver),
                        ONSET => self.onset(id, ver),
                        _ => self.start(id),
                    }
                }
            }
            while self.initial_due(t) {
                let m = self.initial[self.next_initial];
                self.next_initial += 1;
                self.msgs[m as usize].post = self.dag.messages[m as usize].start.ps();
                self.start(m);
            }
            if self.resolve_at <= t {
                self.resolve_at = NONE;
                self.solve(t);
            }
        }
        self.stats.solve = self.solver.stats();
        if let Some(ns) = self.nic_send.as_ref() {
            self.stats.nic_caps = ns.caps_set();
        }
        self.stats.routes = self.solver.routes().len() as u64;
        interrupted
    }

    /// Re-solves the rates at `t`. The NICs' send stage caps flows by the rates and the rates
    /// follow the caps (`nic_send`): a few rounds settle them, the last one a solve.
    fn solve(&mut self, t: u64) {
        let costly = self.active > self.fp.lossless_max_active
            || self.solver.stats().port_work > self.fp.lossless_max_port_work;
        if costly && self.lossless_models_on() {
            self.end_lossless_models(t);
        }
        for round in 1..=nic_send::ROUNDS {
            let (flows, events, hol) = (&mut self.flows, &mut self.events, &mut self.hol);
            let ns = &mut self.nic_send;
            self.solver.resolve_each(|f, old, rate| {
                let before = progress(&flows[f as usize], old);
                reschedule(flows, events, t, f, old, rate);
                if let Some(h) = hol {
                    h.rerate(f, before, progress(&flows[f as usize], rate));
                }
                if let Some(n) = ns {
                    n.rerated(f);
                }
            });
            let Some(ns) = self.nic_send.as_mut() else {
                return;
            };
            if round == nic_send::ROUNDS {
                return;
            }
            let (flows, events) = (&self.flows, &mut self.events);
            let delivery = |f: u32, rate: u64, now: u64| flows[f as usize].left_at(rate, now);
            let changed = ns.update(t, &mut self.solver, &delivery, |at, h, ver| {
                events.entry(at).or_default().push((NIC_SEND, h, ver))
            });
            if !changed {
                return;
            }
        }
    }

    fn lossless_models_on(&self) -> bool {
        self.solver.port_service() || self.nic_send.is_some()
    }

    /// Ends port service and the NICs' send stage (`LOSSLESS_MODELS_MAX_ACTIVE`) at `t`; the
    /// solve that follows re-solves every flow per flow.
    fn end_lossless_models(&mut self, t: u64) {
        self.solver.end_port_service();
        if let Some(ns) = self.nic_send.take() {
            ns.lift(&mut self.solver);
            self.stats.nic_caps = ns.caps_set();
        }
        self.stats.lossless_models_end_ps = Some(t);
    }

    /// NIC `h`'s send stage changes now (`nic_send`) if event version `ver` is current.
    fn nic_due(&mut self, h: u32, ver: u32) {
        if self.nic_send.as_mut().is_some_and(|n| n.due(h, ver)) {
            self.defer(0);
        }
    }

    /// Step `step` of flow `f`'s cap (`dcqcn_incast::Onsets`) falls due.
    fn onset(&mut self, f: u32, step: u32) {
        if !self.solver.is_active(f) {
            return;
        }
        let left = self.flows[f as usize].left_at(self.solver.rate(f), self.now);
        let (cap, next) = self.onsets.step(f, step, self.now, left);
        let cap = cap.min(self.routes.get(self.solver.route(f)).cap);
        if self.solver.set_cap(f, cap) {
            self.defer(0);
        }
        if let Some(ns) = self.nic_send.as_mut() {
            ns.set_base_cap(f, cap);
            self.defer(0);
        }
        if let Some(at) = next {
            self.push(at, ONSET, f, step + 1);
        }
    }

    /// Prefetches what the events of `batch` after the `i`-th read, in three steps as each
    /// step's addresses come from the one before (the flow, its message and route, their QP and
    /// links): a batch's flows are scattered over arrays of gigabytes, so each read misses the
    /// cache and the TLB, and several in flight hide most of that (hints only).
    fn prefetch_events(&self, batch: &[(u8, u32, u32)], i: usize) {
        let flow = |k: usize| batch.get(k).filter(|e| e.0 == DRAINED).map(|e| e.1);
        let msg = |f: u32| self.flows.get(f as usize).map_or(NONE32, |fl| fl.msg) as usize;
        if let Some(&(kind, id, _)) = batch.get(i + AHEAD) {
            if kind == DRAINED {
                prefetch(&self.flows[id as usize]);
                self.solver.prefetch_flow(id);
            } else if kind != NIC_SEND && kind != ONSET {
                prefetch(&self.msgs[id as usize]);
                prefetch(&self.dag.messages[id as usize]);
            }
        }
        if let Some(f) = flow(i + AHEAD / 2) {
            self.solver.prefetch_route(f);
            self.routes.prefetch(self.solver.route(f));
            if let Some(m) = self.msgs.get(msg(f)) {
                prefetch(m);
                prefetch(&self.dag.messages[msg(f)]);
            }
        }
        if let Some(f) = flow(i + AHEAD / 4) {
            self.solver.prefetch_links(f);
            let qp = self.msgs.get(msg(f)).map_or(NONE32, |m| m.qp);
            if let Some(q) = self.qps.get(qp as usize) {
                prefetch(q);
            }
        }
    }

    /// A start or finish of span `span_ps` is pending: it is due in the rates within
    /// `batch_tol` x `span_ps`.
    fn defer(&mut self, span_ps: u64) {
        let due = self.now + (span_ps as f64 * self.fp.batch_tol) as u64;
        self.resolve_at = self.resolve_at.min(due);
    }

    #[inline]
    fn push(&mut self, t: u64, kind: u8, id: u32, ver: u32) {
        self.events.entry(t).or_default().push((kind, id, ver));
    }

    fn initial_due(&self, t: u64) -> bool {
        self.initial
            .get(self.next_initial)
            .is_some_and(|&m| self.start_time(m, self.dag.messages[m as usize].start.ps()) == t)
    }

    fn start(&mut self, m: u32) {
        let msg = &self.dag.messages[m as usize];
        if msg.path == Path::NvLink {
            let rate = self.dag.nvlink_rate.expect("checked in `check`");
            let free = &mut self.nv_free[msg.src.idx()];
            *free = (*free).max(self.now) + rate.serialize(msg.bytes).ps();
            let end = *free;
            self.msgs[m as usize].recv = end;
            self.complete_at(m, end);
            return;
        }
        let qp = self.msgs[m as usize].qp as usize;
        let qs = &mut self.qps[qp];
        if qs.busy {
            match qs.tail {
                NONE32 => qs.head = m,
                t => self.msg_next[t as usize] = m,
            }
            qs.tail = m;
            return;
        }
        self.send(m);
    }

    /// Puts `m`'s bytes on its QP's subflows (the QP is free).
    fn send(&mut self, m: u32) {
        let msg = &self.dag.messages[m as usize];
        let k = self.fp.paths.subflows();
        let qpc = self.p.cc.qps_per_connection;
        let parts = entropy::parts(msg.bytes, qpc) as u32;
        let qp = self.msgs[m as usize].qp;
        let (s, d, total) = (msg.src.0, msg.dst.0, msg.bytes);
        self.qps[qp as usize].busy = true;
        self.msgs[m as usize].subflows_left = parts * k;
        self.msgs[m as usize].sent = self.now;
        self.rounds.started(s, m, parts, self.now);
        self.reveal(qp);
        // Part `i` of the message on the connection's QP `qp + i` (NCCL's split over QPs per
        // connection), each part as `k` subflows.
        for i in 0..parts {
            let q = qp + i;
            let wire = paths::wire_bytes(self.p, entropy::part_bytes(total, qpc, i as u16)).max(1);
            for j in 0..k {
                let f = self.msg_flow[m as usize] + i * k + j;
                let fi = f as usize;
                self.flows[fi].msg = m;
                let bytes = wire / k as u64 + ((j as u64) < wire % k as u64) as u64;
                let r = match self.fp.paths {
                    PathModel::Adaptive { .. } => self.place_adaptive(q, s, d, j),
                    _ => q * k + j,
                };
                if bytes == 0 {
                    self.subflow_done(m, r);
                    continue;
                }
                let work = bytes as u128 * 8 * PS_PER_S;
                self.flows[fi].work = work;
                self.flows[fi].last = self.now;
                let route = self.routes.get(r);
                // A synchronized incast's flow takes its cap in steps (`dcqcn_incast::Onsets`).
                let cap = match self.flow_cap.binary_search_by_key(&f, |c| c.flow) {
                    Ok(_) if let Some(at) = self.onsets.start(f, self.now, work) => {
                        self.push(at, ONSET, f, 0);
                        route.cap
                    }
                    Ok(i) => route.cap.min(self.flow_cap[i].cap_bps),
                    Err(_) => route.cap,
                };
                self.solver.add(f, r, cap);
                if let Some(ns) = self.nic_send.as_mut() {
                    ns.add(f, s, cap, work, self.now);
                }
                if self.hol.is_some() {
                    let now = self.hol_flow(f);
                    let h = self.hol.as_mut().expect("checked");
                    h.add(self.topo, f, self.solver.routes().get(r), now);
                }
                let alone = work / route.line.max(1) as u128;
                self.defer(alone.min(u64::MAX as u128) as u64);
                self.active += 1;
            }
        }
        self.stats.peak_active = self.stats.peak_active.max(self.active);
    }

    /// A message starts on `qp`: a lost tail of the one before it that still waits for the timer
    /// is revealed (`loss::Stall::revealable`) and resent one round trip later.
    fn reveal(&mut self, qp: u32) {
        let q = qp as usize;
        let Some(&(m, lat)) = self.qp_stall.get(q).filter(|s| s.0 != NONE32) else {
            return;
        };
        self.qp_stall[q] = (NONE32, 0);
        let ack = self.qps[q].ack as u64;
        let recv = self.now + lat as u64 + ack + lat as u64;
        let st = &mut self.msgs[m as usize];
        if recv >= st.recv {
            return;
        }
        let old = st.recv + ack;
        if let Some(batch) = self.events.get_mut(&old) {
            batch.retain(|&(kind, id, _)| !(kind == DONE && id == m));
            if batch.is_empty() {
                self.events.remove(&old);
            }
        }
        if self.qps[q].recv == st.recv {
            self.qps[q].recv = recv;
        }
        st.recv = recv;
        self.push(recv + ack, DONE, m, 0);
    }

    /// Places subflow `j` of QP `qp` on the least-loaded ports now; returns its new route.
    fn place_adaptive(&mut self, qp: u32, s: u32, d: u32, j: u32) -> u32 {
        let mut links = std::mem::take(&mut self.scratch);
        links.clear();
        let solver = &self.solver;
        paths::subflow_links(
            self.topo,
            &self.router,
            self.fp.paths,
            s,
            d,
            self.qp_hash[qp as usize],
            j,
            |l| solver.load(l),
            &mut links,
        );
        let slowest = links.iter().map(|&l| self.solver.capacity(l)).min();
        let r = self.solver.push_route(&links);
        let e = route_entry(self.topo, self.p, self.fp, &links, slowest.unwrap_or(0));
        self.routes.push(e);
        self.scratch = links;
        r
    }

    fn drained(&mut self, f: u32, ver: u32) {
        let fl = self.flows[f as usize];
        if ver != fl.ver || !self.solver.is_active(f) {
            return;
        }
        if self.hol.is_some() {
            let now = self.hol_flow(f);
            self.hol.as_mut().expect("checked").remove(f, now);
        }
        self.solver.remove(f);
        if let Some(ns) = self.nic_send.as_mut() {
            ns.remove(f);
        }
        self.active -= 1;
        let m = fl.msg;
        self.defer(self.now - self.msgs[m as usize].sent);
        self.subflow_done(m, self.solver.route(f));
    }

    /// A subflow of `m` on route `r` has put its last byte on the wire.
    fn subflow_done(&mut self, m: u32, r: u32) {
        let route = self.routes.get(r);
        let arrive = self.now + route.lat_ps as u64 + self.hol_wait_ps(r);
        let st = &mut self.msgs[m as usize];
        st.recv = if st.recv == NONE {
            arrive
        } else {
            st.recv.max(arrive)
        };
        st.subflows_left -= 1;
        if st.subflows_left == 0 {
            let qp = st.qp;
            let bytes = self.dag.messages[m as usize].bytes;
            let lanes = entropy::parts(bytes, self.p.cc.qps_per_connection) as u128
                * self.fp.paths.subflows() as u128;
            let wire = paths::wire_bytes(self.p, bytes) as u128 * 8 * PS_PER_S;
            let alone = wire / (route.line as u128 * lanes).max(1);
            let wait = (self.now - st.sent).saturating_sub(alone as u64);
            self.stats.max_wait_ps = self.stats.max_wait_ps.max(wait);
            // Its last frame leaves at its place in the NIC's round robin (`nic_rr`), at most
            // its queueing earlier.
            let src = self.dag.messages[m as usize].src.0;
            let nic = self.solver.routes().get(r).first();
            let line = nic.map_or(route.line, |&l| self.solver.capacity(l));
            let parts = lanes as u32 / self.fp.paths.subflows();
            let early = self.rounds.ended(src, m, parts, self.now, line);
            st.recv -= early.min(wait);
            // A loss only the ACK timer reveals (`loss`): the stalling packet left a fraction
            // `at` into the drain; the timer runs one RTO from its ACK, then the resend crosses.
            // Go-back-N losses a NAK reveals resend what followed them (`LossModel::nak_cost_ps`),
            // which delays the rest of the message.
            let mut stalled = false;
            if let Some(l) = &self.fp.loss {
                let packets = self.dag.messages[m as usize]
                    .bytes
                    .div_ceil(self.p.mtu_bytes as u64)
                    .max(1);
                let queued = self.qps[qp as usize].head != NONE32;
                let mut rng = tail_loss_rng(self.p.seed, m);
                let hops = route.hops as usize;
                let timeout = l.draw_timeout(hops, packets, queued, &mut rng);
                let lat = route.lat_ps as u64;
                let wait = match self
                    .flow_cap
                    .binary_search_by_key(&self.msg_flow[m as usize], |c| c.flow)
                {
                    Ok(i) => self.flow_cap[i].resend,
                    Err(_) => dcqcn_incast::ResendWait::PerNak(0),
                };
                let rtt = lat + self.qps[qp as usize].ack as u64;
                let slot = (self.now - st.sent) / packets;
                let naks = l.draw_naks(hops, packets, &mut rng) as u64;
                let resends = l.nak_delay_ps(naks, rtt, wait, slot);
                st.recv += resends;
                if let Some(s) = timeout {
                    let left = st.sent + (s.at * (self.now - st.sent) as f64) as u64 + resends;
                    let rto = s.timeouts as u64 * l.rto_ps;
                    let resent = left + lat + self.qps[qp as usize].ack as u64 + rto + lat;
                    st.recv = st.recv.max(resent);
                    if s.revealable {
                        stalled = true;
                        self.qp_stall[qp as usize] = (m, lat as u32);
                    }
                }
            }
            // A QP delivers in order (RC): not before the message ahead of it.
            let q = qp as usize;
            let qs = &mut self.qps[q];
            st.recv = st.recv.max(qs.recv);
            qs.recv = st.recv;
            let finish = st.recv + qs.ack as u64;
            if stalled {
                self.push(finish, DONE, m, 0); // may move earlier (`reveal`)
            } else {
                self.complete_at(m, finish);
            }
            // The QP's next message starts now.
            let qs = &mut self.qps[q];
            qs.busy = false;
            let next = qs.head;
            if next != NONE32 {
                qs.head = self.msg_next[next as usize];
                if qs.head == NONE32 {
                    qs.tail = NONE32;
                }
                self.send(next);
            }
        }
    }

    /// The wait behind held queues of an incast (`hol`) of a last byte leaving now on route `r`.
    fn hol_wait_ps(&self, r: u32) -> u64 {
        self.hol.as_ref().map_or(0, |h| {
            h.wait_ps(&self.solver, self.solver.routes().get(r), self.now)
        })
    }

    /// Flow `f` as `hol` sees it.
    fn hol_flow(&self, f: u32) -> FlowNow {
        let fl = &self.flows[f as usize];
        let k = self.fp.paths.subflows() as u64;
        FlowNow {
            progress: progress(fl, self.solver.rate(f)),
            offered_bps: self.routes.get(self.solver.route(f)).line / k,
            sent_ps: self.msgs[fl.msg as usize].sent,
        }
    }

    /// `m` completes at `t`: an event when it has dependants to release, else just recorded. A
    /// completion the round robin moved before now (`nic_rr`) is recorded and releases its
    /// dependants now, posted at `t` plus their delay.
    fn complete_at(&mut self, m: u32, t: u64) {
        if self.release.has_dependants(m) {
            if t < self.now {
                self.msgs[m as usize].finish = t;
            }
            self.push(t.max(self.now), DONE, m, 0);
        } else {
            self.msgs[m as usize].finish = t;
            self.last_finish = self.last_finish.max(t);
        }
    }

    /// The sender's completion of `m`: release its dependants.
    fn done(&mut self, m: u32) {
        let st = &mut self.msgs[m as usize];
        if st.finish == NONE {
            st.finish = self.now;
        }
        let finish = st.finish;
        // NVLink messages have no QP (`NONE32`).
        let q = self.msgs[m as usize].qp as usize;
        if self.qp_stall.get(q).is_some_and(|s| s.0 == m) {
            self.qp_stall[q] = (NONE32, 0); // the timer fired first
        }
        let (msgs, events, dag, nic, now) = (
            &mut self.msgs,
            &mut self.events,
            self.dag,
            self.p.nic_latency,
            self.now,
        );
        self.release.complete(dag, m, Time(finish), |c, post| {
            msgs[c as usize].post = post.ps();
            let at = bytes_start(dag, nic, c, post.ps()).max(now);
            events.entry(at).or_default().push((START, c, 0));
        });
    }
}

/// Flow `f`'s rate changed from `old` to `rate` at `now`: account its progress and schedule its
/// drain.
fn reschedule(flows: &mut [FlowRun], events: &mut Events, now: u64, f: u32, old: u64, rate: u64) {
    let fl = &mut flows[f as usize];
    fl.work = fl.left_at(old, now);
    fl.last = now;
    fl.ver = fl.ver.wrapping_add(1);
    debug_assert!(rate > 0, "max-min gives every flow a positive rate");
    let dt = fl.work.div_ceil(rate as u128) as u64;
    events
        .entry(now + dt)
        .or_default()
        .push((DRAINED, f, fl.ver));
}

/// Flow `fl`'s progress at rate `rate` (`hol`).
fn progress(fl: &FlowRun, rate: u64) -> Progress {
    Progress {
        work: fl.work,
        at: fl.last,
        rate,
    }
}

/// When message `m`, posted at `post`, starts moving bytes: a `Net` one after the sender NIC's
/// latency `nic`, an `NvLink` one at once.
fn bytes_start(dag: &MessageDag, nic: Time, m: u32, post: u64) -> u64 {
    match dag.messages[m as usize].path {
        Path::Net => post + nic.ps(),
        Path::NvLink => post,
    }
}

/// The per-message stream of the timeout draws, apart from every other stream of the run.
fn tail_loss_rng(seed: u64, m: u32) -> Rng {
    Rng::stream(seed, Stream::TailLoss, m as u64)
}

/// A route over `links` (slowest `slowest` bit/s): its solver cap, the rate a flow reaches
/// alone, its one-way latency and its number of links.
fn route_entry(
    topo: &Topology,
    p: &SimParams,
    fp: &FlowParams,
    links: &[u32],
    slowest: u64,
) -> RouteInfo {
    let lat = paths::one_way_ps(topo, p, links);
    let (factor, tail) = match &fp.loss {
        Some(l) => (l.goodput(links.len()), links.len() as f32),
        None => (1.0, 0.0),
    };
    let (cap, line) = limits(&fp.rates, slowest, factor);
    RouteInfo {
        cap,
        line,
        lat_ps: lat as u32,
        hops: tail,
    }
}

/// The cap the rate model sets with the route's own `factor` (`NO_CAP` when the slowest link
/// binds first) and the rate a flow reaches alone.
fn limits(rates: &RateModel, slowest: u64, factor: f64) -> (u64, u64) {
    let cap = rates.cap(slowest, factor);
    if cap < slowest {
        (cap, cap)
    } else {
        (NO_CAP, slowest)
    }
}
