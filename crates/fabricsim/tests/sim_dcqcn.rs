//! DCQCN on the packet engine (Zhu et al., SIGCOMM 2015; docs/validation.md): two long flows on
//! one bottleneck converge to a fair share; an 8→1 incast is held near the marking thresholds.

use fabricsim::message::MessageDag;
use fabricsim::sim::congestion::CcAlgo;
use fabricsim::sim::dcqcn::{DcqcnParams, DcqcnSet};
use fabricsim::sim::ecn::EcnMarking;
use fabricsim::sim::{FlowControl, PfcParams, SimParams};
use fabricsim::topology::HostId;
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::cc_util::{fluid, port_gbps, run, star};

/// RoCE with ECN marking `ecn`, sampled every 10 us.
fn params(ecn: Option<EcnMarking>) -> SimParams {
    let mut p = SimParams::roce();
    p.cc.ecn = ecn;
    p.sample_interval = Some(Time::from_us(10));
    p
}

fn red(kmin_bytes: u64, kmax_bytes: u64, pmax: f64) -> Option<EcnMarking> {
    Some(EcnMarking::Red {
        kmin_bytes,
        kmax_bytes,
        pmax,
    })
}

/// Time (from the second flow's start) after which the two senders' rates, averaged over
/// windows of `w` samples, stay within 10% of each other while both send; `None` if they never
/// do. The 5 ms windows span many rate-increase periods T, so one cut does not decide it; 1 ms
/// windows (three ConnectX T periods) time the convergence more finely.
fn convergence(a: &[f64], b: &[f64], start: usize, end: usize, w: usize) -> Option<usize> {
    let avg = |v: &[f64], i: usize| v[i..i + w].iter().sum::<f64>() / w as f64;
    let mut since = None;
    let mut i = start;
    while i + w <= end {
        let (x, y) = (avg(a, i), avg(b, i));
        let ok = (x - y).abs() <= 0.1 * x.max(y);
        match (ok, since) {
            (true, None) => since = Some(i),
            (false, _) => since = None,
            _ => {}
        }
        i += w;
    }
    since.map(|s| s - start)
}

/// What two flows into one receiver did.
#[derive(Debug)]
struct TwoFlows {
    /// Time after B started from which the rates stay within 10% (5 ms windows), us.
    converged_us: Option<u64>,
    /// The same with 1 ms windows, us.
    converged_1ms_us: Option<u64>,
    /// The two senders' rates over the last 5 ms of overlap, Gb/s.
    last: (f64, f64),
    /// The two senders' rates averaged over the overlap from 20 ms on, Gb/s.
    steady: (f64, f64),
    /// The bottleneck queue averaged over the same time, bytes.
    mean_queue_bytes: f64,
    cnps: u64,
}

/// |a − b| / max(a, b), percent.
fn gap_pct((a, b): (f64, f64)) -> f64 {
    100.0 * (a - b).abs() / a.max(b)
}

/// Two senders into one receiver on a star at `rate`, each with `data` worth of line-rate
/// bytes; A starts alone at line rate and B joins 1 ms later.
fn two_flows(
    rate: BitRate,
    d: DcqcnParams,
    ecn: Option<EcnMarking>,
    seed: u64,
    data: Time,
) -> TwoFlows {
    let t = star(3, rate, Time::from_ns(500));
    let mut p = params(ecn);
    p.seed = seed;
    p.cc.algo = CcAlgo::Dcqcn(d);
    let mut d = MessageDag::default();
    let bytes = rate.bytes_in(data);
    d.push(HostId(0), HostId(2), bytes, Time::ZERO, &[]);
    d.push(HostId(1), HostId(2), bytes, Time::from_ms(1), &[]);
    let r = run(&t, &p, &d);
    let (a, b) = (
        port_gbps(&r, t.host_port(HostId(0)).idx()),
        port_gbps(&r, t.host_port(HostId(1)).idx()),
    );
    // Both send from 1 ms until the first finishes.
    let end_ps = r
        .messages
        .iter()
        .map(|m| m.finish_ps.unwrap())
        .min()
        .unwrap();
    let (start, end) = (100, (end_ps / 10_000_000) as usize);
    let mean = |v: &[f64], from: usize| v[from..end].iter().sum::<f64>() / (end - from) as f64;
    let bott = t
        .ports
        .iter()
        .position(|x| x.peer == t.host_port(HostId(2)))
        .unwrap();
    let q = &r.series.as_ref().unwrap().ports[bott].queue_bytes[2000..end];
    TwoFlows {
        converged_us: convergence(&a, &b, start, end, 500).map(|c| c as u64 * 10),
        converged_1ms_us: convergence(&a, &b, start, end, 100).map(|c| c as u64 * 10),
        last: (mean(&a, end - 500), mean(&b, end - 500)),
        steady: (mean(&a, 2000), mean(&b, 2000)),
        mean_queue_bytes: q.iter().sum::<u64>() as f64 / q.len() as f64,
        cnps: r.counters.cnps,
    }
}

/// The marking thresholds of each parameter set's own source: the paper set at
/// 40G with the DCQCN-validation thresholds (ns-3 with the authors' code: Kmin 5 KB, Kmax
/// 100 KB, Pmax 1%); the HPCC set at 100G with the HPCC scaling rule (400 KB, 1.6 MB, 0.2); the
/// ConnectX firmware set at 100G with the NVIDIA RoCE switch defaults (150 KB, 1.5 MB, and
/// "probability 100": Pmax 1; Cumulus Linux 5.17 RoCE doc).
fn own_thresholds(set: DcqcnSet) -> (BitRate, Option<EcnMarking>) {
    match set {
        DcqcnSet::Paper => (BitRate::gbps(40), red(5_000, 100_000, 0.01)),
        DcqcnSet::HpccMlx => (BitRate::gbps(100), red(400_000, 1_600_000, 0.2)),
        DcqcnSet::ConnectxFw => (BitRate::gbps(100), red(150_000, 1_500_000, 1.0)),
    }
}

