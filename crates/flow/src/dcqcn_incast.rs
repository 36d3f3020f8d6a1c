//! DCQCN's throughput cost under a synchronized incast: a mean-field fluid model of the
//! reaction points of `n` identical senders that start together into one congested egress.
//!
//! The fluid model of DCQCN (Zhu et al., "ECN or Delay: Lessons Learnt from Analysis of DCQCN
//! and TIMELY", CoNEXT 2016, §3) couples a bottleneck queue `dq/dt = n R_c(t - τ*) - C` with
//! each flow's reaction point driven by the CNPs that the queue's marking sends back one
//! feedback delay later. Its flows are identical, so one reaction point stands for all (the
//! mean field). Here that reaction point is the packet engine's own state machine
//! (`sim::dcqcn::Rp`, with its timers armed as `sim::engine::cc` arms them), so the cut rule
//! (α, the monitor-period grid, the target clamp) and the recovery rules (timer T, byte
//! counter B, fast recovery, additive and hyper increase) are exactly the profile's, and stay
//! so when they change. The queue is a fluid drained at the egress rate and marked at dequeue
//! by the profile's RED rule, in expectation: the representative flow's packets leave at its
//! share of the egress (FIFO, identical flows: `C / n`), each marked with probability `p(q)`,
//! and the notification point sends a CNP for the first expected mark once `cnp_interval` has
//! passed since the last one (the expected wait of the packet engine's per-packet draw). The
//! sender paces whole frames, each spacing the next by its time at the current rate, and a rate
//! change rescales the pending gap (HPCC ns-3 `RdmaHw::ChangeRate`).
//!
//! What it shows that max-min sharing does not: synchronized starters build a queue far above
//! Kmax before the first cut lands; while it drains, every QP is cut once per monitor period
//! (α near 1), so the rates fall far below the fair share and recover only at the timer's
//! and byte counter's pace. The model returns the group's drain time; the flow engine caps each
//! of the group's flows at its bytes over that time ([`synchronized_caps`]), the cap taking
//! hold as the model's reaction point is cut ([`Onsets`]: until then the flow's QP sends at its
//! share of its NIC's line, which a flow sharing that NIC sees). A group whose bytes
//! all leave the senders before the first cut lands (the whole incast fits in the buffer) pays
//! nothing, as in the packet engine. The model also returns the mean queueing delay of the
//! group's packets, which a go-back-N resend pays per NAK (`flow::loss`); a group that put its
//! bytes on the wire before the first cut and was cut while they queued resends at the cut rate
//! until the rate-increase timer, once per message instead ([`ResendWait`]). Checked against the packet
//! engine by `fabricsim-lab incast` (the drain and the packet engine's last completion for
//! N = 2..32; it prints the mean wait too: 191 us for 32 x 1 MB). Not modeled: PFC pauses (the queue is not bounded by
//! XOFF), flows of one group with different sizes (the mean size stands for all), groups that
//! are not dependency-free starters (a released message joins no group), congestion upstream
//! of the receiver's egress.

use std::collections::VecDeque;

use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::topology::{HostId, Topology};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::dcqcn::{DcqcnParams, Rp, RpAction};
use fabricsim_mech::ecn::EcnMarking;
use fabricsim_mech::{SimParams, entropy};

use super::paths;

/// The fluid step: a 4 KB frame takes 82 ns at 400 Gb/s; DCQCN's periods are 1 us and up.
pub(super) const STEP_PS: u64 = 50_000;
/// A model run stops here (the group's drain is then reported as this long).
pub(super) const HORIZON_PS: u64 = 10_000_000_000_000;

/// A group of identical senders that start together towards one egress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Incast {
    pub senders: u32,
    /// Wire bytes each sends.
    pub bytes: u64,
    /// Each sender's rate before any cut (its NIC line, or its share of it), bit/s.
    pub offered_bps: u64,
    /// The sending NIC's line rate (the reaction point's line).
    pub nic_line: BitRate,
    /// The congested egress, bit/s.
    pub egress_bps: u64,
    /// The feedback loop without queueing: sender to egress to receiver, CNP back (ps).
    pub loop_ps: u64,
    /// Bytes per data frame on the wire (marks are per packet).
    pub frame_bytes: u64,
}

/// The model's result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drain {
    /// From the first byte reaching the egress to the last leaving it (ps).
    pub drain_ps: u64,
    /// The same at the egress rate with no cut (the max-min fluid's drain).
    pub ideal_ps: u64,
    /// Rate decreases of one sender, and its CNPs.
    pub cuts: u32,
    pub cnps: u32,
    /// Largest queue (bytes).
    pub peak_queue_bytes: u64,
    /// The queueing delay at the egress averaged over the bytes that crossed it (ps): what a
    /// packet of the group, picked at random, waited (a go-back-N resend pays it again, `loss`).
    pub mean_wait_ps: u64,
}

