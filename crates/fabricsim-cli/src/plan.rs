//! `fabricsim plan`: the bill of materials, power and cost of a cluster's fabric.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

use crate::outcome::{Failure, Outcome};
use fabricsim::scenario::Scenario;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Csv,
}

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Scenario file (TOML); without one, the built-in defaults and the flags below are used.
    pub scenario: Option<PathBuf>,
    /// GPUs in the cluster ([cluster] gpus).
    #[arg(long, allow_hyphen_values = true)]
    pub gpus: Option<String>,
    /// GPUs per server ([cluster] gpus_per_node).
    #[arg(long, allow_hyphen_values = true)]
    pub gpus_per_node: Option<String>,
    /// Scale-out NIC ports per server ([cluster] nics_per_node).
    #[arg(long, allow_hyphen_values = true)]
    pub nics_per_node: Option<String>,
    /// GPU catalog id ([cluster] gpu).
    #[arg(long)]
    pub gpu: Option<String>,
    /// NIC catalog id ([cluster] nic).
    #[arg(long)]
    pub nic: Option<String>,
    /// Server catalog id ([cluster] server).
    #[arg(long)]
    pub server: Option<String>,
    /// Fabric profile: ib-ndr, ib-xdr, roce-400g, roce-800g ([fabric] profile).
    #[arg(long)]
    pub fabric: Option<String>,
    /// MTU in bytes ([fabric] mtu_bytes).
    #[arg(long, allow_hyphen_values = true)]
    pub mtu: Option<String>,
    /// fat-tree or rail-optimized ([topology] kind).
    #[arg(long)]
    pub topology: Option<String>,
    /// auto, 2 or 3 ([topology] tiers).
    #[arg(long, allow_hyphen_values = true)]
    pub tiers: Option<String>,
    /// Leaf down:up ratio such as 1:1, 2:1 ([topology] oversubscription).
    #[arg(long)]
    pub oversubscription: Option<String>,
    /// Switch catalog id ([topology] switch).
    #[arg(long)]
    pub switch: Option<String>,
    /// Servers per rack ([layout] servers_per_rack).
    #[arg(long, allow_hyphen_values = true)]
    pub servers_per_rack: Option<String>,
    /// Racks per row ([layout] racks_per_row).
    #[arg(long, allow_hyphen_values = true)]
    pub racks_per_row: Option<String>,
    /// top-of-rack, end-of-row or network-row ([layout] leaf).
    #[arg(long)]
    pub leaf_placement: Option<String>,
    /// end-of-row or network-row ([layout] spine).
    #[arg(long)]
    pub spine_placement: Option<String>,
    /// Years for the TCO ([cost] years).
    #[arg(long, allow_hyphen_values = true)]
    pub years: Option<String>,
    /// Electricity price, USD per kWh ([cost] usd_per_kwh).
    #[arg(long, allow_hyphen_values = true)]
    pub usd_per_kwh: Option<String>,
    /// Power usage effectiveness ([cost] pue).
    #[arg(long, allow_hyphen_values = true)]
    pub pue: Option<String>,
    /// A catalog file merged over the built-in catalog (same ids replace, new ids add).
    #[arg(long)]
    pub catalog: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the topology as a Graphviz DOT file.
    #[arg(long, value_name = "FILE")]
    pub export_dot: Option<PathBuf>,
}

impl PlanArgs {
    /// The scenario flags given, in the library's (flag, value) form.
    fn flag_pairs(&self) -> Vec<(String, String)> {
        let all = [
            ("--gpus", &self.gpus),
            ("--gpus-per-node", &self.gpus_per_node),
            ("--nics-per-node", &self.nics_per_node),
            ("--gpu", &self.gpu),
            ("--nic", &self.nic),
            ("--server", &self.server),
            ("--fabric", &self.fabric),
            ("--mtu", &self.mtu),
            ("--topology", &self.topology),
            ("--tiers", &self.tiers),
            ("--oversubscription", &self.oversubscription),
            ("--switch", &self.switch),
            ("--servers-per-rack", &self.servers_per_rack),
            ("--racks-per-row", &self.racks_per_row),
            ("--leaf-placement", &self.leaf_placement),
            ("--spine-placement", &self.spine_placement),
            ("--years", &self.years),
            ("--usd-per-kwh", &self.usd_per_kwh),
            ("--pue", &self.pue),
            ("--catalog", &self.catalog),
        ];
        all.into_iter()
            .filter_map(|(f, v)| v.as_ref().map(|v| (f.to_string(), v.clone())))
            .collect()
    }
}

fn write_file(path: &PathBuf, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes)
        .map_err(|e| Failure::Run(format!("cannot write {}: {e}", path.display())))
}

pub fn run(args: PlanArgs) -> Outcome {
    let mut scenario = match &args.scenario {
        Some(p) => Scenario::load(&p.display().to_string())?,
        None => Scenario::defaults(),
    };
    scenario.apply_flags(&args.flag_pairs())?;
    let (design, topo, plan) = fabricsim::plan::run(&scenario)?;
    let report = match args.format {
        Format::Text => fabricsim::report::plan::text(&plan, &design),
        Format::Json => {
            let v = fabricsim::report::plan::json(&plan, &design);
            serde_json::to_string_pretty(&v).map_err(|e| Failure::Run(e.to_string()))? + "\n"
        }
        Format::Csv => fabricsim::report::plan::csv(&plan, &design),
    };
    if let Some(path) = &args.export_dot {
        let mut buf = Vec::new();
        fabricsim::topology::dot::write(&topo, &mut buf)
            .map_err(|e| Failure::Run(e.to_string()))?;
        write_file(path, &buf)?;
    }
    // The ns-3 topology export (`--export-ns3 FILE`, src/io) is wired here once it lands.
    match &args.out {
        Some(path) => write_file(path, report.as_bytes())?,
        None => print!("{report}"),
    }
    Ok(())
}
