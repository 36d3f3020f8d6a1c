//! What a packet run produces: counters, per-message completion times, a summary and per-port
//! time series; written as JSON with a fixed key order, so a scenario and seed give the same bytes.

use serde::{Deserialize, Serialize};

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The shared buffer or the queue's dynamic threshold refused it.
    Buffer,
    /// Corrupted on a link (loss rate, BER or an injected drop); discarded by the receiver.
    Corruption,
    /// Sent into, or in flight on, a link that went down.
    LinkDown,
    /// No usable next hop (every candidate link down and rerouted around).
    NoRoute,
    /// Go-back-N receiver discarding a packet after a PSN sequence error.
    OutOfSequence,
    /// A copy of data already received.
    Duplicate,
    /// PFC headroom overflow: the upstream kept sending after XOFF longer than the headroom
    /// covers.
    Headroom,
    /// The PFC watchdog turned PFC off on the queue and drops its packets.
    Watchdog,
    /// The receiving NIC had stopped receiving (injected fault).
    RxStalled,
}

pub const DROP_REASONS: [DropReason; 9] = [
    DropReason::Buffer,
    DropReason::Corruption,
    DropReason::LinkDown,
    DropReason::NoRoute,
    DropReason::OutOfSequence,
    DropReason::Duplicate,
    DropReason::Headroom,
    DropReason::Watchdog,
    DropReason::RxStalled,
];

impl DropReason {
    pub fn name(self) -> &'static str {
        match self {
            DropReason::Buffer => "buffer",
            DropReason::Corruption => "corruption",
            DropReason::LinkDown => "link_down",
            DropReason::NoRoute => "no_route",
            DropReason::OutOfSequence => "out_of_sequence",
            DropReason::Duplicate => "duplicate",
            DropReason::Headroom => "headroom",
            DropReason::Watchdog => "watchdog",
            DropReason::RxStalled => "rx_stalled",
        }
    }
}

/// Packets dropped by reason (all packet kinds).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Drops {
    pub buffer: u64,
    pub corruption: u64,
    pub link_down: u64,
    pub no_route: u64,
    pub out_of_sequence: u64,
    pub duplicate: u64,
    pub headroom: u64,
    pub watchdog: u64,
    pub rx_stalled: u64,
}

