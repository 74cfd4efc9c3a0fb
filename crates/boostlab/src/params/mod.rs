//! Every training parameter, declared once.
//!
//! The parameter types are plain data — `pub` fields, [`Default`], serde — checked by
//! [`BoostParams::check`] at the start of every fit. [`registry::PARAMETERS`] describes each of
//! them once (type, default, range, the algorithms it applies to, and its name on every surface:
//! CLI flag, Python keyword, experiment TOML key). The CLI's flags and the experiment TOML keys
//! are built from it ([`surface`] converts what they give), and the Python estimators and the
//! parameters reference page are checked against it by tests, so no surface can miss a parameter.
//!
//! This layer sits below the tree learner, the model and the boosters: it imports only the
//! error type and the loss specifications.

pub mod adaboost;
mod boost;
pub mod calibration;
pub mod multiclass;
pub mod preset;
pub mod registry;
pub mod secboost;
pub mod surface;
pub mod tadaboost;
pub mod tree;

pub use boost::{algorithm_defaults, default_pure_leaves, Algorithm, BoostParams, EvalMetric};
pub use calibration::{CalibrationMethod, CalibrationParams};
pub use preset::{ParamEntry, ParamSource, Preset};
pub use tree::{
    Criterion, FeatureKey, GrowOrder, MonotoneConstraints, PureLeaves, SplitTies, TemperedLink, TreeParams,
};
