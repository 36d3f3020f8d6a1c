//! Random loss in a training step, in expectation: the step's collectives compiled at their
//! real sizes (not the capped calibration sizes), every fabric message's packets, path and QP
//! costed by the recovery's expected resends, NAK round trips and timeouts
//! (`fabricsim_mech::loss_expect`), and what each stalls. The collective DAG's dependency levels
//! are its steps: a ring step waits for its slowest rank, so the expected delay of a level's
//! revealed losses is the expected maximum over its messages, and the call's the sum over its
//! levels (an all-to-all is one level: it waits for its slowest message); its timeouts delay it
//! along its longest dependency path (`stall_path`: stalls that do not depend on each other
//! overlap). A rare event (a 4.3 s timeout once in a thousand calls) is paid for at its
//! probability, where one packet run per size either misses it or meets it once.
//!
//! Per message of `n` packets, path loss `p_h` and `w` packets in flight per round trip `rtt`:
//! a revealed loss costs one packet slot (selective repeat's resend), `c_gbn` round trips and the
//! slot (go-back-N, `flow::loss::LossModel::nak_cost_ps`'s constant), or a round trip and the
//! failed attempt's packets (go-back-0). Their count is Poisson (selective repeat, go-back-N) or
//! geometric (go-back-0's failed attempts). A timeout costs the expected timeouts in a row
//! (`loss_expect::timeouts_per_stall`) times the ACK timeout plus a round trip; a lost tail with
//! a later message on its QP in the same collective is revealed by that message instead (its
//! first packet draws a NAK or SACK about one level later: the level's time plus a round trip).
//! ESTIMATES, checked against seed-averaged packet runs in `docs/loss-expectation.md`: the round
//! trip is the up/down path's propagation, switch and NIC latencies and one frame's
//! serialization per link; the timeouts' path delay and the revealed losses of the levels add
//! (an upper bound of their overlap: go-back-N at 1e-3 per link, 29% above the packet runs); a
//! lost tail at a collective's last level waits for the timer (the next call on its QP may
//! reveal it sooner); a go-back-N resend lost again is not counted (resends under by 16-40%
//! from 1e-3 per link): `docs/loss-expectation.md`.
//!
//! With `[sim] llr` (link-level retry, UEC 1.0 5.1) the links replay the corrupted frames: the
//! transport resends nothing and meets no timeout, and each corrupted frame costs its message
//! the link's go-back-N replay window in frame slots (`fabricsim_mech::llr::replay_window`, the
//! flow engine's replay tax), the level's delay the expected maximum over its messages.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

use super::calibrate::algo_for;
use super::config::TrainConfig;
use super::efficiency::Efficiency;
use super::stall_path::{self, Stall};
use super::step::{CommRow, StepReport, step};
use crate::workload::collective::{Channels, CollectiveSpec, Comm, Op, compile, piece};
use crate::workload::comm_model::{CommModel, GroupShape};
use crate::workload::placement::Placement;
use crate::workload::sweep::round;
use fabricsim_core::message::{MessageDag, Path};
use fabricsim_core::topology::{Topology, up_down};
use fabricsim_core::units::BitRate;
use fabricsim_flow::loss::LossModel;
use fabricsim_mech::loss_expect::{self, path_loss};
use fabricsim_mech::{SimParams, Transport};

/// What the expectation needs from a run's parameters and fabric.
#[derive(Clone, Copy, Debug)]
pub struct LossSetup {
    pub model: LossModel,
    pub mtu: u32,
    /// Bytes on the wire per full-MTU frame.
    pub frame_bytes: u64,
    /// The NICs' line rate.
    pub rate: BitRate,
    pub switch_latency_s: f64,
    pub nic_latency_s: f64,
}

