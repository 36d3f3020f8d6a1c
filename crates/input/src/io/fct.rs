//! fct.txt in the ns-3 HPCC output format (HPCC ns-3 `fct.txt`,
//! alibaba-edu/High-Precision-Congestion-Control): one line per completed flow,
//! `<sip_hex8> <dip_hex8> <sport> <dport> <size_B> <start_time_ns> <fct_ns> <standalone_fct_ns>`,
//! in order of completion. Times are integer nanoseconds from the run's origin; the standalone
//! FCT is fabricsim's ideal FCT of the same flow.

use fabricsim_mech::results::RunResult;
use fabricsim_mech::route::{host_ip, qp_sport};

pub fn write_fct(r: &RunResult, dport: u16) -> String {
    let mut done: Vec<_> = r
        .messages
        .iter()
        .filter(|m| m.finish_ps.is_some())
        .collect();
    done.sort_by_key(|m| (m.finish_ps, m.id));
    let mut out = String::new();
    for m in done {
        let (Some(start), Some(fct)) = (m.start_ps, m.fct_ps) else {
            continue;
        };
        out.push_str(&format!(
            "{:08x} {:08x} {} {} {} {} {} {}\n",
            host_ip(m.src),
            host_ip(m.dst),
            m.qp.map(qp_sport).unwrap_or(0),
            dport,
            m.bytes,
            start / 1000,
            fct / 1000,
            m.ideal_fct_ps / 1000
        ));
    }
    out
}
