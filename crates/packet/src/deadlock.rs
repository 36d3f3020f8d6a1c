//! Deadlock detection for lossless fabrics: a wait-for graph whose vertices are blocked egress
//! queues (port, class) and whose edge a -> b says queue a waits for buffer held by packets queued
//! at b (a's downstream ingress holds packets waiting in b). A cycle of such queues that makes
//! no progress is a PFC / credit deadlock (Hu et al., "Deadlocks in datacenter networks: why do
//! they form, and how to avoid them", HotNets 2016; Guo et al., SIGCOMM 2016).

/// The first cycle found (vertices in order along the edges), or `None`. `adj[v]` lists `v`'s
/// successors; the search visits vertices and edges in index order, so the answer is
/// deterministic.
pub fn find_cycle(adj: &[Vec<u32>]) -> Option<Vec<u32>> {
    // 0 = unvisited, 1 = on the stack, 2 = done.
    let n = adj.len();
    let mut color = vec![0u8; n];
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for root in 0..n {
        if color[root] != 0 {
            continue;
        }
        color[root] = 1;
        stack.push((root as u32, 0));
        while let Some(&mut (v, ref mut k)) = stack.last_mut() {
            if let Some(&w) = adj[v as usize].get(*k) {
                *k += 1;
                match color[w as usize] {
                    0 => {
                        color[w as usize] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        let at = stack.iter().position(|e| e.0 == w).expect("on stack");
                        return Some(stack[at..].iter().map(|e| e.0).collect());
                    }
                    _ => {}
                }
            } else {
                color[v as usize] = 2;
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_ring_and_ignores_a_chain() {
        // 0 -> 1 -> 2 -> 3 -> 1: the cycle is 1, 2, 3.
        let adj = vec![vec![1], vec![2], vec![3], vec![1]];
        assert_eq!(find_cycle(&adj), Some(vec![1, 2, 3]));
        let chain = vec![vec![1], vec![2], vec![]];
        assert_eq!(find_cycle(&chain), None);
        // A diamond is not a cycle.
        let diamond = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert_eq!(find_cycle(&diamond), None);
    }
}
