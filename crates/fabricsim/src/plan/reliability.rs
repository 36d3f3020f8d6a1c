//! What fails in a planned cluster and what it costs a training job: each counted part's
//! failures per day from its MTBF (`data/reliability/failure-rates.toml`), which of them stop
//! the job (every GPU, server, NIC and switch failure; a failed cable or module on a NIC's
//! link; one inside the fabric only when the fabric's local repair is slower than its own
//! transport gives up: the profile's timeout and retries, `SimParams::gives_up`), the job's mean time
//! between interruptions, the checkpoint interval that maximises its effective training time
//! ratio and that ratio (`ettr`). `[reliability]` scales every MTBF and may set the interval.

use fabricsim_core::error::InputError;
use fabricsim_core::topology::{Medium, Topology};
use fabricsim_core::units::Time;
use fabricsim_input::catalog::{CableShape, Catalog};
use fabricsim_input::failure_rates::{self, DeviceKind, FailureRates, JobCosts};
use fabricsim_input::scenario::Design;

use super::bom::{Bom, Category};
use super::ettr::{self, Checkpointing};
use super::media::{Media, MediumDef};

/// One kind of counted part.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    pub name: String,
    /// Whether its failure belongs to the network (NIC, switch, cable, module).
    pub network: bool,
    pub count: u64,
    pub mtbf_hours: f64,
    pub failures_per_day: f64,
    /// Of those, the failures that stop the job.
    pub interruptions_per_day: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Reliability {
    pub parts: Vec<Part>,
    pub interruptions_per_day: f64,
    /// The share of interruptions the network causes.
    pub network_share: f64,
    /// Link down/up events without a replacement, per day (they stop no job: the transport
    /// retries through a flap shorter than its timeout).
    pub flaps_per_day: f64,
    /// Whether a failed link inside the fabric is routed around before the transport gives up.
    pub fabric_links_rerouted: bool,
    /// How long the fabric's transport resends into a dead path before its QP gives up
    /// (`SimParams::gives_up`), s.
    pub transport_gives_up_s: f64,
    /// The profile's local repair delay (`[reroute] local_repair_us`), s; `None`: none.
    pub local_repair_s: Option<f64>,
    pub job: JobCosts,
    /// Mean time between the job's interruptions, hours.
    pub job_mtbf_hours: f64,
    /// The checkpoint interval in use (`[reliability] checkpoint_interval_s`, else Daly's
    /// optimum) and the ETTR at it.
    pub checkpoint: Checkpointing,
    /// Daly's optimum interval, s.
    pub optimum_interval_s: f64,
    pub ettr: f64,
    /// The job's checkpoint when its model is known (`with_checkpoint`); `None`: the table's
    /// write time.
    pub checkpoint_write: Option<CheckpointWrite>,
}

/// The reliability of the plan `(t, media, bom)` of design `d`.
pub fn of(
    d: &Design,
    t: &Topology,
    c: &Catalog,
    media: &Media,
    bom: &Bom,
) -> Result<Reliability, InputError> {
    of_with(&failure_rates::table()?, d, t, c, media, bom)
}

