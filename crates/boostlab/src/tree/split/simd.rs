//! The split scan's per-candidate passes compiled twice: for the baseline
//! x86-64 target (SSE2: two `f64` lanes) and, chosen at run time, for AVX2 (four lanes). The
//! two builds run the same Rust code: IEEE `+ − × ÷ √` and comparisons are correctly rounded
//! lane by lane, Rust never contracts `a·b + c` into an FMA (and FMA is not enabled here), and
//! the passes write each candidate's value independently (no reduction whose order the vector
//! width could change), so both builds give the same bits — `simd_passes_equal_the_
//! scalar_passes` checks it. The wheel and the binaries stay built for any x86-64.
//!
//! `BOOSTLAB_SCAN_SIMD=0` in the environment (read once per process) keeps the baseline build,
//! for A/B timing.

use super::bounded::{Curvature, GainBounds};
use super::{ExactGain, PairCost};

/// Whether the AVX2 build runs (detected once per process).
#[cfg(target_arch = "x86_64")]
pub(in crate::tree) fn avx2() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::is_x86_feature_detected!("avx2") && std::env::var("BOOSTLAB_SCAN_SIMD").map_or(true, |v| v != "0")
    })
}

/// [`super::SearchCtx::pool_exact`]'s pass 2: every candidate's exact gain into `out`
/// (`acc.len()` or, with a missing side, `2·acc.len()` values, in the generic scan's order).
#[inline(always)]
fn exact_gains_body<C: PairCost>(g: &ExactGain<'_, C>, acc: &[(f64, f64)], miss: Option<(f64, f64)>, out: &mut [f64]) {
    each_candidate(acc, miss, out, |l0, l1| g.gain(l0, l1));
}

/// [`super::SearchCtx::pool_bounded`]'s intervals: every candidate's gain interval into
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
pub(in crate::tree) fn exact_gains_avx2<C: PairCost>(
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
pub(in crate::tree) fn gain_intervals_avx2(
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
pub(in crate::tree) fn exact_gains_scalar<C: PairCost>(
    g: &ExactGain<'_, C>,
    acc: &[(f64, f64)],
    miss: Option<(f64, f64)>,
    out: &mut [f64],
) {
    exact_gains_body(g, acc, miss, out);
}

/// The baseline build of [`gain_intervals`] (tests compare the two).
pub(in crate::tree) fn gain_intervals_scalar(
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
pub(in crate::tree) fn exact_gains<C: PairCost>(
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
pub(in crate::tree) fn gain_intervals(
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

/// `f(l0, l1)` of every candidate's left sums into `out`, in the generic scan's order (bins,
/// then the missing side). `+ 0.0`: the generic scan adds the (empty) missing side's zeros too
/// (a −0 becomes +0).
#[inline(always)]
fn each_candidate(acc: &[(f64, f64)], miss: Option<(f64, f64)>, out: &mut [f64], f: impl Fn(f64, f64) -> f64) {
    match miss {
        None => {
            for (o, &(a0, a1)) in out.iter_mut().zip(acc) {
                *o = f(a0 + 0.0, a1 + 0.0);
            }
        }
        Some((m0, m1)) => {
            for (o, &(a0, a1)) in out.chunks_exact_mut(2).zip(acc) {
                o[0] = f(a0 + 0.0, a1 + 0.0);
                o[1] = f(a0 + m0, a1 + m1);
            }
        }
    }
}

/// [`super::SearchCtx::pool_bounded`]'s first pass into `out`, in the generic scan's order:
/// without `need`, every candidate's curvature bound of its gain ([`Curvature::gain_bound`]);
/// with `need = (cut − margin)·W` (the node's floor is known), `+∞` for every candidate whose
/// bound may reach the cut ([`Curvature::may_reach`], no division) and `−∞` for the others. The
/// values need not agree between builds: they decide what is computed, never a result.
#[inline(always)]
fn curvature_body(
    b: &GainBounds<'_>,
    k: &Curvature,
    acc: &[(f64, f64)],
    miss: Option<(f64, f64)>,
    need: Option<f64>,
    out: &mut [f64],
) {
    match need {
        None => each_candidate(acc, miss, out, |l0, l1| k.gain_bound(b, l0, l1)),
        Some(need) => {
            each_candidate(
                acc,
                miss,
                out,
                |l0, l1| {
                    if k.may_reach(b, l0, l1, need) {
                        f64::INFINITY
                    } else {
                        f64::NEG_INFINITY
                    }
                },
            )
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn curvature_avx2(
    b: &GainBounds<'_>,
    k: &Curvature,
    acc: &[(f64, f64)],
    miss: Option<(f64, f64)>,
    need: Option<f64>,
    out: &mut [f64],
) {
    curvature_body(b, k, acc, miss, need, out);
}

/// [`curvature_body`], by the AVX2 build when the CPU has it.
#[allow(unsafe_code)]
pub(in crate::tree) fn curvature(
    b: &GainBounds<'_>,
    k: &Curvature,
    acc: &[(f64, f64)],
    miss: Option<(f64, f64)>,
    need: Option<f64>,
    out: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if avx2() {
        // SAFETY: as in `exact_gains`.
        unsafe { curvature_avx2(b, k, acc, miss, need, out) };
        return;
    }
    curvature_body(b, k, acc, miss, need, out);
}

#[cfg(target_arch = "x86_64")]
impl GainBounds<'_> {
    /// [`Self::interval`] of four candidates with AVX2: the same operations in the same
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
