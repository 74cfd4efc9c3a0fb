//! Arrow IPC files, file or stream format, and Feather v2 (cargo feature `arrow`):
//! [`crate::data::read_arrow`] (whole),
//! [`crate::data::read_arrow_binned`] (one column at a time into bins),
//! [`crate::data::ArrowBlocks`] (prediction blocks), all with [`ArrowFormat::Ipc`].

use std::path::{Path, PathBuf};

use super::{Blocks, Schema, SourceOptions, TableSource};
use crate::data::{arrow_schema, read_arrow, read_arrow_binned, ArrowBlocks, ArrowFormat, BinnedData, Dataset};
use crate::error::Result;

/// An Arrow IPC file, in the file or the stream format, or Feather v2 (typed columns: nothing is inferred).
#[derive(Debug, Clone)]
pub struct ArrowSource {
    path: PathBuf,
    options: SourceOptions,
}

impl ArrowSource {
    /// The Arrow IPC file `path`, read with `options`.
    pub fn new(path: impl AsRef<Path>, options: SourceOptions) -> ArrowSource {
        ArrowSource { path: path.as_ref().to_path_buf(), options }
    }
}

impl TableSource for ArrowSource {
    fn column_names(&self) -> Result<Vec<String>> {
        Ok(arrow_schema(&self.path, ArrowFormat::Ipc)?.into_iter().map(|c| c.0).collect())
    }

    fn read(&self) -> Result<Dataset> {
        read_arrow(&self.path, ArrowFormat::Ipc, &self.options.csv())
    }

    fn read_binned(&self, max_bins: usize) -> Result<BinnedData> {
        read_arrow_binned(&self.path, ArrowFormat::Ipc, &self.options.stream(max_bins))?.into_binned_data()
    }

    fn blocks(&self, schema: &Schema, block_rows: usize) -> Result<Blocks<'_>> {
        let kinds = schema.kinds_by_name();
        let label = self.options.label.clone();
        Ok(Box::new(ArrowBlocks::open(&self.path, ArrowFormat::Ipc, kinds, label, block_rows)?))
    }
}
