//! Hostile model files are refused with an error naming the field, or
//! predict finite values; every booster's model file loads back and predicts bit-identically.

use boostlab::boost::multiclass::{CodeSpec, Decode};
use boostlab::data::{read_libsvm_from, Column, LibsvmOptions, Target, MAX_LIBSVM_INDEX};
use boostlab::math::loss::LossSpec;
use boostlab::model::MAX_SCORE_BOUND;
use boostlab::tree::Criterion;
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams, Dataset, Ensemble, Features};
use serde_json::{json, Value};

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

/// 60 rows, a numeric and a categorical feature, labels from `label(i)`.
fn data(label: impl Fn(usize) -> Target) -> Dataset {
    let n = 60;
    let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 23) as f64 / 4.0 - 2.0).collect();
    let c: Vec<u32> = (0..n as u32).map(|i| (i * 7) % 4).collect();
    let features = Features {
        names: vec!["x".into(), "c".into()],
        columns: vec![
            Column::Numeric(x),
            Column::Categorical { codes: c, levels: vec!["a".into(), "b".into(), "c".into(), "d".into()] },
        ],
    };
    Dataset::new(features, Some(label(n)), None).expect("valid data")
}

fn classes(n: usize, k: u32) -> Target {
    let y: Vec<u32> = (0..n as u32).map(|i| ((i * 37) % 23 + i % 3) % k).collect();
    Target::Classes { y, classes: (0..k).map(|c| format!("k{c}")).collect() }
}

fn multilabel(n: usize) -> Target {
    let k = 3;
    let y = (0..n * k).map(|j| u8::from((j * 13 + j / 5) % 3 == 0)).collect();
    Target::Multilabel { y, labels: vec!["p".into(), "q".into(), "r".into()] }
}

/// Saves `m` to a file, loads it back and checks the model and its predictions are unchanged.
fn roundtrip(m: &Ensemble, d: &Dataset, what: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("m.json");
    m.save(&path).expect("save");
    let back = Ensemble::load(&path).unwrap_or_else(|e| panic!("{what}: the written model does not load: {e}"));
    assert_eq!(&back, m, "{what}");
    for clipped in [false, true] {
        let a = m.predict(&d.features, &Prediction::scores().clipped(clipped)).expect("predict");
        let b = back.predict(&d.features, &Prediction::scores().clipped(clipped)).expect("predict");
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a), bits(&b), "{what}");
        assert!(a.iter().all(|v| v.is_finite()), "{what}");
        let p = back.proba_from_scores(&b);
        assert!(p.iter().all(|v| v.is_finite()), "{what}");
    }
}

