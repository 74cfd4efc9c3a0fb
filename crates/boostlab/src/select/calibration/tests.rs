use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::boost::driver::{fit, fit_binned};
use crate::data::{Dataset, Features};
use crate::{Algorithm, Prediction};

/// A noisy binary problem: 3 numeric features (one with missing values), 20% flipped labels,
/// optional integer sample weights in 0..=3.
fn data(n: usize, seed: u64, weights: bool) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut x, mut y) = (Vec::with_capacity(n * 3), Vec::with_capacity(n));
    for _ in 0..n {
        let (a, b): (f64, f64) = (rng.gen(), rng.gen());
        let c = if rng.gen_bool(0.1) { f64::NAN } else { (rng.gen::<f64>() * 7.0).floor() };
        let mut label = a + 0.5 * b > 0.7 || c == 3.0;
        if rng.gen_bool(0.2) {
            label = !label;
        }
        x.extend([a, b, c]);
        y.push(if label { "1" } else { "0" }.to_string());
    }
    let w = weights.then(|| (0..n).map(|_| f64::from(rng.gen_range(0..4u8))).collect());
    let target = crate::data::Target::from_strings(&y, None).unwrap();
    Dataset::new(Features::from_row_major(&x, n, 3).unwrap(), Some(target), w).unwrap()
}

/// Real AdaBoost with trees deep enough to overfit: σ(2f) is then overconfident.
fn params() -> BoostParams {
    let mut p = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 30, seed: 3, ..Default::default() };
    p.tree.max_leaves = 8;
    p
}

/// The objective of [`fit_scale`], summed naively.
fn objective(a: f64, f: &[f64], y: &[bool], w: &[f64]) -> f64 {
    let big_w: f64 = w.iter().sum();
    let mut s = 0.0;
    for ((&f, &y), &w) in f.iter().zip(y).zip(w) {
        let z = a * f;
        let softplus = if z > 0.0 { z + (-z).exp().ln_1p() } else { z.exp().ln_1p() };
        s += w * (softplus - if y { z } else { 0.0 });
    }
    s / big_w + PRIOR * (a - 2.0) * (a - 2.0)
}

/// The minimiser of [`objective`] on `[0, 100]` by golden-section search (no derivatives).
fn golden_min(f: &[f64], y: &[bool], w: &[f64]) -> f64 {
    let r = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (0.0, 100.0);
    for _ in 0..200 {
        let c = b - r * (b - a);
        let d = a + r * (b - a);
        if objective(c, f, y, w) < objective(d, f, y, w) {
            b = d;
        } else {
            a = c;
        }
    }
    0.5 * (a + b)
}

#[test]
fn the_scale_minimises_the_penalised_log_loss_of_a_golden_section_search() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..20 {
        let n = rng.gen_range(5..400);
        let spread = rng.gen_range(0.1..20.0);
        let f: Vec<f64> = (0..n).map(|_| rng.gen_range(-spread..spread)).collect();
        // Labels that follow the score more or less closely.
        let noise = rng.gen_range(0.0..1.0);
        let y: Vec<bool> = f.iter().map(|&s| (s > 0.0) != rng.gen_bool(noise * 0.5)).collect();
        let w: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..3.0)).collect();
        let a = fit_scale(&f, &y, &w, &Shared::default()).unwrap();
        let reference = golden_min(&f, &y, &w);
        assert!((a - reference).abs() <= 1e-6 * reference.max(1.0), "case {case}: {a} vs {reference}");
        let (fa, fr) = (objective(a, &f, &y, &w), objective(reference, &f, &y, &w));
        assert!(fa <= fr + 1e-12 * fr.abs().max(1.0), "case {case}: F(a) = {fa}, F(reference) = {fr}");
    }
}

