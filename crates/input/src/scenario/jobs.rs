//! `[[jobs]]`: several jobs sharing one cluster's fabric (`fabricsim tenants`). Each entry is
//! one job with its GPU count, traffic class and placement policy, and exactly one workload
//! sub-table saying what it runs:
//!
//! ```toml
//! [[jobs]]
//! name = "llm"               # label in reports (default "job0", "job1", ...)
//! gpus = 32                  # whole servers: a multiple of [cluster] gpus_per_node
//! placement = "packed"       # packed (fill leaves in order), spread (round-robin over
//!                            # leaves) or random (seeded, fragmented); default packed
//! class = 1                  # class label of its messages: an SL (0-15) or a priority (0-7)
//!                            # through [classes], else the engine class (default: the
//!                            # fabric's data class)
//! [jobs.train]               # a training job: [train]'s keys, resolved as [train] is
//! model = "llama3-8b"
//! tp = 8
//!
//! [[jobs]]
//! gpus = 16
//! [jobs.serve]               # a serving deployment: [serve]'s keys, on the job's GPUs
//! model = "llama3-8b"
//! rate = 20
//!
//! [[jobs]]
//! gpus = 16
//! [jobs.collective]          # a collective loop: one op, back to back
//! op = "all_reduce"
//! bytes = "64MB"
//! iterations = 4             # default 1
//! ```
//!
//! The jobs take disjoint servers, in the order written; the servers no job takes stay idle.
//!
//! Storage (`[storage]`, read by `workload::tenants::storage`): a training job's
//! `[jobs.storage]` loads `data_per_gpu` bytes per GPU per step from the storage servers and,
//! with `checkpoint_every`, writes its model state to them (the simulated step is a
//! checkpoint step):
//!
//! ```toml
//! [storage]
//! servers = 1                # the cluster's last servers serve storage (no job takes them)
//! nics = 8                   # NIC ports each serves on (default [cluster] nics_per_node)
//! fabric = "shared"          # on the jobs' fabric, or "separate" (its own network)
//! [[jobs]]
//! ...
//! [jobs.storage]
//! data_per_gpu = "8MB"
//! checkpoint_every = 100     # steps
//! ```

use serde::Deserialize;

use super::Scenario;
use super::serve::ServeSection;
use super::train::TrainSection;
use super::value::SizeValue;
use fabricsim_core::error::InputError;
use fabricsim_mech::class_map::MAX_LABELS;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobSection {
    pub name: Option<String>,
    /// Signed, so that `gpus = -8` gets a range error rather than a type error.
    pub gpus: Option<i64>,
    pub placement: Option<String>,
    pub class: Option<i64>,
    pub train: Option<TrainSection>,
    pub collective: Option<CollectiveSection>,
    pub serve: Option<ServeSection>,
    pub storage: Option<JobStorageSection>,
}

/// `[jobs.storage]`: a training job's traffic to and from the storage servers.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JobStorageSection {
    pub data_per_gpu: Option<SizeValue>,
    pub checkpoint_every: Option<i64>,
}

/// `[storage]`: the storage servers.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StorageSection {
    pub servers: Option<i64>,
    pub nics: Option<i64>,
    pub fabric: Option<String>,
}

/// A tier of hosts beside the jobs (the storage servers, the front-end hosts), checked against
/// nothing but itself (the driver checks it against the cluster).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostTier {
    pub servers: u32,
    /// Ports each serves on; `None`: every NIC of the server.
    pub nics: Option<u32>,
    /// On a network of its own: no message of it on the jobs' fabric.
    pub separate: bool,
}

/// A training job's storage traffic, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobStorage {
    /// Bytes each GPU loads per step.
    pub data_per_gpu: u64,
    /// Steps between checkpoints; `None`: no checkpoint.
    pub checkpoint_every: Option<u64>,
}

/// `[jobs.collective]`: `iterations` runs of one collective, each after the last.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CollectiveSection {
    /// nccl-tests' op name (`all_reduce`, `all_gather`, `alltoall`, ...).
    pub op: String,
    /// nccl-tests' `size`: one rank's buffer.
    pub bytes: SizeValue,
    pub iterations: Option<i64>,
    /// Algorithm (default the op's first, as `fabricsim collective`).
    pub algo: Option<String>,
    /// NCCL channels (default NCCL's for the servers' NICs).
    pub channels: Option<i64>,
}

