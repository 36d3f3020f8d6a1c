//! The KV cache a prefill hands to decode: its bytes from the model shape (keys and values of
//! every layer and KV head for every prompt token, Vaswani et al. 2017 §3.2; grouped-query
//! attention keeps `kv_heads` of them, Ainslie et al. 2023, arXiv 2305.13245), and how they
//! move between the two instances' tensor-parallel ranks (each rank holds its heads' cache,
//! Megatron's head split: Shoeybi et al. 2019, arXiv 1909.08053 §3).

use std::collections::BTreeMap;

use crate::workload::train::model::ModelSpec;

/// Bytes of the KV cache of `tokens` tokens: 2 (K and V) x layers x kv_heads x head_dim x
/// tokens x bytes per element.
pub fn kv_bytes(m: &ModelSpec, tokens: u64, bytes_per_element: u64) -> u64 {
    2 * m.layers * m.kv_heads * m.head_dim() * tokens * bytes_per_element
}

/// The rank of a `tp`-way group that holds KV head `h` of `heads`: heads split in contiguous
/// blocks when there are at least `tp`; with fewer, each head on `tp / heads` ranks, the
/// first of which is named here.
fn owner(h: u64, heads: u64, tp: u64) -> u64 {
    h * tp / heads
}

/// The ranks of a `tp`-way group that need KV head `h` of `heads` (one when heads >= tp,
/// else every rank replicating it).
fn holders(h: u64, heads: u64, tp: u64) -> impl Iterator<Item = u64> {
    (0..tp).filter(move |&r| {
        if heads >= tp {
            r * heads / tp <= h && h < (r + 1) * heads / tp
        } else {
            r * heads / tp == h
        }
    })
}

/// The transfers of one request's KV cache of `tokens` tokens from a `tp_prefill`-way prefill
/// instance to a `tp_decode`-way decode instance: (prefill rank, decode rank, bytes), each
/// head's bytes sent once to every decode rank that holds it, in rank order.
pub fn shards(
    m: &ModelSpec,
    tokens: u64,
    bytes_per_element: u64,
    tp_prefill: u64,
    tp_decode: u64,
) -> Vec<(u32, u32, u64)> {
    let heads = m.kv_heads.max(1);
    let per_head = kv_bytes(m, tokens, bytes_per_element) / heads;
    let mut pairs: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for h in 0..heads {
        let src = owner(h, heads, tp_prefill) as u32;
        for dst in holders(h, heads, tp_decode) {
            *pairs.entry((src, dst as u32)).or_default() += per_head;
        }
    }
    pairs.into_iter().map(|((s, d), b)| (s, d, b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_bytes_are_the_closed_form_and_shards_sum_to_them() {
        let m = ModelSpec::preset("", "llama3-70b").unwrap();
        // 2 x 80 layers x 8 KV heads x 128 head dim x 2 bytes = 327,680 bytes per token
        // (Llama 3 Table 3 shape, bf16).
        assert_eq!(kv_bytes(&m, 1, 2), 327_680);
        assert_eq!(kv_bytes(&m, 2048, 2), 2048 * 327_680);
        assert_eq!(kv_bytes(&m, 2048, 1), 2048 * 163_840);
        let s = shards(&m, 2048, 2, 8, 8);
        assert_eq!(s.len(), 8);
        assert!(s.iter().all(|&(a, b, _)| a == b));
        assert_eq!(s.iter().map(|x| x.2).sum::<u64>(), kv_bytes(&m, 2048, 2));
        // TP 4 -> TP 2: ranks 0,1 -> 0 and 2,3 -> 1, nothing duplicated.
        let s = shards(&m, 100, 2, 4, 2);
        assert_eq!(
            s.iter().map(|x| (x.0, x.1)).collect::<Vec<_>>(),
            [(0, 0), (1, 0), (2, 1), (3, 1)]
        );
        assert_eq!(s.iter().map(|x| x.2).sum::<u64>(), kv_bytes(&m, 100, 2));
        // 8 KV heads on TP 16: each head on two decode ranks, so twice the bytes move.
        let s = shards(&m, 100, 2, 8, 16);
        assert_eq!(s.len(), 16);
        assert_eq!(s.iter().map(|x| x.2).sum::<u64>(), 2 * kv_bytes(&m, 100, 2));
    }
}
