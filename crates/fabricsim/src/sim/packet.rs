//! Packets live in a slab (a `Vec` with a free list) and are named by `u32` ids; queues are
//! intrusive FIFOs threaded through the packets, so nothing allocates per packet.

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
}

pub const F_CORRUPT: u8 = 1;
/// Congestion Experienced (ECN CE), set by a marking policy.
pub const F_ECN: u8 = 2;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Next packet in the FIFO this packet sits in.
    pub next: u32,
    pub qp: u32,
    pub psn: u32,
    pub aux: u32,
    /// Destination host.
    pub dst: u32,
    /// ECMP hash of the packet's flow (5-tuple).
    pub hash: u32,
    pub payload: u32,
    /// Bytes in buffers (headers + payload, padded to the minimum frame).
    pub frame: u32,
    /// The port it arrives on (on the wire) or arrived on (in a switch queue): the ingress of
    /// its current hop, for ingress accounting by link-level flow control.
    pub port: u32,
    pub kind: Kind,
    pub tc: u8,
    pub flags: u8,
}

pub struct Slab {
    pkts: Vec<Packet>,
    free: u32,
    live: u32,
}

impl Slab {
    pub fn new() -> Slab {
        Slab {
            pkts: Vec::new(),
            free: NIL,
            live: 0,
        }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        if self.free != NIL {
            let id = self.free;
            self.free = self.pkts[id as usize].next;
            self.pkts[id as usize] = p;
            id
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as u32
        }
    }

    #[inline]
    pub fn free(&mut self, id: u32) {
        self.live -= 1;
        self.pkts[id as usize].next = self.free;
        self.free = id;
    }

    /// Hints the CPU to fetch packet `id` (the next event's) into cache.
    #[inline]
    pub fn prefetch(&self, id: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(p) = self.pkts.get(id as usize) {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // SAFETY: a prefetch is a hint that never faults; SSE is part of x86_64.
            unsafe { _mm_prefetch::<_MM_HINT_T0>((p as *const Packet).cast::<i8>()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = id;
    }

    #[inline]
    pub fn get(&self, id: u32) -> &Packet {
        &self.pkts[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.pkts[id as usize]
    }

    /// Packets allocated and not yet freed (in queues or on the wire).
    pub fn live(&self) -> u32 {
        self.live
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

/// A FIFO of packets linked through `Packet::next`, with its byte count.
#[derive(Clone, Copy, Debug)]
pub struct Fifo {
    pub head: u32,
    pub tail: u32,
    pub len: u32,
    pub bytes: u64,
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo {
            head: NIL,
            tail: NIL,
            len: 0,
            bytes: 0,
        }
    }
}

impl Fifo {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    #[inline]
    pub fn push(&mut self, slab: &mut Slab, id: u32) {
        let frame = {
            let p = slab.get_mut(id);
            p.next = NIL;
            p.frame
        };
        if self.tail == NIL {
            self.head = id;
        } else {
            slab.get_mut(self.tail).next = id;
        }
        self.tail = id;
        self.len += 1;
        self.bytes += frame as u64;
    }

    #[inline]
    pub fn pop(&mut self, slab: &Slab) -> Option<u32> {
        if self.head == NIL {
            return None;
        }
        let id = self.head;
        let p = slab.get(id);
        self.head = p.next;
        if self.head == NIL {
            self.tail = NIL;
        }
        self.len -= 1;
        self.bytes -= p.frame as u64;
        Some(id)
    }
}
