//! A [`Table`] as an Arrow record batch (UInt64, Int64, Float64, Utf8 columns, all nullable) and as
//! Arrow IPC bytes: the streaming format and the file format (Apache Arrow columnar format,
//! "Serialization and Interprocess Communication", https://arrow.apache.org/docs/format/Columnar.html#serialization-and-interprocess-communication-ipc).

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, UInt64Array};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{ArrowError, DataType, Field, Schema};

use super::{Cells, Table};
use crate::error::Error;

fn failed(e: ArrowError) -> Error {
    Error::Run(format!("cannot write the Arrow table: {e}"))
}

/// The table as one record batch.
pub(super) fn batch(t: &Table) -> Result<RecordBatch, Error> {
    let (fields, arrays): (Vec<Field>, Vec<ArrayRef>) = t
        .columns
        .iter()
        .map(|c| {
            let (ty, a): (DataType, ArrayRef) = match &c.cells {
                Cells::U64(v) => (DataType::UInt64, Arc::new(UInt64Array::from(v.clone()))),
                Cells::I64(v) => (DataType::Int64, Arc::new(Int64Array::from(v.clone()))),
                Cells::F64(v) => (DataType::Float64, Arc::new(Float64Array::from(v.clone()))),
                Cells::Text(v) => (DataType::Utf8, Arc::new(StringArray::from(v.clone()))),
            };
            (Field::new(&c.name, ty, true), a)
        })
        .unzip();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).map_err(failed)
}

/// Arrow IPC streaming format bytes.
pub(super) fn stream(t: &Table) -> Result<Vec<u8>, Error> {
    let b = batch(t)?;
    let mut w = StreamWriter::try_new(Vec::new(), &b.schema()).map_err(failed)?;
    w.write(&b).map_err(failed)?;
    w.into_inner().map_err(failed)
}

/// Arrow IPC file format bytes.
pub(super) fn file(t: &Table) -> Result<Vec<u8>, Error> {
    let b = batch(t)?;
    let mut w = FileWriter::try_new(Vec::new(), &b.schema()).map_err(failed)?;
    w.write(&b).map_err(failed)?;
    w.into_inner().map_err(failed)
}
