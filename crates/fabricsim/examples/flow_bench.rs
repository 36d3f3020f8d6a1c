//! Scale benchmark of the flow engine (issue 7):
//! (a) one all-to-all among 4,096 GPUs (512 servers, rail-optimized 2-tier, 128-port 400G);
//! (b) one whole training step of Llama 3 405B on 131,072 H100 GPUs (TP 8 in the node, PP 16,
//!     DP 1,024) with its scale-out traffic on a 3-tier rail-optimized fabric of 128-port 400G
//!     switches: the `workload::train::step_dag` DAG (1F1B compute as message delays, TP on
//!     NVLink, the pipeline's sends, every stage's DP ring all-reduce), so it prints the step
//!     time and MFU.
//!
//! Run: `cargo run --release -p fabricsim --example flow_bench -- all`, or `-- a [gpus]`, or
//! `-- b [steps] [dp]`; `--tol=X` sets the batching tolerance (`FlowParams::batch_tol`,
//! default 0: exact). In (b), `steps` is the ring steps the first pass simulates per DP ring
//! (default 4, at least 3; later passes simulate more where a pipeline flow meets a ring, the
//! others are derived and the output says how), `dp` the data-parallel degree,
//! default 1,024 (131,072 GPUs). Each case prints its engine wall time, and the process's CPU time and peak
//! resident memory so far (Linux `/proc/self`; `/usr/bin/time -v` gives the same).

use std::time::Instant;

use fabricsim::flow::{self, FlowParams, FlowStats, PathModel, paths};
use fabricsim::message::Path;
use fabricsim::scenario::Scenario;
use fabricsim::sim::{RunResult, SimParams};
use fabricsim::topology::{Kind, Tiers, Topology, TopologySpec, build};
use fabricsim::units::BitRate;
use fabricsim::workload::collective::{self, CollectiveSpec, Comm, Op};
use fabricsim::workload::comm_model::AlphaBetaModel;
use fabricsim::workload::link_params::FabricParams;
use fabricsim::workload::placement::Placement;
use fabricsim::workload::train::config::TrainConfig;
use fabricsim::workload::train::efficiency::Efficiency;
use fabricsim::workload::train::step::{StepReport, step};
use fabricsim::workload::train::step_dag::{self, DagOptions, StepDag};

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

/// (b) One training step of Llama 3 405B on `128 x dp` H100s (TP 8 in the server, PP 16, DP
/// `dp`, 1,024 for 131,072 GPUs) compiled by `workload::train::step_dag`: per replica and rail,
/// 1F1B compute as message delays (the compute model of `fabricsim train`), TP all-reduces on
/// NVLink, the pipeline's sends, then every stage's DP ring all-reduce of its gradients.
/// Each ring's first steps are simulated and the rest derived (see [`derive_rings`]): a first
/// pass simulates `steps` of every ring; while a derived ring step would share a link with a
/// pipeline flow, the next pass simulates that ring `MARGIN` steps past the last such step
/// (so the engine, not the rule, times every step whose set of concurrent flows differs).
fn llama_step(steps: u32, dp: u32, fp: &FlowParams) {
    let t0 = Instant::now();
    let (tp, pp) = (8u32, 16u32);
    let gpus = tp * pp * dp;
    let topo = build(&spec(gpus, 3)).expect("rail-optimized fabric");
    // The job as `fabricsim train` reads it; the gradient all-reduce after the flush (the
    // DAG does not overlap it with the backward) in one bucket, as the DAG's one ring. The
    // batch: 16M tokens = 2,048 sequences of 8,192 (Llama 3 paper §3.4.1), 2 micro-batches per
    // replica at DP 1,024; a smaller `dp` keeps the 2 micro-batches.
    let mut s = Scenario::defaults();
    let flags: Vec<(String, String)> = [
        ("--gpus", gpus.to_string()),
        ("--gpu", "h100".into()),
        ("--model", "llama3-405b".into()),
        ("--tp", tp.to_string()),
        ("--pp", pp.to_string()),
        ("--dp-overlap", "false".into()),
        ("--dp-bucket-mb", "1000000".into()),
        ("--global-batch", (2 * dp).to_string()),
    ]
    .into_iter()
    .map(|(f, v)| (f.to_string(), v))
    .collect();
    s.apply_flags(&flags).expect("flags");
    let design = s.design().expect("design");
    let place = Placement::on_topology(&topo, 8);
    let cfg = TrainConfig::resolve(&s, &design, place).expect("the job fits");
    let eff = Efficiency::h200(&design.catalog);
    let nvlink = BitRate((design.gpu.nvlink_one_way_bytes_per_s() * 8.0).round() as u64);
    let analytic = step(&cfg, &eff, &AlphaBetaModel::new(FabricParams::of(&design)));
    let p = SimParams::roce();
    let total = 2 * (dp - 1);
    let mut opts = DagOptions {
        ring_steps: None,
        ring_steps_each: vec![steps.min(total); (tp * pp) as usize],
    };
    println!("(b) fabric {:.2} s", secs(t0));
    for pass in 1.. {
        let t1 = Instant::now();
        let sd = step_dag::compile(&cfg, &eff, nvlink, opts.clone()).expect("dense job");
        let built = secs(t1);
        let t2 = Instant::now();
        let (r, st) = flow::run(&topo, &p, &sd.dag, fp).expect("valid DAG");
        let wall = secs(t2);
        let d = derive_rings(&topo, &p, &sd, &r);
        let met: usize = d.last_met.iter().filter(|m| m.is_some()).count();
        println!(
            "(b) pass {pass}: {} ring steps simulated of {} ({} messages, DAG {built:.2} s, \
             engine {wall:.2} s); rings whose derived steps share a link with a pipeline flow: \
             {met}",
            opts.ring_steps_each.iter().map(|&k| k as u64).sum::<u64>(),
            total as u64 * sd.rings.len() as u64,
            sd.dag.messages.len(),
        );
        if met == 0 || pass == MAX_PASSES {
            report_step(&cfg, &sd, &r, &st, &d, &analytic, wall);
            return;
        }
        for (i, m) in d.last_met.iter().enumerate() {
            if let Some(k) = m {
                opts.ring_steps_each[i] = (k + 1 + MARGIN).clamp(opts.ring_steps_each[i], total);
            }
        }
    }
}

