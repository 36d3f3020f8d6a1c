//! Two congestion controls on one sender, as UEC 1.0 3.6.12.3 runs NSCC and RCCC together
//! (read through github.com/KaiLv16/UEC-Notes, its UET-CC notes: `CanSend` is the AND of
//! each algorithm's): every hook goes to both, and the sender keeps the smaller window. Only
//! for window algorithms: neither may set a pacing gap or a timer (checked in debug builds).

use super::{Acked, CcOut, CongestionControl, Echo};
use fabricsim_core::units::{BitRate, Time};

pub struct Both<A, B>(pub A, pub B);

/// The smaller of two windows (0: unlimited), `None` when neither changes.
fn min_window(a: Option<u32>, b: Option<u32>) -> Option<u32> {
    match (a, b) {
        (Some(0), w) | (w, Some(0)) => w.or(Some(0)),
        (Some(x), Some(y)) => Some(x.min(y)),
        (w, None) | (None, w) => w,
    }
}

/// The two answers as one: their smaller window.
fn merge(a: Option<CcOut>, b: Option<CcOut>) -> Option<CcOut> {
    for o in [&a, &b].into_iter().flatten() {
        debug_assert!(o.gap == super::Gap::Keep && o.arms().is_empty());
    }
    let window = min_window(a.and_then(|o| o.window), b.and_then(|o| o.window));
    (a.is_some() || b.is_some()).then(|| CcOut {
        window,
        ..CcOut::default()
    })
}

impl<A: CongestionControl, B: CongestionControl> CongestionControl for Both<A, B> {
    fn initial_window(&self, qp: u32, default: u32) -> u32 {
        min_window(
            Some(self.0.initial_window(qp, default)),
            Some(self.1.initial_window(qp, default)),
        )
        .unwrap_or(default)
    }
    fn acks(&self) -> bool {
        self.0.acks() || self.1.acks()
    }
    fn on_echo(&mut self, data: u32, ack: u32, echo: Echo) {
        self.0.on_echo(data, ack, echo);
        self.1.on_echo(data, ack, echo);
    }
    fn on_sent(&mut self, qp: u32, pkt: u32, wire: u64, now: Time, line: BitRate) -> Option<CcOut> {
        let a = self.0.on_sent(qp, pkt, wire, now, line);
        merge(a, self.1.on_sent(qp, pkt, wire, now, line))
    }
    fn on_ack(&mut self, qp: u32, ack: u32, a: &Acked, line: BitRate) -> Option<CcOut> {
        let x = self.0.on_ack(qp, ack, a, line);
        merge(x, self.1.on_ack(qp, ack, a, line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_smaller_window_wins_and_zero_is_unlimited() {
        assert_eq!(min_window(Some(8), Some(3)), Some(3));
        assert_eq!(min_window(Some(0), Some(5)), Some(5));
        assert_eq!(min_window(Some(0), Some(0)), Some(0));
        assert_eq!(min_window(None, Some(4)), Some(4));
        assert_eq!(min_window(None, None), None);
    }
}
