//! `fabricsim compare` output: a text summary and the JSON of the whole comparison (keys carry
//! their units). The HTML report is in [`super::html`]. Reports read results; they compute
//! only ratios and formatting.

use serde_json::{Value, json};
use std::fmt::Write;

use super::plan::thousands;
use crate::compare::Comparison;
use crate::compare::metrics;
use crate::compare::recommend::Recommendation;
use crate::compare::stress::FIGURES;
use fabricsim_core::estimate::Estimate;

/// The one-line relative statement for fabric `i` against the best-throughput fabric:
/// "X reaches 93.0% of Y's step throughput for 64.0% of its network CAPEX".
pub fn relative_sentence(c: &Comparison, i: usize) -> Option<String> {
    let best = c
        .fabrics
        .iter()
        .filter(|f| f.delivered.is_some())
        .max_by(|a, b| {
            let t = |f: &&crate::compare::model::FabricResult| {
                f.delivered
                    .as_ref()
                    .map(|d| d.tokens_per_s.mean)
                    .unwrap_or(0.0)
            };
            t(a).total_cmp(&t(b))
        })?;
    let f = &c.fabrics[i];
    let d = f.delivered.as_ref()?;
    let bd = best.delivered.as_ref()?;
    if std::ptr::eq(f, best) {
        return None;
    }
    Some(format!(
        "{} reaches {:.1}% of {}'s step throughput for {:.1}% of its network CAPEX ({:.1}% of its cost per token)",
        f.variant.name,
        100.0 * d.tokens_per_s.mean / bd.tokens_per_s.mean,
        best.variant.name,
        100.0 * f.plan.cost.network_capex_usd / best.plan.cost.network_capex_usd,
        100.0 * d.usd_per_million_tokens.mean / bd.usd_per_million_tokens.mean,
    ))
}

/// What `f`'s CAPEX above the lowest-CAPEX fabric's depends on: its 3 largest lines' shares of
/// the difference (`plan::cost::difference_shares`), "-" for the lowest itself.
fn capex_difference(c: &Comparison, f: &crate::compare::model::FabricResult) -> String {
    let Some(low) = c.fabrics.iter().min_by(|a, b| {
        a.plan
            .cost
            .network_capex_usd
            .total_cmp(&b.plan.cost.network_capex_usd)
    }) else {
        return "-".into();
    };
    let shares = crate::plan::cost::difference_shares(&low.plan.cost, &f.plan.cost);
    if shares.is_empty() {
        return "-".into();
    }
    let top: Vec<String> = shares
        .iter()
        .take(3)
        .map(|(name, s)| format!("{name} {:.0}%", 100.0 * s))
        .collect();
    format!(
        "+{} USD: {}",
        thousands(f.plan.cost.network_capex_usd - low.plan.cost.network_capex_usd),
        top.join(", ")
    )
}

/// A share over the seeds in percent: `3.99% ± 0.20%` (the mean alone with one seed).
pub fn percent(e: &Estimate, decimals: usize) -> String {
    let p = e.scaled(100.0);
    match p.n {
        0 | 1 => format!("{:.decimals$}%", p.mean),
        _ => format!("{:.decimals$}% ± {:.decimals$}%", p.mean, p.half_width()),
    }
}

/// A large figure over the seeds with thousands separators: `1,234,567 ± 1,234`.
fn thousands_est(e: &Estimate) -> String {
    match e.n {
        0 | 1 => thousands(e.mean),
        _ => format!("{} ± {}", thousands(e.mean), thousands(e.half_width())),
    }
}

