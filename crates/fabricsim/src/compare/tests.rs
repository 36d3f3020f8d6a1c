use super::model::{default_scenario, run};
use super::recommend::recommend;
use fabricsim_core::estimate::Estimate;
use fabricsim_input::scenario::Scenario;

/// The built-in comparison with `extra` TOML appended to it (sections it lacks), without the
/// claims section (its runs at other cluster sizes: `tests/compare_claims.rs`).
fn with(extra: &str, compare: &str) -> Scenario {
    let base = super::model::DEFAULT_SCENARIO;
    let head = &base[..base.find("[compare]").expect("default has [compare]")];
    let text = format!("{head}{extra}\n[compare]\nclaims = \"off\"\n{compare}");
    Scenario::parse("test.toml", &text).unwrap()
}

const TWO: &str = r#"fabric_runs = false
seeds = 2
fabrics = [
  { name = "ib", profile = "ib-ndr" },
  { name = "roce", profile = "roce-400g" },
]"#;

#[test]
fn default_comparison_times_steps_whole_on_the_flow_engine_and_stresses_on_packets() {
    let c = run(&default_scenario()).unwrap();
    let names: Vec<&str> = c.fabrics.iter().map(|f| f.variant.name.as_str()).collect();
    assert_eq!(
        names,
        ["ib-ndr", "roce-400g tuned", "roce-400g untuned", "uec-400g"]
    );
    for f in &c.fabrics {
        assert_eq!(f.design.spec.gpus, 256);
        assert!(f.plan.cost.network_capex_usd > 0.0);
    }
    // Every fabric's step DAG runs (dense, TP 8 on a server, no DP ranks sharing one): the step
    // is timed whole on the flow engine, its passes and its ideal; no per-collective fit runs.
    for f in &c.fabrics {
        let by = &f.delivered.as_ref().unwrap().step_timed_by;
        assert!(by.starts_with(super::model::WHOLE_STEP), "{by}");
        let e = f.engine.as_ref().expect("engine-timed step");
        assert!(
            e.runs >= 2 && e.flow_runs == e.runs && e.unfitted.is_empty(),
            "{e:?}"
        );
    }
    // Loss (1e-4 per packet per link) is costed in expectation at the step's real sizes: the
    // calibration runs are lossless, the step pays the expected retransmissions and timeouts.
    let untuned = &c.fabrics[2];
    let e = untuned.engine.as_ref().unwrap();
    let l = e
        .loss
        .as_ref()
        .expect("the untuned fabric's loss is costed");
    assert!(e.retransmitted_packets == 0 && e.timeouts == 0, "{e:?}");
    assert!(
        l.retransmitted_per_step > 0.0 && l.timeouts_per_step > 0.0 && l.step_s_added > 0.0,
        "{l:?}"
    );
    assert!(
        c.fabrics[..2]
            .iter()
            .all(|f| f.engine.as_ref().unwrap().loss.is_none())
    );
    for f in &c.fabrics {
        // Measured busbw: all-reduce and all-to-all at every size; all-reduce busbw grows with
        // the size (alpha amortized: busbw = S/t x 2(n-1)/n rises toward the bandwidth term),
        // unless a lost tail packet cost a run the RC timeout (only the lossy fabric may).
        assert_eq!(f.busbw.len(), 2);
        let ar = &f.busbw[0].points;
        assert_eq!(ar.len(), 3);
        let lossy = f.variant.name.ends_with("untuned");
        assert!(lossy || f.busbw[0].timeouts == 0, "{:?}", f.busbw[0]);
        if f.busbw[0].timeouts == 0 {
            assert!(
                ar[0].1.mean < ar[1].1.mean && ar[1].1.mean < ar[2].1.mean,
                "{ar:?}"
            );
        }
        // Stress: every percentile ordered, every message accounted for.
        let s = f.stress.as_ref().unwrap();
        for x in [&s.background, &s.incast] {
            assert!(x.messages > 0 && x.completed == x.messages, "{x:?}");
            assert!(x.fct_p50_ps <= x.fct_p99_ps && x.fct_p99_ps <= x.fct_p999_ps);
        }
        assert_eq!(s.background_fct_us.len() as u64, s.background.completed);
        // Ping-pong: through 1, 3 and 5 switches, each two more switches add at least two
        // switch latencies of the catalog's switch (store-and-forward or cut-through alike).
        let p = f.probes.as_ref().unwrap();
        let hops: Vec<u32> = p.ping_pong.iter().map(|x| x.switch_hops).collect();
        assert_eq!(hops, [1, 3, 5]);
        let (sw, nic) = (f.design.switch.latency_ns, f.design.nic.latency_ns);
        assert!(p.ping_pong[0].latency_ns.mean >= 2.0 * nic + sw);
        for w in p.ping_pong.windows(2) {
            assert!(
                w[1].latency_ns.mean >= w[0].latency_ns.mean + 2.0 * sw,
                "{w:?}"
            );
        }
        // The long flow: at most the profile's payload rate, within 10% of it without loss.
        let l = p.long_flow.as_ref().unwrap();
        let pr = &f.design.profile;
        let ceiling = pr.ports.rate_gbps as f64 * pr.packet.mtu_bytes as f64
            / pr.wire_bytes(pr.packet.mtu_bytes) as f64;
        assert!(l.goodput_gbps.hi <= ceiling * 1.0001, "{l:?} {ceiling}");
        assert!(l.goodput_gbps.mean > 0.9 * ceiling, "{l:?} {ceiling}");
    }
    // Mechanisms at work under stress: InfiniBand waits for credits and never pauses or
    // drops; tuned RoCE marks ECN and sends CNPs (DCQCN); untuned RoCE has no reaction point,
    // and its random loss costs go-back-N retransmissions.
    let (ib, tuned, untuned) = (
        c.fabrics[0].stress.as_ref().unwrap(),
        c.fabrics[1].stress.as_ref().unwrap(),
        c.fabrics[2].stress.as_ref().unwrap(),
    );
    assert!(ib.credit_stall_time_ps > 0 && ib.pause_frames == 0 && ib.packets_dropped == 0);
    assert!(tuned.ecn_marks > 0 && tuned.cnps > 0 && tuned.packets_dropped == 0);
    assert!(untuned.cnps == 0 && untuned.retransmitted_packets > 0);
    // The same fabric with and without loss: the latencies agree (a ping-pong rarely meets a
    // loss at 1e-4), the switch decides them: InfiniBand's 130 ns switch beats 600 ns.
    let lat = |i: usize| {
        c.fabrics[i].probes.as_ref().unwrap().ping_pong[1]
            .latency_ns
            .mean
    };
    assert!(lat(0) < lat(1));
    // Relative figures: the best is 1.0 by construction, the others are ratios of the models.
    let best = c
        .relative
        .iter()
        .filter_map(|r| r.throughput_vs_best)
        .fold(0.0, f64::max);
    assert_eq!(best, 1.0);
    assert!(c.relative.iter().any(|r| r.network_capex_vs_lowest == 1.0));
}

