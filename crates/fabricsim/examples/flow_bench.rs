//! Scale benchmark of the flow engine (issue 7):
//! (a) one all-to-all among 4,096 GPUs (512 servers, rail-optimized 2-tier, 128-port 400G);
//! (b) one whole training step of Llama 3 405B on 131,072 H100 GPUs (TP 8 in the node, PP 16,
//!     DP 1,024) with its scale-out traffic on a 3-tier rail-optimized fabric of 128-port 400G
//!     switches: `workload::train::flow_step` runs the `step_dag` DAG (1F1B compute as message
//!     delays, TP on NVLink, the pipeline's sends, every stage's DP ring all-reduce), so it
//!     prints the step time and MFU (`fabricsim train --step-model flow_dag` runs the same).
//!
//! Run: `cargo run --release -p fabricsim --example flow_bench -- all`, or `-- a [gpus]`, or
//! `-- b [steps] [dp]`; `--tol=X` sets the batching tolerance (`FlowParams::batch_tol`,
//! default 0: exact). In (b), `steps` is the ring steps the first pass simulates per DP ring
//! (default 4, at least 3; later passes simulate more where a pipeline flow meets a ring, the
//! others are derived and the output says how), `dp` the data-parallel degree,
//! default 1,024 (131,072 GPUs). Each case prints its engine wall time, and the process's CPU time and peak
//! resident memory so far (Linux `/proc/self`; `/usr/bin/time -v` gives the same).

use std::time::Instant;

use fabricsim::flow::{self, FlowParams, FlowStats};
use fabricsim::scenario::Scenario;
use fabricsim::sim::{RunResult, SimParams};
use fabricsim::topology::{Kind, Tiers, TopologySpec, build};
use fabricsim::units::BitRate;
use fabricsim::workload::collective::{self, CollectiveSpec, Comm, Op};
use fabricsim::workload::placement::Placement;
use fabricsim::workload::train::flow_step::{self, Pass};
use fabricsim::workload::train::run;

fn spec(gpus: u32, tiers: u8) -> TopologySpec {
    TopologySpec {
        gpus,
        gpus_per_node: 8,
        nics_per_node: 8,
        kind: Kind::RailOptimized,
        tiers: Tiers::Fixed(tiers),
        oversubscription: (1, 1),
        switch_radix: 128,
        port_rate: BitRate::gbps(400),
        planes: 1,
    }
}

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn report(name: &str, r: &RunResult, st: &FlowStats, wall_s: f64) {
    let s = &r.summary;
    println!(
        "{name}: {} messages, {} flows, {} routes, peak {} active; {} event times, {} solves \
         ({} flows re-solved, {} cache hits); end {:.3} us, FCT p50 {:.3} us p99 {:.3} us max \
         {:.3} us; engine {wall_s:.2} s",
        s.messages_total,
        st.flows,
        st.routes,
        st.peak_active,
        st.batches,
        st.solve.resolves,
        st.solve.flows_solved,
        st.solve.cache_hits,
        r.sim.end_ps as f64 / 1e6,
        s.fct_p50_ps.unwrap_or(0) as f64 / 1e6,
        s.fct_p99_ps.unwrap_or(0) as f64 / 1e6,
        s.max_fct_ps.unwrap_or(0) as f64 / 1e6,
    );
}

/// (a) All-to-all as NCCL posts it: every rank sends S/n to every other rank at once.
fn all_to_all(gpus: u32, fp: &FlowParams) {
    let t0 = Instant::now();
    let topo = build(&spec(gpus, 2)).expect("rail-optimized fabric");
    // 256 MB per rank (an nccl-tests alltoall size): 62,500 B to each of the 4,095 others,
    // compiled by the workload layer (NVLink inside a server, the rails across servers).
    let per_rank: u64 = 256_000_000;
    let place = Placement::on_topology(&topo, 8);
    let spec = CollectiveSpec::with_defaults(Op::AllToAll, per_rank, 1);
    // H100 SXM NVLink 4: 900 GB/s both directions, 450 GB/s = 3.6 Tb/s one way (NVIDIA H100
    // datasheet).
    let dag = collective::compile(&spec, &Comm::world(&place), BitRate::gbps(3_600))
        .expect("all-to-all compiles");
    let block = per_rank / gpus as u64;
    let built = secs(t0);
    let t1 = Instant::now();
    let (r, st) = flow::run(&topo, &SimParams::roce(), &dag, fp).expect("valid all-to-all");
    let wall = secs(t1);
    println!(
        "(a) all-to-all, {gpus} GPUs ({} servers), rail-optimized {} tiers, {} links, {} B per \
         pair; fabric + DAG {built:.2} s",
        topo.servers,
        topo.tiers,
        topo.links.len(),
        block
    );
    report("(a)", &r, &st, wall);
}

