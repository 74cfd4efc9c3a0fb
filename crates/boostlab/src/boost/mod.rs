//! Boosters. The driver ([`driver`]) owns the single boosting loop; each booster supplies the
//! per-example statistics for the tree learner and, once the tree is grown, turns its outputs on the
//! training set into α and a weight update (or a stop with a reason).
//!
//! Boosters never see histograms, and the tree learner never sees what the weights mean.

pub mod adaboost;
pub mod driver;
pub mod multiclass;
pub mod secboost;
pub mod tadaboost;

use std::collections::BTreeMap;

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
    /// Optional sample weights (non-negative, finite, not all zero), length `n`.
    pub sample_weight: Option<&'a [f64]>,
}

/// Writes one example's binary statistics block: `(w, 0)` for a positive label, `(0, w)` otherwise.
/// Shared by the binary boosters (see [`Booster::statistics`]).
#[inline]
pub(crate) fn put_binary(block: &mut [f64], label: f64, w: f64) {
    if label > 0.0 {
        block[0] = w;
        block[1] = 0.0;
    } else {
        block[0] = 0.0;
        block[1] = w;
    }
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
pub trait Booster: Send {
    /// Width of the per-example statistics block (2 for binary boosters, 2k for multi-label).
    fn stat_width(&self) -> usize;

    /// Number of outputs per leaf (1 for binary boosters, k for multi-label).
    fn n_outputs(&self) -> usize {
        self.stat_width() / 2
    }

    /// The split criterion the booster wants when the user did not choose one.
    fn default_criterion(&self) -> Criterion;

    /// How leaves turn their statistics into values this round.
    fn leaf_rule(&self) -> LeafRule;

    /// Adjusts the grown tree's leaf values (`n_leaves × n_outputs`) before they are used, e.g. to
    /// keep every output non-zero (SecBoost). By default does nothing.
    fn finish_leaves(&self, _values: &mut [f64]) {}

    /// Fills `stats` (`n × stat_width`, row-major) with this round's statistics. For a binary
    /// booster with weight `d_i` and label `y_i`: `(d_i, 0)` if `y_i = +1`, `(0, d_i)` otherwise.
    fn statistics(&self, stats: &mut [f64]);

    /// After the tree is grown: `h` holds its outputs on the training rows (`n × n_outputs`).
    /// Records the round's diagnostics in `diag` and returns the step.
    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step>;
}
