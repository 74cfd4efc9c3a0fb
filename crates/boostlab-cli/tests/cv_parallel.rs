//! `boostlab cv` runs its folds in parallel; the numbers must not depend on it.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_boostlab");

/// A noisy binary problem with 40 features (wide and small, like sonar), from a fixed LCG.
fn write_data(path: &Path) {
    let mut s: u64 = 18;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = (0..40).map(|j| format!("x{j},")).collect::<String>() + "label\n";
    for _ in 0..150 {
        let x: Vec<f64> = (0..40).map(|_| next()).collect();
        let y = u8::from(x[0] + 0.5 * x[1] - 0.4 * x[7] + 0.3 * next() > 0.7);
        text += &x.iter().map(|v| format!("{v:.4},")).collect::<String>();
        text += &format!("{y}\n");
    }
    std::fs::write(path, text).expect("write data");
}

fn cv(data: &Path, threads: &str) -> serde_json::Value {
    let o = Command::new(BIN)
        .args(["cv", "--data", data.to_str().expect("utf8"), "--algo", "t-adaboost", "--t", "0.6"])
        .args(["--max-nodes", "15", "--rounds", "8", "--folds", "5", "--seed", "3", "--json", "--threads", threads])
        .output()
        .expect("run boostlab");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

#[test]
fn cv_folds_in_parallel_equal_one_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("wide.csv");
    write_data(&data);
    let one = cv(&data, "1");
    let two = cv(&data, "2");
    assert_eq!(one, two, "fold metrics depend on the thread count");
    let folds = one["folds"].as_array().expect("folds");
    assert_eq!(folds.len(), 5);
    for (i, f) in folds.iter().enumerate() {
        assert_eq!(f["fold"], i, "folds in order");
        assert_eq!(f["n_trees"], 8.0);
        let e = f["test_error"].as_f64().expect("test_error");
        assert!((0.0..=0.5).contains(&e), "fold {i}: test error {e}");
    }
    // The mean is the mean of the folds (not of a subset that finished first).
    let mean: f64 = folds.iter().map(|f| f["test_error"].as_f64().unwrap_or(f64::NAN)).sum::<f64>() / 5.0;
    assert!((one["mean_test_error"].as_f64().expect("mean") - mean).abs() < 1e-12);
}
