//! The fitted tree: a flat node array with leaf values, predicting from raw features or bins.

use serde::{Deserialize, Serialize};

use crate::data::{Column, MISSING_CODE};

/// A test at an internal node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum SplitRule {
    /// `x ≤ threshold` goes left; missing values go left iff `missing_left`.
    Numeric {
        /// Raw threshold.
        threshold: f64,
        /// The same test on bins: `bin ≤ bin_threshold` goes left.
        bin_threshold: u32,
        /// Direction of missing values.
        missing_left: bool,
    },
    /// Category codes in `left` go left; missing and unseen categories go left iff `missing_left`.
    Categorical {
        /// Sorted codes that go left.
        left: Vec<u32>,
        /// Direction of missing (and unseen) categories.
        missing_left: bool,
    },
}

/// One node of a [`Tree`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "type")]
pub enum Node {
    /// An internal node.
    Split {
        /// Feature index.
        feature: u32,
        /// The test.
        rule: SplitRule,
        /// Index of the left child in the node array.
        left: u32,
        /// Index of the right child in the node array.
        right: u32,
    },
    /// A leaf.
    Leaf {
        /// Index into the leaf values (`leaf * n_outputs ..`).
        leaf: u32,
    },
}

/// A domain-partitioning tree. Node 0 is the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// The nodes.
    pub nodes: Vec<Node>,
    /// Outputs per leaf.
    pub n_outputs: usize,
    /// Leaf values, `n_leaves × n_outputs`.
    pub leaf_values: Vec<f64>,
}

impl Tree {
    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.leaf_values.len() / self.n_outputs.max(1)
    }

    /// Leaf reached by row `row` of raw feature columns.
    #[inline]
    pub fn leaf_of(&self, columns: &[Column], row: usize) -> usize {
        let mut i = 0usize;
        loop {
            match &self.nodes[i] {
                Node::Leaf { leaf } => return *leaf as usize,
                Node::Split { feature, rule, left, right } => {
                    let go_left = match (rule, &columns[*feature as usize]) {
                        (SplitRule::Numeric { threshold, missing_left, .. }, Column::Numeric(v)) => {
                            let x = v[row];
                            if x.is_nan() {
                                *missing_left
                            } else {
                                x <= *threshold
                            }
                        }
                        (SplitRule::Categorical { left, missing_left }, Column::Categorical { codes, .. }) => {
                            let c = codes[row];
                            if c == MISSING_CODE {
                                *missing_left
                            } else {
                                left.binary_search(&c).is_ok()
                            }
                        }
                        // Kinds are checked against the model's schema before prediction.
                        _ => false,
                    };
                    i = if go_left { *left as usize } else { *right as usize };
                }
            }
        }
    }

    /// Leaf values reached by `row`.
    #[inline]
    pub fn values_of(&self, columns: &[Column], row: usize) -> &[f64] {
        let l = self.leaf_of(columns, row);
        &self.leaf_values[l * self.n_outputs..(l + 1) * self.n_outputs]
    }

    /// Checks structure: children in range and acyclic (each node reached once), leaves indexed
    /// densely, finite values. Used when loading a model.
    pub fn validate(&self, n_features: usize) -> std::result::Result<(), String> {
        if self.nodes.is_empty() {
            return Err("a tree has no nodes".into());
        }
        if self.n_outputs == 0 || self.leaf_values.len() % self.n_outputs != 0 {
            return Err("leaf values do not match n_outputs".into());
        }
        if let Some(v) = self.leaf_values.iter().find(|v| !v.is_finite()) {
            return Err(format!("non-finite leaf value {v}"));
        }
        let n_leaves = self.n_leaves();
        let mut reached = vec![false; self.nodes.len()];
        let mut leaf_seen = vec![false; n_leaves];
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if reached[i] {
                return Err(format!("node {i} is reached twice"));
            }
            reached[i] = true;
            match &self.nodes[i] {
                Node::Leaf { leaf } => {
                    let l = *leaf as usize;
                    if l >= n_leaves || leaf_seen[l] {
                        return Err(format!("bad leaf index {l}"));
                    }
                    leaf_seen[l] = true;
                }
                Node::Split { feature, rule, left, right } => {
                    if *feature as usize >= n_features {
                        return Err(format!("split on feature {feature}, the model has {n_features}"));
                    }
                    if let SplitRule::Numeric { threshold, .. } = rule {
                        if !threshold.is_finite() {
                            return Err("non-finite threshold".into());
                        }
                    }
                    for c in [*left as usize, *right as usize] {
                        if c >= self.nodes.len() {
                            return Err(format!("child {c} out of range"));
                        }
                        stack.push(c);
                    }
                }
            }
        }
        if reached.iter().any(|r| !r) || leaf_seen.iter().any(|s| !s) {
            return Err("unreachable nodes or leaves".into());
        }
        Ok(())
    }
}

/// Sentinel `feature` of a [`FlatNode`] leaf.
const FLAT_LEAF: u32 = u32::MAX;

/// One node of a [`FlatTree`]: 24 bytes, no enum to match per visit.
#[derive(Debug, Clone, Copy)]
struct FlatNode {
    threshold: f64,
    /// Split feature, or [`FLAT_LEAF`].
    feature: u32,
    /// Left child, or the leaf index for a leaf.
    left: u32,
    right: u32,
    missing_left: bool,
}

/// A prediction-only copy of a tree whose splits are all numeric: a compact node array walked
/// without matching on split kinds or column kinds. Same leaves as [`Tree::leaf_of`].
#[derive(Debug, Clone)]
pub(crate) struct FlatTree {
    nodes: Vec<FlatNode>,
}

impl FlatTree {
    /// The flat copy of `tree`, or `None` when it has a categorical split.
    pub(crate) fn new(tree: &Tree) -> Option<FlatTree> {
        let mut nodes = Vec::with_capacity(tree.nodes.len());
        for n in &tree.nodes {
            nodes.push(match n {
                Node::Leaf { leaf } => {
                    FlatNode { threshold: 0.0, feature: FLAT_LEAF, left: *leaf, right: 0, missing_left: false }
                }
                Node::Split { feature, rule: SplitRule::Numeric { threshold, missing_left, .. }, left, right } => {
                    FlatNode {
                        threshold: *threshold,
                        feature: *feature,
                        left: *left,
                        right: *right,
                        missing_left: *missing_left,
                    }
                }
                Node::Split { rule: SplitRule::Categorical { .. }, .. } => return None,
            });
        }
        Some(FlatTree { nodes })
    }

    /// Leaf reached by `row`; `cols[f]` is numeric feature `f` (the tree only splits on numeric
    /// features, which the caller checked against the schema).
    #[inline]
    pub(crate) fn leaf_of(&self, cols: &[&[f64]], row: usize) -> usize {
        let mut i = 0usize;
        loop {
            let nd = &self.nodes[i];
            if nd.feature == FLAT_LEAF {
                return nd.left as usize;
            }
            let x = cols[nd.feature as usize][row];
            let go_left = if x.is_nan() { nd.missing_left } else { x <= nd.threshold };
            i = if go_left { nd.left as usize } else { nd.right as usize };
        }
    }
}
