//! Parameters of discrete, Real and abstaining AdaBoost.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How α is chosen each round (docs/explanation/adaboost.md#adaboost-alpha, §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlphaRule {
    /// Discrete AdaBoost: `α = ½ ln((1 − ε)/ε)` (docs/explanation/adaboost.md#adaboost-discrete). For `h ∈ {−1, +1}`.
    Discrete,
    /// `α = 1`: the leaf values already minimise Z (Real AdaBoost, docs/explanation/adaboost.md#adaboost-real).
    One,
    /// Linear bound on `h/R`, `R = max |h|`: `α = ½ ln((1 + r)/(1 − r))/R` (docs/explanation/adaboost.md#adaboost-alpha-linear).
    LinearBound,
    /// Exact minimiser of `Z(α) = Σ d e^(−α u)` by safeguarded Newton (docs/explanation/adaboost.md#adaboost-alpha-exact).
    LineSearch,
    /// Abstaining `h ∈ {−1, 0, +1}`: `α = ½ ln(W_+/W_−)` (docs/explanation/adaboost.md#adaboost-alpha-abstain).
    Abstain,
    /// Freund–Schapire's conservative choice for abstaining h:
    /// `α = ½ ln((W_+ + ½W_0)/(W_− + ½W_0))`.
    AbstainConservative,
}

/// Parameters of discrete and Real AdaBoost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct AdaBoostParams {
    /// α rule. By default `discrete` for `adaboost` and `one` for `real-adaboost`.
    pub alpha: Option<AlphaRule>,
    /// Smoothing ε of the leaf values `½ ln((W+ + ε)/(W− + ε))` (Real AdaBoost), with weights
    /// summing to 1. By default `1/(2m)` (Schapire–Singer); valid range ≥ 0 (0 needs
    /// `pure_leaves = forbid` to avoid capped leaves).
    pub smoothing: Option<f64>,
}

impl AdaBoostParams {
    /// Validates the parameters.
    pub fn check(&self) -> Result<()> {
        if let Some(e) = self.smoothing {
            if !(e.is_finite() && e >= 0.0) {
                return Err(Error::param("smoothing", "a finite number ≥ 0", e));
            }
        }
        Ok(())
    }
}