#[test]
fn separated_scores_keep_a_finite_scale_and_uninformative_ones_keep_the_papers_link() {
    let f: Vec<f64> =
        (0..200).map(|i| if i % 2 == 0 { 1.0 + i as f64 / 100.0 } else { -1.0 - i as f64 / 100.0 }).collect();
    let y: Vec<bool> = (0..200).map(|i| i % 2 == 0).collect();
    let w = vec![1.0; 200];
    let a = fit_scale(&f, &y, &w, &Shared::default()).unwrap();
    assert!(a.is_finite() && a > 3.0 && a < 10.0, "separated: {a}");
    // Scores carry no information: the prior alone decides, a = 2 exactly.
    assert_eq!(fit_scale(&vec![0.0; 200], &y, &w, &Shared::default()).unwrap(), 2.0);
    // Scores that point the wrong way: the scale goes to its bound 0 (probabilities ½), never
    // below (a negative scale would contradict the predicted labels).
    let wrong: Vec<bool> = y.iter().map(|&b| !b).collect();
    let a = fit_scale(&f, &wrong, &w, &Shared::default()).unwrap();
    assert_eq!(a, 0.0, "anti-informative");
}

/// The cross-fitting by hand: each fold's training rows binned with the full data's mapper from
/// their raw values, fitted without calibration, and its held-out rows predicted from their raw
/// values (`Ensemble::predict`, not the bins).
fn hand_cross_fitted_scores(d: &Dataset, p: &BoostParams) -> Vec<f64> {
    let full = BinnedData::from_dataset(d, p.max_bins).unwrap();
    let ids = fold_ids(&full, p.calibration.folds, p.seed).unwrap();
    let mut q = p.clone();
    q.calibration = crate::params::CalibrationParams::none();
    let mut scores = vec![f64::NAN; d.n_rows()];
    for k in 0..p.calibration.folds {
        let train: Vec<usize> = (0..ids.len()).filter(|&i| ids[i] != k).collect();
        let test: Vec<usize> = (0..ids.len()).filter(|&i| ids[i] == k).collect();
        let binned = crate::select::rebinned_rows(d, &full, &train);
        let m = fit_binned(&binned, &q, &mut |_| {}).unwrap();
        let s = m.predict(&d.subset(&test).features, &Prediction::scores()).unwrap();
        for (&i, &v) in test.iter().zip(&s) {
            scores[i] = v;
        }
    }
    scores
}

#[test]
fn the_scale_is_fitted_on_hand_cross_fitted_scores_and_leaves_trees_and_labels_alone() {
    for (seed, weights) in [(1, false), (2, true)] {
        let d = data(500, seed, weights);
        let p = params();
        let m = fit(&d, &p).unwrap();
        let c = m.calibration.clone().expect("calibrated");
        assert_eq!((c.folds, &c.not_fitted), (3, &None));
        let f = hand_cross_fitted_scores(&d, &p);
        assert!(f.iter().all(|v| v.is_finite()), "every row is held out once");
        let crate::data::Target::Classes { y, .. } = d.target().unwrap() else { unreachable!() };
        let pos: Vec<bool> = y.iter().map(|&c| c == 1).collect();
        let w = d.sample_weight.clone().unwrap_or_else(|| vec![1.0; d.n_rows()]);
        let reference = golden_min(&f, &pos, &w);
        assert!((c.scale - reference).abs() <= 1e-6 * reference, "seed {seed}: {} vs {reference}", c.scale);
        // Deep trees on noisy labels are overconfident: the fitted scale shrinks the papers' 2.
        assert!(c.scale < 1.5, "seed {seed}: {}", c.scale);
        // The model is the uncalibrated fit on all rows; only the probabilities differ.
        let mut q = p.clone();
        q.calibration = crate::params::CalibrationParams::none();
        let plain = fit(&d, &q).unwrap();
        assert_eq!((&m.trees, &m.alphas), (&plain.trees, &plain.alphas));
        assert_eq!(plain.calibration, None);
        let s = m.predict(&d.features, &Prediction::scores()).unwrap();
        let proba = m.predict(&d.features, &Prediction::new(crate::Output::Probabilities)).unwrap();
        let old = plain.predict(&d.features, &Prediction::new(crate::Output::Probabilities)).unwrap();
        for (i, &f) in s.iter().enumerate() {
            let p1 = 1.0 / (1.0 + (-c.scale * f).exp());
            assert!((proba[2 * i + 1] - p1).abs() < 1e-15 && (proba[2 * i] - (1.0 - p1)).abs() < 1e-15);
            assert!((old[2 * i + 1] - 1.0 / (1.0 + (-2.0 * f).exp())).abs() < 1e-15);
            // The same side of ½ as the label.
            assert_eq!(proba[2 * i + 1] > 0.5, f > 0.0);
        }
    }
}

