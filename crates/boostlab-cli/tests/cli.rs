//! End-to-end tests of the `boostlab` command: every command runs, bad input gets a clear error
//! (exit code 1, a message naming the problem, never a panic).

#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_boostlab"))
}

/// Runs the command; returns (success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let out = bin().args(args).output().expect("runs");
    let (so, se) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(!se.contains("panicked"), "panic on {args:?}: {se}");
    (out.status.success(), so, se)
}

fn fails_with(args: &[&str], want: &str) {
    let (ok, _, se) = run(args);
    assert!(!ok, "{args:?} should fail");
    assert!(se.contains(want), "{args:?}: expected '{want}' in: {se}");
}

/// A small CSV with a numeric feature, a categorical one (with missing values) and a label.
fn write_data(dir: &Path, name: &str, n: usize, classes: &[&str]) -> PathBuf {
    let mut s = String::from("x,color,z,label\n");
    for i in 0..n {
        let x = (i * 37 % 101) as f64 / 10.0;
        let color = ["red", "green", "", "blue"][i % 4];
        let z = (i * 13 % 7) as f64;
        let bump = if color == "red" { 3.0 } else { 0.0 };
        let c = classes[(usize::from(x + bump > 5.0) + (i % 5 == 0) as usize * (i % 3)) % classes.len()];
        s.push_str(&format!("{x},{color},{z},{c}\n"));
    }
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

#[test]
fn issue_2_train_predict_inspect_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 300, &["no", "yes"]);
    let model = dir.path().join("m.json");
    let log = dir.path().join("log.jsonl");
    let d = data.to_str().unwrap();
    let (ok, so, se) = run(&[
        "train",
        "--data",
        d,
        "--algo",
        "real-adaboost",
        "--rounds",
        "12",
        "--max-leaves",
        "4",
        "--model",
        model.to_str().unwrap(),
        "--log-json",
        log.to_str().unwrap(),
    ]);
    assert!(ok, "{se}");
    assert!(so.contains("round") && so.contains("train_error"), "{so}");
    let lines: Vec<serde_json::Value> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 12);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["round"], i + 1);
        for k in ["alpha", "z", "train_error"] {
            assert!(l[k].is_number(), "{k} in {l}");
        }
    }
    // Predictions from the CLI equal the library's on the same model, to the bit.
    let out = dir.path().join("p.csv");
    let (ok, so, se) =
        run(&["predict", "--model", model.to_str().unwrap(), "--data", d, "--output", out.to_str().unwrap()]);
    assert!(ok, "{se}");
    assert!(so.contains("accuracy"), "{so}");
    let m = boostlab::Ensemble::load(&model).unwrap();
    let ds = boostlab::data::read_csv(&data, &Default::default()).unwrap();
    let scores = m.decision_function(&ds.features, false).unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(rows.len(), 300);
    for (r, s) in rows.iter().zip(&scores) {
        let score: f64 = r.split(',').nth(1).unwrap().parse().unwrap();
        assert_eq!(score.to_bits(), s.to_bits(), "scores are written exactly");
    }
    // Prediction data without the label column works too.
    let nolabel = dir.path().join("nolabel.csv");
    let t: String = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string() + "\n")
        .collect();
    std::fs::write(&nolabel, t).unwrap();
    let (ok, so, _) = run(&["predict", "--model", model.to_str().unwrap(), "--data", nolabel.to_str().unwrap()]);
    assert!(ok);
    assert_eq!(so.lines().count(), 301);
    let (ok, so, _) = run(&["inspect", "--model", model.to_str().unwrap(), "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&so).unwrap();
    assert_eq!(v["n_trees"], 12);
    assert_eq!(v["algorithm"], "real-adaboost");
}

#[test]
fn issue_2_cv_json_reports_folds_and_means() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 200, &["a", "b"]);
    let (ok, so, se) = run(&["cv", "--data", data.to_str().unwrap(), "--folds", "4", "--rounds", "5", "--json"]);
    assert!(ok, "{se}");
    let v: serde_json::Value = serde_json::from_str(&so).unwrap();
    let folds = v["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 4);
    let mean: f64 = folds.iter().map(|f| f["test_error"].as_f64().unwrap()).sum::<f64>() / 4.0;
    assert!((v["mean_test_error"].as_f64().unwrap() - mean).abs() < 1e-12);
    assert!(v["std_test_error"].is_number());
    // A user-given fold assignment.
    let folds = dir.path().join("folds.txt");
    std::fs::write(&folds, (0..200).map(|i| format!("{}\n", i % 2)).collect::<String>()).unwrap();
    let (ok, so, se) = run(&[
        "cv",
        "--data",
        data.to_str().unwrap(),
        "--fold-file",
        folds.to_str().unwrap(),
        "--rounds",
        "5",
        "--json",
    ]);
    assert!(ok, "{se}");
    let v: serde_json::Value = serde_json::from_str(&so).unwrap();
    assert_eq!(v["folds"].as_array().unwrap().len(), 2);
}