/// Rows of the side-by-side summary: (label, one cell per fabric).
pub fn summary_rows(c: &Comparison) -> Vec<(String, Vec<String>)> {
    let per = |g: &dyn Fn(&crate::compare::model::FabricResult) -> String| -> Vec<String> {
        c.fabrics.iter().map(g).collect()
    };
    let opt = |g: &dyn Fn(&crate::compare::model::Delivered) -> String| -> Vec<String> {
        c.fabrics
            .iter()
            .map(|f| f.delivered.as_ref().map(g).unwrap_or_else(|| "-".into()))
            .collect()
    };
    let mut rows: Vec<(String, Vec<String>)> = vec![
        ("fabric".into(), per(&|f| f.variant.describe())),
        (
            "tiers / switches".into(),
            per(&|f| {
                let n: u64 = f.plan.bom.tiers.iter().map(|t| t.switches).sum();
                format!("{} / {n} x {}", f.plan.tiers, f.plan.switch)
            }),
        ),
        (
            "network CAPEX (USD)".into(),
            per(&|f| thousands(f.plan.cost.network_capex_usd)),
        ),
        (
            "CAPEX over the lowest, by line".into(),
            per(&|f| capex_difference(c, f)),
        ),
        (
            "network power (kW)".into(),
            per(&|f| format!("{:.1}", f.plan.power.total_kw())),
        ),
        (
            format!("network TCO, {} y (USD)", c.years),
            per(&|f| thousands(f.plan.cost.network_tco_usd)),
        ),
        (
            format!("cluster TCO, {} y (USD)", c.years),
            per(&|f| thousands(f.plan.cost.cluster_tco_usd)),
        ),
        (
            "network share of cluster TCO".into(),
            per(&|f| format!("{:.1}%", 100.0 * f.plan.cost.network_share_of_tco)),
        ),
        ("step time (s)".into(), opt(&|d| d.step_time_s.text(3))),
        (
            "step timed by".into(),
            opt(&|d| match d
                .step_timed_by
                .starts_with(crate::compare::model::WHOLE_STEP)
            {
                true => "whole step, flow".into(),
                false => "fits (fallback)".into(),
            }),
        ),
        (
            "exposed fabric comm. (s)".into(),
            opt(&|d| d.exposed_fabric_s.text(3)),
        ),
        (
            "exposed NVLink comm. (s)".into(),
            opt(&|d| d.exposed_nvlink_s.text(3)),
        ),
        ("tokens/s".into(), opt(&|d| thousands_est(&d.tokens_per_s))),
        ("MFU".into(), opt(&|d| percent(&d.mfu, 1))),
        (
            "MFU on an ideal network".into(),
            opt(&|d| percent(&d.ideal_network.ideal_mfu, 1)),
        ),
        (
            "MFU lost to the network".into(),
            opt(&|d| percent(&d.ideal_network.mfu_lost, 2)),
        ),
    ];
    for class in crate::compare::ideal::CLASSES {
        let cell = |d: &crate::compare::model::Delivered| {
            let by = &d.ideal_network.mfu_lost_by_collective;
            by.iter()
                .find(|(c, _)| *c == class)
                .map(|(_, e)| percent(e, 2))
                .unwrap_or_else(|| "-".into())
        };
        let cells = opt(&cell);
        if cells.iter().any(|x| x != "-") {
            rows.push((
                format!("  lost to {} across servers", class.to_uppercase()),
                cells,
            ));
        }
    }
    rows.extend(vec![
        (
            "USD per million tokens".into(),
            opt(&|d| d.usd_per_million_tokens.text(3)),
        ),
        (
            "USD per model EFLOP".into(),
            opt(&|d| d.usd_per_model_eflop.text(3)),
        ),
        (
            "throughput vs best".into(),
            c.relative
                .iter()
                .map(|r| {
                    r.throughput_vs_best
                        .map(|x| format!("{:.1}%", 100.0 * x))
                        .unwrap_or("-".into())
                })
                .collect(),
        ),
        (
            "network CAPEX vs lowest".into(),
            c.relative
                .iter()
                .map(|r| format!("{:.1}%", 100.0 * r.network_capex_vs_lowest))
                .collect(),
        ),
        (
            "cost per token vs lowest".into(),
            c.relative
                .iter()
                .map(|r| {
                    r.cost_per_token_vs_lowest
                        .map(|x| format!("{:.1}%", 100.0 * x))
                        .unwrap_or("-".into())
                })
                .collect(),
        ),
    ]);
    rows
}

fn columns(out: &mut String, label_w: usize, widths: &[usize], label: &str, cells: &[String]) {
    let _ = write!(out, "{label:<label_w$}");
    for (c, w) in cells.iter().zip(widths) {
        let _ = write!(out, "  {c:>w$}");
    }
    out.push('\n');
}

