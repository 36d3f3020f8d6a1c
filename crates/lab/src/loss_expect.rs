//! `loss-expect`: the step's loss expectation (`workload::train::loss_cost`) against
//! seed-averaged packet-engine runs, the table of `docs/loss-expectation.md`.

use fabricsim_cases::loss_expect::{FABRICS, Point, RATES, point};

/// The step's expected loss cost against packet runs over seeds (docs/loss-expectation.md).
///
/// A ring all-reduce of 4 MiB over one GPU of each of 16 servers on ib-ndr (selective repeat) and
/// roce-400g (go-back-N) at per-link loss 1e-5, 1e-4, 1e-3 and 1e-2: completion time,
/// retransmitted packets and timeouts, expected against the mean of the seeds with its 95%
/// interval.
#[derive(clap::Args)]
pub struct Args {
    /// Seeds per point
    #[arg(long, default_value_t = 16)]
    pub seeds: u64,
    /// The ACK timeout's exponent (4.096 us x 2^E); the profile's (20: 4.29 s) without it
    #[arg(long)]
    pub timeout_exp: Option<u8>,
}

fn row(p: &Point) {
    let us = |x: f64| x * 1e6;
    let inside = |x: f64, e: &fabricsim::estimate::Estimate| {
        if e.lo <= x && x <= e.hi { "yes" } else { "no" }
    };
    println!(
        "| {} {} | {:.0e} | {} / {} | {:.1} | {:.1} | {:.1} [{:.1}, {:.1}] | {} | {:.1} | {:.1} [{:.1}, {:.1}] | {} | {:.3} | {:.3} [{:.3}, {:.3}] |",
        p.fabric.profile,
        p.fabric.recovery.name(),
        p.loss,
        p.expected.messages,
        p.expected.levels,
        us(p.lossless_s),
        us(p.expected_s()),
        us(p.time.mean),
        us(p.time.lo),
        us(p.time.hi),
        inside(p.expected_s(), &p.time),
        p.expected.retransmitted,
        p.retransmitted.mean,
        p.retransmitted.lo,
        p.retransmitted.hi,
        inside(p.expected.retransmitted, &p.retransmitted),
        p.expected.timeouts,
        p.timeouts.mean,
        p.timeouts.lo,
        p.timeouts.hi,
    );
}

pub fn run(a: &Args) {
    println!(
        "| fabric | loss per link | messages / levels | lossless (us) | expected (us) | measured mean [95%] (us) | inside | retransmitted expected | measured [95%] | inside | timeouts expected | measured [95%] |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for f in FABRICS {
        for loss in RATES {
            row(&point(f, loss, a.seeds, a.timeout_exp));
        }
    }
}