/// As [`of`] with the failure rates `r`.
pub fn of_with(
    r: &FailureRates,
    d: &Design,
    t: &Topology,
    c: &Catalog,
    media: &Media,
    bom: &Bom,
) -> Result<Reliability, InputError> {
    // The fabric's own transport patience (its profile's engine parameters, as every engine
    // run takes them) against its own local repair.
    let gives_up = fabricsim_input::profile_fc::sim_params(&d.profile, true)?.gives_up();
    let local_repair = d
        .profile
        .reroute
        .as_ref()
        .map(|x| Time::from_us(x.local_repair_us));
    let fabric_links_rerouted = local_repair.is_some_and(|x| x < gives_up);
    let scale = d.reliability.mtbf_scale;
    let per_day = |count: u64, mtbf: f64| count as f64 * 24.0 / mtbf;
    let mut parts = Vec::new();
    let device = |name: &str, network, count: u64, kind| {
        let mtbf = r.device(kind) * scale;
        let f = per_day(count, mtbf);
        Part {
            name: name.into(),
            network,
            count,
            mtbf_hours: mtbf,
            failures_per_day: f,
            interruptions_per_day: f,
        }
    };
    parts.push(device("GPU", false, d.spec.gpus as u64, DeviceKind::Gpu));
    parts.push(device(
        "server",
        false,
        t.servers as u64,
        DeviceKind::Server,
    ));
    parts.push(device(
        "NIC",
        true,
        bom.total(Category::Nic).0,
        DeviceKind::Nic,
    ));
    parts.push(device(
        "switch",
        true,
        bom.total(Category::Switch).0,
        DeviceKind::Switch,
    ));
    // Each catalog item's share of the links that stop the job when it fails: a cable or
    // module serving k links is 1/k of each (twin and split cables 2, modules their ports at
    // the rate, as `bom::count` counts them).
    let gbps = t
        .links
        .first()
        .map(|l| (l.rate.bps() / 1_000_000_000) as u32)
        .unwrap_or(0);
    let mut share: Vec<(&str, f64, f64)> = Vec::new();
    let mut linked = 0u64;
    for l in &t.links {
        let Medium::Catalog(def) = l.medium else {
            continue;
        };
        linked += 1;
        let stops = l.tier == 1 || !fabric_links_rerouted;
        match &media.defs[def as usize] {
            MediumDef::Cable { cable, shape, .. } => {
                let k = if *shape == CableShape::Straight {
                    1.0
                } else {
                    0.5
                };
                add(&mut share, &c.cables[*cable].id, k, stops);
            }
            MediumDef::Optics { lower, upper, .. } => {
                for m in [*lower, *upper] {
                    let x = &c.transceivers[m];
                    add(
                        &mut share,
                        &x.id,
                        1.0 / x.ports_at(gbps).unwrap_or(1) as f64,
                        stops,
                    );
                }
            }
        }
    }
    for line in bom
        .lines
        .iter()
        .filter(|l| matches!(l.category, Category::Transceiver | Category::Cable))
    {
        let Some(mtbf) = line
            .class
            .and_then(|class| r.medium(class))
            .map(|m| m * scale)
        else {
            continue;
        };
        let f = per_day(line.count, mtbf);
        let stops = share
            .iter()
            .find(|x| x.0 == line.id)
            .map_or(0.0, |x| x.2 / x.1);
        parts.push(Part {
            name: line.id.clone(),
            network: true,
            count: line.count,
            mtbf_hours: mtbf,
            failures_per_day: f,
            interruptions_per_day: f * stops,
        });
    }
    let interruptions_per_day: f64 = parts.iter().map(|x| x.interruptions_per_day).sum();
    let network: f64 = parts
        .iter()
        .filter(|x| x.network)
        .map(|x| x.interruptions_per_day)
        .sum();
    let job_mtbf_hours = 24.0 / interruptions_per_day;
    let mtbf_s = job_mtbf_hours * 3600.0;
    let (checkpoint, optimum_interval_s) =
        checkpointing(d, r.job.checkpoint_s, r.job.recovery_s(), mtbf_s);
    Ok(Reliability {
        parts,
        interruptions_per_day,
        network_share: network / interruptions_per_day,
        flaps_per_day: linked as f64 * r.flaps.per_link_day,
        fabric_links_rerouted,
        transport_gives_up_s: gives_up.as_secs_f64(),
        local_repair_s: local_repair.map(Time::as_secs_f64),
        job: r.job.clone(),
        job_mtbf_hours,
        ettr: checkpoint.ettr(mtbf_s),
        checkpoint,
        optimum_interval_s,
        checkpoint_write: None,
    })
}

/// A checkpoint of a known model: its state's bytes written at the storage bandwidth, the
/// whole write stalling the job (a synchronous save; an asynchronous one stalls only for its
/// device-to-host copy, so this is the stall's upper bound).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckpointWrite {
    pub bytes: f64,
    pub bytes_per_s: f64,
    /// The bandwidth is the scenario's `[storage]` ports' (else the table's per-GPU figure).
    pub storage_tier: bool,
}

impl CheckpointWrite {
    pub fn write_s(&self) -> f64 {
        self.bytes / self.bytes_per_s
    }
}

impl Reliability {
    /// The same plan with the job's checkpoint `w` in place of the table's write time: Daly's
    /// interval and the ETTR at its write time.
    pub fn with_checkpoint(mut self, d: &Design, w: CheckpointWrite) -> Reliability {
        let mtbf_s = self.job_mtbf_hours * 3600.0;
        let (checkpoint, optimum) =
            checkpointing(d, w.write_s(), self.checkpoint.recovery_s, mtbf_s);
        self.ettr = checkpoint.ettr(mtbf_s);
        self.checkpoint = checkpoint;
        self.optimum_interval_s = optimum;
        self.checkpoint_write = Some(w);
        self
    }
}

/// Checkpointing with writes of `write_s` at `d`'s `[reliability] checkpoint_interval_s`, else
/// at Daly's optimum for `mtbf_s` (returned too).
fn checkpointing(d: &Design, write_s: f64, recovery_s: f64, mtbf_s: f64) -> (Checkpointing, f64) {
    let optimum = ettr::daly_interval_s(write_s, mtbf_s);
    let c = Checkpointing {
        interval_s: d.reliability.checkpoint_interval_s.unwrap_or(optimum),
        write_s,
        recovery_s,
    };
    (c, optimum)
}

/// Adds `k` of a unit of item `id` to its links, and to those that stop the job if `stops`.
fn add<'a>(share: &mut Vec<(&'a str, f64, f64)>, id: &'a str, k: f64, stops: bool) {
    let i = share.iter().position(|x| x.0 == id).unwrap_or_else(|| {
        share.push((id, 0.0, 0.0));
        share.len() - 1
    });
    share[i].1 += k;
    if stops {
        share[i].2 += k;
    }
}

#[cfg(test)]
mod tests;
