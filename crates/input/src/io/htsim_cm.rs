//! htsim's connection matrix (`.cm`, as uet-htsim and Broadcom's csg-htsim read it) as a
//! [`MessageDag`]: a `Nodes N` and `Connections C` header (`Triggers T` optional), then one
//! line per connection `src->dst [id I] (start T | trigger X) size B [recv_done_trigger Y]
//! [prio P]` and one per trigger `trigger id X (oneshot | barrier [count n])`; `#` starts a
//! comment. Node ids are host indices. A connection started by a trigger waits for the
//! connections whose `recv_done_trigger` activate it: one for a oneshot trigger, `count` (all of
//! them) for a barrier, so the DAG's all-of dependencies express it exactly. What htsim has and a
//! message DAG cannot say is refused: `send_done_trigger` (the DAG waits for delivery), multishot
//! triggers, a oneshot with several activators (any-of), `size 0` (an endless flow) and
//! `Failures`. The start time's unit differs between the trees (µs in uet-htsim, ps in
//! csg-htsim since 2023-11), so it is the scenario's to say (`traffic.start_unit`).

use std::collections::HashMap;

use fabricsim_core::error::{InputError, Source};
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::HostId;
use fabricsim_core::units::Time;

/// The unit of a connection's `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartUnit {
    Us,
    Ps,
}

struct Conn {
    line: usize,
    src: u32,
    dst: u32,
    bytes: u64,
    start: Time,
    trigger: Option<u64>,
    activates: Option<u64>,
    class: Option<u8>,
}

/// A trigger: its kind and the connections that activate it.
struct Trigger {
    line: usize,
    barrier: Option<u64>,
    activators: Vec<usize>,
}

