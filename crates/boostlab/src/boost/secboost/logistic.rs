//! The logistic loss's weights and OBIs from one exponential per example
//! (docs/explanation/secboost.md#secboost-logistic).
//!
//! With `E = e^(−|z|)` — the exponential that `F(z) = max(−z, 0) + ln(1 + E)` is computed from —
//! `a = σ(z)` and `b = σ(−z)` are `1/(1 + E)` and `E/(1 + E)` in the order of `z`'s sign, and:
//! - **the weight** `−δ_v F(z) = b·μ(v)·L(x)`: `F(z + v) − F(z) = ln(a + b e^(−v)) = ln(1 + x)`
//!   with `x = b(e^(−v) − 1) = −b v μ(v)`, `μ(v) = (1 − e^(−v))/v` and `L(x) = ln(1 + x)/x`, both by
//!   their series; no difference of two loss values, so no cancellation, and no second
//!   exponential or logarithm. For `|v| ≤` [`SECANT_SERIES_V`] and a finite `z`; elsewhere the
//!   weight is `−(F(z + v) − F(z))/v`.
//! - **the OBI** `Q_F(z, z + v, z + v)`: the series of [`obi_series`] at the secant's midpoint
//!   `c = z + h`, whose `σ(c)σ(−c) = abK/(a + bK)²` with `K = e^(−h)` by its series.
//!
//! Every kernel is IEEE `+ − × ÷`, fused multiply-adds (the polynomials), comparisons and bit
//! operations only, lane by lane ([`crate::util::fastmath::map`]): the same bits on one lane, on
//! four or eight, and on every machine.

use super::obi::obi_convex;
use crate::math::loss::Loss;
use crate::util::fastmath::{horner, logistic_lanes_and_exp, map, select, Lanes};

/// Below this `|v|` (and above 0) the weight is the series form: `|x| ≤ e^(1/8) − 1`, so that
/// [`L_SERIES`] through `s¹²` leaves out less than `10⁻¹⁸` of `L`, and [`MU_SERIES`] through
/// `v¹⁰` less than `10⁻¹⁸` of `μ`. It covers the default initial offset `v₀ = 0.1` and every offset
/// `(ẽ_(t−1) − ẽ_t)/Z` of a step below `Z/8`.
pub(super) const SECANT_SERIES_V: f64 = 0.125;

/// Below this `|v|` (the interval's width) the OBI is its series at the midpoint, through the
/// `h⁸` term (`h = v/2`): the first term left out is at most `2.1·10⁻⁵ h⁸` of the result,
/// `1.2·10⁻¹²` at `|v| = 0.25` (docs/explanation/secboost.md#secboost-obi).
pub(super) const OBI_SERIES_V: f64 = 0.25;

/// `(−1)^k/(k + 1)!` for `k = 9, 8, …, 0`: Horner's coefficients of `μ(v) = (1 − e^(−v))/v` after
/// the leading `1/11!`.
const MU_SERIES: [f64; 10] = [
    -1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    -1.0 / 40_320.0,
    1.0 / 5_040.0,
    -1.0 / 720.0,
    1.0 / 120.0,
    -1.0 / 24.0,
    1.0 / 6.0,
    -0.5,
    1.0,
];

/// Below this `|v|` (the usual offsets: a step over the oracle's `Z`) the weight and the OBI take
/// the short series ([`MU_SHORT`], [`L_SHORT`], [`K_SHORT`]).
const SMALL_V: f64 = 1.0 / 128.0;

/// `(−1)^k/(k + 1)!` for `k = 5, …, 0`: `μ(v)` after the leading `1/7!`.
const MU_SHORT: [f64; 6] = [-1.0 / 720.0, 1.0 / 120.0, -1.0 / 24.0, 1.0 / 6.0, -0.5, 1.0];

/// `(−1)^k/(k + 1)` for `k = 6, …, 0`: `L(x) = ln(1 + x)/x` after the leading `−1/8`.
const L_SHORT: [f64; 7] = [1.0 / 7.0, -1.0 / 6.0, 1.0 / 5.0, -1.0 / 4.0, 1.0 / 3.0, -0.5, 1.0];

