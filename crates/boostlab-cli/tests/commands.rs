//! End-to-end tests of the `boostlab` command: every command runs, bad input gets a clear error
//! (exit code 1, a message naming the problem, never a panic).

use crate::support::run;
use boostlab::Prediction;
use std::path::{Path, PathBuf};

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
fn train_predict_inspect_round_trip() {
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
    let scores = m.predict(&ds.features, &Prediction::scores()).unwrap();
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
fn cv_json_reports_folds_and_means() {
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
fn cv_json_reports_multiclass_metrics() {
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
fn bad_input_gets_clear_errors() {
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
    fails_with(&["train", "--data", g, "--algo", "gbm"], "[possible values: adaboost, real-adaboost");
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
fn t_adaboost_cli_and_clipped_prediction() {
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
fn secboost_cli() {
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
fn solve_alpha_and_kappa_flags() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 200, &["0", "1"]);
    let d = data.to_str().unwrap();
    let sec = ["train", "--data", d, "--algo", "secboost", "--rounds", "5"];
    fn cat<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<&'a str> {
        [a, b].concat()
    }
    let with = |extra: &[&'static str]| cat(&sec, extra);
    fails_with(&with(&["--kappa", "1.5"]), "invalid parameter `kappa`");
    fails_with(&with(&["--solve-alpha", "bogus"]), "solve-alpha");
    fails_with(&["train", "--data", d, "--kappa", "0.3"], "--kappa applies to --algo secboost");
    fails_with(&with(&["--loss", "zero-one"]), "invalid parameter `h0`");
    for (rule, certified) in [("paper", 0.0), ("certified", 1.0)] {
        let log = dir.path().join(format!("{rule}.jsonl"));
        let args = cat(
            &sec,
            &["--loss", "spring-main", "--solve-alpha", rule, "--kappa", "0.25", "--log-json", log.to_str().unwrap()],
        );
        let (ok, _, se) = run(&args);
        assert!(ok, "{se}");
        for line in std::fs::read_to_string(&log).unwrap().lines() {
            let r: serde_json::Value = serde_json::from_str(line).unwrap();
            if r.get("alpha").is_none() {
                continue; // a certified run may stop without a step
            }
            assert_eq!(r["certified"].as_f64(), Some(certified), "{line}");
            let (risk, prev, dec) = (
                r["risk"].as_f64().unwrap(),
                r["risk_prev"].as_f64().unwrap(),
                r["certified_decrease"].as_f64().unwrap(),
            );
            // docs/explanation/secboost.md#secboost-algorithm: F(S, H_t) ≤ F(S, H_(t−1)) − (B_t − q̄_t), under either rule.
            assert!(risk <= prev - dec + 1e-10, "{line}");
            if certified == 1.0 {
                assert!(
                    dec > 0.0 && r["qbar"].as_f64().unwrap() <= 0.25 * r["b"].as_f64().unwrap() * (1.0 + 1e-12),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn demo_runs_without_files() {
    let (ok, so, se) = run(&["demo", "--rounds", "20"]);
    assert!(ok, "{se}");
    assert!(so.contains("AdaBoost (stumps)") && so.contains("Real AdaBoost"), "{so}");
}

/// The `--weight` column holds frequency weights. The CSV with integer weights and
/// the CSV whose rows are repeated that many times (weight 0: left out) train the same model file:
/// equal apart from the last bits of sums taken in another order (1e−12; 1e−9 for the per-round
/// diagnostics, which include products of sums such as `bound`).
#[test]
fn weight_column_equals_repeated_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (mut weighted, mut repeated) = (String::from("x,color,z,w,label\n"), String::from("x,color,z,label\n"));
    for i in 0..80usize {
        let x = ((i * 7919) % 1000) as f64 / 97.0;
        let color = ["red", "green", "blue"][i % 3];
        let z = ((i * 31) % 17) as f64 / 3.0;
        // Every category moves the labels differently: categories whose fractions of positives
        // tie exactly are sorted by the rounding of their sums (docs/explanation/weak-learners.md#weak-learners-categorical: prefix order), which
        // may differ between weights and repeated rows (a known limit, docs/how-to/sample-weights.md).
        let bump = if i % 5 == 0 { 0.0 } else { [3.0, 1.3, 0.0][i % 3] };
        let class = ["lo", "mid", "hi"][usize::from(x + z + bump > 8.0) + usize::from(x - z + bump > 4.0)];
        // Weights 0..=3, positive on the first rows so that every category appears in both files
        // in the same order.
        let w = if i < 3 { 1 } else { (i * i + 3 * i) % 4 };
        weighted.push_str(&format!("{x},{color},{z},{w},{class}\n"));
        for _ in 0..w {
            repeated.push_str(&format!("{x},{color},{z},{class}\n"));
        }
    }
    let (wp, rp) = (dir.path().join("weighted.csv"), dir.path().join("repeated.csv"));
    std::fs::write(&wp, weighted).unwrap();
    std::fs::write(&rp, repeated).unwrap();
    let binary = |s: &str| s.replace(",mid\n", ",hi\n");
    let (wb, rb) = (dir.path().join("weighted2.csv"), dir.path().join("repeated2.csv"));
    std::fs::write(&wb, binary(&std::fs::read_to_string(&wp).unwrap())).unwrap();
    std::fs::write(&rb, binary(&std::fs::read_to_string(&rp).unwrap())).unwrap();
    let runs: &[(&[&str], bool)] = &[
        (&["--algo", "real-adaboost", "--max-leaves", "4"], true),
        (&["--algo", "t-adaboost", "--t", "0.6", "--max-nodes", "7"], true),
        (&["--algo", "secboost", "--loss", "exponential", "--max-leaves", "3"], true),
        (&["--algo", "real-adaboost-mh", "--max-leaves", "4"], false),
        (&["--algo", "adaboost-mr", "--max-leaves", "3"], false),
    ];
    for (extra, is_binary) in runs {
        let (w_data, r_data) = if *is_binary { (&wb, &rb) } else { (&wp, &rp) };
        let (wm, rm) = (dir.path().join("wm.json"), dir.path().join("rm.json"));
        let mut args = vec!["train", "--data", w_data.to_str().unwrap(), "--weight", "w", "--rounds", "8"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--model", wm.to_str().unwrap()]);
        let (ok, _, se) = run(&args);
        assert!(ok, "{extra:?}: {se}");
        let mut args = vec!["train", "--data", r_data.to_str().unwrap(), "--rounds", "8"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--model", rm.to_str().unwrap()]);
        let (ok, _, se) = run(&args);
        assert!(ok, "{extra:?}: {se}");
        let a: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&wm).unwrap()).unwrap();
        let b: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&rm).unwrap()).unwrap();
        assert!(!a["trees"].as_array().unwrap().is_empty());
        // SecBoost's secant weights −(F(ẽ+v) − F(ẽ))/v amplify last-bit differences of the edges
        // by about |ẽ|/|v| each round (crates/boostlab/tests/sample_weights.rs): 1e−9 there.
        let tol = if extra[1] == "secboost" { 1e-9 } else { 1e-12 };
        same_json(&format!("{extra:?}"), &a, &b, tol);
    }
}

/// `a` and `b` have the same structure and strings; numbers agree to `tol` (at least 1e−9 under
/// `history`) relative to max(|x|, |y|, 1).
fn same_json(path: &str, a: &serde_json::Value, b: &serde_json::Value, tol: f64) {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            let tol = if path.contains("history") { tol.max(1e-9) } else { tol };
            // Relative to max(|x|, |y|, 1): a leaf value ½ ln((W+ + ε)/(W− + ε)) near 0 carries the
            // sums' relative rounding as an absolute error.
            assert!((x - y).abs() <= tol * x.abs().max(y.abs()).max(1.0), "{path}: {x} vs {y}");
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{path}: lengths");
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                same_json(&format!("{path}[{i}]"), u, v, tol);
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "{path}: keys");
            for (k, u) in x {
                same_json(&format!("{path}.{k}"), u, &y[k], tol);
            }
        }
        _ => assert_eq!(a, b, "{path}"),
    }
}

/// `train --weight w` with all the positive weight on one class is refused
/// (it used to train a constant model), with the error Python gives.
#[test]
fn positive_weight_on_one_class_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = String::from("x,w,label\n");
    for i in 0..40 {
        let label = if i % 2 == 0 { "yes" } else { "no" };
        s.push_str(&format!("{i},{},{label}\n", if label == "yes" { 1.5 } else { 0.0 }));
    }
    let p = dir.path().join("d.csv");
    std::fs::write(&p, s).unwrap();
    let m = dir.path().join("m.json");
    for algo in ["adaboost", "t-adaboost", "adaboost-mh"] {
        fails_with(
            &["train", "--data", p.to_str().unwrap(), "--weight", "w", "--algo", algo, "--model", m.to_str().unwrap()],
            "sample weights are positive on one class only (yes)",
        );
        assert!(!m.exists(), "no model written");
    }
}

/// Replaces every number of each JSON list `"key":[...]` in `text` by `value`.
fn set_lists(text: &str, key: &str, value: &str) -> String {
    let pat = format!("\"{key}\":[");
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(&pat) {
        let start = i + pat.len();
        let end = start + rest[start..].find(']').unwrap();
        let n = rest[start..end].split(',').filter(|s| !s.is_empty()).count();
        out.push_str(&rest[..start]);
        out.push_str(&vec![value; n].join(","));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn hostile_model_files_and_inputs_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 120, &["no", "yes"]);
    let d = data.to_str().unwrap();
    let model = dir.path().join("m.json");
    let m = model.to_str().unwrap();
    // An infinite temperature is refused at the parameter check, before any model is written.
    fails_with(&["train", "--data", d, "--criterion", "tempered:t=-inf", "--model", m], "criterion.t");
    assert!(!model.exists());
    let (ok, _, se) = run(&["train", "--data", d, "--algo", "real-adaboost", "--rounds", "5", "--model", m]);
    assert!(ok, "{se}");
    let text = std::fs::read_to_string(&model).unwrap();
    // n_outputs = 1e12 with no trees: a clear error, not an abort.
    let hostile = dir.path().join("outputs.json");
    let edited = text.replace("\"n_outputs\":1,", "\"n_outputs\":1000000000000,");
    let (a, b) = (edited.find("\"trees\":[").unwrap(), edited.find(",\"base_score\"").unwrap());
    let edited = format!("{}\"trees\":[],\"alphas\":[]{}", &edited[..a], &edited[b..]);
    assert!(edited.contains("1000000000000") && edited.contains("\"trees\":[]"));
    std::fs::write(&hostile, edited).unwrap();
    fails_with(&["predict", "--model", hostile.to_str().unwrap(), "--data", d], "n_outputs: 1000000000000");
    // α and leaf values of 1e200: refused (their product overflows), naming the field.
    let hostile = dir.path().join("alphas.json");
    std::fs::write(&hostile, set_lists(&set_lists(&text, "alphas", "1e200"), "leaf_values", "1e200")).unwrap();
    fails_with(
        &["predict", "--model", hostile.to_str().unwrap(), "--data", d, "--proba"],
        "alphas: the scores can reach",
    );
    // A LIBSVM index of 1e12 in a 28-byte file: a clear error, no allocation.
    let svm = dir.path().join("a.svm");
    std::fs::write(&svm, "+1 1:0.5 1000000000000:2\n-1 2:1\n").unwrap();
    fails_with(&["train", "--data", svm.to_str().unwrap(), "--model", m], "above the largest supported index 16777215");
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
fn parquet_train_and_streamed_predict_match_csv() {
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
    let scores = model.predict(&d.features, &Prediction::scores()).unwrap();
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

/// The texts of an SVG file, after checking that it is well-formed XML with an `<svg>` root.
fn svg_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{}: not well-formed: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

/// Parses a CSV of numbers (after the header) into rows.
fn numbers(text: &str) -> (Vec<String>, Vec<Vec<f64>>) {
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect()).collect())
}

#[test]
fn inspect_importance_predict_contrib_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = write_data(d, "train.csv", 240, &["no", "yes"]);
    let multi = write_data(d, "multi.csv", 240, &["a", "b", "c"]);
    let model = d.join("m.json");
    let ms = |p: &Path| p.to_str().unwrap().to_string();
    for (algo, data) in
        [("real-adaboost", &data), ("t-adaboost", &data), ("real-adaboost-mh", &multi), ("adaboost-mo", &multi)]
    {
        let (ok, _, se) = run(&[
            "train",
            "--data",
            &ms(data),
            "--algo",
            algo,
            "--rounds",
            "12",
            "--max-leaves",
            "4",
            "--model",
            &ms(&model),
        ]);
        assert!(ok, "{algo}: {se}");
        let m = boostlab::Ensemble::load(&model).unwrap();
        // inspect --importance --json: the library's numbers.
        let (ok, so, _) = run(&["inspect", "--model", &ms(&model), "--importance", "--json"]);
        assert!(ok);
        let v: serde_json::Value = serde_json::from_str(&so).unwrap();
        let imp = &v["importance"];
        for kind in ["split", "gain"] {
            let got: Vec<f64> = serde_json::from_value(imp[kind].clone()).unwrap();
            let want = m.feature_importance(boostlab::explain::ImportanceKind::parse(kind).unwrap());
            assert_eq!(got, want, "{algo} {kind}");
            assert!((got.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let (ok, so, _) = run(&["inspect", "--model", &ms(&model), "--importance"]);
        assert!(ok && so.contains("feature importance") && so.contains("color"), "{so}");
        // predict --contrib: per output, one column per feature and a bias; rows sum to the scores.
        let (ok, contrib, se) = run(&["predict", "--model", &ms(&model), "--data", &ms(data), "--contrib"]);
        assert!(ok, "{algo}: {se}");
        let (ok, pred, _) = run(&["predict", "--model", &ms(&model), "--data", &ms(data)]);
        assert!(ok);
        let (header, rows) = numbers(&contrib);
        let k = m.n_outputs;
        assert_eq!(header.len(), 4 * k, "{header:?}");
        assert_eq!(header[3], if k == 1 { "bias".to_string() } else { format!("bias@{}", m.output_names()[0]) });
        let scores: Vec<Vec<f64>> =
            pred.lines().skip(1).map(|l| l.split(',').skip(1).map(|x| x.parse().unwrap()).collect()).collect();
        assert_eq!(rows.len(), 240);
        for (r, s) in rows.iter().zip(&scores) {
            for o in 0..k {
                let sum: f64 = r[o * 4..(o + 1) * 4].iter().sum();
                assert!((sum - s[o]).abs() < 1e-9, "{algo}: {sum} vs {}", s[o]);
            }
        }
        if algo == "t-adaboost" {
            fails_with(
                &["predict", "--model", &ms(&model), "--data", &ms(data), "--contrib", "--clipped"],
                "not additive",
            );
        }
        // Plots: well-formed SVG with the expected series.
        let svg = d.join("p.svg");
        let (ok, _, se) =
            run(&["plot", "learning-curve", "--model", &ms(&model), "--data", &ms(data), "--out", &ms(&svg)]);
        assert!(ok, "{se}");
        let texts = svg_texts(&svg);
        let train_key = if k == 1 { "train (train_error)" } else { "train (" };
        assert!(texts.iter().any(|t| t.starts_with(train_key)), "{algo}: {texts:?}");
        let file = data.file_name().unwrap().to_str().unwrap();
        assert!(texts.iter().any(|t| *t == format!("{file} (test_error)")), "{texts:?}");
        // No validation curve in these models' history: none drawn.
        assert!(!texts.iter().any(|t| t.starts_with("valid")), "{texts:?}");
        let (ok, _, se) = run(&["plot", "importance", "--model", &ms(&model), "--out", &ms(&svg)]);
        assert!(ok, "{se}");
        let texts = svg_texts(&svg);
        for f in ["x", "color", "z"] {
            assert!(texts.iter().any(|t| t == f), "{texts:?}");
        }
        let (ok, _, se) = run(&[
            "plot",
            "margins",
            "--model",
            &ms(&model),
            "--data",
            &ms(data),
            "--rounds",
            "1,6,12",
            "--out",
            &ms(&svg),
        ]);
        assert!(ok, "{se}");
        let texts = svg_texts(&svg);
        for r in ["round 1", "round 6", "round 12"] {
            assert!(texts.iter().any(|t| t == r), "{texts:?}");
        }
    }
    fails_with(&["plot", "margins", "--model", &ms(&model), "--out", &ms(&d.join("x.svg"))], "needs --data");
    fails_with(
        &[
            "plot",
            "margins",
            "--model",
            &ms(&model),
            "--data",
            &ms(&multi),
            "--rounds",
            "99",
            "--out",
            &ms(&d.join("x.svg")),
        ],
        "rounds",
    );
}

#[test]
fn export_onnx_and_its_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ms = |p: &Path| p.to_str().unwrap().to_string();
    // A categorical feature `colour` that decides half of the label: its splits export too.
    let mut s = String::from("x,z,colour,label\n");
    for i in 0..200 {
        let x = (i * 37 % 101) as f64 / 10.0;
        let z = if i % 9 == 0 { String::new() } else { format!("{}", i * 13 % 7) };
        let colour = ["red", "green", "blue", ""][i * 7 % 4];
        let class = if colour == "red" { 2 } else { (x as usize + i % 2) % 3 };
        s.push_str(&format!("{x},{z},{colour},{}\n", ["a", "b", "c"][class]));
    }
    let (bin_csv, multi_csv) = (d.join("b.csv"), d.join("m.csv"));
    std::fs::write(&multi_csv, &s).unwrap();
    std::fs::write(&bin_csv, s.replace(",c\n", ",a\n")).unwrap();
    let (model, onnx) = (d.join("m.json"), d.join("m.onnx"));
    for (algo, data, ok_export) in
        [("real-adaboost", &bin_csv, true), ("real-adaboost-mh", &multi_csv, true), ("adaboost-mo", &multi_csv, false)]
    {
        let (ok, _, se) = run(&[
            "train",
            "--data",
            &ms(data),
            "--algo",
            algo,
            "--rounds",
            "5",
            "--max-leaves",
            "4",
            "--model",
            &ms(&model),
        ]);
        assert!(ok, "{se}");
        if ok_export {
            let (ok, so, se) = run(&["export", "--model", &ms(&model), "--onnx", &ms(&onnx)]);
            assert!(ok && so.contains("written"), "{algo}: {se}");
            let bytes = std::fs::read(&onnx).unwrap();
            // A ModelProto: field 1 (ir_version, varint) first, and the operator's name inside.
            assert_eq!(bytes[0], 0x08);
            assert!(bytes.windows(21).any(|w| w == b"TreeEnsembleRegressor"));
            // The category codes' lookup table and the levels in the metadata.
            assert!(bytes.windows(9).any(|w| w == b"cat_table"), "{algo}: no categorical split exported");
            let levels = br#"{"colour":["blue","green","red"]}"#;
            assert!(bytes.windows(levels.len()).any(|w| w == levels));
        } else {
            fails_with(&["export", "--model", &ms(&model), "--onnx", &ms(&onnx)], "output-code");
        }
    }
    let (ok, _, se) = run(&[
        "train",
        "--data",
        &ms(&bin_csv),
        "--algo",
        "t-adaboost",
        "--t",
        "0.5",
        "--rounds",
        "3",
        "--model",
        &ms(&model),
    ]);
    assert!(ok, "{se}");
    fails_with(&["export", "--model", &ms(&model), "--onnx", &ms(&onnx), "--clipped"], "not a sum of trees");
}

/// `--t auto` chooses t by inner cross-validation; the model keeps the choice and the
/// inner errors (`inspect`), and equals `--t <chosen>` trained directly; `--t-grid` / `--t-folds`
/// change the search, and go only with `--t auto`.
#[test]
fn t_auto_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 240, &["0", "1"]);
    let d = data.to_str().unwrap();
    let auto = dir.path().join("auto.json");
    let base = ["train", "--data", d, "--algo", "t-adaboost", "--max-nodes", "7", "--rounds", "8", "--seed", "3"];
    let with = |extra: &[&str], model: &Path| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--model", model.to_str().unwrap()]);
        let (ok, _, se) = run(&a);
        assert!(ok, "{a:?}: {se}");
    };
    with(&["--t", "auto", "--t-grid", "0,0.5,1", "--t-folds", "4"], &auto);
    let (ok, json, _) = run(&["inspect", "--model", auto.to_str().unwrap(), "--json"]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let sel = &v["t_selection"];
    assert_eq!(sel["grid"], serde_json::json!([0.0, 0.5, 1.0]));
    assert_eq!(sel["folds"], 4);
    let scores: Vec<f64> = sel["scores"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect();
    assert_eq!(scores.len(), 3);
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)));
    let t = sel["t"].as_f64().unwrap();
    let best = scores.iter().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(t, [0.0, 0.5, 1.0][scores.iter().position(|&s| s == best).unwrap()]);
    assert_eq!(v["params"]["t_adaboost"]["t"].as_f64().unwrap(), t);
    // The refit is the plain fit at the chosen t.
    let fixed = dir.path().join("fixed.json");
    with(&["--t", &t.to_string()], &fixed);
    let trees = |p: &Path| -> serde_json::Value {
        let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        serde_json::json!([m["trees"], m["alphas"]])
    };
    assert_eq!(trees(&auto), trees(&fixed));
    let (ok, text, _) = run(&["inspect", "--model", auto.to_str().unwrap()]);
    assert!(ok && text.contains("t = auto") && text.contains("← chosen"), "{text}");
    fails_with(
        &["train", "--data", d, "--algo", "t-adaboost", "--t", "0.5", "--t-grid", "0,1"],
        "--t-grid goes with --t auto",
    );
    fails_with(&["train", "--data", d, "--algo", "t-adaboost", "--t", "warm"], "or `auto`");
    fails_with(&["train", "--data", d, "--algo", "t-adaboost", "--t", "auto", "--t-grid", "0,3"], "auto_t.grid");
}