/// The seeds each two-flow case runs with (the marking draws differ).
const SEEDS: [u64; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/// `set` with its own thresholds over `SEEDS`, 60 ms of data each.
fn two_flows_over_seeds(set: DcqcnSet) -> Vec<TwoFlows> {
    let (rate, e) = own_thresholds(set);
    seeds_of(set, rate, DcqcnParams::set(set, rate), e, Time::from_ms(60))
}

/// Two flows of `d` at `rate` with marking `e` over `SEEDS`, each result printed.
fn seeds_of(
    name: impl std::fmt::Debug,
    rate: BitRate,
    d: DcqcnParams,
    e: Option<EcnMarking>,
    data: Time,
) -> Vec<TwoFlows> {
    SEEDS
        .iter()
        .map(|&seed| {
            let x = two_flows(rate, d, e, seed, data);
            eprintln!(
                "{name:?} at {} Gb/s, seed {seed}: within 10% from {:?} us after B starts (5 ms \
                 windows; 1 ms windows: {:?} us); last 5 ms {:.1} / {:.1} Gb/s (gap {:.1}%); \
                 from 20 ms {:.1} / {:.1} Gb/s (gap {:.1}%); mean queue {:.0} B; {} CNPs",
                rate.bps() / 1_000_000_000,
                x.converged_us,
                x.converged_1ms_us,
                x.last.0,
                x.last.1,
                gap_pct(x.last),
                x.steady.0,
                x.steady.1,
                gap_pct(x.steady),
                x.mean_queue_bytes,
                x.cnps
            );
            assert!(x.cnps > 0, "{name:?} seed {seed}: no CNPs");
            x
        })
        .collect()
}

/// On-wire bytes of a full data packet under `SimParams::roce()`.
fn wire_bytes() -> u64 {
    let p = SimParams::roce();
    p.mtu_frame_wire_bytes()
}

/// Zhu et al. 2015 §5: two flows sharing a bottleneck converge towards equal rates. The HPCC
/// set (its own thresholds, `own_thresholds`) ends every seed within 10% and shares fairly on
/// average, but wanders by up to ~10-15% on the way. Asserted: the last 5 ms within 10% for
/// every seed; the rates from 20 ms on within 10% pooled over the seeds.
///
/// Measured (seeds 1-10): within 10% (5 ms windows, to the end) from 0, None, 45, 0, 60, 5, 0,
/// 0, 0, 0 ms after B starts (1 ms windows: 37-115 ms, one seed None); last 5 ms gaps 2.1, 8.8,
/// 3.1, 6.9, 0.3, 3.2, 6.3, 3.7, 1.6, 1.0%; from 20 ms 1.6, 15.5, 6.3, 1.6, 6.8, 6.9, 4.7, 2.1,
/// 2.1, 1.9% (pooled 5.0%). With 100 ms of data (scratch runs) seed 2 starts 23% apart and
/// comes within 10% after ~140 ms; the others wander 0-11%. Its mean queue, 295-339 KB, is
/// below Kmin (400 KB) although the fluid model's fixed point is Kmin + 5.6 KB: the queue cycles
/// around it.
#[test]
fn two_flows_converge_with_the_hpcc_set() {
    let runs = two_flows_over_seeds(DcqcnSet::HpccMlx);
    for (seed, x) in SEEDS.iter().zip(&runs) {
        assert!(
            gap_pct(x.last) <= 10.0,
            "seed {seed}: gap {:.1}%",
            gap_pct(x.last)
        );
    }
    let pooled = runs.iter().map(|x| gap_pct(x.steady)).sum::<f64>() / runs.len() as f64;
    assert!(
        pooled <= 10.0,
        "from 20 ms {pooled:.1}% apart (seeds pooled)"
    );
}

/// A shipped profile's tuned congestion settings (`[congestion]`: ECN thresholds and DCQCN set)
/// and port rate, through `params_from_design`.
fn profile_cc(fabric: &str) -> (BitRate, DcqcnParams, Option<EcnMarking>) {
    let mut sc = fabricsim::scenario::Scenario::defaults();
    sc.apply_flags(&[("--fabric".to_string(), fabric.to_string())])
        .unwrap();
    let design = sc.design().unwrap();
    let p = fabricsim::sim::params_from_design(&design, true).unwrap();
    let d =
        p.cc.algo
            .dcqcn()
            .copied()
            .expect("the tuned profile runs DCQCN");
    let rate = BitRate::gbps(design.profile.ports.rate_gbps as u64);
    (rate, d, p.cc.ecn)
}

/// Zhu et al. 2015 §5 with what the roce profiles ship: the ConnectX firmware set with the
/// NVIDIA switch thresholds (150 KB, 1.5 MB, probability 100%), at the profiles' port rate.
/// Two flows of 20 ms of line-rate data each (B joins at 1 ms; both send until ~40 ms) come
/// within 10% from the start and stay there, or keep the split the start left them with.
/// B joining at line rate gives both flows their first CNPs in the same few us (α ≈ 1, a cut
/// per 4 us, Rt = line rate for both), usually leaving them alike; the first cut after the
/// first increase sets each Rt to where that flow's recovery had got, which can differ by
/// 10-20%. After that the split is neutral, not restored (`two_flows_converge_with_the_roce_
/// 400g_profile`): a split is held, not converged from.
fn connectx_two_flows_at_profile_rate(fabric: &str) -> usize {
    let (rate, d, e) = profile_cc(fabric);
    let runs = seeds_of(fabric, rate, d, e, Time::from_ms(20));
    for (seed, x) in SEEDS.iter().zip(&runs) {
        assert!(
            x.converged_us.is_some() || holds_its_split(x),
            "seed {seed}: neither converged nor held: {x:?}"
        );
    }
    runs.iter().filter(|x| x.converged_us.is_some()).count()
}

/// A pair that did not converge kept the split it had: the gap over the last 5 ms is within 3
/// points of the gap averaged from 20 ms on.
fn holds_its_split(x: &TwoFlows) -> bool {
    (gap_pct(x.last) - gap_pct(x.steady)).abs() <= 3.0
}

/// roce-400g: eight seeds of ten converge (asserted), the others keep their split (asserted).
/// Measured (seeds 1-10): seeds 1, 3-6, 8-10 within 10% from B's start on (1 ms windows: 0 us),
/// last 5 ms gaps 0.8-4.6%; seed 2 leaves the start at 219/181 Gb/s and holds it (17.5% from
/// 20 ms, 17.7% in the last 5 ms; 16-18% over 200 ms in a scratch run), seed 7 at 189/211
/// (10.9%, 10.8%). Mean queue 98-133 KB; 648-824 CNPs.
///
/// Why the split is held (seed 2, the RP state traced in a scratch run): marking comes in
/// rounds every ~0.4-0.5 ms, when the queue climbs past Kmin; with Pmax 100% each QP then gets a
/// CNP per 4 us (MIN_TIME_BETWEEN_CNPS) whatever its rate, so from 5 ms on the 220 Gb/s flow had
/// 252 CNPs and the 181 Gb/s one 226: 11% more for 22% more rate. Between rounds α decays to
/// ~0.2% (g = 5/1024 per 1 us), so a round's cuts total a few percent, and the byte counter
/// (a stage per 2 MB: more often for the faster flow) takes each flow back to its own Rt by
/// fast recovery. Rt itself moves only by the residual Rt − Rc clamped off at a round's first
/// cut and by R_AI = 5 Mb/s per stage: Rt went 225.2 / 188.4 Gb/s at 5 ms, 220.3 / 182.4 at
/// 20 ms, 220.5 / 183.3 at 40 ms, the same absolute drift for both, so the ratio stays.
///
/// Model choices tested against this (scratch runs, 400G, seeds 1-10, converged of 10): as
/// modelled (CNPs per QP per 4 us, marking at dequeue) 8; no NP limit, every marked packet a
/// CNP and the RP's 4 us monitor period the only limit (HPCC ns-3 `ReceiveUdp`, Isekai
/// `GenerateCongestionNotification`) 4; one CNP per 4 us per receiving port (mstflint's
/// "from the port") 1; marking at enqueue 10 (the mark now also waits out the queue: ~2,600
/// marks and ~950 CNPs per run instead of ~1,550 and ~750; in 1 ms windows three seeds come
/// within 10% only after 4-32 ms); byte counter off 9; RPG_BYTE_RESET read as bytes (a stage
/// per 32 KB instead of 2 MB) 0, the flows driven apart to 41-144 / 246-354 Gb/s (stages
/// proportional to the rate: the faster flow climbs faster). So the held split at 400G follows
/// from the firmware's parameters; which seeds hold one depends on such details.
#[test]
fn two_flows_converge_with_the_roce_400g_profile() {
    assert!(connectx_two_flows_at_profile_rate("roce-400g") >= 8);
}

/// roce-800g: every seed converges. Measured (seeds 1-10): within 10% from B's start on (1 ms
/// windows: 0 us for every seed); last 5 ms gaps 2.1-4.8%.
#[test]
fn two_flows_converge_with_the_roce_800g_profile() {
    assert_eq!(connectx_two_flows_at_profile_rate("roce-800g"), SEEDS.len());
}

/// Zhu et al. 2015 §5 with the paper set at 40G: the flows share the link fairly on average
/// but wander around the fair share. The first cuts (α = 1, one per 50 us) take both far below
/// it and R_AI = 40 Mb/s per T = 55 us brings them back over ~20 ms; a later cut with α ≈ 0.1
/// is undone by fast recovery unless a second lands within its 5 x 55 us, so Rt, and the split,
/// drift by R_AI steps.
///
/// The queue checks the mechanism against an independent model: the fixed point of the DCQCN
/// fluid model (Zhu et al., CoNEXT 2016, `cc_util::fluid`) puts two 20 Gb/s flows at p* =
/// 0.39%, so RED holds the queue at q* = 41.9 KB, 39% of the way from Kmin to Kmax. Asserted:
/// the simulated queue, averaged from 20 ms to the first completion and over the seeds, within
/// 10% of q*; the two flows' rates averaged over the same time, within 10% of each other
/// (seeds pooled).
///
/// Measured (seeds 1-10): mean queue 37.6-44.9 KB (pooled 40.9 KB, 2.3% below q*); rates from
/// 20 ms on 16.4, 6.5, 5.0, 6.2, 9.1, 0.1, 4.0, 5.2, 0.5, 6.3% apart (pooled 5.9%). Within 10%
/// in 5 ms windows to the end from 70, 110, 100, 110, 90, 105, None, 115, 85, 110 ms after B
/// starts; last 5 ms 1.6, 7.3, 1.4, 2.6, 11.8, 10.7, 18.6, 2.1, 10.3, 11.9% apart: the split
/// keeps wandering by ~10% (runs with 400 ms of data, before the pacing fix: within 10% only
/// from 735-800 ms on).
#[test]
fn two_flows_converge_with_the_paper_set() {
    let runs = two_flows_over_seeds(DcqcnSet::Paper);
    let pooled_gap = runs.iter().map(|x| gap_pct(x.steady)).sum::<f64>() / runs.len() as f64;
    assert!(
        pooled_gap <= 10.0,
        "rates {pooled_gap:.1}% apart (seeds pooled)"
    );
    let (rate, e) = own_thresholds(DcqcnSet::Paper);
    let Some(EcnMarking::Red {
        kmin_bytes,
        kmax_bytes,
        pmax,
    }) = e
    else {
        unreachable!()
    };
    let d = DcqcnParams::set(DcqcnSet::Paper, rate);
    let fp = fluid::fixed_point(&d, rate, 2, wire_bytes(), (kmin_bytes, kmax_bytes, pmax))
        .expect("a fixed point below Kmax");
    eprintln!(
        "fluid model (CoNEXT 2016): p* {:.4}, q* {:.0} B",
        fp.p, fp.queue_bytes
    );
    let pooled = runs.iter().map(|x| x.mean_queue_bytes).sum::<f64>() / runs.len() as f64;
    let err = (pooled - fp.queue_bytes).abs() / fp.queue_bytes;
    assert!(
        err <= 0.1,
        "mean queue {pooled:.0} B (seeds pooled) vs q* {:.0} B",
        fp.queue_bytes
    );
}

/// Below the profiles' port rate the ConnectX firmware set does not reliably bring two flows
/// together: at 100G with the NVIDIA thresholds (Kmin 150 KB, Kmax 1.5 MB, probability 100%)
/// seven seeds of ten come within 10%; the other three keep the split they leave the start with
/// (asserted: each seed converges or holds its split, and not all converge). The link stays full.
///
/// Measured (seeds 1-10): within 10% (5 ms windows) from 0, None, 0, 0, None, 0, 0, 85, 0, None
/// ms after B starts; last 5 ms 4.0, 39.9, 5.1, 6.3, 13.3, 5.6, 3.5, 7.9, 0.6, 18.6% apart, from
/// 20 ms 4.6, 39.0, 2.3, 7.0, 13.1, 6.3, 3.4, 10.1, 0.1, 18.0%; mean queue 89-100 KB, below Kmin
/// (the fluid model's fixed point is Kmin + 1.2 KB, `cc_util::fluid`; the queue cycles around
/// it). With 100 ms of data (scratch runs): seed 2 at 34-40% and seed 5 at 12-14% throughout.
///
/// Why (see `two_flows_converge_with_the_roce_400g_profile` for the trace): a split changes only
/// through what the two flows get alike, the additive steps (R_AI
/// 5 Mb/s, R_HAI 50 Mb/s per stage, not scaled with the line rate), while each cut scales with
/// the flow's own rate and fast recovery returns each flow to its own target Rt (kept through a
/// run of cuts by CLAMP_TGT_RATE 0), which preserves the ratio. Restoring a 10-30 Gb/s split
/// at 5-50 Mb/s per 300 us stage takes far longer than these runs: the gaps are there in the
/// first 20 ms and hold. The HPCC set, with the same structure but R_AI and R_HAI scaled with
/// the line rate (x4 here), converges (`two_flows_converge_with_the_hpcc_set`). Neither the
/// 2 MB byte counter (scratch runs before the pacing fix: without it 4 of 5; with B = 0.5 MB
/// 1 of 5) nor the clamp rule (Rt = Rc at every cut: 2 of 5) is what holds the split. Gentler
/// marking does not help either: with the DCQCN authors' thresholds (5 KB, 100 KB, 1%) 3 of 5
/// at 100G and 1 of 5 at 400G (scratch runs), the splits closing by ~1 point per 10 ms.
#[test]
fn connectx_firmware_set_at_100g_keeps_a_split() {
    let fw = two_flows_over_seeds(DcqcnSet::ConnectxFw);
    for (seed, x) in SEEDS.iter().zip(&fw) {
        // The bottleneck stays full (wire rate, Gb/s) however the two split it.
        let total = x.last.0 + x.last.1;
        assert!(total > 95.0, "seed {seed}: total {total:.1} Gb/s");
        assert!(
            x.converged_us.is_some() || holds_its_split(x),
            "seed {seed}"
        );
    }
    assert!(fw.iter().any(|x| x.converged_us.is_none()));
}

/// The bottleneck queue of an 8 → 1 incast, sampled by the engine every 1 us.
struct Incast {
    /// Over the steady state (after `WARMUP` until the first sender finishes): fraction of
    /// samples with the queue in [Kmin, Kmax], at or below Kmax, and above zero.
    within: f64,
    below_kmax: f64,
    busy: f64,
    /// The steady-state queue averaged over time, bytes.
    mean_queue_bytes: f64,
    /// The same in-band fraction over the whole run up to the first completion.
    within_all: f64,
    pause_us: u64,
    cnps: u64,
    drops: u64,
    /// Bytes the bottleneck sent over the steady state, as a fraction of its line rate.
    utilization: f64,
    /// First and last completion, us.
    first_us: u64,
    last_us: u64,
}

/// The start-up transient left out of the steady-state figures: eight line-rate starts build a
/// queue above Kmax before the first CNPs act, and the over-cut that follows recovers through
/// several rate-increase periods T (300 us for the ConnectX and HPCC sets).
const WARMUP: Time = Time::from_ms(2);

const INCAST_RATE: BitRate = BitRate::gbps(400);
/// The roce-400g profile's ECN thresholds (Kmin, Kmax, Pmax).
const INCAST_ECN: (u64, u64, f64) = (150_000, 1_500_000, 1.0);

/// The DCQCN authors' thresholds: ns-3 with their code, DCQCN-validation README (Kmin 5 KB,
/// Kmax 100 KB, Pmax 1%; sc20anonymous/DCQCN-validation), as the paper set's two-flow test uses.
const AUTHORS_ECN: (u64, u64, f64) = (5_000, 100_000, 0.01);

/// 8 → 1 incast at 400G of `bytes` per sender (64 MB: ~10 ms at the fair share, so a steady
/// state exists), under PFC (SONiC headroom, dynamic XOFF, 8 MB buffer as in the PFC incast
/// test), with RED marking `ecn` (Kmin, Kmax, Pmax) and DCQCN `set` or none.
fn incast(set: Option<DcqcnSet>, ecn: (u64, u64, f64), bytes: u64, seed: u64) -> Incast {
    let rate = INCAST_RATE;
    let (kmin, kmax, pmax) = ecn;
    let t = star(9, rate, Time::from_ns(100));
    let mut p = params(red(kmin, kmax, pmax));
    p.seed = seed;
    if let Some(s) = set {
        p.cc.algo = CcAlgo::Dcqcn(DcqcnParams::set(s, rate));
    }
    p.switch_buffer_bytes = 8 << 20;
    p.sample_interval = Some(Time::from_us(1));
    let frame = p.mtu_frame_wire_bytes();
    p.flow_control = FlowControl::Pfc(PfcParams::tuned(p.data_tc, frame));
    let mut d = MessageDag::default();
    for s in 1..=8 {
        d.push(HostId(s), HostId(0), bytes, Time::ZERO, &[]);
    }
    let r = run(&t, &p, &d);
    let bott = t
        .ports
        .iter()
        .position(|x| x.peer == t.host_port(HostId(0)))
        .unwrap();
    let done = |m: &fabricsim::sim::results::MessageResult| m.recv_ps.unwrap() / 1_000_000;
    let first_us = r.messages.iter().map(done).min().unwrap();
    let last_us = r.messages.iter().map(done).max().unwrap();
    let series = &r.series.as_ref().unwrap().ports[bott];
    let (w, f) = ((WARMUP.0 / 1_000_000) as usize, first_us as usize);
    let frac = |q: &[u64], keep: &dyn Fn(u64) -> bool| {
        q.iter().filter(|&&x| keep(x)).count() as f64 / q.len() as f64
    };
    let band = |x: u64| x >= kmin && x <= kmax;
    let q = &series.queue_bytes[w..f];
    let sent: u64 = series.tx_bytes[w..f].iter().sum();
    Incast {
        within: frac(q, &band),
        below_kmax: frac(q, &|x| x <= kmax),
        busy: frac(q, &|x| x > 0),
        mean_queue_bytes: q.iter().sum::<u64>() as f64 / q.len() as f64,
        within_all: frac(&series.queue_bytes[..f], &band),
        pause_us: r.flow_control.as_ref().unwrap().pause_time_ps_total / 1_000_000,
        cnps: r.counters.cnps,
        drops: r.counters.drops.total(),
        utilization: sent as f64 / rate.bytes_in(Time::from_us((f - w) as u64)) as f64,
        first_us,
        last_us,
    }
}

/// Prints what an incast run measured.
fn show(name: &str, x: &Incast) {
    eprintln!(
        "8->1 at 400G, {name}: steady state in [Kmin,Kmax] {:.3}, <= Kmax {:.3}, non-empty \
         {:.3}, mean queue {:.0} B, utilization {:.3}; in band from t=0 {:.3}; pause {} us, {} \
         CNPs, drops {}, completions {}..{} us",
        x.within,
        x.below_kmax,
        x.busy,
        x.mean_queue_bytes,
        x.utilization,
        x.within_all,
        x.pause_us,
        x.cnps,
        x.drops,
        x.first_us,
        x.last_us
    )
}

/// Zhu et al. §2 and §6: DCQCN holds an incast's queue near the ECN marking thresholds so PFC
/// rarely has to act; PFC alone lets the queue sit at the XOFF threshold and pauses the senders.
///
/// The measure: the fraction of the steady state (from `WARMUP` to the first completion, 1 us
/// samples of the bottleneck egress queue, so time-weighted) the queue spends in [Kmin, Kmax];
/// also shown, at or below Kmax, non-empty, its mean, and the in-band fraction from time 0.
/// Pause time is the whole run's.
///
/// Measured (8 x 64 MB, default seed): PFC alone: in band 0.2%, mean queue 4.26 MB, pause
/// 72,702 us. ConnectX set (the profile's): in band 20.2%, <= Kmax 100%, non-empty 93.0%, mean
/// 75 KB, link 99.4% busy, pause 169 us. HPCC set: in band 16.7%, <= Kmax 100%, non-empty 83.7%,
/// mean 61 KB, link 98.6%, pause 73 us. Paper set: in band 0%, link 41.0%, pause 471 us (R_AI
/// 40 Mb/s and B 10 MB, meant for 40G, take ~15 ms to recover an over-cut 400G link, so the
/// queue stays empty).
///
/// So DCQCN cuts the pause time by 154-996x and holds the queue at or below Kmax, but not
/// "mostly" inside [Kmin, Kmax], and that follows from the parameters, not from the simulator:
/// the fluid model's fixed point (Zhu et al., CoNEXT 2016; `cc_util::fluid`) for eight 50 Gb/s
/// flows needs a marking probability of only p* = 0.09% (ConnectX) or 0.14% (HPCC), because
/// 5-80 Mb/s of additive increase per 300 us is balanced by very few cuts, and with the NVIDIA
/// Pmax of 100% RED gives that p at Kmin + 0.1% of the band (q* = 151 KB). A queue that sits on
/// Kmin is below it whenever it fluctuates down; in the packet simulation it cycles around Kmin
/// (rising through it as the increases overshoot, cut back by a round of CNPs, draining below
/// it), with its mean below Kmin. Where the fixed point is inside the band the simulated queue
/// sits on it: the paper set's two flows at 40G (`two_flows_converge_with_the_paper_set`). With
/// the DCQCN authors' thresholds (5 KB, 100 KB, 1%) the ConnectX and HPCC sets keep the same
/// incast's queue mostly in band (`incast_with_the_dcqcn_authors_thresholds_stays_mostly_in_
/// band`).
#[test]
fn incast_with_dcqcn_has_less_pause_and_keeps_the_queue_below_kmax() {
    let pfc = incast(None, INCAST_ECN, 64_000_000, 1);
    show("PFC alone", &pfc);
    assert_eq!(pfc.drops, 0);
    let (kmin, kmax, _) = INCAST_ECN;
    for set in [DcqcnSet::ConnectxFw, DcqcnSet::HpccMlx, DcqcnSet::Paper] {
        let x = incast(Some(set), INCAST_ECN, 64_000_000, 1);
        show(&format!("PFC + DCQCN {set:?}"), &x);
        let d = DcqcnParams::set(set, INCAST_RATE);
        let fp = fluid::fixed_point(&d, INCAST_RATE, 8, wire_bytes(), INCAST_ECN);
        let depth = fp.map(|f| (f.queue_bytes - kmin as f64) / (kmax - kmin) as f64);
        eprintln!(
            "  fluid model: p* {:?}, q* {:?} B, {:?} of the way from Kmin to Kmax",
            fp.map(|f| f.p),
            fp.map(|f| f.queue_bytes.round()),
            depth
        );
        if set != DcqcnSet::Paper {
            // The fixed point sits at the bottom edge of the band: "mostly in band" would need
            // the queue to stay within a few packets above Kmin.
            assert!(depth.is_some_and(|x| x < 0.02), "{set:?}: {depth:?}");
        }
        assert_eq!(x.drops, 0);
        assert!(x.cnps > 0);
        assert!(
            x.pause_us < pfc.pause_us,
            "{set:?}: pause {} us",
            x.pause_us
        );
        assert!(
            x.below_kmax > 0.9,
            "{set:?}: queue <= Kmax only {:.3}",
            x.below_kmax
        );
        if set != DcqcnSet::Paper {
            assert!(x.within > pfc.within, "{set:?}: in band {:.3}", x.within);
        }
    }
}

/// The same 8 → 1 incast (8 x 32 MB, seeds 1-5) with the DCQCN authors' thresholds
/// (`AUTHORS_ECN`: 5 KB, 100 KB, 1%) instead of NVIDIA's: the queue is now mostly in [Kmin,
/// Kmax] (steady state from `WARMUP` to the first completion, 1 us samples), for the ConnectX
/// firmware set (the profiles') and the HPCC set, with less pause than PFC alone.
///
/// Why these thresholds and not NVIDIA's: the queue's cycle (a slow rise as the 300 us stages
/// raise the rates, a round of cuts once it passes Kmin, a drain to near empty) is ~100-250 KB
/// deep whatever the thresholds; with Pmax 1% the fluid fixed point moves up the band (p* /
/// Pmax of the way), and a Kmax of 100 KB sits near the top of the cycle, so most of the cycle
/// is inside the band. With Kmin 150 KB and Pmax 100% the fixed point is Kmin itself and the
/// cycle spends most of its time below it (`incast_with_dcqcn_has_less_pause_and_keeps_the_
/// queue_below_kmax`). The roce profiles keep NVIDIA's thresholds as their tuned default, since
/// that is what the switch ships; these are the DCQCN authors' own tuning.
///
/// Measured (seeds 1-5): ConnectX in band 0.788, 0.793, 0.814, 0.788, 0.845 (from t = 0:
/// 0.55-0.60), link 99.3-99.4% busy, pause 75 us (the start-up burst before the first cuts);
/// HPCC 0.648, 0.684, 0.722, 0.645, 0.637, pause 0 us; PFC alone 36,058 us. The fluid fixed
/// points: q* = 13.7 KB (ConnectX) and 18.3 KB (HPCC), 9% and 14% of the way up the band.
#[test]
fn incast_with_the_dcqcn_authors_thresholds_stays_mostly_in_band() {
    let bytes = 32_000_000;
    let pfc = incast(None, AUTHORS_ECN, bytes, 1);
    show("PFC alone, 32 MB", &pfc);
    let (kmin, kmax, _) = AUTHORS_ECN;
    for set in [DcqcnSet::ConnectxFw, DcqcnSet::HpccMlx] {
        let d = DcqcnParams::set(set, INCAST_RATE);
        let fp = fluid::fixed_point(&d, INCAST_RATE, 8, wire_bytes(), AUTHORS_ECN);
        eprintln!(
            "{set:?} fluid model: p* {:?}, q* {:?} B, {:?} of the way from Kmin to Kmax",
            fp.map(|f| f.p),
            fp.map(|f| f.queue_bytes.round()),
            fp.map(|f| (f.queue_bytes - kmin as f64) / (kmax - kmin) as f64)
        );
        for &seed in &SEEDS[..5] {
            let x = incast(Some(set), AUTHORS_ECN, bytes, seed);
            show(&format!("{set:?}, authors' thresholds, seed {seed}"), &x);
            assert!(
                x.within > 0.5,
                "{set:?} seed {seed}: in band {:.3}",
                x.within
            );
            assert!(x.pause_us < pfc.pause_us, "{set:?} seed {seed}");
            assert_eq!(x.drops, 0);
        }
    }
}

/// The shipped roce-400g profile through `params_from_design` (catalog SN5600: 128 MB buffer),
/// tuned vs its documented untuned variant (data/profiles/roce-400g.toml), on an 8 → 1 incast
/// of 16 MB per sender, enough to reach the dynamic XOFF point (1/8 of the free buffer per
/// ingress port: ~64 MB queued over eight ports). Tuned: ECN at the NVIDIA defaults with
/// ConnectX DCQCN stops the queue far below XOFF, so PFC does not act and nothing drops.
/// Untuned: DCQCN off, so the queue grows to XOFF and PFC pauses the senders, and the legacy
/// 25,632 B headroom is below what 400G needs (the peer's response alone is 58 KB, sonic-swss
/// 400G peer_response_time), so packets in flight after XOFF overflow it and drop.
///
/// Measured: tuned peak 5.2 MB, pause 0, no drops, flows done at 3.41-3.58 ms (ideal 2.6 ms):
/// the synchronized starters take a cut every 4 us (RATE_REDUCE_MONITOR_PERIOD) with α ≈ 1
/// (INITIAL_ALPHA 1023/1024) while the start-up queue drains, down to ~1% of the line rate,
/// then wait for the first increase stage (T = 300 us, or 2 MB sent), which takes them halfway
/// back to the line rate (Rt kept through the run of cuts by CLAMP_TGT_RATE 0). Before the
/// pacing fix (a rate increase now rescales the wait left after the last packet) the packet
/// sent at ~1 Mb/s held each QP for milliseconds: 3.3-22.5 ms. Untuned: peak 67 MB, pause
/// 3,434 us, 14,072 drops, every flow done at 3.2 ms (ideal 2.6 ms).
#[test]
fn roce_400g_tuned_vs_untuned_through_params_from_design() {
    let mut sc = fabricsim::scenario::Scenario::defaults();
    sc.apply_flags(&[("--fabric".to_string(), "roce-400g".to_string())])
        .unwrap();
    let design = sc.design().unwrap();
    let t = star(9, BitRate::gbps(400), Time::from_ns(100));
    let mut d = MessageDag::default();
    for s in 1..=8 {
        d.push(HostId(s), HostId(0), 16_000_000, Time::ZERO, &[]);
    }
    let bott = t
        .ports
        .iter()
        .position(|x| x.peer == t.host_port(HostId(0)))
        .unwrap();
    let mut out = Vec::new();
    for tuned in [true, false] {
        let mut p = fabricsim::sim::params_from_design(&design, tuned).unwrap();
        p.sample_interval = Some(Time::from_us(10));
        let r = run(&t, &p, &d);
        let pause_us = r.flow_control.as_ref().unwrap().pause_time_ps_total / 1_000_000;
        let peak = r.series.as_ref().unwrap().ports[bott]
            .queue_bytes
            .iter()
            .copied()
            .max()
            .unwrap();
        let mut fct_us: Vec<u64> = r
            .messages
            .iter()
            .map(|m| m.fct_ps.unwrap() / 1_000_000)
            .collect();
        fct_us.sort_unstable();
        eprintln!(
            "roce-400g {}: buffer {} MB, {} CNPs, peak queue {peak} B, pause {pause_us} us, \
             drops {}, FCTs {fct_us:?} us",
            if tuned { "tuned" } else { "untuned" },
            p.switch_buffer_bytes >> 20,
            r.counters.cnps,
            r.counters.drops.total(),
        );
        out.push((r.counters.cnps, pause_us, peak, r.counters.drops.total()));
    }
    let (tuned, untuned) = (out[0], out[1]);
    assert!(
        tuned.0 > 0 && untuned.0 == 0,
        "CNPs {} / {}",
        tuned.0,
        untuned.0
    );
    assert!(tuned.1 < untuned.1, "pause {} / {} us", tuned.1, untuned.1);
    assert!(
        tuned.2 < untuned.2,
        "peak queue {} / {} B",
        tuned.2,
        untuned.2
    );
    assert_eq!(tuned.3, 0);
    assert!(untuned.3 > 0, "the legacy headroom overflows");
}

/// A synchronized 32 → 1 incast of 1 MB per sender on the roce-400g profile (tuned, through
/// `params_from_design`): DCQCN over-cuts the starters (a cut every 4 us with α ≈ 1 while the
/// start-up queue drains, down to ~1% of the line rate), and the link then idles until the
/// first increase stage, T = RPG_TIME_RESET after the last cut, when fast recovery takes every
/// flow halfway back to its uncut target. So the incast costs about one T more than without
/// DCQCN: t ≈ t_pfc + T. Checked within 15% of T. (Before the pacing fix the packet sent at
/// ~1 Mb/s held each QP for ms: 8.69 ms.)
///
/// Measured: 934 us with DCQCN, 654 us without (+280 us, T = 300 us); peak queue 19.3 MB.
#[test]
fn incast_32_to_1_over_cut_costs_one_increase_period() {
    let mut sc = fabricsim::scenario::Scenario::defaults();
    sc.apply_flags(&[("--fabric".to_string(), "roce-400g".to_string())])
        .unwrap();
    let p = fabricsim::sim::params_from_design(&sc.design().unwrap(), true).unwrap();
    let t_inc =
        p.cc.algo
            .dcqcn()
            .copied()
            .expect("DCQCN on")
            .rate_increase_timer;
    let t = star(33, BitRate::gbps(400), Time::from_ns(100));
    let mut d = MessageDag::default();
    for s in 1..=32 {
        d.push(HostId(s), HostId(0), 1_000_000, Time::ZERO, &[]);
    }
    let last = |p: &SimParams| {
        let r = run(&t, p, &d);
        Time(r.messages.iter().map(|m| m.recv_ps.unwrap()).max().unwrap())
    };
    let with = last(&p);
    let without = last(&SimParams {
        cc: fabricsim::sim::cc::CcParams {
            algo: CcAlgo::None,
            ..p.cc.clone()
        },
        ..p.clone()
    });
    let extra = with.0 as f64 - without.0 as f64;
    eprintln!(
        "32:1 x 1 MB at 400G: {} us with DCQCN, {} us without; T = {} us",
        with.0 / 1_000_000,
        without.0 / 1_000_000,
        t_inc.0 / 1_000_000
    );
    assert!(
        (extra - t_inc.0 as f64).abs() <= 0.15 * t_inc.0 as f64,
        "extra {extra} ps vs T {} ps",
        t_inc.0
    );
}

/// DCTCP-style step marking (Alizadeh et al. 2010; HPCC run.py K = 30 KB x BW/10G)
/// at dequeue, without congestion control: two senders of 1 MB at line rate into one
/// receiver. The bottleneck queue rises by one frame per departure while both send, then falls
/// by one per departure, so the packet leaving m-th has min(m, 2n - m) frames behind it (n
/// packets per sender); it is marked when that exceeds K: 2n - 1 - 2·floor(K / frame) marks.
#[test]
fn step_marking_marks_the_packets_that_leave_a_queue_above_k() {
    let rate = BitRate::gbps(100);
    let t = star(3, rate, Time::from_ns(500));
    let k = 30_000 * 10; // 30 KB x 100G/10G
    let p = params(Some(EcnMarking::Step { k_bytes: k }));
    let mut d = MessageDag::default();
    let bytes = 1u64 << 20;
    d.push(HostId(0), HostId(2), bytes, Time::ZERO, &[]);
    d.push(HostId(1), HostId(2), bytes, Time::ZERO, &[]);
    let r = run(&t, &p, &d);
    let frame = p.data_frame_bytes(p.mtu_bytes) as u64;
    let n = bytes.div_ceil(p.mtu_bytes as u64);
    let expect = 2 * n - 1 - 2 * (k / frame);
    let got = r.counters.ecn_marks;
    eprintln!("step K {k} B: {got} marks, closed form {expect}");
    assert!(got.abs_diff(expect) <= 2, "{got} marks vs {expect}");
}

/// `[sim.congestion]` makes ECN and DCQCN reachable from a `fabricsim sim` scenario: the example
/// runs with marks and CNPs and pauses less than the same scenario with DCQCN off (Zhu et al.
/// §6); the step option and a bad table are read from the same keys.
#[test]
fn sim_congestion_section_reaches_the_engine() {
    use fabricsim::scenario::{Scenario, sim::build};
    use fabricsim::sim::RunOptions;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let text = std::fs::read_to_string(dir.join("roce-incast-dcqcn.toml")).unwrap();
    let go = |text: &str| {
        let sc = Scenario::parse("roce-incast-dcqcn.toml", text).unwrap();
        let s = build(&sc, &dir, None).unwrap();
        let r = fabricsim::sim::run(
            &s.net.topo,
            &s.params,
            &s.dag,
            &s.faults,
            RunOptions::default(),
        )
        .unwrap();
        r.check_conservation().unwrap();
        (s.params, r)
    };
    let (p, on) = go(&text);
    assert_eq!(p.cc.ecn, red(150_000, 1_500_000, 1.0));
    assert_eq!(
        p.cc.algo.dcqcn(),
        Some(&DcqcnParams::set(DcqcnSet::ConnectxFw, BitRate::gbps(400)))
    );
    let (_, off) = go(&text.replace("dcqcn = \"connectx_fw\"", "dcqcn = \"off\""));
    let pause = |r: &fabricsim::sim::RunResult| {
        r.flow_control.as_ref().unwrap().pause_time_ps_total / 1_000_000
    };
    eprintln!(
        "example incast: DCQCN {} CNPs, pause {} us; DCQCN off: pause {} us",
        on.counters.cnps,
        pause(&on),
        pause(&off)
    );
    assert!(on.counters.cnps > 0 && off.counters.cnps == 0);
    assert!(pause(&on) < pause(&off));
    let (p, step) = go(&text.replace("ecn = \"red\"", "ecn = \"step\""));
    assert_eq!(p.cc.ecn, Some(EcnMarking::Step { k_bytes: 150_000 }));
    assert!(step.counters.ecn_marks > 0);
    let bad = text.replace("ecn_kmax_bytes = 1500000", "ecn_kmax_bytes = 1000");
    let e = build(&Scenario::parse("bad.toml", &bad).unwrap(), &dir, None).unwrap_err();
    assert_eq!(e.key, "sim.congestion.ecn");
    assert!(e.problem.contains("kmin"), "{e}");
    let typo = text.replace("qps_per_connection", "qps_per_conection");
    assert!(Scenario::parse("typo.toml", &typo).is_err());
}