#[test]
fn progress_names_each_fabric_and_stage_and_counts_to_the_total() {
    let seen = std::sync::Mutex::new(Vec::new());
    let tell = |s: &super::progress::Stage| {
        seen.lock()
            .unwrap()
            .push((s.fabric.to_string(), s.stage, s.done, s.total));
    };
    let c = super::model::run_with(&with("", TWO), &tell).unwrap();
    let seen = seen.into_inner().unwrap();
    // Without fabric runs: each fabric's training step starts and ends once per seed (2), then
    // the loss sweep's 8 points on the RoCE fabric, one report each.
    for f in ["ib", "roce"] {
        let steps = seen.iter().filter(|s| s.0 == f && s.1 == "training step");
        assert_eq!(steps.count(), 4, "{f}: {seen:?}");
    }
    let sweep = seen.iter().filter(|s| s.1 == "loss sweep").count();
    assert_eq!(sweep, c.loss_sweep.as_ref().unwrap().1.len());
    let last = seen.last().unwrap();
    assert_eq!((last.2, last.3), (4 + sweep, 4 + sweep), "{seen:?}");
}

#[test]
fn cost_per_token_is_cluster_tco_over_tokens_of_the_period() {
    // Seed by seed, then the mean over the seeds.
    let c = run(&with("", "fabric_runs = false\nseeds = 2")).unwrap();
    let f = &c.fabrics[2];
    let d = f.delivered.as_ref().unwrap();
    let seconds = 5.0 * 8760.0 * 3600.0;
    let (tp, t) = (d.tokens_per_period.mean, d.tokens_per_s.mean);
    assert!((tp - t * seconds).abs() / tp < 1e-12);
    let by_seed = &d.tokens_per_s_by_seed;
    assert_eq!(by_seed.len(), 2);
    let expect = by_seed
        .iter()
        .map(|t| f.plan.cost.cluster_tco_usd / (t * seconds / 1e6))
        .sum::<f64>()
        / 2.0;
    let got = d.usd_per_million_tokens.mean;
    assert!((got - expect).abs() / expect < 1e-12);
}

#[test]
fn a_catalog_price_change_moves_capex_and_cost_per_throughput() {
    let base = run(&with("", TWO)).unwrap();
    let dear = run(&with("[cost.prices_usd]\nqm9700 = 150000\n", TWO)).unwrap();
    let (b, d) = (&base.fabrics[0], &dear.fabrics[0]);
    let switches: u64 = b.plan.bom.tiers.iter().map(|t| t.switches).sum();
    // Every QM9700 costs 100,000 USD more (50,000 in the catalog): CAPEX moves by exactly that
    // and its spares.
    let moved = d.plan.cost.network_capex_usd - b.plan.cost.network_capex_usd;
    let spares = b.design.cost.spares_share;
    assert!(
        (moved - 100_000.0 * switches as f64 * (1.0 + spares)).abs() < 1e-6,
        "{moved}"
    );
    let (bd, dd) = (b.delivered.as_ref().unwrap(), d.delivered.as_ref().unwrap());
    assert_eq!(
        bd.tokens_per_s, dd.tokens_per_s,
        "throughput does not depend on prices"
    );
    assert!(dd.usd_per_million_tokens.mean > bd.usd_per_million_tokens.mean);
    // The RoCE fabric has no QM9700: unchanged.
    assert_eq!(
        base.fabrics[1].plan.cost.network_capex_usd,
        dear.fabrics[1].plan.cost.network_capex_usd
    );
}

