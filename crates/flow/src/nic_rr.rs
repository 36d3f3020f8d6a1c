//! The packet granularity of a sender NIC's per-QP round robin at message end.
//!
//! A NIC serves the QPs that have something to send one packet each in turn (the packet
//! engine's `sim::engine::nic_tx`: a ring of active QPs, a QP joining at its back; ConnectX's
//! per-QP send arbitration, round robin among QPs of one priority). The fluid drains the flows
//! of one NIC that share its line together, so messages that the fluid ends at one time `T`
//! end in the packet engine in the last round, one frame apart, in ring order: the QP at place
//! `p` of the `A` active when that round starts sends its last frame `(A - p)` frames before
//! the last one, `(1 - p / A) x A frames / line rate` before `T`. The 128-GPU all-to-all of 16
//! KB (127 messages of 4 packets per NIC, all posted at once) on ib-ndr: the k-th posted ends at
//! 34.4 us (k = 2) to 44.5 us (k = 127), 80.6 ns (a 4 KB frame at 400 Gb/s) apart; the fluid
//! ends all at 44.0-44.5 us (`fabricsim-lab rr`).
//!
//! Which QP is served first: a message posted to an idle NIC sends its first packet at once,
//! before the messages posted with it (same picosecond) join the ring behind it, so it stays
//! one packet ahead of them and ends one round earlier, at place 1 of the round before the
//! last: `2 (A - 1)` frames before `T` (the packet engine's first-posted message: 23.9 us
//! against 44.5). Posting order is ring order, since each posted QP joins the ring's back.
//!
//! The model: each message takes, at its start, the next places of its NIC's ring (one per
//! QP: posting order). Per sender NIC, a *run* is the messages whose last bytes the fluid drains
//! within one frame time of the run's previous one (one batch, or the next picosecond when the
//! integer rates round apart); `A` is the QPs active on the NIC when the run opens. A member
//! ends one frame at the NIC's line rate before its fluid end per QP posted behind it (before
//! the run opened), at most `A - 1`: with every active QP in the run, place `p` ends `A - p`
//! frames early, and the order in which the event loop drains the run does not matter. A lead
//! message (posted to an idle NIC, every other message of the NIC joining in that picosecond)
//! ends `A - 1` frames earlier still. The shift is capped at the message's own queueing (its
//! drain beyond its bytes alone at line rate). Only the message's end moves: the rates, the
//! bytes drained and the QP's next message are the fluid's, so bytes stay conserved; its
//! completion releases its dependants at its (earlier) finish. Limits: a QP posted behind a
//! member that ended before the run counts as behind it (bounded by `A - 1`), and a NIC that
//! does not fill its line (flows held downstream) runs rounds slower than its line rate.

use super::effect::{Ctx, Effect};
use super::state::{NONE32, PS_PER_S};
use fabricsim_mech::entropy;

/// Per sender NIC: its QPs, its lead message and its current run (32 bytes).
#[derive(Clone, Copy)]
struct Nic {
    /// QPs with bytes to drain.
    active: u32,
    /// QPs posted so far (the next ring place).
    posted: u32,
    /// The message posted to the idle NIC (`NONE32` once a message joined it later).
    lead: u32,
    /// When the lead started.
    lead_ps: u64,
    /// The latest fluid end of the run.
    run_end_ps: u64,
    /// QPs active and posted when the run opened (`run_posted` 0: no run yet).
    run_active: u32,
    run_posted: u32,
}

/// The round-robin state of every sender NIC.
pub(super) struct NicRounds {
    nics: Vec<Nic>,
    /// Per message: its first QP's place in posting order on its NIC.
    place: Vec<u32>,
    /// A full frame's wire bits (MTU payload, headers, per-frame overhead).
    frame_bits: u64,
}

impl NicRounds {
    /// `hosts` NICs sending `messages` messages, whose full frames are `frame_bytes` on the wire
    /// (`paths::wire_bytes` of an MTU).
    pub fn new(hosts: usize, messages: usize, frame_bytes: u64) -> NicRounds {
        let idle = Nic {
            active: 0,
            posted: 0,
            lead: NONE32,
            lead_ps: 0,
            run_end_ps: 0,
            run_active: 0,
            run_posted: 0,
        };
        NicRounds {
            nics: vec![idle; hosts],
            place: vec![0; messages],
            frame_bits: frame_bytes * 8,
        }
    }

    /// Message `m` starts draining on `qps` QPs of NIC `h` at `now`.
    #[inline]
    pub fn started(&mut self, h: u32, m: u32, qps: u32, now: u64) {
        let n = &mut self.nics[h as usize];
        if n.active == 0 {
            n.lead = m;
            n.lead_ps = now;
        } else if now != n.lead_ps {
            // A later joiner finds the lead part-way into a packet: less than a round ahead.
            n.lead = NONE32;
        }
        self.place[m as usize] = n.posted;
        n.posted += qps;
        n.active += qps;
    }

