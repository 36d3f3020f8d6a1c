//! Which congestion control a run has and its parameters (`CcParams::algo`), engine-neutral:
//! the packet engine runs it through `fabricsim_packet::congestion` (the hooks), the flow
//! engine through its models (`fabricsim_flow::hpcc`, the DCQCN models).

use super::dcqcn::DcqcnParams;
use super::hpcc::HpccParams;
use super::ibcc::IbCcParams;
use super::nscc::NsccParams;
use super::rccc::RcccParams;

/// The run's congestion control and its parameters (`CcParams::algo`).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum CcAlgo {
    #[default]
    None,
    /// DCQCN at the NICs (needs ECN marking).
    Dcqcn(DcqcnParams),
    /// InfiniBand congestion control (FECN at switches, BECN, CCTI at the source).
    IbCc(IbCcParams),
    /// HPCC: INT from the switches, window and rate at the sender.
    Hpcc(HpccParams),
    /// UEC NSCC: a sender window from ECN marks and measured delay (needs ECN marking).
    Nscc(NsccParams),
    /// UEC RCCC: receiver-granted credit windows.
    Rccc(RcccParams),
    /// NSCC and RCCC together: the sender keeps the smaller window (UEC 1.0 3.6.12.3).
    NsccRccc(NsccParams, RcccParams),
}

impl CcAlgo {
    pub fn dcqcn(&self) -> Option<&DcqcnParams> {
        match self {
            CcAlgo::Dcqcn(d) => Some(d),
            _ => None,
        }
    }

    pub fn dcqcn_mut(&mut self) -> Option<&mut DcqcnParams> {
        match self {
            CcAlgo::Dcqcn(d) => Some(d),
            _ => None,
        }
    }

    pub fn ibcc(&self) -> Option<&IbCcParams> {
        match self {
            CcAlgo::IbCc(i) => Some(i),
            _ => None,
        }
    }

    pub fn hpcc(&self) -> Option<&HpccParams> {
        match self {
            CcAlgo::Hpcc(h) => Some(h),
            _ => None,
        }
    }

    /// Its name in `bench`'s header.
    pub fn name(&self) -> &'static str {
        match self {
            CcAlgo::None => "none",
            CcAlgo::Dcqcn(_) => "DCQCN",
            CcAlgo::IbCc(_) => "IB CC",
            CcAlgo::Hpcc(_) => "HPCC",
            CcAlgo::Nscc(_) => "NSCC",
            CcAlgo::Rccc(_) => "RCCC",
            CcAlgo::NsccRccc(..) => "NSCC+RCCC",
        }
    }

    /// The algorithm in words for reports, over marking `ecn` (in words); `None`: none.
    pub fn describe(&self, ecn: &str) -> Option<String> {
        let rccc = |r: &RcccParams| {
            format!(
                "UEC RCCC (receiver credit window {} x BDP shared by its senders, {} unscheduled \
                 packets)",
                r.credit_bdp, r.unscheduled_packets
            )
        };
        match self {
            CcAlgo::None => None,
            CcAlgo::Dcqcn(d) => Some(format!(
                "DCQCN (rate-increase timer {} us, Rai {} Mb/s, min rate {} Mb/s) on {ecn}",
                d.rate_increase_timer.as_us_f64(),
                d.rate_ai.bps() / 1_000_000,
                d.min_rate.bps() / 1_000_000
            )),
            CcAlgo::IbCc(i) => Some(format!(
                "IB congestion control: FECN above {} B, BECN to the source, CCTI up to {}",
                i.threshold_bytes, i.ccti_limit
            )),
            CcAlgo::Hpcc(h) => Some(format!(
                "HPCC (INT per hop, target utilization {}, max stage {})",
                h.eta, h.max_stage
            )),
            CcAlgo::Nscc(n) => Some(format!(
                "UEC NSCC (window from ECN and delay, target queueing delay {} x base RTT, \
                 max window {} x BDP, gamma {}) on {ecn}",
                n.target_qdelay_rtt
                    .map_or("0.75 (trimming) / 1.0".to_string(), |f| f.to_string()),
                n.max_wnd_bdp,
                n.gamma
            )),
            CcAlgo::Rccc(r) => Some(rccc(r)),
            CcAlgo::NsccRccc(n, r) => Some(format!(
                "{} with {}",
                CcAlgo::Nscc(*n).describe(ecn)?,
                rccc(r)
            )),
        }
    }

    /// Sets the algorithm to `new` unless another one is already on; `Err((problem, allowed))`.
    pub fn set(&mut self, new: CcAlgo) -> Result<(), (String, &'static str)> {
        if *self != CcAlgo::None && std::mem::discriminant(self) != std::mem::discriminant(&new) {
            return Err((
                format!("both {} and {}", self.name(), new.name()),
                "one congestion control",
            ));
        }
        *self = new;
        Ok(())
    }

    /// The algorithm's field for errors (`cc.<name>`) and whether it needs ECN marking.
    fn field(&self) -> (&'static str, bool) {
        match self {
            CcAlgo::None => ("cc", false),
            CcAlgo::Dcqcn(_) => ("cc.dcqcn", true),
            CcAlgo::IbCc(_) => ("cc.ibcc", false),
            CcAlgo::Hpcc(_) => ("cc.hpcc", false),
            CcAlgo::Nscc(_) => ("cc.nscc", true),
            CcAlgo::Rccc(_) => ("cc.rccc", false),
            CcAlgo::NsccRccc(..) => ("cc.nscc", true),
        }
    }

    /// Checks the parameters; `ecn`: whether switches mark ECN. `Err((field, (problem,
    /// allowed)))`.
    pub fn validate(&self, ecn: bool) -> Result<(), (&'static str, (String, &'static str))> {
        let (field, needs_ecn) = self.field();
        if needs_ecn && !ecn {
            return Err((
                field,
                (
                    format!("{} without ECN marking", self.name()),
                    "set cc.ecn too",
                ),
            ));
        }
        let r = match self {
            CcAlgo::None => Ok(()),
            CcAlgo::Dcqcn(d) => d.validate(),
            CcAlgo::IbCc(i) => i.validate(),
            CcAlgo::Hpcc(h) => h.validate(),
            CcAlgo::Nscc(n) => n.validate(),
            CcAlgo::Rccc(r) => r.validate(),
            CcAlgo::NsccRccc(n, r) => n.validate().and_then(|_| r.validate()),
        };
        r.map_err(|x| (field, x))
    }
}
