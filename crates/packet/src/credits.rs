//! InfiniBand credit-based link-level flow control per VL (IBA Vol. 1 7.9), parameterised by
//! the spacing of its credit updates so it also serves UEC CBFC per virtual channel (UEC 1.0
//! 5.2, read through the OCP SAI proposal
//! https://github.com/opencomputeproject/SAI/blob/master/doc/CBFC/SAI-Credit_Based_Flow_Control.md):
//! CBFC's counters of credits consumed and freed
//! carry what FCTBS and FCCL do (free = buffer - (consumed - freed)).
//!
//! The receiver of each link end keeps a buffer per data VL, counted in 64-byte blocks. It
//! advertises FCCL = ABR + free blocks (ABR: adjusted blocks received); the sender counts FCTBS
//! (total blocks sent) and sends a packet only if FCCL - FCTBS covers all its blocks. Counters
//! are modular (`wrapping_*`) as in the spec, with 32 bits instead of 12, because buffers for
//! long links exceed the 2^11 blocks a 12-bit counter can leave outstanding (IB long-haul gear
//! converts credit units instead; Mellanox patent US7952998B2).
//!
//! Update policy (on free): each time the receiver frees a packet's blocks it sends a
//! flow-control packet carrying its new FCCL, which reaches the sender after the link's
//! propagation delay; FC packets are 6 bytes and are not charged link time. With a spacing
//! (`CreditParams::update_bytes`, CBFC's credit-freed updates every 6,400 B) the receiver
//! sends its count only once that much has been freed since the last one; what is freed since
//! stays unreported until the next (CBFC's periodic credit sync, every 256 us, is not modelled:
//! a buffer of at least the spacing plus one frame, checked at setup, never leaves a sender
//! without credit for its next frame). Credits are 64 B blocks for both (CBFC's 128 B unit
//! would round a frame up by at most 64 B more).
//! Nothing is ever dropped for lack of buffer: `received` asserts it.

use fabricsim_mech::params::blocks;

/// The sender's state on one egress port x VL, in one record.
#[derive(Clone, Copy, Debug)]
struct Tx {
    /// The last FCCL received and FCTBS.
    fccl: u32,
    fctbs: u32,
    /// When the sender started waiting for credits (`u64::MAX`: not).
    stall_since: u64,
    /// When its last wait for credits ended (0: never waited).
    stall_end: u64,
}

/// The receiver's state on one ingress port x VL: ABR, blocks held in the buffer, and the
/// buffer per VL of the port (blocks), in one record.
#[derive(Clone, Copy, Debug)]
struct Rx {
    abr: u32,
    held: u32,
    cap: u32,
    /// Blocks freed since the last update sent.
    owed: u32,
}

pub struct Credits {
    ntc: usize,
    /// Per egress port x VL.
    tx: Vec<Tx>,
    /// Per ingress port x VL.
    rx: Vec<Rx>,
    /// Blocks to free between two updates (0: an update per frame freed).
    update_blocks: u32,
    /// Per egress port: time spent waiting for credits with a packet ready, in ps.
    pub stall_ps: Vec<u64>,
    /// Times a sender found too few credits for its next packet.
    pub stalls: u64,
}

/// Entry `i` (port x `ntc` + VL) of a table, for the packet path, unchecked.
#[inline(always)]
fn at<T>(v: &mut [T], i: usize) -> &mut T {
    debug_assert!(i < v.len(), "id {i} in a table of {}", v.len());
    // SAFETY: the packet path's callers (`engine::admission`, `engine::llfc`) pass the
    // engine's port and class ids, valid by `engine::tab`'s checks; `Credits::new` sized `tx` and `rx` ports x `ntc`.
    unsafe { v.get_unchecked_mut(i) }
}

impl Credits {
    /// `cap[p]`: blocks per VL of port `p`'s receive buffer; `peer[p]`: the port at the other
    /// end; `update_blocks`: blocks freed between two updates (0: every frame). Each sender
    /// starts with the FCCL of an empty peer buffer (the link-up exchange).
    pub fn new(ntc: usize, cap: Vec<u32>, peer: &[u32], update_blocks: u32) -> Credits {
        let n = cap.len();
        Credits {
            ntc,
            tx: (0..n * ntc)
                .map(|i| Tx {
                    fccl: cap[peer[i / ntc] as usize],
                    fctbs: 0,
                    stall_since: u64::MAX,
                    stall_end: 0,
                })
                .collect(),
            rx: (0..n * ntc)
                .map(|i| Rx {
                    abr: 0,
                    held: 0,
                    cap: cap[i / ntc],
                    owed: 0,
                })
                .collect(),
            update_blocks,
            stall_ps: vec![0; n],
            stalls: 0,
        }
    }

