//! Input errors that name the file, line, key, the bad value and what is allowed, and the core
//! layer's own refusals ([`CoreError`]).
//!
//! Every user-facing input (scenario files, catalog overrides, CLI flags, ns-3 topology and flow
//! files) reports problems through [`InputError`]; the CLI prints it and exits with code 2.

use std::fmt;

/// Where an input came from: a file with its text (for line numbers), or the command line.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    /// 1-based (line, column) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let upto = &self.text[..offset.min(self.text.len())];
        let line = upto.matches('\n').count() + 1;
        let col = upto.len() - upto.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
        (line, col)
    }

    /// The line (1-based) on which the TOML key `dotted` ("cluster.gpus") is written, found by
    /// scanning table headers and `key =` lines. Arrays of tables match their first entry, or
    /// the entry an index names (`jobs[1].gpus`, `jobs[1].train.tp`: the second `[[jobs]]`).
    pub fn locate_key(&self, dotted: &str) -> Option<usize> {
        let (table, key) = match dotted.rfind('.') {
            Some(i) => (&dotted[..i], &dotted[i + 1..]),
            None => ("", dotted),
        };
        let indexed = dotted.contains('[');
        let mut current = String::new();
        // Entries seen of each array of tables, in header order.
        let mut arrays: Vec<(String, usize)> = Vec::new();
        let mut header = None;
        for (i, raw) in self.text.lines().enumerate() {
            let line = raw.trim();
            if let Some(h) = line.strip_prefix('[') {
                current = table_name(h);
                if h.starts_with('[') {
                    match arrays.iter_mut().find(|(n, _)| *n == current) {
                        Some((_, k)) => *k += 1,
                        None => arrays.push((current.clone(), 0)),
                    }
                }
                if indexed {
                    current = indexed_name(&current, &arrays);
                }
                if current == dotted {
                    return Some(i + 1);
                }
                if indexed
                    && header.is_none()
                    && (current == table || table.starts_with(&format!("{current}.")))
                {
                    header = Some(i + 1);
                }
                continue;
            }
            if let Some((k, _)) = line.split_once('=') {
                let k = k.trim().trim_matches('"');
                if (current == table && k == key) || dotted_key(&current, k) == dotted {
                    return Some(i + 1);
                }
            }
        }
        // An indexed key not written: the header of its entry (a missing key, a default).
        header
    }

    /// The dotted key of the `key = value` entry on a line, with its enclosing table header.
    fn key_at_line(&self, line_no: usize) -> Option<String> {
        let mut current = String::new();
        for (i, raw) in self.text.lines().enumerate() {
            let line = raw.trim();
            if let Some(h) = line.strip_prefix('[') {
                current = table_name(h);
            }
            if i + 1 == line_no {
                if line.starts_with('[') {
                    return Some(if current.is_empty() {
                        "(table header)".into()
                    } else {
                        current
                    });
                }
                // A line without `=` (a syntax error): its first word, in its table.
                let k = match line.split_once('=') {
                    Some((k, _)) => k,
                    None => line.split_whitespace().next().unwrap_or(""),
                };
                let k = k.trim().trim_matches('"');
                return Some(match (k.is_empty(), current.is_empty()) {
                    (true, true) => "(top level)".into(),
                    (true, false) => current,
                    _ => dotted_key(&current, k),
                });
            }
        }
        Some("(end of file)".into())
    }

    /// The value written for `dotted`, as it appears in the file (for error messages).
    pub fn value_text(&self, line_no: usize) -> Option<String> {
        let line = self.text.lines().nth(line_no.checked_sub(1)?)?;
        let v = line.split_once('=')?.1;
        let v = v.split(" #").next().unwrap_or(v).trim();
        Some(v.to_string())
    }
}

/// The table named by a header line with its leading `[` removed (`[a.b]`, `[[a.b]]`).
fn table_name(header: &str) -> String {
    header
        .trim_start_matches('[')
        .split(']')
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// `name` with the array of tables it lies in written with its current entry's index
/// (`jobs.train` in the second `[[jobs]]` -> `jobs[1].train`); `name` when it lies in none.
fn indexed_name(name: &str, arrays: &[(String, usize)]) -> String {
    arrays
        .iter()
        .filter(|(a, _)| name == a || name.starts_with(&format!("{a}.")))
        .max_by_key(|(a, _)| a.len())
        .map_or(name.to_string(), |(a, k)| {
            format!("{a}[{k}]{}", &name[a.len()..])
        })
}

/// `key` inside `table` as a dotted key ("cluster" + "gpus" -> "cluster.gpus").
fn dotted_key(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    }
}

