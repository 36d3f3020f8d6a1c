//! HPCC in the flow engine (Li et al., SIGCOMM 2019, §3.2 and §5.2): its senders hold every link
//! at the target utilization η with a near-empty queue, so flows share η·C max-min. The
//! start-up (W_init = B·T: one base RTT at line rate, whose queue the first updates drain within
//! a few RTTs) is left out; the packet engine's `fabricsim_packet::congestion` (`hpcc.rs`) has it.
//! Checked against the packet engine by `tests/sim_hpcc.rs` (flow vs packet, roce-400g).

use super::effect::Effect;
use fabricsim_core::topology::Topology;
use fabricsim_mech::SimParams;

/// The effect, on when the run's congestion control is HPCC: η (`HpccParams::eta`, from the
/// profile or `[sim.congestion]`) of every directed link's capacity.
pub struct Hpcc {
    eta: f64,
}

impl Hpcc {
    /// HPCC's effect on a run under `p` (`None`: the run is not under HPCC).
    pub fn new(p: &SimParams) -> Option<Hpcc> {
        p.cc.algo.hpcc().map(|h| Hpcc { eta: h.eta })
    }
}

impl Effect for Hpcc {
    fn link_caps(&self, _topo: &Topology, _p: &SimParams, caps: &mut Vec<u64>) {
        for c in caps.iter_mut() {
            *c = (*c as f64 * self.eta) as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths;
    use fabricsim_core::units::{BitRate, Time};
    use fabricsim_mech::cc_algo::CcAlgo;
    use fabricsim_mech::hpcc::HpccParams;
    use fabricsim_mech::lossless_scenarios::clos2;

    #[test]
    fn links_keep_eta_of_their_capacity_under_hpcc_only() {
        let (topo, _, _) = clos2(2, 2, 4, BitRate::gbps(400), Time::from_ns(100));
        let line = paths::capacities(&topo);
        let mut p = SimParams::roce();
        assert!(Hpcc::new(&p).is_none(), "DCQCN's profile is not HPCC");
        p.cc.algo = CcAlgo::Hpcc(HpccParams {
            eta: 0.5,
            ..HpccParams::default()
        });
        let mut caps = line.clone();
        Hpcc::new(&p).expect("HPCC").link_caps(&topo, &p, &mut caps);
        let halves: Vec<u64> = line.iter().map(|c| c / 2).collect();
        assert_eq!(caps, halves);
    }
}
