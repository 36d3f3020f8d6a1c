//! The egress port and the wire: start a transmission when the port is idle, serialize, apply
//! link loss, schedule the arrival at the other end; and the arrival, which hands the packet to
//! the NIC or the switch.

use super::admission::Admission;
use super::{Engine, Ev, P_LINK_UP, P_LLR, P_NIC};
use crate::packet::{F_CORRUPT, Kind, NIL};
use fabricsim_core::units::Time;
use fabricsim_mech::results::DropReason;

impl Engine<'_> {
    /// Starts the next transmission on `port` if it is idle, or makes sure it will look again
    /// when it becomes idle. Inlined: a busy port (the usual case under load) costs a few loads.
    #[inline(always)]
    pub(super) fn kick<A: Admission>(&mut self, pi: usize) {
        if self.info[pi].flags & P_LINK_UP == 0 {
            return;
        }
        let port = &mut self.ports[pi];
        if port.wake {
            return;
        }
        if port.busy_until > self.now {
            port.wake = true;
            self.q
                .push(port.busy_until.0, Ev::TxFree { port: pi as u32 });
            return;
        }
        self.send_next::<A>(pi);
    }

    /// `kick` on an idle port: sends the next packet, and wakes the port again when it has more.
    /// Under link-level retry a pending replay goes first, and a full replay buffer waits.
    fn send_next<A: Admission>(&mut self, pi: usize) {
        if self.ports[pi].llr_hold && self.llr_held::<A>(pi) {
            return;
        }
        let host = self.ports[pi].host;
        let next = if host != NIL {
            self.nic_next::<A>(host as usize)
        } else {
            self.switch_next::<A>(pi)
        };
        if let Some((id, tc, frame)) = next {
            self.transmit::<A>(pi, id, tc, frame);
            let more = if host != NIL {
                let nic = &self.nics[host as usize];
                !nic.ctrl.is_empty() || !nic.ring.is_empty()
            } else {
                self.ports[pi].queued > 0
            };
            if more {
                let port = &mut self.ports[pi];
                port.wake = true;
                self.q
                    .push(port.busy_until.0, Ev::TxFree { port: pi as u32 });
            }
        }
    }

    /// Serializes packet `id` (class `tc`, `frame` bytes) on `pi` and schedules its arrival at
    /// the other end. The packet (its `port` already the peer of `pi`) is written only to mark it
    /// corrupt, so a packet long queued, out of the cache, is not touched.
    #[inline(always)]
    pub(super) fn transmit<A: Admission>(&mut self, pi: usize, id: u32, tc: u8, frame: u16) {
        let now = self.now;
        let port = &mut self.ports[pi];
        let wire = frame as u32 + self.wire_extra;
        let ser = port.ser(wire);
        port.busy_until = now + ser;
        port.tx_bytes += wire as u64;
        let head_start = if port.peer_cut_through {
            Time::ZERO
        } else {
            ser
        };
        let at = now + head_start + port.hop_delay;
        if port.tx_hook {
            self.tx_hooks(pi, id, tc, frame, wire);
        }
        self.q.push(at.0, Ev::Arrive { pkt: id });
        A::sent(self, pi, tc, frame as u32);
    }

    /// A transmission's hooks on port `pi` (`PortState::tx_hook`): link loss, link-level retry
    /// (which takes the loss on the link instead of the packet), and the congestion control's
    /// telemetry of a packet leaving a switch. Out of line: most ports have none.
    #[cold]
    #[inline(never)]
    fn tx_hooks(&mut self, pi: usize, id: u32, tc: u8, frame: u16, wire: u32) {
        let corrupt = self.loss[pi].any() && self.lose(pi, wire);
        if !self.llr.is_empty() {
            self.llr_on_wire(pi, id, tc, frame, corrupt);
        } else if corrupt {
            self.pkts.get_mut(id).flags |= F_CORRUPT;
        }
        if self.cc.telemetry {
            self.cc_egress(id, pi, wire);
        }
    }

    /// Link loss on port `pi` (`PortLoss`): whether a frame of `wire` bytes on the wire is
    /// corrupted, by the port's loss rate, bit error rate (raw or under FEC), drop-nth or
    /// periodic drop setting.
    fn lose(&mut self, pi: usize, wire: u32) -> bool {
        let loss = &mut self.loss[pi];
        let mut corrupt = false;
        if loss.threshold != 0 && self.rngs[pi].next_u64() < loss.threshold {
            corrupt = true;
        } else if loss.ber > 0.0 {
            let p_loss = -((8 * wire) as f64 * (-loss.ber).ln_1p()).exp_m1();
            if self.rngs[pi].next_f64() < p_loss {
                corrupt = true;
            }
        } else if let Some((fec, ln_ok)) = loss.fec {
            let p_loss = fec.frame_loss_given(ln_ok, wire as u64);
            if self.rngs[pi].next_f64() < p_loss {
                corrupt = true;
            }
        }
        if loss.drop_nth != 0 || loss.drop_every != 0 {
            loss.tx_packets += 1;
            corrupt |= loss.tx_packets == loss.drop_nth;
            corrupt |= loss.drop_every != 0 && loss.tx_packets % loss.drop_every == 0;
        }
        corrupt
    }

    /// Drops packet `id` for `reason`, counting its payload.
    pub(super) fn drop_pkt(&mut self, id: u32, reason: DropReason) {
        assert!(
            self.fc.credits.is_none() || reason != DropReason::Buffer,
            "buffer drop in a credit (lossless) fabric: engine bug"
        );
        let pk = self.pkts.get(id);
        if pk.kind == Kind::Data {
            self.c.bytes_dropped += pk.payload as u64;
        }
        self.c.drops.add(reason);
        self.pkts.free(id);
    }

    /// Packet `id` at the node of ingress `in_port`. Inlined into the event loop (a call cost
    /// about 15 instructions of register saves per hop); the NIC receive path stays a call.
    #[inline(always)]
    pub(super) fn arrive<A: Admission>(&mut self, id: u32, in_port: usize) {
        // SAFETY: an `Arrive` event's packet id came from the slab's `alloc`.
        let pk = *unsafe { self.pkts.get_unchecked(id) };
        let flags = self.info[in_port].flags;
        if flags & P_LLR != 0 && !self.llr_arrive::<A>(in_port, &pk) {
            return;
        }
        if pk.flags & F_CORRUPT != 0 {
            A::discarded(self, in_port, &pk);
            return self.drop_pkt(id, DropReason::Corruption);
        }
        if flags & P_LINK_UP == 0 {
            A::discarded(self, in_port, &pk);
            return self.drop_pkt(id, DropReason::LinkDown);
        }
        if flags & P_NIC != 0 {
            if !A::nic_arrived(self, id, in_port, &pk) {
                return;
            }
            return self.nic_receive(id, &pk);
        }
        self.switch_arrive::<A>(id, in_port, &pk)
    }
}
