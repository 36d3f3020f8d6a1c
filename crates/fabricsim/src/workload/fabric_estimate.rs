//! Per-fabric link parameters for the closed-form communication model, until fabric profiles
//! and packet-level fits replace them. Every number here is an ESTIMATE.
//!
//! Per profile id (the four of issue 2): the NIC line rate, the payload share of a full MTU
//! packet, and one per-message latency (alpha). Alpha is the family's small-message
//! end-to-end RDMA latency through a fabric (physics.md B: IB NDR 1.0-1.3 us, RoCE 400G
//! 3.5-5.0 us, secondary source quantacloud.net; the upper ends are used); NCCL's software
//! overhead per step is not included. NVLink uses the GPU's one-way NVLink bandwidth and
//! NCCL's NVLink ring hop latency (tuning.cc v2.7, LL: 0.47 us; physics.md E6).

use super::gpu::GpuSpec;
use crate::error::InputError;

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
    pub id: String,
    pub net: LinkParams,
    pub nvlink: LinkParams,
    /// Where the numbers come from, shown in reports.
    pub source: String,
}

/// (profile id, line rate Gb/s, header bytes per 4096-byte MTU packet, alpha us).
/// Headers: IB LRH+BTH+ICRC+VCRC = 26 B; RoCEv2 Eth+IPv4+UDP+BTH+ICRC+FCS = 62 B plus 20 B
/// preamble and inter-frame gap (defaults.toml [nic.common], arithmetic).
const PROFILES: [(&str, f64, f64, f64); 4] = [
    ("ib-ndr", 400.0, 26.0, 1.3),
    ("ib-xdr", 800.0, 26.0, 1.3),
    ("roce-400g", 400.0, 82.0, 5.0),
    ("roce-800g", 800.0, 82.0, 5.0),
];

/// MTU payload per packet (IB and jumbo RoCE: 4096 B; defaults.toml [nic.common]).
const MTU_PAYLOAD: f64 = 4096.0;

/// NCCL tuning.cc v2.7 NVLink ring hop latency, LL protocol (physics.md E6).
const NVLINK_LATENCY_S: f64 = 0.47e-6;

impl FabricParams {
    pub fn profile_ids() -> Vec<&'static str> {
        PROFILES.iter().map(|p| p.0).collect()
    }

    /// The estimate for `profile` with `gpu`'s NVLink; `key` names the flag or file key.
    pub fn estimate(key: &str, profile: &str, gpu: &GpuSpec) -> Result<FabricParams, InputError> {
        let &(id, gbps, headers, alpha_us) =
            PROFILES.iter().find(|p| p.0 == profile).ok_or_else(|| {
                InputError::flag(
                    key,
                    profile,
                    "unknown fabric profile",
                    FabricParams::profile_ids().join(", "),
                )
            })?;
        Ok(FabricParams {
            id: id.to_string(),
            net: LinkParams {
                bytes_per_s: gbps * 1e9 / 8.0 * MTU_PAYLOAD / (MTU_PAYLOAD + headers),
                latency_s: alpha_us * 1e-6,
            },
            nvlink: LinkParams {
                bytes_per_s: gpu.nvlink_one_way_bytes_per_s(),
                latency_s: NVLINK_LATENCY_S,
            },
            source: format!(
                "estimate: {gbps} Gb/s line rate, {headers} B headers per 4096 B, {alpha_us} us per message (not fitted)"
            ),
        })
    }
}
