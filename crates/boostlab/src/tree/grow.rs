//! Best-first tree growth on histograms (docs/explanation/weak-learners.md#weak-learners-criteria).
//!
//! Each leaf keeps the histogram of its rows' statistics: for every (feature, bin) the sum of the
//! fixed-width statistics block, in `f64`. Splitting a leaf builds the histogram of the smaller
//! child from its rows and gets the sibling's by subtraction from the parent's. Histograms are built
//! and scanned in parallel over features; every sum over rows runs in row order inside one feature,
//! so results are bit-identical whatever the number of threads.

use rayon::prelude::*;

use super::constraints::{child_bounds, Constraints};
use super::histogram::{build_histogram, gather_statistics};
use super::partition::{leaves_of_rows, par_stable_partition, LastSplit};
use super::pool::{pooled_hist_for_overwrite, recycle_hist};
use super::split::{block_cost, CandKind, Candidate, NodeLimits, RiskBounds, SearchCtx};
use super::tree::{Node, SplitRule, Tree};
use super::{Criterion, GrowOrder, LeafRule, TreeParams};
use crate::collective::{Collective, Local};
use crate::data::{BinData, BinMapper, BinnedMatrix, FeatureBins};
use crate::error::{Error, Result};
use crate::util::cancel::Cancel;
use crate::util::par::ROW_CHUNK;
use crate::util::traffic::{self, Pass};

/// Histogram values from which the smaller child's subtraction runs in parallel.
const PARALLEL_HIST: usize = 1 << 16;

/// Everything the grower needs besides the statistics.
#[derive(Debug, Clone, Copy)]
pub struct GrowSpec<'a> {
    /// Tree parameters (limits, order, pure-leaf policy, candidate cap).
    pub params: &'a TreeParams,
    /// The split criterion (already resolved from the booster's default).
    pub criterion: Criterion,
    /// How leaves turn statistics into values.
    pub leaf_rule: LeafRule,
    /// Seed of the candidate subsampling (`max_split_candidates`) and of random tie-breaking
    /// (`split_ties = random`).
    pub seed: u64,
    /// The rows' sample weights (frequency weights), or `None`: the `count` growth
    /// order counts a leaf's examples as the sum of their sample weights (the number of repeated
    /// rows). The learner never uses them otherwise.
    pub row_weight: Option<&'a [f64]>,
    /// Monotone and interaction constraints (docs/how-to/constraints.md), or `None`.
    pub constraints: Option<&'a Constraints>,
}

/// A grown tree and the leaf of every training row.
#[derive(Debug, Clone)]
pub struct Grown {
    /// The tree, with leaf values from the leaf rule.
    pub tree: Tree,
    /// Leaf index of each training row.
    pub leaf_of_row: Vec<u32>,
    /// Summed statistics of each leaf: a `(W+, W−)` pair per output (`n_leaves × 2k`).
    pub leaf_stats: Vec<f64>,
}

pub(super) struct Leaf {
    pub(super) node: usize,
    pub(super) start: usize,
    pub(super) end: usize,
    depth: usize,
    pub(super) hist: Vec<f64>,
    pub(super) sum: Vec<f64>,
    pub(super) best: Option<Candidate>,
    pub(super) serial: usize,
    /// The number of examples at the leaf (the `count` order): rows, or their sample weights' sum.
    pub(super) count: f64,
    /// Bounds `[lo, hi]` of each output's leaf value (monotone constraints; else empty).
    pub(super) bounds: Vec<(f64, f64)>,
    /// The features split on along the path from the root (interaction constraints; else empty).
    pub(super) used: Vec<usize>,
}

/// The number of examples of the rows `index[start..end]`: their number, or the sum of their
/// sample weights (frequency weights).
fn leaf_count(index: &[u32], row_weight: Option<&[f64]>, start: usize, end: usize) -> f64 {
    match row_weight {
        None => (end - start) as f64,
        Some(w) => index[start..end].iter().map(|&r| w[r as usize]).sum(),
    }
}

/// Refuses a node whose statistics' sums overflow: a total weight `Σ (W+ + W−)` or a criterion
/// cost that is not finite. Every sum over rows and every cost the split search computes is
/// bounded by the node's (its candidates' sides are parts of it), so a node that passes gives
/// finite gains and leaf values; one that does not would give NaN gains (no split, silently) or
/// infinite bounds. The check reads the node's summed block only (distributed: the sums over
/// every rank, so every rank refuses alike).
fn check_node_sums(node: usize, rows: Option<usize>, sum: &[f64], criterion: &Criterion) -> Result<()> {
    let w: f64 = sum.iter().sum();
    if w.is_finite() && block_cost(criterion, sum).is_finite() {
        Ok(())
    } else {
        Err(overflowing_node(node, rows, sum, criterion))
    }
}

/// The error of a node whose sums overflow: the node, its rows (when known), its total weight
/// and criterion cost, and what to do.
fn overflowing_node(node: usize, rows: Option<usize>, sum: &[f64], criterion: &Criterion) -> Error {
    let rows = rows.map_or(String::new(), |r| format!(" ({r} rows)"));
    let w: f64 = sum.iter().sum();
    Error::Numerical(format!(
        "the statistics of node {node}{rows} overflow: their total weight is {w:e} and the criterion's cost {:e}; \
         scale the sample weights (or the statistics) down",
        block_cost(criterion, sum)
    ))
}

/// Grows one tree on the signed statistics `stats` (`n × k`, row-major; see
/// [`crate::boost::Booster::statistics`]): `+w` adds `w` to the output's `W+`, `−w` to its `W−`.
pub fn grow(bm: &BinnedMatrix, mapper: &BinMapper, stats: &[f64], k: usize, spec: &GrowSpec<'_>) -> Result<Grown> {
    grow_cancellable(bm, mapper, stats, k, spec, None)
}

/// [`grow`] that returns [`Error::Cancelled`] once `cancel` is set, checked before each node's
/// split (between nodes).
pub fn grow_cancellable(
    bm: &BinnedMatrix,
    mapper: &BinMapper,
    stats: &[f64],
    k: usize,
    spec: &GrowSpec<'_>,
    cancel: Option<&Cancel>,
) -> Result<Grown> {
    grow_distributed(bm, mapper, stats, k, spec, cancel, &Local)
}

/// Sums a histogram and a few extra values (row counts) over the ranks in one call; returns the
/// extras' sums.
fn reduce_hist(coll: &dyn Collective, hist: &mut Vec<f64>, extra: &[f64]) -> Result<Vec<f64>> {
    let len = hist.len();
    hist.extend_from_slice(extra);
    coll.allreduce_sum(hist)?;
    Ok(hist.split_off(len))
}

/// [`grow_cancellable`] on this rank's rows of data spread over the ranks of `coll`:
/// the same tree on every rank, the one the single machine grows on all the rows. Each histogram
/// the learner builds (the root's, then the smaller child's of each split but the last) is summed
/// over the ranks with the children's row counts in one `allreduce_sum`; the last split needs none
/// (its children's sums come from the parent's histogram), and the tree's covers take one more.
/// A tree of `L` leaves costs `L − 1` calls of `total_bins · 2k + 4` values (the root's `+ 1`)
/// and one of `2L − 1`. On one rank ([`Local`]) nothing is reduced and the tree is bit-identical
/// to [`grow_cancellable`]'s.
pub fn grow_distributed(
    bm: &BinnedMatrix,
    mapper: &BinMapper,
    stats: &[f64],
    k: usize,
    spec: &GrowSpec<'_>,
    cancel: Option<&Cancel>,
    coll: &dyn Collective,
) -> Result<Grown> {
    let mut g = grow_ranks(bm, mapper, stats, k, spec, cancel, coll, &mut RowBuffers::default())?;
    if coll.size() > 1 {
        coll.allreduce_sum(&mut g.tree.covers)?;
    }
    Ok(g)
}

/// The grower's per-row buffers, kept by the driver from one round to the next: the
/// row index, the partition's scratch, the gathered statistics and the leaf of every row (given
/// back with [`RowBuffers::recycle_leaves`] once the booster's step has read it).
///
/// Fresh n-row buffers every round cost nothing where the allocator keeps freed memory, but a
/// Dask worker starts with `MALLOC_TRIM_THRESHOLD_` set, which turns off glibc's adaptive mmap
/// threshold: every buffer of 128 KiB or more was then a new mapping, page-faulted in and
/// unmapped at the end of the tree (1,700 page faults a round and a fifth of a rank's CPU at
/// 500,000 rows).
#[derive(Default)]
pub(crate) struct RowBuffers {
    pub(super) index: Vec<u32>,
    pub(super) scratch: Vec<u32>,
    pub(super) ordered: Vec<f64>,
    pub(super) leaves: Vec<u32>,
}

impl RowBuffers {
    /// Gives back a [`Grown::leaf_of_row`] for the next tree to fill.
    pub(crate) fn recycle_leaves(&mut self, leaves: Vec<u32>) {
        self.leaves = leaves;
    }
}

