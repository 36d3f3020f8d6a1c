//! An unstable leaf-spine link on every family, RoCE (PFC, ECMP), IB (credits, adaptive
//! routing) and UEC (no flow control, spraying, trimming, RUD): a flapping link
//! (`[[faults.link]] flap_period`, `flap_down`, `flaps`) and a gray one (silent random drops,
//! `loss_rate`); what each drops, which ports it pauses or stalls and for how long, and how much
//! the flows that never cross the link (victims) slow down. The claim it tests: "at 100G/200G per
//! lane, link instability triggers PFC storms" (issue #29).

use fabricsim::scenario::sim::SimSetup;
use fabricsim::sim::{RoutePolicy, RunResult, SprayPick};
use fabricsim_cases::sim_util::{run_setup as run, setup};

const FLAPS: u64 = 4;
const PERIOD_PS: u64 = 60_000_000;
/// The gray link's silent drop rate per packet, both ways.
const GRAY: f64 = 1e-3;
/// A fabric of the tables: its label, profile, and the spraying pick set over the profile's.
struct Family {
    label: &'static str,
    profile: &'static str,
    pick: Option<SprayPick>,
}

const fn family(label: &'static str, profile: &'static str, pick: Option<SprayPick>) -> Family {
    Family {
        label,
        profile,
        pick,
    }
}

/// Every family, and UEC with REPS (path-aware spraying, `route::reps`) as well as the profile's
/// oblivious random spraying.
const FAMILIES: [Family; 4] = [
    family("roce-400g", "roce-400g", None),
    family("ib-ndr", "ib-ndr", None),
    family("uec-400g", "uec-400g", None),
    family("uec-400g REPS", "uec-400g", Some(SprayPick::Reps)),
];

fn of(label: &str) -> &'static Family {
    FAMILIES.iter().find(|f| f.label == label).unwrap()
}

fn scenario(profile: &str, faults: &str) -> String {
    format!(
        "[cluster]\ngpus = 256\n[fabric]\nprofile = \"{profile}\"\n\
         [traffic]\nkind = \"permutation\"\nbytes = \"1MB\"\n{faults}"
    )
}

/// Ports that were paused (PFC) or waited for credits (IB): how many, the total and the longest
/// of that time, ps (none on a fabric without link-level flow control, UEC).
fn spread(r: &RunResult) -> (usize, u64, u64) {
    let Some(fc) = r.flow_control.as_ref() else {
        return (0, 0, 0);
    };
    let t = |p: &fabricsim::sim::results::PortFc| p.paused_ps + p.credit_stall_ps;
    (
        fc.ports.iter().filter(|p| t(p) > 0).count(),
        fc.ports.iter().map(t).sum(),
        fc.ports.iter().map(t).max().unwrap_or(0),
    )
}

/// The first leaf-spine link of the plan.
fn fabric_link(s: &SimSetup) -> usize {
    s.net.topo.links.iter().position(|l| l.tier == 2).unwrap()
}

fn flapping(link: usize) -> String {
    format!(
        "[faults]\n[[faults.link]]\nlink = {link}\ndown_at = \"10us\"\n\
         flap_period = \"60us\"\nflap_down = \"20us\"\nflaps = {FLAPS}\n"
    )
}

/// A gray link: up all the time, silently losing `GRAY` of the packets each way.
fn gray(link: usize) -> String {
    format!("[faults]\n[[faults.link]]\nlink = {link}\nloss_rate = {GRAY}\n")
}

/// Per message of `s`: whether any of its paths may cross leaf-spine `link` (IB's adaptive
/// routing picks an uplink per packet, ECMP one per QP): its source and destination sit under
/// different leaves, one of them the link's. The others are the victims.
fn may_cross(s: &SimSetup, link: usize) -> Vec<bool> {
    let topo = &s.net.topo;
    let node = |p: fabricsim::topology::PortId| topo.ports[p.idx()].node;
    let leaf = node(topo.links[link].ends[0]);
    // Each NIC's leaf: the upper end of its tier-1 link.
    let mut leaf_of = vec![None; topo.nodes.len()];
    for l in topo.links.iter().filter(|l| l.tier == 1) {
        leaf_of[node(l.ends[0]).idx()] = Some(node(l.ends[1]));
    }
    let of = |h: fabricsim::topology::HostId| leaf_of[topo.nics[h.idx()].idx()].unwrap();
    s.dag
        .messages
        .iter()
        .map(|m| {
            let (a, b) = (of(m.src), of(m.dst));
            a != b && (a == leaf || b == leaf)
        })
        .collect()
}

/// Nearest-rank percentile `q` of `v` (sorted here).
fn pct(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((q * v.len() as f64).ceil() as usize).max(1) - 1]
}

/// One run on `profile` with a fault on the link and the same run without it.
struct Runs {
    flap: SimSetup,
    link: usize,
    calm: RunResult,
    flapped: RunResult,
}

fn calm_and_flapping(label: &str) -> Runs {
    calm_and(of(label), flapping)
}