/// `(−1)^k/k!` for `k = 5, …, 0`: `e^(−h)` after the leading `1/6!`.
const K_SHORT: [f64; 6] = [-1.0 / 120.0, 1.0 / 24.0, -1.0 / 6.0, 0.5, -1.0, 1.0];

/// `1/(2k + 1)` for `k = 5, 4, …, 0`: Horner's coefficients (in `s²`) of `atanh(s)/s` after the
/// leading `1/13`.
const L_SERIES: [f64; 6] = [1.0 / 11.0, 1.0 / 9.0, 1.0 / 7.0, 1.0 / 5.0, 1.0 / 3.0, 1.0];

/// `(−1)^k/k!` for `k = 10, 9, …, 0`: Horner's coefficients of `e^(−h)` after the leading
/// `−1/11!` (`|h| < 1/8`: the first term left out is below `10⁻¹⁹`).
const K_SERIES: [f64; 11] = [
    1.0 / 3_628_800.0,
    -1.0 / 362_880.0,
    1.0 / 40_320.0,
    -1.0 / 5_040.0,
    1.0 / 720.0,
    -1.0 / 120.0,
    1.0 / 24.0,
    -1.0 / 6.0,
    0.5,
    -1.0,
    1.0,
];

/// `(F(z), a, b)` of every lane: the logistic loss (the bits of
/// [`crate::util::fastmath::logistic_loss`]) and `a = σ(z)`, `b = σ(−z)` from its exponential.
#[inline(always)]
fn loss_and_sigmoids<const N: usize>(z: [f64; N]) -> ([f64; N], [f64; N], [f64; N]) {
    let (f, e) = logistic_lanes_and_exp(z);
    let mut a = [0.0; N];
    let mut b = [0.0; N];
    for l in 0..N {
        let r = 1.0 / (1.0 + e[l]);
        let er = e[l] * r;
        a[l] = select(z[l] >= 0.0, r, er);
        b[l] = select(z[l] >= 0.0, er, r);
    }
    (f, a, b)
}

/// Whether every lane has `|v| ≤ small`.
#[inline(always)]
fn all_small<const N: usize>(v: &[f64; N], small: f64) -> bool {
    v.iter().all(|v| v.abs() <= small)
}

/// Each lane's `lo` where `|v| ≤ small`, else its `hi` (a lane's value depends on its own `v`
/// only). The callers compute `hi` only when some lane needs it ([`all_small`]), in a function of
/// their own that is inlined too: a closure here may be compiled apart from the vector build that
/// calls it, with a library call for each fused multiply-add.
#[inline(always)]
fn by_size<const N: usize>(v: [f64; N], small: f64, lo: [f64; N], hi: [f64; N]) -> [f64; N] {
    std::array::from_fn(|l| select(v[l].abs() <= small, lo[l], hi[l]))
}

/// `−δ_v F(z) = b·μ(v)·L(x)` of every lane (see the module's doc; for `0 < |v| ≤`
/// [`SECANT_SERIES_V`]): short series for `|v| ≤` [`SMALL_V`] (the usual offsets), longer ones
/// above.
#[inline(always)]
fn weight_series<const N: usize>(b: [f64; N], v: [f64; N]) -> [f64; N] {
    // |v| ≤ 1/128: μ through v⁶ and L(x) = ln(1 + x)/x through x⁷ (|x| < 0.0079), the first
    // terms left out below 10⁻¹⁷ of either.
    let mu = horner(1.0 / 5_040.0, &MU_SHORT, v);
    let x: [f64; N] = std::array::from_fn(|l| -(b[l] * (v[l] * mu[l])));
    let ln = horner(-1.0 / 8.0, &L_SHORT, x);
    let lo = std::array::from_fn(|l| b[l] * mu[l] * ln[l]);
    if all_small(&v, SMALL_V) {
        return lo;
    }
    by_size(v, SMALL_V, lo, weight_series_long(b, v))
}

