//! The offset oracles of SecBoost (docs/explanation/secboost.md#secboost-algorithm): for each example, an offset `v` whose OBI stays
//! within the round's budget — by a grid scan for any loss ([`offset_grid`]) or by halving for a
//! convex one ([`offset_convex`]) — and their lockstep batched form ([`offsets_many`]).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::obi::{obi_convex, obi_convex_many, obi_from_values, obi_star, with_fractions};
use crate::math::loss::Loss;

/// An offset is "numerically zero" below this many units of `max(1, |edge|)` (docs/explanation/secboost.md#secboost-degenerate, degenerate
/// cases).
const DEGENERATE_OFFSET: f64 = 1e-10;

/// Magnitude (in units of `max(1, |edge|)`) of the seeded random offset used in degenerate cases;
/// the actual magnitude is drawn uniformly in `[1, 2)` times this.
const RANDOM_OFFSET: f64 = 1e-7;

/// The fine grid that checks the OBI in [`offset_grid`] has this many times more intervals than
/// the scan grid.
const OBI_REFINE: usize = 4;

/// Divisions by 2 of the guess in [`offset_convex`] before falling back to a random offset.
const MAX_CONVEX_DIVISIONS: usize = 200;

/// The grid point `z*` of docs/explanation/secboost.md#secboost-algorithm: general oracle: among `(xs, fs)`, the secant from `(e_t, f_t)`
/// with the smallest slope when `d = ẽ_{t−1} − ẽ_t > 0` (the largest otherwise); ties go to the
/// first point. `None` when every slope is NaN.
fn best_secant_point(xs: &[f64], fs: &[f64], e_t: f64, f_t: f64, d: f64) -> Option<f64> {
    let mut best: Option<(f64, f64)> = None; // (slope, z_c)
    for (&xc, &fc) in xs.iter().zip(fs) {
        let s = (fc - f_t) / (xc - e_t);
        if s.is_nan() {
            continue;
        }
        // docs/explanation/secboost.md#secboost-algorithm: smallest slope if ẽ_t < ẽ_(t−1), largest otherwise.
        let better = match best {
            None => true,
            Some((sb, _)) => (d > 0.0 && s < sb) || (d < 0.0 && s > sb),
        };
        if better {
            best = Some((s, xc));
        }
    }
    best.map(|b| b.1)
}

// ------------------------------------------------------------------------------------------------
// Offset oracles
// ------------------------------------------------------------------------------------------------

/// An offset returned by an oracle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffsetChoice {
    /// The offset `v` (never 0).
    pub v: f64,
    /// `Q*` at `v` as the oracle evaluated it (0 for a random offset, which is not checked).
    pub obi: f64,
    /// Whether `v` is the seeded random offset of a degenerate case (`ẽ_t = ẽ_{t−1}` or a
    /// numerically zero offset), as in the SecBoost authors' implementation.
    pub random: bool,
}

/// Whether `v` is numerically zero next to the edge `e`.
#[inline]
fn negligible(v: f64, e: f64) -> bool {
    // `max(|e|, 1)` (1 for a NaN `e`, as `f64::max`) by a comparison, which vectorises.
    let s = e.abs();
    v.abs() <= DEGENERATE_OFFSET * if s > 1.0 { s } else { 1.0 }
}

/// The seeded tiny random offset of the degenerate cases: magnitude uniform in
/// `[1, 2) · 1e−7 · max(1, |e|)`, random sign.
fn random_offset(e: f64, seed: u64) -> OffsetChoice {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mag = RANDOM_OFFSET * e.abs().max(1.0) * (1.0 + rng.gen::<f64>());
    let v = if rng.gen::<bool>() { mag } else { -mag };
    OffsetChoice { v, obi: 0.0, random: true }
}

