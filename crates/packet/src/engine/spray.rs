//! Spraying in the packet engine (`sim::route::spray`): the sender NIC gives each data packet
//! its entropy index (carried in `Packet::aux`, unused by data otherwise), and the hop offsets
//! the ECMP choice by it; ACKs, NAKs, SACKs and CNPs stay on the flow's ECMP path.

use super::Engine;
use crate::packet::{Kind, Packet};
use fabricsim_mech::params::{RoutePolicy, SprayPick};
use fabricsim_mech::route::spray;

impl Engine<'_> {
    /// The entropy index of data packet `seq` sent by NIC `h` (0 unless spraying).
    #[inline(always)]
    pub(super) fn spray_entropy(&mut self, h: usize, seq: u32) -> u32 {
        match self.p.routing {
            RoutePolicy::Spray(s) => match s.pick {
                SprayPick::RoundRobin => s.round_robin(seq),
                SprayPick::Random => s.random(&mut self.spray_rngs[h]),
            },
            _ => 0,
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