/// [`weight_series`] for `SMALL_V < |v| ≤` [`SECANT_SERIES_V`]: the longer series.
#[inline(always)]
fn weight_series_long<const N: usize>(b: [f64; N], v: [f64; N]) -> [f64; N] {
    let mu = horner(1.0 / 39_916_800.0, &MU_SERIES, v);
    let mut d = [0.0; N];
    let mut s2 = [0.0; N];
    for l in 0..N {
        // x = b(e^(−v) − 1); ln(1 + x) = 2 atanh(s), s = x/(2 + x), so L(x) = 2·d·atanh(s)/s
        // with d = 1/(2 + x).
        let x = -(b[l] * (v[l] * mu[l]));
        d[l] = 1.0 / (2.0 + x);
        let s = x * d[l];
        s2[l] = s * s;
    }
    let p = horner(1.0 / 13.0, &L_SERIES, s2);
    std::array::from_fn(|l| b[l] * mu[l] * (2.0 * d[l] * p[l]))
}

/// The OBI series of every lane, from `a = σ(z)`, `b = σ(−z)` and the interval's width `v`
/// (`|v| <` [`OBI_SERIES_V`]).
///
/// docs/explanation/secboost.md#secboost-obi: at the midpoint `c = z + h`, `h = v/2`, every
/// derivative of F is `F″ = f = σ(c)σ(−c)` times a polynomial in f, and the gap's maximum is
/// `(f/2)h²·[1 + h²(2 − 11f)/18 + h⁴ c₆(f) + h⁶ c₈(f) + O(h⁸)]`; `σ(c) = a/(a + bK)` and
/// `σ(−c) = bK/(a + bK)` with `K = e^(−h)`.
#[inline(always)]
fn obi_series<const N: usize>(a: [f64; N], b: [f64; N], v: [f64; N]) -> [f64; N] {
    let h: [f64; N] = std::array::from_fn(|l| 0.5 * v[l]);
    // |h| ≤ 1/256: e^(−h) through h⁶, the first term left out below 10⁻²⁰.
    let short = horner(1.0 / 720.0, &K_SHORT, h);
    let k = if all_small(&v, SMALL_V) {
        short
    } else {
        by_size(v, SMALL_V, short, horner(-1.0 / 39_916_800.0, &K_SERIES, h))
    };
    let mut out = [0.0; N];
    for l in 0..N {
        let bk = b[l] * k[l];
        let den = a[l] + bk;
        let f = a[l] * bk / (den * den);
        let h2 = h[l] * h[l];
        let c4 = (2.0 - 11.0 * f) * (1.0 / 18.0);
        let c6 = 13.0 / 3240.0 + f * (-187.0 / 1620.0 + f * (179.0 / 405.0));
        let c8 = 1.0 / 12150.0 + f * (-1567.0 / 170_100.0 + f * (809.0 / 6804.0 + f * (-19673.0 / 56700.0)));
        out[l] = 0.5 * f * h2 * (1.0 + h2 * (c4 + h2 * (c6 + h2 * c8)));
    }
    out
}

/// The interval's width as [`obi_convex`] takes it: `(z + v) − z`.
#[inline(always)]
fn widths<const N: usize>(z: [f64; N], v: [f64; N]) -> [f64; N] {
    std::array::from_fn(|l| (z[l] + v[l]) - z[l])
}

/// The OBI series at `z` over the width `v` (for `0 < |v| <` [`OBI_SERIES_V`], `z` finite): the
/// scalar form of [`obi_series`], which [`super::obi`]'s closed form uses.
pub(super) fn obi_at(z: f64, v: f64) -> f64 {
    let (_, a, b) = loss_and_sigmoids([z]);
    obi_series(a, b, [v])[0]
}

/// Whether the weight of `(z, v)` is the series form.
#[inline]
fn weight_by_series(z: f64, v: f64) -> bool {
    z.is_finite() & (v != 0.0) & (v.abs() <= SECANT_SERIES_V)
}

/// Whether the OBI of `(z, v)` is the series form (as [`obi_convex`] decides it).
#[inline]
fn obi_by_series(z: f64, v: f64) -> bool {
    let width = (z + v) - z;
    (width != 0.0) & (width.abs() < OBI_SERIES_V) & z.is_finite()
}

/// The weight `−δ_v F(z)` of one example, `fz = F(z)` (the bits of every slice form here).
pub(super) fn weight(z: f64, v: f64, fz: f64) -> f64 {
    if weight_by_series(z, v) {
        let (_, _, b) = loss_and_sigmoids([z]);
        weight_series(b, [v])[0]
    } else {
        // docs/explanation/secboost.md#secboost-algorithm: w = −δ_v F(z) = −(F(z + v) − F(z)) / v.
        -(crate::util::fastmath::logistic_loss(z + v) - fz) / v
    }
}

