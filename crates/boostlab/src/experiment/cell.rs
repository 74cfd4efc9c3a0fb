//! One cell, end to end (docs/explanation/experiments.md#experiments): load the dataset, split the fold, flip training labels (test
//! folds stay clean), map the cell's parameter table onto [`BoostParams`](crate::BoostParams)
//! ([`super::params`]), boost, and evaluate every stage of the linear and (t-AdaBoost) clipped
//! models on the test fold and on the (noisy) training fold.
//!
//! [`CellRunner`] holds what cells share, so that a grid pays each fixed cost once:
//! every dataset is read once; every (dataset, fold, `max_bins`) is split and binned once and its
//! bins are shared by all the settings and noise rates of that fold — a cell only swaps in its own
//! (noisy) labels. Binning stays per fold on the fold's training rows, as before: the bin
//! boundaries are part of what a model sees, and binning the whole dataset once would let the
//! test rows move them (different thresholds, different numbers). The bins do not depend on the
//! labels, so sharing them across noise rates and settings changes nothing: the records are
//! bit-identical to fitting each cell from scratch (`cached_cells_equal_fresh_fits`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::params::boost_params;
use super::spec::{Cell, ExperimentSpec};
use super::storage::CellResult;
use crate::data::source::{self, SourceFormat, SourceOptions};
use crate::data::{BinnedData, Features, LabelSelector, Target};
use crate::error::{Error, Result};
use crate::eval::folds::train_test_indices;
use crate::eval::noise::{flip_binary_labels, flip_multiclass_labels};
use crate::{Dataset, Ensemble, Trainer};

/// Reads a dataset of an experiment: the format from the extension (LIBSVM for `.svm`,
/// `.libsvm`, `.svmlight`; Parquet for `.parquet`, `.pq` and Arrow IPC for `.arrow`, `.feather`,
/// `.ipc`, `.arrows` with the `arrow` feature; CSV otherwise), the label as the CLI's `--label`
/// (`A,B` or `PREFIX*` is multi-label; default the last column), and `max_rows` keeping the
/// FIRST rows of the file (e.g. creditcard's first 14599).
pub fn load_dataset(path: &Path, label: Option<&str>, max_rows: Option<usize>) -> Result<Dataset> {
    let selector = match label {
        None => LabelSelector::Last,
        Some(l) if l.ends_with('*') => LabelSelector::Prefix(l.trim_end_matches('*').to_string()),
        Some(l) if l.contains(',') => LabelSelector::Multi(l.split(',').map(|s| s.trim().to_string()).collect()),
        Some(l) => LabelSelector::Name(l.to_string()),
    };
    // An extension that names no format is read as CSV (`source::open` alone would refuse it).
    let format = SourceFormat::from_path(path).unwrap_or(SourceFormat::Csv);
    let options = SourceOptions { label: selector, max_rows, ..SourceOptions::default() };
    source::open(path, Some(format), options)?.read()
}

/// Stratification key of each row (class index, or the label set of multi-label data).
fn strata(d: &Dataset) -> Result<Vec<u64>> {
    Ok(match d.target()? {
        Target::Classes { y, .. } => y.iter().map(|&c| u64::from(c)).collect(),
        Target::Multilabel { y, labels } => y
            .chunks(labels.len().max(1))
            .map(|r| r.iter().fold(0u64, |h, &b| h.wrapping_mul(1_000_003).wrapping_add(u64::from(b))))
            .collect(),
    })
}

/// Flips the training labels with probability η (docs/explanation/experiments.md#experiments), in place. Returns how many flipped.
pub fn add_noise(target: &mut Target, eta: f64, seed: u64) -> Result<usize> {
    if eta == 0.0 {
        return Ok(0);
    }
    let Target::Classes { y, classes } = target else {
        return Err(Error::Failed("label noise is implemented for single-label data only".into()));
    };
    let rows: Vec<usize> = (0..y.len()).collect();
    let flipped = if classes.len() == 2 {
        let mut pm: Vec<f64> = y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect();
        let f = flip_binary_labels(&mut pm, &rows, eta, seed)?;
        for (c, v) in y.iter_mut().zip(&pm) {
            *c = u32::from(*v > 0.0);
        }
        f
    } else {
        flip_multiclass_labels(y, classes.len() as u32, &rows, eta, seed)?
    };
    Ok(flipped.len())
}

