//! Sharing between traffic classes at each link: the flows of each class present are a max-min
//! problem of their own (one `MaxMin` each), and a link's capacity is divided between its
//! classes as its egress scheduler (`mech::params::Scheduling`) serves them in the fluid limit.
//!
//! The rule per link is hierarchical link sharing (Floyd & Jacobson, "Link-sharing and resource
//! management models for packet networks", IEEE/ACM ToN 1995): a tree whose leaves are classes,
//! whose strict-priority nodes serve their children in order (each child takes what it wants of
//! what the earlier ones leave) and whose weighted nodes split among their children by weight,
//! a child wanting less than its weighted share keeping only what it wants and the rest going to
//! the others by weight: weighted max-min, the fluid limit of deficit round robin with quanta as
//! weights (generalized processor sharing, Parekh & Gallager, IEEE/ACM ToN 1993; Shreedhar &
//! Varghese, SIGCOMM 1995). Strict priority is the packet engine's `StrictPriority`; ETS (IEEE
//! 802.1Qaz 37.3) its DWRR with strict classes first (`VlArb` with no high limit); IB VL
//! arbitration (IBA Vol. 1 7.6.9) the high table over the low one, strictly without a
//! Limit_of_High_Priority, else weighted by the bytes each table sends per turn under backlog
//! (the high table's limit rounded up to whole frames plus one frame, against one low frame).
//!
//! What a class wants at a link is read from its own solve: a class whose flows fill the share
//! it was given (up to the floors of shares) wants more (unbounded); one below its share is held
//! elsewhere and wants what it takes, plus a margin of 2^-10 and a bit/s per flow so that it stays
//! below; what no class wants is then divided again by the same rule among the classes with
//! flows there (room a class held elsewhere grows into until the next division). The shares and the solves are a fixed point:
//! solve every class, re-divide the links whose rates moved, and solve again the classes whose
//! shares changed, at most `MAX_CLASS_ROUNDS` solves; every round ends on a solve, so the rates
//! are feasible whether or not the shares settled. A class with flows keeps at least a bit/s per
//! flow at every link (the solver's rates are positive), a starved class under strict priority
//! drains at that trickle until the higher class leaves.
//!
//! One class present (every run without `[classes]`): the one solver, nothing else.

use super::maxmin::{MaxMin, Routes, SolveStats};

/// The most solves of every class per `resolve` (the shares' fixed point; `SolveStats::max_class_rounds`).
pub const MAX_CLASS_ROUNDS: u32 = 16;

/// A link's division between classes (leaves: solver indices).
#[derive(Clone, Debug, PartialEq)]
pub enum Share {
    Leaf(usize),
    /// Children in priority order.
    Strict(Vec<Share>),
    /// Children with their weights.
    Weighted(Vec<(u64, Share)>),
}

impl Share {
    /// What the subtree wants given each leaf's `want` (saturating).
    fn want(&self, want: &[u64]) -> u64 {
        match self {
            Share::Leaf(c) => want[*c],
            Share::Strict(v) => v.iter().fold(0u64, |a, s| a.saturating_add(s.want(want))),
            Share::Weighted(v) => v.iter().fold(0u64, |a, s| a.saturating_add(s.1.want(want))),
        }
    }

    /// Divides `amount` over the subtree into `out` (per leaf).
    fn give(&self, amount: u64, want: &[u64], out: &mut [u64]) {
        match self {
            Share::Leaf(c) => out[*c] = amount,
            Share::Strict(v) => {
                let mut left = amount;
                for s in v {
                    let g = s.want(want).min(left);
                    s.give(g, want, out);
                    left -= g;
                }
            }
            Share::Weighted(v) => {
                // Weighted max-min: children in order of want per weight; each wanting less than
                // its weighted share of what is left takes its want, the rest split by weight.
                let wants: Vec<u64> = v.iter().map(|s| s.1.want(want)).collect();
                let mut order: Vec<usize> = (0..v.len()).collect();
                order.sort_by(|&a, &b| {
                    (wants[a] as u128 * v[b].0 as u128).cmp(&(wants[b] as u128 * v[a].0 as u128))
                });
                let mut left = amount;
                let mut weight: u64 = v.iter().map(|s| s.0).sum();
                let mut k = 0;
                while k < order.len() {
                    let i = order[k];
                    let fair = (left as u128 * v[i].0 as u128 / weight.max(1) as u128) as u64;
                    if wants[i] > fair {
                        break;
                    }
                    v[i].1.give(wants[i], want, out);
                    left -= wants[i];
                    weight -= v[i].0;
                    k += 1;
                }
                for &i in &order[k..] {
                    let fair = (left as u128 * v[i].0 as u128 / weight.max(1) as u128) as u64;
                    v[i].1.give(fair, want, out);
                }
            }
        }
    }

