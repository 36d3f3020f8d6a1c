//! The flow engine's effects in their fixed order: every hook of `effect::Effect` runs over
//! them in this order, each on the state the ones before it left.
//!
//! 1. `credits`: long IB links' credit-limited capacities (setup);
//! 2. `hpcc`: η of every link's capacity under HPCC (setup);
//! 3. `dcqcn_incast`: caps of synchronized incast groups and their onsets (setup, flow start,
//!    `Onset` events);
//! 4. `dcqcn_victim`: caps of the flows crossing queues those bursts fill (setup: it reads the
//!    groups; flow start);
//! 5. `hol`: head-of-line blocking behind held queues (flow start, rate changes, flow end, a
//!    last byte's arrival; lossless fabrics);
//! 6. `nic_send`: the NIC's send stage (flow start, rate changes, caps after a solve, flow end,
//!    `NicSend` events, a cap an onset changed; lossless fabrics, within the limits);
//! 7. `nic_rr`: the NIC's per-QP round robin at message end (message start, message drained);
//! 8. `loss`: loss recovery (route factor, message start, message drained, message done).
//!
//! `rate_model` turns the route factors into each route's cap (`fluid::route_entry`).

use super::credits::Credits;
use super::dcqcn_incast::DcqcnIncast;
use super::dcqcn_victim::DcqcnVictim;
use super::effect::{Ctx, Effect};
use super::event::Event;
use super::hol::Hol;
use super::hpcc::Hpcc;
use super::loss::Loss;
use super::nic_rr::NicRounds;
use super::nic_send::NicSend;
use super::params::FlowParams;
use super::paths::wire_bytes;
use super::state::Progress;
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::Topology;
use fabricsim_mech::SimParams;

/// Every effect of a run, in the order above (an `Option` is off for the run).
pub struct Effects {
    credits: Credits,
    hpcc: Option<Hpcc>,
    incast: DcqcnIncast,
    victim: DcqcnVictim,
    hol: Option<Hol>,
    nic_send: Option<NicSend>,
    nic_rr: NicRounds,
    loss: Option<Loss>,
}

/// Runs `$body` with `$e` bound to each effect of `$fx` in order.
macro_rules! in_order {
    ($fx:expr, |$e:ident| $body:expr) => {{
        let fx: &mut Effects = &mut *$fx;
        {
            let $e = &mut fx.credits;
            $body;
        }
        {
            let $e = &mut fx.hpcc;
            $body;
        }
        {
            let $e = &mut fx.incast;
            $body;
        }
        {
            let $e = &mut fx.victim;
            $body;
        }
        {
            let $e = &mut fx.hol;
            $body;
        }
        {
            let $e = &mut fx.nic_send;
            $body;
        }
        {
            let $e = &mut fx.nic_rr;
            $body;
        }
        {
            let $e = &mut fx.loss;
            $body;
        }
    }};
}

impl Effects {
    /// The effects of a run of `dag` on `topo` under `p`, with `flows` flows over `qps` QPs.
    pub fn new(
        topo: &Topology,
        p: &SimParams,
        dag: &MessageDag,
        fp: &FlowParams,
        flows: u32,
        qps: usize,
    ) -> Effects {
        Effects {
            credits: Credits,
            hpcc: Hpcc::new(p),
            incast: DcqcnIncast::default(),
            victim: DcqcnVictim::default(),
            hol: Hol::new(topo, p, flows as usize),
            nic_send: NicSend::new(p, topo.num_hosts(), flows),
            nic_rr: NicRounds::new(
                topo.num_hosts(),
                dag.messages.len(),
                wire_bytes(p, p.mtu_bytes as u64),
            ),
            loss: fp.loss.map(|l| Loss::new(l, qps)),
        }
    }

    pub fn link_caps(&mut self, topo: &Topology, p: &SimParams, caps: &mut Vec<u64>) {
        in_order!(self, |e| e.link_caps(topo, p, caps));
    }

