//! Chakra execution traces (`io::chakra`, one per rank; rank r is GPU r of the placement) as one
//! message DAG, issued as Chakra's ET feeder issues nodes (a node starts when its dependencies
//! have finished; mlcommons/chakra `src/feeder/et_feeder.cpp`): a compute node is a gap of its
//! `duration_micros` after its dependencies (`MessageDag::dep_gaps`); a collective is compiled by
//! `collective::append` over its process group (every rank, or the ranks whose traces name its
//! `pg_name`; the k-th collective of a group on each of them is one collective), each rank's
//! sends gated by that rank's own dependencies; a send and its receive (the k-th from one rank
//! to another with one `comm_tag`) are one message, gated by both sides' dependencies (the
//! receiver posts its buffer first, as NCCL's point-to-point rendezvous). A communication node's
//! own `duration_micros` (the traced time) is not used: the fabric times it. A rank is not a
//! sequential processor: independent compute nodes of one rank overlap, as the trace's
//! dependencies allow.

use std::collections::BTreeMap;

use crate::setup::build::SimSetup;
use crate::workload::collective::{self, Algo, Builder, CollectiveSpec, Comm, Frontier, Op};
use crate::workload::placement::Placement;
use fabricsim_core::error::InputError;
use fabricsim_core::message::MessageDag;
use fabricsim_core::units::{BitRate, Time};
use fabricsim_input::io::chakra::{Coll, RankTrace, Work};
use fabricsim_input::scenario::Scenario;

/// When a node is done: at `max(base, max over edges of finish(message) + gap)`.
#[derive(Clone, Debug, Default)]
struct Done {
    base: Time,
    edges: BTreeMap<u32, Time>,
}

impl Done {
    fn merge(&mut self, o: &Done) {
        self.base = self.base.max(o.base);
        for (&m, &g) in &o.edges {
            let e = self.edges.entry(m).or_insert(g);
            *e = (*e).max(g);
        }
    }

    fn after(mut self, d: Time) -> Done {
        self.base += d;
        for g in self.edges.values_mut() {
            *g += d;
        }
        self
    }
}

/// What matches communication nodes across ranks: the k-th collective of a process group
/// (`""`: every rank), the k-th send from one rank to another with a tag.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Coll(String, u64),
    P2p {
        src: u32,
        dst: u32,
        tag: u64,
        k: u64,
    },
}

fn op_of(c: Coll) -> Op {
    match c {
        Coll::AllReduce => Op::AllReduce,
        Coll::Reduce => Op::Reduce,
        Coll::AllGather => Op::AllGather,
        Coll::Broadcast => Op::Broadcast,
        Coll::AllToAll => Op::AllToAll,
        Coll::ReduceScatter => Op::ReduceScatter,
    }
}

/// The k-th, said in words.
fn nth(k: u64) -> String {
    let k = k + 1;
    let suffix = match (k % 10, k % 100) {
        (1, r) if r != 11 => "st",
        (2, r) if r != 12 => "nd",
        (3, r) if r != 13 => "rd",
        _ => "th",
    };
    format!("{k}{suffix}")
}

fn err(
    t: &RankTrace,
    id: u64,
    key: &str,
    value: impl std::fmt::Display,
    problem: String,
    allowed: &str,
) -> InputError {
    InputError {
        file: t.file.clone(),
        line: None,
        key: format!("node {id} {key}"),
        value: value.to_string(),
        problem,
        allowed: allowed.into(),
    }
}

/// Compiles `setup`'s Chakra traces (when its traffic is `kind = "chakra"`) into its DAG on
/// scenario `sc`'s GPUs, with its NCCL channels and NVLink rate.
pub fn complete(sc: &Scenario, setup: &mut SimSetup) -> Result<(), InputError> {
    let Some(traces) = setup.chakra.take() else {
        return Ok(());
    };
    let d = sc.design()?;
    let place = Placement::on_topology(&setup.net.topo, d.spec.gpus_per_node);
    let nics = d.spec.nics_per_node;
    setup.dag = compile(&traces, &place, d.gpu.nvlink_rate(), |a, ranks| {
        collective::nccl_channels(&d.nccl, nics, a, ranks)
    })?;
    Ok(())
}

