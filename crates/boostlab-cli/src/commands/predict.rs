//! `boostlab predict`: predictions (or contributions) of a saved model, streamed block by block.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use boostlab::data::source::TableSource;
use boostlab::data::{BlockLabels, Target};
use boostlab::model::Task;
use boostlab::{Dataset, Ensemble, Error, Features};
use clap::Args;

use crate::args::Format;

/// Arguments of `boostlab predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    /// Data to predict (same layout as the training file; the label column is optional).
    #[arg(long)]
    pub data: PathBuf,
    /// File format. By default from the extension.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Write predictions as CSV here (atomically). By default to standard output.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Use the clipped model (t-AdaBoost with t < 1).
    #[arg(long)]
    pub clipped: bool,
    /// Add probability columns.
    #[arg(long)]
    pub proba: bool,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
    /// Write exact TreeSHAP contributions instead of predictions: one column per
    /// feature and a bias column, per output (`FEATURE` and `bias`; `FEATURE@OUTPUT` and
    /// `bias@OUTPUT` for several outputs). Each row's sum is its score. Not for `--clipped`.
    #[arg(long, conflicts_with = "proba")]
    pub contrib: bool,
}

/// Rows per block of streamed prediction: memory does not grow with the file.
const BLOCK_ROWS: usize = 65_536;

/// Where predictions go: a temporary file renamed over `--output` at the end (so a failure
/// leaves no partial file), or standard output.
struct Sink {
    out: Box<dyn Write>,
    tmp: Option<(PathBuf, PathBuf)>,
}

impl Sink {
    fn open(path: Option<&Path>) -> Result<Sink> {
        let Some(p) = path else {
            return Ok(Sink { out: Box::new(std::io::BufWriter::new(std::io::stdout().lock())), tmp: None });
        };
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
        let tmp = dir.join(format!(".{name}.{}{}", std::process::id(), boostlab::model::TMP_SUFFIX));
        crate::signals::remove_on_exit(&tmp);
        let f = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        Ok(Sink { out: Box::new(std::io::BufWriter::with_capacity(1 << 20, f)), tmp: Some((tmp, p.to_path_buf())) })
    }

    fn finish(mut self) -> Result<()> {
        self.out.flush()?;
        drop(std::mem::replace(&mut self.out, Box::new(std::io::sink())));
        if let Some((tmp, dest)) = self.tmp.take() {
            let renamed = std::fs::rename(&tmp, &dest).with_context(|| format!("writing {}", dest.display()));
            if renamed.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            crate::signals::keep_on_exit(&tmp);
            renamed?;
        }
        Ok(())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if let Some((tmp, _)) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
            crate::signals::keep_on_exit(tmp);
        }
    }
}

/// The file to predict, read in blocks of the model's features (and its label columns, when the
/// file has them).
fn source(a: &PredictArgs, model: &Ensemble) -> Result<Box<dyn TableSource>> {
    crate::input::open(&a.data, a.format, crate::input::model_options(model))
}

pub fn run(a: PredictArgs) -> Result<()> {
    match predict(&a) {
        // `boostlab predict ... | head -1`: the reader has all it wanted; exit quietly.
        Err(e) if a.output.is_none() && is_broken_pipe(&e) => std::process::exit(0),
        r => r,
    }
}

/// True when `e` comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe))
}

