//! Sample weights are frequency weights, everywhere. For every booster, a dataset
//! with integer sample weights gives the model of the dataset whose rows are repeated that many
//! times (in place, `np.repeat` order; a row of weight 0 is a removed row): the same trees, α
//! and leaf values equal to 1e−12 relative (the same sums taken in another order), and the same
//! predictions.

use boostlab::boost::multiclass::CodeSpec;
use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::tree::GrowOrder;
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams, Ensemble};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

/// What the labels are.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Binary,
    Multiclass,
    Multilabel,
}

/// `n` rows of 3 continuous features (distinct values: no tied thresholds), labels of `kind`
/// from a noisy rule, and integer weights in 0..=3.
fn weighted_data(seed: u64, n: usize, kind: Kind) -> (Features, Target, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<Vec<f64>> = (0..3).map(|_| (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()).collect();
    let noise: Vec<f64> = (0..n).map(|_| rng.gen_range(-0.4..0.4)).collect();
    let score = |i: usize| x[0][i] + 0.6 * x[1][i] * x[2][i] + noise[i];
    let target = match kind {
        Kind::Binary => Target::Classes {
            y: (0..n).map(|i| u32::from(score(i) > 0.0)).collect(),
            classes: vec!["a".into(), "b".into()],
        },
        Kind::Multiclass => Target::Classes {
            y: (0..n)
                .map(|i| {
                    if score(i) < -0.3 {
                        0
                    } else if score(i) < 0.3 {
                        1
                    } else {
                        2
                    }
                })
                .collect(),
            classes: vec!["a".into(), "b".into(), "c".into()],
        },
        Kind::Multilabel => Target::Multilabel {
            y: (0..n)
                .flat_map(|i| {
                    [u8::from(score(i) > 0.0), u8::from(x[1][i] + noise[i] > 0.2), u8::from(x[2][i] - x[0][i] > 0.0)]
                })
                .collect(),
            labels: vec!["p".into(), "q".into(), "r".into()],
        },
    };
    let w: Vec<f64> = (0..n).map(|_| f64::from(rng.gen_range(0u32..=3))).collect();
    let features = Features {
        names: vec!["x0".into(), "x1".into(), "x2".into()],
        columns: x.into_iter().map(Column::Numeric).collect(),
    };
    (features, target, w)
}

/// The weighted dataset and the dataset with every row repeated `w` times.
fn pair(seed: u64, n: usize, kind: Kind) -> (Dataset, Dataset) {
    let (f, t, w) = weighted_data(seed, n, kind);
    let rows: Vec<usize> = w.iter().enumerate().flat_map(|(i, &k)| std::iter::repeat_n(i, k as usize)).collect();
    let weighted = Dataset::new(f, Some(t), Some(w)).unwrap();
    let mut repeated = weighted.subset(&rows);
    repeated.sample_weight = None;
    (weighted, repeated)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300) || a == b
}

/// Same trees (nodes exactly), α and leaf values to `tol` relative, same scores on the data.
fn assert_same_model(what: &str, weighted: &Ensemble, repeated: &Ensemble, data: &Dataset, tol: f64) {
    assert_eq!(weighted.n_trees(), repeated.n_trees(), "{what}: number of trees");
    assert!(weighted.n_trees() >= 2, "{what}: the test needs more than one round");
    for (j, (a, b)) in weighted.trees.iter().zip(&repeated.trees).enumerate() {
        assert_eq!(a.nodes, b.nodes, "{what}: tree {j} splits");
        for (x, y) in a.leaf_values.iter().zip(&b.leaf_values) {
            assert!(close(*x, *y, tol), "{what}: tree {j} leaf value {x} vs {y}");
        }
    }
    for (j, (x, y)) in weighted.alphas.iter().zip(&repeated.alphas).enumerate() {
        assert!(close(*x, *y, tol), "{what}: α of round {j}: {x} vs {y}");
    }
    assert_eq!(weighted.base_score, repeated.base_score, "{what}");
    assert_eq!(weighted.clip, repeated.clip, "{what}");
    for clipped in [false, true] {
        let (a, b) = (
            weighted.predict(&data.features, &Prediction::scores().clipped(clipped)).unwrap(),
            repeated.predict(&data.features, &Prediction::scores().clipped(clipped)).unwrap(),
        );
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() <= 1e-10 * y.abs().max(1.0), "{what}: score {x} vs {y}");
        }
    }
    // The diagnostics that count examples count repeated rows (training error, ...).
    for (ra, rb) in weighted.history.iter().zip(&repeated.history) {
        for (k, v) in &rb.values {
            let got = ra.values.get(k).copied().unwrap_or(f64::NAN);
            assert!(close(got, *v, 1e-9) || (got - v).abs() < 1e-12, "{what}: round {} {k}: {got} vs {v}", rb.round);
        }
        assert_eq!(ra.stop_reason.is_some(), rb.stop_reason.is_some(), "{what}: stop");
    }
}

