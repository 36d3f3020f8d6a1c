//! Command-line overrides of scenario keys. The CLI passes `(flag, value)` pairs; each flag maps
//! to one scenario key, its value is written into the scenario's TOML tree and the tree read
//! again, so a flag's value is typed and checked exactly as the file's would be. Each flag is
//! remembered so that a later range error names the flag rather than the file.

use toml::Value;

use super::{Scenario, ScenarioFile};
use fabricsim_core::error::{InputError, Source};

/// One overridable key: the flag, the scenario key it sets, and its help line.
#[derive(Clone, Copy, Debug)]
pub struct Flag {
    pub flag: &'static str,
    pub key: &'static str,
    pub help: &'static str,
}

const fn f(flag: &'static str, key: &'static str, help: &'static str) -> Flag {
    Flag { flag, key, help }
}

/// Every overridable key. The CLI builds its scenario flags from this table.
#[rustfmt::skip]
pub const FLAGS: &[Flag] = &[
    f("--gpus", "cluster.gpus", "GPUs in the cluster"),
    f("--gpus-per-node", "cluster.gpus_per_node", "GPUs per server (its NVLink domain: 8, 36, 72)"),
    f("--nics-per-node", "cluster.nics_per_node", "Scale-out NIC ports per server"),
    f("--gpu", "cluster.gpu", "GPU catalog id: a100, h100, h200, b200, gb200, gb300"),
    f("--nic", "cluster.nic", "NIC catalog id"),
    f("--server", "cluster.server", "Server catalog id: hgx-h100-8, ..., gb200-nvl72, gb300-nvl72, gb200-nvl36"),
    f("--fabric", "fabric.profile", "Fabric profile: ib-ndr, ib-xdr, roce-400g, roce-800g, roce-400g-hpcc, roce-400g-ar, roce-800g-ar, uec-400g, uec-800g, or a .toml file"),
    f("--mtu", "fabric.mtu_bytes", "MTU in bytes"),
    f("--topology", "topology.kind", "fat-tree, rail-optimized, rail-only, dual-tor, pods, or auto (plan: the cheapest that fits)"),
    f("--planes", "topology.planes", "Parallel fabrics (multi-plane): NIC port r on plane r mod planes"),
    f("--tiers", "topology.tiers", "auto, 2 or 3"),
    f("--oversubscription", "topology.oversubscription", "Leaf down:up ratio such as 1:1, 2:1"),
    f("--switch", "topology.switch", "Switch catalog id"),
    f("--pod-sus", "topology.pod_sus", "Kind pods: scalable units per pod (default: the most that fit)"),
    f("--core-oversubscription", "topology.core_oversubscription", "Kind pods: pod spine down:up towards the core, such as 1:1, 15:1"),
    f("--servers-per-rack", "layout.servers_per_rack", "Servers per rack"),
    f("--racks-per-row", "layout.racks_per_row", "Racks per row"),
    f("--leaf-placement", "layout.leaf", "top-of-rack, end-of-row or network-row"),
    f("--spine-placement", "layout.spine", "end-of-row or network-row"),
    f("--years", "cost.years", "Years for the TCO"),
    f("--usd-per-kwh", "cost.usd_per_kwh", "Electricity price, USD per kWh"),
    f("--pue", "cost.pue", "Power usage effectiveness"),
    f("--optics", "cost.optics", "Optics prices: third_party (compatible modules) or vendor (vendor-branded)"),
    f("--optics-drive", "layout.optics", "Module drive the plan prefers where optics are needed: dsp (default), lpo or lro"),
    f("--mtbf-scale", "reliability.mtbf_scale", "Multiplies every MTBF of the failure-rate table (0.5: parts fail twice as often; default 1)"),
    f("--checkpoint-interval-s", "reliability.checkpoint_interval_s", "Seconds of work between checkpoints (default: Daly's optimum)"),
    f("--engine", "engine", "Engine for DAG runs: packet, flow or auto (flow above 20M fabric packets)"),
    f("--max-memory", "max_memory", "Refuse a run whose estimated memory passes this, such as 16GB (default: 90% of MemAvailable)"),
    f("--catalog", "catalog", "A catalog file merged over the built-in one (same ids replace, new ids add)"),
    f("--seeds", "compare.seeds", "Seeds each simulated figure is measured over, reported as mean and 95% interval (default 5)"),
    // The same flag for `collective` and `train` (a command takes one of the two keys).
    f("--seeds", "seeds", "Seeds each engine-run figure is measured over, reported as mean and 95% interval (default 3)"),
    f("--model", "train.model", "Model preset: llama3-8b, llama3-70b, llama3-405b, gpt3-175b, mixtral-8x7b, deepseek-v3"),
    f("--layers", "train.layers", "Transformer layers"),
    f("--hidden", "train.hidden", "Hidden size"),
    f("--ffn", "train.ffn", "FFN hidden size (per expert for MoE)"),
    f("--heads", "train.heads", "Attention heads"),
    f("--kv-heads", "train.kv_heads", "Key/value heads"),
    f("--head-dim", "train.head_dim", "Per-head dimension"),
    f("--vocab", "train.vocab", "Vocabulary size"),
    f("--seq", "train.seq", "Sequence length, tokens"),
    f("--global-batch", "train.global_batch", "Sequences per step"),
    f("--micro-batch", "train.micro_batch", "Sequences per micro-batch (default 1)"),
    f("--experts", "train.experts", "Routed experts per MoE layer"),
    f("--top-k", "train.top_k", "Experts per token"),
    f("--shared-ffn", "train.shared_ffn", "FFN size of the shared experts"),
    f("--swiglu", "train.swiglu", "Gated (SwiGLU) MLP: true or false"),
    f("--tp", "train.tp", "Tensor-parallel degree"),
    f("--pp", "train.pp", "Pipeline-parallel degree"),
    f("--vp", "train.vp", "Virtual pipeline stages per rank: 1 = 1F1B (default), more = interleaved 1F1B (micro-batches a multiple of pp)"),
    f("--dp", "train.dp", "Data-parallel degree (default: GPUs / (tp*pp*cp))"),
    f("--ep", "train.ep", "Expert-parallel degree, inside dp (Megatron)"),
    f("--loss-rate", "train.loss_rate", "Random loss per link the job's fabric sees (0 <= p < 0.5), costed in expectation"),
    f("--recovery", "train.recovery", "Recovery from that loss: go-back-n, go-back-0, selective-repeat, unordered, rud (default: the profile's)"),
    f("--gpus-per-domain", "train.gpus_per_domain", "GPUs of each server (NVLink domain) the job uses, the rest idle, so that TP x CP x EP blocks line up with the domains (default: all)"),
    f("--cp", "train.cp", "Context-parallel degree"),
    f("--zero", "train.zero", "ZeRO stage 0-3 (3 = FSDP; default 1)"),
    f("--dp-overlap", "train.dp_overlap", "Overlap data-parallel communication with compute: true (default) or false"),
    f("--tp-overlap", "train.tp_overlap", "Overlap tensor-parallel all-gathers and reduce-scatters with the GEMMs (Megatron tp_comm_overlap; needs sequence parallelism): true or false (default)"),
    f("--pp-overlap", "train.pp_overlap", "Overlap pipeline sends with compute in the steady 1F1B phase (Megatron overlap_p2p_comm): true (default with vp > 1) or false; interleaved schedules only"),
    f("--dp-bucket-mb", "train.dp_bucket_mb", "Gradient bucket, MB (default Megatron's max(40M, 1M*dp) bf16 parameters)"),
    f("--recompute", "train.recompute", "Activation recomputation: selective (default: the attention core, as flash attention does), none or full"),
    f("--precision", "train.precision", "GEMM precision: bf16 (default) or fp8 (H100, H200, B200: the catalog's FP8 peak)"),
    f("--sequence-parallel", "train.sequence_parallel", "Sequence parallelism with TP: true (default) or false"),
    f("--claims", "compare.claims", "The compare report's claims section: quick (default: the points that fit the default's time), full (also 16,384 GPUs on the flow engine) or off"),
    f("--nccl-min-nchannels", "nccl.min_nchannels", "NCCL_MIN_NCHANNELS: fewest channels of a collective (default 0)"),
    f("--nccl-max-nchannels", "nccl.max_nchannels", "NCCL_MAX_NCHANNELS: most channels of a collective (default 64)"),
    f("--nccl-ib-qps-per-connection", "nccl.ib_qps_per_connection", "NCCL_IB_QPS_PER_CONNECTION: QPs of each channel's connection, 1 to 64 (default: the profile's, 1)"),
    f("--nccl-ib-split-data-on-qps", "nccl.ib_split_data_on_qps", "NCCL_IB_SPLIT_DATA_ON_QPS: 1 splits each message across the QPs, 0 (default) sends it whole on the next QP"),
    f("--nccl-nchannels-per-net-peer", "nccl.nchannels_per_net_peer", "NCCL_NCHANNELS_PER_NET_PEER: channels of all-to-all and send/recv per network peer, 1 to 64 (default: NCCL's halving with the rank count from one per NIC)"),
    f("--moe-skew", "train.moe_skew", "Routing skew of the MoE expert-parallel all-to-alls: uniform (default), zipf:S or histogram:FILE (one load per expert per line)"),
    f("--capacity-factor", "train.capacity_factor", "MoE expert capacity as a multiple of the even share, tokens over it dropped (default: none dropped)"),
    // `serve` (the same --model flag as train's; a command takes one of the two keys).
    f("--model", "serve.model", "Model preset: llama3-8b, llama3-70b, llama3-405b, gpt3-175b, mixtral-8x7b, deepseek-v3"),
    f("--serve-mode", "serve.mode", "disaggregated (default: prefill and decode pools) or colocated"),
    f("--prefill-instances", "serve.prefill_instances", "Prefill instances (default 1)"),
    f("--prefill-tp", "serve.prefill_tp", "GPUs (tensor-parallel) per prefill instance (default 8)"),
    f("--decode-instances", "serve.decode_instances", "Decode instances (default 1)"),
    f("--decode-tp", "serve.decode_tp", "GPUs (tensor-parallel) per decode instance (default 8)"),
    f("--max-batch", "serve.max_batch", "Most requests a decode instance runs at once (default 64)"),
    f("--max-batch-tokens", "serve.max_batch_tokens", "Most tokens one batch step processes (default 8192)"),
    f("--rate", "serve.rate", "Poisson arrivals, requests per second (default 2)"),
    f("--requests", "serve.requests", "Requests of a Poisson run (default 200)"),
    f("--prompt-tokens", "serve.prompt_tokens", "Prompt tokens per request (default 2048)"),
    f("--output-tokens", "serve.output_tokens", "Output tokens per request (default 256)"),
    f("--trace", "serve.trace", "Request trace CSV: arrival_s,prompt_tokens,output_tokens instead of Poisson arrivals"),
    f("--ttft-slo", "serve.ttft_slo", "Time-to-first-token SLO such as 2s (default 2s)"),
    f("--tpot-slo", "serve.tpot_slo", "Time-per-output-token SLO such as 100ms (default 100ms)"),
    f("--network", "serve.network", "fabric (default: KV transfers and collectives on the engine) or ideal (no network time)"),
    f("--expert-parallel", "serve.expert_parallel", "A MoE model's experts expert-parallel over each instance's GPUs (dispatch and combine all-to-alls per layer): true or false (default)"),
    f("--moe-skew", "serve.moe_skew", "Routing skew of the expert-parallel dispatch and combine: uniform (default), zipf:S or histogram:FILE"),
    f("--step-model", "train.step_model", "How the step is timed: analytic (default, closed form) or flow_dag (the whole step simulated on the flow engine)"),
];

