//! Max-min fair rates by progressive filling (water-filling), recomputed incrementally.
//!
//! Progressive filling (Bertsekas & Gallager, "Data Networks", 2nd ed., 6.5.2): raise every
//! unfrozen flow's rate together; when a link saturates, freeze its flows at its fair share
//! (residual capacity / unfrozen flows); a flow's cap freezes it at the cap. Here the level
//! jumps from bottleneck to bottleneck with a lazy min-heap of link shares (as dslab-network's
//! `TopologyAwareNetworkModel`).
//!
//! Rates and capacities are integer bits per second, and a share is `floor(residual / count)`:
//! sums over a link are exact, so an incremental solve reproduces a from-scratch one bit for
//! bit (the tests check it) and the result does not depend on floating-point rounding.
//!
//! Incremental recomputation touches only what can change:
//! - Max-min allocations decompose over connected components of the flow-link graph, so after
//!   a batch of starts only the component(s) through the new flows' links are re-solved.
//! - After a batch of pure finishes, flows whose rate is below `r_min`, the smallest rate among
//!   the finished flows, keep their rates: at fill levels below `r_min` a finished flow was
//!   unfrozen and none of its links was a bottleneck, and removing it only raises those links'
//!   shares. So only the flows at or above `r_min` reachable from the finished flows' links
//!   (through such flows) are re-solved, on the capacity the others leave.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::cache::RateCache;

/// No per-flow cap.
pub const NO_CAP: u64 = u64::MAX;

/// Routes as lists of directed link ids, stored compactly (CSR).
#[derive(Clone, Debug, Default)]
pub struct Routes {
    start: Vec<u32>,
    links: Vec<u32>,
}

impl Routes {
    pub fn new() -> Routes {
        Routes {
            start: vec![0],
            links: Vec::new(),
        }
    }
    /// Appends a route; returns its id.
    pub fn push(&mut self, links: &[u32]) -> u32 {
        self.links.extend_from_slice(links);
        self.start.push(self.links.len() as u32);
        (self.start.len() - 2) as u32
    }
    #[inline]
    pub fn get(&self, r: u32) -> &[u32] {
        &self.links[self.start[r as usize] as usize..self.start[r as usize + 1] as usize]
    }
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Incremental max-min solver over links with capacities and flows on routes.
///
/// Flows have dense ids `0..num_flows` given by the caller; each is added at most once and
/// removed at most once. Changes are batched: `add`/`remove` any number, then `resolve`.
pub struct MaxMin {
    capacity: Vec<u64>,
    /// Flows on each link; finished flows are dropped lazily when the list is scanned.
    link_flows: Vec<Vec<u32>>,
    /// Active flows on each link (the load adaptive routing looks at).
    link_active: Vec<u32>,
    /// Sum of the current rates of the active flows on each link.
    link_sum: Vec<u64>,
    link_mark: Vec<u32>,
    residual: Vec<u64>,
    count: Vec<u32>,
    routes: Routes,
    route: Vec<u32>,
    cap: Vec<u64>,
    rate: Vec<u64>,
    active: Vec<bool>,
    in_set: Vec<u32>,
    frozen: Vec<u32>,
    epoch: u32,
    // The pending batch.
    added: Vec<u32>,
    seed_links: Vec<u32>,
    removed_min_rate: u64,
    // Scratch.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    bfs: Vec<u32>,
    set_flows: Vec<u32>,
    set_links: Vec<u32>,
    capped: Vec<(u64, u32)>,
    sort_buf: Vec<(u64, u32)>,
    /// Whether a link's flow list is sorted by current rate (for threshold searches).
    sorted: Vec<bool>,
    cache: Option<RateCache>,
    stats: SolveStats,
}

/// Work counters, for benchmarks and tests of the incremental paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolveStats {
    /// Calls to `resolve` that had something to do.
    pub resolves: u64,
    /// Flows whose rates were recomputed (summed over solves).
    pub flows_solved: u64,
    /// Solves answered from the rate cache.
    pub cache_hits: u64,
}

