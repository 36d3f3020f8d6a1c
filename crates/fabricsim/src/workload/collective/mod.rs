//! Collectives compiled into message DAGs, one algorithm per file, as NCCL runs them.
//!
//! Every builder appends to a [`Builder`] the messages of one channel of one collective over a
//! [`Comm`] (an ordered set of GPUs on a [`Placement`]). Dependencies carry the algorithm's real
//! step structure: a message is posted when the data it forwards has arrived. `ready[p]` lists
//! the messages comm rank `p` waits for before it starts; each builder returns the frontier
//! after it (per rank, the messages whose completion means the rank holds its result), so
//! collectives chain into larger DAGs.

pub mod all_to_all;
pub mod chain;
pub mod count;
pub mod halving_doubling;
pub mod hierarchical;
pub mod job;
pub mod moe;
pub mod ring;
pub mod send_recv;
pub mod tree;

use std::fmt;

use crate::workload::moe::Route;
use crate::workload::placement::Placement;
use fabricsim_core::error::InputError;
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::units::{BitRate, Time};
use fabricsim_input::scenario::nccl::{MAXCHANNELS, Nccl};

/// A collective operation, named as nccl-tests names its binaries (`all_reduce_perf`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    AllToAll,
    SendRecv,
    /// An MoE layer's token dispatch: an all-to-all whose blocks follow the routing
    /// ([`CollectiveSpec::route`]; `collective::moe`).
    MoeDispatch,
    /// Its combine: the expert outputs back, the dispatch's transpose.
    MoeCombine,
}

impl Op {
    pub const ALL: [Op; 9] = [
        Op::AllReduce,
        Op::AllGather,
        Op::ReduceScatter,
        Op::Broadcast,
        Op::Reduce,
        Op::AllToAll,
        Op::SendRecv,
        Op::MoeDispatch,
        Op::MoeCombine,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "all_reduce",
            Op::AllGather => "all_gather",
            Op::ReduceScatter => "reduce_scatter",
            Op::Broadcast => "broadcast",
            Op::Reduce => "reduce",
            Op::AllToAll => "alltoall",
            Op::SendRecv => "sendrecv",
            Op::MoeDispatch => "moe_dispatch",
            Op::MoeCombine => "moe_combine",
        }
    }

    /// Parses an op name, nccl-tests' binary name (`alltoall`) or the spelled-out form
    /// (`all_to_all`); `key` names the flag or file key for the error.
    pub fn parse(key: &str, s: &str) -> Result<Op, InputError> {
        let name = match s {
            "all_to_all" => "alltoall",
            other => other,
        };
        Op::ALL
            .into_iter()
            .find(|o| o.name() == name)
            .ok_or_else(|| {
                InputError::flag(
                    key,
                    s,
                    "unknown collective",
                    Op::ALL.map(Op::name).join(", "),
                )
            })
    }

    /// Whether the op combines data (nccl-tests prints the reduction op for these, else `none`).
    pub fn reduces(self) -> bool {
        matches!(self, Op::AllReduce | Op::ReduceScatter | Op::Reduce)
    }

    /// Whether the op has a root rank (nccl-tests prints it, else -1).
    pub fn rooted(self) -> bool {
        matches!(self, Op::Broadcast | Op::Reduce)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a collective is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Algo {
    /// NCCL ring (reduce-scatter then all-gather for all-reduce), chunked and pipelined.
    Ring,
    /// NCCL double binary tree (all-reduce only).
    Tree,
    /// Recursive halving (reduce-scatter) and doubling (all-gather); power-of-two ranks.
    HalvingDoubling,
    /// NVLink inside each server, the rails across servers (all-reduce, all-gather,
    /// reduce-scatter).
    Hierarchical,
    /// Pipelined chain from/to the root (broadcast, reduce), as NCCL's ring broadcast.
    Chain,
    /// Every pair at once (all-to-all, send/recv).
    Direct,
}

impl Algo {
    pub const ALL: [Algo; 6] = [
        Algo::Ring,
        Algo::Tree,
        Algo::HalvingDoubling,
        Algo::Hierarchical,
        Algo::Chain,
        Algo::Direct,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algo::Ring => "ring",
            Algo::Tree => "tree",
            Algo::HalvingDoubling => "halving-doubling",
            Algo::Hierarchical => "hierarchical",
            Algo::Chain => "chain",
            Algo::Direct => "direct",
        }
    }

    /// Parses an algorithm name (`hd` short for halving-doubling); `key` names the flag or
    /// file key for the error.
    pub fn parse(key: &str, s: &str) -> Result<Algo, InputError> {
        let name = match s {
            "hd" => "halving-doubling",
            other => other,
        };
        Algo::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| {
                InputError::flag(
                    key,
                    s,
                    "unknown algorithm",
                    Algo::ALL.map(Algo::name).join(", "),
                )
            })
    }

    /// The algorithms that implement `op`; the first is the default.
    pub fn for_op(op: Op) -> &'static [Algo] {
        match op {
            Op::AllReduce => &[
                Algo::Ring,
                Algo::Tree,
                Algo::HalvingDoubling,
                Algo::Hierarchical,
            ],
            Op::AllGather | Op::ReduceScatter => {
                &[Algo::Ring, Algo::HalvingDoubling, Algo::Hierarchical]
            }
            Op::Broadcast | Op::Reduce => &[Algo::Chain],
            Op::AllToAll | Op::SendRecv | Op::MoeDispatch | Op::MoeCombine => &[Algo::Direct],
        }
    }
}

