//! `plan --max`: the largest GPU count each topology kind reaches in 1, 2 and 3 tiers with the
//! design's switch radix, oversubscription and server (GPUs and NIC ports per server), from the
//! closed forms of `fabricsim_core::topology::sizing`; and the multi-plane variant (the
//! scenario's planes, or 2 planes as in Alibaba HPN's dual-plane when it has one).

use fabricsim_core::topology::{Kind, Pod, TopologySpec, max_gpus, sizing::Sizing};

/// One design's reach: its label and the most GPUs in 1, 2 and 3 tiers, or why it cannot be
/// built with this server.
#[derive(Clone, Debug, PartialEq)]
pub struct Reach {
    pub kind: Kind,
    pub planes: u32,
    pub gpus: Result<[u64; 3], String>,
}

impl Reach {
    /// "rail-only", "fat-tree x 2 planes", or "pods (7 SUs, core 15:1)" (a pod shape other
    /// than the largest non-blocking pods).
    pub fn label(&self) -> String {
        let name = match self.kind {
            Kind::Pods(p) if p != Pod::LARGEST => {
                let (d, u) = p.core_oversubscription;
                match p.sus {
                    0 => format!("pods (core {d}:{u})"),
                    s => format!("pods ({s} SUs, core {d}:{u})"),
                }
            }
            k => k.name().to_string(),
        };
        match self.planes {
            1 => name,
            p => format!("{name} x {p} planes"),
        }
    }
}

/// Every kind in one plane, then the multi-plane variants of fat-tree and rail-optimized.
pub fn table(spec: &TopologySpec) -> Vec<Reach> {
    let planes = match spec.planes {
        1 if spec.nics_per_node.is_multiple_of(2) => 2,
        p => p,
    };
    // The pods row takes the scenario's pod shape when it is a pods fabric.
    let mut designs: Vec<(Kind, u32)> = Kind::ALL
        .iter()
        .map(|&k| match (k, spec.kind) {
            (Kind::Pods(_), Kind::Pods(p)) => (Kind::Pods(p), 1),
            _ => (k, 1),
        })
        .collect();
    if planes > 1 {
        designs.extend([(Kind::FatTree, planes), (Kind::RailOptimized, planes)]);
    }
    designs
        .into_iter()
        .map(|(kind, planes)| {
            let s = TopologySpec {
                kind,
                planes,
                gpus: spec.gpus_per_node,
                ..spec.clone()
            };
            // One server must build; its error says why the design does not suit this server.
            let gpus = Sizing::of(&s)
                .map(|_| [1, 2, 3].map(|t| max_gpus(&s, t)))
                .map_err(|e| e.problem);
            Reach { kind, planes, gpus }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::topology::Tiers;
    use fabricsim_core::units::BitRate;

    #[test]
    fn the_table_gives_each_design_its_closed_form_reach() {
        let spec = TopologySpec {
            gpus: 16_384,
            gpus_per_node: 8,
            nics_per_node: 8,
            kind: Kind::FatTree,
            tiers: Tiers::Auto,
            oversubscription: (1, 1),
            switch_radix: 64,
            port_rate: BitRate::gbps(400),
            planes: 1,
        };
        let t = table(&spec);
        let row = |label: &str| t.iter().find(|r| r.label() == label).unwrap().gpus.clone();
        // Fat-tree: 4 servers per leaf, 64 leaves in 2 tiers (256 servers), 64 pods of 32
        // leaves in 3 (8,192 servers); one switch takes 8 servers.
        assert_eq!(row("fat-tree"), Ok([64, 2048, 65_536]));
        // Rail-optimized: no single switch; 64/8 = 8 SUs of 32 servers in 2 tiers, 64 pods of
        // 4 SUs in 3.
        assert_eq!(row("rail-optimized"), Ok([0, 2048, 65_536]));
        // Rail-only: a rail is a fat-tree of 1-port servers: 64, 2,048, 65,536 servers.
        assert_eq!(row("rail-only"), Ok([512, 16_384, 524_288]));
        // Dual-ToR: a leaf pair takes 8 servers: 32 pairs in 2 tiers.
        assert_eq!(row("dual-tor"), Ok([0, 2048, 65_536]));
        // 2 planes of 4 ports: a fat-tree plane takes 8 servers per leaf.
        assert_eq!(row("fat-tree x 2 planes"), Ok([128, 4096, 131_072]));
        // Pods: 3 tiers only; at 1:1 64 pods of 4 SUs (the rail-optimized reach); a pods
        // scenario's own shape, 7 SUs over a 15:1 core, 64 pods of 7 SUs of 32 servers.
        assert_eq!(row("pods"), Ok([0, 0, 65_536]));
        let thin = TopologySpec {
            kind: Kind::Pods(Pod {
                sus: 7,
                core_oversubscription: (15, 1),
            }),
            ..spec.clone()
        };
        let t = table(&thin);
        let pods = t.iter().find(|r| r.kind.pod().is_some()).unwrap();
        assert_eq!(pods.label(), "pods (7 SUs, core 15:1)");
        assert_eq!(pods.gpus, Ok([0, 0, 114_688]));
        // An odd port count refuses dual-ToR, with the reason.
        let odd = TopologySpec {
            nics_per_node: 7,
            ..spec
        };
        let t = table(&odd);
        assert!(t.iter().any(|r| r.kind == Kind::DualTor && r.gpus.is_err()));
        assert_eq!(t.len(), 5, "no even split, no multi-plane row");
    }
}
