//! The claims section of the HTML comparison report: the rows of [`crate::report::claims`] as
//! tables under the claims they answer, and the points not run.

use super::{list, table};
use crate::compare::claims::Claims;
use crate::report::claims::{self as rows, Rows};
use crate::svg::esc;

fn html_table((header, rows): Rows) -> String {
    table(&header, &super::compare::plain_rows(rows))
}

/// The section's content.
pub fn section(c: &Claims) -> String {
    let mut out = String::new();
    for line in rows::preamble(c) {
        out.push_str(&format!("<p class=\"note\">{}</p>", esc(&line)));
    }
    let [h0, h1, h2] = rows::headings(c);
    for (h, t) in [
        (h0, rows::throughput_rows(c)),
        (h1, rows::loss_rows(c)),
        (h2, rows::large_rows(c)),
    ] {
        if t.1.is_empty() {
            continue;
        }
        out.push_str(&format!("<h3>{}</h3>{}", esc(&h), html_table(t)));
    }
    let missing = rows::not_run(c);
    if !missing.is_empty() {
        out.push_str("<h3>Not run</h3>");
        out.push_str(&list(&missing));
    }
    out
}
