//! Evaluation: metrics, stratified folds, label noise, the paired t-test and the experiment
//! harness (SPEC §7).
//!
//! Everything here is independent of how a model is trained. The experiment harness
//! ([`experiment`]) expands a TOML spec into cells (dataset × setting × noise rate × fold), runs them
//! in parallel through a caller-supplied closure, records each finished cell durably and resumes
//! after an interruption; the report functions turn the recorded cells into tables.
//!
//! Randomness is always explicit: every function that draws takes a `u64` seed and uses
//! `ChaCha8Rng::seed_from_u64`, and the harness derives per-cell seeds with a documented, stable
//! hash ([`experiment::derive_seed`]), so results never depend on thread scheduling.

pub mod experiment;
pub mod folds;
pub mod metrics;
pub mod multilabel;
pub mod noise;
pub mod stats;