#[test]
fn recommendation_follows_weights_and_constraints() {
    // Cost only: the lowest cost per token wins; performance only: the highest tokens/s wins
    // (ties broken by order, so assert against the computed numbers, not a name).
    for (wp, wc) in [(0.0, 1.0), (1.0, 0.0)] {
        let c = run(&with(
            "",
            &format!("{TWO}\nweights = {{ performance = {wp}, cost = {wc} }}"),
        ))
        .unwrap();
        let r = recommend(&c);
        let key = |f: &super::model::FabricResult| {
            let d = f.delivered.as_ref().unwrap();
            if wp > 0.0 {
                d.tokens_per_s.mean
            } else {
                -d.usd_per_million_tokens.mean
            }
        };
        let best = c
            .fabrics
            .iter()
            .max_by(|a, b| key(a).total_cmp(&key(b)))
            .unwrap();
        assert_eq!(r.fabric.as_deref(), Some(best.variant.name.as_str()));
    }
    // A network budget between the two CAPEX figures leaves only the cheaper fabric.
    let c = run(&with("", TWO)).unwrap();
    let (a, b) = (
        c.fabrics[0].plan.cost.network_capex_usd,
        c.fabrics[1].plan.cost.network_capex_usd,
    );
    let cheap = if a < b { "ib" } else { "roce" };
    let c = run(&with(
        "",
        &format!("{TWO}\nnetwork_budget_usd = {}", (a + b) / 2.0),
    ))
    .unwrap();
    let r = recommend(&c);
    assert_eq!(r.fabric.as_deref(), Some(cheap));
    assert!(r.reasons.iter().any(|x| x.contains("over the budget")));
    // Every InfiniBand switch in the catalog is one vendor's: excluded on request.
    let c = run(&with(
        "",
        &format!("{TWO}\nsingle_vendor = \"exclude\"\nweights = {{ performance = 1, cost = 0 }}"),
    ))
    .unwrap();
    let r = recommend(&c);
    assert!(r.scores[0].single_vendor && !r.scores[0].eligible);
    assert!(
        !r.scores[1].single_vendor,
        "Ethernet has several switch vendors"
    );
    assert_eq!(r.fabric.as_deref(), Some("roce"));
    // A scale no 3-tier fabric of these switches reaches excludes both.
    let c = run(&with("", &format!("{TWO}\nscale_gpus = 10000000"))).unwrap();
    assert_eq!(recommend(&c).fabric, None);
}

#[test]
fn bad_fabric_entries_name_the_key_and_line() {
    let e = run(&with("", "fabrics = [ { profile = \"ib-nd\" } ]")).unwrap_err();
    assert_eq!(e.key, "compare.fabrics[0].profile");
    assert!(e.line.is_some() && e.allowed.contains("ib-ndr"), "{e}");
    let e = run(&with(
        "",
        "fabrics = [ { profile = \"ib-ndr\", loss_rate = 2 } ]",
    ))
    .unwrap_err();
    assert_eq!(e.key, "compare.fabrics[0].loss_rate");
    let e = run(&with("", "fabrics = []")).unwrap_err();
    assert_eq!(e.key, "compare.fabrics");
    let e = run(&with(
        "",
        "fabrics = [ { profile = \"ib-ndr\" }, { profile = \"ib-ndr\" } ]",
    ))
    .unwrap_err();
    assert!(e.problem.contains("names two fabrics"));
}

#[test]
fn reports_are_deterministic_and_self_contained() {
    let text = |s: &Scenario| {
        let c = run(s).unwrap();
        let r = recommend(&c);
        (
            crate::report::compare::json(&c, &r).to_string(),
            crate::report::html::compare::report(&c, &r),
        )
    };
    let (j1, h1) = text(&default_scenario());
    let (j2, h2) = text(&default_scenario());
    assert_eq!((&j1, &h1), (&j2, &h2));
    for needle in [
        "busbw_GBps",
        "capex_usd",
        "usd_per_million_tokens",
        "provenance",
    ] {
        assert!(j1.contains(needle), "{needle}");
    }
    // Nothing is fetched: no external URL in src/href, no script.
    assert!(!h1.contains("src=\"http") && !h1.contains("href=\"http") && !h1.contains("<script"));
    assert!(
        h1.matches("<svg").count() == 11,
        "busbw x2, step, CAPEX, TCO, topology, MFU against loss, a CDF per fabric"
    );
}

