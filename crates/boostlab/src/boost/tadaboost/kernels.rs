//! The per-example passes of a round: the edge's sums, the tempered update (one kernel per
//! regime, chosen once a round) and the training errors, over fixed chunks of examples.

use crate::math::tempered::update_factor;
use crate::util::fastmath::powi_seq;

/// The most rows in a chunk of the per-example passes.
pub(super) const MAX_CHUNK: usize = 1 << 13;

/// The fewest rows in a chunk of the per-example passes (when there are more rows than that).
const MIN_CHUNK: usize = 1 << 10;

/// Rows per chunk of the per-example passes over `n` examples: about a sixteenth of them,
/// rounded up to a power of two within [`MIN_CHUNK`]`..=`[`MAX_CHUNK`], so that 10,000 rows make
/// ten chunks to share between threads, not one large and one small. Partial sums are taken per
/// chunk and added in chunk order; the chunks depend on `n` only, so every result is the same for
/// any number of threads.
pub(super) fn chunk_len(n: usize) -> usize {
    n.div_ceil(16).next_power_of_two().clamp(MIN_CHUNK, MAX_CHUNK)
}

/// Up to this bound on `(2−t)·ln q̃` no update can overflow (`Σ q̃^(2−t)` over up to `e^100`
/// examples stays below `f64::MAX ≈ e^709`), so the update may overwrite the weights in place.
pub(super) const IN_PLACE_LN_BOUND: f64 = 600.0;

/// The power kernel of the update is used for `|1 − t|` at least this (its relative error grows
/// like `ε/|1 − t|`).
pub(super) const POWER_KERNEL_MIN_S: f64 = 0.05;

/// Per-round quantities computed before the update.
pub(super) struct Edge {
    /// `max |u|` over the weights in `R`'s maximum (`R = umax · r_rel`).
    pub(super) umax: f64,
    /// `max |u|/(umax q^(1−t))` over the same weights.
    pub(super) r_rel: f64,
    pub(super) rho: f64,
    /// `m†`: the number (total multiplicity) of switched-off weights.
    pub(super) m_dag: f64,
    pub(super) q_dag: f64,
    /// `max |u|/R` over the switched-off weights.
    pub(super) v_dag_max: f64,
    /// Rounding tolerance of ρ: 4 · (number of terms) · machine epsilon.
    pub(super) rho_tol: f64,
}

/// Partial sums of the edge over one chunk, unscaled (`raw = u/q^(1−t)`, [`raw_ratio`]): one pass
/// finds `umax` and these; the edge scales them by `1/umax` afterwards.
pub(super) struct EdgeSums {
    /// `max |h|` over the positive weights.
    pub(super) umax: f64,
    /// First row whose tree output is not finite (`usize::MAX`: none).
    pub(super) bad_row: usize,
    /// `max |raw|` over the positive weights.
    pub(super) ratio_max: f64,
    /// `Σ raw · q^(2−t)` over the positive weights.
    pub(super) num: f64,
    /// Number (total multiplicity) of the terms of `num` and of the switched-off weights.
    pub(super) n_terms: f64,
    pub(super) m_dag: f64,
    /// `max |u|` and `Σ u` over the switched-off weights.
    pub(super) off_max: f64,
    pub(super) off_sum: f64,
}

impl Default for EdgeSums {
    fn default() -> Self {
        EdgeSums {
            umax: 0.0,
            bad_row: usize::MAX,
            ratio_max: 0.0,
            num: 0.0,
            n_terms: 0.0,
            m_dag: 0.0,
            off_max: 0.0,
            off_sum: 0.0,
        }
    }
}

/// Partial sums of the update over one chunk.
#[derive(Default)]
pub(super) struct UpdateSums {
    /// `Σ q̃^(2−t)` over the finite `q̃`.
    pub(super) sum: f64,
    /// `Σ c q̃` over the finite `q̃` (the next learner normaliser, times `Z`).
    pub(super) qsum: f64,
    pub(super) qmax: f64,
    pub(super) n_inf: usize,
    /// Total multiplicity of the infinite `q̃` (`n_inf` without sample weights).
    pub(super) inf_weight: f64,
    /// The models' moves of the same pass: the weighted training errors of
    /// the linear and the clipped model and the clip events (see [`FinishSums`]).
    pub(super) err: f64,
    pub(super) err_clipped: f64,
    pub(super) clip_upper: f64,
    pub(super) clip_lower: f64,
}

