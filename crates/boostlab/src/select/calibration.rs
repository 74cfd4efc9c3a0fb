//! Calibrated probabilities: the scale `a` of a binary model's `P(+1|x) = σ(a·f(x))`, fitted on
//! cross-fitted scores of the training rows (docs/explanation/probabilities.md).
//!
//! Design. The model itself is the ordinary fit on all the rows; calibration never changes its
//! trees, its scores or its labels, only how `predict_proba` maps a score to a probability. The
//! training rows are split into `k` folds; for each fold a model with the final model's
//! parameters is trained on the other folds and scores the fold's rows, so every row gets a score
//! from a model that never saw it. The scale minimises the weighted log loss of those scores with
//! a weak Gaussian prior towards the papers' link `a = 2` ([`PRIOR`]), which keeps `a` finite
//! when the held-out scores separate the classes.
//!
//! Folds by content. A row's fold is a hash of its label and its bins (with the run's seed), not
//! of its position: rows that are equal go to the same fold, so a row of weight 2 and the same
//! row given twice give the same folds, the same fold models and the same scale (scikit-learn's
//! sample-weight equivalence), and every rank of a distributed fit assigns its rows as one
//! machine would. The folds are not stratified; a fold whose training rows hold one class only,
//! or whose model cannot be trained, leaves the model uncalibrated (the papers' link), with the
//! reason in [`Calibration::not_fitted`].
//!
//! Cost: `k` fits on about `(k−1)/k` of the rows besides the final one — 3 full fits' worth for
//! the default 3 folds. Each fold fit builds its row subset of the bins. On one machine, while
//! `min(threads, k)` such copies take at most [`PARALLEL_BYTES`], the fold fits run side by side
//! (small data, where a fit's fixed costs dominate); otherwise, and on ranks, they run one after
//! the other, each parallel (or distributed) over its rows, holding one copy at a time.

use rayon::prelude::*;

use crate::boost::driver::{fit_inner_on, fit_uncalibrated, BoostParams, RoundRecord};
use crate::boost::validation::FitOptions;
use crate::collective::Shared;
use crate::data::{BinData, BinnedData, Target};
use crate::error::{Error, Result};
use crate::eval::folds::train_test_indices;
use crate::math::loss::Loss;
use crate::model::{Calibration, Ensemble};
use crate::params::CalibrationMethod;
use crate::select::auto_t::{binned_scores, subset_rows};

/// Strength λ of the prior `λ (a − 2)²` added to the mean held-out log loss: negligible beside
/// the loss of a few hundred rows whose scores overlap, enough to keep `a` finite (about 5 for
/// held-out scores that separate the classes by a margin of 1).
pub const PRIOR: f64 = 1e-3;

/// The fold fits run side by side while their copies of the bins take at most this many bytes
/// in all (64 MiB); larger data are cross-fitted one fold after the other.
pub const PARALLEL_BYTES: usize = 64 << 20;

/// Whether the fit calibrates its probabilities: `calibration = sigmoid` and a binary booster.
pub(crate) fn applies(params: &BoostParams) -> bool {
    params.calibration.method == CalibrationMethod::Sigmoid && params.algorithm.supports_calibration()
}

/// The folds' seed: a fixed offset of the run's seed.
fn fold_seed(seed: u64) -> u64 {
    seed ^ 0xCA11_B8A7_E000_0003
}

