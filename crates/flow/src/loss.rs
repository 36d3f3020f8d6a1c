//! Random packet loss in the fluid model: the RC transport's loss recovery, as a cap on a flow's
//! rate (selective repeat) or as resends and retransmission timeouts drawn per message.
//!
//! With a per-packet loss probability `p` on every link, a packet crossing `h` links is lost
//! with `p_h = 1 - (1 - p)^h`. Let `W` be the packets a sender puts on the wire in one round
//! trip at the flow's line rate (the bandwidth-delay product in packets).
//! - Go-back-N (IBA Vol. 1 9.7.5: NAK on sequence error, resend from the NAKed PSN): every loss
//!   costs the lost packet and what was sent behind it before the NAK arrived: at line rate
//!   with no queue `c_gbn W` packets, the go-back-N closed form's goodput `(1 - p_h) / (1 +
//!   c_gbn p_h W)` (Bertsekas and Gallager, Data Networks, 2.4.2), `c_gbn` fitted (1 in the
//!   ideal protocol). In time that is `c_gbn` round trips per loss whatever the flow's rate,
//!   plus the queueing delay its packets met (they were sent before the NAK and are resent), so
//!   the losses are drawn per message ([`LossModel::draw_naks`]: Binomial over its packets but
//!   the last) and each delays it by [`LossModel::nak_cost_ps`], the queue being its DCQCN
//!   incast group's mean wait (`mean_field::Drain::mean_wait_ps`; none elsewhere: the fluid
//!   has no queue). A cap of the closed form on the rate binds only at line rate: a flow at
//!   1/99 of an incast egress behind a 0.2 ms queue paid nothing (the lossy roce-400g mixed
//!   incast's mean FCT was 12% below the packet engine's); and a per-message draw gives the
//!   unlucky messages their several losses (the p99). A group that put its bytes on the wire
//!   before DCQCN's first cut and was cut while they queued resends at the cut rate until the
//!   rate-increase timer fires: its NAKed messages pay that timer once, not a queue per NAK
//!   ([`LossModel::nak_delay_ps`], `groups::ResendWait`; traced on the packet engine,
//!   roce-400g mixed incast, 30 seeds: a NAKed message ends 301-348 us after its lossless FCT
//!   whatever the NAK's time, a second NAK adds 0-40 us; the queue per NAK put 2.3% of its
//!   messages past 1 ms against the packet engine's 0.94%, 400 seeds). `fabricsim-lab
//!   loss` checks the mechanism on the fit's runs (single 4 MB flows, mean FCT without
//!   timeouts, packet / flow: 91.2 / 92.1, 94.2 / 95.2, 99.6 / 99.8, 121.3 / 118.4 us at 0.05,
//!   0.1, 0.2, 0.5% per link), `fabricsim-lab excess "mixed ports roce" 64` the resend
//!   wait (64 seeds: 1351 of 6336 messages end 0.2 ms or more after their lossless FCT on the
//!   packet engine, 1460 on the flow engine; mean FCT 504.1 / 512.0 us). The per-NAK queue
//!   overcharges the capped 32:1 x 1 MB roce-400g incast (191 us per NAK; the packet engine's
//!   cost 20-140 us by when the NAK falls: mean FCT +9.7%, p99 +11.1% over 288 seeds). Not
//!   modeled: a resend drains at the
//!   rate of the message's drain, so a message that lost a packet does not catch up once its
//!   competitors finish (in the 128-GPU all-to-all, a loss costs the packet engine 2-10 us and
//!   the flow engine ~13 us, one 10 us slot at a 1/127 share); the resent bytes do not load
//!   the shared egress, so the cost stays with the message that lost (in the 32:1 x 1 MB
//!   roce-400g incast, 16 seeds, the packet engine spreads it: 85% of its messages end 10 us to
//!   1 ms later than without loss, mean +70 us; the flow engine delays the 42% that lost a
//!   packet by ~0.2 ms each, mean +107 us: +9.1% against +5.8% without loss); a resend does not
//!   hold the QP's next message.
//! - Selective repeat (IRN, Mittal et al., SIGCOMM 2018): only lost packets are resent, so the
//!   goodput fraction is `1 - c_sr p_h` (`c_sr` 1, the closed form).
//! - Timeouts (the local ACK timer, IBA 9.7.6.1, fires one RTO after the last ACK that advanced):
//!   - a lost tail (the last data packet or its ACK) with nothing queued behind it on the QP
//!     to reveal the gap: probability `1 - (1 - p_h)^2` (data and ACK paths);
//!   - under go-back-N, a loss whose NAK or resent packet is lost too (the receiver NAKs a
//!     sequence error once, IBA 9.7.5.1.2): `n p_h (1 - (1 - p_h)^2)` for `n` packets;
//!   - under adaptive routing the receiver acknowledges cumulatively and never reports a hole
//!     (`sim::transport::unordered`: reordering must not trigger resends), so any lost data
//!     packet, or the last ACK when no message follows, stalls the ACKs until the timer fires:
//!     `1 - (1 - p_h)^(n+1)` (`1 - (1 - p_h)^n` with a message queued behind).
//!   A lost tail is revealed by the next message on the QP when that one starts before the
//!   timer fires (its first packet draws a NAK or SACK, its ACK covers a lost last ACK): the
//!   tail is then resent one round trip after that message starts.
//!   The timer fires again (one RTO later) when the resend that fills the hole is lost, or,
//!   when that resend is the message's last packet (a lost tail, or a lost last ACK), when its
//!   one ACK is lost: `1 - (1 - p_h)^2`; a hole before the last packet is resent with the
//!   packets behind it, whose duplicate ACKs cover its own, so only its loss counts: `p_h`.
//!   Checked by `fabricsim-lab excess all-to-all 160` (the lossy all-to-all's collective
//!   time is set by whether any message of a run waits two timeouts): messages that waited a
//!   second timeout among those that waited one, ib-ndr (cumulative ACKs), 160 seeds: packet
//!   0.571% +- 0.038% on 4-link paths (model 0.56%; `p_h` for every hole, as before, 0.40%)
//!   and 0.375% +- 0.077% on 2-link paths (model 0.28%); roce-400g (go-back-N, a lost tail):
//!   packet 0.449% +- 0.065% (model 0.40%).
//!   The stalled message is received one RTO plus a round trip after the ACK of the packet
//!   before the loss would have come back, plus the resent packet's one-way trip. Under
//!   go-back-N and selective repeat everything from the loss on is resent after the timer
//!   fires, so that is one RTO plus a round trip after the message's own drain; under
//!   cumulative-only ACKs the packets after the hole already arrived, so a loss early in a
//!   long message costs less (nothing once the message drains for longer than an RTO after
//!   it). [`LossModel::draw_timeout`] draws, per message from the engine's seeded stream, whether
//!   it stalls and where, so the FCT distribution (not only its mean) carries the timeouts.
//!
//! The go-back-N constant was fitted by `cargo run --release -p fabricsim-lab -- loss`, which
//! runs single long flows on the packet engine at several loss
//! rates and fits the constant by least squares on the goodput closed form (`fit_gbn` below).
//! `fabricsim-lab timeouts` checks the timeout probabilities and delays against packet runs
//! of the cross-validation cases over several seeds.

