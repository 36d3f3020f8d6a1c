//! The claims section of the `compare` report ([`crate::compare::claims`]): the field's claims,
//! each with the tool's figures, their 95% intervals, the engine that timed them and the runs
//! behind them, as rows the text report prints as grids and the HTML report as tables. The
//! JSON is the section itself (`Claims` serialized).

use std::fmt::Write;

use crate::compare::claims::{Claim, Claims, Figures, LargePoint};
use fabricsim_core::estimate::Estimate;

/// Labelled rows: (label, cells), under a header of column names.
pub type Rows = (Vec<String>, Vec<(String, Vec<String>)>);

/// `e` in percent with its interval, or the one sample it rests on; `signed`: a small
/// difference (two decimals and a sign).
fn share(e: Option<&Estimate>, signed: bool) -> String {
    let f = |x: f64| match signed {
        true => format!("{:+.2}", 100.0 * x),
        false => format!("{:.1}", 100.0 * x),
    };
    match e {
        None => "-".into(),
        Some(e) if e.n > 1 => format!("{}% [{}, {}]", f(e.mean), f(e.lo), f(e.hi)),
        Some(e) => format!("{}% (n 1)", f(e.mean)),
    }
}

fn pct(e: Option<&Estimate>) -> String {
    share(e, false)
}

fn signed(e: Option<&Estimate>) -> String {
    share(e, true)
}

/// What timed a figure and how many runs and seeds it rests on.
fn evidence(f: &Figures) -> String {
    let seeds = f.runs.iter().filter(|r| r.seed.is_some()).count();
    let mut s = match f.timed_on.as_str() {
        "closed form" => "closed form, no run".to_string(),
        on => format!("{on}: {} runs, {seeds} seeds", f.engine_runs),
    };
    if !f.closed_form_kept.is_empty() {
        let _ = write!(
            s,
            "; closed form kept for {}",
            f.closed_form_kept.join(", ")
        );
    }
    s
}

fn quoted(c: &Claim) -> String {
    format!("\"{}\"", c.text)
}

/// RoCE's share of InfiniBand's step throughput and the CAPEX saved, per cluster size.
pub fn throughput_rows(c: &Claims) -> Rows {
    let header = [
        "GPUs",
        "RoCE / IB step throughput [95%]",
        "vs 90-95% claim",
        "network CAPEX saved",
        "vs 30-50% claim",
        "InfiniBand timed on",
        "tuned RoCE timed on",
    ];
    let rows = c
        .throughput
        .iter()
        .map(|p| {
            (
                p.gpus.to_string(),
                vec![
                    pct(p.roce_vs_ib.as_ref()),
                    p.throughput_vs_claim.map_or("-", |a| a.name()).into(),
                    p.network_capex_saved
                        .map_or("-".into(), |x| format!("{:.1}%", 100.0 * x)),
                    p.capex_vs_claim.map_or("-", |a| a.name()).into(),
                    evidence(&p.infiniband),
                    evidence(&p.roce),
                ],
            )
        })
        .collect();
    (header.map(String::from).to_vec(), rows)
}

/// MFU without loss and at the claim's loss rate, per recovery.
pub fn loss_rows(c: &Claims) -> Rows {
    let Some(l) = &c.loss else {
        return (Vec::new(), Vec::new());
    };
    let header = vec![
        "recovery".to_string(),
        "MFU without loss [95%]".into(),
        format!("MFU at loss {} [95%]", l.loss_rate),
        "MFU kept [95%]".into(),
        "timed on".into(),
    ];
    let rows = l
        .rows
        .iter()
        .map(|r| {
            (
                r.recovery.to_string(),
                vec![
                    pct(r.lossless.mfu.as_ref()),
                    pct(r.lossy.mfu.as_ref()),
                    pct(r.mfu_kept.as_ref()),
                    evidence(&r.lossy),
                ],
            )
        })
        .collect();
    (header, rows)
}

/// RoCE's share at the reference size and past 10,000 GPUs, per method.
pub fn large_rows(c: &Claims) -> Rows {
    let Some(first) = c.large.first() else {
        return (Vec::new(), Vec::new());
    };
    let header = vec![
        "timed by".to_string(),
        format!("RoCE / IB at {} GPUs", first.reference.gpus),
        format!("RoCE / IB at {} GPUs", first.point.gpus),
        "InfiniBand's advantage [95%]".into(),
        "network CAPEX saved at the large size".into(),
    ];
    let rows = c
        .large
        .iter()
        .map(|l: &LargePoint| {
            (
                l.method.to_string(),
                vec![
                    pct(l.reference.roce_vs_ib.as_ref()),
                    pct(l.point.roce_vs_ib.as_ref()),
                    format!(
                        "{}: {} -> {}",
                        l.trend.map_or("-", |t| t.name()),
                        signed(l.reference.ib_advantage.as_ref()),
                        signed(l.point.ib_advantage.as_ref())
                    ),
                    l.point
                        .network_capex_saved
                        .map_or("-".into(), |x| format!("{:.1}%", 100.0 * x)),
                ],
            )
        })
        .collect();
    (header, rows)
}

/// The lines saying what was compared and on which seeds.
pub fn preamble(c: &Claims) -> Vec<String> {
    let mut v = vec![format!(
        "claims = \"{}\"; simulated figures over seeds {}; each figure is the comparison's own step (plan, job, engine-calibrated collectives) with the cluster resized; [95%] is the Student-t interval over the seeds, n 1 where one seed or the closed form gave it",
        c.mode,
        c.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )];
    v.extend(c.infiniband.as_ref().map(|x| format!("InfiniBand: {x}")));
    v.extend(c.roce.as_ref().map(|x| format!("tuned RoCE: {x}")));
    v
}

/// The section's headings: the claims as the field states them.
pub fn headings(c: &Claims) -> [String; 3] {
    let [t, k, l, g] = &c.claims;
    let loss = c.loss.as_ref().map_or(String::new(), |l| {
        format!(
            " ({} on {} GPUs, random loss {} per packet on every link)",
            l.fabric, l.gpus, l.loss_rate
        )
    });
    [
        format!("\"{} {}\"", t.text, k.text),
        format!("{}{loss}", quoted(l)),
        format!(
            "{} (InfiniBand's advantage: its step throughput over RoCE's, from the reference size to the large one, on one method)",
            quoted(g)
        ),
    ]
}

/// The points not run and why.
pub fn not_run(c: &Claims) -> Vec<String> {
    c.not_run
        .iter()
        .map(|n| format!("{}: {}", n.what, n.why))
        .collect()
}

/// The section as text.
pub fn text(c: &Claims) -> String {
    let mut out = String::from("the field's claims, answered by this tool's runs:\n");
    for line in preamble(c) {
        let _ = writeln!(out, "  {line}");
    }
    let [h0, h1, h2] = headings(c);
    for (h, rows) in [
        (h0, throughput_rows(c)),
        (h1, loss_rows(c)),
        (h2, large_rows(c)),
    ] {
        if rows.1.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{h}:");
        super::compare::grid_with(&mut out, &rows.0[0], &rows.0[1..], &rows.1);
    }
    let missing = not_run(c);
    if !missing.is_empty() {
        out.push_str("not run:\n");
        for m in missing {
            let _ = writeln!(out, "  - {m}");
        }
    }
    out
}
