//! Data files: the one place the CLI maps `--format` to the library's sources and opens a file.
//! Every command reads its data through these functions; the formats themselves live in
//! `boostlab::data::source`. Presentation only: the progress bar and the "read N rows" line.

use std::io::IsTerminal;
use std::path::Path;

use anyhow::{bail, Result};
use boostlab::data::source::{self, SourceFormat, SourceOptions, TableSource};
use boostlab::data::{BinnedData, LabelSelector, ReadProgress};
use boostlab::{Dataset, Ensemble};

use crate::args::Format;

/// The format given with `--format`, or else the one the file's extension names (LIBSVM for
/// `.svm`, `.libsvm`, `.svmlight`, Parquet for `.parquet`, `.pq`, Arrow IPC for `.arrow`,
/// `.feather`, `.ipc`, `.arrows`), CSV otherwise (as the `--format` help says).
fn source_format(path: &Path, given: Option<Format>) -> SourceFormat {
    match given {
        Some(Format::Csv) => SourceFormat::Csv,
        Some(Format::Libsvm) => SourceFormat::Libsvm,
        Some(Format::Parquet) => SourceFormat::Parquet,
        Some(Format::Arrow) => SourceFormat::Arrow,
        None => SourceFormat::from_path(path).unwrap_or(SourceFormat::Csv),
    }
}

/// The table in `path` (nothing read yet).
pub fn open(path: &Path, format: Option<Format>, options: SourceOptions) -> Result<Box<dyn TableSource>> {
    let format = source_format(path, format);
    if format == SourceFormat::Libsvm && options.weight.is_some() {
        bail!("--weight is for CSV files");
    }
    Ok(source::open(path, Some(format), options)?)
}

/// Reads a whole table; `progress`: show the bytes read on a terminal, then the table's size.
pub fn read(path: &Path, format: Option<Format>, mut options: SourceOptions, progress: bool) -> Result<Dataset> {
    let bar = reading_bar(path, progress);
    if let Some(b) = bar.clone() {
        options.progress = Some(std::sync::Arc::new(move |p: ReadProgress| b.set_position(p.bytes)));
    }
    let start = std::time::Instant::now();
    let d = open(path, format, options).and_then(|s| Ok(s.read()?));
    if let Some(b) = bar {
        b.finish_and_clear();
        if let Ok(d) = &d {
            said_read(path, d.n_rows(), d.n_features(), start);
        }
    }
    d
}

/// Reads the training table straight into bins (CSV in parallel chunks, Parquet and Arrow one
/// column at a time; LIBSVM whole, then binned); `progress`: show the reading progress on a
/// terminal (the streaming readers' three passes over the file as one bar), then the table's size.
pub fn read_binned(
    path: &Path,
    format: Option<Format>,
    mut options: SourceOptions,
    max_bins: usize,
    progress: bool,
) -> Result<BinnedData> {
    let bar = reading_bar(path, progress);
    if let Some(b) = bar.clone() {
        b.set_length(b.length().unwrap_or(0) * 3);
        options.progress =
            Some(std::sync::Arc::new(move |p: ReadProgress| b.set_position(u64::from(p.pass - 1) * p.total + p.bytes)));
    }
    let start = std::time::Instant::now();
    let data = open(path, format, options).and_then(|s| Ok(s.read_binned(max_bins)?));
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let data = data?;
    if progress && std::io::stderr().is_terminal() {
        said_read(path, data.n_rows(), data.n_features(), start);
    }
    Ok(data)
}

/// How to read data for a trained model: its features (by name, of its kinds; a LIBSVM file at its
/// width) and its label columns, read when the file has them.
pub fn model_options(model: &Ensemble) -> SourceOptions {
    SourceOptions {
        label: selector(model.target_columns.as_deref()),
        label_optional: true,
        kinds: Some(model.schema.kinds_by_name()),
        n_features: Some(model.schema.names.len()),
        ..Default::default()
    }
}

/// The label selector stored in a model (see `Ensemble::target_columns`).
fn selector(spec: Option<&str>) -> LabelSelector {
    match spec {
        None => LabelSelector::None,
        Some(s) if s.ends_with('*') => LabelSelector::Prefix(s.trim_end_matches('*').to_string()),
        Some(s) if s.contains(',') => LabelSelector::Multi(s.split(',').map(|x| x.trim().to_string()).collect()),
        Some(s) => LabelSelector::Name(s.to_string()),
    }
}

/// The name of the last column of `path` (the default label column), when its format names columns.
pub fn last_column(path: &Path, format: Option<Format>) -> Option<String> {
    open(path, format, SourceOptions::default()).ok()?.column_names().ok()?.pop()
}

fn said_read(path: &Path, rows: usize, features: usize, start: std::time::Instant) {
    eprintln!(
        "read {rows} rows × {features} features from {} in {:.2} s",
        path.display(),
        start.elapsed().as_secs_f64()
    );
}

/// A progress bar of the bytes read from `path`, on standard error when it is a terminal
/// (reading a large file can take seconds). `None` otherwise.
fn reading_bar(path: &Path, show: bool) -> Option<indicatif::ProgressBar> {
    if !show || !std::io::stderr().is_terminal() {
        return None;
    }
    let len = std::fs::metadata(path).ok()?.len();
    let b = indicatif::ProgressBar::new(len);
    let style = indicatif::ProgressStyle::with_template(
        "reading {prefix} {bar:30} {bytes}/{total_bytes} [{elapsed_precise} < {eta_precise}]",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    b.set_style(style);
    b.set_prefix(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    b.set_position(0);
    Some(b)
}
