//! `boostlab predict` and `boostlab inspect`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use boostlab::data::{LabelSelector, Target};
use boostlab::model::{write_atomic, Task};
use boostlab::{Algorithm, Ensemble};
use clap::Args;

use crate::common::{load, Format};

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
}

/// Arguments of `boostlab inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
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

pub fn run(a: PredictArgs) -> Result<()> {
    let model = Ensemble::load(&a.model)?;
    let format = Format::of(&a.data, a.format);
    let data = load(
        &a.data,
        format,
        selector(model.target_columns.as_deref()),
        None,
        None,
        None,
        Some(model.schema.kinds_by_name()),
        Some(model.schema.names.len()),
    )
    .with_context(|| format!("reading {}", a.data.display()))?;
    if a.clipped && model.clip.is_none() {
        eprintln!("note: the model has no clipped variant (only t-AdaBoost with t < 1 has); using the linear model");
    }
    let scores = model.decision_function(&data.features, a.clipped)?;
    let k = model.n_outputs;
    let names = model.task.names().to_vec();
    let mut out = String::new();
    // Header.
    out.push_str("prediction");
    if k == 1 {
        out.push_str(",score");
    } else {
        for n in model.output_names() {
            let _ = write!(out, ",score_{n}");
        }
    }
    if a.proba {
        match &model.task {
            Task::Binary { classes } | Task::Multiclass { classes } => classes.iter().for_each(|c| {
                let _ = write!(out, ",proba_{c}");
            }),
            Task::Multilabel { labels } => labels.iter().for_each(|c| {
                let _ = write!(out, ",proba_{c}");
            }),
        }
    }
    out.push('\n');
    let pred_labels = model.predict_labels_from_scores(&scores);
    let proba = if a.proba { Some(model.proba_from_scores(&scores)) } else { None };
    let pw = names.len().max(1);
    for (i, label) in pred_labels.iter().enumerate() {
        out.push_str(label);
        for s in &scores[i * k..(i + 1) * k] {
            let _ = write!(out, ",{s}");
        }
        if let Some(p) = &proba {
            let w = if matches!(model.task, Task::Binary { .. }) { 2 } else { pw };
            for v in &p[i * w..(i + 1) * w] {
                let _ = write!(out, ",{v}");
            }
        }
        out.push('\n');
    }
    match &a.output {
        Some(p) => {
            let _lock = crate::signals::write_lock();
            write_atomic(p, out.as_bytes())?;
            println!("{} predictions written to {}", pred_labels.len(), p.display());
        }
        None => crate::common::stdout(&out)?,
    }
    // Accuracy when labels are present.
    let report = |msg: String| {
        if a.output.is_some() {
            println!("{msg}");
        } else {
            eprintln!("{msg}");
        }
    };
    match &data.target {
        Some(Target::Classes { y, classes }) => {
            let correct = pred_labels.iter().zip(y).filter(|(p, y)| **p == classes[**y as usize]).count();
            let n = y.len();
            report(format!(
                "accuracy {:.4} ({correct}/{n}), error {:.4}",
                correct as f64 / n as f64,
                1.0 - correct as f64 / n as f64
            ));
        }
        Some(Target::Multilabel { .. }) => {
            for (name, v) in model.metrics_from_scores(&data, &scores)? {
                report(format!("{name} {v:.4}"));
            }
        }
        None => {}
    }
    Ok(())
}

pub fn inspect(a: InspectArgs) -> Result<()> {
    let m = Ensemble::load(&a.model)?;
    let leaves: Vec<usize> = m.trees.iter().map(|t| t.n_leaves()).collect();
    let last = m.history.last();
    if a.json {
        let v = serde_json::json!({
            "format_version": m.format_version,
            "algorithm": m.params.algorithm.name(),
            "params": m.params,
            "param_sources": m.param_sources,
            "task": m.task,
            "n_features": m.schema.names.len(),
            "features": m.schema.names,
            "n_trees": m.n_trees(),
            "leaves_per_tree": leaves,
            "alphas": m.alphas,
            "clip": m.clip,
            "final_round": last,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("algorithm      {}", m.params.algorithm.name());
    println!("task           {}", serde_json::to_string(&m.task)?);
    println!("features       {} ({})", m.schema.names.len(), m.schema.names.join(", "));
    println!(
        "trees          {} (leaves: min {}, max {})",
        m.n_trees(),
        leaves.iter().min().unwrap_or(&0),
        leaves.iter().max().unwrap_or(&0)
    );
    println!("alpha sum      {:.6}", m.alphas.iter().sum::<f64>());
    if let Some(d) = m.clip {
        println!("clipped model  δ = {d}");
    }
    if let Some(r) = last {
        println!("last round     {}", serde_json::to_string(r)?);
    }
    if m.param_sources.is_empty() {
        println!("parameters     {}", serde_json::to_string(&m.params)?);
    } else {
        // Issue 17: every parameter's effective value and where it came from, for the tables that
        // apply to the model's algorithm.
        println!("parameters (value, source: default | preset | user)");
        let own = match m.params.algorithm {
            Algorithm::AdaBoost | Algorithm::RealAdaBoost | Algorithm::AbstainingAdaBoost => "adaboost.",
            Algorithm::TAdaBoost => "t_adaboost.",
            Algorithm::SecBoost => "secboost.",
            _ => "multiclass.",
        };
        let width = m.param_sources.keys().map(String::len).max().unwrap_or(0);
        for (path, e) in &m.param_sources {
            if path.contains('.') && !path.starts_with("tree.") && !path.starts_with(own) {
                continue;
            }
            let source = serde_json::to_value(e.source)?;
            println!("  {path:<width$}  {:<24} {}", e.value.to_string(), source.as_str().unwrap_or("?"));
        }
    }
    Ok(())
}
