//! `--data` and how to read it: the data flags every training command shares.

use std::path::{Path, PathBuf};

use anyhow::Result;
use boostlab::data::source::SourceOptions;
use boostlab::data::{BinnedData, LabelSelector};
use boostlab::Dataset;
use clap::{Args, ValueEnum};

/// Where the data come from and how to read them.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Data file: CSV with a header, LIBSVM (.svm/.libsvm/.svmlight), Parquet (.parquet) or Arrow
    /// IPC (.arrow/.feather/.ipc); by extension, or --format.
    #[arg(long, help_heading = "Data")]
    pub data: PathBuf,
    /// File format. By default from the extension (csv unless .svm, .libsvm, .svmlight).
    #[arg(long, help_heading = "Data", value_enum)]
    pub format: Option<Format>,
    /// Label column (CSV). By default the last column.
    #[arg(long, help_heading = "Data")]
    pub label: Option<String>,
    /// Multi-label: comma-separated 0/1 label columns, or `PREFIX*` for every column starting with
    /// PREFIX (e.g. `label_*`).
    #[arg(long, help_heading = "Data")]
    pub labels: Option<String>,
    /// Positive class of binary labels. By default the larger label (1 for 0/1 and −1/+1, the
    /// later name in alphabetical order for strings).
    #[arg(long, help_heading = "Data")]
    pub positive: Option<String>,
    /// Sample-weight column (CSV).
    #[arg(long, help_heading = "Data")]
    pub weight: Option<String>,
    /// Read only the first N data rows.
    #[arg(long, help_heading = "Data")]
    pub max_rows: Option<usize>,
}

/// Input formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// LIBSVM / SVMlight sparse format.
    Libsvm,
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC (file or stream format; Feather v2).
    Arrow,
}

impl DataArgs {
    /// The label selector these flags describe.
    pub fn selector(&self) -> LabelSelector {
        if let Some(l) = &self.labels {
            if let Some(p) = l.strip_suffix('*') {
                LabelSelector::Prefix(p.to_string())
            } else {
                LabelSelector::Multi(l.split(',').map(|s| s.trim().to_string()).collect())
            }
        } else if let Some(l) = &self.label {
            LabelSelector::Name(l.clone())
        } else {
            LabelSelector::Last
        }
    }

    /// How to read the file: the label, positive class, weight column and row limit of these flags.
    fn options(&self) -> SourceOptions {
        SourceOptions {
            label: self.selector(),
            positive: self.positive.clone(),
            weight: self.weight.clone(),
            max_rows: self.max_rows,
            ..Default::default()
        }
    }

    /// Reads the training data straight into bins: CSV in parallel chunks, Parquet and Arrow one
    /// column at a time; the table is never held as text or floats. LIBSVM files are read whole,
    /// then binned. `progress`: show the reading progress on a terminal.
    pub fn load_binned(&self, max_bins: usize, progress: bool) -> Result<BinnedData> {
        crate::input::read_binned(&self.data, self.format, self.options(), max_bins, progress)
    }

    /// Reads the training data (with a progress bar on a terminal); a column inferred categorical
    /// with more levels than `max_bins` is refused, naming the value that made it categorical.
    pub fn load(&self, max_bins: usize) -> Result<Dataset> {
        crate::input::read(
            &self.data,
            self.format,
            SourceOptions { max_levels: Some(max_bins), ..self.options() },
            true,
        )
    }

    /// Reads another file of the same layout (validation data): the same label, positive class
    /// and weight column, every row. `progress`: show the reading progress on a terminal.
    pub fn load_other(&self, path: &Path, progress: bool) -> Result<Dataset> {
        crate::input::read(path, self.format, SourceOptions { max_rows: None, ..self.options() }, progress)
    }
}
