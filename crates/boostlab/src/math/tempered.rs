//! Tempered arithmetic (docs/explanation/tempered.md#tempered), the tempered Bayes risks and links (docs/explanation/weak-learners.md#weak-learners-criteria) and the tempered
//! loss and margins of t-AdaBoost (docs/explanation/tadaboost.md#tadaboost-algorithm).
//!
//! Every function takes the temperature `t` as its last argument. `t = 1` is the continuous limit
//! (ordinary `ln`/`exp`): any `t` with `|1 − t| < 1e−9` ([`is_one`]) is computed with `ln`/`exp`
//! exactly, and every formula with a `1/(1 − t)` is written so that it stays accurate as `t → 1`
//! (`expm1`/`ln_1p` forms, powers taken in log space), instead of dividing two cancelling
//! differences.
//!
//! The key identities, each tested below:
//! `exp_t(log_t z) = z`, `exp_t(a + b) = exp_t(a) ⊗_t exp_t(b)`, and
//! `link_optimal(p, t) = tanh((1−t)·½ln(p/(1−p)))/(1−t)`, which is both the bounded tempered link
//! and (at `p = (1+ρ)/2`, divided by `R`) t-AdaBoost's leverage `µ`.

use crate::error::{Error, Result};

/// `|1 − t|` below this is treated as `t = 1` (docs/explanation/tempered.md#tempered).
pub const T_ONE_TOL: f64 = 1e-9;

/// Whether `t` is treated as 1, i.e. `|1 − t| < 1e−9` (docs/explanation/tempered.md#tempered): then `log_t = ln`, `exp_t = exp`.
#[inline]
pub fn is_one(t: f64) -> bool {
    (1.0 - t).abs() < T_ONE_TOL
}

/// `t* = 1/(2 − t)` (docs/explanation/tempered.md#tempered), defined for `t < 2`.
#[inline]
pub fn t_star(t: f64) -> f64 {
    1.0 / (2.0 - t)
}

/// Tempered logarithm `log_t(z) = (z^(1−t) − 1)/(1 − t)` for `z ≥ 0` (docs/explanation/tempered.md#tempered); `ln z` at `t = 1`.
///
/// `log_t(0) = −1/(1−t)` for `t < 1` and `−∞` for `t ≥ 1`. Computed as `expm1((1−t) ln z)/(1−t)`,
/// accurate as `t → 1`. Negative or NaN `z` gives NaN.
#[inline]
pub fn log_t(z: f64, t: f64) -> f64 {
    if is_one(t) {
        return z.ln();
    }
    let s = 1.0 - t;
    (s * z.ln()).exp_m1() / s
}

/// Tempered exponential `exp_t(z) = [1 + (1−t) z]_+^(1/(1−t))` (docs/explanation/tempered.md#tempered); `exp z` at `t = 1`.
///
/// For `t < 1` it is 0 when `1 + (1−t) z ≤ 0` (weights switch off); for `t > 1` it is `+∞` when
/// `1 + (1−t) z ≤ 0` — callers must detect that (and float overflow, also `+∞`) before use.
/// Computed as `exp(ln_1p((1−t) z)/(1−t))`, accurate as `t → 1`.
#[inline]
pub fn exp_t(z: f64, t: f64) -> f64 {
    if is_one(t) {
        return z.exp();
    }
    let s = 1.0 - t;
    let x = s * z;
    if x <= -1.0 {
        return if s > 0.0 { 0.0 } else { f64::INFINITY };
    }
    (x.ln_1p() / s).exp()
}

/// Tempered product `a ⊗_t b = [a^(1−t) + b^(1−t) − 1]_+^(1/(1−t))` for `a, b ≥ 0` (docs/explanation/tempered.md#tempered);
/// `a·b` at `t = 1`. Satisfies `exp_t(x + y) = exp_t(x) ⊗_t exp_t(y)` wherever neither factor
/// is clipped (`1 + (1−t)x > 0` and `1 + (1−t)y > 0`).
#[inline]
pub fn t_product(a: f64, b: f64, t: f64) -> f64 {
    if is_one(t) {
        return a * b;
    }
    // [a^s + b^s − 1]_+^(1/s) = exp_t(log_t a + log_t b).
    exp_t(log_t(a, t) + log_t(b, t), t)
}

/// Tempered hyperbolic tangent `tanh_t(z) = (1 − exp_t(−2z))/(1 + exp_t(−2z)) ∈ [−1, 1]` (docs/explanation/tempered.md#tempered).
#[inline]
pub fn tanh_t(z: f64, t: f64) -> f64 {
    if is_one(t) {
        return z.tanh();
    }
    let e = exp_t(-2.0 * z, t);
    if e.is_infinite() {
        -1.0
    } else {
        (1.0 - e) / (1.0 + e)
    }
}

