//! Normalisation onto the co-simplex (`Σ c q^(2−t) = 1`), on one machine or over the ranks, and
//! the per-example helpers of the statistics and diagnostics.

use rayon::prelude::*;

use super::kernels::chunk_len;
use super::Regime;
use crate::collective::Shared;
use crate::error::Result;
use crate::math::tempered::{co_simplex_normalize, t_star};

/// Below this, `Σ q̃^(2−t)` summed directly may have lost terms to underflow: [`co_simplex_normalize`]
/// (relative to the largest weight) is used instead.
pub(super) const MIN_DIRECT_SUM: f64 = 1e-200;

/// An upper bound of `ln q` at temperature `t` (every `cᵢ qᵢ^(2−t) ≤ 1`): `−t* ln min c`.
pub(super) fn ln_q_cap_at(t: f64, ln_c_min: f64) -> f64 {
    -t_star(t.clamp(0.0, 1.99)) * ln_c_min
}

/// [`co_simplex_normalize`] with multiplicities: `q /= Z`, `Z = (Σ cᵢ qᵢ^(2−t))^(1/(2−t))` (docs/explanation/tadaboost.md#tadaboost-algorithm,
/// each example counted `cᵢ` times); exactly [`co_simplex_normalize`] without them.
pub(super) fn co_simplex_normalize_mult(q: &mut [f64], c: Option<&[f64]>, t: f64) -> f64 {
    let Some(c) = c else { return co_simplex_normalize(q, t) };
    let e = 2.0 - t;
    let qmax = q.iter().copied().fold(0.0f64, f64::max);
    if q.iter().any(|v| v.is_nan()) {
        return f64::NAN;
    }
    if qmax == 0.0 || !qmax.is_finite() {
        return qmax;
    }
    let sum: f64 = q.iter().zip(c).map(|(&v, &ci)| if v > 0.0 { ci * (v / qmax).powf(e) } else { 0.0 }).sum();
    let z = qmax * sum.powf(1.0 / e);
    if z > 0.0 && z.is_finite() {
        for v in q.iter_mut() {
            *v /= z;
        }
    }
    z
}

/// [`co_simplex_normalize_mult`] over the examples of every rank (multiplicities 1
/// when `c` is `None`): two calls (the largest weight with a NaN flag, then the sum).
pub(super) fn co_simplex_normalize_on(q: &mut [f64], c: Option<&[f64]>, t: f64, coll: &Shared) -> Result<f64> {
    let e = 2.0 - t;
    let mut m = [q.iter().copied().fold(0.0f64, f64::max), f64::from(u8::from(q.iter().any(|v| v.is_nan())))];
    coll.sum_max(&mut [], &mut m)?;
    let qmax = m[0];
    if m[1] > 0.0 {
        return Ok(f64::NAN);
    }
    if qmax == 0.0 || !qmax.is_finite() {
        return Ok(qmax);
    }
    let mult = |i: usize| c.map_or(1.0, |c| c[i]);
    let mut sum = [q.iter().enumerate().map(|(i, &v)| if v > 0.0 { mult(i) * (v / qmax).powf(e) } else { 0.0 }).sum()];
    coll.sum(&mut sum)?;
    let z = qmax * sum[0].powf(1.0 / e);
    if z > 0.0 && z.is_finite() {
        for v in q.iter_mut() {
            *v /= z;
        }
    }
    Ok(z)
}

/// Co-density `q^(2−t)`.
#[inline]
pub(super) fn codensity(q: f64, e: f64, regime: Regime) -> f64 {
    if regime == Regime::One {
        q
    } else {
        q.powf(e)
    }
}

/// `stats[i] = f(i)` in parallel over fixed chunks.
pub(super) fn fill_chunks(stats: &mut [f64], f: impl Fn(usize) -> f64 + Sync + Send) {
    let chunk = chunk_len(stats.len());
    stats.par_chunks_mut(chunk).enumerate().for_each(|(k, st)| {
        for (j, s) in st.iter_mut().enumerate() {
            *s = f(k * chunk + j);
        }
    });
}

/// The learner's statistic of one example: `±c q/Σ c q` (docs/explanation/tadaboost.md#tadaboost-algorithm: `d`, signed by the label).
#[inline]
pub(super) fn stat_value(yi: f64, ci: f64, q: f64, norm: f64) -> f64 {
    crate::boost::signed(yi, ci * q * norm)
}

/// Sets weights below `f64::MIN_POSITIVE` to 0: a subnormal weight carries no information and
/// would make `R = max |u|/q^(1−t)` overflow.
pub(super) fn flush_subnormals(q: &mut [f64]) {
    for v in q.iter_mut() {
        if *v < f64::MIN_POSITIVE {
            *v = 0.0;
        }
    }
}

/// Replaces a non-finite diagnostic by the largest finite value of its sign (JSON has no ∞).
pub(super) fn finite(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(f64::MIN, f64::MAX)
    }
}
