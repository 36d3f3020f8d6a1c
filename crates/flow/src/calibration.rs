//! Every fitted constant and on/off limit of the flow engine, in one place: the constants
//! below (the only place their literals appear) and [`TABLE`], which gives each its value, unit,
//! what it does and the command that regenerates or checks it. The calibration commands are
//! the lab's sub-commands (`fabricsim-lab NAME`, in a checkout `cargo run --release -p
//! fabricsim-lab -- NAME`).

use super::state::PS_PER_S;

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
/// run after 30 s (`fabricsim-lab ports 256` without this limit, release, loaded machine).
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
/// fills of 65,263 flows took ~30 ms (0.5 us; `fabricsim-lab ports 256` without the
/// limits). 2^28 keeps that compare's output and bounds the models' solves at about 17 s at
/// the first rate (estimate); with 2^25 that run's models ended midway (incast p50 182.6 ->
/// 184.8 us, 6.6 s user for the whole compare against 15.7).
pub const LOSSLESS_MODELS_MAX_PORT_WORK: u64 = 1 << 28;

/// The most hash-collision spread at which a dense all-to-all on hashed ECMP runs as flow
/// classes (`dense`, an even split): `sqrt(2 ln L / F)`, the Gaussian bound on the largest
/// relative excess of L inner links' flow counts over their mean F when each flow hashes to
/// one of its next hops, half the flow engine's collective-time tolerance (5%,
/// `tests/flow_xval.rs`). Measured against the per-flow run: the 1,024-GPU x 8-channel 64 MB
/// all-to-all on roce-400g (spread 4.5%) ends 3.3% earlier as classes, the 512-host 16 KB one
/// of the shared cases (spread 16%) 4.6% earlier (7.8% below the packet engine); both now
/// run per flow.
pub const HASH_SPREAD_MAX: f64 = 0.025;

/// The (route, cap, rate) triples the repeated-component cache (`cache`) holds at most by
/// default (`FlowParams::cache_entries`; 0 turns it off): a memory bound, not fitted; a hit
/// gives the rates a solve would, so it moves no result.
pub const CACHE_ENTRIES: usize = 1 << 22;

/// `c_gbn` (`loss`) fitted by `fabricsim-lab loss` (1.237 over 44 packet runs of a 4 MB flow
/// on roce-400g at 0.05-0.5% loss per link, across the 128-GPU fabric's one switch, 2 links,
/// session 6: a loss costs 1.24 round trips of packets, the ideal protocol's 1 plus the NAK's
/// and the resend's turnaround; the session-4 fit on the packet engine of then gave 1.015).
pub const LOSS_C_GBN: f64 = 1.237;

/// `c_sr` (`loss`) is the closed form's 1, not fitted: the packet engine's selective repeat
/// runs under adaptive routing on the profiles (ib-ndr), where a loss costs a timeout
/// (`Transport::Unordered`) and the resend itself is too small to fit beside it.
pub const LOSS_C_SR: f64 = 1.0;

/// Solves per re-solve at most (`fluid`): the rates, then the rates under the caps the NICs'
/// send stage set (`nic_send`). A NIC whose flows that second solve moves is updated at the
/// next one: each round re-solves the components of the capped flows, which under
/// per-input-port service are whole (the stress runs of the default `compare --engine flow`
/// took 3.5 times the CPU with 4 rounds).
pub const NIC_SEND_ROUNDS: u32 = 2;

/// A NIC backlog within a byte of its hold is held (`nic_send`; the work units' rounding:
/// bits x 10^12).
pub const NIC_SEND_SLACK: u128 = 8 * PS_PER_S;

/// A flow's rate within 2^-20 (1 ppm) of its NIC's line counts as at a share or cap
/// (`nic_send`; the tolerance of the solver's integer floors).
pub const NIC_SEND_RATE_TOL_BITS: u32 = 20;

/// The mean-field model's step (`mean_field`): a 4 KB frame takes 82 ns at 400 Gb/s; DCQCN's
/// periods are 1 us and up.
pub const MEAN_FIELD_STEP_PS: u64 = 50_000;