/// A table of (label, one cell per fabric) rows under the fabric names, columns right-aligned.
fn grid(out: &mut String, names: &[String], rows: &[(String, Vec<String>)]) {
    grid_with(out, "", names, rows)
}

/// [`grid`] with `corner` over the labels.
pub(super) fn grid_with(
    out: &mut String,
    corner: &str,
    names: &[String],
    rows: &[(String, Vec<String>)],
) {
    let label_w = rows
        .iter()
        .map(|r| r.0.len())
        .chain([corner.len()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..names.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.1[i].len())
                .chain(std::iter::once(names[i].len()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    columns(out, label_w, &widths, corner, names);
    for (label, cells) in rows {
        columns(out, label_w, &widths, label, cells);
    }
}

/// Measured busbw rows: one per (op, size), GB/s.
pub fn busbw_rows(c: &Comparison) -> Vec<(String, Vec<String>)> {
    let Some(first) = c.fabrics.iter().find(|f| !f.busbw.is_empty()) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for (k, curve) in first.busbw.iter().enumerate() {
        for (i, &(bytes, _)) in curve.points.iter().enumerate() {
            rows.push((
                format!(
                    "{} {} ({}) [{}]",
                    curve.op,
                    crate::svg::axis::bytes(bytes as f64),
                    curve.algorithm,
                    curve.engine
                ),
                c.fabrics
                    .iter()
                    .map(|f| {
                        f.busbw
                            .get(k)
                            .and_then(|b| b.points.get(i))
                            .map(|p| p.1.text(2))
                            .unwrap_or_else(|| "-".into())
                    })
                    .collect(),
            ));
        }
    }
    rows
}

/// Stress rows: completion-time percentiles and what the mechanisms did, each over the seeds,
/// and how the runs ended.
pub fn stress_rows(c: &Comparison) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = FIGURES
        .iter()
        .map(|fig| {
            (
                fig.label.to_string(),
                c.fabrics
                    .iter()
                    .map(|f| {
                        f.stress_over_seeds
                            .as_ref()
                            .and_then(|s| s.get(fig.key))
                            .map(|e| e.text(fig.decimals))
                            .unwrap_or_else(|| "-".into())
                    })
                    .collect(),
            )
        })
        .collect();
    rows.push((
        "runs (engine)".into(),
        c.fabrics
            .iter()
            .map(|f| match (&f.stress_over_seeds, &f.stress) {
                (Some(s), Some(first)) => format!("{} ({})", s.status.join(", "), first.engine),
                _ => "-".into(),
            })
            .collect(),
    ));
    rows
}

/// The `[serve]` deployment's figures, one column per fabric (empty without one): latencies in
/// ms, shares in %, each a mean and its 95% interval over the seeds.
pub fn serving_rows(c: &Comparison) -> Vec<(String, Vec<String>)> {
    if c.serving.is_empty() {
        return Vec::new();
    }
    let fig = |label: &str, name: &str, k: f64, d: usize| {
        let cells = c
            .serving
            .iter()
            .map(|f| f.report.get(name).scaled(k).text(d))
            .collect();
        (label.to_string(), cells)
    };
    let mut rows = vec![
        fig("TTFT p50 (ms)", "ttft_p50", 1e3, 1),
        fig("TTFT p99 (ms)", "ttft_p99", 1e3, 1),
        fig("TPOT p50 (ms)", "tpot_p50", 1e3, 2),
        fig("TPOT p99 (ms)", "tpot_p99", 1e3, 2),
        fig("goodput at SLO (%)", "goodput", 100.0, 1),
        fig("good tokens/s", "good_tokens_per_s", 1.0, 0),
        fig("tokens/s per GPU", "tokens_per_s_per_gpu", 1.0, 1),
        fig("KV share of TTFT (%)", "ttft_kv_share", 100.0, 2),
        fig("network share of TTFT (%)", "ttft_network_share", 100.0, 1),
        fig("comm share of TPOT (%)", "tpot_comm_share", 100.0, 2),
    ];
    if c.serving[0].report.frontend.is_some() {
        rows.push(fig(
            "front-end share of TTFT (%)",
            "ttft_frontend_share",
            100.0,
            3,
        ));
    }
    rows.push((
        "USD per M good tokens".into(),
        c.serving
            .iter()
            .map(|f| f.usd_per_million_good_tokens.text(3))
            .collect(),
    ));
    rows
}

/// The heading of the serving section: the deployment and its SLOs.
pub fn serving_heading(c: &Comparison) -> Option<String> {
    let r = &c.serving.first()?.report;
    Some(format!(
        "serving {} ({}, {}decode {}, {} GPUs; {}; SLOs TTFT {} s, TPOT {} s; {} seed(s)):",
        r.model,
        r.mode,
        r.prefill
            .as_ref()
            .map_or(String::new(), |p| format!("prefill {p}, ")),
        r.decode,
        r.gpus,
        r.arrivals,
        r.ttft_slo_s,
        r.tpot_slo_s,
        r.seeds
    ))
}

/// The metrics table as text rows; each label is tagged with where its figures come from.
pub fn metric_rows(c: &Comparison) -> Vec<(String, Vec<String>)> {
    metrics::table(c)
        .into_iter()
        .map(|m| {
            let kind = m
                .cells
                .iter()
                .find(|x| x.text != "-")
                .or(m.cells.first())
                .map(|x| x.provenance.split(':').next().unwrap_or("").to_string())
                .unwrap_or_default();
            let unit = if m.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", m.unit)
            };
            (
                format!("[{kind}] {}{unit}", m.metric),
                m.cells.into_iter().map(|x| x.text).collect(),
            )
        })
        .collect()
}

pub fn text(c: &Comparison, r: &Recommendation) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fabricsim compare: {}", c.name);
    if c.interrupted {
        let _ = writeln!(
            out,
            "status: INTERRUPTED, a partial comparison (see the notes)"
        );
    }
    if let Some(s) = c.fabrics.iter().find_map(|f| f.step.as_ref()) {
        let _ = writeln!(
            out,
            "step: {} ({:.1}B parameters), tp {} pp {} dp {}, ZeRO-{}, global batch {} x {} tokens",
            s.model,
            s.params as f64 / 1e9,
            s.tp,
            s.pp,
            s.dp,
            s.zero,
            s.global_batch,
            s.seq
        );
    }
    let runs = |k: fn(&crate::compare::step::EngineTotals) -> u64| -> u64 {
        c.fabrics
            .iter()
            .filter_map(|f| f.engine.as_ref())
            .map(k)
            .sum()
    };
    let _ = writeln!(
        out,
        "engine: {} ({} packet-engine and {} flow-engine runs for the steps)",
        c.fabrics
            .first()
            .map(|f| crate::compare::engine::choice_name(f.variant.engine))
            .unwrap_or("auto"),
        runs(|e| e.packet_runs),
        runs(|e| e.flow_runs)
    );
    out.push('\n');
    let names: Vec<String> = c.fabrics.iter().map(|f| f.variant.name.clone()).collect();
    // The "fabric" description row is long: it is printed as a list below instead.
    let rows: Vec<(String, Vec<String>)> = summary_rows(c).into_iter().skip(1).collect();
    grid(&mut out, &names, &rows);
    out.push('\n');
    for f in &c.fabrics {
        let _ = writeln!(out, "{}: {}", f.variant.name, f.variant.describe());
    }
    out.push('\n');
    for i in 0..c.fabrics.len() {
        if let Some(s) = relative_sentence(c, i) {
            let _ = writeln!(out, "{s}");
        }
    }
    out.push('\n');
    let busbw = busbw_rows(c);
    if !busbw.is_empty() {
        let _ = writeln!(
            out,
            "busbw (GB/s) over all {} GPUs, [the engine that ran each]:",
            c.fabrics[0].design.spec.gpus
        );
        grid(&mut out, &names, &busbw);
        out.push('\n');
    }
    if let Some(s) = c.fabrics.iter().find_map(|f| f.stress.as_ref()) {
        let _ = writeln!(out, "under stress ({} engine): {}", s.engine, s.pattern);
        grid(&mut out, &names, &stress_rows(c));
        out.push('\n');
    }
    if let Some(h) = serving_heading(c) {
        let _ = writeln!(out, "{h}");
        grid(&mut out, &names, &serving_rows(c));
        out.push('\n');
    }
    let interval = match c.fabrics.first().map(|f| &f.plan.reliability) {
        Some(r) if r.checkpoint.interval_s != r.optimum_interval_s => format!(
            "checkpoint every {:.0} s ([reliability] checkpoint_interval_s)",
            r.checkpoint.interval_s
        ),
        _ => "Daly's checkpoint interval".to_string(),
    };
    let _ = writeln!(
        out,
        "reliability (plan: data/reliability/failure-rates.toml, {interval}):"
    );
    grid(&mut out, &names, &super::reliability::compare_rows(c));
    out.push('\n');
    out.push_str(
        "metrics ([source]: plan, simulation, profile or catalog; details in the JSON and HTML):\n",
    );
    // Short figures side by side; sentences (loss handling, congestion control, routing) listed.
    let (short, long): (Vec<_>, Vec<_>) = metric_rows(c)
        .into_iter()
        .partition(|r| r.1.iter().all(|x| x.len() <= 24));
    grid(&mut out, &names, &short);
    for (label, cells) in long {
        let _ = writeln!(out, "{label}:");
        for (n, x) in names.iter().zip(cells) {
            let _ = writeln!(out, "  {n}: {x}");
        }
    }
    out.push('\n');
    if let Some((_, points)) = &c.loss_sweep {
        out.push_str("MFU against random loss (lossless packet-engine runs of the step's collectives, loss costed in expectation):\n");
        for p in points {
            let v: Vec<&str> = p.point.values.iter().map(|x| x.1.as_str()).collect();
            let mfu = p.mfu.map(|m| percent(&m, 2));
            let _ = writeln!(
                out,
                "  loss {:>6} {:<17} MFU {}",
                v[0],
                v[1],
                mfu.or(p.error.clone()).unwrap_or_default()
            );
        }
        out.push('\n');
    }
    if let Some(claims) = &c.claims {
        out.push_str(&super::claims::text(claims));
        out.push('\n');
    }
    if let Some(r) = &c.regimes {
        out.push_str(&crate::compare::regimes::text(r));
        out.push('\n');
    }
    if !c.tenants.is_empty() {
        out.push_str("Tenants ([[jobs]] on each fabric; times in ms):\n");
        for r in tenant_rows(c) {
            let _ = writeln!(
                out,
                "  {} {} ({}, {} GPUs, {}): alone {}, together {}, slowdown {}",
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
            );
        }
        out.push('\n');
    }
    match &r.fabric {
        Some(f) if r.too_close_to_call => {
            let _ = writeln!(
                out,
                "recommendation: {f}, too close to call (the separation is below)"
            );
        }
        Some(f) => {
            let _ = writeln!(out, "recommendation: {f}");
        }
        None => {
            let _ = writeln!(
                out,
                "recommendation: none of the fabrics meets the constraints"
            );
        }
    }
    let _ = writeln!(out, "  rule: {}", r.rule);
    for reason in &r.reasons {
        let _ = writeln!(out, "  - {reason}");
    }
    if let Some(rb) = &r.robustness {
        out.push('\n');
        out.push_str(&robustness_text(rb));
    }
    out.push_str("\nnotes:\n");
    for n in &c.notes {
        let _ = writeln!(out, "  - {n}");
    }
    out
}