/// Passes of (b) before it reports what the last one left inexact.
const MAX_PASSES: u32 = 4;
/// Ring steps a pass simulates past the last derived step that met a pipeline flow. The
/// meetings the next pass simulates move both the rings and the pipeline, so a third pass may
/// find new ones: at 131,072 GPUs a margin of 8 steps still left 2 rings to a third pass (as 1
/// left 3), so the margin is kept small and the passes go on until none meets.
const MARGIN: u32 = 1;

/// (b)'s report of its last pass.
fn report_step(
    cfg: &TrainConfig,
    sd: &StepDag,
    r: &RunResult,
    st: &FlowStats,
    d: &Derived,
    analytic: &StepReport,
    wall: f64,
) {
    let ring0 = sd.rings[0];
    let n = ring0.ranks as usize;
    let gpus = sd.gpus;
    println!(
        "(b) Llama 3 405B step, {gpus} H100 GPUs, TP {} PP {} DP {}, stages of {:?} layers, \
         {} micro-batches; DAG of {} messages: {} pipeline (compute as delays, TP on NVLink, \
         sends) + {} rings x {n} ranks x (simulated steps) of the {} ring all-reduce steps",
        cfg.par.tp,
        cfg.par.pp,
        cfg.par.dp,
        cfg.par.stage_layers,
        cfg.par.micro_batches(cfg.model.global_batch),
        sd.dag.messages.len(),
        sd.pipeline_messages,
        sd.rings.len(),
        ring0.steps_total,
    );
    report("(b)", r, st, wall);
    let pipe_end = r.messages[..sd.pipeline_messages as usize]
        .iter()
        .filter_map(|m| m.finish_ps)
        .max()
        .unwrap_or(0);
    let end_ps = pipe_end.max(d.end_ps);
    let step_s = end_ps as f64 / 1e12;
    println!(
        "(b) simulated ring steps, per step the time from the previous rank's step to this \
         one (min..max over all {} rings' edges; the first 4 steps):",
        sd.rings.len()
    );
    for (k, (lo, hi)) in d.per_step.iter().enumerate().skip(1).take(3) {
        println!(
            "    step {k}: {:.3} .. {:.3} us",
            *lo as f64 / 1e6,
            *hi as f64 / 1e6
        );
    }
    let rings = sd.rings.len();
    let exact: Vec<bool> = (0..rings).map(|i| d.overlaps[i] == 0).collect();
    let last = sd.rings[d.last_ring];
    // An inexact ring's end plus its bound stays below the step's end: the step time holds.
    let holds = (0..rings)
        .all(|i| exact[i] || d.ring_end[i] + d.overlap_ps[i] + d.pipeline_bound_ps <= end_ps);
    let simulated: u64 = sd.rings.iter().map(|r| r.steps_compiled as u64).sum();
    let derived = ring0.steps_total as u64 * rings as u64 - simulated;
    println!(
        "(b) derived: the other {derived} ring steps ({} messages) by the flow engine's own \
         rule for a flow alone on its path at its line rate (post = the previous rank's \
         finish; bytes start after the NIC latency or when the QP's previous message has \
         drained; drain = wire bytes / line rate; then the path and ACK latencies). Checks: \
         the rule reproduces {} of the {} simulated ring messages after step 0 to the \
         picosecond ({} others met a pipeline flow on a link, which the engine simulated; \
         unexplained: {}); directed links carrying two ring flows: {}; rings whose derived \
         steps meet no other flow (exact): {} of {rings}.",
        derived * n as u64,
        d.reproduced,
        d.checked,
        d.checked - d.reproduced - d.unexplained,
        d.unexplained,
        d.shared_links,
        exact.iter().filter(|&&e| e).count(),
    );
    if exact.iter().any(|&e| !e) {
        let worst = (0..rings)
            .filter(|&i| !exact[i])
            .map(|i| (d.overlap_ps[i], end_ps - d.ring_end[i]))
            .fold((0u64, u64::MAX), |a, b| (a.0.max(b.0), a.1.min(b.1)));
        println!(
            "(b) the other rings' derived steps share a link with {} pipeline flows, which the \
             derivation ignores both ways: each pipeline flow can take from its ring at most \
             its wire time there, at most {:.3} ms per ring, and those rings end at least \
             {:.3} ms before the step does",
            d.overlaps.iter().sum::<u64>(),
            worst.0 as f64 / 1e9,
            worst.1 as f64 / 1e9,
        );
    }
    let bound = d.pipeline_bound_ps;
    println!(
        "(b) the step ends with ring (stage {}, rail {}), derived {}; {}",
        last.stage,
        last.rail,
        if exact[d.last_ring] {
            "exactly"
        } else {
            "NOT exactly"
        },
        if !(exact[d.last_ring] && holds && d.shared_links == 0 && d.unexplained == 0) {
            "so the step time below is an APPROXIMATION".to_string()
        } else if bound == 0 {
            "so the step time below is exact for this model".to_string()
        } else {
            format!(
                "the pipeline sends that share a link with a derived ring flow could take up to \
                 {:.3} ms longer along one (replica, rail) (the sum of their wire times), so \
                 the step time below is exact for this model up to +{:.3} ms (a bound)",
                bound as f64 / 1e9,
                bound as f64 / 1e9
            )
        }
    );
    println!(
        "(b) step time {step_s:.6} s (pipeline and TP {:.6} s, then the DP all-reduce {:.6} s), \
         MFU {:.1}%; analytic `fabricsim train` model of the same job (alpha-beta on the \
         roce-400g profile): step {:.3} s, MFU {:.1}%",
        pipe_end as f64 / 1e12,
        step_s - pipe_end as f64 / 1e12,
        100.0 * sd.mfu(step_s),
        analytic.step_time_s,
        100.0 * analytic.mfu,
    );
}