impl Drops {
    pub fn add(&mut self, r: DropReason) {
        *self.slot(r) += 1;
    }
    fn slot(&mut self, r: DropReason) -> &mut u64 {
        match r {
            DropReason::Buffer => &mut self.buffer,
            DropReason::Corruption => &mut self.corruption,
            DropReason::LinkDown => &mut self.link_down,
            DropReason::NoRoute => &mut self.no_route,
            DropReason::OutOfSequence => &mut self.out_of_sequence,
            DropReason::Duplicate => &mut self.duplicate,
            DropReason::Headroom => &mut self.headroom,
            DropReason::Watchdog => &mut self.watchdog,
            DropReason::RxStalled => &mut self.rx_stalled,
        }
    }
    pub fn total(&self) -> u64 {
        self.buffer
            + self.corruption
            + self.link_down
            + self.no_route
            + self.out_of_sequence
            + self.duplicate
            + self.headroom
            + self.watchdog
            + self.rx_stalled
    }
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Counters {
    /// Payload bytes the senders put on the wire, retransmissions included.
    pub bytes_offered: u64,
    /// Payload bytes placed at receivers (each byte once).
    pub bytes_delivered: u64,
    /// Payload bytes of dropped data packets (all reasons).
    pub bytes_dropped: u64,
    /// Payload bytes still in queues or on links when the run stopped.
    pub bytes_in_flight: u64,
    /// Packets dropped, by reason.
    pub drops: Drops,
    pub data_packets: u64,
    pub ack_packets: u64,
    pub retransmitted_packets: u64,
    pub timeouts: u64,
    /// QPs that exhausted their retry count (IBA error state).
    pub qp_errors: u64,
    /// NAKs (a trimmed packet's NACK among them) and selective repeat's SACKs of a hole; not
    /// RUD's SACKs, which acknowledge reordered packets.
    pub naks: u64,
    pub ecn_marks: u64,
    pub pause_frames: u64,
    pub cnps: u64,
    /// Data packets cut to their header by switch trimming (their payload counts as dropped).
    #[serde(skip_serializing_if = "is_zero")]
    pub trimmed: u64,
    /// Link-level retry (UEC 1.0 5.1): frames replayed on their link, NACKs and (coalesced)
    /// ACKs sent, and times a link's transmit stalled on a full replay buffer.
    #[serde(skip_serializing_if = "is_zero")]
    pub llr_replays: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub llr_nacks: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub llr_acks: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub llr_stalls: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MessageResult {
    pub id: u32,
    /// The queue pair that carried it (none for NVLink transfers).
    pub qp: Option<u32>,
    /// Its traffic class (that QP's SL/VL or priority; none for NVLink transfers).
    pub class: Option<u8>,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start_ps: Option<u64>,
    /// The receiver holds every byte.
    pub recv_ps: Option<u64>,
    /// The sender's completion (the ACK of the last byte: the RC work completion).
    pub finish_ps: Option<u64>,
    pub fct_ps: Option<u64>,
    /// The same message alone on an idle fabric (closed form along its path).
    pub ideal_fct_ps: u64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Summary {
    pub messages_total: u64,
    pub messages_completed: u64,
    pub messages_failed: u64,
    pub fct_p50_ps: Option<u64>,
    pub fct_p99_ps: Option<u64>,
    pub fct_p999_ps: Option<u64>,
    pub max_fct_ps: Option<u64>,
    pub mean_slowdown: Option<f64>,
    /// Delivered payload over the time from the first post to the last completion.
    pub goodput_gbps: Option<f64>,
}

impl Summary {
    /// Completion-time statistics of `messages` (both engines' per-message records): FCT
    /// percentiles over the completed ones, their mean slowdown against the ideal FCT, and
    /// `bytes_delivered` over the span from the first post to the last completion.
    pub fn of(messages: &[MessageResult], failed: u64, bytes_delivered: u64) -> Summary {
        let round6 = |x: f64| (x * 1e6).round() / 1e6;
        let mut fcts = Vec::with_capacity(messages.len());
        let (mut slowdown_sum, mut first_post, mut last_finish) = (0.0, u64::MAX, 0u64);
        for m in messages {
            let (Some(f), Some(post), Some(fin)) = (m.fct_ps, m.start_ps, m.finish_ps) else {
                continue;
            };
            fcts.push(f);
            if m.ideal_fct_ps > 0 {
                slowdown_sum += f as f64 / m.ideal_fct_ps as f64;
            }
            first_post = first_post.min(post);
            last_finish = last_finish.max(fin);
        }
        let completed = fcts.len() as u64;
        fcts.sort_unstable();
        let span = last_finish.saturating_sub(first_post);
        Summary {
            messages_total: messages.len() as u64,
            messages_completed: completed,
            messages_failed: failed,
            fct_p50_ps: percentile(&fcts, 0.5),
            fct_p99_ps: percentile(&fcts, 0.99),
            fct_p999_ps: percentile(&fcts, 0.999),
            max_fct_ps: fcts.last().copied(),
            mean_slowdown: (completed > 0).then(|| round6(slowdown_sum / completed as f64)),
            goodput_gbps: (span > 0)
                .then(|| round6(bytes_delivered as f64 * 8.0 / span as f64 * 1e3)),
        }
    }
}

/// One port's samples: queued bytes at each sample and bytes sent during each interval; with
/// PFC, the time its egress was paused and the PAUSE frames it received during each interval;
/// with credits, the time its egress waited for credits. The flow-control samples are for the
/// trace (`report::trace`), not written in the results JSON (whose bytes they would change).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PortSeries {
    pub port: u32,
    pub node: u32,
    pub queue_bytes: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    #[serde(skip)]
    pub paused_ps: Vec<u64>,
    #[serde(skip)]
    pub pause_frames: Vec<u64>,
    #[serde(skip)]
    pub credit_stall_ps: Vec<u64>,
}

/// The sampled series; run-wide, the ECN marks and CNPs of each interval (for the trace, as
/// `PortSeries`' flow-control samples).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Series {
    pub interval_ps: u64,
    pub ports: Vec<PortSeries>,
    #[serde(skip)]
    pub ecn_marks: Vec<u64>,
    #[serde(skip)]
    pub cnps: Vec<u64>,
}

/// How the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Every message completed.
    Complete,
    /// Nothing left to do, but some messages never completed (failed QPs, dead links).
    Unfinished,
    /// Stopped at the requested end time.
    StoppedAtUntil,
    /// Interrupted (Ctrl-C): partial results.
    Interrupted,
    /// A cycle of blocked lossless queues made no progress (PFC or credit deadlock); the cycle
    /// is in `flow_control.deadlock`.
    Deadlock,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimInfo {
    /// The engine that ran: `packet` or `flow` (`engine_choice::EngineKind::name`).
    pub engine: &'static str,
    pub status: Status,
    pub partial: bool,
    pub seed: u64,
    pub end_ps: u64,
    pub events: u64,
    /// Wall-clock figures: zeroed by `to_json(false)` and then not written.
    #[serde(skip_serializing_if = "untimed")]
    pub wall_s: f64,
    #[serde(skip_serializing_if = "untimed")]
    pub events_per_s: f64,
    #[serde(skip_serializing_if = "untimed")]
    pub packets_per_s: f64,
    /// Most packets alive at once (slab high-water mark).
    pub peak_packets: u64,
    /// Whether the run drew from a random stream of its seed (link loss, RED marking between
    /// its thresholds, random spraying, seeded initial PSNs; the flow engine's loss draws): a
    /// run that drew nothing gives the same result under every seed. Not written.
    #[serde(skip)]
    pub drew_random: bool,
    /// What the run's engine says of a regime it does not model (written only when any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RunResult {
    pub sim: SimInfo,
    pub counters: Counters,
    /// Credit stalls, pauses, XOFF events, watchdog, deadlock (lossless fabrics only).
    pub flow_control: Option<FlowControlResult>,
    pub summary: Summary,
    pub messages: Vec<MessageResult>,
    pub series: Option<Series>,
    /// Per traffic class, when the messages use more than one (`ClassSummary::of`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassSummary>,
}

/// One traffic class's messages: their completion times, bytes and the PFC pauses of the class.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClassSummary {
    pub class: u8,
    pub messages: u64,
    pub messages_completed: u64,
    /// Payload of the completed messages.
    pub bytes_completed: u64,
    pub fct_p50_ps: Option<u64>,
    pub fct_p99_ps: Option<u64>,
    pub max_fct_ps: Option<u64>,
    /// PAUSE frames sent for the class (packet engine under PFC; `None` otherwise).
    pub pause_frames: Option<u64>,
}