/// A mean-field model run stops here (a group's drain is then reported as this long).
pub const MEAN_FIELD_HORIZON_PS: u64 = 10_000_000_000_000;

/// With port service, the solver's threshold is lowered by 2^-20 of itself
/// (`MaxMin::resolve_each`).
pub const THRESHOLD_MARGIN_BITS: u32 = 20;

/// Most fills of one solve with port service: the port levels' fixed point
/// (`MaxMin::relevel`) took at most 56 on 3,000 random Clos cases (`maxmin`'s module comment);
/// a solve that has not converged by then keeps its last fill, which is feasible.
pub const MAX_PORT_ROUNDS: u32 = 64;

/// Fills after which a port level that moves back bisects its bracket (`MaxMin::relevel`): the
/// first steps move several coupled links at once, and a bracket set then can shut out the
/// fixed point (measured with 8: every flow per-port fair on 3,000 random Clos cases).
pub const JACOBI_ROUNDS: u32 = 8;

/// Smallest component the rate cache stores (`cache`; smaller ones solve faster than they
/// hash). A hit gives a solve's rates, so it moves speed only.
pub const CACHE_MIN_FLOWS: usize = 16;

/// How many entries ahead a scan of flow ids prefetches their states (`maxmin`, `fluid`):
/// flows of a link are scattered over the flow array (16.7 M flows, 536 MB, in a 4,096-GPU
/// all-to-all), so each read is a cache and TLB miss; a few dozen in flight hide most of their
/// latency. Hints only: it moves speed, never a result.
pub const PREFETCH_AHEAD: usize = 16;

/// One row of [`TABLE`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constant {
    /// The constant's name in this module.
    pub name: &'static str,
    pub value: f64,
    pub unit: &'static str,
    /// What it does, and which module uses it.
    pub what: &'static str,
    /// The command that regenerates or checks it (`-`: none, a bound or a closed form).
    pub command: &'static str,
}

