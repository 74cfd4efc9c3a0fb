//! Boosters. The driver ([`driver`]) owns the single boosting loop; each booster supplies the
//! per-example statistics for the tree learner and, once the tree is grown, turns its outputs on the
//! training set into α and a weight update (or a stop with a reason).
//!
//! Boosters never see histograms, and the tree learner never sees what the weights mean.

pub mod adaboost;
pub mod driver;
pub mod multiclass;
pub mod preset;
pub mod secboost;
pub mod tadaboost;
pub mod trainer;
pub mod validation;

use std::collections::BTreeMap;

pub(crate) use crate::data::total_weight;
use crate::error::Result;
use crate::tree::{Criterion, LeafRule};

/// Per-round diagnostics: name → value. Keys are the JSON-log field names (`alpha`, `z`, ...).
pub type Diagnostics = BTreeMap<&'static str, f64>;

/// Training labels as the boosters see them: an `n × k` row-major matrix of ±1
/// (`k = 1` for binary problems, `k` labels for multi-label, one-hot ±1 for multi-class).
#[derive(Debug, Clone, Copy)]
pub struct Labels<'a> {
    /// Number of examples.
    pub n: usize,
    /// Number of label columns.
    pub k: usize,
    /// `y[i * k + l] ∈ {−1, +1}`.
    pub y: &'a [f64],
    /// For single-label (multi-class) data, the class index of each example.
    pub class: Option<&'a [u32]>,
    /// Optional sample weights (non-negative, finite, not all zero), length `n`: frequency
    /// weights (see [`Labels::total_weight`]).
    pub sample_weight: Option<&'a [f64]>,
}

impl Labels<'_> {
    /// The number of examples `m` wherever a booster's formula counts them (the smoothing
    /// `ε = 1/(2m)`, t-AdaBoost's `m^(1−t*)`, ...): `Σ wᵢ` with sample weights, `n` without.
    /// Sample weights are frequency weights: an integer weight `w` is the same as the
    /// row repeated `w` times, so every count of rows is a sum of weights.
    pub fn total_weight(&self) -> f64 {
        total_weight(self.n, self.sample_weight)
    }
}

/// One signed statistic (see [`Booster::statistics`]): the weight `w ≥ 0` carrying the sign of the
/// label, `+w` for a positive label and `−w` (`−0.0` when `w = 0`) otherwise.
#[inline]
pub(crate) fn signed(label: f64, w: f64) -> f64 {
    if label > 0.0 {
        w
    } else {
        -w
    }
}

/// Test helper: signed statistics (`n × k`) as `(W+, W−)` pairs (`n × 2k`).
#[cfg(test)]
pub(crate) fn expand_signed(s: &[f64]) -> Vec<f64> {
    s.iter().flat_map(|&v| if v.is_sign_negative() { [0.0, -v] } else { [v, 0.0] }).collect()
}

/// Test helper: `(W+, W−)` pairs with at most one non-zero side as signed statistics.
#[cfg(test)]
pub(crate) fn signed_of_pairs(pairs: &[f64]) -> Vec<f64> {
    pairs.chunks_exact(2).map(|p| if p[1] > 0.0 { -p[1] } else { p[0] }).collect()
}

/// What a booster decides after seeing the round's tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Add the tree with weight `alpha` and continue.
    Add {
        /// The tree's weight α (finite).
        alpha: f64,
    },
    /// Add the tree with weight `alpha`, then stop for `reason`.
    AddAndStop {
        /// The tree's weight α (finite).
        alpha: f64,
        /// Why boosting stops (logged as `stop_reason`).
        reason: String,
    },
    /// Discard the tree and stop for `reason`.
    Stop {
        /// Why boosting stops (logged as `stop_reason`).
        reason: String,
    },
}

/// One booster's side of the boosting loop.
///
/// Required: [`n_outputs`](Booster::n_outputs), [`default_criterion`](Booster::default_criterion),
/// [`leaf_rule`](Booster::leaf_rule), [`statistics`](Booster::statistics) (what the tree learner
/// sums), [`step`](Booster::step) (α and the weight update from the tree's outputs) and
/// [`set_learning_rate`](Booster::set_learning_rate). Everything else has a default:
/// [`finish_leaves`](Booster::finish_leaves) and [`set_collective`](Booster::set_collective) are
/// capabilities, and [`step_then_statistics`](Booster::step_then_statistics) and
/// [`step_on_leaves`](Booster::step_on_leaves) are optional fast paths that fuse the step with the
/// next round's statistics (one or two passes over the rows less) and must give the same bits as
/// the required pair. A new booster implements the six required methods and nothing else.
pub trait Booster: Send {
    /// Number of outputs per leaf (1 for binary boosters, k for multi-label): also the number of
    /// statistics per example.
    fn n_outputs(&self) -> usize;

