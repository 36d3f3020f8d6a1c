//! PFC pauses of a switch egress whose next hop holds a congested egress: the next switch's
//! ingress from that egress counts the bytes it took in until they leave (they wait in the
//! congested egress's FIFO), and sends XOFF once that count passes the threshold (dynamic:
//! `alpha x` the switch's free shared pool; static: a number of bytes), XON once it is the XON
//! offset below it (IEEE 802.1Qbb; the admission of `sim::pfc`, after the HPCC ns-3
//! `switch-mmu.cc`). The egress drains only while unpaused: a burst queue that feeds a deep
//! congested egress stays deep long after its flows were cut (`flow::dcqcn_victim`).
//!
//! The congested egress's depth over time is a mean-field queue (`dcqcn_incast`) that counts
//! bytes as they reach the queues before it; those a pause holds back are not in the switch
//! yet, so its buffer use is that depth less them (the one deep queue of the switch), and the
//! dynamic threshold, shared by all its ingresses, rises as it drains and falls as any paused
//! queue resumes: the burst queues feeding one congested egress are modeled together. The
//! ingress count is fluid: bytes passed on while the switch holds `U` leave it `U / C` later
//! (FIFO at the congested egress's rate `C`).
//!
//! Traced on the packet engine by `flow_calibrate -- victim-pause` (roce-400g, 1,024 GPUs,
//! 99:1 x 1 MB + 8 victims; leaf shared pool 118,912 KB by [`Ingress::of`]): the spine
//! downlinks into the receiver's leaf that carry 4-5 incast QPs are paused from 80 us (the
//! leaf holds 91 MB: threshold 3.4 MB, their ingresses 3.6-3.8 MB), those with 1-3 never; on
//! the packet engine's own samples this rule resumes the 5-QP one at 171 us as the packet
//! engine does (XON at 171, 271, 365 us), but there each XON lets a burst of 0.3-0.7 MB through
//! (the four resume together and fill the leaf, and the threshold falls) and the next waits for
//! it to leave, so its queue holds 1-2 MB to 365 us; here the queue drains from 140 us at the
//! rate the threshold allows (6 KB/us, there 4). The model's 5-QP queue also peaks lower (its
//! mean field: 3.1 MB, the packet engine 4.6). Not modeled: the peer's response time (bytes in
//! flight after XOFF count as shared; no burst per XON), other deep egresses of the same
//! switch, bytes the paused egress passes to other egresses of the next switch (counted as
//! leaving at once), the pauses' feedback on the burst's DCQCN marks.

use std::collections::VecDeque;

use crate::sim::SimParams;
use crate::sim::headroom;
use crate::sim::params::{FlowControl, PfcThreshold};
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
        let reserved: u64 = n
            .ports()
            .map(|q| headroom::port_headroom(topo, p, pp, q as usize))
            .sum();
        let lossless = pp.lossless_classes(p.traffic_classes as usize);
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

/// A burst queue that feeds the next switch's congested egress: its depth over time as its
/// mean field gives it (drained at its egress's rate while it holds bytes), and the share of
/// the bytes it drains that go into the congested egress.
pub struct Feeder<'a> {
    pub queue: &'a QueueTrace,
    pub share: f64,
}

