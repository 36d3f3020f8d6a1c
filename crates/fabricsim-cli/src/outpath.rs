//! Output files of every subcommand. Each path is checked before any work starts (its directory
//! exists and is writable, the path is not a directory), so a long run never ends in a result it
//! cannot write; results are written atomically (a temporary file in the same directory, then a
//! rename: POSIX rename(2) replaces the target in one step), so a crash or a stop never leaves a
//! half file that looks whole.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use fabricsim::InputError;

use crate::outcome::{Failure, Outcome};

const ALLOWED: &str = "a file path in an existing directory this user can write";

/// The directory `path` goes in (`.` for a bare file name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The temporary file `path` is written to before the rename: hidden, in the same directory.
fn temp_of(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy());
    dir_of(path).join(format!(".{name}.{}.tmp", std::process::id()))
}

/// Why `path` cannot be written, if it cannot.
fn problem(path: &Path) -> Option<String> {
    let dir = dir_of(path);
    if path.is_dir() {
        return Some("is a directory".into());
    }
    match std::fs::metadata(dir) {
        Err(_) => return Some(format!("directory {} does not exist", dir.display())),
        Ok(m) if !m.is_dir() => return Some(format!("{} is not a directory", dir.display())),
        Ok(_) => {}
    }
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Some("permission denied (the file is read-only)".into());
    }
    // Creating the temporary file is the one test of writability that holds for every user.
    let probe = temp_of(path);
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) if e.kind() == ErrorKind::PermissionDenied => Some(format!(
            "permission denied (cannot create files in directory {})",
            dir.display()
        )),
        Err(e) => Some(format!(
            "cannot create files in directory {}: {e}",
            dir.display()
        )),
    }
}

/// Checks every `(flag, path)` given, before any work starts: exit 2 naming the flag, the path
/// and why it cannot be written.
pub fn check(outs: &[(&str, Option<&Path>)]) -> Result<(), InputError> {
    for (flag, path) in outs {
        if let Some(p) = path
            && let Some(why) = problem(p)
        {
            return Err(InputError::flag(flag, p.display(), why, ALLOWED));
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, then a rename.
pub fn write(path: &Path, bytes: &[u8]) -> Outcome {
    let tmp = temp_of(path);
    let done = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    done.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Failure::Run(format!("cannot write {}: {e}", path.display()))
    })
}
