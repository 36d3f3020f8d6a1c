//! The event loop: pop the earliest event, dispatch it, check the stop conditions.

use std::time::Instant;

use super::{CHECK_EVERY, Engine, Ev, P_NIC, Progress, RouteMemo, RunOptions};
use crate::sim::packet::{prefetch, prefetch_all};
use crate::sim::params::RoutePolicy;
use crate::sim::results::{RunResult, Status};
use crate::sim::route;
use crate::units::Time;

impl Engine<'_> {
    /// Runs to the end (or `until`, or a stop from the progress callback) and returns the results.
    pub fn run(mut self, mut opts: RunOptions) -> RunResult {
        let wall = Instant::now();
        let until = opts.until.map(|t| t.0).unwrap_or(u64::MAX);
        let mut status = Status::Complete;
        let mut next_check = CHECK_EVERY;
        loop {
            let (pkts, ports, tcq, ntc) = (&self.pkts, &self.ports, &self.tcq, self.ntc);
            let Some((t, ev)) = self.q.q.pop_with(|e| match e {
                Ev::Arrive { pkt } => pkts.prefetch(*pkt),
                Ev::TxFree { port } => {
                    prefetch(&ports[*port as usize]);
                    prefetch(&tcq[*port as usize * ntc]);
                }
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
            self.memo_cur = std::mem::replace(&mut self.memo_next, RouteMemo::NONE);
            self.prefetch_next();
            self.dispatch(ev);
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
        if status == Status::Complete && self.remaining > 0 {
            status = Status::Unfinished;
        }
        let wall_s = wall.elapsed().as_secs_f64();
        self.finish(status, wall_s)
    }

    /// Hints the CPU to fetch what the next event in the current bucket will read after its
    /// packet (prefetched when the bucket opened, so in cache by now): for a packet reaching a
    /// switch, the egress its static route picks, that egress's queue and the ingress's PFC
    /// record; for one reaching a NIC, its queue pair. The loads then overlap this event's work.
    /// A hint only: a wrong guess (adaptive routing, a failed port) costs nothing but the load.
    /// The static egress is kept (`memo_next`) so the hop does not route again.
    #[inline(always)]
    fn prefetch_next(&mut self) {
        let Some(&Ev::Arrive { pkt }) = self.q.q.peek_current() else {
            return;
        };
        let pk = self.pkts.get(pkt);
        let info = self.info[pk.port as usize];
        if info.flags & P_NIC != 0 {
            prefetch_all(&self.qps[pk.qp as usize]);
            return;
        }
        let (cands, up, salt) = self.routes.next_hops_up(self.topo, info.node, pk.dst);
        if cands.is_empty() {
            return;
        }
        let k = route::choose(self.p.routing, cands.len(), pk.hash, pk.dst, salt, up);
        let out = cands[k].idx();
        if self.p.routing != RoutePolicy::Adaptive {
            self.memo_next = RouteMemo {
                pkt,
                out: out as u32,
            };
        }
        prefetch(&self.ports[out]);
        prefetch(&self.tcq[out * self.ntc + pk.tc as usize]);
        if let Some(pfc) = &self.fc.pfc {
            pfc.prefetch(pk.port as usize, pk.tc as usize);
        }
    }

    #[inline(always)]
    pub(super) fn dispatch(&mut self, ev: Ev) {
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
