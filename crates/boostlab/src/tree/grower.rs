//! Best-first tree growth on histograms (SPEC §2.2).
//!
//! Each leaf keeps the histogram of its rows' statistics: for every (feature, bin) the sum of the
//! fixed-width statistics block, in `f64`. Splitting a leaf builds the histogram of the smaller
//! child from its rows and gets the sibling's by subtraction from the parent's. Histograms are built
//! and scanned in parallel over features; every sum over rows runs in row order inside one feature,
//! so results are bit-identical whatever the number of threads.

use rand::seq::index::sample;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::tree::{Node, SplitRule, Tree};
use super::{Criterion, GrowOrder, LeafRule, PureLeaves, TreeParams};
use crate::data::{BinData, BinMapper, BinnedMatrix, FeatureBins};
use crate::error::{Error, Result};

/// Work below this many (row × feature) cells runs on one thread.
const PARALLEL_CELLS: usize = 1 << 15;

/// Everything the grower needs besides the statistics.
#[derive(Debug, Clone, Copy)]
pub struct GrowSpec<'a> {
    /// Tree parameters (limits, order, pure-leaf policy, candidate cap).
    pub params: &'a TreeParams,
    /// The split criterion (already resolved from the booster's default).
    pub criterion: Criterion,
    /// How leaves turn statistics into values.
    pub leaf_rule: LeafRule,
    /// Seed of the candidate subsampling (`max_split_candidates`).
    pub seed: u64,
}

