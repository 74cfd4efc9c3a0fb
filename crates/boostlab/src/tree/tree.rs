//! The fitted tree: a flat node array with leaf values, predicting from raw features or bins.

use serde::{Deserialize, Serialize};

use crate::data::{Column, MISSING_CODE};

/// A test at an internal node.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// The fields of a tagged node or split rule, read in any order (the tag may come last).
/// The derived reader of an internally tagged enum first buffers every object into a generic
/// tree of values, then reads it again: nodes are most of a model file, and reading their fields
/// directly halves the time to load one. Unknown keys are skipped and a missing or repeated
/// field, an unknown tag and a value of the wrong type give the derived reader's messages.
mod tagged {
    use super::{Node, SplitRule};
    use serde::de::{Deserialize, Deserializer, Error, IgnoredAny, MapAccess, Visitor};
    use std::fmt;

    /// Stores `value` into `slot`, refusing a second one (`duplicate field`).
    fn set<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
        map: &mut A,
        slot: &mut Option<T>,
        name: &'static str,
    ) -> Result<(), A::Error> {
        if slot.is_some() {
            return Err(A::Error::duplicate_field(name));
        }
        *slot = Some(map.next_value()?);
        Ok(())
    }

    fn need<T, E: Error>(v: Option<T>, name: &'static str) -> Result<T, E> {
        v.ok_or_else(|| E::missing_field(name))
    }

    /// A key of a node or a split rule (read without allocating; any other key is skipped).
    #[derive(serde::Deserialize)]
    #[serde(field_identifier, rename_all = "snake_case")]
    enum Key {
        Type,
        Feature,
        Rule,
        Left,
        Right,
        Leaf,
        Kind,
        Threshold,
        BinThreshold,
        MissingLeft,
        #[serde(other)]
        Other,
    }

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum NodeType {
        Split,
        Leaf,
    }

    #[derive(serde::Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum RuleKind {
        Numeric,
        Categorical,
    }

    impl<'de> Deserialize<'de> for SplitRule {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = SplitRule;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("internally tagged enum SplitRule")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SplitRule, A::Error> {
                    let (mut kind, mut threshold, mut bin_threshold, mut missing_left, mut left) =
                        (None::<RuleKind>, None, None, None, None::<Vec<u32>>);
                    while let Some(key) = map.next_key::<Key>()? {
                        match key {
                            Key::Kind => set(&mut map, &mut kind, "kind")?,
                            Key::Threshold => set(&mut map, &mut threshold, "threshold")?,
                            Key::BinThreshold => set(&mut map, &mut bin_threshold, "bin_threshold")?,
                            Key::MissingLeft => set(&mut map, &mut missing_left, "missing_left")?,
                            Key::Left => set(&mut map, &mut left, "left")?,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    match need::<_, A::Error>(kind, "kind")? {
                        RuleKind::Numeric => Ok(SplitRule::Numeric {
                            threshold: need(threshold, "threshold")?,
                            bin_threshold: need(bin_threshold, "bin_threshold")?,
                            missing_left: need(missing_left, "missing_left")?,
                        }),
                        RuleKind::Categorical => Ok(SplitRule::Categorical {
                            left: need(left, "left")?,
                            missing_left: need(missing_left, "missing_left")?,
                        }),
                    }
                }
            }
            d.deserialize_map(V)
        }
    }

    impl<'de> Deserialize<'de> for Node {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Node;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("internally tagged enum Node")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                    let (mut ty, mut feature, mut rule, mut left, mut right, mut leaf) =
                        (None::<NodeType>, None, None, None, None, None);
                    while let Some(key) = map.next_key::<Key>()? {
                        match key {
                            Key::Type => set(&mut map, &mut ty, "type")?,
                            Key::Feature => set(&mut map, &mut feature, "feature")?,
                            Key::Rule => set(&mut map, &mut rule, "rule")?,
                            Key::Left => set(&mut map, &mut left, "left")?,
                            Key::Right => set(&mut map, &mut right, "right")?,
                            Key::Leaf => set(&mut map, &mut leaf, "leaf")?,
                            _ => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                    }
                    match need::<_, A::Error>(ty, "type")? {
                        NodeType::Split => Ok(Node::Split {
                            feature: need(feature, "feature")?,
                            rule: need(rule, "rule")?,
                            left: need(left, "left")?,
                            right: need(right, "right")?,
                        }),
                        NodeType::Leaf => Ok(Node::Leaf { leaf: need(leaf, "leaf")? }),
                    }
                }
            }
            d.deserialize_map(V)
        }
    }
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
    /// Criterion decrease of each node's split, recorded when the tree was grown,
    /// indexed like `nodes` (0 at leaves): the parent's cost `Σ W·L(p)` minus the children's,
    /// in that round's weights. Empty in models written by older versions (their gain
    /// importances are 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gains: Vec<f64>,
    /// Cover of each node, indexed like `nodes`: the training examples that reached
    /// it (the sum of their sample weights, i.e. repeated rows). TreeSHAP's conditional
    /// expectations weigh the children by it. Empty in models written by older versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub covers: Vec<f64>,
}