/// The general offset oracle, for any `F` (docs/explanation/secboost.md#secboost-algorithm; the SecBoost paper's simple oracle).
///
/// Scans `Z = precision` equal steps from `e_t` (= ẽ_t) to `e_prev` (= ẽ_{t−1}), both included at
/// the far end, and takes the grid point `z*` whose secant from `(e_t, F(e_t))` has the smallest
/// slope if `e_t < e_prev` (the largest otherwise; ties go to the point nearest `e_t`); the offset
/// is `v = z* − e_t`. It then checks `Q*_F(e_t, e_prev, v) ≤ z` ([`obi_star`], non-convex form on a
/// grid `4Z` fine); if the check fails it doubles `Z` and retries, at most `max_doublings` times.
///
/// Returns `None` when no admissible offset was found — for example when `F` jumps by more than
/// `z` between `e_t` and `e_prev`: SecBoost's documented early stop. Degenerate cases
/// (`e_t = e_prev`, or a numerically zero offset) return the seeded random offset drawn from
/// `ChaCha8Rng::seed_from_u64(seed)`.
pub fn offset_grid(
    loss: &Loss,
    e_t: f64,
    e_prev: f64,
    z: f64,
    precision: usize,
    max_doublings: usize,
    seed: u64,
) -> Option<OffsetChoice> {
    let d = e_prev - e_t;
    if negligible(d, e_t) {
        // docs/explanation/secboost.md#secboost-algorithm: ẽ_t = ẽ_(t−1) → a small random non-zero offset.
        return Some(random_offset(e_t, seed));
    }
    let f_t = loss.value(e_t);
    if !f_t.is_finite() {
        return None;
    }
    offset_grid_from(loss, e_t, e_prev, z, precision, 0, max_doublings, seed, f_t)
}

/// [`offset_grid`]'s scan from its `k0`-th doubling on (`f_t = F(e_t)`, finite; `e_t ≠ e_prev`).
#[allow(clippy::too_many_arguments)]
fn offset_grid_from(
    loss: &Loss,
    e_t: f64,
    e_prev: f64,
    z: f64,
    precision: usize,
    k0: usize,
    max_doublings: usize,
    seed: u64,
    f_t: f64,
) -> Option<OffsetChoice> {
    let d = e_prev - e_t;
    let mut x = Vec::new();
    let mut f = Vec::new();
    for k in k0..=max_doublings {
        let zk = precision.max(1) << k;
        // Scan grid z_c = e_t + j·d/Z, j = 1..Z (the last point is e_prev itself).
        x.clear();
        with_fractions(zk, |q| x.extend(q[1..].iter().map(|&q| e_t + d * q)));
        x[zk - 1] = e_prev;
        f.resize(zk, 0.0);
        loss.eval_many(&x, &mut f);
        let z_star = best_secant_point(&x, &f, e_t, f_t, d)?;
        let v = z_star - e_t;
        if negligible(v, e_t) {
            return Some(random_offset(e_t, seed));
        }
        // Check Q* ≤ z on a finer grid.
        let q = obi_star(loss, e_t, e_prev, v, OBI_REFINE * zk);
        if q <= z {
            return Some(OffsetChoice { v, obi: q, random: false });
        }
    }
    None
}

/// [`offset_grid`]`(loss, e_t, e_prev, z, precision, max_doublings, seed)` and
/// [`obi_star`]`(loss, e_t, e_prev, v_prev, qbar_points)` — the OBI of the previous offset at the
/// new edge, a term of SecBoost's `q̄` — for a loss not declared convex from one evaluation of `F`
/// on the grid they share (a convex loss's OBI is not on a grid: the two calls are made).
///
/// With `qbar_points = 4·precision` the `4Z + 1` points of `q̄`'s grid from `e_t` to `e_prev` are
/// those of the oracle's first check, and every fourth one is a point of its first scan (`j/Z`
/// and `4j/4Z` round to the same double): `4Z + 3` loss evaluations instead of `9Z + 4`. Both
/// results are bit-identical to the two calls (otherwise the two calls are made).
#[allow(clippy::too_many_arguments)]
pub fn offset_grid_and_obi(
    loss: &Loss,
    e_t: f64,
    e_prev: f64,
    v_prev: f64,
    z: f64,
    precision: usize,
    max_doublings: usize,
    seed: u64,
    qbar_points: usize,
) -> (Option<OffsetChoice>, f64) {
    let d = e_prev - e_t;
    let zk = precision.max(1);
    let m = OBI_REFINE * zk;
    if loss.declared_convex() || negligible(d, e_t) || m != qbar_points.max(1) {
        let q = obi_star(loss, e_t, e_prev, v_prev, qbar_points);
        return (offset_grid(loss, e_t, e_prev, z, precision, max_doublings, seed), q);
    }
    // The grid of `obi`: e_t + d·k/m for k = 0..m, the last point e_prev itself, then the second
    // points of the two lines (the previous offset's, evaluated now; the new one's, later).
    let mut x: Vec<f64> = with_fractions(m, |q| q.iter().map(|&q| e_t + d * q).collect());
    x[m] = e_prev;
    x.push(e_t + v_prev);
    let mut f = vec![0.0; x.len()];
    loss.eval_many(&x, &mut f);
    let q_prev = obi_from_values(e_t, e_t + v_prev, f[0], f[m + 1], &x[..=m], &f[..=m]);
    let f_t = loss.value(e_t);
    if !f_t.is_finite() {
        return (None, q_prev);
    }
    // The first scan: z_c = e_t + d·j/Z, j = 1..Z — the grid's points 4j (the last is e_prev).
    let xs: Vec<f64> = (1..=zk).map(|j| x[OBI_REFINE * j]).collect();
    let fs: Vec<f64> = (1..=zk).map(|j| f[OBI_REFINE * j]).collect();
    let Some(z_star) = best_secant_point(&xs, &fs, e_t, f_t, d) else { return (None, q_prev) };
    let v = z_star - e_t;
    if negligible(v, e_t) {
        return (Some(random_offset(e_t, seed)), q_prev);
    }
    // The first check, Q* ≤ z, on the same grid (`obi_star`, non-convex form).
    let b = e_t + v;
    let q = obi_from_values(e_t, b, f[0], loss.value(b), &x[..=m], &f[..=m]);
    if q <= z {
        return (Some(OffsetChoice { v, obi: q, random: false }), q_prev);
    }
    (offset_grid_from(loss, e_t, e_prev, z, precision, 1, max_doublings, seed, f_t), q_prev)
}

