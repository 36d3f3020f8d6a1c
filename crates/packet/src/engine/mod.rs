//! The event loop and the packet path: NIC -> link -> switch (route, admit, queue, schedule)
//! -> link -> ... -> NIC (RC receiver, ACK back).
//!
//! One event per packet per hop (`Arrive`, at the time the packet can leave the next node), plus
//! `TxFree` only while a port has a backlog: an idle port sends at once. Time is integer
//! picoseconds; ties pop in insertion order, so a run is a pure function of its inputs.
//!
//! This file holds the state (`Engine`, its per-port, per-NIC and per-message records and the
//! event type); the behaviour is split by concept:
//! - `build`: setting up a run (ports, QPs, messages, first events);
//! - `run`: the event loop and dispatch;
//! - `wire`: an egress port's transmissions, link loss, a packet's arrival at the next node;
//! - `switch`: routing, queues and scheduling in a switch;
//! - `admission`: what a switch does with a packet that meets its buffer (drop-tail, PFC,
//!   credits), the event loop's type parameter;
//! - `nic_tx`: the NIC send path (QP ring, segmentation, pacing, the retransmission timer);
//! - `nic_rx`: the NIC receive path and the RC transport (ACK, NAK, SACK, CNP, timeout);
//! - `messages`: posting, starting and completing messages of the DAG;
//! - `link`: injected faults, link down/up and routing's reaction;
//! - `finish`: time-series sampling and the results;
//! - `llfc`: link-level flow control's state and control frames (credits, PFC, watchdog,
//!   deadlock detection); `llr`: link-level retry (UEC 1.0 5.1); `mark`: egress marking; `cc`: congestion control; `adaptive`: the
//!   adaptive route choice.

mod adaptive;
mod admission;
mod build;
mod cc;
mod finish;
mod link;
pub mod llfc;
mod llr;
mod mark;
mod messages;
mod nic_rx;
mod nic_tx;
mod rud;
mod run;
mod spray;
mod switch;
mod tab;
mod wire;

use super::packet::{Fifo, NIL, QueueArena, Slab};
use super::queue::{CalendarQueue, Packed};
use super::ring::{Ring, RingArena};
use super::sched::SchedState;
use super::transport::Qp;
use crate::congestion::{CcState, TimerId};
use fabricsim_core::message::MessageDag;
use fabricsim_core::release::Release;
use fabricsim_core::rng::Rng;
use fabricsim_core::topology::Topology;
use fabricsim_core::units::Time;

use fabricsim_mech::params::SimParams;
use fabricsim_mech::reroute::{Reach, RerouteDelays};
use fabricsim_mech::results::Counters;
use llfc::{FcEv, LinkFc};
use tab::Tab;

const NO_TIME: u64 = u64::MAX;
/// Events between progress checks (stop flag, progress callback).
const CHECK_EVERY: u64 = 1 << 18;

/// An event as the queue stores it: 8 bytes, so a queue entry with its time is 16.
#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Packet `pkt` can leave the node of its ingress port `Packet::port` (switch) or has
    /// arrived (NIC).
    Arrive {
        pkt: u32,
    },
    /// Egress `port` finished serializing; pull the next packet.
    TxFree {
        port: u32,
    },
    /// The application posts message `msg`.
    Post {
        msg: u32,
    },
    /// After the sender NIC's latency, `msg` joins its QP.
    Start {
        msg: u32,
    },
    /// The rate limiter lets `qp` send again.
    QpWake {
        qp: u32,
    },
    /// Check `qp`'s local ACK timer.
    Timer {
        qp: u32,
    },
    /// An NVLink transfer completes.
    NvDone {
        msg: u32,
    },
    /// A link changes physical state.
    Link {
        link: u32,
        up: bool,
    },
    /// Local repair: the link's two ends reflect its state change (`sim::reroute`).
    Route {
        link: u32,
        up: bool,
    },
    /// Global reroute: every switch avoids ports that no longer reach a destination.
    Reroute,
    Sample,
    /// Timer `timer` of the congestion control of `qp` (`sim::congestion`).
    CcTimer {
        qp: u32,
        timer: TimerId,
    },
    /// Link-level flow control (credits, PAUSE, watchdog, deadlock checks): `llfc`; the
    /// event itself waits in `Events::fc[slot]` (a credit update does not fit 8 bytes).
    Fc {
        slot: u32,
    },
}