/// Where a job's servers go among the leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlacementPolicy {
    /// Fill each leaf's free servers before the next leaf, leaves in order.
    Packed,
    /// One server per leaf in turn, round-robin over the leaves with free servers.
    Spread,
    /// Free servers drawn at random (seeded): the fragmented allocation a busy scheduler leaves.
    Random,
}

impl PlacementPolicy {
    pub const ALLOWED: &'static str = "packed, spread, random";

    pub fn name(self) -> &'static str {
        match self {
            PlacementPolicy::Packed => "packed",
            PlacementPolicy::Spread => "spread",
            PlacementPolicy::Random => "random",
        }
    }

    pub fn parse(s: &str) -> Option<PlacementPolicy> {
        [
            PlacementPolicy::Packed,
            PlacementPolicy::Spread,
            PlacementPolicy::Random,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

/// What a job runs.
#[derive(Clone, Debug, PartialEq)]
pub enum JobWork {
    /// A training step: `[train]`'s keys, resolved by the driver as `[train]` is.
    Train(Box<TrainSection>),
    /// A serving deployment: `[serve]`'s keys, resolved by the driver as `[serve]` is.
    Serve(Box<ServeSection>),
    /// A collective loop; `op` and `algo` are checked by the driver (which knows the ops).
    Collective {
        op: String,
        bytes: u64,
        iterations: u32,
        algo: Option<String>,
        channels: Option<u32>,
    },
}

impl JobWork {
    /// The sub-table's name (`train`, `collective`), as keys are written.
    pub fn kind(&self) -> &'static str {
        match self {
            JobWork::Train(_) => "train",
            JobWork::Serve(_) => "serve",
            JobWork::Collective { .. } => "collective",
        }
    }
}

/// One `[[jobs]]` entry, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Its position in the file (`jobs[index]` in error keys).
    pub index: usize,
    pub name: String,
    pub gpus: u64,
    pub placement: PlacementPolicy,
    pub class: Option<u8>,
    pub work: JobWork,
    pub storage: Option<JobStorage>,
}

impl Job {
    /// The dotted key of `field` of this job (`jobs[1].gpus`, `jobs[1].train.tp`), as
    /// `Source::locate_key` finds it.
    pub fn key(&self, field: &str) -> String {
        key(self.index, field)
    }
}

/// The dotted key of `field` in the `index`-th `[[jobs]]` entry.
pub fn key(index: usize, field: &str) -> String {
    format!("jobs[{index}].{field}")
}

/// Most iterations of a collective loop (each one is a full collective in the DAG).
pub const MAX_ITERATIONS: i64 = 10_000;

/// The scenario's `[storage]`, checked; `None` when it has none.
pub fn storage(s: &Scenario) -> Result<Option<HostTier>, InputError> {
    let Some(st) = &s.file.storage else {
        return Ok(None);
    };
    tier(s, "storage", st.servers, st.nics, st.fabric.as_deref()).map(Some)
}

/// A tier of hosts of section `table` (`storage`, `frontend`): its `servers`, `nics` and
/// `fabric` keys checked.
pub fn tier(
    s: &Scenario,
    table: &str,
    servers: Option<i64>,
    nics: Option<i64>,
    fabric: Option<&str>,
) -> Result<HostTier, InputError> {
    let k = |field: &str| format!("{table}.{field}");
    let positive = |k: &str, v: i64| {
        if v >= 1 && v <= u32::MAX as i64 {
            Ok(v as u32)
        } else {
            Err(s.error(k, v, "must be positive", "an integer of 1 or more"))
        }
    };
    let servers = match servers {
        Some(n) => positive(&k("servers"), n)?,
        None => {
            return Err(s.error(
                &k("servers"),
                "(missing)",
                format!("a {table} tier needs its servers"),
                "an integer of 1 or more",
            ));
        }
    };
    let nics = nics.map(|n| positive(&k("nics"), n)).transpose()?;
    let separate = match fabric {
        None | Some("shared") => false,
        Some("separate") => true,
        Some(f) => {
            return Err(s.error(
                &k("fabric"),
                format!("\"{f}\""),
                format!("unknown {table} fabric"),
                "shared (the jobs' fabric), separate (a network of its own)",
            ));
        }
    };
    Ok(HostTier {
        servers,
        nics,
        separate,
    })
}

