//! A faster power for t-AdaBoost's weight update.
//!
//! The update `q̃ = (q̃^(1−t))^(1/(1−t))` (docs/explanation/tadaboost.md#tadaboost-algorithm) costs one `pow` per example and round; with
//! `t = 0.8` at 1M rows that is 200M calls of glibc's `pow` in a 200-round fit, the largest part
//! of what t-AdaBoost does beyond Real AdaBoost. When `1/(1−t)` is a small integer `n` — the
//! temperatures `t = 1 − 1/n`: 0, ½, ⅔, ¾, 0.8, … — the power is `n − 1` multiplications or fewer
//! ([`powi_seq`]), about ten times cheaper than `pow`.
//!
//! The one design choice: the exponent is *snapped* ([`snapped_int_exponent`]). A temperature
//! typed as `0.8` is the binary64 number nearest 4/5, so `1/(1 − t)` evaluates to
//! `5.000000000000001`, not 5; the snap reads it as the `5` the user meant, when it lies within
//! the rounding of `t` (see the function's doc). This is a deliberate change of the weights' last
//! bits against `powf(x, 1/(1−t))` (≈ 10 ulp at `t = 0.8`, `|ln x| ≈ 2`: the exponent's own
//! rounding error times `ln x`); every invariant of docs/explanation/tadaboost.md#tadaboost-algorithm is unaffected, since `Z` normalises
//! the weights that were actually computed.
//!
//! Determinism: [`powi_seq`] is a fixed sequence of IEEE multiplications (no FMA, no SIMD, no
//! CPU dispatch), so it gives the same bits on every machine and at every thread count.

/// The largest exponent [`snapped_int_exponent`] snaps to (`t = 1 − 1/16 = 0.9375`): above it
/// the relative error bound `(n − 1)·2^−53` of [`powi_seq`] would exceed a few ulps of `pow`'s,
/// and the binary powering's speed advantage shrinks.
pub(crate) const MAX_INT_EXPONENT: u32 = 16;

/// `Some(n)` when the power `p = 1/(1 − t)` is, up to the rounding of `t` itself, the integer
/// `n ∈ [1, MAX_INT_EXPONENT]`; `None` otherwise (then the caller uses `f64::powf`).
///
/// Tolerance. A temperature `t = 1 − 1/n` given in decimal is stored with an error
/// `|δt| ≤ 2^−54` (t < 1); `s = 1 − t` is then `1/n + δ` with `|δ| ≤ 2^−53` (the subtraction is
/// exact for `t ≥ ½` by Sterbenz's lemma and adds at most `2^−54` below), and `p = fl(1/s)` is
/// `n(1 − nδ + O(δ²))` rounded, so `|p − n| ≤ n²·2^−53 + ulp(n)`. The snap accepts
/// `|p − n| ≤ 2n²ε + 2ulp(n)` (`ε = 2^−52`), four times that, and nothing else: no temperature
/// further than `≈ 4ε` from `1 − 1/n` is snapped.
#[must_use]
pub(crate) fn snapped_int_exponent(p: f64) -> Option<u32> {
    if !(p.is_finite() && p >= 0.5) {
        return None;
    }
    let n = p.round();
    if n < 1.0 || n > f64::from(MAX_INT_EXPONENT) {
        return None;
    }
    let ulp_n = f64::from_bits(n.to_bits() + 1) - n;
    let tol = 2.0 * n * n * f64::EPSILON + 2.0 * ulp_n;
    // n ≤ 16, so the cast is exact.
    ((p - n).abs() <= tol).then_some(n as u32)
}