impl ClassSummary {
    /// Per class of `messages` (ascending), empty unless two or more classes carry messages;
    /// `pauses[c]`: PAUSE frames for class `c` (`None`: not modelled).
    pub fn of(messages: &[MessageResult], pauses: Option<&[u64]>) -> Vec<ClassSummary> {
        let mut by: std::collections::BTreeMap<u8, Vec<&MessageResult>> = Default::default();
        for m in messages {
            if let Some(c) = m.class {
                by.entry(c).or_default().push(m);
            }
        }
        if by.len() < 2 {
            return Vec::new();
        }
        by.into_iter()
            .map(|(class, ms)| {
                let mut fcts: Vec<u64> = ms.iter().filter_map(|m| m.fct_ps).collect();
                fcts.sort_unstable();
                let bytes = ms
                    .iter()
                    .filter(|m| m.fct_ps.is_some())
                    .map(|m| m.bytes)
                    .sum();
                ClassSummary {
                    class,
                    messages: ms.len() as u64,
                    messages_completed: fcts.len() as u64,
                    bytes_completed: bytes,
                    fct_p50_ps: percentile(&fcts, 0.5),
                    fct_p99_ps: percentile(&fcts, 0.99),
                    max_fct_ps: fcts.last().copied(),
                    pause_frames: pauses.map(|p| p.get(class as usize).copied().unwrap_or(0)),
                }
            })
            .collect()
    }
}

/// One queue of a deadlock cycle: egress `port` of `node` towards `peer_node`, class `tc`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CycleHop {
    pub port: u32,
    pub node: u32,
    pub peer_node: u32,
    pub tc: u8,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct DeadlockReport {
    pub detected_at_ps: u64,
    pub cycle: Vec<CycleHop>,
}

