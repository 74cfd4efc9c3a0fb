//! boostlab — the AdaBoost family on histogram trees.
#![deny(missing_docs)]

pub mod boost;
pub mod error;
pub mod loss;
pub mod tempered;
pub mod tree;

pub use error::{Error, Result};
