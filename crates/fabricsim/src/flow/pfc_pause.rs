//! PFC pauses of a switch egress whose next hop holds a congested egress: the next switch's
//! ingress from that egress counts the bytes it took in until they leave (they wait in the
//! congested egress's FIFO), and sends XOFF once that count passes the threshold (dynamic:
//! `alpha x` the switch's free shared pool; static: a number of bytes), XON once it is the XON
//! offset below it (IEEE 802.1Qbb; the admission of `sim::pfc`, after the HPCC ns-3
//! `switch-mmu.cc`). The egress drains only while unpaused: a burst queue that feeds a deep
//! congested egress stays deep long after its flows were cut (`flow::dcqcn_victim`).
//!
//! The congested egress's depth over time is a mean-field queue (`dcqcn_incast`); the switch's
//! buffer use is taken as that depth (the one deep queue of the switch), so the dynamic
//! threshold rises as it drains. The ingress count is fluid: bytes the paused egress passed on
//! while the congested queue was `U` deep leave it `U / C` later (FIFO at its rate `C`).
//! Not modeled: the peer's response time (bytes in flight after XOFF fill headroom and count as
//! shared), other deep egresses of the same switch, bytes the paused egress passes to other
//! egresses of the next switch (counted as leaving at once).

use std::collections::VecDeque;

use crate::sim::headroom::{self, HeadroomInputs, PAUSE_FRAME_BYTES};
use crate::sim::params::{FlowControl, PfcThreshold};
use crate::sim::SimParams;
use crate::topology::{NodeId, Topology};

use super::dcqcn_incast::{HORIZON_PS, QueueTrace, STEP_PS};

/// The XOFF/XON rule of one switch's ingresses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ingress {
    /// The switch's shared pool: its buffer less the headroom its ports reserve (bytes).
    pub shared_bytes: u64,
    pub xoff: PfcThreshold,
    pub xon_offset_bytes: u64,
}

impl Ingress {
    /// Switch `node`'s rule under `p` (`None` without PFC or for a NIC). The headroom per
    /// port and lossless class is `sim::headroom`'s SONiC formula with the packet engine's
    /// inputs (`sim::engine::llfc`: the port's cable delay, the switch latency and a PAUSE
    /// frame as MAC/PHY delay, the peer's response time at the peer's rate).
    pub fn of(topo: &Topology, p: &SimParams, node: NodeId) -> Option<Ingress> {
        let FlowControl::Pfc(pp) = &p.flow_control else {
            return None;
        };
        let n = &topo.nodes[node.idx()];
        if !n.is_switch() {
            return None;
        }
        let pause_wire = (PAUSE_FRAME_BYTES + p.wire_overhead_bytes) as u64;
        let mut reserved = 0u64;
        for q in n.ports() {
            let port = &topo.ports[q as usize];
            let link = &topo.links[port.link.idx()];
            let peer_rate = topo.links[topo.ports[port.peer.idx()].link.idx()].rate;
            let resp = pp
                .peer_response
                .unwrap_or_else(|| headroom::peer_response(peer_rate));
            let formula = headroom::sonic_headroom(&HeadroomInputs {
                mtu_bytes: p.mtu_frame_wire_bytes(),
                rate: link.rate,
                cable_delay: link.delay,
                gearbox_bytes: 0,
                mac_phy_bytes: link.rate.bytes_in(p.switch_latency) + pause_wire,
                peer_response_bytes: link.rate.bytes_in(resp),
            });
            reserved += match pp.headroom {
                crate::sim::params::Headroom::Formula { scale } => (formula as f64 * scale) as u64,
                crate::sim::params::Headroom::Bytes(b) => b,
            };
        }
        let lossless = (0..p.traffic_classes)
            .filter(|&t| pp.lossless & (1 << t) != 0)
            .count() as u64;
        Some(Ingress {
            shared_bytes: p.switch_buffer_bytes.saturating_sub(reserved * lossless),
            xoff: pp.xoff,
            xon_offset_bytes: pp.xon_offset_bytes,
        })
    }

