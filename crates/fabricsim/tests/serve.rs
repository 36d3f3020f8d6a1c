//! The serving model's must-show checks (issue 28): with no network time TTFT is queueing plus
//! prefill compute and its mean matches the M/D/1 closed form at low load, TPOT is the decode
//! compute at the batch; a slower fabric raises TTFT by exactly its slower KV transfers;
//! transfers in flight together contend on the engine.

use fabricsim::engine_choice::EngineChoice;
use fabricsim::scenario::Scenario;
use fabricsim::workload::run_engine::Cluster;
use fabricsim::workload::serve::net::Net;
use fabricsim::workload::serve::sim::{Served, run_seed};
use fabricsim::workload::serve::{ServeJob, report};

fn setup(text: &str) -> (Cluster, ServeJob) {
    let s = Scenario::parse("test.toml", text).unwrap();
    let (design, topology) = s.design_and_topology().unwrap();
    let cluster = Cluster::of(design, topology, EngineChoice::Flow).unwrap();
    let job = ServeJob::resolve(&s, &cluster.design).unwrap();
    (cluster, job)
}

fn serve(text: &str, seed: u64) -> (ServeJob, Vec<Served>) {
    let (cluster, job) = setup(text);
    let net = Net::new(&cluster, seed, job.spec.ideal_network);
    let served = run_seed(&job, &net, seed).unwrap();
    (job, served)
}

/// A temporary trace file with `lines`.
fn trace(name: &str, lines: &str) -> String {
    let p = std::env::temp_dir().join(format!("fabricsim-serve-{}-{name}.csv", std::process::id()));
    std::fs::write(&p, lines).unwrap();
    p.display().to_string()
}

const CLUSTER: &str = "[cluster]\ngpus = 64\ngpus_per_node = 8\n";

#[test]
fn ideal_network_ttft_is_queueing_plus_prefill_and_matches_md1() {
    // One prefill instance, every prompt the same: deterministic service D, Poisson arrivals.
    let probe =
        format!("{CLUSTER}[serve]\nnetwork = \"ideal\"\nprompt_tokens = 1024\noutput_tokens = 1\n");
    let (_, job) = setup(&probe);
    let d = job.compute.prefill_s(8, 1024);
    let rho = 0.3;
    let rate = rho / d;
    let text = format!("{probe}rate = {rate}\nrequests = 20000\n");
    let (job, served) = serve(&text, 11);
    let d_ps = served[0].prefill_compute_ps;
    for s in &served {
        assert_eq!(s.kv_ps, 0);
        assert_eq!(s.prefill_comm_ps, 0);
        assert_eq!(s.prefill_compute_ps, d_ps);
        // TTFT = waiting for the instance + the prefill: the wait is the previous request's
        // end minus this arrival, never negative.
        assert!(s.ttft_ps() >= d_ps);
    }
    // Pollaczek-Khinchine for deterministic service: W = rho D / (2 (1 - rho)).
    let w = rho * d / (2.0 * (1.0 - rho));
    let m = report::Metrics::of(&job, &served);
    let ttft = m.get("ttft_mean");
    let wait = m.get("queue_mean");
    assert!((m.get("prefill_compute_mean") - d).abs() < 1e-9);
    assert!((wait / w - 1.0).abs() < 0.1, "wait {wait} vs M/D/1 {w}");
    assert!(
        (ttft / (d + w) - 1.0).abs() < 0.02,
        "ttft {ttft} vs {}",
        d + w
    );
    assert_eq!(m.get("ttft_network_share"), 0.0);
}

