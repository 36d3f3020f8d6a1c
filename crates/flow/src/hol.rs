//! Head-of-line blocking of victim flows under lossless back-pressure (PFC, credits): a flow
//! that shares a queue with an incast but not its receiver waits behind the incast's bytes in
//! that queue (the victim flow of Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, 2.2; congestion spreading, Pfister & Norton, "Hot spot
//! contention and combining in multistage interconnection networks", 1985).
//!
//! Mechanism. An egress into a NIC that is the bottleneck of two or more flows (a root: full in
//! the max-min solution) drains slower than its flows arrive, so its switch's ingress buffers
//! fill with their bytes. The ingress from link `d` then holds `W_d` (its credit buffer per VL,
//! or its PFC XOFF threshold) and `d`'s egress queue upstream sends only as the root drains
//! what came over `d`: it is held, and the root's bytes beyond `W_d` wait in it. The queue is one
//! FIFO per class (both engines carry every flow in one class), so a packet of another flow
//! that enters it behind them, bound for an egress with room, leaves only once they have gone.
//! In fluid terms: when a victim's last byte enters `d`'s queue at `t`, the root flows over
//! `d` have `B_d` wire bytes left in the solve and offer `A_d` beyond the rate `mu_d` they drain
//! at (the rates they reach alone, less their max-min rates), so since the first of them
//! started (`t_0`) the queue has built to `Q_d = min(A_d (t - t_0), B_d) - W_d` (the senders
//! push ahead until held); the victim's last byte waits `Q_d / mu_d`, and no longer than its
//! roots take to drain all they have left at their capacity (their rates rise as others
//! finish). A flow is a victim at `d` when its next hop after `d` is not full (else it is a
//! root flow, or shares a full egress with them, which max-min sharing already prices); the
//! waits of a route's held queues add up. `W_d` is the ingress's credit buffer per VL, a static
//! XOFF, or a dynamic XOFF's alpha x the buffer the roots' undrained bytes leave free (they are
//! taken to sit in the root's switch).
//!
//! Cost: per queue the model keeps its flows' sums grouped by last link (remaining work as a
//! linear function of time, max-min rates, offered rates, earliest start), updated as flows
//! start, change rate and finish, so a wait reads a queue's last links, not its flows (a scan
//! of the flows was about flows^2 per run: the default `compare --engine flow` took 534 s
//! with it on every run, 6.7 s without). It is on for every lossless run.
//!
//! Calibrated by `fabricsim-lab hol` (`tests/flow_xval.rs` asserts its "incast 32:1 +
//! victims", 128 GPUs): 1 MB victims into the receiver's leaf on ib-ndr, packet mean 418.6 us,
//! largest 434.2 (AR by normalized credits, the profile's; 332-503, mean 407.8, by least queued
//! bytes; alone 23.7), flow 426.0 us; roce-400g (128 MB buffer, DCQCN) pauses nothing,
//! 24.4 us on both. Limits, measured by the same command:
//! - one level of the congestion tree: the queues feeding `d` are held too, and a victim's own
//!   sending is held back while its bytes wait, which the fluid lets it drain: ib-ndr victims
//!   of 2, 4, 8 MB take 445, 496, 579 us, flow 426 us (by least queued bytes 561-674); a victim is also held at the sender's NIC it
//!   shares with an incast flow (the NIC's per-QP round robin: `flow::nic_send`'s, 44.8 us on
//!   both engines, 24.4 us flow before it);
//! - the ramp is a mean: ib-ndr 512 KB victims take 173 us, flow 109 (256 KB: 8.1 / 7.9; by
//!   least queued bytes 67.6 and 333 us);
//! - at 1,024 GPUs (99:1, `fabricsim-lab hol 1024 99` and `hol-trace`):
//!   - ib-ndr under the profile's AR by normalized credits (`sim::ibroute`, US 10,200,294 B2):
//!     a leaf's uplink into a spine whose downlink holds loses credits, so every leaf spreads
//!     the incast over all 16 spines, all 32 downlinks into the receiver's leaf hold 1.8-1.9
//!     ms, and the four victims into that leaf wait behind full queues: packet 1,873.7,
//!     1,849.1, 1,922.8, 1,870.4 us (mean 1,879.0), flow 2,035.1 each (mean +8.3%, largest
//!     +5.8%, asserted in `tests/flow_xval.rs`; the adaptive split looks one hop ahead as the
//!     credits do, `flow::paths`). Victim 0 alone with the incast 1,929.4 / 2,035.1 us, beside a
//!     flow from an incast sender's NIC 1,912.6 / 2,035.1, beside a second flow from its own NIC
//!     1,954.0 / 2,034.9. The rest of this item is the queue rule (`ar_select = "queue"`),
//!     whose victims wait for reasons outside this model;
//!   - ib-ndr by least queued bytes, traced packet by packet (`fabricsim-lab ar-trace`,
//!     `--features trace`): adaptive routing takes, in order from the static (D-mod-K) port, the
//!     first uplink with the fewest bytes queued or serializing (`ibroute::least_loaded`). An
//!     uplink whose spine still grants credits has nothing queued, so AR sees a spine's downlink queue only once the leaf's credit window there
//!     (256 KB per link) is used up and packets queue at the leaf; the credits of the chosen
//!     uplink fall (3,966 -> 1 blocks) while AR keeps choosing it. Every leaf's incast packets
//!     start their scan at the same port (destination 0: uplink 0), so all leaves fill the same
//!     spines first: their downlink queues into the receiver's leaf build from about 1 us,
//!     wait for credits once its ingress buffers are full (spines in scan order 1-2: 6.8 us,
//!     3-4: 11.5-16, 5: 17, 6: 19-22, 7: 23, 8: 32, 9: 38) and hold the incast's bytes for
//!     1.8-2.0 ms (spines 1-6), 0.1-0.2 ms (7-9), never (10-16: each sender leaf's 3-4 MB fit
//!     its 512 KB windows in 6-8 spines). A victim waits when its scan, from its own static port
//!     (destination mod 32: 1, 3, 5, 7), stops at an idle uplink into a spine whose queue is
//!     building; its last packet there waits behind what is queued ahead. The waits fall with
//!     the static port (2,050, 2,016, 1,026, 564 us; 138, 126, 67, 43 packets waited over 10
//!     us), as a later start meets spines filled later. Which uplinks are idle is decided by
//!     the leaf's own senders: alone with the incast, the leaf's 4 incast senders at line rate
//!     keep the low uplinks busy serializing, the victim's packets go to spines 3-9 before
//!     their queues build, and it is done (23.9 us) before they hold; beside a flow from an
//!     incast sender's NIC that sender's incast runs at half rate, uplink 3 is idle at 1.1 us
//!     and the victim's packets queue in spine 2 (up to 1,054 us); beside a second flow from
//!     its own NIC it sends until 42 us, finds uplinks 1-11 out of credits at 22 us and goes
//!     into spine 7 as it is held (178 us), and 5 packets into spines 1-4 when credits come
//!     back there (1,985 us). (Session 9's rule by raw most credits, without the length
//!     normalization's saturation and the local queue, spread the incast too and gave the
//!     four 895 us.) The flow engine's adaptive split spreads the incast and every victim over
//!     all 32 downlinks and charges each victim the whole queue (2,035 us): under this rule the
//!     bound (+44% on the case's mean of 1,414 us). Following it needs AR's scan order and the
//!     senders' line-rate burst in the placement (the incast stacked in the first spines, a
//!     subflow moved off a spine when its leaf's window there is full), not a change of this
//!     model. Under D-mod-K both engines give these victims 23.7 us (no incast on their
//!     downlinks), while the victims from a sender's NIC wait 1,875-1,883 us in the packet
//!     engine (the NIC's link held by its leaf's credits), 23.7 in the flow;
//!   - roce-400g: DCQCN cuts the victims (marked in queues they share with the incast's first
//!     burst): 164-771 us (mean 420), without DCQCN 48-485 us (mean 168), where only the
//!     victim behind a downlink of 5 incast flows is paused (485 us; flow 1,668: the model
//!     drains the held bytes at the roots' port share, while the leaf's dynamic XOFF rises as
//!     its buffer drains and lets them go sooner). With DCQCN the flow engine caps the incast
//!     below its egress (`dcqcn_incast`'s over-cut), so the egress is no root and nothing is
//!     held here: the victims' cut is a DCQCN effect, `dcqcn_victim`'s (traced by
//!     `fabricsim-lab victim-cnp`; flow 369.8, 166.8, 427.2, 369.8 us against packet 373.3,
//!     163.6, 771.0, 371.9: the 771 us victim also sits behind a downlink the leaf's PFC pauses
//!     for 356 us, which neither model sees with DCQCN on).

