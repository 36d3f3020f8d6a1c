//! `fabricsim train --step-model flow_dag`: the whole step on the flow engine, against the
//! analytic step of the same run, and its bad input.

mod support;

use fabricsim::scenario::Scenario;
use fabricsim::workload::collective::Op;
use fabricsim::workload::comm_model::{AlphaBetaModel, GroupShape};
use fabricsim::workload::link_params::FabricParams;
use support::{exits_2_saying, json_ok, write};

/// A Llama-3-8B-shaped model with a 128-token vocabulary (equal stages, the case the
/// analytic 1F1B formula describes) on 64 H100s, TP 8, 8 micro-batches, the gradient
/// all-reduce after the flush in one bucket (as the step DAG's one ring): the job of
/// fabricsim's tests/train_step_dag.rs.
fn job(pp: &'static str, gb: &'static str) -> Vec<&'static str> {
    vec![
        "--gpus",
        "64",
        "--layers",
        "16",
        "--hidden",
        "4096",
        "--ffn",
        "14336",
        "--heads",
        "32",
        "--kv-heads",
        "8",
        "--vocab",
        "128",
        "--seq",
        "8192",
        "--global-batch",
        gb,
        "--tp",
        "8",
        "--pp",
        pp,
        "--dp-overlap",
        "false",
        "--dp-bucket-mb",
        "100000",
    ]
}

#[test]
fn the_flow_step_agrees_with_the_analytic_step() {
    for (pp, gb) in [("2", "32"), ("4", "16")] {
        let mut args = vec!["train"];
        args.extend(job(pp, gb));
        args.extend(["--step-model", "flow_dag", "--format", "json"]);
        let v = json_ok(&args);
        let f = &v["flow_step"];
        let dag_s = f["step_time_s"].as_f64().unwrap();
        let analytic = v["step_time_s"].as_f64().unwrap();
        assert_eq!(f["analytic_step_time_s"].as_f64().unwrap(), analytic);
        assert_eq!(f["checks"]["verdict"], "exact", "pp {pp}: {f}");
        // DP 4 (pp 2): rings of 6 steps, 4 simulated, 2 derived; DP 2: 2 steps, all simulated.
        let derived = f["ring_steps_derived"].as_u64().unwrap();
        assert_eq!(derived, if pp == "2" { 16 * 2 } else { 0 }, "pp {pp}");
        // The bounds of train_step_dag.rs (step.rs, Narayanan et al. 2021): the analytic
        // step is (m + pp - 1) slots of compute + TP all-reduces + 2 pipeline sends, then
        // the all-reduce. The DAG has no alpha per TP all-reduce (2(t-1) NVLink hops in the
        // closed form): shorter by slots x TP calls per slot x alpha; and waits for a send
        // only where its own work does not cover it: shorter by up to slots x 2 sends.
        let rows = v["collectives"].as_array().unwrap();
        let row = |name: &str| rows.iter().find(|c| c["name"] == name).unwrap();
        let m = v["micro_batches"].as_f64().unwrap();
        let slots = m + v["pp"].as_f64().unwrap() - 1.0;
        let tp = row("tp_all_reduce");
        let mut s = Scenario::defaults();
        let flags: Vec<(String, String)> = job(pp, gb)
            .chunks(2)
            .map(|p| (p[0].to_string(), p[1].to_string()))
            .collect();
        s.apply_flags(&flags).unwrap();
        let shape = GroupShape {
            ranks: tp["ranks"].as_u64().unwrap() as u32,
            servers: tp["servers"].as_u64().unwrap() as u32,
        };
        let alpha = AlphaBetaModel::new(FabricParams::of(&s.design().unwrap()))
            .model(Op::AllReduce, shape)
            .alpha_s;
        let per_slot = tp["calls_per_step"].as_f64().unwrap() / m;
        let upper = analytic - slots * per_slot * alpha;
        let lower = upper - slots * 2.0 * row("pp_send_recv")["time_per_call_s"].as_f64().unwrap();
        eprintln!("pp {pp}: analytic {analytic:.6} s, flow {dag_s:.6} s, [{lower:.6}, {upper:.6}]");
        assert!(dag_s > lower * 0.998 && dag_s < upper * 1.002, "pp {pp}");
        assert!((dag_s / analytic - 1.0).abs() < 0.02, "pp {pp}");
        // Same model FLOPs: MFU x step time is the same for both.
        let work = |mfu: &serde_json::Value, t: f64| mfu.as_f64().unwrap() * t;
        let (a, b) = (work(&f["mfu"], dag_s), work(&v["mfu"], analytic));
        assert!((a / b - 1.0).abs() < 1e-9);
    }
}