#[test]
fn every_booster_writes_a_model_that_loads() {
    let binary = data(|n| classes(n, 2));
    let multi = data(|n| classes(n, 4));
    let ml = data(multilabel);
    let mut n_models = 0;
    for algo in [
        Algorithm::AdaBoost,
        Algorithm::RealAdaBoost,
        Algorithm::AbstainingAdaBoost,
        Algorithm::TAdaBoost,
        Algorithm::SecBoost,
        Algorithm::AdaBoostMH,
        Algorithm::RealAdaBoostMH,
        Algorithm::AdaBoostMO,
        Algorithm::RealAdaBoostMO,
        Algorithm::AdaBoostMR,
        Algorithm::AdaBoostM2,
    ] {
        let mut p = BoostParams { algorithm: algo, n_estimators: 8, ..BoostParams::default() };
        p.tree.max_leaves = 4;
        if let Some(v) = algo.multi_variant() {
            p.multiclass.variant = v;
        }
        let sets: Vec<&Dataset> = match algo.multi_variant() {
            None => vec![&binary],
            Some(_) => vec![&binary, &multi, &ml],
        };
        for d in sets {
            let codes = if matches!(algo, Algorithm::AdaBoostMO | Algorithm::RealAdaBoostMO) {
                vec![CodeSpec::OneVsAll, CodeSpec::Random { columns: 5, seed: 3 }, CodeSpec::Exhaustive]
            } else {
                vec![CodeSpec::OneVsAll]
            };
            for code in codes {
                for decode in [Decode::Loss, Decode::Hamming] {
                    let mut p = p.clone();
                    p.multiclass.code = code;
                    p.multiclass.decode = decode;
                    let what = format!(
                        "{algo:?} on {:?} classes, {code}, {decode:?}",
                        d.target.as_ref().map(|t| t.names().len())
                    );
                    match fit(d, &p) {
                        Ok(m) => {
                            roundtrip(&m, d, &what);
                            n_models += 1;
                        }
                        // Some boosters refuse some targets (binary boosters multi-label data,
                        // MO multi-label data): that is a clear error, not a model.
                        Err(e) => assert!(!e.to_string().is_empty(), "{what}"),
                    }
                }
            }
        }
    }
    // Tempered criteria and t-AdaBoost over its range, SecBoost over every loss.
    for t in [0.0, 0.5, 1.0, 1.5, 1.99] {
        let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 6, ..BoostParams::default() };
        p.t_adaboost.t = t;
        p.tree.criterion = Some(Criterion::Tempered { t: 2.0 - t });
        roundtrip(&fit(&binary, &p).expect("t-AdaBoost fits"), &binary, &format!("t-AdaBoost t={t}"));
        n_models += 1;
    }
    for loss in [
        LossSpec::Logistic,
        LossSpec::Exponential,
        LossSpec::Square,
        LossSpec::Hinge,
        LossSpec::ZeroOne,
        LossSpec::ClippedLogistic { q: -1.0 },
        LossSpec::Spring { q: 1.0 },
        LossSpec::Tempered { t: 0.5 },
    ] {
        let mut p = BoostParams { algorithm: Algorithm::SecBoost, n_estimators: 5, ..BoostParams::default() };
        p.secboost.loss = loss;
        if let Ok(m) = fit(&binary, &p) {
            roundtrip(&m, &binary, &format!("SecBoost {loss:?}"));
            n_models += 1;
        }
    }
    assert!(n_models >= 40, "only {n_models} models trained");
}

/// A trained model as JSON, to edit.
fn model_json(algo: Algorithm, d: &Dataset) -> Value {
    let mut p = BoostParams { algorithm: algo, n_estimators: 4, ..BoostParams::default() };
    if let Some(v) = algo.multi_variant() {
        p.multiclass.variant = v;
    }
    let m = fit(d, &p).expect("fits");
    serde_json::from_str(&m.to_json().expect("json")).expect("json")
}

fn load_err(v: &Value) -> String {
    match Ensemble::from_json(&v.to_string()) {
        Ok(_) => panic!("a hostile model loaded: {}", &v.to_string()[..200.min(v.to_string().len())]),
        Err(e) => e.to_string(),
    }
}

#[test]
fn huge_n_outputs_is_refused() {
    // The issue's example: a multi-label model edited to n_outputs = 1e12 with no trees.
    let mut v = model_json(Algorithm::AdaBoostMH, &data(multilabel));
    v["n_outputs"] = json!(1_000_000_000_000u64);
    v["trees"] = json!([]);
    v["alphas"] = json!([]);
    v["output"]["n_labels"] = json!(1_000_000_000_000u64);
    let e = load_err(&v);
    assert!(e.contains("n_outputs") && e.contains("1000000000000"), "{e}");
    // n_outputs alone, or with a matching code of absurd size.
    let mut v = model_json(Algorithm::AdaBoostMH, &data(multilabel));
    v["n_outputs"] = json!(1_000_000_000_000u64);
    assert!(load_err(&v).contains("n_outputs"));
    let mut v = model_json(Algorithm::AdaBoostMO, &data(|n| classes(n, 3)));
    v["output"]["code"]["n_classes"] = json!(1u64 << 32);
    v["output"]["code"]["n_columns"] = json!(1u64 << 32);
    let e = load_err(&v);
    assert!(e.contains("output code"), "{e}");
}