fn check(what: &str, kind: Kind, params: &BoostParams) {
    check_to(what, kind, params, 1e-12);
}

fn check_to(what: &str, kind: Kind, params: &BoostParams, tol: f64) {
    for seed in 0..3 {
        let (weighted, repeated) = pair(seed, 60, kind);
        let a = fit(&weighted, params).unwrap_or_else(|e| panic!("{what} seed {seed}: {e}"));
        let b = fit(&repeated, params).unwrap_or_else(|e| panic!("{what} seed {seed}: {e}"));
        assert_same_model(&format!("{what} (seed {seed})"), &a, &b, &weighted, tol);
    }
}

fn params(algorithm: Algorithm, leaves: usize) -> BoostParams {
    let mut p = BoostParams { algorithm, n_estimators: 8, ..Default::default() };
    p.tree.max_leaves = leaves;
    p
}

#[test]
fn adaboost_discrete_real_abstaining_weights_are_repetitions() {
    check("adaboost stumps", Kind::Binary, &params(Algorithm::AdaBoost, 2));
    check("adaboost 4 leaves", Kind::Binary, &params(Algorithm::AdaBoost, 4));
    check("real-adaboost", Kind::Binary, &params(Algorithm::RealAdaBoost, 4));
    let mut p = params(Algorithm::AdaBoost, 2);
    p.tree.grow_order = GrowOrder::Count;
    p.tree.max_leaves = 5;
    check("adaboost, count order", Kind::Binary, &p);
    check("abstaining-adaboost", Kind::Binary, &params(Algorithm::AbstainingAdaBoost, 2));
}

#[test]
fn t_adaboost_weights_are_repetitions() {
    for t in [0.0, 0.5, 0.8, 1.0, 1.3, 1.7] {
        check(&format!("t-adaboost t = {t}"), Kind::Binary, &{
            let mut p = params(Algorithm::TAdaBoost, 4);
            p.t_adaboost.t = t;
            p
        });
    }
    let mut p = params(Algorithm::TAdaBoost, 4);
    p.t_adaboost.t = 0.6;
    let mut authors = boostlab::BoostParams::with_preset(boostlab::boost::preset::Preset::Authors);
    authors.algorithm = p.algorithm;
    authors.n_estimators = p.n_estimators;
    authors.tree.max_leaves = p.tree.max_leaves;
    authors.t_adaboost.t = p.t_adaboost.t;
    check("t-adaboost authors' mode (count order)", Kind::Binary, &authors);
    p.t_adaboost.learner_weights = boostlab::boost::tadaboost::LearnerWeights::CoDensity;
    check("t-adaboost co-density", Kind::Binary, &p);
}