    /// Width of a histogram cell: a `(W+, W−)` pair per output.
    fn stat_width(&self) -> usize {
        2 * self.n_outputs()
    }

    /// The split criterion the booster wants when the user did not choose one.
    fn default_criterion(&self) -> Criterion;

    /// How leaves turn their statistics into values this round.
    fn leaf_rule(&self) -> LeafRule;

    /// Adjusts the grown tree's leaf values (`n_leaves × n_outputs`) before they are used, e.g. to
    /// keep every output non-zero (SecBoost). By default does nothing.
    fn finish_leaves(&self, _values: &mut [f64]) {}

    /// Fills `stats` (`n × n_outputs`, row-major) with this round's signed statistics: for output
    /// ℓ of example i with weight `d ≥ 0` and label `Y_i[ℓ] ∈ {−1, +1}`, the value `Y_i[ℓ]·d` (use
    /// `signed`, which writes `−0.0` for a zero weight of a negative label). The tree learner adds
    /// `|s|` to the `W+` or the `W−` side of the histogram by the sign bit of `s`: half the memory
    /// traffic of a `(W+, W−)` pair per example, of which one side is always zero.
    fn statistics(&self, stats: &mut [f64]);

    /// After the tree is grown: `h` holds its outputs on the training rows (`n × n_outputs`).
    /// Records the round's diagnostics in `diag` and returns the step.
    /// With a learning rate ν ≠ 1 ([`Booster::set_learning_rate`]), the returned α is the shrunk
    /// one, and the booster's state was updated with it.
    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step>;

    /// Sets the learning rate ν ∈ (0, 1]: every later step scales its α by ν before
    /// its weight update (t-AdaBoost: µ; SecBoost: the α of Solve_α), so the booster's state is
    /// that of the shrunk model. Called once, before the first step; ν = 1 changes nothing.
    fn set_learning_rate(&mut self, lr: f64);

    /// [`Booster::step`], then [`Booster::statistics`] for the next round into `stats`. A booster
    /// may fuse the two passes over the examples; the results must be the same as the
    /// two calls'. After a [`Step::Stop`], `stats` may be left as it was.
    fn step_then_statistics(&mut self, h: &[f64], diag: &mut Diagnostics, stats: &mut [f64]) -> Result<Step> {
        let step = self.step(h, diag)?;
        self.statistics(stats);
        Ok(step)
    }

    /// [`Booster::step_then_statistics`] on a grown tree given by its leaves:
    /// `leaf_of_row[i]` is row i's leaf and `leaf_values` (`n_leaves × n_outputs`) the leaves'
    /// values, so the outputs are `h[i] = leaf_values[leaf_of_row[i]]`. By default writes them
    /// into the scratch `h` (`n × n_outputs`) and calls [`Booster::step_then_statistics`]; a booster
    /// may read the leaves instead of `h` (one pass over the rows less), with the same results.
    fn step_on_leaves(
        &mut self,
        leaf_of_row: &[u32],
        leaf_values: &[f64],
        h: &mut [f64],
        diag: &mut Diagnostics,
        stats: &mut [f64],
    ) -> Result<Step> {
        driver::tree_outputs(leaf_of_row, leaf_values, self.n_outputs(), h);
        self.step_then_statistics(h, diag, stats)
    }

    /// Distributed training: from now on every sum over the examples is summed over
    /// the ranks of `c` too (the booster holds this rank's examples, `labels`, as given to its
    /// constructor); the booster also redoes, with the totals over the ranks, whatever its
    /// constructor derived from its examples (the initial distribution, `m = Σ w`, ...). Called once, before the first [`Booster::statistics`], only
    /// when there are several ranks. By default an error: the booster cannot train distributed.
    fn set_collective(&mut self, _c: crate::collective::Shared, _labels: Labels<'_>) -> Result<()> {
        Err(crate::error::Error::Distributed("this algorithm cannot train distributed".into()))
    }
}

/// `ν·α` when `ν ≠ 1`, else `α` itself (at ν = 1 every result stays bit-identical).
#[inline]
pub(crate) fn shrink(lr: f64, alpha: f64) -> f64 {
    if lr == 1.0 {
        alpha
    } else {
        lr * alpha
    }
}

/// A step with its α shrunk by `lr` (see [`shrink`]).
pub(crate) fn shrink_step(lr: f64, step: Step) -> Step {
    match step {
        Step::Add { alpha } => Step::Add { alpha: shrink(lr, alpha) },
        Step::AddAndStop { alpha, reason } => Step::AddAndStop { alpha: shrink(lr, alpha), reason },
        s @ Step::Stop { .. } => s,
    }
}
