//! Explaining a trained [`Ensemble`] (issue 15): feature importances, exact TreeSHAP
//! contributions, and the normalised margin distributions of boosting theory.
//!
//! The one design choice: everything is read from what the grower recorded in each tree when it
//! split a node — the criterion decrease (`Tree::gains`) and the training examples that reached
//! the node (`Tree::covers`) — so explaining a model never needs its training data. Models written
//! before issue 15 have neither: their gain importances are 0 and they cannot be explained with
//! TreeSHAP (a clear error says so; retraining records both).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::boost::multiclass::MultiOutput;
use crate::data::{Column, ColumnView, Dataset, Target};
use crate::error::{Error, Result};
use crate::model::{Ensemble, Task};
use crate::tree::{Node, Tree};

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

/// Rows per parallel task of [`Ensemble::contributions_into`].
const SHAP_BLOCK: usize = 256;

/// One element of TreeSHAP's path of unique features: the feature, the fraction of the
/// path-dependent expectation that flows through it when the feature is absent (`zero`: the
/// children's cover ratios) or present (`one`: 1 on the row's branch, 0 on the other), and the
/// permutation weight of subsets of the path of this size.
#[derive(Debug, Clone, Copy, Default)]
struct PathElem {
    feature: usize,
    zero: f64,
    one: f64,
    weight: f64,
}

/// Sentinel feature of the path's root element.
const NO_FEATURE: usize = usize::MAX;

/// Adds a feature to the path of length `d` (now `d + 1`), updating the permutation weights
/// (Lundberg, Erion & Lee 2018, Algorithm 2, EXTEND).
fn extend(path: &mut [PathElem], d: usize, zero: f64, one: f64, feature: usize) {
    path[d] = PathElem { feature, zero, one, weight: if d == 0 { 1.0 } else { 0.0 } };
    let n = (d + 1) as f64;
    for i in (0..d).rev() {
        path[i + 1].weight += one * path[i].weight * (i + 1) as f64 / n;
        path[i].weight = zero * path[i].weight * (d - i) as f64 / n;
    }
}

/// Removes element `at` from the path of length `d + 1` (the inverse of [`extend`]; UNWIND).
fn unwind(path: &mut [PathElem], d: usize, at: usize) {
    let (one, zero) = (path[at].one, path[at].zero);
    let n = (d + 1) as f64;
    let mut next = path[d].weight;
    for i in (0..d).rev() {
        if one != 0.0 {
            let tmp = path[i].weight;
            path[i].weight = next * n / ((i + 1) as f64 * one);
            next = tmp - path[i].weight * zero * (d - i) as f64 / n;
        } else {
            path[i].weight = path[i].weight * n / (zero * (d - i) as f64);
        }
    }
    for i in at..d {
        path[i].feature = path[i + 1].feature;
        path[i].zero = path[i + 1].zero;
        path[i].one = path[i + 1].one;
    }
}

/// The total permutation weight of the path without element `at`, without changing the path
/// (UNWOUND-SUM).
fn unwound_sum(path: &[PathElem], d: usize, at: usize) -> f64 {
    let (one, zero) = (path[at].one, path[at].zero);
    let n = (d + 1) as f64;
    let mut next = path[d].weight;
    let mut total = 0.0;
    for i in (0..d).rev() {
        if one != 0.0 {
            let tmp = next * n / ((i + 1) as f64 * one);
            total += tmp;
            next = path[i].weight - tmp * zero * (d - i) as f64 / n;
        } else {
            total += path[i].weight / zero / ((d - i) as f64 / n);
        }
    }
    total
}

/// TreeSHAP of one tree for one row.
struct TreeShap<'a> {
    tree: &'a Tree,
    columns: &'a [Column],
    row: usize,
    k: usize,
    /// α_t: the tree's weight in the ensemble.
    scale: f64,
}