/// The error of one stage's scores against `target`: the fraction of misclassified rows for
/// single-label data, the Hamming loss for multi-label data — [`Ensemble::metrics_from_scores`]'s
/// `test_error`, without the multi-label report it computes besides for single-label
/// multi-class data.
fn stage_error(model: &Ensemble, target: &Target, scores: &[f64]) -> Result<f64> {
    match target {
        Target::Classes { y, classes } => {
            let names = model.task.names();
            let pred = model.classes_from_scores(scores);
            let wrong =
                pred.iter().zip(y).filter(|(p, y)| names.get(**p as usize) != classes.get(**y as usize)).count();
            Ok(wrong as f64 / y.len().max(1) as f64)
        }
        Target::Multilabel { .. } => {
            let empty = Features { names: Vec::new(), columns: Vec::new() };
            let labels_only = Dataset { features: empty, target: Some(target.clone()), sample_weight: None };
            let m = model.metrics_from_scores(&labels_only, scores)?;
            Ok(m.get("test_error").copied().unwrap_or(f64::NAN))
        }
    }
}

/// Error of every stage of `model` on rows `features` labelled `target` (clipped model if asked).
fn staged_errors(model: &Ensemble, features: &Features, target: &Target, clipped: bool) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(model.n_trees());
    let mut err = None;
    model.for_each_stage(features, clipped, |_, s| {
        if err.is_some() {
            return;
        }
        match stage_error(model, target, s) {
            Ok(e) => out.push(e),
            Err(e) => err = Some(e),
        }
    })?;
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// What identifies a loaded dataset: file, label column(s), row limit.
type DataKey = (PathBuf, Option<String>, Option<usize>);
/// What identifies a split and binned fold: the dataset, the fold assignment, the fold, `max_bins`.
type FoldKey = (DataKey, String, usize, usize);

/// A fold of a dataset, split and binned once for every cell that uses it.
struct FoldData {
    /// The training rows' features and clean labels (for the staged training error).
    train: Dataset,
    /// The test rows.
    test: Dataset,
    /// The training rows binned with a mapper learned on them (clean labels).
    binned: BinnedData,
}

/// A value computed once by whichever cell asks first; an error is kept as its message, so a bad
/// file is read and reported once.
type Shared<T> = Arc<OnceLock<std::result::Result<Arc<T>, String>>>;

fn shared<K: std::hash::Hash + Eq, T>(map: &Mutex<HashMap<K, Shared<T>>>, key: K) -> Result<Shared<T>> {
    let mut m = map.lock().map_err(|_| Error::Failed("experiment cache poisoned by a panic".into()))?;
    Ok(m.entry(key).or_default().clone())
}

/// Runs cells, sharing datasets and binned folds between them (see the module docs). One runner
/// serves one experiment run; it is `Sync`, so cells run in parallel on it.
#[derive(Default)]
pub struct CellRunner {
    data: Mutex<HashMap<DataKey, Shared<Dataset>>>,
    folds: Mutex<HashMap<FoldKey, Shared<FoldData>>>,
}

impl CellRunner {
    /// A runner with empty caches.
    pub fn new() -> Self {
        Self::default()
    }

    fn dataset(&self, cell: &Cell) -> Result<(DataKey, Arc<Dataset>)> {
        let d = &cell.dataset;
        let key: DataKey = (d.path.clone(), d.label.clone(), d.max_rows);
        let slot = shared(&self.data, key.clone())?;
        let data = slot.get_or_init(|| {
            load_dataset(&d.path, d.label.as_deref(), d.max_rows)
                .map(Arc::new)
                .map_err(|e| format!("dataset {}: {e}", d.name))
        });
        data.clone().map(|v| (key, v)).map_err(Error::Failed)
    }

    fn fold(&self, cell: &Cell, max_bins: usize) -> Result<Arc<FoldData>> {
        let (data_key, data) = self.dataset(cell)?;
        let key: FoldKey = (data_key, format!("{:?}", cell.folds), cell.fold, max_bins);
        let slot = shared(&self.folds, key)?;
        let fold = slot.get_or_init(|| {
            let split = || -> Result<FoldData> {
                let fold_ids = cell.fold_ids(&strata(&data)?)?;
                let (train_rows, test_rows) = train_test_indices(&fold_ids, cell.fold);
                let train = data.subset(&train_rows);
                let test = data.subset(&test_rows);
                // As `fit` does before binning (the labels are checked again per cell).
                train.check_trainable()?;
                let binned = BinnedData::from_dataset(&train, max_bins)?;
                Ok(FoldData { train, test, binned })
            };
            split().map(Arc::new).map_err(|e| format!("dataset {}, fold {}: {e}", cell.dataset.name, cell.fold))
        });
        fold.clone().map_err(Error::Failed)
    }

