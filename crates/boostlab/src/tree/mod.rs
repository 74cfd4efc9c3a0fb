//! The one weak learner: a histogram-based, best-first domain-partitioning tree (SPEC §2.1–2.3).
//!
//! The learner sees only per-example statistics — a fixed-width block of non-negative weights,
//! `(W+, W−)` for binary boosters and `(W+_1, W−_1, ..., W+_k, W−_k)` for the multi-label ones — and
//! the binned features. It never knows which booster called it. A stump is a tree of two leaves.

mod abstain;
mod grow;
mod histogram;
mod partition;
mod pool;
mod split;
#[allow(clippy::module_inception)]
mod tree;

pub use abstain::abstaining_stump;
pub use grow::{grow, grow_cancellable, grow_distributed, GrowSpec, Grown};
pub(crate) use grow::{grow_ranks, RowBuffers};
#[cfg(test)]
pub(crate) use tree::test_support;
pub(crate) use tree::{FlatTree, MaskTree, MASK_TREE_MAX_LEAVES};
pub use tree::{Node, SplitRule, Tree};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Split criterion: the expected Bayes risk of a proper loss, minimised over the leaves (SPEC §2.2).
///
/// For statistics of width 2k the criterion is summed over the k labels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "name")]
pub enum Criterion {
    /// Empirical (0/1) risk `2 min(u, 1−u)`: the weighted error of a majority-vote tree.
    Empirical,
    /// Gini index `4u(1−u)` (CART).
    Gini,
    /// Shannon entropy in nats.
    Entropy,
    /// Matusita `2√(u(1−u))`: Schapire–Singer's Z criterion.
    Matusita,
    /// Tempered Bayes risk `L^(t)` (t = 0 Gini, t = 1 Matusita); `t` finite and ≤ 2.
    Tempered {
        /// The temperature.
        t: f64,
    },
}

impl Criterion {
    /// The Bayes risk L(u) of this criterion at a positive fraction `u ∈ [0, 1]`.
    #[inline]
    pub fn risk(&self, u: f64) -> f64 {
        if u <= 0.0 || u >= 1.0 {
            return 0.0;
        }
        match *self {
            Criterion::Empirical => 2.0 * u.min(1.0 - u),
            Criterion::Gini => 4.0 * u * (1.0 - u),
            Criterion::Entropy => -u * u.ln() - (1.0 - u) * (1.0 - u).ln(),
            Criterion::Matusita => 2.0 * (u * (1.0 - u)).sqrt(),
            Criterion::Tempered { t } => crate::math::tempered::bayes_risk(u, t),
        }
    }

    /// Weighted risk `W·L(W+/W)` of one (W+, W−) pair.
    #[inline]
    pub fn cost(&self, wp: f64, wn: f64) -> f64 {
        // Sums obtained by subtraction may carry tiny negative rounding residues.
        let (wp, wn) = (wp.max(0.0), wn.max(0.0));
        let w = wp + wn;
        if w <= 0.0 {
            return 0.0;
        }
        match *self {
            // Closed forms avoid a division and keep ties exact.
            Criterion::Empirical => 2.0 * wp.min(wn),
            Criterion::Matusita => 2.0 * (wp * wn).sqrt(),
            // SPEC §2.2: W·L^(t)(W+/W).
            Criterion::Tempered { t } => crate::math::tempered::weighted_bayes_risk(wp, wn, t),
            _ => w * self.risk(wp / w),
        }
    }

    /// Checks the parameter's range.
    pub fn check(&self) -> Result<()> {
        if let Criterion::Tempered { t } = *self {
            // Issue 14: an infinite t (`tempered:t=-inf`) used to pass and write a model that JSON
            // cannot hold (the file had `null` and did not load).
            if !(t.is_finite() && t <= 2.0) {
                return Err(Error::param("criterion.t", "a finite temperature t ≤ 2", t));
            }
        }
        Ok(())
    }
}

/// Which variant of the tempered leaf value to use (SPEC §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TemperedLink {
    /// The value that solves boosting's equation at the leaf (bounded by 1/|1−t|). Default.
    #[default]
    Optimal,
    /// What the t-AdaBoost authors' code does: `−L^(t)′(p)`.
    Canonical,
}

/// How a leaf turns its statistics `(W+, W−)` into a value (SPEC §2.2, §4.4). Chosen by the booster.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "rule")]
pub enum LeafRule {
    /// Sign of the weighted majority, in {−1, +1} (ties give +1).
    Sign,
    /// `½ ln((W+ + ε)/(W− + ε))` (Real AdaBoost), capped at ±[`LEAF_CAP`].
    HalfLogRatio {
        /// The smoothing ε ≥ 0.
        eps: f64,
    },
    /// The tempered link at `p = W+/(W+ + W−)`.
    Tempered {
        /// The temperature.
        t: f64,
        /// Which tempered link.
        link: TemperedLink,
    },
}

