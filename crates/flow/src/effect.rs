//! The seam of the flow engine's effects: what a fluid of max-min rates does not see by itself
//! (credit limits, HPCC's target utilization, DCQCN's cuts, head-of-line blocking, the NIC's
//! send stage and round robin, loss recovery) plugs into the event loop (`fluid`) through the hooks of [`Effect`], every
//! hook a no-op by default. An effect reads and changes the run through [`Ctx`], never through
//! another effect's types; `compose` calls the effects in one fixed order, resolved at compile
//! time (no `dyn`).

use super::classes::Sharing;
use super::event::{Event, Events};
use super::groups::GroupFlow;
use super::paths::{PathModel, RouteInfos};
use super::state::{FlowRun, MsgState, Progress, QpState};
use super::stats::FlowStats;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_mech::SimParams;

/// What every effect sees: the run's inputs, the solver, the per-route, per-flow, per-message
/// and per-QP state, the pending events and the time.
pub struct Ctx<'a> {
    pub topo: &'a Topology,
    pub p: &'a SimParams,
    /// How flows take paths (`FlowParams::paths`).
    pub paths: PathModel,
    /// `FlowParams::batch_tol`.
    pub batch_tol: f64,
    pub dag: &'a MessageDag,
    pub solver: Sharing,
    /// Per route: its cap, line rate, latency and links (`paths::RouteInfo`).
    pub routes: RouteInfos,
    pub flows: Vec<FlowRun>,
    pub msgs: Vec<MsgState>,
    pub qps: Vec<QpState>,
    /// First flow of each Net message (its subflows follow).
    pub msg_flow: Vec<u32>,
    /// The flows of synchronized DCQCN incasts, sorted by flow (`groups`; `dcqcn_incast`
    /// fills it at setup).
    pub groups: Vec<GroupFlow>,
    /// Pending events by time. Flows sharing a bottleneck drain at the same picosecond, so
    /// there are far fewer distinct times than events, and a time's events sit together.
    pub events: Events,
    pub now: u64,
    /// When the pending starts and finishes are due in the rates (`state::NONE`: none pending).
    pub resolve_at: u64,
    pub stats: FlowStats,
}

impl Ctx<'_> {
    /// Schedules `ev` at `t` ps.
    #[inline]
    pub fn push(&mut self, t: u64, ev: Event) {
        self.events.entry(t).or_default().push(ev);
    }

    /// A start or finish of span `span_ps` is pending: it is due in the rates within
    /// `batch_tol` x `span_ps` (`FlowParams::batch_tol`; at once when 0).
    pub fn defer(&mut self, span_ps: u64) {
        let due = self.now + (span_ps as f64 * self.batch_tol) as u64;
        self.resolve_at = self.resolve_at.min(due);
    }

    /// When the QP of message `m` closes its feedback loop without queueing: its path there and
    /// its ACK path back (ps).
    pub fn loop_ps(&self, m: usize) -> u64 {
        2 * self.qps[self.msgs[m].qp as usize].ack as u64
    }
}

/// A fabric effect of the flow engine: hooks the loop calls at fixed points (in `compose`'s
/// order), each a no-op unless the effect overrides it.
pub trait Effect {
    /// Setup: lowers the directed links' capacities (bit/s, `paths::capacities` order) before
    /// the routes are placed.
    fn link_caps(&self, _topo: &Topology, _p: &SimParams, _caps: &mut Vec<u64>) {}

    /// Setup: the fraction of its bottleneck's line rate a flow over `hops` links reaches,
    /// which `rate_model` turns into the route's cap (`None`: the effect does not price routes;
    /// one that does reads the route's `hops` later).
    fn route_factor(&self, _hops: usize) -> Option<f64> {
        None
    }

    /// Setup, the routes and the solver built, before any event: per-flow tables.
    fn setup(&mut self, _cx: &mut Ctx) {}

    /// Message `m` starts putting its bytes on `parts` QPs now.
    fn message_start(&mut self, _cx: &mut Ctx, _m: u32, _parts: u32) {}

    /// The cap flow `f` starts under, with `work` to drain (`cap`: the route's, lowered by the
    /// effects before this one).
    fn start_cap(&mut self, _cx: &mut Ctx, _f: u32, _work: u128, cap: u64) -> u64 {
        cap
    }

    /// Flow `f` from NIC `nic` has started under `cap` with `work` (the solver holds it).
    fn flow_start(&mut self, _cx: &Ctx, _f: u32, _nic: u32, _cap: u64, _work: u128) {}

    /// A solve moved flow `f`'s progress from `before` to `after`.
    fn rerate(&mut self, _f: u32, _before: Progress, _after: Progress) {}

    /// After a solve: sets flow caps from the new rates; whether one changed (the loop then
    /// solves again, at most `calibration::NIC_SEND_ROUNDS` solves in all).
    fn recap(&mut self, _cx: &mut Ctx) -> bool {
        false
    }

    /// Flow `f` has drained its work (the solver still holds it).
    fn flow_end(&mut self, _cx: &Ctx, _f: u32) {}