    /// Runs one cell: fold split, training-label noise, boosting, staged evaluation. Equal to
    /// fitting ([`Trainer::fit`]) on the cell's (noisy) training rows.
    pub fn run(&self, cell: &Cell) -> Result<CellResult> {
        let failed = |e: Error| match e {
            Error::Cancelled => Error::Cancelled,
            e => Error::Failed(format!("cell {}: {e}", cell.key)),
        };
        let params = boost_params(&cell.params, cell.seed).map_err(failed)?;
        let fold = self.fold(cell, params.max_bins)?;
        // docs/explanation/experiments.md#experiments: noise on the training fold only, seeded per (dataset, η, fold): shared by settings.
        let mut train_target = fold.train.target()?.clone();
        let flipped = add_noise(&mut train_target, cell.noise, cell.noise_seed)?;
        let mut binned = fold.binned.clone();
        binned.target = train_target;
        binned.check_trainable().map_err(failed)?;
        let model = Trainer::new(&params).active_wait(false).fit_binned(&binned).map_err(failed)?;

        let test_target = fold.test.target()?;
        let linear = staged_errors(&model, &fold.test.features, test_target, false)?;
        let clipped = if model.clip.is_some() {
            Some(staged_errors(&model, &fold.test.features, test_target, true)?)
        } else {
            None
        };
        let train_curve = cell.param_bool("train_curve")?.unwrap_or(true);
        let train_err =
            if train_curve { staged_errors(&model, &fold.train.features, &binned.target, false)? } else { Vec::new() };
        let primary_clipped = cell.param_bool("clipped")?.unwrap_or(false);
        let mut result = match (&clipped, primary_clipped) {
            (Some(c), true) => CellResult::from_curves(c.clone(), Some(linear), train_err),
            (None, true) => {
                return Err(Error::Failed(format!(
                    "cell {}: `clipped = true` but the model has no clipped version",
                    cell.key
                )))
            }
            _ => CellResult::from_curves(linear, clipped, train_err),
        };
        let n = model.history.len();
        for (r, rec) in model.history.iter().enumerate() {
            for (k, v) in &rec.values {
                result.diagnostics.entry(k.clone()).or_insert_with(|| vec![f64::NAN; n])[r] = *v;
            }
        }
        result.stop_reason = model.history.last().and_then(|r| r.stop_reason.clone());
        result.extra.insert("n_trees".into(), model.n_trees() as f64);
        result.extra.insert("n_train".into(), fold.train.n_rows() as f64);
        result.extra.insert("n_test".into(), fold.test.n_rows() as f64);
        result.extra.insert("flipped".into(), flipped as f64);
        if let Some(sel) = &model.t_selection {
            // T = auto's choice and the inner error of every grid value.
            result.extra.insert("chosen_t".into(), sel.t);
            for (t, e) in sel.grid.iter().zip(&sel.scores) {
                result.extra.insert(format!("inner_error_t={t}"), *e);
            }
        }
        Ok(result)
    }
}

