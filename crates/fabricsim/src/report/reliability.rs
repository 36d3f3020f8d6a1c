//! The plan's reliability section (`plan::reliability`): failures and interruptions per day by
//! part, the job's mean time between interruptions, Daly's checkpoint interval and the ETTR.

use serde_json::{Value, json};
use std::fmt::Write;

use crate::plan::reliability::Reliability;

fn sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(3 - x.abs().log10().ceil() as i32);
    (x * scale).round() / scale
}

/// `s` seconds in ms below a second, else in s, three significant digits.
fn seconds(s: f64) -> String {
    match s < 1.0 {
        true => format!("{} ms", sig(s * 1e3)),
        false => format!("{} s", sig(s)),
    }
}

pub fn json(r: &Reliability) -> Value {
    let parts: Vec<Value> = r
        .parts
        .iter()
        .map(|x| {
            json!({
                "part": x.name,
                "network": x.network,
                "count": x.count,
                "mtbf_hours": x.mtbf_hours,
                "failures_per_day": sig(x.failures_per_day),
                "interruptions_per_day": sig(x.interruptions_per_day),
            })
        })
        .collect();
    let mut v = json!({
        "parts": parts,
        "interruptions_per_day": sig(r.interruptions_per_day),
        "network_share_pct": sig(100.0 * r.network_share),
        "fabric_links_rerouted": r.fabric_links_rerouted,
        "transport_gives_up_s": sig(r.transport_gives_up_s),
        "local_repair_s": r.local_repair_s,
        "link_flaps_per_day": sig(r.flaps_per_day),
        "job_mtbf_hours": sig(r.job_mtbf_hours),
        "recovery_s": r.checkpoint.recovery_s,
        "checkpoint_write_s": r.checkpoint.write_s,
        "checkpoint_interval_s": sig(r.checkpoint.interval_s),
        "ettr": sig(r.ettr),
    });
    if let Some(c) = &r.checkpoint_write {
        v["checkpoint_write_s"] = sig(c.write_s()).into();
        v["checkpoint_bytes"] = c.bytes.into();
        v["storage_bytes_per_s"] = c.bytes_per_s.into();
        v["storage_bandwidth_from"] = match c.storage_tier {
            true => "storage",
            false => "failure-rates.toml job.storage_GBps_per_gpu",
        }
        .into();
    }
    // Only a set interval has an optimum apart from it (the default output keeps its keys).
    if r.checkpoint.interval_s != r.optimum_interval_s {
        v["optimum_interval_s"] = sig(r.optimum_interval_s).into();
    }
    v
}

pub fn text(r: &Reliability, w: &mut String) {
    let _ = writeln!(
        w,
        "\nReliability (data/reliability/failure-rates.toml; constant failure rates)"
    );
    let _ = writeln!(
        w,
        "  {:<26} {:>9} {:>12} {:>13} {:>15}",
        "part", "count", "MTBF h", "failures/day", "interrupts/day"
    );
    for x in &r.parts {
        let _ = writeln!(
            w,
            "  {:<26} {:>9} {:>12.0} {:>13.3} {:>15.3}",
            x.name, x.count, x.mtbf_hours, x.failures_per_day, x.interruptions_per_day
        );
    }
    let _ = writeln!(
        w,
        "  job interruptions {:.2}/day (network {:.1}%), one every {:.2} h; link flaps {:.3}/day",
        r.interruptions_per_day,
        100.0 * r.network_share,
        r.job_mtbf_hours,
        r.flaps_per_day,
    );
    let gives_up = seconds(r.transport_gives_up_s);
    let _ = match (r.fabric_links_rerouted, r.local_repair_s) {
        (true, Some(repair)) => writeln!(
            w,
            "  fabric links rerouted by local repair ({}, before the transport gives up at {gives_up}), NIC links stop the job",
            seconds(repair)
        ),
        (_, Some(repair)) => writeln!(
            w,
            "  every failed link stops the job (local repair {} is slower than the transport gives up, {gives_up})",
            seconds(repair)
        ),
        (_, None) => writeln!(
            w,
            "  every failed link stops the job (the profile has no local repair; the transport gives up at {gives_up})"
        ),
    };
    let set = match r.checkpoint.interval_s == r.optimum_interval_s {
        true => "Daly 2006".to_string(),
        false => format!(
            "[reliability] checkpoint_interval_s; Daly's optimum {:.0} s",
            r.optimum_interval_s
        ),
    };
    let write = match &r.checkpoint_write {
        None => format!("write {:.0} s", r.checkpoint.write_s),
        Some(c) => format!(
            "write {} s: the job's {} GB of state at {} GB/s, {}",
            sig(c.write_s()),
            sig(c.bytes / 1e9),
            sig(c.bytes_per_s / 1e9),
            match c.storage_tier {
                true => "its [storage] ports",
                false => "the table's storage bandwidth per GPU",
            }
        ),
    };
    let _ = writeln!(
        w,
        "  checkpoint every {:.0} s ({set}; {write}, recovery {:.0} s): ETTR {:.3}",
        r.checkpoint.interval_s, r.checkpoint.recovery_s, r.ettr
    );
}

