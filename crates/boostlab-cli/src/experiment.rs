//! `boostlab experiment SPEC.toml`: run an experiment grid (SPEC §7) with the library's harness
//! ([`boostlab::eval::experiment`]), recording one JSON record per finished cell.
//!
//! This file is the glue that turns a [`Cell`] into a [`CellResult`]: load the dataset (cached,
//! shared by all cells), split the fold, flip training labels (test folds stay clean), map the
//! cell's parameter table onto [`BoostParams`], boost, and evaluate every stage of the linear and
//! (t-AdaBoost) clipped models on the test fold and on the (noisy) training fold.
//!
//! # Cell parameters
//!
//! A cell's merged parameter table deserialises into [`BoostParams`] through serde: the nested
//! tables `tree`, `adaboost`, `t_adaboost`, `secboost`, `multiclass` and the top-level fields
//! (`algorithm`, `n_estimators`, `max_bins`, `seed`) are written exactly as in a model file, and
//! the flat aliases of [`ALIASES`] (`algo`, `rounds`, `t`, `max_nodes`, `loss`, `delta_init`, ...)
//! are moved into their sub-table first. The only keys that are not training parameters:
//! `clipped` (record the clipped model of t-AdaBoost as the cell's primary `test_error`; both
//! models are always recorded) and `train_curve` (false skips the per-round training error).

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use boostlab::data::Target;
use boostlab::eval::experiment::{run_experiment, Cell, CellResult, ExperimentSpec};
use boostlab::eval::folds::train_test_indices;
use boostlab::eval::noise::{flip_binary_labels, flip_multiclass_labels};
use boostlab::{fit, BoostParams, Dataset, Ensemble};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{Map, Value};

use crate::common::{parse_criterion, DataArgs};

/// Arguments of `boostlab experiment`.
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// The experiment spec (TOML; see the `boostlab::eval::experiment` docs and `experiments/`).
    pub spec: PathBuf,
    /// Results directory. By default `results/<spec name>` beside the current directory.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads (cells run in parallel). 0 = one per logical CPU.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Testing aid: exit abruptly (status 3) once this many cells have been recorded by this run,
    /// as if killed.
    #[arg(long, hide = true)]
    pub stop_after: Option<usize>,
}

/// Flat aliases accepted in a cell's parameter table: `(alias, sub-table, field)`; an empty
/// sub-table means a top-level field of [`BoostParams`].
pub const ALIASES: &[(&str, &str, &str)] = &[
    ("algo", "", "algorithm"),
    ("algorithm", "", "algorithm"),
    ("rounds", "", "n_estimators"),
    ("n_estimators", "", "n_estimators"),
    ("max_bins", "", "max_bins"),
    ("seed", "", "seed"),
    ("max_leaves", "tree", "max_leaves"),
    ("max_nodes", "tree", "max_nodes"),
    ("max_depth", "tree", "max_depth"),
    ("min_leaf_weight", "tree", "min_leaf_weight"),
    ("grow_order", "tree", "grow_order"),
    ("criterion", "tree", "criterion"),
    ("pure_leaves", "tree", "pure_leaves"),
    ("max_split_candidates", "tree", "max_split_candidates"),
    ("alpha", "adaboost", "alpha"),
    ("smoothing", "adaboost", "smoothing"),
    ("t", "t_adaboost", "t"),
    ("t_grid", "t_adaboost", "auto_t"),
    ("t_folds", "t_adaboost", "auto_t"),
    ("t_schedule", "t_adaboost", "t_schedule"),
    ("leaf_values", "t_adaboost", "leaf_values"),
    ("learner_weights", "t_adaboost", "learner_weights"),
    ("overflow", "t_adaboost", "overflow"),
    ("authors_mode", "t_adaboost", "authors_mode"),
    ("preset", "", "preset"),
    ("split_ties", "tree", "split_ties"),
    ("loss", "secboost", "loss"),
    ("delta_init", "secboost", "delta_init"),
    ("h0", "secboost", "h0"),
    ("v0", "secboost", "v0"),
    ("secboost_alpha", "secboost", "alpha_rule"),
    ("alpha_rule", "secboost", "alpha_rule"),
    ("epsilon", "secboost", "epsilon"),
    ("oracle", "secboost", "oracle"),
    ("solve_alpha", "secboost", "solve_alpha"),
    ("kappa", "secboost", "kappa"),
    ("oracle_precision", "secboost", "oracle_precision"),
    ("eps", "multiclass", "eps"),
    ("code", "multiclass", "code"),
    ("decode", "multiclass", "decode"),
    ("single_label_start", "multiclass", "single_label_start"),
    ("label_threshold", "multiclass", "label_threshold"),
];

