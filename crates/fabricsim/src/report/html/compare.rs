//! The HTML report of a comparison: the recommendation and its reasons, the side-by-side
//! summary, charts (busbw against size per fabric, step time split, stacked cost bars, the
//! topology summary), the metrics table with each figure's provenance, and the notes.

use super::{Page, figures, list, table};
use crate::compare::model::FabricResult;
use crate::compare::recommend::Recommendation;
use crate::compare::{Comparison, metrics};
use crate::report::compare::{
    relative_sentence, robustness_lines, serving_heading, serving_rows, stress_rows, summary_rows,
};
use crate::report::plan::tier_role;
use crate::svg::bars::StackedBars;
use crate::svg::line::{LineChart, Series};
use crate::svg::tiers::{self, Level, Stack};
use crate::svg::{Axis, Scale, TickFormat, cdf, esc};
use crate::workload::collective::Op;

fn names(c: &Comparison) -> Vec<String> {
    c.fabrics.iter().map(|f| f.variant.name.clone()).collect()
}

fn busbw_chart(c: &Comparison, op: &str) -> Option<LineChart> {
    let series: Vec<Series> = c
        .fabrics
        .iter()
        .filter_map(|f| {
            let b = f.busbw.iter().find(|b| b.op == op)?;
            Some(Series::of_estimates(
                f.variant.name.clone(),
                b.points.iter().map(|p| (p.0 as f64, p.1)),
            ))
        })
        .collect();
    let first = c
        .fabrics
        .iter()
        .find_map(|f| f.busbw.iter().find(|b| b.op == op))?;
    Some(LineChart::fitted(
        &format!(
            "{op} busbw, {} GPUs on {} servers",
            first.ranks, first.servers
        ),
        ("message size (bytes)", Scale::Log2, TickFormat::Bytes),
        ("bus bandwidth (GB/s)", Scale::Linear, TickFormat::Number),
        series,
    ))
}

/// One completion-time CDF per fabric (background and incast messages of the stress run), all
/// on the same x axis so they compare at a glance.
fn cdf_charts(c: &Comparison) -> Vec<(String, String)> {
    let title = "completion time (us)";
    let all: Vec<f64> = c
        .fabrics
        .iter()
        .filter_map(|f| f.stress.as_ref())
        .flat_map(|s| s.background_fct_us.iter().chain(&s.incast_fct_us).copied())
        .collect();
    let x = Axis::fit(title, Scale::Log10, TickFormat::Number, &all);
    c.fabrics
        .iter()
        .filter_map(|f| {
            let s = f.stress.as_ref()?;
            let mut ch = cdf::chart(
                &format!("{}: completion times under stress", f.variant.name),
                title,
                Scale::Log10,
                &[
                    ("background".into(), s.background_fct_us.clone()),
                    ("incast".into(), s.incast_fct_us.clone()),
                ],
            );
            ch.x = x.clone();
            Some((
                ch.to_svg(),
                format!(
                    "simulation: packet engine, {} with its own parameters; {}",
                    f.variant.name, s.pattern
                ),
            ))
        })
        .collect()
}

fn step_bars(c: &Comparison) -> StackedBars {
    let with: Vec<&FabricResult> = c.fabrics.iter().filter(|f| f.delivered.is_some()).collect();
    StackedBars {
        title: "training step time".into(),
        y_title: "seconds per step (s)".into(),
        bars: with.iter().map(|f| f.variant.name.clone()).collect(),
        segments: vec![
            "compute".into(),
            "NVLink comm. (in a server)".into(),
            "exposed fabric comm.".into(),
            "pipeline bubble".into(),
        ],
        values: with
            .iter()
            .filter_map(|f| f.delivered.as_ref())
            .map(|d| {
                vec![
                    d.compute_s.mean,
                    d.exposed_nvlink_s.mean,
                    d.exposed_fabric_s.mean,
                    d.bubble_s.mean,
                ]
            })
            .collect(),
        errors: with
            .iter()
            .filter_map(|f| f.delivered.as_ref())
            .map(|d| (d.step_time_s.lo, d.step_time_s.hi))
            .collect(),
    }
}

