//! `[nccl]`: NCCL's connection structure, the environment variables of the same names (the key
//! is the variable without `NCCL_`, lower case). A collective runs on channels, each channel its
//! own network connection per peer (its own QPs, so its own UDP source ports and ECMP paths),
//! each connection with `ib_qps_per_connection` QPs.
//!
//! ```toml
//! [nccl]
//! min_nchannels = 0              # NCCL_MIN_NCHANNELS (default 0: no floor)
//! max_nchannels = 64             # NCCL_MAX_NCHANNELS (default MAXCHANNELS, 64)
//! ib_qps_per_connection = 1      # NCCL_IB_QPS_PER_CONNECTION (default: the profile's, 1)
//! ib_split_data_on_qps = 0       # NCCL_IB_SPLIT_DATA_ON_QPS (default 0 since NCCL 2.20.3)
//! nchannels_per_net_peer = 4     # NCCL_NCHANNELS_PER_NET_PEER (default: derived, see below)
//! ```
//!
//! Point-to-point channels per network peer (all-to-all, send/recv; NCCL src/graph/paths.cc
//! `ncclTopoGetNchannels`): NCCL_NCHANNELS_PER_NET_PEER when set; unset, NCCL starts from 2
//! (raised to the NICs a GPU needs to match its bandwidth) and halves it while it times the
//! ranks exceeds 4 x the p2p channels (`ncclTopoComputeP2pChannels`: the collective channels,
//! to a power of 2). Unset, fabricsim runs that halving from one channel per NIC of the server
//! (the start an ESTIMATE; `workload::collective::p2p_channels_per_peer`).
//!
//! Ring and tree channels (NCCL src/graph/connect.cc `ncclTopoPostset`): the graph search gives
//! one ring per NIC (`Nccl::search_channels`), `ncclTopoPostset` doubles them
//! (`nChannels * 2`), then caps them at NCCL_MAX_NCHANNELS and raises them to
//! NCCL_MIN_NCHANNELS (`copyChannels`); the tree uses the ring's count (init.cc: `comm->nChannels
//! = min(treeGraph->nChannels, ringGraph->nChannels)`, the tree searched with the ring's).

use serde::Deserialize;

use super::Scenario;
use fabricsim_core::error::InputError;

/// NCCL's MAXCHANNELS (src/include/device.h).
pub const MAXCHANNELS: u32 = 64;

/// The most QPs per connection (`mech::cc::CcParams::validate`); NCCL allows 128
/// (NCCL_IB_MAX_QPS), a bound of the simulator.
pub const MAX_QPS_PER_CONNECTION: u16 = 64;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NcclSection {
    pub min_nchannels: Option<i64>,
    pub max_nchannels: Option<i64>,
    pub ib_qps_per_connection: Option<i64>,
    pub ib_split_data_on_qps: Option<i64>,
    pub nchannels_per_net_peer: Option<i64>,
}

/// `[nccl]` resolved: every value checked, NCCL's defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nccl {
    /// NCCL_MIN_NCHANNELS (connect.cc `ncclMinNchannels`: default 0).
    pub min_nchannels: u32,
    /// NCCL_MAX_NCHANNELS (connect.cc `ncclMaxNchannels`: default MAXCHANNELS).
    pub max_nchannels: u32,
    /// NCCL_IB_QPS_PER_CONNECTION when the scenario sets it (else the profile's
    /// `[congestion] qps_per_connection`, which cites NCCL's default 1).
    pub ib_qps_per_connection: Option<u16>,
    /// NCCL_IB_SPLIT_DATA_ON_QPS when the scenario sets it (`Nccl::split_data_on_qps`).
    pub ib_split_data_on_qps: Option<bool>,
    /// NCCL_NCHANNELS_PER_NET_PEER when the scenario sets it (the direct algorithms'
    /// channels, `workload::collective::nccl_channels`).
    pub nchannels_per_net_peer: Option<u32>,
}

impl Default for Nccl {
    fn default() -> Nccl {
        Nccl {
            min_nchannels: 0,
            max_nchannels: MAXCHANNELS,
            ib_qps_per_connection: None,
            ib_split_data_on_qps: None,
            nchannels_per_net_peer: None,
        }
    }
}

impl Nccl {
    /// NCCL_IB_SPLIT_DATA_ON_QPS for a collective's messages: the scenario's, else NCCL's
    /// default 0 (net_ib/common.cc `NCCL_PARAM(IbSplitDataOnQps, .., 0)` since NCCL 2.20.3; 1
    /// in 2.18 and 2.19).
    pub fn split_data_on_qps(&self) -> bool {
        self.ib_split_data_on_qps.unwrap_or(false)
    }

