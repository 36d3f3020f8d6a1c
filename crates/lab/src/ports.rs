//! `ports`: the cost of per-input-port service (`flow::maxmin`) at scale and on the cross-validation cases.

use crate::util::last_mean;
use fabricsim::sim;
use fabricsim_cases::flow_cases;
use std::time::Instant;

/// The cost of per-input-port service (`flow::maxmin`) at scale.
///
/// An all-to-all of 16 KB and a ring all-reduce of 64 KB steps on roce-400g with PFC (ports
/// served per input port) and lossy (per flow), flow engine: engine seconds, solves, flows
/// re-solved, extra fills. `ports xval [CASE]`: the fills per solve on the cross-validation
/// cases with their mean FCT, last completion and a digest of every FCT.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    pub xval: Option<Xval>,
    /// GPUs of the fabric (8 per server)
    #[arg(default_value_t = 1024)]
    pub gpus: u32,
}

#[derive(clap::Subcommand)]
pub enum Xval {
    /// The solver's work on the cross-validation cases (flow engine, every seed).
    ///
    /// Solves, those that reached a link shared per input port, their fills, engine seconds,
    /// the mean FCT, the last completion and a digest (FNV-1a) of every message's FCT, to check
    /// that a change of the solver leaves the results as they were.
    Xval {
        /// Only the cases whose "name fabric loss" contains this
        case: Option<String>,
    },
}

/// The cost of per-input-port service (`flow::maxmin`) at scale: an all-to-all of 16 KB and
/// a ring all-reduce of 64 KB steps over the servers' first GPUs, on `gpus` GPUs of
/// roce-400g (PFC: ports served per input port at the egresses to NICs) and the same with
/// lossy Ethernet (per flow): engine seconds, solves, flows re-solved and fills beyond the
/// first (rounds of the port levels' fixed point).
pub fn run(gpus: u32) {
    let (topo, p) = flow_cases::fabric(gpus, "roce-400g");
    let dags = [
        ("all-to-all 16 KB", flow_cases::all_to_all(gpus, 16 << 10)),
        (
            "ring all-reduce 64 KB",
            flow_cases::ring_of_servers(gpus, 64 << 10),
        ),
    ];
    for (name, dag) in &dags {
        for (fc, label) in [
            (p.flow_control, "per port (PFC)"),
            (sim::FlowControl::None, "per flow (lossy)"),
        ] {
            let q = sim::SimParams {
                flow_control: fc,
                ..p.clone()
            };
            let t = Instant::now();
            let (r, st) =
                fabricsim::flow::run(&topo, &q, dag, &fabricsim::flow::FlowParams::default())
                    .expect("valid case");
            let (last, mean) = last_mean(&r);
            println!(
                "{name:<22} {gpus} GPUs {label:<17} {:>7.2} s: {} solves, {} flows re-solved, {} extra fills; last {last:.2} us, mean FCT {mean:.2} us{}",
                t.elapsed().as_secs_f64(),
                st.solve.resolves,
                st.solve.flows_solved,
                st.solve.port_rounds,
                st.lossless_models_end_ps.map_or(String::new(), |t| format!(
                    "; lossless models ended at {:.3} us ({} flows active at once)",
                    t as f64 / 1e6,
                    st.peak_active
                )),
            );
        }
    }
}

/// The solver's work on the cross-validation cases (flow engine, every seed): solves, those
/// that reached a link shared per input port, their fills (1 + the port levels' rounds) and
/// the most of one solve, engine seconds, and a digest of every message's FCT (FNV-1a) to
/// check that a change of the solver leaves the results as they were.
pub fn xval(only: Option<&str>) {
    let mut all = fabricsim::flow::SolveStats::default();
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    let total = Instant::now();
    for c in flow_cases::cases() {
        if only.is_some_and(|o| !format!("{} {} {:.3}", c.name, c.fabric, c.loss).contains(o)) {
            continue;
        }
        let (topo, mut p) = flow_cases::fabric(c.hosts, c.fabric);
        p.loss_rate = c.loss;
        p.timeout_exp = c.timeout_exp;
        let mut st = fabricsim::flow::SolveStats::default();
        let (mut sum_ps, mut count, mut last_ps) = (0u128, 0u64, 0u64);
        let t = Instant::now();
        for seed in 1..=c.seeds {
            p.seed = seed;
            let fp = fabricsim::engine_choice::flow_params(&topo, &p);
            let (r, fs) = fabricsim::flow::run(&topo, &p, &c.dag, &fp).expect("valid case");
            st.merge(&fs.solve);
            for m in &r.messages {
                sum_ps += u128::from(m.fct_ps.unwrap_or(0));
                count += 1;
                last_ps = last_ps.max(m.finish_ps.unwrap_or(0));
                for b in m.fct_ps.unwrap_or(u64::MAX).to_le_bytes() {
                    digest = (digest ^ b as u64).wrapping_mul(0x100_0000_01b3);
                }
            }
        }
        println!(
            "{:<26} {:<9} loss {:<5} x{:<3} {:>7.2} s: {:>7} solves, {:>6} per port, {:.2} fills each, at most {}; mean FCT {:.4} us, last {:.4} us",
            c.name,
            c.fabric,
            c.loss,
            c.seeds,
            t.elapsed().as_secs_f64(),
            st.resolves,
            st.port_solves,
            (st.port_solves + st.port_rounds) as f64 / st.port_solves.max(1) as f64,
            st.max_fills,
            sum_ps as f64 / count.max(1) as f64 / 1e6,
            last_ps as f64 / 1e6
        );
        all.merge(&st);
    }
    println!(
        "all {:.2} s: {} solves, {} per port, {:.2} fills each, at most {}; FCT digest {digest:016x}",
        total.elapsed().as_secs_f64(),
        all.resolves,
        all.port_solves,
        (all.port_solves + all.port_rounds) as f64 / all.port_solves.max(1) as f64,
        all.max_fills
    );
}
