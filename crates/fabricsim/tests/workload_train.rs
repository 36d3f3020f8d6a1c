//! The training-step model against closed forms: Megatron's FLOPs formula, MFU with a free
//! network, the 1F1B bubble, ZeRO volumes, overlap, and input validation.

use fabricsim::InputError;
use fabricsim::catalog::Catalog;
use fabricsim::scenario::Scenario;
use fabricsim::workload::busbw;
use fabricsim::workload::collective::Op;
use fabricsim::workload::comm_model::{AlphaBetaModel, CommModel, FreeNetwork};
use fabricsim::workload::link_params::FabricParams;
use fabricsim::workload::placement::Placement;
use fabricsim::workload::train::compute;
use fabricsim::workload::train::config::{TrainConfig, balanced_stages};
use fabricsim::workload::train::efficiency::Efficiency;
use fabricsim::workload::train::flops::flops_per_token;
use fabricsim::workload::train::model::ModelSpec;
use fabricsim::workload::train::step::{StepReport, pp_exposed, step, tp_exposed};

/// Sets `flag` as the command line does.
fn set(s: &mut Scenario, flag: &str, value: impl ToString) {
    s.apply_flags(&[(flag.to_string(), value.to_string())])
        .unwrap();
}

/// A job on `gpus` H200s (the GPU the compute table was measured on) with the cluster's other
/// defaults, given by flags.
fn job(model: &str, gpus: u64, tp: u64, pp: u64) -> Scenario {
    let mut s = Scenario::defaults();
    for (flag, v) in [
        ("--gpu", "h200".to_string()),
        ("--model", model.to_string()),
        ("--gpus", gpus.to_string()),
        ("--tp", tp.to_string()),
        ("--pp", pp.to_string()),
    ] {
        set(&mut s, flag, v);
    }
    s
}

/// The job resolved on its cluster's topology.
fn config(s: &Scenario) -> Result<TrainConfig, InputError> {
    let (d, t) = s.design_and_topology()?;
    TrainConfig::resolve(s, &d, Placement::on_topology(&t, d.spec.gpus_per_node))
}

fn run(s: &Scenario, comm: &dyn CommModel) -> StepReport {
    step(
        &config(s).unwrap(),
        &Efficiency::h200(&Catalog::builtin().unwrap()),
        comm,
    )
}

