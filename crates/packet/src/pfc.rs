//! Priority flow control (IEEE 802.1Qbb) state: ingress accounting per (port, priority) in the
//! shared buffer with headroom, XOFF/XON decisions, the pause state of each egress queue, the
//! pause time it accumulates, and the PFC watchdog.
//!
//! Admission follows the HPCC ns-3 switch MMU (alibaba-edu/High-Precision-Congestion-Control,
//! `switch-mmu.cc`): bytes from an ingress go to the shared pool while its usage is under the
//! XOFF threshold, beyond it into the ingress's headroom; a frame that fits neither is dropped
//! (headroom overflow). XOFF is sent when headroom starts to fill; XON once the headroom is empty
//! and the shared usage is `xon_offset` below the threshold.

use fabricsim_mech::params::{PfcParams, PfcThreshold};

pub const NOT: u64 = u64::MAX;

/// What `admit` decided for an arriving frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Accept,
    /// Accepted, and the ingress must send XOFF now.
    AcceptXoff,
    /// Headroom overflow.
    Drop,
}

/// One ingress (port, tc)'s accounting: what admission and release read, in one record.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Ingress {
    /// Bytes in the shared pool, bytes in headroom.
    shared: u64,
    hdrm: u64,
    /// The headroom this ingress may fill (its port's, `Pfc::headroom`).
    hdrm_cap: u64,
    /// XOFF asserted.
    xoff: bool,
}

/// One node's buffer: the shared-pool size (buffer minus reserved headroom) and the headroom
/// bytes in use.
#[derive(Clone, Copy, Debug)]
struct NodeBuf {
    shared_size: u64,
    hdrm: u64,
}

pub struct Pfc {
    pub params: PfcParams,
    ntc: usize,
    /// Per ingress port x tc.
    ing: Vec<Ingress>,
    /// When the next PAUSE refresh of an XOFF'd ingress is due (a stale refresh is ignored).
    pub refresh_at: Vec<u64>,
    /// Headroom per port (each lossless class gets this much).
    pub headroom: Vec<u64>,
    /// Per node.
    nodes: Vec<NodeBuf>,
    /// Per egress port x tc: paused until (ps; `NOT`: not paused), paused since, and the time
    /// of the last PAUSE seen (for the watchdog, whose state is the engine port's `wd_off`).
    pub paused_until: Vec<u64>,
    pub paused_since: Vec<u64>,
    pub last_pause_rx: Vec<u64>,
    /// Per port: time its egress spent paused (any class), XOFF sent from its ingress,
    /// PAUSE frames received.
    pub paused_ps: Vec<u64>,
    pub xoff_sent: Vec<u64>,
    pub pauses_rx: Vec<u64>,
    pub watchdog_trips: u64,
    /// `params.xoff` as the packet path computes it (one match per threshold).
    xoff: Xoff,
}

/// The XOFF threshold rule.
#[derive(Clone, Copy, Debug)]
enum Xoff {
    /// Bytes.
    Static(u64),
    /// A dynamic alpha of the form m / 2^s (0.125 = 1 / 2^3) with every m x shared size below
    /// 2^53: the threshold is then `(m * free) >> s`, equal to the float product (which is
    /// exact) without the float conversions.
    Dyadic(u64, u32),
    /// Any other dynamic alpha: `alpha * free`.
    Alpha(f64),
}

/// `alpha` as (m, s) with alpha = m / 2^s, when m x `max` stays below 2^53 (so
/// `alpha * x as f64` is exact for every x <= max and truncates to `(m * x) >> s`).
fn dyadic(alpha: f64, max: u64) -> Option<(u64, u32)> {
    (0..=32).find_map(|s| {
        let m = alpha * (1u64 << s) as f64;
        let exact = alpha >= 0.0 && m.fract() == 0.0 && m < (1u64 << 53) as f64;
        (exact && (m as u128) * (max as u128) < 1u128 << 53).then_some((m as u64, s))
    })
}

/// Entry `i` of an ingress (port x `ntc` + class) or node table, for the packet path, unchecked.
#[inline(always)]
fn at_mut<T>(v: &mut [T], i: usize) -> &mut T {
    debug_assert!(i < v.len(), "id {i} in a table of {}", v.len());
    // SAFETY: the packet path's callers (`engine::admission`, `engine::llfc`) pass the
    // engine's port, node and class ids, valid by `engine::tab`'s checks; `Pfc::new` sized `ing`
    // ports x `ntc` and `nodes` one per node (`LinkFc::new`: `headroom` per port, `shared_size`
    // per node).
    unsafe { v.get_unchecked_mut(i) }
}

