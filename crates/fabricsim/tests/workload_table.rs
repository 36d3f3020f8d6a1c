//! The nccl-tests table (golden, from nccl-tests src/common.cu printf formats) and a sweep
//! measured through a stand-in engine: the DAG replayed on an ideal non-blocking fabric.

use fabricsim::message::{MessageDag, Path};
use fabricsim::units::{BitRate, Time};
use fabricsim::workload::collective::{Algo, CollectiveSpec, Comm, Op};
use fabricsim::workload::comm_model::{AlphaBetaModel, GroupShape};
use fabricsim::workload::link_params::{FabricParams, LinkParams};
use fabricsim::workload::measure::{measure, measure_seeds};
use fabricsim::workload::placement::Placement;
use fabricsim::workload::sweep::{SweepSize, sizes};
use fabricsim::workload::table::{Measured, Table};

#[test]
fn table_matches_the_nccl_tests_layout() {
    // Lines written from nccl-tests common.cu: header "# %10s  %12s  %8s  %6s  %6s" +
    // " %7s  %6s  %6s  %6s", rows "%12li  %12li  %8s  %6s  %6i" + "  %7s  %6.2f  %6.2f  %5s",
    // time "%7.2f" below 100 us, "%7.1f" below 10 ms, "%7.0f" above; then the closing lines
    // with "%g" for the average bus bandwidth.
    let m = |bytes: u64, us: f64| Measured {
        size: SweepSize {
            bytes,
            count: bytes / 4,
        },
        secs: vec![us * 1e-6],
    };
    let t = Table::new(
        Op::AllReduce,
        8,
        0,
        &[m(1024, 25.0), m(1 << 20, 200.0), m(1 << 30, 12_345.6)],
    );
    let golden = "\
#
#                                                              out-of-place
#       size         count      type   redop    root    time   algbw   busbw  #wrong
#        (B)    (elements)                              (us)  (GB/s)  (GB/s)       
        1024           256     float     sum      -1    25.00    0.04    0.07    N/A
     1048576        262144     float     sum      -1    200.0    5.24    9.18    N/A
  1073741824     268435456     float     sum      -1    12346   86.97  152.20    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 53.8169 
#
";
    assert_eq!(t.to_text(), golden);
    let ag = Table::new(Op::AllGather, 8, 0, &[m(1 << 20, 100.0)]);
    assert_eq!(ag.rows[0].redop, "none");
    assert_eq!(ag.rows[0].root, -1);
    let bc = Table::new(Op::Broadcast, 8, 3, &[m(1 << 20, 100.0)]);
    assert_eq!((bc.rows[0].redop, bc.rows[0].root), ("none", 3));
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json["rows"][2]["size_bytes"], 1073741824u64);
    assert!(json["rows"][2]["busbw_GBps"]["mean"].as_f64().unwrap() > 152.0);
    assert_eq!(json["rows"][2]["busbw_GBps"]["n"], 1);
    assert!(json["avg_busbw_GBps"]["mean"].is_number());
}

/// The DAG replayed on an ideal non-blocking fabric: each GPU has one egress per path that
/// sends its messages in DAG order at `rate` bytes/s; a message arrives `alpha` after its
/// last byte leaves. Dependencies are honoured; nothing else contends.
fn ideal(dag: &MessageDag, net: LinkParams, nvl: LinkParams) -> Time {
    let hosts = dag
        .messages
        .iter()
        .map(|m| m.src.0.max(m.dst.0))
        .max()
        .unwrap_or(0) as usize
        + 1;
    let mut free = vec![0.0f64; 2 * hosts];
    let mut done = vec![0.0f64; dag.messages.len()];
    for (i, m) in dag.messages.iter().enumerate() {
        let ready = dag
            .deps_of(i as u32)
            .iter()
            .map(|&d| done[d as usize])
            .fold(0.0, f64::max);
        let (link, lane) = match m.path {
            Path::Net => (net, 2 * m.src.idx()),
            Path::NvLink => (nvl, 2 * m.src.idx() + 1),
        };
        let start = ready.max(free[lane]);
        free[lane] = start + m.bytes as f64 / link.bytes_per_s;
        done[i] = free[lane] + link.latency_s;
    }
    Time::from_secs_f64(done.iter().cloned().fold(0.0, f64::max))
}