use std::collections::VecDeque;

use super::classes::Sharing;
use super::effect::{Ctx, Effect};
use super::paths;
use super::state::Progress;
use super::window::Window;
use fabricsim_core::topology::Topology;
use fabricsim_mech::SimParams;

/// The effect: flows join their queue's groups as they start, follow their rates and leave as
/// they drain; a last byte waits behind the held queues of its route.
impl Effect for Hol {
    fn flow_start(&mut self, cx: &Ctx, f: u32, _nic: u32, _cap: u64, _work: u128) {
        let now = flow_now(cx, f);
        self.add(cx.topo, f, cx.solver.routes().get(cx.solver.route(f)), now);
    }

    #[inline]
    fn rerate(&mut self, f: u32, before: Progress, after: Progress) {
        Hol::rerate(self, f, before, after);
    }

    fn flow_end(&mut self, cx: &Ctx, f: u32) {
        let now = flow_now(cx, f);
        self.remove(f, now);
    }

    fn arrival_delay_ps(&mut self, cx: &Ctx, r: u32) -> u64 {
        self.wait_ps(&cx.solver, cx.solver.routes().get(r), cx.now)
    }
}

/// Flow `f` as the model sees it.
fn flow_now(cx: &Ctx, f: u32) -> FlowNow {
    let fl = &cx.flows[f as usize];
    let k = cx.paths.subflows() as u64;
    FlowNow {
        progress: fl.progress(cx.solver.rate(f)),
        offered_bps: cx.routes.get(cx.solver.route(f)).line / k,
        sent_ps: cx.msgs[fl.msg as usize].sent,
    }
}