impl MaxMin {
    /// `capacity` per directed link in bit/s; `routes` the link lists flows may take.
    pub fn new(capacity: Vec<u64>, routes: Routes, num_flows: usize) -> MaxMin {
        let nl = capacity.len();
        MaxMin {
            link_flows: vec![Vec::new(); nl],
            link_active: vec![0; nl],
            link_sum: vec![0; nl],
            link_mark: vec![0; nl],
            residual: vec![0; nl],
            count: vec![0; nl],
            capacity,
            routes,
            route: vec![u32::MAX; num_flows],
            cap: vec![NO_CAP; num_flows],
            rate: vec![0; num_flows],
            active: vec![false; num_flows],
            in_set: vec![0; num_flows],
            frozen: vec![0; num_flows],
            epoch: 0,
            added: Vec::new(),
            seed_links: Vec::new(),
            removed_min_rate: u64::MAX,
            heap: BinaryHeap::new(),
            bfs: Vec::new(),
            set_flows: Vec::new(),
            set_links: Vec::new(),
            capped: Vec::new(),
            sort_buf: Vec::new(),
            sorted: vec![true; nl],
            cache: None,
            stats: SolveStats::default(),
        }
    }

    /// Answers repeated component solves from a cache of at most `max_entries` flow rates.
    pub fn with_cache(mut self, max_entries: usize) -> MaxMin {
        self.cache = Some(RateCache::new(max_entries));
        self
    }

    pub fn routes(&self) -> &Routes {
        &self.routes
    }
    /// Adds a route after construction (routes placed when their flow starts).
    pub fn push_route(&mut self, links: &[u32]) -> u32 {
        self.routes.push(links)
    }
    /// Active flows on directed link `l`.
    #[inline]
    pub fn load(&self, l: u32) -> u32 {
        self.link_active[l as usize]
    }
    /// Capacity of directed link `l`, bit/s.
    #[inline]
    pub fn capacity(&self, l: u32) -> u64 {
        self.capacity[l as usize]
    }
    #[inline]
    pub fn rate(&self, f: u32) -> u64 {
        self.rate[f as usize]
    }
    #[inline]
    pub fn is_active(&self, f: u32) -> bool {
        self.active[f as usize]
    }
    pub fn stats(&self) -> SolveStats {
        self.stats
    }

    /// Starts flow `f` on route `route`, limited to `cap` bit/s (`NO_CAP`: no limit).
    pub fn add(&mut self, f: u32, route: u32, cap: u64) {
        let fi = f as usize;
        debug_assert!(
            !self.active[fi] && self.route[fi] == u32::MAX,
            "flow added twice"
        );
        debug_assert!(!self.routes.get(route).is_empty(), "a route has links");
        self.route[fi] = route;
        self.cap[fi] = cap;
        self.rate[fi] = 0;
        self.active[fi] = true;
        for &l in self.routes.get(route) {
            self.link_flows[l as usize].push(f);
            self.link_active[l as usize] += 1;
            self.sorted[l as usize] = false;
        }
        self.added.push(f);
    }

    /// Finishes flow `f`; its capacity is handed to the others at the next `resolve`.
    pub fn remove(&mut self, f: u32) {
        let fi = f as usize;
        debug_assert!(self.active[fi], "flow removed while not active");
        self.active[fi] = false;
        let r = self.rate[fi];
        for &l in self.routes.get(self.route[fi]) {
            self.link_sum[l as usize] -= r;
            self.link_active[l as usize] -= 1;
            self.seed_links.push(l);
        }
        self.removed_min_rate = self.removed_min_rate.min(r);
    }

