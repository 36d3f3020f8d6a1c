//! Physical link state: injected faults set up at the start (loss, BER, drop-nth, down/up
//! times), a link going down or up, and routing catching up: local repair at the link's ends,
//! then the global reroute (`sim::reroute`), each after its delay.

use super::llfc::FcEv;
use super::{Engine, Ev, P_LINK_UP, P_REROUTED, P_ROUTE_OK, PortLoss, set_bit};
use crate::error::SimError;
use fabricsim_core::topology::{HostId, NodeId, PortId, Topology};
use fabricsim_mech::faults::{Dir, Fault, Faults, LinkLoss};
use fabricsim_mech::reroute::Reach;
use fabricsim_mech::results::DropReason;

impl Engine<'_> {
    /// Local repair: the ends of `link` reflect its state change.
    pub(super) fn route_state(&mut self, link: u32, up: bool) {
        for e in self.topo.links[link as usize].ends {
            set_bit(&mut self.info[e.idx()].flags, P_ROUTE_OK, up);
        }
    }

    /// Global reroute: the reachability table from the links' present states.
    pub(super) fn global_reroute(&mut self) {
        let topo = self.topo;
        let up: Vec<bool> = topo
            .links
            .iter()
            .map(|l| self.info[l.ends[0].idx()].flags & P_LINK_UP != 0)
            .collect();
        self.reach = Reach::compute(topo, &up);
        for pi in 0..topo.ports.len() {
            set_bit(
                &mut self.info[pi].flags,
                P_REROUTED,
                self.reach.any_blocked(pi),
            );
        }
    }

    /// Whether routing may send a packet for host `dst` out of port `pi`: local repair has not
    /// removed it and the last global reroute did not find `dst` unreachable through it.
    #[inline]
    pub(super) fn routable(&self, pi: usize, dst: u32) -> bool {
        let f = self.info[pi].flags;
        f & P_ROUTE_OK != 0 && (f & P_REROUTED == 0 || self.reach.reaches(pi, dst))
    }

    pub(super) fn link_state(&mut self, link: u32, up: bool) {
        let ends = self.topo.links[link as usize].ends;
        for e in ends {
            let pi = e.idx();
            set_bit(&mut self.info[pi].flags, P_LINK_UP, up);
            if !up {
                // Packets queued for a dead link are lost.
                for tc in 0..self.ntc {
                    while let Some(e) = self.tcq[pi * self.ntc + tc].pop_entry(&self.queued) {
                        self.ports[pi].queued -= e.frame as u64;
                        let node = self.ports[pi].node as usize;
                        self.fc_release_any(e.from as usize, tc as u8, e.frame as u32, node);
                        self.drop_pkt(e.id, DropReason::LinkDown);
                    }
                }
            }
        }
        if let Some(d) = self.reroute.local_repair {
            self.q.push((self.now + d).0, Ev::Route { link, up });
        }
        if let Some(d) = self.reroute.global {
            self.q.push((self.now + d).0, Ev::Reroute);
        }
        if up {
            for e in ends {
                self.kick_any(e.idx());
            }
        }
    }
}

/// Rounds to 6 decimals so floats print the same everywhere.

/// A probability as a threshold on a uniform u64 draw.
pub(super) fn prob_threshold(p: f64) -> u64 {
    if p <= 0.0 {
        0
    } else {
        (p * 18_446_744_073_709_551_616.0).min(u64::MAX as f64) as u64
    }
}

/// The egress ports of `link` that send in direction `dir`.
pub(super) fn dir_ports(
    topo: &Topology,
    link: fabricsim_core::topology::LinkId,
    dir: Dir,
) -> Vec<usize> {
    let [lower, upper] = topo.links[link.idx()].ends;
    match dir {
        Dir::Up => vec![lower.idx()],
        Dir::Down => vec![upper.idx()],
        Dir::Both => vec![lower.idx(), upper.idx()],
    }
}

/// Applies the injected faults: loss settings on ports, link and stall events queued; returns
/// the forced next hops (`Fault::Misroute`) for link-level flow control.
pub(super) fn apply_faults(
    topo: &Topology,
    faults: &Faults,
    loss: &mut [PortLoss],
    q: &mut super::Events,
) -> Result<Vec<(NodeId, HostId, PortId)>, SimError> {
    let mut misroutes = Vec::new();
    let mut last_fec = None;
    for f in &faults.faults {
        let link_ok = |l: fabricsim_core::topology::LinkId| {
            if l.idx() < topo.links.len() {
                Ok(())
            } else {
                Err(SimError::Fault(format!(
                    "fault on link {} but the topology has {} links",
                    l.0,
                    topo.links.len()
                )))
            }
        };
        match *f {
            Fault::Loss {
                link,
                dir,
                loss: link_loss,
            } => {
                link_ok(link)?;
                for pt in dir_ports(topo, link, dir) {
                    let ps = &mut loss[pt];
                    match link_loss {
                        LinkLoss::Rate(r) => {
                            ps.threshold = prob_threshold(r);
                            ps.ber = 0.0;
                            ps.fec = None;
                        }
                        LinkLoss::Ber(b) => {
                            ps.threshold = 0;
                            ps.ber = b;
                            ps.fec = None;
                        }
                        LinkLoss::Fec { fec, ber } => {
                            ps.threshold = 0;
                            ps.ber = 0.0;
                            // Links of one class share the figure: the binomial sum once.
                            if last_fec.is_none_or(|(f, b, _)| f != fec || b != ber) {
                                last_fec = Some((fec, ber, fec.codeword_ln_ok(ber)));
                            }
                            ps.fec = last_fec
                                .filter(|_| ber > 0.0)
                                .map(|(f, _, ln_ok)| (f, ln_ok));
                        }
                        LinkLoss::FecLanes { fec, ber, lanes } => {
                            ps.threshold = 0;
                            ps.ber = 0.0;
                            let ln_ok = fec.codeword_ln_ok_lanes(&ber[..lanes as usize]);
                            ps.fec = (ln_ok < 0.0).then_some((fec, ln_ok));
                        }
                    }
                }
            }
            Fault::DropNth { link, dir, nth } => {
                link_ok(link)?;
                for pt in dir_ports(topo, link, dir) {
                    loss[pt].drop_nth = nth;
                }
            }
            Fault::DropEvery { link, dir, every } => {
                link_ok(link)?;
                for pt in dir_ports(topo, link, dir) {
                    loss[pt].drop_every = every;
                }
            }
            Fault::Down { link, at } => {
                link_ok(link)?;
                q.push(
                    at.0,
                    Ev::Link {
                        link: link.0,
                        up: false,
                    },
                );
            }
            Fault::RxStall { host, at, until } => {
                if host.idx() >= topo.num_hosts() {
                    return Err(SimError::Fault(format!(
                        "stall of host {} but the topology has {} hosts",
                        host.0,
                        topo.num_hosts()
                    )));
                }
                q.push_fc(
                    at.0,
                    FcEv::Stall {
                        host: host.0,
                        on: true,
                    },
                );
                if let Some(u) = until {
                    q.push_fc(
                        u.0,
                        FcEv::Stall {
                            host: host.0,
                            on: false,
                        },
                    );
                }
            }
            Fault::Misroute { node, dst, port } => misroutes.push((node, dst, port)),
            Fault::Up { link, at } => {
                link_ok(link)?;
                q.push(
                    at.0,
                    Ev::Link {
                        link: link.0,
                        up: true,
                    },
                );
            }
        }
    }
    Ok(misroutes)
}