/// `f`'s fabric built from its profile, with `f`'s spraying pick.
fn built(f: &Family, faults: &str) -> SimSetup {
    let mut s = setup(&scenario(f.profile, faults));
    if let (Some(pick), RoutePolicy::Spray(spray)) = (f.pick, &mut s.params.routing) {
        spray.pick = pick;
    }
    s
}

/// `f`'s run without faults and with `fault` (the `[faults]` text for a link) on its first
/// leaf-spine link.
fn calm_and(f: &Family, fault: fn(usize) -> String) -> Runs {
    let calm = built(f, "");
    let link = fabric_link(&calm);
    let flap = built(f, &fault(link));
    let (a, b) = (run(&calm), run(&flap));
    Runs {
        flap,
        link,
        calm: a,
        flapped: b,
    }
}

impl Runs {
    /// The victims' slowdowns (FCT with the flap / without), and how many messages may cross.
    fn victims(&self) -> (Vec<f64>, usize) {
        let cross = may_cross(&self.flap, self.link);
        let slow: Vec<f64> = self
            .flapped
            .messages
            .iter()
            .zip(&self.calm.messages)
            .filter(|(m, _)| !cross[m.id as usize])
            .map(|(b, a)| b.fct_ps.unwrap() as f64 / a.fct_ps.unwrap() as f64)
            .collect();
        (slow, cross.iter().filter(|&&c| c).count())
    }
}

#[test]
fn a_flap_drops_what_is_on_the_link_and_the_lost_tails_wait_for_one_ack_timeout() {
    for profile in ["roce-400g", "ib-ndr"] {
        let Runs {
            flap: s,
            calm,
            flapped: flap,
            ..
        } = calm_and_flapping(profile);
        assert_eq!(calm.counters.drops.link_down, 0);
        assert!(flap.counters.drops.link_down > 0, "{profile}");
        assert!(flap.counters.timeouts > 0, "{profile}");
        // Local repair (1-2 ms) is slower than the 20 us outages: routing never moves, and a
        // QP whose last packets were on the link learns of it only from its timer (IBA Vol. 1
        // 9.7.6.1.3). The link is up long before the timer fires, so one resend completes it:
        // every message finishes within two timeouts, none exhausts its retries.
        let rto = s.params.ack_timeout().ps();
        let max = flap.summary.max_fct_ps.unwrap();
        assert!(max >= rto && max < 2 * rto, "{profile}: {max}");
        assert!(calm.summary.max_fct_ps.unwrap() < rto / 1000, "{profile}");
        assert_eq!(flap.counters.qp_errors, 0, "{profile}");
        assert_eq!(flap.summary.messages_completed, 256, "{profile}");
        // The other flows (the median one never meets the link) are not sped up by it.
        assert!(
            flap.summary.fct_p50_ps >= calm.summary.fct_p50_ps,
            "{profile}"
        );
    }
}

/// The mechanism behind the 5 QPs that once failed on ib-ndr: the leaf drops what it routes to
/// the down link, and those packets' credits must come back to the NIC that sent them (IBA
/// Vol. 1 7.9.4). When they did not, the 20 us outages drained every credit of 5 NIC uplinks
/// for good; the QPs on them resent into a stalled port until their 7 retries ran out.
#[test]
fn a_flap_leaves_no_port_waiting_for_credits_after_it() {
    let r = calm_and_flapping("ib-ndr");
    let fc = r.flapped.flow_control.as_ref().unwrap();
    assert_eq!(fc.kind, "credits");
    assert_eq!(spread(&r.calm).0, 0);
    for p in &fc.ports {
        assert!(
            p.credit_stall_ps < FLAPS * PERIOD_PS,
            "port {} waited {} ps for credits",
            p.port,
            p.credit_stall_ps
        );
    }
    assert!(r.flapped.counters.drops.link_down > 0);
}

/// The flows that cannot meet the link lose nothing: none waits for a timer, and neither
/// family's flow control carries the flap to them (no pause, no credit wait).
#[test]
fn the_victims_wait_for_no_timer_on_either_family() {
    for profile in ["roce-400g", "ib-ndr"] {
        let r = calm_and_flapping(profile);
        let rto = r.flap.params.ack_timeout().ps();
        let cross = may_cross(&r.flap, r.link);
        let victims = r.flapped.messages.iter().filter(|m| !cross[m.id as usize]);
        let slowest = victims.map(|m| m.fct_ps.unwrap()).max().unwrap();
        assert!(slowest < rto / 1000, "{profile}: {slowest}");
        let (mut slow, _) = r.victims();
        assert!(pct(&mut slow, 1.0) < 2.0, "{profile}");
        assert_eq!(spread(&r.flapped).0, 0, "{profile}");
    }
}