#[test]
fn raising_the_loss_rate_lowers_mfu() {
    // The same RoCE fabric at rising random loss with go-back-N: the step's collectives run on
    // the packet engine, so loss can only act through retransmissions and timeouts there.
    let fabrics = r#"fabric_runs = false
fabrics = [
  { name = "p0", profile = "roce-400g" },
  { name = "p1e-3", profile = "roce-400g", loss_rate = 1e-3 },
  { name = "p1e-2", profile = "roce-400g", loss_rate = 1e-2 },
]"#;
    let c = run(&with("", fabrics)).unwrap();
    let mfu: Vec<f64> = c
        .fabrics
        .iter()
        .map(|f| f.delivered.as_ref().unwrap().mfu.mean)
        .collect();
    assert!(mfu[0] > mfu[1] && mfu[1] > mfu[2], "{mfu:?}");
    let retx: Vec<f64> = c
        .fabrics
        .iter()
        .map(|f| {
            let e = f.engine.as_ref().unwrap();
            e.loss.as_ref().map_or(0.0, |l| l.retransmitted_per_step)
        })
        .collect();
    assert!(
        retx[0] == 0.0 && retx[1] > 0.0 && retx[2] > retx[1],
        "{retx:?}"
    );
}

/// Issue 23: the default comparison's untuned RoCE (random loss 1e-4 per link, go-back-N, a
/// 4.29 s ACK timeout) is not scored equal to tuned RoCE: its step pays the timeouts its own
/// collectives meet (in expectation), so its throughput and score fall clearly below.
#[test]
fn untuned_roce_with_loss_is_not_scored_equal_to_tuned_roce() {
    let c = run(&default_scenario()).unwrap();
    let tput = |i: usize| c.relative[i].throughput_vs_best.unwrap();
    assert!(tput(2) < 0.9 * tput(1), "{:?}", c.relative);
    let r = recommend(&c);
    let score = |name: &str| {
        r.scores
            .iter()
            .find(|s| s.fabric == name)
            .and_then(|s| s.score)
            .unwrap()
            .mean
    };
    let (tuned, untuned) = (score("roce-400g tuned"), score("roce-400g untuned"));
    assert!(
        tuned - untuned > super::recommend::CLOSE,
        "{tuned} {untuned}"
    );
    // The step shows the expected timeout cost, at the profile's 4.096 us x 2^20 timeout.
    let l = c.fabrics[2].engine.as_ref().unwrap().loss.clone().unwrap();
    assert!(
        (l.rto_s - 4.096e-6 * (1u64 << 20) as f64).abs() < 1e-9,
        "{}",
        l.rto_s
    );
    assert!(l.timeout_share > 0.5 && l.step_s_added > l.rto_s, "{l:?}");
    let step = |i: usize| c.fabrics[i].delivered.as_ref().unwrap().step_time_s.mean;
    assert!((step(2) - step(1) - l.step_s_added).abs() < 0.05 * l.step_s_added);
}

mod sweeps {
    use super::super::sweep::{Param, SweepAxis, apply, check, expand, run};
    use super::super::variant::Variant;
    use super::default_scenario;
    use crate::sim::Transport;

    fn roce() -> Variant {
        Variant::swept(
            "roce-400g",
            crate::setup::engine_choice::EngineChoice::Packet,
        )
    }

    fn axes(a: &str, b: &str) -> Vec<SweepAxis> {
        vec![
            SweepAxis::parse("--param", a).unwrap(),
            SweepAxis::parse("--param", b).unwrap(),
        ]
    }

    #[test]
    fn points_expand_row_major_with_stable_ids() {
        let p = expand(&axes(
            "loss_rate=0,0.01",
            "transport=go-back-n,selective-repeat",
        ));
        let got: Vec<(usize, &str, &str)> = p
            .iter()
            .map(|x| (x.id, x.values[0].1.as_str(), x.values[1].1.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (0, "0", "go-back-n"),
                (1, "0", "selective-repeat"),
                (2, "0.01", "go-back-n"),
                (3, "0.01", "selective-repeat")
            ]
        );
        assert_eq!(p[0].values[0].0, Param::LossRate);
        let e = SweepAxis::parse("--param", "loss=0.1").unwrap_err();
        assert!(e.allowed.contains("loss_rate"), "{e}");
        let e = SweepAxis::parse("--param", "transport=gbn").unwrap_err();
        assert!(e.allowed.contains("selective-repeat"), "{e}");
        let e = SweepAxis::parse("--param", "failed_uplinks=1,-1").unwrap_err();
        assert!(
            e.to_string().contains("-1") && e.allowed.contains("leaves"),
            "{e}"
        );
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let a = axes(
            "loss_rate=0.001,0.003",
            "transport=go-back-n,selective-repeat",
        );
        let p = expand(&a);
        let s = default_scenario();
        let one = run(&s, &roce(), &[7], &p, 1, false, &|_| ());
        let two = run(&s, &roce(), &[7], &p, 2, false, &|_| ());
        assert_eq!(one, two);
        assert!(one.iter().all(|r| r.error.is_none()));
    }

