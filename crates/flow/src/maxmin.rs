//! Max-min fair rates by progressive filling (water-filling), recomputed incrementally, with
//! optional per-input-port service of chosen links.
//!
//! Progressive filling (Bertsekas & Gallager, "Data Networks", 2nd ed., 6.5.2): raise every
//! unfrozen flow's rate together; when a link saturates, freeze its flows at its fair share
//! (residual capacity / unfrozen flows); a flow's cap freezes it at the cap. Here the level
//! jumps from bottleneck to bottleneck with a lazy min-heap of link shares (as dslab-network's
//! `TopologyAwareNetworkModel`).
//!
//! Per-input-port service (`MaxMin::with_port_service`, on the links the caller picks): a
//! link's flows are grouped by the link they arrive on (the switch's input port), and the
//! link is shared among its input ports first, then among each port's flows, as a lossless
//! switch's round robin over its input queues gives under back-pressure (credits, PFC). The
//! allocation is hierarchical max-min: feasible, and every flow at its cap or with a
//! bottleneck, a full link on which no flow is faster or, served per port, on which its
//! port's total is the largest and no flow of its port is faster. It is the max-min
//! allocation over the links plus one virtual link per port whose capacity is its link's
//! level `L`: a served link gives every port that reaches `L` the same level and each port
//! whose flows are held elsewhere what they take, so `L = (capacity - the slack ports'
//! total) / held ports`. The levels are a fixed point, found by filling with the levels and
//! re-leveling (`MaxMin::relevel`) until none moves: the first fill at `capacity / ports`,
//! Jacobi steps (every second one from the third extrapolated, Aitken's delta-squared), then,
//! once a level moves back, bisection of its bracket (reopened if the other links have moved
//! the fixed point out of it), at most `MAX_PORT_ROUNDS` fills. A port
//! is held at its link when the fill took it to the level, or left it below with the link
//! full and a flow of it among the link's fastest with no bottleneck elsewhere (ties between
//! bottlenecks count as elsewhere, so a flow held level at two links does not pull a level
//! down). On random 2-tier Clos cases served at the egresses to hosts, as the flow engine
//! serves them (`tests/flow_maxmin.rs`), every flow meets the per-port max-min conditions
//! (200 seeds, 23,787 flows, at most 5 fills a solve, 30 without the extrapolation; 3,000
//! seeds, 358,496 flows, at most 56 either way); with every link served (a flow crossing up
//! to four served links, whose levels depend on one another) 23,779 of 23,787 (one solve,
//! seed 66, cycles until the fill limit; 23,781 without the extrapolation). On the shared
//! cases of `tests/flow_xval.rs` a solve that reaches a link shared per port takes 6.2 fills
//! on average, at most 18 (10.5 and 47 without; `fabricsim-lab ports xval`). Links where
//! no port holds two flows share per flow exactly as per port.
//!
//! Rates and capacities are integer bits per second, and a share is a floor: sums over a link
//! are exact, so an incremental solve reproduces a from-scratch one bit for bit (the tests
//! check it) and the result does not depend on floating-point rounding.
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
//! - Neither argument holds on a link shared per port with a port of two or more flows (its
//!   ports' levels are a fixed point over the component, not set by the flows' order), so a
//!   batch that changes such a link, or whose search reaches one, re-solves whole components
//!   (`fluid` therefore ends port service, `MaxMin::end_port_service`, once a run has too many
//!   flows active at once).
//!   With port service the threshold is lowered by 2^-20 of itself: a flow held at a port
//!   level sits a few bit/s (floors of shares) below the finished flows it was held level
//!   with, and without the margin it kept a stale rate (1 of 3,000 random Clos seeds).
//!
//! So only the flows at or above the threshold reachable from the changed flows' links
//! (through such flows), and the new flows, are re-solved, on the capacity the others leave;
//! the property tests check this against from-scratch solves.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::cache::RateCache;
use super::calibration::{JACOBI_ROUNDS, MAX_PORT_ROUNDS, PREFETCH_AHEAD, THRESHOLD_MARGIN_BITS};
use fabricsim_core::prefetch::prefetch;

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
    /// With port service: per input port of a link (the flows of a link that arrive on one
    /// link), its state and flows (lazily cleaned as `link_flows`); each route hop's port
    /// (parallel to `routes.links`); each link's ports by the link they come from
    /// (`NONE_LINK` for a route's first link).
    port_service: bool,
    served: Vec<bool>,
    pt: Vec<PortState>,
    port_flows: Vec<Vec<u32>>,
    hop_port: Vec<u32>,
    link_ports: Vec<Vec<(u32, u32)>>,
    /// Per flow.
    fl: Vec<FlowState>,
    /// The distinct flow caps (`NO_CAP` first) and their indices.
    caps: Vec<u64>,
    cap_index: BTreeMap<u64, u32>,
    epoch: u32,
    // The pending batch.
    added: Vec<u32>,
    seed_links: Vec<u32>,
    /// The least threshold of the batch's changes (module comment).
    threshold: u64,
    // Scratch.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    bfs: Vec<u32>,
    set_flows: Vec<u32>,
    /// The set's flows' rates before the solve.
    set_old: Vec<u64>,
    set_links: Vec<u32>,
    set_ports: Vec<u32>,
    capped: Vec<(u64, u32)>,
    sort_buf: Vec<(u64, u32)>,
    cache: Option<RateCache>,
    /// The cache's budget (`MaxMin::end_port_service` empties it).
    cache_entries: usize,
    stats: SolveStats,
    /// Counts fills (ports are set up once per fill).
    round: u32,
}