impl Pfc {
    pub fn new(params: PfcParams, ntc: usize, headroom: Vec<u64>, shared_size: Vec<u64>) -> Pfc {
        let n = headroom.len();
        let max_shared = shared_size.iter().copied().max().unwrap_or(0);
        let xoff = match params.xoff {
            PfcThreshold::Static(b) => Xoff::Static(b),
            PfcThreshold::Dynamic(alpha) => match dyadic(alpha, max_shared) {
                Some((m, s)) => Xoff::Dyadic(m, s),
                None => Xoff::Alpha(alpha),
            },
        };
        Pfc {
            xoff,
            params,
            ntc,
            ing: (0..n * ntc)
                .map(|i| Ingress {
                    hdrm_cap: headroom[i / ntc],
                    ..Ingress::default()
                })
                .collect(),
            refresh_at: vec![NOT; n * ntc],
            headroom,
            nodes: shared_size
                .iter()
                .map(|&shared_size| NodeBuf {
                    shared_size,
                    hdrm: 0,
                })
                .collect(),
            paused_until: vec![NOT; n * ntc],
            paused_since: vec![NOT; n * ntc],
            last_pause_rx: vec![0; n * ntc],
            paused_ps: vec![0; n],
            xoff_sent: vec![0; n],
            pauses_rx: vec![0; n],
            watchdog_trips: 0,
        }
    }

    #[inline]
    pub fn lossless(&self, tc: u8) -> bool {
        self.params.lossless & (1 << tc) != 0
    }

    /// The XOFF threshold of node `node` whose buffer holds `used` bytes in all.
    #[inline]
    fn threshold(&self, node: usize, used: u64) -> u64 {
        self.threshold_at(self.shared_free(node, used))
    }

    /// The XOFF threshold when `free` bytes of the node's shared pool are free (`shared_free`).
    #[inline]
    fn threshold_at(&self, free: u64) -> u64 {
        match self.xoff {
            Xoff::Static(b) => b,
            Xoff::Dyadic(m, s) => (m * free) >> s,
            Xoff::Alpha(alpha) => (alpha * free as f64) as u64,
        }
    }

    /// Bytes of shared pool node `node` may still give out (lossy classes are admitted
    /// against this, so lossless headroom stays reserved).
    #[inline]
    fn shared_free(&self, node: usize, used: u64) -> u64 {
        debug_assert!(
            node < self.nodes.len(),
            "node {node} of {}",
            self.nodes.len()
        );
        // SAFETY: as in `at_mut`.
        let nb = unsafe { self.nodes.get_unchecked(node) };
        nb.shared_size.saturating_sub(used - nb.hdrm)
    }

    /// A lossless frame from ingress `ip` (on node `node`, whose buffer holds `used`). Inlined
    /// into the hop, as is `release` into the dequeue (a call saved and restored registers).
    #[inline(always)]
    pub(crate) fn admit(
        &mut self,
        ip: usize,
        node: usize,
        tc: usize,
        frame: u64,
        used: u64,
    ) -> Admit {
        let i = ip * self.ntc + tc;
        let free = self.shared_free(node, used);
        let thr = self.threshold_at(free);
        let g = at_mut(&mut self.ing, i);
        if g.shared + frame <= thr && free >= frame {
            g.shared += frame;
        } else if g.hdrm + frame <= g.hdrm_cap {
            g.hdrm += frame;
            at_mut(&mut self.nodes, node).hdrm += frame;
        } else {
            return Admit::Drop;
        }
        if !g.xoff && g.hdrm > 0 {
            g.xoff = true;
            self.xoff_sent[ip] += 1;
            return Admit::AcceptXoff;
        }
        Admit::Accept
    }

    /// A lossless frame from ingress `ip` leaves the buffer; true when XON is due.
    #[inline(always)]
    pub(crate) fn release(
        &mut self,
        ip: usize,
        node: usize,
        tc: usize,
        frame: u64,
        used: u64,
    ) -> bool {
        let i = ip * self.ntc + tc;
        let g = at_mut(&mut self.ing, i);
        let h = g.hdrm.min(frame);
        g.hdrm -= h;
        g.shared -= frame - h;
        let g = *g;
        at_mut(&mut self.nodes, node).hdrm -= h;
        if g.xoff
            && g.hdrm == 0
            && g.shared + self.params.xon_offset_bytes <= self.threshold(node, used)
        {
            at_mut(&mut self.ing, i).xoff = false;
            self.refresh_at[i] = NOT;
            return true;
        }
        false
    }

    /// Whether ingress `ip` has XOFF asserted on `tc` (a storm source asserts it forever).
    pub fn is_xoff(&self, ip: usize, tc: usize) -> bool {
        self.ing[ip * self.ntc + tc].xoff
    }

    pub fn set_xoff(&mut self, ip: usize, tc: usize, on: bool) {
        self.ing[ip * self.ntc + tc].xoff = on;
        if !on {
            self.refresh_at[ip * self.ntc + tc] = NOT;
        }
    }