/// An ordered group of GPUs (a communicator): comm rank `i` is global GPU `gpus[i]`.
#[derive(Clone, Debug)]
pub struct Comm<'a> {
    pub place: &'a Placement,
    pub gpus: Vec<u32>,
}

impl<'a> Comm<'a> {
    /// All GPUs of the placement, in order.
    pub fn world(place: &'a Placement) -> Comm<'a> {
        Comm {
            place,
            gpus: (0..place.gpus()).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// Comm ranks grouped by server, servers in order of first appearance, ranks in comm order.
    pub fn by_server(&self) -> Vec<Vec<usize>> {
        let mut slot: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (p, &g) in self.gpus.iter().enumerate() {
            let next = groups.len();
            let i = *slot.entry(self.place.server(g)).or_insert(next);
            if i == next {
                groups.push(Vec::new());
            }
            groups[i].push(p);
        }
        groups
    }

    /// The sub-communicator of the given comm ranks.
    pub fn sub(&self, ranks: &[usize]) -> Comm<'a> {
        Comm {
            place: self.place,
            gpus: ranks.iter().map(|&p| self.gpus[p]).collect(),
        }
    }
}

/// Per comm rank: the messages whose completion the rank waits for (before) or holds (after).
pub type Frontier = Vec<Vec<u32>>;

/// An empty frontier: every rank may start at time zero.
pub fn start_frontier(ranks: usize) -> Frontier {
    vec![Vec::new(); ranks]
}

/// How one channel is cut: its index (the queue pair), the channel count, the pipeline chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane {
    pub channel: u32,
    pub channels: u32,
    /// Largest message of a pipelined algorithm (NCCL's chunk); 0 = no chunking.
    pub chunk_bytes: u64,
}

/// Which halves of an all-reduce a ring, halving-doubling or hierarchical pass runs: the
/// reduce-scatter, the all-gather, or both (all-reduce = reduce-scatter + all-gather,
/// Patarasuk and Yuan 2009; Thakur, Rabenseifner and Gropp 2005).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Phases {
    pub reduce_scatter: bool,
    pub all_gather: bool,
}

impl Phases {
    pub const ALL_REDUCE: Phases = Phases {
        reduce_scatter: true,
        all_gather: true,
    };
    pub const REDUCE_SCATTER: Phases = Phases {
        reduce_scatter: true,
        all_gather: false,
    };
    pub const ALL_GATHER: Phases = Phases {
        reduce_scatter: false,
        all_gather: true,
    };

    /// The phases of `op`; `None` for the collectives that are not all-reduce halves.
    pub fn of(op: Op) -> Option<Phases> {
        match op {
            Op::AllReduce => Some(Phases::ALL_REDUCE),
            Op::ReduceScatter => Some(Phases::REDUCE_SCATTER),
            Op::AllGather => Some(Phases::ALL_GATHER),
            Op::Broadcast
            | Op::Reduce
            | Op::AllToAll
            | Op::SendRecv
            | Op::MoeDispatch
            | Op::MoeCombine => None,
        }
    }
}

impl Lane {
    /// Pipeline chunks for a buffer of `bytes`: at least one, none above `chunk_bytes`.
    pub fn chunks(&self, bytes: u64) -> u64 {
        if self.chunk_bytes == 0 {
            1
        } else {
            bytes.div_ceil(self.chunk_bytes).max(1)
        }
    }
}

