//! `[cluster]`'s scale-up domain: the catalog server (an HGX baseboard of 8 GPUs, a GB200/GB300
//! NVL72 rack of 72, an NVL36 of 36) whose GPUs share one NVLink domain, from `server`, `gpu`
//! and `gpus_per_node`, whichever are written (NVIDIA GB200 NVL72: one 72-GPU NVLink domain).

use super::Scenario;
use super::cluster::ClusterSection;
use crate::catalog::{Catalog, Gpu, Item, Server};
use fabricsim_core::error::InputError;

/// The largest NVLink domain a server may hold (an NVL72 rack).
const MAX_GPUS_PER_NODE: i64 = 72;

/// The GPU when no server and no GPU is named.
const DEFAULT_GPU: &str = "h100";

impl Scenario {
    /// The GPU and the server of `[cluster]`: a named `server` gives the GPU and the domain
    /// size unless `gpu` / `gpus_per_node` are written (then they must match it); otherwise the
    /// first catalog server holding `gpu` (with `gpus_per_node` GPUs when that is written).
    pub(super) fn server(
        &self,
        c: &ClusterSection,
        catalog: &Catalog,
    ) -> Result<(Gpu, Server), InputError> {
        let per_node = match c.gpus_per_node {
            Some(n) => Some(self.count("cluster.gpus_per_node", n, 1, MAX_GPUS_PER_NODE)?),
            None => None,
        };
        let named = match &c.server {
            Some(id) => Some(self.item("cluster.server", id, "a server", &catalog.servers)?),
            None => None,
        };
        let gpu_id = c
            .gpu
            .clone()
            .or_else(|| named.as_ref().map(|s| s.gpu.clone()))
            .unwrap_or_else(|| DEFAULT_GPU.to_string());
        let gpu = self.item("cluster.gpu", &gpu_id, "a GPU", &catalog.gpus)?;
        let fits = |s: &Server| s.gpu == gpu.id && per_node.is_none_or(|n| s.gpus == n);
        let server = match named {
            Some(s) if fits(&s) => s,
            Some(s) => {
                let want = per_node.map_or(String::new(), |n| format!("{n} x "));
                return Err(self.error(
                    "cluster.server",
                    &s.id,
                    format!("holds {} x {}, not {want}{}", s.gpus, s.gpu, gpu.id),
                    "a server whose gpu and gpus match [cluster] gpu and gpus_per_node (or \
                     leave those out: the server gives them)",
                ));
            }
            None => catalog
                .servers
                .iter()
                .find(|s| fits(s))
                .cloned()
                .ok_or_else(|| {
                    let want = per_node.map_or(String::new(), |n| format!("{n} x "));
                    self.error(
                        if per_node.is_some() {
                            "cluster.gpus_per_node"
                        } else {
                            "cluster.gpu"
                        },
                        per_node.map_or(gpu.id.clone(), |n| n.to_string()),
                        format!("no catalog server holds {want}{}", gpu.id),
                        "add a [[server]] to a user catalog, or name one of: ".to_string()
                            + &catalog
                                .servers
                                .iter()
                                .map(|s| format!("{} ({} x {})", s.id(), s.gpus, s.gpu))
                                .collect::<Vec<_>>()
                                .join(", "),
                    )
                })?,
        };
        Ok((gpu, server))
    }
}

#[cfg(test)]
mod tests {
    use super::super::Design;
    use super::*;

    fn design(text: &str) -> Result<Design, InputError> {
        Scenario::parse("s.toml", text)?.design()
    }

    #[test]
    fn a_named_rack_gives_the_gpu_the_domain_and_one_nic_per_gpu() {
        let d = design("[cluster]\ngpus = 1152\nserver = \"gb200-nvl72\"\n").unwrap();
        assert_eq!(
            (d.gpu.id.as_str(), d.server.id.as_str()),
            ("gb200", "gb200-nvl72")
        );
        assert_eq!((d.spec.gpus_per_node, d.spec.nics_per_node), (72, 72));
        // The GPU alone finds its first server; 2 x 400G per GPU doubles the ports.
        let d = design("[cluster]\ngpus = 144\ngpu = \"gb300\"\nnics_per_node = 144\n").unwrap();
        assert_eq!(
            (d.server.id.as_str(), d.spec.nics_per_node),
            ("gb300-nvl72", 144)
        );
        let d = design("[cluster]\ngpus = 72\ngpu = \"gb200\"\ngpus_per_node = 36\n").unwrap();
        assert_eq!(d.server.id, "gb200-nvl36");
        // Without any of them: today's 8-GPU H100 server.
        let d = design("[cluster]\ngpus = 64\n").unwrap();
        assert_eq!(
            (d.server.id.as_str(), d.spec.gpus_per_node),
            ("hgx-h100-8", 8)
        );
    }

    #[test]
    fn a_rack_that_disagrees_with_gpu_or_size_names_the_key() {
        let e = design("[cluster]\ngpus = 144\nserver = \"gb200-nvl72\"\ngpus_per_node = 8\n")
            .unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(3), "cluster.server"));
        assert!(e.problem.contains("72 x gb200, not 8 x gb200"), "{e}");
        let e = design("[cluster]\ngpus = 144\nserver = \"gb200-nvl72\"\ngpu = \"h100\"\n")
            .unwrap_err();
        assert_eq!(e.key, "cluster.server");
        let e = design("[cluster]\ngpus = 100\nserver = \"gb200-nvl72\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "cluster.gpus"));
        assert!(e.problem.contains("72-GPU servers (gb200-nvl72)"), "{e}");
        let e = design("[cluster]\ngpus = 144\ngpus_per_node = 73\n").unwrap_err();
        assert_eq!(e.key, "cluster.gpus_per_node");
        let e = design("[cluster]\ngpus = 144\nserver = \"gb300-nvl72\"\nnics_per_node = 145\n")
            .unwrap_err();
        assert!(e.allowed.contains("1 to 144"), "{e}");
        // More ports than the rack's 72 ConnectX-7 slots.
        let e = design("[cluster]\ngpus = 144\nserver = \"gb200-nvl72\"\nnics_per_node = 144\n")
            .unwrap_err();
        assert!(e.problem.contains("72 scale-out NIC slots"), "{e}");
    }
}
