//! Scale benchmark of the flow engine (issue 7):
//! (a) one all-to-all among 4,096 GPUs (512 servers, rail-optimized 2-tier, 128-port 400G);
//! (b) the scale-out traffic of one Llama 3 405B step on 131,072 H100 GPUs (TP 8 in the node,
//!     PP 16, DP 1,024) on a 3-tier rail-optimized fabric of 128-port 400G switches: the
//!     pipeline's activation and gradient sends between stages, then every stage's
//!     data-parallel ring all-reduce (TP stays on NVLink).
//!
//! Run: `cargo run --release -p fabricsim --example flow_bench -- all`, or `-- a [gpus]`, or
//! `-- b [channels] [steps] [dp]`; `--tol=X` sets the batching tolerance
//! (`FlowParams::batch_tol`, default 0: exact). `channels` is the number of NCCL channels
//! (rings) per data-parallel group in (b), default 1 (64 gives 8,192 rings of 1,024 ranks);
//! `steps` the ring steps simulated, default 4; `dp` the data-parallel degree, default 1,024
//! (131,072 GPUs). Each case prints its engine wall time, and the process's CPU time and peak
//! resident memory so far (Linux `/proc/self`; `/usr/bin/time -v` gives the same).

use std::time::Instant;

use fabricsim::flow::{self, FlowParams, FlowStats};
use fabricsim::message::MessageDag;
use fabricsim::sim::{RunResult, SimParams};
use fabricsim::topology::{Kind, Tiers, TopologySpec, build};
use fabricsim::units::{BitRate, Time};
use fabricsim::workload::collective::{self, CollectiveSpec, Comm, Op};
use fabricsim::workload::placement::Placement;

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

