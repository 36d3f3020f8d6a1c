//! The flows of synchronized DCQCN incast groups: the table `dcqcn_incast` fills at setup, which
//! `dcqcn_victim` reads (a grouped flow is no victim) and `loss` reads (what a resend waits).

/// A flow of a synchronized group: its cap and what a go-back-N resend of it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupFlow {
    pub flow: u32,
    /// Bit/s (`u64::MAX` when the model resolves no cost: the group's bytes reach the egress
    /// before the first cut lands).
    pub cap_bps: u64,
    pub resend: ResendWait,
}

/// What a go-back-N resend of a group's flow waits beyond its round trips (`flow::loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResendWait {
    /// Per NAK, the group's mean queueing delay (`mean_field::Drain::mean_wait_ps`, ps): the sender is
    /// paced at its cut rate while it sends, so a NAK wastes what it sent over a round trip
    /// with the queue, and resends it at that rate.
    PerNak(u64),
    /// Once per message that NAKs, the rate-increase timer T (ps): the group put its bytes on
    /// the wire before the first cut and DCQCN cut its QPs while their queued packets drew
    /// CNPs, so a resend leaves at the cut rate until T after the last cut, which comes as its
    /// last queued packet arrives: the message ends one T after its drain, however many NAKs
    /// (packet engine, roce-400g mixed incast, 30 seeds: a NAKed message ends 301-348 us after
    /// its lossless FCT whatever the NAK's time, a second NAK adds 0-40 us).
    AfterTimer(u64),
}
