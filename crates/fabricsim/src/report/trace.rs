//! `sim --trace FILE`: a run's results as Chrome trace-event JSON, the "JSON Object Format" of
//! the Trace Event Format (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKLChpAoE),
//! which the Perfetto UI (https://ui.perfetto.dev) and chrome://tracing open: each message a
//! complete event (`"ph": "X"`) from its start to its finish on its sender's track (process =
//! source host, thread = QP), and each sampled port's queue a counter (`"ph": "C"`) every
//! `[sim] sample_interval`. Built from the results after the run (no engine hook); events are
//! sorted by time, then process, thread and name, so a scenario and seed give the same bytes.

use fabricsim_mech::RunResult;
use serde_json::{Value, json};

/// The process id of the port counters (hosts are 0..hosts; this one sorts after them).
const PORTS_PID: u64 = u32::MAX as u64 + 1;

/// Picoseconds as the format's microseconds (`ts`, `dur`).
fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// The run as trace-event JSON text, one event per line.
pub fn chrome(r: &RunResult) -> String {
    // (ts_ps, pid, tid, name, event): the sort key, then what is written.
    let mut events: Vec<(u64, u64, u64, String, Value)> = Vec::new();
    for m in &r.messages {
        let (Some(start), Some(finish)) = (m.start_ps, m.finish_ps) else {
            continue;
        };
        let tid = u64::from(m.qp.unwrap_or(m.id));
        let name = format!("msg {} -> {}", m.id, m.dst);
        let e = json!({
            "name": name, "cat": "message", "ph": "X",
            "ts": us(start), "dur": us(finish - start),
            "pid": m.src, "tid": tid,
            "args": {"id": m.id, "dst": m.dst, "bytes": m.bytes, "fct_ps": m.fct_ps},
        });
        events.push((start, u64::from(m.src), tid, name, e));
    }
    if let Some(s) = &r.series {
        for p in &s.ports {
            let name = format!("queue node {} port {}", p.node, p.port);
            for (k, q) in p.queue_bytes.iter().enumerate() {
                let t = k as u64 * s.interval_ps;
                let e = json!({
                    "name": name, "cat": "queue", "ph": "C", "ts": us(t),
                    "pid": PORTS_PID, "tid": 0, "args": {"bytes": q},
                });
                events.push((t, PORTS_PID, u64::from(p.port), name.clone(), e));
            }
        }
    }
    events.sort_by(|a, b| (a.0, a.1, a.2, &a.3).cmp(&(b.0, b.1, b.2, &b.3)));
    let meta = json!({
        "name": "process_name", "ph": "M", "pid": PORTS_PID, "tid": 0,
        "args": {"name": "ports (queued bytes)"},
    });
    let lines: Vec<String> = std::iter::once(meta.to_string())
        .chain(events.iter().map(|e| e.4.to_string()))
        .collect();
    format!(
        "{{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n{}\n]}}\n",
        lines.join(",\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_keep_picoseconds() {
        assert_eq!(us(1_234_567), 1.234567);
    }
}
