//! DCQCN's cut of victim flows: a flow that crosses a queue the start-up burst of other flows
//! fills above Kmin is marked there, and its own reaction point cuts it and recovers only at the
//! profile's timer and byte-counter pace, long after the queue has drained.
//!
//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015, §3)
//! marks every packet that leaves a congested egress, whatever its destination; the fluid model
//! of Zhu et al., "ECN or Delay: Lessons Learnt from Analysis of DCQCN and TIMELY", CoNEXT 2016,
//! §3, couples a queue with the reaction points of the flows crossing it. Here:
//! - a *burst queue* is a switch egress (not into a NIC: those are `dcqcn_incast`'s) whose
//!   dependency-free starters, starting together, offer more than it drains and carry enough
//!   bytes to pass Kmin (at most `B (1 - C / O)` queues: `B` bytes offered at `O` into `C`);
//! - its depth over time comes from the mean-field model (`mean_field`) of its `n` flows (the
//!   queue `dq/dt = n R_c(t - τ) - C` with one representative reaction point, the packet
//!   engine's `sim::dcqcn::Rp`), fed the flows' mean bytes and mean offered rate (a flow offers
//!   its share of its NIC, and no more than its share of each egress before this one: a FIFO
//!   egress whose flows arrive at one rate passes each at its share of the departures) and the
//!   feedback loop of its first flow;
//! - a flow over burst queues that is not itself in a `dcqcn_incast` group is a victim: its own
//!   `Rp` paces its frames, each reaching the queues half a feedback loop after it leaves,
//!   leaving them after their FIFO wait, marked by the depth it leaves behind with the RED
//!   probability (several queues: `1 - Π(1 - p_i)`): its expected marks are its share of the
//!   queue's departures times `p(q)`, and the notification point returns a CNP for the first
//!   expected mark once `cnp_interval` has passed since the last, half a loop later;
//! - a burst queue whose flows go on into a congested egress into a NIC (one whose burst passes
//!   Kmin in its own mean field) is paused by the next switch's PFC ingress (`pfc_pause`, all
//!   the burst queues feeding that egress at once; burst queues no victim crosses join them):
//!   it drains only while unpaused, so the victim's frames wait there through the pauses and
//!   leave it marked by the depth the pauses hold; its flows into that egress are cut by that
//!   egress's marks, not by its own (`fed_queue`), so it fills higher than its own mean field;
//! - the flow engine caps the victim at its bytes over the time its last byte leaves the
//!   queues (`victim_caps`), as `dcqcn_incast` caps a group by its drain.
//!
//! Traced on the packet engine by `fabricsim-lab victim-cnp` (roce-400g, 1,024 GPUs, 99:1 x
//! 1 MB incast + 8 victims of 1 MB; 1 us port samples): the victims into the receiver's leaf are
//! marked in the spine downlinks into that leaf that carry 2 or 5 incast flows (peak 1.7 MB and
//! 4.6 MB, above Kmin from 3-4 us to 57-59 us, and to 451 us where the leaf's PFC pauses the
//! downlink), and victims 2 and 4 also in a leaf uplink they share with each other alone (two
//! flows at line into it: 665 KB, above Kmin 5-33 us). Their NICs' rates: ~340 Gb/s for 10 us,
//! then cut once per 4 us monitor period while the queue stays above Kmin; a victim whose queue
//! stays up ~55 us (12-13 CNPs, rate near 0) sends nothing more until the rate-increase timer
//! fires one T (300 us) after its last cut and ends at 372-373 us (alone with the incast 376
//! us); the one marked for ~29 us (6 CNPs) keeps ~7-10 Gb/s and ends at 164 us; the one behind
//! the paused downlink (28 CNPs) at 771 us. The flow engine without this model: 27-48 us for all
//! four; with it 366.6, 170.9, 791.7, 366.6 us (427.4 for the paused one without
//! `pfc_pause`, 531.3 with session 10's: no headroom, and the burst queue cut by its own
//! marks, peak 3.1 MB; `tests/flow_xval.rs` asserts each within 10%). In the
//! 1,024-GPU permutation of 256 KB (`flow_xval`'s case) ECMP collisions are bursts too: its
//! mean FCT goes from 17.60 to 17.8 us (packet 17.19).
//! Not modeled: the pauses' feedback on the burst's own flows (its mean field is not bounded by
//! XOFF, as in `dcqcn_incast`; the paused queue keeps the mean field's arrivals), pauses of
//! queues before other egresses than one into a NIC, marks the burst's flows draw at other
//! queues than a congested egress into a NIC right after it (there the mean field at the burst
//! queue cuts them only by its own marks), flows that are not dependency-free starters, adaptive routing (no
//! static route to scan). A resend after a NAK waits no extra queueing (`ResendWait::PerNak(0)`).

