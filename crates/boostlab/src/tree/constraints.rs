//! Monotone and interaction constraints, resolved against the training data's features
//! (docs/how-to/constraints.md).
//!
//! The learner reads them per node and per candidate split, never per row: a node keeps the
//! bounds of its leaf values (LightGBM's "basic" method) and the features its path used.

use super::tree::{Node, SplitRule, Tree};
use crate::data::{BinMapper, FeatureBins};
use crate::error::{Error, Result};
use crate::params::{FeatureKey, MonotoneConstraints, TreeParams};

/// The constraints of one fit, by feature index.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Constraints {
    /// The direction −1, 0 or +1 of every feature; empty without monotone constraints.
    pub monotone: Vec<i8>,
    /// The interaction groups as feature masks, a singleton for each feature in no group
    /// (XGBoost's semantics: such a feature is used only alone); empty without interaction
    /// constraints.
    pub groups: Vec<Vec<bool>>,
}

/// The column index of a named feature, or the parameter error naming it.
fn index_of(param: &'static str, key: &FeatureKey, names: &[String]) -> Result<usize> {
    let n = names.len();
    match key {
        FeatureKey::Index(i) if *i < n => Ok(*i),
        FeatureKey::Index(i) => {
            Err(Error::param(param, format!("feature indices below {n} (the number of features)"), i))
        }
        FeatureKey::Name(s) => names.iter().position(|x| x == s).ok_or_else(|| {
            Error::param(
                param,
                format!("names of feature columns ({})", names.join(", ")),
                format!("unknown feature '{s}'"),
            )
        }),
    }
}

impl Constraints {
    /// The constraints of `params` against the features `names` binned by `mapper`, or `None`
    /// when it has none. Errors (`InvalidParam`): a direction list whose length is not the number
    /// of features, an unknown feature name or index, a constraint on a categorical feature.
    pub fn resolve(params: &TreeParams, names: &[String], mapper: &BinMapper) -> Result<Option<Constraints>> {
        let n = mapper.features.len();
        let mut c = Constraints::default();
        if let Some(m) = &params.monotone_constraints {
            m.check()?;
            let mut dirs = vec![0i8; n];
            match m {
                MonotoneConstraints::Dense(v) => {
                    if v.len() != n {
                        return Err(Error::param(
                            "monotone_constraints",
                            format!("one direction per feature ({n} features)"),
                            format!("{} directions", v.len()),
                        ));
                    }
                    for (d, &x) in dirs.iter_mut().zip(v) {
                        *d = x as i8;
                    }
                }
                MonotoneConstraints::ByName(map) => {
                    for (name, &x) in map {
                        dirs[index_of("monotone_constraints", &FeatureKey::Name(name.clone()), names)?] = x as i8;
                    }
                }
            }
            if let Some(f) =
                (0..n).find(|&f| dirs[f] != 0 && matches!(mapper.features[f], FeatureBins::Categorical { .. }))
            {
                return Err(Error::param(
                    "monotone_constraints",
                    "constraints on numeric features only (a categorical feature has no order)",
                    format!("a constraint on the categorical feature '{}'", names.get(f).map_or("?", String::as_str)),
                ));
            }
            if dirs.iter().any(|&d| d != 0) {
                c.monotone = dirs;
            }
        }
        if let Some(groups) = &params.interaction_constraints {
            let mut grouped = vec![false; n];
            for g in groups {
                let mut mask = vec![false; n];
                for key in g {
                    let f = index_of("interaction_constraints", key, names)?;
                    mask[f] = true;
                    grouped[f] = true;
                }
                c.groups.push(mask);
            }
            for f in (0..n).filter(|&f| !grouped[f]) {
                let mut mask = vec![false; n];
                mask[f] = true;
                c.groups.push(mask);
            }
        }
        Ok((c != Constraints::default()).then_some(c))
    }

    /// The features a node whose path split on `used` may split on: the union of the groups
    /// that contain every feature of `used` (`None` without interaction constraints).
    pub(crate) fn allowed(&self, used: &[usize]) -> Option<Vec<bool>> {
        if self.groups.is_empty() {
            return None;
        }
        let mut mask = vec![false; self.groups[0].len()];
        for g in self.groups.iter().filter(|g| used.iter().all(|&f| g[f])) {
            for (m, &x) in mask.iter_mut().zip(g) {
                *m |= x;
            }
        }
        Some(mask)
    }

    /// Whether `alpha · tree` is monotone in every constrained feature: a sufficient condition,
    /// checked on the tree's structure — for every numeric split on a constrained feature that
    /// values can take both ways, each leaf value (per output) below the lower side is not above
    /// (+1; not below for −1) each leaf value below the upper side, the directions flipped by a
    /// negative α. The learner's bounds make every tree it grows pass; the driver checks each
    /// round's term after the booster's α and leaf adjustments.
    pub fn monotone_term(&self, tree: &Tree, alpha: f64) -> bool {
        if self.monotone.is_empty() || alpha == 0.0 {
            return true;
        }
        let k = tree.n_outputs.max(1);
        // (min, max) of each output's leaf values under each node, bottom-up.
        let mut range: Vec<Vec<(f64, f64)>> = vec![Vec::new(); tree.nodes.len()];
        fn walk(t: &Tree, k: usize, i: usize, range: &mut Vec<Vec<(f64, f64)>>) {
            range[i] = match &t.nodes[i] {
                Node::Leaf { leaf } => {
                    let l = *leaf as usize;
                    t.leaf_values[l * k..(l + 1) * k].iter().map(|&v| (v, v)).collect()
                }
                Node::Split { left, right, .. } => {
                    walk(t, k, *left as usize, range);
                    walk(t, k, *right as usize, range);
                    let (a, b) = (&range[*left as usize], &range[*right as usize]);
                    a.iter().zip(b).map(|(a, b)| (a.0.min(b.0), a.1.max(b.1))).collect()
                }
            };
        }
        walk(tree, k, 0, &mut range);
        let sign = if alpha > 0.0 { 1i8 } else { -1 };
        tree.nodes.iter().all(|node| match node {
            Node::Split { feature, rule: SplitRule::Numeric { threshold, .. }, left, right } => {
                let d = self.monotone.get(*feature as usize).copied().unwrap_or(0) * sign;
                // A threshold of f64::MAX sends every value left (the abstaining stump's
                // "missing or not" test): no order between its sides.
                if d == 0 || *threshold == f64::MAX {
                    return true;
                }
                let (lo, hi) = (&range[*left as usize], &range[*right as usize]);
                lo.iter().zip(hi).all(|(l, r)| if d > 0 { l.1 <= r.0 } else { l.0 >= r.1 })
            }
            _ => true,
        })
    }
}

