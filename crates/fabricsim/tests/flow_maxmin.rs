//! Max-min fair rates: hand-computed cases (Bertsekas & Gallager, "Data Networks", 6.5.2) and
//! incremental solves against from-scratch ones on random cases.

use fabricsim::flow::{MaxMin, NO_CAP, Routes};
use fabricsim::rng::{Rng, Stream};

const G: u64 = 1_000_000_000;

/// Solves `flows` (route links, cap) on `caps` from scratch; returns the rates.
fn solve(caps: &[u64], flows: &[(&[u32], u64)]) -> Vec<u64> {
    solve_with(caps, flows, false)
}

/// `solve` with per-input-port service of every link (`MaxMin::with_port_service`): a flow's
/// port on a link is the link before it on its route.
fn solve_per_port(caps: &[u64], flows: &[(&[u32], u64)]) -> Vec<u64> {
    solve_with(caps, flows, true)
}

fn solve_with(caps: &[u64], flows: &[(&[u32], u64)], ports: bool) -> Vec<u64> {
    let mut routes = Routes::new();
    for (links, _) in flows {
        routes.push(links);
    }
    let mut s = MaxMin::new(caps.to_vec(), routes, flows.len());
    if ports {
        s = s.with_port_service(|_| true);
    }
    for (i, &(_, cap)) in flows.iter().enumerate() {
        s.add(i as u32, i as u32, cap);
    }
    let mut changed = Vec::new();
    s.resolve(&mut changed);
    (0..flows.len() as u32).map(|f| s.rate(f)).collect()
}

#[test]
fn single_bottleneck_splits_evenly() {
    // One 100 Gb/s link, three flows: 100e9 / 3 = 33,333,333,333.33 -> 33,333,333,333 each.
    let r = solve(
        &[100 * G],
        &[(&[0], NO_CAP), (&[0], NO_CAP), (&[0], NO_CAP)],
    );
    assert_eq!(r, vec![33_333_333_333; 3]);
}

#[test]
fn two_bottlenecks_in_series() {
    // Link A 100G, link B 40G. Flow 0 on A and B, flow 1 on A, flow 2 on B.
    // Shares: A 100/2 = 50, B 40/2 = 20 -> B saturates first: flows 0 and 2 at 20G.
    // A is left with 100 - 20 = 80G for flow 1 alone.
    let r = solve(
        &[100 * G, 40 * G],
        &[(&[0, 1], NO_CAP), (&[0], NO_CAP), (&[1], NO_CAP)],
    );
    assert_eq!(r, vec![20 * G, 80 * G, 20 * G]);
}

#[test]
fn parking_lot() {
    // Three 10G links in a row; a long flow crosses all three, one short flow on each link.
    // Every link has 2 flows: 10/2 = 5G for everyone (the classic parking-lot fair share).
    let r = solve(
        &[10 * G, 10 * G, 10 * G],
        &[
            (&[0, 1, 2], NO_CAP),
            (&[0], NO_CAP),
            (&[1], NO_CAP),
            (&[2], NO_CAP),
        ],
    );
    assert_eq!(r, vec![5 * G; 4]);
}

#[test]
fn parking_lot_with_a_crowded_first_link() {
    // L0 (10G) carries the long flow and two short ones; L1 (10G) the long flow and one short.
    // L0: 10e9 / 3 = 3,333,333,333 for its three flows (the long one included).
    // L1: 10e9 - 3,333,333,333 = 6,666,666,667 left for its short flow.
    let r = solve(
        &[10 * G, 10 * G],
        &[
            (&[0, 1], NO_CAP),
            (&[0], NO_CAP),
            (&[0], NO_CAP),
            (&[1], NO_CAP),
        ],
    );
    assert_eq!(
        r,
        vec![3_333_333_333, 3_333_333_333, 3_333_333_333, 6_666_666_667]
    );
}

