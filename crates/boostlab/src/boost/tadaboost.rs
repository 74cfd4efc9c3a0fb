//! t-AdaBoost (Nock, Amid, Warmuth 2023; SPEC §5): AdaBoost with tempered exponential measures.
//!
//! The booster keeps tempered weights `q` on the co-simplex (`Σ q^(2−t) = 1`) and, each round,
//! turns the tree's outputs into the edge `ρ`, the weight leverage `µ`, the model leverage `α` and
//! the tempered update `q ← exp_t(log_t q − µu)/Z`. At `t = 1` it is AdaBoost with the α of SPEC
//! §4.2(a) applied to `h/R`.
//!
//! Numerics. All per-example quantities are expressed relative to `R`: `a_i = u_i/(R q_i^(1−t))`
//! lies in `[−1, 1]` and the update is `q_i (1 − (1−t) ν a_i)^(1/(1−t))` with `ν = µR`, evaluated as
//! `q_i exp(ln_1p(x)/(1−t))`; `ν = tanh((1−t) atanh ρ)/(1−t)` is the closed form of SPEC §5's
//! `−log_t((1−ρ)/M_{1−t}(1−ρ, 1+ρ))` (see `tempered::link_optimal`), finite at `ρ = ±1` for every
//! `t ≠ 1` and continuous at `t = 1`. `Π Z` is kept as a logarithm.
//!
//! Cost per round (issue 8). Beside `q` the booster keeps `q^(1−t)`, updated by SPEC §5's own
//! recurrence `q̃^(1−t) = q^(1−t) − (1−t)µu` and scaled by `Z^(−(1−t))`, so that `R`, the
//! co-densities `q^(2−t) = q · q^(1−t)` and `Z` need no `pow` per example: one transcendental
//! call per example and round remains (`q̃ = (q̃^(1−t))^(1/(1−t))`, or the `ln_1p`/`exp` form near
//! `t = 1` and when `|ρ| ≈ 1`). The per-example passes — the edge, the update with the models and
//! training errors (issue 18, session 8: they were the last pass's), the normalisation writing the
//! next statistics — read each row's leaf and the leaf values rather than a written `h`
//! ([`Booster::step_on_leaves`]), and run in parallel over fixed chunks of examples whose partial
//! sums are added in chunk order, so results do not depend on the number of threads. Three passes
//! are the fewest that keep the weights' bits: `µ` needs the edge's sums over every example before
//! any weight moves, and the learner's `d = q/Σq` needs `Z` (a sum over the updated weights)
//! before its first value. The update overwrites the weights and models in place unless a weight
//! may overflow (then it works on copies, so that a failed round leaves the booster unchanged).
//!
//! Two consequences of SPEC §5's `R_j = max |u|/q^(1−t)`, verified by the tests: `|ν| ≤ 1/|1−t|`
//! implies `q^(1−t) − (1−t)µu ≥ 0` for every weight in `R`'s maximum, so (in exact arithmetic)
//! a weight switches off (`t < 1`) or overflows (`t > 1`) only when `|ρ| = 1` exactly. Overflow
//! therefore happens only when `ρ` rounds to ±1 while an example of negligible weight is maximally
//! wrong; it is still detected before use and handled by [`OverflowPolicy`].

use rayon::prelude::*;

use super::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::fastmath::{powi_seq, snapped_int_exponent};
use crate::tempered::{co_simplex_normalize, is_one, t_star, update_factor};
use crate::tree::{Criterion, LeafRule};

pub use crate::params::tadaboost::{LearnerWeights, OverflowPolicy, TAdaBoostParams, TSchedule};

/// At `t = 1`, a round whose weighted error `ε = (1 − |ρ|)/2` is below this is a perfect (or
/// perfectly wrong) weak hypothesis: boosting keeps it with `ε` clamped here and stops.
pub const PERFECT_EPS: f64 = 1e-10;

/// Temperature regime, chosen once so the per-example loops do not branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Regime {
    /// `t < 1`: weights may switch off and back on; clipped model with `δ = 1/(1−t)`.
    Below,
    /// `t = 1`: AdaBoost.
    One,
    /// `t > 1`: zero weights stay zero; weights may overflow.
    Above,
}

/// Rows per chunk of the per-example passes. Partial sums are taken per chunk and added in chunk
/// order, so every result is the same for any number of threads (issue 8).
const CHUNK: usize = 1 << 13;

/// Up to this bound on `(2−t)·ln q̃` no update can overflow (`Σ q̃^(2−t)` over up to `e^100`
/// examples stays below `f64::MAX ≈ e^709`), so the update may overwrite the weights in place.
const IN_PLACE_LN_BOUND: f64 = 600.0;

/// The power kernel of the update is used for `|1 − t|` at least this (its relative error grows
/// like `ε/|1 − t|`).
const POWER_KERNEL_MIN_S: f64 = 0.05;

/// Below this, `Σ q̃^(2−t)` summed directly may have lost terms to underflow: [`co_simplex_normalize`]
/// (relative to the largest weight) is used instead.
const MIN_DIRECT_SUM: f64 = 1e-200;

/// t-AdaBoost's side of the boosting loop (SPEC §5). Binary labels only.
///
/// Sample weights are frequency weights (issue 14): example `i` stands for `wᵢ` copies of itself,
/// each with the tempered weight `qᵢ`, so every sum over examples of SPEC §5 is a sum over the
/// copies, `Σᵢ cᵢ (...)ᵢ` with multiplicity `cᵢ ∝ wᵢ` (the co-simplex `Σ cᵢ qᵢ^(2−t) = 1`, `ρ`,
/// `m†`, `Z`, the learner's `d ∝ c q`), and `m = Σ wᵢ` in `q_1 = m^(−t*)` and in
/// `α = m^(1−t*) (Π Z)^(1−t) µ`. Integer weights therefore give the model of the repeated rows.
/// The booster keeps `cᵢ = wᵢ n/Σw` (mean 1) and `m = n`: scaling every multiplicity and `m` by
/// `λ` scales `q` by `λ^(−t*)`, `µ` by `λ^(−(1−t*))` and leaves `α`, `Z`, `ρ` and the trees as they
/// are (`1 − t* = t*(1 − t)`), and mean-1 multiplicities keep `q_1 = n^(−t*)` as representable as
/// without weights, whatever the scale of the weights. Examples with sample weight 0 keep weight
/// 0 and never switch back on. The training error reported (and bounded by `Π Z^(2−t)`) is
/// weighted by the sample weights.
///
/// Per example it keeps the label, `q`, `q^(1−t)`, the score and the clipped score (33 bytes; the
/// sample weights only when given). When every weight switches off (`Z = 0`, `t < 1`), the
/// weights are left at 0.
#[derive(Debug, Clone)]
pub struct TAdaBoost {
    params: TAdaBoostParams,
    /// Effective temperature (exactly 1 when `is_one(params.t)`).
    t: f64,
    regime: Regime,
    /// The labels `±1` as one byte each (issue 18, session 8: every pass reads them; `f64::from`
    /// gives the same `±1.0` the arithmetic used before).
    y: Vec<i8>,
    /// Sample weights normalised to sum 1 (for the training errors); `None` when uniform (`1/n`).
    w: Option<Vec<f64>>,
    /// Multiplicities `cᵢ = wᵢ n/Σw` (see the type's doc); `None` without sample weights (all 1).
    c: Option<Vec<f64>>,
    /// `Σw/n`: a sum of multiplicities times this is a sum of sample weights (diagnostics).
    c_unit: f64,
    /// An upper bound of `ln q` (every `cᵢ qᵢ^(2−t) ≤ 1`): `−t* ln min c` with multiplicities below
    /// 1, else 0.
    ln_q_cap: f64,
    /// `m` of SPEC §5 in the multiplicities' unit: the number of examples `n` (see the type's doc).
    m: f64,
    q: Vec<f64>,
    /// `q^(1−t)`, kept in step with `q` by the update itself (`q̃^(1−t) = q^(1−t)(1 + x)`), so that
    /// no example needs a `pow` per round; 0 exactly where `q` is 0. Empty at `t = 1`.
    qs: Vec<f64>,
    ln_prod_z: f64,
    scores: Vec<f64>,
    /// Clipped scores; empty for `t ≥ 1` (where they equal `scores`).
    clipped: Vec<f64>,
    delta: Option<f64>,
    /// Learning rate ν (issue 15).
    lr: f64,
    /// Issue 13: the ranks' collective (local by default), and with several ranks the learner's
    /// normaliser `Σ q` (`Σ c q`) over every rank, updated at the end of each round.
    coll: Shared,
    dist_q_sum: Option<f64>,
    /// On one machine, the learner's normaliser `Σ c q` of the current weights (issue 18): summed
    /// in fixed chunks, or after a normal round `Z⁻¹ Σ c q̃` from the update's pass (equal up to
    /// rounding), so that the last pass of a round can write the next statistics.
    q_sum: f64,
    /// The schedule of t (issue 16), its length in rounds, and the number of rounds stepped.
    schedule: Option<TSchedule>,
    sched_len: usize,
    round: usize,
    /// `ln min cᵢ` over the positive multiplicities (0 without sample weights): `ln_q_cap` at any t.
    ln_c_min: f64,
}

/// Per-round quantities computed before the update.
struct Edge {
    /// `max |u|` over the weights in `R`'s maximum (`R = umax · r_rel`).
    umax: f64,
    /// `max |u|/(umax q^(1−t))` over the same weights.
    r_rel: f64,
    rho: f64,
    /// `m†`: the number (total multiplicity) of switched-off weights.
    m_dag: f64,
    q_dag: f64,
    /// `max |u|/R` over the switched-off weights.
    v_dag_max: f64,
    /// Rounding tolerance of ρ: 4 · (number of terms) · machine epsilon.
    rho_tol: f64,
}

/// Partial sums of the edge over one chunk, unscaled (`raw = u/q^(1−t)`, [`raw_ratio`]): one pass
/// finds `umax` and these (issue 18); the edge scales them by `1/umax` afterwards.
struct EdgeSums {
    /// `max |h|` over the positive weights.
    umax: f64,
    /// First row whose tree output is not finite (`usize::MAX`: none).
    bad_row: usize,
    /// `max |raw|` over the positive weights.
    ratio_max: f64,
    /// `Σ raw · q^(2−t)` over the positive weights.
    num: f64,
    /// Number (total multiplicity) of the terms of `num` and of the switched-off weights.
    n_terms: f64,
    m_dag: f64,
    /// `max |u|` and `Σ u` over the switched-off weights.
    off_max: f64,
    off_sum: f64,
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
struct UpdateSums {
    /// `Σ q̃^(2−t)` over the finite `q̃`.
    sum: f64,
    /// `Σ c q̃` over the finite `q̃` (the next learner normaliser, times `Z`).
    qsum: f64,
    qmax: f64,
    n_inf: usize,
    /// Total multiplicity of the infinite `q̃` (`n_inf` without sample weights).
    inf_weight: f64,
    /// The models' moves of the same pass (issue 18, session 8): the weighted training errors of
    /// the linear and the clipped model and the clip events (see [`FinishSums`]).
    err: f64,
    err_clipped: f64,
    clip_upper: f64,
    clip_lower: f64,
}

/// Partial results of the last pass of a round over one chunk.
struct FinishSums {
    /// Minimum and maximum co-density and number of zero weights (positive sample weight only).
    pmin: f64,
    pmax: f64,
    n_zero: f64,
    /// Weighted training errors of the linear and the clipped model.
    err: f64,
    err_clipped: f64,
    /// Clip events of this round (issue 16, SPEC §5): examples whose clipped partial score left
    /// `[−δ, δ]` and was clipped, above (`+δ`) and below (`−δ`), counted with multiplicities.
    clip_upper: f64,
    clip_lower: f64,
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
fn mult(c: Option<&[f64]>, i: usize) -> f64 {
    c.map_or(1.0, |c| c[i])
}

/// Whether example `i` has positive sample weight.
#[inline]
fn active(w: Option<&[f64]>, i: usize) -> bool {
    w.is_none_or(|w| w[i] > 0.0)
}

/// `u/(umax q^(1−t))` (with `qs = q^(1−t)`; 1 at `t = 1`): the one expression shared by the edge
/// and the update, so that `|ratio| ≤ max |ratio|` holds exactly. It is [`raw_ratio`] times
/// `1/umax`, so that the edge can take the maximum of the raw ratios in the pass that finds `umax`
/// (issue 18) and scale it afterwards: multiplying by the same positive number is monotone, so
/// `max |ratio| = max |raw ratio| · (1/umax)` exactly.
#[inline]
fn ratio<const TEMPERED: bool>(yi: f64, hi: f64, inv_umax: f64, qs: f64) -> f64 {
    raw_ratio::<TEMPERED>(yi, hi, qs) * inv_umax
}

/// `u/q^(1−t)` (`u` at `t = 1`).
#[inline]
fn raw_ratio<const TEMPERED: bool>(yi: f64, hi: f64, qs: f64) -> f64 {
    let v = yi * hi;
    if TEMPERED {
        v / qs
    } else {
        v
    }
}

/// The tree's outputs on the training rows (issue 18): a dense `h` ([`Booster::step`]), or each
/// row's leaf and the leaves' values ([`Booster::step_on_leaves`]: no `h` written by the driver and
/// read back by every pass).
trait Outputs: Sync {
    /// The output of row `i`.
    fn at(&self, i: usize) -> f64;
}

impl Outputs for [f64] {
    #[inline(always)]
    fn at(&self, i: usize) -> f64 {
        self[i]
    }
}

/// A tree's outputs: `values[of_row[i]]`.
struct Leaves<'a> {
    of_row: &'a [u32],
    values: &'a [f64],
}

impl Outputs for Leaves<'_> {
    #[inline(always)]
    fn at(&self, i: usize) -> f64 {
        // A leaf index out of range (not produced by the tree learner) reads as NaN: the edge's
        // finiteness check reports it as a bad tree output of that row instead of panicking.
        self.values.get(self.of_row[i] as usize).copied().unwrap_or(f64::NAN)
    }
}