impl LossSetup {
    /// The loss of `p` on `topo` at line rate `rate` (with LLR, its links' replay window:
    /// `flow::llr::loss_model`); `None` without loss.
    pub fn of(p: &SimParams, topo: &Topology, rate: BitRate) -> Option<LossSetup> {
        Some(LossSetup {
            model: fabricsim_flow::llr::loss_model(topo, p)?,
            mtu: p.mtu_bytes,
            frame_bytes: p.mtu_frame_wire_bytes(),
            rate,
            switch_latency_s: p.switch_latency.as_secs_f64(),
            nic_latency_s: p.nic_latency.as_secs_f64(),
        })
    }

    /// What recovers the loss: the transport's recovery, or the links' replay in front of it.
    pub fn recovery(&self) -> String {
        let name = self.model.recovery.name();
        match self.model.llr_window {
            Some(_) => format!("link-level retry (transport {name})"),
            None => name.to_string(),
        }
    }

    /// One frame's serialization at line rate.
    fn slot_s(&self) -> f64 {
        self.frame_bytes as f64 * 8.0 / self.rate.0 as f64
    }
}

/// The expected loss cost of one collective call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallLoss {
    /// Fabric messages of the call and their packets at the real size and MTU.
    pub messages: u64,
    pub packets: f64,
    /// Dependency levels (ring steps) of its DAG.
    pub levels: u64,
    pub retransmitted: f64,
    /// Losses a NAK or SACK reveals (go-back-0: restarts), lost tails a later message reveals
    /// included.
    pub naks: f64,
    pub timeouts: f64,
    /// Probability that the call meets a timeout at all.
    pub timeout_prob: f64,
    /// Expected delay of the call, and of it what the timeouts cost.
    pub stall_s: f64,
    pub timeout_stall_s: f64,
}

impl CallLoss {
    fn add(&mut self, o: &CallLoss, times: f64) {
        self.messages += (o.messages as f64 * times) as u64;
        self.packets += o.packets * times;
        self.levels += (o.levels as f64 * times) as u64;
        self.retransmitted += o.retransmitted * times;
        self.naks += o.naks * times;
        self.timeouts += o.timeouts * times;
        self.stall_s += o.stall_s * times;
        self.timeout_stall_s += o.timeout_stall_s * times;
        let none = (1.0 - self.timeout_prob) * (1.0 - o.timeout_prob).powf(times);
        self.timeout_prob = 1.0 - none;
    }
}

/// A level's revealed losses of one kind of message: `count` messages, each with a Poisson
/// (or, go-back-0, geometric) number of losses of mean `mean`, each costing `cost_s`.
struct Losses {
    geometric: bool,
    mean: f64,
    cost_s: f64,
    count: u64,
}

impl Losses {
    /// P(K <= k) at the points `k = 0, step, 2 step, ...` up to where it is 1 to 1e-12 over
    /// `count` messages, with the step chosen to keep at most 20,000 points.
    fn cdf(&self) -> (f64, Vec<f64>) {
        let tol = 1e-12 / self.count.max(1) as f64;
        if self.geometric {
            // P(K > k) = r^(k+1), r = mean / (1 + mean).
            let ln_r = -(1.0 / self.mean).ln_1p();
            let kmax = (tol.ln() / ln_r).ceil().max(1.0);
            let step = (kmax / 20_000.0).ceil().max(1.0);
            let pts = (kmax / step).ceil() as usize + 1;
            let f = (0..pts)
                .map(|j| -(((j as f64 * step) + 1.0) * ln_r).exp_m1())
                .collect();
            return (step, f);
        }
        // Poisson, summed in logs (e^-mean underflows past 745); a mean past 1e5 is taken as
        // certain (its coefficient of variation under 0.3%).
        if self.mean > 1e5 {
            let k = self.mean.round();
            return (k, vec![0.0, 1.0]);
        }
        let (mut f, mut ln_fact, mut out) = (0.0f64, 0.0f64, Vec::new());
        let ln_m = self.mean.ln();
        let mut k = 0u64;
        loop {
            if k > 0 {
                ln_fact += (k as f64).ln();
            }
            f += (-self.mean + k as f64 * ln_m - ln_fact).exp();
            out.push(f.min(1.0));
            if (1.0 - f <= tol && k as f64 >= self.mean) || k > 200_000 {
                return (1.0, out);
            }
            k += 1;
        }
    }
}

