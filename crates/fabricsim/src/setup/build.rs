//! The road from a scenario to one packet-level run: the network (an ns-3 topology file or the
//! scenario's design, cabled as `fabricsim plan` lays it out), its engine parameters with the
//! `[sim]` overrides (`fabricsim_input::scenario::sim`), the traffic DAG and the faults.

use std::path::Path;

use crate::setup::params_from_design;
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::message::MessageDag;
use fabricsim_core::topology::{NodeId, NodeKind};
use fabricsim_core::traffic;
use fabricsim_core::units::Time;
use fabricsim_input::io::imported::ImportedTopology;
use fabricsim_input::io::{htsim_cm, ibnetdiscover, ns3};
use fabricsim_input::profile::Profile;
use fabricsim_input::scenario::Scenario;
use fabricsim_input::scenario::sim::SimSection;
use fabricsim_input::scenario::traffic::TrafficSource;
use fabricsim_input::scenario::value::time;
use fabricsim_mech::ParamError;
use fabricsim_mech::faults::Faults;
use fabricsim_mech::params::SimParams;
use fabricsim_mech::reroute::RerouteDelays;

/// Everything one packet-level run needs.
#[derive(Clone, Debug)]
pub struct SimSetup {
    pub net: ImportedTopology,
    pub params: SimParams,
    pub dag: MessageDag,
    pub faults: Faults,
    pub until: Option<Time>,
    /// `[traffic] kind = "chakra"`: the ranks' traces, read and checked, which
    /// `workload::chakra::complete` compiles into `dag` (empty until then).
    pub chakra: Option<Vec<fabricsim_input::io::chakra::RankTrace>>,
}

/// The buffers the flow control needs, checked at the keys that set them (the engine refuses
/// the same runs, without a key): an IB VL buffer holds one full packet, a switch's buffer its
/// ports' PFC headroom (`sim::headroom`).
fn check_buffers(
    src: &Source,
    topo: &fabricsim_core::topology::Topology,
    p: &SimParams,
) -> Result<(), InputError> {
    use fabricsim_mech::params::FlowControl;
    match &p.flow_control {
        FlowControl::None => Ok(()),
        FlowControl::Credits(c) => {
            let frame = p.data_frame_bytes(p.mtu_bytes);
            let need = fabricsim_mech::params::blocks(frame);
            for (switch, key) in [(true, "switch_vl_buffer"), (false, "nic_vl_buffer")] {
                if c.vl_buffer_blocks(switch) < need {
                    let bytes = if switch {
                        c.switch_vl_buffer_bytes
                    } else {
                        c.nic_vl_buffer_bytes
                    };
                    return Err(InputError::at_key(
                        src,
                        &format!("sim.credits.{key}"),
                        bytes,
                        format!("a VL buffer smaller than one {frame} B packet"),
                        format!("at least {frame} B"),
                    ));
                }
            }
            Ok(())
        }
        FlowControl::Pfc(pp) => {
            let lossless = pp.lossless_classes(p.traffic_classes as usize);
            for node in topo.nodes.iter().filter(|n| n.is_switch()) {
                let reserved = node
                    .ports()
                    .map(|q| fabricsim_mech::headroom::port_headroom(topo, p, pp, q as usize))
                    .sum::<u64>()
                    * lossless;
                if reserved >= p.switch_buffer_bytes {
                    return Err(InputError::at_key(
                        src,
                        "sim.switch_buffer",
                        p.switch_buffer_bytes,
                        format!("does not hold a switch's PFC headroom of {reserved} B"),
                        format!("more than {reserved} B, or a smaller sim.pfc.headroom"),
                    ));
                }
            }
            Ok(())
        }
    }
}

/// Reads a file named in the scenario, relative to the scenario's directory.
fn read_rel(base: &Path, src: &Source, key: &str, name: &str) -> Result<Source, InputError> {
    let path = base.join(name);
    let text = fabricsim_input::io::input::read_input(&path).map_err(|e| {
        InputError::at_key(
            src,
            key,
            format!("\"{name}\""),
            e,
            "a readable regular file, relative to the scenario file",
        )
    })?;
    Ok(Source::new(path.display().to_string(), text))
}

/// The scenario sections that describe the network the way `fabricsim plan` reads it.
const DESIGN_SECTIONS: [&str; 4] = ["cluster", "fabric", "topology", "layout"];

