//! CSV files with a header row: [`crate::data::read_csv_from`] (whole),
//! [`crate::data::read_csv_binned`] (parallel chunks into bins), [`crate::data::CsvBlocks`]
//! (prediction blocks).

use std::path::{Path, PathBuf};

use super::{open_text, Blocks, Schema, SourceOptions, TableSource};
use crate::data::{csv_header, read_csv_binned, read_csv_from, BinnedData, CsvBlocks, Dataset};
use crate::error::Result;

/// A CSV file with a header row (column kinds inferred: see [`crate::data::read_csv`]).
#[derive(Debug, Clone)]
pub struct CsvSource {
    path: PathBuf,
    options: SourceOptions,
}

impl CsvSource {
    /// The CSV file `path`, read with `options`.
    pub fn new(path: impl AsRef<Path>, options: SourceOptions) -> CsvSource {
        CsvSource { path: path.as_ref().to_path_buf(), options }
    }
}

impl TableSource for CsvSource {
    fn column_names(&self) -> Result<Vec<String>> {
        csv_header(&self.path)
    }

    fn read(&self) -> Result<Dataset> {
        let text = open_text(&self.path, self.options.progress.clone())?;
        read_csv_from(text, &self.path.display().to_string(), &self.options.csv())
    }

    fn read_binned(&self, max_bins: usize) -> Result<BinnedData> {
        read_csv_binned(&self.path, &self.options.stream(max_bins))?.into_binned_data()
    }

    fn blocks(&self, schema: &Schema, block_rows: usize) -> Result<Blocks<'_>> {
        Ok(Box::new(CsvBlocks::open(&self.path, schema.kinds_by_name(), self.options.label.clone(), block_rows)?))
    }
}
