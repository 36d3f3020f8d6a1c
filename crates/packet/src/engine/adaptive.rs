//! Adaptive routing in the packet engine (NVIDIA AR; the rules and their sources in
//! `sim::ibroute`): per packet, among the allowed ports, the one whose next hop lacks the fewest
//! normalized credits for the packet's VL or whose egress holds the fewest bytes; messages below
//! the threshold stay on the static D-mod-K route.

use super::Engine;
use crate::packet::F_STATIC_ROUTE;
use fabricsim_core::topology::PortId;
use fabricsim_mech::ibroute;
use fabricsim_mech::params::RoutePolicy;

impl Engine<'_> {
    /// The flag a new data packet of QP `qi` with PSN `psn` carries: it stays on the static route
    /// when its message is below the adaptive-routing threshold. The test for that threshold
    /// inlined into the NIC's send, the lookup a call.
    #[inline(always)]
    pub(super) fn ar_flags(&self, qi: u32, psn: u32) -> u8 {
        let t = self.p.cc.ar_threshold_bytes;
        if self.p.routing != RoutePolicy::Adaptive || t == 0 {
            return 0;
        }
        self.ar_static_flag(qi, psn, t)
    }

    /// `ar_flags` under adaptive routing with threshold `t` bytes.
    #[inline(never)]
    fn ar_static_flag(&self, qi: u32, psn: u32, t: u64) -> u8 {
        let qp = &self.qps[qi as usize];
        let i = qp.segs.partition_point(|s| s.end <= psn);
        let msg = qp.segs[i].msg;
        if self.dag.messages[msg as usize].bytes < t {
            F_STATIC_ROUTE
        } else {
            0
        }
    }

    /// Under adaptive routing (the hop dispatches here, `egress_routed`): the usable candidate whose next hop lacks the fewest
    /// normalized credits for the packet's VL, its queue for the VL added (`ArSelect::Credits`),
    /// or with the fewest bytes queued, instead of the static `k`.
    #[inline]
    pub(super) fn ar_pick(&self, cands: &[PortId], k: usize, flags: u8, dst: u32, tc: u8) -> usize {
        if cands.len() < 2 || flags & F_STATIC_ROUTE != 0 {
            return k;
        }
        let usable = |pi: usize| self.routable(pi, dst);
        // `ar_share` is filled exactly when the rule is credits and the links have credits.
        let credits = self
            .fc
            .credits
            .as_ref()
            .filter(|_| !self.cc.ar_share.is_empty());
        match credits {
            // The next hop's lack of normalized credits plus the VL's bytes queued here.
            Some(c) => ibroute::least_loaded(cands, k, usable, |pi| {
                let queued = self.tcq[pi * self.ntc + tc as usize].bytes;
                self.cc.ar_share[pi].load(c.available(pi, tc as usize), queued)
            }),
            None => ibroute::least_loaded(cands, k, usable, |pi| {
                let port = &self.ports[pi];
                // Bytes queued plus what is still serializing.
                port.queued + port.rate.bytes_in(port.busy_until.saturating_sub(self.now))
            }),
        }
        .unwrap_or(k)
    }
}
