//! UEC NSCC, network-signal congestion control (UEC 1.0 specification 3.6.13, source algorithm
//! 3.6.13.5-3.6.13.6; read through github.com/KaiLv16/UEC-Notes, its UET-CC notes): one window
//! per sender over all its paths, driven by the ECN mark the ACK echoes and the queueing delay
//! it measures (RTT − base RTT). No mark and delay below target: proportional increase (fast
//! increase when the delay is near zero for a window); no mark above target: fair increase;
//! a mark below target: hold; a mark above target: multiplicative decrease, at most once per
//! base RTT. Increases accumulate and apply once per base RTT or 8 MTUs acknowledged
//! (`fulfill_adjustment`); quick adapt sets the window to what the last period delivered on a
//! trim or a delay past 4 x target, at most once a period. The parameters are `sim::nscc`'s.
//!
//! The engine's window is in packets against `nxt − una`; NSCC's limit is its byte window over
//! what is in flight, the packets sent and neither acknowledged nor SACKed, so the window handed
//! back is the window in packets plus the SACKed ones. A trimmed packet counts in flight until
//! its resend is acknowledged (the spec subtracts it at the NACK): one packet more, for a round
//! trip. The send time of each data packet and the echo of its ACK live in a side table indexed
//! by packet slab id (reserved at setup, as `hpcc`'s INT).

use super::{Acked, CcOut, CcSetup, CongestionControl, Echo, hpcc};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_mech::nscc::{NsccDerived, NsccParams};

/// A data packet's send time, or an ACK's echo of it.
#[derive(Clone, Copy, Debug, Default)]
struct Rec {
    tx: u64,
    marked: bool,
    trimmed: bool,
}

/// A sender's state (spec table 3-77; the average delay behind `update_delay`).
#[derive(Clone, Copy, Debug, Default)]
struct Src {
    cwnd: f64,
    max_wnd: f64,
    base_rtt: f64,
    achieved: f64,
    received: f64,
    fi_count: f64,
    trigger_qa: bool,
    qa_endtime: f64,
    bytes_to_ignore: f64,
    bytes_ignored: f64,
    inc_bytes: f64,
    last_adjust: f64,
    increase: bool,
    last_dec: f64,
    avg_delay: f64,
}

pub struct Nscc {
    n: NsccParams,
    /// Per QP: the derived constants at its line rate.
    d: Vec<NsccDerived>,
    src: Vec<Src>,
    /// The transport's window, packets (0: unlimited).
    cap: u32,
    /// `config_base_rtt`, ps.
    config_rtt: f64,
    rec: Vec<Rec>,
}

impl Nscc {
    pub fn new(n: NsccParams, s: &CcSetup) -> Nscc {
        // Each QP's own unloaded round trip starts its base RTT, in place of the probe the spec
        // sends after the first ACK (3.6.13.7: a source that can estimate it reliably need not);
        // config_base_rtt is the longest (3.6.13.3).
        let own: Vec<u64> = hpcc::unloaded_rtts(s, s.p.cut_through)
            .map(|(t, _, _)| t.0.max(1))
            .collect();
        let rtt = own.iter().copied().max().unwrap_or(1);
        let (mtu, trim) = (s.p.mtu_frame_wire_bytes(), s.p.cc.trim_bytes > 0);
        let d: Vec<NsccDerived> = s
            .line
            .iter()
            .map(|l| n.derive(l.bps(), rtt, mtu, trim))
            .collect();
        let src = d
            .iter()
            .zip(s.line.iter())
            .zip(&own)
            .map(|((d, l), &base)| {
                let mut s = Src {
                    base_rtt: f64::MAX,
                    ..Src::default()
                };
                s.update_base_rtt(&n, *l, base as f64);
                s.cwnd = s.max_wnd.max(d.mtu);
                s
            })
            .collect();
        Nscc {
            n,
            d,
            src,
            cap: s.p.window_packets,
            config_rtt: rtt as f64,
            rec: Vec::with_capacity(s.packets),
        }
    }

    fn slot(&mut self, id: u32) -> &mut Rec {
        let i = id as usize;
        if i >= self.rec.len() {
            // Within the room reserved at setup this writes, it does not allocate.
            self.rec.resize(i + 1, Rec::default());
        }
        &mut self.rec[i]
    }

    /// The engine's window for `qp`: the byte window in packets plus the SACKed ones.
    fn window(&self, qp: usize, sacked: u32) -> u32 {
        let (s, d) = (&self.src[qp], &self.d[qp]);
        let w = ((s.cwnd / d.mtu) as u32).max(1).saturating_add(sacked);
        if self.cap == 0 { w } else { w.min(self.cap) }
    }
}

