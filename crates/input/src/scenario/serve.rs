//! The `[serve]` section: an inference deployment for `fabricsim serve` (model, GPU pools,
//! batching limits, request arrivals, SLOs). The cluster it runs on is `[cluster]`, `[fabric]`
//! and `[topology]`, shared with `plan`. [`ServeSection::resolve`] checks every key once into a
//! [`ServeSpec`]; each error names the file line and key (or the flag) and what is allowed.

use serde::Deserialize;

use super::Scenario;
use super::serve_trace::{self, TraceRequest};
use crate::moe_skew::{self, Skew};
use fabricsim_core::error::InputError;
use fabricsim_core::units::{Time, parse_time};

/// Most requests a run simulates (each is a few events and KV messages).
pub const MAX_REQUESTS: u64 = 1_000_000;
/// Longest prompt or output, tokens.
pub const MAX_TOKENS: u64 = 1 << 20;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServeSection {
    /// Preset id (data/models/*.toml); default llama3-70b.
    pub model: Option<String>,
    /// Weights and KV cache element type: "bf16" (default, 2 bytes) or "fp8" (1 byte).
    pub precision: Option<String>,
    /// "disaggregated" (default: prefill and decode pools) or "colocated" (one pool doing both).
    pub mode: Option<String>,
    pub prefill_instances: Option<u64>,
    pub prefill_tp: Option<u64>,
    pub decode_instances: Option<u64>,
    pub decode_tp: Option<u64>,
    /// Most requests a decode (or colocated) instance runs at once (default 64).
    pub max_batch: Option<u64>,
    /// Most tokens one batch step processes: prompt tokens of a prefill plus one per running
    /// decode (default 8192).
    pub max_batch_tokens: Option<u64>,
    /// Poisson arrival rate, requests per second (default 2).
    pub rate: Option<f64>,
    /// Requests of a Poisson run (default 200).
    pub requests: Option<u64>,
    /// Prompt and output tokens of every Poisson request (defaults 2048 and 256).
    pub prompt_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// A CSV trace `arrival_s,prompt_tokens,output_tokens` (path relative to the scenario)
    /// replacing the Poisson arrivals.
    pub trace: Option<String>,
    /// The arrivals' seed (default 1); further seeds derive from it.
    pub seed: Option<u64>,
    /// SLOs goodput counts against (defaults 2s and 100ms).
    pub ttft_slo: Option<String>,
    pub tpot_slo: Option<String>,
    /// "fabric" (default: transfers and collectives run on the engine) or "ideal" (no network
    /// time: the compute-only baseline).
    pub network: Option<String>,
    /// A MoE model's expert layers expert-parallel over each instance's GPUs (default false:
    /// the experts tensor-parallel like the dense layers).
    pub expert_parallel: Option<bool>,
    /// The expert-parallel routing skew: "uniform" (default), "zipf:S" or "histogram:FILE".
    pub moe_skew: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Disaggregated,
    Colocated,
}

/// A GPU pool: `instances` model replicas of `tp` GPUs each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pool {
    pub instances: u64,
    pub tp: u64,
}

impl Pool {
    pub fn gpus(&self) -> u64 {
        self.instances * self.tp
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    Poisson {
        rate: f64,
        requests: u64,
        prompt_tokens: u64,
        output_tokens: u64,
    },
    Trace {
        file: String,
        requests: Vec<TraceRequest>,
    },
}

/// The `[serve]` section checked: what `workload::serve` runs.
#[derive(Clone, Debug, PartialEq)]
pub struct ServeSpec {
    pub model: String,
    /// Bytes per weight and KV element.
    pub bytes_per_element: u64,
    pub fp8: bool,
    pub mode: Mode,
    /// Disaggregated: the prefill pool; colocated: none.
    pub prefill: Option<Pool>,
    /// Disaggregated: the decode pool; colocated: the one pool.
    pub decode: Pool,
    pub max_batch: u64,
    pub max_batch_tokens: u64,
    pub arrivals: Arrivals,
    pub seed: u64,
    pub ttft_slo: Time,
    pub tpot_slo: Time,
    pub ideal_network: bool,
    /// The MoE layers' expert parallelism and routing skew; `None`: tensor-parallel experts.
    pub expert_parallel: Option<Skew>,
}

fn choice<'a>(
    s: &Scenario,
    key: &str,
    v: &'a Option<String>,
    default: &'a str,
    allowed: &[&str],
) -> Result<&'a str, InputError> {
    let v = v.as_deref().unwrap_or(default);
    if allowed.contains(&v) {
        Ok(v)
    } else {
        Err(s.error(key, format!("\"{v}\""), "unknown value", allowed.join(", ")))
    }
}

