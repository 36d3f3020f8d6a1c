//! Validation: turns a [`Scenario`] into a [`Design`] every later stage can trust (catalog
//! items resolved, numbers in range, the topology spec filled in).

use super::Scenario;
use crate::catalog::{Catalog, Drive, Gpu, Item, Nic, OpticsPrices, Server, Switch, find, id_list};
use crate::profile::Profile;
use fabricsim_core::error::InputError;
use fabricsim_core::topology::{BuildError, Kind, Tiers, Topology, TopologySpec};
use fabricsim_core::units::BitRate;

/// Where a tier of switches is placed (see `plan::layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    TopOfRack,
    EndOfRow,
    NetworkRow,
}

impl Placement {
    pub fn name(self) -> &'static str {
        match self {
            Placement::TopOfRack => "top-of-rack",
            Placement::EndOfRow => "end-of-row",
            Placement::NetworkRow => "network-row",
        }
    }
}

/// The validated rack-and-row parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct LayoutParams {
    pub servers_per_rack: u32,
    pub racks_per_row: u32,
    pub rack_width_m: f64,
    pub row_pitch_m: f64,
    pub rack_height_m: f64,
    pub tray_above_rack_m: f64,
    pub switches_per_rack: u32,
    pub leaf: Placement,
    pub spine: Placement,
    pub slack_m: f64,
    /// The module drive the plan prefers (`[layout] optics`).
    pub optics: Drive,
}

/// The validated operating-cost parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CostParams {
    pub years: u32,
    pub usd_per_kwh: f64,
    pub pue: f64,
    /// The `[cost]` licence, support, labour, spares and management-network keys.
    pub switch_software_usd_per_year: f64,
    pub fabric_manager_usd_per_node_year: f64,
    pub support_share_per_year: f64,
    pub install_usd_per_cable: f64,
    pub install_usd_per_switch: f64,
    pub spares_share: f64,
    pub oob_usd_per_port: f64,
    /// `[cost] optics`: which optics prices the catalog's `price_usd` now holds.
    pub optics: OpticsPrices,
}

/// A validated cluster design: what `plan` (and the simulators) start from.
#[derive(Clone, Debug)]
pub struct Design {
    pub name: String,
    /// The catalog with the user's file and price overrides applied.
    pub catalog: Catalog,
    /// The fabric profile with the scenario's overrides applied.
    pub profile: Profile,
    pub gpu: Gpu,
    pub server: Server,
    pub nic: Nic,
    /// NIC cards per server: its ports at the fabric's rate over the ports a card gives
    /// ([`Nic::ports_at`]), or one per GPU for the server's built-in NIC.
    pub nic_cards_per_node: u32,
    pub switch: Switch,
    pub spec: TopologySpec,
    pub layout: LayoutParams,
    pub cost: CostParams,
    /// `[nccl]`: the collectives' channels and QPs (`setup::params_from_design` puts its QPs
    /// per connection over the profile's).
    pub nccl: super::nccl::Nccl,
    /// `[reliability]`: the MTBF scale and checkpoint interval.
    pub reliability: super::reliability::ReliabilityParams,
    /// `[sim]`'s link-level retry on this fabric (`scenario::llr::of_design`); `None`: off.
    pub llr: Option<fabricsim_mech::llr::Llr>,
    /// What works but not as the parts promise (`compat`), for the commands to print.
    pub warnings: Vec<String>,
}

const MAX_GPUS: i64 = 1 << 20;
/// Scale-out NIC ports per server: an NVL72 rack's 72 ConnectX-8 as 2 x 400G each.
const MAX_NICS_PER_NODE: i64 = 144;

