//! DCQCN's mean-field fluid model: the reaction points of `n` identical senders that start
//! together into one congested egress, and that egress's queue over time. A shared model, not an
//! effect: `dcqcn_incast` caps a synchronized group by its drain, `dcqcn_victim` marks victims
//! by its queue, `pfc_pause` pauses the queues it fills.
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

use std::collections::VecDeque;

use fabricsim_core::message::{Message, MessageDag, Path};
use fabricsim_core::topology::{HostId, Topology};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::dcqcn::{DcqcnParams, Rp, RpAction};
use fabricsim_mech::ecn::EcnMarking;

use super::calibration::{MEAN_FIELD_HORIZON_PS, MEAN_FIELD_STEP_PS};

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

/// Expected marking probability of a packet leaving a queue of `q` bytes (the packet engine's
/// `marking::red` and `marking::step` rules as an expectation).
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
    let c_bytes = inc.egress_bps as f64 / 8.0 * MEAN_FIELD_STEP_PS as f64 * 1e-12;
    let half = (inc.loop_ps / 2).div_ceil(MEAN_FIELD_STEP_PS).max(1) as usize;
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
        let end = t + MEAN_FIELD_STEP_PS;
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
        if idle || t >= MEAN_FIELD_HORIZON_PS {
            break;
        }
        // Nothing queued or on its way: skip to the next frame or timer, on the step grid.
        if q <= 0.0 && cnps_in_flight.is_empty() && in_flight.iter().all(|&b| b == 0.0) {
            let wake = r.next_due().map_or(next_send, |x| x.min(next_send));
            t += wake.saturating_sub(t) / MEAN_FIELD_STEP_PS * MEAN_FIELD_STEP_PS;
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
    let starter = |m: &Message| m.path == Path::Net && m.deps_len == 0 && m.bytes > 0;
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use fabricsim_mech::dcqcn::DcqcnSet;

    pub(crate) fn inc(senders: u32, bytes: u64) -> Incast {
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

    pub(crate) fn red() -> EcnMarking {
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
        assert!(
            out.drain_ps <= out.ideal_ps + 2 * MEAN_FIELD_STEP_PS,
            "{out:?}"
        );
        // Bytes arriving at 8 C for T = 16 KB / C = 0.328 us find a queue of 7 C t: they wait
        // 7 T / 2 = 1.147 us on average; the fluid counts a step's arrivals behind the queue at
        // its start, up to 7 steps' bytes fewer.
        let exact = 7.0 * 16_384.0 * 8.0 / 400e9 / 2.0 * 1e12;
        let wait = out.mean_wait_ps as f64;
        assert!(
            wait <= exact && wait >= exact - 7.0 * MEAN_FIELD_STEP_PS as f64,
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
        assert!(
            out.drain_ps.abs_diff(41_943_040) <= 2 * MEAN_FIELD_STEP_PS,
            "{out:?}"
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
    fn synchronized_long_senders_are_over_cut() {
        // 32 x 1 MB at 400 Gb/s into 400 Gb/s: the start-up queue passes Kmax before the
        // first cut, so every sender is cut once per 4 us monitor period while it drains.
        let d = DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400));
        let out = drain(&inc(32, 1 << 20), &d, &red());
        assert!(out.cuts >= 2 && out.peak_queue_bytes > 1_500_000, "{out:?}");
        assert!(out.drain_ps > out.ideal_ps, "{out:?}");
    }
}