#[test]
fn a_capped_flow_leaves_its_share_to_the_others() {
    // 100G link, three flows, one capped at 10G: the cap (10) is below the share (33.3), so
    // that flow gets 10G and the other two split 100 - 10 = 90: 45G each.
    let r = solve(
        &[100 * G],
        &[(&[0], 10 * G), (&[0], NO_CAP), (&[0], NO_CAP)],
    );
    assert_eq!(r, vec![10 * G, 45 * G, 45 * G]);
    // A cap above the fair share (50 > 33.3) does not bind.
    let r = solve(
        &[100 * G],
        &[(&[0], 50 * G), (&[0], NO_CAP), (&[0], NO_CAP)],
    );
    assert_eq!(r, vec![33_333_333_333; 3]);
}

#[test]
fn separate_components_do_not_interact() {
    // Link 0 (10G) with two flows: 5G each; link 1 (30G) with three flows: 10G each.
    let r = solve(
        &[10 * G, 30 * G],
        &[
            (&[0], NO_CAP),
            (&[1], NO_CAP),
            (&[0], NO_CAP),
            (&[1], NO_CAP),
            (&[1], NO_CAP),
        ],
    );
    assert_eq!(r, vec![5 * G, 10 * G, 5 * G, 10 * G, 10 * G]);
}

#[test]
fn per_port_service_shares_a_link_among_its_input_ports_first() {
    // Egress E (link 0, 100G) fed by two input links: X (link 1) carries one flow, Y (link 2)
    // three. Per port: E's level is 100 / 2 = 50G per port; Y's three flows are offered
    // floor(50e9 / 3) = 16,666,666,666 each, the lowest offer, and freeze; X's flow then
    // reaches its port's level, 50G, before E fills (100e9 - 49,999,999,998 = 50,000,000,002
    // left). Both ports are held at E, so the level stays 100 / 2 (E keeps 2 bit/s, the floor
    // of Y's share).
    let flows: [(&[u32], u64); 4] = [
        (&[1, 0], NO_CAP),
        (&[2, 0], NO_CAP),
        (&[2, 0], NO_CAP),
        (&[2, 0], NO_CAP),
    ];
    let caps = [100 * G, 100 * G, 100 * G];
    let r = solve_per_port(&caps, &flows);
    assert_eq!(
        r,
        vec![
            50_000_000_000,
            16_666_666_666,
            16_666_666_666,
            16_666_666_666
        ]
    );
    // Per flow (plain max-min): 100 / 4 = 25G each.
    assert_eq!(solve(&caps, &flows), vec![25 * G; 4]);
}

#[test]
fn per_port_service_gives_a_port_mates_unused_share_to_its_port_first() {
    // E (link 0, 100G) has ports X (link 1) and Y (link 2), 50G each. On X: flow 0, which
    // comes over Z (link 3, 10G), and flow 1; on Y: flows 2 and 3.
    // Offers: Z 10G to flow 0; X's port on E 50 / 2 = 25G, Y's 25G. Flow 0 freezes first at
    // 10G; X's port then offers flow 1 50 - 10 = 40G, Y's still 25G: flows 2, 3 freeze at
    // 25G, and E offers (100 - 10 - 50) / 1 = 40G to flow 1, as X's port does: flow 1 gets
    // 40G (link X: 10 + 40 = 50 of 100G, not full). Both ports held at E: the level stays 50G.
    let flows: [(&[u32], u64); 4] = [
        (&[3, 1, 0], NO_CAP),
        (&[1, 0], NO_CAP),
        (&[2, 0], NO_CAP),
        (&[2, 0], NO_CAP),
    ];
    let caps = [100 * G, 100 * G, 100 * G, 10 * G];
    assert_eq!(
        solve_per_port(&caps, &flows),
        vec![10 * G, 40 * G, 25 * G, 25 * G]
    );
    // Per flow: flow 0 10G, then E's 90G over three flows: 30G each.
    assert_eq!(solve(&caps, &flows), vec![10 * G, 30 * G, 30 * G, 30 * G]);
}

