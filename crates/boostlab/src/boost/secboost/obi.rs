//! The optimal Bregman information (OBI) of SecBoost (docs/explanation/secboost.md#secboost-algorithm): on a grid ([`obi`]), the convex
//! form ([`obi_convex`]: closed form for the built-in convex losses, a unimodal search for user
//! losses), `Q*` ([`obi_star`]) and their batched forms, all from loss values only.

use super::logistic::{obi_at, OBI_SERIES_V};
use crate::math::loss::{tempered_exp_loss, Loss, LossSpec};

/// Interior points per pass of the unimodal (concave) search in [`obi_convex`].
const ZOOM_POINTS: usize = 16;

/// Passes of the unimodal search: each shrinks the bracket by `2/(ZOOM_POINTS + 1)`, so 10 passes
/// leave a bracket of about `4e-10` of the secant's width.
pub(crate) const ZOOM_PASSES: usize = 10;

/// The optimal Bregman information `Q_F(a, b, c)` on a grid (docs/explanation/secboost.md#secboost-algorithm): with the line through
/// `(a, F(a))` and `(b, F(b))`, the maximum of `line(x) − F(x)` over the `n + 1` equally spaced
/// points `x` from `a` to `c` inclusive (`n = 0` is read as 1). Always ≥ 0 (the point `x = a`
/// gives 0). For any `F` this is a lower estimate of the exact OBI that improves as `n` grows.
/// `b = a` (no line) or a NaN value gives NaN.
pub fn obi(loss: &Loss, a: f64, b: f64, c: f64, n: usize) -> f64 {
    let n = n.max(1);
    let mut x: Vec<f64> = with_fractions(n, |q| q.iter().map(|&q| a + (c - a) * q).collect());
    x[n] = c;
    x.push(b);
    let mut f = vec![0.0; x.len()];
    loss.eval_many(&x, &mut f);
    let (fa, fb) = (f[0], f[n + 1]);
    obi_from_values(a, b, fa, fb, &x[..=n], &f[..=n])
}

/// `max(0, max_k (line(x_k) − F(x_k)))` for the line through `(a, fa)`, `(b, fb)`; NaN if any value
/// involved is NaN or the line is undefined.
pub(super) fn obi_from_values(a: f64, b: f64, fa: f64, fb: f64, x: &[f64], f: &[f64]) -> f64 {
    if a == b || !fa.is_finite() || !fb.is_finite() {
        return f64::NAN;
    }
    let s = (fb - fa) / (b - a);
    // docs/explanation/secboost.md#secboost-algorithm: Q_F(a, b, c) = max over x between a and c of [line(x) − F(x)].
    let line_gap = |xk: f64, fk: f64| fa + s * (xk - a) - fk;
    // Four running maxima (independent chains the compiler can vectorise) and one NaN flag
    // instead of a branch per point: the maximum of the same values, NaN if any is NaN.
    let (mut best, mut nan) = ([0.0_f64; 4], false);
    let (mut xs, mut fs) = (x.chunks_exact(4), f.chunks_exact(4));
    for (xc, fc) in (&mut xs).zip(&mut fs) {
        for l in 0..4 {
            let g = line_gap(xc[l], fc[l]);
            nan |= g.is_nan();
            best[l] = if g > best[l] { g } else { best[l] };
        }
    }
    for (&xk, &fk) in xs.remainder().iter().zip(fs.remainder()) {
        let g = line_gap(xk, fk);
        nan |= g.is_nan();
        best[0] = if g > best[0] { g } else { best[0] };
    }
    if nan {
        return f64::NAN;
    }
    best.into_iter().fold(0.0, |m, b| if b > m { b } else { m })
}

/// `k / n` for `k = 0..=n` (`n ≥ 1`), the fractions of an equally spaced grid, computed as
/// `k as f64 / n as f64` once per thread and `n` instead of once per point and example. The
/// last few `n` are kept (an oracle alternates between its scan grid and its finer check grid).
/// `f` must not call `with_fractions` itself.
pub(super) fn with_fractions<R>(n: usize, f: impl FnOnce(&[f64]) -> R) -> R {
    use std::cell::RefCell;
    /// Grids kept per thread.
    const KEPT: usize = 4;
    thread_local! {
        static FRACTIONS: RefCell<Vec<(usize, Vec<f64>)>> = const { RefCell::new(Vec::new()) };
    }
    FRACTIONS.with(|cell| {
        let mut kept = cell.borrow_mut();
        let at = match kept.iter().position(|(m, _)| *m == n) {
            Some(at) => at,
            None => {
                if kept.len() == KEPT {
                    kept.remove(0);
                }
                kept.push((n, (0..=n).map(|k| k as f64 / n as f64).collect()));
                kept.len() - 1
            }
        };
        f(&kept[at].1)
    })
}

