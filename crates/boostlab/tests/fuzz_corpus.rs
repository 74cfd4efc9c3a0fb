//! Replays every committed fuzz corpus file (`fuzz/corpus/<target>/`) and every input
//! that once crashed a target (`fuzz/regressions/<target>/`) through the same harness the fuzz
//! targets run (`boostlab::fuzzing`), on stable Rust, so a regression fails the normal test suite.

use std::path::{Path, PathBuf};

use boostlab::fuzzing::{run, TARGETS};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir` (none when it does not exist), sorted for a stable order.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.is_file()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

fn replay(kind: &str) -> usize {
    let mut n = 0;
    for t in TARGETS {
        for f in files(&fuzz_dir().join(kind).join(t)) {
            let data = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            let ok = std::panic::catch_unwind(|| run(t, &data));
            match ok {
                Ok(known) => assert!(known, "unknown target {t}"),
                Err(_) => panic!("fuzz input {} fails its harness `{t}`", f.display()),
            }
            n += 1;
        }
    }
    n
}

#[test]
fn fuzz_corpora_replay() {
    for t in TARGETS {
        let n = files(&fuzz_dir().join("corpus").join(t)).len();
        assert!(n >= 3, "fuzz/corpus/{t} has {n} files: the minimised corpus is missing");
    }
    let n = replay("corpus");
    assert!(n >= 100, "only {n} corpus files");
}

#[test]
fn fuzz_regressions_replay() {
    let n = replay("regressions");
    assert!(n >= 1, "the recorded crash inputs are missing from fuzz/regressions");
}