    /// Go-back-N resends the whole window after a loss: its efficiency relative to selective
    /// repeat is about 1/(1+pW) (GBN (1-p)/(1+pW), SR 1-p: docs/validation.md), so in a sweep over
    /// the loss rate go-back-N retransmits far more at every lossy point (in expectation, at the
    /// step's real sizes: `workload::train::loss_cost`), the ratio of their step throughputs is
    /// below 1 and falls as p grows, and MFU falls with loss.
    #[test]
    fn go_back_n_retransmits_more_than_selective_repeat_across_a_loss_sweep() {
        let a = axes(
            "loss_rate=0,0.001,0.003",
            "transport=go-back-n,selective-repeat",
        );
        let r = run(
            &default_scenario(),
            &roce(),
            &[1],
            &expand(&a),
            2,
            false,
            &|_| (),
        );
        let mfu = |i: usize| r[i].mfu.unwrap().mean;
        let resent = |i: usize| {
            let e = r[i].engine.as_ref().unwrap();
            e.loss.as_ref().map_or(0.0, |l| l.retransmitted_per_step)
        };
        // Points: (p, gbn), (p, sr) for p = 0, 0.001, 0.003.
        assert_eq!(mfu(0), mfu(1), "no loss: the recovery does not matter");
        let ratio: Vec<f64> = (0..3).map(|k| mfu(2 * k) / mfu(2 * k + 1)).collect();
        for k in 1..3 {
            assert!(ratio[k] < 1.0, "p point {k}: {ratio:?}");
            assert!(
                resent(2 * k) > 5.0 * resent(2 * k + 1),
                "{} {}",
                resent(2 * k),
                resent(2 * k + 1)
            );
        }
        assert!(ratio[2] < ratio[1], "{ratio:?}");
        assert!(mfu(0) > mfu(2) && mfu(2) > mfu(4));
    }

    /// The go-back-N closed form (docs/validation.md): with per-packet loss p on the path,
    /// go-back-N's goodput over the loss-free
    /// goodput is about (1-p)/(1+pW), W the packets in flight when a loss is detected (one
    /// round trip at line rate: the sender rewinds that many), and selective repeat's about
    /// 1-p. Measured on one 32 MiB flow across the spine of the compared RoCE cluster with
    /// the engine parameters the sweep uses; W from the engine's own idle round trip. The
    /// model has no timeout term, so the runs must have no timeout (a lost tail packet).
    #[test]
    fn go_back_n_follows_the_analytic_model_and_selective_repeat_degrades_slower() {
        use super::super::engine::params;
        use super::super::probe::partner;
        use fabricsim_core::message::MessageDag;
        use fabricsim_core::topology::HostId;
        use fabricsim_core::units::Time;
        use fabricsim_mech::Faults;
        use fabricsim_packet::{self as sim, RunOptions};
        let mut s = default_scenario();
        s.file.fabric.profile = "roce-400g".into();
        let (design, topo, _) = crate::plan::run(&s).unwrap();
        let dst = partner(&topo, 3).unwrap();
        const BYTES: u64 = 32 << 20;
        let flow = |v: &Variant, bytes: u64| {
            let p = params(v, &design, 1).unwrap();
            let mut dag = MessageDag::default();
            dag.push(HostId(0), dst, bytes, Time::ZERO, &[]);
            let r = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
            let m = &r.messages[0];
            (
                m.start_ps.unwrap(),
                m.recv_ps.unwrap(),
                m.finish_ps.unwrap(),
                r.counters,
                p,
            )
        };
        let with = |recovery, loss_rate| Variant {
            recovery,
            loss_rate,
            ..roce()
        };
        // W: the idle round trip (post to the ACK of one packet) at the payload line rate.
        let (s0, _, f0, _, p) = flow(&with(Transport::GoBackN, 0.0), 8);
        let rtt_s = (f0 - s0) as f64 * 1e-12;
        let rate = design.profile.ports.rate_gbps as f64 * 1e9 * p.payload_efficiency();
        let w = rtt_s * rate / (8.0 * p.mtu_bytes as f64);
        let goodput = |v: &Variant| {
            let (st, recv, _, c, _) = flow(v, BYTES);
            assert_eq!(
                c.timeouts, 0,
                "{v:?}: a tail loss (the model has no timeout term)"
            );
            BYTES as f64 / (recv - st) as f64
        };
        let base = goodput(&with(Transport::GoBackN, 0.0));
        // Data packets cross 4 links (NIC-leaf, leaf-spine, spine-leaf, leaf-NIC).
        let (mut last_gbn, mut last_gap) = (1.0, 1.0);
        for p_link in [1e-4, 3e-4, 1e-3] {
            let p_path = 1.0 - (1.0f64 - p_link).powi(4);
            let gbn = goodput(&with(Transport::GoBackN, p_link)) / base;
            let sr = goodput(&with(Transport::SelectiveRepeat, p_link)) / base;
            let model = (1.0 - p_path) / (1.0 + p_path * w);
            // The goodput lost under go-back-N is within a factor of two of the model's (a
            // first-order model: it ignores the NAK's own delay and the ramp after a rewind).
            let ratio = (1.0 - gbn) / (1.0 - model);
            assert!(
                (0.5..=2.0).contains(&ratio),
                "p {p_link}: gbn {gbn} model {model} (W {w:.1})"
            );
            // Go-back-N falls with p, selective repeat stays above it, and the gap widens.
            let gap = gbn / sr;
            assert!(
                gbn < last_gbn && sr > gbn && gap < last_gap,
                "p {p_link}: gbn {gbn} sr {sr}"
            );
            (last_gbn, last_gap) = (gbn, gap);
        }
    }