    /// The XOFF threshold of an ingress while the switch holds `used` bytes.
    pub fn threshold(&self, used: f64) -> f64 {
        match self.xoff {
            PfcThreshold::Static(b) => b as f64,
            PfcThreshold::Dynamic(alpha) => alpha * (self.shared_bytes as f64 - used).max(0.0),
        }
    }
}

/// `queue` (a burst queue's depth over time, drained at its egress's rate while it holds
/// bytes) with its egress paused by the next switch's ingress (`ing`), whose bytes wait in
/// `congested` (the next switch's deep egress); `share` of the bytes it drains go there. The
/// same arrivals (recovered from `queue`: the depth's change plus what the egress drained; an
/// empty queue's are taken as none) drain only while the ingress is not XOFF. Returns the
/// paused queue, up to its drain (or `HORIZON_PS`).
pub fn paused(queue: &QueueTrace, congested: &QueueTrace, ing: &Ingress, share: f64) -> Paused {
    let c = queue.egress_bps as f64 / 8.0 * STEP_PS as f64 * 1e-12;
    let (at, depth) = queue.samples();
    let mut out_at = Vec::with_capacity(at.len());
    let mut out_q = Vec::with_capacity(at.len());
    let (mut departed, mut gone) = (Vec::with_capacity(at.len()), 0.0f64);
    // Bytes the ingress holds, and when each step's bytes leave the congested egress (in
    // order: a FIFO drained at C shrinks by at most C per unit time, so `t + U(t) / C` never
    // falls).
    let (mut held, mut leaving) = (0.0f64, VecDeque::<(u64, f64)>::new());
    let (mut prev, mut q, mut xoff, mut t_prev) = (0.0f64, 0.0f64, false, 0u64);
    let mut i = 0;
    loop {
        let (t, arriving) = match (at.get(i), depth.get(i)) {
            (Some(&t), Some(&d)) => {
                let d = d as f64;
                let drained = if d > 0.0 { c } else { prev.min(c) };
                let arriving = (d - prev + drained).max(0.0);
                prev = d;
                (t, arriving)
            }
            _ if q <= 0.0 || t_prev >= HORIZON_PS => break,
            _ => (t_prev + STEP_PS, 0.0),
        };
        // Steps the model skipped held an empty queue.
        let steps = (t.saturating_sub(t_prev) / STEP_PS).max(1) as f64;
        t_prev = t;
        i += 1;
        while let Some(&(_, b)) = leaving.front().filter(|l| l.0 <= t) {
            leaving.pop_front();
            held -= b;
        }
        let thr = ing.threshold(congested.depth(t));
        if xoff && held + ing.xon_offset_bytes as f64 <= thr {
            xoff = false;
        }
        let out = if xoff { 0.0 } else { (q + arriving).min(c * steps) };
        q += arriving - out;
        gone += out;
        if out > 0.0 {
            held += out * share;
            leaving.push_back((t + congested.wait_ps(t), out * share));
        }
        if held > thr {
            xoff = true;
        }
        out_at.push(t);
        out_q.push(q.max(0.0) as f32);
        departed.push(gone);
    }
    Paused {
        depth: QueueTrace::from_samples(out_at, out_q, queue.egress_bps),
        departed,
    }
}

/// A paused burst queue over time: its depth, and the bytes it drained by each sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Paused {
    pub depth: QueueTrace,
    departed: Vec<f64>,
}

impl Paused {
    /// The queueing delay (ps) of a byte arriving at `t`: until the bytes queued before it
    /// drained, which they do only while the egress is not paused (FIFO).
    pub fn wait_ps(&self, t: u64) -> u64 {
        let (at, _) = self.depth.samples();
        let i = at.partition_point(|&a| a <= t);
        if i == 0 {
            return 0;
        }
        let target = self.departed[i - 1] + self.depth.depth(t);
        let j = self.departed.partition_point(|&d| d < target);
        at.get(j).map_or(at[at.len() - 1], |&a| a).saturating_sub(t)
    }
}