/// Appends messages to a DAG, choosing NVLink inside a server and the fabric across servers.
pub struct Builder<'a> {
    pub dag: MessageDag,
    place: &'a Placement,
    nvlink: BitRate,
    /// Per message, the GPU that sent it, when asked for ([`Builder::recording_senders`]).
    senders: Option<Vec<u32>>,
}

impl<'a> Builder<'a> {
    /// `nvlink` is the one-way NVLink rate per GPU (recorded in the DAG when used).
    pub fn new(place: &'a Placement, nvlink: BitRate) -> Builder<'a> {
        Builder {
            dag: MessageDag::default(),
            place,
            nvlink,
            senders: None,
        }
    }

    /// A builder that also records each message's sending GPU ([`Builder::sender`]), for a
    /// caller that gates each rank's sends on its own dependencies (`workload::chakra`).
    pub fn recording_senders(place: &'a Placement, nvlink: BitRate) -> Builder<'a> {
        Builder {
            senders: Some(Vec::new()),
            ..Builder::new(place, nvlink)
        }
    }

    /// The GPU that sent message `m` (a builder made by [`Builder::recording_senders`]).
    pub fn sender(&self, m: u32) -> u32 {
        self.senders.as_ref().expect("recording_senders")[m as usize]
    }

    /// A message of `bytes` from GPU `from` to GPU `to`, posted when `deps` have finished.
    pub fn send(&mut self, from: u32, to: u32, bytes: u64, deps: &[u32], qp: u32, tag: u32) -> u32 {
        self.send_via(from, from, to, bytes, deps, qp, tag)
    }

    /// Like [`Builder::send`], but a message to another server leaves through the NIC of GPU
    /// `nic` of the sender's server (NCCL's rings leave a node through the NIC they entered by,
    /// the sending GPU reaching it over PCIe/NVLink: NCCL_CROSS_NIC=0, PXN).
    #[allow(clippy::too_many_arguments)]
    pub fn send_via(
        &mut self,
        nic: u32,
        from: u32,
        to: u32,
        bytes: u64,
        deps: &[u32],
        qp: u32,
        tag: u32,
    ) -> u32 {
        debug_assert!(self.place.same_server(nic, from));
        let src = if self.place.same_server(from, to) {
            self.place.host(from)
        } else {
            self.place.host_for(nic, qp)
        };
        let dst = if self.place.same_server(from, to) {
            self.place.host(to)
        } else {
            self.place.host_for(to, qp)
        };
        let id = self.dag.push(src, dst, bytes, Time::ZERO, deps);
        if let Some(s) = &mut self.senders {
            s.push(from);
        }
        let m = &mut self.dag.messages[id as usize];
        m.qp = qp as u16;
        m.tag = tag;
        if self.place.same_server(from, to) {
            m.path = Path::NvLink;
            self.dag.nvlink_rate = Some(self.nvlink);
        }
        id
    }

    pub fn finish(self) -> MessageDag {
        self.dag
    }
}

/// `total` cut into `parts` pieces that differ by at most one byte and sum to `total`
/// (the larger pieces first).
pub fn split(total: u64, parts: u64) -> impl Iterator<Item = u64> {
    let (q, r) = (total / parts, total % parts);
    (0..parts).map(move |i| q + u64::from(i < r))
}

/// Piece `i` of [`split`].
pub fn piece(total: u64, parts: u64, i: u64) -> u64 {
    total / parts + u64::from(i < total % parts)
}

/// What to compile: `bytes` is nccl-tests' `size`, one rank's buffer: the receive buffer (all
/// ranks' blocks) for all-gather, the send buffer for reduce-scatter and all-to-all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CollectiveSpec<'a> {
    pub op: Op,
    pub algo: Algo,
    pub bytes: u64,
    /// Root comm rank (broadcast, reduce).
    pub root: u32,
    /// NCCL channels; each carries `1/channels` of the data on its own queue pair and, for the
    /// ring, its own rotation of the GPUs inside each server (so channels leave through
    /// different NICs).
    pub channels: u32,
    pub chunk_bytes: u64,
    /// The routing of an MoE dispatch or combine (one entry per rank); `None`: uniform.
    pub route: Option<&'a Route>,
}

impl CollectiveSpec<'static> {
    /// `op` with its default algorithm, root 0, `channels` channels and NCCL's Simple-protocol
    /// chunk: NCCL_BUFFSIZE 4 MiB over NCCL_STEPS 8 slots = 512 KiB (NCCL src/include/
    /// device.h, `ncclParamBuffSize`).
    pub fn with_defaults(op: Op, bytes: u64, channels: u32) -> CollectiveSpec<'static> {
        CollectiveSpec {
            op,
            algo: Algo::for_op(op)[0],
            bytes,
            root: 0,
            channels,
            chunk_bytes: 512 << 10,
            route: None,
        }
    }
}