#[test]
fn secboost_weights_are_repetitions() {
    for loss in ["logistic", "square", "exponential", "tempered:t=0.5", "clipped-logistic:q=-2"] {
        let mut p = params(Algorithm::SecBoost, 4);
        p.secboost.loss = loss.parse().unwrap();
        // Solve_α's α = δ_init/2^k is exact; the closed-form α of the β-smooth losses (logistic,
        // square) = η/(2(1+ε)M²W̄) carries the last-bit difference of η = Σ w y h/m summed over
        // weights instead of copies, and the secant weights −(F(ẽ+v) − F(ẽ))/v of the next
        // rounds amplify a last-bit difference of the edges by about |ẽ|/|v| (measured: 1e−11
        // relative for logistic, 1e−10 for square after 8 rounds).
        let tol = if matches!(loss, "logistic" | "square") { 1e-9 } else { 1e-12 };
        check_to(&format!("secboost {loss}"), Kind::Binary, &p, tol);
    }
}

/// The spring loss `ln(1 + e^(−z)) + (1 − √(1 − 4(z_Q − round(z_Q))²))/Q` has a cusp every 1/Q:
/// the offset oracle's choice jumps with the last bits of an edge near a cusp, so weighted and
/// repeated rows agree only as long as no edge is near one (here: the first rounds).
#[test]
fn secboost_spring_loss_first_rounds() {
    let mut p = params(Algorithm::SecBoost, 4);
    p.secboost.loss = "spring:Q=500".parse().unwrap();
    p.n_estimators = 2;
    check("secboost spring:Q=500, 2 rounds", Kind::Binary, &p);
}

#[test]
fn multiclass_and_multilabel_weights_are_repetitions() {
    for algo in [
        Algorithm::AdaBoostMH,
        Algorithm::RealAdaBoostMH,
        Algorithm::AdaBoostMO,
        Algorithm::RealAdaBoostMO,
        Algorithm::AdaBoostMR,
        Algorithm::AdaBoostM2,
    ] {
        check(&format!("{} multi-class", algo.name()), Kind::Multiclass, &params(algo, 4));
    }
    let mut p = params(Algorithm::AdaBoostMO, 3);
    p.multiclass.code = CodeSpec::Random { columns: 3, seed: 3 };
    check("adaboost-mo random code", Kind::Multiclass, &p);
    let mut p = params(Algorithm::RealAdaBoostMH, 4);
    p.multiclass.single_label_start = true;
    check("real-adaboost-mh single-label start", Kind::Multiclass, &p);
    for algo in [Algorithm::AdaBoostMH, Algorithm::RealAdaBoostMH, Algorithm::AdaBoostMR] {
        check(&format!("{} multi-label", algo.name()), Kind::Multilabel, &params(algo, 4));
    }
}

/// Weights positive on one class only are refused (as Python refuses them),
/// and a weight-0 row is a removed row also for the trainability check.
#[test]
fn positive_weight_on_one_class_is_refused() {
    let (f, t, _) = weighted_data(1, 30, Kind::Binary);
    let Target::Classes { y, .. } = &t else { unreachable!() };
    let w: Vec<f64> = y.iter().map(|&c| if c == 1 { 2.0 } else { 0.0 }).collect();
    let data = Dataset::new(f, Some(t.clone()), Some(w)).unwrap();
    for algo in [Algorithm::AdaBoost, Algorithm::TAdaBoost, Algorithm::SecBoost, Algorithm::AdaBoostMH] {
        let err = fit(&data, &params(algo, 2)).unwrap_err().to_string();
        assert!(err.contains("positive on one class only (b)"), "{}: {err}", algo.name());
    }
    let (f, t, _) = weighted_data(1, 30, Kind::Multilabel);
    let n = 30;
    let mut w = vec![0.0; n];
    w[0] = 1.0;
    let err = fit(&Dataset::new(f, Some(t), Some(w)).unwrap(), &params(Algorithm::AdaBoostMH, 2)).unwrap_err();
    assert!(err.to_string().contains("positive sample weight"), "{err}");
}

#[test]
fn weights_summing_to_infinity_are_refused() {
    let (f, t, _) = weighted_data(2, 10, Kind::Binary);
    let err = Dataset::new(f, Some(t), Some(vec![1e308; 10])).unwrap_err().to_string();
    assert!(err.contains("sum to inf"), "{err}");
}
