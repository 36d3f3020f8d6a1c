//! Synthetic traffic for `fabricsim sim`: permutation, incast, all-to-all, random uniform with a
//! load and a flow-size distribution, and explicit flow lists; each becomes a [`MessageDag`].
//! (ns-3 flow files are read by `io::ns3::read_flows`.)

use crate::error::CoreError;
use crate::message::MessageDag;
use crate::rng::{Rng, Stream};
use crate::topology::HostId;
use crate::units::{BitRate, Time};

/// A flow-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    Fixed(u64),
    /// Uniform in [min, max].
    Uniform {
        min: u64,
        max: u64,
    },
    /// Empirical CDF points (bytes, cumulative probability), increasing in both, ending at 1;
    /// sampled by inverse transform with linear interpolation, as ns-3 HPCC's traffic_gen.py.
    Cdf(Vec<(u64, f64)>),
}

impl SizeDist {
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeDist::Fixed(b) => *b,
            SizeDist::Uniform { min, max } => min + rng.below(max - min + 1),
            SizeDist::Cdf(pts) => {
                let u = rng.next_f64();
                let i = pts.partition_point(|p| p.1 < u);
                if i == 0 {
                    return pts[0].0.max(1);
                }
                let (x0, p0) = pts[i - 1];
                let (x1, p1) = pts[i.min(pts.len() - 1)];
                if p1 <= p0 {
                    return x1.max(1);
                }
                let x = x0 as f64 + (u - p0) / (p1 - p0) * (x1 as f64 - x0 as f64);
                (x.round() as u64).max(1)
            }
        }
    }

    /// The mean flow size in bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => *b as f64,
            SizeDist::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            SizeDist::Cdf(pts) => {
                let mut m = pts[0].0 as f64 * pts[0].1;
                for w in pts.windows(2) {
                    m += (w[0].0 as f64 + w[1].0 as f64) / 2.0 * (w[1].1 - w[0].1);
                }
                m
            }
        }
    }
}

/// One explicit flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub start: Time,
    /// Traffic class; `None`: the section's class, else the fabric's data class.
    pub class: Option<u8>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Traffic {
    /// Every host sends `bytes` to another, each host receiving once: a random cyclic
    /// permutation (Sattolo's algorithm), so no host sends to itself.
    Permutation {
        bytes: u64,
    },
    /// `senders` hosts (the lowest-numbered ones other than `dst`) each send `bytes` to `dst`.
    Incast {
        senders: u32,
        dst: u32,
        bytes: u64,
    },
    /// Every host sends `bytes` to every other host, all at time 0.
    AllToAll {
        bytes: u64,
    },
    /// Poisson flow arrivals at each host with mean rate load x host rate / mean size,
    /// destinations uniform over the other hosts, until `duration`.
    Uniform {
        load: f64,
        sizes: SizeDist,
        duration: Time,
    },
    List(Vec<Flow>),
}

