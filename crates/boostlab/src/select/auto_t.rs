//! t chosen from the data: t-AdaBoost's temperature picked from a grid by inner
//! stratified cross-validation on the training rows, then a refit on all of them.
//!
//! Design. The training data are binned **once**; each inner fold's training part is a row
//! subset of those bins ([`subset_rows`]), built once per fold and shared by every grid value, and
//! its held-out rows are scored on the same bins ([`binned_scores`]: the trees' `bin_threshold`s,
//! the test the learner itself used). The `folds × grid` inner fits run in parallel (rayon); each
//! is the ordinary deterministic fit, and their errors are collected in (grid, fold) order, so the
//! choice and the scores do not depend on the thread count. Cost: `folds × |grid|` fits on
//! `(k−1)/k` of the rows plus one fit on all of them, i.e. `|grid| (k−1) + 1` full fits — 15 for
//! the default 3 folds and 7 temperatures (docs/reproduction.md has the measured cost).
//!
//! The score of a grid value is its inner cross-validated error: held-out misclassifications
//! (weighted by the sample weights when given) summed over the inner folds, divided by the total
//! held-out weight. The lowest score wins; ties go to the first grid value in the grid's order.

use rayon::prelude::*;

use crate::boost::driver::{fit_inner, fit_inner_on, BoostParams, RoundRecord};
use crate::boost::validation::FitOptions;
use crate::collective::Shared;
use crate::data::{BinData, BinnedData, BinnedMatrix, Target};
use crate::error::{Error, Result};
use crate::eval::folds::stratified_fold_ids;
use crate::math::loss::Loss;
use crate::model::Ensemble;
pub use crate::model::TSelection;
use crate::util::cancel::Cancel;

pub use crate::params::tadaboost::{AutoT, AutoTRule, DEFAULT_T_GRID};

/// The inner folds' seed: a fixed offset of the run's seed (any change of `seed` changes both the
/// inner folds and the trees' random choices).
pub fn fold_seed(seed: u64) -> u64 {
    seed ^ 0x7A17_0000_0016
}

/// The rows `rows` (in that order) of binned data: same schema and mapper, the rows' bins,
/// targets and sample weights. Nothing is re-binned.
pub fn subset_rows(data: &BinnedData, rows: &[usize]) -> Result<BinnedData> {
    let (n, d) = (data.bins.n_rows, data.bins.n_features);
    if let Some(&r) = rows.iter().find(|&&r| r >= n) {
        return Err(Error::InvalidData(format!("row {r} of binned data with {n} rows")));
    }
    fn take<T: Copy>(v: &[T], n: usize, d: usize, rows: &[usize]) -> Vec<T> {
        let mut out = Vec::with_capacity(rows.len() * d);
        for f in 0..d {
            let col = &v[f * n..(f + 1) * n];
            out.extend(rows.iter().map(|&r| col[r]));
        }
        out
    }
    let bins = BinnedMatrix {
        n_rows: rows.len(),
        n_features: d,
        offsets: data.bins.offsets.clone(),
        data: match &data.bins.data {
            BinData::U8(v) => BinData::U8(take(v, n, d, rows)),
            BinData::U16(v) => BinData::U16(take(v, n, d, rows)),
        },
    };
    let target = match &data.target {
        Target::Classes { y, classes } => {
            Target::Classes { y: rows.iter().map(|&r| y[r]).collect(), classes: classes.clone() }
        }
        Target::Multilabel { .. } => {
            return Err(Error::InvalidData("t = auto needs binary labels, not multi-label ones".into()))
        }
    };
    let w = data.sample_weight.as_ref().map(|w| rows.iter().map(|&r| w[r]).collect());
    BinnedData::new(data.schema.clone(), data.mapper.clone(), bins, target, w)
}

/// Linear scores `base + Σ α_j h_j` of a binary model on the rows `rows` of binned data (the
/// bins the model was trained on or a row superset of them), trees added in order.
pub fn binned_scores(model: &Ensemble, data: &BinnedData, rows: &[usize]) -> Vec<f64> {
    let mut s = vec![model.base_score; rows.len()];
    for (tree, &a) in model.trees.iter().zip(&model.alphas) {
        for (s, &r) in s.iter_mut().zip(rows) {
            *s += a * tree.leaf_values[tree.leaf_of_bins(&data.bins, r)];
        }
    }
    s
}

