//! boostlab — the AdaBoost family on histogram trees.
#![deny(missing_docs)]

pub mod boost;
pub mod data;
pub mod error;
pub mod eval;
pub mod loss;
pub mod model;
pub mod tempered;
pub mod tree;

pub use boost::driver::{fit, fit_with, Algorithm, BoostParams, RoundRecord};
pub use data::{Dataset, Features, Target};
pub use error::{Error, Result};
pub use model::Ensemble;