/// E[max over the messages of their losses' cost]: the integral of P(max > t), piecewise
/// constant between the points where some kind's count steps (evaluated at each piece's left
/// end, an upper bound where a kind's points were thinned).
fn expected_max(kinds: &[Losses]) -> f64 {
    let cdfs: Vec<(f64, Vec<f64>)> = kinds
        .iter()
        .filter(|k| k.mean > 0.0 && k.count > 0)
        .map(|k| k.cdf())
        .collect();
    let kinds: Vec<&Losses> = kinds
        .iter()
        .filter(|k| k.mean > 0.0 && k.count > 0)
        .collect();
    if kinds.is_empty() {
        return 0.0;
    }
    // Breakpoints t = j step_c cost_c of every kind, merged.
    let mut ts: Vec<f64> = kinds
        .iter()
        .zip(&cdfs)
        .flat_map(|(k, (step, f))| (1..f.len()).map(move |j| j as f64 * step * k.cost_s))
        .collect();
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    let (mut sum, mut t0) = (0.0, 0.0);
    for &t in &ts {
        // P(max <= t0) = Π_c F_c(k_c(t0))^count.
        let mut all = 1.0;
        for (k, (step, f)) in kinds.iter().zip(&cdfs) {
            let j = ((t0 / (step * k.cost_s)) + 1e-9).floor() as usize;
            all *= f.get(j).copied().unwrap_or(1.0).powf(k.count as f64);
        }
        sum += (1.0 - all) * (t - t0);
        t0 = t;
    }
    sum
}

/// One more message whose revealed losses are `mean` on average at `cost_s` each, into its
/// level's kinds.
fn add_kind(k: &mut Vec<Losses>, geometric: bool, mean: f64, cost_s: f64) {
    match k.iter_mut().find(|x| x.mean == mean && x.cost_s == cost_s) {
        Some(x) => x.count += 1,
        None => k.push(Losses {
            geometric,
            mean,
            cost_s,
            count: 1,
        }),
    }
}

/// Messages of `dag` that cross the fabric, with their dependency level.
fn levels(dag: &MessageDag) -> Vec<u32> {
    let mut level = vec![0u32; dag.messages.len()];
    for (i, m) in dag.messages.iter().enumerate() {
        let deps = &dag.deps[m.deps_start as usize..(m.deps_start + m.deps_len) as usize];
        level[i] = deps
            .iter()
            .map(|&d| level[d as usize] + 1)
            .max()
            .unwrap_or(0);
    }
    level
}