/// No leaf value exceeds this in absolute value (the t-AdaBoost authors' code caps at ±100 too).
pub const LEAF_CAP: f64 = 100.0;

impl LeafRule {
    /// The leaf value of one (W+, W−) pair; always finite, in `[−LEAF_CAP, LEAF_CAP]`.
    #[inline]
    pub fn value(&self, wp: f64, wn: f64) -> f64 {
        let v = match *self {
            LeafRule::Sign => {
                // A tie (W+ = W−, to a 1e−12 fraction of the leaf's weight: the rounding residue
                // of sums taken in another order, e.g. weights vs repeated rows, issue 14) votes +1.
                if wp >= wn - 1e-12 * (wp + wn) {
                    1.0
                } else {
                    -1.0
                }
            }
            // SPEC §4.4: c = ½ ln((W+ + ε)/(W− + ε)).
            LeafRule::HalfLogRatio { eps } => 0.5 * ((wp + eps) / (wn + eps)).ln(),
            LeafRule::Tempered { t, link } => {
                let w = wp + wn;
                if w <= 0.0 {
                    0.0
                } else {
                    let p = wp / w;
                    match link {
                        TemperedLink::Optimal => crate::math::tempered::link_optimal(p, t),
                        TemperedLink::Canonical => crate::math::tempered::link_canonical(p, t),
                    }
                }
            }
        };
        if v.is_nan() {
            0.0
        } else {
            v.clamp(-LEAF_CAP, LEAF_CAP)
        }
    }
}

/// The order in which best-first growth picks the next leaf to split (SPEC §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GrowOrder {
    /// Largest total weight first (the t-AdaBoost paper's wording). Default.
    #[default]
    Weight,
    /// Most training examples first, ties to the most recently created leaf (the authors' code).
    Count,
    /// Largest criterion decrease first (LightGBM's leaf-wise growth).
    Gain,
}

/// Whether a split may create a leaf that holds weight of one class only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PureLeaves {
    /// Pure leaves are allowed (their values are smoothed or capped).
    Allow,
    /// A split is admissible only if both children hold positive weight of both classes (of every
    /// label), as in the t-AdaBoost experiments.
    Forbid,
    /// The booster's choice, resolved when a fit starts (the model records `allow` or `forbid`):
    /// `forbid` for t-AdaBoost (issue 16: the ablation of docs/reproduction.md found pure leaves
    /// the reason its t = 1 lost to the authors' configuration), `allow` for every other booster.
    /// Under `auto`, a t-AdaBoost tree that would be useless with pure leaves forbidden (one leaf,
    /// or every leaf 0) is grown with them allowed (tiny or nearly separable data). Default. A tree grown directly
    /// (not by the boosting loop) with `auto` allows pure leaves.
    #[default]
    Auto,
}

/// How the split search chooses among candidates whose gains tie (SPEC §2.1).
///
/// Two candidates tie when their gains differ by at most `1e−12·W` (`W` the node's total
/// weight): differences below that are rounding, not information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SplitTies {
    /// Scanning features in index order and thresholds upwards, a candidate replaces the best so
    /// far only when its gain is larger by more than the tolerance: ties go to the lowest feature
    /// index (and the lowest threshold). Default.
    #[default]
    Lowest,
    /// Uniformly at random among every candidate whose gain is within the tolerance of the
    /// largest, drawn from the run's seed (and the round and node), so that runs are reproducible
    /// and do not depend on the thread count. What the t-AdaBoost authors' code does (unseeded
    /// there); the `authors` preset's choice.
    Random,
}

