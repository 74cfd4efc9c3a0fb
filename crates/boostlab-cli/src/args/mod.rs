//! Flags shared by several commands: data loading, boosting parameters, worker threads.

pub mod boost;
pub mod data;
pub mod threads;

pub use boost::{BoostArgs, ValidationArgs};
pub use data::{DataArgs, Format};
pub use threads::{with_threads, ThreadsArg};