/// What [`derive_rings`] found.
struct Derived {
    /// The latest finish of a ring's last step, and that ring.
    end_ps: u64,
    last_ring: usize,
    /// Per simulated step (of ring 0's count): min and max over all ring edges of
    /// finish(d, k) - finish(d-1, k-1).
    per_step: Vec<(u64, u64)>,
    checked: u64,
    reproduced: u64,
    /// Simulated ring messages the rule misses without a pipeline flow on their links then.
    unexplained: u64,
    shared_links: u64,
    /// Per ring: its derived end, the pipeline flows that share one of its links while one
    /// of its derived steps runs there, their wire time on that link, and its last derived
    /// step that met one.
    ring_end: Vec<u64>,
    overlaps: Vec<u64>,
    overlap_ps: Vec<u64>,
    last_met: Vec<Option<u32>>,
    /// The most one (replica, rail)'s pipeline can be slowed by derived ring flows on its
    /// links: the sum of its sends' wire times there.
    pipeline_bound_ps: u64,
}

/// The ring steps the run did not simulate, from the last simulated one, by the flow engine's
/// rule for a flow alone on its path (`flow::fluid`): ring position d's step k is posted when
/// position d-1's step k-1 completes; its bytes start after the NIC latency, or when its QP's
/// previous message has drained if later; they drain at the route's line rate (wire bytes,
/// `ceil(bits x 10^12 / rate)` ps); the receiver has them one path latency later and the
/// sender's completion comes one ACK latency after that. Exact when every ring flow is alone
/// on its links: checked by the rule reproducing the simulated steps, no directed link
/// carrying two ring flows, and no pipeline flow on a ring edge's links (from its post to its
/// completion) while one of that edge's derived steps runs (bytes start to receipt).
fn derive_rings(topo: &Topology, p: &SimParams, sd: &StepDag, r: &RunResult) -> Derived {
    let router = paths::Router::new(topo, p.routing);
    let caps = paths::capacities(topo);
    let nic = p.nic_latency.ps();
    let mut links = Vec::new();
    // The directed links of message `i` (a Net message) and their line rate.
    let route = |i: usize, links: &mut Vec<u32>| -> u64 {
        let m = &r.messages[i];
        let qp = m.qp.expect("a fabric message");
        let (hash, _) = paths::qp_hashes(p, qp, m.src, m.dst);
        links.clear();
        let hm = PathModel::Hash;
        paths::subflow_links(topo, &router, hm, m.src, m.dst, hash, 0, |_| 0, links);
        links.iter().map(|&l| caps[l as usize]).min().unwrap_or(0)
    };
    let fin = |i: usize| r.messages[i].finish_ps.expect("every message completes");
    let recv = |i: usize| r.messages[i].recv_ps.expect("every message completes");
    let ring0 = sd.rings[0];
    let rings = sd.rings.len();
    let mut out = Derived {
        end_ps: 0,
        last_ring: 0,
        per_step: vec![(u64::MAX, 0); ring0.steps_compiled as usize],
        checked: 0,
        reproduced: 0,
        unexplained: 0,
        shared_links: 0,
        ring_end: vec![0; rings],
        overlaps: vec![0; rings],
        overlap_ps: vec![0; rings],
        last_met: vec![None; rings],
        pipeline_bound_ps: 0,
    };
    // Ring edges (ring `ix`, position d: edge `ix * n + d`): per directed link how many ring
    // flows use it and the edge (the last one seen); per edge its drain time, path and ACK
    // latencies.
    let n = ring0.ranks as usize;
    let id = |ri: &step_dag::RingIndex, k: u32, d: usize| (ri.first + k * ri.ranks) as usize + d;
    let mut used = vec![0u8; caps.len()];
    let mut edge_of = vec![u32::MAX; caps.len()];
    let edges = rings * n;
    let (mut drain, mut lat, mut ack) = (vec![0u64; edges], vec![0u64; edges], vec![0u64; edges]);
    for (ix, ri) in sd.rings.iter().enumerate() {
        for d in 0..n {
            let (e, i) = (ix * n + d, id(ri, ri.steps_compiled - 1, d));
            let rate = route(i, &mut links);
            let wire = paths::wire_bytes(p, r.messages[i].bytes) as u128;
            drain[e] = (wire * 8 * 1_000_000_000_000).div_ceil(rate as u128) as u64;
            lat[e] = paths::one_way_ps(topo, p, &links);
            ack[e] = fin(i) - recv(i);
            for &l in &links {
                used[l as usize] = used[l as usize].saturating_add(1);
                edge_of[l as usize] = e as u32;
            }
        }
    }
    out.shared_links = used.iter().filter(|&&u| u > 1).count() as u64;
    // Pipeline flows on a ring edge's links: (post, finish, message, link) per edge.
    let mut on_edge: Vec<Vec<(u64, u64, u32, u32)>> = vec![Vec::new(); edges];
    for (i, m) in sd.dag.messages[..sd.pipeline_messages as usize]
        .iter()
        .enumerate()
    {
        if m.path != Path::Net {
            continue;
        }
        let post = r.messages[i].start_ps.expect("posted");
        route(i, &mut links);
        for &l in &links {
            if let Some(&e) = edge_of.get(l as usize).filter(|&&e| e != u32::MAX) {
                on_edge[e as usize].push((post, fin(i), i as u32, l));
            }
        }
    }
    // Per pipeline message: the most wire time it lost to a derived ring flow on one link.
    let mut met_ps = vec![0u64; sd.pipeline_messages as usize];
    let mut missed: Vec<(usize, usize)> = Vec::new();
    for (ix, ri) in sd.rings.iter().enumerate() {
        let last = ri.steps_compiled - 1;
        let e0 = ix * n;
        // The rule: (bytes start, recv, finish) of step k at d from step k-1's.
        let step = |d: usize, prev_fin: u64, own_recv: u64| -> (u64, u64, u64) {
            let e = e0 + d;
            let bytes_start = (prev_fin + nic).max(own_recv - lat[e]);
            let rv = bytes_start + drain[e] + lat[e];
            (bytes_start, rv, rv + ack[e])
        };
        for k in 1..=last {
            for d in 0..n {
                let prev = fin(id(ri, k - 1, (d + n - 1) % n));
                if let Some(e) = out.per_step.get_mut(k as usize) {
                    *e = (
                        e.0.min(fin(id(ri, k, d)) - prev),
                        e.1.max(fin(id(ri, k, d)) - prev),
                    );
                }
                out.checked += 1;
                let (_, rv, f) = step(d, prev, recv(id(ri, k - 1, d)));
                if (rv, f) == (recv(id(ri, k, d)), fin(id(ri, k, d))) {
                    out.reproduced += 1;
                } else {
                    missed.push((id(ri, k, d), e0 + d));
                }
            }
        }
        let mut rv: Vec<u64> = (0..n).map(|d| recv(id(ri, last, d))).collect();
        let mut f: Vec<u64> = (0..n).map(|d| fin(id(ri, last, d))).collect();
        let pipe_edges: Vec<usize> = (0..n).filter(|&d| !on_edge[e0 + d].is_empty()).collect();
        for k in last + 1..ri.steps_total {
            // The rule in place: position d's step reads d-1's previous one, so positions go
            // down (the ring's wrap read first); 268 M steps at 131,072 GPUs, no division.
            let wrap = f[n - 1];
            for d in (0..n).rev() {
                let e = e0 + d;
                let prev_fin = if d == 0 { wrap } else { f[d - 1] };
                let bytes_start = (prev_fin + nic).max(rv[d] - lat[e]);
                rv[d] = bytes_start + drain[e] + lat[e];
                f[d] = rv[d] + ack[e];
            }
            for &d in &pipe_edges {
                let e = e0 + d;
                let start = rv[d] - drain[e] - lat[e];
                for &(a, b, i, l) in &on_edge[e] {
                    if a < rv[d] && b > start {
                        let t = paths::wire_bytes(p, sd.dag.messages[i as usize].bytes) as u128
                            * 8
                            * 1_000_000_000_000;
                        let t = t.div_ceil(caps[l as usize] as u128) as u64;
                        if met_ps[i as usize] == 0 {
                            out.overlaps[ix] += 1;
                            out.overlap_ps[ix] += t;
                        }
                        met_ps[i as usize] = met_ps[i as usize].max(t);
                        out.last_met[ix] = Some(k);
                    }
                }
            }
        }
        out.ring_end[ix] = f.iter().copied().max().unwrap_or(0);
        if out.ring_end[ix] > out.end_ps {
            (out.end_ps, out.last_ring) = (out.ring_end[ix], ix);
        }
    }
    // The derived ring flows were not in the engine to slow the pipeline flows they met: the
    // delay runs down the met flows' (replica, rail) pipeline, whose sends are contiguous.
    let chains = (sd.gpus / sd.pipeline_stages) as usize;
    let per_chain = sd.pipeline_messages as usize / chains;
    let mut chain_extra = vec![0u64; chains];
    for (i, &t) in met_ps.iter().enumerate() {
        chain_extra[i / per_chain] += t;
    }
    out.pipeline_bound_ps = chain_extra.iter().copied().max().unwrap_or(0);
    for &(i, e) in &missed {
        let (post, end) = (r.messages[i].start_ps.expect("posted"), fin(i));
        if !on_edge[e].iter().any(|&(a, b, _, _)| a < end && b > post) {
            out.unexplained += 1;
        }
    }
    out
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
        llama_step(steps.max(3), dp, &fp);
        print_usage();
    }
}