    /// Message `m` (on `qps` QPs of NIC `h`, line rate `line_bps`) has its last byte drained by
    /// the fluid at `now`: how much earlier (ps) its last frame leaves in the round robin.
    #[inline]
    pub fn ended(&mut self, h: u32, m: u32, qps: u32, now: u64, line_bps: u64) -> u64 {
        let frame_ps = (self.frame_bits as u128 * PS_PER_S).div_ceil(line_bps.max(1) as u128);
        let frame_ps = frame_ps.min(u64::MAX as u128) as u64;
        let n = &mut self.nics[h as usize];
        if n.run_posted == 0 || now > n.run_end_ps.saturating_add(frame_ps) {
            n.run_active = n.active;
            n.run_posted = n.posted;
        }
        n.run_end_ps = now;
        // QPs posted behind its last one before the run opened (none if it started since).
        let first = self.place[m as usize];
        let behind = n.run_posted.saturating_sub(first).saturating_sub(qps);
        let mut frames = behind.min(n.run_active.saturating_sub(1)) as u64;
        if n.lead == m {
            frames += n.run_active.saturating_sub(1) as u64;
            n.lead = NONE32;
        }
        n.active -= qps;
        frames * frame_ps
    }
}

/// The effect: a message takes its ring places as it starts, and its receive time moves
/// earlier by its place in the last round, at most its queueing (`wait_ps`).
impl Effect for NicRounds {
    #[inline]
    fn message_start(&mut self, cx: &mut Ctx, m: u32, parts: u32) {
        let src = cx.dag.messages[m as usize].src.0;
        self.started(src, m, parts, cx.now);
    }

    fn message_drained(&mut self, cx: &mut Ctx, m: u32, r: u32, wait_ps: u64) -> bool {
        let msg = &cx.dag.messages[m as usize];
        let parts = entropy::parts(msg.bytes, cx.p.cc.qps_per_message()) as u32;
        let nic = cx.solver.routes().get(r).first();
        let line = nic.map_or(cx.routes.get(r).line, |&l| cx.solver.capacity(l));
        let early = self.ended(msg.src.0, m, parts, cx.now, line);
        cx.msgs[m as usize].recv -= early.min(wait_ps);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 KB frames at 400 Gb/s: 4,096 x 8 / 400e9 s = 81.92 ns.
    const LINE: u64 = 400_000_000_000;
    const FRAME_PS: u64 = 81_920;

    /// Three messages posted at once to an idle NIC, drained together by the fluid at 1 ms:
    /// in the packet engine's ring [m0, m1, m2] with m0 one packet ahead, m0 ends at place 1 of
    /// the round before the last (2 (3 - 1) = 4 frames early), m1 and m2 at places 2 and 3 of
    /// the last (1 frame early, on time), whatever order the fluid drains them in.
    #[test]
    fn messages_posted_together_end_a_frame_apart_in_ring_order() {
        for order in [[0, 1, 2], [2, 0, 1], [1, 2, 0]] {
            let mut r = NicRounds::new(1, 3, 4_096);
            for m in 0..3 {
                r.started(0, m, 1, 500);
            }
            let t = 1_000_000_000;
            let mut shifts = [0; 3];
            for m in order {
                shifts[m as usize] = r.ended(0, m, 1, t, LINE);
            }
            assert_eq!(shifts, [4 * FRAME_PS, FRAME_PS, 0], "{order:?}");
        }
    }

    /// A message joining later breaks the lead; a message of two QPs takes two places and ends
    /// at its second; a run ends when the next end is more than a frame later, and a message
    /// started after a run opened has nothing behind it in that run.
    #[test]
    fn runs_places_and_lead() {
        let mut r = NicRounds::new(2, 5, 4_096);
        r.started(1, 0, 1, 0);
        r.started(1, 1, 2, 10);
        r.started(1, 2, 1, 10);
        let t = 5_000_000;
        // Ring [0, 1a, 1b, 2]: one run of 4 QPs; 1 ends at 1b (one QP behind), 0 (no lead, 3
        // behind) at place 1.
        assert_eq!(r.ended(1, 1, 2, t, LINE), FRAME_PS);
        assert_eq!(r.ended(1, 0, 1, t + FRAME_PS, LINE), 3 * FRAME_PS);
        r.started(1, 3, 1, t + FRAME_PS);
        assert_eq!(r.ended(1, 3, 1, t + 2 * FRAME_PS, LINE), 0);
        // More than a frame later: a new run of the one QP left.
        assert_eq!(r.ended(1, 2, 1, t + 4 * FRAME_PS, LINE), 0);
        // The other NIC is untouched; alone, it has nothing behind it.
        r.started(0, 4, 1, 0);
        assert_eq!(r.ended(0, 4, 1, t, LINE), 0);
    }
}
