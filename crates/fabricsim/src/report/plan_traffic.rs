//! What a scenario's `[train]` job puts on the fabric `plan` sized: per collective of one step,
//! the bytes per GPU that leave the server's NVLink domain, from the same step model and rank
//! placement `fabricsim train` uses (`workload::train::fabric_bytes`), so `plan` and `train`
//! agree on which traffic leaves an HGX server or an NVL72 rack.

use serde_json::{Value, json};
use std::fmt::Write;

use crate::workload::comm_model::AlphaBetaModel;
use crate::workload::link_params::FabricParams;
use crate::workload::placement::Placement;
use crate::workload::train::config::TrainConfig;
use crate::workload::train::efficiency::Efficiency;
use crate::workload::train::{fabric_bytes, step};
use fabricsim_core::error::InputError;
use fabricsim_core::topology::Topology;
use fabricsim_input::scenario::{Design, Scenario};

/// One collective of the step.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub name: &'static str,
    pub ranks: u32,
    pub servers: u32,
    pub bytes_per_gpu: f64,
}

/// The step's traffic on the scale-out fabric, per GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct Traffic {
    /// The job as `train` titles it: model and layout.
    pub job: String,
    pub rows: Vec<Row>,
    pub total_bytes_per_gpu: f64,
}

/// The traffic of `s`'s `[train]` job on the cluster `d` and `t` describe; `None` without a
/// `[train]` section; `Err` when the job does not resolve (as `train` would say).
pub fn of(s: &Scenario, d: &Design, t: &Topology) -> Result<Option<Traffic>, InputError> {
    if s.file.train.is_none() {
        return Ok(None);
    }
    let cfg = TrainConfig::resolve(s, d, Placement::on_topology(t, d.spec.gpus_per_node))?;
    let comm = AlphaBetaModel::new(FabricParams::of(d));
    let r = step::step(&cfg, &Efficiency::h200(&d.catalog), &comm);
    let rows: Vec<Row> = r
        .collectives
        .iter()
        .map(|c| Row {
            name: c.name,
            ranks: c.ranks,
            servers: c.servers,
            bytes_per_gpu: fabric_bytes::of_row(c),
        })
        .collect();
    Ok(Some(Traffic {
        job: format!(
            "{} on {} GPUs, tp {} pp {} dp {} ep {} cp {}",
            r.model, r.gpus, r.tp, r.pp, r.dp, r.ep, r.cp
        ),
        total_bytes_per_gpu: rows.iter().map(|x| x.bytes_per_gpu).sum(),
        rows,
    }))
}

/// The text section.
pub fn text(t: &Traffic, out: &mut String) {
    let _ = writeln!(
        out,
        "\nScale-out traffic per training step ([train]: {}), per GPU",
        t.job
    );
    let _ = writeln!(
        out,
        "  {:<24} {:>6} {:>8} {:>12}",
        "collective", "ranks", "servers", "GB off-node"
    );
    for x in &t.rows {
        let _ = writeln!(
            out,
            "  {:<24} {:>6} {:>8} {:>12.3}",
            x.name,
            x.ranks,
            x.servers,
            x.bytes_per_gpu / 1e9
        );
    }
    let _ = writeln!(
        out,
        "  {:<24} {:>6} {:>8} {:>12.3}",
        "total",
        "",
        "",
        t.total_bytes_per_gpu / 1e9
    );
}

/// The JSON object (`train_traffic`).
pub fn json(t: &Traffic) -> Value {
    json!({
        "job": t.job,
        "collectives": t.rows.iter().map(|x| json!({
            "name": x.name,
            "ranks": x.ranks,
            "servers": x.servers,
            "GB_per_gpu_per_step": gb(x.bytes_per_gpu),
        })).collect::<Vec<_>>(),
        "total_GB_per_gpu_per_step": gb(t.total_bytes_per_gpu),
    })
}

/// Bytes as GB with 3 decimals (a stable JSON number).
fn gb(bytes: f64) -> f64 {
    (bytes / 1e6).round() / 1e3
}