/// Per run: the active flows of each held-queue candidate grouped by their last link (the
/// roots a wait reads), kept up to date as flows start, change rate and finish, so a wait costs
/// the queue's last links, not its flows.
pub struct Hol {
    /// Per directed link `d`: the groups of flows whose route's next-to-last link it is and whose
    /// last link goes into a NIC, as (last link, group).
    queues: Vec<Vec<(u32, u32)>>,
    groups: Vec<Group>,
    /// Per directed link into a NIC: the remaining work of every flow that ends on it.
    lasts: Vec<Linear>,
    /// Per flow: its group (`NO_GROUP` when its route does not end into a NIC behind a switch).
    flow_group: Vec<u32>,
    /// What the ingress at a link's downstream end holds before it holds the link back.
    window: Window,
}

const NO_GROUP: u32 = u32::MAX;

/// The flows over one queue `d` that end on one link `e`.
struct Group {
    last: u32,
    /// Their remaining work and max-min rates.
    flows: Linear,
    /// The rates they would send at alone (bit/s).
    offered: u64,
    active: u32,
    /// Their start times (ps), ascending, with how many active flows started then: the first is
    /// when the earliest of them started.
    starts: VecDeque<(u64, u32)>,
}

/// A sum of flows' remaining work, linear in time between rate changes: at `t` it is
/// `base - rate x t`, with `base` the sum of each flow's `work + rate x at`.
#[derive(Clone, Copy, Default)]
struct Linear {
    base: u128,
    rate: u64,
}

impl Linear {
    fn add(&mut self, p: Progress) {
        self.base += p.base();
        self.rate += p.rate;
    }
    fn sub(&mut self, p: Progress) {
        self.base -= p.base();
        self.rate -= p.rate;
    }
    /// The remaining work at `t`. A flow whose drain falls at `t` and is not processed yet
    /// counts its rounding overshoot (under a bit, negative) where a per-flow clamp would count
    /// 0: the waits of every lossless `flow_xval` case and `fabricsim-lab hol` case are the
    /// same as with the per-flow scan, bit for bit.
    fn at(&self, t: u64) -> u128 {
        self.base.saturating_sub(self.rate as u128 * t as u128)
    }
}

/// What a root's flows over one queue add up to.
#[derive(Clone, Copy, Default)]
struct Roots {
    /// Remaining work (bits x 10^12).
    work: u128,
    /// Their max-min rates, and the rates they would send at alone (bit/s).
    rate: u64,
    offered: u64,
    /// When the first of them started.
    first_ps: u64,
}

/// A flow as the model sees it when it starts or finishes.
pub struct FlowNow {
    pub progress: Progress,
    /// The rate it reaches alone on its route (bit/s).
    pub offered_bps: u64,
    /// When its message started sending (ps): its start, as flows start when their message does.
    pub sent_ps: u64,
}

