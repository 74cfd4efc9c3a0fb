//! boostlab — the AdaBoost family on histogram trees.
#![deny(missing_docs)]

pub mod error;

pub use error::{Error, Result};
