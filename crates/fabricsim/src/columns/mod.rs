//! Result tables in columns, the one shape behind CSV, Arrow and Parquet output: a table is
//! named, typed columns of equal length (integers, floats, text; each may be empty),
//! so every format has the same column names and units. CSV is always here; Arrow IPC (stream
//! and file) and Parquet need the cargo features `arrow` and `parquet` (docs/columnar.md).

#[cfg(feature = "arrow")]
mod arrow;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(feature = "arrow")]
pub mod read;

use fabricsim_mech::results::{RunResult, Series};

use crate::error::{Error, InputError};

/// One column's cells; `None` is an empty cell (CSV) or a null (Arrow, Parquet).
#[derive(Clone, Debug, PartialEq)]
pub enum Cells {
    U64(Vec<Option<u64>>),
    I64(Vec<Option<i64>>),
    F64(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl Cells {
    /// Text cells from values' `Display` (`None`: empty).
    pub fn text<T: ToString>(v: impl IntoIterator<Item = Option<T>>) -> Cells {
        Cells::Text(v.into_iter().map(|x| x.map(|x| x.to_string())).collect())
    }

    /// Integer cells from any unsigned integers.
    pub fn u64<T: Into<u64>>(v: impl IntoIterator<Item = Option<T>>) -> Cells {
        Cells::U64(v.into_iter().map(|x| x.map(Into::into)).collect())
    }

    /// Float cells.
    pub fn f64(v: impl IntoIterator<Item = Option<f64>>) -> Cells {
        Cells::F64(v.into_iter().collect())
    }

    fn len(&self) -> usize {
        match self {
            Cells::U64(v) => v.len(),
            Cells::I64(v) => v.len(),
            Cells::F64(v) => v.len(),
            Cells::Text(v) => v.len(),
        }
    }

    /// Row `i` as CSV text: `{}` of the number (Rust's shortest round-trip form for floats),
    /// the text as it is (the writer quotes it), an empty cell for `None`.
    fn csv(&self, i: usize) -> String {
        match self {
            Cells::U64(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            Cells::I64(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            Cells::F64(v) => v[i].map(|x| format!("{x}")).unwrap_or_default(),
            Cells::Text(v) => v[i].clone().unwrap_or_default(),
        }
    }
}

/// A named column; the name carries the unit (`fct_ps`, `busbw_GBps`).
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub cells: Cells,
}

/// Columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
}

impl Table {
    /// Adds a column; every column has the first one's length (a bug otherwise).
    pub fn push(&mut self, name: impl Into<String>, cells: Cells) {
        let name = name.into();
        assert!(
            self.columns
                .first()
                .is_none_or(|c| c.cells.len() == cells.len()),
            "column {name}: {} cells, the table has {}",
            cells.len(),
            self.rows()
        );
        self.columns.push(Column { name, cells });
    }

    /// Adds an estimate's three columns over rows: `name` (the mean), `name_lo`, `name_hi`
    /// (its 95% interval), as the sweep's CSV has them.
    pub fn push_estimate(
        &mut self,
        name: &str,
        rows: impl Iterator<Item = Option<fabricsim_core::estimate::Estimate>>,
    ) {
        let e: Vec<_> = rows.collect();
        self.push(
            name,
            Cells::F64(e.iter().map(|e| e.map(|e| e.mean)).collect()),
        );
        self.push(
            format!("{name}_lo"),
            Cells::F64(e.iter().map(|e| e.map(|e| e.lo)).collect()),
        );
        self.push(
            format!("{name}_hi"),
            Cells::F64(e.iter().map(|e| e.map(|e| e.hi)).collect()),
        );
    }

    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }

    /// The CSV text: a header of the column names, a line per row, ended by `\n`; a cell is
    /// quoted only when it holds a `,`, a `"` or a line break (RFC 4180 section 2).
    pub fn to_csv(&self) -> String {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        let io = "writing CSV to memory cannot fail";
        w.write_record(self.columns.iter().map(|c| c.name.as_str()))
            .expect(io);
        for i in 0..self.rows() {
            w.write_record(self.columns.iter().map(|c| c.cells.csv(i)))
                .expect(io);
        }
        String::from_utf8(w.into_inner().expect(io)).expect("the cells are UTF-8")
    }

    /// The table in `format`; without the cargo feature that writes it, an input error naming
    /// `flag` (exit 2 in the CLI; [`Format::check`] says so before any work).
    pub fn write(&self, format: Format, flag: &str) -> Result<Vec<u8>, Error> {
        format.check(flag)?;
        match format {
            Format::Csv => Ok(self.to_csv().into_bytes()),
            #[cfg(feature = "arrow")]
            Format::ArrowStream => arrow::stream(self),
            #[cfg(feature = "arrow")]
            Format::ArrowFile => arrow::file(self),
            #[cfg(feature = "parquet")]
            Format::Parquet => parquet::file(self),
            #[allow(unreachable_patterns)]
            f => Err(f.unbuilt(flag).into()),
        }
    }
}

/// A table's file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    /// Arrow IPC stream (what `pyarrow.ipc.open_stream` reads).
    ArrowStream,
    /// Arrow IPC file (Feather v2; `pyarrow.ipc.open_file`, `pandas.read_feather`).
    ArrowFile,
    Parquet,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::ArrowStream => "arrow-stream",
            Format::ArrowFile => "arrow",
            Format::Parquet => "parquet",
        }
    }

    /// Whether this build writes it (the cargo features `arrow` and `parquet`).
    pub fn built(self) -> bool {
        match self {
            Format::Csv => true,
            Format::ArrowStream | Format::ArrowFile => cfg!(feature = "arrow"),
            Format::Parquet => cfg!(feature = "parquet"),
        }
    }

    /// `Ok` when this build writes it, else the input error naming `flag` and the feature.
    pub fn check(self, flag: &str) -> Result<(), InputError> {
        match self.built() {
            true => Ok(()),
            false => Err(self.unbuilt(flag)),
        }
    }

    fn unbuilt(self, flag: &str) -> InputError {
        let feature = match self {
            Format::Parquet => "parquet",
            _ => "arrow",
        };
        InputError::flag(
            flag,
            self.name(),
            format!(
                "this fabricsim was built without {} output (the fabricsim crate's cargo \
                 feature `{feature}`, the command's `columnar`)",
                self.name()
            ),
            "csv or json, or a build with it: cargo build --release -p fabricsim-cli \
             --features columnar",
        )
    }
}

