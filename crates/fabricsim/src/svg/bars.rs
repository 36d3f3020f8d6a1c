//! Stacked bar chart: one bar per category (a fabric), stacked segments (cost components), the
//! total written above each bar, and the total's 95% interval over the seeds as an error bar
//! when it has one.

use std::fmt::Write;

use super::axis::number;
use super::{Area, Axis, Scale, TickFormat, axes, close, colour, error_bar, esc, legend, open, px};

#[derive(Clone, Debug, PartialEq)]
pub struct StackedBars {
    pub title: String,
    /// The value axis title with its unit, e.g. "network CAPEX (USD)".
    pub y_title: String,
    /// Bar labels, left to right.
    pub bars: Vec<String>,
    /// Segment names, bottom to top.
    pub segments: Vec<String>,
    /// `values[bar][segment]`, non-negative.
    pub values: Vec<Vec<f64>>,
    /// The 95% interval (lo, hi) of each bar's total, drawn as an error bar (empty: none).
    pub errors: Vec<(f64, f64)>,
}

impl StackedBars {
    fn totals(&self) -> Vec<f64> {
        self.values.iter().map(|v| v.iter().sum()).collect()
    }

    pub fn to_svg(&self) -> String {
        let area = Area::with_legend();
        let mut out = String::new();
        open(&mut out, &self.title, "stacked-bars");
        let y = Axis::fit(
            &self.y_title,
            Scale::Linear,
            TickFormat::Number,
            &self
                .totals()
                .into_iter()
                .chain(self.errors.iter().map(|e| e.1))
                .collect::<Vec<_>>(),
        );
        axes(&mut out, &area, None, &y);
        let n = self.bars.len().max(1) as f64;
        let slot = (area.right - area.left) / n;
        let width = (slot * 0.55).min(90.0);
        for (b, label) in self.bars.iter().enumerate() {
            let cx = area.left + slot * (b as f64 + 0.5);
            let mut acc = 0.0;
            let _ = write!(out, "<g class=\"bar\" data-name=\"{}\">", esc(label));
            for (s, name) in self.segments.iter().enumerate() {
                let v = self
                    .values
                    .get(b)
                    .and_then(|r| r.get(s))
                    .copied()
                    .unwrap_or(0.0);
                if v <= 0.0 || !v.is_finite() {
                    continue;
                }
                let y0 = y.map(acc, area.bottom, area.top);
                let y1 = y.map(acc + v, area.bottom, area.top);
                acc += v;
                let _ = write!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>",
                    px(cx - width / 2.0),
                    px(y1),
                    px(width),
                    px(y0 - y1),
                    colour(s),
                    esc(name),
                    esc(&number(v))
                );
            }
            // The total's label above the bar, or above its error bar.
            let mut top = acc;
            if let Some(&(lo, hi)) = self.errors.get(b)
                && lo.is_finite()
                && hi > lo
            {
                let (plo, phi) = (
                    y.map(lo, area.bottom, area.top),
                    y.map(hi, area.bottom, area.top),
                );
                error_bar(&mut out, "#333333", cx, plo, phi);
                top = top.max(hi);
            }
            let _ = write!(
                out,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"600\">{}</text>\
                 <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
                px(cx),
                px(y.map(top, area.bottom, area.top) - 6.0),
                esc(&number(acc)),
                px(cx),
                px(area.bottom + 18.0),
                esc(label)
            );
        }
        legend(&mut out, &area, &self.segments);
        close(&mut out);
        out
    }
}