/// Parameters of the tree learner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeParams {
    /// Maximum number of leaves. By default 2 (a stump); valid range ≥ 2.
    pub max_leaves: usize,
    /// Maximum number of nodes (internal + leaves); overrides `max_leaves` with ⌊(K+1)/2⌋ leaves
    /// ("size 15" = 8 leaves). By default unset; valid range ≥ 3.
    pub max_nodes: Option<usize>,
    /// Maximum depth (root = depth 0). By default unlimited; valid range ≥ 1.
    pub max_depth: Option<usize>,
    /// Minimum total weight (sum of the statistics block) in each child. By default 0 (a child must
    /// only have positive weight); valid range ≥ 0.
    pub min_leaf_weight: f64,
    /// Leaf selection order for best-first growth. By default `weight`.
    pub grow_order: GrowOrder,
    /// Split criterion. By default chosen by the booster (`None`).
    pub criterion: Option<Criterion>,
    /// Pure-leaf policy. By default `auto` (the booster's choice: `forbid` for t-AdaBoost, `allow`
    /// otherwise; see [`PureLeaves::Auto`]).
    pub pure_leaves: PureLeaves,
    /// Evaluate at most this many (feature, threshold) candidates per node, a seeded random subset.
    /// By default unlimited; valid range ≥ 1.
    pub max_split_candidates: Option<usize>,
    /// How ties between equally good splits are broken. By default `lowest`; or `random`.
    pub split_ties: SplitTies,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            max_leaves: 2,
            max_nodes: None,
            max_depth: None,
            min_leaf_weight: 0.0,
            grow_order: GrowOrder::Weight,
            criterion: None,
            pure_leaves: PureLeaves::Auto,
            max_split_candidates: None,
            split_ties: SplitTies::Lowest,
        }
    }
}

impl TreeParams {
    /// Validates every field.
    pub fn check(&self) -> Result<()> {
        if self.max_leaves < 2 {
            return Err(Error::param("max_leaves", "an integer ≥ 2", self.max_leaves));
        }
        if let Some(k) = self.max_nodes {
            if k < 3 {
                return Err(Error::param("max_nodes", "an integer ≥ 3", k));
            }
        }
        if self.max_depth == Some(0) {
            return Err(Error::param("max_depth", "an integer ≥ 1", 0));
        }
        if !(self.min_leaf_weight >= 0.0 && self.min_leaf_weight.is_finite()) {
            return Err(Error::param("min_leaf_weight", "a finite number ≥ 0", self.min_leaf_weight));
        }
        if self.max_split_candidates == Some(0) {
            return Err(Error::param("max_split_candidates", "an integer ≥ 1", 0));
        }
        if let Some(c) = &self.criterion {
            c.check()?;
        }
        Ok(())
    }

    /// The effective leaf limit.
    pub fn leaf_limit(&self) -> usize {
        match self.max_nodes {
            Some(k) => k.div_ceil(2),
            None => self.max_leaves,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::tempered::reference_weighted_bayes_risk;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Issue 8: on random histograms (empty bins, pure bins, weights over 20 orders of magnitude),
    /// the tempered criterion picks the same threshold as the two-logarithm reference, with the
    /// grower's rule (first candidate whose gain beats the best by more than 1e−12·W), and every
    /// gain agrees to 1e−12·W.
    #[test]
    fn issue_8_tempered_cost_keeps_split_choices() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for t in [-1e6, -4.0, 0.0, 0.2, 0.6, 0.8, 0.9, 1.0 - 2e-9, 1.0, 1.4, 1.9, 2.0] {
            let crit = Criterion::Tempered { t };
            for trial in 0..60 {
                let nb = rng.gen_range(2..80);
                let scale = 10f64.powi(rng.gen_range(-10..10));
                let bins: Vec<(f64, f64)> = (0..nb)
                    .map(|_| {
                        let mut draw = || match rng.gen_range(0..6) {
                            0 => 0.0,
                            1 => scale * 1e-10 * rng.gen::<f64>(),
                            _ => scale * rng.gen::<f64>(),
                        };
                        (draw(), draw())
                    })
                    .collect();
                let (tp, tn) = bins.iter().fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
                let tol = 1e-12 * (tp + tn);
                let pick = |cost: &dyn Fn(f64, f64) -> f64| {
                    let parent = cost(tp, tn);
                    let (mut lp, mut ln) = (0.0, 0.0);
                    let mut best: Option<(f64, usize)> = None;
                    let mut gains = Vec::new();
                    for (b, &(p, n)) in bins[..nb - 1].iter().enumerate() {
                        lp += p;
                        ln += n;
                        let (rp, rn) = ((tp - lp).max(0.0), (tn - ln).max(0.0));
                        let gain = parent - cost(lp, ln) - cost(rp, rn);
                        gains.push(gain);
                        if best.is_none_or(|(g, _)| gain > g + tol) {
                            best = Some((gain, b));
                        }
                    }
                    (best.map(|b| b.1), gains)
                };
                let (got, g1) = pick(&|p, n| crit.cost(p, n));
                let (want, g2) = pick(&|p, n| reference_weighted_bayes_risk(p, n, t));
                assert_eq!(got, want, "t={t} trial={trial}");
                for (a, b) in g1.iter().zip(&g2) {
                    assert!((a - b).abs() <= tol, "t={t} trial={trial}: gain {a:e} vs {b:e}");
                }
            }
        }
    }
}
