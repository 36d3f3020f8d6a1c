//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015),
//! with the timer structure of NVIDIA ConnectX firmware and the HPCC ns-3 model (`rdma-hw.cc`
//! `*Mlx` functions); parameters from `mlxconfig -q` and HPCC `run.py`.
//!
//! - NP (receiver): a CE-marked packet makes it send a CNP, at most one per QP per `cnp_interval`.
//! - RP (sender), on CNPs: Rt = Rc, Rc = Rc·(1 − α/2), and the stages restart, at most once per
//!   `rate_decrease_interval`. The paper cuts when the CNP arrives (§3.1); the ConnectX and
//!   HPCC sets cut at the next tick of a grid the first CNP starts (RATE_REDUCE_MONITOR_PERIOD:
//!   "reduced at the beginning of the next interval"; HPCC `CheckRateDecreaseMlx`, Isekai
//!   `HandleRateDecreaseTimer`).
//! - α: every `alpha_update`, α = (1 − g)·α + g if a CNP came in that period, else (1 − g)·α.
//! - Increase: a timer T and a byte counter B (ConnectX: in 64-byte units) each count stages,
//!   compared with F before the stage that fires is counted (Isekai `IncreaseRate`): while both
//!   are below F, fast recovery; once one reaches F, additive increase Rt += R_AI; once both
//!   pass F, hyper increase Rt += R_HAI (the paper set, after QCN: i·R_HAI, i = stages beyond
//!   F); then Rc = (Rt + Rc)/2. Without a byte counter (the HPCC set) the timer alone
//!   (`RateIncEventMlx`): F stages of fast recovery, one additive, then R_HAI per stage.
//! - Target clamp: whether a cut sets Rt = Rc (`TargetClamp`; the paper always, ConnectX and
//!   HPCC only after an increase). Without it, a run of cuts with no increase between them keeps
//!   Rt at the rate before the run, so fast recovery climbs back towards it.
//!
//! Rates are integer bits/s; α is a fraction of 2^20; the pacing gap is picoseconds per byte
//! as a fraction of 2^16, so rate steps are not quantized to whole picoseconds per byte.

use fabricsim_core::units::{BitRate, Time};

/// α and g as fractions of 2^20.
pub const Q20: u64 = 1 << 20;

/// ConnectX counts RPG_BYTE_RESET in 64-byte units (Isekai `SentBytes`: `byte_reset * 64`; its
/// 15-bit field then tops out at 2 MB, Spirent's DCQCN profile default "ByteResetInMb 2").
pub const RPG_BYTE_RESET_UNIT: u64 = 64;

/// The three DCQCN parameter sets: the paper's (Zhu et al. SIGCOMM 2015), the HPCC repository's
/// Mellanox-like `dcqcn` (run.py) and the ConnectX firmware defaults (an `mlxconfig -q` dump).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DcqcnSet {
    /// `[dcqcn.paper]`: the SIGCOMM 2015 paper and its simulations.
    Paper,
    /// `[dcqcn.hpcc_sim_mlx]`: the HPCC repository's Mellanox-like set (AI/HAI scale with rate).
    HpccMlx,
    /// `[dcqcn.connectx_fw]`: ConnectX firmware defaults (mlxconfig dump).
    ConnectxFw,
}

impl DcqcnSet {
    pub const NAMES: &'static str = "paper, hpcc_sim_mlx, connectx_fw";
    pub fn parse(s: &str) -> Option<DcqcnSet> {
        match s {
            "paper" => Some(DcqcnSet::Paper),
            "hpcc_sim_mlx" => Some(DcqcnSet::HpccMlx),
            "connectx_fw" => Some(DcqcnSet::ConnectxFw),
            _ => None,
        }
    }
}

