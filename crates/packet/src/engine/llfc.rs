//! The engine side of link-level flow control outside the packet path (which is the admission
//! seam's, `engine/admission/`): its state `LinkFc` (IB credits, `crate::credits`, or PFC,
//! `crate::pfc`, with headroom from `fabricsim_mech::headroom`), the control frames, the PFC
//! watchdog, a stalled-receiver fault (the pause-storm source) and the deadlock detector
//! (`crate::deadlock`). Control frames travel on the link: PAUSE frames take 64 B of wire time
//! behind the frame in progress plus the link's propagation; credit updates take the
//! propagation delay.

use super::{Engine, NIL, set_bit};
use crate::credits::Credits;
use crate::deadlock::find_cycle;
use crate::error::SimError;
use crate::pfc::{NOT, Pfc};
use fabricsim_core::topology::{HostId, NodeId, PortId, Topology};
use fabricsim_core::units::Time;
use fabricsim_mech::headroom::{self, MAX_QUANTA, PAUSE_FRAME_BYTES};
use fabricsim_mech::params::{FlowControl, MAX_TC, SimParams};
use fabricsim_mech::results::{CycleHop, DeadlockReport, DropReason, FlowControlResult, PortFc};

/// Flow-control events.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FcEv {
    /// A flow-control packet with `fccl` reaches the sender on `port`.
    Credit {
        port: u32,
        tc: u8,
        fccl: u32,
    },
    /// A PAUSE frame takes effect at the sender on `port` (after the peer response time).
    Pause {
        port: u32,
        tc: u8,
        quanta: u16,
    },
    /// The pause of (`port`, `tc`) may have run out.
    PauseExpire {
        port: u32,
        tc: u8,
    },
    /// Ingress `port` refreshes its XOFF.
    Refresh {
        port: u32,
        tc: u8,
    },
    /// The watchdog looks at egress (`port`, `tc`), paused since it was armed.
    Watchdog {
        port: u32,
        tc: u8,
    },
    /// The watchdog may give PFC back to (`port`, `tc`).
    WatchdogRestore {
        port: u32,
        tc: u8,
    },
    /// Host `host`'s NIC stops (or resumes) receiving.
    Stall {
        host: u32,
        on: bool,
    },
    DeadlockCheck,
    /// A link-level retry ACK (all below `seq` received) or NACK (replay from `seq`) reaches
    /// sending `port` (`llr`).
    LlrAck {
        port: u32,
        seq: u64,
    },
    LlrNack {
        port: u32,
        seq: u64,
    },
    /// The coalesced-ACK timer of epoch `epoch` runs out at the receiver of sending `port`.
    LlrAckTimer {
        port: u32,
        epoch: u32,
    },
}

pub(super) struct LinkFc {
    pub credits: Option<Credits>,
    pub pfc: Option<Pfc>,
    /// Lossy classes trim instead of dropping past `CcParams::trim_bytes` (`admission::trim`).
    pub trim: bool,
    /// Bit `tc`: the class is lossless (credits: all classes).
    pub lossless: u8,
    /// Per port: the link's one-way propagation delay, the pause quantum and response time.
    link_delay: Vec<Time>,
    quantum_ps: Vec<u64>,
    response: Vec<Time>,
    pub stalled: Vec<bool>,
    /// The cycle seen at the previous check, with its ports' transmitted bytes then.
    last_cycle: Option<(Vec<(u32, u8)>, Vec<u64>)>,
    deadlock: Option<DeadlockReport>,
    pub halt: bool,
    /// PAUSE frames sent per class (`ClassSummary::pause_frames`).
    pub pauses_by_tc: [u64; MAX_TC],
    /// Forced next hops (node, destination host) -> port, sorted; `Fault::Misroute`.
    misroutes: Vec<((u32, u32), u32)>,
    deadlock_every: Option<Time>,
}

