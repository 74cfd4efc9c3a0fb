//! One module per subcommand: its arguments and its `run`.

pub mod cv;
pub mod demo;
pub mod experiment;
pub mod export;
pub mod inspect;
pub mod plot;
pub mod predict;
pub mod reference;
pub mod report;
pub mod train;
