//! Training practice through the binary: `--learning-rate`, `--valid` with `--early-stopping-rounds`,
//! `--threads` on every command, and `train --init-model` (warm start).

use crate::support::run;
use std::path::{Path, PathBuf};

fn ok(args: &[&str]) -> String {
    let (ok, so, se) = run(args);
    assert!(ok, "{args:?}: {se}");
    so
}

/// A noisy CSV: 4 numeric features on a grid; `k` classes (label = last column).
fn write_csv(dir: &Path, name: &str, n: usize, k: usize, seed: u64) -> PathBuf {
    let mut s = String::from("a,b,c,d,label\n");
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((x >> 33) % 41) as f64 / 20.0 - 1.0
    };
    for _ in 0..n {
        let v: Vec<f64> = (0..5).map(|_| next()).collect();
        let score = v[0] + 0.6 * v[1] * v[2] - 0.3 * v[3] + 0.6 * v[4];
        let c = (((score + 2.0) * k as f64 / 4.0).floor().max(0.0) as usize).min(k - 1);
        s.push_str(&format!("{},{},{},{},c{c}\n", v[0], v[1], v[2], v[3]));
    }
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

fn model_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn init_model_continues_to_the_one_go_model() {
    let dir = tempfile::tempdir().unwrap();
    let bin2 = write_csv(dir.path(), "b.csv", 300, 2, 1);
    let multi = write_csv(dir.path(), "m.csv", 300, 4, 2);
    let cases: Vec<(&Path, Vec<&str>)> = vec![
        (&bin2, vec!["--algo", "adaboost", "--max-leaves", "4", "--split-ties", "random", "--seed", "3"]),
        (&bin2, vec!["--algo", "real-adaboost", "--learning-rate", "0.3"]),
        (&bin2, vec!["--algo", "t-adaboost", "--t", "0.5", "--max-leaves", "4"]),
        (&bin2, vec!["--algo", "secboost", "--max-leaves", "3"]),
        (&multi, vec!["--algo", "real-adaboost-mh", "--learning-rate", "0.5", "--max-leaves", "4"]),
        (&multi, vec!["--algo", "adaboost-mo", "--code", "random:5"]),
        (&multi, vec!["--algo", "adaboost-m2", "--max-leaves", "4"]),
    ];
    for (i, (data, flags)) in cases.iter().enumerate() {
        let d = data.to_str().unwrap();
        let [full, part, cont] =
            [format!("full{i}.json"), format!("part{i}.json"), format!("cont{i}.json")].map(|f| dir.path().join(f));
        let train = |rounds: &str, out: &Path| {
            let mut a = vec!["train", "--data", d, "--rounds", rounds, "--model", out.to_str().unwrap(), "-q"];
            a.extend(flags.iter().copied());
            ok(&a);
        };
        train("20", &full);
        train("8", &part);
        let so = ok(&[
            "train",
            "--data",
            d,
            "--init-model",
            part.to_str().unwrap(),
            "--rounds",
            "12",
            "--model",
            cont.to_str().unwrap(),
            "-q",
        ]);
        assert!(so.contains("20 trees"), "{flags:?}: {so}");
        assert_eq!(
            std::fs::read_to_string(&cont).unwrap(),
            std::fs::read_to_string(&full).unwrap(),
            "{flags:?}: 8 + 12 rounds differ from 20"
        );
    }
    // Options other than the rounds and the validation settings are refused, as other data are.
    let part = dir.path().join("part0.json");
    let (good, _, se) =
        run(&["train", "--data", bin2.to_str().unwrap(), "--init-model", part.to_str().unwrap(), "--max-leaves", "8"]);
    assert!(!good && se.contains("--init-model") && se.contains("tree.max_leaves"), "{se}");
    let part2 = dir.path().join("part2.json"); // t-adaboost: --algo defaults to the model's
    let (good, _, se) =
        run(&["train", "--data", bin2.to_str().unwrap(), "--init-model", part2.to_str().unwrap(), "--t", "0.3"]);
    assert!(!good && se.contains("t_adaboost.t"), "{se}");
    let other = write_csv(dir.path(), "o.csv", 300, 2, 9);
    let (good, _, se) =
        run(&["train", "--data", other.to_str().unwrap(), "--init-model", part.to_str().unwrap(), "--rounds", "3"]);
    assert!(!good && se.contains("warm start"), "{se}");
}

