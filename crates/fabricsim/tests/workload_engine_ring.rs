//! Collectives run on the packet engine against their closed forms: ring all-reduce on an ideal
//! non-blocking fabric (Patarasuk and Yuan 2009; nccl-tests) and the bytes each
//! collective puts on the fabric and on NVLink.

use fabricsim::scenario::Scenario;
use fabricsim::units::Time;
use fabricsim::workload::busbw::busbw_gbps;
use fabricsim::workload::collective::{CollectiveSpec, Comm, Op, compile};
use fabricsim::workload::run_engine::{Cluster, CollectiveRun};
use fabricsim::workload::sweep::round;

fn cluster(flags: &[(&str, &str)]) -> Cluster {
    let mut s = Scenario::defaults();
    let pairs: Vec<_> = flags
        .iter()
        .map(|(f, v)| (f.to_string(), v.to_string()))
        .collect();
    s.apply_flags(&pairs).unwrap();
    Cluster::new(&s).unwrap()
}

/// The first `per_server` GPUs of each of the first `servers` servers, as one communicator.
fn comm(c: &Cluster, servers: u32, per_server: u32) -> Comm<'_> {
    let g = c.place.gpus_per_node();
    Comm {
        place: &c.place,
        gpus: (0..servers * g).filter(|x| x % g < per_server).collect(),
    }
}

/// `op` of `bytes` on `shape` = (servers, GPUs per server) over `channels` channels.
fn run(c: &Cluster, op: Op, bytes: u64, shape: (u32, u32), channels: u32) -> CollectiveRun {
    let spec = CollectiveSpec::with_defaults(op, bytes, channels);
    let dag = compile(&spec, &comm(c, shape.0, shape.1), c.nvlink()).unwrap();
    c.run(&dag, None).unwrap()
}

#[test]
fn ring_all_reduce_matches_the_closed_form_on_a_non_blocking_fabric() {
    // GPU 0 of each of 8 servers: every ring hop crosses the fabric, through the one rail-0
    // leaf of a rail-optimized, non-blocking (1:1) fabric.
    for fabric in ["ib-ndr", "roce-400g"] {
        let c = cluster(&[
            ("--gpus", "64"),
            ("--topology", "rail-optimized"),
            ("--fabric", fabric),
        ]);
        let n = 8.0;
        let p = &c.params;
        // B: the per-NIC payload rate, line rate x MTU / (MTU + headers + wire overhead).
        let link = &c.topology.links[c
            .topology
            .port(c.topology.host_port(c.place.host(0)))
            .link
            .idx()];
        let line_bytes_per_s = link.rate.bps() as f64 / 8.0;
        let b = line_bytes_per_s * p.payload_efficiency();
        // alpha: one ring step's latency in the engine: the NIC pipeline on both sides, a full
        // packet's serialization at the sender, propagation on the NIC-leaf links both ways
        // and the leaf's pipeline (one switch between servers of one leaf; the ACK's
        // return leg is hidden by the pipeline, so this is an upper bound of one step).
        let frame = p.mtu_frame_wire_bytes() as f64;
        let alpha = 2.0 * p.nic_latency.as_secs_f64()
            + frame / line_bytes_per_s
            + 2.0 * link.delay.as_secs_f64()
            + p.switch_latency.as_secs_f64();
        let s = 128u64 << 20;
        let r = run(&c, Op::AllReduce, s, (8, 1), 1);
        let model = 2.0 * (n - 1.0) / n * s as f64 / b + 2.0 * (n - 1.0) * alpha;
        let t = r.time.as_secs_f64();
        let err = (t - model) / model;
        eprintln!(
            "{fabric}: engine {t:e} s, closed form {model:e} s, B {b:e} B/s, alpha {alpha:e} s"
        );
        assert!(
            err.abs() < 0.03,
            "{fabric}: engine {t:e} s vs 2(n-1)/n S/B + 2(n-1) alpha = {model:e} s ({:.2}%)",
            100.0 * err
        );
        // busbw approaches the per-NIC payload bandwidth.
        let busbw = busbw_gbps(Op::AllReduce, 8, s, t) * 1e9;
        assert!(
            busbw > 0.97 * b && busbw <= b * 1.0001,
            "{fabric}: busbw {busbw:e} vs B {b:e}"
        );
    }
}