    /// Recomputes the rates the pending batch can change; appends `(flow, old rate)` for every
    /// flow whose rate changed to `changed`.
    pub fn resolve(&mut self, changed: &mut Vec<(u32, u64)>) {
        if self.added.is_empty() && self.seed_links.is_empty() {
            return;
        }
        let threshold = if self.added.is_empty() {
            self.removed_min_rate
        } else {
            0
        };
        for i in 0..self.added.len() {
            let f = self.added[i];
            if self.active[f as usize] {
                let r = self.route[f as usize];
                for k in 0..self.routes.get(r).len() {
                    let l = self.routes.get(r)[k];
                    self.seed_links.push(l);
                }
            }
        }
        self.added.clear();
        self.removed_min_rate = u64::MAX;
        self.epoch += 1;
        self.collect(threshold);
        self.seed_links.clear();
        if self.set_flows.is_empty() {
            return;
        }
        self.stats.resolves += 1;
        self.stats.flows_solved += self.set_flows.len() as u64;
        // A full component (threshold 0) is the same problem whenever the same routes and caps
        // meet on it: ring steps, repeated collectives.
        let cacheable = threshold == 0 && self.cache.is_some();
        if cacheable && self.apply_cached(changed) {
            self.stats.cache_hits += 1;
            return;
        }
        self.fill(changed);
        if cacheable {
            let cache = self.cache.as_mut().expect("checked");
            cache.store(&self.set_flows, &self.route, &self.cap, &self.rate);
        }
    }

    /// Breadth-first search from the seed links over flows with rate >= `threshold` (new
    /// flows have rate 0 and a threshold of 0): fills `set_flows`, `set_links`, and for each
    /// link its residual capacity (minus the flows outside the set) and set-flow count.
    fn collect(&mut self, threshold: u64) {
        let ep = self.epoch;
        self.set_flows.clear();
        self.set_links.clear();
        self.bfs.clear();
        for i in 0..self.seed_links.len() {
            let l = self.seed_links[i];
            if self.link_mark[l as usize] != ep {
                self.link_mark[l as usize] = ep;
                self.bfs.push(l);
            }
        }
        let mut head = 0;
        while head < self.bfs.len() {
            let l = self.bfs[head] as usize;
            head += 1;
            let (count, set_sum) = if threshold == 0 {
                self.scan_all(l)
            } else {
                self.scan_top(l, threshold)
            };
            self.count[l] = count;
            self.residual[l] = self.capacity[l] - (self.link_sum[l] - set_sum);
            if count > 0 {
                self.set_links.push(l as u32);
            }
        }
        // The order of `set_flows` and `set_links` does not reach the result: the fill orders
        // links by (share, id) and caps by (cap, flow).
    }

    /// Puts flow `f` in the set (and its links in the search) unless it is there already.
    #[inline]
    fn enter(&mut self, f: usize) {
        let ep = self.epoch;
        if self.in_set[f] != ep {
            self.in_set[f] = ep;
            self.set_flows.push(f as u32);
            for &m in self.routes.get(self.route[f]) {
                if self.link_mark[m as usize] != ep {
                    self.link_mark[m as usize] = ep;
                    self.bfs.push(m);
                }
            }
        }
    }

    /// Every active flow of link `l` joins the set; returns their count and rate sum.
    fn scan_all(&mut self, l: usize) -> (u32, u64) {
        let active = &self.active;
        self.link_flows[l].retain(|&f| active[f as usize]);
        let mut sum = 0u64;
        for k in 0..self.link_flows[l].len() {
            let f = self.link_flows[l][k] as usize;
            sum += self.rate[f];
            self.enter(f);
        }
        (self.link_flows[l].len() as u32, sum)
    }

    /// The active flows of link `l` at or above `threshold` join the set; returns their count
    /// and rate sum. The link's list is kept sorted by rate (re-sorted only after its rates
    /// changed), so this reads only the flows it returns and the finished ones on top.
    fn scan_top(&mut self, l: usize, threshold: u64) -> (u32, u64) {
        if !self.sorted[l] {
            // Sort (rate, flow) pairs: one rate read per flow, not one per comparison.
            let keyed = &mut self.sort_buf;
            keyed.clear();
            for &f in &self.link_flows[l] {
                if self.active[f as usize] {
                    keyed.push((self.rate[f as usize], f));
                }
            }
            keyed.sort_unstable();
            self.link_flows[l].clear();
            self.link_flows[l].extend(keyed.iter().map(|k| k.1));
            self.sorted[l] = true;
        }
        let (mut count, mut sum) = (0u32, 0u64);
        let mut i = self.link_flows[l].len();
        while i > 0 {
            let f = self.link_flows[l][i - 1] as usize;
            if !self.active[f] {
                if i == self.link_flows[l].len() {
                    self.link_flows[l].pop();
                }
                i -= 1;
                continue;
            }
            if self.rate[f] < threshold {
                break;
            }
            count += 1;
            sum += self.rate[f];
            self.enter(f);
            i -= 1;
        }
        (count, sum)
    }