/// Partial results of the last pass of a round over one chunk.
pub(super) struct FinishSums {
    /// Minimum and maximum co-density and number of zero weights (positive sample weight only).
    pub(super) pmin: f64,
    pub(super) pmax: f64,
    pub(super) n_zero: f64,
    /// Weighted training errors of the linear and the clipped model.
    pub(super) err: f64,
    pub(super) err_clipped: f64,
    /// Clip events of this round (docs/explanation/tadaboost.md#tadaboost-algorithm): examples whose clipped partial score left
    /// `[−δ, δ]` and was clipped, above (`+δ`) and below (`−δ`), counted with multiplicities.
    pub(super) clip_upper: f64,
    pub(super) clip_lower: f64,
}

impl Default for FinishSums {
    fn default() -> Self {
        FinishSums {
            pmin: f64::INFINITY,
            pmax: 0.0,
            n_zero: 0.0,
            err: 0.0,
            err_clipped: 0.0,
            clip_upper: 0.0,
            clip_lower: 0.0,
        }
    }
}

/// Multiplicity of example `i` (1 without sample weights: multiplying by it changes nothing).
#[inline]
pub(super) fn mult(c: Option<&[f64]>, i: usize) -> f64 {
    c.map_or(1.0, |c| c[i])
}

/// Whether example `i` has positive sample weight.
#[inline]
pub(super) fn active(w: Option<&[f64]>, i: usize) -> bool {
    w.is_none_or(|w| w[i] > 0.0)
}

/// `u/(umax q^(1−t))` (with `qs = q^(1−t)`; 1 at `t = 1`): the one expression shared by the edge
/// and the update, so that `|ratio| ≤ max |ratio|` holds exactly. It is [`raw_ratio`] times
/// `1/umax`, so that the edge can take the maximum of the raw ratios in the pass that finds `umax`
/// and scale it afterwards: multiplying by the same positive number is monotone, so
/// `max |ratio| = max |raw ratio| · (1/umax)` exactly.
#[inline]
pub(super) fn ratio<const TEMPERED: bool>(yi: f64, hi: f64, inv_umax: f64, qs: f64) -> f64 {
    raw_ratio::<TEMPERED>(yi, hi, qs) * inv_umax
}

/// `u/q^(1−t)` (`u` at `t = 1`).
#[inline]
pub(super) fn raw_ratio<const TEMPERED: bool>(yi: f64, hi: f64, qs: f64) -> f64 {
    let v = yi * hi;
    if TEMPERED {
        v / qs
    } else {
        v
    }
}

/// The tree's outputs on the training rows: a dense `h` ([`Booster::step`]), or each
/// row's leaf and the leaves' values ([`Booster::step_on_leaves`]: no `h` written by the driver and
/// read back by every pass).
pub(super) trait Outputs: Sync {
    /// The output of row `i`.
    fn at(&self, i: usize) -> f64;
    /// Bytes read per row (a tree output, or a leaf index).
    const WIDTH: usize;
}

impl Outputs for [f64] {
    const WIDTH: usize = 8;
    #[inline(always)]
    fn at(&self, i: usize) -> f64 {
        self[i]
    }
}

/// A tree's outputs: `values[of_row[i]]`.
pub(super) struct Leaves<'a> {
    pub(super) of_row: &'a [u32],
    pub(super) values: &'a [f64],
}

impl Outputs for Leaves<'_> {
    const WIDTH: usize = 4;
    #[inline(always)]
    fn at(&self, i: usize) -> f64 {
        // A leaf index out of range (not produced by the tree learner) reads as NaN: the edge's
        // finiteness check reports it as a bad tree output of that row instead of panicking.
        self.values.get(self.of_row[i] as usize).copied().unwrap_or(f64::NAN)
    }
}

/// `v` cut into `n_chunks` chunks of `chunk` elements, or `n_chunks` empty slices when `v` is
/// empty (a per-example vector the regime does not keep).
pub(super) fn chunks_of(v: &mut [f64], chunk: usize, n_chunks: usize) -> Vec<&mut [f64]> {
    if v.is_empty() {
        (0..n_chunks).map(|_| Default::default()).collect()
    } else {
        v.chunks_mut(chunk).collect()
    }
}

/// The update's inputs that do not depend on the example.
pub(super) struct UpdateCtx<'a, H: ?Sized> {
    pub(super) y: &'a [i8],
    pub(super) h: &'a H,
    pub(super) w: Option<&'a [f64]>,
    /// Multiplicities (`None`: all 1).
    pub(super) c: Option<&'a [f64]>,
    pub(super) s: f64,
    pub(super) nu: f64,
    pub(super) inv_umax: f64,
    pub(super) r_rel: f64,
    /// `−(1−t)µ = −(1−t)ν/R` and `1/(1−t)` (power kernel).
    pub(super) k: f64,
    pub(super) inv_s: f64,
    /// `1/(1−t)` snapped to an integer ([`snapped_int_exponent`]) for `KERNEL_POWER_INT`;
    /// 0 otherwise.
    pub(super) n_int: u32,
    /// `t < 1` and some active weights are 0: they may come back.
    pub(super) comeback: bool,
    /// The models' step (docs/explanation/tadaboost.md#tadaboost-algorithm: `H += α h`, `S = clip_[−δ, δ](S + α h)`), `δ = +∞` without a
    /// clipped model, and the uniform weight `1/m` of the training errors without sample weights.
    pub(super) alpha: f64,
    pub(super) delta: f64,
    pub(super) uniform: f64,
}