    /// Egress `p` stops `tc` until `until`; true if it was not paused before.
    pub fn pause(&mut self, p: usize, tc: usize, now: u64, until: u64) -> bool {
        let i = p * self.ntc + tc;
        self.pauses_rx[p] += 1;
        self.last_pause_rx[i] = now;
        self.paused_until[i] = until;
        if self.paused_since[i] == NOT {
            self.paused_since[i] = now;
            return true;
        }
        false
    }

    /// Egress `p` resumes `tc`; true if it was paused.
    pub fn resume(&mut self, p: usize, tc: usize, now: u64) -> bool {
        let i = p * self.ntc + tc;
        self.paused_until[i] = NOT;
        if self.paused_since[i] == NOT {
            return false;
        }
        self.paused_ps[p] += now - self.paused_since[i];
        self.paused_since[i] = NOT;
        true
    }

    /// Time egress `p` has spent paused (any class) up to `now`, the open pauses counted to
    /// `now` (what a sample of the series reads; nothing is closed).
    pub fn paused_ps_at(&self, p: usize, now: u64) -> u64 {
        let open = self.paused_since[p * self.ntc..(p + 1) * self.ntc]
            .iter()
            .filter(|&&t| t != NOT)
            .map(|&t| now.saturating_sub(t))
            .sum::<u64>();
        self.paused_ps[p] + open
    }

    /// Closes the pause intervals still open at the end of a run.
    pub fn close(&mut self, now: u64) {
        for i in 0..self.paused_since.len() {
            if self.paused_since[i] != NOT {
                self.paused_ps[i / self.ntc] += now - self.paused_since[i];
                self.paused_since[i] = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::params::Headroom;

    #[test]
    fn dyadic_alpha_gives_the_float_threshold_exactly() {
        // IEEE 754: m x free (below 2^53) times 2^-s is exact, so the float product truncates
        // to (m x free) >> s; other alphas keep the float path.
        let max = 64 << 20;
        for alpha in [0.125, 0.5, 1.0, 2.0, 0.75, 1.0 / 1024.0] {
            let (m, s) = dyadic(alpha, max).expect("dyadic");
            let mut rng = fabricsim_core::rng::Rng::new(alpha.to_bits());
            for _ in 0..10_000 {
                let free = rng.below(max + 1);
                assert_eq!(
                    (m * free) >> s,
                    (alpha * free as f64) as u64,
                    "{alpha} {free}"
                );
            }
        }
        assert_eq!(dyadic(0.3, max), None);
        assert_eq!(dyadic(-0.5, max), None);
        assert_eq!(dyadic(0.125, u64::MAX), None);
    }

    fn pfc(xoff: u64, headroom: u64) -> Pfc {
        let params = PfcParams {
            lossless: 0b10,
            xoff: PfcThreshold::Static(xoff),
            xon_offset_bytes: 2000,
            headroom: Headroom::Bytes(headroom),
            peer_response: None,
            watchdog: None,
            deadlock_check: None,
        };
        Pfc::new(params, 2, vec![headroom; 2], vec![1 << 20])
    }

    #[test]
    fn xoff_when_headroom_starts_filling_xon_after_hysteresis() {
        // HPCC switch-mmu.cc: shared up to the threshold, then headroom; XOFF once headroom
        // holds bytes; XON when headroom is empty and shared <= threshold - resume offset.
        let mut p = pfc(5000, 3000);
        let mut used = 0;
        for _ in 0..5 {
            assert_eq!(p.admit(0, 0, 1, 1000, used), Admit::Accept);
            used += 1000;
        }
        assert_eq!(p.admit(0, 0, 1, 1000, used), Admit::AcceptXoff);
        used += 1000;
        assert_eq!(p.admit(0, 0, 1, 1000, used), Admit::Accept);
        used += 1000;
        assert_eq!(p.admit(0, 0, 1, 1000, used), Admit::Accept);
        used += 1000;
        // Headroom (3000) full: the next frame overflows it.
        assert_eq!(p.admit(0, 0, 1, 1000, used), Admit::Drop);
        for k in 0..5 {
            used -= 1000;
            // Headroom drains first (3 frames), then shared 5000 -> 3000 reaches XON.
            assert_eq!(p.release(0, 0, 1, 1000, used), k == 4, "release {k}");
        }
        assert!(!p.is_xoff(0, 1));
    }

    #[test]
    fn pause_time_accumulates_per_port() {
        let mut p = pfc(5000, 3000);
        assert!(p.pause(1, 1, 100, 500));
        assert!(!p.pause(1, 1, 200, 700));
        assert!(p.resume(1, 1, 400));
        assert!(!p.resume(1, 1, 450));
        assert_eq!(p.paused_ps[1], 300);
        assert_eq!(p.pauses_rx[1], 2);
    }
}