#[test]
fn per_port_service_hands_a_closed_ports_share_to_the_other_ports() {
    // E (link 0, 90G) has three ports: X (link 1; flow 0, which comes over Z, link 4, 10G),
    // Y (link 2; flow 1) and W (link 3; flows 2 and 3). First fill at the level 90 / 3 = 30G
    // per port: offers X 30, Y 30, W 15; Z offers 10. Flow 0 freezes at 10G (at Z: X is slack),
    // W's flows at 15G, flow 1 at 30G. Level of the held ports Y and W: (90 - 10) / 2 = 40G.
    // Second fill: flow 0 10G, W's flows 20G each, flow 1 40G (E offers (90 - 10 - 40) / 1 =
    // 40G too); the level stays (90 - 10) / 2 = 40G. Rates 10, 40, 20, 20 (E full at 90G).
    let flows: [(&[u32], u64); 4] = [
        (&[4, 1, 0], NO_CAP),
        (&[2, 0], NO_CAP),
        (&[3, 0], NO_CAP),
        (&[3, 0], NO_CAP),
    ];
    let caps = [90 * G, 100 * G, 100 * G, 100 * G, 10 * G];
    assert_eq!(
        solve_per_port(&caps, &flows),
        vec![10 * G, 40 * G, 20 * G, 20 * G]
    );
}

#[test]
fn per_port_service_is_plain_max_min_with_one_port_per_link() {
    // Every flow starts on the link it shares (its first hop: one port), so sharing per port
    // is sharing per flow: the parking lot with a crowded first link of
    // `parking_lot_with_a_crowded_first_link`, L0: 10e9 / 3, L1: 10e9 - 3,333,333,333.
    let flows: [(&[u32], u64); 4] = [
        (&[0, 1], NO_CAP),
        (&[0], NO_CAP),
        (&[0], NO_CAP),
        (&[1], NO_CAP),
    ];
    // On L1, the long flow comes from L0 and the short one starts there: two ports with one
    // flow each, the same split as per flow.
    assert_eq!(
        solve_per_port(&[10 * G, 10 * G], &flows),
        vec![3_333_333_333, 3_333_333_333, 3_333_333_333, 6_666_666_667]
    );
}

/// The max-min conditions (Bertsekas & Gallager, 6.5.2): feasible, and every flow is at its
/// cap or has a saturated link (saturated up to the integer floor: less than one bit/s per
/// flow left) on which no flow has a higher rate.
fn assert_max_min(caps: &[u64], flows: &[(Vec<u32>, u64)], active: &[bool], rate: &[u64]) {
    let nl = caps.len();
    let mut sum = vec![0u64; nl];
    let mut n = vec![0u64; nl];
    let mut max = vec![0u64; nl];
    for (f, (links, _)) in flows.iter().enumerate() {
        if !active[f] {
            continue;
        }
        for &l in links {
            sum[l as usize] += rate[f];
            n[l as usize] += 1;
            max[l as usize] = max[l as usize].max(rate[f]);
        }
    }
    for l in 0..nl {
        assert!(sum[l] <= caps[l], "link {l} over capacity");
    }
    for (f, (links, cap)) in flows.iter().enumerate() {
        if !active[f] {
            continue;
        }
        let bottlenecked = rate[f] == *cap
            || links.iter().any(|&l| {
                let l = l as usize;
                caps[l] - sum[l] < n[l] && rate[f] == max[l]
            });
        assert!(
            bottlenecked,
            "flow {f} (rate {}) has no bottleneck",
            rate[f]
        );
    }
}

