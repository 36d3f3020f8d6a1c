//! The GPU numbers the workload models need, in one place.
//!
//! The coordinator fills [`GpuSpec`] from the catalog (data/catalog/gpus.toml) once it lands;
//! until then [`GpuSpec::builtin`] carries the values of physics.md F1, each with its source.

/// What the step model needs to know about a GPU.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSpec {
    /// Catalog id (`h200`).
    pub id: String,
    /// Dense BF16 peak, TFLOP/s (the MFU denominator).
    pub peak_bf16_tflops: f64,
    /// HBM capacity, GB (1e9 bytes).
    pub hbm_gb: f64,
    /// NVLink bandwidth per GPU as vendors quote it (both directions summed), GB/s.
    pub nvlink_gb_per_s: f64,
    /// Where the numbers come from.
    pub source: &'static str,
}

/// The GPUs known before the catalog lands: (id, peak, HBM, NVLink, source), physics.md F1.
const BUILTIN: [(&str, f64, f64, f64, &str); 4] = [
    (
        "a100",
        312.0,
        80.0,
        600.0,
        "physics.md F1: A100 SXM, alpha-one-index (S)",
    ),
    (
        "h100",
        989.4,
        80.0,
        900.0,
        "physics.md F1: H100 SXM whitepaper via glennklockwood.com (V)",
    ),
    (
        "h200",
        989.0,
        141.0,
        900.0,
        "physics.md F1: H200 SXM, itkb.uw.cz (S)",
    ),
    (
        "b200",
        2250.0,
        192.0,
        1800.0,
        "physics.md F1: B200 HGX 1000 W, glennklockwood.com (S)",
    ),
];

impl GpuSpec {
    /// The built-in spec for `id`, if there is one.
    pub fn builtin(id: &str) -> Option<GpuSpec> {
        BUILTIN
            .iter()
            .find(|g| g.0 == id)
            .map(|&(id, peak, hbm, nvl, source)| GpuSpec {
                id: id.to_string(),
                peak_bf16_tflops: peak,
                hbm_gb: hbm,
                nvlink_gb_per_s: nvl,
                source,
            })
    }

    /// The ids [`GpuSpec::builtin`] knows, for error messages.
    pub fn builtin_ids() -> Vec<&'static str> {
        BUILTIN.iter().map(|g| g.0).collect()
    }

    /// NVLink bandwidth in one direction, bytes/s: half the quoted bidirectional figure
    /// (H100: 18 links x 50 GB/s bidirectional = 900 GB/s, 450 GB/s each way; physics.md F1).
    pub fn nvlink_one_way_bytes_per_s(&self) -> f64 {
        self.nvlink_gb_per_s * 1e9 / 2.0
    }

    /// Peak dense BF16 in FLOP/s.
    pub fn peak_flops(&self) -> f64 {
        self.peak_bf16_tflops * 1e12
    }
}
