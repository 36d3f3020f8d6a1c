//! Rack-scale NVLink domains (GB200/GB300 NVL72): `plan` counts the scale-out parts of the
//! racks by hand-checkable arithmetic, and `train` keeps the traffic inside a rack off the
//! fabric (docs/scale-up-domains.md).

use fabricsim::catalog::Catalog;
use fabricsim::plan::{self, bom::Category};
use fabricsim::scenario::Scenario;
use fabricsim::workload::comm_model::AlphaBetaModel;
use fabricsim::workload::link_params::FabricParams;
use fabricsim::workload::placement::Placement;
use fabricsim::workload::train::config::TrainConfig;
use fabricsim::workload::train::efficiency::Efficiency;
use fabricsim::workload::train::fabric_bytes;
use fabricsim::workload::train::step::{StepReport, step};

fn count(p: &plan::Plan, id: &str) -> u64 {
    p.bom
        .lines
        .iter()
        .filter(|l| l.id == id)
        .map(|l| l.count)
        .sum()
}

#[test]
fn sixteen_nvl72_racks_plan_by_hand() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/gb300-nvl72-1152.toml"
    );
    let s = Scenario::parse(path, &std::fs::read_to_string(path).unwrap()).unwrap();
    let (d, mut t) = s.design_and_topology().unwrap();
    let p = plan::make(&s, &d, &mut t).unwrap();
    // 1,152 GPUs / 72 per rack = 16 racks, one ConnectX-8 800G port per GPU: 1,152 NICs.
    assert_eq!((p.servers, p.compute_racks), (16, 16));
    assert_eq!(p.bom.total(Category::Nic).0, 1152);
    // Q3400: 144 x 800G. A 1:1 leaf keeps 72 ports for hosts, so one rack per leaf: 16 leaves
    // with 72 uplinks each = 1,152 uplinks; spines: the smallest divisor S of 72 with
    // S x 144 >= 1,152, S = 8 (each leaf sends 9 links to each spine).
    let tiers: Vec<(u8, u64, u64)> = p
        .bom
        .tiers
        .iter()
        .map(|x| (x.tier, x.switches, x.ports_used))
        .collect();
    assert_eq!(tiers, [(1, 16, 16 * 144), (2, 8, 8 * 144)]);
    assert_eq!(count(&p, "q3400"), 24);
    // Optics: a single-port DR4 module per NIC (1,152); the switch side on twin-port modules,
    // (1,152 leaf down + 1,152 leaf up + 1,152 spine down) / 2 = 1,728; a fibre cord per link.
    assert_eq!(count(&p, "dr4-800g"), 1152);
    assert_eq!(count(&p, "dr8-2x800g"), 1728);
    assert_eq!(count(&p, "smf-mpo12"), 2 * 1152);
}

/// The DeepSeek-V3 preset with `[train]` keys on `gpus` GPUs of `server`, timed on XDR.
fn deepseek(server: &str, gpus: u32, train: &str) -> StepReport {
    let text = format!(
        "[cluster]\ngpus = {gpus}\nserver = \"{server}\"\n[fabric]\nprofile = \"ib-xdr\"\n\
         [train]\nmodel = \"deepseek-v3\"\nzero = 1\nrecompute = \"full\"\n{train}"
    );
    let s = Scenario::parse("t.toml", &text).unwrap();
    let (d, t) = s.design_and_topology().unwrap();
    let cfg =
        TrainConfig::resolve(&s, &d, Placement::on_topology(&t, d.spec.gpus_per_node)).unwrap();
    let comm = AlphaBetaModel::new(FabricParams::of(&d));
    step(&cfg, &Efficiency::h200(&Catalog::builtin().unwrap()), &comm)
}

fn row<'a>(r: &'a StepReport, name: &str) -> &'a fabricsim::workload::train::step::CommRow {
    r.collectives.iter().find(|c| c.name == name).unwrap()
}

#[test]
fn tensor_parallelism_inside_an_nvl72_puts_no_bytes_on_the_fabric() {
    // TP 8, 16, 32 on consecutive GPUs of a 72-GPU rack; on 8-GPU servers TP 16 and 32 span
    // 2 and 4 servers and their all-reduces cross the fabric.
    for (tp, dp) in [(8, 36), (16, 18), (32, 9)] {
        let train = format!("tp = {tp}\npp = 8\nep = 1\nglobal_batch = 4608\n");
        let nvl = deepseek("gb200-nvl72", 2304, &train);
        let tp_row = row(&nvl, "tp_all_reduce");
        assert_eq!((nvl.dp, tp_row.ranks, tp_row.servers), (dp, tp as u32, 1));
        assert_eq!(fabric_bytes::of_row(tp_row), 0.0);
        let hgx = deepseek("hgx-b200-8", 2304, &train);
        let hgx_tp = row(&hgx, "tp_all_reduce");
        assert_eq!(hgx_tp.servers, tp as u32 / 8);
        assert_eq!(fabric_bytes::of_row(hgx_tp) > 0.0, tp > 8, "tp {tp}");
    }
}

