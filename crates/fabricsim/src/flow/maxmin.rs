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
//! - Max-min allocations decompose over connected components of the flow-link graph, so only
//!   the component(s) through the changed flows' links are looked at.
//! - After finishes, flows whose rate is below `r_min`, the smallest rate among the finished
//!   flows, keep their rates: at fill levels below `r_min` a finished flow was unfrozen and
//!   none of its links was a bottleneck, and removing it only raises those links' shares.
//! - After starts, the same argument run backwards (remove the new flows from the new
//!   allocation) keeps every flow below the new flows' smallest new rate; that rate is at least
//!   `a_min`, the least over the new flows of min(cap, min over its links of capacity / flows on
//!   the link), since no link fills below that level. In a batch of both, the threshold is
//!   min(`r_min`, `a_min`).
//!
//! So only the flows at or above the threshold reachable from the changed flows' links
//! (through such flows), and the new flows, are re-solved, on the capacity the others leave;
//! the property tests check this against from-scratch solves.

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
    /// Per directed link (one cache line's worth of state read together).
    ln: Vec<LinkState>,
    /// Flows on each link; finished flows are dropped lazily when the list is scanned.
    link_flows: Vec<Vec<u32>>,
    routes: Routes,
    /// Per flow.
    fl: Vec<FlowState>,
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
    cache: Option<RateCache>,
    stats: SolveStats,
}

/// A link's state. The solver's work is dominated by memory latency on large fabrics (a
/// 131,072-GPU fabric has 786,432 directed links), so what a visit reads sits together.
#[derive(Clone, Copy)]
struct LinkState {
    /// Bit/s.
    capacity: u64,
    /// Sum of the current rates of the active flows on the link.
    sum: u64,
    /// During a solve: the capacity left to the set's unfrozen flows, and their count.
    residual: u64,
    count: u32,
    /// Epoch of the solve that last reached the link.
    mark: u32,
    /// Active flows on the link (the load adaptive routing looks at).
    active: u32,
    /// Flows added on the link since the last solve.
    fresh: u32,
    /// Whether the link's flow list is sorted by current rate (for threshold searches).
    sorted: bool,
}

/// A flow's state (32 bytes: two flows per cache line).
#[derive(Clone, Copy)]
struct FlowState {
    rate: u64,
    cap: u64,
    route: u32,
    /// Epochs of the solve that put it in the set and that froze it.
    in_set: u32,
    frozen: u32,
    active: bool,
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
        let ln = capacity
            .iter()
            .map(|&capacity| LinkState {
                capacity,
                sum: 0,
                residual: 0,
                count: 0,
                mark: 0,
                active: 0,
                fresh: 0,
                sorted: true,
            })
            .collect();
        let idle = FlowState {
            rate: 0,
            cap: NO_CAP,
            route: u32::MAX,
            in_set: 0,
            frozen: 0,
            active: false,
        };
        MaxMin {
            link_flows: vec![Vec::new(); capacity.len()],
            ln,
            routes,
            fl: vec![idle; num_flows],
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
        self.ln[l as usize].active
    }
    /// Capacity of directed link `l`, bit/s.
    #[inline]
    pub fn capacity(&self, l: u32) -> u64 {
        self.ln[l as usize].capacity
    }
    #[inline]
    pub fn rate(&self, f: u32) -> u64 {
        self.fl[f as usize].rate
    }
    #[inline]
    pub fn is_active(&self, f: u32) -> bool {
        self.fl[f as usize].active
    }
    pub fn stats(&self) -> SolveStats {
        self.stats
    }

    /// Starts flow `f` on route `route`, limited to `cap` bit/s (`NO_CAP`: no limit).
    pub fn add(&mut self, f: u32, route: u32, cap: u64) {
        let fi = f as usize;
        debug_assert!(
            !self.fl[fi].active && self.fl[fi].route == u32::MAX,
            "flow added twice"
        );
        debug_assert!(!self.routes.get(route).is_empty(), "a route has links");
        self.fl[fi].route = route;
        self.fl[fi].cap = cap;
        self.fl[fi].rate = 0;
        self.fl[fi].active = true;
        for &l in self.routes.get(route) {
            self.link_flows[l as usize].push(f);
            self.ln[l as usize].active += 1;
            self.ln[l as usize].fresh += 1;
            self.ln[l as usize].sorted = false;
        }
        self.added.push(f);
    }

