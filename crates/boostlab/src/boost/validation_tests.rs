//! Shrinkage, early stopping and warm start, against naive references.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::boost::adaboost::AdaBoost;
use crate::boost::driver::{fit, fit_with_options};
use crate::boost::multiclass::{MultiBooster, MultiParams, MultiVariant};
use crate::boost::{Booster, Diagnostics, Labels, Step};
use crate::data::{Column, Dataset, Features, Target};
use crate::tree::SplitTies;

/// A noisy problem on 4 numeric features (values on a grid, so bins are exact): binary
/// (`k = 2`), multi-class (`k > 2`) or multi-label (`multilabel`).
fn data(seed: u64, n: usize, k: usize, multilabel: bool) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut cols = vec![Vec::new(); 4];
    let (mut y, mut ym) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let x: Vec<f64> = (0..4).map(|_| (rng.gen_range(-1.0..1.0f64) * 20.0).round() / 20.0).collect();
        let s = x[0] + 0.6 * x[1] * x[2] - 0.3 * x[3] + rng.gen_range(-0.6..0.6);
        let c = (((s + 2.0) * k as f64 / 4.0).floor().max(0.0) as usize).min(k - 1);
        y.push(c as u32);
        for l in 0..k {
            ym.push(u8::from(l == c || (rng.gen_bool(0.2) && x[l % 4] > 0.0)));
        }
        for (col, v) in cols.iter_mut().zip(x) {
            col.push(v);
        }
    }
    let names: Vec<String> = (0..k).map(|c| c.to_string()).collect();
    let target =
        if multilabel { Target::Multilabel { y: ym, labels: names } } else { Target::Classes { y, classes: names } };
    let features = Features {
        names: ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    Dataset::new(features, Some(target), None).expect("valid data")
}

/// Every algorithm with data it trains on and parameters that exercise it (trees of 4 leaves,
/// random ties and candidate subsets where they apply).
fn every_booster() -> Vec<(Algorithm, Dataset, BoostParams)> {
    Algorithm::ALL
        .iter()
        .map(|&(_, a)| {
            let mut p = BoostParams { algorithm: a, n_estimators: 20, seed: 7, ..BoostParams::default() };
            if a != Algorithm::AbstainingAdaBoost {
                p.tree.max_leaves = 4;
                p.tree.split_ties = SplitTies::Random;
                p.tree.max_split_candidates = Some(30);
            }
            if a == Algorithm::TAdaBoost {
                p.t_adaboost.t = 0.6;
            }
            if a == Algorithm::AdaBoostMO {
                p.multiclass.code = crate::boost::multiclass::CodeSpec::Random { columns: 5, seed: 3 };
            }
            let d = match a {
                _ if a.is_binary() => data(1, 300, 2, false),
                Algorithm::AdaBoostMH | Algorithm::AdaBoostMR => data(2, 300, 4, true),
                _ => data(3, 300, 4, false),
            };
            (a, d, p)
        })
        .collect()
}

#[test]
fn learning_rate_is_checked() {
    for bad in [0.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let p = BoostParams { learning_rate: bad, ..BoostParams::default() };
        let e = p.check().unwrap_err().to_string();
        assert!(e.contains("learning_rate") && e.contains("(0, 1]"), "{bad}: {e}");
    }
    assert!(BoostParams { learning_rate: 1e-9, ..BoostParams::default() }.check().is_ok());
}

#[test]
fn shrinkage_scales_every_boosters_first_alpha_and_changes_the_model() {
    for (a, d, mut p) in every_booster() {
        p.n_estimators = 3;
        let full = fit(&d, &p).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        p.learning_rate = 0.3;
        let shrunk = fit(&d, &p).unwrap_or_else(|e| panic!("{a:?}: {e}"));
        // Round 1 grows the same tree (the weights start alike); its vote is ν·α.
        assert_eq!(shrunk.trees[0], full.trees[0], "{a:?}");
        let want = 0.3 * full.alphas[0];
        assert!((shrunk.alphas[0] - want).abs() <= 1e-12 * want.abs(), "{a:?}: {} vs {want}", shrunk.alphas[0]);
        // The weights after it are those of the shrunk model: later rounds differ.
        assert_ne!(shrunk.alphas[1..], full.alphas[1..], "{a:?}");
        assert_eq!(shrunk.history[0].values["alpha"], shrunk.alphas[0], "{a:?}");
    }
}

