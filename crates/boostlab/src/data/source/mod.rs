//! Input sources: one [`TableSource`] per data format, and [`open`], which picks one for a file.
//!
//! A source serves the three ways the rest of the system reads a table:
//!
//! - [`TableSource::read`]: the whole table as a [`Dataset`] (feature values, target, weights), for
//!   evaluation, cross-validation and anything that needs the values themselves;
//! - [`TableSource::read_binned`]: the training table straight into bins ([`BinnedData`]); the
//!   streaming readers (CSV in parallel chunks, Parquet and Arrow one column at a time) never hold
//!   the table as floats, and the bins are bit-identical to reading the table and binning it;
//! - [`TableSource::blocks`]: rows in blocks of columns of a model's [`Schema`] (its feature names
//!   and kinds), for prediction whose memory does not grow with the file.
//!
//! The one design choice: a source is a thin adapter over the format's reader functions
//! ([`super::read_csv_from`], [`super::read_csv_binned`], [`super::CsvBlocks`],
//! [`super::read_libsvm_from`], `read_arrow`, `read_arrow_binned`, `ArrowBlocks`, and
//! [`BinnedData::from_views`] for caller arrays). It reads the same bytes and calls the same code
//! as calling those functions directly, so the results — and the models trained on them — are the
//! same bit for bit. A format without a streaming reader falls back to a whole read: LIBSVM bins
//! its [`Dataset`] and predicts on one block.
//!
//! The options of a read ([`SourceOptions`]: label columns, positive class, weight column, row
//! limit, forced feature kinds, progress hook) are given once, to [`open`] or to the source's
//! constructor; each format uses those that apply to it.
//!
//! # Adding a format
//!
//! One file in this folder with a type implementing [`TableSource`] by calling the format's reader;
//! a [`SourceFormat`] variant with its file extensions ([`SourceFormat::extensions`]); and one arm in
//! [`open`]. Nothing outside this folder changes: the CLI opens every file through [`open`].

mod arrays;
mod csv;
mod libsvm;

#[cfg(feature = "arrow")]
mod arrow;
#[cfg(feature = "arrow")]
mod parquet;

pub use self::arrays::ArraySource;
#[cfg(feature = "arrow")]
pub use self::arrow::ArrowSource;
pub use self::csv::CsvSource;
pub use self::libsvm::LibsvmSource;
#[cfg(feature = "arrow")]
pub use self::parquet::ParquetSource;

use std::io::Read;
use std::path::Path;

use super::{
    BinnedData, Block, BlockLabels, CsvOptions, Dataset, FeatureKind, LabelSelector, ProgressFn, ReadProgress,
    StreamOptions, Target, DEFAULT_CHUNK_BYTES,
};
use crate::data::Schema;
use crate::error::{Error, Result};

/// Blocks of rows for prediction, in the order of the table.
pub type Blocks<'a> = Box<dyn Iterator<Item = Result<Block>> + 'a>;

/// A table to read: a file of some format, or the caller's arrays.
///
/// Every method reads the table anew (a file is opened again), so one source serves several
/// reads. Errors name the file, and the line and column where the format has them.
pub trait TableSource {
    /// The column names in table order (features, label and weight columns alike); empty for a
    /// format whose columns have no names (LIBSVM).
    fn column_names(&self) -> Result<Vec<String>>;

    /// The whole table: features (kinds inferred, or forced by [`SourceOptions::kinds`]), the
    /// target (see [`SourceOptions::label`]) and the sample weights.
    fn read(&self) -> Result<Dataset>;

    /// The training table in bins, at most `max_bins` value bins per numeric feature (valid range
    /// 2..=65535): the same bins as [`TableSource::read`] followed by [`BinnedData::from_dataset`],
    /// without the float copy where the format has a streaming reader.
    fn read_binned(&self, max_bins: usize) -> Result<BinnedData>;

    /// Rows in blocks of at most `block_rows` rows (≥ 1; a format without a streaming reader gives
    /// one block), each holding the columns of `schema` (by name, in its order, of its kinds) and
    /// the label column(s) of [`SourceOptions::label`] when the table has them. Other columns are
    /// ignored.
    fn blocks(&self, schema: &Schema, block_rows: usize) -> Result<Blocks<'_>>;
}