/// Sets the dotted `key` in `doc`, creating its table.
fn set(doc: &mut toml::Table, key: &str, v: Value) {
    match key.split_once('.') {
        Some((table, rest)) => {
            let t = doc
                .entry(table)
                .or_insert_with(|| Value::Table(toml::Table::new()));
            if !t.is_table() {
                *t = Value::Table(toml::Table::new());
            }
            if let Value::Table(t) = t {
                set(t, rest, v);
            }
        }
        None => {
            doc.insert(key.to_string(), v);
        }
    }
}

/// A flag's text as TOML would read it: a whole number, a number, a boolean, else a string.
fn typed(raw: &str) -> Option<Value> {
    raw.parse()
        .map(Value::Integer)
        .or_else(|_| raw.parse().map(Value::Float))
        .or_else(|_| raw.parse().map(Value::Boolean))
        .ok()
}

impl Scenario {
    /// Applies command-line overrides in order; an unknown flag or a value of the wrong type is
    /// an error naming the flag. A flag that two keys share (`--seeds`) sets the first.
    pub fn apply_flags(&mut self, pairs: &[(String, String)]) -> Result<(), InputError> {
        self.apply_flags_for(pairs, |_| true)
    }

    /// The same for a command that takes the keys `takes` accepts: a flag sets its row among
    /// those (`--seeds` is `compare.seeds` for compare, `seeds` for collective and train).
    pub fn apply_flags_for(
        &mut self,
        pairs: &[(String, String)],
        takes: impl Fn(&str) -> bool,
    ) -> Result<(), InputError> {
        for (flag, raw) in pairs {
            let Some(known) = FLAGS.iter().find(|f| f.flag == flag && takes(f.key)) else {
                let all: Vec<&str> = FLAGS.iter().map(|f| f.flag).collect();
                return Err(InputError::flag(
                    flag,
                    raw,
                    "is not a scenario flag",
                    all.join(", "),
                ));
            };
            let raw = raw.trim();
            // A typed value first; text where the key takes text (`--fabric 400` is an id).
            let mut result = None;
            for v in typed(raw).into_iter().chain([Value::String(raw.into())]) {
                let mut doc = self.doc.clone();
                set(&mut doc, known.key, v);
                result = Some(
                    Value::Table(doc.clone())
                        .try_into::<ScenarioFile>()
                        .map(|file| (doc, file)),
                );
                if matches!(result, Some(Ok(_))) {
                    break;
                }
            }
            match result.expect("at least the text value was tried") {
                Ok((doc, file)) => (self.doc, self.file) = (doc, file),
                Err(e) => {
                    let e = InputError::from_toml(&Source::new("command line", ""), &e);
                    return Err(InputError::flag(
                        flag,
                        raw,
                        format!("is not {}", e.allowed),
                        e.allowed,
                    ));
                }
            }
            self.flags.insert(known.key.to_string(), flag.clone());
        }
        Ok(())
    }
}