/// Expected marking probability of a packet leaving a queue of `q` bytes (`sim::ecn::Marker`'s
/// rule as an expectation).
pub(super) fn mark_prob(m: &EcnMarking, q: f64) -> f64 {
    let (kmin, kmax, pmax) = match *m {
        EcnMarking::Red {
            kmin_bytes,
            kmax_bytes,
            pmax,
        } => (kmin_bytes as f64, kmax_bytes as f64, pmax),
        EcnMarking::Step { k_bytes } => (k_bytes as f64, k_bytes as f64, 1.0),
    };
    if q <= kmin {
        0.0
    } else if q > kmax {
        1.0
    } else {
        pmax * (q - kmin) / (kmax - kmin)
    }
}

/// The reaction point and its timers, armed as `sim::engine::cc::rp_act` arms them, and its
/// pacer (shared with `dcqcn_victim`): one QP of line `line` offering at most `offered` bit/s in
/// frames of `frame_bytes`, under DCQCN `d`.
pub(super) struct Reaction<'a> {
    d: &'a DcqcnParams,
    line: BitRate,
    offered: u64,
    frame_bytes: u64,
    rp: Rp,
    alpha_due: Option<u64>,
    increase_due: Option<u64>,
    decrease_due: Option<u64>,
    /// Rate decreases so far.
    pub(super) cuts: u32,
}

impl<'a> Reaction<'a> {
    pub(super) fn new(
        d: &'a DcqcnParams,
        line: BitRate,
        offered: u64,
        frame_bytes: u64,
    ) -> Reaction<'a> {
        Reaction {
            d,
            line,
            offered,
            frame_bytes,
            rp: Rp::new(line),
            alpha_due: None,
            increase_due: None,
            decrease_due: None,
            cuts: 0,
        }
    }

    /// One fluid step `(t, end)`: the CNPs (arrival times, ascending) and timers due in it, in
    /// time order, then the whole frames the pacer sends from `left`; returns the bytes sent.
    /// The pacer's pending gap `next_send` follows each rate change (HPCC ns-3
    /// `RdmaHw::ChangeRate`: the gap pending since the last frame is redone at the new rate, so
    /// a frame sent at a cut rate does not hold the QP once it recovers).
    pub(super) fn step(
        &mut self,
        cnps: &mut VecDeque<u64>,
        left: &mut f64,
        (t, end): (u64, u64),
        next_send: &mut u64,
    ) -> f64 {
        let (d, line) = (self.d, self.line);
        loop {
            let before = self.rate();
            let cnp = cnps.front().copied().filter(|&c| c <= end);
            let timer = self.next_due().filter(|&x| x <= end);
            match (cnp, timer) {
                (Some(c), tm) if tm.is_none_or(|tm| c < tm) => {
                    cnps.pop_front();
                    let rc = self.rp.rc;
                    let a = self.rp.on_cnp(d, line, Time(c));
                    self.cuts += (self.rp.rc < rc) as u32;
                    self.act(c, a);
                }
                (_, Some(_)) => {
                    self.fire_next(end);
                }
                _ => break,
            }
            let after = self.rate();
            if after != before && *next_send > t {
                let f = self.frame_bytes as f64 * 8e12;
                *next_send =
                    (*next_send as f64 + f / after as f64 - f / before as f64).max(t as f64) as u64;
            }
        }
        // Whole frames due before `end`, each spacing the next by its time at the current rate
        // (the per-QP pacer).
        let mut sent = 0.0;
        while *left > 0.0 && *next_send < end {
            let rate = self.rate();
            let frame = (self.frame_bytes as f64).min(*left);
            *left -= frame;
            sent += frame;
            let at = (*next_send).max(t);
            *next_send = at + (frame * 8e12 / rate as f64) as u64;
            if let Some(a) = self.rp.on_sent(d, line, frame as u64) {
                self.act(at, a);
            }
        }
        sent
    }

    fn act(&mut self, now: u64, a: RpAction) {
        let d = self.d;
        if a.arm_alpha && self.alpha_due.is_none() {
            self.alpha_due = Some(now + d.alpha_update.ps());
        }
        if a.arm_increase {
            self.increase_due = Some(now + d.rate_increase_timer.ps());
        }
        if let Some(at) = a.arm_decrease_at {
            self.decrease_due = Some(at.ps());
        }
    }

    /// Fires the earliest timer due by `until`; false when none is.
    fn fire_next(&mut self, until: u64) -> bool {
        let (d, line) = (self.d, self.line);
        let due = [self.decrease_due, self.alpha_due, self.increase_due];
        let Some((which, at)) = due
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (i, t)))
            .filter(|&(_, t)| t <= until)
            .min_by_key(|&(i, t)| (t, i))
        else {
            return false;
        };
        match which {
            0 => {
                self.decrease_due = None;
                let before = self.rp.rc;
                let a = self.rp.on_decrease_timer(d, line, Time(at));
                self.cuts += (self.rp.rc < before) as u32;
                self.act(at, a);
            }
            1 => {
                self.alpha_due = self.rp.on_alpha_timer(d).then(|| at + d.alpha_update.ps());
            }
            _ => {
                self.increase_due = None;
                if self.rp.active {
                    let a = self.rp.on_increase_timer(d, line);
                    self.act(at, a);
                }
            }
        }
        true
    }

    /// The reaction point's rate, bit/s (its line until the first cut), before the pacer's
    /// limit to the offered rate.
    fn rp_bps(&self) -> u64 {
        if self.rp.active {
            self.rp.rc
        } else {
            self.line.bps()
        }
    }

    fn rate(&self) -> u64 {
        if self.rp.active {
            self.rp.rc
        } else {
            self.line.bps()
        }
        .min(self.offered)
        .max(1)
    }

    pub(super) fn next_due(&self) -> Option<u64> {
        [self.decrease_due, self.alpha_due, self.increase_due]
            .into_iter()
            .flatten()
            .min()
    }
}

