//! The ns-3 HPCC topology and flow files (HPCC ns-3 `mix/topology.txt` and `mix/flow.txt`,
//! alibaba-edu/High-Precision-Congestion-Control), read into a [`Topology`] and
//! a [`MessageDag`], and a topology written back out.
//!
//! Topology: `<nodes> <switches> <links>`, the switch ids, then `<a> <b> <rate> <delay>
//! <error_rate>` per link. Hosts are the ids not listed as switches; tiers and link
//! directions as every imported network's ([`imported::build`]).

use fabricsim_core::error::{CoreError, InputError, Source};
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{HostId, NodeKind, Topology};
use fabricsim_core::units::{Time, bounded_bytes, bounded_secs, parse_rate, parse_time};

use super::imported::{self, ImportedTopology, Link, Unfit};
use super::tokens::{Tokens, parse_u64};

/// The most nodes a topology file may declare.
const MAX_NODES: u64 = 1 << 22;

pub fn read_topology(src: &Source) -> Result<ImportedTopology, InputError> {
    let mut t = Tokens::new(src);
    let (_, n) = t.parse("node_num", "a positive integer", parse_u64)?;
    let (_, ns) = t.parse("switch_num", "an integer below node_num", parse_u64)?;
    let (_, nl) = t.parse("link_num", "a positive integer", parse_u64)?;
    let at = |line, key: &str, value: &dyn std::fmt::Display, problem: &str, allowed: &str| {
        InputError::at_line(src, line, key, value, problem, allowed)
    };
    // 2^22 nodes: four times the largest designed cluster's NICs and switches (2^20 GPUs).
    if n == 0 || ns > n || n > MAX_NODES {
        return Err(at(
            1,
            "node_num",
            &n,
            "must be positive and at least switch_num",
            "1 to 4194304 (2^22)",
        ));
    }
    let n = n as usize;
    let id_allowed = format!("a node id from 0 to {}", n - 1);
    let mut is_switch = vec![false; n];
    for _ in 0..ns {
        let (line, id) = t.parse("switch id", &id_allowed, parse_u64)?;
        if id as usize >= n {
            return Err(at(line, "switch id", &id, "beyond node_num", &id_allowed));
        }
        if is_switch[id as usize] {
            return Err(at(
                line,
                "switch id",
                &id,
                "listed twice",
                "each switch id once",
            ));
        }
        is_switch[id as usize] = true;
    }
    // Room for what the file can hold (5 tokens a link), not for what its header claims.
    let mut links = Vec::with_capacity((nl as usize).min(t.left() / 5));
    let mut lines = Vec::with_capacity(links.capacity());
    for _ in 0..nl {
        let (line, a) = t.parse("link src", &id_allowed, parse_u64)?;
        let (_, b) = t.parse("link dst", &id_allowed, parse_u64)?;
        for v in [a, b] {
            if v as usize >= n {
                return Err(at(line, "link end", &v, "beyond node_num", &id_allowed));
            }
        }
        if a == b {
            return Err(at(
                line,
                "link dst",
                &b,
                "a link from a node to itself",
                "two different nodes",
            ));
        }
        let (_, rate) = t.parse("data_rate", "an ns-3 DataRate such as 100Gbps", parse_rate)?;
        let (_, delay) = t.parse(
            "link_delay",
            "an ns-3 Time such as 1000ns or 0.001ms",
            parse_time,
        )?;
        let (eline, err) = t.parse("error_rate", "a probability 0 <= p < 1", |s| {
            s.parse::<f64>().map_err(|_| "not a number".to_string())
        })?;
        if !(0.0..1.0).contains(&err) {
            return Err(at(
                eline,
                "error_rate",
                &err,
                "out of range",
                "a probability 0 <= p < 1",
            ));
        }
        links.push(Link {
            a: a as usize,
            b: b as usize,
            rate,
            delay,
            loss: err,
        });
        lines.push(line);
    }
    if let Some((line, tok)) = t.rest() {
        return Err(at(
            line,
            "(extra)",
            &tok,
            "more tokens than the header's link_num announces",
            "exactly link_num link lines",
        ));
    }
    imported::build(&is_switch, &links).map_err(|u| match u {
        Unfit::NoHost => at(
            2,
            "switch id",
            &ns,
            "every node is a switch",
            "at least one host",
        ),
        Unfit::Unreachable(i) => at(
            2,
            "switch id",
            &i,
            "this switch is not connected to any host",
            "switches reachable from a host",
        ),
        Unfit::HostLinks(i, k) => at(
            1,
            "node",
            &i,
            &format!("host with {k} links"),
            "hosts (ids not listed as switches) with exactly one link",
        ),
        Unfit::SameTier(i) => at(
            lines[i],
            "link",
            &format!("{} {}", links[i].a, links[i].b),
            "joins two nodes at the same tier (up/down routing needs each link to go between tiers)",
            "links between adjacent tiers",
        ),
        Unfit::TooDeep => at(1, "node_num", &n, "too many tiers", "up to 255 tiers"),
    })
}