impl Scenario {
    /// Validates the scenario and resolves every catalog reference.
    pub fn design(&self) -> Result<Design, InputError> {
        let f = &self.file;
        let profile_id = f.fabric.profile.trim();
        let mut profile = if profile_id.ends_with(".toml") {
            // A user profile file, same layout as data/profiles/*.toml.
            let path = self.relative_path("fabric.profile", profile_id);
            let text = crate::io::input::read_input(path.as_ref()).map_err(|e| {
                self.error(
                    "fabric.profile",
                    profile_id,
                    e,
                    "a readable profile .toml file",
                )
            })?;
            Profile::parse(&fabricsim_core::error::Source::new(path, text))?
        } else {
            Profile::builtin(profile_id).map_err(|(problem, allowed)| {
                self.error("fabric.profile", profile_id, problem, allowed)
            })?
        };
        if let Some(mtu) = f.fabric.mtu_bytes {
            if ![256, 512, 1024, 2048, 4096].contains(&mtu) {
                return Err(self.error(
                    "fabric.mtu_bytes",
                    mtu,
                    "is not an InfiniBand/RoCE MTU",
                    "256, 512, 1024, 2048, 4096",
                ));
            }
            profile.packet.mtu_bytes = mtu as u32;
        }
        let nccl = self.nccl()?;
        let rate = profile.ports.rate_gbps;
        let layer = profile.family.link_layer();

        let mut catalog = match &f.catalog {
            Some(p) => Catalog::with_user_file(&self.relative_path("catalog", p))?,
            None => Catalog::builtin()?,
        };
        let optics = OpticsPrices::from_key(f.cost.optics.trim()).ok_or_else(|| {
            self.error(
                "cost.optics",
                &f.cost.optics,
                "is not a source of optics",
                "\"third_party\" (compatible modules) or \"vendor\" (vendor-branded)",
            )
        })?;
        catalog.choose_optics(optics);
        for (id, &usd) in &f.cost.prices_usd {
            let key = format!("cost.prices_usd.{id}");
            if !(usd.is_finite() && usd >= 0.0) {
                return Err(self.error(&key, usd, "must not be negative", "a price >= 0"));
            }
            if !catalog.set_price(id, usd) {
                return Err(self.error(
                    &key,
                    id,
                    "is not a catalog id",
                    id_list(catalog.ids().into_iter()),
                ));
            }
        }

        // [cluster]
        let c = &f.cluster;
        let gpus = self.count("cluster.gpus", c.gpus, 1, MAX_GPUS)?;
        let (gpu, server) = self.server(c, &catalog)?;
        let gpus_per_node = server.gpus;
        let nics_per_node = match c.nics_per_node {
            Some(n) => self.count("cluster.nics_per_node", n, 1, MAX_NICS_PER_NODE)?,
            None => gpus_per_node,
        };
        if gpus % gpus_per_node != 0 {
            return Err(self.error(
                "cluster.gpus",
                gpus,
                format!(
                    "is not a whole number of {gpus_per_node}-GPU servers ({})",
                    server.id
                ),
                format!("a multiple of gpus_per_node ({gpus_per_node})"),
            ));
        }
        // The NIC: `cluster.nic`, else the server's own where it runs the fabric's rate, else
        // the fabric profile's.
        let runs = |n: &Nic| n.families.contains(&layer) && n.ports_at(rate).is_some();
        let mut own_nic_note = None;
        let nic_id = match (&c.nic, &server.nic) {
            (Some(id), _) => id.clone(),
            (None, Some(own)) if catalog.nics.iter().any(|n| n.id == *own && runs(n)) => {
                own.clone()
            }
            (None, own) => {
                if let Some(own) = own {
                    own_nic_note = Some(format!(
                        "server {}'s own NIC {own} does not run {} at {rate}G; the fabric \
                         profile's {} is counted instead",
                        server.id,
                        layer.name(),
                        profile.ports.nic
                    ));
                }
                profile.ports.nic.clone()
            }
        };
        let nic = self.item("cluster.nic", &nic_id, "a NIC", &catalog.nics)?;
        let fitting_nics = || id_list(catalog.nics.iter().filter(|n| runs(n)).map(Item::id));
        if !runs(&nic) {
            return Err(self.error(
                "cluster.nic",
                &nic.id,
                format!(
                    "does not run {} at {rate}G (fabric profile {})",
                    layer.name(),
                    profile.id
                ),
                fitting_nics(),
            ));
        }

        let mut warnings =
            super::compat::check(self, &server, &nic, rate, nics_per_node, gpus_per_node)?;
        warnings.extend(own_nic_note);
        let ports_per_card = nic.ports_at(rate).expect("checked above");
        let nic_cards_per_node = match server.nic.as_deref() == Some(nic.id.as_str()) {
            true => gpus_per_node.max(nics_per_node.div_ceil(ports_per_card)),
            false => nics_per_node.div_ceil(ports_per_card),
        };

        // [topology]
        let t = &f.topology;
        let kind = match Kind::ALL.iter().find(|k| k.name() == t.kind.trim()) {
            Some(&k) => self.pod_keys(k)?,
            None => {
                return Err(self.error(
                    "topology.kind",
                    t.kind.trim(),
                    "is not a topology kind",
                    "fat-tree, rail-optimized, rail-only, dual-tor, pods (auto: plan only)",
                ));
            }
        };
        let tiers = match &t.tiers {
            toml::Value::String(s) if s == "auto" => Tiers::Auto,
            toml::Value::Integer(i @ (2 | 3)) => Tiers::Fixed(*i as u8),
            other => {
                return Err(self.error(
                    "topology.tiers",
                    other,
                    "is not a tier count",
                    "\"auto\", 2, 3",
                ));
            }
        };
        let oversubscription = parse_ratio(&t.oversubscription).ok_or_else(|| {
            self.error(
                "topology.oversubscription",
                format!("\"{}\"", t.oversubscription),
                "is not a leaf down:up ratio",
                "\"D:U\" with whole numbers D >= U >= 1, e.g. \"1:1\", \"2:1\", \"3:1\"",
            )
        })?;
        let switch_id = t
            .switch
            .clone()
            .unwrap_or_else(|| profile.ports.switch.clone());
        let switch = self.item("topology.switch", &switch_id, "a switch", &catalog.switches)?;
        let Some(mode) = switch.mode(rate).filter(|_| switch.family == layer) else {
            return Err(self.error(
                "topology.switch",
                &switch.id,
                format!(
                    "has no {} ports at {rate}G (it offers {} {})",
                    layer.name(),
                    switch.family.name(),
                    switch.rates()
                ),
                id_list(
                    catalog
                        .switches
                        .iter()
                        .filter(|s| s.family == layer && s.mode(rate).is_some())
                        .map(Item::id),
                ),
            ));
        };
        warnings.extend(super::compat::check_serdes(&switch, &catalog, rate));
        let spec = TopologySpec {
            gpus,
            gpus_per_node,
            nics_per_node,
            kind,
            tiers,
            oversubscription,
            switch_radix: mode.ports,
            port_rate: BitRate::gbps(rate as u64),
            planes: t.planes,
        };

        // [layout]
        let l = &f.layout;
        let layout = LayoutParams {
            servers_per_rack: self.count("layout.servers_per_rack", l.servers_per_rack, 1, 64)?,
            racks_per_row: self.count("layout.racks_per_row", l.racks_per_row, 1, 1000)?,
            rack_width_m: self.real("layout.rack_width_m", l.rack_width_m, 0.3, 3.0)?,
            row_pitch_m: self.real("layout.row_pitch_m", l.row_pitch_m, 1.0, 10.0)?,
            rack_height_m: self.real("layout.rack_height_m", l.rack_height_m, 0.5, 4.0)?,
            tray_above_rack_m: self.real(
                "layout.tray_above_rack_m",
                l.tray_above_rack_m,
                0.0,
                3.0,
            )?,
            switches_per_rack: self.count(
                "layout.switches_per_rack",
                l.switches_per_rack,
                1,
                64,
            )?,
            leaf: self.placement(
                "layout.leaf",
                &l.leaf,
                &[
                    Placement::TopOfRack,
                    Placement::EndOfRow,
                    Placement::NetworkRow,
                ],
            )?,
            spine: self.placement(
                "layout.spine",
                &l.spine,
                &[Placement::EndOfRow, Placement::NetworkRow],
            )?,
            slack_m: self.real("layout.slack_m", l.slack_m, 0.0, 20.0)?,
            optics: Drive::ALL
                .into_iter()
                .find(|d| d.key() == l.optics.trim())
                .ok_or_else(|| {
                    let names: Vec<&str> = Drive::ALL.iter().map(|d| d.key()).collect();
                    self.error(
                        "layout.optics",
                        &l.optics,
                        "is not a module drive",
                        names.join(", "),
                    )
                })?,
        };

        // [cost]
        let k = &f.cost;
        let cost = CostParams {
            years: self.count("cost.years", k.years, 1, 30)?,
            usd_per_kwh: self.real("cost.usd_per_kwh", k.usd_per_kwh, 0.0, 10.0)?,
            pue: self.real("cost.pue", k.pue, 1.0, 3.0)?,
            switch_software_usd_per_year: self.real(
                "cost.switch_software_usd_per_year",
                k.switch_software_usd_per_year,
                0.0,
                1e6,
            )?,
            fabric_manager_usd_per_node_year: self.real(
                "cost.fabric_manager_usd_per_node_year",
                k.fabric_manager_usd_per_node_year,
                0.0,
                1e5,
            )?,
            support_share_per_year: self.real(
                "cost.support_share_per_year",
                k.support_share_per_year,
                0.0,
                1.0,
            )?,
            install_usd_per_cable: self.real(
                "cost.install_usd_per_cable",
                k.install_usd_per_cable,
                0.0,
                1e4,
            )?,
            install_usd_per_switch: self.real(
                "cost.install_usd_per_switch",
                k.install_usd_per_switch,
                0.0,
                1e5,
            )?,
            spares_share: self.real("cost.spares_share", k.spares_share, 0.0, 1.0)?,
            oob_usd_per_port: self.real("cost.oob_usd_per_port", k.oob_usd_per_port, 0.0, 1e4)?,
            optics,
        };

        let llr = super::llr::of_design(&self.source, f.sim.as_ref(), &profile)?;
        Ok(Design {
            name: f
                .name
                .clone()
                .unwrap_or_else(|| format!("{gpus} x {} on {}", gpu.id, profile.id)),
            catalog,
            profile,
            gpu,
            server,
            nic,
            nic_cards_per_node,
            switch,
            spec,
            layout,
            cost,
            nccl,
            reliability: self.reliability()?,
            llr,
            warnings,
        })
    }

