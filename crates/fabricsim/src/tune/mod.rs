//! `fabricsim tune`: a search of a fabric profile's knobs (`[tune]`,
//! `fabricsim_input::profile_knobs`) for the scenario's `[traffic]` run, `[tune.collective]`
//! (`collective`), `[train]` step (`train`) or `[serve]` deployment (`serve`), each candidate a profile file that extends the
//! scenario's (`candidate`), measured over seeds (`eval`), optionally screened on the flow
//! engine (`screen`), by successive halving (`search`), reported with intervals against the
//! profile's default (`report`).

pub mod candidate;
pub mod collective;
pub mod eval;
pub mod report;
pub mod screen;
pub mod search;
pub mod serve;
pub mod train;

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::setup::engine_choice::EngineChoice;
use candidate::{Base, Candidate};
use eval::Sample;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::tune::{Objective, TuneSpec};
use search::Job;

/// A search: the scenario, its `[tune]`, the profile it starts from and the seeds.
#[derive(Clone, Debug)]
pub struct Tuning {
    pub sc: Scenario,
    /// Where the scenario's files are found.
    pub dir: PathBuf,
    pub spec: TuneSpec,
    pub base: Base,
    /// The seeds, the first the `--seed` (`workload::seeds::derive`).
    pub seeds: Vec<u64>,
    pub seed: u64,
    /// Each knob's value in the base profile: written there, or what the profile's named DCQCN
    /// set amounts to (`None`: neither).
    pub defaults: Vec<Option<f64>>,
}

impl Tuning {
    pub fn new(sc: Scenario, dir: &Path, seed: u64) -> Result<Tuning, Error> {
        // The candidates are fabric profiles: the network must come from one.
        let sim = sc.file.sim.clone().unwrap_or_default();
        let over = [
            ("sim.topology_file", sim.topology_file.is_some()),
            ("sim.congestion", sim.congestion.is_some()),
        ];
        if let Some((key, _)) = over.iter().find(|(_, set)| *set) {
            return Err(Error::Input(sc.error(
                key,
                "(set)",
                "replaces the fabric profile that tune searches",
                "the network from [cluster], [fabric] profile and [topology], without [sim.congestion]",
            )));
        }
        let base = Base::of(&sc)?;
        let spec = fabricsim_input::scenario::tune::resolve(&sc, base.family)?;
        let design = sc.design()?;
        let set = fabricsim_input::profile_fc::from_profile(&design.profile, true)
            .ok()
            .and_then(|p| p.cc.algo.dcqcn().copied())
            .map(|d| fabricsim_input::profile_dcqcn::DcqcnKeys::of(&d));
        let mut set_doc = toml::Table::new();
        if let Some(v) = set.and_then(|k| toml::Value::try_from(k).ok()) {
            let mut c = toml::Table::new();
            c.insert("dcqcn_params".into(), v);
            set_doc.insert("congestion".into(), toml::Value::Table(c));
        }
        let defaults = spec
            .knobs
            .iter()
            .map(|(k, _)| k.get(&base.doc).or_else(|| k.get(&set_doc)))
            .collect();
        Ok(Tuning {
            defaults,
            seeds: crate::workload::seeds::derive(seed, spec.seeds),
            seed,
            sc,
            dir: dir.to_path_buf(),
            spec,
            base,
        })
    }

    /// Refuses, before any round, a run too large for the memory (`setup::memory`, as `sim`
    /// refuses it): every candidate runs the same DAG, so the scenario's own run stands for all.
    pub fn admit(&self) -> Result<(), Error> {
        if self.spec.objective == Objective::StepTime {
            // The `[train]` job checked as `train` checks it; its runs are `train --calibrate`'s,
            // each collective bounded there (`train_engine::MAX_PACKETS_PER_RUN`).
            crate::workload::train::run::run(&self.sc)?;
            return Ok(());
        }
        if self.spec.objective == Objective::TtftP99 {
            // The `[serve]` deployment checked as `serve` checks it.
            crate::workload::serve::ServeJob::resolve(&self.sc, &self.sc.design()?)?;
            return Ok(());
        }
        if let Some(c) = &self.spec.collective {
            let (cluster, spec) = collective::prepare(&self.sc, None, c)?;
            let comm = crate::workload::collective::Comm::world(&cluster.place);
            crate::workload::collective::count::admit(
                &self.sc,
                cluster.engine,
                &spec,
                crate::workload::collective::count::Shape::of(&comm),
                &[c.bytes],
            )?;
            return Ok(());
        }
        let mut setup =
            crate::setup::build::build_with(&self.sc, &self.dir, Some(self.seed), None)?;
        crate::workload::chakra::complete(&self.sc, &mut setup)?;
        let kind = crate::setup::engine_choice::EngineChoice::of(&self.sc)?.resolve(
            crate::workload::run_engine::fabric_packets(&setup.params, &setup.dag),
        );
        crate::setup::memory::check(&self.sc, kind, crate::setup::memory::Run::Sim, &setup.dag)?;
        Ok(())
    }

    /// The first round's candidates.
    pub fn first_round(&self) -> Vec<Candidate> {
        candidate::first_round(&self.spec, self.seed)
    }

    /// Candidate `id`'s profile file (`header`: its leading comments).
    pub fn profile_text(&self, id: u64, header: &[String]) -> String {
        let c = candidate::decode(&self.spec, id);
        candidate::profile_text(&self.base, &self.spec, &c, header)
    }

    /// One measurement (pure: the same job gives the same sample on any machine).
    pub fn measure(&self, job: &Job) -> Sample {
        let seed = self.seeds[job.seed_index as usize];
        let engine = job.screen.then_some(EngineChoice::Flow);
        let run = |p: Option<&Profile>| eval::run(&self.sc, &self.dir, p, seed, &self.spec, engine);
        match job.candidate {
            None => run(None),
            Some(id) => {
                let c = candidate::decode(&self.spec, id);
                let text = candidate::profile_text(&self.base, &self.spec, &c, &[]);
                match candidate::profile(&text, &c) {
                    Ok(p) => run(Some(&p)),
                    Err(e) => Sample::failed(e.to_string()),
                }
            }
        }
    }

    /// Runs the search, every measurement through `eval`.
    pub fn search(&self, eval: &mut search::Evaluate) -> search::Found {
        search::run(&self.spec, self.first_round(), eval)
    }
}
