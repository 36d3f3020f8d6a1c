//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019, §3.2-3.3 and
//! Algorithm 1): every switch egress appends in-band telemetry (INT) to a data packet (queue
//! length, bytes sent, timestamp, link rate), the receiver echoes it in the ACK, and the sender
//! computes each hop's utilization u = qlen/(B·T) + txRate/B, takes the largest, smooths it
//! over one base RTT T (U = (U·(T−τ) + u·τ)/T) and sets its window W = W_c/(U/η) + W_AI when
//! U ≥ η or after `max_stage` additive steps, else W = W_c + W_AI; W_c is the window of the
//! last full-RTT update (once an ACK acknowledges past the sequence sent at the last one),
//! per-ACK updates in between react from W_c without moving it (§3.3 "fast reaction"). The
//! rate is W/T, as a pacing gap. Details as in the authors' ns-3 model (`rdma-hw.cc`
//! `UpdateRateHp`): the window is W_init·R/B with W_init = B·T, the queue term uses the smaller
//! of the two samples' queues, T is the largest base RTT of the run's QPs, hops whose samples
//! share a timestamp are skipped.
//!
//! INT lives in a side table indexed by packet slab id (fixed-size records, reserved at setup
//! for the slab's room and grown with the slab past it, never per packet), at most `MAX_HOPS`
//! switches a route.

use super::{Acked, CcOut, CcSetup, CongestionControl, Echo, Gap, Hop};
use crate::error::SimError;
use crate::transport::Qp;
use fabricsim_core::topology::{PortId, Topology};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::dcqcn::gap_q16;
use fabricsim_mech::hpcc::HpccParams;
use fabricsim_mech::params::SimParams;
use fabricsim_mech::route;

/// The switches a route may cross (a 4-tier up-down route crosses 7).
pub const MAX_HOPS: usize = 7;

/// One hop's INT sample.
#[derive(Clone, Copy, Debug, Default)]
struct IntHop {
    ts: u64,
    tx_bytes: u64,
    queue_bytes: u64,
    rate_bps: u64,
}

/// A packet's (or a QP's last) INT.
#[derive(Clone, Copy, Debug, Default)]
struct Int {
    n: u8,
    hops: [IntHop; MAX_HOPS],
}

/// A sender's state.
#[derive(Clone, Copy, Debug, Default)]
struct HpQp {
    /// The reference rate R_c (W_c/T), bits/s.
    rc: f64,
    inc_stage: u32,
    /// Smoothed utilization U.
    u: f64,
    /// The sequence sent at the last full update; `None` before the first ACK.
    last_update: Option<u32>,
    /// The INT of the last ACK.
    last: Int,
}

pub struct Hpcc {
    h: HpccParams,
    /// Base RTT T, ps, and in seconds.
    t_ps: u64,
    t_s: f64,
    /// W_AI as a rate (W_AI/T), bits/s, per QP's line rate.
    rai: Vec<f64>,
    mtu: u64,
    /// The transport's window, packets (0: unlimited).
    cap: u32,
    /// INT per packet slab id.
    int: Vec<Int>,
    qp: Vec<HpQp>,
}

/// ns-3 config `MIN_RATE`.
const MIN_RATE_BPS: f64 = 100e6;

impl Hpcc {
    pub fn new(h: HpccParams, s: &CcSetup) -> Result<Hpcc, SimError> {
        let t_ps = base_rtt(s)?.0.max(1);
        let t_s = t_ps as f64 * 1e-12;
        let rai = s
            .line
            .iter()
            .map(|l| match h.w_ai_bytes {
                Some(w) => w as f64 * 8.0 / t_s,
                None => l.bps() as f64 * 10e6 / 25e9,
            })
            .collect();
        Ok(Hpcc {
            h,
            t_ps,
            t_s,
            rai,
            mtu: s.p.mtu_bytes.max(1) as u64,
            cap: s.p.window_packets,
            // Reserved, not touched: a record is written when its packet is first sent.
            int: Vec::with_capacity(s.packets),
            qp: s
                .line
                .iter()
                .map(|l| HpQp {
                    rc: l.bps() as f64,
                    ..HpQp::default()
                })
                .collect(),
        })
    }

    /// The window in packets at rate `r` (W = W_init·R/B = R·T, at least a packet), within
    /// the transport's window (0: unlimited).
    fn window(&self, r: f64) -> u32 {
        let w = ((r * self.t_s / 8.0) as u64)
            .div_ceil(self.mtu)
            .clamp(1, u32::MAX as u64) as u32;
        if self.cap == 0 { w } else { w.min(self.cap) }
    }

    fn slot(&mut self, id: u32) -> &mut Int {
        let i = id as usize;
        if i >= self.int.len() {
            // Within the room reserved at setup this writes, it does not allocate.
            self.int.resize(i + 1, Int::default());
        }
        &mut self.int[i]
    }
}

/// T: the largest base RTT over the run's QPs, as the ns-3 model's `GLOBAL_T` (a full data
/// frame serialized and propagated over each link of the static route, an ACK back, with the
/// switch and NIC latencies); `Err` if a route crosses more than `MAX_HOPS` switches.
fn base_rtt(s: &CcSetup) -> Result<Time, SimError> {
    let mut t = Time::ZERO;
    for (rtt, hops, q) in unloaded_rtts(s, false) {
        if hops > MAX_HOPS {
            return Err(SimError::Traffic(format!(
                "HPCC: the route from host {} to {} crosses {hops} switches; INT holds {MAX_HOPS}",
                q.src, q.dst
            )));
        }
        t = t.max(rtt);
    }
    Ok(t)
}