use std::collections::{BTreeMap, VecDeque};

use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::BitRate;
use fabricsim_mech::dcqcn::DcqcnParams;
use fabricsim_mech::ecn::EcnMarking;
use fabricsim_mech::{SimParams, entropy};

use super::calibration::{MEAN_FIELD_HORIZON_PS, MEAN_FIELD_STEP_PS};
use super::effect::{Ctx, Effect};
use super::groups::{GroupFlow, ResendWait};
use super::mean_field::{self, Incast, QueueTrace, Reaction};
use super::paths::PathModel;
use super::{paths, pfc_pause};

/// The effect: at setup, the victims' caps ([`victim_caps`]; static routes only), each taking
/// hold at its flow's start.
#[derive(Default)]
pub struct DcqcnVictim {
    /// Sorted by flow.
    caps: Vec<GroupFlow>,
}

impl Effect for DcqcnVictim {
    fn setup(&mut self, cx: &mut Ctx) {
        if matches!(cx.paths, PathModel::Adaptive { .. }) {
            return;
        }
        let k = cx.paths.subflows();
        let (solver, msgs) = (&cx.solver, &cx.msgs);
        let route = |m: usize, part: u32, j: u32| solver.routes().get((msgs[m].qp + part) * k + j);
        let cap = |l: u32| solver.capacity(l);
        let (topo, p, dag) = (cx.topo, cx.p, cx.dag);
        let loop_ps = |m: usize| cx.loop_ps(m);
        self.caps = victim_caps(
            topo,
            p,
            dag,
            &cx.msg_flow,
            k,
            route,
            cap,
            loop_ps,
            &cx.groups,
        );
    }

    #[inline]
    fn start_cap(&mut self, _cx: &mut Ctx, f: u32, _work: u128, cap: u64) -> u64 {
        match self.caps.binary_search_by_key(&f, |c| c.flow) {
            Ok(i) => cap.min(self.caps[i].cap_bps),
            Err(_) => cap,
        }
    }
}

/// A victim flow: what its reaction point needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Victim {
    /// Wire bytes.
    pub bytes: u64,
    /// Its rate before any cut (its NIC's line, or its share of it), bit/s.
    pub offered_bps: u64,
    pub nic_line: BitRate,
    /// The feedback loop without queueing (ps): half of it to the queues, half back as a CNP.
    pub loop_ps: u64,
    pub frame_bytes: u64,
}

/// What the model gives for one victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// From its first frame to its last byte leaving the queues, less the fixed half loop (ps):
    /// the time its bytes take beyond the path's latency.
    pub send_ps: u64,
    pub cuts: u32,
    pub cnps: u32,
}

/// A queue on a victim's path over time, from the common start.
pub trait Queue {
    /// Its depth (bytes) at `t` ps.
    fn depth(&self, t: u64) -> f64;
    /// The queueing delay (ps) of a byte arriving at `t`.
    fn wait_ps(&self, t: u64) -> u64;
}

impl Queue for QueueTrace {
    fn depth(&self, t: u64) -> f64 {
        QueueTrace::depth(self, t)
    }
    fn wait_ps(&self, t: u64) -> u64 {
        QueueTrace::wait_ps(self, t)
    }
}

impl Queue for pfc_pause::Paused {
    fn depth(&self, t: u64) -> f64 {
        self.depth.depth(t)
    }
    fn wait_ps(&self, t: u64) -> u64 {
        pfc_pause::Paused::wait_ps(self, t)
    }
}

