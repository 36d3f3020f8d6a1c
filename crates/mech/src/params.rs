//! The packet engine's parameters: a plain struct, with constructors giving cited defaults for a
//! RoCEv2-like and an InfiniBand-like fabric. The fabric profiles (data/profiles) map onto it.

use super::cc::CcParams;
use super::class_map::ClassMap;
use super::error::ParamError;
use super::psn::InitialPsn;
use fabricsim_core::units::{BitRate, Time};

/// Most traffic classes a port can have (802.1Q priorities; IB data VLs 0-7 in use).
pub const MAX_TC: usize = 8;

/// One credit: a 64-byte block (IBA Vol. 1 7.9.4).
pub const BLOCK_BYTES: u32 = 64;

/// Blocks a frame of `frame` bytes occupies.
#[inline]
pub fn blocks(frame: u32) -> u32 {
    frame.div_ceil(BLOCK_BYTES)
}

pub use super::recovery::Transport;
pub use super::route::spray::{Spray, SprayPick};

/// How a switch picks among equal-cost next hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutePolicy {
    /// Hash of the flow's 5-tuple (RoCEv2: UDP source port per QP), per switch salted.
    EcmpFlowHash,
    /// Destination-based static routing: IB linear forwarding tables computed D-mod-K per tier
    /// (Zahavi 2010; OpenSM fat-tree routing): `sim::ibroute`.
    DModK,
    /// Adaptive routing per packet among the allowed ports by least queued bytes, D-mod-K as
    /// the static fallback (NVIDIA AR): `sim::ibroute`.
    Adaptive,
    /// Per-packet spraying over the ECMP set, the entropy per packet round robin or random
    /// (`sim::route::spray`).
    Spray(Spray),
}

impl RoutePolicy {
    /// The name in TOML (`[sim] routing`, a profile's `[routing] policy`).
    pub fn name(self) -> &'static str {
        match self {
            RoutePolicy::EcmpFlowHash => "ecmp",
            RoutePolicy::DModK => "dmodk",
            RoutePolicy::Adaptive => "adaptive",
            RoutePolicy::Spray(_) => "spray",
        }
    }

    /// Whether packets of one QP may take different paths (a choice per packet, in the engine's
    /// general hop) and so arrive out of order.
    pub fn reorders(self) -> bool {
        matches!(self, RoutePolicy::Adaptive | RoutePolicy::Spray(_))
    }
}

/// Egress scheduling between the traffic classes of a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduling {
    /// Lowest class index first.
    StrictPriority,
    /// Deficit weighted round robin (Shreedhar & Varghese, SIGCOMM 1995); quantum per class.
    Dwrr { quantum_bytes: [u32; MAX_TC] },
    /// Simplified IB VL arbitration (IBA Vol. 1 7.6.9): VLs in `high` (bit per VL) form the
    /// high-priority table, the others the low one; the high table is served first until it
    /// has sent more than `high_limit_bytes` (Limit_of_High_Priority, 4 KB units; `u32::MAX`:
    /// unlimited) while a low-priority packet waits, then one low-priority packet goes; each
    /// table is weighted round robin with `weight_bytes` per VL (IBA weights count 64-byte
    /// units).
    VlArb {
        high: u8,
        weight_bytes: [u32; MAX_TC],
        high_limit_bytes: u32,
    },
}

/// Link-level flow control: what may stop an egress queue besides an empty queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowControl {
    /// Lossy Ethernet: full buffers drop.
    None,
    /// InfiniBand credit-based flow control per VL (IBA Vol. 1 7.9); see `sim::credits`.
    Credits(CreditParams),
    /// Priority flow control (IEEE 802.1Qbb); see `sim::pfc`.
    Pfc(PfcParams),
}

/// CBFC's default credit-freed update spacing and its allowed range, 800 B to 1 MB (UEC 1.0
/// 5.2 via the OCP SAI CBFC proposal).
pub const CBFC_UPDATE_BYTES: u32 = 6400;
pub const CBFC_UPDATE_RANGE: std::ops::RangeInclusive<u32> = 800..=1 << 20;

