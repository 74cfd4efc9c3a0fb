//! Guaranteed bounds of the tempered leaf cost and of split gains, so that the scan computes the
//! exact cost only for candidates the bounds cannot decide.

use super::{residue_free, PairCost};
use crate::math::tempered::bayes_risk;
use crate::tree::Criterion;

/// The tempered criterion with its table of bounds.
pub(in crate::tree) struct Bounded<'a> {
    pub(in crate::tree) crit: Criterion,
    pub(in crate::tree) rb: &'a RiskBounds,
}

impl PairCost for Bounded<'_> {
    #[inline]
    fn cost(&self, wp: f64, wn: f64) -> f64 {
        self.crit.cost(wp, wn)
    }
    #[inline(always)]
    fn risk_bounds(&self) -> Option<&RiskBounds> {
        Some(self.rb)
    }
}

/// What [`super::SearchCtx::pool_bounded`] needs to bound one candidate's gain, or a block's.
pub(in crate::tree) struct GainBounds<'a> {
    pub(in crate::tree) rb: &'a RiskBounds,
    pub(in crate::tree) t0: f64,
    pub(in crate::tree) t1: f64,
    pub(in crate::tree) tol: f64,
    pub(in crate::tree) parent: f64,
    pub(in crate::tree) min_w: f64,
    pub(in crate::tree) forbid: bool,
    pub(in crate::tree) margin: f64,
}