#[test]
fn issue_5_cv_json_reports_multiclass_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 300, &["p", "q", "r"]);
    for algo in ["adaboost-mh", "real-adaboost-mh", "adaboost-mo", "adaboost-mr", "adaboost-m2"] {
        let (ok, so, se) =
            run(&["cv", "--data", data.to_str().unwrap(), "--algo", algo, "--folds", "3", "--rounds", "5", "--json"]);
        assert!(ok, "{algo}: {se}");
        let v: serde_json::Value = serde_json::from_str(&so).unwrap();
        for k in ["mean_test_error", "mean_hamming_loss", "mean_ranking_loss", "mean_one_error", "std_one_error"] {
            assert!(v[k].is_number(), "{algo}: {k}");
        }
        assert_eq!(v["mean_test_error"], v["mean_one_error"]);
    }
}

#[test]
fn issue_2_bad_input_gets_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str, text: &str| {
        let f = dir.path().join(name);
        std::fs::write(&f, text).unwrap();
        f.to_str().unwrap().to_string()
    };
    let ragged = p("ragged.csv", "a,b,label\n1,2,0\n1,1\n");
    fails_with(&["train", "--data", &ragged], "ragged.csv:3: expected 3 fields");
    let empty = p("empty.csv", "");
    fails_with(&["train", "--data", &empty], "empty file");
    let nan_label = p("nan.csv", "a,label\n1,0\n2,NaN\n");
    fails_with(&["train", "--data", &nan_label], "nan.csv:3: column 'label': NaN label");
    let inf = p("inf.csv", "a,label\n1,0\ninf,1\n");
    fails_with(&["train", "--data", &inf], "column 'a': infinite value");
    let single = p("single.csv", "a,label\n1,0\n2,0\n");
    fails_with(&["train", "--data", &single], "only one class");
    let three = p("three.csv", "a,label\n1,0\n2,1\n3,2\n");
    fails_with(&["train", "--data", &three], "adaboost-mh");
    let good = write_data(dir.path(), "good.csv", 60, &["0", "1"]);
    let g = good.to_str().unwrap();
    fails_with(&["train", "--data", g, "--rounds", "0"], "n_estimators");
    fails_with(&["train", "--data", g, "--max-leaves", "1"], "max_leaves");
    fails_with(&["train", "--data", g, "--algo", "t-adaboost", "--t", "3"], "invalid parameter `t`");
    fails_with(&["train", "--data", g, "--algo", "secboost", "--loss", "bogus"], "loss");
    fails_with(&["train", "--data", g, "--algo", "gbm"], "expected one of");
    fails_with(&["train", "--data", g, "--t", "0.5"], "--t applies to --algo t-adaboost, not adaboost");
    fails_with(&["train", "--data", g, "--algo", "adaboost-mh", "--code", "exhaustive"], "--code applies to");
    fails_with(&["train", "--data", "/nonexistent/x.csv"], "/nonexistent/x.csv");
    let bad_model = p("bad.json", "{\"format_version\": 1, \"trees\": 3}");
    fails_with(&["predict", "--model", &bad_model, "--data", g], "invalid model");
    let not_json = p("notjson.json", "\u{0}\u{1}garbage");
    fails_with(&["inspect", "--model", &not_json], "not valid JSON");
    // Prediction files with a missing feature column or a wrong kind.
    let model = dir.path().join("m.json");
    assert!(run(&["train", "--data", g, "--rounds", "3", "--model", model.to_str().unwrap()]).0);
    let short = p("short.csv", "x,label\n1,0\n");
    fails_with(&["predict", "--model", model.to_str().unwrap(), "--data", &short], "features");
    let wrongkind = p("wrongkind.csv", "x,color,z,label\nabc,red,1,0\n");
    fails_with(&["predict", "--model", model.to_str().unwrap(), "--data", &wrongkind], "not a number");
}

#[test]
fn issue_3_t_adaboost_cli_and_clipped_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 200, &["0", "1"]);
    let model = dir.path().join("m.json");
    let log = dir.path().join("log.jsonl");
    let (ok, _, se) = run(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--algo",
        "t-adaboost",
        "--t",
        "0.6",
        "--max-nodes",
        "15",
        "--rounds",
        "10",
        "--model",
        model.to_str().unwrap(),
        "--log-json",
        log.to_str().unwrap(),
    ]);
    assert!(ok, "{se}");
    let text = std::fs::read_to_string(&log).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for k in [
        "rho",
        "mu",
        "alpha",
        "z",
        "bound",
        "switched_off",
        "min_weight",
        "max_weight",
        "train_error",
        "train_error_clipped",
    ] {
        assert!(first[k].is_number(), "{k}");
    }
    let m = model.to_str().unwrap();
    let d = data.to_str().unwrap();
    let (ok, linear, _) = run(&["predict", "--model", m, "--data", d]);
    assert!(ok);
    let (ok, clipped, _) = run(&["predict", "--model", m, "--data", d, "--clipped"]);
    assert!(ok);
    let max_clipped =
        clipped.lines().skip(1).map(|l| l.split(',').nth(1).unwrap().parse::<f64>().unwrap().abs()).fold(0.0, f64::max);
    assert!(max_clipped <= 1.0 / (1.0 - 0.6) + 1e-12, "clipped scores within δ = 2.5: {max_clipped}");
    assert_eq!(linear.lines().count(), clipped.lines().count());
}