    /// The validated design and the topology it describes: what `plan` and `train` start from.
    pub fn design_and_topology(&self) -> Result<(Design, Topology), InputError> {
        let d = self.design()?;
        let t = fabricsim_core::topology::build(&d.spec).map_err(|e| self.build_error(&e, &d))?;
        Ok((d, t))
    }

    /// `kind` with the `pods` keys (`topology.pod_sus`, `topology.core_oversubscription`)
    /// applied; `Err` when they are set for another kind or are not a count and a ratio.
    fn pod_keys(&self, kind: Kind) -> Result<Kind, InputError> {
        let t = &self.file.topology;
        let Kind::Pods(mut pod) = kind else {
            let set = [
                ("topology.pod_sus", t.pod_sus.map(|v| v.to_string())),
                (
                    "topology.core_oversubscription",
                    t.core_oversubscription.clone(),
                ),
            ];
            return match set.into_iter().find_map(|(k, v)| v.map(|v| (k, v))) {
                Some((key, v)) => Err(self.error(
                    key,
                    v,
                    format!("is a key of kind pods, not of {}", kind.name()),
                    "kind = \"pods\", or leave the key out",
                )),
                None => Ok(kind),
            };
        };
        if let Some(n) = t.pod_sus {
            pod.sus = self.count("topology.pod_sus", n, 1, u16::MAX as i64)?;
        }
        if let Some(r) = &t.core_oversubscription {
            pod.core_oversubscription = parse_ratio(r).ok_or_else(|| {
                self.error(
                    "topology.core_oversubscription",
                    format!("\"{r}\""),
                    "is not a pod spine down:up ratio",
                    "\"D:U\" with whole numbers D >= U >= 1, e.g. \"1:1\", \"3:1\", \"15:1\"",
                )
            })?;
        }
        Ok(Kind::Pods(pod))
    }

