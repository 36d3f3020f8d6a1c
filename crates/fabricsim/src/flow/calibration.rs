//! Every fitted constant and on/off limit of the flow engine, each with its unit, what it does
//! and the command that regenerates or checks it ([`TABLE`]). The literals live here only.

/// A batching tolerance whose error stays within 0.1% of the exact solve on the 256-GPU ring
/// all-reduce and all-to-all of `tests/flow_batch.rs` (10^-4 of a span: 0.1 us of a 1 ms
/// flow). The exact solve meets the scale targets by itself (`examples/flow_bench.rs`), so
/// no command sets it by default.
pub const BATCH_TOL: f64 = 1e-4;

/// Most flows active at once for which the lossless fabrics' models stay on: the egresses to
/// NICs served per input port (`maxmin`) and the NICs' send stage (`nic_send`). A change that
/// reaches a link served per port re-solves whole components, a fixed point of several fills
/// (`maxmin`), and a NIC's update costs its flows, so a run costs about (flows active at once)
/// x solves: the 16 KB all-to-all among 128 GPUs (16,256 flows at once) takes 0.03 s in 2
/// solves; among 256 GPUs (65,280) its fills took ~30 ms each, ~28 a solve, and 34 solves had
/// run after 30 s (`flow_calibrate -- ports 256` without this limit, release, loaded machine).
/// The first time more flows are active (or `FlowParams::lossless_max_port_work` is spent)
/// both models end for the rest of the run (every link
/// then shared per flow, `MaxMin::end_port_service`, `NicSend::lift`); runs of many flows but
/// few at once keep them (the 131,072-GPU step of `examples/flow_bench.rs`: 1.5 M flows,
/// at most 8,192 at once).
pub const LOSSLESS_MODELS_MAX_ACTIVE: u64 = 20_000;

/// The most port-service work of a run (flows re-solved times fills in solves that reach a
/// link shared per port, `SolveStats::port_work`) before the lossless models end as above: a
/// run of at most 20,000 flows at once can still take many whole-component solves. Measured
/// (release, loaded machine): the ib-ndr stress run of the default `compare --engine flow`
/// (19,056 flows) spends 1.37 x 10^8 in 19,168 solves, about 9 s (0.065 us a flow and fill);
/// fills of 65,263 flows took ~30 ms (0.5 us; `flow_calibrate -- ports 256` without the
/// limits). 2^28 keeps that compare's output and bounds the models' solves at about 17 s at
/// the first rate (estimate); with 2^25 that run's models ended midway (incast p50 182.6 ->
/// 184.8 us, 6.6 s user for the whole compare against 15.7).
pub const LOSSLESS_MODELS_MAX_PORT_WORK: u64 = 1 << 28;

/// The (route, cap, rate) triples the repeated-component cache (`cache`) holds at most by
/// default (`FlowParams::cache_entries`; 0 turns it off): a memory bound, not fitted; a hit
/// gives the rates a solve would, so it moves no result.
pub const CACHE_ENTRIES: usize = 1 << 22;