/// Kernels of the update, chosen once per round (see [`update_chunk`]).
pub(super) const KERNEL_ONE: u8 = 0;
pub(super) const KERNEL_RELATIVE: u8 = 1;
pub(super) const KERNEL_POWER: u8 = 2;
pub(super) const KERNEL_POWER_INT: u8 = 3;

/// Overwrites one chunk (starting at example `base`) of `q` and `q^(1−t)` with the un-normalised
/// update (docs/explanation/tadaboost.md#tadaboost-algorithm), with kernel `K`:
/// - `KERNEL_ONE` (t = 1): `q̃ = q exp(−ν a)`;
/// - `KERNEL_RELATIVE`: `q̃ = q (1 + x)^(1/(1−t))` as `q exp(ln_1p(x)/(1−t))`, accurate as `t → 1`;
/// - `KERNEL_POWER`: docs/explanation/tadaboost.md#tadaboost-update: `q̃^(1−t) = q^(1−t) − (1−t)µu` and `q̃ = (q̃^(1−t))^(1/(1−t))`, one
///   `pow` and no division per example, used when `|1−t| ≥ 0.05` (relative error `≲ ε/|1−t|`);
/// - `KERNEL_POWER_INT`: `KERNEL_POWER` when `1/(1−t)` is an integer `n ≤ 16` up to the
///   rounding of `t` (t = 0, ½, ¾, 0.8, …): the power is [`powi_seq`]'s `n − 1` multiplications or
///   fewer instead of a `pow` (relative error `≤ (n−1)·2^−53`; a deliberate change of the weights'
///   last bits against `powf(x, 1/(1−t))`, see `crate::util::fastmath`).
///
/// The same pass moves the models (they were the last pass's): `H += α h`
/// and, with `CLIP`, `S = clip_[−δ, δ](S + α h)`, with the training errors and clip events of the
/// moved models — the same per-row arithmetic in the same order as before, so the same bits.
pub(super) fn update_chunk<const K: u8, const CLIP: bool, H: Outputs + ?Sized>(
    ctx: &UpdateCtx<'_, H>,
    base: usize,
    (q, qs): (&mut [f64], &mut [f64]),
    (scores, clipped): (&mut [f64], &mut [f64]),
) -> UpdateSums {
    let (s, nu) = (ctx.s, ctx.nu);
    let mut p = UpdateSums::default();
    for (i, (qv, score)) in q.iter_mut().zip(scores.iter_mut()).enumerate() {
        let g = base + i;
        let (yi, hi) = (f64::from(ctx.y[g]), ctx.h.at(g));
        if K == KERNEL_ONE {
            if *qv > 0.0 {
                // docs/explanation/tadaboost.md#tadaboost-t-one at t = 1: q̃ = q exp(−µu) = q exp(−ν a), a = u/R.
                let a = ratio::<false>(yi, hi, ctx.inv_umax, 1.0) / ctx.r_rel;
                *qv *= (-nu * a).exp();
            }
            if qv.is_infinite() {
                p.n_inf += 1;
                p.inf_weight += mult(ctx.c, g);
            } else {
                p.sum += *qv * mult(ctx.c, g);
                p.qsum += *qv * mult(ctx.c, g);
                p.qmax = p.qmax.max(*qv);
            }
        } else {
            let qsv = &mut qs[i];
            let (qn, qsn) = if K == KERNEL_POWER || K == KERNEL_POWER_INT {
                if *qv > 0.0 || (ctx.comeback && active(ctx.w, g)) {
                    // docs/explanation/tadaboost.md#tadaboost-algorithm: q̃ = [q^(1−t) − (1−t)µu]_+^(1/(1−t)) (q^(1−t) = 0 for a switched-off
                    // weight), with −(1−t)µ = k.
                    let qsn = *qsv + ctx.k * (yi * hi);
                    if qsn > 0.0 {
                        if K == KERNEL_POWER_INT {
                            (powi_seq(qsn, ctx.n_int), qsn)
                        } else {
                            (qsn.powf(ctx.inv_s), qsn)
                        }
                    } else if s > 0.0 || *qv == 0.0 {
                        (0.0, 0.0)
                    } else {
                        (f64::INFINITY, 0.0)
                    }
                } else {
                    (0.0, 0.0)
                }
            } else if *qv > 0.0 {
                // docs/explanation/tadaboost.md#tadaboost-algorithm: q̃ = [q^(1−t) − (1−t)µu]_+^(1/(1−t)) = q (1 + x)^(1/(1−t)),
                // x = −(1−t) µ u / q^(1−t) = −(1−t) ν a, a = u/(R q^(1−t)) ∈ [−1, 1];
                // and q̃^(1−t) = q^(1−t) (1 + x).
                let a = ratio::<true>(yi, hi, ctx.inv_umax, *qsv) / ctx.r_rel;
                let x = -s * nu * a;
                (update_factor(*qv, x, s), *qsv * (1.0 + x))
            } else if ctx.comeback && active(ctx.w, g) {
                // Switched-off weights: q̃ = [−(1−t) µ u]_+^(1/(1−t)).
                let z = -s * nu * (yi * hi * ctx.inv_umax / ctx.r_rel);
                if z > 0.0 {
                    ((z.ln() / s).exp(), z)
                } else {
                    (0.0, 0.0)
                }
            } else {
                (0.0, 0.0)
            };
            *qv = qn;
            *qsv = if qn == 0.0 { 0.0 } else { qsn };
            if qn.is_infinite() {
                p.n_inf += 1;
                p.inf_weight += mult(ctx.c, g);
            } else {
                // docs/explanation/tadaboost.md#tadaboost-algorithm: Z^(2−t) = Σ q̃^(2−t), each example counted with its multiplicity.
                p.sum += qn * *qsv * mult(ctx.c, g);
                p.qsum += qn * mult(ctx.c, g);
                p.qmax = p.qmax.max(qn);
            }
        }
        // The models: H += α h; S = clip_[−δ, δ](S + α h) (docs/explanation/tadaboost.md#tadaboost-algorithm). A score of exactly 0
        // predicts the negative class (docs/explanation/tadaboost.md#tadaboost-algorithm).
        let wi = ctx.w.map_or(ctx.uniform, |w| w[g]);
        let wrong = |hs: f64| if (hs > 0.0) != (yi > 0.0) { wi } else { 0.0 };
        *score += ctx.alpha * hi;
        p.err += wrong(*score);
        if CLIP {
            let cl = &mut clipped[i];
            let unclipped = *cl + ctx.alpha * hi;
            if wi > 0.0 && unclipped > ctx.delta {
                p.clip_upper += mult(ctx.c, g);
            } else if wi > 0.0 && unclipped < -ctx.delta {
                p.clip_lower += mult(ctx.c, g);
            }
            *cl = unclipped.clamp(-ctx.delta, ctx.delta);
            p.err_clipped += wrong(*cl);
        }
    }
    if !CLIP {
        p.err_clipped = p.err;
    }
    p
}

