//! Rank placement: a global GPU index -> (server, local GPU) -> the host (NIC) it sits behind.
//!
//! GPUs are numbered server-major (`gpu = server * gpus_per_node + local`), as NCCL and
//! Megatron number ranks when one process drives one GPU. Each GPU is paired with its rail NIC
//! (GPU i of a server uses NIC i), so a GPU is addressed by the [`HostId`] of that NIC; the
//! table comes from the topology's (server, rail) -> HostId lookup ([`Topology::host_of`]).

use fabricsim_core::topology::{HostId, Topology};

#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    servers: u32,
    gpus_per_node: u32,
    host_of: Vec<HostId>,
}

impl Placement {
    /// Placement from a lookup `(server, local gpu) -> HostId` (the topology's rail NIC table).
    pub fn new(
        servers: u32,
        gpus_per_node: u32,
        host_of: impl Fn(u32, u32) -> HostId,
    ) -> Placement {
        let mut table = Vec::with_capacity((servers * gpus_per_node) as usize);
        for s in 0..servers {
            for l in 0..gpus_per_node {
                table.push(host_of(s, l));
            }
        }
        Placement {
            servers,
            gpus_per_node,
            host_of: table,
        }
    }

    /// The GPUs of `topo`'s servers, `gpus_per_node` each, on the hosts the topology numbered.
    /// Local GPU `l` uses rail `l * nics / gpus_per_node`: its own NIC when every GPU has one
    /// (HGX: GPU i and NIC i share a PCIe switch), neighbouring GPUs sharing one when NICs are
    /// fewer.
    pub fn on_topology(topo: &Topology, gpus_per_node: u32) -> Placement {
        let nics = topo.rails_per_server();
        Placement::new(topo.servers, gpus_per_node, |s, l| {
            let rail = (l as u64 * nics as u64 / gpus_per_node as u64) as u16;
            topo.host_of(s, rail)
                .expect("the topology builder gives every server a NIC on every rail")
        })
    }

    /// Hosts numbered like the GPUs (`HostId(server * gpus_per_node + local)`).
    pub fn dense(servers: u32, gpus_per_node: u32) -> Placement {
        Placement::new(servers, gpus_per_node, |s, l| HostId(s * gpus_per_node + l))
    }

    pub fn servers(&self) -> u32 {
        self.servers
    }
    pub fn gpus_per_node(&self) -> u32 {
        self.gpus_per_node
    }
    pub fn gpus(&self) -> u32 {
        self.servers * self.gpus_per_node
    }
    pub fn server(&self, gpu: u32) -> u32 {
        gpu / self.gpus_per_node
    }
    pub fn local(&self, gpu: u32) -> u32 {
        gpu % self.gpus_per_node
    }
    pub fn host(&self, gpu: u32) -> HostId {
        self.host_of[gpu as usize]
    }
    pub fn same_server(&self, a: u32, b: u32) -> bool {
        self.server(a) == self.server(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::topology::NodeKind;
    use fabricsim_input::test_util::scenario;

    fn topology(flags: &[(&str, &str)]) -> Topology {
        scenario(flags).design_and_topology().unwrap().1
    }

    /// The (server, rail) the NIC node behind `h` was built for.
    fn nic_of(t: &Topology, h: HostId) -> (u32, u16) {
        match t.node(t.host_node(h)).kind {
            NodeKind::Nic { server, rail, .. } => (server, rail),
            NodeKind::Switch { .. } => panic!("hosts are NICs"),
        }
    }

    #[test]
    fn ranks_land_on_their_servers_rail_nic_as_the_topology_numbered_it() {
        for kind in ["fat-tree", "rail-optimized"] {
            let t = topology(&[("--gpus", "256"), ("--topology", kind)]);
            let p = Placement::on_topology(&t, 8);
            assert_eq!(p.gpus(), 256);
            for g in 0..p.gpus() {
                assert_eq!(nic_of(&t, p.host(g)), (p.server(g), p.local(g) as u16));
            }
            // Rail-optimized numbers hosts leaf by leaf (one rail per leaf), not like ranks.
            assert_eq!(p == Placement::dense(32, 8), kind == "fat-tree", "{kind}");
        }
    }

    #[test]
    fn neighbouring_gpus_share_a_nic_when_a_server_has_fewer() {
        let t = topology(&[("--gpus", "64"), ("--nics-per-node", "4")]);
        let p = Placement::on_topology(&t, 8);
        for g in 0..p.gpus() {
            assert_eq!(
                nic_of(&t, p.host(g)),
                (p.server(g), (p.local(g) / 2) as u16)
            );
        }
    }
}
