use super::axis::{bytes, number};
use super::bars::StackedBars;
use super::line::{LineChart, Series};
use super::table::Table;
use super::tiers::{Level, Stack};
use super::*;

/// Checks that every tag is closed in order (an XML well-formedness check for our output:
/// no comments, CDATA or processing instructions are emitted) and returns the element names.
fn elements(svg: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        let j = rest[i..].find('>').expect("unclosed tag") + i;
        let tag = &rest[i + 1..j];
        assert!(!tag.contains('<'), "'<' inside a tag: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "mismatched </{name}>");
        } else {
            let name = tag.split([' ', '/']).next().unwrap().to_string();
            names.push(name.clone());
            if !tag.ends_with('/') {
                stack.push(name);
            }
        }
        rest = &rest[j + 1..];
    }
    assert!(stack.is_empty(), "unclosed elements {stack:?}");
    names
}

fn count(names: &[String], n: &str) -> usize {
    names.iter().filter(|x| *x == n).count()
}

fn busbw_chart() -> LineChart {
    let sizes = [1u64 << 16, 1 << 20, 1 << 24, 1 << 28];
    LineChart::fitted(
        "all-reduce <busbw> & \"size\"",
        ("message size (bytes)", Scale::Log2, TickFormat::Bytes),
        ("bus bandwidth (GB/s)", Scale::Linear, TickFormat::Number),
        vec![
            Series {
                name: "ib-ndr".into(),
                points: sizes
                    .iter()
                    .map(|&s| (s as f64, (s as f64).log2() * 2.0))
                    .collect(),
                errors: Vec::new(),
            },
            Series {
                name: "roce <untuned>".into(),
                points: sizes
                    .iter()
                    .map(|&s| (s as f64, (s as f64).log2()))
                    .collect(),
                errors: Vec::new(),
            },
        ],
    )
}

#[test]
fn line_chart_structure_and_escaping() {
    let svg = busbw_chart().to_svg();
    let names = elements(&svg);
    assert_eq!(names[0], "svg");
    assert_eq!(count(&names, "polyline"), 2, "one polyline per series");
    assert_eq!(count(&names, "circle"), 8, "a marker per point");
    assert!(svg.contains("roce &lt;untuned&gt;"));
    assert!(svg.contains("all-reduce &lt;busbw&gt; &amp; &quot;size&quot;"));
    assert!(!svg.contains("<untuned>"));
    assert!(svg.contains("message size (bytes)") && svg.contains("bus bandwidth (GB/s)"));
    // Log-2 axis from 64 KiB to 256 MiB: power-of-two ticks, every other one (13 > 8 ticks).
    assert!(svg.contains(">64 KiB<") && svg.contains(">256 MiB<") && svg.contains(">1 MiB<"));
}

#[test]
fn estimates_draw_an_error_bar_per_point_with_a_spread() {
    use fabricsim_core::estimate::Estimate;
    let e = |xs: &[f64]| Estimate::of(xs).unwrap();
    let s = Series::of_estimates(
        "mfu".into(),
        [
            (1.0, e(&[0.3, 0.5])),
            (2.0, e(&[0.4, 0.4])),
            (3.0, e(&[0.1, 0.2, 0.3])),
        ],
    );
    assert_eq!(s.points[0], (1.0, 0.4));
    let c = LineChart::fitted(
        "t",
        ("x", Scale::Linear, TickFormat::Number),
        ("y", Scale::Linear, TickFormat::Number),
        vec![s],
    );
    // The axis covers the bars; no bar where the seeds agree.
    assert!(c.y.max >= e(&[0.3, 0.5]).hi);
    assert_eq!(c.to_svg().matches("class=\"error-bar\"").count(), 2);
}

#[test]
fn output_is_deterministic() {
    assert_eq!(busbw_chart().to_svg(), busbw_chart().to_svg());
}

#[test]
fn points_map_monotonically_into_the_plot_area() {
    let c = busbw_chart();
    let a = Area::with_legend();
    let xs: Vec<f64> = c.series[0]
        .points
        .iter()
        .map(|p| c.x.map(p.0, a.left, a.right))
        .collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]));
    assert!(xs.iter().all(|&x| (a.left..=a.right).contains(&x)));
    // Equal ratios of size are equal distances on a log axis.
    let d: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(d.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-9));
}

