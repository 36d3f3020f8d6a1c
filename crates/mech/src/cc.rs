//! Congestion control and load balancing around the packet path: which mechanisms a run has
//! (`CcParams`, part of `SimParams`) and their per-run state (`CcState`).
//!
//! - `ecn`: RED/step marking at switch egress; `dcqcn`: the RoCE reaction and notification
//!   points; `ibcc`: InfiniBand FECN/BECN/CCT; `entropy`: QPs per connection and the flow
//!   hash; `ibroute`: D-mod-K static routes and adaptive routing.
//! - The engine calls them through the hooks in `engine/cc.rs`; CNPs and BECNs are real packets
//!   (`Kind::Cnp`) on the `cnp_tc` class.

use super::dcqcn::{DcqcnParams, Rp};
use super::ecn::{EcnMarking, Marker};
use super::error::ParamError;
use super::ibcc::{CcaState, IbCcParams};
use super::ibroute::CreditShare;
use super::params::{FlowControl, RoutePolicy, SimParams, Transport};
use fabricsim_core::rng::{Rng, Stream};
use fabricsim_core::topology::Topology;
use fabricsim_core::units::{BitRate, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct CcParams {
    /// ECN marking of data packets at switch egress (RoCE); `None`: no marking.
    pub ecn: Option<EcnMarking>,
    /// DCQCN at the NICs (needs `ecn`).
    pub dcqcn: Option<DcqcnParams>,
    /// InfiniBand congestion control (FECN at switches, BECN, CCTI at the source).
    pub ibcc: Option<IbCcParams>,
    /// Class of CNPs/BECNs (ConnectX sends CNPs on priority 6, strict: `[pfc] cnp_priority`).
    pub cnp_tc: u8,
    /// QPs per connection (NCCL_IB_QPS_PER_CONNECTION); a message is split across them.
    pub qps_per_connection: u16,
    /// Switches also hash the destination QP (BTH) into the ECMP hash.
    pub hash_dest_qp: bool,
    /// With adaptive routing, messages below this many bytes stay on the static route
    /// (NCCL_IB_AR_THRESHOLD); 0: every packet may be routed adaptively.
    pub ar_threshold_bytes: u64,
    /// What adaptive routing ranks the allowed ports by (`[routing] ar_select`).
    pub ar_select: ArSelect,
}

/// The adaptive-routing rule: which allowed up port a packet takes (`sim::ibroute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArSelect {
    /// The fewest bytes queued or serializing at the egress.
    Queue,
    /// The most credits of the packet's VL normalized by the link's length, less the VL's bytes
    /// queued at the port (Mellanox patent US 10,200,294 B2, claims 1 and 3;
    /// `ibroute::credit_shares`); needs credit flow control.
    Credits,
}

impl Default for CcParams {
    /// Nothing on: no marking, no congestion control, one QP per connection, 5-tuple hash,
    /// adaptive routing (if the policy is) by queued bytes.
    fn default() -> CcParams {
        CcParams {
            ecn: None,
            dcqcn: None,
            ibcc: None,
            cnp_tc: 0,
            qps_per_connection: 1,
            hash_dest_qp: false,
            ar_threshold_bytes: 0,
            ar_select: ArSelect::Queue,
        }
    }
}

impl CcParams {
    /// Checks the mechanisms against each other and the rest of `p`; the error names the field.
    pub fn validate(&self, p: &SimParams) -> Result<(), ParamError> {
        let err = |f: &'static str, (prob, allowed): (String, &str)| {
            Err(ParamError::new(f, prob, allowed))
        };
        if let Some(e) = &self.ecn
            && let Err(x) = e.validate()
        {
            return err("cc.ecn", x);
        }
        if let Some(d) = &self.dcqcn {
            if self.ecn.is_none() {
                return err(
                    "cc.dcqcn",
                    ("DCQCN without ECN marking".into(), "set cc.ecn too"),
                );
            }
            if let Err(x) = d.validate() {
                return err("cc.dcqcn", x);
            }
        }
        if let Some(i) = &self.ibcc {
            if self.dcqcn.is_some() {
                return err(
                    "cc.ibcc",
                    ("both DCQCN and IB CC".into(), "one congestion control"),
                );
            }
            if let Err(x) = i.validate() {
                return err("cc.ibcc", x);
            }
        }
        if self.cnp_tc >= p.traffic_classes {
            return err(
                "cc.cnp_tc",
                (format!("class {}", self.cnp_tc), "0 to traffic_classes-1"),
            );
        }
        if self.qps_per_connection == 0 || self.qps_per_connection > 64 {
            return err(
                "cc.qps_per_connection",
                (format!("{}", self.qps_per_connection), "1 to 64"),
            );
        }
        if p.routing == RoutePolicy::Adaptive && p.transport != Transport::SelectiveRepeat {
            return err(
                "routing",
                (
                    "adaptive routing reorders packets; a go-back-N receiver would NAK them".into(),
                    "transport selective_repeat (the NIC accepts out-of-order packets)",
                ),
            );
        }
        Ok(())
    }
}