#[test]
fn t_schedule_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 240, &["0", "1"]);
    let d = data.to_str().unwrap();
    let base = ["train", "--data", d, "--algo", "t-adaboost", "--max-nodes", "7", "--rounds", "5", "--seed", "3"];
    let with = |extra: &[&str], name: &str| -> serde_json::Value {
        let model = dir.path().join(name);
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--model", model.to_str().unwrap()]);
        let (ok, _, se) = run(&a);
        assert!(ok, "{a:?}: {se}");
        serde_json::from_str(&std::fs::read_to_string(model).unwrap()).unwrap()
    };
    let m = with(&["--t-schedule", "linear:0:0.8"], "s.json");
    assert_eq!(m["params"]["t_adaboost"]["t_schedule"], "linear:0:0.8");
    let ts: Vec<f64> = m["history"].as_array().unwrap().iter().map(|r| r["t"].as_f64().unwrap()).collect();
    assert_eq!(ts, [0.0, 0.2, 0.4, 0.6000000000000001, 0.8]);
    // The clipped model clips at 1/(1 − T1).
    assert_eq!(m["clip"].as_f64().unwrap(), 1.0 / (1.0 - 0.8));
    // A constant schedule is the fixed t.
    let c = with(&["--t-schedule", "linear:0.6:0.6"], "c.json");
    let f = with(&["--t", "0.6"], "f.json");
    assert_eq!(serde_json::json!([c["trees"], c["alphas"]]), serde_json::json!([f["trees"], f["alphas"]]));
    fails_with(&["train", "--data", d, "--algo", "t-adaboost", "--t-schedule", "linear:0:2"], "t_schedule");
    fails_with(
        &["train", "--data", d, "--algo", "t-adaboost", "--t", "0.5", "--t-schedule", "linear:0:1"],
        "replaces --t",
    );
    fails_with(&["train", "--data", d, "--algo", "adaboost", "--t-schedule", "linear:0:1"], "--t-schedule applies");
}

