//! A serving request trace: CSV lines `arrival_s,prompt_tokens,output_tokens` (a header line
//! starting with a letter and `#` comments are skipped), arrivals not decreasing. Each error
//! names the file, its line and the field.

use super::Scenario;
use super::serve::{MAX_REQUESTS, MAX_TOKENS};
use fabricsim_core::error::{InputError, Source};
use fabricsim_core::units::Time;

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRequest {
    pub arrival: Time,
    pub prompt_tokens: u64,
    pub output_tokens: u64,
}

const ALLOWED: &str = "arrival_s,prompt_tokens,output_tokens: seconds >= 0 not decreasing, then two whole numbers 1 to 1048576";

/// Reads the trace at `path`, set by `key` (`serve.trace`, or a job's `jobs[i].serve.trace`).
pub fn read(s: &Scenario, key: &str, path: &str) -> Result<Vec<TraceRequest>, InputError> {
    let text = crate::io::input::read_input(path.as_ref())
        .map_err(|e| s.error(key, format!("\"{path}\""), e, "a readable CSV file"))?;
    parse(&Source::new(path, text))
}

/// Parses trace text.
pub fn parse(src: &Source) -> Result<Vec<TraceRequest>, InputError> {
    let mut out = Vec::new();
    let mut last = Time::ZERO;
    for (i, line) in src.text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty()
            || line.starts_with('#')
            || line.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            continue;
        }
        let bad = |field: &str, v: &str, problem: &str| {
            InputError::at_line(src, n, field.to_string(), v, problem, ALLOWED)
        };
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 3 {
            return Err(bad("line", line, "expected 3 comma-separated fields"));
        }
        let secs: f64 = f[0]
            .parse()
            .map_err(|_| bad("arrival_s", f[0], "not a number"))?;
        if !(secs.is_finite() && (0.0..=1e6).contains(&secs)) {
            return Err(bad("arrival_s", f[0], "out of range"));
        }
        let arrival = Time::from_secs_f64(secs);
        if arrival < last {
            return Err(bad("arrival_s", f[0], "earlier than the line before"));
        }
        last = arrival;
        let tokens = |field: &str, v: &str| -> Result<u64, InputError> {
            match v.parse::<u64>() {
                Ok(t) if (1..=MAX_TOKENS).contains(&t) => Ok(t),
                Ok(_) => Err(bad(field, v, "out of range")),
                Err(_) => Err(bad(field, v, "not a whole number")),
            }
        };
        out.push(TraceRequest {
            arrival,
            prompt_tokens: tokens("prompt_tokens", f[1])?,
            output_tokens: tokens("output_tokens", f[2])?,
        });
        if out.len() as u64 > MAX_REQUESTS {
            return Err(bad("line", line, "too many requests"));
        }
    }
    if out.is_empty() {
        return Err(InputError::at_line(
            src,
            1,
            "trace",
            "(no requests)",
            "the trace has no request lines",
            ALLOWED,
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_parses_and_errors_name_the_line_and_field() {
        let ok = parse(&Source::new(
            "t.csv",
            "arrival_s,prompt_tokens,output_tokens\n0.5,100,10\n# c\n1.0, 200, 20\n",
        ))
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].prompt_tokens, 200);
        assert_eq!(ok[0].arrival, Time::from_secs_f64(0.5));
        let e = parse(&Source::new("t.csv", "0.5,100,10\n0.4,100,10\n")).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.line, e.key.as_str()),
            ("t.csv", Some(2), "arrival_s")
        );
        let e = parse(&Source::new("t.csv", "0.5,100,x\n")).unwrap_err();
        assert_eq!(
            (e.line, e.key.as_str(), e.value.as_str()),
            (Some(1), "output_tokens", "x")
        );
        let e = parse(&Source::new("t.csv", "0.5,0,1\n")).unwrap_err();
        assert_eq!(e.key, "prompt_tokens");
        assert!(parse(&Source::new("t.csv", "0.5,1\n")).is_err());
    }
}