/// The burst queues `feeders`, their egresses paused by the next switch's ingresses (`ing`),
/// whose bytes wait in `congested` (the next switch's deep egress, the switch's buffer use).
/// Each queue's arrivals (recovered from its trace: the depth's change plus what the egress
/// drained; an empty queue's are taken as none) drain only while its ingress is not XOFF.
/// The congested egress's mean field counts the bytes as they reach the burst queues; those a
/// pause holds back are not yet in the next switch: its depth is the mean field's less them,
/// so a queue that resumes lowers the threshold for all (the ingresses share the free pool).
/// Returns each queue paused, up to its drain (or `HORIZON_PS`).
pub fn paused(feeders: &[Feeder], congested: &QueueTrace, ing: &Ingress) -> Vec<Paused> {
    struct State {
        c: f64,
        prev: f64,
        q: f64,
        xoff: bool,
        /// Bytes its ingress holds, and when each step's leave the congested egress (in order:
        /// a FIFO drained at C shrinks by at most C per unit time, so `t + U(t) / C` never
        /// falls).
        held: f64,
        leaving: VecDeque<(u64, f64)>,
        gone: f64,
        /// Its samples: step ends, depths, bytes drained so far.
        at_ps: Vec<u64>,
        depth: Vec<f32>,
        departed: Vec<f64>,
        bps: u64,
    }
    let mut st: Vec<State> = feeders
        .iter()
        .map(|f| State {
            c: f.queue.egress_bps as f64 / 8.0 * STEP_PS as f64 * 1e-12,
            prev: 0.0,
            q: 0.0,
            xoff: false,
            held: 0.0,
            leaving: VecDeque::new(),
            gone: 0.0,
            at_ps: Vec::new(),
            depth: Vec::new(),
            departed: Vec::new(),
            bps: f.queue.egress_bps,
        })
        .collect();
    let last = |q: &QueueTrace| q.samples().0.last().copied().unwrap_or(0);
    let end = feeders.iter().map(|f| last(f.queue)).max().unwrap_or(0);
    let root_bps = congested.egress_bps.max(1) as f64;
    let mut t = 0u64;
    while t < HORIZON_PS && (t <= end || st.iter().any(|s| s.q > 0.0)) {
        t += STEP_PS;
        // The congested egress's depth less what the pauses hold back.
        let back: f64 = (st.iter().zip(feeders))
            .map(|(s, f)| (s.q - f.queue.depth(t - STEP_PS)).max(0.0) * f.share)
            .sum();
        let used = (congested.depth(t) - back).max(0.0);
        let thr = ing.threshold(used);
        let wait = (used * 8e12 / root_bps) as u64;
        for (s, f) in st.iter_mut().zip(feeders) {
            let d = f.queue.depth(t);
            let drained = if d > 0.0 { s.c } else { s.prev.min(s.c) };
            let arriving = (d - s.prev + drained).max(0.0);
            s.prev = d;
            while let Some(&(_, b)) = s.leaving.front().filter(|l| l.0 <= t) {
                s.leaving.pop_front();
                s.held -= b;
            }
            // An ingress that holds nothing resumes (the model's guard against a threshold
            // below the XON offset, which would hold it forever).
            if s.xoff && (s.held + ing.xon_offset_bytes as f64 <= thr || s.held < 1.0) {
                s.xoff = false;
            }
            let out = if s.xoff {
                0.0
            } else {
                (s.q + arriving).min(s.c)
            };
            s.q = (s.q + arriving - out).max(0.0);
            s.gone += out;
            if out > 0.0 {
                s.held += out * f.share;
                s.leaving.push_back((t + wait, out * f.share));
            }
            if s.held > thr {
                s.xoff = true;
            }
            s.at_ps.push(t);
            s.depth.push(s.q as f32);
            s.departed.push(s.gone);
        }
    }
    st.into_iter()
        .map(|s| Paused {
            depth: QueueTrace::from_samples(s.at_ps, s.depth, s.bps),
            departed: s.departed,
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::MessageDag;
    use crate::sim::lossless_scenarios::clos2;
    use crate::sim::params::PfcParams;
    use crate::topology::HostId;
    use crate::units::{BitRate, Time};

    #[test]
    fn the_shared_pool_is_the_packet_engines() {
        // The packet engine reports the headroom of its switch ports (`FlowControlResult`):
        // on a Clos whose links are all alike it is one figure, and a leaf of 4 hosts under 2
        // spines reserves it on each of its 6 ports for the one lossless class.
        let (topo, leaves, _) = clos2(2, 2, 4, BitRate::gbps(400), Time::from_ns(100));
        let mut p = SimParams::roce();
        p.flow_control = FlowControl::Pfc(PfcParams::tuned(p.data_tc, p.mtu_frame_wire_bytes()));
        let mut dag = MessageDag::default();
        dag.push(HostId(0), HostId(5), 64 << 10, Time::ZERO, &[]);
        let r = crate::sim::run(&topo, &p, &dag, &Default::default(), Default::default()).unwrap();
        let fc = r.flow_control.expect("PFC");
        assert_eq!(fc.headroom_bytes_min, fc.headroom_bytes_max);
        let ing = Ingress::of(&topo, &p, leaves[0]).expect("a switch under PFC");
        assert_eq!(
            ing.shared_bytes,
            p.switch_buffer_bytes - 6 * fc.headroom_bytes_max
        );
        // Dynamic alpha 1/8 of the free pool (`PfcParams::tuned`).
        let used = 1e6;
        assert_eq!(ing.threshold(used), (ing.shared_bytes as f64 - used) / 8.0);
        let nic = topo.nics[0];
        assert!(Ingress::of(&topo, &p, nic).is_none());
    }

    /// A queue of `bytes` that all arrive in the first step and drain at 400 Gb/s.
    fn burst(bytes: f64) -> QueueTrace {
        let c = 400e9 / 8.0 * STEP_PS as f64 * 1e-12;
        let steps = (bytes / c).ceil() as u64;
        let at: Vec<u64> = (1..=steps + 1).map(|k| k * STEP_PS).collect();
        let q: Vec<f32> = (1..=steps + 1)
            .map(|k| (bytes - c * k as f64).max(0.0) as f32)
            .collect();
        QueueTrace::from_samples(at, q, 400_000_000_000)
    }

    #[test]
    fn a_static_threshold_holds_the_queue_until_its_bytes_leave_the_congested_egress() {
        // 512 KB reach a 400 Gb/s egress at once (2,500 B per 50 ns step); the next switch's
        // ingress takes 256 KB (static XOFF, no XON offset) into a congested egress 64 MB deep
        // (400 Gb/s, for 1 s). The egress sends until its ingress holds more than 256 KB (105
        // steps, 262,500 B), then is paused until those bytes leave the congested egress,
        // 64 MB / 400 Gb/s = 1,342.177 us after they came (the first step's, sent by 0.05 us,
        // are released at the step ending 1,342.25 us); from then it sends as they leave, at
        // line: the other 261,788 B take 105 steps, the last ending at 1,342.25 + 104 x 0.05
        // = 1,347.45 us (unpaused: 10.5 us). A byte arriving at 30 us waits for them all:
        // 1,317.45 us.
        let ing = Ingress {
            shared_bytes: 0,
            xoff: PfcThreshold::Static(256 << 10),
            xon_offset_bytes: 0,
        };
        let deep = QueueTrace::from_samples(
            vec![0, 1_000_000_000_000],
            vec![(64 << 20) as f32, 0.0],
            400_000_000_000,
        );
        let q = burst((512 << 10) as f64);
        let out = paused(
            &[Feeder {
                queue: &q,
                share: 1.0,
            }],
            &deep,
            &ing,
        );
        let (at, depth) = out[0].depth.samples();
        let drained = at[depth.iter().rposition(|&d| d > 0.0).unwrap() + 1];
        assert_eq!(drained, 1_347_450_000);
        // Paused from 5.25 us on: the depth holds.
        assert_eq!(out[0].depth.depth(10_000_000), 261_788.0);
        assert_eq!(out[0].depth.depth(1_000_000_000), 261_788.0);
        assert_eq!(out[0].wait_ps(30_000_000), 1_317_450_000);
        // Into an empty egress the ingress never fills: the queue drains as unpaused.
        let none = QueueTrace::from_samples(vec![0], vec![0.0], 400_000_000_000);
        let free = paused(
            &[Feeder {
                queue: &q,
                share: 1.0,
            }],
            &none,
            &ing,
        );
        let (at, depth) = free[0].depth.samples();
        let drained = at[depth.iter().rposition(|&d| d > 0.0).unwrap() + 1];
        assert!(drained.abs_diff(10_485_760) <= 2 * STEP_PS, "{drained}");
    }
}
