//! Topology summary: one column per fabric, its switch tiers drawn bottom-up (servers, then
//! leaf, spine, core) as boxes naming the count and the switch, joined by the link counts.

use std::fmt::Write;

use super::{HEIGHT, WIDTH, close, colour, esc, open, px};

/// One level of a fabric: a label ("32 x qm9700 leaf") and the links to the level above.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub label: String,
    /// Links from this level up (empty for the top).
    pub up_links: Option<String>,
}

/// A fabric's levels, bottom (servers) first.
#[derive(Clone, Debug, PartialEq)]
pub struct Stack {
    pub name: String,
    pub levels: Vec<Level>,
}

pub fn to_svg(title: &str, stacks: &[Stack]) -> String {
    let mut out = String::new();
    open(&mut out, title, "tiers");
    let n = stacks.len().max(1) as f64;
    let col = (WIDTH - 24.0) / n;
    let box_w = (col - 24.0).min(220.0);
    for (i, s) in stacks.iter().enumerate() {
        let cx = 12.0 + col * (i as f64 + 0.5);
        let _ = write!(
            out,
            "<g class=\"stack\" data-name=\"{}\"><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"600\">{}</text>",
            esc(&s.name),
            px(cx),
            px(HEIGHT - 12.0),
            esc(&s.name)
        );
        let levels = s.levels.len().max(1) as f64;
        let step = ((HEIGHT - 90.0) / levels).min(80.0);
        for (l, level) in s.levels.iter().enumerate() {
            let y = HEIGHT - 60.0 - step * l as f64;
            let _ = write!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"28\" rx=\"5\" fill=\"{}\" fill-opacity=\"0.18\" stroke=\"{}\"/>\
                 <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                px(cx - box_w / 2.0),
                px(y - 14.0),
                px(box_w),
                colour(i),
                colour(i),
                px(cx),
                px(y + 4.0),
                esc(&level.label)
            );
            if let Some(links) = &level.up_links {
                let _ = write!(
                    out,
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#666\"/>\
                     <text x=\"{}\" y=\"{}\" fill=\"#444\">{}</text>",
                    px(cx),
                    px(y - 14.0),
                    px(cx),
                    px(y - step + 14.0),
                    px(cx + 6.0),
                    px(y - step / 2.0 + 4.0),
                    esc(links)
                );
            }
        }
        out.push_str("</g>");
    }
    close(&mut out);
    out
}
