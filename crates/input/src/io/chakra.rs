//! Chakra execution traces (MLCommons Chakra, `schema/protobuf/et_def.proto`), one file per rank
//! as Chakra writes them (`prefix.<rank>.et`): a `GlobalMetadata` message, then `Node` messages,
//! each preceded by its length as a varint (protobuf's length-delimited stream, Chakra's
//! `src/third_party/utils/protolib.py` `encodeMessage`). Read here into one [`RankTrace`] per
//! file, checked and in dependency order; `workload::chakra` compiles the ranks into a DAG.
//! Read: compute nodes (`COMP_NODE`, `duration_micros`), collectives (`COMM_COLL_NODE` with
//! `comm_type` and `comm_size`, optional `pg_name`), point-to-point (`COMM_SEND_NODE` with
//! `comm_dst`, `COMM_RECV_NODE` with `comm_src`, `comm_size`, optional `comm_tag`), and
//! `METADATA_NODE` (no work); `ctrl_deps` and `data_deps` both order nodes. Refused, naming the
//! file and node: memory, storage, batch and checkpoint nodes, the collectives fabricsim has no
//! compiler for (gather, scatter, reduce-scatter-block, barrier), `involved_dim` leaving a
//! dimension out (ASTRA-sim's network dimensions have no counterpart here), missing or
//! out-of-range attributes, duplicate ids, dangling dependencies and cycles.

use std::collections::{BTreeMap, VecDeque};

use fabricsim_core::error::InputError;
use fabricsim_core::units::{Time, bounded_bytes};
use prost::Message;

/// `AttributeProto` (et_def.proto): a name and one value; the list and float forms fabricsim
/// never reads are left undecoded (then `value` is `None`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Attribute {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(
        oneof = "Value",
        tags = "3, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 28, 29"
    )]
    pub value: Option<Value>,
}

/// `AttributeProto.value` (et_def.proto field numbers).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(double, tag = "3")]
    Double(f64),
    #[prost(int32, tag = "7")]
    Int32(i32),
    #[prost(int64, tag = "9")]
    Int64(i64),
    #[prost(uint32, tag = "11")]
    Uint32(u32),
    #[prost(uint64, tag = "13")]
    Uint64(u64),
    #[prost(sint32, tag = "15")]
    Sint32(i32),
    #[prost(sint64, tag = "17")]
    Sint64(i64),
    #[prost(fixed32, tag = "19")]
    Fixed32(u32),
    #[prost(fixed64, tag = "21")]
    Fixed64(u64),
    #[prost(sfixed32, tag = "23")]
    Sfixed32(i32),
    #[prost(sfixed64, tag = "25")]
    Sfixed64(i64),
    #[prost(bool, tag = "27")]
    Bool(bool),
    #[prost(message, tag = "28")]
    BoolList(BoolList),
    #[prost(string, tag = "29")]
    Str(String),
}

/// `BoolList` (et_def.proto).
#[derive(Clone, PartialEq, prost::Message)]
pub struct BoolList {
    #[prost(bool, repeated, tag = "1")]
    pub values: Vec<bool>,
}

/// `GlobalMetadata` (et_def.proto): the first message of a trace.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: String,
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<Attribute>,
}

/// `Node` (et_def.proto); `inputs`, `outputs` (8, 9) and `storage` (11) are not decoded.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    /// `NodeType`, kept as its number so that an unknown one is reported as written.
    #[prost(int32, tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    #[prost(uint64, tag = "6")]
    pub start_time_micros: u64,
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<Attribute>,
}

/// `NodeType` numbers (et_def.proto).
pub mod node_type {
    pub const METADATA: i32 = 1;
    pub const COMP: i32 = 4;
    pub const COMM_SEND: i32 = 5;
    pub const COMM_RECV: i32 = 6;
    pub const COMM_COLL: i32 = 7;
}

/// The `CollectiveCommType`s fabricsim compiles (et_def.proto numbers in [`Coll::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coll {
    AllReduce,
    Reduce,
    AllGather,
    Broadcast,
    AllToAll,
    ReduceScatter,
}

impl Coll {
    /// The collective of `CollectiveCommType` number `n`, or the name of one not compiled.
    pub fn of(n: i64) -> Result<Coll, &'static str> {
        Ok(match n {
            0 => Coll::AllReduce,
            1 => Coll::Reduce,
            2 => Coll::AllGather,
            5 => Coll::Broadcast,
            6 => Coll::AllToAll,
            7 => Coll::ReduceScatter,
            3 => return Err("GATHER"),
            4 => return Err("SCATTER"),
            8 => return Err("REDUCE_SCATTER_BLOCK"),
            9 => return Err("BARRIER"),
            _ => return Err("not a CollectiveCommType"),
        })
    }
}