    /// Each congestion-control parameter reaches the engine through the sweep's point (the
    /// same `apply` and `params` as `run_point`), and the ECN thresholds and the DCQCN timer
    /// change the stress run on tuned roce-400g. RED marks with probability rising from Kmin
    /// to Kmax (HPCC `switch-mmu.cc`), so a lower Kmin or Kmax marks more packets. Rai changes the
    /// engine's parameters but not this stress run: CNPs every 4 us restart the increase
    /// stages before an additive-increase stage is reached (Zhu et al. 2015, the RP state
    /// machine in `sim::dcqcn`), so Rai only acts once congestion ends, after these flows.
    #[test]
    fn ecn_and_dcqcn_parameters_reach_the_engine_and_change_the_stress_run() {
        use super::super::engine::params;
        let s = default_scenario();
        for (axis, changes_stress) in [
            ("ecn_kmin=20K,1M", true),
            ("ecn_kmax=300K,15M", true),
            ("dcqcn_timer=10us,1000us", true),
            ("dcqcn_rai=5Mbps,2Gbps", false),
        ] {
            let axis = SweepAxis::parse("--param", axis).unwrap();
            let runs: Vec<_> = expand(std::slice::from_ref(&axis))
                .iter()
                .map(|p| {
                    let (s, v) = apply(&s, &roce(), p);
                    let (design, topo, _) = crate::plan::run(&s).unwrap();
                    let cc = params(&v, &design, 1).unwrap().cc;
                    let stress = changes_stress
                        .then(|| super::super::stress::run(&design, &topo, &v, 1).unwrap());
                    (cc, stress)
                })
                .collect();
            let name = axis.param.name();
            assert_ne!(runs[0].0, runs[1].0, "{name}: engine parameters");
            if changes_stress {
                let (a, b) = (runs[0].1.as_ref().unwrap(), runs[1].1.as_ref().unwrap());
                assert_ne!(a, b, "{name}: stress run");
                if name.starts_with("ecn") {
                    assert!(a.ecn_marks > b.ecn_marks, "{name}");
                }
            }
        }
    }

    #[test]
    fn bad_congestion_control_values_are_refused() {
        for bad in [
            "ecn_kmin=0",
            "ecn_kmin=lots",
            "ecn_kmax=-1",
            "dcqcn_rai=fast",
            "dcqcn_timer=0us",
        ] {
            let e = SweepAxis::parse("--param", bad).unwrap_err();
            assert_eq!(e.key, "--param", "{bad}");
        }
        let s = default_scenario();
        let points = |t: &str| expand(&[SweepAxis::parse("--param", t).unwrap()]);
        // Kmin above the profile's Kmax (1.5 MB): the engine's ECN check refuses it.
        let e = check(&s, &roce(), &points("ecn_kmin=2M"), "--param").unwrap_err();
        assert!(e.problem.contains("kmin"), "{e}");
        // InfiniBand has neither ECN marking nor DCQCN.
        let ib = Variant {
            profile: "ib-ndr".into(),
            ..roce()
        };
        let e = check(&s, &ib, &points("ecn_kmax=1M"), "--param").unwrap_err();
        assert!(e.problem.contains("no ECN"), "{e}");
        let e = check(&s, &ib, &points("dcqcn_rai=10Mbps"), "--param").unwrap_err();
        assert!(e.problem.contains("without DCQCN"), "{e}");
        assert!(check(&s, &roce(), &points("ecn_kmin=50K,100K"), "--param").is_ok());
    }
}