/// The expected loss cost of running `dag` once on `topo`; `base_s` is its lossless time (a
/// lost tail a later message reveals costs about one level of it).
pub fn dag_loss(dag: &MessageDag, topo: &Topology, s: &LossSetup, base_s: f64) -> CallLoss {
    let level = levels(dag);
    let nets: Vec<usize> = (0..dag.messages.len())
        .filter(|&i| dag.messages[i].path == Path::Net)
        .collect();
    let depth = level.iter().max().map_or(0, |&l| l + 1);
    let mut out = CallLoss {
        levels: depth as u64,
        ..CallLoss::default()
    };
    if nets.is_empty() {
        return out;
    }
    // The last level each QP (src, dst, qp) sends at: a message below it has one behind it.
    let mut last: std::collections::BTreeMap<(u32, u32, u16), u32> = Default::default();
    for &i in &nets {
        let m = &dag.messages[i];
        let e = last.entry((m.src.0, m.dst.0, m.qp)).or_insert(0);
        *e = (*e).max(level[i]);
    }
    let l = &s.model;
    let slot = s.slot_s();
    let rto = l.rto_ps as f64 * 1e-12;
    let level_s = base_s / depth.max(1) as f64;
    // Per level: the revealed losses' kinds, and the stalls as (P(none), Σ q d, Σ q).
    let mut kinds: Vec<Vec<Losses>> = (0..depth).map(|_| Vec::new()).collect();
    let mut stalls = vec![(1.0f64, 0.0f64, 0.0f64); depth as usize];
    let mut timeouts: Vec<Stall> = Vec::new();
    for &i in &nets {
        let m = &dag.messages[i];
        let Some((switches, prop)) = up_down(topo, m.src, m.dst) else {
            continue;
        };
        let hops = switches as usize + 1;
        let rtt = 2.0
            * (prop.as_secs_f64() + switches as f64 * s.switch_latency_s + 2.0 * s.nic_latency_s)
            + hops as f64 * slot;
        let n = m.bytes.div_ceil(s.mtu as u64).max(1);
        let ph = path_loss(l.per_link, hops);
        let lv = level[i] as usize;
        out.messages += 1;
        out.packets += n as f64;
        if let Some(replay) = l.llr_window {
            // Link-level retry (UEC 1.0 5.1): the transport sees no loss; each of the message's
            // corrupted frames (Poisson, n p_h over its hops) costs its link a go-back-N replay
            // of `replay` frame slots (`fabricsim_mech::llr::replay_window`), which the
            // message waits for.
            add_kind(&mut kinds[lv], false, n as f64 * ph, replay * slot);
            continue;
        }
        let w = rtt / slot;
        let e = loss_expect::message(l.recovery, ph, n, w, false);
        // A later message on the QP reveals a lost tail (cumulative-only ACKs never do, nor
        // RUD's SACKs: only the timer resends a random loss there).
        let behind = last[&(m.src.0, m.dst.0, m.qp)] > level[i]
            && !matches!(l.recovery, Transport::Unordered | Transport::Rud);
        let (revealed_tail, rto_p) = if behind {
            (e.tail, e.timeout - e.tail)
        } else {
            (0.0, e.timeout)
        };
        let repeats = loss_expect::timeouts_per_stall(ph, l.retries);
        let stall_d = repeats * rto + rtt;
        let cost = match l.recovery {
            Transport::SelectiveRepeat | Transport::Unordered | Transport::Rud => slot,
            Transport::GoBackN => l.constants.c_gbn * rtt + slot,
            Transport::GoBack0 => rtt + e.per_event_packets * slot,
        };
        add_kind(
            &mut kinds[lv],
            l.recovery == Transport::GoBack0,
            e.revealed,
            cost,
        );
        // A lost tail revealed one level later holds its level; a timeout holds the chains
        // through its message (`stall_path`).
        let st = &mut stalls[lv];
        st.0 *= 1.0 - revealed_tail.min(1.0);
        st.1 += revealed_tail * (level_s + rtt);
        st.2 += revealed_tail;
        timeouts.push(Stall {
            message: i as u32,
            prob: rto_p,
            duration_s: stall_d,
        });
        out.retransmitted += e.resent + e.timeout * repeats * e.timeout_resends;
        out.naks += e.revealed + revealed_tail;
        out.timeouts += rto_p * repeats;
        out.timeout_prob = 1.0 - (1.0 - out.timeout_prob) * (1.0 - rto_p.min(1.0));
    }
    let mut stall = 0.0;
    for (k, (none, qd, q)) in kinds.iter().zip(&stalls) {
        stall += expected_max(k);
        if *q > 0.0 {
            stall += (1.0 - none) * qd / q;
        }
    }
    let path = stall_path::expected_delay(dag, level_s, &timeouts, l.recovery != Transport::Rud);
    out.timeout_stall_s = path;
    out.stall_s = stall + path;
    out
}

/// How the step's collectives are laid out: per (op, group), the stride between its ranks'
/// GPUs (the rows' Megatron layout).
fn strides(r: &StepReport) -> Vec<(Op, GroupShape, u64)> {
    let mut v: Vec<(Op, GroupShape, u64)> = Vec::new();
    for row in &r.collectives {
        let op = op_of(row);
        let g = shape(row);
        if !v.iter().any(|x| (x.0, x.1) == (op, g)) {
            v.push((op, g, row.gpu_stride));
        }
    }
    v
}

fn op_of(row: &CommRow) -> Op {
    Op::ALL
        .into_iter()
        .find(|o| o.name() == row.op)
        .expect("rows name known ops")
}

