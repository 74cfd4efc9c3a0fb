//! Fast maths from IEEE arithmetic: a power for t-AdaBoost's weight update, and the logistic loss.
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
//!
//! And the logistic loss `ln(1 + e^(−z))` of SecBoost's default loss ([`logistic_loss`],
//! [`logistic_loss_many`]): SecBoost evaluates it at every example and round, and glibc's `exp`
//! and `log1p` would be its largest cost. The kernel is IEEE `+ − × ÷`, bit operations and, for
//! each step of its polynomials, a fused multiply-add (no other libm call, no branch). A fused
//! multiply-add is correctly rounded by the FMA instruction and by the C library's `fma` alike, so
//! one Rust body compiled for the baseline x86-64 target, for AVX2 and for AVX-512 gives the same
//! bits (`logistic_loss_many` picks the widest build the CPU runs, and so does the scalar
//! function): `value` and `eval_many` agree bit for bit.
//! [`map`] runs any such kernel of several inputs and outputs four (AVX2) or eight (AVX-512) lanes
//! at a time, with the same bits.

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

/// `1.5·2⁵²`: adding it to a real of magnitude below 2⁵¹ rounds to an integer, which the low
/// bits of the sum then hold (two's complement, offset by the constant's own bits).
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// `ln 2` split as `LN2_HI + LN2_LO`, `LN2_HI` with its 12 low mantissa bits zero, so that
/// `k·LN2_HI` is exact for every `|k| < 2¹²`.
const LN2_HI: f64 = 0.693_147_180_559_663;
const LN2_LO: f64 = 2.823_529_056_303_157_7e-13;

/// `2^k` for an integer-valued `k` in `[−1022, 1023]`, from its exponent bits.
#[inline(always)]
fn pow2(k: f64) -> f64 {
    let bits = (k + ROUND_MAGIC).to_bits().wrapping_sub(ROUND_MAGIC.to_bits()).wrapping_add(1023);
    f64::from_bits(bits << 52)
}

/// `if c { a } else { b }` by bit masks: no branch, so that a loop over lanes stays vectorised.
#[inline(always)]
pub(crate) fn select(c: bool, a: f64, b: f64) -> f64 {
    let mask = 0u64.wrapping_sub(u64::from(c));
    f64::from_bits((a.to_bits() & mask) | (b.to_bits() & !mask))
}

/// `1/j!` for `j = 12, 11, …, 0`: Horner's coefficients of `eʳ` after the leading `1/13!`.
const EXP_TAYLOR: [f64; 13] = [
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
    1.0,
    1.0,
];

/// `1/(2j + 1)` for `j = 10, 9, …, 1`: Horner's coefficients of `atanh(s)/s − 1` over `s²`
/// after the leading `1/23`.
const ATANH_SERIES: [f64; 10] = [
    1.0 / 21.0,
    1.0 / 19.0,
    1.0 / 17.0,
    1.0 / 15.0,
    1.0 / 13.0,
    1.0 / 11.0,
    1.0 / 9.0,
    1.0 / 7.0,
    1.0 / 5.0,
    1.0 / 3.0,
];

/// `lead·xᴰ + c[0]·xᴰ⁻¹ + … + c[D−1]` of every lane, by Horner's rule with a fused multiply-add
/// per step (one rounding a step, half the operations: [`map`] compiles it for FMA, and the
/// C library's `fma` gives the same bits elsewhere). Every step runs over all `N` lanes before the
/// next (see [`exp_nonpositive`]).
#[inline(always)]
pub(crate) fn horner<const N: usize, const D: usize>(lead: f64, c: &[f64; D], x: [f64; N]) -> [f64; N] {
    let mut p = [lead; N];
    for c in c {
        for l in 0..N {
            p[l] = p[l].mul_add(x[l], *c);
        }
    }
    p
}

