//! Checks on catalog files beyond what the types enforce: positive numbers, consistent port
//! modes, unique ids, and references that resolve (a transceiver's fibre, a server's GPU).

use super::{Catalog, CatalogFile};
use fabricsim_core::error::{InputError, Source};

/// The line of `key` inside the `index`-th `[[table]]` entry of `src` (or of the header when
/// the key is not written there).
fn locate(src: &Source, table: &str, index: usize, key: &str) -> Option<usize> {
    let header = format!("[[{table}]]");
    let mut seen = 0usize;
    let mut inside = false;
    let mut header_line = None;
    for (i, raw) in src.text.lines().enumerate() {
        let line = raw.trim();
        if line.starts_with('[') {
            if inside {
                break;
            }
            if line == header {
                if seen == index {
                    inside = true;
                    header_line = Some(i + 1);
                }
                seen += 1;
            }
            continue;
        }
        if inside
            && let Some((k, _)) = line.split_once('=')
            && k.trim() == key
        {
            return Some(i + 1);
        }
    }
    header_line
}

/// An error for `key` of the `index`-th entry of `table` (whose id is `id`).
#[allow(clippy::too_many_arguments)] // each argument is one field of the message
fn err(
    src: &Source,
    table: &str,
    index: usize,
    id: &str,
    key: &str,
    value: impl std::fmt::Display,
    problem: &str,
    allowed: &str,
) -> InputError {
    InputError {
        file: src.name.clone(),
        line: locate(src, table, index, key),
        key: format!("{table}[id={id}].{key}"),
        value: value.to_string(),
        problem: problem.to_string(),
        allowed: allowed.to_string(),
    }
}

/// A value that must be positive (> 0) or non-negative.
struct Num<'a>(&'a str, f64, bool);

fn numbers(src: &Source, table: &str, i: usize, id: &str, nums: &[Num]) -> Result<(), InputError> {
    for &Num(key, v, may_be_zero) in nums {
        let ok = v.is_finite() && if may_be_zero { v >= 0.0 } else { v > 0.0 };
        if !ok {
            let (problem, allowed) = if may_be_zero {
                ("must not be negative", "a number >= 0")
            } else {
                ("must be positive", "a number > 0")
            };
            return Err(err(src, table, i, id, key, v, problem, allowed));
        }
    }
    Ok(())
}

fn unique<'a>(
    src: &Source,
    table: &str,
    ids: impl Iterator<Item = &'a str>,
) -> Result<(), InputError> {
    let mut seen: Vec<&str> = Vec::new();
    for (i, id) in ids.enumerate() {
        if id.trim().is_empty() {
            return Err(err(
                src,
                table,
                i,
                id,
                "id",
                "\"\"",
                "is empty",
                "a non-empty id",
            ));
        }
        if seen.contains(&id) {
            return Err(err(
                src,
                table,
                i,
                id,
                "id",
                id,
                "appears twice in this file",
                "each id once per file (a user file replaces a built-in entry by reusing its id)",
            ));
        }
        seen.push(id);
    }
    Ok(())
}