/// The closed-form model on `fabric`'s profile with the H200's NVLink.
fn real(fabric: &str) -> AlphaBetaModel {
    let mut s = Scenario::defaults();
    set(&mut s, "--fabric", fabric);
    set(&mut s, "--gpu", "h200");
    AlphaBetaModel::new(FabricParams::of(&s.design().unwrap()))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

#[test]
fn flops_per_token_equal_megatrons_formula_for_each_preset() {
    // NeMo/Megatron num_floating_point_operations (Narayanan et al. 2021, Appendix), per token (B =
    // 1, divided
    // by s): 12 * L * h^2 * [(1 + G/H + s/h) * q/h + F/h * k * g + F_sh/h * 3/2 + V/(2 L h)].
    for m in ModelSpec::presets() {
        let (l, h, s) = (m.layers as f64, m.hidden as f64, m.seq as f64);
        let (heads, groups) = (m.heads as f64, m.kv_heads as f64);
        let q = heads * m.head_dim.unwrap_or(m.hidden / m.heads) as f64;
        let k = if m.experts > 0 { m.top_k as f64 } else { 1.0 };
        let gated = if m.swiglu { 1.5 } else { 1.0 };
        let formula = 12.0
            * l
            * h
            * h
            * ((1.0 + groups / heads + s / h) * (q / h)
                + (m.ffn as f64 / h) * k * gated
                + (m.shared_ffn as f64 / h) * 1.5
                + m.vocab as f64 / (2.0 * l * h));
        let got = flops_per_token(&m);
        assert!(
            close(got, formula, 1e-12),
            "{}: {got:e} vs {formula:e}",
            m.id
        );
    }
    // And the 6N rule plus the attention scores (F3): for Llama 3 70B, 6 x the parameters that
    // do matrix products (all but the input embedding) + 12 L s q.
    let m = ModelSpec::preset("--model", "llama3-70b").unwrap();
    let six_n = 6.0 * (m.params() - m.vocab * m.hidden) as f64;
    let attn = 12.0 * 80.0 * 8192.0 * 8192.0;
    assert!(close(flops_per_token(&m), six_n + attn, 1e-12));
}

#[test]
fn with_a_free_network_mfu_equals_the_compute_efficiency() {
    for (model, gpus, tp) in [
        ("llama3-8b", 64, 1),
        ("llama3-70b", 256, 8),
        ("gpt3-175b", 512, 8),
    ] {
        let mut s = job(model, gpus, tp, 1);
        set(&mut s, "--zero", 1);
        let r = run(&s, &FreeNetwork);
        assert_eq!(r.bubble_s, 0.0);
        assert_eq!(r.exposed_comm_s, 0.0);
        assert!(close(r.mfu, r.compute_efficiency, 1e-12), "{model}: {r:?}");
        // The efficiency comes from the measured H200 table: large layer GEMMs reach 66-75% of
        // peak and attention 39-58% (reference README), so the mix lies within 0.35-0.76.
        assert!(
            r.compute_efficiency > 0.35 && r.compute_efficiency < 0.76,
            "{model}: {}",
            r.compute_efficiency
        );
    }
}

#[test]
fn one_f_one_b_bubble_is_pp_minus_1_over_m() {
    // Narayanan et al. 2021: with a free network, step = (m + pp - 1) slots, so
    // MFU = efficiency * m / (m + pp - 1).
    let r = run(&job("llama3-70b", 1024, 8, 4), &FreeNetwork);
    let (m, pp) = (r.micro_batches as f64, r.pp as f64);
    assert_eq!(r.micro_batches, 2048 / 32);
    assert!(close(r.bubble_s / r.compute_s, (pp - 1.0) / m, 1e-12));
    // MFU = the compute efficiency less the bubble (the optimizer step runs once).
    let busy = r.compute_s + r.optimizer_s;
    assert!(close(
        r.mfu,
        r.compute_efficiency * busy / (busy + r.bubble_s),
        1e-12
    ));
}

#[test]
fn with_a_real_network_step_time_is_compute_plus_exposed_plus_bubble() {
    for fabric in ["ib-ndr", "roce-400g", "roce-800g"] {
        for (model, gpus, tp, pp) in [
            ("llama3-70b", 1024, 8, 4),
            ("llama3-8b", 64, 1, 1),
            ("mixtral-8x7b", 256, 1, 1),
        ] {
            let mut s = job(model, gpus, tp, pp);
            if model == "mixtral-8x7b" {
                set(&mut s, "--ep", 8);
            }
            let comm = real(fabric);
            let r = run(&s, &comm);
            let free = run(&s, &FreeNetwork);
            assert!(r.step_time_s >= r.compute_s, "{model} on {fabric}");
            assert!(
                r.step_time_s > free.step_time_s,
                "{model} on {fabric}: communication costs time"
            );
            assert!(r.mfu < free.mfu);
            assert!(close(
                r.step_time_s,
                r.compute_s + r.optimizer_s + r.exposed_comm_s + r.bubble_s,
                1e-9
            ));
            assert!(close(r.compute_s, free.compute_s, 1e-12));
            for c in &r.collectives {
                assert!(c.exposed_s <= c.total_s * (1.0 + 1e-12), "{c:?}");
            }
        }
    }
}

#[test]
fn data_parallel_overlap_hides_all_but_what_outlasts_the_backward() {
    let mut s = job("llama3-8b", 64, 2, 1);
    set(&mut s, "--zero", 0);
    let comm = real("roce-400g");
    let on = run(&s, &comm);
    set(&mut s, "--dp-overlap", false);
    let off = run(&s, &comm);
    let ar = |r: &StepReport| {
        r.collectives
            .iter()
            .find(|c| c.name == "dp_grad_all_reduce")
            .cloned()
            .unwrap()
    };
    let (a_on, a_off) = (ar(&on), ar(&off));
    assert_eq!(
        a_off.exposed_s, a_off.total_s,
        "without overlap all of it is exposed"
    );
    assert!(a_on.exposed_s < a_off.exposed_s);
    // At least the last bucket is exposed.
    let buckets = a_on.bytes_per_call.div_ceil(80_000_000);
    let last = comm.time_s(Op::AllReduce, a_on.bytes_per_call / buckets, groups_dp(&on));
    assert!(
        a_on.exposed_s >= last * 0.999,
        "{} vs last bucket {last}",
        a_on.exposed_s
    );
}

/// The row named `name` of `r`.
fn row<'a>(r: &'a StepReport, name: &str) -> &'a fabricsim::workload::train::step::CommRow {
    r.collectives.iter().find(|c| c.name == name).unwrap()
}

