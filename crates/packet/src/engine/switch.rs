//! The shared-memory switch: route, admit (the run's policy, `admission`), queue per egress and
//! class, and the next packet an egress sends by its scheduling discipline.

use super::admission::Admission;
use super::{Engine, P_LINK_UP, P_REROUTED, P_ROUTE_OK};
use crate::packet::Packet;
use crate::sched;
use fabricsim_mech::params::RoutePolicy;
use fabricsim_mech::results::DropReason;
use fabricsim_mech::route;

impl Engine<'_> {
    /// A packet at switch ingress `in_port` may leave the switch: route, then the run's
    /// admission policy sends it on, queues it or drops it (`admission`).
    /// Inlined into the hop (a call saved and restored six registers).
    #[inline(always)]
    pub(super) fn switch_arrive<A: Admission>(&mut self, id: u32, in_port: usize, pk: &Packet) {
        let node = self.info[in_port].node;
        let out = match self.egress_of(node, pk) {
            Ok(out) => out,
            Err(reason) => {
                A::discarded(self, in_port, pk);
                return self.drop_pkt(id, reason);
            }
        };
        self.bind(id, out);
        A::admit(self, id, node as usize, in_port, out, pk)
    }

    /// Packet `id` will leave by egress `out`: it arrives next on `out`'s peer (written now,
    /// while the packet is in cache, not when it leaves the queue).
    #[inline]
    fn bind(&mut self, id: u32, out: usize) {
        // SAFETY: the arriving packet's id came from the slab's `alloc`.
        unsafe { self.pkts.get_unchecked_mut(id) }.port = self.ports[out].peer;
    }

    /// The egress port of packet `pk` at switch `node`: under static routing without forced
    /// next hops (`RouteTable::static_choice`) the routing policy's choice when that port is
    /// routable and up without a global reroute on it, inlined into the hop; otherwise the
    /// general path (`egress_routed`) decides, from the same static choice.
    #[inline(always)]
    fn egress_of(&self, node: u32, pk: &Packet) -> Result<usize, DropReason> {
        // SAFETY: `node` is the switch of an ingress port (`PortInfo::node`, a topology node
        // by `Topology::check`).
        if let Some(out) = unsafe { self.routes.static_choice(node, pk.dst, pk.hash) } {
            let f = self.info[out.idx()].flags;
            if f & (P_ROUTE_OK | P_REROUTED | P_LINK_UP) == P_ROUTE_OK | P_LINK_UP {
                return Ok(out.idx());
            }
        }
        self.egress_routed(node, pk)
    }

    /// The egress port of packet `pk` at switch `node` in general: a forced next hop
    /// (`Fault::Misroute`, lossless classes), else the routing policy's choice among the
    /// up/down candidates (adaptive routing's, `ar_pick`), the next usable one if local repair
    /// or the global reroute has dropped that port (`routable`).
    #[inline(never)]
    fn egress_routed(&self, node: u32, pk: &Packet) -> Result<usize, DropReason> {
        if let Some(out) = self.fc.misroute(node, pk.dst, pk.tc) {
            return Ok(out);
        }
        let (cands, up, salt) = self.routes.next_hops_up(self.topo, node, pk.dst);
        if cands.is_empty() {
            return Err(DropReason::NoRoute);
        }
        let n = cands.len();
        let mut k = route::choose(self.p.routing, n, pk.hash, pk.dst, salt, up);
        // The per-packet policies refine the static choice (`route`'s seam).
        k = match self.p.routing {
            RoutePolicy::Adaptive => self.ar_pick(cands, k, pk.flags, pk.dst, pk.tc),
            RoutePolicy::Spray(_) => self.spray_pick(pk, k, n),
            RoutePolicy::EcmpFlowHash | RoutePolicy::DModK => k,
        };
        k = route::first_usable(k, n, |j| self.routable(cands[j].idx(), pk.dst))
            .ok_or(DropReason::NoRoute)?;
        let out = cands[k].idx();
        #[cfg(feature = "trace")]
        self.trace_route(node, pk, cands, out, salt, up);
        if self.info[out].flags & P_LINK_UP == 0 {
            return Err(DropReason::LinkDown);
        }
        Ok(out)
    }

    /// Records packet `pk`'s choice of `out` among `cands` (`sim::trace`).
    #[cfg(feature = "trace")]
    fn trace_route(
        &self,
        node: u32,
        pk: &Packet,
        cands: &[fabricsim_core::topology::PortId],
        out: usize,
        salt: u32,
        up: bool,
    ) {
        if pk.kind != crate::packet::Kind::Data {
            return;
        }
        crate::trace::route(|| crate::trace::RouteChoice {
            t_ps: self.now.0,
            node,
            qp: pk.qp,
            psn: pk.psn,
            cands: cands.iter().map(|c| c.0).collect(),
            static_idx: route::choose(self.p.routing, cands.len(), pk.hash, pk.dst, salt, up)
                as u32,
            out: out as u32,
            credits: match &self.fc.credits {
                Some(c) => cands
                    .iter()
                    .map(|p| c.available(p.idx(), pk.tc as usize))
                    .collect(),
                None => Vec::new(),
            },
            queued: cands
                .iter()
                .map(|p| {
                    let port = &self.ports[p.idx()];
                    port.queued + port.rate.bytes_in(port.busy_until.saturating_sub(self.now))
                })
                .collect(),
        });
    }

    /// The next packet a switch port sends, by the port's scheduling discipline.
    /// Inlined into the hop (a call saved and restored six registers).
    #[inline(always)]
    pub(super) fn switch_next<A: Admission>(&mut self, pi: usize) -> Option<(u32, u8, u16)> {
        let base = pi * self.ntc;
        if self.ports[pi].queued == 0 {
            return None;
        }
        let held = A::held(self, pi);
        let port = &mut self.ports[pi];
        let queues = self.tcq.group(pi, self.ntc);
        let how = self.p.scheduling;
        let st = &mut self.sched[pi];
        let tc = sched::pick(how, st, port.blocked | held, queues, &self.queued)?;
        let e = self.tcq[base + tc].pop_entry(&self.queued)?;
        sched::served(how, st, tc, self.tcq.group(pi, self.ntc));
        // The buffer is released at dequeue (as ns-3's switch MMU does).
        port.queued -= e.frame as u64;
        let node = port.node as usize;
        A::release(self, e.from as usize, tc as u8, e.frame as u32, node);
        if self.data_tcs & (1 << tc) != 0 {
            self.mark(e.id, node, pi, tc, self.tcq[base + tc].bytes);
        }
        Some((e.id, tc as u8, e.frame))
    }

    /// Queues packet `id` at egress `out` of switch `node` and wakes the port.
    /// Inlined into the hop (a call saved and restored six registers).
    #[inline(always)]
    pub(super) fn enqueue<A: Admission>(&mut self, node: usize, out: usize, id: u32, pk: &Packet) {
        let frame = pk.frame as u64;
        self.buf_used[node] += frame;
        self.ports[out].queued += frame;
        self.tcq[out * self.ntc + pk.tc as usize].push_from(
            &mut self.queued,
            id,
            pk.frame,
            pk.port,
        );
        self.kick::<A>(out);
    }
}
