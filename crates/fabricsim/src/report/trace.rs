//! `sim --trace FILE`: a run's results as Chrome trace-event JSON, the "JSON Object Format" of
//! the Trace Event Format (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKLChpAoE),
//! which the Perfetto UI (https://ui.perfetto.dev) and chrome://tracing open: each message a
//! complete event (`"ph": "X"`) from its start to its finish on its sender's track (process =
//! source host, thread = QP), and each sampled port's queue a counter (`"ph": "C"`) every
//! `[sim] sample_interval`; from the same samples, counters of each port's PFC pause (time
//! paused and PAUSE frames received per interval) and credit stall (time waiting for IB
//! credits per interval), and run-wide ECN marks and CNPs per interval. A flow-control or
//! ECN/CNP counter is written where its value changes (a counter holds until its next event)
//! and not at all when it stays zero. Built from the results after the run (no engine hook);
//! events are sorted by time, then process, thread and name, so a scenario and seed give the
//! same bytes. The file is bounded: past `max_events` the earliest ones are kept, and the
//! trace says where it was cut (a global instant event at the cut and a note in `otherData`).

use fabricsim_mech::RunResult;
use serde_json::{Value, json};

/// The process ids of the counters (hosts are 0..hosts; these sort after them): port queues,
/// port flow control, run-wide ECN and CNPs.
const PORTS_PID: u64 = u32::MAX as u64 + 1;
const FC_PID: u64 = PORTS_PID + 1;
const FABRIC_PID: u64 = PORTS_PID + 2;

/// A sortable event: (ts_ps, pid, tid, name, event).
type Event = (u64, u64, u64, String, Value);

/// The counter events of track `name` in process `pid` (thread slot `tid` for sorting), one
/// per sample `interval_ps` apart where any of `cols` (argument name, samples) changes; none
/// when they are all zero.
fn changes(
    events: &mut Vec<Event>,
    name: String,
    pid: u64,
    tid: u64,
    interval_ps: u64,
    cols: &[(&str, &[u64])],
) {
    let n = cols.iter().map(|c| c.1.len()).min().unwrap_or(0);
    if cols.iter().all(|c| c.1.iter().all(|&v| v == 0)) {
        return;
    }
    for k in 0..n {
        if k > 0 && cols.iter().all(|c| c.1[k] == c.1[k - 1]) {
            continue;
        }
        let t = k as u64 * interval_ps;
        let args: serde_json::Map<String, Value> = cols
            .iter()
            .map(|c| (c.0.to_string(), json!(c.1[k])))
            .collect();
        let e = json!({
            "name": name, "cat": "counter", "ph": "C", "ts": us(t),
            "pid": pid, "tid": 0, "args": args,
        });
        events.push((t, pid, tid, name.clone(), e));
    }
}

/// Picoseconds as the format's microseconds (`ts`, `dur`).
fn us(ps: u64) -> f64 {
    ps as f64 / 1e6
}

/// A trace's text and, when `max_events` cut it, what was left out.
pub struct Trace {
    pub text: String,
    pub cut: Option<Cut>,
}

/// Where a capped trace stops: the events kept of all there were, and the time of the first
/// one left out (the kept ones are the first in the events' order: time, process, thread,
/// name).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    pub kept: usize,
    pub total: usize,
    pub at_ps: u64,
}

impl Cut {
    /// The note the trace and the command's stderr carry.
    pub fn note(&self) -> String {
        format!(
            "trace capped at {} of {} events: the earliest are kept, up to {} us (raise --trace-max-events)",
            self.kept,
            self.total,
            us(self.at_ps)
        )
    }
}

