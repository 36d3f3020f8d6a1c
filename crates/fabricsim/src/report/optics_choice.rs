//! The plan's optics source and what the other source would cost for the same modules
//! (`plan::optics_choice`), as a text line and a JSON object.

use super::plan::{r2, thousands};
use crate::plan::Plan;
use fabricsim_input::catalog::OpticsPrices;
use serde_json::{Value, json};
use std::fmt::Write;

fn label(o: OpticsPrices) -> &'static str {
    match o {
        OpticsPrices::ThirdParty => "third-party",
        OpticsPrices::Vendor => "vendor-branded",
    }
}

/// "  optics source ..." under the CAPEX lines.
pub fn text(p: &Plan, years: u32, w: &mut String) {
    let c = &p.cost;
    let _ = match &p.optics_other {
        Some(o) => {
            let capex = o.cost.network_capex_usd - c.network_capex_usd;
            writeln!(
                w,
                "  optics source   {} (`[cost] optics = \"{}\"`); {} for the same modules: \
                 {}{} USD CAPEX ({:+.1}%), {}{} USD TCO over {years} years",
                label(p.optics),
                p.optics.key(),
                label(o.optics),
                if capex >= 0.0 { "+" } else { "-" },
                thousands(capex.abs()),
                100.0 * capex / c.network_capex_usd,
                if o.cost.network_tco_usd >= c.network_tco_usd {
                    "+"
                } else {
                    "-"
                },
                thousands((o.cost.network_tco_usd - c.network_tco_usd).abs()),
            )
        }
        None => writeln!(
            w,
            "  optics source   {} (no item in use has a second price)",
            label(p.optics)
        ),
    };
}

/// `cost.optics` in the JSON report.
pub fn json(p: &Plan) -> Value {
    let mut v = json!({ "source": p.optics.key() });
    if let Some(o) = &p.optics_other {
        v["other"] = json!({
            "source": o.optics.key(),
            "optics_usd": r2(o.cost.optics_usd),
            "cables_usd": r2(o.cost.cables_usd),
            "capex_usd": r2(o.cost.network_capex_usd),
            "tco_usd": r2(o.cost.network_tco_usd),
        });
    }
    v
}
