//! PFC pauses of a switch egress whose next hop holds a congested egress: the next switch's
//! ingress from that egress counts the bytes it took in until they leave (they wait in the
//! congested egress's FIFO) in the shared pool while that count is under the threshold
//! (dynamic: `alpha x` the switch's free shared pool; static: a number of bytes), beyond it in
//! its headroom, and sends XOFF once the headroom holds a byte, XON once the headroom is empty
//! and the count is the XON offset below the threshold; a byte leaving frees headroom first
//! (IEEE 802.1Qbb; the admission of `sim::pfc`, after the HPCC ns-3 `switch-mmu.cc`). The
//! egress stops one lag after XOFF and resumes one lag after XON ([`lag_ps`]: the PAUSE frame,
//! the cable and the peer's response, the headroom formula's terms): what it sends in that lag
//! fills the headroom. The egress drains only while unpaused: a burst queue that feeds a deep
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
//! So a pause lasts until the bytes of one lag have left the congested egress, at the
//! ingress's share of its departures: the bytes that reach its head came in while it filled
//! (at ~2.4 MB/us, 48 times its drain), so a 400 Gb/s ingress's bytes leave at ~1 KB/us and
//! the headroom's ~86 KB take ~85 us; meanwhile the threshold rose with the drain (1/8 of it),
//! and at XON the ingress passes that rise, shared with the ingresses that resume with it (the
//! threshold falls by 1/8 of what they all pass), plus one lag: a burst of ~0.5 MB per XON.
//! Traced on the packet engine by `fabricsim-lab victim-pause` (roce-400g, 1,024 GPUs,
//! 99:1 x 1 MB + 8 victims; leaf shared pool 118,912 KB by [`Ingress::of`]): the spine
//! downlinks into the receiver's leaf that carry 4-5 incast QPs are paused from 80 us (the
//! leaf holds 91 MB: threshold 3.4 MB), those with 1-3 never; the 5-QP one that victim 4
//! crosses (its leaf ingress's `sim::pfc` counters printed by a local debug build, session
//! 11): XOFF at 81.9 us (3,452 KB shared, 21 frames = 86 KB into headroom), XON at 166.4,
//! 261.2, 364.5, 445.8 us, each as the headroom emptied (shared 3,460-4,710 KB, the threshold
//! then 3,923-5,105 KB), 117-173 frames through per XON (96-152 under the threshold, 21 in the
//! lag); its queue (the trace's samples) 2,058 KB paused, 1,583, 994, 393, empty at ~457 us. The model: XOFF at 80 us, XON at 159, 258, 366,
//! 465 us; the queue 2,095 KB paused, then 1,626, 1,072, 352, above Kmin to 470 us. Not
//! modeled: other deep egresses of the same switch, bytes the paused egress passes to other
//! egresses of the next switch (counted as leaving at once), the pauses' feedback on the
//! burst's DCQCN marks.

use std::collections::VecDeque;

use fabricsim_core::topology::{NodeId, Topology};
use fabricsim_mech::SimParams;
use fabricsim_mech::headroom;
use fabricsim_mech::params::{FlowControl, PfcThreshold};

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

    /// The most the switch's shared pool holds when `n` ingresses feed it: each is paused
    /// once its bytes pass the threshold, so at most `n x threshold`, and with a dynamic one
    /// `used = n alpha (B - used)`, `B n alpha / (1 + n alpha)` (1,024 GPUs 127:1, 55 spine
    /// downlinks into the receiver's leaf: 103,812 KB of its 118,912 KB pool, where the
    /// receiver's mean field reaches 128.8 MB; the packet engine's root queue peaks at 102,394
    /// KB, `fabricsim-lab victim-pause 1024 127`).
    pub fn most_used(&self, n: u32) -> f64 {
        let n = n as f64;
        match self.xoff {
            PfcThreshold::Static(b) => n * b as f64,
            PfcThreshold::Dynamic(alpha) => {
                self.shared_bytes as f64 * n * alpha / (1.0 + n * alpha)
            }
        }
    }
}

/// A burst queue that feeds the next switch's congested egress: its depth over time as its
/// mean field gives it (drained at its egress's rate while it holds bytes), and the share of
/// the bytes it drains that go into the congested egress.
pub struct Feeder<'a> {
    pub queue: &'a QueueTrace,
    pub share: f64,
    /// From its ingress's XOFF (XON) to the last (first) byte sent under it reaching that
    /// ingress, ps ([`lag_ps`]).
    pub lag_ps: u64,
}