/// Every constant above, in one table.
pub const TABLE: &[Constant] = &[
    Constant {
        name: "HASH_SPREAD_MAX",
        value: HASH_SPREAD_MAX,
        unit: "fraction of the mean flows per link",
        what: "most hash-collision spread sqrt(2 ln L / F) of a dense all-to-all on hashed ECMP run as flow classes (dense)",
        command: "cargo test --release -p fabricsim --test flow_xval --test flow_dense",
    },
    Constant {
        name: "LOSSLESS_MODELS_MAX_ACTIVE",
        value: LOSSLESS_MODELS_MAX_ACTIVE as f64,
        unit: "flows",
        what: "most flows active at once before port service (maxmin) and the NIC send stage (nic_send) end for the run",
        command: "fabricsim-lab ports 256",
    },
    Constant {
        name: "LOSSLESS_MODELS_MAX_PORT_WORK",
        value: LOSSLESS_MODELS_MAX_PORT_WORK as f64,
        unit: "flows re-solved x fills",
        what: "most port-service work of a run before the same models end",
        command: "fabricsim compare --engine flow; fabricsim-lab ports 256",
    },
    Constant {
        name: "BATCH_TOL",
        value: BATCH_TOL,
        unit: "fraction of a span",
        what: "a batching tolerance within 0.1% of the exact solve (FlowParams::batch_tol; off by default)",
        command: "cargo test -p fabricsim --test flow_batch",
    },
    Constant {
        name: "CACHE_ENTRIES",
        value: CACHE_ENTRIES as f64,
        unit: "(route, cap, rate) triples",
        what: "the rate cache's default budget (FlowParams::cache_entries; speed and memory only)",
        command: "-",
    },
    Constant {
        name: "LOSS_C_GBN",
        value: LOSS_C_GBN,
        unit: "round trips per NAKed loss",
        what: "go-back-N's resend cost (loss)",
        command: "fabricsim-lab loss",
    },
    Constant {
        name: "LOSS_C_SR",
        value: LOSS_C_SR,
        unit: "packets per loss",
        what: "selective repeat's goodput cost (loss; the closed form, IRN)",
        command: "-",
    },
    Constant {
        name: "NIC_SEND_ROUNDS",
        value: NIC_SEND_ROUNDS as f64,
        unit: "solves",
        what: "solves per re-solve at most, the NIC send stage's caps between them (fluid, nic_send)",
        command: "fabricsim compare --engine flow",
    },
    Constant {
        name: "NIC_SEND_SLACK",
        value: NIC_SEND_SLACK as f64,
        unit: "work units (bit x 10^12)",
        what: "a NIC backlog this close to its hold is held (nic_send; rounding)",
        command: "-",
    },
    Constant {
        name: "NIC_SEND_RATE_TOL_BITS",
        value: NIC_SEND_RATE_TOL_BITS as f64,
        unit: "bits (2^-n of the line)",
        what: "rate tolerance of the NIC send stage's share and cap tests (nic_send)",
        command: "-",
    },
    Constant {
        name: "MEAN_FIELD_STEP_PS",
        value: MEAN_FIELD_STEP_PS as f64,
        unit: "ps",
        what: "the DCQCN mean-field model's step (mean_field, dcqcn_victim, pfc_pause)",
        command: "fabricsim-lab incast",
    },
    Constant {
        name: "MEAN_FIELD_HORIZON_PS",
        value: MEAN_FIELD_HORIZON_PS as f64,
        unit: "ps",
        what: "where a mean-field model run stops (mean_field, dcqcn_victim, pfc_pause)",
        command: "-",
    },
    Constant {
        name: "THRESHOLD_MARGIN_BITS",
        value: THRESHOLD_MARGIN_BITS as f64,
        unit: "bits (2^-n of the threshold)",
        what: "the solver's threshold margin under port service (maxmin)",
        command: "cargo test -p fabricsim --test flow_maxmin",
    },
    Constant {
        name: "MAX_PORT_ROUNDS",
        value: MAX_PORT_ROUNDS as f64,
        unit: "fills",
        what: "most fills of one solve under port service (maxmin)",
        command: "cargo test -p fabricsim --test flow_maxmin (200 seeds; measured on 3,000)",
    },
    Constant {
        name: "JACOBI_ROUNDS",
        value: JACOBI_ROUNDS as f64,
        unit: "fills",
        what: "fills before a port level that moves back bisects its bracket (maxmin)",
        command: "cargo test -p fabricsim --test flow_maxmin (200 seeds; measured on 3,000)",
    },
    Constant {
        name: "CACHE_MIN_FLOWS",
        value: CACHE_MIN_FLOWS as f64,
        unit: "flows",
        what: "smallest component the rate cache stores (cache; speed only)",
        command: "cargo run --release -p fabricsim --example flow_bench -- a",
    },
    Constant {
        name: "PREFETCH_AHEAD",
        value: PREFETCH_AHEAD as f64,
        unit: "entries",
        what: "prefetch distance of flow scans and event batches (maxmin, fluid; speed only)",
        command: "cargo run --release -p fabricsim --example flow_bench -- a",
    },
];

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The flow engine's sources, this module's first (paths relative to it, so the check
    /// follows the folder when it moves).
    pub(crate) const SOURCES: &[(&str, &str)] = &[
        ("calibration.rs", include_str!("calibration.rs")),
        ("cache.rs", include_str!("cache.rs")),
        ("compose.rs", include_str!("compose.rs")),
        ("credits.rs", include_str!("credits.rs")),
        ("dcqcn_incast.rs", include_str!("dcqcn_incast.rs")),
        ("dcqcn_victim.rs", include_str!("dcqcn_victim.rs")),
        ("dense.rs", include_str!("dense.rs")),
        ("effect.rs", include_str!("effect.rs")),
        ("event.rs", include_str!("event.rs")),
        ("fluid.rs", include_str!("fluid.rs")),
        ("groups.rs", include_str!("groups.rs")),
        ("hol.rs", include_str!("hol.rs")),
        ("hpcc.rs", include_str!("hpcc.rs")),
        ("lib.rs", include_str!("lib.rs")),
        ("loss.rs", include_str!("loss.rs")),
        ("maxmin.rs", include_str!("maxmin.rs")),
        ("mean_field.rs", include_str!("mean_field.rs")),
        ("nic_rr.rs", include_str!("nic_rr.rs")),
        ("nic_send.rs", include_str!("nic_send.rs")),
        ("params.rs", include_str!("params.rs")),
        ("paths.rs", include_str!("paths.rs")),
        ("pfc_pause.rs", include_str!("pfc_pause.rs")),
        ("rate_model.rs", include_str!("rate_model.rs")),
        ("report.rs", include_str!("report.rs")),
        ("state.rs", include_str!("state.rs")),
        ("stats.rs", include_str!("stats.rs")),
        ("weighted.rs", include_str!("weighted.rs")),
        ("window.rs", include_str!("window.rs")),
    ];

    /// Code lines of `src`: no comments, no `use` lines, nothing from its tests on.
    fn code(src: &str) -> impl Iterator<Item = &str> {
        src.lines()
            .take_while(|l| !l.starts_with("#[cfg(test)]"))
            .map(str::trim)
            .filter(|l| !l.starts_with("//") && !l.starts_with("use ") && !l.is_empty())
    }

    /// Whether `name` appears in `line` as a whole identifier.
    pub(crate) fn names(line: &str, name: &str) -> bool {
        line.match_indices(name).any(|(i, _)| {
            let ident = |c: char| c.is_alphanumeric() || c == '_';
            let before = line[..i].chars().next_back().is_none_or(|c| !ident(c));
            let after = line[i + name.len()..]
                .chars()
                .next()
                .is_none_or(|c| !ident(c));
            before && after
        })
    }

    #[test]
    fn every_constant_here_is_in_the_table_once() {
        let defined: Vec<&str> = code(SOURCES[0].1)
            .filter_map(|l| l.strip_prefix("pub const "))
            .map(|l| l.split(':').next().unwrap_or(""))
            .filter(|&n| n != "TABLE")
            .collect();
        let mut listed: Vec<&str> = TABLE.iter().map(|c| c.name).collect();
        listed.sort_unstable();
        let mut sorted = defined.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted, listed,
            "constants defined here against the table's rows"
        );
        let mut unique = listed.clone();
        unique.dedup();
        assert_eq!(unique, listed, "a row twice");
    }

    #[test]
    fn every_table_entry_is_used_by_the_engine() {
        for c in TABLE {
            let users: Vec<&str> = (SOURCES[1..].iter())
                .filter(|(_, src)| code(src).any(|l| names(l, c.name)))
                .map(|s| s.0)
                .collect();
            assert!(!users.is_empty(), "{} is used nowhere in flow/", c.name);
            assert!(
                c.value > 0.0 && !c.unit.is_empty() && !c.what.is_empty(),
                "{c:?}"
            );
            assert!(!c.command.is_empty(), "{c:?}");
        }
    }

    #[test]
    fn no_other_flow_module_defines_a_numeric_constant() {
        // Sentinels and unit conversions, not calibration.
        let allowed = [
            "NO_CAP",
            "NONE",
            "NONE32",
            "NONE_LINK",
            "NO_GROUP",
            "NO_BURST",
            "PS_PER_S",
            // How often the loop polls for a stop request, not a model constant.
            "STOP_CHECK_BATCHES",
            // `loss`'s constants as a struct, from this table's.
            "FITTED",
            // `dense`'s bound on its integer scale (an overflow guard).
            "MAX_SCALE",
        ];
        for (file, src) in &SOURCES[1..] {
            for l in code(src) {
                let Some(rest) = l.split("const ").nth(1).filter(|_| !l.contains("const _")) else {
                    continue;
                };
                if l.contains("fn ") {
                    continue;
                }
                let name = rest.split(':').next().unwrap_or("");
                assert!(
                    allowed.contains(&name),
                    "{file}: constant {name} belongs in calibration.rs ({l})"
                );
            }
        }
    }
}