/// The topology and engine parameters of a run: an ns-3 topology file with `sim.fabric`'s
/// defaults, or the scenario's design (cabled as `fabricsim plan` lays it out, so every link has
/// its length and propagation delay) with `params_from_design`; `[sim]` overrides on top.
/// Also the fabric profile's link-failure recovery delays (`sim.fabric` ib: ib-ndr's, roce:
/// roce-400g's, the profiles `SimParams::ib()` / `roce()` describe).
fn network(
    sc: &Scenario,
    section: &SimSection,
    base: &Path,
    profile: Option<&Profile>,
) -> Result<(ImportedTopology, SimParams, Option<RerouteDelays>), InputError> {
    let src = &sc.source;
    if let Some(topo_name) = &section.topology_file {
        // One description of the network: a topology file excludes the design sections.
        if let Some(s) = DESIGN_SECTIONS.iter().find(|s| sc.sets(s)) {
            // Against the flag that set a key of the section, if one did.
            let prefix = format!("{s}.");
            let key = sc.flags.keys().find(|k| k.starts_with(&prefix));
            return Err(sc.error(
                key.map_or(*s, |k| k.as_str()),
                format!("[{s}]"),
                "conflicts with sim.topology_file: the topology file describes the network",
                format!(
                    "either sim.topology_file (with sim.fabric = roce | ib) or the sections {}",
                    DESIGN_SECTIONS.map(|s| format!("[{s}]")).join(", ")
                ),
            ));
        }
        if let Some(t) = section.tuned {
            return Err(InputError::at_key(
                src,
                "sim.tuned",
                t,
                "applies to a fabric profile, not to sim.topology_file",
                "sim.tuned without sim.topology_file (the profile's tuned or untuned set)",
            ));
        }
        if let Some(f) = &sc.file.faults
            && f.medium_loss(src)?.is_some()
        {
            return Err(InputError::at_key(
                src,
                "faults.link_loss",
                "\"medium\"",
                "a topology file has no planned media",
                "the design sections ([cluster], [fabric], [topology], [layout]), or \
                 per-link loss in the topology file and [[faults.link]]",
            ));
        }
        // Parameters first: a bad [sim] key is reported before the file is read.
        let mut params = section.apply(src, section.fabric_defaults(src)?)?;
        let family = match section.fabric.as_deref() {
            Some("ib") => "infiniband",
            _ => "roce",
        };
        if let Some(c) = &sc.file.classes {
            c.apply(src, family, &mut params)?;
        }
        let topo_src = read_rel(base, src, "sim.topology_file", topo_name)?;
        // An ibnetdiscover dump or an ns-3 HPCC topology, told apart by the first token.
        let net = match ibnetdiscover::detect(&topo_src.text) {
            true => ibnetdiscover::read(&topo_src)?,
            false => ns3::read_topology(&topo_src)?,
        };
        let like = if section.fabric.as_deref() == Some("ib") {
            "ib-ndr"
        } else {
            "roce-400g"
        };
        let reroute = Profile::builtin(like)
            .ok()
            .and_then(|p| p.reroute)
            .map(|r| r.delays());
        return Ok((net, params, reroute));
    }
    if let Some(f) = &section.fabric {
        return Err(InputError::at_key(
            src,
            "sim.fabric",
            format!("\"{f}\""),
            "applies only with sim.topology_file; the network comes from [fabric] profile",
            "[fabric] profile = \"ib-ndr\" (or another profile), or set sim.topology_file",
        ));
    }
    let (mut design, mut topo, plan) = crate::plan::run(sc)?;
    if let Some(p) = profile {
        design.profile = p.clone();
    }
    let mut params = section.apply(src, sim_params(&design, section.tuned.unwrap_or(true))?)?;
    if let Some(c) = &sc.file.classes {
        c.apply(src, design.profile.family.name(), &mut params)?;
    }
    let link_loss = medium_loss(sc, &design, &mut topo, &plan)?;
    // Node ids in [[faults.nic]] / [[faults.route]] are the topology's own node indices.
    let host_of = topo
        .nodes
        .iter()
        .map(|n| match n.kind {
            NodeKind::Nic { host, .. } => Some(host),
            _ => None,
        })
        .collect();
    let node_of = (0..topo.nodes.len() as u32).map(NodeId).collect();
    let net = ImportedTopology {
        topo,
        host_of,
        node_of,
        link_loss,
    };
    let reroute = design.profile.reroute.as_ref().map(|r| r.delays());
    Ok((net, params, reroute))
}

