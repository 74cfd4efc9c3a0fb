//! The command-line tool's tests, one binary with a module per behaviour; each runs the built
//! `boostlab` binary. `cargo test -p boostlab-cli --test tests <module>::` runs one module.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod support;

mod bad_inputs;
mod commands;
mod constraints;
mod cv_parallel;
mod experiment_resume;
mod interrupts;
mod options;
mod validation_and_warm_start;
