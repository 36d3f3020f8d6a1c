//! Fuzzing the input paths: every file of examples/ mutated by a seeded mutator (`fuzz::mutate`)
//! and run through the library entry points the subcommands use: scenario parse and design,
//! `plan::run`, `sim` set-up (`scenario::sim::build`, the packet engine's set-up and a run of
//! 20 us on small networks), `train` set-up and step model, `compare` section checks and
//! fabric variants; ns-3 topology and flow files through their readers and a bounded run;
//! ibnetdiscover dumps and htsim connection matrices through theirs; the example's Chakra traces
//! (binary) mutated byte by byte through their reader and the DAG compiler.
//! Asserts: no panic (`catch_unwind`), no case over its time bound, and every rejection an
//! `InputError` naming its key, with the line when the key is written in the input, in the
//! user's words (no Rust type names, no empty field).
//! `cargo test --release -p fabricsim --test fuzz_inputs -- --ignored fuzz` runs 10^5 cases.

#[path = "fuzz/mutate.rs"]
mod mutate;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fabricsim::compare::variant;
use fabricsim::engine_choice::EngineChoice;
use fabricsim::error::{InputError, Source};
use fabricsim::io::{htsim_cm, ibnetdiscover, ns3};
use fabricsim::scenario::Scenario;
use fabricsim::scenario::compare::CompareSection;
use fabricsim::sim::{Engine, Faults, RunOptions, SimParams};
use fabricsim::units::Time;
use fabricsim::workload::train::{flow_step::StepModel, run as train_run};

/// A case taking longer than this is a hang (the largest accepted designs build in well under
/// a second in release).
const BOUND: Duration = Duration::from_secs(20);
/// Designs built and planned up to this many GPUs (a mutant may ask for 2^20: valid, but
/// minutes of planning, not what a fuzz case is for); larger ones stop after `design()`.
const PLAN_GPUS: u32 = 2048;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// An input of the corpus: its path, its text, and for a flow file the topology it runs on.
struct Input {
    path: PathBuf,
    text: String,
    topology: Option<PathBuf>,
}

/// Every file of examples/; a flow file paired with the topology its scenario names.
fn corpus() -> Vec<Input> {
    let dir = examples();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    let mut pairs = Vec::new();
    for p in names
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
    {
        let t: toml::Table = toml::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        let get = |sec: &str, key: &str| t.get(sec)?.get(key)?.as_str().map(|s| dir.join(s));
        if let (Some(topo), Some(flow)) = (get("sim", "topology_file"), get("traffic", "flow_file"))
        {
            pairs.push((flow, topo));
        }
    }
    names
        .into_iter()
        .map(|path| Input {
            text: std::fs::read_to_string(&path).unwrap(),
            topology: pairs
                .iter()
                .find(|(f, _)| *f == path)
                .map(|(_, t)| t.clone()),
            path,
        })
        .collect()
}

/// Runs `input`'s mutant through the entry points for its kind.
fn run_case(input: &Input, text: &str) -> Result<(), InputError> {
    let name = input.path.display().to_string();
    let src = Source::new(name.clone(), text);
    if name.ends_with(".topo.txt") {
        ns3::read_topology(&src)?;
        return Ok(());
    }
    if name.ends_with(".ibnet.txt") {
        ibnetdiscover::read(&src)?;
        return Ok(());
    }
    if name.ends_with(".cm") {
        htsim_cm::read(&src, 16, 8, htsim_cm::StartUnit::Us)?;
        return Ok(());
    }
    if name.ends_with(".flow.txt") {
        let topo = input
            .topology
            .as_ref()
            .expect("every flow file has a scenario");
        let tsrc = Source::new(
            topo.display().to_string(),
            std::fs::read_to_string(topo).unwrap(),
        );
        let net = ns3::read_topology(&tsrc)?;
        let p = SimParams::ib();
        let dag = ns3::read_flows(&src, &net, p.traffic_classes)?;
        tiny_run(&net.topo, &p, &dag, &Faults::default());
        return Ok(());
    }
    let s = Scenario::parse(&name, text)?;
    let d = s.design()?;
    let small = d.spec.gpus <= PLAN_GPUS;
    EngineChoice::of(&s)?;
    if small {
        fabricsim::plan::run(&s)?;
    }
    let from_file = s
        .file
        .sim
        .as_ref()
        .is_some_and(|x| x.topology_file.is_some());
    if (s.file.sim.is_some() || s.file.traffic.is_some()) && (small || from_file) {
        let setup = fabricsim::scenario::sim::build(&s, &examples(), None)?;
        if setup.net.topo.num_hosts() <= 64 && setup.dag.messages.len() <= 4096 {
            tiny_run(&setup.net.topo, &setup.params, &setup.dag, &setup.faults);
        }
    }
    if s.file.train.is_some() && small {
        StepModel::of(&s)?;
        train_run::run(&s)?;
    }
    if let Some(sec) = &s.file.compare {
        sec.check(&s)?;
        variant::resolve(&s, sec)?;
    } else {
        CompareSection::default().check(&s)?;
    }
    Ok(())
}

