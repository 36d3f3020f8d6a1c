//! Max-min fair rates: hand-computed cases (Bertsekas & Gallager, "Data Networks", 6.5.2) and
//! incremental solves against from-scratch ones on random cases.

use fabricsim::flow::{MaxMin, NO_CAP, Routes};
use fabricsim::rng::Rng;

const G: u64 = 1_000_000_000;

/// Solves `flows` (route links, cap) on `caps` from scratch; returns the rates.
fn solve(caps: &[u64], flows: &[(&[u32], u64)]) -> Vec<u64> {
    let mut routes = Routes::new();
    for (links, _) in flows {
        routes.push(links);
    }
    let mut s = MaxMin::new(caps.to_vec(), routes, flows.len());
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

#[test]
fn incremental_equals_from_scratch_on_random_cases() {
    for seed in 0..200u64 {
        let mut rng = Rng::stream(seed, 77, 0);
        let nl = 4 + rng.below(20) as usize;
        let caps: Vec<u64> = (0..nl).map(|_| (1 + rng.below(40)) * G).collect();
        let nf = 10 + rng.below(60) as usize;
        let flows: Vec<(Vec<u32>, u64)> = (0..nf)
            .map(|_| {
                let len = 1 + rng.below(4) as usize;
                let mut links: Vec<u32> = Vec::new();
                while links.len() < len.min(nl) {
                    let l = rng.below(nl as u64) as u32;
                    if !links.contains(&l) {
                        links.push(l);
                    }
                }
                let cap = if rng.below(4) == 0 {
                    (1 + rng.below(20)) * G / 2
                } else {
                    NO_CAP
                };
                (links, cap)
            })
            .collect();
        let mut routes = Routes::new();
        for (links, _) in &flows {
            routes.push(links);
        }
        let mut inc = MaxMin::new(caps.clone(), routes.clone(), nf).with_cache(1 << 16);
        let mut active = vec![false; nf];
        let mut started = vec![false; nf];
        let mut changed = Vec::new();
        for _batch in 0..12 {
            // Start a few flows, or finish a few (pure finishes take the thresholded path).
            let finish_only = rng.below(2) == 0;
            for f in 0..nf {
                if !started[f] && !finish_only && rng.below(5) == 0 {
                    started[f] = true;
                    active[f] = true;
                    inc.add(f as u32, f as u32, flows[f].1);
                } else if active[f] && rng.below(6) == 0 {
                    active[f] = false;
                    inc.remove(f as u32);
                }
            }
            changed.clear();
            inc.resolve(&mut changed);
            let mut scratch = MaxMin::new(caps.clone(), routes.clone(), nf);
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
            assert_max_min(&caps, &flows, &active, &got);
        }
    }
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
