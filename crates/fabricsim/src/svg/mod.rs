//! SVG charts for reports: deterministic text (fixed decimals, no maps), escaped labels, axes
//! that name their units. One chart kind per file; this file holds what they share (the
//! document frame, axes and ticks, the legend, the palette).
//!
//! Sized for a laptop screen: charts are 640 x 360 user units and scale with their container
//! (`viewBox`, width 100%), text is at least 12 units high.

pub mod axis;
pub mod bars;
pub mod cdf;
pub mod line;
pub mod table;
pub mod tiers;

use std::fmt::Write;

pub use axis::{Axis, Scale, TickFormat};

/// Chart size in SVG user units.
pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 360.0;

/// Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008), black left out.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442",
];

/// The colour of series `i`.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for SVG/HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with one decimal: stable text whatever the platform's float printing.
pub fn px(x: f64) -> String {
    let v = (x * 10.0).round() / 10.0;
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v:.1}")
    }
}

/// The plot area inside the chart's margins.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Area {
    /// The default area of a chart with axes and a legend on the right.
    pub fn with_legend() -> Area {
        Area {
            left: 72.0,
            top: 40.0,
            right: WIDTH - 175.0,
            bottom: HEIGHT - 52.0,
        }
    }
}

/// Opens an SVG document with its title (shown as the chart heading and as `<title>`).
pub fn open(out: &mut String, title: &str, class: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart {}\" viewBox=\"0 0 {} {}\" \
         width=\"100%\" role=\"img\" font-family=\"system-ui, sans-serif\" font-size=\"12\">\
         <title>{}</title>\
         <rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\
         <text class=\"heading\" x=\"{}\" y=\"22\" font-size=\"15\" font-weight=\"600\">{}</text>",
        esc(class),
        px(WIDTH),
        px(HEIGHT),
        esc(title),
        px(WIDTH),
        px(HEIGHT),
        px(12.0),
        esc(title),
    );
}

pub fn close(out: &mut String) {
    out.push_str("</svg>");
}

/// A legend of coloured swatches at the right of `area`.
/// A vertical error bar at `x` from `lo` to `hi` (pixels), with 8-pixel caps.
pub fn error_bar(out: &mut String, stroke: &str, x: f64, lo: f64, hi: f64) {
    let _ = write!(
        out,
        "<path class=\"error-bar\" stroke=\"{stroke}\" stroke-width=\"1.5\" d=\"M{},{}V{}M{},{}H{}M{},{}H{}\"/>",
        px(x),
        px(lo),
        px(hi),
        px(x - 4.0),
        px(lo),
        px(x + 4.0),
        px(x - 4.0),
        px(hi),
        px(x + 4.0)
    );
}

pub fn legend(out: &mut String, area: &Area, names: &[String]) {
    let x = area.right + 16.0;
    for (i, name) in names.iter().enumerate() {
        let y = area.top + 8.0 + 20.0 * i as f64;
        let _ = write!(
            out,
            "<g class=\"legend-item\"><rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\">{}</text></g>",
            px(x),
            px(y - 9.0),
            colour(i),
            px(x + 20.0),
            px(y),
            esc(name)
        );
    }
}

/// Draws the axes of `area` (lines, ticks, tick labels, axis titles) and light grid lines;
/// without `x` the horizontal axis is a bare line (a category axis labelled by the chart).
pub fn axes(out: &mut String, area: &Area, x: Option<&Axis>, y: &Axis) {
    out.push_str("<g class=\"axes\" stroke=\"#222\" stroke-width=\"1\">");
    let _ = write!(
        out,
        "<line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/><line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\"/>",
        l = px(area.left),
        r = px(area.right),
        t = px(area.top),
        b = px(area.bottom)
    );
    out.push_str("</g><g class=\"ticks\">");
    let x_ticks = x.map(|x| x.ticks().into_iter().map(move |v| (x, v)));
    for (x, v) in x_ticks.into_iter().flatten() {
        let xp = x.map(v, area.left, area.right);
        let _ = write!(
            out,
            "<line x1=\"{xp}\" y1=\"{t}\" x2=\"{xp}\" y2=\"{b}\" stroke=\"#ddd\"/>\
             <line x1=\"{xp}\" y1=\"{b}\" x2=\"{xp}\" y2=\"{b5}\" stroke=\"#222\"/>\
             <text x=\"{xp}\" y=\"{b18}\" text-anchor=\"middle\">{}</text>",
            esc(&x.label_of(v)),
            xp = px(xp),
            t = px(area.top),
            b = px(area.bottom),
            b5 = px(area.bottom + 5.0),
            b18 = px(area.bottom + 18.0),
        );
    }
    for v in y.ticks() {
        let yp = y.map(v, area.bottom, area.top);
        let _ = write!(
            out,
            "<line x1=\"{l}\" y1=\"{yp}\" x2=\"{r}\" y2=\"{yp}\" stroke=\"#ddd\"/>\
             <line x1=\"{l5}\" y1=\"{yp}\" x2=\"{l}\" y2=\"{yp}\" stroke=\"#222\"/>\
             <text x=\"{l8}\" y=\"{yp4}\" text-anchor=\"end\">{}</text>",
            esc(&y.label_of(v)),
            yp = px(yp),
            yp4 = px(yp + 4.0),
            l = px(area.left),
            l5 = px(area.left - 5.0),
            l8 = px(area.left - 8.0),
            r = px(area.right),
        );
    }
    let _ = write!(
        out,
        "</g><text class=\"x-title\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
         <text class=\"y-title\" transform=\"translate({} {}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
        px((area.left + area.right) / 2.0),
        px(area.bottom + 40.0),
        esc(x.map(|x| x.title.as_str()).unwrap_or("")),
        px(16.0),
        px((area.top + area.bottom) / 2.0),
        esc(&y.title),
    );
}

#[cfg(test)]
mod tests;
