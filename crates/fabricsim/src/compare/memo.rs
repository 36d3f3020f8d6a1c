//! Results of pure runs kept for the life of the process, by a key that spells out every
//! input the run reads (its `Debug` text), so a run asked for again with the same inputs is
//! not run again. A run is a pure function of its inputs (`ARCHITECTURE.md`, invariants), so a
//! kept result is the bytes a new run would give; two threads asking at once may both run it.

use std::sync::Mutex;

use crate::error::Error;

/// Kept results by key, in the order they were first run.
pub struct Memo<T>(Mutex<Vec<(String, T)>>);

impl<T> Memo<T> {
    pub const fn new() -> Memo<T> {
        Memo(Mutex::new(Vec::new()))
    }
}

/// `memo`'s result for `key`, or `run`'s, kept when it succeeds.
pub fn get_or_run<T: Clone>(
    memo: &Memo<T>,
    key: String,
    run: impl FnOnce() -> Result<T, Error>,
) -> Result<T, Error> {
    let kept = |m: &Memo<T>| {
        let v = m.0.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone())
    };
    if let Some(t) = kept(memo) {
        return Ok(t);
    }
    let t = run()?;
    let mut v = memo.0.lock().unwrap_or_else(|e| e.into_inner());
    if !v.iter().any(|(k, _)| *k == key) {
        v.push((key, t.clone()));
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key runs once; another key runs its own.
    #[test]
    fn a_key_runs_once() {
        static M: Memo<u32> = Memo::new();
        let mut runs = 0;
        for _ in 0..3 {
            let x = get_or_run(&M, "a".into(), || {
                runs += 1;
                Ok(7)
            });
            assert_eq!(x.unwrap(), 7);
        }
        assert_eq!(runs, 1);
        assert_eq!(get_or_run(&M, "b".into(), || Ok(8)).unwrap(), 8);
    }
}
