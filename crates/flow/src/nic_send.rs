//! The sender NIC's send stage: its per-QP round robin injects bytes at a QP's share of the
//! line, not at the rate the fabric delivers them, and lossless back-pressure that reaches the
//! NIC holds all of its QPs.
//!
//! Mechanism. A NIC serves the QPs that have data one packet each in turn (the packet engine's
//! `sim::engine::nic_tx`; ConnectX's per-QP send arbitration). A QP whose flow is bottlenecked
//! downstream (an incast flow) keeps getting its turn while the switch buffers absorb what it
//! puts on the wire, so it takes its round-robin share of the line, not its max-min delivery
//! rate, and a victim QP of the same NIC gets only its own share. Once that QP's backlog fills
//! what the lossless hops can hold for it (credits per VL, IBA Vol. 1 7.9; PFC XOFF, IEEE
//! 802.1Qbb), the ingress after the NIC's link is full of its bytes and the link waits for
//! credits (or is paused): credits come back as the held flow drains, and the round robin
//! hands them to its QPs in turn, so every QP of the NIC moves about at the held flow's rate
//! (congestion spreading: Pfister & Norton, "Hot spot contention and combining in multistage
//! interconnection networks", 1985; the victim flow of Zhu et al., "Congestion Control for
//! Large-Scale RDMA Deployments", SIGCOMM 2015, 2.2).
//!
//! The model, per sender NIC (lossless fabrics), over its flows that still have bytes to put
//! on the wire (*injecting*; a QP's subflows count as flows, each with its share):
//! - A flow is *slow* when its max-min (delivery) rate is below its share of the line and not
//!   set by this model's cap: its bytes queue in the fabric (backlog = injected - delivered).
//! - *Absorbing*: with a slow flow and none held, the line is water-filled over the injecting
//!   flows (each at most its own cap: a rate limiter, `dcqcn_incast`): a slow flow injects at
//!   its share, the others are capped at it.
//! - *Held*: a slow flow's backlog fills, from its bottleneck back, the ingresses of its route
//!   before that link (the ends of its links up to the one before its first full link), each
//!   up to its hold threshold `W` (`hol`'s: credits per VL or PFC XOFF) over the flows on the
//!   link into it; what the ingresses past the first switch cannot hold waits in the first
//!   switch's ingress, which every slow flow of the NIC (and every subflow of an adaptive QP)
//!   fills together. Once that ingress holds `W`, the NIC's link waits for credits: the flows
//!   overflowing into it inject at their delivery rates, and the round robin serves every
//!   other injecting flow at their mean rate (the rate credits come back at, per flow), capping
//!   the others at it.
//! - A flow that has put all its bytes on the wire leaves the round robin (its backlog drains
//!   at its delivery rate, uncapped).
//! - While the NIC caps its flows, a flow delivered at its share stays slow: the caps may be
//!   what let it reach the share (an egress served per input port, `maxmin`), and lifting them
//!   flipped the rates back (a dense all-to-all's flows within a leaf ended early).
//! The state changes at a NIC's events (a flow starts or ends, a rate changes, an injection
//! ends, a backlog reaches a hold; only the last two are scheduled, and only while the NIC has
//! a slow flow); an update costs the NIC's flows, and a cap change re-solves as finishing the
//! flow and starting it again would (`MaxMin::set_cap`). A solve that changes the rates of
//! many flows on NICs of many flows costs their product, so the model is on while at most
//! `calibration::LOSSLESS_MODELS_MAX_ACTIVE` flows are active at once (`NicSend::lift` ends it):
//! a lossless 16 KB all-to-all among 256 GPUs (65,280 flows at once) takes 0.40 s with it,
//! among 1,024 GPUs (1.05 M) it did not end in 300 s (`fabricsim-lab ports N`, release,
//! port service off, loaded machine).
//!
//! Measured (`fabricsim-lab nicshare`, `nicsend-trace`, `hol-trace`; ib-ndr, 1 MB
//! victims from the NIC of a 1 MB incast flow), packet / flow (flow before this model):
//! - 128 GPUs, 32:1, 256 KB per VL (adaptive routing): the NIC is never held; the victim gets
//!   half the line until the incast QP has put its 1 MB on the wire: 44.8 / 44.8 us (24.4); a
//!   4 MB victim 108.1 / 110.3 us (89.9);
//! - the same at 64 KB per VL: the NIC is held 461 us; 534.6 / 399.8 us (24.4). The packet
//!   engine holds it sooner than the model, after ~180 KB of the incast QP's backlog (a 256 KB
//!   victim: 152.5 / 13.1 us): adaptive routing's bytes wait in fewer ingresses than the
//!   subflows' loads give them;
//! - 1,024 GPUs, 99:1 (the `hol-trace` case, 8 victims, 4 from incast senders' NICs):
//!   adaptive routing 44.8 / 44.8 us (25.4 and 23.8); D-mod-K 1,875-1,883 / 1,457.6 us (23.7):
//!   the NIC sends both QPs' first ~300 KB at the line in 15 us, then waits for credits (the
//!   sender leaf's ingress holds 256 KB of the incast flow), and the victim moves at the incast
//!   flow's rate, 3.0 Gb/s in the packet engine, where the spine's egress into the receiver's
//!   leaf serves its 31 input ports in turn and 4 incast flows share each, 4.2 Gb/s (400G / 96)
//!   in the flow engine, which shares inner egresses per flow (`rate_model`);
//! - roce-400g, 128 GPUs (DCQCN): 33.3 / 34.5 us (24.9 while `dcqcn_incast` capped the incast
//!   flow from its start, so it was never slow): the incast QP takes its share until DCQCN
//!   cuts it below that share, ~14 us, and its flow's cap now follows those cuts
//!   (`dcqcn_incast::Onsets`, [`NicSend::set_base_cap`]); 1,024 GPUs 42.2-48.4 / 43.2-48.2 us;
//!   without DCQCN at 1,024 GPUs 48.3 / 48.2 us (27.2).

