//! The training-step result as text and as a CSV table of its communication (the JSON form
//! is the serde serialisation of [`StepReport`]).

use super::step::{CommRow, KindSplit, StepReport};
use crate::columns::{Cells, Table};

fn ms(s: f64) -> String {
    format!("{:.3} ms", s * 1e3)
}

fn pct(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:5.1}%", 100.0 * part / whole)
    } else {
        "    -".into()
    }
}

pub fn to_text(r: &StepReport) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "model {}: {:.1}B parameters, {:.3e} FLOPs per token (Megatron), seq {}, global batch {}\n",
        r.model,
        r.params as f64 / 1e9,
        r.flops_per_token,
        r.seq,
        r.global_batch
    ));
    s.push_str(&format!(
        "cluster: {} x {}{}; tp {} pp {} dp {} ep {} cp {}; ZeRO {}; micro-batch {} x {} per step\n",
        r.gpus,
        r.gpu,
        match r.idle_gpus {
            0 => String::new(),
            n => format!(" in use, {n} idle (gpus_per_domain)"),
        },
        r.tp,
        r.pp,
        r.dp,
        r.ep,
        r.cp,
        r.zero,
        r.micro_batch,
        r.micro_batches
    ));
    s.push_str(&format!(
        "schedule: {}; recompute {}; sequence parallelism {}; {} GEMMs\n",
        if r.vp > 1 {
            format!("interleaved 1F1B, {} chunks per rank", r.vp)
        } else {
            "1F1B".into()
        },
        r.recompute,
        if r.sequence_parallel { "on" } else { "off" },
        r.precision
    ));
    if let Some(v) = &r.stage_layers {
        let items: Vec<String> = v.iter().map(u64::to_string).collect();
        s.push_str(&format!(
            "pipeline stages of unequal layers: {} (the slowest sets every slot)\n",
            items.join(" + ")
        ));
    }
    s.push_str(&format!(
        "memory per GPU: {:.1} of {:.0} GB on stage {} ({})\n\n",
        r.memory.total_gb,
        r.memory.hbm_gb,
        r.memory.stage,
        r.memory.breakdown()
    ));
    let st = r.step_time_s;
    s.push_str(&format!("step time                    {:>14}\n", ms(st)));
    s.push_str(&format!(
        "  compute                    {:>14}  {}\n",
        ms(r.compute_s),
        pct(r.compute_s, st)
    ));
    for (name, t) in [
        ("GEMM", r.gemm_s),
        ("attention", r.attention_s),
        ("memory-bound kernels", r.memory_bound_s),
        ("kernel launch gaps", r.launch_s),
    ] {
        s.push_str(&format!("    {:<24} {:>14}  {}\n", name, ms(t), pct(t, st)));
    }
    s.push_str(&format!(
        "  optimizer step             {:>14}  {}\n",
        ms(r.optimizer_s),
        pct(r.optimizer_s, st)
    ));
    for c in &r.collectives {
        s.push_str(&format!(
            "  {:<26} {:>14}  {}   ({} on {} GPUs in {} server{}, {} B x {})\n",
            c.name,
            ms(c.exposed_s),
            pct(c.exposed_s, st),
            c.op,
            c.ranks,
            c.servers,
            if c.servers == 1 { "" } else { "s" },
            c.bytes_per_call,
            c.calls_per_step
        ));
        if let Some(k) = &c.skew {
            s.push_str(&format!(
                "    routing skew: the slowest EP rank moves {:.3}x the mean rank's bytes \
                 ({:.3}x a uniform rank's), {} per call against {} uniform{}\n",
                k.slowest_over_mean,
                k.slowest_over_uniform,
                ms(c.time_per_call_s),
                ms(k.uniform_time_per_call_s),
                // Float sums of shares: a drop below a billionth is none.
                match 1.0 - k.kept_share > 1e-9 {
                    true => format!(
                        "; {:.1}% of the routed tokens dropped over capacity",
                        100.0 * (1.0 - k.kept_share)
                    ),
                    false => String::new(),
                }
            ));
        }
    }
    s.push_str(&format!(
        "  pipeline bubble            {:>14}  {}\n\n",
        ms(r.bubble_s),
        pct(r.bubble_s, st)
    ));
    if !r.comm_by_kind.is_empty() {
        let on = |b: bool| if b { "on" } else { "off" };
        s.push_str(&format!(
            "communication per step        total        exposed         hidden   (overlap: TP {}, PP {})\n",
            on(r.tp_overlap),
            on(r.pp_overlap)
        ));
        for k in &r.comm_by_kind {
            s.push_str(&format!(
                "  {:<18} {:>14} {:>14} {:>14}\n",
                k.kind,
                ms(k.total_s),
                ms(k.exposed_s),
                ms(k.hidden_s)
            ));
        }
        s.push('\n');
    }
    s.push_str(&format!("tokens/s           {:>14.0}\n", r.tokens_per_s));
    s.push_str(&format!("TFLOP/s per GPU    {:>14.1}\n", r.tflops_per_gpu));
    s.push_str(&format!("MFU                {:>13.1}%\n", 100.0 * r.mfu));
    s.push_str(&format!("HFU (recompute)    {:>13.1}%\n", 100.0 * r.hfu));
    s.push_str(&format!(
        "compute efficiency {:>13.1}%\n\n",
        100.0 * r.compute_efficiency
    ));
    s.push_str(&format!(
        "compute: {}\ncommunication: {}\n",
        r.compute_source, r.comm_source
    ));
    s
}

/// The step's communication as a table: one row per collective, then one per kind (TP, CP,
/// EP, PP, DP), each with its time per step, exposed and hidden (seconds).
pub fn table(r: &StepReport) -> Table {
    let (cs, ks) = (&r.collectives, &r.comm_by_kind);
    let per = |c: fn(&CommRow) -> u64| {
        Cells::u64(cs.iter().map(|x| Some(c(x))).chain(ks.iter().map(|_| None)))
    };
    let secs = |c: fn(&CommRow) -> f64, k: fn(&KindSplit) -> f64| {
        Cells::f64(
            cs.iter()
                .map(|x| Some(c(x)))
                .chain(ks.iter().map(|x| Some(k(x)))),
        )
    };
    let mut t = Table::default();
    let scope = cs
        .iter()
        .map(|_| Some("collective"))
        .chain(ks.iter().map(|_| Some("kind")));
    t.push("scope", Cells::text(scope));
    t.push(
        "name",
        Cells::text(
            cs.iter()
                .map(|c| Some(c.name))
                .chain(ks.iter().map(|k| Some(k.kind))),
        ),
    );
    t.push(
        "op",
        Cells::text(cs.iter().map(|c| Some(c.op)).chain(ks.iter().map(|_| None))),
    );
    t.push("ranks", per(|c| c.ranks.into()));
    t.push("servers", per(|c| c.servers.into()));
    t.push("bytes_per_call", per(|c| c.bytes_per_call));
    t.push("calls_per_step", per(|c| c.calls_per_step));
    t.push("total_s", secs(|c| c.total_s, |k| k.total_s));
    t.push("exposed_s", secs(|c| c.exposed_s, |k| k.exposed_s));
    t.push("hidden_s", secs(|c| c.hidden_s, |k| k.hidden_s));
    t
}