use super::calibration::{LOSS_C_GBN, LOSS_C_SR};
use super::effect::{Ctx, Effect};
use super::event::Event;
use super::groups::ResendWait;
use super::state::NONE32;
use fabricsim_core::rng::Rng;
use fabricsim_core::topology::Topology;
use fabricsim_mech::{SimParams, Transport};

/// The effect: a route's goodput factor (selective repeat), and per message drained its NAKed
/// resends and timeouts, drawn from its own stream; a lost tail the next message on the QP
/// reveals completes one round trip after that message starts.
pub struct Loss {
    model: LossModel,
    /// Per QP: a message whose lost tail waits for the timer or for the next message on the QP
    /// to reveal it (`NONE32` when none), and its path's one-way latency.
    stall: Vec<(u32, u32)>,
}

impl Loss {
    /// `model` over `qps` QPs.
    pub fn new(model: LossModel, qps: usize) -> Loss {
        Loss {
            model,
            stall: vec![(NONE32, 0); qps],
        }
    }
}

impl Effect for Loss {
    /// Under link-level retry a corrupted frame's replay is the link's own cost: each directed
    /// link keeps its go-back-N efficiency of its capacity (`fabricsim_mech::llr::
    /// link_efficiency` of one hop), however many flows share it.
    fn link_caps(&self, _topo: &Topology, _p: &SimParams, caps: &mut Vec<u64>) {
        if let Some(w) = self.model.llr_window {
            let e = fabricsim_mech::llr::link_efficiency(self.model.per_link, w, 1);
            for c in caps.iter_mut() {
                *c = (*c as f64 * e) as u64;
            }
        }
    }

