//! The engine side of link-level retry (UEC 1.0 specification 5.1; the state machine is
//! `crate::llr`): every port's direction of its link runs one `LlrLink`, indexed by the sending
//! port. A transmission numbers and buffers the frame (`Engine::tx_hooks`), an arrival at the
//! other end is accepted or discarded in sequence (`Engine::arrive`), the coalesced ACK (by the
//! spacing, or by its timer, an `FcEv::LlrAckTimer`) or the NACK goes back as an 8 B control
//! ordered set (`CTLOS_BYTES`) behind the frame in progress plus the link's propagation (as a
//! PAUSE frame goes, `llfc`), and the sender replays go-back-N before any new frame, or stalls
//! on a full buffer.
//! A discarded frame's packet is kept, not freed: its replay sends the same packet again.

use super::admission::Admission;
use super::llfc::FcEv;
use super::{Engine, Ev};
use crate::error::SimError;
use crate::llr::{Ack, Entry, Gate, LlrLink, Rx};
use crate::packet::Packet;
use fabricsim_core::topology::Topology;
use fabricsim_mech::faults::{Fault, Faults};
use fabricsim_mech::llr::{CTLOS_BYTES, port_round_trip, replay_buffer_bytes};
use fabricsim_mech::params::SimParams;

/// LLR is refused with link failures: a link that goes down would lose its replay buffer's
/// frames, which this model does not follow.
pub(super) fn check_faults(p: &SimParams, faults: &Faults) -> Result<(), SimError> {
    let down = faults
        .faults
        .iter()
        .any(|f| matches!(f, Fault::Down { .. } | Fault::Up { .. }));
    if p.llr.is_some() && down {
        return Err(SimError::Fault(
            "llr = true with a link going down or up: link-level retry across a link failure is not modelled; remove the link fault or LLR".into(),
        ));
    }
    Ok(())
}

/// Per port, its direction's LLR (empty when LLR is off).
pub(super) fn links(topo: &Topology, p: &SimParams) -> Vec<LlrLink> {
    let Some(llr) = p.llr else {
        return Vec::new();
    };
    let extra = p.wire_overhead_bytes as u64;
    let max_wire = p.mtu_frame_wire_bytes();
    let min_wire = p.min_frame_bytes.max(p.header_bytes) as u64 + extra;
    topo.ports
        .iter()
        .map(|port| {
            let (rate, rtt) = port_round_trip(topo, p, port);
            let cap = llr
                .replay_buffer
                .unwrap_or_else(|| replay_buffer_bytes(&llr, rate, rtt, max_wire));
            LlrLink::new(cap, max_wire, min_wire, extra, &llr)
        })
        .collect()
}

impl Engine<'_> {
    /// `send_next` on a port whose new frames must wait: sends the pending replay (and wakes
    /// the port again), or parks it on a full buffer. False: the gate is open after all.
    #[cold]
    #[inline(never)]
    pub(super) fn llr_held<A: Admission>(&mut self, pi: usize) -> bool {
        match self.llr[pi].gate() {
            Gate::Open => {
                self.ports[pi].llr_hold = false;
                false
            }
            Gate::Stall => {
                self.llr[pi].parked = true;
                self.ports[pi].wake = true;
                true
            }
            Gate::Replay(e) => {
                self.transmit::<A>(pi, e.id, e.tc, e.frame);
                let port = &mut self.ports[pi];
                port.wake = true;
                self.q
                    .push(port.busy_until.0, Ev::TxFree { port: pi as u32 });
                true
            }
        }
    }

    /// Frame `id` (class `tc`, `frame` buffer bytes) leaves `pi`, corrupted or not.
    pub(super) fn llr_on_wire(&mut self, pi: usize, id: u32, tc: u8, frame: u16, corrupt: bool) {
        let l = &mut self.llr[pi];
        l.on_wire(Entry { id, tc, frame }, corrupt);
        self.ports[pi].llr_hold = l.hold();
    }

    /// Packet `pk` arrives on LLR ingress `in_port`: true when accepted in sequence.
    #[cold]
    #[inline(never)]
    pub(super) fn llr_arrive<A: Admission>(&mut self, in_port: usize, pk: &Packet) -> bool {
        let tx = self.ports[in_port].peer;
        let l = &mut self.llr[tx as usize];
        match l.arrive() {
            Rx::Accept(Ack::Now(seq)) => {
                self.llr_ctrl(in_port, FcEv::LlrAck { port: tx, seq });
                true
            }
            Rx::Accept(Ack::Arm(epoch)) => {
                let at = self.now + l.ack_timer;
                self.q.push_fc(at.0, FcEv::LlrAckTimer { port: tx, epoch });
                true
            }
            Rx::Accept(Ack::Later) => true,
            Rx::Discard => {
                A::discarded(self, in_port, pk);
                false
            }
            Rx::Nack(seq) => {
                A::discarded(self, in_port, pk);
                self.llr_ctrl(in_port, FcEv::LlrNack { port: tx, seq });
                false
            }
        }
    }

    /// Sends an LLR ACK or NACK out of `ip` (the receiving port) as a control ordered set
    /// between frames, after the frame in progress (UEC 1.0 5.1: the PCS inserts it in the
    /// stream); it reaches the sender after the link's propagation.
    fn llr_ctrl(&mut self, ip: usize, ev: FcEv) {
        let at = self.send_ctrl(ip, CTLOS_BYTES) + self.fc.link_delay(ip);
        self.q.push_fc(at.0, ev);
    }

    /// The ACK timer of epoch `epoch` runs out at the receiver of sending port `tx`: its
    /// cumulative ACK goes, unless one has gone since the timer was armed.
    pub(super) fn llr_ack_timer(&mut self, tx: u32, epoch: u32) {
        if let Some(seq) = self.llr[tx as usize].ack_timer_out(epoch) {
            let ip = self.ports[tx as usize].peer as usize;
            self.llr_ctrl(ip, FcEv::LlrAck { port: tx, seq });
        }
    }

    /// An ACK (`nack` false) or NACK for `seq` reaches sending port `pi`.
    pub(super) fn llr_reply(&mut self, pi: usize, seq: u64, nack: bool) {
        let l = &mut self.llr[pi];
        if nack {
            l.nack(seq);
        } else {
            l.ack(seq);
        }
        let hold = l.hold();
        let unpark = l.parked && (nack || !hold);
        if unpark {
            l.parked = false;
            self.ports[pi].wake = false;
        }
        self.ports[pi].llr_hold = hold;
        // A replay starts on an idle port too (kick does nothing while a wake-up is due).
        if unpark || nack {
            self.kick_any(pi);
        }
    }

    /// The links' replays, NACKs and stalls into the run's counters.
    pub(super) fn llr_count(&mut self) {
        for l in &self.llr {
            self.c.llr_replays += l.replays;
            self.c.llr_nacks += l.nacks;
            self.c.llr_acks += l.acks;
            self.c.llr_stalls += l.stalls;
        }
    }
}
