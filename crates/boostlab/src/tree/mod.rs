//! The one weak learner: a histogram-based, best-first domain-partitioning tree (docs/explanation/weak-learners.md#weak-learners).
//!
//! The learner sees only per-example statistics — a fixed-width block of non-negative weights,
//! `(W+, W−)` for binary boosters and `(W+_1, W−_1, ..., W+_k, W−_k)` for the multi-label ones — and
//! the binned features. It never knows which booster called it. A stump is a tree of two leaves.

mod abstain;
mod constraints;
mod grow;
mod histogram;
mod partition;
mod pool;
mod split;
#[allow(clippy::module_inception)]
mod tree;

pub use abstain::abstaining_stump;
pub(crate) use abstain::abstaining_stump_constrained;
pub use constraints::Constraints;
pub use grow::{grow, grow_cancellable, grow_distributed, GrowSpec, Grown};
pub(crate) use grow::{grow_ranks, RowBuffers};
#[cfg(test)]
pub(crate) use tree::test_support;
pub(crate) use tree::{FlatTree, MaskTree, MASK_TREE_MAX_LEAVES};
pub use tree::{Node, SplitRule, Tree};

use serde::{Deserialize, Serialize};

pub use crate::params::{Criterion, GrowOrder, PureLeaves, SplitTies, TemperedLink, TreeParams};

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
            // docs/explanation/weak-learners.md#weak-learners-criteria: W·L^(t)(W+/W).
            Criterion::Tempered { t } => crate::math::tempered::weighted_bayes_risk(wp, wn, t),
            _ => w * self.risk(wp / w),
        }
    }
}

/// How a leaf turns its statistics `(W+, W−)` into a value (docs/explanation/weak-learners.md#weak-learners-leaf-values, §4.4). Chosen by the booster.
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
                // of sums taken in another order, e.g. weights vs repeated rows) votes +1.
                if wp >= wn - 1e-12 * (wp + wn) {
                    1.0
                } else {
                    -1.0
                }
            }
            // docs/explanation/adaboost.md#adaboost-real: c = ½ ln((W+ + ε)/(W− + ε)).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::tempered::reference_weighted_bayes_risk;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// On random histograms (empty bins, pure bins, weights over 20 orders of magnitude),
    /// the tempered criterion picks the same threshold as the two-logarithm reference, with the
    /// grower's rule (first candidate whose gain beats the best by more than 1e−12·W), and every
    /// gain agrees to 1e−12·W.
    #[test]
    fn tempered_cost_keeps_split_choices() {
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
