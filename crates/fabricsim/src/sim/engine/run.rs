//! The event loop: pop the earliest event, dispatch it, check the stop conditions.

use std::time::Instant;

use super::fcmode::{CreditsOn, FcMode, Lossy, Mode, PfcOn};
use super::{
    CHECK_EVERY, Engine, Ev, P_NIC, Progress, RouteMemo, RunOptions, TAG_ARRIVE, TAG_TXFREE, tag,
};
use crate::sim::packet::{NIL, prefetch, prefetch_all};
use crate::sim::params::RoutePolicy;
use crate::sim::queue::Packed;
use crate::sim::results::{RunResult, Status};
use crate::sim::route;
use crate::units::Time;

impl Engine<'_> {
    /// Runs to the end (or `until`, or a stop from the progress callback) and returns the results.
    pub fn run(mut self, mut opts: RunOptions) -> RunResult {
        let wall = Instant::now();
        let mut status = match self.fc.mode() {
            Mode::Lossy => self.event_loop::<Lossy>(&mut opts),
            Mode::Pfc => self.event_loop::<PfcOn>(&mut opts),
            Mode::Credits => self.event_loop::<CreditsOn>(&mut opts),
        };
        if status == Status::Complete && self.remaining > 0 {
            status = Status::Unfinished;
        }
        let wall_s = wall.elapsed().as_secs_f64();
        self.finish(status, wall_s)
    }

    /// The loop of `run`, compiled once per flow-control mode `M` (`fcmode`).
    fn event_loop<M: FcMode>(&mut self, opts: &mut RunOptions) -> Status {
        let until = opts.until.map(|t| t.0).unwrap_or(u64::MAX);
        let mut status = Status::Complete;
        let mut next_check = CHECK_EVERY;
        loop {
            let (pkts, ports, tcq, ntc) = (&self.pkts, &self.ports, &self.tcq, self.ntc);
            let Some((t, x)) = self.q.q.pop_with(|x| match tag(x) {
                // SAFETY: an `Arrive` event's packet id came from the slab's `alloc`.
                TAG_ARRIVE => prefetch(unsafe { pkts.get_unchecked(x as u32) }),
                TAG_TXFREE => {
                    prefetch(&ports[x as u32 as usize]);
                    prefetch(&tcq[x as u32 as usize * ntc]);
                }
                _ => {}
            }) else {
                break;
            };
            if t > until {
                self.q.push(t, Ev::unpack(x));
                self.now = Time(until);
                status = Status::StoppedAtUntil;
                break;
            }
            self.now = Time(t);
            self.events += 1;
            self.prefetch_next::<M>();
            self.dispatch_packed::<M>(x);
            if self.stop {
                if self.fc.halt && self.remaining > 0 {
                    status = Status::Deadlock;
                }
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
        status
    }

    /// A software pipeline two events deep over the current bucket (whose packets and port
    /// headers were prefetched a bucket ahead, `CalendarQueue::pop_with`). For the event after
    /// next: an arrival is planned (`plan`); a port wake-up has its queues' head slots (a
    /// switch) or its NIC prefetched. For the next event, a switch arrival whose egress queue
    /// header is in cache by now: the queue's tail slot. The loads then overlap the work of the
    /// events before. Hints only: a wrong guess costs nothing but the load.
    #[inline(always)]
    fn prefetch_next<M: FcMode>(&mut self) {
        if let Some(x) = self.q.q.peek_current(0)
            && tag(x) == TAG_ARRIVE
        {
            let next = Self::memo_slot(self.events + 1);
            let m = self.memo[next];
            if m.pkt != x as u32 {
                self.memo[next] = self.plan::<M>(x as u32);
            } else if m.out != NIL {
                self.tcq[m.qi as usize].prefetch_tail(&self.queued);
            }
        }
        // The slot two events ahead gets the plan of the event after next, or is free again (a
        // rotation would copy all three).
        let ahead = Self::memo_slot(self.events + 2);
        let Some(x) = self.q.q.peek_current(1) else {
            self.memo[ahead].pkt = NIL;
            return;
        };
        if tag(x) == TAG_ARRIVE {
            self.memo[ahead] = self.plan::<M>(x as u32);
            return;
        }
        self.memo[ahead].pkt = NIL;
        if tag(x) == TAG_TXFREE {
            let pi = x as u32 as usize;
            let host = self.ports[pi].host;
            if host == NIL {
                for q in self.tcq.group(pi, self.ntc) {
                    q.prefetch_head(&self.queued);
                }
            } else {
                prefetch(&self.nics[host as usize]);
            }
        }
    }

    /// The first stage for an arrival of packet `pkt`: for a packet reaching a switch, the
    /// egress its static route picks (kept in the returned memo so the hop does not route
    /// again; none under adaptive routing), prefetching that egress, its queue header and the
    /// ingress's PFC record; for one reaching a NIC, its port and queue pair.
    #[inline(always)]
    fn plan<M: FcMode>(&self, pkt: u32) -> RouteMemo {
        let none = RouteMemo {
            pkt,
            out: NIL,
            qi: 0,
        };
        // SAFETY: an `Arrive` event's packet id came from the slab's `alloc`.
        let pk = unsafe { self.pkts.get_unchecked(pkt) };
        let info = self.info[pk.port as usize];
        if info.flags & P_NIC != 0 {
            prefetch_all(&self.qps[pk.qp as usize]);
            prefetch(&self.ports[pk.port as usize]);
            return none;
        }
        let (cands, up, salt) = self.routes.next_hops_up(self.topo, info.node, pk.dst);
        if cands.is_empty() {
            return none;
        }
        let k = route::choose(self.p.routing, cands.len(), pk.hash, pk.dst, salt, up);
        let out = cands[k].idx();
        let qi = out * self.ntc + pk.tc as usize;
        prefetch(&self.ports[out]);
        prefetch(&self.tcq[qi]);
        if let Some(pfc) = self.fc.pfc_ref::<M>() {
            pfc.prefetch(pk.port as usize, pk.tc as usize);
        }
        if self.p.routing == RoutePolicy::Adaptive {
            return none;
        }
        RouteMemo {
            pkt,
            out: out as u32,
            qi: qi as u32,
        }
    }

    /// The `memo` slot of the `n`-th event.
    #[inline(always)]
    pub(super) fn memo_slot(n: u64) -> usize {
        (n & 3) as usize
    }

    /// Dispatches a packed event: the packet hops and port wake-ups straight from their bits,
    /// the rest unpacked.
    #[inline(always)]
    fn dispatch_packed<M: FcMode>(&mut self, x: u64) {
        match tag(x) {
            TAG_ARRIVE => self.hop::<M>(x as u32),
            TAG_TXFREE => self.tx_free::<M>(x as u32),
            _ => self.dispatch::<M>(Ev::unpack(x)),
        }
    }

    /// `Ev::Arrive`: packet `pkt` at the node of its ingress port.
    #[inline(always)]
    fn hop<M: FcMode>(&mut self, pkt: u32) {
        // SAFETY: an `Arrive` event's packet id came from the slab's `alloc`.
        let port = unsafe { self.pkts.get_unchecked(pkt) }.port;
        self.arrive::<M>(pkt, port as usize)
    }

    /// `Ev::TxFree`: egress `port` finished serializing.
    #[inline(always)]
    fn tx_free<M: FcMode>(&mut self, port: u32) {
        self.ports[port as usize].wake = false;
        self.kick::<M>(port as usize);
    }

    #[inline]
    fn dispatch<M: FcMode>(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { pkt } => self.hop::<M>(pkt),
            Ev::TxFree { port } => self.tx_free::<M>(port),
            Ev::Post { msg } => self.post(msg),
            Ev::Start { msg } => self.start(msg),
            Ev::QpWake { qp } => self.activate(qp),
            Ev::Timer { qp } => self.timer(qp),
            Ev::NvDone { msg } => self.nv_done(msg),
            Ev::Link { link, up } => self.link_state(link, up),
            Ev::Route { link, up } => self.route_state(link, up),
            Ev::Reroute => self.global_reroute(),
            Ev::Sample => self.sample(),
            Ev::CcTimer { qp, timer } => self.cc_timer(qp, timer),
            Ev::Fc { slot } => {
                let e = self.q.take_fc(slot);
                self.fc_event(e)
            }
        }
    }
}