/// Power mean `M_s(a, b) = ((a^s + b^s)/2)^(1/s)` of `a, b ≥ 0` (docs/explanation/tempered.md#tempered).
///
/// `M_0` is the geometric mean `√(ab)`, `M_1` the arithmetic, `M_−1` the harmonic mean,
/// `M_{+∞} = max`, `M_{−∞} = min`. For `s < 0` a zero argument gives 0. Computed relative to the
/// dominant argument `c` (the max for `s > 0`, the min for `s < 0`) as
/// `c · exp(ln_1p(expm1(s ln(o/c))/2)/s)`, so it neither overflows for large `|s|` nor loses
/// accuracy as `s → 0`.
pub fn power_mean(a: f64, b: f64, s: f64) -> f64 {
    if a.is_nan() || b.is_nan() || s.is_nan() {
        return f64::NAN;
    }
    if s == f64::INFINITY {
        return a.max(b);
    }
    if s == f64::NEG_INFINITY {
        return a.min(b);
    }
    if s == 0.0 {
        return a.sqrt() * b.sqrt();
    }
    let (c, o) = if s > 0.0 { (a.max(b), a.min(b)) } else { (a.min(b), a.max(b)) };
    if c == 0.0 || c.is_infinite() {
        return c;
    }
    // w = (o/c)^s ∈ [0, 1]; M_s = c ((1 + w)/2)^(1/s). One logarithm of the ratio (it is the
    // criterion of every split candidate), two when the ratio overflows (s < 0, c tiny).
    let r = o / c;
    let lr = if r.is_finite() { r.ln() } else { o.ln() - c.ln() };
    let half_wm1 = 0.5 * (s * lr).exp_m1();
    c * (half_wm1.ln_1p() / s).exp()
}

/// Tempered Bayes risk `L^(t)(u) = 2u(1−u)/M_{1−t}(u, 1−u)` (docs/explanation/weak-learners.md#weak-learners-criteria), 0 outside `(0, 1)`.
///
/// `t = 0` is Gini `4u(1−u)`, `t = 1` Matusita `2√(u(1−u))`, `t = 2` the constant 1 on `(0, 1)`,
/// `t = −∞` the empirical risk `2 min(u, 1−u)`. For finite `t < 1`,
/// `2min(u,1−u) ≤ L^(t)(u) ≤ 2^(1/(1−t)) · 2min(u,1−u)`.
pub fn bayes_risk(u: f64, t: f64) -> f64 {
    if u.is_nan() || t.is_nan() {
        return f64::NAN;
    }
    if u <= 0.0 || u >= 1.0 {
        return 0.0;
    }
    let v = 1.0 - u;
    if is_one(t) {
        // docs/explanation/weak-learners.md#weak-learners-criteria: Matusita.
        return 2.0 * (u * v).sqrt();
    }
    // docs/explanation/weak-learners.md#weak-learners-criteria: L^(t)(u) = 2u(1−u)/M_{1−t}(u, 1−u).
    2.0 * u * v / power_mean(u, v, 1.0 - t)
}

/// Weighted tempered Bayes risk `W·L^(t)(W+/W)` of one pair of non-negative weights, `W = W+ + W−`
/// (docs/explanation/weak-learners.md#weak-learners-criteria): the split criterion of a leaf, evaluated for every split candidate.
///
/// Exactly `W · bayes_risk(W+/W, t)`; 0 when `W = 0`.
#[inline]
pub fn weighted_bayes_risk(wp: f64, wn: f64, t: f64) -> f64 {
    let w = wp + wn;
    if w > 0.0 {
        w * bayes_risk(wp / w, t)
    } else {
        0.0
    }
}

/// `optimal` tempered leaf value (docs/explanation/weak-learners.md#weak-learners-tempered-leaves, the paper's eq. 63):
/// `(p^(1−t) − (1−p)^(1−t)) / ((1−t)(p^(1−t) + (1−p)^(1−t)))`, `½ ln(p/(1−p))` at `t = 1`.
///
/// Computed as `tanh((1−t)·ℓ)/(1−t)` with `ℓ = ½ ln(p/(1−p))`, which is the same quantity,
/// continuous in `t` and defined at `p ∈ {0, 1}`: for `t ≠ 1` it lies in `[−1/|1−t|, 1/|1−t|]`
/// and reaches the bound at pure leaves. At `t = 1` a pure leaf gives `±∞` (the caller caps it).
pub fn link_optimal(p: f64, t: f64) -> f64 {
    let ell = 0.5 * (p.ln() - (1.0 - p).ln());
    if is_one(t) {
        return ell;
    }
    let s = 1.0 - t;
    // (a − b)/(a + b) = tanh(½ ln(a/b)) with a = p^s, b = (1−p)^s.
    (s * ell).tanh() / s
}

/// `canonical` tempered leaf value (docs/explanation/weak-learners.md#weak-learners-tempered-leaves, the authors' code):
/// `−L^(t)′(p) = (p^(2−t) − (1−p)^(2−t)) / M_{1−t}(p, 1−p)^(2−t)`.
///
/// `(2p−1)/√(p(1−p))` at `t = 1`, `4(2p−1)` at `t = 0`. For `t < 1` it is bounded by
/// `2^((2−t)/(1−t))`, reached at pure leaves; for `t ≥ 1` pure leaves give `±∞` (except `t = 2`,
/// where the risk is constant and the value is 0). The caller caps it.
pub fn link_canonical(p: f64, t: f64) -> f64 {
    if p.is_nan() || t.is_nan() {
        return f64::NAN;
    }
    let e = 2.0 - t;
    if e == 0.0 {
        return 0.0;
    }
    if p <= 0.0 || p >= 1.0 {
        let sign = if p >= 1.0 { 1.0 } else { -1.0 };
        return if t < 1.0 && !is_one(t) {
            // M_{1−t}(1, 0) = 2^(−1/(1−t)), so the value is 2^((2−t)/(1−t)).
            sign * (e / (1.0 - t) * std::f64::consts::LN_2).exp()
        } else {
            sign * f64::INFINITY
        };
    }
    let v = 1.0 - p;
    let m = if is_one(t) { (p * v).sqrt() } else { power_mean(p, v, 1.0 - t) };
    let lm = m.ln();
    // (p/M)^(2−t) − ((1−p)/M)^(2−t), each power taken in log space.
    (e * (p.ln() - lm)).exp() - (e * (v.ln() - lm)).exp()
}