#[test]
fn text_output_reports_the_flow_step_after_the_analytic_one() {
    let mut args = vec!["train"];
    args.extend(job("2", "32"));
    args.extend(["--step-model", "flow_dag"]);
    let out = support::stdout_ok(&args);
    let at = out.find("Whole step on the flow engine").expect(&out);
    assert!(
        out[..at].contains("MFU") && out[at..].contains("exact for this model"),
        "{out}"
    );
    assert_eq!(support::stdout_ok(&args), out, "same input, same bytes");
}

#[test]
fn a_bad_step_model_names_the_file_line_key_and_choices() {
    let f = write(
        "bad_step_model.toml",
        "[train]\nmodel = \"llama3-8b\"\nstep_model = \"packet_dag\"\n",
    );
    exits_2_saying(
        &["train", &f, "--gpus", "64", "--tp", "8"],
        &[
            "bad_step_model.toml:3:",
            "step_model",
            "packet_dag",
            "analytic, flow_dag",
        ],
    );
    exits_2_saying(
        &["train", "--step-model", "exact", "--gpus", "64"],
        &["--step-model", "exact", "analytic, flow_dag"],
    );
}

#[test]
fn the_packet_engine_or_too_many_adaptive_ring_steps_are_refused_with_flow_dag() {
    let mut args = vec!["train"];
    args.extend(job("2", "32"));
    args.extend(["--step-model", "flow_dag"]);
    let mut packet = args.clone();
    packet.extend(["--engine", "packet"]);
    exits_2_saying(
        &packet,
        &["--engine", "packet", "flow engine", "flow, auto"],
    );
    // Adaptive routing: every ring step simulated, refused when there are too many.
    let ib = [
        "train",
        "--gpus",
        "8192",
        "--model",
        "llama3-8b",
        "--tp",
        "8",
        "--pp",
        "1",
        "--global-batch",
        "2048",
        "--dp-overlap",
        "false",
        "--step-model",
        "flow_dag",
        "--fabric",
        "ib-ndr",
    ];
    exits_2_saying(
        &ib,
        &[
            "--fabric",
            "ib-ndr",
            "hashed path",
            "16760832 ring messages",
        ],
    );
}

/// TP 4 on 8-GPU servers puts two DP ranks of a stage on one server: their ring edge runs on
/// NVLink, which the derivation reads by the flow engine's NVLink rule (it panicked on the
/// edge's missing queue pair before).
#[test]
fn rings_with_nvlink_edges_are_derived_by_the_nvlink_rule() {
    let mut args = vec!["train"];
    let mut j = job("2", "32");
    let tp = j.iter().position(|a| *a == "--tp").unwrap();
    j[tp + 1] = "4";
    args.extend(j);
    args.extend(["--step-model", "flow_dag", "--format", "json"]);
    let v = json_ok(&args);
    let f = &v["flow_step"];
    // DP 8: rings of 14 steps, some derived; the rule reproduces the simulated ones.
    assert!(f["ring_steps_derived"].as_u64().unwrap() > 0, "{f}");
    assert_eq!(f["checks"]["verdict"], "exact", "{f}");
}
