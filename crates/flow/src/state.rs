//! The event loop's per-message, per-QP and per-flow state (`fluid`), which the effects read
//! through their context (`effect::Ctx`) and the results are built from (`report`).

/// Work units per bit: a flow's remaining work is kept in bits x 10^12, so a rate (bit/s)
/// times picoseconds.
pub const PS_PER_S: u128 = 1_000_000_000_000;
/// No time yet (a message not posted, received or finished).
pub const NONE: u64 = u64::MAX;
/// No message, QP or NIC.
pub const NONE32: u32 = u32::MAX;

/// Per-message state (40 bytes; an event reads it with its QP).
#[derive(Clone, Copy)]
pub struct MsgState {
    pub post: u64,
    pub recv: u64,
    pub finish: u64,
    /// When its bytes started to drain (its QP free): the loss model's tail and the batching
    /// window start there.
    pub sent: u64,
    pub subflows_left: u32,
    /// Its QP (`route::number_qps`; `NONE32` for NVLink).
    pub qp: u32,
}

/// Per-QP state a message's start and completion read together (24 bytes).
#[derive(Clone, Copy)]
pub struct QpState {
    /// When its latest message was received (a QP delivers in order).
    pub recv: u64,
    /// The ACK path's latency (ps).
    pub ack: u32,
    /// The first and last of the messages waiting behind the draining one (`NONE32`).
    pub head: u32,
    pub tail: u32,
    /// Whether a message is draining.
    pub busy: bool,
}

// What a message, a QP and a flow cost (16.7 M of each in a 4,096-GPU all-to-all).
const _: () = assert!(size_of::<MsgState>() == 40);
const _: () = assert!(size_of::<QpState>() == 24);
const _: () = assert!(size_of::<FlowRun>() == 32);

/// Per-flow state an event reads together (32 bytes, half a cache line): its remaining work as
/// of `last`, the version of its pending drain event, its message.
#[derive(Clone, Copy)]
pub struct FlowRun {
    pub work: u128,
    pub last: u64,
    pub ver: u32,
    pub msg: u32,
}

impl FlowRun {
    /// The work left at `now` moving at `rate` since `last`.
    pub fn left_at(&self, rate: u64, now: u64) -> u128 {
        self.work
            .saturating_sub(rate as u128 * now.saturating_sub(self.last) as u128)
    }

    /// Its progress at rate `rate` (`hol`).
    pub fn progress(&self, rate: u64) -> Progress {
        Progress {
            work: self.work,
            at: self.last,
            rate,
        }
    }
}

/// A flow's progress: `work` left (bits x 10^12) at `at` ps, draining at `rate` bit/s since.
#[derive(Clone, Copy)]
pub struct Progress {
    pub work: u128,
    pub at: u64,
    pub rate: u64,
}

impl Progress {
    pub(super) fn base(&self) -> u128 {
        self.work + self.rate as u128 * self.at as u128
    }
}