/// Every row's hidden time is its time less its exposed time, and the per-kind split sums them.
fn hidden_is_total_less_exposed(r: &StepReport) {
    for c in &r.collectives {
        assert!(close(c.hidden_s, c.total_s - c.exposed_s, 1e-12), "{c:?}");
        assert!(c.hidden_s >= 0.0 && c.exposed_s >= 0.0, "{c:?}");
    }
    let exposed: f64 = r.comm_by_kind.iter().map(|k| k.exposed_s).sum();
    let total: f64 = r.comm_by_kind.iter().map(|k| k.total_s).sum();
    assert!(close(exposed, r.exposed_comm_s, 1e-12));
    assert!(close(
        total,
        r.collectives.iter().map(|c| c.total_s).sum(),
        1e-12
    ));
}

#[test]
fn tensor_parallel_overlap_never_lengthens_the_step_and_follows_the_decomposition() {
    for (model, gpus, tp, pp, fabric) in [
        ("llama3-70b", 1024, 8, 4, "roce-400g"),
        ("llama3-8b", 64, 2, 1, "ib-ndr"),
        ("llama3-405b", 1024, 8, 8, "ib-ndr"),
    ] {
        let mut s = job(model, gpus, tp, pp);
        let comm = real(fabric);
        let off = run(&s, &comm);
        set(&mut s, "--tp-overlap", true);
        let on = run(&s, &comm);
        assert!(on.tp_overlap && !off.tp_overlap);
        assert!(on.step_time_s <= off.step_time_s, "{model}");
        assert!(on.mfu >= off.mfu, "{model}");
        let (a_on, a_off) = (row(&on, "tp_all_reduce"), row(&off, "tp_all_reduce"));
        assert_eq!(a_off.exposed_s, a_off.total_s, "{model}: off hides nothing");
        assert_eq!(a_on.total_s, a_off.total_s, "{model}: the same collectives");
        assert!(a_on.exposed_s < a_off.exposed_s, "{model}");
        // From the row: 2 calls per layer beside the forward GEMMs, 2 beside the backward's
        // (2x, selective recompute), on the slowest stage's layers, in tp pieces.
        let l = (a_on.calls_per_step / on.micro_batches / 4) as f64;
        let (t, g) = (
            a_on.time_per_call_s,
            on.per_micro_batch.layer_gemm_forward_s,
        );
        let want = on.micro_batches as f64
            * (tp_exposed(2.0 * l * t, g, tp as f64) + tp_exposed(2.0 * l * t, 2.0 * g, tp as f64));
        assert!(
            close(a_on.exposed_s, want, 1e-9),
            "{model}: {} vs {want}",
            a_on.exposed_s
        );
        // The step shortens by exactly what the TP rows hide (slot by slot, bubble included).
        let saved = a_off.exposed_s - a_on.exposed_s;
        let slots =
            (on.micro_batches as f64 + (on.pp - 1) as f64 / on.vp as f64) / on.micro_batches as f64;
        assert!(
            close(off.step_time_s - on.step_time_s, saved * slots, 1e-6),
            "{model}"
        );
        hidden_is_total_less_exposed(&on);
        hidden_is_total_less_exposed(&off);
    }
    // Transformer Engine's overlap splits the sequence-parallel collectives (Megatron refuses
    // it without sequence parallelism).
    let mut s = job("llama3-70b", 1024, 8, 4);
    set(&mut s, "--tp-overlap", true);
    set(&mut s, "--sequence-parallel", false);
    let e = config(&s).unwrap_err();
    assert_eq!(e.key, "--tp-overlap");
    assert!(e.problem.contains("sequence_parallel = false"), "{e}");
}

#[test]
fn pipeline_sends_overlap_in_the_steady_phase_of_interleaved_schedules() {
    let mut s = job("llama3-70b", 1024, 8, 4);
    set(&mut s, "--vp", 2);
    let comm = real("roce-400g");
    let on = run(&s, &comm);
    assert!(on.pp_overlap, "Megatron's default with virtual stages");
    set(&mut s, "--pp-overlap", false);
    let off = run(&s, &comm);
    let (p_on, p_off) = (row(&on, "pp_send_recv"), row(&off, "pp_send_recv"));
    assert_eq!(p_off.exposed_s, p_off.total_s);
    let mb = &on.per_micro_batch;
    let want = on.micro_batches as f64
        * pp_exposed(
            p_on.time_per_call_s,
            2.0,
            mb.forward_s,
            mb.backward_s + mb.recompute_s,
            true,
        );
    assert!(close(p_on.exposed_s, want, 1e-12));
    assert!(p_on.hidden_s > 0.0);
    // The fill and flush still wait for their sends: the bubble is the same, and the step
    // shortens by what the steady phase hides.
    assert!(close(on.bubble_s, off.bubble_s, 1e-12));
    assert!(close(off.step_time_s - on.step_time_s, p_on.hidden_s, 1e-6));
    hidden_is_total_less_exposed(&on);
    // 1F1B does not overlap its sends (Megatron switches overlap_p2p_comm off).
    let mut s = job("llama3-70b", 1024, 8, 4);
    assert!(!run(&s, &comm).pp_overlap);
    set(&mut s, "--pp-overlap", true);
    let e = config(&s).unwrap_err();
    assert_eq!(e.key, "--pp-overlap");
    assert!(e.problem.contains("interleaved"), "{e}");
}

