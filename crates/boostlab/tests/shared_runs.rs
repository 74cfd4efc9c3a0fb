//! The "done when" runs of the issues on the papers' datasets (../shared/datasets).

use crate::common;

use boostlab::data::{read_csv, CsvOptions, LabelSelector};
use boostlab::eval::folds::{stratified_fold_ids, train_test_indices};
use boostlab::{Algorithm, BoostParams, Dataset, Ensemble, Target};

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

fn assert_finite_model(m: &Ensemble) {
    assert!(m.alphas.iter().all(|a| a.is_finite()));
    assert!(m.trees.iter().all(|t| t.leaf_values.iter().all(|v| v.is_finite())));
    m.validate().unwrap();
}

fn classes(d: &Dataset) -> Vec<u32> {
    match &d.target {
        Some(Target::Classes { y, .. }) => y.clone(),
        _ => unreachable!(),
    }
}

#[test]
fn t_adaboost_on_sonar_for_every_t() {
    let Some(data) = common::shared_csv("sonar.csv") else { return };
    for t in [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.1] {
        let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 20, ..Default::default() };
        p.tree.max_nodes = Some(15);
        p.t_adaboost.t = t;
        let m = fit(&data, &p).unwrap();
        assert_finite_model(&m);
        assert_eq!(m.clip.is_some(), t < 1.0, "t = {t}");
        for r in &m.history {
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
                assert!(r.values.contains_key(k), "t = {t}, round {}: no {k}", r.round);
            }
            assert!(r.values["train_error"] <= r.values["bound"] + 1e-9 || t > 1.0);
        }
        // The paper's observation: no weight switches off within 20 rounds.
        assert!(m.history.iter().all(|r| r.values["switched_off"] == 0.0));
        let err_clipped = m.error_rate(&data, true).unwrap();
        assert!((err_clipped - m.history.last().unwrap().values["train_error_clipped"]).abs() < 1e-12);
    }
}

#[test]
fn authors_mode_on_sonar() {
    let Some(data) = common::shared_csv("sonar.csv") else { return };
    let mut p = BoostParams::with_preset(boostlab::boost::preset::Preset::Authors);
    p.algorithm = Algorithm::TAdaBoost;
    p.n_estimators = 20;
    p.tree.max_nodes = Some(15);
    p.t_adaboost.t = 0.6;
    let m = fit(&data, &p).unwrap();
    assert_finite_model(&m);
    assert_eq!(m.params.tree.max_split_candidates, Some(2000));
    assert_eq!(m.params.tree.grow_order, boostlab::tree::GrowOrder::Count);
}

#[test]
fn secboost_on_tictactoe_every_setting() {
    let Some(data) = common::shared_csv("tictactoe.csv") else { return };
    for loss in ["logistic", "clipped-logistic:q=-2", "spring:Q=500"] {
        for max_nodes in [None, Some(20)] {
            for delta in [0.1, 1.0] {
                let mut p = BoostParams { algorithm: Algorithm::SecBoost, n_estimators: 20, ..Default::default() };
                p.secboost.loss = loss.parse().unwrap();
                p.secboost.delta_init = delta;
                p.secboost.alpha_rule = boostlab::boost::secboost::AlphaRule::Solve;
                p.tree.max_nodes = max_nodes;
                let m = fit(&data, &p).unwrap_or_else(|e| panic!("{loss} {max_nodes:?} {delta}: {e}"));
                assert_finite_model(&m);
                let last = m.history.last().unwrap();
                for k in ["eta", "alpha", "w2", "epsilon", "z_obi", "mean_abs_weight", "risk", "train_error"] {
                    assert!(m.history[0].values.contains_key(k), "{loss}: no {k}");
                }
                assert!(last.values["train_error"] < 0.35, "{loss} {max_nodes:?} {delta}: {:?}", last.values);
            }
        }
    }
}

#[test]
fn every_multiclass_booster_on_the_papers_domains() {
    let algos = [
        Algorithm::AdaBoostMH,
        Algorithm::RealAdaBoostMH,
        Algorithm::AdaBoostMO,
        Algorithm::RealAdaBoostMO,
        Algorithm::AdaBoostMR,
        Algorithm::AdaBoostM2,
    ];
    for (name, ceiling) in [("segment.csv", 0.35), ("vowel.csv", 0.8), ("satimage.csv", 0.35), ("soybean.csv", 0.5)] {
        let Some(data) = common::shared_csv(name) else { return };
        let folds = stratified_fold_ids(&classes(&data), 3, 0).unwrap();
        let (train, test) = train_test_indices(&folds, 0);
        let (tr, te) = (data.subset(&train), data.subset(&test));
        for a in algos {
            let mut p = BoostParams { algorithm: a, n_estimators: 15, ..Default::default() };
            p.tree.max_leaves = 4;
            let m = fit(&tr, &p).unwrap_or_else(|e| panic!("{name} {a:?}: {e}"));
            assert_finite_model(&m);
            let metrics = m.evaluate(&te, false).unwrap();
            assert!(metrics["test_error"] < ceiling, "{name} {a:?}: {metrics:?}");
            assert_eq!(metrics["test_error"], metrics["one_error"], "{name} {a:?}");
        }
    }
}

#[test]
fn multilabel_yeast_and_emotions() {
    for (name, hamming_ceiling) in [("yeast.multilabel.csv", 0.25), ("emotions.multilabel.csv", 0.3)] {
        let Some(path) = common::shared(name) else { return };
        let opts = CsvOptions { label: LabelSelector::Prefix("label_".into()), ..Default::default() };
        let data = read_csv(path, &opts).unwrap();
        for a in [Algorithm::RealAdaBoostMH, Algorithm::AdaBoostMR] {
            let mut p = BoostParams { algorithm: a, n_estimators: 10, ..Default::default() };
            p.tree.max_leaves = 4;
            let m = fit(&data, &p).unwrap();
            assert_finite_model(&m);
            let metrics = m.evaluate(&data, false).unwrap();
            for k in ["hamming_loss", "one_error", "ranking_loss"] {
                assert!(metrics[k].is_finite() && metrics[k] >= 0.0, "{name} {a:?} {k}");
            }
            assert!(metrics["hamming_loss"] < hamming_ceiling, "{name} {a:?}: {metrics:?}");
        }
    }
}

#[test]
fn adult_with_categoricals_and_missing_values() {
    let Some(data) = common::shared_csv("adult.csv") else { return };
    let mut p = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 100, ..Default::default() };
    p.tree.max_leaves = 8;
    let start = std::time::Instant::now();
    let m = fit(&data, &p).unwrap();
    assert_finite_model(&m);
    assert!(m.error_rate(&data, false).unwrap() < 0.14);
    eprintln!("adult, 100 rounds of 8-leaf trees: {:.2} s", start.elapsed().as_secs_f64());
}