/// `x^n` by binary powering (right to left: square the base, multiply the bits of `n` in), a
/// fixed sequence of at most `2⌊log₂ n⌋` multiplications for a given `n` (`x^5 = x·(x²)²`: three).
///
/// Error bound: the result is `x^n ∏(1 + δ_k)^(e_k)` with `|δ_k| ≤ u = 2^−53` (one rounding per
/// product) and `Σ e_k ≤ n − 1` (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1:
/// a product of `n` factors), so its relative error is at most `γ_{n−1} = (n−1)u/(1 − (n−1)u)`,
/// i.e. `(n − 1)/2` to `n − 1` ulps, whenever no intermediate product under- or overflows
/// (the result is then a normal number). `x^1 = x` exactly; `n = 0` gives 1. Against glibc's
/// `pow` (correctly rounded in practice, < 1 ulp) the difference is therefore at most `n` ulps;
/// the tests assert it over millions of random inputs for every `n ≤ MAX_INT_EXPONENT`.
#[inline]
#[must_use]
pub(crate) fn powi_seq(x: f64, n: u32) -> f64 {
    let mut acc = 1.0;
    let mut base = x;
    let mut k = n;
    loop {
        if k & 1 == 1 {
            acc *= base;
        }
        k >>= 1;
        if k == 0 {
            return acc;
        }
        base *= base;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Distance in units in the last place between two positive finite numbers.
    fn ulps(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn powi_seq_is_within_n_ulps_of_powf() {
        // 4M random inputs per exponent range, log-uniform over every binade whose n-th power is a
        // normal number, plus the values t-AdaBoost's update sees (q^(1−t) ∈ (0, 1]).
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let mut worst = vec![0u64; MAX_INT_EXPONENT as usize + 1];
        for round in 0..4_000_000u32 {
            let n = 1 + round % MAX_INT_EXPONENT;
            // ln x uniform in the range where x^n stays normal (|n ln x| < 700).
            let lim = 700.0 / f64::from(n);
            let x = if round % 2 == 0 { rng.gen_range(-lim..lim).exp() } else { rng.gen_range(1e-3..1.0) };
            let (fast, exact) = (powi_seq(x, n), x.powf(f64::from(n)));
            assert!(fast.is_normal() && exact.is_normal(), "x = {x:e}, n = {n}");
            let d = ulps(fast, exact);
            worst[n as usize] = worst[n as usize].max(d);
            assert!(d <= u64::from(n), "x = {x:e}, n = {n}: {fast:e} vs powf {exact:e} ({d} ulps)");
        }
        eprintln!("worst ulps of powi_seq against powf, by n: {worst:?}");
        // x^1 and x^2 are exact or correctly rounded.
        assert_eq!(worst[1], 0);
        assert!(worst[2] <= 1, "{worst:?}");
        // The bound is not vacuous: larger exponents do lose a few ulps.
        assert!(worst[MAX_INT_EXPONENT as usize] >= 1, "{worst:?}");
    }

    #[test]
    fn powi_seq_edge_values_match_powf() {
        for n in 1..=MAX_INT_EXPONENT {
            let p = f64::from(n);
            for x in [0.0, 1.0, f64::INFINITY, 1e300, 1e-300, f64::MIN_POSITIVE] {
                let (fast, exact) = (powi_seq(x, n), x.powf(p));
                // Overflow to ∞ and underflow to 0 (or a subnormal) agree in kind.
                assert_eq!(fast.is_infinite(), exact.is_infinite(), "x = {x:e}, n = {n}");
                if exact == 0.0 {
                    assert!(fast == 0.0 || !fast.is_normal(), "x = {x:e}, n = {n}: {fast:e}");
                }
                if exact.is_normal() {
                    assert!(ulps(fast, exact) <= u64::from(n), "x = {x:e}, n = {n}");
                }
            }
        }
        assert_eq!(powi_seq(3.0, 5), 243.0);
        assert_eq!(powi_seq(0.5, 16), 0.5f64.powi(16));
        assert_eq!(powi_seq(7.0, 0), 1.0);
    }

    #[test]
    fn exponent_snap_accepts_decimal_temperatures_only() {
        for n in 1..=MAX_INT_EXPONENT {
            // The decimal temperature 1 − 1/n, as a user types it (e.g. "0.8"), parsed.
            let t: f64 = format!("{}", 1.0 - 1.0 / f64::from(n)).parse().unwrap_or(f64::NAN);
            assert_eq!(snapped_int_exponent(1.0 / (1.0 - t)), Some(n), "t = {t}");
            // And the nearest binary64 values either side of it.
            for tt in [f64::from_bits(t.to_bits() + 1), f64::from_bits(t.to_bits().saturating_sub(1))] {
                if tt < 1.0 {
                    assert_eq!(snapped_int_exponent(1.0 / (1.0 - tt)), Some(n), "t = {tt}");
                }
            }
        }
        assert_eq!(snapped_int_exponent(1.0 / (1.0 - 0.8)), Some(5));
        assert_eq!(snapped_int_exponent(1.0 / (1.0 - 0.6)), None); // 2.5
        assert_eq!(snapped_int_exponent(5.0 + 1e-9), None);
        assert_eq!(snapped_int_exponent(1.0 / (1.0 - 0.8 + 1e-12)), None);
        assert_eq!(snapped_int_exponent(17.0), None);
        assert_eq!(snapped_int_exponent(-2.0), None);
        assert_eq!(snapped_int_exponent(f64::NAN), None);
        assert_eq!(snapped_int_exponent(f64::INFINITY), None);
        assert_eq!(snapped_int_exponent(0.2), None);
    }
}