#[test]
fn ideal_network_tpot_is_the_decode_compute_at_the_batch() {
    // Four prefill instances take four requests at once; their caches land together, so the
    // decode instance runs them as one batch of 4 for all 10 steps.
    let t = trace(
        "tpot",
        "arrival_s,prompt_tokens,output_tokens\n0,1000,11\n0,1000,11\n0,1000,11\n0,1000,11\n",
    );
    let text =
        format!("{CLUSTER}[serve]\nnetwork = \"ideal\"\nprefill_instances = 4\ntrace = \"{t}\"\n");
    let (job, served) = serve(&text, 1);
    let steps: u64 = (1..=10)
        .map(|k| {
            fabricsim::units::Time::from_secs_f64(job.compute.decode_s(8, 4, 4 * (1000 + k))).ps()
        })
        .sum();
    for s in &served {
        assert_eq!(s.tpot_ps(), Some(steps / 10));
        assert_eq!(s.decode_comm_ps, 0);
    }
    // Memory-bound: a batch of 4 costs far less than 4 single-request steps.
    let one = job.compute.decode_s(8, 1, 1001);
    let four = job.compute.decode_s(8, 4, 4 * 1001);
    assert!(four > one && four < 1.5 * one, "{one} {four}");
}

#[test]
fn a_slower_fabric_raises_ttft_by_exactly_its_slower_kv_transfers() {
    let base = "[serve]\nrate = 1\nrequests = 20\nprompt_tokens = 2048\noutput_tokens = 2\n";
    let run = |fabric: &str| {
        let text = format!(
            "[cluster]\ngpus = 16\ngpus_per_node = 8\n[fabric]\nprofile = \"{fabric}\"\n{base}"
        );
        let (_, served) = serve(&text, 5);
        let sum = |f: fn(&Served) -> u64| served.iter().map(f).sum::<u64>();
        (
            sum(Served::ttft_ps),
            sum(|s| s.kv_ps),
            sum(|s| s.prefill_comm_ps),
        )
    };
    // XDR links at 800 Gb/s, NDR and RoCE at 400 Gb/s with RoCE's larger headers.
    let (xdr, ndr, roce) = (run("ib-xdr"), run("ib-ndr"), run("roce-400g"));
    assert!(
        xdr.1 < ndr.1 && ndr.1 < roce.1,
        "KV ps: {} {} {}",
        xdr.1,
        ndr.1,
        roce.1
    );
    assert!(ndr.1 as f64 > 1.8 * xdr.1 as f64);
    // The prefills (and their NVLink collectives) are the same on every fabric: the whole TTFT
    // difference is the KV transfers, to the picosecond.
    for slower in [ndr, roce] {
        assert_eq!(slower.2, xdr.2);
        assert_eq!(slower.0 - xdr.0, slower.1 - xdr.1);
    }
}

#[test]
fn transfers_in_flight_together_share_the_fabric() {
    // Two prefill instances finish together and send to the one decode instance at once; the
    // same two requests far apart send alone.
    let at_once = trace("once", "0,2048,2\n0,2048,2\n");
    let apart = trace("apart", "0,2048,2\n5,2048,2\n");
    let kv = |t: &str| {
        let text = format!("{CLUSTER}[serve]\nprefill_instances = 2\ntrace = \"{t}\"\n");
        let (_, served) = serve(&text, 1);
        served.iter().map(|s| s.kv_ps).max().unwrap() as f64
    };
    let (together, alone) = (kv(&at_once), kv(&apart));
    assert!(together > 1.8 * alone, "together {together} alone {alone}");
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let text = format!(
        "{CLUSTER}[serve]\nrate = 5\nrequests = 30\nprompt_tokens = 512\noutput_tokens = 8\n"
    );
    let (cluster, job) = setup(&text);
    let a = fabricsim::workload::serve::run(&job, &cluster, &[1, 2], &mut |_| {}).unwrap();
    let b = fabricsim::workload::serve::run(&job, &cluster, &[1, 2], &mut |_| {}).unwrap();
    assert_eq!(a.table().to_csv(), b.table().to_csv());
    assert_eq!(a.seeds, 2);
}

