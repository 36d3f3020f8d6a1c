//! `[cluster]`: how many GPUs, how they are packed into servers, and which GPU and NIC.

use serde::Deserialize;

/// Counts are read as signed integers so that `gpus = -8` gets a range error, not a type error.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClusterSection {
    /// GPUs in the cluster (default 1024).
    pub gpus: i64,
    /// GPUs per server (default 8, an HGX/DGX baseboard).
    pub gpus_per_node: i64,
    /// Scale-out NIC ports per server (default 8: one 400G/800G NIC per GPU).
    pub nics_per_node: i64,
    /// GPU catalog id (default `h100`).
    pub gpu: String,
    /// NIC catalog id (default: the fabric profile's NIC).
    pub nic: Option<String>,
    /// Server catalog id (default: the catalog server with `gpus_per_node` of `gpu`).
    pub server: Option<String>,
}

impl Default for ClusterSection {
    fn default() -> Self {
        ClusterSection {
            gpus: 1024,
            gpus_per_node: 8,
            nics_per_node: 8,
            gpu: "h100".into(),
            nic: None,
            server: None,
        }
    }
}