/// Which congestion-control timer an `Ev::CcTimer` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcTimer {
    /// DCQCN α update (K).
    Alpha,
    /// DCQCN rate increase (T).
    Increase,
    /// DCQCN: a decrease waiting for the monitor period.
    Decrease,
    /// IB CC: CCTI decrease.
    Ccti,
}

impl CcTimer {
    /// The timer whose `as u8` is `i` (the event queue stores it so).
    pub fn from_index(i: u8) -> CcTimer {
        match i {
            0 => CcTimer::Alpha,
            1 => CcTimer::Increase,
            2 => CcTimer::Decrease,
            _ => CcTimer::Ccti,
        }
    }
}

/// Per-run state of the mechanisms, in dense vectors indexed by QP, port or node.
pub struct CcState {
    /// Egress marking rule (ECN CE or IB FECN), if any.
    pub marker: Option<Marker>,
    /// Marking randomness per switch node.
    pub rng: Vec<Rng>,
    /// IB Marking_Rate countdown per port.
    pub fecn_skip: Vec<u32>,
    /// DCQCN reaction point per QP.
    pub rp: Vec<Rp>,
    /// Per QP: the NP's last CNP time (`None`: never).
    pub last_cnp: Vec<Option<Time>>,
    /// Per QP: DCQCN timers pending (alpha, increase) and when the next increase is due.
    pub alpha_pending: Vec<bool>,
    pub increase_pending: Vec<bool>,
    pub increase_due: Vec<Time>,
    /// IB CC source state per QP.
    pub cca: Vec<CcaState>,
    /// Per QP: the pacing gap, ps per byte × 2^16 (0: line rate).
    pub gap_q16: Vec<u64>,
    /// Per QP: its NIC's line rate.
    pub line: Vec<BitRate>,
    /// Per egress port: how adaptive routing by credits scores it (`ibroute::credit_shares`);
    /// empty unless `ArSelect::Credits` with credit flow control.
    pub ar_share: Vec<CreditShare>,
}

impl CcState {
    pub fn new(p: &SimParams, topo: &Topology, qp_line: Vec<BitRate>) -> Self {
        let (cc, seed, nodes, ports) = (&p.cc, p.seed, topo.nodes.len(), topo.ports.len());
        let ar_share = match p.flow_control {
            FlowControl::Credits(c) if cc.ar_select == ArSelect::Credits => {
                super::ibroute::credit_shares(topo, p, &c)
            }
            _ => Vec::new(),
        };
        let marker = match (&cc.ecn, &cc.ibcc) {
            (Some(e), _) => Some(Marker::new(*e)),
            (None, Some(i)) => Some(Marker::threshold(i.threshold_bytes)),
            (None, None) => None,
        };
        let nq = qp_line.len();
        CcState {
            marker,
            rng: (0..nodes as u64)
                .map(|i| Rng::stream(seed, Stream::EcnMarking, i))
                .collect(),
            fecn_skip: vec![0; ports],
            rp: qp_line.iter().map(|&l| Rp::new(l)).collect(),
            last_cnp: vec![None; nq],
            alpha_pending: vec![false; nq],
            increase_pending: vec![false; nq],
            increase_due: vec![Time::ZERO; nq],
            cca: vec![CcaState::default(); nq],
            gap_q16: vec![0; nq],
            line: qp_line,
            ar_share,
        }
    }
}
