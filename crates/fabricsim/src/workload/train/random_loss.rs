//! `[train] loss_rate` and `recovery`: the random loss a `train` job's fabric sees, checked at
//! the edge; the step costs it in expectation at its real sizes (`loss_cost`), as `compare`
//! costs each compared fabric's `loss_rate`.

use super::loss_cost::LossSetup;
use crate::setup::params_from_design::params_from_design;
use fabricsim_core::error::InputError;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::BitRate;
use fabricsim_input::scenario::train::TrainSection;
use fabricsim_input::scenario::{Design, Scenario};
use fabricsim_mech::Transport;

/// A job's random loss per link and the recovery from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomLoss {
    pub rate: f64,
    /// `None`: the profile's recovery.
    pub recovery: Option<Transport>,
}

impl RandomLoss {
    /// The `[train]` loss of `s`: `None` without `loss_rate` (or at 0); `recovery` without a
    /// loss is refused, as nothing would read it.
    pub fn of(s: &Scenario) -> Result<Option<RandomLoss>, InputError> {
        let Some(t) = &s.file.train else {
            return Ok(None);
        };
        let recovery = match &t.recovery {
            None => None,
            Some(r) => Some(Transport::parse(r).ok_or_else(|| {
                s.error(
                    "train.recovery",
                    format!("\"{r}\""),
                    "unknown recovery",
                    Transport::allowed(),
                )
            })?),
        };
        match t.loss_rate {
            Some(p) if !(0.0..0.5).contains(&p) => Err(s.error(
                "train.loss_rate",
                p,
                "a loss probability per link",
                "0 <= loss_rate < 0.5",
            )),
            Some(p) if p > 0.0 => Ok(Some(RandomLoss { rate: p, recovery })),
            _ if recovery.is_some() => Err(s.error(
                "train.recovery",
                format!("\"{}\"", t.recovery.as_deref().unwrap_or_default()),
                "a recovery without random loss to recover from",
                "with train.loss_rate > 0, or left out",
            )),
            _ => Ok(None),
        }
    }

    /// What the expectation needs on `design`'s fabric (`topo`): the profile's parameters
    /// (tuned, with `[sim] llr`) with this loss and recovery.
    pub fn setup(&self, design: &Design, topo: &Topology) -> Result<LossSetup, InputError> {
        let mut p = params_from_design(design, true)?;
        p.loss_rate = self.rate;
        if let Some(r) = self.recovery {
            p.transport = r;
        }
        let rate = BitRate::gbps(design.profile.ports.rate_gbps as u64);
        Ok(LossSetup::of(&p, topo, rate).expect("a loss rate above 0 is a loss"))
    }
}

/// Refuses `loss_rate` and `recovery` in the training job `t` at `section` (`train`,
/// `jobs[1].train`) of a command that does not read them; `instead` says what does.
pub fn refuse(
    s: &Scenario,
    section: &str,
    t: &TrainSection,
    instead: &str,
) -> Result<(), InputError> {
    let given = [
        ("loss_rate", t.loss_rate.map(|p| p.to_string())),
        ("recovery", t.recovery.as_ref().map(|r| format!("\"{r}\""))),
    ];
    match given.into_iter().find_map(|(k, v)| Some((k, v?))) {
        Some((k, v)) => Err(s.error(
            &format!("{section}.{k}"),
            v,
            "read by fabricsim train only",
            instead,
        )),
        None => Ok(()),
    }
}
