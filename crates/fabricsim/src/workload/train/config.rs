//! A training job resolved from the scenario's `[train]` section (command-line flags already
//! applied) on its `[cluster]`, with defaults, and validated: every violation is an
//! [`InputError`] naming the file line and key, or the flag.
//!
//! Rank layout (Megatron-LM `RankGenerator`, order tp-cp-dp-pp): GPU = tp_i + tp * (cp_i + cp *
//! (dp_i + dp * pp_i)), so TP groups are consecutive GPUs (inside a server when tp <= GPUs
//! per server). Expert parallelism lives inside data parallelism as in Megatron: the ep GPUs
//! of an EP group are ep consecutive DP ranks, and tp * pp * dp * cp must equal the GPU count.

use std::fmt;

use super::memory;
use super::model::ModelSpec;
use super::schedule;
use crate::workload::moe::Route;
use crate::workload::placement::Placement;
use fabricsim_core::error::InputError;
use fabricsim_input::catalog::Gpu;
use fabricsim_input::moe_skew::{self, Skew};
use fabricsim_input::scenario::train::TrainSection;
use fabricsim_input::scenario::{Design, Scenario};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recompute {
    /// Store every activation, the attention scores included (Korthikanti et al. 2022, arXiv
    /// 2205.05198, §4.1: unfused attention).
    None,
    /// Recompute the attention core (QK^T, softmax, scores x V) in the backward and store the
    /// rest (Korthikanti et al. 2022, §5): what flash attention's backward does (Dao et al.
    /// 2022, arXiv 2205.14135, §3.1), the kernel the compute table measures; the default.
    Selective,
    /// Store only each layer's input; redo the forward in the backward (Korthikanti et al.
    /// 2022, §4.2).
    Full,
}

impl Recompute {
    pub fn name(self) -> &'static str {
        match self {
            Recompute::None => "none",
            Recompute::Selective => "selective",
            Recompute::Full => "full",
        }
    }
}

/// The precision of the GEMMs (attention, the other kernels and the wire stay bf16, as in
/// Transformer Engine's FP8 recipes: Micikevicius et al. 2022, arXiv 2209.05433).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    Bf16,
    Fp8,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Parallelism {
    pub tp: u64,
    pub pp: u64,
    /// Model chunks per pipeline rank (virtual stages): 1 = 1F1B, more = interleaved 1F1B.
    pub vp: u64,
    pub dp: u64,
    pub ep: u64,
    pub cp: u64,
    pub micro_batch: u64,
    pub zero: u64,
    pub dp_overlap: bool,
    /// Tensor-parallel communication overlapped with the GEMMs beside it (`step::tp_exposed`).
    pub tp_overlap: bool,
    /// Pipeline sends overlapped with the next chunk's compute in the steady 1F1B phase
    /// (Megatron `overlap_p2p_comm`: interleaved schedules only, on by default there).
    pub pp_overlap: bool,
    pub dp_bucket_bytes: u64,
    pub recompute: Recompute,
    /// Sequence parallelism (Korthikanti et al. 2022, §4.2.2): with tp > 1 the norms and
    /// dropouts run on 1/tp of the sequence, so all their activations split over TP.
    pub sequence_parallel: bool,
    pub precision: Precision,
    /// Transformer layers of each pipeline stage, first to last (`pp` entries, each >= 1).
    pub stage_layers: Vec<u64>,
}

impl Parallelism {
    /// Micro-batches per pipeline per step.
    pub fn micro_batches(&self, global_batch: u64) -> u64 {
        global_batch / (self.dp * self.micro_batch)
    }

    /// Layers of each model chunk of pipeline rank `stage` (`vp` entries).
    pub fn chunk_layers(&self, stage: usize) -> Vec<u64> {
        schedule::chunk_layers(self.stage_layers[stage], self.vp, stage == 0)
    }