/// Checks every (dataset, setting) pair's parameters once, before any cell runs, so that a bad
/// parameter is one clear error rather than one failure per fold.
pub fn check_settings(spec: &ExperimentSpec) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    // (setting, message, datasets): one entry per distinct error of a setting.
    let mut errors: Vec<(String, String, Vec<String>)> = Vec::new();
    for cell in spec.cells()? {
        if seen.insert((cell.dataset.name.clone(), cell.setting.clone())) {
            if let Err(e) = boost_params(&cell.params, cell.seed) {
                let msg = e.to_string();
                match errors.iter_mut().find(|(s, m, _)| *s == cell.setting && *m == msg) {
                    Some(entry) => entry.2.push(cell.dataset.name.clone()),
                    None => errors.push((cell.setting.clone(), msg, vec![cell.dataset.name.clone()])),
                }
            }
        }
    }
    if !errors.is_empty() {
        let lines: Vec<String> = errors
            .iter()
            .map(|(s, m, d)| match d.as_slice() {
                [one] => format!("setting `{s}` on dataset `{one}`: {m}"),
                many => format!("setting `{s}` on datasets `{}`: {m}", many.join("`, `")),
            })
            .collect();
        return Err(Error::Failed(format!("invalid experiment {}: {}", spec.name, lines.join("; "))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::storage::CellRecord;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Binary (`b.csv`) and 3-class (`m.csv`) data with a numeric, a low-cardinality and a noisy
    /// feature, and some missing values.
    fn write_data(dir: &Path) {
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let mut b = String::from("x1,x2,x3,y\n");
        let mut m = String::from("x1,x2,x3,y\n");
        for i in 0..90 {
            let x1: f64 = rng.gen_range(-2.0..2.0);
            let x2 = (i % 5) as f64;
            let x3: f64 = rng.gen();
            let x1s = if i % 17 == 3 { String::new() } else { format!("{x1:.3}") };
            let yb = u8::from(x1 + 0.3 * x2 + rng.gen_range(-1.0..1.0) > 0.6);
            let ym = ["a", "b", "c"][((x1 + 2.0) * 0.75 + 0.3 * x3) as usize % 3];
            b.push_str(&format!("{x1s},{x2},{x3:.4},{yb}\n"));
            m.push_str(&format!("{x1s},{x2},{x3:.4},{ym}\n"));
        }
        std::fs::write(dir.join("b.csv"), b).expect("write");
        std::fs::write(dir.join("m.csv"), m).expect("write");
    }

    const SPEC: &str = r#"
name = "cached"
seed = 5
folds = 3
noise = [0.0, 0.2]
[params]
rounds = 6
[[datasets]]
name = "b"
path = "b.csv"
[[datasets]]
name = "m"
path = "m.csv"
params = { algo = "real-adaboost-mh", max_leaves = 3 }
[[settings]]
name = "tada"
algo = "t-adaboost"
max_nodes = 5
grid = { t = [0.4, 1.0] }
[[settings]]
name = "real"
algo = "real-adaboost"
max_leaves = 4
max_bins = 8
"#;

    /// The naive twin of [`CellRunner::run`]: the naive cell runner — read the
    /// dataset, split it, flip the training labels of a copy, fit it ([`Trainer::fit`], binning it
    /// again), and evaluate each stage with [`Ensemble::metrics_from_scores`].
    fn naive_cell(cell: &Cell) -> Result<CellResult> {
        let data = load_dataset(&cell.dataset.path, cell.dataset.label.as_deref(), cell.dataset.max_rows)?;
        let fold_ids = cell.fold_ids(&strata(&data)?)?;
        let (train_rows, test_rows) = train_test_indices(&fold_ids, cell.fold);
        let mut train = data.subset(&train_rows);
        let test = data.subset(&test_rows);
        let flipped = match train.target.as_mut() {
            Some(t) => add_noise(t, cell.noise, cell.noise_seed)?,
            None => 0,
        };
        let params = boost_params(&cell.params, cell.seed)?;
        let model = Trainer::new(&params).active_wait(false).fit(&train)?;
        let staged = |d: &Dataset, clipped: bool| -> Vec<f64> {
            let mut out = Vec::new();
            model
                .for_each_stage(&d.features, clipped, |_, s| {
                    out.push(model.metrics_from_scores(d, s).expect("metrics")["test_error"]);
                })
                .expect("stages");
            out
        };
        let clipped = model.clip.is_some().then(|| staged(&test, true));
        let mut r = CellResult::from_curves(staged(&test, false), clipped, staged(&train, false));
        let n = model.history.len();
        for (i, rec) in model.history.iter().enumerate() {
            for (k, v) in &rec.values {
                r.diagnostics.entry(k.clone()).or_insert_with(|| vec![f64::NAN; n])[i] = *v;
            }
        }
        r.stop_reason = model.history.last().and_then(|h| h.stop_reason.clone());
        for (k, v) in
            [("n_trees", model.n_trees()), ("n_train", train.n_rows()), ("n_test", test.n_rows()), ("flipped", flipped)]
        {
            r.extra.insert(k.into(), v as f64);
        }
        Ok(r)
    }

    fn json(r: &CellRecord) -> String {
        serde_json::to_string(r).expect("json")
    }

    #[test]
    fn cached_cells_equal_fresh_fits() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_data(dir.path());
        let mut spec = ExperimentSpec::from_toml_str(SPEC).expect("valid");
        spec.base_dir = Some(dir.path().to_path_buf());
        let cells = spec.cells().expect("cells");
        assert_eq!(cells.len(), 2 * 3 * 2 * 3);
        let runner = CellRunner::new();
        // Run in reverse so that the caches are filled by a cell other than the first.
        let mut flipped_any = false;
        for cell in cells.iter().rev() {
            let got = cell.record(runner.run(cell).expect("cell"));
            let want = cell.record(naive_cell(cell).expect("naive"));
            assert_eq!(json(&got), json(&want), "cell {}", cell.key);
            assert_eq!(got.result.test_error.len(), 6, "{}", cell.key);
            flipped_any |= got.result.extra["flipped"] > 0.0;
        }
        assert!(flipped_any, "the noisy cells flip labels");
        // One split per (dataset, fold, max_bins): b has two max_bins values, m one (the dataset's
        // params override the settings' algorithms, not max_bins).
        assert_eq!(runner.folds.lock().expect("lock").len(), 2 * 3 + 2 * 3);
        assert_eq!(runner.data.lock().expect("lock").len(), 2);
    }

    #[test]
    fn a_missing_dataset_fails_its_cells_with_its_name() {
        let spec = ExperimentSpec::from_toml_str(SPEC).expect("valid");
        let cells = spec.cells().expect("cells");
        let runner = CellRunner::new();
        let e = runner.run(&cells[0]).expect_err("no file").to_string();
        assert!(e.contains("dataset b") && e.contains("b.csv"), "{e}");
    }
}