#[test]
fn an_moe_step_on_nvl72_sends_less_over_the_fabric_than_on_hgx() {
    // TP 4 x EP 8 spans 32 consecutive GPUs: one NVL72 rack, 4 HGX servers.
    let train = "tp = 4\npp = 8\nep = 8\nglobal_batch = 4608\n";
    let nvl = deepseek("gb200-nvl72", 2304, train);
    let hgx = deepseek("hgx-b200-8", 2304, train);
    let (ep_nvl, ep_hgx) = (row(&nvl, "ep_all_to_all"), row(&hgx, "ep_all_to_all"));
    assert_eq!((ep_nvl.servers, ep_hgx.servers), (1, 4));
    assert_eq!(fabric_bytes::of_row(ep_nvl), 0.0);
    // 8 ranks, 2 per server: each GPU's dispatch goes 6/8 off its server.
    let want = 0.75 * ep_hgx.bytes_per_call as f64 * ep_hgx.calls_per_step as f64;
    assert_eq!(fabric_bytes::of_row(ep_hgx), want);
    // The data-parallel group (72 GPUs, stride 4) spans 4 racks or 36 servers: the fabric ring
    // carries 1/18 of the buffer per GPU in a rack, 1/2 on HGX (hierarchical: 1/k per rail).
    let (dp_nvl, dp_hgx) = (
        row(&nvl, "dp_grad_reduce_scatter"),
        row(&hgx, "dp_grad_reduce_scatter"),
    );
    assert_eq!((dp_nvl.servers, dp_hgx.servers), (4, 36));
    let b = dp_nvl.bytes_per_call as f64;
    assert!((fabric_bytes::of_row(dp_nvl) - 0.75 * b / 18.0).abs() < 1.0);
    assert!((fabric_bytes::of_row(dp_hgx) - 35.0 / 36.0 * b / 2.0).abs() < 1.0);
    let (f_nvl, f_hgx) = (fabric_bytes::per_gpu(&nvl), fabric_bytes::per_gpu(&hgx));
    assert!(
        f_nvl < 0.25 * f_hgx,
        "{f_nvl} vs {f_hgx} bytes per GPU per step"
    );
    // Less time waiting on the fabric for the same work.
    assert!(ep_nvl.total_s < ep_hgx.total_s);
}

#[test]
fn leaving_gpus_of_each_rack_idle_keeps_an_ep_group_that_does_not_divide_it_inside() {
    // EP 64 on 72-GPU racks: packed, stage 1's EP group (ranks 64-127) straddles racks 0 and
    // 1; with 64 GPUs of each rack in use every EP group is one rack and its all-to-all stays
    // off the fabric, at the price of 8 idle GPUs per rack.
    let train = "tp = 1\npp = 16\nep = 64\nglobal_batch = 1024\n";
    let aligned = deepseek(
        "gb200-nvl72",
        1152,
        &format!("{train}gpus_per_domain = 64\n"),
    );
    assert_eq!(
        (aligned.gpus, aligned.idle_gpus, aligned.dp),
        (1024, 128, 64)
    );
    let ep = row(&aligned, "ep_all_to_all");
    assert_eq!((ep.ranks, ep.servers), (64, 1));
    assert_eq!(fabric_bytes::of_row(ep), 0.0);
    // On 8-GPU servers the same group crosses 8 of them.
    let hgx = deepseek("hgx-b200-8", 1024, train);
    assert_eq!(row(&hgx, "ep_all_to_all").servers, 8);
    assert!(fabric_bytes::per_gpu(&aligned) < fabric_bytes::per_gpu(&hgx));
}

/// The plan of `flags` on the default scenario.
fn plan_of(flags: &[(&str, &str)]) -> (fabricsim::scenario::Design, plan::Plan) {
    let s = fabricsim_input::test_util::scenario(flags);
    let (d, mut t) = s.design_and_topology().unwrap();
    let p = plan::make(&s, &d, &mut t).unwrap();
    (d, p)
}