/// Lanes of [`finish_plain`]'s groups: an AVX2 vector of `f64` ([`finish_groups_avx2`]).
const FINISH_LANES: usize = 4;
const _: () = assert!(FINISH_LANES == 4);

/// [`finish_plain`]'s running range, zero count and rows to redo, lane by lane.
struct FinishLanes {
    lo: [f64; FINISH_LANES],
    hi: [f64; FINISH_LANES],
    zeros: [f64; FINISH_LANES],
    redo: [bool; FINISH_LANES],
}

/// One group of [`finish_plain`]: the first `m` lanes are rows (all of them but in a
/// chunk's last group).
#[inline(always)]
fn finish_lanes(
    (q, qs, st, y): (&mut [f64; FINISH_LANES], &mut [f64; FINISH_LANES], &mut [f64; FINISH_LANES], &[i8; FINISH_LANES]),
    m: usize,
    (scale, scale_s, norm): (f64, f64, f64),
    acc: &mut FinishLanes,
) {
    for l in 0..FINISH_LANES {
        let (qv, qsv) = (q[l] * scale, qs[l] * scale_s);
        let sub = qv < f64::MIN_POSITIVE;
        // Not `qsv > 0 && finite`: recomputed afterwards, out of the range until then.
        let bad = !sub & !((qsv > 0.0) & (qsv.abs() < f64::INFINITY)) & (l < m);
        let qv = if sub { 0.0 } else { qv };
        let qsv = if sub { 0.0 } else { qsv };
        let v = qv * norm;
        st[l] = if y[l] > 0 { v } else { -v };
        // Padding lanes (NaN) never enter the range or the count.
        let co = if l < m { qv * qsv } else { f64::NAN };
        acc.lo[l] = if !bad & (co < acc.lo[l]) { co } else { acc.lo[l] };
        acc.hi[l] = if !bad & (co > acc.hi[l]) { co } else { acc.hi[l] };
        acc.zeros[l] += if !bad & (co == 0.0) { 1.0 } else { 0.0 };
        acc.redo[l] |= bad;
        q[l] = qv;
        qs[l] = qsv;
    }
}