    /// Finishes flow `f`; its capacity is handed to the others at the next `resolve`.
    pub fn remove(&mut self, f: u32) {
        let fi = f as usize;
        debug_assert!(self.fl[fi].active, "flow removed while not active");
        self.fl[fi].active = false;
        let r = self.fl[fi].rate;
        for &l in self.routes.get(self.fl[fi].route) {
            self.ln[l as usize].sum -= r;
            self.ln[l as usize].active -= 1;
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
        // `a_min` of the module comment: flows below it (and below the finished flows' least
        // rate) keep their rates.
        let mut added_min = u64::MAX;
        for i in 0..self.added.len() {
            let f = self.added[i];
            let fs = self.fl[f as usize];
            debug_assert!(fs.active, "a flow drains only after its first solve");
            let mut bound = fs.cap;
            for k in 0..self.routes.get(fs.route).len() {
                let l = self.routes.get(fs.route)[k];
                let ls = &self.ln[l as usize];
                bound = bound.min(ls.capacity / ls.active as u64);
                self.seed_links.push(l);
            }
            added_min = added_min.min(bound);
        }
        let threshold = self.removed_min_rate.min(added_min);
        self.removed_min_rate = u64::MAX;
        self.epoch += 1;
        let whole = self.collect(threshold);
        self.added.clear();
        self.seed_links.clear();
        if self.set_flows.is_empty() {
            return;
        }
        self.stats.resolves += 1;
        self.stats.flows_solved += self.set_flows.len() as u64;
        // A whole component is the same problem whenever the same routes and caps meet on it:
        // ring steps, repeated collectives.
        let cacheable = whole && self.cache.is_some();
        if cacheable && self.apply_cached(changed) {
            self.stats.cache_hits += 1;
            return;
        }
        self.fill(changed);
        if cacheable {
            let cache = self.cache.as_mut().expect("checked");
            cache.store(&self.set_flows, &self.fl, |f| (f.route, f.cap, f.rate));
        }
    }

    /// Breadth-first search from the seed links over flows with rate >= `threshold` (new
    /// flows have rate 0 and a threshold of 0): fills `set_flows`, `set_links`, and for each
    /// link its residual capacity (minus the flows outside the set) and set-flow count.
    fn collect(&mut self, threshold: u64) -> bool {
        let ep = self.epoch;
        self.set_flows.clear();
        self.set_links.clear();
        self.bfs.clear();
        for i in 0..self.seed_links.len() {
            let l = self.seed_links[i];
            if self.ln[l as usize].mark != ep {
                self.ln[l as usize].mark = ep;
                self.bfs.push(l);
            }
        }
        // New flows (rate 0 until this solve) are in the set whatever the threshold.
        for i in 0..self.added.len() {
            let f = self.added[i] as usize;
            self.enter(f);
        }
        let mut whole = true;
        let mut head = 0;
        while head < self.bfs.len() {
            let l = self.bfs[head] as usize;
            head += 1;
            let (count, set_sum) = if threshold == 0 {
                self.scan_all(l)
            } else {
                let (count, sum, all) = self.scan_top(l, threshold);
                whole &= all;
                (count + self.ln[l].fresh, sum)
            };
            self.ln[l].fresh = 0;
            self.ln[l].count = count;
            self.ln[l].residual = self.ln[l].capacity - (self.ln[l].sum - set_sum);
            if count > 0 {
                self.set_links.push(l as u32);
            }
        }
        // The order of `set_flows` and `set_links` does not reach the result: the fill orders
        // links by (share, id) and caps by (cap, flow).
        whole
    }

    /// Puts flow `f` in the set (and its links in the search) unless it is there already.
    #[inline]
    fn enter(&mut self, f: usize) {
        let ep = self.epoch;
        if self.fl[f].in_set != ep {
            self.fl[f].in_set = ep;
            self.set_flows.push(f as u32);
            for &m in self.routes.get(self.fl[f].route) {
                if self.ln[m as usize].mark != ep {
                    self.ln[m as usize].mark = ep;
                    self.bfs.push(m);
                }
            }
        }
    }

    /// Every active flow of link `l` joins the set; returns their count and rate sum.
    fn scan_all(&mut self, l: usize) -> (u32, u64) {
        let fl = &self.fl;
        self.link_flows[l].retain(|&f| fl[f as usize].active);
        let mut sum = 0u64;
        for k in 0..self.link_flows[l].len() {
            let f = self.link_flows[l][k] as usize;
            sum += self.fl[f].rate;
            self.enter(f);
        }
        (self.link_flows[l].len() as u32, sum)
    }

    /// The active flows of link `l` at or above `threshold` join the set; returns their count
    /// and rate sum (new flows not included: they are in the set already), and whether no
    /// other flow was left out. The link's list is kept sorted by rate (re-sorted only after its rates
    /// changed), so this reads only the flows it returns and the finished ones on top.
    fn scan_top(&mut self, l: usize, threshold: u64) -> (u32, u64, bool) {
        if !self.ln[l].sorted {
            // Sort (rate, flow) pairs: one rate read per flow, not one per comparison.
            let keyed = &mut self.sort_buf;
            keyed.clear();
            for &f in &self.link_flows[l] {
                if self.fl[f as usize].active {
                    keyed.push((self.fl[f as usize].rate, f));
                }
            }
            keyed.sort_unstable();
            self.link_flows[l].clear();
            self.link_flows[l].extend(keyed.iter().map(|k| k.1));
            self.ln[l].sorted = true;
        }
        let (mut count, mut sum) = (0u32, 0u64);
        let mut i = self.link_flows[l].len();
        while i > 0 {
            let f = self.link_flows[l][i - 1] as usize;
            if !self.fl[f].active {
                if i == self.link_flows[l].len() {
                    self.link_flows[l].pop();
                }
                i -= 1;
                continue;
            }
            if self.fl[f].rate < threshold {
                if self.fl[f].in_set == self.epoch {
                    i -= 1; // a new flow (rate 0, counted by `fresh`)
                    continue;
                }
                return (count, sum, false);
            }
            count += 1;
            sum += self.fl[f].rate;
            self.enter(f);
            i -= 1;
        }
        (count, sum, true)
    }

    /// Progressive filling of `set_flows` on the residual capacities of `set_links`.
    fn fill(&mut self, changed: &mut Vec<(u32, u64)>) {
        let ep = self.epoch;
        self.heap.clear();
        for &l in &self.set_links {
            let li = l as usize;
            self.heap.push(Reverse((
                self.ln[li].residual / self.ln[li].count as u64,
                l,
            )));
        }
        self.capped.clear();
        for &f in &self.set_flows {
            if self.fl[f as usize].cap != NO_CAP {
                self.capped.push((self.fl[f as usize].cap, f));
            }
        }
        self.capped.sort_unstable();
        let mut next_cap = 0;
        loop {
            while next_cap < self.capped.len()
                && self.fl[self.capped[next_cap].1 as usize].frozen == ep
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
                        if self.ln[li].count == 0 {
                            continue;
                        }
                        let cur = self.ln[li].residual / self.ln[li].count as u64;
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
                    if self.fl[fi].in_set == ep && self.fl[fi].frozen != ep && self.fl[fi].active {
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
        self.fl[fi].frozen = self.epoch;
        let old = self.fl[fi].rate;
        self.fl[fi].rate = r;
        if old != r {
            changed.push((f, old));
        }
        for &l in self.routes.get(self.fl[fi].route) {
            let li = l as usize;
            self.ln[li].sum = self.ln[li].sum - old + r;
            self.ln[li].sorted &= old == r;
            self.ln[li].residual -= r;
            self.ln[li].count -= 1;
        }
    }

    /// Applies cached rates when this component was solved before; false on a miss.
    fn apply_cached(&mut self, changed: &mut Vec<(u32, u64)>) -> bool {
        let cache = self.cache.as_mut().expect("checked");
        let Some(rates) = cache.lookup(&self.set_flows, &self.fl, |f| (f.route, f.cap)) else {
            return false;
        };
        for (i, &f) in self.set_flows.iter().enumerate() {
            let fi = f as usize;
            let (old, r) = (self.fl[fi].rate, rates[i]);
            if old != r {
                changed.push((f, old));
                self.fl[fi].rate = r;
                for &l in self.routes.get(self.fl[fi].route) {
                    self.ln[l as usize].sum = self.ln[l as usize].sum - old + r;
                    self.ln[l as usize].sorted = false;
                }
            }
        }
        true
    }
}
