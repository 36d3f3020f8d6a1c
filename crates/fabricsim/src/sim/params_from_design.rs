//! The packet engine's parameters for a scenario's design: the one place where a fabric
//! profile (packet format, family) and the catalog's switch and NIC become [`SimParams`].
//!
//! Line rates, cable lengths and propagation delays are not here: they are on the topology's
//! links, built from the same design. The family picks the base constructor (RoCEv2: ECMP on
//! the 5-tuple hash, lossy Ethernet framing with a 64 B minimum frame; InfiniBand: static
//! destination routing); the profile overrides the packet format and the catalog the
//! latencies and the switch buffer. The transport is the RC default, go-back-N
//! (defaults.toml `[rc_transport] loss_recovery`).

use super::params::SimParams;
use crate::profile::Family;
use crate::scenario::Design;
use crate::units::Time;

/// Picoseconds of a catalog latency in nanoseconds (fractional ns kept).
fn ns(latency_ns: f64) -> Time {
    Time::from_ps((latency_ns * 1e3).round() as u64)
}

/// [`SimParams`] for `d`: its profile's MTU, header and wire bytes, its switch's latency and
/// buffer (the family default when the catalog publishes no buffer), its NIC's latency.
pub fn params_from_design(d: &Design) -> SimParams {
    let base = match d.profile.family {
        Family::Roce => SimParams::roce(),
        Family::Infiniband => SimParams::ib(),
    };
    let p = &d.profile.packet;
    let buffer = if d.switch.buffer_mb > 0.0 {
        (d.switch.buffer_mb * 1024.0 * 1024.0).round() as u64
    } else {
        base.switch_buffer_bytes
    };
    SimParams {
        mtu_bytes: p.mtu_bytes,
        header_bytes: p.header_bytes,
        wire_overhead_bytes: p.wire_overhead_bytes,
        switch_latency: ns(d.switch.latency_ns),
        nic_latency: ns(d.nic.latency_ns),
        switch_buffer_bytes: buffer,
        ..base
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::sim::params::{RoutePolicy, Transport};

    fn design(flags: &[(&str, &str)]) -> Design {
        let mut s = Scenario::defaults();
        let pairs: Vec<_> = flags
            .iter()
            .map(|(f, v)| (f.to_string(), v.to_string()))
            .collect();
        s.apply_flags(&pairs).unwrap();
        s.design().unwrap()
    }

    #[test]
    fn roce_and_ib_take_the_profile_packet_and_catalog_latencies() {
        // data/profiles/roce-400g.toml: 4096 B MTU, 62 B headers, 20 B preamble+IFG;
        // data/catalog: sn5600 600 ns and 128 MB, cx7 600 ns.
        let r = params_from_design(&design(&[("--fabric", "roce-400g")]));
        assert_eq!(
            (r.mtu_bytes, r.header_bytes, r.wire_overhead_bytes),
            (4096, 62, 20)
        );
        assert_eq!(r.switch_latency, Time::from_ns(600));
        assert_eq!(r.nic_latency, Time::from_ns(600));
        assert_eq!(r.switch_buffer_bytes, 128 << 20);
        assert_eq!(r.routing, RoutePolicy::EcmpFlowHash);
        assert_eq!(r.min_frame_bytes, 64);
        // data/profiles/ib-ndr.toml: 26 B headers, no wire overhead; qm9700 130 ns.
        let i = params_from_design(&design(&[("--fabric", "ib-ndr")]));
        assert_eq!((i.header_bytes, i.wire_overhead_bytes), (26, 0));
        assert_eq!(i.switch_latency, Time::from_ns(130));
        assert_eq!(i.routing, RoutePolicy::DestStatic);
        assert_eq!(i.transport, Transport::GoBackN);
        assert!(i.validate().is_ok() && r.validate().is_ok());
        // The scenario's MTU override reaches the engine.
        let small = params_from_design(&design(&[("--fabric", "ib-ndr"), ("--mtu", "1024")]));
        assert_eq!(small.mtu_bytes, 1024);
    }
}
