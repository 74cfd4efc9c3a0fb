//! SecBoost: boosting any loss from loss values only (Nock & Mansour 2024; docs/explanation/secboost.md#secboost-algorithm).
//!
//! The booster keeps, per training example, the edge `ẽ_i = y_i H_t(x_i)`, the current offset
//! `v_i` and the weight `w_i = −δ_{v_i} F(ẽ_i)` (a secant slope: no derivative of `F` is ever
//! used — [`Loss`] has none). Weights may be negative for non-monotone losses: the tree then sees
//! the relabelled example `ỹ_i = y_i·sign(w_i)` with weight `|w_i|`.
//!
//! One round ([`Booster::step`]):
//! 1. `M_t = max_i |h_t(x_i)|`, `η_t = mean_i w_i y_i h_t(x_i)`;
//! 2. `(α_t, W̄_t, ε_t, q̄_t)` from the certified Solve_α ([`solve_alpha_certified`], the default)
//!    or the paper's rule ([`solve_alpha`], [`SolveAlphaRule::Paper`]), or the closed form
//!    `W̄ = 2β`, `α = η/(2(1+ε)M²W̄)` when the loss declares a smoothness constant β
//!    ([`AlphaRule`]; under the certified rule the closed form is kept only if `q̄_t ≤ z_t`);
//! 3. `ẽ_i ← ẽ_i + α_t y_i h_t(x_i)`;
//! 4. new offsets from the offset oracle ([`OffsetOracle`]) with OBI budget `z_t = ε α² M² W̄`;
//!    stop if some example has no admissible offset;
//! 5. `w_i ← −δ_{v_i} F(ẽ_i)`; stop if all weights are zero.
//!
//! Sample weights `s_i` enter as the weights of the empirical means: the risk is
//! `Σ s_i F(ẽ_i) / Σ s_i`, and `η`, `W̄` and `W̄_1` are the same weighted means (equivalently, `s` is
//! rescaled to mean 1 and every `mean_i` of docs/explanation/secboost.md#secboost-algorithm becomes `(1/m) Σ_i s_i ·`). The tree
//! statistics are `s_i |w_i|`, normalised to sum to 1.
//!
//! Notes on behaviour (checked numerically):
//! - With smooth convex losses (logistic, exponential) the training risk decreases at every round
//!   (tested over random data).
//! - The paper's progress bound does not cover very non-convex losses as the algorithm is written:
//!   its proof needs the OBI of the *previous* offsets at the *new* edges,
//!   `Q*_F(ẽ_(t+1)i, ẽ_ti, v_ti) ≤ z_(t+1)`, whereas the oracle bounds `Q*_F(ẽ_ti, ẽ_(t−1)i, v_ti) ≤ z_t`.
//!   With the spring loss at `Q = 1` and `δ_init = 1` the risk can rise (0.178 → 0.483 in one
//!   round on a separable toy problem, where the proof's quantity averaged 3.9 against z = 0.74)
//!   and the run can settle into a 2-cycle `h, −h`. A smaller `delta_init` avoids it; the paper
//!   notes that the spring loss "may need early stopping when δ_init is large".
//! - The paper's rule ([`solve_alpha`]) puts α at the upper end of the admissible interval
//!   (`π_t = 1`), where the theorem guarantees no decrease; with the spring loss the risk does rise
//!   (`spring:Q=500`, δ_init = 1, 2-leaf trees on tic-tac-toe).
//!
//! The certificate (docs/explanation/secboost.md#secboost-certificate as corrected). Every round records `B_t = |α_t η_t| −
//! α_t² M_t² W̄_t`, `z_t`, `q̄_t = mean_i Q*_F(ẽ_ti, ẽ_(t−1)i, v_(t−1)i)` (the OBI of the offsets
//! that produced `w_t`, at the new edges), `π_t` and `B_t − q̄_t`. For any α (either rule),
//! `F(S, H_t) ≤ F(S, H_(t−1)) − (B_t − q̄_t)`: with `e_i = α y_i h_i` and `v = v_(t−1)i`, the OBI at
//! `x = ẽ_(t−1)i` gives `F(ẽ_ti) ≤ F(ẽ_(t−1)i) + e_i δ_vF(ẽ_ti) + Q_i`, and
//! `δ_vF(ẽ_ti) = −w_ti + e_i δ_{v,e_i}F(ẽ_(t−1)i)`; averaging gives `−α η_t + α² M_t² W + q̄_t`.
//! The certified rule accepts α only when `q̄_t ≤ κ B_t`, so every accepted round decreases the
//! risk by at least `(1 − κ) B_t > 0`. `q̄_t` is evaluated on the grid of `4Z + 1` points from
//! `ẽ_ti` to `ẽ_(t−1)i` (both included), a lower estimate of the exact OBI that still contains the
//! point `x = ẽ_(t−1)i` the inequality uses; convex losses use the convex form `Q_F(ẽ, ẽ + v,
//! ẽ + v)`: the exact maximum in closed form for the built-in ones, the unimodal search
//! for user losses.
//!
//! Speed (docs/explanation/secboost.md#secboost-speed): the partial weights and `W` of every
//! trial α are one parallel pass over fixed chunks (`secant_pass`), with a convex loss's `q̄`
//! terms in the same pass; with a convex loss that is not a batch closure, the new edges,
//! offsets, weights and every sum of the round are one more pass (`update`), and the sums the
//! next round starts from are kept with the state (`StateSums`). Under the paper's rule, a
//! non-convex loss's `q̄` terms come from the grid oracle's own loss values
//! ([`offset_grid_and_obi`]: `4Z + 3` evaluations a row instead of `9Z + 4`), bit for bit.

mod logistic;
pub mod obi;
pub mod oracle;
mod solve_alpha;
mod update;

use rayon::prelude::*;

use crate::util::par::ROW_CHUNK;

use oracle::{offset_convex, offset_grid, offset_grid_and_obi, offsets_many, OffsetChoice};
use solve_alpha::{
    edge_sum_and_max, mean_obi, secant_from_values, secant_pass, shifted, solve_alpha_certified_on, solve_alpha_on,
    Known, Order2, Red, Scratch, TrialPass, QBAR_GRID,
};
pub use solve_alpha::{solve_alpha, solve_alpha_certified, AlphaInput, AlphaSolution, CertifiedAlpha};
use update::Outputs;

use super::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::math::loss::Loss;
use crate::tree::{Criterion, LeafRule};
use crate::util::traffic::{self, Pass};

pub use crate::params::secboost::{AlphaRule, OffsetOracle, SecBoostParams, SolveAlphaRule};

/// A leaf value of exactly 0 is replaced by this (docs/explanation/secboost.md#secboost-algorithm: `h_t(x_i) ≠ 0` on the training set).
pub const NONZERO_LEAF: f64 = 1e-6;

// ------------------------------------------------------------------------------------------------
// The booster
// ------------------------------------------------------------------------------------------------

/// SecBoost's state between rounds (docs/explanation/secboost.md#secboost-algorithm). Binary labels only.
#[derive(Debug)]
pub struct SecBoost {
    params: SecBoostParams,
    loss: Loss,
    y: Vec<f64>,
    /// Sample weights rescaled to mean 1: frequency weights (every mean over the
    /// examples of docs/explanation/secboost.md#secboost-algorithm, `F(S, H)`, `η`, `W`, is `Σ swᵢ (...)ᵢ / n = Σ wᵢ (...)ᵢ / Σ w`, the mean
    /// over the repeated rows).
    sw: Vec<f64>,
    /// `Σw/n` (1 without weights): a sum of `sw` times this is a sum of sample weights.
    sw_unit: f64,
    /// Every sample weight is 1 (no weights, or equal ones): the loops that would multiply by
    /// them do not read them (the same bits).
    unit_weights: bool,
    /// The round ends by the general path even where the one-pass update applies (set by the
    /// tests that compare the two, bit for bit, on the same loss).
    general_path: bool,
    /// `ẽ_i = y_i H_t(x_i)`.
    edges: Vec<f64>,
    /// `v_ti`.
    offsets: Vec<f64>,
    /// `w_(t+1)i = −δ_{v_ti} F(ẽ_ti)`.
    weights: Vec<f64>,
    /// `F(ẽ_i)` (0 for a row of sample weight 0), or none when the round's update summed them
    /// without keeping them ([`SecBoost::trial_ahead`]): see [`SecBoost::loss_values`].
    losses: Vec<f64>,
    leaf_eps: f64,
    round: u64,
    /// Learning rate ν.
    lr: f64,
    /// The ranks' collective (local by default), the number of examples of every rank,
    /// the global index of this rank's first example (the random offsets are seeded by it), and
    /// with several ranks the learner's normaliser `Σ |w| s` over every rank.
    coll: Shared,
    n_all: f64,
    row0: usize,
    dist_total: Option<f64>,
    /// Row vectors of earlier rounds, reused for the next round's state (no fresh pages a round).
    spare: Vec<Vec<f64>>,
    /// The sums of the current state the next round needs, when the one-pass update computed
    /// them with the state (None: computed from the rows when needed).
    state_sums: Option<StateSums>,
}

/// Sums over the current state (edges, weights, loss values), in the order a pass over them
/// from scratch would add them ([`chunked_sum`]).
#[derive(Debug, Clone, Copy)]
struct StateSums {
    /// `Σ s_i F(ẽ_i)` ([`SecBoost::risk_sum`]).
    risk: f64,
    /// `Σ s_i w_i` (`W̄_1` times the number of examples).
    w1: f64,
    /// `Σ s_i |w_i|`, the tree statistics' normaliser.
    abs_total: f64,
    /// `max(1, max |ẽ_i|)` over the rows of positive sample weight.
    edge_scale: f64,
}

/// The offset oracle's choices, or the first example without an admissible offset.
type OracleResult = std::result::Result<Vec<OffsetChoice>, usize>;

/// splitmix64 of (seed, round, example): the seed of one example's random offset, so results do
/// not depend on the order (or thread) in which examples are processed.
fn offset_seed(seed: u64, round: u64, i: usize) -> u64 {
    let mut x = seed ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// `(0..m).map(f)` with `f` called once per distinct `key` (in parallel), its
/// result copied to the rows with the same key — bit for bit `(0..m).map(f)` when `f(i)` depends
/// on `i` only through `key(i)`, except for results where `redo` holds (a seeded random offset,
/// which depends on the row): `f` is called again for those rows.
fn per_distinct_row<T: Clone + Send + Sync>(
    m: usize,
    key: impl Fn(usize) -> [u64; 3] + Sync,
    f: impl Fn(usize) -> T + Sync + Send,
    redo: impl Fn(&T) -> bool + Sync,
) -> Vec<T> {
    let mut first: std::collections::HashMap<[u64; 3], usize> = std::collections::HashMap::with_capacity(m);
    // rep[i]: the first row with row i's key.
    let rep: Vec<usize> = (0..m).map(|i| *first.entry(key(i)).or_insert(i)).collect();
    let reps: Vec<usize> = (0..m).filter(|&i| rep[i] == i).collect();
    let mut slot = vec![usize::MAX; m];
    for (k, &i) in reps.iter().enumerate() {
        slot[i] = k;
    }
    let vals: Vec<T> = reps.par_iter().with_min_len(16).map(|&i| f(i)).collect();
    (0..m)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let v = &vals[slot[rep[i]]];
            if rep[i] != i && redo(v) {
                f(i)
            } else {
                v.clone()
            }
        })
        .collect()
}