/// NCCL's default channel count for `algo` over `ranks` ranks on servers with `nics` NICs
/// under `nccl`'s NCCL_MIN/MAX_NCHANNELS: the ring and tree collectives' (`Nccl::coll_channels`,
/// also used for the ring-like chain, halving-doubling and hierarchical passes); the direct
/// algorithms (all-to-all, send/recv) take NCCL_NCHANNELS_PER_NET_PEER when set (paths.cc
/// `ncclTopoGetNchannels`), else [`p2p_channels_per_peer`].
pub fn nccl_channels(nccl: &Nccl, nics: u32, algo: Algo, ranks: u32) -> u32 {
    match algo {
        Algo::Direct => nccl
            .nchannels_per_net_peer
            .unwrap_or_else(|| p2p_channels_per_peer(nccl, nics, ranks))
            .clamp(1, MAXCHANNELS),
        _ => nccl.coll_channels(nics),
    }
}

/// Channels per network peer NCCL derives without NCCL_NCHANNELS_PER_NET_PEER (NVIDIA/nccl
/// src/graph/paths.cc `ncclTopoGetNchannels`, `ncclTopoComputeP2pChannels`): one per NIC of
/// the server to start (an ESTIMATE: NCCL starts from 2, raised to the NICs one GPU needs to
/// match its bandwidth), halved while it times the ranks exceeds 4 x the p2p channels (the
/// collective channels, at most NCCL_MAX_P2P_NCHANNELS 64, to a power of 2: "avoid overloading
/// channels with 8+ operations"), then raised to a power of 2 within the p2p channels.
pub fn p2p_channels_per_peer(nccl: &Nccl, nics: u32, ranks: u32) -> u32 {
    let p2p = nccl
        .coll_channels(nics)
        .clamp(1, MAXCHANNELS)
        .next_power_of_two();
    let mut ch = nics.max(1);
    while ch as u64 * ranks as u64 > 4 * p2p as u64 && ch > 1 {
        ch /= 2;
    }
    ch.next_power_of_two().min(p2p)
}

/// NCCL's channels of each algorithm on servers of `nics` NICs under `nccl`
/// ([`nccl_channels`]): what an engine-timed step compiles its collectives with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Channels {
    pub nccl: Nccl,
    pub nics: u32,
}

impl Channels {
    /// The scenario's `[nccl]` on its servers' NICs (`[cluster] nics_per_node`).
    pub fn of_design(d: &fabricsim_input::scenario::Design) -> Channels {
        Channels {
            nccl: d.nccl,
            nics: d.spec.nics_per_node as u32,
        }
    }

    /// The channels of `algo` over `ranks` ranks ([`nccl_channels`]).
    pub fn of(&self, algo: Algo, ranks: u32) -> u32 {
        nccl_channels(&self.nccl, self.nics, algo, ranks)
    }

    /// The most channels of any algorithm over `ranks` ranks (a bound on a DAG's messages).
    pub fn most(&self, ranks: u32) -> u32 {
        Algo::ALL
            .iter()
            .map(|&a| self.of(a, ranks))
            .max()
            .unwrap_or(1)
    }
}

/// Compiles a collective over `comm` into a message DAG (every rank starts at time zero).
pub fn compile(
    spec: &CollectiveSpec,
    comm: &Comm,
    nvlink: BitRate,
) -> Result<MessageDag, InputError> {
    let mut b = Builder::new(comm.place, nvlink);
    append(&mut b, spec, comm, &start_frontier(comm.len()))?;
    Ok(b.finish())
}

