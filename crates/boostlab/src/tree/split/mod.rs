//! The split search at one node: every feature's best split from the node's histogram (numeric
//! thresholds with the missing bin on either side, categorical subsets ordered by positive
//! fraction), under the tie rule and the candidate cap.

mod bounded;
pub(in crate::tree) mod simd;

use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::histogram::PARALLEL_CELLS;
use super::pool::{SCAN_ACC, SCAN_BINS, SCAN_GAINS, SCAN_HI, SCAN_IDX, SCAN_LEFT, SCAN_OUTPUTS, SCAN_TOPS};
use super::{Criterion, LeafRule, PureLeaves, SplitTies};
use crate::data::{BinMapper, BinnedMatrix, FeatureBins};
pub(in crate::tree) use bounded::RiskBounds;
pub(in crate::tree) use bounded::{Bounded, Curvature, GainBounds};

/// Resolution of the positive fractions that order a categorical feature's categories (their
/// multiples of 2^−36; see `best_for_feature`).
pub(in crate::tree) const CAT_FRACTION_GRID: f64 = (1u64 << 36) as f64;

/// Candidates around the largest curvature bound whose intervals seed the tempered scan's
/// floor ([`SearchCtx::pool_bounded`]).
pub(in crate::tree) const SEED_BLOCK: usize = 16;

/// Sets `v`'s length to `n` without zeroing the values it keeps: for scratch arrays whose first
/// `n` values the caller writes before reading (zeroing them is wasted work on every scan).
fn resize_stale<T: Copy>(v: &mut Vec<T>, n: usize, fill: T) {
    v.truncate(n);
    v.resize(n, fill);
}

/// The largest of `b` ignoring NaN (`−∞` when empty or all NaN), by four independent chains.
#[inline]
fn block_max(b: &[f64]) -> f64 {
    block_max_of(b, |g| g)
}

/// The largest finite value of `b` (`−∞` when there is none).
#[inline]
fn block_max_finite(b: &[f64]) -> f64 {
    block_max_of(b, |g| if g < f64::INFINITY { g } else { f64::NEG_INFINITY })
}

/// The largest of `f(x)` over `b`, NaN ignored (`−∞` when empty or all NaN), by four independent
/// chains.
#[inline(always)]
fn block_max_of(b: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let mut m = [f64::NEG_INFINITY; 4];
    let mut it = b.chunks_exact(4);
    for c in &mut it {
        for (m, &g) in m.iter_mut().zip(c) {
            *m = m.max(f(g));
        }
    }
    for &g in it.remainder() {
        m[0] = m[0].max(f(g));
    }
    m[0].max(m[1]).max(m[2].max(m[3]))
}

/// The best split found for one leaf.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    pub gain: f64,
    pub feature: usize,
    pub kind: CandKind,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum CandKind {
    /// Value bins `≤ bin` go left; the missing bin goes left iff `missing_left`.
    Numeric { bin: usize, missing_left: bool },
    /// `left[b]` tells whether bin `b` (missing bin last) goes left.
    Categorical { left: Vec<bool> },
}

impl CandKind {
    #[inline]
    pub(in crate::tree) fn goes_left(&self, bin: usize, missing_bin: usize) -> bool {
        match self {
            CandKind::Numeric { bin: t, missing_left } => {
                if bin == missing_bin {
                    *missing_left
                } else {
                    bin <= *t
                }
            }
            CandKind::Categorical { left } => left[bin],
        }
    }
}

/// Summed cost Σ_ℓ W·L(p) of a statistics block.
#[inline]
pub(crate) fn block_cost(c: &Criterion, s: &[f64]) -> f64 {
    s.chunks_exact(2).map(|p| c.cost(p[0], p[1])).sum()
}

/// [`Criterion::Matusita`]'s cost `2√(W+W−)` (0 when `W+ + W− ≤ 0`) with the same arithmetic as
/// [`Criterion::cost`] — the same values bit for bit for every input — but branch-free (the test
/// selects the result), so that a loop of them vectorises.
#[inline(always)]
fn matusita_cost(wp: f64, wn: f64) -> f64 {
    let (wp, wn) = (wp.max(0.0), wn.max(0.0));
    let v = 2.0 * (wp * wn).sqrt();
    if wp + wn <= 0.0 {
        0.0
    } else {
        v
    }
}

/// Whether a split into children with sums `l` and `r` is admissible. Weights at or below `tiny`
/// (a 1e−12 fraction of the node's weight) count as zero, so that rounding residues of sums taken
/// in different orders never decide admissibility.
#[inline]
pub(in crate::tree) fn admissible(l: &[f64], r: &[f64], min_w: f64, pure: PureLeaves, tiny: f64) -> bool {
    let wl: f64 = l.iter().sum();
    let wr: f64 = r.iter().sum();
    if !(wl > tiny && wr > tiny && wl >= min_w && wr >= min_w) {
        return false;
    }
    match pure {
        PureLeaves::Allow | PureLeaves::Auto => true,
        PureLeaves::Forbid => l.chunks_exact(2).chain(r.chunks_exact(2)).all(|p| p[0] > tiny && p[1] > tiny),
    }
}