/// `eˣ` of every lane, for `x ∈ [−746, 0]` (0 below about −745.1, as the correctly rounded value).
///
/// `x = k ln 2 + r` with `k = round(x/ln 2)` and `|r| ≤ ½ ln 2` (Cody–Waite: `k·LN2_HI` is exact
/// and so is `x − k·LN2_HI`), `eʳ` by its Taylor polynomial of degree 13 (the first term left out
/// is below `4·10⁻¹⁸`; Horner's rule with a fused multiply-add a step: half the operations of a
/// multiplication and an addition, one rounding instead of two), then `2ᵏ` applied as two exact
/// powers of two, `2^(k−j)·2^j` with
/// `j = round(k/2)`, so that results below the normal range round once, into the subnormals.
///
/// Lanes: every step runs over all `N` lanes before the next, so the compiler keeps `N/4`
/// independent AVX2 chains in flight (Horner's rule is one long dependency chain per value); each
/// lane's operations are those of `N = 1`, so the bits do not depend on `N`.
#[inline(always)]
pub(crate) fn exp_nonpositive<const N: usize>(x: [f64; N]) -> [f64; N] {
    let mut k = [0.0; N];
    let mut r = [0.0; N];
    for l in 0..N {
        k[l] = (x[l] * std::f64::consts::LOG2_E + ROUND_MAGIC) - ROUND_MAGIC;
        r[l] = (x[l] - k[l] * LN2_HI) - k[l] * LN2_LO;
    }
    let mut p = horner(1.0 / 6_227_020_800.0, &EXP_TAYLOR, r);
    for l in 0..N {
        let half = (k[l] * 0.5 + ROUND_MAGIC) - ROUND_MAGIC;
        p[l] = p[l] * pow2(k[l] - half) * pow2(half);
    }
    p
}

/// `ln(1 + t)` of every lane, for `t ∈ [0, 1]`: `2 atanh(s)` with `s = t/(2 + t)`, or, for
/// `t ≥ ½`, `ln 2 + ln(1 + u)` with `u = (t − 1)/2` (exact), so that `|s| ≤ 0.2`; the odd series
/// of `atanh` through `s²³` (the first term left out is below `3·10⁻²⁰` of the result; Horner's
/// rule by fused multiply-adds). Lanes as in [`exp_nonpositive`].
#[inline(always)]
fn ln_1p_unit<const N: usize>(t: [f64; N]) -> [f64; N] {
    let mut s = [0.0; N];
    let mut s2 = [0.0; N];
    for l in 0..N {
        let u = select(t[l] >= 0.5, (t[l] - 1.0) * 0.5, t[l]);
        s[l] = u / (2.0 + u);
        s2[l] = s[l] * s[l];
    }
    let mut p = horner(1.0 / 23.0, &ATANH_SERIES, s2);
    for l in 0..N {
        let two_s = 2.0 * s[l];
        let v = two_s + two_s * (s2[l] * p[l]);
        p[l] = select(t[l] >= 0.5, std::f64::consts::LN_2 + v, v);
    }
    p
}

/// The logistic loss of every lane (see [`logistic_loss`]).
#[inline(always)]
pub(crate) fn logistic_lanes<const N: usize>(z: [f64; N]) -> [f64; N] {
    logistic_lanes_and_exp(z).0
}

/// The logistic loss of every lane (see [`logistic_loss`]) and the exponential `e^(−|z|)` it is
/// computed from (0 below `z = −746`; a NaN `z` gives a NaN loss and a finite exponential).
#[inline(always)]
pub(crate) fn logistic_lanes_and_exp<const N: usize>(z: [f64; N]) -> ([f64; N], [f64; N]) {
    // max(−746, NaN) would be −746: a NaN is passed on explicitly.
    let e = exp_nonpositive(z.map(|z| (-z.abs()).max(-746.0)));
    let t = ln_1p_unit(e);
    let mut out = [0.0; N];
    for l in 0..N {
        out[l] = select(z[l].is_nan(), f64::NAN, (-z[l]).max(0.0) + t[l]);
    }
    (out, e)
}

/// The logistic loss `ln(1 + e^(−z)) = max(−z, 0) + ln(1 + e^(−|z|))`, within a few ulps of the
/// exact value for every `z` (the tests bound it against glibc's `exp` and `log1p`); NaN for NaN,
/// `+∞` at `−∞`, 0 at `+∞`.
#[inline]
#[must_use]
pub fn logistic_loss(z: f64) -> f64 {
    // Through `map`'s widest build: its fused multiply-adds are the CPU's instruction (in the
    // baseline build, each would be a call of the C library's `fma`).
    let mut out = [0.0];
    logistic_loss_many(&[z], &mut out);
    out[0]
}

/// A function of `I` reals to `O` reals computed on `N` lanes at a time, each lane exactly as on
/// one lane: what [`map`] maps.
pub(crate) trait Lanes<const I: usize, const O: usize> {
    fn lanes<const N: usize>(x: [[f64; N]; I]) -> [[f64; N]; O];
}