fn groups_dp(r: &StepReport) -> fabricsim::workload::comm_model::GroupShape {
    let c = r
        .collectives
        .iter()
        .find(|c| c.name.starts_with("dp_"))
        .unwrap();
    fabricsim::workload::comm_model::GroupShape {
        ranks: c.ranks,
        servers: c.servers,
    }
}

#[test]
fn zero3_moves_one_and_a_half_times_the_dp_volume() {
    // ZeRO paper: stage 3 = all-gather (fwd) + all-gather (bwd) + reduce-scatter = 3 (n-1)/n
    // psi vs 2 (n-1)/n psi for the DDP all-reduce (one micro-batch per step).
    let wire = |zero: u64| {
        let mut s = job("llama3-8b", 64, 1, 1);
        set(&mut s, "--zero", zero);
        // 16 bytes x 8B parameters unsharded (zero 0) do not fit an H200 with the allocator's
        // allowance; the volumes do not depend on the GPU.
        set(&mut s, "--gpu", "b200");
        set(&mut s, "--seq", 2048);
        set(&mut s, "--global-batch", 64);
        let r = run(&s, &real("ib-ndr"));
        assert_eq!(r.micro_batches, 1);
        r.collectives
            .iter()
            .filter(|c| c.name.starts_with("dp_"))
            .map(|c| {
                let op = Op::ALL.into_iter().find(|o| o.name() == c.op).unwrap();
                busbw::bytes_per_rank(op, c.ranks, c.bytes_per_call) * c.calls_per_step as f64
            })
            .sum::<f64>()
    };
    assert!(close(wire(3) / wire(0), 1.5, 1e-9));
    assert!(close(wire(1) / wire(0), 1.0, 1e-9));
}

#[test]
fn tp_stays_inside_the_server_and_dp_crosses_the_fabric() {
    let r = run(&job("llama3-70b", 1024, 8, 4), &real("ib-ndr"));
    let tp = r
        .collectives
        .iter()
        .find(|c| c.name == "tp_all_reduce")
        .unwrap();
    assert_eq!((tp.ranks, tp.servers), (8, 1));
    // F4: 4 all-reduces of B*s*h*2 bytes per layer per micro-batch.
    assert_eq!(tp.bytes_per_call, 8192 * 8192 * 2);
    assert_eq!(tp.calls_per_step, 4 * 20 * 64);
    let dp = r
        .collectives
        .iter()
        .find(|c| c.name == "dp_grad_reduce_scatter")
        .unwrap();
    assert_eq!((dp.ranks, dp.servers), (32, 32));
    let pp = r
        .collectives
        .iter()
        .find(|c| c.name == "pp_send_recv")
        .unwrap();
    assert_eq!(
        (pp.ranks, pp.servers, pp.bytes_per_call),
        (2, 2, 8192 * 8192 * 2 / 8)
    );
}

#[test]
fn other_gpus_scale_the_h200_efficiency_by_peak_and_say_so() {
    let s = |gpu: &str| {
        let mut s = job("llama3-70b", 256, 8, 4);
        set(&mut s, "--gpu", gpu);
        run(&s, &FreeNetwork)
    };
    let (h200, b200) = (s("h200"), s("b200"));
    // GEMMs and attention scale with the peak; memory-bound kernels with the HBM bandwidth
    // (8 against 4.8 TB/s).
    let peak_bound = |r: &StepReport| r.gemm_s + r.attention_s;
    assert!(close(
        peak_bound(&b200) * 2250.0,
        peak_bound(&h200) * 989.0,
        1e-9
    ));
    assert!(close(
        b200.memory_bound_s * 8.0,
        h200.memory_bound_s * 4.8,
        1e-9
    ));
    assert!(b200.compute_source.starts_with("estimate"));
    assert!(h200.compute_source.starts_with("measured"));
}

