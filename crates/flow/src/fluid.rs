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

use super::calibration::{NIC_SEND_ROUNDS, PREFETCH_AHEAD};
use super::classes::{self, Sharing};
use super::compose::Effects;
use super::effect::Ctx;
use super::event::{Event, Events};
use super::maxmin::{NO_CAP, Routes};
use super::params::FlowParams;
use super::paths::{self, PathModel, RouteInfo, RouteInfos};
use super::rate_model::RateModel;
use super::report;
use super::state::{FlowRun, MsgState, NONE, NONE32, PS_PER_S, QpState};
use super::stats::FlowStats;
use crate::error::FlowError;
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::prefetch::prefetch;
use fabricsim_core::release::Release;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::Time;
use fabricsim_mech::{FlowControl, RunResult, SimParams, Status, entropy, route};

/// Batches between polls of the stop request (`fabricsim_core::stop`).
const STOP_CHECK_BATCHES: u64 = 1 << 12;

/// The loop: the context the effects share, the effects, and what only the loop reads.
struct Loop<'a> {
    cx: Ctx<'a>,
    fp: &'a FlowParams,
    fx: Effects,
    router: paths::Router,
    /// Per QP: its flow hash (adaptive routing only).
    qp_hash: Vec<u32>,
    /// Per message: the next one waiting on its QP (`QpState::head`).
    msg_next: Vec<u32>,
    /// Per host: when its GPU's NVLink egress is next free; as in the packet engine, one GPU's
    /// transfers share its one-way NVLink rate one after another.
    nv_free: Vec<u64>,
    release: Release,
    /// Messages without dependencies, by (time they start moving bytes, id).
    initial: Vec<u32>,
    next_initial: usize,
    /// The latest completion recorded without an event.
    last_finish: u64,
    active: u64,
    /// Messages whose bytes have all been sent (`Progress::sent`).
    sent: u64,
    scratch: Vec<u32>,
}

/// Where a run is, for a progress display (`run_observed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    pub now_ps: u64,
    pub batches: u64,
    /// Messages whose bytes have all been sent (NVLink ones: posted), of `total`.
    pub sent: u64,
    pub total: u64,
}

/// Runs `dag` on `topo` with the packet engine's `p` and the flow engine's `fp`.
pub fn run(
    topo: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    fp: &FlowParams,
) -> Result<(RunResult, FlowStats), FlowError> {
    run_observed(topo, p, dag, fp, None)
}

/// [`run`], calling `observe` every few thousand batches (never per event); false from it
/// stops the run (its results are then partial).
pub fn run_observed(
    topo: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    fp: &FlowParams,
    observe: Option<&mut dyn FnMut(&Progress) -> bool>,
) -> Result<(RunResult, FlowStats), FlowError> {
    let wall = Instant::now();
    let mut lp = Loop::new(topo, p, dag, fp)?;
    let interrupted = lp.run(observe);
    // The rest of the loop's state goes before the per-message records are built.
    let Loop {
        cx, last_finish, ..
    } = { lp };
    let Ctx {
        msgs,
        routes,
        qps,
        now,
        stats,
        ..
    } = { cx };
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
            drew_random: fp.loss.is_some(),
        },
        wall,
    );
    if interrupted {
        result.sim.status = Status::Interrupted;
        result.sim.partial = true;
    }
    Ok((result, stats))
}