    /// The scenario key a topology build error is about.
    fn build_error(&self, e: &BuildError, design: &Design) -> InputError {
        let (key, value) = match e.field {
            "gpus" => ("cluster.gpus", design.spec.gpus.to_string()),
            "gpus_per_node" => (
                "cluster.gpus_per_node",
                design.spec.gpus_per_node.to_string(),
            ),
            "nics_per_node" => (
                "cluster.nics_per_node",
                design.spec.nics_per_node.to_string(),
            ),
            "tiers" => ("topology.tiers", self.file.topology.tiers.to_string()),
            "oversubscription" => (
                "topology.oversubscription",
                self.file.topology.oversubscription.clone(),
            ),
            "kind" => ("topology.kind", self.file.topology.kind.clone()),
            "planes" => ("topology.planes", self.file.topology.planes.to_string()),
            "pod_sus" => (
                "topology.pod_sus",
                self.file.topology.pod_sus.unwrap_or(0).to_string(),
            ),
            "core_oversubscription" => (
                "topology.core_oversubscription",
                self.file
                    .topology
                    .core_oversubscription
                    .clone()
                    .unwrap_or_default(),
            ),
            _ => (
                "topology.switch",
                format!("{} ({} ports)", design.switch.id, design.spec.switch_radix),
            ),
        };
        self.error(key, value, e.problem.clone(), e.allowed.clone())
    }

