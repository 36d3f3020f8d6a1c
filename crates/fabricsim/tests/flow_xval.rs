//! Cross-validation of the flow engine against the packet engine (issue 7, "Must show"): on
//! permutation, incast, ring all-reduce and all-to-all cases of 128 to 1,024 hosts, on ib-ndr
//! and roce-400g, without loss and with 0.1% loss per packet per link: mean FCT within 10%, p99
//! within 20% for independent flows, collective time (last completion) within 5% and, without
//! loss, the collective's mean FCT within 10%.
//! `cargo test -p fabricsim --test flow_xval -- --nocapture` prints the tables;
//! `cargo run --release -p fabricsim-lab -- cases` prints every case.
//!
//! Method for the lossy cases. A loss is a random event in both engines (the packet engine drops
//! packets from its seeded per-link streams; the flow engine draws per message, from its own
//! seeded stream, whether and where an ACK timeout stalls it and how many of its packets a
//! go-back-N NAK reveals lost, `flow::loss`), so the two are
//! compared in distribution: each engine runs the case with seeds 1..=S (S per case and fabric
//! in `flow_cases::cases`), every message's FCT pooled, the collective time and each run's p99
//! averaged over the seeds. A quantity is asserted where the packet engine's own sampling error
//! is small beside its tolerance: twice the standard error of a mean (a 95% interval) within
//! half the tolerance (for a mean over runs, from 30 runs up), and for the pooled p99 the
//! distribution-free 95% interval of the quantile (`Pooled::p99_rel_interval`; the exact
//! binomial ranks give the same order statistics) within the tolerance. Two p99s are compared:
//! the pooled one (the p99 of a random message's FCT) and the mean of each run's p99 (what a
//! run reports, `fct_p99_ps`). Where the share of messages that time out is near 1%, the pooled
//! p99 sits on the cliff between those and the others and jumps by an RTO when the share
//! crosses 1%, so no number of seeds resolves it when the share is within its own sampling
//! error of 1%: the lossy roce-400g mixed incast's is 0.94% on the packet engine over 400 seeds
//! (39,600 messages above 1 ms) and 1.03% on the flow engine, the packet p99's interval still
//! +-35%. A run's p99 (its 2nd largest FCT of 99, its largest of 32) moves smoothly with that
//! share, and its mean over runs is asserted there. The collective time is the maximum of a run
//! and swings by a whole RTO with one more timeout. Unasserted quantities are printed with
//! their sampling error, since neither a model nor a second packet run reproduces a coin toss.
//!
//! The lossy p99s and their seeds (packet / flow, error, packet 95% interval): incast 32:1 x
//! 1 MB, ib-ndr, 64 seeds: 1730.8 / 1686.3 us (-2.6%, +-0.3%; at 16 seeds +-51%), run p99
//! 1806.7 / 1703.5 (-5.7%); roce-400g, 288 seeds: 1415.8 / 1572.6 (+11.1%, +-2.2%; at 16 seeds
//! +-73%), run p99 1423.7 / 1563.9 (+9.9%); permutation 1 MB on roce-400g, 64 seeds: 32.86 /
//! 33.55 (+2.1%, +-0.2%; at 8 seeds +-189%, 0.6% of its messages time out); the roce-400g
//! mixed incast, 64 seeds: run p99 1266.0 / 1254.2 (-0.9%, +-7.1%), pooled 874.3 / 857.7
//! (not asserted, +-54%). The added seeds cost about 12 s of test time (best of two on a
//! machine with load 4 on 2 cores), half of it the roce-400g 32:1 incast's 272 extra packet
//! runs (~20 ms each). The roce-400g 32:1 incast's +10-11% is the flow engine's per-NAK charge
//! of its group's mean queueing delay (191 us): the packet engine's NAKs there cost 20-140 us
//! each depending on when they fall (traced: ~110 us in the first 200 us, 20-40 us at
//! 300-500 us, 125-140 us after 700 us), which a mean wait does not follow.
//!
//! The lossless all-to-all's mean FCT: the packet engine's NIC serves its QPs a packet each in
//! turn (`sim::engine::nic_tx`), so of 127 messages of 4 packets the k-th posted (k >= 2) ends
//! in the last round, a frame after the (k-1)-th (34.4 us for k = 2 to 44.5 us for k = 127 on
//! ib-ndr), and the first, served at once and so a packet ahead, a round earlier (23.9 us);
//! the fluid ended them all together (44.0-44.5 us: +12.2% ib-ndr, +11.1% roce-400g). The flow
//! engine now ends them in that order (`flow::nic_rr`): 33.7 to 44.0 us and 23.2 us, mean
//! 39.50 / 39.06 us (-1.1%) on ib-ndr, 40.91 / 40.10 us (-2.0%) on roce-400g, asserted
//! (`fabricsim-lab rr` prints the FCT by post order).
//!
//! The lossless all-to-all of 16 KB among 256 and 512 hosts (`fabricsim-lab dense`, release):
//! packet / flow mean FCT, p99, collective time: ib-ndr 256 77.39 / 76.05 us (-1.7%), 87.27 /
//! 86.07 (-1.4%), 87.69 / 86.67 (-1.2%); 512 151.78 / 149.95 (-1.2%), 172.13 / 170.32 (-1.0%),
//! 172.72 / 171.09 (-0.9%); roce-400g 256 82.76 / 79.34 (-4.1%), 93.54 / 89.21 (-4.6%), 94.39 /
//! 90.63 (-4.0%); 512 160.33 / 154.64 (-3.6%), 181.75 / 174.88 (-3.8%), 191.06 / 184.60 (-3.4%).
//! Every flow starts at once, more than `calibration::LOSSLESS_MODELS_MAX_ACTIVE`, so port service and
//! the NICs' send stage are off (on ib-ndr already at 128 hosts: 130,048 adaptive subflows);
//! forced on they moved the ib-ndr mean to -11.8% (128) and -10.7% (256): port service gives the
//! flows within a leaf their own input port of the receiver's egress, 22.6 / 17.5 us against the
//! packet engine's 39.6 / 76.6, where each sender's round robin offers that egress exactly its
//! line and the packet engine ends them with the others; the send stage capped them at that
//! share and lifted the caps once they worked. It keeps them now (`flow::nic_send`), and
//! forced on gives the per-flow figures (`tests/flow_nic_send.rs`).
//!
//! The mixed-port incast (several flows per input port of the receiver's leaf) is asserted
//! since the solver serves a lossless egress to a NIC per input port (`flow::maxmin`'s port
//! service): +2.3% (ib-ndr) and +1.1% (roce-400g) mean FCT, from +11% and +25% per flow.
//!
//! "incast 32:1 + victims" (lossless only) adds eight 1 MB flows to other hosts: four into the
//! receiver's leaf, four from incast senders' NICs. On ib-ndr (credits, no IB CC) the four into
//! the leaf wait behind the incast in the spine queues into that leaf (packet mean 418.6 us,
//! largest 434.2, under AR by normalized credits; 332-503 us, mean 407.8, by least queued bytes;
//! alone 23.7 us); the flow engine charges that wait (`flow::hol`: 426.0 us, was 23.7). Those
//! victims are asserted on their own (mean +1.8%, largest -1.9%); the four from a sender's NIC are asserted on ib-ndr (`flow::nic_send`: the
//! NIC is never held, and the victim gets half its line until the NIC's incast flow has put its
//! 1 MB on the wire, 42 us: 44.8 us on both engines, was 24.4 us flow; `fabricsim-lab
//! nicshare`) and on roce-400g each within 10%: 33.3 / 34.5 us (was 24.9 flow): there the
//! incast QP takes its share until DCQCN cuts it below that share, ~14 us, then a cut per 4
//! us monitor period (`fabricsim-lab roce-nic-trace`), and `dcqcn_incast::Onsets` follows
//! the mean-field reaction point's cuts (10.1 us to about the share, 14.1 us to 104 Gb/s,
//! 22.1 us to 55) where `dcqcn_incast` capped it from its start. The same case at 1,024 GPUs
//! (99:1): on ib-ndr, AR by normalized credits spreads the incast over every spine and the
//! victims wait behind full queues, which `flow::hol` prices (asserted below: mean +8.3%,
//! largest +5.8%; by least queued bytes their waits followed AR's scan order, outside the
//! model, `fabricsim-lab ar-trace`); on roce-400g DCQCN cuts them, which
//! `flow::dcqcn_victim` models (asserted below within 10%, the one behind a downlink the
//! leaf's PFC pauses, `flow::pfc_pause`, too).
//!
//! The 32:1 incast on roce-400g is asserted with and without loss since the flow engine models
//! DCQCN's over-cut of synchronized starters (`flow::dcqcn_incast`: 978 us against 687 us of
//! bytes; the packet engine 968 us since its pacer rescales a pending gap on a rate change,
//! HPCC ns-3's `RdmaHw::ChangeRate`; it took 8.7 ms before). The mixed-port incast with loss on
//! roce-400g: its 99 senders put their 256 KB on the wire before the first CNP, and DCQCN cuts
//! their QPs while the packets queue, so a go-back-N resend leaves at the cut rate until the
//! rate-increase timer (300 us) fires after the last cut: on the packet engine a NAKed message
//! ends 301-348 us after its lossless FCT whatever the NAK's time, and a second NAK adds 0-40
//! us (traced over 30 seeds). The flow engine charges that timer once per NAKed message
//! (`groups::ResendWait::AfterTimer`); it charged the group's mean queueing delay per NAK,
//! which put 2.3% of the messages past 1 ms (packet 0.94%) and the pooled p99 at 1250.6 us
//! against 874.3 us (+43%, 64 seeds; +22.6% at 8). Mean FCT 504.1 / 512.0 us (+1.6%).
//!
//! The lossy all-to-all's collective time is asserted over 176 / 300 seeds in a test of its
//! own: it is the run's last completion, lossless time plus one ACK timeout (65.5 us) or two
//! when any of the run's ~280 (ib-ndr) / ~65 (roce-400g) timed-out messages waits a second one,
//! so it swings by a whole RTO from run to run (standard deviation 16% / 22% of the mean), and
//! the gate's 2 s.e. within 2.5% needs about 170 / 300 packet runs (98 s of the test on a loaded
//! machine). Packet 157.06 us, flow 163.43 us (+4.1%) on ib-ndr; 128.32 us, 132.61 us (+3.3%) on
//! roce-400g. See `flow::loss` for the second-timeout probability this rests on (the -10%/-11%
//! at 4 seeds were sampling error plus, on ib-ndr, a second timeout after a lost tail drawn with
//! `p_h` instead of `1 - (1 - p_h)^2`).
//!
//! Each lossy case's ACK timeout follows one rule (`flow_cases::timeout_exp`): the smallest
//! 4.096 us x 2^e, e >= 4, above the largest FCT of its lossless run, as a deployment keeps its
//! RTO above the round trip with queueing. The incasts get 1.05 ms; at 65.5 us the timer fired
//! about 5 times per 1 MB message in the 32:1 ib-ndr incast (credit back-pressure queues for
//! 0.7 ms, so each resend timed out again), a regime the flow engine does not model and now
//! warns about. The other cases keep 65.5 us. The ring all-reduce on ib-ndr with loss is
//! within +1.2% over 160 seeds since the `rng::mix` fix (it was +5.3% when the packet engine's
//! loss streams shared seeds).