/// Issue 28 item 2, serving: a DeepSeek-V3-like decode instance of 8 GPUs whose MoE layers are
/// expert-parallel runs a dispatch and a combine all-to-all per layer on the engine. Inside one
/// 8-GPU server they ride NVLink; the same instance on two 4-GPU servers sends most of them
/// over the fabric, and TPOT rises by exactly the network time of its decode steps (the
/// compute is the same). A Zipf skew loads the rank holding the hot experts and raises it more.
#[test]
fn expert_parallel_across_servers_raises_tpot_by_its_exchanges() {
    // Four requests prefilled at once on a colocated instance, then decoded as one batch.
    let t = trace("ep", "0,512,9\n0,512,9\n0,512,9\n0,512,9\n");
    // A 4-GPU H200 server (a test part: its price and power are placeholders).
    let catalog = trace(
        "catalog",
        "[[server]]\nid = \"h200-4\"\nname = \"four H200, for tests\"\ngpu = \"h200\"\ngpus = 4\n\
         power_w = 5000\nprice_usd = 100000\nincludes_nics = true\npcie_gen = 5\n\
         pcie_lanes_per_nic = 16\nnic_slots = 4\n",
    );
    let run = |gpn: u32, ep: bool, skew: &str| {
        let text = format!(
            "catalog = \"{catalog}\"\n\
             [cluster]\ngpus = 8\ngpus_per_node = {gpn}\nnics_per_node = {gpn}\ngpu = \"h200\"\n\
             [serve]\nmodel = \"deepseek-v3\"\nprecision = \"fp8\"\nmode = \"colocated\"\n\
             expert_parallel = {ep}\nmoe_skew = \"{skew}\"\ntrace = \"{t}\"\n"
        );
        let (job, served) = serve(&text, 3);
        let tpot: u64 = served.iter().map(|s| s.tpot_ps().unwrap()).sum();
        let comm: u64 = served.iter().map(|s| s.decode_comm_ps).sum();
        (job, tpot, comm)
    };
    let (job, inside, inside_comm) = run(8, true, "uniform");
    let (_, across, across_comm) = run(4, true, "uniform");
    let (_, skewed, skewed_comm) = run(4, true, "zipf:1.2");
    let (_, tp_across, tp_comm) = run(4, false, "uniform");
    assert!(
        inside_comm > 0,
        "the exchanges run on NVLink inside a server"
    );
    assert!(
        across as f64 > 1.1 * inside as f64,
        "EP across servers: TPOT {across} ps vs {inside} ps inside"
    );
    // The same compute: the TPOT difference is the decode steps' network time, per token
    // (8 tokens after the first of each request), to a picosecond of rounding per request.
    let per_token = |comm: u64| comm / 8;
    let d = (across - inside) as i64 - (per_token(across_comm) - per_token(inside_comm)) as i64;
    assert!(d.abs() <= 4, "TPOT difference {d} ps off the network time");
    assert!(
        skewed_comm > across_comm && skewed > across,
        "skew loads the hot rank"
    );
    // The expert-parallel layer is not the tensor-parallel one: four collectives, not two.
    assert_ne!(tp_comm, across_comm);
    assert!(tp_across > inside);
    // Its collectives: reduce-scatter, dispatch, combine, all-gather; the routed bytes are the
    // rank's tokens' top_k copies.
    let m = &job.compute.model;
    let route = fabricsim::workload::moe::Route::Uniform { ranks: 8 };
    let c = fabricsim::workload::serve::net::layer_collectives(m, 4, 8, Some(&route));
    use fabricsim::workload::collective::Op;
    assert_eq!(
        c,
        [
            (Op::ReduceScatter, 4 * 7168 * 2),
            (Op::MoeDispatch, 8 * 7168 * 2),
            (Op::MoeCombine, 8 * 7168 * 2),
            (Op::AllGather, 4 * 7168 * 2),
        ]
    );
}

#[test]
fn expert_parallel_needs_experts_that_split_over_the_instance() {
    let bad = |serve: &str| {
        let s = Scenario::parse("test.toml", &format!("{CLUSTER}[serve]\n{serve}")).unwrap();
        let (design, _) = s.design_and_topology().unwrap();
        ServeJob::resolve(&s, &design).unwrap_err()
    };
    let e = bad("expert_parallel = true\n");
    assert_eq!((e.key.as_str(), e.line), ("serve.expert_parallel", Some(5)));
    assert!(e.problem.contains("dense"), "{e}");
    let e = bad("model = \"mixtral-8x7b\"\nexpert_parallel = true\ndecode_tp = 3\n");
    assert_eq!((e.key.as_str(), e.line), ("serve.decode_tp", Some(7)));
    assert!(e.allowed.contains("divisor of 8"), "{e}");
}