/// What a node does.
#[derive(Clone, Debug, PartialEq)]
pub enum Work {
    /// Compute (or metadata: zero time) for its duration.
    Compute(Time),
    /// A collective of `bytes` over the process group `pg` (`None`: every rank).
    Coll {
        op: Coll,
        bytes: u64,
        pg: Option<String>,
    },
    /// A send of `bytes` to rank `peer` (`tag`: `comm_tag`, 0 when absent).
    Send { peer: u32, bytes: u64, tag: u64 },
    /// A receive of `bytes` from rank `peer`.
    Recv { peer: u32, bytes: u64, tag: u64 },
}

/// A checked node: its Chakra id, its work and its dependencies as indices into
/// [`RankTrace::nodes`] (all earlier).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceNode {
    pub id: u64,
    pub work: Work,
    pub deps: Vec<u32>,
}

/// One rank's trace: its file name (for errors) and its nodes in dependency order (ready nodes
/// in file order, Kahn's algorithm).
#[derive(Clone, Debug, PartialEq)]
pub struct RankTrace {
    pub file: String,
    pub nodes: Vec<TraceNode>,
}

/// Most nodes a trace may hold.
pub const MAX_NODES: usize = 1 << 22;
/// The longest compute node: one day, as other inputs' times (`units::MAX_TIME`).
const MAX_DURATION_US: u64 = 86_400_000_000;

/// An error at node `id` of `file`: `key` the field or attribute.
fn at(
    file: &str,
    id: u64,
    key: &str,
    value: impl std::fmt::Display,
    problem: &str,
    allowed: &str,
) -> InputError {
    InputError {
        file: file.to_string(),
        line: None,
        key: format!("node {id} {key}"),
        value: value.to_string(),
        problem: problem.to_string(),
        allowed: allowed.to_string(),
    }
}

/// Splits the length-delimited messages of `bytes`: each as (byte offset, message bytes).
fn records<'a>(file: &str, bytes: &'a [u8]) -> Result<Vec<(usize, &'a [u8])>, InputError> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let offset = bytes.len() - rest.len();
        let bad = |problem: &str| InputError {
            file: file.to_string(),
            line: None,
            key: format!("record at byte {offset}"),
            value: String::new(),
            problem: problem.to_string(),
            allowed: "a GlobalMetadata then Node messages, each after its length as a varint"
                .into(),
        };
        let len = prost::decode_length_delimiter(&mut rest)
            .map_err(|_| bad("not a varint length prefix"))?;
        if len > rest.len() {
            return Err(bad(&format!(
                "a length of {len} bytes with {} left in the file (truncated)",
                rest.len()
            )));
        }
        if out.len() > MAX_NODES {
            return Err(bad(&format!("more than {MAX_NODES} nodes")));
        }
        out.push((offset, &rest[..len]));
        rest = &rest[len..];
    }
    Ok(out)
}

/// An attribute's value as written (for errors).
fn shown(v: &Option<Value>) -> String {
    match v {
        Some(Value::Double(x)) => x.to_string(),
        Some(Value::Int32(x)) | Some(Value::Sint32(x)) | Some(Value::Sfixed32(x)) => x.to_string(),
        Some(Value::Int64(x)) | Some(Value::Sint64(x)) | Some(Value::Sfixed64(x)) => x.to_string(),
        Some(Value::Uint32(x)) | Some(Value::Fixed32(x)) => x.to_string(),
        Some(Value::Uint64(x)) | Some(Value::Fixed64(x)) => x.to_string(),
        Some(Value::Bool(x)) => x.to_string(),
        Some(Value::BoolList(l)) => format!("{:?}", l.values),
        Some(Value::Str(x)) => format!("\"{x}\""),
        None => "(a value of a kind not read)".into(),
    }
}

impl std::fmt::Display for Work {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Work::Compute(t) => write!(f, "compute of {} us", t.ps() / 1_000_000),
            Work::Coll { op, bytes, pg } => {
                write!(f, "{} of {bytes} B", op.name())?;
                match pg {
                    Some(g) => write!(f, " in process group \"{g}\""),
                    None => write!(f, " over every rank"),
                }
            }
            Work::Send { peer, bytes, tag } => {
                write!(f, "send of {bytes} B to rank {peer}, tag {tag}")
            }
            Work::Recv { peer, bytes, tag } => {
                write!(f, "receive of {bytes} B from rank {peer}, tag {tag}")
            }
        }
    }
}