fn predict(a: &PredictArgs) -> Result<()> {
    let model = Ensemble::load(&a.model)?;
    if a.clipped && model.clip.is_none() {
        eprintln!("note: the model has no clipped variant (only t-AdaBoost with t < 1 has); using the linear model");
    }
    if a.contrib {
        return contributions(a, &model);
    }
    let k = model.n_outputs;
    let mut header = String::from("prediction");
    if k == 1 {
        header.push_str(",score");
    } else {
        for n in model.output_names() {
            let _ = write!(header, ",score_{n}");
        }
    }
    if a.proba {
        let names = match &model.task {
            Task::Binary { classes } | Task::Multiclass { classes } => classes,
            Task::Multilabel { labels } => labels,
        };
        for c in names {
            let _ = write!(header, ",proba_{c}");
        }
    }
    header.push('\n');
    let mut sink = Sink::open(a.output.as_deref())?;
    sink.out.write_all(header.as_bytes())?;
    let pw = if matches!(model.task, Task::Binary { .. }) { 2 } else { model.task.names().len().max(1) };
    let (mut n, mut correct, mut any_single) = (0usize, 0usize, false);
    // Multi-label metrics need every row's scores and labels (n × k numbers, not the features).
    let (mut all_scores, mut all_y, mut multi) = (Vec::new(), Vec::new(), false);
    let mut line = String::new();
    let source = source(a, &model)?;
    for block in source.blocks(&model.schema, BLOCK_ROWS)? {
        // Interrupted (SIGINT/SIGTERM): stop between blocks; the sink's temporary file is removed.
        if crate::signals::cancelled() {
            return Err(Error::Cancelled.into());
        }
        let block = block.with_context(|| format!("reading {}", a.data.display()))?;
        let request = boostlab::Prediction::scores().clipped(a.clipped).cancel(crate::signals::cancel());
        let scores = model.predict(&block.features, &request)?;
        let pred_labels = model.predict_labels_from_scores(&scores);
        let proba = if a.proba { Some(model.proba_from_scores(&scores)) } else { None };
        for (i, label) in pred_labels.iter().enumerate() {
            line.clear();
            line.push_str(label);
            for s in &scores[i * k..(i + 1) * k] {
                let _ = write!(line, ",{s}");
            }
            if let Some(p) = &proba {
                for v in &p[i * pw..(i + 1) * pw] {
                    let _ = write!(line, ",{v}");
                }
            }
            line.push('\n');
            sink.out.write_all(line.as_bytes())?;
        }
        n += pred_labels.len();
        match block.labels {
            Some(BlockLabels::Single(y)) => {
                any_single = true;
                correct += pred_labels.iter().zip(&y).filter(|(p, y)| p == y).count();
            }
            Some(BlockLabels::Multi(y)) => {
                multi = true;
                all_scores.extend_from_slice(&scores);
                all_y.extend_from_slice(&y);
            }
            None => {}
        }
    }
    {
        // A signal waits for the rename (signals.rs): the output is whole or absent.
        let _lock = crate::signals::write_lock();
        if crate::signals::cancelled() {
            return Err(Error::Cancelled.into());
        }
        sink.finish()?;
    }
    if let Some(p) = &a.output {
        outln!("{n} predictions written to {}", p.display());
    }
    // Accuracy when labels are present.
    let report = |msg: String| {
        if a.output.is_some() {
            outln!("{msg}");
        } else {
            eprintln!("{msg}");
        }
    };
    if any_single && n > 0 {
        report(format!(
            "accuracy {:.4} ({correct}/{n}), error {:.4}",
            correct as f64 / n as f64,
            1.0 - correct as f64 / n as f64
        ));
    } else if multi {
        let labels = model.task.names().to_vec();
        let data = Dataset {
            features: Features { names: Vec::new(), columns: Vec::new() },
            target: Some(Target::Multilabel { y: all_y, labels }),
            sample_weight: None,
        };
        for (name, v) in model.metrics_from_scores(&data, &all_scores)? {
            report(format!("{name} {v:.4}"));
        }
    }
    Ok(())
}

/// `predict --contrib`: the contributions of every row, block by block.
fn contributions(a: &PredictArgs, model: &Ensemble) -> Result<()> {
    let (d, k) = (model.schema.names.len(), model.n_outputs);
    let outputs = model.output_names();
    let mut header = String::new();
    for output in outputs.iter().take(k) {
        for name in model.schema.names.iter().chain(std::iter::once(&"bias".to_string())) {
            let sep = if header.is_empty() { "" } else { "," };
            if k == 1 {
                let _ = write!(header, "{sep}{}", csv_field(name));
            } else {
                let _ = write!(header, "{sep}{}", csv_field(&format!("{name}@{output}")));
            }
        }
    }
    header.push('\n');
    let mut sink = Sink::open(a.output.as_deref())?;
    sink.out.write_all(header.as_bytes())?;
    let mut n = 0usize;
    let mut line = String::new();
    let source = source(a, model)?;
    for block in source.blocks(&model.schema, BLOCK_ROWS)? {
        if crate::signals::cancelled() {
            return Err(Error::Cancelled.into());
        }
        let block = block.with_context(|| format!("reading {}", a.data.display()))?;
        let request = boostlab::Prediction::new(boostlab::Output::Contributions)
            .clipped(a.clipped)
            .cancel(crate::signals::cancel());
        let phi = model.predict(&block.features, &request)?;
        for row in phi.chunks_exact((d + 1) * k) {
            line.clear();
            for o in 0..k {
                for j in 0..=d {
                    let sep = if o == 0 && j == 0 { "" } else { "," };
                    let _ = write!(line, "{sep}{}", row[j * k + o]);
                }
            }
            line.push('\n');
            sink.out.write_all(line.as_bytes())?;
        }
        n += block.features.n_rows();
    }
    {
        let _lock = crate::signals::write_lock();
        if crate::signals::cancelled() {
            return Err(Error::Cancelled.into());
        }
        sink.finish()?;
    }
    if let Some(p) = &a.output {
        outln!("{n} rows of contributions written to {}", p.display());
    }
    Ok(())
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
