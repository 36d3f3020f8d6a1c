//! `fabricsim train`: the step time, tokens/s and MFU of a model on a cluster.

use clap::{Args, ValueEnum};
use fabricsim::scenario::Scenario;
use fabricsim::scenario::train::TrainSection;
use fabricsim::workload::comm_model::AlphaBetaModel;
use fabricsim::workload::fabric_estimate::FabricParams;
use fabricsim::workload::train::config::TrainConfig;
use fabricsim::workload::train::efficiency::Efficiency;
use fabricsim::workload::train::{report, step};

use crate::outcome::{Failure, Outcome};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Flags override the scenario file's [train] section.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Scenario file with a [train] section.
    pub scenario: Option<String>,
    /// Model preset: llama3-8b, llama3-70b, llama3-405b, gpt3-175b, mixtral-8x7b, deepseek-v3.
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long)]
    pub layers: Option<u64>,
    #[arg(long)]
    pub hidden: Option<u64>,
    /// FFN hidden size (per expert for MoE).
    #[arg(long)]
    pub ffn: Option<u64>,
    #[arg(long)]
    pub heads: Option<u64>,
    #[arg(long)]
    pub kv_heads: Option<u64>,
    #[arg(long)]
    pub head_dim: Option<u64>,
    #[arg(long)]
    pub vocab: Option<u64>,
    /// Sequence length, tokens.
    #[arg(long)]
    pub seq: Option<u64>,
    /// Sequences per step.
    #[arg(long)]
    pub global_batch: Option<u64>,
    /// Sequences per micro-batch (default 1).
    #[arg(long)]
    pub micro_batch: Option<u64>,
    #[arg(long)]
    pub experts: Option<u64>,
    #[arg(long)]
    pub top_k: Option<u64>,
    #[arg(long)]
    pub shared_ffn: Option<u64>,
    #[arg(long)]
    pub swiglu: Option<bool>,
    #[arg(long)]
    pub gpus: Option<u64>,
    /// GPUs per server (default 8).
    #[arg(long)]
    pub gpus_per_node: Option<u64>,
    /// GPU: a100, h100, h200 (default), b200.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Fabric profile: ib-ndr (default), ib-xdr, roce-400g, roce-800g.
    #[arg(long)]
    pub fabric: Option<String>,
    #[arg(long)]
    pub tp: Option<u64>,
    #[arg(long)]
    pub pp: Option<u64>,
    /// Data-parallel degree (default: GPUs / (tp*pp*cp)).
    #[arg(long)]
    pub dp: Option<u64>,
    /// Expert-parallel degree, inside dp (Megatron).
    #[arg(long)]
    pub ep: Option<u64>,
    /// Context-parallel degree.
    #[arg(long)]
    pub cp: Option<u64>,
    /// ZeRO stage 0-3 (3 = FSDP; default 1).
    #[arg(long)]
    pub zero: Option<u64>,
    /// Overlap data-parallel communication with compute (default true).
    #[arg(long)]
    pub dp_overlap: Option<bool>,
    /// Gradient bucket, MB (default Megatron's max(40M, 1M*dp) bf16 parameters).
    #[arg(long)]
    pub dp_bucket_mb: Option<f64>,
    /// Activation recomputation: none (default) or full.
    #[arg(long)]
    pub recompute: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

impl TrainArgs {
    fn section(&self) -> TrainSection {
        TrainSection {
            model: self.model.clone(),
            layers: self.layers,
            hidden: self.hidden,
            ffn: self.ffn,
            heads: self.heads,
            kv_heads: self.kv_heads,
            head_dim: self.head_dim,
            vocab: self.vocab,
            seq: self.seq,
            global_batch: self.global_batch,
            micro_batch: self.micro_batch,
            experts: self.experts,
            top_k: self.top_k,
            shared_ffn: self.shared_ffn,
            swiglu: self.swiglu,
            gpus: self.gpus,
            gpus_per_node: self.gpus_per_node,
            gpu: self.gpu.clone(),
            fabric: self.fabric.clone(),
            tp: self.tp,
            pp: self.pp,
            dp: self.dp,
            ep: self.ep,
            cp: self.cp,
            zero: self.zero,
            dp_overlap: self.dp_overlap,
            dp_bucket_mb: self.dp_bucket_mb,
            recompute: self.recompute.clone(),
        }
    }
}

pub fn run(args: TrainArgs) -> Outcome {
    let scenario = args.scenario.as_deref().map(Scenario::load).transpose()?;
    let file = scenario
        .as_ref()
        .and_then(|s| s.file.train.as_ref().map(|t| (t, &s.source)));
    let cfg = TrainConfig::resolve(&args.section(), file)?;
    let fabric = FabricParams::estimate("", &cfg.fabric, &cfg.gpu).map_err(|e| {
        cfg.origin
            .error("fabric", &cfg.fabric, e.problem, e.allowed)
    })?;
    let comm = AlphaBetaModel::new(fabric);
    let r = step::step(&cfg, &Efficiency::h200(), &comm)?;
    match args.format {
        Format::Text => print!("{}", report::to_text(&r)),
        Format::Json => {
            let text = serde_json::to_string_pretty(&r).map_err(|e| Failure::Run(e.to_string()))?;
            println!("{text}");
        }
    }
    Ok(())
}
