//! How long a collective takes on a group of GPUs: the interface the training-step model
//! uses, with the alpha-beta model behind it (closed forms now, packet-run fits when they
//! exist for an (op, group) pair).

use super::alpha_beta::AlphaBeta;
use super::collective::Op;
use super::link_params::{FabricParams, LinkParams};

/// Where the ranks of a communicator sit: `ranks` GPUs spread evenly over `servers` servers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupShape {
    pub ranks: u32,
    pub servers: u32,
}

impl GroupShape {
    pub fn per_server(&self) -> u32 {
        self.ranks / self.servers.max(1)
    }
}

/// Time of one collective; `bytes` is nccl-tests' size (see `collective::CollectiveSpec`).
pub trait CommModel {
    fn time_s(&self, op: Op, bytes: u64, group: GroupShape) -> f64;
    /// One line saying where the times come from (shown with the results).
    fn describe(&self) -> String;
}

/// An infinitely fast network: every collective takes no time.
pub struct FreeNetwork;

impl CommModel for FreeNetwork {
    fn time_s(&self, _: Op, _: u64, _: GroupShape) -> f64 {
        0.0
    }
    fn describe(&self) -> String {
        "infinitely fast network".into()
    }
}

/// Alpha-beta per (op, group) for one fabric: a fit from packet runs where one was inserted,
/// else the closed form of the bandwidth-optimal algorithm on the fabric's link parameters.
#[derive(Clone)]
pub struct AlphaBetaModel {
    pub fabric: FabricParams,
    fitted: Vec<(Op, GroupShape, AlphaBeta)>,
}

fn ring(steps: f64, share: f64, link: LinkParams) -> AlphaBeta {
    AlphaBeta {
        alpha_s: steps * link.latency_s,
        bytes_per_s: link.bytes_per_s / share,
    }
}

impl AlphaBetaModel {
    pub fn new(fabric: FabricParams) -> AlphaBetaModel {
        AlphaBetaModel {
            fabric,
            fitted: Vec::new(),
        }
    }

    /// Uses `model` (a fit from packet runs) for `op` on `group` from now on.
    pub fn insert_fit(&mut self, op: Op, group: GroupShape, model: AlphaBeta) {
        self.fitted.retain(|f| (f.0, f.1) != (op, group));
        self.fitted.push((op, group, model));
    }

    pub fn model(&self, op: Op, group: GroupShape) -> AlphaBeta {
        self.fitted
            .iter()
            .find(|f| (f.0, f.1) == (op, group))
            .map(|f| f.2)
            .unwrap_or_else(|| self.closed_form(op, group))
    }

    /// Closed forms (Thakur et al. 2005; NCCL's ring and tuning.cc latency terms). A group on
    /// one server uses NVLink; one GPU per server uses the fabric ring; k GPUs on each of N
    /// servers use the hierarchical algorithm: NVLink phases over k ranks around a fabric
    /// phase over N ranks on 1/k of the data per rail.
    pub fn closed_form(&self, op: Op, g: GroupShape) -> AlphaBeta {
        let (n, nodes, k) = (
            g.ranks as f64,
            g.servers.max(1) as f64,
            g.per_server() as f64,
        );
        let (net, nvl) = (self.fabric.net, self.fabric.nvlink);
        if g.ranks <= 1 {
            return AlphaBeta::FREE;
        }
        // The link of a flat algorithm, and the rail share of the hierarchical one.
        let flat = if g.servers <= 1 { nvl } else { net };
        let rail = LinkParams {
            bytes_per_s: net.bytes_per_s * k,
            latency_s: net.latency_s,
        };
        let hier = g.servers > 1 && g.per_server() > 1;
        match op {
            Op::AllReduce if hier => ring(k - 1.0, (k - 1.0) / k, nvl)
                .then(ring(2.0 * (nodes - 1.0), 2.0 * (nodes - 1.0) / nodes, rail))
                .then(ring(k - 1.0, (k - 1.0) / k, nvl)),
            Op::AllReduce => ring(2.0 * (n - 1.0), 2.0 * (n - 1.0) / n, flat),
            Op::AllGather | Op::ReduceScatter if hier => ring(
                nodes - 1.0,
                (nodes - 1.0) / nodes,
                rail,
            )
            .then(ring(k - 1.0, (k - 1.0) / k, nvl)),
            Op::AllGather | Op::ReduceScatter => ring(n - 1.0, (n - 1.0) / n, flat),
            // The MoE exchanges under uniform routing (a skew scales the bytes: `moe::Slowest`).
            Op::AllToAll | Op::MoeDispatch | Op::MoeCombine => {
                // All sends posted at once: one latency, the busier of NIC and NVLink.
                let over_net = (n - k) / n / net.bytes_per_s;
                let over_nvl = (k - 1.0) / n / nvl.bytes_per_s;
                AlphaBeta {
                    alpha_s: flat.latency_s,
                    bytes_per_s: 1.0 / over_net.max(over_nvl),
                }
            }
            Op::Broadcast | Op::Reduce => AlphaBeta {
                // Pipelined chain: n-1 hops, nodes-1 of them across the fabric.
                alpha_s: (nodes - 1.0) * net.latency_s + (n - nodes) * nvl.latency_s,
                bytes_per_s: flat.bytes_per_s,
            },
            Op::SendRecv => ring(1.0, 1.0, flat),
        }
    }
}

impl CommModel for AlphaBetaModel {
    fn time_s(&self, op: Op, bytes: u64, group: GroupShape) -> f64 {
        self.model(op, group).time_s(bytes)
    }
    fn describe(&self) -> String {
        format!(
            "alpha-beta on {} ({}; {} fitted (op, group) pairs)",
            self.fabric.id,
            self.fabric.source,
            self.fitted.len()
        )
    }
}
