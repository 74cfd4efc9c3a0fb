//! Best-first tree growth on histograms (SPEC §2.2).
//!
//! Each leaf keeps the histogram of its rows' statistics: for every (feature, bin) the sum of the
//! fixed-width statistics block, in `f64`. Splitting a leaf builds the histogram of the smaller
//! child from its rows and gets the sibling's by subtraction from the parent's. Histograms are built
//! and scanned in parallel over features; every sum over rows runs in row order inside one feature,
//! so results are bit-identical whatever the number of threads.

use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

use super::tree::{Node, SplitRule, Tree};
use super::{Criterion, GrowOrder, LeafRule, PureLeaves, SplitTies, TreeParams};
use crate::collective::{Collective, Local};
use crate::data::{BinData, BinMapper, BinnedMatrix, FeatureBins};
use crate::error::{Error, Result};
use crate::math::tempered::RiskBounds;
use crate::util::cancel::Cancel;
use crate::util::par::ROW_CHUNK;

/// Resolution of the positive fractions that order a categorical feature's categories (their
/// multiples of 2^−36; see `best_for_feature`).
const CAT_FRACTION_GRID: f64 = (1u64 << 36) as f64;

/// Work below this many (row × feature) cells runs on one thread.
const PARALLEL_CELLS: usize = 1 << 15;

/// Histogram values from which the smaller child's subtraction runs in parallel (session 8).
const PARALLEL_HIST: usize = 1 << 16;

/// Gains per block of the `lowest` rule's blocked running maximum ([`SearchCtx::lowest_exact`]).
const GAIN_BLOCK: usize = 16;

thread_local! {
    /// The split scan's per-feature arrays, reused across features, nodes and rounds by each
    /// thread (session 6: no allocations in the scan's inner calls).
    static SCAN_BINS: std::cell::Cell<Vec<usize>> = const { std::cell::Cell::new(Vec::new()) };
    static SCAN_ACC: std::cell::Cell<Vec<(f64, f64)>> = const { std::cell::Cell::new(Vec::new()) };
    static SCAN_GAINS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    /// Session 7 (issue 18): the nodes' histograms of this thread's finished trees, reused by its
    /// next trees ([`pooled_hist_for_overwrite`], [`recycle_hist`]).
    static HIST_POOL: std::cell::Cell<Vec<Vec<f64>>> = const { std::cell::Cell::new(Vec::new()) };
    /// Session 7 (issue 18): the byte-bin kernel's per-feature 512-slot accumulators, reused by
    /// each thread across histograms (see [`build_histogram`]).
    static U8_ACC: std::cell::Cell<Vec<[f64; 512]>> = const { std::cell::Cell::new(Vec::new()) };
    /// The k-output scan's running sums, children's sums and pair costs (session 8, issue 18).
    static SCAN_OUTPUTS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    /// Session 8 (issue 18): [`histogram_u8_outputs`]' per-(output, feature) accumulators, its
    /// output-major block of statistics and its gathered bins, reused by each thread.
    static U8_OUT_ACC: std::cell::Cell<Vec<[f64; 512]>> = const { std::cell::Cell::new(Vec::new()) };
    static U8_OUT_ST: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    static U8_OUT_BINS: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// The tempered scan's upper bounds of the gains (session 7), beside `SCAN_GAINS`' lower ones.
    static SCAN_HI: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Bytes of histogram buffers a thread keeps between trees (session 7): every histogram of a
/// tree of small or mid-size data, a few of very wide data.
const HIST_POOL_BYTES: usize = 16 << 20;

/// Accumulators of [`U8_ACC`] a thread keeps between histograms (4 MiB: 1024 features).
const U8_ACC_KEPT: usize = 1024;

/// Accumulators of [`U8_OUT_ACC`] a thread keeps between histograms (8 MiB: 26 outputs × 78
/// features of a group).
const U8_OUT_KEPT: usize = 2048;

/// A histogram buffer of `len` values for [`build_histogram`], which writes every one of them: a
/// buffer of this thread's pool when it has one (session 7, issue 18). A fresh `vec![0.0; len]`
/// of a node's histogram (features × bins × 2 values: 176 KiB on sonar) was a new mapping of the
/// allocator, page-faulted in, zeroed and unmapped again at every node of every tree — on a
/// 187-row tree, more CPU than the rows' own work. Session 8: the pooled buffer is not zeroed
/// either (with 26 outputs a node's histogram is 1.7 MiB, zeroed on the growing thread alone and
/// then overwritten); it keeps old values until `build_histogram` writes them, and the growth of
/// a short one is zeroed.
fn pooled_hist_for_overwrite(len: usize) -> Vec<f64> {
    let mut pool = HIST_POOL.take();
    let buf = pool.pop();
    HIST_POOL.set(pool);
    match buf {
        Some(mut v) => {
            v.truncate(len);
            v.resize(len, 0.0);
            v
        }
        None => vec![0.0; len],
    }
}

/// Gives a histogram buffer back to this thread's pool (dropped when the pool holds
/// [`HIST_POOL_BYTES`]).
fn recycle_hist(v: Vec<f64>) {
    if v.capacity() == 0 {
        return;
    }
    let mut pool = HIST_POOL.take();
    let held: usize = pool.iter().map(Vec::capacity).sum();
    if (held + v.capacity()) * std::mem::size_of::<f64>() <= HIST_POOL_BYTES {
        pool.push(v);
    }
    HIST_POOL.set(pool);
}

/// The largest of `b` ignoring NaN (`−∞` when empty or all NaN), by four independent chains.
#[inline]
fn block_max(b: &[f64]) -> f64 {
    let mut m = [f64::NEG_INFINITY; 4];
    let mut it = b.chunks_exact(4);
    for c in &mut it {
        for (m, &g) in m.iter_mut().zip(c) {
            *m = m.max(g);
        }
    }
    for &g in it.remainder() {
        m[0] = m[0].max(g);
    }
    m[0].max(m[1]).max(m[2].max(m[3]))
}

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
    /// The rows' sample weights (frequency weights, issue 14), or `None`: the `count` growth
    /// order counts a leaf's examples as the sum of their sample weights (the number of repeated
    /// rows). The learner never uses them otherwise.
    pub row_weight: Option<&'a [f64]>,
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
/// selects the result), so that a loop of them vectorises (session 8, issue 18).
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
fn admissible(l: &[f64], r: &[f64], min_w: f64, pure: PureLeaves, tiny: f64) -> bool {
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
fn residue_free(d: f64, tiny: f64) -> f64 {
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

/// Adds a candidate of gain `gain` (built by `make` only if kept) to `pool` under the tie rule:
/// `lowest` keeps the single best (a later candidate wins only by more than `tol`); `random` keeps
/// every candidate within `tol` of the largest gain seen so far.
#[inline]
fn offer(pool: &mut Vec<Candidate>, ties: SplitTies, tol: f64, gain: f64, make: &dyn Fn() -> Candidate) {
    match ties {
        SplitTies::Lowest => {
            if pool.first().is_none_or(|b| gain > b.gain + tol) {
                pool.clear();
                pool.push(make());
            }
        }
        SplitTies::Random => {
            let max = pool.iter().map(|c| c.gain).fold(f64::NEG_INFINITY, f64::max);
            if gain >= max - tol {
                if gain > max {
                    pool.retain(|c| c.gain >= gain - tol);
                }
                pool.push(make());
            }
        }
    }
}

/// Context of the split search at one node.
struct SearchCtx<'a> {
    criterion: Criterion,
    ties: SplitTies,
    width: usize,
    min_w: f64,
    pure: PureLeaves,
    parent_cost: f64,
    tol: f64,
    binned: &'a BinnedMatrix,
    mapper: &'a BinMapper,
    /// Cheap guaranteed bounds of the tempered cost (issue 18), when the criterion is tempered
    /// at a supported temperature.
    bounds: Option<&'a RiskBounds>,
}

/// A binary leaf cost `W·L(W+/W)` as the width-2 scan needs it (issue 18).
trait PairCost {
    /// Whether [`Self::bounds`] gives bounds (else the scan computes exact gains only).
    const BOUNDED: bool;
    /// The exact cost, bit for bit [`Criterion::cost`].
    fn cost(&self, wp: f64, wn: f64) -> f64;
    /// Guaranteed `(lo, hi)` around [`Self::cost`], cheaper than it; `None` when the exact cost is
    /// as cheap.
    fn bounds(&self, wp: f64, wn: f64) -> Option<(f64, f64)>;
    /// The table behind [`Self::bounds`], when there is one (session 7: the flat `lowest` scan).
    fn risk_bounds(&self) -> Option<&RiskBounds> {
        None
    }
}

/// A criterion whose exact cost is cheap (a closed form, one `sqrt`, `ln`).
struct Exact<F>(F);

impl<F: Fn(f64, f64) -> f64> PairCost for Exact<F> {
    const BOUNDED: bool = false;
    #[inline(always)]
    fn cost(&self, wp: f64, wn: f64) -> f64 {
        (self.0)(wp, wn)
    }
    #[inline(always)]
    fn bounds(&self, _: f64, _: f64) -> Option<(f64, f64)> {
        None
    }
}

/// The tempered criterion with its table of bounds.
struct Bounded<'a> {
    crit: Criterion,
    rb: &'a RiskBounds,
}

impl PairCost for Bounded<'_> {
    const BOUNDED: bool = true;
    #[inline]
    fn cost(&self, wp: f64, wn: f64) -> f64 {
        self.crit.cost(wp, wn)
    }
    #[inline(always)]
    fn bounds(&self, wp: f64, wn: f64) -> Option<(f64, f64)> {
        Some(self.rb.cost_bounds(wp, wn))
    }
    #[inline(always)]
    fn risk_bounds(&self) -> Option<&RiskBounds> {
        Some(self.rb)
    }
}

/// A candidate of the width-2 scan whose gain is known exactly or only within bounds.
#[derive(Clone, Copy)]
struct Lazy {
    bin: usize,
    missing_left: bool,
    /// The prefix sums of the value bins up to `bin`.
    a: (f64, f64),
    lo: f64,
    hi: f64,
    exact: bool,
}

impl Lazy {
    /// The exact gain (computed once), with the generic scan's arithmetic.
    #[inline]
    fn exact<C: PairCost>(&mut self, cost: &C, ctx: &SearchCtx<'_>, miss: (f64, f64), total: (f64, f64)) -> f64 {
        if !self.exact {
            let (x0, x1) = if self.missing_left { miss } else { (0.0, 0.0) };
            let l = (self.a.0 + x0, self.a.1 + x1);
            let r = (residue_free(total.0 - l.0, ctx.tol), residue_free(total.1 - l.1, ctx.tol));
            let g = ctx.parent_cost - cost.cost(l.0, l.1) - cost.cost(r.0, r.1);
            (self.lo, self.hi, self.exact) = (g, g, true);
        }
        self.lo
    }