    /// The leaves under this node.
    fn leaves(&self) -> usize {
        match self {
            Share::Leaf(_) => 1,
            Share::Strict(v) => v.iter().map(Share::leaves).sum(),
            Share::Weighted(v) => v.iter().map(|s| s.1.leaves()).sum(),
        }
    }
}

/// The division for scheduling `how` among the engine classes `present` (ascending; leaf `i`
/// is `present[i]`), `frame` the wire bytes of a full frame (VL arbitration's turn).
pub fn share_rule(how: fabricsim_mech::params::Scheduling, present: &[u8], frame: u64) -> Share {
    use fabricsim_mech::params::Scheduling;
    let leaf = |i: usize| Share::Leaf(i);
    match how {
        Scheduling::StrictPriority => Share::Strict((0..present.len()).map(leaf).collect()),
        Scheduling::Dwrr { quantum_bytes } => Share::Weighted(
            (0..present.len())
                .map(|i| (quantum_bytes[present[i] as usize].max(1) as u64, leaf(i)))
                .collect(),
        ),
        Scheduling::VlArb {
            high,
            weight_bytes,
            high_limit_bytes,
        } => {
            let table = |hi: bool| {
                Share::Weighted(
                    (0..present.len())
                        .filter(|&i| (high & (1 << present[i]) != 0) == hi)
                        .map(|i| (weight_bytes[present[i] as usize].max(1) as u64, leaf(i)))
                        .collect(),
                )
            };
            let (h, l) = (table(true), table(false));
            match (h.leaves(), l.leaves()) {
                (0, _) => l,
                (_, 0) => h,
                _ if high_limit_bytes == u32::MAX => Share::Strict(vec![h, l]),
                _ => {
                    // Under backlog the high table sends until past its limit (whole frames),
                    // then one low-table frame (`packet::sched`).
                    let high_turn = (high_limit_bytes as u64 / frame.max(1) + 1) * frame;
                    Share::Weighted(vec![(high_turn, h), (frame, l)])
                }
            }
        }
    }
}

/// The flows' rates, one max-min solver per traffic class present.
pub struct Sharing {
    /// The first class's solver (the only one without classes) and the others'.
    first: MaxMin,
    rest: Vec<MaxMin>,
    /// Per flow: its solver (empty with one class).
    of: Vec<u8>,
    rule: Share,
    /// Per directed link: its capacity.
    phys: Vec<u64>,
    /// Links whose division may have changed, and their marks.
    touched: Vec<u32>,
    link_mark: Vec<u32>,
    /// Flows whose rates changed in this resolve, with their rates before it.
    moved: Vec<(u32, u64)>,
    flow_mark: Vec<u32>,
    /// Marks of `link_mark` (per division) and `flow_mark` (per resolve).
    epoch: u32,
    flow_epoch: u32,
    scratch: Vec<(u32, u64)>,
    want: Vec<u64>,
    out: Vec<u64>,
    spare: Vec<u64>,
    rounds: u64,
    max_rounds: u64,
}