#[test]
fn issue_4_secboost_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 200, &["0", "1"]);
    let log = dir.path().join("log.jsonl");
    let (ok, _, se) = run(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--algo",
        "secboost",
        "--loss",
        "clipped-logistic:q=-2",
        "--delta-init",
        "0.1",
        "--rounds",
        "10",
        "--log-json",
        log.to_str().unwrap(),
    ]);
    assert!(ok, "{se}");
    let text = std::fs::read_to_string(&log).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for k in ["eta", "alpha", "w2", "epsilon", "z_obi", "mean_abs_weight", "risk", "train_error"] {
        assert!(first[k].is_number(), "{k}");
    }
}

#[test]
fn issue_2_demo_runs_without_files() {
    let (ok, so, se) = run(&["demo", "--rounds", "20"]);
    assert!(ok, "{se}");
    assert!(so.contains("AdaBoost (stumps)") && so.contains("Real AdaBoost"), "{so}");
}

/// The data of `write_data` as a Parquet file (the categorical column as strings, empty = null).
#[cfg(feature = "arrow")]
fn write_parquet_copy(csv: &Path, name: &str) -> PathBuf {
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    let text = std::fs::read_to_string(csv).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let num = |c: usize| -> ArrayRef {
        Arc::new(Float64Array::from(rows.iter().map(|r| r[c].parse::<f64>().unwrap()).collect::<Vec<_>>()))
    };
    let string = |c: usize, empty_is_null: bool| -> ArrayRef {
        Arc::new(StringArray::from(
            rows.iter().map(|r| if empty_is_null && r[c].is_empty() { None } else { Some(r[c]) }).collect::<Vec<_>>(),
        ))
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("x", DataType::Float64, false),
        Field::new("color", DataType::Utf8, true),
        Field::new("z", DataType::Float64, false),
        Field::new("label", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), vec![num(0), string(1, true), num(2), string(3, false)]).unwrap();
    let p = csv.with_file_name(name);
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&p).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    p
}

#[cfg(feature = "arrow")]
#[test]
fn issue_12_parquet_train_and_streamed_predict_match_csv() {
    let dir = tempfile::tempdir().unwrap();
    let csv = write_data(dir.path(), "d.csv", 500, &["no", "yes"]);
    let pq = write_parquet_copy(&csv, "d.parquet");
    let m_csv = dir.path().join("m_csv.json");
    let m_pq = dir.path().join("m_pq.json");
    for (data, model) in [(&csv, &m_csv), (&pq, &m_pq)] {
        let (ok, so, se) = run(&[
            "train",
            "--data",
            data.to_str().unwrap(),
            "--algo",
            "real-adaboost",
            "--max-leaves",
            "8",
            "--rounds",
            "15",
            "--quiet",
            "--model",
            model.to_str().unwrap(),
        ]);
        assert!(ok, "{se}");
        assert!(so.contains("into bins"), "{so}");
    }
    // The same values give bit-identical models, whatever the file format.
    assert_eq!(std::fs::read_to_string(&m_csv).unwrap(), std::fs::read_to_string(&m_pq).unwrap());
    // Streamed prediction: the same predictions from CSV and Parquet, and the accuracy line.
    let mut outs = Vec::new();
    for data in [&csv, &pq] {
        let out = dir.path().join("p.csv");
        let (ok, so, se) = run(&[
            "predict",
            "--model",
            m_csv.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--proba",
            "--output",
            out.to_str().unwrap(),
        ]);
        assert!(ok, "{se}");
        assert!(so.contains("500 predictions written") && so.contains("accuracy"), "{so}");
        outs.push(std::fs::read_to_string(&out).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
    assert_eq!(outs[0].lines().count(), 501);
    assert!(outs[0].starts_with("prediction,score,proba_no,proba_yes\n"), "{}", &outs[0][..60]);
    // The predictions equal the library's on the whole file.
    let model = boostlab::Ensemble::load(&m_csv).unwrap();
    let d = boostlab::data::read_csv(&csv, &Default::default()).unwrap();
    let scores = model.decision_function(&d.features, false).unwrap();
    for (line, s) in outs[0].lines().skip(1).zip(&scores) {
        assert_eq!(line.split(',').nth(1).unwrap().parse::<f64>().unwrap(), *s);
    }
    // Bad rows are still reported with their line, by train and by the streamed predict.
    let bad = dir.path().join("bad.csv");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(300, "1,red"); // a short row on line 301
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    fails_with(&["train", "--data", bad.to_str().unwrap()], "bad.csv:301: expected 4 fields");
    fails_with(
        &["predict", "--model", m_csv.to_str().unwrap(), "--data", bad.to_str().unwrap()],
        "bad.csv:301: expected 4 fields",
    );
}