/// Writes `topo` in the ns-3 format: hosts first (ids 0..hosts, in host order), then switches.
pub fn write_topology(topo: &Topology) -> String {
    let hosts = topo.num_hosts();
    let mut id = vec![0usize; topo.nodes.len()];
    for (i, n) in topo.nodes.iter().enumerate() {
        if let NodeKind::Nic { host, .. } = n.kind {
            id[i] = host.idx();
        }
    }
    let mut switches = Vec::new();
    for (i, n) in topo.nodes.iter().enumerate() {
        if n.is_switch() {
            id[i] = hosts + switches.len();
            switches.push(id[i].to_string());
        }
    }
    let mut out = format!(
        "{} {} {}\n{}\n",
        topo.nodes.len(),
        switches.len(),
        topo.links.len(),
        switches.join(" ")
    );
    for l in &topo.links {
        let a = id[topo.ports[l.ends[0].idx()].node.idx()];
        let b = id[topo.ports[l.ends[1].idx()].node.idx()];
        let delay = if l.delay.0 % 1000 == 0 {
            format!("{}ns", l.delay.0 / 1000)
        } else {
            format!("{}ps", l.delay.0)
        };
        out.push_str(&format!("{a} {b} {} {delay} 0\n", l.rate));
    }
    out
}

/// The priority group HPCC's traffic_gen.py gives every flow (HPCC ns-3 `traffic_gen.py`).
pub const DATA_PG: u8 = 3;

