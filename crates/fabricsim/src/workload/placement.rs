//! Rank placement: a global GPU index -> (server, local GPU) -> the host (NIC) it sits behind.
//!
//! GPUs are numbered server-major (`gpu = server * gpus_per_node + local`), as NCCL and
//! Megatron number ranks when one process drives one GPU. Each GPU is paired with its rail NIC
//! (GPU i of a server uses NIC i), so a GPU is addressed by the [`HostId`] of that NIC; the
//! table comes from the topology's (server, rail) -> HostId lookup ([`Topology::host_of`]).
//! A GPU with several NIC ports (a GB300's ConnectX-8 run as 2 x 400G) has them on consecutive
//! rails, and sends each queue pair through one of them ([`Placement::host_for`]).

use fabricsim_core::topology::{HostId, Topology};

#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    servers: u32,
    gpus_per_node: u32,
    /// NIC ports of each GPU (1 unless a server has more NICs than GPUs).
    ports: u32,
    /// GPUs of each server that hold ranks (the first ones; the rest idle): `gpus_per_node`
    /// unless [`Placement::using`] left some out.
    used: u32,
    /// `ports` hosts per GPU, GPU-major.
    host_of: Vec<HostId>,
}

impl Placement {
    /// Placement from a lookup `(server, local gpu) -> HostId` (the topology's rail NIC table).
    pub fn new(
        servers: u32,
        gpus_per_node: u32,
        host_of: impl Fn(u32, u32) -> HostId,
    ) -> Placement {
        Placement::with_ports(servers, gpus_per_node, 1, |s, l, _| host_of(s, l))
    }

    /// Placement of GPUs with `ports` NIC ports each, from `(server, local gpu, port) -> HostId`.
    pub fn with_ports(
        servers: u32,
        gpus_per_node: u32,
        ports: u32,
        host_of: impl Fn(u32, u32, u32) -> HostId,
    ) -> Placement {
        let mut table = Vec::with_capacity((servers * gpus_per_node * ports) as usize);
        for s in 0..servers {
            for l in 0..gpus_per_node {
                table.extend((0..ports).map(|p| host_of(s, l, p)));
            }
        }
        Placement {
            servers,
            gpus_per_node,
            ports,
            used: gpus_per_node,
            host_of: table,
        }
    }

    /// The GPUs of `topo`'s servers, `gpus_per_node` each, on the hosts the topology numbered.
    /// Local GPU `l` uses rail `l * nics / gpus_per_node`: its own NIC when every GPU has one
    /// (HGX: GPU i and NIC i share a PCIe switch), neighbouring GPUs sharing one when NICs are
    /// fewer; with `k` times more NIC ports than GPUs, GPU `l` owns rails `k*l .. k*l + k - 1`.
    pub fn on_topology(topo: &Topology, gpus_per_node: u32) -> Placement {
        let nics = topo.rails_per_server();
        let ports = (nics / gpus_per_node).max(1);
        Placement::with_ports(topo.servers, gpus_per_node, ports, |s, l, p| {
            let rail = (l as u64 * nics as u64 / gpus_per_node as u64) as u16 + p as u16;
            topo.host_of(s, rail)
                .expect("the topology builder gives every server a NIC on every rail")
        })
    }

    /// Hosts numbered like the GPUs (`HostId(server * gpus_per_node + local)`).
    pub fn dense(servers: u32, gpus_per_node: u32) -> Placement {
        Placement::new(servers, gpus_per_node, |s, l| HostId(s * gpus_per_node + l))
    }

    /// NIC ports per GPU.
    pub fn ports(&self) -> u32 {
        self.ports
    }

    /// The ranks on the first `used` GPUs of each server only, numbered server-major over
    /// them, the others idle: a job whose TP x CP x EP blocks do not divide a rack-scale
    /// NVLink domain (EP 64 on a 72-GPU NVL72) keeps every block inside one domain.
    pub fn using(mut self, used: u32) -> Placement {
        assert!((1..=self.gpus_per_node).contains(&used));
        self.used = used;
        self
    }

    /// GPUs of each server that hold ranks.
    pub fn used_per_node(&self) -> u32 {
        self.used
    }

    /// Index in `host_of` of rank `gpu`'s first port.
    fn slot(&self, gpu: u32) -> usize {
        ((self.server(gpu) * self.gpus_per_node + self.local(gpu)) * self.ports) as usize
    }

    /// The host through which GPU `gpu` sends and receives queue pair `qp`: port `qp mod
    /// ports`, so a GPU's channels alternate over its NICs as NCCL's topology search spreads
    /// channels over the NICs near a GPU (NCCL src/graph/search.cc).
    pub fn host_for(&self, gpu: u32, qp: u32) -> HostId {
        self.host_of[self.slot(gpu) + (qp % self.ports) as usize]
    }

    pub fn servers(&self) -> u32 {
        self.servers
    }
    pub fn gpus_per_node(&self) -> u32 {
        self.gpus_per_node
    }
    /// Ranks: the GPUs in use.
    pub fn gpus(&self) -> u32 {
        self.servers * self.used
    }
    pub fn server(&self, gpu: u32) -> u32 {
        gpu / self.used
    }
    pub fn local(&self, gpu: u32) -> u32 {
        gpu % self.used
    }
    /// The host of GPU `gpu`'s first NIC port.
    pub fn host(&self, gpu: u32) -> HostId {
        self.host_of[self.slot(gpu)]
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
    fn a_gpu_with_two_ports_owns_two_consecutive_rails_and_alternates_its_queue_pairs() {
        // Two GB300 NVL72 racks, each GPU's ConnectX-8 run as 2 x 400G.
        let t = topology(&[
            ("--gpus", "144"),
            ("--server", "gb300-nvl72"),
            ("--nics-per-node", "144"),
            ("--fabric", "roce-400g"),
            ("--planes", "4"),
        ]);
        let p = Placement::on_topology(&t, 72);
        assert_eq!((p.gpus(), p.ports()), (144, 2));
        for g in 0..p.gpus() {
            let (s, l) = (p.server(g), p.local(g) as u16);
            assert_eq!(nic_of(&t, p.host(g)), (s, 2 * l));
            for qp in 0..6 {
                assert_eq!(nic_of(&t, p.host_for(g, qp)), (s, 2 * l + (qp % 2) as u16));
            }
        }
    }

    #[test]
    fn ranks_on_part_of_each_server_skip_its_idle_gpus() {
        let t = topology(&[("--gpus", "32")]);
        let p = Placement::on_topology(&t, 8).using(6);
        assert_eq!((p.gpus(), p.used_per_node()), (24, 6));
        for g in 0..p.gpus() {
            assert_eq!(nic_of(&t, p.host(g)), (g / 6, (g % 6) as u16));
        }
        assert!(p.same_server(6, 11) && !p.same_server(5, 6));
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