#[test]
fn bytes_on_the_fabric_and_nvlink_equal_the_formulas() {
    // n ranks, k per server. Ring all-gather / reduce-scatter: every rank receives / sends
    // (n-1)/n of S, in total (n-1) S; all-reduce twice that. All-to-all: each rank sends S/n to
    // every other rank, (n-k) S across the fabric and (k-1) S over NVLink in total.
    let c = cluster(&[("--gpus", "32"), ("--fabric", "roce-400g")]);
    for k in [1u64, 8] {
        let n = 4 * k;
        for op in [
            Op::AllGather,
            Op::ReduceScatter,
            Op::AllReduce,
            Op::AllToAll,
        ] {
            // An odd size (rounded as nccl-tests rounds it) so that segments are uneven.
            let s = round(op, n as u32, 3_000_004).bytes;
            let r = run(&c, op, s, (4, k as u32), 2);
            let total = r.fabric_bytes_delivered + r.nvlink_bytes;
            let want = match op {
                Op::AllReduce => 2 * (n - 1) * s,
                _ => (n - 1) * s,
            };
            assert_eq!(total, want, "{op} on {n} GPUs, {k} per server");
            if op == Op::AllToAll {
                assert_eq!(r.fabric_bytes_delivered, (n - k) * s, "{op}");
                assert_eq!(r.nvlink_bytes, (k - 1) * s, "{op}");
            }
            if k == 1 {
                assert_eq!(r.nvlink_bytes, 0);
            }
            assert!(r.time > Time::ZERO);
        }
    }
}

#[test]
fn nvlink_ring_all_reduce_shares_each_gpus_nvlink_between_channels() {
    // The 8 GPUs of one server: every hop rides NVLink, each GPU's one-way rate shared by all
    // its transfers (MessageDag::nvlink_rate is per GPU), so 8 channels are no faster than
    // the closed form 2(n-1)/n S / B_nvlink (H100: 900 GB/s bidirectional, 450 GB/s one way).
    let c = cluster(&[("--gpus", "64"), ("--fabric", "ib-ndr")]);
    let b = c.design.gpu.nvlink_one_way_bytes_per_s();
    let s = 64u64 << 20;
    for channels in [1, 8] {
        let r = run(&c, Op::AllReduce, s, (1, 8), channels);
        assert_eq!(r.fabric_bytes_delivered, 0);
        let model = 2.0 * 7.0 / 8.0 * s as f64 / b;
        let t = r.time.as_secs_f64();
        assert!(
            t >= model * 0.999 && t < model * 1.1,
            "{channels} channels: engine {t:e} s vs 2(n-1)/n S/B {model:e} s"
        );
    }
}

#[test]
fn a_gpu_with_two_nic_ports_sends_its_channels_through_both() {
    // GPU 0 of each of two GB300 NVL72 racks on 400G Ethernet: with one ConnectX-8 port per GPU
    // (72 per rack) both channels share it; as 2 x 400G (144 per rack) each channel has its own,
    // and a bandwidth-bound all-reduce takes half the time.
    let at = |nics: &str| {
        let c = cluster(&[
            ("--gpus", "144"),
            ("--server", "gb300-nvl72"),
            ("--nics-per-node", nics),
            ("--fabric", "roce-400g"),
            ("--planes", "4"),
        ]);
        run(&c, Op::AllReduce, 64 << 20, (2, 1), 2)
            .time
            .as_secs_f64()
    };
    let (one, two) = (at("72"), at("144"));
    eprintln!("one port {one:e} s, two ports {two:e} s");
    assert!(
        (one / two - 2.0).abs() < 0.05,
        "{one:e} / {two:e} = {}",
        one / two
    );
}