/// `v` cut into `n_chunks` chunks of [`CHUNK`] elements, or `n_chunks` empty slices when `v` is
/// empty (a per-example vector the regime does not keep).
fn chunks_of(v: &mut [f64], n_chunks: usize) -> Vec<&mut [f64]> {
    if v.is_empty() {
        (0..n_chunks).map(|_| Default::default()).collect()
    } else {
        v.chunks_mut(CHUNK).collect()
    }
}

/// The update's inputs that do not depend on the example.
struct UpdateCtx<'a, H: ?Sized> {
    y: &'a [i8],
    h: &'a H,
    w: Option<&'a [f64]>,
    /// Multiplicities (`None`: all 1).
    c: Option<&'a [f64]>,
    s: f64,
    nu: f64,
    inv_umax: f64,
    r_rel: f64,
    /// `−(1−t)µ = −(1−t)ν/R` and `1/(1−t)` (power kernel).
    k: f64,
    inv_s: f64,
    /// `1/(1−t)` snapped to an integer (issue 18, [`snapped_int_exponent`]) for `KERNEL_POWER_INT`;
    /// 0 otherwise.
    n_int: u32,
    /// `t < 1` and some active weights are 0: they may come back.
    comeback: bool,
    /// The models' step (SPEC §5: `H += α h`, `S = clip_[−δ, δ](S + α h)`), `δ = +∞` without a
    /// clipped model, and the uniform weight `1/m` of the training errors without sample weights.
    alpha: f64,
    delta: f64,
    uniform: f64,
}

/// Kernels of the update, chosen once per round (see [`update_chunk`]).
const KERNEL_ONE: u8 = 0;
const KERNEL_RELATIVE: u8 = 1;
const KERNEL_POWER: u8 = 2;
const KERNEL_POWER_INT: u8 = 3;

/// Overwrites one chunk (starting at example `base`) of `q` and `q^(1−t)` with the un-normalised
/// update (SPEC §5), with kernel `K`:
/// - `KERNEL_ONE` (t = 1): `q̃ = q exp(−ν a)`;
/// - `KERNEL_RELATIVE`: `q̃ = q (1 + x)^(1/(1−t))` as `q exp(ln_1p(x)/(1−t))`, accurate as `t → 1`;
/// - `KERNEL_POWER`: SPEC §5's `q̃^(1−t) = q^(1−t) − (1−t)µu` and `q̃ = (q̃^(1−t))^(1/(1−t))`, one
///   `pow` and no division per example, used when `|1−t| ≥ 0.05` (relative error `≲ ε/|1−t|`);
/// - `KERNEL_POWER_INT` (issue 18): `KERNEL_POWER` when `1/(1−t)` is an integer `n ≤ 16` up to the
///   rounding of `t` (t = 0, ½, ¾, 0.8, …): the power is [`powi_seq`]'s `n − 1` multiplications or
///   fewer instead of a `pow` (relative error `≤ (n−1)·2^−53`; a deliberate change of the weights'
///   last bits against `powf(x, 1/(1−t))`, see `crate::fastmath`).
///
/// The same pass moves the models (issue 18, session 8; they were the last pass's): `H += α h`
/// and, with `CLIP`, `S = clip_[−δ, δ](S + α h)`, with the training errors and clip events of the
/// moved models — the same per-row arithmetic in the same order as before, so the same bits.
fn update_chunk<const K: u8, const CLIP: bool, H: Outputs + ?Sized>(
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
                // SPEC §5 at t = 1: q̃ = q exp(−µu) = q exp(−ν a), a = u/R.
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
                    // SPEC §5: q̃ = [q^(1−t) − (1−t)µu]_+^(1/(1−t)) (q^(1−t) = 0 for a switched-off
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
                // SPEC §5: q̃ = [q^(1−t) − (1−t)µu]_+^(1/(1−t)) = q (1 + x)^(1/(1−t)),
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
                // SPEC §5: Z^(2−t) = Σ q̃^(2−t), each example counted with its multiplicity.
                p.sum += qn * *qsv * mult(ctx.c, g);
                p.qsum += qn * mult(ctx.c, g);
                p.qmax = p.qmax.max(qn);
            }
        }
        // The models: H += α h; S = clip_[−δ, δ](S + α h) (SPEC §5). A score of exactly 0
        // predicts the negative class (SPEC §5).
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

impl TAdaBoost {
    /// Builds the booster for binary labels (`labels.k == 1`, `y ∈ {−1, +1}`).
    pub fn new(params: &TAdaBoostParams, labels: Labels) -> Result<Self> {
        Self::new_on(params, labels, &Shared::default())
    }

    /// [`TAdaBoost::new`] for this rank's examples of the ranks of `coll` (issue 13): `m`, the
    /// sample weights' total and smallest multiplicity, and the initial normalisation are over
    /// every rank (one call each; nothing is reduced on one machine).
    pub(crate) fn new_on(params: &TAdaBoostParams, labels: Labels, coll: &Shared) -> Result<Self> {
        let dist = coll.is_distributed();
        params.check()?;
        if labels.k != 1 {
            return Err(Error::InvalidData(format!(
                "t-AdaBoost needs binary labels (one label column), got {}",
                labels.k
            )));
        }
        let n_local = labels.n;
        // Issue 13: `n` is the number of examples of every rank (this rank has `n_local`).
        let (n, sw_global) = if dist { coll.totals(n_local, labels.sample_weight)? } else { (n_local, 0.0) };
        if n == 0 {
            return Err(Error::InvalidData("no training examples".into()));
        }
        if labels.y.len() != n_local {
            return Err(Error::InvalidData(format!("{n} examples but {} labels", labels.y.len())));
        }
        if let Some(v) = labels.y.iter().find(|&&v| v != 1.0 && v != -1.0) {
            return Err(Error::InvalidData(format!("label {v} is not −1 or +1")));
        }
        let mut sw_total = n as f64;
        let w: Option<Vec<f64>> = match labels.sample_weight {
            None => None,
            Some(sw) => {
                if sw.len() != n_local {
                    return Err(Error::InvalidData(format!("{n_local} examples but {} sample weights", sw.len())));
                }
                if let Some(v) = sw.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                    return Err(Error::InvalidData(format!("sample weight {v} is not a finite number ≥ 0")));
                }
                let total: f64 = if dist { sw_global } else { sw.iter().sum() };
                if !(total > 0.0 && total.is_finite()) {
                    return Err(Error::InvalidData(format!("sample weights sum to {total}")));
                }
                sw_total = total;
                Some(sw.iter().map(|v| v / total).collect())
            }
        };
        // Multiplicities c = w n/Σw and m = n: the frequency weights of the type's doc.
        let c: Option<Vec<f64>> = w.as_ref().map(|w| w.iter().map(|v| v * n as f64).collect());
        let m = n as f64;
        let mut c_min = c.as_ref().map_or(1.0, |c| c.iter().copied().filter(|&v| v > 0.0).fold(1.0f64, f64::min));
        if dist {
            c_min = -coll.max(-c_min)?;
        }
        let ln_c_min = c_min.ln();
        // Issue 16: a schedule starts at its first temperature.
        let t_given = params.t_schedule.map_or(params.t, |sch| sch.start());
        let ln_q_cap = ln_q_cap_at(t_given, ln_c_min);