/// Random ±1 / real weak hypotheses on `n` rows.
fn random_h(rng: &mut ChaCha8Rng, y: &[f64], real: bool) -> Vec<f64> {
    y.iter()
        .map(|&yi| {
            let right = rng.gen_bool(0.7);
            let v = if right { yi } else { -yi };
            if real {
                v * rng.gen_range(0.2..1.5)
            } else {
                v
            }
        })
        .collect()
}

#[test]
fn adaboost_weights_equal_the_naive_exp_of_the_shrunk_margins() {
    let n = 200;
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let y: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 }).collect();
    let labels = Labels { n, k: 1, y: &y, class: None, sample_weight: None };
    for real in [false, true] {
        let mut b: Box<dyn Booster> = if real {
            Box::new(AdaBoost::real(labels, &Default::default()).expect("booster"))
        } else {
            Box::new(AdaBoost::discrete(labels, None).expect("booster"))
        };
        b.set_learning_rate(0.25);
        let mut f = vec![0.0; n];
        let mut stats = vec![0.0; n];
        for round in 0..8 {
            let h = random_h(&mut rng, &y, real);
            let step = b.step_then_statistics(&h, &mut Diagnostics::new(), &mut stats).expect("step");
            let Step::Add { alpha } = step else { panic!("round {round}: {step:?}") };
            for (f, h) in f.iter_mut().zip(&h) {
                *f += alpha * h;
            }
            // Naive: d ∝ exp(−y F), F = Σ ν α h (the model's own votes).
            let e: Vec<f64> = f.iter().zip(&y).map(|(f, y)| (-y * f).exp()).collect();
            let z: f64 = e.iter().sum();
            for (i, (s, e)) in stats.iter().zip(&e).enumerate() {
                assert!((s.abs() - e / z).abs() <= 1e-12 * (e / z), "real={real} round {round} row {i}");
                assert_eq!(s.is_sign_negative(), y[i] < 0.0);
            }
        }
    }
}

#[test]
fn mh_weights_equal_the_naive_exp_of_the_shrunk_margins() {
    let (n, k) = (120, 3);
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let y: Vec<f64> = (0..n * k).map(|_| if rng.gen_bool(0.4) { 1.0 } else { -1.0 }).collect();
    let sw = vec![1.0; n];
    let labels = Labels { n, k, y: &y, class: None, sample_weight: Some(&sw) };
    let mp = MultiParams { variant: MultiVariant::MhReal, ..MultiParams::default() };
    let mut b = MultiBooster::new(&labels, &mp).expect("booster");
    b.set_learning_rate(0.4);
    let mut f = vec![0.0; n * k];
    let mut stats = vec![0.0; n * k];
    for round in 0..6 {
        let h = random_h(&mut rng, &y, true);
        let step = b.step_then_statistics(&h, &mut Diagnostics::new(), &mut stats).expect("step");
        let Step::Add { alpha } = step else { panic!("round {round}: {step:?}") };
        assert_eq!(alpha, 0.4, "real MH folds α = 1 into the leaves: ν·1");
        for (f, h) in f.iter_mut().zip(&h) {
            *f += alpha * h;
        }
        let e: Vec<f64> = f.iter().zip(&y).map(|(f, y)| (-y * f).exp()).collect();
        let z: f64 = e.iter().sum();
        for (s, e) in stats.iter().zip(&e) {
            assert!((s.abs() - e / z).abs() <= 1e-12 * (e / z), "round {round}");
        }
    }
}

/// The naive early stopping: the metric of every stage of the full model, the first best stage,
/// and the stage where `k` rounds have passed without a strictly better value.
fn naive_stop(values: &[f64], k: usize) -> (usize, usize) {
    let (mut best, mut best_t) = (f64::INFINITY, 0);
    for (i, &v) in values.iter().enumerate() {
        let t = i + 1;
        if v < best {
            (best, best_t) = (v, t);
        }
        if t - best_t >= k {
            return (best_t, t);
        }
    }
    (best_t, values.len())
}

