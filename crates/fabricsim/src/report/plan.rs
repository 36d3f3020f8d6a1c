//! `fabricsim plan` output: a readable text report with units, JSON whose keys carry their
//! units (`power_kW`, `capex_usd`), and CSV (`key,value` rows, the JSON flattened).

use serde_json::{Value, json};
use std::fmt::Write;

use super::plan_traffic::{self, Traffic};
use crate::columns::{Cells, Table};
use crate::plan::Plan;
use crate::plan::cost::HOURS_PER_YEAR;

/// Rounds to 2 decimals so reports are stable and readable.
pub(crate) fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// 1234567.8 -> "1,234,568".
pub(crate) fn thousands(x: f64) -> String {
    let n = x.round() as i64;
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 { format!("-{out}") } else { out }
}

pub(crate) fn tier_role(tier: u8, tiers: u8) -> &'static str {
    match (tier, tiers) {
        (1, 1) => "single switch",
        (1, _) => "leaf",
        (2, _) => "spine",
        _ => "core",
    }
}

fn link_role(tier: u8) -> &'static str {
    match tier {
        1 => "NIC-leaf",
        2 => "leaf-spine",
        _ => "spine-core",
    }
}

/// The plan as a JSON value (keys carry units), with the `[train]` job's `traffic` if given.
pub fn json(p: &Plan, d: &fabricsim_input::scenario::Design, traffic: Option<&Traffic>) -> Value {
    let k = &d.cost;
    let c = &p.cost;
    let tiers: Vec<Value> = p
        .bom
        .tiers
        .iter()
        .map(|t| {
            json!({
                "tier": t.tier,
                "role": tier_role(t.tier, p.tiers),
                "switches": t.switches,
                "ports_total": t.ports_total,
                "ports_used": t.ports_used,
                "ports_free": t.ports_free,
            })
        })
        .collect();
    let links: Vec<Value> = p
        .bom
        .links
        .iter()
        .map(|l| {
            json!({
                "tier": l.tier,
                "between": link_role(l.tier),
                "links": l.links,
                "mean_length_m": r2(l.total_length_m / l.links.max(1) as f64),
                "max_length_m": r2(l.max_length_m),
            })
        })
        .collect();
    let by_class: Vec<Value> = p
        .bom
        .links_by_class
        .iter()
        .map(|(cl, n)| json!({"medium": cl.name(), "links": n}))
        .collect();
    let lines: Vec<Value> = p
        .bom
        .lines
        .iter()
        .map(|l| {
            json!({
                "category": l.category.name(),
                "id": l.id,
                "name": l.name,
                "medium": l.class.map(|c| c.name()),
                "count": l.count,
                "total_usd": r2(l.usd),
                "total_power_kW": r2(l.watts / 1000.0),
            })
        })
        .collect();
    let lengths: Vec<Value> = p
        .bom
        .lengths
        .iter()
        .map(|b| json!({"id": b.id, "length_bin": b.bin, "count": b.count}))
        .collect();
    let mut v = json!({
        "name": p.name,
        "fabric": {
            "profile": p.profile,
            "family": p.family,
            "port_rate_Gbps": p.rate_gbps,
            "switch": p.switch,
            "switch_ports": p.switch_radix,
            "nic": p.nic,
        },
        "cluster": {
            "gpus": p.gpus,
            "gpu": p.gpu,
            "servers": p.servers,
            "server": p.server,
        },
        "topology": {
            "kind": p.kind,
            "planes": p.planes,
            "tiers": p.tiers,
            "oversubscription": format!("{}:{}", p.oversubscription.0, p.oversubscription.1),
        },
        "floor": {
            "compute_racks": p.compute_racks,
            "end_of_row_racks": p.end_of_row_racks,
            "network_racks": p.network_racks,
        },
        "switch_tiers": tiers,
        "link_tiers": links,
        "links_by_medium": by_class,
        "bill_of_materials": lines,
        "link_errors": link_errors_json(p),
        "reliability": super::reliability::json(&p.reliability),
        "cable_lengths": lengths,
        "power_kW": {
            "switches": r2(p.power.switches_kw),
            "optics": r2(p.power.optics_kw),
            "optics_in_switch_cages": r2(p.power.switch_optics_kw),
            "nics": r2(p.power.nics_kw),
            "total": r2(p.power.total_kw()),
            "optics_share_percent": r2(100.0 * p.power.optics_share()),
            "switch_box_w_without_optics": p.power.switch_without_optics_w().map(r2),
            "switch_box_w_with_optics": p.power.switch_with_optics_w().map(r2),
        },
        "power_per_rack_kW": rack_power_json(&p.rack_power),
        "cost": {
            "capex_usd": {
                "switches": r2(c.switches_usd),
                "nics": r2(c.nics_usd),
                "optics": r2(c.optics_usd),
                "cables": r2(c.cables_usd),
                "installation": r2(c.install_usd),
                "spares": r2(c.spares_usd),
                "oob_management": r2(c.oob_usd),
                "total": r2(c.network_capex_usd),
            },
            "optics": super::optics_choice::json(p),
            "oob_ports": c.oob_ports,
            "opex_usd_per_year_parts": {
                "energy": r2(c.energy_usd_per_year),
                "software_licences": r2(c.software_usd_per_year),
                "support": r2(c.support_usd_per_year),
            },
            "pue": k.pue,
            "usd_per_kWh": k.usd_per_kwh,
            "years": k.years,
            "opex_usd_per_year": r2(c.network_opex_usd_per_year),
            "tco_usd": r2(c.network_tco_usd),
            "capex_usd_per_gpu": r2(c.network_capex_usd_per_gpu),
            "tco_usd_per_gpu": r2(c.network_tco_usd_per_gpu),
        },
        "cluster_cost": {
            "compute_capex_usd": r2(c.compute_capex_usd),
            "compute_power_kW": r2(c.compute_power_kw),
            "capex_usd": r2(c.cluster_capex_usd),
            "opex_usd_per_year": r2(c.cluster_opex_usd_per_year),
            "tco_usd": r2(c.cluster_tco_usd),
            "network_share_of_capex_pct": r2(100.0 * c.network_share_of_capex),
            "network_share_of_tco_pct": r2(100.0 * c.network_share_of_tco),
        },
    });
    if let Some((sus, (d, u))) = p.pods {
        v["topology"]["pods"] =
            json!({"sus_per_pod": sus, "core_oversubscription": format!("{d}:{u}")});
    }
    // `--topology auto`: why this kind (absent when the scenario names one).
    if let Some(why) = &p.choice {
        v["topology"]["auto_choice"] = json!(why);
    }
    if let Some(t) = traffic {
        v["train_traffic"] = plan_traffic::json(t);
    }
    v
}