#[test]
fn invalid_parallelism_is_an_error_naming_the_flag() {
    let err = |s: Scenario| config(&s).unwrap_err();
    let mut s = job("llama3-70b", 1024, 8, 4);
    set(&mut s, "--dp", 16);
    let e = err(s);
    assert_eq!(e.key, "--dp");
    assert!(
        e.problem.contains("8*4*16*1 = 512 but there are 1024 GPUs"),
        "{e}"
    );
    assert!(e.allowed.contains("dp = 32"), "{e}");
    assert_eq!(err(job("llama3-70b", 1024, 8, 3)).key, "--gpus"); // 1024 GPUs, tp*pp = 24
    assert_eq!(err(job("llama3-8b", 320, 1, 40)).key, "--pp"); // 32 layers, 40 stages
    assert_eq!(err(job("llama3-70b", 768, 3, 1)).key, "--tp"); // 64 heads over 3
    let mut s = job("llama3-70b", 1024, 8, 4);
    set(&mut s, "--global-batch", 100);
    assert_eq!(err(s).key, "--global-batch");
    // The preset's batch of 2048 sequences does not split over dp 1536: set neither by the
    // file nor a flag, so the error says how to set it.
    let e = err(job("llama3-70b", 12288, 8, 1));
    assert_eq!(e.key, "train.global_batch");
    assert!(
        e.problem
            .contains("set [train] global_batch or --global-batch"),
        "{e}"
    );
    let mut s = job("llama3-8b", 64, 1, 1);
    set(&mut s, "--ep", 2);
    assert_eq!(err(s).key, "--ep");
    let mut s = job("llama3-8b", 64, 1, 1);
    set(&mut s, "--zero", 4);
    assert_eq!(err(s).key, "--zero");
    assert_eq!(err(job("llama3-9b", 64, 1, 1)).key, "--model");
    // Without --gpus the job runs on the [cluster] default of 1024 GPUs, all data-parallel.
    let mut s = Scenario::defaults();
    set(&mut s, "--model", "llama3-8b");
    set(&mut s, "--gpu", "h200");
    assert_eq!(config(&s).unwrap().par.dp, 1024);
    // A custom model names the first missing key of [train].
    let mut custom = Scenario::defaults();
    set(&mut custom, "--gpus", 8);
    set(&mut custom, "--layers", 4);
    let e = err(custom.clone());
    assert_eq!(
        (e.key.as_str(), e.value.as_str()),
        ("train.hidden", "(missing)")
    );
    for (flag, v) in [
        ("--hidden", 1024),
        ("--ffn", 4096),
        ("--heads", 16),
        ("--vocab", 32000),
        ("--seq", 2048),
        ("--global-batch", 64),
    ] {
        set(&mut custom, flag, v);
    }
    let cfg = config(&custom).unwrap();
    assert_eq!((cfg.model.kv_heads, cfg.par.dp), (16, 8));
}

#[test]
fn out_of_memory_is_an_error() {
    // Llama 3 405B on 64 H200 with tp 8, no pipeline and no sharding: 16 bytes x 51B params
    // per GPU alone is 812 GB.
    let mut s = job("llama3-405b", 64, 8, 1);
    set(&mut s, "--zero", 0);
    let e = config(&s).unwrap_err();
    assert_eq!(e.key, "--gpu");
    assert!(
        e.problem.contains("GB per GPU") && e.problem.contains("141 GB"),
        "{e}"
    );
    // The same model fits on 1792 GPUs with tp 8, pp 14 and the distributed optimizer.
    let ok = run(&job("llama3-405b", 1792, 8, 14), &FreeNetwork);
    assert!(ok.memory.total_gb < 141.0);
}

#[test]
fn scenario_train_section_errors_point_at_the_file_line() {
    let text = "name = \"x\"\n[cluster]\ngpus = 1024\ngpu = \"h200\"\n[train]\nmodel = \"llama3-70b\"\ntp = 8\npp = 4\ndp = 30\n";
    let sc = Scenario::parse("job.toml", text).unwrap();
    let e = config(&sc).unwrap_err();
    assert_eq!(
        (e.file.as_str(), e.line, e.key.as_str()),
        ("job.toml", Some(9), "train.dp")
    );
    // A flag overrides the file, and then the flag is what the error names.
    let mut flagged = sc.clone();
    set(&mut flagged, "--dp", 31);
    assert_eq!(config(&flagged).unwrap_err().key, "--dp");
    let mut fixed = sc.clone();
    set(&mut fixed, "--dp", 32);
    assert!(config(&fixed).is_ok());
    // The cluster is [cluster]'s: a GPU count under [train] is an unknown key.
    let bad = Scenario::parse("job.toml", "[train]\ngpus = 8\n").unwrap_err();
    assert_eq!((bad.line, bad.key.as_str()), (Some(2), "train.gpus"));
    let bad = Scenario::parse("job.toml", "[train]\ntpp = 8\n").unwrap_err();
    assert_eq!(bad.line, Some(2));
}