/// `Σ_i term(i)` over `0..n`: a serial sum from 0 over each fixed chunk of rows, the chunks'
/// sums added in order from 0 (the same bits for any thread count).
fn chunked_sum(n: usize, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    crate::util::par::map_chunks(n, |r| {
        let mut s = 0.0;
        for i in r {
            s += term(i);
        }
        s
    })
    .into_iter()
    .fold(0.0, |t, s| t + s)
}

/// One row's tree statistic: the weight `w`'s magnitude times the sample weight `s` and the
/// normaliser `scale`, signed by the relabelled label `ỹ = y·sign(w)`
/// (docs/explanation/secboost.md#secboost-algorithm).
#[inline(always)]
fn statistic(w: f64, y: f64, s: f64, scale: f64) -> f64 {
    let relabel = if w >= 0.0 { y } else { -y };
    super::signed(relabel, w.abs() * s * scale)
}

/// Row vectors given back to the spare ones (but not an empty one, which holds no memory).
fn give_back(spare: &mut Vec<Vec<f64>>, v: impl IntoIterator<Item = Vec<f64>>) {
    spare.extend(v.into_iter().filter(|v| v.capacity() > 0));
}

/// A round that ends early gives its row vectors back to the spare ones: those of the end computed
/// ahead, if any, and the loss values'.
fn recycle(spare: &mut Vec<Vec<f64>>, ahead: Option<[Vec<f64>; 3]>, fz: Vec<f64>) {
    give_back(spare, ahead.into_iter().flatten().chain([fz]));
}

/// Index and value of the first non-finite entry.
fn first_non_finite(v: &[f64]) -> Option<(usize, f64)> {
    // Whether there is one: a parallel pass with no branch; then where.
    let some = crate::util::par::map_chunks(v.len(), |r| v[r].iter().fold(false, |b, x| b | !x.is_finite()));
    if !some.contains(&true) {
        return None;
    }
    v.iter().position(|x| !x.is_finite()).map(|i| (i, v[i]))
}

/// `M = max |hᵢ|` over the examples of positive sample weight (`sw` rescaled, all ones without
/// weights): a row of weight 0 is a row left out.
fn max_abs_weighted(h: &[f64], sw: &[f64]) -> f64 {
    h.iter().zip(sw).fold(0.0_f64, |a, (&v, &s)| if s > 0.0 { a.max(v.abs()) } else { a })
}

/// Sets the weight and the loss value of every example of sample weight 0 to 0: they are left out
/// (a non-finite value there must neither stop the run nor reach a sum).
fn zero_left_out(sw: &[f64], weights: &mut [f64], losses: &mut [f64]) {
    for ((s, w), f) in sw.iter().zip(weights).zip(losses) {
        if *s == 0.0 {
            (*w, *f) = (0.0, 0.0);
        }
    }
}

impl SecBoost {
    /// Starts SecBoost on binary `labels` (`labels.k == 1`) with `loss`.
    ///
    /// `loss` is the loss used; when it is a built-in, it must equal `params.loss` (the spec that
    /// configurations record). The initial weights are `w_1,i = −δ_{v_0} F(y_i h_0)`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a bad parameter, a built-in `loss` other than `params.loss`, or
    /// `(h0, v0)` giving all-zero or non-finite initial weights; [`Error::InvalidData`] for labels
    /// that are not one column of ±1, or bad sample weights.
    pub fn new(params: SecBoostParams, loss: Loss, labels: Labels<'_>) -> Result<Self> {
        Self::new_on(params, loss, labels, &Shared::default())
    }

    /// [`SecBoost::new`] for this rank's examples of the ranks of `coll` (ranks hold
    /// consecutive rows in rank order): the sample weights' scale, `m` and the checks are over
    /// every rank (one call for the totals, one for the learner's normaliser).
    pub(crate) fn new_on(params: SecBoostParams, loss: Loss, labels: Labels<'_>, coll: &Shared) -> Result<Self> {
        let dist = coll.is_distributed();
        params.check()?;
        if let Some(spec) = loss.spec() {
            if *spec != params.loss {
                return Err(Error::param(
                    "loss",
                    format!("the loss named by params.loss (`{}`)", params.loss),
                    format!("`{}`", loss.name()),
                ));
            }
        }
        if let Some(jump) = loss.spec().and_then(|s| s.known_jumps().iter().find(|j| j.abs() == params.h0.abs())) {
            // docs/explanation/secboost.md#secboost-algorithm: the theorem needs F continuous at every current edge, including ẽ_0i = y_i h_0.
            return Err(Error::param(
                "h0",
                format!(
                    "an initial score whose edges ±h0 avoid the jump of loss `{}` at {jump} (Solve_α can never \
                     accept a step from a jump; e.g. h0 = -0.1 with v0 = 0.2 for the 0/1 loss)",
                    loss.name()
                ),
                params.h0,
            ));
        }
        if labels.k != 1 {
            return Err(Error::InvalidData(format!(
                "SecBoost is a binary booster: labels must have one column, got {}",
                labels.k
            )));
        }
        let n = labels.n;
        // Every rank's rows (`n_all`), this rank's first row's global index, Σ w.
        let (mut n_all, mut row0, mut sw_all) = (n, 0, labels.total_weight());
        if dist {
            let (size, rank) = (coll.get().size(), coll.get().rank());
            let mut b = vec![0.0; size + 1];
            (b[rank], b[size]) = (n as f64, sw_all);
            coll.sum(&mut b)?;
            n_all = b[..size].iter().sum::<f64>() as usize;
            row0 = b[..rank].iter().sum::<f64>() as usize;
            sw_all = b[size];
        }
        if n_all == 0 || labels.y.len() != n {
            return Err(Error::InvalidData(format!(
                "SecBoost needs n ≥ 1 labels (n = {n}, {} labels given)",
                labels.y.len()
            )));
        }
        if let Some(i) = labels.y.iter().position(|&v| v != 1.0 && v != -1.0) {
            return Err(Error::InvalidData(format!("label {i} is {}, not ±1", labels.y[i])));
        }
        let sw = match labels.sample_weight {
            None => vec![1.0; n],
            Some(s) => {
                if s.len() != n {
                    return Err(Error::InvalidData(format!("{} sample weights for {n} examples", s.len())));
                }
                if let Some(i) = s.iter().position(|&v| !(v.is_finite() && v >= 0.0)) {
                    return Err(Error::InvalidData(format!("sample weight {i} is {}", s[i])));
                }
                let total: f64 = if dist { sw_all } else { s.iter().sum() };
                if !(total > 0.0 && total.is_finite()) {
                    return Err(Error::InvalidData("sample weights sum to 0".into()));
                }
                let scale = n_all as f64 / total;
                s.iter().map(|v| v * scale).collect()
            }
        };
        let y = labels.y.to_vec();
        // docs/explanation/secboost.md#secboost-algorithm: H_0 = h_0, ẽ_0i = y_i h_0, v_0i = v_0, w_1,i = −δ_{v_0} F(ẽ_0i).
        let edges: Vec<f64> = y.iter().map(|y| y * params.h0).collect();
        let offsets = vec![params.v0; n];
        let mut weights = vec![0.0; n];
        let mut scratch = Scratch::default();
        scratch.secant_weights(&loss, edges.iter().copied(), &offsets, &mut weights);
        let mut losses = scratch.fz.clone();
        zero_left_out(&sw, &mut weights, &mut losses);
        if let Some((i, w)) = first_non_finite(&weights).or_else(|| first_non_finite(&losses)) {
            return Err(Error::param(
                "v0",
                format!("finite loss values near y·h0 (loss `{}`)", loss.name()),
                format!("{} (example {i}: {w})", params.v0),
            ));
        }
        let mut nonzero = weights.iter().zip(&sw).filter(|(w, s)| **w != 0.0 && **s != 0.0).count() as f64;
        let mut total = weights.iter().zip(&sw).map(|(w, s)| w.abs() * s).sum::<f64>();
        if dist {
            // The check and the learner's normaliser over every rank (one call).
            let mut b = [nonzero, total];
            coll.sum(&mut b)?;
            [nonzero, total] = b;
        }
        if nonzero == 0.0 {
            return Err(Error::param(
                "v0",
                format!(
                    "h0 and v0 with δ_v0 F(y·h0) ≠ 0 for some example (loss `{}`, h0 = {})",
                    loss.name(),
                    params.h0
                ),
                params.v0,
            ));
        }
        Ok(SecBoost {
            // docs/explanation/weak-learners.md#weak-learners-smoothing/§4.4: ε = 1/(2m), m = Σ wᵢ (n without sample weights).
            leaf_eps: 0.5 / sw_all,
            sw_unit: sw_all / n_all as f64,
            unit_weights: sw.iter().all(|&s| s == 1.0),
            general_path: false,
            params,
            loss,
            y,
            sw,
            edges,
            offsets,
            weights,
            losses,
            round: 0,
            lr: 1.0,
            coll: coll.clone(),
            n_all: n_all as f64,
            row0,
            dist_total: dist.then_some(total),
            spare: Vec::new(),
            state_sums: None,
        })
    }

    /// [`SecBoost::new`] with the built-in loss named by `params.loss`.
    pub fn from_params(params: SecBoostParams, labels: Labels<'_>) -> Result<Self> {
        let loss = Loss::from_spec(&params.loss)?;
        SecBoost::new(params, loss, labels)
    }

    /// The constant `H_0 = h_0` the ensemble's decision function starts from.
    pub fn init_score(&self) -> f64 {
        self.params.h0
    }

    /// The loss being boosted.
    pub fn loss(&self) -> &Loss {
        &self.loss
    }

    /// The current edges `ẽ_i = y_i H_t(x_i)`.
    pub fn edges(&self) -> &[f64] {
        &self.edges
    }

    /// The current offsets `v_ti`.
    pub fn offsets(&self) -> &[f64] {
        &self.offsets
    }

    /// The weights for the next round, `w_(t+1)i = −δ_{v_ti} F(ẽ_ti)` (may be negative).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The current training risk `F(S, H_t) = Σ s_i F(ẽ_i) / Σ s_i`.
    pub fn risk(&self) -> f64 {
        self.risk_sum() / self.n_all
    }

    /// The current weighted training error (`H(x) > 0` predicts +1; a score of 0 predicts −1).
    pub fn train_error(&self) -> f64 {
        self.train_error_sum() / self.n_all
    }

    /// `Σ s_i [wrong]` of [`SecBoost::train_error`], over fixed chunks in order (as the round's
    /// one-pass update adds it).
    fn train_error_sum(&self) -> f64 {
        chunked_sum(self.y.len(), |i| update::wrong(self.y[i], self.edges[i], self.sw[i]))
    }

    /// `Σ s_i F(ẽ_i)` of [`SecBoost::risk`], over fixed chunks in order (as the round's one-pass
    /// update adds it).
    fn risk_sum(&self) -> f64 {
        self.state_sums.map_or_else(
            || {
                let f = self.loss_values();
                chunked_sum(self.y.len(), |i| self.sw[i] * f[i])
            },
            |k| k.risk,
        )
    }

