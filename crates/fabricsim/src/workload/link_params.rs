//! Link parameters of the closed-form communication model, from the fabric profile and the
//! GPU in the catalog: the scale-out fabric per NIC and NVLink per GPU.
//!
//! Fabric: payload bandwidth of full-MTU packets at the profile's line rate, headers and wire
//! overhead ([`Profile::payload_bytes_per_s`]); per-message latency from the profile's `[comm]`
//! estimate (physics.md B). NVLink: the GPU's one-way NVLink bandwidth (catalog) and NCCL's
//! NVLink ring hop latency (tuning.cc v2.7, LL: 0.47 us; physics.md E6).

use crate::catalog::Gpu;
use crate::profile::Profile;

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

/// NCCL tuning.cc v2.7 NVLink ring hop latency, LL protocol (physics.md E6).
const NVLINK_LATENCY_S: f64 = 0.47e-6;

impl FabricParams {
    /// The links of `profile` with `gpu`'s NVLink.
    pub fn of(profile: &Profile, gpu: &Gpu) -> FabricParams {
        let (p, alpha_us) = (&profile.packet, profile.comm.message_latency_us);
        FabricParams {
            id: profile.id.clone(),
            net: LinkParams {
                bytes_per_s: profile.payload_bytes_per_s(),
                latency_s: alpha_us * 1e-6,
            },
            nvlink: LinkParams {
                bytes_per_s: gpu.nvlink_one_way_bytes_per_s(),
                latency_s: NVLINK_LATENCY_S,
            },
            source: format!(
                "profile {}: {} Gb/s, {} B MTU + {} B headers and wire overhead, estimate {alpha_us} us per message (not fitted); {} NVLink {} GB/s",
                profile.id,
                profile.ports.rate_gbps,
                p.mtu_bytes,
                p.header_bytes + p.wire_overhead_bytes,
                gpu.id,
                gpu.nvlink_gbyteps
            ),
        }
    }
}