use fabricsim_cases::flow_cases;

use fabricsim::engine_choice::EngineKind;
use fabricsim_cases::flow_cases::{Case, err};

const MEAN_TOL: f64 = 0.10;
const P99_TOL: f64 = 0.20;
const COLLECTIVE_TOL: f64 = 0.05;
/// Runs below which a mean over runs is not gated by its standard error: a run's p99 is
/// two-valued when the run's share of timed-out messages straddles 1% (the permutation of
/// 1,024 x 256 KB: four packet runs all above the cliff, four flow runs one below, -24%), and
/// the normal approximation of its mean wants some 30 runs.
const MIN_RUNS: usize = 30;

/// Compares `c` over its seeds; returns the failed and the unasserted quantities.
fn compare(c: &Case, gate: bool) -> (Vec<String>, Vec<String>) {
    let p = flow_cases::pooled(c, EngineKind::Packet);
    let f = flow_cases::pooled(c, EngineKind::Flow);
    println!("{}", flow_cases::row(c, &p, &f));
    let (se_mean, se_last) = p.rel_se();
    let mut checks = vec![];
    let mean = (
        "mean FCT",
        p.mean(),
        f.mean(),
        MEAN_TOL,
        2.0 * se_mean <= MEAN_TOL / 2.0,
        2.0 * se_mean,
    );
    if c.collective {
        checks.push((
            "collective time",
            p.last(),
            f.last(),
            COLLECTIVE_TOL,
            2.0 * se_last <= COLLECTIVE_TOL / 2.0,
            2.0 * se_last,
        ));
        // Without loss its messages' mean too (the all-to-all's rests on `flow::nic_rr`).
        if c.loss == 0.0 {
            checks.push(mean);
        }
        // A lossless all-to-all with more flows than the lossless models take also runs as
        // flow classes (`flow::dense`), its time held to the same tolerance.
        if let Some(end) = dense_end(c) {
            checks.push((
                "collective time as flow classes",
                p.last(),
                end as f64,
                COLLECTIVE_TOL,
                2.0 * se_last <= COLLECTIVE_TOL / 2.0,
                2.0 * se_last,
            ));
        }
    } else {
        checks.push(mean);
        let w = p.p99_rel_interval();
        checks.push(("p99 FCT", p.p99(), f.p99(), P99_TOL, w <= P99_TOL, w));
        let se_run_p99 = p.rel_se_run_p99();
        checks.push((
            "run p99 FCT (mean over seeds)",
            p.run_p99(),
            f.run_p99(),
            P99_TOL,
            p.run_p99s.len() >= MIN_RUNS && 2.0 * se_run_p99 <= P99_TOL / 2.0,
            2.0 * se_run_p99,
        ));
    }
    let (mut failed, mut skipped) = (vec![], vec![]);
    for (what, a, b, tol, conditioned, noise) in checks {
        let line = format!(
            "{} on {} at {}% loss: {what} packet {:.2} us, flow {:.2} us ({:+.1}%, tolerance {}%, packet 95% interval +-{:.1}%)",
            c.name,
            c.fabric,
            100.0 * c.loss,
            a / 1e6,
            b / 1e6,
            100.0 * err(a, b),
            100.0 * tol,
            100.0 * noise,
        );
        if gate && !conditioned {
            skipped.push(line);
        } else if err(a, b).abs() > tol {
            failed.push(line);
        }
    }
    (failed, skipped)
}

