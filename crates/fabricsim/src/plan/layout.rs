//! The rack-and-row model: where every server and switch sits, and how long a cable between
//! two of them is.
//!
//! Geometry (all parameters from `[layout]`):
//! - Server `s` sits in compute rack `s / servers_per_rack`, slot `s % servers_per_rack`
//!   counted from the floor; slots are spread evenly over the rack height with the top slot
//!   left for a top-of-rack switch. Compute rack `r` is rack `r % racks_per_row` of compute row
//!   `r / racks_per_row`; racks are `rack_width_m` apart along a row (x), rows `row_pitch_m`
//!   apart (y).
//! - Network rows (for switches placed `network-row`, and all cores) sit in the middle of the
//!   hall, between the first and second half of the compute rows, `racks_per_row` racks each,
//!   `switches_per_rack` switches per rack, filled tier by tier (leaves, spines, cores), in
//!   node order.
//! - `end-of-row` switches sit in extra racks right after the last compute rack of a row (the
//!   row of the median server below them).
//! - `top-of-rack` leaves sit at the top of the rack of the median server below them.
//! - A cable inside one rack runs vertically: |dz| + slack. Between racks it runs up to the
//!   overhead tray (`tray_above_rack_m` above the rack top), along x and y (Manhattan), and
//!   down: |dx| + |dy| + (tray - z_a) + (tray - z_b) + slack.

use fabricsim_core::topology::{NodeId, NodeKind, PortId, Topology};
use fabricsim_input::scenario::resolve::{LayoutParams, Placement};

/// A device's position: its rack and its coordinates in metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spot {
    /// Rack id: compute racks first, then end-of-row racks, then network racks.
    pub rack: u32,
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// Positions of every node, and the hall's size.
#[derive(Clone, Debug)]
pub struct Floor {
    pub spots: Vec<Spot>,
    pub compute_racks: u32,
    pub end_of_row_racks: u32,
    pub network_racks: u32,
    pub compute_rows: u32,
    pub network_rows: u32,
}

impl Floor {
    /// Cable length between two nodes, slack included.
    pub fn cable_m(&self, p: &LayoutParams, a: NodeId, b: NodeId) -> f64 {
        let (a, b) = (self.spots[a.idx()], self.spots[b.idx()]);
        if a.rack == b.rack {
            return (a.z - b.z).abs() + p.slack_m;
        }
        let tray = p.rack_height_m + p.tray_above_rack_m;
        (a.x - b.x).abs() + (a.y - b.y).abs() + (tray - a.z) + (tray - b.z) + p.slack_m
    }
}

/// Places every node of `t` on the floor.
pub fn place(t: &Topology, p: &LayoutParams) -> Floor {
    let spr = p.servers_per_rack;
    let rpr = p.racks_per_row;
    let compute_racks = t.servers.div_ceil(spr).max(1);
    let compute_rows = compute_racks.div_ceil(rpr);
    // "Home" server of each node: its own for a NIC, the median of those below for a switch.
    let home = home_servers(t);

    // Sort switches into their places: (tier, node) order is node order within a tier.
    let mut net_pool: Vec<NodeId> = Vec::new();
    let mut eor_per_row: Vec<Vec<NodeId>> = vec![Vec::new(); compute_rows as usize];
    let mut tor: Vec<NodeId> = Vec::new();
    let mut by_tier: Vec<(u8, NodeId)> = t.switches().map(|(id, n)| (n.tier(), id)).collect();
    by_tier.sort();
    for &(tier, id) in &by_tier {
        let placement = match tier {
            1 => p.leaf,
            2 => p.spine,
            _ => Placement::NetworkRow,
        };
        match placement {
            Placement::TopOfRack => tor.push(id),
            Placement::EndOfRow => {
                let row = (home[id.idx()] / spr) / rpr;
                eor_per_row[row as usize].push(id);
            }
            Placement::NetworkRow => net_pool.push(id),
        }
    }
    let network_racks = (net_pool.len() as u32).div_ceil(p.switches_per_rack);
    let network_rows = network_racks.div_ceil(rpr);
    let half = compute_rows / 2;
    let row_y = |compute_row: u32| {
        let shift = if compute_row >= half { network_rows } else { 0 };
        (compute_row + shift) as f64 * p.row_pitch_m
    };
    let x_of = |col: u32| (col as f64 + 0.5) * p.rack_width_m;
    let slot_z = |slot: u32, per: u32| p.rack_height_m * (slot as f64 + 0.5) / per as f64;
    let top_z = p.rack_height_m * (spr as f64 + 0.5) / (spr + 1) as f64;

    let mut spots = vec![
        Spot {
            rack: 0,
            x: 0.0,
            y: 0.0,
            z: 0.0
        };
        t.nodes.len()
    ];
    for (i, n) in t.nodes.iter().enumerate() {
        if let NodeKind::Nic { server, .. } = n.kind {
            let rack = server / spr;
            spots[i] = Spot {
                rack,
                x: x_of(rack % rpr),
                y: row_y(rack / rpr),
                z: p.rack_height_m * ((server % spr) as f64 + 0.5) / (spr + 1) as f64,
            };
        }
    }
    for id in tor {
        let rack = home[id.idx()] / spr;
        spots[id.idx()] = Spot {
            rack,
            x: x_of(rack % rpr),
            y: row_y(rack / rpr),
            z: top_z,
        };
    }
    let mut next_rack = compute_racks;
    for (row, list) in eor_per_row.iter().enumerate() {
        // The row's last compute rack (a partial last row is shorter).
        let racks_in_row = (compute_racks - row as u32 * rpr).min(rpr);
        for (k, id) in list.iter().enumerate() {
            let j = k as u32 / p.switches_per_rack;
            spots[id.idx()] = Spot {
                rack: next_rack + j,
                x: x_of(racks_in_row + j),
                y: row_y(row as u32),
                z: slot_z(k as u32 % p.switches_per_rack, p.switches_per_rack),
            };
        }
        next_rack += (list.len() as u32).div_ceil(p.switches_per_rack);
    }
    let end_of_row_racks = next_rack - compute_racks;
    for (k, id) in net_pool.iter().enumerate() {
        let j = k as u32 / p.switches_per_rack;
        spots[id.idx()] = Spot {
            rack: next_rack + j,
            x: x_of(j % rpr),
            y: (half + j / rpr) as f64 * p.row_pitch_m,
            z: slot_z(k as u32 % p.switches_per_rack, p.switches_per_rack),
        };
    }
    Floor {
        spots,
        compute_racks,
        end_of_row_racks,
        network_racks,
        compute_rows,
        network_rows,
    }
}

