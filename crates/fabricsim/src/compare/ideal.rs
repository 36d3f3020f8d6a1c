//! The ideal-network baseline: the same job on an infinitely fast fabric (every collective
//! across servers takes no time; compute, NVLink collectives inside a server and the 1F1B
//! bubble's structure stay as they are), and the MFU each fabric loses against it, split by
//! collective. The split follows the step model (`workload::train::step`): a collective on a
//! micro-batch's critical path costs its exposed time in each of the m + pp - 1 slots of 1F1B
//! (Narayanan et al. 2021), a data-parallel one issued once per step its exposed time once.

use serde::Serialize;

use crate::workload::collective::Op;
use crate::workload::comm_model::{CommModel, GroupShape};
use crate::workload::train::step::{CommRow, StepReport};
use fabricsim_core::estimate::Estimate;

/// `inner`'s times for collectives inside one server, none for those across servers.
pub struct IdealFabric<'a>(pub &'a dyn CommModel);

impl CommModel for IdealFabric<'_> {
    fn time_s(&self, op: Op, bytes: u64, group: GroupShape) -> f64 {
        match group.servers > 1 {
            true => 0.0,
            false => self.0.time_s(op, bytes, group),
        }
    }
    fn describe(&self) -> String {
        format!(
            "ideal fabric: no time across servers; inside a server {}",
            self.0.describe()
        )
    }
}

/// The collective classes the loss is split by.
pub const CLASSES: [&str; 5] = ["dp", "tp", "pp", "ep", "cp"];

/// The class of a step's collective, by its name (`dp_`/`edp_` rows are data-parallel).
pub fn class(row: &CommRow) -> &'static str {
    let n = row.name.strip_prefix('e').filter(|n| n.starts_with("dp_"));
    let n = n.unwrap_or(row.name);
    CLASSES
        .into_iter()
        .find(|c| n.starts_with(&format!("{c}_")))
        .unwrap_or("other")
}

/// Step-level data-parallel collectives (issued once per step, after the last backward or
/// before the first forward), as opposed to those on every micro-batch's path.
fn once_per_step(row: &CommRow) -> bool {
    class(row) == "dp" && !row.name.ends_with("_fwd") && !row.name.ends_with("_bwd")
}

/// Seconds `row` adds to the step over its ideal (zero) time: its exposed time, in every
/// 1F1B slot when it lies on a micro-batch's path.
fn step_share(r: &StepReport, row: &CommRow) -> f64 {
    match once_per_step(row) {
        true => row.exposed_s,
        false => row.exposed_s * (r.micro_batches + r.pp - 1) as f64 / r.micro_batches as f64,
    }
}

/// What one seed's step lost to the network against its ideal.
#[derive(Clone, Debug, PartialEq)]
pub struct Lost {
    pub ideal_step_s: f64,
    pub ideal_mfu: f64,
    /// MFU points lost (ideal MFU - MFU), in total and per class of [`CLASSES`].
    pub total: f64,
    pub by_class: Vec<f64>,
}

/// `r` (a fabric's step) against `ideal` (the same job on [`IdealFabric`]): the MFU lost,
/// split by class in proportion to each class's cross-server collectives' share of the
/// step time.
pub fn lost(r: &StepReport, ideal: &StepReport) -> Lost {
    let total = ideal.mfu - r.mfu;
    let shares: Vec<f64> = CLASSES
        .iter()
        .map(|&c| {
            r.collectives
                .iter()
                .filter(|row| row.servers > 1 && class(row) == c)
                .map(|row| step_share(r, row))
                .sum()
        })
        .collect();
    let sum: f64 = shares.iter().sum();
    Lost {
        ideal_step_s: ideal.step_time_s,
        ideal_mfu: ideal.mfu,
        total,
        by_class: shares
            .iter()
            .map(|s| if sum > 0.0 { total * s / sum } else { 0.0 })
            .collect(),
    }
}

/// The baseline and the loss over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Baseline {
    pub ideal_step_time_s: Estimate,
    pub ideal_mfu: Estimate,
    /// MFU lost to the network (ideal MFU - MFU), over the seeds.
    pub mfu_lost: Estimate,
    /// (class, MFU lost to its collectives across servers) for the classes the step has.
    pub mfu_lost_by_collective: Vec<(&'static str, Estimate)>,
}