impl TreeShap<'_> {
    /// Visits node `node` with the parent's path in `buf[parent..parent + d]` (SPEC-free: the
    /// algorithm is Lundberg et al.'s exact path-dependent TreeSHAP). `phi` is `(d_features + 1)
    /// × k` for this row.
    #[allow(clippy::too_many_arguments)]
    fn recurse(
        &self,
        buf: &mut [PathElem],
        parent: usize,
        mut d: usize,
        node: usize,
        zero: f64,
        one: f64,
        feature: usize,
        phi: &mut [f64],
    ) {
        // This node's path lives right after the parent's (which has d elements in use).
        let here = parent + d + 1;
        buf.copy_within(parent..parent + d, here);
        extend(&mut buf[here..], d, zero, one, feature);
        let tree = self.tree;
        let covers = &tree.covers;
        match &tree.nodes[node] {
            Node::Leaf { leaf } => {
                let k = self.k;
                let values = &tree.leaf_values[*leaf as usize * k..(*leaf as usize + 1) * k];
                let path = &buf[here..];
                for i in 1..=d {
                    let w = unwound_sum(path, d, i);
                    let el = path[i];
                    let s = self.scale * w * (el.one - el.zero);
                    for (p, v) in phi[el.feature * k..(el.feature + 1) * k].iter_mut().zip(values) {
                        *p += s * v;
                    }
                }
            }
            Node::Split { feature: f, left, right, .. } => {
                let f = *f as usize;
                let go_left = tree.goes_left(node, self.columns, self.row);
                let (hot, cold) =
                    if go_left { (*left as usize, *right as usize) } else { (*right as usize, *left as usize) };
                let w = covers[node];
                let (hot_zero, cold_zero) = (covers[hot] / w, covers[cold] / w);
                let (mut in_zero, mut in_one) = (1.0, 1.0);
                // A feature already on the path: undo its element and redo it with this split.
                if let Some(at) = (0..=d).find(|&i| buf[here + i].feature == f) {
                    in_zero = buf[here + at].zero;
                    in_one = buf[here + at].one;
                    unwind(&mut buf[here..], d, at);
                    d -= 1;
                }
                self.recurse(buf, here, d + 1, hot, hot_zero * in_zero, in_one, f, phi);
                self.recurse(buf, here, d + 1, cold, cold_zero * in_zero, 0.0, f, phi);
            }
        }
    }
}

/// Depth of `tree` (a single leaf has depth 0).
fn depth(tree: &Tree) -> usize {
    let mut max = 0;
    let mut stack = vec![(0usize, 0usize)];
    while let Some((i, dd)) = stack.pop() {
        max = max.max(dd);
        if let Some(Node::Split { left, right, .. }) = tree.nodes.get(i) {
            stack.push((*left as usize, dd + 1));
            stack.push((*right as usize, dd + 1));
        }
    }
    max
}

/// The expected value of each output of `tree` under its covers: `Σ_leaves cover/cover_root · h`.
fn expected_value(tree: &Tree, k: usize) -> Vec<f64> {
    let mut e = vec![0.0; k];
    let root = tree.covers[0];
    for (i, node) in tree.nodes.iter().enumerate() {
        if let Node::Leaf { leaf } = node {
            let p = tree.covers[i] / root;
            for (e, v) in e.iter_mut().zip(&tree.leaf_values[*leaf as usize * k..(*leaf as usize + 1) * k]) {
                *e += p * v;
            }
        }
    }
    e
}

