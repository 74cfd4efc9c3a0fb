//! The Rust API reproduces, bit for bit, the models and scores the Python package produced on the
//! same CSV data (STYLE 9: the same predictions through every entry point). The expected values
//! are written by `python/tests/model_files/test_consistency.py`, which also checks that Python still produces
//! them and that the CLI agrees; this test needs no Python.

use boostlab::data::{read_csv_from, CsvOptions, LabelSelector};
use boostlab::Ensemble;
use boostlab::Prediction;

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

#[test]
fn rust_api_reproduces_python_models_and_scores() {
    let text = include_str!("../../../python/tests/golden/consistency.json");
    let golden: serde_json::Value = serde_json::from_str(text).unwrap();
    let cases = golden["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let opts =
            CsvOptions { label: LabelSelector::Name(case["label"].as_str().unwrap().into()), ..Default::default() };
        let data = read_csv_from(case["csv"].as_str().unwrap().as_bytes(), "golden.csv", &opts).unwrap();
        let python = Ensemble::from_json(case["model"].as_str().unwrap()).unwrap();
        // Prediction: the Python-trained model scores the CSV exactly as Python did.
        let want: Vec<f64> = serde_json::from_value(case["scores"].clone()).unwrap();
        let got = python.predict(&data.features, &Prediction::scores()).unwrap();
        assert_eq!(bits(&got), bits(&want), "{name}: scores");
        if let Some(clipped) = case.get("clipped_scores") {
            let want: Vec<f64> = serde_json::from_value(clipped.clone()).unwrap();
            assert_eq!(
                bits(&python.predict(&data.features, &Prediction::scores().clipped(true)).unwrap()),
                bits(&want),
                "{name}: clipped"
            );
        }
        // Training: the same parameters on the same data give the same model.
        let rust = fit(&data, &python.params).unwrap();
        assert_eq!(rust.trees, python.trees, "{name}: trees");
        assert_eq!(bits(&rust.alphas), bits(&python.alphas), "{name}: alphas");
        assert_eq!(rust.history, python.history, "{name}: history");
        assert_eq!(
            (rust.schema, rust.task, rust.clip, rust.base_score),
            (python.schema, python.task, python.clip, python.base_score)
        );
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}