    /// The product of the effects' factors of a route over `hops` links, if one prices it.
    pub fn route_factor(&mut self, hops: usize) -> Option<f64> {
        let mut factor = None;
        in_order!(self, |e| if let Some(f) = e.route_factor(hops) {
            factor = Some(factor.unwrap_or(1.0) * f);
        });
        factor
    }

    pub fn setup(&mut self, cx: &mut Ctx) {
        in_order!(self, |e| e.setup(cx));
    }

    #[inline]
    pub fn message_start(&mut self, cx: &mut Ctx, m: u32, parts: u32) {
        in_order!(self, |e| e.message_start(cx, m, parts));
    }

    #[inline]
    pub fn start_cap(&mut self, cx: &mut Ctx, f: u32, work: u128, cap: u64) -> u64 {
        let mut cap = cap;
        in_order!(self, |e| cap = e.start_cap(cx, f, work, cap));
        cap
    }

    #[inline]
    pub fn flow_start(&mut self, cx: &Ctx, f: u32, nic: u32, cap: u64, work: u128) {
        in_order!(self, |e| e.flow_start(cx, f, nic, cap, work));
    }

    #[inline]
    pub fn rerate(&mut self, f: u32, before: Progress, after: Progress) {
        in_order!(self, |e| e.rerate(f, before, after));
    }

    pub fn recap(&mut self, cx: &mut Ctx) -> bool {
        let mut changed = false;
        in_order!(self, |e| changed |= e.recap(cx));
        changed
    }

    #[inline]
    pub fn flow_end(&mut self, cx: &Ctx, f: u32) {
        in_order!(self, |e| e.flow_end(cx, f));
    }

    #[inline]
    pub fn arrival_delay_ps(&mut self, cx: &Ctx, r: u32) -> u64 {
        let mut delay = 0;
        in_order!(self, |e| delay += e.arrival_delay_ps(cx, r));
        delay
    }

    pub fn message_drained(&mut self, cx: &mut Ctx, m: u32, r: u32, wait_ps: u64) -> bool {
        let mut stalled = false;
        in_order!(self, |e| stalled |= e.message_drained(cx, m, r, wait_ps));
        stalled
    }

    pub fn message_done(&mut self, cx: &mut Ctx, m: u32) {
        in_order!(self, |e| e.message_done(cx, m));
    }

    /// An effect's event; a cap it changed reaches every effect.
    pub fn event(&mut self, cx: &mut Ctx, ev: Event) {
        let mut changed = None;
        in_order!(self, |e| if let Some(c) = e.event(cx, ev) {
            changed = Some(c);
        });
        if let Some((f, cap)) = changed {
            in_order!(self, |e| e.cap_changed(cx, f, cap));
        }
    }

    pub fn lossless_models_on(&mut self) -> bool {
        let mut on = false;
        in_order!(self, |e| on |= e.lossless_model());
        on
    }

    /// Ends the lossless models for the rest of the run.
    pub fn end_lossless_models(&mut self, cx: &mut Ctx) {
        in_order!(self, |e| if e.lossless_model() {
            e.end(cx);
        });
    }

    pub fn finish(&mut self, cx: &mut Ctx) {
        in_order!(self, |e| e.finish(cx));
    }
}

#[cfg(test)]
mod tests {
    use crate::calibration::tests::{SOURCES, names};

    /// The effects, by module.
    const EFFECTS: [&str; 8] = [
        "credits",
        "hpcc",
        "dcqcn_incast",
        "dcqcn_victim",
        "hol",
        "nic_send",
        "nic_rr",
        "loss",
    ];

    #[test]
    fn no_effect_imports_another() {
        for e in EFFECTS {
            let file = format!("{e}.rs");
            let src = SOURCES
                .iter()
                .find(|s| s.0 == file)
                .expect("a flow source")
                .1;
            let paths = (src.lines().map(str::trim_start))
                .filter(|l| !l.starts_with("//"))
                .filter(|l| l.contains("super::") || l.contains("flow::"));
            for l in paths {
                for other in EFFECTS.iter().filter(|&&o| o != e) {
                    assert!(!names(l, other), "{e} names the effect {other}: {l}");
                }
            }
        }
    }
}
