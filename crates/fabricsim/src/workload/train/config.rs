//! A training job resolved from command-line flags over the scenario's `[train]` section, with
//! defaults, and validated: every violation is an [`InputError`] naming the flag or key.
//!
//! Rank layout (Megatron-LM `RankGenerator`, order tp-cp-dp-pp): GPU = tp_i + tp * (cp_i + cp *
//! (dp_i + dp * pp_i)), so TP groups are consecutive GPUs (inside a server when tp <= GPUs
//! per server). Expert parallelism lives inside data parallelism as in Megatron: the ep GPUs
//! of an EP group are ep consecutive DP ranks, and tp * pp * dp * cp must equal the GPU count.

use std::fmt;

use super::model::ModelSpec;
use crate::error::{InputError, Source};
use crate::scenario::train::TrainSection;
use crate::workload::gpu::GpuSpec;

/// Which keys came from the file, so errors point at the file line or at the flag.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    file: Option<Source>,
    from_file: Vec<&'static str>,
}

impl Origin {
    /// An error about `field` (a `[train]` key name; the flag is `--field-with-dashes`).
    pub fn error(
        &self,
        field: &str,
        value: impl fmt::Display,
        problem: impl Into<String>,
        allowed: impl Into<String>,
    ) -> InputError {
        match &self.file {
            Some(src) if self.from_file.contains(&field) => {
                InputError::at_key(src, &format!("train.{field}"), value, problem, allowed)
            }
            _ => InputError::flag(
                &format!("--{}", field.replace('_', "-")),
                value,
                problem,
                allowed,
            ),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recompute {
    None,
    /// Store only each layer's input; redo the forward in the backward (Korthikanti et al.
    /// 2022, arXiv 2205.05198).
    Full,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Parallelism {
    pub tp: u64,
    pub pp: u64,
    pub dp: u64,
    pub ep: u64,
    pub cp: u64,
    pub micro_batch: u64,
    pub zero: u64,
    pub dp_overlap: bool,
    pub dp_bucket_bytes: u64,
    pub recompute: Recompute,
}

impl Parallelism {
    /// Micro-batches per pipeline per step.
    pub fn micro_batches(&self, global_batch: u64) -> u64 {
        global_batch / (self.dp * self.micro_batch)
    }
}

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub model: ModelSpec,
    pub gpus: u64,
    pub gpus_per_node: u64,
    pub gpu: GpuSpec,
    pub fabric: String,
    pub par: Parallelism,
    pub origin: Origin,
}

/// Megatron's default gradient bucket: max(40M, 1M * dp) parameters (DistributedDataParallel
/// `bucket_size`), 2 bytes each (bf16 gradients).
fn default_bucket_bytes(dp: u64) -> u64 {
    40_000_000u64.max(1_000_000 * dp) * 2
}

impl TrainConfig {
    /// Resolves `flags` over `file` (the scenario's `[train]` and its source).
    pub fn resolve(
        flags: &TrainSection,
        file: Option<(&TrainSection, &Source)>,
    ) -> Result<TrainConfig, InputError> {
        let mut origin = Origin {
            file: file.map(|f| f.1.clone()),
            from_file: Vec::new(),
        };
        let empty = TrainSection::default();
        let fs = file.map(|f| f.0).unwrap_or(&empty);
        macro_rules! pick {
            ($f:ident) => {{
                match (&flags.$f, &fs.$f) {
                    (Some(v), _) => Some(v.clone()),
                    (None, Some(v)) => {
                        origin.from_file.push(stringify!($f));
                        Some(v.clone())
                    }
                    (None, None) => None,
                }
            }};
        }
        let preset = pick!(model);
        let mut model = match &preset {
            Some(id) => ModelSpec::preset("", id)
                .map_err(|e| origin.error("model", id, e.problem, e.allowed))?,
            None => ModelSpec {
                id: "custom".into(),
                name: "custom model".into(),
                layers: 0,
                hidden: 0,
                ffn: 0,
                heads: 0,
                kv_heads: 0,
                head_dim: None,
                vocab: 0,
                swiglu: true,
                experts: 0,
                top_k: 1,
                shared_ffn: 0,
                seq: 0,
                global_batch: 0,
            },
        };
        let custom = preset.is_none();
        macro_rules! model_key {
            ($f:ident, required) => {{
                match pick!($f) {
                    Some(v) => model.$f = v,
                    None if custom => {
                        return Err(origin.error(
                            stringify!($f),
                            "(missing)",
                            "a custom model needs this key (or choose a preset with --model)",
                            "a positive integer",
                        ));
                    }
                    None => {}
                }
            }};
            ($f:ident) => {{
                if let Some(v) = pick!($f) {
                    model.$f = v;
                }
            }};
        }
        model_key!(layers, required);
        model_key!(hidden, required);
        model_key!(ffn, required);
        model_key!(heads, required);
        model_key!(vocab, required);
        model_key!(seq, required);
        model_key!(global_batch, required);
        if let Some(v) = pick!(kv_heads) {
            model.kv_heads = v;
        } else if custom {
            model.kv_heads = model.heads;
        }
        if let Some(v) = pick!(head_dim) {
            model.head_dim = Some(v);
        }
        model_key!(experts);
        model_key!(top_k);
        model_key!(shared_ffn);
        model_key!(swiglu);
        let gpus = pick!(gpus).ok_or_else(|| {
            origin.error(
                "gpus",
                "(missing)",
                "the GPU count is required",
                "a positive integer, e.g. 1024",
            )
        })?;
        let gpus_per_node = pick!(gpus_per_node).unwrap_or(8);
        let gpu_id = pick!(gpu).unwrap_or_else(|| "h200".into());
        let gpu = GpuSpec::builtin(&gpu_id).ok_or_else(|| {
            origin.error(
                "gpu",
                &gpu_id,
                "unknown GPU",
                GpuSpec::builtin_ids().join(", "),
            )
        })?;
        let fabric = pick!(fabric).unwrap_or_else(|| "ib-ndr".into());
        let (tp, pp, ep, cp) = (
            pick!(tp).unwrap_or(1),
            pick!(pp).unwrap_or(1),
            pick!(ep).unwrap_or(1),
            pick!(cp).unwrap_or(1),
        );
        let dp_given = pick!(dp);
        let micro_batch = pick!(micro_batch).unwrap_or(1);
        let zero = pick!(zero).unwrap_or(1);
        let dp_overlap = pick!(dp_overlap).unwrap_or(true);
        let bucket_mb = pick!(dp_bucket_mb);
        let recompute = match pick!(recompute).as_deref() {
            None | Some("none") => Recompute::None,
            Some("full") => Recompute::Full,
            Some(other) => {
                return Err(origin.error(
                    "recompute",
                    other,
                    "unknown recomputation",
                    "none, full",
                ));
            }
        };
        let positive = |field: &str, v: u64| {
            if v == 0 {
                Err(origin.error(field, v, "must be positive", "an integer of 1 or more"))
            } else {
                Ok(())
            }
        };
        for (f, v) in [
            ("gpus", gpus),
            ("gpus_per_node", gpus_per_node),
            ("tp", tp),
            ("pp", pp),
            ("ep", ep),
            ("cp", cp),
            ("micro_batch", micro_batch),
            ("layers", model.layers),
            ("hidden", model.hidden),
            ("ffn", model.ffn),
            ("heads", model.heads),
            ("kv_heads", model.kv_heads),
            ("vocab", model.vocab),
            ("seq", model.seq),
            ("global_batch", model.global_batch),
            ("top_k", model.top_k),
        ] {
            positive(f, v)?;
        }
        let inner = tp * pp * cp;
        let dp = match dp_given {
            Some(dp) => {
                positive("dp", dp)?;
                if inner * dp != gpus {
                    return Err(origin.error(
                        "dp",
                        dp,
                        format!(
                            "tp*pp*dp*cp = {tp}*{pp}*{dp}*{cp} = {} but there are {gpus} GPUs",
                            inner * dp
                        ),
                        format!(
                            "tp*pp*dp*cp equal to the GPU count{}",
                            if gpus % inner == 0 {
                                format!(" (dp = {})", gpus / inner)
                            } else {
                                String::new()
                            }
                        ),
                    ));
                }
                dp
            }
            None if gpus % inner == 0 => gpus / inner,
            None => {
                return Err(origin.error(
                    "gpus",
                    gpus,
                    format!("not a multiple of tp*pp*cp = {inner}"),
                    format!("a multiple of {inner}"),
                ));
            }
        };
        let cfg = TrainConfig {
            gpus,
            gpus_per_node,
            gpu,
            fabric,
            par: Parallelism {
                tp,
                pp,
                dp,
                ep,
                cp,
                micro_batch,
                zero,
                dp_overlap,
                dp_bucket_bytes: match bucket_mb {
                    Some(mb) if mb.is_finite() && mb > 0.0 => (mb * 1e6) as u64,
                    Some(mb) => {
                        return Err(origin.error(
                            "dp_bucket_mb",
                            mb,
                            "must be positive",
                            "a size in MB, e.g. 80",
                        ));
                    }
                    None => default_bucket_bytes(dp),
                },
                recompute,
            },
            model,
            origin,
        };
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), InputError> {
        let (m, p, o) = (&self.model, &self.par, &self.origin);
        let div = |field: &str, v: u64, by: u64, what: &str| {
            if v % by != 0 {
                Err(o.error(
                    field,
                    v,
                    format!("not divisible by {what} = {by}"),
                    format!("a multiple of {by}"),
                ))
            } else {
                Ok(())
            }
        };
        div("gpus", self.gpus, self.gpus_per_node, "gpus_per_node")?;
        if p.zero > 3 {
            return Err(o.error(
                "zero",
                p.zero,
                "no such ZeRO stage",
                "0, 1, 2 or 3 (3 = FSDP)",
            ));
        }
        if m.layers % p.pp != 0 {
            return Err(o.error(
                "pp",
                p.pp,
                format!(
                    "{} layers do not split evenly into {} stages",
                    m.layers, p.pp
                ),
                "a divisor of the layer count",
            ));
        }
        if m.heads % p.tp != 0 {
            return Err(o.error(
                "tp",
                p.tp,
                format!(
                    "{} attention heads do not split over {} GPUs",
                    m.heads, p.tp
                ),
                "a divisor of the head count",
            ));
        }
        if m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0 {
            return Err(o.error(
                "tp",
                p.tp,
                format!(
                    "{} K/V heads neither split over nor replicate onto {} GPUs",
                    m.kv_heads, p.tp
                ),
                "a divisor or a multiple of the K/V head count",
            ));
        }
        if m.heads % m.kv_heads != 0 {
            return Err(o.error(
                "kv_heads",
                m.kv_heads,
                format!("{} query heads do not form equal groups", m.heads),
                "a divisor of the head count",
            ));
        }
        div("ffn", m.ffn, p.tp, "tp")?;
        div("seq", m.seq, p.cp, "cp")?;
        let per_step = p.dp * p.micro_batch;
        if m.global_batch % per_step != 0 {
            return Err(o.error(
                "global_batch",
                m.global_batch,
                format!(
                    "not divisible by dp*micro_batch = {}*{} = {per_step}",
                    p.dp, p.micro_batch
                ),
                format!("a multiple of {per_step}"),
            ));
        }
        if m.is_moe() {
            div("experts", m.experts, p.ep, "ep")?;
            if m.top_k > m.experts {
                return Err(o.error(
                    "top_k",
                    m.top_k,
                    format!("more than the {} experts", m.experts),
                    format!("1 to {}", m.experts),
                ));
            }
            if p.dp % p.ep != 0 {
                return Err(o.error("ep", p.ep, format!("expert parallelism lives inside data parallelism (Megatron), and dp = {} is not a multiple of it", p.dp), "a divisor of dp"));
            }
        } else if p.ep > 1 {
            return Err(o.error(
                "ep",
                p.ep,
                format!("{} is a dense model (no experts)", m.id),
                "1 for dense models",
            ));
        } else if m.top_k != 1 {
            return Err(o.error(
                "top_k",
                m.top_k,
                "a dense model routes each token to its one MLP",
                "1 (or set experts)",
            ));
        }
        Ok(())
    }
}