/// The last pass of a round over one chunk in the common case — a tempered regime (`t ≠ 1`), the
/// next round's statistics written, no sample weights, no multiplicities — with the general
/// loop's per-row arithmetic (`TAdaBoost::finish_impl`): `q ← q/Z`, `q^(1−t) ← q^(1−t)/Z^(1−t)`,
/// subnormal weights to 0, the statistic `±q·norm`, and the co-density `q·q^(1−t)`'s range and
/// zero count. Rows go in groups of [`FINISH_LANES`] without branches ([`finish_lanes`], or
/// [`finish_groups_avx2`]); the rare rows whose cached `q^(1−t)` is not positive and finite get it
/// recomputed (`powf`) one by one afterwards, and only then enter the range. Minima, maxima and a
/// count do not depend on the order in which rows are visited, so the result is the general
/// loop's, bit for bit (`plain_finish_gives_the_general_bits` checks it).
pub(super) fn finish_plain(
    (q, qs, st): (&mut [f64], &mut [f64], &mut [f64]),
    y: &[i8],
    (scale, scale_s, s, norm): (f64, f64, f64, f64),
) -> FinishSums {
    finish_plain_with(true, (q, qs, st), y, (scale, scale_s, s, norm))
}

/// [`finish_plain`] with (`simd`) or without the AVX2 groups.
#[allow(unsafe_code)]
fn finish_plain_with(
    simd: bool,
    (q, qs, st): (&mut [f64], &mut [f64], &mut [f64]),
    y: &[i8],
    (scale, scale_s, s, norm): (f64, f64, f64, f64),
) -> FinishSums {
    const L: usize = FINISH_LANES;
    let n = q.len().min(qs.len()).min(st.len()).min(y.len());
    let (q, qs, st, y) = (&mut q[..n], &mut qs[..n], &mut st[..n], &y[..n]);
    let mut acc = FinishLanes { lo: [f64::INFINITY; L], hi: [0.0; L], zeros: [0.0; L], redo: [false; L] };
    let consts = (scale, scale_s, norm);
    let full = n - n % L;
    #[cfg(target_arch = "x86_64")]
    let simd = simd && crate::util::fastmath::avx2();
    #[cfg(not(target_arch = "x86_64"))]
    let simd = {
        let _ = simd;
        false
    };
    if simd {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU supports AVX2 (`is_x86_feature_detected!` in `avx2`), the only
        // requirement of calling a `#[target_feature(enable = "avx2")]` function.
        unsafe {
            finish_groups_avx2((&mut q[..full], &mut qs[..full], &mut st[..full]), &y[..full], consts, &mut acc)
        };
    } else {
        let groups = q[..full]
            .chunks_exact_mut(L)
            .zip(qs[..full].chunks_exact_mut(L))
            .zip(st[..full].chunks_exact_mut(L))
            .zip(y[..full].chunks_exact(L));
        for (((q, qs), st), y) in groups {
            let (Ok(q), Ok(qs), Ok(st), Ok(y)) = (q.try_into(), qs.try_into(), st.try_into(), y.try_into()) else {
                continue;
            };
            finish_lanes((q, qs, st, y), L, consts, &mut acc);
        }
    }
    // The last rows, padded to a group.
    let (mut qa, mut qsa, mut sa, mut ya) = ([0.0; L], [0.0; L], [0.0; L], [0i8; L]);
    fill4(&mut qa, &q[full..]);
    fill4(&mut qsa, &qs[full..]);
    for (d, &v) in ya.iter_mut().zip(&y[full..]) {
        *d = v;
    }
    finish_lanes((&mut qa, &mut qsa, &mut sa, &ya), n - full, consts, &mut acc);
    fill(&mut q[full..], &qa);
    fill(&mut qs[full..], &qsa);
    fill(&mut st[full..], &sa);
    let mut p = FinishSums::default();
    for l in 0..L {
        p.pmin = p.pmin.min(acc.lo[l]);
        p.pmax = p.pmax.max(acc.hi[l]);
        p.n_zero += acc.zeros[l];
    }
    if acc.redo.iter().any(|&r| r) {
        for (q, qs) in q.iter().zip(qs.iter_mut()) {
            let (flushed, cached) = (*q < f64::MIN_POSITIVE, *qs > 0.0 && qs.is_finite());
            if !(flushed || cached) {
                *qs = q.powf(s);
                let co = *q * *qs;
                p.pmin = p.pmin.min(co);
                p.pmax = p.pmax.max(co);
                if co == 0.0 {
                    p.n_zero += 1.0;
                }
            }
        }
    }
    p
}