/// One pass of the convex OBI's unimodal search: `line − F` at the points `(xs, fs)` (line through
/// `(z, fa)` with slope `s`). Returns the best value and the new bracket, or `None` on a NaN.
fn zoom_pass(xs: &[f64], fs: &[f64], z: f64, fa: f64, s: f64, lo: f64, hi: f64) -> Option<(f64, f64, f64)> {
    let mut jbest = 0;
    let mut gbest = f64::NEG_INFINITY;
    for (j, (&x, &f)) in xs.iter().zip(fs).enumerate() {
        // docs/explanation/secboost.md#secboost-algorithm: line(x) − F(x), concave for convex F.
        let g = fa + s * (x - z) - f;
        if g.is_nan() {
            return None;
        }
        if g > gbest {
            gbest = g;
            jbest = j;
        }
    }
    // The maximiser of a concave function lies between the best point's neighbours.
    let new_lo = if jbest == 0 { lo } else { xs[jbest - 1] };
    let new_hi = if jbest + 1 == xs.len() { hi } else { xs[jbest + 1] };
    Some((gbest, new_lo, new_hi))
}

/// The OBI of a convex loss, `Q_F(z, z + v, z + v)` (docs/explanation/secboost.md#secboost-algorithm, the convex form of `Q*`).
///
/// The built-in convex losses (logistic, exponential, square, hinge, tempered) use their closed
/// form, the exact maximum (`LossSpec::obi_closed_form`). For user losses `line − F` is
/// concave between `z` and `z + v`, so its maximum is found by a unimodal search (repeated
/// 16-point grids that zoom on the best point, each a single [`Loss::eval_many`] call: 162 loss
/// evaluations, a lower bound of the maximum). Only meaningful for convex `F` (for others it is a
/// local search). `v = 0` gives NaN.
pub fn obi_convex(loss: &Loss, z: f64, v: f64) -> f64 {
    let b = z + v;
    if v == 0.0 || b == z {
        return f64::NAN;
    }
    // The built-in convex losses' exact maximum, no loss evaluation at all.
    if let Some(q) = loss.spec().and_then(|s| s.obi_closed_form(z, b)) {
        return q;
    }
    let mut ends = [0.0; 2];
    loss.eval_many(&[z, b], &mut ends);
    let (fa, fb) = (ends[0], ends[1]);
    if !fa.is_finite() || !fb.is_finite() {
        return f64::NAN;
    }
    let s = (fb - fa) / (b - z);
    let (mut lo, mut hi) = if z < b { (z, b) } else { (b, z) };
    let mut x = [0.0; ZOOM_POINTS];
    let mut f = [0.0; ZOOM_POINTS];
    let mut best = 0.0_f64;
    for _ in 0..ZOOM_PASSES {
        let step = (hi - lo) / (ZOOM_POINTS + 1) as f64;
        if step.is_nan() || step <= 0.0 {
            break;
        }
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = lo + step * (j + 1) as f64;
        }
        loss.eval_many(&x, &mut f);
        let Some((gbest, new_lo, new_hi)) = zoom_pass(&x, &f, z, fa, s, lo, hi) else { return f64::NAN };
        best = best.max(gbest);
        lo = new_lo;
        hi = new_hi;
    }
    best
}

/// `Q*_F(z, z_prev, v)` (docs/explanation/secboost.md#secboost-algorithm): [`obi_convex`]`(z, v)` if the loss is declared convex,
/// otherwise [`obi`]`(z, z + v, z_prev, n)` on `n + 1` grid points.
pub fn obi_star(loss: &Loss, z: f64, z_prev: f64, v: f64, n: usize) -> f64 {
    if loss.declared_convex() {
        obi_convex(loss, z, v)
    } else {
        obi(loss, z, z + v, z_prev, n)
    }
}

