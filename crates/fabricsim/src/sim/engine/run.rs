//! The event loop: pop the earliest event, dispatch it, check the stop conditions.

use std::time::Instant;

use super::{CHECK_EVERY, Engine, Ev, Progress, RunOptions};
use crate::sim::packet::prefetch;
use crate::sim::results::{RunResult, Status};
use crate::units::Time;

impl Engine<'_> {
    /// Runs to the end (or `until`, or a stop from the progress callback) and returns the results.
    pub fn run(mut self, mut opts: RunOptions) -> RunResult {
        let wall = Instant::now();
        let until = opts.until.map(|t| t.0).unwrap_or(u64::MAX);
        let mut status = Status::Complete;
        let mut next_check = CHECK_EVERY;
        loop {
            let (pkts, ports) = (&self.pkts, &self.ports);
            let Some((t, ev)) = self.q.q.pop_with(|e| match e {
                Ev::Arrive { pkt } => pkts.prefetch(*pkt),
                Ev::TxFree { port } => prefetch(&ports[*port as usize]),
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
            self.dispatch(ev);
            if self.remaining == 0 {
                break;
            }
            if self.fc.halt {
                status = Status::Deadlock;
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
