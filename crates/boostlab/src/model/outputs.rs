//! What a model's outputs mean and how they are decoded: label scores (label sets, top label,
//! ranking) or the columns of an output code (docs/explanation/multiclass.md#multiclass-mh).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub use crate::params::multiclass::Decode;

/// An output code: a `k × k'` matrix of ±1, row `y` the codeword `λ(y)` of class `y` (docs/explanation/multiclass.md#multiclass-mo).
/// Stored row-major as `i8` so that a model file holds it verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CodeMatrix {
    /// Number of classes k (rows).
    pub n_classes: usize,
    /// Number of columns k' (binary problems).
    pub n_columns: usize,
    /// `entries[y * n_columns + c] ∈ {−1, +1}`.
    pub entries: Vec<i8>,
}

impl CodeMatrix {
    /// Validates a code read from a model file: sizes, ±1 entries, at least 2 classes and 1 column.
    pub fn check(&self) -> Result<()> {
        if self.n_classes < 2 || self.n_columns < 1 {
            return Err(Error::InvalidModel(format!(
                "output code of {} classes × {} columns",
                self.n_classes, self.n_columns
            )));
        }
        if self.n_classes.checked_mul(self.n_columns) != Some(self.entries.len()) {
            return Err(Error::InvalidModel(format!(
                "output code has {} entries, expected {} × {}",
                self.entries.len(),
                self.n_classes,
                self.n_columns
            )));
        }
        if let Some(e) = self.entries.iter().find(|&&e| e != 1 && e != -1) {
            return Err(Error::InvalidModel(format!("output code entry {e} (expected −1 or +1)")));
        }
        Ok(())
    }

    /// The codeword `λ(y)` of class `y < n_classes`.
    pub fn codeword(&self, y: usize) -> &[i8] {
        &self.entries[y * self.n_columns..(y + 1) * self.n_columns]
    }

    /// The minimum Hamming distance ρ between two codewords (docs/explanation/multiclass.md#multiclass-mo-bounds bounds).
    pub fn min_distance(&self) -> usize {
        let mut best = usize::MAX;
        for a in 0..self.n_classes {
            for b in a + 1..self.n_classes {
                let d = self.codeword(a).iter().zip(self.codeword(b)).filter(|(x, y)| x != y).count();
                best = best.min(d);
            }
        }
        best
    }
}

/// Per-class decoding losses of one row of column scores (length `k'`) into `out` (length `k`):
/// the Hamming distance of `sign f` to each codeword (a zero score counts ½) or the exponential
/// loss `Σ_ℓ' exp(−λ(y)[ℓ'] f(x, ℓ'))` (docs/explanation/multiclass.md#multiclass-mo). The predicted class minimises it.
pub fn decode_losses_into(code: &CodeMatrix, scores: &[f64], how: Decode, out: &mut [f64]) {
    debug_assert_eq!(scores.len(), code.n_columns);
    for (y, o) in out.iter_mut().enumerate().take(code.n_classes) {
        let cw = code.codeword(y);
        *o = match how {
            // docs/explanation/multiclass.md#multiclass-mo-decoding variant 1: |{ℓ' : sign f(x, ℓ') ≠ λ(y)[ℓ']}|.
            Decode::Hamming => cw
                .iter()
                .zip(scores)
                .map(|(&e, &f)| {
                    let m = f64::from(e) * f;
                    if m < 0.0 {
                        1.0
                    } else if m == 0.0 {
                        0.5
                    } else {
                        0.0
                    }
                })
                .sum(),
            // docs/explanation/multiclass.md#multiclass-mo-decoding variant 2: Σ_ℓ' exp(−λ(y)[ℓ'] f(x, ℓ')).
            Decode::Loss => cw.iter().zip(scores).map(|(&e, &f)| (-f64::from(e) * f).exp()).sum(),
        };
    }
}

/// `ln Σ_ℓ e^(−λ(y)_ℓ f_ℓ)`, the log of the exponential decoding loss of codeword `cw` (docs/explanation/multiclass.md#multiclass-mo
/// variant 2), by log-sum-exp: finite for any finite scores, where the loss itself may overflow.
pub fn log_decode_loss(cw: &[i8], scores: &[f64]) -> f64 {
    let m = cw.iter().zip(scores).map(|(&e, &f)| -f64::from(e) * f).fold(f64::NEG_INFINITY, f64::max);
    let z: f64 = cw.iter().zip(scores).map(|(&e, &f)| (-f64::from(e) * f - m).exp()).sum();
    m + z.ln()
}

/// Decodes one row of MO column scores into a class index (docs/explanation/multiclass.md#multiclass-mo). Ties go to the lowest
/// class index; exponential losses within a relative 1e−12 of each other count as tied (so that
/// rounding cannot break exact ties of the scores).
pub fn decode(code: &CodeMatrix, scores: &[f64], how: Decode) -> usize {
    let mut losses = vec![0.0; code.n_classes];
    decode_into(code, scores, how, &mut losses)
}

