//! A sweep's shared work directory, as the array tasks of `sweep --backend slurm` use it:
//! `sweep.json` (what the sweep is: its record head, which every task and the merge check
//! against their own), `points/NNNNNN.json` (one finished point each, written atomically, so a
//! task killed midway loses only the points it was running), `logs/` (the tasks' output).

use std::path::{Path, PathBuf};

use fabricsim::InputError;
use fabricsim::compare::sweep::{Point, PointResult};

use crate::outcome::{Failure, Outcome};
use crate::outpath;
use crate::output;

/// The work directory at `root`.
pub struct WorkDir {
    pub root: PathBuf,
}

/// Shard `i` of `n` (`--shard I/N`): the points whose id is `i` modulo `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub i: usize,
    pub n: usize,
}

impl Shard {
    pub fn parse(text: &str) -> Result<Shard, InputError> {
        let bad =
            |why: &str| InputError::flag("--shard", text, why, "I/N with 0 <= I < N, e.g. 3/16");
        let (i, n) = text.split_once('/').ok_or_else(|| bad("is not I/N"))?;
        let (i, n): (usize, usize) = match (i.trim().parse(), n.trim().parse()) {
            (Ok(i), Ok(n)) => (i, n),
            _ => return Err(bad("is not two whole numbers")),
        };
        if n == 0 || i >= n {
            return Err(bad("needs 0 <= I < N"));
        }
        Ok(Shard { i, n })
    }

    pub fn holds(self, p: &Point) -> bool {
        p.id % self.n == self.i
    }
}

impl WorkDir {
    pub fn new(root: &Path) -> WorkDir {
        WorkDir {
            root: root.to_path_buf(),
        }
    }

    fn head_path(&self) -> PathBuf {
        self.root.join("sweep.json")
    }

    pub fn points_dir(&self) -> PathBuf {
        self.root.join("points")
    }

    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }

    fn point_path(&self, id: usize) -> PathBuf {
        self.points_dir().join(format!("{id:06}.json"))
    }

    fn bad(&self, flag: &str, why: String) -> InputError {
        InputError::flag(
            flag,
            self.root.display(),
            why,
            "the work directory of this same sweep (same scenario file, --param, --fabric, --engine, --seed and --seeds), or a new one",
        )
    }

    /// Creates the directory (and `points/`, `logs/`) and writes `head` as `sweep.json`; a
    /// directory that already holds a sweep must hold this one (a re-submission finishes it).
    pub fn create(&self, flag: &str, head: &serde_json::Value) -> Outcome {
        for d in [self.points_dir(), self.logs_dir()] {
            std::fs::create_dir_all(&d)
                .map_err(|e| self.bad(flag, format!("cannot create {}: {e}", d.display())))?;
        }
        if self.head_path().exists() {
            return self.check(flag, head).map_err(Failure::from);
        }
        outpath::write(
            &self.head_path(),
            output::json(serde_json::to_string_pretty(head))?.as_bytes(),
        )
    }

    /// Refuses a directory that is not this sweep's.
    pub fn check(&self, flag: &str, head: &serde_json::Value) -> Result<(), InputError> {
        let text = std::fs::read_to_string(self.head_path()).map_err(|e| {
            self.bad(
                flag,
                format!("has no readable sweep.json ({e}): not a sweep's work directory"),
            )
        })?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| self.bad(flag, format!("its sweep.json is not JSON: {e}")))?;
        match super::sweep::RECORD_HEAD
            .iter()
            .find(|k| v[**k] != head[**k])
        {
            Some(key) => Err(self.bad(
                flag,
                format!(
                    "holds another sweep: its {key} is {}, this sweep's is {}",
                    v[*key], head[*key]
                ),
            )),
            None => Ok(()),
        }
    }

    /// Writes one finished point.
    pub fn put(&self, r: &PointResult) -> Outcome {
        outpath::write(
            &self.point_path(r.point.id),
            output::json(serde_json::to_string_pretty(r))?.as_bytes(),
        )
    }

    /// The finished points of `points` found in the directory, in point order; a file that does
    /// not read back or holds a point of another sweep is an error.
    pub fn finished(&self, flag: &str, points: &[Point]) -> Result<Vec<PointResult>, InputError> {
        let mut out = Vec::new();
        for p in points {
            let path = self.point_path(p.id);
            let text = match std::fs::read_to_string(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                r => {
                    r.map_err(|e| self.bad(flag, format!("cannot read {}: {e}", path.display())))?
                }
            };
            let r: PointResult = serde_json::from_str(&text).map_err(|e| {
                self.bad(flag, format!("{} does not read back: {e}", path.display()))
            })?;
            if r.point != *p {
                return Err(self.bad(
                    flag,
                    format!(
                        "{} holds a point that is not this sweep's point {}",
                        path.display(),
                        p.id
                    ),
                ));
            }
            out.push(r);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Shard;

    #[test]
    fn shards_partition_the_points() {
        assert_eq!(Shard::parse("3/16").unwrap(), Shard { i: 3, n: 16 });
        for bad in ["16/16", "1/0", "a/b", "3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let n = 5;
        for id in 0..23 {
            let p = fabricsim::compare::sweep::Point { id, values: vec![] };
            assert_eq!((0..n).filter(|&i| Shard { i, n }.holds(&p)).count(), 1);
        }
    }
}
