//! A search's work directory (`tune --work-dir DIR`): `tune.json` (which search it is: the
//! scenario's digest, flags and seed; a directory of another search is refused), `samples/`
//! (one file per finished measurement, written atomically: a re-run, or a re-submitted Slurm
//! round, skips them), `jobs/` (each Slurm round's measurements), `logs/` (the array tasks').

use std::path::{Path, PathBuf};

use fabricsim::InputError;
use fabricsim::tune::eval::Sample;
use fabricsim::tune::search::Job;

use crate::outcome::{Failure, Outcome};
use crate::outpath;
use crate::output;

pub struct TuneDir {
    pub root: PathBuf,
}

impl TuneDir {
    pub fn new(root: &Path) -> TuneDir {
        TuneDir {
            root: root.to_path_buf(),
        }
    }

    fn sample_path(&self, j: &Job) -> PathBuf {
        let c = j
            .candidate
            .map_or("default".to_string(), |c| format!("{c:08}"));
        self.root.join("samples").join(format!(
            "{c}-s{:02}{}.json",
            j.seed_index,
            if j.screen { "-flow" } else { "" }
        ))
    }

    pub fn jobs_path(&self, round: usize) -> PathBuf {
        self.root
            .join("jobs")
            .join(format!("round-{round:02}.json"))
    }

    fn bad(&self, why: String) -> InputError {
        InputError::flag(
            "--work-dir",
            self.root.display(),
            why,
            "the work directory of this same search (same scenario file, flags and --seed), or a new one",
        )
    }

    /// Creates the directory; one that holds a search must hold this one.
    pub fn open(&self, head: &serde_json::Value) -> Outcome {
        for d in ["samples", "jobs", "logs"] {
            let d = self.root.join(d);
            std::fs::create_dir_all(&d)
                .map_err(|e| self.bad(format!("cannot create {}: {e}", d.display())))?;
        }
        let path = self.root.join("tune.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let v: serde_json::Value = serde_json::from_str(&text)
                    .map_err(|e| self.bad(format!("its tune.json is not JSON: {e}")))?;
                match v == *head {
                    true => Ok(()),
                    false => Err(self
                        .bad(format!("holds another search: {v} (this one: {head})"))
                        .into()),
                }
            }
            Err(_) => outpath::write(
                &path,
                output::json(serde_json::to_string_pretty(head))?.as_bytes(),
            ),
        }
    }

    /// The finished measurement `j`, if there is one.
    pub fn get(&self, j: &Job) -> Option<Sample> {
        let text = std::fs::read_to_string(self.sample_path(j)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn put(&self, j: &Job, s: &Sample) -> Result<(), Failure> {
        outpath::write(
            &self.sample_path(j),
            output::json(serde_json::to_string(s))?.as_bytes(),
        )
    }
}