        let t = if is_one(t_given) { 1.0 } else { t_given };
        let regime = if t == 1.0 {
            Regime::One
        } else if t < 1.0 {
            Regime::Below
        } else {
            Regime::Above
        };
        // SPEC §5: q_1 = m^(−t*) (co-density 1/m) for every copy of an example; an example of
        // sample weight 0 has no copy (weight 0).
        let ts = t_star(t);
        let q1 = (1.0 / n as f64).powf(ts);
        let mut q: Vec<f64> = match &w {
            None => vec![q1; n_local],
            Some(w) => w.iter().map(|&v| if v > 0.0 { q1 } else { 0.0 }).collect(),
        };
        let z = if dist {
            co_simplex_normalize_on(&mut q, c.as_deref(), t, coll)?
        } else {
            co_simplex_normalize_mult(&mut q, c.as_deref(), t)
        };
        if !(z > 0.0 && z.is_finite()) {
            return Err(Error::Numerical(format!("initial weights cannot be normalised (Z = {z})")));
        }
        flush_subnormals(&mut q);
        // Issue 16: with a schedule, the clipped model is that of its last temperature.
        let t_clip = params.t_schedule.map_or(t, |sch| if is_one(sch.end()) { 1.0 } else { sch.end() });
        let delta = (t_clip < 1.0).then(|| 1.0 / (1.0 - t_clip));
        let mut b = TAdaBoost {
            params: params.clone(),
            t,
            regime,
            y: labels.y.iter().map(|&v| if v > 0.0 { 1 } else { -1 }).collect(),
            w,
            c,
            ln_q_cap,
            c_unit: sw_total / n as f64,
            m,
            q,
            qs: Vec::new(),
            ln_prod_z: 0.0,
            scores: vec![0.0; n_local],
            clipped: if delta.is_some() { vec![0.0; n_local] } else { Vec::new() },
            delta,
            lr: 1.0,
            coll: coll.clone(),
            dist_q_sum: None,
            q_sum: 0.0,
            schedule: params.t_schedule,
            sched_len: 0,
            round: 0,
            ln_c_min,
        };
        b.resync_powers();
        b.q_sum = b.local_q_sum();
        b.sync_q_sum(None)?;
        Ok(b)
    }

    /// With several ranks, the learner's normaliser `Σ q` (`Σ c q`) over every rank (issue 13):
    /// the sum of the ranks' kept `q_sum` (every caller has just refreshed it);
    /// `extra` = sums to reduce in the same call (the round's last sums), returned reduced.
    fn sync_q_sum(&mut self, extra: Option<&mut [f64]>) -> Result<()> {
        if !self.coll.is_distributed() || self.params.learner_weights == LearnerWeights::CoDensity {
            if let Some(x) = extra {
                self.coll.sum(x)?;
            }
            return Ok(());
        }
        let mut buf: Vec<f64> = extra.as_deref().map_or(Vec::new(), <[f64]>::to_vec);
        buf.push(self.q_sum);
        self.coll.sum(&mut buf)?;
        self.dist_q_sum = buf.pop();
        if let Some(x) = extra {
            x.copy_from_slice(&buf);
        }
        Ok(())
    }

    /// `Σ c q` over this rank's examples in fixed chunks combined in order (the same bits at any
    /// thread count).
    fn local_q_sum(&self) -> f64 {
        let (q, c) = (&self.q[..], self.c.as_deref());
        crate::par::map_chunks_of(q.len(), CHUNK, |rows| rows.map(|i| q[i] * mult(c, i)).sum::<f64>()).into_iter().sum()
    }

    /// Recomputes `q^(1−t)` from `q` (at construction, and where the update's recurrence does
    /// not apply).
    fn resync_powers(&mut self) {
        if self.regime == Regime::One {
            self.qs = Vec::new();
            return;
        }
        let s = 1.0 - self.t;
        self.qs.resize(self.q.len(), 0.0);
        self.qs.par_chunks_mut(CHUNK).zip(self.q.par_chunks(CHUNK)).for_each(|(qsc, qc)| {
            for (qs, &q) in qsc.iter_mut().zip(qc) {
                *qs = if q > 0.0 { q.powf(s) } else { 0.0 };
            }
        });
    }

    /// The tempered weights `q` (on the co-simplex: `Σ q^(2−t) = 1`; with sample weights, each
    /// example's `q` is that of one of its copies and `Σ cᵢ qᵢ^(2−t) = 1`, `cᵢ = wᵢ n/Σw`).
    pub fn weights(&self) -> &[f64] {
        &self.q
    }

    /// The clipping bound `δ = 1/(1−t)` of the clipped model for `t < 1`; `None` for `t ≥ 1`.
    /// With a schedule (issue 16), `t` is the schedule's last temperature `T1`, for every round:
    /// the finished model is boosted last at `T1`, and `δ_{T1}` is where the `T1`-tempered
    /// exponential loss `exp_t(−z)` reaches 0, so that clipping at it loses no training signal of
    /// the last rounds' loss (clipping round j at its own `δ_j` would change the clipped model's
    /// meaning from round to round, and a model file keeps one clipping level).
    pub fn clip_delta(&self) -> Option<f64> {
        self.delta
    }

    /// Fixes the length of the schedule's ramp when the schedule does not give one: the fit's
    /// number of rounds (the driver calls it once, before the first step).
    pub fn set_schedule_rounds(&mut self, n_estimators: usize) {
        self.sched_len = n_estimators;
    }

    /// Moves the booster to temperature `t_new` between two rounds (issue 16, `t_schedule`),
    /// keeping the co-density fixed.
    ///
    /// Rule: `p = q^(2−t)` is kept and `q` is re-expressed on the new co-simplex,
    /// `q'ᵢ = pᵢ^(1/(2−t'))`, then renormalised by `Z' = (Σ cᵢ q'ᵢ^(2−t'))^(1/(2−t'))` (1 up to
    /// rounding, since `Σ cᵢ pᵢ = 1`); the log normaliser product becomes
    /// `ln Π Z ← ln Π Z · (2−t)/(2−t')`.
    ///
    /// Derivation. At a fixed t the normalised weights are `q = Q/Λ` with `Λ = m^(t*) Π Z` and
    /// unnormalised weights `Q = exp_t(−yH)` (each `Q` starts at 1; SPEC §5, Lemma E), and
    /// `α = Λ^(1−t) µ` (`Λ^(1−t) = m^(1−t*)(Π Z)^(1−t)`, since `t*(1−t) = 1 − t*`) is the step `µ` on
    /// `q` expressed on `Q`'s scale. Keeping every example's unnormalised co-density `Q^(2−t)`
    /// fixed gives `Q' = Q^((2−t)/(2−t'))`; its normalised form is `q' = Q'/Λ'` with
    /// `Λ' = Λ^((2−t)/(2−t'))`, i.e. exactly `q' = p^(1/(2−t'))` (because
    /// `m^(t'*)·m^(−t*(2−t)/(2−t')) = 1`) and `Π Z' = (Π Z)^((2−t)/(2−t'))`. So the co-density `p`,
    /// the total unnormalised co-density mass `m (Π Z)^(2−t)` (hence the reported bound
    /// `Π Z^(2−t)`) and which examples are off (`p = 0`) are all unchanged, and the next rounds are
    /// those of a fixed-`t'` booster started from the weights `Q'`: its `α` keeps `Q'`'s scale.
    /// What is lost is SPEC §5's identity `Q = exp_t(−yH)` with the model's own margins (the
    /// carried `Q'` is `exp_t'` of another margin of the same sign), so the training-error bound
    /// `Π Z^(2−t)` is proved only for a constant t; it is still reported.
    pub fn retemper(&mut self, t_new: f64) {
        // One machine: the renormalisation takes no reduction and cannot fail.
        let normalize = |q: &mut [f64], c: Option<&[f64]>, t: f64| Ok(co_simplex_normalize_mult(q, c, t));
        let _infallible = self.retemper_with(t_new, normalize);
    }

    /// [`TAdaBoost::retemper`] on this rank's examples (issue 13): the renormaliser `Z'` sums
    /// over every rank's examples (two reductions), so every rank carries the same weights.
    fn retemper_on_ranks(&mut self, t_new: f64) -> Result<()> {
        let coll = self.coll.clone();
        self.retemper_with(t_new, |q, c, t| co_simplex_normalize_on(q, c, t, &coll))?;
        // The learner's normaliser Σq of the carried weights (one more reduction).
        self.sync_q_sum(None)
    }

    fn retemper_with(
        &mut self,
        t_new: f64,
        normalize: impl FnOnce(&mut [f64], Option<&[f64]>, f64) -> Result<f64>,
    ) -> Result<()> {
        let t_new = if is_one(t_new) { 1.0 } else { t_new };
        if t_new == self.t {
            return Ok(());
        }
        let ratio = (2.0 - self.t) / (2.0 - t_new);
        // q' = p^(1/(2−t')) = q^((2−t)/(2−t')); zero weights stay zero.
        self.q.par_chunks_mut(CHUNK).for_each(|qc| {
            for v in qc.iter_mut() {
                if *v > 0.0 {
                    *v = v.powf(ratio);
                }
            }
        });
        let z = normalize(&mut self.q, self.c.as_deref(), t_new)?;
        debug_assert!(z > 0.0 && z.is_finite(), "a carried co-density sums to {z}");
        flush_subnormals(&mut self.q);
        if self.ln_prod_z.is_finite() {
            self.ln_prod_z *= ratio;
        }
        self.t = t_new;
        self.regime = if t_new == 1.0 {
            Regime::One
        } else if t_new < 1.0 {
            Regime::Below
        } else {
            Regime::Above
        };
        self.ln_q_cap = ln_q_cap_at(t_new, self.ln_c_min);
        self.resync_powers();
        self.q_sum = self.local_q_sum();
        Ok(())
    }

    /// The effective temperature (exactly 1 when `|1 − t| < 1e−9`).
    pub fn t(&self) -> f64 {
        self.t
    }

    /// Training scores of the linear model `H = Σ α_j h_j` so far.
    pub fn scores(&self) -> &[f64] {
        &self.scores
    }

    /// Training scores of the clipped model (equal to [`TAdaBoost::scores`] for `t ≥ 1`).
    pub fn clipped_scores(&self) -> &[f64] {
        if self.delta.is_some() {
            &self.clipped
        } else {
            &self.scores
        }
    }

    /// The training-error bound `Π_j Z_j^(2−t)` so far (SPEC §5).
    pub fn bound(&self) -> f64 {
        ((2.0 - self.t) * self.ln_prod_z).exp()
    }

    /// `ρ`, `R` and the switched-off summary for edges `u = y·h` (SPEC §5). `None` when `h` is 0
    /// on all the weights in `R`'s maximum.
    fn edge<H: Outputs + ?Sized>(&self, h: &H) -> Result<Option<Edge>> {
        if self.regime == Regime::One {
            self.edge_impl::<false, H>(h)
        } else {
            self.edge_impl::<true, H>(h)
        }
    }

    fn edge_impl<const TEMPERED: bool, H: Outputs + ?Sized>(&self, h: &H) -> Result<Option<Edge>> {
        let n = self.q.len();
        let (q, qs, y, w, c) = (&self.q[..], &self.qs[..], &self.y[..], self.w.as_deref(), self.c.as_deref());
        let below = self.regime == Regime::Below;
        // One pass (issue 18): the tree outputs' finiteness, `umax` and the unscaled sums.
        let parts = crate::par::map_chunks_of(n, CHUNK, |rows| {
            let mut p = EdgeSums::default();
            for i in rows {
                let hi = h.at(i);
                if !hi.is_finite() {
                    p.bad_row = p.bad_row.min(i);
                }
                // SPEC §5: off_j = {i : q_ji = 0}; a positive q implies a positive sample weight.
                if q[i] > 0.0 {
                    p.umax = p.umax.max(hi.abs());
                    let (qsi, co) = if TEMPERED { (qs[i], q[i] * qs[i]) } else { (1.0, q[i]) };
                    let r = raw_ratio::<TEMPERED>(f64::from(y[i]), hi, qsi);
                    p.ratio_max = p.ratio_max.max(r.abs());
                    if r != 0.0 {
                        // q_i u_i / R = (ratio_i / r_rel) q_i^(2−t), with q^(2−t) = q · q^(1−t).
                        // Each example counts with its multiplicity (frequency weights).
                        p.num += r * co * mult(c, i);
                        p.n_terms += mult(c, i);
                    }
                } else if below && active(w, i) {
                    p.m_dag += mult(c, i);
                    let v = f64::from(y[i]) * hi;
                    p.off_max = p.off_max.max(v.abs());
                    p.off_sum += v * mult(c, i);
                }
            }
            p
        });
        let mut sums = parts.into_iter().fold(EdgeSums::default(), |acc, p| EdgeSums {
            umax: acc.umax.max(p.umax),
            bad_row: acc.bad_row.min(p.bad_row),
            ratio_max: acc.ratio_max.max(p.ratio_max),
            num: acc.num + p.num,
            n_terms: acc.n_terms + p.n_terms,
            m_dag: acc.m_dag + p.m_dag,
            off_max: acc.off_max.max(p.off_max),
            off_sum: acc.off_sum + p.off_sum,
        });
        if sums.bad_row != usize::MAX {
            let i = sums.bad_row;
            return Err(Error::Numerical(format!("tree output {} at row {i}", h.at(i))));
        }
        if self.coll.is_distributed() {
            // Issue 13: the edge's sums over every rank (one call). The unscaled sums of each rank
            // are scaled below by the global `umax`.
            let mut sum = [sums.num, sums.n_terms, sums.m_dag, sums.off_sum];
            let mut max = [sums.umax, sums.ratio_max, sums.off_max];
            self.coll.sum_max(&mut sum, &mut max)?;
            [sums.num, sums.n_terms, sums.m_dag, sums.off_sum] = sum;
            [sums.umax, sums.ratio_max, sums.off_max] = max;
        }
        let umax = sums.umax;
        if umax == 0.0 {
            return Ok(None);
        }
        let inv_umax = 1.0 / umax;
        // The ratios of the update are the raw ones times 1/umax (see `ratio`).
        sums.ratio_max *= inv_umax;
        sums.num *= inv_umax;
        sums.off_max *= inv_umax;
        sums.off_sum *= inv_umax;
        // SPEC §5: R_j = max_{i ∉ off} |u_i|/q_i^(1−t) = umax · r_rel; |u|/umax ≤ 1 and
        // q ≥ f64::MIN_POSITIVE keep every ratio finite for t ∈ [0, 2).
        let r_rel = sums.ratio_max;
        let (s, e) = (1.0 - self.t, 2.0 - self.t);
        let m_dag = sums.m_dag;
        let v_dag_max = sums.off_max / r_rel;
        // SPEC §5: q† = max_{off} (|u|/R)^(1/(1−t)); ρ = Σ q' u / ((1 + m† q†^(2−t)) R).
        let q_dag = if m_dag > 0.0 { v_dag_max.powf(1.0 / s) } else { 0.0 };
        let rho = (sums.num / r_rel + q_dag * (sums.off_sum / r_rel)) / (1.0 + m_dag * q_dag.powf(e));
        let rho_tol = 4.0 * (sums.n_terms + m_dag) * f64::EPSILON;
        Ok(Some(Edge { umax, r_rel, rho: rho.clamp(-1.0, 1.0), m_dag, q_dag, v_dag_max, rho_tol }))
    }

    /// An upper bound of `ln q̃` over the examples for leverage `nu = µR` (every `q ≤ 1` on the
    /// co-simplex, and `|x| ≤ |(1−t)ν|` since `|a| ≤ 1`); `+∞` when a weight may overflow.
    fn ln_growth_bound(&self, edge: &Edge, nu: f64) -> f64 {
        let s = 1.0 - self.t;
        let sn = (s * nu).abs();
        match self.regime {
            Regime::One => nu.abs(),
            Regime::Below => {
                let on = sn.ln_1p() / s;
                if edge.m_dag > 0.0 {
                    on.max((sn * edge.v_dag_max).ln() / s)
                } else {
                    on
                }
            }
            Regime::Above => {
                if sn < 1.0 {
                    (-sn).ln_1p() / s
                } else {
                    f64::INFINITY
                }
            }
        }
    }

    /// Overwrites `q` (and `q^(1−t)`) with the un-normalised update `q̃` for leverage `nu = µR`,
    /// and moves the models `scores` (`H`) and `clipped` (`S`) by `α h` in the same pass (issue
    /// 18, session 8).
    fn update<H: Outputs + ?Sized>(
        &self,
        h: &H,
        edge: &Edge,
        (nu, alpha): (f64, f64),
        (q, qs): (&mut [f64], &mut [f64]),
        (scores, clipped): (&mut [f64], &mut [f64]),
    ) -> Result<UpdateSums> {
        let s = 1.0 - self.t;
        let ctx = UpdateCtx {
            y: &self.y,
            h,
            w: self.w.as_deref(),
            c: self.c.as_deref(),
            s,
            nu,
            inv_umax: 1.0 / edge.umax,
            r_rel: edge.r_rel,
            k: -s * nu / (edge.umax * edge.r_rel),
            inv_s: 1.0 / s,
            n_int: if s > 0.0 { snapped_int_exponent(1.0 / s).unwrap_or(0) } else { 0 },
            comeback: self.regime == Regime::Below && edge.m_dag > 0.0,
            alpha,
            delta: self.delta.unwrap_or(f64::INFINITY),
            // `m` is the number of examples (of every rank, issue 13): 1/m is the uniform weight.
            uniform: 1.0 / self.m,
        };
        // The power kernel away from t = 1, unless a weight may (nearly) switch off or overflow
        // (|(1−t)ν| ≈ 1, i.e. ρ ≈ ±1), where the relative kernel keeps `|a| ≤ 1` exact.
        let kernel = if self.regime == Regime::One {
            KERNEL_ONE
        } else if s.abs() >= POWER_KERNEL_MIN_S && (s * nu).abs() <= 1.0 - 1e-6 {
            if ctx.n_int > 0 {
                KERNEL_POWER_INT
            } else {
                KERNEL_POWER
            }
        } else {
            KERNEL_RELATIVE
        };
        // The clipped model exists for t < 1, and with a schedule whose last t is below 1 (issue 16).
        let clip = self.delta.is_some();
        let n_chunks = q.len().div_ceil(CHUNK);
        let jobs: Vec<_> = q
            .chunks_mut(CHUNK)
            .zip(chunks_of(qs, n_chunks))
            .zip(scores.chunks_mut(CHUNK).zip(chunks_of(clipped, n_chunks)))
            .enumerate()
            .collect();
        let parts: Vec<UpdateSums> = jobs
            .into_par_iter()
            .map(|(c, (w, m))| {
                let base = c * CHUNK;
                match (kernel, clip) {
                    (KERNEL_ONE, true) => update_chunk::<KERNEL_ONE, true, H>(&ctx, base, w, m),
                    (KERNEL_ONE, false) => update_chunk::<KERNEL_ONE, false, H>(&ctx, base, w, m),
                    (KERNEL_POWER, true) => update_chunk::<KERNEL_POWER, true, H>(&ctx, base, w, m),
                    (KERNEL_POWER, false) => update_chunk::<KERNEL_POWER, false, H>(&ctx, base, w, m),
                    (KERNEL_POWER_INT, true) => update_chunk::<KERNEL_POWER_INT, true, H>(&ctx, base, w, m),
                    (KERNEL_POWER_INT, false) => update_chunk::<KERNEL_POWER_INT, false, H>(&ctx, base, w, m),
                    (_, true) => update_chunk::<KERNEL_RELATIVE, true, H>(&ctx, base, w, m),
                    (_, false) => update_chunk::<KERNEL_RELATIVE, false, H>(&ctx, base, w, m),
                }
            })
            .collect();
        let mut sums = parts.into_iter().fold(UpdateSums::default(), |acc, p| UpdateSums {
            sum: acc.sum + p.sum,
            qsum: acc.qsum + p.qsum,
            qmax: acc.qmax.max(p.qmax),
            n_inf: acc.n_inf + p.n_inf,
            inf_weight: acc.inf_weight + p.inf_weight,
            err: acc.err + p.err,
            err_clipped: acc.err_clipped + p.err_clipped,
            clip_upper: acc.clip_upper + p.clip_upper,
            clip_lower: acc.clip_lower + p.clip_lower,
        });
        if self.coll.is_distributed() {
            // Issue 13: Z's sum over every rank (one call). The models' sums travel with the
            // round's last sums.
            let mut sum = [sums.sum, sums.n_inf as f64, sums.inf_weight];
            let mut max = [sums.qmax];
            self.coll.sum_max(&mut sum, &mut max)?;
            (sums.sum, sums.n_inf, sums.inf_weight, sums.qmax) = (sum[0], sum[1] as usize, sum[2], max[0]);
        }
        Ok(sums)
    }

    /// The last pass of a round: scales the weights by `1/Z` (`q^(1−t)` by `1/Z^(1−t)`) when
    /// `inv_z` is given and flushes subnormal weights (SPEC §5: `q_{j+1} = q̃/Z_j`). Returns the
    /// co-density range and the number of zero weights (the models moved in the update's pass,
    /// issue 18 session 8: their sums are left at 0 here).
    ///
    /// With `stats = (stats, 1/Σ c q)` (issue 18), it also writes the next round's statistics
    /// ([`Booster::statistics`]'s values, from the final weights).
    fn finish_round(&mut self, inv_z: Option<f64>, stats: Option<(&mut [f64], f64)>) -> FinishSums {
        let tempered = self.regime != Regime::One;
        match (tempered, stats) {
            (true, Some(st)) => self.finish_impl::<true, true>(inv_z, st),
            (false, Some(st)) => self.finish_impl::<false, true>(inv_z, st),
            (true, None) => self.finish_impl::<true, false>(inv_z, (&mut [], 0.0)),
            (false, None) => self.finish_impl::<false, false>(inv_z, (&mut [], 0.0)),
        }
    }

    fn finish_impl<const TEMPERED: bool, const STATS: bool>(
        &mut self,
        inv_z: Option<f64>,
        (stats, norm): (&mut [f64], f64),
    ) -> FinishSums {
        let s = 1.0 - self.t;
        let (scale, scale_s) = match inv_z {
            Some(iz) => (iz, if TEMPERED { iz.powf(s) } else { 1.0 }),
            None => (1.0, 1.0),
        };
        let (y, w) = (&self.y[..], self.w.as_deref());
        let mults = self.c.as_deref();
        let n_chunks = y.len().div_ceil(CHUNK);
        let jobs: Vec<_> = self
            .q
            .chunks_mut(CHUNK)
            .zip(chunks_of(&mut self.qs, n_chunks))
            .zip(chunks_of(stats, n_chunks))
            .enumerate()
            .collect();
        let parts: Vec<FinishSums> = jobs
            .into_par_iter()
            .map(|(c, ((qc, qsc), stc))| {
                let mut p = FinishSums::default();
                for (i, q) in qc.iter_mut().enumerate() {
                    let g = c * CHUNK + i;
                    // SPEC §5: q_{j+1} = q̃/Z_j, so q_{j+1}^(1−t) = q̃^(1−t)/Z_j^(1−t).
                    *q *= scale;
                    let co = if TEMPERED {
                        let qs = &mut qsc[i];
                        *qs *= scale_s;
                        if *q < f64::MIN_POSITIVE {
                            // A subnormal weight carries no information (see `flush_subnormals`).
                            *q = 0.0;
                            *qs = 0.0;
                        } else if !(*qs > 0.0 && qs.is_finite()) {
                            *qs = q.powf(s);
                        }
                        *q * *qs
                    } else {
                        if *q < f64::MIN_POSITIVE {
                            *q = 0.0;
                        }
                        *q
                    };
                    if STATS {
                        // Issue 18: the next round's statistics (`Booster::statistics`).
                        stc[i] = stat_value(f64::from(y[g]), mult(mults, g), *q, norm);
                    }
                    if w.is_none_or(|w| w[g] > 0.0) {
                        p.pmin = p.pmin.min(co);
                        p.pmax = p.pmax.max(co);
                        if co == 0.0 {
                            p.n_zero += mult(mults, g);
                        }
                    }
                }
                p
            })
            .collect();
        parts.into_iter().fold(FinishSums::default(), |a, p| FinishSums {
            pmin: a.pmin.min(p.pmin),
            pmax: a.pmax.max(p.pmax),
            n_zero: a.n_zero + p.n_zero,
            ..a
        })
    }
}