/// A grown tree and the leaf of every training row.
#[derive(Debug, Clone)]
pub struct Grown {
    /// The tree, with leaf values from the leaf rule.
    pub tree: Tree,
    /// Leaf index of each training row.
    pub leaf_of_row: Vec<u32>,
    /// Summed statistics of each leaf (`n_leaves × width`).
    pub leaf_stats: Vec<f64>,
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
    fn goes_left(&self, bin: usize, missing_bin: usize) -> bool {
        match self {
            CandKind::Numeric {
                bin: t,
                missing_left,
            } => {
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

#[inline]
fn admissible(l: &[f64], r: &[f64], min_w: f64, pure: PureLeaves) -> bool {
    let wl: f64 = l.iter().sum();
    let wr: f64 = r.iter().sum();
    if !(wl > 0.0 && wr > 0.0 && wl >= min_w && wr >= min_w) {
        return false;
    }
    match pure {
        PureLeaves::Allow => true,
        PureLeaves::Forbid => l
            .chunks_exact(2)
            .chain(r.chunks_exact(2))
            .all(|p| p[0] > 0.0 && p[1] > 0.0),
    }
}

/// Context of the split search at one node.
struct SearchCtx<'a> {
    criterion: Criterion,
    width: usize,
    min_w: f64,
    pure: PureLeaves,
    parent_cost: f64,
    tol: f64,
    binned: &'a BinnedMatrix,
    mapper: &'a BinMapper,
}

/// Number of (feature, threshold) candidates of a feature at a node.
fn n_candidates(hist_f: &[f64], width: usize, numeric: bool) -> usize {
    let nb = hist_f.len() / width;
    let nonempty = |b: usize| hist_f[b * width..(b + 1) * width].iter().sum::<f64>() > 0.0;
    let value_bins = if numeric { nb - 1 } else { nb };
    (0..value_bins)
        .filter(|&b| nonempty(b))
        .count()
        .saturating_sub(1)
}

impl SearchCtx<'_> {
    /// Best split of feature `f` from its histogram slice, among the allowed candidate ordinals.
    fn best_for_feature(
        &self,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
    ) -> Option<Candidate> {
        let w = self.width;
        let nb = hist_f.len() / w;
        let miss = &hist_f[(nb - 1) * w..];
        let mut best: Option<Candidate> = None;
        let mut left = vec![0.0; w];
        let mut right = vec![0.0; w];
        let consider = |gain: f64, kind: &dyn Fn() -> CandKind, best: &mut Option<Candidate>| {
            if best.as_ref().is_none_or(|b| gain > b.gain + self.tol) {
                *best = Some(Candidate {
                    gain,
                    feature: f,
                    kind: kind(),
                });
            }
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
                            right[k] = total[k] - left[k];
                        }
                        if !admissible(&left, &right, self.min_w, self.pure) {
                            continue;
                        }
                        let gain = self.parent_cost
                            - block_cost(&self.criterion, &left)
                            - block_cost(&self.criterion, &right);
                        consider(
                            gain,
                            &|| CandKind::Numeric {
                                bin: b,
                                missing_left,
                            },
                            &mut best,
                        );
                    }
                }
            }
            FeatureBins::Categorical { .. } => {
                // SPEC §2.2: sort categories (the missing bin is one more category) by the weighted
                // fraction of positives; the best partition is a prefix of that order.
                let mut cats: Vec<(f64, usize)> = (0..nb)
                    .filter(|&b| nonempty(b))
                    .map(|b| {
                        let s = &hist_f[b * w..(b + 1) * w];
                        let pos: f64 = s.iter().step_by(2).sum();
                        (pos / s.iter().sum::<f64>(), b)
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
                        right[k] = total[k] - left[k];
                    }
                    if !admissible(&left, &right, self.min_w, self.pure) {
                        continue;
                    }
                    let gain = self.parent_cost
                        - block_cost(&self.criterion, &left)
                        - block_cost(&self.criterion, &right);
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
        best
    }

    /// Best split over all features of a node with histogram `hist` and sums `total`.
    fn best_split(
        &self,
        hist: &[f64],
        total: &[f64],
        n_rows: usize,
        cap: Option<(usize, u64)>,
    ) -> Option<Candidate> {
        let bm = self.binned;
        let w = self.width;
        let slice = |f: usize| &hist[bm.offsets[f] * w..bm.offsets[f + 1] * w];
        let numeric = |f: usize| matches!(self.mapper.features[f], FeatureBins::Numeric { .. });
        // Candidate cap: a seeded random subset of the (feature, threshold) pairs.
        let mut allowed: Option<Vec<Vec<u32>>> = None;
        if let Some((cap, seed)) = cap {
            let counts: Vec<usize> = (0..bm.n_features)
                .map(|f| n_candidates(slice(f), w, numeric(f)))
                .collect();
            let total_c: usize = counts.iter().sum();
            if total_c > cap {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
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
        let eval = |f: usize| {
            self.best_for_feature(
                f,
                slice(f),
                total,
                allowed.as_ref().map(|a| a[f].as_slice()),
            )
        };
        let found: Vec<Option<Candidate>> = if n_rows * bm.n_features >= PARALLEL_CELLS {
            (0..bm.n_features).into_par_iter().map(eval).collect()
        } else {
            (0..bm.n_features).map(eval).collect()
        };
        // Ties go to the lowest feature index (SPEC §2.1).
        let mut best: Option<Candidate> = None;
        for c in found.into_iter().flatten() {
            if best.as_ref().is_none_or(|b| c.gain > b.gain + self.tol) {
                best = Some(c);
            }
        }
        best
    }
}

/// Adds the statistics of `rows` (or of every row, with `ordered` = all statistics) into the
/// histogram of one feature.
#[inline]
fn accumulate<B: Copy + Into<usize>>(
    col: &[B],
    rows: Option<&[u32]>,
    ordered: &[f64],
    width: usize,
    h: &mut [f64],
) {
    match (rows, width) {
        (None, 2) => {
            for (&b, s) in col.iter().zip(ordered.chunks_exact(2)) {
                let b = b.into() * 2;
                h[b] += s[0];
                h[b + 1] += s[1];
            }
        }
        (Some(rows), 2) => {
            for (&r, s) in rows.iter().zip(ordered.chunks_exact(2)) {
                let b = col[r as usize].into() * 2;
                h[b] += s[0];
                h[b + 1] += s[1];
            }
        }
        (None, w) => {
            for (&b, s) in col.iter().zip(ordered.chunks_exact(w)) {
                let b = b.into() * w;
                for (x, y) in h[b..b + w].iter_mut().zip(s) {
                    *x += y;
                }
            }
        }
        (Some(rows), w) => {
            for (&r, s) in rows.iter().zip(ordered.chunks_exact(w)) {
                let b = col[r as usize].into() * w;
                for (x, y) in h[b..b + w].iter_mut().zip(s) {
                    *x += y;
                }
            }
        }
    }
}

/// Builds the histogram of `rows` (all rows when `None`); `ordered` holds their statistics in the
/// same order.
pub(crate) fn build_histogram(
    bm: &BinnedMatrix,
    rows: Option<&[u32]>,
    ordered: &[f64],
    width: usize,
    hist: &mut [f64],
) {
    let n = bm.n_rows;
    let mut slices: Vec<&mut [f64]> = Vec::with_capacity(bm.n_features);
    let mut rest = hist;
    for f in 0..bm.n_features {
        let (a, b) = rest.split_at_mut(bm.n_bins(f) * width);
        slices.push(a);
        rest = b;
    }
    let one = |(f, h): (usize, &mut [f64])| {
        h.fill(0.0);
        match &bm.data {
            BinData::U8(v) => accumulate(&v[f * n..(f + 1) * n], rows, ordered, width, h),
            BinData::U16(v) => accumulate(&v[f * n..(f + 1) * n], rows, ordered, width, h),
        }
    };
    let n_node = rows.map_or(n, <[u32]>::len);
    if n_node * bm.n_features >= PARALLEL_CELLS {
        slices.into_par_iter().enumerate().for_each(one);
    } else {
        slices.into_iter().enumerate().for_each(one);
    }
}

struct Leaf {
    node: usize,
    start: usize,
    end: usize,
    depth: usize,
    hist: Vec<f64>,
    sum: Vec<f64>,
    best: Option<Candidate>,
    serial: usize,
}

/// Grows one tree on the statistics `stats` (`n × width`, row-major).
pub fn grow(
    bm: &BinnedMatrix,
    mapper: &BinMapper,
    stats: &[f64],
    width: usize,
    spec: &GrowSpec<'_>,
) -> Result<Grown> {
    let n = bm.n_rows;
    if width == 0 || width % 2 != 0 || stats.len() != n * width {
        return Err(Error::InvalidData(format!(
            "statistics of length {} for {n} rows of width {width}",
            stats.len()
        )));
    }
    if let Some(i) = stats.iter().position(|s| !(s.is_finite() && *s >= 0.0)) {
        return Err(Error::Numerical(format!(
            "statistic {} of row {} is {}",
            i % width,
            i / width,
            stats[i]
        )));
    }
    let p = spec.params;
    let max_leaves = p.leaf_limit();
    let cap = p.max_split_candidates;
    let total_bins = bm.total_bins();
    let sum_of = |hist: &[f64]| -> Vec<f64> {
        let mut s = vec![0.0; width];
        for b in 0..bm.n_bins(0) {
            for k in 0..width {
                s[k] += hist[b * width + k];
            }
        }
        s
    };
    let search = |hist: &[f64],
                  sum: &[f64],
                  rows: usize,
                  depth: usize,
                  serial: usize|
     -> Option<Candidate> {
        if p.max_depth.is_some_and(|d| depth >= d) || rows < 2 {
            return None;
        }
        let parent_cost = block_cost(&spec.criterion, sum);
        let ctx = SearchCtx {
            criterion: spec.criterion,
            width,
            min_w: p.min_leaf_weight,
            pure: p.pure_leaves,
            parent_cost,
            tol: 1e-12 * sum.iter().sum::<f64>(),
            binned: bm,
            mapper,
        };
        ctx.best_split(
            hist,
            sum,
            rows,
            cap.map(|c| {
                (
                    c,
                    spec.seed ^ (serial as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                )
            }),
        )
    };

    let mut index: Vec<u32> = (0..n as u32).collect();
    let mut scratch: Vec<u32> = Vec::with_capacity(n);
    let mut root_hist = vec![0.0; total_bins * width];
    build_histogram(bm, None, stats, width, &mut root_hist);
    let root_sum = sum_of(&root_hist);
    let root_best = search(&root_hist, &root_sum, n, 0, 0);
    let mut nodes = vec![Node::Leaf { leaf: 0 }];
    let mut leaves = vec![Leaf {
        node: 0,
        start: 0,
        end: n,
        depth: 0,
        hist: root_hist,
        sum: root_sum,
        best: root_best,
        serial: 0,
    }];
    let mut serial = 0usize;
    let mut ordered: Vec<f64> = Vec::new();

    while leaves.len() < max_leaves {
        // Pick the next leaf among those with an admissible split (SPEC §2.2 orders).
        let mut pick: Option<usize> = None;
        for (i, l) in leaves.iter().enumerate() {
            let Some(c) = &l.best else { continue };
            let better = match pick.map(|j| &leaves[j]) {
                None => true,
                Some(q) => match p.grow_order {
                    GrowOrder::Weight => l.sum.iter().sum::<f64>() > q.sum.iter().sum::<f64>(),
                    // Ties to the most recently created leaf, as the authors' code.
                    GrowOrder::Count => {
                        let (a, b) = (l.end - l.start, q.end - q.start);
                        a > b || (a == b && l.serial > q.serial)
                    }
                    GrowOrder::Gain => {
                        c.gain > q.best.as_ref().map_or(f64::NEG_INFINITY, |b| b.gain)
                    }
                },
            };
            if better {
                pick = Some(i);
            }
        }
        let Some(pi) = pick else { break };
        let parent = leaves.swap_remove(pi);
        let Some(cand) = parent.best.clone() else {
            break;
        };
        let f = cand.feature;
        let missing_bin = bm.n_bins(f) - 1;
        // Stable partition of the parent's rows.
        scratch.clear();
        let mut w = parent.start;
        for k in parent.start..parent.end {
            let r = index[k];
            if cand.kind.goes_left(bm.bin(r as usize, f), missing_bin) {
                index[w] = r;
                w += 1;
            } else {
                scratch.push(r);
            }
        }
        index[w..parent.end].copy_from_slice(&scratch);
        let (ls, le, rs, re) = (parent.start, w, w, parent.end);
        // Histogram of the smaller child; the sibling's by subtraction. After the last split only
        // the children's sums are needed.
        let last_split = leaves.len() + 2 >= max_leaves;
        let (lh, rh) = if last_split {
            (Vec::new(), Vec::new())
        } else {
            let small_left = le - ls <= re - rs;
            let (ss, se) = if small_left { (ls, le) } else { (rs, re) };
            let rows = &index[ss..se];
            ordered.clear();
            for &r in rows {
                ordered.extend_from_slice(&stats[r as usize * width..(r as usize + 1) * width]);
            }
            let mut small = vec![0.0; total_bins * width];
            build_histogram(bm, Some(rows), &ordered, width, &mut small);
            let mut big = parent.hist;
            for (b, s) in big.iter_mut().zip(&small) {
                *b -= s;
                if *b < 0.0 {
                    *b = 0.0; // rounding of the subtraction
                }
            }
            if small_left {
                (small, big)
            } else {
                (big, small)
            }
        };
        let rule = match &cand.kind {
            CandKind::Numeric { bin, missing_left } => {
                let FeatureBins::Numeric { thresholds } = &mapper.features[f] else {
                    return Err(Error::InvalidData("feature kind mismatch".into()));
                };
                SplitRule::Numeric {
                    threshold: thresholds[*bin],
                    bin_threshold: *bin as u32,
                    missing_left: *missing_left,
                }
            }
            CandKind::Categorical { left } => SplitRule::Categorical {
                left: (0..missing_bin)
                    .filter(|&b| left[b])
                    .map(|b| b as u32)
                    .collect(),
                missing_left: left[missing_bin],
            },
        };
        let li = nodes.len();
        nodes[parent.node] = Node::Split {
            feature: f as u32,
            rule,
            left: li as u32,
            right: li as u32 + 1,
        };
        nodes.push(Node::Leaf { leaf: 0 });
        nodes.push(Node::Leaf { leaf: 0 });
        for (node, start, end, hist) in [(li, ls, le, lh), (li + 1, rs, re, rh)] {
            serial += 1;
            let (sum, best) = if last_split {
                let mut s = vec![0.0; width];
                for &r in &index[start..end] {
                    for (a, b) in s
                        .iter_mut()
                        .zip(&stats[r as usize * width..(r as usize + 1) * width])
                    {
                        *a += b;
                    }
                }
                (s, None)
            } else {
                let sum = sum_of(&hist);
                let best = search(&hist, &sum, end - start, parent.depth + 1, serial);
                (sum, best)
            };
            leaves.push(Leaf {
                node,
                start,
                end,
                depth: parent.depth + 1,
                hist,
                sum,
                best,
                serial,
            });
        }
    }

    // Number the leaves in node order and compute their values.
    leaves.sort_by_key(|l| l.node);
    let k = width / 2;
    let mut leaf_values = Vec::with_capacity(leaves.len() * k);
    let mut leaf_stats = Vec::with_capacity(leaves.len() * width);
    let mut leaf_of_row = vec![0u32; n];
    for (li, l) in leaves.iter().enumerate() {
        nodes[l.node] = Node::Leaf { leaf: li as u32 };
        for pair in l.sum.chunks_exact(2) {
            leaf_values.push(spec.leaf_rule.value(pair[0], pair[1]));
        }
        leaf_stats.extend_from_slice(&l.sum);
        for &r in &index[l.start..l.end] {
            leaf_of_row[r as usize] = li as u32;
        }
    }
    Ok(Grown {
        tree: Tree {
            nodes,
            n_outputs: k,
            leaf_values,
        },
        leaf_of_row,
        leaf_stats,
    })
}