#[test]
fn a_gb300_rack_counts_its_72_connectx8_whether_run_as_1_or_2_ports_of_400g() {
    // GB300 NVL72 on 400G Ethernet: the rack's own ConnectX-8, one per GPU, either one 400G
    // port each (72 ports) or split into 2 x 400G (144 ports, twice the fabric bandwidth).
    for (ports, planes) in [("72", "2"), ("144", "4")] {
        let (d, p) = plan_of(&[
            ("--server", "gb300-nvl72"),
            ("--gpus", "144"),
            ("--nics-per-node", ports),
            ("--fabric", "roce-400g"),
            ("--planes", planes),
        ]);
        assert_eq!((d.nic.id.as_str(), d.nic_cards_per_node), ("cx8", 72));
        assert_eq!(
            (count(&p, "cx8"), count(&p, "cx7")),
            (144, 0),
            "{ports} ports"
        );
        // The cards' price is the network's, taken out of the racks' price once.
        let cx8 = d
            .catalog
            .nics
            .iter()
            .find(|n| n.id == "cx8")
            .unwrap()
            .price_usd;
        assert_eq!(p.cost.nics_usd, 144.0 * cx8);
        assert_eq!(
            p.cost.compute_capex_usd,
            2.0 * (d.server.price_usd - 72.0 * cx8)
        );
    }
    // A GB200 rack's own ConnectX-7 does not run XDR: the profile's NIC is counted, and said.
    let (d, _) = plan_of(&[
        ("--server", "gb200-nvl72"),
        ("--gpus", "144"),
        ("--fabric", "ib-xdr"),
    ]);
    assert_eq!(d.nic.id, "cx8");
    assert!(
        d.warnings.iter().any(|w| w.contains("own NIC cx7")),
        "{:?}",
        d.warnings
    );
}

/// `plan`'s traffic section for `example` on `server`, checked row by row against what `train`
/// counts for the same scenario.
fn plan_traffic_as_train_counts(
    example: &str,
    server: &str,
) -> fabricsim::report::plan_traffic::Traffic {
    let path = format!("{}/../../examples/{example}", env!("CARGO_MANIFEST_DIR"));
    let mut s = Scenario::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
    s.apply_flags(&[("--server".to_string(), server.to_string())])
        .unwrap();
    let (d, t) = s.design_and_topology().unwrap();
    let traffic = fabricsim::report::plan_traffic::of(&s, &d, &t)
        .unwrap()
        .unwrap();
    let train = fabricsim::workload::train::run::run(&s).unwrap().report;
    assert_eq!(traffic.rows.len(), train.collectives.len());
    for (p, c) in traffic.rows.iter().zip(&train.collectives) {
        assert_eq!((p.name, p.servers), (c.name, c.servers));
        assert_eq!(p.bytes_per_gpu, fabric_bytes::of_row(c));
    }
    assert_eq!(traffic.total_bytes_per_gpu, fabric_bytes::per_gpu(&train));
    traffic
}

fn row_of<'a>(
    t: &'a fabricsim::report::plan_traffic::Traffic,
    name: &str,
) -> &'a fabricsim::report::plan_traffic::Row {
    t.rows.iter().find(|r| r.name == name).unwrap()
}

#[test]
fn plan_states_the_traffic_train_puts_on_the_fabric_for_an_nvl72_build_and_its_hgx_twin() {
    // 1,152 GPUs: 16 GB300 NVL72 racks against 144 HGX B200 servers, Llama 3 70B with TP 8 PP 4
    // DP 36: the DP group of 36 (stride 8) spans 4 racks or 36 servers, so the racks' rings
    // carry 1/9 of the buffer per GPU across racks (hierarchical, 9 GPUs a rack) against all
    // of it on HGX; the pipeline sends cross either way.
    let (nvl, hgx) = (
        plan_traffic_as_train_counts("gb300-nvl72-1152.toml", "gb300-nvl72"),
        plan_traffic_as_train_counts("gb300-nvl72-1152.toml", "hgx-b200-8"),
    );
    let (dp_nvl, dp_hgx) = (
        row_of(&nvl, "dp_grad_reduce_scatter"),
        row_of(&hgx, "dp_grad_reduce_scatter"),
    );
    assert_eq!((dp_nvl.servers, dp_hgx.servers), (4, 36));
    // (N-1)/N x B/k: 3/4 x B/9 against 35/36 x B.
    let ratio = dp_nvl.bytes_per_gpu / dp_hgx.bytes_per_gpu;
    assert!(
        (ratio - (0.75 / 9.0) / (35.0 / 36.0)).abs() < 1e-9,
        "{ratio}"
    );
    assert_eq!(row_of(&nvl, "pp_send_recv"), row_of(&hgx, "pp_send_recv"));
    assert!(nvl.total_bytes_per_gpu < 0.5 * hgx.total_bytes_per_gpu);
    // 2,304 GPUs, DeepSeek-V3 with EP 8: the racks keep the all-to-all off the fabric.
    let (nvl, hgx) = (
        plan_traffic_as_train_counts("train-deepseek-v3-nvl72.toml", "gb300-nvl72"),
        plan_traffic_as_train_counts("train-deepseek-v3-nvl72.toml", "hgx-b200-8"),
    );
    assert_eq!(row_of(&nvl, "ep_all_to_all").bytes_per_gpu, 0.0);
    assert!(row_of(&hgx, "ep_all_to_all").bytes_per_gpu > 0.0);
    assert!(nvl.total_bytes_per_gpu < 0.05 * hgx.total_bytes_per_gpu);
}
