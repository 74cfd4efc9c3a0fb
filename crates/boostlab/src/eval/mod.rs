//! Evaluation: metrics, folds, label noise, significance tests, experiment grids.

pub mod multilabel;
