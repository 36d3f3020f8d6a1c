//! UEC RCCC, receiver credit-based congestion control (UEC 1.0 specification 3.6.14; the CCC
//! hooks it shares with NSCC, 3.6.12.3, read through github.com/KaiLv16/UEC-Notes, its UET-CC
//! notes): the receiver owns a credit window, `credit_bdp` x its link's BDP, and grants it to
//! the senders it currently receives from; a sender may have in flight only what it holds credit
//! for, beyond the unscheduled allowance it starts with (`unscheduled_packets`). Aimed at the
//! last hop of an incast: however many senders, the bytes they have in flight to one receiver
//! stay near its window.
//!
//! Modelled as a window: the receiver splits its credit window evenly over its active senders
//! and every ACK carries the sender's share (the credit it may hold outstanding), as if each
//! packet received returned its credit and the pool were re-divided when a sender joins or
//! leaves. A sender joins at its first new data packet and leaves when a message of it is
//! complete at the receiver (its backlog, as the spec's `credit_target`, is then known to be
//! spent; its next message joins it again). A share is rounded up to whole packets, so a sender
//! always has an ACK coming and the senders together hold at most the window plus a frame each. Not modelled: credit control packets without data (grants ride
//! on ACKs), the credit timer (3.6.14.5).

use super::{Acked, CcOut, CcSetup, CongestionControl, Echo, hpcc};
use fabricsim_core::topology::HostId;
use fabricsim_core::units::BitRate;
use fabricsim_mech::rccc::RcccParams;

/// A receiver's credit: its window and how many senders share it.
#[derive(Clone, Copy, Debug, Default)]
struct Dst {
    window_bytes: u64,
    active: u32,
}

pub struct Rccc {
    /// Per QP: its receiver, whether it holds a share, and its unscheduled allowance.
    dst: Vec<u32>,
    joined: Vec<bool>,
    /// Per host as receiver.
    rx: Vec<Dst>,
    /// The share an ACK carries, in packets, by ACK slab id (reserved at setup, as NSCC's).
    grant: Vec<u32>,
    unscheduled: u32,
    frame: u64,
    /// The transport's window, packets (0: unlimited).
    cap: u32,
}

impl Rccc {
    pub fn new(r: RcccParams, s: &CcSetup) -> Rccc {
        let topo = s.topo;
        let mut rx = vec![Dst::default(); topo.num_hosts()];
        // Each receiver's BDP: its link's rate x the longest unloaded round trip of its senders.
        for (rtt, _, q) in hpcc::unloaded_rtts(s, s.p.cut_through) {
            let port = topo.host_port(HostId(q.dst));
            let rate = topo.links[topo.ports[port.idx()].link.idx()].rate;
            let d = &mut rx[q.dst as usize];
            d.window_bytes = d.window_bytes.max(r.window_bytes(rate.bps(), rtt.0));
        }
        Rccc {
            dst: s.qps.iter().map(|q| q.dst).collect(),
            joined: vec![false; s.qps.len()],
            rx,
            grant: Vec::with_capacity(s.packets),
            unscheduled: r.unscheduled_packets,
            frame: s.p.mtu_frame_wire_bytes().max(1),
            cap: s.p.window_packets,
        }
    }

    /// The share of QP `qp`'s receiver in packets, rounded up (the senders together hold at
    /// most the window plus a frame each), at least one.
    fn share(&self, qp: usize) -> u32 {
        let d = &self.rx[self.dst[qp] as usize];
        d.window_bytes
            .div_ceil(d.active.max(1) as u64 * self.frame)
            .max(1) as u32
    }

    /// The engine's window: the share plus the SACKed packets (they hold no credit), within
    /// the transport's window.
    pub(super) fn window(&self, share: u32, sacked: u32) -> u32 {
        let w = share.saturating_add(sacked);
        if self.cap == 0 { w } else { w.min(self.cap) }
    }
}

impl CongestionControl for Rccc {
    fn initial_window(&self, _qp: u32, _default: u32) -> u32 {
        self.window(self.unscheduled, 0)
    }

    fn acks(&self) -> bool {
        true
    }

    fn on_echo(&mut self, _data: u32, ack: u32, echo: Echo) {
        let q = echo.qp as usize;
        let r = self.dst[q] as usize;
        if echo.accepted && !self.joined[q] {
            self.joined[q] = true;
            self.rx[r].active += 1;
        }
        let share = self.share(q);
        if echo.completes && self.joined[q] {
            self.joined[q] = false;
            self.rx[r].active -= 1;
        }
        let i = ack as usize;
        if i >= self.grant.len() {
            // Within the room reserved at setup this writes, it does not allocate.
            self.grant.resize(i + 1, 0);
        }
        self.grant[i] = share;
    }

    fn on_ack(&mut self, _qp: u32, ack: u32, a: &Acked, _line: BitRate) -> Option<CcOut> {
        Some(CcOut {
            window: Some(self.window(self.grant[ack as usize], a.sacked)),
            ..CcOut::default()
        })
    }
}