/// The data file formats [`open`] knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// Comma-separated values with a header row ([`CsvSource`]).
    Csv,
    /// LIBSVM / SVMlight sparse text ([`LibsvmSource`]).
    Libsvm,
    /// Apache Parquet (`ParquetSource`, cargo feature `arrow`).
    Parquet,
    /// Arrow IPC, file or stream format, and Feather v2 (`ArrowSource`, cargo feature `arrow`).
    Arrow,
}

impl SourceFormat {
    /// Every format, in the order [`SourceFormat::from_path`] tries them.
    pub const ALL: [SourceFormat; 4] =
        [SourceFormat::Csv, SourceFormat::Libsvm, SourceFormat::Parquet, SourceFormat::Arrow];

    /// The file extensions (lower case, without the dot) that name this format.
    pub fn extensions(self) -> &'static [&'static str] {
        match self {
            SourceFormat::Csv => &["csv"],
            SourceFormat::Libsvm => &["svm", "libsvm", "svmlight"],
            SourceFormat::Parquet => &["parquet", "pq"],
            SourceFormat::Arrow => &["arrow", "feather", "ipc", "arrows"],
        }
    }

    /// The format a file's extension names (case-insensitive), if any.
    pub fn from_path(path: &Path) -> Option<SourceFormat> {
        let ext = path.extension().and_then(|e| e.to_str())?.to_lowercase();
        SourceFormat::ALL.into_iter().find(|f| f.extensions().contains(&ext.as_str()))
    }
}

/// How to read a table. Each format uses the options that apply to it.
#[derive(Clone)]
pub struct SourceOptions {
    /// The label column(s). By default the last column (LIBSVM: the first token of a line, always).
    pub label: LabelSelector,
    /// Name of the positive class for binary labels. By default the rule of
    /// [`super::order_classes`].
    pub positive: Option<String>,
    /// Name of a sample-weight column (CSV, Parquet, Arrow). By default none; LIBSVM files have
    /// none, and naming one is an error.
    pub weight: Option<String>,
    /// Read at most this many data rows (whole and binned reads). By default all.
    pub max_rows: Option<usize>,
    /// Force feature kinds by name, e.g. a model's schema (whole reads). By default inferred.
    pub kinds: Option<Vec<(String, FeatureKind)>>,
    /// Number of features of a LIBSVM file (a model's count when predicting). By default the
    /// largest index seen.
    pub n_features: Option<usize>,
    /// When the label column is missing, read the table without a target instead of failing
    /// (whole reads of prediction data). By default false.
    pub label_optional: bool,
    /// Bytes of text per parallel task of the streaming CSV reader. By default
    /// [`DEFAULT_CHUNK_BYTES`]; any value ≥ 1 (the result does not depend on it).
    pub chunk_bytes: usize,
    /// Called with the bytes read so far: by the streaming readers after each chunk of each pass
    /// (see [`ReadProgress`]), by the whole readers of text formats as they read (pass 1). By
    /// default none.
    pub progress: Option<ProgressFn>,
    /// Whole reads of CSV: refuse a column inferred categorical with more levels than this, naming
    /// the value that made it categorical (see [`CsvOptions::max_levels`]). By default none.
    pub max_levels: Option<usize>,
}

impl Default for SourceOptions {
    fn default() -> Self {
        SourceOptions {
            label: LabelSelector::Last,
            positive: None,
            weight: None,
            max_rows: None,
            kinds: None,
            n_features: None,
            label_optional: false,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            progress: None,
            max_levels: None,
        }
    }
}

impl std::fmt::Debug for SourceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceOptions")
            .field("label", &self.label)
            .field("positive", &self.positive)
            .field("weight", &self.weight)
            .field("max_rows", &self.max_rows)
            .field("kinds", &self.kinds)
            .field("n_features", &self.n_features)
            .field("label_optional", &self.label_optional)
            .field("chunk_bytes", &self.chunk_bytes)
            .field("progress", &self.progress.is_some())
            .field("max_levels", &self.max_levels)
            .finish()
    }
}

