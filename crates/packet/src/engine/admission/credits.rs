//! Credit admission (IBA Vol. 1 7.9): an egress sends a packet only when the receiver's buffer
//! for its VL has room for all its blocks (`crate::credits`), and returns credits upstream as it
//! frees them, so a switch never drops for lack of buffer. Every class is lossless. UEC CBFC
//! (UEC 1.0 5.2) is this admission with spaced credit updates (`crate::credits`).

use super::{Admission, state};
use crate::engine::Engine;
use crate::packet::Packet;

/// Credit-based flow control on every class.
pub(in crate::engine) enum Credit {}

impl Admission for Credit {
    /// Counted against the ingress's credits, then sent on or queued.
    #[inline(always)]
    fn admit(e: &mut Engine<'_>, id: u32, node: usize, in_port: usize, out: usize, pk: &Packet) {
        state(&mut e.fc.credits).received(in_port, pk.tc as usize, pk.frame as u32);
        e.pass::<Self>(id, node, in_port, out, pk)
    }

    #[inline(always)]
    fn held(e: &mut Engine<'_>, pi: usize) -> u8 {
        let heads = e
            .tcq
            .group(pi, e.ntc)
            .iter()
            .map(|q| q.head(&e.queued).map(|h| h.1 as u32).unwrap_or(0));
        state(&mut e.fc.credits).blocked_bits(pi, heads, e.now.0)
    }

    #[inline(always)]
    fn may_send(e: &mut Engine<'_>, pi: usize, tc: u8, frame: u32) -> bool {
        if e.ports[pi].blocked & (1 << tc) != 0 {
            return false;
        }
        state(&mut e.fc.credits).may_send(pi, tc as usize, frame, e.now.0)
    }

    #[inline(always)]
    fn sent(e: &mut Engine<'_>, pi: usize, tc: u8, frame: u32) {
        state(&mut e.fc.credits).sent(pi, tc as usize, frame);
    }

    /// The buffer released and its credits sent back upstream.
    #[inline(always)]
    fn release(e: &mut Engine<'_>, in_port: usize, tc: u8, frame: u32, node: usize) {
        e.buf_used[node] -= frame as u64;
        if let Some(fccl) = state(&mut e.fc.credits).freed(in_port, tc as usize, frame) {
            e.fc_credit_update(in_port, tc, fccl);
        }
    }

    /// A discarded packet's blocks come back as credits: a switch frees what it cannot route,
    /// and for a packet lost on the link the sender's FCTBS in its next flow-control packet
    /// resets the receiver's ABR (IBA Vol. 1 7.9.4); modelled at once.
    #[cold]
    #[inline(never)]
    fn discarded(e: &mut Engine<'_>, in_port: usize, pk: &Packet) {
        pass_through(e, in_port, pk);
    }

    /// The NIC's receive buffer drains at line rate: credits go back at once.
    #[inline(always)]
    fn nic_arrived(e: &mut Engine<'_>, _id: u32, in_port: usize, pk: &Packet) -> bool {
        pass_through(e, in_port, pk);
        true
    }
}

/// Packet `pk` enters ingress `in_port`'s buffer and leaves it at once: its credits go back.
#[inline(always)]
fn pass_through(e: &mut Engine<'_>, in_port: usize, pk: &Packet) {
    let c = state(&mut e.fc.credits);
    c.received(in_port, pk.tc as usize, pk.frame as u32);
    if let Some(fccl) = c.freed(in_port, pk.tc as usize, pk.frame as u32) {
        e.fc_credit_update(in_port, pk.tc, fccl);
    }
}
