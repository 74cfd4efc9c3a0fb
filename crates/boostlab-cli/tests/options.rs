//! Options through the binary: presets yield to explicit flags, seeded random ties, negative
//! numbers after flags, and the terminal output (in a pipe, and in a pseudo-terminal).

use crate::support::{run_env, shared};
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(args: &[&str]) -> (bool, String, String) {
    run_env(args, &[])
}

/// A binary CSV whose second half of the columns repeats the first (exact ties everywhere).
fn write_twins(dir: &Path, n: usize) -> PathBuf {
    let mut s = String::from("a,b,c,a2,b2,c2,label\n");
    for i in 0..n {
        let (a, b, c) = ((i * 37 % 101) as f64 / 10.0, (i * 13 % 7) as f64, (i * 29 % 11) as f64);
        let y = usize::from(a + b > 6.0) ^ usize::from(i % 7 == 0);
        s.push_str(&format!("{a},{b},{c},{a},{b},{c},{y}\n"));
    }
    let p = dir.join("twins.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn inspect_json(model: &Path) -> serde_json::Value {
    let (ok, so, se) = run(&["inspect", "--model", model.to_str().unwrap(), "--json"]);
    assert!(ok, "{se}");
    serde_json::from_str(&so).unwrap()
}

/// With the preset's candidate cap really off and ties lowest-first, the
/// authors' mode reproduces the authors' code run lowest-first on the same folds (which agrees
/// with it bit for bit): mean test error 0.2847. Before the fix the cap silently stayed at 2000.
#[test]
fn authors_mode_with_explicit_flags_reproduces_the_authors_code_on_sonar() {
    let (Some(data), Some(folds)) = (shared("sonar.csv"), shared("folds/sonar.folds10.txt")) else { return };
    let (ok, so, se) = run(&[
        "cv",
        "--data",
        data.to_str().unwrap(),
        "--algo",
        "t-adaboost",
        "--t",
        "0",
        "--authors-mode",
        "--max-split-candidates",
        "100000000",
        "--split-ties",
        "lowest",
        "--fold-file",
        folds.to_str().unwrap(),
        "--max-nodes",
        "15",
        "--rounds",
        "20",
        "--json",
    ]);
    assert!(ok, "{se}");
    let v: serde_json::Value = serde_json::from_str(&so).unwrap();
    let mean = v["mean_test_error"].as_f64().unwrap();
    assert_eq!(format!("{mean:.4}"), "0.2847", "{so}");
}

/// Each field of the `authors` preset yields to the flag that sets it (to any value,
/// also the library default), the others keep the preset's value, and `inspect` shows every
/// parameter's effective value and source.
#[test]
fn every_preset_field_yields_to_its_flag() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_twins(dir.path(), 200);
    let preset = [
        ("tree.grow_order", serde_json::json!("count")),
        ("tree.pure_leaves", serde_json::json!("forbid")),
        ("tree.max_split_candidates", serde_json::json!(2000)),
        ("tree.split_ties", serde_json::json!("random")),
        ("t_adaboost.leaf_values", serde_json::json!("canonical")),
    ];
    let cases: [(&[&str], &str, serde_json::Value); 6] = [
        (&[], "", serde_json::Value::Null),
        (&["--grow-order", "weight"], "tree.grow_order", serde_json::json!("weight")),
        (&["--pure-leaves", "allow"], "tree.pure_leaves", serde_json::json!("allow")),
        (&["--max-split-candidates", "100000000"], "tree.max_split_candidates", serde_json::json!(100_000_000)),
        (&["--split-ties", "lowest"], "tree.split_ties", serde_json::json!("lowest")),
        (&["--leaf-values", "optimal"], "t_adaboost.leaf_values", serde_json::json!("optimal")),
    ];
    for (i, (flags, path, want)) in cases.iter().enumerate() {
        let model = dir.path().join(format!("m{i}.json"));
        let mut args = vec![
            "train",
            "--data",
            data.to_str().unwrap(),
            "--algo",
            "t-adaboost",
            "--authors-mode",
            "--rounds",
            "3",
            "--max-nodes",
            "7",
            "--model",
            model.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        let (ok, _, se) = run(&args);
        assert!(ok, "{flags:?}: {se}");
        let v = inspect_json(&model);
        let src = &v["param_sources"];
        for (p, value) in &preset {
            let (want_v, want_s) = if p == path { (want, "user") } else { (value, "preset") };
            assert_eq!(&src[p]["value"], want_v, "{flags:?}: {p}");
            assert_eq!(src[p]["source"], want_s, "{flags:?}: {p}");
        }
        assert_eq!(src["preset"]["value"], "authors");
        assert_eq!(src["n_estimators"]["source"], "user");
        assert_eq!(src["max_bins"]["source"], "default");
        // The recorded parameters are the ones that ran.
        let (sub, field) = preset[0].0.split_once('.').unwrap();
        assert_eq!(v["params"][sub][field], src[preset[0].0]["value"]);
    }
    // The text form lists the parameters with their sources.
    let (ok, so, _) = run(&["inspect", "--model", dir.path().join("m3.json").to_str().unwrap()]);
    assert!(ok);
    let line = so.lines().find(|l| l.contains("tree.max_split_candidates")).unwrap();
    assert!(line.contains("100000000") && line.trim_end().ends_with("user"), "{line}");
    let line = so.lines().find(|l| l.contains("tree.grow_order")).unwrap();
    assert!(line.contains("\"count\"") && line.trim_end().ends_with("preset"), "{line}");
    assert!(!so.contains("secboost."), "only the algorithm's own table: {so}");
}

/// Random ties follow the seed (same seed, same model; bit-identical for 1, 2 and 3
/// threads) and differ between seeds; `lowest` ignores the seed.
#[test]
fn random_ties_are_seeded_and_thread_independent() {
    let dir = tempfile::tempdir().unwrap();
    // 6000 rows × 6 features: above the size where histograms and split searches go parallel.
    let data = write_twins(dir.path(), 6000);
    let train = |seed: &str, ties: &str, threads: &str, name: &str| -> serde_json::Value {
        let model = dir.path().join(name);
        let (ok, _, se) = run_env(
            &[
                "train",
                "--data",
                data.to_str().unwrap(),
                "--algo",
                "t-adaboost",
                "--t",
                "0.6",
                "--max-nodes",
                "7",
                "--rounds",
                "5",
                "--split-ties",
                ties,
                "--seed",
                seed,
                "--model",
                model.to_str().unwrap(),
            ],
            &[("RAYON_NUM_THREADS", threads)],
        );
        assert!(ok, "{se}");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
        serde_json::json!({"trees": v["trees"], "alphas": v["alphas"]})
    };
    let base = train("1", "random", "1", "r1.json");
    assert_eq!(train("1", "random", "2", "r2.json"), base);
    assert_eq!(train("1", "random", "3", "r3.json"), base);
    let differs = ["2", "3", "4", "5"].iter().any(|s| train(s, "random", "2", "rs.json") != base);
    assert!(differs, "another seed breaks the ties differently");
    assert_eq!(train("1", "lowest", "1", "l1.json"), train("9", "lowest", "3", "l9.json"));
}

/// A negative number after a flag is its value.
#[test]
fn negative_numbers_after_flags_are_values() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_twins(dir.path(), 120);
    let d = data.to_str().unwrap();
    // Parsed as a value, then refused by the library's range check (not by the argument parser).
    let (ok, _, se) = run(&["train", "--data", d, "--algo", "t-adaboost", "--t", "-1", "--rounds", "2"]);
    assert!(!ok);
    assert!(se.contains("t") && se.contains("[0, 2)") && se.contains("-1"), "{se}");
    assert!(!se.contains("unexpected argument"), "{se}");
    let (ok, so, se) = run(&["train", "--data", d, "--algo", "secboost", "--h0", "-0.5", "--rounds", "3"]);
    assert!(ok, "{se}");
    assert!(so.contains("trained secboost"), "{so}");
    let (ok, _, se) = run(&["cv", "--data", d, "--algo", "real-adaboost", "--smoothing", "-0.5", "--rounds", "2"]);
    assert!(!ok && se.contains("smoothing"), "{se}");
}

