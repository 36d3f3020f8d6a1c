//! NCCL's double binary tree all-reduce (Sanders, Speck and Träff 2009; NCCL 2.4
//! `src/graph/trees.cc`).
//!
//! Two binary trees over the comm ranks, the second the mirror (even n) or the shift by one
//! (odd n) of the first, so every rank is a leaf in one of them; each carries half the data.
//! Per pipeline chunk, a rank sends its partial sum to its parent once both children's chunks
//! have arrived (reduce), then the root's result flows back down (broadcast): a rank forwards
//! a chunk to its children when it received it from its parent. The trees here span the comm
//! ranks directly (NCCL builds them over nodes, with a chain inside each node).

use super::{Builder, Comm, Frontier, Lane, piece, start_frontier};

/// Parent of `rank` in NCCL's binary tree over `n` ranks (`ncclGetBtree`); `None` at the root.
pub fn btree_parent(n: usize, rank: usize) -> Option<usize> {
    if rank == 0 {
        return None;
    }
    let mut bit = 1;
    while bit < n && bit & rank == 0 {
        bit <<= 1;
    }
    let up = (rank ^ bit) | (bit << 1);
    Some(if up >= n { rank ^ bit } else { up })
}

/// Parent of `rank` in tree `t` (0 or 1) of the double binary tree (`ncclGetDtree`).
pub fn dtree_parent(n: usize, t: usize, rank: usize) -> Option<usize> {
    if t == 0 {
        btree_parent(n, rank)
    } else if n % 2 == 1 {
        btree_parent(n, (rank + n - 1) % n).map(|u| (u + 1) % n)
    } else {
        btree_parent(n, n - 1 - rank).map(|u| n - 1 - u)
    }
}

pub fn all_reduce(
    b: &mut Builder,
    comm: &Comm,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let n = comm.len();
    let mut out = start_frontier(n);
    for t in 0..2 {
        let half = piece(bytes, 2, t as u64);
        let parent: Vec<Option<usize>> = (0..n).map(|r| dtree_parent(n, t, r)).collect();
        let root = (0..n)
            .find(|&r| parent[r].is_none())
            .expect("a tree has a root");
        let depth: Vec<usize> = (0..n)
            .map(|mut r| {
                let mut d = 0;
                while let Some(p) = parent[r] {
                    r = p;
                    d += 1;
                }
                d
            })
            .collect();
        // Deepest first for the reduce, shallowest first for the broadcast.
        let mut up_order: Vec<usize> = (0..n).filter(|&r| r != root).collect();
        up_order.sort_by_key(|&r| (std::cmp::Reverse(depth[r]), r));
        let mut down_order = up_order.clone();
        down_order.reverse();
        let chunks = lane.chunks(half);
        let qp = lane.channel * 2 + t as u32;
        let mut up_msg = vec![u32::MAX; n];
        let mut down_msg = vec![u32::MAX; n];
        let mut deps = Vec::new();
        for c in 0..chunks {
            let len = piece(half, chunks, c);
            let from_children = |r: usize, up_msg: &[u32], deps: &mut Vec<u32>| {
                deps.extend((0..n).filter(|&k| parent[k] == Some(r)).map(|k| up_msg[k]));
            };
            for &r in &up_order {
                deps.clear();
                deps.extend_from_slice(&ready[r]);
                from_children(r, &up_msg, &mut deps);
                let p = parent[r].expect("non-root");
                up_msg[r] = b.send(comm.gpus[r], comm.gpus[p], len, &deps, qp, 0);
            }
            let mut root_done = Vec::new();
            from_children(root, &up_msg, &mut root_done);
            for &r in &down_order {
                let p = parent[r].expect("non-root");
                deps.clear();
                if p == root {
                    deps.extend_from_slice(&ready[root]);
                    deps.extend_from_slice(&root_done);
                } else {
                    deps.push(down_msg[p]);
                }
                down_msg[r] = b.send(comm.gpus[p], comm.gpus[r], len, &deps, qp, 1);
                out[r].push(down_msg[r]);
            }
            out[root].extend(root_done);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncclgetbtree_shape_for_eight_ranks() {
        // NCCL trees.cc comment: 0 is the root with child 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5, 7.
        let p: Vec<Option<usize>> = (0..8).map(|r| btree_parent(8, r)).collect();
        assert_eq!(
            p,
            vec![
                None,
                Some(2),
                Some(4),
                Some(2),
                Some(0),
                Some(6),
                Some(4),
                Some(6)
            ]
        );
    }

    #[test]
    fn every_rank_is_interior_in_at_most_one_tree() {
        for n in 2..40 {
            for t in 0..2 {
                let roots = (0..n).filter(|&r| dtree_parent(n, t, r).is_none()).count();
                assert_eq!(roots, 1, "n={n} t={t}");
            }
            for r in 0..n {
                let interior = (0..2)
                    .filter(|&t| (0..n).any(|k| dtree_parent(n, t, k) == Some(r)))
                    .count();
                assert!(
                    n < 3 || interior <= 1 || r == 0 || r == n - 1,
                    "n={n} r={r}"
                );
            }
        }
    }
}