/// The median home server of the nodes below each switch, bottom-up by tier.
fn home_servers(t: &Topology) -> Vec<u32> {
    let mut home = vec![0u32; t.nodes.len()];
    let mut order: Vec<usize> = (0..t.nodes.len()).collect();
    order.sort_by_key(|&i| t.nodes[i].tier());
    let mut below: Vec<u32> = Vec::new();
    for i in order {
        let n = &t.nodes[i];
        match n.kind {
            NodeKind::Nic { server, .. } => home[i] = server,
            NodeKind::Switch { .. } => {
                below.clear();
                below.extend(n.down_ports().map(|p| home[t.peer_node(PortId(p)).idx()]));
                below.sort_unstable();
                home[i] = below.get(below.len() / 2).copied().unwrap_or(0);
            }
        }
    }
    home
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::topology::{GraphBuilder, Medium, Shape};
    use fabricsim_core::units::{BitRate, Time};

    fn params(leaf: Placement) -> LayoutParams {
        LayoutParams {
            servers_per_rack: 4,
            racks_per_row: 2,
            rack_width_m: 0.6,
            row_pitch_m: 2.4,
            rack_height_m: 2.0,
            tray_above_rack_m: 0.5,
            switches_per_rack: 16,
            leaf,
            spine: Placement::NetworkRow,
            slack_m: 1.0,
            optics: fabricsim_input::catalog::Drive::Dsp,
        }
    }

    /// 16 servers with one NIC each, 2 leaves (8 servers each), 1 spine.
    fn small() -> Topology {
        let mut b = GraphBuilder::new();
        let nics: Vec<NodeId> = (0..16).map(|s| b.add_nic(s, 0)).collect();
        let l0 = b.add_switch(1, 0, 0, 16);
        let l1 = b.add_switch(1, 0, 1, 16);
        let sp = b.add_switch(2, 0, 0, 16);
        let r = BitRate::gbps(400);
        for (s, &n) in nics.iter().enumerate() {
            b.connect(
                n,
                if s < 8 { l0 } else { l1 },
                r,
                0.0,
                Time::ZERO,
                Medium::Unspecified,
            );
        }
        b.connect(l0, sp, r, 0.0, Time::ZERO, Medium::Unspecified);
        b.connect(l1, sp, r, 0.0, Time::ZERO, Medium::Unspecified);
        b.finish(Shape::FatTree, 2, 16)
    }

    #[test]
    fn lengths_follow_the_documented_geometry() {
        let t = small();
        let p = params(Placement::TopOfRack);
        let f = place(&t, &p);
        // 16 servers / 4 per rack = 4 racks in 2 rows of 2.
        assert_eq!((f.compute_racks, f.compute_rows), (4, 2));
        // Leaf 0's median server is 4 (servers 0..8 sorted, index 4) -> rack 1.
        let l0 = NodeId(16);
        assert_eq!(f.spots[l0.idx()].rack, 1);
        // Server 4 (slot 0 of rack 1) to its top-of-rack leaf: vertical only.
        let z_server = 2.0 * 0.5 / 5.0;
        let z_top = 2.0 * 4.5 / 5.0;
        let want = (z_top - z_server) + 1.0;
        assert!((f.cable_m(&p, NodeId(4), l0) - want).abs() < 1e-9);
        // Server 0 (rack 0, slot 0) to the same leaf: one rack over, via the tray.
        let tray = 2.5;
        let want = 0.6 + (tray - z_server) + (tray - z_top) + 1.0;
        assert!((f.cable_m(&p, NodeId(0), l0) - want).abs() < 1e-9);
    }

    #[test]
    fn end_of_row_switches_follow_the_rows_last_rack() {
        let t = small();
        let f = place(&t, &params(Placement::EndOfRow));
        // Leaf 0 (median server 4, rack 1, row 0) and leaf 1 (median server 12, rack 3, row 1):
        // each in the rack after its row's 2 compute racks, x = 2.5 racks x 0.6 m; row 1 sits
        // beyond the network row of the spine (y = 2 pitches).
        for (leaf, y) in [(16usize, 0.0), (17, 4.8)] {
            let s = f.spots[leaf];
            assert!((s.x - 1.5).abs() < 1e-9 && s.y == y, "{s:?}");
        }
        assert_eq!(f.end_of_row_racks, 2);
    }

    #[test]
    fn network_rows_sit_between_the_compute_halves() {
        let t = small();
        let p = params(Placement::NetworkRow);
        let f = place(&t, &p);
        assert_eq!((f.network_racks, f.network_rows), (1, 1));
        // Compute row 0 at y = 0; network row at y = 1 pitch; compute row 1 pushed to 2 pitches.
        assert_eq!(f.spots[NodeId(18).idx()].y, 2.4);
        assert_eq!(f.spots[NodeId(15).idx()].y, 4.8);
        assert_eq!(f.spots[NodeId(0).idx()].y, 0.0);
    }
}