const _: () = assert!(std::mem::size_of::<Ev>() == 8);

/// A packed event's variant (`Packed for Ev`), for the hot kinds read without unpacking.
#[inline(always)]
fn tag(x: u64) -> u64 {
    x >> 48
}
const TAG_ARRIVE: u64 = 0;
const TAG_TXFREE: u64 = 1;

/// An event in the calendar's wheel: the variant in bits 48..52, its `u32` in bits 0..32, a
/// flag or timer kind in bits 32..40 (`queue::PACKED_BITS` is 52).
impl Packed for Ev {
    #[inline(always)]
    fn pack(self) -> u64 {
        let (tag, a, b): (u64, u32, u64) = match self {
            Ev::Arrive { pkt } => (TAG_ARRIVE, pkt, 0),
            Ev::TxFree { port } => (TAG_TXFREE, port, 0),
            Ev::Post { msg } => (2, msg, 0),
            Ev::Start { msg } => (3, msg, 0),
            Ev::QpWake { qp } => (4, qp, 0),
            Ev::Timer { qp } => (5, qp, 0),
            Ev::NvDone { msg } => (6, msg, 0),
            Ev::Link { link, up } => (7, link, up as u64),
            Ev::Route { link, up } => (8, link, up as u64),
            Ev::Reroute => (9, 0, 0),
            Ev::Sample => (10, 0, 0),
            Ev::CcTimer { qp, timer } => (11, qp, timer as u64),
            Ev::Fc { slot } => (12, slot, 0),
        };
        tag << 48 | b << 32 | a as u64
    }

    #[inline(always)]
    fn unpack(x: u64) -> Ev {
        let a = x as u32;
        let b = (x >> 32) as u8;
        match tag(x) {
            TAG_ARRIVE => Ev::Arrive { pkt: a },
            TAG_TXFREE => Ev::TxFree { port: a },
            2 => Ev::Post { msg: a },
            3 => Ev::Start { msg: a },
            4 => Ev::QpWake { qp: a },
            5 => Ev::Timer { qp: a },
            6 => Ev::NvDone { msg: a },
            7 => Ev::Link {
                link: a,
                up: b != 0,
            },
            8 => Ev::Route {
                link: a,
                up: b != 0,
            },
            9 => Ev::Reroute,
            10 => Ev::Sample,
            11 => Ev::CcTimer {
                qp: a,
                timer: TimerId::from_index(b),
            },
            _ => Ev::Fc { slot: a },
        }
    }
}

/// The event queue with the side table of flow-control events.
struct Events {
    q: CalendarQueue<Ev>,
    fc: Vec<FcEv>,
    fc_free: Vec<u32>,
}

impl Events {
    fn new() -> Events {
        Events {
            q: CalendarQueue::new(),
            fc: Vec::new(),
            fc_free: Vec::new(),
        }
    }

    #[inline(always)]
    fn push(&mut self, t: u64, ev: Ev) {
        self.q.push(t, ev);
    }

    /// Schedules flow-control event `e` at `t`.
    fn push_fc(&mut self, t: u64, e: FcEv) {
        let slot = match self.fc_free.pop() {
            Some(s) => {
                self.fc[s as usize] = e;
                s
            }
            None => {
                self.fc.push(e);
                self.fc.len() as u32 - 1
            }
        };
        self.q.push(t, Ev::Fc { slot });
    }

    /// The flow-control event of a popped `Ev::Fc`, its slot freed.
    fn take_fc(&mut self, slot: u32) -> FcEv {
        self.fc_free.push(slot);
        self.fc[slot as usize]
    }

    fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// `PortState::flags` bits.
const P_LINK_UP: u8 = 1;
/// Routing may choose the port (its link is up, or went down less than the local repair delay
/// ago, or local repair is off).
const P_ROUTE_OK: u8 = 2;
/// The port is a NIC's.
const P_NIC: u8 = 4;
/// The last global reroute blocked some destinations through the port (`Engine::reach`).
const P_REROUTED: u8 = 8;
/// The port receives under link-level retry (`llr`).
const P_LLR: u8 = 16;

/// An egress port: what its transmissions read and write, in one cache line (the struct is
/// aligned to one). What the packet path reads about the port on the other side of a hop is in
/// the compact `PortInfo`; the loss settings, read only when `tx_hook` is set, in `PortLoss`.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct PortState {
    busy_until: Time,
    /// Propagation plus the latency of the node at the other end (switch pipeline or NIC).
    hop_delay: Time,
    /// Bytes queued in all classes.
    queued: u64,
    tx_bytes: u64,
    rate: fabricsim_core::units::BitRate,
    /// Picoseconds per byte when exact at this rate (0: compute from `rate`).
    ps_per_byte: u32,
    node: u32,
    peer: u32,
    /// Host index when the node is a NIC, else NIL.
    host: u32,
    /// A `TxFree` is scheduled.
    wake: bool,
    /// Link-level flow control: bit `tc` set = that class may not send (credits, PFC).
    blocked: u8,
    /// The peer switch cuts through (all its ports at one rate).
    peer_cut_through: bool,
    /// A transmission calls `tx_hooks`: a `PortLoss` setting is on, or the congestion control
    /// takes telemetry at this (switch) egress.
    tx_hook: bool,
    /// Bit `tc`: the PFC watchdog turned PFC off on that class (`llfc::fc_watchdog`).
    wd_off: u8,
    /// Link-level retry: new frames wait (a replay pending or the replay buffer full; `llr`).
    llr_hold: bool,
}

const _: () = assert!(std::mem::size_of::<PortState>() == 64);

/// A port as routing (an egress candidate) and an arrival (the ingress) see it: 8 bytes, so
/// the table of all ports stays in cache while the `PortState` lines come and go.
#[derive(Clone, Copy, Debug)]
struct PortInfo {
    node: u32,
    /// `P_*` bits.
    flags: u8,
}

/// A port's injected loss (`sim::faults`).
#[derive(Clone, Debug, Default)]
struct PortLoss {
    /// Loss per packet as a fraction of 2^64 (0: none).
    threshold: u64,
    /// Bit error rate (0: none).
    ber: f64,
    /// A bit error rate under FEC: the code and ln(1 - its codeword failure) (`None`: none).
    fec: Option<(fabricsim_mech::fec::RsFec, f64)>,
    /// Corrupt the n-th packet sent, and every `drop_every`-th (0: none); `tx_packets` counts
    /// only while one is set.
    drop_nth: u64,
    drop_every: u64,
    tx_packets: u64,
}

impl PortLoss {
    fn any(&self) -> bool {
        self.threshold != 0
            || self.ber > 0.0
            || self.fec.is_some()
            || self.drop_nth != 0
            || self.drop_every != 0
    }
}

impl PortState {
    /// Inlined: every transmission calls it (a call cost more than its multiply).
    #[inline(always)]
    fn ser(&self, bytes: u32) -> Time {
        if self.ps_per_byte != 0 {
            Time(bytes as u64 * self.ps_per_byte as u64)
        } else {
            self.rate.serialize(bytes as u64)
        }
    }
}

struct Nic {
    /// ACK/NAKs waiting for the wire (sent before data).
    ctrl: Fifo,
    /// QPs with something to send, served round robin (in `Engine::qp_rings`).
    ring: Ring<u32>,
    /// Its port (`Topology::host_port`, kept here: the NIC paths read it per packet).
    port: u32,
}

#[derive(Clone, Copy, Debug)]
struct MsgState {
    /// The QP of its first part; part j is on QP `qp + j`.
    qp: u32,
    /// Parts the message is split into (QPs per connection), parts not yet completed at the
    /// sender, parts not yet received in full.
    parts: u16,
    send_left: u16,
    recv_left: u16,
    post: u64,
    recv: u64,
    finish: u64,
    failed: bool,
}

/// What the caller learns every few hundred thousand events; return false to stop.
pub struct Progress {
    pub now: Time,
    pub events: u64,
    pub completed: u64,
    pub total: u64,
}