/// Per-port max-min conditions (hierarchical max-min: a `served` link shares its capacity
/// max-min among its input ports, and each port's share max-min among its flows): feasible,
/// and every flow at its cap or with a bottleneck link: full, no flow of the flow's port
/// faster, and no port of the link with a larger total. Each holds up to the floors of the
/// integer shares: less than one bit/s per flow of the link left, slower than the port's
/// fastest by less than one bit/s per flow of the link, a port total within one bit/s per flow
/// and port of the largest. On a link with one port (every link not served), or whose ports
/// hold one flow each, these are the per-flow max-min conditions. Returns the flows that fail
/// them (printed).
fn assert_port_service(
    seed: u64,
    served: &[bool],
    caps: &[u64],
    flows: &[(Vec<u32>, u64)],
    active: &[bool],
    rate: &[u64],
) -> usize {
    use std::collections::BTreeMap;
    let nl = caps.len();
    let (mut sum, mut n) = (vec![0u64; nl], vec![0u64; nl]);
    // (link, port) -> (total, highest rate); per link: ports and the largest total.
    let mut port: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    let port_of = |links: &[u32], i: usize| {
        let from = if i == 0 || !served[links[i] as usize] {
            u32::MAX
        } else {
            links[i - 1]
        };
        (links[i], from)
    };
    for (f, (links, _)) in flows.iter().enumerate() {
        if !active[f] {
            continue;
        }
        for (i, &l) in links.iter().enumerate() {
            sum[l as usize] += rate[f];
            n[l as usize] += 1;
            let e = port.entry(port_of(links, i)).or_default();
            e.0 += rate[f];
            e.1 = e.1.max(rate[f]);
        }
    }
    let (mut ports, mut top) = (vec![0u64; nl], vec![0u64; nl]);
    for (&(l, _), &(total, _)) in &port {
        ports[l as usize] += 1;
        top[l as usize] = top[l as usize].max(total);
    }
    for l in 0..nl {
        assert!(sum[l] <= caps[l], "link {l} over capacity");
    }
    let full = |l: usize| caps[l] - sum[l] < n[l];
    let mut unfair = 0;
    for (f, (links, cap)) in flows.iter().enumerate() {
        if !active[f] {
            continue;
        }
        let fair = rate[f] == *cap
            || (0..links.len()).any(|i| {
                let l = links[i] as usize;
                let (total, high) = port[&port_of(links, i)];
                full(l) && high - rate[f] < n[l] && total + n[l] + ports[l] >= top[l]
            });
        if !fair {
            println!(
                "seed {seed}: flow {f} (rate {}) is not per-port max-min fair",
                rate[f]
            );
        }
        unfair += usize::from(!fair);
    }
    unfair
}

#[test]
fn incremental_equals_from_scratch_on_random_cases() {
    incremental_equals_from_scratch(Served::None);
}

#[test]
fn incremental_equals_from_scratch_with_per_port_service() {
    // As the flow engine serves ports (`fluid`): at the egresses to hosts (NICs). When
    // written: 23,787 of 23,787 flows per-port fair, at most 5 fills a solve (30 before the
    // levels' Aitken extrapolation); on 3,000 seeds (358,496 flows) all fair, at most 56 fills.
    let unfair = incremental_equals_from_scratch(Served::IntoHosts);
    assert_eq!(unfair, 0, "flows not per-port max-min fair");
}

#[test]
fn incremental_equals_from_scratch_with_every_link_served_per_port() {
    // Every link served per port: a flow crosses up to four links shared per port, whose
    // levels depend on one another; the fixed point can be missed (`flow::maxmin`). When
    // written: 23,779 of 23,787 flows per-port fair (one solve ended at the fill limit; 23,781
    // before the levels' Aitken extrapolation; over 3,000 seeds 358,400 of 358,496, 358,402
    // before).
    let unfair = incremental_equals_from_scratch(Served::Every);
    assert!(unfair <= 10, "{unfair} flows not per-port max-min fair");
}

/// Which links a property test serves per input port.
#[derive(Clone, Copy, PartialEq)]
enum Served {
    None,
    IntoHosts,
    Every,
}

/// Random routes over 4-23 links of random capacities.
fn random_links(rng: &mut Rng) -> (Vec<u64>, Vec<(Vec<u32>, u64)>) {
    let nl = 4 + rng.below(20) as usize;
    let caps: Vec<u64> = (0..nl).map(|_| (1 + rng.below(40)) * G).collect();
    let nf = 10 + rng.below(60) as usize;
    let flows = (0..nf)
        .map(|_| {
            let len = 1 + rng.below(4) as usize;
            let mut links: Vec<u32> = Vec::new();
            while links.len() < len.min(nl) {
                let l = rng.below(nl as u64) as u32;
                if !links.contains(&l) {
                    links.push(l);
                }
            }
            (links, random_cap(rng))
        })
        .collect();
    (caps, flows)
}

fn random_cap(rng: &mut Rng) -> u64 {
    if rng.below(4) == 0 {
        (1 + rng.below(20)) * G / 2
    } else {
        NO_CAP
    }
}

