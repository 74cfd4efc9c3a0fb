//! Classification metrics on ensemble scores.
//!
//! Binary labels are ±1 and a score `f` predicts +1 iff `f > 0`: a score of exactly 0 (or NaN)
//! predicts the negative class (docs/explanation/tadaboost.md#tadaboost-algorithm: never a random class). Probabilities are
//! the papers' `P(y = +1 | x) = 1/(1 + e^(−2f))` (docs/explanation/adaboost.md#adaboost-probabilities; a calibrated
//! model's scale is applied by [`crate::Ensemble::proba_from_scores`], docs/explanation/probabilities.md). Multi-class
//! scores are row-major `n × k` and predict the first maximal column.

use crate::error::{Error, Result};

fn check_binary(y: &[f64], scores: &[f64]) -> Result<()> {
    if y.len() != scores.len() {
        return Err(Error::InvalidData(format!("{} labels but {} scores", y.len(), scores.len())));
    }
    if y.is_empty() {
        return Err(Error::InvalidData("no examples to evaluate".into()));
    }
    if let Some(i) = y.iter().position(|&v| v != 1.0 && v != -1.0) {
        return Err(Error::InvalidData(format!("binary label of row {i} is {}, expected −1 or +1", y[i])));
    }
    Ok(())
}

/// The predicted ±1 class of a score: +1 iff `score > 0` (0 and NaN give −1).
#[inline]
pub fn predict_binary(score: f64) -> f64 {
    if score > 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// Binary error rate: the fraction of rows with `predict_binary(score) ≠ y`, labels ±1.
pub fn binary_error(y: &[f64], scores: &[f64]) -> Result<f64> {
    check_binary(y, scores)?;
    let wrong = y.iter().zip(scores).filter(|&(&y, &f)| predict_binary(f) != y).count();
    Ok(wrong as f64 / y.len() as f64)
}

/// Binary accuracy, `1 − binary_error`.
pub fn accuracy(y: &[f64], scores: &[f64]) -> Result<f64> {
    Ok(1.0 - binary_error(y, scores)?)
}

/// `ln(1 + e^x)` without overflow or loss of precision.
fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// Mean log-loss (nats) of `p = 1/(1 + e^(−2f))` (docs/explanation/adaboost.md#adaboost-discrete): `mean_i ln(1 + e^(−2 y_i f_i))`,
/// evaluated stably (finite for every finite score).
pub fn log_loss(y: &[f64], scores: &[f64]) -> Result<f64> {
    check_binary(y, scores)?;
    // docs/explanation/adaboost.md#adaboost-discrete: −ln P(y | x) = −ln σ(2 y f) = ln(1 + e^(−2 y f)).
    let total: f64 = y.iter().zip(scores).map(|(&y, &f)| softplus(-2.0 * y * f)).sum();
    Ok(total / y.len() as f64)
}

/// Area under the ROC curve: the probability that a random positive scores above a random
/// negative, ties counted ½ (Mann–Whitney U with average ranks). Requires both classes and no NaN
/// score.
pub fn auc(y: &[f64], scores: &[f64]) -> Result<f64> {
    check_binary(y, scores)?;
    if scores.iter().any(|f| f.is_nan()) {
        return Err(Error::InvalidData("AUC of a NaN score".into()));
    }
    let n_pos = y.iter().filter(|&&v| v > 0.0).count();
    let n_neg = y.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return Err(Error::InvalidData("AUC needs both classes".into()));
    }
    let mut order: Vec<usize> = (0..y.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    // Sum of the (1-based, tie-averaged) ranks of the positives.
    let mut rank_sum_pos = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            end += 1;
        }
        let avg_rank = (start + 1 + end) as f64 / 2.0;
        let pos_in_group = order[start..end].iter().filter(|&&i| y[i] > 0.0).count();
        rank_sum_pos += avg_rank * pos_in_group as f64;
        start = end;
    }
    let (p, n) = (n_pos as f64, n_neg as f64);
    Ok((rank_sum_pos - p * (p + 1.0) / 2.0) / (p * n))
}

/// The predicted class of each row of row-major `n × k` scores: the first column holding the
/// row's maximum (NaN entries are never chosen unless the whole row is NaN, then class 0).
pub fn argmax_rows(scores: &[f64], k: usize) -> Result<Vec<u32>> {
    if k == 0 || !scores.len().is_multiple_of(k) {
        return Err(Error::InvalidData(format!("{} scores do not form rows of {k} classes", scores.len())));
    }
    Ok(scores
        .chunks_exact(k)
        .map(|row| {
            let mut best = 0;
            for (j, &v) in row.iter().enumerate() {
                if v > row[best] || (row[best].is_nan() && !v.is_nan()) {
                    best = j;
                }
            }
            best as u32
        })
        .collect())
}