impl LinkFc {
    /// Port `ip`'s link's one-way propagation delay.
    pub(super) fn link_delay(&self, ip: usize) -> Time {
        self.link_delay[ip]
    }

    /// The flow-control state for `topo` under `p`; `Err` when the headroom does not fit.
    pub(super) fn new(
        topo: &Topology,
        p: &SimParams,
        misroutes: Vec<(NodeId, HostId, PortId)>,
    ) -> Result<LinkFc, SimError> {
        let mut forced = Vec::with_capacity(misroutes.len());
        for (node, dst, port) in misroutes {
            let ok = node.idx() < topo.nodes.len()
                && topo.nodes[node.idx()].is_switch()
                && topo.nodes[node.idx()].ports().contains(&port.0)
                && dst.idx() < topo.num_hosts();
            if !ok {
                return Err(SimError::Fault(format!(
                    "misroute at node {} for host {} via port {}: not a switch port of that node, or no such host",
                    node.0, dst.0, port.0
                )));
            }
            forced.push(((node.0, dst.0), port.0));
        }
        forced.sort_unstable();
        let ntc = p.traffic_classes as usize;
        let n = topo.ports.len();
        let link_delay: Vec<Time> = topo
            .ports
            .iter()
            .map(|q| topo.links[q.link.idx()].delay)
            .collect();
        let rate = |i: usize| topo.links[topo.ports[i].link.idx()].rate;
        let is_switch = |i: usize| topo.nodes[topo.ports[i].node.idx()].is_switch();
        let mut fc = LinkFc {
            credits: None,
            pfc: None,
            trim: p.cc.trim_bytes > 0,
            lossless: 0,
            quantum_ps: (0..n)
                .map(|i| headroom::quanta_time(1, rate(i)).0)
                .collect(),
            response: vec![Time::ZERO; n],
            stalled: vec![false; topo.num_hosts()],
            link_delay,
            last_cycle: None,
            deadlock: None,
            halt: false,
            pauses_by_tc: [0; MAX_TC],
            misroutes: forced,
            deadlock_every: None,
        };
        match p.flow_control {
            FlowControl::None => {}
            FlowControl::Credits(c) => {
                let cap = (0..n)
                    .map(|i| c.vl_buffer_blocks(is_switch(i)))
                    .collect::<Vec<u32>>();
                // A spaced update leaves up to its bytes unreported: the buffer holds them and
                // a frame more (`crate::credits`).
                let update = fabricsim_mech::params::blocks(c.update_bytes);
                let min_blocks =
                    fabricsim_mech::params::blocks(p.data_frame_bytes(p.mtu_bytes)) + update;
                if let Some(i) = cap.iter().position(|&b| b < min_blocks) {
                    return Err(SimError::Buffer(format!(
                        "port {i}: a per-VL buffer of {} blocks cannot hold one {} B packet \
                         and a credit update's spacing of {} B",
                        cap[i],
                        p.data_frame_bytes(p.mtu_bytes),
                        c.update_bytes
                    )));
                }
                let peer: Vec<u32> = topo.ports.iter().map(|q| q.peer.0).collect();
                fc.credits = Some(Credits::new(ntc, cap, &peer, update));
                fc.deadlock_every = c.deadlock_check;
                fc.lossless = ((1u16 << ntc) - 1) as u8;
            }
            FlowControl::Pfc(pp) => {
                let mut hdrm = vec![0u64; n];
                for (i, h) in hdrm.iter_mut().enumerate() {
                    fc.response[i] = pp
                        .peer_response
                        .unwrap_or_else(|| headroom::peer_response(rate(i)));
                    if !is_switch(i) {
                        continue; // NICs drain at line rate; they pause only when stalled
                    }
                    *h = headroom::port_headroom(topo, p, &pp, i);
                }
                let lossless_n = pp.lossless_classes(ntc);
                let mut shared = Vec::with_capacity(topo.nodes.len());
                for (ni, node) in topo.nodes.iter().enumerate() {
                    let reserved: u64 =
                        node.ports().map(|q| hdrm[q as usize]).sum::<u64>() * lossless_n;
                    if node.is_switch() && reserved >= p.switch_buffer_bytes {
                        return Err(SimError::Buffer(format!(
                            "switch node {ni}: PFC headroom {reserved} B does not fit its {} B buffer",
                            p.switch_buffer_bytes
                        )));
                    }
                    shared.push(p.switch_buffer_bytes.saturating_sub(reserved));
                }
                fc.lossless = pp.lossless;
                fc.deadlock_every = pp.deadlock_check;
                fc.pfc = Some(Pfc::new(pp, ntc, hdrm, shared));
            }
        }
        Ok(fc)
    }