/// A function of two reals to one computed on `N` lanes at a time: what [`map2`] maps.
pub(crate) trait Lanes2 {
    fn lanes<const N: usize>(a: [f64; N], b: [f64; N]) -> [f64; N];
}

/// A [`Lanes2`] as a [`Lanes`] of two inputs and one output.
struct Two<K>(std::marker::PhantomData<K>);

impl<K: Lanes2> Lanes<2, 1> for Two<K> {
    #[inline(always)]
    fn lanes<const N: usize>([a, b]: [[f64; N]; 2]) -> [[f64; N]; 1] {
        [K::lanes(a, b)]
    }
}

/// Lanes per block of [`map`]: eight AVX2 vectors in flight, enough to hide the latency of the
/// polynomials' Horner chains (with four, the kernels took 30 % longer).
const BLOCK: usize = 32;

/// Lanes per block of [`map`]'s AVX-512 build: two vectors a value, so that a kernel's values
/// stay in the 32 vector registers (SecBoost's two-offset kernel, on one core of the benchmark's
/// host: 7.3 ns a row, against 8.5 with 32 lanes and 10.0 in the AVX2 build).
const BLOCK_AVX512: usize = 16;

/// `out[k][i] = K(x[0][i], …)[k]` over the shortest of the lengths: the body of [`map`].
#[inline(always)]
fn map_body<K: Lanes<I, O>, const I: usize, const O: usize>(x: [&[f64]; I], out: [&mut [f64]; O]) {
    map_block::<K, I, O, BLOCK>(x, out);
}

