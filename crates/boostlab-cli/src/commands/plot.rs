//! `boostlab plot`: learning curves, feature importances and margin distributions of a
//! saved model, as SVG. Presentation only: the numbers come from `boostlab::explain`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use boostlab::explain::{margin_cdf, ImportanceKind};
use boostlab::{Dataset, Ensemble};
use clap::{Args, ValueEnum};

use crate::args::Format;
use crate::svg::{bar_chart, line_chart, xy_chart, Series};

/// What `boostlab plot` draws.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlotKind {
    /// Training (and validation) curves from the model's history; with `--data`, the error on
    /// that file after each round too.
    LearningCurve,
    /// Feature importances (`--importance-type gain | split`).
    Importance,
    /// Cumulative distributions of the normalised margins y·f(x)/N on `--data` at `--rounds`.
    Margins,
}

/// Arguments of `boostlab plot`.
#[derive(Args, Debug)]
pub struct PlotArgs {
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
    /// What to draw.
    #[arg(value_enum)]
    pub kind: PlotKind,
    /// The model file.
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    /// Labelled data (required by `margins`; optional for `learning-curve`).
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// File format of `--data`. By default from the extension.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// The SVG file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Rounds whose margin distributions to draw, comma-separated (`10,50,200`). By default the
    /// last round, and a quarter and half of the way.
    #[arg(long, value_delimiter = ',')]
    pub rounds: Vec<usize>,
    /// Importance measure. By default `gain`.
    #[arg(long, default_value = "gain")]
    pub importance_type: String,
}

/// The training curve in a model's history: the first of `train_error`, `one_error`,
/// `hamming_loss`, `ranking_loss` that every record has.
pub fn training_curve(m: &Ensemble) -> Option<(String, Vec<f64>)> {
    ["train_error", "one_error", "hamming_loss", "ranking_loss"].iter().find_map(|key| {
        let v: Vec<f64> = m.history.iter().map(|r| r.values.get(*key).copied().unwrap_or(f64::NAN)).collect();
        v.iter().any(|x| x.is_finite()).then(|| (format!("train ({key})"), v))
    })
}

/// The validation curve in a model's history, if its records have one: the first diagnostic
/// whose name starts with `valid` (early stopping on held-out data writes it; a model without
/// one simply has no validation line). The one place that knows the record's key.
pub fn validation_curve(m: &Ensemble) -> Option<(String, Vec<f64>)> {
    let key = m.history.iter().flat_map(|r| r.values.keys()).find(|k| k.starts_with("valid"))?.clone();
    let v = m.history.iter().map(|r| r.values.get(&key).copied().unwrap_or(f64::NAN)).collect();
    Some((key, v))
}

fn load_data(a: &PlotArgs, path: &Path, m: &Ensemble) -> Result<Dataset> {
    let d = crate::input::read(path, a.format, crate::input::model_options(m), true)?;
    if d.target.is_none() {
        bail!("{}: no label column (the plot needs labelled data)", path.display());
    }
    Ok(d)
}

/// The default margin rounds: a quarter, half and all of the trees (distinct, ≥ 1).
fn default_rounds(t: usize) -> Vec<usize> {
    let mut r: Vec<usize> = [t.div_ceil(4), t.div_ceil(2), t].into_iter().filter(|&x| x >= 1).collect();
    r.dedup();
    r
}

pub fn run(a: PlotArgs) -> Result<()> {
    let m = Ensemble::load(&a.model)?;
    let name = a.model.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match a.kind {
        PlotKind::LearningCurve => {
            let mut series = Vec::new();
            if let Some((label, values)) = training_curve(&m) {
                series.push(Series { name: label, values, dashed: false });
            }
            if let Some((label, values)) = validation_curve(&m) {
                series.push(Series { name: label, values, dashed: true });
            }
            if let Some(p) = &a.data {
                let d = load_data(&a, p, &m)?;
                let mut v = Vec::with_capacity(m.n_trees());
                let mut err = None;
                m.for_each_stage(&d.features, false, |_, s| match m.metrics_from_scores(&d, s) {
                    Ok(x) => v.push(x.get("test_error").copied().unwrap_or(f64::NAN)),
                    Err(e) => err = Some(e),
                })?;
                if let Some(e) = err {
                    return Err(e.into());
                }
                let file = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                series.push(Series { name: format!("{file} (test_error)"), values: v, dashed: false });
            }
            if series.is_empty() {
                bail!("the model's history has no training curve; give --data to draw the error on a file");
            }
            line_chart(&a.out, &format!("learning curve: {name}"), "error", &series, false)?;
        }
        PlotKind::Importance => {
            let kind = ImportanceKind::parse(&a.importance_type)?;
            let v = m.feature_importance(kind);
            let mut bars: Vec<(String, f64)> = m.schema.names.iter().cloned().zip(v).collect();
            // Most important first; ties keep the schema order.
            bars.sort_by(|x, y| y.1.total_cmp(&x.1));
            bar_chart(&a.out, &format!("feature importance ({}): {name}", kind.name()), kind.name(), &bars)?;
        }
        PlotKind::Margins => {
            let Some(p) = &a.data else { bail!("`plot margins` needs --data (a labelled file)") };
            let d = load_data(&a, p, &m)?;
            let rounds = if a.rounds.is_empty() { default_rounds(m.n_trees()) } else { a.rounds.clone() };
            let margins = m.margins(&d, &rounds).context("margins")?;
            let curves: Vec<(String, Vec<(f64, f64)>)> =
                rounds.iter().zip(&margins).map(|(r, ms)| (format!("round {r}"), cdf_points(ms))).collect();
            xy_chart(
                &a.out,
                &format!("cumulative margin distribution: {name}"),
                "margin y·f(x)/N",
                "fraction of margins ≤ θ",
                &curves,
            )?;
        }
    }
    outln!("{} written", a.out.display());
    Ok(())
}

/// The empirical CDF of sorted margins as a step curve on [−1, 1]: one point before and after
/// each distinct margin.
pub fn cdf_points(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len().max(1) as f64;
    let mut pts = vec![(-1.0, 0.0)];
    let mut i = 0;
    while i < sorted.len() {
        let x = sorted[i];
        // Fractions strictly below x, then at most x: the vertical step of the CDF at x.
        let below = sorted.partition_point(|&m| m < x);
        let upto = sorted.partition_point(|&m| m <= x);
        pts.push((x, below as f64 / n));
        pts.push((x, upto as f64 / n));
        i = upto;
    }
    pts.push((1.0, margin_cdf(sorted, 1.0)));
    pts
}