    /// The transport's goodput cap on a route. Under link-level retry, a flow alone on its
    /// path: the hops' replays add up (no queue downstream fills an upstream replay's gap), so
    /// its cap is the go-back-N efficiency over all its hops, over the one-hop tax its
    /// bottleneck's capacity already carries ([`Effect::link_caps`]).
    fn route_factor(&self, hops: usize) -> Option<f64> {
        Some(match self.model.llr_window {
            Some(w) => {
                let e = |h| fabricsim_mech::llr::link_efficiency(self.model.per_link, w, h);
                e(hops) / e(1)
            }
            None => self.model.goodput(hops),
        })
    }

    /// A message starts on its QP: a lost tail of the one before it that still waits for the
    /// timer is revealed ([`Stall::revealable`]) and resent one round trip later.
    fn message_start(&mut self, cx: &mut Ctx, m: u32, _parts: u32) {
        let q = cx.msgs[m as usize].qp as usize;
        let Some(&(stalled, lat)) = self.stall.get(q).filter(|s| s.0 != NONE32) else {
            return;
        };
        self.stall[q] = (NONE32, 0);
        let ack = cx.qps[q].ack as u64;
        let recv = cx.now + lat as u64 + ack + lat as u64;
        let st = &mut cx.msgs[stalled as usize];
        if recv >= st.recv {
            return;
        }
        let old = st.recv + ack;
        if let Some(batch) = cx.events.get_mut(&old) {
            batch.retain(|&e| e != Event::Done { msg: stalled });
            if batch.is_empty() {
                cx.events.remove(&old);
            }
        }
        if cx.qps[q].recv == st.recv {
            cx.qps[q].recv = recv;
        }
        st.recv = recv;
        cx.push(recv + ack, Event::Done { msg: stalled });
    }

    /// A loss only the ACK timer reveals: the stalling packet left a fraction `at` into the
    /// drain; the timer runs one RTO from its ACK, then the resend crosses. Go-back-N losses a
    /// NAK reveals resend what followed them ([`LossModel::nak_cost_ps`]), which delays the
    /// rest of the message.
    fn message_drained(&mut self, cx: &mut Ctx, m: u32, r: u32, _wait_ps: u64) -> bool {
        let l = &self.model;
        let route = cx.routes.get(r);
        let qp = cx.msgs[m as usize].qp as usize;
        let packets = cx.dag.messages[m as usize]
            .bytes
            .div_ceil(cx.p.mtu_bytes as u64)
            .max(1);
        let queued = cx.qps[qp].head != NONE32;
        let mut rng = Rng::stream(cx.p.seed, fabricsim_core::rng::Stream::TailLoss, m as u64);
        let hops = route.hops as usize;
        let timeout = l.draw_timeout(hops, packets, queued, &mut rng);
        let lat = route.lat_ps as u64;
        let wait = match (cx.groups).binary_search_by_key(&cx.msg_flow[m as usize], |c| c.flow) {
            Ok(i) => cx.groups[i].resend,
            Err(_) => ResendWait::PerNak(0),
        };
        let ack = cx.qps[qp].ack as u64;
        let rtt = lat + ack;
        let st = &mut cx.msgs[m as usize];
        let slot = (cx.now - st.sent) / packets;
        let naks = l.draw_naks(hops, packets, &mut rng) as u64;
        let resends = l.nak_delay_ps(naks, rtt, wait, slot * l.slots_per_nak(hops, packets));
        st.recv += resends;
        let Some(s) = timeout else {
            return false;
        };
        let left = st.sent + (s.at * (cx.now - st.sent) as f64) as u64 + resends;
        let rto = s.timeouts as u64 * l.rto_ps;
        let resent = left + lat + ack + rto + lat;
        st.recv = st.recv.max(resent);
        if s.revealable {
            self.stall[qp] = (m, lat as u32);
        }
        s.revealable
    }