/// The queue of a mean-field run over time (`queue`): its depth at the end of each step the
/// model integrated, from the senders' start; between two samples it is the earlier one (the
/// model skips only spans where the queue is empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueTrace {
    /// Step ends (ps) and the depth then (bytes).
    at_ps: Vec<u64>,
    bytes: Vec<f32>,
    /// The egress's rate, bit/s.
    pub egress_bps: u64,
}

impl QueueTrace {
    /// A queue given by samples: from each `at_ps[i]` (ascending) it holds `bytes[i]`.
    pub fn from_samples(at_ps: Vec<u64>, bytes: Vec<f32>, egress_bps: u64) -> QueueTrace {
        assert_eq!(at_ps.len(), bytes.len(), "one depth per sample time");
        QueueTrace {
            at_ps,
            bytes,
            egress_bps,
        }
    }

    /// The depth (bytes) at `t` ps from the senders' start.
    pub fn depth(&self, t: u64) -> f64 {
        match self.at_ps.partition_point(|&a| a <= t) {
            0 => 0.0,
            i => self.bytes[i - 1] as f64,
        }
    }

    /// The samples: step ends (ps) and the depth then (bytes).
    pub fn samples(&self) -> (&[u64], &[f32]) {
        (&self.at_ps, &self.bytes)
    }

    /// The queueing delay (ps) of a byte arriving at `t` (FIFO at the egress rate).
    pub fn wait_ps(&self, t: u64) -> u64 {
        (self.depth(t) * 8e12 / self.egress_bps.max(1) as f64) as u64
    }
}

/// Integrates the mean-field model of `inc` under DCQCN `d` and marking `ecn`.
pub fn drain(inc: &Incast, d: &DcqcnParams, ecn: &EcnMarking) -> Drain {
    integrate(inc, d, ecn, None, None)
}

/// [`drain`], with the representative reaction point's rate over time: `(t, bit/s)` from each
/// `t` (ps from the senders' start, to the end of the model's step it changed in), its line
/// before the first entry.
pub fn rates(inc: &Incast, d: &DcqcnParams, ecn: &EcnMarking) -> (Drain, Vec<(u64, u64)>) {
    let mut rates = Vec::new();
    let out = integrate(inc, d, ecn, None, Some(&mut rates));
    (out, rates)
}

/// [`drain`], with the queue's depth over time.
pub fn queue(inc: &Incast, d: &DcqcnParams, ecn: &EcnMarking) -> (Drain, QueueTrace) {
    let mut trace = QueueTrace {
        egress_bps: inc.egress_bps,
        ..QueueTrace::default()
    };
    let out = integrate(inc, d, ecn, Some(&mut trace), None);
    (out, trace)
}

