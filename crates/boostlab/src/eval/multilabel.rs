//! Multi-label metrics (docs/explanation/multiclass.md#multiclass; Schapire & Singer's definitions).
//!
//! Every metric takes the true labels `y` (`n × k` row-major, an entry > 0 means "relevant": ±1 or
//! 0/1 both work), the scores `f(x_i, ℓ)` (`n × k`, row-major), `k`, and optional sample weights
//! (length n, non-negative, not all zero); a metric is the weighted mean of a per-example value.
//! The predicted label set is `{ℓ : f(x, ℓ) > 0}`.
//!
//! Ranking metrics are computed in O(k log k) per example from one sort, with ties in the scores
//! resolved pessimistically: the rank of label ℓ is `|{ℓ' : f(ℓ') ≥ f(ℓ)}|` (as scikit-learn's
//! `coverage_error` and `label_ranking_average_precision_score`). Examples for which a ranking
//! metric is undefined are left out of its mean (and the metric is 0 if every example is):
//! ranking loss needs a relevant and an irrelevant label, coverage and average precision a
//! relevant label. (scikit-learn instead counts such examples as perfect.)

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::outputs::top_label;

/// Checks the shapes and values; returns n and the weights (uniform when not given).
fn check(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<usize> {
    if k == 0 {
        return Err(Error::InvalidData("multi-label metric with 0 labels".into()));
    }
    if y.is_empty() || !y.len().is_multiple_of(k) {
        return Err(Error::InvalidData(format!(
            "label matrix of {} entries is not a non-empty n × {k} matrix",
            y.len()
        )));
    }
    if scores.len() != y.len() {
        return Err(Error::InvalidData(format!("{} scores for {} labels", scores.len(), y.len())));
    }
    if let Some(v) = y.iter().find(|&&v| v != 1.0 && v != 0.0 && v != -1.0) {
        return Err(Error::InvalidData(format!("label value {v}, expected −1, 0 or +1")));
    }
    if scores.iter().any(|v| v.is_nan()) {
        return Err(Error::InvalidData("a score is NaN".into()));
    }
    let n = y.len() / k;
    if let Some(w) = sample_weight {
        if w.len() != n {
            return Err(Error::InvalidData(format!("{} sample weights for {n} examples", w.len())));
        }
        if w.iter().any(|&v| !(v.is_finite() && v >= 0.0)) || w.iter().sum::<f64>() <= 0.0 {
            return Err(Error::InvalidData("sample weights must be finite, non-negative and not all zero".into()));
        }
    }
    Ok(n)
}

/// Weighted mean of `value(i)` over the examples where it is `Some`; 0 if there are none.
fn weighted_mean(n: usize, sample_weight: Option<&[f64]>, value: impl FnMut(usize) -> Option<f64>) -> f64 {
    let [num, den] = weighted_sums(n, sample_weight, value);
    mean_of_sums([num, den])
}

/// The numerator and denominator of [`weighted_mean`].
fn weighted_sums(n: usize, sample_weight: Option<&[f64]>, mut value: impl FnMut(usize) -> Option<f64>) -> [f64; 2] {
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..n {
        if let Some(v) = value(i) {
            let w = sample_weight.map_or(1.0, |s| s[i]);
            num += w * v;
            den += w;
        }
    }
    [num, den]
}

/// `num/den` of a metric's sums (0 when `den` is 0): the metric of sums added over the ranks of
/// a distributed fit.
pub(crate) fn mean_of_sums([num, den]: [f64; 2]) -> f64 {
    if den > 0.0 {
        num / den
    } else {
        0.0
    }
}

/// Per-example ranking statistics from one sort.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RankStats {
    /// Relevant labels |Y_i|.
    n_rel: usize,
    /// Irrelevant labels |Y − Y_i|.
    n_irr: usize,
    /// Crucial pairs (ℓ0 ∉ Y_i, ℓ1 ∈ Y_i) with f(ℓ1) ≤ f(ℓ0).
    misordered: usize,
    /// max over relevant ℓ of rank(ℓ) (0 if none).
    max_rel_rank: usize,
    /// Σ over relevant ℓ of |{ℓ' ∈ Y_i : rank(ℓ') ≤ rank(ℓ)}| / rank(ℓ).
    precision_sum: f64,
}

