//! `plan`: from a validated design and its topology to a bill of materials, power and cost.
//!
//! Pure functions of (Topology, Catalog, Design): [`layout`] places every device and gives each
//! link a length, [`media`] picks the cheapest cable or transceiver pair that reaches and sets
//! each link's delay, [`bom`] counts, [`power`] and [`cost`] add up, [`link_errors`] gives each
//! link class its post-FEC loss, [`reliability`] the cluster its interruptions and the job its
//! effective training time ratio ([`ettr`]).

pub mod bom;
pub mod cost;
pub mod ettr;
pub mod layout;
pub mod link_errors;
pub mod media;
pub mod optics_choice;
pub mod power;
pub mod rack_power;
pub mod reach;
pub mod reliability;

use fabricsim_core::error::InputError;
use fabricsim_core::topology::Topology;
use fabricsim_input::scenario::{Design, Scenario};

/// Everything `fabricsim plan` reports.
#[derive(Clone, Debug)]
pub struct Plan {
    pub name: String,
    pub profile: String,
    pub family: &'static str,
    pub rate_gbps: u32,
    pub gpu: String,
    pub server: String,
    pub nic: String,
    pub switch: String,
    pub switch_radix: u32,
    pub kind: &'static str,
    /// Parallel fabrics (`[topology] planes`).
    pub planes: u32,
    /// A `pods` fabric's scalable units per pod and core down:up.
    pub pods: Option<(u32, (u32, u32))>,
    /// Why `--topology auto` chose this kind (`None` when the scenario names one).
    pub choice: Option<String>,
    pub tiers: u8,
    pub oversubscription: (u32, u32),
    pub gpus: u32,
    pub servers: u32,
    pub compute_racks: u32,
    pub end_of_row_racks: u32,
    pub network_racks: u32,
    /// What `Medium::Catalog(i)` on a link means: `media.defs[i]`.
    pub media: media::Media,
    pub bom: bom::Bom,
    pub link_errors: Vec<link_errors::ClassErrors>,
    pub reliability: reliability::Reliability,
    pub power: power::Power,
    pub rack_power: rack_power::RackPower,
    pub cost: cost::Cost,
    /// `[cost] optics`: whose optics the plan buys.
    pub optics: fabricsim_input::catalog::OpticsPrices,
    /// The same bill at the other optics choice (`None`: no item has two prices).
    pub optics_other: Option<optics_choice::OtherOptics>,
}

/// A link no catalog medium can carry, as an input error on the layout or switch choice.
fn no_medium(s: &Scenario, e: &media::NoMedium) -> InputError {
    s.error(
        "layout",
        format!("a {}G link of {:.1} m", e.rate_gbps, e.length_m),
        format!(
            "no cable or transceiver pair in the catalog reaches it between {:?} and {:?} cages",
            e.ends.0, e.ends.1
        ),
        "a denser layout (servers_per_rack, racks_per_row, placements), or a catalog item with that reach",
    )
}

/// Lays out `t`, sets every link's length, medium and delay, and counts and prices the result.
pub fn make(s: &Scenario, d: &Design, t: &mut Topology) -> Result<Plan, InputError> {
    let floor = layout::place(t, &d.layout);
    for li in 0..t.links.len() {
        let l = &t.links[li];
        let (a, b) = (t.ports[l.ends[0].idx()].node, t.ports[l.ends[1].idx()].node);
        t.links[li].length_m = floor.cable_m(&d.layout, a, b);
    }
    let media = media::assign(t, &d.catalog, &d.switch.id, d.layout.optics)
        .map_err(|e| no_medium(s, &e))?;
    let cards = t.servers as u64 * d.nic_cards_per_node as u64;
    let bom = bom::count(t, &d.catalog, &media, &d.switch.id, (&d.nic.id, cards));
    let power = power::of(&bom, t, &d.catalog, &media);
    let optics_at = power::optics_at_nodes(&bom, t, &d.catalog, &media);
    let rack_power = rack_power::of(
        &floor,
        t,
        d.layout.servers_per_rack,
        d.server.power_w,
        d.switch.power_w,
        &optics_at,
    );
    let cost = cost::of(d, &bom, &power, t.servers as u64);
    let optics_other = optics_choice::of(d, &bom, &power, t.servers as u64);
    let mtu = d.profile.wire_bytes(d.profile.packet.mtu_bytes);
    let link_errors = link_errors::of(t, &d.catalog, &media, mtu, d.profile.ports.rate_gbps);
    let reliability = reliability::of(d, t, &d.catalog, &media, &bom)?;
    Ok(Plan {
        name: d.name.clone(),
        profile: d.profile.id.clone(),
        family: d.profile.family.name(),
        rate_gbps: d.profile.ports.rate_gbps,
        gpu: d.gpu.id.clone(),
        server: d.server.id.clone(),
        nic: d.nic.id.clone(),
        switch: d.switch.id.clone(),
        switch_radix: d.spec.switch_radix,
        kind: d.spec.kind.name(),
        planes: d.spec.planes,
        pods: d.spec.kind.pod().map(|pod| {
            let rails = d.spec.nics_per_node / d.spec.planes;
            (
                pod.sus_per_pod(d.spec.switch_radix, rails),
                pod.core_oversubscription,
            )
        }),
        choice: None,
        tiers: t.tiers,
        oversubscription: d.spec.oversubscription,
        gpus: d.spec.gpus,
        servers: t.servers,
        compute_racks: floor.compute_racks,
        end_of_row_racks: floor.end_of_row_racks,
        network_racks: floor.network_racks,
        media,
        bom,
        link_errors,
        reliability,
        power,
        rack_power,
        cost,
        optics: d.cost.optics,
        optics_other,
    })
}