    /// The timer fired before a later message revealed the lost tail.
    fn message_done(&mut self, cx: &mut Ctx, m: u32) {
        // NVLink messages have no QP (`NONE32`).
        let q = cx.msgs[m as usize].qp as usize;
        if self.stall.get(q).is_some_and(|s| s.0 == m) {
            self.stall[q] = (NONE32, 0);
        }
    }
}

/// The loss model's constants (`calibration::LOSS_C_GBN`, `calibration::LOSS_C_SR`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossConstants {
    pub c_gbn: f64,
    pub c_sr: f64,
}

/// The constants the engine runs with.
pub const FITTED: LossConstants = LossConstants {
    c_gbn: LOSS_C_GBN,
    c_sr: LOSS_C_SR,
};

/// The loss of a run: per-packet probability on every link and the recovery.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossModel {
    pub per_link: f64,
    /// How the receiver reveals a lost packet (the run's recovery, `Transport::under`).
    pub recovery: Transport,
    /// The local ACK timeout a tail loss costs (ps).
    pub rto_ps: u64,
    /// Timeouts in a row before the QP fails (the retry count, IBA 9.7.6.1.3).
    pub retries: u8,
    pub constants: LossConstants,
    /// Link-level retry (UEC 1.0 5.1): the frames one link replays per corrupted frame
    /// (`fabricsim_mech::llr::replay_window`, `llr::window`); the transport then sees no loss.
    pub llr_window: Option<f64>,
}

pub use fabricsim_mech::loss_expect::path_loss;
use fabricsim_mech::loss_expect::{self, either_way};

impl LossModel {
    /// The model for `p`'s loss rate and transport; `None` without loss. A bit error rate is
    /// turned into a per-packet probability for a full MTU frame (independent bit errors: `1 - (1 -
    /// BER)^bits`).
    pub fn of(p: &SimParams) -> Option<LossModel> {
        let frame_bits = 8.0 * p.mtu_frame_wire_bytes() as f64;
        let from_ber = -(frame_bits * (-p.ber).ln_1p()).exp_m1();
        let per_link = 1.0 - (1.0 - p.loss_rate) * (1.0 - from_ber);
        (per_link > 0.0).then(|| LossModel {
            per_link,
            recovery: p.transport.under(p.routing),
            rto_ps: p.ack_timeout().ps(),
            retries: p.retry_count,
            constants: FITTED,
            llr_window: None,
        })
    }

    /// Goodput fraction of a flow over `hops` links: the cap selective repeat puts on its rate
    /// (1 under go-back-N, whose losses are drawn per message: [`Self::draw_naks`]).
    pub fn goodput(&self, hops: usize) -> f64 {
        let ph = path_loss(self.per_link, hops);
        match self.recovery {
            Transport::GoBackN | Transport::GoBack0 => 1.0,
            Transport::SelectiveRepeat | Transport::Unordered | Transport::Rud => {
                (1.0 - self.constants.c_sr * ph).max(0.0)
            }
        }
    }

    /// Under go-back-N, how many of a message's `packets` over `hops` links are lost and
    /// revealed by a NAK (all but the last, whose loss waits for the timer: [`Self::
    /// draw_timeout`]), drawn from `rng`: Binomial(packets - 1, p_h), by the geometric gaps
    /// between losses; under go-back-0, the attempts that fail before one gets every packet
    /// through (geometric, `loss_expect::restarts` on average). 0 under the other recoveries.
    pub fn draw_naks(&self, hops: usize, packets: u64, rng: &mut Rng) -> u32 {
        let ph = path_loss(self.per_link, hops);
        if ph <= 0.0 || self.llr_window.is_some() {
            return 0;
        }
        match self.recovery {
            Transport::GoBackN => {}
            Transport::GoBack0 => {
                // Failures before the first success, P(F >= j) = (1 - s)^j.
                let fail = -(packets as f64 * (-ph).ln_1p()).exp_m1();
                let f = ((1.0 - rng.next_f64()).ln() / (-fail).ln_1p()).floor();
                return f.min(u32::MAX as f64) as u32;
            }
            Transport::SelectiveRepeat | Transport::Unordered | Transport::Rud => return 0,
        }
        let (mut at, mut n) = (0u64, 0u32);
        loop {
            // Packets before the next loss: P(gap >= j) = (1 - p_h)^j.
            let gap = ((1.0 - rng.next_f64()).ln() / (-ph).ln_1p()).floor();
            if gap >= (packets - 1 - at) as f64 {
                return n;
            }
            at += gap as u64 + 1;
            n += 1;
        }
    }

