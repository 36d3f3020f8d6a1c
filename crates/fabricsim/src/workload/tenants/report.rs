//! `fabricsim tenants` as text and a table (CSV) (JSON is [`TenantsResult`]'s serde form): each job's
//! time alone and together and its slowdown, then the slowdown matrix; the text adds a serving
//! job's TTFT and TPOT percentiles (JSON `serving`).

use super::run::{JobResult, TenantsResult};
use crate::columns::{Cells, Table};
use fabricsim_core::estimate::Estimate;

/// Milliseconds of a figure in seconds.
fn ms(e: &Estimate) -> String {
    e.scaled(1e3).text(3)
}

fn class(c: Option<u8>) -> String {
    c.map_or("data".into(), |c| c.to_string())
}

pub fn to_text(r: &TenantsResult) -> String {
    let mut s = format!(
        "# {} jobs on one fabric, {} engine, {} seed(s) from {}\n",
        r.jobs.len(),
        r.engine,
        r.seeds.len(),
        r.seeds[0]
    );
    if !r.storage.is_empty() {
        s.push_str("# a job with [jobs.storage] runs as configured: data loading and, with checkpoint_every, its checkpoint step\n");
    }
    s.push_str(&format!(
        "{:<12} {:<10} {:>5} {:<9} {:>5} {:>7} {:>18} {:>18} {:>16}\n",
        "job",
        "kind",
        "gpus",
        "placement",
        "class",
        "leaves",
        "alone (ms)",
        "together (ms)",
        "slowdown"
    ));
    for j in &r.jobs {
        s.push_str(&format!(
            "{:<12} {:<10} {:>5} {:<9} {:>5} {:>7} {:>18} {:>18} {:>16}\n",
            j.name,
            j.kind,
            j.gpus,
            j.placement,
            class(j.class),
            j.leaves.len(),
            ms(&j.alone_s),
            ms(&j.together_s),
            j.slowdown.text(3)
        ));
    }
    if r.jobs.len() > 1 {
        s.push_str("\n# slowdown matrix: row job's time with the column job present / alone\n");
        s.push_str(&format!("{:<12}", ""));
        for j in &r.jobs {
            s.push_str(&format!(" {:>16}", j.name));
        }
        s.push('\n');
        for (i, row) in r.matrix.iter().enumerate() {
            s.push_str(&format!("{:<12}", r.jobs[i].name));
            for cell in row {
                let c = cell.as_ref().map_or("-".into(), |e| e.text(3));
                s.push_str(&format!(" {c:>16}"));
            }
            s.push('\n');
        }
    }
    for sv in &r.serving {
        s.push_str(&format!(
            "\n# serving of {} (its time above is its TTFT p99)\n{:<16} {:>18} {:>18}\n",
            sv.job, "figure", "alone (ms)", "together (ms)"
        ));
        for f in &sv.figures {
            s.push_str(&format!(
                "{:<16} {:>18} {:>18}\n",
                f.name,
                ms(&f.alone_s),
                ms(&f.together_s)
            ));
        }
    }
    for st in &r.storage {
        s.push_str(&format!(
            "\n# storage of {} ({} fabric, tier {:.1} GB/s): {:.3} GB loaded per step, {:.3} GB checkpoint{}\n",
            st.job,
            st.fabric,
            st.tier_gbps,
            st.data_bytes_per_step as f64 / 1e9,
            st.checkpoint_bytes as f64 / 1e9,
            st.checkpoint_every
                .map_or(String::new(), |n| format!(" every {n} steps"))
        ));
        s.push_str(&format!(
            "  step alone {} ms; with data loading {} ms; checkpoint step {} ms; checkpoint written at {} ms{}\n",
            ms(&st.step_s),
            ms(&st.with_data_s),
            ms(&st.checkpoint_step_s),
            ms(&st.checkpoint_write_s),
            if st.write_outlasts_step {
                " (after the step: later steps are slowed too, not simulated)"
            } else {
                ""
            }
        ));
        s.push_str(&format!(
            "  mean step over a checkpoint interval / step alone: {}\n",
            st.amortized_slowdown.text(3)
        ));
    }
    s
}

/// A CSV row: a job, its time together, its slowdown, and with whom (`all` or a job).
type Row<'a> = (&'a JobResult, Option<Estimate>, Estimate, &'a str);

/// One row per job (`with` = `all`), then one per (job, other job) pair of the matrix (its
/// slowdown beside that job; no time together).
pub fn table(r: &TenantsResult) -> Table {
    let all = r
        .jobs
        .iter()
        .map(|j| (j, Some(j.together_s), j.slowdown, "all"));
    let pairs = r.matrix.iter().zip(&r.jobs).flat_map(|(row, j)| {
        row.iter()
            .zip(&r.jobs)
            .filter_map(move |(c, k)| c.map(|c| (j, None, c, k.name.as_str())))
    });
    let rows: Vec<Row> = all.chain(pairs).collect();
    let mut t = Table::default();
    t.push("job", Cells::text(rows.iter().map(|r| Some(&r.0.name))));
    t.push("kind", Cells::text(rows.iter().map(|r| Some(r.0.kind))));
    t.push("gpus", Cells::u64(rows.iter().map(|r| Some(r.0.gpus))));
    t.push(
        "placement",
        Cells::text(rows.iter().map(|r| Some(r.0.placement))),
    );
    t.push(
        "class",
        Cells::text(rows.iter().map(|r| Some(class(r.0.class)))),
    );
    t.push(
        "leaves",
        Cells::u64(rows.iter().map(|r| Some(r.0.leaves.len() as u64))),
    );
    let mut estimate = |names: [&str; 3], e: &dyn Fn(&Row) -> Option<Estimate>| {
        let parts: [fn(Estimate) -> f64; 3] = [|e| e.mean, |e| e.lo, |e| e.hi];
        for (name, part) in names.into_iter().zip(parts) {
            t.push(name, Cells::f64(rows.iter().map(|r| e(r).map(part))));
        }
    };
    estimate(["alone_s", "alone_lo", "alone_hi"], &|r| Some(r.0.alone_s));
    estimate(["together_s", "together_lo", "together_hi"], &|r| r.1);
    estimate(["slowdown", "slowdown_lo", "slowdown_hi"], &|r| Some(r.2));
    t.push("with", Cells::text(rows.iter().map(|r| Some(r.3))));
    t
}