#[test]
fn llama3_405b_splits_126_layers_into_7_14x8_7_and_runs_at_the_slowest_stage() {
    // Dubey et al. 2024 §3.3.2: one layer fewer on the first and the last of 16 stages.
    let mut want = vec![8u64; 16];
    (want[0], want[15]) = (7, 7);
    assert_eq!(balanced_stages(126, 16), Some(want.clone()));
    // Ends inwards: 80 layers on 3 stages -> 26 + 27 + 27; 10 on 4 -> 2 + 3 + 3 + 2.
    assert_eq!(balanced_stages(80, 3), Some(vec![26, 27, 27]));
    assert_eq!(balanced_stages(10, 4), Some(vec![2, 3, 3, 2]));
    assert_eq!(balanced_stages(80, 4), Some(vec![20; 4]));
    assert_eq!(balanced_stages(3, 4), None);
    let cfg = config(&job("llama3-405b", 2048, 8, 16)).unwrap();
    assert_eq!(cfg.par.stage_layers, want);
    let eff = Efficiency::h200(&Catalog::builtin().unwrap());
    let r = step(&cfg, &eff, &FreeNetwork);
    assert_eq!(r.stage_layers, Some(want));
    // An 8-layer middle stage outlasts the last stage's 7 layers plus the output projection
    // (16,384 x 16,032 per GPU: about 2/3 of a layer's GEMM FLOPs), so it sets the slot.
    let (middle, last) = (
        compute::stage(&cfg, &eff, 1),
        compute::stage(&cfg, &eff, 15),
    );
    assert!(middle.total_s() > last.total_s());
    assert_eq!(r.per_micro_batch, middle);
    // With a free network, step = (m + pp - 1) x the slowest stage's compute (1F1B).
    let m = r.micro_batches as f64;
    assert!(close(r.compute_s, m * middle.total_s(), 1e-12));
    assert!(close(r.bubble_s, 15.0 * middle.total_s(), 1e-12));
    assert!(close(
        r.step_time_s,
        (m + 15.0) * middle.total_s() + r.optimizer_s,
        1e-12
    ));
    // Memory is the largest stage's: the first (7 layers + embedding, 16 micro-batches in
    // flight) against a middle one (8 layers, 15 in flight).
    let first = fabricsim::workload::train::memory::stage_per_gpu(&cfg, 0);
    let second = fabricsim::workload::train::memory::stage_per_gpu(&cfg, 1);
    assert_eq!(r.memory.total_gb, first.total_gb.max(second.total_gb));
}

#[test]
fn an_explicit_stage_list_sets_the_split_and_an_even_one_changes_nothing() {
    let file = |stages: &str| {
        let text = format!(
            "[cluster]\ngpus = 1024\ngpu = \"h200\"\n[train]\nmodel = \"llama3-70b\"\ntp = 8\npp = 4\nstage_layers = {stages}\n"
        );
        Scenario::parse("job.toml", &text).unwrap()
    };
    let real = real("ib-ndr");
    // [20, 20, 20, 20] is the default split of 80 layers: the same report, field by field.
    let even = run(&file("[20, 20, 20, 20]"), &real);
    assert_eq!(even, run(&job("llama3-70b", 1024, 8, 4), &real));
    assert_eq!(even.stage_layers, None);
    // [17, 22, 22, 19]: the 22-layer stage sets the slot, the first stage the memory.
    let s = file("[17, 22, 22, 19]");
    let cfg = config(&s).unwrap();
    assert_eq!(cfg.par.stage_layers, vec![17, 22, 22, 19]);
    let r = run(&s, &FreeNetwork);
    let eff = Efficiency::h200(&Catalog::builtin().unwrap());
    assert_eq!(r.per_micro_batch, compute::stage(&cfg, &eff, 1));
    assert!(r.step_time_s > even_free(&s));
    assert!(close(
        r.bubble_s,
        3.0 * compute::stage(&cfg, &eff, 1).total_s(),
        1e-12
    ));
    // Bad lists: the error names the file, line, key and value and says what is allowed.
    for (list, problem) in [
        ("[20, 20, 40]", "3 stages listed but pp = 4"),
        ("[20, 20, 40, 0]", "a stage without layers"),
        (
            "[20, 20, 20, 21]",
            "the stages hold 81 layers but the model has 80",
        ),
    ] {
        let e = config(&file(list)).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str(), e.value.as_str()),
            ("job.toml", Some(8), "train.stage_layers", list),
            "{e}"
        );
        assert!(e.problem.contains(problem), "{e}");
        assert_eq!(
            e.allowed,
            "4 positive layer counts (one per stage) summing to 80"
        );
    }
}

