//! `excess`: where the lossy collective time comes from, per engine.

use crate::util::{last_mean, message_links};
use fabricsim::engine_choice::EngineKind;
use fabricsim::flow::paths;
use fabricsim::units::Time;
use fabricsim_cases::flow_cases;

/// Each message's FCT beyond its lossless FCT in the lossy cross-validation cases, per engine
/// (checks `flow::loss`'s second timeout and go-back-N resends).
///
/// Per lossy case and engine: a histogram of the excess, the messages that waited one and two
/// ACK timeouts per path length, and the collective time with its standard error
/// (`excess all-to-all 160` for the lossy all-to-all over 160 seeds).
#[derive(clap::Args)]
pub struct Args {
    /// Only the cases whose "name fabric" contains this
    pub case: Option<String>,
    /// Seeds to pool (default: the case's own)
    pub seeds: Option<u64>,
}

/// Per lossy case and engine, the distribution of each message's FCT beyond its FCT in the same
/// seed's lossless run (us bins), the messages that waited one ACK timeout or more and two or
/// more, per path length, and each run's last completion: where the lossy collective time (the
/// maximum of a run) comes from. `excess [case [seeds]]`; the case filter matches "name fabric".
pub fn run(only: Option<&str>, seeds: Option<u64>) {
    const BINS: [f64; 16] = [
        0.5, 2.0, 5.0, 10.0, 20.0, 40.0, 60.0, 80.0, 90.0, 100.0, 110.0, 120.0, 130.0, 140.0,
        150.0, 200.0,
    ];
    for c in flow_cases::cases().into_iter().filter(|c| c.loss > 0.0) {
        if only.is_some_and(|o| !format!("{} {}", c.name, c.fabric).contains(o)) {
            continue;
        }
        println!(
            "{} on {} (RTO {:.1} us), excess bins (us) <{:?}..:",
            c.name,
            c.fabric,
            Time(4_096_000u64 << c.timeout_exp).ps() as f64 / 1e6,
            BINS
        );
        let c = flow_cases::Case {
            seeds: seeds.unwrap_or(c.seeds),
            ..c
        };
        let clean = flow_cases::Case {
            loss: 0.0,
            ..c.clone()
        };
        let (topo, p) = flow_cases::fabric(c.hosts, c.fabric);
        let router = paths::Router::new(&topo, p.routing);
        let mut links = Vec::new();
        let hops: Vec<usize> = c
            .dag
            .messages
            .iter()
            .map(|m| {
                message_links(&topo, &router, &p, m, 0, &mut links);
                links.len()
            })
            .collect();
        let rto = Time(4_096_000u64 << c.timeout_exp).ps() as f64 / 1e6;
        for kind in [EngineKind::Packet, EngineKind::Flow] {
            // Per hop count: messages, those with one timeout or more, with two or more.
            let mut by_hops = std::collections::BTreeMap::<usize, [u64; 3]>::new();
            // Excess (us) summed over the messages that waited one timeout and over those that
            // waited two or more.
            let mut excess_sum = [0.0f64; 2];
            let mut lasts = Vec::new();
            let mut hist = [0u64; BINS.len() + 1];
            let mut tops = Vec::new();
            for seed in 1..=c.seeds {
                let base = flow_cases::run(&clean, kind, seed);
                let lossy = flow_cases::run(&c, kind, seed);
                let mut top = (0.0f64, 0u32);
                for (a, b) in base.messages.iter().zip(&lossy.messages) {
                    let x = (b.fct_ps.unwrap_or(0) as f64 - a.fct_ps.unwrap_or(0) as f64) / 1e6;
                    hist[BINS.iter().take_while(|&&e| x >= e).count()] += 1;
                    let h = by_hops.entry(hops[b.id as usize]).or_default();
                    h[0] += 1;
                    h[1] += (x > rto / 3.0) as u64;
                    h[2] += (x > 1.4 * rto) as u64;
                    if x > rto / 3.0 {
                        excess_sum[(x > 1.4 * rto) as usize] += x;
                    }
                    if x > top.0 {
                        top = (x, b.id);
                    }
                }
                let (last, _) = last_mean(&lossy);
                let (base_last, _) = last_mean(&base);
                lasts.push(last);
                tops.push(format!(
                    "{:.1}/{:.1} (msg {} +{:.1})",
                    base_last, last, top.1, top.0
                ));
            }
            let n = lasts.len() as f64;
            let mean = lasts.iter().sum::<f64>() / n;
            let sd = (lasts.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            println!(
                "  {:<7} {:?}; collective {mean:.2} us, s.e. {:.2} us over {n} runs",
                kind.name(),
                hist,
                sd / n.sqrt()
            );
            let (ones, twos) = by_hops
                .values()
                .fold((0, 0), |(a, b), h| (a + h[1], b + h[2]));
            println!(
                "          mean excess: {:.2} us over one timeout, {:.2} us over two or more",
                excess_sum[0] / (ones - twos).max(1) as f64,
                excess_sum[1] / twos.max(1) as f64
            );
            for (h, [n, one, two]) in &by_hops {
                println!(
                    "          {h} links: {n} messages, {one} timed out ({:.3}%), {two} twice ({:.3}% of those)",
                    100.0 * *one as f64 / *n as f64,
                    100.0 * *two as f64 / (*one).max(1) as f64
                );
            }
            if tops.len() <= 8 {
                println!("          runs clean/lossy last us: {}", tops.join(", "));
            }
        }
    }
}