    /// `F(ẽ_i)` of the current edges, 0 for a row of sample weight 0: the kept values, else (after
    /// an update that summed them without keeping them) computed anew, the same bits.
    fn loss_values(&self) -> std::borrow::Cow<'_, [f64]> {
        if self.losses.len() == self.y.len() {
            return std::borrow::Cow::Borrowed(&self.losses);
        }
        let mut f = self.loss.values(&self.edges);
        for (f, s) in f.iter_mut().zip(&self.sw) {
            if *s == 0.0 {
                *f = 0.0;
            }
        }
        std::borrow::Cow::Owned(f)
    }

    /// Gives row vectors back to the spare ones ([`give_back`]).
    fn give_back(&mut self, v: impl IntoIterator<Item = Vec<f64>>) {
        give_back(&mut self.spare, v);
    }

    /// New offsets for every example; `Err(i)` for the first example without an admissible one.
    /// With `qbar_points` (a non-convex, non-batch loss under the grid oracle), also every
    /// example's `Q*_F(ẽ_ti, ẽ_(t−1)i, v_(t−1)i)` on that many grid points — the terms of `q̄` —
    /// from the loss values the oracle evaluates anyway ([`offset_grid_and_obi`]).
    fn oracle(&self, new_edges: &[f64], z: f64, qbar_points: Option<usize>) -> (OracleResult, Option<Vec<f64>>) {
        let p = &self.params;
        if let (Some(np), false) = (qbar_points, self.loss.is_batch()) {
            let grid_and_obi = |i: usize| {
                let seed = offset_seed(p.seed, self.round, self.row0 + i);
                let (e_t, e_prev, v_prev) = (new_edges[i], self.edges[i], self.offsets[i]);
                let (lo, hi) = (p.oracle_precision, p.oracle_max_doublings);
                offset_grid_and_obi(&self.loss, e_t, e_prev, v_prev, z, lo, hi, seed, np)
            };
            let key = |i: usize| [new_edges[i].to_bits(), self.edges[i].to_bits(), self.offsets[i].to_bits()];
            let (found, q): (Vec<Option<OffsetChoice>>, Vec<f64>) =
                per_distinct_row(self.y.len(), key, grid_and_obi, |c| c.0.is_some_and(|c| c.random))
                    .into_iter()
                    .unzip();
            return (self.admissible(found), Some(q));
        }
        let convex = p.oracle == OffsetOracle::Auto && self.loss.declared_convex();
        let one = |i: usize| -> Option<OffsetChoice> {
            let seed = offset_seed(p.seed, self.round, self.row0 + i);
            let (e_t, e_prev) = (new_edges[i], self.edges[i]);
            if convex {
                Some(offset_convex(&self.loss, e_t, e_prev, z, p.oracle_precision, seed))
            } else {
                offset_grid(&self.loss, e_t, e_prev, z, p.oracle_precision, p.oracle_max_doublings, seed)
            }
        };
        let found: Vec<Option<OffsetChoice>> = if !convex && !self.loss.is_batch() {
            // The grid oracle (≥ Z + 1 loss evaluations a row) once per
            // distinct (ẽ_t, ẽ_(t−1)) (small discrete data repeat them).
            let key = |i: usize| [new_edges[i].to_bits(), self.edges[i].to_bits(), 0];
            per_distinct_row(self.y.len(), key, one, |c| c.is_some_and(|c| c.random))
        } else if self.loss.is_batch() {
            // A batch closure (e.g. a Python callable) is only ever called from this thread, and
            // once per oracle step for all examples (the lockstep oracles, bit-identical).
            let seeds: Vec<u64> = (0..self.y.len()).map(|i| offset_seed(p.seed, self.round, self.row0 + i)).collect();
            offsets_many(
                &self.loss,
                new_edges,
                &self.edges,
                z,
                p.oracle_precision,
                p.oracle_max_doublings,
                convex,
                &seeds,
            )
        } else {
            (0..self.y.len()).into_par_iter().with_min_len(64).map(one).collect()
        };
        (self.admissible(found), None)
    }

    /// The oracle's choices, rows of sample weight 0 left out; `Err(i)` for the first example
    /// without an admissible offset.
    fn admissible(&self, found: Vec<Option<OffsetChoice>>) -> OracleResult {
        // A row of sample weight 0 is left out: it needs no admissible offset, keeps
        // its offset and counts in no diagnostic.
        let left_out = OffsetChoice { v: 0.0, obi: 0.0, random: false };
        found
            .into_iter()
            .enumerate()
            .map(
                |(i, c)| {
                    if self.sw[i] > 0.0 {
                        c.ok_or(i)
                    } else {
                        Ok(OffsetChoice { v: self.offsets[i], ..left_out })
                    }
                },
            )
            .collect()
    }
}

impl Booster for SecBoost {
    fn n_outputs(&self) -> usize {
        1
    }

    fn default_criterion(&self) -> Criterion {
        // The paper's experiments grow trees with Matusita's criterion.
        Criterion::Matusita
    }

    /// Real-valued leaves `½ ln((W+ + ε)/(W− + ε))` with `ε = 1/(2m)` (statistics sum to 1): the
    /// paper grows its trees with Matusita's criterion, and the half log-ratio is the leaf value
    /// whose Z is that criterion (docs/explanation/weak-learners.md#weak-learners-leaf-values, §4.4); SecBoost allows any finite non-zero real `h`
    /// (its `M_t` normalises the confidences). The smoothing keeps pure leaves finite.
    fn leaf_rule(&self) -> LeafRule {
        LeafRule::HalfLogRatio { eps: self.leaf_eps }
    }

    /// docs/explanation/secboost.md#secboost-algorithm requires `h_t(x_i) ≠ 0` on the training set: a leaf value of exactly 0 (a tie
    /// `W+ = W−`) or a non-finite one becomes [`NONZERO_LEAF`].
    fn finish_leaves(&self, values: &mut [f64]) {
        for v in values {
            if *v == 0.0 || !v.is_finite() {
                *v = NONZERO_LEAF;
            }
        }
    }

    /// `(|w_i| s_i, 0)` if `ỹ_i = y_i·sign(w_i) = +1`, else `(0, |w_i| s_i)`, normalised to sum to 1
    /// (a zero weight keeps its label).
    fn statistics(&self, stats: &mut [f64]) {
        // With several ranks, the normaliser over every rank (kept by the step).
        let total: f64 = self.dist_total.unwrap_or_else(|| {
            self.state_sums
                .map_or_else(|| chunked_sum(self.y.len(), |i| self.weights[i].abs() * self.sw[i]), |k| k.abs_total)
        });
        let scale = if total > 0.0 && total.is_finite() { 1.0 / total } else { 0.0 };
        // The normaliser's pass (on one machine, unless the update kept it), then the weights,
        // sample weights and labels read and the statistics written.
        let (w, total_pass) = (traffic::bytes(&self.weights), self.dist_total.is_none() && self.state_sums.is_none());
        traffic::add(Pass::Normalisation, if total_pass { 2 * w } else { 0 }, 0);
        traffic::add(Pass::BoosterStatistics, (2 + usize::from(!self.unit_weights)) * w, traffic::bytes(stats));
        // Parallel over fixed chunks (each row's value is its own). One loop of no index and no
        // branch per case, so that it runs in vector instructions.
        let rows = |(k, stats): (usize, &mut [f64])| {
            let r = k * ROW_CHUNK..k * ROW_CHUNK + stats.len();
            let rows = stats.iter_mut().zip(&self.weights[r.clone()]).zip(&self.y[r.clone()]);
            if self.unit_weights {
                // (Unit sample weights are not read: a multiplication by 1 changes no bit.)
                rows.for_each(|((st, &w), &y)| *st = statistic(w, y, 1.0, scale));
            } else {
                rows.zip(&self.sw[r]).for_each(|(((st, &w), &y), &s)| *st = statistic(w, y, s, scale));
            }
        };
        stats.par_chunks_mut(ROW_CHUNK).enumerate().for_each(rows);
    }

    fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn set_collective(&mut self, c: Shared, labels: Labels<'_>) -> Result<()> {
        if !self.coll.is_distributed() {
            // Rebuilt with the totals of every rank.
            let lr = self.lr;
            *self = Self::new_on(self.params.clone(), self.loss.clone(), labels, &c)?;
            self.lr = lr;
        }
        Ok(())
    }

    /// One SecBoost round (docs/explanation/secboost.md#secboost-algorithm, steps 2.2–2.7). Diagnostics: `risk_prev` (F(S, H_(t−1))), the
    /// certificate `b` (B_t), `qbar` (q̄_t), `pi` (π_t), `certified_decrease`
    /// (B_t − q̄_t, so that `risk ≤ risk_prev − certified_decrease`), `certified` (1 under the
    /// certified rule, 0 under the paper's), `closed_form` (β-smooth losses under `auto`: 1 if the
    /// closed-form α was kept), and `eta`, `alpha`, `w2` (W̄_2),
    /// `epsilon`, `z_obi` (the OBI budget z_t), `mean_abs_weight` (W̄_1 = |mean_i w_ti| of the
    /// paper's eq. 16, for the weights this round used), `risk` (F(S, H_t)), `train_error`, and
    /// `halvings`, `max_obi`, `random_offsets`, `zero_weights`, `negative_weights` (of the new
    /// weights).
    ///
    /// Stops (with `stop_reason`): `Stop` when `h` is 0 everywhere or has zero edge η;
    /// `AddAndStop` when some example has no admissible offset, or when all new weights are 0.
    ///
    /// # Errors
    /// [`Error::InvalidData`] if `h` has the wrong length; [`Error::Numerical`] for non-finite `h`,
    /// a failing [`solve_alpha`], or a loss value that is not finite at the new edges.
    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        self.step_on(Outputs::Dense(h), h, diag)
    }

    /// With the round's end computed in Solve_α's trial passes on one machine, the passes read the
    /// leaves; the outputs are written out only if the round needs them after its first pass (a
    /// refused first guess: the update's own pass).
    fn step_on_leaves(
        &mut self,
        leaf_of_row: &[u32],
        leaf_values: &[f64],
        h: &mut [f64],
        diag: &mut Diagnostics,
        stats: &mut [f64],
    ) -> Result<Step> {
        let step = if self.first_trial_ahead() && h.len() == leaf_of_row.len() {
            self.step_on(Outputs::Leaves { of_row: leaf_of_row, values: leaf_values }, h, diag)?
        } else {
            super::driver::tree_outputs(leaf_of_row, leaf_values, 1, h);
            self.step(h, diag)?
        };
        self.statistics(stats);
        Ok(step)
    }
}