/// The step of `s` with its stages forced even (default split) on a free network.
fn even_free(s: &Scenario) -> f64 {
    let mut cfg = config(s).unwrap();
    cfg.par.stage_layers = vec![20; 4];
    step(
        &cfg,
        &Efficiency::h200(&Catalog::builtin().unwrap()),
        &FreeNetwork,
    )
    .step_time_s
}

#[test]
fn interleaving_divides_the_bubble_by_vp_and_multiplies_the_pipeline_sends() {
    // Narayanan et al. 2021 §2.2.2: bubble (pp - 1) / (vp m) of the ideal step; every
    // micro-batch crosses 2 vp chunk boundaries per rank instead of 2.
    for vp in [1u64, 2, 4] {
        let mut s = job("llama3-70b", 1024, 8, 4);
        set(&mut s, "--vp", vp);
        let r = run(&s, &FreeNetwork);
        let (m, pp) = (r.micro_batches as f64, r.pp as f64);
        assert_eq!(r.vp, vp);
        assert!(close(
            r.bubble_s / r.compute_s,
            (pp - 1.0) / (vp as f64 * m),
            1e-12
        ));
        let busy = r.compute_s + r.optimizer_s;
        assert!(close(
            r.mfu,
            r.compute_efficiency * busy / (busy + r.compute_s * (pp - 1.0) / (vp as f64 * m)),
            1e-12
        ));
        let sends = run(&s, &real("ib-ndr"));
        let row = sends
            .collectives
            .iter()
            .find(|c| c.name == "pp_send_recv")
            .unwrap();
        assert_eq!(row.calls_per_step, 2 * vp * r.micro_batches);
    }
    // Micro-batches must come in groups of pp (Megatron's interleaved schedule).
    let mut s = job("llama3-70b", 1024, 8, 4);
    set(&mut s, "--vp", 2);
    set(&mut s, "--global-batch", 32 * 6);
    let e = config(&s).unwrap_err();
    assert_eq!(e.key, "--vp");
    assert!(e.problem.contains("groups of pp = 4"), "{e}");
    let mut s = job("llama3-70b", 1024, 8, 4);
    set(&mut s, "--vp", 21);
    assert!(
        config(&s)
            .unwrap_err()
            .problem
            .contains("too few for 21 chunks")
    );
}

/// GPT-3 175B's shape (MHA, GELU, dropout) on 512 H200s (room for every mode) with `flags`.
fn gpt3(flags: &[(&str, &str)]) -> TrainConfig {
    let mut s = job("gpt3-175b", 512, 4, 8);
    for (f, v) in flags {
        set(&mut s, f, v);
    }
    config(&s).unwrap()
}

