//! Random packet loss in expectation, one message at a time: the chance a packet is lost on its
//! path, how many losses each recovery reveals by a NAK (or SACK) and how many it resends, and
//! how likely the message waits for the local ACK timer (IBA Vol. 1 9.7.6.1). The flow engine
//! draws its losses from these probabilities (`flow::loss`); the training step costs them in
//! expectation (`fabricsim::workload::loss_cost`), so a loss too rare for a run to sample is
//! still paid for.
//!
//! A packet crossing `h` links that each lose it with `p` is lost with `p_h = 1 - (1 - p)^h`;
//! losses are independent. For a message of `n` packets with `w` packets in flight over a round
//! trip (its bandwidth-delay product):
//! - selective repeat (IRN, Mittal et al., SIGCOMM 2018) resends each lost packet until it
//!   arrives, `n p_h / (1 - p_h)` packets, each loss before the last one revealed by a SACK;
//! - go-back-N (IBA Vol. 1 9.7.5) resends from the lost packet what the sender put on the wire
//!   before the NAK came back: `min(w, n - k)` packets for a loss at packet `k` (Bertsekas and
//!   Gallager, Data Networks, 2.4.2);
//! - go-back-0 (Guo et al., SIGCOMM 2016, 4.1) restarts the message at every loss: an attempt
//!   gets through with `s = (1 - p_h)^n`, so `1/s - 1` attempts fail (geometric), each costing
//!   the packets up to the loss and those in flight behind it.
//!
//! A timeout comes from a loss no later packet reveals: the last packet or its ACK lost with no
//! message queued behind on the QP (`1 - (1 - p_h)^2`), and, under go-back-N and go-back-0, a
//! revealed loss whose NAK or first resent packet is lost too (the receiver NAKs a sequence
//! error once, IBA 9.7.5.1.2); under cumulative-only ACKs (unordered placement) any lost packet.

use super::recovery::Transport;

/// Loss probability of a packet crossing `hops` links each losing it with `p`.
pub fn path_loss(p: f64, hops: usize) -> f64 {
    -(hops as f64 * (-p).ln_1p()).exp_m1()
}

/// The chance that a packet or its one ACK is lost, each crossing a path lost with `ph`:
/// `1 - (1 - ph)^2`.
pub fn either_way(ph: f64) -> f64 {
    1.0 - (1.0 - ph) * (1.0 - ph)
}

/// Probability that a message of `packets` packets over a path lost with `ph` (its ACKs back
/// over as many links) waits for the timeout under `recovery`; `queued` when another message
/// follows it on its QP (its packets reveal a lost tail to a NAKing or SACKing receiver).
pub fn timeout_prob(recovery: Transport, ph: f64, packets: u64, queued: bool) -> f64 {
    let tail = if queued { 0.0 } else { either_way(ph) };
    let p = match recovery {
        Transport::GoBackN => tail + packets as f64 * ph * either_way(ph),
        Transport::GoBack0 => tail + restarts(ph, packets) * either_way(ph),
        Transport::SelectiveRepeat => tail,
        // The last ACK counts only when no later message's cumulative ACK covers it; RUD's
        // SACKs reveal a random loss to no one either (only a trim's NACK does).
        Transport::Unordered | Transport::Rud => {
            let acks = if queued { 0 } else { 1 };
            -((packets + acks) as f64 * (-ph).ln_1p()).exp_m1()
        }
    };
    p.min(1.0)
}

/// Under go-back-0, the expected failed attempts of a message of `packets` packets: the
/// attempts before one gets all of them through, `1/s - 1` with `s = (1 - ph)^packets`
/// (infinite when no attempt can: the livelock of Guo et al. 4.1).
pub fn restarts(ph: f64, packets: u64) -> f64 {
    (-(packets as f64) * (-ph).ln_1p()).exp_m1()
}

/// The expected resends of one message, the losses its receiver reveals (NAKs, SACKs or, under
/// go-back-0, restarts) and its probability of a timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MessageLoss {
    /// Loss events a NAK or SACK reveals (go-back-0: failed attempts).
    pub revealed: f64,
    /// Packets resent for them (a timeout's resends are apart: [`Self::timeout_resends`]).
    pub resent: f64,
    /// Packets sent per failed attempt (go-back-0), or 1 (one slot per resent packet).
    pub per_event_packets: f64,
    /// Probability the message waits for the local ACK timer.
    pub timeout: f64,
    /// Of it, the lost tail (last packet or its ACK), which a later message on the QP reveals.
    pub tail: f64,
    /// Packets resent after a timeout.
    pub timeout_resends: f64,
}

/// `Σ_{j=2}^{n} min(w, j)`: go-back-N's resends summed over a loss at each packet but the last
/// (a loss at packet `k` resends `min(w, n - k)`).
fn gbn_resends(n: u64, w: f64) -> f64 {
    let wi = (w.ceil().max(1.0) as u64).min(n);
    let below = if wi >= 2 {
        (wi * (wi + 1) / 2 - 1) as f64
    } else {
        0.0
    };
    below + (n - wi) as f64 * w.min(n as f64)
}