/// Multi-class error rate: the fraction of rows whose [`argmax_rows`] class differs from
/// `class[i]`; `scores` is row-major `class.len() × k`.
pub fn multiclass_error(class: &[u32], scores: &[f64], k: usize) -> Result<f64> {
    let pred = argmax_rows(scores, k)?;
    if pred.len() != class.len() {
        return Err(Error::InvalidData(format!("{} labels but {} score rows", class.len(), pred.len())));
    }
    if class.is_empty() {
        return Err(Error::InvalidData("no examples to evaluate".into()));
    }
    let wrong = class.iter().zip(&pred).filter(|(a, b)| a != b).count();
    Ok(wrong as f64 / class.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn error_and_accuracy_zero_score_is_negative() {
        let y = [1.0, -1.0, 1.0, -1.0, 1.0];
        let f = [0.5, 0.0, 0.0, -2.0, f64::NAN];
        // Wrong: row 2 (score 0 → −1) and row 4 (NaN → −1).
        assert_eq!(binary_error(&y, &f).expect("ok"), 0.4);
        assert!((accuracy(&y, &f).expect("ok") - 0.6).abs() < 1e-15);
        assert!(binary_error(&y, &f[..4]).is_err());
        assert!(binary_error(&[0.0], &[1.0]).is_err());
        assert!(binary_error(&[], &[]).is_err());
    }

    #[test]
    fn log_loss_values() {
        // f = 0 → p = ½ → ln 2.
        let l = log_loss(&[1.0, -1.0], &[0.0, 0.0]).expect("ok");
        assert!((l - 2f64.ln()).abs() < 1e-15);
        // y = +1, f = 0.5: p = 1/(1 + e^−1) → −ln p = ln(1 + e^−1).
        let l = log_loss(&[1.0], &[0.5]).expect("ok");
        assert!((l - (1.0 + (-1f64).exp()).ln()).abs() < 1e-15);
        // Extreme scores stay finite: −ln σ(−2000) = 2000 (+ e^−2000).
        let l = log_loss(&[-1.0, 1.0], &[1000.0, 1000.0]).expect("ok");
        assert!((l - 1000.0).abs() < 1e-9, "{l}");
    }

    /// O(n²) pair count, ties ½.
    fn naive_auc(y: &[f64], f: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut pairs = 0.0;
        for i in 0..y.len() {
            for j in 0..y.len() {
                if y[i] > 0.0 && y[j] < 0.0 {
                    pairs += 1.0;
                    if f[i] > f[j] {
                        s += 1.0;
                    } else if f[i] == f[j] {
                        s += 0.5;
                    }
                }
            }
        }
        s / pairs
    }

    #[test]
    fn auc_golden() {
        // Positives 0.8, 0.4; negatives 0.4, 0.1: pairs (0.8>0.4)=1, (0.8>0.1)=1, (0.4=0.4)=½,
        // (0.4>0.1)=1 → 3.5/4.
        let auc = auc(&[1.0, 1.0, -1.0, -1.0], &[0.8, 0.4, 0.4, 0.1]).expect("ok");
        assert_eq!(auc, 0.875);
        assert_eq!(super::auc(&[1.0, -1.0], &[0.0, 0.0]).expect("ok"), 0.5);
        assert!(super::auc(&[1.0, 1.0], &[0.0, 1.0]).is_err());
        assert!(super::auc(&[1.0, -1.0], &[f64::NAN, 1.0]).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn auc_matches_naive(
            rows in proptest::collection::vec((any::<bool>(), 0i32..6), 2..60)
        ) {
            let y: Vec<f64> = rows.iter().map(|r| if r.0 { 1.0 } else { -1.0 }).collect();
            let f: Vec<f64> = rows.iter().map(|r| r.1 as f64 * 0.5).collect();
            prop_assume!(y.iter().any(|&v| v > 0.0) && y.iter().any(|&v| v < 0.0));
            let a = auc(&y, &f).expect("valid");
            prop_assert!((a - naive_auc(&y, &f)).abs() < 1e-12);
        }
    }

    #[test]
    fn multiclass() {
        let scores = [
            0.1,
            0.7,
            0.2, // → 1
            0.5,
            0.5,
            0.0, // tie → 0
            f64::NAN,
            -1.0,
            -2.0, // → 1
        ];
        assert_eq!(argmax_rows(&scores, 3).expect("ok"), vec![1, 0, 1]);
        let e = multiclass_error(&[1, 1, 1], &scores, 3).expect("ok");
        assert!((e - 1.0 / 3.0).abs() < 1e-15);
        assert!(multiclass_error(&[1, 1], &scores, 3).is_err());
        assert!(argmax_rows(&scores, 4).is_err());
        assert!(argmax_rows(&scores, 0).is_err());
    }
}