/// With `[faults] link_loss = "medium"`, each planned link's loss and FEC latency from its
/// medium (`plan::link_errors::link_faults`); else none.
fn medium_loss(
    sc: &Scenario,
    design: &fabricsim_input::scenario::Design,
    topo: &mut fabricsim_core::topology::Topology,
    plan: &crate::plan::Plan,
) -> Result<Vec<fabricsim_mech::faults::Fault>, InputError> {
    let fsec = sc.file.faults.clone().unwrap_or_default();
    let Some(loss) = fsec.medium_loss(&sc.source)? else {
        return Ok(Vec::new());
    };
    crate::plan::link_errors::link_faults(topo, &design.catalog, &plan.media, &loss).map_err(
        |(class, lane)| {
            sc.error(
                "faults.link_loss",
                "\"medium\"",
                format!(
                    "the plan uses {} at {lane}G per lane, which data/phy/link-errors.toml has \
                     no figures for",
                    class.name()
                ),
                "media the link-error table lists, or link_loss = \"none\"",
            )
        },
    )
}

/// Builds a run from a scenario's network ([`network`]), [sim], [traffic] and [faults]; files
/// are found relative to `base` (the scenario's directory). `seed` (the `--seed` flag) overrides
/// `sim.seed`.
pub fn build(sc: &Scenario, base: &Path, seed: Option<u64>) -> Result<SimSetup, InputError> {
    build_with(sc, base, seed, None)
}

/// [`build`] with `profile` in place of the scenario's fabric profile (`fabricsim tune`'s
/// candidates: the same profile with other settings, so the topology is the scenario's).
pub fn build_with(
    sc: &Scenario,
    base: &Path,
    seed: Option<u64>,
    profile: Option<&Profile>,
) -> Result<SimSetup, InputError> {
    let src = &sc.source;
    let section = sc.file.sim.clone().unwrap_or_default();
    let (mut net, mut params, reroute) = network(sc, &section, base, profile)?;
    if let Some(s) = seed {
        params.seed = s;
    }
    // The NICs' line rate: host 0's link.
    let line = net.topo.links[net.topo.ports[net
        .topo
        .host_port(fabricsim_core::topology::HostId(0))
        .idx()]
    .link
    .idx()]
    .rate;
    if let Some(c) = &section.congestion {
        fabricsim_input::cc_profile::apply_congestion(c, line, &mut params.cc)
            .and_then(|()| params.cc.validate(&params))
            .map_err(
                |ParamError {
                     field,
                     problem,
                     allowed,
                 }| {
                    let key = match field {
                        "cc.ecn" => "sim.congestion.ecn",
                        "cc.dcqcn" => "sim.congestion.dcqcn",
                        "cc.qps_per_connection" => "sim.congestion.qps_per_connection",
                        _ => "sim.congestion",
                    };
                    InputError::at_key(src, key, "(see the table)", problem, allowed)
                },
            )?;
    }
    let until = section
        .until
        .as_deref()
        .map(|s| time(src, "sim.until", s))
        .transpose()?;
    let Some(tr) = &sc.file.traffic else {
        return Err(InputError::at_key(
            src,
            "traffic",
            "(missing)",
            "no [traffic] section",
            "a [traffic] section with kind = ...",
        ));
    };
    let mut chakra = None;
    let dag = match tr.resolve(src, params.class_labels())? {
        TrafficSource::Chakra(pattern) => {
            if section.topology_file.is_some() {
                return Err(InputError::at_key(
                    src,
                    "traffic.kind",
                    "\"chakra\"",
                    "a Chakra trace's ranks are GPUs of the scenario's design",
                    "chakra without sim.topology_file",
                ));
            }
            let gpus = sc.design()?.spec.gpus;
            chakra = Some(read_chakra(base, src, &pattern, gpus)?);
            MessageDag::default()
        }
        TrafficSource::Ns3File(name) => {
            if section.topology_file.is_none() {
                return Err(InputError::at_key(
                    src,
                    "traffic.kind",
                    "\"ns3\"",
                    "an ns-3 flow file names the nodes of an ns-3 topology file",
                    "with sim.topology_file; else permutation, incast, all_to_all, uniform, list",
                ));
            }
            let flows = read_rel(base, src, "traffic.flow_file", &name)?;
            ns3::read_flows(&flows, &net, params.class_labels())?
        }
        TrafficSource::HtsimFile(name, unit) => {
            let conns = read_rel(base, src, "traffic.flow_file", &name)?;
            let hosts = net.topo.num_hosts() as u32;
            htsim_cm::read(&conns, hosts, params.class_labels(), unit)?
        }
        TrafficSource::Generated(t, class) => {
            let hosts = net.topo.num_hosts() as u32;
            // Refused before the messages are built when they would not fit in memory.
            let engine = super::engine_choice::EngineChoice::of(sc)?;
            super::memory::admit(
                sc,
                super::memory::before_dag(engine),
                super::memory::Run::Sim,
                t.messages(hosts, line),
                |_| {
                    "fewer hosts, a traffic kind with fewer flows (all_to_all has one per pair), a \
                 shorter uniform duration, or a larger max_memory on a larger machine"
                        .into()
                },
            )?;
            let mut dag = traffic::generate(&t, hosts, line, params.seed).map_err(|p| {
                InputError::at_key(
                    src,
                    "traffic.kind",
                    &tr.kind,
                    p,
                    "traffic that fits the topology",
                )
            })?;
            if let Some(c) = class {
                traffic::default_class(&mut dag, c);
            }
            // Two ports of one server on different planes exchange over NVLink (`pxn`).
            if net.topo.planes > 1 {
                dag.nvlink_rate = Some(sc.design()?.gpu.nvlink_rate());
            }
            dag
        }
    };
    let fsec = sc.file.faults.clone().unwrap_or_default();
    let mut faults = fsec.resolve(src, net.topo.links.len(), reroute)?;
    fabricsim_input::scenario::llr::check_faults(src, &fsec, &params)?;
    fabricsim_input::scenario::link_phy::apply(src, &fsec, &mut net.topo)?;
    faults
        .faults
        .extend(fabricsim_input::scenario::flowctl::node_faults(
            src,
            &fsec.nic,
            &fsec.route,
            &net,
        )?);
    // The topology file's per-link error rates come first; [faults] entries override them.
    let mut all = net.link_loss.clone();
    all.append(&mut faults.faults);
    faults.faults = all;
    check_buffers(src, &net.topo, &params)?;
    Ok(SimSetup {
        net,
        params,
        dag,
        faults,
        until,
        chakra,
    })
}