/// A run's messages, one row each, with `RunResult::messages`' fields as columns (times in
/// ps; `qp` and `class` empty for NVLink transfers, the times empty for an unfinished message).
pub fn messages(r: &RunResult) -> Table {
    let m = &r.messages;
    let u = |f: fn(&fabricsim_mech::results::MessageResult) -> Option<u64>| {
        Cells::U64(m.iter().map(f).collect())
    };
    let mut t = Table::default();
    t.push("id", u(|m| Some(m.id.into())));
    t.push("qp", u(|m| m.qp.map(u64::from)));
    t.push("class", u(|m| m.class.map(u64::from)));
    t.push("src", u(|m| Some(m.src.into())));
    t.push("dst", u(|m| Some(m.dst.into())));
    t.push("bytes", u(|m| Some(m.bytes)));
    t.push("start_ps", u(|m| m.start_ps));
    t.push("recv_ps", u(|m| m.recv_ps));
    t.push("finish_ps", u(|m| m.finish_ps));
    t.push("fct_ps", u(|m| m.fct_ps));
    t.push("ideal_fct_ps", u(|m| Some(m.ideal_fct_ps)));
    t
}

/// A run's port samples (`[sim] sample_interval`), one row per port and sample: the queued
/// bytes at `time_ps` (sample k at k x the interval, as `report::trace` places it) and the
/// bytes sent in the interval up to it.
pub fn series(s: &Series) -> Table {
    let rows = || {
        s.ports
            .iter()
            .flat_map(|p| (0..p.queue_bytes.len()).map(move |k| (p, k)))
    };
    let mut t = Table::default();
    t.push(
        "port",
        Cells::U64(rows().map(|(p, _)| Some(p.port.into())).collect()),
    );
    t.push(
        "node",
        Cells::U64(rows().map(|(p, _)| Some(p.node.into())).collect()),
    );
    t.push(
        "time_ps",
        Cells::U64(
            rows()
                .map(|(_, k)| Some(k as u64 * s.interval_ps))
                .collect(),
        ),
    );
    t.push(
        "queue_bytes",
        Cells::U64(rows().map(|(p, k)| Some(p.queue_bytes[k])).collect()),
    );
    t.push(
        "tx_bytes",
        Cells::U64(rows().map(|(p, k)| p.tx_bytes.get(k).copied()).collect()),
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_writes_empty_cells_and_quotes_only_the_text_that_needs_it() {
        let mut t = Table::default();
        t.push("n", Cells::U64(vec![Some(1), None, Some(3)]));
        t.push("x_s", Cells::F64(vec![Some(0.5), Some(1e-4), None]));
        t.push(
            "error",
            Cells::Text(vec![None, Some("a,b\nc".into()), Some("say \"x\"".into())]),
        );
        assert_eq!(
            t.to_csv(),
            "n,x_s,error\n1,0.5,\n,0.0001,\"a,b\nc\"\n3,,\"say \"\"x\"\"\"\n"
        );
    }

    #[test]
    #[should_panic(expected = "column b: 1 cells, the table has 2")]
    fn a_column_of_another_length_is_a_bug() {
        let mut t = Table::default();
        t.push("a", Cells::U64(vec![Some(1), Some(2)]));
        t.push("b", Cells::U64(vec![Some(1)]));
    }
}