fn capex_bars(c: &Comparison) -> StackedBars {
    StackedBars {
        title: "network CAPEX".into(),
        y_title: "USD".into(),
        bars: names(c),
        segments: vec![
            "switches".into(),
            "NICs".into(),
            "optics".into(),
            "cables and fibre".into(),
        ],
        values: c
            .fabrics
            .iter()
            .map(|f| {
                let k = &f.plan.cost;
                vec![k.switches_usd, k.nics_usd, k.optics_usd, k.cables_usd]
            })
            .collect(),
        // Plan figures: no seeds, no interval.
        errors: Vec::new(),
    }
}

fn tco_bars(c: &Comparison) -> StackedBars {
    StackedBars {
        title: format!("cluster TCO over {} years", c.years),
        y_title: "USD".into(),
        bars: names(c),
        segments: vec![
            "GPU servers".into(),
            "network CAPEX".into(),
            "energy".into(),
        ],
        values: c
            .fabrics
            .iter()
            .map(|f| {
                let k = &f.plan.cost;
                vec![
                    k.compute_capex_usd,
                    k.network_capex_usd,
                    k.cluster_opex_usd_per_year * c.years as f64,
                ]
            })
            .collect(),
        // Plan figures: no seeds, no interval.
        errors: Vec::new(),
    }
}

fn topology_svg(c: &Comparison) -> String {
    let stacks: Vec<Stack> = c
        .fabrics
        .iter()
        .map(|f| {
            let p = &f.plan;
            let mut levels = vec![Level {
                label: format!(
                    "{} servers x {} NICs",
                    p.servers, f.design.spec.nics_per_node
                ),
                up_links: p.bom.links.first().map(|l| format!("{} links", l.links)),
            }];
            for (i, t) in p.bom.tiers.iter().enumerate() {
                levels.push(Level {
                    label: format!(
                        "{} x {} {}",
                        t.switches,
                        p.switch,
                        tier_role(t.tier, p.tiers)
                    ),
                    up_links: p.bom.links.get(i + 1).map(|l| format!("{} links", l.links)),
                });
            }
            Stack {
                name: f.variant.name.clone(),
                levels,
            }
        })
        .collect();
    tiers::to_svg("topology: switch tiers per fabric", &stacks)
}