/// The traces as one DAG on `place` (`traces[r]` on GPU r); `channels` gives a collective's
/// NCCL channels by its algorithm and its group's rank count.
pub fn compile(
    traces: &[RankTrace],
    place: &Placement,
    nvlink: BitRate,
    channels: impl Fn(Algo, u32) -> u32,
) -> Result<MessageDag, InputError> {
    let ranks = traces.len();
    // Each communication node's key, and each key's nodes (rank, index) in rank order.
    let mut keys: Vec<Vec<Option<Key>>> = Vec::with_capacity(ranks);
    let mut by_key: BTreeMap<Key, Vec<(usize, usize)>> = BTreeMap::new();
    let mut groups: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (r, t) in traces.iter().enumerate() {
        let mut count: BTreeMap<Key, u64> = BTreeMap::new();
        let mut next = |k: Key| {
            let c = count.entry(k).or_insert(0);
            *c += 1;
            *c - 1
        };
        let mut ks = Vec::with_capacity(t.nodes.len());
        for (i, n) in t.nodes.iter().enumerate() {
            let key = match &n.work {
                Work::Compute(_) => None,
                Work::Coll { pg, .. } => {
                    let g = pg.clone().unwrap_or_default();
                    let members = groups.entry(g.clone()).or_default();
                    if members.last() != Some(&(r as u32)) {
                        members.push(r as u32);
                    }
                    let k = next(Key::Coll(g.clone(), 0));
                    Some(Key::Coll(g, k))
                }
                &Work::Send { peer, tag, .. } | &Work::Recv { peer, tag, .. } => {
                    // A rank sends to others only, so its receives' keys never meet its sends'.
                    let (src, dst) = match n.work {
                        Work::Send { .. } => (r as u32, peer),
                        _ => (peer, r as u32),
                    };
                    let k = next(Key::P2p {
                        src,
                        dst,
                        tag,
                        k: 0,
                    });
                    Some(Key::P2p { src, dst, tag, k })
                }
            };
            if let Some(k) = &key {
                by_key.entry(k.clone()).or_default().push((r, i));
            }
            ks.push(key);
        }
        keys.push(ks);
    }
    // The world group, when named by no pg_name, is every rank.
    if let Some(w) = groups.get_mut("") {
        *w = (0..ranks as u32).collect();
    }
    // Every key's nodes agree: all members present, the same collective and size.
    for (key, nodes) in &by_key {
        let (r0, i0) = nodes[0];
        let (t0, n0) = (&traces[r0], &traces[r0].nodes[i0]);
        let want: Vec<u32> = match key {
            Key::Coll(g, _) => groups[g].clone(),
            Key::P2p { src, dst, .. } => vec![*src, *dst],
        };
        let have: Vec<u32> = nodes.iter().map(|&(r, _)| r as u32).collect();
        if let Some(&miss) = want.iter().find(|m| !have.contains(m)) {
            let (what, k) = match key {
                Key::Coll(g, k) if g.is_empty() => ("collective over every rank".to_string(), *k),
                Key::Coll(g, k) => (format!("collective of process group `{g}`"), *k),
                Key::P2p { src, dst, tag, k } => {
                    let side = if r0 as u32 == *src { "receive" } else { "send" };
                    (
                        format!("{side} from rank {src} to rank {dst} with tag {tag}"),
                        *k,
                    )
                }
            };
            return Err(err(
                t0,
                n0.id,
                "comm",
                &n0.work,
                format!(
                    "rank {miss}'s trace ({}) has no {} {what} to match it",
                    traces[miss as usize].file,
                    nth(k)
                ),
                "traces whose ranks issue the same communication in the same order",
            ));
        }
        if let Key::Coll(g, _) = key
            && want.len() < 2
        {
            return Err(err(
                t0,
                n0.id,
                "pg_name",
                format!("\"{g}\""),
                "only this rank's trace names the process group".into(),
                "a group of two or more ranks",
            ));
        }
        let size = |w: &Work| match w {
            Work::Coll { op, bytes, .. } => (Some(*op), *bytes),
            Work::Send { bytes, .. } | Work::Recv { bytes, .. } => (None, *bytes),
            Work::Compute(_) => unreachable!("compute nodes have no key"),
        };
        for &(r, i) in &nodes[1..] {
            let n = &traces[r].nodes[i];
            if size(&n.work) != size(&n0.work) {
                return Err(err(
                    &traces[r],
                    n.id,
                    "comm_type/comm_size",
                    &n.work,
                    format!(
                        "its match on rank {r0} (node {} of {}) is a {}",
                        n0.id, t0.file, n0.work
                    ),
                    "the same collective and comm_size on every rank of it",
                ));
            }
        }
    }
    // Issue nodes as their dependencies finish; a communication once all its nodes are ready.
    let mut b = Builder::recording_senders(place, nvlink);
    let mut done: Vec<Vec<Option<Done>>> =
        traces.iter().map(|t| vec![None; t.nodes.len()]).collect();
    let mut ready_of: BTreeMap<(usize, usize), Done> = BTreeMap::new();
    let mut pending: Vec<Vec<usize>> = traces
        .iter()
        .map(|t| t.nodes.iter().map(|n| n.deps.len()).collect())
        .collect();
    let mut children: Vec<Vec<Vec<usize>>> = traces
        .iter()
        .map(|t| vec![Vec::new(); t.nodes.len()])
        .collect();
    for (r, t) in traces.iter().enumerate() {
        for (i, n) in t.nodes.iter().enumerate() {
            for &d in &n.deps {
                children[r][d as usize].push(i);
            }
        }
    }
    let mut work: std::collections::VecDeque<(usize, usize)> = std::collections::VecDeque::new();
    for (r, p) in pending.iter().enumerate() {
        work.extend(
            p.iter()
                .enumerate()
                .filter(|&(_, &c)| c == 0)
                .map(|(i, _)| (r, i)),
        );
    }
    let mut arrived: BTreeMap<Key, usize> = BTreeMap::new();
    while let Some((r, i)) = work.pop_front() {
        let n = &traces[r].nodes[i];
        let mut ready = Done::default();
        for &d in &n.deps {
            ready.merge(
                done[r][d as usize]
                    .as_ref()
                    .expect("a dependency is done first"),
            );
        }
        let finished: Vec<((usize, usize), Done)> = match (&n.work, &keys[r][i]) {
            (Work::Compute(d), _) => vec![((r, i), ready.after(*d))],
            (_, Some(key)) => {
                ready_of.insert((r, i), ready);
                let c = arrived.entry(key.clone()).or_insert(0);
                *c += 1;
                let nodes = &by_key[key];
                if *c < nodes.len() {
                    continue;
                }
                let readies: Vec<Done> = nodes
                    .iter()
                    .map(|p| ready_of.remove(p).expect("arrived"))
                    .collect();
                let outs = match &n.work {
                    Work::Coll { op, bytes, pg } => {
                        let members = &groups[&pg.clone().unwrap_or_default()];
                        coll(
                            &mut b,
                            place,
                            members,
                            op_of(*op),
                            *bytes,
                            &readies,
                            &channels,
                        )?
                    }
                    Work::Send { bytes, .. } | Work::Recv { bytes, .. } => {
                        let Key::P2p { src, dst, .. } = key else {
                            unreachable!("a send's key is point-to-point")
                        };
                        p2p(&mut b, *src, *dst, &readies, *bytes)
                    }
                    Work::Compute(_) => unreachable!("matched above"),
                };
                nodes.iter().copied().zip(outs).collect()
            }
            (_, None) => unreachable!("every communication node has a key"),
        };
        for ((r, i), d) in finished {
            done[r][i] = Some(d);
            for &c in &children[r][i] {
                pending[r][c] -= 1;
                if pending[r][c] == 0 {
                    work.push_back((r, c));
                }
            }
        }
    }
    // A node never done waits, through its dependencies, on a node that waits for it.
    for (r, t) in traces.iter().enumerate() {
        if let Some(i) =
            (0..t.nodes.len()).find(|&i| done[r][i].is_none() && ready_of.contains_key(&(r, i)))
        {
            let key = keys[r][i].as_ref().expect("only communication waits");
            let (q, j) = by_key[key]
                .iter()
                .copied()
                .find(|p| !ready_of.contains_key(p))
                .expect("a node of it has not arrived");
            return Err(err(
                t,
                t.nodes[i].id,
                "comm",
                &t.nodes[i].work,
                format!(
                    "never starts: its match, node {} of rank {q} ({}), waits on dependencies that wait on this one",
                    traces[q].nodes[j].id, traces[q].file
                ),
                "ranks that issue their communication in orders that do not deadlock",
            ));
        }
    }
    Ok(b.finish())
}

