//! The flow engine's events: what falls due at a picosecond, kept by time in one ordered map
//! (`fluid`). A time's events run in the order they were pushed.

use std::collections::BTreeMap;

/// An event of the loop (12 bytes: a tag and two ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Flow `flow` has drained its work, if `ver` is still its drain's version (a rate change
    /// since re-schedules it under a new one).
    Drained { flow: u32, ver: u32 },
    /// The sender's completion of message `msg`: its dependants are released.
    Done { msg: u32 },
    /// Message `msg` starts moving bytes (posted plus the NIC's latency).
    Start { msg: u32 },
    /// NIC `nic`'s send stage changes (`nic_send`), if `ver` is still its version.
    NicSend { nic: u32, ver: u32 },
    /// Step `step` of a synchronized incast flow's cap (`dcqcn_incast::Onsets`).
    Onset { flow: u32, step: u32 },
}

const _: () = assert!(size_of::<Event>() == 12);

/// Pending events by time (ps).
pub type Events = BTreeMap<u64, Vec<Event>>;