impl Coll {
    /// Its `CollectiveCommType` name.
    pub fn name(self) -> &'static str {
        match self {
            Coll::AllReduce => "ALL_REDUCE",
            Coll::Reduce => "REDUCE",
            Coll::AllGather => "ALL_GATHER",
            Coll::Broadcast => "BROADCAST",
            Coll::AllToAll => "ALL_TO_ALL",
            Coll::ReduceScatter => "REDUCE_SCATTER",
        }
    }
}

/// An attribute's value as a non-negative integer, or why not.
fn int_of(v: &Option<Value>) -> Result<u64, &'static str> {
    let signed = |x: i64| u64::try_from(x).map_err(|_| "negative");
    match v {
        Some(Value::Int32(x)) | Some(Value::Sint32(x)) | Some(Value::Sfixed32(x)) => {
            signed(*x as i64)
        }
        Some(Value::Int64(x)) | Some(Value::Sint64(x)) | Some(Value::Sfixed64(x)) => signed(*x),
        Some(Value::Uint32(x)) | Some(Value::Fixed32(x)) => Ok(*x as u64),
        Some(Value::Uint64(x)) | Some(Value::Fixed64(x)) => Ok(*x),
        Some(_) => Err("not an integer"),
        None => Err("no value fabricsim reads"),
    }
}

/// Reads the trace of `rank` of `ranks` from `bytes` (the file `file`).
pub fn read(file: &str, bytes: &[u8], rank: u32, ranks: u32) -> Result<RankTrace, InputError> {
    let recs = records(file, bytes)?;
    let Some(&(_, meta)) = recs.first() else {
        return Err(InputError {
            file: file.to_string(),
            line: None,
            key: "GlobalMetadata".into(),
            value: String::new(),
            problem: "an empty file".into(),
            allowed: "a Chakra execution trace: a GlobalMetadata then Node messages".into(),
        });
    };
    GlobalMetadata::decode(meta).map_err(|e| InputError {
        file: file.to_string(),
        line: None,
        key: "GlobalMetadata".into(),
        value: String::new(),
        problem: format!("not a GlobalMetadata message ({e})"),
        allowed: "a Chakra execution trace (et_def.proto)".into(),
    })?;
    let mut raw: Vec<Node> = Vec::with_capacity(recs.len() - 1);
    for &(offset, r) in &recs[1..] {
        raw.push(Node::decode(r).map_err(|e| InputError {
            file: file.to_string(),
            line: None,
            key: format!("record at byte {offset}"),
            value: String::new(),
            problem: format!("not a Node message ({e})"),
            allowed: "a Chakra execution trace (et_def.proto)".into(),
        })?);
    }
    let mut index: BTreeMap<u64, usize> = BTreeMap::new();
    for (k, n) in raw.iter().enumerate() {
        if index.insert(n.id, k).is_some() {
            return Err(at(
                file,
                n.id,
                "id",
                n.id,
                "two nodes with this id",
                "each id once",
            ));
        }
    }
    let mut works = Vec::with_capacity(raw.len());
    for n in &raw {
        works.push(work(file, n, rank, ranks)?);
    }
    // Dependencies as indices; then Kahn's order, ready nodes in file order.
    let mut deps: Vec<Vec<usize>> = Vec::with_capacity(raw.len());
    for n in &raw {
        let mut d = Vec::with_capacity(n.ctrl_deps.len() + n.data_deps.len());
        for (key, list) in [("ctrl_deps", &n.ctrl_deps), ("data_deps", &n.data_deps)] {
            for p in list {
                let Some(&k) = index.get(p) else {
                    return Err(at(
                        file,
                        n.id,
                        key,
                        p,
                        "no node has this id",
                        "ids of nodes in the same file",
                    ));
                };
                d.push(k);
            }
        }
        d.sort_unstable();
        d.dedup();
        deps.push(d);
    }
    let mut waiting: Vec<usize> = deps.iter().map(Vec::len).collect();
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); raw.len()];
    for (k, d) in deps.iter().enumerate() {
        for &p in d {
            dependents[p].push(k);
        }
    }
    let mut ready: VecDeque<usize> = (0..raw.len()).filter(|&k| waiting[k] == 0).collect();
    let mut pos: Vec<Option<u32>> = vec![None; raw.len()];
    let mut nodes = Vec::with_capacity(raw.len());
    while let Some(k) = ready.pop_front() {
        pos[k] = Some(nodes.len() as u32);
        nodes.push(TraceNode {
            id: raw[k].id,
            work: works[k].clone(),
            deps: deps[k]
                .iter()
                .map(|&p| pos[p].expect("a dependency comes first"))
                .collect(),
        });
        for &c in &dependents[k] {
            waiting[c] -= 1;
            if waiting[c] == 0 {
                ready.push_back(c);
            }
        }
    }
    if let Some(k) = pos.iter().position(Option::is_none) {
        return Err(at(
            file,
            raw[k].id,
            "ctrl_deps/data_deps",
            format!(
                "{:?}",
                deps[k].iter().map(|&p| raw[p].id).collect::<Vec<_>>()
            ),
            "waits on itself through a cycle of dependencies",
            "dependencies that form no cycle",
        ));
    }
    Ok(RankTrace {
        file: file.to_string(),
        nodes,
    })
}

