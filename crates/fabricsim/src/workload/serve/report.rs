//! A deployment's figures: per seed from its served requests ([`Metrics`]), then each a mean
//! and 95% interval over the seeds ([`Report`], `core::estimate`), as text, JSON and CSV.
//! Percentiles are nearest-rank (the smallest value with at least p% of the requests at or
//! below it); goodput is the share of requests meeting both SLOs (a one-token output has no
//! TPOT and meets that one), as DistServe defines SLO attainment (Zhong et al. 2024, §2).

use serde::Serialize;

use super::ServeJob;
use super::sim::Served;
use crate::columns::{Cells, Table};
use crate::error::Error;
use crate::workload::seeds;
use fabricsim_core::estimate::Estimate;
use fabricsim_input::scenario::serve::{Arrivals, Mode};

/// The figures, in report order: (name, unit, what).
pub const FIGURES: [(&str, &str, &str); 18] = [
    ("ttft_mean", "s", "time to first token, mean"),
    ("ttft_p50", "s", "time to first token, p50"),
    ("ttft_p90", "s", "time to first token, p90"),
    ("ttft_p99", "s", "time to first token, p99"),
    ("tpot_mean", "s", "time per output token, mean"),
    ("tpot_p50", "s", "time per output token, p50"),
    ("tpot_p90", "s", "time per output token, p90"),
    ("tpot_p99", "s", "time per output token, p99"),
    (
        "tokens_per_s_per_gpu",
        "tok/s",
        "output tokens per second per GPU (first arrival to last token)",
    ),
    ("goodput", "share", "requests meeting both SLOs"),
    (
        "goodput_rps",
        "req/s",
        "requests meeting both SLOs per second",
    ),
    (
        "good_tokens_per_s",
        "tok/s",
        "output tokens of the requests meeting both SLOs per second",
    ),
    ("queue_mean", "s", "TTFT: waiting for a prefill, mean"),
    ("prefill_compute_mean", "s", "TTFT: prefill compute, mean"),
    (
        "kv_transfer_p99",
        "s",
        "KV-cache transfer, prefill end to landed, p99",
    ),
    (
        "ttft_kv_share",
        "share",
        "of all TTFT, the KV-cache transfers",
    ),
    (
        "ttft_network_share",
        "share",
        "of all TTFT, the network (KV transfers and prefill TP collectives)",
    ),
    (
        "tpot_comm_share",
        "share",
        "of all decode time, the TP collectives",
    ),
];

/// The figures a deployment with a front-end adds after [`FIGURES`].
pub const FRONTEND_FIGURES: [(&str, &str, &str); 6] = [
    (
        "frontend_p99",
        "s",
        "front-end prompt, arrival to at its instance, p99",
    ),
    (
        "ttft_frontend_share",
        "share",
        "of all TTFT, the front-end prompts",
    ),
    (
        "e2e_p50",
        "s",
        "end to end, arrival to last token at the front-end (closed-form response), p50",
    ),
    ("e2e_p90", "s", "end to end, p90"),
    ("e2e_p99", "s", "end to end, p99"),
    (
        "e2e_network_share",
        "share",
        "of all end to end, the network (prompts, KV, TP collectives, last response)",
    ),
];

/// The figures of `job`: [`FIGURES`], then [`FRONTEND_FIGURES`] with a front-end.
fn figures_of(
    job: &ServeJob,
) -> impl Iterator<Item = &'static (&'static str, &'static str, &'static str)> {
    let fe: &[_] = if job.frontend.is_some() {
        &FRONTEND_FIGURES
    } else {
        &[]
    };
    FIGURES.iter().chain(fe)
}

/// One seed's figures, in [`FIGURES`] order, then [`FRONTEND_FIGURES`] with a front-end.
#[derive(Clone, Debug, PartialEq)]
pub struct Metrics(pub Vec<f64>);

/// Nearest-rank `p` percentile of sorted `v` (0 when empty), as `sim` reports its FCTs.
pub fn percentile(v: &[u64], p: f64) -> u64 {
    fabricsim_mech::results::percentile(v, p / 100.0).unwrap_or(0)
}

fn secs(ps: u64) -> f64 {
    ps as f64 / 1e12
}