/// [`Baseline`] over the seeds' [`Lost`]s.
pub fn over_seeds(l: &[Lost]) -> Result<Baseline, String> {
    let est = |what: &str, g: &dyn Fn(&Lost) -> f64| {
        super::seeds::estimate(what, &l.iter().map(g).collect::<Vec<_>>())
    };
    let mut by = Vec::new();
    for (i, c) in CLASSES.iter().enumerate() {
        if l.iter().any(|x| x.by_class[i] != 0.0) {
            by.push((*c, est("MFU lost", &|x| x.by_class[i])?));
        }
    }
    Ok(Baseline {
        ideal_step_time_s: est("ideal step time", &|x| x.ideal_step_s)?,
        ideal_mfu: est("ideal MFU", &|x| x.ideal_mfu)?,
        mfu_lost: est("MFU lost", &|x| x.total)?,
        mfu_lost_by_collective: by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::step::engine_step;
    use crate::compare::variant::{Tune, Variant};
    use crate::workload::comm_model::{AlphaBetaModel, FreeNetwork};
    use crate::workload::link_params::FabricParams;
    use crate::workload::train::efficiency::Efficiency;
    use crate::workload::train::step::step;
    use fabricsim_input::scenario::Scenario;

    fn job(extra: &str) -> (crate::workload::train::config::TrainConfig, Scenario) {
        let s = Scenario::parse(
            "t.toml",
            &format!(
                "[cluster]\ngpus = 32\ngpus_per_node = 8\nnics_per_node = 8\ngpu = \"h100\"\n\
                 [fabric]\nprofile = \"roce-400g\"\n[topology]\nkind = \"fat-tree\"\n\
                 [train]\nmodel = \"llama3-8b\"\nzero = 1\nglobal_batch = 64\nseq = 2048\n{extra}"
            ),
        )
        .unwrap();
        let (design, topo, _) = crate::plan::run(&s).unwrap();
        (
            crate::compare::model::train_config(&s, &design, &topo).unwrap(),
            s,
        )
    }

    /// The baseline is the compute-only step (the step model on an infinitely fast network)
    /// plus exactly what NVLink adds inside a server, in every 1F1B slot: same compute, same
    /// NVLink collectives, same bubble structure, nothing across servers.
    #[test]
    fn the_baseline_is_the_compute_only_step_plus_nvlink() {
        let (cfg, s) = job("tp = 8\npp = 2\n");
        let (design, _, _) = crate::plan::run(&s).unwrap();
        let eff = Efficiency::h200(&design.catalog);
        let model = AlphaBetaModel::new(FabricParams::of(&design));
        let fabric = step(&cfg, &eff, &model);
        let ideal = step(&cfg, &eff, &IdealFabric(&model));
        let free = step(&cfg, &eff, &FreeNetwork);
        assert_eq!(ideal.compute_s, free.compute_s);
        for row in &ideal.collectives {
            if row.servers > 1 {
                assert_eq!((row.time_per_call_s, row.exposed_s), (0.0, 0.0), "{row:?}");
            }
        }
        let nvlink: f64 = ideal
            .collectives
            .iter()
            .filter(|r| r.servers == 1)
            .map(|r| step_share(&ideal, r))
            .sum();
        assert!(nvlink > 0.0, "TP 8 runs on NVLink");
        let want = free.step_time_s + nvlink;
        assert!(
            (ideal.step_time_s - want).abs() < 1e-9 * want,
            "ideal {} free {} nvlink {nvlink}",
            ideal.step_time_s,
            free.step_time_s
        );
        assert!(free.mfu >= ideal.mfu && ideal.mfu > fabric.mfu);
    }

    /// On the packet-engine-calibrated step: the ideal MFU is at least the fabric's, the MFU
    /// lost is >= 0 in total and per class, and the classes add up to the total.
    #[test]
    fn lost_mfu_is_non_negative_and_split_by_collective() {
        let (cfg, s) = job("tp = 8\npp = 2\n");
        let (design, topo, _) = crate::plan::run(&s).unwrap();
        let v = Variant {
            name: "roce".into(),
            profile: "roce-400g".into(),
            recovery: fabricsim_mech::Transport::GoBackN,
            loss_rate: 0.0,
            ber: 0.0,
            loss_interval: None,
            tuned: true,
            tune: Tune::default(),
            engine: crate::setup::engine_choice::EngineChoice::Packet,
            failed_uplinks: 0,
            phy: Default::default(),
        };
        let r = engine_step(&cfg, &design, &topo, &v, 1).unwrap();
        let l = lost(&r.step, &r.ideal);
        assert!(l.ideal_mfu >= r.step.mfu, "{l:?}");
        assert!(l.total > 0.0, "the fabric costs nothing: {l:?}");
        assert!(l.by_class.iter().all(|&x| x >= 0.0), "{l:?}");
        let sum: f64 = l.by_class.iter().sum();
        assert!((sum - l.total).abs() < 1e-12, "{l:?}");
        // DP (2 stages of 8-way TP on 32 GPUs: dp 2 across servers) and PP cross servers.
        assert!(l.by_class[0] > 0.0 && l.by_class[2] > 0.0, "{l:?}");
    }
}
