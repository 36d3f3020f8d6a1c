//! HPCC's parameters (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019,
//! §3.2-3.3), engine-neutral: the packet engine's algorithm is `fabricsim_packet::congestion`'s
//! `hpcc`, the flow engine's `fabricsim_flow::hpcc`.

use serde::Deserialize;

/// `[congestion.hpcc]` (a profile's or `[sim.congestion]`'s): HPCC on, with these parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "HpccTable")]
pub struct HpccParams {
    /// Target utilization η (paper: 0.95).
    pub eta: f64,
    /// Additive steps before a multiplicative update regardless of U (paper: maxStage 5).
    pub max_stage: u32,
    /// Additive increase W_AI in bytes; `None`: the ns-3 default, 10 Mb/s per 25 Gb/s of line
    /// rate over T (`run.py`: `ai = 10 * bw / 25`).
    pub w_ai_bytes: Option<u64>,
}

/// The table as written; every key optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HpccTable {
    eta: Option<f64>,
    max_stage: Option<u32>,
    w_ai_bytes: Option<u64>,
}

impl TryFrom<HpccTable> for HpccParams {
    type Error = String;
    fn try_from(t: HpccTable) -> Result<HpccParams, String> {
        let p = HpccParams {
            eta: t.eta.unwrap_or(0.95),
            max_stage: t.max_stage.unwrap_or(5),
            w_ai_bytes: t.w_ai_bytes,
        };
        if !(p.eta > 0.0 && p.eta <= 1.0) {
            return Err(format!("hpcc.eta = {}: allowed 0 < eta <= 1", p.eta));
        }
        if p.w_ai_bytes == Some(0) {
            return Err("hpcc.w_ai_bytes = 0: allowed a positive number of bytes".into());
        }
        Ok(p)
    }
}

impl Default for HpccParams {
    fn default() -> HpccParams {
        HpccTable {
            eta: None,
            max_stage: None,
            w_ai_bytes: None,
        }
        .try_into()
        .expect("the paper's parameters")
    }
}

impl HpccParams {
    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        HpccParams::try_from(HpccTable {
            eta: Some(self.eta),
            max_stage: Some(self.max_stage),
            w_ai_bytes: self.w_ai_bytes,
        })
        .map(|_| ())
        .map_err(|e| (e, "0 < eta <= 1, w_ai_bytes > 0"))
    }
}