impl Sharing {
    /// Flow `f` of `num_flows` in class `class_of[f]` (solver index; empty: one class) on
    /// `routes`, links of `capacity` bit/s shared between classes by `rule`.
    pub fn new(
        capacity: Vec<u64>,
        routes: Routes,
        num_flows: usize,
        class_of: Vec<u8>,
        rule: Share,
    ) -> Sharing {
        let k = if class_of.is_empty() {
            1
        } else {
            rule.leaves()
        };
        let nl = capacity.len();
        let rest = (1..k)
            .map(|_| MaxMin::new(capacity.clone(), routes.clone(), num_flows))
            .collect();
        let many = k > 1;
        Sharing {
            first: MaxMin::new(capacity.clone(), routes, num_flows),
            rest,
            of: if many { class_of } else { Vec::new() },
            rule,
            phys: capacity,
            touched: Vec::new(),
            link_mark: if many { vec![0; nl] } else { Vec::new() },
            moved: Vec::new(),
            flow_mark: if many { vec![0; num_flows] } else { Vec::new() },
            epoch: 1,
            flow_epoch: 1,
            scratch: Vec::new(),
            want: vec![0; k],
            out: vec![0; k],
            spare: Vec::new(),
            rounds: 0,
            max_rounds: 0,
        }
    }

    /// `MaxMin::with_cache` with one class (shares moving under a component make its cached
    /// rates stale, so several classes solve without).
    pub fn with_cache(mut self, max_entries: usize) -> Sharing {
        if self.rest.is_empty() {
            self.first = self.first.with_cache(max_entries);
        }
        self
    }

    /// `MaxMin::with_port_service`, in every class.
    pub fn with_port_service(mut self, served: impl Fn(u32) -> bool) -> Sharing {
        self.first = self.first.with_port_service(&served);
        self.rest = std::mem::take(&mut self.rest)
            .into_iter()
            .map(|m| m.with_port_service(&served))
            .collect();
        self
    }

    /// Traffic classes solved apart.
    pub fn classes(&self) -> usize {
        1 + self.rest.len()
    }

    /// Class `c`'s solver.
    #[inline]
    fn solver(&self, c: usize) -> &MaxMin {
        if c == 0 {
            &self.first
        } else {
            &self.rest[c - 1]
        }
    }

    #[inline]
    fn solver_mut(&mut self, c: usize) -> &mut MaxMin {
        if c == 0 {
            &mut self.first
        } else {
            &mut self.rest[c - 1]
        }
    }

    /// Every class's solver, in order.
    fn all(&self) -> impl Iterator<Item = &MaxMin> {
        std::iter::once(&self.first).chain(&self.rest)
    }

    #[inline]
    fn of(&self, f: u32) -> &MaxMin {
        if self.of.is_empty() {
            &self.first
        } else {
            self.solver(self.of[f as usize] as usize)
        }
    }

    #[inline]
    fn of_mut(&mut self, f: u32) -> &mut MaxMin {
        if self.of.is_empty() {
            &mut self.first
        } else {
            let c = self.of[f as usize] as usize;
            self.solver_mut(c)
        }
    }

    pub fn port_service(&self) -> bool {
        self.first.port_service()
    }
    pub fn end_port_service(&mut self) {
        self.first.end_port_service();
        self.rest.iter_mut().for_each(MaxMin::end_port_service);
    }
    pub fn routes(&self) -> &Routes {
        self.first.routes()
    }
    /// Adds a route (in every class: route ids are shared).
    pub fn push_route(&mut self, links: &[u32]) -> u32 {
        let r = self.first.push_route(links);
        for m in &mut self.rest {
            m.push_route(links);
        }
        r
    }
    /// Active flows on directed link `l`, every class.
    #[inline]
    pub fn load(&self, l: u32) -> u32 {
        if self.rest.is_empty() {
            self.first.load(l)
        } else {
            self.all().map(|m| m.load(l)).sum()
        }
    }
    /// The capacity of directed link `l`, bit/s (all classes').
    #[inline]
    pub fn capacity(&self, l: u32) -> u64 {
        self.phys[l as usize]
    }
    /// Sum of the current rates on directed link `l`, every class.
    #[inline]
    pub fn used_bps(&self, l: u32) -> u64 {
        if self.rest.is_empty() {
            self.first.used_bps(l)
        } else {
            self.all().map(|m| m.used_bps(l)).sum()
        }
    }
    #[inline]
    pub fn rate(&self, f: u32) -> u64 {
        self.of(f).rate(f)
    }
    #[inline]
    pub fn route(&self, f: u32) -> u32 {
        self.of(f).route(f)
    }
    #[inline]
    pub fn prefetch_flow(&self, f: u32) {
        self.first.prefetch_flow(f)
    }
    #[inline]
    pub fn prefetch_route(&self, f: u32) {
        self.first.prefetch_route(f)
    }
    #[inline]
    pub fn prefetch_links(&self, f: u32) {
        self.first.prefetch_links(f)
    }
    #[inline]
    pub fn is_active(&self, f: u32) -> bool {
        self.of(f).is_active(f)
    }

