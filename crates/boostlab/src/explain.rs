//! Explaining a trained [`Ensemble`]: feature importances and the normalised margin
//! distributions of boosting theory. Exact TreeSHAP contributions are a prediction output
//! ([`crate::Output::Contributions`]).
//!
//! The one design choice: everything is read from what the grower recorded in each tree when it
//! split a node — the criterion decrease (`Tree::gains`) and the training examples that reached
//! the node (`Tree::covers`) — so explaining a model never needs its training data. Models written
//! before trees recorded them have neither: their gain importances are 0 and they cannot be
//! explained with TreeSHAP (a clear error says so; retraining records both).

use serde::{Deserialize, Serialize};

use crate::boost::multiclass::MultiOutput;
use crate::data::{Column, ColumnView, Dataset, Target};
use crate::error::{Error, Result};
use crate::model::{Ensemble, Task};
use crate::tree::Node;

/// Which importance [`Ensemble::feature_importance`] measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ImportanceKind {
    /// Number of splits on the feature, over all trees.
    Split,
    /// Total criterion decrease of the splits on the feature (scikit-learn's and LightGBM's
    /// "gain" importance). Default.
    #[default]
    Gain,
}

impl ImportanceKind {
    /// Parses `split` or `gain`.
    pub fn parse(s: &str) -> Result<ImportanceKind> {
        match s {
            "split" => Ok(ImportanceKind::Split),
            "gain" => Ok(ImportanceKind::Gain),
            _ => Err(Error::param("importance", "'split' or 'gain'", s)),
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            ImportanceKind::Split => "split",
            ImportanceKind::Gain => "gain",
        }
    }
}