/// IB credits: a receive buffer per VL per input port; the traffic classes are the data VLs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CreditParams {
    /// Receive buffer per VL of each switch input port.
    pub switch_vl_buffer_bytes: u64,
    /// Receive buffer per VL of a NIC port.
    pub nic_vl_buffer_bytes: u64,
    /// How often to look for a cycle of credit-starved queues (deadlock); `None`: never.
    pub deadlock_check: Option<Time>,
    /// Bytes a receiver frees between two credit updates: 0 for IB (one per frame freed), UEC
    /// CBFC's credit-freed update spacing (UEC 1.0 5.2) otherwise.
    pub update_bytes: u32,
}

impl CreditParams {
    /// Per-VL buffers of 256 KB: BW x RTT + MTU covers a 400G link up to ~150 m
    /// (BW x RTT + MTU, RTT = 2 x 5 ns/m x L + ~1 us: 100 m needs 104 KB, 500 m 304 KB).
    /// Quantum-2's per-VL
    /// split is not published (estimate).
    pub fn default_ib() -> CreditParams {
        CreditParams {
            switch_vl_buffer_bytes: 256 * 1024,
            nic_vl_buffer_bytes: 256 * 1024,
            deadlock_check: Some(Time::from_us(100)),
            update_bytes: 0,
        }
    }

    /// UEC CBFC per virtual channel (UEC 1.0 5.2): IB's buffers (Tomahawk's per-channel split is
    /// not published: estimate) with credit-freed updates every 6,400 B, the default of the OCP
    /// SAI proposal,
    /// https://github.com/opencomputeproject/SAI/blob/master/doc/CBFC/SAI-Credit_Based_Flow_Control.md.
    pub fn cbfc() -> CreditParams {
        CreditParams {
            update_bytes: CBFC_UPDATE_BYTES,
            ..CreditParams::default_ib()
        }
    }

    /// The receive buffer per VL of a switch (`switch` true) or NIC input port, in credits
    /// (64-byte blocks), bounded so that modular counters keep room (`sim::credits`).
    pub fn vl_buffer_blocks(&self, switch: bool) -> u32 {
        let b = if switch {
            self.switch_vl_buffer_bytes
        } else {
            self.nic_vl_buffer_bytes
        };
        (b / BLOCK_BYTES as u64).min(u32::MAX as u64 / 4) as u32
    }
}

/// When a class's ingress usage reaches XOFF.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PfcThreshold {
    /// A fixed number of bytes per (port, priority).
    Static(u64),
    /// alpha x the free shared buffer (dynamic threshold, Choudhury & Hahne 1998; SONiC
    /// lossless pool `dynamic_th`).
    Dynamic(f64),
}

/// How the headroom per (port, priority) is set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Headroom {
    /// The SONiC formula (`sim::headroom`) for each port's rate and cable, times `scale`
    /// (1.0 = tuned; below 1 shows what an undersized headroom does).
    Formula { scale: f64 },
    /// The same bytes on every lossless (port, priority).
    Bytes(u64),
}

/// PFC on the lossless classes of every switch and NIC port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PfcParams {
    /// Bit `tc` set: class `tc` is lossless (paused instead of dropped).
    pub lossless: u8,
    pub xoff: PfcThreshold,
    /// XON when usage falls this far below XOFF (Linux mlxsw spectrum_buffers.c: 2 x MTU
    /// hysteresis).
    pub xon_offset_bytes: u64,
    pub headroom: Headroom,
    /// Time from a PAUSE's arrival to the sender stopping at its next frame boundary
    /// (`None`: the IEEE 802.3 31B.3.7 bound for the port's rate, `headroom::peer_response`).
    pub peer_response: Option<Time>,
    /// A port paused without a break for this long has PFC turned off on that queue, which
    /// then drops (PFC watchdog; `None`: off). Meta: 200 ms (Meta engineering blog, 2024).
    pub watchdog: Option<Time>,
    /// How often to look for a cycle of blocked queues (deadlock); `None`: never.
    pub deadlock_check: Option<Time>,
}