/// A child's sum obtained by subtraction, with rounding residues (below `tiny`, a 1e−12 fraction
/// of the node's weight, either sign) made exact zeros: a side that is empty in exact arithmetic
/// must cost nothing, and Matusita's `√(W+W−)` would turn a 1e−16 residue into a 1e−8 penalty,
/// enough to break an exact tie between two features in favour of the wrong one.
#[inline]
pub(in crate::tree) fn residue_free(d: f64, tiny: f64) -> f64 {
    if d <= tiny {
        0.0
    } else {
        d
    }
}

/// The seed of the node numbered `serial` (0 for the root, then in creation order) of a tree
/// grown with seed `seed`: the candidate cap draws from its stream 0, random tie-breaking from
/// its stream 1.
#[inline]
fn node_seed(seed: u64, serial: usize) -> u64 {
    seed ^ (serial as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// `split_ties = random`: the index, uniform in `0..n_tied`, of the winner among the `n_tied`
/// candidates (in feature, then scan order) whose gains tie with the best at node `serial`.
pub(crate) fn tie_winner(seed: u64, serial: usize, n_tied: usize) -> usize {
    if n_tied <= 1 {
        return 0;
    }
    let mut rng = ChaCha8Rng::seed_from_u64(node_seed(seed, serial));
    rng.set_stream(1);
    rng.gen_range(0..n_tied)
}

/// The candidates a scan keeps, in scan order (docs/explanation/weak-learners.md#weak-learners-ties):
/// with `random` ties every candidate within `tol` of the largest gain seen so far; with `lowest`
/// ties only those that beat every earlier one (the *records*) among them. Either way the winner
/// over several pools — the first, or a seeded draw, of the candidates within `tol` of the
/// largest gain of all, in feature then scan order — is found in the union of the pools, and a
/// pool does not depend on how its candidates were split into features or blocks: a scan may
/// prune candidates that cannot tie with the best.
pub(in crate::tree) struct Pool {
    ties: SplitTies,
    tol: f64,
    max: f64,
    items: Vec<Candidate>,
}

impl Pool {
    pub(in crate::tree) fn new(ties: SplitTies, tol: f64) -> Pool {
        Pool { ties, tol, max: f64::NEG_INFINITY, items: Vec::new() }
    }

    /// Offers a candidate of gain `gain` (built by `make` only if kept).
    #[inline]
    pub(in crate::tree) fn offer(&mut self, gain: f64, make: &dyn Fn() -> Candidate) {
        if gain >= self.max - self.tol {
            let record = gain > self.max;
            if record {
                self.max = gain;
                let cut = gain - self.tol;
                self.items.retain(|c| c.gain >= cut);
            }
            if record || self.ties == SplitTies::Random {
                self.items.push(make());
            }
        }
    }

    pub(in crate::tree) fn into_vec(self) -> Vec<Candidate> {
        self.items
    }
}

/// A lower bound of the best gain at a node, shared by the scans of its features (possibly on
/// several threads): a scan raises it to the lower end of a candidate's gain interval and prunes
/// what lies more than the tolerance below it. Which value a scan happens to read changes how
/// much it prunes, never the tied candidates it returns, so results stay bit-identical whatever
/// the number of threads.
#[derive(Debug)]
pub(in crate::tree) struct Floor(std::sync::atomic::AtomicU64);

impl Floor {
    pub(in crate::tree) fn new() -> Floor {
        Floor(std::sync::atomic::AtomicU64::new(f64::NEG_INFINITY.to_bits()))
    }

    /// The bound (−∞ until a scan raises it).
    #[inline]
    pub(in crate::tree) fn get(&self) -> f64 {
        f64::from_bits(self.0.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Raises the bound to `x` when `x` is larger (NaN is ignored).
    #[inline]
    pub(in crate::tree) fn raise(&self, x: f64) {
        use std::sync::atomic::Ordering::Relaxed;
        if x > self.get() {
            let _ = self.0.fetch_update(Relaxed, Relaxed, |b| (x > f64::from_bits(b)).then_some(x.to_bits()));
        }
    }
}

/// Context of the split search at one node.
pub(in crate::tree) struct SearchCtx<'a> {
    pub(in crate::tree) criterion: Criterion,
    pub(in crate::tree) ties: SplitTies,
    pub(in crate::tree) width: usize,
    pub(in crate::tree) min_w: f64,
    pub(in crate::tree) pure: PureLeaves,
    pub(in crate::tree) parent_cost: f64,
    pub(in crate::tree) tol: f64,
    pub(in crate::tree) binned: &'a BinnedMatrix,
    pub(in crate::tree) mapper: &'a BinMapper,
    /// Cheap guaranteed bounds of the tempered cost, when the criterion is tempered
    /// at a supported temperature.
    pub(in crate::tree) bounds: Option<&'a RiskBounds>,
    /// The node's constraints ([`NodeLimits::FREE`] when the fit has none).
    pub(in crate::tree) limits: NodeLimits<'a>,
}

/// What constraints allow at one node (docs/how-to/constraints.md#how-the-learner-enforces-them).
#[derive(Debug, Clone, Copy)]
pub(in crate::tree) struct NodeLimits<'a> {
    /// How the leaves turn a child's sums into its values (read only under monotone constraints).
    pub(in crate::tree) leaf_rule: LeafRule,
    /// The direction −1, 0, +1 of each feature; empty without monotone constraints.
    pub(in crate::tree) monotone: &'a [i8],
    /// The bounds `[lo, hi]` of every output's leaf value at this node (one per output); empty
    /// without monotone constraints.
    pub(in crate::tree) values: &'a [(f64, f64)],
    /// The features this node may split on (interaction constraints); `None`: every feature.
    pub(in crate::tree) features: Option<&'a [bool]>,
}

impl NodeLimits<'_> {
    /// No constraint (the tests' searches).
    #[cfg(test)]
    pub(in crate::tree) const FREE: NodeLimits<'static> =
        NodeLimits { leaf_rule: LeafRule::Sign, monotone: &[], values: &[], features: None };

    /// Whether feature `f`'s candidates need their children's leaf values checked: it is
    /// constrained, or the node's values are bounded (below a constrained split).
    fn checks_values(&self, f: usize) -> bool {
        !self.monotone.is_empty()
            && (self.monotone[f] != 0
                || self.values.iter().any(|&(lo, hi)| lo > f64::NEG_INFINITY || hi < f64::INFINITY))
    }

    /// Whether children with sums `l` and `r` (split on `f`) keep the constraints: every output's
    /// leaf value of each child within the node's bounds, and for a constrained feature the left
    /// child's (lower feature values) not above (+1) or not below (−1) the right child's. Per
    /// candidate, never per row.
    pub(in crate::tree) fn values_ok(&self, f: usize, l: &[f64], r: &[f64]) -> bool {
        if self.monotone.is_empty() {
            return true;
        }
        let d = self.monotone[f];
        l.chunks_exact(2).zip(r.chunks_exact(2)).zip(self.values).all(|((l, r), &(lo, hi))| {
            let (vl, vr) = (self.leaf_rule.value(l[0], l[1]), self.leaf_rule.value(r[0], r[1]));
            let inside = lo <= vl && vl <= hi && lo <= vr && vr <= hi;
            inside && (d == 0 || (d > 0 && vl <= vr) || (d < 0 && vl >= vr))
        })
    }
}

/// A binary leaf cost `W·L(W+/W)` as the width-2 scan needs it.
pub(in crate::tree) trait PairCost {
    /// The exact cost, bit for bit [`Criterion::cost`].
    fn cost(&self, wp: f64, wn: f64) -> f64;
    /// Cheap guaranteed bounds of [`Self::cost`], when there are any (the tempered criterion):
    /// the scan then computes exact costs only where the bounds cannot decide.
    fn risk_bounds(&self) -> Option<&RiskBounds> {
        None
    }
}

/// A criterion whose exact cost is cheap (a closed form, one `sqrt`, `ln`).
pub(in crate::tree) struct Exact<F>(pub(in crate::tree) F);

impl<F: Fn(f64, f64) -> f64> PairCost for Exact<F> {
    #[inline(always)]
    fn cost(&self, wp: f64, wn: f64) -> f64 {
        (self.0)(wp, wn)
    }
}

/// What [`SearchCtx::pool_exact`] needs to compute one candidate's exact gain (a
/// struct rather than a closure, so that the gain pass inlines into its AVX2 build, [`simd`]).
pub(in crate::tree) struct ExactGain<'a, C> {
    pub(in crate::tree) cost: &'a C,
    pub(in crate::tree) t0: f64,
    pub(in crate::tree) t1: f64,
    pub(in crate::tree) tol: f64,
    pub(in crate::tree) parent: f64,
    pub(in crate::tree) min_w: f64,
    pub(in crate::tree) forbid: bool,
}

