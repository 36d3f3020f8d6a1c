//! A flapping leaf-spine link (`[[faults.link]] flap_period`, `flap_down`, `flaps`) on a
//! lossless fabric: on RoCE PFC pauses back up from the ports that lose their way, on IB the
//! credits stall; the flows that never cross the link (victims) slow down with them. The claim
//! it tests: "at 100G/200G per lane, link instability triggers PFC storms" (issue #29).

use fabricsim::scenario::sim::SimSetup;
use fabricsim::sim::RunResult;
use fabricsim_cases::sim_util::{run_setup as run, setup};

fn scenario(profile: &str, faults: &str) -> String {
    format!(
        "[cluster]\ngpus = 256\n[fabric]\nprofile = \"{profile}\"\n\
         [traffic]\nkind = \"permutation\"\nbytes = \"1MB\"\n{faults}"
    )
}

/// Ports that were paused (PFC) or waited for credits (IB), and the total of that time, ps.
fn spread(r: &RunResult) -> (usize, u64) {
    let fc = r.flow_control.as_ref().unwrap();
    let t = |p: &fabricsim::sim::results::PortFc| p.paused_ps + p.credit_stall_ps;
    (
        fc.ports.iter().filter(|p| t(p) > 0).count(),
        fc.ports.iter().map(t).sum(),
    )
}

/// The first leaf-spine link of the plan.
fn fabric_link(s: &SimSetup) -> usize {
    s.net.topo.links.iter().position(|l| l.tier == 2).unwrap()
}

fn flapping(link: usize) -> String {
    format!(
        "[faults]\n[[faults.link]]\nlink = {link}\ndown_at = \"10us\"\n\
         flap_period = \"60us\"\nflap_down = \"20us\"\nflaps = 4\n"
    )
}

/// One flap run on `profile` against the same run without it.
fn calm_and_flapping(profile: &str) -> (SimSetup, RunResult, RunResult) {
    let calm = setup(&scenario(profile, ""));
    let flap = setup(&scenario(profile, &flapping(fabric_link(&calm))));
    let (a, b) = (run(&calm), run(&flap));
    (flap, a, b)
}

#[test]
fn a_flap_drops_what_is_on_the_link_and_the_lost_tails_wait_for_the_ack_timeout() {
    for profile in ["roce-400g", "ib-ndr"] {
        let (s, calm, flap) = calm_and_flapping(profile);
        assert_eq!(calm.counters.drops.link_down, 0);
        assert!(flap.counters.drops.link_down > 0, "{profile}");
        assert!(flap.counters.timeouts > 0, "{profile}");
        // Local repair (1-2 ms) is slower than the 20 us outages: routing never moves, and a
        // QP whose last packets were on the link learns of it only from its timer.
        let rto = s.params.ack_timeout().ps();
        assert!(flap.summary.max_fct_ps.unwrap() >= rto, "{profile}");
        assert!(calm.summary.max_fct_ps.unwrap() < rto / 1000, "{profile}");
        // The other flows (the median one never meets the link) are not sped up by it.
        assert!(
            flap.summary.fct_p50_ps >= calm.summary.fct_p50_ps,
            "{profile}"
        );
        let s = &flap.summary;
        assert_eq!(s.messages_completed + s.messages_failed, 256, "{profile}");
        if profile == "roce-400g" {
            assert_eq!(s.messages_completed, 256);
        }
    }
}

#[test]
fn a_flap_pauses_no_roce_port_and_stalls_credits_on_few_ib_ports() {
    // A down link drops what is queued for it, it does not hold it: no PFC pause backs up
    // from it, on RoCE (DCQCN on) not one port is paused.
    let (_, calm, flap) = calm_and_flapping("roce-400g");
    assert_eq!(spread(&calm), (0, 0));
    assert_eq!(spread(&flap), (0, 0));
    assert_eq!(flap.counters.pause_frames, 0);
    // On IB the retransmissions after the flap briefly exhaust credits on a few ports.
    let (s, calm, flap) = calm_and_flapping("ib-ndr");
    assert_eq!(spread(&calm), (0, 0));
    let (ports, ps) = spread(&flap);
    assert!(ports > 0 && ports * 20 < s.net.topo.ports.len(), "{ports}");
    assert!(ps > 0);
}

/// The figures of docs/reliability.md: `cargo test -p fabricsim --test sim_flap -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn print_flap_effects() {
    for profile in ["roce-400g", "ib-ndr"] {
        let (_, a, b) = calm_and_flapping(profile);
        println!(
            "{profile}: calm spread {:?} p50 {:?} max {:?}; flap spread {:?} pauses {} p50 {:?} max {:?} link_down drops {} timeouts {} failed {} qp_errors {} end {:?}",
            spread(&a),
            a.summary.fct_p50_ps,
            a.summary.max_fct_ps,
            spread(&b),
            b.counters.pause_frames,
            b.summary.fct_p50_ps,
            b.summary.max_fct_ps,
            b.counters.drops.link_down,
            b.counters.timeouts,
            b.summary.messages_failed,
            b.counters.qp_errors,
            b.sim
        );
    }
}