/// [`finish_lanes`] over groups of four rows with AVX2 (the whole groups of the shortest of `q`,
/// `qs`, `st` and `y`): the same operations lane by lane — IEEE-exact products, ordered
/// comparisons false on NaN as Rust's, selects as blends and masks (`+0.0` where a subnormal
/// weight is flushed, as the literal) — hence the same bits and the same range.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn finish_groups_avx2(
    (q, qs, st): (&mut [f64], &mut [f64], &mut [f64]),
    y: &[i8],
    (scale, scale_s, norm): (f64, f64, f64),
    acc: &mut FinishLanes,
) {
    use std::arch::x86_64::*;
    let (vscale, vscale_s, vnorm) = (_mm256_set1_pd(scale), _mm256_set1_pd(scale_s), _mm256_set1_pd(norm));
    let (zero, one, inf) = (_mm256_setzero_pd(), _mm256_set1_pd(1.0), _mm256_set1_pd(f64::INFINITY));
    let min_pos = _mm256_set1_pd(f64::MIN_POSITIVE);
    let sign = _mm256_set1_pd(-0.0);
    let ones = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    let (mut lo, mut hi, mut zeros, mut redo) =
        (_mm256_set1_pd(f64::INFINITY), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd());
    let groups = q.chunks_exact_mut(4).zip(qs.chunks_exact_mut(4)).zip(st.chunks_exact_mut(4)).zip(y.chunks_exact(4));
    for (((q, qs), st), y) in groups {
        let (Ok(q), Ok(qs), Ok(st), Ok(y)) = (
            <&mut [f64; 4]>::try_from(q),
            <&mut [f64; 4]>::try_from(qs),
            <&mut [f64; 4]>::try_from(st),
            <&[i8; 4]>::try_from(y),
        ) else {
            continue;
        };
        let (qv, qsv) = (_mm256_mul_pd(load4(q), vscale), _mm256_mul_pd(load4(qs), vscale_s));
        let sub = _mm256_cmp_pd::<_CMP_LT_OQ>(qv, min_pos);
        let finite_pos = _mm256_and_pd(
            _mm256_cmp_pd::<_CMP_GT_OQ>(qsv, zero),
            _mm256_cmp_pd::<_CMP_LT_OQ>(_mm256_andnot_pd(sign, qsv), inf),
        );
        // bad = !sub & !finite_pos; ok = !bad.
        let bad = _mm256_andnot_pd(sub, _mm256_xor_pd(finite_pos, ones));
        let ok = _mm256_xor_pd(bad, ones);
        let (qv, qsv) = (_mm256_andnot_pd(sub, qv), _mm256_andnot_pd(sub, qsv));
        let v = _mm256_mul_pd(qv, vnorm);
        let yb = i32::from_le_bytes(y.map(|v| v as u8));
        let ypos = _mm256_castsi256_pd(_mm256_cmpgt_epi64(
            _mm256_cvtepi8_epi64(_mm_cvtsi32_si128(yb)),
            _mm256_setzero_si256(),
        ));
        let sv = _mm256_blendv_pd(_mm256_xor_pd(v, sign), v, ypos);
        let co = _mm256_mul_pd(qv, qsv);
        lo = _mm256_blendv_pd(lo, co, _mm256_and_pd(ok, _mm256_cmp_pd::<_CMP_LT_OQ>(co, lo)));
        hi = _mm256_blendv_pd(hi, co, _mm256_and_pd(ok, _mm256_cmp_pd::<_CMP_GT_OQ>(co, hi)));
        zeros = _mm256_add_pd(zeros, _mm256_and_pd(one, _mm256_and_pd(ok, _mm256_cmp_pd::<_CMP_EQ_OQ>(co, zero))));
        redo = _mm256_or_pd(redo, bad);
        (*q, *qs, *st) = (store4(qv), store4(qsv), store4(sv));
    }
    let (l4, h4, z4, r4) = (store4(lo), store4(hi), store4(zeros), store4(redo));
    for l in 0..FINISH_LANES {
        acc.lo[l] = if l4[l] < acc.lo[l] { l4[l] } else { acc.lo[l] };
        acc.hi[l] = if h4[l] > acc.hi[l] { h4[l] } else { acc.hi[l] };
        acc.zeros[l] += z4[l];
        acc.redo[l] |= r4[l].to_bits() != 0;
    }
}

/// The portable build of [`finish_plain`] (tests compare the two).
#[cfg(test)]
pub(super) fn finish_plain_scalar(
    rows: (&mut [f64], &mut [f64], &mut [f64]),
    y: &[i8],
    consts: (f64, f64, f64, f64),
) -> FinishSums {
    finish_plain_with(false, rows, y, consts)
}