impl Src {
    /// `update_base_rtt`: the smallest RTT seen, the window's cap from it.
    fn update_base_rtt(&mut self, n: &NsccParams, line: BitRate, rtt: f64) {
        if rtt < self.base_rtt {
            self.base_rtt = rtt;
            self.max_wnd = n.max_wnd_bdp * line.bps() as f64 / 8.0 * rtt * 1e-12;
        }
    }

    fn update_delay(&mut self, n: &NsccParams, delay: f64) {
        self.avg_delay += n.delay_ewma * (delay - self.avg_delay);
    }

    fn fulfill_adjustment(&mut self, d: &NsccDerived, now: f64) {
        self.cwnd += self.inc_bytes / self.cwnd;
        if now - self.last_adjust >= d.adjust_period_ps {
            self.last_adjust = now;
            self.cwnd += d.eta;
        }
        self.cwnd = self.cwnd.min(self.max_wnd);
        self.inc_bytes = 0.0;
        self.received = 0.0;
    }

    fn fast_increase(&mut self, d: &NsccDerived, newly: f64, delay: f64) {
        if delay < d.near_zero_ps {
            self.fi_count += newly;
            if self.fi_count > self.cwnd || self.increase {
                self.cwnd = (self.cwnd + newly * d.fi_scale).min(self.max_wnd);
                self.increase = true;
                return;
            }
        } else {
            self.fi_count = 0.0;
        }
        self.increase = false;
    }

    fn proportional_increase(&mut self, d: &NsccDerived, newly: f64, delay: f64) {
        self.fast_increase(d, newly, delay);
        if !self.increase {
            self.inc_bytes += d.alpha * newly * (d.target_ps - delay);
        }
    }

    fn multiplicative_decrease(&mut self, n: &NsccParams, d: &NsccDerived, now: f64) {
        self.increase = false;
        self.fi_count = 0.0;
        let avg = self.avg_delay;
        if avg > d.target_ps && now - self.last_dec > self.base_rtt {
            let f = (1.0 - n.gamma * (avg - d.target_ps) / avg).max(n.max_md_jump);
            self.cwnd = (self.cwnd * f).max(d.mtu);
            self.last_dec = now;
        }
    }

    /// `quick_adapt`: whether it ran or its bytes are being ignored. `inflight`: bytes in flight.
    fn quick_adapt(
        &mut self,
        n: &NsccParams,
        d: &NsccDerived,
        (now, inflight): (f64, f64),
        is_loss: bool,
        marked: bool,
        qdelay: f64,
    ) -> bool {
        if !n.quick_adapt {
            return false;
        }
        let mut done = false;
        if self.bytes_ignored < self.bytes_to_ignore && marked {
            done = true;
        } else if now >= self.qa_endtime {
            let gate = self.max_wnd / (1u64 << n.qa_gate) as f64;
            if self.qa_endtime != 0.0
                && (self.trigger_qa || is_loss || qdelay > d.qa_threshold_ps)
                && self.achieved < gate
            {
                self.cwnd = self.achieved.max(d.mtu);
                self.bytes_to_ignore = inflight;
                self.bytes_ignored = 0.0;
                self.trigger_qa = false;
                done = true;
            }
            self.achieved = 0.0;
            self.qa_endtime = now + self.base_rtt + d.target_ps;
        }
        if done {
            self.inc_bytes = 0.0;
            self.received = 0.0;
        }
        done
    }
}

impl CongestionControl for Nscc {
    fn initial_window(&self, qp: u32, _default: u32) -> u32 {
        self.window(qp as usize, 0)
    }

    fn acks(&self) -> bool {
        true
    }

    #[inline]
    fn on_sent(&mut self, _qp: u32, pkt: u32, _w: u64, now: Time, _l: BitRate) -> Option<CcOut> {
        *self.slot(pkt) = Rec {
            tx: now.0,
            ..Rec::default()
        };
        None
    }

    fn on_echo(&mut self, data: u32, ack: u32, echo: Echo) {
        let tx = self.slot(data).tx;
        *self.slot(ack) = Rec {
            tx,
            marked: echo.marked,
            trimmed: echo.trimmed,
        };
    }