/// Builds the messages for `hosts` hosts whose NICs run at `host_rate`; `Err` names what does
/// not fit the topology.
pub fn generate(
    t: &Traffic,
    hosts: u32,
    host_rate: BitRate,
    seed: u64,
) -> Result<MessageDag, CoreError> {
    let mut dag = MessageDag::default();
    if hosts < 2 {
        return Err(CoreError::Traffic(format!(
            "traffic needs at least 2 hosts; the topology has {hosts}"
        )));
    }
    match t {
        Traffic::Permutation { bytes } => {
            let mut perm: Vec<u32> = (0..hosts).collect();
            let mut rng = Rng::stream(seed, Stream::Permutation, 0);
            // Sattolo (1986): a uniformly random single cycle, hence no fixed point.
            for i in (1..hosts as usize).rev() {
                let j = rng.below(i as u64) as usize;
                perm.swap(i, j);
            }
            for (s, &d) in perm.iter().enumerate() {
                dag.push(HostId(s as u32), HostId(d), *bytes, Time::ZERO, &[]);
            }
        }
        Traffic::Incast {
            senders,
            dst,
            bytes,
        } => {
            if *dst >= hosts {
                return Err(CoreError::Traffic(format!(
                    "incast destination {dst} but hosts are 0..{}",
                    hosts - 1
                )));
            }
            if *senders == 0 || *senders >= hosts {
                return Err(CoreError::Traffic(format!(
                    "{senders} incast senders but there are {} other hosts",
                    hosts - 1
                )));
            }
            for s in (0..hosts).filter(|&h| h != *dst).take(*senders as usize) {
                dag.push(HostId(s), HostId(*dst), *bytes, Time::ZERO, &[]);
            }
        }
        Traffic::AllToAll { bytes } => {
            for s in 0..hosts {
                for k in 1..hosts {
                    // Each sender starts with a different peer (s+1, s+2, ...), as NCCL does.
                    let d = (s + k) % hosts;
                    dag.push(HostId(s), HostId(d), *bytes, Time::ZERO, &[]);
                }
            }
        }
        Traffic::Uniform {
            load,
            sizes,
            duration,
        } => {
            let mean_gap_ps = sizes.mean() * 8.0 / (load * host_rate.bps() as f64) * 1e12;
            let mut all: Vec<(Time, u32, u32, u64)> = Vec::new();
            for s in 0..hosts {
                let mut rng = Rng::stream(seed, Stream::UniformArrivals, s as u64);
                let mut t = 0.0f64;
                loop {
                    t += rng.exp(mean_gap_ps);
                    if t >= duration.0 as f64 {
                        break;
                    }
                    let d = (s + 1 + rng.below(hosts as u64 - 1) as u32) % hosts;
                    all.push((Time(t as u64), s, d, sizes.sample(&mut rng)));
                }
            }
            all.sort_by_key(|f| (f.0, f.1));
            for (t, s, d, b) in all {
                dag.push(HostId(s), HostId(d), b, t, &[]);
            }
        }
        Traffic::List(flows) => {
            for (i, f) in flows.iter().enumerate() {
                if f.src >= hosts || f.dst >= hosts || f.src == f.dst {
                    return Err(CoreError::Traffic(format!(
                        "flow {i}: {} -> {} (hosts are 0..{}, source and destination differ)",
                        f.src,
                        f.dst,
                        hosts - 1
                    )));
                }
                let m = dag.push(HostId(f.src), HostId(f.dst), f.bytes, f.start, &[]);
                dag.messages[m as usize].class = f.class;
            }
        }
    }
    Ok(dag)
}

/// Puts every message of `dag` that has no class of its own on `class`.
pub fn default_class(dag: &mut MessageDag, class: u8) {
    for m in dag.messages.iter_mut().filter(|m| m.class.is_none()) {
        m.class = Some(class);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_derangement_and_deterministic() {
        for seed in 0..20 {
            let d = generate(
                &Traffic::Permutation { bytes: 1 },
                16,
                BitRate::gbps(100),
                seed,
            )
            .unwrap();
            let mut seen = [false; 16];
            for m in &d.messages {
                assert_ne!(m.src, m.dst);
                assert!(!seen[m.dst.idx()]);
                seen[m.dst.idx()] = true;
            }
            let again = generate(
                &Traffic::Permutation { bytes: 1 },
                16,
                BitRate::gbps(100),
                seed,
            )
            .unwrap();
            assert_eq!(d.messages, again.messages);
        }
    }

    #[test]
    fn uniform_offers_the_requested_load() {
        // Offered bytes per host per second = load x rate (Poisson arrivals, law of large numbers).
        let t = Traffic::Uniform {
            load: 0.5,
            sizes: SizeDist::Uniform {
                min: 1000,
                max: 9000,
            },
            duration: Time::from_ms(10),
        };
        let d = generate(&t, 8, BitRate::gbps(100), 7).unwrap();
        let offered = d.total_bytes() as f64 * 8.0 / 8.0 / 0.010;
        assert!((offered / 50e9 - 1.0).abs() < 0.05, "{offered}");
    }

    #[test]
    fn cdf_mean_matches_samples() {
        let s = SizeDist::Cdf(vec![(1000, 0.0), (2000, 0.5), (10000, 1.0)]);
        let mut rng = Rng::new(3);
        let n = 100_000;
        let m = (0..n).map(|_| s.sample(&mut rng)).sum::<u64>() as f64 / n as f64;
        assert!((m / s.mean() - 1.0).abs() < 0.01, "{m} vs {}", s.mean());
    }
}