/// Inputs `(z, v)`, outputs `(F(z), −δ_v F(z))`.
struct LossWeight;

impl Lanes<2, 2> for LossWeight {
    #[inline(always)]
    fn lanes<const N: usize>([z, v]: [[f64; N]; 2]) -> [[f64; N]; 2] {
        let (f, _, b) = loss_and_sigmoids(z);
        [f, weight_series(b, v)]
    }
}

/// Inputs `(z, v)`, outputs `(F(z), −δ_v F(z), Q_F(z, z + v, z + v))`.
struct LossWeightObi;

impl Lanes<2, 3> for LossWeightObi {
    #[inline(always)]
    fn lanes<const N: usize>([z, v]: [[f64; N]; 2]) -> [[f64; N]; 3] {
        let (f, a, b) = loss_and_sigmoids(z);
        [f, weight_series(b, v), obi_series(a, b, widths(z, v))]
    }
}

/// Inputs `(z, v, g)`, outputs `(F(z), −δ_v F(z), Q_F(z, z + v, z + v), −δ_g F(z),
/// Q_F(z, z + g, z + g))`: [`LossWeightObi`] at `v` and [`WeightObi`] at `g` from one exponential.
struct TwoOffsets;

impl Lanes<3, 5> for TwoOffsets {
    #[inline(always)]
    fn lanes<const N: usize>([z, v, g]: [[f64; N]; 3]) -> [[f64; N]; 5] {
        let (f, a, b) = loss_and_sigmoids(z);
        [f, weight_series(b, v), obi_series(a, b, widths(z, v)), weight_series(b, g), obi_series(a, b, widths(z, g))]
    }
}

/// Inputs `(z, v)`, outputs `(−δ_v F(z), Q_F(z, z + v, z + v))`.
struct WeightObi;

impl Lanes<2, 2> for WeightObi {
    #[inline(always)]
    fn lanes<const N: usize>([z, v]: [[f64; N]; 2]) -> [[f64; N]; 2] {
        let (_, a, b) = loss_and_sigmoids(z);
        [weight_series(b, v), obi_series(a, b, widths(z, v))]
    }
}

/// Inputs `(z, v)`, output `−δ_v F(z)`.
struct Weight;

impl Lanes<2, 1> for Weight {
    #[inline(always)]
    fn lanes<const N: usize>([z, v]: [[f64; N]; 2]) -> [[f64; N]; 1] {
        let (_, _, b) = loss_and_sigmoids(z);
        [weight_series(b, v)]
    }
}

/// The OBI series of every lane over the width `(z + v) − z`.
struct Obi;

impl Lanes<2, 1> for Obi {
    #[inline(always)]
    fn lanes<const N: usize>([z, v]: [[f64; N]; 2]) -> [[f64; N]; 1] {
        let (_, a, b) = loss_and_sigmoids(z);
        [obi_series(a, b, widths(z, v))]
    }
}

/// Whether some row's weight or OBI is not the series form (one pass with no branch).
#[inline(always)] // into the callers' builds (the update ahead's: AVX2)
fn some_off_series(z: &[f64], v: &[f64]) -> bool {
    z.iter().zip(v).fold(false, |off, (&z, &v)| off | !(weight_by_series(z, v) & obi_by_series(z, v)))
}

/// The rows whose weight is not the series form get `−(F(z + v) − F(z))/v` (`fz = F(z)`, or
/// computed here when not given).
fn fix_weights(z: &[f64], v: &[f64], fz: Option<&[f64]>, w: &mut [f64]) {
    for (j, (w, (&z, &v))) in w.iter_mut().zip(z.iter().zip(v)).enumerate() {
        if !weight_by_series(z, v) {
            *w = weight(z, v, fz.map_or_else(|| crate::util::fastmath::logistic_loss(z), |f| f[j]));
        }
    }
}

/// The rows whose OBI is not the series form get [`obi_convex`]'s value.
fn fix_obis(loss: &Loss, z: &[f64], v: &[f64], q: &mut [f64]) {
    for ((q, &z), &v) in q.iter_mut().zip(z).zip(v) {
        if !obi_by_series(z, v) {
            *q = obi_convex(loss, z, v);
        }
    }
}

