//! The catalog's item types, exactly as written in `data/catalog/*.toml` (unknown keys rejected).
//!
//! Numbers are plain `f64`/`u32` in the units their names carry; each shipped value cites its
//! source (or says "estimate") in the data file.

use serde::Deserialize;

/// The link layer a switch or NIC speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkLayer {
    Infiniband,
    Ethernet,
}

impl LinkLayer {
    pub fn name(self) -> &'static str {
        match self {
            LinkLayer::Infiniband => "infiniband",
            LinkLayer::Ethernet => "ethernet",
        }
    }
}

/// One logical port configuration of a switch: `ports` ports at `port_gbps`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortMode {
    pub port_gbps: u32,
    pub ports: u32,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Switch {
    pub id: String,
    pub name: String,
    pub family: LinkLayer,
    /// Physical front-panel cages.
    pub cages: u32,
    pub modes: Vec<PortMode>,
    pub latency_ns: f64,
    /// Packet buffer; 0 when not published.
    pub buffer_mb: f64,
    /// Box power without pluggable optics.
    pub power_w: f64,
    pub rack_units: u32,
    pub price_usd: f64,
    /// Rate of the switch ASIC's SerDes lanes (`scenario::compat` checks the optics' lanes).
    #[serde(default)]
    pub serdes_gbps: Option<u32>,
    #[serde(default)]
    pub source: String,
}

impl Switch {
    /// The port mode at `gbps`, if the switch has one.
    pub fn mode(&self, gbps: u32) -> Option<&PortMode> {
        self.modes.iter().find(|m| m.port_gbps == gbps)
    }
    /// Logical ports per cage at `gbps` (2 = twin-port OSFP or a 2-way breakout).
    pub fn ports_per_cage(&self, gbps: u32) -> Option<u32> {
        self.mode(gbps).map(|m| m.ports / self.cages)
    }
    /// The port rates it offers, for error messages.
    pub fn rates(&self) -> String {
        let r: Vec<String> = self
            .modes
            .iter()
            .map(|m| format!("{}x{}G", m.ports, m.port_gbps))
            .collect();
        r.join(", ")
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nic {
    pub id: String,
    pub name: String,
    pub families: Vec<LinkLayer>,
    pub port_gbps: u32,
    /// Ports the card can run as, sharing `port_gbps` (ConnectX-8: one 800G port or two
    /// 400G); default 1.
    #[serde(default = "one_port")]
    pub breakout: u32,
    pub latency_ns: f64,
    pub power_w: f64,
    pub price_usd: f64,
    #[serde(default)]
    pub source: String,
}

fn one_port() -> u32 {
    1
}

impl Nic {
    /// The ports one card gives at `rate_gbps`: 1 at its own rate, `port_gbps / rate_gbps`
    /// when that splits it into at most `breakout` ports; `None` when it does not run there.
    pub fn ports_at(&self, rate_gbps: u32) -> Option<u32> {
        if self.port_gbps == rate_gbps {
            return Some(1);
        }
        let k = self.port_gbps / rate_gbps.max(1);
        (self.port_gbps.is_multiple_of(rate_gbps.max(1)) && (2..=self.breakout).contains(&k))
            .then_some(k)
    }
}

/// The optical or electrical technology of a link, cheapest-first is decided by price, not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediumClass {
    /// Passive direct-attach copper.
    Dac,
    /// Active copper (ACC / AEC).
    Acc,
    /// Active optical cable.
    Aoc,
    /// Multimode short reach.
    Sr,
    /// Single-mode, 500 m class.
    Dr,
    /// Single-mode, 2 km class.
    Fr,
}

impl MediumClass {
    pub const ALL: [MediumClass; 6] = [
        MediumClass::Dac,
        MediumClass::Acc,
        MediumClass::Aoc,
        MediumClass::Sr,
        MediumClass::Dr,
        MediumClass::Fr,
    ];