/// [`grow_distributed`] with the tree's covers left as this rank's own: the
/// training never reads them, so the driver sums every tree's covers over the ranks in one call
/// at the end of the fit instead of one call per round. `bufs`: per-row buffers reused across
/// calls (their contents are never read).
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow_ranks(
    bm: &BinnedMatrix,
    mapper: &BinMapper,
    stats: &[f64],
    k: usize,
    spec: &GrowSpec<'_>,
    cancel: Option<&Cancel>,
    coll: &dyn Collective,
    bufs: &mut RowBuffers,
) -> Result<Grown> {
    let dist = coll.size() > 1;
    let n = bm.n_rows;
    if k == 0 || stats.len() != n * k {
        return Err(Error::InvalidData(format!("statistics of length {} for {n} rows of {k} outputs", stats.len())));
    }
    let width = 2 * k;
    let p = spec.params;
    let max_leaves = p.leaf_limit();
    let cap = p.max_split_candidates;
    let total_bins = bm.total_bins();
    let sum_of = |hist: &[f64]| -> Vec<f64> {
        let mut s = vec![0.0; width];
        for b in 0..bm.n_bins(0) {
            for c in 0..width {
                s[c] += hist[b * width + c];
            }
        }
        s
    };
    // Bounds of the tempered cost, to skip the exact cost where they decide.
    let risk_bounds = match spec.criterion {
        Criterion::Tempered { t } if k == 1 => RiskBounds::for_t(t),
        _ => None,
    };
    let cons = spec.constraints;
    let monotone: &[i8] = cons.map_or(&[], |c| c.monotone.as_slice());
    let search = |hist: &[f64],
                  sum: &[f64],
                  rows: usize,
                  depth: usize,
                  serial: usize,
                  (bounds, used): (&[(f64, f64)], &[usize])|
     -> Option<Candidate> {
        if p.max_depth.is_some_and(|d| depth >= d) || rows < 2 {
            return None;
        }
        let features = cons.and_then(|c| c.allowed(used));
        let limits = NodeLimits { leaf_rule: spec.leaf_rule, monotone, values: bounds, features: features.as_deref() };
        let parent_cost = block_cost(&spec.criterion, sum);
        let ctx = SearchCtx {
            criterion: spec.criterion,
            ties: p.split_ties,
            width,
            min_w: p.min_leaf_weight,
            pure: p.pure_leaves,
            parent_cost,
            tol: 1e-12 * sum.iter().sum::<f64>(),
            binned: bm,
            mapper,
            bounds: risk_bounds.as_deref(),
            limits,
        };
        ctx.best_split(hist, sum, rows, cap, (spec.seed, serial))
    };

    // The row index, built at the first partition (a stump never partitions; empty =
    // the identity, see `leaves_of_rows`).
    let RowBuffers { index, scratch, ordered, leaves: spare_leaves } = bufs;
    index.clear();
    let mut root_hist = pooled_hist_for_overwrite(total_bins * width);
    build_histogram(bm, None, stats, k, &mut root_hist);
    // The rows of every rank.
    let root_rows = if dist { reduce_hist(coll, &mut root_hist, &[n as f64])?[0] as usize } else { n };
    let root_sum = sum_of(&root_hist);
    // Every statistic reaches the root's histogram as |s| on one side (nothing cancels), so a NaN
    // or infinite statistic — on any rank, after the reduction — leaves a total non-finite. That
    // test replaces a pass over the statistics; the rows are scanned only to name the culprit.
    if root_sum.iter().any(|t| !t.is_finite()) {
        traffic::add(Pass::StatisticsCheck, traffic::bytes(stats), 0);
        if let Some(i) = stats.iter().position(|s| !s.is_finite()) {
            return Err(Error::Numerical(format!("statistic {} of row {} is {}", i % k, i / k, stats[i])));
        }
        return Err(overflowing_node(0, Some(root_rows), &root_sum, &spec.criterion));
    }
    check_node_sums(0, Some(root_rows), &root_sum, &spec.criterion)?;
    let root_bounds = if monotone.is_empty() { Vec::new() } else { vec![(f64::NEG_INFINITY, f64::INFINITY); k] };
    let root_best = search(&root_hist, &root_sum, root_rows, 0, 0, (&root_bounds, &[]));
    let mut nodes = vec![Node::Leaf { leaf: 0 }];
    // Each split's criterion decrease, recorded as it is made (0 at leaves).
    let mut gains = vec![0.0];
    let mut leaves = vec![Leaf {
        node: 0,
        start: 0,
        end: n,
        depth: 0,
        hist: root_hist,
        sum: root_sum,
        best: root_best,
        serial: 0,
        count: 0.0,
        bounds: root_bounds,
        used: Vec::new(),
    }];
    let mut serial = 0usize;
    let mut last: Option<LastSplit> = None;

    while leaves.len() < max_leaves {
        crate::util::cancel::check(cancel)?;
        // Pick the next leaf among those with an admissible split (docs/explanation/weak-learners.md#weak-learners-tree orders).
        let mut pick: Option<usize> = None;
        for (i, l) in leaves.iter().enumerate() {
            let Some(c) = &l.best else { continue };
            let better = match pick.map(|j| &leaves[j]) {
                None => true,
                Some(q) => match p.grow_order {
                    GrowOrder::Weight => l.sum.iter().sum::<f64>() > q.sum.iter().sum::<f64>(),
                    // Ties to the most recently created leaf, as the authors' code.
                    GrowOrder::Count => {
                        let (a, b) = (l.count, q.count);
                        a > b || (a == b && l.serial > q.serial)
                    }
                    GrowOrder::Gain => c.gain > q.best.as_ref().map_or(f64::NEG_INFINITY, |b| b.gain),
                },
            };
            if better {
                pick = Some(i);
            }
        }
        let Some(pi) = pick else { break };
        let mut parent = leaves.swap_remove(pi);
        let Some(cand) = parent.best.clone() else {
            break;
        };
        let f = cand.feature;
        let missing_bin = bm.n_bins(f) - 1;
        // A per-bin direction table: no per-row branching on the split's kind.
        let left_of_bin: Vec<bool> = (0..bm.n_bins(f)).map(|b| cand.kind.goes_left(b, missing_bin)).collect();
        // After the last split only the children's sums are needed: they come from the parent's
        // histogram of the split feature, and the rows are not partitioned (their leaves come from
        // walking the finished tree; the children's row ranges stay empty).
        let last_split = leaves.len() + 2 >= max_leaves;
        let (ls, le, rs, re) = if last_split {
            (parent.start, parent.start, parent.start, parent.start)
        } else {
            // Stable partition of the parent's rows.
            if index.is_empty() {
                traffic::add(Pass::Partition, 0, 4 * n);
                index.resize(n, 0);
                index.par_chunks_mut(ROW_CHUNK).enumerate().for_each(|(c, d)| {
                    d.iter_mut().zip(c * ROW_CHUNK..).for_each(|(x, r)| *x = r as u32);
                });
            }
            let part = &mut index[parent.start..parent.end];
            let n_left = match &bm.data {
                BinData::U8(v) => par_stable_partition(&v[f * n..(f + 1) * n], &left_of_bin, part, scratch),
                BinData::U16(v) => par_stable_partition(&v[f * n..(f + 1) * n], &left_of_bin, part, scratch),
            };
            let w = parent.start + n_left;
            (parent.start, w, w, parent.end)
        };
        let mut last_sums = [vec![0.0; width], vec![0.0; width]];
        // The children's rows and counts over every rank (`None` on one machine).
        let mut global: Option<Vec<f64>> = None;
        // Histogram of the smaller child; the sibling's by subtraction.
        let (lh, rh) = if last_split {
            let hf = &parent.hist[bm.offsets[f] * width..bm.offsets[f + 1] * width];
            for (b, cell) in hf.chunks_exact(width).enumerate() {
                for (a, c) in last_sums[usize::from(!left_of_bin[b])].iter_mut().zip(cell) {
                    *a += c;
                }
            }
            recycle_hist(std::mem::take(&mut parent.hist));
            (Vec::new(), Vec::new())
        } else {
            let small_left = if dist {
                // Every rank must build the same child, so the smaller by weight (from
                // the parent's histogram of the split feature, the same on every rank).
                let hf = &parent.hist[bm.offsets[f] * width..bm.offsets[f + 1] * width];
                let mut w = [0.0; 2];
                for (b, cell) in hf.chunks_exact(width).enumerate() {
                    w[usize::from(!left_of_bin[b])] += cell.iter().sum::<f64>();
                }
                w[0] <= w[1]
            } else {
                le - ls <= re - rs
            };
            let (ss, se) = if small_left { (ls, le) } else { (rs, re) };
            let rows = &index[ss..se];
            gather_statistics(stats, k, rows, ordered);
            let mut small = pooled_hist_for_overwrite(total_bins * width);
            build_histogram(bm, Some(rows), ordered, k, &mut small);
            if dist {
                let count = |start, end| {
                    if p.grow_order == GrowOrder::Count {
                        leaf_count(index, spec.row_weight, start, end)
                    } else {
                        0.0
                    }
                };
                let extra = [(le - ls) as f64, (re - rs) as f64, count(ls, le), count(rs, re)];
                global = Some(reduce_hist(coll, &mut small, &extra)?);
            }
            let mut big = parent.hist;
            let subtract = |(big, small): (&mut [f64], &[f64])| {
                for (b, s) in big.iter_mut().zip(small) {
                    // When the whole bin went to the small child, the difference of two sums taken
                    // in different orders leaves a rounding residue: make it an exact zero so that
                    // an empty bin stays empty.
                    let d = *b - s;
                    *b = if d <= *b * 1e-12 { 0.0 } else { d };
                }
            };
            if big.len() >= PARALLEL_HIST {
                // Many outputs' histograms (1.5 MiB and more) on every thread;
                // each value is its own difference, so the split changes no bit.
                big.par_chunks_mut(PARALLEL_HIST / 4).zip(small.par_chunks(PARALLEL_HIST / 4)).for_each(subtract);
            } else {
                subtract((&mut big, &small));
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
                left: (0..missing_bin).filter(|&b| left[b]).map(|b| b as u32).collect(),
                missing_left: left[missing_bin],
            },
        };
        let li = nodes.len();
        nodes[parent.node] = Node::Split { feature: f as u32, rule, left: li as u32, right: li as u32 + 1 };
        nodes.push(Node::Leaf { leaf: 0 });
        nodes.push(Node::Leaf { leaf: 0 });
        // The candidate's gain: parent cost − children's costs (docs/explanation/weak-learners.md#weak-learners-criteria), never negative in
        // the record (a rounding residue of an exact tie).
        gains[parent.node] = cand.gain.max(0.0);
        gains.extend([0.0, 0.0]);
        if last_split {
            // Leaf numbers are fixed below; node numbers for now.
            let (left, right) = (li as u32, li as u32 + 1);
            last = Some(LastSplit { start: parent.start, end: parent.end, feature: f, left_of_bin, left, right });
        }
        // Both children searched at once (`rayon::join`): on small data
        // their scans are short parallel regions, or serial below `PARALLEL_CELLS`, and the
        // second thread used to idle through each; every search is a function of its own node,
        // so the results are the same in any order.
        let rows_of = |side: usize, start: usize, end: usize| global.as_ref().map_or(end - start, |g| g[side] as usize);
        let sums = if last_split { last_sums } else { [sum_of(&lh), sum_of(&rh)] };
        // The children's constraints (docs/how-to/constraints.md#how-the-learner-enforces-them):
        // value bounds from the children's own leaf values, the path's features.
        let mut child_limits = if parent.bounds.is_empty() {
            [Vec::new(), Vec::new()]
        } else {
            let values =
                |s: &[f64]| -> Vec<f64> { s.chunks_exact(2).map(|q| spec.leaf_rule.value(q[0], q[1])).collect() };
            child_bounds(&parent.bounds, monotone[f], &values(&sums[0]), &values(&sums[1]))
        };
        let used = if cons.is_some_and(|c| !c.groups.is_empty()) {
            let mut u = parent.used.clone();
            if let Err(at) = u.binary_search(&f) {
                u.insert(at, f);
            }
            u
        } else {
            Vec::new()
        };
        let [sl, sr] = sums;
        let mut searched = if last_split {
            [Some((sl, None)), Some((sr, None))]
        } else {
            let (rl, rr) = (rows_of(0, ls, le), rows_of(1, rs, re));
            check_node_sums(li, Some(rl), &sl, &spec.criterion)?;
            check_node_sums(li + 1, Some(rr), &sr, &spec.criterion)?;
            let depth = parent.depth + 1;
            let (cbl, cbr) = (&child_limits[0], &child_limits[1]);
            let (bl, br) = rayon::join(
                || search(&lh, &sl, rl, depth, serial + 1, (cbl, &used)),
                || search(&rh, &sr, rr, depth, serial + 2, (cbr, &used)),
            );
            [Some((sl, bl)), Some((sr, br))]
        };
        for (side, (node, start, end, hist)) in [(li, ls, le, lh), (li + 1, rs, re, rh)].into_iter().enumerate() {
            serial += 1;
            let (sum, best) = searched[side].take().unwrap_or_default();
            if last_split {
                check_node_sums(node, None, &sum, &spec.criterion)?;
            }
            // Only the `count` order reads the count (a weighted count costs a pass over the rows).
            let count = match &global {
                Some(g) => g[2 + side],
                None if p.grow_order == GrowOrder::Count => leaf_count(index, spec.row_weight, start, end),
                None => 0.0,
            };
            let bounds = std::mem::take(&mut child_limits[side]);
            let used = used.clone();
            leaves.push(Leaf {
                node,
                start,
                end,
                depth: parent.depth + 1,
                hist,
                sum,
                best,
                serial,
                count,
                bounds,
                used,
            });
        }
    }

    // Number the leaves in node order and compute their values.
    leaves.sort_by_key(|l| l.node);
    let mut leaf_values = Vec::with_capacity(leaves.len() * k);
    let mut leaf_stats = Vec::with_capacity(leaves.len() * width);
    let mut leaf_of_node = vec![0u32; nodes.len()];
    let mut ranges = Vec::with_capacity(leaves.len());
    for (li, l) in leaves.iter().enumerate() {
        nodes[l.node] = Node::Leaf { leaf: li as u32 };
        leaf_of_node[l.node] = li as u32;
        ranges.push((l.start, l.end, li as u32));
        for (j, pair) in l.sum.chunks_exact(2).enumerate() {
            let v = spec.leaf_rule.value(pair[0], pair[1]);
            // Within the leaf's bounds: the split search admitted the leaf's value from its
            // candidate sums, and this clamp only absorbs the rounding of sums taken in another
            // order (docs/how-to/constraints.md#how-the-learner-enforces-them).
            leaf_values.push(l.bounds.get(j).map_or(v, |&(lo, hi)| v.max(lo).min(hi)));
        }
        leaf_stats.extend_from_slice(&l.sum);
    }
    for l in &mut leaves {
        recycle_hist(std::mem::take(&mut l.hist));
    }
    if let Some(l) = &mut last {
        (l.left, l.right) = (leaf_of_node[l.left as usize], leaf_of_node[l.right as usize]);
    }
    let leaf_of_row = leaves_of_rows(bm, index, &ranges, last.as_ref(), std::mem::take(spare_leaves));
    let mut tree = Tree::new(nodes, k, leaf_values);
    tree.gains = gains;
    tree.record_covers(&leaf_of_row, spec.row_weight);
    Ok(Grown { tree, leaf_of_row, leaf_stats })
}

