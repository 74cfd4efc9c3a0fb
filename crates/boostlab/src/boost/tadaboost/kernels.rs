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
