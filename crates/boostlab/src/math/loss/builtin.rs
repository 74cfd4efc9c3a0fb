//! The values of the built-in losses, one edge at a time or many at once.

use super::LossSpec;

/// `ln(1 + e^(−z)) = max(−z, 0) + ln(1 + e^(−|z|))`, without overflow, from IEEE arithmetic only
/// (a few ulps from the exact value; see [`crate::util::fastmath::logistic_loss`]).
#[inline]
pub(super) fn logistic(z: f64) -> f64 {
    crate::util::fastmath::logistic_loss(z)
}

/// The spring loss (docs/explanation/secboost.md#secboost-algorithm).
#[inline]
pub(super) fn spring(z: f64, q: f64) -> f64 {
    spring_from_logistic(z, logistic(z), q)
}

/// [`spring`] at `z` from `logistic(z)`.
#[inline]
pub(super) fn spring_from_logistic(z: f64, logistic_z: f64, q: f64) -> f64 {
    let zq = q * z - 0.5;
    // |r| ≤ ½ exactly (rounding to the nearest integer), so 1 − 4r² ≥ 0 up to rounding.
    let r = zq - zq.round();
    logistic_z + (1.0 - (1.0 - 4.0 * r * r).max(0.0).sqrt()) / q
}

/// The spring loss's main-text form (docs/explanation/secboost.md#secboost-algorithm): `ln(1 + e^(−z)) + 1 − √(1 − 4(z − round(z))²)`.
#[inline]
pub(super) fn spring_main(z: f64) -> f64 {
    spring_main_from_logistic(z, logistic(z))
}

/// [`spring_main`] at `z` from `logistic(z)`.
#[inline]
pub(super) fn spring_main_from_logistic(z: f64, logistic_z: f64) -> f64 {
    // |r| ≤ ½ exactly, so 1 − 4r² ≥ 0 up to rounding.
    let r = z - z.round();
    logistic_z + (1.0 - (1.0 - 4.0 * r * r).max(0.0).sqrt())
}

/// `exp_t(−z)^(2−t) = [1 − (1−t) z]_+^((2−t)/(1−t))`, with `t = 1` as `e^(−z)` (docs/explanation/tadaboost.md#tadaboost-loss, §5).
///
/// A private helper (rather than `crate::math::tempered::exp_t`) so this module does not depend on the
/// tempered-arithmetic module; the two must agree on `exp_t(−z)^(2−t)`.
#[inline]
pub(crate) fn tempered_exp_loss(z: f64, t: f64) -> f64 {
    let one_t = 1.0 - t;
    // docs/explanation/tempered.md#tempered: |1 − t| < 1e−9 is t = 1.
    if one_t.abs() < 1e-9 {
        return (-z).exp();
    }
    let u = -one_t * z; // base = 1 + u
    if u <= -1.0 {
        // The base is ≤ 0: exp_t is 0 for t < 1 (weights switch off), +∞ for t > 1.
        return if t < 1.0 { 0.0 } else { f64::INFINITY };
    }
    ((2.0 - t) / one_t * u.ln_1p()).exp()
}

#[inline]
pub(super) fn builtin_value(spec: LossSpec, z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    match spec {
        LossSpec::Logistic => logistic(z),
        LossSpec::Exponential => (-z).exp(),
        LossSpec::Square => (1.0 - z) * (1.0 - z),
        LossSpec::Hinge => (1.0 - z).max(0.0),
        LossSpec::ZeroOne => {
            if z <= 0.0 {
                1.0
            } else {
                0.0
            }
        }
        LossSpec::ClippedLogistic { q } => logistic(z).min(logistic(q)),
        LossSpec::Spring { q } => spring(z, q),
        LossSpec::SpringMain => spring_main(z),
        LossSpec::Tempered { t } => tempered_exp_loss(z, t),
    }
}

/// `out[i] = f(z[i])`, NaN in → NaN out.
#[inline]
pub(super) fn fill(z: &[f64], out: &mut [f64], f: impl Fn(f64) -> f64) {
    for (o, &x) in out.iter_mut().zip(z) {
        *o = if x.is_nan() { f64::NAN } else { f(x) };
    }
}