    /// The packet slots one revealed loss costs a message of `packets` over `hops` links
    /// beyond its round trips: the lost packet's (go-back-N), or the packets of the failed
    /// attempt up to the loss (go-back-0, `loss_expect::MessageLoss::per_event_packets`).
    pub fn slots_per_nak(&self, hops: usize, packets: u64) -> u64 {
        let ph = path_loss(self.per_link, hops);
        let m = loss_expect::message(self.recovery, ph, packets, 1.0, true);
        m.per_event_packets.round().max(1.0) as u64
    }

    /// The delay a NAKed go-back-N loss adds to its message: the lost packet's slot (`slot_ps`,
    /// the message's drain time per packet) and everything the sender put on the wire before
    /// the NAK came back, resent: `c_gbn` round trips of its packets (`rtt_ps`, fitted at line
    /// rate with no queue: the closed form's `c_gbn W` packets per loss) plus the queueing
    /// delay its packets met (`queue_ps`: the packets waiting in the queue were sent before the
    /// NAK and are resent).
    pub fn nak_cost_ps(&self, rtt_ps: u64, queue_ps: u64, slot_ps: u64) -> u64 {
        (self.constants.c_gbn * rtt_ps as f64) as u64 + queue_ps + slot_ps
    }

    /// The delay `naks` NAKed losses add to a message whose resends wait `wait` (a DCQCN
    /// incast group's, [`ResendWait`]; `PerNak(0)` elsewhere): [`Self::nak_cost_ps`] per NAK
    /// with the wait as the queue, or, when the resend waits for DCQCN's rate-increase timer,
    /// that timer once and the round trips and slots per NAK.
    pub fn nak_delay_ps(&self, naks: u64, rtt_ps: u64, wait: ResendWait, slot_ps: u64) -> u64 {
        match wait {
            ResendWait::PerNak(queue_ps) => naks * self.nak_cost_ps(rtt_ps, queue_ps, slot_ps),
            ResendWait::AfterTimer(t_ps) if naks > 0 => {
                t_ps + naks * self.nak_cost_ps(rtt_ps, 0, slot_ps)
            }
            ResendWait::AfterTimer(_) => 0,
        }
    }

    /// Probability that a message of `packets` packets over `hops` links (the ACKs back over
    /// as many) waits for the timeout; `queued` when another message follows it on its QP
    /// (its packets reveal a lost tail to a NAKing or SACKing receiver).
    /// 0 under link-level retry, which the transport's timer never sees.
    pub fn timeout_prob(&self, hops: usize, packets: u64, queued: bool) -> f64 {
        if self.llr_window.is_some() {
            return 0.0;
        }
        let ph = path_loss(self.per_link, hops);
        loss_expect::timeout_prob(self.recovery, ph, packets, queued)
    }

