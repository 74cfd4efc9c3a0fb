//! t-AdaBoost (Nock, Amid, Warmuth 2023; docs/explanation/tadaboost.md#tadaboost-algorithm): AdaBoost with tempered exponential measures.
//!
//! The booster keeps tempered weights `q` on the co-simplex (`Σ q^(2−t) = 1`) and, each round,
//! turns the tree's outputs into the edge `ρ`, the weight leverage `µ`, the model leverage `α` and
//! the tempered update `q ← exp_t(log_t q − µu)/Z`. At `t = 1` it is AdaBoost with the α of SPEC
//! §4.2(a) applied to `h/R`.
//!
//! Numerics. All per-example quantities are expressed relative to `R`: `a_i = u_i/(R q_i^(1−t))`
//! lies in `[−1, 1]` and the update is `q_i (1 − (1−t) ν a_i)^(1/(1−t))` with `ν = µR`, evaluated as
//! `q_i exp(ln_1p(x)/(1−t))`; `ν = tanh((1−t) atanh ρ)/(1−t)` is the closed form of docs/explanation/tadaboost.md#tadaboost-algorithm's
//! `−log_t((1−ρ)/M_{1−t}(1−ρ, 1+ρ))` (see `tempered::link_optimal`), finite at `ρ = ±1` for every
//! `t ≠ 1` and continuous at `t = 1`. `Π Z` is kept as a logarithm.
//!
//! Cost per round. Beside `q` the booster keeps `q^(1−t)`, updated by docs/explanation/tadaboost.md#tadaboost-update: own
//! recurrence `q̃^(1−t) = q^(1−t) − (1−t)µu` and scaled by `Z^(−(1−t))`, so that `R`, the
//! co-densities `q^(2−t) = q · q^(1−t)` and `Z` need no `pow` per example: one transcendental
//! call per example and round remains (`q̃ = (q̃^(1−t))^(1/(1−t))`, or the `ln_1p`/`exp` form near
//! `t = 1` and when `|ρ| ≈ 1`). The per-example passes — the edge, the update with the models and
//! training errors (they were the last pass's), the normalisation writing the
//! next statistics — read each row's leaf and the leaf values rather than a written `h`
//! ([`Booster::step_on_leaves`]), and run in parallel over fixed chunks of examples whose partial
//! sums are added in chunk order, so results do not depend on the number of threads. Three passes
//! are the fewest that keep the weights' bits: `µ` needs the edge's sums over every example before
//! any weight moves, and the learner's `d = q/Σq` needs `Z` (a sum over the updated weights)
//! before its first value. The update overwrites the weights and models in place unless a weight
//! may overflow (then it works on copies, so that a failed round leaves the booster unchanged).
//!
//! Two consequences of docs/explanation/tadaboost.md#tadaboost-update: `R_j = max |u|/q^(1−t)`, verified by the tests: `|ν| ≤ 1/|1−t|`
//! implies `q^(1−t) − (1−t)µu ≥ 0` for every weight in `R`'s maximum, so (in exact arithmetic)
//! a weight switches off (`t < 1`) or overflows (`t > 1`) only when `|ρ| = 1` exactly. Overflow
//! therefore happens only when `ρ` rounds to ±1 while an example of negligible weight is maximally
//! wrong; it is still detected before use and handled by [`OverflowPolicy`].

mod kernels;
mod normalize;

use rayon::prelude::*;

use super::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::math::tempered::{is_one, t_star};
use crate::tree::{Criterion, LeafRule};
use crate::util::fastmath::snapped_int_exponent;
use crate::util::traffic::{self, Pass};
use kernels::*;
use normalize::*;

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

/// t-AdaBoost's side of the boosting loop (docs/explanation/tadaboost.md#tadaboost-algorithm). Binary labels only.
///
/// Sample weights are frequency weights: example `i` stands for `wᵢ` copies of itself,
/// each with the tempered weight `qᵢ`, so every sum over examples of docs/explanation/tadaboost.md#tadaboost-algorithm is a sum over the
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
    /// The labels `±1` as one byte each (every pass reads them; `f64::from`
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
    /// `m` of docs/explanation/tadaboost.md#tadaboost-algorithm in the multiplicities' unit: the number of examples `n` (see the type's doc).
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
    /// Learning rate ν.
    lr: f64,
    /// The ranks' collective (local by default), and with several ranks the learner's
    /// normaliser `Σ q` (`Σ c q`) over every rank, updated at the end of each round.
    coll: Shared,
    dist_q_sum: Option<f64>,
    /// On one machine, the learner's normaliser `Σ c q` of the current weights: summed
    /// in fixed chunks, or after a normal round `Z⁻¹ Σ c q̃` from the update's pass (equal up to
    /// rounding), so that the last pass of a round can write the next statistics.
    q_sum: f64,
    /// The schedule of t, its length in rounds, and the number of rounds stepped.
    schedule: Option<TSchedule>,
    sched_len: usize,
    round: usize,
    /// `ln min cᵢ` over the positive multiplicities (0 without sample weights): `ln_q_cap` at any t.
    ln_c_min: f64,
}

