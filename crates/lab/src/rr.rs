//! `rr`: the NIC's per-QP round robin at message end (`flow::nic_rr`).

use crate::util::{both, last_mean};
use fabricsim::sim;
use fabricsim_cases::flow_cases;

/// The NIC's per-QP round robin at message end (`flow::nic_rr`), packet vs flow.
///
/// The all-to-all's mean FCT by a message's post order on its NIC, the mean over all messages
/// and the collective time, on ib-ndr and roce-400g. The defaults are the case of
/// `tests/flow_xval.rs`.
#[derive(clap::Args)]
pub struct Args {
    /// GPUs of the fabric (8 per server)
    #[arg(default_value_t = 128)]
    pub gpus: u32,
    /// Size of each message, KB
    #[arg(default_value_t = 16)]
    pub kb: u64,
}

/// The NIC's per-QP round robin at message end (`flow::nic_rr`): the all-to-all of `kb` KB
/// among `gpus` GPUs (every host posts its messages to hosts `s + 1, s + 2, ...` in that order),
/// per fabric: the mean FCT by a message's post order on its NIC (k-th posted), packet / flow,
/// the mean over all messages and the collective time. `rr [gpus [KB]]` (128 16: the case of
/// `tests/flow_xval.rs`).
pub fn run(gpus: u32, kb: u64) {
    let dag = flow_cases::all_to_all(gpus, kb << 10);
    let per = (gpus - 1) as usize;
    for fabric in ["ib-ndr", "roce-400g"] {
        let (topo, p) = flow_cases::fabric(gpus, fabric);
        let (pr, fr) = both(&topo, &p, &dag);
        // Mean FCT (us) of the k-th posted message of every host.
        let by_k = |r: &sim::RunResult| -> Vec<f64> {
            (0..per)
                .map(|k| {
                    let sum: u64 = (0..gpus as usize)
                        .map(|s| r.messages[s * per + k].fct_ps.unwrap())
                        .sum();
                    sum as f64 / gpus as f64 / 1e6
                })
                .collect()
        };
        let (pk, fk) = (by_k(&pr), by_k(&fr));
        println!(
            "{fabric}, {gpus} GPUs, all-to-all of {kb} KB: mean FCT us by post order k, packet / flow"
        );
        let picks = [1, 2, 3, 4, 8, 16, 32, 64, 96, per / 2, per - 1, per];
        let mut ks: Vec<usize> = picks.into_iter().filter(|&k| k >= 1 && k <= per).collect();
        ks.sort_unstable();
        ks.dedup();
        for k in ks {
            println!("  k = {k:>4}: {:>8.2} / {:>8.2}", pk[k - 1], fk[k - 1]);
        }
        let ((pl, pm), (fl, fm)) = (last_mean(&pr), last_mean(&fr));
        println!(
            "  mean {pm:.2} / {fm:.2} ({:+.1}%), collective {pl:.2} / {fl:.2} ({:+.1}%)",
            100.0 * (fm - pm) / pm,
            100.0 * (fl - pl) / pl
        );
    }
}
