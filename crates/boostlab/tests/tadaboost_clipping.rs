//! docs/explanation/tadaboost.md#tadaboost-algorithm: t-AdaBoost's clip events per round, and the expectation that the clipped
//! and the linear model predict alike (Lemma E: on the training sample the upper clip never binds).

use crate::common;

use boostlab::eval::folds::stratified_fold_ids;
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams};

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

#[test]
fn clipped_and_linear_models_predict_alike() {
    for dataset in ["sonar.csv", "tictactoe.csv"] {
        let Some(data) = common::shared_csv(dataset) else { return };
        let labels: Vec<u32> = match data.target().expect("labels") {
            boostlab::data::Target::Classes { y, .. } => y.clone(),
            other => panic!("{dataset}: not single-label: {other:?}"),
        };
        let folds = stratified_fold_ids(&labels, 3, 2023).expect("folds");
        let train: Vec<usize> = (0..labels.len()).filter(|&i| folds[i] != 0).collect();
        let test: Vec<usize> = (0..labels.len()).filter(|&i| folds[i] == 0).collect();
        let (tr, te) = (data.subset(&train), data.subset(&test));
        for t in [0.0, 0.4, 0.8, 0.9] {
            let mut p =
                BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 60, seed: 1, ..Default::default() };
            p.t_adaboost.t = t;
            p.tree.max_nodes = Some(15);
            let m = fit(&tr, &p).expect("fits");
            for r in &m.history {
                // docs/explanation/tadaboost.md#tadaboost-clipped, Lemma E: δ − y H_j(x_i) > 0 on the training sample: the upper clip never binds.
                assert_eq!(r.values["clip_events_upper"], 0.0, "{dataset} t={t} round {}", r.round);
                assert!(r.values["clip_events_lower"] >= 0.0);
                assert_eq!(
                    r.values["train_error"], r.values["train_error_clipped"],
                    "{dataset} t={t} round {}",
                    r.round
                );
            }
            for d in [&tr, &te] {
                let lin = m.classes_from_scores(&m.predict(&d.features, &Prediction::scores()).expect("predicts"));
                let clip = m.classes_from_scores(
                    &m.predict(&d.features, &Prediction::scores().clipped(true)).expect("predicts"),
                );
                assert_eq!(lin, clip, "{dataset} t={t}: clipped and linear predictions differ");
            }
        }
    }
}