/// Whether a rate cut also lowers the target rate (Rt ← Rc), or Rt keeps the rate the flow had
/// before a run of cuts that came with no increase in between.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetClamp {
    /// At every cut: Zhu et al. 2015 §3.1 (Rt = Rc); ns-3 DCQCN `CLAMP_TARGET_RATE 1`.
    Always,
    /// Only if the timer T raised the rate since the last cut: HPCC `rdma-hw.cc`
    /// `CheckRateDecreaseMlx` with `CLAMP_TARGET_RATE 0` (`m_rpTimeStage != 0`).
    AfterTimerIncrease,
    /// Only if the timer or the byte counter raised the rate since the last cut: ConnectX
    /// `CLAMP_TGT_RATE 0` with `CLAMP_TGT_RATE_AFTER_TIME_INC 1` (mstflint mlxcfg descriptions;
    /// Isekai `HandleRateDecreaseTimer`: a byte stage, or a timer stage with the option).
    AfterAnyIncrease,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcqcnParams {
    /// g as a fraction of 2^20.
    pub g_q20: u64,
    /// α when the first CNP arrives, as a fraction of 2^20.
    pub initial_alpha_q20: u64,
    /// K: the α update period.
    pub alpha_update: Time,
    /// N: the NP sends at most one CNP per QP per this interval.
    pub cnp_interval: Time,
    /// At most one rate decrease per this period (RATE_REDUCE_MONITOR_PERIOD).
    pub rate_decrease_interval: Time,
    /// T: the rate-increase timer.
    pub rate_increase_timer: Time,
    /// B: the byte counter (0: off).
    pub byte_counter_bytes: u64,
    /// F: fast-recovery stages.
    pub fast_recovery_stages: u32,
    pub rate_ai: BitRate,
    pub rate_hai: BitRate,
    pub min_rate: BitRate,
    /// When a cut sets Rt = Rc.
    pub clamp: TargetClamp,
    /// Hyper increase adds i·R_HAI at the i-th stage beyond F (QCN, the paper) instead of R_HAI.
    pub hyper_per_stage: bool,
    /// The cut waits for the next tick of the monitor-period grid (firmware, HPCC) instead of
    /// coming with the CNP (the paper).
    pub decrease_on_tick: bool,
}