impl SecBoost {
    /// [`Booster::step`] on the weak hypothesis's `outputs`, given as a vector or as a tree's
    /// leaves.
    ///
    /// `h`: the outputs as a vector, or, when the trial passes read them from the leaves (which
    /// [`SecBoost::step_on_leaves`] does only when every pass of the round is a trial pass but a
    /// fallback's, which writes them out), a buffer of their length that is never read.
    fn step_on(&mut self, outputs: Outputs<'_>, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        let m = self.y.len();
        if h.len() != m || outputs.len() != m {
            return Err(Error::InvalidData(format!("SecBoost: {} outputs for {m} examples", outputs.len())));
        }
        let coll = self.coll.clone();
        let red = Red { coll: &coll, n: self.n_all };
        let certified = self.params.solve_alpha == SolveAlphaRule::Certified;
        // The round's end computed in Solve_α's trial passes, when it can be (update.rs): the new
        // edges, offsets and weights of the last pass, and its sums. (Not with the closed-form α,
        // which comes first.)
        let mut ahead = self.ends_ahead().then(|| {
            // (Every pass writes every row: a vector of the right length is not zeroed first, an
            // 8 MB fill on one thread at 1M rows, 4 % of a round at 2 threads.)
            std::array::from_fn::<_, 3, _>(|_| {
                let mut v = self.spare.pop().unwrap_or_default();
                v.resize(m, 0.0);
                v
            })
        });
        // F at the new edges, when Solve_α computed it at the α it returns (not with the end
        // computed ahead, whose passes sum the loss values without keeping them).
        let mut fz_new = if ahead.is_some() { Vec::new() } else { self.spare.pop().unwrap_or_default() };
        fz_new.clear();
        // On one machine the first trial (α = δ_init, as η is positive for a tree grown on
        // this round's statistics) runs before η and M, and sums them, and checks the outputs: one
        // pass over the rows less. A negative η makes it a wasted pass.
        let first = ahead.as_mut().filter(|_| self.first_trial_ahead()).map(|out| {
            let sw = (!self.unit_weights).then_some(&self.sw[..]);
            let order2 = Order2 { w: &self.weights, sw, qbar: true, losses: false };
            self.trial_ahead(self.params.delta_init, outputs, order2, out)
        });
        debug_assert!(first.is_some() || matches!(outputs, Outputs::Dense(_)));
        let bad_output = match &first {
            Some((_, sums)) => sums.bad_output.map(|i| (i, outputs.at(i))),
            None => first_non_finite(h),
        };
        if let Some((i, v)) = bad_output {
            recycle(&mut self.spare, ahead, fz_new);
            return Err(Error::Numerical(format!("weak hypothesis output {v} at example {i}")));
        }
        // The step's first sums (on one machine): the outputs' finiteness; W̄_1 (sample weights,
        // weights); the risk (sample weights, losses); M (outputs, sample weights); η (sample
        // weights, weights, labels, outputs).
        let n = self.n_all;
        // The sums of this state that the last round's one-pass update kept (else one pass each).
        let kept = self.state_sums.take();
        let own = if first.is_some() { 0 } else { 5 };
        traffic::add(Pass::BoosterStep, if kept.is_some() { own } else { own + 4 } * traffic::bytes(h), 0);
        let w1_sum = kept.map_or_else(|| chunked_sum(m, |i| self.sw[i] * self.weights[i]), |k| k.w1);
        let risk_sum = kept.map_or_else(|| self.risk_sum(), |k| k.risk);
        let (eta_sum, m_local) = match &first {
            Some((_, sums)) => (sums.eta.total(), sums.m),
            None => edge_sum_and_max((!self.unit_weights).then_some(&self.sw), &self.weights, &self.y, h),
        };
        let (risk_prev, w1_sum, m_t, eta) = if coll.is_distributed() {
            // F(S, H_(t−1)), W̄_1, M_t and η_t over every rank (one call).
            let mut sums = [risk_sum, w1_sum, eta_sum];
            let mut max = [m_local];
            coll.sum_max(&mut sums, &mut max)?;
            (sums[0] / n, sums[1], max[0], sums[2] / n)
        } else {
            (risk_sum / n, w1_sum, m_local, eta_sum / n)
        };
        let known =
            Known { m_eta: Some((m_t, eta)), edge_scale: kept.map(|k| k.edge_scale), unit_weights: self.unit_weights };
        // F(S, H_(t−1)), so that the record alone checks the certificate.
        diag.insert("risk_prev", risk_prev);
        self.round += 1;
        let p = &self.params;
        // docs/explanation/secboost.md#secboost-algorithm: W̄_1 = |mean w_t| (eq. 16 of the paper).
        let w1 = (w1_sum / n).abs();
        diag.insert("mean_abs_weight", w1);
        // docs/explanation/secboost.md#secboost-algorithm: M_t = max |h_t(x_i)|, η_t = η(w_t, h_t).
        if m_t == 0.0 || eta == 0.0 {
            recycle(&mut self.spare, ahead, fz_new);
            if m_t == 0.0 {
                return Ok(Step::Stop { reason: "the weak hypothesis is 0 on every training example".into() });
            }
            diag.insert("eta", eta);
            return Ok(Step::Stop { reason: "the weak hypothesis has zero edge (η = 0)".into() });
        }
        diag.insert("eta", eta);
        let input = AlphaInput {
            loss: &self.loss,
            y: &self.y,
            h,
            sample_weight: &self.sw,
            edges: &self.edges,
            offsets: &self.offsets,
            weights: &self.weights,
        };
        let obi_points = QBAR_GRID * p.oracle_precision;
        // q̄ at a trial α: the OBI of the offsets v_(t−1) at the new edges (docs/explanation/secboost.md#secboost-algorithm).
        let qbar_at = |alpha: f64| {
            let ne: Vec<f64> = shifted(&self.edges, alpha, &self.y, h).collect();
            mean_obi(&self.loss, &self.sw, &ne, &self.edges, &self.offsets, obi_points, red)
        };
        // Under the paper's Solve_α, q̄ is a record only; for a non-convex loss under the
        // grid oracle its terms come from the oracle's own loss values (the same grid, bit for
        // bit), when the oracle's new edges are q̄'s (no shrinkage).
        let grid_oracle = p.oracle == OffsetOracle::Grid || !self.loss.declared_convex();
        let share_qbar =
            !certified && grid_oracle && !self.loss.declared_convex() && !self.loss.is_batch() && self.lr == 1.0;
        let mut chosen = None;
        if let (AlphaRule::Auto, Some(beta)) = (p.alpha_rule, self.loss.beta()) {
            // docs/explanation/secboost.md#secboost-algorithm: β-smooth F: W̄ = 2β, α = η/(2(1+ε)M²W̄) (the middle of the interval, π = 0).
            let w2 = 2.0 * beta;
            let alpha = eta / (2.0 * (1.0 + p.epsilon) * m_t * m_t * w2);
            let sol = AlphaSolution { alpha, w2, epsilon: p.epsilon, halvings: 0 };
            let qbar = qbar_at(alpha)?;
            // docs/explanation/secboost.md#secboost-algorithm: accepted only if q̄ ≤ ε α² M² W̄ (otherwise Solve_α) — the certified rule.
            let accepted = !certified || qbar <= p.epsilon * alpha * alpha * m_t * m_t * w2;
            diag.insert("closed_form", if accepted { 1.0 } else { 0.0 });
            if accepted {
                chosen = Some((sol, qbar));
            }
        }
        // (Not when the closed-form α was kept: its q̄ is computed already.)
        let share_qbar = share_qbar && chosen.is_none();
        // The first trial's pass, when it is Solve_α's (η > 0), and the sums of the last one.
        let first = first.filter(|_| eta > 0.0);
        let mut ahead_sums = first.map(|f| f.1);
        let (this, last) = (&*self, &mut ahead_sums);
        let mut trial_ahead = ahead.as_mut().map(|out| {
            move |alpha: f64, o: Order2<'_>| {
                let (p, s) = this.trial_ahead(alpha, outputs, o, out);
                *last = Some(s);
                p
            }
        });
        let (sol, qbar) = match chosen {
            Some(c) => c,
            None if certified => {
                match solve_alpha_certified_on(
                    &input,
                    p.delta_init,
                    p.max_halvings,
                    p.kappa,
                    obi_points,
                    red,
                    known,
                    &mut fz_new,
                    // F at the new edges is kept only without shrinkage (the edges are then
                    // Solve_α's trial edges).
                    self.lr == 1.0,
                    trial_ahead.as_mut().map(|t| t as TrialPass<'_>),
                    first.map(|f| f.0),
                )? {
                    Some(c) => (c.solution, c.qbar),
                    None => {
                        recycle(&mut self.spare, ahead, fz_new);
                        self.record(diag)?; // of H_(t−1), which is kept
                        return Ok(Step::Stop {
                            reason: format!(
                                "certified Solve_α accepted no α after {} halvings from δ_init = {} (loss `{}`, \
                                 κ = {}): no step with B > 0 and q̄ ≤ κB; H_(t−1) is kept",
                                p.max_halvings,
                                p.delta_init,
                                self.loss.name(),
                                p.kappa
                            ),
                        });
                    }
                }
            }
            None if share_qbar => {
                (solve_alpha_on(&input, p.delta_init, p.max_halvings, red, known, &mut fz_new)?, f64::NAN)
            }
            None => {
                let sol = solve_alpha_on(&input, p.delta_init, p.max_halvings, red, known, &mut fz_new)?;
                (sol, qbar_at(sol.alpha)?)
            }
        };
        let AlphaSolution { alpha, w2, epsilon, halvings } = sol;
        // Shrinkage, α ← ν·α before the edges, the OBI budget and the weights move.
        let alpha = super::shrink(self.lr, alpha);
        if !(alpha.is_finite() && alpha != 0.0) {
            return Err(Error::Numerical(format!("SecBoost: α = {alpha} (η = {eta}, M = {m_t}, W̄ = {w2})")));
        }
        diag.insert("alpha", alpha);
        diag.insert("w2", w2);
        diag.insert("epsilon", epsilon);
        diag.insert("halvings", halvings as f64);
        // docs/explanation/secboost.md#secboost-algorithm: B_t = |α_t η_t| − α_t² M_t² W̄_t; π_t = |2 r_t (1 + ε_t) − 1|, r_t = |α_t| M_t² W̄_t / |η_t|;
        // the certified decrease B_t − q̄_t: F(S, H_t) ≤ F(S, H_(t−1)) − (B_t − q̄_t).
        let b = (alpha * eta).abs() - alpha * alpha * m_t * m_t * w2;
        let r = alpha.abs() * m_t * m_t * w2 / eta.abs();
        diag.insert("b", b);
        diag.insert("pi", (2.0 * r * (1.0 + epsilon) - 1.0).abs());
        diag.insert("certified", if certified { 1.0 } else { 0.0 });
        if self.updates_in_one_pass() {
            // docs/explanation/secboost.md#secboost-algorithm: z_t = ε_t α_t² M_t² W̄_t.
            let z = epsilon * alpha * alpha * m_t * m_t * w2;
            diag.insert("z_obi", z);
            diag.insert("qbar", qbar);
            diag.insert("certified_decrease", b - qbar);
            // (Under shrinkage its vector goes back to the spare ones, for the update to take.)
            if let (Some(out), Some(sums)) = (ahead, ahead_sums) {
                let holds = Self::ahead_holds(&sums, z);
                #[cfg(test)]
                tests::AHEAD.with(|c| {
                    let [kept, refused] = c.get();
                    c.set([kept + usize::from(holds), refused + usize::from(!holds)]);
                });
                if holds {
                    let [edges, offsets, weights] = out;
                    // (The loss values were summed, not kept.)
                    return self.finish_update(alpha, outputs, [edges, offsets, weights, Vec::new()], sums, diag);
                }
                // Some first guess is refused at this budget: the update searches its offset.
                self.give_back(out);
            }
            let fz = if self.lr == 1.0 && fz_new.len() == m {
                Some(fz_new)
            } else {
                self.give_back([fz_new]);
                None
            };
            // (The outputs written out, when the passes read the leaves.)
            return self.update_convex(alpha, &outputs.dense(), z, fz, diag);
        }
        // docs/explanation/secboost.md#secboost-algorithm: ẽ_ti = ẽ_(t−1)i + α_t y_i h_t(x_i).
        // The new edges (edges, labels, outputs read) and their finiteness; the oracle (new edges,
        // edges, offsets read; a choice per row written); the offsets from the choices.
        let choice = std::mem::size_of::<OffsetChoice>() * m;
        traffic::add(
            Pass::BoosterUpdate,
            4 * traffic::bytes(h) + 3 * traffic::bytes(h) + choice,
            traffic::bytes(h) + choice,
        );
        traffic::add(Pass::BoosterUpdate, choice, traffic::bytes(h));
        let new_edges: Vec<f64> = shifted(&self.edges, alpha, &self.y, h).collect();
        if let Some((i, e)) = first_non_finite(&new_edges) {
            return Err(Error::Numerical(format!("SecBoost: edge {e} at example {i}")));
        }
        // docs/explanation/secboost.md#secboost-algorithm: z_t = ε_t α_t² M_t² W̄_t.
        let z = epsilon * alpha * alpha * m_t * m_t * w2;
        diag.insert("z_obi", z);
        let (mut offsets, q_terms) = self.oracle(&new_edges, z, share_qbar.then_some(obi_points));
        let qbar = match q_terms {
            // docs/explanation/secboost.md#secboost-algorithm: q̄ = mean_i Q*_F(ẽ_ti, ẽ_(t−1)i, v_(t−1)i), rows of weight 0 left out (as
            // `mean_obi`, in row order).
            Some(q) => red.mean(q.iter().zip(&self.sw).filter(|(_, s)| **s > 0.0).map(|(q, s)| s * q).sum::<f64>())?,
            None => qbar,
        };
        diag.insert("qbar", qbar);
        diag.insert("certified_decrease", b - qbar);
        let mut first_failed = None;
        if coll.is_distributed() {
            // Whether some rank's example has no admissible offset (the first, by
            // global index): every rank stops then (one call).
            let g = offsets.as_ref().err().map_or(f64::NEG_INFINITY, |&i| -((self.row0 + i) as f64));
            let g = coll.max(g)?;
            if g > f64::NEG_INFINITY {
                first_failed = Some(-g as usize);
                offsets = Err(0);
            }
        }
        // H_t is kept whatever happens next.
        let previous = std::mem::replace(&mut self.edges, new_edges);
        let choices = match offsets {
            Ok(c) => c,
            Err(_) if first_failed.is_some() => {
                self.losses = self.loss.values(&self.edges);
                self.record(diag)?;
                return Ok(Step::AddAndStop {
                    alpha,
                    reason: format!(
                        "no admissible offset: example {} has no offset with OBI ≤ z = {z:e} (a jump or cusp of \
                         the loss at its edge)",
                        first_failed.unwrap_or(0)
                    ),
                });
            }
            Err(i) => {
                self.losses = self.loss.values(&self.edges);
                self.record(diag)?;
                return Ok(Step::AddAndStop {
                    alpha,
                    reason: format!(
                        "no admissible offset: example {i} (edge {} after {}) has no offset with OBI ≤ z = {z:e} \
                         (a jump or cusp of the loss at its edge)",
                        self.edges[i], previous[i],
                    ),
                });
            }
        };
        let max_obi = choices.iter().fold(0.0_f64, |a, c| a.max(c.obi));
        self.offsets = choices.iter().map(|c| c.v).collect();
        // docs/explanation/secboost.md#secboost-algorithm: w_(t+1)i = −δ_{v_ti} F(ẽ_ti).
        let mut new_w = vec![0.0; m];
        // Parallel chunks (α = 0 adds nothing: the edges themselves).
        if fz_new.len() == m && self.lr == 1.0 && !self.loss.is_batch() {
            // F(ẽ_t) is Solve_α's `F(ẽ_(t−1) + α y h)` at the α kept (the same
            // sums, bit for bit): only F(ẽ_t + v_t) is evaluated.
            self.losses = fz_new;
            secant_from_values(&self.loss, &self.edges, &self.offsets, &self.losses, &mut new_w);
        } else {
            self.losses.resize(m, 0.0);
            secant_pass(
                &self.loss,
                &self.edges,
                0.0,
                &self.y,
                h,
                &self.offsets,
                Some(&mut new_w),
                &mut self.losses,
                None,
            );
        }
        zero_left_out(&self.sw, &mut new_w, &mut self.losses);
        // The left-out rows (sample weights), the finiteness of the weights and losses, the three
        // counts (sample weights with the choices or the weights) and the all-zero test.
        let wb = traffic::bytes(&new_w);
        traffic::add(Pass::BoosterUpdate, wb + 2 * wb + 3 * wb + choice + 2 * (wb) + 2 * wb, 0);
        if let Some((i, w)) = first_non_finite(&new_w).or_else(|| first_non_finite(&self.losses)) {
            return Err(Error::Numerical(format!(
                "loss `{}` is not finite near edge {} (example {i}: {w})",
                self.loss.name(),
                self.edges[i]
            )));
        }
        self.weights = new_w;
        // Counts of examples are sums of sample weights (in their unit; counts without weights).
        // (Summed as the one-pass update sums them.)
        let count_sum = |pick: &(dyn Fn(usize) -> bool + Sync)| -> f64 {
            chunked_sum(m, |i| if self.sw[i] > 0.0 && pick(i) { self.sw[i] } else { 0.0 })
        };
        let count = |pick: &(dyn Fn(usize) -> bool + Sync)| -> f64 { count_sum(pick) * self.sw_unit };
        let mut all_zero = self.weights.iter().zip(&self.sw).all(|(w, s)| *w == 0.0 || *s == 0.0);
        if coll.is_distributed() {
            // The round's last sums and the learner's next normaliser over every rank
            // (one call; the counts' sums before the unit scaling).
            let mut sums = [
                count_sum(&|i| choices[i].random),
                count_sum(&|i| self.weights[i] < 0.0),
                count_sum(&|i| self.weights[i] == 0.0),
                self.risk_sum(),
                self.train_error_sum(),
                f64::from(u8::from(!all_zero)),
                self.weights.iter().zip(&self.sw).map(|(w, s)| w.abs() * s).sum::<f64>(),
            ];
            let mut max = [max_obi];
            coll.sum_max(&mut sums, &mut max)?;
            diag.insert("max_obi", max[0]);
            diag.insert("random_offsets", sums[0] * self.sw_unit);
            diag.insert("negative_weights", sums[1] * self.sw_unit);
            diag.insert("zero_weights", sums[2] * self.sw_unit);
            diag.insert("risk", sums[3] / n);
            diag.insert("train_error", sums[4] / n);
            all_zero = sums[5] == 0.0;
            self.dist_total = Some(sums[6]);
        } else {
            diag.insert("max_obi", max_obi);
            diag.insert("random_offsets", count(&|i| choices[i].random));
            diag.insert("negative_weights", count(&|i| self.weights[i] < 0.0));
            diag.insert("zero_weights", count(&|i| self.weights[i] == 0.0));
            self.record(diag)?;
        }
        if all_zero {
            // docs/explanation/secboost.md#secboost-algorithm: if all w_(t+1)i = 0, stop.
            return Ok(Step::AddAndStop { alpha, reason: "all weights are zero".into() });
        }
        Ok(Step::Add { alpha })
    }

