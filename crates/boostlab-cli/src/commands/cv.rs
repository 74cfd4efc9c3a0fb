//! `boostlab cv`: stratified k-fold cross-validation.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use boostlab::data::{Dataset, Target};
use boostlab::eval::folds::{fold_ids_from_file, n_folds, stratified_fold_ids, train_test_indices};
use boostlab::eval::stats::{mean, sample_std};
use boostlab::Trainer;
use clap::Args;
use rayon::prelude::*;

use crate::args::{BoostArgs, DataArgs};

/// Arguments of `boostlab cv`.
#[derive(Args, Debug)]
pub struct CvArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub boost: BoostArgs,
    /// Number of folds (stratified by class, seeded by --seed).
    #[arg(long, default_value_t = 10)]
    pub folds: usize,
    /// File with one integer fold id per data row (instead of the seeded stratified assignment).
    #[arg(long)]
    pub fold_file: Option<std::path::PathBuf>,
    /// Print JSON: `folds` (each fold's metrics) and `mean_<metric>`, `std_<metric>`.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
}

/// Stratification key of each row: the class, or the label set of multi-label data.
pub fn strata(d: &Dataset) -> Vec<String> {
    match &d.target {
        Some(Target::Classes { y, .. }) => y.iter().map(|c| c.to_string()).collect(),
        Some(Target::Multilabel { y, labels }) => {
            y.chunks(labels.len()).map(|r| r.iter().map(|v| char::from(b'0' + v)).collect()).collect()
        }
        None => vec![String::new(); d.n_rows()],
    }
}

/// Cross-validates and returns each fold's metrics, in fold order. The folds run in parallel
/// (a 10-fold cv of small data would otherwise be one core's serial loop); each fold's fit is the same
/// deterministic function of its rows whatever the thread count, so the numbers do not change.
pub fn cross_validate(
    data: &Dataset,
    params: &boostlab::BoostParams,
    fold_ids: &[usize],
) -> Result<Vec<BTreeMap<String, f64>>> {
    let k = n_folds(fold_ids);
    (0..k).into_par_iter().with_max_len(1).map(|fold| one_fold(data, params, fold_ids, fold)).collect()
}

fn one_fold(
    data: &Dataset,
    params: &boostlab::BoostParams,
    fold_ids: &[usize],
    fold: usize,
) -> Result<BTreeMap<String, f64>> {
    let (train, test) = train_test_indices(fold_ids, fold);
    let (tr, te) = (data.subset(&train), data.subset(&test));
    let model =
        Trainer::new(params).cancel(crate::signals::cancel()).fit(&tr).with_context(|| format!("fold {fold}"))?;
    let mut m = model.evaluate(&te, false)?;
    if model.clip.is_some() {
        let c = model.evaluate(&te, true)?;
        m.insert("test_error_clipped".into(), c["test_error"]);
    }
    m.insert("train_error".into(), model.evaluate(&tr, false)?["test_error"]);
    m.insert("n_trees".into(), model.n_trees() as f64);
    Ok(m)
}

pub fn run(a: CvArgs) -> Result<()> {
    let params = a.boost.params()?;
    let data = a.data.load(params.max_bins)?;
    let fold_ids = match &a.fold_file {
        Some(f) => fold_ids_from_file(f, data.n_rows())?,
        None => stratified_fold_ids(&strata(&data), a.folds, a.boost.seed())?,
    };
    let folds = cross_validate(&data, &params, &fold_ids)?;
    let mut summary = serde_json::Map::new();
    let keys: Vec<String> = folds[0].keys().cloned().collect();
    for key in &keys {
        let v: Vec<f64> = folds.iter().filter_map(|f| f.get(key).copied()).collect();
        summary.insert(format!("mean_{key}"), serde_json::json!(mean(&v)));
        summary.insert(format!("std_{key}"), serde_json::json!(sample_std(&v)));
    }
    if a.json {
        let mut obj = serde_json::Map::new();
        obj.insert("algorithm".into(), serde_json::json!(params.algorithm.name()));
        obj.insert("n_folds".into(), serde_json::json!(folds.len()));
        obj.insert(
            "folds".into(),
            serde_json::Value::Array(
                folds
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let mut o = serde_json::json!(f);
                        o["fold"] = serde_json::json!(i);
                        o
                    })
                    .collect(),
            ),
        );
        obj.extend(summary);
        outln!("{}", serde_json::to_string_pretty(&obj)?);
        return Ok(());
    }
    let shown: Vec<&String> = keys.iter().filter(|k| k.as_str() != "accuracy").collect();
    out!("{:>5}", "fold");
    for k in &shown {
        out!(" {k:>18}");
    }
    outln!();
    for (i, f) in folds.iter().enumerate() {
        out!("{i:>5}");
        for k in &shown {
            out!(" {:>18.4}", f[*k]);
        }
        outln!();
    }
    for k in &shown {
        outln!(
            "{k:<20} {:.4} ± {:.4}",
            summary[&format!("mean_{k}")].as_f64().unwrap_or(f64::NAN),
            summary[&format!("std_{k}")].as_f64().unwrap_or(f64::NAN)
        );
    }
    Ok(())
}