fn count(
    s: &Scenario,
    key: &str,
    v: Option<u64>,
    default: u64,
    hi: u64,
) -> Result<u64, InputError> {
    let v = v.unwrap_or(default);
    if v == 0 || v > hi {
        return Err(s.error(key, v, "out of range", format!("1 to {hi}")));
    }
    Ok(v)
}

fn duration(
    s: &Scenario,
    key: &str,
    v: &Option<String>,
    default: &str,
) -> Result<Time, InputError> {
    let text = v.as_deref().unwrap_or(default);
    match parse_time(text) {
        Ok(t) if t > Time::ZERO => Ok(t),
        Ok(_) => Err(s.error(
            key,
            format!("\"{text}\""),
            "must be above 0",
            "a duration such as 200ms, 1.5s",
        )),
        Err(p) => Err(s.error(
            key,
            format!("\"{text}\""),
            p,
            "a duration such as 200ms, 1.5s",
        )),
    }
}

impl ServeSection {
    /// The section of `s` checked (flags already applied); every key has a default.
    pub fn resolve(s: &Scenario) -> Result<ServeSpec, InputError> {
        let d = s.file.serve.clone().unwrap_or_default();
        d.resolve_section(s, "serve")
    }

    /// This section checked, its keys named `{table}.KEY` (`serve`, or a `[[jobs]]` entry's
    /// `jobs[1].serve`).
    pub fn resolve_section(&self, s: &Scenario, table: &str) -> Result<ServeSpec, InputError> {
        let d = self;
        let k = |field: &str| format!("{table}.{field}");
        let precision = choice(s, &k("precision"), &d.precision, "bf16", &["bf16", "fp8"])?;
        let mode = match choice(
            s,
            &k("mode"),
            &d.mode,
            "disaggregated",
            &["disaggregated", "colocated"],
        )? {
            "colocated" => Mode::Colocated,
            _ => Mode::Disaggregated,
        };
        let pool = |inst: &str, tp: &str, vi, vt, di, dt| -> Result<Pool, InputError> {
            Ok(Pool {
                instances: count(s, inst, vi, di, 4096)?,
                tp: count(s, tp, vt, dt, 64)?,
            })
        };
        let decode = pool(
            &k("decode_instances"),
            &k("decode_tp"),
            d.decode_instances,
            d.decode_tp,
            1,
            8,
        )?;
        let prefill = match mode {
            Mode::Disaggregated => Some(pool(
                &k("prefill_instances"),
                &k("prefill_tp"),
                d.prefill_instances,
                d.prefill_tp,
                1,
                8,
            )?),
            Mode::Colocated => {
                for (key, set) in [
                    (&k("prefill_instances"), d.prefill_instances.is_some()),
                    (&k("prefill_tp"), d.prefill_tp.is_some()),
                ] {
                    if set {
                        return Err(s.error(
                            key,
                            "(set)",
                            "a colocated deployment has one pool",
                            "decode_instances and decode_tp size it; or mode = \"disaggregated\"",
                        ));
                    }
                }
                None
            }
        };
        let max_batch = count(s, &k("max_batch"), d.max_batch, 64, 65_536)?;
        let max_batch_tokens = count(
            s,
            &k("max_batch_tokens"),
            d.max_batch_tokens,
            8192,
            MAX_TOKENS,
        )?;
        let arrivals = match &d.trace {
            Some(file) => {
                for (key, set) in [
                    (&k("rate"), d.rate.is_some()),
                    (&k("requests"), d.requests.is_some()),
                    (&k("prompt_tokens"), d.prompt_tokens.is_some()),
                    (&k("output_tokens"), d.output_tokens.is_some()),
                ] {
                    if set {
                        return Err(s.error(key, "(set)", "a trace gives every request's arrival and lengths", "either serve.trace or the Poisson keys (rate, requests, prompt_tokens, output_tokens)"));
                    }
                }
                let path = s.relative_path(&k("trace"), file);
                let requests = serve_trace::read(s, &k("trace"), &path)?;
                Arrivals::Trace {
                    file: path,
                    requests,
                }
            }
            None => {
                let rate = d.rate.unwrap_or(2.0);
                if !(rate.is_finite() && rate > 0.0 && rate <= 1e6) {
                    return Err(s.error(
                        &k("rate"),
                        rate,
                        "out of range",
                        "requests per second above 0, at most 1e6",
                    ));
                }
                Arrivals::Poisson {
                    rate,
                    requests: count(s, &k("requests"), d.requests, 200, MAX_REQUESTS)?,
                    prompt_tokens: count(
                        s,
                        &k("prompt_tokens"),
                        d.prompt_tokens,
                        2048,
                        MAX_TOKENS,
                    )?,
                    output_tokens: count(s, &k("output_tokens"), d.output_tokens, 256, MAX_TOKENS)?,
                }
            }
        };
        if let Arrivals::Poisson { prompt_tokens, .. } = arrivals
            && prompt_tokens > max_batch_tokens
        {
            return Err(s.error(
                &k("prompt_tokens"),
                prompt_tokens,
                "does not fit one batch",
                format!("at most max_batch_tokens ({max_batch_tokens})"),
            ));
        }
        if let Arrivals::Trace { requests, .. } = &arrivals
            && let Some((i, r)) = requests
                .iter()
                .enumerate()
                .find(|(_, r)| r.prompt_tokens > max_batch_tokens)
        {
            return Err(s.error(
                &k("max_batch_tokens"),
                max_batch_tokens,
                format!(
                    "trace request {} has a {}-token prompt, which does not fit one batch",
                    i + 1,
                    r.prompt_tokens
                ),
                "at least the longest prompt of the trace",
            ));
        }
        let network = choice(s, &k("network"), &d.network, "fabric", &["fabric", "ideal"])?;
        let skew_text = d.moe_skew.as_deref().unwrap_or("uniform");
        let bad = |problem: String| {
            s.error(
                &k("moe_skew"),
                format!("\"{skew_text}\""),
                problem,
                moe_skew::ALLOWED,
            )
        };
        let skew = Skew::parse(skew_text, &bad, &|f| s.relative_path(&k("moe_skew"), f))?;
        let expert_parallel = match (d.expert_parallel.unwrap_or(false), skew) {
            (true, skew) => Some(skew),
            (false, Skew::Uniform) => None,
            (false, _) => {
                return Err(bad(
                    "a routing skew needs expert parallelism (serve.expert_parallel = true)".into(),
                ));
            }
        };
        Ok(ServeSpec {
            model: d.model.clone().unwrap_or_else(|| "llama3-70b".into()),
            bytes_per_element: if precision == "fp8" { 1 } else { 2 },
            fp8: precision == "fp8",
            mode,
            prefill,
            decode,
            max_batch,
            max_batch_tokens,
            arrivals,
            seed: d.seed.unwrap_or(1),
            ttft_slo: duration(s, &k("ttft_slo"), &d.ttft_slo, "2s")?,
            tpot_slo: duration(s, &k("tpot_slo"), &d.tpot_slo, "100ms")?,
            ideal_network: network == "ideal",
            expert_parallel,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str) -> Result<ServeSpec, InputError> {
        ServeSection::resolve(&Scenario::parse("s.toml", text).unwrap())
    }

    #[test]
    fn defaults_resolve_and_errors_name_the_line_key_and_what_is_allowed() {
        let d = resolve("").unwrap();
        assert_eq!(
            (d.mode, d.decode, d.prefill),
            (
                Mode::Disaggregated,
                Pool {
                    instances: 1,
                    tp: 8
                },
                Some(Pool {
                    instances: 1,
                    tp: 8
                })
            )
        );
        assert_eq!((d.bytes_per_element, d.ideal_network), (2, false));
        let e = resolve("[serve]\nmax_batch = 64\ndecode_tp = 0\n").unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str(), e.value.as_str()),
            ("s.toml", Some(3), "serve.decode_tp", "0")
        );
        assert!(e.allowed.contains("1 to 64"));
        let e = resolve("[serve]\nnetwork = \"fast\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "serve.network"));
        assert!(e.allowed.contains("ideal"));
        let e = resolve("[serve]\nttft_slo = \"2 parsecs\"\n").unwrap_err();
        assert_eq!(e.key, "serve.ttft_slo");
        let e = resolve("[serve]\nmode = \"colocated\"\nprefill_tp = 4\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(3), "serve.prefill_tp"));
        let e = resolve("[serve]\nprompt_tokens = 9000\n").unwrap_err();
        assert!(e.problem.contains("does not fit"), "{e}");
        let e = resolve("[serve]\ntrace = \"t.csv\"\nrate = 3\n").unwrap_err();
        assert_eq!(e.key, "serve.rate");
        let e = resolve("[serve]\ntrace = \"/nonexistent/t.csv\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "serve.trace"));
        let e = resolve("[serve]\nmoe_skew = \"zipf:1.2\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "serve.moe_skew"));
        assert!(e.problem.contains("expert_parallel"), "{e}");
        let e = resolve("[serve]\nexpert_parallel = true\nmoe_skew = \"zipf:0\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(3), "serve.moe_skew"));
        let ep = resolve("[serve]\nexpert_parallel = true\nmoe_skew = \"zipf:1.2\"\n").unwrap();
        assert_eq!(ep.expert_parallel, Some(Skew::Zipf(1.2)));
        let e = Scenario::parse("s.toml", "[serve]\nbatch = 3\n").unwrap_err();
        assert_eq!((e.line, e.key.as_str()), (Some(2), "serve.batch"));
    }
}