/// Runs victim `v`'s reaction point against the queues on its path, under DCQCN `d` and
/// marking `ecn`.
pub fn send(v: &Victim, queues: &[&dyn Queue], d: &DcqcnParams, ecn: &EcnMarking) -> Sent {
    let (line, offered, frame) = (v.nic_line, v.offered_bps, v.frame_bytes);
    let half = v.loop_ps / 2;
    let mut r = Reaction::new(d, line, offered, frame);
    let mut cnps_in_flight = VecDeque::new();
    // Per step's frames: when they leave the last queue, and how many they are.
    let mut leaving: VecDeque<(u64, f64)> = VecDeque::new();
    let (mut left, mut t, mut next_send) = (v.bytes as f64, 0u64, 0u64);
    let (mut marks, mut cnp_allowed, mut cnps, mut last_out) = (0.0f64, 0u64, 0u32, 0u64);
    loop {
        let end = t + MEAN_FIELD_STEP_PS;
        let sent = r.step(&mut cnps_in_flight, &mut left, (t, end), &mut next_send);
        // FIFO through the queues in path order, each entered as the one before is left.
        let through = |at: u64| queues.iter().fold(at, |at, q| at + q.wait_ps(at));
        if sent > 0.0 {
            leaving.push_back((through(t + half), sent / frame as f64));
            if left <= 0.0 {
                // The last byte leaves the sender as its frame ends.
                last_out = through(next_send + half);
            }
        }
        // Frames leaving by `end`, marked by the depth they leave behind; a departure time is
        // never earlier than the one before (a FIFO queue drains at its rate).
        while let Some(&(out, frames)) = leaving.front().filter(|l| l.0 < end) {
            leaving.pop_front();
            if out < cnp_allowed {
                marks = 0.0;
                continue;
            }
            let pass: f64 = queues
                .iter()
                .map(|q| 1.0 - mean_field::mark_prob(ecn, q.depth(out)))
                .product();
            marks += frames * (1.0 - pass);
            if marks >= 1.0 {
                marks = 0.0;
                cnps += 1;
                cnp_allowed = out + d.cnp_interval.ps();
                cnps_in_flight.push_back(out + half);
            }
        }
        t = end;
        if (left <= 0.0 && leaving.is_empty()) || t >= MEAN_FIELD_HORIZON_PS {
            break;
        }
        // Nothing on its way: skip to the next frame or timer, on the step grid.
        if leaving.is_empty() && cnps_in_flight.is_empty() {
            let wake = r.next_due().map_or(next_send, |x| x.min(next_send));
            t += wake.saturating_sub(t) / MEAN_FIELD_STEP_PS * MEAN_FIELD_STEP_PS;
        }
    }
    Sent {
        send_ps: last_out.saturating_sub(half).max(1),
        cuts: r.cuts,
        cnps,
    }
}

/// A burst queue's model input, as a key (`Incast`'s fields).
type BurstKey = (u32, u64, u64, u64, u64, u64);

fn key(inc: &Incast) -> BurstKey {
    (
        inc.senders,
        inc.bytes,
        inc.offered_bps,
        inc.egress_bps,
        inc.loop_ps,
        inc.nic_line.bps(),
    )
}

fn incast_of(k: &BurstKey, frame_bytes: u64) -> Incast {
    let &(senders, bytes, offered_bps, egress_bps, loop_ps, line) = k;
    Incast {
        senders,
        bytes,
        offered_bps,
        nic_line: BitRate(line),
        egress_bps,
        loop_ps,
        frame_bytes,
    }
}