/// (b) One training step of Llama 3 405B on `128 x dp` H100s (TP 8 in the server, PP 16, DP
/// `dp`, 1,024 for 131,072 GPUs) on a 3-tier rail-optimized roce-400g fabric (128-port 400G
/// switches), as `fabricsim train --step-model flow_dag` runs it: `workload::train::flow_step`
/// (the step DAG on the flow engine, each ring's first `steps` simulated and the rest derived
/// where exact) with the scenario's topology and profile; `tol` overrides the batching
/// tolerance.
fn llama_step(steps: u32, dp: u32, tol: f64) {
    let t0 = Instant::now();
    let (tp, pp) = (8u32, 16u32);
    // The job as `fabricsim train` reads it; the gradient all-reduce after the flush (the
    // DAG does not overlap it with the backward) in one bucket, as the DAG's one ring. The
    // batch: 16M tokens = 2,048 sequences of 8,192 (Llama 3 paper §3.4.1), 2 micro-batches per
    // replica at DP 1,024; a smaller `dp` keeps the 2 micro-batches.
    let mut s = Scenario::defaults();
    let flags: Vec<(String, String)> = [
        ("--gpus", (tp * pp * dp).to_string()),
        ("--gpu", "h100".into()),
        ("--fabric", "roce-400g".into()),
        ("--topology", "rail-optimized".into()),
        ("--tiers", "3".into()),
        ("--model", "llama3-405b".into()),
        ("--tp", tp.to_string()),
        ("--pp", pp.to_string()),
        ("--dp-overlap", "false".into()),
        ("--dp-bucket-mb", "1000000".into()),
        ("--global-batch", (2 * dp).to_string()),
        ("--step-model", "flow_dag".into()),
    ]
    .into_iter()
    .map(|(f, v)| (f.to_string(), v))
    .collect();
    s.apply_flags(&flags).expect("flags");
    let tr = run::run(&s).expect("the job fits");
    let (params, mut fp) = flow_step::scenario_params(&s, &tr).expect("a dense job, hashed paths");
    fp.batch_tol = tol;
    println!("(b) fabric {:.2} s", secs(t0));
    let mut pass = 0;
    let mut on_pass = |p: &Pass| {
        pass += 1;
        println!(
            "(b) pass {pass}: DAG {:.2} s, engine {:.2} s",
            p.dag_wall_s, p.engine_wall_s
        );
    };
    let fs =
        flow_step::simulate_run(&tr, &params, &fp, steps, &mut on_pass).expect("the step runs");
    print!("{}", flow_step::to_text(&fs));
}

/// CPU seconds (user + system) and peak resident memory (kB) of this process so far, from
/// Linux's `/proc/self/stat` (fields 14 and 15, clock ticks of 1/100 s: `USER_HZ` on Linux) and
/// `/proc/self/status` (`VmHWM`); `None` elsewhere.
fn usage() -> Option<(f64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hwm = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb = hwm.split_whitespace().nth(1)?.parse().ok()?;
    Some((ticks as f64 / 100.0, kb))
}

fn print_usage() {
    match usage() {
        Some((cpu, kb)) => println!(
            "process so far: CPU {cpu:.1} s, peak resident memory {:.2} GB",
            kb as f64 / 1e6
        ),
        None => println!("process CPU time and peak memory: not available on this system"),
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let mut fp = FlowParams::default();
    if let Some(i) = args.iter().position(|a| a.starts_with("--tol=")) {
        fp.batch_tol = args[i]["--tol=".len()..].parse().expect("--tol=<number>");
        args.remove(i);
    }
    let which = args.get(1).map(String::as_str).unwrap_or("all");
    let arg = |i: usize, default: u32| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    println!("batching tolerance {}", fp.batch_tol);
    if which == "a" || which == "all" {
        all_to_all(if which == "a" { arg(2, 4096) } else { 4096 }, &fp);
        print_usage();
    }
    let (steps, dp) = if which == "b" {
        (arg(2, 4), arg(3, 1024))
    } else {
        (4, 1024)
    };
    if which == "b" || which == "all" {
        llama_step(steps.max(3), dp, fp.batch_tol);
        print_usage();
    }
}