/// The last completion of `c` run as flow classes, when it is an all-to-all they take.
fn dense_end(c: &Case) -> Option<u64> {
    use fabricsim::flow::dense::{self, AllToAll};
    let bytes = c.dag.messages.first()?.bytes;
    let n = c.hosts as usize;
    let dense = c.name.starts_with("all-to-all")
        && c.dag.messages.len() == n * (n - 1)
        && c.dag.messages.iter().all(|m| m.bytes == bytes);
    if !dense || c.loss > 0.0 {
        return None;
    }
    let (topo, p) = flow_cases::fabric(c.hosts, c.fabric);
    let fp = fabricsim::engine_choice::flow_params(&topo, &p);
    // Every message goes over the fabric (`flow_cases::all_to_all`): a server per host.
    let hosts: Vec<_> = (0..c.hosts).map(fabricsim::topology::HostId).collect();
    let servers: Vec<u32> = (0..c.hosts).collect();
    let a = AllToAll {
        hosts: &hosts,
        servers: &servers,
        bytes,
        channels: 1,
        nvlink: fabricsim::units::BitRate::gbps(3600),
    };
    let r = dense::all_to_all(&topo, &p, &fp, &a).expect("valid parameters");
    let end = r.ok().map(|d| d.end_ps)?;
    println!(
        "{} on {}: as flow classes {:.2} us",
        c.name,
        c.fabric,
        end as f64 / 1e6
    );
    Some(end)
}