/// Options of one run.
#[derive(Default)]
pub struct RunOptions<'a> {
    /// Stop at this simulated time (results are then partial).
    pub until: Option<Time>,
    /// Called every few hundred thousand events (never per event); false stops the run.
    pub progress: Option<&'a mut dyn FnMut(&Progress) -> bool>,
}

pub struct Engine<'a> {
    topo: &'a Topology,
    p: &'a SimParams,
    dag: &'a MessageDag,
    now: Time,
    q: Events,
    pkts: Slab,
    ports: Tab<PortState>,
    /// Per port: its node and `P_*` flags.
    info: Tab<PortInfo>,
    loss: Vec<PortLoss>,
    /// Per port: the scheduler's state (DWRR deficits).
    sched: Tab<SchedState>,
    tcq: Tab<Fifo>,
    /// The entries of every `Fifo` (`tcq`, the NICs' `ctrl`), and of the NICs' QP rings.
    queued: QueueArena,
    qp_rings: RingArena<u32>,
    ntc: usize,
    /// Bit `tc`: some QP sends data on class `tc` (ECN marks those queues).
    data_tcs: u8,
    buf_used: Tab<u64>,
    /// Per switch: candidates towards each destination and the routing salt.
    routes: fabricsim_mech::route::RouteTable,
    nics: Tab<Nic>,
    /// Per host: when its GPU's NVLink egress is next free; one GPU's transfers share its
    /// one-way NVLink rate (`MessageDag::nvlink_rate` is per GPU) one after another.
    nv_free: Vec<u64>,
    qps: Tab<Qp>,
    msgs: Vec<MsgState>,
    release: Release,
    rngs: Vec<Rng>,
    /// Per NIC under random spraying or REPS: its entropy stream (`route::spray`); else empty.
    spray_rngs: Vec<Rng>,
    /// Per QP under REPS: its recycled entropies (`route::reps`); else empty.
    reps: Vec<fabricsim_mech::route::reps::Reps>,
    /// The run's loss recovery, resolved once from the transport and the routing
    /// (`Transport::under`).
    recovery: fabricsim_mech::Transport,
    /// RUD: the messages one ACK completed (`rud`), reused (empty between ACKs).
    rud_done: Vec<u32>,
    rto: Time,
    alpha_x1024: u64,
    wire_extra: u32,
    remaining: u64,
    /// Set when `remaining` reaches 0 or flow control halts the run: the loop's one check.
    stop: bool,
    c: Counters,
    events: u64,
    data_sent: u64,
    series: Option<finish::Sampler>,
    /// Delays of local repair and global reroute after a link state change.
    reroute: RerouteDelays,
    /// Destinations each port no longer reaches, as of the last global reroute.
    reach: Reach,
    cc: CcState,
    /// Link-level flow control state (credits or PFC).
    fc: LinkFc,
    /// Per port under link-level retry: its direction's state (`llr`); else empty.
    llr: Vec<crate::llr::LlrLink>,
}

fn set_bit(flags: &mut u8, bit: u8, on: bool) {
    if on {
        *flags |= bit;
    } else {
        *flags &= !bit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pack_into_the_wheel_and_back() {
        // Every variant and timer kind, with extreme payloads, survives the wheel's packing.
        let mut evs = vec![Ev::Reroute, Ev::Sample];
        for a in [0, 1, 0x1234_5678, u32::MAX] {
            evs.extend([
                Ev::Arrive { pkt: a },
                Ev::TxFree { port: a },
                Ev::Post { msg: a },
                Ev::Start { msg: a },
                Ev::QpWake { qp: a },
                Ev::Timer { qp: a },
                Ev::NvDone { msg: a },
                Ev::Fc { slot: a },
            ]);
            for up in [false, true] {
                evs.extend([Ev::Link { link: a, up }, Ev::Route { link: a, up }]);
            }
            for timer in [TimerId::T0, TimerId::T1, TimerId::T2, TimerId::T3] {
                evs.push(Ev::CcTimer { qp: a, timer });
            }
        }
        for e in evs {
            let x = e.pack();
            assert_eq!(x >> crate::queue::PACKED_BITS, 0, "{e:?}");
            assert_eq!(format!("{:?}", Ev::unpack(x)), format!("{e:?}"));
        }
    }
}
