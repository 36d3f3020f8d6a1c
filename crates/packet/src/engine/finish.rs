//! Sampling the per-port time series, and the end of a run: bytes in flight, ideal completion
//! times, the `RunResult`.

use super::{Engine, Ev, NO_TIME};
use crate::packet::NIL;
use crate::transport::Qp;
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_core::topology::{NodeId, PortId};
use fabricsim_core::units::Time;
use fabricsim_mech::results::{
    ClassSummary, MessageResult, PortSeries, RunResult, Series, SimInfo, Status, Summary,
};
use fabricsim_mech::route;

/// The series being sampled: the interval, each port's samples so far, and the cumulative
/// counters at the last sample (a sample records their growth over the interval). Sampling
/// reads counters the engine keeps anyway, once per interval: nothing per packet.
pub(super) struct Sampler {
    iv: Time,
    ports: Vec<PortSeries>,
    /// Per port at the last sample: bytes sent, PFC-paused ps, PAUSE frames received, ps
    /// waited for credits.
    last: Vec<[u64; 4]>,
    last_marks: u64,
    last_cnps: u64,
    ecn_marks: Vec<u64>,
    cnps: Vec<u64>,
}

impl Sampler {
    pub(super) fn new(iv: Time, ports: Vec<PortSeries>) -> Sampler {
        Sampler {
            iv,
            last: vec![[0; 4]; ports.len()],
            ports,
            last_marks: 0,
            last_cnps: 0,
            ecn_marks: Vec::new(),
            cnps: Vec::new(),
        }
    }
}

