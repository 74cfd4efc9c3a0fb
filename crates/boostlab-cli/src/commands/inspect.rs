//! `boostlab inspect`: a saved model's summary, parameters and feature importances.

use std::path::PathBuf;

use anyhow::Result;
use boostlab::{Algorithm, Ensemble};
use clap::Args;

/// Arguments of `boostlab inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
    /// Add the feature importances (split counts and gains, each normalised to sum 1).
    #[arg(long)]
    pub importance: bool,
}

/// The importance table of `inspect --importance`: (feature, split share, gain share, splits).
fn importance_rows(m: &Ensemble) -> Vec<(String, f64, f64, f64)> {
    use boostlab::explain::ImportanceKind;
    let split = m.feature_importance(ImportanceKind::Split);
    let gain = m.feature_importance(ImportanceKind::Gain);
    let count = m.feature_importance_raw(ImportanceKind::Split);
    let mut rows: Vec<_> =
        m.schema.names.iter().enumerate().map(|(f, name)| (name.clone(), split[f], gain[f], count[f])).collect();
    // By gain, then split share; ties keep the schema order.
    rows.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.1.total_cmp(&a.1)));
    rows
}

pub fn run(a: InspectArgs) -> Result<()> {
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
            "t_selection": m.t_selection,
            "label_threshold": m.label_threshold,
            "eval_metric": m.eval_metric,
            "best_iteration": m.best_iteration,
            "calibration": m.calibration,
        });
        let mut v = v;
        if a.importance {
            use boostlab::explain::ImportanceKind;
            v["importance"] = serde_json::json!({
                "features": m.schema.names,
                "split": m.feature_importance(ImportanceKind::Split),
                "gain": m.feature_importance(ImportanceKind::Gain),
                "split_count": m.feature_importance_raw(ImportanceKind::Split),
                "gain_total": m.feature_importance_raw(ImportanceKind::Gain),
            });
        }
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    outln!("algorithm      {}", m.params.algorithm.name());
    outln!("task           {}", serde_json::to_string(&m.task)?);
    outln!("features       {} ({})", m.schema.names.len(), m.schema.names.join(", "));
    outln!(
        "trees          {} (leaves: min {}, max {})",
        m.n_trees(),
        leaves.iter().min().unwrap_or(&0),
        leaves.iter().max().unwrap_or(&0)
    );
    outln!("alpha sum      {:.6}", m.alphas.iter().sum::<f64>());
    if let Some(d) = m.clip {
        outln!("clipped model  δ = {d}");
    }
    if let Some(r) = last {
        outln!("last round     {}", serde_json::to_string(r)?);
    }
    if let Some(b) = m.best_iteration {
        // Early stopping truncated the model to its best iteration (0-based).
        let metric = m.eval_metric.as_deref().unwrap_or("?");
        outln!("early stopping best iteration {b} (validation {metric}); the model keeps {} trees", m.n_trees());
    }
    if let Some(theta) = m.label_threshold {
        // docs/explanation/multiclass.md#multiclass-mr: the label sets of an MR model.
        outln!("label sets     {{ℓ : f(x, ℓ) > θ}}, θ = {theta} (learned on the training data)");
    }
    if let Some(link) = probability_link(&m) {
        outln!("probabilities  {link}");
    }
    if let Some(sel) = &m.t_selection {
        // T = auto's choice and the inner cross-validated error of every grid value.
        outln!("t = auto       chose t = {} by {}-fold inner cross-validation; inner error per t:", sel.t, sel.folds);
        for (t, s) in sel.grid.iter().zip(&sel.scores) {
            outln!("  t = {t:<5} {s:.6}{}", if *t == sel.t { "  ← chosen" } else { "" });
        }
    }
    if m.param_sources.is_empty() {
        outln!("parameters     {}", serde_json::to_string(&m.params)?);
    } else {
        // Every parameter's effective value and where it came from, for the tables that
        // apply to the model's algorithm.
        outln!("parameters (value, source: default | preset | user)");
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
            outln!("  {path:<width$}  {:<24} {}", e.value.to_string(), source.as_str().unwrap_or("?"));
        }
    }
    if a.importance {
        let rows = importance_rows(&m);
        let width = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(7).max(7);
        outln!("feature importance (shares sum to 1; gain = total criterion decrease)");
        outln!("  {:<width$}  {:>8}  {:>8}  {:>6}", "feature", "gain", "split", "splits");
        for (name, split, gain, count) in rows {
            outln!("  {name:<width$}  {gain:>8.4}  {split:>8.4}  {count:>6}");
        }
        if m.trees.iter().all(|t| t.gains.is_empty()) {
            outln!("  (a model from a version that did not record split gains: gain shares are 0)");
        }
    }
    Ok(())
}

/// How a binary model turns scores into probabilities, in words (docs/explanation/probabilities.md):
/// the calibrated scale, why it could not be fitted, or the papers' σ(2f); None for the other
/// models. `inspect` and `train` print it.
pub(crate) fn probability_link(m: &Ensemble) -> Option<String> {
    if !matches!(m.task, boostlab::model::Task::Binary { .. }) {
        return None;
    }
    Some(match &m.calibration {
        Some(c) => match &c.not_fitted {
            None => format!("σ(a·f) with a = {:.6}, fitted on {}-fold cross-fitted scores", c.scale, c.folds),
            Some(why) => format!("σ(2f), not calibrated: {why}"),
        },
        None => "σ(2f) (calibration none)".into(),
    })
}
