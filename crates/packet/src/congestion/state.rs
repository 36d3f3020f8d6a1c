//! The per-run state of the packet engine's marking and congestion control (`CcParams`).

use super::{AnyCc, CcSetup, CongestionControl};
use crate::error::SimError;
use crate::marking::Marking;
use crate::transport::Qp;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::BitRate;
use fabricsim_mech::cc::ArSelect;
use fabricsim_mech::ibroute::{self, CreditShare};
use fabricsim_mech::params::{FlowControl, SimParams};

/// Per-run state of the mechanisms, in dense vectors indexed by QP, port or node.
pub struct CcState {
    /// The egress marking rule (ECN CE or IB FECN; `crate::marking`).
    pub marking: Marking,
    /// The congestion control, whether it takes telemetry from switches and whether it
    /// takes the ACKs.
    pub alg: AnyCc,
    pub telemetry: bool,
    pub acks: bool,
    /// Per QP: the pacing gap, ps per byte × 2^16 (0: line rate).
    pub gap_q16: Vec<u64>,
    /// Per QP: the send window in packets (0: unlimited); `SimParams::window_packets` unless
    /// the congestion control sets one.
    pub window: Vec<u32>,
    /// Per QP: its NIC's line rate.
    pub line: Vec<BitRate>,
    /// Per egress port: how adaptive routing by credits scores it (`ibroute::credit_shares`);
    /// empty unless `ArSelect::Credits` with credit flow control.
    pub ar_share: Vec<CreditShare>,
}

impl CcState {
    pub fn new(
        p: &SimParams,
        topo: &Topology,
        qps: &[Qp],
        qp_line: Vec<BitRate>,
        packets: usize,
    ) -> Result<Self, SimError> {
        let (cc, seed, nodes, ports) = (&p.cc, p.seed, topo.nodes.len(), topo.ports.len());
        let ar_share = match p.flow_control {
            FlowControl::Credits(c) if cc.ar_select == ArSelect::Credits => {
                ibroute::credit_shares(topo, p, &c)
            }
            _ => Vec::new(),
        };
        let nq = qp_line.len();
        let alg = AnyCc::new(&CcSetup {
            p,
            topo,
            qps,
            line: &qp_line,
            packets,
        })?;
        let window = (0..nq as u32)
            .map(|q| alg.initial_window(q, p.window_packets))
            .collect();
        Ok(CcState {
            marking: Marking::new(cc, seed, nodes, ports),
            telemetry: alg.telemetry(),
            acks: alg.acks(),
            alg,
            gap_q16: vec![0; nq],
            window,
            line: qp_line,
            ar_share,
        })
    }
}