    fn on_ack(&mut self, qp: u32, ack: u32, a: &Acked, line: BitRate) -> Option<CcOut> {
        let r = *self.slot(ack);
        let q = qp as usize;
        let (n, d) = (&self.n, &self.d[q]);
        let s = &mut self.src[q];
        let now = a.now.0 as f64;
        let rtt = a.now.0.saturating_sub(r.tx) as f64;
        let inflight = a.nxt.saturating_sub(a.una).saturating_sub(a.sacked) as f64 * d.mtu;
        s.update_base_rtt(n, line, rtt);
        if r.trimmed {
            // NSCC.OnNACK for a trim (no RCCC): the trimmed queue's delay is taken as a base
            // RTT, quick adapt is asked for, else the window loses the packet.
            s.update_delay(n, self.config_rtt);
            s.bytes_ignored += d.mtu;
            s.trigger_qa = true;
            if !s.quick_adapt(n, d, (now, inflight), true, true, 0.0) {
                s.cwnd = (s.cwnd - d.mtu).max(d.mtu);
            }
        } else {
            let newly = a.newly as f64 * d.mtu;
            s.bytes_ignored += newly;
            s.received += newly;
            s.achieved += newly;
            let delay = rtt - s.base_rtt;
            s.update_delay(n, delay);
            if !s.quick_adapt(n, d, (now, inflight), false, r.marked, delay) {
                match (r.marked, delay >= d.target_ps) {
                    (false, true) => s.inc_bytes += d.fi * newly,
                    (false, false) => s.proportional_increase(d, newly, delay),
                    (true, true) => s.multiplicative_decrease(n, d, now),
                    (true, false) => {}
                }
                if now - s.last_adjust >= d.adjust_period_ps || s.received > d.adjust_bytes {
                    s.fulfill_adjustment(d, now);
                }
            }
        }
        Some(CcOut {
            window: Some(self.window(q, a.sacked)),
            ..CcOut::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src(d: &NsccDerived) -> Src {
        Src {
            cwnd: d.max_wnd,
            max_wnd: d.max_wnd,
            base_rtt: 6e6,
            ..Src::default()
        }
    }

    /// The four responses: no mark below target grows the window, a mark below target holds
    /// it, a mark above target cuts it by γ·(avg − target)/avg (at most once per base RTT).
    #[test]
    fn the_four_responses() {
        let n = NsccParams::default();
        let d = n.derive(400_000_000_000, 6_000_000, 4180, true);
        // Decrease, from an average delay twice the target.
        let mut s = src(&d);
        s.cwnd = d.max_wnd / 2.0;
        s.fi_count = f64::MAX;
        s.avg_delay = 2.0 * d.target_ps;
        let before = s.cwnd;
        s.multiplicative_decrease(&n, &d, 1e7);
        let want = before * (1.0 - n.gamma * 0.5);
        assert!((s.cwnd - want).abs() < 1e-6, "{} vs {want}", s.cwnd);
        let cut = s.cwnd;
        s.multiplicative_decrease(&n, &d, 1e7 + 1.0);
        assert_eq!(s.cwnd, cut, "once per base RTT");
        // Proportional increase below target: inc grows with (target − delay).
        let mut s = src(&d);
        s.cwnd = d.max_wnd / 4.0;
        s.proportional_increase(&d, 4180.0, d.target_ps / 2.0);
        let half = s.inc_bytes;
        let mut s2 = src(&d);
        s2.cwnd = d.max_wnd / 4.0;
        s2.proportional_increase(&d, 4180.0, d.target_ps / 4.0);
        assert!(half > 0.0 && s2.inc_bytes > half);
        s.fulfill_adjustment(&d, 0.0);
        assert!(s.cwnd > d.max_wnd / 4.0);
    }

    /// Quick adapt sets the window to what the last period delivered, once per period.
    #[test]
    fn quick_adapt_takes_the_achieved_bytes() {
        let n = NsccParams::default();
        let d = n.derive(400_000_000_000, 6_000_000, 4180, true);
        let mut s = src(&d);
        assert!(
            !s.quick_adapt(&n, &d, (1.0, 0.0), true, true, 0.0),
            "first period"
        );
        s.achieved = 10.0 * 4180.0;
        let end = s.qa_endtime;
        assert!(s.quick_adapt(&n, &d, (end, 5e5), true, true, 0.0));
        assert_eq!(s.cwnd, 10.0 * 4180.0);
        assert_eq!(s.bytes_to_ignore, 5e5);
        // Marked ACKs of what was queued are ignored, not decreased on.
        assert!(s.quick_adapt(&n, &d, (end + 1.0, 5e5), false, true, 0.0));
    }
}
