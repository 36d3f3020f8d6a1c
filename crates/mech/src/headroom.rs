//! PFC headroom per (port, priority) by the SONiC/NVIDIA formula (sonic-swss
//! `cfgmgr/buffer_headroom_mellanox.lua`):
//! `propagation = MTU + bytes_on_cable + 2 x gearbox + mac_phy_delay + peer_response`,
//! `xoff = MTU + propagation x cell_occupancy` (cell occupancy 1 here), rounded up to 1 KB;
//! `bytes_on_cable` covers the cable twice (the PAUSE going up, the data still coming down).

use crate::params::{Headroom, PfcParams, SimParams};
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{BitRate, Time};

/// One pause quantum: 512 bit times (IEEE 802.1Qbb).
pub const QUANTUM_BITS: u64 = 512;
/// The largest pause a PAUSE frame asks for (16-bit quanta field).
pub const MAX_QUANTA: u16 = u16::MAX;
/// A PAUSE (MAC control) frame: the 64-byte minimum frame (IEEE 802.3 31B).
pub const PAUSE_FRAME_BYTES: u32 = 64;

/// The peer's response time in pause quanta for a port rate (IEEE 802.3 31B.3.7 as tabulated
/// by sonic-swss: 10G 67, 25G 80, 100G 394, 200G 453, 400G and 800G 905; IEEE 802.3 31B.3.7).
pub fn peer_response_quanta(rate: BitRate) -> u64 {
    let g = rate.bps() / 1_000_000_000;
    match g {
        0..=10 => 67,
        11..=25 => 80,
        26..=100 => 394,
        101..=200 => 453,
        _ => 905,
    }
}

/// The peer response as a time at `rate`.
pub fn peer_response(rate: BitRate) -> Time {
    quanta_time(peer_response_quanta(rate), rate)
}

/// The duration of `quanta` pause quanta at `rate`.
pub fn quanta_time(quanta: u64, rate: BitRate) -> Time {
    Time((quanta * QUANTUM_BITS * 1_000_000_000_000).div_ceil(rate.bps().max(1)))
}

/// The terms of the formula for one port, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeadroomInputs {
    /// Largest frame on the wire (the formula's MTU: the port's L2 frame, overheads included).
    pub mtu_bytes: u64,
    pub rate: BitRate,
    /// One-way propagation delay of the cable.
    pub cable_delay: Time,
    /// Gearbox delay (0 without a gearbox).
    pub gearbox_bytes: u64,
    /// MAC/PHY and pipeline delay before the buffer accounts a frame, in bytes at line rate.
    pub mac_phy_bytes: u64,
    /// The peer's response time, in bytes at line rate.
    pub peer_response_bytes: u64,
}

/// The headroom of switch port `port` per lossless priority: the formula on its link with this
/// model's MAC/PHY terms (the pipeline before the MMU accounts a frame, and the PAUSE frame's
/// own wire time) and its peer's response, or the profile's fixed bytes (`Headroom`).
pub fn port_headroom(topo: &Topology, p: &SimParams, pp: &PfcParams, port: usize) -> u64 {
    let link = &topo.links[topo.ports[port].link.idx()];
    // The peer is the sender whose response matters.
    let peer_rate = topo.links[topo.ports[topo.ports[port].peer.idx()].link.idx()].rate;
    let resp = pp.peer_response.unwrap_or_else(|| peer_response(peer_rate));
    let pause_wire = (PAUSE_FRAME_BYTES + p.wire_overhead_bytes) as u64;
    let formula = sonic_headroom(&HeadroomInputs {
        mtu_bytes: p.mtu_frame_wire_bytes(),
        rate: link.rate,
        cable_delay: link.delay,
        gearbox_bytes: 0,
        mac_phy_bytes: link.rate.bytes_in(p.switch_latency) + pause_wire,
        peer_response_bytes: link.rate.bytes_in(resp),
    });
    match pp.headroom {
        Headroom::Formula { scale } => (formula as f64 * scale) as u64,
        Headroom::Bytes(b) => b,
    }
}

/// The headroom in bytes, rounded up to 1 KB as SONiC does.
pub fn sonic_headroom(i: &HeadroomInputs) -> u64 {
    let bytes_on_cable = i.rate.bytes_in(i.cable_delay * 2);
    let propagation = i.mtu_bytes
        + bytes_on_cable
        + 2 * i.gearbox_bytes
        + i.mac_phy_bytes
        + i.peer_response_bytes;
    (i.mtu_bytes + propagation).div_ceil(1024) * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formula by hand (sonic-swss `buffer_headroom_mellanox.lua`), MTU 9216, mac_phy 0,
    /// 5.05 ns/m:
    /// 400G 100 m = 127 KB, 400G 3 m = 78 KB, 800G 100 m = 177 KB, 100G 100 m = 56 KB.
    #[test]
    fn reproduces_the_derived_headroom_table() {
        for (gbps, m, kb) in [
            (400, 100, 127),
            (400, 3, 78),
            (800, 100, 177),
            (100, 100, 56),
        ] {
            let rate = BitRate::gbps(gbps);
            let h = sonic_headroom(&HeadroomInputs {
                mtu_bytes: 9216,
                rate,
                cable_delay: Time((m as f64 * 5050.5) as u64),
                gearbox_bytes: 0,
                mac_phy_bytes: 0,
                peer_response_bytes: peer_response_quanta(rate) * 64,
            });
            let got = h as f64 / 1000.0;
            assert!(
                (got - kb as f64).abs() <= 1.5,
                "{gbps}G {m} m: {got} KB vs {kb} KB"
            );
        }
    }

    #[test]
    fn pause_quanta_are_512_bit_times() {
        // 51.2 ns per quantum at 10G (IEEE 802.1Qbb).
        assert_eq!(quanta_time(1, BitRate::gbps(10)), Time(51_200));
        // 905 quanta at 400G = 57,920 bytes = 1.1584 us.
        assert_eq!(peer_response(BitRate::gbps(400)), Time(1_158_400));
    }
}
