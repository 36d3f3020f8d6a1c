//! Packets live in a slab (a `Vec` with a free list) and are named by `u32` ids; queues are
//! rings of ids (with each packet's frame size), so nothing allocates per packet once the rings
//! have grown to their working size, and queueing never touches the packets themselves.

use super::ring::{Ring, RingArena};
use fabricsim_core::prefetch::prefetch;

pub const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    /// Cumulative ACK: `psn` is the next PSN the receiver expects.
    Ack,
    /// Go-back-N NAK (PSN sequence error): resend from `psn`.
    Nak,
    /// Selective-repeat NACK: cumulative `psn` plus the out-of-order PSN received in `aux`.
    Sack,
    /// Congestion notification back to the source: a RoCEv2 CNP (DCQCN) or an InfiniBand
    /// BECN (IBA annex A10), for QP `qp`.
    Cnp,
    /// A data packet cut to its header by a trimming switch (UEC 1.0 3.6.17): `psn` names the
    /// packet, which the receiver NACKs.
    Trimmed,
}

pub const F_CORRUPT: u8 = 1;
/// Congestion Experienced (ECN CE), set by a marking policy.
pub const F_ECN: u8 = 2;
/// The last packet of a message.
pub const F_LAST: u8 = 4;
/// Stays on the static route under adaptive routing (message below the AR threshold).
pub const F_STATIC_ROUTE: u8 = 8;
/// A retransmission (trimming lets it grow its queue to 1.5 x the threshold, UEC 1.0 3.6.17).
pub const F_RETX: u8 = 16;
/// On a reply: the data packet it answers arrived ECN-marked or trimmed (REPS does not recycle
/// its entropy).
pub const F_ECE: u8 = 32;

/// 32 bytes, aligned so a packet never straddles two cache lines.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub struct Packet {
    pub qp: u32,
    pub psn: u32,
    pub aux: u32,
    /// Destination host.
    pub dst: u32,
    /// ECMP hash of the packet's flow (5-tuple).
    pub hash: u32,
    /// The port it arrives on next: set when its egress is chosen, while the packet is in cache
    /// (a queue entry keeps the ingress it came in on, `Queued::from`).
    pub port: u32,
    pub payload: u16,
    /// Bytes in buffers (headers + payload, padded to the minimum frame).
    pub frame: u16,
    pub kind: Kind,
    pub tc: u8,
    pub flags: u8,
    /// On a reply: the entropy index of the data packet it answers, REPS's echo (`aux` mod 256).
    pub ev: u8,
}

pub struct Slab {
    pkts: Vec<Packet>,
    free: Vec<u32>,
}

impl Slab {
    pub fn new() -> Slab {
        Slab {
            pkts: Vec::new(),
            free: Vec::new(),
        }
    }

    /// A slab with room for `n` packets, on huge pages when that is large (`hugepages`: the
    /// room is advised before any of it is touched, so the kernel can back it with 2 MB pages).
    pub fn with_capacity(n: usize) -> Slab {
        let pkts = Vec::with_capacity(n);
        super::hugepages::advise(&pkts);
        Slab {
            pkts,
            free: Vec::new(),
        }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.pkts[id as usize] = p;
                id
            }
            None => {
                if self.pkts.len() == self.pkts.capacity() {
                    self.grow();
                }
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    /// Doubles the slab's room, on huge pages once it is large (`hugepages`).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        self.pkts.reserve(self.pkts.len().max(1024));
        super::hugepages::advise(&self.pkts);
    }

    #[inline]
    pub fn free(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Hints the CPU to fetch packet `id` (the next event's) into cache.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        if let Some(p) = self.pkts.get(id as usize) {
            prefetch(p);
        }
    }

    #[inline]
    pub fn get(&self, id: u32) -> &Packet {
        &self.pkts[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.pkts[id as usize]
    }

    /// `get` without the bounds check, for the engine's hop (a check per access was 3 of its
    /// instructions).
    ///
    /// # Safety
    /// `id` came from this slab's `alloc` (the slab never shrinks, so it is in bounds).
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, id: u32) -> &Packet {
        debug_assert!((id as usize) < self.pkts.len());
        // SAFETY: the caller's contract.
        unsafe { self.pkts.get_unchecked(id as usize) }
    }

    /// `get_mut` without the bounds check.
    ///
    /// # Safety
    /// As `get_unchecked`.
    #[inline(always)]
    pub unsafe fn get_unchecked_mut(&mut self, id: u32) -> &mut Packet {
        debug_assert!((id as usize) < self.pkts.len());
        // SAFETY: the caller's contract.
        unsafe { self.pkts.get_unchecked_mut(id as usize) }
    }

    /// Packets allocated and not yet freed (in queues or on the wire).
    pub fn live(&self) -> usize {
        self.pkts.len() - self.free.len()
    }

    /// Slots ever allocated (the high-water mark of packets in the system).
    pub fn capacity_used(&self) -> usize {
        self.pkts.len()
    }
}

impl Default for Slab {
    fn default() -> Self {
        Slab::new()
    }
}

/// The storage of every `Fifo` of an engine (`ring::RingArena`).
pub type QueueArena = RingArena<Queued>;

/// A FIFO of packet ids with their frame sizes and the ports they came in on, and its byte
/// count, its entries in a `QueueArena`. The entry carries what a switch needs at dequeue
/// (buffer release, link-level flow control), so dequeuing never loads the packet itself, long
/// since evicted from the cache. 32 bytes, aligned so that a port's queues of two classes share
/// one cache line.
#[derive(Clone, Debug, Default)]
#[repr(C, align(32))]
pub struct Fifo {
    ring: Ring<Queued>,
    pub bytes: u64,
}

const _: () = assert!(std::mem::size_of::<Fifo>() == 32);

/// One queued packet.
#[derive(Clone, Copy, Debug)]
pub struct Queued {
    pub id: u32,
    /// Its ingress port (`NIL` at a NIC).
    pub from: u32,
    pub frame: u16,
}

impl Fifo {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    #[inline]
    pub fn push(&mut self, a: &mut QueueArena, id: u32, frame: u16) {
        self.push_from(a, id, frame, NIL);
    }

    /// Queues packet `id` that came in on port `from`.
    #[inline]
    pub fn push_from(&mut self, a: &mut QueueArena, id: u32, frame: u16, from: u32) {
        self.ring.push_back(a, Queued { id, from, frame });
        self.bytes += frame as u64;
    }

    /// The oldest packet and its frame size.
    #[inline]
    pub fn head(&self, a: &QueueArena) -> Option<(u32, u16)> {
        self.ring.front(a).map(|e| (e.id, e.frame))
    }

    #[inline]
    pub fn pop(&mut self, a: &QueueArena) -> Option<(u32, u16)> {
        self.pop_entry(a).map(|e| (e.id, e.frame))
    }

    /// The oldest entry, removed.
    #[inline]
    pub fn pop_entry(&mut self, a: &QueueArena) -> Option<Queued> {
        let e = self.ring.pop_front(a)?;
        self.bytes -= e.frame as u64;
        Some(e)
    }

    /// The queued entries, oldest first.
    pub fn entries<'a>(&'a self, a: &'a QueueArena) -> impl Iterator<Item = &'a Queued> + 'a {
        self.ring.iter(a)
    }
}
