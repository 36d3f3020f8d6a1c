//! The physical-layer and reliability sweep axes (`compare::sweep::Param`: ber, mtbf_scale,
//! optics, checkpoint_interval, rate_gbps, lane_ber): each moves the figures it acts on and leaves the others alone,
//! on the built-in comparison's 256-GPU cluster, one seed.

use fabricsim::compare::model::default_scenario;
use fabricsim::compare::sweep::{Point, PointResult, SweepAxis, expand, run};
use fabricsim::compare::variant::Variant;
use fabricsim::engine_choice::EngineChoice;

fn roce() -> Variant {
    Variant::swept("roce-400g", EngineChoice::Packet)
}

/// The points of one axis `text` (`NAME=V1,V2`) and their results, in order.
fn sweep(text: &str) -> Vec<PointResult> {
    let axis = SweepAxis::parse("--param", text).unwrap();
    let r = run(
        &default_scenario(),
        &roce(),
        &[1],
        &expand(&[axis]),
        2,
        false,
        &|_| (),
    );
    assert!(r.iter().all(|x| x.error.is_none()), "{r:?}");
    r
}

/// The base scenario's own point (no axis).
fn base() -> PointResult {
    let p = Point {
        id: 0,
        values: Vec::new(),
    };
    run(&default_scenario(), &roce(), &[1], &[p], 1, false, &|_| ())
        .pop()
        .unwrap()
}

fn step(r: &PointResult) -> f64 {
    r.step_time_s.unwrap().mean
}

fn good_usd(r: &PointResult) -> f64 {
    r.usd_per_million_good_tokens.unwrap().mean
}

/// A pre-FEC BER past the FEC's comfort loses frames: the step slows by the loss's expected
/// cost, exactly as a per-packet loss rate equal to RS(544,514)'s frame loss of the profile's MTU
/// frame would (the same costing); the plan (capex, power, ETTR) does not move.
#[test]
fn ber_raises_the_step_as_its_post_fec_frame_loss_and_nothing_else() {
    let r = sweep("ber=0,1e-3");
    assert!(
        step(&r[1]) > step(&r[0]) * 1.001,
        "{} {}",
        step(&r[1]),
        step(&r[0])
    );
    assert!(r[0].engine.as_ref().unwrap().loss.is_none());
    assert!(r[1].engine.as_ref().unwrap().loss.is_some());
    for f in [
        |x: &PointResult| x.network_capex_usd,
        |x: &PointResult| x.network_power_kw,
        |x: &PointResult| x.ettr,
        |x: &PointResult| x.interruptions_per_day,
    ] {
        assert_eq!(f(&r[0]), f(&r[1]));
    }
    // The frame loss the BER means for this profile's MTU frame.
    let s = default_scenario();
    let (design, _, _) = fabricsim::plan::run(&s).unwrap();
    let frame = fabricsim::compare::engine::params(&roce(), &design, 1)
        .unwrap()
        .mtu_frame_wire_bytes();
    let p = fabricsim_mech::fec::KP4.frame_loss(1e-3, frame);
    assert!(p > 1e-4 && p < 1e-2, "{p}");
    let by_rate = sweep(&format!("loss_rate={p}"));
    assert_eq!(by_rate[0].step_time_s, r[1].step_time_s);
}

/// Parts failing twice as often interrupt the job twice as often: ETTR falls and the cost per
/// token trained between interruptions rises; the step, its cost per token and the plan's capex
/// stay.
#[test]
fn a_lower_mtbf_lowers_ettr_and_raises_the_cost_per_good_token_only() {
    let r = sweep("mtbf_scale=1,0.5");
    let (a, b) = (&r[0], &r[1]);
    let per_day = |x: &PointResult| x.interruptions_per_day.unwrap();
    assert!((per_day(b) / per_day(a) - 2.0).abs() < 1e-9);
    assert!(b.ettr.unwrap() < a.ettr.unwrap());
    assert!(good_usd(b) > good_usd(a));
    assert_eq!(a.step_time_s, b.step_time_s);
    assert_eq!(a.usd_per_million_tokens, b.usd_per_million_tokens);
    assert_eq!(a.network_capex_usd, b.network_capex_usd);
    // The default scale is the table's own.
    assert_eq!(base().ettr, a.ettr);
}