#[test]
fn early_stopping_keeps_the_best_iteration_of_the_validation_file() {
    let dir = tempfile::tempdir().unwrap();
    let tr = write_csv(dir.path(), "tr.csv", 250, 2, 3);
    let va = write_csv(dir.path(), "va.csv", 400, 2, 4);
    let es = dir.path().join("es.json");
    let so = ok(&[
        "train",
        "--data",
        tr.to_str().unwrap(),
        "--valid",
        va.to_str().unwrap(),
        "--early-stopping-rounds",
        "5",
        "--rounds",
        "300",
        "--max-leaves",
        "8",
        "--model",
        es.to_str().unwrap(),
        "-q",
    ]);
    let m = model_json(&es);
    let best = m["best_iteration"].as_u64().unwrap() as usize;
    let history = m["history"].as_array().unwrap();
    let curve: Vec<f64> = history.iter().map(|r| r["valid_metric"].as_f64().unwrap()).collect();
    assert_eq!(m["eval_metric"], "error");
    assert_eq!(m["trees"].as_array().unwrap().len(), best + 1);
    // The best is the first minimum, and the run stopped 5 rounds after it.
    let min = curve.iter().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(curve.iter().position(|&v| v == min), Some(best));
    assert_eq!(curve.len(), best + 1 + 5, "{so}");
    assert!(history.last().unwrap()["stop_reason"].as_str().unwrap().contains("early stopping"));
    // `predict` on the validation file reports the best round's error.
    let out = ok(&[
        "predict",
        "--model",
        es.to_str().unwrap(),
        "--data",
        va.to_str().unwrap(),
        "--output",
        dir.path().join("p.csv").to_str().unwrap(),
    ]);
    let wrong: f64 = out.split("error ").nth(1).unwrap().trim().parse().unwrap();
    assert!((wrong - curve[best]).abs() < 1e-12, "{out} vs {}", curve[best]);
    // `inspect` reports the best iteration; the learning-curve plot draws the validation curve.
    let text = ok(&["inspect", "--model", es.to_str().unwrap()]);
    assert!(text.contains(&format!("early stopping best iteration {best} (validation error)")), "{text}");
    let svg = dir.path().join("lc.svg");
    ok(&["plot", "learning-curve", "--model", es.to_str().unwrap(), "--out", svg.to_str().unwrap()]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.contains("valid_metric"), "no validation series in the learning curve");
    // Errors name the problem.
    for (args, want) in [
        (vec!["--learning-rate", "0"], "learning_rate"),
        (vec!["--learning-rate", "1.5"], "(0, 1]"),
        (vec!["--learning-rate", "NaN"], "learning_rate"),
        (vec!["--early-stopping-rounds", "3"], "validation data"),
        (vec!["--eval-metric", "auc"], "[possible values: error, hamming, one-error, loss]"),
        (vec!["--eval-clipped"], "--eval-clipped"),
    ] {
        let mut a = vec!["train", "--data", tr.to_str().unwrap(), "--rounds", "3", "-q"];
        a.extend(args.iter().copied());
        let (good, _, se) = run(&a);
        assert!(!good && se.contains(want), "{args:?}: {se}");
    }
}

#[test]
fn threads_give_bit_identical_models_and_predictions_on_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let tr = write_csv(dir.path(), "tr.csv", 3000, 3, 5);
    let va = write_csv(dir.path(), "va.csv", 500, 3, 6);
    let mut models = Vec::new();
    let mut preds = Vec::new();
    let mut cvs = Vec::new();
    for threads in ["1", "2", "3", "0"] {
        let m = dir.path().join(format!("m{threads}.json"));
        let p = dir.path().join(format!("p{threads}.csv"));
        ok(&[
            "train",
            "--data",
            tr.to_str().unwrap(),
            "--algo",
            "real-adaboost-mh",
            "--max-leaves",
            "8",
            "--rounds",
            "15",
            "--learning-rate",
            "0.5",
            "--valid",
            va.to_str().unwrap(),
            "--split-ties",
            "random",
            "--threads",
            threads,
            "--model",
            m.to_str().unwrap(),
            "-q",
        ]);
        ok(&[
            "predict",
            "--model",
            m.to_str().unwrap(),
            "--data",
            va.to_str().unwrap(),
            "--proba",
            "--output",
            p.to_str().unwrap(),
            "--threads",
            threads,
        ]);
        ok(&["inspect", "--model", m.to_str().unwrap(), "--threads", threads]);
        cvs.push(ok(&[
            "cv",
            "--data",
            tr.to_str().unwrap(),
            "--algo",
            "adaboost-mh",
            "--rounds",
            "5",
            "--folds",
            "3",
            "--json",
            "--threads",
            threads,
        ]));
        models.push(std::fs::read_to_string(&m).unwrap());
        preds.push(std::fs::read_to_string(&p).unwrap());
    }
    for i in 1..models.len() {
        assert_eq!(models[i], models[0], "model {i}");
        assert_eq!(preds[i], preds[0], "predictions {i}");
        let mean = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["mean_test_error"].clone();
        assert_eq!(mean(&cvs[i]), mean(&cvs[0]), "cv {i}");
        assert!(mean(&cvs[0]).is_f64());
    }
}