    /// Whether a message (as in [`Self::timeout_prob`]) waits for the timeout, drawn from `rng`,
    /// and if so where and how often: see [`Stall`].
    pub fn draw_timeout(
        &self,
        hops: usize,
        packets: u64,
        queued: bool,
        rng: &mut Rng,
    ) -> Option<Stall> {
        let u = rng.next_f64();
        if u >= self.timeout_prob(hops, packets, queued) {
            return None;
        }
        let ph = path_loss(self.per_link, hops);
        // Where the stall is: under cumulative-only ACKs the first lost packet k, P(k <= j) =
        // 1 - (1 - p_h)^(j+1) (inverse CDF of the geometric law; u beyond the last packet is
        // the lost last ACK); under go-back-N and selective repeat everything from the loss on
        // is resent after the timer.
        let (at, k) = match self.recovery {
            // RUD: the first lost packet stalls its message until the timer as well (the SACKs
            // reveal it to no one), and only the holes are resent.
            Transport::Unordered | Transport::Rud => {
                let k = ((-u).ln_1p() / (-ph).ln_1p()).floor();
                ((k.min((packets - 1) as f64) + 1.0) / packets as f64, k)
            }
            Transport::GoBackN | Transport::GoBack0 | Transport::SelectiveRepeat => {
                (1.0, packets as f64)
            }
        };
        // The timer is re-armed one RTO after it fires (the packet engine keeps the RTO; IBA
        // 9.7.6.1.3 leaves back-off to the implementation): another timeout when the resend
        // that fills the hole is lost again, or, when that resend is the message's last packet
        // (a lost tail or last ACK), when its one ACK is lost. A hole before the last packet is
        // resent with the packets behind it, whose duplicate ACKs cover its ACK (cumulative
        // ACKs: `sim::transport::Qp::on_data` re-ACKs a duplicate).
        let again = if k >= (packets - 1) as f64 {
            either_way(ph)
        } else {
            ph
        };
        let mut timeouts = 1;
        while timeouts < self.retries.max(1) as u32 && rng.chance(again) {
            timeouts += 1;
        }
        let revealable = match self.recovery {
            Transport::Unordered | Transport::Rud => k >= packets as f64,
            Transport::GoBackN | Transport::GoBack0 | Transport::SelectiveRepeat => {
                let tail = if queued { 0.0 } else { either_way(ph) };
                u < tail
            }
        };
        Some(Stall {
            at,
            timeouts,
            revealable,
        })
    }

    /// A warning when the run's RTO is not above `max_wait_ps`, the longest a message's bytes
    /// waited behind other flows' (its drain time beyond its drain alone): a packet's round
    /// trip then includes that much queueing, so the timer fires before the ACK of a resend
    /// can come back and fires again; the packet engine shows such ACK-timer storms (5.4
    /// firings per 1 MB message in a 32:1 ib-ndr incast with a 65.5 us RTO) and this model,
    /// which charges one RTO per lost tail or hole, does not.
    pub fn rto_warning(&self, max_wait_ps: u64) -> Option<String> {
        (max_wait_ps >= self.rto_ps).then(|| {
            format!(
                "the ACK timeout ({:.1} us) is not above the longest queueing delay of the run ({:.1} us, a flow's drain beyond its drain alone): resends would time out again, which the flow engine does not model; raise the timeout exponent or use --engine packet",
                self.rto_ps as f64 / 1e6,
                max_wait_ps as f64 / 1e6
            )
        })
    }
}

/// A message stalled until the ACK timer fires.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stall {
    /// The fraction of its packets sent when the packet whose loss stalls it left: the timer
    /// runs from that packet's ACK time (1.0 when everything from the loss on is resent after
    /// the timer, as under go-back-N and selective repeat).
    pub at: f64,
    /// Timeouts in a row (the resent packet lost again re-arms the timer).
    pub timeouts: u32,
    /// A lost tail (the last packet or the last ACK) that the next message on the QP reveals
    /// before the timer: its first packet draws a NAK or SACK, its ACK covers the lost one.
    pub revealable: bool,
}

/// Packets in flight over a round trip of `rtt_ps` at `rate_bps` with `frame_bytes` per packet.
pub fn window_packets(rtt_ps: u64, rate_bps: u64, frame_bytes: u32) -> f64 {
    rtt_ps as f64 * 1e-12 * rate_bps as f64 / (8.0 * frame_bytes as f64)
}

/// Least-squares `c` in `g = (1 - x) / (1 + c x w)` from points `(x, w, g)`: linear in `c`
/// as `(1 - x) / g - 1 = c (x w)`.
pub fn fit_gbn(points: &[(f64, f64, f64)]) -> f64 {
    let (num, den) = points.iter().fold((0.0, 0.0), |(n, d), &(x, w, g)| {
        let (y, a) = ((1.0 - x) / g - 1.0, x * w);
        (n + a * y, d + a * a)
    });
    num / den
}

