//! Property test over random small fabrics and traffic (loops over seeds): whatever the loss,
//! buffer size and transport, every message completes, each byte is delivered exactly once,
//! bytes are conserved, and a rerun gives identical results.

use fabricsim::rng::Rng;
use fabricsim::sim::{Faults, SimParams, Transport};
use fabricsim::traffic::{SizeDist, Traffic, generate};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::sim_util::{pair, run, star};

#[test]
fn random_fabrics_deliver_everything_exactly_once() {
    for seed in 0..40 {
        let mut rng = Rng::new(seed);
        let rate = BitRate::gbps([100, 400][rng.below(2) as usize]);
        let t = if rng.below(3) == 0 {
            let tiers = 1 + rng.below(3) as u8;
            pair(
                tiers,
                rate,
                &vec![Time::from_ns(100 + rng.below(900)); 2 * tiers as usize],
            )
        } else {
            star(
                &vec![rate; 3 + rng.below(6) as usize],
                Time::from_ns(100 + rng.below(2000)),
            )
        };
        let mut p = SimParams::roce();
        p.seed = seed;
        p.loss_rate = [0.0, 1e-3, 1e-2, 3e-2][rng.below(4) as usize];
        p.switch_buffer_bytes = [50_000, 300_000, 64 << 20][rng.below(3) as usize];
        p.timeout_exp = 3 + rng.below(4) as u8;
        p.ack_every = 1 + rng.below(4) as u32;
        p.mtu_bytes = [1024, 4096][rng.below(2) as usize];
        if rng.below(2) == 0 {
            p.transport = Transport::SelectiveRepeat;
            p.window_packets = 16 + rng.below(64) as u32;
        } else if rng.below(2) == 0 {
            p.window_packets = 4 + rng.below(64) as u32;
        }
        let hosts = t.num_hosts() as u32;
        let traffic = Traffic::Uniform {
            load: 0.2 + 0.6 * rng.next_f64(),
            sizes: SizeDist::Uniform {
                min: 1,
                max: 60_000,
            },
            duration: Time::from_us(30),
        };
        let dag = generate(&traffic, hosts, rate, seed).unwrap();
        let r = run(&t, &p, &dag, &Faults::default());
        let what = format!("seed {seed}: {p:?}");
        assert_eq!(
            r.summary.messages_completed as usize,
            dag.messages.len(),
            "{what}"
        );
        assert_eq!(r.counters.bytes_delivered, dag.total_bytes(), "{what}");
        assert_eq!(r.counters.qp_errors, 0, "{what}");
        let again = run(&t, &p, &dag, &Faults::default());
        assert_eq!(r.to_json(false), again.to_json(false), "{what}");
    }
}
