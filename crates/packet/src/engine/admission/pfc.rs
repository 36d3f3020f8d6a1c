//! PFC admission (IEEE 802.1Qbb): a lossless class's bytes go to the shared pool, beyond its
//! XOFF threshold into its ingress's headroom while the ingress pauses its sender; a frame that
//! fits neither is dropped (headroom overflow; `crate::pfc`, after the HPCC ns-3 switch MMU).
//! The lossy classes are drop-tail (`drop_tail`).

use super::{Admission, state};
use crate::engine::Engine;
use crate::packet::Packet;
use crate::pfc::Admit;
use fabricsim_mech::results::DropReason;

/// PFC on the lossless classes.
pub(in crate::engine) enum Pause {}

impl Admission for Pause {
    #[inline(always)]
    fn admit(e: &mut Engine<'_>, id: u32, node: usize, in_port: usize, out: usize, pk: &Packet) {
        if !e.fc.lossless(pk.tc) {
            return e.drop_tail::<Self>(id, node, out, pk);
        }
        // Only the watchdog turns a queue's PFC off (`fc_watchdog`).
        if e.ports[out].wd_off & (1 << pk.tc) != 0 {
            return e.drop_pkt(id, DropReason::Watchdog);
        }
        let used = e.buf_used[node];
        match state(&mut e.fc.pfc).admit(in_port, node, pk.tc as usize, pk.frame as u64, used) {
            Admit::Accept => {}
            Admit::AcceptXoff => e.fc_xoff(in_port, pk.tc),
            Admit::Drop => return e.drop_pkt(id, DropReason::Headroom),
        }
        e.pass::<Self>(id, node, in_port, out, pk)
    }

    /// The buffer released; XON when the ingress's headroom has drained.
    #[inline(always)]
    fn release(e: &mut Engine<'_>, in_port: usize, tc: u8, frame: u32, node: usize) {
        e.buf_used[node] -= frame as u64;
        if !e.fc.lossless(tc) {
            return;
        }
        let used = e.buf_used[node];
        if state(&mut e.fc.pfc).release(in_port, node, tc as usize, frame as u64, used) {
            e.fc_send_pause(in_port, tc, 0);
        }
    }

    /// A stalled NIC (`Fault` pause storm) discards what reaches it.
    #[inline(always)]
    fn nic_arrived(e: &mut Engine<'_>, id: u32, in_port: usize, _pk: &Packet) -> bool {
        if e.fc.lossless != 0 && e.fc.stalled[e.ports[in_port].host as usize] {
            e.drop_pkt(id, DropReason::RxStalled);
            return false;
        }
        true
    }
}