    /// Every class's counters summed, with the class rounds.
    pub fn stats(&self) -> SolveStats {
        let mut s = SolveStats::default();
        for m in self.all() {
            s.merge(&m.stats());
        }
        s.class_rounds = self.rounds;
        s.max_class_rounds = self.max_rounds;
        s
    }

    pub fn add(&mut self, f: u32, route: u32, cap: u64) {
        self.of_mut(f).add(f, route, cap);
        self.touch_route(route);
    }

    pub fn remove(&mut self, f: u32) {
        let r = self.route(f);
        self.of_mut(f).remove(f);
        self.touch_route(r);
    }

    pub fn set_cap(&mut self, f: u32, cap: u64) -> bool {
        self.of_mut(f).set_cap(f, cap)
    }

    fn touch_route(&mut self, r: u32) {
        if self.rest.is_empty() {
            return;
        }
        for &l in self.first.routes().get(r) {
            if self.link_mark[l as usize] != self.epoch {
                self.link_mark[l as usize] = self.epoch;
                self.touched.push(l);
            }
        }
    }

    /// `MaxMin::resolve_each` over the classes and their shares (module comment): `changed`
    /// once per flow whose rate moved, with its rate before and after.
    pub fn resolve_each(&mut self, mut changed: impl FnMut(u32, u64, u64)) {
        if self.rest.is_empty() {
            return self.first.resolve_each(changed);
        }
        let mut rounds = 0u64;
        loop {
            let scratch = &mut self.scratch;
            self.first.resolve_each(|f, old, _| scratch.push((f, old)));
            for m in &mut self.rest {
                m.resolve_each(|f, old, _| scratch.push((f, old)));
            }
            rounds += 1;
            for k in 0..self.scratch.len() {
                let (f, old) = self.scratch[k];
                if self.flow_mark[f as usize] != self.flow_epoch {
                    self.flow_mark[f as usize] = self.flow_epoch;
                    self.moved.push((f, old));
                }
                let r = self.route(f);
                self.touch_route(r);
            }
            self.scratch.clear();
            if rounds == MAX_CLASS_ROUNDS as u64 || !self.divide() {
                break;
            }
        }
        self.rounds += rounds;
        self.max_rounds = self.max_rounds.max(rounds);
        for k in 0..self.moved.len() {
            let (f, old) = self.moved[k];
            let now = self.rate(f);
            if now != old {
                changed(f, old, now);
            }
        }
        self.moved.clear();
        self.flow_epoch = self.flow_epoch.wrapping_add(1).max(1);
    }

