//! The whole training step as a message DAG (`workload::train::step_dag`) run on the flow
//! engine, against the analytic step of `train` (`workload::train::step`).

use fabricsim::flow::{self, FlowParams};
use fabricsim::scenario::Scenario;
use fabricsim::workload::collective::Op;
use fabricsim::workload::comm_model::{AlphaBetaModel, GroupShape};
use fabricsim::workload::link_params::FabricParams;
use fabricsim::workload::run_engine::Cluster;
use fabricsim::workload::train::config::TrainConfig;
use fabricsim::workload::train::efficiency::Efficiency;
use fabricsim::workload::train::step::{StepReport, step};
use fabricsim::workload::train::step_dag::{self, DagOptions, StepDag, one_f_one_b};

/// A Llama-3-8B-shaped model with a 128-token vocabulary (equal pipeline stages).
const LLAMA_8B_SHAPED: [(&str, &str); 7] = [
    ("--layers", "16"),
    ("--hidden", "4096"),
    ("--ffn", "14336"),
    ("--heads", "32"),
    ("--kv-heads", "8"),
    ("--vocab", "128"),
    ("--seq", "8192"),
];

fn scenario(flags: &[(&str, &str)]) -> Scenario {
    let mut s = Scenario::defaults();
    let flags: Vec<(String, String)> = flags
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    s.apply_flags(&flags).unwrap();
    s
}

/// The analytic step, the compiled DAG and the DAG's end on the flow engine (seconds).
fn both(s: &Scenario, opts: DagOptions) -> (StepReport, StepDag, f64) {
    let c = Cluster::new(s).unwrap();
    let cfg = TrainConfig::resolve(s, &c.design, c.place.clone()).unwrap();
    let eff = Efficiency::h200(&c.design.catalog);
    let analytic = step(
        &cfg,
        &eff,
        &AlphaBetaModel::new(FabricParams::of(&c.design)),
    );
    let sd = step_dag::compile(&cfg, &eff, c.nvlink(), opts).unwrap();
    let (r, _) = flow::run(&c.topology, &c.params, &sd.dag, &FlowParams::default()).unwrap();
    (analytic, sd, r.sim.end_ps as f64 / 1e12)
}

#[test]
fn one_f_one_b_order_is_megatrons() {
    // pp 4, m 3: stage 0 warms up with 3 forwards, the last stage with none.
    let f = |u| (false, u);
    let b = |u| (true, u);
    assert_eq!(
        one_f_one_b(4, 3, 0),
        vec![f(0), f(1), f(2), b(0), b(1), b(2)]
    );
    assert_eq!(
        one_f_one_b(4, 3, 2),
        vec![f(0), f(1), b(0), f(2), b(1), b(2)]
    );
    assert_eq!(
        one_f_one_b(4, 3, 3),
        vec![f(0), b(0), f(1), b(1), f(2), b(2)]
    );
}

#[test]
fn the_step_dag_agrees_with_the_analytic_step() {
    // A Llama-3-8B-shaped model with a 128-token vocabulary, so that the last stage's output
    // projection is negligible and the stages are equal (the case the analytic 1F1B formula
    // describes), on 64 H100s: TP 8 (a server), PP 2 or 4, DP 4 or 2, 8 micro-batches, the
    // gradient all-reduce after the flush in one bucket (as the DAG's one ring).
    for (pp, gb) in [("2", "32"), ("4", "16")] {
        let mut flags = LLAMA_8B_SHAPED.to_vec();
        flags.extend([
            ("--gpus", "64"),
            ("--global-batch", gb),
            ("--tp", "8"),
            ("--pp", pp),
            ("--dp-overlap", "false"),
            ("--dp-bucket-mb", "100000"),
        ]);
        let s = scenario(&flags);
        let (a, sd, dag_s) = both(&s, DagOptions::default());
        let row = |name: &str| a.collectives.iter().find(|c| c.name == name).unwrap();
        let m = a.micro_batches as f64;
        let slots = m + a.pp as f64 - 1.0;
        // Analytic (step.rs, Narayanan et al. 2021): step = (m + pp - 1) x slot + the
        // all-reduce, slot = compute + TP all-reduces + 2 pipeline sends, bubble (pp-1)/m.
        assert!(close(
            a.bubble_s / (a.compute_s + a.exposed_comm_s - dp_rows(&a)),
            (slots - m) / m
        ));
        // The DAG runs the same compute and moves the same bytes; it differs by
        // (1) the alpha of each TP all-reduce (2(t-1) NVLink hops of 0.47 us each in the
        //     closed form; the DAG's NVLink transfer is bandwidth only): the analytic is
        //     longer by (m + pp - 1) x calls per slot x alpha;
        // (2) the pipeline sends: the analytic charges both sends of every slot to the
        //     critical path; in the DAG's 1F1B a stage waits for a send only when its own
        //     work does not cover it (with pp = 2, every other micro-batch), so the DAG is
        //     shorter by between 0 and (m + pp - 1) x 2 sends;
        // (3) latencies: the engine's per-message latency against the closed form's alpha,
        //     within 0.2% here.
        let tp = row("tp_all_reduce");
        let tp_alpha = {
            let c = Cluster::new(&s).unwrap();
            let ab = AlphaBetaModel::new(FabricParams::of(&c.design));
            let g = GroupShape {
                ranks: tp.ranks,
                servers: tp.servers,
            };
            ab.model(Op::AllReduce, g).alpha_s
        };
        let upper = a.step_time_s - slots * (tp.calls_per_step as f64 / m) * tp_alpha;
        let lower = upper - slots * 2.0 * row("pp_send_recv").time_per_call_s;
        eprintln!(
            "pp {pp}: analytic {:.6} s, DAG {dag_s:.6} s, closed-form bounds [{lower:.6}, {upper:.6}]",
            a.step_time_s
        );
        assert!(dag_s > lower * 0.998 && dag_s < upper * 1.002, "pp {pp}");
        assert!((dag_s / a.step_time_s - 1.0).abs() < 0.02);
        // Both MFUs are Megatron's model FLOPs over time x GPUs x peak.
        assert!(close(sd.mfu(dag_s) * dag_s, a.mfu * a.step_time_s));
    }
}

