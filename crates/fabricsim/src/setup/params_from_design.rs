//! The packet engine's parameters for a scenario's design: the one place where a fabric
//! profile (packet format, family) and the catalog's switch and NIC become [`SimParams`].
//!
//! Line rates, cable lengths and propagation delays are not here: they are on the topology's
//! links, built from the same design. The profile gives the family's base parameters, the packet
//! format, flow and congestion control ([`fabricsim_input::profile_fc::from_profile`], tuned or untuned); the
//! catalog gives the latencies and the switch buffer. The transport is the RC default, go-back-N
//! (NAK on a PSN sequence error, resend from the last acked PSN: IRN, Mittal et al. SIGCOMM
//! 2018), unless the profile's routing reorders packets (adaptive routing needs the
//! out-of-order-tolerant receiver).

use fabricsim_core::error::InputError;
use fabricsim_core::units::Time;
use fabricsim_input::scenario::Design;
use fabricsim_mech::params::SimParams;

/// Picoseconds of a catalog latency in nanoseconds (fractional ns kept).
fn ns(latency_ns: f64) -> Time {
    Time::from_ps((latency_ns * 1e3).round() as u64)
}

/// [`SimParams`] for `d`: its profile's MTU, header and wire bytes, its switch's latency and
/// buffer (the family default when the catalog publishes no buffer), its NIC's latency, and
/// `[sim]`'s link-level retry (`Design::llr`).
pub fn params_from_design(d: &Design, tuned: bool) -> Result<SimParams, InputError> {
    let base = fabricsim_input::profile_fc::sim_params(&d.profile, tuned)?;
    let buffer = if d.switch.buffer_mb > 0.0 {
        (d.switch.buffer_mb * 1024.0 * 1024.0).round() as u64
    } else {
        base.switch_buffer_bytes
    };
    // The profile's `[congestion] qps_per_connection` (NCCL's default, cited there) unless
    // `[nccl] ib_qps_per_connection` sets NCCL_IB_QPS_PER_CONNECTION: one field, `cc`'s.
    let mut cc = base.cc.clone();
    cc.qps_per_connection = d
        .nccl
        .ib_qps_per_connection
        .unwrap_or(cc.qps_per_connection);
    cc.split_data_on_qps = d.nccl.split_data_on_qps();
    Ok(SimParams {
        cc,
        switch_latency: ns(d.switch.latency_ns),
        nic_latency: ns(d.nic.latency_ns),
        switch_buffer_bytes: buffer,
        llr: d.llr,
        ..base
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_input::test_util::scenario;
    use fabricsim_mech::params::{RoutePolicy, Transport};

    fn design(flags: &[(&str, &str)]) -> Design {
        scenario(flags).design().unwrap()
    }

    #[test]
    fn roce_and_ib_take_the_profile_packet_and_catalog_latencies() {
        // data/profiles/roce-400g.toml: 4096 B MTU, 62 B headers, 20 B preamble+IFG;
        // data/catalog: sn5600 600 ns and 128 MB, cx7 600 ns.
        let r = params_from_design(&design(&[("--fabric", "roce-400g")]), true).unwrap();
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
        let i = params_from_design(&design(&[("--fabric", "ib-ndr")]), true).unwrap();
        assert_eq!((i.header_bytes, i.wire_overhead_bytes), (26, 0));
        assert_eq!(i.switch_latency, Time::from_ns(130));
        // ib-ndr.toml [routing] policy = "adaptive" (NVIDIA AR, D-mod-K fallback).
        assert_eq!(i.routing, RoutePolicy::Adaptive);
        // Adaptive routing reorders packets: the profile pairs it with the out-of-order-tolerant
        // receiver (sim::cc_profile), so IB runs use selective repeat; RoCE keeps go-back-N.
        assert_eq!(i.transport, Transport::SelectiveRepeat);
        assert_eq!(r.transport, Transport::GoBackN);
        assert!(i.validate().is_ok() && r.validate().is_ok());
        // The scenario's MTU override reaches the engine.
        let small = params_from_design(&design(&[("--fabric", "ib-ndr"), ("--mtu", "1024")]), true)
            .unwrap();
        assert_eq!(small.mtu_bytes, 1024);
    }

    /// uec-400g / uec-800g: lossy (no PFC), sprayed per packet over 256 entropies with the
    /// out-of-order receiver, UDP port 4793, the catalog's Tomahawk and UEC NICs, NSCC with
    /// the spec's parameters.
    #[test]
    fn uec_profiles_are_lossy_sprayed_ethernet() {
        use fabricsim_mech::params::{FlowControl, Spray, SprayPick};
        for fabric in ["uec-400g", "uec-800g"] {
            let d = design(&[("--fabric", fabric)]);
            let p = params_from_design(&d, true).unwrap();
            assert_eq!(p.flow_control, FlowControl::None, "{fabric}");
            assert_eq!(
                p.routing,
                RoutePolicy::Spray(Spray {
                    entropies: 256,
                    pick: SprayPick::Random
                })
            );
            assert_eq!(p.transport, Transport::Rud, "{fabric}");
            assert_eq!((p.udp_dport, p.header_bytes), (4793, 64));
            assert_eq!(
                p.cc.algo,
                fabricsim_mech::cc_algo::CcAlgo::Nscc(Default::default()),
                "{fabric}"
            );
            assert!(p.validate().is_ok());
        }
    }
    /// roce-400g-ar / roce-800g-ar (Spectrum-X style): roce-400g's PFC, ECN and DCQCN with
    /// per-packet adaptive routing and the unordered (direct data placement) receiver; the
    /// plain RoCE profiles stay per-flow ECMP with go-back-N.
    #[test]
    fn roce_ar_profiles_route_per_packet_and_place_out_of_order() {
        use fabricsim_mech::params::FlowControl;
        let base = params_from_design(&design(&[("--fabric", "roce-400g")]), true).unwrap();
        for fabric in ["roce-400g-ar", "roce-800g-ar"] {
            let p = params_from_design(&design(&[("--fabric", fabric)]), true).unwrap();
            assert_eq!(p.routing, RoutePolicy::Adaptive, "{fabric}");
            assert_eq!(
                p.transport.under(p.routing),
                Transport::Unordered,
                "{fabric}"
            );
            assert_eq!(p.cc.ar_threshold_bytes, 0, "{fabric}");
            assert!(matches!(p.flow_control, FlowControl::Pfc(_)), "{fabric}");
            assert_eq!(p.cc.algo, base.cc.algo, "{fabric}: roce-400g's DCQCN");
            assert!(p.validate().is_ok());
        }
        assert_eq!(base.routing, RoutePolicy::EcmpFlowHash);
    }
}