impl TAdaBoost {
    /// Builds the booster for binary labels (`labels.k == 1`, `y ∈ {−1, +1}`).
    pub fn new(params: &TAdaBoostParams, labels: Labels) -> Result<Self> {
        Self::new_on(params, labels, &Shared::default())
    }

    /// [`TAdaBoost::new`] for this rank's examples of the ranks of `coll`: `m`, the
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
        // `n` is the number of examples of every rank (this rank has `n_local`).
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
        // A schedule starts at its first temperature.
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
        // docs/explanation/tadaboost.md#tadaboost-algorithm: q_1 = m^(−t*) (co-density 1/m) for every copy of an example; an example of
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
            // q_1 = m^(−1/(2−t)) is below the smallest normal float (≈ e^−708) once
            // 2 − t < ln m / 708: the largest usable t for m examples, rounded down.
            let t_max = ((2.0 - m.ln() / 708.0) * 1e4).floor() / 1e4;
            let q1 = if q1 == 0.0 { "0".to_string() } else { format!("{q1:e}") };
            return Err(Error::Numerical(format!(
                "t-AdaBoost cannot start at t = {t}: the initial weights m^(−1/(2−t)) of its {n} examples \
                 underflow to {q1} and cannot be normalised (Z = {z}); use t ≤ {t_max} with this many examples"
            )));
        }
        flush_subnormals(&mut q);
        // With a schedule, the clipped model is that of its last temperature.
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

    /// With several ranks, the learner's normaliser `Σ q` (`Σ c q`) over every rank:
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
        traffic::add(Pass::Normalisation, traffic::bytes(q) + c.map_or(0, traffic::bytes), 0);
        crate::util::par::map_chunks_of(q.len(), chunk_len(q.len()), |rows| {
            rows.map(|i| q[i] * mult(c, i)).sum::<f64>()
        })
        .into_iter()
        .sum()
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
        traffic::add(Pass::Normalisation, traffic::bytes(&self.q), traffic::bytes(&self.qs));
        let chunk = chunk_len(self.q.len());
        self.qs.par_chunks_mut(chunk).zip(self.q.par_chunks(chunk)).for_each(|(qsc, qc)| {
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
    /// With a schedule, `t` is the schedule's last temperature `T1`, for every round:
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

    /// Moves the booster to temperature `t_new` between two rounds (`t_schedule`),
    /// keeping the co-density fixed.
    ///
    /// Rule: `p = q^(2−t)` is kept and `q` is re-expressed on the new co-simplex,
    /// `q'ᵢ = pᵢ^(1/(2−t'))`, then renormalised by `Z' = (Σ cᵢ q'ᵢ^(2−t'))^(1/(2−t'))` (1 up to
    /// rounding, since `Σ cᵢ pᵢ = 1`); the log normaliser product becomes
    /// `ln Π Z ← ln Π Z · (2−t)/(2−t')`.
    ///
    /// Derivation. At a fixed t the normalised weights are `q = Q/Λ` with `Λ = m^(t*) Π Z` and
    /// unnormalised weights `Q = exp_t(−yH)` (each `Q` starts at 1; docs/explanation/tadaboost.md#tadaboost-clipped, Lemma E), and
    /// `α = Λ^(1−t) µ` (`Λ^(1−t) = m^(1−t*)(Π Z)^(1−t)`, since `t*(1−t) = 1 − t*`) is the step `µ` on
    /// `q` expressed on `Q`'s scale. Keeping every example's unnormalised co-density `Q^(2−t)`
    /// fixed gives `Q' = Q^((2−t)/(2−t'))`; its normalised form is `q' = Q'/Λ'` with
    /// `Λ' = Λ^((2−t)/(2−t'))`, i.e. exactly `q' = p^(1/(2−t'))` (because
    /// `m^(t'*)·m^(−t*(2−t)/(2−t')) = 1`) and `Π Z' = (Π Z)^((2−t)/(2−t'))`. So the co-density `p`,
    /// the total unnormalised co-density mass `m (Π Z)^(2−t)` (hence the reported bound
    /// `Π Z^(2−t)`) and which examples are off (`p = 0`) are all unchanged, and the next rounds are
    /// those of a fixed-`t'` booster started from the weights `Q'`: its `α` keeps `Q'`'s scale.
    /// What is lost is docs/explanation/tadaboost.md#tadaboost-schedule: identity `Q = exp_t(−yH)` with the model's own margins (the
    /// carried `Q'` is `exp_t'` of another margin of the same sign), so the training-error bound
    /// `Π Z^(2−t)` is proved only for a constant t; it is still reported.
    pub fn retemper(&mut self, t_new: f64) {
        // One machine: the renormalisation takes no reduction and cannot fail.
        let normalize = |q: &mut [f64], c: Option<&[f64]>, t: f64| Ok(co_simplex_normalize_mult(q, c, t));
        let _infallible = self.retemper_with(t_new, normalize);
    }

    /// [`TAdaBoost::retemper`] on this rank's examples: the renormaliser `Z'` sums
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
        let chunk = chunk_len(self.q.len());
        self.q.par_chunks_mut(chunk).for_each(|qc| {
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

    /// The training-error bound `Π_j Z_j^(2−t)` so far (docs/explanation/tadaboost.md#tadaboost-algorithm).
    pub fn bound(&self) -> f64 {
        ((2.0 - self.t) * self.ln_prod_z).exp()
    }

    /// `ρ`, `R` and the switched-off summary for edges `u = y·h` (docs/explanation/tadaboost.md#tadaboost-algorithm). `None` when `h` is 0
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
        // Per row: the label, q, q^(1−t) (tempered), the tree output, the sample weight and the
        // multiplicity when given.
        let optional = w.map_or(0, traffic::bytes) + c.map_or(0, traffic::bytes);
        let tempered = if TEMPERED { traffic::bytes(qs) } else { 0 };
        traffic::add(Pass::BoosterStep, traffic::bytes(y) + traffic::bytes(q) + tempered + n * H::WIDTH + optional, 0);
        // One pass: the tree outputs' finiteness, `umax` and the unscaled sums.
        let parts = crate::util::par::map_chunks_of(n, chunk_len(n), |rows| {
            let mut p = EdgeSums::default();
            for i in rows {
                let hi = h.at(i);
                if !hi.is_finite() {
                    p.bad_row = p.bad_row.min(i);
                }
                // docs/explanation/tadaboost.md#tadaboost-algorithm: off_j = {i : q_ji = 0}; a positive q implies a positive sample weight.
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
            // The edge's sums over every rank (one call). The unscaled sums of each rank
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
        // docs/explanation/tadaboost.md#tadaboost-algorithm: R_j = max_{i ∉ off} |u_i|/q_i^(1−t) = umax · r_rel; |u|/umax ≤ 1 and
        // q ≥ f64::MIN_POSITIVE keep every ratio finite for t ∈ [0, 2).
        let r_rel = sums.ratio_max;
        let (s, e) = (1.0 - self.t, 2.0 - self.t);
        let m_dag = sums.m_dag;
        let v_dag_max = sums.off_max / r_rel;
        // docs/explanation/tadaboost.md#tadaboost-algorithm: q† = max_{off} (|u|/R)^(1/(1−t)); ρ = Σ q' u / ((1 + m† q†^(2−t)) R).
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
    /// and moves the models `scores` (`H`) and `clipped` (`S`) by `α h` in the same pass.
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
            // `m` is the number of examples (of every rank): 1/m is the uniform weight.
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
        // The clipped model exists for t < 1, and with a schedule whose last t is below 1.
        let clip = self.delta.is_some();
        let chunk = chunk_len(q.len());
        let n_chunks = q.len().div_ceil(chunk);
        // Per row: the label, the tree output, the sample weight and multiplicity when given read;
        // q, q^(1−t), the score and the clipped score read and written.
        let moved = traffic::bytes(q) + traffic::bytes(qs) + traffic::bytes(scores) + traffic::bytes(clipped);
        let optional = self.w.as_deref().map_or(0, traffic::bytes) + self.c.as_deref().map_or(0, traffic::bytes);
        traffic::add(Pass::BoosterUpdate, traffic::bytes(&self.y) + q.len() * H::WIDTH + optional + moved, moved);
        let jobs: Vec<_> = q
            .chunks_mut(chunk)
            .zip(chunks_of(qs, chunk, n_chunks))
            .zip(scores.chunks_mut(chunk).zip(chunks_of(clipped, chunk, n_chunks)))
            .enumerate()
            .collect();
        let vectorised = update_power_int_applies(kernel, &ctx);
        let parts: Vec<UpdateSums> = jobs
            .into_par_iter()
            .map(|(c, (w, m))| {
                let base = c * chunk;
                #[cfg(target_arch = "x86_64")]
                if vectorised {
                    // SAFETY: `update_power_int_applies` checked that the CPU has AVX2, the only
                    // requirement of calling a `#[target_feature(enable = "avx2")]` function.
                    #[allow(unsafe_code)]
                    return unsafe {
                        if clip {
                            update_power_int_avx2::<true, H>(&ctx, base, w, m)
                        } else {
                            update_power_int_avx2::<false, H>(&ctx, base, w, m)
                        }
                    };
                }
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
            // Z's sum over every rank (one call). The models' sums travel with the
            // round's last sums.
            let mut sum = [sums.sum, sums.n_inf as f64, sums.inf_weight];
            let mut max = [sums.qmax];
            self.coll.sum_max(&mut sum, &mut max)?;
            (sums.sum, sums.n_inf, sums.inf_weight, sums.qmax) = (sum[0], sum[1] as usize, sum[2], max[0]);
        }
        Ok(sums)
    }

    /// The last pass of a round: scales the weights by `1/Z` (`q^(1−t)` by `1/Z^(1−t)`) when
    /// `inv_z` is given and flushes subnormal weights (docs/explanation/tadaboost.md#tadaboost-algorithm: `q_{j+1} = q̃/Z_j`). Returns the
    /// co-density range and the number of zero weights (the models moved in the update's pass,
    /// Their sums are left at 0 here).
    ///
    /// With `stats = (stats, 1/Σ c q)`, it also writes the next round's statistics
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
        let chunk = chunk_len(y.len());
        let n_chunks = y.len().div_ceil(chunk);
        // q and q^(1−t) read and written; the label (with the statistics), the sample weight and
        // the multiplicity read.
        let moved = traffic::bytes(&self.q) + traffic::bytes(&self.qs);
        let optional = w.map_or(0, traffic::bytes) + mults.map_or(0, traffic::bytes);
        if STATS {
            traffic::add(Pass::BoosterStatistics, moved + traffic::bytes(y) + optional, moved + traffic::bytes(stats));
        } else {
            traffic::add(Pass::Normalisation, moved + optional, moved);
        }
        let jobs: Vec<_> = self
            .q
            .chunks_mut(chunk)
            .zip(chunks_of(&mut self.qs, chunk, n_chunks))
            .zip(chunks_of(stats, chunk, n_chunks))
            .enumerate()
            .collect();
        let parts: Vec<FinishSums> = jobs
            .into_par_iter()
            .map(|(c, ((qc, qsc), stc))| {
                if TEMPERED && STATS && w.is_none() && mults.is_none() {
                    let yc = &y[c * chunk..(c * chunk + qc.len()).min(y.len())];
                    return finish_plain((qc, qsc, stc), yc, (scale, scale_s, s, norm));
                }
                let mut p = FinishSums::default();
                for (i, q) in qc.iter_mut().enumerate() {
                    let g = c * chunk + i;
                    // docs/explanation/tadaboost.md#tadaboost-algorithm: q_{j+1} = q̃/Z_j, so q_{j+1}^(1−t) = q̃^(1−t)/Z_j^(1−t).
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
                        // The next round's statistics (`Booster::statistics`).
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
        traffic::add(
            Pass::BoosterStatistics,
            traffic::bytes(q) + traffic::bytes(y) + c.map_or(0, traffic::bytes),
            traffic::bytes(stats),
        );
        // docs/explanation/tadaboost.md#tadaboost-algorithm: d_j = q_j/Σq (option: co-density q^(2−t)). Frequency weights: the copies of
        // example i together weigh c_i q_i (or c_i q_i^(2−t)).
        if self.params.learner_weights == LearnerWeights::CoDensity {
            fill_chunks(stats, |i| super::signed(f64::from(y[i]), mult(c, i) * codensity(q[i], e, regime)));
        } else {
            // With several ranks, Σq over every rank (kept by `sync_q_sum`); on
            // one machine, the kept `q_sum` (what the fused last pass of a round uses).
            let norm = 1.0 / self.dist_q_sum.unwrap_or(self.q_sum);
            fill_chunks(stats, |i| stat_value(f64::from(y[i]), mult(c, i), q[i], norm));
        }
    }

    fn step_then_statistics(&mut self, h: &[f64], diag: &mut Diagnostics, stats: &mut [f64]) -> Result<Step> {
        self.check_rows(h.len(), "tree outputs")?;
        self.advance(h, diag, Some(stats))
    }

    /// The passes read each row's leaf and the leaf values (no `h`).
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
        // Rebuilt with the totals of every rank.
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

    /// One round (docs/explanation/tadaboost.md#tadaboost-algorithm); with `stats`, the next round's statistics too, written by the round's
    /// last pass when the round is a normal one, else by [`Booster::statistics`]
    /// afterwards: the same values either way.
    fn advance<H: Outputs + ?Sized>(
        &mut self,
        h: &H,
        diag: &mut Diagnostics,
        mut stats: Option<&mut [f64]>,
    ) -> Result<Step> {
        // A non-finite tree output is an error of the edge's pass (no pass of its own).
        let t = self.t;
        let s = 1.0 - t;
        let e = 2.0 - t;
        if self.schedule.is_some() {
            // The temperature of this round, in the history.
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

        // ν = µ_j R_j. docs/explanation/tadaboost.md#tadaboost-algorithm: µ_j = −(1/R_j) log_t((1−ρ)/M_{1−t}(1−ρ, 1+ρ))
        //                          = tanh((1−t) atanh ρ) / ((1−t) R_j).
        let mut perfect = false;
        let nu = if self.regime == Regime::One {
            // docs/explanation/tadaboost.md#tadaboost-t-one at t = 1: µ = (1/(2R)) ln((1+ρ)/(1−ρ)); docs/explanation/adaboost.md#adaboost-discrete: a perfect learner keeps a
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
                // hypothesis switches every weight off and boosting stops (docs/explanation/tadaboost.md#tadaboost-algorithm).
                rho = rho.signum();
            }
            (s * rho.atanh()).tanh() / s
        };
        if nu == 0.0 || !nu.is_finite() {
            return Ok(Step::Stop { reason: format!("the weak hypothesis has no edge (ρ = {rho})") });
        }
        // Shrinkage scales µ_j (hence α_j and the weight update) by the learning rate.
        let nu = super::shrink(self.lr, nu);
        let mu = nu / edge.umax / edge.r_rel;
        // docs/explanation/tadaboost.md#tadaboost-algorithm: α_j = m^(1−t*) (Π_{k<j} Z_k)^(1−t) µ_j, the scale factor in log space (α = µ at
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
        // The update's pass also moves the models, so they are copied with
        // the weights.
        let (mut q, mut qs, mut scores, mut clipped) = if in_place {
            (
                std::mem::take(&mut self.q),
                std::mem::take(&mut self.qs),
                std::mem::take(&mut self.scores),
                std::mem::take(&mut self.clipped),
            )
        } else {
            let copied = traffic::bytes(&self.q) + traffic::bytes(&self.qs) + traffic::bytes(&self.scores);
            traffic::add(
                Pass::BoosterUpdate,
                copied + traffic::bytes(&self.clipped),
                copied + traffic::bytes(&self.clipped),
            );
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
        // docs/explanation/tadaboost.md#tadaboost-algorithm: Z_j = (Σ q̃^(2−t))^(1/(2−t)); q_{j+1} = q̃/Z_j.
        let (z, inv_z) = if n_inf > 0 {
            // docs/explanation/tadaboost.md#tadaboost-overflow (authors' fallback): overflowed weights n_inf^(−t*), others 0, Z = 1
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

        // The next learner normaliser Σ c q = Z⁻¹ Σ c q̃ after a normal round; then, on one
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
            // The round's last sums and the next learner normaliser (one call).
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
            // (docs/explanation/tadaboost.md#tadaboost-algorithm): clip events of the clipped model on the training sample this
            // round; Lemma E says the upper clip never binds there.
            let u = if self.c.is_some() { unit } else { 1.0 }; // counts in rows, as `n_zero`
            diag.insert("clip_events_upper", fin.clip_upper * u);
            diag.insert("clip_events_lower", fin.clip_lower * u);
        }

        // The next round's temperature (a no-op without a schedule or a change).
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
mod schedule_tests;
#[cfg(test)]
mod tests;