impl Tree {
    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.leaf_values.len() / self.n_outputs.max(1)
    }

    /// A tree of `nodes` and `leaf_values` without recorded gains and covers.
    pub fn new(nodes: Vec<Node>, n_outputs: usize, leaf_values: Vec<f64>) -> Tree {
        Tree { nodes, n_outputs, leaf_values, gains: Vec::new(), covers: Vec::new() }
    }

    /// Records the covers from the leaf of every training row (`row_weight`: their sample
    /// weights, 1 each when `None`): a leaf's cover is its rows' weight, a split's the sum of its
    /// children's.
    pub fn record_covers(&mut self, leaf_of_row: &[u32], row_weight: Option<&[f64]>) {
        let mut per_leaf = vec![0.0; self.n_leaves()];
        crate::util::traffic::add(
            crate::util::traffic::Pass::Covers,
            crate::util::traffic::bytes(leaf_of_row) + row_weight.map_or(0, crate::util::traffic::bytes),
            0,
        );
        match row_weight {
            // Integer counts, exact in f64 in any order, so counted per fixed chunk in
            // parallel into four interleaved counters (no store-to-load chain when consecutive
            // rows share a leaf) and summed: the serial count's values bit for bit.
            None => {
                let nl = per_leaf.len();
                let parts = crate::util::par::map_chunks(leaf_of_row.len(), |r| {
                    let mut c = vec![[0u32; 4]; nl];
                    let rows = &leaf_of_row[r];
                    let mut quads = rows.chunks_exact(4);
                    for q in &mut quads {
                        for (j, &l) in q.iter().enumerate() {
                            c[l as usize][j] += 1;
                        }
                    }
                    for &l in quads.remainder() {
                        c[l as usize][0] += 1;
                    }
                    c
                });
                for part in parts {
                    for (a, c) in per_leaf.iter_mut().zip(part) {
                        *a += f64::from(c.iter().sum::<u32>());
                    }
                }
            }
            Some(w) => leaf_of_row.iter().zip(w).for_each(|(&l, &w)| per_leaf[l as usize] += w),
        }
        self.covers = vec![0.0; self.nodes.len()];
        // Children come after their parent in the node array (both growers append them).
        for i in (0..self.nodes.len()).rev() {
            self.covers[i] = match &self.nodes[i] {
                Node::Leaf { leaf } => per_leaf[*leaf as usize],
                Node::Split { left, right, .. } => self.covers[*left as usize] + self.covers[*right as usize],
            };
        }
    }

    /// Whether `row` of the model's columns goes left at split node `i` (false for a leaf).
    #[inline]
    pub fn goes_left(&self, i: usize, columns: &[Column], row: usize) -> bool {
        match &self.nodes[i] {
            Node::Leaf { .. } => false,
            Node::Split { feature, rule, .. } => match (rule, &columns[*feature as usize]) {
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
                _ => false,
            },
        }
    }

    /// Leaf reached by row `row` of raw feature columns.
    #[inline]
    pub fn leaf_of(&self, columns: &[Column], row: usize) -> usize {
        let mut i = 0usize;
        loop {
            match &self.nodes[i] {
                Node::Leaf { leaf } => return *leaf as usize,
                Node::Split { left, right, .. } => {
                    // Kinds are checked against the model's schema before prediction.
                    i = if self.goes_left(i, columns, row) { *left as usize } else { *right as usize };
                }
            }
        }
    }

    /// Leaf reached by row `row` of binned data, with the learner's own test (`bin ≤
    /// bin_threshold`; the missing bin, the last of a feature, goes where `missing_left` says):
    /// the walk of the grower's `leaf_of_row`, for warm start's replay and auto-t's inner scores.
    pub fn leaf_of_bins(&self, bm: &crate::data::BinnedMatrix, row: usize) -> usize {
        let mut i = 0usize;
        loop {
            match &self.nodes[i] {
                Node::Leaf { leaf } => return *leaf as usize,
                Node::Split { feature, rule, left, right } => {
                    let f = *feature as usize;
                    let (b, miss) = (bm.bin(row, f), bm.n_bins(f) - 1);
                    let go_left = match rule {
                        SplitRule::Numeric { missing_left, .. } | SplitRule::Categorical { missing_left, .. }
                            if b == miss =>
                        {
                            *missing_left
                        }
                        SplitRule::Numeric { bin_threshold, .. } => b <= *bin_threshold as usize,
                        SplitRule::Categorical { left, .. } => left.binary_search(&(b as u32)).is_ok(),
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
        if self.n_outputs == 0 || !self.leaf_values.len().is_multiple_of(self.n_outputs) {
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
        for (what, v) in [("gains", &self.gains), ("covers", &self.covers)] {
            if !v.is_empty() && v.len() != self.nodes.len() {
                return Err(format!("{} {what} for {} nodes", v.len(), self.nodes.len()));
            }
            if let Some(x) = v.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
                return Err(format!("{what}: {x} is not a finite number ≥ 0"));
            }
        }
        Ok(())
    }
}

/// Most leaves a [`MaskTree`] holds: one bit per leaf in a `u64`.
pub(crate) const MASK_TREE_MAX_LEAVES: usize = 64;

/// Largest category code a [`MaskTree`]'s categorical test keeps in its bit set (larger codes in a
/// split's left set send the tree to the plain walk, so a hostile model cannot make us allocate).
const MASK_TREE_MAX_CODE: u32 = 1 << 16;

/// A numeric test of a [`MaskTree`].
#[derive(Debug, Clone, Copy)]
struct NumericTest {
    threshold: f64,
    /// Leaves that stay possible when the row goes right: all but the left subtree's.
    keep: u64,
    feature: u32,
    missing_left: bool,
}

/// The mask a numeric test leaves to a row with value `x`: `keep` when the row goes right, all
/// ones when it goes left. It goes right iff `!(x ≤ thr)` for a value, `!missing_left` for NaN:
/// with missing values going left (`ML`) that is `x > thr` (false for NaN), else `!(x ≤ thr)`
/// (true for NaN) — one comparison either way, no branch.
#[inline(always)]
fn right_mask<const ML: bool>(x: f64, t: &NumericTest) -> u64 {
    if ML {
        if x > t.threshold {
            t.keep
        } else {
            u64::MAX
        }
    } else if x <= t.threshold {
        u64::MAX
    } else {
        t.keep
    }
}

/// Applies one numeric test to the masks of a block of rows (`x`: the tested feature's values).
#[inline(always)]
fn apply_one<const ML: bool>(masks: &mut [u64], x: &[f64], t: &NumericTest) {
    for (m, &x) in masks.iter_mut().zip(x) {
        *m &= right_mask::<ML>(x, t);
    }
}

/// Applies two numeric tests to the masks of a block of rows.
#[inline(always)]
fn apply_pair<const MLA: bool, const MLB: bool>(
    masks: &mut [u64],
    xa: &[f64],
    ta: &NumericTest,
    xb: &[f64],
    tb: &NumericTest,
) {
    for ((m, &a), &b) in masks.iter_mut().zip(xa).zip(xb) {
        *m &= right_mask::<MLA>(a, ta) & right_mask::<MLB>(b, tb);
    }
}

/// A categorical test of a [`MaskTree`].
#[derive(Debug, Clone)]
struct CategoricalTest {
    /// Bit set of the codes that go left.
    left: Vec<u64>,
    keep: u64,
    feature: u32,
    missing_left: bool,
}

/// A prediction-only form of a tree of at most [`MASK_TREE_MAX_LEAVES`] leaves that evaluates
/// every test without branching (the bit-vector idea of QuickScorer, Lucchese et al. 2015).
///
/// Leaves are numbered left to right (in-order); a row starts with every leaf possible (all bits
/// set) and each internal node where the row goes right clears the leaves of its left subtree.
/// The exit leaf is then the lowest set bit: its bit is never cleared (a node that clears it is
/// an ancestor where the row went left, which does not clear), and every leaf left of it lies in
/// the left subtree of an ancestor where the row went right. The tests are independent of each
/// other, so one test runs over a whole block of rows at a time, reading one feature column
/// sequentially (a loop the compiler vectorises). Same leaf as [`Tree::leaf_of`] for every row.
#[derive(Debug, Clone)]
pub(crate) struct MaskTree {
    numeric: Vec<NumericTest>,
    categorical: Vec<CategoricalTest>,
    /// `leaf_at[p]`: the leaf index (into the tree's leaf values) of the `p`-th leaf from the left.
    leaf_at: Vec<u32>,
}

impl MaskTree {
    /// The mask form of `tree`, or `None` when it has more than [`MASK_TREE_MAX_LEAVES`] leaves,
    /// a categorical split with a code of [`MASK_TREE_MAX_CODE`] or more, or is not a tree (a
    /// child out of range or reached twice; [`Tree::validate`] rejects those when loading).
    pub(crate) fn new(tree: &Tree) -> Option<MaskTree> {
        let mut m = MaskTree { numeric: Vec::new(), categorical: Vec::new(), leaf_at: Vec::new() };
        let mut visited = vec![false; tree.nodes.len()];
        // Depth-first, left child first. `Enter(i)` visits node i; `Close(test, kind, lo)` runs
        // after the left subtree of a split, whose leaves are then positions `lo..leaf_at.len()`.
        enum Step {
            Enter(usize),
            Close(usize, bool, usize),
        }
        let mut stack = vec![Step::Enter(0)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Enter(i) => {
                    if std::mem::replace(visited.get_mut(i)?, true) {
                        return None;
                    }
                    match &tree.nodes[i] {
                        Node::Leaf { leaf } => {
                            if m.leaf_at.len() == MASK_TREE_MAX_LEAVES {
                                return None;
                            }
                            m.leaf_at.push(*leaf);
                        }
                        Node::Split { feature, rule, left, right } => {
                            let (test, numeric) = match rule {
                                SplitRule::Numeric { threshold, missing_left, .. } => {
                                    m.numeric.push(NumericTest {
                                        threshold: *threshold,
                                        keep: 0,
                                        feature: *feature,
                                        missing_left: *missing_left,
                                    });
                                    (m.numeric.len() - 1, true)
                                }
                                SplitRule::Categorical { left, missing_left } => {
                                    let max = left.iter().copied().max();
                                    if max.is_some_and(|c| c >= MASK_TREE_MAX_CODE) {
                                        return None;
                                    }
                                    let mut set = vec![0u64; max.map_or(0, |c| c as usize / 64 + 1)];
                                    for &c in left {
                                        set[c as usize / 64] |= 1 << (c % 64);
                                    }
                                    m.categorical.push(CategoricalTest {
                                        left: set,
                                        keep: 0,
                                        feature: *feature,
                                        missing_left: *missing_left,
                                    });
                                    (m.categorical.len() - 1, false)
                                }
                            };
                            stack.push(Step::Enter(*right as usize));
                            stack.push(Step::Close(test, numeric, m.leaf_at.len()));
                            stack.push(Step::Enter(*left as usize));
                        }
                    }
                }
                Step::Close(test, numeric, lo) => {
                    let hi = m.leaf_at.len();
                    // Bits lo..hi: the left subtree's leaves (hi ≤ 64, hi > lo).
                    let left_leaves = (u64::MAX >> (64 - (hi - lo))) << lo;
                    if numeric {
                        m.numeric[test].keep = !left_leaves;
                    } else {
                        m.categorical[test].keep = !left_leaves;
                    }
                }
            }
        }
        Some(m)
    }

    /// The leaf index of each left-to-right position.
    pub(crate) fn leaf_at(&self) -> &[u32] {
        &self.leaf_at
    }

    /// Leaf masks of rows `r0 .. r0 + masks.len()` of `columns` (the model's columns): the
    /// position of row `r0 + j`'s leaf is `masks[j].trailing_zeros()`.
    pub(crate) fn masks_into(&self, columns: &[Column], r0: usize, masks: &mut [u64]) {
        masks.fill(u64::MAX);
        let r1 = r0 + masks.len();
        // Tests two at a time: one load and store of the masks per pair.
        let mut pending: Option<(&[f64], &NumericTest)> = None;
        for t in &self.numeric {
            match &columns[t.feature as usize] {
                Column::Numeric(v) => {
                    let x = &v[r0..r1];
                    match pending.take() {
                        None => pending = Some((x, t)),
                        Some((xa, ta)) => match (ta.missing_left, t.missing_left) {
                            (false, false) => apply_pair::<false, false>(masks, xa, ta, x, t),
                            (false, true) => apply_pair::<false, true>(masks, xa, ta, x, t),
                            (true, false) => apply_pair::<true, false>(masks, xa, ta, x, t),
                            (true, true) => apply_pair::<true, true>(masks, xa, ta, x, t),
                        },
                    }
                }
                // A column of the wrong kind goes right, as in `Tree::leaf_of`.
                Column::Categorical { .. } => masks.iter_mut().for_each(|m| *m &= t.keep),
            }
        }
        if let Some((x, t)) = pending {
            if t.missing_left {
                apply_one::<true>(masks, x, t);
            } else {
                apply_one::<false>(masks, x, t);
            }
        }
        for t in &self.categorical {
            let keep = t.keep;
            match &columns[t.feature as usize] {
                Column::Categorical { codes, .. } => {
                    let missing_right = if t.missing_left { u64::MAX } else { keep };
                    for (m, &c) in masks.iter_mut().zip(&codes[r0..r1]) {
                        *m &= if c == MISSING_CODE {
                            missing_right
                        } else {
                            let in_left = t.left.get(c as usize / 64).is_some_and(|w| w >> (c % 64) & 1 == 1);
                            if in_left {
                                u64::MAX
                            } else {
                                keep
                            }
                        };
                    }
                }
                Column::Numeric(_) => masks.iter_mut().for_each(|m| *m &= keep),
            }
        }
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

/// Random trees and columns for the prediction tests (here and in `model.rs`).
#[cfg(test)]
pub(crate) mod test_support {
    use rand::seq::SliceRandom;
    use rand::Rng;
    use rand_chacha::ChaCha8Rng;

    use super::{Node, SplitRule, Tree};
    use crate::data::{Column, FeatureKind, MISSING_CODE};

    /// Thresholds and values share a grid, so that ties `x = threshold` occur.
    const GRID: [f64; 7] = [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5];

    /// A random tree of `n_leaves` leaves (each split picks a random leaf, so shapes range from
    /// chains to balanced) over features of `kinds`, with leaf indices in random order and
    /// `k` values per leaf.
    pub(crate) fn random_tree(rng: &mut ChaCha8Rng, kinds: &[FeatureKind], n_leaves: usize, k: usize) -> Tree {
        let mut nodes = vec![Node::Leaf { leaf: 0 }];
        let mut leaves = vec![0usize];
        while leaves.len() < n_leaves {
            let i = leaves.swap_remove(rng.gen_range(0..leaves.len()));
            let feature = rng.gen_range(0..kinds.len());
            let missing_left = rng.gen_bool(0.5);
            let rule = match kinds[feature] {
                FeatureKind::Numeric => SplitRule::Numeric {
                    threshold: GRID[rng.gen_range(1..GRID.len() - 1)],
                    bin_threshold: 0,
                    missing_left,
                },
                FeatureKind::Categorical => {
                    let mut left: Vec<u32> = (0..10).filter(|_| rng.gen_bool(0.4)).collect();
                    if rng.gen_bool(0.2) {
                        left.push(130); // a code in the third word of the bit set
                    }
                    SplitRule::Categorical { left, missing_left }
                }
            };
            let left = nodes.len();
            nodes.push(Node::Leaf { leaf: 0 });
            nodes.push(Node::Leaf { leaf: 0 });
            nodes[i] = Node::Split { feature: feature as u32, rule, left: left as u32, right: left as u32 + 1 };
            leaves.extend([left, left + 1]);
        }
        let mut ids: Vec<u32> = (0..n_leaves as u32).collect();
        ids.shuffle(rng);
        for (&i, id) in leaves.iter().zip(ids) {
            nodes[i] = Node::Leaf { leaf: id };
        }
        let leaf_values = (0..n_leaves * k).map(|_| rng.gen_range(-2.0..2.0)).collect();
        Tree::new(nodes, k, leaf_values)
    }

    /// Random columns of `kinds` with `n` rows: grid values, other reals and NaN; category codes
    /// in and beyond the split sets, missing, and huge.
    pub(crate) fn random_columns(rng: &mut ChaCha8Rng, kinds: &[FeatureKind], n: usize) -> Vec<Column> {
        kinds
            .iter()
            .map(|kind| match kind {
                FeatureKind::Numeric => Column::Numeric(
                    (0..n)
                        .map(|_| match rng.gen_range(0..10) {
                            0..=1 => f64::NAN,
                            2..=6 => GRID[rng.gen_range(0..GRID.len())],
                            _ => rng.gen_range(-2.0..2.0),
                        })
                        .collect(),
                ),
                FeatureKind::Categorical => Column::Categorical {
                    codes: (0..n)
                        .map(|_| match rng.gen_range(0..20) {
                            0..=2 => MISSING_CODE,
                            3 => 130,
                            4 => 70_000,
                            _ => rng.gen_range(0..12),
                        })
                        .collect(),
                    levels: (0..12).map(|l| format!("l{l}")).collect(),
                },
            })
            .collect()
    }

    /// Random feature kinds, each categorical with probability `p_cat`.
    pub(crate) fn random_kinds(rng: &mut ChaCha8Rng, d: usize, p_cat: f64) -> Vec<FeatureKind> {
        (0..d).map(|_| if rng.gen_bool(p_cat) { FeatureKind::Categorical } else { FeatureKind::Numeric }).collect()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

    /// The derived readers that the hand-written ones replace (internally tagged enums).
    mod derived {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(rename_all = "kebab-case", tag = "kind")]
        pub enum SplitRule {
            Numeric { threshold: f64, bin_threshold: u32, missing_left: bool },
            Categorical { left: Vec<u32>, missing_left: bool },
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(rename_all = "kebab-case", tag = "type")]
        pub enum Node {
            Split { feature: u32, rule: SplitRule, left: u32, right: u32 },
            Leaf { leaf: u32 },
        }
    }

    /// The hand-written node reader reads what the derived one reads — keys in any order, the
    /// tag last, unknown keys skipped — and refuses what it refuses with the same message
    /// (missing fields, an unknown tag, a repeated field, a value of the wrong type).
    #[test]
    fn node_reader_equals_the_derived_reader() {
        let ok = [
            r#"{"type":"leaf","leaf":3}"#,
            r#"{"leaf":3,"type":"leaf","extra":[1,{"a":2}]}"#,
            r#"{"type":"split","feature":1,"rule":{"kind":"numeric","threshold":0.5,"bin_threshold":4,"missing_left":true},"left":1,"right":2}"#,
            r#"{"left":1,"right":2,"rule":{"missing_left":false,"left":[0,3],"kind":"categorical"},"feature":0,"type":"split"}"#,
        ];
        for text in ok {
            let a: Node = serde_json::from_str(text).expect(text);
            let b: derived::Node = serde_json::from_str(text).expect(text);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{text}");
            assert_eq!(serde_json::from_str::<Node>(&serde_json::to_string(&a).unwrap()).unwrap(), a);
        }
        let bad = [
            r#"{"leaf":3}"#,
            r#"{"type":"leaf"}"#,
            r#"{"type":"twig","leaf":3}"#,
            r#"{"type":"leaf","leaf":"3"}"#,
            r#"{"type":"leaf","leaf":-1}"#,
            r#"{"type":"leaf","leaf":1.5}"#,
            r#"{"type":"split","feature":1,"left":1,"right":2}"#,
            r#"{"type":"split","feature":1,"rule":{"kind":"numeric","threshold":0.5,"missing_left":true},"left":1,"right":2}"#,
            r#"{"type":"split","feature":1,"rule":{"kind":"oblique"},"left":1,"right":2}"#,
            r#"{"type":"split","feature":1,"rule":{"kind":"categorical","left":[1,"x"],"missing_left":true},"left":1,"right":2}"#,
        ];
        for text in bad {
            let a = serde_json::from_str::<Node>(text).expect_err(text).to_string();
            let b = serde_json::from_str::<derived::Node>(text).expect_err(text).to_string();
            let strip = |m: &str| m.split(" at line ").next().unwrap_or_default().to_string();
            assert_eq!(strip(&a), strip(&b), "{text}");
        }
        let dup = r#"{"type":"leaf","leaf":3,"leaf":4}"#;
        assert!(serde_json::from_str::<Node>(dup).unwrap_err().to_string().starts_with("duplicate field `leaf`"));
    }
    use rand_chacha::ChaCha8Rng;

    use super::test_support::{random_columns, random_kinds, random_tree};
    use super::*;
    use crate::data::FeatureKind;

    /// Leaves of rows `r0..` through the mask form.
    fn mask_leaves(mt: &MaskTree, columns: &[Column], r0: usize, n: usize) -> Vec<usize> {
        let mut masks = vec![0u64; n - r0];
        mt.masks_into(columns, r0, &mut masks);
        masks.iter().map(|m| mt.leaf_at()[m.trailing_zeros() as usize] as usize).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The mask form finds the same leaf as the reference walk, with NaN, missing and unseen
        /// categories, ties at thresholds, and columns of the wrong kind (which go right).
        #[test]
        fn mask_tree_agrees_with_leaf_of(seed in any::<u64>(), n_leaves in 1usize..=70, n in 1usize..200) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let d = rng.gen_range(1..6);
            let kinds = random_kinds(&mut rng, d, 0.3);
            let tree = random_tree(&mut rng, &kinds, n_leaves, 1);
            prop_assert!(tree.validate(kinds.len()).is_ok());
            let Some(mt) = MaskTree::new(&tree) else {
                prop_assert!(n_leaves > MASK_TREE_MAX_LEAVES);
                return Ok(());
            };
            prop_assert!(n_leaves <= MASK_TREE_MAX_LEAVES);
            let mut data_kinds = kinds.clone();
            if rng.gen_bool(0.2) {
                let f = rng.gen_range(0..kinds.len());
                data_kinds[f] = match kinds[f] {
                    FeatureKind::Numeric => FeatureKind::Categorical,
                    FeatureKind::Categorical => FeatureKind::Numeric,
                };
            }
            let columns = random_columns(&mut rng, &data_kinds, n);
            let r0 = rng.gen_range(0..n);
            let want: Vec<usize> = (r0..n).map(|r| tree.leaf_of(&columns, r)).collect();
            prop_assert_eq!(mask_leaves(&mt, &columns, r0, n), want);
        }
    }

    #[test]
    fn mask_tree_positions_and_masks_of_a_small_tree() {
        // x0 ≤ 0 ? leaf 2 : (x0 ≤ 1 (NaN left) ? leaf 0 : leaf 1): positions left to right.
        let num = |threshold, missing_left| SplitRule::Numeric { threshold, bin_threshold: 0, missing_left };
        let tree = Tree {
            gains: Vec::new(),
            covers: Vec::new(),
            nodes: vec![
                Node::Split { feature: 0, rule: num(0.0, false), left: 1, right: 2 },
                Node::Leaf { leaf: 2 },
                Node::Split { feature: 0, rule: num(1.0, true), left: 3, right: 4 },
                Node::Leaf { leaf: 0 },
                Node::Leaf { leaf: 1 },
            ],
            n_outputs: 1,
            leaf_values: vec![0.0, 1.0, 2.0],
        };
        let mt = MaskTree::new(&tree).unwrap();
        assert_eq!(mt.leaf_at(), &[2, 0, 1]);
        let cols = vec![Column::Numeric(vec![-1.0, 0.0, 0.5, 1.0, 2.0, f64::NAN])];
        let mut masks = vec![0u64; 6];
        mt.masks_into(&cols, 0, &mut masks);
        // Root right clears bit 0; the second test's right clears bit 1.
        assert_eq!(masks, vec![!0, !0, !1, !1, !3, !1]);
        assert_eq!(mask_leaves(&mt, &cols, 0, 6), vec![2, 2, 0, 0, 1, 0]);
    }

    #[test]
    fn mask_tree_declines_what_it_cannot_hold() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let kinds = [FeatureKind::Numeric];
        assert!(MaskTree::new(&random_tree(&mut rng, &kinds, 64, 1)).is_some());
        assert!(MaskTree::new(&random_tree(&mut rng, &kinds, 65, 1)).is_none());
        let split = |rule, left, right| Node::Split { feature: 0, rule, left, right };
        let cat = |left: Vec<u32>| SplitRule::Categorical { left, missing_left: false };
        let leaves = vec![Node::Leaf { leaf: 0 }, Node::Leaf { leaf: 1 }];
        let tree = |root| Tree {
            gains: Vec::new(),
            covers: Vec::new(),
            nodes: std::iter::once(root).chain(leaves.clone()).collect(),
            n_outputs: 1,
            leaf_values: vec![0.0, 1.0],
        };
        assert!(MaskTree::new(&tree(split(cat(vec![3, MASK_TREE_MAX_CODE - 1]), 1, 2))).is_some());
        // A hostile code would need a huge bit set.
        assert!(MaskTree::new(&tree(split(cat(vec![3, u32::MAX - 1]), 1, 2))).is_none());
        // Not a tree: a cycle, a child out of range.
        assert!(MaskTree::new(&tree(split(cat(vec![1]), 0, 2))).is_none());
        assert!(MaskTree::new(&tree(split(cat(vec![1]), 1, 9))).is_none());
    }
}
