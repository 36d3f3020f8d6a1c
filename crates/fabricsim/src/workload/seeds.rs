//! The seeds of a simulated figure (compare, sweep, collective, train) and the runs over them.
//! The first seed is the scenario's (`[compare] seed` for compare and sweep, the engine's seed
//! for collective and train), the others are derived from it with `fabricsim_core::rng::mix`
//! (SplitMix64), so the same scenario and seed give the same seeds, results and bytes. Runs of
//! independent jobs share the machine's cores and come back in job order, whatever the thread
//! count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use fabricsim_core::estimate::Estimate;
use fabricsim_core::rng::mix;

/// Mixed with the base seed and the seed's index (the word "SEEDS" in ASCII).
const TAG: u64 = 0x53_45_45_44_53;

/// `n` seeds: `base` first, then one derived from (base, index) per further seed.
pub fn derive(base: u64, n: u32) -> Vec<u64> {
    (0..n as u64)
        .map(|i| if i == 0 { base } else { mix(&[base, TAG, i]) })
        .collect()
}

/// A figure's run under the first seed, kept so that every later seed reuses it when that run
/// drew nothing from its seed's random streams (`SimInfo::drew_random`: such a run gives the
/// same result under every seed, so running it again would only repeat it), and runs its own
/// otherwise. Threads asking at once wait for the first seed's run rather than repeat it.
pub struct FirstSeed<T>(OnceLock<Result<(T, bool), String>>);

impl<T: Clone> FirstSeed<T> {
    pub const fn new() -> FirstSeed<T> {
        FirstSeed(OnceLock::new())
    }

    /// The figure under `seed`: `run(first)` once (its result, and whether it drew), that
    /// result again for a later seed when it drew nothing, else `run(seed)`.
    pub fn get<E: ToString>(
        &self,
        first: u64,
        seed: u64,
        run: impl Fn(u64) -> Result<(T, bool), E>,
    ) -> Result<T, String> {
        let kept = self.0.get_or_init(|| run(first).map_err(|e| e.to_string()));
        match kept {
            Ok((t, drew)) if seed == first || !drew => Ok(t.clone()),
            Err(e) if seed == first => Err(e.clone()),
            _ => run(seed).map(|(t, _)| t).map_err(|e| e.to_string()),
        }
    }
}

/// The estimate of per-seed figures of a non-negative quantity (a time, a rate, a share, a
/// cost: `Estimate::of_positive`, the lower end clipped at 0); `Err` names `what` when one is
/// not finite (a run that delivered nothing) or negative.
pub fn estimate(what: &str, samples: &[f64]) -> Result<Estimate, String> {
    Estimate::of_positive(samples)
        .ok_or_else(|| format!("{what} is not finite and >= 0 in every seed: {samples:?}"))
}

/// One seed's figure: its value, no spread measured (`n` = 1).
pub fn single(x: f64) -> Estimate {
    Estimate {
        mean: x,
        lo: x,
        hi: x,
        n: 1,
        lo_clipped: false,
    }
}

/// Runs `f` on every job on up to `threads` threads and returns the results in job order. After
/// a stop request (`fabricsim_core::stop`) jobs not yet started are not run and a job that
/// ends after it is dropped (it may have stopped early): both `None`.
pub fn run_jobs<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    f: impl Fn(&J) -> R + Sync,
) -> Vec<Option<R>> {
    run_jobs_reporting(jobs, threads, f, |_| ())
}

/// [`run_jobs`], calling `done` with the results so far (job order, `None` where not yet)
/// after each job that finishes: a progress display's hook.
pub fn run_jobs_reporting<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    f: impl Fn(&J) -> R + Sync,
    done: impl Fn(&[Option<R>]) + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            scope.spawn(|| {
                while !fabricsim_core::stop::requested() {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(j) = jobs.get(i) else { break };
                    let r = f(j);
                    if fabricsim_core::stop::requested() {
                        break;
                    }
                    let mut slots = slots.lock().expect("no panics while holding the lock");
                    slots[i] = Some(r);
                    done(&slots);
                }
            });
        }
    });
    slots.into_inner().expect("threads joined")
}

/// The machine's available parallelism (1 when unknown).
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A first-seed run that drew nothing stands for every seed (run once, even from two
    /// threads); one that drew runs again per seed; a failed first run fails only its seed.
    #[test]
    fn the_first_seed_stands_for_the_others_only_when_it_drew_nothing() {
        let runs = AtomicUsize::new(0);
        let free = FirstSeed::new();
        let run = |seed: u64| {
            runs.fetch_add(1, Ordering::Relaxed);
            Ok::<_, String>((seed * 10, false))
        };
        std::thread::scope(|s| {
            for seed in [1, 2] {
                let (free, run) = (&free, &run);
                s.spawn(move || assert_eq!(free.get(1, seed, run), Ok(10)));
            }
        });
        assert_eq!(free.get(1, 3, run), Ok(10));
        assert_eq!(runs.load(Ordering::Relaxed), 1);
        let drew = FirstSeed::new();
        let run = |seed: u64| Ok::<_, String>((seed * 10, true));
        assert_eq!(drew.get(1, 1, run), Ok(10));
        assert_eq!(drew.get(1, 2, run), Ok(20));
        let failed = FirstSeed::new();
        let run = |seed: u64| match seed {
            1 => Err("no".to_string()),
            _ => Ok((seed, false)),
        };
        assert_eq!(failed.get(1, 1, run), Err("no".into()));
        assert_eq!(failed.get(1, 2, run), Ok(2));
    }

    #[test]
    fn seeds_start_at_the_base_and_are_distinct_and_stable() {
        let s = derive(7, 5);
        assert_eq!(s[0], 7);
        assert_eq!(s, derive(7, 5));
        assert_eq!(&derive(7, 8)[..5], &s[..]);
        let mut d = s.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 5);
        assert_ne!(derive(8, 2)[1], s[1]);
    }

    #[test]
    fn jobs_come_back_in_order_whatever_the_threads() {
        let jobs: Vec<u64> = (0..23).collect();
        let one = run_jobs(&jobs, 1, |j| j * j);
        assert_eq!(one, run_jobs(&jobs, 4, |j| j * j));
        assert_eq!(one[22], Some(22 * 22));
    }
}
