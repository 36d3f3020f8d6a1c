//! Arrow IPC files and Parquet files read back into a [`Table`] (the round trip the tests
//! check against the CSV): arrow-ipc's file reader and the parquet crate's Arrow reader
//! (`parquet::arrow::arrow_reader`), one record batch after another.

use std::fs::File;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type, UInt64Type};
use arrow_schema::DataType;

use super::{Cells, Table};
use crate::error::Error;

fn failed(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Run(format!("{}: cannot read the table: {e}", path.display()))
}

/// The batches as one table; a column of a type `columns` does not write is an error.
fn table(path: &Path, batches: Vec<RecordBatch>) -> Result<Table, Error> {
    let Some(first) = batches.first() else {
        return Ok(Table::default());
    };
    let mut t = Table::default();
    for (k, field) in first.schema().fields().iter().enumerate() {
        let cols = batches.iter().map(|b| b.column(k));
        let cells = match field.data_type() {
            DataType::UInt64 => Cells::U64(
                cols.flat_map(|a| a.as_primitive::<UInt64Type>().iter().collect::<Vec<_>>())
                    .collect(),
            ),
            DataType::Int64 => Cells::I64(
                cols.flat_map(|a| a.as_primitive::<Int64Type>().iter().collect::<Vec<_>>())
                    .collect(),
            ),
            DataType::Float64 => Cells::F64(
                cols.flat_map(|a| a.as_primitive::<Float64Type>().iter().collect::<Vec<_>>())
                    .collect(),
            ),
            DataType::Utf8 => Cells::Text(
                cols.flat_map(|a| {
                    a.as_string::<i32>()
                        .iter()
                        .map(|s| s.map(str::to_string))
                        .collect::<Vec<_>>()
                })
                .collect(),
            ),
            other => {
                return Err(failed(path, format!("column {} is {other}", field.name())));
            }
        };
        t.push(field.name().as_str(), cells);
    }
    Ok(t)
}

/// An Arrow IPC file.
pub fn arrow_file(path: &Path) -> Result<Table, Error> {
    let f = File::open(path).map_err(|e| failed(path, e))?;
    let r = arrow_ipc::reader::FileReader::try_new(f, None).map_err(|e| failed(path, e))?;
    let batches = r
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| failed(path, e))?;
    table(path, batches)
}

/// A Parquet file.
#[cfg(feature = "parquet")]
pub fn parquet_file(path: &Path) -> Result<Table, Error> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let f = File::open(path).map_err(|e| failed(path, e))?;
    let r = ParquetRecordBatchReaderBuilder::try_new(f)
        .and_then(|b| b.build())
        .map_err(|e| failed(path, e))?;
    let batches = r
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| failed(path, e))?;
    table(path, batches)
}