#[test]
fn nice_linear_ticks_cover_the_data() {
    // Heckbert's 1-2-5 steps: [0, 7.3] -> 0, 2, 4, 6, 8.
    let a = Axis::fit("y", Scale::Linear, TickFormat::Number, &[0.5, 7.3]);
    assert_eq!(a.ticks(), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
    let l = Axis::fit("x", Scale::Log10, TickFormat::Number, &[3e-6, 2e-3]);
    assert_eq!((l.min, l.max), (1e-6, 1e-2));
    assert_eq!(l.ticks().len(), 5);
    assert_eq!(number(1234.0), "1234");
    assert_eq!(number(12345.0), "12.3k");
    assert_eq!(number(5e6), "5M");
    assert_eq!(number(0.25), "0.25");
    assert_eq!(bytes(65536.0), "64 KiB");
    assert_eq!(
        Axis::fit("p", Scale::Linear, TickFormat::Percent, &[0.01]).label_of(0.005),
        "0.5%"
    );
}

#[test]
fn cdf_steps_reach_one_in_sorted_order() {
    let s = cdf::steps(&[3.0, 1.0, 2.0, f64::NAN]);
    assert_eq!(s.first(), Some(&(1.0, 0.0)));
    assert_eq!(s.last(), Some(&(3.0, 1.0)));
    assert!(s.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    let c = cdf::chart(
        "FCT",
        "completion time (us)",
        Scale::Log10,
        &[("a".into(), vec![1.0, 10.0]), ("b".into(), vec![5.0])],
    );
    let names = elements(&c.to_svg());
    assert_eq!(count(&names, "polyline"), 2);
    assert_eq!(count(&names, "circle"), 0, "no markers on CDF steps");
}

#[test]
fn stacked_bars_heights_add_up() {
    let b = StackedBars {
        title: "network CAPEX".into(),
        y_title: "USD".into(),
        bars: vec!["ib".into(), "roce".into()],
        segments: vec!["switches".into(), "optics".into(), "nics".into()],
        values: vec![vec![100.0, 50.0, 50.0], vec![60.0, 0.0, 40.0]],
        errors: Vec::new(),
    };
    let svg = b.to_svg();
    let names = elements(&svg);
    assert_eq!(
        count(&names, "rect") - 1 - 3,
        5,
        "background + 3 legend swatches + 5 segments"
    );
    assert!(
        svg.contains(">200<") && svg.contains(">100<"),
        "totals above the bars"
    );
    // Segment heights are proportional to their values: axis 0..200 over the plot height.
    let a = Area::with_legend();
    let per_usd = (a.bottom - a.top) / 200.0;
    let h = |v: f64| px(v * per_usd);
    assert!(svg.contains(&format!(
        "height=\"{}\" fill=\"#0072B2\"><title>switches: 100",
        h(100.0)
    )));
}

#[test]
fn stacked_bars_draw_the_totals_interval() {
    let b = StackedBars {
        title: "training step time".into(),
        y_title: "seconds per step (s)".into(),
        bars: vec!["ib".into(), "roce".into()],
        segments: vec!["compute".into(), "exposed comm.".into()],
        values: vec![vec![50.0, 6.0], vec![50.0, 40.0]],
        // A measured spread on the second bar only: the first has none to draw.
        errors: vec![(56.0, 56.0), (80.0, 100.0)],
    };
    let svg = b.to_svg();
    assert_eq!(svg.matches("class=\"error-bar\"").count(), 1, "{svg}");
    // The axis reaches the interval's upper end, and the bar from 80 to 100 spans its share
    // of the plot height.
    let a = Area::with_legend();
    let y = Axis::fit("", Scale::Linear, TickFormat::Number, &[56.0, 90.0, 100.0]);
    let (lo, hi) = (y.map(80.0, a.bottom, a.top), y.map(100.0, a.bottom, a.top));
    assert!(
        svg.contains(&format!(
            "M{},{}V{}",
            px(a.left + (a.right - a.left) * 0.75),
            px(lo),
            px(hi)
        )),
        "{svg}"
    );
}

#[test]
fn table_and_tiers_are_well_formed() {
    let t = Table {
        title: "topology <summary>".into(),
        header: vec!["fabric".into(), "tiers".into()],
        rows: vec![
            vec!["ib-ndr".into(), "2".into()],
            vec!["roce".into(), "2".into()],
        ],
    };
    let names = elements(&t.to_svg());
    assert_eq!(count(&names, "text"), 1 + 6);
    let s = tiers::to_svg(
        "tiers",
        &[Stack {
            name: "ib-ndr".into(),
            levels: vec![
                Level {
                    label: "32 servers".into(),
                    up_links: Some("256 links".into()),
                },
                Level {
                    label: "8 x qm9700 leaf".into(),
                    up_links: None,
                },
            ],
        }],
    );
    let names = elements(&s);
    assert_eq!(count(&names, "line"), 1);
    assert!(s.contains("8 x qm9700 leaf"));
}