/// Checks one file on its own.
pub(super) fn file(src: &Source, f: &CatalogFile) -> Result<(), InputError> {
    unique(src, "switch", f.switch.iter().map(|x| x.id.as_str()))?;
    unique(src, "nic", f.nic.iter().map(|x| x.id.as_str()))?;
    unique(
        src,
        "transceiver",
        f.transceiver.iter().map(|x| x.id.as_str()),
    )?;
    unique(src, "cable", f.cable.iter().map(|x| x.id.as_str()))?;
    unique(src, "fiber", f.fiber.iter().map(|x| x.id.as_str()))?;
    unique(src, "gpu", f.gpu.iter().map(|x| x.id.as_str()))?;
    unique(src, "server", f.server.iter().map(|x| x.id.as_str()))?;
    for (i, s) in f.switch.iter().enumerate() {
        let t = "switch";
        numbers(
            src,
            t,
            i,
            &s.id,
            &[
                Num("cages", s.cages as f64, false),
                Num("latency_ns", s.latency_ns, true),
                Num("buffer_mb", s.buffer_mb, true),
                Num("power_w", s.power_w, true),
                Num("rack_units", s.rack_units as f64, false),
                Num("price_usd", s.price_usd, true),
            ],
        )?;
        if s.modes.is_empty() {
            return Err(err(
                src,
                t,
                i,
                &s.id,
                "modes",
                "[]",
                "is empty",
                "at least one port mode",
            ));
        }
        for m in &s.modes {
            if m.port_gbps == 0 || m.ports == 0 || s.cages == 0 || m.ports % s.cages != 0 {
                return Err(err(
                    src,
                    t,
                    i,
                    &s.id,
                    "modes",
                    format!("{{ port_gbps = {}, ports = {} }}", m.port_gbps, m.ports),
                    "ports must be a positive whole multiple of cages",
                    &format!("ports = n x {} cages, port_gbps > 0", s.cages),
                ));
            }
        }
    }
    for (i, n) in f.nic.iter().enumerate() {
        numbers(
            src,
            "nic",
            i,
            &n.id,
            &[
                Num("port_gbps", n.port_gbps as f64, false),
                Num("latency_ns", n.latency_ns, true),
                Num("power_w", n.power_w, true),
                Num("price_usd", n.price_usd, true),
            ],
        )?;
        if n.families.is_empty() {
            return Err(err(
                src,
                "nic",
                i,
                &n.id,
                "families",
                "[]",
                "is empty",
                "\"infiniband\" and/or \"ethernet\"",
            ));
        }
    }
    for (i, x) in f.transceiver.iter().enumerate() {
        let t = "transceiver";
        numbers(
            src,
            t,
            i,
            &x.id,
            &[
                Num("lane_gbps", x.lane_gbps as f64, false),
                Num("reach_m", x.reach_m, false),
                Num("power_w", x.power_w, true),
                Num("price_usd", x.price_usd, true),
                Num("vendor_price_usd", x.vendor_price_usd.unwrap_or(0.0), true),
                Num("fibers", x.fibers as f64, false),
            ],
        )?;
        if x.modes.is_empty() || x.modes.iter().any(|m| m.port_gbps == 0 || m.ports == 0) {
            return Err(err(
                src,
                t,
                i,
                &x.id,
                "modes",
                x.modes.len(),
                "needs at least one mode with port_gbps > 0 and ports > 0",
                "modes = [{ port_gbps = 400, ports = 2 }]",
            ));
        }
    }
    for (i, x) in f.cable.iter().enumerate() {
        numbers(
            src,
            "cable",
            i,
            &x.id,
            &[
                Num("lane_gbps", x.lane_gbps as f64, false),
                Num("reach_m", x.reach_m, false),
                Num("power_w", x.power_w, true),
                Num("ns_per_m", x.ns_per_m, false),
                Num("price_usd", x.price_usd, true),
                Num("vendor_price_usd", x.vendor_price_usd.unwrap_or(0.0), true),
            ],
        )?;
        if x.modes.is_empty() || x.modes.iter().any(|m| m.port_gbps == 0) {
            return Err(err(
                src,
                "cable",
                i,
                &x.id,
                "modes",
                x.modes.len(),
                "needs at least one mode with port_gbps > 0",
                "modes = [{ port_gbps = 400, shape = \"split\" }]",
            ));
        }
    }
    for (i, x) in f.fiber.iter().enumerate() {
        numbers(
            src,
            "fiber",
            i,
            &x.id,
            &[
                Num("usd_per_m", x.usd_per_m, true),
                Num("usd_fixed", x.usd_fixed, true),
                Num("ns_per_m", x.ns_per_m, false),
            ],
        )?;
    }
    for (i, x) in f.gpu.iter().enumerate() {
        numbers(
            src,
            "gpu",
            i,
            &x.id,
            &[
                Num("bf16_tflops", x.bf16_tflops, false),
                Num("hbm_gb", x.hbm_gb, false),
                Num("hbm_TBps", x.hbm_tbps, false),
                Num("fp8_tflops", x.fp8_tflops.unwrap_or(1.0), false),
                Num("nvlink_GBps", x.nvlink_gbyteps, true),
                Num("tdp_w", x.tdp_w, false),
            ],
        )?;
    }
    for (i, x) in f.server.iter().enumerate() {
        numbers(
            src,
            "server",
            i,
            &x.id,
            &[
                Num("gpus", x.gpus as f64, false),
                Num(
                    "nvlink_domain_TBps",
                    x.nvlink_domain_tbps.unwrap_or(1.0),
                    false,
                ),
                Num("power_w", x.power_w, true),
                Num("price_usd", x.price_usd, true),
            ],
        )?;
    }
    Ok(())
}