/// The Chakra traces `pattern` names for ranks 0, 1, ... (up to the first rank without a
/// file; at least two, at most the design's `gpus`).
fn read_chakra(
    base: &Path,
    src: &Source,
    pattern: &str,
    gpus: u32,
) -> Result<Vec<fabricsim_input::io::chakra::RankTrace>, InputError> {
    let key = "traffic.trace_files";
    let path = |r: u32| base.join(pattern.replace("{rank}", &r.to_string()));
    let mut ranks = 0;
    while ranks <= gpus && path(ranks).exists() {
        ranks += 1;
    }
    if ranks < 2 || ranks > gpus {
        return Err(InputError::at_key(
            src,
            key,
            format!("\"{pattern}\""),
            format!(
                "{ranks} rank files from rank 0 ({} {})",
                path(ranks.min(gpus)).display(),
                if ranks > gpus { "exists" } else { "is missing" }
            ),
            format!("2 to {gpus} files (the design's GPUs), ranks 0, 1, ... in `{{rank}}`"),
        ));
    }
    let mut traces = Vec::with_capacity(ranks as usize);
    for r in 0..ranks {
        let p = path(r);
        let bytes = fabricsim_input::io::input::read_input_bytes(&p).map_err(|e| {
            InputError::at_key(
                src,
                key,
                format!("\"{pattern}\""),
                e,
                "readable regular files, relative to the scenario file",
            )
        })?;
        let name = p.display().to_string();
        traces.push(fabricsim_input::io::chakra::read(&name, &bytes, r, ranks)?);
    }
    Ok(traces)
}

