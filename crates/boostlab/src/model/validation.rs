//! Validation of a model read from a file: every size checked against the others, unique names,
//! valid trees, finite numbers and a bound on every score.

use super::{Ensemble, Task};
use crate::data::{FeatureKind, MISSING_CODE};
use crate::error::{Error, Result};

/// The largest score magnitude a model may produce: a loaded model's
/// `|base_score| + Σ_t |α_t|·max_leaf |h_t|` must not exceed it, so sums of scores
/// never overflow to ±∞ or NaN.
pub const MAX_SCORE_BOUND: f64 = 1e300;

/// The first string that appears twice in `v`, if any.
fn first_duplicate(v: &[String]) -> Option<&str> {
    let mut seen = std::collections::HashSet::with_capacity(v.len());
    v.iter().find(|x| !seen.insert(x.as_str())).map(String::as_str)
}

impl Ensemble {
    /// Checks the model's consistency (a model file from an untrusted source either
    /// predicts finite values or is refused, with an error naming the field). Every size is
    /// checked against the others, none trusted on its own: `n_outputs` must equal the number of
    /// class or label names (or the code's columns, whose entries must be present), so the file's
    /// own length bounds every buffer prediction allocates. Also: unique feature, class, label and
    /// category names; kinds against category levels; valid trees whose splits test existing
    /// features of the right kind with sorted, known category codes; finite numbers; valid
    /// parameters; and the score bound `|base_score| + Σ_t |α_t|·max_leaf |h_t| ≤`
    /// [`MAX_SCORE_BOUND`], so that no score can overflow (probabilities and decodings are
    /// computed stably from finite scores).
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, msg: String| Error::InvalidModel(format!("{field}: {msg}"));
        let s = &self.schema;
        let nf = s.names.len();
        if s.kinds.len() != nf || s.levels.len() != nf {
            return Err(bad(
                "schema",
                format!("{nf} names but {} kinds and {} level lists", s.kinds.len(), s.levels.len()),
            ));
        }
        if let Some(dup) = first_duplicate(&s.names) {
            return Err(bad("schema.names", format!("feature name '{}' appears twice", crate::error::shown(dup))));
        }
        for (f, (kind, levels)) in s.kinds.iter().zip(&s.levels).enumerate() {
            match (kind, levels) {
                (FeatureKind::Numeric, None) => {}
                (FeatureKind::Categorical, Some(lv)) => {
                    if let Some(dup) = first_duplicate(lv) {
                        return Err(bad(
                            "schema.levels",
                            format!("feature {f}: category '{}' appears twice", crate::error::shown(dup)),
                        ));
                    }
                    if lv.len() >= MISSING_CODE as usize {
                        return Err(bad("schema.levels", format!("feature {f}: {} categories", lv.len())));
                    }
                }
                (FeatureKind::Numeric, Some(_)) => {
                    return Err(bad("schema.levels", format!("feature {f} is numeric but has category levels")))
                }
                (FeatureKind::Categorical, None) => {
                    return Err(bad("schema.levels", format!("feature {f} is categorical but has no levels")))
                }
            }
        }
        let names = self.task.names();
        if names.is_empty() {
            return Err(bad("task", "no class or label names".into()));
        }
        if let Some(dup) = first_duplicate(names) {
            return Err(bad("task", format!("class or label '{}' appears twice", crate::error::shown(dup))));
        }
        if self.trees.len() != self.alphas.len() {
            return Err(bad("alphas", format!("{} trees but {} weights", self.trees.len(), self.alphas.len())));
        }
        if self.n_outputs == 0 {
            return Err(bad("n_outputs", "0".into()));
        }
        if let Some(a) = self.alphas.iter().find(|a| !a.is_finite()) {
            return Err(bad("alphas", format!("non-finite tree weight {a}")));
        }
        if let Some(d) = self.clip {
            if !(d.is_finite() && d > 0.0) {
                return Err(bad("clip", format!("clipping level {d}")));
            }
        }
        if !self.base_score.is_finite() {
            return Err(bad("base_score", format!("{}", self.base_score)));
        }
        if let Some(t) = self.label_threshold {
            if !t.is_finite() || self.output.is_none() {
                return Err(bad(
                    "label_threshold",
                    format!("{t} (a finite threshold of a multi-class or multi-label model)"),
                ));
            }
        }
        if let Some(c) = &self.calibration {
            if !(c.scale.is_finite() && c.scale >= 0.0) || c.folds < 2 || !matches!(self.task, Task::Binary { .. }) {
                return Err(bad(
                    "calibration",
                    format!(
                        "scale {} over {} folds (a finite scale ≥ 0 over at least 2 folds, of a binary model)",
                        c.scale, c.folds
                    ),
                ));
            }
        }
        let names_len = names.len();
        let (outputs_ok, expected) = match (&self.task, &self.output) {
            (Task::Binary { classes }, None) => (classes.len() == 2 && self.n_outputs == 1, "1 (binary: 2 classes)"),
            (Task::Binary { .. }, Some(_)) => (false, "a binary model without `output`"),
            (_, Some(out)) => {
                out.check()?;
                (
                    out.n_outputs() == self.n_outputs && out.n_classes() == names_len,
                    "output's size (labels, or the code's columns), with one code row per class",
                )
            }
            (Task::Multiclass { .. }, None) => {
                (names_len == self.n_outputs && names_len > 2, "the number of classes (> 2)")
            }
            (Task::Multilabel { .. }, None) => (names_len == self.n_outputs, "the number of labels"),
        };
        if !outputs_ok {
            return Err(bad(
                "n_outputs",
                format!(
                    "{} does not match the task ({} names{}); expected {expected}",
                    self.n_outputs,
                    names_len,
                    match &self.output {
                        Some(o) => format!(", output of {} classes × {} outputs", o.n_classes(), o.n_outputs()),
                        None => String::new(),
                    }
                ),
            ));
        }
        let mut bound = self.base_score.abs();
        for (t, (tree, &a)) in self.trees.iter().zip(&self.alphas).enumerate() {
            if tree.n_outputs != self.n_outputs {
                return Err(bad(
                    "trees",
                    format!("tree {t} has {} outputs, expected {}", tree.n_outputs, self.n_outputs),
                ));
            }
            tree.validate(nf).map_err(|e| bad("trees", format!("tree {t}: {e}")))?;
            for node in &tree.nodes {
                if let crate::tree::Node::Split { feature, rule, .. } = node {
                    let f = *feature as usize;
                    match (rule, s.kinds[f]) {
                        (crate::tree::SplitRule::Numeric { .. }, FeatureKind::Numeric) => {}
                        (crate::tree::SplitRule::Categorical { left, .. }, FeatureKind::Categorical) => {
                            let n_levels = s.levels[f].as_ref().map_or(0, Vec::len);
                            let sorted = left.windows(2).all(|w| w[0] < w[1]);
                            if !sorted || left.last().is_some_and(|&c| c as usize >= n_levels) {
                                return Err(bad(
                                    "trees",
                                    format!(
                                        "tree {t}: the category set of a split on feature {f} is not a sorted set of \
                                         codes below its {n_levels} levels"
                                    ),
                                ));
                            }
                        }
                        _ => {
                            return Err(bad("trees", format!("tree {t}: split kind does not match feature {f}")));
                        }
                    }
                }
            }
            // docs/explanation/adaboost.md#adaboost-notation, H(x) = Σ_t α_t h_t(x): bound every score's magnitude.
            let h_max = tree.leaf_values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            bound += a.abs() * h_max;
        }
        if bound.is_nan() || bound > MAX_SCORE_BOUND {
            return Err(bad(
                "alphas",
                format!(
                    "the scores can reach {bound:e} (|base_score| + Σ |α_t|·max |leaf value|), above the limit of \
                     {MAX_SCORE_BOUND:e}"
                ),
            ));
        }
        for r in &self.history {
            if let Some((k, v)) = r.values.iter().find(|(_, v)| !v.is_finite()) {
                return Err(bad("history", format!("round {}: non-finite {} = {v}", r.round, crate::error::shown(k))));
            }
        }
        self.params.check().map_err(|e| bad("params", e.to_string()))?;
        Ok(())
    }
}