/// Reads `src` for a network of `hosts` hosts whose fabric has `classes` traffic classes.
pub fn read(
    src: &Source,
    hosts: u32,
    classes: u8,
    unit: StartUnit,
) -> Result<MessageDag, InputError> {
    let at = |line, key: &str, value: &dyn std::fmt::Display, problem: &str, allowed: &str| {
        InputError::at_line(src, line, key, value, problem, allowed)
    };
    let num = |line, key: &str, v: Option<&str>, allowed: &str| -> Result<u64, InputError> {
        let v = v.ok_or_else(|| at(line, key, &"(missing)", "no value", allowed))?;
        v.parse::<u64>()
            .map_err(|_| at(line, key, &v, "not a non-negative integer", allowed))
    };
    let mut nodes: Option<u64> = None;
    let mut declared: Option<(usize, u64)> = None;
    let mut conns: Vec<Conn> = Vec::new();
    let mut triggers: HashMap<u64, Trigger> = HashMap::new();
    for (i, raw) in src.text.lines().enumerate() {
        let line = i + 1;
        let l = raw.split('#').next().unwrap_or("").trim();
        let mut w = l.split_whitespace();
        let Some(first) = w.next() else { continue };
        match first {
            "Nodes" => {
                let n = num(
                    line,
                    "Nodes",
                    w.next(),
                    "the topology's host count or fewer",
                )?;
                if n == 0 || n > hosts as u64 {
                    return Err(at(
                        line,
                        "Nodes",
                        &n,
                        &format!("the network has {hosts} hosts"),
                        &format!("1 to {hosts}"),
                    ));
                }
                nodes = Some(n);
            }
            "Connections" => {
                declared = Some((line, num(line, "Connections", w.next(), "a count")?))
            }
            "Triggers" => {
                num(line, "Triggers", w.next(), "a count")?;
            }
            "Failures" => {
                return Err(at(
                    line,
                    "Failures",
                    &l,
                    "link failures in the connection matrix are not read",
                    "[[faults.link]] in the scenario",
                ));
            }
            "trigger" => {
                if w.next() != Some("id") {
                    return Err(at(
                        line,
                        "trigger",
                        &l,
                        "not a trigger line",
                        "`trigger id <id> oneshot` or `trigger id <id> barrier count <n>`",
                    ));
                }
                let id = num(line, "trigger id", w.next(), "a trigger id")?;
                let barrier = match w.next() {
                    Some("oneshot") => None,
                    Some("barrier") => match (w.next(), w.next()) {
                        (Some("count"), v) => {
                            Some(num(line, "count", v, "activations before it fires")?)
                        }
                        _ => {
                            return Err(at(
                                line,
                                "barrier",
                                &l,
                                "a barrier without its count",
                                "`barrier count <n>`",
                            ));
                        }
                    },
                    Some("multishot") => {
                        return Err(at(
                            line,
                            "multishot",
                            &id,
                            "a multishot trigger starts a connection per activation, which a message DAG does not express",
                            "oneshot, or barrier count <n>",
                        ));
                    }
                    other => {
                        return Err(at(
                            line,
                            "trigger",
                            &other.unwrap_or("(missing)"),
                            "unknown trigger kind",
                            "oneshot, barrier",
                        ));
                    }
                };
                if triggers
                    .insert(
                        id,
                        Trigger {
                            line,
                            barrier,
                            activators: Vec::new(),
                        },
                    )
                    .is_some()
                {
                    return Err(at(
                        line,
                        "trigger id",
                        &id,
                        "a trigger defined twice",
                        "each trigger id once",
                    ));
                }
            }
            conn => {
                let Some(n) = nodes else {
                    return Err(at(
                        line,
                        "Nodes",
                        &conn,
                        "a connection before the `Nodes` header",
                        "`Nodes <n>` first",
                    ));
                };
                let ends = conn
                    .split_once("->")
                    .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
                let Some((s, d)) = ends else {
                    return Err(at(
                        line,
                        "connection",
                        &conn,
                        "not `<src>-><dst>`",
                        "`<src>-><dst> start <t> size <bytes>` with host ids",
                    ));
                };
                for v in [s, d] {
                    if v >= n {
                        return Err(at(
                            line,
                            "connection",
                            &conn,
                            &format!("node {v} beyond Nodes {n}"),
                            &format!("host ids 0 to {}", n - 1),
                        ));
                    }
                }
                if s == d {
                    return Err(at(
                        line,
                        "connection",
                        &conn,
                        "a connection from a host to itself",
                        "two different hosts",
                    ));
                }
                let mut c = Conn {
                    line,
                    src: s as u32,
                    dst: d as u32,
                    bytes: 0,
                    start: Time::ZERO,
                    trigger: None,
                    activates: None,
                    class: None,
                };
                let (mut started, mut sized) = (false, false);
                while let Some(key) = w.next() {
                    match key {
                        "id" => {
                            if num(line, "id", w.next(), "a non-zero connection id")? == 0 {
                                return Err(at(
                                    line,
                                    "id",
                                    &0,
                                    "connection ids start at 1",
                                    "a non-zero id",
                                ));
                            }
                        }
                        "start" => {
                            let v = num(
                                line,
                                "start",
                                w.next(),
                                "a start time in the scenario's traffic.start_unit",
                            )?;
                            // One day at most, as the ns-3 flow file's start (`bounded_secs`).
                            let day = match unit {
                                StartUnit::Us => 86_400_000_000,
                                StartUnit::Ps => 86_400_000_000_000_000,
                            };
                            if v > day {
                                return Err(at(
                                    line,
                                    "start",
                                    &v,
                                    "beyond one day",
                                    "a start within 86,400 s",
                                ));
                            }
                            c.start = match unit {
                                StartUnit::Us => Time::from_us(v),
                                StartUnit::Ps => Time::from_ps(v),
                            };
                            started = true;
                        }
                        "trigger" => {
                            c.trigger = Some(num(line, "trigger", w.next(), "a trigger id")?);
                            started = true;
                        }
                        "size" => {
                            c.bytes = num(line, "size", w.next(), "bytes, positive")?;
                            if let Err(e) = fabricsim_core::units::bounded_bytes(c.bytes) {
                                return Err(at(
                                    line,
                                    "size",
                                    &c.bytes,
                                    &e.to_string(),
                                    "a size up to 2^50 B",
                                ));
                            }
                            if c.bytes == 0 {
                                return Err(at(
                                    line,
                                    "size",
                                    &0,
                                    "size 0 is htsim's endless flow, which has no completion to time",
                                    "a positive size in bytes",
                                ));
                            }
                            sized = true;
                        }
                        "recv_done_trigger" => {
                            c.activates =
                                Some(num(line, "recv_done_trigger", w.next(), "a trigger id")?)
                        }
                        "send_done_trigger" => {
                            return Err(at(
                                line,
                                "send_done_trigger",
                                &l,
                                "fires when the sender is done, before delivery; a message DAG waits for delivery",
                                "recv_done_trigger",
                            ));
                        }
                        "prio" => {
                            let p = num(line, "prio", w.next(), "a traffic class")?;
                            if p >= classes as u64 {
                                return Err(at(
                                    line,
                                    "prio",
                                    &p,
                                    &format!("the fabric has {classes} traffic classes"),
                                    &format!("0 to {}", classes.saturating_sub(1)),
                                ));
                            }
                            c.class = Some(p as u8);
                        }
                        other => {
                            return Err(at(
                                line,
                                other,
                                &l,
                                "not a connection field fabricsim reads",
                                "id, start, trigger, size, recv_done_trigger, prio",
                            ));
                        }
                    }
                }
                if !started || !sized {
                    return Err(at(
                        line,
                        if sized { "start" } else { "size" },
                        &conn,
                        "a connection needs a start (or a trigger) and a size",
                        "`start <t>` or `trigger <id>`, and `size <bytes>`",
                    ));
                }
                conns.push(c);
            }
        }
    }
    if let Some((line, n)) = declared
        && n != conns.len() as u64
    {
        return Err(at(
            line,
            "Connections",
            &n,
            &format!("the file has {} connection lines", conns.len()),
            "the number of connection lines",
        ));
    }
    for (k, c) in conns.iter().enumerate() {
        if let Some(t) = c.activates {
            let Some(tr) = triggers.get_mut(&t) else {
                return Err(at(
                    c.line,
                    "recv_done_trigger",
                    &t,
                    "no such trigger",
                    "a trigger id defined by a `trigger id` line",
                ));
            };
            tr.activators.push(k);
        }
    }
    // Each connection's dependencies: the activators of its trigger.
    let mut deps: Vec<&[usize]> = vec![&[]; conns.len()];
    for (k, c) in conns.iter().enumerate() {
        if let Some(t) = c.trigger {
            let Some(tr) = triggers.get(&t) else {
                return Err(at(
                    c.line,
                    "trigger",
                    &t,
                    "no such trigger",
                    "a trigger id defined by a `trigger id` line",
                ));
            };
            match tr.barrier {
                None if tr.activators.len() > 1 => {
                    return Err(at(
                        tr.line,
                        "oneshot",
                        &t,
                        &format!(
                            "fires on the first of its {} activators (any-of), which a message DAG does not express",
                            tr.activators.len()
                        ),
                        "one recv_done_trigger per oneshot trigger, or a barrier counting them all",
                    ));
                }
                Some(n) if n != tr.activators.len() as u64 => {
                    return Err(at(
                        tr.line,
                        "count",
                        &n,
                        &format!("{} connections activate it", tr.activators.len()),
                        "a count equal to its activators",
                    ));
                }
                _ if tr.activators.is_empty() => {
                    return Err(at(
                        tr.line,
                        "trigger id",
                        &t,
                        "no connection activates it, so what it starts never starts",
                        "a recv_done_trigger naming it",
                    ));
                }
                _ => deps[k] = &tr.activators,
            }
        }
    }
    // Pushed in dependency order (Kahn's algorithm, ready connections in file order); a cycle
    // of triggers never starts.
    let mut waiting: Vec<usize> = deps.iter().map(|d| d.len()).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); conns.len()];
    for (k, d) in deps.iter().enumerate() {
        for &a in d.iter() {
            dependents[a].push(k);
        }
    }
    let mut ready: std::collections::VecDeque<usize> =
        (0..conns.len()).filter(|&k| waiting[k] == 0).collect();
    let mut pushed: Vec<Option<u32>> = vec![None; conns.len()];
    let mut dag = MessageDag::default();
    let mut ids: Vec<u32> = Vec::new();
    while let Some(k) = ready.pop_front() {
        ids.clear();
        ids.extend(
            deps[k]
                .iter()
                .map(|&d| pushed[d].expect("a dependency comes first")),
        );
        let c = &conns[k];
        let id = dag.push(HostId(c.src), HostId(c.dst), c.bytes, c.start, &ids);
        dag.messages[id as usize].class = c.class;
        pushed[k] = Some(id);
        for &n in &dependents[k] {
            waiting[n] -= 1;
            if waiting[n] == 0 {
                ready.push_back(n);
            }
        }
    }
    if let Some(k) = pushed.iter().position(Option::is_none) {
        return Err(at(
            conns[k].line,
            "trigger",
            &conns[k].trigger.unwrap_or(0),
            "its trigger waits on itself through a cycle of triggers",
            "triggers that form no cycle",
        ));
    }
    Ok(dag)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dag(text: &str) -> Result<MessageDag, InputError> {
        read(&Source::new("ring.cm", text), 8, 8, StartUnit::Us)
    }

    #[test]
    fn triggers_become_dependencies_and_starts_take_the_unit() {
        // A 3-step chain 0->1->2->3, then a barrier fan-in to 3->0.
        let text = "Nodes 4\nConnections 5\nTriggers 3\n\
            0->1 id 1 start 10 size 1000 recv_done_trigger 1\n\
            1->2 id 2 trigger 1 size 1000 recv_done_trigger 2\n\
            2->3 id 3 trigger 2 size 1000 recv_done_trigger 3\n\
            1->3 id 4 start 0 size 500 recv_done_trigger 3 prio 2\n\
            3->0 id 5 trigger 3 size 1000\n\
            trigger id 1 oneshot\ntrigger id 2 oneshot\ntrigger id 3 barrier count 2\n";
        let d = dag(text).unwrap();
        assert_eq!(d.messages.len(), 5);
        let m = |src: u32, dst: u32| {
            d.messages
                .iter()
                .position(|x| (x.src, x.dst) == (HostId(src), HostId(dst)))
                .unwrap()
        };
        let deps = |k: usize| {
            let x = &d.messages[k];
            let mut v: Vec<u32> =
                d.deps[x.deps_start as usize..(x.deps_start + x.deps_len) as usize].to_vec();
            v.sort();
            v
        };
        assert_eq!(d.messages[m(0, 1)].start, Time::from_us(10));
        assert_eq!(deps(m(1, 2)), [m(0, 1) as u32]);
        let mut fan = vec![m(2, 3) as u32, m(1, 3) as u32];
        fan.sort();
        assert_eq!(deps(m(3, 0)), fan);
        assert_eq!(d.messages[m(1, 3)].class, Some(2));
        let ps = read(
            &Source::new("x.cm", "Nodes 2\n0->1 start 7 size 1\n"),
            2,
            1,
            StartUnit::Ps,
        )
        .unwrap();
        assert_eq!(ps.messages[0].start, Time::from_ps(7));
    }

    #[test]
    fn what_a_dag_cannot_say_is_refused_naming_the_line() {
        for (text, line, want) in [
            ("Nodes 2\n0->1 start 0 size 0\n", 2, "endless"),
            (
                "Nodes 2\n0->1 start 0 size 5 send_done_trigger 1\n",
                2,
                "before delivery",
            ),
            ("Nodes 2\ntrigger id 1 multishot\n", 2, "multishot"),
            (
                "Nodes 3\n0->1 start 0 size 5 recv_done_trigger 1\n1->2 start 0 size 5 recv_done_trigger 1\n2->0 trigger 1 size 5\ntrigger id 1 oneshot\n",
                5,
                "any-of",
            ),
            (
                "Nodes 2\n0->1 trigger 1 size 5 recv_done_trigger 1\ntrigger id 1 oneshot\n",
                2,
                "cycle",
            ),
            (
                "Nodes 2\nConnections 2\n0->1 start 0 size 5\n",
                2,
                "1 connection lines",
            ),
            ("Nodes 9\n", 1, "8 hosts"),
            ("Nodes 2\n0->2 start 0 size 5\n", 2, "beyond Nodes 2"),
            ("0->1 start 0 size 5\n", 1, "before the `Nodes` header"),
            ("Nodes 2\nFailures 1\n", 2, "faults.link"),
            (
                "Nodes 2\n0->1 start 99999999999999 size 5\n",
                2,
                "beyond one day",
            ),
            ("Nodes 2\n0->1 start 0 size 9999999999999999\n", 2, "2^50"),
        ] {
            let e = dag(text).unwrap_err();
            assert_eq!(e.line, Some(line), "{text}: {e}");
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }
}