    /// Events to schedule at the start (the first deadlock check).
    pub(super) fn first_events(&self) -> Option<(u64, FcEv)> {
        let every = self.deadlock_every?;
        Some((every.0, FcEv::DeadlockCheck))
    }

    /// Whether any fault forces a next hop (`misroute`).
    pub(super) fn has_misroutes(&self) -> bool {
        !self.misroutes.is_empty()
    }

    /// The forced egress of a lossless packet for `dst` at switch `node`, if any.
    #[inline]
    pub(super) fn misroute(&self, node: u32, dst: u32, tc: u8) -> Option<usize> {
        if self.misroutes.is_empty() || !self.lossless(tc) {
            return None;
        }
        let i = self
            .misroutes
            .binary_search_by_key(&(node, dst), |e| e.0)
            .ok()?;
        Some(self.misroutes[i].1 as usize)
    }

    #[inline]
    pub(super) fn lossless(&self, tc: u8) -> bool {
        self.lossless & (1 << tc) != 0
    }

    pub(super) fn result(&mut self, topo: &Topology, now: u64) -> Option<FlowControlResult> {
        let kind = if self.credits.is_some() {
            "credits"
        } else if self.pfc.is_some() {
            "pfc"
        } else {
            return None;
        };
        if let Some(p) = self.pfc.as_mut() {
            p.close(now);
        }
        if let Some(c) = self.credits.as_mut() {
            c.close(now);
        }
        let mut ports = Vec::new();
        for (i, port) in topo.ports.iter().enumerate() {
            let (paused, rx, xoff) = self
                .pfc
                .as_ref()
                .map(|p| (p.paused_ps[i], p.pauses_rx[i], p.xoff_sent[i]))
                .unwrap_or((0, 0, 0));
            let stall = self.credits.as_ref().map(|c| c.stall_ps[i]).unwrap_or(0);
            if paused + rx + xoff + stall > 0 {
                ports.push(PortFc {
                    port: i as u32,
                    node: port.node.0,
                    paused_ps: paused,
                    pause_frames_received: rx,
                    xoff_events: xoff,
                    credit_stall_ps: stall,
                });
            }
        }
        let switch_hdrm: Vec<u64> = self
            .pfc
            .as_ref()
            .map(|p| {
                (0..topo.ports.len())
                    .filter(|&i| topo.nodes[topo.ports[i].node.idx()].is_switch())
                    .map(|i| p.headroom[i])
                    .collect()
            })
            .unwrap_or_default();
        Some(FlowControlResult {
            kind,
            credit_stalls: self.credits.as_ref().map(|c| c.stalls).unwrap_or(0),
            credit_stall_ps_total: ports.iter().map(|p| p.credit_stall_ps).sum(),
            xoff_events: ports.iter().map(|p| p.xoff_events).sum(),
            pause_time_ps_total: ports.iter().map(|p| p.paused_ps).sum(),
            watchdog_trips: self.pfc.as_ref().map(|p| p.watchdog_trips).unwrap_or(0),
            headroom_bytes_min: switch_hdrm.iter().copied().min().unwrap_or(0),
            headroom_bytes_max: switch_hdrm.iter().copied().max().unwrap_or(0),
            ports,
            deadlock: self.deadlock.clone(),
        })
    }
}

