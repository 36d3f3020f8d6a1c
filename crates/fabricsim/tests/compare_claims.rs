//! The claims section of `compare` (`compare::claims`): it appears in the text, JSON and HTML
//! reports, its figures are the same runs a separate comparison at that size gives, it has a
//! loss row per recovery, and it names the points it could not run and why.

use fabricsim::compare::claims::{self, Claims, SeedRun};
use fabricsim::compare::model::{DEFAULT_SCENARIO, WHOLE_STEP, run};
use fabricsim::compare::recommend::recommend;
use fabricsim::compare::sweep::{Param, Point, run_point};
use fabricsim::compare::variant::{Variant, resolve};
use fabricsim::report;
use fabricsim::scenario::Scenario;
use fabricsim::sim::recovery::TRANSPORTS;

/// The built-in comparison's cluster and job with `compare` as its `[compare]` section and
/// `extra` added to its `[train]`.
fn scenario(extra: &str, compare: &str) -> Scenario {
    let head = &DEFAULT_SCENARIO[..DEFAULT_SCENARIO.find("[compare]").unwrap()];
    let head = head.replace("[train]\n", &format!("[train]\n{extra}\n"));
    Scenario::parse("test.toml", &format!("{head}\n[compare]\n{compare}")).unwrap()
}

const TWO: &str = r#"fabric_runs = false
fabrics = [
  { name = "ib", profile = "ib-ndr" },
  { name = "roce", profile = "roce-400g" },
]"#;

fn seed_run(runs: &[SeedRun], seed: u64) -> &SeedRun {
    runs.iter().find(|r| r.seed == Some(seed)).unwrap()
}