fn rank_stats(rel: impl Fn(usize) -> bool, f: &[f64], order: &mut Vec<usize>) -> RankStats {
    let k = f.len();
    order.clear();
    order.extend(0..k);
    // Decreasing score; NaN was rejected, and partial_cmp keeps −0.0 and +0.0 tied.
    order.sort_by(|&a, &b| f[b].partial_cmp(&f[a]).unwrap_or(std::cmp::Ordering::Equal));
    let mut s = RankStats { n_rel: 0, n_irr: 0, misordered: 0, max_rel_rank: 0, precision_sum: 0.0 };
    let mut start = 0;
    while start < k {
        let mut end = start + 1;
        while end < k && f[order[end]] == f[order[start]] {
            end += 1;
        }
        // Group order[start..end] is tied; every label in it has rank `end`.
        let rel_g = order[start..end].iter().filter(|&&l| rel(l)).count();
        let irr_g = (end - start) - rel_g;
        if rel_g > 0 {
            // Irrelevant labels scored ≥ each relevant label of the group: above it or tied.
            s.misordered += rel_g * (s.n_irr + irr_g);
            s.max_rel_rank = end;
            s.precision_sum += rel_g as f64 * (s.n_rel + rel_g) as f64 / end as f64;
        }
        s.n_rel += rel_g;
        s.n_irr += irr_g;
        start = end;
    }
    s
}

/// One example's term of [`ranking_loss`] (labels `y_row`, scores `f_row`; `order` is scratch):
/// `None` when it has no crucial pair. For boosters that sum the metric in their own passes
/// (AdaBoost.MR's chunked step).
pub(crate) fn ranking_loss_row(y_row: &[f64], f_row: &[f64], order: &mut Vec<usize>) -> Option<f64> {
    let s = rank_stats(|l| y_row[l] > 0.0, f_row, order);
    (s.n_rel > 0 && s.n_irr > 0).then(|| s.misordered as f64 / (s.n_rel * s.n_irr) as f64)
}

/// Per-example ranking statistics of every row.
fn all_rank_stats(y: &[f64], scores: &[f64], k: usize) -> Vec<RankStats> {
    let mut order = Vec::with_capacity(k);
    y.chunks_exact(k).zip(scores.chunks_exact(k)).map(|(yr, fr)| rank_stats(|l| yr[l] > 0.0, fr, &mut order)).collect()
}

/// Hamming loss: the weighted mean over examples of `|{ℓ : [f(x_i, ℓ) > 0] ≠ [ℓ ∈ Y_i]}| / k`.
/// In [0, 1]; 0 is perfect.
pub fn hamming_loss(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    Ok(mean_of_sums(hamming_sums(n, y, scores, k, sample_weight)))
}