/// [`decode`] with a caller's scratch buffer of length `k`.
pub(crate) fn decode_into(code: &CodeMatrix, scores: &[f64], how: Decode, losses: &mut [f64]) -> usize {
    decode_losses_into(code, scores, how, losses);
    if how == Decode::Loss && losses.iter().any(|l| !(l.is_finite() && *l >= f64::MIN_POSITIVE)) {
        // A loss over- or underflowed (scores beyond ~700): compare the losses' logs instead, the
        // same order; the relative 1e−12 tie tolerance becomes an absolute one on the logs.
        for (y, l) in losses.iter_mut().enumerate() {
            *l = log_decode_loss(code.codeword(y), scores);
        }
        let mut best = 0;
        for (y, &l) in losses.iter().enumerate().skip(1) {
            if l < losses[best] - 1e-12 {
                best = y;
            }
        }
        return best;
    }
    argmin_tolerant(losses, if how == Decode::Loss { 1e-12 } else { 0.0 })
}

fn argmin_tolerant(losses: &[f64], rel: f64) -> usize {
    let mut best = 0;
    for (y, &l) in losses.iter().enumerate().skip(1) {
        let b = losses[best];
        if l < b - rel * b.abs() || b.is_nan() {
            best = y;
        }
    }
    best
}

// ------------------------------------------------------------------------------------------------
// Prediction helpers

/// The predicted label set `{ℓ : f(x, ℓ) > 0}` of one score row (docs/explanation/multiclass.md#multiclass-mh), in increasing order.
pub fn label_set(scores: &[f64]) -> Vec<usize> {
    scores.iter().enumerate().filter(|(_, &f)| f > 0.0).map(|(l, _)| l).collect()
}

/// The top label `argmax_ℓ f(x, ℓ)` of one score row (docs/explanation/multiclass.md#multiclass-mh, one-error); ties go to the lowest
/// index, NaN scores are never chosen, and an empty or all-NaN row gives 0.
pub fn top_label(scores: &[f64]) -> usize {
    let mut best: Option<(usize, f64)> = None;
    for (l, &f) in scores.iter().enumerate() {
        if f.is_nan() {
            continue;
        }
        match best {
            Some((_, b)) if f <= b => {}
            _ => best = Some((l, f)),
        }
    }
    best.map_or(0, |(l, _)| l)
}

/// The labels of one score row ranked by decreasing score, ties by increasing index, NaN last.
pub fn ranking(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| {
        let (fa, fb) = (scores[a], scores[b]);
        match (fa.is_nan(), fb.is_nan()) {
            (true, true) => a.cmp(&b),
            (true, false) => std::cmp::Ordering::Greater,
            (false, true) => std::cmp::Ordering::Less,
            // `partial_cmp` keeps −0.0 and +0.0 tied.
            (false, false) => fb.partial_cmp(&fa).unwrap_or(std::cmp::Ordering::Equal).then(a.cmp(&b)),
        }
    });
    order
}

/// What a multi-class model's `k'` outputs per row mean and how to turn them into classes: the
/// one thing the model file must store besides the trees and α's.
///
/// - MH and MR/M2: the outputs are the label scores `f(x, ℓ)` themselves (`k' = k`); the label set
///   is `{ℓ : f > 0}` ([`label_set`]), the single-label prediction is [`top_label`], the ranking
///   [`ranking`].
/// - MO: the outputs are the `k'` column scores; the model stores the code matrix and the decoding
///   and predicts [`decode`]; the per-class decision values are minus the decoding losses
///   ([`decode_losses_into`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MultiOutput {
    /// Outputs are per-label scores.
    LabelScores {
        /// Number of labels k.
        n_labels: usize,
    },
    /// Outputs are the columns of an output code.
    Code {
        /// The code `λ`, `k × k'`.
        code: CodeMatrix,
        /// How to decode.
        decode: Decode,
    },
}

impl MultiOutput {
    /// Number of outputs per row (`k`, or `k'` for a code).
    pub fn n_outputs(&self) -> usize {
        match self {
            MultiOutput::LabelScores { n_labels } => *n_labels,
            MultiOutput::Code { code, .. } => code.n_columns,
        }
    }

    /// Number of classes (labels) k.
    pub fn n_classes(&self) -> usize {
        match self {
            MultiOutput::LabelScores { n_labels } => *n_labels,
            MultiOutput::Code { code, .. } => code.n_classes,
        }
    }

    /// Validates a description read from a model file.
    pub fn check(&self) -> Result<()> {
        match self {
            MultiOutput::LabelScores { n_labels: 0 } => Err(Error::InvalidModel("model has 0 labels".into())),
            MultiOutput::LabelScores { .. } => Ok(()),
            MultiOutput::Code { code, .. } => code.check(),
        }
    }

    /// The single-label prediction of one row of outputs (length [`Self::n_outputs`]).
    pub fn predict_class(&self, outputs: &[f64]) -> usize {
        match self {
            MultiOutput::LabelScores { .. } => top_label(outputs),
            MultiOutput::Code { code, decode: how } => decode(code, outputs, *how),
        }
    }

    /// Per-class decision values of one row of outputs into `out` (length [`Self::n_classes`]):
    /// the scores themselves, or minus the decoding losses for a code. Larger is more likely.
    pub fn class_scores_into(&self, outputs: &[f64], out: &mut [f64]) {
        match self {
            MultiOutput::LabelScores { .. } => out.copy_from_slice(outputs),
            MultiOutput::Code { code, decode: how } => {
                decode_losses_into(code, outputs, *how, out);
                for v in out.iter_mut() {
                    *v = -*v;
                }
            }
        }
    }
}