/// Each QP's unloaded round trip on its static route (a full data frame out, an ACK back, the
/// switch and NIC latencies), the switches its route crosses, and the QP. `cut_through`: a
/// frame into a switch does not wait for its own serialization (the engine's rule for
/// cut-through switches of uniform port rates, `engine::wire::transmit`); else store and
/// forward on every hop.
pub(super) fn unloaded_rtts<'a>(
    s: &'a CcSetup,
    cut_through: bool,
) -> impl Iterator<Item = (Time, usize, &'a Qp)> + 'a {
    let (p, topo) = (s.p, s.topo);
    let salt = route::salts(topo, p.routing);
    let data = p.mtu_frame_wire_bytes();
    let ack = (p.ack_frame_bytes() + p.wire_overhead_bytes) as u64;
    let one_way = move |src: u32, dst: u32, hash: u32, bytes: u64| {
        let (mut t, mut hops) = (Time::ZERO, 0usize);
        route::walk(
            topo,
            src,
            dst,
            route::hashed(p.routing, hash, dst, &salt),
            |pi| {
                t += hop_time(topo, pi, bytes, p, cut_through);
                hops += 1;
            },
        );
        (t, hops - 1)
    };
    s.qps.iter().map(move |q| {
        let (fwd, hops) = one_way(q.src, q.dst, q.hash_fwd, data);
        let (rev, _) = one_way(q.dst, q.src, q.hash_rev, ack);
        (fwd + rev, hops, q)
    })
}

/// Serializing `bytes` at egress `pi` (not into a cut-through switch), the link's propagation
/// and the next node's latency.
fn hop_time(topo: &Topology, pi: PortId, bytes: u64, p: &SimParams, cut_through: bool) -> Time {
    let link = &topo.links[topo.ports[pi.idx()].link.idx()];
    let next = topo.peer_node(pi);
    let (lat, ser) = if topo.nodes[next.idx()].is_switch() {
        (p.switch_latency, !cut_through)
    } else {
        (p.nic_latency, true)
    };
    let ser = if ser {
        link.rate.serialize(bytes)
    } else {
        Time::ZERO
    };
    ser + link.delay + lat
}

impl CongestionControl for Hpcc {
    fn initial_window(&self, qp: u32, _default: u32) -> u32 {
        self.window(self.qp[qp as usize].rc)
    }

    fn telemetry(&self) -> bool {
        true
    }

    fn on_sent(&mut self, _qp: u32, pkt: u32, _w: u64, _now: Time, _l: BitRate) -> Option<CcOut> {
        self.slot(pkt).n = 0;
        None
    }

    fn on_egress(&mut self, pkt: u32, hop: &Hop) {
        let r = self.slot(pkt);
        if (r.n as usize) < MAX_HOPS {
            r.hops[r.n as usize] = IntHop {
                ts: hop.now.0,
                tx_bytes: hop.tx_bytes,
                queue_bytes: hop.queue_bytes,
                rate_bps: hop.rate.bps(),
            };
            r.n += 1;
        }
    }

    fn on_echo(&mut self, data: u32, ack: u32, _echo: Echo) {
        let r = *self.slot(data);
        *self.slot(ack) = r;
    }

    fn on_ack(&mut self, qp: u32, ack: u32, a: &Acked, line: BitRate) -> Option<CcOut> {
        let (una, nxt) = (a.una, a.nxt);
        let int = *self.slot(ack);
        let (t_ps, t_s, eta) = (self.t_ps, self.t_s, self.h.eta);
        let max_stage = self.h.max_stage;
        let rai = self.rai[qp as usize];
        let st = &mut self.qp[qp as usize];
        let Some(last_update) = st.last_update else {
            // The first ACK: the reference samples.
            st.last_update = Some(nxt);
            st.last = int;
            return None;
        };
        let full = una > last_update;
        let (mut umax, mut dt, mut any) = (0.0f64, 0u64, false);
        let n = (int.n.min(st.last.n)) as usize;
        for i in 0..n {
            let (cur, prev) = (int.hops[i], st.last.hops[i]);
            let tau = cur.ts.saturating_sub(prev.ts);
            if tau == 0 || cur.rate_bps == 0 {
                continue;
            }
            let b = cur.rate_bps as f64;
            let tx_rate =
                cur.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / (tau as f64 * 1e-12);
            let q = cur.queue_bytes.min(prev.queue_bytes) as f64 * 8.0;
            let u = tx_rate / b + q / (b * t_s);
            any = true;
            if u > umax {
                umax = u;
                dt = tau;
            }
        }
        st.last = int;
        if !any {
            return None;
        }
        let dt = dt.min(t_ps) as f64;
        st.u = (st.u * (t_ps as f64 - dt) + umax * dt) / t_ps as f64;
        let k = st.u / eta;
        let (rate, stage) = if k >= 1.0 || st.inc_stage >= max_stage {
            (st.rc / k + rai, 0)
        } else {
            (st.rc + rai, st.inc_stage + 1)
        };
        let rate = rate.clamp(MIN_RATE_BPS, line.bps() as f64);
        if full {
            st.rc = rate;
            st.inc_stage = stage;
            st.last_update = Some(nxt.max(last_update));
        }
        Some(CcOut {
            gap: Gap::Rate(gap_q16(rate as u64, line.bps())),
            window: Some(self.window(rate)),
            ..CcOut::default()
        })
    }
}
