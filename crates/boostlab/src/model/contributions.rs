//! Exact TreeSHAP contributions of the linear model (Lundberg, Erion & Lee 2018), the kernel of
//! [`Output::Contributions`](super::Output::Contributions): read from the covers the grower
//! recorded in each tree, so explaining a model never needs its training data.

use rayon::prelude::*;

use super::Ensemble;
use crate::data::Column;
use crate::error::{Error, Result};
use crate::tree::{Node, Tree};
use crate::util::cancel::Cancel;

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

impl TreeShap<'_> {
    fn recurse_root(&self, buf: &mut [PathElem], phi: &mut [f64]) {
        // `here = parent + d + 1` must be 0 for the root: parent = 0 and d = 0 would give 1, so
        // the root is laid at offset 1 of a buffer whose slot 0 is unused.
        self.recurse(buf, 0, 0, 0, 1.0, 1.0, NO_FEATURE, phi);
    }
}

impl Ensemble {
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
                    "tree {t} has no recorded covers (a model written by an older version): retrain it to compute \
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
    /// With `cancel`, rows not yet started are skipped once it is set, and the call
    /// returns [`Error::Cancelled`].
    pub(crate) fn contributions_into(
        &self,
        columns: &[Column],
        clipped: bool,
        out: &mut [f64],
        cancel: Option<&Cancel>,
    ) -> Result<()> {
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
                // A row of a large model takes milliseconds: the flag is read before each.
                if cancel.is_some_and(Cancel::is_cancelled) {
                    return;
                }
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
        crate::util::cancel::check(cancel)
    }
}
