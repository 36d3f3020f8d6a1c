//! `sweep --backend slurm`: the sweep as a Slurm job array (sbatch(1) `--array`), each task
//! running its shard of the points with this same binary (`sweep --shard I/N --work-dir DIR`),
//! then a merge job after the whole array (`--dependency=afterany`, so a failed task still gets
//! its missing points reported) that writes the outputs a local sweep would. `tune --backend
//! slurm` runs each round's measurements as such an array (`Jobs::run_array`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::outcome::Failure;
use crate::outpath;
use crate::sweep_dir::WorkDir;

/// Refuses `--tasks` and `--sbatch-arg` without `--backend slurm` (`slurm` false), and
/// `--tasks 0`: the checks `sweep` and `tune` share.
pub fn check_flags(
    slurm: bool,
    tasks: Option<usize>,
    sbatch_args: &[String],
) -> Result<(), fabricsim::InputError> {
    let only = |flag: &str, given: bool| match given && !slurm {
        true => Err(fabricsim::InputError::flag(
            flag,
            "given",
            "only applies with --backend slurm",
            "with --backend slurm",
        )),
        false => Ok(()),
    };
    only("--tasks", tasks.is_some())?;
    only("--sbatch-arg", !sbatch_args.is_empty())?;
    if tasks == Some(0) {
        return Err(fabricsim::InputError::flag(
            "--tasks",
            0,
            "no array task",
            "1 or more",
        ));
    }
    Ok(())
}

/// What the two job scripts run.
pub struct Jobs<'a> {
    /// The subcommand the tasks run (`sweep`, `tune`).
    pub command: &'static str,
    /// This binary, as the tasks run it.
    pub bin: PathBuf,
    /// The directory the jobs run in (the submitting one).
    pub cwd: PathBuf,
    /// The sweep's own arguments (scenario, --param, --fabric, ...), without outputs.
    pub sweep: Vec<String>,
    /// The output flags, for the merge job.
    pub outputs: Vec<String>,
    pub tasks: usize,
    /// Worker threads per task, and its `--cpus-per-task`.
    pub threads: usize,
    /// Extra `#SBATCH` lines (`--sbatch-arg`), in both scripts.
    pub sbatch: &'a [String],
    pub dir: &'a WorkDir,
}

/// `s` as one POSIX shell word.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=,:+@%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn words(v: &[String]) -> String {
    v.iter().map(|s| quote(s)).collect::<Vec<_>>().join(" ")
}

impl Jobs<'_> {
    fn header(&self, name: &str, extra: &[String]) -> String {
        let mut s = format!(
            "#!/bin/sh\n#SBATCH --job-name={name}\n#SBATCH --chdir={}\n",
            quote(&self.cwd.display().to_string())
        );
        for line in extra.iter().chain(self.sbatch) {
            s += &format!("#SBATCH {line}\n");
        }
        s
    }

    pub fn array_script(&self) -> String {
        let logs = self.dir.logs_dir().join("task-%a.out");
        let mut s = self.header(
            &format!("fabricsim-{}", self.command),
            &[
                format!("--array=0-{}", self.tasks - 1),
                format!("--cpus-per-task={}", self.threads),
                format!("--output={}", quote(&logs.display().to_string())),
            ],
        );
        s += &format!(
            "exec {} {} {} --threads {} --work-dir {} --shard \"$SLURM_ARRAY_TASK_ID/{}\"\n",
            quote(&self.bin.display().to_string()),
            self.command,
            words(&self.sweep),
            self.threads,
            quote(&self.dir.root.display().to_string()),
            self.tasks
        );
        s
    }

    pub fn merge_script(&self) -> String {
        let log = self.dir.logs_dir().join("merge.out");
        let mut s = self.header(
            "fabricsim-sweep-merge",
            &[format!("--output={}", quote(&log.display().to_string()))],
        );
        s += &format!(
            "exec {} sweep {} --merge {} {}\n",
            quote(&self.bin.display().to_string()),
            words(&self.sweep),
            quote(&self.dir.root.display().to_string()),
            words(&self.outputs)
        );
        s
    }

    fn script_paths(&self) -> (PathBuf, PathBuf) {
        (
            self.dir.root.join("sweep.sbatch"),
            self.dir.root.join("merge.sbatch"),
        )
    }

    /// Writes both scripts; without `dry_run` submits them and, with `wait`, waits for the
    /// merge job. Returns what to print.
    pub fn submit(&self, dry_run: bool, wait: bool) -> Result<String, Failure> {
        let (array, merge) = self.script_paths();
        outpath::write(&array, self.array_script().as_bytes())?;
        outpath::write(&merge, self.merge_script().as_bytes())?;
        if dry_run {
            return Ok(format!(
                "slurm (dry run): the scripts are written; to submit:\n  jobid=$(sbatch --parsable {})\n  sbatch --dependency=afterany:$jobid {}\n",
                array.display(),
                merge.display()
            ));
        }
        let array_id = sbatch(&[], &array)?;
        let dep = format!("--dependency=afterany:{array_id}");
        let mut merge_args = vec![dep.as_str()];
        if wait {
            merge_args.push("--wait");
        }
        let merge_id = sbatch(&merge_args, &merge)?;
        Ok(format!(
            "slurm: array job {array_id} ({} tasks, {} threads each) and merge job {merge_id}{}; work directory {}, task logs in {}\n",
            self.tasks,
            self.threads,
            if wait { " finished" } else { " submitted" },
            self.dir.root.display(),
            self.dir.logs_dir().display()
        ))
    }
}

impl Jobs<'_> {
    /// Writes the array script to `script`, submits it and waits for the whole array
    /// (`sbatch --wait`). A task that failed or was cancelled is not an error here: what it did
    /// not write is missing from the work directory, which the caller reports.
    pub fn run_array(&self, script: &Path) -> Result<String, Failure> {
        outpath::write(script, self.array_script().as_bytes())?;
        let out = sbatch_output(&["--wait"], script)?;
        let id = job_id(&out);
        Ok(match out.status.success() {
            true => format!("slurm: array job {id} ({} tasks) finished", self.tasks),
            false => format!(
                "slurm: array job {id} ({} tasks) ended with a failed task ({}): {}",
                self.tasks,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        })
    }
}

fn sbatch_output(args: &[&str], script: &Path) -> Result<std::process::Output, Failure> {
    Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .arg(script)
        .output()
        .map_err(|e| {
            Failure::Run(format!(
                "cannot run sbatch ({e}): is Slurm installed here? `--dry-run` writes the job scripts without submitting"
            ))
        })
}

/// The job id `sbatch --parsable` printed ("jobid" or "jobid;cluster").
fn job_id(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Runs `sbatch --parsable ARGS SCRIPT` and returns the job id.
fn sbatch(args: &[&str], script: &Path) -> Result<String, Failure> {
    let out = sbatch_output(args, script)?;
    if !out.status.success() {
        return Err(Failure::Run(format!(
            "sbatch {} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(job_id(&out))
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn shell_words_survive_spaces_and_quotes() {
        assert_eq!(quote("loss_rate=0,0.001"), "loss_rate=0,0.001");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }
}