use super::calibration::{NIC_SEND_RATE_TOL_BITS, NIC_SEND_SLACK};
use super::classes::Sharing;
use super::effect::{Ctx, Effect};
use super::event::Event;
use super::maxmin::NO_CAP;
use super::state::{NONE32, Progress};
use super::window::Window;
use fabricsim_mech::SimParams;

/// A flow's injection (work units: bits x 10^12, as `fluid`'s).
#[derive(Clone, Copy)]
struct Flow {
    nic: u32,
    /// Its cap before this model (route, rate limiter, `dcqcn_incast`).
    base_cap: u64,
    /// The cap this model set (`base_cap` when none).
    cap: u64,
    /// Work not yet put on the wire as of `at`, injected at `rate` since.
    left: u128,
    rate: u64,
    at: u64,
    /// Whether it was slow at the last update, and then its backlog and what the ingresses
    /// past the first switch hold for it (work units).
    slow: bool,
    backlog: u128,
    down: u128,
}

/// Per NIC: its active flows, the version of its pending event, whether it needs an update,
/// and whether its round robin capped its flows at the last update.
#[derive(Clone, Default)]
struct Nic {
    flows: Vec<u32>,
    ver: u32,
    dirty: bool,
    round: bool,
}

/// The send stage of every sender NIC.
pub struct NicSend {
    flows: Vec<Flow>,
    nics: Vec<Nic>,
    dirty: Vec<u32>,
    /// The hold threshold of a switch ingress.
    window: Window,
    scratch: Vec<u64>,
    /// Caps set or lifted that could move the rates.
    caps_set: u64,
}

/// The effect: flows join their NIC as they start and leave as they drain; after a solve the
/// NICs it touched set their caps (`recap`), and a NIC's next change is an `Event::NicSend`.
impl Effect for NicSend {
    fn flow_start(&mut self, cx: &Ctx, f: u32, nic: u32, cap: u64, work: u128) {
        self.add(f, nic, cap, work, cx.now);
    }

    #[inline]
    fn rerate(&mut self, f: u32, _before: Progress, _after: Progress) {
        self.rerated(f);
    }

    fn recap(&mut self, cx: &mut Ctx) -> bool {
        let (flows, events) = (&cx.flows, &mut cx.events);
        let delivery = |f: u32, rate: u64, now: u64| flows[f as usize].left_at(rate, now);
        self.update(cx.now, &mut cx.solver, &delivery, |at, nic, ver| {
            events
                .entry(at)
                .or_default()
                .push(Event::NicSend { nic, ver })
        })
    }

    fn flow_end(&mut self, _cx: &Ctx, f: u32) {
        self.remove(f);
    }