/// [`map_body`] in blocks of `BLOCK` lanes.
#[inline(always)]
fn map_block<K: Lanes<I, O>, const I: usize, const O: usize, const BLOCK: usize>(
    x: [&[f64]; I],
    mut out: [&mut [f64]; O],
) {
    let n = x.iter().map(|s| s.len()).chain(out.iter().map(|s| s.len())).min().unwrap_or(0);
    let mut done = 0;
    while done + BLOCK <= n {
        let mut xb = [[0.0; BLOCK]; I];
        for (b, s) in xb.iter_mut().zip(&x) {
            b.copy_from_slice(&s[done..done + BLOCK]);
        }
        let r = K::lanes::<BLOCK>(xb);
        for (o, r) in out.iter_mut().zip(&r) {
            o[done..done + BLOCK].copy_from_slice(r);
        }
        done += BLOCK;
    }
    let rest = n - done;
    if rest > 1 {
        // The last values padded to a block (each lane's bits do not depend on the others').
        let r = K::lanes::<BLOCK>(x.map(|s| std::array::from_fn(|l| s.get(done + l).copied().unwrap_or(0.0))));
        for (o, r) in out.iter_mut().zip(&r) {
            o[done..n].copy_from_slice(&r[..rest]);
        }
    } else if rest == 1 {
        let r = K::lanes::<1>(x.map(|s| [s[done]]));
        for (o, r) in out.iter_mut().zip(&r) {
            o[done] = r[0];
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn map_avx2<K: Lanes<I, O>, const I: usize, const O: usize>(x: [&[f64]; I], out: [&mut [f64]; O]) {
    map_body::<K, I, O>(x, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
fn map_avx512<K: Lanes<I, O>, const I: usize, const O: usize>(x: [&[f64]; I], out: [&mut [f64]; O]) {
    map_block::<K, I, O, BLOCK_AVX512>(x, out);
}

/// The builds of [`map`]'s kernels, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Build {
    /// The baseline x86-64 target (SSE2), or any other architecture.
    Baseline,
    /// AVX2 and FMA: four lanes a vector.
    Avx2,
    /// AVX-512 (F, DQ, VL) with FMA: eight lanes a vector.
    Avx512,
}

/// `out[k][i] = K(x[0][i], x[1][i], …)[k]` over the shortest of the lengths, by the widest build
/// the CPU runs ([`widest_build`]). For a `K` made of IEEE `+ − × ÷`, comparisons, bit operations
/// and fused multiply-adds (`mul_add`) only, every build gives the same bits, and the same as `K`
/// on one lane: no other libm call, Rust never contracts `a·b + c` into an FMA by itself, the
/// vector width only decides how many lanes one instruction computes, and a fused multiply-add is
/// correctly rounded whether the FMA instruction computes it or, in the baseline build, the C
/// library's `fma` (slower).
pub(crate) fn map<K: Lanes<I, O>, const I: usize, const O: usize>(x: [&[f64]; I], out: [&mut [f64]; O]) {
    map_with::<K, I, O>(current_build(), x, out);
}

/// The build that [`map`], and the loops compiled like it, run on this thread: [`widest_build`]
/// (in tests, the build [`with_build`] chose, never wider than the CPU's).
pub(crate) fn current_build() -> Build {
    #[cfg(test)]
    if let Some(b) = TEST_BUILD.get() {
        return b.min(cpu_build());
    }
    widest_build()
}

#[cfg(test)]
thread_local! {
    /// The build [`map`] runs on this thread ([`with_build`]).
    static TEST_BUILD: std::cell::Cell<Option<Build>> = const { std::cell::Cell::new(None) };
}

/// `f()` with [`map`] running `build` on this thread (tests compare every build of
/// [`cpu_builds`] with the scalar forms).
#[cfg(test)]
pub(crate) fn with_build<R>(build: Build, f: impl FnOnce() -> R) -> R {
    TEST_BUILD.set(Some(build));
    let r = f();
    TEST_BUILD.set(None);
    r
}

/// Every build of [`map`] this CPU runs, narrowest first.
#[cfg(test)]
pub(crate) fn cpu_builds() -> Vec<Build> {
    [Build::Baseline, Build::Avx2, Build::Avx512].into_iter().filter(|&b| b <= cpu_build()).collect()
}

/// [`map`] by `build`, or by the baseline build when the CPU does not run `build` (the tests
/// compare every build the CPU runs).
#[allow(unsafe_code)]
fn map_with<K: Lanes<I, O>, const I: usize, const O: usize>(build: Build, x: [&[f64]; I], out: [&mut [f64]; O]) {
    #[cfg(target_arch = "x86_64")]
    match build.min(cpu_build()) {
        // SAFETY: the CPU supports AVX-512 F/DQ/VL, AVX2 and FMA (`is_x86_feature_detected!` in
        // `cpu_build`), the only requirement of calling a function with those target features;
        // the body indexes within the common length of the slices.
        Build::Avx512 => return unsafe { map_avx512::<K, I, O>(x, out) },
        // SAFETY: as above, for AVX2 and FMA.
        Build::Avx2 => return unsafe { map_avx2::<K, I, O>(x, out) },
        Build::Baseline => {}
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = build;
    map_body::<K, I, O>(x, out);
}

/// The widest build of [`map`] that the CPU runs (detected once per process), capped by
/// `BOOSTLAB_SIMD` in the environment for A/B timing: `0` keeps the baseline builds, `avx2` the
/// AVX2 ones.
pub(crate) fn widest_build() -> Build {
    static ON: std::sync::OnceLock<Build> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        let cap = match std::env::var("BOOSTLAB_SIMD").as_deref() {
            Ok("0") => Build::Baseline,
            Ok("avx2") => Build::Avx2,
            _ => Build::Avx512,
        };
        cpu_build().min(cap)
    })
}

/// The widest build of [`map`] the CPU supports.
fn cpu_build() -> Build {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if !(has!("avx2") && has!("fma")) {
            return Build::Baseline;
        }
        if has!("avx512f") && has!("avx512dq") && has!("avx512vl") {
            return Build::Avx512;
        }
        Build::Avx2
    }
    #[cfg(not(target_arch = "x86_64"))]
    Build::Baseline
}

/// `out[i] = K(a[i], b[i])` over the shortest of the three lengths ([`map`] of two inputs and one
/// output).
pub(crate) fn map2<K: Lanes2>(a: &[f64], b: &[f64], out: &mut [f64]) {
    map::<Two<K>, 2, 1>([a, b], [out]);
}

/// The logistic loss of the first argument.
struct Logistic;

impl Lanes2 for Logistic {
    #[inline(always)]
    fn lanes<const N: usize>(a: [f64; N], _: [f64; N]) -> [f64; N] {
        logistic_lanes(a)
    }
}

/// [`logistic_loss`] of every `z[i]` into `out[i]` (the shorter length), by the widest build the
/// CPU runs ([`map`]): the same bits in every build.
pub fn logistic_loss_many(z: &[f64], out: &mut [f64]) {
    map2::<Logistic>(z, z, out);
}

/// Whether the AVX2 builds run on this thread (t-AdaBoost's kernels, SecBoost's update ahead):
/// when [`map`]'s AVX2 build or a wider one does ([`current_build`]; `BOOSTLAB_SIMD=0` in the
/// environment keeps the baseline builds, for A/B timing).
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx2() -> bool {
    current_build() >= Build::Avx2
}

/// Whether the AVX-512 builds run on this thread (SecBoost's update ahead): when [`map`]'s
/// AVX-512 build does ([`current_build`]).
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512() -> bool {
    current_build() >= Build::Avx512
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

    /// glibc's logistic loss, the reference: `ln_1p(e^(−z))` for `z > 0`, `−z + ln_1p(e^z)` else.
    fn libm_logistic(z: f64) -> f64 {
        if z > 0.0 {
            (-z).exp().ln_1p()
        } else {
            -z + z.exp().ln_1p()
        }
    }

    /// Inputs over every scale the loss sees: uniform on ±40 and ±800, log-uniform magnitudes
    /// from 1e−300 to 1e300, and the edges of the exponential's range.
    fn logistic_inputs(n: usize) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut z: Vec<f64> = (0..n)
            .map(|i| match i % 3 {
                0 => rng.gen_range(-40.0..40.0),
                1 => rng.gen_range(-800.0..800.0),
                _ => 10f64.powf(rng.gen_range(-300.0..300.0)) * if rng.gen::<bool>() { 1.0 } else { -1.0 },
            })
            .collect();
        for e in [0.0, 1e-320, 0.5, 1.0, 36.7, 700.0, 708.39, 709.78, 745.1, 745.2, 746.0, 1e308] {
            z.extend([e, -e]);
        }
        z
    }

    #[test]
    fn logistic_loss_is_within_four_ulps_of_libm() {
        let mut worst = 0u64;
        for z in logistic_inputs(3_000_000) {
            let (fast, libm) = (logistic_loss(z), libm_logistic(z));
            if libm < f64::MIN_POSITIVE {
                // Subnormal or zero (z above 708): the same value within 2⁻¹⁰⁷⁴ steps.
                assert!(fast >= 0.0 && (fast - libm).abs() <= 4.0 * 4.9e-324, "z = {z:e}: {fast:e} vs {libm:e}");
                continue;
            }
            let d = ulps(fast, libm);
            worst = worst.max(d);
            assert!(d <= 4, "z = {z:e}: {fast:e} vs libm {libm:e} ({d} ulps)");
        }
        eprintln!("worst ulps of logistic_loss against libm: {worst}");
        assert_eq!(logistic_loss(f64::INFINITY), 0.0);
        assert_eq!(logistic_loss(f64::NEG_INFINITY), f64::INFINITY);
        assert!(logistic_loss(f64::NAN).is_nan());
        assert_eq!(logistic_loss(0.0).to_bits(), std::f64::consts::LN_2.to_bits());
    }

    #[test]
    fn logistic_loss_many_gives_the_scalar_bits() {
        let mut z = logistic_inputs(100_003);
        z.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, f64::MAX, f64::MIN, f64::EPSILON]);
        let mut out = vec![0.0; z.len()];
        logistic_loss_many(&z, &mut out);
        for (&x, &o) in z.iter().zip(&out) {
            assert_eq!(o.to_bits(), logistic_loss(x).to_bits(), "z = {x:e}");
        }
        // Every build the CPU runs gives the same bits.
        for build in cpu_builds() {
            let mut other = vec![0.0; z.len()];
            map_with::<Two<Logistic>, 2, 1>(build, [&z, &z], [&mut other]);
            assert!(out.iter().zip(&other).all(|(a, b)| a.to_bits() == b.to_bits()), "{build:?} build");
        }
    }

    proptest::proptest! {
        /// Any inputs, any lengths (the shorter one is written): every build of the kernel never
        /// reads or writes out of bounds, a finite or infinite input gives a non-negative
        /// non-NaN value, a NaN gives NaN, and every value is the scalar function's.
        #[test]
        fn logistic_loss_many_is_total(z in proptest::collection::vec(proptest::num::f64::ANY, 0..70), extra in 0usize..5) {
            for build in cpu_builds() {
                let mut out = vec![-1.0; z.len().saturating_sub(extra)];
                with_build(build, || logistic_loss_many(&z, &mut out));
                for (&x, &o) in z.iter().zip(&out) {
                    proptest::prop_assert_eq!(o.to_bits(), logistic_loss(x).to_bits(), "{:?} build", build);
                    let ok = if x.is_nan() { o.is_nan() } else { o >= 0.0 };
                    proptest::prop_assert!(ok, "z = {:e}: {:e}", x, o);
                }
            }
        }
    }
}