    /// Re-divides the touched links between their classes; returns whether a share changed.
    fn divide(&mut self) -> bool {
        let mut any = false;
        let touched = std::mem::take(&mut self.touched);
        // Links touched from here on are marked afresh.
        self.epoch = self.epoch.wrapping_add(1).max(1);
        for &l in &touched {
            for (c, m) in std::iter::once(&self.first).chain(&self.rest).enumerate() {
                let n = m.load(l) as u64;
                let (used, cap) = (m.used_bps(l), m.capacity(l));
                self.want[c] = if n == 0 {
                    0
                } else if used + n >= cap {
                    u64::MAX
                } else {
                    used + (used >> 10) + n
                };
            }
            let cap = self.phys[l as usize];
            self.rule.give(cap, &self.want, &mut self.out);
            // What no class wants goes to the classes here by the same rule (work conserving:
            // a class held elsewhere has room to grow into until the next division).
            let left = cap - self.out.iter().sum::<u64>().min(cap);
            if left > 0 {
                for (c, m) in std::iter::once(&self.first).chain(&self.rest).enumerate() {
                    self.want[c] = if m.load(l) > 0 { u64::MAX } else { 0 };
                }
                let mut extra = std::mem::take(&mut self.spare);
                extra.clear();
                extra.resize(self.out.len(), 0);
                self.rule.give(left, &self.want, &mut extra);
                for (o, e) in self.out.iter_mut().zip(&extra) {
                    *o += e;
                }
                self.spare = extra;
            }
            for (c, m) in std::iter::once(&mut self.first)
                .chain(&mut self.rest)
                .enumerate()
            {
                let n = m.load(l) as u64;
                // A class with no flows here keeps the whole link until it has some.
                let cap = if n == 0 {
                    self.phys[l as usize]
                } else {
                    self.out[c].max(n)
                };
                if cap != m.capacity(l) {
                    m.set_capacity(l, cap);
                    any = true;
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_mech::params::{MAX_TC, Scheduling};

    const INF: u64 = u64::MAX;

    fn give(rule: &Share, amount: u64, want: &[u64]) -> Vec<u64> {
        let mut out = vec![0; want.len()];
        rule.give(amount, want, &mut out);
        out
    }

    #[test]
    fn strict_priority_serves_in_order_and_weights_split_by_weight() {
        let sp = share_rule(Scheduling::StrictPriority, &[1, 2], 4182);
        assert_eq!(give(&sp, 100, &[INF, INF]), vec![100, 0]);
        assert_eq!(give(&sp, 100, &[30, INF]), vec![30, 70]);
        let mut q = [0u32; MAX_TC];
        q[1] = 3;
        q[2] = 1;
        let w = share_rule(Scheduling::Dwrr { quantum_bytes: q }, &[1, 2], 4182);
        assert_eq!(give(&w, 100, &[INF, INF]), vec![75, 25]);
        // A class wanting less than its weighted share keeps its want; the other gets the rest.
        assert_eq!(give(&w, 100, &[INF, 10]), vec![90, 10]);
        assert_eq!(give(&w, 100, &[20, INF]), vec![20, 80]);
    }

    #[test]
    fn vl_arbitration_is_strict_without_a_limit_and_weighted_by_turns_with_one() {
        let mut wb = [0u32; MAX_TC];
        wb[1] = 256;
        wb[2] = 256;
        let vl = |limit| Scheduling::VlArb {
            high: 1 << 1,
            weight_bytes: wb,
            high_limit_bytes: limit,
        };
        let strict = share_rule(vl(u32::MAX), &[1, 2], 4000);
        assert_eq!(give(&strict, 100, &[INF, INF]), vec![100, 0]);
        // Limit 0: one high frame per low frame under backlog.
        let alt = share_rule(vl(0), &[1, 2], 4000);
        assert_eq!(give(&alt, 100, &[INF, INF]), vec![50, 50]);
        // Limit of 3 frames' bytes: 4 high frames per low one.
        let four = share_rule(vl(12_000), &[1, 2], 4000);
        assert_eq!(give(&four, 100, &[INF, INF]), vec![80, 20]);
    }

    /// Two flows of two classes over one 100 bit/s link.
    fn two_classes(rule: Share, cap_b: u64) -> (u64, u64) {
        let mut routes = Routes::new();
        routes.push(&[0]);
        let mut s = Sharing::new(vec![100_000], routes, 2, vec![0, 1], rule);
        s.add(0, 0, super::super::maxmin::NO_CAP);
        s.add(1, 0, cap_b);
        s.resolve_each(|_, _, _| {});
        (s.rate(0), s.rate(1))
    }

    #[test]
    fn sharing_solves_each_class_on_the_share_its_scheduler_gives() {
        let sp = share_rule(Scheduling::StrictPriority, &[1, 2], 4182);
        // The high class takes the link; the low one keeps a bit/s per flow.
        assert_eq!(two_classes(sp, super::super::maxmin::NO_CAP), (100_000, 1));
        let mut q = [0u32; MAX_TC];
        q[1] = 1;
        q[2] = 1;
        let w = share_rule(Scheduling::Dwrr { quantum_bytes: q }, &[1, 2], 4182);
        assert_eq!(
            two_classes(w.clone(), super::super::maxmin::NO_CAP),
            (50_000, 50_000)
        );
        // The second class held at 20,000 by its cap: the first takes the rest but the margin
        // (20,000 >> 10 and a bit/s).
        assert_eq!(two_classes(w, 20_000), (79_980, 20_000));
    }
}