    /// NIC `nic`'s send stage changes now if event version `ver` is current.
    fn event(&mut self, cx: &mut Ctx, ev: Event) -> Option<(u32, u64)> {
        if let Event::NicSend { nic, ver } = ev
            && self.due(nic, ver)
        {
            cx.defer(0);
        }
        None
    }

    fn cap_changed(&mut self, cx: &mut Ctx, f: u32, cap: u64) {
        self.set_base_cap(f, cap);
        cx.defer(0);
    }

    fn lossless_model(&self) -> bool {
        true
    }

    fn end(&mut self, cx: &mut Ctx) -> bool {
        self.lift(&mut cx.solver);
        cx.stats.nic_caps = self.caps_set();
        true
    }

    fn finish(&mut self, cx: &mut Ctx) {
        cx.stats.nic_caps = self.caps_set();
    }
}

impl NicSend {
    /// The model for `p`'s flow control over `flows` flows from `hosts` NICs; `None` on a lossy
    /// fabric (a full buffer drops: nothing holds the NIC).
    pub fn new(p: &SimParams, hosts: usize, flows: u32) -> Option<NicSend> {
        let window = Window::of(p)?;
        let idle = Flow {
            nic: NONE32,
            base_cap: NO_CAP,
            cap: NO_CAP,
            left: 0,
            rate: 0,
            at: 0,
            slow: false,
            backlog: 0,
            down: 0,
        };
        Some(NicSend {
            flows: vec![idle; flows as usize],
            nics: vec![Nic::default(); hosts],
            dirty: Vec::new(),
            window,
            scratch: Vec::new(),
            caps_set: 0,
        })
    }

    /// Caps set or lifted so far (0: the model changed no rate).
    pub fn caps_set(&self) -> u64 {
        self.caps_set
    }

    /// Ends the model: every cap it set goes back to the flow's own (`fluid` drops the model
    /// when a run has too many flows active at once; the solve it is ending them in follows).
    pub fn lift(&self, solver: &mut Sharing) {
        for n in &self.nics {
            for &f in &n.flows {
                let fl = &self.flows[f as usize];
                if fl.cap != fl.base_cap {
                    solver.set_cap(f, fl.base_cap);
                }
            }
        }
    }

    fn touch(&mut self, h: u32) {
        let n = &mut self.nics[h as usize];
        if !n.dirty {
            n.dirty = true;
            self.dirty.push(h);
        }
    }

    /// Flow `f` of NIC `h` starts with `work` to send, capped at `cap` by its route.
    pub fn add(&mut self, f: u32, h: u32, cap: u64, work: u128, now: u64) {
        self.flows[f as usize] = Flow {
            nic: h,
            base_cap: cap,
            cap,
            left: work,
            rate: 0,
            at: now,
            slow: false,
            backlog: 0,
            down: 0,
        };
        self.nics[h as usize].flows.push(f);
        self.touch(h);
    }

    /// Flow `f`'s own cap changed to `cap` (`dcqcn_incast::Onsets`; the solver has it).
    pub fn set_base_cap(&mut self, f: u32, cap: u64) {
        let fl = &mut self.flows[f as usize];
        fl.base_cap = cap;
        fl.cap = cap;
        let h = fl.nic;
        if h != NONE32 {
            self.touch(h);
        }
    }

    /// Flow `f` has delivered its last byte.
    pub fn remove(&mut self, f: u32) {
        let h = std::mem::replace(&mut self.flows[f as usize].nic, NONE32);
        if h == NONE32 {
            return;
        }
        let fl = &mut self.nics[h as usize].flows;
        let i = fl.iter().position(|&g| g == f).expect("a NIC's flow");
        fl.swap_remove(i);
        self.touch(h);
    }

    /// Flow `f`'s max-min rate changed.
    pub fn rerated(&mut self, f: u32) {
        let h = self.flows[f as usize].nic;
        if h != NONE32 {
            self.touch(h);
        }
    }

    /// NIC event `(h, ver)` fell due: whether it is current (the NIC then needs an update).
    pub fn due(&mut self, h: u32, ver: u32) -> bool {
        if self.nics[h as usize].ver != ver {
            return false;
        }
        self.touch(h);
        true
    }

