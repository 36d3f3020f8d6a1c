//! Recursive halving (reduce-scatter) and recursive doubling (all-gather); all-reduce as both
//! (Rabenseifner's algorithm; Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective
//! Communication Operations in MPICH"). Needs a power-of-two rank count.
//!
//! Reduce-scatter: at distance d = n/2, n/4, ..., 1 rank p exchanges with p XOR d, keeps the
//! half of its range on its side and sends the other half, which waits for what p received at
//! the previous distance. Each rank sends S/2 + S/4 + ... + S/n = (n-1)/n * S and ends with
//! segment p. All-gather runs the distances upwards, doubling the range each step.

use super::{Builder, Comm, Frontier, Lane, Phases, piece};

struct State {
    /// Segment range [lo, hi) each rank holds.
    range: Vec<(usize, usize)>,
    /// Last message each rank received and sent (u32::MAX: none yet).
    recv: Vec<u32>,
    sent: Vec<u32>,
}

impl State {
    fn new(n: usize, whole: bool) -> State {
        State {
            range: (0..n)
                .map(|p| if whole { (0, n) } else { (p, p + 1) })
                .collect(),
            recv: vec![u32::MAX; n],
            sent: vec![u32::MAX; n],
        }
    }

    fn deps(&self, p: usize, ready: &Frontier, deps: &mut Vec<u32>) {
        deps.clear();
        deps.extend_from_slice(&ready[p]);
        deps.extend(
            [self.recv[p], self.sent[p]]
                .into_iter()
                .filter(|&m| m != u32::MAX),
        );
    }

    fn frontier(&self) -> Frontier {
        (0..self.recv.len())
            .map(|p| {
                [self.recv[p], self.sent[p]]
                    .into_iter()
                    .filter(|&m| m != u32::MAX)
                    .collect()
            })
            .collect()
    }
}

fn range_bytes(bytes: u64, n: usize, (lo, hi): (usize, usize)) -> u64 {
    (lo..hi).map(|s| piece(bytes, n as u64, s as u64)).sum()
}

/// One step at distance `d`: rank p sends `len(st, p)` bytes to p XOR d once its ready
/// messages and its previous step are done; records what each rank sent and received.
#[allow(clippy::too_many_arguments)]
fn exchange(
    b: &mut Builder,
    comm: &Comm,
    lane: Lane,
    ready: &Frontier,
    st: &mut State,
    d: usize,
    step: u32,
    len: impl Fn(&State, usize) -> u64,
) {
    let n = comm.len();
    let mut deps = Vec::new();
    let msgs: Vec<u32> = (0..n)
        .map(|p| {
            st.deps(p, ready, &mut deps);
            let bytes = len(st, p);
            b.send(
                comm.gpus[p],
                comm.gpus[p ^ d],
                bytes,
                &deps,
                lane.channel,
                step,
            )
        })
        .collect();
    for p in 0..n {
        st.sent[p] = msgs[p];
        st.recv[p] = msgs[p ^ d];
    }
}

fn halving(b: &mut Builder, comm: &Comm, bytes: u64, lane: Lane, ready: &Frontier, st: &mut State) {
    let n = comm.len();
    let mut d = n / 2;
    let mut step = 0;
    while d >= 1 {
        // Send the half of the range on the partner's side.
        exchange(b, comm, lane, ready, st, d, step, |st, p| {
            let (lo, hi) = st.range[p];
            let mid = (lo + hi) / 2;
            range_bytes(bytes, n, if p & d == 0 { (mid, hi) } else { (lo, mid) })
        });
        for p in 0..n {
            let (lo, hi) = st.range[p];
            let mid = (lo + hi) / 2;
            st.range[p] = if p & d == 0 { (lo, mid) } else { (mid, hi) };
        }
        d /= 2;
        step += 1;
    }
}

fn doubling(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    st: &mut State,
) {
    let n = comm.len();
    let mut d = 1;
    let mut step = 0;
    while d < n {
        // Send the whole range held; both partners then hold the union.
        exchange(b, comm, lane, ready, st, d, step, |st, p| {
            range_bytes(bytes, n, st.range[p])
        });
        let before = st.range.clone();
        for p in 0..n {
            let (a, c) = (before[p], before[p ^ d]);
            st.range[p] = (a.0.min(c.0), a.1.max(c.1));
        }
        d *= 2;
        step += 1;
    }
}

/// Halving for the reduce-scatter, then doubling for the all-gather, as `ph` asks.
pub fn run(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
    ph: Phases,
) -> Frontier {
    // A reduce-scatter starts from the whole buffer; an all-gather from each rank's segment.
    let mut st = State::new(comm.len(), ph.reduce_scatter);
    if ph.reduce_scatter {
        halving(b, comm, bytes, lane, ready, &mut st);
    }
    debug_assert!((0..comm.len()).all(|p| st.range[p] == (p, p + 1)));
    if ph.all_gather {
        doubling(b, comm, bytes, lane, ready, &mut st);
    }
    st.frontier()
}