/// (b) The DP all-reduce of Llama 3 405B on 131,072 GPUs, as ring steps: `steps` consecutive
/// steps of every ring with their real dependencies (the step-k send of rank i waits for rank
/// i-1's step k-1 send) are simulated; every ring step repeats the same flow set, so the other
/// steps follow from the last simulated one (see below).
fn llama_dp_all_reduce(channels: u32, steps: u32, dp: u32, fp: &FlowParams) {
    let t0 = Instant::now();
    let (tp, pp) = (8u32, 16u32);
    let topo = build(&spec(tp * pp * dp, 3)).expect("rail-optimized fabric");
    // Llama 3 405B: 405e9 parameters (Llama 3 paper, Dubey et al. 2024, table 3); per GPU the
    // gradient of its PP stage's TP shard in bf16: 405e9 / 16 / 8 x 2 B = 6,328,125,000 B.
    let grad_bytes: u64 = 405_000_000_000 / (pp * tp) as u64 * 2;
    // A ring all-reduce moves the buffer in n chunks, one per step, split over the channels.
    let chunk = grad_bytes / dp as u64 / channels as u64;
    let servers_per_stage = topo.servers / pp;
    // GPU `rail` of server `d` of PP stage `stage` (TP rank `rail` of DP replica `d`).
    let host = |stage: u32, d: u32, rail: u32| {
        topo.host_of(stage * servers_per_stage + d, rail as u16)
            .expect("host")
    };
    let mut dag = MessageDag::default();
    // The pipeline's traffic first: with a global batch of 16M tokens (Llama 3 paper, 3.4.1)
    // in 8,192-token sequences over DP 1,024, each replica runs 2 micro-batches. Every
    // micro-batch sends its activations forward across the 15 stage boundaries and its
    // gradients back, each TP rank its 1/8 of them (sequence parallel): 8,192 x 16,384 hidden
    // x 2 B / 8 = 33,554,432 B per GPU per boundary, on the GPU's rail. A send waits for the
    // one that brought the micro-batch to this stage, and for the previous micro-batch's send
    // on the same boundary (one stream per boundary). Compute is not modelled (fabric only).
    let micro: u32 = 2;
    let act_bytes: u64 = 8_192 * 16_384 * 2 / tp as u64;
    // Per (replica, rail): the pipeline's last message (the last micro-batch's gradients
    // reaching stage 0), which every stage's DP all-reduce waits for: the all-reduce after
    // the pipeline flush (Megatron-LM without overlap). Overlapping them would tie every
    // ring to the cross-stage sends in one max-min component for the whole step.
    let mut grads_ready = vec![0u32; (dp * tp) as usize];
    for d in 0..dp {
        for rail in 0..tp {
            let mut fwd_prev: Vec<Option<u32>> = vec![None; pp as usize];
            let mut bwd_prev: Vec<Option<u32>> = vec![None; pp as usize];
            for _u in 0..micro {
                let mut last: Option<u32> = None;
                // The send across boundary `b` from stage `from` to `to` on QP `qp` (1 forward,
                // 2 backward), after `last` and the previous micro-batch's send there.
                let mut send = |from: u32, to: u32, prev: &mut Option<u32>, qp: u16| {
                    let deps: Vec<u32> = [last, *prev].into_iter().flatten().collect();
                    let m = dag.push(
                        host(from, d, rail),
                        host(to, d, rail),
                        act_bytes,
                        Time::ZERO,
                        &deps,
                    );
                    dag.messages[m as usize].qp = qp;
                    *prev = Some(m);
                    last = Some(m);
                    m
                };
                for sgn in 0..pp - 1 {
                    send(sgn, sgn + 1, &mut fwd_prev[sgn as usize], 1);
                }
                for sgn in (1..pp).rev() {
                    let m = send(sgn, sgn - 1, &mut bwd_prev[sgn as usize], 2);
                    grads_ready[(d * tp + rail) as usize] = m;
                }
            }
        }
    }
    let pp_msgs = dag.messages.len();
    let rings = tp * pp * channels;
    dag.messages.reserve((rings * dp * steps) as usize);
    let mut prev: Vec<u32> = Vec::with_capacity(dp as usize);
    let mut cur: Vec<u32> = Vec::with_capacity(dp as usize);
    for stage in 0..pp {
        for rail in 0..tp {
            // DP group (TP rank `rail`, PP `stage`): GPU `rail` of the stage's 1,024 servers,
            // all on rail `rail`; it starts after the pipeline flush.
            for ch in 0..channels {
                prev.clear();
                for step in 0..steps {
                    cur.clear();
                    for d in 0..dp {
                        let ready = [grads_ready[(d * tp + rail) as usize]];
                        let deps: &[u32] = if step == 0 {
                            &ready
                        } else {
                            &prev[((d + dp - 1) % dp) as usize..][..1]
                        };
                        let m = dag.push(
                            host(stage, d, rail),
                            host(stage, (d + 1) % dp, rail),
                            chunk,
                            Time::ZERO,
                            deps,
                        );
                        dag.messages[m as usize].qp = 8 + ch as u16;
                        cur.push(m);
                    }
                    std::mem::swap(&mut prev, &mut cur);
                }
            }
        }
    }
    let built = secs(t0);
    let t1 = Instant::now();
    let (r, st) = flow::run(&topo, &SimParams::roce(), &dag, fp).expect("valid DAG");
    let wall = secs(t1);
    println!(
        "(b) Llama 3 405B DP all-reduce, {} GPUs, TP {tp} PP {pp} DP {dp}: {} servers, \
         rail-optimized {} tiers, {} links; {rings} rings x {dp} ranks, {} B gradient per GPU, \
         {chunk} B per flow per step, {steps} of the {} ring steps simulated \
         ({} messages), after the pipeline's {pp_msgs} activation and gradient sends of \
         {act_bytes} B; fabric + DAG {built:.2} s",
        tp * pp * dp,
        topo.servers,
        topo.tiers,
        topo.links.len(),
        grad_bytes,
        2 * (dp - 1),
        rings * dp * steps,
    );
    report("(b)", &r, &st, wall);
    // Every ring step repeats the same flow set, so each ring edge keeps the duration it had
    // in the last simulated step: dur(d) = finish(d, k) - finish(d-1, k-1). The DAG's
    // recurrence T(d, k) = T(d-1, k-1) + dur(d) then gives the last step (k = 2n-3) exactly:
    // T(d, 2n-3) = T(d+3, 0) + 2 sum(dur) - dur(d+1) - dur(d+2) - dur(d+3) (indices mod n).
    let n = dp as usize;
    let fin = |ring: u32, k: u32, d: usize| -> u64 {
        r.messages[pp_msgs + ((ring * steps + k) * dp) as usize + d]
            .finish_ps
            .expect("every message completes")
    };
    let (mut end_ps, mut step_sum) = (0u64, 0u128);
    let mut dur = vec![0u64; n];
    for ring in 0..rings {
        let k = steps - 1;
        for (d, du) in dur.iter_mut().enumerate() {
            *du = fin(ring, k, d) - fin(ring, k - 1, (d + n - 1) % n);
        }
        let total: u64 = dur.iter().sum();
        step_sum += total as u128;
        for d in 0..n {
            let t = fin(ring, 0, (d + 3) % n) + 2 * total
                - dur[(d + 1) % n]
                - dur[(d + 2) % n]
                - dur[(d + 3) % n];
            end_ps = end_ps.max(t);
        }
    }
    let mean_step = step_sum as f64 / (rings as f64 * n as f64);
    println!(
        "(b) mean ring-edge step {:.3} us; all-reduce of the step's gradients {:.3} ms; bus \
         bandwidth {:.1} GB/s (busbw = 2(n-1)/n x S / t, nccl-tests PERFORMANCE.md)",
        mean_step / 1e6,
        end_ps as f64 / 1e9,
        2.0 * (dp - 1) as f64 / dp as f64 * grad_bytes as f64 / (end_ps as f64 / 1e12) / 1e9,
    );
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
    let (channels, steps, dp) = if which == "b" {
        (arg(2, 1), arg(3, 4), arg(4, 1024))
    } else {
        (1, 4, 1024)
    };
    if which == "b" || which == "all" {
        llama_dp_all_reduce(channels, steps.max(2), dp, &fp);
        print_usage();
    }
}