/// The packet engine's set-up and 20 us of simulated time. The engine refuses by `Err(String)`
/// only traffic that the readers let through and it cannot run: counted, must not happen.
fn tiny_run(
    topo: &fabricsim::topology::Topology,
    p: &SimParams,
    dag: &fabricsim::message::MessageDag,
    f: &Faults,
) {
    let e = Engine::new(topo, p, dag, f)
        .unwrap_or_else(|e| panic!("engine refused accepted input: {e}"));
    e.run(RunOptions {
        until: Some(Time::from_us(20)),
        progress: None,
    });
}

#[derive(Debug, Default)]
struct Counts {
    cases: u64,
    accepted: u64,
    rejected: u64,
    panics: u64,
    hangs: u64,
    unlocated: u64,
}

/// `n` cases from `first_seed`: case `i` mutates corpus file `i % len` with seed `i`.
fn fuzz(first_seed: u64, n: u64) -> Counts {
    let corpus = std::sync::Arc::new(corpus());
    assert!(corpus.len() >= 20, "examples/ has {} files", corpus.len());
    let mut c = Counts::default();
    let mut failures = Vec::new();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let (tx, rx) = mpsc::channel();
    // Workers take every `threads`-th case; each case reports (seed, outcome) when done, and
    // its start time so the collector can see one running past the bound.
    let started = std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
    for w in 0..threads {
        let (corpus, tx, started) = (corpus.clone(), tx.clone(), started.clone());
        std::thread::spawn(move || {
            for seed in (first_seed + w..first_seed + n).step_by(threads as usize) {
                let input = &corpus[(seed % corpus.len() as u64) as usize];
                let text = mutate::mutate(&input.text, seed);
                started.lock().unwrap().insert(seed, Instant::now());
                let t0 = Instant::now();
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_case(input, &text)
                }));
                started.lock().unwrap().remove(&seed);
                let located = match &out {
                    Ok(Err(e)) => located(e, &text) && plain(e),
                    _ => true,
                };
                let _ = tx.send((seed, out.map(|r| r.err()), located, t0.elapsed()));
            }
        });
    }
    drop(tx);
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok((seed, out, located, took)) => {
                c.cases += 1;
                let file = corpus[(seed % corpus.len() as u64) as usize]
                    .path
                    .display()
                    .to_string();
                match out {
                    Err(_) => {
                        c.panics += 1;
                        failures.push(format!("seed {seed} ({file}): panic"));
                    }
                    Ok(None) => c.accepted += 1,
                    Ok(Some(e)) => {
                        c.rejected += 1;
                        if !located {
                            c.unlocated += 1;
                            failures.push(format!(
                                "seed {seed} ({file}): no line or key, or Rust's words: {e}"
                            ));
                        }
                    }
                }
                if took > BOUND {
                    c.hangs += 1;
                    failures.push(format!("seed {seed} ({file}): {took:?}"));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let late: Vec<u64> = started
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|(_, t0)| t0.elapsed() > BOUND)
                    .map(|(s, _)| *s)
                    .collect();
                if !late.is_empty() {
                    panic!("{c:?}; cases past {BOUND:?} (hangs): seeds {late:?}");
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    eprintln!("fuzz: {c:?}");
    assert!(failures.is_empty(), "{c:?}\n{}", failures.join("\n"));
    c
}

/// A rejection in the user's words: no Rust type name (`struct ClusterSection`, `untagged
/// enum SizeValue`, `u8`, `i128`) and a problem said (the key is `located`'s check).
fn plain(e: &InputError) -> bool {
    const RUST: [&str; 14] = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
        "f32", "f64",
    ];
    let shown = e.to_string();
    let typed = shown
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| RUST.contains(&w));
    let rust = ["struct ", "untagged enum"];
    !typed && !rust.iter().any(|f| shown.contains(f)) && !e.problem.trim().is_empty()
}

