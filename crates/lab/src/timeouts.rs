//! `timeouts`: the ACK timeouts of the lossy cross-validation cases on both engines.

use fabricsim::engine_choice::EngineKind;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// The ACK timeouts of the lossy cross-validation cases, packet vs flow (checks `flow::loss`'s
/// timeout draws).
///
/// Per lossy case, the share of messages that waited for one ACK timeout and for two or more
/// on each engine over the case's seeds, and the packet engine's timer firings and resent
/// packets per message.
#[derive(clap::Args)]
pub struct Args {
    /// Only the cases whose name contains this
    pub name: Option<String>,
}

/// Per lossy case, the share of messages that waited for one ACK timeout and for two or more,
/// on each engine over the case's seeds: a message whose FCT exceeds its FCT in the same run
/// without loss by more than half an RTO (1.5 RTO for two) timed out (each case's RTO is above
/// its lossless run's largest FCT, `flow_cases::timeout_exp`).
pub fn run(only: Option<&str>) {
    println!(
        "{:<24} {:<10} {:>8} {:>25} {:>25}",
        "case", "fabric", "messages", "1+ timeouts pkt / flow", "2+ timeouts pkt / flow"
    );
    for c in flow_cases::cases().into_iter().filter(|c| c.loss > 0.0) {
        if only.is_some_and(|o| !c.name.contains(o)) {
            continue;
        }
        let rto = Time(4_096_000u64 << c.timeout_exp).ps();
        let mut counts = [[0u64; 2]; 2];
        let mut total = 0;
        // The packet engine's timer firings and resent packets per message.
        let (mut fired, mut resent) = (0u64, 0u64);
        for seed in 1..=c.seeds {
            let clean = flow_cases::Case {
                loss: 0.0,
                ..c.clone()
            };
            for (e, kind) in [EngineKind::Packet, EngineKind::Flow]
                .into_iter()
                .enumerate()
            {
                let base = flow_cases::run(&clean, kind, seed);
                let lossy = flow_cases::run(&c, kind, seed);
                if e == 0 {
                    fired += lossy.counters.timeouts;
                    resent += lossy.counters.retransmitted_packets;
                }
                for (a, b) in base.messages.iter().zip(&lossy.messages) {
                    let extra = b.fct_ps.unwrap_or(0).saturating_sub(a.fct_ps.unwrap_or(0));
                    counts[e][0] += (extra > rto / 2) as u64;
                    counts[e][1] += (extra > 3 * rto / 2) as u64;
                }
                total += (e == 0) as u64 * base.messages.len() as u64;
            }
        }
        let pct = |n: u64| 100.0 * n as f64 / total as f64;
        println!(
            "{:<24} {:<10} {:>8} {:>10.2}% / {:>6.2}% {:>10.3}% / {:>6.3}%  [packet: {:.3} timer firings, {:.2} resent packets per message]",
            c.name,
            c.fabric,
            total,
            pct(counts[0][0]),
            pct(counts[1][0]),
            pct(counts[0][1]),
            pct(counts[1][1]),
            fired as f64 / total as f64,
            resent as f64 / total as f64,
        );
    }
}