/// Linear-drive modules drop the DSP: the network draws less power and costs another capex; the
/// step does not change.
#[test]
fn lpo_optics_lower_network_power_and_change_capex() {
    let r = sweep("optics=dsp,lpo");
    let (dsp, lpo) = (&r[0], &r[1]);
    assert!(lpo.network_power_kw.unwrap() < dsp.network_power_kw.unwrap());
    assert_ne!(lpo.network_capex_usd, dsp.network_capex_usd);
    assert_eq!(lpo.step_time_s, dsp.step_time_s);
}

/// Daly's interval maximises ETTR: checkpointing far more or far less often trains less between
/// the same interruptions.
#[test]
fn a_checkpoint_interval_away_from_the_optimum_lowers_ettr() {
    let b = base();
    let r = sweep("checkpoint_interval=60s,86400s");
    for x in &r {
        assert!(
            x.ettr.unwrap() < b.ettr.unwrap(),
            "{:?} {:?}",
            x.ettr,
            b.ettr
        );
        assert!(good_usd(x) > good_usd(&b));
        assert_eq!(x.interruptions_per_day, b.interruptions_per_day);
        assert_eq!(x.step_time_s, b.step_time_s);
    }
}

/// A degraded NIC link paces the synchronous step: GPU 0's 400G link trained down to 200G and
/// then 100G lengthens the step each time; the plan (capex, power, interruptions, ETTR) does
/// not move. A rate at or above the link's is refused before anything runs.
#[test]
fn a_degraded_nic_link_slows_the_step_and_nothing_else() {
    let b = base();
    let r = sweep("rate_gbps=200,100");
    assert!(
        step(&r[0]) > step(&b) * 1.001,
        "{} {}",
        step(&r[0]),
        step(&b)
    );
    assert!(
        step(&r[1]) > step(&r[0]) * 1.001,
        "{} {}",
        step(&r[1]),
        step(&r[0])
    );
    for x in &r {
        assert_eq!(x.network_capex_usd, b.network_capex_usd);
        assert_eq!(x.network_power_kw, b.network_power_kw);
        assert_eq!(x.interruptions_per_day, b.interruptions_per_day);
        assert_eq!(x.ettr, b.ettr);
    }
    let axis = SweepAxis::parse("--param", "rate_gbps=400").unwrap();
    let e =
        fabricsim::compare::sweep::check(&default_scenario(), &roce(), &expand(&[axis]), "--param")
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("--param") && e.contains("rate_gbps=400") && e.contains("1 to 399"),
        "{e}"
    );
}

/// Four lanes at one BER are that BER on every link (the step within 1e-6); one bad lane of
/// four loses frames (the step slows, a loss is costed) and the plan does not move. A lane
/// count the 400G link does not have is refused before anything runs.
#[test]
fn lane_bers_cost_their_codeword_loss_like_ber_and_nothing_else() {
    let even = sweep("lane_ber=1e-3/1e-3/1e-3/1e-3");
    let one = sweep("ber=1e-3");
    assert!(
        (step(&even[0]) / step(&one[0]) - 1.0).abs() < 1e-6,
        "{} {}",
        step(&even[0]),
        step(&one[0])
    );
    let b = base();
    let bad = sweep("lane_ber=1e-8/1e-8/4e-3/1e-8");
    assert!(
        step(&bad[0]) > step(&b) * 1.001,
        "{} {}",
        step(&bad[0]),
        step(&b)
    );
    assert!(bad[0].engine.as_ref().unwrap().loss.is_some());
    assert_eq!(bad[0].ettr, b.ettr);
    assert_eq!(bad[0].network_capex_usd, b.network_capex_usd);
    for text in ["lane_ber=1e-8/1e-8/1e-8", "lane_ber=1e-8/0.6"] {
        assert!(SweepAxis::parse("--param", text).is_err(), "{text}");
    }
    let axis = SweepAxis::parse("--param", "lane_ber=1e-8").unwrap();
    let e =
        fabricsim::compare::sweep::check(&default_scenario(), &roce(), &expand(&[axis]), "--param")
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("lane_ber=1e-8") && e.contains("4 or 2 BERs"),
        "{e}"
    );
}