/// The `[numerator, denominator]` of [`hamming_loss`] over `n` checked examples.
fn hamming_sums(n: usize, y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> [f64; 2] {
    weighted_sums(n, sample_weight, |i| {
        let wrong = (0..k).filter(|&l| (scores[i * k + l] > 0.0) != (y[i * k + l] > 0.0)).count();
        Some(wrong as f64 / k as f64)
    })
}

/// One-error: the weighted fraction of examples whose top-scored label (ties to the lowest index)
/// is not relevant. An example with no relevant label always counts as an error. For single-label
/// data this is the classification error of the argmax. In [0, 1].
pub fn one_error(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    Ok(mean_of_sums(one_error_sums(n, y, scores, k, sample_weight)))
}

/// The `[numerator, denominator]` of [`one_error`] over `n` checked examples.
fn one_error_sums(n: usize, y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> [f64; 2] {
    weighted_sums(n, sample_weight, |i| {
        let top = top_label(&scores[i * k..(i + 1) * k]);
        Some(if y[i * k + top] > 0.0 { 0.0 } else { 1.0 })
    })
}

/// The unweighted `[numerator, denominator]` of the Hamming loss (`one = false`) or the one-error
/// (`one = true`) of this rank's rows, for a metric summed over the ranks of a distributed fit
///: `[0, 0]` for no rows. [`mean_of_sums`] of the sums over the ranks is the metric
/// of all the rows.
pub(crate) fn metric_sums(one: bool, y: &[f64], scores: &[f64], k: usize) -> Result<[f64; 2]> {
    if y.is_empty() && scores.is_empty() {
        return Ok([0.0, 0.0]);
    }
    let n = check(y, scores, k, None)?;
    Ok(if one { one_error_sums(n, y, scores, k, None) } else { hamming_sums(n, y, scores, k, None) })
}

/// Ranking loss (docs/explanation/multiclass.md#multiclass-mr): the weighted mean over examples with at least one relevant and one
/// irrelevant label of the fraction of crucial pairs (ℓ0 ∉ Y_i, ℓ1 ∈ Y_i) ordered wrongly,
/// `f(x_i, ℓ1) ≤ f(x_i, ℓ0)` (a tie is an error). In [0, 1]. When every example has a crucial
/// pair, one-error ≤ (k − 1) · ranking loss.
pub fn ranking_loss(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    let st = all_rank_stats(y, scores, k);
    Ok(weighted_mean(n, sample_weight, |i| {
        let s = st[i];
        (s.n_rel > 0 && s.n_irr > 0).then(|| s.misordered as f64 / (s.n_rel * s.n_irr) as f64)
    }))
}

/// Coverage (Schapire & Singer): how far down the ranking one must go, on average, to cover all
/// relevant labels: the weighted mean over examples with a relevant label of
/// `max_{ℓ ∈ Y_i} rank(ℓ) − 1`. In [0, k − 1]; 0 when only the top label is relevant and ranked
/// first. (scikit-learn's `coverage_error` is this plus 1.)
pub fn coverage(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    let st = all_rank_stats(y, scores, k);
    Ok(weighted_mean(n, sample_weight, |i| {
        let s = st[i];
        (s.n_rel > 0).then(|| (s.max_rel_rank - 1) as f64)
    }))
}

/// Average precision (Schapire & Singer; scikit-learn's label-ranking average precision): the
/// weighted mean over examples with a relevant label of
/// `(1/|Y_i|) Σ_{ℓ ∈ Y_i} |{ℓ' ∈ Y_i : rank(ℓ') ≤ rank(ℓ)}| / rank(ℓ)`. In (0, 1]; 1 is perfect.
pub fn average_precision(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    let st = all_rank_stats(y, scores, k);
    Ok(weighted_mean(n, sample_weight, |i| {
        let s = st[i];
        (s.n_rel > 0).then(|| s.precision_sum / s.n_rel as f64)
    }))
}

/// Subset accuracy (exact match): the weighted fraction of examples whose predicted label set
/// `{ℓ : f > 0}` equals `Y_i`. In [0, 1].
pub fn subset_accuracy(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    Ok(weighted_mean(n, sample_weight, |i| {
        let exact = (0..k).all(|l| (scores[i * k + l] > 0.0) == (y[i * k + l] > 0.0));
        Some(if exact { 1.0 } else { 0.0 })
    }))
}

/// Jaccard accuracy (Godbole & Sarawagi): the weighted mean of `|Y_i ∩ H_i| / |Y_i ∪ H_i|`, with
/// `H_i = {ℓ : f > 0}`; 1 for an example where both sets are empty. In [0, 1].
pub fn jaccard_accuracy(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    Ok(weighted_mean(n, sample_weight, |i| {
        let (mut inter, mut union) = (0usize, 0usize);
        for l in 0..k {
            let (p, t) = (scores[i * k + l] > 0.0, y[i * k + l] > 0.0);
            inter += usize::from(p && t);
            union += usize::from(p || t);
        }
        Some(if union == 0 { 1.0 } else { inter as f64 / union as f64 })
    }))
}

/// Weighted (tp, fp, fn) of label `l`.
fn confusion(y: &[f64], scores: &[f64], k: usize, n: usize, w: Option<&[f64]>, l: usize) -> (f64, f64, f64) {
    let (mut tp, mut fp, mut fnn) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let wi = w.map_or(1.0, |s| s[i]);
        match (scores[i * k + l] > 0.0, y[i * k + l] > 0.0) {
            (true, true) => tp += wi,
            (true, false) => fp += wi,
            (false, true) => fnn += wi,
            (false, false) => {}
        }
    }
    (tp, fp, fnn)
}

/// `2tp / (2tp + fp + fn)`, 1 when nothing is relevant and nothing predicted.
fn f1(tp: f64, fp: f64, fnn: f64) -> f64 {
    let den = 2.0 * tp + fp + fnn;
    if den > 0.0 {
        2.0 * tp / den
    } else {
        1.0
    }
}

/// Micro-averaged F1: `2TP / (2TP + FP + FN)` with the (weighted) counts pooled over all
/// (example, label) pairs; 1 when no label is relevant and none is predicted (scikit-learn's
/// `zero_division=1.0`). In [0, 1].
pub fn micro_f1(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    let (mut tp, mut fp, mut fnn) = (0.0, 0.0, 0.0);
    for l in 0..k {
        let c = confusion(y, scores, k, n, sample_weight, l);
        tp += c.0;
        fp += c.1;
        fnn += c.2;
    }
    Ok(f1(tp, fp, fnn))
}

/// Macro-averaged F1: the unweighted mean over labels of each label's F1; a label never relevant
/// and never predicted has F1 = 1 (scikit-learn's `zero_division=1.0`). In [0, 1].
pub fn macro_f1(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    let total: f64 = (0..k)
        .map(|l| {
            let (tp, fp, fnn) = confusion(y, scores, k, n, sample_weight, l);
            f1(tp, fp, fnn)
        })
        .sum();
    Ok(total / k as f64)
}

/// All multi-label metrics at once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MultilabelReport {
    /// [`hamming_loss`].
    pub hamming_loss: f64,
    /// [`one_error`].
    pub one_error: f64,
    /// [`ranking_loss`].
    pub ranking_loss: f64,
    /// [`coverage`].
    pub coverage: f64,
    /// [`average_precision`].
    pub average_precision: f64,
    /// [`subset_accuracy`].
    pub subset_accuracy: f64,
    /// [`jaccard_accuracy`].
    pub jaccard_accuracy: f64,
    /// [`micro_f1`].
    pub micro_f1: f64,
    /// [`macro_f1`].
    pub macro_f1: f64,
}