/// A collective of `members` (comm rank p = GPU `members[p]`) after `readies`; the messages a
/// rank sends wait for its own readiness with its gaps. Returns each member's done.
fn coll(
    b: &mut Builder,
    place: &Placement,
    members: &[u32],
    op: Op,
    bytes: u64,
    readies: &[Done],
    channels: &impl Fn(Algo, u32) -> u32,
) -> Result<Vec<Done>, InputError> {
    let comm = Comm {
        place,
        gpus: members.to_vec(),
    };
    let algo = Algo::for_op(op)[0];
    let spec = CollectiveSpec::with_defaults(op, bytes, channels(algo, members.len() as u32));
    let frontier: Frontier = readies
        .iter()
        .map(|d| d.edges.keys().copied().collect())
        .collect();
    let first = b.dag.messages.len() as u32;
    let out = collective::append(b, &spec, &comm, &frontier)?;
    let rank_of: BTreeMap<u32, usize> = members.iter().enumerate().map(|(p, &g)| (g, p)).collect();
    for m in first..b.dag.messages.len() as u32 {
        let own = &readies[rank_of[&b.sender(m)]];
        gate(&mut b.dag, m, first, own, readies);
    }
    Ok(out
        .into_iter()
        .zip(readies)
        .map(|(f, ready)| {
            if f.is_empty() {
                ready.clone()
            } else {
                finished(&f)
            }
        })
        .collect())
}