/// `K_t(z) = (1 − z²)/M_{1−t}(1 − z, 1 + z)` for `z ∈ [−1, 1]`, `√(1 − z²)` at `t = 1`: the
/// per-round factor of t-AdaBoost's training-error bound (docs/explanation/tadaboost.md#tadaboost-algorithm).
pub fn k_t(z: f64, t: f64) -> f64 {
    let (a, b) = (1.0 - z, 1.0 + z);
    if is_one(t) {
        return (a * b).max(0.0).sqrt();
    }
    let m = power_mean(a.max(0.0), b.max(0.0), 1.0 - t);
    if m == 0.0 {
        0.0
    } else {
        (a * b).max(0.0) / m
    }
}

/// One t-AdaBoost weight update without normalisation (docs/explanation/tadaboost.md#tadaboost-algorithm):
/// `exp_t(log_t q − µu) = [q^(1−t) − (1−t)µu]_+^(1/(1−t))`, `q·exp(−µu)` at `t = 1`.
///
/// `t < 1`: a weight can switch off (0) and a zero weight can come back (`(−(1−t)µu)^(1/(1−t))`
/// when `µu < 0`). `t > 1`: a zero weight stays 0, and the result is `+∞` when the bracket is
/// `≤ 0` or the power overflows — callers must detect that. For `q > 0` it is evaluated as
/// `q · exp(ln_1p(x)/(1−t))`, `x = −(1−t)µu/q^(1−t)`, accurate for tiny `q` and `t → 1`.
pub fn tempered_update(q: f64, mu: f64, u: f64, t: f64) -> f64 {
    if is_one(t) {
        return q * (-mu * u).exp();
    }
    let s = 1.0 - t;
    let qs = if q > 0.0 { (s * q.ln()).exp() } else { 0.0 };
    if qs == 0.0 {
        // q = 0 (or q^(1−t) underflows, t < 1): the result is [−(1−t)µu]_+^(1/(1−t)).
        if s < 0.0 && q == 0.0 {
            return 0.0; // log_t(0) = −∞ for t > 1.
        }
        let z = -s * mu * u;
        return if z > 0.0 { (z.ln() / s).exp() } else { 0.0 };
    }
    update_factor(q, -s * mu * u / qs, s)
}

/// `q · (1 + x)^(1/s)` with the switch-off/overflow convention of `exp_t` (`x ≤ −1`: 0 for `s > 0`,
/// `+∞` for `s < 0`). Shared by [`tempered_update`] and t-AdaBoost's kernel.
#[inline]
pub(crate) fn update_factor(q: f64, x: f64, s: f64) -> f64 {
    if x <= -1.0 {
        return if s > 0.0 { 0.0 } else { f64::INFINITY };
    }
    q * (x.ln_1p() / s).exp()
}

/// Projects non-negative `q` onto the co-simplex (docs/explanation/tempered.md#tempered): divides by
/// `Z = (Σ_i q_i^(2−t))^(1/(2−t))` and returns `Z`, for `t < 2`.
///
/// The sum is taken relative to `max q`, so tiny or huge weights neither underflow nor overflow.
/// When `Z` is 0 (all weights zero) or not finite, `q` is left unchanged and `Z` is returned for
/// the caller to handle.
pub fn co_simplex_normalize(q: &mut [f64], t: f64) -> f64 {
    let e = 2.0 - t;
    let qmax = q.iter().copied().fold(0.0f64, f64::max);
    if qmax == 0.0 || !qmax.is_finite() || q.iter().any(|v| v.is_nan()) {
        return if q.iter().any(|v| v.is_nan()) { f64::NAN } else { qmax };
    }
    let sum: f64 =
        if e == 1.0 { q.iter().map(|&v| v / qmax).sum() } else { q.iter().map(|&v| (v / qmax).powf(e)).sum() };
    // docs/explanation/tadaboost.md#tadaboost-algorithm: Z = (Σ q̃^(2−t))^(1/(2−t)).
    let z = qmax * if e == 1.0 { sum } else { sum.powf(1.0 / e) };
    if z > 0.0 && z.is_finite() {
        for v in q.iter_mut() {
            *v /= z;
        }
    }
    z
}

/// The power mean computed naively (`ln o − ln c`, two logarithms): the reference twin of
/// [`power_mean`] and [`weighted_bayes_risk`] in tests.
#[cfg(test)]
pub(crate) fn reference_weighted_bayes_risk(wp: f64, wn: f64, t: f64) -> f64 {
    let w = wp + wn;
    if w.is_nan() || w <= 0.0 {
        return 0.0;
    }
    let u = wp / w;
    if u <= 0.0 || u >= 1.0 {
        return 0.0;
    }
    let v = 1.0 - u;
    if is_one(t) {
        return w * (2.0 * (u * v).sqrt());
    }
    let s = 1.0 - t;
    let m = if s == f64::INFINITY {
        u.max(v)
    } else {
        let (c, o) = if s > 0.0 { (u.max(v), u.min(v)) } else { (u.min(v), u.max(v)) };
        c * ((0.5 * (s * (o.ln() - c.ln())).exp_m1()).ln_1p() / s).exp()
    };
    w * (2.0 * u * v / m)
}