/// UEC on the flapping link: no link-level flow control to carry it anywhere; a dead link drops
/// what is sprayed onto it (trimming acts on a full queue, not a down link: nothing is trimmed,
/// nothing dropped at a buffer), and RUD resends each loss at its own 65.5 us timer, so every
/// message ends within one timer of the last outage (a resend sprayed into a later outage waits
/// again, hence the bound from the last one). REPS stops recycling the entropies that lost
/// packets and drifts off the link: fewer packets meet it than under oblivious spraying.
#[test]
fn uec_resends_what_a_flap_drops_within_one_short_timer_of_its_end() {
    let last_up_ps = 10_000_000 + (FLAPS - 1) * PERIOD_PS + 20_000_000;
    let mut dropped = Vec::new();
    for label in ["uec-400g", "uec-400g REPS"] {
        let r = calm_and_flapping(label);
        let c = &r.flapped.counters;
        assert!(c.drops.link_down > 0 && c.timeouts > 0, "{label}");
        assert_eq!(
            (c.trimmed, c.drops.buffer, c.qp_errors),
            (0, 0, 0),
            "{label}"
        );
        assert_eq!(r.flapped.summary.messages_completed, 256, "{label}");
        let rto = r.flap.params.ack_timeout().ps();
        let calm = r.calm.summary.max_fct_ps.unwrap();
        let max = r.flapped.summary.max_fct_ps.unwrap();
        assert!(max <= last_up_ps + rto + calm, "{label}: {max}");
        // The victims meet no timer.
        let cross = may_cross(&r.flap, r.link);
        let victims = r.flapped.messages.iter().filter(|m| !cross[m.id as usize]);
        assert!(
            victims.map(|m| m.fct_ps.unwrap()).max().unwrap() < rto,
            "{label}"
        );
        dropped.push(c.drops.link_down);
    }
    assert!(
        dropped[1] < dropped[0],
        "REPS {} vs random {}",
        dropped[1],
        dropped[0]
    );
}

/// A gray link (silent drops at `GRAY` per packet) on every family pauses no port, stalls no
/// credit and leaves the victims at their pace; no timer fires without a loss, no QP fails. A
/// UEC receiver's SACKs of sprayed, reordered packets are no NAKs: its only NAKs are trims'.
#[test]
fn a_gray_link_costs_only_the_flows_on_it_on_every_family() {
    for f in &FAMILIES {
        let r = calm_and(f, gray);
        let c = &r.flapped.counters;
        let label = f.label;
        assert!(c.drops.corruption > 0, "{label}");
        assert_eq!(c.drops.link_down, 0, "{label}");
        assert_eq!(spread(&r.flapped), (0, 0, 0), "{label}");
        let (mut slow, _) = r.victims();
        assert!(pct(&mut slow, 1.0) < 1.01, "{label}");
        assert!(c.timeouts <= c.drops.corruption, "{label}");
        assert_eq!(c.qp_errors, 0, "{label}");
        assert_eq!(r.flapped.summary.messages_completed, 256, "{label}");
        if f.profile == "uec-400g" {
            assert_eq!(c.naks, c.trimmed, "{label}");
            assert_eq!(r.calm.counters.naks, r.calm.counters.trimmed, "{label}");
        }
    }
}

#[test]
fn a_flap_pauses_no_roce_port() {
    // A down link drops what is queued for it, it does not hold it: no PFC pause backs up
    // from it, on RoCE (DCQCN on) not one port is paused.
    let r = calm_and_flapping("roce-400g");
    assert_eq!(spread(&r.calm), (0, 0, 0));
    assert_eq!(spread(&r.flapped), (0, 0, 0));
    assert_eq!(r.flapped.counters.pause_frames, 0);
}

/// The tables of docs/reliability.md: `cargo test -p fabricsim --test sim_flap -- --ignored
/// --nocapture`.
#[test]
#[ignore]
fn print_flap_effects() {
    let us = |ps: u64| ps as f64 / 1e6;
    for (name, fault) in [
        ("flapping", flapping as fn(usize) -> String),
        ("gray", gray),
    ] {
        println!("\n{name} link");
        println!(
            "| profile | ports paused / stalled | total, longest (us) | victims | victims' slowdown p50, p99 | may cross: median, max FCT (us) | link-down drops | lost on the link | trimmed | resent | NAKs | ACK timeouts | QP errors |"
        );
        for f in &FAMILIES {
            let profile = f.label;
            let r = calm_and(f, fault);
            let (ports, total, longest) = spread(&r.flapped);
            let (mut slow, crossing) = r.victims();
            let n = slow.len();
            let (p50, p99) = (pct(&mut slow, 0.5), pct(&mut slow, 0.99));
            let cross = may_cross(&r.flap, r.link);
            let mut fct: Vec<f64> = r
                .flapped
                .messages
                .iter()
                .filter(|m| cross[m.id as usize])
                .map(|m| m.fct_ps.unwrap() as f64)
                .collect();
            let c = &r.flapped.counters;
            println!(
                "| {profile} | {ports} | {:.1}, {:.1} | {n} | {p50:.4}, {p99:.4} | {crossing}: {:.1}, {:.1} | {} | {} | {} | {} | {} | {} | {} |",
                us(total),
                us(longest),
                pct(&mut fct, 0.5) / 1e6,
                pct(&mut fct, 1.0) / 1e6,
                c.drops.link_down,
                c.drops.corruption,
                c.trimmed,
                c.retransmitted_packets,
                c.naks,
                c.timeouts,
                c.qp_errors,
            );
        }
    }
}