/// The expected loss cost of a message of `packets` packets with `window` packets in flight per
/// round trip over a path lost with `ph`; `queued` as in [`timeout_prob`].
pub fn message(
    recovery: Transport,
    ph: f64,
    packets: u64,
    window: f64,
    queued: bool,
) -> MessageLoss {
    let n = packets.max(1);
    let tail = if queued { 0.0 } else { either_way(ph) };
    let timeout = timeout_prob(recovery, ph, n, queued);
    let w = window.max(1.0);
    let (revealed, resent, per_event, timeout_resends) = match recovery {
        Transport::SelectiveRepeat | Transport::Unordered | Transport::Rud => {
            let revealed = match recovery {
                Transport::SelectiveRepeat => (n - 1) as f64 * ph,
                _ => 0.0,
            };
            // A timeout resends what is outstanding (`packet::transport::timeout`): a lost
            // tail alone, a hole found by the timer (cumulative ACKs) the window behind it,
            // under RUD the hole alone (the SACKs say what arrived).
            let outstanding = match recovery {
                Transport::SelectiveRepeat | Transport::Rud => 1.0,
                _ => w.min(n as f64 / 2.0),
            };
            (revealed, n as f64 * ph / (1.0 - ph), 1.0, outstanding)
        }
        Transport::GoBackN => (
            (n - 1) as f64 * ph,
            ph * gbn_resends(n, w),
            1.0,
            // A lost NAK resends from the loss (half the message on average); a lost tail one.
            (tail + (timeout - tail) * n as f64 / 2.0) / timeout.max(f64::MIN_POSITIVE),
        ),
        Transport::GoBack0 => {
            let f = restarts(ph, n);
            // The loss's place in a failed attempt: geometric truncated to the n packets,
            // E[k | k < n] = q/ph - n q^n / (1 - q^n) with q = 1 - ph.
            let q = 1.0 - ph;
            let qn = (n as f64 * (-ph).ln_1p()).exp();
            let k = if ph > 0.0 {
                q / ph - n as f64 * qn / (1.0 - qn)
            } else {
                0.0
            };
            let per = (k + 1.0 + w).min(n as f64);
            (f, f * per, k + 1.0, n as f64)
        }
    };
    MessageLoss {
        revealed,
        resent,
        per_event_packets: per_event,
        timeout,
        tail,
        timeout_resends: timeout_resends.max(1.0),
    }
}

/// Expected timeouts in a row once a message stalls: the timer fires again when the resend that
/// fills the hole (or, for a lost tail, it or its one ACK) is lost, up to `retries` times (the
/// QP's retry count, IBA 9.7.6.1.3): `Σ_{j<retries} a^j` with `a = 1 - (1 - ph)^2`.
pub fn timeouts_per_stall(ph: f64, retries: u8) -> f64 {
    let a = either_way(ph);
    (0..retries.max(1) as i32).map(|j| a.powi(j)).sum()
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
    fn go_back_n_resends_the_window_behind_each_loss() {
        // n = 5, w = 2: losses at packets 0..3 resend min(2, 5 - k) = 2, 2, 2, 2.
        assert_eq!(gbn_resends(5, 2.0), 8.0);
        // w above n: min(w, j) = j for j = 2..5: 14.
        assert_eq!(gbn_resends(5, 9.0), 14.0);
        let m = message(Transport::GoBackN, 0.01, 5, 2.0, false);
        assert!((m.resent - 0.08).abs() < 1e-12);
        assert!((m.revealed - 0.04).abs() < 1e-12);
    }

    #[test]
    fn go_back_0_restarts_grow_with_the_message_and_selective_repeat_resends_the_loss() {
        // 100 packets at p_h = 0.01: 1/0.99^100 - 1 = 1.732 failed attempts.
        assert!((restarts(0.01, 100) - (0.99f64.powi(-100) - 1.0)).abs() < 1e-9);
        let sr = message(Transport::SelectiveRepeat, 0.01, 100, 10.0, true);
        let gbn = message(Transport::GoBackN, 0.01, 100, 10.0, true);
        let gb0 = message(Transport::GoBack0, 0.01, 100, 10.0, true);
        assert!((sr.resent - 100.0 * 0.01 / 0.99).abs() < 1e-12);
        assert!(sr.resent < gbn.resent && gbn.resent < gb0.resent);
        assert!(sr.timeout < gbn.timeout && gbn.timeout < gb0.timeout);
        // A queued message's tail is revealed: selective repeat never times out.
        assert_eq!(sr.timeout, 0.0);
    }

    #[test]
    fn a_stall_repeats_while_its_resend_is_lost() {
        // a = 1 - 0.9^2 = 0.19: 1 + 0.19 + 0.0361 over 3 retries.
        assert!((timeouts_per_stall(0.1, 3) - 1.2261).abs() < 1e-12);
        assert_eq!(timeouts_per_stall(0.0, 7), 1.0);
    }
}