/// Appends a collective after `ready`; returns the frontier after it.
pub fn append(
    b: &mut Builder,
    spec: &CollectiveSpec,
    comm: &Comm,
    ready: &Frontier,
) -> Result<Frontier, InputError> {
    validate(spec, comm)?;
    let mut out = start_frontier(comm.len());
    for channel in 0..spec.channels {
        let lane = Lane {
            channel,
            channels: spec.channels,
            chunk_bytes: spec.chunk_bytes,
        };
        let bytes = piece(spec.bytes, spec.channels as u64, channel as u64);
        let f = match (spec.op, spec.algo, Phases::of(spec.op)) {
            (Op::AllReduce, Algo::Tree, _) => tree::all_reduce(b, comm, bytes, lane, ready),
            (_, Algo::Ring, Some(ph)) => {
                ring::run(b, comm, bytes, lane, ready, ph, ring::ALL_STEPS)
            }
            (_, Algo::HalvingDoubling, Some(ph)) => {
                halving_doubling::run(b, comm, bytes, lane, ready, ph)
            }
            (_, Algo::Hierarchical, Some(ph)) => hierarchical::run(b, comm, bytes, lane, ready, ph),
            (Op::Broadcast, Algo::Chain, _) => {
                chain::broadcast(b, comm, spec.root as usize, bytes, lane, ready)
            }
            (Op::Reduce, Algo::Chain, _) => {
                chain::reduce(b, comm, spec.root as usize, bytes, lane, ready)
            }
            (Op::AllToAll, Algo::Direct, _) => all_to_all::all_to_all(b, comm, bytes, lane, ready),
            (Op::SendRecv, Algo::Direct, _) => send_recv::shift(b, comm, bytes, lane, ready),
            (Op::MoeDispatch | Op::MoeCombine, Algo::Direct, _) => {
                let uniform = Route::Uniform { ranks: comm.len() };
                let route = spec.route.unwrap_or(&uniform);
                let combine = spec.op == Op::MoeCombine;
                moe::exchange(b, comm, route, combine, bytes, lane, ready)
            }
            _ => unreachable!("validate() admits only the pairs above"),
        };
        for (o, f) in out.iter_mut().zip(f) {
            o.extend(f);
        }
    }
    Ok(out)
}

fn validate(spec: &CollectiveSpec, comm: &Comm) -> Result<(), InputError> {
    let algos = Algo::for_op(spec.op);
    if !algos.contains(&spec.algo) {
        return Err(InputError::flag(
            "--algo",
            spec.algo.name(),
            format!("{} has no {} algorithm", spec.op, spec.algo.name()),
            algos
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    let n = comm.len();
    if n < 2 {
        return Err(InputError::flag(
            "--gpus",
            n,
            "a collective needs at least two ranks",
            "2 or more",
        ));
    }
    if spec.channels == 0 || spec.channels > MAXCHANNELS {
        return Err(InputError::flag(
            "--channels",
            spec.channels,
            "channel count out of range",
            format!("1 to {MAXCHANNELS} (NCCL's MAXCHANNELS)"),
        ));
    }
    if let Some(r) = spec.route.filter(|r| r.ranks() != n) {
        return Err(InputError::flag(
            "--experts",
            r.ranks(),
            format!(
                "the routing is over {} EP ranks, the communicator has {n}",
                r.ranks()
            ),
            format!("a routing over {n} ranks"),
        ));
    }
    if spec.op.rooted() && spec.root as usize >= n {
        return Err(InputError::flag(
            "--root",
            spec.root,
            "root is not a rank of the communicator",
            format!("0 to {}", n - 1),
        ));
    }
    if spec.algo == Algo::HalvingDoubling && !n.is_power_of_two() {
        return Err(InputError::flag(
            "--algo",
            "halving-doubling",
            format!("recursive halving-doubling needs a power-of-two rank count, got {n}"),
            "ring or tree, or 2, 4, 8, ... ranks",
        ));
    }
    if spec.algo == Algo::Hierarchical {
        let servers = comm.by_server();
        let k = servers[0].len();
        if servers.iter().any(|s| s.len() != k) {
            return Err(InputError::flag(
                "--algo",
                "hierarchical",
                "the hierarchical algorithm needs the same number of ranks on every server",
                "ring or tree, or whole servers",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_sums_to_total_and_differs_by_at_most_one() {
        for (t, p) in [(10u64, 3u64), (0, 4), (7, 7), (5, 8), (1 << 30, 24)] {
            let v: Vec<u64> = split(t, p).collect();
            assert_eq!(v.iter().sum::<u64>(), t);
            assert!(v.iter().max().unwrap() - v.iter().min().unwrap() <= 1);
            for (i, &x) in v.iter().enumerate() {
                assert_eq!(piece(t, p, i as u64), x);
            }
        }
    }
}