/// Reads an ns-3 flow file into a DAG of independent messages. Start times are taken relative to
/// the first flow (ns-3 scenarios start at 2.0 s after their setup phase); flows must be sorted
/// by start time, as ns-3 requires. The priority group is the flow's traffic class, as in HPCC
/// ns-3 where `pg` is the switch queue index, except `pg` 3 (`DATA_PG`, what traffic_gen.py
/// writes: the RoCE lossless priority of the profiles) which is the fabric's data class; any
/// other `pg` must be below `classes`. The destination port is read and checked but not used.
pub fn read_flows(
    src: &Source,
    topo: &ImportedTopology,
    classes: u8,
) -> Result<MessageDag, InputError> {
    let mut t = Tokens::new(src);
    let (_, count) = t.parse("flow_num", "a non-negative integer", parse_u64)?;
    let n = topo.host_of.len();
    let host_allowed = "the id of a host (a node not listed as a switch) in the topology";
    let mut dag = MessageDag::default();
    let mut origin: Option<f64> = None;
    let mut prev = f64::NEG_INFINITY;
    for i in 0..count {
        let host = |t: &mut Tokens, field: &str| -> Result<HostId, InputError> {
            let (line, v) = t.parse(field, host_allowed, parse_u64)?;
            match topo.host_of.get(v as usize).copied().flatten() {
                Some(h) if (v as usize) < n => Ok(h),
                _ => Err(InputError::at_line(
                    src,
                    line,
                    field,
                    v,
                    "not a host of the topology",
                    host_allowed,
                )),
            }
        };
        let s = host(&mut t, "src")?;
        let d = host(&mut t, "dst")?;
        let pg_allowed = format!(
            "{DATA_PG} (the fabric's data class) or a class 0 to {}",
            classes.saturating_sub(1)
        );
        let (line, pg) = t.parse("priority_group", &pg_allowed, |s| {
            parse_u64(s).and_then(|v| {
                if v == DATA_PG as u64 || v < classes as u64 {
                    Ok(v as u8)
                } else {
                    Err(CoreError::Value(format!(
                        "beyond the fabric's {classes} traffic classes"
                    )))
                }
            })
        })?;
        if s == d {
            return Err(InputError::at_line(
                src,
                line,
                "dst",
                d.0,
                "a flow from a host to itself",
                "a different host",
            ));
        }
        t.parse("dst_port", "an integer 0 to 65535", |s| {
            parse_u64(s).and_then(|v| {
                if v < 65536 {
                    Ok(v)
                } else {
                    Err(CoreError::Value("beyond 65535".into()))
                }
            })
        })?;
        let (_, size) = t.parse("size_bytes", "a positive integer up to 2^50", |s| {
            parse_u64(s).and_then(|v| {
                if v > 0 {
                    bounded_bytes(v)
                } else {
                    Err(CoreError::Value("must be positive".into()))
                }
            })
        })?;
        let (sline, start) = t.parse(
            "start_time_seconds",
            "seconds up to 86400, non-decreasing down the file",
            |s| {
                let v = s
                    .parse::<f64>()
                    .map_err(|_| CoreError::Value("not a non-negative number of seconds".into()))?;
                bounded_secs(v).map(|_| v)
            },
        )?;
        if start < prev {
            return Err(InputError::at_line(
                src,
                sline,
                "start_time_seconds",
                start,
                format!("earlier than the previous flow ({prev})"),
                "flows sorted by start time (ns-3 reads them in order)",
            ));
        }
        prev = start;
        let o = *origin.get_or_insert(start);
        let m = dag.push(s, d, size, Time::from_secs_f64(start - o), &[]);
        dag.messages[m as usize].tag = i as u32;
        dag.messages[m as usize].class = (pg != DATA_PG).then_some(pg);
    }
    if let Some((line, tok)) = t.rest() {
        return Err(InputError::at_line(
            src,
            line,
            "(extra)",
            tok,
            "more tokens than flow_num announces",
            "exactly flow_num flow lines",
        ));
    }
    Ok(dag)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "7 3 6\n4 5 6\n0 4 100Gbps 1000ns 0\n1 4 100Gbps 1000ns 0\n2 5 100Gbps 1us 0.001\n3 5 100Gbps 1000ns 0\n4 6 400Gbps 0.001ms 0\n5 6 400Gbps 1000ns 0\n";

    #[test]
    fn reads_a_two_level_tree_and_writes_it_back() {
        let t = read_topology(&Source::new("t.txt", SMALL)).unwrap();
        assert_eq!(t.topo.num_hosts(), 4);
        assert_eq!(t.topo.tiers, 2);
        assert_eq!(t.link_loss.len(), 1);
        t.topo.check().unwrap();
        let text = write_topology(&t.topo);
        let again = read_topology(&Source::new("w.txt", &text)).unwrap();
        assert_eq!(write_topology(&again.topo), text);
    }

    #[test]
    fn names_the_bad_field_and_line() {
        let bad = SMALL.replace("1us", "1 parsec");
        let e = read_topology(&Source::new("t.txt", &bad)).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(5), "link_delay"));
        let e =
            read_topology(&Source::new("t.txt", SMALL.replace("3 5 100", "3 9 100"))).unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str(), e.value.as_str()),
            (Some(6), "link end", "9")
        );
    }

    #[test]
    fn flows_start_at_the_first_flow() {
        let t = read_topology(&Source::new("t.txt", SMALL)).unwrap();
        let f = "2\n0 2 3 100 1000 2.000000000\n1 3 3 100 5000 2.000001000\n";
        let dag = read_flows(&Source::new("f.txt", f), &t, 2).unwrap();
        assert_eq!(dag.messages[0].start, Time::ZERO);
        assert_eq!(dag.messages[1].start, Time::from_us(1));
        let e = read_flows(&Source::new("f.txt", "1\n0 4 3 100 1000 2.0\n"), &t, 2).unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "dst"));
    }

    #[test]
    fn the_priority_group_is_the_traffic_class_and_pg_3_the_data_class() {
        let t = read_topology(&Source::new("t.txt", SMALL)).unwrap();
        let f = "3\n0 2 3 100 1000 2.0\n1 3 0 100 1000 2.0\n0 3 1 100 1000 2.0\n";
        let dag = read_flows(&Source::new("f.txt", f), &t, 2).unwrap();
        let classes: Vec<_> = dag.messages.iter().map(|m| m.class).collect();
        assert_eq!(classes, vec![None, Some(0), Some(1)]);
        let e =
            read_flows(&Source::new("f.txt", f.replace(" 1 100", " 5 100")), &t, 2).unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str(), e.value.as_str()),
            (Some(4), "priority_group", "5")
        );
        assert!(e.allowed.contains("0 to 1"), "{e}");
    }
}
