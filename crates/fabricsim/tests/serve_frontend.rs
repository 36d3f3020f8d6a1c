//! Front-end request traffic (`[frontend]`, `workload::serve::frontend`): at low load on an
//! otherwise idle fabric each request's TTFT rises by exactly its prompt's way from the
//! front-end, and that is the closed form (bytes over the port rate, plus the path's latency);
//! a separate front-end network takes the bytes over the port rate; without `[frontend]`
//! nothing changes. The responses: end to end is TTFT, the decode and the last token's way
//! back, which the engine's own run of that one message on the idle fabric confirms; the
//! decode does not wait on them.

use fabricsim::engine_choice::EngineChoice;
use fabricsim::message::MessageDag;
use fabricsim::scenario::Scenario;
use fabricsim::units::Time;
use fabricsim::workload::run_engine::Cluster;
use fabricsim::workload::serve::net::Net;
use fabricsim::workload::serve::sim::{Served, run_seed};
use fabricsim::workload::serve::{ServeJob, report};

fn serve(text: &str) -> (Cluster, ServeJob, Vec<Served>) {
    let s = Scenario::parse("test.toml", text).unwrap();
    let (design, topology) = s.design_and_topology().unwrap();
    let cluster = Cluster::of(design, topology, EngineChoice::Flow).unwrap();
    let job = ServeJob::resolve(&s, &cluster.design).unwrap();
    let net = Net::new(&cluster, 3, job.spec.ideal_network);
    let served = run_seed(&job, &net, 3).unwrap();
    (cluster, job, served)
}

/// Five requests one second apart (no queueing: a 4,096-token prefill takes well under a
/// second), 4,096 prompt tokens of 16 KiB each: a 64 MiB prompt, 1.34 ms at 400 Gb/s.
fn scenario(frontend: &str) -> String {
    // Written once: the tests run in parallel and read it.
    static TRACE: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let t = TRACE.get_or_init(|| {
        let t = std::env::temp_dir().join(format!("fabricsim-fe-{}.csv", std::process::id()));
        let lines: String = (0..5).map(|i| format!("{i},4096,2\n")).collect();
        let text = format!("arrival_s,prompt_tokens,output_tokens\n{lines}");
        std::fs::write(&t, text).unwrap();
        t
    });
    format!(
        "[cluster]\ngpus = 24\ngpus_per_node = 8\n[serve]\ntrace = \"{}\"\n{frontend}",
        t.display()
    )
}

const PROMPT_BYTES: u64 = 4096 * 16384;

#[test]
fn at_low_load_ttft_rises_by_the_prompts_transfer_time() {
    let (_, plain, none) = serve(&scenario(""));
    let fe = "[frontend]\nservers = 1\nnics = 1\nprompt_bytes_per_token = 16384\n";
    let (cluster, job, with) = serve(&scenario(fe));
    // The front-end host's port: the last server's first NIC (roce-400g: 400 Gb/s).
    let f = job.frontend.as_ref().unwrap();
    assert_eq!(f.servers, [2]);
    let topo = &cluster.topology;
    let host = topo.host_of(2, 0).unwrap();
    let rate = topo.link(topo.port(topo.host_port(host)).link).rate.0 as f64;
    let wire_ps = PROMPT_BYTES as f64 * 8.0 / rate * 1e12;
    for (a, b) in none.iter().zip(&with) {
        assert_eq!(a.frontend_ps, 0);
        // Nothing else moves: the rise in TTFT is the front-end time (to 10 ns of rounding
        // in the engine's rates at a shifted start).
        let rise = b.ttft_ps() as i64 - a.ttft_ps() as i64;
        assert!(
            (rise - b.frontend_ps as i64).abs() < 10_000,
            "rise {rise} ps, front-end {} ps",
            b.frontend_ps
        );
        assert!(
            a.kv_ps.abs_diff(b.kv_ps) < 10_000,
            "{} {}",
            a.kv_ps,
            b.kv_ps
        );
        // Closed form: the bytes over the port rate plus at most 5% for packet headers and
        // 20 us of path latency and the ACK back (the engine releases the prefill at the
        // sender's completion).
        let t = b.frontend_ps as f64;
        assert!(
            t >= wire_ps && t <= 1.05 * wire_ps + 20e6,
            "front-end {t} ps vs bytes / rate {wire_ps} ps"
        );
    }
    let m = report::Metrics::of(&job, &with);
    let share = m.get("ttft_frontend_share");
    let expect = with.iter().map(|s| s.frontend_ps).sum::<u64>() as f64
        / with.iter().map(Served::ttft_ps).sum::<u64>() as f64;
    assert!(
        share > 0.0 && (share - expect).abs() < 1e-12,
        "{share} {expect}"
    );
    assert_eq!(
        m.0.len(),
        report::FIGURES.len() + report::FRONTEND_FIGURES.len()
    );
    assert_eq!(
        report::Metrics::of(&plain, &none).0.len(),
        report::FIGURES.len()
    );
}