/// The exposed data-parallel time of a report (the rows after the flush).
fn dp_rows(r: &StepReport) -> f64 {
    r.collectives
        .iter()
        .filter(|c| c.name.starts_with("dp_") || c.name.starts_with("edp_"))
        .map(|c| c.exposed_s)
        .sum()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn a_truncated_ring_keeps_its_first_steps_where_the_index_says() {
    // pp 2, tp 8, dp 4 (4 servers per stage): 16 rings (2 stages x 8 rails) of 4 ranks, 3 of
    // their 2(4-1) = 6 steps compiled. Step k of ring position i is message
    // first + k * ranks + i, from replica i to replica i+1 of the ring's stage and rail.
    let s = scenario(&[
        ("--gpus", "64"),
        ("--model", "llama3-8b"),
        ("--global-batch", "32"),
        ("--tp", "8"),
        ("--pp", "2"),
    ]);
    let c = Cluster::new(&s).unwrap();
    let cfg = TrainConfig::resolve(&s, &c.design, c.place.clone()).unwrap();
    let eff = Efficiency::h200(&c.design.catalog);
    let full = step_dag::compile(&cfg, &eff, c.nvlink(), DagOptions::default()).unwrap();
    let opts = |ring_steps, ring_steps_each| DagOptions {
        ring_steps,
        ring_steps_each,
    };
    let cut = step_dag::compile(&cfg, &eff, c.nvlink(), opts(Some(3), Vec::new())).unwrap();
    // Per ring: ring r compiles 1 + r % 6 steps (of 6); a wrong count is refused.
    let each: Vec<u32> = (0..16).map(|r| 1 + r % 6).collect();
    let varied = step_dag::compile(&cfg, &eff, c.nvlink(), opts(None, each.clone())).unwrap();
    let steps: Vec<u32> = varied.rings.iter().map(|r| r.steps_compiled).collect();
    assert_eq!(steps, each);
    assert_eq!(
        varied.dag.messages.len() as u32 - varied.pipeline_messages,
        4 * each.iter().sum::<u32>()
    );
    assert!(step_dag::compile(&cfg, &eff, c.nvlink(), opts(None, vec![3; 15])).is_err());
    assert_eq!(full.rings.len(), 16);
    assert_eq!(full.pipeline_messages, cut.pipeline_messages);
    let ring_msgs = |sd: &StepDag| sd.dag.messages.len() as u32 - sd.pipeline_messages;
    assert_eq!(ring_msgs(&full), 16 * 4 * 6);
    assert_eq!(ring_msgs(&cut), 16 * 4 * 3);
    for (f, r) in full.rings.iter().zip(&cut.rings) {
        assert_eq!(
            (r.steps_compiled, r.steps_total, f.steps_compiled),
            (3, 6, 6)
        );
        for k in 0..3 {
            for i in 0..4u32 {
                let (a, b) = (
                    &full.dag.messages[(f.first + k * 4 + i) as usize],
                    &cut.dag.messages[(r.first + k * 4 + i) as usize],
                );
                assert_eq!((a.src, a.dst, a.bytes), (b.src, b.dst, b.bytes));
                // GPU rail + 8 (replica + 4 stage): server 4 stage + replica, NIC `rail`.
                let host = |d: u32| c.place.host(r.rail + 8 * (d % 4 + 4 * r.stage));
                assert_eq!((b.src, b.dst), (host(i), host(i + 1)));
            }
        }
    }
}

/// The closed-form count the memory estimate reads before the DAG exists is the length of
/// the DAG `compile` builds, for whole rings, truncated rings, per-ring step counts and the
/// first pass of the whole-step simulation (hashed and load-aware paths).
#[test]
fn the_message_count_before_compiling_is_the_dags_length() {
    use fabricsim::flow::PathModel;
    use fabricsim::workload::train::flow_step::first_pass;
    for (gpus, tp, pp, gb) in [
        ("64", "8", "2", "32"),
        ("64", "8", "4", "16"),
        ("16", "2", "2", "8"),
        ("8", "8", "1", "8"),
    ] {
        let mut flags = LLAMA_8B_SHAPED.to_vec();
        flags.extend([
            ("--gpus", gpus),
            ("--tp", tp),
            ("--pp", pp),
            ("--global-batch", gb),
        ]);
        let s = scenario(&flags);
        let c = Cluster::new(&s).unwrap();
        let cfg = TrainConfig::resolve(&s, &c.design, c.place.clone()).unwrap();
        let eff = Efficiency::h200(&c.design.catalog);
        let rings = cfg.par.tp * cfg.par.pp;
        let options = [
            DagOptions::default(),
            DagOptions {
                ring_steps: Some(3),
                ring_steps_each: Vec::new(),
            },
            DagOptions {
                ring_steps: None,
                ring_steps_each: (0..rings as u32).map(|i| i % 5 + 1).collect(),
            },
            first_pass(&cfg, PathModel::Hash, 4),
            first_pass(&cfg, PathModel::Adaptive { paths: 4 }, 4),
        ];
        for opts in options {
            let sd = step_dag::compile(&cfg, &eff, c.nvlink(), opts.clone()).unwrap();
            assert_eq!(
                step_dag::messages(&cfg, &opts),
                sd.dag.messages.len() as u64,
                "{gpus} GPUs tp {tp} pp {pp}: {opts:?}"
            );
        }
    }
}

/// The end of `dag` on an ideal fabric: every transfer instant, each message done when its
/// dependencies are and its compute delay has passed (`Message::start` for the first).
fn ideal_end(dag: &fabricsim::message::MessageDag) -> f64 {
    let mut done = vec![0u64; dag.messages.len()];
    for (i, m) in dag.messages.iter().enumerate() {
        let ready = dag
            .deps_of(i as u32)
            .iter()
            .map(|&d| done[d as usize])
            .max();
        done[i] = match ready {
            Some(r) => r + m.delay.0,
            None => m.start.0,
        };
    }
    *done.iter().max().unwrap() as f64 / 1e12
}

#[test]
fn on_an_ideal_fabric_the_interleaved_bubble_is_pp_minus_1_over_vp_m() {
    // Narayanan et al. 2021 §2.2.2: step = (m + (pp - 1) / vp) x (forward + backward of a
    // stage), bubble fraction (pp - 1) / (vp m), from the DAG's own order and dependencies.
    // TP 1 on one 8-GPU server, DP 8 / pp (its rings take no time here), 16 equal layers, a
    // 128-token vocabulary; m micro-batches per pipeline.
    for (pp, vp, m) in [(4u64, 1u64, 8u64), (4, 2, 8), (4, 4, 8), (2, 8, 4)] {
        let (gpus, gb) = ("8".to_string(), (m * 8 / pp).to_string());
        let (pp_s, vp_s) = (pp.to_string(), vp.to_string());
        let mut flags = LLAMA_8B_SHAPED.to_vec();
        flags.extend([
            ("--gpus", gpus.as_ref()),
            ("--global-batch", gb.as_ref()),
            ("--tp", "1"),
            ("--pp", pp_s.as_ref()),
            ("--vp", vp_s.as_ref()),
            ("--seq", "1024"),
        ]);
        let s = scenario(&flags);
        let c = Cluster::new(&s).unwrap();
        let cfg = TrainConfig::resolve(&s, &c.design, c.place.clone()).unwrap();
        let eff = Efficiency::h200(&c.design.catalog);
        let sd = step_dag::compile(&cfg, &eff, c.nvlink(), DagOptions::default()).unwrap();
        assert_eq!(
            sd.dag.messages.len() as u64,
            step_dag::messages(&cfg, &DagOptions::default())
        );
        let (pp, vp, m) = (pp as f64, vp as f64, m as f64);
        let stage = fabricsim::workload::train::compute::stage(&cfg, &eff, 1).total_s();
        let end = ideal_end(&sd.dag);
        let bubble = end / (m * stage) - 1.0;
        eprintln!(
            "pp {pp} vp {vp} m {m}: bubble {bubble:.5} vs {:.5}",
            (pp - 1.0) / (vp * m)
        );
        // The last stage's output projection (128 x 4096 per token) is the only imbalance.
        assert!(
            (bubble - (pp - 1.0) / (vp * m)).abs() < 2e-3,
            "pp {pp} vp {vp}"
        );
    }
}