    /// Rank `stage`'s operations in schedule order for `m` micro-batches.
    pub fn order(&self, m: u64, stage: usize) -> Vec<schedule::PipeOp> {
        schedule::order(self.pp, self.vp, m, stage as u64)
    }

    /// Whether every stage holds the same number of layers.
    pub fn even_stages(&self) -> bool {
        self.stage_layers.windows(2).all(|w| w[0] == w[1])
    }
}

/// `layers` over `pp` stages as evenly as possible: every stage gets ceil(layers / pp), and the
/// stages that must hold one fewer are taken from the ends inwards (first, last, second,
/// second-to-last, ...): the first stage also runs the embedding and the last the output
/// projection. Llama 3 405B: 126 layers on 16 stages = 7 + 14 x 8 + 7 (Dubey et al. 2024,
/// arXiv 2407.21783, §3.3.2: one layer removed from the first and the last stage).
/// `None` when there are more stages than layers.
pub fn balanced_stages(layers: u64, pp: u64) -> Option<Vec<u64>> {
    if pp == 0 || pp > layers {
        return None;
    }
    let q = layers.div_ceil(pp);
    let mut v = vec![q; pp as usize];
    let short = (q * pp - layers) as usize;
    for i in 0..short {
        let s = if i % 2 == 0 {
            i / 2
        } else {
            v.len() - 1 - i / 2
        };
        v[s] -= 1;
    }
    Some(v)
}

/// The MoE layers' routing from `[train] moe_skew` and `capacity_factor` (checked against
/// the model's experts and the EP degree); `None` when it is uniform with no drop.
fn moe_route(
    k: &Keys,
    t: &TrainSection,
    model: &ModelSpec,
    ep: u64,
) -> Result<Option<Route>, InputError> {
    let s = k.s;
    let key = &k.key("moe_skew");
    let text = t.moe_skew.as_deref().unwrap_or("uniform");
    let bad = |problem: String| s.error(key, format!("\"{text}\""), problem, moe_skew::ALLOWED);
    let skew = Skew::parse(text, &bad, &|f| s.relative_path(key, f))?;
    let capacity = t.capacity_factor;
    if let Some(c) = capacity.filter(|c| !(c.is_finite() && *c > 0.0)) {
        return Err(k.error(
            "capacity_factor",
            c,
            "not a positive multiple of the even share",
            "a number above 0, such as 1.25 (Switch Transformer's 1.0 to 2.0)",
        ));
    }
    if !model.is_moe() {
        return match (&skew, capacity) {
            (Skew::Uniform, None) => Ok(None),
            _ => Err(bad(format!(
                "{} is a dense model (no experts to route to)",
                model.id
            ))),
        };
    }
    if ep == 0 || !model.experts.is_multiple_of(ep) {
        return Ok(None); // `validate` names the experts that do not split over ep
    }
    match Route::new(&skew, model.experts, model.top_k, ep as usize, capacity) {
        Ok(Route::Uniform { .. }) => Ok(None),
        Ok(r) => Ok(Some(r)),
        Err(problem) => Err(bad(problem)),
    }
}

/// `[a, b, c]`, as the scenario file writes a list.
fn list(v: &[u64]) -> String {
    let items: Vec<String> = v.iter().map(u64::to_string).collect();
    format!("[{}]", items.join(", "))
}

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub model: ModelSpec,
    pub gpus: u64,
    /// The catalog GPU of `[cluster] gpu`.
    pub gpu: Gpu,
    /// Where each GPU sits (server, host) on the cluster's topology.
    pub place: Placement,
    pub par: Parallelism,
    /// The expected routing of the MoE layers over the EP ranks (`[train] moe_skew`,
    /// `capacity_factor`); `None` for a dense model or uniform routing with no drop.
    pub route: Option<Route>,
}