impl DcqcnParams {
    /// The named set for NICs of `line` rate.
    pub fn set(which: DcqcnSet, line: BitRate) -> DcqcnParams {
        let per_25g = |mbps: u64| {
            BitRate((mbps as u128 * 1_000_000 * line.bps() as u128 / 25_000_000_000) as u64)
        };
        match which {
            DcqcnSet::Paper => DcqcnParams {
                g_q20: Q20 / 256,                          // g = 1/256 (paper)
                initial_alpha_q20: Q20,                    // α starts at 1 (paper)
                alpha_update: Time::from_us(55),           // K = 55 us (htsim; FPGA model)
                cnp_interval: Time::from_us(50),           // N = 50 us (htsim; FPGA model)
                rate_decrease_interval: Time::from_us(50), // HPCC "dcqcn_paper" t_dec
                rate_increase_timer: Time::from_us(55),    // T = 55 us (HPCC "dcqcn_paper")
                byte_counter_bytes: 10_000_000,            // B = 10 MB (DCQCN-validation)
                fast_recovery_stages: 5,                   // F = 5 (FPGA model; ns-3)
                rate_ai: BitRate::mbps(40),                // R_AI 40 Mb/s [U]
                rate_hai: BitRate::mbps(400),              // R_HAI = 10 x R_AI [E]
                min_rate: BitRate::mbps(100),              // [E]
                clamp: TargetClamp::Always,                // paper §3.1: Rt = Rc
                hyper_per_stage: true,                     // QCN hyper-active increase [E]
                decrease_on_tick: false,                   // §3.1: cut on the CNP
            },
            DcqcnSet::HpccMlx => DcqcnParams {
                g_q20: Q20 / 256,                         // HPCC run.py "dcqcn"
                initial_alpha_q20: Q20,                   // rdma-hw.cc m_alpha = 1
                alpha_update: Time::from_us(1),           // t_alpha
                cnp_interval: Time::from_us(4), // ConnectX MIN_TIME_BETWEEN_CNPS (NP is the NIC's)
                rate_decrease_interval: Time::from_us(4), // t_dec
                rate_increase_timer: Time::from_us(300), // t_inc
                byte_counter_bytes: 0,          // disabled in that config
                fast_recovery_stages: 1,        // FAST_RECOVERY_TIMES
                rate_ai: per_25g(5),            // 5 Mb/s x BW/25G
                rate_hai: per_25g(50),          // 50 Mb/s x BW/25G
                min_rate: BitRate::mbps(1000),  // run.py MIN_RATE
                clamp: TargetClamp::AfterTimerIncrease, // run.py CLAMP_TARGET_RATE 0
                hyper_per_stage: false,         // HyperIncreaseMlx: Rt += R_HAI
                decrease_on_tick: true,         // CheckRateDecreaseMlx every t_dec
            },
            DcqcnSet::ConnectxFw => DcqcnParams {
                // DCE_TCP_G 1019: α = 1019/1024·α (+ 5/1024 with a CNP), so g = 5/1024 (Mellanox
                // "DCQCN Parameters" DOC-2790; Isekai HandleAlphaUpdateTimer)
                g_q20: Q20 * 5 / 1024,
                initial_alpha_q20: Q20 * 1023 / 1024, // INITIAL_ALPHA_VALUE 1023
                alpha_update: Time::from_us(1),       // DCE_TCP_RTT
                cnp_interval: Time::from_us(4),       // MIN_TIME_BETWEEN_CNPS
                rate_decrease_interval: Time::from_us(4), // RATE_REDUCE_MONITOR_PERIOD
                rate_increase_timer: Time::from_us(300), // RPG_TIME_RESET
                // RPG_BYTE_RESET 32767 in 64-byte units, 2 MB: Google Isekai DCQCN model
                // (`rdma_roce_cc_dcqcn.cc` SentBytes: byte_reset * 64) [E interpretation]
                byte_counter_bytes: 32_767 * RPG_BYTE_RESET_UNIT,
                fast_recovery_stages: 1,              // RPG_THRESHOLD
                rate_ai: BitRate::mbps(5),            // RPG_AI_RATE
                rate_hai: BitRate::mbps(50),          // RPG_HAI_RATE
                min_rate: BitRate::mbps(1),           // RPG_MIN_RATE
                clamp: TargetClamp::AfterAnyIncrease, // CLAMP_TGT_RATE 0, .._AFTER_TIME_INC 1
                hyper_per_stage: false, // RPG_HAI_RATE per RPR_HYPER_INCREASE step (Isekai)
                decrease_on_tick: true, // RPG_GD: "at the beginning of the next ... period"
            },
        }
    }

    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        if self.g_q20 == 0 || self.g_q20 > Q20 || self.initial_alpha_q20 > Q20 {
            return Err((
                "g or initial alpha out of range".into(),
                "0 < g <= 1, 0 <= alpha <= 1",
            ));
        }
        for t in [
            self.alpha_update,
            self.rate_decrease_interval,
            self.rate_increase_timer,
        ] {
            if t == Time::ZERO {
                return Err(("a DCQCN period of 0".into(), "periods > 0"));
            }
        }
        if self.min_rate.bps() == 0 {
            return Err(("min_rate 0".into(), "a positive rate"));
        }
        Ok(())
    }
}

/// The reaction point of one QP.
#[derive(Clone, Copy, Debug)]
pub struct Rp {
    /// Current rate Rc and target rate Rt, bits/s.
    pub rc: u64,
    pub rt: u64,
    pub alpha_q20: u64,
    /// A CNP arrived in the current α period.
    cnp_in_alpha_period: bool,
    /// A CNP arrived and its decrease waits for the next tick of the monitor-period grid.
    decrease_pending: bool,
    /// The first CNP's time: the monitor-period grid starts there.
    grid_start: Time,
    /// The last decrease (`None`: none since the RP became active).
    last_decrease: Option<Time>,
    timer_stage: u32,
    byte_stage: u32,
    bytes_since: u64,
    /// When the α timer last started (`None`: the QP has never seen a CNP) and how many periods
    /// it has run since: it stops a period after the RP goes idle.
    alpha_origin: Option<Time>,
    alpha_ticks: u64,
    /// Timers running (the RP is active once it has seen a CNP, until back at line rate).
    pub active: bool,
    /// Generation of the increase timer: a decrease restarts T, older timer events are stale.
    pub increase_gen: u32,
}

/// What the engine does after an RP update: the new pacing gap, and timers to arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpAction {
    /// Picoseconds per byte × 2^16 (0: line rate, no pacing).
    pub gap_q16: u64,
    pub arm_alpha: bool,
    /// (Re)start the increase timer T from now: after a decrease, and after T fired.
    pub arm_increase: bool,
    pub arm_decrease_at: Option<Time>,
}

