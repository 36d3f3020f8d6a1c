//! Egress scheduling between a port's traffic classes: strict priority, or deficit weighted
//! round robin (Shreedhar & Varghese, "Efficient fair queueing using deficit round robin",
//! SIGCOMM 1995). Classes whose `blocked` bit is set (link-level flow control) are skipped.

use super::packet::Fifo;
use super::params::{MAX_TC, Scheduling};

/// Per-port DWRR state.
#[derive(Clone, Debug)]
pub struct SchedState {
    next: u8,
    /// The class at `next` has not yet received its quantum for this visit.
    fresh: bool,
    deficit: [u32; MAX_TC],
}

impl Default for SchedState {
    fn default() -> Self {
        SchedState {
            next: 0,
            fresh: true,
            deficit: [0; MAX_TC],
        }
    }
}

/// The class to serve next among `queues` (one per class), or `None` when none may send.
/// Call `served` after popping from it.
#[inline]
pub fn pick(how: Scheduling, st: &mut SchedState, blocked: u8, queues: &[Fifo]) -> Option<usize> {
    let n = queues.len();
    let eligible = |c: usize| blocked & (1 << c) == 0 && !queues[c].is_empty();
    match how {
        Scheduling::StrictPriority => (0..n).find(|&c| eligible(c)),
        Scheduling::Dwrr { quantum_bytes } => {
            if !(0..n).any(eligible) {
                return None;
            }
            loop {
                let c = st.next as usize;
                if eligible(c) {
                    if st.fresh {
                        st.deficit[c] += quantum_bytes[c].max(1);
                        st.fresh = false;
                    }
                    let head = queues[c].head().expect("eligible").1 as u32;
                    if st.deficit[c] >= head {
                        st.deficit[c] -= head;
                        return Some(c);
                    }
                } else if queues[c].is_empty() {
                    st.deficit[c] = 0;
                }
                st.next = ((c + 1) % n) as u8;
                st.fresh = true;
            }
        }
    }
}

/// After serving class `c`: an emptied class forfeits its deficit and the turn moves on.
#[inline]
pub fn served(how: Scheduling, st: &mut SchedState, c: usize, queues: &[Fifo]) {
    if let Scheduling::Dwrr { .. } = how
        && queues[c].is_empty()
    {
        st.deficit[c] = 0;
        st.next = ((c + 1) % queues.len()) as u8;
        st.fresh = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backlog(frames: &[u16]) -> Vec<Fifo> {
        frames
            .iter()
            .map(|&f| {
                let mut q = Fifo::default();
                for i in 0..10_000 {
                    q.push(i, f);
                }
                q
            })
            .collect()
    }

    /// Serves `n` packets; returns the bytes each class got.
    fn serve(how: Scheduling, blocked: u8, queues: &mut [Fifo], n: usize) -> Vec<u64> {
        let mut st = SchedState::default();
        let mut bytes = vec![0; queues.len()];
        for _ in 0..n {
            let c = pick(how, &mut st, blocked, queues).unwrap();
            bytes[c] += queues[c].pop().unwrap().1 as u64;
            served(how, &mut st, c, queues);
        }
        bytes
    }

    #[test]
    fn dwrr_shares_bytes_in_proportion_to_quanta() {
        // Backlogged classes get bandwidth in the ratio of their quanta, whatever their packet
        // sizes (the DRR fairness property).
        let mut q = [0u32; MAX_TC];
        q[0] = 3000;
        q[1] = 1000;
        let how = Scheduling::Dwrr { quantum_bytes: q };
        let b = serve(how, 0, &mut backlog(&[1500, 700]), 4000);
        let ratio = b[0] as f64 / b[1] as f64;
        assert!((ratio - 3.0).abs() < 0.05, "{b:?}");
    }

    #[test]
    fn strict_priority_serves_the_lowest_class_and_skips_blocked_ones() {
        let mut queues = backlog(&[100, 100]);
        assert_eq!(
            serve(Scheduling::StrictPriority, 0, &mut queues, 10),
            vec![1000, 0]
        );
        assert_eq!(
            serve(Scheduling::StrictPriority, 1, &mut queues, 10),
            vec![0, 1000]
        );
        let mut st = SchedState::default();
        assert_eq!(
            pick(Scheduling::StrictPriority, &mut st, 0b11, &queues),
            None
        );
    }
}