    /// The catalog entry `id` of `items`; `what` names the kind in the error.
    pub(super) fn item<T: Item>(
        &self,
        key: &str,
        id: &str,
        what: &str,
        items: &[T],
    ) -> Result<T, InputError> {
        find(items, id).cloned().ok_or_else(|| {
            self.error(
                key,
                id,
                format!("is not {what} in the catalog"),
                id_list(items.iter().map(Item::id)),
            )
        })
    }

    pub(super) fn count(&self, key: &str, v: i64, lo: i64, hi: i64) -> Result<u32, InputError> {
        if (lo..=hi).contains(&v) {
            Ok(v as u32)
        } else {
            Err(self.error(
                key,
                v,
                "is out of range",
                format!("a whole number from {lo} to {hi}"),
            ))
        }
    }

    fn real(&self, key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, InputError> {
        if v.is_finite() && (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.error(
                key,
                v,
                "is out of range",
                format!("a number from {lo} to {hi}"),
            ))
        }
    }

    fn placement(
        &self,
        key: &str,
        v: &str,
        allowed: &[Placement],
    ) -> Result<Placement, InputError> {
        allowed
            .iter()
            .copied()
            .find(|p| p.name() == v.trim())
            .ok_or_else(|| {
                let names: Vec<&str> = allowed.iter().map(|p| p.name()).collect();
                self.error(key, v, "is not a placement", names.join(", "))
            })
    }
}

/// Parses `"D:U"` with D >= U >= 1.
fn parse_ratio(s: &str) -> Option<(u32, u32)> {
    let (d, u) = s.trim().split_once(':')?;
    let (d, u): (u32, u32) = (d.trim().parse().ok()?, u.trim().parse().ok()?);
    (u >= 1 && d >= u).then_some((d, u))
}
