//! Evaluation: metrics, stratified folds, label noise and the paired t-test (docs/explanation/experiments.md#experiments).
//!
//! Everything here is independent of how a model is trained. The experiment harness that builds
//! on it lives in [`crate::experiment`].
//!
//! Randomness is always explicit: every function that draws takes a `u64` seed and uses
//! `ChaCha8Rng::seed_from_u64`, and the experiment harness derives per-cell seeds with a
//! documented, stable hash ([`crate::experiment::derive_seed`]), so results never depend on thread
//! scheduling.

mod ensemble;
pub mod folds;
pub mod metrics;
pub mod multilabel;
pub mod noise;
pub mod stats;