    /// Channels NCCL's ring graph search finds on servers with `nics` scale-out NICs: one ring
    /// per NIC (search.cc `ncclTopoCompute`: each ring leaves and enters a server through one
    /// NIC, NCCL_CROSS_NIC; on a rail-per-GPU server a NIC carries one ring at the search's
    /// speed). An ESTIMATE of the search's result: its speed steps and `ncclTopoDupChannels`
    /// are not run.
    pub fn search_channels(nics: u32) -> u32 {
        nics.max(1)
    }

    /// The ring and tree collectives' channels on servers with `nics` NICs (the module's
    /// derivation): 2 x the search's rings, at most NCCL_MAX_NCHANNELS, at least
    /// NCCL_MIN_NCHANNELS, within MAXCHANNELS.
    pub fn coll_channels(&self, nics: u32) -> u32 {
        let doubled = (2 * Nccl::search_channels(nics)).min(MAXCHANNELS);
        doubled
            .min(self.max_nchannels)
            .max(self.min_nchannels)
            .clamp(1, MAXCHANNELS)
    }
}

impl Scenario {
    /// Checks `[nccl]`: NCCL's own bounds (connect.cc clamps them; here out of range is an
    /// error naming the key).
    pub(super) fn nccl(&self) -> Result<Nccl, InputError> {
        let Some(s) = &self.file.nccl else {
            return Ok(Nccl::default());
        };
        let d = Nccl::default();
        let max_ch = MAXCHANNELS as i64;
        let min_nchannels = match s.min_nchannels {
            Some(v) => self.count("nccl.min_nchannels", v, 0, max_ch)?,
            None => d.min_nchannels,
        };
        let max_nchannels = match s.max_nchannels {
            Some(v) => self.count("nccl.max_nchannels", v, 1, max_ch)?,
            None => d.max_nchannels,
        };
        let ib_qps_per_connection = match s.ib_qps_per_connection {
            Some(v) => Some(self.count(
                "nccl.ib_qps_per_connection",
                v,
                1,
                MAX_QPS_PER_CONNECTION as i64,
            )? as u16),
            None => None,
        };
        let ib_split_data_on_qps = match s.ib_split_data_on_qps {
            Some(v @ (0 | 1)) => Some(v == 1),
            Some(v) => {
                return Err(self.error(
                    "nccl.ib_split_data_on_qps",
                    v,
                    "is not a NCCL_IB_SPLIT_DATA_ON_QPS value",
                    "0 (each message whole on the next QP) or 1 (split across the QPs)",
                ));
            }
            None => d.ib_split_data_on_qps,
        };
        let nchannels_per_net_peer = match s.nchannels_per_net_peer {
            Some(v) => Some(self.count("nccl.nchannels_per_net_peer", v, 1, max_ch)?),
            None => d.nchannels_per_net_peer,
        };
        Ok(Nccl {
            min_nchannels,
            max_nchannels,
            ib_qps_per_connection,
            ib_split_data_on_qps,
            nchannels_per_net_peer,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// connect.cc: 2 x one ring per NIC, capped by MAX, raised to MIN (min wins, as
    /// `copyChannels` runs after the cap).
    #[test]
    fn coll_channels_follow_nccls_rules() {
        let d = Nccl::default();
        assert_eq!(d.coll_channels(8), 16);
        assert_eq!(d.coll_channels(1), 2);
        assert_eq!(d.coll_channels(16), 32);
        let capped = Nccl {
            max_nchannels: 4,
            ..d
        };
        assert_eq!(capped.coll_channels(8), 4);
        let both = Nccl {
            min_nchannels: 24,
            max_nchannels: 4,
            ..d
        };
        assert_eq!(both.coll_channels(8), 24);
    }

    /// NCCL_NCHANNELS_PER_NET_PEER: taken when in range, an error naming the key otherwise.
    #[test]
    fn nchannels_per_net_peer_is_checked() {
        let s = Scenario::parse("n.toml", "[nccl]\nnchannels_per_net_peer = 4\n").unwrap();
        assert_eq!(s.nccl().unwrap().nchannels_per_net_peer, Some(4));
        let s = Scenario::parse("n.toml", "[nccl]\nnchannels_per_net_peer = 0\n").unwrap();
        let e = s.nccl().unwrap_err().to_string();
        assert!(
            e.contains("n.toml") && e.contains("nccl.nchannels_per_net_peer"),
            "{e}"
        );
        assert!(e.contains("1 to 64"), "{e}");
        assert_eq!(Nccl::default().nchannels_per_net_peer, None);
    }
}