pub fn report(c: &Comparison, r: &Recommendation) -> String {
    let mut page = Page::new(&format!("fabricsim compare: {}", c.name));

    let mut rec = String::from("<div class=\"callout\">");
    rec.push_str(&match &r.fabric {
        Some(f) if r.too_close_to_call => format!(
            "<p><strong>Highest score: {}</strong>, too close to call on these numbers (the separation is below).</p>",
            esc(f)
        ),
        Some(f) => format!("<p><strong>Recommended: {}</strong></p>", esc(f)),
        None => "<p><strong>No fabric meets the constraints.</strong></p>".into(),
    });
    rec.push_str(&list(&r.reasons));
    rec.push_str(&format!(
        "<p class=\"note\">Scoring rule: {}</p>",
        esc(&r.rule)
    ));
    let sentences: Vec<String> = (0..c.fabrics.len())
        .filter_map(|i| relative_sentence(c, i))
        .collect();
    rec.push_str(&list(&sentences));
    rec.push_str("</div>");
    page.section("recommendation", "Recommendation", &rec);
    if let Some(rb) = &r.robustness {
        page.section(
            "robustness",
            "Robustness of the verdict (prices -20%/+20% per class, loss rate x0.1 and x10)",
            &list(&robustness_lines(rb)),
        );
    }

    let mut header = vec![String::new()];
    header.extend(names(c));
    let rows = plain_rows(summary_rows(c));
    page.section("summary", "Side by side", &table(&header, &rows));
    if let Some(h) = serving_heading(c) {
        let rows = plain_rows(serving_rows(c));
        let content = format!(
            "<p class=\"note\">simulation: {}; each figure the mean ± its 95% interval over the seeds; cost: the plan's cluster TCO per million output tokens of the requests meeting both SLOs</p>{}",
            esc(h.trim_end_matches(':')),
            table(&header, &rows)
        );
        page.section("serving", "Serving", &content);
    }
    if let Some(claims) = &c.claims {
        page.section(
            "claims",
            "The field's claims, answered by this tool's runs",
            &super::claims::section(claims),
        );
    }
    if let Some(r) = &c.regimes {
        let (header, rows) = crate::compare::regimes::rows(r);
        let mut content = format!(
            "<p class=\"note\">{} against {}, seed {}; parted = tokens/s more than {:.0}% apart; each row names the engine that timed each fabric's step</p>",
            esc(&r.roce),
            esc(&r.infiniband),
            r.seed,
            100.0 * r.threshold
        );
        content += &table(&header, &plain_rows(rows));
        let lines: Vec<String> = r
            .first_parted
            .iter()
            .map(|(regime, at)| match at {
                Some(x) => format!("{regime}: they stop being equal at {x}"),
                None => format!("{regime}: equal at every setting run"),
            })
            .collect();
        content += &super::list(&lines);
        page.section("regimes", "Where fabrics part", &content);
    }
    if !c.tenants.is_empty() {
        let header: Vec<String> = [
            "fabric",
            "job",
            "kind",
            "GPUs",
            "placement",
            "alone (ms)",
            "together (ms)",
            "slowdown",
        ]
        .map(String::from)
        .to_vec();
        let rows: Vec<Vec<(String, Option<String>)>> = crate::report::compare::tenant_rows(c)
            .into_iter()
            .map(|r| r.into_iter().map(|cell| (cell, None)).collect())
            .collect();
        page.section(
            "tenants",
            "Tenants: each job alone and together on each fabric",
            &table(&header, &rows),
        );
    }

    let mut charts: Vec<(String, String)> = Vec::new();
    for op in [Op::AllReduce, Op::AllToAll] {
        if let Some(ch) = busbw_chart(c, op.name()) {
            let src = c
                .fabrics
                .iter()
                .find_map(|f| f.busbw.iter().find(|b| b.op == op.name()))
                .map(|b| b.source.clone())
                .unwrap_or_default();
            charts.push((ch.to_svg(), format!("nccl-tests busbw; {src}")));
        }
    }
    charts.push((
        step_bars(c).to_svg(),
        "step time split from the training-step model, means over the seeds, the step time's 95% interval as an error bar (fabrics without a modelled step are left out)".into(),
    ));
    charts.push((
        capex_bars(c).to_svg(),
        "plan: bill of materials at catalog prices".into(),
    ));
    charts.push((
        tco_bars(c).to_svg(),
        "plan: CAPEX plus energy of servers and network at the [cost] price and PUE".into(),
    ));
    charts.push((
        topology_svg(c),
        "plan: topology builder and bill of materials".into(),
    ));
    if let Some((axes, points)) = &c.loss_sweep
        && let Some(svg) = crate::compare::sweep::chart(axes, points)
    {
        let fabric = c
            .fabrics
            .iter()
            .find(|f| f.design.profile.family == fabricsim_input::profile::Family::Roce)
            .map(|f| f.variant.profile.clone())
            .unwrap_or_default();
        charts.push((
            svg,
            format!("simulation: the step's collectives on the packet engine, {fabric} with random loss on every link"),
        ));
    }
    page.section("charts", "Charts", &figures(&charts));
    if let Some(s) = c.fabrics.iter().find_map(|f| f.stress.as_ref()) {
        let rows = plain_rows(stress_rows(c));
        let content = format!(
            "<p class=\"note\">simulation: packet engine, each fabric with its own parameters: {}</p>{}{}",
            esc(&s.pattern),
            table(&header, &rows),
            figures(&cdf_charts(c))
        );
        page.section("stress", "Under stress", &content);
    }

    let metric_rows: Vec<Vec<(String, Option<String>)>> = metrics::table(c)
        .into_iter()
        .map(|m| {
            let label = if m.unit.is_empty() {
                m.metric
            } else {
                format!("{} ({})", m.metric, m.unit)
            };
            std::iter::once((label, None))
                .chain(m.cells.into_iter().map(|x| (x.text, Some(x.provenance))))
                .collect()
        })
        .collect();
    page.section(
        "metrics",
        "Metrics table (each figure with its provenance)",
        &table(&header, &metric_rows),
    );
    page.section("notes", "What the numbers mean", &list(&c.notes));
    page.finish()
}

/// Labelled rows of plain cells as `table` takes them (no cell tooltips).
pub(super) fn plain_rows(rows: Vec<(String, Vec<String>)>) -> Vec<Vec<(String, Option<String>)>> {
    rows.into_iter()
        .map(|(label, cells)| {
            std::iter::once((label, None))
                .chain(cells.into_iter().map(|x| (x, None)))
                .collect()
        })
        .collect()
}