/// A 16-GPU cluster (two servers) training Llama 3 8B with TP 8: a comparison that runs in
/// seconds, with `compare` as its [compare] section.
fn small(compare: &str) -> Scenario {
    let text = format!(
        "[cluster]\ngpus = 16\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
         [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 1\n[compare]\nfabric_runs = false\n{compare}"
    );
    Scenario::parse("small.toml", &text).unwrap()
}

const LOSSY: &str = "fabrics = [ { name = \"lossy\", profile = \"roce-400g\", loss_rate = 3e-3 } ]";

#[test]
fn intervals_carry_their_seeds_and_loss_no_longer_moves_the_step() {
    let at = |n: u32| run(&small(&format!("seeds = {n}\n{LOSSY}"))).unwrap();
    let (few, many) = (at(3), at(12));
    let (a, b) = (&few.fabrics[0], &many.fabrics[0]);
    // The seeds grow from the same first ones.
    assert_eq!(a.seeds, b.seeds[..3]);
    assert_eq!(a.seeds[0], 1);
    let (da, db) = (a.delivered.as_ref().unwrap(), b.delivered.as_ref().unwrap());
    for (e, n) in [
        (da.step_time_s, 3),
        (da.mfu, 3),
        (db.step_time_s, 12),
        (db.mfu, 12),
    ] {
        assert_eq!(e.n, n);
        assert!(e.lo <= e.mean && e.mean <= e.hi, "{e:?}");
    }
    // Each interval is that of the seeds' own figures, the first seeds' the same in both.
    assert_eq!(da.tokens_per_s_by_seed, db.tokens_per_s_by_seed[..3]);
    let of = |d: &super::model::Delivered| Estimate::of(&d.tokens_per_s_by_seed).unwrap();
    assert_eq!((of(da), of(db)), (da.tokens_per_s, db.tokens_per_s));
    // Loss at 3e-3 is costed in expectation, not sampled (issue 23): the step no longer moves
    // with the seed, so its interval has no width at 3 seeds or 12 (beyond the rounding of the
    // mean).
    for d in [da, db] {
        let t = d.tokens_per_s;
        assert!(t.half_width() <= 1e-9 * t.mean, "{t:?}");
    }
    // The loss-rate interval of the lossy fabric: its step at x0.1 and x10, seed by seed.
    let rates: Vec<f64> = b.loss_cases.iter().map(|l| l.loss_rate).collect();
    assert_eq!(rates.len(), 2);
    assert!((rates[0] - 3e-4).abs() < 1e-12 && (rates[1] - 3e-2).abs() < 1e-12);
    assert!(
        b.loss_cases
            .iter()
            .all(|l| l.error.is_some() || l.tokens_per_s_by_seed.len() == 12)
    );
}

#[test]
fn seeds_out_of_range_are_refused_at_their_key() {
    for bad in ["seeds = 0", "seeds = 101"] {
        let e = run(&small(bad)).unwrap_err();
        assert_eq!(e.key, "compare.seeds", "{e}");
        assert!(e.line.is_some() && e.file == "small.toml", "{e}");
        assert!(e.allowed.contains("1 to 100"), "{e}");
    }
    for bad in ["seeds = -1", "seeds = \"five\"", "seeds = 2.5"] {
        let text = format!("[compare]\n{bad}\n");
        let e = Scenario::parse("bad.toml", &text).unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("bad.toml", Some(2)), "{e}");
    }
}

mod robustness {
    use super::super::model::Comparison;
    use super::super::recommend::recommend;
    use super::{run, small};

    /// Two fabrics with the same throughput and the given (switches, NICs) USD, the other
    /// classes equal: scored on cost alone by their TCO.
    fn two(switches_nics: [(f64, f64); 2]) -> Comparison {
        let mut c = run(&small(
            "seeds = 1\nfabrics = [ { name = \"a\", profile = \"roce-400g\" }, { name = \"b\", profile = \"roce-400g\" } ]",
        ))
        .unwrap();
        let years = c.fabrics[0].design.cost.years as f64;
        for (f, (sw, nic)) in c.fabrics.iter_mut().zip(switches_nics) {
            let k = &mut f.plan.cost;
            k.switches_usd = sw;
            k.nics_usd = nic;
            k.network_capex_usd = sw + nic + k.optics_usd + k.cables_usd;
            k.cluster_capex_usd = k.network_capex_usd + k.compute_capex_usd;
            k.cluster_tco_usd = k.cluster_capex_usd + years * k.cluster_opex_usd_per_year;
        }
        c
    }

    #[test]
    fn a_close_cost_flips_under_a_switch_price_change() {
        // a: 10 M USD of switches, 1 M of NICs; b: 1 M and 10.1 M. a is 0.1 M cheaper; switch
        // prices +20% make a 2 M dearer, so b wins; NIC prices +20% only widen a's lead.
        let r = recommend(&two([(10e6, 1e6), (1e6, 10.1e6)]));
        assert_eq!(r.fabric.as_deref(), Some("a"));
        let rb = r.robustness.as_ref().unwrap();
        let case = |name: &str| rb.cases.iter().find(|k| k.change == name).unwrap();
        let up = case("switch prices +20%");
        assert!(up.flips && up.fabric.as_deref() == Some("b"), "{up:?}");
        assert!(!case("switch prices -20%").flips);
        assert!(!case("NIC prices +20%").flips);
        assert!(
            case("NIC prices -20%").flips,
            "b's NICs 20% cheaper: 8.08 + 1 < 11"
        );
        assert_eq!(rb.flipped_by, ["switch prices +20%", "NIC prices -20%"]);
        // No lossy fabric: the loss interval says so rather than pretending.
        assert!(
            rb.notes
                .iter()
                .any(|n| n.contains("no fabric has random loss"))
        );
    }

    #[test]
    fn a_clear_verdict_survives_every_change() {
        let r = recommend(&two([(2e6, 2e6), (8e6, 8e6)]));
        assert_eq!(r.fabric.as_deref(), Some("a"));
        let rb = r.robustness.as_ref().unwrap();
        assert_eq!(rb.cases.len(), 12, "6 classes x 2 changes");
        assert!(rb.flipped_by.is_empty(), "{rb:?}");
    }