impl SourceOptions {
    /// The options of the whole readers of CSV, Parquet and Arrow.
    fn csv(&self) -> CsvOptions {
        CsvOptions {
            label: self.label.clone(),
            positive: self.positive.clone(),
            weight: self.weight.clone(),
            kinds: self.kinds.clone(),
            max_rows: self.max_rows,
            label_optional: self.label_optional,
            max_levels: self.max_levels,
        }
    }

    /// The options of the streaming readers.
    fn stream(&self, max_bins: usize) -> StreamOptions {
        StreamOptions {
            label: self.label.clone(),
            positive: self.positive.clone(),
            weight: self.weight.clone(),
            max_rows: self.max_rows,
            max_bins,
            chunk_bytes: self.chunk_bytes,
            progress: self.progress.clone(),
        }
    }
}

/// Opens the table in `path`: in `format`, or else the format its extension names
/// ([`SourceFormat::from_path`]). Nothing is read yet. An extension that names no format is an
/// error naming the file; so is Parquet or Arrow in a build without the `arrow` feature.
pub fn open(
    path: impl AsRef<Path>,
    format: Option<SourceFormat>,
    options: SourceOptions,
) -> Result<Box<dyn TableSource>> {
    let path = path.as_ref();
    let format = match format {
        Some(f) => f,
        None => SourceFormat::from_path(path).ok_or_else(|| unknown_extension(path))?,
    };
    Ok(match format {
        SourceFormat::Csv => Box::new(CsvSource::new(path, options)),
        SourceFormat::Libsvm => Box::new(LibsvmSource::new(path, options)),
        #[cfg(feature = "arrow")]
        SourceFormat::Parquet => Box::new(ParquetSource::new(path, options)),
        #[cfg(feature = "arrow")]
        SourceFormat::Arrow => Box::new(ArrowSource::new(path, options)),
        #[cfg(not(feature = "arrow"))]
        SourceFormat::Parquet | SourceFormat::Arrow => {
            return Err(Error::Failed(format!(
                "{}: this boostlab was built without Parquet/Arrow support (cargo feature `arrow`)",
                path.display()
            )))
        }
    })
}

fn unknown_extension(path: &Path) -> Error {
    let known: Vec<String> = SourceFormat::ALL.iter().flat_map(|f| f.extensions()).map(|e| format!(".{e}")).collect();
    let what = match path.extension() {
        Some(e) => format!("the extension '.{}'", e.to_string_lossy()),
        None => "a file without an extension".to_string(),
    };
    Error::InvalidData(format!(
        "{}: cannot tell the data format from {what} (known: {}); name the format",
        path.display(),
        known.join(", ")
    ))
}

/// A reader that reports the bytes read through a progress hook (pass 1 of `total`).
struct Counted<R> {
    inner: R,
    bytes: u64,
    total: u64,
    hook: Option<ProgressFn>,
}

impl<R: Read> Counted<R> {
    fn new(inner: R, path: &Path, hook: Option<ProgressFn>) -> Counted<R> {
        let total = if hook.is_some() { std::fs::metadata(path).map_or(0, |m| m.len()) } else { 0 };
        Counted { inner, bytes: 0, total, hook }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(h) = &self.hook {
            self.bytes += n as u64;
            h(ReadProgress { pass: 1, bytes: self.bytes, total: self.total });
        }
        Ok(n)
    }
}

/// A text file, buffered, reporting its progress through `hook`.
fn open_text(path: &Path, hook: Option<ProgressFn>) -> Result<std::io::BufReader<Counted<std::fs::File>>> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    Ok(std::io::BufReader::with_capacity(1 << 16, Counted::new(f, path, hook)))
}

/// A whole table's target as the labels of one prediction block (class names as written).
fn block_labels(target: Option<Target>) -> Option<BlockLabels> {
    match target {
        Some(Target::Classes { y, classes }) => {
            Some(BlockLabels::Single(y.iter().map(|&c| classes[c as usize].clone()).collect()))
        }
        Some(Target::Multilabel { y, .. }) => Some(BlockLabels::Multi(y)),
        None => None,
    }
}

#[cfg(test)]
mod tests;
