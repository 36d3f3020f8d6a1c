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
    assert_eq!(a.to_csv(), b.to_csv());
    assert_eq!(a.seeds, 2);
}