    /// The lowercase key the catalog and scenarios spell it with (serde's name).
    pub fn key(self) -> &'static str {
        match self {
            MediumClass::Dac => "dac",
            MediumClass::Acc => "acc",
            MediumClass::Aoc => "aoc",
            MediumClass::Sr => "sr",
            MediumClass::Dr => "dr",
            MediumClass::Fr => "fr",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            MediumClass::Dac => "DAC",
            MediumClass::Acc => "ACC/AEC",
            MediumClass::Aoc => "AOC",
            MediumClass::Sr => "SR (multimode)",
            MediumClass::Dr => "DR (single-mode)",
            MediumClass::Fr => "FR (single-mode)",
        }
    }
}

/// How a pluggable module drives its lanes: with a retiming DSP inside (`dsp`), linear on both
/// directions with the host SerDes equalising (`lpo`, LPO MSA 100G-DR-LPO), or retimed on
/// transmit only and linear on receive (`lro`). Co-packaged optics are not pluggable modules.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Drive {
    #[default]
    Dsp,
    Lpo,
    Lro,
}

impl Drive {
    pub const ALL: [Drive; 3] = [Drive::Dsp, Drive::Lpo, Drive::Lro];

    /// The lowercase key the catalog and scenarios spell it with (serde's name).
    pub fn key(self) -> &'static str {
        match self {
            Drive::Dsp => "dsp",
            Drive::Lpo => "lpo",
            Drive::Lro => "lro",
        }
    }
}

/// A transceiver carrying `ports` logical ports of `port_gbps` in one cage.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransceiverMode {
    pub port_gbps: u32,
    pub ports: u32,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transceiver {
    pub id: String,
    pub name: String,
    pub class: MediumClass,
    pub lane_gbps: u32,
    pub modes: Vec<TransceiverMode>,
    pub reach_m: f64,
    pub power_w: f64,
    /// The price in use: as shipped, the third-party (compatible) module; the vendor's own
    /// when `[cost] optics = "vendor"` ([`super::Catalog::choose_optics`]).
    pub price_usd: f64,
    /// The vendor-branded (OEM) module's price, where it differs from the third-party one.
    #[serde(default)]
    pub vendor_price_usd: Option<f64>,
    /// The price under the other `[cost] optics` choice (set by `choose_optics`).
    #[serde(skip)]
    pub other_price_usd: Option<f64>,
    /// `dsp` (the default: every module before linear drive), `lpo` or `lro`.
    #[serde(default)]
    pub drive: Drive,
    /// Catalog id of the fibre patch cord it takes.
    pub fiber: String,
    /// Fibre cords per module (2 for a twin-port OSFP with two MPO connectors).
    pub fibers: u32,
    #[serde(default)]
    pub source: String,
}

impl Transceiver {
    /// Logical ports per module at `gbps`.
    pub fn ports_at(&self, gbps: u32) -> Option<u32> {
        self.modes
            .iter()
            .find(|m| m.port_gbps == gbps)
            .map(|m| m.ports)
    }
}

/// How a cable assembly maps links to cages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CableShape {
    /// One port to one port.
    Straight,
    /// Two ports of a twin cage to two ports of another twin cage (one cable, two links).
    Twin,
    /// Two ports of a twin cage to two single-port ends (a breakout; one cable, two links).
    Split,
}