/// The depth over time of burst queue `inc` whose flows go on, `share` of them, into a
/// congested egress into a NIC. Those are cut by that egress's marks, not this queue's: each
/// packet they deliver has passed the deep egress, above Kmax and so marked there, and a mark
/// of this queue reaches the receiver only after the deep egress's wait (hundreds of us); so
/// they send at the deep egress's mean-field reaction point's rate (`deep`), the others at
/// this queue's own (`own`; both `mean_field::rates`, from the senders' start), each at most
/// its offered rate, reaching the queue half a feedback loop after they are sent. Traced on
/// the packet engine (`fabricsim-lab victim-pause`): the spine downlink of 5 incast QPs and
/// a victim grows at ~215 KB/us to ~20 us and peaks at 4.6 MB, where this queue's own mean
/// field (cut by its own marks) peaks at 3.1 MB.
fn fed_queue(inc: &Incast, own: &[(u64, u64)], deep: &[(u64, u64)], share: f64) -> QueueTrace {
    let n = inc.senders.max(1) as f64;
    let line = inc.nic_line.bps();
    let rate = |steps: &[(u64, u64)], t: u64| {
        let i = steps.partition_point(|s| s.0 <= t);
        let rp = if i == 0 { line } else { steps[i - 1].1 };
        rp.min(inc.offered_bps) as f64 / 8.0 * MEAN_FIELD_STEP_PS as f64 * 1e-12
    };
    let c = inc.egress_bps as f64 / 8.0 * MEAN_FIELD_STEP_PS as f64 * 1e-12;
    let half = inc.loop_ps / 2;
    // Bytes each flow of the two parts has left to send.
    let (mut deep_left, mut own_left) = (inc.bytes as f64, inc.bytes as f64);
    let (mut at, mut depth) = (Vec::new(), Vec::new());
    let (mut t, mut q) = (0u64, 0.0f64);
    while t < MEAN_FIELD_HORIZON_PS && (deep_left > 0.0 || own_left > 0.0 || q > 0.0) {
        let sent = t.checked_sub(half).map(|s| {
            let a = rate(deep, s).min(deep_left);
            let b = rate(own, s).min(own_left);
            deep_left -= a;
            own_left -= b;
            n * (share * a + (1.0 - share) * b)
        });
        q = (q + sent.unwrap_or(0.0) - c).max(0.0);
        t += MEAN_FIELD_STEP_PS;
        at.push(t);
        depth.push(q as f32);
    }
    QueueTrace::from_samples(at, depth, inc.egress_bps)
}

/// A queue a victim crosses: a burst queue's model, and when the next switch pauses it, its
/// start group and index among that group's burst queues (its paused depth depends on every
/// burst queue that feeds the same congested egress).
type QueueKey = (BurstKey, Option<(u32, u32)>);

const NO_BURST: u32 = u32::MAX;

/// Per directed link, the starters of one start time over it.
#[derive(Clone, Copy, Default)]
struct Load {
    flows: u32,
    offered_bps: u64,
    bytes: u64,
    /// Those not in a `dcqcn_incast` group (the candidate victims).
    free: u32,
    /// The first of them (message index + 1; 0: none yet).
    first: u32,
}