/// The time from the next switch's XOFF (XON) to the last (first) byte the egress over
/// directed link `link` sends under it reaching that switch (ps; 0 without PFC): the PAUSE
/// frame's serialization, the cable, the peer's response time (`sim::engine::llfc`'s
/// `fc_send_pause`), and the cable back and the switch latency for the bytes on their way
/// (`sim::engine::build`'s hop delay): the headroom formula's terms (`sim::headroom`).
pub fn lag_ps(topo: &Topology, p: &SimParams, link: u32) -> u64 {
    let FlowControl::Pfc(pp) = &p.flow_control else {
        return 0;
    };
    let l = &topo.links[(link / 2) as usize];
    let wire = (headroom::PAUSE_FRAME_BYTES + p.wire_overhead_bytes) as u64;
    let response = pp
        .peer_response
        .unwrap_or_else(|| headroom::peer_response(l.rate));
    l.rate.serialize(wire).ps() + 2 * l.delay.ps() + p.switch_latency.ps() + response.ps()
}

/// The burst queues `feeders`, their egresses paused by the next switch's ingresses (`ing`),
/// whose bytes wait in `congested` (the next switch's deep egress, the switch's buffer use).
/// Each queue's arrivals (recovered from its trace: the depth's change plus what the egress
/// drained; an empty queue's are taken as none) drain only while its ingress is not XOFF.
/// The congested egress's mean field counts the bytes as they reach the burst queues; those a
/// pause holds back are not yet in the next switch: its depth is the mean field's less them,
/// so a queue that resumes lowers the threshold for all (the ingresses share the free pool);
/// the mean field is not bounded by the pauses of the other `ingresses` that feed the
/// congested egress, so the buffer use is at most [`Ingress::most_used`] of them all.
/// Returns each queue paused, up to its drain (or `HORIZON_PS`).
pub fn paused(
    feeders: &[Feeder],
    congested: &QueueTrace,
    ing: &Ingress,
    ingresses: u32,
) -> Vec<Paused> {
    struct State {
        c: f64,
        prev: f64,
        q: f64,
        /// Its ingress's XOFF, and when it last turned on or off (the egress follows one lag
        /// later).
        xoff: bool,
        flip: Option<u64>,
        /// Bytes its ingress holds in the shared pool and in its headroom (HPCC ns-3
        /// `switch-mmu.cc`, as `sim::pfc`: a byte beyond the threshold goes to headroom and
        /// asserts XOFF, a byte leaving frees headroom first, XON needs it empty), and when
        /// each step's leave the congested egress (in order: a FIFO drained at C shrinks by at
        /// most C per unit time, so `t + U(t) / C` never falls).
        shared: f64,
        hdrm: f64,
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
            flip: None,
            shared: 0.0,
            hdrm: 0.0,
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
    let most = ing.most_used(ingresses.max(feeders.len() as u32));
    let mut t = 0u64;
    while t < HORIZON_PS && (t <= end || st.iter().any(|s| s.q > 0.0)) {
        t += STEP_PS;
        // The congested egress's depth less what the pauses hold back.
        let back: f64 = (st.iter().zip(feeders))
            .map(|(s, f)| (s.q - f.queue.depth(t - STEP_PS)).max(0.0) * f.share)
            .sum();
        let used = (congested.depth(t) - back).clamp(0.0, most);
        let thr = ing.threshold(used);
        let wait = (used * 8e12 / root_bps) as u64;
        for (s, f) in st.iter_mut().zip(feeders) {
            let d = f.queue.depth(t);
            let drained = if d > 0.0 { s.c } else { s.prev.min(s.c) };
            let arriving = (d - s.prev + drained).max(0.0);
            s.prev = d;
            while let Some(&(_, b)) = s.leaving.front().filter(|l| l.0 <= t) {
                s.leaving.pop_front();
                let h = s.hdrm.min(b);
                s.hdrm -= h;
                s.shared = (s.shared - (b - h)).max(0.0);
            }
            // An ingress that holds nothing resumes (the model's guard against a threshold
            // below the XON offset, which would hold it forever).
            let empty = s.hdrm <= 0.0 && s.shared + ing.xon_offset_bytes as f64 <= thr;
            if s.xoff && (empty || s.shared + s.hdrm < 1.0) {
                s.xoff = false;
                s.flip = Some(t);
            }
            // The egress stops (resumes) one lag after its ingress's XOFF (XON).
            let held = s.flip.is_some_and(|at| s.xoff == (t >= at + f.lag_ps));
            let out = if held { 0.0 } else { (s.q + arriving).min(s.c) };
            s.q = (s.q + arriving - out).max(0.0);
            s.gone += out;
            if out > 0.0 {
                let b = out * f.share;
                let fits = (thr - s.shared).clamp(0.0, b);
                s.shared += fits;
                s.hdrm += b - fits;
                s.leaving.push_back((t + wait, b));
            }
            if !s.xoff && s.hdrm > 0.0 {
                s.xoff = true;
                s.flip = Some(t);
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

    #[test]
    fn the_pool_holds_at_most_every_ingress_at_its_threshold() {
        // n ingresses each holding the threshold: used = n alpha (B - used), the fixed point
        // B n alpha / (1 + n alpha); 48 at alpha 1/8 hold 6/7 of the pool. Static: n x bytes.
        let ing = Ingress {
            shared_bytes: 118_912 << 10,
            xoff: PfcThreshold::Dynamic(0.125),
            xon_offset_bytes: 8_356,
        };
        let most = ing.most_used(48);
        assert!(
            (most - (118_912u64 << 10) as f64 * 6.0 / 7.0).abs() < 1.0,
            "{most}"
        );
        assert!((48.0 * ing.threshold(most) - most).abs() < 1.0);
        let fixed = Ingress {
            xoff: PfcThreshold::Static(256 << 10),
            ..ing
        };
        assert_eq!(fixed.most_used(3), (3 * (256 << 10)) as f64);
    }

    /// Ingresses that feed the deep egress of the tests below, so that they may hold it:
    /// 1,000 x 256 KB.
    const OTHERS: u32 = 1_000;

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

    /// The next switch's ingress of the tests below (static XOFF at 256 KB, no XON offset) and
    /// the congested egress it feeds: 64 MB deep, draining at 400 Gb/s, for 1 s.
    fn static_256k_into_64mb() -> (Ingress, QueueTrace) {
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
        (ing, deep)
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
        let (ing, deep) = static_256k_into_64mb();
        let q = burst((512 << 10) as f64);
        let out = paused(
            &[Feeder {
                queue: &q,
                share: 1.0,
                lag_ps: 0,
            }],
            &deep,
            &ing,
            OTHERS,
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
                lag_ps: 0,
            }],
            &none,
            &ing,
            1,
        );
        let (at, depth) = free[0].depth.samples();
        let drained = at[depth.iter().rposition(|&d| d > 0.0).unwrap() + 1];
        assert!(drained.abs_diff(10_485_760) <= 2 * STEP_PS, "{drained}");
    }

    #[test]
    fn xon_waits_for_the_headroom_the_peers_lag_filled() {
        // The case above with a lag of 1 us (`lag_ps`: PAUSE, cable, peer response): XOFF at
        // the step ending 5.25 us (262,144 B in the shared pool, 356 B in headroom); the egress
        // sends 19 more steps (to 6.20 us), 47,500 B into headroom, and holds 524,288 - 124 x
        // 2,500 = 214,288 B. A byte leaving frees headroom first (`sim::pfc::release`): the
        // 47,856 B go with the first 20 steps' bytes, the last sent by 1.0 us and leaving
        // 1,342.177 us later; XON in the step ending 1,343.20 us, the egress resumes one lag
        // later: it sends again in the step ending 1,344.20 us (lag 0: 1,342.25 us).
        let (ing, deep) = static_256k_into_64mb();
        let q = burst((512 << 10) as f64);
        let resumed = |lag_ps: u64| {
            let feeder = Feeder {
                queue: &q,
                share: 1.0,
                lag_ps,
            };
            let out = paused(&[feeder], &deep, &ing, OTHERS);
            let (at, depth) = out[0].depth.samples();
            let held = out[0].depth.depth(100_000_000);
            let i = depth.iter().position(|&d| d < held as f32).unwrap();
            (held, at[i])
        };
        assert_eq!(resumed(0), (261_788.0, 1_342_250_000));
        assert_eq!(resumed(1_000_000), (214_288.0, 1_344_200_000));
    }
}
