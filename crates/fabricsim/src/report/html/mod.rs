//! Self-contained HTML reports: one file with inline CSS and inline SVG charts, nothing
//! fetched when viewed, no script. [`Page`] assembles sections; each report kind has its file.

pub mod claims;
pub mod compare;

use std::fmt::Write;

use crate::svg::esc;

/// Inline style: readable on a 1366-pixel laptop screen, charts two per row when wide enough.
const CSS: &str = "\
body{font-family:system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24;line-height:1.45}\
main{max-width:1280px;margin:0 auto;padding:20px 28px}\
h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin:1.2em 0 .4em;border-bottom:1px solid #d0d5dc}\
section{margin-bottom:18px}\
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:14px}\
.charts figure{margin:0;background:#fff;border:1px solid #d0d5dc;border-radius:6px;padding:6px}\
figcaption{font-size:.85em;color:#555;padding:2px 6px}\
table{border-collapse:collapse;background:#fff;font-size:.92em}\
th,td{border:1px solid #d0d5dc;padding:4px 8px;text-align:right;vertical-align:top}\
th:first-child,td:first-child{text-align:left}thead th{background:#eef1f5}\
td .src{display:block;font-size:.75em;color:#666;text-align:left}\
.callout{background:#fff;border-left:5px solid #0072B2;padding:10px 14px}\
.note{color:#555;font-size:.9em}\
";

#[derive(Default)]
pub struct Page {
    pub title: String,
    body: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        Page {
            title: title.to_string(),
            body: String::new(),
        }
    }

    /// A section with a heading and already-built HTML content.
    pub fn section(&mut self, id: &str, heading: &str, content: &str) {
        let _ = write!(
            self.body,
            "<section id=\"{}\"><h2>{}</h2>{content}</section>",
            esc(id),
            esc(heading)
        );
    }

    pub fn finish(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{t}</title><style>{CSS}</style></head>\
             <body><main><h1>{t}</h1>{}</main></body></html>\n",
            self.body,
            t = esc(&self.title)
        )
    }
}

/// A grid of figures, each an inline SVG with a caption.
pub fn figures(items: &[(String, String)]) -> String {
    let mut out = String::from("<div class=\"charts\">");
    for (svg, caption) in items {
        let _ = write!(
            out,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(caption)
        );
    }
    out.push_str("</div>");
    out
}

/// An HTML table; cells are (text, optional provenance shown small under it).
pub fn table(header: &[String], rows: &[Vec<(String, Option<String>)>]) -> String {
    let mut out = String::from("<table><thead><tr>");
    for h in header {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>");
    for r in rows {
        out.push_str("<tr>");
        for (t, src) in r {
            match src {
                Some(s) => {
                    let _ = write!(
                        out,
                        "<td>{}<span class=\"src\">{}</span></td>",
                        esc(t),
                        esc(s)
                    );
                }
                None => {
                    let _ = write!(out, "<td>{}</td>", esc(t));
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

/// A bulleted list of escaped items.
pub fn list(items: &[String]) -> String {
    let mut out = String::from("<ul>");
    for i in items {
        let _ = write!(out, "<li>{}</li>", esc(i));
    }
    out.push_str("</ul>");
    out
}
