//! `[cluster]`: how many GPUs, how they are packed into servers, and which GPU and NIC.

use serde::Deserialize;

/// Counts are read as signed integers so that `gpus = -8` gets a range error, not a type error.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSection {
    /// GPUs in the cluster (default 1024).
    pub gpus: i64,
    /// GPUs per server, the NVLink domain (default: the server's `gpus`; 8 for an HGX/DGX
    /// baseboard, 72 for an NVL72 rack).
    pub gpus_per_node: Option<i64>,
    /// Scale-out NIC ports per server (default: one per GPU of the server).
    pub nics_per_node: Option<i64>,
    /// GPU catalog id (default: the server's GPU; `h100` when no server is named).
    pub gpu: Option<String>,
    /// NIC catalog id (default: the fabric profile's NIC).
    pub nic: Option<String>,
    /// Server catalog id (default: the first catalog server holding `gpu`, with
    /// `gpus_per_node` GPUs when that is given).
    pub server: Option<String>,
}

impl Default for ClusterSection {
    fn default() -> Self {
        ClusterSection {
            gpus: 1024,
            gpus_per_node: None,
            nics_per_node: None,
            gpu: None,
            nic: None,
            server: None,
        }
    }
}