/// `compare`'s `--fabric`: the fabrics compared, each a profile id, `ID:untuned` for its
/// documented untuned parameter set; it sets `[compare] fabrics`.
pub const COMPARE_FABRIC_HELP: &str = "Fabrics compared, a comma-separated list of profile ids (ib-ndr, ib-xdr, roce-400g, roce-800g, roce-400g-hpcc, roce-400g-ar, roce-800g-ar, uec-400g, uec-800g), ID:untuned for a profile's untuned set";

impl Scenario {
    /// `compare`'s flags: `--fabric` is the list of compared fabrics
    /// ([`COMPARE_FABRIC_HELP`]), every other flag as [`Scenario::apply_flags`] applies it.
    pub fn apply_compare_flags(
        &mut self,
        pairs: &[(String, String)],
        takes: impl Fn(&str) -> bool,
    ) -> Result<(), InputError> {
        let (fabric, rest): (Vec<_>, Vec<_>) =
            pairs.iter().cloned().partition(|(f, _)| f == "--fabric");
        self.apply_flags_for(&rest, takes)?;
        match fabric.last() {
            Some((_, list)) => self.set_compare_fabrics(list),
            None => Ok(()),
        }
    }

    fn set_compare_fabrics(&mut self, list: &str) -> Result<(), InputError> {
        let bad = |item: &str, problem: &str| {
            InputError::flag(
                "--fabric",
                item,
                problem,
                "profile ids separated by commas, each optionally :tuned or :untuned",
            )
        };
        let mut entries = Vec::new();
        for item in list.split(',').map(str::trim) {
            let (id, tuned) = match item.split_once(':') {
                None => (item, true),
                Some((id, "tuned")) => (id, true),
                Some((id, "untuned")) => (id, false),
                Some(_) => return Err(bad(item, "is not ID, ID:tuned or ID:untuned")),
            };
            if id.is_empty() {
                return Err(bad(list, "names an empty fabric"));
            }
            let mut t = toml::Table::new();
            t.insert("name".into(), Value::String(item.into()));
            t.insert("profile".into(), Value::String(id.into()));
            t.insert("tuned".into(), Value::Boolean(tuned));
            entries.push(Value::Table(t));
        }
        let mut doc = self.doc.clone();
        set(&mut doc, "compare.fabrics", Value::Array(entries));
        let file = Value::Table(doc.clone())
            .try_into::<ScenarioFile>()
            .map_err(|e| {
                let e = InputError::from_toml(&Source::new("command line", ""), &e);
                bad(list, &format!("is not {}", e.allowed))
            })?;
        (self.doc, self.file) = (doc, file);
        self.flags
            .insert("compare.fabrics".to_string(), "--fabric".to_string());
        Ok(())
    }
}
