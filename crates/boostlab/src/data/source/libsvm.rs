//! LIBSVM / SVMlight files: [`crate::data::read_libsvm_from`] for every read. The format has no
//! streaming reader: the binned read bins the whole table, and prediction reads one block.

use std::path::{Path, PathBuf};

use super::{block_labels, open_text, Blocks, Schema, SourceOptions, TableSource};
use crate::data::{read_libsvm_from, BinnedData, Block, Dataset, LibsvmOptions, ReadProgress};
use crate::error::{Error, Result};

/// A LIBSVM / SVMlight file (`label idx:val ...`; all features numeric).
#[derive(Debug, Clone)]
pub struct LibsvmSource {
    path: PathBuf,
    options: SourceOptions,
}

impl LibsvmSource {
    /// The LIBSVM file `path`, read with `options` (label, weight and kind options do not apply:
    /// the label is the first token of each line, and there is no weight column).
    pub fn new(path: impl AsRef<Path>, options: SourceOptions) -> LibsvmSource {
        LibsvmSource { path: path.as_ref().to_path_buf(), options }
    }

    fn read_with(&self, n_features: Option<usize>, max_rows: Option<usize>) -> Result<Dataset> {
        if let Some(w) = &self.options.weight {
            return Err(Error::param("weight", "no weight column (LIBSVM files have none)", w));
        }
        let opts = LibsvmOptions { positive: self.options.positive.clone(), n_features, ..Default::default() };
        let text = open_text(&self.path, self.options.progress.clone())?;
        let d = read_libsvm_from(text, &self.path.display().to_string(), &opts)?;
        Ok(match max_rows {
            Some(m) if m < d.n_rows() => d.subset(&(0..m).collect::<Vec<_>>()),
            _ => d,
        })
    }
}

impl TableSource for LibsvmSource {
    fn column_names(&self) -> Result<Vec<String>> {
        Ok(Vec::new())
    }

    fn read(&self) -> Result<Dataset> {
        self.read_with(self.options.n_features, self.options.max_rows)
    }

    fn read_binned(&self, max_bins: usize) -> Result<BinnedData> {
        let d = self.read()?;
        d.check_trainable()?;
        let binned = BinnedData::from_dataset(&d, max_bins)?;
        if let Some(p) = &self.options.progress {
            // The whole read was pass 1; binning in memory completes the streaming readers' passes.
            let total = std::fs::metadata(&self.path).map_or(0, |m| m.len());
            p(ReadProgress { pass: 3, bytes: total, total });
        }
        Ok(binned)
    }

    fn blocks(&self, schema: &Schema, _block_rows: usize) -> Result<Blocks<'_>> {
        // Every row, at the model's width (a file may use fewer features than the model).
        let d = self.read_with(Some(schema.names.len()), None)?;
        let block = Block { features: d.features, labels: block_labels(d.target) };
        Ok(Box::new(std::iter::once(Ok(block))))
    }
}
