//! `dense`: the lossless all-to-all beyond 128 hosts, packet vs flow.

use crate::util::last_mean;
use fabricsim::sim::{self, Faults, RunOptions};
use fabricsim::topology::HostId;
use fabricsim_cases::flow_cases;
use std::time::Instant;

/// The lossless all-to-all beyond 128 hosts, packet vs flow.
///
/// Mean FCT (within and across leaves), p99, collective time and each engine's seconds; the
/// flow engine's lossless models as run and (`--forced`) without their limits and off from
/// the start.
#[derive(clap::Args)]
pub struct Args {
    /// GPUs of the fabric (8 per server)
    #[arg(default_value_t = 256)]
    pub gpus: u32,
    /// Size of each message, KB
    #[arg(default_value_t = 16)]
    pub kb: u64,
    /// Also run the flow engine with the lossless models forced on (no limit) and off
    #[arg(long)]
    pub forced: bool,
    /// Only this fabric (ib-ndr or roce-400g)
    #[arg(long)]
    pub fabric: Option<String>,
}

/// The lossless all-to-all beyond 128 hosts (`dense [gpus [KB [forced [fabric]]]]`): packet vs
/// flow mean FCT, p99 FCT and collective time (last completion), with each engine's seconds;
/// the flow engine with the lossless models as the engine runs them (they end above
/// `calibration::LOSSLESS_MODELS_MAX_ACTIVE` flows at once), and with `forced` with no limit and with
/// none (the models off from the start).
pub fn run(gpus: u32, kb: u64, forced: bool, only: Option<&str>) {
    let dag = flow_cases::all_to_all(gpus, kb << 10);
    for fabric in ["ib-ndr", "roce-400g"] {
        if only.is_some_and(|o| o != fabric) {
            continue;
        }
        let (topo, p) = flow_cases::fabric(gpus, fabric);
        // Mean FCT of the messages within a leaf and across leaves (us).
        let leaf = |h: u32| topo.peer_node(topo.host_port(HostId(h)));
        let by_leaf = |r: &sim::RunResult| {
            let mut sum = [(0u64, 0u64); 2];
            for (m, res) in dag.messages.iter().zip(&r.messages) {
                let s = &mut sum[(leaf(m.src.0) != leaf(m.dst.0)) as usize];
                *s = (s.0 + res.fct_ps.unwrap_or(0), s.1 + 1);
            }
            sum.map(|(t, n)| t as f64 / n.max(1) as f64 / 1e6)
        };
        let line = |what: &str, r: &sim::RunResult, secs: f64| {
            let (last, mean) = last_mean(r);
            let p99 = r.summary.fct_p99_ps.unwrap_or(0) as f64 / 1e6;
            let [within, across] = by_leaf(r);
            println!(
                "{fabric:<9} {gpus} GPUs {kb} KB {what:<14} {secs:>8.2} s: mean {mean:.2} us (within a leaf {within:.2}, across {across:.2}), p99 {p99:.2} us, collective {last:.2} us"
            );
            (mean, p99, last)
        };
        let t = Instant::now();
        let pr = sim::run(&topo, &p, &dag, &Faults::default(), RunOptions::default()).unwrap();
        let pk = line("packet", &pr, t.elapsed().as_secs_f64());
        let c = &pr.counters;
        println!(
            "    packet: {} ECN marks, {} CNPs, {} PAUSE frames",
            c.ecn_marks, c.cnps, c.pause_frames
        );
        let base = fabricsim::engine_choice::flow_params(&topo, &p);
        let free = fabricsim::flow::FlowParams {
            lossless_max_active: u64::MAX,
            lossless_max_port_work: u64::MAX,
            ..base.clone()
        };
        let off = fabricsim::flow::FlowParams {
            lossless_max_active: 0,
            ..base.clone()
        };
        let runs = [
            ("flow", base),
            ("flow forced on", free),
            ("flow models off", off),
        ];
        for (what, fp) in runs.iter().take(1 + 2 * forced as usize) {
            let t = Instant::now();
            let (fr, st) = fabricsim::flow::run(&topo, &p, &dag, fp).unwrap();
            let fl = line(what, &fr, t.elapsed().as_secs_f64());
            let e = |a: f64, b: f64| 100.0 * (b - a) / a;
            println!(
                "    {:+.1}% mean, {:+.1}% p99, {:+.1}% collective; {} solves, {} per port, {} fills, port work {}, nic caps {}{}",
                e(pk.0, fl.0),
                e(pk.1, fl.1),
                e(pk.2, fl.2),
                st.solve.resolves,
                st.solve.port_solves,
                st.solve.port_solves + st.solve.port_rounds,
                st.solve.port_work,
                st.nic_caps,
                st.lossless_models_end_ps.map_or(String::new(), |t| format!(
                    "; lossless models ended at {:.3} us ({} flows at once)",
                    t as f64 / 1e6,
                    st.peak_active
                )),
            );
        }
    }
}