/// Random up/down routes in a 2-tier Clos (as a fabric's routing gives them): 2-4 leaves of
/// 2-4 hosts, 1-3 spines, random link capacities; a flow between hosts on one leaf crosses
/// the host's up link and the other's down link, else also a random spine. Serves the down
/// links to hosts per port, or `every` link.
fn random_clos(rng: &mut Rng, every: bool) -> (Vec<u64>, Vec<(Vec<u32>, u64)>, Vec<bool>) {
    let (leaves, hosts, spines) = (
        2 + rng.below(3) as u32,
        2 + rng.below(3) as u32,
        1 + rng.below(3) as u32,
    );
    let n_hosts = leaves * hosts;
    // Links: host up (n_hosts), host down (n_hosts), leaf up (leaves x spines), leaf down.
    let up = |h: u32| h;
    let down = |h: u32| n_hosts + h;
    let leaf_up = |l: u32, s: u32| 2 * n_hosts + l * spines + s;
    let leaf_down = |l: u32, s: u32| 2 * n_hosts + leaves * spines + l * spines + s;
    let nl = (2 * n_hosts + 2 * leaves * spines) as usize;
    let caps: Vec<u64> = (0..nl).map(|_| (1 + rng.below(40)) * G).collect();
    let nf = 10 + rng.below(60) as usize;
    let flows = (0..nf)
        .map(|_| {
            let a = rng.below(n_hosts as u64) as u32;
            let b = (a + 1 + rng.below(n_hosts as u64 - 1) as u32) % n_hosts;
            let (la, lb) = (a / hosts, b / hosts);
            let links = if la == lb {
                vec![up(a), down(b)]
            } else {
                let s = rng.below(spines as u64) as u32;
                vec![up(a), leaf_up(la, s), leaf_down(lb, s), down(b)]
            };
            (links, random_cap(rng))
        })
        .collect();
    let served = (0..nl as u32)
        .map(|l| every || (n_hosts..2 * n_hosts).contains(&l))
        .collect();
    (caps, flows, served)
}

/// Random routes (a flow's port on a link: the link before it), random starts and finishes:
/// every incremental solve equals a from-scratch one and meets the max-min conditions; with
/// port service (random Clos routes), per port. Returns the flows (summed over solves) that
/// are not per-port max-min fair.
/// One random step of a run: start a few flows never started, or (half the steps) only finish
/// a few active ones, so pure finishes take the thresholded path.
fn churn(
    rng: &mut Rng,
    inc: &mut MaxMin,
    flows: &[(Vec<u32>, u64)],
    started: &mut [bool],
    active: &mut [bool],
) {
    let finish_only = rng.below(2) == 0;
    for f in 0..flows.len() {
        if !started[f] && !finish_only && rng.below(5) == 0 {
            started[f] = true;
            active[f] = true;
            inc.add(f as u32, f as u32, flows[f].1);
        } else if active[f] && rng.below(6) == 0 {
            active[f] = false;
            inc.remove(f as u32);
        }
    }
}