/// `alpha_q20` after `n` α periods without a CNP: α·keep^n, keep = 1 − g (fractions of 2^20).
fn decay_q20(alpha_q20: u64, keep_q20: u64, mut n: u64) -> u64 {
    let (mut a, mut k) = (alpha_q20, keep_q20);
    while n > 0 && a > 0 {
        if n & 1 == 1 {
            a = a * k / Q20;
        }
        k = k * k / Q20;
        n >>= 1;
    }
    a
}

/// Pacing gap (ps per byte × 2^16) of `rate` below `line`; 0 at line rate.
pub fn gap_q16(rate: u64, line: u64) -> u64 {
    if rate >= line {
        0
    } else {
        ((8_000_000_000_000u128 << 16) / rate.max(1) as u128) as u64
    }
}

impl Rp {
    pub fn new(line: BitRate) -> Rp {
        Rp {
            rc: line.bps(),
            rt: line.bps(),
            alpha_q20: Q20,
            cnp_in_alpha_period: false,
            decrease_pending: false,
            grid_start: Time::ZERO,
            last_decrease: None,
            timer_stage: 0,
            byte_stage: 0,
            bytes_since: 0,
            alpha_origin: None,
            alpha_ticks: 0,
            active: false,
            increase_gen: 0,
        }
    }

    fn action(&self, line: BitRate) -> RpAction {
        RpAction {
            gap_q16: gap_q16(self.rc, line.bps()),
            arm_alpha: false,
            arm_increase: false,
            arm_decrease_at: None,
        }
    }

    /// A CNP arrives at `now`: the decrease comes now or when the monitor period allows.
    pub fn on_cnp(&mut self, p: &DcqcnParams, line: BitRate, now: Time) -> RpAction {
        let mut a = self.action(line);
        if !self.active {
            // First CNP, or the first after recovering to line rate: timers start (HPCC
            // `cnp_received_mlx`: the decrease check one period later).
            self.active = true;
            self.alpha_q20 = match self.alpha_origin {
                // INITIAL_ALPHA_VALUE is for "the first CNP for a flow" (NVIDIA DCQCN CC
                // parameters); HPCC `m_first_cnp` and Isekai `first_cnp` set it once per QP,
                // and their α timer keeps decaying α while the rate is back at line rate.
                None => p.initial_alpha_q20,
                Some(origin) => {
                    let stopped = origin.0 + self.alpha_ticks * p.alpha_update.0;
                    let idle = now.0.saturating_sub(stopped) / p.alpha_update.0;
                    decay_q20(self.alpha_q20, Q20 - p.g_q20, idle)
                }
            };
            self.alpha_origin = Some(now);
            self.alpha_ticks = 0;
            self.grid_start = now;
            self.last_decrease = None;
            a.arm_alpha = true;
        }
        self.cnp_in_alpha_period = true;
        if self.decrease_pending {
            return a;
        }
        let i = p.rate_decrease_interval.0;
        let due = if p.decrease_on_tick {
            let ticks = (now.0 - self.grid_start.0) / i + 1;
            Time(self.grid_start.0 + ticks * i)
        } else {
            self.last_decrease
                .map_or(now, |t| now.max(t + p.rate_decrease_interval))
        };
        if due == now {
            self.decrease(p, line, now);
            return RpAction {
                arm_alpha: a.arm_alpha,
                arm_increase: true,
                ..self.action(line)
            };
        }
        self.decrease_pending = true;
        a.arm_decrease_at = Some(due);
        a
    }

    /// The time a pending decrease was due.
    pub fn on_decrease_timer(&mut self, p: &DcqcnParams, line: BitRate, now: Time) -> RpAction {
        if !self.decrease_pending {
            return self.action(line);
        }
        self.decrease_pending = false;
        self.decrease(p, line, now);
        RpAction {
            arm_increase: true,
            ..self.action(line)
        }
    }

    /// Rt = Rc (by `p.clamp`); Rc = Rc·(1 − α/2), not below the minimum rate; the increase
    /// stages restart.
    fn decrease(&mut self, p: &DcqcnParams, line: BitRate, now: Time) {
        let clamp = match p.clamp {
            TargetClamp::Always => true,
            TargetClamp::AfterTimerIncrease => self.timer_stage > 0,
            TargetClamp::AfterAnyIncrease => self.timer_stage > 0 || self.byte_stage > 0,
        };
        if clamp {
            self.rt = self.rc;
        }
        let cut = (self.rc as u128 * self.alpha_q20 as u128 / (2 * Q20 as u128)) as u64;
        self.rc = (self.rc - cut).max(p.min_rate.bps()).min(line.bps());
        self.last_decrease = Some(now);
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes_since = 0;
        self.increase_gen = self.increase_gen.wrapping_add(1);
    }