/// Whether [`update_power_int_avx2`] can run the round's update: the integer-power kernel,
/// without sample weights or multiplicities, on a CPU with AVX2.
pub(super) fn update_power_int_applies<H: ?Sized>(kernel: u8, ctx: &UpdateCtx<'_, H>) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        kernel == KERNEL_POWER_INT && ctx.w.is_none() && ctx.c.is_none() && crate::util::fastmath::avx2()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (kernel, ctx);
        false
    }
}

/// [`update_chunk`] with `KERNEL_POWER_INT`, without sample weights or multiplicities (the common
/// case of t-AdaBoost at t = 0, ½, 0.8, …), four rows at a time with AVX2: each row's new weights,
/// scores and terms are computed without branches, by the same operations in the same order lane
/// by lane (IEEE-exact, ordered comparisons false on NaN as Rust's, selects as blends, the power
/// as [`powi_seq`]'s multiplications), and the chunk's sums then add the rows' terms one by one in
/// row order, as `update_chunk` does: the same bits (`power_int_update_gives_the_general_bits`
/// checks it, and that the last rows, padded to a group, do too). Call it where
/// [`update_power_int_applies`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
pub(super) fn update_power_int_avx2<const CLIP: bool, H: Outputs + ?Sized>(
    ctx: &UpdateCtx<'_, H>,
    base: usize,
    (q, qs): (&mut [f64], &mut [f64]),
    (scores, clipped): (&mut [f64], &mut [f64]),
) -> UpdateSums {
    use std::arch::x86_64::*;
    let n = q.len().min(qs.len()).min(scores.len()).min(if CLIP { clipped.len() } else { usize::MAX });
    let mut p = UpdateSums::default();
    let (zero, one, inf) = (_mm256_setzero_pd(), _mm256_set1_pd(1.0), _mm256_set1_pd(f64::INFINITY));
    let sign = _mm256_set1_pd(-0.0);
    let (vk, valpha, vdelta, vndelta) =
        (_mm256_set1_pd(ctx.k), _mm256_set1_pd(ctx.alpha), _mm256_set1_pd(ctx.delta), _mm256_set1_pd(-ctx.delta));
    let wi = ctx.uniform;
    let vwi = _mm256_set1_pd(wi);
    let comeback = if ctx.comeback { _mm256_castsi256_pd(_mm256_set1_epi64x(-1)) } else { zero };
    // Not-positive `q̃^(1−t)`: 0 for t < 1 or a zero weight, +∞ otherwise (as `update_chunk`).
    let s_pos = ctx.s > 0.0;
    let mut start = 0;
    while start < n {
        let m = (n - start).min(4);
        // The group's rows (padding lanes repeat harmless values and are never stored or summed).
        let (mut qa, mut qsa, mut sa, mut ca, mut ya, mut ha) =
            ([1.0; 4], [1.0; 4], [0.0; 4], [0.0; 4], [1.0; 4], [0.0; 4]);
        for l in 0..m {
            let i = start + l;
            ya[l] = f64::from(ctx.y[base + i]);
            ha[l] = ctx.h.at(base + i);
        }
        let rows = start..start + m;
        fill4(&mut qa, &q[rows.clone()]);
        fill4(&mut qsa, &qs[rows.clone()]);
        fill4(&mut sa, &scores[rows.clone()]);
        if CLIP {
            fill4(&mut ca, &clipped[rows.clone()]);
        }
        let (qv, qsv, yv, hv) = (load4(&qa), load4(&qsa), load4(&ya), load4(&ha));
        let live = _mm256_or_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(qv, zero), comeback);
        let qsn = _mm256_add_pd(qsv, _mm256_mul_pd(vk, _mm256_mul_pd(yv, hv)));
        let pos = _mm256_cmp_pd::<_CMP_GT_OQ>(qsn, zero);
        // powi_seq(qsn, n): the same multiplications, lane by lane.
        let mut acc = one;
        let mut b = qsn;
        let mut e = ctx.n_int;
        loop {
            if e & 1 == 1 {
                acc = _mm256_mul_pd(acc, b);
            }
            e >>= 1;
            if e == 0 {
                break;
            }
            b = _mm256_mul_pd(b, b);
        }
        let not_pos = if s_pos { zero } else { _mm256_andnot_pd(_mm256_cmp_pd::<_CMP_EQ_OQ>(qv, zero), inf) };
        let qn = _mm256_and_pd(live, _mm256_blendv_pd(not_pos, acc, pos));
        let qsn = _mm256_and_pd(_mm256_and_pd(live, pos), qsn);
        let qs_new = _mm256_andnot_pd(_mm256_cmp_pd::<_CMP_EQ_OQ>(qn, zero), qsn);
        let step = _mm256_mul_pd(valpha, hv);
        let score = _mm256_add_pd(load4(&sa), step);
        let ypos = _mm256_cmp_pd::<_CMP_GT_OQ>(yv, zero);
        let err = wrong4(score, ypos, vwi);
        let (mut up, mut down, mut cl, mut errc) = (zero, zero, zero, zero);
        if CLIP {
            let unclipped = _mm256_add_pd(load4(&ca), step);
            let w_pos = if wi > 0.0 { _mm256_castsi256_pd(_mm256_set1_epi64x(-1)) } else { zero };
            let above = _mm256_and_pd(w_pos, _mm256_cmp_pd::<_CMP_GT_OQ>(unclipped, vdelta));
            let below = _mm256_andnot_pd(above, _mm256_and_pd(w_pos, _mm256_cmp_pd::<_CMP_LT_OQ>(unclipped, vndelta)));
            up = _mm256_and_pd(above, one);
            down = _mm256_and_pd(below, one);
            // f64::clamp: below −δ → −δ, then above δ → δ; NaN stays.
            let c = _mm256_blendv_pd(unclipped, vndelta, _mm256_cmp_pd::<_CMP_LT_OQ>(unclipped, vndelta));
            cl = _mm256_blendv_pd(c, vdelta, _mm256_cmp_pd::<_CMP_GT_OQ>(c, vdelta));
            errc = wrong4(cl, ypos, vwi);
        }
        let is_inf = _mm256_cmp_pd::<_CMP_EQ_OQ>(_mm256_andnot_pd(sign, qn), inf);
        let term = _mm256_mul_pd(qn, qs_new);
        let (qn, qs_new, score, cl, term) = (store4(qn), store4(qs_new), store4(score), store4(cl), store4(term));
        let (is_inf, err, errc, up, down) = (store4(is_inf), store4(err), store4(errc), store4(up), store4(down));
        fill(&mut q[rows.clone()], &qn);
        fill(&mut qs[rows.clone()], &qs_new);
        fill(&mut scores[rows.clone()], &score);
        if CLIP {
            fill(&mut clipped[rows], &cl);
        }
        // The sums, row by row in row order (`update_chunk`'s additions, multiplicity 1).
        for l in 0..m {
            if is_inf[l].to_bits() != 0 {
                p.n_inf += 1;
                p.inf_weight += 1.0;
            } else {
                p.sum += term[l];
                p.qsum += qn[l];
                p.qmax = p.qmax.max(qn[l]);
            }
            p.err += err[l];
            if CLIP {
                p.clip_upper += up[l];
                p.clip_lower += down[l];
                p.err_clipped += errc[l];
            }
        }
        start += m;
    }
    if !CLIP {
        p.err_clipped = p.err;
    }
    p
}