fn incremental_equals_from_scratch(mode: Served) -> usize {
    let ports = mode != Served::None;
    let (mut checked, mut unfair, mut rounds) = (0, 0, 0);
    for seed in 0..200u64 {
        let mut rng = Rng::stream(seed, Stream::Test(77), 0);
        let (caps, flows, served) = if ports {
            random_clos(&mut rng, mode == Served::Every)
        } else {
            let (caps, flows) = random_links(&mut rng);
            let served = vec![false; caps.len()];
            (caps, flows, served)
        };
        let with = |s: MaxMin| {
            if ports {
                s.with_port_service(|l| served[l as usize])
            } else {
                s
            }
        };
        let nf = flows.len();
        let mut routes = Routes::new();
        for (links, _) in &flows {
            routes.push(links);
        }
        let mut inc = with(MaxMin::new(caps.clone(), routes.clone(), nf)).with_cache(1 << 16);
        let mut active = vec![false; nf];
        let mut started = vec![false; nf];
        let mut changed = Vec::new();
        for _batch in 0..12 {
            churn(&mut rng, &mut inc, &flows, &mut started, &mut active);
            changed.clear();
            inc.resolve(&mut changed);
            let mut scratch = with(MaxMin::new(caps.clone(), routes.clone(), nf));
            for f in 0..nf {
                if active[f] {
                    scratch.add(f as u32, f as u32, flows[f].1);
                }
            }
            let mut c2 = Vec::new();
            scratch.resolve(&mut c2);
            let got: Vec<u64> = (0..nf as u32)
                .map(|f| if active[f as usize] { inc.rate(f) } else { 0 })
                .collect();
            let want: Vec<u64> = (0..nf as u32)
                .map(|f| {
                    if active[f as usize] {
                        scratch.rate(f)
                    } else {
                        0
                    }
                })
                .collect();
            assert_eq!(got, want, "seed {seed}");
            if ports {
                unfair += assert_port_service(seed, &served, &caps, &flows, &active, &want);
                checked += active.iter().filter(|&&a| a).count();
                let st = scratch.stats();
                rounds = rounds.max(st.port_rounds + 1);
            } else {
                assert_max_min(&caps, &flows, &active, &got);
            }
        }
    }
    if ports {
        let fair = checked - unfair;
        println!("per-port max-min fair: {fair} of {checked} flows; at most {rounds} fills");
    }
    unfair
}

#[test]
fn pure_finishes_resolve_only_the_flows_at_or_above_the_finished_rate() {
    // Link 0 (10G): flows 0, 1 (5G each). Link 1 (40G): flows 2, 3 and 4 -> 40/3 each.
    // Flow 2 also crosses link 2 (100G) with flow 5, which gets 100 - 13.33 = 86.67G.
    // Finishing flow 3 (rate 13.33G) can change only flows at >= 13.33G reachable from link 1:
    // flows 2, 4 and (through link 2) 5; flows 0 and 1 are in another component.
    let caps = [10 * G, 40 * G, 100 * G];
    let flows: [&[u32]; 6] = [&[0], &[0], &[1, 2], &[1], &[1], &[2]];
    let mut routes = Routes::new();
    for l in flows {
        routes.push(l);
    }
    let mut s = MaxMin::new(caps.to_vec(), routes, flows.len());
    for f in 0..6 {
        s.add(f, f, NO_CAP);
    }
    let mut ch = Vec::new();
    s.resolve(&mut ch);
    assert_eq!(s.rate(2), 13_333_333_333);
    assert_eq!(s.rate(5), 86_666_666_667);
    let before = s.stats().flows_solved;
    s.remove(3);
    ch.clear();
    s.resolve(&mut ch);
    // Link 1 now has flows 2 and 4: 20G each; link 2 leaves 80G to flow 5.
    assert_eq!((s.rate(2), s.rate(4), s.rate(5)), (20 * G, 20 * G, 80 * G));
    assert_eq!(s.stats().flows_solved - before, 3);
    let mut ids: Vec<u32> = ch.iter().map(|c| c.0).collect();
    ids.sort();
    assert_eq!(ids, vec![2, 4, 5]);
}

#[test]
fn starts_resolve_only_the_flows_at_or_above_the_new_flows_bound() {
    // Link 0 (10G): flows 0-9, 1G each. Flow 0 also crosses link 1 (100G) with flow 10, which
    // gets 100 - 1 = 99G: one component of 11 flows. Flow 11 starts on link 1: its rate is at
    // least 100G / 3 flows = 33.33G (no link fills below C/n), so flows 0-9 (1G) keep theirs
    // and only flows 10 and 11 are re-solved: they share the 99G flow 0 leaves, 49.5G each.
    let caps = [10 * G, 100 * G];
    let mut flows: Vec<&[u32]> = vec![&[0, 1]];
    flows.extend(std::iter::repeat_n(&[0u32][..], 9));
    flows.push(&[1]);
    flows.push(&[1]);
    let mut routes = Routes::new();
    for l in &flows {
        routes.push(l);
    }
    let mut s = MaxMin::new(caps.to_vec(), routes, flows.len());
    for f in 0..11 {
        s.add(f, f, NO_CAP);
    }
    let mut ch = Vec::new();
    s.resolve(&mut ch);
    assert_eq!((s.rate(0), s.rate(9), s.rate(10)), (G, G, 99 * G));
    let before = s.stats().flows_solved;
    s.add(11, 11, NO_CAP);
    ch.clear();
    s.resolve(&mut ch);
    assert_eq!(
        (s.rate(0), s.rate(10), s.rate(11)),
        (G, 49_500_000_000, 49_500_000_000)
    );
    assert_eq!(s.stats().flows_solved - before, 2);
}