/// Least-squares `c` in `g = 1 - c x` from points `(x, g)`.
pub fn fit_sr(points: &[(f64, f64)]) -> f64 {
    let (num, den) = points
        .iter()
        .fold((0.0, 0.0), |(n, d), &(x, g)| (n + x * (1.0 - g), d + x * x));
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::rng::Stream;

    /// A model with `per_link` loss, `recovery`, `rto_ps`, 7 retries and the fitted constants.
    fn model(per_link: f64, recovery: Transport, rto_ps: u64) -> LossModel {
        LossModel {
            per_link,
            recovery,
            rto_ps,
            retries: 7,
            constants: FITTED,
            llr_window: None,
        }
    }

    #[test]
    fn fits_recover_the_constants_they_were_made_with() {
        let gbn: Vec<_> = [(0.001, 20.0), (0.01, 20.0), (0.004, 80.0)]
            .iter()
            .map(|&(x, w)| (x, w, (1.0 - x) / (1.0 + 1.7 * x * w)))
            .collect();
        assert!((fit_gbn(&gbn) - 1.7).abs() < 1e-9);
        let sr: Vec<_> = [0.001, 0.01].iter().map(|&x| (x, 1.0 - 2.5 * x)).collect();
        assert!((fit_sr(&sr) - 2.5).abs() < 1e-9);
    }

    #[test]
    fn timeouts_come_from_the_tail_and_from_lost_recoveries() {
        // p_h = 0.01: tail 1 - 0.99^2 = 0.0199; go-back-N on 100 packets adds
        // 100 x 0.01 x 0.0199 = 0.0199.
        let m = model(0.01, Transport::GoBackN, 0);
        assert!((m.timeout_prob(1, 100, false) - 0.0398).abs() < 1e-12);
        // A message queued behind reveals the tail: only the lost recoveries remain.
        assert!((m.timeout_prob(1, 100, true) - 0.0199).abs() < 1e-12);
        let sr = LossModel {
            recovery: Transport::SelectiveRepeat,
            ..m
        };
        assert!((sr.timeout_prob(1, 100, false) - 0.0199).abs() < 1e-12);
        // Cumulative ACKs only: any of 100 packets or the last ACK, 1 - 0.99^101; with a
        // message behind, whose ACKs cover the last one, 1 - 0.99^100.
        let ao = LossModel {
            recovery: Transport::Unordered,
            ..m
        };
        assert!((ao.timeout_prob(1, 100, false) - (1.0 - 0.99f64.powi(101))).abs() < 1e-12);
        assert!((ao.timeout_prob(1, 100, true) - (1.0 - 0.99f64.powi(100))).abs() < 1e-12);
    }

    #[test]
    fn timeout_draws_follow_the_probability_and_the_geometric_position() {
        // 1 - 0.99^101 = 0.6376 of the messages stall; the first loss is geometric, so the
        // mean fraction sent before it is E[(k+1)/n | stall], computed exactly beside it.
        let m = model(0.01, Transport::Unordered, 0);
        let (n, runs) = (100u64, 200_000u64);
        let (mut hits, mut at_sum) = (0u64, 0.0);
        for i in 0..runs {
            if let Some(s) = m.draw_timeout(1, n, false, &mut Rng::stream(3, Stream::Test(1), i)) {
                hits += 1;
                at_sum += s.at;
            }
        }
        let q: f64 = 1.0 - 0.99f64.powi(101);
        let exact: f64 = (0..n)
            .map(|k| 0.01 * 0.99f64.powi(k as i32) * (k + 1) as f64 / n as f64)
            .sum::<f64>()
            + 0.99f64.powi(100) * 0.01;
        let rate = hits as f64 / runs as f64;
        // Binomial standard error sqrt(q(1-q)/runs) = 0.0011: within 4 of them.
        assert!((rate - q).abs() < 0.0045, "{rate} vs {q}");
        assert!((at_sum / runs as f64 - exact).abs() < 0.004);
    }

    #[test]
    fn a_second_timeout_follows_a_lost_resend_or_a_lost_last_ack() {
        // Cumulative ACKs, 4 packets, p_h = 0.01: a stall at the last packet or the last ACK
        // (the first loss k >= 3) times out again with 1 - 0.99^2 = 0.0199 (the resend or its
        // one ACK lost); an earlier hole with 0.01 (its resend lost). P(k >= 3 | stall) =
        // 0.99^3 (1 - 0.99^2) / (1 - 0.99^5) = 0.39804.
        let m = model(0.01, Transport::Unordered, 0);
        let (mut stalls, mut again) = ([0u64; 2], [0u64; 2]);
        for i in 0..2_000_000u64 {
            if let Some(s) = m.draw_timeout(1, 4, false, &mut Rng::stream(5, Stream::Test(2), i)) {
                let tail = (s.at == 1.0) as usize;
                stalls[tail] += 1;
                again[tail] += (s.timeouts >= 2) as u64;
            }
        }
        let share = stalls[1] as f64 / (stalls[0] + stalls[1]) as f64;
        let exact = 0.99f64.powi(3) * (1.0 - 0.99f64.powi(2)) / (1.0 - 0.99f64.powi(5));
        // Binomial standard errors over ~97,000 stalls: 0.0016 for the share, 0.0007 and
        // 0.0005 for the two rates: within 4 of them.
        assert!((share - exact).abs() < 0.0064, "{share} vs {exact}");
        let rate = |t: usize| again[t] as f64 / stalls[t] as f64;
        assert!((rate(1) - 0.0199).abs() < 0.0028, "{}", rate(1));
        assert!((rate(0) - 0.01).abs() < 0.002, "{}", rate(0));
    }

    #[test]
    fn warns_when_the_timeout_is_not_above_the_queueing_delay() {
        let m = model(0.001, Transport::Unordered, 65_536_000);
        assert!(m.rto_warning(65_535_999).is_none());
        assert!(m.rto_warning(670_000_000).is_some());
    }

    #[test]
    fn go_back_n_draws_its_naks_per_message_and_pays_a_round_trip_each() {
        // p_h = 0.01 over 100 packets: the 99 before the last are lost Binomial(99, 0.01),
        // mean 0.99, variance 0.9801; P(none) = 0.99^99 = 0.36973.
        let m = LossModel {
            per_link: 0.01,
            recovery: Transport::GoBackN,
            rto_ps: 0,
            retries: 7,
            constants: LossConstants {
                c_gbn: 1.0,
                c_sr: 1.0,
            },
            llr_window: None,
        };
        let runs = 400_000u64;
        let (mut sum, mut sq, mut none) = (0u64, 0u64, 0u64);
        for i in 0..runs {
            let n = m.draw_naks(1, 100, &mut Rng::stream(9, Stream::Test(4), i)) as u64;
            sum += n;
            sq += n * n;
            none += (n == 0) as u64;
        }
        let mean = sum as f64 / runs as f64;
        let var = sq as f64 / runs as f64 - mean * mean;
        // Standard errors: 0.0016 for the mean, 0.0027 for the variance, 0.00076 for P(none);
        // within 4 of them.
        assert!((mean - 0.99).abs() < 0.0064, "{mean}");
        assert!((var - 0.9801).abs() < 0.011, "{var}");
        assert!((none as f64 / runs as f64 - 0.99f64.powi(99)).abs() < 0.003);
        // A single packet has no loss a NAK reveals (its loss is the tail's timeout).
        assert_eq!(
            m.draw_naks(1, 1, &mut Rng::stream(9, Stream::Test(4), 0)),
            0
        );
        // c_gbn = 1 round trip of 2 us, 10 us of queue, and the lost packet's 0.1 us slot.
        assert_eq!(m.nak_cost_ps(2_000_000, 10_000_000, 100_000), 12_100_000);
        // Three NAKs: 3 x 12.1 us with the queue per NAK; 300 us of DCQCN timer once and
        // 3 x 2.1 us; nothing without a NAK.
        let per_nak = ResendWait::PerNak(10_000_000);
        let timer = ResendWait::AfterTimer(300_000_000);
        assert_eq!(m.nak_delay_ps(3, 2_000_000, per_nak, 100_000), 36_300_000);
        assert_eq!(m.nak_delay_ps(3, 2_000_000, timer, 100_000), 306_300_000);
        assert_eq!(m.nak_delay_ps(0, 2_000_000, timer, 100_000), 0);
        let sr = LossModel {
            recovery: Transport::SelectiveRepeat,
            ..m
        };
        assert_eq!(
            sr.draw_naks(1, 100, &mut Rng::stream(9, Stream::Test(4), 0)),
            0
        );
        // Selective repeat caps the rate at 1 - p_h; go-back-N draws its losses instead.
        assert!((sr.goodput(1) - 0.99).abs() < 1e-12);
        assert_eq!(m.goodput(1), 1.0);
    }
}
