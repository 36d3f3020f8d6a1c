//! The effective training time ratio (ETTR: useful training time over wall time) of a job that
//! checkpoints every `interval_s` of work (each write stalling it `write_s`) and, at each
//! failure, loses the work since its last checkpoint and `recovery_s` of detection, restart
//! and restore; failures arrive at random (exponential, mean `mtbf_s`), also during a write or
//! a recovery. The expected wall time of one segment is Daly's, "A higher order estimate of the
//! optimum checkpoint interval for restart dumps", Future Gener. Comput. Syst. 22 (2006) 303,
//! eq. (13): M e^(R/M) (e^((tau+delta)/M) - 1); the optimum interval his eq. (37) and Young's
//! first-order sqrt(2 delta M) ("A first order approximation to the optimum checkpoint
//! interval", CACM 17(9), 1974).

/// How a job checkpoints and recovers, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checkpointing {
    pub interval_s: f64,
    pub write_s: f64,
    pub recovery_s: f64,
}

impl Checkpointing {
    /// Expected wall time to complete one interval of work and its checkpoint (Daly eq. 13).
    pub fn segment_s(&self, mtbf_s: f64) -> f64 {
        if !mtbf_s.is_finite() {
            return self.interval_s + self.write_s;
        }
        let m = mtbf_s;
        m * (self.recovery_s / m).exp() * ((self.interval_s + self.write_s) / m).exp_m1()
    }

    /// Useful work over wall time.
    pub fn ettr(&self, mtbf_s: f64) -> f64 {
        self.interval_s / self.segment_s(mtbf_s)
    }
}

/// Young's first-order optimum interval, sqrt(2 delta M).
pub fn young_interval_s(write_s: f64, mtbf_s: f64) -> f64 {
    (2.0 * write_s * mtbf_s).sqrt()
}

/// Daly's higher-order optimum interval (eq. 37): sqrt(2 delta M) (1 + sqrt(delta/2M)/3 +
/// (delta/2M)/9) - delta for delta < 2M, else M.
pub fn daly_interval_s(write_s: f64, mtbf_s: f64) -> f64 {
    if write_s >= 2.0 * mtbf_s {
        return mtbf_s;
    }
    let x = write_s / (2.0 * mtbf_s);
    young_interval_s(write_s, mtbf_s) * (1.0 + x.sqrt() / 3.0 + x / 9.0) - write_s
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: Checkpointing = Checkpointing {
        interval_s: 1800.0,
        write_s: 60.0,
        recovery_s: 720.0,
    };

    #[test]
    fn without_failures_only_the_writes_cost_and_with_rare_ones_the_first_order_terms_add() {
        assert_eq!(C.ettr(f64::INFINITY), 1800.0 / 1860.0);
        assert!((C.ettr(1e15) - 1800.0 / 1860.0).abs() < 1e-9);
        // To first order in 1/M, a segment takes (tau + delta)(1 + ((tau + delta)/2 + R)/M):
        // on average half a segment is redone per failure, and a recovery paid.
        let m = 1e6;
        let first = 1.0 - 1800.0 / (1860.0 * (1.0 + (930.0 + 720.0) / m));
        let exact = 1.0 - C.ettr(m);
        assert!((exact / first - 1.0).abs() < 1e-4, "{exact} vs {first}");
        // More failures, less training; a longer recovery, less training.
        assert!(C.ettr(3600.0 * 3.0) < C.ettr(3600.0 * 30.0));
        let slow = Checkpointing {
            recovery_s: 3600.0,
            ..C
        };
        assert!(slow.ettr(10_800.0) < C.ettr(10_800.0));
    }

    /// The interval that maximises the exact ETTR, by golden-section search.
    fn best_interval(write_s: f64, recovery_s: f64, m: f64) -> f64 {
        let f = |t: f64| {
            Checkpointing {
                interval_s: t,
                write_s,
                recovery_s,
            }
            .ettr(m)
        };
        let (mut a, mut b) = (1.0, 10.0 * m);
        let g = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..200 {
            let (c, d) = (b - g * (b - a), a + g * (b - a));
            if f(c) > f(d) {
                b = d;
            } else {
                a = c;
            }
        }
        (a + b) / 2.0
    }

    #[test]
    fn dalys_interval_is_the_optimum_of_the_exact_ratio_and_youngs_its_first_order() {
        for (delta, m) in [
            (60.0, 10_800.0),
            (30.0, 3600.0),
            (300.0, 86_400.0),
            (600.0, 7200.0),
        ] {
            let best = best_interval(delta, 720.0, m);
            let daly = daly_interval_s(delta, m);
            let young = young_interval_s(delta, m);
            // The optimum does not depend on R (e^(R/M) is a factor).
            assert!((best_interval(delta, 0.0, m) / best - 1.0).abs() < 1e-6);
            assert!(
                (daly / best - 1.0).abs() < 0.01,
                "{delta} {m}: {daly} vs {best}"
            );
            assert!(
                (young / best - 1.0).abs() < 0.25,
                "{delta} {m}: {young} vs {best}"
            );
            assert!((daly - best).abs() <= (young - best).abs());
        }
        assert_eq!(daly_interval_s(100.0, 40.0), 40.0);
    }
}