    /// The α timer: returns whether it keeps running.
    pub fn on_alpha_timer(&mut self, p: &DcqcnParams) -> bool {
        let keep = self.alpha_q20 * (Q20 - p.g_q20) / Q20;
        self.alpha_q20 = if self.cnp_in_alpha_period {
            keep + p.g_q20
        } else {
            keep
        };
        self.cnp_in_alpha_period = false;
        self.alpha_ticks += 1;
        self.active
    }

    /// The increase timer T fired.
    pub fn on_increase_timer(&mut self, p: &DcqcnParams, line: BitRate) -> RpAction {
        let a = self.increase(p, line);
        self.timer_stage += 1;
        RpAction {
            arm_increase: self.active,
            ..a
        }
    }

    /// `bytes` were sent; the byte counter may complete a stage.
    pub fn on_sent(&mut self, p: &DcqcnParams, line: BitRate, bytes: u64) -> Option<RpAction> {
        if p.byte_counter_bytes == 0 || !self.active {
            return None;
        }
        self.bytes_since += bytes;
        if self.bytes_since < p.byte_counter_bytes {
            return None;
        }
        self.bytes_since -= p.byte_counter_bytes;
        let a = self.increase(p, line);
        self.byte_stage += 1;
        Some(a)
    }

    /// One increase stage, judged by the stages counted before it (the caller counts it after).
    fn increase(&mut self, p: &DcqcnParams, line: BitRate) -> RpAction {
        let f = p.fast_recovery_stages;
        let lim = line.bps();
        let t = self.timer_stage;
        let step = if p.byte_counter_bytes == 0 {
            // The timer alone (HPCC `RateIncEventMlx`): F stages of fast recovery, one of
            // additive increase, then hyper increase by R_HAI per stage (`HyperIncreaseMlx`).
            match t.cmp(&f) {
                std::cmp::Ordering::Less => 0,
                std::cmp::Ordering::Equal => p.rate_ai.bps(),
                std::cmp::Ordering::Greater => p.rate_hai.bps(),
            }
        } else {
            // Timer and byte counter (Isekai `IncreaseRate`; Zhu et al. Fig. 7 after QCN):
            // hyper increase once both have passed F, additive once either has reached it.
            let (hi, lo) = (t.max(self.byte_stage), t.min(self.byte_stage));
            if lo > f {
                let i = if p.hyper_per_stage {
                    (lo - f) as u64
                } else {
                    1
                };
                i * p.rate_hai.bps()
            } else if hi >= f {
                p.rate_ai.bps()
            } else {
                0
            }
        };
        self.rt = (self.rt + step).min(lim);
        self.rc = (self.rt + self.rc).div_ceil(2).min(lim);
        if self.rc >= lim {
            // Back at line rate: the RP goes idle until the next CNP.
            self.active = false;
            self.rt = lim;
        }
        self.action(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> DcqcnParams {
        DcqcnParams::set(DcqcnSet::Paper, BitRate::gbps(100))
    }

    /// A CNP at `now` and the decrease it schedules.
    fn cut(rp: &mut Rp, p: &DcqcnParams, line: BitRate, now: Time) -> RpAction {
        let a = rp.on_cnp(p, line, now);
        match a.arm_decrease_at {
            Some(at) => rp.on_decrease_timer(p, line, at),
            None => a,
        }
    }

    /// Zhu et al. 2015, §3.1: the first CNP with α = 1 halves the rate at once, Rt keeps the old
    /// rate; a CNP within the decrease interval waits for its end.
    #[test]
    fn first_cnp_halves_the_rate() {
        let p = params();
        let line = BitRate::gbps(100);
        let mut rp = Rp::new(line);
        let a = rp.on_cnp(&p, line, Time::from_us(10));
        assert_eq!(rp.rc, 50_000_000_000);
        assert_eq!(rp.rt, 100_000_000_000);
        assert!(a.arm_alpha && a.arm_increase);
        // 8e12 / 50e9 = 160 ps per byte.
        assert_eq!(a.gap_q16 >> 16, 160);
        let b = rp.on_cnp(&p, line, Time::from_us(20));
        assert_eq!(rp.rc, 50_000_000_000);
        assert_eq!(b.arm_decrease_at, Some(Time::from_us(60)));
    }

    /// ConnectX/HPCC: the cut comes at the next tick of the monitor-period grid the first CNP
    /// starts ("at the beginning of the next rate_reduce_monitor_period"; HPCC
    /// `cnp_received_mlx` / `CheckRateDecreaseMlx`), at most one per tick.
    #[test]
    fn firmware_cuts_at_the_next_monitor_tick() {
        let line = BitRate::gbps(100);
        let p = DcqcnParams::set(DcqcnSet::ConnectxFw, line);
        let mut rp = Rp::new(line);
        let a = rp.on_cnp(&p, line, Time::from_us(10));
        assert!(a.arm_alpha && a.gap_q16 == 0);
        assert_eq!(a.arm_decrease_at, Some(Time::from_us(14)));
        // A second CNP before that tick adds nothing.
        assert_eq!(rp.on_cnp(&p, line, Time::from_us(12)).arm_decrease_at, None);
        let c = rp.on_decrease_timer(&p, line, Time::from_us(14));
        assert!(c.arm_increase && c.gap_q16 != 0);
        assert_eq!(rp.rc, line.bps() - line.bps() * 1023 / 2048);
        assert_eq!(rp.rt, line.bps());
        // The next CNP waits for the grid's next tick: 10 + 3 x 4 us.
        let d = rp.on_cnp(&p, line, Time::from_us(19));
        assert_eq!(d.arm_decrease_at, Some(Time::from_us(22)));
    }

    /// α = (1 − g)·α + g with a CNP in the period, (1 − g)·α without (paper eq. 1).
    #[test]
    fn alpha_follows_the_ewma() {
        let p = params();
        let line = BitRate::gbps(100);
        let mut rp = Rp::new(line);
        rp.on_cnp(&p, line, Time::from_us(1));
        rp.on_alpha_timer(&p);
        assert_eq!(rp.alpha_q20, Q20 * 255 / 256 + Q20 / 256);
        rp.on_alpha_timer(&p);
        assert_eq!(rp.alpha_q20, Q20 * 255 / 256);
    }

    /// α is set to INITIAL_ALPHA_VALUE on a QP's first CNP only: after the rate is back at line
    /// rate, the next CNP finds α decayed by (1 − g) per α period since (HPCC `m_first_cnp`,
    /// Isekai `first_cnp`; their α timer keeps running).
    #[test]
    fn alpha_is_initialized_once_per_qp() {
        let line = BitRate::gbps(100);
        let p = DcqcnParams::set(DcqcnSet::ConnectxFw, line);
        let mut rp = Rp::new(line);
        rp.on_cnp(&p, line, Time::ZERO);
        // Three α periods, the first with the CNP.
        for _ in 0..3 {
            rp.on_alpha_timer(&p);
        }
        let a3 = rp.alpha_q20;
        // Increase stages until the rate is back at line rate and the RP goes idle.
        while rp.active {
            rp.on_increase_timer(&p, line);
        }
        // The α timer stops at its next tick (the 4th period); 1000 periods later a CNP comes.
        assert!(!rp.on_alpha_timer(&p));
        let a4 = rp.alpha_q20;
        let keep = Q20 - p.g_q20;
        assert_eq!(a4, a3 * keep / Q20);
        rp.on_cnp(&p, line, p.alpha_update * 1004);
        let mut expect = a4;
        for _ in 0..1000 {
            expect = expect * keep / Q20;
        }
        // (1019/1024)^1000 = 0.75%: the cut is α/2 of that, not the first CNP's ~50%.
        assert!(
            rp.alpha_q20.abs_diff(expect) <= 100,
            "{} vs {expect}",
            rp.alpha_q20
        );
        assert!(rp.alpha_q20 < p.initial_alpha_q20 / 100);
    }

    /// Fast recovery halves the distance to Rt at each of the F stages (paper §3.2).
    #[test]
    fn fast_recovery_then_additive_increase() {
        let p = params();
        let line = BitRate::gbps(100);
        let mut rp = Rp::new(line);
        cut(&mut rp, &p, line, Time::from_us(1));
        let rt = rp.rt;
        let mut gap = rt - rp.rc;
        for _ in 0..p.fast_recovery_stages {
            rp.on_increase_timer(&p, line);
            let g = rt - rp.rc;
            assert!(g.abs_diff(gap / 2) <= 1, "{g} vs {}", gap / 2);
            gap = g;
        }
        assert_eq!(rp.rt, rt);
        rp.on_increase_timer(&p, line);
        // Additive increase caps Rt at the line rate.
        assert_eq!(rp.rt, line.bps().min(rt + p.rate_ai.bps()));
    }

    /// Two cuts with no increase between them: the paper clamps Rt to Rc at each (§3.1); the
    /// ConnectX firmware (`CLAMP_TGT_RATE 0`) and HPCC (`CLAMP_TARGET_RATE 0`) keep Rt at the
    /// rate before the first cut, and clamp once the rate has been raised since the last cut.
    #[test]
    fn target_clamp_rules() {
        let line = BitRate::gbps(100);
        for (set, clamps) in [
            (DcqcnSet::Paper, true),
            (DcqcnSet::HpccMlx, false),
            (DcqcnSet::ConnectxFw, false),
        ] {
            let p = DcqcnParams::set(set, line);
            let mut rp = Rp::new(line);
            cut(&mut rp, &p, line, Time::from_us(1));
            let second = Time::from_us(1) + p.rate_decrease_interval;
            cut(&mut rp, &p, line, second);
            let rc = rp.rc;
            assert_eq!(rp.rt == line.bps(), !clamps, "{set:?}: rt {}", rp.rt);
            // A timer increase, then a cut: every rule clamps now.
            rp.on_increase_timer(&p, line);
            let raised = rp.rc;
            assert!(raised > rc, "{set:?}");
            cut(&mut rp, &p, line, second + p.rate_decrease_interval);
            assert_eq!(rp.rt, raised, "{set:?}");
        }
    }

    /// The ConnectX byte counter completes a stage every 32767 x 64 bytes sent (Isekai
    /// `SentBytes`), not every 32767 bytes: fast recovery then comes once per ~2 MB.
    #[test]
    fn connectx_byte_counter_counts_64_byte_units() {
        let line = BitRate::gbps(100);
        let p = DcqcnParams::set(DcqcnSet::ConnectxFw, line);
        assert_eq!(p.byte_counter_bytes, 2_097_088);
        let mut rp = Rp::new(line);
        cut(&mut rp, &p, line, Time::from_us(1));
        let rc = rp.rc;
        let mtu = 4096;
        let mut sent = 0;
        while sent + mtu < p.byte_counter_bytes {
            assert!(rp.on_sent(&p, line, mtu).is_none(), "stage after {sent} B");
            sent += mtu;
        }
        assert!(rp.on_sent(&p, line, mtu).is_some());
        // Fast recovery: halfway back to Rt (the line rate: no increase before the cut).
        assert_eq!(rp.rc, (rc + line.bps()).div_ceil(2));
    }

    /// HPCC `RateIncEventMlx` without a byte counter: F fast-recovery stages, one additive
    /// increase of R_AI, then R_HAI per stage.
    #[test]
    fn timer_only_stages_follow_hpcc() {
        let line = BitRate::gbps(100);
        let p = DcqcnParams::set(DcqcnSet::HpccMlx, line);
        let mut rp = Rp::new(line);
        cut(&mut rp, &p, line, Time::from_us(1));
        // An increase, then a cut: Rt is clamped below the line rate.
        rp.on_increase_timer(&p, line);
        cut(
            &mut rp,
            &p,
            line,
            Time::from_us(1) + p.rate_decrease_interval,
        );
        let rt = rp.rt;
        assert!(rt < line.bps());
        for _ in 0..p.fast_recovery_stages {
            rp.on_increase_timer(&p, line);
        }
        assert_eq!(rp.rt, rt);
        rp.on_increase_timer(&p, line);
        assert_eq!(rp.rt, rt + p.rate_ai.bps());
        for k in 1..=3 {
            rp.on_increase_timer(&p, line);
            assert_eq!(rp.rt, rt + p.rate_ai.bps() + k * p.rate_hai.bps());
        }
    }
}