#[test]
fn a_repeated_component_is_answered_from_the_cache() {
    // 32 flows on one 100G link, solved, finished, then the same 32 routes start again (a
    // second ring step): the second solve is a cache hit with the same rates (100/32 = 3.125G).
    let n = 32u32;
    let mut routes = Routes::new();
    for _ in 0..n {
        routes.push(&[0]);
    }
    let mut s = MaxMin::new(vec![100 * G], routes, 2 * n as usize).with_cache(1 << 10);
    let mut ch = Vec::new();
    for f in 0..n {
        s.add(f, f, NO_CAP);
    }
    s.resolve(&mut ch);
    for f in 0..n {
        s.remove(f);
    }
    s.resolve(&mut ch);
    for f in 0..n {
        s.add(n + f, f, NO_CAP);
    }
    s.resolve(&mut ch);
    assert_eq!(s.stats().cache_hits, 1);
    for f in n..2 * n {
        assert_eq!(s.rate(f), 3_125_000_000);
    }
}

#[test]
fn ending_port_service_mid_run_equals_a_per_flow_solve_from_scratch() {
    // `MaxMin::end_port_service` (the flow engine ends it when too many flows are active at
    // once): from the per-port allocation, the next solve must give the per-flow max-min one,
    // and every later incremental solve must too (random Clos, egresses to hosts served, as
    // `fluid` serves them; random starts and finishes, the service ended after batch 2-7).
    let mut ended_differs = 0;
    for seed in 0..200u64 {
        let mut rng = Rng::stream(seed, Stream::Test(78), 0);
        let (caps, flows, served) = random_clos(&mut rng, false);
        let nf = flows.len();
        let mut routes = Routes::new();
        for (links, _) in &flows {
            routes.push(links);
        }
        let mut inc = MaxMin::new(caps.clone(), routes.clone(), nf)
            .with_port_service(|l| served[l as usize])
            .with_cache(1 << 16);
        let end_at = 2 + rng.below(6);
        let (mut active, mut started) = (vec![false; nf], vec![false; nf]);
        let mut changed = Vec::new();
        for batch in 0..12 {
            churn(&mut rng, &mut inc, &flows, &mut started, &mut active);
            let before: Vec<u64> = (0..nf as u32).map(|f| inc.rate(f)).collect();
            if batch == end_at {
                inc.end_port_service();
                assert!(!inc.port_service());
            }
            changed.clear();
            inc.resolve(&mut changed);
            if batch < end_at {
                continue;
            }
            let mut scratch = MaxMin::new(caps.clone(), routes.clone(), nf);
            for f in 0..nf {
                if active[f] {
                    scratch.add(f as u32, f as u32, flows[f].1);
                }
            }
            scratch.resolve(&mut Vec::new());
            let rate = |s: &MaxMin, f: usize| if active[f] { s.rate(f as u32) } else { 0 };
            let got: Vec<u64> = (0..nf).map(|f| rate(&inc, f)).collect();
            let want: Vec<u64> = (0..nf).map(|f| rate(&scratch, f)).collect();
            assert_eq!(got, want, "seed {seed} batch {batch}");
            assert_max_min(&caps, &flows, &active, &got);
            // `changed` lists exactly the flows whose rates moved (old rates as they were).
            for (f, old) in &changed {
                assert_eq!(
                    *old, before[*f as usize],
                    "seed {seed}: old rate of flow {f}"
                );
            }
            if batch == end_at {
                ended_differs += (0..nf)
                    .filter(|&f| active[f] && before[f] != got[f])
                    .count();
            }
        }
    }
    // The cases do exercise the switch: per-port rates that per-flow sharing moves.
    assert!(ended_differs > 0, "no rate moved when port service ended");
}
