//! The step's loss expectation (`workload::train::loss_cost`) against seed-averaged packet-engine
//! runs, on three points of `docs/loss-expectation.md`: a 4 MiB ring all-reduce over 16 servers
//! with a 262 us ACK timeout (4.096 us x 2^6, so that the seeds sample the timeouts), two where
//! stalls are rare (about one per call or fewer) and one where about eight fall in each call
//! and overlap along its dependency chains (`workload::train::stall_path`; the sum over levels
//! it replaced put this point at 2.1x the measured time). The expected completion time,
//! retransmissions and timeouts each lie in the 95% interval of 16 seeds.

use fabricsim::sim::Transport;
use fabricsim_cases::loss_expect::{FABRICS, point};

fn check(i: usize, loss: f64) {
    let p = point(FABRICS[i], loss, 16, Some(6));
    let inside = |x: f64, e: &fabricsim::estimate::Estimate| e.lo <= x && x <= e.hi;
    assert!(
        inside(p.expected_s(), &p.time),
        "{loss}: time {} vs {:?}",
        p.expected_s(),
        p.time
    );
    assert!(
        inside(p.expected.retransmitted, &p.retransmitted),
        "{loss}: resends {} vs {:?}",
        p.expected.retransmitted,
        p.retransmitted
    );
    assert!(
        inside(p.expected.timeouts, &p.timeouts),
        "{loss}: timeouts {} vs {:?}",
        p.expected.timeouts,
        p.timeouts
    );
    // Loss costs something the seeds measured: the time is above the lossless run's.
    assert!(p.time.mean > p.lossless_s && p.expected_s() > p.lossless_s);
}

#[test]
fn go_back_n_on_roce_agrees_with_the_packet_runs_at_1e_4() {
    assert_eq!(FABRICS[1].recovery, Transport::GoBackN);
    check(1, 1e-4);
}

#[test]
fn cumulative_acks_on_infiniband_agree_with_the_packet_runs_at_1e_5() {
    assert_eq!(FABRICS[0].recovery, Transport::SelectiveRepeat);
    check(0, 1e-5);
}

#[test]
fn overlapping_timeouts_on_infiniband_agree_with_the_packet_runs_at_1e_4() {
    check(0, 1e-4);
}
