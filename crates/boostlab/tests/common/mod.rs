//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use boostlab::data::{read_csv, CsvOptions, Dataset};

/// Path of a dataset in `../shared/datasets` (beside the repository). When the folder is
/// missing the test fails under CI (`CI` set) and is skipped with a note otherwise.
pub fn shared(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets").join(name);
    if p.exists() {
        return Some(p);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{} is missing: tests that need ../shared must not be skipped under CI", p.display());
    }
    eprintln!("note: {} not found, test skipped (set CI=1 to make this a failure)", p.display());
    None
}

/// Reads a shared CSV dataset with default options (label = last column).
pub fn shared_csv(name: &str) -> Option<Dataset> {
    shared(name).map(|p| read_csv(p, &CsvOptions::default()).expect("shared dataset reads"))
}