/// The offset oracle for a convex `F` (docs/explanation/secboost.md#secboost-algorithm, dichotomic version).
///
/// Starts from the guess `v = (e_prev − e_t) / precision` (pointing from ẽ_t towards ẽ_{t−1}) and
/// halves it until the convex OBI `Q_F(e_t, e_t + v, e_t + v)` ([`obi_convex`]) is ≤ `z`. For a
/// convex `F` this always succeeds as `v → 0`; when the offset becomes numerically zero first (or
/// `e_t = e_prev`), the seeded random offset of the degenerate case is returned instead.
pub fn offset_convex(loss: &Loss, e_t: f64, e_prev: f64, z: f64, precision: usize, seed: u64) -> OffsetChoice {
    let d = e_prev - e_t;
    if negligible(d, e_t) {
        return random_offset(e_t, seed);
    }
    let mut v = d / guess_divisor(precision);
    for _ in 0..MAX_CONVEX_DIVISIONS {
        if negligible(v, e_t) {
            break;
        }
        let q = obi_convex(loss, e_t, v);
        if q <= z {
            return OffsetChoice { v, obi: q, random: false };
        }
        v *= 0.5;
    }
    random_offset(e_t, seed)
}

/// [`offset_convex`]'s first iteration: its first guess `v`, with the OBI `obi`, for the edges `a`
/// now and `b` before, is accepted when neither the step nor the guess is numerically zero and the
/// OBI is within the budget `z`.
#[inline]
fn first_guess_accepted(a: f64, b: f64, v: f64, obi: f64, z: f64) -> bool {
    first_guess_usable(a, b, v) & (obi <= z)
}

/// Whether [`offset_convex`]'s first guess `v` for the edges `a` now and `b` before is kept when
/// its OBI is within the budget: neither the step nor the guess is numerically zero.
#[inline]
pub(super) fn first_guess_usable(a: f64, b: f64, v: f64) -> bool {
    !(negligible(b - a, a) | negligible(v, a))
}

/// The divisor of [`first_guesses`]: the oracle's precision, at least 1.
#[inline]
pub(super) fn guess_divisor(precision: usize) -> f64 {
    precision.max(1) as f64
}

/// [`offset_convex`]'s first guesses `v_j = (e_prev[j] − e_t[j]) / precision`.
#[inline]
pub(super) fn first_guesses(e_t: &[f64], e_prev: &[f64], precision: usize, v: &mut [f64]) {
    let div = guess_divisor(precision);
    for ((v, &a), &b) in v.iter_mut().zip(e_t).zip(e_prev) {
        *v = (b - a) / div;
    }
}