fn integrate(
    inc: &Incast,
    d: &DcqcnParams,
    ecn: &EcnMarking,
    mut trace: Option<&mut QueueTrace>,
    mut rates: Option<&mut Vec<(u64, u64)>>,
) -> Drain {
    let n = inc.senders.max(1) as f64;
    let line = inc.nic_line;
    let c_bytes = inc.egress_bps as f64 / 8.0 * STEP_PS as f64 * 1e-12;
    let half = (inc.loop_ps / 2).div_ceil(STEP_PS).max(1) as usize;
    // Bytes the representative sender put on the wire per step, until they reach the egress.
    let mut in_flight = VecDeque::from(vec![0.0f64; half]);
    let mut cnps_in_flight = VecDeque::new();
    let (mut left, mut q, mut marks) = (inc.bytes as f64, 0.0f64, 0.0f64);
    let (mut cnp_allowed, mut cnps, mut peak) = (0u64, 0u32, 0.0f64);
    // Bytes into the egress, and the same weighted by the queue they found.
    let (mut in_sum, mut waited) = (0.0f64, 0.0f64);
    let (mut t, mut next_send) = (0u64, 0u64);
    let mut first_arrival = None;
    let ideal_ps = (n * inc.bytes as f64 * 8.0 / inc.egress_bps as f64 * 1e12) as u64;
    let (offered, frame) = (inc.offered_bps, inc.frame_bytes);
    let mut r = Reaction::new(d, line, offered, frame);
    loop {
        let end = t + STEP_PS;
        // CNPs and timers due in this step, in time order; then whole frames.
        let sent = r.step(&mut cnps_in_flight, &mut left, (t, end), &mut next_send);
        if let Some(v) = rates.as_deref_mut() {
            let bps = r.rp_bps();
            if v.last().map_or(line.bps(), |x| x.1) != bps {
                v.push((end, bps));
            }
        }
        in_flight.push_back(sent);
        let arriving = n * in_flight.pop_front().unwrap_or(0.0);
        if arriving > 0.0 && first_arrival.is_none() {
            first_arrival = Some(t);
        }
        // FIFO: the bytes arriving now wait behind the queue they find.
        in_sum += arriving;
        waited += arriving * q;
        let out = (q + arriving).min(c_bytes);
        q += arriving - out;
        peak = peak.max(q);
        if let Some(tr) = trace.as_deref_mut() {
            tr.at_ps.push(end);
            tr.bytes.push(q as f32);
        }
        // The representative flow's packets leaving now, marked by the queue they leave behind.
        if end >= cnp_allowed {
            marks += out / n / inc.frame_bytes as f64 * mark_prob(ecn, q);
            if marks >= 1.0 {
                marks = 0.0;
                cnps += 1;
                cnp_allowed = end + d.cnp_interval.ps();
                cnps_in_flight.push_back(end + inc.loop_ps / 2);
            }
        } else {
            marks = 0.0;
        }
        t = end;
        let idle = left <= 0.0 && q <= 0.0 && in_flight.iter().all(|&b| b == 0.0);
        if idle || t >= HORIZON_PS {
            break;
        }
        // Nothing queued or on its way: skip to the next frame or timer, on the step grid.
        if q <= 0.0 && cnps_in_flight.is_empty() && in_flight.iter().all(|&b| b == 0.0) {
            let wake = r.next_due().map_or(next_send, |x| x.min(next_send));
            t += wake.saturating_sub(t) / STEP_PS * STEP_PS;
        }
    }
    let start = first_arrival.unwrap_or(0);
    Drain {
        drain_ps: (t - start).max(1),
        ideal_ps,
        cuts: r.cuts,
        cnps,
        peak_queue_bytes: peak as u64,
        mean_wait_ps: (waited / in_sum.max(1.0) * 8e12 / inc.egress_bps as f64) as u64,
    }
}

/// Host `h`'s NIC line rate.
pub(super) fn nic_line(topo: &Topology, h: HostId) -> BitRate {
    topo.links[topo.ports[topo.host_port(h).idx()].link.idx()].rate
}

/// Per message, the rate it offers when it is a starter (a dependency-free `Net` message with
/// bytes: its sender's line, shared by the sender's starters as the NIC serves its QPs in
/// turn), else 0.
pub(super) fn starters(topo: &Topology, dag: &MessageDag) -> Vec<u64> {
    let starter = |m: &fabricsim_core::message::Message| {
        m.path == Path::Net && m.deps_len == 0 && m.bytes > 0
    };
    let mut from = vec![0u64; topo.num_hosts()];
    for m in dag.messages.iter().filter(|m| starter(m)) {
        from[m.src.idx()] += 1;
    }
    dag.messages
        .iter()
        .map(|m| {
            if starter(m) {
                nic_line(topo, m.src).bps() / from[m.src.idx()]
            } else {
                0
            }
        })
        .collect()
}

/// A flow of a synchronized group: its cap and what a go-back-N resend of it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupFlow {
    pub flow: u32,
    /// Bit/s (`u64::MAX` when the model resolves no cost: the group's bytes reach the egress
    /// before the first cut lands).
    pub cap_bps: u64,
    pub resend: ResendWait,
}

