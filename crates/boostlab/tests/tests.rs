//! The library's integration tests, one binary with a module per behaviour (unit tests live
//! beside the code they test). `cargo test -p boostlab --test tests <module>::` runs one module.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

mod common;

mod constraints;
mod determinism;
mod distributed;
mod equivalences;
mod extreme_statistics;
mod fuzz_corpus;
mod goldens;
mod model_files;
mod python_consistency;
mod reader_memory;
mod robustness;
mod sample_weights;
mod secboost_certificate;
mod secboost_obi_closed_form;
mod shared_runs;
mod sklearn_agreement;
mod tadaboost_clipping;
mod tadaboost_passes;
