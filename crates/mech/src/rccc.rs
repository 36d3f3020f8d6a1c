//! RCCC's parameters (UEC 1.0 specification 3.6.14, receiver credit-based congestion control,
//! read through the public notes in github.com/KaiLv16/UEC-Notes, its UET-CC notes),
//! engine-neutral: the packet engine's algorithm is `fabricsim_packet::congestion`'s `rccc`.

use serde::Deserialize;

/// `[congestion.rccc]` (a profile's): RCCC on, alone or with `[congestion.nscc]`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "RcccTable")]
pub struct RcccParams {
    /// The receiver's credit window in BDPs of its link (its line rate x the longest unloaded
    /// round trip of its senders): the bytes it lets its senders have in flight together.
    pub credit_bdp: f64,
    /// Packets a sender may send to a receiver before its first credit arrives (the spec's
    /// unscheduled allowance).
    pub unscheduled_packets: u32,
}

/// The table as written; every key optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RcccTable {
    credit_bdp: Option<f64>,
    unscheduled_packets: Option<u32>,
}

const ALLOWED: &str = "0 < credit_bdp <= 16, 1 <= unscheduled_packets <= 1024";

impl TryFrom<RcccTable> for RcccParams {
    type Error = String;
    fn try_from(t: RcccTable) -> Result<RcccParams, String> {
        let p = RcccParams {
            credit_bdp: t.credit_bdp.unwrap_or(1.0),
            unscheduled_packets: t.unscheduled_packets.unwrap_or(4),
        };
        if !(p.credit_bdp > 0.0 && p.credit_bdp <= 16.0) {
            return Err(format!(
                "rccc.credit_bdp = {}: allowed {ALLOWED}",
                p.credit_bdp
            ));
        }
        if !(1..=1024).contains(&p.unscheduled_packets) {
            return Err(format!(
                "rccc.unscheduled_packets = {}: allowed {ALLOWED}",
                p.unscheduled_packets
            ));
        }
        Ok(p)
    }
}

impl Default for RcccParams {
    fn default() -> RcccParams {
        RcccTable {
            credit_bdp: None,
            unscheduled_packets: None,
        }
        .try_into()
        .expect("the defaults")
    }
}

impl RcccParams {
    pub fn validate(&self) -> Result<(), (String, &'static str)> {
        RcccParams::try_from(RcccTable {
            credit_bdp: Some(self.credit_bdp),
            unscheduled_packets: Some(self.unscheduled_packets),
        })
        .map(|_| ())
        .map_err(|e| (e, ALLOWED))
    }

    /// The credit window in bytes of a receiver at `line_bps` whose senders' longest unloaded
    /// round trip is `rtt_ps`.
    pub fn window_bytes(&self, line_bps: u64, rtt_ps: u64) -> u64 {
        (self.credit_bdp * line_bps as f64 / 8.0 * rtt_ps as f64 * 1e-12).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_credit_bdp_times_the_bdp_and_bad_values_are_refused() {
        // 400 Gb/s x 6 us = 300 KB.
        assert_eq!(
            RcccParams::default().window_bytes(400_000_000_000, 6_000_000),
            300_000
        );
        let p = RcccParams {
            credit_bdp: 0.0,
            ..RcccParams::default()
        };
        assert!(p.validate().unwrap_err().0.contains("rccc.credit_bdp = 0"));
        let p = RcccParams {
            unscheduled_packets: 0,
            ..RcccParams::default()
        };
        assert!(
            p.validate()
                .unwrap_err()
                .0
                .contains("unscheduled_packets = 0")
        );
    }
}
