//! The trained model: an [`Ensemble`] of weighted trees with the schema of its features, the
//! task it predicts, its parameters and its training history. Saved as versioned JSON.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::data::Target;
use crate::params::{BoostParams, ParamEntry};
use crate::tree::Tree;

mod contributions;
mod file;
pub mod outputs;
mod predict;
mod validation;

pub use crate::data::Schema;
pub use crate::util::fs::{write_atomic, TMP_SUFFIX};
pub use file::FORMAT_VERSION;
pub use outputs::MultiOutput;
pub(crate) use predict::owned_columns;
pub use predict::{Output, Prediction};
pub use validation::MAX_SCORE_BOUND;

/// One round of training, as logged (`--log-json`) and stored in the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    /// 1-based round number.
    pub round: usize,
    /// Diagnostics by name (`alpha`, `z`, `train_error`, ...). Only finite values are kept.
    #[serde(flatten)]
    pub values: BTreeMap<String, f64>,
    /// Why boosting stopped after (or at) this round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// What `t = auto` chose, kept in the model ([`Ensemble::t_selection`]) and shown by `inspect`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TSelection {
    /// The grid, in the order tried.
    pub grid: Vec<f64>,
    /// Inner cross-validated error of each grid value (same order).
    pub scores: Vec<f64>,
    /// The chosen temperature (the model's `params.t_adaboost.t`).
    pub t: f64,
    /// Number of inner folds.
    pub folds: usize,
    /// Seed of the inner fold assignment (derived from the parameters' seed).
    pub fold_seed: u64,
}

/// How a binary model's probabilities were calibrated, kept in the model
/// ([`Ensemble::calibration`]; docs/explanation/probabilities.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// The scale `a` of `P(classes[1] | x) = σ(a·f(x))` (2 when it could not be fitted).
    pub scale: f64,
    /// Number of folds of the cross-fitting.
    pub folds: usize,
    /// Why the scale could not be fitted (a fold's training rows held one class only); the
    /// model then keeps the uncalibrated link σ(2f).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_fitted: Option<String>,
}

/// What the model predicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Task {
    /// Two classes; `classes[1]` is the positive class (score > 0).
    Binary {
        /// Class names `[negative, positive]`.
        classes: Vec<String>,
    },
    /// Single-label multi-class.
    Multiclass {
        /// Class names.
        classes: Vec<String>,
    },
    /// Multi-label.
    Multilabel {
        /// Label names.
        labels: Vec<String>,
    },
}

impl Task {
    /// The task of a training target (binary when there are two classes).
    pub fn from_target(t: &Target) -> Task {
        match t {
            Target::Classes { classes, .. } if classes.len() == 2 => Task::Binary { classes: classes.clone() },
            Target::Classes { classes, .. } => Task::Multiclass { classes: classes.clone() },
            Target::Multilabel { labels, .. } => Task::Multilabel { labels: labels.clone() },
        }
    }

    /// Class or label names.
    pub fn names(&self) -> &[String] {
        match self {
            Task::Binary { classes } | Task::Multiclass { classes } => classes,
            Task::Multilabel { labels } => labels,
        }
    }
}