/// The run as trace-event JSON text, one event per line, with at most `max_events` events
/// (the earliest; metadata events not counted).
pub fn chrome(r: &RunResult, max_events: usize) -> Trace {
    // (ts_ps, pid, tid, name, event): the sort key, then what is written.
    let mut events: Vec<Event> = Vec::new();
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
            let at = format!("node {} port {}", p.node, p.port);
            let (iv, tid) = (s.interval_ps, u64::from(p.port));
            let pause = [
                ("paused_ps", &p.paused_ps[..]),
                ("pause_frames", &p.pause_frames[..]),
            ];
            changes(
                &mut events,
                format!("pfc pause {at}"),
                FC_PID,
                tid,
                iv,
                &pause,
            );
            let stall = [("stalled_ps", &p.credit_stall_ps[..])];
            changes(
                &mut events,
                format!("credit stall {at}"),
                FC_PID,
                tid,
                iv,
                &stall,
            );
        }
        let iv = s.interval_ps;
        changes(
            &mut events,
            "ecn marks".into(),
            FABRIC_PID,
            0,
            iv,
            &[("marks", &s.ecn_marks[..])],
        );
        changes(
            &mut events,
            "cnps".into(),
            FABRIC_PID,
            1,
            iv,
            &[("cnps", &s.cnps[..])],
        );
    }
    events.sort_by(|a, b| (a.0, a.1, a.2, &a.3).cmp(&(b.0, b.1, b.2, &b.3)));
    let cut = cap(&mut events, max_events);
    let names = [
        (PORTS_PID, "ports (queued bytes)"),
        (FC_PID, "ports (flow control per interval)"),
        (FABRIC_PID, "fabric (ECN marks, CNPs per interval)"),
    ];
    let meta = names.iter().map(|(pid, name)| {
        json!({"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}})
            .to_string()
    });
    let mut lines: Vec<String> = meta.chain(events.iter().map(|e| e.4.to_string())).collect();
    let other = match &cut {
        Some(c) => {
            lines.push(
                json!({"name": c.note(), "cat": "cap", "ph": "i", "s": "g", "ts": us(c.at_ps),
                    "pid": FABRIC_PID, "tid": 0})
                .to_string(),
            );
            format!(", \"otherData\": {}", json!({"note": c.note()}))
        }
        None => String::new(),
    };
    let text = format!(
        "{{\"displayTimeUnit\": \"ns\"{other}, \"traceEvents\": [\n{}\n]}}\n",
        lines.join(",\n")
    );
    Trace { text, cut }
}

/// Keeps the first `max` of the sorted `events`; where it cut, if it did.
fn cap(events: &mut Vec<Event>, max: usize) -> Option<Cut> {
    let total = events.len();
    let at_ps = events.get(max)?.0;
    events.truncate(max);
    Some(Cut {
        kept: max,
        total,
        at_ps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_keep_picoseconds() {
        assert_eq!(us(1_234_567), 1.234567);
    }

    #[test]
    fn a_counter_is_written_where_it_changes_and_not_when_always_zero() {
        let mut ev = Vec::new();
        changes(&mut ev, "z".into(), 1, 0, 10, &[("a", &[0, 0, 0])]);
        assert!(ev.is_empty());
        changes(
            &mut ev,
            "c".into(),
            1,
            0,
            10,
            &[("a", &[0, 5, 5, 0]), ("b", &[1, 1, 1, 1])],
        );
        let ts: Vec<u64> = ev.iter().map(|e| e.0).collect();
        assert_eq!(ts, [0, 10, 30]);
        assert_eq!(ev[1].4["args"], json!({"a": 5, "b": 1}));
    }

    #[test]
    fn a_cap_keeps_the_earliest_events() {
        let ev = |t: u64| (t, 0, 0, String::new(), Value::Null);
        let mut events: Vec<Event> = [0, 10, 20, 20, 30].map(ev).into();
        assert_eq!(cap(&mut events, 5), None);
        let cut = cap(&mut events, 3).expect("cut");
        assert_eq!(
            cut,
            Cut {
                kept: 3,
                total: 5,
                at_ps: 20
            }
        );
        assert_eq!(events.iter().map(|e| e.0).collect::<Vec<_>>(), [0, 10, 20]);
    }
}