/// The link classes with their error figures (`plan::link_errors`).
/// Compute and network racks: count, largest and mean draw (`plan::rack_power`).
fn rack_power_json(r: &crate::plan::rack_power::RackPower) -> Value {
    let racks = |x: &crate::plan::rack_power::Racks| json!({"racks": x.racks, "max": r2(x.max_kw), "mean": r2(x.mean_kw)});
    json!({
        "compute": racks(&r.compute),
        "network": r.network.as_ref().map(racks),
    })
}

fn link_errors_json(p: &Plan) -> Value {
    Value::Array(
        p.link_errors
            .iter()
            .map(|x| {
                let mut v = serde_json::json!({
                    "medium": x.class.name(),
                    "lane_gbps": x.lane_gbps,
                    "links": x.links,
                });
                if let Some(f) = &x.figures {
                    v["fec"] = f.errors.fec.clone().into();
                    v["fec_latency_ns"] =
                        (f.errors.code().latency(p.rate_gbps).ps() as f64 / 1000.0).into();
                    v["pre_fec_ber_typical"] = f.errors.typical_ber.into();
                    v["pre_fec_ber_limit"] = f.errors.limit_ber.into();
                    v["codeword_failure"] = f.codeword_failure.into();
                    v["mtu_frame_loss"] = f.frame_loss.into();
                    v["mtu_frame_loss_at_limit"] = f.frame_loss_at_limit.into();
                    v["mtu_frames_lost_per_link_direction_per_day"] = f.frames_lost_per_day.into();
                }
                v
            })
            .collect(),
    )
}

/// The plan as CSV: one `key,value` row per JSON leaf, arrays indexed by position (a null
/// an empty value).
pub fn csv(p: &Plan, d: &fabricsim_input::scenario::Design, traffic: Option<&Traffic>) -> String {
    let mut leaves = Vec::new();
    flatten(String::new(), &json(p, d, traffic), &mut leaves);
    let mut t = Table::default();
    t.push("key", Cells::text(leaves.iter().map(|l| Some(&l.0))));
    t.push(
        "value",
        Cells::Text(leaves.into_iter().map(|l| l.1).collect()),
    );
    t.to_csv()
}