/// What a go-back-N resend of a group's flow waits beyond its round trips (`flow::loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResendWait {
    /// Per NAK, the group's mean queueing delay ([`Drain::mean_wait_ps`], ps): the sender is
    /// paced at its cut rate while it sends, so a NAK wastes what it sent over a round trip
    /// with the queue, and resends it at that rate.
    PerNak(u64),
    /// Once per message that NAKs, the rate-increase timer T (ps): the group put its bytes on
    /// the wire before the first cut and DCQCN cut its QPs while their queued packets drew
    /// CNPs, so a resend leaves at the cut rate until T after the last cut, which comes as its
    /// last queued packet arrives: the message ends one T after its drain, however many NAKs
    /// (packet engine, roce-400g mixed incast, 30 seeds: a NAKed message ends 301-348 us after
    /// its lossless FCT whatever the NAK's time, a second NAK adds 0-40 us).
    AfterTimer(u64),
}

/// What a resend of a group's flow waits ([`ResendWait`]): the timer T when the group's
/// bytes were all on the wire before the first cut (`cap_bps` unbounded) and the model's
/// reaction point was cut while they drained, else the mean queueing delay per NAK.
fn resend_wait(out: &Drain, cap_bps: u64, d: &DcqcnParams) -> ResendWait {
    if cap_bps == u64::MAX && out.cuts > 0 {
        ResendWait::AfterTimer(d.rate_increase_timer.ps())
    } else {
        ResendWait::PerNak(out.mean_wait_ps)
    }
}

/// When the caps of a group's flows take hold ([`synchronized_caps`]). DCQCN cuts a QP only
/// once CNPs for its packets have come back: until the model's reaction point is cut below the
/// group's fair share of the egress, a flow is capped at that reaction point's rate (its line
/// until the first cut), so it injects at its share of its NIC's line (`nic_send`) while the
/// egress delivers its fair share; from then on at the rate that drains what it has left by
/// the time its group cap would (its FCT is the group's drain, as with the cap from its
/// start). Traced on the packet engine (`fabricsim-lab roce-nic-trace`, roce-400g 32:1 x 1
/// MB): an incast QP alone on its NIC leaves the line at ~11 us and falls to ~100 Gb/s at ~15
/// us, one sharing its NIC with a victim keeps half the line until ~14 us (the first cut, to
/// about half the line, does not bite), then ~84 Gb/s (a paced QP loses turns to the victim
/// in the round robin, not modeled), ~50 from ~22 us, ~30 from ~26 us; the model's reaction
/// point (offered half the line): 202 Gb/s from 10.1 us, 104 from 14.1, 55 from 22.1, 29 from
/// 26.1. At 1,024 GPUs (99:1) the shared QPs keep half the line until ~28 us, the model's
/// second cut 26.9 us.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Onsets {
    /// Per group: its reaction point's rates per flow before its cap takes hold, `(ps after a
    /// flow's start, bit/s)`, and when the cap takes hold (ps after a flow's start).
    ramps: Vec<(Vec<(u64, u64)>, u64)>,
    /// Per flow (sorted by flow): its group's ramp and cap, and once it started, when and its
    /// group-cap deadline (ps).
    flows: Vec<OnsetFlow>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct OnsetFlow {
    flow: u32,
    ramp: u32,
    cap_bps: u64,
    start_ps: u64,
    deadline_ps: u64,
}

impl Onsets {
    fn find(&self, f: u32) -> Option<usize> {
        self.flows.binary_search_by_key(&f, |o| o.flow).ok()
    }

    /// Flow `f` starts at `now` with `work` (bits x 10^12): when its first step is due (`None`:
    /// `f` has no onset, its group cap holds from its start).
    pub fn start(&mut self, f: u32, now: u64, work: u128) -> Option<u64> {
        let i = self.find(f)?;
        let o = &mut self.flows[i];
        o.start_ps = now;
        let drain = work.div_ceil(o.cap_bps.max(1) as u128);
        o.deadline_ps = now.saturating_add(drain.min(u64::MAX as u128) as u64);
        let (steps, hold) = &self.ramps[o.ramp as usize];
        Some(now + steps.first().map_or(*hold, |s| s.0))
    }

