//! Line chart: several series of (x, y) points on shared axes, each a polyline with markers.

use std::fmt::Write;

use fabricsim_core::estimate::Estimate;

use super::{Area, Axis, Scale, TickFormat, axes, close, colour, error_bar, esc, legend, open, px};

/// One named series; points are drawn in the order given.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// The 95% interval (lo, hi) of each point, drawn as an error bar (empty: none).
    pub errors: Vec<(f64, f64)>,
}

impl Series {
    /// A series of estimates: each point at its mean with its interval as an error bar.
    pub fn of_estimates(name: String, points: impl IntoIterator<Item = (f64, Estimate)>) -> Series {
        let (points, errors) = points
            .into_iter()
            .map(|(x, e)| ((x, e.mean), (e.lo, e.hi)))
            .unzip();
        Series {
            name,
            points,
            errors,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Draw a marker on every point (off for dense curves such as CDFs).
    pub markers: bool,
}

impl LineChart {
    /// A chart whose axes are fitted to the series.
    pub fn fitted(
        title: &str,
        x: (&str, Scale, TickFormat),
        y: (&str, Scale, TickFormat),
        series: Vec<Series>,
    ) -> LineChart {
        let xs: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
            .collect();
        let ys: Vec<f64> = series
            .iter()
            .flat_map(|s| {
                s.points
                    .iter()
                    .map(|p| p.1)
                    .chain(s.errors.iter().flat_map(|e| [e.0, e.1]))
            })
            .collect();
        LineChart {
            title: title.to_string(),
            x: Axis::fit(x.0, x.1, x.2, &xs),
            y: Axis::fit(y.0, y.1, y.2, &ys),
            series,
            markers: true,
        }
    }

    pub fn to_svg(&self) -> String {
        let area = Area::with_legend();
        let mut out = String::new();
        open(&mut out, &self.title, "line-chart");
        axes(&mut out, &area, Some(&self.x), &self.y);
        for (i, s) in self.series.iter().enumerate() {
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
                .map(|&(x, y)| {
                    (
                        self.x.map(x, area.left, area.right),
                        self.y.map(y, area.bottom, area.top),
                    )
                })
                .collect();
            let path: Vec<String> = pts
                .iter()
                .map(|p| format!("{},{}", px(p.0), px(p.1)))
                .collect();
            let _ = write!(
                out,
                "<g class=\"series\" data-name=\"{}\"><polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>",
                esc(&s.name),
                colour(i),
                path.join(" ")
            );
            for (&(x, _), &(lo, hi)) in s.points.iter().zip(&s.errors) {
                if !(x.is_finite() && lo.is_finite() && hi.is_finite()) || hi <= lo {
                    continue;
                }
                let (x, lo, hi) = (
                    self.x.map(x, area.left, area.right),
                    self.y.map(lo, area.bottom, area.top),
                    self.y.map(hi, area.bottom, area.top),
                );
                error_bar(&mut out, colour(i), x, lo, hi);
            }
            if self.markers {
                for p in &pts {
                    let _ = write!(
                        out,
                        "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>",
                        px(p.0),
                        px(p.1),
                        colour(i)
                    );
                }
            }
            out.push_str("</g>");
        }
        let names: Vec<String> = self.series.iter().map(|s| s.name.clone()).collect();
        legend(&mut out, &area, &names);
        close(&mut out);
        out
    }
}
