//! Cross-checks between boosters through the whole pipeline (binning, trees, driver, model):
//! where the algorithms coincide mathematically, their models must coincide numerically.

use boostlab::boost::adaboost::AlphaRule;
use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::tree::{Criterion, PureLeaves};
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams};
use rand::{Rng, SeedableRng};

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

fn data(seed: u64, n: usize) -> Dataset {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut cols = vec![Vec::new(); 4];
    let mut y = Vec::new();
    for _ in 0..n {
        let x: Vec<f64> = (0..4).map(|_| (rng.gen_range(-1.0f64..1.0) * 50.0).round() / 50.0).collect();
        let noise: f64 = rng.gen_range(-0.6..0.6);
        y.push(u32::from(x[0] - x[1] * x[2] + 0.3 * x[3] + noise > 0.0));
        for (c, v) in cols.iter_mut().zip(x) {
            c.push(v);
        }
    }
    Dataset::new(
        Features {
            names: (0..4).map(|i| format!("x{i}")).collect(),
            columns: cols.into_iter().map(Column::Numeric).collect(),
        },
        Some(Target::Classes { y, classes: vec!["0".into(), "1".into()] }),
        None,
    )
    .unwrap()
}

/// docs/explanation/tadaboost.md#tadaboost-t-one: at t = 1 t-AdaBoost is AdaBoost with the linear-bound α on h/R, on the same trees
/// (Matusita = L^(1), the t = 1 link = ½ ln(W+/W−), pure leaves forbidden as in the paper).
#[test]
fn t_equal_one_is_adaboost_with_the_linear_bound_alpha() {
    for seed in 0..4 {
        let d = data(seed, 400);
        let mut t1 = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 15, ..Default::default() };
        t1.t_adaboost.t = 1.0;
        t1.tree.max_leaves = 6;
        t1.tree.pure_leaves = PureLeaves::Forbid;
        let mut ada = t1.clone();
        ada.algorithm = Algorithm::RealAdaBoost;
        ada.adaboost.alpha = Some(AlphaRule::LinearBound);
        ada.adaboost.smoothing = Some(0.0);
        ada.tree.criterion = Some(Criterion::Matusita);
        let (a, b) = (fit(&d, &t1).unwrap(), fit(&d, &ada).unwrap());
        assert_eq!(a.n_trees(), b.n_trees());
        for (ta, tb) in a.trees.iter().zip(&b.trees) {
            assert_eq!(ta.nodes, tb.nodes, "seed {seed}: same splits");
            for (x, y) in ta.leaf_values.iter().zip(&tb.leaf_values) {
                assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "seed {seed}: leaf {x} vs {y}");
            }
        }
        for (x, y) in a.alphas.iter().zip(&b.alphas) {
            assert!((x - y).abs() <= 1e-10 * y.abs().max(1.0), "seed {seed}: α {x} vs {y}");
        }
        // Continuity: t = 1 − 2e−9 (genuinely tempered arithmetic) matches t = 1 to 1e−6.
        let mut near = t1.clone();
        near.t_adaboost.t = 1.0 - 2e-9;
        let c = fit(&d, &near).unwrap();
        for (x, y) in c.alphas.iter().zip(&a.alphas) {
            assert!((x - y).abs() < 1e-6, "seed {seed}: α {x} vs {y}");
        }
    }
}

/// With two classes, discrete AdaBoost.MH (one-vs-all on ±1 labels) predicts like binary AdaBoost.
/// Random sample weights avoid exact weight ties in a leaf, where the two break differently (the
/// binary sign leaf votes +1; MH votes +1 for both labels and the arg-max takes the first class).
#[test]
fn two_class_mh_predicts_like_binary_adaboost() {
    for seed in 0..4 {
        let mut d = data(seed + 10, 300);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        d.sample_weight = Some((0..300).map(|_| rng.gen_range(0.5..1.5)).collect());
        let mut p = BoostParams { algorithm: Algorithm::AdaBoost, n_estimators: 20, ..Default::default() };
        p.tree.max_leaves = 4;
        let bin = fit(&d, &p).unwrap();
        p.algorithm = Algorithm::AdaBoostMH;
        let mh = fit(&d, &p).unwrap();
        let pb = bin.classes_from_scores(&bin.predict(&d.features, &Prediction::scores()).unwrap());
        let pm = mh.classes_from_scores(&mh.predict(&d.features, &Prediction::scores()).unwrap());
        assert_eq!(pb, pm, "seed {seed}");
        // And the scores are mirror images: f(x, 1) = −f(x, 0) = the binary score.
        let sb = bin.predict(&d.features, &Prediction::scores()).unwrap();
        let sm = mh.predict(&d.features, &Prediction::scores()).unwrap();
        for (i, s) in sb.iter().enumerate() {
            assert!((sm[2 * i + 1] - s).abs() < 1e-9 && (sm[2 * i] + s).abs() < 1e-9, "seed {seed} row {i}");
        }
    }
}

/// A batch loss (how a Python callable arrives) equal to the built-in logistic trains the same
/// SecBoost model — the same splits; leaves and α within rounding, since the built-in loss's
/// weights and OBIs come from its closed forms and the callable's from its values — and is called
/// a bounded number of times per round, not once per example.
#[test]
fn batch_loss_equals_builtin_and_is_called_per_step_not_per_example() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let d = data(3, 300);
    let mut p = BoostParams { algorithm: Algorithm::SecBoost, n_estimators: 10, ..Default::default() };
    p.tree.max_leaves = 4;
    // The loss calls of the boosting rounds alone (calibration's fold fits would add theirs).
    p.calibration = boostlab::params::CalibrationParams::none();
    for oracle in [boostlab::boost::secboost::OffsetOracle::Auto, boostlab::boost::secboost::OffsetOracle::Grid] {
        p.secboost.oracle = oracle;
        let builtin = fit(&d, &p).unwrap();
        let calls = Arc::new(AtomicUsize::new(0));
        let c = calls.clone();
        let logistic = move |z: &[f64], out: &mut [f64]| {
            c.fetch_add(1, Ordering::Relaxed);
            let reference = boostlab::math::loss::Loss::from_spec(&boostlab::math::loss::LossSpec::Logistic).unwrap();
            reference.eval_many(z, out);
        };
        let loss =
            boostlab::math::loss::Loss::custom_batch("my-logistic", Arc::new(logistic), true, Some(0.25)).unwrap();
        let user = boostlab::Trainer::new(&p).loss(loss).fit(&d).unwrap();
        let close = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| (a - b).abs() <= 1e-9 * b.abs().max(1e-3))
        };
        assert_eq!(user.trees.len(), builtin.trees.len(), "{oracle:?}");
        for (u, b) in user.trees.iter().zip(&builtin.trees) {
            assert_eq!(u.nodes, b.nodes, "{oracle:?}: splits");
            assert!(close(&u.leaf_values, &b.leaf_values), "{oracle:?}: {:?} vs {:?}", u.leaf_values, b.leaf_values);
        }
        assert!(close(&user.alphas, &builtin.alphas), "{oracle:?}: {:?} vs {:?}", user.alphas, builtin.alphas);
        assert_eq!(user.custom_loss.as_deref(), Some("my-logistic"));
        let per_round = calls.load(Ordering::Relaxed) as f64 / user.n_trees() as f64;
        assert!(per_round < 60.0, "{oracle:?}: {per_round} calls per round for 300 examples");
    }
}