#[test]
fn early_stopping_keeps_the_best_validation_iteration() {
    let cases: Vec<(Algorithm, usize, bool, &str, bool)> = vec![
        (Algorithm::AdaBoost, 2, false, "test_error", false),
        (Algorithm::RealAdaBoost, 2, false, "test_error", false),
        (Algorithm::TAdaBoost, 2, false, "test_error", true),
        (Algorithm::RealAdaBoostMH, 4, false, "one_error", false),
        (Algorithm::AdaBoostMO, 4, false, "one_error", false),
        (Algorithm::AdaBoostMH, 4, true, "hamming_loss", false),
    ];
    for (a, k, multi, metric, clipped) in cases {
        let train = data(21, 250, k, multi);
        let held = data(22, 400, k, multi);
        let mut p = BoostParams { algorithm: a, n_estimators: 80, ..BoostParams::default() };
        p.tree.max_leaves = 8;
        p.t_adaboost.t = 0.5;
        p.eval_clipped = clipped;
        let full = fit(&train, &p).expect("full fit");
        // The naive staged evaluation of the full model on the validation data.
        let mut values = Vec::new();
        full.for_each_stage(&held.features, clipped, |_, s| {
            values.push(full.metrics_from_scores(&held, s).expect("metrics")[metric]);
        })
        .expect("stages");
        let kk = 5;
        let (best_t, stop_t) = naive_stop(&values, kk);
        p.early_stopping_rounds = Some(kk);
        let valid = Validation { features: held.features.clone(), target: held.target.clone().expect("target") };
        let opts = FitOptions { valid: Some(&valid), ..FitOptions::default() };
        let es = fit_with_options(&train, &p, None, opts, &mut |_| {}).expect("early-stopped fit");
        assert_eq!(es.n_trees(), best_t, "{a:?}: best stage");
        assert_eq!(es.best_iteration, Some(best_t - 1), "{a:?}");
        assert_eq!(es.trees[..], full.trees[..best_t], "{a:?}");
        assert_eq!(es.alphas[..], full.alphas[..best_t], "{a:?}");
        assert_eq!(es.history.len(), stop_t, "{a:?}: stops {kk} rounds after the best");
        assert!(stop_t - best_t <= kk);
        for (r, v) in es.history.iter().zip(&values) {
            assert_eq!(r.values["valid_metric"], *v, "{a:?} round {}", r.round);
        }
        if stop_t < values.len() {
            assert!(es.history.last().and_then(|r| r.stop_reason.as_deref()).unwrap_or("").contains("early stopping"));
        }
        assert!(es.eval_metric.is_some());
        // The model file keeps the marker and reads back.
        let back = Ensemble::from_json(&es.to_json().expect("json")).expect("reads");
        assert_eq!(back, es);
    }
}

#[test]
fn secboost_validation_loss_is_the_mean_loss_of_each_stage() {
    let train = data(31, 200, 2, false);
    let held = data(32, 150, 2, false);
    let mut p = BoostParams { algorithm: Algorithm::SecBoost, n_estimators: 15, ..BoostParams::default() };
    p.tree.max_leaves = 4;
    let valid = Validation { features: held.features.clone(), target: held.target.clone().expect("target") };
    let m = fit_with_options(&train, &p, None, FitOptions { valid: Some(&valid), ..Default::default() }, &mut |_| {})
        .expect("fit");
    assert_eq!(m.eval_metric.as_deref(), Some("loss"));
    let loss = Loss::from_spec(&p.secboost.loss).expect("loss");
    let Some(Target::Classes { y, .. }) = &held.target else { panic!() };
    let mut t = 0;
    m.for_each_stage(&held.features, false, |_, s| {
        let want =
            s.iter().zip(y).map(|(f, &c)| loss.value(if c == 1 { *f } else { -*f })).sum::<f64>() / y.len() as f64;
        let got = m.history[t].values["valid_metric"];
        assert!((got - want).abs() <= 1e-12 * want.abs(), "round {t}: {got} vs {want}");
        t += 1;
    })
    .expect("stages");
    assert_eq!(t, m.history.len());
}