/// SplitMix64's finaliser: a bijection of `u64` whose every output bit depends on every input bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Each row's fold in `0..k`: a hash of the seed, the row's label and its bins (see the module
/// docs), so equal rows share a fold wherever they are.
pub fn fold_ids(data: &BinnedData, k: usize, seed: u64) -> Result<Vec<usize>> {
    let Target::Classes { y, .. } = &data.target else {
        return Err(Error::InvalidData("calibration needs binary labels, not multi-label ones".into()));
    };
    let n = data.bins.n_rows;
    let start = mix(fold_seed(seed));
    let mut h: Vec<u64> = y.iter().map(|&c| mix(start ^ u64::from(c).wrapping_add(1))).collect();
    // Each feature's bins (column-major) mixed into their rows' hashes.
    fn mix_in<B: Copy + Into<u64>>(h: &mut [u64], bins: &[B], n: usize) {
        for column in bins.chunks_exact(n) {
            for (h, &b) in h.iter_mut().zip(column) {
                *h = mix(*h ^ (b.into() + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            }
        }
    }
    if n > 0 {
        match &data.bins.data {
            BinData::U8(v) => mix_in(&mut h, v, n),
            BinData::U16(v) => mix_in(&mut h, v, n),
        }
    }
    Ok(h.into_iter().map(|h| (h % k as u64) as usize).collect())
}

/// Trains the model on all the rows with the parameters as given, then fits its probability
/// scale on cross-fitted scores (see the module docs). `params` asks for calibration
/// ([`applies`]); the model records `params.calibration` and its [`Calibration`]. `on_round` sees
/// the final fit's rounds only. `coll`: the ranks of a distributed fit ([`Shared::default`] on
/// one machine).
pub(crate) fn fit(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
    coll: &Shared,
) -> Result<Ensemble> {
    let k = params.calibration.folds;
    let mut plain = params.clone();
    plain.calibration.method = CalibrationMethod::None;
    let mut model = fit_uncalibrated(data, &plain, loss.clone(), opts, on_round, coll)?;
    model.params.calibration = params.calibration;
    // The fold models take the final model's parameters (t = auto's choice included).
    let mut fold_params = model.params.clone();
    fold_params.calibration.method = CalibrationMethod::None;
    fold_params.t_adaboost.auto_t = None;
    let Target::Classes { y, .. } = &data.target else {
        return Err(Error::InvalidData("calibration needs binary labels, not multi-label ones".into()));
    };
    let w: Vec<f64> = data.sample_weight.clone().unwrap_or_else(|| vec![1.0; y.len()]);
    let ids = fold_ids(data, k, params.seed)?;
    // Rows of positive weight per (fold, class), over every rank.
    let mut present = vec![0.0; 2 * k];
    for ((&f, &c), &w) in ids.iter().zip(y).zip(&w) {
        if w > 0.0 {
            present[2 * f + c as usize] += 1.0;
        }
    }
    coll.sum(&mut present)?;
    let total = |c: usize| (0..k).map(|f| present[2 * f + c]).sum::<f64>();
    let uncalibrated = |mut model: Ensemble, why: String| {
        model.calibration = Some(Calibration { scale: 2.0, folds: k, not_fitted: Some(why) });
        Ok(model)
    };
    if let Some(f) = (0..k).find(|&f| (0..2).any(|c| total(c) - present[2 * f + c] == 0.0)) {
        let why =
            format!("the training rows of calibration fold {f} of {k} hold one class only (too few rows of a class)");
        return uncalibrated(model, why);
    }
    let fold_opts = FitOptions { valid: opts.valid, init_model: None, cancel: opts.cancel };
    let held_out = |f: usize| -> Result<(Vec<usize>, Vec<f64>)> {
        let (train, test) = train_test_indices(&ids, f);
        let part = subset_rows(data, &train)?;
        let m = fit_inner_on(&part, &fold_params, loss.clone(), fold_opts, &mut |_| {}, coll)?;
        let s = binned_scores(&m, data, &test);
        Ok((test, s))
    };
    // Side by side when the fold copies of the bins are small; else one after the other (each
    // fit is parallel over its rows), holding one copy at a time. Every rank of a distributed
    // fit runs the same fits in the same order. The results do not depend on the choice.
    let bin_bytes =
        data.bins.n_rows * data.bins.n_features * if matches!(data.bins.data, BinData::U8(_)) { 1 } else { 2 };
    let side_by_side =
        !coll.is_distributed() && bin_bytes.saturating_mul(k.min(rayon::current_num_threads())) <= PARALLEL_BYTES;
    let results: Vec<Result<(Vec<usize>, Vec<f64>)>> =
        if side_by_side { (0..k).into_par_iter().map(held_out).collect() } else { (0..k).map(held_out).collect() };
    if results.iter().any(|r| matches!(r, Err(Error::Cancelled))) {
        return Err(Error::Cancelled);
    }
    // A fold's model that cannot be trained (a first tree of zero on every row of a tiny
    // fold, say) leaves the final model uncalibrated, with the reason.
    if let Some((f, Err(e))) = results.iter().enumerate().find(|(_, r)| r.is_err()) {
        return uncalibrated(model, format!("the fit of calibration fold {f} of {k} failed: {e}"));
    }
    let folds: Vec<(Vec<usize>, Vec<f64>)> = results.into_iter().collect::<Result<_>>()?;
    let mut scores = vec![0.0; ids.len()];
    for (rows, s) in &folds {
        for (&i, &v) in rows.iter().zip(s) {
            scores[i] = v;
        }
    }
    let positive: Vec<bool> = y.iter().map(|&c| c == 1).collect();
    let scale = fit_scale(&scores, &positive, &w, coll)?;
    model.calibration = Some(Calibration { scale, folds: k, not_fitted: None });
    Ok(model)
}

/// `σ(z) = 1/(1 + e^(−z))` without overflow.
fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

/// The scale `a ≥ 0` minimising `F(a) = (1/W) Σ w_i [ln(1 + e^(a f_i)) − y_i a f_i] + λ (a − 2)²`
/// over every rank's rows (`y_i` = 1 for the positive class, λ = [`PRIOR`]). `F` is strictly
/// convex (`F'' ≥ 2λ`), so safeguarded Newton steps from `a = 2` converge to its one minimum;
/// each step's two sums are summed over the ranks.
pub fn fit_scale(f: &[f64], positive: &[bool], w: &[f64], coll: &Shared) -> Result<f64> {
    let mut total = [w.iter().sum::<f64>()];
    coll.sum(&mut total)?;
    let big_w = total[0];
    if big_w.is_nan() || big_w <= 0.0 {
        return Ok(2.0);
    }
    let derivatives = |a: f64| -> Result<(f64, f64)> {
        let mut s = [0.0, 0.0];
        for ((&f, &pos), &w) in f.iter().zip(positive).zip(w) {
            let p = sigmoid(a * f);
            s[0] += w * f * (p - f64::from(u8::from(pos)));
            s[1] += w * f * f * p * (1.0 - p);
        }
        coll.sum(&mut s)?;
        Ok((s[0] / big_w + 2.0 * PRIOR * (a - 2.0), s[1] / big_w + 2.0 * PRIOR))
    };
    // F rises from the bound: the minimum is a = 0 (the scores point the wrong way).
    if derivatives(0.0)?.0 >= 0.0 {
        return Ok(0.0);
    }
    let (mut lo, mut hi) = (0.0_f64, f64::INFINITY);
    let mut a = 2.0_f64;
    for _ in 0..200 {
        let (g, h) = derivatives(a)?;
        if g == 0.0 {
            return Ok(a);
        }
        if g > 0.0 {
            hi = a;
        } else {
            lo = a;
        }
        let newton = a - g / h;
        let next = if newton > lo && newton < hi {
            newton
        } else if hi.is_finite() {
            0.5 * (lo + hi)
        } else {
            2.0 * a.max(1.0)
        };
        if (next - a).abs() <= 1e-12 * a.max(1.0) {
            return Ok(next);
        }
        a = next;
    }
    Ok(a)
}

#[cfg(test)]
mod tests;