    /// Credits (blocks) the sender on egress `p` holds for `tc`.
    #[inline]
    pub fn available(&self, p: usize, tc: usize) -> u32 {
        let t = &self.tx[p * self.ntc + tc];
        t.fccl.wrapping_sub(t.fctbs)
    }

    /// Whether egress `p` may send a frame of `frame` bytes on `tc`; a refusal starts a stall.
    #[inline(always)]
    pub(crate) fn may_send(&mut self, p: usize, tc: usize, frame: u32, now: u64) -> bool {
        let t = at(&mut self.tx, p * self.ntc + tc);
        if t.fccl.wrapping_sub(t.fctbs) >= blocks(frame) {
            return true;
        }
        if t.stall_since == u64::MAX {
            t.stall_since = now;
            self.stalls += 1;
            #[cfg(feature = "trace")]
            super::trace::stall(now, p as u32);
        }
        false
    }

    /// Bits of the classes whose head frame (`heads[tc]`, 0 = empty) lacks credits.
    #[inline]
    pub(crate) fn blocked_bits(
        &mut self,
        p: usize,
        heads: impl Iterator<Item = u32>,
        now: u64,
    ) -> u8 {
        let mut bits = 0u8;
        for (tc, f) in heads.enumerate() {
            if f != 0 && !self.may_send(p, tc, f, now) {
                bits |= 1 << tc;
            }
        }
        bits
    }

    /// The sender on `p` puts a frame on `tc`.
    #[inline(always)]
    pub(crate) fn sent(&mut self, p: usize, tc: usize, frame: u32) {
        let t = at(&mut self.tx, p * self.ntc + tc);
        t.fctbs = t.fctbs.wrapping_add(blocks(frame));
    }

    /// A frame arrives at ingress `ip` on `tc`. Panics if it does not fit: with credits the
    /// sender cannot overrun the buffer, so an overrun is an engine bug.
    #[inline(always)]
    pub(crate) fn received(&mut self, ip: usize, tc: usize, frame: u32) {
        let r = at(&mut self.rx, ip * self.ntc + tc);
        let b = blocks(frame);
        r.abr = r.abr.wrapping_add(b);
        r.held += b;
        if r.held > r.cap {
            overrun(ip, tc, r.held, r.cap);
        }
    }

    /// Ingress `ip` frees a frame on `tc`; returns the FCCL to send upstream when an update
    /// is due.
    #[inline(always)]
    pub(crate) fn freed(&mut self, ip: usize, tc: usize, frame: u32) -> Option<u32> {
        let r = at(&mut self.rx, ip * self.ntc + tc);
        let b = blocks(frame);
        r.held -= b;
        r.owed += b;
        if r.owed < self.update_blocks {
            return None;
        }
        r.owed = 0;
        Some(r.abr.wrapping_add(r.cap - r.held))
    }

    /// A flow-control packet with `fccl` reaches the sender on `p`.
    #[inline]
    pub fn update(&mut self, p: usize, tc: usize, fccl: u32, now: u64) {
        let t = &mut self.tx[p * self.ntc + tc];
        t.fccl = fccl;
        if t.stall_since != u64::MAX {
            self.stall_ps[p] += now - t.stall_since;
            #[cfg(feature = "trace")]
            super::trace::stall_end(now, p as u32);
            t.stall_since = u64::MAX;
            t.stall_end = now;
        }
    }

    /// Time egress `p` has waited for credits up to `now`, the open waits counted to `now` (what
    /// a sample of the series reads; nothing is closed).
    pub fn stall_ps_at(&self, p: usize, now: u64) -> u64 {
        let open = self.tx[p * self.ntc..(p + 1) * self.ntc]
            .iter()
            .filter(|t| t.stall_since != u64::MAX)
            .map(|t| now.saturating_sub(t.stall_since))
            .sum::<u64>();
        self.stall_ps[p] + open
    }