impl CableShape {
    /// Links one assembly carries.
    pub fn links(self) -> u32 {
        match self {
            CableShape::Straight => 1,
            CableShape::Twin | CableShape::Split => 2,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CableMode {
    pub port_gbps: u32,
    pub shape: CableShape,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cable {
    pub id: String,
    pub name: String,
    pub class: MediumClass,
    pub lane_gbps: u32,
    pub modes: Vec<CableMode>,
    pub reach_m: f64,
    /// Per assembly (both ends).
    pub power_w: f64,
    pub ns_per_m: f64,
    /// The price in use (third-party as shipped; see [`Transceiver::price_usd`]).
    pub price_usd: f64,
    /// The vendor-branded assembly's price, where it differs from the third-party one.
    #[serde(default)]
    pub vendor_price_usd: Option<f64>,
    /// The price under the other `[cost] optics` choice (set by `choose_optics`).
    #[serde(skip)]
    pub other_price_usd: Option<f64>,
    #[serde(default)]
    pub source: String,
}

impl Cable {
    pub fn shape_at(&self, gbps: u32) -> Option<CableShape> {
        self.modes
            .iter()
            .find(|m| m.port_gbps == gbps)
            .map(|m| m.shape)
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fiber {
    pub id: String,
    pub name: String,
    pub usd_per_m: f64,
    pub usd_fixed: f64,
    pub ns_per_m: f64,
    #[serde(default)]
    pub source: String,
}

impl Fiber {
    pub fn price(&self, length_m: f64) -> f64 {
        self.usd_fixed + self.usd_per_m * length_m
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    pub id: String,
    pub name: String,
    /// Dense BF16 peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// HBM capacity, GB (1e9 bytes).
    pub hbm_gb: f64,
    /// HBM bandwidth, TB/s (1e12 bytes/s): what memory-bound kernels move their bytes at.
    #[serde(rename = "hbm_TBps")]
    pub hbm_tbps: f64,
    /// Dense FP8 peak, TFLOP/s; absent on GPUs without FP8 tensor cores.
    #[serde(default)]
    pub fp8_tflops: Option<f64>,
    /// NVLink bandwidth per GPU as vendors quote it (both directions summed), GB/s.
    #[serde(rename = "nvlink_GBps")]
    pub nvlink_gbyteps: f64,
    pub tdp_w: f64,
    #[serde(default)]
    pub source: String,
}

impl Gpu {
    /// Peak dense BF16 in FLOP/s (the MFU denominator).
    pub fn peak_flops(&self) -> f64 {
        self.bf16_tflops * 1e12
    }
    /// NVLink bandwidth in one direction, bytes/s: half the quoted bidirectional figure
    /// (H100: 18 links x 50 GB/s bidirectional = 900 GB/s, 450 GB/s each way; NVIDIA H100
    /// whitepaper).
    pub fn nvlink_one_way_bytes_per_s(&self) -> f64 {
        self.nvlink_gbyteps * 1e9 / 2.0
    }

    /// [`Self::nvlink_one_way_bytes_per_s`] as a bit rate (what a DAG's NVLink messages run at).
    pub fn nvlink_rate(&self) -> fabricsim_core::units::BitRate {
        fabricsim_core::units::BitRate((self.nvlink_one_way_bytes_per_s() * 8.0).round() as u64)
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Server {
    pub id: String,
    pub name: String,
    /// Catalog id of its GPU.
    pub gpu: String,
    /// GPUs in the server: one NVLink domain (an HGX baseboard of 8, an NVL72 rack of 72), so
    /// traffic among them never reaches the scale-out fabric.
    pub gpus: u32,
    /// NVLink bandwidth of the whole domain as vendors quote it (every GPU's both directions
    /// summed), TB/s; checked against `gpus` x the GPU's `nvlink_GBps` (`catalog::check`).
    #[serde(default, rename = "nvlink_domain_TBps")]
    pub nvlink_domain_tbps: Option<f64>,
    pub power_w: f64,
    pub price_usd: f64,
    /// Whether `price_usd` includes the scale-out NICs (the plan then counts them once, under
    /// the network).
    pub includes_nics: bool,
    /// PCIe generation of the host's link to each scale-out NIC (`scenario::compat`).
    #[serde(default)]
    pub pcie_gen: Option<u8>,
    /// PCIe lanes to each scale-out NIC.
    #[serde(default)]
    pub pcie_lanes_per_nic: Option<u32>,
    /// Scale-out NIC ports the server model takes.
    #[serde(default)]
    pub nic_slots: Option<u32>,
    /// Catalog id of the NIC built into the server, one card per GPU (a GB300 NVL72's
    /// ConnectX-8): the design's NIC when it runs the fabric's rate.
    #[serde(default)]
    pub nic: Option<String>,
    #[serde(default)]
    pub source: String,
}