/// Computes every metric of this module (see each function for its definition).
pub fn report(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<MultilabelReport> {
    Ok(MultilabelReport {
        hamming_loss: hamming_loss(y, scores, k, sample_weight)?,
        one_error: one_error(y, scores, k, sample_weight)?,
        ranking_loss: ranking_loss(y, scores, k, sample_weight)?,
        coverage: coverage(y, scores, k, sample_weight)?,
        average_precision: average_precision(y, scores, k, sample_weight)?,
        subset_accuracy: subset_accuracy(y, scores, k, sample_weight)?,
        jaccard_accuracy: jaccard_accuracy(y, scores, k, sample_weight)?,
        micro_f1: micro_f1(y, scores, k, sample_weight)?,
        macro_f1: macro_f1(y, scores, k, sample_weight)?,
    })
}

/// The label-set threshold θ with the lowest weighted Hamming loss of the label sets
/// `{ℓ : f(x, ℓ) > θ}` on `(y, scores)` (docs/explanation/multiclass.md#multiclass-mr: AdaBoost.MR learns a ranking, not a
/// threshold, so its label sets use one learned on the training data).
///
/// Candidates: the midpoints between consecutive distinct scores, and one below the lowest and
/// one above the highest score (`min − 1`, `max + 1`), so that every distinct labelling by a
/// threshold is tried once; 0 is tried first and kept on ties (a model whose zero threshold is
/// already optimal keeps `f > 0`), then the lowest loss, ties to the candidate nearest 0. One sort
/// of the `n·k` scores, then one sweep: O(nk log nk).
pub fn best_threshold(y: &[f64], scores: &[f64], k: usize, sample_weight: Option<&[f64]>) -> Result<f64> {
    let n = check(y, scores, k, sample_weight)?;
    let w = |i: usize| sample_weight.map_or(1.0, |w| w[i]);
    // Entries (score, weight if relevant, weight if irrelevant), sorted by score.
    let mut e: Vec<(f64, f64, f64)> = (0..n * k)
        .map(|j| {
            let wi = w(j / k);
            if y[j] > 0.0 {
                (scores[j], wi, 0.0)
            } else {
                (scores[j], 0.0, wi)
            }
        })
        .collect();
    e.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Hamming loss (unnormalised) at θ = 0: relevant with f ≤ 0 plus irrelevant with f > 0.
    let loss_at = |theta: f64| -> f64 { e.iter().map(|&(f, pos, neg)| if f > theta { neg } else { pos }).sum() };
    let (mut best_t, mut best): (f64, f64) = (0.0, loss_at(0.0));
    // Sweep: θ below every score predicts everything relevant, loss = Σ irrelevant weights; each
    // group of equal scores passed moves its entries to "predicted irrelevant".
    let mut loss: f64 = e.iter().map(|x| x.2).sum();
    let mut consider = |theta: f64, loss: f64| {
        if loss < best || (loss == best && theta.abs() < best_t.abs()) {
            best = loss;
            best_t = theta;
        }
    };
    let Some(first) = e.first() else { return Ok(0.0) };
    consider(first.0 - 1.0, loss);
    let mut i = 0;
    while i < e.len() {
        let f = e[i].0;
        while i < e.len() && e[i].0 == f {
            loss += e[i].1 - e[i].2;
            i += 1;
        }
        let next = if i < e.len() { f + (e[i].0 - f) / 2.0 } else { f + 1.0 };
        consider(next, loss);
    }
    // The sweep's running sums may round differently from a direct sum: keep 0 unless it is
    // really worse.
    if best_t != 0.0 && loss_at(best_t) >= loss_at(0.0) {
        best_t = 0.0;
    }
    Ok(best_t)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a panic is the failure report
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The hand-built problem: 6 examples, 3 labels. Relevant sets and scores:
    ///
    /// | i | Y_i       | f(x_i, ·)          | ranking (ranks, ties pessimistic) | H_i = {f > 0} |
    /// |---|-----------|--------------------|-----------------------------------|---------------|
    /// | 0 | {0}       | ( 2.0,  1.0, −1.0) | 0:1, 1:2, 2:3                     | {0, 1}        |
    /// | 1 | {1, 2}    | ( 0.5, −0.5,  1.5) | 2:1, 0:2, 1:3                     | {0, 2}        |
    /// | 2 | {0, 2}    | (−1.0,  0.0,  0.3) | 2:1, 1:2, 0:3                     | {2}           |
    /// | 3 | {1}       | ( 1.0,  1.0, −2.0) | 0:2, 1:2 (tied), 2:3              | {0, 1}        |
    /// | 4 | {}        | (−1.0, −2.0,  0.5) | 2:1, 0:2, 1:3                     | {2}           |
    /// | 5 | {0, 1, 2} | ( 0.2,  0.4, −0.1) | 1:1, 0:2, 2:3                     | {0, 1}        |
    fn problem() -> (Vec<f64>, Vec<f64>) {
        let y01 = [
            1., 0., 0., //
            0., 1., 1., //
            1., 0., 1., //
            0., 1., 0., //
            0., 0., 0., //
            1., 1., 1.,
        ];
        let f = [
            2.0, 1.0, -1.0, //
            0.5, -0.5, 1.5, //
            -1.0, 0.0, 0.3, //
            1.0, 1.0, -2.0, //
            -1.0, -2.0, 0.5, //
            0.2, 0.4, -0.1,
        ];
        (y01.to_vec(), f.to_vec())
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }

    #[test]
    fn hand_built_problem() {
        let (y, f) = problem();
        // Hamming: mismatches per example {1} → 1, {0,1} → 2, {0} → 1, {0} → 1, {2} → 1, {2} → 1;
        // total 7 of 18.
        close(hamming_loss(&y, &f, 3, None).unwrap(), 7.0 / 18.0);
        // One-error: tops 0 ✓, 2 ✓, 2 ✓, 0 (tie 0/1 → 0) ✗, 2 ✗ (Y empty), 1 ✓ → 2/6.
        close(one_error(&y, &f, 3, None).unwrap(), 2.0 / 6.0);
        // Ranking loss over examples 0–3 (4 and 5 have no crucial pair):
        // 0: pairs (1,0),(2,0): 0 wrong → 0.
        // 1: pairs (0,1),(0,2): f1 = −0.5 ≤ 0.5 wrong, f2 = 1.5 fine → 1/2.
        // 2: pairs (1,0),(1,2): f0 = −1 ≤ 0 wrong, f2 = 0.3 fine → 1/2.
        // 3: pairs (0,1),(2,1): f1 = 1 ≤ f0 = 1 (tie) wrong, f1 > f2 fine → 1/2.
        // mean = (0 + ½ + ½ + ½)/4 = 3/8.
        close(ranking_loss(&y, &f, 3, None).unwrap(), 3.0 / 8.0);
        // Coverage over examples with a relevant label (all but 4): max relevant rank − 1:
        // 0: 1−1 = 0; 1: rank(1) = 3 → 2; 2: rank(0) = 3 → 2; 3: rank(1) = 2 → 1; 5: 3 → 2.
        // mean = 7/5.
        close(coverage(&y, &f, 3, None).unwrap(), 7.0 / 5.0);
        // Average precision:
        // 0: label 0 rank 1, 1 relevant at or above → 1.
        // 1: label 2 rank 1 → 1/1; label 1 rank 3, relevant at or above {1,2} → 2/3; mean 5/6.
        // 2: label 2 rank 1 → 1; label 0 rank 3 → 2/3; mean 5/6.
        // 3: label 1 rank 2 (tie), relevant at or above 1 → 1/2.
        // 5: all relevant: 1/1, 2/2, 3/3 → 1.
        // mean = (1 + 5/6 + 5/6 + 1/2 + 1)/5 = (25/6)/5 = 5/6.
        close(average_precision(&y, &f, 3, None).unwrap(), 5.0 / 6.0);
        // Subset accuracy: no H_i equals Y_i → 0.
        close(subset_accuracy(&y, &f, 3, None).unwrap(), 0.0);
        // Jaccard: 0: {0}/{0,1} = 1/2; 1: {2}/{0,1,2} = 1/3; 2: {2}/{0,2} = 1/2; 3: {1}/{0,1} = 1/2;
        // 4: ∅/{2} = 0; 5: {0,1}/{0,1,2} = 2/3. Sum = 1/2+1/3+1/2+1/2+0+2/3 = 5/2 → mean 5/12.
        close(jaccard_accuracy(&y, &f, 3, None).unwrap(), 5.0 / 12.0);
        // Per label (tp, fp, fn):
        // label 0: relevant {0,2,5}, predicted {0,1,3,5}: tp 2 (0,5), fp 2 (1,3), fn 1 (2) → F1 4/7.
        // label 1: relevant {1,3,5}, predicted {0,3,5}: tp 2, fp 1 (0), fn 1 (1) → F1 4/6 = 2/3.
        // label 2: relevant {1,2,5}, predicted {1,2,4}: tp 2, fp 1 (4), fn 1 (5) → F1 2/3.
        // Micro: tp 6, fp 4, fn 3 → 12/19. Macro: (4/7 + 2/3 + 2/3)/3 = (12/21+28/21)/3 = 40/63.
        close(micro_f1(&y, &f, 3, None).unwrap(), 12.0 / 19.0);
        close(macro_f1(&y, &f, 3, None).unwrap(), 40.0 / 63.0);

        // ±1 labels give the same numbers as 0/1 labels.
        let ypm: Vec<f64> = y.iter().map(|&v| 2.0 * v - 1.0).collect();
        assert_eq!(report(&y, &f, 3, None).unwrap(), report(&ypm, &f, 3, None).unwrap());
    }

    #[test]
    fn sample_weights_weight_examples() {
        let (y, f) = problem();
        // Weight 2 on example 1 equals duplicating it.
        let w = [1.0, 2.0, 1.0, 1.0, 1.0, 1.0];
        let mut y2 = y.clone();
        let mut f2 = f.clone();
        y2.extend_from_slice(&y[3..6]);
        f2.extend_from_slice(&f[3..6]);
        let a = report(&y, &f, 3, Some(&w)).unwrap();
        let b = report(&y2, &f2, 3, None).unwrap();
        let pairs = [
            (a.hamming_loss, b.hamming_loss),
            (a.one_error, b.one_error),
            (a.ranking_loss, b.ranking_loss),
            (a.coverage, b.coverage),
            (a.average_precision, b.average_precision),
            (a.subset_accuracy, b.subset_accuracy),
            (a.jaccard_accuracy, b.jaccard_accuracy),
            (a.micro_f1, b.micro_f1),
            (a.macro_f1, b.macro_f1),
        ];
        for (p, q) in pairs {
            close(p, q);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let (y, f) = problem();
        assert!(hamming_loss(&y, &f[..17], 3, None).is_err());
        assert!(hamming_loss(&y, &f, 0, None).is_err());
        assert!(hamming_loss(&y, &f, 4, None).is_err());
        let mut bad = y.clone();
        bad[0] = 2.0;
        assert!(one_error(&bad, &f, 3, None).is_err());
        let mut nan = f.clone();
        nan[4] = f64::NAN;
        assert!(ranking_loss(&y, &nan, 3, None).is_err());
        assert!(coverage(&y, &f, 3, Some(&[1.0; 5])).is_err());
        assert!(coverage(&y, &f, 3, Some(&[0.0; 6])).is_err());
        assert!(coverage(&y, &f, 3, Some(&[1.0, -1.0, 1.0, 1.0, 1.0, 1.0])).is_err());
    }

    /// Naive O(k²) ranking statistics, straight from the definitions.
    fn naive_rank_stats(rel: &[bool], f: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
        let k = f.len();
        let rank = |l: usize| (0..k).filter(|&m| f[m] >= f[l]).count();
        let r: Vec<usize> = (0..k).filter(|&l| rel[l]).collect();
        let ir: Vec<usize> = (0..k).filter(|&l| !rel[l]).collect();
        let rl = (!r.is_empty() && !ir.is_empty()).then(|| {
            let bad =
                r.iter().flat_map(|&l1| ir.iter().map(move |&l0| (l0, l1))).filter(|&(l0, l1)| f[l1] <= f[l0]).count();
            bad as f64 / (r.len() * ir.len()) as f64
        });
        let cov = (!r.is_empty()).then(|| (r.iter().map(|&l| rank(l)).max().unwrap() - 1) as f64);
        let ap = (!r.is_empty()).then(|| {
            r.iter()
                .map(|&l| {
                    let above = r.iter().filter(|&&m| rank(m) <= rank(l)).count();
                    above as f64 / rank(l) as f64
                })
                .sum::<f64>()
                / r.len() as f64
        });
        (rl, cov, ap)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn sorted_ranking_metrics_match_naive(
            k in 1usize..6,
            rows in proptest::collection::vec((proptest::collection::vec(any::<bool>(), 6),
                                               proptest::collection::vec(-2i32..3, 6)), 1..8),
        ) {
            let mut y = Vec::new();
            let mut f = Vec::new();
            for (r, s) in &rows {
                y.extend(r[..k].iter().map(|&b| if b { 1.0 } else { -1.0 }));
                // Small integer scores: many ties.
                f.extend(s[..k].iter().map(|&v| f64::from(v)));
            }
            let n = rows.len();
            let (mut rl, mut cv, mut ap) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..n {
                let rel: Vec<bool> = y[i * k..(i + 1) * k].iter().map(|&v| v > 0.0).collect();
                let (a, b, c) = naive_rank_stats(&rel, &f[i * k..(i + 1) * k]);
                rl.extend(a);
                cv.extend(b);
                ap.extend(c);
            }
            let mean = |v: &Vec<f64>| if v.is_empty() { 0.0 } else { v.iter().sum::<f64>() / v.len() as f64 };
            prop_assert!((ranking_loss(&y, &f, k, None).unwrap() - mean(&rl)).abs() < 1e-12);
            prop_assert!((coverage(&y, &f, k, None).unwrap() - mean(&cv)).abs() < 1e-12);
            prop_assert!((average_precision(&y, &f, k, None).unwrap() - mean(&ap)).abs() < 1e-12);

            // docs/explanation/multiclass.md#multiclass-mr: one-error ≤ (k − 1) · rloss, over examples that have a crucial pair.
            let keep: Vec<usize> = (0..n).filter(|&i| {
                let c = y[i * k..(i + 1) * k].iter().filter(|&&v| v > 0.0).count();
                c > 0 && c < k
            }).collect();
            if !keep.is_empty() {
                let ys: Vec<f64> = keep.iter().flat_map(|&i| y[i * k..(i + 1) * k].to_vec()).collect();
                let fs: Vec<f64> = keep.iter().flat_map(|&i| f[i * k..(i + 1) * k].to_vec()).collect();
                let oe = one_error(&ys, &fs, k, None).unwrap();
                let rl = ranking_loss(&ys, &fs, k, None).unwrap();
                prop_assert!(oe <= (k as f64 - 1.0) * rl + 1e-12, "one-error {} rloss {}", oe, rl);
            }
        }
    }

    #[test]
    fn best_threshold_matches_a_brute_force_search() {
        let mut rng = ChaCha8Rng::seed_from_u64(16);
        for case in 0..200 {
            let (n, k) = (rng.gen_range(1..12), rng.gen_range(1..5));
            let shift = rng.gen_range(-1.5..1.5);
            // Few distinct values, so that ties are common.
            let scores: Vec<f64> = (0..n * k).map(|_| f64::from(rng.gen_range(-4i32..5)) / 2.0).collect();
            let y: Vec<f64> =
                scores.iter().map(|&f| if f + rng.gen_range(-1.0..1.0) > shift { 1.0 } else { -1.0 }).collect();
            let w: Option<Vec<f64>> = (case % 2 == 1).then(|| (0..n).map(|_| rng.gen_range(0.0..2.0)).collect());
            if w.as_ref().is_some_and(|w| w.iter().sum::<f64>() == 0.0) {
                continue;
            }
            let loss = |t: f64| {
                let shifted: Vec<f64> = scores.iter().map(|f| f - t).collect();
                hamming_loss(&y, &shifted, k, w.as_deref()).unwrap()
            };
            // Every threshold: midpoints of the sorted distinct scores and beyond both ends.
            let mut d = scores.clone();
            d.sort_by(f64::total_cmp);
            d.dedup();
            let mut cands = vec![d[0] - 1.0, d[d.len() - 1] + 1.0, 0.0];
            cands.extend(d.windows(2).map(|p| (p[0] + p[1]) / 2.0));
            let best = cands.iter().map(|&t| loss(t)).fold(f64::INFINITY, f64::min);
            let t = best_threshold(&y, &scores, k, w.as_deref()).unwrap();
            assert!((loss(t) - best).abs() <= 1e-12, "case {case}: θ = {t}, loss {} vs best {best}", loss(t));
            if (loss(0.0) - best).abs() <= 1e-12 {
                assert_eq!(t, 0.0, "case {case}: 0 is optimal and kept");
            }
        }
        // By hand: relevant labels score 1, 2; irrelevant 0.5, 3 → θ in (0.5, 1) gives loss 1/4.
        let t = best_threshold(&[1.0, 1.0, -1.0, -1.0], &[1.0, 2.0, 0.5, 3.0], 4, None).unwrap();
        assert_eq!(t, 0.75);
    }
}
