//! Compatibility of the parts a scenario picks: the NIC's port rate against the host's PCIe
//! link to it, the NIC ports per server against the server model's NIC slots, and the switch's
//! SerDes lane rate against the lanes of the optics and cables at the port rate. A part that
//! cannot work is an error naming both parts; one that works below its rate is a warning.
//!
//! PCIe usable rate per lane and direction: 8, 16, 32 GT/s with 128b/130b encoding for Gen3,
//! 4 and 5 (PCI Express Base Specification 3.0-5.0), 64 GT/s PAM4 with 242/256 FLIT
//! efficiency for Gen6 (PCI Express Base Specification 6.0).

use super::Scenario;
use crate::catalog::{Catalog, Nic, Server, Switch};
use fabricsim_core::error::InputError;

/// Usable Gb/s per lane of PCIe generation `gen`, or `None` for a generation it does not know.
pub fn pcie_lane_gbps(generation: u8) -> Option<f64> {
    match generation {
        3 => Some(8.0 * 128.0 / 130.0),
        4 => Some(16.0 * 128.0 / 130.0),
        5 => Some(32.0 * 128.0 / 130.0),
        6 => Some(64.0 * 242.0 / 256.0),
        _ => None,
    }
}

/// Checks `server` against `nic` at `rate_gbps` and `nics_per_node`; `Ok` holds the warnings.
pub fn check(
    s: &Scenario,
    server: &Server,
    nic: &Nic,
    rate_gbps: u32,
    nics_per_node: u32,
    gpus_per_node: u32,
) -> Result<Vec<String>, InputError> {
    let mut warnings = Vec::new();
    if let Some(slots) = server.nic_slots
        && nics_per_node > slots
    {
        return Err(s.error(
            "cluster.nics_per_node",
            nics_per_node,
            format!(
                "server {} has {slots} scale-out NIC slots for its {} GPUs",
                server.id, server.gpus
            ),
            format!(
                "at most {slots} NIC ports per node with server {}",
                server.id
            ),
        ));
    }
    if !gpus_per_node.is_multiple_of(nics_per_node) && !nics_per_node.is_multiple_of(gpus_per_node)
    {
        warnings.push(format!(
            "cluster.nics_per_node = {nics_per_node} does not divide evenly among the {gpus_per_node} \
             GPUs of server {}: some GPUs share more NICs than others",
            server.id
        ));
    }
    if let (Some(generation), Some(lanes)) = (server.pcie_gen, server.pcie_lanes_per_nic) {
        let Some(lane) = pcie_lane_gbps(generation) else {
            return Err(s.error(
                "cluster.server",
                &server.id,
                format!("has PCIe generation {generation} in the catalog"),
                "a catalog server with pcie_gen 3, 4, 5 or 6",
            ));
        };
        let usable = lane * lanes as f64;
        if rate_gbps as f64 > usable {
            warnings.push(format!(
                "NIC {} at {rate_gbps}G is faster than server {}'s PCIe Gen{generation} x{lanes} \
                 link to it ({usable:.0} Gb/s each way): the NIC cannot run at line rate; pick a \
                 host with a faster PCIe link (Gen6 x16 carries 800G) or a fabric of at most \
                 {usable:.0} Gb/s per port",
                nic.id, server.id,
            ));
        }
    }
    Ok(warnings)
}

/// A warning when `switch`'s SerDes lanes match no catalog transceiver or cable at
/// `rate_gbps` (each would need a gearbox to change the lane rate; IEEE 802.3ck and 802.3df
/// define 100G and 200G electrical lanes, and a module's host side runs at its lane rate).
pub fn check_serdes(switch: &Switch, catalog: &Catalog, rate_gbps: u32) -> Option<String> {
    let serdes = switch.serdes_gbps?;
    let mut lanes: Vec<u32> = catalog
        .transceivers
        .iter()
        .filter(|t| t.ports_at(rate_gbps).is_some())
        .map(|t| t.lane_gbps)
        .chain(
            catalog
                .cables
                .iter()
                .filter(|c| c.shape_at(rate_gbps).is_some())
                .map(|c| c.lane_gbps),
        )
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    (!lanes.is_empty() && !lanes.contains(&serdes)).then(|| {
        let list: Vec<String> = lanes.iter().map(|l| format!("{l}G")).collect();
        format!(
            "switch {} has {serdes}G SerDes lanes, but the catalog's {rate_gbps}G optics and \
             cables use {} lanes: every link needs a gearbox module, or a switch with {} SerDes",
            switch.id,
            list.join(" or "),
            list.join(" or ")
        )
    })
}
