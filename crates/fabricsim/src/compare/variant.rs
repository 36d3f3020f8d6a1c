//! A validated fabric of the comparison: the `[compare] fabrics` entry checked against the
//! profile list and ranges, with the transport parameters in engine terms.

use fabricsim_core::error::InputError;
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::compare::{CompareSection, FabricEntry};
use fabricsim_mech::Transport;

/// Congestion-control parameters set over the profile's (by `fabricsim sweep`); `None` keeps
/// the profile's value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tune {
    /// ECN marking threshold Kmin (RED) or K (step), bytes.
    pub ecn_kmin_bytes: Option<u64>,
    /// ECN marking threshold Kmax (RED), bytes.
    pub ecn_kmax_bytes: Option<u64>,
    /// DCQCN additive increase Rai.
    pub dcqcn_rai: Option<fabricsim_core::units::BitRate>,
    /// DCQCN rate-increase timer (ConnectX RPG_TIME_RESET).
    pub dcqcn_rate_increase_timer: Option<fabricsim_core::units::Time>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub name: String,
    pub profile: String,
    pub recovery: Transport,
    pub loss_rate: f64,
    /// Pre-FEC BER on every link, its RS(544,514) frame loss added to `loss_rate`
    /// ([`super::engine::params`]).
    pub ber: f64,
    /// The loss-rate interval the verdict is tested under (`loss_rate_interval`); `None`:
    /// `loss_rate` x0.1 and x10 ([`super::model::loss_ends`]).
    pub loss_interval: Option<[f64; 2]>,
    /// The profile's tuned parameters, or its untuned variant.
    pub tuned: bool,
    pub tune: Tune,
    /// Which engine runs its DAGs (the scenario's `engine` key).
    pub engine: crate::setup::engine_choice::EngineChoice,
    /// Leaves with one up-link failed before the step, the fabric converged around it
    /// (`sweep --param failed_uplinks=N`; the whole step DAG only, `whole_step::run`).
    pub failed_uplinks: u32,
    /// Lanes and rates apart from the profile's (`sweep`'s `lane_ber` and `rate_gbps`).
    pub phy: LinkPhy,
}

/// A variant's links away from their profile: a pre-FEC BER per lane on every link (one
/// codeword's symbols spread round-robin over the lanes, IEEE 802.3 Clause 119.2.4.5:
/// `mech::fec::RsFec::codeword_ln_ok_lanes`), and GPU 0's NIC link trained down to a lower
/// rate (a degraded link, IBA 5.6.3 link width down-grade), whose rank paces the synchronous step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkPhy {
    /// Empty: `ber` on every lane.
    pub lane_ber: Vec<f64>,
    pub degraded_gbps: Option<u32>,
}

impl Variant {
    /// `profile` tuned, lossless, with the profile's own loss recovery and congestion control:
    /// the fabric a `fabricsim sweep` moves its axes from.
    pub fn swept(profile: &str, engine: crate::setup::engine_choice::EngineChoice) -> Variant {
        Variant {
            name: profile.into(),
            profile: profile.into(),
            recovery: profile_recovery(profile),
            loss_rate: 0.0,
            ber: 0.0,
            loss_interval: None,
            tuned: true,
            tune: Tune::default(),
            engine,
            failed_uplinks: 0,
            phy: Default::default(),
        }
    }

    /// One line saying what the variant's parameters mean.
    pub fn describe(&self) -> String {
        if self.ber > 0.0 {
            return format!(
                "{} {} with pre-FEC BER {} on every link (RS(544,514) frame loss), random \
                 per-packet loss {} and {} recovery",
                self.profile,
                if self.tuned { "tuned" } else { "untuned" },
                self.ber,
                self.loss_rate,
                self.recovery.name()
            );
        }
        if self.loss_rate > 0.0 {
            format!(
                "{} {} with random per-packet loss {} on every link and {} recovery",
                self.profile,
                if self.tuned { "tuned" } else { "untuned" },
                self.loss_rate,
                self.recovery.name()
            )
        } else {
            format!(
                "{} {}, no random loss, {} recovery",
                self.profile,
                if self.tuned { "tuned" } else { "untuned" },
                self.recovery.name()
            )
        }
    }
}

/// The largest pre-FEC BER a fabric entry or sweep point takes: past it, RS(544,514) loses
/// nearly every frame (its limit is 2.4e-4, IEEE 802.3 Clause 91).
pub const MAX_BER: f64 = 5e-3;