/// The leaves of `v` under `prefix` as (dotted key, value text).
fn flatten(prefix: String, v: &Value, out: &mut Vec<(String, Option<String>)>) {
    let join = |k: &str| match prefix.is_empty() {
        true => k.to_string(),
        false => format!("{prefix}.{k}"),
    };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| flatten(join(k), x, out)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| flatten(join(&i.to_string()), x, out)),
        Value::String(s) => out.push((prefix, Some(s.clone()))),
        Value::Null => out.push((prefix, None)),
        other => out.push((prefix, Some(other.to_string()))),
    }
}

/// The plan as a readable text report, with the `[train]` job's `traffic` if given.
pub fn text(p: &Plan, d: &fabricsim_input::scenario::Design, traffic: Option<&Traffic>) -> String {
    let c = &p.cost;
    let k = &d.cost;
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "fabricsim plan: {}", p.name);
    let _ = writeln!(
        w,
        "  fabric    {} ({}, {}G ports); switch {} ({} ports at {}G); NIC {}",
        p.profile, p.family, p.rate_gbps, p.switch, p.switch_radix, p.rate_gbps, p.nic
    );
    let _ = writeln!(
        w,
        "  cluster   {} x {} GPUs in {} server{} ({})",
        p.gpus,
        p.gpu,
        p.servers,
        if p.servers == 1 { "" } else { "s" },
        p.server
    );
    let _ = writeln!(
        w,
        "  topology  {}{}, {} tier{}, leaf oversubscription {}:{}{}",
        p.kind,
        match p.planes {
            1 => String::new(),
            n => format!(" x {n} planes"),
        },
        p.tiers,
        if p.tiers == 1 { "" } else { "s" },
        p.oversubscription.0,
        p.oversubscription.1,
        match p.pods {
            Some((sus, (d, u))) => format!("; pods of {sus} SUs, core {d}:{u}"),
            None => String::new(),
        }
    );
    if let Some(why) = &p.choice {
        let _ = writeln!(w, "  {why}");
    }
    let _ = writeln!(
        w,
        "  floor     {} compute racks, {} end-of-row racks, {} network racks",
        p.compute_racks, p.end_of_row_racks, p.network_racks
    );

    let _ = writeln!(w, "\nSwitches");
    let _ = writeln!(
        w,
        "  {:<4} {:<13} {:>9} {:>10} {:>10} {:>10}",
        "tier", "role", "switches", "ports", "used", "free"
    );
    for t in &p.bom.tiers {
        let _ = writeln!(
            w,
            "  {:<4} {:<13} {:>9} {:>10} {:>10} {:>10}",
            t.tier,
            tier_role(t.tier, p.tiers),
            t.switches,
            t.ports_total,
            t.ports_used,
            t.ports_free
        );
    }

    let _ = writeln!(w, "\nLinks");
    let _ = writeln!(
        w,
        "  {:<4} {:<11} {:>9} {:>14} {:>13}",
        "tier", "between", "links", "mean length m", "max length m"
    );
    for l in &p.bom.links {
        let _ = writeln!(
            w,
            "  {:<4} {:<11} {:>9} {:>14.1} {:>13.1}",
            l.tier,
            link_role(l.tier),
            l.links,
            l.total_length_m / l.links.max(1) as f64,
            l.max_length_m
        );
    }
    let classes: Vec<String> = p
        .bom
        .links_by_class
        .iter()
        .map(|(cl, n)| format!("{} {}", cl.name(), n))
        .collect();
    let _ = writeln!(w, "  by medium: {}", classes.join(", "));

    let _ = writeln!(w, "\nBill of materials");
    let _ = writeln!(
        w,
        "  {:<12} {:<18} {:>9} {:>15} {:>10}  name",
        "category", "id", "count", "total USD", "total kW"
    );
    for l in &p.bom.lines {
        let _ = writeln!(
            w,
            "  {:<12} {:<18} {:>9} {:>15} {:>10.2}  {}",
            l.category.name(),
            l.id,
            l.count,
            thousands(l.usd),
            l.watts / 1000.0,
            l.name
        );
    }

    let _ = writeln!(w, "\nCables and fibre cords by length");
    for b in &p.bom.lengths {
        let _ = writeln!(w, "  {:<18} {:>12} {:>9}", b.id, b.bin, b.count);
    }

    let _ = writeln!(
        w,
        "\nLink errors (RS(544,514) FEC; independent bit errors; per link direction)"
    );
    let _ = writeln!(
        w,
        "  {:<18} {:>5} {:>8} {:>11} {:>14} {:>13} {:>15} {:>15}",
        "medium",
        "lane",
        "links",
        "pre-FEC BER",
        "codeword fail",
        "MTU loss",
        "lost per day",
        "MTU loss @limit"
    );
    for x in &p.link_errors {
        let lane = format!("{}G", x.lane_gbps);
        match &x.figures {
            Some(f) => {
                let _ = writeln!(
                    w,
                    "  {:<18} {:>5} {:>8} {:>11.1e} {:>14.2e} {:>13.2e} {:>15.2e} {:>15.2e}",
                    x.class.name(),
                    lane,
                    x.links,
                    f.errors.typical_ber,
                    f.codeword_failure,
                    f.frame_loss,
                    f.frames_lost_per_day,
                    f.frame_loss_at_limit
                );
            }
            None => {
                let _ = writeln!(
                    w,
                    "  {:<18} {:>5} {:>8}  no figures in data/phy/link-errors.toml",
                    x.class.name(),
                    lane,
                    x.links
                );
            }
        }
    }

    super::reliability::text(&p.reliability, w);

    let _ = writeln!(w, "\nPower (network)");
    let _ = writeln!(w, "  switches  {:>12.2} kW", p.power.switches_kw);
    let _ = writeln!(w, "  optics    {:>12.2} kW", p.power.optics_kw);
    let _ = writeln!(w, "  NICs      {:>12.2} kW", p.power.nics_kw);
    let _ = writeln!(w, "  total     {:>12.2} kW", p.power.total_kw());
    let _ = writeln!(
        w,
        "  optics share {:.1}% ({:.2} kW of it in switch cages)",
        100.0 * p.power.optics_share(),
        p.power.switch_optics_kw
    );
    if let (Some(bare), Some(full)) = (
        p.power.switch_without_optics_w(),
        p.power.switch_with_optics_w(),
    ) {
        let _ = writeln!(
            w,
            "  per switch {bare:.0} W without optics, {full:.0} W with its cages' optics"
        );
    }

    let _ = writeln!(
        w,
        "\nPower per rack (servers, switches and the optics in their cages)"
    );
    let mut racks = vec![("compute", p.rack_power.compute)];
    racks.extend(p.rack_power.network.map(|n| ("network", n)));
    for (kind, r) in racks {
        let _ = writeln!(
            w,
            "  {kind:<8} {:>5} racks  max {:>8.2} kW  mean {:>8.2} kW",
            r.racks, r.max_kw, r.mean_kw
        );
    }

    let _ = writeln!(w, "\nCost (network)");
    // Each line with its share of the CAPEX: what the total depends on most.
    for (label, v) in c.capex_lines() {
        let share = if c.network_capex_usd > 0.0 {
            100.0 * v / c.network_capex_usd
        } else {
            0.0
        };
        let _ = writeln!(
            w,
            "  CAPEX {:<9} {:>16} USD  ({share:.1}%)",
            label,
            thousands(v)
        );
    }
    let _ = writeln!(
        w,
        "  CAPEX total     {:>16} USD",
        thousands(c.network_capex_usd)
    );
    super::optics_choice::text(p, k.years, w);
    let _ = writeln!(
        w,
        "  OPEX energy     {:>16} USD/year  ({:.2} kW x PUE {} x {} USD/kWh x {} h)",
        thousands(c.energy_usd_per_year),
        p.power.total_kw(),
        k.pue,
        k.usd_per_kwh,
        HOURS_PER_YEAR
    );
    let _ = writeln!(
        w,
        "  OPEX licences   {:>16} USD/year  ({} USD per switch, {} USD per server)",
        thousands(c.software_usd_per_year),
        k.switch_software_usd_per_year,
        k.fabric_manager_usd_per_node_year
    );
    let _ = writeln!(
        w,
        "  OPEX support    {:>16} USD/year  ({}% of hardware)",
        thousands(c.support_usd_per_year),
        100.0 * k.support_share_per_year
    );
    let _ = writeln!(
        w,
        "  OPEX per year   {:>16} USD",
        thousands(c.network_opex_usd_per_year)
    );
    let _ = writeln!(
        w,
        "  TCO {:>2} years    {:>16} USD",
        k.years,
        thousands(c.network_tco_usd)
    );
    let _ = writeln!(
        w,
        "  per GPU         {:>16} USD CAPEX, {} USD TCO",
        thousands(c.network_capex_usd_per_gpu),
        thousands(c.network_tco_usd_per_gpu)
    );

    let _ = writeln!(
        w,
        "\nCluster (servers from the catalog, NICs counted under network)"
    );
    let _ = writeln!(
        w,
        "  compute CAPEX   {:>16} USD  ({} x {})",
        thousands(c.compute_capex_usd),
        c.servers,
        p.server
    );
    let _ = writeln!(w, "  compute power   {:>16.2} kW", c.compute_power_kw);
    let _ = writeln!(
        w,
        "  cluster CAPEX   {:>16} USD",
        thousands(c.cluster_capex_usd)
    );
    let _ = writeln!(
        w,
        "  cluster TCO     {:>16} USD over {} years",
        thousands(c.cluster_tco_usd),
        k.years
    );
    let _ = writeln!(
        w,
        "  network share   {:>15.1} % of CAPEX, {:.1} % of TCO",
        100.0 * c.network_share_of_capex,
        100.0 * c.network_share_of_tco
    );
    if let Some(t) = traffic {
        plan_traffic::text(t, w);
    }
    let _ = writeln!(
        w,
        "\nMany prices and powers are estimates (tagged [E]/[U] in data/catalog); override them with\n[cost] prices_usd or a user catalog (--catalog FILE)."
    );
    o
}