#[cfg(test)]
mod tests {
    use super::super::histogram::*;
    use super::super::partition::*;
    use super::super::pool::*;
    use super::super::split::*;
    use super::super::{PureLeaves, SplitTies};
    use super::*;
    use crate::boost::signed_of_pairs;
    use crate::data::{BinMapper, Column, Features, MISSING_CODE};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Random mixed data: numeric features with ties and missing values, one categorical.
    fn random_features(seed: u64, n: usize) -> Features {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut columns = Vec::new();
        for _ in 0..3 {
            columns.push(Column::Numeric(
                (0..n).map(|_| if rng.gen_bool(0.1) { f64::NAN } else { f64::from(rng.gen_range(0..12)) }).collect(),
            ));
        }
        columns.push(Column::Categorical {
            codes: (0..n).map(|_| if rng.gen_bool(0.1) { MISSING_CODE } else { rng.gen_range(0..5) }).collect(),
            levels: (0..5).map(|i| format!("c{i}")).collect(),
        });
        Features { names: (0..4).map(|i| format!("f{i}")).collect(), columns }
    }

    fn random_stats(seed: u64, n: usize, width: usize) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 77);
        let mut s = vec![0.0; n * width];
        for row in s.chunks_exact_mut(2) {
            let w: f64 = if rng.gen_bool(0.05) { 0.0 } else { rng.gen_range(0.0..1.0) };
            if rng.gen_bool(0.5) {
                row[0] = w;
            } else {
                row[1] = w;
            }
        }
        s
    }

    /// naive_* twin of the split search: for every candidate, sums the rows' statistics directly
    /// (no histograms). Returns (gain, feature, rows going left). Ties: `lowest` keeps the first
    /// candidate that beats the best so far by more than the tolerance; `random` lists every
    /// candidate, keeps those within the tolerance of the largest gain and takes the
    /// `tie_winner(seed, serial, n)`-th.
    #[allow(clippy::too_many_arguments)]
    fn naive_best_split(
        bm: &BinnedMatrix,
        mapper: &BinMapper,
        rows: &[u32],
        stats: &[f64],
        width: usize,
        crit: &Criterion,
        pure: PureLeaves,
        ties: SplitTies,
        (seed, serial): (u64, usize),
    ) -> Option<(f64, usize, Vec<u32>)> {
        let sum_rows = |pred: &dyn Fn(u32) -> bool| {
            let mut s = vec![0.0; width];
            for &r in rows.iter().filter(|r| pred(**r)) {
                for k in 0..width {
                    s[k] += stats[r as usize * width + k];
                }
            }
            s
        };
        let total = sum_rows(&|_| true);
        let parent = block_cost(crit, &total);
        let tol = 1e-12 * total.iter().sum::<f64>();
        let mut best: Option<(f64, usize, Vec<u32>)> = None;
        let mut all: Vec<(f64, usize, Vec<u32>)> = Vec::new();
        for f in 0..bm.n_features {
            let nb = bm.n_bins(f);
            let miss = nb - 1;
            let weight_of_bin = |b: usize| sum_rows(&|r| bm.bin(r as usize, f) == b).iter().sum::<f64>();
            let mut partitions: Vec<Vec<bool>> = Vec::new();
            match &mapper.features[f] {
                FeatureBins::Numeric { .. } => {
                    let nonempty: Vec<usize> = (0..miss).filter(|&b| weight_of_bin(b) > 0.0).collect();
                    let has_missing = weight_of_bin(miss) > 0.0;
                    for pair in nonempty.windows(2) {
                        for ml in [false, true] {
                            if ml && !has_missing {
                                break;
                            }
                            partitions.push((0..nb).map(|b| if b == miss { ml } else { b <= pair[0] }).collect());
                        }
                    }
                }
                FeatureBins::Categorical { .. } => {
                    let mut cats: Vec<(f64, usize)> = (0..nb)
                        .filter(|&b| weight_of_bin(b) > 0.0)
                        .map(|b| {
                            let s = sum_rows(&|r| bm.bin(r as usize, f) == b);
                            ((s.iter().step_by(2).sum::<f64>() / s.iter().sum::<f64>() * CAT_FRACTION_GRID).round(), b)
                        })
                        .collect();
                    cats.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                    for k in 1..cats.len() {
                        partitions.push((0..nb).map(|b| cats[..k].iter().any(|c| c.1 == b)).collect());
                    }
                }
            }
            for part in partitions {
                let l = sum_rows(&|r| part[bm.bin(r as usize, f)]);
                let rr = sum_rows(&|r| !part[bm.bin(r as usize, f)]);
                if !admissible(&l, &rr, 0.0, pure, tol) {
                    continue;
                }
                let gain = parent - block_cost(crit, &l) - block_cost(crit, &rr);
                let left_rows: Vec<u32> = rows.iter().copied().filter(|&r| part[bm.bin(r as usize, f)]).collect();
                if best.as_ref().is_none_or(|b| gain > b.0 + tol) {
                    best = Some((gain, f, left_rows.clone()));
                }
                all.push((gain, f, left_rows));
            }
        }
        match ties {
            SplitTies::Lowest => best,
            SplitTies::Random => {
                let max = all.iter().map(|c| c.0).fold(f64::NEG_INFINITY, f64::max);
                all.retain(|c| c.0 >= max - tol);
                let i = tie_winner(seed, serial, all.len());
                (i < all.len()).then(|| all.swap_remove(i))
            }
        }
    }

    /// Rows reaching each node of a grown tree, by walking the tree on bins.
    fn rows_of_node(tree: &Tree, bm: &BinnedMatrix, node: usize) -> Vec<u32> {
        (0..bm.n_rows as u32)
            .filter(|&r| {
                let mut i = 0usize;
                loop {
                    if i == node {
                        return true;
                    }
                    match &tree.nodes[i] {
                        Node::Leaf { .. } => return false,
                        Node::Split { feature, rule, left, right } => {
                            let b = bm.bin(r as usize, *feature as usize);
                            let miss = bm.n_bins(*feature as usize) - 1;
                            let go_left = match rule {
                                SplitRule::Numeric { bin_threshold, missing_left, .. } => {
                                    if b == miss {
                                        *missing_left
                                    } else {
                                        b <= *bin_threshold as usize
                                    }
                                }
                                SplitRule::Categorical { left, missing_left } => {
                                    if b == miss {
                                        *missing_left
                                    } else {
                                        left.contains(&(b as u32))
                                    }
                                }
                            };
                            i = if go_left { *left as usize } else { *right as usize };
                        }
                    }
                }
            })
            .collect()
    }

    fn check_against_naive(seed: u64, n: usize, crit: Criterion, pure: PureLeaves, order: GrowOrder, width: usize) {
        check_against_naive_ties(seed, n, crit, pure, order, width, SplitTies::Lowest);
    }

    fn check_against_naive_ties(
        seed: u64,
        n: usize,
        crit: Criterion,
        pure: PureLeaves,
        order: GrowOrder,
        width: usize,
        ties: SplitTies,
    ) {
        let feats = random_features(seed, n);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let stats = if width == 2 {
            random_stats(seed, n, 2)
        } else {
            let a = random_stats(seed, n, 2);
            let b = random_stats(seed + 1000, n, 2);
            a.chunks(2).zip(b.chunks(2)).flat_map(|(x, y)| [x[0], x[1], y[0], y[1]]).collect()
        };
        let params =
            TreeParams { max_leaves: 6, pure_leaves: pure, grow_order: order, split_ties: ties, ..Default::default() };
        let spec = GrowSpec {
            params: &params,
            criterion: crit,
            leaf_rule: LeafRule::HalfLogRatio { eps: 0.01 },
            seed,
            row_weight: None,
            constraints: None,
        };
        let g = grow(&bm, &mapper, &signed_of_pairs(&stats), width / 2, &spec).unwrap();
        for (i, node) in g.tree.nodes.iter().enumerate() {
            let rows = rows_of_node(&g.tree, &bm, i);
            if let Node::Split { feature, left, .. } = node {
                // Node i was created i-th (the root is 0): its serial number is its index.
                let (gain, f, left_rows) =
                    naive_best_split(&bm, &mapper, &rows, &stats, width, &crit, pure, ties, (seed, i))
                        .expect("split exists");
                assert_eq!(*feature as usize, f, "node {i}: gain {gain}");
                assert_eq!(rows_of_node(&g.tree, &bm, *left as usize), left_rows, "node {i}");
            }
        }
        // Leaves partition the rows and leaf_of_row agrees with walking the tree.
        for (i, node) in g.tree.nodes.iter().enumerate() {
            if let Node::Leaf { leaf } = node {
                for r in rows_of_node(&g.tree, &bm, i) {
                    assert_eq!(g.leaf_of_row[r as usize], *leaf);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn histogram_tree_agrees_with_naive_scan(seed in 0u64..10_000, n in 30usize..200) {
            check_against_naive(seed, n, Criterion::Matusita, PureLeaves::Allow, GrowOrder::Weight, 2);
            check_against_naive(seed, n, Criterion::Gini, PureLeaves::Forbid, GrowOrder::Count, 2);
            check_against_naive(seed, n, Criterion::Entropy, PureLeaves::Allow, GrowOrder::Gain, 4);
            let random = SplitTies::Random;
            check_against_naive_ties(seed, n, Criterion::Matusita, PureLeaves::Allow, GrowOrder::Weight, 2, random);
            check_against_naive_ties(seed, n, Criterion::Gini, PureLeaves::Forbid, GrowOrder::Count, 4, random);
        }
    }

    /// Mixed random features, each given twice (columns f and f + 4 are equal): every split has
    /// an exact twin, so every node has at least two tied candidates.
    fn twin_features(seed: u64, n: usize) -> Features {
        let mut f = random_features(seed, n);
        let cols = f.columns.clone();
        f.columns.extend(cols);
        f.names = (0..8).map(|i| format!("f{i}")).collect();
        f
    }

    fn grow_twins(seed: u64, n: usize, ties: SplitTies, threads: usize) -> Grown {
        let feats = twin_features(seed, n);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let stats = random_stats(seed, n, 2);
        let params = TreeParams { max_leaves: 6, split_ties: ties, ..Default::default() };
        let spec = GrowSpec {
            params: &params,
            criterion: Criterion::Gini,
            leaf_rule: LeafRule::Sign,
            seed,
            row_weight: None,
            constraints: None,
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap())
    }

    fn split_features(t: &Tree) -> Vec<u32> {
        t.nodes.iter().filter_map(|n| if let Node::Split { feature, .. } = n { Some(*feature) } else { None }).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// With exact ties everywhere, random tie-breaking agrees with the naive twin,
        /// and is bit-identical with 1, 2 and 3 threads.
        #[test]
        fn random_ties_agree_with_naive_and_threads(seed in 0u64..10_000, n in 40usize..200) {
            let feats = twin_features(seed, n);
            let mapper = BinMapper::fit(&feats, 255, None).unwrap();
            let bm = mapper.transform(&feats).unwrap();
            let stats = random_stats(seed, n, 2);
            let params = TreeParams { max_leaves: 6, split_ties: SplitTies::Random, ..Default::default() };
            let spec = GrowSpec { params: &params, criterion: Criterion::Gini, leaf_rule: LeafRule::Sign, seed, row_weight: None, constraints: None };
            let g = grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap();
            for (i, node) in g.tree.nodes.iter().enumerate() {
                if let Node::Split { feature, left, .. } = node {
                    let rows = rows_of_node(&g.tree, &bm, i);
                    let (_, f, left_rows) = naive_best_split(
                        &bm, &mapper, &rows, &stats, 2, &Criterion::Gini, PureLeaves::Allow, SplitTies::Random, (seed, i),
                    ).expect("split exists");
                    prop_assert_eq!(*feature as usize, f, "node {}", i);
                    prop_assert_eq!(rows_of_node(&g.tree, &bm, *left as usize), left_rows);
                }
            }
            let one = grow_twins(seed, n, SplitTies::Random, 1);
            for threads in [2, 3] {
                let other = grow_twins(seed, n, SplitTies::Random, threads);
                prop_assert_eq!(&one.tree, &other.tree);
                prop_assert_eq!(&one.leaf_of_row, &other.leaf_of_row);
            }
        }
    }

    /// A NaN or infinite statistic, anywhere, is refused naming its row and output; the check
    /// reads the root's totals, where nothing cancels (each statistic is added as |s|).
    #[test]
    fn non_finite_statistics_are_refused_naming_the_row() {
        let n = 300;
        let feats = random_features(3, n);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let params = TreeParams { max_leaves: 4, ..Default::default() };
        let spec = GrowSpec {
            params: &params,
            criterion: Criterion::Gini,
            leaf_rule: LeafRule::Sign,
            seed: 0,
            row_weight: None,
            constraints: None,
        };
        let good = signed_of_pairs(&random_stats(3, n, 2));
        assert!(grow(&bm, &mapper, &good, 1, &spec).is_ok());
        for (row, bad) in [(0, f64::NAN), (137, f64::INFINITY), (299, f64::NEG_INFINITY), (42, -f64::NAN)] {
            let mut stats = good.clone();
            stats[row] = bad;
            let err = grow(&bm, &mapper, &stats, 1, &spec).expect_err("a non-finite statistic").to_string();
            assert_eq!(err, format!("numerical failure: statistic 0 of row {row} is {bad}"));
        }
        // Finite statistics whose total overflows are refused too, without a row to name.
        let mut huge = good.clone();
        huge[5] = f64::MAX;
        huge[6] = f64::MAX;
        let err = grow(&bm, &mapper, &huge, 1, &spec).expect_err("an overflowing total").to_string();
        assert!(err.contains("the statistics of node 0 (300 rows) overflow: their total weight is inf"), "{err}");
        // W+ and W− each finite, their sum not: refused too (the tempered bounds would see ∞).
        let mut split = good.clone();
        split[5] = 1e308;
        split[6] = -1e308;
        let tempered = GrowSpec { criterion: Criterion::Tempered { t: 0.5 }, ..spec };
        let err = grow(&bm, &mapper, &split, 1, &tempered).expect_err("an overflowing weight").to_string();
        assert!(err.contains("node 0 (300 rows) overflow: their total weight is inf"), "{err}");
        // Finite sums whose criterion cost overflows (Matusita's 2√(W+·W−)).
        let mut big = good.clone();
        big[5] = 1e200;
        big[6] = -1e200;
        let matusita = GrowSpec { criterion: Criterion::Matusita, ..spec };
        let err = grow(&bm, &mapper, &big, 1, &matusita).expect_err("an overflowing cost").to_string();
        assert!(
            err.contains("node 0 (300 rows) overflow: their total weight is 2e200 and the criterion's cost inf"),
            "{err}"
        );
    }

    /// Random ties on a node large enough for the parallel histogram and split search
    /// (20 000 rows × 8 features) give bit-identical trees with 1, 2 and 3 threads.
    #[test]
    fn random_ties_bit_identical_across_threads_on_parallel_sizes() {
        let one = grow_twins(17, 20_000, SplitTies::Random, 1);
        const { assert!(20_000 * 8 >= PARALLEL_CELLS) };
        for threads in [2, 3] {
            let other = grow_twins(17, 20_000, SplitTies::Random, threads);
            assert_eq!(one.tree, other.tree, "{threads} threads");
            assert_eq!(one.leaf_of_row, other.leaf_of_row);
        }
        let lowest = grow_twins(17, 20_000, SplitTies::Lowest, 1);
        assert_ne!(split_features(&one.tree), split_features(&lowest.tree), "the draw moved some split");
    }

    /// `lowest` always takes the lower twin (features 0..4); `random` takes each twin
    /// about half the time over seeds (uniform among the tied), and a given seed always the same.
    #[test]
    fn random_ties_are_uniform_and_seeded() {
        let lowest = grow_twins(11, 300, SplitTies::Lowest, 1);
        assert!(split_features(&lowest.tree).iter().all(|&f| f < 4), "{:?}", split_features(&lowest.tree));
        let (mut high, mut total) = (0usize, 0usize);
        for seed in 0..200 {
            let g = grow_twins(seed, 300, SplitTies::Random, 1);
            let a = grow_twins(seed, 300, SplitTies::Random, 2);
            assert_eq!(g.tree, a.tree, "seed {seed}");
            let root = split_features(&g.tree)[0];
            high += usize::from(root >= 4);
            total += 1;
            // Same tree shape as lowest-first up to the twin renaming: same rows per leaf.
            let l = grow_twins(seed, 300, SplitTies::Lowest, 1);
            let rename = |v: Vec<u32>| v.into_iter().map(|f| f % 4).collect::<Vec<_>>();
            assert_eq!(rename(split_features(&g.tree)), rename(split_features(&l.tree)), "seed {seed}");
        }
        // Binomial(200, ½): mean 100, sd ≈ 7.1; 60..=140 is beyond 5.6 sd.
        assert!((60..=140).contains(&high), "the upper twin won the root {high} times of {total}");
    }

    #[test]
    fn reused_row_buffers_grow_the_same_trees_without_reallocating() {
        // Trees of several shapes (8 leaves, a stump, 4 leaves by count) on 2 × ROW_CHUNK + 500
        // rows (the parallel partition and gather), grown with one RowBuffers after another
        // tree's: the same tree, leaves and sums as with fresh buffers; once a tree has
        // partitioned, the row index and the scratch keep their allocation.
        let n = 2 * ROW_CHUNK + 500;
        let feats = random_features(21, n);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let shapes = [(8, GrowOrder::Weight), (2, GrowOrder::Weight), (4, GrowOrder::Count), (8, GrowOrder::Gain)];
        let mut bufs = RowBuffers::default();
        let mut seen: Option<(*const u32, *const u32)> = None;
        for (i, &(max_leaves, grow_order)) in shapes.iter().cycle().take(8).enumerate() {
            let stats = signed_of_pairs(&random_stats(i as u64, n, 2));
            let params = TreeParams { max_leaves, grow_order, ..Default::default() };
            let spec = GrowSpec {
                params: &params,
                criterion: Criterion::Gini,
                leaf_rule: LeafRule::Sign,
                seed: 3,
                row_weight: None,
                constraints: None,
            };
            let fresh = grow_ranks(&bm, &mapper, &stats, 1, &spec, None, &Local, &mut RowBuffers::default()).unwrap();
            let got = grow_ranks(&bm, &mapper, &stats, 1, &spec, None, &Local, &mut bufs).unwrap();
            assert_eq!(got.tree, fresh.tree, "tree {i}");
            assert_eq!((&got.leaf_of_row, &got.leaf_stats), (&fresh.leaf_of_row, &fresh.leaf_stats), "tree {i}");
            assert_eq!(fresh.tree.n_leaves(), max_leaves, "tree {i}");
            bufs.recycle_leaves(got.leaf_of_row);
            if max_leaves > 2 {
                assert!(bufs.index.capacity() >= n && bufs.leaves.capacity() >= n, "tree {i}: the buffers are kept");
                let now = (bufs.index.as_ptr(), bufs.scratch.as_ptr());
                assert_eq!(*seen.get_or_insert(now), now, "tree {i}: the row buffers were reallocated");
            }
        }
    }

    #[test]
    fn limits_and_orders() {
        let feats = random_features(5, 400);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let stats = random_stats(5, 400, 2);
        let mut params = TreeParams { max_nodes: Some(15), ..Default::default() };
        for order in [GrowOrder::Weight, GrowOrder::Count, GrowOrder::Gain] {
            params.grow_order = order;
            let spec = GrowSpec {
                params: &params,
                criterion: Criterion::Gini,
                leaf_rule: LeafRule::Sign,
                seed: 0,
                row_weight: None,
                constraints: None,
            };
            let g = grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap();
            assert_eq!(g.tree.n_leaves(), 8, "size 15 = 8 leaves");
            assert_eq!(g.tree.nodes.len(), 15);
            g.tree.validate(4).unwrap();
        }
        params.max_nodes = None;
        params.max_leaves = 64;
        params.max_depth = Some(2);
        let spec = GrowSpec {
            params: &params,
            criterion: Criterion::Gini,
            leaf_rule: LeafRule::Sign,
            seed: 0,
            row_weight: None,
            constraints: None,
        };
        assert!(grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap().tree.n_leaves() <= 4);
    }

    #[test]
    fn candidate_cap_is_seeded_and_limits_the_search() {
        let feats = random_features(9, 300);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let stats = random_stats(9, 300, 2);
        let params = TreeParams { max_leaves: 4, max_split_candidates: Some(3), ..Default::default() };
        let grow_with = |seed| {
            let spec = GrowSpec {
                params: &params,
                criterion: Criterion::Matusita,
                leaf_rule: LeafRule::Sign,
                seed,
                row_weight: None,
                constraints: None,
            };
            grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap().tree
        };
        assert_eq!(grow_with(1), grow_with(1));
        let differs = (2..20).any(|s| grow_with(s) != grow_with(1));
        assert!(differs, "different seeds should pick different candidate subsets");
    }

    #[test]
    fn bit_identical_across_thread_counts() {
        let feats = random_features(3, 20_000);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let stats = random_stats(3, 20_000, 2);
        let params = TreeParams { max_leaves: 8, ..Default::default() };
        let spec = GrowSpec {
            params: &params,
            criterion: Criterion::Matusita,
            leaf_rule: LeafRule::HalfLogRatio { eps: 1e-4 },
            seed: 0,
            row_weight: None,
            constraints: None,
        };
        let run = |threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap())
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a.tree, b.tree);
        assert_eq!(
            a.leaf_stats.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            b.leaf_stats.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
    }

    /// naive_* twin of `build_histogram`: one row at a time, feature by feature, in row order.
    fn naive_histogram(bm: &BinnedMatrix, rows: &[u32], stats: &[f64], width: usize) -> Vec<f64> {
        let mut h = vec![0.0; bm.total_bins() * width];
        for f in 0..bm.n_features {
            for &r in rows {
                let b = (bm.offsets[f] + bm.bin(r as usize, f)) * width;
                for k in 0..width {
                    h[b + k] += stats[r as usize * width + k];
                }
            }
        }
        h
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(6))]
        /// The blocked, feature-grouped kernel gives bit-identical sums to the naive one,
        /// over several row blocks, for all rows and for a row subset, with 1 to 3 threads.
        #[test]
        fn blocked_histogram_is_bit_identical_to_naive(seed in 0u64..1000, width in 1usize..3) {
            let width = 2 * width;
            let n = 2 * ROW_BLOCK + 777;
            let feats = random_features(seed, n);
            let mapper = BinMapper::fit(&feats, 255, None).unwrap();
            let bm = mapper.transform(&feats).unwrap();
            let stats = random_stats(seed, n, width);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let subset: Vec<u32> = (0..n as u32).filter(|_| rng.gen_bool(0.6)).collect();
            let all: Vec<u32> = (0..n as u32).collect();
            for (rows, given) in [(&all, false), (&subset, true)] {
                let want: Vec<u64> = naive_histogram(&bm, rows, &stats, width).iter().map(|x| x.to_bits()).collect();
                let (signed, k) = (signed_of_pairs(&stats), width / 2);
                let mut ordered = Vec::new();
                for &r in rows.iter() {
                    ordered.extend_from_slice(&signed[r as usize * k..(r as usize + 1) * k]);
                }
                for threads in 1..=3 {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let mut h = vec![f64::NAN; bm.total_bins() * width];
                    pool.install(|| build_histogram(&bm, given.then_some(rows.as_slice()), &ordered, k, &mut h));
                    let got: Vec<u64> = h.iter().map(|x| x.to_bits()).collect();
                    prop_assert_eq!(&got, &want);
                }
            }
        }
    }

    /// `d` byte-binned features of `n` rows: integers 0..300 with 5 % missing values.
    fn byte_binned(d: usize, n: usize, rng: &mut ChaCha8Rng) -> BinnedMatrix {
        let columns = (0..d)
            .map(|_| {
                Column::Numeric(
                    (0..n)
                        .map(|_| if rng.gen_bool(0.05) { f64::NAN } else { f64::from(rng.gen_range(0..300)) })
                        .collect(),
                )
            })
            .collect();
        let feats = Features { names: (0..d).map(|i| format!("f{i}")).collect(), columns };
        let bm = BinMapper::fit(&feats, 255, None).unwrap().transform(&feats).unwrap();
        assert!(matches!(bm.data, BinData::U8(_)));
        bm
    }

    #[test]
    fn multi_output_kernel_is_bit_identical_to_naive() {
        // Byte bins, k = 2..26 outputs, 1..=17 features (every pass size and group split), several
        // row blocks, all rows and a subset, 1 to 3 threads: the per-output kernel gives the naive
        // histogram's bits (row-order sums of (W+, W−) pairs).
        let n = 2 * OUTPUT_BLOCK + 333;
        for (d, k) in [(1usize, 2usize), (3, 7), (9, 3), (16, 26), (17, 7), (54, 7)] {
            let mut rng = ChaCha8Rng::seed_from_u64((d * 100 + k) as u64);
            let bm = byte_binned(d, n, &mut rng);
            let stats = random_stats((d + k) as u64, n, 2 * k);
            let signed = signed_of_pairs(&stats);
            let subset: Vec<u32> = (0..n as u32).filter(|_| rng.gen_bool(0.5)).collect();
            let all: Vec<u32> = (0..n as u32).collect();
            for (rows, given) in [(&all, false), (&subset, true)] {
                let want: Vec<u64> = naive_histogram(&bm, rows, &stats, 2 * k).iter().map(|x| x.to_bits()).collect();
                assert!(want.iter().any(|&b| f64::from_bits(b) > 0.0));
                let mut ordered = Vec::new();
                for &r in rows.iter() {
                    ordered.extend_from_slice(&signed[r as usize * k..(r as usize + 1) * k]);
                }
                for threads in 1..=3 {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let mut h = vec![f64::NAN; bm.total_bins() * 2 * k];
                    pool.install(|| build_histogram(&bm, given.then_some(rows.as_slice()), &ordered, k, &mut h));
                    let got: Vec<u64> = h.iter().map(|x| x.to_bits()).collect();
                    assert!(got == want, "{d} features, {k} outputs, {threads} threads, subset {given}");
                }
            }
        }
    }

    #[test]
    fn multi_feature_kernel_is_bit_identical_to_naive_for_every_group_size() {
        // 1..=17 byte-binned features: every pass size 1..=8 of the kernel, for 1 to 3 threads.
        let n = ROW_BLOCK + 555;
        for d in [1usize, 2, 3, 5, 6, 7, 8, 9, 11, 13, 16, 17] {
            let mut rng = ChaCha8Rng::seed_from_u64(d as u64);
            let bm = byte_binned(d, n, &mut rng);
            let stats = random_stats(d as u64, n, 2);
            let signed = signed_of_pairs(&stats);
            let subset: Vec<u32> = (0..n as u32).filter(|_| rng.gen_bool(0.5)).collect();
            let all: Vec<u32> = (0..n as u32).collect();
            for (rows, given) in [(&all, false), (&subset, true)] {
                let want: Vec<u64> = naive_histogram(&bm, rows, &stats, 2).iter().map(|x| x.to_bits()).collect();
                let ordered: Vec<f64> = rows.iter().map(|&r| signed[r as usize]).collect();
                for threads in 1..=3 {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let mut h = vec![f64::NAN; bm.total_bins() * 2];
                    pool.install(|| build_histogram(&bm, given.then_some(rows.as_slice()), &ordered, 1, &mut h));
                    let got: Vec<u64> = h.iter().map(|x| x.to_bits()).collect();
                    assert!(got == want, "{d} features, {threads} threads, subset {given}");
                }
            }
        }
    }

    /// The search context of a node with sums `total` for the scan tests (width `total.len()`,
    /// the tolerance `1e−12 W`, no constraints).
    fn scan_ctx<'a>(
        crit: Criterion,
        ties: SplitTies,
        (min_w, pure): (f64, PureLeaves),
        total: &[f64],
        (binned, mapper): (&'a BinnedMatrix, &'a BinMapper),
        bounds: Option<&'a RiskBounds>,
    ) -> SearchCtx<'a> {
        SearchCtx {
            criterion: crit,
            ties,
            width: total.len(),
            min_w,
            pure,
            parent_cost: block_cost(&crit, total),
            tol: 1e-12 * total.iter().sum::<f64>(),
            binned,
            mapper,
            bounds,
            limits: NodeLimits::FREE,
        }
    }

    /// A node's split with the floor its features' scans share is the first of the candidates
    /// within the tolerance of the best gain over all features' generic pools (or the seeded draw
    /// among them), bit for bit: on random data whose features are informative, noise, coarse,
    /// duplicated (exact ties across features) or missing, at several temperatures and the exact
    /// criteria, both tie rules, serial and parallel feature scans.
    #[test]
    fn shared_floor_split_equals_the_generic_pick() {
        let mut rng = ChaCha8Rng::seed_from_u64(2718);
        let n = 2000;
        let y: Vec<bool> = (0..n).map(|_| rng.gen_bool(0.45)).collect();
        let signal = |i: usize, s: f64, rng: &mut ChaCha8Rng| f64::from(u8::from(y[i])) * s + rng.gen::<f64>();
        let strong: Vec<f64> = (0..n).map(|i| signal(i, 0.8, &mut rng)).collect();
        let weak: Vec<f64> = (0..n).map(|i| signal(i, 0.1, &mut rng)).collect();
        let noise: Vec<f64> = (0..n).map(|_| rng.gen::<f64>()).collect();
        let coarse: Vec<f64> = (0..n).map(|_| f64::from(rng.gen_range(0..5u32))).collect();
        let holes: Vec<f64> = (0..n).map(|i| if i % 9 == 0 { f64::NAN } else { signal(i, 0.3, &mut rng) }).collect();
        let feats = Features {
            names: (0..7).map(|i| format!("f{i}")).collect(),
            columns: [&noise, &strong, &weak, &coarse, &holes, &strong, &noise]
                .iter()
                .map(|c| Column::Numeric((*c).clone()))
                .collect(),
        };
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let crits = [
            Criterion::Tempered { t: 0.8 },
            Criterion::Tempered { t: 0.3 },
            Criterion::Tempered { t: 1.3 },
            Criterion::Tempered { t: -2.0 },
            Criterion::Matusita,
            Criterion::Gini,
        ];
        for case in 0..120 {
            // Rows of a node (a random subset) with random weights; the weak signal alone at some.
            let keep = rng.gen_range(0.05..1.0);
            let rows: Vec<usize> = (0..n).filter(|_| rng.gen_bool(keep)).collect();
            let mut hist = vec![0.0; 2 * bm.total_bins()];
            let mut total = [0.0; 2];
            for &i in &rows {
                let w = rng.gen::<f64>() + 0.01;
                let k = usize::from(!y[i]);
                total[k] += w;
                for f in 0..bm.n_features {
                    hist[2 * (bm.offsets[f] + bm.bin(i, f)) + k] += w;
                }
            }
            let crit = crits[case % crits.len()];
            let ties = if case % 4 == 3 { SplitTies::Random } else { SplitTies::Lowest };
            let rb = match crit {
                Criterion::Tempered { t } => RiskBounds::for_t(t),
                _ => None,
            };
            let min_w = if case % 5 == 0 { 0.05 * (total[0] + total[1]) } else { 0.0 };
            let pure = if case % 7 == 0 { PureLeaves::Forbid } else { PureLeaves::Allow };
            let ctx = scan_ctx(crit, ties, (min_w, pure), &total, (&bm, &mapper), rb.as_deref());
            let slice = |f: usize| &hist[2 * bm.offsets[f]..2 * bm.offsets[f + 1]];
            let mut pool: Vec<Candidate> =
                (0..bm.n_features).flat_map(|f| ctx.best_for_feature_generic(f, slice(f), &total, None)).collect();
            let best = pool.iter().fold(f64::NEG_INFINITY, |m, c| m.max(c.gain));
            pool.retain(|c| c.gain >= best - ctx.tol);
            let want = match ties {
                SplitTies::Lowest => pool.first().cloned(),
                SplitTies::Random => Some(pool[tie_winner(7, case, pool.len())].clone()),
            };
            // Few rows: the features are scanned one after the other; many: in parallel.
            for n_rows in [rows.len(), PARALLEL_CELLS] {
                let got = ctx.best_split(&hist, &total, n_rows, None, (7, case));
                let bits = |c: &Option<Candidate>| c.as_ref().map(|c| (c.gain.to_bits(), c.feature, c.kind.clone()));
                assert_eq!(bits(&got), bits(&want), "case {case}: {crit:?} {ties:?}, {} rows", rows.len());
            }
        }
    }

    /// The width-2 numeric scan (with the bounded tempered cost, pruning the exact cost)
    /// returns exactly the candidates of the generic, unpruned scan — same gain bits, feature, bin
    /// and missing side — on random histograms with empty bins, missing values, exact ties
    /// (quantised statistics), near-ties, pure bins, minimum weights, candidate caps and both tie
    /// rules, for every criterion and temperatures across the supported range.
    #[test]
    fn pruned_pair_scan_equals_the_unpruned_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(1818);
        let n = 400;
        let feats = Features {
            names: vec!["a".into(), "b".into()],
            columns: vec![
                Column::Numeric((0..n).map(|i| f64::from(i as u32 % 60)).collect()),
                Column::Numeric((0..n).map(|i| if i % 7 == 0 { f64::NAN } else { f64::from(i as u32 % 9) }).collect()),
            ],
        };
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let crits = [
            Criterion::Tempered { t: 0.8 },
            Criterion::Tempered { t: 0.0 },
            Criterion::Tempered { t: 0.5 },
            Criterion::Tempered { t: 0.95 },
            Criterion::Tempered { t: 1.3 },
            Criterion::Tempered { t: -2.0 },
            Criterion::Tempered { t: 1.0 },
            Criterion::Matusita,
            Criterion::Gini,
            Criterion::Entropy,
            Criterion::Empirical,
        ];
        let (mut cases, mut pruned_cases) = (0, 0);
        for case in 0..6000 {
            let f = case % 2;
            let nb = bm.n_bins(f);
            let style = rng.gen_range(0..5);
            let mut hist = vec![0.0; 2 * nb];
            for b in 0..nb {
                if rng.gen_bool(0.2) {
                    continue; // empty bin
                }
                for side in 0..2 {
                    hist[2 * b + side] = match style {
                        // Quantised: many exact ties between candidates.
                        0 => f64::from(rng.gen_range(0..4u32)) * 0.25,
                        // Near-ties: equal up to tiny perturbations.
                        1 => 1.0 + f64::from(rng.gen_range(0..3u32)) * 1e-13,
                        // Pure bins.
                        2 => {
                            if rng.gen_bool(0.5) == (side == 0) {
                                rng.gen::<f64>()
                            } else {
                                0.0
                            }
                        }
                        // Wide dynamic range.
                        3 => rng.gen::<f64>() * 10f64.powi(rng.gen_range(-8..3)),
                        _ => rng.gen::<f64>(),
                    };
                }
            }
            let mut total = [0.0; 2];
            for b in 0..nb {
                total[0] += hist[2 * b];
                total[1] += hist[2 * b + 1];
            }
            let crit = crits[case % crits.len()];
            let ties = if case % 3 == 0 { SplitTies::Random } else { SplitTies::Lowest };
            let pure = if case % 5 == 0 { PureLeaves::Forbid } else { PureLeaves::Allow };
            let min_w = if case % 4 == 0 { 0.1 * (total[0] + total[1]) } else { 0.0 };
            let cap: Option<Vec<u32>> = (case % 7 == 0).then(|| (0..80u32).filter(|_| rng.gen_bool(0.5)).collect());
            let rb = match crit {
                Criterion::Tempered { t } => RiskBounds::for_t(t),
                _ => None,
            };
            let ctx = scan_ctx(crit, ties, (min_w, pure), &total, (&bm, &mapper), rb.as_deref());
            let fast = ctx.best_for_feature(f, &hist, &total, cap.as_deref(), None);
            let slow = ctx.best_for_feature_generic(f, &hist, &total, cap.as_deref());
            assert_eq!(fast.len(), slow.len(), "case {case}: {crit:?} {ties:?}");
            for (a, b) in fast.iter().zip(&slow) {
                assert_eq!(
                    (a.gain.to_bits(), a.feature, &a.kind),
                    (b.gain.to_bits(), b.feature, &b.kind),
                    "case {case}"
                );
            }
            cases += 1;
            pruned_cases += usize::from(rb.is_some());
        }
        assert!(pruned_cases > 2500 && cases == 6000);
    }

    /// Two numeric features of 3000 rows for the scan equivalence tests: 300 levels, and
    /// `levels_b` levels with every 11th value missing.
    fn scan_test_features(levels_b: u32) -> Features {
        let n = 3000;
        Features {
            names: vec!["a".into(), "b".into()],
            columns: vec![
                Column::Numeric((0..n).map(|i| f64::from(i as u32 % 300)).collect()),
                Column::Numeric(
                    (0..n).map(|i| if i % 11 == 0 { f64::NAN } else { f64::from(i as u32 % levels_b) }).collect(),
                ),
            ],
        }
    }

    /// The flat scans keep the generic scan's pool bit for bit on long (255-bin) histograms whose
    /// gain curves climb, plateau (exact and near ties within the tolerance) and fall, with empty
    /// bins, missing values, minimum weights and forbidden pure leaves: the exact one
    /// ([`SearchCtx::pool_exact`]) for every exact criterion, and the bounded one of the tempered
    /// criterion ([`SearchCtx::pool_bounded`], curvature bounds, seed and intervals) at five
    /// temperatures.
    #[test]
    fn flat_scans_equal_the_generic_scan_on_long_histograms() {
        let mut rng = ChaCha8Rng::seed_from_u64(618);
        let feats = scan_test_features(257);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        assert!(bm.n_bins(0) > 200 && bm.n_bins(1) > 200);
        // The tempered criterion with its bounds takes the flat bounded scan
        // ([`SearchCtx::pool_bounded`]); without them (t = 1), the exact one.
        let crits = [
            Criterion::Matusita,
            Criterion::Gini,
            Criterion::Entropy,
            Criterion::Empirical,
            Criterion::Tempered { t: 0.8 },
            Criterion::Tempered { t: 0.0 },
            Criterion::Tempered { t: 0.5 },
            Criterion::Tempered { t: 1.3 },
            Criterion::Tempered { t: -2.0 },
        ];
        let mut replaced_late = 0;
        let mut bounded_late = 0;
        for case in 0..3000 {
            let f = case % 2;
            let nb = bm.n_bins(f);
            let style = rng.gen_range(0..4);
            let peak = rng.gen_range(0..nb);
            let mut hist = vec![0.0; 2 * nb];
            for b in 0..nb {
                if rng.gen_bool(0.1) {
                    continue; // empty bin
                }
                let (p, q) = match style {
                    // Positives before the peak, negatives after: a gain curve climbing to it.
                    0 => {
                        if b < peak {
                            (1.0, 0.0)
                        } else {
                            (0.0, 1.0)
                        }
                    }
                    // The same with noise: many small climbs and falls.
                    1 => {
                        if b < peak {
                            (1.0, rng.gen::<f64>() * 0.3)
                        } else {
                            (rng.gen::<f64>() * 0.3, 1.0)
                        }
                    }
                    // Quantised: exact ties and plateaus.
                    2 => (f64::from(rng.gen_range(0..3u32)) * 0.5, f64::from(rng.gen_range(0..3u32)) * 0.5),
                    // Near-ties within the tolerance.
                    _ => (1.0 + f64::from(rng.gen_range(0..3u32)) * 1e-13, 1.0),
                };
                hist[2 * b] = p;
                hist[2 * b + 1] = q;
            }
            let mut total = [0.0; 2];
            for b in 0..nb {
                total[0] += hist[2 * b];
                total[1] += hist[2 * b + 1];
            }
            let crit = crits[case % crits.len()];
            let pure = if case % 5 == 0 { PureLeaves::Forbid } else { PureLeaves::Allow };
            let min_w = if case % 4 == 0 { 0.2 * (total[0] + total[1]) } else { 0.0 };
            let rb = match crit {
                Criterion::Tempered { t } => RiskBounds::for_t(t),
                _ => None,
            };
            let ctx = scan_ctx(crit, SplitTies::Lowest, (min_w, pure), &total, (&bm, &mapper), rb.as_deref());
            let fast = ctx.best_for_feature(f, &hist, &total, None, None);
            let slow = ctx.best_for_feature_generic(f, &hist, &total, None);
            assert_eq!(fast.len(), slow.len(), "case {case}: {crit:?}");
            for (a, b) in fast.iter().zip(&slow) {
                assert_eq!(
                    (a.gain.to_bits(), a.feature, &a.kind),
                    (b.gain.to_bits(), b.feature, &b.kind),
                    "case {case}: {crit:?}"
                );
                if let CandKind::Numeric { bin, .. } = a.kind {
                    replaced_late += usize::from(bin > SEED_BLOCK);
                    bounded_late += usize::from(bin > SEED_BLOCK && rb.is_some());
                }
            }
        }
        // Kept candidates beyond the first seed block's reach: candidates were skipped before them.
        assert!(replaced_late > 500, "{replaced_late}");
        assert!(bounded_late > 250, "{bounded_late}");
    }

    /// The AVX2 build of the scan's per-candidate passes ([`simd`]) writes
    /// the baseline build's bits — every exact criterion's gains and the tempered bounds' gain
    /// intervals at six temperatures, with and without a missing side, for random prefix sums
    /// over a wide dynamic range, exact zeros (pure and empty children), sums within the
    /// tolerance of the total (residues), minimum weights and forbidden pure leaves; lengths
    /// 0 to 300, so that every vector remainder is exercised.
    #[test]
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn simd_passes_equal_the_scalar_passes() {
        if !std::is_x86_feature_detected!("avx2") {
            eprintln!("no AVX2 on this CPU: the baseline build is the only one that runs");
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(1808);
        let exact = [Criterion::Matusita, Criterion::Gini, Criterion::Entropy, Criterion::Empirical];
        let temps = [0.8, 0.0, 0.5, 1.3, -2.0, 0.95];
        let (mut finite, mut nan) = (0usize, 0usize);
        for case in 0..3000 {
            let len = rng.gen_range(0..300);
            let scale = 10f64.powi(rng.gen_range(-6..4));
            let mut acc: Vec<(f64, f64)> = Vec::with_capacity(len);
            let (mut a0, mut a1) = (0.0f64, 0.0f64);
            for _ in 0..len {
                let h = |rng: &mut ChaCha8Rng| match rng.gen_range(0..4) {
                    0 => 0.0,
                    1 => f64::from(rng.gen_range(0..4u32)) * 0.25 * scale,
                    _ => rng.gen::<f64>() * scale,
                };
                a0 += h(&mut rng);
                a1 += h(&mut rng);
                acc.push((a0, a1));
            }
            let extra = if rng.gen_bool(0.3) { 0.0 } else { rng.gen::<f64>() * scale };
            let (t0, t1) = (a0 + extra, a1 + rng.gen::<f64>() * scale * 1e-13);
            let miss = rng.gen_bool(0.5).then_some((extra, 0.0));
            let tol = 1e-12 * (t0 + t1);
            let min_w = if case % 4 == 0 { 0.2 * (t0 + t1) } else { 0.0 };
            let forbid = case % 5 == 0;
            let ns = if miss.is_some() { 2 } else { 1 };
            let crit = exact[case % exact.len()];
            let cost = Exact(|p, n| crit.cost(p, n));
            let parent = block_cost(&crit, &[t0, t1]);
            let g = ExactGain { cost: &cost, t0, t1, tol, parent, min_w, forbid };
            let (mut fast, mut slow) = (vec![0.0; len * ns], vec![0.0; len * ns]);
            // SAFETY: AVX2 is detected above.
            unsafe { simd::exact_gains_avx2(&g, &acc, miss, &mut fast) };
            simd::exact_gains_scalar(&g, &acc, miss, &mut slow);
            for (i, (a, b)) in fast.iter().zip(&slow).enumerate() {
                assert_eq!(a.to_bits(), b.to_bits(), "case {case} {crit:?}: candidate {i}");
                finite += usize::from(a.is_finite());
                nan += usize::from(a.is_nan());
            }
            let t = temps[case % temps.len()];
            let rb = RiskBounds::for_t(t).unwrap();
            let parent = block_cost(&Criterion::Tempered { t }, &[t0, t1]);
            let margin = 1e-10 * (parent.abs() + t0 + t1);
            let b = GainBounds { rb: &rb, t0, t1, tol, parent, min_w, forbid, margin };
            let (mut flo, mut fhi) = (vec![0.0; len * ns], vec![0.0; len * ns]);
            let (mut slo, mut shi) = (vec![0.0; len * ns], vec![0.0; len * ns]);
            // SAFETY: AVX2 is detected above.
            unsafe { simd::gain_intervals_avx2(&b, &acc, miss, &mut flo, &mut fhi) };
            simd::gain_intervals_scalar(&b, &acc, miss, &mut slo, &mut shi);
            for i in 0..len * ns {
                assert_eq!(
                    (flo[i].to_bits(), fhi[i].to_bits()),
                    (slo[i].to_bits(), shi[i].to_bits()),
                    "case {case} t = {t}: candidate {i}"
                );
            }
        }
        // Both admissible and inadmissible candidates were compared.
        assert!(finite > 100_000 && nan > 10_000, "{finite} {nan}");
        // The four-lane tempered bounds at edge pairs: empty, pure, equal (x = ½, the last grid
        // interval), one ulp apart, subnormal, tiny against huge (x in the first interval).
        use std::arch::x86_64::{_mm256_set_pd, _mm256_storeu_pd};
        let sub = f64::from_bits(3);
        let edge = [0.0, 1.0, 1.0 + f64::EPSILON, 1.0 - f64::EPSILON / 2.0, sub, 1e-300, 1e300, 0.25, 3.0, 1e-5];
        for &t in &temps {
            let rb = RiskBounds::for_t(t).unwrap();
            for &p in &edge {
                for n in edge.iter().map(|&e| e * 0.999).chain(edge) {
                    let lanes = [(p, n), (n, p), (p, p), (n, n)];
                    let x = |k: usize, s: usize| if s == 0 { lanes[k].0 } else { lanes[k].1 };
                    let (mut lo, mut hi) = ([0.0; 4], [0.0; 4]);
                    // SAFETY: AVX2 is detected above; the arrays hold four values.
                    unsafe {
                        let (l, h) = rb.cost_bounds_x4(
                            _mm256_set_pd(x(3, 0), x(2, 0), x(1, 0), x(0, 0)),
                            _mm256_set_pd(x(3, 1), x(2, 1), x(1, 1), x(0, 1)),
                        );
                        _mm256_storeu_pd(lo.as_mut_ptr(), l);
                        _mm256_storeu_pd(hi.as_mut_ptr(), h);
                    }
                    for (k, &(a, b)) in lanes.iter().enumerate() {
                        let (sl, sh) = rb.cost_bounds(a, b);
                        assert_eq!(
                            (lo[k].to_bits(), hi[k].to_bits()),
                            (sl.to_bits(), sh.to_bits()),
                            "t = {t}: ({a}, {b})"
                        );
                    }
                }
            }
        }
    }

    /// The k-output numeric scan ([`SearchCtx::scan_outputs`]) returns the
    /// generic scan's candidates bit for bit: 2 to 26 outputs, every criterion, both tie rules,
    /// with and without a missing bin, a candidate cap, a minimum leaf weight and forbidden pure
    /// leaves, on histograms with empty bins, plateaus, exact and near ties.
    #[test]
    fn output_scan_equals_the_generic_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(818);
        let feats = scan_test_features(57);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let crits = [
            Criterion::Matusita,
            Criterion::Gini,
            Criterion::Entropy,
            Criterion::Empirical,
            Criterion::Tempered { t: 0.8 },
            Criterion::Tempered { t: 1.3 },
        ];
        let (mut kept, mut with_missing) = (0, 0);
        for case in 0..1200 {
            let f = case % 2;
            let k = [2, 3, 7, 26][case / 2 % 4];
            let w = 2 * k;
            let nb = bm.n_bins(f);
            let style = rng.gen_range(0..4);
            let mut hist = vec![0.0; w * nb];
            for b in 0..nb {
                if rng.gen_bool(0.15) {
                    continue; // empty bin
                }
                for j in 0..k {
                    let (p, q) = match style {
                        0 => (rng.gen::<f64>(), rng.gen::<f64>() * 0.2),
                        // Quantised: exact ties and plateaus, some pairs empty.
                        1 => (f64::from(rng.gen_range(0..3u32)) * 0.5, f64::from(rng.gen_range(0..3u32)) * 0.5),
                        // Near-ties within the tolerance.
                        2 => (1.0 + f64::from(rng.gen_range(0..3u32)) * 1e-13, 1.0),
                        // One output per bin carries the weight (single-label data).
                        _ => {
                            if j == b % k {
                                (rng.gen::<f64>(), 0.0)
                            } else {
                                (0.0, rng.gen::<f64>() / k as f64)
                            }
                        }
                    };
                    hist[b * w + 2 * j] = p;
                    hist[b * w + 2 * j + 1] = q;
                }
            }
            if case % 3 == 0 {
                hist[(nb - 1) * w..].fill(0.0); // no missing rows
            }
            let mut total = vec![0.0; w];
            for cell in hist.chunks_exact(w) {
                for (t, x) in total.iter_mut().zip(cell) {
                    *t += x;
                }
            }
            let crit = crits[case % crits.len()];
            let pure = if case % 5 == 0 { PureLeaves::Forbid } else { PureLeaves::Allow };
            let min_w = if case % 4 == 0 { 0.2 * total.iter().sum::<f64>() } else { 0.0 };
            let ties = if case % 7 < 2 { SplitTies::Random } else { SplitTies::Lowest };
            let ctx = scan_ctx(crit, ties, (min_w, pure), &total, (&bm, &mapper), None);
            let allowed: Option<Vec<u32>> =
                (case % 6 == 5).then(|| (0..nb as u32).filter(|_| rng.gen_bool(0.3)).collect());
            let fast = ctx.best_for_feature(f, &hist, &total, allowed.as_deref(), None);
            let slow = ctx.best_for_feature_generic(f, &hist, &total, allowed.as_deref());
            assert_eq!(fast.len(), slow.len(), "case {case}: {crit:?} k = {k}");
            for (a, b) in fast.iter().zip(&slow) {
                assert_eq!(
                    (a.gain.to_bits(), a.feature, &a.kind),
                    (b.gain.to_bits(), b.feature, &b.kind),
                    "case {case}: {crit:?} k = {k}"
                );
                kept += 1;
                with_missing += usize::from(matches!(a.kind, CandKind::Numeric { missing_left: true, .. }));
            }
        }
        // Both sides of the missing bin won somewhere.
        assert!(kept > 1000 && with_missing > 50, "{kept} {with_missing}");
    }

    /// Trees grown with histograms and byte-kernel accumulators reused from
    /// the thread's pools — left dirty by other trees of other sizes, or poisoned with NaN — are
    /// bit for bit the trees a fresh thread grows with freshly allocated buffers, for one and
    /// several outputs, tiny and larger nodes, and the tempered criterion of the sonar target.
    #[test]
    fn pooled_buffers_grow_the_fresh_tree() {
        // Many distinct values (up to 255 bins a feature), some missing: a sonar-like layout.
        let wide = |seed: u64, n: usize, d: usize| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let columns = (0..d)
                .map(|_| {
                    Column::Numeric(
                        (0..n).map(|_| if rng.gen_bool(0.03) { f64::NAN } else { rng.gen::<f64>() }).collect(),
                    )
                })
                .collect();
            Features { names: (0..d).map(|i| format!("f{i}")).collect(), columns }
        };
        let cases = [
            (187, 60, 1, 8, Criterion::Tempered { t: 0.6 }),
            (20, 60, 1, 4, Criterion::Tempered { t: 0.6 }),
            (3000, 12, 1, 16, Criterion::Gini),
            (400, 9, 3, 6, Criterion::Matusita),
        ];
        let grow_case = |(n, d, k, leaves, criterion): (usize, usize, usize, usize, Criterion)| {
            let feats = wide(n as u64 + d as u64, n, d);
            let mapper = BinMapper::fit(&feats, 255, None).unwrap();
            let bm = mapper.transform(&feats).unwrap();
            let stats = signed_of_pairs(&random_stats(n as u64, n, 2 * k));
            let params = TreeParams { max_leaves: leaves, ..Default::default() };
            let spec = GrowSpec {
                params: &params,
                criterion,
                leaf_rule: LeafRule::Sign,
                seed: 5,
                row_weight: None,
                constraints: None,
            };
            grow(&bm, &mapper, &stats, k, &spec).unwrap()
        };
        let key = |g: &Grown| {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            (g.tree.clone(), bits(&g.tree.leaf_values), bits(&g.leaf_stats), g.leaf_of_row.clone())
        };
        // Each case on a fresh thread: empty pools, every buffer freshly allocated (the old path).
        let fresh: Vec<_> = std::thread::scope(|sc| {
            cases.iter().map(|&c| sc.spawn(move || key(&grow_case(c))).join().unwrap()).collect()
        });
        let pooled = std::thread::scope(|sc| {
            sc.spawn(|| {
                HIST_POOL.set((1..6).map(|i| vec![f64::NAN; 997 * i]).collect());
                U8_ACC.set(vec![[f64::NAN; 512]; 70]);
                let mut out = Vec::new();
                for _ in 0..2 {
                    for &c in cases.iter().chain(cases.iter().rev()) {
                        out.push((c, key(&grow_case(c))));
                    }
                }
                let held = HIST_POOL.take();
                assert!(!held.is_empty(), "the pool was used");
                assert!(held.iter().map(Vec::capacity).sum::<usize>() * 8 <= HIST_POOL_BYTES);
                out
            })
            .join()
            .unwrap()
        });
        for (c, got) in pooled {
            let i = cases.iter().position(|x| x.0 == c.0 && x.1 == c.1 && x.2 == c.2).unwrap();
            assert!(got == fresh[i], "case {c:?}: pooled buffers changed the tree");
        }
    }

    #[test]
    fn chunked_partition_equals_the_serial_one() {
        let n = 3 * ROW_CHUNK + 123;
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let col: Vec<u8> = (0..n).map(|_| rng.gen_range(0..10)).collect();
        let left_of_bin: Vec<bool> = (0..10).map(|b| b % 3 == 0).collect();
        let rows: Vec<u32> = (0..n as u32).filter(|_| rng.gen_bool(0.9)).collect();
        let (mut want, mut scratch) = (rows.clone(), Vec::new());
        let want_left = stable_partition(&col, &left_of_bin, &mut want, &mut scratch);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut got = rows.clone();
            let left = pool.install(|| par_stable_partition(&col, &left_of_bin, &mut got, &mut scratch));
            assert_eq!((left, &got), (want_left, &want));
        }
        assert!(want[..want_left].iter().all(|&r| left_of_bin[usize::from(col[r as usize])]));
        assert!(want[want_left..].iter().all(|&r| !left_of_bin[usize::from(col[r as usize])]));
        assert!(want[..want_left].windows(2).all(|w| w[0] < w[1]) && want[want_left..].windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn leaves_of_unpartitioned_rows_equal_the_indexed_walk() {
        // The identity index left implicit (stumps, one-leaf trees) gives every row the leaf the
        // walk over an explicit identity index gives it, for any thread count.
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let n = 2 * ROW_CHUNK + 777;
        let bm = byte_binned(3, n, &mut rng);
        let identity: Vec<u32> = (0..n as u32).collect();
        for case in 0..6 {
            let feature = case % 3;
            let left_of_bin: Vec<bool> = (0..bm.n_bins(feature)).map(|_| rng.gen_bool(0.5)).collect();
            // A stump (the last split at the root, its children's ranges empty), a one-leaf tree,
            // and a stump whose split starts inside a range (ranges of leaves around it).
            let cut = rng.gen_range(0..n);
            let (ranges, last) = match case % 3 {
                0 => (vec![(0, 0, 0), (0, 0, 1)], Some((0, n))),
                1 => (vec![(0, n, 0)], None),
                _ => (vec![(0, cut, 2), (n, n, 0)], Some((cut, n))),
            };
            let last = last.map(|(start, end)| LastSplit {
                start,
                end,
                feature,
                left_of_bin: left_of_bin.clone(),
                left: 0,
                right: 1,
            });
            let want = leaves_of_rows(&bm, &identity, &ranges, last.as_ref(), Vec::new());
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let got = pool.install(|| leaves_of_rows(&bm, &[], &ranges, last.as_ref(), Vec::new()));
                assert_eq!(got, want, "case {case}, {threads} threads");
                // A reused buffer (longer, shorter, holding old leaves) changes nothing.
                for old in [vec![7u32; n + 5], vec![9u32; n / 2]] {
                    let got = pool.install(|| leaves_of_rows(&bm, &[], &ranges, last.as_ref(), old.clone()));
                    assert_eq!(got, want, "case {case}, {threads} threads, reused buffer");
                    let got = pool.install(|| leaves_of_rows(&bm, &identity, &ranges, last.as_ref(), old));
                    assert_eq!(got, want, "case {case}, {threads} threads, reused buffer, index");
                }
            }
            if case % 3 == 1 {
                assert!(want.iter().all(|&l| l == 0));
            } else {
                let BinData::U8(v) = &bm.data else { unreachable!() };
                let r = n - 1;
                let side = u32::from(!left_of_bin[usize::from(v[feature * n + r])]);
                assert_eq!(want[r], side);
            }
        }
    }

    #[test]
    fn bad_statistics_are_errors() {
        let feats = random_features(1, 10);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        let params = TreeParams::default();
        let spec = GrowSpec {
            params: &params,
            criterion: Criterion::Gini,
            leaf_rule: LeafRule::Sign,
            seed: 0,
            row_weight: None,
            constraints: None,
        };
        let mut stats = vec![0.1; 10];
        stats[3] = f64::NAN;
        assert!(grow(&bm, &mapper, &stats, 1, &spec).is_err());
        stats[3] = f64::INFINITY;
        assert!(grow(&bm, &mapper, &stats, 1, &spec).is_err());
        stats[3] = -0.1;
        assert!(grow(&bm, &mapper, &stats, 1, &spec).is_ok());
        assert!(grow(&bm, &mapper, &stats[..9], 1, &spec).is_err());
        assert!(grow(&bm, &mapper, &stats, 0, &spec).is_err());
    }
}