impl PfcParams {
    /// How many of the first `classes` classes are lossless (each reserves headroom per port).
    pub fn lossless_classes(&self, classes: usize) -> u64 {
        (0..classes.min(8))
            .filter(|&t| self.lossless & (1 << t) != 0)
            .count() as u64
    }

    /// PFC on the data class with the SONiC headroom, dynamic XOFF (alpha 1/8, free >> 3
    /// as in HPCC's switch-mmu.cc; the value a placeholder), 2 x MTU XON hysteresis.
    pub fn tuned(data_tc: u8, mtu_frame_bytes: u64) -> PfcParams {
        PfcParams {
            lossless: 1 << data_tc,
            xoff: PfcThreshold::Dynamic(0.125),
            xon_offset_bytes: 2 * mtu_frame_bytes,
            headroom: Headroom::Formula { scale: 1.0 },
            peer_response: None,
            watchdog: Some(Time::from_ms(200)),
            deadlock_check: Some(Time::from_us(100)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SimParams {
    /// Payload bytes per packet (path MTU of the RC transport).
    pub mtu_bytes: u32,
    /// Header bytes per packet counted in buffers and on the wire.
    pub header_bytes: u32,
    /// Extra bytes per frame on the wire only (Ethernet preamble, SFD and inter-frame gap).
    pub wire_overhead_bytes: u32,
    /// Smallest frame (Ethernet: 64 B); shorter frames are padded.
    pub min_frame_bytes: u32,
    /// Bytes an ACK/NAK adds to the header (AETH, 4 B; IBA Vol. 1 9.3.5).
    pub ack_extra_bytes: u32,
    /// Switch pipeline latency, port to port.
    pub switch_latency: Time,
    /// Cut-through when the egress is idle (between ports of equal rate).
    pub cut_through: bool,
    /// NIC pipeline latency, once on each side.
    pub nic_latency: Time,
    /// Shared packet buffer per switch.
    pub switch_buffer_bytes: u64,
    /// Dynamic-threshold alpha: a queue may hold alpha x the free buffer (Choudhury & Hahne 1998).
    pub dt_alpha: f64,
    /// Traffic classes per port (1..=MAX_TC).
    pub traffic_classes: u8,
    /// Class of data packets and of ACK/NAKs.
    pub data_tc: u8,
    pub ack_tc: u8,
    /// A message's class label to its engine class (`None`: one to one; `class_map`).
    pub class_map: Option<ClassMap>,
    pub scheduling: Scheduling,
    /// Link-level flow control: none (lossy), IB credits, or PFC.
    pub flow_control: FlowControl,
    /// The receiver ACKs every `ack_every` in-order packets and at the end of each message.
    pub ack_every: u32,
    pub transport: Transport,
    /// Outstanding packets per QP (0 = unlimited, as the RC transport itself; selective repeat
    /// needs a bound, IRN's BDP cap).
    pub window_packets: u32,
    /// Each QP's initial PSN (`sim::psn`: 24-bit PSNs wrap).
    pub initial_psn: InitialPsn,
    /// Local ACK timeout exponent: timeout = 4.096 us x 2^exp (IBA; NCCL_IB_TIMEOUT).
    pub timeout_exp: u8,
    /// Retries after a timeout before the QP goes to the error state (NCCL_IB_RETRY_CNT).
    pub retry_count: u8,
    /// Per-packet loss probability on every link (corruption), unless a fault overrides it.
    pub loss_rate: f64,
    /// Bit error rate on every link, turned into a per-frame loss 1-(1-BER)^(8 L) (independent bit errors).
    pub ber: f64,
    pub routing: RoutePolicy,
    /// ECN, DCQCN, IB CC, ECMP entropy and the adaptive-routing threshold (`sim::cc`).
    pub cc: CcParams,
    /// Initial per-QP rate limit (the NIC's rate limiter, as `ibv_modify_qp_rate_limit` sets
    /// it); `None`: line rate. Congestion control drives the same limiter.
    pub qp_rate_limit: Option<BitRate>,
    /// UDP destination port of RoCEv2 (IANA 4791) and the base of per-QP source ports.
    pub udp_dport: u16,
    pub seed: u64,
    /// Per-port time series interval; `None`: no series.
    pub sample_interval: Option<Time>,
    /// Link-level retry on every link (UEC 1.0 5.1, `llr`); `None`: off.
    pub llr: Option<super::llr::Llr>,
}

impl SimParams {
    /// RoCEv2 on a 51.2T-class Ethernet switch with ConnectX-7 NICs.
    pub fn roce() -> SimParams {
        SimParams {
            mtu_bytes: 4096,                    // [nic.common] roce_mtu_bytes_jumbo
            header_bytes: 62, // Eth 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4
            wire_overhead_bytes: 20, // preamble 7 + SFD 1 + IFG 12 (IEEE 802.3)
            min_frame_bytes: 64, // IEEE 802.3 minimum frame
            ack_extra_bytes: 4, // AETH
            switch_latency: Time::from_ns(600), // [switch.spectrum4_sn5600] latency_ns (estimate)
            cut_through: true,
            nic_latency: Time::from_ns(600), // [nic.connectx7] nic_latency_ns (estimate)
            switch_buffer_bytes: 128 * 1024 * 1024, // [switch.spectrum4_sn5600] buffer_mb (estimate)
            dt_alpha: 1.0, // SONiC lossy-pool default dynamic_th 0 = alpha 1
            traffic_classes: 2,
            data_tc: 1,
            ack_tc: 0,
            class_map: None,
            scheduling: Scheduling::StrictPriority,
            flow_control: FlowControl::None,
            ack_every: 1, // ns-3 HPCC L2_ACK_INTERVAL 1 (mix/config.txt)
            transport: Transport::GoBackN, // [rc_transport] loss_recovery
            window_packets: 0,
            initial_psn: InitialPsn::Zero,
            timeout_exp: 20, // [nccl] ib_timeout: 4.29 s
            retry_count: 7,  // [nccl] ib_retry_cnt
            loss_rate: 0.0,
            ber: 0.0,
            routing: RoutePolicy::EcmpFlowHash,
            cc: CcParams::default(),
            qp_rate_limit: None,
            udp_dport: 4791,
            seed: 1,
            sample_interval: None,
            llr: None,
        }
    }

    /// InfiniBand NDR-like: Quantum-2 switch, ConnectX-7, static destination routing, credit
    /// flow control per VL. Adaptive routing and IB CC plug in with their own issue.
    pub fn ib() -> SimParams {
        SimParams {
            mtu_bytes: 4096,        // [nic.common] ib_mtu_bytes
            header_bytes: 26,       // LRH 8 + BTH 12 + ICRC 4 + VCRC 2
            wire_overhead_bytes: 0, // IB framing symbols are inside the line code
            min_frame_bytes: 0,
            ack_extra_bytes: 4,                 // AETH
            switch_latency: Time::from_ns(130), // [switch.quantum2_qm9700] latency_ns
            cut_through: true,
            flow_control: FlowControl::Credits(CreditParams::default_ib()),
            nic_latency: Time::from_ns(600), // [nic.connectx7] nic_latency_ns (estimate)
            switch_buffer_bytes: 64 * 1024 * 1024, // not published (estimate)
            dt_alpha: 1.0,
            routing: RoutePolicy::DModK,
            ..SimParams::roce()
        }
    }

    /// Ultra Ethernet (UEC 1.0): lossy Ethernet as RoCE's, the UET transport on UDP port 4793
    /// (UEC 1.0 specification 3.5).
    pub fn uec() -> SimParams {
        SimParams {
            udp_dport: 4793,
            ..SimParams::roce()
        }
    }

    /// The local ACK timeout: 4.096 us x 2^timeout_exp (Linux qib driver: "4.096 usec. * (1 <<
    /// qp->timeout)").
    pub fn ack_timeout(&self) -> Time {
        Time(4_096_000u64 << self.timeout_exp)
    }

    /// How long a QP keeps resending into a dead path before it gives up (its error state):
    /// an RC QP after `retry_count` retries of one fixed ACK timeout, the (retry_count + 1)-th
    /// expiry (IBA Vol. 1 9.7.6.1.3); UEC's RUD backs each packet's timer off as
    /// `RTO_Init_Time x 2^n` and gives up at expiry `Max_RTO_Retx_Cnt` + 1, after
    /// RTO x (2^(retry_count + 1) - 1) (UEC 1.0 PDS, as `packet::transport::rud` runs it).
    pub fn gives_up(&self) -> Time {
        let expiries = match self.transport {
            Transport::Rud => (2u64 << self.retry_count) - 1,
            _ => self.retry_count as u64 + 1,
        };
        self.ack_timeout() * expiries
    }

    /// Frame bytes (in buffers) of a packet carrying `payload` bytes.
    pub fn data_frame_bytes(&self, payload: u32) -> u32 {
        (payload + self.header_bytes).max(self.min_frame_bytes)
    }

    /// A full (MTU) data frame on the wire: headers and the link's per-frame overhead
    /// (preamble, inter-frame gap) included.
    pub fn mtu_frame_wire_bytes(&self) -> u64 {
        (self.data_frame_bytes(self.mtu_bytes) + self.wire_overhead_bytes) as u64
    }

    pub fn ack_frame_bytes(&self) -> u32 {
        (self.header_bytes + self.ack_extra_bytes).max(self.min_frame_bytes)
    }

    /// Line-rate goodput fraction of full packets: payload / (payload + all overhead).
    pub fn payload_efficiency(&self) -> f64 {
        let p = self.mtu_bytes as f64;
        p / self.mtu_frame_wire_bytes() as f64
    }

    /// The rate limiter's picoseconds per wire byte for `rate` (0: unlimited).
    pub fn limiter_ps_per_byte(rate: Option<BitRate>) -> u64 {
        rate.map(|r| 8_000_000_000_000u64.div_ceil(r.bps().max(1)))
            .unwrap_or(0)
    }

    /// Checks ranges; the error names the offending field.
    /// Class labels a message may carry: the class map's (16 SLs, 8 priorities), else the
    /// engine classes themselves.
    pub fn class_labels(&self) -> u8 {
        self.class_map.map_or(self.traffic_classes, |m| m.labels())
    }

    /// The engine class of a message labelled `label` (`None`: the data class), through the
    /// class map; `None` for a label past the map.
    pub fn engine_class(&self, label: Option<u8>) -> Option<u8> {
        match (label, self.class_map) {
            (None, _) => Some(self.data_tc),
            (Some(l), Some(m)) => m.class_of(l),
            (Some(l), None) => Some(l),
        }
    }

    /// [`SimParams::engine_class`] of message `i`, or why the fabric has no class for it (both
    /// engines refuse such a message with this text).
    pub fn message_class(&self, i: usize, label: Option<u8>) -> Result<u8, String> {
        match self.engine_class(label) {
            Some(tc) if tc < self.traffic_classes => Ok(tc),
            _ => Err(match self.class_map {
                Some(m) => format!(
                    "message {i}: class label {} but the fabric's class map has labels 0 to {}",
                    label.unwrap_or(self.data_tc),
                    m.labels() - 1
                ),
                None => format!(
                    "message {i}: traffic class {} but the fabric has classes 0 to {}",
                    label.unwrap_or(self.data_tc),
                    self.traffic_classes - 1
                ),
            }),
        }
    }

    /// UEC 1.0 5.1 defines LLR for Ethernet links; a credit-based link (IB, CBFC) would replay
    /// past its credit check, which this model does not do.
    pub fn check_llr(&self) -> Result<(), ParamError> {
        if self.llr.is_some() && matches!(self.flow_control, FlowControl::Credits(_)) {
            return Err(ParamError::new(
                "llr",
                "LLR with credit-based flow control (IB credits or CBFC)",
                "flow_control = \"none\" or \"pfc\" (Ethernet links)",
            ));
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        let err = |f: &'static str, p: String, a: &str| Err(ParamError::new(f, p, a));
        if self.mtu_bytes == 0 || self.mtu_bytes > 9000 || self.header_bytes > 512 {
            return err(
                "mtu_bytes",
                format!(
                    "MTU {} B with {} B headers",
                    self.mtu_bytes, self.header_bytes
                ),
                "1 to 9000 bytes of payload, up to 512 B of headers",
            );
        }
        if self.traffic_classes == 0 || self.traffic_classes as usize > MAX_TC {
            return err(
                "traffic_classes",
                format!("{} classes", self.traffic_classes),
                "1 to 8",
            );
        }
        if self.data_tc >= self.traffic_classes || self.ack_tc >= self.traffic_classes {
            return err(
                "data_tc",
                "class index beyond traffic_classes".into(),
                "0 to traffic_classes-1",
            );
        }
        if let Some(m) = self.class_map
            && let Some(&c) = m.entries().iter().find(|&&c| c >= self.traffic_classes)
        {
            return err(
                "class_map",
                format!("engine class {c} in {:?}", m.entries()),
                "0 to traffic_classes-1",
            );
        }
        if self.ack_every == 0 {
            return err("ack_every", "must be at least 1".into(), "1 or more");
        }
        // RCCC's receiver learns of a sender's completion from the packet it ACKs.
        if self.ack_every > 1
            && matches!(
                self.cc.algo,
                super::cc_algo::CcAlgo::Rccc(_) | super::cc_algo::CcAlgo::NsccRccc(..)
            )
        {
            return err(
                "ack_every",
                format!("{} with RCCC", self.ack_every),
                "1 (RCCC grants credit on every packet's ACK)",
            );
        }
        if let RoutePolicy::Spray(s) = self.routing
            && s.pick == SprayPick::Reps
            && !(1..=super::route::reps::MAX_ENTROPIES).contains(&s.entropies)
        {
            return err(
                "spray_entropies",
                format!("{} with spray_pick = \"reps\"", s.entropies),
                "1 to 256 (an ACK echoes the entropy in a byte)",
            );
        }
        self.check_llr()?;
        if self.timeout_exp > 31 {
            return err(
                "timeout_exp",
                format!("{}", self.timeout_exp),
                "0 to 31 (IBA 5-bit field)",
            );
        }
        if !(0.0..1.0).contains(&self.loss_rate) || !(0.0..1.0).contains(&self.ber) {
            return err("loss_rate", "probability out of range".into(), "0 <= p < 1");
        }
        if !self.dt_alpha.is_finite() || self.dt_alpha <= 0.0 {
            return err(
                "dt_alpha",
                format!("{}", self.dt_alpha),
                "a positive number",
            );
        }
        if self.transport.places_out_of_order() && self.window_packets == 0 {
            return err(
                "window_packets",
                format!("{} needs a bounded window", self.transport.name()),
                "1 or more (IRN caps outstanding packets at the BDP)",
            );
        }
        self.cc.validate(self)
    }

    /// The window in packets that covers the bandwidth-delay product of `rtt` at `rate`.
    pub fn bdp_packets(&self, rate: BitRate, rtt: Time) -> u32 {
        let wire = self.mtu_frame_wire_bytes();
        (rate.bytes_in(rtt).div_ceil(wire)).max(1) as u32
    }
}
