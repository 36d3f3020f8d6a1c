//! Spraying in the packet engine (`sim::route::spray`): the sender NIC gives each data packet
//! its entropy index (carried in `Packet::aux`, unused by data otherwise), and the hop offsets
//! the ECMP choice by it; ACKs, NAKs, SACKs and CNPs stay on the flow's ECMP path. Under REPS
//! (`sim::route::reps`) each reply echoes its data packet's entropy (`Packet::ev`, `F_ECE` when
//! it came marked or trimmed) and the sender recycles the unmarked ones.

use super::Engine;
use crate::packet::{F_ECE, Kind, Packet};
use fabricsim_mech::params::{RoutePolicy, SprayPick};
use fabricsim_mech::route::spray;

impl Engine<'_> {
    /// The entropy index of data packet `seq` of QP `qi` sent by NIC `h` (0 unless spraying).
    #[inline(always)]
    pub(super) fn spray_entropy(&mut self, h: usize, qi: u32, seq: u32) -> u32 {
        match self.p.routing {
            RoutePolicy::Spray(s) => match s.pick {
                SprayPick::RoundRobin => s.round_robin(seq),
                SprayPick::Random => s.random(&mut self.spray_rngs[h]),
                SprayPick::Reps => self.reps[qi as usize].next(s, &mut self.spray_rngs[h]),
            },
            _ => 0,
        }
    }

    /// A reply `pk` reached the sender of QP `qi`: REPS caches its entropy unless it came back
    /// marked or trimmed.
    #[inline]
    pub(super) fn reps_ack(&mut self, qi: u32, pk: &Packet) {
        if let RoutePolicy::Spray(s) = self.p.routing
            && s.pick == SprayPick::Reps
        {
            self.reps[qi as usize].on_ack(pk.ev, pk.flags & F_ECE != 0);
        }
    }

    /// The sprayed candidate for data packet `pk` among `n`, `k` being the ECMP choice.
    #[inline]
    pub(super) fn spray_pick(&self, pk: &Packet, k: usize, n: usize) -> usize {
        if pk.kind == Kind::Data {
            spray::pick(k, pk.aux, n)
        } else {
            k
        }
    }
}