#[test]
fn early_stopping_needs_validation_data_and_metrics_fit_the_task() {
    let d = data(1, 100, 2, false);
    let p = BoostParams { early_stopping_rounds: Some(3), ..BoostParams::default() };
    let e = fit_with_options(&d, &p, None, FitOptions::default(), &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("early_stopping_rounds") && e.contains("validation"), "{e}");
    let p = BoostParams { eval_metric: Some(EvalMetric::Loss), ..BoostParams::default() };
    assert!(p.check().unwrap_err().to_string().contains("eval_metric"));
    assert_eq!(EvalMetric::parse("one-error").unwrap(), EvalMetric::OneError);
    assert!(EvalMetric::parse("auc").unwrap_err().to_string().contains("hamming"));
}

#[test]
fn warm_start_equals_one_go_for_every_booster() {
    for (a, d, p) in every_booster() {
        for lr in [1.0, 0.5] {
            let p = BoostParams { learning_rate: lr, ..p.clone() };
            let one_go = fit(&d, &p).unwrap_or_else(|e| panic!("{a:?}: {e}"));
            let first = fit(&d, &BoostParams { n_estimators: 8, ..p.clone() }).expect("8 rounds");
            let opts = FitOptions { init_model: Some(&first), ..FitOptions::default() };
            let continued = fit_with_options(&d, &p, None, opts, &mut |_| {}).unwrap_or_else(|e| panic!("{a:?}: {e}"));
            assert_eq!(
                continued.to_json().expect("json"),
                one_go.to_json().expect("json"),
                "{a:?} ν = {lr}: 8 + 12 rounds differ from 20"
            );
        }
    }
}

#[test]
fn warm_start_refuses_other_data_parameters_and_fewer_rounds() {
    let d = data(1, 200, 2, false);
    let p = BoostParams { n_estimators: 6, ..BoostParams::default() };
    let first = fit(&d, &p).expect("fit");
    let go = |d: &Dataset, p: &BoostParams| {
        let opts = FitOptions { init_model: Some(&first), ..FitOptions::default() };
        fit_with_options(d, p, None, opts, &mut |_| {}).map(|_| ()).unwrap_err().to_string()
    };
    let more = BoostParams { n_estimators: 10, ..p.clone() };
    // Other rows: the replayed α (or the bins) differ.
    let e = go(&data(2, 200, 2, false), &more);
    assert!(e.contains("warm start"), "{e}");
    let e = go(&d, &BoostParams { seed: 3, ..more.clone() });
    assert!(e.contains("`seed`"), "{e}");
    let e = go(&d, &BoostParams { n_estimators: 4, ..p.clone() });
    assert!(e.contains("n_estimators") && e.contains("6 trees"), "{e}");
    // As many rounds as it has: the same model.
    let opts = FitOptions { init_model: Some(&first), ..FitOptions::default() };
    assert_eq!(fit_with_options(&d, &p, None, opts, &mut |_| {}).expect("same"), first);
}

#[test]
fn warm_start_with_validation_data_continues_the_curve_and_early_stopping() {
    for a in [Algorithm::AdaBoost, Algorithm::RealAdaBoostMH] {
        let k = if a.is_binary() { 2 } else { 4 };
        let (train, held) = (data(41, 250, k, false), data(42, 300, k, false));
        let valid = Validation { features: held.features.clone(), target: held.target.clone().expect("target") };
        let mut p = BoostParams { algorithm: a, n_estimators: 60, ..BoostParams::default() };
        p.tree.max_leaves = 8;
        let with_valid = |p: &BoostParams, init: Option<&Ensemble>| {
            let opts = FitOptions { valid: Some(&valid), init_model: init, cancel: None };
            fit_with_options(&train, p, None, opts, &mut |_| {}).expect("fit")
        };
        // The validation curve of a continued fit is the one-go curve (the replayed rounds too).
        let one_go = with_valid(&p, None);
        let first = with_valid(&BoostParams { n_estimators: 25, ..p.clone() }, None);
        assert_eq!(with_valid(&p, Some(&first)), one_go, "{a:?}");
        // Early stopping turned on for the continuation: the same as early stopping in one go
        // (the best round may lie among the replayed ones).
        let es = BoostParams { early_stopping_rounds: Some(4), ..p.clone() };
        let es_one_go = with_valid(&es, None);
        assert_eq!(with_valid(&es, Some(&first)), es_one_go, "{a:?}");
        assert!(es_one_go.best_iteration.is_some());
    }
}
