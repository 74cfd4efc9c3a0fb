//! `boostlab experiment` end to end on a small generated grid (2 datasets × 2 settings ×
//! 3 folds × 1 noise rate): an interrupted run (abrupt exit, then a real SIGKILL) resumes where
//! it stopped, and the resumed results equal an uninterrupted run; `boostlab report` then writes
//! its tables and SVG plots.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_boostlab");

/// A noisy two-feature binary problem: deterministic (a linear congruential generator), so the
/// test needs no data files.
fn write_data(path: &Path, n: usize, seed: u64) {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::from("x1,x2,x3,label\n");
    for _ in 0..n {
        let (a, b, c) = (next(), next(), next());
        let y = u8::from(a + 0.5 * b + 0.3 * next() > 0.9);
        text.push_str(&format!("{a:.6},{b:.6},{c:.6},{y}\n"));
    }
    std::fs::write(path, text).expect("write data");
}

fn write_spec(dir: &Path) -> PathBuf {
    write_data(&dir.join("a.csv"), 300, 1);
    write_data(&dir.join("b.csv"), 240, 2);
    let spec = r#"
name = "resume-test"
seed = 11
folds = 3
noise = [0.1]
reference = "ada"

[params]
rounds = 15
max_nodes = 7

[[datasets]]
name = "a"
path = "a.csv"

[[datasets]]
name = "b"
path = "b.csv"

[[settings]]
name = "ada"
algo = "t-adaboost"
t = 1.0

[[settings]]
name = "tada"
algo = "t-adaboost"
t = 0.6
"#;
    let p = dir.join("spec.toml");
    std::fs::write(&p, spec).expect("write spec");
    p
}

fn experiment(spec: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(["experiment", spec.to_str().expect("utf8"), "--out", out.to_str().expect("utf8"), "--threads", "2"])
        .args(extra)
        .output()
        .expect("run boostlab")
}

fn n_records(out: &Path) -> usize {
    std::fs::read_dir(out.join("cells"))
        .map(|d| d.filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(".json")).count())
        .unwrap_or(0)
}

fn merged(out: &Path) -> String {
    std::fs::read_to_string(out.join("results.jsonl")).expect("results.jsonl")
}

#[test]
fn killed_experiment_resumes_to_the_uninterrupted_results() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(tmp.path());

    // Uninterrupted reference run.
    let full = tmp.path().join("full");
    let o = experiment(&spec, &full, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(n_records(&full), 12);
    let reference = merged(&full);
    assert_eq!(reference.lines().count(), 12);

    // Abrupt exit after 5 recorded cells (the hidden testing flag), then resume.
    let part = tmp.path().join("part");
    let o = experiment(&spec, &part, &["--stop-after", "5"]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let n = n_records(&part);
    assert!((5..12).contains(&n), "{n} records after the interruption");
    let o = experiment(&spec, &part, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(log.contains(&format!("{n} already recorded, {} run now", 12 - n)), "{log}");
    assert_eq!(merged(&part), reference);

    // A real SIGKILL of the child while it runs (single thread, so it is slower), then resume.
    let killed = tmp.path().join("killed");
    let mut child = Command::new(BIN)
        .args(["experiment", spec.to_str().expect("utf8"), "--out", killed.to_str().expect("utf8"), "--threads", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let t0 = Instant::now();
    while n_records(&killed) < 2 && t0.elapsed() < Duration::from_secs(60) {
        if child.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = child.kill();
    let _ = child.wait();
    let o = experiment(&spec, &killed, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(merged(&killed), reference);

    // Re-running a finished experiment does nothing and changes nothing.
    let o = experiment(&spec, &full, &[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("12 already recorded, 0 run now"));
    assert_eq!(merged(&full), reference);

    // The report: tables, the paired comparison and SVG plots.
    let rep = tmp.path().join("report");
    let o = Command::new(BIN)
        .args(["report", full.to_str().expect("utf8"), "--out", rep.to_str().expect("utf8")])
        .output()
        .expect("report");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(rep.join("report.md")).expect("report.md");
    assert!(md.contains("Paired t-test against `ada`"), "{md}");
    assert!(md.contains("| tada | 0.1 | test error |"), "{md}");
    for f in ["test-error_a_noise0.1.svg", "weights_b_noise0.1.svg", "loss_a_noise0.1.svg"] {
        let svg = std::fs::read_to_string(rep.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(svg.contains("<svg") && svg.contains("<text"), "{f}");
    }
}

#[test]
fn a_bad_parameter_fails_the_cells_with_a_clear_message() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let spec = write_spec(tmp.path());
    let text = std::fs::read_to_string(&spec).expect("read").replace("t = 0.6", "tt = 0.6");
    std::fs::write(&spec, text).expect("write");
    let o = experiment(&spec, &tmp.path().join("out"), &[]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    // A setup error is reported once, before any cell runs, not once per fold.
    assert_eq!(err.matches("unknown parameter `tt`").count(), 1, "{err}");
    assert!(
        err.contains("invalid experiment resume-test: setting `tada` on datasets `a`, `b`: unknown parameter `tt`"),
        "{err}"
    );
    assert!(!err.contains("numerical failure") && !err.contains("cells failed"), "{err}");
    assert!(!tmp.path().join("out").exists(), "no results directory for a refused spec");
}