fn check_scores(y: &[f64], scores: &[f64], t: f64) -> Result<()> {
    if y.len() != scores.len() {
        return Err(Error::InvalidData(format!("{} labels but {} scores", y.len(), scores.len())));
    }
    if y.is_empty() {
        return Err(Error::InvalidData("no examples".into()));
    }
    if let Some(v) = y.iter().find(|&&v| v != 1.0 && v != -1.0) {
        return Err(Error::InvalidData(format!("label {v} is not −1 or +1")));
    }
    if t.is_nan() || t >= 2.0 {
        return Err(Error::param("t", "a temperature t < 2", t));
    }
    Ok(())
}

/// Tempered exponential loss `F_t(H) = (1/m) Σ_i exp_t(−y_i H_i)^(2−t)` (docs/explanation/tadaboost.md#tadaboost-algorithm), the quantity
/// t-AdaBoost minimises up to scaling; the exponential loss at `t = 1`.
///
/// `y` holds ±1 labels and `scores` the ensemble scores `H(x_i)`; `t < 2`. For `t > 1` the loss is
/// `+∞` as soon as one example has `y_i H_i ≤ −1/(t−1)`.
pub fn tempered_loss(y: &[f64], scores: &[f64], t: f64) -> Result<f64> {
    check_scores(y, scores, t)?;
    let e = 2.0 - t;
    let sum: f64 = y.iter().zip(scores).map(|(&yi, &hi)| exp_t(-yi * hi, t).powf(e)).sum();
    Ok(sum / y.len() as f64)
}

/// Tempered margin `ν_t = tanh_t(y H / 2) ∈ [−1, 1]` of one example with edge `yh = y·H(x)`
/// (docs/explanation/tadaboost.md#tadaboost-algorithm).
#[inline]
pub fn tempered_margin(yh: f64, t: f64) -> f64 {
    tanh_t(0.5 * yh, t)
}

