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
    f("--gpus-per-node", "cluster.gpus_per_node", "GPUs per server"),
    f("--nics-per-node", "cluster.nics_per_node", "Scale-out NIC ports per server"),
    f("--gpu", "cluster.gpu", "GPU catalog id: a100, h100, h200, b200"),
    f("--nic", "cluster.nic", "NIC catalog id"),
    f("--server", "cluster.server", "Server catalog id"),
    f("--fabric", "fabric.profile", "Fabric profile: ib-ndr, ib-xdr, roce-400g, roce-800g, roce-400g-hpcc, or a .toml file"),
    f("--mtu", "fabric.mtu_bytes", "MTU in bytes"),
    f("--topology", "topology.kind", "fat-tree, rail-optimized, rail-only, dual-tor, or auto (plan: the cheapest that fits)"),
    f("--planes", "topology.planes", "Parallel fabrics (multi-plane): NIC port r on plane r mod planes"),
    f("--tiers", "topology.tiers", "auto, 2 or 3"),
    f("--oversubscription", "topology.oversubscription", "Leaf down:up ratio such as 1:1, 2:1"),
    f("--switch", "topology.switch", "Switch catalog id"),
    f("--servers-per-rack", "layout.servers_per_rack", "Servers per rack"),
    f("--racks-per-row", "layout.racks_per_row", "Racks per row"),
    f("--leaf-placement", "layout.leaf", "top-of-rack, end-of-row or network-row"),
    f("--spine-placement", "layout.spine", "end-of-row or network-row"),
    f("--years", "cost.years", "Years for the TCO"),
    f("--usd-per-kwh", "cost.usd_per_kwh", "Electricity price, USD per kWh"),
    f("--pue", "cost.pue", "Power usage effectiveness"),
    f("--engine", "engine", "Engine for DAG runs: packet, flow or auto (flow above 20M fabric packets)"),
    f("--max-memory", "max_memory", "Refuse a run whose estimated memory passes this, such as 16GB (default: 90% of MemAvailable)"),
    f("--catalog", "catalog", "A catalog file merged over the built-in one (same ids replace, new ids add)"),
    f("--seeds", "compare.seeds", "Seeds each simulated figure is measured over, reported as mean and 95% interval (default 5)"),
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
    f("--pp", "train.pp", "Pipeline-parallel degree (1F1B)"),
    f("--dp", "train.dp", "Data-parallel degree (default: GPUs / (tp*pp*cp))"),
    f("--ep", "train.ep", "Expert-parallel degree, inside dp (Megatron)"),
    f("--cp", "train.cp", "Context-parallel degree"),
    f("--zero", "train.zero", "ZeRO stage 0-3 (3 = FSDP; default 1)"),
    f("--dp-overlap", "train.dp_overlap", "Overlap data-parallel communication with compute: true (default) or false"),
    f("--dp-bucket-mb", "train.dp_bucket_mb", "Gradient bucket, MB (default Megatron's max(40M, 1M*dp) bf16 parameters)"),
    f("--recompute", "train.recompute", "Activation recomputation: none (default) or full"),
    f("--claims", "compare.claims", "The compare report's claims section: quick (default: the points that fit the default's time), full (also 16,384 GPUs on the flow engine) or off"),
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
    /// an error naming the flag.
    pub fn apply_flags(&mut self, pairs: &[(String, String)]) -> Result<(), InputError> {
        for (flag, raw) in pairs {
            let Some(known) = FLAGS.iter().find(|f| f.flag == flag) else {
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