    /// Records the risk and the training error of `H_t` (over every rank, in one call).
    fn record(&self, diag: &mut Diagnostics) -> Result<()> {
        // The risk (sample weights, losses) and the training error (sample weights, edges, labels).
        traffic::add(Pass::BoosterUpdate, 5 * traffic::bytes(&self.sw), 0);
        if self.coll.is_distributed() {
            let mut b = [self.risk_sum(), self.train_error_sum()];
            self.coll.sum(&mut b)?;
            diag.insert("risk", b[0] / self.n_all);
            diag.insert("train_error", b[1] / self.n_all);
        } else {
            diag.insert("risk", self.risk());
            diag.insert("train_error", self.train_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::solve_alpha::*;
    use super::*;
    use crate::math::loss::LossSpec;
    use crate::util::fastmath::{cpu_builds, with_build};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::sync::Arc;

    /// A brute-force stump on one feature: Matusita split of the booster's statistics, leaves from
    /// the booster's rule, then `finish_leaves`. Returns h on the training rows.
    fn fit_stump(b: &SecBoost, x: &[f64]) -> Vec<f64> {
        let n = x.len();
        let mut signed = vec![0.0; n];
        b.statistics(&mut signed);
        let stats = crate::boost::expand_signed(&signed);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
        let (tp, tn) = (0..n).fold((0.0, 0.0), |(a, c), i| (a + stats[2 * i], c + stats[2 * i + 1]));
        let crit = b.default_criterion();
        let mut best = (crit.cost(tp, tn), f64::INFINITY);
        let (mut lp, mut ln) = (0.0, 0.0);
        for k in 0..n - 1 {
            let i = order[k];
            lp += stats[2 * i];
            ln += stats[2 * i + 1];
            let (xa, xb) = (x[i], x[order[k + 1]]);
            if xa == xb {
                continue;
            }
            // Sums by subtraction can be −1e−16: clamp, or Matusita's √(W+W−) is NaN.
            let cost = crit.cost(lp, ln) + crit.cost((tp - lp).max(0.0), (tn - ln).max(0.0));
            if cost < best.0 - 1e-15 {
                best = (cost, 0.5 * (xa + xb));
            }
        }
        let theta = best.1;
        let rule = b.leaf_rule();
        let side = |i: usize| x[i] <= theta;
        let (mut sl, mut sr) = ([0.0; 2], [0.0; 2]);
        for i in 0..n {
            let s = if side(i) { &mut sl } else { &mut sr };
            s[0] += stats[2 * i];
            s[1] += stats[2 * i + 1];
        }
        let mut leaves = [rule.value(sl[0], sl[1]), rule.value(sr[0], sr[1])];
        b.finish_leaves(&mut leaves);
        (0..n).map(|i| if side(i) { leaves[0] } else { leaves[1] }).collect()
    }

    /// Random 1-D data: y = sign(x − 0.1), each label flipped with probability `noise`.
    fn data(seed: u64, n: usize, noise: f64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        let y = x
            .iter()
            .map(|&v| {
                let c = if v > 0.1 { 1.0 } else { -1.0 };
                if rng.gen::<f64>() < noise {
                    -c
                } else {
                    c
                }
            })
            .collect();
        (x, y)
    }

    fn labels(y: &[f64]) -> Labels<'_> {
        Labels { n: y.len(), k: 1, y, class: None, sample_weight: None }
    }

    thread_local! {
        /// How many rounds of this thread kept the end computed ahead, and how many did not.
        pub(super) static AHEAD: std::cell::Cell<[usize; 2]> = const { std::cell::Cell::new([0, 0]) };
    }

    fn params(loss: &str) -> SecBoostParams {
        SecBoostParams { loss: loss.parse().expect("valid loss"), ..SecBoostParams::default() }
    }

    /// Runs up to `rounds` rounds of stumps; returns the risks (before, then after every round),
    /// the last step and all diagnostics.
    fn run(b: &mut SecBoost, x: &[f64], rounds: usize) -> (Vec<f64>, Step, Vec<Diagnostics>) {
        let mut risks = vec![b.risk()];
        let mut diags = Vec::new();
        let mut last = Step::Stop { reason: "no round".into() };
        for _ in 0..rounds {
            let h = fit_stump(b, x);
            let mut d = Diagnostics::new();
            last = b.step(&h, &mut d).expect("step succeeds");
            for (k, v) in &d {
                assert!(v.is_finite(), "diagnostic {k} = {v}");
            }
            assert!(b.edges().iter().chain(b.weights()).chain(b.offsets()).all(|v| v.is_finite()));
            risks.push(b.risk());
            diags.push(d);
            if !matches!(last, Step::Add { .. }) {
                break;
            }
        }
        (risks, last, diags)
    }

    #[test]
    fn params_defaults_check_and_serde() {
        let p = SecBoostParams::default();
        p.check().expect("defaults are valid");
        assert_eq!(p.loss, LossSpec::Logistic);
        assert_eq!(p.delta_init, 1.0);
        let json = serde_json::to_string(&p).expect("serialises");
        assert!(json.contains("\"loss\":\"logistic\""), "{json}");
        assert_eq!(serde_json::from_str::<SecBoostParams>(&json).expect("deserialises"), p);
        let q: SecBoostParams =
            serde_json::from_str(r#"{"loss":"spring:Q=500","delta_init":0.1,"alpha_rule":"solve","oracle":"grid"}"#)
                .expect("partial config");
        assert_eq!(q.loss, LossSpec::Spring { q: 500.0 });
        assert_eq!((q.alpha_rule, q.oracle, q.v0), (AlphaRule::Solve, OffsetOracle::Grid, 0.1));
        let bad = [
            SecBoostParams { delta_init: 0.0, ..p.clone() },
            SecBoostParams { delta_init: f64::INFINITY, ..p.clone() },
            SecBoostParams { h0: f64::NAN, ..p.clone() },
            SecBoostParams { v0: 0.0, ..p.clone() },
            SecBoostParams { epsilon: -1.0, ..p.clone() },
            SecBoostParams { oracle_precision: 0, ..p.clone() },
            SecBoostParams { oracle_max_doublings: 31, ..p.clone() },
            SecBoostParams { oracle_precision: 1 << 20, oracle_max_doublings: 5, ..p.clone() },
            SecBoostParams { max_halvings: 0, ..p.clone() },
            SecBoostParams { loss: LossSpec::Spring { q: 0.0 }, ..p.clone() },
        ];
        for b in bad {
            assert!(matches!(b.check(), Err(Error::InvalidParam { .. })), "{b:?}");
        }
    }

    #[test]
    fn constructor_validates() {
        let y = [1.0, -1.0, 1.0];
        let l = Loss::from_spec(&LossSpec::Logistic).expect("valid");
        let two = Labels { n: 3, k: 2, y: &[1.0; 6], class: None, sample_weight: None };
        assert!(matches!(SecBoost::new(params("logistic"), l.clone(), two), Err(Error::InvalidData(_))));
        let bad_y = [1.0, 0.0, 1.0];
        assert!(matches!(SecBoost::new(params("logistic"), l.clone(), labels(&bad_y)), Err(Error::InvalidData(_))));
        // A built-in loss other than params.loss.
        assert!(matches!(SecBoost::new(params("hinge"), l.clone(), labels(&y)), Err(Error::InvalidParam { .. })));
        // Zero initial weights: 0/1 loss at h0 = 0 with a negative offset.
        let p = SecBoostParams { v0: -0.1, ..params("zero-one") };
        let err = SecBoost::from_params(p, labels(&y)).expect_err("all-zero initial weights");
        assert!(err.to_string().contains("v0"), "{err}");
        // Sample weights.
        let sw = [1.0, -1.0, 1.0];
        let lab = Labels { sample_weight: Some(&sw), ..labels(&y) };
        assert!(matches!(SecBoost::new(params("logistic"), l.clone(), lab), Err(Error::InvalidData(_))));
        // Initial state: every weight −δ_{0.1}F(0) for the logistic loss.
        let b = SecBoost::new(params("logistic"), l, labels(&y)).expect("valid");
        let w0 = -((1.0 + (-0.1f64).exp()).ln() - 2f64.ln()) / 0.1;
        assert!(b.weights().iter().all(|w| (w - w0).abs() < 1e-14));
        assert_eq!(b.risk(), 2f64.ln());
        assert_eq!(b.train_error(), 2.0 / 3.0, "score 0 predicts −1");
        assert_eq!((b.stat_width(), b.n_outputs()), (2, 1));
        assert_eq!(b.default_criterion(), Criterion::Matusita);
    }

    #[test]
    fn statistics_relabel_by_weight_sign() {
        // Spring loss weights change sign along the edge; force a state by hand.
        let y = [1.0, -1.0, 1.0, -1.0];
        let mut b = SecBoost::from_params(params("logistic"), labels(&y)).expect("valid");
        b.weights = vec![2.0, 1.0, -1.0, 0.0];
        let mut stats = vec![0.0; 4];
        b.statistics(&mut stats);
        assert_eq!(stats.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), [0.5, -0.25, -0.25, -0.0].map(f64::to_bits));
        assert_eq!(crate::boost::expand_signed(&stats), vec![0.5, 0.0, 0.0, 0.25, 0.0, 0.25, 0.0, 0.0]);
        let mut leaves = [0.0, 0.3, f64::NAN];
        b.finish_leaves(&mut leaves);
        assert_eq!(leaves, [NONZERO_LEAF, 0.3, NONZERO_LEAF]);
        assert_eq!(b.leaf_rule(), LeafRule::HalfLogRatio { eps: 0.125 });
    }

    #[test]
    fn solve_alpha_identity() {
        // At the returned α, (1 + ε)·W̄·M²·|α| = |η₀| (the bound of the paper's eq. 12 is tight),
        // and the acceptance test holds.
        for loss in ["exponential", "clipped-logistic:q=-2", "spring:Q=500", "hinge"] {
            let (x, y) = data(3, 200, 0.1);
            let mut b = SecBoost::from_params(params(loss), labels(&y)).expect("valid");
            for _ in 0..3 {
                let h = fit_stump(&b, &x);
                let input = AlphaInput {
                    loss: &b.loss,
                    y: &b.y,
                    h: &h,
                    sample_weight: &b.sw,
                    edges: &b.edges,
                    offsets: &b.offsets,
                    weights: &b.weights,
                };
                let s = solve_alpha(&input, 1.0, 200).expect("solves");
                let m_t = h.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
                let eta = edge(&b.sw, &b.weights, &b.y, &h);
                assert!(s.epsilon > 0.0 && s.w2 > 0.0 && s.alpha.signum() == eta.signum(), "{loss}: {s:?}");
                let lhs = (1.0 + s.epsilon) * s.w2 * m_t * m_t * s.alpha.abs();
                assert!((lhs - eta.abs()).abs() < 1e-9 * eta.abs(), "{loss}: {lhs} vs {eta}");
                let mut d = Diagnostics::new();
                if !matches!(b.step(&h, &mut d).expect("step"), Step::Add { .. }) {
                    break;
                }
            }
        }
    }

    #[test]
    fn h0_at_a_known_jump_is_refused() {
        let (x, y) = data(1, 50, 0.0);
        // docs/explanation/secboost.md#secboost-algorithm: the 0/1 loss jumps at 0, so h0 = 0 (every edge at the jump) is refused up front.
        let err = SecBoost::from_params(params("zero-one"), labels(&y)).expect_err("h0 = 0 is a jump");
        assert!(matches!(&err, Error::InvalidParam { name: "h0", .. }), "{err}");
        assert!(err.to_string().contains("jump of loss `zero-one` at 0"), "{err}");
        // Other losses accept h0 = 0, and the 0/1 loss accepts h0 ≠ 0.
        SecBoost::from_params(params("clipped-logistic:q=-2"), labels(&y)).expect("continuous at 0");
        let p = SecBoostParams { h0: -0.1, v0: 0.2, ..params("zero-one") };
        let mut b = SecBoost::from_params(p, labels(&y)).expect("h0 ≠ 0 is fine");
        // Why: with every edge at the jump, neither Solve_α accepts any α.
        b.edges = vec![0.0; y.len()];
        b.offsets = vec![0.1; y.len()];
        b.weights = vec![10.0; y.len()]; // −δ_{0.1} F(0) = −(0 − 1)/0.1
        let h = fit_stump(&b, &x);
        let input = AlphaInput {
            loss: &b.loss,
            y: &b.y,
            h: &h,
            sample_weight: &b.sw,
            edges: &b.edges,
            offsets: &b.offsets,
            weights: &b.weights,
        };
        let err = solve_alpha(&input, 1.0, 200).expect_err("the paper's Solve_α fails");
        assert!(matches!(err, Error::Numerical(_)), "{err}");
        assert_eq!(solve_alpha_certified(&input, 1.0, 200, 0.5, 400).expect("runs"), None);
    }

    #[test]
    fn zero_one_loss_stops_with_all_weights_zero() {
        // With h0 = −0.1 the edges (±0.1) are continuity points of [z ≤ 0]: positives start wrong
        // (weight 1/v0 = 5), negatives right (weight 0). After one round no example crosses 0
        // (Solve_α keeps α small enough), and secants on flat parts are 0: every weight is 0.
        let (x, y) = data(2, 100, 0.0);
        // The paper's rule: the certified one accepts no α for the 0/1 loss (q̄ ≥ B).
        let p = SecBoostParams { h0: -0.1, v0: 0.2, solve_alpha: SolveAlphaRule::Paper, ..params("zero-one") };
        let mut b = SecBoost::from_params(p, labels(&y)).expect("valid");
        assert!(b.weights().iter().zip(&y).all(|(w, y)| if *y > 0.0 { *w == 5.0 } else { *w == 0.0 }));
        let (_, last, diags) = run(&mut b, &x, 10);
        assert_eq!(diags.len(), 1);
        match last {
            Step::AddAndStop { alpha, reason } => {
                assert!(alpha.is_finite() && alpha > 0.0);
                assert_eq!(reason, "all weights are zero");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(diags[0]["zero_weights"], 100.0);
    }

    #[test]
    fn jump_larger_than_the_budget_stops_early() {
        // Logistic plus an upward step of 1 at z = 0.5 (F(0.5) is the high value). With δ_init =
        // 0.5 and the perfect hypothesis h = y, Solve_α accepts α = 0.5 at once (v0 = 0.1 > 0 keeps
        // the secants at 0 and 0.5 off the step), so every edge lands on the jump; from there,
        // every secant towards the previous edge 0 overshoots F by ≈ the jump ≫ z.
        let jump = Loss::custom(
            "logistic+step",
            Arc::new(|z: f64| (1.0 + (-z).exp()).ln() + if z >= 0.5 { 1.0 } else { 0.0 }),
            false,
            None,
        )
        .expect("valid");
        let (_, y) = data(4, 40, 0.0);
        // The paper's rule: the certified one would refuse α = 0.5 (q̄ ≈ the jump > κB) and halve it.
        let p = SecBoostParams { delta_init: 0.5, solve_alpha: SolveAlphaRule::Paper, ..SecBoostParams::default() };
        let mut b = SecBoost::new(p, jump.clone(), labels(&y)).expect("valid");
        let mut d = Diagnostics::new();
        let step = b.step(&y, &mut d).expect("step");
        match step {
            Step::AddAndStop { alpha, reason } => {
                assert_eq!(alpha, 0.5);
                assert!(reason.starts_with("no admissible offset"), "{reason}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(d["z_obi"] < 0.5, "{d:?}");
        assert!(b.edges().iter().all(|e| *e == 0.5));
        // The certificate saw it coming: q̄ ≈ the jump, B − q̄ < 0, and the risk rose.
        assert!(d["qbar"] > 0.9 && d["certified_decrease"] < 0.0 && d["certified"] == 0.0, "{d:?}");
        assert!(d["risk"] > (1.0 + 1f64.exp().recip()).ln() + 0.9, "{d:?}");
        // The certified rule halves α until q̄ ≤ κB: the edges stay off the jump and the risk falls.
        let p = SecBoostParams { delta_init: 0.5, ..SecBoostParams::default() };
        let mut c = SecBoost::new(p, jump, labels(&y)).expect("valid");
        let mut d = Diagnostics::new();
        let step = c.step(&y, &mut d).expect("step");
        assert_eq!(step, Step::Add { alpha: 0.25 });
        assert!(d["qbar"] <= 0.5 * d["b"] && d["certified"] == 1.0, "{d:?}");
        assert!(d["risk"] <= 2f64.ln() - d["certified_decrease"], "{d:?}");
    }

    #[test]
    fn closed_form_and_diagnostics() {
        let (x, y) = data(5, 100, 0.1);
        // The closed form is opt-in (`auto`); the default always runs Solve_α.
        let p = SecBoostParams { alpha_rule: AlphaRule::Auto, ..params("logistic") };
        let mut b = SecBoost::from_params(p, labels(&y)).expect("valid");
        let h = fit_stump(&b, &x);
        let mut d = Diagnostics::new();
        let step = b.step(&h, &mut d).expect("step");
        let m_t = h.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
        // W̄ = 2β = 1/2, ε = 1: α = η/(2·2·M²·½) = η/(2M²).
        assert_eq!(d["w2"], 0.5);
        assert!((d["alpha"] - d["eta"] / (2.0 * m_t * m_t)).abs() < 1e-15);
        assert_eq!(step, Step::Add { alpha: d["alpha"] });
        for k in [
            "eta",
            "alpha",
            "w2",
            "epsilon",
            "z_obi",
            "mean_abs_weight",
            "risk",
            "train_error",
            "max_obi",
            "random_offsets",
            "zero_weights",
            "negative_weights",
            "halvings",
        ] {
            assert!(d.contains_key(k), "missing {k}");
        }
        assert!(d["max_obi"] <= d["z_obi"]);
        assert!(d["risk"] < 2f64.ln());
    }

    #[test]
    fn sample_weights_are_weighted_means() {
        // Duplicating an example equals giving it weight 2.
        let (x, y) = data(6, 30, 0.2);
        let mut x2 = x.clone();
        let mut y2 = y.clone();
        x2.push(x[0]);
        y2.push(y[0]);
        let mut sw = vec![1.0; 30];
        sw[0] = 2.0;
        let lab = Labels { sample_weight: Some(&sw), ..labels(&y) };
        let p = SecBoostParams { alpha_rule: AlphaRule::Solve, ..params("exponential") };
        let mut a = SecBoost::from_params(p.clone(), lab).expect("valid");
        let mut b = SecBoost::from_params(p, labels(&y2)).expect("valid");
        // The leaf smoothing is 1/(2n): use the same in both runs.
        b.leaf_eps = a.leaf_eps;
        for _ in 0..5 {
            let (ha, hb) = (fit_stump(&a, &x), fit_stump(&b, &x2));
            let (mut da, mut db) = (Diagnostics::new(), Diagnostics::new());
            a.step(&ha, &mut da).expect("step");
            b.step(&hb, &mut db).expect("step");
            for k in ["alpha", "eta", "risk", "train_error", "w2"] {
                assert!((da[k] - db[k]).abs() <= 1e-9 * da[k].abs().max(1e-9), "{k}: {} vs {}", da[k], db[k]);
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 6, .. ProptestConfig::default() })]

        #[test]
        fn smooth_convex_risk_decreases_monotonically(seed in 0u64..1000) {
            let (x, y) = data(seed, 150, 0.15);
            let setups = [
                params("logistic"),                                               // closed form
                SecBoostParams { alpha_rule: AlphaRule::Solve, ..params("logistic") },
                SecBoostParams { alpha_rule: AlphaRule::Solve, oracle: OffsetOracle::Grid, ..params("logistic") },
                params("exponential"),                                            // Solve_α
                SecBoostParams { delta_init: 0.1, ..params("exponential") },
            ];
            for p in setups {
                let mut b = SecBoost::from_params(p.clone(), labels(&y)).expect("valid");
                let (risks, last, _) = run(&mut b, &x, 20);
                prop_assert!(matches!(last, Step::Add { .. }), "{:?}: stopped early: {:?}", p, last);
                for r in risks.windows(2) {
                    prop_assert!(r[1] < r[0], "{:?}: risk went from {} to {}", p, r[0], r[1]);
                }
            }
        }
    }

    #[test]
    fn non_convex_losses_learn_a_threshold() {
        // (Not the spring loss with Q = 1 and δ_init = 1: on this data it falls into a 2-cycle
        // h, −h, one of whose states misclassifies 59% of the examples — see the module notes.)
        for loss in ["spring:Q=500", "clipped-logistic:q=-2"] {
            for delta_init in [1.0, 0.1] {
                let (x, y) = data(7, 200, 0.0);
                let p = SecBoostParams { delta_init, ..params(loss) };
                let mut b = SecBoost::from_params(p, labels(&y)).expect("valid");
                let (risks, last, diags) = run(&mut b, &x, 50);
                assert!(risks.iter().all(|r| r.is_finite()));
                assert!(
                    b.train_error() < 0.05,
                    "{loss} δ={delta_init}: train error {} after {} rounds ({last:?})",
                    b.train_error(),
                    diags.len()
                );
            }
        }
    }

    /// The chunked pass gives the serial secant weights and `F` bit for bit, the serial
    /// `W` bit for bit with one chunk (≤ 32768 rows) and up to the sum's rounding with several, and
    /// the same bits whatever the thread count.
    #[test]
    fn secant_pass_equals_the_serial_weights_and_w() {
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        for (loss, n) in [("logistic", 1000), ("spring:Q=500", 20_000), ("logistic", 3 * SECANT_CHUNK + 17)] {
            let loss = Loss::from_spec(&loss.parse().expect("spec")).expect("loss");
            let y: Vec<f64> = (0..n).map(|_| if rng.gen::<bool>() { 1.0 } else { -1.0 }).collect();
            let h: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let e: Vec<f64> = (0..n).map(|_| rng.gen_range(-3.0..3.0)).collect();
            let v: Vec<f64> =
                (0..n).map(|_| rng.gen_range(0.01..0.2) * if rng.gen::<bool>() { 1.0 } else { -1.0 }).collect();
            let sw: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..2.0)).collect();
            let m_t = max_abs_weighted(&h, &sw);
            let mut scratch = Scratch::default();
            let mut w = vec![0.0; n];
            scratch.secant_weights(&loss, e.iter().copied(), &v, &mut w);
            let alpha = 0.37;
            let mut wt = vec![0.0; n];
            scratch.secant_weights(&loss, shifted(&e, alpha, &y, &h), &v, &mut wt);
            let serial_w = order2_bound(&sw, &y, &h, &w, &wt, alpha, m_t, Red::local(n)).expect("local");
            let run = |threads: usize| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                pool.install(|| {
                    let (mut out, mut fz) = (vec![0.0; n], vec![0.0; n]);
                    let acc = secant_pass(
                        &loss,
                        &e,
                        alpha,
                        &y,
                        &h,
                        &v,
                        Some(&mut out),
                        &mut fz,
                        Some(Order2 { w: &w, sw: Some(&sw), qbar: loss.declared_convex(), losses: true }),
                    );
                    (out, fz, acc)
                })
            };
            let (out, fz, acc) = run(1);
            assert!(out.iter().zip(&wt).all(|(a, b)| a.to_bits() == b.to_bits()), "n = {n}: weights");
            assert!(fz.iter().zip(&scratch.fz).all(|(a, b)| a.to_bits() == b.to_bits()), "n = {n}: F");
            let big_w = order2_w(acc.order2.total() / n as f64, alpha, m_t);
            // W as its definition writes it, a division per row: the same within rounding.
            let naive_w =
                ((0..n).map(|i| sw[i] * (h[i] / m_t).powi(2) * (w[i] - wt[i]) / (alpha * y[i] * h[i])).sum::<f64>()
                    / n as f64)
                    .abs();
            assert!(naive_w > 0.0 && (big_w - naive_w).abs() <= 1e-12 * naive_w, "n = {n}: {big_w} vs {naive_w}");
            // The convex loss's q̄ of the same pass, against `mean_obi` on the materialised edges.
            let ne: Vec<f64> = shifted(&e, alpha, &y, &h).collect();
            let serial_q = mean_obi(&loss, &sw, &ne, &e, &v, 400, Red::local(n)).expect("local");
            let qbar = acc.qbar.total() / n as f64;
            if !loss.declared_convex() {
                assert_eq!(acc.qbar.total(), 0.0, "n = {n}: no q̄ asked");
            } else {
                // The same terms, summed in four lanes by the pass and in row order by `mean_obi`.
                assert!(serial_q > 0.0 && (qbar - serial_q).abs() <= 1e-12 * serial_q, "n = {n}: {qbar} vs {serial_q}");
            }
            if n <= SECANT_CHUNK {
                assert_eq!(big_w.to_bits(), serial_w.to_bits(), "n = {n}: one chunk is the serial sum");
            } else {
                assert!((big_w - serial_w).abs() <= 1e-12 * serial_w, "n = {n}: {big_w} vs {serial_w}");
            }
            let (out2, fz2, acc2) = run(2);
            assert!(out2 == out && fz2 == fz && acc2 == acc, "n = {n}: thread count");
        }
    }

    /// Data where many rows share their feature value (so their edges): `x ∈ {−4, …, 4}/4`.
    fn discrete_data(seed: u64, n: usize) -> (Vec<f64>, Vec<f64>) {
        let (x, y) = data(seed, n, 0.1);
        (x.iter().map(|v| (v * 4.0).round() / 4.0).collect(), y)
    }

    #[test]
    fn oracle_once_per_distinct_row_equals_the_per_row_oracle() {
        for (loss, rule) in [
            ("spring:Q=500", SolveAlphaRule::Paper),
            ("clipped-logistic:q=-2", SolveAlphaRule::Paper),
            ("logistic", SolveAlphaRule::Certified),
        ] {
            let (x, y) = discrete_data(5, 400);
            let mut p = params(loss);
            p.oracle = OffsetOracle::Grid;
            p.solve_alpha = rule;
            p.oracle_precision = 20;
            let mut b = SecBoost::from_params(p, labels(&y)).expect("valid");
            run(&mut b, &x, 4);
            // New edges: a shifted copy, and every fifth row unmoved (the random-offset case).
            let new_edges: Vec<f64> = b
                .edges
                .iter()
                .zip(&x)
                .enumerate()
                .map(|(i, (e, xi))| if i % 5 == 0 { *e } else { e + 0.3 * (xi - 0.4) })
                .collect();
            let distinct: std::collections::HashSet<u64> = new_edges.iter().map(|e| e.to_bits()).collect();
            assert!(distinct.len() < 40, "{loss}: the rows repeat ({} distinct)", distinct.len());
            let pr = &b.params;
            let z = 1e-4;
            let np = QBAR_GRID * pr.oracle_precision;
            let seed = |i: usize| offset_seed(pr.seed, b.round, b.row0 + i);
            let (lo, hi) = (pr.oracle_precision, pr.oracle_max_doublings);
            // The per-row oracles, row by row.
            let naive_grid: Vec<Option<OffsetChoice>> =
                (0..y.len()).map(|i| offset_grid(&b.loss, new_edges[i], b.edges[i], z, lo, hi, seed(i))).collect();
            let (got, q) = b.oracle(&new_edges, z, None);
            assert!(q.is_none());
            let got = got.expect("admissible");
            assert!(got.iter().any(|c| c.random) && got.iter().any(|c| !c.random), "{loss}: both kinds");
            for (i, (g, n)) in got.iter().zip(&naive_grid).enumerate() {
                let n = n.expect("admissible");
                assert_eq!(
                    (g.v.to_bits(), g.obi.to_bits(), g.random),
                    (n.v.to_bits(), n.obi.to_bits(), n.random),
                    "{loss}: row {i}"
                );
            }
            if b.loss.declared_convex() {
                continue;
            }
            let naive: Vec<(Option<OffsetChoice>, f64)> = (0..y.len())
                .map(|i| offset_grid_and_obi(&b.loss, new_edges[i], b.edges[i], b.offsets[i], z, lo, hi, seed(i), np))
                .collect();
            let (got, q) = b.oracle(&new_edges, z, Some(np));
            let (got, q) = (got.expect("admissible"), q.expect("q terms"));
            for i in 0..y.len() {
                let n = naive[i].0.expect("admissible");
                assert_eq!(
                    (got[i].v.to_bits(), got[i].obi.to_bits(), got[i].random),
                    (n.v.to_bits(), n.obi.to_bits(), n.random),
                    "{loss}: row {i}"
                );
                assert_eq!(q[i].to_bits(), naive[i].1.to_bits(), "{loss}: q̄ term {i}");
            }
        }
    }

    /// The one-pass end of a round (a built-in convex loss) and the general path (the same loss
    /// as a batch closure: the lockstep oracle, whole-data passes) give the same edges, offsets,
    /// weights, loss values and tree statistics, bit for bit, with sample weights (zeros
    /// included) and shrinkage; the records are the same bits on one chunk of rows and agree to
    /// the order of their sums on several (the OBIs: to the search's accuracy). With or without
    /// shrinkage the end is computed ahead, in Solve_α's trial pass: kept when every first guess is accepted,
    /// else (an oracle of precision 1, whose first guesses go all the way back) dropped for the
    /// update's search; both happen here, and a round of negative edge (whose first trial pass,
    /// run before η is known, is discarded). The fast path reads the outputs as a vector or, as a
    /// grown tree gives them, from its leaves. A non-finite output is the same error every way.
    #[test]
    fn one_pass_update_equals_the_general_path() {
        AHEAD.with(|c| c.set([0, 0]));
        // (rows, ν, some sample weights 0, oracle precision, no sample weights): blocks ending
        // within a group of four rows, with and without sample weights.
        let cases = [
            (3000, 1.0, false, 100, false),
            (3000, 0.3, true, 100, false),
            (2 * SECANT_CHUNK + 123, 1.0, true, 100, false),
        ];
        let more = [
            (2 * SECANT_CHUNK + 123, 0.1, false, 100, false),
            (3000, 1.0, false, 1, false),
            (3000, 1.0, true, 2, false),
            (3001, 0.1, false, 100, true),
            (2 * SECANT_CHUNK + 122, 1.0, false, 100, true),
        ];
        // Every build of the fast path's loops that the CPU runs (on this thread: the chunks of
        // the largest case run on the pool's threads, in the widest build).
        let all = cpu_builds().into_iter().flat_map(|b| cases.into_iter().chain(more).map(move |c| (b, c)));
        for (build, (n, lr, zeros, precision, unit)) in all {
            let [kept_before, _] = AHEAD.with(std::cell::Cell::get);
            let (x, y) = data(5, n, 0.15);
            let mut rng = ChaCha8Rng::seed_from_u64(9);
            let sw: Vec<f64> =
                (0..n).map(|i| if zeros && i % 7 == 0 { 0.0 } else { rng.gen_range(0.5..2.0) }).collect();
            let builtin = Loss::from_spec(&LossSpec::Logistic).expect("loss");
            let lab = || Labels { sample_weight: (!unit).then_some(&sw[..]), ..labels(&y) };
            let p = SecBoostParams { oracle_precision: precision, ..params("logistic") };
            let mut fast = SecBoost::new(p.clone(), builtin.clone(), lab()).expect("valid");
            let mut leaves = SecBoost::new(p.clone(), builtin.clone(), lab()).expect("valid");
            let mut general = SecBoost::new(p, builtin, lab()).expect("valid");
            general.general_path = true;
            assert!(fast.updates_in_one_pass() && !general.updates_in_one_pass());
            assert_eq!(fast.unit_weights, unit);
            for b in [&mut fast, &mut leaves, &mut general] {
                b.set_learning_rate(lr);
            }
            for round in 0..8 {
                let what = format!("{build:?} build, n = {n}, ν = {lr}, Z = {precision}, round {round}");
                let mut h = fit_stump(&fast, &x);
                if round == 2 {
                    // A weak hypothesis of negative edge: the first trial pass, run before η at
                    // α = δ_init, is discarded and Solve_α starts from −δ_init.
                    h.iter_mut().for_each(|v| *v = -*v);
                }
                let (mut df, mut dg, mut dl) = (Diagnostics::new(), Diagnostics::new(), Diagnostics::new());
                let [kept, _] = AHEAD.with(std::cell::Cell::get);
                let step = with_build(build, || fast.step(&h, &mut df)).expect("step");
                let ahead_kept = AHEAD.with(std::cell::Cell::get)[0] > kept;
                assert_eq!(step, general.step(&h, &mut dg).expect("step"), "{what}");
                // The stump as a tree's leaves (its two values) and the outputs' buffer, which
                // the step on the leaves does not read (but for a fallback's writing it).
                let (of_row, values) = as_leaves(&h);
                let (mut buffer, mut sl) = (vec![f64::NAN; n], vec![0.0; n]);
                let on_leaves =
                    with_build(build, || leaves.step_on_leaves(&of_row, &values, &mut buffer, &mut dl, &mut sl));
                assert_eq!(step, on_leaves.expect("step"), "{what}: on the leaves");
                // The end computed ahead sums the loss values without keeping them: recomputed,
                // they are the general path's.
                assert!(!ahead_kept || fast.losses.is_empty(), "{what}: loss values kept");
                for b in [&fast, &leaves] {
                    for (a, b, name) in [
                        (&b.edges[..], &general.edges[..], "edges"),
                        (&b.offsets, &general.offsets, "offsets"),
                        (&b.weights, &general.weights, "weights"),
                        (&b.loss_values(), &general.losses, "losses"),
                    ] {
                        assert!(a.iter().zip(b).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: {name}");
                    }
                }
                let (mut sf, mut sg) = (vec![0.0; n], vec![0.0; n]);
                fast.statistics(&mut sf);
                general.statistics(&mut sg);
                for s in [&sf, &sl] {
                    assert!(s.iter().zip(&sg).all(|(a, b)| a.to_bits() == b.to_bits()), "{what}: statistics");
                }
                assert_eq!(df.keys().collect::<Vec<_>>(), dg.keys().collect::<Vec<_>>(), "{what}");
                for (k, a) in &df {
                    let b = dg[k];
                    let close =
                        if n <= SECANT_CHUNK { a.to_bits() == b.to_bits() } else { (a - b).abs() <= 1e-12 * b.abs() };
                    assert!(close, "{what}: {k} = {a} vs {b}");
                    assert_eq!(a.to_bits(), dl[k].to_bits(), "{what}: {k} on the leaves");
                }
                if !matches!(step, Step::Add { .. }) {
                    // (An oracle of precision 1 ends the fit within a few rounds.)
                    break;
                }
                assert!(df["random_offsets"] == 0.0 && df["certified"] == 1.0, "{what}: {df:?}");
            }
            // Every round of the usual oracle keeps the end computed ahead, shrunk or not (on the
            // outputs and on the leaves).
            let [kept, _] = AHEAD.with(std::cell::Cell::get);
            if precision == 100 {
                assert_eq!(
                    kept - kept_before,
                    16,
                    "{build:?} build, n = {n}, ν = {lr}: rounds whose end computed ahead was kept"
                );
            }
        }
        let (x, y) = data(5, 3000, 0.15);
        let builtin = Loss::from_spec(&LossSpec::Logistic).expect("loss");
        let mut fast = SecBoost::new(params("logistic"), builtin.clone(), labels(&y)).expect("valid");
        let mut leaves = SecBoost::new(params("logistic"), builtin.clone(), labels(&y)).expect("valid");
        let mut general = SecBoost::new(params("logistic"), builtin, labels(&y)).expect("valid");
        general.general_path = true;
        let mut h = fit_stump(&fast, &x);
        h[2011] = f64::NAN;
        let (a, b) = (fast.step(&h, &mut Diagnostics::new()), general.step(&h, &mut Diagnostics::new()));
        let (a, b) = (a.expect_err("NaN output").to_string(), b.expect_err("NaN output").to_string());
        assert!(a == b && a.contains("output NaN at example 2011"), "{a} / {b}");
        let (of_row, values) = as_leaves(&h);
        let (mut buffer, mut stats) = (vec![0.0; h.len()], vec![0.0; h.len()]);
        let c = leaves.step_on_leaves(&of_row, &values, &mut buffer, &mut Diagnostics::new(), &mut stats);
        assert_eq!(c.expect_err("NaN output").to_string(), a);
        let [kept, refused] = AHEAD.with(std::cell::Cell::get);
        assert!(kept >= 8 && refused >= 1, "rounds whose end computed ahead was kept: {kept}, dropped: {refused}");
    }

    /// Outputs as a tree's leaves: each row's index among the distinct values (by their bits),
    /// and the values.
    fn as_leaves(h: &[f64]) -> (Vec<u32>, Vec<f64>) {
        let mut values: Vec<f64> = Vec::new();
        let of_row = h
            .iter()
            .map(|v| match values.iter().position(|u| u.to_bits() == v.to_bits()) {
                Some(l) => l as u32,
                None => {
                    values.push(*v);
                    (values.len() - 1) as u32
                }
            })
            .collect();
        (of_row, values)
    }

    #[test]
    fn step_weights_equal_a_fresh_secant_pass() {
        // The step reuses Solve_α's F at the new edges: the weights and loss values must be those
        // of a fresh pass at α = 0, bit for bit, under every rule.
        for (loss, rule, alpha_rule) in [
            ("logistic", SolveAlphaRule::Certified, AlphaRule::Solve),
            ("logistic", SolveAlphaRule::Paper, AlphaRule::Solve),
            ("logistic", SolveAlphaRule::Certified, AlphaRule::Auto),
            ("spring:Q=500", SolveAlphaRule::Paper, AlphaRule::Solve),
            ("spring:Q=500", SolveAlphaRule::Certified, AlphaRule::Solve),
            ("exponential", SolveAlphaRule::Certified, AlphaRule::Solve),
        ] {
            let (x, y) = data(11, 300, 0.1);
            let mut p = params(loss);
            (p.solve_alpha, p.alpha_rule) = (rule, alpha_rule);
            let mut b = SecBoost::from_params(p, labels(&y)).expect("valid");
            for round in 0..6 {
                let h = fit_stump(&b, &x);
                let step = b.step(&h, &mut Diagnostics::new()).expect("step");
                let n = y.len();
                let (mut w, mut fz) = (vec![0.0; n], vec![0.0; n]);
                secant_pass(&b.loss, &b.edges, 0.0, &b.y, &h, &b.offsets, Some(&mut w), &mut fz, None);
                zero_left_out(&b.sw, &mut w, &mut fz);
                assert!(
                    w.iter().zip(&b.weights).all(|(a, c)| a.to_bits() == c.to_bits()),
                    "{loss} {rule:?} round {round}"
                );
                assert!(
                    fz.iter().zip(&*b.loss_values()).all(|(a, c)| a.to_bits() == c.to_bits()),
                    "{loss} {rule:?} round {round}"
                );
                if !matches!(step, Step::Add { .. }) {
                    break;
                }
            }
        }
    }

    #[test]
    fn per_distinct_row_equals_the_row_map() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for m in [0usize, 1, 5, 300, 5000] {
            let keys: Vec<u64> = (0..m).map(|_| rng.gen_range(0..40)).collect();
            // A value of the key, except for "random" keys (multiples of 7), whose value is the row's.
            let f = |i: usize| if keys[i].is_multiple_of(7) { (keys[i], i, true) } else { (keys[i] * 3, 0, false) };
            let got = per_distinct_row(m, |i| [keys[i], 0, 1], f, |v| v.2);
            let naive: Vec<_> = (0..m).map(f).collect();
            assert_eq!(got, naive, "m = {m}");
        }
    }
}