/// `q_i = Q_F(z_i, z_i + v_i, z_i + v_i)` for every row (the bits of [`obi_convex`]; the logistic
/// loss `loss`; equal lengths).
pub(super) fn obis_into(loss: &Loss, z: &[f64], v: &[f64], q: &mut [f64]) {
    map::<Obi, 2, 1>([z, v], [&mut *q]);
    if some_off_series(z, v) {
        fix_obis(loss, z, v, q);
    }
}

/// `w_i = −δ_{v_i} F(z_i)` for every row, `fz_i = F(z_i)` given (the logistic loss; equal
/// lengths).
pub(super) fn weights_into(z: &[f64], v: &[f64], fz: &[f64], w: &mut [f64]) {
    map::<Weight, 2, 1>([z, v], [&mut *w]);
    if some_off_series(z, v) {
        fix_weights(z, v, Some(fz), w);
    }
}

/// `f_i = F(z_i)` and `w_i = −δ_{v_i} F(z_i)` for every row (the logistic loss; equal lengths).
pub(super) fn losses_and_weights_into(z: &[f64], v: &[f64], f: &mut [f64], w: &mut [f64]) {
    map::<LossWeight, 2, 2>([z, v], [&mut *f, &mut *w]);
    if some_off_series(z, v) {
        fix_weights(z, v, Some(f), w);
    }
}

/// `f_i = F(z_i)` (when `f` is given), `w_i = −δ_{v_i} F(z_i)` and
/// `q_i = Q_F(z_i, z_i + v_i, z_i + v_i)` (the bits of [`obi_convex`]) for every row (the logistic
/// loss `loss`; equal lengths).
#[inline(always)] // into the callers' builds (the update ahead's: AVX2)
pub(super) fn weights_obis_into(
    loss: &Loss,
    z: &[f64],
    v: &[f64],
    f: Option<&mut [f64]>,
    w: &mut [f64],
    q: &mut [f64],
) {
    let off = some_off_series(z, v);
    let f = match f {
        Some(f) => {
            map::<LossWeightObi, 2, 3>([z, v], [&mut *f, &mut *w, &mut *q]);
            Some(&*f)
        }
        None => {
            map::<WeightObi, 2, 2>([z, v], [&mut *w, &mut *q]);
            None
        }
    };
    if off {
        fix_weights(z, v, f, w);
        fix_obis(loss, z, v, q);
    }
}

