//! HPCC in the flow engine (Li et al., SIGCOMM 2019, §3.2 and §5.2): its senders hold every link
//! at the target utilization η with a near-empty queue, so flows share η·C max-min. The
//! start-up (W_init = B·T: one base RTT at line rate, whose queue the first updates drain within
//! a few RTTs) is left out; the packet engine's `fabricsim_packet::congestion` (`hpcc.rs`) has it.

use fabricsim_mech::SimParams;

/// The links' capacities (bits/s) HPCC leaves to the flows: η of each under HPCC, as they are
/// otherwise.
pub fn capacities(p: &SimParams, mut caps: Vec<u64>) -> Vec<u64> {
    if let Some(h) = p.cc.algo.hpcc() {
        for c in &mut caps {
            *c = (*c as f64 * h.eta) as u64;
        }
    }
    caps
}