    /// Flow `f`'s cap from its step `step` (due now, `now`), with `left` work units left to
    /// deliver: the cap (bit/s; `u64::MAX`: none) and when its next step is due. The last step
    /// drains `left` by the group cap's deadline.
    pub fn step(&self, f: u32, step: u32, now: u64, left: u128) -> (u64, Option<u64>) {
        let Some(i) = self.find(f) else {
            return (u64::MAX, None);
        };
        let o = self.flows[i];
        let (steps, hold) = &self.ramps[o.ramp as usize];
        match steps.get(step as usize) {
            Some(&(_, bps)) => {
                let next = steps.get(step as usize + 1).map_or(*hold, |s| s.0);
                (bps, Some(o.start_ps + next))
            }
            None if o.deadline_ps > now => {
                let cap = left.div_ceil((o.deadline_ps - now) as u128);
                (cap.min(u64::MAX as u128).max(1) as u64, None)
            }
            None => (u64::MAX, None),
        }
    }
}

/// The ramp of a group's flows ([`Onsets`]): the reaction point's `rates` (per QP, from the
/// model's start) split over `flows_per_qp` subflows while above `fair_bps` (a QP's fair
/// share of the egress), and when the first at or below it comes (the last rate's time when
/// none does).
fn ramp(rates: &[(u64, u64)], fair_bps: u64, flows_per_qp: u32) -> (Vec<(u64, u64)>, u64) {
    let above = rates.iter().take_while(|r| r.1 > fair_bps).count();
    let steps = rates[..above]
        .iter()
        .map(|&(t, bps)| (t, bps / flows_per_qp.max(1) as u64))
        .collect();
    let hold = rates.get(above).or(rates.last()).map_or(0, |r| r.0);
    (steps, hold)
}

