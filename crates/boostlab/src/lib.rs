//! boostlab — the AdaBoost family on histogram trees.
//!
//! Discrete and confidence-rated (Real, abstaining) AdaBoost, t-AdaBoost (tempered exponential
//! measures), SecBoost (boosting any loss from loss values only), and AdaBoost.MH / MO / MR / M2
//! for multi-class and multi-label data.
//!
//! # Architecture
//!
//! Data flow one way:
//!
//! ```text
//! rows ─ data readers ─▶ Dataset ─ BinMapper ─▶ BinnedMatrix (column-major u8 bins,
//!   one bin for missing values)
//! each round:  booster ─ statistics (n × width) ─▶ tree::grow (histograms, best-first) ─▶ Tree
//!              Tree's outputs on the training rows ─▶ booster: α, weight update or stop ─▶ Ensemble
//! ```
//!
//! The modules form layers; each imports only from its own layer and those above it in this list
//! (`scripts/check_layers.py` checks it):
//!
//! 1. [`error`] and `util` (deterministic parallel maps, fast powers, cancellation, atomic file
//!    writes).
//! 2. [`math`] ([`math::tempered`] arithmetic, [`math::loss`]: value-only losses) and [`data`]
//!    (schema, column views, sample weights, binning, the readers). Every source is read as
//!    [`data::ColumnView`]s into a [`data::BinMapper`] and a [`data::BinnedMatrix`]; training
//!    needs only the resulting [`data::BinnedData`].
//! 3. [`params`]: every training parameter declared once ([`params::registry`]); the CLI, the
//!    experiment TOML keys, the Python estimators and the parameters reference page are held to it.
//! 4. [`tree`] (criterion, split search, histograms, partitions, growth) and [`collective`]. The
//!    tree is the one weak learner: it sees only a fixed-width block of non-negative statistics
//!    per example and the bins, never what the statistics mean; split criteria are the Bayes risks
//!    of proper losses ([`tree::Criterion`]). The collective is the one seam of distributed
//!    training, `allreduce_sum`, through which the tree learner and the trainer sum over the rows
//!    of several workers; the identity on one machine.
//! 5. [`model`]: the [`Ensemble`] — prediction (staged, clipped), what its outputs mean and how
//!    they are decoded, the versioned model file and its validation.
//! 6. [`eval`]: metrics, stratified folds, label noise, the paired t-test.
//! 7. [`boost`]: the boosters, each implementing [`boost::Booster`], and the single boosting loop
//!    with early stopping and warm start, run by [`Trainer`], the one training entry point.
//!    Boosters never see histograms.
//! 8. [`select`]: model selection around the trainer (t-AdaBoost's `t` chosen from the data).
//! 9. [`experiment`], [`explain`], `onnx`, and the fuzzing entry points: built on everything
//!    below.
//!
//! The key design choice: every booster is expressed as "statistics in, tree outputs back", so one
//! optimised histogram learner serves all of them, and a new booster is its own module.
//!
//! Determinism: every sum over examples runs in a fixed order inside one feature (parallelism is
//! across features), so the same data, parameters and seed give bit-identical models whatever the
//! number of threads.
#![deny(missing_docs)]

pub mod boost;
pub mod collective;
pub mod data;
pub mod error;
pub mod eval;
pub mod experiment;
pub mod explain;
#[doc(hidden)]
pub mod fuzzing;
pub mod math;
pub mod model;
#[cfg(feature = "onnx")]
pub mod onnx;
pub mod params;
pub mod select;
pub mod tree;
mod util;

pub use boost::driver::RoundRecord;
pub use boost::trainer::Trainer;
// Test shorthands over `Trainer` (the Arrow reader's tests, behind a feature, call them).
#[cfg(test)]
#[allow(unused_imports)]
pub(crate) use boost::driver::{fit, fit_binned};
pub use boost::validation::{EvalMetric, Validation};
pub use data::{BinnedData, ColumnView, Dataset, Features, Indices, NumericView, Target};
pub use error::{Error, Result};
pub use model::{Ensemble, Output, Prediction};
pub use params::{Algorithm, BoostParams};
pub use util::cancel::Cancel;
/// Memory-traffic counters of the boosting passes (counting only with the feature `traffic`).
pub use util::traffic;