/// The four `f64` of `a` as a vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
#[inline]
fn load4(a: &[f64; 4]) -> std::arch::x86_64::__m256d {
    // SAFETY: `a` is an array of four `f64`.
    unsafe { std::arch::x86_64::_mm256_loadu_pd(a.as_ptr()) }
}

/// The four lanes of `v` as an array.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
#[inline]
fn store4(v: std::arch::x86_64::__m256d) -> [f64; 4] {
    let mut a = [0.0; 4];
    // SAFETY: `a` is an array of four `f64`.
    unsafe { std::arch::x86_64::_mm256_storeu_pd(a.as_mut_ptr(), v) };
    a
}

/// `update_chunk`'s `wrong(x)` on four lanes: the weight `w` where `(x > 0) ≠ (y > 0)`
/// (`ypos`: the lanes with `y > 0`), else `+0`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn wrong4(
    x: std::arch::x86_64::__m256d,
    ypos: std::arch::x86_64::__m256d,
    w: std::arch::x86_64::__m256d,
) -> std::arch::x86_64::__m256d {
    use std::arch::x86_64::*;
    _mm256_and_pd(w, _mm256_xor_pd(_mm256_cmp_pd::<_CMP_GT_OQ>(x, _mm256_setzero_pd()), ypos))
}

/// The first `dst.len()` (at most four) values of `src` into `dst`: a fixed-size copy for a
/// whole group (a slice copy of a run-time length would call `memcpy`).
#[inline(always)]
fn fill(dst: &mut [f64], src: &[f64; 4]) {
    if let Ok(d) = <&mut [f64; 4]>::try_from(&mut *dst) {
        *d = *src;
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    }
}

/// `src` (at most four values) into the first lanes of `dst`, the others left as they are
/// ([`fill`]'s converse).
#[inline(always)]
fn fill4(dst: &mut [f64; 4], src: &[f64]) {
    if let Ok(s) = <&[f64; 4]>::try_from(src) {
        *dst = *s;
    } else {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    }
}
