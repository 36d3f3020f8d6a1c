//! The Python module `fabricsim._fabricsim` (PyO3, https://pyo3.rs/): each job runs on its own
//! thread with the GIL released while the calling thread polls for Ctrl-C (a signal asks the
//! engines to stop through `fabricsim::stop`, and the call raises `KeyboardInterrupt`); input
//! errors raise `InputError` with `file`, `line`, `key`, `value`, `problem` and `allowed`.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::jobs::{self, JobError};
use crate::scenario_arg::ScenarioArg;

create_exception!(
    _fabricsim,
    InputError,
    PyValueError,
    "Bad input: names file, line, key, value and what is allowed."
);
create_exception!(
    _fabricsim,
    RunError,
    PyRuntimeError,
    "A run that failed (not the input's fault)."
);

/// How often the waiting thread looks for a signal.
const POLL: Duration = Duration::from_millis(50);
/// The job thread's stack: the main thread's on Linux (the CLI runs jobs there).
const STACK: usize = 8 << 20;

fn to_py(py: Python<'_>, e: JobError) -> PyErr {
    match e {
        JobError::Run(msg) => RunError::new_err(msg),
        JobError::Input(e) => {
            let err = InputError::new_err(e.to_string());
            let v = err.value(py);
            let set = || -> PyResult<()> {
                v.setattr("file", &e.file)?;
                v.setattr("line", e.line)?;
                v.setattr("key", &e.key)?;
                v.setattr("value", &e.value)?;
                v.setattr("problem", &e.problem)?;
                v.setattr("allowed", &e.allowed)
            };
            match set() {
                Ok(()) => err,
                Err(e) => e,
            }
        }
    }
}

/// Runs `job` off the GIL; Ctrl-C stops it and raises `KeyboardInterrupt`.
fn run<T, F>(py: Python<'_>, job: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, JobError> + Send + 'static,
{
    fabricsim::stop::clear();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("fabricsim".into())
        .stack_size(STACK)
        .spawn(move || {
            let _ = tx.send(job());
        })
        .map_err(|e| RunError::new_err(format!("cannot start the job's thread: {e}")))?;
    let mut interrupt = None;
    let mut rx = rx;
    loop {
        // The receiver goes to the GIL-free closure and back (it is not `Sync`).
        let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            Ok(result) => {
                fabricsim::stop::clear();
                return match interrupt {
                    Some(e) => Err(e),
                    None => result.map_err(|e| to_py(py, e)),
                };
            }
            Err(RecvTimeoutError::Timeout) => {
                if interrupt.is_none()
                    && let Err(e) = py.check_signals()
                {
                    fabricsim::stop::request();
                    interrupt = Some(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                fabricsim::stop::clear();
                return Err(RunError::new_err(
                    "the job panicked (a bug: please report it)",
                ));
            }
        }
    }
}

/// The scenario argument as `fabricsim/__init__.py` sends it: a kind and its text.
fn arg(kind: &str, text: String) -> PyResult<ScenarioArg> {
    Ok(match kind {
        "none" => ScenarioArg::None,
        "path" => ScenarioArg::Path(text),
        "toml" => ScenarioArg::Toml(text),
        "json" => ScenarioArg::Json(text),
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown scenario kind {kind:?}"
            )));
        }
    })
}

#[pyfunction]
fn plan(
    py: Python<'_>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
) -> PyResult<String> {
    let a = arg(kind, text)?;
    run(py, move || jobs::plan(&a, &flags))
}

#[pyfunction]
#[pyo3(signature = (kind, text, flags, seed=None, until=None))]
fn sim(
    py: Python<'_>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
    seed: Option<u64>,
    until: Option<String>,
) -> PyResult<String> {
    let a = arg(kind, text)?;
    run(py, move || jobs::sim(&a, &flags, seed, until.as_deref()))
}

#[pyfunction]
#[pyo3(signature = (kind, text, flags, calibrate=false))]
fn train(
    py: Python<'_>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
    calibrate: bool,
) -> PyResult<String> {
    let a = arg(kind, text)?;
    run(py, move || jobs::train(&a, &flags, calibrate))
}

#[pyfunction]
fn compare(
    py: Python<'_>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
) -> PyResult<String> {
    let a = arg(kind, text)?;
    run(py, move || jobs::compare(&a, &flags))
}

#[pyfunction]
fn collective(
    py: Python<'_>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
) -> PyResult<String> {
    let a = arg(kind, text)?;
    run(py, move || jobs::collective(&a, &flags))
}

#[pyfunction]
fn sweep(
    py: Python<'_>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
) -> PyResult<String> {
    let a = arg(kind, text)?;
    run(py, move || jobs::sweep(&a, &flags))
}

/// Arrow IPC stream bytes as Python `bytes` (pyo3 would make a `Vec<u8>` a list).
fn bytes<'py>(py: Python<'py>, b: PyResult<Vec<u8>>) -> PyResult<Bound<'py, PyBytes>> {
    b.map(|b| PyBytes::new(py, &b))
}

#[pyfunction]
#[pyo3(signature = (kind, text, flags, seed=None, until=None, table="messages"))]
fn sim_table<'py>(
    py: Python<'py>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
    seed: Option<u64>,
    until: Option<String>,
    table: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let a = arg(kind, text)?;
    let table = table.to_string();
    let b = run(py, move || {
        jobs::sim_table(&a, &flags, seed, until.as_deref(), &table)
    });
    bytes(py, b)
}

#[pyfunction]
fn collective_table<'py>(
    py: Python<'py>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyBytes>> {
    let a = arg(kind, text)?;
    let b = run(py, move || jobs::collective_table(&a, &flags));
    bytes(py, b)
}

#[pyfunction]
fn sweep_table<'py>(
    py: Python<'py>,
    kind: &str,
    text: String,
    flags: Vec<(String, String)>,
) -> PyResult<Bound<'py, PyBytes>> {
    let a = arg(kind, text)?;
    let b = run(py, move || jobs::sweep_table(&a, &flags));
    bytes(py, b)
}

#[pymodule]
fn _fabricsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(collective, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sim_table, m)?)?;
    m.add_function(wrap_pyfunction!(collective_table, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_table, m)?)?;
    Ok(())
}