/// Tempered margin risk `F_{t,θ}(H) = (1/m) Σ_i [ν_t(x_i, y_i) ≤ θ]` (docs/explanation/tadaboost.md#tadaboost-algorithm); `θ = 0` gives the
/// training error with the convention that a score of exactly 0 is an error for both classes.
///
/// `y` holds ±1 labels, `scores` the ensemble scores, `t < 2`, `θ ∈ (−1, 1)` meaningful.
pub fn tempered_margin_risk(y: &[f64], scores: &[f64], t: f64, theta: f64) -> Result<f64> {
    check_scores(y, scores, t)?;
    if theta.is_nan() {
        return Err(Error::param("theta", "a margin threshold in (−1, 1)", theta));
    }
    let count = y.iter().zip(scores).filter(|(&yi, &hi)| tempered_margin(yi * hi, t) <= theta).count();
    Ok(count as f64 / y.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TS: [f64; 10] = [-2.0, 0.0, 0.2, 0.5, 0.9, 0.999, 1.0, 1.1, 1.5, 1.9];

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * (1.0 + a.abs().max(b.abs()))
    }

    #[test]
    fn is_one_and_t_star() {
        assert!(is_one(1.0) && is_one(1.0 - 5e-10) && is_one(1.0 + 5e-10));
        assert!(!is_one(1.0 - 2e-9) && !is_one(0.0));
        assert_eq!(t_star(0.0), 0.5);
        assert_eq!(t_star(1.0), 1.0);
        assert_eq!(t_star(1.5), 2.0);
    }

    #[test]
    fn log_exp_golden_values() {
        // t = 0: log_0(z) = z − 1, exp_0(z) = [1 + z]_+.
        assert!(close(log_t(3.0, 0.0), 2.0, 1e-15));
        assert!(close(exp_t(2.0, 0.0), 3.0, 1e-15));
        assert_eq!(exp_t(-1.0, 0.0), 0.0);
        assert_eq!(exp_t(-5.0, 0.0), 0.0);
        // t = 0.5: log(z) = 2(√z − 1), exp(z) = (1 + z/2)^2.
        assert!(close(log_t(4.0, 0.5), 2.0, 1e-15));
        assert!(close(exp_t(2.0, 0.5), 4.0, 1e-15));
        // t = 1.5: exp(z) = (1 − z/2)^(−2), +∞ at z ≥ 2.
        assert!(close(exp_t(1.0, 1.5), 4.0, 1e-15));
        assert_eq!(exp_t(2.0, 1.5), f64::INFINITY);
        assert_eq!(exp_t(3.0, 1.5), f64::INFINITY);
        // log_t(0) = −1/(1−t) for t < 1, −∞ for t ≥ 1.
        assert!(close(log_t(0.0, 0.2), -1.25, 1e-15));
        assert_eq!(log_t(0.0, 1.0), f64::NEG_INFINITY);
        assert_eq!(log_t(0.0, 1.5), f64::NEG_INFINITY);
        // exp_t(log_t(0)) = 0 for every t.
        for t in TS {
            assert_eq!(exp_t(log_t(0.0, t), t), 0.0, "t={t}");
        }
    }

    #[test]
    fn limits_as_t_goes_to_one() {
        for z in [1e-12, 0.01, 0.3, 1.0, 2.5, 40.0] {
            for eps in [1e-12, 5e-10] {
                for t in [1.0 - eps, 1.0 + eps] {
                    assert_eq!(log_t(z, t), z.ln());
                }
            }
            // Just outside the tolerance: log_t(z) = ln z + (1−t) ln²z/2 + O((1−t)²).
            for s in [2e-9, -2e-9, 1e-7, -1e-7] {
                let l = z.ln();
                let expected = l + s * l * l / 2.0;
                let tol = 1e-14 * (1.0 + l.abs()) + s * s * l.abs().powi(3);
                assert!((log_t(z, 1.0 - s) - expected).abs() < tol, "z={z} s={s}");
            }
        }
        for z in [-30.0, -1.0, 0.0, 0.7, 5.0] {
            for s in [2e-9, -2e-9, 1e-8] {
                let e = exp_t(z, 1.0 - s);
                // exp_t(z) = e^z (1 − s z²/2 + O(s²)).
                assert!(close(e, z.exp() * (1.0 - s * z * z / 2.0), 1e-13), "z={z} s={s}");
            }
        }
        assert!(close(tanh_t(0.8, 1.0 - 2e-9), 0.8f64.tanh(), 1e-9));
        assert!(close(t_product(0.3, 0.7, 1.0 + 2e-9), 0.21, 1e-9));
    }

    #[test]
    fn power_means() {
        let (a, b) = (0.3f64, 2.0f64);
        assert!(close(power_mean(a, b, 0.0), (a * b).sqrt(), 1e-15));
        assert!(close(power_mean(a, b, 1.0), 1.15, 1e-15));
        assert!(close(power_mean(a, b, -1.0), 2.0 * a * b / (a + b), 1e-15));
        assert!(close(power_mean(a, b, 2.0), ((a * a + b * b) / 2.0).sqrt(), 1e-15));
        assert_eq!(power_mean(a, b, f64::INFINITY), b);
        assert_eq!(power_mean(a, b, f64::NEG_INFINITY), a);
        // Continuity at s = 0 (the naive formula loses ~8 digits at s = 1e−9).
        for s in [1e-14, 1e-9, -1e-9] {
            assert!(close(power_mean(a, b, s), (a * b).sqrt(), 1e-8), "s={s}");
        }
        // Zeros: M_s(0, b) = b 2^(−1/s) for s > 0, 0 for s ≤ 0.
        assert!(close(power_mean(0.0, 3.0, 1.0), 1.5, 1e-15));
        assert!(close(power_mean(0.0, 3.0, 2.0), 3.0 / 2f64.sqrt(), 1e-15));
        assert_eq!(power_mean(0.0, 3.0, 0.0), 0.0);
        assert_eq!(power_mean(0.0, 3.0, -1.0), 0.0);
        // Large exponents and tiny arguments: no overflow or underflow.
        assert!(close(
            power_mean(0.4, 0.6, 51.0),
            0.6 * (0.5f64 * (1.0 + (2.0f64 / 3.0).powi(51))).powf(1.0 / 51.0),
            1e-14
        ));
        assert!(close(power_mean(1e-300, 1e-300, 0.5), 1e-300, 1e-14));
        assert!(close(power_mean(1e300, 1e300, -3.0), 1e300, 1e-14));
    }

    #[test]
    fn bayes_risks() {
        for u in [1e-9, 0.01, 0.2, 0.5, 0.77, 0.999] {
            let v = 1.0 - u;
            // docs/explanation/weak-learners.md#weak-learners-criteria: L^(0) = Gini, L^(1) = Matusita, L^(2) = 1.
            assert!(close(bayes_risk(u, 0.0), 4.0 * u * v, 1e-14), "u={u}");
            assert!(close(bayes_risk(u, 1.0), 2.0 * (u * v).sqrt(), 1e-15));
            assert!(close(bayes_risk(u, 1.0 - 5e-10), 2.0 * (u * v).sqrt(), 1e-15));
            assert!(close(bayes_risk(u, 1.0 + 2e-9), 2.0 * (u * v).sqrt(), 1e-8));
            assert!(close(bayes_risk(u, 1.0 - 2e-9), 2.0 * (u * v).sqrt(), 1e-8));
            assert!(close(bayes_risk(u, 2.0), 1.0, 1e-14));
            assert!(close(bayes_risk(u, 1.9999), 1.0, 1e-3));
            assert!(close(bayes_risk(u, f64::NEG_INFINITY), 2.0 * u.min(v), 1e-15));
        }
        for t in TS {
            assert_eq!(bayes_risk(0.0, t), 0.0);
            assert_eq!(bayes_risk(1.0, t), 0.0);
        }
    }

    /// The split criterion `W·L^(t)(W+/W)` agrees with the two-logarithm reference to
    /// 1e−12 (relative) for t from −∞ to 2 and weights from 0 to 1e200, and with the closed forms
    /// (Gini, Matusita, constant, empirical) where `u = W+/W` is well conditioned.
    #[test]
    fn weighted_risk_matches_reference() {
        let ts = [
            f64::NEG_INFINITY,
            -1e6,
            -50.0,
            -3.0,
            -1.0,
            -0.2,
            0.0,
            0.3,
            0.5,
            0.6,
            0.8,
            0.9,
            1.0 - 2e-9,
            1.0 - 5e-10,
            1.0,
            1.0 + 2e-9,
            1.3,
            1.9,
            1.9999,
            2.0,
        ];
        let ws = [0.0, 1e-300, 1e-200, 1e-30, 1e-12, 1e-3, 0.1, 0.37, 0.5, 1.0, 3.0, 7.5, 1e10, 1e200];
        for t in ts {
            for wp in ws {
                for wn in ws {
                    let got = weighted_bayes_risk(wp, wn, t);
                    let w = wp + wn;
                    let spec = if w > 0.0 { w * bayes_risk(wp / w, t) } else { 0.0 };
                    let reference = reference_weighted_bayes_risk(wp, wn, t);
                    let ctx = format!("t={t} wp={wp:e} wn={wn:e}: {got:e} vs {reference:e}");
                    assert!(got.is_finite() && got >= 0.0, "{ctx}");
                    assert_eq!(got, spec, "{ctx}");
                    assert!((got - reference).abs() <= 1e-12 * reference, "{ctx}");
                    let (lo, hi) = (wp.min(wn), wp.max(wn));
                    if w > 0.0 && lo >= 1e-3 * hi {
                        let (pu, pv) = (wp / w, wn / w);
                        let closed = if t == 0.0 {
                            w * 4.0 * pu * pv
                        } else if t == 1.0 {
                            w * 2.0 * (pu * pv).sqrt()
                        } else if t == 2.0 {
                            w
                        } else if t == f64::NEG_INFINITY {
                            2.0 * lo
                        } else {
                            got
                        };
                        assert!((got - closed).abs() <= 1e-12 * closed, "{ctx} closed {closed:e}");
                    }
                }
            }
        }
        // Homogeneity: W·L(W+/W) scales with the weights.
        for t in [-3.0, 0.0, 0.8, 1.5] {
            let a = weighted_bayes_risk(0.3, 0.9, t);
            assert!(close(weighted_bayes_risk(3e-7, 9e-7, t), 1e-6 * a, 1e-13), "t={t}");
        }
    }

    /// L^(−50) against the empirical risk 2min(u, 1−u). Exactly: 0 ≤ L^(t) − 2min ≤
    /// 2min·(2^(1/(1−t)) − 1), so at t = −50 the gap is at most 0.0137 (2^(1/51) − 1); the
    /// largest gap on (0, 1), near u = 0.48, is 0.0128 — above 1e−2 (see the report note).
    #[test]
    fn tempered_risk_tends_to_empirical() {
        let t = -50.0;
        let factor = 2f64.powf(1.0 / 51.0) - 1.0;
        let mut sup: f64 = 0.0;
        for k in 1..10_000 {
            let u = k as f64 / 10_000.0;
            let emp = 2.0 * u.min(1.0 - u);
            let gap = bayes_risk(u, t) - emp;
            assert!(gap >= -1e-15 && gap <= emp * factor + 1e-15, "u={u} gap={gap}");
            sup = sup.max(gap);
        }
        assert!((sup - 0.01283).abs() < 2e-4, "sup gap {sup}");
        // Within 1e−2 away from the peak, and within 1e−2 everywhere from t = −100 on.
        for u in [0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99] {
            assert!((bayes_risk(u, t) - 2.0 * u.min(1.0 - u)).abs() < 1e-2, "u={u}");
        }
        for k in 1..1000 {
            let u = k as f64 / 1000.0;
            assert!((bayes_risk(u, -100.0) - 2.0 * u.min(1.0 - u)).abs() < 1e-2);
        }
    }

    /// (docs/explanation/weak-learners.md#weak-learners-criteria): for t < 1, 0 ≤ L^(t)(u) − 2min(u, 1−u) ≤ 2^(1/(1−t)) − 1 for every u,
    /// and the largest gap falls below 1e−2 only from t ≈ −65.42 down.
    #[test]
    fn tempered_risk_gap_bound() {
        let sup_gap = |t: f64| {
            let bound = 2f64.powf(1.0 / (1.0 - t)) - 1.0;
            let mut sup: f64 = 0.0;
            for k in 1..20_000 {
                let u = k as f64 / 20_000.0;
                let gap = bayes_risk(u, t) - 2.0 * u.min(1.0 - u);
                assert!((-1e-15..=bound + 1e-15).contains(&gap), "t={t} u={u}: gap {gap} vs bound {bound}");
                sup = sup.max(gap);
            }
            sup
        };
        for t in [0.9, 0.5, 0.0, -1.0, -10.0, -50.0, -200.0] {
            sup_gap(t);
        }
        assert!(sup_gap(-65.0) > 1e-2 && sup_gap(-65.8) < 1e-2);
        // The bound itself at t = −50: 2^(1/51) − 1 = 0.0137.
        assert!((2f64.powf(1.0 / 51.0) - 1.0 - 0.0137).abs() < 1e-4);
    }

    #[test]
    fn links() {
        for p in [1e-12f64, 0.1, 0.3, 0.5, 0.8, 1.0 - 1e-9] {
            let half_logit = 0.5 * (p / (1.0 - p)).ln();
            assert!(close(link_optimal(p, 1.0), half_logit, 1e-14));
            assert!(close(link_optimal(p, 1.0 - 1e-9), half_logit, 1e-9), "p={p}");
            assert!(close(link_optimal(p, 1.0 + 1e-9), half_logit, 1e-9));
            // docs/explanation/weak-learners.md#weak-learners-criteria formula, where it is well conditioned.
            for t in [0.0, 0.3, 0.7, 1.3, 1.8] {
                let s = 1.0 - t;
                let (a, b) = (p.powf(s), (1.0 - p).powf(s));
                assert!(close(link_optimal(p, t), (a - b) / (s * (a + b)), 1e-12), "p={p} t={t}");
                assert!(link_optimal(p, t).abs() <= 1.0 / s.abs());
            }
            // canonical: t = 0 is 4× optimal; t = 1 is (2p−1)/√(p(1−p)).
            assert!(close(link_canonical(p, 0.0), 4.0 * link_optimal(p, 0.0), 1e-13));
            assert!(close(link_canonical(p, 0.0), 4.0 * (2.0 * p - 1.0), 1e-13));
            assert!(close(link_canonical(p, 1.0), (2.0 * p - 1.0) / (p * (1.0 - p)).sqrt(), 1e-13));
        }
        // Pure leaves.
        assert!(close(link_optimal(1.0, 0.5), 2.0, 1e-15));
        assert!(close(link_optimal(0.0, 0.5), -2.0, 1e-15));
        assert!(close(link_optimal(0.0, 1.5), -2.0, 1e-15));
        assert_eq!(link_optimal(1.0, 1.0), f64::INFINITY);
        assert!(close(link_optimal(0.0, 1.0 - 2e-9), -1.0 / (1.0 - (1.0 - 2e-9)), 1e-12));
        assert_eq!(link_canonical(0.0, 1.0), f64::NEG_INFINITY);
        assert_eq!(link_canonical(1.0, 1.5), f64::INFINITY);
        assert_eq!(link_canonical(0.3, 2.0), 0.0);
        // Canonical bound 2^((2−t)/(1−t)) for t < 1 (11.31 at t = 0.6), reached at pure leaves.
        for t in [0.0, 0.3, 0.6, 0.9] {
            let bound = 2f64.powf((2.0 - t) / (1.0 - t));
            assert!(close(link_canonical(1.0, t), bound, 1e-13));
            assert!(close(link_canonical(0.0, t), -bound, 1e-13));
            assert!(close(link_canonical(1e-200, t), -bound, 1e-12), "t={t}");
            for k in 0..=100 {
                let p = k as f64 / 100.0;
                assert!(link_canonical(p, t).abs() <= bound * (1.0 + 1e-14));
            }
        }
        assert!((link_canonical(1.0, 0.6) - 11.3137).abs() < 1e-4);
    }

    /// canonical = −L^(t)′ (central differences), so the two links and the risk agree.
    #[test]
    fn canonical_is_minus_risk_derivative() {
        for t in [-3.0, 0.0, 0.4, 0.9, 1.0, 1.2, 1.7] {
            for p in [0.05, 0.2, 0.5, 0.66, 0.93] {
                let h = 1e-6;
                let d = (bayes_risk(p + h, t) - bayes_risk(p - h, t)) / (2.0 * h);
                assert!(close(link_canonical(p, t), -d, 1e-7), "t={t} p={p}");
            }
        }
    }

    #[test]
    fn tempered_update_matches_definition() {
        // Where the naive formula is well conditioned the two agree.
        for t in [0.0, 0.3, 0.8, 1.2, 1.6] {
            let s = 1.0 - t;
            for &(q, mu, u) in &[(0.2f64, 0.7f64, 1.0f64), (0.05, -1.3, 0.4), (0.9, 0.2, -2.0)] {
                let base: f64 = q.powf(s) - s * mu * u;
                let naive = if base <= 0.0 {
                    if s > 0.0 {
                        0.0
                    } else {
                        f64::INFINITY
                    }
                } else {
                    base.powf(1.0 / s)
                };
                let got = tempered_update(q, mu, u, t);
                assert!(close(got, naive, 1e-13), "t={t} q={q} mu={mu} u={u}: {got} vs {naive}");
                assert!(close(got, exp_t(log_t(q, t) - mu * u, t), 1e-13));
            }
        }
        assert!(close(tempered_update(0.2, 0.5, 1.0, 1.0), 0.2 * (-0.5f64).exp(), 1e-15));
        // t < 1: switch off, and a zero weight coming back on.
        assert_eq!(tempered_update(0.25, 3.0, 1.0, 0.0), 0.0);
        assert!(close(tempered_update(0.0, 2.0, -1.0, 0.5), 1.0, 1e-15)); // (0.5·2)^2
        assert_eq!(tempered_update(0.0, 2.0, 1.0, 0.5), 0.0);
        // t > 1: overflow is +∞; a zero weight stays zero.
        assert_eq!(tempered_update(0.25, 10.0, -1.0, 1.5), f64::INFINITY);
        assert_eq!(tempered_update(0.0, 10.0, -1.0, 1.5), 0.0);
        // Tiny weights near t = 1: relative accuracy is kept.
        let q = 1e-250;
        let t = 1.0 - 1e-8;
        assert!(close(tempered_update(q, 0.3, 1.0, t), q * (-0.3f64).exp(), 1e-5));
    }

    #[test]
    fn co_simplex() {
        for t in [0.0, 0.5, 1.0, 1.5] {
            let mut q = vec![1e-200, 3e-200, 0.0, 2e-201];
            let z = co_simplex_normalize(&mut q, t);
            assert!(z > 0.0 && z.is_finite());
            let s: f64 = q.iter().map(|v| v.powf(2.0 - t)).sum();
            assert!(close(s, 1.0, 1e-14), "t={t}");
        }
        let mut q = vec![0.0, 0.0];
        assert_eq!(co_simplex_normalize(&mut q, 0.5), 0.0);
        let mut q = vec![1.0, f64::INFINITY];
        assert_eq!(co_simplex_normalize(&mut q, 1.5), f64::INFINITY);
        assert_eq!(q[0], 1.0);
    }

    #[test]
    fn tanh_and_margins() {
        for t in TS {
            for z in [-50.0, -2.0, -0.3, 0.0, 0.4, 3.0, 80.0] {
                let v = tanh_t(z, t);
                assert!((-1.0..=1.0).contains(&v), "t={t} z={z}");
            }
            assert_eq!(tanh_t(0.0, t), 0.0);
        }
        assert!(close(tanh_t(0.7, 1.0), 0.7f64.tanh(), 1e-15));
        // t = 0: exp_0(−2z) = [1 − 2z]_+, so tanh_0(z) = z/(1 − z) for z ∈ [0, ½], 1 beyond.
        assert!(close(tanh_t(0.25, 0.0), 1.0 / 3.0, 1e-15));
        assert_eq!(tanh_t(0.6, 0.0), 1.0);
        assert_eq!(tanh_t(-5.0, 1.5), -1.0);
    }

    #[test]
    fn tempered_loss_and_margin_risk() {
        let y = [1.0f64, -1.0, 1.0, -1.0];
        let h = [0.5f64, 0.2, -1.0, -3.0];
        let exp_loss: f64 = y.iter().zip(&h).map(|(a, b)| (-a * b).exp()).sum::<f64>() / 4.0;
        assert!(close(tempered_loss(&y, &h, 1.0).unwrap_or(f64::NAN), exp_loss, 1e-15));
        // t = 0: F_0 = mean [1 − yH]_+^2 = (0.25 + 1.44 + 4 + 0)/4.
        assert!(close(tempered_loss(&y, &h, 0.0).unwrap_or(f64::NAN), 5.69 / 4.0, 1e-15));
        // t = 1.5: y H = −1 gives exp_1.5(1) = 4, 4^0.5 = 2; yH ≤ −2 gives +∞.
        assert_eq!(tempered_loss(&[1.0], &[-2.0], 1.5).unwrap_or(0.0), f64::INFINITY);
        assert!(close(tempered_loss(&[1.0], &[-1.0], 1.5).unwrap_or(0.0), 2.0, 1e-15));
        // θ = 0: the training error, with a score of 0 counted as an error.
        assert_eq!(tempered_margin_risk(&y, &h, 0.5, 0.0).unwrap_or(-1.0), 0.5);
        assert_eq!(tempered_margin_risk(&[1.0, -1.0], &[0.0, 0.0], 0.5, 0.0).unwrap_or(-1.0), 1.0);
        assert_eq!(tempered_margin_risk(&y, &h, 0.5, -0.99).unwrap_or(-1.0), 0.0);
        assert_eq!(tempered_margin_risk(&y, &h, 0.5, 1.0).unwrap_or(-1.0), 1.0);
        assert!(tempered_loss(&y, &h[..3], 0.5).is_err());
        assert!(tempered_loss(&[], &[], 0.5).is_err());
        assert!(tempered_loss(&[2.0], &[0.0], 0.5).is_err());
        assert!(tempered_loss(&y, &h, 2.0).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn exp_inverts_log(z in 1e-6f64..1e3, ti in 0usize..10) {
            let t = TS[ti];
            let back = exp_t(log_t(z, t), t);
            prop_assert!(close(back, z, 1e-11), "t={} z={} back={}", t, z, back);
        }

        #[test]
        fn exp_of_sum_is_t_product(a in -3.0f64..3.0, b in -3.0f64..3.0, ti in 0usize..10) {
            // The identity holds where neither factor is clipped: 1 + (1−t)a > 0 and
            // 1 + (1−t)b > 0 (a switched-off factor, t < 1, loses how far below the pole it was;
            // an overflowed factor, t > 1, makes the product undefined).
            let t = TS[ti];
            let (ea, eb) = (exp_t(a, t), exp_t(b, t));
            prop_assume!(ea > 0.0 && ea.is_finite() && eb > 0.0 && eb.is_finite());
            let lhs = exp_t(a + b, t);
            let rhs = t_product(ea, eb, t);
            if lhs.is_infinite() {
                prop_assert!(rhs.is_infinite() || rhs > 1e12, "t={} a={} b={}: {}", t, a, b, rhs);
            } else {
                prop_assert!(close(lhs, rhs, 1e-11), "t={} a={} b={}: {} vs {}", t, a, b, lhs, rhs);
            }
        }

        #[test]
        fn mu_closed_form_matches_spec(rho in -0.999f64..0.999, ti in 0usize..10) {
            // docs/explanation/tadaboost.md#tadaboost-algorithm: −log_t((1−ρ)/M_{1−t}(1−ρ, 1+ρ)) = link_optimal((1+ρ)/2, t).
            let t = TS[ti];
            let spec = -log_t((1.0 - rho) / power_mean(1.0 - rho, 1.0 + rho, 1.0 - t), t);
            let closed = link_optimal((1.0 + rho) / 2.0, t);
            prop_assert!(close(spec, closed, 1e-9), "t={} rho={}: {} vs {}", t, rho, spec, closed);
        }
    }
}