/// Owned columns of views (the whole matrix, widened to `f64`): TreeSHAP's cost dwarfs the copy.
pub fn columns_of_views(columns: &[ColumnView<'_>]) -> Vec<Column> {
    crate::model::owned_columns(columns)
}

impl Ensemble {
    /// Feature importances (issue 15), one per model feature, normalised to sum 1 (all 0 when the
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

    /// Checks that the model can be explained additively: the linear model only (the clipped
    /// t-AdaBoost model clips after every tree, so it is not a sum of per-tree terms and has no
    /// exact additive explanation), and every tree has its covers.
    fn check_explainable(&self, clipped: bool) -> Result<()> {
        if clipped && self.clip.is_some() {
            return Err(Error::InvalidData(
                "the clipped t-AdaBoost model is not additive (its score is clipped to [−δ, δ] after every tree, so \
                 it is no sum of per-tree terms): contributions explain the linear model only; drop the clipped \
                 option"
                    .into(),
            ));
        }
        for (t, tree) in self.trees.iter().enumerate() {
            if tree.covers.len() != tree.nodes.len() {
                return Err(Error::InvalidModel(format!(
                    "tree {t} has no recorded covers (a model written before issue 15): retrain it to compute \
                     contributions"
                )));
            }
            if tree.covers.iter().any(|c| c.is_nan() || *c <= 0.0) {
                return Err(Error::InvalidModel(format!("tree {t} has a node of cover 0: cannot explain it")));
            }
        }
        Ok(())
    }

    /// The bias term of the contributions, per output: `base_score + Σ_t α_t E[h_t]`, the
    /// expectation under each tree's covers (the model's mean score over its training
    /// distribution, tree by tree).
    pub fn expected_value(&self) -> Result<Vec<f64>> {
        self.check_explainable(false)?;
        let k = self.n_outputs;
        let mut e = vec![self.base_score; k];
        for (tree, &a) in self.trees.iter().zip(&self.alphas) {
            for (e, v) in e.iter_mut().zip(expected_value(tree, k)) {
                *e += a * v;
            }
        }
        Ok(e)
    }

    /// Exact TreeSHAP contributions (Lundberg, Erion & Lee 2018, path-dependent
    /// conditional expectations weighted by the covers) of the linear model into `out`,
    /// `n × (d + 1) × n_outputs` row-major: for each row, feature `j`'s contribution to each
    /// output, then the bias ([`Ensemble::expected_value`]) in position `d`. Each row's
    /// contributions sum to its raw score. `columns` are
    /// the model's features in schema order. With `clipped` on a model that has a clipped form,
    /// an error: that model is not additive. The kernel of [`crate::Output::Contributions`].
    pub(crate) fn contributions_into(&self, columns: &[Column], clipped: bool, out: &mut [f64]) -> Result<()> {
        self.check_explainable(clipped)?;
        let d = self.schema.names.len();
        let k = self.n_outputs;
        if columns.len() != d {
            return Err(Error::InvalidData(format!("the data have {} features, the model expects {d}", columns.len())));
        }
        let n = columns.first().map_or(0, Column::len);
        if columns.iter().any(|c| c.len() != n) {
            return Err(Error::InvalidData("feature columns of different lengths".into()));
        }
        for (f, (c, kind)) in columns.iter().zip(&self.schema.kinds).enumerate() {
            if c.kind() != *kind {
                return Err(Error::InvalidData(format!(
                    "feature '{}' is of the wrong kind for the model",
                    self.schema.names[f]
                )));
            }
        }
        let width = (d + 1) * k;
        if out.len() != n * width {
            return Err(Error::InvalidData(format!("output buffer of {} for {n} × {} × {k}", out.len(), d + 1)));
        }
        let bias = self.expected_value()?;
        let max_depth = self.trees.iter().map(depth).max().unwrap_or(0) + 2;
        let buf_len = max_depth * (max_depth + 1) / 2 + max_depth;
        let block = |(b, o): (usize, &mut [f64])| {
            let mut buf = vec![PathElem::default(); buf_len];
            for (j, phi) in o.chunks_exact_mut(width).enumerate() {
                phi.fill(0.0);
                let row = b * SHAP_BLOCK + j;
                for (tree, &a) in self.trees.iter().zip(&self.alphas) {
                    let ts = TreeShap { tree, columns, row, k, scale: a };
                    // The root's path starts empty at offset 0 (`parent + d + 1` = 0 below).
                    ts.recurse_root(&mut buf, phi);
                }
                phi[d * k..].copy_from_slice(&bias);
            }
        };
        // Rows are independent and each sums its trees in order: the same bits on any thread count.
        out.par_chunks_mut(SHAP_BLOCK * width).enumerate().for_each(block);
        Ok(())
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

impl TreeShap<'_> {
    fn recurse_root(&self, buf: &mut [PathElem], phi: &mut [f64]) {
        // `here = parent + d + 1` must be 0 for the root: parent = 0 and d = 0 would give 1, so
        // the root is laid at offset 1 of a buffer whose slot 0 is unused.
        self.recurse(buf, 0, 0, 0, 1.0, 1.0, NO_FEATURE, phi);
    }
}

#[cfg(test)]
mod tests;