/// Weighted misclassifications and held-out weight of a binary model on `rows`.
fn held_out_error(model: &Ensemble, data: &BinnedData, rows: &[usize]) -> Result<(f64, f64)> {
    let Target::Classes { y, .. } = &data.target else {
        return Err(Error::InvalidData("t = auto needs binary labels".into()));
    };
    let pred = model.classes_from_scores(&binned_scores(model, data, rows));
    let (mut wrong, mut total) = (0.0, 0.0);
    for (&r, &p) in rows.iter().zip(&pred) {
        let w = data.sample_weight.as_ref().map_or(1.0, |w| w[r]);
        total += w;
        if p != y[r] {
            wrong += w;
        }
    }
    Ok((wrong, total))
}

/// Chooses t by inner cross-validation and refits on all rows (see the module docs). `params`
/// has `t_adaboost.auto_t` set; the model records the chosen t in `params.t_adaboost.t`, keeps
/// `auto_t`, and holds the [`TSelection`]. `on_round` sees the refit's rounds only.
pub(crate) fn fit(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    cancel: Option<&Cancel>,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    let auto = params.t_adaboost.auto_t.clone().unwrap_or_default();
    auto.check()?;
    let Target::Classes { y, .. } = &data.target else {
        return Err(Error::InvalidData("t = auto needs binary labels, not multi-label ones".into()));
    };
    let n = y.len();
    check_folds(auto.folds, n)?;
    let seed = fold_seed(params.seed);
    let ids = stratified_fold_ids(y, auto.folds, seed)?;
    // One row subset per inner fold, shared by every grid value.
    let folds: Vec<(BinnedData, Vec<usize>)> = (0..auto.folds)
        .map(|k| {
            let train: Vec<usize> = (0..n).filter(|&i| ids[i] != k).collect();
            let test: Vec<usize> = (0..n).filter(|&i| ids[i] == k).collect();
            Ok((subset_rows(data, &train)?, test))
        })
        .collect::<Result<_>>()?;
    let fixed = |t: f64| {
        let mut p = params.clone();
        p.t_adaboost.t = t;
        p.t_adaboost.auto_t = None;
        p
    };
    let jobs: Vec<(usize, usize)> = (0..auto.grid.len()).flat_map(|g| (0..auto.folds).map(move |k| (g, k))).collect();
    let results: Vec<Result<(f64, f64)>> = jobs
        .par_iter()
        .map(|&(g, k)| {
            let (train, test) = &folds[k];
            let model = fit_inner(
                train,
                &fixed(auto.grid[g]),
                loss.clone(),
                FitOptions { cancel, ..FitOptions::default() },
                &mut |_| {},
            )
            .map_err(|e| Error::Failed(format!("t = auto, inner fit at t = {}, fold {k}: {e}", auto.grid[g])))?;
            held_out_error(&model, data, test)
        })
        .collect();
    let errors = jobs.iter().copied().zip(results.into_iter().collect::<Result<Vec<_>>>()?).collect::<Vec<_>>();
    let (t, scores) = choose(&auto, &errors);
    let mut model = fit_inner(data, &fixed(t), loss, FitOptions { cancel, ..FitOptions::default() }, on_round)?;
    model.params.t_adaboost.auto_t = Some(auto.clone());
    model.t_selection = Some(TSelection { grid: auto.grid, scores, t, folds: auto.folds, fold_seed: seed });
    Ok(model)
}

/// One inner fit's `(grid index, fold)` and its held-out `(wrong, total)`.
type InnerError = ((usize, usize), (f64, f64));

/// The chosen t and the grid's scores from the held-out `(wrong, total)` of each `(grid, fold)`
/// inner fit, in (grid, fold) order.
fn choose(auto: &AutoT, errors: &[InnerError]) -> (f64, Vec<f64>) {
    let mut scores = vec![0.0; auto.grid.len()];
    let mut totals = vec![0.0; auto.grid.len()];
    // Per-fold held-out error rates (grid × fold), for the one-standard-error rule.
    let mut per_fold = vec![vec![0.0; auto.folds]; auto.grid.len()];
    for &((g, k), (wrong, total)) in errors {
        scores[g] += wrong;
        totals[g] += total;
        per_fold[g][k] = if total > 0.0 { wrong / total } else { 0.0 };
    }
    for (s, t) in scores.iter_mut().zip(&totals) {
        *s = if *t > 0.0 { *s / *t } else { 0.0 };
    }
    let mut best = 0;
    for (g, &s) in scores.iter().enumerate() {
        if s < scores[best] {
            best = g;
        }
    }
    if auto.rule == AutoTRule::OneSe {
        best = one_se_choice(&auto.grid, &scores, &per_fold, best);
    }
    (auto.grid[best], scores)
}