    /// Closes the credit waits still open at the end of a run (a sender that never got its
    /// credits back waited until `now`).
    pub fn close(&mut self, now: u64) {
        for (i, t) in self.tx.iter_mut().enumerate() {
            if t.stall_since != u64::MAX {
                self.stall_ps[i / self.ntc] += now - t.stall_since;
                t.stall_since = now;
            }
        }
    }

    /// Whether the sender on `p` waited for credits on `tc` at some time since `since` (or
    /// waits now): its queue is then held up from downstream, a victim of congestion in the
    /// sense of IBA annex A10.
    #[inline]
    pub fn starved_since(&self, p: usize, tc: usize, since: u64) -> bool {
        let t = &self.tx[p * self.ntc + tc];
        t.stall_since != u64::MAX || (t.stall_end != 0 && t.stall_end >= since)
    }

    /// Blocks held at ingress `ip` on `tc` (for the deadlock detector and tests).
    pub fn held(&self, ip: usize, tc: usize) -> u32 {
        self.rx[ip * self.ntc + tc].held
    }
}

/// `received`'s failure, out of line.
#[cold]
#[inline(never)]
fn overrun(ip: usize, tc: usize, held: u32, cap: u32) -> ! {
    panic!("credit overrun on port {ip} VL {tc}: {held} blocks held, buffer {cap} (engine bug)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sender_stops_at_the_advertised_limit_and_resumes_on_update() {
        // Two ports facing each other, 10 blocks per VL (IBA 7.9: FCCL - FCTBS >= blocks).
        let mut c = Credits::new(1, vec![10, 10], &[1, 0], 0);
        assert_eq!(blocks(4096 + 26), 65);
        assert!(c.may_send(0, 0, 640, 0));
        c.sent(0, 0, 640);
        c.received(1, 0, 640);
        assert!(!c.may_send(0, 0, 1, 5));
        assert_eq!(c.stalls, 1);
        let fccl = c.freed(1, 0, 640).unwrap();
        assert_eq!(fccl, 20); // ABR 10 + 10 free
        c.update(0, 0, fccl, 25);
        assert_eq!(c.available(0, 0), 10);
        assert_eq!(c.stall_ps[0], 20);
        assert!(c.starved_since(0, 0, 25) && !c.starved_since(0, 0, 26));
    }

    #[test]
    fn counters_wrap_like_the_spec_modular_counters() {
        let mut c = Credits::new(1, vec![4, 4], &[1, 0], 0);
        c.tx[0].fccl = u32::MAX;
        c.tx[0].fctbs = u32::MAX - 4;
        c.rx[1].abr = u32::MAX - 1;
        assert_eq!(c.available(0, 0), 4);
        c.sent(0, 0, 256);
        assert_eq!(c.available(0, 0), 0);
        c.received(1, 0, 256);
        assert_eq!(
            c.freed(1, 0, 256),
            Some((u32::MAX - 1).wrapping_add(4).wrapping_add(4))
        );
    }

    /// CBFC's spacing: with updates every 100 blocks (6,400 B) the receiver stays silent until
    /// that much is freed, then reports everything freed so far.
    #[test]
    fn a_spaced_update_waits_for_its_bytes() {
        let mut c = Credits::new(1, vec![200, 200], &[1, 0], 100);
        for _ in 0..3 {
            c.sent(0, 0, 4096);
            c.received(1, 0, 4096);
        }
        assert_eq!(c.available(0, 0), 8);
        assert_eq!(c.freed(1, 0, 4096), None, "64 blocks freed");
        // 128 blocks freed: ABR 192 + 200 - 64 held.
        assert_eq!(c.freed(1, 0, 4096), Some(328));
        assert_eq!(c.freed(1, 0, 4096), None, "64 owed");
        c.update(0, 0, 328, 1);
        assert_eq!(c.available(0, 0), 136);
    }

    #[test]
    fn a_wait_still_open_at_the_end_counts_up_to_it() {
        let mut c = Credits::new(1, vec![1, 1], &[1, 0], 0);
        c.sent(0, 0, 64);
        assert!(!c.may_send(0, 0, 64, 10));
        c.close(50);
        assert_eq!(c.stall_ps[0], 40);
    }

    #[test]
    #[should_panic(expected = "credit overrun")]
    fn an_overrun_fails_loudly() {
        let mut c = Credits::new(1, vec![1, 1], &[1, 0], 0);
        c.received(1, 0, 65);
    }
}