/// An upper bound of `ln q` at temperature `t` (every `cᵢ qᵢ^(2−t) ≤ 1`): `−t* ln min c`.
fn ln_q_cap_at(t: f64, ln_c_min: f64) -> f64 {
    -t_star(t.clamp(0.0, 1.99)) * ln_c_min
}

/// [`co_simplex_normalize`] with multiplicities: `q /= Z`, `Z = (Σ cᵢ qᵢ^(2−t))^(1/(2−t))` (SPEC §5,
/// each example counted `cᵢ` times); exactly [`co_simplex_normalize`] without them.
fn co_simplex_normalize_mult(q: &mut [f64], c: Option<&[f64]>, t: f64) -> f64 {
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

/// [`co_simplex_normalize_mult`] over the examples of every rank (issue 13; multiplicities 1
/// when `c` is `None`): two calls (the largest weight with a NaN flag, then the sum).
fn co_simplex_normalize_on(q: &mut [f64], c: Option<&[f64]>, t: f64, coll: &Shared) -> Result<f64> {
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
fn codensity(q: f64, e: f64, regime: Regime) -> f64 {
    if regime == Regime::One {
        q
    } else {
        q.powf(e)
    }
}

/// `stats[i] = f(i)` in parallel over fixed chunks.
fn fill_chunks(stats: &mut [f64], f: impl Fn(usize) -> f64 + Sync + Send) {
    stats.par_chunks_mut(CHUNK).enumerate().for_each(|(k, st)| {
        for (j, s) in st.iter_mut().enumerate() {
            *s = f(k * CHUNK + j);
        }
    });
}

/// The learner's statistic of one example: `±c q/Σ c q` (SPEC §5's `d`, signed by the label).
#[inline]
fn stat_value(yi: f64, ci: f64, q: f64, norm: f64) -> f64 {
    super::signed(yi, ci * q * norm)
}

/// Sets weights below `f64::MIN_POSITIVE` to 0: a subnormal weight carries no information and
/// would make `R = max |u|/q^(1−t)` overflow.
fn flush_subnormals(q: &mut [f64]) {
    for v in q.iter_mut() {
        if *v < f64::MIN_POSITIVE {
            *v = 0.0;
        }
    }
}

/// Replaces a non-finite diagnostic by the largest finite value of its sign (JSON has no ∞).
fn finite(v: f64) -> f64 {
    if v.is_nan() {
        0.0
    } else {
        v.clamp(f64::MIN, f64::MAX)
    }
}

impl Booster for TAdaBoost {
    fn n_outputs(&self) -> usize {
        1
    }

    fn default_criterion(&self) -> Criterion {
        Criterion::Tempered { t: self.t }
    }

    fn leaf_rule(&self) -> LeafRule {
        LeafRule::Tempered { t: self.t, link: self.params.link() }
    }

    /// `(d_i, 0)` for positives, `(0, d_i)` for negatives, `d = q/Σq` or `q^(2−t)`.
    fn statistics(&self, stats: &mut [f64]) {
        debug_assert_eq!(stats.len(), self.q.len());
        let (e, regime, c) = (2.0 - self.t, self.regime, self.c.as_deref());
        let (q, y) = (&self.q[..], &self.y[..]);
        // SPEC §5: d_j = q_j/Σq (option: co-density q^(2−t)). Frequency weights: the copies of
        // example i together weigh c_i q_i (or c_i q_i^(2−t)).
        if self.params.learner_weights == LearnerWeights::CoDensity {
            fill_chunks(stats, |i| super::signed(f64::from(y[i]), mult(c, i) * codensity(q[i], e, regime)));
        } else {
            // Issue 13: with several ranks, Σq over every rank (kept by `sync_q_sum`); issue 18: on
            // one machine, the kept `q_sum` (what the fused last pass of a round uses).
            let norm = 1.0 / self.dist_q_sum.unwrap_or(self.q_sum);
            fill_chunks(stats, |i| stat_value(f64::from(y[i]), mult(c, i), q[i], norm));
        }
    }

    fn step_then_statistics(&mut self, h: &[f64], diag: &mut Diagnostics, stats: &mut [f64]) -> Result<Step> {
        self.check_rows(h.len(), "tree outputs")?;
        self.advance(h, diag, Some(stats))
    }

    /// Issue 18 (session 8): the passes read each row's leaf and the leaf values (no `h`).
    fn step_on_leaves(
        &mut self,
        leaf_of_row: &[u32],
        leaf_values: &[f64],
        h: &mut [f64],
        diag: &mut Diagnostics,
        stats: &mut [f64],
    ) -> Result<Step> {
        let _ = h; // not needed: the outputs are read from the leaves
        self.check_rows(leaf_of_row.len(), "leaves")?;
        self.advance(&Leaves { of_row: leaf_of_row, values: leaf_values }, diag, Some(stats))
    }

    fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn set_collective(&mut self, c: Shared, labels: Labels<'_>) -> Result<()> {
        if self.coll.is_distributed() {
            // Built on the ranks' totals already (`new_on`).
            return Ok(());
        }
        // Issue 13: rebuilt with the totals of every rank.
        let lr = self.lr;
        *self = Self::new_on(&self.params, labels, &c)?;
        self.lr = lr;
        Ok(())
    }

    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        self.check_rows(h.len(), "tree outputs")?;
        self.advance(h, diag, None)
    }
}

impl TAdaBoost {
    /// An error unless `len` (of the round's `what`) is the number of examples.
    fn check_rows(&self, len: usize, what: &str) -> Result<()> {
        let n = self.y.len();
        if len != n {
            return Err(Error::InvalidData(format!("{n} examples but {len} {what}")));
        }
        Ok(())
    }

    /// One round (SPEC §5); with `stats`, the next round's statistics too, written by the round's
    /// last pass when the round is a normal one (issue 18), else by [`Booster::statistics`]
    /// afterwards: the same values either way.
    fn advance<H: Outputs + ?Sized>(
        &mut self,
        h: &H,
        diag: &mut Diagnostics,
        mut stats: Option<&mut [f64]>,
    ) -> Result<Step> {
        // A non-finite tree output is an error of the edge's pass (issue 18: no pass of its own).
        let t = self.t;
        let s = 1.0 - t;
        let e = 2.0 - t;
        if self.schedule.is_some() {
            // Issue 16: the temperature of this round, in the history.
            diag.insert("t", t);
        }

        let Some(edge) = self.edge(h)? else {
            return Ok(Step::Stop { reason: "the weak hypothesis is 0 on every example with positive weight".into() });
        };
        let rho = edge.rho;
        if rho.is_nan() {
            return Ok(Step::Stop {
                reason: "the edge ρ is undefined (switched-off weights would return unbounded)".into(),
            });
        }
        let r = edge.umax * edge.r_rel;
        diag.insert("rho", rho);
        // In the units of the repeated rows, R scales as c_unit^(1−t*) (see the type's doc).
        let r_unit = if self.c.is_some() { self.c_unit.powf(1.0 - t_star(t)) } else { 1.0 };
        diag.insert("r", finite(r * r_unit));
        // Diagnostics in the units of the repeated rows (a multiplicity times `c_unit` is a sum
        // of sample weights; q† per copy scales as c_unit^(−t*)): the identity without weights.
        let unit = self.c_unit;
        let (m_dag_diag, q_dag_diag) = if self.c.is_some() {
            (edge.m_dag * unit, edge.q_dag * unit.powf(-t_star(t)))
        } else {
            (edge.m_dag, edge.q_dag)
        };
        diag.insert("switched_off", m_dag_diag);
        diag.insert("q_dagger", finite(q_dag_diag));

        // ν = µ_j R_j. SPEC §5: µ_j = −(1/R_j) log_t((1−ρ)/M_{1−t}(1−ρ, 1+ρ))
        //                          = tanh((1−t) atanh ρ) / ((1−t) R_j).
        let mut perfect = false;
        let nu = if self.regime == Regime::One {
            // SPEC §5 at t = 1: µ = (1/(2R)) ln((1+ρ)/(1−ρ)); SPEC §3: a perfect learner keeps a
            // large finite vote, ε clamped to PERFECT_EPS (½ ln((1−ε)/ε) ≈ 11.51 for h/R).
            let eps = (1.0 - rho.abs()) / 2.0;
            if eps < PERFECT_EPS {
                perfect = true;
                rho.signum() * 0.5 * ((1.0 - PERFECT_EPS) / PERFECT_EPS).ln()
            } else {
                rho.atanh()
            }
        } else {
            let mut rho = rho;
            if self.regime == Regime::Below && 1.0 - rho.abs() <= edge.rho_tol {
                // |ρ| = 1 up to rounding: µ = ±1/((1−t)R) exactly, so that a perfect weak
                // hypothesis switches every weight off and boosting stops (SPEC §5).
                rho = rho.signum();
            }
            (s * rho.atanh()).tanh() / s
        };
        if nu == 0.0 || !nu.is_finite() {
            return Ok(Step::Stop { reason: format!("the weak hypothesis has no edge (ρ = {rho})") });
        }
        // Issue 15: shrinkage scales µ_j (hence α_j and the weight update) by the learning rate.
        let nu = super::shrink(self.lr, nu);
        let mu = nu / edge.umax / edge.r_rel;
        // SPEC §5: α_j = m^(1−t*) (Π_{k<j} Z_k)^(1−t) µ_j, the scale factor in log space (α = µ at
        // t = 1).
        let ln_scale = (1.0 - t_star(t)) * self.m.ln() + s * self.ln_prod_z;
        let mut alpha = if ln_scale == 0.0 { mu } else { mu * ln_scale.exp() };
        if !alpha.is_finite() || alpha == 0.0 {
            // µ itself may have under- or overflowed: retry fully in log space.
            let ln_alpha = ln_scale + nu.abs().ln() - edge.umax.ln() - edge.r_rel.ln();
            alpha = nu.signum() * ln_alpha.exp();
            if !alpha.is_finite() || alpha == 0.0 {
                return Ok(Step::Stop {
                    reason: format!("the leverage α is not representable (ln|α| = {ln_alpha:.4})"),
                });
            }
        }
        diag.insert("mu", mu / r_unit);
        diag.insert("alpha", alpha);

        // The update overwrites the weights unless one may overflow: then it works on a copy, so
        // that a failed round leaves the booster as it was.
        let in_place = e * (self.ln_growth_bound(&edge, nu) + self.ln_q_cap) <= IN_PLACE_LN_BOUND;
        // Issue 18 (session 8): the update's pass also moves the models, so they are copied with
        // the weights.
        let (mut q, mut qs, mut scores, mut clipped) = if in_place {
            (
                std::mem::take(&mut self.q),
                std::mem::take(&mut self.qs),
                std::mem::take(&mut self.scores),
                std::mem::take(&mut self.clipped),
            )
        } else {
            (self.q.clone(), self.qs.clone(), self.scores.clone(), self.clipped.clone())
        };
        let sums = self.update(h, &edge, (nu, alpha), (&mut q, &mut qs), (&mut scores, &mut clipped))?;
        let n_inf = sums.n_inf;
        debug_assert!(n_inf == 0 || !in_place, "an in-place update overflowed");
        if n_inf > 0 && self.params.overflow == OverflowPolicy::Error {
            if in_place {
                // Not reached (the bound excludes overflow); the weights stay consistent anyway.
                self.q = q;
                self.resync_powers();
                (self.scores, self.clipped) = (scores, clipped);
            }
            return Err(Error::Numerical(format!(
                "{n_inf} tempered weight(s) overflowed at t = {t} (ρ = {rho}); use overflow = fallback or a smaller t"
            )));
        }
        self.q = q;
        self.qs = qs;
        self.scores = scores;
        self.clipped = clipped;
        // SPEC §5: Z_j = (Σ q̃^(2−t))^(1/(2−t)); q_{j+1} = q̃/Z_j.
        let (z, inv_z) = if n_inf > 0 {
            // SPEC §5 (authors' fallback): overflowed weights n_inf^(−t*), others 0, Z = 1
            // (n_inf counts the copies: Σ c q^(2−t) = 1 again).
            let v = sums.inf_weight.powf(-t_star(t));
            for q in self.q.iter_mut() {
                *q = if q.is_infinite() { v } else { 0.0 };
            }
            self.resync_powers();
            (1.0, None)
        } else if sums.qmax == 0.0 {
            // Every weight switched off.
            (0.0, None)
        } else if sums.sum >= MIN_DIRECT_SUM && sums.sum.is_finite() {
            let z = if e == 1.0 { sums.sum } else { sums.sum.powf(1.0 / e) };
            (z, Some(1.0 / z))
        } else {
            // Tiny weights: the sum relative to the largest weight.
            let z = if self.coll.is_distributed() {
                co_simplex_normalize_on(&mut self.q, self.c.as_deref(), t, &self.coll)?
            } else {
                co_simplex_normalize_mult(&mut self.q, self.c.as_deref(), t)
            };
            self.resync_powers();
            (z, None)
        };
        if !(z >= 0.0 && z.is_finite()) {
            return Err(Error::Numerical(format!("normalisation Z = {z} at t = {t}")));
        }
        let all_off = z == 0.0;
        if all_off {
            self.ln_prod_z = f64::NEG_INFINITY;
        } else {
            self.ln_prod_z += z.ln();
        }

        // Issue 18: the next learner normaliser Σ c q = Z⁻¹ Σ c q̃ after a normal round; then, on one
        // machine without a schedule (which moves the weights again), the last pass writes the
        // next statistics too.
        let q_sum_next = inv_z.map(|iz| sums.qsum * iz).filter(|v| *v > 0.0 && v.is_finite());
        let fuse = q_sum_next.is_some()
            && !self.coll.is_distributed()
            && self.schedule.is_none()
            && self.params.learner_weights == LearnerWeights::Normalized;
        let fused = match (fuse, q_sum_next) {
            (true, Some(total)) => stats.take().map(|st| (st, 1.0 / total)),
            _ => None,
        };
        // Weights q/Z (the models moved in the update's pass).
        let mut fin = self.finish_round(inv_z, fused);
        (fin.err, fin.err_clipped, fin.clip_upper, fin.clip_lower) =
            (sums.err, sums.err_clipped, sums.clip_upper, sums.clip_lower);
        self.q_sum = match q_sum_next {
            Some(v) => v,
            None => self.local_q_sum(),
        };
        if self.coll.is_distributed() {
            // Issue 13: the round's last sums and the next learner normaliser (one call).
            let mut sum = [fin.n_zero, fin.err, fin.err_clipped, fin.clip_upper, fin.clip_lower, 0.0, 0.0];
            // Min and max as maxima (of −pmin), sent as one-hot vectors over the ranks.
            let size = self.coll.get().size();
            let mut b = Vec::with_capacity(5 + 2 * size);
            b.extend_from_slice(&sum[..5]);
            let (mut mx, rank) = (vec![0.0; 2 * size], self.coll.get().rank());
            (mx[rank], mx[size + rank]) = (-fin.pmin, fin.pmax);
            b.extend_from_slice(&mx);
            self.sync_q_sum(Some(&mut b))?;
            sum[..5].copy_from_slice(&b[..5]);
            [fin.n_zero, fin.err, fin.err_clipped, fin.clip_upper, fin.clip_lower, ..] = sum;
            let max_of = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            fin.pmin = -max_of(&b[5..5 + size]);
            fin.pmax = max_of(&b[5 + size..5 + 2 * size]);
        }
        diag.insert("z", z);
        diag.insert("bound", self.bound());
        if self.c.is_some() {
            diag.insert("n_infinite", sums.inf_weight * unit);
            diag.insert("n_zero", fin.n_zero * unit);
            diag.insert("min_weight", fin.pmin / unit);
            diag.insert("max_weight", fin.pmax / unit);
        } else {
            diag.insert("n_infinite", n_inf as f64);
            diag.insert("n_zero", fin.n_zero);
            diag.insert("min_weight", fin.pmin);
            diag.insert("max_weight", fin.pmax);
        }
        diag.insert("train_error", fin.err);
        diag.insert("train_error_clipped", fin.err_clipped);
        if self.delta.is_some() {
            // Issue 16 (SPEC §5): clip events of the clipped model on the training sample this
            // round; Lemma E says the upper clip never binds there.
            let u = if self.c.is_some() { unit } else { 1.0 }; // counts in rows, as `n_zero`
            diag.insert("clip_events_upper", fin.clip_upper * u);
            diag.insert("clip_events_lower", fin.clip_lower * u);
        }

        // Issue 16: the next round's temperature (a no-op without a schedule or a change).
        self.round += 1;
        if let Some(sch) = self.schedule {
            if !(perfect || all_off) {
                let t_next = sch.t_at(self.round + 1, self.sched_len);
                if self.coll.is_distributed() {
                    self.retemper_on_ranks(t_next)?;
                } else {
                    self.retemper(t_next);
                }
            }
        }

        if let Some(st) = stats {
            self.statistics(st);
        }
        Ok(if perfect {
            Step::AddAndStop {
                alpha,
                reason: format!("perfect weak hypothesis (ρ = {rho}); α = ½ ln((1−ε)/ε)/R with ε = {PERFECT_EPS}"),
            }
        } else if all_off {
            Step::AddAndStop { alpha, reason: "every weight switched off: all training margins reach δ".into() }
        } else {
            Step::Add { alpha }
        })
    }
}

#[cfg(test)]
// The tests index several parallel arrays by example; iterator chains would hide that.
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::tempered::{k_t, tempered_update};
    use crate::tree::TemperedLink;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn labels<'a>(y: &'a [f64], sw: Option<&'a [f64]>) -> Labels<'a> {
        Labels { n: y.len(), k: 1, y, class: None, sample_weight: sw }
    }

    fn params(t: f64) -> TAdaBoostParams {
        TAdaBoostParams { t, ..Default::default() }
    }

    fn random_labels(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
        (0..n).map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 }).collect()
    }

    /// A synthetic weak hypothesis: ±1 outputs right with probability 0.6–0.85 (`kind` 0), or
    /// real outputs in [−2, 2] leaning towards the label (`kind` 1).
    fn random_h(rng: &mut ChaCha8Rng, y: &[f64], kind: usize) -> Vec<f64> {
        if kind == 0 {
            let p = rng.gen_range(0.6..0.85);
            y.iter().map(|&yi| if rng.gen_bool(p) { yi } else { -yi }).collect()
        } else {
            y.iter().map(|&yi| (rng.gen_range(-2.0..2.0) + 0.7 * yi).clamp(-2.0, 2.0)).collect()
        }
    }

    fn co_sum(q: &[f64], t: f64) -> f64 {
        q.iter().map(|v| v.powf(2.0 - t)).sum()
    }

    fn rel_close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
    }

    /// Runs `rounds` rounds on random hypotheses and checks every SPEC §5 invariant at each one.
    fn check_invariants(t: f64, seed: u64, kind: usize, rounds: usize) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 40;
        let y = random_labels(&mut rng, n);
        let mut b = match TAdaBoost::new(&params(t), labels(&y, None)) {
            Ok(b) => b,
            Err(e) => panic!("construction failed: {e}"),
        };
        let (tt, s) = (b.t(), 1.0 - b.t());
        assert!(rel_close(co_sum(b.weights(), tt), 1.0, 1e-12));
        let mut h_sum = vec![0.0; n];
        let mut c_sum = vec![0.0; n];
        for round in 0..rounds {
            let h = random_h(&mut rng, &y, kind);
            let q_old = b.weights().to_vec();
            let mut diag = Diagnostics::new();
            let step = match b.step(&h, &mut diag) {
                Ok(st) => st,
                Err(e) => panic!("t={t} seed={seed} round={round}: {e}"),
            };
            let alpha = match step {
                Step::Add { alpha } => alpha,
                Step::AddAndStop { alpha, .. } => alpha,
                Step::Stop { .. } => break,
            };
            let ctx = format!("t={t} seed={seed} kind={kind} round={round} diag={diag:?}");
            for (k, v) in &diag {
                assert!(v.is_finite(), "{k} not finite: {ctx}");
            }
            assert!(alpha.is_finite() && alpha == diag["alpha"], "{ctx}");
            // Co-simplex after every round.
            assert!((co_sum(b.weights(), tt) - 1.0).abs() < 1e-9, "{ctx}");
            // Bounded leverage |µ| ≤ 1/(R|1−t|).
            let (mu, r, rho, z) = (diag["mu"], diag["r"], diag["rho"], diag["z"]);
            if tt != 1.0 {
                assert!(mu.abs() <= 1.0 / (r * s.abs()) * (1.0 + 1e-12), "{ctx}");
            }
            assert!((-1.0..=1.0).contains(&rho));
            // Training error of both models ≤ Π Z^(2−t) ≤ Π (1 + m† q†^(2−t)) K_t(ρ).
            assert!(diag["train_error"] <= diag["bound"] + 1e-12, "{ctx}");
            assert!(diag["train_error_clipped"] <= diag["bound"] + 1e-12, "{ctx}");
            let factor = 1.0 + diag["switched_off"] * diag["q_dagger"].powf(2.0 - tt);
            // Z ≤ K_t(ρ) holds for the exact µ; a (nearly) perfect hypothesis stops with a capped
            // µ, whose Z is above K_t(ρ) → 0 (seed 261560: ρ = 1 − 2e−16, Z = 1e−5).
            if !matches!(step, Step::AddAndStop { .. }) {
                assert!(z.powf(2.0 - tt) <= factor * k_t(rho, tt) * (1.0 + 1e-9) + 1e-15, "{ctx}");
            }
            // The update is the scalar tempered update, normalised.
            for i in 0..n {
                let expected = tempered_update(q_old[i], mu, y[i] * h[i], tt) / z;
                assert!(rel_close(b.weights()[i], expected, 1e-9) || expected < 1e-290, "{ctx} i={i}");
            }
            // Models: H = Σ α h, S = clipped sum.
            for i in 0..n {
                h_sum[i] += alpha * h[i];
                c_sum[i] = match b.clip_delta() {
                    Some(d) => (c_sum[i] + alpha * h[i]).clamp(-d, d),
                    None => h_sum[i],
                };
            }
            assert!(b.scores().iter().zip(&h_sum).all(|(a, e)| rel_close(*a, *e, 1e-12) || a == e));
            assert!(b.clipped_scores().iter().zip(&c_sum).all(|(a, e)| (a - e).abs() < 1e-12));
            if matches!(step, Step::AddAndStop { .. }) {
                break;
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]

        #[test]
        fn invariants_over_seeds(seed in 0u64..1_000_000, kind in 0usize..2) {
            for t in [0.0, 0.2, 0.5, 0.8, 0.9, 1.0] {
                check_invariants(t, seed, kind, 15);
            }
        }

        /// t > 1 has no guarantee but must stay finite and on the co-simplex.
        #[test]
        fn above_one_stays_finite(seed in 0u64..1_000_000, kind in 0usize..2) {
            for t in [1.2, 1.5, 1.9] {
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let y = random_labels(&mut rng, 30);
                let mut b = TAdaBoost::new(&params(t), labels(&y, None)).map_err(|e| TestCaseError::fail(e.to_string()))?;
                for _ in 0..15 {
                    let h = random_h(&mut rng, &y, kind);
                    let mut diag = Diagnostics::new();
                    let step = b.step(&h, &mut diag).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert!(diag.values().all(|v| v.is_finite()), "{:?}", diag);
                    // With SPEC §5's R_j no weight overflows unless ρ rounds to ±1 (module doc).
                    prop_assert_eq!(diag.get("n_infinite").copied().unwrap_or(0.0), 0.0);
                    if !matches!(step, Step::Add { .. }) { break; }
                    prop_assert!((co_sum(b.weights(), t) - 1.0).abs() < 1e-9);
                }
            }
        }
    }

    /// Switched-off weights (t < 1): with some weights forced to 0, ρ uses q† (SPEC §5), the
    /// per-round bound Z^(2−t) ≤ (1 + m† q†^(2−t)) K_t(ρ) holds, and an off weight comes back on as
    /// [−(1−t)µu]_+^(1/(1−t)) when its example is misclassified.
    #[test]
    fn switched_off_weights() {
        for t in [0.0, 0.5, 0.9] {
            for seed in 0..6u64 {
                let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
                let n = 30;
                let y = random_labels(&mut rng, n);
                let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
                for i in 0..6 {
                    b.q[i] = 0.0;
                }
                let _ = co_simplex_normalize(&mut b.q, t);
                b.resync_powers(); // q was changed behind the booster's back
                let mut came_back = false;
                for round in 0..8 {
                    let h = random_h(&mut rng, &y, 1);
                    let q_old = b.weights().to_vec();
                    let off = q_old.iter().filter(|&&q| q == 0.0).count();
                    let mut diag = Diagnostics::new();
                    let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
                    if !matches!(step, Step::Add { .. }) {
                        break;
                    }
                    let ctx = format!("t={t} seed={seed} round={round} {diag:?}");
                    assert!(diag.values().all(|v| v.is_finite()), "{ctx}");
                    assert_eq!(diag["switched_off"], off as f64);
                    assert!((co_sum(b.weights(), t) - 1.0).abs() < 1e-9, "{ctx}");
                    assert!(diag["mu"].abs() <= 1.0 / (diag["r"] * (1.0 - t)) * (1.0 + 1e-12));
                    let factor = 1.0 + diag["switched_off"] * diag["q_dagger"].powf(2.0 - t);
                    assert!(diag["z"].powf(2.0 - t) <= factor * k_t(diag["rho"], t) * (1.0 + 1e-9), "{ctx}");
                    for i in 0..n {
                        let expected = tempered_update(q_old[i], diag["mu"], y[i] * h[i], t) / diag["z"];
                        assert!(rel_close(b.weights()[i], expected, 1e-9), "{ctx} i={i}");
                        came_back |= q_old[i] == 0.0 && b.weights()[i] > 0.0;
                    }
                }
                assert!(came_back, "t={t} seed={seed}");
            }
        }
    }

    /// Weights are the tempered exponential of the margin: q_{J+1} Π Z = m^(−t*) exp_t(−y H), which
    /// checks α = m^(1−t*) (Π Z)^(1−t) µ against the update (derivation in the report).
    #[test]
    fn weights_are_tempered_exponential_of_margins() {
        for t in [0.0, 0.3, 0.7, 1.0, 1.3] {
            let mut rng = ChaCha8Rng::seed_from_u64(7);
            let n = 25;
            let y = random_labels(&mut rng, n);
            let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            for round in 0..10 {
                let h = random_h(&mut rng, &y, round % 2);
                let mut diag = Diagnostics::new();
                let _ = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(diag["n_zero"], 0.0);
                let scale = b.ln_prod_z.exp();
                for i in 0..n {
                    let lhs = b.weights()[i] * scale;
                    let rhs = (n as f64).powf(-t_star(t)) * crate::tempered::exp_t(-y[i] * b.scores()[i], t);
                    assert!(rel_close(lhs, rhs, 1e-9), "t={t} round={round} i={i}: {lhs} vs {rhs}");
                }
            }
        }
    }

    /// t = 1 is AdaBoost with α = ½ ln((1+r)/(1−r)) on h/R (SPEC §4.2(a)), computed naively.
    #[test]
    fn t_one_is_adaboost() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let n = 30;
        let y = random_labels(&mut rng, n);
        let mut b = TAdaBoost::new(&params(1.0), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        let mut big_h = vec![0.0f64; n];
        for round in 0..12 {
            let h = random_h(&mut rng, &y, round % 2);
            // Naive AdaBoost: d ∝ exp(−y H).
            let d: Vec<f64> = (0..n).map(|i| (-y[i] * big_h[i]).exp()).collect();
            let total: f64 = d.iter().sum();
            for i in 0..n {
                assert!(rel_close(b.weights()[i], d[i] / total, 1e-12), "round {round} weight {i}");
            }
            let rmax = h.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let r: f64 = (0..n).map(|i| d[i] / total * y[i] * h[i] / rmax).sum();
            let alpha = 0.5 * ((1.0 + r) / (1.0 - r)).ln() / rmax;
            let mut diag = Diagnostics::new();
            let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(step, Step::Add { alpha: diag["alpha"] });
            assert!(rel_close(diag["alpha"], alpha, 1e-12), "round {round}: {} vs {alpha}", diag["alpha"]);
            assert_eq!(diag["alpha"], diag["mu"]);
            assert!((diag["rho"] - r).abs() < 1e-14);
            for i in 0..n {
                big_h[i] += alpha * h[i];
            }
        }
    }

    /// t = 1 − 1e−9 (which rounds to within the 1e−9 tolerance, so is computed as 1) and the
    /// genuinely tempered t = 1 ± 2e−9, 1 − 1e−7 match t = 1 to 1e−6.
    #[test]
    fn continuity_at_t_one() {
        assert!(is_one(1.0 - 1e-9) && !is_one(1.0 - 2e-9));
        for (kind, t_near) in [(0, 1.0 - 1e-9), (0, 1.0 - 2e-9), (1, 1.0 - 2e-9), (0, 1.0 + 2e-9), (1, 1.0 - 1e-7)] {
            let mut rng = ChaCha8Rng::seed_from_u64(5 + kind as u64);
            let n = 30;
            let y = random_labels(&mut rng, n);
            let hs: Vec<Vec<f64>> = (0..10).map(|_| random_h(&mut rng, &y, kind)).collect();
            let mut b1 = TAdaBoost::new(&params(1.0), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            let mut b2 = TAdaBoost::new(&params(t_near), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(b2.t() == 1.0, is_one(t_near));
            for h in &hs {
                let (mut d1, mut d2) = (Diagnostics::new(), Diagnostics::new());
                let _ = b1.step(h, &mut d1).unwrap_or_else(|e| panic!("{e}"));
                let _ = b2.step(h, &mut d2).unwrap_or_else(|e| panic!("{e}"));
                for key in ["alpha", "mu", "rho", "z", "bound", "r", "min_weight", "max_weight"] {
                    assert!(rel_close(d1[key], d2[key], 1e-6), "{key}: {} vs {}", d1[key], d2[key]);
                }
                for (a, c) in b1.weights().iter().zip(b2.weights()) {
                    assert!(rel_close(*a, *c, 1e-6));
                }
                assert_eq!(d1["train_error"], d2["train_error"]);
            }
        }
    }

    /// A perfect (ρ = 1) or perfectly wrong (ρ = −1) hypothesis gives a finite µ for t < 1; at t = 1
    /// AdaBoost's rule keeps it with α = ½ ln((1 − 1e−10)/1e−10)/R ≈ 11.5129/R and stops.
    #[test]
    fn perfect_weak_hypothesis() {
        let y = [1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0];
        for t in [0.0, 0.5, 0.9, 1.0, 1.5] {
            for sign in [1.0, -1.0] {
                let h: Vec<f64> = y.iter().map(|v| sign * 2.0 * v).collect();
                let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
                let mut diag = Diagnostics::new();
                let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
                assert!(diag.values().all(|v| v.is_finite()), "t={t}: {diag:?}");
                assert!((diag["rho"] - sign).abs() < 1e-12);
                let mu = diag["mu"];
                assert!(mu.is_finite() && mu * sign > 0.0);
                if t == 1.0 {
                    let alpha = sign * 0.5 * ((1.0 - 1e-10) / 1e-10f64).ln() / 2.0;
                    assert!((alpha.abs() * 2.0 - 11.512925464970229).abs() < 1e-9);
                    assert!(matches!(step, Step::AddAndStop { alpha: a, .. } if a == alpha), "{step:?}");
                } else {
                    // |µ| = 1/(R|1−t|) at |ρ| = 1 (up to the rounding of ρ).
                    let bound = 1.0 / (diag["r"] * (1.0 - t).abs());
                    assert!(rel_close(mu.abs(), bound, 1e-12), "t={t}: {mu} vs {bound}");
                    if t < 1.0 {
                        // Every weight switches off: Z = 0, training error 0, stop.
                        assert!(matches!(step, Step::AddAndStop { .. }), "t={t}: {step:?}");
                        assert_eq!((diag["z"], diag["bound"], diag["n_zero"]), (0.0, 0.0, 7.0));
                        assert!(b.weights().iter().all(|&q| q == 0.0));
                    } else {
                        assert!(matches!(step, Step::Add { .. }));
                        assert!((co_sum(b.weights(), t) - 1.0).abs() < 1e-9);
                    }
                }
                assert!(diag["train_error"] <= diag["bound"] + 1e-12);
            }
        }
    }

    /// Overflow at t = 1.5: one example of sample weight 2^−80 is maximally wrong while ρ rounds to
    /// exactly 1 (all numbers are powers of two, so every step is exact). Its weight's bracket
    /// q^(1−t) − (1−t)µu is exactly 0: +∞.
    #[test]
    fn overflow_fallback_and_error() {
        let y = [1.0, 1.0, -1.0, 1.0, -1.0];
        let sw = [2f64.powi(-80), 1.0, 1.0, 1.0, 1.0];
        // Frequency weights (issue 14): every copy starts at q_1 = n^(−t*) = 1/25 (multiplicities
        // of mean 1); the example of negligible weight is the one wrong, so ρ rounds to 1 and its
        // weight overflows.
        let mut h: Vec<f64> = y.to_vec();
        h[0] = -y[0];

        let mut b = TAdaBoost::new(&params(1.5), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..5 {
            assert!((b.weights()[i] - 0.04).abs() < 1e-17, "{:?}", b.weights());
        }
        let mut diag = Diagnostics::new();
        let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(diag["rho"], 1.0);
        // n_inf counts copies: the overflowed example weighs 2^−80 (in sample-weight units), and
        // its copies get weight n_inf^(−t*) in the multiplicities' unit, c_0^(−2).
        assert!((diag["n_infinite"] - sw[0]).abs() < 1e-15 * sw[0]);
        assert_eq!(diag["z"], 1.0);
        let c0 = sw[0] * 5.0 / (4.0 + sw[0]);
        assert!((b.weights()[0] / c0.powi(-2) - 1.0).abs() < 1e-12, "{:?}", b.weights());
        assert_eq!(&b.weights()[1..], &[0.0, 0.0, 0.0, 0.0]);
        assert!((diag["n_zero"] - 4.0).abs() < 1e-12);
        assert!(matches!(step, Step::Add { alpha } if alpha.is_finite() && alpha > 0.0));
        assert!(diag.values().all(|v| v.is_finite()));
        let survivor = b.weights()[0];
        // The dead weights stay dead; boosting continues on the survivor.
        let mut diag = Diagnostics::new();
        let _ = b.step(&[1.0, 1.0, 1.0, 1.0, 1.0], &mut diag).unwrap_or_else(|e| panic!("{e}"));
        assert!((b.weights()[0] / survivor - 1.0).abs() < 1e-12, "{:?}", b.weights());
        assert_eq!(&b.weights()[1..], &[0.0, 0.0, 0.0, 0.0]);

        let p = TAdaBoostParams { t: 1.5, overflow: OverflowPolicy::Error, ..Default::default() };
        let mut b = TAdaBoost::new(&p, labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
        let before = b.weights().to_vec();
        let res = b.step(&h, &mut Diagnostics::new());
        assert!(matches!(res, Err(Error::Numerical(_))), "{res:?}");
        assert_eq!(b.weights(), &before[..]);
        assert!(b.scores().iter().all(|&v| v == 0.0));
    }

    /// Issue 8: over several chunks of examples, the per-example passes give bit-identical
    /// weights and diagnostics with 1 and 2 threads, the cached `q^(1−t)` stays within 1e−12 of
    /// `q^(1−t)` over 40 rounds, and every weight is the scalar tempered update to 1e−9.
    #[test]
    fn issue_8_chunked_passes_and_cached_powers() {
        let n = 2 * CHUNK + 123;
        for t in [0.3, 0.8, 1.0, 1.5] {
            let mut rng = ChaCha8Rng::seed_from_u64(80);
            let y = random_labels(&mut rng, n);
            let hs: Vec<Vec<f64>> = (0..40).map(|r| random_h(&mut rng, &y, r % 2)).collect();
            let run = |threads: usize| {
                let pool =
                    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap_or_else(|e| panic!("{e}"));
                pool.install(|| {
                    let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
                    let mut trace = Vec::new();
                    for h in &hs {
                        let q_old = b.weights().to_vec();
                        let mut diag = Diagnostics::new();
                        let step = b.step(h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
                        if !matches!(step, Step::Add { .. }) {
                            break;
                        }
                        if threads == 1 {
                            let s = 1.0 - b.t();
                            for i in 0..n {
                                let q = b.weights()[i];
                                if s != 0.0 {
                                    assert!(rel_close(b.qs[i], q.powf(s), 1e-12), "t={t} i={i}");
                                }
                                let want = tempered_update(q_old[i], diag["mu"], y[i] * h[i], b.t()) / diag["z"];
                                assert!(rel_close(q, want, 1e-9), "t={t} i={i}: {q} vs {want}");
                            }
                            assert!((co_sum(b.weights(), b.t()) - 1.0).abs() < 1e-12);
                        }
                        trace.push(format!("{diag:?}"));
                    }
                    let bits: Vec<u64> = b.weights().iter().chain(b.scores()).map(|v| v.to_bits()).collect();
                    (trace, bits)
                })
            };
            let (a, b) = (run(1), run(2));
            assert!(a.0.len() > 10, "t={t}: only {} rounds", a.0.len());
            assert_eq!(a, b, "t={t}");
        }
    }

    #[test]
    fn zero_hypothesis_and_no_edge_stop() {
        let y = [1.0, -1.0, 1.0, -1.0];
        let mut b = TAdaBoost::new(&params(0.5), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        let step = b.step(&[0.0; 4], &mut Diagnostics::new()).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(step, Step::Stop { .. }));
        // ρ = 0: right on half the weight, wrong on the other half.
        let step = b.step(&[1.0, 1.0, 1.0, 1.0], &mut Diagnostics::new()).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(step, Step::Stop { .. }), "{step:?}");
        assert!(b.step(&[1.0, f64::NAN, 0.0, 0.0], &mut Diagnostics::new()).is_err());
        assert!(b.step(&[1.0], &mut Diagnostics::new()).is_err());
    }

    #[test]
    fn sample_weights() {
        let y = [1.0, -1.0, 1.0, -1.0, 1.0];
        let h = [1.0, -0.5, -1.0, 0.3, 2.0];
        for t in [0.0, 0.6, 1.0, 1.4] {
            // Equal sample weights change nothing.
            let mut a = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            let sw = [3.0; 5];
            let mut b = TAdaBoost::new(&params(t), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
            let (mut da, mut db) = (Diagnostics::new(), Diagnostics::new());
            let _ = a.step(&h, &mut da).unwrap_or_else(|e| panic!("{e}"));
            let _ = b.step(&h, &mut db).unwrap_or_else(|e| panic!("{e}"));
            assert!(rel_close(da["alpha"], db["alpha"], 1e-14));
            // A zero sample weight keeps the example out, even when it is badly misclassified.
            let sw = [1.0, 1.0, 0.0, 1.0, 1.0];
            let mut c = TAdaBoost::new(&params(t), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
            let mut stats = vec![0.0; 5];
            for _ in 0..3 {
                let _ = c.step(&h, &mut Diagnostics::new()).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(c.weights()[2], 0.0);
                c.statistics(&mut stats);
                assert_eq!(stats[2], 0.0);
            }
        }
        // Frequency weights (issue 14): every copy starts at the same q_1 (co-density 1/m per copy,
        // here in the unit of the multiplicities c = w n/Σw: 1/n), the tree's weights ∝ w.
        let sw = [1.0, 2.0, 3.0, 4.0, 0.0];
        let b = TAdaBoost::new(&params(0.5), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
        let mut stats = vec![0.0; 5];
        b.statistics(&mut stats);
        for i in 0..5 {
            let want = if sw[i] > 0.0 { 1.0 / 5.0 } else { 0.0 };
            assert!((b.weights()[i].powf(1.5) - want).abs() < 1e-15, "{i}");
            assert!((stats[i].abs() - sw[i] / 10.0).abs() < 1e-15, "{i}: {stats:?}");
        }
    }

    #[test]
    fn statistics_layout() {
        let y = [1.0, -1.0, -1.0];
        for lw in [LearnerWeights::Normalized, LearnerWeights::CoDensity] {
            let p = TAdaBoostParams { t: 0.0, learner_weights: lw, ..Default::default() };
            let b = TAdaBoost::new(&p, labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            let mut stats = vec![9.0; 3];
            b.statistics(&mut stats);
            let stats = crate::boost::expand_signed(&stats);
            // t = 0: q = 3^(−1/2), normalised 1/3; co-density q² = 1/3.
            let third = 1.0 / 3.0;
            for (got, want) in stats.iter().zip([third, 0.0, 0.0, third, 0.0, third]) {
                assert!((got - want).abs() < 1e-15, "{lw:?}: {stats:?}");
            }
        }
    }

    /// Rounds of a booster on `n` random examples (several chunks), with hypotheses whose few
    /// distinct values mimic a tree's leaves; returns the statistics written after each round.
    fn issue_18_run(t: f64, sw: Option<&[f64]>, y: &[f64], seed: u64, fused: bool) -> (Vec<Vec<f64>>, TAdaBoost) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut b = match TAdaBoost::new(&params(t), labels(y, sw)) {
            Ok(b) => b,
            Err(e) => panic!("t = {t}: {e}"),
        };
        let mut stats = vec![0.0; y.len()];
        b.statistics(&mut stats);
        let mut out = vec![stats.clone()];
        for _ in 0..6 {
            let leaves: Vec<f64> = (0..8).map(|_| rng.gen_range(-1.5..1.5)).collect();
            let h: Vec<f64> = y.iter().map(|&yi| leaves[rng.gen_range(0..8)] + 0.3 * yi).collect();
            let mut diag = Diagnostics::new();
            let step = if fused {
                b.step_then_statistics(&h, &mut diag, &mut stats)
            } else {
                b.step(&h, &mut diag).inspect(|_| b.statistics(&mut stats))
            };
            match step {
                Ok(Step::Add { .. }) => out.push(stats.clone()),
                Ok(_) => break,
                Err(e) => panic!("t = {t}: {e}"),
            }
        }
        (out, b)
    }

    #[test]
    fn issue_18_fused_last_pass_writes_the_statistics_of_the_two_calls() {
        // 20,000 examples: three of the booster's 8,192-row chunks.
        let n = 20_000;
        let mut rng = ChaCha8Rng::seed_from_u64(1818);
        let y = random_labels(&mut rng, n);
        let sw: Vec<f64> = (0..n).map(|i| if i % 97 == 0 { 0.0 } else { rng.gen_range(0.2..3.0) }).collect();
        for t in [0.0, 0.5, 0.6, 0.8, 1.0, 1.3] {
            for w in [None, Some(&sw[..])] {
                let (fused, b) = issue_18_run(t, w, &y, 7, true);
                let (two_calls, b2) = issue_18_run(t, w, &y, 7, false);
                let ctx = format!("t = {t}, weights: {}", w.is_some());
                assert!(fused.len() > 3, "{ctx}: only {} rounds", fused.len());
                // Bit for bit: statistics of every round, final weights and scores.
                assert_eq!(fused.len(), two_calls.len(), "{ctx}");
                for (a, c) in fused.iter().zip(&two_calls) {
                    assert!(a.iter().zip(c).all(|(a, c)| a.to_bits() == c.to_bits()), "{ctx}");
                }
                assert!(b.q.iter().zip(&b2.q).all(|(a, c)| a.to_bits() == c.to_bits()), "{ctx}");
                assert!(b.scores.iter().zip(&b2.scores).all(|(a, c)| a.to_bits() == c.to_bits()), "{ctx}");
                // And they are SPEC §5's d = c q/Σ c q (naive serial sum), signed by the label.
                let last = &fused[fused.len() - 1];
                let c = |i: usize| b.c.as_ref().map_or(1.0, |c| c[i]);
                let total: f64 = (0..n).map(|i| c(i) * b.q[i]).sum();
                for i in 0..n {
                    let want = y[i] * c(i) * b.q[i] / total;
                    assert!(rel_close(last[i], want, 1e-13) || (last[i] == 0.0 && want == 0.0), "{ctx} i = {i}");
                }
                // The co-simplex holds to 1e−12 (SPEC §5), each copy counted.
                let tt = b.t();
                let co: f64 = (0..n).map(|i| c(i) * b.q[i].powf(2.0 - tt)).sum();
                assert!((co - 1.0).abs() < 1e-12, "{ctx}: Σ c q^(2−t) = {co}");
            }
        }
    }

    #[test]
    fn issue_18_integer_power_kernel_matches_the_scalar_update() {
        // t = 0.8 (1/(1−t) snapped to 5) and t = 0.5 (2), 0.75 (4): the update by powi_seq agrees with
        // SPEC §5's scalar update `tempered_update` (exp/log, no snap) to 1e−12 relative, on three
        // chunks of weights that move over several orders of magnitude.
        let n = 20_000;
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        let y = random_labels(&mut rng, n);
        for t in [0.5, 0.75, 0.8] {
            assert!(snapped_int_exponent(1.0 / (1.0 - t)).is_some(), "t = {t}");
            let mut b = match TAdaBoost::new(&params(t), labels(&y, None)) {
                Ok(b) => b,
                Err(e) => panic!("{e}"),
            };
            let mut checked = 0;
            for round in 0..10 {
                let h = random_h(&mut rng, &y, 1);
                let q_old = b.weights().to_vec();
                let mut diag = Diagnostics::new();
                match b.step(&h, &mut diag) {
                    Ok(Step::Add { .. }) => {}
                    other => panic!("t = {t} round {round}: {other:?}"),
                }
                let (mu, z) = (diag["mu"], diag["z"]);
                for i in 0..n {
                    let want = tempered_update(q_old[i], mu, y[i] * h[i], t) / z;
                    assert!(rel_close(b.weights()[i], want, 1e-12), "t = {t} round {round} i = {i}");
                    checked += 1;
                }
                let co: f64 = b.weights().iter().map(|q| q.powf(2.0 - t)).sum();
                assert!((co - 1.0).abs() < 1e-12, "t = {t} round {round}: {co}");
                // q^(1−t) is kept in step with q.
                assert!(b.q.iter().zip(&b.qs).all(|(q, qs)| rel_close(q.powf(1.0 - t), *qs, 1e-13)));
            }
            assert_eq!(checked, 10 * n);
        }
    }

    #[test]
    fn issue_18_fused_passes_are_the_same_at_any_thread_count() {
        let n = 40_000;
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let y = random_labels(&mut rng, n);
        let sw: Vec<f64> = (0..n).map(|_| rng.gen_range(0.5..2.0)).collect();
        for (t, w) in [(0.8, None), (0.6, Some(&sw[..])), (1.0, None)] {
            let run = |threads: usize| {
                let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                    Ok(p) => p,
                    Err(e) => panic!("{e}"),
                };
                pool.install(|| {
                    let (stats, b) = issue_18_run(t, w, &y, 3, true);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    (stats.iter().map(|s| bits(s)).collect::<Vec<_>>(), bits(&b.q), bits(&b.scores))
                })
            };
            let one = run(1);
            assert!(one.0.len() > 3);
            for threads in [2, 3] {
                assert!(one == run(threads), "t = {t}: 1 and {threads} threads differ");
            }
        }
    }

    /// Issue 18 (session 8): `step_on_leaves` (the passes read each row's leaf and the leaf values;
    /// the models move in the update's pass) gives the dense `step_then_statistics`'s state bit for
    /// bit — weights, `q^(1−t)`, both models, statistics, diagnostics — for every kernel and regime,
    /// with and without sample weights, with shrinkage, at 1 and 2 threads.
    #[test]
    fn issue_18_step_on_leaves_equals_the_dense_step() {
        let n = 2 * CHUNK + 777;
        let mut rng = ChaCha8Rng::seed_from_u64(1888);
        let y = random_labels(&mut rng, n);
        let sw: Vec<f64> = (0..n).map(|i| if i % 61 == 0 { 0.0 } else { rng.gen_range(0.3..2.5) }).collect();
        let rounds: Vec<(Vec<u32>, Vec<f64>)> = (0..6)
            .map(|_| {
                let leaves = rng.gen_range(2..9u32);
                let values: Vec<f64> = (0..leaves).map(|_| rng.gen_range(-1.2..1.2)).collect();
                // Leaves that lean towards the label, so that the rounds have an edge.
                let of_row = y
                    .iter()
                    .map(|&yi| {
                        let l = rng.gen_range(0..leaves);
                        if rng.gen_bool(0.3) && values[l as usize] * yi < 0.0 {
                            (l + 1) % leaves
                        } else {
                            l
                        }
                    })
                    .collect();
                (of_row, values)
            })
            .collect();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for t in [0.0, 0.5, 0.6, 0.8, 0.97, 1.0, 1.3] {
            for w in [None, Some(&sw[..])] {
                for lr in [1.0, 0.6] {
                    let make = || {
                        let mut b = match TAdaBoost::new(&params(t), labels(&y, w)) {
                            Ok(b) => b,
                            Err(e) => panic!("t = {t}: {e}"),
                        };
                        b.set_learning_rate(lr);
                        b
                    };
                    for threads in [1, 2] {
                        let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                            Ok(p) => p,
                            Err(e) => panic!("{e}"),
                        };
                        let ctx = format!("t = {t}, weights: {}, ν = {lr}, {threads} thread(s)", w.is_some());
                        let (mut dense, mut leaves) = (make(), make());
                        let (mut s1, mut s2, mut h) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                        let (mut added, mut naive) = (0, vec![0.0; n]);
                        for (of_row, values) in &rounds {
                            let hd: Vec<f64> = of_row.iter().map(|&l| values[l as usize]).collect();
                            let (mut g1, mut g2) = (Diagnostics::new(), Diagnostics::new());
                            let a = pool.install(|| dense.step_then_statistics(&hd, &mut g1, &mut s1));
                            let b = pool.install(|| leaves.step_on_leaves(of_row, values, &mut h, &mut g2, &mut s2));
                            let (a, b) = match (a, b) {
                                (Ok(a), Ok(b)) => (a, b),
                                other => panic!("{ctx}: {other:?}"),
                            };
                            assert_eq!(a, b, "{ctx}");
                            assert_eq!(bits(&dense.q), bits(&leaves.q), "{ctx}: weights");
                            assert_eq!(bits(&dense.qs), bits(&leaves.qs), "{ctx}: q^(1−t)");
                            assert_eq!(bits(&dense.scores), bits(&leaves.scores), "{ctx}: scores");
                            assert_eq!(bits(&dense.clipped), bits(&leaves.clipped), "{ctx}: clipped scores");
                            assert_eq!(bits(&s1), bits(&s2), "{ctx}: statistics");
                            assert_eq!(format!("{g1:?}"), format!("{g2:?}"), "{ctx}: diagnostics");
                            let Step::Add { alpha } = a else { break };
                            // The linear model moved by α h (SPEC §5), h = the leaf values of the rows.
                            for (f, hv) in naive.iter_mut().zip(&hd) {
                                *f += alpha * hv;
                            }
                            assert_eq!(bits(&naive), bits(&leaves.scores), "{ctx}: H = Σ α h");
                            added += 1;
                        }
                        assert!(added >= 3, "{ctx}: only {added} rounds");
                        let d = leaves.delta.unwrap_or(f64::INFINITY);
                        assert!(leaves.clipped_scores().iter().all(|v| v.abs() <= d), "{ctx}");
                    }
                }
            }
        }
        // A leaf index the tree learner would never write is a bad tree output of its row, not a
        // panic; a wrong number of rows is an error; neither changes the booster.
        let mut b = match TAdaBoost::new(&params(0.8), labels(&y, None)) {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        };
        let q0 = b.q.clone();
        let (mut h, mut st) = (vec![0.0; n], vec![0.0; n]);
        let mut of_row = vec![0u32; n];
        of_row[5] = 9;
        let err = b.step_on_leaves(&of_row, &[0.5, -0.5], &mut h, &mut Diagnostics::new(), &mut st);
        assert!(matches!(&err, Err(Error::Numerical(m)) if m == "tree output NaN at row 5"), "{err:?}");
        let err = b.step_on_leaves(&[0, 1], &[0.5, -0.5], &mut h, &mut Diagnostics::new(), &mut st);
        assert!(matches!(&err, Err(Error::InvalidData(m)) if m.ends_with("examples but 2 leaves")), "{err:?}");
        assert_eq!(bits(&b.q), bits(&q0));
    }

    #[test]
    fn issue_18_non_finite_tree_output_names_its_row() {
        let y = vec![1.0, -1.0, 1.0, -1.0];
        let mut b = match TAdaBoost::new(&params(0.8), labels(&y, None)) {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        };
        let q = b.weights().to_vec();
        let err = b.step(&[0.5, f64::NAN, 0.5, f64::INFINITY], &mut Diagnostics::new());
        assert!(matches!(&err, Err(Error::Numerical(m)) if m == "tree output NaN at row 1"), "{err:?}");
        assert_eq!(b.weights(), &q[..], "a failed round leaves the weights as they were");
    }

    #[test]
    fn parameters() {
        let p = TAdaBoostParams::default();
        assert!(p.check().is_ok());
        for bad in [-0.1, 2.0, f64::NAN, f64::INFINITY] {
            let p = TAdaBoostParams { t: bad, ..Default::default() };
            assert!(matches!(p.check(), Err(Error::InvalidParam { name: "t", .. })));
        }
        let json = serde_json::to_string(&p).unwrap_or_default();
        assert!(json.contains("\"leaf_values\":\"optimal\"") && json.contains("\"overflow\":\"fallback\""));
        let back: TAdaBoostParams = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, p);
        let partial: TAdaBoostParams =
            serde_json::from_str(r#"{"t": 0.6, "learner_weights": "co-density"}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(partial.t, 0.6);
        assert_eq!(partial.learner_weights, LearnerWeights::CoDensity);

        let y = [1.0, -1.0];
        let b = TAdaBoost::new(&params(0.6), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.stat_width(), 2);
        assert_eq!(b.n_outputs(), 1);
        assert_eq!(b.default_criterion(), Criterion::Tempered { t: 0.6 });
        assert_eq!(b.leaf_rule(), LeafRule::Tempered { t: 0.6, link: TemperedLink::Optimal });
        assert_eq!(b.clip_delta(), Some(2.5));
        let b = TAdaBoost::new(&params(1.0 - 1e-10), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.t(), 1.0);
        assert_eq!(b.clip_delta(), None);

        let p = TAdaBoostParams { t: 0.6, leaf_values: TemperedLink::Canonical, ..Default::default() };
        let b = TAdaBoost::new(&p, labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b.leaf_rule(), LeafRule::Tempered { t: 0.6, link: TemperedLink::Canonical });

        // Bad labels.
        assert!(TAdaBoost::new(&p, labels(&[1.0, 0.0], None)).is_err());
        assert!(TAdaBoost::new(
            &p,
            Labels { n: 2, k: 2, y: &[1.0, -1.0, 1.0, -1.0], class: None, sample_weight: None }
        )
        .is_err());
        assert!(TAdaBoost::new(&p, labels(&y, Some(&[0.0, 0.0]))).is_err());
        assert!(TAdaBoost::new(&p, labels(&y, Some(&[1.0, -1.0]))).is_err());
        assert!(TAdaBoost::new(&p, labels(&y, Some(&[1.0]))).is_err());
        assert!(TAdaBoost::new(&p, labels(&[], None)).is_err());
    }
}

#[cfg(test)]
mod schedule_tests;