#[test]
fn ring_all_reduce_on_an_ideal_fabric_meets_the_closed_form_and_fits_alpha_beta() {
    // 2(n-1)/n * S/B + 2(n-1) * alpha (Patarasuk and Yuan 2009): 16 servers x 1 GPU.
    let net = LinkParams {
        bytes_per_s: 50e9,
        latency_s: 2e-6,
    };
    let nvl = LinkParams {
        bytes_per_s: 450e9,
        latency_s: 0.5e-6,
    };
    let place = Placement::dense(16, 1);
    let comm = Comm::world(&place);
    let spec = CollectiveSpec {
        op: Op::AllReduce,
        algo: Algo::Ring,
        bytes: 0,
        root: 0,
        channels: 2,
        chunk_bytes: 512 << 10,
        route: None,
    };
    let sw = sizes(Op::AllReduce, 16, 1 << 20, 1 << 30, 4).unwrap();
    let out = measure(&spec, &comm, BitRate::gbps(3600), &sw, |dag| {
        Ok::<Time, ()>(ideal(dag, net, nvl))
    })
    .unwrap();
    let n = 16.0;
    let (bytes, secs) = *out.points.last().unwrap();
    let closed =
        2.0 * (n - 1.0) / n * bytes as f64 / net.bytes_per_s + 2.0 * (n - 1.0) * net.latency_s;
    assert!((secs / closed - 1.0).abs() < 0.03, "{secs} vs {closed}");
    // busbw approaches the per-NIC payload bandwidth.
    let busbw = out.table.rows.last().unwrap().busbw_gbps.mean;
    assert!(busbw > 0.97 * 50.0 && busbw <= 50.0 * 1.0001, "{busbw}");
    // The alpha-beta fit of the sweep: B_eff = B n / (2(n-1)), within the fit's reported error.
    let fit = out.fit.unwrap();
    let b_eff = net.bytes_per_s * n / (2.0 * (n - 1.0));
    assert!(
        (fit.model.bytes_per_s / b_eff - 1.0).abs() < 0.03,
        "{fit:?}"
    );
    assert!(fit.max_rel_err < 0.1 && fit.points == sw.len(), "{fit:?}");
}

#[test]
fn fitting_the_closed_form_returns_it() {
    let mut s = fabricsim::scenario::Scenario::defaults();
    s.apply_flags(&[("--fabric".into(), "roce-400g".into())])
        .unwrap();
    let model = AlphaBetaModel::new(FabricParams::of(&s.design().unwrap()));
    for op in Op::ALL {
        for g in [
            GroupShape {
                ranks: 8,
                servers: 1,
            },
            GroupShape {
                ranks: 64,
                servers: 64,
            },
            GroupShape {
                ranks: 256,
                servers: 32,
            },
        ] {
            let ab = model.closed_form(op, g);
            let pts: Vec<(u64, f64)> = (10..34)
                .step_by(2)
                .map(|e| (1u64 << e, ab.time_s(1 << e)))
                .collect();
            let f = fabricsim::workload::alpha_beta::fit(&pts).unwrap();
            assert!(
                (f.model.alpha_s / ab.alpha_s - 1.0).abs() < 1e-6,
                "{op} {g:?}"
            );
            assert!(
                (f.model.bytes_per_s / ab.bytes_per_s - 1.0).abs() < 1e-6,
                "{op} {g:?}"
            );
            assert!(f.max_rel_err < 1e-9);
        }
    }
    // A fit inserted for (op, group) replaces the closed form there only.
    let mut m2 = model;
    let g = GroupShape {
        ranks: 64,
        servers: 64,
    };
    let fitted = fabricsim::workload::alpha_beta::AlphaBeta {
        alpha_s: 1e-3,
        bytes_per_s: 1e9,
    };
    m2.insert_fit(Op::AllReduce, g, fitted);
    assert_eq!(m2.model(Op::AllReduce, g), fitted);
    assert_ne!(m2.model(Op::AllGather, g), fitted);
}

#[test]
fn calibrating_the_step_with_dag_replays_agrees_with_the_closed_forms() {
    // Every collective of a Llama 3 8B step on 4 servers x 8 GPUs (tp 4 on NVLink; dp 4 as
    // 2 GPUs on each of 2 servers, hierarchical; pp 2 across servers) compiled to DAGs,
    // replayed on the ideal fabric with the estimate's own link parameters, and fitted: the
    // fits predict the step's sizes within 5% of the closed forms, and the step time moves
    // by less than that. The ranks sit on the hosts of the scenario's topology (rail-optimized: the topology
    // numbers hosts rail by rail, not like the GPUs).
    use fabricsim::scenario::Scenario;
    use fabricsim::workload::comm_model::CommModel;
    use fabricsim::workload::train::calibrate::calibrate;
    use fabricsim::workload::train::efficiency::Efficiency;
    use fabricsim::workload::train::run::run;
    use fabricsim::workload::train::step::step;
    let s = Scenario::parse(
        "calibrate.toml",
        "[cluster]\ngpus = 32\ngpu = \"h200\"\n[fabric]\nprofile = \"ib-ndr\"\n[topology]\nkind = \"rail-optimized\"\n[train]\nmodel = \"llama3-8b\"\ntp = 4\npp = 2\nzero = 0\nglobal_batch = 64\nseq = 2048\n",
    )
    .unwrap();
    let r = run(&s).unwrap();
    let place = &r.config.place;
    assert_ne!(place.host(1), fabricsim::topology::HostId(1));
    let (net, nvl) = (r.comm.fabric.net, r.comm.fabric.nvlink);
    let (closed, before) = (&r.comm, &r.report);
    let mut fitted = AlphaBetaModel::new(closed.fabric.clone());
    // 4 ring channels (NCCL_MIN/MAX_NCHANNELS = 4): the closed form has no per-channel
    // term, and NCCL's 16 on 8 NICs add per-message latencies it does not count.
    let mut channels = fabricsim::workload::collective::Channels::of_design(&s.design().unwrap());
    (channels.nccl.min_nchannels, channels.nccl.max_nchannels) = (4, 4);
    let cal = calibrate(
        &mut fitted,
        before,
        place,
        BitRate::gbps(3600),
        channels,
        |dag| Ok::<Time, ()>(ideal(dag, net, nvl)),
    )
    .unwrap();
    let names: Vec<&str> = cal.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        ["tp_all_reduce", "pp_send_recv", "dp_grad_all_reduce"]
    );
    for c in &cal {
        let row = before
            .collectives
            .iter()
            .find(|r| r.name == c.name)
            .unwrap();
        let want = closed.time_s(c.op, row.bytes_per_call, c.group);
        let got = c.fit.as_ref().unwrap().model.time_s(row.bytes_per_call);
        assert!(
            (got / want - 1.0).abs() < 0.05,
            "{}: fitted {got} vs closed form {want}",
            c.name
        );
    }
    let after = step(&r.config, &Efficiency::h200(&r.design.catalog), &fitted);
    assert!((after.step_time_s / before.step_time_s - 1.0).abs() < 0.05);
    assert!(
        after.comm_source.contains("3 fitted"),
        "{}",
        after.comm_source
    );
}