    /// Progressive filling of `set_flows` on the residual capacities of `set_links`.
    fn fill(&mut self, changed: &mut Vec<(u32, u64)>) {
        let ep = self.epoch;
        self.heap.clear();
        for &l in &self.set_links {
            let li = l as usize;
            self.heap
                .push(Reverse((self.residual[li] / self.count[li] as u64, l)));
        }
        self.capped.clear();
        for &f in &self.set_flows {
            if self.cap[f as usize] != NO_CAP {
                self.capped.push((self.cap[f as usize], f));
            }
        }
        self.capped.sort_unstable();
        let mut next_cap = 0;
        loop {
            while next_cap < self.capped.len()
                && self.frozen[self.capped[next_cap].1 as usize] == ep
            {
                next_cap += 1;
            }
            // The lowest link share. Shares only grow as flows freeze, so an entry is a lower
            // bound of its link's share: a stale one is re-pushed at the current share when
            // it reaches the top (no push per frozen flow).
            let top = loop {
                match self.heap.peek() {
                    Some(&Reverse((s, l))) => {
                        let li = l as usize;
                        self.heap.pop();
                        if self.count[li] == 0 {
                            continue;
                        }
                        let cur = self.residual[li] / self.count[li] as u64;
                        if cur == s {
                            break Some((s, l));
                        }
                        self.heap.push(Reverse((cur, l)));
                    }
                    None => break None,
                }
            };
            let cap_first = match (top, self.capped.get(next_cap)) {
                (_, None) => false,
                (None, Some(_)) => true,
                (Some((s, _)), Some(&(c, _))) => c <= s,
            };
            if cap_first {
                let (c, f) = self.capped[next_cap];
                self.freeze(f, c, changed);
                if let Some((s, l)) = top {
                    self.heap.push(Reverse((s, l)));
                }
            } else if let Some((s, l)) = top {
                let li = l as usize;
                for k in 0..self.link_flows[li].len() {
                    let f = self.link_flows[li][k];
                    let fi = f as usize;
                    if self.in_set[fi] == ep && self.frozen[fi] != ep && self.active[fi] {
                        self.freeze(f, s, changed);
                    }
                }
            } else {
                break;
            }
        }
    }

    fn freeze(&mut self, f: u32, r: u64, changed: &mut Vec<(u32, u64)>) {
        let fi = f as usize;
        self.frozen[fi] = self.epoch;
        let old = self.rate[fi];
        self.rate[fi] = r;
        if old != r {
            changed.push((f, old));
        }
        for &l in self.routes.get(self.route[fi]) {
            let li = l as usize;
            self.link_sum[li] = self.link_sum[li] - old + r;
            self.sorted[li] &= old == r;
            self.residual[li] -= r;
            self.count[li] -= 1;
        }
    }

    /// Applies cached rates when this component was solved before; false on a miss.
    fn apply_cached(&mut self, changed: &mut Vec<(u32, u64)>) -> bool {
        let cache = self.cache.as_mut().expect("checked");
        let Some(rates) = cache.lookup(&self.set_flows, &self.route, &self.cap) else {
            return false;
        };
        for (i, &f) in self.set_flows.iter().enumerate() {
            let fi = f as usize;
            let (old, r) = (self.rate[fi], rates[i]);
            if old != r {
                changed.push((f, old));
                self.rate[fi] = r;
                for &l in self.routes.get(self.route[fi]) {
                    self.link_sum[l as usize] = self.link_sum[l as usize] - old + r;
                    self.sorted[l as usize] = false;
                }
            }
        }
        true
    }
}