fn mean(v: &[u64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        secs(v.iter().sum::<u64>()) / v.len() as f64
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

impl Metrics {
    pub fn of(job: &ServeJob, served: &[Served]) -> Metrics {
        let mut ttft: Vec<u64> = served.iter().map(Served::ttft_ps).collect();
        let mut tpot: Vec<u64> = served.iter().filter_map(Served::tpot_ps).collect();
        let mut kv: Vec<u64> = served.iter().map(|s| s.kv_ps).collect();
        ttft.sort_unstable();
        tpot.sort_unstable();
        kv.sort_unstable();
        let first = served
            .iter()
            .map(|s| s.request.arrival_ps)
            .min()
            .unwrap_or(0);
        let last = served.iter().map(|s| s.finish_ps).max().unwrap_or(0);
        let span = secs(last - first).max(1e-12);
        let tokens: u64 = served.iter().map(|s| s.request.output).sum();
        let (ttft_slo, tpot_slo) = (job.spec.ttft_slo.ps(), job.spec.tpot_slo.ps());
        let met: Vec<&Served> = served
            .iter()
            .filter(|s| s.ttft_ps() <= ttft_slo && s.tpot_ps().is_none_or(|t| t <= tpot_slo))
            .collect();
        let good = met.len();
        let good_tokens: u64 = met.iter().map(|s| s.request.output).sum();
        let sum = |f: fn(&Served) -> u64| served.iter().map(f).sum::<u64>();
        let ttft_all = sum(Served::ttft_ps);
        let decode_all = sum(|s| s.finish_ps - s.first_token_ps);
        let queue: Vec<u64> = served
            .iter()
            .map(|s| {
                s.ttft_ps() - s.frontend_ps - s.prefill_compute_ps - s.prefill_comm_ps - s.kv_ps
            })
            .collect();
        let prefill: Vec<u64> = served.iter().map(|s| s.prefill_compute_ps).collect();
        let mut m = vec![
            mean(&ttft),
            secs(percentile(&ttft, 50.0)),
            secs(percentile(&ttft, 90.0)),
            secs(percentile(&ttft, 99.0)),
            mean(&tpot),
            secs(percentile(&tpot, 50.0)),
            secs(percentile(&tpot, 90.0)),
            secs(percentile(&tpot, 99.0)),
            tokens as f64 / span / job.gpus() as f64,
            share(good as u64, served.len() as u64),
            good as f64 / span,
            good_tokens as f64 / span,
            mean(&queue),
            mean(&prefill),
            secs(percentile(&kv, 99.0)),
            share(sum(|s| s.kv_ps), ttft_all),
            share(sum(|s| s.kv_ps + s.prefill_comm_ps), ttft_all),
            share(sum(|s| s.decode_comm_ps), decode_all),
        ];
        if job.frontend.is_some() {
            let mut fe: Vec<u64> = served.iter().map(|s| s.frontend_ps).collect();
            fe.sort_unstable();
            m.push(secs(percentile(&fe, 99.0)));
            m.push(share(sum(|s| s.frontend_ps), ttft_all));
            let mut e2e: Vec<u64> = served.iter().map(Served::e2e_ps).collect();
            e2e.sort_unstable();
            for p in [50.0, 90.0, 99.0] {
                m.push(secs(percentile(&e2e, p)));
            }
            let network = sum(|s| {
                s.frontend_ps + s.prefill_comm_ps + s.kv_ps + s.decode_comm_ps + s.response_ps
            });
            m.push(share(network, sum(Served::e2e_ps)));
        }
        Metrics(m)
    }

    pub fn get(&self, name: &str) -> f64 {
        self.0[index(name)]
    }
}

fn index(name: &str) -> usize {
    FIGURES
        .iter()
        .chain(&FRONTEND_FIGURES)
        .position(|f| f.0 == name)
        .expect("a figure of FIGURES or FRONTEND_FIGURES")
}

/// One figure over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    #[serde(flatten)]
    pub estimate: Estimate,
}

/// The deployment and its figures over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub model: String,
    pub mode: &'static str,
    /// "instances x tp" of the prefill pool (none colocated) and the decode pool.
    pub prefill: Option<String>,
    pub decode: String,
    pub gpus: u64,
    pub arrivals: String,
    pub requests: u64,
    pub kv_bytes_per_request_mean: f64,
    pub ttft_slo_s: f64,
    pub tpot_slo_s: f64,
    pub network: &'static str,
    /// The front-end hosts and the prompt and response bytes per token (none without
    /// `[frontend]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frontend: Option<String>,
    pub seeds: u32,
    pub figures: Vec<Figure>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    /// Each seed's figures (for figures derived per seed, such as a cost per token).
    #[serde(skip)]
    pub per_seed: Vec<Metrics>,
}

