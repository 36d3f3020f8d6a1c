//! The workload sweep axes (`compare::sweep_workload`, issue 28): each moves what it must. A
//! higher request rate raises a `[serve]` deployment's TTFT p99 under load; more tenants slow
//! the first job on a shared oversubscribed fabric; spread and packed placements differ there;
//! a Zipf routing skew slows the expert-parallel decode's hot rank. And the sweep's fabric takes
//! its profile's own loss recovery (`sweep --fabric ib-ndr` was refused).

use fabricsim::compare::sweep::{PointResult, SweepAxis, expand, run};
use fabricsim::compare::sweep_job::{Job, Request};
use fabricsim::compare::variant::Variant;
use fabricsim::engine_choice::EngineChoice;
use fabricsim::scenario::Scenario;
use fabricsim_mech::Transport;

/// A file in the test's scratch directory holding `text`.
fn scratch(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("fabricsim-swl-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The points of one axis `text` over `scenario` on `fabric`, checked as `fabricsim sweep`
/// checks them, and their results in order.
fn sweep(scenario: &str, fabric: &str, text: &str, seeds: &[u64]) -> Vec<PointResult> {
    let s = Scenario::parse("sweep.toml", scenario).unwrap();
    let r = Request {
        params: vec![text.into()],
        fabric: fabric.into(),
        ..Request::default()
    };
    Job::new(&s, &r).unwrap();
    let axis = SweepAxis::parse("--param", text).unwrap();
    let v = Variant::swept(fabric, EngineChoice::Flow);
    let r = run(&s, &v, seeds, &expand(&[axis]), 2, false, &|_| ());
    assert!(r.iter().all(|x| x.error.is_none()), "{r:?}");
    r
}

/// A 4-port 400G InfiniBand switch and a one-GPU server (test parts, placeholder prices): 4
/// leaves of 2 servers, 1 uplink per leaf at 2:1 (as tests/tenants_cli.rs builds them).
const CATALOG: &str = "[[switch]]\nid = \"tiny\"\nname = \"4-port IB switch, tests\"\n\
    family = \"infiniband\"\ncages = 4\nmodes = [{ port_gbps = 400, ports = 4 }]\n\
    latency_ns = 130\nbuffer_mb = 16\npower_w = 100\nrack_units = 1\nprice_usd = 1000\n\n\
    [[server]]\nid = \"h100-1\"\nname = \"one H100, tests\"\ngpu = \"h100\"\ngpus = 1\n\
    power_w = 1300\nprice_usd = 40000\nincludes_nics = true\npcie_gen = 5\n\
    pcie_lanes_per_nic = 16\nnic_slots = 1\n";

/// Three all-reduce loops of 2 GPUs each, placed by `placement`, on the 2:1 tiny fabric.
fn three_loops(placement: &str) -> String {
    let catalog = scratch("tiny.toml", CATALOG);
    let mut s = format!(
        "catalog = \"{catalog}\"\nengine = \"flow\"\n[cluster]\ngpus = 8\ngpus_per_node = 1\n\
         nics_per_node = 1\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\nkind = \"fat-tree\"\n\
         switch = \"tiny\"\noversubscription = \"2:1\"\n"
    );
    for name in ["a", "b", "c"] {
        s += &format!(
            "\n[[jobs]]\nname = \"{name}\"\ngpus = 2\nplacement = \"{placement}\"\n\
             [jobs.collective]\nop = \"all_reduce\"\nbytes = \"16MB\"\niterations = 2\n"
        );
    }
    s
}

fn slowdown(r: &PointResult, job: &str) -> f64 {
    let jobs = r.tenants.as_ref().expect("a multi-tenant point");
    jobs.iter().find(|j| j.job == job).unwrap().slowdown.mean
}

#[test]
fn a_higher_request_rate_raises_ttft_p99_under_load() {
    // One prefill instance of 1 GPU (tens of ms a 2,048-token prefill): 1 req/s is light
    // load and 50 req/s queues.
    let s = "[cluster]\ngpus = 16\ngpus_per_node = 8\n[serve]\nmodel = \"llama3-8b\"\n\
             prefill_instances = 1\nprefill_tp = 1\ndecode_instances = 1\ndecode_tp = 8\n\
             requests = 60\n";
    let r = sweep(s, "roce-400g", "rate=1,50", &[1]);
    let (lo, hi) = (
        r[0].serving.as_ref().unwrap(),
        r[1].serving.as_ref().unwrap(),
    );
    assert!(
        hi.ttft_p99_s.mean > 2.0 * lo.ttft_p99_s.mean,
        "TTFT p99 {} s at 50 req/s vs {} s at 1 req/s",
        hi.ttft_p99_s.mean,
        lo.ttft_p99_s.mean
    );
    // A serving point has no training figures.
    assert!(r[0].step_time_s.is_none() && r[0].tenants.is_none());
}

#[test]
fn more_tenants_slow_the_first_job_on_a_shared_oversubscribed_fabric() {
    let r = sweep(&three_loops("spread"), "ib-ndr", "tenants=1,2,3", &[1]);
    assert_eq!(r[0].tenants.as_ref().unwrap().len(), 1);
    assert_eq!(r[2].tenants.as_ref().unwrap().len(), 3);
    let a: Vec<f64> = r.iter().map(|x| slowdown(x, "a")).collect();
    assert!((a[0] - 1.0).abs() < 1e-9, "alone is alone: {a:?}");
    assert!(a[1] > 1.2 && a[2] >= a[1], "{a:?}");
}

#[test]
fn spread_and_packed_placements_differ_on_an_oversubscribed_fabric() {
    let r = sweep(
        &three_loops("packed"),
        "ib-ndr",
        "placement=packed,spread",
        &[1],
    );
    let (packed, spread) = (slowdown(&r[0], "a"), slowdown(&r[1], "a"));
    // Packed, each 2-GPU job keeps to its own leaf: nothing shared.
    assert!((packed - 1.0).abs() < 1e-9, "packed {packed}");
    assert!(spread > 1.2, "spread {spread}");
}

#[test]
fn a_zipf_skew_slows_the_expert_parallel_decode() {
    // Four requests decoded as one batch by a colocated DeepSeek-V3 instance over two 4-GPU
    // servers (tests/serve.rs's case): the hot experts' rank receives more tokens.
    let trace = scratch("ep.csv", "0,512,9\n0,512,9\n0,512,9\n0,512,9\n");
    let catalog = scratch(
        "h200-4.toml",
        "[[server]]\nid = \"h200-4\"\nname = \"four H200, for tests\"\ngpu = \"h200\"\n\
         gpus = 4\npower_w = 5000\nprice_usd = 100000\nincludes_nics = true\npcie_gen = 5\n\
         pcie_lanes_per_nic = 16\nnic_slots = 4\n",
    );
    let s = format!(
        "catalog = \"{catalog}\"\n[cluster]\ngpus = 8\ngpus_per_node = 4\nnics_per_node = 4\n\
         gpu = \"h200\"\n[serve]\nmodel = \"deepseek-v3\"\nprecision = \"fp8\"\n\
         mode = \"colocated\"\nexpert_parallel = true\ntrace = \"{trace}\"\n"
    );
    let r = sweep(&s, "roce-400g", "moe_skew=uniform,zipf:1.2", &[1]);
    let tpot = |x: &PointResult| x.serving.as_ref().unwrap().tpot_p99_s.mean;
    assert!(tpot(&r[1]) > tpot(&r[0]), "{} {}", tpot(&r[1]), tpot(&r[0]));
}

#[test]
fn the_swept_fabric_takes_its_profiles_own_loss_recovery() {
    // RoCE's is go-back-N, as before; InfiniBand NDR's adaptive routing reorders packets, so
    // its profile runs selective repeat and a sweep on it builds.
    assert_eq!(
        Variant::swept("roce-400g", EngineChoice::Packet).recovery,
        Transport::GoBackN
    );
    let ib = Variant::swept("ib-ndr", EngineChoice::Packet).recovery;
    assert_ne!(ib, Transport::GoBackN);
    let base = fabricsim::compare::model::default_scenario();
    let r = Request {
        params: vec!["gpus=64".into()],
        fabric: "ib-ndr".into(),
        ..Request::default()
    };
    let job = Job::new(&base, &r).unwrap();
    assert_eq!(job.fabric.recovery, ib);
    // A profile axis takes each profile's recovery unless a transport axis sets it.
    let p = SweepAxis::parse("--param", "profile=roce-400g,ib-ndr").unwrap();
    let points = expand(&[p]);
    let roce = Variant::swept("roce-400g", EngineChoice::Packet);
    let (_, v) = fabricsim::compare::sweep::apply(&base, &roce, &points[1]);
    assert_eq!(v.recovery, ib);
}

#[test]
fn workload_axes_refuse_what_does_not_apply() {
    let jobs = Scenario::parse("jobs.toml", &three_loops("spread")).unwrap();
    let train = fabricsim::compare::model::default_scenario();
    for (s, text, says) in [
        (&jobs, "tenants=4", "1 to 3"),
        (&jobs, "loss_rate=0,0.001", "does not act"),
        (&train, "rate=5", "does not act"),
        (&train, "placement=spread", "does not act"),
        // The built-in comparison's model is dense: no experts to route to.
        (&train, "moe_skew=zipf:1.2", "dense model"),
    ] {
        let r = Request {
            params: vec![text.into()],
            fabric: "ib-ndr".into(),
            ..Request::default()
        };
        let e = Job::new(s, &r).err().expect(text).to_string();
        assert!(e.contains(text) && e.contains(says), "{text}: {e}");
    }
}