    /// `loss_rate_interval` replaces the default x0.1 / x10 ends: its rates are the ones run
    /// and reported, and a lossless fabric with one is tested under it too (without one it has
    /// no loss case).
    #[test]
    fn a_scenario_loss_interval_sets_the_cases_run_and_reported() {
        let fabrics = |lossy: &str, clean: &str| {
            format!(
                "seeds = 1\nfabrics = [ {{ name = \"lossy\", profile = \"roce-400g\", loss_rate = 1e-3{lossy} }}, {{ name = \"clean\", profile = \"ib-ndr\"{clean} }} ]"
            )
        };
        let rates = |c: &Comparison, f: usize| -> Vec<(&str, f64)> {
            c.fabrics[f]
                .loss_cases
                .iter()
                .map(|l| (l.end, l.loss_rate))
                .collect()
        };
        let default = run(&small(&fabrics("", ""))).unwrap();
        let d = rates(&default, 0);
        assert_eq!((d[0].0, d[1].0), ("low", "high"));
        assert!(
            (d[0].1 - 1e-4).abs() < 1e-15 && (d[1].1 - 1e-2).abs() < 1e-15,
            "{d:?}"
        );
        assert!(
            rates(&default, 1).is_empty(),
            "a lossless fabric has no interval"
        );
        let given = run(&small(&fabrics(
            ", loss_rate_interval = [5e-4, 2e-3]",
            ", loss_rate_interval = [0.0, 1e-4]",
        )))
        .unwrap();
        assert_eq!(rates(&given, 0), [("low", 5e-4), ("high", 2e-3)]);
        assert_eq!(rates(&given, 1), [("low", 0.0), ("high", 1e-4)]);
        let names = |c: &Comparison| -> Vec<String> {
            let r = recommend(c);
            let rb = r.robustness.unwrap();
            rb.cases
                .iter()
                .map(|k| k.change.clone())
                .filter(|n| n.starts_with("loss rate"))
                .collect()
        };
        assert_eq!(
            names(&default),
            [
                "loss rate x0.1 (lossy at 0.0001)",
                "loss rate x10 (lossy at 0.01)"
            ]
        );
        assert_eq!(
            names(&given),
            [
                "loss rate at the interval's low end (lossy at 0.0005, clean at 0)",
                "loss rate at the interval's high end (lossy at 0.002, clean at 0.0001)"
            ]
        );
    }

    /// The interval must hold the fabric's loss rate, within 0 and 0.5: an error at the
    /// entry's line and key.
    #[test]
    fn a_loss_interval_not_around_the_rate_is_refused_at_its_key() {
        for bad in [
            "[2e-3, 3e-3]",
            "[0.0, 5e-4]",
            "[-1e-3, 1e-2]",
            "[1e-4, 0.6]",
        ] {
            let e = run(&small(&format!(
                "fabrics = [ {{ profile = \"roce-400g\", loss_rate = 1e-3, loss_rate_interval = {bad} }} ]"
            )))
            .unwrap_err();
            assert_eq!(e.key, "compare.fabrics[0].loss_rate_interval", "{e}");
            assert!(e.line.is_some() && e.file == "small.toml", "{e}");
            assert!(
                e.allowed.contains("low <= loss_rate (0.001) <= high < 0.5"),
                "{e}"
            );
        }
    }
}

/// Issue 23: with loss costed in expectation, MFU against the per-link loss rate never rises,
/// for each recovery, and at every rate selective repeat >= go-back-N >= go-back-0 (a 32-GPU
/// Llama 3 8B step on roce-400g, its collectives calibrated on the packet engine).
#[test]
fn mfu_against_loss_never_rises_and_orders_the_recoveries() {
    use super::step::engine_step;
    use super::variant::{Tune, Variant};
    use fabricsim_mech::Transport;
    let s = Scenario::parse(
        "t.toml",
        "[cluster]\ngpus = 32\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
         [fabric]\nprofile = \"roce-400g\"\n[topology]\nkind = \"fat-tree\"\n\
         [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 2\nzero = 1\nglobal_batch = 64\nseq = 2048\n",
    )
    .unwrap();
    let (design, topo, _) = crate::plan::run(&s).unwrap();
    let cfg = super::model::train_config(&s, &design, &topo).unwrap();
    let rates = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2];
    let recoveries = [
        Transport::SelectiveRepeat,
        Transport::GoBackN,
        Transport::GoBack0,
    ];
    let mfu: Vec<Vec<f64>> = recoveries
        .iter()
        .map(|&recovery| {
            rates
                .iter()
                .map(|&loss_rate| {
                    let v = Variant {
                        name: "roce".into(),
                        profile: "roce-400g".into(),
                        recovery,
                        loss_rate,
                        ber: 0.0,
                        loss_interval: None,
                        tuned: true,
                        tune: Tune::default(),
                        engine: crate::setup::engine_choice::EngineChoice::Packet,
                        failed_uplinks: 0,
                        phy: Default::default(),
                    };
                    engine_step(&cfg, &design, &topo, &v, 1).unwrap().step.mfu
                })
                .collect()
        })
        .collect();
    for (r, row) in recoveries.iter().zip(&mfu) {
        assert!(
            row.windows(2).all(|w| w[1] <= w[0]),
            "{}: {row:?}",
            r.name()
        );
        assert!(row[4] < row[0], "{}: loss costs nothing {row:?}", r.name());
    }
    for j in 0..rates.len() {
        assert!(
            mfu[0][j] >= mfu[1][j] && mfu[1][j] >= mfu[2][j],
            "at {}: SR {} GBN {} GB0 {}",
            rates[j],
            mfu[0][j],
            mfu[1][j],
            mfu[2][j]
        );
    }
}
