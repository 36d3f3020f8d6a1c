//! Transformer model descriptions: the presets shipped in data/models/*.toml (each number
//! cited there) and custom models built from the same keys.

use serde::Deserialize;

use fabricsim_core::error::{InputError, Source};

/// A decoder-only transformer, dense or mixture-of-experts.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    pub id: String,
    pub name: String,
    pub layers: u64,
    pub hidden: u64,
    /// FFN hidden size (per expert for MoE).
    pub ffn: u64,
    pub heads: u64,
    /// Key/value heads (query groups); equal to `heads` for multi-head attention.
    pub kv_heads: u64,
    /// Per-head dimension; `hidden / heads` when absent.
    #[serde(default)]
    pub head_dim: Option<u64>,
    pub vocab: u64,
    /// Gated MLP with three matrices (SwiGLU) instead of two.
    pub swiglu: bool,
    /// Routed experts per MoE layer; 0 for a dense model.
    #[serde(default)]
    pub experts: u64,
    /// Experts each token is routed to (1 for a dense model).
    #[serde(default = "one")]
    pub top_k: u64,
    /// FFN hidden size of the always-active shared experts (0: none).
    #[serde(default)]
    pub shared_ffn: u64,
    /// Dropout layers (their masks are stored activations, Korthikanti et al. 2022 §4.1);
    /// true when absent.
    #[serde(default = "yes")]
    pub dropout: bool,
    /// Training sequence length (tokens).
    pub seq: u64,
    /// Sequences per optimizer step.
    pub global_batch: u64,
}

fn one() -> u64 {
    1
}

fn yes() -> bool {
    true
}

/// The shipped presets: (id, file name, TOML text).
const PRESETS: [(&str, &str); 6] = [
    (
        "llama3-8b.toml",
        include_str!("../../../../../data/models/llama3-8b.toml"),
    ),
    (
        "llama3-70b.toml",
        include_str!("../../../../../data/models/llama3-70b.toml"),
    ),
    (
        "llama3-405b.toml",
        include_str!("../../../../../data/models/llama3-405b.toml"),
    ),
    (
        "gpt3-175b.toml",
        include_str!("../../../../../data/models/gpt3-175b.toml"),
    ),
    (
        "mixtral-8x7b.toml",
        include_str!("../../../../../data/models/mixtral-8x7b.toml"),
    ),
    (
        "deepseek-v3.toml",
        include_str!("../../../../../data/models/deepseek-v3.toml"),
    ),
];

impl ModelSpec {
    pub fn head_dim(&self) -> u64 {
        self.head_dim.unwrap_or(self.hidden / self.heads.max(1))
    }

    pub fn is_moe(&self) -> bool {
        self.experts > 0
    }

    /// Experts a token's FFN work goes through (1 for a dense model).
    pub fn routed(&self) -> u64 {
        if self.is_moe() { self.top_k } else { 1 }
    }

    /// Parses a model file (the preset format).
    pub fn parse(name: &str, text: &str) -> Result<ModelSpec, InputError> {
        let src = Source::new(name, text);
        toml::from_str(text).map_err(|e| InputError::from_toml(&src, &e))
    }

    /// All shipped presets, in a fixed order.
    pub fn presets() -> Vec<ModelSpec> {
        PRESETS
            .iter()
            .map(|(file, text)| {
                ModelSpec::parse(&format!("data/models/{file}"), text)
                    .expect("shipped presets parse (tested)")
            })
            .collect()
    }

    pub fn preset_ids() -> Vec<String> {
        ModelSpec::presets().into_iter().map(|m| m.id).collect()
    }

    /// The preset `id`; `key` names the flag or file key for the error.
    pub fn preset(key: &str, id: &str) -> Result<ModelSpec, InputError> {
        ModelSpec::presets()
            .into_iter()
            .find(|m| m.id == id)
            .ok_or_else(|| {
                InputError::flag(
                    key,
                    id,
                    "unknown model preset",
                    ModelSpec::preset_ids().join(", "),
                )
            })
    }

    /// Parameters (weights) of one transformer layer, split into (dense, expert) parts.
    /// Dense: attention Q, K, V and output projections, shared experts; expert: routed experts
    /// (the dense MLP of a dense model counts as dense). Norms and biases are left out.
    pub fn layer_params(&self) -> (u64, u64) {
        let (h, dh) = (self.hidden, self.head_dim());
        let attn = h * self.heads * dh * 2 + h * self.kv_heads * dh * 2;
        let mats = if self.swiglu { 3 } else { 2 };
        let mlp = mats * h * self.ffn;
        let shared = mats * h * self.shared_ffn;
        if self.is_moe() {
            (attn + shared, mlp * self.experts)
        } else {
            (attn + mlp + shared, 0)
        }
    }

    /// Input embedding and output projection (untied), each vocab x hidden.
    pub fn embedding_params(&self) -> u64 {
        self.vocab * self.hidden
    }

    /// Total parameters: layers, embedding and output projection.
    pub fn params(&self) -> u64 {
        let (d, e) = self.layer_params();
        self.layers * (d + e) + 2 * self.embedding_params()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_parse_and_have_the_published_sizes() {
        // Published totals: Llama 3 8B / 70B / 405B (arXiv 2407.21783), GPT-3 175B, Mixtral
        // 46.7B total (arXiv 2401.04088 §1), DeepSeek-V3 671B (arXiv 2412.19437 abstract). The
        // counts here leave out norms and biases and model MLA as MHA, so allow a margin.
        let want = [
            ("llama3-8b", 8.0e9),
            ("llama3-70b", 70.6e9),
            ("llama3-405b", 405.9e9),
            ("gpt3-175b", 175.0e9),
            ("mixtral-8x7b", 46.7e9),
            ("deepseek-v3", 671.0e9),
        ];
        let presets = ModelSpec::presets();
        assert_eq!(presets.len(), want.len());
        for (m, (id, params)) in presets.iter().zip(want) {
            assert_eq!(m.id, id);
            let got = m.params() as f64;
            assert!(
                (got / params - 1.0).abs() < 0.08,
                "{id}: {got:e} vs {params:e}"
            );
        }
    }
}
