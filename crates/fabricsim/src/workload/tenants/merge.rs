//! Several jobs' message DAGs as one DAG over the shared topology: each job's messages in a
//! contiguous range, its dependencies shifted with it, its traffic class written on every
//! message; no dependency crosses jobs, so each job runs as it would alone but for the links
//! it shares.

use std::ops::Range;

use fabricsim_core::message::MessageDag;

/// The merged DAG and each part's message range, in the order given.
#[derive(Clone, Debug)]
pub struct Merged {
    pub dag: MessageDag,
    pub ranges: Vec<Range<u32>>,
}

/// `parts` merged: each a DAG on the shared topology's hosts, how many of its first messages
/// to take (a prefix whose dependencies all lie inside it, as every message's do), and the
/// class of its messages.
pub fn merge<'a>(parts: impl IntoIterator<Item = (&'a MessageDag, usize, Option<u8>)>) -> Merged {
    let mut dag = MessageDag::default();
    let mut ranges = Vec::new();
    for (part, n, class) in parts {
        let (first, deps) = (dag.messages.len() as u32, dag.deps.len() as u32);
        dag.deps.extend(part.deps.iter().map(|d| d + first));
        if !part.dep_gaps.is_empty() {
            dag.dep_gaps
                .resize(deps as usize, fabricsim_core::units::Time::ZERO);
            dag.dep_gaps.extend(&part.dep_gaps);
        } else if !dag.dep_gaps.is_empty() {
            dag.dep_gaps
                .resize(dag.deps.len(), fabricsim_core::units::Time::ZERO);
        }
        dag.messages.extend(part.messages[..n].iter().map(|m| {
            let mut m = m.clone();
            m.deps_start += deps;
            if class.is_some() {
                m.class = class;
            }
            m
        }));
        dag.nvlink_rate = dag.nvlink_rate.or(part.nvlink_rate);
        ranges.push(first..dag.messages.len() as u32);
    }
    Merged { dag, ranges }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_core::topology::HostId;
    use fabricsim_core::units::Time;

    fn chain(a: u32, b: u32) -> MessageDag {
        let mut d = MessageDag::default();
        let x = d.push(HostId(a), HostId(b), 10, Time::ZERO, &[]);
        d.push(HostId(b), HostId(a), 20, Time::ZERO, &[x]);
        d
    }

    #[test]
    fn parts_keep_their_own_dependencies_and_take_their_class() {
        let (p, q) = (chain(0, 1), chain(2, 3));
        let m = merge([(&p, 2, None), (&q, 2, Some(3))]);
        assert_eq!(m.ranges, [0..2, 2..4]);
        assert_eq!(merge([(&p, 1, None), (&q, 2, None)]).ranges, [0..1, 1..3]);
        assert_eq!(m.dag.deps_of(1), [0]);
        assert_eq!(m.dag.deps_of(3), [2]);
        assert_eq!(m.dag.messages[3].src, HostId(3));
        assert_eq!(m.dag.messages[1].class, None);
        assert_eq!(m.dag.messages[2].class, Some(3));
        assert_eq!(m.dag.total_bytes(), 60);
    }
}
