//! A [`Table`] as a Parquet file, uncompressed, written by the parquet crate's Arrow writer
//! (Apache Parquet format, https://parquet.apache.org/docs/file-format/) from the table's
//! record batch, so the Arrow schema travels in the file and readers get the same types.

use parquet::arrow::ArrowWriter;

use super::Table;
use crate::error::Error;

/// Parquet file bytes.
pub(super) fn file(t: &Table) -> Result<Vec<u8>, Error> {
    let failed = |e: parquet::errors::ParquetError| {
        Error::Run(format!("cannot write the Parquet table: {e}"))
    };
    let b = super::arrow::batch(t)?;
    let mut w = ArrowWriter::try_new(Vec::new(), b.schema(), None).map_err(failed)?;
    w.write(&b).map_err(failed)?;
    w.into_inner().map_err(failed)
}
