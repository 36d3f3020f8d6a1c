//! Random packet loss in the fluid model: the goodput of the RC transport's loss recovery as a
//! cap on a flow's rate, and the retransmission timeout a message pays when its tail is lost.
//!
//! With a per-packet loss probability `p` on every link, a packet crossing `h` links is lost
//! with `p_h = 1 - (1 - p)^h`. Let `W` be the packets a sender puts on the wire in one round
//! trip at the flow's line rate (the bandwidth-delay product in packets).
//! - Go-back-N (IBA Vol. 1 9.7.5: NAK on sequence error, resend from the NAKed PSN): every loss
//!   costs the lost packet and the `W` sent behind it before the NAK arrives, so the goodput
//!   fraction is `(1 - p_h) / (1 + c_gbn p_h W)` (the go-back-N closed form; Bertsekas and
//!   Gallager, Data Networks, 2.4.2), `c_gbn` fitted (1 in the ideal protocol).
//! - Selective repeat (IRN, Mittal et al., SIGCOMM 2018): only lost packets are resent, so the
//!   goodput fraction is `1 - c_sr p_h` (`c_sr` fitted; 1 ideal).
//! - Tail loss: when the last data packet or its ACK is lost, no later packet reveals the gap
//!   and the sender waits for the local ACK timeout (IBA 9.7.6.1). A message whose QP has no
//!   next message queued pays it with probability `q = 1 - (1 - p_h)^2` (data and ACK paths),
//!   plus under go-back-N `n p_h q` for a message of n packets (a loss whose NAK or resent
//!   packet is lost too: the receiver NAKs once); the engine draws it per message from a
//!   seeded stream, so the FCT distribution (not only its mean) carries the timeouts.
//!
//! The constants were fitted by `cargo run --release -p fabricsim --example flow_calibrate --
//! loss`, which runs single long flows on the packet engine at several loss rates and fits
//! each constant by least squares on the goodput closed form (`fit_*` below).

use crate::sim::{SimParams, Transport};

/// Fitted constants of the loss model (see the module comment for the command).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossConstants {
    pub c_gbn: f64,
    pub c_sr: f64,
}

/// `c_gbn` fitted by `cargo run --release -p fabricsim --example flow_calibrate -- loss`
/// (0.488 over 38 packet runs of a 4 MB flow on roce-400g at 0.05-0.5% loss per link: a loss
/// wastes about half a round trip of packets, the NAK leaving at the next packet's arrival).
/// `c_sr` is the closed form's 1, not fitted: the packet engine's selective repeat waits for
/// the ACK timeout after a single mid-message loss (a 1 MB flow with packet 10 dropped takes
/// one timeout longer), which is not IRN's recovery, so there is nothing sound to fit yet.
pub const FITTED: LossConstants = LossConstants {
    c_gbn: 0.488,
    c_sr: 1.0,
};

/// The loss of a run: per-packet probability on every link and the transport that recovers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossModel {
    pub per_link: f64,
    pub transport: Transport,
    /// The local ACK timeout a tail loss costs (ps).
    pub rto_ps: u64,
    pub constants: LossConstants,
}

/// Loss probability of a packet crossing `hops` links each losing it with `p`.
pub fn path_loss(p: f64, hops: usize) -> f64 {
    -(hops as f64 * (-p).ln_1p()).exp_m1()
}

impl LossModel {
    /// The model for `p`'s loss rate and transport; `None` without loss. A bit error rate is
    /// turned into a per-packet probability for a full MTU frame (physics D1).
    pub fn of(p: &SimParams) -> Option<LossModel> {
        let frame_bits = 8.0 * (p.data_frame_bytes(p.mtu_bytes) + p.wire_overhead_bytes) as f64;
        let from_ber = -(frame_bits * (-p.ber).ln_1p()).exp_m1();
        let per_link = 1.0 - (1.0 - p.loss_rate) * (1.0 - from_ber);
        (per_link > 0.0).then(|| LossModel {
            per_link,
            transport: p.transport,
            rto_ps: p.ack_timeout().ps(),
            constants: FITTED,
        })
    }

    /// Goodput fraction of a flow over `hops` links whose round trip carries `window` packets.
    pub fn goodput(&self, hops: usize, window: f64) -> f64 {
        let ph = path_loss(self.per_link, hops);
        let c = self.constants;
        match self.transport {
            Transport::GoBackN => (1.0 - ph) / (1.0 + c.c_gbn * ph * window),
            Transport::SelectiveRepeat => (1.0 - c.c_sr * ph).max(0.0),
        }
    }

    /// Probability that a message of `packets` packets waits for the timeout: its last
    /// packet or that packet's ACK is lost (data over `hops` links, the ACK back over as many),
    /// or, under go-back-N, one of its losses is followed by the loss of the NAK or of the
    /// resent packet (the receiver NAKs a sequence error once, IBA 9.7.5.1.2, so nothing else
    /// restarts the sender).
    pub fn timeout_prob(&self, hops: usize, packets: u64) -> f64 {
        let ph = path_loss(self.per_link, hops);
        let tail = 1.0 - (1.0 - ph) * (1.0 - ph);
        let stuck = match self.transport {
            Transport::GoBackN => packets as f64 * ph * tail,
            Transport::SelectiveRepeat => 0.0,
        };
        (tail + stuck).min(1.0)
    }
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

    #[test]
    fn path_loss_compounds_per_link() {
        // 1 - 0.999^4 = 0.003994003999
        assert!((path_loss(0.001, 4) - 0.003_994_003_999).abs() < 1e-12);
        assert_eq!(path_loss(0.0, 5), 0.0);
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
        let m = LossModel {
            per_link: 0.01,
            transport: Transport::GoBackN,
            rto_ps: 0,
            constants: FITTED,
        };
        assert!((m.timeout_prob(1, 100) - 0.0398).abs() < 1e-12);
        let sr = LossModel {
            transport: Transport::SelectiveRepeat,
            ..m
        };
        assert!((sr.timeout_prob(1, 100) - 0.0199).abs() < 1e-12);
    }

    #[test]
    fn go_back_n_pays_a_window_per_loss() {
        // p_h = 0.01, W = 50: (0.99) / (1 + 0.5) = 0.66.
        let m = LossModel {
            per_link: 0.01,
            transport: Transport::GoBackN,
            rto_ps: 0,
            constants: LossConstants {
                c_gbn: 1.0,
                c_sr: 1.0,
            },
        };
        assert!((m.goodput(1, 50.0) - 0.66).abs() < 1e-12);
        let sr = LossModel {
            transport: Transport::SelectiveRepeat,
            ..m
        };
        assert!((sr.goodput(1, 50.0) - 0.99).abs() < 1e-12);
    }
}
