//! Diagnostic tracing of the packet engine (cargo feature `trace`, off by default: without it
//! nothing here is compiled into the engine). Records every routing choice of a data packet at
//! a switch (with the queued bytes and credits of each candidate port, what adaptive routing reads)
//! and every start of an egress's wait for credits, for `fabricsim-lab ar-trace`.
//! Recording is per thread, between [`start`] and [`take`].

use std::cell::RefCell;

/// A data packet's egress choice at a switch.
#[derive(Clone, Debug)]
pub struct RouteChoice {
    pub t_ps: u64,
    pub node: u32,
    pub qp: u32,
    pub psn: u32,
    /// The candidate ports in order, the static choice's index and the chosen port.
    pub cands: Vec<u32>,
    pub static_idx: u32,
    pub out: u32,
    /// Credits (64-byte blocks) each candidate held for the packet's class (empty without
    /// credits).
    pub credits: Vec<u32>,
    /// Bytes each candidate had queued or still serializing (what AR by least queued bytes
    /// reads).
    pub queued: Vec<u64>,
}

/// What a run recorded.
#[derive(Clone, Debug, Default)]
pub struct Log {
    pub routes: Vec<RouteChoice>,
    /// (time ps, egress port): the egress started waiting for credits.
    pub stalls: Vec<(u64, u32)>,
    /// (time ps, egress port): its wait for credits ended.
    pub stall_ends: Vec<(u64, u32)>,
}

thread_local! {
    static LOG: RefCell<Option<Log>> = const { RefCell::new(None) };
}

/// Starts recording on this thread (a previous recording is dropped).
pub fn start() {
    LOG.with(|l| *l.borrow_mut() = Some(Log::default()));
}

/// Stops recording and returns what was recorded.
pub fn take() -> Log {
    LOG.with(|l| l.borrow_mut().take()).unwrap_or_default()
}

pub(crate) fn route(c: impl FnOnce() -> RouteChoice) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            log.routes.push(c());
        }
    });
}

pub(crate) fn stall(t_ps: u64, port: u32) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            log.stalls.push((t_ps, port));
        }
    });
}

pub(crate) fn stall_end(t_ps: u64, port: u32) {
    LOG.with(|l| {
        if let Some(log) = l.borrow_mut().as_mut() {
            log.stall_ends.push((t_ps, port));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::message::MessageDag;
    use fabricsim_core::topology::HostId;
    use fabricsim_core::units::{BitRate, Time};
    use fabricsim_mech::lossless_scenarios::clos2;
    use fabricsim_mech::{CreditParams, FlowControl, RoutePolicy, SimParams};

    #[test]
    fn ar_choices_are_the_first_least_queued_candidate_from_the_static_port() {
        // 4 leaves x 4 spines x 4 hosts, IB credits, AR by least queued bytes: 12 hosts send
        // 256 KB to host 0, so uplinks queue and spines hold; every recorded choice must be
        // what `ibroute::least_loaded` picks from the recorded loads (the trace reads what AR
        // reads), and some choice must have left the static port.
        let (topo, _, _) = clos2(4, 4, 4, BitRate::gbps(400), Time::from_ns(100));
        let mut p = SimParams::ib();
        p.flow_control = FlowControl::Credits(CreditParams::default_ib());
        p.routing = RoutePolicy::Adaptive;
        p.transport = fabricsim_mech::Transport::SelectiveRepeat;
        p.window_packets = 64;
        let mut dag = MessageDag::default();
        for s in 4..16 {
            dag.push(HostId(s), HostId(0), 256 << 10, Time::ZERO, &[]);
        }
        start();
        crate::run(&topo, &p, &dag, &Default::default(), Default::default()).unwrap();
        let log = take();
        let mut moved = 0;
        for c in log.routes.iter().filter(|c| c.cands.len() > 1) {
            let n = c.cands.len();
            let k = c.static_idx as usize;
            let best = (0..n)
                .map(|j| (k + j) % n)
                .min_by_key(|&i| c.queued[i])
                .unwrap();
            assert_eq!(c.out, c.cands[best], "{c:?}");
            moved += (best != k) as u32;
        }
        assert!(moved > 0 && !log.stalls.is_empty());
        assert!(log.stalls.len() >= log.stall_ends.len());
    }
}