/// The caps (sorted by flow) of the dependency-free flows that cross a burst queue (module
/// doc) and are not in `grouped` (`dcqcn_incast`'s groups, sorted by flow): each drains its
/// bytes over the time the model's reaction point takes to push them through the queues.
/// Empty without DCQCN or ECN. `msg_flow[m]`: message `m`'s first flow (its subflows follow),
/// `flows_per_qp` its subflows per QP; `route(m, part, subflow)` the directed links of a flow;
/// `capacity(l)` a link's rate (bit/s); `loop_ps(m)` the feedback loop of `m`'s QP.
#[allow(clippy::too_many_arguments)]
pub fn victim_caps<'r>(
    topo: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    msg_flow: &[u32],
    flows_per_qp: u32,
    route: impl Fn(usize, u32, u32) -> &'r [u32],
    capacity: impl Fn(u32) -> u64,
    loop_ps: impl Fn(usize) -> u64,
    grouped: &[GroupFlow],
) -> Vec<GroupFlow> {
    let (Some(d), Some(ecn)) = (p.cc.algo.dcqcn(), &p.cc.ecn) else {
        return Vec::new();
    };
    let kmin = match *ecn {
        EcnMarking::Red { kmin_bytes, .. } => kmin_bytes,
        EcnMarking::Step { k_bytes } => k_bytes,
    };
    let offers = mean_field::starters(topo, dag);
    let mut order: Vec<(u64, u32)> = (0..dag.messages.len())
        .filter(|&i| offers[i] > 0)
        .map(|i| (dag.messages[i].start.ps(), i as u32))
        .collect();
    order.sort_unstable();
    let qpc = p.cc.qps_per_message().max(1);
    let k = flows_per_qp.max(1);
    let frame = p.mtu_frame_wire_bytes();
    // A message's flows: (flow, part, subflow, wire bytes, offered bit/s).
    let flows_of = |i: usize| {
        let m = &dag.messages[i];
        let parts = entropy::parts(m.bytes, qpc) as u32;
        let each = offers[i] / (parts * k) as u64;
        (0..parts).flat_map(move |part| {
            let wire = paths::wire_bytes(p, entropy::part_bytes(m.bytes, qpc, part as u16));
            (0..k).map(move |j| {
                let bytes = wire / k as u64 + ((j as u64) < wire % k as u64) as u64;
                (msg_flow[i] + part * k + j, part, j, bytes, each.max(1))
            })
        })
    };
    let is_grouped = |f: u32| grouped.binary_search_by_key(&f, |g| g.flow).is_ok();
    let mut load = vec![Load::default(); 2 * topo.links.len()];
    let mut touched: Vec<u32> = Vec::new();
    // Per directed link, its burst's index in this group's `bursts` (`NO_BURST`: none).
    let mut burst_at = vec![NO_BURST; 2 * topo.links.len()];
    // A queue's mean-field model: its peak and its depth over time.
    let model = |inc: &Incast| {
        let (out, trace) = mean_field::queue(inc, d, ecn);
        (out.peak_queue_bytes, trace)
    };
    let mut models: BTreeMap<BurstKey, (u64, QueueTrace)> = BTreeMap::new();
    // A model's reaction point's rates over time (`mean_field::rates`), for `fed_queue`.
    let mut rp_rates: BTreeMap<BurstKey, Vec<(u64, u64)>> = BTreeMap::new();
    let mut rates_of = |inc: &Incast| -> Vec<(u64, u64)> {
        (rp_rates.entry(key(inc)))
            .or_insert_with(|| mean_field::rates(inc, d, ecn).1)
            .clone()
    };
    let mut paused: BTreeMap<QueueKey, pfc_pause::Paused> = BTreeMap::new();
    // Per congested egress into a NIC, the burst queues that feed it (index, share, lag).
    let mut fed: BTreeMap<u32, Vec<(u32, f64, u64)>> = BTreeMap::new();
    let mut sent: BTreeMap<(u64, u64, u64, u64, Vec<QueueKey>), Sent> = BTreeMap::new();
    // Per link and congested egress into a NIC right after it, the flows of this group over both.
    let mut feeds: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    let mut caps = Vec::new();
    for (gi, group) in order.chunk_by(|a, b| a.0 == b.0).enumerate() {
        for &(_, i) in group {
            for (_, part, j, _, _) in flows_of(i as usize) {
                let r = route(i as usize, part, j);
                for &l in r {
                    let e = &mut load[l as usize];
                    if e.flows == 0 {
                        touched.push(l);
                        e.first = i + 1;
                    }
                    e.flows += 1;
                }
                for w in r.windows(2).filter(|w| paths::into_nic(topo, w[1])) {
                    *feeds.entry((w[0], w[1])).or_default() += 1;
                }
            }
        }
        // A flow reaches each link at most at its share of the links before it (a FIFO egress
        // whose flows arrive at one rate passes each at its share of the departures).
        for &(_, i) in group {
            for (f, part, j, bytes, each) in flows_of(i as usize) {
                let free = !is_grouped(f) as u32;
                let mut rate = each;
                for &l in route(i as usize, part, j) {
                    let e = &mut load[l as usize];
                    e.offered_bps += rate;
                    e.bytes += bytes;
                    e.free += free;
                    rate = rate.min(capacity(l) / e.flows as u64);
                }
            }
        }
        // The queues among the links this group loads that its burst fills above Kmin, with
        // their model's key: inner egresses (burst queues) and egresses into NICs (congested,
        // for the pauses of the burst queues before them).
        let mut bursts: Vec<QueueKey> = Vec::new();
        let mut deep: BTreeMap<u32, Incast> = BTreeMap::new();
        // A group with no candidate victim has no queue to model.
        let any_free = touched.iter().any(|&l| load[l as usize].free > 0);
        for &l in touched.iter().filter(|_| any_free) {
            let e = load[l as usize];
            let c = capacity(l);
            let bound = e.bytes as f64 * (1.0 - c as f64 / e.offered_bps as f64);
            let nic = paths::into_nic(topo, l);
            // A queue no victim crosses matters only as it feeds a congested egress (its
            // pauses lower the threshold there).
            let feeds_nic = feeds.range((l, 0)..(l + 1, 0)).next().is_some();
            if e.flows < 2 || (e.free == 0 && !nic && !feeds_nic) || bound <= kmin as f64 {
                continue;
            }
            let first = (e.first - 1) as usize;
            let inc = Incast {
                senders: e.flows,
                bytes: e.bytes / e.flows as u64,
                offered_bps: e.offered_bps / e.flows as u64,
                nic_line: mean_field::nic_line(topo, dag.messages[first].src),
                egress_bps: c,
                loop_ps: loop_ps(first),
                frame_bytes: frame,
            };
            if nic {
                // Its model is run only for a burst queue that feeds it (below).
                deep.insert(l, inc);
                continue;
            }
            let kk = key(&inc);
            models.entry(kk).or_insert_with(|| model(&inc));
            if models[&kk].0 > kmin {
                burst_at[l as usize] = bursts.len() as u32;
                bursts.push((kk, None));
            }
        }
        // A burst queue feeding a congested egress into a NIC is paused by the next switch's
        // ingress (`pfc_pause`): the one its flows feed most.
        let mut into: Vec<Option<(u32, f64, u64)>> = vec![None; bursts.len()];
        for (&(l, r), &n) in &feeds {
            let (Some(&b), Some(inc)) = (burst_at.get(l as usize), deep.get(&r)) else {
                continue;
            };
            let Some(to) = into.get_mut(b as usize) else {
                continue;
            };
            let share = n as f64 / load[l as usize].flows.max(1) as f64;
            let (peak, _) = models.entry(key(inc)).or_insert_with(|| model(inc));
            if *peak > kmin && to.is_none_or(|(_, s, _)| share > s) {
                *to = Some((r, share, pfc_pause::lag_ps(topo, p, l)));
            }
        }
        for (b, to) in into.iter().enumerate() {
            if let Some((r, share, lag)) = *to {
                fed.entry(r).or_default().push((b as u32, share, lag));
            }
        }
        for (&r, list) in &fed {
            let port = topo.links[(r / 2) as usize].ends[1];
            let Some(ing) = pfc_pause::Ingress::of(topo, p, topo.ports[port.idx()].node) else {
                continue;
            };
            let deep_rates = rates_of(&deep[&r]);
            let queues: Vec<QueueTrace> = (list.iter())
                .map(|&(b, share, _)| {
                    let inc = incast_of(&bursts[b as usize].0, frame);
                    fed_queue(&inc, &rates_of(&inc), &deep_rates, share)
                })
                .collect();
            let feeders: Vec<pfc_pause::Feeder> = (list.iter().zip(&queues))
                .map(|(&(_, share, lag_ps), queue)| pfc_pause::Feeder {
                    queue,
                    share,
                    lag_ps,
                })
                .collect();
            // The ingresses that feed `r`: the links into its switch its flows take.
            let n = feeds.keys().filter(|k| k.1 == r).count() as u32;
            let out = pfc_pause::paused(&feeders, &models[&key(&deep[&r])].1, &ing, n);
            for (&(b, _, _), q) in list.iter().zip(out) {
                let kq = &mut bursts[b as usize];
                kq.1 = Some((gi as u32, b));
                paused.insert(*kq, q);
            }
        }
        fed.clear();
        feeds.clear();
        for &l in &touched {
            load[l as usize] = Load::default();
        }
        let members = if bursts.is_empty() { &[][..] } else { group };
        for &(_, i) in members {
            let i = i as usize;
            for (f, part, j, bytes, each) in flows_of(i) {
                let on: Vec<QueueKey> = route(i, part, j)
                    .iter()
                    .filter_map(|&l| bursts.get(burst_at[l as usize] as usize).copied())
                    .collect();
                if on.is_empty() || is_grouped(f) {
                    continue;
                }
                let v = Victim {
                    bytes,
                    offered_bps: each,
                    nic_line: mean_field::nic_line(topo, dag.messages[i].src),
                    loop_ps: loop_ps(i),
                    frame_bytes: frame,
                };
                let vk = (v.bytes, v.offered_bps, v.nic_line.bps(), v.loop_ps, on);
                let out = *sent.entry(vk.clone()).or_insert_with(|| {
                    let queues: Vec<&dyn Queue> = (vk.4.iter())
                        .map(|kq| match paused.get(kq) {
                            Some(q) => q as &dyn Queue,
                            None => &models[&kq.0].1,
                        })
                        .collect();
                    send(&v, &queues, d, ecn)
                });
                // Below a feedback loop of extra time the model resolves no cost.
                let ideal = (bytes as u128 * 8 * 1_000_000_000_000 / each as u128) as u64;
                if out.send_ps <= ideal + v.loop_ps {
                    continue;
                }
                let cap = (bytes as u128 * 8 * 1_000_000_000_000 / out.send_ps as u128) as u64;
                caps.push(GroupFlow {
                    flow: f,
                    cap_bps: cap.max(1),
                    resend: ResendWait::PerNak(0),
                });
            }
        }
        for &l in &touched {
            burst_at[l as usize] = NO_BURST;
        }
        touched.clear();
        paused.clear();
    }
    caps.sort_unstable_by_key(|c| c.flow);
    caps
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::dcqcn::DcqcnSet;

    const LINE: u64 = 400_000_000_000;

    fn victim(bytes: u64) -> Victim {
        Victim {
            bytes,
            offered_bps: LINE,
            nic_line: BitRate::gbps(400),
            loop_ps: 2_000_000,
            frame_bytes: 4_096,
        }
    }

    fn red() -> EcnMarking {
        EcnMarking::Red {
            kmin_bytes: 150_000,
            kmax_bytes: 1_500_000,
            pmax: 1.0,
        }
    }

    /// A queue of `bytes` from 0 to `until_ps`, empty after.
    fn held(bytes: f32, until_ps: u64) -> QueueTrace {
        QueueTrace::from_samples(vec![0, until_ps], vec![bytes, 0.0], LINE)
    }

    #[test]
    fn a_queue_below_kmin_delays_but_never_marks() {
        // 1 MB at 400 Gb/s: 1,048,576 x 8 / 400e9 = 20.97 us on the wire; a 100 KB queue (below
        // Kmin, 150 KB) for 30 us adds its FIFO wait, 102,400 x 8 / 400e9 = 2.05 us, to the
        // frames that find it: the last leaves at 20.97 + 2.05 = 23.02 us (within a step of 50
        // ns, the pacer's grid).
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let q = held(100.0 * 1024.0, 30_000_000);
        let out = send(&victim(1 << 20), &[&q], &d, &red());
        assert_eq!((out.cnps, out.cuts), (0, 0), "{out:?}");
        assert!(
            out.send_ps.abs_diff(23_020_000) <= MEAN_FIELD_STEP_PS,
            "{out:?}"
        );
    }

    #[test]
    fn a_victim_that_ends_before_its_first_cnp_returns_pays_only_the_wait() {
        // A 2 MB queue (above Kmax: every departing frame is marked) for 100 us: a frame sent at
        // t arrives at t + 1 us (half the loop) and leaves 2,000,000 x 8 / 400e9 = 40 us later;
        // the first CNP reaches the sender at 0 + 1 + 40 + 1 = 42 us, after the 256 KB victim
        // put its last byte on the wire (5.24 us): its cut changes nothing; its last byte
        // leaves at 5.24 + 40 = 45.24 us after it could have (the half loop is the path's
        // latency).
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let q = held(2_000_000.0, 100_000_000);
        let out = send(&victim(256 << 10), &[&q], &d, &red());
        assert!(out.cnps >= 1, "{out:?}");
        assert!(
            out.send_ps.abs_diff(45_240_000) <= MEAN_FIELD_STEP_PS,
            "{out:?}"
        );
    }

    #[test]
    fn a_victim_cut_while_the_queue_stays_up_waits_for_the_rate_increase_timer() {
        // A 1.6 MB queue (above Kmax) for 60 us, as a spine downlink behind 2 incast flows
        // (`fabricsim-lab victim-cnp`: 1.7 MB, above Kmin to 57-59 us). Its frames wait 32 us;
        // the first CNP lands at 1 + 32 + 1 = 34 us and by then 1 MB is on the wire at line, so
        // take 4 MB: it is cut once per 4 us monitor period (the CNPs come one per 4 us) while
        // its frames still meet the queue, each cut halving the rate (α near 1), which leaves it
        // near 0 with most of its bytes unsent; then nothing until the rate-increase timer T
        // (300 us) fires after the last cut. So its bytes take over T + 34 us, and at least
        // 2 cuts happened (frames sent before 60 - 1 = 59 us meet the queue, CNPs of frames
        // leaving after 34 us).
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let q = held(1_600_000.0, 60_000_000);
        let out = send(&victim(4 << 20), &[&q], &d, &red());
        let t = d.rate_increase_timer.ps();
        assert!(out.cuts >= 2 && out.cnps >= out.cuts, "{out:?}");
        assert!(out.send_ps > t + 34_000_000, "{out:?}");
        // Alone: 4 MB at line, 83.9 us.
        let alone = send(&victim(4 << 20), &[], &d, &red());
        assert!(
            alone.send_ps.abs_diff(83_886_080) <= MEAN_FIELD_STEP_PS,
            "{alone:?}"
        );
    }

    #[test]
    fn two_queues_wait_in_turn_and_mark_as_either() {
        // Two 100 KB queues below Kmin add their waits (2 x 2.05 us); one above Kmax marks
        // whatever the other does: the two-queue run is cut like the one-queue run.
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let low = held(100.0 * 1024.0, 300_000_000);
        let out = send(&victim(1 << 20), &[&low, &low], &d, &red());
        assert!(out.send_ps.abs_diff(20_970_000 + 2 * 2_048_000) <= 2 * MEAN_FIELD_STEP_PS);
        let high = held(1_600_000.0, 60_000_000);
        let one = send(&victim(4 << 20), &[&high], &d, &red());
        let both = send(&victim(4 << 20), &[&high, &low], &d, &red());
        assert!(one.cuts >= 2 && both.cuts >= 2, "{one:?} {both:?}");
    }

    #[test]
    fn a_burst_into_a_deep_egress_follows_that_egress_reaction_point() {
        // 5 flows of 1 MB offered at 400 Gb/s into a 400 Gb/s egress, the half loop 1 us. Never
        // cut: 1,048,576 B per flow at 50,000 B/us takes 20.97 us, the queue growing at 4 x
        // 50,000 B/us, so it peaks at 4 x 1,048,576 = 4,194,304 B (less a step's rounding).
        // With the deep egress's reaction point at 100 Gb/s from the start (share 1), its flows
        // send for 83.9 us and the queue peaks at 5 x 1 MB - 83.9 us x 50,000 B/us = 1 MB; with
        // share 0 the queue's own reaction point (never cut) sets the first peak again.
        let inc = Incast {
            senders: 5,
            bytes: 1 << 20,
            offered_bps: LINE,
            nic_line: BitRate::gbps(400),
            egress_bps: LINE,
            loop_ps: 2_000_000,
            frame_bytes: 4_096,
        };
        let peak = |q: &QueueTrace| q.samples().1.iter().fold(0.0f32, |a, &b| a.max(b)) as f64;
        let slow = [(0, 100_000_000_000)];
        let never = fed_queue(&inc, &[], &[], 1.0);
        assert!(
            (peak(&never) - 4_194_304.0).abs() <= 4.0 * 2_500.0,
            "{}",
            peak(&never)
        );
        let cut = fed_queue(&inc, &[], &slow, 1.0);
        assert!(
            (peak(&cut) - 1_048_576.0).abs() <= 4.0 * 2_500.0,
            "{}",
            peak(&cut)
        );
        assert_eq!(fed_queue(&inc, &[], &slow, 0.0), never);
    }
}