/// A trained ensemble `H(x) = Σ_t α_t h_t(x)` (with `n_outputs` scores per example).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ensemble {
    /// Model-file format version ([`FORMAT_VERSION`]).
    pub format_version: u32,
    /// The features the model expects.
    pub schema: Schema,
    /// What it predicts.
    pub task: Task,
    /// The parameters it was trained with.
    pub params: BoostParams,
    /// Scores per example (1 for binary models).
    pub n_outputs: usize,
    /// The trees.
    pub trees: Vec<Tree>,
    /// Their weights α_t.
    pub alphas: Vec<f64>,
    /// Clipping level δ of the clipped model (t-AdaBoost, t < 1): the clipped score is
    /// `S_t = clip(S_{t−1} + α_t h_t(x), [−δ, δ])`, clipping after every addition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<f64>,
    /// Constant added to every score before the trees (SecBoost's `h_0`). By default 0.
    #[serde(default)]
    pub base_score: f64,
    /// How multi-class / multi-label outputs are decoded (AdaBoost.MH/MO/MR/M2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<MultiOutput>,
    /// Name of the user-defined loss a SecBoost model was trained with (`params.secboost.loss`
    /// then only holds the default). Informational.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_loss: Option<String>,
    /// Per-round training diagnostics.
    pub history: Vec<RoundRecord>,
    /// How the training file's label column(s) were named (the CLI's `--label` / `--labels`
    /// syntax: `NAME`, `A,B,C` or `PREFIX*`), so that `predict` finds them in a file of the same
    /// layout. Informational; not used by the library.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_columns: Option<String>,
    /// Every parameter's effective value and where it came from (default, preset, user), by
    /// dotted path (`tree.max_split_candidates`); see [`BoostParams::sources`]. Informational;
    /// empty in models written by older versions.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub param_sources: std::collections::BTreeMap<String, ParamEntry>,
    /// The validation metric whose value each round's record holds as `valid_metric` (
    /// `error`, `hamming`, `one-error`, `loss`); None when trained without validation data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_metric: Option<String>,
    /// Early stopping's best iteration (0-based): the model was truncated to its first
    /// `best_iteration + 1` trees. None without early stopping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_iteration: Option<usize>,
    /// How `t = auto` chose t-AdaBoost's temperature: the grid, the inner cross-validated errors,
    /// the choice. None for every other model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_selection: Option<TSelection>,
    /// The threshold θ of the predicted label sets `{ℓ : f(x, ℓ) > θ}` of a multi-class or
    /// multi-label model, learned on the training data (docs/explanation/multiclass.md#multiclass-mr: AdaBoost.MR/M2 by
    /// default, see [`LabelThreshold`](crate::params::multiclass::LabelThreshold)). None: θ = 0 (every model
    /// written before it). It moves every label's score alike, so rankings and arg-max
    /// predictions do not depend on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_threshold: Option<f64>,
    /// The calibration of a binary model's probabilities (`params.calibration`); None: the
    /// uncalibrated link `σ(2f)` (every model trained with `calibration = none`, and every
    /// multi-class or multi-label model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
}

impl Ensemble {
    /// An empty ensemble.
    pub fn new(schema: Schema, task: Task, params: BoostParams, n_outputs: usize) -> Ensemble {
        Ensemble {
            format_version: FORMAT_VERSION,
            schema,
            task,
            params,
            n_outputs,
            trees: Vec::new(),
            alphas: Vec::new(),
            clip: None,
            base_score: 0.0,
            output: None,
            custom_loss: None,
            history: Vec::new(),
            target_columns: None,
            param_sources: Default::default(),
            eval_metric: None,
            best_iteration: None,
            t_selection: None,
            label_threshold: None,
            calibration: None,
        }
    }

    /// Appends a tree with weight α.
    pub fn push(&mut self, tree: Tree, alpha: f64) {
        self.trees.push(tree);
        self.alphas.push(alpha);
    }

    /// The scale `a` of a binary model's probabilities `σ(a·f)`: the calibrated one, or 2 (the
    /// papers' link; docs/explanation/probabilities.md).
    pub fn probability_scale(&self) -> f64 {
        self.calibration.as_ref().map_or(2.0, |c| c.scale)
    }

    /// Number of trees.
    pub fn n_trees(&self) -> usize {
        self.trees.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boost::driver::{fit, Algorithm, BoostParams};
    use crate::data::{read_csv_from, Column, CsvOptions, Dataset, MISSING_CODE};
    use crate::Prediction;

    fn data() -> Dataset {
        let mut text = String::from("a,b,c,label\n");
        for i in 0..120 {
            let a = (i * 7 % 23) as f64 / 3.0;
            let b = ["x", "y", "z", ""][i % 4];
            let c = if i % 11 == 0 { String::new() } else { format!("{}", (i * 13 % 17) as f64 - 8.5) };
            let y = if a + if b == "y" { 3.0 } else { 0.0 } > 4.0 { "pos" } else { "neg" };
            text.push_str(&format!("{a},{b},{c},{y}\n"));
        }
        read_csv_from(text.as_bytes(), "m.csv", &CsvOptions::default()).unwrap()
    }

    fn model() -> Ensemble {
        let mut p = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 15, ..Default::default() };
        p.tree.max_leaves = 5;
        fit(&data(), &p).unwrap()
    }