    /// Brings every NIC touched since the last call up to `now`: advances its flows' injection,
    /// sets its flows' caps in `solver` (`d(flow, rate, now)`: its undelivered work), and schedules its next change with
    /// `schedule(time, nic, version)`. Returns whether a cap changed (the rates need a solve).
    pub fn update(
        &mut self,
        now: u64,
        solver: &mut Sharing,
        d: &impl Fn(u32, u64, u64) -> u128,
        mut schedule: impl FnMut(u64, u32, u32),
    ) -> bool {
        let mut changed = false;
        let dirty = std::mem::take(&mut self.dirty);
        for &h in &dirty {
            self.nics[h as usize].dirty = false;
            let next = self.update_nic(h, now, solver, d, &mut changed);
            let n = &mut self.nics[h as usize];
            n.ver = n.ver.wrapping_add(1);
            if let Some(t) = next {
                schedule(t, h, n.ver);
            }
        }
        self.dirty = dirty;
        self.dirty.clear();
        changed
    }

    fn update_nic(
        &mut self,
        h: u32,
        now: u64,
        solver: &mut Sharing,
        d: &impl Fn(u32, u64, u64) -> u128,
        changed: &mut bool,
    ) -> Option<u64> {
        let flows = std::mem::take(&mut self.nics[h as usize].flows);
        let line = flows
            .first()
            .and_then(|&f| solver.routes().get(solver.route(f)).first())
            .map_or(0, |&l| solver.capacity(l));
        // Tolerance of a rate's integer floors (1 ppm of the line).
        let tol = line >> NIC_SEND_RATE_TOL_BITS;
        // Injection up to now, never behind delivery (a flow's bytes are on the wire before they
        // are delivered).
        for &f in &flows {
            let rate = solver.rate(f);
            let fl = &mut self.flows[f as usize];
            let sent = fl.rate as u128 * (now - fl.at) as u128;
            fl.left = fl.left.saturating_sub(sent).min(d(f, rate, now));
            fl.at = now;
        }
        // The line's round-robin share, water-filled over the injecting flows' own caps (sorted
        // only when one of them is below the equal share).
        self.scratch.clear();
        self.scratch.extend(
            flows
                .iter()
                .filter(|&&f| self.flows[f as usize].left > 0)
                .map(|&f| self.flows[f as usize].base_cap),
        );
        let equal = line / (self.scratch.len() as u64).max(1);
        let share = if self.scratch.is_empty() {
            NO_CAP
        } else if self.scratch.iter().all(|&c| c >= equal) {
            equal
        } else {
            self.scratch.sort_unstable();
            water_fill(line, self.scratch.iter().copied())
        };
        // Slow flows (injecting, delivery below their share and not set by this model's cap):
        // their backlog, what the ingresses past the first switch hold of it, and the rest,
        // which waits in the first switch's ingress (the one NIC link's credits or XOFF count).
        // While the round robin caps the NIC's flows, a flow delivered at its share (not by
        // this model's cap) stays slow: the caps are what brought it up to the share (a
        // receiver's egress served per input port gives its flows from within the leaf more
        // than their share, and those from other leaves less, until the caps hold the former
        // to it), and lifting them would undo that (the 128-GPU ib-ndr all-to-all's flows
        // within a leaf ended at 22.6 us, the packet engine's at 39.6 with the others:
        // `fabricsim-lab dense 128 16 --forced`).
        let was = self.nics[h as usize].round;
        let (mut first, mut over_n, mut over_sum) = (0u128, 0u64, 0u64);
        let mut slow_n = 0u32;
        for &f in &flows {
            let rate = solver.rate(f);
            let fl = self.flows[f as usize];
            let set_here = fl.cap < fl.base_cap && rate + tol >= fl.cap;
            let want = share.min(fl.base_cap);
            let slow = fl.left > 0
                && !set_here
                && (rate + tol < want || (was && rate <= want.saturating_add(tol)));
            let (backlog, down) = if slow {
                let backlog = d(f, rate, now).saturating_sub(fl.left);
                (backlog, self.held_past_first(solver, f))
            } else {
                (0, 0)
            };
            if slow {
                slow_n += 1;
                if backlog + NIC_SEND_SLACK >= down {
                    first += backlog - down.min(backlog);
                    over_n += 1;
                    over_sum += rate;
                }
            }
            let fl = &mut self.flows[f as usize];
            fl.slow = slow;
            fl.backlog = backlog;
            fl.down = down;
        }
        let window = self.window_work();
        let held = over_n > 0 && first + NIC_SEND_SLACK >= window;
        // The rate the round robin serves every injecting flow at: while the NIC is held, the
        // rate its credits come back at per flow (the overflowing flows' mean rate), else the
        // share; none when no flow is slow (the max-min rates are the NIC's own).
        let round = match (held, slow_n) {
            (true, _) => Some(over_sum / over_n),
            (false, 0) => None,
            (false, _) => Some(share),
        };
        let mut next = u64::MAX;
        // How fast the first ingress fills (absorbing): the overflowing flows' excess.
        let mut filling = 0u64;
        for &f in &flows {
            let rate = solver.rate(f);
            let fl = &mut self.flows[f as usize];
            let overflowing = fl.slow && fl.backlog + NIC_SEND_SLACK >= fl.down;
            let (inject, cap) = match round {
                Some(_) if fl.slow && held && overflowing => (rate, fl.base_cap),
                Some(r) if fl.slow => {
                    let inject = r.min(fl.base_cap).max(rate);
                    if overflowing {
                        filling += inject - rate;
                    } else if inject > rate {
                        // Its backlog reaches the ingresses past the first switch at this excess.
                        let gap = fl.down - fl.backlog;
                        next = next.min(now.saturating_add(ps(gap, inject - rate)));
                    }
                    (inject, fl.base_cap)
                }
                Some(r) if fl.left > 0 => (rate.min(r), fl.base_cap.min(r.max(1))),
                _ => (rate, fl.base_cap),
            };
            fl.rate = inject;
            if fl.left > 0 && inject > 0 {
                next = next.min(now.saturating_add(ps(fl.left, inject)));
            }
            if cap != fl.cap {
                fl.cap = cap;
                if solver.set_cap(f, cap) {
                    self.caps_set += 1;
                    *changed = true;
                }
            }
        }
        if !held && filling > 0 {
            next = next.min(now.saturating_add(ps(window.saturating_sub(first), filling)));
        }
        self.nics[h as usize].flows = flows;
        self.nics[h as usize].round = round.is_some();
        // Without a slow flow every flow injects at its delivery rate, and only a start, an
        // end or a rate change (each of which touches the NIC) can make one slow.
        (round.is_some() && next != u64::MAX).then_some(next)
    }