impl Report {
    /// The estimates of `per_seed` (at least one seed).
    pub fn over(job: &ServeJob, per_seed: &[Metrics], interrupted: bool) -> Result<Report, Error> {
        if per_seed.is_empty() {
            return Err(Error::Run(
                "interrupted before the first seed finished".into(),
            ));
        }
        let mut figures = Vec::with_capacity(per_seed[0].0.len());
        for (i, (name, unit, _)) in figures_of(job).enumerate() {
            let v: Vec<f64> = per_seed.iter().map(|m| m.0[i]).collect();
            let estimate = if v.len() == 1 {
                seeds::single(v[0])
            } else {
                seeds::estimate(name, &v).map_err(Error::Run)?
            };
            figures.push(Figure {
                name,
                unit,
                estimate,
            });
        }
        let s = &job.spec;
        let pool = |p: &[Vec<u32>]| format!("{} x TP{}", p.len(), p.first().map_or(0, Vec::len));
        let (arrivals, requests) = match &s.arrivals {
            Arrivals::Poisson {
                rate,
                requests,
                prompt_tokens,
                output_tokens,
            } => (
                format!(
                    "Poisson {rate} req/s, {prompt_tokens} prompt and {output_tokens} output tokens"
                ),
                *requests,
            ),
            Arrivals::Trace { file, requests } => (format!("trace {file}"), requests.len() as u64),
        };
        let kv_mean = match &s.arrivals {
            _ if s.mode == Mode::Colocated => 0.0,
            Arrivals::Poisson { prompt_tokens, .. } => {
                super::kv::kv_bytes(&job.compute.model, *prompt_tokens, s.bytes_per_element) as f64
            }
            Arrivals::Trace { requests, .. } => {
                requests
                    .iter()
                    .map(|r| {
                        super::kv::kv_bytes(
                            &job.compute.model,
                            r.prompt_tokens,
                            s.bytes_per_element,
                        ) as f64
                    })
                    .sum::<f64>()
                    / requests.len() as f64
            }
        };
        Ok(Report {
            model: job.compute.model.id.clone(),
            mode: match s.mode {
                Mode::Disaggregated => "disaggregated",
                Mode::Colocated => "colocated",
            },
            prefill: (!job.prefill.is_empty()).then(|| pool(&job.prefill)),
            decode: pool(&job.decode),
            gpus: job.gpus(),
            arrivals,
            requests,
            kv_bytes_per_request_mean: kv_mean,
            ttft_slo_s: s.ttft_slo.as_secs_f64(),
            tpot_slo_s: s.tpot_slo.as_secs_f64(),
            network: if s.ideal_network { "ideal" } else { "fabric" },
            frontend: job.frontend.as_ref().map(|f| {
                format!(
                    "{} server(s) x {} NIC(s), {} fabric, {} B per prompt token, {} B per \
                     response token",
                    f.servers.len(),
                    f.nics,
                    if f.separate { "separate" } else { "shared" },
                    f.prompt_bytes_per_token,
                    f.response_bytes_per_token
                )
            }),
            seeds: per_seed.len() as u32,
            figures,
            status: interrupted.then_some("interrupted"),
            per_seed: per_seed.to_vec(),
        })
    }

    /// The figure `name` of [`FIGURES`].
    pub fn get(&self, name: &str) -> Estimate {
        self.figures[index(name)].estimate
    }

    pub fn to_text(&self) -> String {
        let mut t = format!(
            "serve {} ({}): {}decode {}, {} GPUs\narrivals: {} ({} requests); SLOs TTFT {} s, TPOT {} s; network {}; {} seed(s)\nKV cache per request: {:.1} MB\n\n",
            self.model,
            self.mode,
            self.prefill
                .as_ref()
                .map_or(String::new(), |p| format!("prefill {p}, ")),
            self.decode,
            self.gpus,
            self.arrivals,
            self.requests,
            self.ttft_slo_s,
            self.tpot_slo_s,
            self.network,
            self.seeds,
            self.kv_bytes_per_request_mean / 1e6,
        );
        if let Some(f) = &self.frontend {
            t.insert_str(t.len() - 1, &format!("front-end: {f}\n"));
        }
        for (f, (_, _, what)) in self
            .figures
            .iter()
            .zip(FIGURES.iter().chain(&FRONTEND_FIGURES))
        {
            let (k, unit) = match f.unit {
                "s" => (1e3, "ms"),
                "share" => (100.0, "%"),
                u => (1.0, u),
            };
            t += &format!(
                "{:<22} {:>24} {:<6} {what}\n",
                f.name,
                f.estimate.scaled(k).text(3),
                unit
            );
        }
        if self.status.is_some() {
            t += "# interrupted: the figures cover the seeds that finished\n";
        }
        t
    }

    /// One row per figure: its name, unit, mean, 95% interval and seeds.
    pub fn table(&self) -> Table {
        let f = &self.figures;
        let mut t = Table::default();
        t.push("figure", Cells::text(f.iter().map(|f| Some(&f.name))));
        t.push("unit", Cells::text(f.iter().map(|f| Some(&f.unit))));
        t.push("mean", Cells::f64(f.iter().map(|f| Some(f.estimate.mean))));
        t.push("lo", Cells::f64(f.iter().map(|f| Some(f.estimate.lo))));
        t.push("hi", Cells::f64(f.iter().map(|f| Some(f.estimate.hi))));
        t.push("seeds", Cells::u64(f.iter().map(|f| Some(f.estimate.n))));
        t
    }
}