const NONE_LINK: u32 = u32::MAX;

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
    /// Whether the link's flow list is sorted by current rate (for threshold searches).
    sorted: bool,
    /// With port service: ports with active flows; during a solve, whether the link is
    /// shared per port (`shared_per_port`), the level its ports are held to (the capacity of
    /// each port's virtual link), and after a fill its fastest flow, its held ports and the
    /// others' total.
    ports: u32,
    per_port: bool,
    level: u64,
    top: u64,
    held: u32,
    slack: u64,
    /// During a solve: levels found too low and too high (`MaxMin::relevel`).
    lo: u64,
    hi: u64,
    /// During a solve: the level's last plain (Jacobi) step, 0 after any other.
    step: i64,
}

impl LinkState {
    /// Whether sharing per port differs from sharing per flow here: several ports, one of
    /// them with several flows.
    #[inline]
    fn shared_per_port(&self) -> bool {
        self.ports > 1 && self.active > self.ports
    }
}

/// An input port's state (port service).
#[derive(Clone, Copy)]
struct PortState {
    link: u32,
    /// Sum of the current rates of its active flows, and their count.
    sum: u64,
    active: u32,
    /// During a solve: its unfrozen set flows and the rates of the others; after a fill, its
    /// fastest flow and whether it is held at its link (`MaxMin::relevel`).
    unfrozen: u32,
    fixed: u64,
    top: u64,
    held: bool,
    mark: u32,
}

/// A flow's state (24 bytes).
#[derive(Clone, Copy)]
struct FlowState {
    rate: u64,
    /// Its cap: `MaxMin::caps[cap]` (a run has few distinct caps).
    cap: u32,
    route: u32,
    /// Epoch of the solve that put it in the set.
    in_set: u32,
    /// Whether the current fill froze it (reset when it enters a fill).
    frozen: bool,
    active: bool,
}

const _: () = assert!(size_of::<FlowState>() == 24);

/// Work counters, for benchmarks and tests of the incremental paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SolveStats {
    /// Calls to `resolve` that had something to do.
    pub resolves: u64,
    /// Flows whose rates were recomputed (summed over solves).
    pub flows_solved: u64,
    /// Solves answered from the rate cache.
    pub cache_hits: u64,
    /// Fills beyond the first of a solve with port service (rounds of the port levels'
    /// fixed point, `MaxMin::relevel`), summed over solves.
    pub port_rounds: u64,
    /// Solves whose set reached a link shared per port (each takes 1 + its extra fills).
    pub port_solves: u64,
    /// The most fills of one solve.
    pub max_fills: u64,
    /// Flows re-solved times fills, in solves that reached a link shared per port (the cost
    /// `FlowParams::lossless_max_port_work` bounds).
    pub port_work: u64,
    /// With several traffic classes (`classes`): solves of every class, summed over resolves,
    /// and the most in one resolve.
    pub class_rounds: u64,
    pub max_class_rounds: u64,
}