/// The work of node `n` of rank `rank`, its attributes checked.
fn work(file: &str, n: &Node, rank: u32, ranks: u32) -> Result<Work, InputError> {
    let attr = |name: &str| n.attr.iter().find(|a| a.name == name);
    let int = |name: &str, allowed: &str| -> Result<Option<u64>, InputError> {
        let Some(a) = attr(name) else { return Ok(None) };
        int_of(&a.value)
            .map(Some)
            .map_err(|p| at(file, n.id, name, shown(&a.value), p, allowed))
    };
    let need = |name: &str, allowed: &str| -> Result<u64, InputError> {
        int(name, allowed)?.ok_or_else(|| {
            at(
                file,
                n.id,
                name,
                "(missing)",
                "a communication node needs it",
                allowed,
            )
        })
    };
    let size = || -> Result<u64, InputError> {
        let b = need("comm_size", "bytes, 1 to 2^50")?;
        if b == 0 || bounded_bytes(b).is_err() {
            return Err(at(
                file,
                n.id,
                "comm_size",
                b,
                "out of range",
                "bytes, 1 to 2^50",
            ));
        }
        Ok(b)
    };
    let peer = |name: &str| -> Result<u32, InputError> {
        let allowed = format!("a rank 0 to {} other than this file's {rank}", ranks - 1);
        let p = need(name, &allowed)?;
        if p >= ranks as u64 || p == rank as u64 {
            return Err(at(
                file,
                n.id,
                name,
                p,
                "not another rank of the run",
                &allowed,
            ));
        }
        Ok(p as u32)
    };
    if let Some(a) = attr("involved_dim") {
        let all = matches!(&a.value, Some(Value::BoolList(l)) if l.values.iter().all(|&v| v));
        if !all {
            return Err(at(
                file,
                n.id,
                "involved_dim",
                shown(&a.value),
                "leaves a network dimension out (ASTRA-sim's dimensions have no counterpart here)",
                "every entry true, or no involved_dim",
            ));
        }
    }
    let tag = || int("comm_tag", "a non-negative integer").map(|t| t.unwrap_or(0));
    Ok(match n.r#type {
        node_type::METADATA => Work::Compute(Time::ZERO),
        node_type::COMP => {
            let d = n.duration_micros;
            if d > MAX_DURATION_US {
                return Err(at(
                    file,
                    n.id,
                    "duration_micros",
                    d,
                    "beyond one day",
                    "at most 86,400,000,000",
                ));
            }
            Work::Compute(Time::from_us(d))
        }
        node_type::COMM_COLL => {
            let t = need("comm_type", "a CollectiveCommType number")?;
            let op = Coll::of(t as i64).map_err(|name| {
                at(
                    file,
                    n.id,
                    "comm_type",
                    format!("{t} ({name})"),
                    "a collective fabricsim does not compile",
                    "0 ALL_REDUCE, 1 REDUCE, 2 ALL_GATHER, 5 BROADCAST, 6 ALL_TO_ALL, 7 REDUCE_SCATTER",
                )
            })?;
            let pg = match attr("pg_name") {
                None => None,
                Some(Attribute {
                    value: Some(Value::Str(s)),
                    ..
                }) => Some(s.clone()),
                Some(a) => {
                    return Err(at(
                        file,
                        n.id,
                        "pg_name",
                        shown(&a.value),
                        "not a string",
                        "a process group name",
                    ));
                }
            };
            Work::Coll {
                op,
                bytes: size()?,
                pg,
            }
        }
        node_type::COMM_SEND => Work::Send {
            peer: peer("comm_dst")?,
            bytes: size()?,
            tag: tag()?,
        },
        node_type::COMM_RECV => Work::Recv {
            peer: peer("comm_src")?,
            bytes: size()?,
            tag: tag()?,
        },
        t => {
            let name = match t {
                0 => "INVALID_NODE",
                2 => "MEM_LOAD_NODE",
                3 => "MEM_STORE_NODE",
                8 => "STORAGE_NODE",
                9 => "BATCH_NODE",
                10 => "CHECKPOINT_NODE",
                _ => "not a NodeType",
            };
            return Err(at(
                file,
                n.id,
                "type",
                format!("{t} ({name})"),
                "a node type fabricsim does not simulate",
                "1 METADATA_NODE, 4 COMP_NODE, 5 COMM_SEND_NODE, 6 COMM_RECV_NODE, 7 COMM_COLL_NODE",
            ));
        }
    })
}