#[test]
fn activation_memory_per_layer_is_korthikantis_formula_for_each_mode() {
    use fabricsim::workload::train::config::Recompute;
    use fabricsim::workload::train::memory::layer_activation_bytes;
    // Korthikanti et al. 2022 (arXiv 2205.05198), Table 2, bytes per layer: no parallelism
    // s b h (34 + 5 a s / h); tensor parallel s b h (10 + 24/t + 5 a s / (h t)); with
    // sequence parallelism s b h / t (34 + 5 a s / h); selective recompute drops the 5 a s / h
    // term; full keeps 2 s b h (/ t with sequence parallelism).
    let (s, h, a) = (2048.0, 12288.0, 96.0);
    for (sp, tp, b) in [("true", 4.0, 2.0), ("false", 4.0, 2.0), ("true", 1.0, 1.0)] {
        let sbh = s * b * h;
        let cfg = gpt3(&[
            ("--sequence-parallel", sp),
            ("--micro-batch", if b == 2.0 { "2" } else { "1" }),
            ("--tp", if tp == 1.0 { "1" } else { "4" }),
            ("--pp", if tp == 1.0 { "32" } else { "8" }),
        ]);
        let (none, sel, full) = if sp == "true" {
            (
                sbh / tp * (34.0 + 5.0 * a * s / h),
                sbh / tp * 34.0,
                2.0 * sbh / tp,
            )
        } else {
            (
                sbh * (10.0 + 24.0 / tp + 5.0 * a * s / (h * tp)),
                sbh * (10.0 + 24.0 / tp),
                2.0 * sbh,
            )
        };
        for (mode, want) in [
            (Recompute::None, none),
            (Recompute::Selective, sel),
            (Recompute::Full, full),
        ] {
            let got = layer_activation_bytes(&cfg, mode);
            assert!(
                close(got, want, 1e-12),
                "sp {sp} tp {tp} {mode:?}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn recomputation_adds_hardware_flops_not_model_flops() {
    // Selective: each layer's attention core forward again, 4 b s^2 h per layer (Korthikanti
    // et al. 2022 §5), so hardware - model = 4 s h L per token; full: the whole layer forward,
    // a third of the layers' model FLOPs. MFU stays on model FLOPs.
    let eff = Efficiency::h200(&Catalog::builtin().unwrap());
    let at = |mode: &str| step(&gpt3(&[("--recompute", mode)]), &eff, &FreeNetwork);
    let (none, sel, full) = (at("none"), at("selective"), at("full"));
    let tokens = (1536 * 2048) as f64;
    let (s, h, l) = (2048.0, 12288.0, 96.0);
    assert_eq!(none.hardware_flops_per_step, none.model_flops_per_step);
    assert!(close(
        sel.hardware_flops_per_step - sel.model_flops_per_step,
        4.0 * s * h * l * tokens,
        1e-9
    ));
    assert_eq!(sel.model_flops_per_step, none.model_flops_per_step);
    let m = ModelSpec::preset("", "gpt3-175b").unwrap();
    let logits = 6.0 * m.hidden as f64 * m.vocab as f64;
    let layers = flops_per_token(&m) - logits;
    assert!(close(
        full.hardware_flops_per_step - full.model_flops_per_step,
        layers / 3.0 * tokens,
        1e-9
    ));
    // Selective costs no time (flash attention's measured backward recomputes the scores);
    // full reruns each forward.
    assert_eq!(sel.step_time_s, none.step_time_s);
    assert!(full.step_time_s > sel.step_time_s);
    assert!(sel.hfu > sel.mfu && full.mfu < sel.mfu);
}

#[test]
fn llama3_405b_at_16384_h100_fits_in_80_gb_as_trained() {
    // Dubey et al. 2024 (arXiv 2407.21783) Table 4: TP 8, CP 1, PP 16, DP 128 on 16,384 H100
    // at 8K; §3.3.2: interleaved pipeline (one-layer chunks: VP 8) and FSDP without resharding
    // after the forward (gradients and optimizer sharded, weights whole: zero = 2).
    let mut s = job("llama3-405b", 16384, 8, 16);
    set(&mut s, "--gpu", "h100");
    set(&mut s, "--vp", 8);
    set(&mut s, "--zero", 2);
    let cfg = config(&s).unwrap();
    assert_eq!(cfg.par.recompute.name(), "selective");
    let mem = fabricsim::workload::train::memory::per_gpu(&cfg);
    eprintln!("405B: {:.1} GB: {}", mem.total_gb, mem.breakdown());
    assert!(mem.total_gb <= 80.0);
    // Megatron's distributed optimizer alone (zero = 1: gradients unsharded) misses, and the
    // error says by how much and which single change fits.
    set(&mut s, "--zero", 1);
    let e = config(&s).unwrap_err();
    assert!(e.problem.contains("GB short"), "{e}");
    assert!(e.allowed.contains("zero = 2"), "{e}");
}

#[test]
fn the_compute_splits_into_gemm_attention_memory_bound_and_launch() {
    for recompute in ["selective", "full"] {
        let mut s = job("llama3-70b", 1024, 8, 4);
        set(&mut s, "--recompute", recompute);
        let r = run(&s, &FreeNetwork);
        let parts = r.gemm_s + r.attention_s + r.memory_bound_s + r.launch_s;
        assert!(close(parts, r.compute_s, 1e-12), "{recompute}");
        assert!(r.memory_bound_s > 0.0 && r.launch_s > 0.0 && r.optimizer_s > 0.0);
    }
}

#[test]
fn fp8_runs_the_gemms_at_the_fp8_peak_and_only_where_the_catalog_has_one() {
    let at = |gpu: &str, precision: &str| {
        let mut s = job("llama3-70b", 1024, 8, 4);
        set(&mut s, "--gpu", gpu);
        set(&mut s, "--precision", precision);
        s
    };
    let (bf16, fp8) = (
        run(&at("h100", "bf16"), &FreeNetwork),
        run(&at("h100", "fp8"), &FreeNetwork),
    );
    let eff = Efficiency::h200(&Catalog::builtin().unwrap());
    // GEMM time scales by bf16 peak / (FP8 peak x the table's FP8/bf16 efficiency ratio).
    assert!(close(
        fp8.gemm_s,
        bf16.gemm_s * 989.4 / (1978.9 * eff.fp8_vs_bf16()),
        1e-9
    ));
    assert_eq!(fp8.attention_s, bf16.attention_s);
    assert_eq!(fp8.precision, "fp8");
    let e = config(&at("a100", "fp8")).unwrap_err();
    assert_eq!((e.key.as_str(), e.value.as_str()), ("--precision", "fp8"));
    assert!(e.problem.contains("no FP8 peak"), "{e}");
}