    /// The `lowest` rule's lazy decision: does this fresh candidate replace the kept one `k`
    /// (gain above `k`'s by more than `tol`)? From the intervals when they separate (widened by
    /// `margin`), else from the exact gains, each computed once. `scan_pair` and
    /// [`SearchCtx::lowest_bounded`] both decide with it.
    #[inline]
    fn replaces<C: PairCost>(
        &mut self,
        k: &mut Lazy,
        cost: &C,
        ctx: &SearchCtx<'_>,
        (tol, margin): (f64, f64),
        miss: (f64, f64),
        total: (f64, f64),
    ) -> bool {
        if self.exact && k.exact {
            self.lo > k.lo + tol
        } else if self.hi < k.lo + tol - margin {
            false
        } else if self.lo > k.hi + tol + margin {
            true
        } else {
            let kg = k.exact(cost, ctx, miss, total);
            self.exact(cost, ctx, miss, total) > kg + tol
        }
    }
}

/// What [`SearchCtx::lowest_bounded`] needs to bound one candidate's gain (session 7).
struct GainBounds<'a> {
    rb: &'a RiskBounds,
    t0: f64,
    t1: f64,
    tol: f64,
    parent: f64,
    min_w: f64,
    forbid: bool,
    margin: f64,
}

impl GainBounds<'_> {
    /// `scan_pair`'s interval `[P − hi_l − hi_r − m, P − lo_l − lo_r + m]` of the gain of the
    /// split whose left child has sums `(l0, l1)`, or NaNs when the split is not admissible
    /// ([`admissible`]'s comparisons without short-circuits).
    #[inline(always)]
    fn interval(&self, l0: f64, l1: f64) -> (f64, f64) {
        let tol = self.tol;
        let (r0, r1) = (residue_free(self.t0 - l0, tol), residue_free(self.t1 - l1, tol));
        let (wl, wr) = (l0 + l1, r0 + r1);
        let sides_ok = (l0 > tol) & (l1 > tol) & (r0 > tol) & (r1 > tol);
        let ok = (wl > tol) & (wr > tol) & (wl >= self.min_w) & (wr >= self.min_w) & (!self.forbid | sides_ok);
        let (ll, lh) = self.rb.cost_bounds(l0, l1);
        let (rl, rh) = self.rb.cost_bounds(r0, r1);
        let (lo, hi) = (self.parent - lh - rh - self.margin, self.parent - ll - rl + self.margin);
        if ok {
            (lo, hi)
        } else {
            (f64::NAN, f64::NAN)
        }
    }
}

/// What [`SearchCtx::lowest_exact`] needs to compute one candidate's exact gain (session 8: a
/// struct rather than a closure, so that the gain pass inlines into its AVX2 build, [`simd`]).
struct ExactGain<'a, C> {
    cost: &'a C,
    t0: f64,
    t1: f64,
    tol: f64,
    parent: f64,
    min_w: f64,
    forbid: bool,
}

