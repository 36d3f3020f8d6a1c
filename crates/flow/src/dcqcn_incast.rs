//! DCQCN's throughput cost under a synchronized incast: the flows of `n` identical senders that
//! start together into one congested egress are capped by the drain time of DCQCN's mean-field
//! model of them (`mean_field`; Zhu et al., "ECN or Delay: Lessons Learnt from Analysis of DCQCN
//! and TIMELY", CoNEXT 2016, §3).
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

use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{HostId, Topology};
use fabricsim_mech::dcqcn::DcqcnParams;
use fabricsim_mech::{SimParams, entropy};

use super::effect::{Ctx, Effect};
use super::event::Event;
use super::groups::{GroupFlow, ResendWait};
use super::mean_field::{Drain, Incast, nic_line, rates, starters};
use super::paths;

/// The effect: at setup, the groups' caps into `Ctx::groups` and their onsets; a group's flow
/// starts at its cap, or at its onset's first step (an `Event::Onset` per step).
#[derive(Default)]
pub struct DcqcnIncast {
    onsets: Onsets,
}

impl Effect for DcqcnIncast {
    fn setup(&mut self, cx: &mut Ctx) {
        let k = cx.paths.subflows();
        let (groups, onsets) =
            synchronized_caps(cx.topo, cx.p, cx.dag, &cx.msg_flow, k, |m| cx.loop_ps(m));
        cx.groups = groups;
        self.onsets = onsets;
    }

    #[inline]
    fn start_cap(&mut self, cx: &mut Ctx, f: u32, work: u128, cap: u64) -> u64 {
        match cx.groups.binary_search_by_key(&f, |c| c.flow) {
            Ok(_) if let Some(at) = self.onsets.start(f, cx.now, work) => {
                cx.push(at, Event::Onset { flow: f, step: 0 });
                cap
            }
            Ok(i) => cap.min(cx.groups[i].cap_bps),
            Err(_) => cap,
        }
    }

    /// Step `step` of flow `f`'s cap falls due.
    fn event(&mut self, cx: &mut Ctx, ev: Event) -> Option<(u32, u64)> {
        let Event::Onset { flow: f, step } = ev else {
            return None;
        };
        if !cx.solver.is_active(f) {
            return None;
        }
        let left = cx.flows[f as usize].left_at(cx.solver.rate(f), cx.now);
        let (cap, next) = self.onsets.step(f, step, cx.now, left);
        let cap = cap.min(cx.routes.get(cx.solver.route(f)).cap);
        if cx.solver.set_cap(f, cap) {
            cx.defer(0);
        }
        if let Some(at) = next {
            cx.push(
                at,
                Event::Onset {
                    flow: f,
                    step: step + 1,
                },
            );
        }
        Some((f, cap))
    }
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
    let (Some(d), Some(ecn)) = (p.cc.algo.dcqcn(), &p.cc.ecn) else {
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
    let qpc = p.cc.qps_per_message().max(1);
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
    use crate::mean_field::drain;
    use crate::mean_field::tests::{inc, red};
    use fabricsim_core::units::BitRate;
    use fabricsim_mech::dcqcn::DcqcnSet;

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
}