impl Engine<'_> {
    /// Ingress `in_port` returns credits: FCCL `fccl` reaches the sender after the link's delay.
    pub(super) fn fc_credit_update(&mut self, in_port: usize, tc: u8, fccl: u32) {
        let at = self.now + self.fc.link_delay[in_port];
        let port = self.ports[in_port].peer;
        self.q.push_fc(at.0, FcEv::Credit { port, tc, fccl });
    }

    /// Ingress `ip` asserts XOFF: a PAUSE now and refreshes while it lasts.
    pub(super) fn fc_xoff(&mut self, ip: usize, tc: u8) {
        self.fc_send_pause(ip, tc, MAX_QUANTA);
        let half = self.fc.quantum_ps[ip] * MAX_QUANTA as u64 / 2;
        let pfc = self.fc.pfc.as_mut().expect("pfc");
        let at = self.now.0 + half;
        pfc.refresh_at[ip * self.ntc + tc as usize] = at;
        self.q.push_fc(
            at,
            FcEv::Refresh {
                port: ip as u32,
                tc,
            },
        );
    }

    /// Puts `wire` bytes of link control (a PAUSE frame with its preamble and gap, an LLR
    /// control ordered set) on port `ip` between frames, behind the frame in progress; the time
    /// its last bit leaves.
    pub(super) fn send_ctrl(&mut self, ip: usize, wire: u32) -> Time {
        let port = &mut self.ports[ip];
        let t0 = self.now.max(port.busy_until);
        let ser = port.ser(wire);
        port.busy_until = t0 + ser;
        port.tx_bytes += wire as u64;
        t0 + ser
    }

    /// Sends a PAUSE frame for `tc` with `quanta` (0 = XON) out of port `ip`, after the frame in
    /// progress; it acts at the peer after the link delay and the peer's response time.
    pub(super) fn fc_send_pause(&mut self, ip: usize, tc: u8, quanta: u16) {
        let sent = self.send_ctrl(ip, PAUSE_FRAME_BYTES + self.wire_extra);
        let peer = self.ports[ip].peer;
        self.c.pause_frames += 1;
        self.fc.pauses_by_tc[tc as usize] += 1;
        let at = sent + self.fc.link_delay[ip] + self.fc.response[peer as usize];
        self.q.push_fc(
            at.0,
            FcEv::Pause {
                port: peer,
                tc,
                quanta,
            },
        );
    }

    pub(super) fn fc_event(&mut self, e: FcEv) {
        let now = self.now.0;
        let ntc = self.ntc;
        match e {
            FcEv::LlrAck { port, seq } => self.llr_reply(port as usize, seq, false),
            FcEv::LlrNack { port, seq } => self.llr_reply(port as usize, seq, true),
            FcEv::LlrAckTimer { port, epoch } => self.llr_ack_timer(port, epoch),
            FcEv::Credit { port, tc, fccl } => {
                if let Some(c) = self.fc.credits.as_mut() {
                    c.update(port as usize, tc as usize, fccl, now);
                    self.kick_any(port as usize);
                }
            }
            FcEv::Pause { port, tc, quanta } => {
                let pi = port as usize;
                let Some(pfc) = self.fc.pfc.as_mut() else {
                    return;
                };
                let i = pi * ntc + tc as usize;
                if self.ports[pi].wd_off & (1 << tc) != 0 {
                    pfc.last_pause_rx[i] = now;
                    pfc.pauses_rx[pi] += 1;
                    return;
                }
                if quanta == 0 {
                    pfc.pauses_rx[pi] += 1;
                    if pfc.resume(pi, tc as usize, now) {
                        set_bit(&mut self.ports[pi].blocked, 1 << tc, false);
                        self.kick_any(pi);
                    }
                    return;
                }
                let until = now + quanta as u64 * self.fc.quantum_ps[pi];
                let first = pfc.pause(pi, tc as usize, now, until);
                set_bit(&mut self.ports[pi].blocked, 1 << tc, true);
                self.q.push_fc(until, FcEv::PauseExpire { port, tc });
                if first && let Some(wd) = pfc.params.watchdog {
                    self.q.push_fc(now + wd.0, FcEv::Watchdog { port, tc });
                }
            }
            FcEv::PauseExpire { port, tc } => {
                let pi = port as usize;
                let pfc = self.fc.pfc.as_mut().expect("pfc");
                if pfc.paused_until[pi * ntc + tc as usize] == now
                    && pfc.resume(pi, tc as usize, now)
                {
                    set_bit(&mut self.ports[pi].blocked, 1 << tc, false);
                    self.kick_any(pi);
                }
            }
            FcEv::Refresh { port, tc } => {
                let ip = port as usize;
                let pfc = self.fc.pfc.as_ref().expect("pfc");
                if pfc.refresh_at[ip * ntc + tc as usize] == now && pfc.is_xoff(ip, tc as usize) {
                    self.fc_xoff(ip, tc);
                }
            }
            FcEv::Watchdog { port, tc } => self.fc_watchdog(port as usize, tc),
            FcEv::WatchdogRestore { port, tc } => {
                let pi = port as usize;
                let pfc = self.fc.pfc.as_mut().expect("pfc");
                let wd = pfc.params.watchdog.expect("watchdog on").0;
                let i = pi * ntc + tc as usize;
                if now >= pfc.last_pause_rx[i] + wd {
                    set_bit(&mut self.ports[pi].wd_off, 1 << tc, false);
                } else {
                    let at = pfc.last_pause_rx[i] + wd;
                    self.q.push_fc(at, FcEv::WatchdogRestore { port, tc });
                }
            }
            FcEv::Stall { host, on } => self.fc_stall(host as usize, on),
            FcEv::DeadlockCheck => self.fc_deadlock_check(),
        }
    }

    /// The PFC watchdog: a queue paused without a break for the watchdog time loses PFC (its
    /// pauses are ignored, its packets dropped) until pauses stop for as long (SONiC PFC
    /// watchdog, action "drop").
    fn fc_watchdog(&mut self, pi: usize, tc: u8) {
        let now = self.now.0;
        let ntc = self.ntc;
        let pfc = self.fc.pfc.as_mut().expect("pfc");
        let wd = pfc.params.watchdog.expect("watchdog on").0;
        let i = pi * ntc + tc as usize;
        let since = pfc.paused_since[i];
        if since == NOT || now < since + wd || self.ports[pi].host != NIL {
            return;
        }
        pfc.watchdog_trips += 1;
        set_bit(&mut self.ports[pi].wd_off, 1 << tc, true);
        pfc.resume(pi, tc as usize, now);
        set_bit(&mut self.ports[pi].blocked, 1 << tc, false);
        self.q.push_fc(
            now + wd,
            FcEv::WatchdogRestore {
                port: pi as u32,
                tc,
            },
        );
        // The queue is flushed.
        let node = self.ports[pi].node as usize;
        while let Some(e) = self.tcq[i].pop_entry(&self.queued) {
            self.ports[pi].queued -= e.frame as u64;
            self.fc_release_any(e.from as usize, tc, e.frame as u32, node);
            self.drop_pkt(e.id, DropReason::Watchdog);
        }
    }

    /// Host `h`'s NIC stops receiving (it asserts XOFF on every lossless class and refreshes it:
    /// a pause storm, Guo et al. SIGCOMM 2016 section 4.3) or recovers (XON).
    fn fc_stall(&mut self, h: usize, on: bool) {
        if self.fc.pfc.is_none() || self.fc.stalled[h] == on {
            return;
        }
        self.fc.stalled[h] = on;
        let ip = self.topo.host_port(HostId(h as u32)).idx();
        for tc in 0..self.ntc as u8 {
            if !self.fc.lossless(tc) {
                continue;
            }
            self.fc
                .pfc
                .as_mut()
                .expect("pfc")
                .set_xoff(ip, tc as usize, on);
            if on {
                self.fc_xoff(ip, tc);
            } else {
                self.fc_send_pause(ip, tc, 0);
            }
        }
    }

    /// Whether egress `p`'s class `tc` has packets and may not send them.
    fn fc_blocked_backlog(&mut self, p: usize, tc: usize) -> bool {
        let head = if self.ports[p].host != NIL {
            return false; // a NIC is a source, never part of a cycle
        } else {
            self.tcq[p * self.ntc + tc].head(&self.queued)
        };
        let Some((_, frame)) = head else {
            return false;
        };
        if self.ports[p].blocked & (1 << tc) != 0 {
            return true;
        }
        self.fc
            .credits
            .as_ref()
            .is_some_and(|c| c.available(p, tc) < fabricsim_mech::params::blocks(frame as u32))
    }

    /// When the check after this one is due, on the grid `now + k * every`, `k >= 1`. Nothing
    /// changes between events, so when this check found no cycle the checks before the next
    /// event would each find none: the next one is the last of them, and an idle span (a flow
    /// starting 10^7 s later) costs one event, not one per period, with the same outputs.
    fn next_deadlock_check(&self, every: u64) -> u64 {
        let now = self.now.0;
        let k = match (&self.fc.last_cycle, self.q.q.next_time()) {
            (None, Some(next)) if next > now => ((next - 1 - now) / every).max(1),
            _ => 1,
        };
        now.saturating_add(k.saturating_mul(every))
    }

    /// Builds the wait-for graph of blocked queues; a cycle seen twice in a row with no byte
    /// sent by its ports in between is a deadlock: the run ends with it.
    fn fc_deadlock_check(&mut self) {
        let mut verts: Vec<(u32, u8)> = Vec::new();
        for p in 0..self.ports.len() {
            for tc in 0..self.ntc {
                if self.fc_blocked_backlog(p, tc) {
                    verts.push((p as u32, tc as u8));
                }
            }
        }
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); verts.len()];
        for (v, &(p, tc)) in verts.iter().enumerate() {
            let ip = self.ports[p as usize].peer;
            let down_node = self.topo.ports[ip as usize].node;
            for e in self.topo.nodes[down_node.idx()].ports() {
                let Ok(w) = verts.binary_search(&(e, tc)) else {
                    continue;
                };
                let q = &self.tcq[e as usize * self.ntc + tc as usize];
                if q.entries(&self.queued).any(|e| e.from == ip) {
                    adj[v].push(w as u32);
                }
            }
        }
        let cycle: Option<Vec<(u32, u8)>> =
            find_cycle(&adj).map(|c| c.iter().map(|&v| verts[v as usize]).collect());
        match cycle {
            Some(c) => {
                let tx: Vec<u64> = c
                    .iter()
                    .map(|&(p, _)| self.ports[p as usize].tx_bytes)
                    .collect();
                if self.fc.last_cycle.as_ref() == Some(&(c.clone(), tx.clone())) {
                    self.fc.deadlock = Some(DeadlockReport {
                        detected_at_ps: self.now.0,
                        cycle: c
                            .iter()
                            .map(|&(p, tc)| CycleHop {
                                port: p,
                                node: self.ports[p as usize].node,
                                peer_node: self.topo.peer_node(PortId(p)).0,
                                tc,
                            })
                            .collect(),
                    });
                    self.fc.halt = true;
                    self.stop = true;
                    return;
                }
                self.fc.last_cycle = Some((c, tx));
            }
            None => self.fc.last_cycle = None,
        }
        if let Some(every) = self.fc.deadlock_every.filter(|_| !self.q.is_empty()) {
            self.q
                .push_fc(self.next_deadlock_check(every.0), FcEv::DeadlockCheck);
        }
    }
}
