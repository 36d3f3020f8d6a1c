//! Link parameters of the closed-form communication model, from the design: the scale-out
//! fabric per GPU and NVLink per GPU.
//!
//! Fabric: payload bandwidth of full-MTU packets at the profile's line rate, headers and wire
//! overhead ([`fabricsim_input::profile::Profile::payload_bytes_per_s`]), shared by the GPUs of a server
//! when it has fewer NICs than GPUs (every GPU communicates at once in a training step);
//! per-message latency from the profile's `[comm]` estimate (quantacloud.net, unverified). NVLink:
//! the
//! catalog GPU's one-way NVLink bandwidth and NCCL's NVLink ring hop latency (tuning.cc v2.7,
//! LL: 0.47 us).

use fabricsim_input::scenario::Design;

/// Bandwidth and per-message latency of one kind of link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkParams {
    /// Payload bytes per second one GPU can send (one direction).
    pub bytes_per_s: f64,
    pub latency_s: f64,
}

/// The two kinds of link a collective uses: the scale-out fabric (per NIC) and NVLink.
#[derive(Clone, Debug, PartialEq)]
pub struct FabricParams {
    /// Fabric profile id.
    pub id: String,
    pub net: LinkParams,
    pub nvlink: LinkParams,
    /// Where the numbers come from, shown in reports.
    pub source: String,
}

/// NCCL tuning.cc v2.7 NVLink ring hop latency, LL protocol.
const NVLINK_LATENCY_S: f64 = 0.47e-6;

impl FabricParams {
    /// The links of `d`: its fabric profile, NICs per server and GPU.
    pub fn of(d: &Design) -> FabricParams {
        let (profile, gpu) = (&d.profile, &d.gpu);
        let (p, alpha_us) = (&profile.packet, profile.comm.message_latency_us);
        let (nics, gpus) = (d.spec.nics_per_node, d.spec.gpus_per_node);
        // A GPU's share of its server's NIC ports: below 1 when GPUs share NICs, 2 for a GB300
        // whose ConnectX-8 runs as 2 x 400G (NCCL drives every port; `Placement::host_for`).
        let nic_share = nics as f64 / gpus as f64;
        FabricParams {
            id: profile.id.clone(),
            net: LinkParams {
                bytes_per_s: profile.payload_bytes_per_s() * nic_share,
                latency_s: alpha_us * 1e-6,
            },
            nvlink: LinkParams {
                bytes_per_s: gpu.nvlink_one_way_bytes_per_s(),
                latency_s: NVLINK_LATENCY_S,
            },
            source: format!(
                "profile {}: {} Gb/s, {} B MTU + {} B headers and wire overhead, estimate {alpha_us} us per message (not fitted){}; {} NVLink {} GB/s",
                profile.id,
                profile.ports.rate_gbps,
                p.mtu_bytes,
                p.header_bytes + p.wire_overhead_bytes,
                match nics.cmp(&gpus) {
                    std::cmp::Ordering::Less =>
                        format!("; {nics} NICs shared by {gpus} GPUs per server"),
                    std::cmp::Ordering::Equal => String::new(),
                    std::cmp::Ordering::Greater => format!("; {} NIC ports per GPU", nics / gpus),
                },
                gpu.id,
                gpu.nvlink_gbyteps
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_input::test_util::scenario;

    fn params(flags: &[(&str, &str)]) -> FabricParams {
        FabricParams::of(&scenario(flags).design().unwrap())
    }

    #[test]
    fn fabric_bandwidth_is_the_line_rate_less_per_packet_overhead() {
        // RoCEv2 at 400 Gb/s: 4096 B of payload per 4096 + 62 + 20 wire bytes (IEEE 802.3,
        // RoCEv2 headers); IB NDR: 4096 per 4096 + 26; NVLink 900 GB/s bidirectional, half each way.
        let roce = params(&[("--fabric", "roce-400g")]);
        assert!((roce.net.bytes_per_s - 50e9 * 4096.0 / 4178.0).abs() < 1.0);
        assert!((roce.net.latency_s - 5.0e-6).abs() < 1e-15);
        assert_eq!(roce.nvlink.bytes_per_s, 450e9);
        let ib = params(&[("--fabric", "ib-ndr"), ("--gpu", "b200")]);
        assert!((ib.net.bytes_per_s - 50e9 * 4096.0 / 4122.0).abs() < 1.0);
        assert_eq!(ib.nvlink.bytes_per_s, 900e9);
        // A smaller MTU costs more headers per byte.
        let small = params(&[("--fabric", "ib-ndr"), ("--mtu", "1024")]);
        assert!((small.net.bytes_per_s - 50e9 * 1024.0 / 1050.0).abs() < 1.0);
    }

    #[test]
    fn gpus_share_the_nics_of_a_server_with_fewer_nics() {
        let one_each = params(&[]);
        let shared = params(&[("--nics-per-node", "4")]);
        assert_eq!(shared.net.bytes_per_s, one_each.net.bytes_per_s / 2.0);
        assert!(shared.source.contains("4 NICs shared by 8 GPUs"));
        // A GB300 NVL72's ConnectX-8 as 2 x 400G: each GPU has two ports' bandwidth.
        let nvl = params(&[("--server", "gb300-nvl72"), ("--gpus", "144")]);
        let two = params(&[
            ("--server", "gb300-nvl72"),
            ("--gpus", "144"),
            ("--nics-per-node", "144"),
        ]);
        assert_eq!(two.net.bytes_per_s, 2.0 * nvl.net.bytes_per_s);
        assert!(two.source.contains("2 NIC ports per GPU"), "{}", two.source);
        // More NIC ports than the server model has slots is refused (`scenario::compat`).
        let more = scenario(&[("--nics-per-node", "16")]).design().unwrap_err();
        assert!(more.to_string().contains("NIC slots"), "{more}");
    }
}