/// One compared fabric's delivered figures with its plan's interruptions (`compare --format
/// json`), a field per row of [`compare_rows`]: the interruptions per day and the network's
/// share, the job's MTBF, the checkpoint interval, the ETTR at it, MFU x ETTR and the cost per
/// million tokens over ETTR; `null` without a delivered step.
pub fn with_interruptions(f: &crate::compare::model::FabricResult) -> Value {
    let r = &f.plan.reliability;
    match &f.delivered {
        None => Value::Null,
        Some(d) => json!({
            // Unrounded: the text rows round them to their own decimals.
            "interruptions_per_day": r.interruptions_per_day,
            "network_share_pct": 100.0 * r.network_share,
            "job_mtbf_hours": r.job_mtbf_hours,
            "checkpoint_interval_s": r.checkpoint.interval_s,
            "ettr": sig(r.ettr),
            "mfu": d.mfu.scaled(r.ettr),
            "usd_per_million_tokens": d.usd_per_million_tokens.scaled(1.0 / r.ettr),
        }),
    }
}

/// `compare`'s reliability rows, one cell per fabric: interruptions (the network's share),
/// the job's MTBF, Daly's interval, ETTR, and MFU and cost per token with the interruptions.
pub fn compare_rows(c: &crate::compare::model::Comparison) -> Vec<(String, Vec<String>)> {
    let per = |g: &dyn Fn(&Reliability) -> String| -> Vec<String> {
        c.fabrics.iter().map(|f| g(&f.plan.reliability)).collect()
    };
    let delivered = |g: &dyn Fn(&crate::compare::model::Delivered, f64) -> String| -> Vec<String> {
        c.fabrics
            .iter()
            .map(|f| {
                f.delivered
                    .as_ref()
                    .map(|d| g(d, f.plan.reliability.ettr))
                    .unwrap_or_else(|| "-".into())
            })
            .collect()
    };
    vec![
        (
            "interruptions per day (network)".into(),
            per(&|r| {
                format!(
                    "{:.2} ({:.1}%)",
                    r.interruptions_per_day,
                    100.0 * r.network_share
                )
            }),
        ),
        (
            "job MTBF (h)".into(),
            per(&|r| format!("{:.1}", r.job_mtbf_hours)),
        ),
        (
            "checkpoint interval (s)".into(),
            per(&|r| format!("{:.0}", r.checkpoint.interval_s)),
        ),
        ("ETTR".into(), per(&|r| format!("{:.3}", r.ettr))),
        (
            "MFU x ETTR".into(),
            delivered(&|d, e| super::compare::percent(&d.mfu.scaled(e), 1)),
        ),
        (
            "USD per million tokens, with interruptions".into(),
            delivered(&|d, e| d.usd_per_million_tokens.scaled(1.0 / e).text(3)),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::estimate::Estimate;

    /// Every reliability row of `compare`'s text is its fabric's JSON field, formatted: on
    /// two fabrics of different transport patience (ib-ndr, uec-400g), 16 GPUs.
    #[test]
    fn the_json_fields_per_fabric_are_the_text_rows() {
        let s = fabricsim_input::scenario::Scenario::parse(
            "small.toml",
            "[cluster]\ngpus = 16\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
             [train]\nmodel = \"llama3-8b\"\ntp = 8\npp = 1\n[compare]\nfabric_runs = false\n\
             seeds = 2\nclaims = \"off\"\nfabrics = [ { name = \"ib\", profile = \"ib-ndr\" }, \
             { name = \"uec\", profile = \"uec-400g\" } ]\n",
        )
        .unwrap();
        let c = crate::compare::model::run(&s).unwrap();
        let rows = compare_rows(&c);
        let row = |name: &str| &rows.iter().find(|r| r.0 == name).unwrap().1;
        for (i, f) in c.fabrics.iter().enumerate() {
            let w = with_interruptions(f);
            let num = |k: &str| w[k].as_f64().unwrap();
            let est = |k: &str| serde_json::from_value::<Estimate>(w[k].clone()).unwrap();
            assert_eq!(
                row("interruptions per day (network)")[i],
                format!(
                    "{:.2} ({:.1}%)",
                    num("interruptions_per_day"),
                    num("network_share_pct")
                )
            );
            assert_eq!(
                row("job MTBF (h)")[i],
                format!("{:.1}", num("job_mtbf_hours"))
            );
            assert_eq!(
                row("checkpoint interval (s)")[i],
                format!("{:.0}", num("checkpoint_interval_s"))
            );
            assert_eq!(row("ETTR")[i], format!("{:.3}", num("ettr")));
            assert_eq!(
                row("MFU x ETTR")[i],
                super::super::compare::percent(&est("mfu"), 1)
            );
            assert_eq!(
                row("USD per million tokens, with interruptions")[i],
                est("usd_per_million_tokens").text(3)
            );
            // The model's checkpoint: the ETTR is the plan's with its write time.
            assert!(f.plan.reliability.checkpoint_write.is_some());
        }
    }
}