/// The whole pipeline from a scenario: validate, build the topology, plan. With
/// `[topology] kind = "auto"`, every kind is planned and the cheapest network CAPEX that fits
/// is kept (`auto`).
pub fn run(s: &Scenario) -> Result<(Design, Topology, Plan), InputError> {
    if s.file.topology.kind.trim() == AUTO {
        return auto(s);
    }
    let (d, mut t) = s.design_and_topology()?;
    let p = make(s, &d, &mut t)?;
    Ok((d, t, p))
}

/// The `[topology] kind` that asks `plan` to pick.
pub const AUTO: &str = "auto";

/// Plans the scenario as each topology kind and keeps the lowest network CAPEX; its
/// `Plan::choice` says which kinds fit, at what CAPEX, and why the kept one won. `Err` is the
/// first kind's error when none fits.
fn auto(s: &Scenario) -> Result<(Design, Topology, Plan), InputError> {
    let mut fits = Vec::new();
    let mut first_err = None;
    let mut refused = Vec::new();
    for kind in fabricsim_core::topology::Kind::ALL {
        let mut sk = s.clone();
        sk.file.topology.kind = kind.name().to_string();
        // The pod keys shape the pods candidate only.
        if kind.pod().is_none() {
            sk.file.topology.pod_sus = None;
            sk.file.topology.core_oversubscription = None;
        }
        match sk.design_and_topology().and_then(|(d, mut t)| {
            let p = make(&sk, &d, &mut t)?;
            Ok((d, t, p))
        }) {
            Ok(x) => fits.push(x),
            Err(e) => {
                refused.push(kind.name());
                first_err.get_or_insert(e);
            }
        }
    }
    let capex = |x: &(Design, Topology, Plan)| x.2.cost.network_capex_usd;
    fits.sort_by(|a, b| capex(a).total_cmp(&capex(b)));
    let Some(best) = fits.first() else {
        return Err(first_err.expect("Kind::ALL is not empty"));
    };
    let others: Vec<String> = fits[1..]
        .iter()
        .map(|x| {
            format!(
                "{} {:.1}% more ({} tiers)",
                x.2.kind,
                100.0 * (capex(x) / capex(best) - 1.0),
                x.2.tiers
            )
        })
        .collect();
    let mut why = format!(
        "topology auto: {} has the lowest network CAPEX of the kinds that fit ({} tiers, {} \
         switches){}{}",
        best.2.kind,
        best.2.tiers,
        best.2.bom.tiers.iter().map(|t| t.switches).sum::<u64>(),
        if others.is_empty() {
            String::new()
        } else {
            format!("; {}", others.join(", "))
        },
        if refused.is_empty() {
            String::new()
        } else {
            format!("; {} do not fit", refused.join(", "))
        }
    );
    if best.2.kind == fabricsim_core::topology::Kind::RailOnly.name() {
        why += "; rail-only joins no two rails: traffic between rails crosses NVLink first (PXN)";
    }
    if let Some(pod) = best.0.spec.kind.pod()
        && pod.core_oversubscription.0 > pod.core_oversubscription.1
    {
        let (d, u) = pod.core_oversubscription;
        why += &format!(
            "; pods reach each other through a core at {d}:{u}: traffic between pods has at least \
             {u}/{d} of the bandwidth within one"
        );
    }
    let (d, t, mut p) = fits.swap_remove(0);
    p.choice = Some(why);
    Ok((d, t, p))
}

#[cfg(test)]
mod tests;