/// The flows (sorted by index) of the dependency-free messages that start together towards
/// one receiver faster than its link drains them, under the profile's DCQCN: each flow of such
/// a group drains its bytes over the group's modeled drain time, and its packets wait the
/// group's mean queueing delay at the egress; when those caps take hold ([`Onsets`]). Empty
/// without DCQCN or ECN. `msg_flow[m]` is message `m`'s first flow (its subflows follow),
/// `flows_per_qp` the subflows per QP, `loop_ps(m)` the feedback loop of `m`'s QP.
pub fn synchronized_caps(
    topo: &Topology,
    p: &SimParams,
    dag: &MessageDag,
    msg_flow: &[u32],
    flows_per_qp: u32,
    loop_ps: impl Fn(usize) -> u64,
) -> (Vec<GroupFlow>, Onsets) {
    let mut onsets = Onsets::default();
    let (Some(d), Some(ecn)) = (&p.cc.dcqcn, &p.cc.ecn) else {
        return (Vec::new(), onsets);
    };
    let line = |h: HostId| nic_line(topo, h);
    let offers = starters(topo, dag);
    let starter = |i: usize| offers[i] > 0;
    let offered = |i: usize| offers[i];
    let hosts = topo.num_hosts();
    // Receivers offered more than their line by their starters, over the whole run: only
    // their starters are grouped by start time (an all-to-all offers exactly the line).
    let mut into = vec![0u128; hosts];
    for (i, m) in dag.messages.iter().enumerate() {
        if starter(i) {
            into[m.dst.idx()] += offered(i) as u128;
        }
    }
    let mut cand: Vec<(u32, u64, u32)> = (0..dag.messages.len())
        .filter(|&i| starter(i))
        .filter(|&i| {
            let dst = dag.messages[i].dst;
            into[dst.idx()] > line(dst).bps() as u128
        })
        .map(|i| (dag.messages[i].dst.0, dag.messages[i].start.ps(), i as u32))
        .collect();
    cand.sort_unstable();
    let qpc = p.cc.qps_per_connection.max(1);
    let frame = p.mtu_frame_wire_bytes();
    let mut caps = Vec::new();
    for group in cand.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
        let members: Vec<usize> = group.iter().map(|g| g.2 as usize).collect();
        let egress = line(HostId(group[0].0)).bps();
        let offered_bps = members.iter().map(|&i| offered(i)).min().unwrap_or(0);
        // Each QP of a message is a reaction point of its own (NCCL's split over QPs).
        let qps: u64 = members
            .iter()
            .map(|&i| entropy::parts(dag.messages[i].bytes, qpc) as u64)
            .sum();
        let per_qp = |i: usize| {
            let m = &dag.messages[i];
            paths::wire_bytes(p, m.bytes) / entropy::parts(m.bytes, qpc) as u64
        };
        if qps < 2 || (qps as u128) * offered_bps as u128 <= egress as u128 {
            continue;
        }
        let bytes = members.iter().map(|&i| per_qp(i)).sum::<u64>() / members.len() as u64;
        let first = members[0];
        let inc = Incast {
            senders: qps as u32,
            bytes,
            offered_bps,
            nic_line: line(dag.messages[first].src),
            egress_bps: egress,
            loop_ps: loop_ps(first),
            frame_bytes: frame,
        };
        let (out, rp_rates) = rates(&inc, d, ecn);
        // Below a feedback loop of extra time the model resolves no cost.
        let cap_bps = if out.drain_ps <= out.ideal_ps + inc.loop_ps {
            u64::MAX
        } else {
            let group = (bytes as u128 * 8 * 1_000_000_000_000 / out.drain_ps as u128) as u64;
            (group / flows_per_qp.max(1) as u64).max(1)
        };
        let resend = resend_wait(&out, cap_bps, d);
        let ramp_id = onsets.ramps.len() as u32;
        if cap_bps != u64::MAX {
            onsets
                .ramps
                .push(ramp(&rp_rates, egress / qps, flows_per_qp));
        }
        for &i in &members {
            let parts = entropy::parts(dag.messages[i].bytes, qpc) as u32;
            let f0 = msg_flow[i];
            let flows = f0..f0 + parts * flows_per_qp;
            caps.extend(flows.clone().map(|flow| GroupFlow {
                flow,
                cap_bps,
                resend,
            }));
            if cap_bps != u64::MAX {
                onsets.flows.extend(flows.map(|flow| OnsetFlow {
                    flow,
                    ramp: ramp_id,
                    cap_bps,
                    start_ps: 0,
                    deadline_ps: 0,
                }));
            }
        }
    }
    caps.sort_unstable_by_key(|c| c.flow);
    onsets.flows.sort_unstable_by_key(|o| o.flow);
    (caps, onsets)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::dcqcn::DcqcnSet;

    fn inc(senders: u32, bytes: u64) -> Incast {
        Incast {
            senders,
            bytes,
            offered_bps: 400_000_000_000,
            nic_line: BitRate::gbps(400),
            egress_bps: 400_000_000_000,
            loop_ps: 4_000_000,
            frame_bytes: 4_200,
        }
    }

    fn red() -> EcnMarking {
        EcnMarking::Red {
            kmin_bytes: 150_000,
            kmax_bytes: 1_500_000,
            pmax: 1.0,
        }
    }

    #[test]
    fn a_burst_that_fits_before_the_first_cut_pays_nothing() {
        // 8 senders of 16 KB at 400 Gb/s put their bytes on the wire in 0.33 us, before the
        // first CNP (one feedback loop, 4 us): the egress drains 128 KB at line rate.
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let out = drain(&inc(8, 16_384), &d, &red());
        assert_eq!(out.cuts, 0);
        assert!(out.drain_ps <= out.ideal_ps + 2 * STEP_PS, "{out:?}");
        // Bytes arriving at 8 C for T = 16 KB / C = 0.328 us find a queue of 7 C t: they wait
        // 7 T / 2 = 1.147 us on average; the fluid counts a step's arrivals behind the queue at
        // its start, up to 7 steps' bytes fewer.
        let exact = 7.0 * 16_384.0 * 8.0 / 400e9 / 2.0 * 1e12;
        let wait = out.mean_wait_ps as f64;
        assert!(
            wait <= exact && wait >= exact - 7.0 * STEP_PS as f64,
            "{out:?}"
        );
    }

    #[test]
    fn a_sender_alone_under_its_egress_is_never_marked() {
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let mut one = inc(1, 1 << 20);
        one.offered_bps = 200_000_000_000;
        let out = drain(&one, &d, &red());
        // Frames arrive whole: at most one waits behind another.
        assert_eq!(out.cnps, 0);
        assert!(out.peak_queue_bytes < one.frame_bytes, "{out:?}");
        // Nothing waits longer than a frame's time at the egress (84 ns).
        assert!(out.mean_wait_ps <= 84_000, "{out:?}");
        // At 200 Gb/s: 2 x (1 MB at 400 Gb/s) = 41.9 us (the egress drains what arrives).
        assert!(out.drain_ps.abs_diff(41_943_040) <= 2 * STEP_PS, "{out:?}");
    }

    #[test]
    fn a_resend_waits_the_timer_only_after_a_burst_that_was_cut_while_queued() {
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        // 99 x 256 KB put on the wire in 5.2 us, before the first CNP: no cap, but the 25 MB
        // queue drains for 0.5 ms above Kmin, so every QP is cut while its packets wait.
        let burst = drain(&inc(99, 256 << 10), &d, &red());
        assert!(burst.drain_ps <= burst.ideal_ps + 4_000_000, "{burst:?}");
        assert!(burst.cuts > 0, "{burst:?}");
        let t = d.rate_increase_timer.ps();
        assert_eq!(resend_wait(&burst, u64::MAX, &d), ResendWait::AfterTimer(t));
        // 8 x 16 KB never reach Kmin: no cut, a resend waits the (sub-us) queue per NAK.
        let small = drain(&inc(8, 16_384), &d, &red());
        assert_eq!(
            resend_wait(&small, u64::MAX, &d),
            ResendWait::PerNak(small.mean_wait_ps)
        );
        // 32 x 1 MB are capped (paced at their cut rate while sending): per NAK.
        let long = drain(&inc(32, 1 << 20), &d, &red());
        assert_eq!(
            resend_wait(&long, 1_000_000_000, &d),
            ResendWait::PerNak(long.mean_wait_ps)
        );
    }

    #[test]
    fn the_reaction_point_is_first_cut_a_monitor_period_after_its_first_cnp() {
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let i = inc(32, 1 << 20);
        let (out, rates) = rates(&i, &d, &red());
        assert_eq!(out, drain(&i, &d, &red()));
        let (t, bps) = rates[0];
        // A CNP comes back one feedback loop after a packet at the earliest, and the decrease
        // waits for the next monitor period's tick (`Rp::on_cnp`, `decrease_on_tick`).
        let period = d.rate_decrease_interval.ps();
        assert!(t >= i.loop_ps + period, "{rates:?}");
        // The cut is rc (1 - α/2) from the line, α from its initial value α0 (the first CNP)
        // decayed by (1 - g) per α period without a CNP since, at most the monitor period's.
        let q20 = fabricsim_mech::dcqcn::Q20 as f64;
        let (a0, g) = (d.initial_alpha_q20 as f64 / q20, d.g_q20 as f64 / q20);
        let a = a0 * (1.0 - g).powi((period / d.alpha_update.ps()) as i32);
        let line = 400e9;
        assert!(
            bps as f64 >= line / 2.0 && bps as f64 <= line * (1.0 - a / 2.0),
            "{bps}"
        );
        // While the start-up queue drains, a cut per monitor period at most.
        for w in rates.windows(2).take(4) {
            assert!(w[1].1 < w[0].1 && w[1].0 - w[0].0 >= period, "{rates:?}");
        }
    }

    #[test]
    fn a_ramp_keeps_the_rates_above_the_fair_share_and_holds_at_the_first_below() {
        let r = [(10, 200), (14, 104), (22, 55), (26, 29)];
        // Two subflows per QP: each half its QP's rate.
        assert_eq!(ramp(&r, 50, 2), (vec![(10, 100), (14, 52), (22, 27)], 26));
        // Never at or below the fair share: the cap holds from the last rate's time.
        assert_eq!(ramp(&r, 10, 1), (r.to_vec(), 26));
        assert_eq!(ramp(&[], 10, 1), (vec![], 0));
    }

    #[test]
    fn an_onset_steps_through_its_ramp_then_drains_what_is_left_by_the_group_caps_deadline() {
        const PS: u128 = 1_000_000_000_000;
        let mut o = Onsets {
            ramps: vec![(
                vec![(10_000_000, 200 << 30), (14_000_000, 100 << 30)],
                22_000_000,
            )],
            flows: vec![OnsetFlow {
                flow: 7,
                ramp: 0,
                cap_bps: 8_000_000_000,
                start_ps: 0,
                deadline_ps: 0,
            }],
        };
        let work = 1_000_000u128 * 8 * PS;
        assert_eq!(o.start(3, 5, work), None);
        assert_eq!(o.start(7, 1_000_000, work), Some(11_000_000));
        assert_eq!(
            o.step(7, 0, 11_000_000, work),
            (200 << 30, Some(15_000_000))
        );
        assert_eq!(
            o.step(7, 1, 15_000_000, work),
            (100 << 30, Some(23_000_000))
        );
        // 1 MB at the group cap, 8 Gb/s, ends 1 ms after the start (1,001 us): at 23 us with
        // 900 KB left, 7.2 Mbit over 978 us = 7.3620 Gb/s (rounded up).
        let left = 900_000u128 * 8 * PS;
        assert_eq!(o.step(7, 2, 23_000_000, left), (7_361_963_191, None));
        // Past the deadline: uncapped.
        assert_eq!(o.step(7, 2, 2_000_000_000, left), (u64::MAX, None));
    }

    #[test]
    fn synchronized_long_senders_are_over_cut() {
        // 32 x 1 MB at 400 Gb/s into 400 Gb/s: the start-up queue passes Kmax before the
        // first cut, so every sender is cut once per 4 us monitor period while it drains.
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let out = drain(&inc(32, 1 << 20), &d, &red());
        assert!(out.cuts >= 2 && out.peak_queue_bytes > 1_500_000, "{out:?}");
        assert!(out.drain_ps > out.ideal_ps, "{out:?}");
    }
}
