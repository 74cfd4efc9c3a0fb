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
//! rows ─ data::read_csv / read_libsvm ─▶ Dataset ─ BinMapper ─▶ BinnedMatrix (column-major u8 bins,
//!   one bin for missing values)
//! each round:  booster ─ statistics (n × width) ─▶ tree::grow (histograms, best-first) ─▶ Tree
//!              Tree's outputs on the training rows ─▶ booster: α, weight update or stop ─▶ Ensemble
//! ```
//!
//! * [`data`]: datasets, readers, binning. The input seam (issue 12): every source is read as
//!   [`data::ColumnView`]s (numpy buffers in place — `f32` or `f64`, any stride —, owned columns,
//!   chunks of a streamed file) into a [`data::BinMapper`] and a [`data::BinnedMatrix`]; training
//!   needs only the resulting [`data::BinnedData`] ([`Trainer::fit_binned`]), and
//!   prediction reads views too ([`Ensemble::decision_function_views_into`]).
//! * [`tree`]: the one weak learner. It sees only a fixed-width block of non-negative statistics
//!   per example — `(W+, W−)` for binary boosters, `2k` values for the multi-label ones — and the
//!   bins; split criteria are the Bayes risks of proper losses ([`tree::Criterion`]).
//! * [`params`]: every training parameter, declared once ([`params::registry`]); the CLI, the
//!   experiment TOML keys, the Python estimators and the parameters reference page are held to it.
//! * [`boost`]: the boosters, each implementing [`boost::Booster`], and [`boost::driver`], the single
//!   boosting loop, run by [`Trainer`], the one training entry point. Boosters never see
//!   histograms; the tree never sees what weights mean.
//! * [`model`]: the [`Ensemble`], prediction (staged, clipped), versioned JSON model files.
//! * [`tempered`], [`loss`]: the tempered arithmetic of t-AdaBoost and the value-only losses of
//!   SecBoost.
//! * [`explain`]: feature importances, exact TreeSHAP contributions and margin distributions of
//!   a trained model (issue 15), from the gains and covers the grower records in each tree.
//! * [`eval`]: metrics, stratified folds, label noise, the paired t-test, the experiment harness.
//! * [`collective`]: distributed training (issue 13): the one seam, `allreduce_sum`, through
//!   which the tree learner and the driver sum over the rows of several workers
//!   ([`Trainer::collective`]); the identity on one machine.
//!
//! The key design choice: every booster is expressed as "statistics in, tree outputs back", so one
//! optimised histogram learner serves all of them, and a new booster is one file.
//!
//! Determinism: every sum over examples runs in a fixed order inside one feature (parallelism is
//! across features), so the same data, parameters and seed give bit-identical models whatever the
//! number of threads.
#![deny(missing_docs)]

pub mod boost;
mod cancel;
pub mod collective;
pub mod data;
pub mod error;
pub mod eval;
pub mod experiment;
pub mod explain;
mod fastmath;
#[doc(hidden)]
pub mod fuzzing;
pub mod loss;
pub mod model;
#[cfg(feature = "onnx")]
pub mod onnx;
mod par;
pub mod params;
pub mod tempered;
pub mod tree;

pub use boost::driver::RoundRecord;
pub use boost::trainer::Trainer;
// Test shorthands over `Trainer` (the Arrow reader's tests, behind a feature, call them).
#[cfg(test)]
#[allow(unused_imports)]
pub(crate) use boost::driver::{fit, fit_binned};
pub use boost::validation::{EvalMetric, FitOptions, Validation};
pub use cancel::Cancel;
pub use data::{BinnedData, ColumnView, Dataset, Features, Indices, NumericView, Target};
pub use error::{Error, Result};
pub use model::Ensemble;
pub use params::{Algorithm, BoostParams};
