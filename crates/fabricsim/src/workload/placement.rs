//! Rank placement: a global GPU index -> (server, local GPU) -> the host (NIC) it sits behind.
//!
//! GPUs are numbered server-major (`gpu = server * gpus_per_node + local`), as NCCL and
//! Megatron number ranks when one process drives one GPU. Each GPU is paired with its rail NIC
//! (GPU i of a server uses NIC i), so a GPU is addressed by the [`HostId`] of that NIC; the
//! table comes from the topology builder's (server, nic index) -> HostId lookup.

use crate::topology::HostId;

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