/// Owned columns of views (the whole matrix, widened to `f64`): TreeSHAP's cost dwarfs the copy.
pub fn columns_of_views(columns: &[ColumnView<'_>]) -> Vec<Column> {
    crate::model::owned_columns(columns)
}

impl Ensemble {
    /// Feature importances, one per model feature, normalised to sum 1 (all 0 when the
    /// model has no split, or for `Gain` when it was written before gains were recorded):
    /// `Split` counts the splits on each feature, `Gain` sums their criterion decreases (each in
    /// its round's weights, as the grower measured it).
    pub fn feature_importance(&self, kind: ImportanceKind) -> Vec<f64> {
        let mut v = self.feature_importance_raw(kind);
        let total: f64 = v.iter().sum();
        if total > 0.0 {
            v.iter_mut().for_each(|x| *x /= total);
        }
        v
    }

    /// [`Ensemble::feature_importance`] before normalisation: split counts or summed gains.
    pub fn feature_importance_raw(&self, kind: ImportanceKind) -> Vec<f64> {
        let mut v = vec![0.0; self.schema.names.len()];
        for tree in &self.trees {
            for (i, node) in tree.nodes.iter().enumerate() {
                if let Node::Split { feature, .. } = node {
                    if let Some(x) = v.get_mut(*feature as usize) {
                        *x += match kind {
                            ImportanceKind::Split => 1.0,
                            ImportanceKind::Gain => tree.gains.get(i).copied().unwrap_or(0.0),
                        };
                    }
                }
            }
        }
        v
    }

    /// The margin normaliser after each round `t = 1..=T`: `|base_score| + Σ_{j≤t} |α_j|·max_leaf
    /// |h_j|`, the largest score magnitude the first `t` trees can reach (`Σ |α_j|` for trees with
    /// ±1 leaves, the margins of Schapire, Freund, Bartlett & Lee 1998), so normalised margins lie
    /// in `[−1, 1]`.
    pub fn margin_norms(&self) -> Vec<f64> {
        let mut acc = self.base_score.abs();
        self.trees
            .iter()
            .zip(&self.alphas)
            .map(|(tree, a)| {
                acc += a.abs() * tree.leaf_values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                acc
            })
            .collect()
    }

    /// The ±1 target of every (row, output) of a labelled dataset, `n × n_outputs`: binary `y`
    /// (+1 for the positive class); per label `Y[ℓ]` for multi-class (one-vs-rest) and multi-label
    /// models; the class's codeword `λ(y)` for output codes (AdaBoost.MO). Classes are matched by
    /// name.
    pub fn signed_targets(&self, target: &Target) -> Result<Vec<f64>> {
        let k = self.n_outputs;
        let names = self.task.names();
        match target {
            Target::Classes { y, classes } => {
                let mut out = Vec::with_capacity(y.len() * k);
                for &c in y {
                    let name = &classes[c as usize];
                    let m = names.iter().position(|n| n == name).ok_or_else(|| {
                        Error::InvalidData(format!("class '{}' is not one of the model's", crate::error::shown(name)))
                    })?;
                    match (&self.task, &self.output) {
                        (Task::Binary { .. }, _) => out.push(if m == 1 { 1.0 } else { -1.0 }),
                        (_, Some(MultiOutput::Code { code, .. })) => {
                            out.extend(code.codeword(m).iter().map(|&v| f64::from(v)))
                        }
                        _ => out.extend((0..k).map(|l| if l == m { 1.0 } else { -1.0 })),
                    }
                }
                Ok(out)
            }
            Target::Multilabel { y, labels } => {
                if labels.len() != k || self.output.as_ref().is_some_and(|o| matches!(o, MultiOutput::Code { .. })) {
                    return Err(Error::InvalidData(format!(
                        "{} labels in the data, the model predicts {k} outputs",
                        labels.len()
                    )));
                }
                Ok(y.iter().map(|&v| if v == 1 { 1.0 } else { -1.0 }).collect())
            }
        }
    }

    /// Normalised margins `y·f_t(x)/N_t` ([`Ensemble::margin_norms`], [`Ensemble::signed_targets`])
    /// of every (row, output) of `data` after each round of `rounds` (1-based, at most the number
    /// of trees), each list sorted ascending: its empirical CDF at θ is the fraction of margins
    /// ≤ θ (the cumulative margin distributions of boosting theory). Linear model.
    pub fn margins(&self, data: &Dataset, rounds: &[usize]) -> Result<Vec<Vec<f64>>> {
        let cols = self.align(&data.features)?;
        self.margins_of_columns(&cols, data.target()?, rounds)
    }

    /// [`Ensemble::margins`] of the model's columns (schema order) and a target.
    pub fn margins_of_columns(&self, columns: &[Column], target: &Target, rounds: &[usize]) -> Result<Vec<Vec<f64>>> {
        let t_max = self.trees.len();
        if let Some(&r) = rounds.iter().find(|&&r| r == 0 || r > t_max) {
            return Err(Error::param("rounds", format!("rounds in 1..={t_max} (the model's trees)"), r));
        }
        let n = columns.first().map_or(0, Column::len);
        if target.len() != n {
            return Err(Error::InvalidData(format!("{} labels for {n} rows", target.len())));
        }
        let y = self.signed_targets(target)?;
        let norms = self.margin_norms();
        let mut s = vec![0.0; n * self.n_outputs];
        rounds
            .iter()
            .map(|&r| {
                self.decision_function_into(columns, Some(r), false, &mut s)?;
                Ok(margins_of(&s, &y, norms[r - 1]))
            })
            .collect()
    }
}

/// Sorted `y·s/norm` (a norm of 0 — a model of zero trees' worth — leaves the products).
pub fn margins_of(scores: &[f64], y: &[f64], norm: f64) -> Vec<f64> {
    let div = if norm > 0.0 { norm } else { 1.0 };
    let mut m: Vec<f64> = scores.iter().zip(y).map(|(s, y)| y * s / div).collect();
    m.sort_by(f64::total_cmp);
    m
}

/// The empirical CDF of sorted `margins` at `theta`: the fraction `≤ theta`.
pub fn margin_cdf(margins: &[f64], theta: f64) -> f64 {
    if margins.is_empty() {
        return 0.0;
    }
    margins.partition_point(|&m| m <= theta) as f64 / margins.len() as f64
}

#[cfg(test)]
mod tests;