/// `plan --max`: the largest GPU count per design in 1, 2 and 3 tiers (`plan::reach`), as text,
/// JSON or CSV (`format`: "text", "json", "csv").
pub fn max_table(d: &fabricsim_input::scenario::Design, format: &str) -> String {
    let rows = crate::plan::reach::table(&d.spec);
    let s = &d.spec;
    let mut o = String::new();
    let w = &mut o;
    match format {
        "json" => {
            let v: Vec<Value> = rows
                .iter()
                .map(|r| match &r.gpus {
                    Ok(g) => {
                        json!({"design": r.label(), "max_gpus": {"1": g[0], "2": g[1], "3": g[2]}})
                    }
                    Err(e) => json!({"design": r.label(), "refused": e}),
                })
                .collect();
            let _ = writeln!(
                w,
                "{}",
                serde_json::to_string_pretty(&json!({
                    "switch": d.switch.id, "switch_radix": s.switch_radix,
                    "nic_ports_per_server": s.nics_per_node, "gpus_per_server": s.gpus_per_node,
                    "oversubscription": format!("{}:{}", s.oversubscription.0, s.oversubscription.1),
                    "designs": v,
                }))
                .expect("a JSON value serializes")
            );
        }
        "csv" => {
            let _ = writeln!(
                w,
                "design,max_gpus_1_tier,max_gpus_2_tiers,max_gpus_3_tiers"
            );
            for r in &rows {
                match &r.gpus {
                    Ok(g) => writeln!(w, "{},{},{},{}", r.label(), g[0], g[1], g[2]),
                    Err(_) => writeln!(w, "{},,,", r.label()),
                }
                .expect("writing to a String");
            }
        }
        _ => {
            let _ = writeln!(
                w,
                "fabricsim plan --max: switch {} ({} ports), {} NIC ports and {} GPUs per server, \
                 leaf oversubscription {}:{}",
                d.switch.id,
                s.switch_radix,
                s.nics_per_node,
                s.gpus_per_node,
                s.oversubscription.0,
                s.oversubscription.1
            );
            let _ = writeln!(
                w,
                "  {:<28} {:>12} {:>12} {:>12}",
                "design", "1 tier", "2 tiers", "3 tiers"
            );
            for r in &rows {
                let _ = match &r.gpus {
                    Ok(g) => writeln!(
                        w,
                        "  {:<28} {:>12} {:>12} {:>12}",
                        r.label(),
                        thousands(g[0] as f64),
                        thousands(g[1] as f64),
                        thousands(g[2] as f64)
                    ),
                    Err(e) => writeln!(w, "  {:<28} refused: {e}", r.label()),
                };
            }
        }
    }
    o
}
