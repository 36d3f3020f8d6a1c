//! Power per rack: each rack draws what the layout placed in it (`layout::place`): its servers
//! (the catalog's server power), its switches (box power) and the optics and active-cable ends
//! in their cages (`power::optics_at_nodes`). Compute racks hold servers (and top-of-rack
//! leaves); network racks (end-of-row and network rows) hold only switches.

use fabricsim_core::topology::{NodeKind, Topology};

use super::layout::Floor;

/// The racks of one kind: how many, and the largest and mean draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Racks {
    pub racks: u32,
    pub max_kw: f64,
    pub mean_kw: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RackPower {
    pub compute: Racks,
    /// End-of-row and network-row racks (`None`: every switch sits in a compute rack).
    pub network: Option<Racks>,
}

/// The draw of every rack of `floor`: `server_w` per server (`servers_per_rack` to a rack, as
/// `layout` fills them), `switch_w` per switch, and `optics_kw[n]` at node `n`.
pub fn of(
    floor: &Floor,
    t: &Topology,
    servers_per_rack: u32,
    server_w: f64,
    switch_w: f64,
    optics_kw: &[f64],
) -> RackPower {
    let racks = floor.compute_racks + floor.end_of_row_racks + floor.network_racks;
    let mut kw = vec![0.0; racks as usize];
    for s in 0..t.servers {
        kw[(s / servers_per_rack) as usize] += server_w / 1000.0;
    }
    for (i, n) in t.nodes.iter().enumerate() {
        let rack = floor.spots[i].rack as usize;
        if matches!(n.kind, NodeKind::Switch { .. }) {
            kw[rack] += switch_w / 1000.0;
        }
        kw[rack] += optics_kw[i];
    }
    let (compute, network) = kw.split_at(floor.compute_racks as usize);
    RackPower {
        compute: stats(compute),
        network: (!network.is_empty()).then(|| stats(network)),
    }
}

fn stats(kw: &[f64]) -> Racks {
    Racks {
        racks: kw.len() as u32,
        max_kw: kw.iter().copied().fold(0.0, f64::max),
        mean_kw: kw.iter().sum::<f64>() / kw.len().max(1) as f64,
    }
}
