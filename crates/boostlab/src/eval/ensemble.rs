//! The metrics of a model on labelled data (docs/explanation/experiments.md#experiments): the evaluation side of [`Ensemble`].

use std::collections::BTreeMap;

use crate::data::{Dataset, Target};
use crate::error::{Error, Result};
use crate::model::{Ensemble, Prediction, Task};

impl Ensemble {
    /// Metrics of precomputed scores on a labelled dataset, by name: `test_error` always (the
    /// error rate for single-label data — for multi-class data it equals the one-error —, the
    /// Hamming loss for multi-label data), `accuracy`, and for multi-class and multi-label data
    /// `hamming_loss`, `one_error`, `ranking_loss`, `coverage`, `average_precision`,
    /// `subset_accuracy`, `jaccard_accuracy`, `micro_f1`, `macro_f1` (see [`crate::eval::multilabel`]).
    pub fn metrics_from_scores(&self, data: &Dataset, scores: &[f64]) -> Result<BTreeMap<String, f64>> {
        let mut m = BTreeMap::new();
        let target = data.target()?;
        let names = self.task.names();
        let (y_pm, k) = match target {
            Target::Classes { y, classes } => {
                let pred = self.classes_from_scores(scores);
                let wrong =
                    pred.iter().zip(y).filter(|(p, y)| names.get(**p as usize) != classes.get(**y as usize)).count();
                let err = wrong as f64 / y.len().max(1) as f64;
                m.insert("test_error".to_string(), err);
                m.insert("accuracy".to_string(), 1.0 - err);
                if matches!(self.task, Task::Binary { .. }) {
                    return Ok(m);
                }
                // One-hot ±1 in the model's class order.
                let k = names.len();
                let mut v = vec![-1.0; y.len() * k];
                for (i, &c) in y.iter().enumerate() {
                    if let Some(j) = names.iter().position(|n| *n == classes[c as usize]) {
                        v[i * k + j] = 1.0;
                    }
                }
                (v, k)
            }
            Target::Multilabel { y, labels } => {
                if labels.len() != self.n_outputs {
                    return Err(Error::InvalidData(format!(
                        "{} labels in the data, the model predicts {}",
                        labels.len(),
                        self.n_outputs
                    )));
                }
                (y.iter().map(|&v| if v == 1 { 1.0 } else { -1.0 }).collect(), labels.len())
            }
        };
        let mut cs = self.class_scores(scores);
        if let Some(theta) = self.label_threshold {
            // Label sets {f > θ}; one shift of every label keeps the rankings.
            cs.iter_mut().for_each(|v| *v -= theta);
        }
        let r = crate::eval::multilabel::report(&y_pm, &cs, k, None)?;
        for (name, v) in [
            ("hamming_loss", r.hamming_loss),
            ("one_error", r.one_error),
            ("ranking_loss", r.ranking_loss),
            ("coverage", r.coverage),
            ("average_precision", r.average_precision),
            ("subset_accuracy", r.subset_accuracy),
            ("jaccard_accuracy", r.jaccard_accuracy),
            ("micro_f1", r.micro_f1),
            ("macro_f1", r.macro_f1),
        ] {
            m.insert(name.to_string(), v);
        }
        if matches!(target, Target::Multilabel { .. }) {
            m.insert("test_error".to_string(), r.hamming_loss);
            m.insert("accuracy".to_string(), r.subset_accuracy);
        }
        Ok(m)
    }

    /// Metrics of the model on a labelled dataset (see [`Ensemble::metrics_from_scores`]).
    pub fn evaluate(&self, data: &Dataset, clipped: bool) -> Result<BTreeMap<String, f64>> {
        let s = self.predict(&data.features, &Prediction::scores().clipped(clipped))?;
        self.metrics_from_scores(data, &s)
    }

    /// Error rate of the model on a labelled dataset (single-label tasks).
    pub fn error_rate(&self, data: &Dataset, clipped: bool) -> Result<f64> {
        let pred = self.classes_from_scores(&self.predict(&data.features, &Prediction::scores().clipped(clipped))?);
        match data.target()? {
            Target::Classes { y, classes } => {
                let names = self.task.names();
                let wrong =
                    pred.iter().zip(y).filter(|(p, y)| names.get(**p as usize) != classes.get(**y as usize)).count();
                Ok(wrong as f64 / y.len().max(1) as f64)
            }
            Target::Multilabel { .. } => {
                Err(Error::InvalidData("error rate of multi-label data: use the multi-label metrics".into()))
            }
        }
    }
}