    #[test]
    fn save_and_load_predict_bit_identically() {
        let m = model();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        m.save(&path).unwrap();
        let back = Ensemble::load(&path).unwrap();
        assert_eq!(back, m);
        let d = data();
        let a = m.predict(&d.features, &Prediction::scores()).unwrap();
        let b = back.predict(&d.features, &Prediction::scores()).unwrap();
        assert_eq!(
            a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_model_written_before_calibration_reads_as_the_papers_link() {
        let m = model();
        assert!(m.calibration.as_ref().is_some_and(|c| c.not_fitted.is_none() && c.scale != 2.0));
        let mut v: serde_json::Value = serde_json::from_str(&m.to_json().unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("calibration");
        v["params"].as_object_mut().unwrap().remove("calibration");
        let old = Ensemble::from_json(&v.to_string()).unwrap();
        assert_eq!(old.params.calibration.method, crate::params::CalibrationMethod::None);
        assert_eq!(old.probability_scale(), 2.0);
        // A calibrated model keeps its method and scale through a round trip.
        let back = Ensemble::from_json(&m.to_json().unwrap()).unwrap();
        assert_eq!(back.params.calibration.method, crate::params::CalibrationMethod::Sigmoid);
        assert_eq!(back.probability_scale(), m.probability_scale());
    }

    #[test]
    fn training_scores_match_raw_prediction() {
        // The booster's own training scores (via bins) equal prediction from raw values.
        let d = data();
        let m = model();
        let s = m.predict(&d.features, &Prediction::scores()).unwrap();
        let err = m.error_rate(&d, false).unwrap();
        assert_eq!(err, m.history.last().unwrap().values["train_error"]);
        assert_eq!(s.len(), d.n_rows());
    }

    #[test]
    fn corrupt_and_hostile_files_are_rejected() {
        let good = model().to_json().unwrap();
        let cases: Vec<(String, &str)> = vec![
            ("{not json".into(), "not valid JSON"),
            ("{}".into(), "no format_version"),
            (good.replacen("\"format_version\":1", "\"format_version\":99", 1), "format_version 99"),
            (good.replacen("\"left\":1", "\"left\":0", 1), "reached twice"),
            (good.replacen("\"left\":1", "\"left\":999", 1), "out of range"),
            (good.replacen("\"alphas\":[1.0", "\"alphas\":[1e999", 1), "invalid model"),
            (good.replacen("\"n_outputs\":1", "\"n_outputs\":0", 1), "n_outputs"),
            (good.replacen("\"feature\":", "\"feature\":77,\"x\":", 1), "invalid model"),
            (good.replacen("\"calibration\":{\"scale\":", "\"calibration\":{\"scale\":-", 1), "calibration"),
            (
                good.replacen("\"calibration\":{\"scale\":", "\"calibration\":{\"scale\":1e999,\"x\":", 1),
                "invalid model",
            ),
        ];
        for (text, want) in cases {
            let e = Ensemble::from_json(&text).unwrap_err().to_string();
            assert!(e.contains(want), "expected '{want}' in '{e}'");
        }
        let e = Ensemble::load("/nonexistent/m.json").unwrap_err().to_string();
        assert!(e.contains("/nonexistent/m.json"), "{e}");
    }

    #[test]
    fn align_by_name_remaps_categories_and_checks_kinds() {
        let m = model();
        // Columns reordered and levels in another order: same predictions.
        let d = data();
        let mut f2 = d.features.clone();
        f2.names.reverse();
        f2.columns.reverse();
        if let Column::Categorical { codes, levels } = &mut f2.columns[1] {
            levels.reverse();
            let k = levels.len() as u32;
            for c in codes.iter_mut() {
                if *c != MISSING_CODE {
                    *c = k - 1 - *c;
                }
            }
        }
        assert_eq!(
            m.predict(&f2, &Prediction::scores()).unwrap(),
            m.predict(&d.features, &Prediction::scores()).unwrap()
        );
        let mut f3 = d.features.clone();
        f3.columns[0] = Column::Categorical { codes: vec![0; d.n_rows()], levels: vec!["q".into()] };
        assert!(m.predict(&f3, &Prediction::scores()).unwrap_err().to_string().contains("categorical in the data"));
    }
}