/// Message `m`'s dependencies before `first` (readiness) take their gaps from its sender's
/// `own` readiness (from another rank's when a compiler gates it on that rank, the largest);
/// it starts no earlier than `own`'s base.
fn gate(dag: &mut MessageDag, m: u32, first: u32, own: &Done, all: &[Done]) {
    let deps: Vec<u32> = dag.deps_of(m).to_vec();
    for (k, d) in deps.into_iter().enumerate() {
        if d >= first {
            continue;
        }
        let gap = own.edges.get(&d).copied().unwrap_or_else(|| {
            all.iter()
                .filter_map(|r| r.edges.get(&d))
                .copied()
                .max()
                .unwrap_or(Time::ZERO)
        });
        if gap > Time::ZERO {
            dag.set_gap(m, k as u32, gap);
        }
    }
    let msg = &mut dag.messages[m as usize];
    msg.start = msg.start.max(own.base);
}

/// Done when the messages `f` have finished.
fn finished(f: &[u32]) -> Done {
    Done {
        base: Time::ZERO,
        edges: f.iter().map(|&m| (m, Time::ZERO)).collect(),
    }
}

/// A send from GPU `src` and its receive at `dst` as one message after both sides'
/// readiness (`readies`).
fn p2p(b: &mut Builder, src: u32, dst: u32, readies: &[Done], bytes: u64) -> Vec<Done> {
    let mut both = readies[0].clone();
    both.merge(&readies[1]);
    let deps: Vec<u32> = both.edges.keys().copied().collect();
    let m = b.send(src, dst, bytes, &deps, 0, 0);
    gate(&mut b.dag, m, m, &both, readies);
    vec![finished(&[m]); 2]
}
