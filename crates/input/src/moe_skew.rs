//! An MoE layer's routing skew as the input writes it: `uniform`, `zipf:S` (expert i of E, in
//! expert-id order, draws a share proportional to 1 / i^S: Zipf's law, the one-parameter
//! family the skew is stated in; an assumption, not a fit), or `histogram:FILE` (a measured
//! per-expert load, one number per line in expert-id order, as DeepSeek-V3's expert-load
//! analysis reports it per expert: Liu et al. 2024, arXiv 2412.19437, §2.1.2 and §4.5).
//! Checked here, at the edge; `workload::moe` turns it into loads.

use crate::io::input::read_input;
use fabricsim_core::error::{InputError, Source};

/// Largest Zipf exponent accepted: at 8 the hottest of two experts already draws 99.6% (an
/// estimate of where a stated skew stops meaning anything).
pub const MAX_ZIPF: f64 = 8.0;

/// What the skew keys allow, for error messages.
pub const ALLOWED: &str = "uniform, zipf:S (0 < S <= 8, such as zipf:1.2) or histogram:FILE (one \
                           load per expert per line)";

/// A routing skew over the experts of a layer.
#[derive(Clone, Debug, PartialEq)]
pub enum Skew {
    /// Every expert draws the same share (the all-to-all's even blocks).
    Uniform,
    /// Expert i (1-based, expert-id order) draws a share proportional to 1 / i^s.
    Zipf(f64),
    /// Per-expert loads read from `file` (any non-negative unit: tokens or shares).
    Histogram { file: String, loads: Vec<f64> },
}

impl Skew {
    /// How the skew is written (`uniform`, `zipf:1.2`, `histogram:FILE`).
    pub fn name(&self) -> String {
        match self {
            Skew::Uniform => "uniform".into(),
            Skew::Zipf(s) => format!("zipf:{s}"),
            Skew::Histogram { file, .. } => format!("histogram:{file}"),
        }
    }

    /// Parses `text`; `bad(problem)` makes the error against the key or flag that set it, and
    /// `path` resolves a histogram path (relative to the scenario file).
    pub fn parse(
        text: &str,
        bad: &dyn Fn(String) -> InputError,
        path: &dyn Fn(&str) -> String,
    ) -> Result<Skew, InputError> {
        let text = text.trim();
        if text == "uniform" {
            return Ok(Skew::Uniform);
        }
        if let Some(s) = text.strip_prefix("zipf:") {
            return match s.trim().parse::<f64>() {
                Ok(v) if v > 0.0 && v <= MAX_ZIPF => Ok(Skew::Zipf(v)),
                Ok(v) => Err(bad(format!("Zipf exponent {v} out of range"))),
                Err(_) => Err(bad(format!("\"{s}\" is not a number"))),
            };
        }
        if let Some(f) = text.strip_prefix("histogram:") {
            let file = path(f.trim());
            let body = read_input(file.as_ref()).map_err(|e| InputError {
                value: text.into(),
                ..bad(format!("the histogram file cannot be read: {e}"))
            })?;
            let loads = histogram(&Source::new(file.clone(), body))?;
            return Ok(Skew::Histogram { file, loads });
        }
        Err(bad("unknown routing skew".into()))
    }
}

/// The loads of a histogram file: one non-negative number per line (expert 0 first); blank
/// lines and `#` comments are skipped; at least one load is positive.
pub fn histogram(src: &Source) -> Result<Vec<f64>, InputError> {
    let mut loads = Vec::new();
    for (i, raw) in src.text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let key = format!("expert {}", loads.len());
        match line.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => loads.push(v),
            _ => {
                return Err(InputError::at_line(
                    src,
                    i + 1,
                    key,
                    line,
                    "not a load",
                    "a non-negative number (tokens or a share) per line",
                ));
            }
        }
    }
    if !loads.iter().any(|&v| v > 0.0) {
        return Err(InputError {
            file: src.name.clone(),
            line: None,
            key: "loads".into(),
            value: format!("{} lines", loads.len()),
            problem: "the histogram has no positive load".into(),
            allowed: "one load per expert, at least one above zero".into(),
        });
    }
    Ok(loads)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Skew, InputError> {
        Skew::parse(s, &|p| InputError::flag("--skew", s, p, ALLOWED), &|f| {
            f.to_string()
        })
    }

    #[test]
    fn skews_parse_and_bad_ones_name_the_value() {
        assert_eq!(parse("uniform").unwrap(), Skew::Uniform);
        assert_eq!(parse("zipf:1.2").unwrap(), Skew::Zipf(1.2));
        assert_eq!(parse("zipf:1.2").unwrap().name(), "zipf:1.2");
        for bad in ["zipf:0", "zipf:-1", "zipf:9", "zipf:x", "pareto:1", ""] {
            let e = parse(bad).unwrap_err();
            assert_eq!((e.key.as_str(), e.value.as_str()), ("--skew", bad));
            assert!(e.allowed.contains("zipf:S"), "{e}");
        }
    }

    #[test]
    fn a_bad_histogram_line_names_file_line_and_value() {
        let src = Source::new("h.txt", "# loads\n10\n\n5 # hot\nfive\n");
        let e = histogram(&src).unwrap_err();
        assert_eq!(e.file, "h.txt");
        assert_eq!(e.line, Some(5));
        assert_eq!((e.key.as_str(), e.value.as_str()), ("expert 2", "five"));
        let ok = histogram(&Source::new("h.txt", "10\n\n5 # hot\n0\n")).unwrap();
        assert_eq!(ok, vec![10.0, 5.0, 0.0]);
        assert!(histogram(&Source::new("h.txt", "0\n0\n")).is_err());
        assert!(histogram(&Source::new("h.txt", "-1\n")).is_err());
    }
}