fn entry(
    s: &Scenario,
    i: usize,
    e: &FabricEntry,
    engine: crate::setup::engine_choice::EngineChoice,
) -> Result<Variant, InputError> {
    let key = |k: &str| format!("compare.fabrics[{i}].{k}");
    // Error positions: the `fabrics` key itself (entries are inline tables).
    let err = |k: &str, v: &dyn std::fmt::Display, problem: &str, allowed: String| {
        let mut e = s.error("compare.fabrics", v, problem, allowed);
        e.key = key(k);
        e
    };
    if Profile::builtin(e.profile.trim()).is_err() {
        return Err(err(
            "profile",
            &e.profile,
            "is not a fabric profile",
            Profile::ids().join(", "),
        ));
    }
    let recovery = match &e.transport {
        // The profile's own transport: go-back-N, or selective repeat where its routing reorders
        // packets (adaptive routing needs the out-of-order-tolerant receiver).
        None => profile_recovery(e.profile.trim()),
        Some(t) => Transport::parse(t).ok_or_else(|| {
            err(
                "transport",
                t,
                "is not a loss recovery",
                Transport::allowed(),
            )
        })?,
    };
    let loss_rate = e.loss_rate.unwrap_or(0.0);
    if !(0.0..0.5).contains(&loss_rate) {
        return Err(err(
            "loss_rate",
            &loss_rate,
            "is out of range",
            "a probability from 0 up to (not including) 0.5".into(),
        ));
    }
    let ber = e.ber.unwrap_or(0.0);
    if !(0.0..=MAX_BER).contains(&ber) {
        return Err(err(
            "ber",
            &ber,
            "is out of range",
            format!("a pre-FEC bit error ratio from 0 to {MAX_BER}"),
        ));
    }
    if let Some([lo, hi]) = e.loss_rate_interval
        && !(0.0 <= lo && lo <= loss_rate && loss_rate <= hi && hi < 0.5)
    {
        return Err(err(
            "loss_rate_interval",
            &format!("[{lo}, {hi}]"),
            "is not an interval around the loss rate",
            format!("[low, high] with 0 <= low <= loss_rate ({loss_rate}) <= high < 0.5"),
        ));
    }
    Ok(Variant {
        name: e
            .name
            .clone()
            .unwrap_or_else(|| e.profile.trim().to_string()),
        profile: e.profile.trim().to_string(),
        recovery,
        loss_rate,
        ber,
        loss_interval: e.loss_rate_interval,
        tuned: e.tuned.unwrap_or(true),
        tune: Tune::default(),
        engine,
        failed_uplinks: 0,
        phy: Default::default(),
    })
}

/// The loss recovery a shipped profile runs with (`profile_fc::from_profile`, tuned).
pub fn profile_recovery(id: &str) -> Transport {
    Profile::builtin(id)
        .ok()
        .and_then(|p| fabricsim_input::profile_fc::from_profile(&p, true).ok())
        .map_or(Transport::GoBackN, |p| p.transport)
}

/// The validated fabrics of `sec`; names must be unique (they key every table).
pub fn resolve(s: &Scenario, sec: &CompareSection) -> Result<Vec<Variant>, InputError> {
    let engine = crate::setup::engine_choice::EngineChoice::of(s)?;
    let builtin = super::model::default_scenario();
    let (s, fabrics) = match &sec.fabrics {
        Some(f) => (s, f),
        None => {
            let f = builtin
                .file
                .compare
                .as_ref()
                .and_then(|c| c.fabrics.as_ref());
            (
                &builtin,
                f.expect("the built-in comparison lists its fabrics"),
            )
        }
    };
    if fabrics.is_empty() {
        return Err(s.error(
            "compare.fabrics",
            "[]",
            "lists no fabric",
            "one or more { profile = \"...\" } entries",
        ));
    }
    let mut out: Vec<Variant> = Vec::new();
    for (i, e) in fabrics.iter().enumerate() {
        let v = entry(s, i, e, engine)?;
        if out.iter().any(|o| o.name == v.name) {
            return Err(s.error(
                "compare.fabrics",
                &v.name,
                "names two fabrics",
                "a distinct name = \"...\" per entry",
            ));
        }
        out.push(v);
    }
    Ok(out)
}