/// [`fit`] on this rank's rows of a distributed fit: the same choice of t
/// and the same [`TSelection`] as one machine on all the rows. The inner folds are the single
/// machine's, drawn over every rank's labels (gathered in rank order: the rows in training
/// order, one value each); each `(grid, fold)` inner fit is a distributed fit on the ranks' rows
/// of its training part, run one after the other in (grid, fold) order on every rank; each
/// rank's held-out misclassifications and weights are summed over the ranks in one call; then
/// the refit on all the rows, distributed too.
pub(crate) fn fit_on(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    cancel: Option<&Cancel>,
    on_round: &mut dyn FnMut(&RoundRecord),
    coll: &Shared,
) -> Result<Ensemble> {
    let auto = params.t_adaboost.auto_t.clone().unwrap_or_default();
    auto.check()?;
    let Target::Classes { y, .. } = &data.target else {
        return Err(Error::InvalidData("t = auto needs binary labels, not multi-label ones".into()));
    };
    // Every rank's labels in rank order, and where this rank's rows start among them.
    let mine: Vec<f64> = y.iter().map(|&v| f64::from(v)).collect();
    let mut starts = vec![0.0; coll.get().size()];
    starts[coll.get().rank()] = mine.len() as f64;
    coll.sum(&mut starts)?;
    let offset = starts[..coll.get().rank()].iter().sum::<f64>() as usize;
    // Labels are class indices (exact in f64).
    let all: Vec<u32> = coll.gather(&mine)?.into_iter().map(|v| v as u32).collect();
    let n = all.len();
    check_folds(auto.folds, n)?;
    let seed = fold_seed(params.seed);
    let all_ids = stratified_fold_ids(&all, auto.folds, seed)?;
    let ids = &all_ids[offset..offset + y.len()];
    let fixed = |t: f64| {
        let mut p = params.clone();
        p.t_adaboost.t = t;
        p.t_adaboost.auto_t = None;
        p
    };
    let mut errors = Vec::with_capacity(auto.grid.len() * auto.folds);
    for k in 0..auto.folds {
        let train: Vec<usize> = (0..y.len()).filter(|&i| ids[i] != k).collect();
        let test: Vec<usize> = (0..y.len()).filter(|&i| ids[i] == k).collect();
        let part = subset_rows(data, &train)?;
        for (g, &t) in auto.grid.iter().enumerate() {
            let model = fit_inner_on(
                &part,
                &fixed(t),
                loss.clone(),
                FitOptions { cancel, ..FitOptions::default() },
                &mut |_| {},
                coll,
            )
            .map_err(|e| Error::Failed(format!("t = auto, inner fit at t = {t}, fold {k}: {e}")))?;
            errors.push(((g, k), held_out_error(&model, data, &test)?));
        }
    }
    // (grid, fold) order, as the single machine's; the errors of every rank summed in one call.
    errors.sort_by_key(|e| e.0);
    let mut sums: Vec<f64> = errors.iter().flat_map(|e| [e.1 .0, e.1 .1]).collect();
    coll.sum(&mut sums)?;
    for (e, s) in errors.iter_mut().zip(sums.chunks_exact(2)) {
        e.1 = (s[0], s[1]);
    }
    let (t, scores) = choose(&auto, &errors);
    let mut model =
        fit_inner_on(data, &fixed(t), loss, FitOptions { cancel, ..FitOptions::default() }, on_round, coll)?;
    model.params.t_adaboost.auto_t = Some(auto.clone());
    model.t_selection = Some(TSelection { grid: auto.grid, scores, t, folds: auto.folds, fold_seed: seed });
    Ok(model)
}

/// The one-standard-error rule ([`AutoTRule::OneSe`]): the index of the grid value closest to
/// `t = 1` among those whose pooled inner error is at most the best's plus the standard error of
/// their paired per-fold differences to the best.
fn one_se_choice(grid: &[f64], scores: &[f64], per_fold: &[Vec<f64>], best: usize) -> usize {
    let k = per_fold[best].len() as f64;
    let mut choice = best;
    for g in 0..grid.len() {
        let d: Vec<f64> = per_fold[g].iter().zip(&per_fold[best]).map(|(a, b)| a - b).collect();
        let mean = d.iter().sum::<f64>() / k;
        let var = d.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (k - 1.0);
        let se = (var / k).sqrt();
        let closer = (grid[g] - 1.0).abs() < (grid[choice] - 1.0).abs();
        if scores[g] <= scores[best] + se && closer {
            choice = g;
        }
    }
    choice
}

