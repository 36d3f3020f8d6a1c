//! A tier of hosts beside the jobs: storage targets (`[storage]`, `tenants::storage`) or
//! front-end hosts (`[frontend]`, `serve::frontend`). A tier takes the cluster's last servers
//! (below any tier placed after it), each serving on its first `nics` NIC ports on the leaves
//! they sit on, as a converged fabric attaches them; on a network of its own its traffic stays
//! off the simulated fabric.

use fabricsim_core::error::InputError;
use fabricsim_core::topology::{HostId, Topology};
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::jobs::HostTier;

/// The tier's servers and ports on the cluster.
#[derive(Clone, Debug)]
pub struct Tier {
    pub servers: Vec<u32>,
    /// The ports they serve on.
    pub hosts: Vec<HostId>,
    /// On a network of its own.
    pub separate: bool,
    /// The ports' rate in all, bytes per second.
    pub bytes_per_s: f64,
}

/// Where a tier may sit: the servers below `end` (the cluster's, or the first of a tier
/// already placed after it), leaving at least `keep` servers for `who` before it.
#[derive(Clone, Copy, Debug)]
pub struct Room<'a> {
    pub end: u32,
    pub keep: u32,
    pub who: &'a str,
}

/// The servers of tier `t` of section `table` in `room`, and its ports per server; errors
/// name `table.servers` or `table.nics`. `servers` and `rails` are the cluster's servers and
/// NIC ports per server.
pub fn check(
    s: &Scenario,
    table: &str,
    t: HostTier,
    rails: u32,
    room: Room,
) -> Result<(Vec<u32>, u32), InputError> {
    let fits = room.end.saturating_sub(room.keep);
    if t.servers > fits {
        return Err(s.error(
            &format!("{table}.servers"),
            t.servers,
            format!(
                "{} servers are free for it and {} need {}",
                room.end, room.who, room.keep
            ),
            format!("1 to {}", fits.max(1)),
        ));
    }
    let nics = t.nics.unwrap_or(rails);
    if nics > rails {
        return Err(s.error(
            &format!("{table}.nics"),
            nics,
            format!("a server has {rails} NIC ports"),
            format!("1 to {rails}"),
        ));
    }
    Ok(((room.end - t.servers..room.end).collect(), nics))
}

/// The tier on `servers` (checked by [`check`]), each on its first `nics` ports of `topo`.
pub fn place(topo: &Topology, servers: Vec<u32>, nics: u32, separate: bool) -> Tier {
    let hosts: Vec<HostId> = servers
        .iter()
        .flat_map(|&sv| (0..nics as u16).filter_map(move |r| topo.host_of(sv, r)))
        .collect();
    let bytes_per_s = hosts.iter().map(|&h| port_bytes_per_s(topo, h)).sum();
    Tier {
        servers,
        hosts,
        separate,
        bytes_per_s,
    }
}

/// The rate of host `h`'s port, bytes per second.
pub fn port_bytes_per_s(topo: &Topology, h: HostId) -> f64 {
    topo.link(topo.port(topo.host_port(h)).link).rate.0 as f64 / 8.0
}