/// [`offset_convex`] for a chunk of rows, bit for bit: row `j` has the edges `(e_t[j],
/// e_prev[j])` and the seed `seed(j)`; its offset goes to `v[j]`, its OBI to `obi[j]`. The first
/// guesses' OBIs are computed together by `guess_obis(v, obi)` (which must give
/// [`obi_convex`]`(e_t[j], v[j])` for every row: [`obi_convex_into`] does); a row whose first guess
/// is not accepted continues the search alone, and `searched(j, random)` is called for it
/// (`random`: its offset is the seeded random one).
#[allow(clippy::too_many_arguments)] // offset_convex's arguments, per row
pub(super) fn offsets_convex_into(
    loss: &Loss,
    e_t: &[f64],
    e_prev: &[f64],
    z: f64,
    precision: usize,
    seed: impl Fn(usize) -> u64,
    v: &mut [f64],
    obi: &mut [f64],
    guess_obis: impl FnOnce(&[f64], &mut [f64]),
    mut searched: impl FnMut(usize, bool),
) {
    first_guesses(e_t, e_prev, precision, v);
    guess_obis(v, obi);
    let accepted = |v: &[f64], obi: &[f64], j: usize| first_guess_accepted(e_t[j], e_prev[j], v[j], obi[j], z);
    // Whether every first guess is accepted (one pass with no branch; usually so).
    if (0..v.len()).fold(true, |all, j| all & accepted(v, obi, j)) {
        return;
    }
    for j in 0..v.len() {
        if accepted(v, obi, j) {
            continue;
        }
        let (a, b) = (e_t[j], e_prev[j]);
        let c = offset_convex(loss, a, b, z, precision, seed(j));
        (v[j], obi[j]) = (c.v, c.obi);
        searched(j, c.random);
    }
}

// ------------------------------------------------------------------------------------------------
// Batched: the same computations for many examples at once
// ------------------------------------------------------------------------------------------------

