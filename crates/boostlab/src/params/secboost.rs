//! Parameters of SecBoost.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::math::loss::LossSpec;

/// How the leveraging coefficient α is chosen (docs/explanation/secboost.md#secboost-solve-alpha, step 2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AlphaRule {
    /// The closed form `W̄ = 2β`, `α = η/(2(1+ε)M²W̄)` when the loss declares a smoothness
    /// constant β (logistic, square, tempered at t = 0), [`solve_alpha`](crate::boost::secboost::solve_alpha) otherwise. Conservative:
    /// on the ten reproduction domains (20 rounds) it underfits — see [`AlphaRule::Solve`].
    Auto,
    /// Always [`solve_alpha`](crate::boost::secboost::solve_alpha) — what the SecBoost paper's
    /// experiments did for every loss. Default: with the logistic loss it beat the closed form on 7 of the 10 reproduction
    /// domains and lost on none (paired t-test, p < 0.1; eeg 30.97 → 19.73 % test error,
    /// docs/reproduction.md, `experiments/secboost-ablation.toml`).
    #[default]
    Solve,
}

/// Which Solve_α (docs/explanation/secboost.md#secboost-algorithm, corrected so that every accepted α has a certified decrease).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SolveAlphaRule {
    /// The certified rule ([`solve_alpha_certified`](crate::boost::secboost::solve_alpha_certified)): α is accepted only when `B > 0` and
    /// `q̄ ≤ κB`, which guarantees the risk decreases by at least `(1 − κ)B` every round. Default.
    #[default]
    Certified,
    /// The paper's Algorithm 3 ([`solve_alpha`](crate::boost::secboost::solve_alpha)): κ = 1 without the `q̄` test, α at the top of the
    /// admissible interval (π = 1), no guaranteed decrease. Only to reproduce the paper's runs;
    /// such runs are uncertified (their rounds record `certified = 0`).
    Paper,
}

/// Which offset oracle computes the new offsets (docs/explanation/secboost.md#secboost-algorithm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OffsetOracle {
    /// The dichotomic oracle (`boost::secboost::oracle::offset_convex`) for losses declared convex, the grid oracle
    /// (`boost::secboost::oracle::offset_grid`) otherwise. Default.
    #[default]
    Auto,
    /// The grid oracle for every loss (the paper's experiments).
    Grid,
}

/// Parameters of SecBoost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SecBoostParams {
    /// The loss, by name (a [`LossSpec`] string such as `spring:Q=500`). For a user loss, pass it to
    /// [`SecBoost::new`](crate::boost::secboost::SecBoost::new) directly; this field is then ignored. By default `logistic`.
    pub loss: LossSpec,
    /// First trial value of |α| in [`solve_alpha`](crate::boost::secboost::solve_alpha), halved until accepted (the paper's experiments
    /// used 1.0 and 0.1). By default 1.0; valid range `(0, ∞)`, finite.
    pub delta_init: f64,
    /// Initial constant score `H_0 = h_0` (every initial edge is `y_i h_0`); the ensemble's
    /// decision function is `h_0 + Σ_t α_t h_t` ([`SecBoost::init_score`](crate::boost::secboost::SecBoost::init_score)). For a loss that is
    /// discontinuous at 0, such as `zero-one`, use `h_0 ≠ 0`: [`solve_alpha`](crate::boost::secboost::solve_alpha) needs `F`
    /// continuous at the current edges. By default 0; valid range: finite reals.
    pub h0: f64,
    /// Initial offset `v_0` of every example (`w_1,i = −δ_{v_0} F(y_i h_0)`); some `w_1,i` must be
    /// non-zero. By default 0.1; valid range: finite non-zero reals.
    pub v0: f64,
    /// How α is chosen. By default `auto`.
    pub alpha_rule: AlphaRule,
    /// Which Solve_α: `certified` or the paper's rule (`paper`). By default `certified`.
    pub solve_alpha: SolveAlphaRule,
    /// κ of the certified Solve_α: α is accepted when `q̄ ≤ κB`, and the guaranteed decrease is
    /// `(1 − κ)B` (smaller κ: surer decrease, smaller steps). By default 0.5; valid range `(0, 1)`.
    pub kappa: f64,
    /// The ε of the closed-form α (only used when the closed form is): larger ε means a smaller α
    /// and a larger OBI budget for the offsets. By default 1.0; valid range `(0, ∞)`, finite.
    pub epsilon: f64,
    /// Which offset oracle. By default `auto`.
    pub oracle: OffsetOracle,
    /// Oracle precision `Z`: the grid oracle scans `Z` steps between the two last edges; the
    /// convex oracle's first guess is `(ẽ_{t−1} − ẽ_t)/Z`. By default 100; valid range
    /// `[1, 10⁶]`.
    pub oracle_precision: usize,
    /// How many times the grid oracle may double `Z` before declaring that no admissible offset
    /// exists. By default 8; valid range `[0, 30]`, with `Z·2^doublings ≤ 2²⁴`.
    pub oracle_max_doublings: usize,
    /// Maximum number of halvings of α in [`solve_alpha`](crate::boost::secboost::solve_alpha) (each of its two loops). By default 200;
    /// valid range `[1, 2000]`.
    pub max_halvings: usize,
    /// Seed of the tiny random offsets of degenerate cases (`ChaCha8Rng::seed_from_u64`). By
    /// default 0; any u64.
    pub seed: u64,
}

impl Default for SecBoostParams {
    fn default() -> Self {
        SecBoostParams {
            loss: LossSpec::Logistic,
            delta_init: 1.0,
            h0: 0.0,
            v0: 0.1,
            alpha_rule: AlphaRule::Solve,
            solve_alpha: SolveAlphaRule::Certified,
            kappa: 0.5,
            epsilon: 1.0,
            oracle: OffsetOracle::Auto,
            oracle_precision: 100,
            oracle_max_doublings: 8,
            max_halvings: 200,
            seed: 0,
        }
    }
}

impl SecBoostParams {
    /// Validates every field.
    pub fn check(&self) -> Result<()> {
        self.loss.check()?;
        if !(self.delta_init.is_finite() && self.delta_init > 0.0) {
            return Err(Error::param("delta_init", "a finite real > 0", self.delta_init));
        }
        if !self.h0.is_finite() {
            return Err(Error::param("h0", "a finite real", self.h0));
        }
        if !(self.v0.is_finite() && self.v0 != 0.0) {
            return Err(Error::param("v0", "a finite non-zero real", self.v0));
        }
        if !(self.kappa > 0.0 && self.kappa < 1.0) {
            return Err(Error::param("kappa", "a real in (0, 1)", self.kappa));
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0) {
            return Err(Error::param("epsilon", "a finite real > 0", self.epsilon));
        }
        if !(1..=1_000_000).contains(&self.oracle_precision) {
            return Err(Error::param("oracle_precision", "an integer in [1, 1000000]", self.oracle_precision));
        }
        if self.oracle_max_doublings > 30 || (self.oracle_precision as u64) << self.oracle_max_doublings > 1 << 24 {
            return Err(Error::param(
                "oracle_max_doublings",
                format!(
                    "an integer in [0, 30] with oracle_precision·2^doublings ≤ 2^24 (oracle_precision = {})",
                    self.oracle_precision
                ),
                self.oracle_max_doublings,
            ));
        }
        if !(1..=2000).contains(&self.max_halvings) {
            return Err(Error::param("max_halvings", "an integer in [1, 2000]", self.max_halvings));
        }
        Ok(())
    }
}

// ------------------------------------------------------------------------------------------------
// Solve_α
// ------------------------------------------------------------------------------------------------