#[test]
fn over_seeds_each_figure_is_an_estimate_per_seed() {
    // Three seeds of two sizes: busbw is estimated from each seed's busbw (not from the mean
    // time), the average from each seed's average, and the text carries the half widths.
    let m = |bytes: u64, us: [f64; 3]| Measured {
        size: SweepSize {
            bytes,
            count: bytes / 4,
        },
        secs: us.iter().map(|u| u * 1e-6).collect(),
    };
    let t = Table::new(
        Op::AllReduce,
        8,
        0,
        &[
            m(1 << 20, [100.0, 110.0, 130.0]),
            m(1 << 24, [900.0, 1000.0, 1000.0]),
        ],
    );
    assert_eq!(t.seeds, 3);
    let per_seed = |us: f64, b: u64| b as f64 / 1e9 / (us * 1e-6) * 2.0 * 7.0 / 8.0;
    let b = [100.0, 110.0, 130.0].map(|u| per_seed(u, 1 << 20));
    let r = &t.rows[0];
    assert!((r.busbw_gbps.mean - b.iter().sum::<f64>() / 3.0).abs() < 1e-9);
    assert!(r.busbw_gbps.lo < r.busbw_gbps.mean && r.busbw_gbps.n == 3);
    assert!((r.time_us.mean - 340.0 / 3.0).abs() < 1e-9);
    let big = [900.0, 1000.0, 1000.0].map(|u| per_seed(u, 1 << 24));
    let avg: Vec<f64> = (0..3).map(|k| (b[k] + big[k]) / 2.0).collect();
    assert!((t.avg_busbw_gbps.mean - avg.iter().sum::<f64>() / 3.0).abs() < 1e-9);
    let text = t.to_text();
    assert!(text.contains("3 seeds per size"), "{text}");
    let rows = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(
        rows.filter(|l| l.matches(" ± ").count() == 3).count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("# Avg bus bandwidth    : 23.4150 ± "),
        "{text}"
    );
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json["rows"][0]["busbw_GBps"]["n"], 3);
    assert!(json["rows"][0]["time_us"]["hi"].as_f64().unwrap() > 113.0);
}

#[test]
fn seeds_runs_do_not_depend_on_the_thread_count() {
    let place = Placement::dense(16, 8);
    let comm = Comm::world(&place);
    let spec = CollectiveSpec {
        algo: Algo::Ring,
        ..CollectiveSpec::with_defaults(Op::AllReduce, 0, 2)
    };
    let sw = sizes(Op::AllReduce, 16, 1 << 20, 1 << 24, 4).unwrap();
    let seeds = fabricsim::workload::seeds::derive(1, 5);
    // A stand-in engine whose time depends on the seed and the DAG.
    let run = |dag: &MessageDag, _: &(), seed: u64| {
        Ok::<Time, ()>(Time::from_ps(
            dag.messages.len() as u64 * 1_000 + seed % 997,
        ))
    };
    let go = |threads| {
        measure_seeds(
            &spec,
            &comm,
            BitRate::gbps(3600),
            &sw,
            &seeds,
            threads,
            |_| Ok(None),
            |_| Ok(()),
            run,
        )
        .unwrap()
    };
    let (one, two) = (go(1), go(2));
    assert_eq!(one.table, two.table);
    assert_eq!(one.points, two.points);
    assert!(!one.interrupted && one.table.rows.len() == sw.len());
    assert!(one.table.rows[0].time_us.hi > one.table.rows[0].time_us.lo);
}