#[test]
fn huge_alpha_and_leaves_are_refused_or_finite() {
    let d = data(|n| classes(n, 2));
    // α = leaf = 1e200: the product overflows; refused, naming the field.
    let mut v = model_json(Algorithm::RealAdaBoost, &d);
    for a in v["alphas"].as_array_mut().expect("alphas") {
        *a = json!(1e200);
    }
    for t in v["trees"].as_array_mut().expect("trees") {
        for l in t["leaf_values"].as_array_mut().expect("leaves") {
            *l = json!(1e200);
        }
    }
    let e = load_err(&v);
    assert!(e.contains("alphas") && e.contains("limit"), "{e}");
    // Within the bound, extreme scores give finite probabilities in every task.
    for (algo, d) in [
        (Algorithm::RealAdaBoost, data(|n| classes(n, 2))),
        (Algorithm::RealAdaBoostMH, data(|n| classes(n, 4))),
        (Algorithm::AdaBoostMO, data(|n| classes(n, 4))),
        (Algorithm::RealAdaBoostMH, data(multilabel)),
    ] {
        let mut v = model_json(algo, &d);
        let n_trees = v["alphas"].as_array().expect("alphas").len() as f64;
        for a in v["alphas"].as_array_mut().expect("alphas") {
            *a = json!(MAX_SCORE_BOUND / n_trees / 1.5);
        }
        for t in v["trees"].as_array_mut().expect("trees") {
            for (i, l) in t["leaf_values"].as_array_mut().expect("leaves").iter_mut().enumerate() {
                *l = json!(if i % 3 == 0 { 1.0 } else { -1.0 });
            }
        }
        let m = Ensemble::from_json(&v.to_string()).expect("within the score bound");
        let s = m.predict(&d.features, &Prediction::scores()).expect("predicts");
        assert!(s.iter().all(|x| x.is_finite()), "{algo:?}");
        assert!(s.iter().any(|x| x.abs() > 1e299), "{algo:?}: extreme scores expected");
        let p = m.proba_from_scores(&s);
        assert!(p.iter().all(|x| x.is_finite() && (0.0..=1.0).contains(x)), "{algo:?}: {:?}", &p[..8]);
        let cs = m.class_scores(&s);
        assert!(cs.iter().all(|x| x.is_finite()), "{algo:?}");
    }
}

/// An edit of a model file's JSON.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn inconsistent_models_name_the_field() {
    let d = data(|n| classes(n, 2));
    let base = model_json(Algorithm::AdaBoost, &d);
    let cases: Vec<(&str, Edit)> = vec![
        ("schema.names", Box::new(|v| v["schema"]["names"][1] = json!("x"))),
        ("schema.levels", Box::new(|v| v["schema"]["levels"][1] = Value::Null)),
        ("schema.levels", Box::new(|v| v["schema"]["levels"][0] = json!(["u"]))),
        ("schema.levels", Box::new(|v| v["schema"]["levels"][1] = json!(["a", "a", "b", "c"]))),
        ("schema", Box::new(|v| v["schema"]["kinds"] = json!(["numeric"]))),
        ("task", Box::new(|v| v["task"]["classes"] = json!(["k0", "k0"]))),
        ("n_outputs", Box::new(|v| v["n_outputs"] = json!(2))),
        ("alphas", Box::new(|v| v["alphas"] = json!([]))),
        ("params", Box::new(|v| v["params"]["n_estimators"] = json!(0))),
        ("params", Box::new(|v| v["params"]["tree"]["criterion"] = json!({"name": "tempered", "t": 7.0}))),
        ("clip", Box::new(|v| v["clip"] = json!(-1.0))),
        ("base_score", Box::new(|v| v["base_score"] = json!(1e301))),
    ];
    for (field, edit) in cases {
        let mut v = base.clone();
        edit(&mut v);
        let e = load_err(&v);
        assert!(e.contains(&format!("{field}:")) || e.contains(field), "{field}: {e}");
    }
    // A categorical split whose code set names an unknown category, or is unsorted.
    let mut p = BoostParams { n_estimators: 20, ..BoostParams::default() };
    p.tree.max_leaves = 4;
    let m = fit(&d, &p).expect("fits");
    for bad_set in [json!([2, 9]), json!([2, 1])] {
        let mut v: Value = serde_json::from_str(&m.to_json().expect("json")).expect("json");
        let mut edited = 0;
        for t in v["trees"].as_array_mut().expect("trees") {
            for node in t["nodes"].as_array_mut().expect("nodes") {
                if node["rule"]["kind"] == json!("categorical") {
                    node["rule"]["left"] = bad_set.clone();
                    edited += 1;
                }
            }
        }
        assert!(edited > 0, "no categorical split to edit");
        let e = load_err(&v);
        assert!(e.contains("trees:") && e.contains("category set"), "{e}");
    }
}