    /// What the last byte of a subflow leaving now on route `r` waits beyond the path's latency.
    fn arrival_delay_ps(&mut self, _cx: &Ctx, _r: u32) -> u64 {
        0
    }

    /// Message `m`'s last subflow (route `r`) has drained now, `wait_ps` beyond its drain
    /// alone: moves its receive time (`cx.msgs[m].recv`); whether its completion waits for a
    /// timer (a `Done` event that `message_start` of a later message may move).
    fn message_drained(&mut self, _cx: &mut Ctx, _m: u32, _r: u32, _wait_ps: u64) -> bool {
        false
    }

    /// The sender's completion of message `m`.
    fn message_done(&mut self, _cx: &mut Ctx, _m: u32) {}

    /// An event of the effects' (`Event::NicSend`, `Event::Onset`) fell due; a flow's own cap it
    /// changed, `(flow, cap)`, which every effect then hears (`cap_changed`).
    fn event(&mut self, _cx: &mut Ctx, _ev: Event) -> Option<(u32, u64)> {
        None
    }

    /// Flow `f`'s own cap changed to `cap` (the solver has it).
    fn cap_changed(&mut self, _cx: &mut Ctx, _f: u32, _cap: u64) {}

    /// Whether it is one of the lossless models a run ends past the limits of `calibration`
    /// (`LOSSLESS_MODELS_MAX_ACTIVE`, `LOSSLESS_MODELS_MAX_PORT_WORK`).
    fn lossless_model(&self) -> bool {
        false
    }

    /// Ends a lossless model for the rest of the run; whether it is off (an `Option` then
    /// drops it).
    fn end(&mut self, _cx: &mut Ctx) -> bool {
        false
    }

    /// The run's end: its counters into `cx.stats`.
    fn finish(&mut self, _cx: &mut Ctx) {}
}

/// An effect that is off for the run (`None`) does nothing.
impl<E: Effect> Effect for Option<E> {
    fn link_caps(&self, topo: &Topology, p: &SimParams, caps: &mut Vec<u64>) {
        if let Some(e) = self {
            e.link_caps(topo, p, caps)
        }
    }
    fn route_factor(&self, hops: usize) -> Option<f64> {
        self.as_ref().and_then(|e| e.route_factor(hops))
    }
    fn setup(&mut self, cx: &mut Ctx) {
        if let Some(e) = self {
            e.setup(cx)
        }
    }
    #[inline]
    fn message_start(&mut self, cx: &mut Ctx, m: u32, parts: u32) {
        if let Some(e) = self {
            e.message_start(cx, m, parts)
        }
    }
    #[inline]
    fn start_cap(&mut self, cx: &mut Ctx, f: u32, work: u128, cap: u64) -> u64 {
        match self {
            Some(e) => e.start_cap(cx, f, work, cap),
            None => cap,
        }
    }
    #[inline]
    fn flow_start(&mut self, cx: &Ctx, f: u32, nic: u32, cap: u64, work: u128) {
        if let Some(e) = self {
            e.flow_start(cx, f, nic, cap, work)
        }
    }
    #[inline]
    fn rerate(&mut self, f: u32, before: Progress, after: Progress) {
        if let Some(e) = self {
            e.rerate(f, before, after)
        }
    }
    fn recap(&mut self, cx: &mut Ctx) -> bool {
        self.as_mut().is_some_and(|e| e.recap(cx))
    }
    #[inline]
    fn flow_end(&mut self, cx: &Ctx, f: u32) {
        if let Some(e) = self {
            e.flow_end(cx, f)
        }
    }
    #[inline]
    fn arrival_delay_ps(&mut self, cx: &Ctx, r: u32) -> u64 {
        self.as_mut().map_or(0, |e| e.arrival_delay_ps(cx, r))
    }
    fn message_drained(&mut self, cx: &mut Ctx, m: u32, r: u32, wait_ps: u64) -> bool {
        self.as_mut()
            .is_some_and(|e| e.message_drained(cx, m, r, wait_ps))
    }
    fn message_done(&mut self, cx: &mut Ctx, m: u32) {
        if let Some(e) = self {
            e.message_done(cx, m)
        }
    }
    fn event(&mut self, cx: &mut Ctx, ev: Event) -> Option<(u32, u64)> {
        self.as_mut().and_then(|e| e.event(cx, ev))
    }
    fn cap_changed(&mut self, cx: &mut Ctx, f: u32, cap: u64) {
        if let Some(e) = self {
            e.cap_changed(cx, f, cap)
        }
    }
    fn lossless_model(&self) -> bool {
        self.as_ref().is_some_and(|e| e.lossless_model())
    }
    fn end(&mut self, cx: &mut Ctx) -> bool {
        if self.as_mut().is_some_and(|e| e.end(cx)) {
            *self = None;
        }
        self.is_none()
    }
    fn finish(&mut self, cx: &mut Ctx) {
        if let Some(e) = self {
            e.finish(cx)
        }
    }
}
