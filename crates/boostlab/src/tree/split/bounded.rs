//! Guaranteed bounds of the tempered leaf cost and of split gains, so that the scan computes the
//! exact cost only for candidates the bounds cannot decide.

use super::{residue_free, PairCost, SearchCtx};
use crate::math::tempered::bayes_risk;
use crate::tree::Criterion;

/// The tempered criterion with its table of bounds.
pub(in crate::tree) struct Bounded<'a> {
    pub(in crate::tree) crit: Criterion,
    pub(in crate::tree) rb: &'a RiskBounds,
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
pub(in crate::tree) struct Lazy {
    pub(in crate::tree) bin: usize,
    pub(in crate::tree) missing_left: bool,
    /// The prefix sums of the value bins up to `bin`.
    pub(in crate::tree) a: (f64, f64),
    pub(in crate::tree) lo: f64,
    pub(in crate::tree) hi: f64,
    pub(in crate::tree) exact: bool,
}

impl Lazy {
    /// The exact gain (computed once), with the generic scan's arithmetic.
    #[inline]
    pub(in crate::tree) fn exact<C: PairCost>(
        &mut self,
        cost: &C,
        ctx: &SearchCtx<'_>,
        miss: (f64, f64),
        total: (f64, f64),
    ) -> f64 {
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
    pub(in crate::tree) fn replaces<C: PairCost>(
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

/// What [`SearchCtx::lowest_bounded`] needs to bound one candidate's gain.
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
    /// `scan_pair`'s interval `[P − hi_l − hi_r − m, P − lo_l − lo_r + m]` of the gain of the
    /// split whose left child has sums `(l0, l1)`, or NaNs when the split is not admissible
    /// ([`admissible`]'s comparisons without short-circuits).
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

/// Intervals of the grid of [`RiskBounds`]: the knots are `x_j = j/(2N)`, `j = 0..=N`, on `[0, ½]`.
const RISK_GRID: usize = 4096;

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
        let b = Arc::new(RiskBounds { table });
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
