//! Pods of rail groups: scalable units (one leaf per rail) grouped into pods, each pod with its
//! own spines, pods joined by a core tier that may be oversubscribed. The NVIDIA DGX SuperPOD
//! builds its compute fabric from scalable units of 32 servers with one leaf per rail (NVIDIA DGX
//! SuperPOD reference architecture, DGX H100, 2023); Meta's AI Zone is a non-blocking leaf-spine joined to other
//! zones by an oversubscribed aggregation tier (ATSW; Gangidi et al., "RDMA over Ethernet for
//! Distributed AI Training at Meta Scale", SIGCOMM 2024); Alibaba HPN's pod of 15 segments
//! (15K GPUs) reaches other pods through an oversubscribed tier 3 (Qian et al., SIGCOMM 2024).
//!
//! The sizing: a pod spine serving one leaf uplink index ("plane" of the core) takes one link
//! from each of the pod's `Lp` leaves and sends `⌈Lp·u/d⌉` links up at core oversubscription
//! `d:u` (at least one to every core of its plane). A pod therefore holds the most whole
//! scalable units with `Lp + ⌈Lp·u/d⌉ ≤ k`; at 1:1 that is the 3-tier fat-tree's pod of `k/2`
//! leaves. Spines shared by all scalable units are the 2-tier rail-optimized fabric; pods whose
//! spines no switch joins (cross-pod traffic over NVLink) are the multi-plane fabric.

/// The pod shape of a `pods` fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pod {
    /// Scalable units (rail groups) per pod; 0 for the most a pod spine takes.
    pub sus: u32,
    /// A pod spine's down:up towards the core (1:1: non-blocking between pods).
    pub core_oversubscription: (u32, u32),
}

impl Pod {
    /// The largest pods, non-blocking between pods.
    pub const LARGEST: Pod = Pod {
        sus: 0,
        core_oversubscription: (1, 1),
    };

    /// Links a pod spine sends up per leaf uplink index it serves, for `leaves` below it.
    pub fn spine_up(&self, leaves: u32) -> u32 {
        let (d, u) = self.core_oversubscription;
        (leaves as u64 * u as u64).div_ceil(d as u64) as u32
    }

    /// The most scalable units of `leaves_per_su` leaves whose pod spine fits `radix` ports.
    pub fn most_sus(&self, radix: u32, leaves_per_su: u32) -> u32 {
        let fits = |s: u32| {
            let l = s * leaves_per_su;
            l as u64 + self.spine_up(l) as u64 <= radix as u64
        };
        (1..=radix).take_while(|&s| fits(s)).last().unwrap_or(0)
    }

    /// Scalable units per pod: the asked count, or the most that fit.
    pub fn sus_per_pod(&self, radix: u32, leaves_per_su: u32) -> u32 {
        match self.sus {
            0 => self.most_sus(radix, leaves_per_su),
            s => s,
        }
    }
}

/// Spine uplinks per served leaf uplink index for a pod of `leaves` leaves: as many as the
/// leaves for a fat-tree pod (non-blocking), a `pods` fabric's core ratio otherwise.
pub fn spine_up(pod: Option<&Pod>, leaves: u32) -> u32 {
    pod.map_or(leaves, |p| p.spine_up(leaves))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_holds_the_units_its_spine_ports_take() {
        // 64 ports, 8 rails: 1:1 → 4 SUs (32 down + 32 up); 3:1 → 6 SUs (48 + 16); 15:1 → 7
        // SUs (56 + 4; 8 SUs would need 64 + 5).
        let pod = |d, u| Pod {
            sus: 0,
            core_oversubscription: (d, u),
        };
        assert_eq!(pod(1, 1).most_sus(64, 8), 4);
        assert_eq!(pod(3, 1).most_sus(64, 8), 6);
        assert_eq!(pod(15, 1).most_sus(64, 8), 7);
        assert_eq!(pod(15, 1).spine_up(56), 4);
        // A rail group wider than the spine takes none.
        assert_eq!(pod(1, 1).most_sus(8, 8), 0);
        let two = Pod {
            sus: 2,
            ..pod(1, 1)
        };
        assert_eq!(two.sus_per_pod(64, 8), 2);
        assert_eq!(spine_up(None, 32), 32);
    }
}