/// Checks that references resolve in the merged catalog (errors point into `src`, the file
/// just merged).
pub(super) fn references(src: &Source, c: &Catalog) -> Result<(), InputError> {
    for (i, x) in c.transceivers.iter().enumerate() {
        if c.fiber_index(&x.fiber).is_none() {
            let idx = entry_index(src, "transceiver", &x.id).unwrap_or(i);
            return Err(err(
                src,
                "transceiver",
                idx,
                &x.id,
                "fiber",
                &x.fiber,
                "is not a fiber id in the catalog",
                &super::id_list(c.fibers.iter().map(|f| f.id.as_str())),
            ));
        }
    }
    for (i, x) in c.servers.iter().enumerate() {
        let idx = entry_index(src, "server", &x.id).unwrap_or(i);
        let Some(gpu) = c.gpu(&x.gpu) else {
            return Err(err(
                src,
                "server",
                idx,
                &x.id,
                "gpu",
                &x.gpu,
                "is not a gpu id in the catalog",
                &super::id_list(c.gpus.iter().map(|f| f.id.as_str())),
            ));
        };
        if let Some(nic) = &x.nic
            && !c.nics.iter().any(|n| n.id == *nic)
        {
            return Err(err(
                src,
                "server",
                idx,
                &x.id,
                "nic",
                nic,
                "is not a nic id in the catalog",
                &super::id_list(c.nics.iter().map(|f| f.id.as_str())),
            ));
        }
        if let Some(tbps) = x.nvlink_domain_tbps {
            let sum = x.gpus as f64 * gpu.nvlink_gbyteps / 1000.0;
            if (tbps - sum).abs() > DOMAIN_TOLERANCE * sum {
                return Err(err(
                    src,
                    "server",
                    idx,
                    &x.id,
                    "nvlink_domain_TBps",
                    tbps,
                    &format!(
                        "disagrees with its {} GPUs x {} GB/s NVLink each ({sum:.1} TB/s)",
                        x.gpus, gpu.nvlink_gbyteps
                    ),
                    &format!("within 2% of {sum:.1} TB/s, or fix the GPU's nvlink_GBps"),
                ));
            }
        }
    }
    Ok(())
}

/// How far a server's quoted NVLink domain bandwidth may be from its GPUs' sum: vendors round
/// (GB200 NVL72: "130 TB/s" for 72 x 1.8 = 129.6).
const DOMAIN_TOLERANCE: f64 = 0.02;

/// The position of the entry with `id` among the `[[table]]` entries of `src`.
fn entry_index(src: &Source, table: &str, id: &str) -> Option<usize> {
    let header = format!("[[{table}]]");
    let mut n: Option<usize> = None;
    let mut in_table = false;
    for raw in src.text.lines() {
        let line = raw.trim();
        if line.starts_with('[') {
            in_table = line == header;
            if in_table {
                n = Some(n.map_or(0, |k| k + 1));
            }
        } else if let (true, Some(k), Some((key, v))) = (in_table, n, line.split_once('='))
            && key.trim() == "id"
            && v.split('#').next().unwrap_or("").trim().trim_matches('"') == id
        {
            return Some(k);
        }
    }
    None
}