impl<C: PairCost> ExactGain<'_, C> {
    /// The gain of the split whose left child has sums `(l0, l1)`, or NaN when the split is not
    /// admissible ([`admissible`]'s comparisons without short-circuits).
    #[inline(always)]
    pub(in crate::tree) fn gain(&self, l0: f64, l1: f64) -> f64 {
        let tol = self.tol;
        let (r0, r1) = (residue_free(self.t0 - l0, tol), residue_free(self.t1 - l1, tol));
        let (wl, wr) = (l0 + l1, r0 + r1);
        let sides_ok = (l0 > tol) & (l1 > tol) & (r0 > tol) & (r1 > tol);
        let ok = (wl > tol) & (wr > tol) & (wl >= self.min_w) & (wr >= self.min_w) & (!self.forbid | sides_ok);
        let g = self.parent - self.cost.cost(l0, l1) - self.cost.cost(r0, r1);
        if ok {
            g
        } else {
            f64::NAN
        }
    }
}

/// Number of (feature, threshold) candidates of a feature at a node.
fn n_candidates(hist_f: &[f64], width: usize, numeric: bool) -> usize {
    let nb = hist_f.len() / width;
    let nonempty = |b: usize| hist_f[b * width..(b + 1) * width].iter().sum::<f64>() > 0.0;
    let value_bins = if numeric { nb - 1 } else { nb };
    (0..value_bins).filter(|&b| nonempty(b)).count().saturating_sub(1)
}