impl Hol {
    /// The model for `p`'s flow control over `flows` flows; `None` on a lossy fabric (a full
    /// buffer drops, so no queue is held back).
    pub fn new(topo: &Topology, p: &SimParams, flows: usize) -> Option<Hol> {
        let window = Window::of(p)?;
        Some(Hol::with_window(2 * topo.links.len(), flows, window))
    }

    fn with_window(links: usize, flows: usize, window: Window) -> Hol {
        Hol {
            queues: vec![Vec::new(); links],
            groups: Vec::new(),
            lasts: vec![Linear::default(); links],
            flow_group: vec![NO_GROUP; flows],
            window,
        }
    }

    /// Flow `f` starts on `links`.
    pub fn add(&mut self, topo: &Topology, f: u32, links: &[u32], now: FlowNow) {
        let [.., d, e] = *links else {
            return;
        };
        if !paths::into_nic(topo, e) {
            return;
        }
        let queue = &mut self.queues[d as usize];
        let g = match queue.iter().find(|q| q.0 == e) {
            Some(&(_, g)) => g,
            None => {
                let g = self.groups.len() as u32;
                queue.push((e, g));
                self.groups.push(Group {
                    last: e,
                    flows: Linear::default(),
                    offered: 0,
                    active: 0,
                    starts: VecDeque::new(),
                });
                g
            }
        };
        self.flow_group[f as usize] = g;
        let group = &mut self.groups[g as usize];
        group.flows.add(now.progress);
        group.offered += now.offered_bps;
        group.active += 1;
        match group.starts.back_mut() {
            Some(s) if s.0 == now.sent_ps => s.1 += 1,
            back => {
                debug_assert!(
                    back.is_none_or(|s| s.0 < now.sent_ps),
                    "flows start in time order"
                );
                group.starts.push_back((now.sent_ps, 1));
            }
        }
        self.lasts[e as usize].add(now.progress);
    }

    /// Flow `f`'s rate changed: its progress was `before`, is `after`.
    pub fn rerate(&mut self, f: u32, before: Progress, after: Progress) {
        let g = self.flow_group[f as usize];
        if g == NO_GROUP {
            return;
        }
        let group = &mut self.groups[g as usize];
        group.flows.sub(before);
        group.flows.add(after);
        let last = &mut self.lasts[group.last as usize];
        last.sub(before);
        last.add(after);
    }

    /// Flow `f` finishes (`now`: as it was added, with its latest progress).
    pub fn remove(&mut self, f: u32, now: FlowNow) {
        let g = std::mem::replace(&mut self.flow_group[f as usize], NO_GROUP);
        if g == NO_GROUP {
            return;
        }
        let group = &mut self.groups[g as usize];
        group.flows.sub(now.progress);
        group.offered -= now.offered_bps;
        group.active -= 1;
        let starts = &mut group.starts;
        let i = starts
            .binary_search_by_key(&now.sent_ps, |s| s.0)
            .expect("a flow's start is in its group");
        starts[i].1 -= 1;
        while starts.front().is_some_and(|s| s.1 == 0) {
            starts.pop_front();
        }
        if starts.len() > 2 * group.active as usize + 16 {
            starts.retain(|s| s.1 > 0);
        }
        self.lasts[group.last as usize].sub(now.progress);
    }

    /// Whether `l` is a root: full, and the bottleneck of two flows or more.
    fn full(solver: &Sharing, l: u32) -> bool {
        let n = solver.load(l);
        // Shares are floors: a full link's rates sum to its capacity less under 1 bit/s a flow.
        n >= 2 && solver.used_bps(l) + n as u64 >= solver.capacity(l)
    }