/// Where a training job's keys are: `[train]` (with `cluster.gpus` its GPU count), or a
/// `[[jobs]]` entry's `[jobs.train]` (with the entry's `gpus`).
pub struct Keys<'a> {
    pub s: &'a Scenario,
    /// The table of the job's keys: `train`, `jobs[1].train`.
    pub section: String,
    /// The key of its GPU count: `cluster.gpus`, `jobs[1].gpus`.
    pub gpus: String,
}

impl<'a> Keys<'a> {
    /// The scenario's `[train]` section.
    pub fn train(s: &'a Scenario) -> Keys<'a> {
        Keys {
            s,
            section: "train".into(),
            gpus: "cluster.gpus".into(),
        }
    }

    /// The dotted key of `field` of the job.
    pub fn key(&self, field: &str) -> String {
        format!("{}.{field}", self.section)
    }

    /// An error about `field`: against the flag that set it, or else the file; a value set by
    /// neither (a default, or the model preset's) says how to set it.
    fn error(
        &self,
        field: &str,
        value: impl fmt::Display,
        problem: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> InputError {
        let key = self.key(field);
        let s = self.s;
        let mut e = s.error(&key, value, problem, allowed);
        // Written in the file: located on a `key =` line (an indexed key not written is
        // located on its entry's header).
        let written = s
            .source
            .locate_key(&key)
            .and_then(|l| s.source.text.lines().nth(l - 1))
            .is_some_and(|t| t.contains('='));
        if !s.flags.contains_key(&key) && !written {
            e.problem += &match self.section.as_str() {
                "train" => format!(
                    " (a default or the model preset's value: set [train] {field} or --{})",
                    field.replace('_', "-")
                ),
                section => {
                    format!(" (a default or the model preset's value: set {section}.{field})")
                }
            };
        }
        e
    }
}

/// Megatron's default gradient bucket: max(40M, 1M * dp) parameters (DistributedDataParallel
/// `bucket_size`), 2 bytes each (bf16 gradients).
fn default_bucket_bytes(dp: u64) -> u64 {
    40_000_000u64.max(1_000_000 * dp) * 2
}

impl TrainConfig {
    /// Resolves the scenario's `[train]` section (command-line flags already applied) on the
    /// cluster of `design`, whose GPUs sit where `place` says; errors name the key or flag.
    pub fn resolve(
        s: &Scenario,
        design: &Design,
        place: Placement,
    ) -> Result<TrainConfig, InputError> {
        let t = s.file.train.clone().unwrap_or_default();
        let gpus = design.spec.gpus as u64;
        TrainConfig::resolve_section(&Keys::train(s), &t, gpus, design, place)
    }

    /// Resolves the training job `t` of `gpus` GPUs whose keys are where `k` says (`[train]` or
    /// a `[[jobs]]` entry) on the cluster of `design`, its GPUs where `place` says.
    pub fn resolve_section(
        k: &Keys,
        t: &TrainSection,
        gpus: u64,
        design: &Design,
        place: Placement,
    ) -> Result<TrainConfig, InputError> {
        let s = k.s;
        let (gpus, place) = match t.gpus_per_domain {
            None => (gpus, place),
            Some(u) => {
                let gpn = place.gpus_per_node() as u64;
                if u == 0 || u > gpn {
                    return Err(k.error(
                        "gpus_per_domain",
                        u,
                        format!("a server ({}) holds {gpn} GPUs", design.server.id),
                        format!("1 to {gpn}"),
                    ));
                }
                let place = place.using(u as u32);
                (place.gpus() as u64, place)
            }
        };
        let mut model = match &t.model {
            Some(id) => ModelSpec::preset("", id)
                .map_err(|e| s.error(&k.key("model"), id, e.problem, e.allowed))?,
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
                dropout: true,
                seq: 0,
                global_batch: 0,
            },
        };
        let custom = t.model.is_none();
        macro_rules! model_key {
            ($f:ident, required) => {{
                match t.$f {
                    Some(v) => model.$f = v,
                    None if custom => {
                        return Err(s.error(
                            &k.key(stringify!($f)),
                            "(missing)",
                            "a custom model needs this key (or a preset: [train] model, --model)",
                            "a positive integer",
                        ));
                    }
                    None => {}
                }
            }};
            ($f:ident) => {{
                if let Some(v) = t.$f {
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
        if let Some(v) = t.kv_heads {
            model.kv_heads = v;
        } else if custom {
            model.kv_heads = model.heads;
        }
        if let Some(v) = t.head_dim {
            model.head_dim = Some(v);
        }
        model_key!(experts);
        model_key!(top_k);
        model_key!(shared_ffn);
        model_key!(swiglu);
        let (tp, pp, ep, cp) = (
            t.tp.unwrap_or(1),
            t.pp.unwrap_or(1),
            t.ep.unwrap_or(1),
            t.cp.unwrap_or(1),
        );
        let micro_batch = t.micro_batch.unwrap_or(1);
        let recompute = match t.recompute.as_deref() {
            None | Some("selective") => Recompute::Selective,
            Some("none") => Recompute::None,
            Some("full") => Recompute::Full,
            Some(other) => {
                return Err(k.error(
                    "recompute",
                    other,
                    "unknown recomputation",
                    "selective, none, full",
                ));
            }
        };
        let vp = t.vp.unwrap_or(1);
        let precision = match t.precision.as_deref() {
            None | Some("bf16") => Precision::Bf16,
            Some("fp8") if design.gpu.fp8_tflops.is_some() => Precision::Fp8,
            Some("fp8") => {
                return Err(k.error(
                    "precision",
                    "fp8",
                    format!("the {} has no FP8 peak in the catalog", design.gpu.id),
                    "bf16, or fp8 on an h100, h200, b200, gb200 or gb300",
                ));
            }
            Some(other) => {
                return Err(k.error("precision", other, "unknown precision", "bf16, fp8"));
            }
        };
        for (f, v) in [
            ("tp", tp),
            ("pp", pp),
            ("vp", vp),
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
            if v == 0 {
                return Err(k.error(f, v, "must be positive", "an integer of 1 or more"));
            }
        }
        let inner = tp * pp * cp;
        let dp = match t.dp {
            Some(dp) if dp == 0 || inner * dp != gpus => {
                return Err(k.error(
                    "dp",
                    dp,
                    format!(
                        "tp*pp*dp*cp = {tp}*{pp}*{dp}*{cp} = {} but there are {gpus} GPUs",
                        inner * dp
                    ),
                    format!(
                        "tp*pp*dp*cp equal to the GPU count{}",
                        if gpus.is_multiple_of(inner) {
                            format!(" (dp = {})", gpus / inner)
                        } else {
                            String::new()
                        }
                    ),
                ));
            }
            Some(dp) => dp,
            None if gpus.is_multiple_of(inner) => gpus / inner,
            None => {
                return Err(s.error(
                    &k.gpus,
                    gpus,
                    format!("not a multiple of tp*pp*cp = {inner}"),
                    format!("a multiple of {inner}"),
                ));
            }
        };
        let dp_bucket_bytes = match t.dp_bucket_mb {
            Some(mb) if mb.is_finite() && mb > 0.0 => (mb * 1e6) as u64,
            Some(mb) => {
                return Err(k.error(
                    "dp_bucket_mb",
                    mb,
                    "must be positive",
                    "a size in MB, e.g. 80",
                ));
            }
            None => default_bucket_bytes(dp),
        };
        let stage_layers = match &t.stage_layers {
            Some(v) => {
                let bad = |problem: String| {
                    k.error(
                        "stage_layers",
                        list(v),
                        problem,
                        format!(
                            "{pp} positive layer counts (one per stage) summing to {}",
                            model.layers
                        ),
                    )
                };
                if v.len() as u64 != pp {
                    return Err(bad(format!("{} stages listed but pp = {pp}", v.len())));
                }
                if v.contains(&0) {
                    return Err(bad("a stage without layers".into()));
                }
                let sum: u64 = v.iter().sum();
                if sum != model.layers {
                    return Err(bad(format!(
                        "the stages hold {sum} layers but the model has {}",
                        model.layers
                    )));
                }
                v.clone()
            }
            None => balanced_stages(model.layers, pp).ok_or_else(|| {
                k.error(
                    "pp",
                    pp,
                    format!(
                        "more pipeline stages than the model's {} layers",
                        model.layers
                    ),
                    format!("1 to {}", model.layers),
                )
            })?,
        };
        let route = moe_route(k, &t, &model, ep)?;
        let cfg = TrainConfig {
            route,
            gpus,
            gpu: design.gpu.clone(),
            place,
            par: Parallelism {
                tp,
                pp,
                vp,
                dp,
                ep,
                cp,
                micro_batch,
                zero: t.zero.unwrap_or(1),
                dp_overlap: t.dp_overlap.unwrap_or(true),
                tp_overlap: t.tp_overlap.unwrap_or(false),
                pp_overlap: t.pp_overlap.unwrap_or(vp > 1),
                dp_bucket_bytes,
                recompute,
                sequence_parallel: t.sequence_parallel.unwrap_or(true),
                precision,
                stage_layers,
            },
            model,
        };
        cfg.validate(k)?;
        Ok(cfg)
    }

    /// The single changes that make this plan fit in the GPU's memory, each with its total.
    fn what_fits(&self, total_gb: f64) -> String {
        let p = &self.par;
        let mut tries: Vec<(String, Parallelism)> = Vec::new();
        let mut with = |what: String, f: &dyn Fn(&mut Parallelism)| {
            let mut q = p.clone();
            f(&mut q);
            tries.push((what, q));
        };
        if p.recompute != Recompute::Full {
            with("recompute = full".into(), &|q| {
                q.recompute = Recompute::Full
            });
        }
        if p.recompute == Recompute::None {
            with("recompute = selective".into(), &|q| {
                q.recompute = Recompute::Selective
            });
        }
        if p.zero < 3 {
            with(format!("zero = {}", p.zero + 1), &|q| q.zero += 1);
        }
        if p.micro_batch > 1 && p.micro_batch % 2 == 0 {
            with(format!("micro_batch = {}", p.micro_batch / 2), &|q| {
                q.micro_batch /= 2
            });
        }
        if p.tp > 1 && !p.sequence_parallel {
            with("sequence_parallel = true".into(), &|q| {
                q.sequence_parallel = true
            });
        }
        let fits: Vec<String> = tries
            .into_iter()
            .filter_map(|(what, par)| {
                let cfg = TrainConfig {
                    par,
                    ..self.clone()
                };
                let m = memory::per_gpu(&cfg);
                (m.total_gb <= m.hbm_gb).then(|| format!("{what} ({:.1} GB)", m.total_gb))
            })
            .collect();
        let gpu = format!("a GPU with {total_gb:.0} GB or more");
        if fits.is_empty() {
            format!(
                "a plan that fits: more tp or pp (no single change of recompute, zero or micro_batch is enough), or {gpu}"
            )
        } else {
            format!("a plan that fits, e.g. {}; or {gpu}", fits.join(", "))
        }
    }

    fn validate(&self, k: &Keys) -> Result<(), InputError> {
        let (m, p) = (&self.model, &self.par);
        let div = |field: &str, v: u64, by: u64, what: &str| {
            if !v.is_multiple_of(by) {
                Err(k.error(
                    field,
                    v,
                    format!("not divisible by {what} = {by}"),
                    format!("a multiple of {by}"),
                ))
            } else {
                Ok(())
            }
        };
        if p.zero > 3 {
            return Err(k.error(
                "zero",
                p.zero,
                "no such ZeRO stage",
                "0, 1, 2 or 3 (3 = FSDP)",
            ));
        }
        // Megatron's validate_args (megatron/training/arguments.py): TP overlap needs sequence
        // parallelism; overlap_p2p_comm is switched off outside the interleaved schedule.
        if p.tp_overlap && !p.sequence_parallel {
            return Err(k.error(
                "tp_overlap",
                true,
                "tensor-parallel overlap splits the sequence-parallel all-gathers and reduce-scatters, and sequence_parallel = false",
                "false, or set sequence_parallel = true",
            ));
        }
        if p.pp_overlap && p.vp == 1 {
            return Err(k.error(
                "pp_overlap",
                true,
                "Megatron overlaps pipeline sends only in the interleaved schedule (vp = 1)",
                "false, or set vp of 2 or more",
            ));
        }
        if m.heads % p.tp != 0 {
            return Err(k.error(
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
            return Err(k.error(
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
            return Err(k.error(
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
            return Err(k.error(
                "global_batch",
                m.global_batch,
                format!(
                    "not divisible by dp*micro_batch = {}*{} = {per_step}",
                    p.dp, p.micro_batch
                ),
                format!("a multiple of {per_step}"),
            ));
        }
        if p.vp > 1 {
            let mbs = p.micro_batches(m.global_batch);
            if p.pp < 2 {
                return Err(k.error(
                    "vp",
                    p.vp,
                    "interleaving needs a pipeline (pp = 1)",
                    "1, or set pp of 2 or more",
                ));
            }
            if !mbs.is_multiple_of(p.pp) {
                return Err(k.error(
                    "vp",
                    p.vp,
                    format!(
                        "the interleaved schedule runs micro-batches in groups of pp = {} and there are {mbs} (global_batch / (dp * micro_batch))",
                        p.pp
                    ),
                    format!(
                        "1, or a global batch giving a multiple of {} micro-batches",
                        p.pp
                    ),
                ));
            }
            let last = p.stage_layers.len() - 1;
            for (st, &l) in p.stage_layers.iter().enumerate() {
                // A rank may leave one end chunk empty (the first rank's first, the last's
                // last: embedding or output projection only).
                let ends = u64::from(st == 0 || st == last);
                if l + ends < p.vp {
                    return Err(k.error(
                        "vp",
                        p.vp,
                        format!(
                            "pipeline stage {st} holds {l} layers, too few for {} chunks",
                            p.vp
                        ),
                        format!("1 to {}", l + ends),
                    ));
                }
            }
        }
        if m.is_moe() {
            div("experts", m.experts, p.ep, "ep")?;
            if m.top_k > m.experts {
                return Err(k.error(
                    "top_k",
                    m.top_k,
                    format!("more than the {} experts", m.experts),
                    format!("1 to {}", m.experts),
                ));
            }
            if p.dp % p.ep != 0 {
                return Err(k.error(
                    "ep",
                    p.ep,
                    format!(
                        "expert parallelism lives inside data parallelism (Megatron), and dp = {} is not a multiple of it",
                        p.dp
                    ),
                    "a divisor of dp",
                ));
            }
        } else if p.ep > 1 {
            return Err(k.error(
                "ep",
                p.ep,
                format!("{} is a dense model (no experts)", m.id),
                "1 for dense models",
            ));
        } else if m.top_k != 1 {
            return Err(k.error(
                "top_k",
                m.top_k,
                "a dense model routes each token to its one MLP",
                "1 (or set experts)",
            ));
        }
        let mem = memory::per_gpu(self);
        if mem.total_gb > mem.hbm_gb {
            return Err(k.s.error(
                "cluster.gpu",
                &self.gpu.id,
                format!(
                    "the plan needs {:.1} GB per GPU on pipeline stage {} ({}) but a {} has {} GB: {:.1} GB short",
                    mem.total_gb,
                    mem.stage,
                    mem.breakdown(),
                    self.gpu.id,
                    mem.hbm_gb,
                    mem.total_gb - mem.hbm_gb
                ),
                self.what_fits(mem.total_gb),
            ));
        }
        Ok(())
    }
}
