//! The dependency release of a `MessageDag`, shared by the packet and the flow engine.
//!
//! A message is posted at `max(start, finish of its last dependency + delay)` (the contract in
//! `message`), a dependency's finish counted with its gap when the DAG has gaps
//! (`MessageDag::dep_gaps`); messages without dependencies at their `start`. The tracker holds each message's
//! dependants (CSR, from `MessageDag::children`) and its count of unfinished dependencies, and
//! tells the engine which messages a completion releases and when they post.

use crate::error::CoreError;
use crate::message::MessageDag;
use crate::units::Time;

pub struct Release {
    children_start: Vec<u32>,
    children: Vec<u32>,
    pending: Vec<u32>,
    /// Per child edge (parallel to `children`): its dependency gap; empty when the DAG has none.
    gaps: Vec<Time>,
    /// Per message: the latest `finish + gap` of its met dependencies; empty without gaps.
    met: Vec<Time>,
}

impl Release {
    /// The tracker of `dag`, or an error naming the first dependency that does not point to an
    /// earlier message (a DAG in topological order is what both engines take).
    pub fn new(dag: &MessageDag) -> Result<Release, CoreError> {
        for i in 0..dag.messages.len() {
            if let Some(&d) = dag.deps_of(i as u32).iter().find(|&&d| d as usize >= i) {
                return Err(CoreError::Dag(format!(
                    "message {i} depends on {d}, which does not come before it"
                )));
            }
        }
        let (children_start, children) = dag.children();
        let n = dag.messages.len();
        let (mut gaps, mut met) = (Vec::new(), Vec::new());
        if !dag.dep_gaps.is_empty() {
            // The same fill order as `MessageDag::children`: a parent's children by message.
            gaps = vec![Time::ZERO; children.len()];
            let mut fill = children_start.clone();
            for i in 0..n {
                for (&d, &g) in dag.deps_of(i as u32).iter().zip(dag.gaps_of(i as u32)) {
                    gaps[fill[d as usize] as usize] = g;
                    fill[d as usize] += 1;
                }
            }
            met = vec![Time::ZERO; n];
        }
        Ok(Release {
            children_start,
            children,
            pending: dag.messages.iter().map(|m| m.deps_len).collect(),
            gaps,
            met,
        })
    }

    /// Whether some message waits for `m`.
    #[inline]
    pub fn has_dependants(&self, m: u32) -> bool {
        self.children_start[m as usize] != self.children_start[m as usize + 1]
    }

    /// `m` completed at `now`: calls `post(c, at)` for every dependant `c` it was the last
    /// unfinished dependency of, in message order, with `c`'s post time `at`.
    pub fn complete(
        &mut self,
        dag: &MessageDag,
        m: u32,
        now: Time,
        mut post: impl FnMut(u32, Time),
    ) {
        let (a, b) = (
            self.children_start[m as usize] as usize,
            self.children_start[m as usize + 1] as usize,
        );
        for (j, &c) in self.children[a..b].iter().enumerate() {
            // Finishes come in time order, so without gaps the last one is the latest.
            let met = if self.gaps.is_empty() {
                now
            } else {
                let m = &mut self.met[c as usize];
                *m = (*m).max(now + self.gaps[a + j]);
                *m
            };
            let left = &mut self.pending[c as usize];
            *left -= 1;
            if *left == 0 {
                let msg = &dag.messages[c as usize];
                post(c, msg.start.max(met + msg.delay));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::HostId;

    /// A diamond 0 -> {1, 2} -> 3: message 3 posts when its later dependency finishes, plus
    /// its delay, and not before its own start (the `message` contract).
    #[test]
    fn releases_after_the_last_dependency() {
        let mut dag = MessageDag::default();
        let (a, b) = (HostId(0), HostId(1));
        let m0 = dag.push(a, b, 1, Time::ZERO, &[]);
        let m1 = dag.push(a, b, 1, Time::ZERO, &[m0]);
        let m2 = dag.push(a, b, 1, Time(500), &[m0]);
        let m3 = dag.push(a, b, 1, Time::ZERO, &[m1, m2]);
        dag.messages[m3 as usize].delay = Time(7);
        let mut r = Release::new(&dag).unwrap();
        assert!(r.has_dependants(m0) && !r.has_dependants(m3));
        let mut posted = Vec::new();
        r.complete(&dag, m0, Time(100), |c, at| posted.push((c, at.ps())));
        // m2's start (500) is after its release (100).
        assert_eq!(posted, vec![(m1, 100), (m2, 500)]);
        posted.clear();
        r.complete(&dag, m1, Time(200), |c, at| posted.push((c, at.ps())));
        assert!(posted.is_empty(), "m3 still waits for m2");
        r.complete(&dag, m2, Time(600), |c, at| posted.push((c, at.ps())));
        assert_eq!(posted, vec![(m3, 607)]);
    }

    /// With gaps, a dependency counts from its finish plus its gap: the earlier finish with
    /// the longer gap can be the one that posts the message.
    #[test]
    fn a_gap_delays_only_its_own_dependency() {
        let mut dag = MessageDag::default();
        let (a, b) = (HostId(0), HostId(1));
        let m0 = dag.push(a, b, 1, Time::ZERO, &[]);
        let m1 = dag.push(a, b, 1, Time::ZERO, &[]);
        let m2 = dag.push(a, b, 1, Time::ZERO, &[m0, m1]);
        let m3 = dag.push(a, b, 1, Time::ZERO, &[m1]);
        dag.set_gap(m2, 0, Time(1000));
        dag.messages[m2 as usize].delay = Time(5);
        assert_eq!(dag.gaps_of(m2), [Time(1000), Time::ZERO]);
        assert_eq!(dag.gaps_of(m3), [Time::ZERO]);
        let mut r = Release::new(&dag).unwrap();
        let mut posted = Vec::new();
        r.complete(&dag, m0, Time(100), |c, at| posted.push((c, at.ps())));
        assert!(posted.is_empty());
        r.complete(&dag, m1, Time(300), |c, at| posted.push((c, at.ps())));
        // m2: max(100 + 1000, 300 + 0) + 5; m3 at m1's finish.
        assert_eq!(posted, vec![(m2, 1105), (m3, 300)]);
    }

    #[test]
    fn refuses_a_forward_dependency() {
        let mut dag = MessageDag::default();
        dag.push(HostId(0), HostId(1), 1, Time::ZERO, &[]);
        dag.deps.push(1);
        dag.messages[0].deps_len = 1;
        let e = Release::new(&dag).err().unwrap();
        assert!(e.to_string().contains("message 0 depends on 1"), "{e}");
    }
}