impl Engine<'_> {
    pub(super) fn sample(&mut self) {
        let Some(sm) = self.series.as_mut() else {
            return;
        };
        let now = self.now.0;
        for (i, s) in sm.ports.iter_mut().enumerate() {
            let port = &self.ports[i];
            let queued = if port.host != NIL {
                self.nics[port.host as usize].ctrl.bytes
            } else {
                port.queued
            };
            let last = &mut sm.last[i];
            s.queue_bytes.push(queued);
            s.tx_bytes.push(port.tx_bytes - last[0]);
            last[0] = port.tx_bytes;
            if let Some(pfc) = &self.fc.pfc {
                let (paused, rx) = (pfc.paused_ps_at(i, now), pfc.pauses_rx[i]);
                s.paused_ps.push(paused - last[1]);
                s.pause_frames.push(rx - last[2]);
                (last[1], last[2]) = (paused, rx);
            }
            if let Some(cr) = &self.fc.credits {
                let stalled = cr.stall_ps_at(i, now);
                s.credit_stall_ps.push(stalled - last[3]);
                last[3] = stalled;
            }
        }
        sm.ecn_marks.push(self.c.ecn_marks - sm.last_marks);
        sm.cnps.push(self.c.cnps - sm.last_cnps);
        (sm.last_marks, sm.last_cnps) = (self.c.ecn_marks, self.c.cnps);
        if self.remaining > 0 && !self.q.is_empty() {
            self.q.push((self.now + sm.iv).0, Ev::Sample);
        }
    }

    /// Payload bytes of data packets still in the system, counted from the queues and pending
    /// events (independently of the send/deliver/drop counters).
    pub(super) fn payload_in_flight(&self) -> u64 {
        let mut total = 0;
        for f in &self.tcq {
            total += f
                .entries(&self.queued)
                .map(|e| self.pkts.get(e.id).payload as u64)
                .sum::<u64>();
        }
        for ev in self.q.q.events() {
            if let Ev::Arrive { pkt } = ev {
                total += self.pkts.get(pkt).payload as u64;
            }
        }
        total
    }

    /// The unloaded completion time of `bytes` from `src` to `dst` along the path its flow hash
    /// takes: the first packet's latency, the rest serialized at the path's bottleneck, the last
    /// packet's ACK back.
    pub(super) fn ideal_fct(&self, qp: &Qp, bytes: u64) -> Time {
        let p = self.p;
        let fwd = self.path(qp.src, qp.dst, qp.hash_fwd);
        let rev = self.path(qp.dst, qp.src, qp.hash_rev);
        let mtu = p.mtu_bytes as u64;
        let n = bytes.div_ceil(mtu).max(1);
        let last_payload = (bytes - (n - 1) * mtu) as u32;
        let full = p.data_frame_bytes(p.mtu_bytes.min(bytes.max(1) as u32)) + self.wire_extra;
        let last = p.data_frame_bytes(last_payload) + self.wire_extra;
        let ack = p.ack_frame_bytes() + self.wire_extra;
        // From the head of the sender's NIC pipeline to the receiver's processing of the packet.
        let one_way = |path: &[usize], wire: u32| {
            let mut t = Time::ZERO;
            for &pi in path {
                let s = &self.ports[pi];
                t += if s.peer_cut_through {
                    Time::ZERO
                } else {
                    s.ser(wire)
                } + s.hop_delay;
            }
            t
        };
        let bottleneck = fwd
            .iter()
            .map(|&pi| &self.ports[pi])
            .max_by_key(|s| s.ser(full))
            .expect("a path has links");
        let host = &self.ports[fwd[0]];
        // The last packet's tail arrives when the sender has streamed the others, or when the
        // first one has crossed and the others have passed the bottleneck, whichever is later.
        let by_host = host.ser(full) * (n - 1) + one_way(&fwd, last);
        let by_bottleneck = if n > 1 {
            one_way(&fwd, full) + bottleneck.ser(full) * (n - 2) + bottleneck.ser(last)
        } else {
            Time::ZERO
        };
        let mut rx_last = by_host.max(by_bottleneck);
        // The ACK of the last packet may wait behind the previous ACK on the receiver's link
        // (ACKs go every `ack_every` packets: packet j, 1-based, arrives at one_way + (j-1) x
        // bottleneck serialization).
        let k = p.ack_every as u64;
        let prev_acked = (n - 1) / k * k;
        if prev_acked >= 1 {
            let prev = one_way(&fwd, full) + bottleneck.ser(full) * (prev_acked - 1);
            rx_last = rx_last.max(prev + self.ports[rev[0]].ser(ack));
        }
        // Data wait for the sender NIC's latency; the receiver NIC returns the ACK at once.
        p.nic_latency + rx_last + one_way(&rev, ack)
    }

    /// Egress ports along the route of a flow with `hash` from host `src` to `dst` (the
    /// routing policy's choice with this engine's per-switch salts or divisors).
    pub(super) fn path(&self, src: u32, dst: u32, hash: u32) -> Vec<usize> {
        let mut out = Vec::new();
        let pick = |node: NodeId, c: &[PortId], up: bool| {
            route::choose(
                self.p.routing,
                c.len(),
                hash,
                dst,
                self.routes.salt(node.0),
                up,
            )
        };
        route::walk(self.topo, src, dst, pick, |pi| out.push(pi.idx()));
        out
    }

    /// Whether the run drew from a random stream of its seed: link loss, spraying, RED
    /// marking, or seeded initial PSNs (the seed's only uses; `SimInfo::drew_random`).
    fn drew_random(&self) -> bool {
        let seed = self.p.seed;
        self.p.initial_psn == fabricsim_mech::psn::InitialPsn::Seeded
            || Rng::any_drawn(&self.rngs, seed, Stream::LinkLoss)
            || Rng::any_drawn(&self.spray_rngs, seed, Stream::Spray)
            || self.cc.marking.drew(seed)
    }

    pub(super) fn finish(mut self, status: Status, wall_s: f64) -> RunResult {
        self.c.bytes_in_flight = self.payload_in_flight();
        self.llr_count();
        let mut messages = Vec::with_capacity(self.msgs.len());
        let mut failed = 0;
        for (i, st) in self.msgs.iter().enumerate() {
            let m = &self.dag.messages[i];
            let ideal = if st.qp != NIL {
                self.ideal_fct(&self.qps[st.qp as usize], m.bytes).0
            } else {
                self.dag
                    .nvlink_rate
                    .map(|r| r.serialize(m.bytes).0)
                    .unwrap_or(0)
            };
            let opt = |t: u64| (t != NO_TIME).then_some(t);
            failed += st.failed as u64;
            messages.push(MessageResult {
                id: i as u32,
                qp: (st.qp != NIL).then_some(st.qp),
                class: (st.qp != NIL).then(|| self.qps[st.qp as usize].tc),
                src: m.src.0,
                dst: m.dst.0,
                bytes: m.bytes,
                start_ps: opt(st.post),
                recv_ps: opt(st.recv),
                finish_ps: opt(st.finish),
                fct_ps: (st.finish != NO_TIME).then(|| st.finish - st.post),
                ideal_fct_ps: ideal,
            });
        }
        let summary = Summary::of(&messages, failed, self.c.bytes_delivered);
        let sim_s = wall_s.max(1e-9);
        RunResult {
            sim: SimInfo {
                engine: "packet",
                status,
                partial: matches!(status, Status::StoppedAtUntil | Status::Interrupted),
                seed: self.p.seed,
                end_ps: self.now.0,
                events: self.events,
                wall_s,
                events_per_s: self.events as f64 / sim_s,
                packets_per_s: self.data_sent as f64 / sim_s,
                peak_packets: self.pkts.capacity_used() as u64,
                drew_random: self.drew_random(),
                warnings: Vec::new(),
            },
            counters: self.c.clone(),
            flow_control: self.fc.result(self.topo, self.now.0),
            summary,
            classes: ClassSummary::of(
                &messages,
                self.fc.pfc.is_some().then_some(&self.fc.pauses_by_tc[..]),
            ),
            messages,
            series: self.series.take().map(|sm| Series {
                interval_ps: sm.iv.0,
                ports: sm.ports,
                ecn_marks: sm.ecn_marks,
                cnps: sm.cnps,
            }),
        }
    }
}