#[test]
fn tempered_criterion_rejects_infinite_t() {
    let d = data(|n| classes(n, 2));
    for t in [f64::NEG_INFINITY, f64::INFINITY, f64::NAN, 2.5] {
        let mut p = BoostParams::default();
        p.tree.criterion = Some(Criterion::Tempered { t });
        let e = fit(&d, &p).expect_err("refused at parameter check").to_string();
        assert!(e.contains("criterion.t"), "{e}");
    }
}

#[test]
fn libsvm_huge_indices_do_not_allocate() {
    let read = |text: &str| read_libsvm_from(text.as_bytes(), "a.svm", &LibsvmOptions::default());
    // The issue's examples: 1e12 (an abort), 2^64 − 1 (a capacity overflow), 1e8 (7.7 GB).
    for (text, want) in [
        ("+1 1:0.5 1000000000000:2\n-1 2:1\n", "above the largest supported index"),
        ("+1 18446744073709551615:2\n-1 2:1\n", "above the largest supported index"),
        ("+1 1:0.5 100000000:2\n-1 2:1\n", "above the largest supported index"),
        ("+1 1:0.5 1000000:2\n-1 2:1\n", "features for 3 entries on 2 rows"),
        ("+1 1:0.5 16777215:2\n-1 2:1\n", "features for 3 entries on 2 rows"),
        // The fuzzer's time-out: one row naming feature 65,252 (65,252 columns from 12 bytes).
        ("3P 65252:4\n", "at most max(4096, 64 × (entries + rows)) = 4096 features"),
    ] {
        let e = read(text).expect_err(text).to_string();
        assert!(e.contains(want) && e.contains("a.svm"), "{text}: {e}");
    }
    assert_eq!(MAX_LIBSVM_INDEX, 16_777_215);
    // Sparse but within the budgets: 4,096 features on 2 rows; 8,000 features from 125 entries.
    let d = read("+1 1:0.5 4096:2\n-1 2:1\n").expect("within the limits");
    assert_eq!(d.n_features(), 4096);
    let wide: String = (1..=62).map(|j| format!("{}:1 ", j * 129)).collect::<String>() + "8000:1";
    let d = read(&format!("+1 {wide}\n-1 {wide}\n")).expect("within the limits");
    assert_eq!(d.n_features(), 8000);
    // A model's feature count sets the width beyond the file's own budget (prediction).
    let opts = LibsvmOptions { n_features: Some(100_000), ..LibsvmOptions::default() };
    let d = read_libsvm_from("+1 1:0.5\n-1 2:1\n".as_bytes(), "a.svm", &opts).expect("model width");
    assert_eq!(d.n_features(), 100_000);
    // Too many dense cells for the entries: 4,000 rows × 5,000 features from 4,001 entries.
    let mut text = String::from("+1 5000:1\n");
    for _ in 0..4000 {
        text.push_str("-1 1:1\n");
    }
    let e = read(&text).expect_err("too sparse").to_string();
    assert!(e.contains("dense cells"), "{e}");
}