impl GainBounds<'_> {
    /// The interval `[P − hi_l − hi_r − m, P − lo_l − lo_r + m]` of the gain of the split whose
    /// left child has sums `(l0, l1)`, or NaNs when the split is not admissible ([`admissible`]'s
    /// comparisons without short-circuits). It contains the gain `fl(fl(P − C̃_l) − C̃_r)` that
    /// the generic scan computes from the children's costs `lo ≤ C̃ ≤ hi` ([`RiskBounds`]): the
    /// margin `m = 1e−10 (|P| + W)` covers the rounding of both subtractions and of the
    /// interval's own arithmetic (≤ 4 ulp of `|P| + W_l + W_r ≤ |P| + W(1 + 1e−12)`).
    ///
    /// [`admissible`]: super::admissible
    #[inline(always)]
    pub(in crate::tree) fn interval(&self, l0: f64, l1: f64) -> (f64, f64) {
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

/// Half-widths of [`Curvature`]'s windows around a node's positive fraction.
const CURV_WINDOWS: [f64; 3] = [0.1, 0.2, 0.4];

/// What [`super::SearchCtx::pool_bounded`] needs to bound a candidate's gain by the curvature
/// of `L` (see [`Curvature::gain_bound`]).
pub(in crate::tree) struct Curvature {
    /// The node's positive fraction `u = T+/W`.
    pub(in crate::tree) u: f64,
    /// `½ sup |L''|` on `[u − d, u + d]` for each half-width `d` of [`CURV_WINDOWS`].
    pub(in crate::tree) kappa: [f64; CURV_WINDOWS.len()],
    /// The least weight of a child the bound is offered for (`1e−6 W`).
    min_w: f64,
    /// `1 / W`, W the node's weight.
    inv_w: f64,
}

impl Curvature {
    /// The windows of a node with sums `(t0, t1)` at the bounds `rb`.
    pub(in crate::tree) fn of_node(rb: &RiskBounds, t0: f64, t1: f64) -> Curvature {
        let w = t0 + t1;
        let u = t0 / w;
        let kappa = CURV_WINDOWS.map(|d| rb.curvature_on((u - d).max(0.0), (u + d).min(1.0)));
        Curvature { u, kappa, min_w: 1e-6 * w, inv_w: 1.0 / w }
    }

    /// `κ` of the narrowest window of half-width `d` for which `holds(d)`, `+∞` when none holds
    /// (branch-free selects, so that the candidate loops vectorise).
    #[inline(always)]
    fn kappa_of_narrowest(&self, holds: impl Fn(f64) -> bool) -> f64 {
        let mut kappa = f64::INFINITY;
        for (&d, &k) in CURV_WINDOWS.iter().zip(&self.kappa).rev() {
            kappa = if holds(d) { k } else { kappa };
        }
        kappa
    }

    /// An upper bound of the gain of the split whose left child has sums `(l0, l1)`, `+∞` when
    /// none is offered. **Why it holds.** The gain is Jensen's gap of the concave `L`:
    /// `W L(u) − w_l L(u_l) − w_r L(u_r)` with `u` the weighted mean of the children's fractions
    /// `u_l`, `u_r`. Where `|L''| ≤ 2κ` between them, `L + κx²` is convex, so the gap is at most
    /// `κ (w_l w_r / W)(u_l − u_r)²` — no table, two divisions. `κ` is that of the narrowest
    /// window around `u` holding both fractions (then everything between them; the fractions'
    /// rounding is covered by the table's widening); the children must weigh at least `1e−6 W`,
    /// so that the slope of `L` is moderate there and the difference between the computed gain
    /// and the exact gap (`P` is the cost of `T`, the children's sums add up to `T` within an
    /// ulp, each cost is within `1e−12` relative) stays within the margin. `|u_l − u_r|` is
    /// widened by its rounding (`4.5e−16`) and the product by `1e−9` relative.
    #[inline(always)]
    pub(in crate::tree) fn gain_bound(&self, g: &GainBounds<'_>, l0: f64, l1: f64) -> f64 {
        let (r0, r1) = (residue_free(g.t0 - l0, g.tol), residue_free(g.t1 - l1, g.tol));
        let (wl, wr) = (l0 + l1, r0 + r1);
        let (ul, ur) = (l0 / wl, r0 / wr);
        let dev = (ul - self.u).abs().max((ur - self.u).abs());
        let kappa = self.kappa_of_narrowest(|d| dev <= d);
        let d = (ul - ur).abs() + 4.5e-16;
        let bound = kappa * (d * d) * (wl * wr) * self.inv_w * (1.0 + 1e-9) + g.margin;
        let offered = (wl >= self.min_w) & (wr >= self.min_w) & (bound >= 0.0);
        if offered {
            bound
        } else {
            f64::INFINITY
        }
    }

    /// Whether [`Self::gain_bound`] of the split whose left child has sums `(l0, l1)` may reach
    /// `cut`, given `need = (cut − margin)·W`: the same test without divisions. With
    /// `D = l0 w_r − r0 w_l = (u_l − u_r) w_l w_r`, the bound reaches the cut when
    /// `κ (|D| + 4.5e−16 w_l w_r)² (1 + 1e−9) ≥ need · w_l w_r`; `|D|` is widened by its rounding
    /// (`4.5e−16 (|l0 w_r| + |r0 w_l|)`) and both sides by `1e−8` relative the conservative way,
    /// and the windows are tested as `|l0 − u w_l| w_r ≤ d w_l w_r` (and the same for the right
    /// child). `true` where no bound is offered, and on NaN.
    #[inline(always)]
    pub(in crate::tree) fn may_reach(&self, g: &GainBounds<'_>, l0: f64, l1: f64, need: f64) -> bool {
        let (r0, r1) = (residue_free(g.t0 - l0, g.tol), residue_free(g.t1 - l1, g.tol));
        let (wl, wr) = (l0 + l1, r0 + r1);
        let p = wl * wr;
        let dev = ((l0 - self.u * wl).abs() * wr).max((r0 - self.u * wr).abs() * wl);
        let kappa = self.kappa_of_narrowest(|d| dev <= d * p);
        let (x, y) = (l0 * wr, r0 * wl);
        let dd = (x - y).abs() + 4.5e-16 * (x.abs() + y.abs()) + 4.5e-16 * p;
        let below = kappa * (dd * dd) * (1.0 + 1e-8) < need * p * (1.0 - 1e-8);
        let offered = (wl >= self.min_w) & (wr >= self.min_w);
        !(offered & below)
    }
}

/// Intervals of the grid of [`RiskBounds`]: the knots are `x_j = j/(2N)`, `j = 0..=N`, on `[0, ½]`.
const RISK_GRID: usize = 4096;

/// Cells of [`RiskBounds::curvature_on`]'s table on `[0, ½]`.
const CURV_CELLS: usize = 256;

/// Relative slack of [`RiskBounds::cost_bounds`]: far above the rounding of the exact cost (see
/// the type's doc), far below the gaps between split candidates that matter.
const RISK_SLACK: f64 = 1e-9;

/// Guaranteed, cheap bounds on the tempered leaf cost `W·L^(t)(W+/W)` as
/// [`crate::tree::Criterion::cost`] computes it: the split search computes the exact
/// cost (four `exp`/`log` calls) only for candidates whose bounds cannot decide.
///
/// **Why the bounds hold.** `L = L^(t)` is concave on `[0, 1]`, symmetric about ½ and zero at 0
/// and 1 (docs/explanation/weak-learners.md#weak-learners-criteria: every offered Bayes risk is concave), hence non-decreasing on `[0, ½]`. The
/// table holds `L` at the knots `x_j = j/(2N)`. For `x = min(u, 1 − u)` in `[x_j, x_{j+1}]`
/// (`u = W+/W` exactly as the cost computes it; `1 − u` is exact for `u ≥ ½`, Sterbenz):
/// - lower bound: the chord through `x_j` and `x_{j+1}` lies below a concave function between
///   its ends;
/// - upper bound: `L(x_{j+1})` (monotone), and for `j ≥ 1` the chord through `x_{j−1}` and `x_j`
///   extended to the right, which lies above a concave function beyond its ends.
///
/// Those are bounds of the true `L`. The computed cost differs from `W·L(u)` by its rounding:
/// the power mean's `ln`, `expm1`, `ln_1p`, `exp` (each within an ulp in glibc) amplified by at
/// most ≈ `2/|1 − t|` (the exponent `ln_1p(h)/(1 − t)` is `O(1/|1 − t|)`; `r^s |ln r| ≤ 1/(e s)`),
/// plus a few ulps for `1 − u`, the products and the division: below `1e−12` relative for
/// `|1 − t| ≥ 0.01`, where the bounds are offered. The table entries carry the same error, and
/// the interpolations a few ulps (each bound is within a factor 3 of the entries it combines, as
/// `L(x)/x` is non-increasing). The returned interval is widened by [`RISK_SLACK`] = `1e−9`
/// relative on each side, which covers all of it with a margin of three orders of magnitude.
/// Zero-weight and pure pairs return the exact cost (0, 0), as the cost does.
#[derive(Debug)]
pub(crate) struct RiskBounds {
    /// `L^(t)(j/(2N))`, `j = 0..=N`, as [`bayes_risk`] computes it (a fixed length: the
    /// lookups' indices are clamped into it, so they need no checks).
    table: Box<[f64; RISK_GRID + 1]>,
    /// Half the largest `|L''|` on each of [`CURV_CELLS`] equal cells of `[0, ½]` (and, by
    /// symmetry, of `[½, 1]`), widened ([`curvature_table`]); `+∞` on the first three cells, where
    /// `L''` may be unbounded. Row `k` holds the largest over `2^k` cells from each cell on (a
    /// sparse table: any range's largest in two reads, [`RiskBounds::curvature_on`]).
    curv: Vec<[f64; CURV_CELLS]>,
}

impl RiskBounds {
    /// Whether bounds are offered at temperature `t`: finite `t ∈ [−10, 2]` with `|1 − t| ≥ 0.01`
    /// (near 1 the criterion is Matusita's cheap closed form, or the rounding amplification grows;
    /// far below 0 nothing needs them).
    pub(crate) fn supports(t: f64) -> bool {
        (-10.0..=2.0).contains(&t) && (1.0 - t).abs() >= 0.01
    }

    /// The bounds at temperature `t` (built once per `t` and kept: a pure function of `t`), or
    /// `None` when not [`supported`](Self::supports).
    pub(crate) fn for_t(t: f64) -> Option<std::sync::Arc<RiskBounds>> {
        use std::sync::{Arc, Mutex};
        static CACHE: Mutex<Vec<(u64, Arc<RiskBounds>)>> = Mutex::new(Vec::new());
        if !Self::supports(t) {
            return None;
        }
        let key = t.to_bits();
        if let Ok(cache) = CACHE.lock() {
            if let Some((_, b)) = cache.iter().find(|(k, _)| *k == key) {
                return Some(Arc::clone(b));
            }
        }
        let step = 1.0 / (2 * RISK_GRID) as f64;
        let mut table = Box::new([0.0; RISK_GRID + 1]);
        for (j, l) in table.iter_mut().enumerate() {
            *l = bayes_risk(j as f64 * step, t);
        }
        let b = Arc::new(RiskBounds { table, curv: curvature_table(t) });
        if let Ok(mut cache) = CACHE.lock() {
            // A handful of temperatures per process; keep the last few.
            if cache.len() >= 8 {
                cache.remove(0);
            }
            cache.push((key, Arc::clone(&b)));
        }
        Some(b)
    }

    /// `(lo, hi)` with `lo ≤ Criterion::Tempered { t }.cost(wp, wn) ≤ hi` (see the type's doc).
    ///
    /// Branch-light and cheap (the split scan calls it for every candidate). An empty
    /// pair divides `0/1`, so for finite sums `u` is never NaN: `u ∈ [0, 1]`,
    /// `x = min(u, 1 − u) ∈ [0, ½]`, and the table index is the truncation of a number in
    /// `[0, N]`; any `w > 0` (subnormal included) divides as the cost does. A side of `+∞` (the
    /// grower refuses such sums first, but this function does not rely on it) divides `∞/∞`:
    /// `u` is NaN, the pair is not `live` and the bounds are `(0, 0)`; [`table_index`] keeps
    /// the index in the table for every input. Comparisons are written as selects, which compile
    /// to single `min`/`max`-type instructions. `min(u, 1 − u)` is the former
    /// `u > ½ ? 1 − u : u`: for `u ≤ ½`, `fl(1 − u) ≥ ½ ≥ u`; for `u > ½`, `1 − u` is exact
    /// (Sterbenz) and below ½.
    #[inline(always)]
    pub(crate) fn cost_bounds(&self, wp: f64, wn: f64) -> (f64, f64) {
        // The same steps as `Criterion::cost` → `weighted_bayes_risk` → `bayes_risk`.
        let wp = if wp > 0.0 { wp } else { 0.0 };
        let wn = if wn > 0.0 { wn } else { 0.0 };
        let w = wp + wn;
        let u = wp / if w > 0.0 { w } else { 1.0 };
        let live = (u > 0.0) & (u < 1.0);
        let v = 1.0 - u;
        let x = if v < u { v } else { u };
        let pos = x * (2 * RISK_GRID) as f64;
        let j = table_index(pos);
        let frac = pos - j as f64;
        let l = &self.table;
        let (a, b, c) = (l[j], l[j + 1], l[j.saturating_sub(1)]);
        let lo = a + (b - a) * frac;
        let ext = a + (a - c) * frac;
        let ext = if ext < b { ext } else { b };
        let hi = if j >= 1 { ext } else { b };
        if live {
            (w * lo * (1.0 - RISK_SLACK), w * hi * (1.0 + RISK_SLACK))
        } else {
            (0.0, 0.0)
        }
    }
}

impl RiskBounds {
    /// An upper bound of `½|L''(u)|` for `u ∈ [a, b] ⊂ [0, 1]` (`+∞` when the interval reaches
    /// the cells next to 0 or 1, or is empty or NaN): the largest entry of the cells it meets,
    /// by the symmetry `L(u) = L(1 − u)` on `[0, ½]`.
    pub(crate) fn curvature_on(&self, a: f64, b: f64) -> f64 {
        let Some((i, j)) = curvature_cells(a, b) else {
            return f64::INFINITY;
        };
        let k = (j - i + 1).ilog2() as usize;
        self.curv[k][i].max(self.curv[k][j + 1 - (1 << k)])
    }
}

/// The first and last cells of [`RiskBounds`]' curvature table that `u ∈ [a, b]` meets, by the
/// symmetry `L(u) = L(1 − u)` on `[0, ½]`; `None` when the interval is not within `[0, 1]`, empty
/// or NaN.
fn curvature_cells(a: f64, b: f64) -> Option<(usize, usize)> {
    let valid = a >= 0.0 && a <= b && b <= 1.0;
    if !valid {
        return None;
    }
    let (x0, x1) = if a <= 0.5 && b >= 0.5 {
        (a.min(1.0 - b), 0.5)
    } else if b < 0.5 {
        (a, b)
    } else {
        (1.0 - b, 1.0 - a)
    };
    let cell = |x: f64| ((x * (2 * CURV_CELLS) as f64) as usize).min(CURV_CELLS - 1);
    Some((cell(x0), cell(x1)))
}

/// [`RiskBounds`]' curvature table at temperature `t`: on each cell of `[0, ½]`, half the
/// largest absolute second difference of [`bayes_risk`] at nine points with a step of an
/// eighth of the cell (a second difference is `L''` at a point between its three), then the
/// largest of the cell and its two neighbours, times 1.5: `L''` is smooth and, near 0, monotone
/// on `(0, ½]`, so the sampled maximum falls short of the cell's supremum by far less than that
/// widening. The first three cells are `+∞`. `curvature_bounds_contain_the_gains` checks the
/// bound it gives against exact gains.
fn curvature_table(t: f64) -> Vec<[f64; CURV_CELLS]> {
    let width = 0.5 / CURV_CELLS as f64;
    let mut raw = [0.0f64; CURV_CELLS];
    for (i, r) in raw.iter_mut().enumerate().skip(2) {
        let h = width / 8.0;
        for k in 0..=8 {
            let x = (i as f64 + k as f64 / 8.0) * width;
            let d2 = (bayes_risk(x - h, t) - 2.0 * bayes_risk(x, t) + bayes_risk(x + h, t)) / (h * h);
            *r = r.max(0.5 * d2.abs());
        }
    }
    let mut rows = vec![[f64::INFINITY; CURV_CELLS]];
    for i in 3..CURV_CELLS {
        let m = raw[i - 1].max(raw[i]).max(raw[(i + 1).min(CURV_CELLS - 1)]);
        rows[0][i] = 1.5 * m + 1e-12;
    }
    while 1 << rows.len() <= CURV_CELLS {
        let (prev, half) = (rows[rows.len() - 1], 1 << (rows.len() - 1));
        let mut row = prev;
        for i in 0..CURV_CELLS - half {
            row[i] = prev[i].max(prev[i + half]);
        }
        rows.push(row);
    }
    rows
}

/// The table index of the grid position `pos`: `⌊pos⌋` clamped to `[0, N − 1]`, clamped in the
/// float domain before the conversion, so that every input lands in the table — NaN (a pair
/// with an infinite side divides ∞/∞), ±∞ and negative positions included. For `pos ∈ [0, N]`
/// (every pair of finite sums) it is the truncation clamped to `N − 1`.
/// [`bounds_x4::table_index_x4`] is the same lane by lane; the gathers rely on it.
#[inline(always)]
fn table_index(pos: f64) -> usize {
    // `pos > 0 ? pos : 0` sends NaN to 0, as `maxpd(pos, 0)` does.
    let p = if pos > 0.0 { pos } else { 0.0 };
    let last = (RISK_GRID - 1) as f64;
    (if p < last { p } else { last }) as usize
}

/// [`RiskBounds::cost_bounds`] four pairs at a time with AVX2: the same
/// operations in the same order lane by lane — IEEE-exact `+ − × ÷`, ordered comparisons that are
/// false on NaN as Rust's, selects as blends, [`table_index`] as `maxpd`/`minpd` then the
/// truncation `cvttpd2dq` of a number in `[0, N − 1]`, the three table reads as gathers — hence
/// the same bits;
/// `simd_passes_equal_the_scalar_passes` (tree/grow.rs) checks it.
#[cfg(target_arch = "x86_64")]
pub(crate) mod bounds_x4 {
    use super::{RiskBounds, RISK_GRID, RISK_SLACK};
    use std::arch::x86_64::*;

    /// [`super::table_index`] of four positions: `max(pos, 0)` (`maxpd` returns its second
    /// operand, 0, when `pos` is NaN), then `min(·, N − 1)`, then the truncation — in
    /// `[0, N − 1]` for every input.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(crate) fn table_index_x4(pos: __m256d) -> __m128i {
        let clamped = _mm256_min_pd(_mm256_max_pd(pos, _mm256_setzero_pd()), _mm256_set1_pd((RISK_GRID - 1) as f64));
        _mm256_cvttpd_epi32(clamped)
    }

    impl RiskBounds {
        /// `(lo, hi)` of [`RiskBounds::cost_bounds`] for the four pairs `(wp[i], wn[i])`.
        #[inline]
        #[target_feature(enable = "avx2")]
        #[allow(unsafe_code)]
        pub(crate) fn cost_bounds_x4(&self, wp: __m256d, wn: __m256d) -> (__m256d, __m256d) {
            let zero = _mm256_setzero_pd();
            let one = _mm256_set1_pd(1.0);
            // `wp > 0 ? wp : 0` (+0 otherwise, as the scalar literal).
            let wp = _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(wp, zero), wp);
            let wn = _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(wn, zero), wn);
            let w = _mm256_add_pd(wp, wn);
            let u = _mm256_div_pd(wp, _mm256_blendv_pd(one, w, _mm256_cmp_pd::<_CMP_GT_OQ>(w, zero)));
            let live = _mm256_and_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(u, zero), _mm256_cmp_pd::<_CMP_LT_OQ>(u, one));
            let v = _mm256_sub_pd(one, u);
            let x = _mm256_blendv_pd(u, v, _mm256_cmp_pd::<_CMP_LT_OQ>(v, u));
            let pos = _mm256_mul_pd(x, _mm256_set1_pd((2 * RISK_GRID) as f64));
            let j = table_index_x4(pos);
            let frac = _mm256_sub_pd(pos, _mm256_cvtepi32_pd(j));
            let jn = _mm_add_epi32(j, _mm_set1_epi32(1));
            let jp = _mm_max_epi32(_mm_sub_epi32(j, _mm_set1_epi32(1)), _mm_setzero_si128());
            let base = self.table.as_ptr();
            // SAFETY: every index is in `[0, RISK_GRID]` whatever the inputs (`j` from
            // `table_index_x4` is in `[0, N − 1]` for every `pos`, NaN and ±∞ included —
            // `table_index_x4_stays_in_the_table` checks it on arbitrary bit patterns —,
            // `jn = j + 1 ≤ N`, `jp = max(j − 1, 0)`), and the table holds `RISK_GRID + 1` values.
            let (a, b, c) = unsafe {
                (
                    _mm256_i32gather_pd::<8>(base, j),
                    _mm256_i32gather_pd::<8>(base, jn),
                    _mm256_i32gather_pd::<8>(base, jp),
                )
            };
            let lo = _mm256_add_pd(a, _mm256_mul_pd(_mm256_sub_pd(b, a), frac));
            let ext = _mm256_add_pd(a, _mm256_mul_pd(_mm256_sub_pd(a, c), frac));
            let ext = _mm256_blendv_pd(b, ext, _mm256_cmp_pd::<_CMP_LT_OQ>(ext, b));
            let j_pos = _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_cmpgt_epi32(j, _mm_setzero_si128())));
            let hi = _mm256_blendv_pd(b, ext, j_pos);
            let lo = _mm256_mul_pd(_mm256_mul_pd(w, lo), _mm256_set1_pd(1.0 - RISK_SLACK));
            let hi = _mm256_mul_pd(_mm256_mul_pd(w, hi), _mm256_set1_pd(1.0 + RISK_SLACK));
            (_mm256_and_pd(live, lo), _mm256_and_pd(live, hi))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cheap bounds of the tempered cost contain the exact cost, bit for bit as the
    /// criterion computes it, on random pairs (skewed, balanced, tiny, huge, zero) and temperatures
    /// across the supported range; and they are tight enough to decide (≤ 1e−6 of W at t = 0.8
    /// away from pure leaves).
    #[test]
    fn risk_bounds_contain_the_exact_cost() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
        let ts = [-10.0, -3.0, -0.5, 0.0, 0.2, 0.5, 0.8, 0.9, 0.99, 1.01, 1.2, 1.5, 1.9, 2.0];
        for &t in &ts {
            assert!(RiskBounds::supports(t));
            let rb = RiskBounds::for_t(t).expect("supported");
            let crit = crate::tree::Criterion::Tempered { t };
            for i in 0..200_000 {
                let scale = 10f64.powi(rng.gen_range(-12..12));
                let (wp, wn) = match i % 5 {
                    0 => (rng.gen::<f64>() * scale, rng.gen::<f64>() * scale),
                    1 => (rng.gen::<f64>() * scale, rng.gen::<f64>() * scale * 1e-6),
                    2 => (scale, scale * (1.0 + rng.gen_range(-1e-9..1e-9))),
                    3 => (f64::from(rng.gen_range(0..50u32)), f64::from(rng.gen_range(0..50u32))),
                    _ => (rng.gen::<f64>() * scale * 1e-9, rng.gen::<f64>() * scale),
                };
                let c = crit.cost(wp, wn);
                let (lo, hi) = rb.cost_bounds(wp, wn);
                assert!(lo <= c && c <= hi, "t = {t}: cost({wp:e}, {wn:e}) = {c:e} outside [{lo:e}, {hi:e}]");
                let (lo, hi) = rb.cost_bounds(wn, wp);
                let c = crit.cost(wn, wp);
                assert!(lo <= c && c <= hi, "t = {t}: cost({wn:e}, {wp:e}) = {c:e} outside [{lo:e}, {hi:e}]");
            }
        }
        // The exactness of the interval ends is where a bound could fail: the knots themselves.
        for &t in &ts {
            let rb = RiskBounds::for_t(t).expect("supported");
            let crit = crate::tree::Criterion::Tempered { t };
            for j in 0..=2 * RISK_GRID {
                let wp = j as f64;
                let wn = (2 * RISK_GRID - j) as f64;
                let (lo, hi) = rb.cost_bounds(wp, wn);
                let c = crit.cost(wp, wn);
                assert!(lo <= c && c <= hi, "t = {t}, knot {j}");
            }
        }
        // Tight at t = 0.8: ≤ 1e−5 · W for u ∈ [0.01, 0.99] (≈ 1e−8 · W near u = ½).
        let rb = RiskBounds::for_t(0.8).expect("supported");
        for i in 1..99 {
            let (lo, hi) = rb.cost_bounds(i as f64 + 0.37, 100.0 - i as f64 - 0.37);
            assert!(hi - lo <= 1e-5 * 100.0, "u = {}: width {}", i, hi - lo);
        }
        assert!(!RiskBounds::supports(1.0) && !RiskBounds::supports(0.995) && !RiskBounds::supports(2.5));
        assert!(RiskBounds::for_t(1.0).is_none());
    }

    /// The branch-free bounds give the cost's exact zeros for empty and
    /// pure sides, rounding residues of either sign included, and contain the cost at the edges of
    /// the grid (the first and last intervals, `u` within an ulp of ½, 0 and 1).
    #[test]
    fn branch_free_bounds_at_empty_pure_and_edge_pairs() {
        for t in [-10.0, 0.0, 0.5, 0.8, 1.3, 2.0] {
            let rb = RiskBounds::for_t(t).expect("supported");
            let crit = crate::tree::Criterion::Tempered { t };
            for (wp, wn) in [
                (0.0, 0.0),
                (-1e-17, 0.0),
                (0.0, -1e-17),
                (-1e-17, -1e-17),
                (0.0, 3.0),
                (3.0, 0.0),
                (-1e-17, 3.0),
                (3.0, -1e-17),
            ] {
                assert_eq!(rb.cost_bounds(wp, wn), (0.0, 0.0), "t = {t}: ({wp}, {wn})");
                assert_eq!(crit.cost(wp, wn), 0.0);
            }
            let half = 0.5f64;
            let edges = [
                (half, half),
                (f64::from_bits(half.to_bits() + 1), half),
                (f64::from_bits(half.to_bits() - 1), half),
                (1.0, 1e-300),
                (1e-300, 1.0),
                (1.0, f64::EPSILON),
                (1.0, 1.0 / (2 * RISK_GRID) as f64),
                (1.0, 1.5 / (2 * RISK_GRID) as f64),
                (1.0, 1.0 - 1.0 / (2 * RISK_GRID) as f64),
                (7.0, f64::from_bits(7f64.to_bits() - 1)),
            ];
            for (wp, wn) in edges {
                for (p, n) in [(wp, wn), (wn, wp)] {
                    let (lo, hi) = rb.cost_bounds(p, n);
                    let c = crit.cost(p, n);
                    assert!(lo <= c && c <= hi, "t = {t}: cost({p:e}, {n:e}) = {c:e} outside [{lo:e}, {hi:e}]");
                }
            }
        }
    }

    /// Extreme inputs: any bit pattern (NaN, ±∞, subnormal, 1e308, negative).
    fn extreme_f64() -> impl proptest::strategy::Strategy<Value = f64> {
        use proptest::prelude::*;
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MAX),
            Just(1e308),
            Just(-1e308),
            Just(f64::from_bits(1)),
            Just(f64::MIN_POSITIVE),
            Just(0.0),
            Just(-0.0),
            Just(1.0),
            proptest::num::f64::ANY,
            0.0..1e3f64,
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 4096, ..Default::default() })]

        /// The precondition of the gathers in [`RiskBounds::cost_bounds_x4`]: the table index of
        /// any position — NaN, ±∞, negative, huge, any bit pattern — is in `[0, N − 1]`, lane
        /// by lane equal to the scalar [`table_index`].
        #[test]
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        fn table_index_x4_stays_in_the_table(p in proptest::array::uniform4(extreme_f64())) {
            use std::arch::x86_64::*;
            if std::is_x86_feature_detected!("avx2") {
                let mut got = [0i32; 4];
                // SAFETY: AVX2 is detected above; `got` holds four i32.
                unsafe {
                    let j = bounds_x4::table_index_x4(_mm256_set_pd(p[3], p[2], p[1], p[0]));
                    _mm_storeu_si128(got.as_mut_ptr().cast(), j);
                }
                for (g, &x) in got.iter().zip(&p) {
                    proptest::prop_assert!((0..RISK_GRID as i32).contains(g), "pos {x:e}: index {g}");
                    proptest::prop_assert_eq!(*g as usize, table_index(x), "pos {:e}", x);
                }
            }
            for &x in &p {
                proptest::prop_assert!(table_index(x) < RISK_GRID);
            }
        }

        /// The four-lane bounds on extreme pairs (NaN, ±∞, 1e308, subnormal, negative residues):
        /// no read outside the table, and the scalar bounds' values lane by lane (NaN where the
        /// scalar is NaN).
        #[test]
        #[cfg(target_arch = "x86_64")]
        #[allow(unsafe_code)]
        fn cost_bounds_x4_on_extreme_pairs_equal_the_scalar_bounds(
            wp in proptest::array::uniform4(extreme_f64()),
            wn in proptest::array::uniform4(extreme_f64()),
            ti in 0usize..4,
        ) {
            use std::arch::x86_64::*;
            if !std::is_x86_feature_detected!("avx2") {
                return Ok(());
            }
            let t = [0.8, -2.0, 1.3, 2.0][ti];
            let rb = RiskBounds::for_t(t).expect("supported");
            let (mut lo, mut hi) = ([0.0; 4], [0.0; 4]);
            // SAFETY: AVX2 is detected above; the arrays hold four values.
            unsafe {
                let (l, h) = rb.cost_bounds_x4(
                    _mm256_set_pd(wp[3], wp[2], wp[1], wp[0]),
                    _mm256_set_pd(wn[3], wn[2], wn[1], wn[0]),
                );
                _mm256_storeu_pd(lo.as_mut_ptr(), l);
                _mm256_storeu_pd(hi.as_mut_ptr(), h);
            }
            for i in 0..4 {
                let (sl, sh) = rb.cost_bounds(wp[i], wn[i]);
                let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                proptest::prop_assert!(same(lo[i], sl) && same(hi[i], sh),
                    "t = {}: ({:e}, {:e}): ({:e}, {:e}) vs ({:e}, {:e})", t, wp[i], wn[i], lo[i], hi[i], sl, sh);
            }
        }
    }

    /// A side of +∞ (finite statistics whose sum overflowed) gives no bounds, (0, 0), and reads
    /// inside the table, scalar and four lanes alike.
    #[test]
    #[allow(unsafe_code)]
    fn tempered_bounds_of_an_infinite_side_are_zero() {
        let rb = RiskBounds::for_t(0.5).expect("supported");
        for (p, n) in [(f64::INFINITY, 1.0), (f64::INFINITY, 0.0), (f64::INFINITY, f64::INFINITY), (f64::NAN, 1.0)] {
            assert_eq!(rb.cost_bounds(p, n), (0.0, 0.0), "({p}, {n})");
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            use std::arch::x86_64::*;
            let (mut lo, mut hi) = ([1.0; 4], [1.0; 4]);
            // SAFETY: AVX2 is detected above; the arrays hold four values.
            unsafe {
                let inf = f64::INFINITY;
                let (l, h) =
                    rb.cost_bounds_x4(_mm256_set_pd(inf, inf, inf, f64::NAN), _mm256_set_pd(1.0, 0.0, inf, 1.0));
                _mm256_storeu_pd(lo.as_mut_ptr(), l);
                _mm256_storeu_pd(hi.as_mut_ptr(), h);
            }
            assert_eq!((lo, hi), ([0.0; 4], [0.0; 4]));
        }
    }

    /// The curvature bound ([`Curvature::gain_bound`]) is at least the gain as the split search
    /// computes it, `P − C̃_l − C̃_r`, and its division-free test ([`Curvature::may_reach`]) keeps
    /// every cut below the gain and prunes cuts above the bound, on random nodes and children
    /// (balanced and skewed fractions, tiny children, near-equal fractions) at temperatures
    /// across the supported range; and it is tight where the children's fractions are close
    /// (within 3× the gain for 80 % of such candidates at t = 0.8).
    #[test]
    fn curvature_bounds_contain_the_gains() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(31);
        let (mut offered, mut near, mut tight, mut pruned) = (0, 0, 0, 0);
        for &t in &[-10.0, -2.0, 0.0, 0.3, 0.5, 0.8, 0.9, 0.99, 1.01, 1.3, 1.7, 2.0] {
            let rb = RiskBounds::for_t(t).expect("supported");
            let crit = Criterion::Tempered { t };
            for i in 0..40_000 {
                let scale = 10f64.powi(rng.gen_range(-6..6));
                let u = if i % 3 == 0 { rng.gen::<f64>() } else { rng.gen_range(0.3..0.7) };
                let (t0, t1) = (u * scale, (1.0 - u) * scale);
                let share = match i % 4 {
                    0 => rng.gen::<f64>(),
                    1 => rng.gen::<f64>() * 1e-4,
                    _ => rng.gen_range(0.1..0.9),
                };
                let wobble = match i % 5 {
                    0 => rng.gen_range(-1e-6..1e-6),
                    1 => rng.gen_range(-0.5..0.5),
                    _ => rng.gen_range(-0.05..0.05),
                };
                let ul = (u + wobble).clamp(0.0, 1.0);
                let (l0, l1) = ((share * scale * ul).min(t0), (share * scale * (1.0 - ul)).min(t1));
                let tol = 1e-12 * scale;
                let parent = crit.cost(t0, t1);
                let g = GainBounds {
                    rb: &rb,
                    t0,
                    t1,
                    tol,
                    parent,
                    min_w: 0.0,
                    forbid: false,
                    margin: 1e-10 * (parent.abs() + scale),
                };
                let (r0, r1) = (residue_free(t0 - l0, tol), residue_free(t1 - l1, tol));
                let gain = parent - crit.cost(l0, l1) - crit.cost(r0, r1);
                let curvature = Curvature::of_node(&rb, t0, t1);
                let bound = curvature.gain_bound(&g, l0, l1);
                assert!(
                    gain <= bound,
                    "t = {t}: node ({t0:e}, {t1:e}), left ({l0:e}, {l1:e}): gain {gain:e} > bound {bound:e}"
                );
                // The division-free test never prunes a cut the gain reaches.
                let cut = gain * rng.gen_range(0.0..1.0) - rng.gen::<f64>() * g.margin;
                let need = (cut - g.margin) * (t0 + t1);
                assert!(
                    curvature.may_reach(&g, l0, l1, need),
                    "t = {t}: left ({l0:e}, {l1:e}), gain {gain:e}, cut {cut:e}"
                );
                let high = 1.01 * bound + g.margin;
                pruned += usize::from(!curvature.may_reach(&g, l0, l1, (high - g.margin) * (t0 + t1)));
                if bound < f64::INFINITY {
                    offered += 1;
                    if t == 0.8 && (0.3..0.7).contains(&u) && i % 4 >= 2 && wobble.abs() < 0.05 && gain > 1e-6 * scale {
                        near += 1;
                        tight += usize::from(bound <= 3.0 * gain);
                    }
                }
            }
        }
        assert!(offered > 300_000 && near > 5_000, "{offered} offered, {near} near");
        // Above the bound, the division-free test prunes wherever a bound is offered.
        assert!(pruned as f64 >= 0.99 * offered as f64, "{pruned} of {offered} pruned above the bound");
        // The sparse table's two reads give the largest cell of every range.
        let rb = RiskBounds::for_t(0.8).expect("supported");
        for _ in 0..20_000 {
            let (a, b) = (rng.gen::<f64>(), rng.gen::<f64>());
            let (a, b) = (a.min(b), a.max(b));
            let (i, j) = curvature_cells(a, b).expect("in [0, 1]");
            let want = rb.curv[0][i..=j].iter().fold(0.0, |m: f64, &k| m.max(k));
            assert_eq!(rb.curvature_on(a, b), want, "[{a}, {b}]");
        }
        assert!(tight as f64 >= 0.8 * near as f64, "{tight} of {near} within 3× the gain");
    }

    /// The bounds rest on the concavity of L^(t) (docs/explanation/weak-learners.md#weak-learners-criteria): its second differences on
    /// a fine grid are ≤ 0 (up to rounding) for every temperature where bounds are offered.
    #[test]
    fn tempered_risk_is_concave_where_bounds_are_offered() {
        for t in [-10.0, -1.0, 0.0, 0.3, 0.8, 0.99, 1.01, 1.3, 1.7, 2.0] {
            let n = 20_000;
            let l: Vec<f64> = (0..=n).map(|j| bayes_risk(j as f64 / n as f64, t)).collect();
            for j in 1..n {
                let d2 = l[j - 1] - 2.0 * l[j] + l[j + 1];
                assert!(d2 <= 1e-13, "t = {t}, u = {}: second difference {d2:e}", j as f64 / n as f64);
            }
        }
    }
}
