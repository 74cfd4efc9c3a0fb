//! What every module runs the binary with.

use std::path::PathBuf;
use std::process::Command;

/// The built `boostlab` binary.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_boostlab"))
}

/// Runs the command; returns (success, stdout, stderr). A panic message fails the test.
pub fn run(args: &[&str]) -> (bool, String, String) {
    finish(args, bin().args(args))
}

/// [`run`] with `COLUMNS` unset and the given variables set (for the terminal-width tests).
pub fn run_env(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut c = bin();
    c.args(args).env_remove("COLUMNS");
    for (k, v) in env {
        c.env(k, v);
    }
    finish(args, &mut c)
}

fn finish(args: &[&str], c: &mut Command) -> (bool, String, String) {
    let out = c.output().expect("runs");
    let (so, se) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(!se.contains("panicked"), "panic on {args:?}: {se}");
    (out.status.success(), so, se)
}

/// Path of a dataset in `../shared/datasets`: a failure under CI when missing, a skip otherwise.
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
