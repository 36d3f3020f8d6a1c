//! `[frontend]`: the front-end hosts a serving deployment's requests come from (north-south
//! traffic, issue 28 item 5). They are a tier of the cluster's last servers, placed as the
//! `[storage]` tier is (`jobs::tier`; on the jobs' fabric or a network of their own); each
//! request's prompt is sent from one of them to its prefill GPU before the prefill may start
//! (`workload::serve::frontend`), and each output token streamed back from its decode GPU.
//!
//! ```toml
//! [frontend]
//! servers = 1                  # the cluster's last servers (before [storage]'s) take requests
//! nics = 1                     # NIC ports each sends on (default [cluster] nics_per_node)
//! fabric = "shared"            # on the serving GPUs' fabric, or "separate" (its own network)
//! prompt_bytes_per_token = 4   # bytes of the prompt per token
//! response_bytes_per_token = 4 # bytes of each streamed output token
//! ```

use serde::Deserialize;

use super::Scenario;
use super::jobs::{self, HostTier};
use fabricsim_core::error::InputError;

/// Prompt bytes per token when the file does not say: the front-end tokenizes and ships token
/// ids as 32-bit integers (the `input_ids` INT32 tensor of NVIDIA's TensorRT-LLM Triton
/// backend, triton-inference-server/tensorrtllm_backend `all_models/inflight_batcher_llm/
/// tensorrt_llm/config.pbtxt`); untokenized English text is about the same, roughly 4
/// characters per token (OpenAI's tokenizer help, "What are tokens and how to count them?").
pub const DEFAULT_PROMPT_BYTES_PER_TOKEN: u64 = 4;

/// Most prompt bytes per token (an ESTIMATE of a generous bound: a multimodal prompt's
/// embeddings of 8,192 bf16 values per token are 16 KiB).
pub const MAX_PROMPT_BYTES_PER_TOKEN: i64 = 16_384;

/// Response bytes per token when the file does not say: the decode returns token ids as 32-bit
/// integers (the `output_ids` INT32 tensor of the same TensorRT-LLM Triton backend
/// `config.pbtxt`), about the 4 characters of English text a token detokenizes to (OpenAI's
/// tokenizer help, as above).
pub const DEFAULT_RESPONSE_BYTES_PER_TOKEN: u64 = 4;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FrontendSection {
    pub servers: Option<i64>,
    pub nics: Option<i64>,
    pub fabric: Option<String>,
    pub prompt_bytes_per_token: Option<i64>,
    pub response_bytes_per_token: Option<i64>,
}

/// The front-end hosts, checked against nothing but themselves (the driver places them on the
/// cluster).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frontend {
    pub tier: HostTier,
    pub prompt_bytes_per_token: u64,
    pub response_bytes_per_token: u64,
}

/// The scenario's `[frontend]`, checked; `None` when it has none.
pub fn frontend(s: &Scenario) -> Result<Option<Frontend>, InputError> {
    let Some(f) = &s.file.frontend else {
        return Ok(None);
    };
    let tier = jobs::tier(s, "frontend", f.servers, f.nics, f.fabric.as_deref())?;
    let prompt_bytes_per_token = bytes_per_token(
        s,
        "prompt",
        f.prompt_bytes_per_token,
        DEFAULT_PROMPT_BYTES_PER_TOKEN,
    )?;
    let response_bytes_per_token = bytes_per_token(
        s,
        "response",
        f.response_bytes_per_token,
        DEFAULT_RESPONSE_BYTES_PER_TOKEN,
    )?;
    Ok(Some(Frontend {
        tier,
        prompt_bytes_per_token,
        response_bytes_per_token,
    }))
}

/// `frontend.<what>_bytes_per_token`, checked: 1 to [`MAX_PROMPT_BYTES_PER_TOKEN`], `default`
/// when absent.
fn bytes_per_token(
    s: &Scenario,
    what: &str,
    given: Option<i64>,
    default: u64,
) -> Result<u64, InputError> {
    match given {
        None => Ok(default),
        Some(b) if (1..=MAX_PROMPT_BYTES_PER_TOKEN).contains(&b) => Ok(b as u64),
        Some(b) => Err(s.error(
            &format!("frontend.{what}_bytes_per_token"),
            b,
            "out of range",
            format!("1 to {MAX_PROMPT_BYTES_PER_TOKEN} (default {default}: token ids as 32-bit integers)"),
        )),
    }
}