/// A trace as Chakra writes one: `meta`, then `nodes`, each after its varint length (for tests
/// and the examples' fixtures, `workload::chakra`'s tests).
pub fn encode(meta: &GlobalMetadata, nodes: &[Node]) -> Vec<u8> {
    let mut out = Vec::new();
    meta.encode_length_delimited(&mut out).expect("a Vec grows");
    for n in nodes {
        n.encode_length_delimited(&mut out).expect("a Vec grows");
    }
    out
}

/// An attribute `name` with an int64 value (how Chakra's converters write sizes and types).
pub fn int_attr(name: &str, v: i64) -> Attribute {
    Attribute {
        name: name.into(),
        value: Some(Value::Int64(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u64, t: i32, deps: &[u64], attr: Vec<Attribute>) -> Node {
        Node {
            id,
            name: format!("n{id}"),
            r#type: t,
            data_deps: deps.to_vec(),
            duration_micros: 5,
            attr,
            ..Default::default()
        }
    }

    fn meta() -> GlobalMetadata {
        GlobalMetadata {
            version: "0.0.4".into(),
            attr: Vec::new(),
        }
    }

    #[test]
    fn nodes_come_in_dependency_order_with_their_work() {
        // Written out of order: the all-reduce (id 3) after compute 1, which follows metadata 9.
        let ar = vec![int_attr("comm_type", 0), int_attr("comm_size", 1 << 20)];
        let nodes = [
            node(3, node_type::COMM_COLL, &[1], ar),
            node(1, node_type::COMP, &[9], vec![]),
            node(9, node_type::METADATA, &[], vec![]),
        ];
        let t = read("t.0.et", &encode(&meta(), &nodes), 0, 2).unwrap();
        let ids: Vec<u64> = t.nodes.iter().map(|n| n.id).collect();
        assert_eq!(ids, [9, 1, 3]);
        assert_eq!(t.nodes[1].work, Work::Compute(Time::from_us(5)));
        assert_eq!(t.nodes[1].deps, [0]);
        assert_eq!(
            t.nodes[2].work,
            Work::Coll {
                op: Coll::AllReduce,
                bytes: 1 << 20,
                pg: None
            }
        );
    }

    #[test]
    fn what_is_not_simulated_is_refused_naming_the_node() {
        let coll = |t: i64| vec![int_attr("comm_type", t), int_attr("comm_size", 64)];
        for (nodes, want) in [
            (
                vec![node(4, node_type::COMM_COLL, &[], coll(9))],
                "node 4 comm_type` = 9 (BARRIER)",
            ),
            (
                vec![node(
                    4,
                    node_type::COMM_COLL,
                    &[],
                    vec![int_attr("comm_type", 0)],
                )],
                "node 4 comm_size` = (missing)",
            ),
            (vec![node(4, 2, &[], vec![])], "MEM_LOAD_NODE"),
            (
                vec![node(4, node_type::COMP, &[8], vec![])],
                "node 4 data_deps` = 8: no node",
            ),
            (
                vec![
                    node(4, node_type::COMP, &[5], vec![]),
                    node(5, node_type::COMP, &[4], vec![]),
                ],
                "cycle",
            ),
            (
                vec![
                    node(4, node_type::COMP, &[], vec![]),
                    node(4, node_type::COMP, &[], vec![]),
                ],
                "two nodes",
            ),
            (
                vec![node(
                    4,
                    node_type::COMM_SEND,
                    &[],
                    vec![int_attr("comm_dst", 0), int_attr("comm_size", 8)],
                )],
                "not another rank",
            ),
            (
                vec![node(
                    4,
                    node_type::COMM_RECV,
                    &[],
                    vec![int_attr("comm_src", -1), int_attr("comm_size", 8)],
                )],
                "negative",
            ),
        ] {
            let e = read("t.0.et", &encode(&meta(), &nodes), 0, 2).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
            assert!(e.to_string().starts_with("t.0.et: `"), "{e}");
        }
        let e = read("t.0.et", &[0x05, 1, 2], 0, 2).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
        let e = read("t.0.et", &[], 0, 2).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
    }
}