/// The design's engine parameters for `sim`, before `[sim]`'s overrides.
fn sim_params(
    design: &fabricsim_input::scenario::Design,
    tuned: bool,
) -> Result<SimParams, InputError> {
    let mut p = params_from_design(design, tuned)?;
    // `sim`'s flows are long messages, not NCCL's chunk-sized requests: unless the scenario
    // sets NCCL_IB_SPLIT_DATA_ON_QPS, a flow is shared by its connection's QPs (as NCCL's
    // chunks of it would rotate over them), `CcParams`' default.
    p.cc.split_data_on_qps = design.nccl.ib_split_data_on_qps.unwrap_or(true);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fabricsim_input::scenario::sim::ROUTINGS;
    use fabricsim_mech::params::{RoutePolicy, Spray};
    use fabricsim_mech::psn::InitialPsn;

    fn parse(text: &str) -> Scenario {
        Scenario::parse("t.toml", text).unwrap()
    }

    fn setup(text: &str) -> Result<SimSetup, InputError> {
        build(&parse(text), Path::new("."), None)
    }

    const PERM: &str = "[traffic]\nkind = \"permutation\"\nbytes = \"100KB\"\n";

    #[test]
    fn without_a_topology_file_the_design_builds_the_network_and_its_parameters() {
        let text = format!("[cluster]\ngpus = 64\n[fabric]\nprofile = \"ib-ndr\"\n{PERM}");
        let s = setup(&text).unwrap();
        let sc = parse(&text);
        let (design, topo) = sc.design_and_topology().unwrap();
        // The plan's topology: one host per GPU (8 NICs per 8-GPU server), same links.
        assert_eq!(s.net.topo.num_hosts(), 64);
        assert_eq!(s.net.topo.links.len(), topo.links.len());
        // Cabled by the layout: every link has a length and its propagation delay.
        assert!(
            s.net
                .topo
                .links
                .iter()
                .all(|l| l.length_m > 0.0 && l.delay > Time::ZERO)
        );
        // The one profile-to-params mapping, unchanged when [sim] overrides nothing.
        assert_eq!(s.params, sim_params(&design, true).unwrap());
        // The permutation addresses the 64 hosts of that topology.
        assert_eq!(s.dag.messages.len(), 64);
        assert!(s.dag.messages.iter().all(|m| m.src.0 < 64 && m.dst.0 < 64));
    }

    #[test]
    fn sim_overrides_apply_on_top_of_the_profile_and_tuned_selects_the_variant() {
        let text = format!("[sim]\nmtu = 2048\ntuned = false\n[cluster]\ngpus = 32\n{PERM}");
        let s = setup(&text).unwrap();
        let (design, _) = parse(&text).design_and_topology().unwrap();
        let want = SimParams {
            mtu_bytes: 2048,
            ..sim_params(&design, false).unwrap()
        };
        assert_eq!(s.params, want);
        // roce-400g (the default profile) untuned: the fixed PFC headroom, not the formula.
        assert_ne!(
            params_from_design(&design, false).unwrap().flow_control,
            params_from_design(&design, true).unwrap().flow_control
        );
    }

    #[test]
    fn a_topology_file_and_the_design_sections_conflict() {
        for (text, key, value) in [
            (
                format!(
                    "[sim]\ntopology_file = \"x.topo\"\n[fabric]\nprofile = \"ib-ndr\"\n{PERM}"
                ),
                "fabric",
                "[fabric]",
            ),
            (
                format!("[sim]\ntopology_file = \"x.topo\"\ntuned = true\n{PERM}"),
                "sim.tuned",
                "true",
            ),
            (
                format!("[sim]\nfabric = \"ib\"\n{PERM}"),
                "sim.fabric",
                "\"ib\"",
            ),
            (
                "[traffic]\nkind = \"ns3\"\nflow_file = \"f.txt\"\n".to_string(),
                "traffic.kind",
                "\"ns3\"",
            ),
        ] {
            let e = setup(&text).unwrap_err();
            assert_eq!((e.key.as_str(), e.value.as_str()), (key, value), "{text}");
            assert!(e.line.is_some() && !e.allowed.is_empty(), "{e}");
        }
    }

    #[test]
    fn every_engine_route_policy_is_accepted_by_name() {
        for (name, policy, dest_qp) in ROUTINGS {
            // Adaptive routing reorders packets: it needs the selective-repeat receiver.
            let text = format!(
                "[sim]\nrouting = \"{name}\"\ntransport = \"selective_repeat\"\n\
                 window_packets = 64\n[cluster]\ngpus = 16\n{PERM}"
            );
            let p = setup(&text).unwrap().params;
            assert_eq!((p.routing, p.cc.hash_dest_qp), (policy, dest_qp), "{name}");
        }
        let e = setup(&format!(
            "[sim]\nrouting = \"sprinkle\"\n[cluster]\ngpus = 16\n{PERM}"
        ))
        .unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("sim.routing", Some(2)));
        assert!(
            e.allowed
                .starts_with("ecmp, ecmp_dest_qp, dmodk, adaptive, spray"),
            "{e}"
        );
        // Spraying's settings, checked: a pick by name, only with spraying.
        let spray = |extra: &str| {
            setup(&format!(
                "[sim]\nrouting = \"spray\"\ntransport = \"unordered\"\nwindow_packets = 64\n\
                 {extra}[cluster]\ngpus = 16\n{PERM}"
            ))
        };
        let s = spray("spray_entropies = 4\nspray_pick = \"random\"\n").unwrap();
        assert_eq!(
            s.params.routing,
            RoutePolicy::Spray(Spray {
                entropies: 4,
                pick: fabricsim_mech::SprayPick::Random
            })
        );
        let e = spray("spray_pick = \"roundrobin\"\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("sim.spray_pick", Some(5)));
        assert_eq!(e.allowed, "round_robin, random, reps");
        let e = setup(&format!(
            "[sim]\nspray_entropies = 4\n[cluster]\ngpus = 16\n{PERM}"
        ))
        .unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("sim.spray_entropies", Some(2)));
        // Adaptive on a go-back-N transport is refused, naming the routing key.
        let e = setup(&format!(
            "[sim]\nrouting = \"adaptive\"\n[cluster]\ngpus = 16\n{PERM}"
        ))
        .unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.value.as_str()),
            ("sim.routing", "\"adaptive\"")
        );
    }

    #[test]
    fn traffic_classes_are_set_per_section_or_flow_and_checked_against_the_profile() {
        // roce-400g: two classes (0: ACKs and strict priority, 1: the lossless data class).
        let s = setup(&format!("[cluster]\ngpus = 16\n{PERM}class = 0\n")).unwrap();
        assert!(s.dag.messages.iter().all(|m| m.class == Some(0)));
        let list = "[cluster]\ngpus = 16\n[traffic]\nkind = \"list\"\nclass = 1\nflows = [\n  \
                    { src = 0, dst = 1, bytes = \"1MB\" },\n  \
                    { src = 1, dst = 2, bytes = \"1MB\", class = 0 },\n]\n";
        let s = setup(list).unwrap();
        let classes: Vec<_> = s.dag.messages.iter().map(|m| m.class).collect();
        assert_eq!(classes, vec![Some(1), Some(0)]);
        let e = setup(&list.replace("class = 0", "class = 4")).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.value.as_str(), e.line),
            ("traffic.flows[1].class", "4", Some(8))
        );
        assert!(e.allowed.starts_with("0 to 1"), "{e}");
        let e = setup(&format!("[cluster]\ngpus = 16\n{PERM}class = 2\n")).unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("traffic.class", Some(6)));
    }

    #[test]
    fn classes_section_sets_classes_scheduling_and_lossless_ones_per_family() {
        use fabricsim_mech::params::{FlowControl, Scheduling};
        let with = |profile: &str, classes: &str| {
            setup(&format!(
                "[cluster]\ngpus = 16\n[fabric]\nprofile = \"{profile}\"\n[classes]\n{classes}{PERM}"
            ))
        };
        // RoCE ETS (802.1Qaz): class 0 strict, 1 and 2 at 30% and 70%; PFC on 1 and 2.
        let s = with(
            "roce-400g",
            "count = 3\nscheduling = \"ets\"\nets_percent = [0, 30, 70]\nlossless = [1, 2]\n",
        )
        .unwrap();
        assert_eq!(s.params.traffic_classes, 3);
        let Scheduling::VlArb {
            high,
            weight_bytes,
            high_limit_bytes,
        } = s.params.scheduling
        else {
            panic!("{:?}", s.params.scheduling)
        };
        assert_eq!((high, high_limit_bytes), (0b001, u32::MAX));
        assert_eq!(weight_bytes[1] * 7, weight_bytes[2] * 3);
        let FlowControl::Pfc(pp) = &s.params.flow_control else {
            panic!("PFC")
        };
        assert_eq!(pp.lossless, 0b110);
        // IB: the VL arbitration tables for the VLs of `count`.
        let s = with(
            "ib-ndr",
            "count = 3\nhigh_weights_64b = [4, 4, 0]\nlow_weights_64b = [0, 0, 4]\nhigh_limit_4kb = 255\n",
        )
        .unwrap();
        assert!(matches!(
            s.params.scheduling,
            Scheduling::VlArb {
                high: 0b011,
                high_limit_bytes: u32::MAX,
                ..
            }
        ));
        // Each refusal names its key and line (the section starts on line 5).
        let refused = [
            ("roce-400g", "count = 9\n", "classes.count", 6),
            (
                "roce-400g",
                "scheduling = \"ets\"\nets_percent = [0, 50]\n",
                "classes.ets_percent",
                7,
            ),
            (
                "roce-400g",
                "scheduling = \"vl_arbitration\"\n",
                "classes.scheduling",
                6,
            ),
            ("roce-400g", "lossless = [2]\n", "classes.lossless", 6),
            ("ib-ndr", "lossless = [1]\n", "classes.lossless", 6),
            ("uec-400g", "lossless = [1]\n", "classes.lossless", 6),
            ("ib-ndr", "count = 6\n", "classes.high_weights_64b", 5),
            (
                "ib-ndr",
                "scheduling = \"strict\"\n",
                "classes.scheduling",
                6,
            ),
            (
                "uec-400g",
                "high_limit_4kb = 3\n",
                "classes.high_limit_4kb",
                6,
            ),
        ];
        for (profile, body, key, line) in refused {
            let e = with(profile, body).unwrap_err();
            assert_eq!(
                (e.key.as_str(), e.line),
                (key, Some(line)),
                "{profile} {body}: {e}"
            );
        }
        // A message naming a class the fabric does not configure is refused.
        let e = with("roce-400g", "count = 3\n").map(|_| ()).and_then(|()| {
            setup(&format!(
                "[cluster]\ngpus = 16\n[classes]\ncount = 3\n{PERM}class = 3\n"
            ))
            .map(|_| ())
        });
        let e = e.unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("traffic.class", Some(8)));
    }

    #[test]
    fn initial_psn_is_zero_seeded_or_a_24_bit_number() {
        let with = |v: &str| {
            setup(&format!(
                "[sim]\ninitial_psn = {v}\n[cluster]\ngpus = 16\n{PERM}"
            ))
        };
        assert_eq!(
            with("\"seeded\"").unwrap().params.initial_psn,
            InitialPsn::Seeded
        );
        assert_eq!(
            with("16777000").unwrap().params.initial_psn,
            InitialPsn::At(16_777_000)
        );
        for bad in ["16777216", "\"random\""] {
            let e = with(bad).unwrap_err();
            assert_eq!(
                (e.key.as_str(), e.line),
                ("sim.initial_psn", Some(2)),
                "{bad}"
            );
        }
    }

    #[test]
    fn recovery_delays_come_from_the_profile_unless_faults_sets_them() {
        let down = "[[faults.link]]\nlink = 5\ndown_at = \"10us\"\n";
        let reroute = |text: &str| setup(text).unwrap().faults.reroute;
        // data/profiles/ib-ndr.toml [reroute]: SHIELD 2 ms, subnet manager 10 s.
        let ib =
            format!("[cluster]\ngpus = 64\n[fabric]\nprofile = \"ib-ndr\"\n{PERM}[faults]\n{down}");
        assert_eq!(
            reroute(&ib),
            RerouteDelays {
                local_repair: Some(Time::from_ms(2)),
                global: Some(Time::from_ms(10_000)),
            }
        );
        // roce-400g.toml: ECMP next-hop removal 1 ms, BGP convergence 300 ms.
        let roce = format!("[cluster]\ngpus = 64\n{PERM}[faults]\n{down}");
        assert_eq!(
            reroute(&roce),
            RerouteDelays {
                local_repair: Some(Time::from_ms(1)),
                global: Some(Time::from_ms(300)),
            }
        );
        let set = format!(
            "[cluster]\ngpus = 64\n{PERM}[faults]\nlocal_repair_delay = \"off\"\n\
             global_reroute_delay = \"50us\"\n{down}"
        );
        assert_eq!(
            reroute(&set),
            RerouteDelays {
                local_repair: None,
                global: Some(Time::from_us(50)),
            }
        );
        let bad = format!(
            "[cluster]\ngpus = 64\n{PERM}[faults]\nglobal_reroute_delay = \"soon\"\n{down}"
        );
        let e = setup(&bad).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("faults.global_reroute_delay", Some(7))
        );
    }
}