/// The verdict under each price change and loss-rate case, the cases that flip it first.
pub fn robustness_lines(rb: &crate::compare::robust::Robustness) -> Vec<String> {
    let mut lines = vec![match (&rb.fabric, rb.flipped_by.is_empty()) {
        (Some(f), true) => format!("{f} stays recommended under every case below"),
        (None, true) => "no fabric is eligible in any case below".into(),
        (_, false) => format!("the verdict flips under: {}", rb.flipped_by.join("; ")),
    }];
    for k in &rb.cases {
        let verdict = k.fabric.as_deref().unwrap_or("none eligible");
        let scores: Vec<String> = k
            .scores
            .iter()
            .map(|(n, s)| match s {
                Some(s) => format!("{n} {s:.3}"),
                None => format!("{n} -"),
            })
            .collect();
        lines.push(format!(
            "{}: {verdict}{}{} (scores: {})",
            k.change,
            if k.too_close_to_call {
                ", too close to call"
            } else {
                ""
            },
            if k.flips { ", FLIPS" } else { "" },
            scores.join(", ")
        ));
    }
    lines.extend(rb.notes.iter().cloned());
    lines
}

fn robustness_text(rb: &crate::compare::robust::Robustness) -> String {
    let mut out = String::from(
        "robustness of the verdict (prices +-20% per class re-scored from these results; loss rate x0.1 and x10 re-simulated):\n",
    );
    for l in robustness_lines(rb) {
        let _ = writeln!(out, "  - {l}");
    }
    out
}