impl<C: PairCost> ExactGain<'_, C> {
    /// The gain of the split whose left child has sums `(l0, l1)`, or NaN when the split is not
    /// admissible ([`admissible`]'s comparisons without short-circuits).
    #[inline(always)]
    fn gain(&self, l0: f64, l1: f64) -> f64 {
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

/// The split scan's per-candidate passes compiled twice (session 8, issue 18): for the baseline
/// x86-64 target (SSE2: two `f64` lanes) and, chosen at run time, for AVX2 (four lanes). The
/// two builds run the same Rust code: IEEE `+ − × ÷ √` and comparisons are correctly rounded
/// lane by lane, Rust never contracts `a·b + c` into an FMA (and FMA is not enabled here), and
/// the passes write each candidate's value independently (no reduction whose order the vector
/// width could change), so both builds give the same bits — `issue_18_simd_passes_equal_the_
/// scalar_passes` checks it. The wheel and the binaries stay built for any x86-64.
///
/// `BOOSTLAB_SCAN_SIMD=0` in the environment (read once per process) keeps the baseline build,
/// for A/B timing.
mod simd {
    use super::{ExactGain, GainBounds, PairCost};

    /// Whether the AVX2 build runs (detected once per process).
    #[cfg(target_arch = "x86_64")]
    pub(super) fn avx2() -> bool {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *ON.get_or_init(|| {
            std::is_x86_feature_detected!("avx2") && std::env::var("BOOSTLAB_SCAN_SIMD").map_or(true, |v| v != "0")
        })
    }

    /// [`super::SearchCtx::lowest_exact`]'s pass 2: every candidate's exact gain into `out`
    /// (`acc.len()` or, with a missing side, `2·acc.len()` values, in the generic scan's order).
    #[inline(always)]
    fn exact_gains_body<C: PairCost>(
        g: &ExactGain<'_, C>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        out: &mut [f64],
    ) {
        // `+ 0.0`: the generic scan adds the (empty) missing side's zeros too (a −0 becomes +0).
        match miss {
            None => {
                for (o, &(a0, a1)) in out.iter_mut().zip(acc) {
                    *o = g.gain(a0 + 0.0, a1 + 0.0);
                }
            }
            Some((m0, m1)) => {
                for (o, &(a0, a1)) in out.chunks_exact_mut(2).zip(acc) {
                    o[0] = g.gain(a0 + 0.0, a1 + 0.0);
                    o[1] = g.gain(a0 + m0, a1 + m1);
                }
            }
        }
    }

    /// [`super::SearchCtx::lowest_bounded`]'s pass 2: every candidate's gain interval into
    /// `los`, `his`, in the generic scan's order.
    #[inline(always)]
    fn gain_intervals_body(
        b: &GainBounds<'_>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        los: &mut [f64],
        his: &mut [f64],
    ) {
        match miss {
            None => {
                for ((lo, hi), &(a0, a1)) in los.iter_mut().zip(his.iter_mut()).zip(acc) {
                    (*lo, *hi) = b.interval(a0 + 0.0, a1 + 0.0);
                }
            }
            Some((m0, m1)) => {
                for ((lo, hi), &(a0, a1)) in los.chunks_exact_mut(2).zip(his.chunks_exact_mut(2)).zip(acc) {
                    (lo[0], hi[0]) = b.interval(a0 + 0.0, a1 + 0.0);
                    (lo[1], hi[1]) = b.interval(a0 + m0, a1 + m1);
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    pub(super) fn exact_gains_avx2<C: PairCost>(
        g: &ExactGain<'_, C>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        out: &mut [f64],
    ) {
        exact_gains_body(g, acc, miss, out);
    }

    /// [`gain_intervals`] with AVX2: the left children's sums staged in `los`/`his` in the generic
    /// scan's order, then four candidates at a time by [`GainBounds::interval_x4`] (the table
    /// reads are gathers, which the compiler does not generate from the scalar code), the last
    /// ones by [`GainBounds::interval`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[allow(unsafe_code)]
    pub(super) fn gain_intervals_avx2(
        b: &GainBounds<'_>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        los: &mut [f64],
        his: &mut [f64],
    ) {
        use std::arch::x86_64::{_mm256_set_pd, _mm256_storeu_pd};
        // `+ 0.0`: the generic scan adds the (empty) missing side's zeros too (a −0 becomes +0).
        match miss {
            None => {
                for ((l0, l1), &(a0, a1)) in los.iter_mut().zip(his.iter_mut()).zip(acc) {
                    (*l0, *l1) = (a0 + 0.0, a1 + 0.0);
                }
            }
            Some((m0, m1)) => {
                for ((l0, l1), &(a0, a1)) in los.chunks_exact_mut(2).zip(his.chunks_exact_mut(2)).zip(acc) {
                    (l0[0], l0[1], l1[0], l1[1]) = (a0 + 0.0, a0 + m0, a1 + 0.0, a1 + m1);
                }
            }
        }
        let mut lc = los.chunks_exact_mut(4);
        let mut hc = his.chunks_exact_mut(4);
        for (l, h) in (&mut lc).zip(&mut hc) {
            let (lo, hi) = b.interval_x4(_mm256_set_pd(l[3], l[2], l[1], l[0]), _mm256_set_pd(h[3], h[2], h[1], h[0]));
            // SAFETY: `l` and `h` are chunks of exactly four `f64`.
            unsafe {
                _mm256_storeu_pd(l.as_mut_ptr(), lo);
                _mm256_storeu_pd(h.as_mut_ptr(), hi);
            }
        }
        for (l, h) in lc.into_remainder().iter_mut().zip(hc.into_remainder()) {
            (*l, *h) = b.interval(*l, *h);
        }
    }

    /// The baseline build of [`exact_gains`] (tests compare the two).
    pub(super) fn exact_gains_scalar<C: PairCost>(
        g: &ExactGain<'_, C>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        out: &mut [f64],
    ) {
        exact_gains_body(g, acc, miss, out);
    }

    /// The baseline build of [`gain_intervals`] (tests compare the two).
    pub(super) fn gain_intervals_scalar(
        b: &GainBounds<'_>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        los: &mut [f64],
        his: &mut [f64],
    ) {
        gain_intervals_body(b, acc, miss, los, his);
    }

    /// Every candidate's exact gain, by the AVX2 build when the CPU has it.
    #[allow(unsafe_code)]
    pub(super) fn exact_gains<C: PairCost>(
        g: &ExactGain<'_, C>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        out: &mut [f64],
    ) {
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: the CPU supports AVX2 (`is_x86_feature_detected!` in `avx2`), the only
            // requirement of calling a `#[target_feature(enable = "avx2")]` function.
            unsafe { exact_gains_avx2(g, acc, miss, out) };
            return;
        }
        exact_gains_scalar(g, acc, miss, out);
    }

    /// Every candidate's gain interval, by the AVX2 build when the CPU has it.
    #[allow(unsafe_code)]
    pub(super) fn gain_intervals(
        b: &GainBounds<'_>,
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        los: &mut [f64],
        his: &mut [f64],
    ) {
        #[cfg(target_arch = "x86_64")]
        if avx2() {
            // SAFETY: as in `exact_gains`.
            unsafe { gain_intervals_avx2(b, acc, miss, los, his) };
            return;
        }
        gain_intervals_scalar(b, acc, miss, los, his);
    }
}

#[cfg(target_arch = "x86_64")]
impl GainBounds<'_> {
    /// [`Self::interval`] of four candidates with AVX2 (session 8): the same operations in the same
    /// order lane by lane (ordered comparisons, false on NaN as Rust's; selects as blends), hence
    /// the same bits; the children's bounds by [`RiskBounds::cost_bounds_x4`].
    #[inline]
    #[target_feature(enable = "avx2")]
    fn interval_x4(
        &self,
        l0: std::arch::x86_64::__m256d,
        l1: std::arch::x86_64::__m256d,
    ) -> (std::arch::x86_64::__m256d, std::arch::x86_64::__m256d) {
        use std::arch::x86_64::*;
        let tol = _mm256_set1_pd(self.tol);
        let zero = _mm256_setzero_pd();
        let residue_free = |d: __m256d| _mm256_blendv_pd(d, zero, _mm256_cmp_pd::<_CMP_LE_OQ>(d, tol));
        let r0 = residue_free(_mm256_sub_pd(_mm256_set1_pd(self.t0), l0));
        let r1 = residue_free(_mm256_sub_pd(_mm256_set1_pd(self.t1), l1));
        let (wl, wr) = (_mm256_add_pd(l0, l1), _mm256_add_pd(r0, r1));
        let min_w = _mm256_set1_pd(self.min_w);
        let mut ok = _mm256_and_pd(
            _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(wl, tol), _mm256_cmp_pd::<_CMP_GT_OQ>(wr, tol)),
            _mm256_and_pd(_mm256_cmp_pd::<_CMP_GE_OQ>(wl, min_w), _mm256_cmp_pd::<_CMP_GE_OQ>(wr, min_w)),
        );
        if self.forbid {
            let sides = _mm256_and_pd(
                _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(l0, tol), _mm256_cmp_pd::<_CMP_GT_OQ>(l1, tol)),
                _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(r0, tol), _mm256_cmp_pd::<_CMP_GT_OQ>(r1, tol)),
            );
            ok = _mm256_and_pd(ok, sides);
        }
        let (ll, lh) = self.rb.cost_bounds_x4(l0, l1);
        let (rl, rh) = self.rb.cost_bounds_x4(r0, r1);
        let (parent, margin) = (_mm256_set1_pd(self.parent), _mm256_set1_pd(self.margin));
        let lo = _mm256_sub_pd(_mm256_sub_pd(_mm256_sub_pd(parent, lh), rh), margin);
        let hi = _mm256_add_pd(_mm256_sub_pd(_mm256_sub_pd(parent, ll), rl), margin);
        let nan = _mm256_set1_pd(f64::NAN);
        (_mm256_blendv_pd(nan, lo, ok), _mm256_blendv_pd(nan, hi, ok))
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
    /// the best one (`lowest`), or every one within the tolerance of the best (`random`), in scan
    /// order.
    fn best_for_feature(&self, f: usize, hist_f: &[f64], total: &[f64], allowed: Option<&[u32]>) -> Vec<Candidate> {
        if self.width == 2 && matches!(self.mapper.features[f], FeatureBins::Numeric { .. }) {
            // Issue 18: the common case (one output, numeric feature) has its own scan.
            return match (self.criterion, self.bounds) {
                (Criterion::Tempered { .. }, Some(rb)) => {
                    self.scan_pair(&Bounded { crit: self.criterion, rb }, f, hist_f, total, allowed)
                }
                (Criterion::Empirical, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Empirical.cost(p, n)), f, hist_f, total, allowed)
                }
                (Criterion::Gini, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Gini.cost(p, n)), f, hist_f, total, allowed)
                }
                (Criterion::Entropy, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Entropy.cost(p, n)), f, hist_f, total, allowed)
                }
                (Criterion::Matusita, _) => {
                    self.scan_pair(&Exact(|p, n| Criterion::Matusita.cost(p, n)), f, hist_f, total, allowed)
                }
                (c @ Criterion::Tempered { .. }, None) => {
                    self.scan_pair(&Exact(|p, n| c.cost(p, n)), f, hist_f, total, allowed)
                }
            };
        }
        if self.width > 2 && matches!(self.mapper.features[f], FeatureBins::Numeric { .. }) {
            // Session 8 (issue 18): several outputs (AdaBoost.MH's 2k-wide blocks), numeric feature.
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

    /// The numeric scan of several outputs (session 8, issue 18): the candidates of
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
        let mut best: Vec<Candidate> = Vec::new();
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
                offer(&mut best, self.ties, self.tol, gain, &|| Candidate { gain, feature: f, kind: kind.clone() });
            }
        }
        SCAN_OUTPUTS.set(buf);
        best
    }

    /// [`Self::best_for_feature`] for any width and feature kind: the reference of the width-2
    /// numeric scan ([`Self::scan_pair`]), which must return the same candidates bit for bit.
    fn best_for_feature_generic(
        &self,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
    ) -> Vec<Candidate> {
        let w = self.width;
        let nb = hist_f.len() / w;
        let miss = &hist_f[(nb - 1) * w..];
        let mut best: Vec<Candidate> = Vec::new();
        let mut left = vec![0.0; w];
        let mut right = vec![0.0; w];
        let consider = |gain: f64, kind: &dyn Fn() -> CandKind, best: &mut Vec<Candidate>| {
            offer(best, self.ties, self.tol, gain, &|| Candidate { gain, feature: f, kind: kind() });
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
                        if !admissible(&left, &right, self.min_w, self.pure, self.tol) {
                            continue;
                        }
                        let gain =
                            self.parent_cost - block_cost(&self.criterion, &left) - block_cost(&self.criterion, &right);
                        consider(gain, &|| CandKind::Numeric { bin: b, missing_left }, &mut best);
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
                        // Fractions equal in exact arithmetic (every category of single-label data
                        // has the fraction 1/k in AdaBoost.MH's first round) differ by rounding
                        // residues only, which the order of summation decides (issue 13: sums over
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
                    if !admissible(&left, &right, self.min_w, self.pure, self.tol) {
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
        best
    }

    /// The width-2 numeric scan (issue 18): the same candidates, in the same order, with the same
    /// arithmetic and the same tie rule as [`Self::best_for_feature_generic`], so the same result
    /// bit for bit; faster because it works on scalars, and because with a [`Bounded`] cost the
    /// exact cost runs only where cheap bounds cannot decide.
    ///
    /// **Why pruning keeps the result.** Let `g̃` be a candidate's gain as the generic scan
    /// computes it, `fl(fl(P − C̃_l) − C̃_r)`. From bounds `lo ≤ C̃ ≤ hi` of both children
    /// ([`RiskBounds`]), `[P − hi_l − hi_r − m, P − lo_l − lo_r + m]` contains `g̃`, where the
    /// margin `m = 1e−10 (|P| + W)` covers the rounding of both subtractions and of this interval's
    /// own arithmetic (≤ 4 ulp of `|P| + W_l + W_r ≤ |P| + W(1 + 1e−12)`). The generic scan's
    /// rule (`lowest`) keeps the first candidate and replaces the kept one `k` by a later `i`
    /// exactly when `g̃_i > fl(g̃_k + tol)`. Here that test is decided from the intervals when they
    /// separate by more than `m` (`hi_i < lo_k + tol − m`: no; `lo_i > hi_k + tol + m`: yes —
    /// `m` also covers the rounding of `g̃_k + tol`), and by computing both exact gains
    /// otherwise, so every decision, hence the kept candidate, is the generic scan's; its exact
    /// gain is computed at the end. With `random` ties a candidate is a no-op of the generic scan
    /// when `g̃_i < max_{j<i} g̃_j − tol`; it is skipped when `hi_i < max_{j<i} lo_j − tol − m`,
    /// which implies that, and every other candidate is offered with its exact gain.
    fn scan_pair<C: PairCost>(
        &self,
        cost: &C,
        f: usize,
        hist_f: &[f64],
        total: &[f64],
        allowed: Option<&[u32]>,
    ) -> Vec<Candidate> {
        let nb = hist_f.len() / 2;
        let (m0, m1) = (hist_f[2 * (nb - 1)], hist_f[2 * (nb - 1) + 1]);
        let has_missing = m0 + m1 > 0.0;
        let nonempty = |b: usize| hist_f[2 * b] + hist_f[2 * b + 1] > 0.0;
        // Thresholds are the non-empty value bins but the last one.
        let Some(last) = (0..nb - 1).rev().find(|&b| nonempty(b)) else {
            return Vec::new();
        };
        let (t0, t1) = (total[0], total[1]);
        let (tol, parent) = (self.tol, self.parent_cost);
        let margin = 1e-10 * (parent.abs() + t0 + t1);
        // Pass 1: the thresholds (allowed non-empty value bins but the last) and their prefix
        // sums. Empty bins add +0.0 in the generic scan: the same sums.
        // Session 6: the pass arrays are reused from this thread's last scan (no allocation per
        // feature and node); every element read is written first.
        let (mut bins, mut acc) = (SCAN_BINS.take(), SCAN_ACC.take());
        bins.clear();
        acc.clear();
        let (mut a0, mut a1) = (0.0f64, 0.0f64);
        let mut ord = 0u32;
        if allowed.is_none() {
            // Branch-free (empty bins are data-dependent): every bin is written and only non-empty
            // ones advance the cursor; an empty bin's (+0, +0) leaves the sums unchanged.
            bins.resize(last, 0);
            acc.resize(last, (0.0, 0.0));
            let mut n = 0;
            for b in 0..last {
                let (h0, h1) = (hist_f[2 * b], hist_f[2 * b + 1]);
                a0 += h0;
                a1 += h1;
                bins[n] = b;
                acc[n] = (a0, a1);
                n += usize::from(h0 + h1 > 0.0);
            }
            bins.truncate(n);
            acc.truncate(n);
        }
        for b in (0..last).filter(|_| allowed.is_some()) {
            let (h0, h1) = (hist_f[2 * b], hist_f[2 * b + 1]);
            if h0 + h1 <= 0.0 {
                continue;
            }
            a0 += h0;
            a1 += h1;
            let o = ord;
            ord += 1;
            if allowed.is_some_and(|a| a.binary_search(&o).is_err()) {
                continue;
            }
            bins.push(b);
            acc.push((a0, a1));
        }
        let lowest = self.ties == SplitTies::Lowest;
        if lowest && !C::BOUNDED {
            // Exact gains and the `lowest` rule (Real and discrete AdaBoost's common case): passes
            // 2 and 3 on flat arrays, without the bounds' pairs (session 6).
            let out = self.lowest_exact(cost, f, &bins, &acc, has_missing.then_some((m0, m1)), (t0, t1));
            SCAN_BINS.set(bins);
            SCAN_ACC.set(acc);
            return out;
        }
        if lowest {
            if let Some(rb) = cost.risk_bounds() {
                // t-AdaBoost's common case: flat bounds and a blocked lazy rule (session 7).
                let miss = has_missing.then_some((m0, m1));
                let out = self.lowest_bounded(cost, rb, f, &bins, &acc, miss, (t0, t1), margin);
                SCAN_BINS.set(bins);
                SCAN_ACC.set(acc);
                return out;
            }
        }
        // Pass 2: every candidate's gain (or its bounds), one branch-light loop per missing side;
        // NaN marks an inadmissible candidate (a real gain is finite).
        let sides: &[bool] = if has_missing { &[false, true] } else { &[false] };
        let mut bounds: Vec<[(f64, f64); 2]> = vec![[(f64::NAN, f64::NAN); 2]; acc.len()];
        for (si, &missing_left) in sides.iter().enumerate() {
            let (x0, x1) = if missing_left { (m0, m1) } else { (0.0, 0.0) };
            for (out, &(a0, a1)) in bounds.iter_mut().zip(&acc) {
                let l = (a0 + x0, a1 + x1);
                let r = (residue_free(t0 - l.0, tol), residue_free(t1 - l.1, tol));
                if !admissible(&[l.0, l.1], &[r.0, r.1], self.min_w, self.pure, tol) {
                    continue;
                }
                out[si] = match (cost.bounds(l.0, l.1), cost.bounds(r.0, r.1)) {
                    (Some((ll, lh)), Some((rl, rh))) => (parent - lh - rh - margin, parent - ll - rl + margin),
                    _ => {
                        let g = parent - cost.cost(l.0, l.1) - cost.cost(r.0, r.1);
                        (g, g)
                    }
                };
            }
        }
        // Pass 3: the generic scan's tie rule, in its order (bins, then the missing side).
        let mut kept: Option<Lazy> = None;
        let mut pool: Vec<Candidate> = Vec::new();
        let mut max_lo = f64::NEG_INFINITY;
        for (i, (&b, &(a0, a1))) in bins.iter().zip(&acc).enumerate() {
            for (si, &missing_left) in sides.iter().enumerate() {
                let (lo, hi) = bounds[i][si];
                if lo.is_nan() {
                    continue;
                }
                let mut c = Lazy { bin: b, missing_left, a: (a0, a1), lo, hi, exact: !C::BOUNDED };
                if lowest {
                    let Some(k) = kept.as_mut() else {
                        kept = Some(c);
                        continue;
                    };
                    if c.replaces(k, cost, self, (tol, margin), (m0, m1), (t0, t1)) {
                        kept = Some(c);
                    }
                } else {
                    if c.hi < max_lo - tol - margin {
                        continue;
                    }
                    let g = c.exact(cost, self, (m0, m1), (t0, t1));
                    max_lo = max_lo.max(g);
                    let kind = CandKind::Numeric { bin: b, missing_left };
                    offer(&mut pool, self.ties, tol, g, &|| Candidate { gain: g, feature: f, kind: kind.clone() });
                }
            }
        }
        if let Some(mut k) = kept {
            let gain = k.exact(cost, self, (m0, m1), (t0, t1));
            pool.push(Candidate {
                gain,
                feature: f,
                kind: CandKind::Numeric { bin: k.bin, missing_left: k.missing_left },
            });
        }
        SCAN_BINS.set(bins);
        SCAN_ACC.set(acc);
        pool
    }

    /// [`Self::scan_pair`]'s passes 2 and 3 for an exact cost and the `lowest` tie rule (session 6,
    /// Real and discrete AdaBoost's common case). Pass 2 writes every candidate's gain into one
    /// flat array in the generic scan's order (bins, then the missing side: `miss` holds the
    /// missing bin's sums when it is not empty), branch-free — an inadmissible candidate is NaN,
    /// the admissibility test is [`admissible`]'s comparisons without short-circuits. Pass 3 is the
    /// rule "a later gain replaces the kept one when `g > kept + tol`", over blocks of
    /// [`GAIN_BLOCK`] gains: the kept gain changes only by a replacement, so a block whose largest
    /// gain (NaN ignored) is not above `kept + tol` replaces nothing and is skipped after a
    /// reduction with independent chains; any other block runs the rule gain by gain. Same kept
    /// candidate and gain bits as the serial rule, hence as the generic scan.
    fn lowest_exact<C: PairCost>(
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
        gains.clear();
        let ns = if miss.is_some() { 2 } else { 1 };
        gains.resize(acc.len() * ns, 0.0);
        // Session 8: the pass compiled for AVX2 when the CPU has it (same bits, see `simd`).
        simd::exact_gains(&gain, acc, miss, &mut gains);
        let (mut kg, mut kj) = (f64::NEG_INFINITY, usize::MAX);
        for (bi, block) in gains.chunks(GAIN_BLOCK).enumerate() {
            // NaN (inadmissible) never compares greater; the first finite gain beats −∞. Neither
            // side is NaN here (`block_max` skips NaN, `kg` is −∞ or a kept gain).
            if block_max(block) <= kg + tol {
                continue;
            }
            for (o, &g) in block.iter().enumerate() {
                let better = g > kg + tol;
                kg = if better { g } else { kg };
                kj = if better { bi * GAIN_BLOCK + o } else { kj };
            }
        }
        SCAN_GAINS.set(gains);
        if kj == usize::MAX {
            return Vec::new();
        }
        let kind = CandKind::Numeric { bin: bins[kj / ns], missing_left: kj % ns == 1 };
        vec![Candidate { gain: kg, feature: f, kind }]
    }

    /// [`Self::scan_pair`]'s passes 2 and 3 for a bounded cost (the tempered criterion) and the
    /// `lowest` tie rule (session 7, t-AdaBoost's common case), with the same decisions as
    /// `scan_pair`'s lazy rule, hence the generic scan's candidate and gain bits.
    ///
    /// Pass 2 writes every candidate's gain interval `[lo, hi]` (`scan_pair`'s, from
    /// [`RiskBounds::cost_bounds`] of both children, widened by `margin`) into two flat arrays in
    /// the generic scan's order (bins, then the missing side), branch-free: an inadmissible
    /// candidate is NaN, the admissibility test is [`admissible`]'s comparisons without
    /// short-circuits, as in [`Self::lowest_exact`]. Pass 3 is the lazy rule of `scan_pair` over
    /// blocks of [`GAIN_BLOCK`] candidates: its first test, "`hi < k.lo + tol − margin`: not a
    /// replacement", leaves the kept candidate `k` untouched, so a block whose largest `hi`
    /// (NaN ignored) is below `k.lo + tol − margin` passes that test for each of its candidates
    /// and is skipped whole; any other block runs the rule candidate by candidate.
    #[allow(clippy::too_many_arguments)]
    fn lowest_bounded<C: PairCost>(
        &self,
        cost: &C,
        rb: &RiskBounds,
        f: usize,
        bins: &[usize],
        acc: &[(f64, f64)],
        miss: Option<(f64, f64)>,
        (t0, t1): (f64, f64),
        margin: f64,
    ) -> Vec<Candidate> {
        let (tol, parent, min_w) = (self.tol, self.parent_cost, self.min_w);
        let forbid = self.pure == PureLeaves::Forbid;
        let bounds = GainBounds { rb, t0, t1, tol, parent, min_w, forbid, margin };
        let (mut los, mut his) = (SCAN_GAINS.take(), SCAN_HI.take());
        los.clear();
        his.clear();
        // `+ 0.0`: the generic scan adds the (empty) missing side's zeros too (a −0 becomes +0).
        let (m0, m1) = miss.unwrap_or((0.0, 0.0));
        let ns = if miss.is_some() { 2 } else { 1 };
        los.resize(acc.len() * ns, 0.0);
        his.resize(acc.len() * ns, 0.0);
        // Session 8: the pass compiled for AVX2 when the CPU has it (same bits, see `simd`).
        simd::gain_intervals(&bounds, acc, miss, &mut los, &mut his);
        let mut kept: Option<Lazy> = None;
        for (bi, (blo, bhi)) in los.chunks(GAIN_BLOCK).zip(his.chunks(GAIN_BLOCK)).enumerate() {
            // `k.lo` changes only within the rule's other tests, which no candidate of a skipped
            // block reaches.
            if kept.as_ref().is_some_and(|k| block_max(bhi) < k.lo + tol - margin) {
                continue;
            }
            for (o, (&lo, &hi)) in blo.iter().zip(bhi).enumerate() {
                if lo.is_nan() {
                    continue;
                }
                let idx = bi * GAIN_BLOCK + o;
                let mut c =
                    Lazy { bin: bins[idx / ns], missing_left: idx % ns == 1, a: acc[idx / ns], lo, hi, exact: false };
                let Some(k) = kept.as_mut() else {
                    kept = Some(c);
                    continue;
                };
                // `scan_pair`'s lazy rule (a fresh candidate is never exact).
                if c.replaces(k, cost, self, (tol, margin), (m0, m1), (t0, t1)) {
                    kept = Some(c);
                }
            }
        }
        SCAN_GAINS.set(los);
        SCAN_HI.set(his);
        let Some(mut k) = kept else {
            return Vec::new();
        };
        let gain = k.exact(cost, self, (m0, m1), (t0, t1));
        vec![Candidate { gain, feature: f, kind: CandKind::Numeric { bin: k.bin, missing_left: k.missing_left } }]
    }

    /// Best split over all features of a node with histogram `hist` and sums `total`.
    fn best_split(
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
            let counts: Vec<usize> = (0..bm.n_features).map(|f| n_candidates(slice(f), w, numeric(f))).collect();
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
        let eval = |f: usize| self.best_for_feature(f, slice(f), total, allowed.as_ref().map(|a| a[f].as_slice()));
        let found: Vec<Vec<Candidate>> = if n_rows * bm.n_features >= PARALLEL_CELLS {
            (0..bm.n_features).into_par_iter().map(eval).collect()
        } else {
            (0..bm.n_features).map(eval).collect()
        };
        // SPEC §2.1: ties go to the lowest feature index, or (random) to a seeded uniform draw
        // among the candidates within the tolerance of the best, in feature then scan order.
        let mut best: Vec<Candidate> = Vec::new();
        for c in found.into_iter().flatten() {
            offer(&mut best, self.ties, self.tol, c.gain, &|| c.clone());
        }
        if best.len() > 1 {
            let max = best.iter().map(|c| c.gain).fold(f64::NEG_INFINITY, f64::max);
            best.retain(|c| c.gain >= max - self.tol);
            let i = tie_winner(seed, serial, best.len());
            return Some(best.swap_remove(i));
        }
        best.pop()
    }
}

/// A signed statistic's histogram slot (0 = `W+`, 1 = `W−`, by the sign bit) and magnitude.
#[inline(always)]
fn slot(s: f64) -> (usize, f64) {
    let bits = s.to_bits();
    ((bits >> 63) as usize, f64::from_bits(bits & !(1 << 63)))
}

/// Adds the statistics of `rows` (or of every row, with `ordered` = all statistics) into the
/// histogram of one feature (`2k` per bin): one signed statistic per row when `k = 1`, `k`
/// statistics expanded to `(W+, W−)` pairs (`2k` per row) otherwise.
///
/// With signed statistics only the side named by the sign is added to: the other side of the
/// pair would receive `+0.0`, which leaves a sum of non-negative terms unchanged, so the histogram
/// is bit-identical to one built from pairs.
#[inline]
fn accumulate<B: Copy + Into<usize>>(col: &[B], rows: Option<&[u32]>, ordered: &[f64], k: usize, h: &mut [f64]) {
    match (rows, k) {
        (None, 1) => {
            for (&b, &s) in col.iter().zip(ordered) {
                let (side, v) = slot(s);
                h[b.into() * 2 + side] += v;
            }
        }
        (Some(rows), 1) => {
            for (&r, &s) in rows.iter().zip(ordered) {
                let (side, v) = slot(s);
                h[col[r as usize].into() * 2 + side] += v;
            }
        }
        // Several outputs: `ordered` holds `(W+, W−)` pairs (see `build_histogram`), added as one
        // contiguous block per bin (vectorised).
        (None, k) => {
            let w = 2 * k;
            for (&b, s) in col.iter().zip(ordered.chunks_exact(w)) {
                let b = b.into() * w;
                for (x, y) in h[b..b + w].iter_mut().zip(s) {
                    *x += y;
                }
            }
        }
        (Some(rows), k) => {
            let w = 2 * k;
            for (&r, s) in rows.iter().zip(ordered.chunks_exact(w)) {
                let b = col[r as usize].into() * w;
                for (x, y) in h[b..b + w].iter_mut().zip(s) {
                    *x += y;
                }
            }
        }
    }
}

/// Rows per block of the histogram kernel: a block's statistics (`ROW_BLOCK × k` f64, 64 KiB for
/// binary boosters) stay in cache while every feature of a group reads them.
const ROW_BLOCK: usize = 8192;

/// Builds the histogram (`2k` sums per bin) of `rows` (all rows when `None`); `ordered` holds their
/// signed statistics (`k` per row) in the same order.
///
/// Features are split into groups, one parallel task per group; a task walks the rows in blocks
/// and, for each block, adds it into the histogram of every feature of its group, so the
/// statistics are read from memory once per group instead of once per feature. Within a feature
/// every sum still runs in row order, so the result does not depend on the grouping or on the
/// number of threads.
pub(crate) fn build_histogram(bm: &BinnedMatrix, rows: Option<&[u32]>, ordered: &[f64], k: usize, hist: &mut [f64]) {
    let width = 2 * k;
    let n = bm.n_rows;
    let n_node = rows.map_or(n, <[u32]>::len);
    let parallel = n_node * bm.n_features >= PARALLEL_CELLS;
    let n_groups = if parallel { (2 * rayon::current_num_threads()).clamp(1, bm.n_features.max(1)) } else { 1 };
    let per_group = bm.n_features.div_ceil(n_groups.max(1)).max(1);
    // Split the histogram into per-group slices (each a run of whole features).
    let mut groups: Vec<(usize, &mut [f64])> = Vec::with_capacity(n_groups);
    let mut rest = hist;
    let mut f0 = 0;
    while f0 < bm.n_features {
        let f1 = (f0 + per_group).min(bm.n_features);
        let (a, b) = rest.split_at_mut((bm.offsets[f1] - bm.offsets[f0]) * width);
        groups.push((f0, a));
        rest = b;
        f0 = f1;
    }
    let one = |(f0, h): (usize, &mut [f64])| {
        let f1 = (f0 + per_group).min(bm.n_features);
        let base = bm.offsets[f0];
        if let (BinData::U8(v), 1) = (&bm.data, k) {
            // The common case (byte bins, one output) accumulates into fixed 512-slot arrays, so
            // that a bin index (≤ 255) and a side (≤ 1) need no bounds check; same sums, same order.
            // Up to MULTI features per pass over a block, in passes of equal size.
            // Session 7: the accumulators are this thread's (no allocation per histogram: a
            // fresh 4 KiB per feature was mapped, page-faulted and zeroed even for a 20-row node).
            let mut local = U8_ACC.take();
            local.clear();
            local.resize(f1 - f0, [0.0f64; 512]);
            let passes = (f1 - f0).div_ceil(MULTI).max(1);
            let per_pass = (f1 - f0).div_ceil(passes);
            for start in (0..n_node).step_by(ROW_BLOCK) {
                let end = (start + ROW_BLOCK).min(n_node);
                let st = &ordered[start..end];
                let mut f = f0;
                for group in local.chunks_mut(per_pass) {
                    let cols: Vec<&[u8]> = (f..f + group.len())
                        .map(|g| {
                            let c = &v[g * n..(g + 1) * n];
                            if rows.is_some() {
                                c
                            } else {
                                &c[start..end]
                            }
                        })
                        .collect();
                    accumulate_u8_group(&cols, rows.map(|r| &r[start..end]), st, group);
                    f += group.len();
                }
            }
            for (f, acc) in (f0..f1).zip(&local) {
                let hf = &mut h[(bm.offsets[f] - base) * width..(bm.offsets[f + 1] - base) * width];
                hf.copy_from_slice(&acc[..hf.len()]);
            }
            if local.capacity() <= U8_ACC_KEPT {
                U8_ACC.set(local);
            }
            return;
        }
        if let BinData::U8(v) = &bm.data {
            // Byte bins and several outputs: one (W+, W−) histogram per output (issue 18).
            histogram_u8_outputs(v, n, (f0, f1), &bm.offsets, rows, ordered, k, h);
            return;
        }
        h.fill(0.0);
        let mut pairs = Vec::new();
        for start in (0..n_node).step_by(ROW_BLOCK) {
            let end = (start + ROW_BLOCK).min(n_node);
            let mut st = &ordered[start * k..end * k];
            if k > 1 {
                // Several outputs: expand the block's signed statistics to (W+, W−) pairs once, so
                // that every feature adds a contiguous 2k-wide block per row.
                pairs.clear();
                pairs.extend(st.iter().flat_map(|&s| {
                    let (side, v) = slot(s);
                    if side == 0 {
                        [v, 0.0]
                    } else {
                        [0.0, v]
                    }
                }));
                st = &pairs;
            }
            let blk = rows.map(|r| &r[start..end]);
            for f in f0..f1 {
                let hf = &mut h[(bm.offsets[f] - base) * width..(bm.offsets[f + 1] - base) * width];
                match &bm.data {
                    BinData::U8(v) => accumulate_block(&v[f * n..(f + 1) * n], start, blk, st, k, hf),
                    BinData::U16(v) => accumulate_block(&v[f * n..(f + 1) * n], start, blk, st, k, hf),
                }
            }
        }
    };
    if parallel {
        groups.into_par_iter().for_each(one);
    } else {
        groups.into_iter().for_each(one);
    }
}

/// Rows per block of [`histogram_u8_outputs`]: a block's statistics, one contiguous run per output
/// (`OUTPUT_BLOCK × k` f64: 224 KiB for 7 outputs), and its gathered bins stay in L2.
const OUTPUT_BLOCK: usize = 4096;

/// Rows per tile of [`histogram_u8_outputs`]' transposition (`TILE × k` f64 read from L1).
const TILE: usize = 64;

/// Byte bins and `k > 1` outputs (issue 18): adds the statistics of `rows` (all rows when `None`;
/// `ordered` holds their `k` signed statistics each, in the same order) into the histogram `h` of
/// the features `f0..f1` (`2k` sums per bin: `(W+, W−)` for output 0, then output 1, …).
///
/// As LightGBM keeps one histogram per class, each output gets its own 512-slot `(W+, W−)`
/// histogram per feature, filled two outputs at a time by [`accumulate_u8_two_outputs`] (up to
/// `MULTI / 2` features per pass, the pair's histograms in L1; an odd last output by the
/// one-output kernel [`accumulate_u8_group`]): per block of rows, the bins of the listed rows are
/// gathered once, the statistics are transposed to one contiguous run per output, then every
/// pair of outputs adds its runs. A row adds `k` values per feature, only on the side its signs name — the
/// former kernel added a `2k`-wide block whose other half was `+0.0`, which changes no sum of
/// non-negative terms. Every (feature, output, side) sum runs in row order, so the histogram is
/// bit-identical to it (and to the naive one) whatever the grouping and the thread count.
#[allow(clippy::too_many_arguments)]
fn histogram_u8_outputs(
    v: &[u8],
    n: usize,
    (f0, f1): (usize, usize),
    offsets: &[usize],
    rows: Option<&[u32]>,
    ordered: &[f64],
    k: usize,
    h: &mut [f64],
) {
    let nf = f1 - f0;
    let n_node = rows.map_or(n, <[u32]>::len);
    let cap = OUTPUT_BLOCK.min(n_node).max(1);
    // Session 8: the accumulators, the transposed statistics and the gathered bins are this
    // thread's, reused across groups, nodes and rounds (fresh, they were 0.4–1.7 MiB a group
    // with 26 outputs: mapped, page-faulted and zeroed at every node). Every accumulator slot
    // the interleave reads is zeroed here (a feature's bins), every `st` and `bins` element read
    // is written first in its block.
    let (mut kept, mut st, mut bins) = (U8_OUT_ACC.take(), U8_OUT_ST.take(), U8_OUT_BINS.take());
    if kept.len() < k * nf {
        kept.resize(k * nf, [0.0f64; 512]);
    }
    // local[j * nf + g]: output j, feature f0 + g.
    let local = &mut kept[..k * nf];
    for (i, acc) in local.iter_mut().enumerate() {
        let f = f0 + i % nf.max(1);
        acc[..2 * (offsets[f + 1] - offsets[f])].fill(0.0);
    }
    let passes = nf.div_ceil(MULTI).max(1);
    let per_pass = nf.div_ceil(passes).max(1);
    let stride = cap + 8;
    st.clear();
    st.resize(stride * k, 0.0);
    bins.clear();
    bins.resize(if rows.is_some() { cap * nf } else { 0 }, 0);
    for start in (0..n_node).step_by(cap) {
        let end = (start + cap).min(n_node);
        let len = end - start;
        if let Some(rows) = rows {
            // The node's rows are scattered: gather their bins once, then every output reads them
            // contiguously.
            for (g, dst) in bins.chunks_exact_mut(cap).enumerate() {
                let col = &v[(f0 + g) * n..(f0 + g + 1) * n];
                for (d, &r) in dst[..len].iter_mut().zip(&rows[start..end]) {
                    *d = col[r as usize];
                }
            }
        }
        // Output-major statistics of the block: st[j * stride + i] = statistic j of the block's
        // row i. In tiles of TILE rows (read from L1), each output's run written contiguously; the
        // runs are `stride` apart, not a multiple of 4 KiB, so that they do not share cache sets.
        let blk = &ordered[start * k..end * k];
        for t in (0..len).step_by(TILE) {
            let tile = &blk[t * k..(t + TILE).min(len) * k];
            for (j, run) in st.chunks_exact_mut(stride).enumerate() {
                for (d, s) in run[t..].iter_mut().zip(tile.chunks_exact(k)) {
                    *d = s[j];
                }
            }
        }
        let col = |f: usize| -> &[u8] {
            match rows {
                Some(_) => &bins[(f - f0) * cap..(f - f0) * cap + len],
                None => &v[f * n + start..f * n + end],
            }
        };
        let mut cols: Vec<&[u8]> = Vec::with_capacity(MULTI);
        // Two outputs per pass over at most MULTI / 2 features (their 2 × 4 histograms, 32 KiB,
        // stay in L1), so that 2 × 4 add chains overlap and each gathered bin is read once for
        // two outputs. Session 8: for every group size (before, only for groups of ≤ 4 features;
        // wider groups ran one output per pass over up to 8 features).
        let (passes2, paired) = (nf.div_ceil(MULTI / 2).max(1), k / 2 * 2);
        let per2 = nf.div_ceil(passes2).max(1);
        for (p, hs) in local.chunks_exact_mut(2 * nf.max(1)).enumerate() {
            let (h0, h1) = hs.split_at_mut(nf);
            let (j0, j1) = (2 * p * stride, (2 * p + 1) * stride);
            let (s0, s1) = (&st[j0..j0 + len], &st[j1..j1 + len]);
            let mut f = f0;
            for (a, b) in h0.chunks_mut(per2).zip(h1.chunks_mut(per2)) {
                cols.clear();
                cols.extend((f..f + a.len()).map(col));
                accumulate_u8_two_outputs(&cols, [s0, s1], a, b);
                f += a.len();
            }
        }
        for (j, hs) in local.chunks_exact_mut(nf.max(1)).enumerate().skip(paired) {
            let sj = &st[j * stride..j * stride + len];
            let mut f = f0;
            for group in hs.chunks_mut(per_pass) {
                cols.clear();
                cols.extend((f..f + group.len()).map(col));
                accumulate_u8_group(&cols, None, sj, group);
                f += group.len();
            }
        }
    }
    // Interleave into the 2k-wide layout the criteria read.
    let (base, w) = (offsets[f0], 2 * k);
    for f in f0..f1 {
        let hf = &mut h[(offsets[f] - base) * w..(offsets[f + 1] - base) * w];
        for j in 0..k {
            let acc = &local[j * nf + (f - f0)];
            for (cell, pair) in hf.chunks_exact_mut(w).zip(acc.chunks_exact(2)) {
                cell[2 * j] = pair[0];
                cell[2 * j + 1] = pair[1];
            }
        }
    }
    if kept.len() <= U8_OUT_KEPT {
        U8_OUT_ACC.set(kept);
    }
    U8_OUT_ST.set(st);
    U8_OUT_BINS.set(bins);
}

/// Two outputs at once over `N ≤ MULTI / 2` features of a block (consecutive rows of `cols`):
/// adds the statistics `st[0]` into `h0` and `st[1]` into `h1`, each feature's and output's sums in
/// row order, exactly as [`accumulate_u8_multi`] one output at a time.
#[inline]
fn accumulate_u8_two_outputs_n<const N: usize>(
    cols: [&[u8]; N],
    st: [&[f64]; 2],
    h0: &mut [[f64; 512]; N],
    h1: &mut [[f64; 512]; N],
) {
    let len = cols.iter().fold(st[0].len().min(st[1].len()), |m, c| m.min(c.len()));
    let (cols, s0, s1) = (cols.map(|c| &c[..len]), &st[0][..len], &st[1][..len]);
    for i in 0..len {
        let (side0, v0) = slot(s0[i]);
        let (side1, v1) = slot(s1[i]);
        for j in 0..N {
            let b = usize::from(cols[j][i]) * 2;
            h0[j][b + side0] += v0;
            h1[j][b + side1] += v1;
        }
    }
}

/// [`accumulate_u8_two_outputs_n`] over 1 to `MULTI / 2` features: dispatches on the count.
fn accumulate_u8_two_outputs(cols: &[&[u8]], st: [&[f64]; 2], h0: &mut [[f64; 512]], h1: &mut [[f64; 512]]) {
    fn go<const N: usize>(cols: &[&[u8]], st: [&[f64]; 2], h0: &mut [[f64; 512]], h1: &mut [[f64; 512]]) {
        if let (Ok(c), Ok(a), Ok(b)) =
            (<[&[u8]; N]>::try_from(cols), <&mut [[f64; 512]; N]>::try_from(h0), <&mut [[f64; 512]; N]>::try_from(h1))
        {
            accumulate_u8_two_outputs_n(c, st, a, b);
        }
    }
    match cols.len() {
        1 => go::<1>(cols, st, h0, h1),
        2 => go::<2>(cols, st, h0, h1),
        3 => go::<3>(cols, st, h0, h1),
        _ => go::<4>(cols, st, h0, h1),
    }
}

/// Byte bins and one output: adds the statistics `st` of the block's rows (consecutive rows of
/// the columns when `rows` is `None`, else the listed rows) into fixed-size histograms of `N`
/// features at once, so that each statistic is read and decoded once and the features' add chains
/// overlap. A bin (≤ 255) and a side (≤ 1) index a 512-slot array without bounds checks. Each
/// feature's sums run in row order, exactly as one feature at a time.
#[inline]
fn accumulate_u8_multi<const N: usize>(cols: [&[u8]; N], rows: Option<&[u32]>, st: &[f64], hs: &mut [[f64; 512]; N]) {
    match rows {
        None => {
            let len = cols.iter().fold(st.len(), |m, c| m.min(c.len()));
            let (cols, st) = (cols.map(|c| &c[..len]), &st[..len]);
            for i in 0..len {
                let (side, v) = slot(st[i]);
                for j in 0..N {
                    hs[j][usize::from(cols[j][i]) * 2 + side] += v;
                }
            }
        }
        Some(rows) => {
            for (&r, &s) in rows.iter().zip(st) {
                let (side, v) = slot(s);
                let r = r as usize;
                for j in 0..N {
                    hs[j][usize::from(cols[j][r]) * 2 + side] += v;
                }
            }
        }
    }
}

/// Features per pass of [`accumulate_u8_multi`] (their histograms, 4 KiB each, stay in L1).
const MULTI: usize = 8;

/// [`accumulate_u8_multi`] over any number of features (≤ [`MULTI`]): dispatches on the count.
fn accumulate_u8_group(cols: &[&[u8]], rows: Option<&[u32]>, st: &[f64], hs: &mut [[f64; 512]]) {
    fn go<const N: usize>(cols: &[&[u8]], rows: Option<&[u32]>, st: &[f64], hs: &mut [[f64; 512]]) {
        if let (Ok(c), Ok(h)) = (<[&[u8]; N]>::try_from(cols), <&mut [[f64; 512]; N]>::try_from(hs)) {
            accumulate_u8_multi(c, rows, st, h);
        }
    }
    match cols.len() {
        1 => go::<1>(cols, rows, st, hs),
        2 => go::<2>(cols, rows, st, hs),
        3 => go::<3>(cols, rows, st, hs),
        4 => go::<4>(cols, rows, st, hs),
        5 => go::<5>(cols, rows, st, hs),
        6 => go::<6>(cols, rows, st, hs),
        7 => go::<7>(cols, rows, st, hs),
        _ => go::<MULTI>(cols, rows, st, hs),
    }
}

/// Adds one block of rows into a feature's histogram: the block's consecutive rows from `start` of the
/// column when `rows` is `None`, else the listed rows.
#[inline]
fn accumulate_block<B: Copy + Into<usize>>(
    col: &[B],
    start: usize,
    rows: Option<&[u32]>,
    st: &[f64],
    k: usize,
    h: &mut [f64],
) {
    let per_row = if k == 1 { 1 } else { 2 * k };
    match rows {
        None => accumulate(&col[start..start + st.len() / per_row], None, st, k, h),
        Some(r) => accumulate(col, Some(r), st, k, h),
    }
}

/// Stable partition of `rows` by `left_of_bin[col[row]]`; returns the number going left.
fn stable_partition<B: Copy + Into<usize>>(
    col: &[B],
    left_of_bin: &[bool],
    rows: &mut [u32],
    scratch: &mut Vec<u32>,
) -> usize {
    // Branch-free: every row is written to both sides and only the matching cursor advances
    // (split directions are data-dependent and mispredict badly as branches).
    scratch.clear();
    scratch.resize(rows.len(), 0);
    let (mut w, mut s) = (0usize, 0usize);
    for k in 0..rows.len() {
        let r = rows[k];
        let left = usize::from(left_of_bin[col[r as usize].into()]);
        rows[w] = r;
        scratch[s] = r;
        w += left;
        s += 1 - left;
    }
    rows[w..].copy_from_slice(&scratch[..s]);
    w
}

/// [`stable_partition`] over fixed chunks of rows in parallel: each chunk partitions itself, then
/// the chunks' left parts (in chunk order) and right parts are concatenated. The result is the
/// same stable partition, whatever the number of threads.
fn par_stable_partition<B: Copy + Into<usize> + Sync>(
    col: &[B],
    left_of_bin: &[bool],
    rows: &mut [u32],
    scratch: &mut Vec<u32>,
) -> usize {
    if rows.len() < 2 * ROW_CHUNK {
        return stable_partition(col, left_of_bin, rows, scratch);
    }
    let lefts: Vec<usize> = rows
        .par_chunks_mut(ROW_CHUNK)
        .map_init(Vec::new, |tmp, chunk| stable_partition(col, left_of_bin, chunk, tmp))
        .collect();
    let n_left: usize = lefts.iter().sum();
    scratch.clear();
    scratch.resize(rows.len(), 0);
    // Disjoint destinations: chunk c's left part after the left parts of chunks < c, its right
    // part after all left parts and the right parts of chunks < c.
    let (mut lo, mut hi) = scratch.split_at_mut(n_left);
    let mut dest = Vec::with_capacity(lefts.len());
    for (c, &l) in lefts.iter().enumerate() {
        let len = ROW_CHUNK.min(rows.len() - c * ROW_CHUNK);
        let (a, rest_lo) = lo.split_at_mut(l);
        let (b, rest_hi) = hi.split_at_mut(len - l);
        dest.push((a, b));
        lo = rest_lo;
        hi = rest_hi;
    }
    rows.par_chunks(ROW_CHUNK).zip(dest).zip(lefts.par_iter()).for_each(|((chunk, (a, b)), &l)| {
        a.copy_from_slice(&chunk[..l]);
        b.copy_from_slice(&chunk[l..]);
    });
    rows.par_chunks_mut(ROW_CHUNK).zip(scratch.par_chunks(ROW_CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
    n_left
}

/// Gathers the signed statistics of `rows` (`k` each) into `ordered`, in row order; parallel over
/// fixed chunks (pure data movement).
fn gather_statistics(stats: &[f64], k: usize, rows: &[u32], ordered: &mut Vec<f64>) {
    ordered.clear();
    ordered.resize(rows.len() * k, 0.0);
    let fill = |(dst, src): (&mut [f64], &[u32])| {
        if k == 1 {
            for (d, &r) in dst.iter_mut().zip(src) {
                *d = stats[r as usize];
            }
        } else {
            for (d, &r) in dst.chunks_exact_mut(k).zip(src) {
                d.copy_from_slice(&stats[r as usize * k..(r as usize + 1) * k]);
            }
        }
    };
    if rows.len() < 2 * ROW_CHUNK {
        fill((ordered, rows));
    } else {
        ordered.par_chunks_mut(ROW_CHUNK * k).zip(rows.par_chunks(ROW_CHUNK)).for_each(fill);
    }
}

/// The split that was not partitioned (the last one): rows `start..end` of the index go to leaf
/// `left` when `left_of_bin[bin]` of `feature`, else to leaf `right`.
struct LastSplit {
    start: usize,
    end: usize,
    feature: usize,
    left_of_bin: Vec<bool>,
    left: u32,
    right: u32,
}

/// The leaf of every row, from the leaves' ranges of the row index (`(start, end, leaf)`) and the
/// unpartitioned last split. Parallel over fixed pieces of the ranges; each row is written exactly
/// once, so relaxed atomic stores give the same result whatever the number of threads.
/// `out`: a buffer to fill (its contents are never read; session 9: reused across rounds).
fn leaves_of_rows(
    bm: &BinnedMatrix,
    index: &[u32],
    ranges: &[(usize, usize, u32)],
    last: Option<&LastSplit>,
    out: Vec<u32>,
) -> Vec<u32> {
    let n = bm.n_rows;
    if index.is_empty() {
        return leaves_of_rows_in_order(bm, ranges, last, out);
    }
    // Issue 18: filled in parallel (it was a serial pass over the rows every round). The buffer
    // becomes atomics in place (same size and alignment: no copy); every row is written below.
    let mut out: Vec<AtomicU32> = out.into_iter().map(AtomicU32::new).collect();
    out.resize_with(n, || AtomicU32::new(0));
    let mut pieces: Vec<(usize, usize, Option<u32>)> = Vec::new();
    let mut cut = |start: usize, end: usize, leaf: Option<u32>| {
        for a in (start..end).step_by(ROW_CHUNK) {
            pieces.push((a, (a + ROW_CHUNK).min(end), leaf));
        }
    };
    for &(start, end, leaf) in ranges {
        cut(start, end, Some(leaf));
    }
    if let Some(l) = last {
        cut(l.start, l.end, None);
    }
    let write = |&(start, end, leaf): &(usize, usize, Option<u32>)| match (leaf, last) {
        (Some(leaf), _) => index[start..end].iter().for_each(|&r| out[r as usize].store(leaf, Ordering::Relaxed)),
        (None, Some(l)) => {
            let side = |b: usize| if l.left_of_bin[b] { l.left } else { l.right };
            let f = l.feature;
            for &r in &index[start..end] {
                let leaf = match &bm.data {
                    BinData::U8(v) => side(usize::from(v[f * n + r as usize])),
                    BinData::U16(v) => side(usize::from(v[f * n + r as usize])),
                };
                out[r as usize].store(leaf, Ordering::Relaxed);
            }
        }
        (None, None) => {}
    };
    if n < 2 * ROW_CHUNK {
        pieces.iter().for_each(write);
    } else {
        pieces.par_iter().for_each(write);
    }
    out.into_iter().map(AtomicU32::into_inner).collect()
}

/// [`leaves_of_rows`] when the row index was never partitioned (issue 18: stumps, and trees of one
/// leaf): the index is the identity, so a leaf's range and the last split's range are runs of rows,
/// written straight into the result over fixed chunks in parallel (no index, no atomics). Every row
/// gets the leaf [`leaves_of_rows`] gives it.
fn leaves_of_rows_in_order(
    bm: &BinnedMatrix,
    ranges: &[(usize, usize, u32)],
    last: Option<&LastSplit>,
    mut out: Vec<u32>,
) -> Vec<u32> {
    let n = bm.n_rows;
    out.clear();
    out.resize(n, 0);
    let fill = |(c, dst): (usize, &mut [u32])| {
        let a = c * ROW_CHUNK;
        let b = a + dst.len();
        for &(start, end, leaf) in ranges {
            let (s, e) = (start.max(a), end.min(b));
            if s < e {
                dst[s - a..e - a].fill(leaf);
            }
        }
        if let Some(l) = last {
            let (s, e) = (l.start.max(a), l.end.min(b));
            if s < e {
                let (f, dst) = (l.feature, &mut dst[s - a..e - a]);
                let side = |b: usize| if l.left_of_bin[b] { l.left } else { l.right };
                match &bm.data {
                    BinData::U8(v) => {
                        for (o, &bin) in dst.iter_mut().zip(&v[f * n + s..f * n + e]) {
                            *o = side(usize::from(bin));
                        }
                    }
                    BinData::U16(v) => {
                        for (o, &bin) in dst.iter_mut().zip(&v[f * n + s..f * n + e]) {
                            *o = side(usize::from(bin));
                        }
                    }
                }
            }
        }
    };
    if n < 2 * ROW_CHUNK {
        fill((0, &mut out));
    } else {
        out.par_chunks_mut(ROW_CHUNK).enumerate().for_each(fill);
    }
    out
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
    /// The number of examples at the leaf (the `count` order): rows, or their sample weights' sum.
    count: f64,
}

/// The number of examples of the rows `index[start..end]`: their number, or the sum of their
/// sample weights (frequency weights, issue 14).
fn leaf_count(index: &[u32], row_weight: Option<&[f64]>, start: usize, end: usize) -> f64 {
    match row_weight {
        None => (end - start) as f64,
        Some(w) => index[start..end].iter().map(|&r| w[r as usize]).sum(),
    }
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
/// extras' sums (issue 13).
fn reduce_hist(coll: &dyn Collective, hist: &mut Vec<f64>, extra: &[f64]) -> Result<Vec<f64>> {
    let len = hist.len();
    hist.extend_from_slice(extra);
    coll.allreduce_sum(hist)?;
    Ok(hist.split_off(len))
}

/// [`grow_cancellable`] on this rank's rows of data spread over the ranks of `coll` (issue 13):
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

/// The grower's per-row buffers, kept by the driver from one round to the next (session 9): the
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
    index: Vec<u32>,
    scratch: Vec<u32>,
    ordered: Vec<f64>,
    leaves: Vec<u32>,
}

impl RowBuffers {
    /// Gives back a [`Grown::leaf_of_row`] for the next tree to fill.
    pub(crate) fn recycle_leaves(&mut self, leaves: Vec<u32>) {
        self.leaves = leaves;
    }
}

/// [`grow_distributed`] with the tree's covers left as this rank's own (issue 13, session 7): the
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
    // Session 6: a branch-free test per fixed chunk, in parallel (it was a serial early-exit scan
    // of every statistic each round); the first bad one is found only for the message.
    if !crate::util::par::map_chunks(stats.len(), |r| stats[r].iter().fold(true, |ok, s| ok & s.is_finite()))
        .iter()
        .all(|&ok| ok)
    {
        if let Some(i) = stats.iter().position(|s| !s.is_finite()) {
            return Err(Error::Numerical(format!("statistic {} of row {} is {}", i % k, i / k, stats[i])));
        }
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
    // Issue 18: bounds of the tempered cost, to skip the exact cost where they decide.
    let risk_bounds = match spec.criterion {
        Criterion::Tempered { t } if k == 1 => RiskBounds::for_t(t),
        _ => None,
    };
    let search = |hist: &[f64], sum: &[f64], rows: usize, depth: usize, serial: usize| -> Option<Candidate> {
        if p.max_depth.is_some_and(|d| depth >= d) || rows < 2 {
            return None;
        }
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
        };
        ctx.best_split(hist, sum, rows, cap, (spec.seed, serial))
    };

    // The row index, built at the first partition (issue 18: a stump never partitions; empty =
    // the identity, see `leaves_of_rows`).
    let RowBuffers { index, scratch, ordered, leaves: spare_leaves } = bufs;
    index.clear();
    let mut root_hist = pooled_hist_for_overwrite(total_bins * width);
    build_histogram(bm, None, stats, k, &mut root_hist);
    // Issue 13: the rows of every rank.
    let root_rows = if dist { reduce_hist(coll, &mut root_hist, &[n as f64])?[0] as usize } else { n };
    let root_sum = sum_of(&root_hist);
    let root_best = search(&root_hist, &root_sum, root_rows, 0, 0);
    let mut nodes = vec![Node::Leaf { leaf: 0 }];
    // Issue 15: each split's criterion decrease, recorded as it is made (0 at leaves).
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
    }];
    let mut serial = 0usize;
    let mut last: Option<LastSplit> = None;

    while leaves.len() < max_leaves {
        crate::util::cancel::check(cancel)?;
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
        // Issue 13: the children's rows and counts over every rank (`None` on one machine).
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
                // Issue 13: every rank must build the same child, so the smaller by weight (from
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
                // Session 8 (issue 18): many outputs' histograms (1.5 MiB and more) on every thread;
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
        // The candidate's gain: parent cost − children's costs (SPEC §2.2), never negative in
        // the record (a rounding residue of an exact tie).
        gains[parent.node] = cand.gain.max(0.0);
        gains.extend([0.0, 0.0]);
        if last_split {
            // Leaf numbers are fixed below; node numbers for now.
            let (left, right) = (li as u32, li as u32 + 1);
            last = Some(LastSplit { start: parent.start, end: parent.end, feature: f, left_of_bin, left, right });
        }
        // Session 8 (issue 18): both children searched at once (`rayon::join`): on small data
        // their scans are short parallel regions, or serial below `PARALLEL_CELLS`, and the
        // second thread used to idle through each; every search is a function of its own node,
        // so the results are the same in any order.
        let rows_of = |side: usize, start: usize, end: usize| global.as_ref().map_or(end - start, |g| g[side] as usize);
        let mut searched = if last_split {
            [None, None]
        } else {
            let (sl, sr) = (sum_of(&lh), sum_of(&rh));
            let (rl, rr) = (rows_of(0, ls, le), rows_of(1, rs, re));
            let depth = parent.depth + 1;
            let (bl, br) =
                rayon::join(|| search(&lh, &sl, rl, depth, serial + 1), || search(&rh, &sr, rr, depth, serial + 2));
            [Some((sl, bl)), Some((sr, br))]
        };
        for (side, ((node, start, end, hist), last_sum)) in
            [(li, ls, le, lh), (li + 1, rs, re, rh)].into_iter().zip(last_sums).enumerate()
        {
            serial += 1;
            let (sum, best) = searched[side].take().unwrap_or((last_sum, None));
            // Only the `count` order reads the count (a weighted count costs a pass over the rows).
            let count = match &global {
                Some(g) => g[2 + side],
                None if p.grow_order == GrowOrder::Count => leaf_count(index, spec.row_weight, start, end),
                None => 0.0,
            };
            leaves.push(Leaf { node, start, end, depth: parent.depth + 1, hist, sum, best, serial, count });
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
        for pair in l.sum.chunks_exact(2) {
            leaf_values.push(spec.leaf_rule.value(pair[0], pair[1]));
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
    use super::*;
    use crate::boost::signed_of_pairs;
    use crate::data::{BinMapper, Column, Features, MISSING_CODE};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};

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
        let spec =
            GrowSpec { params: &params, criterion: Criterion::Gini, leaf_rule: LeafRule::Sign, seed, row_weight: None };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| grow(&bm, &mapper, &signed_of_pairs(&stats), 1, &spec).unwrap())
    }

    fn split_features(t: &Tree) -> Vec<u32> {
        t.nodes.iter().filter_map(|n| if let Node::Split { feature, .. } = n { Some(*feature) } else { None }).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Issue 17: with exact ties everywhere, random tie-breaking agrees with the naive twin,
        /// and is bit-identical with 1, 2 and 3 threads.
        #[test]
        fn issue_17_random_ties_agree_with_naive_and_threads(seed in 0u64..10_000, n in 40usize..200) {
            let feats = twin_features(seed, n);
            let mapper = BinMapper::fit(&feats, 255, None).unwrap();
            let bm = mapper.transform(&feats).unwrap();
            let stats = random_stats(seed, n, 2);
            let params = TreeParams { max_leaves: 6, split_ties: SplitTies::Random, ..Default::default() };
            let spec = GrowSpec { params: &params, criterion: Criterion::Gini, leaf_rule: LeafRule::Sign, seed, row_weight: None };
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

    /// Issue 17: random ties on a node large enough for the parallel histogram and split search
    /// (20 000 rows × 8 features) give bit-identical trees with 1, 2 and 3 threads.
    #[test]
    fn issue_17_random_ties_bit_identical_across_threads_on_parallel_sizes() {
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

    /// Issue 17: `lowest` always takes the lower twin (features 0..4); `random` takes each twin
    /// about half the time over seeds (uniform among the tied), and a given seed always the same.
    #[test]
    fn issue_17_random_ties_are_uniform_and_seeded() {
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
    fn session_9_reused_row_buffers_grow_the_same_trees_without_reallocating() {
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
        /// Issue 8: the blocked, feature-grouped kernel gives bit-identical sums to the naive one,
        /// over several row blocks, for all rows and for a row subset, with 1 to 3 threads.
        #[test]
        fn issue_8_blocked_histogram_is_bit_identical_to_naive(seed in 0u64..1000, width in 1usize..3) {
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
    fn issue_18_multi_output_kernel_is_bit_identical_to_naive() {
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
    fn issue_8_multi_feature_kernel_is_bit_identical_to_naive_for_every_group_size() {
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

    /// Issue 18: the width-2 numeric scan (with the bounded tempered cost, pruning the exact cost)
    /// returns exactly the candidates of the generic, unpruned scan — same gain bits, feature, bin
    /// and missing side — on random histograms with empty bins, missing values, exact ties
    /// (quantised statistics), near-ties, pure bins, minimum weights, candidate caps and both tie
    /// rules, for every criterion and temperatures across the supported range.
    #[test]
    fn issue_18_pruned_pair_scan_equals_the_unpruned_scan() {
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
            let ctx = SearchCtx {
                criterion: crit,
                ties,
                width: 2,
                min_w,
                pure,
                parent_cost: block_cost(&crit, &total),
                tol: 1e-12 * (total[0] + total[1]),
                binned: &bm,
                mapper: &mapper,
                bounds: rb.as_deref(),
            };
            let fast = ctx.best_for_feature(f, &hist, &total, cap.as_deref());
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

    /// Issue 18 (session 6): the blocked running maximum of the exact `lowest` scan
    /// ([`SearchCtx::lowest_exact`]) keeps the generic scan's candidate bit for bit on long
    /// (255-bin) histograms whose gain curves climb, plateau (exact and near ties within the
    /// tolerance, across block boundaries) and fall, with empty bins, missing values, minimum
    /// weights and forbidden pure leaves, for every exact criterion; and (session 7) the blocked
    /// bounded scan of the tempered criterion ([`SearchCtx::lowest_bounded`]) at five temperatures.
    #[test]
    fn issue_18_blocked_lowest_scan_equals_the_generic_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(618);
        let feats = scan_test_features(257);
        let mapper = BinMapper::fit(&feats, 255, None).unwrap();
        let bm = mapper.transform(&feats).unwrap();
        assert!(bm.n_bins(0) > 200 && bm.n_bins(1) > 200);
        // Session 7: the tempered criterion with its bounds takes the flat bounded scan
        // ([`SearchCtx::lowest_bounded`]); without them (t = 1), the exact one.
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
            let ctx = SearchCtx {
                criterion: crit,
                ties: SplitTies::Lowest,
                width: 2,
                min_w,
                pure,
                parent_cost: block_cost(&crit, &total),
                tol: 1e-12 * (total[0] + total[1]),
                binned: &bm,
                mapper: &mapper,
                bounds: rb.as_deref(),
            };
            let fast = ctx.best_for_feature(f, &hist, &total, None);
            let slow = ctx.best_for_feature_generic(f, &hist, &total, None);
            assert_eq!(fast.len(), slow.len(), "case {case}: {crit:?}");
            for (a, b) in fast.iter().zip(&slow) {
                assert_eq!(
                    (a.gain.to_bits(), a.feature, &a.kind),
                    (b.gain.to_bits(), b.feature, &b.kind),
                    "case {case}: {crit:?}"
                );
                if let CandKind::Numeric { bin, .. } = a.kind {
                    replaced_late += usize::from(bin > GAIN_BLOCK);
                    bounded_late += usize::from(bin > GAIN_BLOCK && rb.is_some());
                }
            }
        }
        // Kept candidates beyond the first block: the blocks' skips were exercised.
        assert!(replaced_late > 500, "{replaced_late}");
        assert!(bounded_late > 250, "{bounded_late}");
    }

    /// Issue 18 (session 8): the AVX2 build of the scan's per-candidate passes ([`simd`]) writes
    /// the baseline build's bits — every exact criterion's gains and the tempered bounds' gain
    /// intervals at six temperatures, with and without a missing side, for random prefix sums
    /// over a wide dynamic range, exact zeros (pure and empty children), sums within the
    /// tolerance of the total (residues), minimum weights and forbidden pure leaves; lengths
    /// 0 to 300, so that every vector remainder is exercised.
    #[test]
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    fn issue_18_simd_passes_equal_the_scalar_passes() {
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

    /// Issue 18 (session 8): the k-output numeric scan ([`SearchCtx::scan_outputs`]) returns the
    /// generic scan's candidates bit for bit: 2 to 26 outputs, every criterion, both tie rules,
    /// with and without a missing bin, a candidate cap, a minimum leaf weight and forbidden pure
    /// leaves, on histograms with empty bins, plateaus, exact and near ties.
    #[test]
    fn issue_18_output_scan_equals_the_generic_scan() {
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
            let ctx = SearchCtx {
                criterion: crit,
                ties,
                width: w,
                min_w,
                pure,
                parent_cost: block_cost(&crit, &total),
                tol: 1e-12 * total.iter().sum::<f64>(),
                binned: &bm,
                mapper: &mapper,
                bounds: None,
            };
            let allowed: Option<Vec<u32>> =
                (case % 6 == 5).then(|| (0..nb as u32).filter(|_| rng.gen_bool(0.3)).collect());
            let fast = ctx.best_for_feature(f, &hist, &total, allowed.as_deref());
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

    /// Issue 18 (session 7): trees grown with histograms and byte-kernel accumulators reused from
    /// the thread's pools — left dirty by other trees of other sizes, or poisoned with NaN — are
    /// bit for bit the trees a fresh thread grows with freshly allocated buffers, for one and
    /// several outputs, tiny and larger nodes, and the tempered criterion of the sonar target.
    #[test]
    fn issue_18_pooled_buffers_grow_the_fresh_tree() {
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
            let spec = GrowSpec { params: &params, criterion, leaf_rule: LeafRule::Sign, seed: 5, row_weight: None };
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
    fn issue_8_chunked_partition_equals_the_serial_one() {
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
    fn issue_18_leaves_of_unpartitioned_rows_equal_the_indexed_walk() {
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
                // Session 9: a reused buffer (longer, shorter, holding old leaves) changes nothing.
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
