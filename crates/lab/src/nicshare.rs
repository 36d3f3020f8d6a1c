//! `nicshare`: the NIC's per-QP round robin while the switch buffers absorb an incast (`flow::nic_send`).

use crate::util::both;
use fabricsim::flow::paths;
use fabricsim::message::MessageDag;
use fabricsim::sim;
use fabricsim_cases::flow_cases;

/// The NIC's per-QP round robin while the switch buffers absorb an incast (`flow::nic_send`
/// models it), packet vs flow.
///
/// A 32:1 incast of 1 MB on 128 GPUs plus a victim from an incast sender's NIC (64 KB to 4 MB),
/// per fabric and switch buffer: the victim's FCT, alone and at half the NIC's line, the
/// incast flow of the same NIC, and how long the packet engine held that NIC. No arguments.
#[derive(clap::Args)]
pub struct Args {}

/// The NIC's per-QP round robin while the switch buffers absorb an incast (not modeled): a
/// 32:1 incast of 1 MB per sender on 128 GPUs plus a victim of `KB` from an incast sender's NIC
/// (`flow_cases::incast_victims`' victim 1), per fabric and switch buffer (ib-ndr: the per-VL
/// input buffer; roce-400g: the shared buffer): the victim's FCT packet / flow, alone, the FCT at
/// half the NIC's line (the round robin's share beside the incast flow), the incast flow of the
/// same NIC, and how long the packet engine held that NIC's egress (credit stalls or PFC pauses).
pub fn run() {
    let n = 32;
    for fabric in ["ib-ndr", "roce-400g"] {
        let (topo, p0) = flow_cases::fabric(128, fabric);
        let buffers: Vec<(String, sim::SimParams)> = match p0.flow_control {
            sim::FlowControl::Credits(c) => [64u64, 256, 1024]
                .iter()
                .map(|&kb| {
                    let mut p = p0.clone();
                    let mut c = c.clone();
                    c.switch_vl_buffer_bytes = kb << 10;
                    p.flow_control = sim::FlowControl::Credits(c);
                    (format!("{kb} KB per VL"), p)
                })
                .collect(),
            _ => [16u64, 32, p0.switch_buffer_bytes >> 20]
                .iter()
                .map(|&mb| {
                    let mut p = p0.clone();
                    p.switch_buffer_bytes = mb << 20;
                    (format!("{mb} MB shared"), p)
                })
                .collect(),
        };
        for (what, p) in &buffers {
            println!("{fabric}, buffer {what}: victim from an incast sender's NIC, FCT us");
            for kb in [64u64, 256, 1024, 4096] {
                let dag = flow_cases::incast_victims(128, n, 1 << 20, 2, kb << 10);
                let v = &dag.messages[n as usize + 1];
                let mut alone = MessageDag::default();
                alone.push(v.src, v.dst, v.bytes, v.start, &[]);
                let (pr, fr) = both(&topo, p, &dag);
                let (pa, _) = both(&topo, p, &alone);
                let fct = |r: &sim::RunResult, i: usize| r.messages[i].fct_ps.unwrap() as f64 / 1e6;
                let sibling = (0..n as usize)
                    .find(|&i| dag.messages[i].src == v.src)
                    .expect("an incast sender");
                // The round robin's share: the victim's wire bytes at half the line, plus the
                // rest of its lone FCT.
                let wire = paths::wire_bytes(p, v.bytes) as f64 * 8.0 / 400e9 * 1e6;
                let held = pr.flow_control.as_ref().map_or(0, |fc| {
                    fc.ports
                        .iter()
                        .filter(|pf| pf.node == topo.nics[v.src.idx()].0)
                        .map(|pf| pf.paused_ps + pf.credit_stall_ps)
                        .sum::<u64>()
                });
                println!(
                    "  {kb:>5} KB: packet {:>8.2}, flow {:>8.2}, alone {:>7.2}, at half the line {:>8.2}; its NIC's incast flow {:>8.2} / {:>8.2}; NIC held {:>7.2}",
                    fct(&pr, n as usize + 1),
                    fct(&fr, n as usize + 1),
                    fct(&pa, 0),
                    fct(&pa, 0) + wire,
                    fct(&pr, sibling),
                    fct(&fr, sibling),
                    held as f64 / 1e6,
                );
            }
        }
    }
}