/// One row per fabric and job: fabric, job, kind, GPUs, placement, alone and together (ms),
/// slowdown.
pub fn tenant_rows(c: &Comparison) -> Vec<Vec<String>> {
    c.tenants
        .iter()
        .flat_map(|f| {
            f.result.jobs.iter().map(|j| {
                vec![
                    f.fabric.clone(),
                    j.name.clone(),
                    j.kind.to_string(),
                    j.gpus.to_string(),
                    j.placement.to_string(),
                    j.alone_s.scaled(1e3).text(3),
                    j.together_s.scaled(1e3).text(3),
                    j.slowdown.text(3),
                ]
            })
        })
        .collect()
}

/// The whole comparison as JSON.
pub fn json(c: &Comparison, r: &Recommendation) -> Value {
    let fabrics: Vec<Value> = c
        .fabrics
        .iter()
        .map(|f| {
            json!({
                "name": f.variant.name,
                "profile": f.variant.profile,
                "family": f.design.profile.family.name(),
                "loss_recovery": f.variant.recovery.name(),
                "loss_rate": f.variant.loss_rate,
                "means": f.variant.describe(),
                "plan": super::plan::json(&f.plan, &f.design, None),
                "training_step": f.step,
                "delivered": f.delivered,
                "with_interruptions": super::reliability::with_interruptions(f),
                "busbw_GBps": f.busbw.iter().map(|b| json!({
                    "op": b.op,
                    "algorithm": b.algorithm,
                    "ranks": b.ranks,
                    "servers": b.servers,
                    "points": b.points.iter().map(|p| json!({"bytes": p.0, "busbw_GBps": p.1})).collect::<Vec<_>>(),
                    "retransmitted_packets": b.retransmitted_packets,
                    "timeouts": b.timeouts,
                    "engine": b.engine,
                    "source": b.source,
                })).collect::<Vec<_>>(),
                "engine_runs": f.engine,
                "seeds": f.seeds,
                "stress": f.stress,
                "stress_over_seeds": f.stress_over_seeds,
                "loss_cases": f.loss_cases,
                "probes": f.probes,
                "missing": f.missing,
            })
        })
        .collect();
    let mut v = json!({
        "name": c.name,
        "years": c.years,
        "utilization": c.section.utilization,
        "engine": c.fabrics.first().map(|f| crate::compare::engine::choice_name(f.variant.engine)),
        "fabrics": fabrics,
        "relative": c.relative,
        "relative_statements": (0..c.fabrics.len()).filter_map(|i| relative_sentence(c, i)).collect::<Vec<_>>(),
        "metrics": metrics::table(c),
        "loss_sweep": c.loss_sweep.as_ref().map(|(axes, points)| json!({"axes": axes, "points": points})),
        "claims": c.claims,
        "regimes": c.regimes,
        "recommendation": r,
        "notes": c.notes,
    });
    if !c.serving.is_empty() {
        v["serving"] = serde_json::to_value(&c.serving).unwrap_or_default();
    }
    if !c.tenants.is_empty() {
        v["tenants"] = serde_json::to_value(&c.tenants).expect("tenant results serialize");
    }
    if c.interrupted {
        v["status"] = "interrupted".into();
    }
    v
}