/// A problem with user input, precise enough to fix without reading the code.
#[derive(Clone, Debug, PartialEq)]
pub struct InputError {
    /// File name, or `command line` for flags.
    pub file: String,
    /// 1-based line, when the input is a file.
    pub line: Option<usize>,
    /// The key or flag (`cluster.gpus`, `--gpus`), or the record (`link 12`).
    pub key: String,
    /// The offending value as written.
    pub value: String,
    /// What is wrong.
    pub problem: String,
    /// What is allowed.
    pub allowed: String,
}

impl InputError {
    /// An error for `dotted` in `src`, located by scanning the file for the key.
    pub fn at_key(
        src: &Source,
        dotted: &str,
        value: impl fmt::Display,
        problem: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> InputError {
        InputError {
            file: src.name.clone(),
            line: src.locate_key(dotted),
            key: dotted.to_string(),
            value: value.to_string(),
            problem: problem.to_string(),
            allowed: allowed.into(),
        }
    }

    /// An error for a command-line flag.
    pub fn flag(
        flag: &str,
        value: impl fmt::Display,
        problem: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> InputError {
        InputError {
            file: "command line".into(),
            line: None,
            key: flag.to_string(),
            value: value.to_string(),
            problem: problem.to_string(),
            allowed: allowed.into(),
        }
    }

    /// An error at a given line of a line-oriented file (ns-3 topology or flow files).
    pub fn at_line(
        src: &Source,
        line: usize,
        key: impl Into<String>,
        value: impl fmt::Display,
        problem: impl fmt::Display,
        allowed: impl Into<String>,
    ) -> InputError {
        InputError {
            file: src.name.clone(),
            line: Some(line),
            key: key.into(),
            value: value.to_string(),
            problem: problem.to_string(),
            allowed: allowed.into(),
        }
    }

    /// Converts a TOML syntax or type error (unknown key, wrong type) into an input error.
    pub fn from_toml(src: &Source, err: &toml::de::Error) -> InputError {
        let (line, key, value) = match err.span() {
            Some(span) => {
                let (line, _) = src.line_col(span.start);
                let key = src.key_at_line(line).unwrap_or_default();
                let written = src.text.get(span.clone()).unwrap_or("").trim().to_string();
                (Some(line), key, written)
            }
            None => (None, String::new(), String::new()),
        };
        let msg = err.message().trim().to_string();
        let (problem, allowed) = match untagged_forms(&msg) {
            Some((p, a)) => (p.to_string(), a.to_string()),
            None => {
                let (p, a) = split_expected(&msg);
                (plain_problem(&p), plain_type_name(a))
            }
        };
        InputError {
            file: src.name.clone(),
            line,
            key,
            value,
            problem,
            allowed,
        }
    }

    /// An input file named by `key` (a flag or argument) that cannot be read (`io::input`).
    pub fn io(path: &str, key: &str, problem: impl fmt::Display) -> InputError {
        InputError {
            file: path.to_string(),
            line: None,
            key: key.to_string(),
            value: String::new(),
            problem: problem.to_string(),
            allowed: "a readable regular file".into(),
        }
    }
}

/// serde messages read "unknown field `x`, expected one of `a`, `b`" or "invalid type: string
/// \"a\", expected u32": split them into the problem and what is allowed.
fn split_expected(msg: &str) -> (String, String) {
    match msg.split_once(", expected ") {
        Some((p, a)) => (p.to_string(), a.to_string()),
        None => (msg.to_string(), String::new()),
    }
}

/// serde names Rust types ("expected u8", "struct ClusterSection"); say what a user writes
/// instead.
fn plain_type_name(allowed: String) -> String {
    let range = |lo: &str, hi: &str| format!("a whole number {lo} to {hi}");
    match allowed.as_str() {
        "u8" => range("0", "255"),
        "u16" => range("0", "65535"),
        "u32" => range("0", "4294967295"),
        "u64" | "usize" | "u128" => "a whole number >= 0".into(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a string" | "string" | "literal string" => "a quoted string".into(),
        "a boolean" | "bool" => "true or false".into(),
        a if a.starts_with("struct ") || a.starts_with("a map") || a == "map" => "a table".into(),
        a if a.starts_with("a sequence") || a == "sequence" => "an array".into(),
        a if a.starts_with("enum ") => "one of the names this key takes".into(),
        _ => allowed,
    }
}

/// A problem without serde's Rust words: `map` and `sequence` as TOML says them, integer
/// widths (`as i128`, `u64 value was too large`) dropped.
fn plain_problem(problem: &str) -> String {
    let mut p = problem.to_string();
    for t in ["i128", "u128", "i64", "u64"] {
        p = p.replace(&format!(" as {t}"), "");
    }
    for t in ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64"] {
        p = p.replace(&format!("{t} value was too large"), "number too large");
    }
    p.replace("type: map", "type: table")
        .replace("type: sequence", "type: array")
}

/// The accepted forms of the values serde reads as untagged enums: "data did not match any
/// variant of untagged enum SizeValue" as (problem, allowed).
fn untagged_forms(msg: &str) -> Option<(&'static str, &'static str)> {
    let name = msg.split("untagged enum ").nth(1)?.trim();
    Some(match name {
        "SizeValue" => (
            "not a size",
            "a size: a whole number of bytes or a quoted size such as \"64KB\", \"2MB\"",
        ),
        "PsnSetting" => (
            "not a PSN setting",
            "\"zero\", \"seeded\" or a PSN 0 to 16777215 (24 bits)",
        ),
        _ => (
            "not one of the accepted forms",
            "see the key's documentation",
        ),
    })
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        // No empty field: `file: problem` when there is no key and no value.
        if !self.key.is_empty() {
            write!(f, ": `{}`", self.key)?;
        }
        if !self.value.is_empty() {
            write!(
                f,
                "{} {}",
                if self.key.is_empty() { ":" } else { " =" },
                self.value
            )?;
        }
        write!(f, ": {}", self.problem)?;
        if !self.allowed.is_empty() {
            write!(f, "; allowed: {}", self.allowed)?;
        }
        Ok(())
    }
}

impl std::error::Error for InputError {}

/// What core refuses, in words naming the value, port, message or flow at fault; the layer
/// reading the input places it (an `InputError` at the key, an engine's `SimError`).
#[derive(Clone, Debug, PartialEq)]
pub enum CoreError {
    /// A size, time or rate outside its syntax or bounds (`units::parse_*`, `bounded_*`).
    Value(String),
    /// A topology breaking a structural invariant (`Topology::check`).
    Topology(String),
    /// A message DAG that does not fit the topology or its bounds, or a dependency that does not
    /// point back (`MessageDag::check_hosts`, `Release::new`).
    Dag(String),
    /// A traffic pattern the hosts cannot carry (`traffic::generate`).
    Traffic(String),
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Value(s)
            | CoreError::Topology(s)
            | CoreError::Dag(s)
            | CoreError::Traffic(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for CoreError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_keys_under_tables() {
        let src = Source::new(
            "s.toml",
            "# c\n[cluster]\ngpus = 0\n\n[fabric]\nprofile = \"x\"\n",
        );
        assert_eq!(src.locate_key("cluster.gpus"), Some(3));
        assert_eq!(src.locate_key("fabric.profile"), Some(6));
        assert_eq!(src.locate_key("fabric"), Some(5));
        assert_eq!(src.locate_key("cluster.nope"), None);
        let e = InputError::at_key(
            &src,
            "cluster.gpus",
            0,
            "must be at least 8",
            "8 to 1000000",
        );
        assert_eq!(
            e.to_string(),
            "s.toml:3: `cluster.gpus` = 0: must be at least 8; allowed: 8 to 1000000"
        );
    }

    /// Issue 21: a file error with no key and no value prints `file: problem` (once
    /// `file:: problem`, an empty field), with or without its line.
    #[test]
    fn a_file_error_prints_no_empty_field() {
        let e = InputError {
            file: "x.toml".into(),
            line: None,
            key: String::new(),
            value: String::new(),
            problem: "empty scenario".into(),
            allowed: String::new(),
        };
        assert_eq!(e.to_string(), "x.toml: empty scenario");
        let e = InputError { line: Some(3), ..e };
        assert_eq!(e.to_string(), "x.toml:3: empty scenario");
    }

    /// A number past the integer type the key reads says so in words, not in Rust's type.
    #[test]
    fn a_number_too_large_is_said_without_rust_types() {
        assert_eq!(plain_problem("u64 value was too large"), "number too large");
    }
}