/// Per-port flow-control figures (ports with anything to report).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PortFc {
    pub port: u32,
    pub node: u32,
    /// Time this egress was paused by PFC (summed over classes).
    pub paused_ps: u64,
    pub pause_frames_received: u64,
    /// XOFF transitions of this port's ingress.
    pub xoff_events: u64,
    /// Time this egress waited for credits with a packet ready.
    pub credit_stall_ps: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowControlResult {
    /// none | credits | pfc
    pub kind: &'static str,
    pub credit_stalls: u64,
    pub credit_stall_ps_total: u64,
    pub xoff_events: u64,
    pub pause_time_ps_total: u64,
    pub watchdog_trips: u64,
    /// Headroom of each lossless (switch port, class), min and max over ports, in bytes.
    pub headroom_bytes_min: u64,
    pub headroom_bytes_max: u64,
    pub ports: Vec<PortFc>,
    pub deadlock: Option<DeadlockReport>,
}

impl RunResult {
    /// Bytes offered = delivered + dropped + in flight; `Err` carries the four counts.
    pub fn check_conservation(&self) -> Result<(), Conservation> {
        let c = &self.counters;
        let rhs = c.bytes_delivered + c.bytes_dropped + c.bytes_in_flight;
        if c.bytes_offered != rhs {
            return Err(Conservation {
                offered: c.bytes_offered,
                delivered: c.bytes_delivered,
                dropped: c.bytes_dropped,
                in_flight: c.bytes_in_flight,
            });
        }
        Ok(())
    }

    /// The JSON text. With `timing` false the wall-clock fields are left out, so two runs of
    /// the same scenario and seed give identical bytes.
    pub fn to_json(&self, timing: bool) -> String {
        let mut r = self.clone();
        if !timing {
            r.sim.wall_s = 0.0;
            r.sim.events_per_s = 0.0;
            r.sim.packets_per_s = 0.0;
        }
        let mut s = serde_json::to_string_pretty(&r).expect("results serialize");
        s.push('\n');
        s
    }
}

/// A run whose bytes do not add up: offered != delivered + dropped + in flight (an engine bug,
/// never an input's fault).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conservation {
    pub offered: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
}

impl std::fmt::Display for Conservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rhs = self.delivered + self.dropped + self.in_flight;
        write!(
            f,
            "conservation broken: bytes offered {} != delivered {} + dropped {} + in flight {} (= {rhs})",
            self.offered, self.delivered, self.dropped, self.in_flight
        )
    }
}

/// A wall-clock figure `to_json(false)` zeroed.
fn untimed(x: &f64) -> bool {
    *x == 0.0
}

/// Nearest-rank percentile of sorted values (q in [0, 1]).
pub fn percentile(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_summaries_appear_with_two_classes_and_count_each_apart() {
        let msg = |id: u32, class: u8, bytes: u64, fct: Option<u64>| MessageResult {
            id,
            qp: Some(id),
            class: Some(class),
            src: 0,
            dst: 1,
            bytes,
            start_ps: Some(0),
            recv_ps: fct,
            finish_ps: fct,
            fct_ps: fct,
            ideal_fct_ps: 1,
        };
        let one = [msg(0, 1, 10, Some(5)), msg(1, 1, 10, Some(7))];
        assert!(ClassSummary::of(&one, None).is_empty());
        let two = [
            msg(0, 2, 1000, Some(900)),
            msg(1, 1, 10, Some(5)),
            msg(2, 1, 10, Some(7)),
            msg(3, 2, 1000, None),
        ];
        let pauses = [0, 3, 4];
        let s = ClassSummary::of(&two, Some(&pauses));
        assert_eq!(s.len(), 2);
        assert_eq!(
            (
                s[0].class,
                s[0].messages,
                s[0].bytes_completed,
                s[0].fct_p50_ps,
                s[0].fct_p99_ps
            ),
            (1, 2, 20, Some(5), Some(7))
        );
        assert_eq!(
            (
                s[1].class,
                s[1].messages_completed,
                s[1].max_fct_ps,
                s[1].pause_frames
            ),
            (2, 1, Some(900), Some(4))
        );
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), Some(50));
        assert_eq!(percentile(&v, 0.99), Some(99));
        assert_eq!(percentile(&v, 0.999), Some(100));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