/// The scenario's `[[jobs]]`, checked; empty when it has none.
pub fn checked(s: &Scenario) -> Result<Vec<Job>, InputError> {
    let mut jobs = Vec::with_capacity(s.file.jobs.len());
    for (i, j) in s.file.jobs.iter().enumerate() {
        let err = |field: &str, v: &dyn std::fmt::Display, problem: &str, allowed: &str| {
            s.error(&key(i, field), v, problem, allowed.to_string())
        };
        let gpus = match j.gpus {
            None => {
                return Err(err(
                    "gpus",
                    &"(missing)",
                    "every job needs its GPU count",
                    "a positive multiple of [cluster] gpus_per_node",
                ));
            }
            Some(g) if g <= 0 => {
                return Err(err(
                    "gpus",
                    &g,
                    "must be positive",
                    "a positive multiple of [cluster] gpus_per_node",
                ));
            }
            Some(g) => g as u64,
        };
        let placement = match j.placement.as_deref() {
            None => PlacementPolicy::Packed,
            Some(p) => PlacementPolicy::parse(p).ok_or_else(|| {
                err(
                    "placement",
                    &format!("\"{p}\""),
                    "unknown placement policy",
                    PlacementPolicy::ALLOWED,
                )
            })?,
        };
        let class = match j.class {
            None => None,
            Some(c) if (0..MAX_LABELS as i64).contains(&c) => Some(c as u8),
            Some(c) => {
                return Err(err(
                    "class",
                    &c,
                    "no such class label",
                    &format!(
                        "0 to {} (InfiniBand SLs; 802.1Q priorities 0 to 7; the fabric's own \
                         classes without a [classes] table)",
                        MAX_LABELS - 1
                    ),
                ));
            }
        };
        let work = match (&j.train, &j.collective, &j.serve) {
            (Some(t), None, None) => JobWork::Train(Box::new(t.clone())),
            (None, None, Some(d)) => JobWork::Serve(Box::new(d.clone())),
            (None, Some(c), None) => {
                let iterations = c.iterations.unwrap_or(1);
                if !(1..=MAX_ITERATIONS).contains(&iterations) {
                    return Err(err(
                        "collective.iterations",
                        &iterations,
                        "out of range",
                        &format!("1 to {MAX_ITERATIONS}"),
                    ));
                }
                let bytes = c.bytes.bytes(&s.source, &key(i, "collective.bytes"))?;
                if bytes == 0 {
                    return Err(err(
                        "collective.bytes",
                        &0,
                        "a collective of 0 bytes moves nothing",
                        "a size above 0, such as 64MB",
                    ));
                }
                let channels = match c.channels {
                    None => None,
                    Some(n) if (1..=super::nccl::MAXCHANNELS as i64).contains(&n) => Some(n as u32),
                    Some(n) => {
                        return Err(err(
                            "collective.channels",
                            &n,
                            "out of range",
                            &format!("1 to {} (NCCL's MAXCHANNELS)", super::nccl::MAXCHANNELS),
                        ));
                    }
                };
                JobWork::Collective {
                    op: c.op.clone(),
                    bytes,
                    iterations: iterations as u32,
                    algo: c.algo.clone(),
                    channels,
                }
            }
            (t, c, d) => {
                let problem = if t.is_some() as u8 + c.is_some() as u8 + d.is_some() as u8 > 1 {
                    "a job runs one workload, and this one has more than one of [jobs.train], [jobs.collective] and [jobs.serve]"
                } else {
                    "the job says nothing about what it runs"
                };
                return Err(err(
                    "gpus",
                    &gpus,
                    problem,
                    "exactly one of [jobs.train] (a training job), [jobs.serve] (a serving deployment) or [jobs.collective] (a collective loop) under each [[jobs]]",
                ));
            }
        };
        let storage = match &j.storage {
            None => None,
            Some(_) if !matches!(work, JobWork::Train(_)) => {
                return Err(err(
                    "storage",
                    &"[jobs.storage]",
                    "only a training job loads data and writes checkpoints",
                    "[jobs.storage] under a job with [jobs.train]",
                ));
            }
            Some(_) if s.file.storage.is_none() => {
                return Err(err(
                    "storage",
                    &"[jobs.storage]",
                    "the scenario has no storage servers",
                    "a [storage] section (servers, nics, fabric)",
                ));
            }
            Some(st) => {
                let data_per_gpu = match &st.data_per_gpu {
                    Some(v) => v.bytes(&s.source, &key(i, "storage.data_per_gpu"))?,
                    None => 0,
                };
                let checkpoint_every = match st.checkpoint_every {
                    None => None,
                    Some(n) if n >= 1 => Some(n as u64),
                    Some(n) => {
                        return Err(err(
                            "storage.checkpoint_every",
                            &n,
                            "must be positive",
                            "steps between checkpoints, 1 or more (leave it out for none)",
                        ));
                    }
                };
                Some(JobStorage {
                    data_per_gpu,
                    checkpoint_every,
                })
            }
        };
        jobs.push(Job {
            index: i,
            name: j.name.clone().unwrap_or_else(|| format!("job{i}")),
            gpus,
            placement,
            class,
            work,
            storage,
        });
    }
    for (a, ja) in jobs.iter().enumerate() {
        if let Some(jb) = jobs[..a].iter().find(|jb| jb.name == ja.name) {
            return Err(s.error(
                &ja.key("name"),
                format!("\"{}\"", ja.name),
                format!("jobs[{}] has the same name", jb.index),
                "a name no other job has",
            ));
        }
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(text: &str) -> Result<Vec<Job>, InputError> {
        checked(&Scenario::parse("t.toml", text)?)
    }

    const TWO: &str = "[[jobs]]\nname = \"a\"\ngpus = 16\nclass = 2\n[jobs.train]\ntp = 8\n\n\
                       [[jobs]]\ngpus = 8\nplacement = \"spread\"\n[jobs.collective]\n\
                       op = \"all_reduce\"\nbytes = \"4MB\"\niterations = 3\n";

    #[test]
    fn two_jobs_read_with_their_defaults() {
        let j = jobs(TWO).unwrap();
        assert_eq!(j.len(), 2);
        assert_eq!(
            (j[0].name.as_str(), j[0].gpus, j[0].class),
            ("a", 16, Some(2))
        );
        assert_eq!(j[0].placement, PlacementPolicy::Packed);
        assert!(matches!(&j[0].work, JobWork::Train(t) if t.tp == Some(8)));
        assert_eq!(j[1].name, "job1");
        assert_eq!(j[1].placement, PlacementPolicy::Spread);
        assert_eq!(
            j[1].work,
            JobWork::Collective {
                op: "all_reduce".into(),
                bytes: 4_000_000,
                iterations: 3,
                algo: None,
                channels: None
            }
        );
    }

    #[test]
    fn errors_name_the_entry_its_line_and_the_allowed_values() {
        let bad = TWO.replace("iterations = 3", "iterations = 0");
        let e = jobs(&bad).unwrap_err();
        assert_eq!(e.key, "jobs[1].collective.iterations");
        assert_eq!(e.line, Some(14), "{e}");
        let e = jobs(&TWO.replace("\"spread\"", "\"scattered\"")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("jobs[1].placement", Some(10)));
        assert!(e.allowed.contains("packed, spread, random"), "{e}");
        let e = jobs(&TWO.replace("class = 2", "class = 16")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("jobs[0].class", Some(4)));
        let e = jobs(&TWO.replace("gpus = 8", "gpus = -8")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("jobs[1].gpus", Some(9)));
    }

    #[test]
    fn a_job_runs_exactly_one_workload_under_a_unique_name() {
        let e = jobs("[[jobs]]\ngpus = 8\n").unwrap_err();
        assert!(e.problem.contains("says nothing"), "{e}");
        let both =
            "[[jobs]]\ngpus = 8\n[jobs.train]\ntp = 1\n[jobs.collective]\nop = \"x\"\nbytes = 1\n";
        assert!(jobs(both).unwrap_err().problem.contains("more than one"));
        let serve = jobs("[[jobs]]\ngpus = 8\n[jobs.serve]\nrate = 3\n").unwrap();
        assert_eq!(serve[0].work.kind(), "serve");
        let twins = TWO.replace("gpus = 8\n", "name = \"a\"\ngpus = 8\n");
        let e = jobs(&twins).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("jobs[1].name", Some(9)));
        let unknown = jobs("[[jobs]]\ngpus = 8\ncolour = 1\n").unwrap_err();
        assert!(unknown.problem.contains("colour"), "{unknown}");
    }
}
