//! Parquet files (cargo feature `arrow`): [`crate::data::read_arrow`] (whole),
//! [`crate::data::read_arrow_binned`] (one column at a time into bins),
//! [`crate::data::ArrowBlocks`] (prediction blocks), all with [`ArrowFormat::Parquet`].

use std::path::{Path, PathBuf};

use super::{Blocks, Schema, SourceOptions, TableSource};
use crate::data::{arrow_schema, read_arrow, read_arrow_binned, ArrowBlocks, ArrowFormat, BinnedData, Dataset};
use crate::error::Result;

/// An Apache Parquet file (typed columns: nothing is inferred).
#[derive(Debug, Clone)]
pub struct ParquetSource {
    path: PathBuf,
    options: SourceOptions,
}

impl ParquetSource {
    /// The Parquet file `path`, read with `options`.
    pub fn new(path: impl AsRef<Path>, options: SourceOptions) -> ParquetSource {
        ParquetSource { path: path.as_ref().to_path_buf(), options }
    }
}

impl TableSource for ParquetSource {
    fn column_names(&self) -> Result<Vec<String>> {
        Ok(arrow_schema(&self.path, ArrowFormat::Parquet)?.into_iter().map(|c| c.0).collect())
    }

    fn read(&self) -> Result<Dataset> {
        read_arrow(&self.path, ArrowFormat::Parquet, &self.options.csv())
    }

    fn read_binned(&self, max_bins: usize) -> Result<BinnedData> {
        read_arrow_binned(&self.path, ArrowFormat::Parquet, &self.options.stream(max_bins))?.into_binned_data()
    }

    fn blocks(&self, schema: &Schema, block_rows: usize) -> Result<Blocks<'_>> {
        let kinds = schema.kinds_by_name();
        let label = self.options.label.clone();
        Ok(Box::new(ArrowBlocks::open(&self.path, ArrowFormat::Parquet, kinds, label, block_rows)?))
    }
}