/// The binary boosters train with their own defaults (Real AdaBoost: 32 leaves at learning rate
/// 0.1), and `--preset paper` gives back the papers' 100 stumps at learning rate 1, the same
/// trees as those flags spelled out.
#[test]
fn algorithm_defaults_and_the_paper_preset() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_data(dir.path(), "d.csv", 200, &["0", "1"]);
    let train = |name: &str, extra: &[&str]| -> serde_json::Value {
        let model = dir.path().join(name);
        let mut args = vec!["train", "--data", data.to_str().unwrap(), "--algo", "real-adaboost"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--calibration", "none", "--model", model.to_str().unwrap(), "-q"]);
        let (ok, _, se) = run(&args);
        assert!(ok, "{se}");
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap()
    };
    let default = train("d.json", &[]);
    assert_eq!(default["params"]["tree"]["max_leaves"], 32);
    assert_eq!(default["params"]["learning_rate"], 0.1);
    let paper = train("p.json", &["--preset", "paper"]);
    let spelled = train("s.json", &["--max-leaves", "2", "--rounds", "100", "--learning-rate", "1"]);
    assert_eq!(paper["params"]["tree"]["max_leaves"], 2);
    assert_eq!(paper["params"]["n_estimators"], 100);
    assert_eq!(paper["trees"], spelled["trees"]);
    assert_ne!(paper["trees"], default["trees"]);
}
