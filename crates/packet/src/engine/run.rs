//! The event loop: pop the earliest event, dispatch it, check the stop conditions.

use std::time::Instant;

use super::admission::{Admission, Credit, DropTail, Mode, Pause, Trim};
use super::{CHECK_EVERY, Engine, Ev, Progress, RunOptions, TAG_ARRIVE, TAG_TXFREE, tag};
use crate::queue::Packed;
use fabricsim_core::prefetch::prefetch;
use fabricsim_core::units::Time;
use fabricsim_mech::results::{RunResult, Status};

impl Engine<'_> {
    /// Runs to the end (or `until`, or a stop from the progress callback) and returns the results.
    pub fn run(mut self, mut opts: RunOptions) -> RunResult {
        let wall = Instant::now();
        let mut status = match self.fc.mode() {
            Mode::DropTail => self.event_loop::<DropTail>(&mut opts),
            Mode::Trim => self.event_loop::<Trim>(&mut opts),
            Mode::Pfc => self.event_loop::<Pause>(&mut opts),
            Mode::Credits => self.event_loop::<Credit>(&mut opts),
        };
        if status == Status::Complete && self.remaining > 0 {
            status = Status::Unfinished;
        }
        let wall_s = wall.elapsed().as_secs_f64();
        self.finish(status, wall_s)
    }

    /// The loop of `run`, compiled once per admission policy `A` (`admission`).
    fn event_loop<A: Admission>(&mut self, opts: &mut RunOptions) -> Status {
        let until = opts.until.map(|t| t.0).unwrap_or(u64::MAX);
        let mut next_check = CHECK_EVERY;
        // Counted in a register, stored when the loop ends.
        let mut events = self.events;
        let status = loop {
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
                break Status::Complete;
            };
            if t > until {
                self.q.push(t, Ev::unpack(x));
                self.now = Time(until);
                break Status::StoppedAtUntil;
            }
            self.now = Time(t);
            events += 1;
            self.dispatch_packed::<A>(x);
            if self.stop {
                if self.fc.halt && self.remaining > 0 {
                    break Status::Deadlock;
                }
                break Status::Complete;
            }
            if events >= next_check {
                next_check += CHECK_EVERY;
                if fabricsim_core::stop::requested() {
                    break Status::Interrupted;
                }
                if let Some(cb) = opts.progress.as_mut() {
                    let pr = Progress {
                        now: self.now,
                        events,
                        completed: self.msgs.len() as u64 - self.remaining,
                        total: self.msgs.len() as u64,
                    };
                    if !cb(&pr) {
                        break Status::Interrupted;
                    }
                }
            }
        };
        self.events = events;
        status
    }

    /// Dispatches a packed event: the packet hops and port wake-ups straight from their bits,
    /// the rest unpacked.
    #[inline(always)]
    fn dispatch_packed<A: Admission>(&mut self, x: u64) {
        match tag(x) {
            TAG_ARRIVE => self.hop::<A>(x as u32),
            TAG_TXFREE => self.tx_free::<A>(x as u32),
            _ => self.dispatch::<A>(Ev::unpack(x)),
        }
    }

    /// `Ev::Arrive`: packet `pkt` at the node of its ingress port.
    #[inline(always)]
    fn hop<A: Admission>(&mut self, pkt: u32) {
        // SAFETY: an `Arrive` event's packet id came from the slab's `alloc`.
        let port = unsafe { self.pkts.get_unchecked(pkt) }.port;
        self.arrive::<A>(pkt, port as usize)
    }

    /// `Ev::TxFree`: egress `port` finished serializing.
    #[inline(always)]
    fn tx_free<A: Admission>(&mut self, port: u32) {
        self.ports[port as usize].wake = false;
        self.kick::<A>(port as usize);
    }

    #[inline]
    fn dispatch<A: Admission>(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive { pkt } => self.hop::<A>(pkt),
            Ev::TxFree { port } => self.tx_free::<A>(port),
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
