//! The MoE expert-parallel all-to-alls (Lepikhin et al. 2020, GShard, arXiv 2006.16668, §2.2;
//! DeepSeek-V3's dispatch and combine kernels: Liu et al. 2024, arXiv 2412.19437, §3.2.2):
//! the dispatch sends each rank's routed tokens to the ranks holding their experts, the
//! combine returns the expert outputs, its transpose. The bytes per pair come from the
//! routing in expectation (`workload::moe::Route`); uniform routing is the all-to-all's
//! blocks exactly, so its DAG is the all-to-all's message for message.

use super::all_to_all::pairs;
use super::{Builder, Comm, Frontier, Lane};
use crate::workload::moe::Route;

/// The dispatch (`combine` false) or combine of a `bytes`-byte routed buffer per rank.
pub fn exchange(
    b: &mut Builder,
    comm: &Comm,
    route: &Route,
    combine: bool,
    bytes: u64,
    lane: Lane,
    ready: &Frontier,
) -> Frontier {
    let row = route.row(bytes);
    pairs(b, comm, lane, ready, |p, q| {
        Route::pair(&row, combine, p, q)
    })
}