/// Grid points evaluated per [`Loss::eval_many`] call in [`obi_star_many`] (bounds its memory).
const OBI_MANY_POINTS: usize = 1 << 16;

/// [`obi_star`] for many examples: `out[i] = Q*_F(zs[i], z_prev[i], vs[i])`, the non-convex form
/// on `n + 1` grid points. Bit-identical to calling [`obi_star`] on each example; the loss is
/// evaluated in chunks of examples (one [`Loss::eval_many`] call per chunk of about 65536 points),
/// so a batch loss (e.g. a Python callable) is called a few times, not once per example.
///
/// # Panics
/// If the three slices differ in length (a programming error).
pub fn obi_star_many(loss: &Loss, zs: &[f64], z_prev: &[f64], vs: &[f64], n: usize) -> Vec<f64> {
    assert!(zs.len() == z_prev.len() && zs.len() == vs.len(), "obi_star_many: slices differ in length");
    if loss.declared_convex() {
        return obi_convex_many(loss, zs, vs);
    }
    let n = n.max(1);
    let per = (OBI_MANY_POINTS / (n + 2)).max(1);
    let mut out = Vec::with_capacity(zs.len());
    let mut x = Vec::new();
    let mut f = Vec::new();
    for start in (0..zs.len()).step_by(per) {
        let end = (start + per).min(zs.len());
        x.clear();
        for i in start..end {
            // The grid of [`obi`]: a + (c − a)·k/n for k = 0..n, the last point c itself, then b.
            let (a, c) = (zs[i], z_prev[i]);
            let s0 = x.len();
            with_fractions(n, |q| x.extend(q.iter().map(|&q| a + (c - a) * q)));
            x[s0 + n] = c;
            x.push(a + vs[i]);
        }
        f.resize(x.len(), 0.0);
        loss.eval_many(&x, &mut f);
        for (k, i) in (start..end).enumerate() {
            let (xb, fb) = (&x[k * (n + 2)..(k + 1) * (n + 2)], &f[k * (n + 2)..(k + 1) * (n + 2)]);
            out.push(obi_from_values(zs[i], zs[i] + vs[i], fb[0], fb[n + 1], &xb[..=n], &fb[..=n]));
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Closed-form OBI of the built-in convex losses
// ------------------------------------------------------------------------------------------------

/// Below this `|v|` the closed-form OBI of the logistic and exponential losses is its Taylor
/// expansion at the secant's midpoint (relative truncation error of order `(v/2)⁴ ≤ 7e−14`);
/// above it, the exact formula (relative rounding error of order `ε/|v| ≤ 1e−12`).
const OBI_TAYLOR_V: f64 = 1e-3;

/// `σ(x) = 1/(1 + e^(−x))` without overflow (`e^(−x) = ∞` gives 0).
#[inline]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `max(0, s·u − ΔF(u))` over the two forms of a line minus a convex function.
#[inline]
fn gap(s: f64, u: f64, df: f64) -> f64 {
    // docs/explanation/secboost.md#secboost-algorithm: line(x) − F(x) = F(z) + s(x − z) − F(x) with x = z + u.
    (s * u - df).max(0.0)
}

/// `u* = x* − z` clamped to the interval between 0 and `v`.
#[inline]
fn clamp_between(u: f64, v: f64) -> f64 {
    if v > 0.0 {
        u.clamp(0.0, v)
    } else {
        u.clamp(v, 0.0)
    }
}

impl LossSpec {
    /// The exact OBI `Q_F(z, z + v, z + v)` of a built-in convex loss (docs/explanation/secboost.md#secboost-obi: "closed form"),
    /// from `z` and `b = z + v` (the secant's ends as the search would use them); `None` for the
    /// other losses, or when the closed form is not finite (the caller then searches).
    ///
    /// For a convex differentiable `F`, `line − F` is concave and peaks where `F′(x*) = s`, the
    /// secant slope, clamped to `[z, b]`:
    /// - logistic: `F′(x) = −1/(1 + eˣ)`, `x* = ln(−(1 + s)/s)`. `F = −x + softplus(x)`, and a
    ///   linear term changes no OBI, so the gap is computed from whichever of `F` and
    ///   `G = softplus` has the smaller slope (no cancellation against a slope near −1);
    /// - exponential: `F′(x) = −e^(−x)`, `x* = −ln(−s)`, i.e. `u* = x* − z = −ln r` with
    ///   `r = (1 − e^(−v))/v`;
    /// - square: `v²/4` (the midpoint);
    /// - hinge: the kink `x = 1` when it lies strictly inside, where the gap is
    ///   `(1 − lo)(hi − 1)/(hi − lo)`; 0 otherwise (the loss is linear on the interval);
    /// - tempered `F = [1 − (1−t)x]_+^((2−t)/(1−t))`, convex for every allowed `t < 2` (power
    ///   `p ≥ 1` of a linear base for `t < 1`, `p < 0` of a positive increasing base for
    ///   `1 < t < 2`): `F′(x) = −(2−t)·base^(1/(1−t))` where the base is positive, so
    ///   `base* = (−s/(2−t))^(1−t)` and `x* = (1 − base*)/(1−t)`; `s = 0` (both ends where `F = 0`)
    ///   gives 0. `t = 1` is the exponential loss.
    ///
    /// Numerically: for the logistic and exponential losses `F(z + u) − F(z)` is evaluated without
    /// cancellation (`ln_1p`/`exp_m1` forms), and for small `|v|` the gap is its series at the
    /// midpoint (`h = v/2`): `F″h²/2 + h⁴(F⁗/24 + F‴²/(72F″))` for the exponential loss below
    /// `|v| = 10⁻³`, four terms for the logistic loss below `|v| = 0.25`. The result keeps a
    /// relative error below 10⁻⁹ down to `|v| = 10⁻¹²` (checked against 50-digit references in
    /// `tests/secboost_obi_closed_form.rs`). The tempered loss's gap is computed from loss values,
    /// like the search (absolute error a few ulps of `F`).
    pub(crate) fn obi_closed_form(&self, z: f64, b: f64) -> Option<f64> {
        let v = b - z;
        if v == 0.0 || v.is_nan() {
            return None;
        }
        let q = match *self {
            LossSpec::Square => 0.25 * v * v,
            LossSpec::Hinge => {
                let (lo, hi) = if v > 0.0 { (z, b) } else { (b, z) };
                if lo < 1.0 && 1.0 < hi {
                    // docs/explanation/secboost.md#secboost-algorithm: the line at the kink, F(1) = 0.
                    (1.0 - lo) * (hi - 1.0) / (hi - lo)
                } else {
                    0.0
                }
            }
            LossSpec::Logistic => logistic_obi(z, v),
            LossSpec::Exponential => exponential_obi(z, v),
            LossSpec::Tempered { t } if (1.0 - t).abs() < 1e-9 => exponential_obi(z, v),
            LossSpec::Tempered { t } => tempered_obi(z, b, t),
            _ => return None,
        };
        q.is_finite().then_some(q)
    }
}

/// [`obi_convex`] of every pair, `out[i] = Q_F(zs[i], zs[i] + vs[i])`, bit for bit: the logistic
/// loss's series four lanes at a time where it applies, [`obi_convex`] on the other pairs.
///
/// # Panics
/// If the three slices differ in length (a programming error).
pub fn obi_convex_into(loss: &Loss, zs: &[f64], vs: &[f64], out: &mut [f64]) {
    assert!(zs.len() == vs.len() && zs.len() == out.len(), "obi_convex_into: slices differ in length");
    if loss.spec() != Some(&LossSpec::Logistic) {
        for ((o, &z), &v) in out.iter_mut().zip(zs).zip(vs) {
            *o = obi_convex(loss, z, v);
        }
        return;
    }
    super::logistic::obis_into(loss, zs, vs, out);
}

/// The logistic loss's OBI (see [`LossSpec::obi_closed_form`]).
fn logistic_obi(z: f64, v: f64) -> f64 {
    if v.abs() < OBI_SERIES_V {
        return obi_at(z, v);
    }
    // ΔF(u) = F(z+u) − F(z), ΔG(u) = G(z+u) − G(z) for G = softplus = F + x: −s = −ΔF(v)/v ∈ (0, 1),
    // 1 + s = ΔG(v)/v, both without cancellation.
    // F(z + u) − F(z) = softplus(−z − u) − softplus(−z) = ln(1 + σ(−z)·(e^(−u) − 1)) without
    // cancellation, and G(z + u) − G(z) = ln(1 + σ(z)·(e^u − 1)); σ(∓z) once each.
    let (pm, pp) = (sigmoid(-z), sigmoid(z));
    let dfv = (pm * (-v).exp_m1()).ln_1p();
    let dgv = (pp * v.exp_m1()).ln_1p();
    let (s, s1) = (dfv / v, dgv / v);
    // docs/explanation/secboost.md#secboost-obi: F′(x*) = −1/(1 + e^x*) = s ⇒ x* = ln(−(1 + s)/s).
    let u = clamp_between((s1 / -s).ln() - z, v);
    if s > -0.5 {
        gap(s, u, (pm * (-u).exp_m1()).ln_1p())
    } else {
        gap(s1, u, (pp * u.exp_m1()).ln_1p())
    }
}

/// The exponential loss's OBI (see [`LossSpec::obi_closed_form`]).
fn exponential_obi(z: f64, v: f64) -> f64 {
    if v.abs() < OBI_TAYLOR_V {
        // Taylor at the midpoint: every derivative is ±e^(−c): e^(−c)(h²/2 + h⁴/18).
        let (h, c) = (0.5 * v, z + 0.5 * v);
        return (-c).exp() * (0.5 * h * h + h * h * h * h / 18.0);
    }
    // F(z+u) − F(z) = e^(−z)(e^(−u) − 1); s = e^(−z)·(−r), r = (1 − e^(−v))/v.
    let r = -(-v).exp_m1() / v;
    // docs/explanation/secboost.md#secboost-obi: F′(x*) = −e^(−x*) = s ⇒ x* = −ln(−s), u* = −ln r.
    let u = clamp_between(-r.ln(), v);
    (-z).exp() * gap(-r, u, (-u).exp_m1())
}

/// The tempered exponential loss's OBI, `t ≠ 1` (see [`LossSpec::obi_closed_form`]).
fn tempered_obi(z: f64, b: f64, t: f64) -> f64 {
    let (fa, fb) = (tempered_exp_loss(z, t), tempered_exp_loss(b, t));
    if !(fa.is_finite() && fb.is_finite()) {
        return f64::NAN;
    }
    let s = (fb - fa) / (b - z);
    if s >= 0.0 {
        // Both ends where F = 0 (t < 1): F is 0 in between.
        return 0.0;
    }
    let one_t = 1.0 - t;
    // F′(x) = −(2−t)·base^(1/(1−t)) = s ⇒ base* = (−s/(2−t))^(1−t), x* = (1 − base*)/(1−t).
    let base = (-s / (2.0 - t)).powf(one_t);
    let (lo, hi) = if z < b { (z, b) } else { (b, z) };
    let x = ((1.0 - base) / one_t).clamp(lo, hi);
    (fa + s * (x - z) - tempered_exp_loss(x, t)).max(0.0)
}

// ------------------------------------------------------------------------------------------------
// Batched: the same computations for many examples at once
// ------------------------------------------------------------------------------------------------

/// [`obi_convex`] for many `(z, v)` pairs, run in lockstep so that each step of the search makes a
/// single [`Loss::eval_many`] call for all pairs still searching. Bit-identical to calling
/// [`obi_convex`] on each pair.
pub fn obi_convex_many(loss: &Loss, zs: &[f64], vs: &[f64]) -> Vec<f64> {
    let n = zs.len();
    let mut out = vec![f64::NAN; n];
    // (index, fa, slope, lo, hi, best)
    let mut live: Vec<(usize, f64, f64, f64, f64, f64)> = Vec::new();
    let mut todo: Vec<usize> = (0..n).filter(|&i| !(vs[i] == 0.0 || zs[i] + vs[i] == zs[i])).collect();
    if let Some(spec) = loss.spec() {
        // The closed form where there is one (as `obi_convex`), the search for the rest.
        todo.retain(|&i| match spec.obi_closed_form(zs[i], zs[i] + vs[i]) {
            Some(q) => {
                out[i] = q;
                false
            }
            None => true,
        });
    }
    let mut x: Vec<f64> = todo.iter().flat_map(|&i| [zs[i], zs[i] + vs[i]]).collect();
    let mut f = vec![0.0; x.len()];
    loss.eval_many(&x, &mut f);
    for (k, &i) in todo.iter().enumerate() {
        let (z, b) = (zs[i], zs[i] + vs[i]);
        let (fa, fb) = (f[2 * k], f[2 * k + 1]);
        if !fa.is_finite() || !fb.is_finite() {
            continue;
        }
        let (lo, hi) = if z < b { (z, b) } else { (b, z) };
        live.push((i, fa, (fb - fa) / (b - z), lo, hi, 0.0));
    }
    for _ in 0..ZOOM_PASSES {
        // Pairs whose bracket can no longer shrink are done (as the scalar search's `break`).
        let (done, still): (Vec<_>, Vec<_>) = live.into_iter().partition(|l| {
            let step = (l.4 - l.3) / (ZOOM_POINTS + 1) as f64;
            step.is_nan() || step <= 0.0
        });
        for l in done {
            out[l.0] = l.5;
        }
        live = still;
        if live.is_empty() {
            break;
        }
        x.clear();
        for l in &live {
            let step = (l.4 - l.3) / (ZOOM_POINTS + 1) as f64;
            x.extend((0..ZOOM_POINTS).map(|j| l.3 + step * (j + 1) as f64));
        }
        f.resize(x.len(), 0.0);
        loss.eval_many(&x, &mut f);
        let mut next = Vec::with_capacity(live.len());
        for (k, mut l) in live.into_iter().enumerate() {
            let (xs, fs) = (&x[k * ZOOM_POINTS..(k + 1) * ZOOM_POINTS], &f[k * ZOOM_POINTS..(k + 1) * ZOOM_POINTS]);
            let Some((gbest, new_lo, new_hi)) = zoom_pass(xs, fs, zs[l.0], l.1, l.2, l.3, l.4) else {
                out[l.0] = f64::NAN;
                continue;
            };
            l.5 = l.5.max(gbest);
            l.3 = new_lo;
            l.4 = new_hi;
            next.push(l);
        }
        live = next;
    }
    for l in live {
        out[l.0] = l.5;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::loss::tests::{builtins, loss};
    use crate::math::loss::v_derivative;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::sync::Arc;

    /// The point-by-point loop the four-chain version replaced.
    fn obi_from_values_serial(a: f64, b: f64, fa: f64, fb: f64, x: &[f64], f: &[f64]) -> f64 {
        if a == b || !fa.is_finite() || !fb.is_finite() {
            return f64::NAN;
        }
        let s = (fb - fa) / (b - a);
        let mut best = 0.0_f64;
        for (&xk, &fk) in x.iter().zip(f) {
            let g = fa + s * (xk - a) - fk;
            if g.is_nan() {
                return f64::NAN;
            }
            best = if g > best { g } else { best };
        }
        best
    }

    proptest! {
        /// The grid's maximum equals the serial loop's bit for bit, for every length (the four
        /// chains and their remainder), NaN anywhere, negative gaps only (0) and ±∞ values.
        #[test]
        fn obi_from_values_equals_the_serial_loop(
            len in 0usize..23,
            seed in 0u64..1_000_000,
            nan_at in proptest::option::of(0usize..23),
            inf_at in proptest::option::of(0usize..23),
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (a, b) = (rng.gen_range(-3.0..3.0), rng.gen_range(-3.0..3.0));
            let (fa, fb) = (rng.gen_range(0.0..2.0), rng.gen_range(0.0..2.0));
            let x: Vec<f64> = (0..len).map(|_| rng.gen_range(-4.0..4.0)).collect();
            let mut f: Vec<f64> = (0..len).map(|_| rng.gen_range(-1.0..3.0)).collect();
            if let Some(i) = nan_at.filter(|&i| i < len) {
                f[i] = f64::NAN;
            }
            if let Some(i) = inf_at.filter(|&i| i < len) {
                f[i] = if seed % 2 == 0 { f64::INFINITY } else { f64::NEG_INFINITY };
            }
            let got = obi_from_values(a, b, fa, fb, &x, &f);
            let want = obi_from_values_serial(a, b, fa, fb, &x, &f);
            prop_assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "{got} vs {want}");
        }
    }

    #[test]
    fn fractions_are_the_per_point_quotients() {
        // More distinct n than the thread keeps, and n seen again after eviction.
        for n in [1usize, 3, 400, 7, 100, 5, 400, 1, 3] {
            with_fractions(n, |q| {
                assert_eq!(q.len(), n + 1);
                for (k, &v) in q.iter().enumerate() {
                    assert_eq!(v.to_bits(), (k as f64 / n as f64).to_bits());
                }
            });
        }
    }

    #[test]
    fn obi_star_many_matches_obi_star() {
        for spec in builtins() {
            let l = Loss::from_spec(&spec).expect("valid");
            let zs: Vec<f64> = (0..37).map(|i| -1.3 + 0.071 * i as f64).collect();
            let zp: Vec<f64> = zs.iter().enumerate().map(|(i, z)| z + 0.3 * ((i % 5) as f64 - 2.0)).collect();
            let vs: Vec<f64> = (0..37).map(|i| if i % 2 == 0 { 0.05 } else { -0.2 }).collect();
            for n in [1, 7, 400] {
                let many = obi_star_many(&l, &zs, &zp, &vs, n);
                for i in 0..zs.len() {
                    let one = obi_star(&l, zs[i], zp[i], vs[i], n);
                    assert!(
                        many[i].to_bits() == one.to_bits() || (many[i].is_nan() && one.is_nan()),
                        "{spec} n={n} i={i}: {} vs {one}",
                        many[i]
                    );
                }
            }
        }
    }

    #[test]
    fn obi_is_zero_for_a_line() {
        let lin = Loss::custom("line", Arc::new(|z| 3.0 - 2.0 * z), true, None).expect("valid");
        for &(a, b, c) in &[(0.0, 1.0, -2.0), (-1.5, -1.0, 4.0), (2.0, 0.5, 0.0)] {
            assert!(obi(&lin, a, b, c, 1000).abs() < 1e-12);
        }
        for &(z, v) in &[(0.0, 1.0), (3.0, -2.5)] {
            assert!(obi_convex(&lin, z, v).abs() < 1e-12);
        }
    }

    /// Convex conjugates, used only for the identity Q_F(z, z+v, z+v) = D_F(z ‖ δ_v F(z)).
    fn conjugate(spec: &LossSpec, s: f64) -> f64 {
        match spec {
            // sup_t ts − e^−t = −s ln(−s) + s for s < 0.
            LossSpec::Exponential => -s * (-s).ln() + s,
            // sup_t ts − ln(1 + e^−t) = p ln p + (1−p) ln(1−p), p = −s ∈ (0, 1).
            LossSpec::Logistic => {
                let p = -s;
                p * p.ln() + (1.0 - p) * (1.0 - p).ln()
            }
            // sup_t ts − (1 − t)² = s + s²/4.
            LossSpec::Square => s + s * s / 4.0,
            _ => unreachable!(),
        }
    }

    #[test]
    fn convex_obi_identity() {
        // Lemma B.5 of the SecBoost paper: for convex F, Q_F(z, z+v, z+v) = D_F(z ‖ s) =
        // F(z) + F*(s) − z s with s = δ_v F(z).
        for spec in [LossSpec::Exponential, LossSpec::Logistic, LossSpec::Square] {
            let l = Loss::from_spec(&spec).expect("valid");
            for &(z, v) in &[(0.0, 1.0), (0.5, -2.0), (-1.0, 0.3), (2.0, 3.0), (1.0, -0.05)] {
                let s = v_derivative(&l, z, v);
                let bregman = l.value(z) + conjugate(&spec, s) - z * s;
                let q = obi_convex(&l, z, v);
                assert!((q - bregman).abs() < 1e-10 * bregman.max(1e-3), "{spec} z={z} v={v}: {q} vs {bregman}");
                // The grid version agrees up to its resolution, from below.
                let qg = obi(&l, z, z + v, z + v, 20_000);
                assert!(qg <= q + 1e-12 && q - qg < 1e-6 * q.max(1e-3), "{spec}: grid {qg} vs {q}");
                // Q* uses the convex form for a convex loss, whatever z_prev.
                assert_eq!(obi_star(&l, z, z + 100.0, v, 10), q);
            }
        }
        // Square: closed form v²/4 equals the unimodal search on the same loss given as a closure.
        let sq = Loss::custom("sq", Arc::new(|z: f64| (1.0 - z) * (1.0 - z)), true, Some(2.0)).expect("valid");
        let q = obi_convex(&sq, 0.3, 1.7);
        assert!((q - 1.7 * 1.7 / 4.0).abs() < 1e-12, "{q}");
    }

    #[test]
    fn obi_of_a_jump() {
        // 0/1 loss, line through (−0.5, 1) and (0.5, 0): on [−0.5, 0.5] the largest gap is just
        // right of 0, where the line is at ≈ ½ and F = 0.
        let l = loss("zero-one");
        let q = obi(&l, -0.5, 0.5, 0.5, 1000);
        assert!((q - 0.5).abs() < 2e-3, "{q}");
        // Going the other way (towards the jump from the right, horizontal line): nothing.
        assert_eq!(obi(&l, 0.5, 0.25, -0.5, 1000), 0.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        #[test]
        fn obi_is_non_negative(k in 0usize..12, a in -5.0f64..5.0, b in -5.0f64..5.0, c in -5.0f64..5.0) {
            prop_assume!((a - b).abs() > 1e-6);
            let l = Loss::from_spec(&builtins()[k]).expect("valid");
            let q = obi(&l, a, b, c, 200);
            prop_assert!(q >= 0.0 || q.is_nan());
            if !q.is_nan() {
                // The grid of 50 intervals is a sub-grid of the grid of 200: it never finds more.
                prop_assert!(obi(&l, a, b, c, 50) <= q + 1e-12);
            }
            if l.declared_convex() && l.value(a).is_finite() && l.value(b).is_finite() {
                prop_assert!(obi_convex(&l, a, b - a) >= 0.0);
            }
        }
    }

    /// Pairs over every case of `obi_convex`: offsets in and out of the series' range, tiny,
    /// zero and non-finite ones, edges far out and infinite.
    fn obi_pairs() -> (Vec<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        let (mut zs, mut vs) = (Vec::new(), Vec::new());
        for i in 0..20_011 {
            let z = if i % 5 == 0 { rng.gen_range(-800.0..800.0) } else { rng.gen_range(-20.0..20.0) };
            let mag = 10f64.powf(rng.gen_range(-14.0..0.7));
            zs.push(z);
            vs.push(if rng.gen::<bool>() { mag } else { -mag });
        }
        for (z, v) in [
            (0.0, 0.0),
            (1.0, 1e-17),
            (f64::INFINITY, 0.1),
            (f64::NAN, 0.1),
            (0.3, f64::NAN),
            (2.0, 0.25),
            (2.0, -0.25),
        ] {
            zs.push(z);
            vs.push(v);
        }
        (zs, vs)
    }

    #[test]
    fn obi_convex_into_equals_obi_convex_bit_for_bit() {
        let (zs, vs) = obi_pairs();
        for spec in ["logistic", "exponential", "square", "hinge"] {
            let l = loss(spec);
            let mut out = vec![0.0; zs.len()];
            obi_convex_into(&l, &zs, &vs, &mut out);
            for ((&z, &v), &q) in zs.iter().zip(&vs).zip(&out) {
                assert_eq!(q.to_bits(), obi_convex(&l, z, v).to_bits(), "{spec} z = {z:e}, v = {v:e}");
            }
        }
    }

    #[test]
    fn logistic_obi_shares_its_sigmoids_bit_for_bit() {
        // The naive closed form (each difference computing its own σ): the same bits.
        fn diff(z: f64, u: f64) -> f64 {
            (sigmoid(-z) * (-u).exp_m1()).ln_1p()
        }
        fn before(z: f64, v: f64) -> f64 {
            let (s, s1) = (diff(z, v) / v, diff(-z, -v) / v);
            let u = clamp_between((s1 / -s).ln() - z, v);
            if s > -0.5 {
                gap(s, u, diff(z, u))
            } else {
                gap(s1, u, diff(-z, -u))
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        for _ in 0..20_000 {
            let z = rng.gen_range(-40.0..40.0);
            let v = rng.gen_range(OBI_SERIES_V..30.0) * if rng.gen::<bool>() { 1.0 } else { -1.0 };
            assert_eq!(logistic_obi(z, v).to_bits(), before(z, v).to_bits(), "z = {z}, v = {v}");
        }
    }
}