impl SolveStats {
    /// Adds another run's counters (`max_fills` takes the larger).
    pub fn merge(&mut self, o: &SolveStats) {
        self.resolves += o.resolves;
        self.flows_solved += o.flows_solved;
        self.cache_hits += o.cache_hits;
        self.port_rounds += o.port_rounds;
        self.port_solves += o.port_solves;
        self.max_fills = self.max_fills.max(o.max_fills);
        self.port_work += o.port_work;
        self.class_rounds += o.class_rounds;
        self.max_class_rounds = self.max_class_rounds.max(o.max_class_rounds);
    }
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
                sorted: true,
                ports: 0,
                per_port: false,
                level: 0,
                top: 0,
                held: 0,
                slack: 0,
                lo: 0,
                hi: 0,
                step: 0,
            })
            .collect();
        let idle = FlowState {
            rate: 0,
            cap: 0,
            route: u32::MAX,
            in_set: 0,
            frozen: false,
            active: false,
        };
        MaxMin {
            link_flows: vec![Vec::new(); capacity.len()],
            port_service: false,
            served: Vec::new(),
            pt: Vec::new(),
            port_flows: Vec::new(),
            hop_port: Vec::new(),
            link_ports: Vec::new(),
            ln,
            routes,
            fl: vec![idle; num_flows],
            caps: vec![NO_CAP],
            cap_index: BTreeMap::from([(NO_CAP, 0)]),
            epoch: 0,
            added: Vec::new(),
            seed_links: Vec::new(),
            threshold: u64::MAX,
            heap: BinaryHeap::new(),
            bfs: Vec::new(),
            set_flows: Vec::new(),
            set_old: Vec::new(),
            set_links: Vec::new(),
            set_ports: Vec::new(),
            capped: Vec::new(),
            sort_buf: Vec::new(),
            cache: None,
            cache_entries: 0,
            stats: SolveStats::default(),
            round: 0,
        }
    }

    /// Answers repeated component solves from a cache of at most `max_entries` flow rates.
    pub fn with_cache(mut self, max_entries: usize) -> MaxMin {
        self.cache = Some(RateCache::new(max_entries));
        self.cache_entries = max_entries;
        self
    }

    /// Shares each link `served` picks per input port, then per flow (module comment); the
    /// others per flow. Before any `add`.
    pub fn with_port_service(mut self, served: impl Fn(u32) -> bool) -> MaxMin {
        debug_assert!(self.fl.iter().all(|f| !f.active), "set before flows start");
        self.port_service = true;
        self.served = (0..self.ln.len() as u32).map(served).collect();
        self.link_ports = vec![Vec::new(); self.ln.len()];
        for r in 0..self.routes.len() as u32 {
            self.number_ports(r);
        }
        self
    }

    /// Whether links are shared per input port (`with_port_service`, until `end_port_service`).
    pub fn port_service(&self) -> bool {
        self.port_service
    }

    /// Shares every link per flow from now on: the next `resolve` re-solves every component
    /// with active flows from scratch (the current rates were set per port, and the per-flow
    /// thresholds of the module comment hold only from a per-flow max-min allocation), and the
    /// cache, which holds rates solved per port, starts empty.
    pub fn end_port_service(&mut self) {
        if !self.port_service {
            return;
        }
        self.port_service = false;
        self.served = Vec::new();
        self.pt = Vec::new();
        self.port_flows = Vec::new();
        self.hop_port = Vec::new();
        self.link_ports = Vec::new();
        if self.cache.is_some() {
            self.cache = Some(RateCache::new(self.cache_entries));
        }
        for l in 0..self.ln.len() {
            self.ln[l].per_port = false;
            if self.ln[l].active > 0 {
                self.seed_links.push(l as u32);
            }
        }
        self.threshold = 0;
    }

    /// Gives each hop of route `r` its port (port service only).
    fn number_ports(&mut self, r: u32) {
        for i in self.hops(r) {
            let l = self.routes.links[i];
            let from = if i == self.hops(r).start || !self.served[l as usize] {
                NONE_LINK
            } else {
                self.routes.links[i - 1]
            };
            let ports = &mut self.link_ports[l as usize];
            let p = match ports.iter().find(|e| e.0 == from) {
                Some(e) => e.1,
                None => {
                    let p = self.pt.len() as u32;
                    ports.push((from, p));
                    self.pt.push(PortState {
                        link: l,
                        sum: 0,
                        active: 0,
                        unfrozen: 0,
                        fixed: 0,
                        top: 0,
                        held: false,
                        mark: 0,
                    });
                    self.port_flows.push(Vec::new());
                    p
                }
            };
            self.hop_port.push(p);
        }
    }

    /// Route `r`'s hops as indices into `routes.links` (and `hop_port`).
    #[inline]
    fn hops(&self, r: u32) -> std::ops::Range<usize> {
        self.routes.start[r as usize] as usize..self.routes.start[r as usize + 1] as usize
    }

    pub fn routes(&self) -> &Routes {
        &self.routes
    }
    /// Adds a route after construction (routes placed when their flow starts).
    pub fn push_route(&mut self, links: &[u32]) -> u32 {
        let r = self.routes.push(links);
        if self.port_service {
            self.number_ports(r);
        }
        r
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
    /// Sum of the current rates on directed link `l`, bit/s (`flow::hol` asks whether it is full).
    #[inline]
    pub fn used_bps(&self, l: u32) -> u64 {
        self.ln[l as usize].sum
    }
    #[inline]
    pub fn rate(&self, f: u32) -> u64 {
        self.fl[f as usize].rate
    }
    /// The route flow `f` was added on.
    #[inline]
    pub fn route(&self, f: u32) -> u32 {
        self.fl[f as usize].route
    }
    /// Prefetches flow `f`'s state (a hint: no effect on results).
    #[inline]
    pub fn prefetch_flow(&self, f: u32) {
        if let Some(fs) = self.fl.get(f as usize) {
            prefetch(fs);
        }
    }
    /// Prefetches where flow `f`'s route starts (reads its state: prefetch that first).
    #[inline]
    pub fn prefetch_route(&self, f: u32) {
        let r = self.fl.get(f as usize).map_or(u32::MAX, |fs| fs.route) as usize;
        if let Some(i) = self.routes.start.get(r) {
            prefetch(i);
        }
    }
    /// Prefetches the links of flow `f`'s route (after [`MaxMin::prefetch_route`]).
    #[inline]
    pub fn prefetch_links(&self, f: u32) {
        let r = self.fl.get(f as usize).map_or(u32::MAX, |fs| fs.route) as usize;
        if let Some(&i) = self.routes.start.get(r) {
            if let Some(l) = self.routes.links.get(i as usize) {
                prefetch(l);
            }
        }
    }
    /// Prefetches what a scan of flow ids at `k` that walks each flow's route reads next: the
    /// states of `list[k + PREFETCH_AHEAD]`, the route start of `list[k + PREFETCH_AHEAD / 2]` and the links of
    /// `list[k + PREFETCH_AHEAD / 4]`.
    #[inline]
    fn prefetch_walk(&self, list: &[u32], k: usize) {
        self.prefetch_ahead(list, k);
        if let Some(&f) = list.get(k + PREFETCH_AHEAD / 2) {
            self.prefetch_route(f);
        }
        if let Some(&f) = list.get(k + PREFETCH_AHEAD / 4) {
            self.prefetch_links(f);
        }
    }

    /// Prefetches the states of `list[k + PREFETCH_AHEAD]` (a scan of flow ids at `k`).
    #[inline]
    fn prefetch_ahead(&self, list: &[u32], k: usize) {
        if let Some(&f) = list.get(k + PREFETCH_AHEAD) {
            prefetch(&self.fl[f as usize]);
        }
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
        self.fl[fi].cap = self.cap_id(cap);
        self.fl[fi].rate = 0;
        self.fl[fi].active = true;
        for i in self.hops(route) {
            let l = self.routes.links[i] as usize;
            self.link_flows[l].push(f);
            self.ln[l].active += 1;
            self.ln[l].sorted = false;
            if self.port_service {
                let p = self.hop_port[i] as usize;
                self.port_flows[p].push(f);
                if self.pt[p].active == 0 {
                    self.ln[l].ports += 1;
                }
                self.pt[p].active += 1;
                if self.ln[l].shared_per_port() {
                    self.threshold = 0;
                }
            }
        }
        self.added.push(f);
    }

    /// The index of `cap` in the table of distinct caps (added when new).
    fn cap_id(&mut self, cap: u64) -> u32 {
        let next = self.caps.len() as u32;
        let c = *self.cap_index.entry(cap).or_insert(next);
        if c == next {
            self.caps.push(cap);
        }
        c
    }

    /// Changes active flow `f`'s cap to `cap` bit/s, as finishing it and starting it again with
    /// that cap would: flows below its rate and below the new cap's bound (the cap, or a fair
    /// share of one of its links) keep their rates at the next `resolve`. Returns whether the
    /// rates may change: not when neither the old cap nor the new one is below its rate (the
    /// solution stays feasible, and a looser or unused cap does not move a max-min solution).
    pub fn set_cap(&mut self, f: u32, cap: u64) -> bool {
        let fi = f as usize;
        debug_assert!(self.fl[fi].active, "cap of an inactive flow");
        let old = self.caps[self.fl[fi].cap as usize];
        self.fl[fi].cap = self.cap_id(cap);
        let rate = self.fl[fi].rate;
        // A flow not solved yet (rate 0) is solved with its new cap at the next `resolve`.
        if old == cap || (rate > 0 && rate < old && rate <= cap) {
            return false;
        }
        let mut bound = cap.min(self.fl[fi].rate);
        for i in self.hops(self.fl[fi].route) {
            let l = self.routes.links[i];
            let ls = &self.ln[l as usize];
            bound = bound.min(ls.capacity / ls.active.max(1) as u64);
            self.seed_links.push(l);
        }
        self.threshold = self.threshold.min(bound);
        true
    }

    /// Sets directed link `l`'s capacity to `capacity` bit/s (`classes`: the share its traffic
    /// class is given there); the next `resolve` re-solves every flow reachable from it.
    pub fn set_capacity(&mut self, l: u32, capacity: u64) {
        if self.ln[l as usize].capacity == capacity {
            return;
        }
        self.ln[l as usize].capacity = capacity;
        self.seed_links.push(l);
        self.threshold = 0;
    }

    /// Finishes flow `f`; its capacity is handed to the others at the next `resolve`.
    pub fn remove(&mut self, f: u32) {
        let fi = f as usize;
        debug_assert!(self.fl[fi].active, "flow removed while not active");
        self.fl[fi].active = false;
        let r = self.fl[fi].rate;
        for i in self.hops(self.fl[fi].route) {
            let l = self.routes.links[i] as usize;
            if self.port_service {
                if self.ln[l].shared_per_port() {
                    self.threshold = 0;
                }
                let p = self.hop_port[i] as usize;
                self.pt[p].sum -= r;
                self.pt[p].active -= 1;
                if self.pt[p].active == 0 {
                    self.ln[l].ports -= 1;
                }
            }
            self.ln[l].sum -= r;
            self.ln[l].active -= 1;
            self.seed_links.push(l as u32);
        }
        self.threshold = self.threshold.min(r);
    }

    /// Recomputes the rates the pending batch can change; appends `(flow, old rate)` for every
    /// flow whose rate changed to `changed`.
    pub fn resolve(&mut self, changed: &mut Vec<(u32, u64)>) {
        self.resolve_each(|f, old, _| changed.push((f, old)));
    }

    /// [`MaxMin::resolve`], calling `changed(flow, old rate, new rate)` for every flow whose
    /// rate changed, in the same order (no list of them: the first solve of a 4,096-GPU
    /// all-to-all changes 16.7 M).
    pub fn resolve_each(&mut self, mut changed: impl FnMut(u32, u64, u64)) {
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
            let mut bound = self.caps[fs.cap as usize];
            // Its links join the search when it enters the set (`collect`).
            for &l in self.routes.get(fs.route) {
                let ls = &self.ln[l as usize];
                bound = bound.min(ls.capacity / ls.active as u64);
            }
            added_min = added_min.min(bound);
        }
        let mut threshold = self.threshold.min(added_min);
        if self.port_service {
            // A flow held at a port level sits a few bit/s (floors of shares) below the finished
            // flows it was held level with; a relative margin keeps it in the search.
            threshold -= threshold >> THRESHOLD_MARGIN_BITS;
        }
        self.threshold = u64::MAX;
        self.epoch += 1;
        let mut whole = self.collect(threshold);
        if threshold > 0 && self.port_service && self.reaches_port_rates() {
            // Rates set per port have no per-flow threshold (module comment).
            threshold = 0;
            self.epoch += 1;
            whole = self.collect(threshold);
        }
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
        if cacheable && self.apply_cached(&mut changed) {
            self.stats.cache_hits += 1;
            return;
        }
        self.set_old.clear();
        for k in 0..self.set_flows.len() {
            self.prefetch_ahead(&self.set_flows, k);
            self.set_old.push(self.fl[self.set_flows[k] as usize].rate);
        }
        self.sort_caps();
        self.round += 1;
        self.prepare(true);
        self.fill();
        let mut rounds = 1;
        while !self.set_ports.is_empty() && rounds < MAX_PORT_ROUNDS && self.relevel(rounds) {
            self.round += 1;
            self.prepare(false);
            self.fill();
            rounds += 1;
        }
        self.stats.port_rounds += u64::from(rounds - 1);
        if !self.set_ports.is_empty() {
            self.stats.port_solves += 1;
            self.stats.port_work += self.set_flows.len() as u64 * u64::from(rounds);
        }
        self.stats.max_fills = self.stats.max_fills.max(u64::from(rounds));
        for k in 0..self.set_flows.len() {
            self.prefetch_ahead(&self.set_flows, k);
            let f = self.set_flows[k];
            let rate = self.fl[f as usize].rate;
            if rate != self.set_old[k] {
                changed(f, self.set_old[k], rate);
            }
        }
        if cacheable {
            let cache = self.cache.as_mut().expect("checked");
            let caps = &self.caps;
            cache.store(&self.set_flows, &self.fl, |f| {
                (f.route, caps[f.cap as usize], f.rate)
            });
        }
    }

    /// Whether the search reached a link shared per port.
    fn reaches_port_rates(&self) -> bool {
        self.bfs
            .iter()
            .any(|&l| self.ln[l as usize].shared_per_port())
    }

    /// Breadth-first search from the seed links over flows with rate >= `threshold` (new
    /// flows have rate 0 and are in the set whatever the threshold): fills `set_flows` and
    /// `bfs` (every link of theirs). Returns whether the set is whole components.
    fn collect(&mut self, threshold: u64) -> bool {
        let ep = self.epoch;
        self.set_flows.clear();
        self.bfs.clear();
        for i in 0..self.seed_links.len() {
            let l = self.seed_links[i];
            if self.ln[l as usize].mark != ep {
                self.ln[l as usize].mark = ep;
                self.bfs.push(l);
            }
        }
        for i in 0..self.added.len() {
            let f = self.added[i] as usize;
            self.enter(f);
        }
        let mut whole = true;
        let mut head = 0;
        while head < self.bfs.len() {
            let l = self.bfs[head] as usize;
            head += 1;
            if threshold == 0 {
                self.scan_all(l);
            } else {
                whole &= self.scan_top(l, threshold);
            }
        }
        whole
    }

    /// Sets up a fill of the set: per link its residual capacity (minus the flows outside
    /// the set) and set-flow count; with port service, per link shared per port (all of whose
    /// flows are in the set: whole components) its level, the equal split `capacity / ports`
    /// on the `first` fill of a solve (`relevel` sets it for the next ones), and per port its
    /// set flows and the others' rates.
    fn prepare(&mut self, first: bool) {
        let round = self.round;
        self.set_links.clear();
        self.set_ports.clear();
        for k in 0..self.bfs.len() {
            let l = self.bfs[k] as usize;
            let ls = &mut self.ln[l];
            ls.count = 0;
            // Wrapping: a lowered capacity (`set_capacity`) may sit below the rates until the
            // set's own rates are added back below (every flow of the link is in the set then).
            ls.residual = ls.capacity.wrapping_sub(ls.sum);
            ls.per_port = self.port_service && ls.shared_per_port();
            if first && ls.per_port {
                ls.level = ls.capacity / ls.ports as u64;
                ls.lo = 0;
                ls.hi = ls.capacity + 1;
                ls.step = 0;
            }
        }
        for k in 0..self.set_flows.len() {
            self.prefetch_walk(&self.set_flows, k);
            let f = self.set_flows[k] as usize;
            self.fl[f].frozen = false;
            let rate = self.fl[f].rate;
            for i in self.hops(self.fl[f].route) {
                let l = self.routes.links[i] as usize;
                let ls = &mut self.ln[l];
                if ls.count == 0 {
                    self.set_links.push(l as u32);
                }
                ls.count += 1;
                ls.residual = ls.residual.wrapping_add(rate);
                if ls.per_port {
                    let p = self.hop_port[i] as usize;
                    let ps = &mut self.pt[p];
                    if ps.mark != round {
                        ps.mark = round;
                        ps.unfrozen = 0;
                        ps.fixed = ps.sum;
                        self.set_ports.push(p as u32);
                    }
                    ps.unfrozen += 1;
                    ps.fixed -= rate;
                }
            }
        }
    }

    /// After a fill with port service: a step to the fixed point of the port levels. A port
    /// of a link shared per port is held there when the fill took it to the link's level, or
    /// left it below with the link full and one of its flows among the link's fastest and with
    /// no bottleneck elsewhere (`bottleneck`); else it is slack: its flows are held elsewhere.
    /// The link gives its held ports an equal level and each slack port what its flows took,
    /// so its level should be (capacity - the slack ports' total) / held ports: the plain
    /// (Jacobi) step. Levels coupled through the flows of other links converge linearly so
    /// (each step about half the last on the 1,024-host permutation of `tests/flow_xval.rs`,
    /// up to 47 fills a solve), so after `rounds` fills, from the third on every second step
    /// is extrapolated from the link's last two plain ones (Aitken's delta-squared; Burden &
    /// Faires, "Numerical Analysis", 2.5). A level that moves back bisects the bracket it moved
    /// in, so a link's levels cannot cycle. Returns whether a level moved (then the set is
    /// filled again).
    fn relevel(&mut self, rounds: u32) -> bool {
        let bisect = rounds >= JACOBI_ROUNDS;
        let extrapolate = rounds >= 3 && rounds % 2 == 1;
        for &l in &self.set_links {
            let ls = &mut self.ln[l as usize];
            ls.top = 0;
            ls.held = 0;
            ls.slack = 0;
        }
        for &p in &self.set_ports {
            let ps = &mut self.pt[p as usize];
            ps.top = 0;
            let level = self.ln[ps.link as usize].level;
            ps.held = level - ps.sum.min(level) < ps.active as u64;
        }
        for k in 0..self.set_flows.len() {
            self.prefetch_walk(&self.set_flows, k);
            let f = &self.fl[self.set_flows[k] as usize];
            for i in self.hops(f.route) {
                let ls = &mut self.ln[self.routes.links[i] as usize];
                ls.top = ls.top.max(f.rate);
                if ls.per_port {
                    let ps = &mut self.pt[self.hop_port[i] as usize];
                    ps.top = ps.top.max(f.rate);
                }
            }
        }
        for k in 0..self.set_flows.len() {
            let f = self.fl[self.set_flows[k] as usize];
            if f.rate >= self.caps[f.cap as usize] {
                continue;
            }
            for i in self.hops(f.route) {
                let ls = &self.ln[self.routes.links[i] as usize];
                let n = ls.active as u64;
                let p = self.hop_port[i] as usize;
                if ls.per_port
                    && !self.pt[p].held
                    && ls.capacity - ls.sum < n
                    && ls.top - f.rate < n
                    && !self
                        .hops(f.route)
                        .any(|j| j != i && self.bottleneck(f.rate, j))
                {
                    self.pt[p].held = true;
                }
            }
        }
        for &p in &self.set_ports {
            let ps = &self.pt[p as usize];
            let ls = &mut self.ln[ps.link as usize];
            if ps.held {
                ls.held += 1;
            } else {
                ls.slack += ps.sum;
            }
        }
        let mut moved = false;
        for &l in &self.set_links {
            let ls = &mut self.ln[l as usize];
            if !ls.per_port || ls.held == 0 {
                continue;
            }
            let want = (ls.capacity - ls.slack) / ls.held as u64;
            let level = ls.level;
            if ls.hi - ls.lo <= 2 && (want > ls.hi || want < ls.lo) {
                // A bracket closed on a level the other links have since moved away from.
                ls.lo = 0;
                ls.hi = ls.capacity + 1;
            }
            let next = if !bisect {
                want
            } else if want > level {
                ls.lo = level;
                if want < ls.hi {
                    want
                } else {
                    level + (ls.hi - level) / 2
                }
            } else if want < level {
                ls.hi = level;
                if want > ls.lo {
                    want
                } else {
                    level - (level - ls.lo) / 2
                }
            } else {
                level
            };
            // Aitken's delta-squared: two plain steps d_prev, d shrinking by the ratio
            // d / d_prev point at level + d / (1 - d / d_prev), where a linearly converging
            // Jacobi sequence ends (inside the bracket only).
            let d = want as i128 - level as i128;
            let next = if extrapolate {
                let prev = std::mem::take(&mut ls.step) as i128;
                let ext = (d != 0 && (d > 0) == (prev > 0) && d.abs() < prev.abs())
                    .then(|| level as i128 + d * prev / (prev - d))
                    .filter(|&e| e > ls.lo as i128 && e < ls.hi as i128);
                ext.map_or(next, |e| e as u64)
            } else {
                ls.step = if next == want { d as i64 } else { 0 };
                next
            };
            moved |= next != level;
            ls.level = next;
        }
        moved
    }

    /// Whether hop `i`'s link is a bottleneck of its flow, at `rate`, after a fill: the link
    /// is full and no flow on it is faster, or, shared per port, the flow's port is at the
    /// link's level and no flow of the port is faster; each up to the floors of the shares
    /// (less than one bit/s per flow of the link or port).
    #[inline]
    fn bottleneck(&self, rate: u64, i: usize) -> bool {
        let ls = &self.ln[self.routes.links[i] as usize];
        let n = ls.active as u64;
        if ls.capacity - ls.sum < n && ls.top - rate < n {
            return true;
        }
        ls.per_port && {
            let ps = &self.pt[self.hop_port[i] as usize];
            let k = ps.active as u64;
            ps.top - rate < k && ls.level.saturating_sub(ps.sum) < k
        }
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

    /// Every active flow of link `l` joins the set.
    fn scan_all(&mut self, l: usize) {
        let fl = &self.fl;
        self.link_flows[l].retain(|&f| fl[f as usize].active);
        for k in 0..self.link_flows[l].len() {
            self.prefetch_walk(&self.link_flows[l], k);
            let f = self.link_flows[l][k] as usize;
            self.enter(f);
        }
    }

    /// The active flows of link `l` at or above `threshold` join the set; returns whether no
    /// other flow was left out. The link's list is kept sorted by rate (re-sorted only after
    /// its rates changed), so this reads only the flows it takes and the finished ones on top.
    fn scan_top(&mut self, l: usize, threshold: u64) -> bool {
        if !self.ln[l].sorted {
            // Sort (rate, flow) pairs: one rate read per flow, not one per comparison.
            let keyed = &mut self.sort_buf;
            keyed.clear();
            let list = &self.link_flows[l];
            for (k, &f) in list.iter().enumerate() {
                if let Some(&g) = list.get(k + PREFETCH_AHEAD) {
                    prefetch(&self.fl[g as usize]);
                }
                if self.fl[f as usize].active {
                    keyed.push((self.fl[f as usize].rate, f));
                }
            }
            keyed.sort_unstable();
            self.link_flows[l].clear();
            self.link_flows[l].extend(keyed.iter().map(|k| k.1));
            self.ln[l].sorted = true;
        }
        let mut i = self.link_flows[l].len();
        while i > 0 {
            let ahead = i.checked_sub(1 + PREFETCH_AHEAD);
            if let Some(&g) = ahead.and_then(|k| self.link_flows[l].get(k)) {
                prefetch(&self.fl[g as usize]);
            }
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
                    i -= 1; // a new flow (rate 0)
                    continue;
                }
                return false;
            }
            self.enter(f);
            i -= 1;
        }
        true
    }

    /// What the filling meets next: the lowest cap (headroom, flow) in `capped` from
    /// `next_cap` on, skipping flows already frozen, or the lowest share in the heap (ties go
    /// to the cap; the share stays in the heap then).
    fn next_step(&mut self, next_cap: &mut usize) -> Next {
        while *next_cap < self.capped.len() && self.fl[self.capped[*next_cap].1 as usize].frozen {
            *next_cap += 1;
        }
        let top = self.pop_lowest();
        match (top, self.capped.get(*next_cap).copied()) {
            (Some((s, e)), Some((c, f))) if c <= s => {
                self.heap.push(Reverse((s, e)));
                Next::Cap(c, f)
            }
            (None, Some((c, f))) => Next::Cap(c, f),
            (Some((s, e)), _) => Next::Share(s, e),
            (None, None) => Next::Done,
        }
    }

    /// The lowest share in the heap and its entry. Shares only grow as flows freeze, so an
    /// entry is a lower bound of its share: a stale one is re-pushed at the current share when
    /// it reaches the top (no push per frozen flow); entries with nothing left to share go.
    fn pop_lowest(&mut self) -> Option<(u64, u32)> {
        while let Some(&Reverse((s, e))) = self.heap.peek() {
            self.heap.pop();
            let Some(cur) = self.share(e) else {
                continue;
            };
            if cur == s {
                return Some((s, e));
            }
            self.heap.push(Reverse((cur, e)));
        }
        None
    }

    /// The share entry `e` offers its unfrozen flows now: a link's residual / count, or (at
    /// `e` >= the number of links) port `e - links`'s virtual link: its link's level minus
    /// the port's other flows / count.
    #[inline]
    fn share(&self, e: u32) -> Option<u64> {
        let nl = self.ln.len() as u32;
        if e < nl {
            let ls = &self.ln[e as usize];
            (ls.count > 0).then(|| ls.residual / ls.count as u64)
        } else {
            let ps = &self.pt[(e - nl) as usize];
            let level = self.ln[ps.link as usize].level;
            (ps.unfrozen > 0).then(|| level.saturating_sub(ps.fixed) / ps.unfrozen as u64)
        }
    }

    /// The set's capped flows by cap (`capped`), for every fill of a solve.
    fn sort_caps(&mut self) {
        self.capped.clear();
        for &f in &self.set_flows {
            let cap = self.caps[self.fl[f as usize].cap as usize];
            if cap != NO_CAP {
                self.capped.push((cap, f));
            }
        }
        self.capped.sort_unstable();
    }

    /// Progressive filling of `set_flows` on the capacity the flows outside the set leave,
    /// links shared per port holding each port to the link's level (a virtual link each).
    fn fill(&mut self) {
        let ep = self.epoch;
        let nl = self.ln.len() as u32;
        // Built in one pass and heapified (linear), not pushed entry by entry.
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.clear();
        for k in 0..self.set_links.len() {
            let l = self.set_links[k];
            let s = self.share(l).expect("a set link has set flows");
            entries.push(Reverse((s, l)));
        }
        for k in 0..self.set_ports.len() {
            let e = nl + self.set_ports[k];
            let s = self.share(e).expect("a set port has set flows");
            entries.push(Reverse((s, e)));
        }
        self.heap = BinaryHeap::from(entries);
        let mut next_cap = 0;
        loop {
            match self.next_step(&mut next_cap) {
                Next::Cap(c, f) => self.freeze(f, c),
                Next::Share(s, e) => {
                    let (port, list) = if e < nl {
                        (false, &self.link_flows[e as usize])
                    } else {
                        (true, &self.port_flows[(e - nl) as usize])
                    };
                    let n = list.len();
                    for k in 0..n {
                        if port {
                            self.prefetch_walk(&self.port_flows[(e - nl) as usize], k);
                        } else {
                            self.prefetch_walk(&self.link_flows[e as usize], k);
                        }
                        let f = if port {
                            self.port_flows[(e - nl) as usize][k]
                        } else {
                            self.link_flows[e as usize][k]
                        };
                        let fi = f as usize;
                        if self.fl[fi].in_set == ep && !self.fl[fi].frozen && self.fl[fi].active {
                            self.freeze(f, s);
                        }
                    }
                    if port {
                        let p = (e - nl) as usize;
                        let fl = &self.fl;
                        self.port_flows[p].retain(|&f| fl[f as usize].active);
                    }
                }
                Next::Done => break,
            }
        }
    }

    /// Freezes flow `f` at rate `r`, taking it from its links' residual capacities.
    fn freeze(&mut self, f: u32, r: u64) {
        let fi = f as usize;
        self.fl[fi].frozen = true;
        let old = self.fl[fi].rate;
        self.fl[fi].rate = r;
        for i in self.hops(self.fl[fi].route) {
            let l = self.routes.links[i] as usize;
            let ls = &mut self.ln[l];
            ls.sum = ls.sum - old + r;
            ls.sorted &= old == r;
            ls.residual -= r;
            ls.count -= 1;
            if self.port_service {
                let per_port = ls.per_port;
                let ps = &mut self.pt[self.hop_port[i] as usize];
                ps.sum = ps.sum - old + r;
                if per_port && ps.unfrozen > 0 {
                    ps.fixed += r;
                    ps.unfrozen -= 1;
                }
            }
        }
    }

    /// Applies cached rates when this component was solved before; false on a miss.
    fn apply_cached(&mut self, changed: &mut impl FnMut(u32, u64, u64)) -> bool {
        // Taken out for the loop below, which updates the solver's state.
        let mut cache = self.cache.take().expect("checked");
        let caps = &self.caps;
        let key = |f: &FlowState| (f.route, caps[f.cap as usize]);
        let Some(rates) = cache.lookup(&self.set_flows, &self.fl, key) else {
            self.cache = Some(cache);
            return false;
        };
        for (k, &r) in rates.iter().enumerate() {
            let f = self.set_flows[k];
            let fi = f as usize;
            let old = self.fl[fi].rate;
            if old != r {
                changed(f, old, r);
                self.fl[fi].rate = r;
                for i in self.hops(self.fl[fi].route) {
                    let l = self.routes.links[i] as usize;
                    self.ln[l].sum = self.ln[l].sum - old + r;
                    self.ln[l].sorted = false;
                    if self.port_service {
                        let p = self.hop_port[i] as usize;
                        self.pt[p].sum = self.pt[p].sum - old + r;
                    }
                }
            }
        }
        self.cache = Some(cache);
        true
    }
}

/// The next event of a progressive filling (`MaxMin::next_step`).
enum Next {
    /// Flow `.1` reaches its cap, `.0` above its current rate (a fill starts from 0).
    Cap(u64, u32),
    /// Entry `.1` (a link, or a port past the links) saturates at share `.0`.
    Share(u64, u32),
    Done,
}
