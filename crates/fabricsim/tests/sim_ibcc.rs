//! InfiniBand congestion control (IBA annex A10) against congestion spreading: the hotspot and
//! victim pattern of Gran et al., "First experiences with congestion control in InfiniBand
//! hardware" (IPDPS 2010), on IB credits (`lossless_scenarios`), with the `[ib_cc]` settings
//! of the ib-ndr profile switched on.

use fabricsim::profile::Profile;
use fabricsim::sim::lossless_scenarios::{hotspot_victim, two_leaves};
use fabricsim::sim::{self, Faults, RunOptions, SimParams};
use fabricsim::topology::{HostId, Topology};
use fabricsim::units::{BitRate, Time};
use fabricsim_cases::cc_util::port_gbps;

const RATE: BitRate = BitRate::gbps(400);
const SAMPLE: Time = Time::from_us(100);
const RUN: Time = Time::from_us(4000);

/// The ib-ndr profile's parameters, with its `[ib_cc]` on or off.
fn ndr(ib_cc: bool) -> SimParams {
    let mut prof = Profile::builtin("ib-ndr").unwrap();
    prof.ib_cc.as_mut().unwrap().enabled = ib_cc;
    let mut p = fabricsim::sim::profile_fc::from_profile(&prof, true).unwrap();
    p.sample_interval = Some(SAMPLE);
    p
}

/// Per sample interval: the victim's sending rate and the hotspot's receiving rate, in Gb/s.
struct Trace {
    victim: Vec<f64>,
    hot: Vec<f64>,
    becns: u64,
}

/// Hotspot incast of 9 long flows (3 from leaf A, 6 local to leaf B) and a victim host 0 ->
/// host 15 that shares leaf A's uplink with 3 of them, for `RUN`.
fn hotspot_run(t: &Topology, p: &SimParams) -> Trace {
    let (dag, _) = hotspot_victim(8, 3, 1 << 34);
    let opts = RunOptions {
        until: Some(RUN),
        progress: None,
    };
    let r = sim::run(t, p, &dag, &Faults::default(), opts).unwrap();
    assert_eq!(r.counters.drops.total(), 0, "credits: no drop");
    let hot_port = t.ports[t.host_port(HostId(8)).idx()].peer.idx();
    Trace {
        victim: port_gbps(&r, t.host_port(HostId(0)).idx()),
        hot: port_gbps(&r, hot_port),
        becns: r.counters.cnps,
    }
}

/// The mean over the last millisecond of the run (the state the control settled in).
fn settled(v: &[f64]) -> f64 {
    let n = (1_000_000_000 / SAMPLE.0) as usize;
    v[v.len() - n..].iter().sum::<f64>() / n as f64
}

/// Without CC the hotspot's backlog fills leaf B's input buffer from the spine and the victim
/// is blocked behind it (head-of-line blocking); with IB CC the hotspot's senders are throttled
/// by their CCT, the backlog drains and the victim gets most of its max-min share of leaf A's
/// uplink (Gran et al. 2010, Fig. 6), while the hotspot link stays busy.
#[test]
fn ib_cc_lets_the_victim_recover() {
    let t = two_leaves(8, RATE, Time::from_ns(100));
    let payload = RATE.as_gbps_f64() * ndr(false).payload_efficiency();
    // Max-min: the hotspot's 9 senders get 1/9 each, the victim the rest of A's uplink.
    let fair = payload * (1.0 - 3.0 / 9.0);
    let off = hotspot_run(&t, &ndr(false));
    let on = hotspot_run(&t, &ndr(true));
    let (v_off, v_on) = (settled(&off.victim), settled(&on.victim));
    let (h_off, h_on) = (settled(&off.hot), settled(&on.hot));
    let recovered_us = on
        .victim
        .iter()
        .position(|&g| g >= 0.5 * fair)
        .map(|i| i as u64 * 100);
    eprintln!(
        "victim: IB CC off {v_off:.1} Gb/s, on {v_on:.1} Gb/s (max-min share {fair:.1}); \
         hotspot: off {h_off:.1}, on {h_on:.1} Gb/s; victim above half its share after \
         {recovered_us:?} us; {} BECNs",
        on.becns
    );
    eprintln!(
        "victim with CC per {} us: {:.0?}",
        SAMPLE.0 / 1_000_000,
        on.victim
    );
    assert!(
        v_off < 0.25 * fair,
        "without CC the victim is blocked: {v_off:.1}"
    );
    assert!(
        v_on > 0.6 * fair,
        "with CC the victim recovers: {v_on:.1} of {fair:.1}"
    );
    assert!(
        h_on > 0.95 * payload,
        "the hotspot link stays busy: {h_on:.1}"
    );
    assert!(on.becns > 0);
}

/// `examples/ib-congestion-spreading.toml` as `fabricsim sim` runs it: the victim is blocked
/// without IB CC and recovers with the ib-ndr `[ib_cc]` settings; a misplaced
/// `ib_cc_profile` is an error naming the key.
#[test]
fn the_ib_congestion_spreading_example_shows_the_recovery() {
    use fabricsim::scenario::{Scenario, sim::build};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let path = dir.join("ib-congestion-spreading.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let victim_gbps = |text: &str| {
        let sc = Scenario::parse("ib-congestion-spreading.toml", text).unwrap();
        let s = build(&sc, &dir, None).unwrap();
        let opts = RunOptions {
            until: s.until,
            ..RunOptions::default()
        };
        let r = sim::run(&s.net.topo, &s.params, &s.dag, &s.faults, opts).unwrap();
        assert_eq!(r.counters.drops.total(), 0);
        let iv = r.series.as_ref().unwrap().interval_ps;
        let v = port_gbps(&r, s.net.topo.host_port(HostId(0)).idx());
        let n = (1_000_000_000 / iv) as usize;
        v[v.len() - n..].iter().sum::<f64>() / n as f64
    };
    let on = victim_gbps(&text);
    let off_text = text.replace("ib_cc_profile = \"ib-ndr\"\n", "");
    assert_ne!(off_text, text);
    let off = victim_gbps(&off_text);
    eprintln!("example: victim over the last ms, IB CC off {off:.1} Gb/s, on {on:.1} Gb/s");
    // The max-min share is 2/3 of the 400G payload rate (265 Gb/s).
    let fair = 265.0;
    assert!(
        off < 0.25 * fair && on > 0.6 * fair,
        "off {off:.1}, on {on:.1}"
    );

    let bad = text.replace("fabric = \"ib\"", "fabric = \"roce\"");
    let sc = Scenario::parse("bad.toml", &bad).unwrap();
    let e = build(&sc, &dir, None).unwrap_err();
    assert_eq!(e.key, "sim.ib_cc_profile", "{e}");
}