#[test]
fn a_row_of_weight_k_calibrates_as_k_copies_of_it() {
    let d = data(300, 4, true);
    let w = d.sample_weight.clone().unwrap();
    let rows: Vec<usize> = (0..d.n_rows()).flat_map(|i| std::iter::repeat_n(i, w[i] as usize)).collect();
    let mut copies = d.subset(&rows);
    copies.sample_weight = None;
    let p = params();
    let a = fit(&d, &p).unwrap().calibration.unwrap();
    let b = fit(&copies, &p).unwrap().calibration.unwrap();
    assert!(a.not_fitted.is_none());
    assert!((a.scale - b.scale).abs() <= 1e-9 * a.scale, "{} vs {}", a.scale, b.scale);
}

#[test]
fn the_calibrated_model_is_bit_identical_across_thread_counts() {
    let d = data(400, 5, true);
    let p = params();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| fit(&d, &p).unwrap().to_json().unwrap())
    };
    assert_eq!(run(1), run(2));
    assert_eq!(run(1), run(3));
}

#[test]
fn a_fold_without_one_class_leaves_the_papers_link_and_says_why() {
    // One positive row: the fold holding it trains on negatives only.
    let x: Vec<f64> = (0..30).map(f64::from).collect();
    let y: Vec<String> = (0..30).map(|i| if i == 7 { "1" } else { "0" }.to_string()).collect();
    let target = crate::data::Target::from_strings(&y, None).unwrap();
    let d = Dataset::new(Features::from_row_major(&x, 30, 1).unwrap(), Some(target), None).unwrap();
    let m = fit(&d, &params()).unwrap();
    let c = m.calibration.clone().unwrap();
    assert_eq!(c.scale, 2.0);
    assert!(c.not_fitted.as_deref().unwrap().contains("one class only"), "{c:?}");
    assert_eq!(m.probability_scale(), 2.0);
}

#[test]
fn equal_rows_share_a_fold_and_the_seed_moves_the_folds() {
    let d = data(300, 6, false);
    let b = BinnedData::from_dataset(&d, 255).unwrap();
    let ids = fold_ids(&b, 3, 0).unwrap();
    let rows: Vec<usize> = (0..300).chain(0..300).collect();
    let twice = subset_rows(&b, &rows).unwrap();
    let ids2 = fold_ids(&twice, 3, 0).unwrap();
    assert_eq!(&ids2[..300], &ids[..]);
    assert_eq!(&ids2[300..], &ids[..]);
    // Every fold is used, roughly a third each.
    for k in 0..3 {
        let n = ids.iter().filter(|&&f| f == k).count();
        assert!((70..130).contains(&n), "fold {k}: {n}");
    }
    let other = fold_ids(&b, 3, 1).unwrap();
    assert!(ids.iter().zip(&other).filter(|(a, b)| a != b).count() > 100);
}

#[test]
fn multi_class_models_are_not_calibrated() {
    let x: Vec<f64> = (0..90).map(f64::from).collect();
    let y: Vec<String> = (0..90).map(|i| ["a", "b", "c"][i % 3].to_string()).collect();
    let target = crate::data::Target::from_strings(&y, None).unwrap();
    let d = Dataset::new(Features::from_row_major(&x, 90, 1).unwrap(), Some(target), None).unwrap();
    let p = BoostParams { algorithm: Algorithm::RealAdaBoostMH, n_estimators: 5, ..Default::default() };
    let m = fit(&d, &p).unwrap();
    assert_eq!(m.calibration, None);
}