fn shape(row: &CommRow) -> GroupShape {
    GroupShape {
        ranks: row.ranks,
        servers: row.servers,
    }
}

/// A communication model with the expected loss cost of each call added to `inner`'s time.
pub struct LossyComm<'a> {
    pub inner: &'a dyn CommModel,
    pub setup: LossSetup,
    pub topo: &'a Topology,
    pub place: &'a Placement,
    pub nvlink: BitRate,
    pub channels: Channels,
    layout: Vec<(Op, GroupShape, u64)>,
    cache: RefCell<Vec<((Op, u64, GroupShape), CallLoss)>>,
}

impl<'a> LossyComm<'a> {
    /// Over `inner`, for the collectives of `first` (the step without loss: its rows give each
    /// collective's layout).
    pub fn new(
        inner: &'a dyn CommModel,
        setup: LossSetup,
        topo: &'a Topology,
        place: &'a Placement,
        nvlink: BitRate,
        channels: Channels,
        first: &StepReport,
    ) -> LossyComm<'a> {
        LossyComm {
            inner,
            setup,
            topo,
            place,
            nvlink,
            channels,
            layout: strides(first),
            cache: RefCell::new(Vec::new()),
        }
    }

    /// The expected loss of one call of `op` of `bytes` on `group` (no loss for a group the
    /// step did not list, or one that does not compile).
    pub fn call(&self, op: Op, bytes: u64, group: GroupShape) -> CallLoss {
        let key = (op, bytes, group);
        if let Some(c) = self.cache.borrow().iter().find(|c| c.0 == key) {
            return c.1;
        }
        let Some(&(_, _, stride)) = self.layout.iter().find(|x| (x.0, x.1) == (op, group)) else {
            return CallLoss::default();
        };
        let comm = Comm {
            place: self.place,
            gpus: (0..group.ranks as u64)
                .map(|i| (i * stride) as u32)
                .collect(),
        };
        let algo = algo_for(op, group);
        let rounded = round(op, group.ranks, bytes).bytes;
        let spec = CollectiveSpec {
            algo,
            ..CollectiveSpec::with_defaults(op, rounded, self.channels.of(algo, group.ranks))
        };
        let c = match compile(&spec, &comm, self.nvlink) {
            Ok(dag) => dag_loss(
                &dag,
                self.topo,
                &self.setup,
                self.inner.time_s(op, bytes, group),
            ),
            Err(_) => CallLoss::default(),
        };
        self.cache.borrow_mut().push((key, c));
        c
    }

    /// Per collective of `r` (a step timed by this model), its expected loss per step: every
    /// piece of every call.
    pub fn per_step(&self, r: &StepReport, lossless: &StepReport) -> Vec<CollectiveLoss> {
        r.collectives
            .iter()
            .zip(&lossless.collectives)
            .map(|(row, clean)| {
                let mut per_step = CallLoss::default();
                let pieces = row.pieces.max(1);
                for j in 0..pieces {
                    let c = self.call(op_of(row), piece(row.bytes_per_call, pieces, j), shape(row));
                    per_step.add(&c, row.calls_per_step as f64);
                }
                CollectiveLoss {
                    name: row.name.to_string(),
                    calls_per_step: row.calls_per_step,
                    per_step,
                    exposed_s: row.exposed_s - clean.exposed_s,
                }
            })
            .collect()
    }
}

impl CommModel for LossyComm<'_> {
    fn time_s(&self, op: Op, bytes: u64, group: GroupShape) -> f64 {
        self.inner.time_s(op, bytes, group) + self.call(op, bytes, group).stall_s
    }
    fn describe(&self) -> String {
        format!(
            "{}; random loss {:.3e} per link ({}) costed in expectation at the step's real sizes",
            self.inner.describe(),
            self.setup.model.per_link,
            self.setup.recovery()
        )
    }
}

/// One collective's expected loss per step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectiveLoss {
    pub name: String,
    pub calls_per_step: u64,
    pub per_step: CallLoss,
    /// What the step's time grew by through it (the stall compute does not hide).
    pub exposed_s: f64,
}