const SUB_TABLES: &[&str] = &["tree", "adaboost", "t_adaboost", "secboost", "multiclass"];

/// Keys of a cell's table that steer the cell runner rather than the booster.
const RUNNER_KEYS: &[&str] = &["clipped", "train_curve"];

fn set_unique(obj: &mut Map<String, Value>, field: &str, v: Value, from: &str) -> Result<()> {
    if obj.contains_key(field) {
        bail!("parameter `{from}` sets `{field}`, which another key of the same cell already sets");
    }
    obj.insert(field.to_string(), v);
    Ok(())
}

/// Checks that every key of `given` is a field of `known` (serde's `default` structs ignore
/// unknown fields, so a typo would otherwise pass silently).
fn check_known(given: &Map<String, Value>, known: &Value, path: &str) -> Result<()> {
    let Some(known) = known.as_object() else { return Ok(()) };
    for (k, v) in given {
        match known.get(k) {
            None => {
                let mut names: Vec<&String> = known.keys().collect();
                names.sort();
                bail!(
                    "unknown parameter `{path}{k}` (known: {})",
                    names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                )
            }
            Some(kv) if SUB_TABLES.contains(&k.as_str()) && path.is_empty() => {
                if let Some(g) = v.as_object() {
                    check_known(g, kv, &format!("{k}."))?;
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Maps a cell's merged parameter table onto [`BoostParams`] (see the module docs). `seed` is
/// used for `seed` and `secboost.seed` unless the table sets them. The result is checked.
pub fn boost_params(table: &toml::Table, seed: u64) -> Result<BoostParams> {
    let mut top = Map::new();
    let mut subs: HashMap<&str, Map<String, Value>> = HashMap::new();
    for (key, value) in table {
        if RUNNER_KEYS.contains(&key.as_str()) {
            continue;
        }
        let mut v = serde_json::to_value(value).with_context(|| format!("parameter `{key}`"))?;
        if let Some(sub) = SUB_TABLES.iter().find(|s| **s == key) {
            let Value::Object(obj) = v else { bail!("parameter `{key}` must be a table") };
            let dst = subs.entry(sub).or_default();
            for (k, v) in obj {
                set_unique(dst, &k, v, &format!("{key}.{k}"))?;
            }
            continue;
        }
        let Some(&(_, sub, field)) = ALIASES.iter().find(|a| a.0 == key) else {
            let names: Vec<&str> = ALIASES.iter().map(|a| a.0).chain(SUB_TABLES.iter().copied()).collect();
            bail!("unknown parameter `{key}` (known: {}, clipped, train_curve)", names.join(", "));
        };
        if key == "t" && v.as_str() == Some("auto") {
            // Issue 16: `t = "auto"` (with optional `t_grid`, `t_folds`) is t-AdaBoost's auto_t.
            let grid = table.get("t_grid").map(serde_json::to_value).transpose()?;
            let folds = table.get("t_folds").map(serde_json::to_value).transpose()?;
            let mut a = serde_json::to_value(boostlab::boost::auto_t::AutoT::default())?;
            if let Some(g) = grid {
                a["grid"] = g;
            }
            if let Some(k) = folds {
                a["folds"] = k;
            }
            set_unique(subs.entry("t_adaboost").or_default(), "auto_t", a, key)?;
            continue;
        }
        if key == "t_grid" || key == "t_folds" {
            if table.get("t").and_then(|t| t.as_str()) != Some("auto") {
                bail!("parameter `{key}` goes with t = \"auto\"");
            }
            continue;
        }
        if field == "criterion" {
            if let Some(s) = v.as_str() {
                v = serde_json::to_value(parse_criterion(s)?)?;
            }
        }
        if key == "smoothing" {
            // As the CLI's --smoothing: Real AdaBoost's ε and real AdaBoost.MH/MO's ε.
            set_unique(subs.entry("multiclass").or_default(), "eps", v.clone(), key)?;
        }
        if sub.is_empty() {
            set_unique(&mut top, field, v, key)?;
        } else {
            set_unique(subs.entry(sub).or_default(), field, v, key)?;
        }
    }
    top.entry("seed").or_insert_with(|| Value::from(seed));
    let sb = subs.entry("secboost").or_default();
    if !sb.contains_key("seed") {
        sb.insert("seed".into(), top["seed"].clone());
    }
    for (k, v) in subs {
        top.insert(k.to_string(), Value::Object(v));
    }
    let mut known = serde_json::to_value(BoostParams::default())?;
    if let Some(Value::Object(ta)) = known.get_mut("t_adaboost") {
        // The older spelling of `preset = "authors"` (BoostParams::from_json maps it).
        ta.insert("authors_mode".into(), Value::Bool(false));
        // Issue 16: `t = "auto"` (omitted from the default's serialisation).
        ta.insert("auto_t".into(), Value::Null);
        ta.insert("t_schedule".into(), Value::Null);
    }
    if let Some(Value::Object(mc)) = known.get_mut("multiclass") {
        // Issue 16: MR's label-set threshold (omitted at its default `auto`).
        mc.insert("label_threshold".into(), Value::Null);
    }
    check_known(&top, &known, "")?;
    // Presets first, then the cell's own values over them (issue 17).
    let (p, _) = BoostParams::from_json(&Value::Object(top)).context("invalid parameters")?;
    p.check()?;
    Ok(p)
}

/// What identifies a loaded dataset: file, label column(s), row limit.
type DataKey = (PathBuf, Option<String>, Option<usize>);

/// Datasets loaded once and shared by every cell.
#[derive(Default)]
pub struct DataCache {
    /// A dataset, or the message of its loading error (so a bad file is read and reported once).
    map: Mutex<HashMap<DataKey, std::result::Result<Arc<Dataset>, String>>>,
}

impl DataCache {
    fn get(&self, cell: &Cell) -> Result<Arc<Dataset>> {
        let d = &cell.dataset;
        let key = (d.path.clone(), d.label.clone(), d.max_rows);
        if let Some(v) = self.map.lock().map_err(|_| anyhow::anyhow!("cache poisoned"))?.get(&key) {
            return v.clone().map_err(anyhow::Error::msg);
        }
        // Same label syntax as the CLI's --label / --labels: `A,B` or `PREFIX*` is multi-label.
        let multi = d.label.as_deref().filter(|l| l.contains(',') || l.ends_with('*'));
        let args = DataArgs {
            data: d.path.clone(),
            format: None,
            label: if multi.is_some() { None } else { d.label.clone() },
            labels: multi.map(str::to_string),
            positive: None,
            weight: None,
            // `max_rows` keeps the FIRST rows of the file (e.g. creditcard's first 14599).
            max_rows: d.max_rows,
        };
        let data = args.load().map(Arc::new).map_err(|e| format!("dataset {}: {}", d.name, crate::common::message(&e)));
        if let Ok(mut m) = self.map.lock() {
            m.insert(key, data.clone());
        }
        data.map_err(anyhow::Error::msg)
    }
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

/// Flips the training labels with probability η (SPEC §7), in place. Returns how many flipped.
fn add_noise(train: &mut Dataset, eta: f64, seed: u64) -> Result<usize> {
    if eta == 0.0 {
        return Ok(0);
    }
    let Some(Target::Classes { y, classes }) = train.target.as_mut() else {
        bail!("label noise is implemented for single-label data only");
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

/// Error of every stage of `model` on `data` (clipped model if asked).
fn staged_errors(model: &Ensemble, data: &Dataset, clipped: bool) -> Result<Vec<f64>> {
    let mut out = Vec::with_capacity(model.n_trees());
    let mut err = None;
    model.for_each_stage(&data.features, clipped, |_, s| {
        if err.is_some() {
            return;
        }
        match model.metrics_from_scores(data, s) {
            Ok(m) => out.push(m.get("test_error").copied().unwrap_or(f64::NAN)),
            Err(e) => err = Some(e),
        }
    })?;
    if let Some(e) = err {
        return Err(e.into());
    }
    Ok(out)
}

/// Runs one cell: fold split, training-label noise, boosting, staged evaluation.
pub fn run_cell(cell: &Cell, cache: &DataCache) -> Result<CellResult> {
    let data = cache.get(cell)?;
    let fold_ids = cell.fold_ids(&strata(&data)?)?;
    let (train_rows, test_rows) = train_test_indices(&fold_ids, cell.fold);
    let mut train = data.subset(&train_rows);
    let test = data.subset(&test_rows);
    // SPEC §7: noise on the training fold only, seeded per (dataset, η, fold): shared by settings.
    let flipped = add_noise(&mut train, cell.noise, cell.noise_seed)?;
    let params = boost_params(&cell.params, cell.seed).with_context(|| format!("cell {}", cell.key))?;
    let model = fit(&train, &params).with_context(|| format!("cell {}", cell.key))?;

    let linear = staged_errors(&model, &test, false)?;
    let clipped = if model.clip.is_some() { Some(staged_errors(&model, &test, true)?) } else { None };
    let train_curve = cell.param_bool("train_curve")?.unwrap_or(true);
    let train_err = if train_curve { staged_errors(&model, &train, false)? } else { Vec::new() };
    let primary_clipped = cell.param_bool("clipped")?.unwrap_or(false);
    let mut result = match (&clipped, primary_clipped) {
        (Some(c), true) => CellResult::from_curves(c.clone(), Some(linear), train_err),
        (None, true) => bail!("cell {}: `clipped = true` but the model has no clipped version", cell.key),
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
    result.extra.insert("n_train".into(), train.n_rows() as f64);
    result.extra.insert("n_test".into(), test.n_rows() as f64);
    result.extra.insert("flipped".into(), flipped as f64);
    if let Some(sel) = &model.t_selection {
        // Issue 16: t = auto's choice and the inner error of every grid value.
        result.extra.insert("chosen_t".into(), sel.t);
        for (t, e) in sel.grid.iter().zip(&sel.scores) {
            result.extra.insert(format!("inner_error_t={t}"), *e);
        }
    }
    Ok(result)
}

/// Checks every (dataset, setting) pair's parameters once, before any cell runs, so that a bad
/// parameter is one clear error rather than one failure per fold (issue 14).
fn check_settings(spec: &ExperimentSpec) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    // (setting, message, datasets): one entry per distinct error of a setting.
    let mut errors: Vec<(String, String, Vec<String>)> = Vec::new();
    for cell in spec.cells()? {
        if seen.insert((cell.dataset.name.clone(), cell.setting.clone())) {
            if let Err(e) = boost_params(&cell.params, cell.seed) {
                let msg = crate::common::message(&e);
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
        bail!("invalid experiment {}: {}", spec.name, lines.join("; "));
    }
    Ok(())
}

/// `boostlab experiment`.
pub fn run(a: ExperimentArgs) -> Result<()> {
    let spec = ExperimentSpec::from_file(&a.spec)?;
    let out = a.out.clone().unwrap_or_else(|| Path::new("results").join(&spec.name));
    let total_cells = spec.cells()?.len();
    let threads = if a.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { a.threads };
    let tty = std::io::stderr().is_terminal() && !a.quiet;
    let bar = ProgressBar::with_draw_target(
        Some(total_cells as u64),
        if tty { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} cells, ETA {eta_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    if !a.quiet {
        eprintln!("{}: {total_cells} cells, {threads} threads → {}", spec.name, out.display());
    }
    check_settings(&spec)?;
    let cache = DataCache::default();
    let cancel = crate::signals::cancel();
    let start = Instant::now();
    let calls = AtomicUsize::new(0);
    let first = AtomicUsize::new(usize::MAX);
    let last_line = AtomicUsize::new(0);
    let summary = run_experiment(
        &spec,
        &out,
        threads,
        |c| {
            cancel.check()?; // interrupted: the remaining cells are left for the next run
            run_cell(c, &cache).map_err(|e| match e.downcast_ref::<boostlab::Error>() {
                Some(boostlab::Error::Cancelled) => boostlab::Error::Cancelled,
                _ => boostlab::Error::Failed(crate::common::message(&e)),
            })
        },
        |done, total| {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            if call == 0 {
                first.store(done, Ordering::SeqCst);
                bar.set_position(done as u64);
                bar.reset_eta();
                return;
            }
            bar.set_position(done as u64);
            if !tty && !a.quiet {
                // One line per 10% when stderr is not a terminal.
                let decile = done * 10 / total.max(1);
                if last_line.fetch_max(decile, Ordering::SeqCst) < decile {
                    eprintln!("{done}/{total} cells, {:.0} s", start.elapsed().as_secs_f64());
                }
            }
            if let Some(n) = a.stop_after {
                if call >= n {
                    std::process::exit(3);
                }
            }
        },
    )?;
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    if !a.quiet {
        eprintln!(
            "{} cells: {} already recorded, {} run now, {} failed; {:.1} s",
            summary.total,
            summary.already_done,
            summary.completed,
            summary.failures.len(),
            secs
        );
    }
    if cancel.is_cancelled() {
        eprintln!(
            "interrupted: {} cells recorded in {}; rerun the same command to resume",
            summary.already_done + summary.completed,
            out.display()
        );
        return Err(boostlab::Error::Cancelled.into());
    }
    // One line per distinct error (a missing file fails every fold of its dataset the same way).
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for f in &summary.failures {
        let msg = f.error.to_string();
        match groups.iter_mut().find(|g| g.0 == msg) {
            Some(g) => g.1.push(&f.key),
            None => groups.push((msg, vec![&f.key])),
        }
    }
    for (msg, keys) in groups.iter().take(20) {
        match keys.as_slice() {
            [one] => eprintln!("failed: {one}: {msg}"),
            [first, rest @ ..] => eprintln!("failed: {first} and {} more cells: {msg}", rest.len()),
            [] => {}
        }
    }
    if !summary.failures.is_empty() {
        bail!("{} cells failed (rerun the same command to retry them)", summary.failures.len());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use boostlab::tree::{Criterion, GrowOrder};
    use boostlab::Algorithm;

    fn table(s: &str) -> toml::Table {
        s.parse().expect("toml")
    }

    #[test]
    fn aliases_and_nested_tables_map_onto_boost_params() {
        let p = boost_params(
            &table(
                "algo = \"t-adaboost\"\nrounds = 20\nt = 0.6\nmax_nodes = 15\ncriterion = \"tempered:t=0.6\"\n\
                 clipped = true\ntree = { grow_order = \"count\" }\nauthors_mode = true",
            ),
            7,
        )
        .expect("valid");
        assert_eq!(p.algorithm, Algorithm::TAdaBoost);
        assert_eq!(p.n_estimators, 20);
        assert_eq!(p.t_adaboost.t, 0.6);
        assert_eq!(p.preset, Some(boostlab::boost::preset::Preset::Authors));
        assert_eq!(p.tree.max_split_candidates, Some(2000), "the preset's");
        assert_eq!(p.tree.max_nodes, Some(15));
        assert_eq!(p.tree.grow_order, GrowOrder::Count);
        assert_eq!(p.tree.criterion, Some(Criterion::Tempered { t: 0.6 }));
        assert_eq!((p.seed, p.secboost.seed), (7, 7));

        let s = boost_params(
            &table(
                "algo = \"secboost\"\nloss = \"spring:Q=500\"\ndelta_init = 0.1\nsecboost_alpha = \"solve\"\nseed = 3",
            ),
            7,
        )
        .expect("valid");
        assert_eq!(s.secboost.loss.to_string(), "spring:Q=500");
        assert_eq!((s.secboost.delta_init, s.seed, s.secboost.seed), (0.1, 3, 3));
        assert_eq!(serde_json::to_value(s.secboost.alpha_rule).expect("json"), "solve");

        let m = boost_params(&table("algo = \"real-adaboost-mh\"\nsmoothing = 0.01"), 0).expect("valid");
        assert_eq!((m.adaboost.smoothing, m.multiclass.eps), (Some(0.01), Some(0.01)));
    }

    #[test]
    fn bad_parameters_are_refused() {
        let err = |s: &str| format!("{:#}", boost_params(&table(s), 0).expect_err("invalid"));
        assert!(err("tt = 1").contains("unknown parameter `tt`"));
        assert!(err("tree = { max_node = 3 }").contains("unknown parameter `tree.max_node`"));
        assert!(err("max_nodes = 15\ntree = { max_nodes = 5 }").contains("already sets"));
        assert!(err("algo = \"t-adaboost\"\nt = 2.5").contains("t"));
        assert!(err("algo = \"nope\"").contains("algorithm") || err("algo = \"nope\"").contains("invalid"));
    }

    #[test]
    fn noise_flips_training_labels_only_and_is_seeded() {
        use boostlab::data::{Column, Features};
        let n = 400;
        let features =
            Features { names: vec!["x".into()], columns: vec![Column::Numeric((0..n).map(f64::from).collect())] };
        let y: Vec<u32> = (0..n).map(|i| (i % 2) as u32).collect();
        let target = Target::Classes { y: y.clone(), classes: vec!["0".into(), "1".into()] };
        let d = Dataset::new(features, Some(target), None).expect("dataset");
        let (mut a, mut b) = (d.clone(), d.clone());
        let fa = add_noise(&mut a, 0.1, 5).expect("noise");
        let fb = add_noise(&mut b, 0.1, 5).expect("noise");
        assert_eq!(fa, fb);
        assert_eq!(a.target, b.target);
        // About η·n flips (binomial(400, 0.1): mean 40, sd 6).
        assert!((20..=60).contains(&fa), "{fa}");
        let Some(Target::Classes { y: ya, .. }) = &a.target else { panic!("classes") };
        assert_eq!(ya.iter().zip(&y).filter(|(p, q)| p != q).count(), fa);
        assert_eq!(add_noise(&mut b.clone(), 0.0, 5).expect("noise"), 0);
    }
}