    /// The switch ingress's hold threshold in work units (an empty switch's, under a dynamic
    /// XOFF: alpha x its buffer, Choudhury & Hahne 1998).
    fn window_work(&self) -> u128 {
        self.window.work(0)
    }

    /// What the ingresses of `f`'s route past the first switch and before its first full link
    /// hold for it (work units): each's window over the flows on the link into it.
    fn held_past_first(&self, solver: &Sharing, f: u32) -> u128 {
        let links = solver.routes().get(solver.route(f));
        let w = self.window_work();
        let mut c = 0u128;
        // The ingress at the end of link i holds what waits for link i + 1; the last ingress is
        // the receiving NIC's, which drains at line rate.
        for (i, &l) in links.iter().enumerate().skip(1) {
            if full(solver, l) || i + 1 == links.len() {
                break;
            }
            c += w / solver.load(l).max(1) as u128;
        }
        c
    }
}

/// Whether `l` is full in the max-min solution (its rates are floors: under 1 bit/s a flow).
fn full(solver: &Sharing, l: u32) -> bool {
    let n = solver.load(l) as u64;
    n >= 1 && solver.used_bps(l) + n >= solver.capacity(l)
}

/// The time (ps, rounded up) `work` takes at `rate` bit/s.
fn ps(work: u128, rate: u64) -> u64 {
    work.div_ceil(rate.max(1) as u128).min(u64::MAX as u128) as u64
}

/// The equal share of `line` over flows whose own caps are `caps` (ascending): a flow capped
/// below the share takes its cap, the others split the rest (`NO_CAP` when none inject).
fn water_fill(line: u64, caps: impl ExactSizeIterator<Item = u64>) -> u64 {
    let mut n = caps.len() as u64;
    if n == 0 {
        return NO_CAP;
    }
    let mut left = line;
    for c in caps {
        let share = left / n;
        if c >= share {
            return share;
        }
        left -= c;
        n -= 1;
    }
    NO_CAP
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_water_filled_over_the_flows_own_caps() {
        // 400 over 3 uncapped: 133; a flow capped at 100 leaves 300 to the other two: 150 each.
        assert_eq!(water_fill(400, [NO_CAP; 3].into_iter()), 133);
        assert_eq!(water_fill(400, [100, NO_CAP, NO_CAP].into_iter()), 150);
        assert_eq!(water_fill(400, std::iter::empty()), NO_CAP);
    }
}