    /// The wait (ps) of a victim's last byte entering the held queues of `links` at `now`.
    pub fn wait_ps(&self, solver: &Sharing, links: &[u32], now: u64) -> u64 {
        let mut wait = 0u64;
        for hop in links.windows(2) {
            let (d, next) = (hop[0], hop[1]);
            let queue = &self.queues[d as usize];
            if queue.is_empty() || Self::full(solver, next) {
                continue;
            }
            let mut q = Roots {
                first_ps: u64::MAX,
                ..Roots::default()
            };
            // The queue's root bytes are through once every root has drained all it has left
            // at its full capacity, whatever the rates do meanwhile (other inputs finishing).
            let (mut bound, mut backlog) = (0u64, 0u128);
            for &(e, g) in queue {
                let r = &self.groups[g as usize];
                if e == next || r.active == 0 || !Self::full(solver, e) {
                    continue;
                }
                q.work += r.flows.at(now);
                q.rate += r.flows.rate;
                q.offered += r.offered;
                q.first_ps = q.first_ps.min(r.starts.front().map_or(u64::MAX, |s| s.0));
                let left = self.lasts[e as usize].at(now);
                backlog += left;
                let cap = solver.capacity(e).max(1) as u128;
                bound = bound.max((left / cap).min(u64::MAX as u128) as u64);
            }
            let window = self.window_work(backlog);
            wait += queue_wait_ps(&q, window, now).min(bound);
        }
        wait
    }

    /// The hold threshold `W` (work units) of a root switch's ingress whose roots have
    /// `backlog` work left: under a dynamic XOFF, the senders' bytes the roots have not drained
    /// yet are taken to sit in the switch's buffer (an upper bound on its use).
    fn window_work(&self, backlog: u128) -> u128 {
        self.window.work(backlog)
    }
}

/// The wait behind the root flows `q` queued at one held queue at `now`, with the ingress past
/// it holding `window` (work units): that ingress fills at the roots' excess rate (what they
/// offer beyond what they drain) from their first start, then the queue grows at that rate up
/// to what they have left beyond the window, and drains at their rates.
fn queue_wait_ps(q: &Roots, window: u128, now: u64) -> u64 {
    let excess = q.offered.saturating_sub(q.rate) as u128;
    if q.rate == 0 || excess == 0 {
        return 0;
    }
    // Work units: bits x 10^12, so a rate (bit/s) times ps.
    let building = excess * now.saturating_sub(q.first_ps) as u128;
    let queued = building.min(q.work).saturating_sub(window);
    (queued / q.rate as u128).min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::PS_PER_S;

    /// Work units of `bytes` (bits x 10^12).
    fn work(bytes: u64) -> u128 {
        bytes as u128 * 8 * PS_PER_S
    }

    #[test]
    fn the_queue_builds_at_the_excess_rate_then_holds_what_the_roots_have_left_past_the_window() {
        // 3 roots of 1 MB over the queue, offered 400 Gb/s each, draining 10 Gb/s each: excess
        // 1,170 Gb/s. Window 256 KB.
        let q = Roots {
            work: work(3_000_000),
            rate: 30_000_000_000,
            offered: 1_200_000_000_000,
            first_ps: 1_000_000,
        };
        let w = work(256_000);
        // Before the window is full (256 KB x 8 / 1,170 Gb/s = 1.75 us after the start): no wait.
        assert_eq!(queue_wait_ps(&q, w, 2_000_000), 0);
        // 10 us after the start: 1,170 Gb/s x 10 us = 1.4625 MB built, 1.2065 MB past the window,
        // drained at 30 Gb/s: 321.7333 us.
        assert_eq!(queue_wait_ps(&q, w, 11_000_000), 321_733_333);
        // Long after: what they have left, 3 MB - 256 KB, at 30 Gb/s: 731.7333 us.
        assert_eq!(queue_wait_ps(&q, w, 1_000_000_000), 731_733_333);
        // Roots that offer no more than they drain build no queue.
        let even = Roots {
            offered: q.rate,
            ..q
        };
        assert_eq!(queue_wait_ps(&even, w, 1_000_000_000), 0);
    }

    #[test]
    fn a_dynamic_xoff_is_alpha_times_the_buffer_the_roots_leave_free() {
        // alpha 1/8 of a 128 MB buffer (roce-400g): 16 MB when empty; with 96 MB of the roots'
        // bytes in it, 4 MB; full, 0 (Choudhury & Hahne 1998).
        let h = |window| Hol::with_window(0, 0, window);
        let mb = 1u64 << 20;
        let dynamic = h(Window::Dynamic {
            alpha: 0.125,
            buffer: 128 * mb,
        });
        assert_eq!(dynamic.window_work(0), work(16 * mb));
        assert_eq!(dynamic.window_work(work(96 * mb)), work(4 * mb));
        assert_eq!(dynamic.window_work(work(200 * mb)), 0);
        assert_eq!(
            h(Window::Fixed(262_144)).window_work(work(96 * mb)),
            work(262_144)
        );
    }
}
