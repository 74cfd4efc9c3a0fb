//! Discrete AdaBoost with stumps agrees with scikit-learn's AdaBoostClassifier (SAMME, depth-1
//! Gini trees) on the breast-cancer data: the same staged training-error curve and α (SAMME's
//! binary α is twice AdaBoost's). The expected values were produced by
//! `scripts/golden/sklearn_adaboost_curve.py`; this test needs no Python.

use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::tree::Criterion;
use boostlab::BoostParams;

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

#[test]
fn staged_training_error_matches_sklearn() {
    let text = include_str!("golden/sklearn_adaboost_breast_cancer.json");
    let g: serde_json::Value = serde_json::from_str(text).unwrap();
    let rows: Vec<Vec<f64>> = serde_json::from_value(g["X"].clone()).unwrap();
    let y: Vec<u32> = serde_json::from_value(g["y"].clone()).unwrap();
    let want: Vec<f64> = serde_json::from_value(g["train_error"].clone()).unwrap();
    let want_alpha: Vec<f64> = serde_json::from_value(g["sklearn_alphas_over_two"].clone()).unwrap();
    let d = rows[0].len();
    let columns = (0..d).map(|j| Column::Numeric(rows.iter().map(|r| r[j]).collect())).collect();
    let data = Dataset::new(
        Features { names: (0..d).map(|j| format!("x{j}")).collect(), columns },
        Some(Target::Classes { y, classes: vec!["0".into(), "1".into()] }),
        None,
    )
    .unwrap();
    // Enough bins for one per distinct value: thresholds at exact midpoints, as scikit-learn's.
    let mut p = BoostParams { n_estimators: want.len(), max_bins: 1024, ..Default::default() };
    p.tree.criterion = Some(Criterion::Gini);
    let m = fit(&data, &p).unwrap();
    assert_eq!(m.n_trees(), want.len());
    let mut got = Vec::new();
    m.for_each_stage(&data.features, false, |_, s| {
        let Some(Target::Classes { y, .. }) = &data.target else { unreachable!() };
        got.push(s.iter().zip(y).filter(|(s, y)| (**s > 0.0) != (**y == 1)).count() as f64 / y.len() as f64);
    })
    .unwrap();
    // Identical curves (every value is k/569); α to 1e-9 (sums of weights in another order).
    assert_eq!(got, want);
    for (t, (a, b)) in m.alphas.iter().zip(&want_alpha).enumerate() {
        assert!((a - b).abs() < 1e-9, "round {}: {a} vs {b}", t + 1);
    }
}
