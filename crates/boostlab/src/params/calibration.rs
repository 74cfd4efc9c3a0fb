//! How a binary model turns its score into a probability (docs/explanation/probabilities.md).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// How `predict_proba`'s link is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CalibrationMethod {
    /// The boosting link of the papers, `P(+1|x) = σ(2f)`.
    None,
    /// `P(+1|x) = σ(a·f)`, the scale `a` fitted on cross-fitted scores of the training rows.
    /// Default.
    #[default]
    Sigmoid,
}

impl CalibrationMethod {
    /// Every method with its name (CLI `--calibration`, Python `calibration=`).
    pub const ALL: &'static [(&'static str, CalibrationMethod)] =
        &[("none", CalibrationMethod::None), ("sigmoid", CalibrationMethod::Sigmoid)];
}

/// The calibration of a binary model's probabilities (ignored by the multi-class boosters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CalibrationParams {
    /// How the link is chosen. By default [`CalibrationMethod::Sigmoid`].
    pub method: CalibrationMethod,
    /// Number of folds of the cross-fitting. By default 3; valid range ≥ 2.
    pub folds: usize,
}

impl Default for CalibrationParams {
    fn default() -> Self {
        CalibrationParams { method: CalibrationMethod::Sigmoid, folds: 3 }
    }
}

impl CalibrationParams {
    /// The parameters of the papers' link (no calibration).
    pub fn none() -> CalibrationParams {
        CalibrationParams { method: CalibrationMethod::None, ..Default::default() }
    }

    /// Validates the fold count.
    pub fn check(&self) -> Result<()> {
        if self.folds < 2 {
            return Err(Error::param("calibration_folds", "an integer ≥ 2", self.folds));
        }
        Ok(())
    }
}
