//! Congestion control and load balancing around the packet path: which mechanisms a run has
//! (`CcParams`, part of `SimParams`); their per-run state in the packet engine is
//! `fabricsim_packet::congestion::CcState`.
//!
//! - `ecn`: RED/step marking at switch egress (IB CC's FECN threshold likewise); `algo`: the
//!   congestion control at the NICs (`cc_algo`: DCQCN, IB CC, HPCC); `entropy`: QPs per
//!   connection and the flow hash; `ibroute`: D-mod-K static routes and adaptive routing.
//! - The engine calls them through the hooks in `engine/cc.rs`; CNPs and BECNs are real packets
//!   (`Kind::Cnp`) on the `cnp_tc` class.

use super::cc_algo::CcAlgo;
use super::ecn::EcnMarking;
use super::error::ParamError;
use super::params::SimParams;

#[derive(Clone, Debug, PartialEq)]
pub struct CcParams {
    /// ECN marking of data packets at switch egress (RoCE); `None`: no marking.
    pub ecn: Option<EcnMarking>,
    /// The congestion control at the NICs.
    pub algo: CcAlgo,
    /// Class of CNPs/BECNs (ConnectX sends CNPs on priority 6, strict: `[pfc] cnp_priority`).
    pub cnp_tc: u8,
    /// QPs per connection (NCCL_IB_QPS_PER_CONNECTION); a message is split across them.
    pub qps_per_connection: u16,
    /// Each message is split across its connection's QPs (NCCL_IB_SPLIT_DATA_ON_QPS=1, NCCL's
    /// default before 2.20.3; net_ib/p2p.cc `ncclIbMultiSend`); `false`: each message goes whole
    /// on the connection's next QP in turn (the default since NCCL 2.20.3; net_ib/common.h
    /// `ncclIbCommBaseGetQpForRequest`: QP (request id x data QPs + i) mod QPs).
    pub split_data_on_qps: bool,
    /// Switches also hash the destination QP (BTH) into the ECMP hash.
    pub hash_dest_qp: bool,
    /// With adaptive routing, messages below this many bytes stay on the static route
    /// (NCCL_IB_AR_THRESHOLD); 0: every packet may be routed adaptively.
    pub ar_threshold_bytes: u64,
    /// What adaptive routing ranks the allowed ports by (`[routing] ar_select`).
    pub ar_select: ArSelect,
    /// Packet trimming at switch egress (UEC 1.0 3.6.17): a data packet that would take its
    /// queue past this many bytes is cut to its header and forwarded on the ACK class, so the
    /// receiver NACKs it at once; 0: off (drop-tail).
    pub trim_bytes: u64,
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
    /// Nothing on: no marking, no congestion control, one QP per connection (messages split
    /// across a connection's QPs when there are more: `sim`'s connections), 5-tuple hash,
    /// adaptive routing (if the policy is) by queued bytes.
    fn default() -> CcParams {
        CcParams {
            ecn: None,
            algo: CcAlgo::None,
            cnp_tc: 0,
            qps_per_connection: 1,
            split_data_on_qps: true,
            hash_dest_qp: false,
            ar_threshold_bytes: 0,
            ar_select: ArSelect::Queue,
            trim_bytes: 0,
        }
    }
}

impl CcParams {
    /// QPs one message is split across (`entropy::parts`): the connection's QPs when data is
    /// split on QPs, else one.
    pub fn qps_per_message(&self) -> u16 {
        if self.split_data_on_qps {
            self.qps_per_connection
        } else {
            1
        }
    }

    /// Checks the mechanisms against each other and the rest of `p`; the error names the field,
    /// the problem and what is allowed.
    pub fn validate(&self, p: &SimParams) -> Result<(), ParamError> {
        let err = |f: &'static str, (prob, allowed): (String, &str)| {
            Err(ParamError::new(f, prob, allowed))
        };
        if let Some(e) = &self.ecn
            && let Err(x) = e.validate()
        {
            return err("cc.ecn", x);
        }
        if let Err((f, x)) = self.algo.validate(self.ecn.is_some()) {
            return err(f, x);
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
        if p.routing.reorders() && !p.transport.places_out_of_order() {
            return err(
                "routing",
                (
                    format!(
                        "{} routing reorders packets; a go-back-N receiver would NAK them",
                        p.routing.name()
                    ),
                    "transport selective_repeat or unordered (the NIC places out-of-order packets)",
                ),
            );
        }
        Ok(())
    }
}