/// [`weights_obis_into`] at two offsets per row from one exponential: `f_i = F(z_i)`, and at
/// `v_i` the weight `w_i` and OBI `q_i`, at `g_i` the weight `wg_i` and OBI `qg_i` (the bits of the
/// one-offset forms; the logistic loss `loss`; equal lengths).
#[allow(clippy::too_many_arguments)] // two offsets' weights and OBIs
#[inline(always)] // into the callers' builds (the update ahead's: AVX2)
pub(super) fn two_offsets_into(
    loss: &Loss,
    z: &[f64],
    v: &[f64],
    g: &[f64],
    f: &mut [f64],
    w: &mut [f64],
    q: &mut [f64],
    wg: &mut [f64],
    qg: &mut [f64],
) {
    map::<TwoOffsets, 3, 5>([z, v, g], [&mut *f, &mut *w, &mut *q, &mut *wg, &mut *qg]);
    for (v, w, q) in [(v, w, q), (g, wg, qg)] {
        if some_off_series(z, v) {
            fix_weights(z, v, Some(f), w);
            fix_obis(loss, z, v, q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::loss::LossSpec;
    use crate::util::fastmath::{cpu_builds, logistic_loss, with_build};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn logistic() -> Loss {
        Loss::from_spec(&LossSpec::Logistic).expect("loss")
    }

    /// `−δ_v F(z) = −ln(1 + σ(−z)(e^(−v) − 1))/v` by glibc's `exp`, `exp_m1` and `ln_1p` (each within
    /// an ulp or so): no cancellation at any `v`.
    fn reference_weight(z: f64, v: f64) -> f64 {
        let b = if z >= 0.0 { (-z).exp() / (1.0 + (-z).exp()) } else { 1.0 / (1.0 + z.exp()) };
        -(b * (-v).exp_m1()).ln_1p() / v
    }

    /// Edges over the range a fit sees and far beyond; offsets on every scale, both signs, on both
    /// sides of the series' thresholds.
    fn pairs(n: usize, seed: u64) -> Vec<(f64, f64)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let z = match i % 4 {
                    0 => rng.gen_range(-5.0..5.0),
                    1 => rng.gen_range(-40.0..40.0),
                    2 => rng.gen_range(-700.0..700.0),
                    _ => rng.gen_range(-1e-3..1e-3),
                };
                let v = 10f64.powf(rng.gen_range(-12.0..0.0)) * if rng.gen::<bool>() { 1.0 } else { -1.0 };
                (z, v)
            })
            .collect()
    }

    #[test]
    fn weights_match_a_reference_without_cancellation() {
        let mut worst = [0.0_f64; 2];
        for (z, v) in pairs(400_000, 3) {
            let w = weight(z, v, logistic_loss(z));
            let r = reference_weight(z, v);
            if r < 1e-290 {
                // Both underflow together (z beyond about 700).
                assert!(w.abs() < 1e-280, "z = {z}, v = {v:e}: {w:e} vs {r:e}");
                continue;
            }
            let rel = (w - r).abs() / r;
            let series = weight_by_series(z, v);
            worst[usize::from(series)] = worst[usize::from(series)].max(rel);
            // The series: a few ulps. The difference of two loss values (|v| > 1/8): its
            // cancellation, ulp(F(z))/|F(z + v) − F(z)|, below 10⁻¹³ there.
            let tol = if series { 1e-14 } else { 1e-12 };
            assert!(rel <= tol, "z = {z}, v = {v:e}: {w:e} vs {r:e} ({rel:e})");
        }
        eprintln!("worst relative error of the weights: difference {:e}, series {:e}", worst[0], worst[1]);
    }

    #[test]
    fn obis_match_the_series_at_the_midpoints_own_exponential() {
        // The series of obi.rs with f = σ(c)σ(−c) from glibc's exp at the midpoint c (how it was
        // computed before): the same value within rounding.
        let before = |z: f64, w: f64| {
            let e = (-(z + 0.5 * w).abs()).exp();
            let f = e / ((1.0 + e) * (1.0 + e));
            let h = 0.5 * w;
            let h2 = h * h;
            let c4 = (2.0 - 11.0 * f) / 18.0;
            let c6 = 13.0 / 3240.0 + f * (-187.0 / 1620.0 + f * (179.0 / 405.0));
            let c8 = 1.0 / 12150.0 + f * (-1567.0 / 170_100.0 + f * (809.0 / 6804.0 + f * (-19673.0 / 56700.0)));
            0.5 * f * h2 * (1.0 + h2 * (c4 + h2 * (c6 + h2 * c8)))
        };
        for (z, v) in pairs(200_000, 4) {
            let w = (z + v) - z;
            if !obi_by_series(z, v) || z.abs() > 600.0 {
                continue;
            }
            let (q, r) = (obi_at(z, w), before(z, w));
            assert!((q - r).abs() <= 1e-13 * r, "z = {z}, v = {v:e}: {q:e} vs {r:e}");
        }
    }

    /// Every slice form gives the scalar functions' bits: the weight of [`weight`], the OBI of
    /// [`obi_convex`], the loss of [`logistic_loss`]; on blocks mixing short and long series,
    /// fallbacks and non-finite inputs, and at every length around a block.
    #[test]
    fn slice_forms_give_the_scalar_bits() {
        let l = logistic();
        let mut zv = pairs(3000, 5);
        for (k, (z, v)) in zv.iter_mut().enumerate().take(60) {
            match k % 6 {
                0 => *v = 0.0,
                1 => *z = f64::INFINITY,
                2 => *z = f64::NAN,
                3 => *v = SMALL_V * (1.0 + f64::EPSILON),
                4 => *v = -SECANT_SERIES_V,
                _ => *v = 0.3,
            }
        }
        for (build, len) in cpu_builds().into_iter().flat_map(|b| [0, 1, 2, 31, 32, 33, 100, 3000].map(|n| (b, n))) {
            let z: Vec<f64> = zv[..len].iter().map(|p| p.0).collect();
            let v: Vec<f64> = zv[..len].iter().map(|p| p.1).collect();
            let f: Vec<f64> = z.iter().map(|&z| logistic_loss(z)).collect();
            let (mut f1, mut w1, mut q1) = (vec![0.0; len], vec![0.0; len], vec![0.0; len]);
            let (mut w2, mut q2, mut w3, mut w4, mut f4) =
                (vec![0.0; len], vec![0.0; len], vec![0.0; len], vec![0.0; len], vec![0.0; len]);
            // Two offsets a row: `v`, and the pairs' offsets in reverse order (other sizes).
            let g: Vec<f64> = zv[..len].iter().rev().map(|p| p.1).collect();
            let mut two: [Vec<f64>; 5] = std::array::from_fn(|_| vec![0.0; len]);
            with_build(build, || {
                weights_obis_into(&l, &z, &v, Some(&mut f1), &mut w1, &mut q1);
                weights_obis_into(&l, &z, &v, None, &mut w2, &mut q2);
                weights_into(&z, &v, &f, &mut w3);
                losses_and_weights_into(&z, &v, &mut f4, &mut w4);
                let [f5, w5, q5, wg5, qg5] = &mut two;
                two_offsets_into(&l, &z, &v, &g, f5, w5, q5, wg5, qg5);
            });
            for i in 0..len {
                let (w, q) = (weight(z[i], v[i], f[i]), obi_convex(&l, z[i], v[i]));
                let (wg, qg) = (weight(z[i], g[i], f[i]), obi_convex(&l, z[i], g[i]));
                let what = format!("{build:?} build, len {len}, z = {:e}, v = {:e}, g = {:e}", z[i], v[i], g[i]);
                for (got, want, name) in [
                    (f1[i], f[i], "loss"),
                    (f4[i], f[i], "loss"),
                    (two[0][i], f[i], "loss"),
                    (w1[i], w, "weight"),
                    (w2[i], w, "weight"),
                    (w3[i], w, "weight"),
                    (w4[i], w, "weight"),
                    (two[1][i], w, "weight"),
                    (two[3][i], wg, "weight at g"),
                    (q1[i], q, "obi"),
                    (q2[i], q, "obi"),
                    (two[2][i], q, "obi"),
                    (two[4][i], qg, "obi at g"),
                ] {
                    assert_eq!(got.to_bits(), want.to_bits(), "{what}: {name} {got:e} vs {want:e}");
                }
            }
        }
    }

    proptest::proptest! {
        /// Any bit patterns: the slice forms never panic, and agree with the scalar ones bit for
        /// bit (in every build the CPU runs).
        #[test]
        fn slice_forms_are_total(
            pairs in proptest::collection::vec((proptest::num::f64::ANY, proptest::num::f64::ANY), 0..70),
        ) {
            let l = logistic();
            let z: Vec<f64> = pairs.iter().map(|p| p.0).collect();
            let v: Vec<f64> = pairs.iter().map(|p| p.1).collect();
            let n = z.len();
            // The two-offset form, its second offsets the first ones in reverse order.
            let g: Vec<f64> = v.iter().rev().copied().collect();
            for build in cpu_builds() {
            let (mut f, mut w, mut q) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            let mut two: [Vec<f64>; 5] = std::array::from_fn(|_| vec![0.0; n]);
            with_build(build, || {
                weights_obis_into(&l, &z, &v, Some(&mut f), &mut w, &mut q);
                let [f2, w2, q2, wg, qg] = &mut two;
                two_offsets_into(&l, &z, &v, &g, f2, w2, q2, wg, qg);
            });
            for i in 0..n {
                proptest::prop_assert_eq!(f[i].to_bits(), logistic_loss(z[i]).to_bits());
                proptest::prop_assert_eq!(w[i].to_bits(), weight(z[i], v[i], f[i]).to_bits());
                proptest::prop_assert_eq!(q[i].to_bits(), obi_convex(&l, z[i], v[i]).to_bits());
                let want = [f[i], w[i], q[i], weight(z[i], g[i], f[i]), obi_convex(&l, z[i], g[i])];
                for (got, want) in two.iter().map(|o| o[i]).zip(want) {
                    proptest::prop_assert_eq!(got.to_bits(), want.to_bits());
                }
            }
            }
        }
    }
}