/// A rejection names its key, and its line whenever the key is written in the mutant (errors
/// about a key left at its default, or about a whole file, have no line to give).
fn located(e: &InputError, text: &str) -> bool {
    if e.key.is_empty() {
        return false;
    }
    if e.line.is_some() || e.file == "command line" {
        return true;
    }
    let src = Source::new(e.file.clone(), text);
    src.locate_key(&e.key).is_none()
}

/// A byte-level mutant of a binary input: one to three byte sets, truncations, duplicated or
/// deleted ranges.
fn mutate_bytes(b: &[u8], seed: u64) -> Vec<u8> {
    let mut rng = fabricsim::rng::Rng::new(seed);
    let mut v = b.to_vec();
    for _ in 0..1 + rng.below(3) {
        if v.is_empty() {
            break;
        }
        let i = rng.below(v.len() as u64) as usize;
        let j = (i + 1 + rng.below(16) as usize).min(v.len());
        match rng.below(5) {
            0 => v[i] = [0x00, 0xff, 0x80, 0x7f][rng.below(4) as usize],
            1 => v[i] = rng.below(256) as u8,
            2 => v.truncate(i),
            3 => {
                let dup = v[i..j].to_vec();
                v.splice(j..j, dup);
            }
            _ => {
                v.drain(i..j);
            }
        }
    }
    v
}

/// The example's 16 Chakra traces, one of them mutated per case, through `io::chakra::read`
/// and `workload::chakra::compile`: no panic, every rejection names its file and node (or
/// record) in the user's words.
#[test]
fn fuzz_chakra_traces() {
    use fabricsim::io::chakra;
    use fabricsim::workload::placement::Placement;
    let dir = examples().join("chakra");
    let files: Vec<Vec<u8>> = (0..16)
        .map(|r| std::fs::read(dir.join(format!("step.{r}.et"))).unwrap())
        .collect();
    let place = Placement::dense(2, 8);
    let (mut accepted, mut rejected) = (0, 0);
    for seed in 0..3000u64 {
        let rank = (seed % 16) as usize;
        let mutant = mutate_bytes(&files[rank], seed);
        let out = std::panic::catch_unwind(|| -> Result<usize, InputError> {
            let mut traces = Vec::new();
            for (r, f) in files.iter().enumerate() {
                let b = if r == rank { &mutant } else { f };
                traces.push(chakra::read(&format!("step.{r}.et"), b, r as u32, 16)?);
            }
            let dag = fabricsim::workload::chakra::compile(
                &traces,
                &place,
                fabricsim::units::BitRate::gbps(3600),
                |_, _| 2,
            )?;
            Ok(dag.messages.len())
        });
        match out {
            Err(_) => panic!("seed {seed}: panic on a mutant of step.{rank}.et"),
            Ok(Ok(_)) => accepted += 1,
            Ok(Err(e)) => {
                rejected += 1;
                assert!(!e.key.is_empty() && plain(&e), "seed {seed}: {e}");
            }
        }
    }
    assert!(
        accepted > 30 && rejected > 100,
        "{accepted} accepted, {rejected} rejected"
    );
}

#[test]
fn fuzz_examples_a_few_thousand_cases() {
    let c = fuzz(0, 5_000);
    assert_eq!(c.cases, 5_000);
    assert!(c.rejected > 300 && c.accepted > 300, "{c:?}");
}

#[test]
#[ignore]
fn fuzz_examples_100k_cases() {
    let c = fuzz(1_000_000, 100_000);
    assert_eq!(c.cases, 100_000);
}
