//! `boostlab demo`: the main job on an embedded dataset (red wine quality, binarised as
//! quality ≥ 6, the t-AdaBoost paper's "winered" domain), shipped inside the `linfa-datasets` crate.

use std::time::Instant;

use anyhow::Result;
use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::{Algorithm, BoostParams, Trainer};
use clap::Args;

/// Arguments of `boostlab demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Boosting rounds per model.
    #[arg(long, default_value_t = 200)]
    pub rounds: usize,
    /// Seed of the train/test split.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
}

/// The embedded red-wine data as a boostlab dataset (label: quality ≥ 6).
pub fn winered() -> Result<Dataset> {
    let ds = linfa_datasets::winequality();
    let (n, d) = (ds.records.nrows(), ds.records.ncols());
    let names: Vec<String> = ds.feature_names().iter().map(|s| s.replace(' ', "_")).collect();
    let columns = (0..d).map(|j| Column::Numeric((0..n).map(|i| ds.records[[i, j]]).collect())).collect();
    let y = (0..n).map(|i| u32::from(ds.targets[i] >= 6)).collect();
    Ok(Dataset::new(
        Features { names, columns },
        Some(Target::Classes { y, classes: vec!["quality<6".into(), "quality>=6".into()] }),
        None,
    )?)
}

pub fn run(a: DemoArgs) -> Result<()> {
    let data = winered()?;
    // A stratified 70/30 split (fold 0..2 of a 10-fold assignment is the test part).
    let folds = boostlab::eval::folds::stratified_fold_ids(&class_ids(&data), 10, a.seed)?;
    let (train_rows, test_rows): (Vec<usize>, Vec<usize>) = {
        let test: Vec<usize> = (0..data.n_rows()).filter(|&i| folds[i] < 3).collect();
        let train: Vec<usize> = (0..data.n_rows()).filter(|&i| folds[i] >= 3).collect();
        (train, test)
    };
    let (train, test) = (data.subset(&train_rows), data.subset(&test_rows));
    outln!(
        "boostlab demo — red wine quality ≥ 6 (embedded, {} rows × {} features): {} train / {} test rows, {} rounds",
        data.n_rows(),
        data.n_features(),
        train.n_rows(),
        test.n_rows(),
        a.rounds
    );
    let mut runs: Vec<(&str, BoostParams)> = Vec::new();
    let mut p = BoostParams { algorithm: Algorithm::AdaBoost, n_estimators: a.rounds, ..Default::default() };
    runs.push(("AdaBoost (stumps)", p.clone()));
    p.algorithm = Algorithm::RealAdaBoost;
    p.tree.max_leaves = 8;
    runs.push(("Real AdaBoost (8-leaf trees)", p.clone()));
    outln!("{:<34} {:>10} {:>10} {:>9}", "model", "train acc", "test acc", "seconds");
    for (name, params) in runs {
        let start = Instant::now();
        let m = Trainer::new(&params).fit(&train)?;
        let secs = start.elapsed().as_secs_f64();
        let tr = 1.0 - m.error_rate(&train, false)?;
        let te = 1.0 - m.error_rate(&test, false)?;
        outln!("{name:<34} {tr:>10.4} {te:>10.4} {secs:>9.3}");
    }
    Ok(())
}

fn class_ids(d: &Dataset) -> Vec<u32> {
    match &d.target {
        Some(Target::Classes { y, .. }) => y.clone(),
        _ => vec![0; d.n_rows()],
    }
}