/// The inner folds need at least one training row each: `folds ≤ n`.
fn check_folds(folds: usize, n: usize) -> Result<()> {
    if folds > n {
        return Err(Error::param(
            "auto_t.folds",
            format!("an integer in 2..={n} (the number of training rows)"),
            folds,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::boost::driver::{fit, fit_binned};
    use crate::data::{Dataset, Features};
    use crate::eval::folds::train_test_indices;
    use crate::Algorithm;
    use crate::Prediction;

    /// A noisy binary problem: 3 numeric features (one with missing values), label from a
    /// threshold rule with 15% flipped labels; optional sample weights.
    fn data(n: usize, seed: u64, weights: bool) -> Dataset {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut x = Vec::with_capacity(n * 3);
        let mut y = Vec::with_capacity(n);
        for _ in 0..n {
            let (a, b): (f64, f64) = (rng.gen(), rng.gen());
            let c = if rng.gen_bool(0.1) { f64::NAN } else { (rng.gen::<f64>() * 7.0).floor() };
            let mut label = a + 0.5 * b > 0.7 || c == 3.0;
            if rng.gen_bool(0.15) {
                label = !label;
            }
            x.extend([a, b, c]);
            y.push(if label { "1".to_string() } else { "0".to_string() });
        }
        let w = weights.then(|| (0..n).map(|_| rng.gen_range(0.5..2.0)).collect());
        let target = crate::data::Target::from_strings(&y, None).unwrap();
        Dataset::new(Features::from_row_major(&x, n, 3).unwrap(), Some(target), w).unwrap()
    }

    fn params(grid: &[f64], folds: usize) -> BoostParams {
        let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 8, seed: 5, ..Default::default() };
        p.tree.max_leaves = 4;
        p.t_adaboost.auto_t = Some(AutoT { grid: grid.to_vec(), folds, ..Default::default() });
        p
    }

    /// The inner cross-validation by hand: each inner training part binned with the full data's
    /// mapper from its raw rows (`BinMapper::transform`, not [`subset_rows`]), fitted, and its
    /// held-out rows predicted from their raw values (`Ensemble::predict`, not the bins).
    fn naive_scores(d: &Dataset, p: &BoostParams) -> Vec<f64> {
        let auto = p.t_adaboost.auto_t.clone().unwrap();
        let full = BinnedData::from_dataset(d, p.max_bins).unwrap();
        let crate::data::Target::Classes { y, .. } = d.target().unwrap() else { unreachable!() };
        let ids = stratified_fold_ids(y, auto.folds, fold_seed(p.seed)).unwrap();
        auto.grid
            .iter()
            .map(|&t| {
                let (mut wrong, mut total) = (0.0, 0.0);
                for k in 0..auto.folds {
                    let (train, test) = train_test_indices(&ids, k);
                    let binned = crate::select::rebinned_rows(d, &full, &train);
                    let mut q = p.clone();
                    q.t_adaboost.auto_t = None;
                    q.t_adaboost.t = t;
                    let m = fit_binned(&binned, &q, &mut |_| {}).unwrap();
                    let te = d.subset(&test);
                    let pred = m.classes_from_scores(&m.predict(&te.features, &Prediction::scores()).unwrap());
                    let crate::data::Target::Classes { y: yt, .. } = te.target.as_ref().unwrap() else {
                        unreachable!()
                    };
                    // Per-fold sums, then added over folds (the same additions as `fit`).
                    let (mut fw, mut ft) = (0.0, 0.0);
                    for (i, (&a, &b)) in pred.iter().zip(yt).enumerate() {
                        let w = te.sample_weight.as_ref().map_or(1.0, |w| w[i]);
                        ft += w;
                        if a != b {
                            fw += w;
                        }
                    }
                    wrong += fw;
                    total += ft;
                }
                wrong / total
            })
            .collect()
    }

    #[test]
    fn auto_t_picks_the_best_inner_score_of_a_hand_run_cv() {
        for (seed, weights) in [(1, false), (2, true), (3, false)] {
            let d = data(300, seed, weights);
            let p = params(&[0.0, 0.4, 0.8, 1.0, 1.1], 3);
            let m = fit(&d, &p).unwrap();
            let sel = m.t_selection.clone().unwrap();
            let naive = naive_scores(&d, &p);
            // Held-out counts over the same folds and models: equal to the bit (sums of the same
            // terms in the same order).
            assert_eq!(sel.scores, naive, "seed {seed}");
            let best = naive.iter().cloned().fold(f64::INFINITY, f64::min);
            let first_best = naive.iter().position(|&s| s == best).unwrap();
            assert_eq!(sel.t, p.t_adaboost.auto_t.as_ref().unwrap().grid[first_best]);
            // The scores are not all equal (the test would not tell a choice otherwise).
            assert!(naive.iter().any(|&s| s != best), "seed {seed}: {naive:?}");
            // The model is the refit at the chosen t on all rows.
            let mut q = p.clone();
            q.t_adaboost.auto_t = None;
            q.t_adaboost.t = sel.t;
            let refit = fit(&d, &q).unwrap();
            assert_eq!(m.trees, refit.trees);
            assert_eq!(m.alphas, refit.alphas);
            assert_eq!(m.params.t_adaboost.t, sel.t);
            assert_eq!(m.params.t_adaboost.auto_t, p.t_adaboost.auto_t);
            assert_eq!((sel.folds, sel.fold_seed, &sel.grid), (3, fold_seed(5), &vec![0.0, 0.4, 0.8, 1.0, 1.1]));
        }
    }

    #[test]
    fn auto_t_is_bit_identical_across_thread_counts_and_round_trips() {
        let d = data(400, 7, true);
        let p = params(&crate::select::auto_t::DEFAULT_T_GRID, 3);
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| fit(&d, &p).unwrap())
        };
        let one = run(1);
        for threads in [2, 5] {
            let other = run(threads);
            assert_eq!(one.to_json().unwrap(), other.to_json().unwrap(), "{threads} threads");
        }
        let back = Ensemble::from_json(&one.to_json().unwrap()).unwrap();
        assert_eq!(back.t_selection, one.t_selection);
        assert_eq!(back.params.t_adaboost.auto_t, p.t_adaboost.auto_t);
        // A model without the fields (written by an older version) loads with none.
        let mut v: serde_json::Value = serde_json::from_str(&one.to_json().unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("t_selection");
        v["params"]["t_adaboost"].as_object_mut().unwrap().remove("auto_t");
        let old = Ensemble::from_json(&v.to_string()).unwrap();
        assert_eq!((old.t_selection, old.params.t_adaboost.auto_t), (None, None));
    }

    #[test]
    fn subset_rows_equals_binning_the_rows() {
        let d = data(257, 11, true);
        let full = BinnedData::from_dataset(&d, 255).unwrap();
        let rows: Vec<usize> = (0..257).filter(|i| i % 3 != 1).rev().collect();
        let sub = subset_rows(&full, &rows).unwrap();
        let part = d.subset(&rows);
        assert_eq!(sub.bins, full.mapper.transform(&part.features).unwrap());
        assert_eq!(Some(&sub.target), part.target.as_ref());
        assert_eq!(sub.sample_weight, part.sample_weight);
        assert!(subset_rows(&full, &[0, 257]).unwrap_err().to_string().contains("row 257"));
    }

    #[test]
    fn auto_t_parameters_are_checked() {
        let d = data(60, 1, false);
        for (grid, folds, what) in [
            (vec![], 3, "at least one"),
            (vec![0.5, 0.5], 3, "distinct"),
            (vec![2.5], 3, "[0, 2)"),
            (vec![f64::NAN], 3, "[0, 2)"),
            (vec![0.5], 1, "≥ 2"),
            (vec![0.5], 61, "2..=60"),
        ] {
            let e = fit(&d, &params(&grid, folds)).unwrap_err().to_string();
            assert!(e.contains("auto_t") && e.contains(what), "{e}");
        }
    }

    #[test]
    fn one_se_rule_by_hand() {
        // Per-fold errors of t = 0, 0.5, 1 on 3 folds; pooled scores (equal fold sizes: the means).
        let per_fold = vec![vec![0.10, 0.12, 0.11], vec![0.11, 0.13, 0.10], vec![0.13, 0.16, 0.12]];
        let scores: Vec<f64> = per_fold.iter().map(|f| f.iter().sum::<f64>() / 3.0).collect();
        let grid = [0.0, 0.5, 1.0];
        // t = 0.5: differences (0.01, 0.01, −0.01), SE = sqrt(var/3) = 0.00667 ≥ 0.00333: kept.
        // t = 1: differences (0.03, 0.04, 0.01), SE = 0.00882 < 0.02667: not within one SE.
        assert_eq!(one_se_choice(&grid, &scores, &per_fold, 0), 1);
        // A tie of everything: the value closest to 1.
        let flat = vec![vec![0.1, 0.2, 0.3]; 3];
        assert_eq!(one_se_choice(&grid, &[0.2, 0.2, 0.2], &flat, 0), 2);
        // Serde: `rule` is omitted at its default (older models and specs read the same).
        let a = AutoT::default();
        assert!(!serde_json::to_string(&a).unwrap().contains("rule"));
        let b: AutoT = serde_json::from_str(r#"{"grid": [0, 1], "folds": 3, "rule": "one-se"}"#).unwrap();
        assert_eq!(b.rule, AutoTRule::OneSe);
    }
}
