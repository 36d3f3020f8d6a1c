//! A small table drawn as SVG (a header row and text rows), for summaries placed among charts.

use std::fmt::Write;

use super::{close, esc, px};

#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

const ROW_H: f64 = 22.0;
/// Width per character at font size 12 (system sans-serif averages about 0.6 em).
const CHAR_W: f64 = 7.2;

impl Table {
    /// Column widths from the longest cell of each column.
    fn widths(&self) -> Vec<f64> {
        let cols = self.header.len();
        (0..cols)
            .map(|c| {
                let longest = std::iter::once(&self.header)
                    .chain(self.rows.iter())
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0);
                longest as f64 * CHAR_W + 20.0
            })
            .collect()
    }

    pub fn to_svg(&self) -> String {
        let widths = self.widths();
        let w = widths.iter().sum::<f64>() + 24.0;
        let h = 40.0 + ROW_H * (self.rows.len() + 1) as f64 + 12.0;
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart table\" viewBox=\"0 0 {} {}\" \
             width=\"{}\" role=\"img\" font-family=\"system-ui, sans-serif\" font-size=\"12\">\
             <title>{}</title><rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\
             <text class=\"heading\" x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"600\">{}</text>",
            px(w),
            px(h),
            px(w),
            esc(&self.title),
            px(w),
            px(h),
            esc(&self.title)
        );
        for (r, row) in std::iter::once(&self.header)
            .chain(self.rows.iter())
            .enumerate()
        {
            let y = 40.0 + ROW_H * r as f64;
            if r % 2 == 1 {
                let _ = write!(
                    out,
                    "<rect x=\"12\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f5f8\"/>",
                    px(y),
                    px(w - 24.0),
                    px(ROW_H)
                );
            }
            let weight = if r == 0 { " font-weight=\"600\"" } else { "" };
            let mut x = 12.0;
            for (c, cell) in row.iter().enumerate() {
                let _ = write!(
                    out,
                    "<text x=\"{}\" y=\"{}\"{weight}>{}</text>",
                    px(x + 8.0),
                    px(y + 15.0),
                    esc(cell)
                );
                x += widths.get(c).copied().unwrap_or(0.0);
            }
        }
        close(&mut out);
        out
    }
}