/// Compares the cases `pick` selects (gated by sampling error when `gate`); prints the table and
/// every quantity not asserted with the reason; returns the failures.
fn compare_all(pick: impl Fn(&Case) -> bool, gate: bool) -> Vec<String> {
    println!("{}", flow_cases::HEADER);
    let (mut failures, mut printed) = (Vec::new(), Vec::new());
    for c in flow_cases::cases().into_iter().filter(|c| pick(c)) {
        let (f, noisy) = compare(&c, gate);
        let why = "the packet engine's sampling error (under 30 runs, its estimate) is too large for the tolerance";
        printed.extend(noisy.into_iter().map(|l| format!("{l}: {why}")));
        failures.extend(f);
    }
    println!("not asserted:");
    for l in &printed {
        println!("  {l}");
    }
    failures
}

#[test]
fn flow_engine_matches_the_packet_engine_on_the_shared_cases() {
    println!("{}", flow_cases::HEADER);
    let failures = compare_all(|c| c.loss == 0.0, false);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// PFC / credit head-of-line blocking (`flow::hol`): in "incast 32:1 + victims" (128 GPUs),
/// four 1 MB flows go from hosts of another leaf to hosts of the receiver's leaf while the
/// incast runs. On ib-ndr (credits, no IB CC) they wait behind the incast's bytes in the spine
/// queues into that leaf: packet mean 418.6 us, largest 434.2 (AR by normalized credits)
/// against 23.7 us alone. On roce-400g
/// the 128 MB buffer and DCQCN pause nothing and they take 24.4 us. Their mean FCT within 10% and
/// their largest within 20% of the packet engine's (`fabricsim-lab hol`). The four victims
/// that share an incast sender's NIC get half its line while the switch absorbs the incast
/// (`flow::nic_send`: 44.8 us on both engines on ib-ndr, was 24.4 us flow), asserted the same
/// way on ib-ndr, and on roce-400g each within 10% (packet 33.3 us, flow 34.5 us, was 24.9):
/// the incast QP sends at its share until DCQCN cuts it below (~14 us), then at the cut rates
/// (`dcqcn_incast::Onsets`; `fabricsim-lab roce-nic-trace`).
#[test]
fn victims_of_an_incast_wait_behind_it_as_in_the_packet_engine() {
    let mut failures = Vec::new();
    for c in flow_cases::cases()
        .into_iter()
        .filter(|c| c.name == "incast 32:1 + victims")
    {
        let runs = [EngineKind::Packet, EngineKind::Flow].map(|k| flow_cases::run(&c, k, 1));
        // Victims into the receiver's leaf go to hosts 1..=8, those from a sender's NIC to the
        // first half's upper quarter (`flow_cases::incast_victims`); the incast goes to host 0.
        let fcts = |r: &fabricsim::sim::RunResult, into: bool| -> Vec<f64> {
            r.messages
                .iter()
                .filter(|m| m.dst != 0 && (m.dst < c.hosts / 4) == into)
                .map(|m| m.fct_ps.expect("completed") as f64)
                .collect()
        };
        for into in [true, false] {
            let [p, f] = [&runs[0], &runs[1]].map(|r| fcts(r, into));
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
            let kind = if into {
                "into the leaf"
            } else {
                "from a sender's NIC"
            };
            println!(
                "{} victims {kind}: mean {:.2} / {:.2} us ({:+.1}%), largest {:.2} / {:.2} us ({:+.1}%)",
                c.fabric,
                mean(&p) / 1e6,
                mean(&f) / 1e6,
                100.0 * err(mean(&p), mean(&f)),
                max(&p) / 1e6,
                max(&f) / 1e6,
                100.0 * err(max(&p), max(&f)),
            );
            assert_eq!(p.len(), 4);
            let bad =
                err(mean(&p), mean(&f)).abs() > MEAN_TOL || err(max(&p), max(&f)).abs() > P99_TOL;
            // On roce-400g each victim from a sender's NIC within 10% too (`dcqcn_incast::Onsets`).
            let each =
                |v: &[f64], w: &[f64]| v.iter().zip(w).all(|(a, b)| err(*a, *b).abs() <= MEAN_TOL);
            let bad = bad || (!into && c.fabric == "roce-400g" && !each(&p, &f));
            if bad {
                failures.push(format!("{} on {}: victims {kind}", c.name, c.fabric));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// DCQCN's cut of an incast's victims (`flow::dcqcn_victim`; `fabricsim-lab victim-cnp`):
/// the roce-400g case of `fabricsim-lab hol-trace` (1,024 GPUs, 99:1 x 1 MB incast + 8
/// victims of 1 MB). The victims into the receiver's leaf cross spine downlinks (and one leaf
/// uplink) that the start-up burst fills above Kmin, and DCQCN cuts them there: packet 373.3,
/// 163.6, 771.0, 371.9 us against 27-48 us without the model; flow 366.6, 170.9, 791.7, 366.6
/// (victim 4's spine downlink paused by the leaf's PFC, `flow::pfc_pause`: 427.4 without it;
/// 531.3 with session 10's pause model, which had no headroom and a lower burst peak).
/// Asserted: the victims into the leaf whose path crosses no egress the packet engine paused
/// each within 10%, their mean within 10%; the paused one within 10% too (its downlink drains
/// in bursts a pause apart to ~460 us on both engines: see `pfc_pause`) and above each of the
/// others, and the mean of all four within 10%; the victims from a sender's NIC each within
/// 10% (the NIC's round robin until DCQCN cuts its incast QP, `dcqcn_incast::Onsets`: packet 46.2, 48.4, 42.2, 42.2 us,
/// flow 48.2, 48.2, 43.2, 43.2; 27.0 before). One packet run: the test takes 0.2 s (dev
/// profile, loaded 2-core machine).
#[test]
fn dcqcn_cuts_an_incasts_victims_as_in_the_packet_engine() {
    let flow_cases::VictimRuns {
        topo,
        p,
        dag,
        senders: n,
        packet: pr,
        flow: fr,
    } = flow_cases::victim_runs("roce-400g");
    let paused: Vec<u32> = pr
        .flow_control
        .iter()
        .flat_map(|fc| &fc.ports)
        .filter(|pf| pf.paused_ps > 0)
        .map(|pf| {
            fabricsim::flow::paths::directed_link(&topo, fabricsim::topology::PortId(pf.port))
        })
        .collect();
    let us = flow_cases::fct_us;
    let (mut pk, mut fk) = (Vec::new(), Vec::new());
    // The victims into the leaf behind a paused egress, packet / flow us.
    let mut held_pf = Vec::new();
    let mut failures = Vec::new();
    for k in 0..8 {
        let m = n + k;
        let held = flow_cases::qp_links(&topo, &p, &dag, m)
            .iter()
            .any(|l| paused.contains(l));
        let (a, b) = (us(&pr, m), us(&fr, m));
        let into = k % 2 == 0;
        println!(
            "victim {k} ({}{}): packet {a:.1} us, flow {b:.1} us ({:+.1}%)",
            if into {
                "into the leaf"
            } else {
                "from a sender's NIC"
            },
            if held { ", behind a paused egress" } else { "" },
            100.0 * err(a, b)
        );
        if into && held {
            held_pf.push((a, b));
            if err(a, b).abs() > MEAN_TOL {
                failures.push(format!("victim {k} (paused): {a:.1} / {b:.1} us"));
            }
        } else if into {
            pk.push(a);
            fk.push(b);
        }
        if (!into || !held) && err(a, b).abs() > MEAN_TOL {
            failures.push(format!("victim {k}: {a:.1} / {b:.1} us"));
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    println!(
        "victims into the leaf, not paused: mean {:.1} / {:.1} us",
        mean(&pk),
        mean(&fk)
    );
    assert!(
        pk.len() >= 2,
        "most victims into the leaf cross no paused egress"
    );
    if err(mean(&pk), mean(&fk)).abs() > MEAN_TOL {
        failures.push("their mean".into());
    }
    // The paused victim is cut longest on both engines.
    if held_pf.iter().any(|&(_, b)| fk.iter().any(|&f| f >= b)) {
        failures.push("a paused victim ends before an unpaused one".into());
    }
    let all_p: Vec<f64> = pk
        .iter()
        .copied()
        .chain(held_pf.iter().map(|h| h.0))
        .collect();
    let all_f: Vec<f64> = fk
        .iter()
        .copied()
        .chain(held_pf.iter().map(|h| h.1))
        .collect();
    println!(
        "all victims into the leaf: mean {:.1} / {:.1} us",
        mean(&all_p),
        mean(&all_f)
    );
    if err(mean(&all_p), mean(&all_f)).abs() > MEAN_TOL {
        failures.push("the mean of all victims into the leaf".into());
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Adaptive routing by credits and its victims (`flow::hol`, `flow::paths`' adaptive split):
/// the ib-ndr case of `fabricsim-lab hol-trace` (1,024 GPUs, 99:1 x 1 MB incast + 8
/// victims of 1 MB). AR by normalized credits (`sim::ibroute`, US 10,200,294 B2) spreads the
/// incast over all 16 spines, all 32 downlinks into the receiver's leaf hold for 1.8-1.9 ms, and
/// the four victims into that leaf wait behind the full queues: packet 1,873.7, 1,849.1,
/// 1,922.8, 1,870.4 us, flow 2,035.1 each (by least queued bytes the incast stacked in the
/// first spines and the victims took 564-2,050 us, which no fluid rule follows). Asserted:
/// their mean within 10% and their largest within 20%; the victims from a sender's NIC each
/// within 10% (`flow::nic_send`, 44.8 us on both).
#[test]
fn ar_by_credits_victims_at_1024_gpus_wait_as_in_the_packet_engine() {
    let flow_cases::VictimRuns {
        senders: n,
        packet: pr,
        flow: fr,
        ..
    } = flow_cases::victim_runs("ib-ndr");
    let us = flow_cases::fct_us;
    let mut failures = Vec::new();
    let (mut pk, mut fk) = (Vec::new(), Vec::new());
    for k in 0..8 {
        let (a, b) = (us(&pr, n + k), us(&fr, n + k));
        let into = k % 2 == 0;
        println!(
            "victim {k} ({}): packet {a:.1} us, flow {b:.1} us ({:+.1}%)",
            if into {
                "into the leaf"
            } else {
                "from a sender's NIC"
            },
            100.0 * err(a, b)
        );
        if into {
            pk.push(a);
            fk.push(b);
        } else if err(a, b).abs() > MEAN_TOL {
            failures.push(format!("victim {k}: {a:.1} / {b:.1} us"));
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let max = |v: &[f64]| v.iter().cloned().fold(0.0, f64::max);
    let (m, x) = (err(mean(&pk), mean(&fk)), err(max(&pk), max(&fk)));
    println!(
        "victims into the leaf: mean {:.1} / {:.1} us ({:+.1}%), largest {:.1} / {:.1} us ({:+.1}%)",
        mean(&pk),
        mean(&fk),
        100.0 * m,
        max(&pk),
        max(&fk),
        100.0 * x
    );
    if m.abs() > MEAN_TOL || x.abs() > P99_TOL {
        failures.push("victims into the leaf".into());
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The lossy all-to-all, whose collective time needs more seeds than the other cases (its own
/// test below).
fn lossy_all_to_all(c: &Case) -> bool {
    c.loss > 0.0 && c.collective && c.name.starts_with("all-to-all")
}

#[test]
fn flow_engine_matches_the_packet_engine_under_loss_in_distribution() {
    let failures = compare_all(|c| c.loss > 0.0 && !lossy_all_to_all(c), true);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The lossy all-to-all's collective time swings by a whole ACK timeout from run to run
/// (module comment), so it is compared over as many seeds as the gate needs: 2 s.e. of the
/// packet engine's mean within half the tolerance takes about 170 runs on ib-ndr (s.d. 16% of
/// the mean) and 300 on roce-400g (22%).
#[test]
fn lossy_all_to_all_collective_time_over_enough_seeds() {
    println!("{}", flow_cases::HEADER);
    let mut failures = Vec::new();
    for mut c in flow_cases::cases().into_iter().filter(lossy_all_to_all) {
        c.seeds = if c.fabric == "ib-ndr" { 176 } else { 300 };
        let (failed, ungated) = compare(&c, true);
        assert!(
            ungated.is_empty(),
            "still within sampling error: {ungated:#?}"
        );
        failures.extend(failed);
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The flow engine warns when a run's ACK timeout is not above its longest queueing delay
/// (`flow::LossModel::rto_warning`): the 32:1 ib-ndr incast's flows drain for 0.68 ms beyond
/// their 21 us alone, so the old 65.5 us timeout warns and the rule's (`flow_cases::
/// timeout_exp`: 1.05 ms) does not.
#[test]
fn the_timeout_rule_stays_above_the_queueing_delay_the_engine_warns_about() {
    let c = flow_cases::cases()
        .into_iter()
        .find(|c| c.name == "incast 32:1 1 MB" && c.fabric == "ib-ndr" && c.loss > 0.0)
        .expect("the lossy 32:1 ib-ndr incast");
    // The run's results carry the warning (`sim.warnings`; `fabricsim sim` prints it).
    let warned = |exp: u8| {
        let (topo, mut p) = flow_cases::fabric(c.hosts, c.fabric);
        p.loss_rate = c.loss;
        p.timeout_exp = exp;
        let r = fabricsim::engine_choice::run(
            EngineKind::Flow,
            &topo,
            &p,
            &c.dag,
            &Default::default(),
            Default::default(),
        )
        .expect("valid case");
        r.sim.warnings
    };
    assert_eq!(c.timeout_exp, 8);
    let w = warned(flow_cases::LOSS_TIMEOUT_EXP);
    assert!(w.len() == 1 && w[0].contains("timeout"), "{w:?}");
    assert!(warned(c.timeout_exp).is_empty());
}