/// `Err` when the route `links` from host `s` to `d` crosses a failed link: `d` cannot be
/// reached from `s` with the run's failed links down.
fn unreachable_past(
    topo: &Topology,
    router: &paths::Router,
    links: &[u32],
    s: u32,
    d: u32,
) -> Result<(), FlowError> {
    match router.down_link(links) {
        None => Ok(()),
        Some(l) => Err(FlowError::Traffic(format!(
            "host {d} cannot be reached from host {s} with link {} down (failed links: every \
             route avoids them; this one has no other way{})",
            l / 2,
            if topo.links[(l / 2) as usize].tier == 1 {
                ": it is a NIC's own link"
            } else {
                ""
            }
        ))),
    }
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
        dag.check_hosts(topo.num_hosts() as u32)?;
        let k = fp.paths.subflows();
        let qpc = p.cc.qps_per_message().max(1) as u32;
        let router = paths::Router::with_failed(topo, p.routing, &fp.failed_links);
        let (msg_qp, ends) = route::connection_qps(&dag.messages, &p.cc);
        let nq = ends.len();
        let mut msg_flow = vec![u32::MAX; dag.messages.len()];
        let mut nflows = 0u32;
        for (i, m) in dag.messages.iter().enumerate() {
            if m.path == Path::Net {
                msg_flow[i] = nflows;
                nflows += qpc * k;
            }
        }
        let mut fx = Effects::new(topo, p, dag, fp, nflows, nq);
        let mut routes = Routes::new();
        let adaptive = matches!(fp.paths, PathModel::Adaptive { .. });
        let mut infos = RouteInfos::with_capacity(if adaptive { 0 } else { nq * k as usize });
        let mut qp_ack = Vec::with_capacity(nq);
        let mut qp_hash = Vec::with_capacity(if adaptive { nq } else { 0 });
        let mut caps = paths::capacities(topo);
        fx.link_caps(topo, p, &mut caps);
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
            unreachable_past(topo, &router, &links, from, to)?;
            qp_ack.push(paths::one_way_ps(topo, p, &links) as u32);
            if adaptive {
                if !symmetric && router.converged.is_some() {
                    links.clear();
                    paths::subflow_links(topo, &router, h, s, d, fwd, 0, |_| 0, &mut links);
                    unreachable_past(topo, &router, &links, s, d)?;
                }
                qp_hash.push(fwd);
                continue; // placed when each subflow starts
            }
            for j in 0..k {
                if !(symmetric && fp.paths == PathModel::Hash) {
                    links.clear();
                    paths::subflow_links(topo, &router, fp.paths, s, d, fwd, j, |_| 0, &mut links);
                    unreachable_past(topo, &router, &links, s, d)?;
                }
                routes.push(&links);
                let slowest = links.iter().map(|&l| caps[l as usize]).min().unwrap_or(0);
                let factor = fx.route_factor(links.len());
                infos.push(route_entry(topo, p, &fp.rates, factor, &links, slowest));
            }
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
        let release = Release::new(dag)?;
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
        let (class_of, rule) = flow_classes(p, dag, &msg_flow, nf, qpc * k)?;
        let mut solver = Sharing::new(caps, routes, nf, class_of, rule);
        // Lossless back-pressure (credits, PFC) makes a congested egress to a NIC serve its
        // input ports in turn (`maxmin`'s port service; `fabricsim-lab incast`); a lossy
        // egress drops instead and is shared per flow. Inner switch egresses stay per flow
        // (`flow::rate_model`: measured there, per port moved the all-to-all off).
        if p.flow_control != FlowControl::None {
            solver = solver.with_port_service(|l| paths::into_nic(topo, l));
        }
        if fp.cache_entries > 0 {
            solver = solver.with_cache(fp.cache_entries);
        }
        let mut cx = Ctx {
            topo,
            p,
            paths: fp.paths,
            batch_tol: fp.batch_tol,
            dag,
            solver,
            routes: infos,
            flows: vec![
                FlowRun {
                    work: 0,
                    last: 0,
                    ver: 0,
                    msg: u32::MAX,
                };
                nf
            ],
            msgs,
            qps,
            msg_flow,
            groups: Vec::new(),
            events: BTreeMap::new(),
            now: 0,
            resolve_at: NONE,
            stats: FlowStats {
                flows: nflows as u64,
                ..FlowStats::default()
            },
        };
        fx.setup(&mut cx);
        Ok(Loop {
            cx,
            fp,
            fx,
            nv_free: vec![0; topo.num_hosts()],
            router,
            qp_hash,
            msg_next: vec![NONE32; n],
            release,
            initial,
            next_initial: 0,
            last_finish: 0,
            active: 0,
            sent: 0,
            scratch: Vec::new(),
        })
    }

    /// The time of the next event, initial posts included.
    fn next_time(&self) -> Option<u64> {
        let cx = &self.cx;
        let heap = cx.events.first_key_value().map(|e| *e.0);
        let heap = match (heap, cx.resolve_at) {
            (h, NONE) => h,
            (Some(h), r) => Some(h.min(r)),
            (None, r) => Some(r),
        };
        let init = self
            .initial
            .get(self.next_initial)
            .map(|&m| self.start_time(m, cx.dag.messages[m as usize].start.ps()));
        match (heap, init) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When a message posted at `post` starts moving bytes.
    fn start_time(&self, m: u32, post: u64) -> u64 {
        bytes_start(self.cx.dag, self.cx.p.nic_latency, m, post)
    }

    /// Runs the batches in time order; true when a stop request (`fabricsim_core::stop`) ended it early.
    fn run(&mut self, mut observe: Option<&mut dyn FnMut(&Progress) -> bool>) -> bool {
        let mut interrupted = false;
        let total = self.cx.dag.messages.len() as u64;
        while let Some(t) = self.next_time() {
            let batches = self.cx.stats.batches;
            if batches % STOP_CHECK_BATCHES == 0 {
                let at = Progress {
                    now_ps: t,
                    batches,
                    sent: self.sent,
                    total,
                };
                let go = observe.as_mut().is_none_or(|o| o(&at));
                if !go || fabricsim_core::stop::requested() {
                    interrupted = true;
                    break;
                }
            }
            self.cx.now = t;
            self.cx.stats.batches += 1;
            // Events first (a release at a zero delay joins this batch), then initial posts.
            while let Some(entry) = self.cx.events.first_entry() {
                if *entry.key() != t {
                    break;
                }
                let batch = entry.remove();
                for (i, &ev) in batch.iter().enumerate() {
                    self.prefetch_events(&batch, i);
                    match ev {
                        Event::Drained { flow, ver } => self.drained(flow, ver),
                        Event::Done { msg } => self.done(msg),
                        Event::Start { msg } => self.start(msg),
                        Event::NicSend { .. } | Event::Onset { .. } => {
                            self.fx.event(&mut self.cx, ev)
                        }
                    }
                }
            }
            while self.initial_due(t) {
                let m = self.initial[self.next_initial];
                self.next_initial += 1;
                self.cx.msgs[m as usize].post = self.cx.dag.messages[m as usize].start.ps();
                self.start(m);
            }
            if self.cx.resolve_at <= t {
                self.cx.resolve_at = NONE;
                self.solve(t);
            }
        }
        self.cx.stats.solve = self.cx.solver.stats();
        self.fx.finish(&mut self.cx);
        self.cx.stats.routes = self.cx.solver.routes().len() as u64;
        interrupted
    }

    /// Re-solves the rates at `t`. The NICs' send stage caps flows by the rates and the rates
    /// follow the caps (`nic_send`): a few rounds settle them, the last one a solve.
    fn solve(&mut self, t: u64) {
        let fp = self.fp;
        let costly = self.active > fp.lossless_max_active
            || self.cx.solver.stats().port_work > fp.lossless_max_port_work;
        if costly && (self.cx.solver.port_service() || self.fx.lossless_models_on()) {
            self.end_lossless_models(t);
        }
        for round in 1..=NIC_SEND_ROUNDS {
            let (cx, fx) = (&mut self.cx, &mut self.fx);
            let (flows, events) = (&mut cx.flows, &mut cx.events);
            cx.solver.resolve_each(|f, old, rate| {
                let before = flows[f as usize].progress(old);
                reschedule(flows, events, t, f, old, rate);
                fx.rerate(f, before, flows[f as usize].progress(rate));
            });
            if round == NIC_SEND_ROUNDS || !self.fx.recap(&mut self.cx) {
                return;
            }
        }
    }

    /// Ends port service and the lossless effects (`calibration::LOSSLESS_MODELS_MAX_ACTIVE`)
    /// at `t`; the solve that follows re-solves every flow per flow.
    fn end_lossless_models(&mut self, t: u64) {
        self.cx.solver.end_port_service();
        self.fx.end_lossless_models(&mut self.cx);
        self.cx.stats.lossless_models_end_ps = Some(t);
    }

    /// Prefetches what the events of `batch` after the `i`-th read, in three steps as each
    /// step's addresses come from the one before (the flow, its message and route, their QP and
    /// links): a batch's flows are scattered over arrays of gigabytes, so each read misses the
    /// cache and the TLB, and several in flight hide most of that (hints only).
    fn prefetch_events(&self, batch: &[Event], i: usize) {
        let cx = &self.cx;
        let flow = |k: usize| match batch.get(k) {
            Some(&Event::Drained { flow, .. }) => Some(flow),
            _ => None,
        };
        let msg = |f: u32| cx.flows.get(f as usize).map_or(NONE32, |fl| fl.msg) as usize;
        match batch.get(i + PREFETCH_AHEAD) {
            Some(&Event::Drained { flow, .. }) => {
                prefetch(&cx.flows[flow as usize]);
                cx.solver.prefetch_flow(flow);
            }
            Some(&(Event::Done { msg } | Event::Start { msg })) => {
                prefetch(&cx.msgs[msg as usize]);
                prefetch(&cx.dag.messages[msg as usize]);
            }
            _ => {}
        }
        if let Some(f) = flow(i + PREFETCH_AHEAD / 2) {
            cx.solver.prefetch_route(f);
            cx.routes.prefetch(cx.solver.route(f));
            if let Some(m) = cx.msgs.get(msg(f)) {
                prefetch(m);
                prefetch(&cx.dag.messages[msg(f)]);
            }
        }
        if let Some(f) = flow(i + PREFETCH_AHEAD / 4) {
            cx.solver.prefetch_links(f);
            let qp = cx.msgs.get(msg(f)).map_or(NONE32, |m| m.qp);
            if let Some(q) = cx.qps.get(qp as usize) {
                prefetch(q);
            }
        }
    }

    fn initial_due(&self, t: u64) -> bool {
        self.initial
            .get(self.next_initial)
            .is_some_and(|&m| self.start_time(m, self.cx.dag.messages[m as usize].start.ps()) == t)
    }

    fn start(&mut self, m: u32) {
        let cx = &mut self.cx;
        let msg = &cx.dag.messages[m as usize];
        if msg.path == Path::NvLink {
            let rate = cx.dag.nvlink_rate.expect("checked in `check`");
            let free = &mut self.nv_free[msg.src.idx()];
            *free = (*free).max(cx.now) + rate.serialize(msg.bytes).ps();
            let end = *free;
            cx.msgs[m as usize].recv = end;
            self.sent += 1;
            self.complete_at(m, end);
            return;
        }
        let qp = cx.msgs[m as usize].qp as usize;
        let qs = &mut cx.qps[qp];
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
        let cx = &mut self.cx;
        let msg = &cx.dag.messages[m as usize];
        let k = cx.paths.subflows();
        let qpc = cx.p.cc.qps_per_message();
        let parts = entropy::parts(msg.bytes, qpc) as u32;
        let qp = cx.msgs[m as usize].qp;
        let (s, d, total) = (msg.src.0, msg.dst.0, msg.bytes);
        cx.qps[qp as usize].busy = true;
        cx.msgs[m as usize].subflows_left = parts * k;
        cx.msgs[m as usize].sent = cx.now;
        self.fx.message_start(&mut self.cx, m, parts);
        // Part `i` of the message on the connection's QP `qp + i` (NCCL's split over QPs per
        // connection), each part as `k` subflows.
        for i in 0..parts {
            let q = qp + i;
            let wire = paths::wire_bytes(self.cx.p, entropy::part_bytes(total, qpc, i as u16));
            let wire = wire.max(1);
            for j in 0..k {
                let f = self.cx.msg_flow[m as usize] + i * k + j;
                let fi = f as usize;
                self.cx.flows[fi].msg = m;
                let bytes = wire / k as u64 + ((j as u64) < wire % k as u64) as u64;
                let r = match self.cx.paths {
                    PathModel::Adaptive { .. } => self.place_adaptive(q, s, d, j),
                    _ => q * k + j,
                };
                if bytes == 0 {
                    self.subflow_done(m, r);
                    continue;
                }
                let work = bytes as u128 * 8 * PS_PER_S;
                let cx = &mut self.cx;
                cx.flows[fi].work = work;
                cx.flows[fi].last = cx.now;
                let route = cx.routes.get(r);
                let cap = self.fx.start_cap(cx, f, work, route.cap);
                cx.solver.add(f, r, cap);
                self.fx.flow_start(cx, f, s, cap, work);
                let alone = work / route.line.max(1) as u128;
                cx.defer(alone.min(u64::MAX as u128) as u64);
                self.active += 1;
            }
        }
        let stats = &mut self.cx.stats;
        stats.peak_active = stats.peak_active.max(self.active);
    }

    /// Places subflow `j` of QP `qp` on the least-loaded ports now; returns its new route.
    fn place_adaptive(&mut self, qp: u32, s: u32, d: u32, j: u32) -> u32 {
        let mut links = std::mem::take(&mut self.scratch);
        links.clear();
        let cx = &mut self.cx;
        let solver = &cx.solver;
        paths::subflow_links(
            cx.topo,
            &self.router,
            cx.paths,
            s,
            d,
            self.qp_hash[qp as usize],
            j,
            |l| solver.load(l),
            &mut links,
        );
        let slowest = links.iter().map(|&l| cx.solver.capacity(l)).min();
        let r = cx.solver.push_route(&links);
        let factor = self.fx.route_factor(links.len());
        let e = route_entry(
            cx.topo,
            cx.p,
            &self.fp.rates,
            factor,
            &links,
            slowest.unwrap_or(0),
        );
        cx.routes.push(e);
        self.scratch = links;
        r
    }

    fn drained(&mut self, f: u32, ver: u32) {
        let cx = &mut self.cx;
        let fl = cx.flows[f as usize];
        if ver != fl.ver || !cx.solver.is_active(f) {
            return;
        }
        self.fx.flow_end(cx, f);
        cx.solver.remove(f);
        self.active -= 1;
        let m = fl.msg;
        cx.defer(cx.now - cx.msgs[m as usize].sent);
        let r = cx.solver.route(f);
        self.subflow_done(m, r);
    }

    /// A subflow of `m` on route `r` has put its last byte on the wire.
    fn subflow_done(&mut self, m: u32, r: u32) {
        let cx = &mut self.cx;
        let route = cx.routes.get(r);
        let arrive = cx.now + route.lat_ps as u64 + self.fx.arrival_delay_ps(cx, r);
        let st = &mut cx.msgs[m as usize];
        st.recv = if st.recv == NONE {
            arrive
        } else {
            st.recv.max(arrive)
        };
        st.subflows_left -= 1;
        if st.subflows_left > 0 {
            return;
        }
        self.sent += 1;
        let qp = st.qp;
        let bytes = cx.dag.messages[m as usize].bytes;
        let lanes =
            entropy::parts(bytes, cx.p.cc.qps_per_message()) as u128 * cx.paths.subflows() as u128;
        let wire = paths::wire_bytes(cx.p, bytes) as u128 * 8 * PS_PER_S;
        let alone = wire / (route.line as u128 * lanes).max(1);
        let wait = (cx.now - st.sent).saturating_sub(alone as u64);
        cx.stats.max_wait_ps = cx.stats.max_wait_ps.max(wait);
        // Its last frame's place in the NIC's round robin (`nic_rr`), its losses (`loss`).
        let stalled = self.fx.message_drained(cx, m, r, wait);
        // A QP delivers in order (RC): not before the message ahead of it.
        let q = qp as usize;
        let st = &mut cx.msgs[m as usize];
        let qs = &mut cx.qps[q];
        st.recv = st.recv.max(qs.recv);
        qs.recv = st.recv;
        let finish = st.recv + qs.ack as u64;
        if stalled {
            cx.push(finish, Event::Done { msg: m }); // may move earlier (`loss`)
        } else {
            self.complete_at(m, finish);
        }
        // The QP's next message starts now.
        let qs = &mut self.cx.qps[q];
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

    /// `m` completes at `t`: an event when it has dependants to release, else just recorded. A
    /// completion the round robin moved before now (`nic_rr`) is recorded and releases its
    /// dependants now, posted at `t` plus their delay.
    fn complete_at(&mut self, m: u32, t: u64) {
        let cx = &mut self.cx;
        if self.release.has_dependants(m) {
            if t < cx.now {
                cx.msgs[m as usize].finish = t;
            }
            cx.push(t.max(cx.now), Event::Done { msg: m });
        } else {
            cx.msgs[m as usize].finish = t;
            self.last_finish = self.last_finish.max(t);
        }
    }

    /// The sender's completion of `m`: release its dependants.
    fn done(&mut self, m: u32) {
        let cx = &mut self.cx;
        let st = &mut cx.msgs[m as usize];
        if st.finish == NONE {
            st.finish = cx.now;
        }
        let finish = st.finish;
        self.fx.message_done(cx, m);
        let (msgs, events, dag, nic, now) = (
            &mut cx.msgs,
            &mut cx.events,
            cx.dag,
            cx.p.nic_latency,
            cx.now,
        );
        self.release.complete(dag, m, Time(finish), |c, post| {
            msgs[c as usize].post = post.ps();
            let at = bytes_start(dag, nic, c, post.ps()).max(now);
            events.entry(at).or_default().push(Event::Start { msg: c });
        });
    }
}

/// Each flow's traffic class as a solver index (empty with one class: a message's own class,
/// else the fabric's data class) and the links' division between the classes present.
fn flow_classes(
    p: &SimParams,
    dag: &MessageDag,
    msg_flow: &[u32],
    nf: usize,
    per_msg: u32,
) -> Result<(Vec<u8>, classes::Share), FlowError> {
    let class = |m: &fabricsim_core::message::Message| {
        p.engine_class(m.class)
            .expect("every message's class is checked below first")
    };
    let mut present = 0u16;
    for (i, m) in dag.messages.iter().enumerate() {
        if m.path != Path::Net {
            continue;
        }
        // As the packet engine refuses it (`engine/build.rs`).
        present |= 1 << p.message_class(i, m.class).map_err(FlowError::Traffic)?;
    }
    let classes: Vec<u8> = (0..16u8).filter(|c| present & (1 << c) != 0).collect();
    let rule = classes::share_rule(p.scheduling, &classes, p.mtu_frame_wire_bytes());
    if classes.len() <= 1 {
        return Ok((Vec::new(), rule));
    }
    let mut of = vec![0u8; nf];
    for (i, m) in dag.messages.iter().enumerate() {
        if m.path == Path::Net {
            let c = classes
                .iter()
                .position(|&c| c == class(m))
                .expect("present") as u8;
            let f = msg_flow[i] as usize;
            of[f..f + per_msg as usize].fill(c);
        }
    }
    Ok((of, rule))
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
    events.entry(now + dt).or_default().push(Event::Drained {
        flow: f,
        ver: fl.ver,
    });
}

/// When message `m`, posted at `post`, starts moving bytes: a `Net` one after the sender NIC's
/// latency `nic`, an `NvLink` one at once.
fn bytes_start(dag: &MessageDag, nic: Time, m: u32, post: u64) -> u64 {
    match dag.messages[m as usize].path {
        Path::Net => post + nic.ps(),
        Path::NvLink => post,
    }
}

/// A route over `links` (slowest `slowest` bit/s): its solver cap by `rates` with the effects'
/// `factor` (`None`: none prices routes; its hop count is then not kept), the rate a flow
/// reaches alone, its one-way latency and its number of links.
fn route_entry(
    topo: &Topology,
    p: &SimParams,
    rates: &RateModel,
    factor: Option<f64>,
    links: &[u32],
    slowest: u64,
) -> RouteInfo {
    let lat = paths::one_way_ps(topo, p, links);
    let (factor, hops) = match factor {
        Some(f) => (f, links.len() as f32),
        None => (1.0, 0.0),
    };
    let (cap, line) = limits(rates, slowest, factor);
    RouteInfo {
        cap,
        line,
        lat_ps: lat as u32,
        hops,
    }
}

/// The cap the rate model sets with the route's own `factor` (`NO_CAP` when the slowest link
/// binds first) and the rate a flow reaches alone.
pub(crate) fn limits(rates: &RateModel, slowest: u64, factor: f64) -> (u64, u64) {
    let cap = rates.cap(slowest, factor);
    if cap < slowest {
        (cap, cap)
    } else {
        (NO_CAP, slowest)
    }
}