#[test]
fn claims_are_in_every_report_and_are_the_runs_of_separate_comparisons() {
    let s = scenario("", TWO);
    let c = run(&s).unwrap();
    let cl: &Claims = c.claims.as_ref().expect("quick claims by default");
    let r = recommend(&c);
    let text = report::compare::text(&c, &r);
    let json = report::compare::json(&c, &r);
    let html = report::html::compare::report(&c, &r);
    for claim in &cl.claims {
        assert!(text.contains(claim.text), "{}", claim.text);
        assert!(html.contains(claim.text), "{}", claim.text);
    }
    assert!(html.contains("id=\"claims\""));
    let sizes: Vec<u64> = json["claims"]["throughput"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["gpus"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, claims::SIZES.map(u64::from));
    assert_eq!(json["claims"]["mode"], "quick");

    // The 128-GPU point is what a comparison of a 128-GPU cluster gives for its first seed.
    let mut s128 = scenario("", &format!("{TWO}\nclaims = \"off\"\nseeds = 1"));
    s128.apply_flags(&[("--gpus".into(), "128".into())])
        .unwrap();
    let alone = run(&s128).unwrap();
    assert!(alone.claims.is_none());
    let p = &cl.throughput[0];
    assert_eq!(p.gpus, 128);
    for (fig, f) in [
        (&p.infiniband, &alone.fabrics[0]),
        (&p.roce, &alone.fabrics[1]),
    ] {
        let d = f.delivered.as_ref().unwrap();
        let one = seed_run(&fig.runs, alone.section.seed);
        assert_eq!(one.tokens_per_s, d.tokens_per_s.mean, "{}", fig.fabric);
        assert_eq!(one.mfu, d.mfu.mean);
        assert_eq!(fig.network_capex_usd, Some(f.plan.cost.network_capex_usd));
        // Timed as the comparison times it: the whole step on the flow engine.
        assert_eq!(fig.timed_on, "flow");
        assert!(
            f.delivered
                .as_ref()
                .unwrap()
                .step_timed_by
                .starts_with(WHOLE_STEP),
            "{}",
            fig.fabric
        );
    }
    let saved = 1.0
        - alone.fabrics[1].plan.cost.network_capex_usd
            / alone.fabrics[0].plan.cost.network_capex_usd;
    assert_eq!(p.network_capex_saved, Some(saved));
    // The interval covers every seed's ratio, and its mean is theirs.
    let e = p.roce_vs_ib.unwrap();
    let ratios: Vec<f64> = p
        .roce
        .runs
        .iter()
        .map(|r| r.tokens_per_s / seed_run(&p.infiniband.runs, r.seed.unwrap()).tokens_per_s)
        .collect();
    assert_eq!(e.n as usize, ratios.len());
    assert_eq!(e.n as usize, cl.seeds.len());
    assert!((e.mean - ratios.iter().sum::<f64>() / ratios.len() as f64).abs() < 1e-12);

    // One loss row per recovery, in the list's order; a row is the run `sweep` gives for it.
    let loss = cl.loss.as_ref().unwrap();
    let names: Vec<&str> = loss.rows.iter().map(|r| r.recovery).collect();
    let all: Vec<&str> = TRANSPORTS.iter().map(|t| t.name()).collect();
    assert_eq!(names, all);
    let last = loss.rows.last().unwrap();
    let roce: Variant = resolve(&s, &c.section).unwrap()[1].clone();
    let base = Variant {
        loss_rate: 0.0,
        ..roce
    };
    let seed = cl.seeds[1];
    let point = Point {
        id: 0,
        values: vec![
            (Param::LossRate, claims::LOSS_RATE.to_string()),
            (Param::Transport, last.recovery.to_string()),
        ],
    };
    let again = run_point(&s, &base, &[seed], &point, false);
    assert_eq!(
        Some(seed_run(&last.lossy.runs, seed).mfu),
        again.mfu.map(|e| e.mean)
    );
    for r in &loss.rows {
        assert_eq!(r.lossy.runs.len(), cl.seeds.len(), "{}", r.recovery);
        assert!(text.contains(r.recovery));
    }

    // The quick section names what it left to `--claims full`, and why.
    let left: Vec<&str> = cl.not_run.iter().map(|n| n.what.as_str()).collect();
    assert!(
        left.iter()
            .any(|w| w.contains("16384") && w.contains("flow")),
        "{left:?}"
    );
    assert!(
        cl.not_run.iter().all(|n| n.why.contains("--claims full")),
        "{:?}",
        cl.not_run
    );
    assert!(text.contains("not run:"));
    // The large point in closed form: no engine run, and its reference at 1,024 GPUs.
    let l = &cl.large[0];
    assert_eq!((l.reference.gpus, l.point.gpus), (1024, claims::LARGE_GPUS));
    assert_eq!(l.point.infiniband.timed_on, "closed form");
    assert_eq!(l.point.infiniband.engine_runs, 0);
    assert!(l.trend.is_some());
}

#[test]
fn points_that_cannot_run_are_named_with_the_reason() {
    // A job of exactly 256 GPUs (dp 8 given): the resized clusters cannot hold it.
    let c = run(&scenario("dp = 8", TWO)).unwrap();
    let cl = c.claims.as_ref().unwrap();
    for p in &cl.throughput {
        assert!(p.roce_vs_ib.is_none() && p.infiniband.runs.is_empty());
        let line = cl
            .not_run
            .iter()
            .find(|n| n.what.starts_with(&format!("{} GPUs, ib", p.gpus)))
            .unwrap_or_else(|| panic!("{:?}", cl.not_run));
        assert!(line.what.contains("3 of 3 seeds"), "{line:?}");
        assert!(line.why.contains("dp"), "{line:?}");
    }
    // The loss rows run on the scenario's own 256 GPUs.
    assert!(
        cl.loss
            .as_ref()
            .unwrap()
            .rows
            .iter()
            .all(|r| r.lossy.mfu.is_some())
    );
    let text = report::compare::text(&c, &recommend(&c));
    assert!(text.contains("seeds without a step"));
}

#[test]
fn without_infiniband_nothing_is_claimed_and_off_leaves_the_section_out() {
    let roce = "fabric_runs = false\nfabrics = [{ name = \"roce\", profile = \"roce-400g\" }]";
    let c = run(&scenario("", roce)).unwrap();
    let cl = c.claims.as_ref().unwrap();
    assert!(cl.throughput.is_empty() && cl.loss.is_none() && cl.large.is_empty());
    assert_eq!(cl.not_run.len(), 1);
    assert!(
        cl.not_run[0].why.contains("no InfiniBand fabric"),
        "{:?}",
        cl.not_run
    );
    let off = run(&scenario("", &format!("{roce}\nclaims = \"off\""))).unwrap();
    assert!(off.claims.is_none());
    let text = report::compare::text(&off, &recommend(&off));
    assert!(!text.contains("the field's claims"));
    // A bad value names the key and what is allowed.
    let e = Scenario::parse("t.toml", "[compare]\nclaims = \"some\"").unwrap_err();
    assert!(e.to_string().contains("claims"), "{e}");
    assert!(e.to_string().contains("quick"), "{e}");
}
