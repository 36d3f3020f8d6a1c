//! Max-min fair rates of weighted flow classes by progressive filling (Bertsekas & Gallager,
//! "Data Networks", 2nd ed., 6.5.2), from scratch: a class stands for many flows that all get
//! its one rate, and crosses each link of a link group with an integer weight, its flows'
//! load on that link per bit/s of the class rate, times a common scale `Q` (an even ECMP split
//! puts a fraction of a flow on each path). Every link of a group carries the same classes
//! with the same weights (`dense` builds them so), so a group is filled as one link.
//!
//! Raise every unfrozen class together; the next level is the least of the groups'
//! `floor(residual / unfrozen weight)` and the classes' caps; freeze the classes of the
//! groups that fill at it (and those capped at it). Integer throughout, as `maxmin`: a level
//! is a floor, so every group stays within its capacity and the result does not depend on
//! floating-point rounding.

/// The classes, the groups and their weights.
pub struct Weighted {
    /// Per group: one link's capacity (bit/s) times `Q`.
    cap: Vec<u128>,
    /// Per class: its entries are `entries[start[k] .. start[k + 1]]`.
    start: Vec<u32>,
    /// (group, weight): the class's load on each link of the group per bit/s, times `Q`.
    entries: Vec<(u32, u64)>,
    /// Per class: the most one of its flows may take (bit/s; `maxmin::NO_CAP` for none).
    class_cap: Vec<u64>,
}

impl Weighted {
    /// Groups of one link capacity each (bit/s) under the scale `q`.
    pub fn new(link_cap: &[u64], q: u64) -> Weighted {
        Weighted {
            cap: link_cap.iter().map(|&c| c as u128 * q as u128).collect(),
            start: vec![0],
            entries: Vec::new(),
            class_cap: Vec::new(),
        }
    }

    /// Adds the next class with its cap and its (group, weight) entries.
    pub fn push_class(&mut self, cap: u64, entries: &[(u32, u64)]) {
        self.entries.extend_from_slice(entries);
        self.start.push(self.entries.len() as u32);
        self.class_cap.push(cap);
    }

    pub fn classes(&self) -> usize {
        self.class_cap.len()
    }

    pub fn groups(&self) -> usize {
        self.cap.len()
    }

    fn of(&self, k: usize) -> &[(u32, u64)] {
        &self.entries[self.start[k] as usize..self.start[k + 1] as usize]
    }

    /// The rate of every class with `active[k]` into `rate[k]` (others untouched); returns the
    /// number of levels filled.
    pub fn solve(&self, active: &[bool], rate: &mut [u64]) -> u32 {
        let mut residual = self.cap.clone();
        let mut unfrozen = vec![0u128; self.cap.len()];
        let mut open: Vec<usize> = (0..self.classes()).filter(|&k| active[k]).collect();
        for &k in &open {
            for &(g, w) in self.of(k) {
                unfrozen[g as usize] += w as u128;
            }
        }
        let mut levels = 0;
        let mut full = vec![false; self.cap.len()];
        while !open.is_empty() {
            levels += 1;
            let by_groups = (0..self.cap.len())
                .filter(|&g| unfrozen[g] > 0)
                .map(|g| residual[g] / unfrozen[g])
                .min();
            let by_caps = open.iter().map(|&k| self.class_cap[k] as u128).min();
            let level = by_groups
                .unwrap_or(u128::MAX)
                .min(by_caps.unwrap_or(u128::MAX));
            let level = level.min(u64::MAX as u128) as u64;
            for g in 0..self.cap.len() {
                full[g] = unfrozen[g] > 0 && residual[g] / unfrozen[g] == level as u128;
            }
            open.retain(|&k| {
                let frozen =
                    self.class_cap[k] <= level || self.of(k).iter().any(|&(g, _)| full[g as usize]);
                if frozen {
                    rate[k] = level;
                    for &(g, w) in self.of(k) {
                        residual[g as usize] -= w as u128 * level as u128;
                        unfrozen[g as usize] -= w as u128;
                    }
                }
                !frozen
            });
        }
        levels
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::maxmin::NO_CAP;

    #[test]
    fn weighted_classes_share_as_their_flows_would() {
        // Group 0 (100 bit/s) carries class 0 with 3 flows and class 1 with 1; class 1 also
        // puts 2 flows on group 1 (10 bit/s), which holds it at 5; class 0 takes
        // (100 - 5) / 3 = 31.
        let mut w = Weighted::new(&[100, 10], 1);
        w.push_class(NO_CAP, &[(0, 3)]);
        w.push_class(NO_CAP, &[(0, 1), (1, 2)]);
        let mut rate = vec![0; 2];
        assert_eq!(w.solve(&[true, true], &mut rate), 2);
        assert_eq!(rate, vec![31, 5]);
        // Half a flow per link (an even split over two links) under the scale 2: weight 1
        // of capacity 2 x 10: class 1 reaches 20 on group 1, class 0 its (100 - 20) / 3 = 26.
        let mut w = Weighted::new(&[100, 10], 2);
        w.push_class(NO_CAP, &[(0, 6)]);
        w.push_class(NO_CAP, &[(0, 2), (1, 1)]);
        let mut rate = vec![0; 2];
        w.solve(&[true, true], &mut rate);
        assert_eq!(rate, vec![26, 20]);
        // A cap freezes its class first; an inactive class takes nothing.
        let mut w = Weighted::new(&[100], 1);
        w.push_class(7, &[(0, 2)]);
        w.push_class(NO_CAP, &[(0, 1)]);
        w.push_class(NO_CAP, &[(0, 50)]);
        let mut rate = vec![0; 3];
        w.solve(&[true, true, false], &mut rate);
        assert_eq!(rate, vec![7, 86, 0]);
    }
}