/// [`offset_grid`] (or, with `convex`, [`offset_convex`]) for every example `i` at once:
/// `e_t[i]`, `e_prev[i]`, `seeds[i]`. The examples run in lockstep, so a batch loss (e.g. a Python
/// callable) is called once per oracle step for all examples instead of once per example.
/// Bit-identical to the per-example oracles.
#[allow(clippy::too_many_arguments)] // the per-example oracles' arguments, plus which oracle
pub fn offsets_many(
    loss: &Loss,
    e_t: &[f64],
    e_prev: &[f64],
    z: f64,
    precision: usize,
    max_doublings: usize,
    convex: bool,
    seeds: &[u64],
) -> Vec<Option<OffsetChoice>> {
    let n = e_t.len();
    let mut out: Vec<Option<OffsetChoice>> = vec![None; n];
    let mut active: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        if negligible(e_prev[i] - e_t[i], e_t[i]) {
            out[i] = Some(random_offset(e_t[i], seeds[i]));
        } else {
            active.push(i);
        }
    }
    if convex {
        // offset_convex: halve v until the convex OBI is within z.
        let mut v: Vec<f64> = active.iter().map(|&i| (e_prev[i] - e_t[i]) / guess_divisor(precision)).collect();
        for _ in 0..MAX_CONVEX_DIVISIONS {
            let mut keep_i = Vec::with_capacity(active.len());
            let mut keep_v = Vec::with_capacity(active.len());
            for (&i, &vi) in active.iter().zip(&v) {
                if negligible(vi, e_t[i]) {
                    out[i] = Some(random_offset(e_t[i], seeds[i]));
                } else {
                    keep_i.push(i);
                    keep_v.push(vi);
                }
            }
            if keep_i.is_empty() {
                return out;
            }
            let zs: Vec<f64> = keep_i.iter().map(|&i| e_t[i]).collect();
            let q = obi_convex_many(loss, &zs, &keep_v);
            active.clear();
            v.clear();
            for ((&i, &vi), &qi) in keep_i.iter().zip(&keep_v).zip(&q) {
                if qi <= z {
                    out[i] = Some(OffsetChoice { v: vi, obi: qi, random: false });
                } else {
                    active.push(i);
                    v.push(vi * 0.5);
                }
            }
        }
        for &i in &active {
            out[i] = Some(random_offset(e_t[i], seeds[i]));
        }
        return out;
    }
    // offset_grid.
    let starts: Vec<f64> = active.iter().map(|&i| e_t[i]).collect();
    let mut f_t = vec![0.0; starts.len()];
    loss.eval_many(&starts, &mut f_t);
    let mut live: Vec<(usize, f64)> =
        active.iter().zip(&f_t).filter(|(_, f)| f.is_finite()).map(|(&i, &f)| (i, f)).collect();
    let mut x = Vec::new();
    let mut f = Vec::new();
    for k in 0..=max_doublings {
        if live.is_empty() {
            break;
        }
        let zk = precision.max(1) << k;
        x.clear();
        with_fractions(zk, |q| {
            for &(i, _) in &live {
                let (et, d) = (e_t[i], e_prev[i] - e_t[i]);
                let start = x.len();
                x.extend(q[1..].iter().map(|&q| et + d * q));
                x[start + zk - 1] = e_prev[i];
            }
        });
        f.resize(x.len(), 0.0);
        loss.eval_many(&x, &mut f);
        // Candidates (i, f_t, v) whose OBI is checked next.
        let mut cand: Vec<(usize, f64, f64)> = Vec::with_capacity(live.len());
        for (k2, &(i, ft)) in live.iter().enumerate() {
            let (et, d) = (e_t[i], e_prev[i] - e_t[i]);
            let block = k2 * zk..(k2 + 1) * zk;
            // No secant at all: no admissible offset (None).
            let Some(z_star) = best_secant_point(&x[block.clone()], &f[block], et, ft, d) else { continue };
            let v = z_star - et;
            if negligible(v, et) {
                out[i] = Some(random_offset(et, seeds[i]));
            } else {
                cand.push((i, ft, v));
            }
        }
        // Q* ≤ z on a finer grid (obi_star).
        let q: Vec<f64> = if loss.declared_convex() {
            let zs: Vec<f64> = cand.iter().map(|c| e_t[c.0]).collect();
            let vs: Vec<f64> = cand.iter().map(|c| c.2).collect();
            obi_convex_many(loss, &zs, &vs)
        } else {
            let m = (OBI_REFINE * zk).max(1);
            x.clear();
            with_fractions(m, |q| {
                for &(i, _, v) in &cand {
                    let (a, c) = (e_t[i], e_prev[i]);
                    let start = x.len();
                    x.extend(q.iter().map(|&q| a + (c - a) * q));
                    x[start + m] = c;
                    x.push(a + v);
                }
            });
            f.resize(x.len(), 0.0);
            loss.eval_many(&x, &mut f);
            cand.iter()
                .enumerate()
                .map(|(k2, &(i, _, v))| {
                    let block = &x[k2 * (m + 2)..(k2 + 1) * (m + 2)];
                    let fb = &f[k2 * (m + 2)..(k2 + 1) * (m + 2)];
                    obi_from_values(e_t[i], e_t[i] + v, fb[0], fb[m + 1], &block[..=m], &fb[..=m])
                })
                .collect()
        };
        live.clear();
        for (&(i, ft, v), &qi) in cand.iter().zip(&q) {
            if qi <= z {
                out[i] = Some(OffsetChoice { v, obi: qi, random: false });
            } else {
                live.push((i, ft));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boost::secboost::obi::obi_convex_into;
    use crate::math::loss::tests::loss;
    use std::sync::Arc;

    /// The chunk oracle gives `offset_convex`'s offsets, OBIs and random flags bit for bit: first
    /// guesses accepted, refused (a budget below their OBI: the search goes on), degenerate
    /// (equal edges), and edges far out.
    #[test]
    fn chunk_oracle_equals_offset_convex_bit_for_bit() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let n = 5000;
        let e_t: Vec<f64> =
            (0..n).map(|i| if i % 9 == 0 { rng.gen_range(-700.0..700.0) } else { rng.gen_range(-6.0..6.0) }).collect();
        let e_prev: Vec<f64> =
            e_t.iter().enumerate().map(|(i, &e)| if i % 11 == 0 { e } else { e + rng.gen_range(-0.8..0.8) }).collect();
        for spec in ["logistic", "exponential", "square"] {
            let l = loss(spec);
            for z in [1e-3, 1e-9, 1e-16] {
                let (mut v, mut obi) = (vec![0.0; n], vec![0.0; n]);
                let mut random = vec![false; n];
                let seed = |j: usize| 1000 + j as u64;
                let guess_obis = |v: &[f64], obi: &mut [f64]| obi_convex_into(&l, &e_t, v, obi);
                offsets_convex_into(&l, &e_t, &e_prev, z, 100, seed, &mut v, &mut obi, guess_obis, |j, r| {
                    random[j] |= r;
                });
                let mut refused = 0;
                for j in 0..n {
                    let c = offset_convex(&l, e_t[j], e_prev[j], z, 100, seed(j));
                    let what = format!("{spec} z = {z:e} row {j}");
                    assert_eq!(
                        (v[j].to_bits(), obi[j].to_bits(), random[j]),
                        (c.v.to_bits(), c.obi.to_bits(), c.random),
                        "{what}"
                    );
                    refused += usize::from(c.v.to_bits() != ((e_prev[j] - e_t[j]) / 100.0).to_bits());
                }
                if z < 1e-8 {
                    assert!(refused > n / 10, "{spec} z = {z:e}: the search was exercised ({refused} rows)");
                }
            }
        }
    }

    #[test]
    fn grid_oracle_finds_admissible_offsets() {
        for s in ["logistic", "clipped-logistic:q=-2", "spring:Q=500", "spring:Q=1", "hinge"] {
            let l = loss(s);
            // Several of these edges sit on a cusp of a spring loss (Qz − ½ a half-integer), where
            // F rises like √ and Q* ≈ (c/4)·√(grid step): the budget must allow for it.
            for &(e_t, e_prev) in &[(0.3, -0.2), (-0.2, 0.3), (2.0, 1.0), (-1.0, -3.0)] {
                let z = 1e-2;
                let c = offset_grid(&l, e_t, e_prev, z, 100, 8, 7).unwrap_or_else(|| panic!("{s} {e_t} {e_prev}"));
                assert!(!c.random);
                assert!(c.v != 0.0 && c.v.signum() == (e_prev - e_t).signum(), "{s}: {c:?}");
                assert!(c.obi <= z, "{s}: {c:?}");
                // The offset stays between the two edges.
                assert!(c.v.abs() <= (e_prev - e_t).abs() * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn convex_oracle_respects_the_bound() {
        for s in ["logistic", "exponential", "square", "hinge", "tempered:t=0.5"] {
            let l = loss(s);
            for &(e_t, e_prev, z) in &[(0.3, -0.2, 1e-4), (-0.2, 0.3, 1e-8), (2.0, 1.0, 1e-2), (0.9, 1.2, 1e-12)] {
                let c = offset_convex(&l, e_t, e_prev, z, 10, 3);
                if !c.random {
                    assert!(c.obi <= z, "{s}: {c:?}");
                    assert_eq!(c.v.signum(), (e_prev - e_t).signum());
                    assert!((obi_convex(&l, e_t, c.v) - c.obi).abs() == 0.0);
                }
            }
        }
        // Tiny budget on a strictly convex loss: the offset shrinks like √z.
        let c = offset_convex(&loss("square"), 0.0, 1.0, 1e-10, 1, 0);
        assert!(!c.random && c.v > 0.0 && c.v * c.v / 4.0 <= 1e-10 && c.v > 1e-5);
    }

    #[test]
    fn degenerate_offsets_are_seeded() {
        let l = loss("logistic");
        let a = offset_grid(&l, 0.5, 0.5, 1e-3, 100, 4, 42).expect("random offset");
        let b = offset_grid(&l, 0.5, 0.5, 1e-3, 100, 4, 42).expect("random offset");
        let c = offset_grid(&l, 0.5, 0.5, 1e-3, 100, 4, 43).expect("random offset");
        assert!(a.random && a.v != 0.0 && a.v.abs() < 1e-6);
        assert_eq!(a, b, "same seed, same offset");
        assert_ne!(a.v, c.v, "another seed, another offset");
        let d = offset_convex(&l, -2.0, -2.0, 1e-3, 100, 42);
        assert!(d.random && d.v.abs() >= 1e-7 * 2.0 && d.v.abs() < 4e-7);
        // An impossible budget ends in the random offset too.
        assert!(offset_convex(&l, 0.0, 1.0, -1.0, 1, 1).random);
    }

    #[test]
    fn jump_larger_than_budget_has_no_offset() {
        // Logistic plus an upward step of 1 at z = 0.3 (F(0.3) is the high value).
        let jump = Loss::custom(
            "jump",
            Arc::new(|z: f64| (1.0 + (-z).exp()).ln() + if z >= 0.3 { 1.0 } else { 0.0 }),
            false,
            None,
        )
        .expect("valid");
        // ẽ_t on the jump, ẽ_{t−1} on the low side: every secant from (ẽ_t, F(ẽ_t)) passes above
        // F just left of the jump by about the jump's height, so I_ti(z) is empty (the paper's
        // Fig. 4c) whatever the grid.
        assert_eq!(offset_grid(&jump, 0.3, 0.1, 0.05, 100, 4, 0), None);
        // With a budget above the jump an offset exists (Lemma B.4 of the paper).
        assert!(offset_grid(&jump, 0.3, 0.1, 1.5, 100, 4, 0).is_some());
        // Away from the jump, or with the jump behind ẽ_t, small budgets suffice.
        assert!(offset_grid(&jump, 0.3, 0.5, 0.05, 100, 4, 0).is_some());
        assert!(offset_grid(&jump, 0.1, 0.5, 0.05, 100, 4, 0).is_some());
        assert!(offset_grid(&jump, 0.5, 0.1, 0.05, 100, 4, 0).is_some());
    }

    /// The lockstep oracles give exactly the per-example oracles' offsets, for convex and
    /// non-convex losses, both oracle kinds, on random edges (including degenerate ones).
    #[test]
    fn lockstep_oracles_equal_per_example_oracles() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for spec in ["logistic", "exponential", "square", "spring:Q=500", "clipped-logistic:q=-2", "zero-one", "hinge"]
        {
            let loss = Loss::from_spec(&spec.parse().unwrap()).unwrap();
            let n = 60;
            let e_t: Vec<f64> = (0..n).map(|_| rng.gen_range(-3.0..3.0)).collect();
            let e_prev: Vec<f64> = e_t
                .iter()
                .enumerate()
                .map(|(i, e)| if i % 10 == 0 { *e } else { e + rng.gen_range(-1.0..1.0) })
                .collect();
            let seeds: Vec<u64> = (0..n as u64).collect();
            for z in [1e-4, 0.05, 1.0] {
                for convex in [false, true] {
                    if convex && !loss.declared_convex() {
                        continue;
                    }
                    let many = offsets_many(&loss, &e_t, &e_prev, z, 20, 3, convex, &seeds);
                    for i in 0..n {
                        let one = if convex {
                            Some(offset_convex(&loss, e_t[i], e_prev[i], z, 20, seeds[i]))
                        } else {
                            offset_grid(&loss, e_t[i], e_prev[i], z, 20, 3, seeds[i])
                        };
                        let same = match (one, many[i]) {
                            (Some(a), Some(b)) => {
                                a.v.to_bits() == b.v.to_bits()
                                    && a.obi.to_bits() == b.obi.to_bits()
                                    && a.random == b.random
                            }
                            (None, None) => true,
                            _ => false,
                        };
                        assert!(same, "{spec} z={z} convex={convex} i={i}: {one:?} vs {:?}", many[i]);
                    }
                }
            }
        }
    }

    /// The shared-grid oracle returns exactly `offset_grid` and `obi_star`, for every
    /// loss, budgets that accept at the first check or need doublings, and degenerate edges.
    #[test]
    fn offset_grid_and_obi_equal_the_two_calls() {
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        for spec in ["spring:Q=500", "clipped-logistic:q=-2", "spring-main", "zero-one", "logistic", "hinge"] {
            let loss = Loss::from_spec(&spec.parse().unwrap()).unwrap();
            for i in 0..300 {
                let e_t: f64 = rng.gen_range(-3.0..3.0);
                let e_prev = if i % 17 == 0 { e_t } else { e_t + rng.gen_range(-1.0..1.0) };
                let v_prev: f64 = rng.gen_range(-0.5..0.5);
                let z = [1e-6, 1e-3, 0.05, 1.0][i % 4];
                let (precision, doublings) = ([100, 7, 1][i % 3], i % 4);
                for points in [4 * precision, 10] {
                    let (c, q) = offset_grid_and_obi(&loss, e_t, e_prev, v_prev, z, precision, doublings, 9, points);
                    let c2 = offset_grid(&loss, e_t, e_prev, z, precision, doublings, 9);
                    let q2 = obi_star(&loss, e_t, e_prev, v_prev, points);
                    assert_eq!(format!("{c:?}"), format!("{c2:?}"), "{spec} {i}");
                    if let (Some(a), Some(b)) = (c, c2) {
                        assert!(a.v.to_bits() == b.v.to_bits() && a.obi.to_bits() == b.obi.to_bits());
                    }
                    assert!(q.to_bits() == q2.to_bits() || (q.is_nan() && q2.is_nan()), "{spec} {i}: {q} vs {q2}");
                }
            }
        }
    }
}
