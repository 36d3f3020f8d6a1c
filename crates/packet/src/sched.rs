//! Egress scheduling between a port's traffic classes: strict priority, or deficit weighted
//! round robin (Shreedhar & Varghese, "Efficient fair queueing using deficit round robin",
//! SIGCOMM 1995). Classes whose `blocked` bit is set (link-level flow control) are skipped.

use super::packet::{Fifo, QueueArena};
use fabricsim_mech::params::{MAX_TC, Scheduling};

/// Per-port DWRR state.
#[derive(Clone, Debug)]
pub struct SchedState {
    next: u8,
    /// The class at `next` has not yet received its quantum for this visit.
    fresh: bool,
    deficit: [u32; MAX_TC],
    /// VL arbitration: bytes the high-priority table sent since the low one last sent.
    high_sent: u32,
}

impl Default for SchedState {
    fn default() -> Self {
        SchedState {
            next: 0,
            fresh: true,
            deficit: [0; MAX_TC],
            high_sent: 0,
        }
    }
}

/// The class to serve next among `queues` (one per class), or `None` when none may send.
/// Call `served` after popping from it. Strict priority inlined into the caller (the packet
/// engine's dequeue), the weighted disciplines a call.
#[inline(always)]
pub fn pick(
    how: Scheduling,
    st: &mut SchedState,
    blocked: u8,
    queues: &[Fifo],
    a: &QueueArena,
) -> Option<usize> {
    match how {
        Scheduling::StrictPriority => {
            (0..queues.len()).find(|&c| blocked & (1 << c) == 0 && !queues[c].is_empty())
        }
        _ => pick_weighted(how, st, blocked, queues, a),
    }
}

/// `pick` under the weighted disciplines (DWRR, IB VL arbitration).
#[inline(never)]
fn pick_weighted(
    how: Scheduling,
    st: &mut SchedState,
    blocked: u8,
    queues: &[Fifo],
    a: &QueueArena,
) -> Option<usize> {
    let n = queues.len();
    let eligible = |c: usize| blocked & (1 << c) == 0 && !queues[c].is_empty();
    match how {
        Scheduling::StrictPriority => unreachable!("strict priority is picked inline"),
        Scheduling::Dwrr { quantum_bytes } => dwrr(st, &quantum_bytes, eligible, queues, a),
        Scheduling::VlArb {
            high,
            weight_bytes,
            high_limit_bytes,
        } => {
            let in_table = |t: u8| move |c: usize| eligible(c) && t & (1 << c) != 0;
            let high_ready = (0..n).any(in_table(high));
            let low_ready = (0..n).any(in_table(!high));
            // IBA 7.6.9: past Limit_of_High_Priority a waiting low-priority packet goes next.
            let table = if high_ready && !(low_ready && st.high_sent > high_limit_bytes) {
                high
            } else {
                !high
            };
            let c = dwrr(st, &weight_bytes, in_table(table), queues, a)?;
            if table == high {
                let head = queues[c].head(a).expect("picked").1 as u32;
                st.high_sent = st.high_sent.saturating_add(head);
            } else {
                st.high_sent = 0;
            }
            Some(c)
        }
    }
}

/// Deficit round robin among the classes `eligible` accepts.
#[inline]
fn dwrr(
    st: &mut SchedState,
    quantum_bytes: &[u32; MAX_TC],
    eligible: impl Fn(usize) -> bool,
    queues: &[Fifo],
    a: &QueueArena,
) -> Option<usize> {
    let n = queues.len();
    if !(0..n).any(&eligible) {
        return None;
    }
    loop {
        let c = st.next as usize;
        if eligible(c) {
            if st.fresh {
                st.deficit[c] += quantum_bytes[c].max(1);
                st.fresh = false;
            }
            let head = queues[c].head(a).expect("eligible").1 as u32;
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

/// After serving class `c`: an emptied class forfeits its deficit and the turn moves on.
#[inline]
pub fn served(how: Scheduling, st: &mut SchedState, c: usize, queues: &[Fifo]) {
    if let Scheduling::Dwrr { .. } | Scheduling::VlArb { .. } = how
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

    /// One queue per class and their arena.
    struct Backlog {
        q: Vec<Fifo>,
        a: QueueArena,
    }

    fn backlog(frames: &[u16]) -> Backlog {
        let mut a = QueueArena::default();
        let q = frames
            .iter()
            .map(|&f| {
                let mut q = Fifo::default();
                for i in 0..10_000 {
                    q.push(&mut a, i, f);
                }
                q
            })
            .collect();
        Backlog { q, a }
    }

    /// Serves `n` packets; returns the bytes each class got.
    fn serve(how: Scheduling, blocked: u8, b: &mut Backlog, n: usize) -> Vec<u64> {
        let (queues, a) = (&mut b.q, &b.a);
        let mut st = SchedState::default();
        let mut bytes = vec![0; queues.len()];
        for _ in 0..n {
            let c = pick(how, &mut st, blocked, queues, a).unwrap();
            bytes[c] += queues[c].pop(a).unwrap().1 as u64;
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
    fn vl_arbitration_serves_the_high_table_first_and_weights_the_low_one() {
        // IBA 7.6.9 (simplified): VL0 high priority; VL1 and VL2 low with weights 2:1.
        let mut w = [0u32; MAX_TC];
        w[0] = 1000;
        w[1] = 2000;
        w[2] = 1000;
        let how = Scheduling::VlArb {
            high: 0b001,
            weight_bytes: w,
            high_limit_bytes: u32::MAX,
        };
        let mut queues = backlog(&[100, 100, 100]);
        assert_eq!(serve(how, 0, &mut queues, 50), vec![5000, 0, 0]);
        let b = serve(how, 0b001, &mut queues, 3000);
        let ratio = b[1] as f64 / b[2] as f64;
        assert!(b[0] == 0 && (ratio - 2.0).abs() < 0.05, "{b:?}");
    }

    /// IBA 7.6.9 Limit_of_High_Priority: with a limit of 4 KB the high table sends just over
    /// 4 KB (41 packets of 100 B), then one low-priority packet goes; with limit 0 (OpenSM's
    /// default) they alternate packet by packet.
    #[test]
    fn vl_arbitration_gives_low_priority_a_packet_past_the_high_limit() {
        let w = [256; MAX_TC];
        for (limit, high_per_low) in [(4096, 41), (0, 1)] {
            let how = Scheduling::VlArb {
                high: 0b01,
                weight_bytes: w,
                high_limit_bytes: limit,
            };
            let b = serve(how, 0, &mut backlog(&[100, 100]), 10 * (high_per_low + 1));
            assert_eq!(b, vec![1000 * high_per_low as u64, 1000], "limit {limit}");
        }
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
            pick(
                Scheduling::StrictPriority,
                &mut st,
                0b11,
                &queues.q,
                &queues.a
            ),
            None
        );
    }
}