/// The bounds of the children's leaf values after a split on a feature of direction `d` whose
/// children's values are `vl` and `vr` (per output), from the parent's `bounds` (LightGBM's
/// "basic" method; docs/how-to/constraints.md#how-the-learner-enforces-them): for `d ≠ 0` the
/// midpoint `m = (vl + vr)/2` (kept inside the parent's bounds) caps the lower side's values
/// and floors the upper side's, so every later leaf of the left subtree stays below every leaf
/// of the right subtree (+1); other splits pass the parent's bounds down.
pub(crate) fn child_bounds(bounds: &[(f64, f64)], d: i8, vl: &[f64], vr: &[f64]) -> [Vec<(f64, f64)>; 2] {
    if d == 0 {
        return [bounds.to_vec(), bounds.to_vec()];
    }
    let mut out = [Vec::with_capacity(bounds.len()), Vec::with_capacity(bounds.len())];
    for ((&(lo, hi), &a), &b) in bounds.iter().zip(vl).zip(vr) {
        let m = (0.5 * (a + b)).max(lo).min(hi);
        let (below, above) = ((lo, m), (m, hi));
        let (l, r) = if d > 0 { (below, above) } else { (above, below) };
        out[0].push(l);
        out[1].push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stump(threshold: f64, left: f64, right: f64) -> Tree {
        let rule = SplitRule::Numeric { threshold, bin_threshold: 0, missing_left: false };
        let nodes =
            vec![Node::Split { feature: 0, rule, left: 1, right: 2 }, Node::Leaf { leaf: 0 }, Node::Leaf { leaf: 1 }];
        Tree::new(nodes, 1, vec![left, right])
    }

    #[test]
    fn a_term_is_monotone_only_with_its_direction_and_alpha_sign() {
        let up = Constraints { monotone: vec![1, 0], groups: Vec::new() };
        let down = Constraints { monotone: vec![-1, 0], groups: Vec::new() };
        let rising = stump(0.5, -1.0, 1.0);
        assert!(up.monotone_term(&rising, 0.7));
        assert!(!up.monotone_term(&rising, -0.7), "a negative α turns the term around");
        assert!(down.monotone_term(&rising, -0.7));
        assert!(!down.monotone_term(&rising, 0.7));
        assert!(up.monotone_term(&stump(0.5, 1.0, 1.0), 1.0), "a flat tree is monotone");
        // The abstaining stump's "missing or not" test orders nothing.
        assert!(up.monotone_term(&stump(f64::MAX, 1.0, -1.0), 1.0));
        assert!(Constraints::default().monotone_term(&stump(0.5, 1.0, -1.0), 1.0));
    }

    #[test]
    fn interaction_groups_follow_xgboost_rule() {
        // Groups {0, 1} and {1, 2}; feature 3 is in no group: alone only.
        let mask = |fs: &[usize]| (0..4).map(|f| fs.contains(&f)).collect::<Vec<bool>>();
        let c = Constraints { monotone: Vec::new(), groups: vec![mask(&[0, 1]), mask(&[1, 2]), mask(&[3])] };
        assert_eq!(c.allowed(&[]), Some(mask(&[0, 1, 2, 3])));
        assert_eq!(c.allowed(&[1]), Some(mask(&[0, 1, 2])));
        assert_eq!(c.allowed(&[0]), Some(mask(&[0, 1])));
        assert_eq!(c.allowed(&[0, 1]), Some(mask(&[0, 1])));
        assert_eq!(c.allowed(&[3]), Some(mask(&[3])));
        assert_eq!(Constraints::default().allowed(&[0]), None);
    }

    #[test]
    fn child_bounds_split_at_the_midpoint_within_the_parent() {
        let free = [(f64::NEG_INFINITY, f64::INFINITY)];
        let [l, r] = child_bounds(&free, 1, &[-1.0], &[3.0]);
        assert_eq!((l[0], r[0]), ((f64::NEG_INFINITY, 1.0), (1.0, f64::INFINITY)));
        let [l, r] = child_bounds(&[(0.0, 0.5)], -1, &[2.0], &[0.0]);
        assert_eq!((l[0], r[0]), ((0.5, 0.5), (0.0, 0.5)), "the midpoint stays inside the parent's bounds");
        assert_eq!(child_bounds(&[(0.0, 2.0)], 0, &[5.0], &[-5.0]), [vec![(0.0, 2.0)], vec![(0.0, 2.0)]]);
    }
}