/// Below this many expected timeouts per step, the step's timeout cost rests on events a
/// calibration run (one per size) would rarely sample.
pub const RARE_TIMEOUTS: f64 = 1.0;

/// The step's expected loss: per collective, and whether it rests on rare timeouts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepLoss {
    pub per_link: f64,
    pub recovery: String,
    pub rto_s: f64,
    pub retransmitted_per_step: f64,
    pub naks_per_step: f64,
    pub timeouts_per_step: f64,
    /// What loss adds to the step time (the lossless calibration's step to this one).
    pub step_s_added: f64,
    /// The share of the added time the timeouts carry.
    pub timeout_share: f64,
    pub collectives: Vec<CollectiveLoss>,
    /// The figure rests on timeouts too rare to sample (fewer than [`RARE_TIMEOUTS`] per step
    /// carrying most of the added time), said in one line.
    pub rare: Option<String>,
}

impl StepLoss {
    /// The step loss of `collectives`, `r` against the `lossless` step.
    pub fn of(
        s: &LossSetup,
        collectives: Vec<CollectiveLoss>,
        r: &StepReport,
        lossless: &StepReport,
    ) -> StepLoss {
        let sum = |f: &dyn Fn(&CallLoss) -> f64| collectives.iter().map(|c| f(&c.per_step)).sum();
        let (retx, naks, tos): (f64, f64, f64) = (
            sum(&|c| c.retransmitted),
            sum(&|c| c.naks),
            sum(&|c| c.timeouts),
        );
        let (stall, to_stall): (f64, f64) = (sum(&|c| c.stall_s), sum(&|c| c.timeout_stall_s));
        let share = if stall > 0.0 { to_stall / stall } else { 0.0 };
        let rto_s = s.model.rto_ps as f64 * 1e-12;
        let rare = (tos < RARE_TIMEOUTS && share > 0.5).then(|| {
            format!(
                "{:.3} expected timeouts per step ({:.2} s each) carry {:.0}% of what loss adds: \
                 too rare for a calibration run to sample, costed in expectation",
                tos,
                rto_s,
                100.0 * share
            )
        });
        StepLoss {
            per_link: s.model.per_link,
            recovery: s.recovery(),
            rto_s,
            retransmitted_per_step: retx,
            naks_per_step: naks,
            timeouts_per_step: tos,
            step_s_added: r.step_time_s - lossless.step_time_s,
            timeout_share: share,
            collectives,
            rare,
        }
    }

    /// One line for the step's source.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "random loss {:.3e} per link with {} costed in expectation: {:.0} retransmitted packets, {:.1} NAKs, {:.4} timeouts ({:.2} s each) per step, +{:.4} s per step",
            self.per_link,
            self.recovery,
            self.retransmitted_per_step,
            self.naks_per_step,
            self.timeouts_per_step,
            self.rto_s,
            self.step_s_added
        );
        if let Some(r) = &self.rare {
            s += &format!(" ({r})");
        }
        s
    }
}

/// `cfg`'s step on `comm` with `loss` costed in expectation over its collectives (compiled with
/// NCCL's `channels` on `topo`), and that loss; without a loss, the step alone.
pub fn step_with_loss(
    cfg: &TrainConfig,
    eff: &Efficiency,
    comm: &dyn CommModel,
    loss: Option<LossSetup>,
    topo: &Topology,
    channels: Channels,
) -> (StepReport, Option<StepLoss>) {
    let clean = step(cfg, eff, comm);
    let Some(loss) = loss else {
        return (clean, None);
    };
    let nvlink = BitRate((cfg.gpu.nvlink_one_way_bytes_per_s() * 8.0) as u64);
    let lossy = LossyComm::new(comm, loss, topo, &cfg.place, nvlink, channels, &clean);
    let costed = step(cfg, eff, &lossy);
    let per = StepLoss::of(&loss, lossy.per_step(&costed, &clean), &costed, &clean);
    (costed, Some(per))
}