impl SearchCtx<'_> {
    /// Best splits of feature `f` from its histogram slice, among the allowed candidate ordinals:
    /// every one within the tolerance of the best, in scan order (the tie rule picks among them
    /// across features). With the node's `floor` (shared by its features' scans), a scan may
    /// leave out candidates that cannot tie with the best of the node.
    pub(in crate::tree) fn best_for_feature(
        &self,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
        floor: Option<&Floor>,
    ) -> Vec<Candidate> {
        if self.limits.features.is_some_and(|m| !m[f]) {
            return Vec::new();
        }
        if self.limits.checks_values(f) {
            // Each candidate's leaf values are checked: the generic scan (the fast scans' reference).
            return self.best_for_feature_generic(f, hist_f, total, allowed);
        }
        if self.width == 2 && matches!(self.mapper.features[f], FeatureBins::Numeric { .. }) {
            // The common case (one output, numeric feature) has its own scan.
            return match (self.criterion, self.bounds) {
                (Criterion::Tempered { .. }, Some(rb)) => {
                    self.scan_pair(&Bounded { crit: self.criterion, rb }, f, hist_f, total, allowed, floor)
                }
                (Criterion::Empirical, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Empirical.cost(p, n)), f, hist_f, total, allowed, floor)
                }
                (Criterion::Gini, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Gini.cost(p, n)), f, hist_f, total, allowed, floor)
                }
                (Criterion::Entropy, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Entropy.cost(p, n)), f, hist_f, total, allowed, floor)
                }
                (Criterion::Matusita, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Matusita.cost(p, n)), f, hist_f, total, allowed, floor)
                }
                (c @ Criterion::Tempered { .. }, None) => {
                    self.scan_pair(&Exact(|p, n| c.cost(p, n)), f, hist_f, total, allowed, floor)
                }
            };
        }
        if self.width > 2 && matches!(self.mapper.features[f], FeatureBins::Numeric { .. }) {
            // Several outputs (AdaBoost.MH's 2k-wide blocks), numeric feature.
            return match self.criterion {
                Criterion::Matusita => self.scan_outputs(matusita_cost, f, hist_f, total, allowed),
                Criterion::Empirical => {
                    self.scan_outputs(|p, n| Criterion::Empirical.cost(p, n), f, hist_f, total, allowed)
                }
                Criterion::Gini => self.scan_outputs(|p, n| Criterion::Gini.cost(p, n), f, hist_f, total, allowed),
                Criterion::Entropy => {
                    self.scan_outputs(|p, n| Criterion::Entropy.cost(p, n), f, hist_f, total, allowed)
                }
                c @ Criterion::Tempered { .. } => self.scan_outputs(|p, n| c.cost(p, n), f, hist_f, total, allowed),
            };
        }
        self.best_for_feature_generic(f, hist_f, total, allowed)
    }

    /// The numeric scan of several outputs: the candidates of
    /// [`Self::best_for_feature_generic`], in its order, with its arithmetic (the same running
    /// sums, children's sums, [`admissible`] test, summed pair costs and tie rule), so the same
    /// result bit for bit. Faster because the cost is one function known at compile time (no
    /// match on the criterion per pair) that writes the `k` pair costs of a child into a buffer —
    /// branch-free, so the square roots of Matusita's `2√(W+W−)` run in vector lanes — before they
    /// are summed in order, and because its arrays are this thread's, reused across features,
    /// nodes and rounds.
    fn scan_outputs<F: Fn(f64, f64) -> f64>(
        &self,
        cost: F,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
    ) -> Vec<Candidate> {
        let w = self.width;
        let k = w / 2;
        let nb = hist_f.len() / w;
        let (hist, miss) = hist_f.split_at((nb - 1) * w);
        let has_missing = miss.iter().sum::<f64>() > 0.0;
        let mut buf = SCAN_OUTPUTS.take();
        buf.clear();
        buf.resize(4 * w, 0.0);
        let (acc, rest) = buf.split_at_mut(w);
        let (left, rest) = rest.split_at_mut(w);
        let (right, costs) = rest.split_at_mut(w);
        let costs = &mut costs[..k];
        // Sums of a child's pair costs, in pair order (as `block_cost`).
        let block = |s: &[f64], costs: &mut [f64]| -> f64 {
            for (c, p) in costs.iter_mut().zip(s.chunks_exact(2)) {
                *c = cost(p[0], p[1]);
            }
            costs.iter().sum::<f64>()
        };
        let mut best = Pool::new(self.ties, self.tol);
        // The generic scan's candidates: each non-empty value bin but the last, `ord` counting
        // them; the running sums add every bin up to the candidate (empty bins add +0.0).
        let mut prev: Option<usize> = None;
        let (mut from, mut ord) = (0usize, 0u32);
        for (b, cell) in hist.chunks_exact(w).enumerate() {
            let nonempty = cell.iter().sum::<f64>() > 0.0;
            if !nonempty {
                continue;
            }
            let Some(pb) = prev.replace(b) else { continue };
            for c in hist[from * w..(pb + 1) * w].chunks_exact(w) {
                for (a, &x) in acc.iter_mut().zip(c) {
                    *a += x;
                }
            }
            from = pb + 1;
            let o = ord;
            ord += 1;
            if allowed.is_some_and(|a| a.binary_search(&o).is_err()) {
                continue;
            }
            for missing_left in [false, true] {
                if missing_left && !has_missing {
                    break;
                }
                for (((l, r), &a), (&m, &t)) in
                    left.iter_mut().zip(right.iter_mut()).zip(&*acc).zip(miss.iter().zip(total))
                {
                    *l = a + if missing_left { m } else { 0.0 };
                    *r = residue_free(t - *l, self.tol);
                }
                if !admissible(left, right, self.min_w, self.pure, self.tol) {
                    continue;
                }
                let gain = self.parent_cost - block(left, costs) - block(right, costs);
                let kind = CandKind::Numeric { bin: pb, missing_left };
                best.offer(gain, &|| Candidate { gain, feature: f, kind: kind.clone() });
            }
        }
        SCAN_OUTPUTS.set(buf);
        best.into_vec()
    }

    /// [`Self::best_for_feature`] for any width and feature kind: the reference of the width-2
    /// numeric scan ([`Self::scan_pair`]), which must return the same candidates bit for bit.
    pub(in crate::tree) fn best_for_feature_generic(
        &self,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
    ) -> Vec<Candidate> {
        let w = self.width;
        let nb = hist_f.len() / w;
        let miss = &hist_f[(nb - 1) * w..];
        let mut best = Pool::new(self.ties, self.tol);
        let mut left = vec![0.0; w];
        let mut right = vec![0.0; w];
        let consider = |gain: f64, kind: &dyn Fn() -> CandKind, best: &mut Pool| {
            best.offer(gain, &|| Candidate { gain, feature: f, kind: kind() });
        };
        let is_allowed = |ord: u32| allowed.is_none_or(|a| a.binary_search(&ord).is_ok());
        let nonempty = |b: usize| hist_f[b * w..(b + 1) * w].iter().sum::<f64>() > 0.0;
        match &self.mapper.features[f] {
            FeatureBins::Numeric { .. } => {
                let has_missing = miss.iter().sum::<f64>() > 0.0;
                let value_bins: Vec<usize> = (0..nb - 1).filter(|&b| nonempty(b)).collect();
                let mut acc = vec![0.0; w];
                for (ord, pair) in value_bins.windows(2).enumerate() {
                    let b = pair[0];
                    // Accumulate every value bin up to b (empty bins add nothing).
                    let from = if ord == 0 { 0 } else { value_bins[ord - 1] + 1 };
                    for bb in from..=b {
                        for k in 0..w {
                            acc[k] += hist_f[bb * w + k];
                        }
                    }
                    if !is_allowed(ord as u32) {
                        continue;
                    }
                    for missing_left in [false, true] {
                        if missing_left && !has_missing {
                            break;
                        }
                        for k in 0..w {
                            left[k] = acc[k] + if missing_left { miss[k] } else { 0.0 };
                            right[k] = residue_free(total[k] - left[k], self.tol);
                        }
                        if !admissible(&left, &right, self.min_w, self.pure, self.tol)
                            || !self.limits.values_ok(f, &left, &right)
                        {
                            continue;
                        }
                        let gain =
                            self.parent_cost - block_cost(&self.criterion, &left) - block_cost(&self.criterion, &right);
                        consider(gain, &|| CandKind::Numeric { bin: b, missing_left }, &mut best);
                    }
                }
            }
            FeatureBins::Categorical { .. } => {
                // docs/explanation/weak-learners.md#weak-learners-criteria: sort categories (the missing bin is one more category) by the weighted
                // fraction of positives; the best partition is a prefix of that order.
                let mut cats: Vec<(f64, usize)> = (0..nb)
                    .filter(|&b| nonempty(b))
                    .map(|b| {
                        let s = &hist_f[b * w..(b + 1) * w];
                        let pos: f64 = s.iter().step_by(2).sum();
                        // Fractions equal in exact arithmetic (every category of single-label data
                        // has the fraction 1/k in AdaBoost.MH's first round) differ by rounding
                        // residues only, which the order of summation decides (sums over
                        // ranks): fractions within 2^−36 sort as ties, by bin.
                        ((pos / s.iter().sum::<f64>() * CAT_FRACTION_GRID).round(), b)
                    })
                    .collect();
                cats.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                left.iter_mut().for_each(|x| *x = 0.0);
                for ord in 0..cats.len().saturating_sub(1) {
                    let b = cats[ord].1;
                    for k in 0..w {
                        left[k] += hist_f[b * w + k];
                    }
                    if !is_allowed(ord as u32) {
                        continue;
                    }
                    for k in 0..w {
                        right[k] = residue_free(total[k] - left[k], self.tol);
                    }
                    if !admissible(&left, &right, self.min_w, self.pure, self.tol)
                        || !self.limits.values_ok(f, &left, &right)
                    {
                        continue;
                    }
                    let gain =
                        self.parent_cost - block_cost(&self.criterion, &left) - block_cost(&self.criterion, &right);
                    consider(
                        gain,
                        &|| {
                            let mut set = vec![false; nb];
                            for c in &cats[..=ord] {
                                set[c.1] = true;
                            }
                            CandKind::Categorical { left: set }
                        },
                        &mut best,
                    );
                }
            }
        }
        best.into_vec()
    }

    /// The width-2 numeric scan: the candidates of [`Self::best_for_feature_generic`], in its
    /// order, with its arithmetic (the same prefix sums, children's sums, admissibility test and
    /// gains), so the same pool bit for bit; faster because it works on flat arrays of scalars,
    /// and because with a [`Bounded`] cost the exact cost runs only where cheap bounds cannot
    /// exclude a tie with the best ([`Self::pool_bounded`]). With a `floor` shared by the node's
    /// features, candidates that cannot tie with the node's best are left out, so the pool may be
    /// smaller than the generic one, never different in the node's tied candidates.
    fn scan_pair<C: PairCost>(
        &self,
        cost: &C,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
        floor: Option<&Floor>,
    ) -> Vec<Candidate> {
        let nb = hist_f.len() / 2;
        let (m0, m1) = (hist_f[2 * (nb - 1)], hist_f[2 * (nb - 1) + 1]);
        let has_missing = m0 + m1 > 0.0;
        let nonempty = |b: usize| hist_f[2 * b] + hist_f[2 * b + 1] > 0.0;
        // Thresholds are the non-empty value bins but the last one.
        let Some(last) = (0..nb - 1).rev().find(|&b| nonempty(b)) else {
            return Vec::new();
        };
        // Pass 1: the thresholds (allowed non-empty value bins but the last) and their prefix
        // sums. Empty bins add +0.0 in the generic scan: the same sums.
        // The pass arrays are reused from this thread's last scan (no allocation per
        // feature and node); every element read is written first.
        let (mut bins, mut acc) = (SCAN_BINS.take(), SCAN_ACC.take());
        let (mut a0, mut a1) = (0.0f64, 0.0f64);
        if let Some(allowed) = allowed {
            // The allowed candidates: their ranks among the non-empty bins are listed.
            bins.clear();
            acc.clear();
            let mut ord = 0u32;
            for b in 0..last {
                let (h0, h1) = (hist_f[2 * b], hist_f[2 * b + 1]);
                if h0 + h1 <= 0.0 {
                    continue;
                }
                a0 += h0;
                a1 += h1;
                let o = ord;
                ord += 1;
                if allowed.binary_search(&o).is_err() {
                    continue;
                }
                bins.push(b);
                acc.push((a0, a1));
            }
        } else {
            // Branch-free (empty bins are data-dependent): every bin is written and only non-empty
            // ones advance the cursor; an empty bin's (+0, +0) leaves the sums unchanged. The
            // last scan's values are kept (not zeroed) up to `last`: the `n` kept are written here.
            resize_stale(&mut bins, last, 0);
            resize_stale(&mut acc, last, (0.0, 0.0));
            let mut n = 0;
            // Slices of length `last`, and `n ≤ b < last` stated by the clamp: no bounds checks,
            // and the arrays' pointers stay in registers.
            let (bs, ac) = (&mut bins[..last], &mut acc[..last]);
            for (b, h) in hist_f[..2 * last].chunks_exact(2).enumerate() {
                let (h0, h1) = (h[0], h[1]);
                a0 += h0;
                a1 += h1;
                let at = n.min(last - 1);
                bs[at] = b;
                ac[at] = (a0, a1);
                n += usize::from(h0 + h1 > 0.0);
            }
            bins.truncate(n);
            acc.truncate(n);
        }
        let miss = has_missing.then_some((m0, m1));
        let out = match cost.risk_bounds() {
            Some(rb) => self.pool_bounded(cost, rb, f, &bins, &acc, miss, (total[0], total[1]), floor),
            None => self.pool_exact(cost, f, &bins, &acc, miss, (total[0], total[1])),
        };
        SCAN_BINS.set(bins);
        SCAN_ACC.set(acc);
        out
    }

    /// [`Self::scan_pair`]'s passes 2 and 3 for an exact cost (Real and discrete AdaBoost).
    /// Pass 2 writes every candidate's gain into one flat array in the generic scan's order
    /// (bins, then the missing side: `miss` holds the missing bin's sums when it is not empty),
    /// branch-free — an inadmissible candidate is NaN, the admissibility test is [`admissible`]'s
    /// comparisons without short-circuits. Pass 3 takes the largest gain `G` (NaN ignored) by
    /// independent chains and offers the candidates with gains `≥ G − tol`, in order, to a
    /// [`Pool`]: the generic scan's pool.
    fn pool_exact<C: PairCost>(
        &self,
        cost: &C,
        f: usize,
        bins: &[usize],
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        (t0, t1): (f64, f64),
    ) -> Vec<Candidate> {
        let (tol, parent, min_w) = (self.tol, self.parent_cost, self.min_w);
        let forbid = self.pure == PureLeaves::Forbid;
        let gain = ExactGain { cost, t0, t1, tol, parent, min_w, forbid };
        let mut gains = SCAN_GAINS.take();
        let ns = if miss.is_some() { 2 } else { 1 };
        // Every value is written by pass 2.
        resize_stale(&mut gains, acc.len() * ns, 0.0);
        // The pass compiled for AVX2 when the CPU has it (same bits, see `simd`).
        simd::exact_gains(&gain, acc, miss, &mut gains);
        let best = block_max(&gains);
        let mut pool = Pool::new(self.ties, tol);
        if best > f64::NEG_INFINITY {
            // Only candidates within `tol` of the largest can be kept: offer those.
            let cut = best - tol;
            for (j, &g) in gains.iter().enumerate() {
                if g >= cut {
                    let kind = CandKind::Numeric { bin: bins[j / ns], missing_left: j % ns == 1 };
                    pool.offer(g, &|| Candidate { gain: g, feature: f, kind: kind.clone() });
                }
            }
        }
        SCAN_GAINS.set(gains);
        pool.into_vec()
    }

    /// [`Self::scan_pair`]'s passes 2 and 3 for a bounded cost (the tempered criterion of
    /// t-AdaBoost): the pool of the generic scan, computing exact costs for few candidates
    /// (docs/explanation/weak-learners.md#weak-learners-bounded-scan).
    ///
    /// 1. Every candidate gets an upper bound of its gain from the curvature of `L`
    ///    ([`Curvature::gain_bound`]: a few products and two divisions, no table) — or, when an
    ///    earlier feature's scan has raised the node's floor, only whether that bound may reach
    ///    the cut ([`Curvature::may_reach`], no division).
    /// 2. Without a floor, the [`SEED_BLOCK`] candidates around the largest finite bound get
    ///    their gain intervals ([`GainBounds::interval`]); the largest lower end raises the
    ///    floor, a lower bound of the node's best gain `G`.
    /// 3. The candidates whose bound reaches `floor − tol − margin` get their intervals (the
    ///    others cannot be within `tol` of `G`), and the floor rises again.
    /// 4. Those whose interval reaches `floor − tol − margin` get their exact gains (the generic
    ///    scan's arithmetic), offered in scan order to the [`Pool`].
    ///
    /// The bounds and intervals contain the generic scan's gains, so every candidate within
    /// `tol` of the feature's best reaches step 4 and the pool is the generic scan's; with a
    /// node's shared `floor`, candidates of a feature that cannot tie with another feature's
    /// are left out too.
    #[allow(clippy::too_many_arguments)]
    fn pool_bounded<C: PairCost>(
        &self,
        cost: &C,
        rb: &RiskBounds,
        f: usize,
        bins: &[usize],
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        (t0, t1): (f64, f64),
        floor: Option<&Floor>,
    ) -> Vec<Candidate> {
        let (tol, parent, min_w) = (self.tol, self.parent_cost, self.min_w);
        let forbid = self.pure == PureLeaves::Forbid;
        let margin = 1e-10 * (parent.abs() + t0 + t1);
        let bounds = GainBounds { rb, t0, t1, tol, parent, min_w, forbid, margin };
        let exact = ExactGain { cost, t0, t1, tol, parent, min_w, forbid };
        let curvature = Curvature::of_node(rb, t0, t1);
        let (m0, m1) = miss.unwrap_or((0.0, 0.0));
        let ns = if miss.is_some() { 2 } else { 1 };
        let n = acc.len() * ns;
        let local = Floor::new();
        let floor = floor.unwrap_or(&local);
        let cut = |floor: &Floor| floor.get() - tol - margin;
        let left = |j: usize| {
            let (x0, x1) = if j % ns == 1 { (m0, m1) } else { (0.0, 0.0) };
            (acc[j / ns].0 + x0, acc[j / ns].1 + x1)
        };
        let mut tops = SCAN_TOPS.take();
        // Every one of the `n` values is written by the first step.
        resize_stale(&mut tops, n, 0.0);
        let known = floor.get();
        // Step 1; against the floor when an earlier feature's scan has raised it (flags, no
        // divisions).
        let need = (known > f64::NEG_INFINITY).then(|| (cut(floor) - margin) * (t0 + t1));
        simd::curvature(&bounds, &curvature, acc, miss, need, &mut tops);
        let (mut lefts, mut idx, mut los, mut his) =
            (SCAN_LEFT.take(), SCAN_IDX.take(), SCAN_GAINS.take(), SCAN_HI.take());
        lefts.clear();
        los.clear();
        his.clear();
        // The seeds' indices, then the gathered ones: every value kept is written below.
        resize_stale(&mut idx, SEED_BLOCK + n, 0);
        // Step 2, unless an earlier feature's scan has raised the node's floor: the seed, the
        // candidates around the largest finite bound (the first ones when none is finite).
        if known == f64::NEG_INFINITY {
            let finite_max = block_max_finite(&tops);
            let top = tops.iter().position(|&t| t == finite_max).unwrap_or(0);
            let s0 = top.saturating_sub(SEED_BLOCK / 2).min(n.saturating_sub(SEED_BLOCK));
            let s1 = (s0 + SEED_BLOCK).min(n);
            lefts.extend((s0..s1).map(left));
            for (slot, j) in idx.iter_mut().zip(s0..s1) {
                *slot = j;
            }
            los.resize(lefts.len(), 0.0);
            his.resize(lefts.len(), 0.0);
            simd::gain_intervals(&bounds, &lefts, None, &mut los, &mut his);
            floor.raise(block_max(&los));
            tops[s0..s1].fill(f64::NEG_INFINITY);
        }
        // Step 3: every other candidate whose bound reaches the cut, gathered branch-free (each
        // index is written, and the cursor advances past the ones kept).
        let c = cut(floor);
        let seeded = lefts.len();
        let mut kept = 0;
        if n > 0 {
            // `kept ≤ j < n`, stated by the clamp: no bounds checks.
            let slots = &mut idx[seeded..seeded + n];
            for (j, &t) in tops.iter().enumerate() {
                slots[kept.min(n - 1)] = j;
                kept += usize::from(t >= c);
            }
        }
        idx.truncate(seeded + kept);
        lefts.extend(idx[seeded..].iter().map(|&j| left(j)));
        los.resize(lefts.len(), 0.0);
        his.resize(lefts.len(), 0.0);
        simd::gain_intervals(&bounds, &lefts[seeded..], None, &mut los[seeded..], &mut his[seeded..]);
        floor.raise(block_max(&los[seeded..]));
        // Step 4: the exact gains of the candidates whose intervals reach the cut (NaN:
        // inadmissible, by the same test as the exact gain's).
        let c = cut(floor);
        let mut found: Vec<(usize, f64)> = Vec::new();
        for (i, (&lo, &hi)) in los.iter().zip(&*his).enumerate() {
            if hi >= c && !lo.is_nan() {
                found.push((idx[i], exact.gain(lefts[i].0, lefts[i].1)));
            }
        }
        SCAN_TOPS.set(tops);
        SCAN_LEFT.set(lefts);
        SCAN_IDX.set(idx);
        SCAN_GAINS.set(los);
        SCAN_HI.set(his);
        found.sort_unstable_by_key(|&(j, _)| j);
        let mut pool = Pool::new(self.ties, tol);
        for (j, g) in found {
            let kind = CandKind::Numeric { bin: bins[j / ns], missing_left: j % ns == 1 };
            pool.offer(g, &|| Candidate { gain: g, feature: f, kind: kind.clone() });
        }
        pool.into_vec()
    }

    /// Best split over all features of a node with histogram `hist` and sums `total`.
    pub(in crate::tree) fn best_split(
        &self,
        hist: &[f64],
        total: &[f64],
        n_rows: usize,
        cap: Option<usize>,
        (seed, serial): (u64, usize),
    ) -> Option<Candidate> {
        let bm = self.binned;
        let w = self.width;
        let slice = |f: usize| &hist[bm.offsets[f] * w..bm.offsets[f + 1] * w];
        let numeric = |f: usize| matches!(self.mapper.features[f], FeatureBins::Numeric { .. });
        // Candidate cap: a seeded random subset of the (feature, threshold) pairs.
        let mut allowed: Option<Vec<Vec<u32>>> = None;
        if let Some(cap) = cap {
            let usable = |f: usize| self.limits.features.is_none_or(|m| m[f]);
            let counts: Vec<usize> =
                (0..bm.n_features).map(|f| if usable(f) { n_candidates(slice(f), w, numeric(f)) } else { 0 }).collect();
            let total_c: usize = counts.iter().sum();
            if total_c > cap {
                let mut rng = ChaCha8Rng::seed_from_u64(node_seed(seed, serial));
                let mut picked = sample(&mut rng, total_c, cap).into_vec();
                picked.sort_unstable();
                let mut per = vec![Vec::new(); bm.n_features];
                let mut f = 0;
                let mut start = 0;
                for p in picked {
                    while p >= start + counts[f] {
                        start += counts[f];
                        f += 1;
                    }
                    per[f].push((p - start) as u32);
                }
                allowed = Some(per);
            }
        }
        let floor = Floor::new();
        let eval = |f: usize| {
            self.best_for_feature(f, slice(f), total, allowed.as_ref().map(|a| a[f].as_slice()), Some(&floor))
        };
        let found: Vec<Vec<Candidate>> = if n_rows * bm.n_features >= PARALLEL_CELLS {
            (0..bm.n_features).into_par_iter().map(eval).collect()
        } else {
            (0..bm.n_features).map(eval).collect()
        };
        // docs/explanation/weak-learners.md#weak-learners-ties: the candidates within the tolerance
        // of the best gain tie; the first in feature then scan order wins, or (random) a seeded
        // uniform draw among them.
        let mut pool = Pool::new(self.ties, self.tol);
        for c in found.into_iter().flatten() {
            pool.offer(c.gain, &|| c.clone());
        }
        let mut pool = pool.into_vec();
        let i = match self.ties {
            SplitTies::Lowest => 0,
            SplitTies::Random => tie_winner(seed, serial, pool.len()),
        };
        (i < pool.len()).then(|| pool.swap_remove(i))
    }
}