#[test]
fn a_separate_front_end_network_takes_the_bytes_over_the_port_rate() {
    let (_, _, none) = serve(&scenario(""));
    let fe = "[frontend]\nservers = 1\nnics = 1\nfabric = \"separate\"\nprompt_bytes_per_token = 16384\n";
    let (cluster, _, with) = serve(&scenario(fe));
    let topo = &cluster.topology;
    let host = topo.host_of(2, 0).unwrap();
    let bps = topo.link(topo.port(topo.host_port(host)).link).rate.0 as f64 / 8.0;
    let t = Time::from_secs_f64(PROMPT_BYTES as f64 / bps).ps();
    for (a, b) in none.iter().zip(&with) {
        assert_eq!(b.frontend_ps, t);
        let rise = b.ttft_ps() as i64 - a.ttft_ps() as i64;
        assert!((rise - t as i64).abs() < 10_000, "rise {rise} vs {t}");
    }
}

#[test]
fn a_colocated_deployment_waits_for_its_prompts_too() {
    let colo = "mode = \"colocated\"\ndecode_instances = 2\n";
    let (_, _, none) = serve(&(scenario("") + colo));
    let fe = "prompt_bytes_per_token = 16384\n";
    let text = scenario("") + colo + "[frontend]\nservers = 1\nnics = 1\n" + fe;
    let (_, _, with) = serve(&text);
    for (a, b) in none.iter().zip(&with) {
        assert!(b.frontend_ps > 0);
        let rise = b.ttft_ps() as i64 - a.ttft_ps() as i64;
        assert!(
            (rise - b.frontend_ps as i64).abs() < 10_000,
            "rise {rise} vs {}",
            b.frontend_ps
        );
    }
}

/// Low load, idle fabric: each request's end to end is its TTFT, its decode time and its last
/// token's transfer from the decode GPU to the front-end, the transfer as long as the engine
/// takes for that one 16 KiB message alone on the fabric (to 2%: the closed form is the flow
/// engine's unloaded latency, the engine adds its own rounding); TPOT does not move.
#[test]
fn at_low_load_end_to_end_is_ttft_decode_and_the_last_tokens_transfer() {
    let (_, _, none) = serve(&scenario(""));
    let fe = "[frontend]\nservers = 1\nnics = 1\nresponse_bytes_per_token = 16384\n";
    let (cluster, job, with) = serve(&scenario(fe));
    let net = Net::new(&cluster, 3, false);
    let front = cluster.topology.host_of(2, 0).unwrap();
    let d = job.decode.len();
    let mut e2e = Vec::new();
    for (i, (a, b)) in none.iter().zip(&with).enumerate() {
        assert_eq!(
            a.finish_ps - a.first_token_ps,
            b.finish_ps - b.first_token_ps
        );
        assert_eq!(a.response_ps, 0);
        let mut dag = MessageDag::default();
        dag.push(
            net.host(job.decode[i % d][0]),
            front,
            16384,
            Time::ZERO,
            &[],
        );
        let engine = net.run(&dag).unwrap()[0].recv_ps.unwrap();
        assert!(
            b.response_ps.abs_diff(engine) * 50 <= engine,
            "closed form {} ps vs engine {engine} ps",
            b.response_ps
        );
        let want = b.ttft_ps() + (b.finish_ps - b.first_token_ps) + engine;
        assert!(
            b.e2e_ps().abs_diff(want) * 50 <= b.response_ps,
            "{} {want}",
            b.e2e_ps()
        );
        e2e.push(b.e2e_ps());
    }
    e2e.sort_unstable();
    let m = report::Metrics::of(&job, &with);
    assert_eq!(
        m.get("e2e_p50"),
        report::percentile(&e2e, 50.0) as f64 / 1e12
    );
    assert!(m.get("e2e_network_share") > 0.0 && m.get("e2e_network_share") < 1.0);
}

/// On a separate front-end network the last token takes its bytes over the front-end port.
#[test]
fn a_separate_network_takes_the_last_tokens_bytes_over_the_port_rate() {
    let fe = "[frontend]\nservers = 1\nnics = 1\nfabric = \"separate\"\n";
    let (cluster, _, with) = serve(&scenario(fe));
    let topo = &cluster.topology;
    let host = topo.host_of(2, 0).unwrap();
    let bps = topo.link(topo.port(topo.host_port(host)).link).rate.0 as f64 / 8.0;
    // The default: 4 B per token.
    let t = Time::from_secs_f64(4.0 / bps).ps();
    for s in &with {
        assert_eq!(s.response_ps, t);
        assert_eq!(s.e2e_ps(), s.finish_ps + t - s.request.arrival_ps);
    }
}