/// `cv` has no validation data, so it does not offer the validation options: the argument
/// parser refuses them before any data is read.
#[test]
fn cv_refuses_the_validation_options() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_twins(dir.path(), 40);
    let d = data.to_str().unwrap();
    for extra in [&["--early-stopping-rounds", "5"][..], &["--eval-metric", "error"], &["--eval-clipped"]] {
        let mut args = vec!["cv", "--data", d, "--rounds", "2"];
        args.extend_from_slice(extra);
        let (ok, so, se) = run(&args);
        assert!(!ok, "{args:?} was accepted: {so}");
        assert!(se.contains("unexpected argument") && se.contains(extra[0]), "{se}");
    }
    // `train` still takes them.
    let (ok, _, se) = run(&["train", "--data", d, "--rounds", "2", "--valid", d, "--early-stopping-rounds", "5"]);
    assert!(ok, "{se}");
}

/// In a pipe, `train` prints a summary (last round's key diagnostics, time, where the
/// model went) and no table; `--log-every K` adds a row every K rounds; `--verbose` every round;
/// the table fits `COLUMNS`; `--log-json` keeps every diagnostic of every round.
#[test]
fn train_prints_a_summary_and_a_table_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_twins(dir.path(), 200);
    let model = dir.path().join("m.json");
    let log = dir.path().join("log.jsonl");
    let base = [
        "train",
        "--data",
        data.to_str().unwrap(),
        "--algo",
        "t-adaboost",
        "--t",
        "0.5",
        "--max-nodes",
        "5",
        "--rounds",
        "12",
        "--model",
        model.to_str().unwrap(),
    ];
    let (ok, so, se) = run(&base);
    assert!(ok, "{se}");
    let lines: Vec<&str> = so.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("round 12: train_error")), "{so}");
    assert!(so.contains("trained t-adaboost on 200 rows × 6 features: 12 trees in"), "{so}");
    assert!(so.contains(&format!("model saved to {}", model.display())), "{so}");
    assert!(so.contains("probabilities σ(a·f) with a = "), "the calibrated scale is reported: {so}");
    assert!(lines.len() <= 5, "a concise summary, no table: {so}");
    assert!(se.is_empty(), "nothing on stderr in a pipe: {se}");

    let rows = |so: &str| -> Vec<usize> {
        so.lines().filter_map(|l| l.split_whitespace().next()?.parse::<usize>().ok()).collect::<Vec<_>>()
    };
    let mut args = base.to_vec();
    args.extend(["--log-every", "5"]);
    let (ok, so, _) = run(&args);
    assert!(ok);
    assert_eq!(rows(&so), vec![1, 5, 10, 12], "{so}");
    assert_eq!(so.lines().filter(|l| l.trim_start().starts_with("round ") && l.contains("train_error")).count(), 2);

    let mut args = base.to_vec();
    args.extend(["--verbose", "--log-json", log.to_str().unwrap()]);
    let (ok, so, _) = run(&args);
    assert!(ok);
    assert_eq!(rows(&so), (1..=12).collect::<Vec<_>>(), "{so}");
    let header = so.lines().find(|l| l.trim_start().starts_with("round ") && l.contains("alpha")).unwrap();
    assert!(!so.contains("more columns"), "a pipe without COLUMNS gets every column: {so}");
    let n_cols = header.split_whitespace().count() - 1;
    let json: Vec<serde_json::Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(json.len(), 12);
    assert_eq!(json[0].as_object().unwrap().len() - 1, n_cols, "every diagnostic: {header}");

    let (ok, so, _) = run_env(&args, &[("COLUMNS", "52")]);
    assert!(ok);
    let table: Vec<&str> =
        so.lines().filter(|l| l.split_whitespace().next().is_some_and(|w| w == "round") && !l.contains(':')).collect();
    assert!(table.iter().all(|l| l.chars().count() <= 52), "{so}");
    assert!(so.lines().filter(|l| rows(l).len() == 1).all(|l| l.chars().count() <= 52), "{so}");
    // Key diagnostics first (train error, then α), as many as fit; the rest are counted.
    let full: Vec<&str> = header.split_whitespace().collect();
    let shown: Vec<&str> = table[0].split_whitespace().collect();
    assert!(shown.len() >= 3 && full.starts_with(&shown), "{shown:?} of {full:?}");
    assert_eq!(&shown[..2], ["round", "train_error"]);
    assert!(full.iter().position(|k| *k == "alpha") < full.iter().position(|k| *k == "bound"), "{full:?}");
    assert!(so.contains(&format!("({} more columns in --log-json)", full.len() - shown.len())), "{so}");
}

/// On a terminal (a pseudo-terminal through `script`), reading shows progress and a
/// line saying what was read, for CSV and LIBSVM input.
#[test]
fn reading_progress_on_a_terminal() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("note: `script` (util-linux) not found, pseudo-terminal test skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let csv = write_twins(dir.path(), 2000);
    let svm = dir.path().join("d.svm");
    let text: String = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            let feats: Vec<String> = v[..6].iter().enumerate().map(|(j, x)| format!("{}:{x}", j + 1)).collect();
            format!("{} {}\n", v[6], feats.join(" "))
        })
        .collect();
    std::fs::write(&svm, text).unwrap();
    for (file, feats) in [(&csv, 6), (&svm, 6)] {
        let cmd = format!("{} train --data {} --rounds 3", env!("CARGO_BIN_EXE_boostlab"), file.display());
        let out = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("reading "), "progress bar drawn: {text}");
        assert!(text.contains(&format!("read 2000 rows × {feats} features from {}", file.display())), "{text}");
    }
}
