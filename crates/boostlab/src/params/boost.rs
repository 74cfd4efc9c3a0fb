//! The top-level parameters of a boosting run: the algorithm, the number of rounds, the binning,
//! the seed and the validation settings, with one sub-structure per booster family.

use serde::{Deserialize, Serialize};

use super::adaboost::AdaBoostParams;
use super::calibration::CalibrationParams;
use super::multiclass::{MultiParams, MultiVariant};
use super::preset::Preset;
use super::secboost::SecBoostParams;
use super::tadaboost::TAdaBoostParams;
use super::tree::{PureLeaves, TreeParams};
use crate::error::{Error, Result};

/// The boosting algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Discrete AdaBoost (docs/explanation/adaboost.md#adaboost-discrete). Default.
    #[default]
    #[serde(rename = "adaboost")]
    AdaBoost,
    /// Real (confidence-rated, domain-partitioning) AdaBoost (docs/explanation/adaboost.md#adaboost-real).
    #[serde(rename = "real-adaboost")]
    RealAdaBoost,
    /// Confidence-rated AdaBoost with abstaining stumps `h ∈ {−1, 0, +1}` (docs/explanation/adaboost.md#adaboost-alpha-abstain).
    #[serde(rename = "abstaining-adaboost")]
    AbstainingAdaBoost,
    /// t-AdaBoost: tempered exponential measures, clipped models, tempered trees (docs/explanation/tadaboost.md#tadaboost-algorithm).
    #[serde(rename = "t-adaboost")]
    TAdaBoost,
    /// SecBoost: boosting any loss from loss values only (docs/explanation/secboost.md#secboost-algorithm).
    #[serde(rename = "secboost")]
    SecBoost,
    /// Discrete AdaBoost.MH (Hamming loss, docs/explanation/multiclass.md#multiclass-mh).
    #[serde(rename = "adaboost-mh")]
    AdaBoostMH,
    /// Real AdaBoost.MH (docs/explanation/multiclass.md#multiclass-mh).
    #[serde(rename = "real-adaboost-mh")]
    RealAdaBoostMH,
    /// AdaBoost.MO with discrete MH on the code columns (docs/explanation/multiclass.md#multiclass-mo).
    #[serde(rename = "adaboost-mo")]
    AdaBoostMO,
    /// AdaBoost.MO with real MH on the code columns (docs/explanation/multiclass.md#multiclass-mo).
    #[serde(rename = "real-adaboost-mo")]
    RealAdaBoostMO,
    /// Discrete AdaBoost.MR (ranking loss, docs/explanation/multiclass.md#multiclass-mr).
    #[serde(rename = "adaboost-mr")]
    AdaBoostMR,
    /// AdaBoost.M2 = discrete MR on single-label data (docs/explanation/multiclass.md#multiclass-mr).
    #[serde(rename = "adaboost-m2")]
    AdaBoostM2,
}

impl Algorithm {
    /// Every algorithm with its CLI name.
    pub const ALL: &'static [(&'static str, Algorithm)] = &[
        ("adaboost", Algorithm::AdaBoost),
        ("real-adaboost", Algorithm::RealAdaBoost),
        ("abstaining-adaboost", Algorithm::AbstainingAdaBoost),
        ("t-adaboost", Algorithm::TAdaBoost),
        ("secboost", Algorithm::SecBoost),
        ("adaboost-mh", Algorithm::AdaBoostMH),
        ("real-adaboost-mh", Algorithm::RealAdaBoostMH),
        ("adaboost-mo", Algorithm::AdaBoostMO),
        ("real-adaboost-mo", Algorithm::RealAdaBoostMO),
        ("adaboost-mr", Algorithm::AdaBoostMR),
        ("adaboost-m2", Algorithm::AdaBoostM2),
    ];

    /// Whether the probabilities are calibrated ([`CalibrationParams`]): the binary boosters.
    pub fn supports_calibration(self) -> bool {
        self.is_binary()
    }

    /// Whether monotone and interaction constraints can be kept exactly: where every round adds
    /// `α·h` with the tree's own outputs `h` (docs/how-to/constraints.md#what-is-refused) — the
    /// binary boosters and AdaBoost.MH (each label's score). AdaBoost.MO decodes code columns and
    /// MR/M2 rank labels.
    pub fn supports_constraints(self) -> bool {
        self.is_binary() || matches!(self, Algorithm::AdaBoostMH | Algorithm::RealAdaBoostMH)
    }

    /// The CLI / model-file name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, a)| *a == self).map_or("?", |(n, _)| n)
    }

    /// Parses a CLI name (the same names serde uses in model files).
    pub fn parse(s: &str) -> Result<Algorithm> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, a)| *a).ok_or_else(|| {
            Error::param("algorithm", format!("one of {:?}", Self::ALL.iter().map(|p| p.0).collect::<Vec<_>>()), s)
        })
    }

    /// True for the boosters of binary problems.
    pub fn is_binary(self) -> bool {
        matches!(
            self,
            Algorithm::AdaBoost
                | Algorithm::RealAdaBoost
                | Algorithm::AbstainingAdaBoost
                | Algorithm::TAdaBoost
                | Algorithm::SecBoost
        )
    }

    /// The multi-class / multi-label variant of this algorithm, if it is one.
    pub fn multi_variant(self) -> Option<MultiVariant> {
        Some(match self {
            Algorithm::AdaBoostMH => MultiVariant::MhDiscrete,
            Algorithm::RealAdaBoostMH => MultiVariant::MhReal,
            Algorithm::AdaBoostMO => MultiVariant::MoDiscrete,
            Algorithm::RealAdaBoostMO => MultiVariant::MoReal,
            Algorithm::AdaBoostMR => MultiVariant::Mr,
            Algorithm::AdaBoostM2 => MultiVariant::M2,
            _ => return None,
        })
    }
}

/// All parameters of a boosting run. Plain data: serialisable, validated by [`BoostParams::check`]
/// at the start of every fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BoostParams {
    /// The algorithm. By default discrete AdaBoost.
    pub algorithm: Algorithm,
    /// Number of boosting rounds (trees). By default 100; valid range ≥ 1.
    pub n_estimators: usize,
    /// The tree learner's parameters. By default stumps.
    pub tree: TreeParams,
    /// Maximum number of value bins per feature. By default 255; valid range 2..=65535.
    pub max_bins: usize,
    /// Seed of every random choice (candidate subsampling, random codes, ...). By default 0.
    pub seed: u64,
    /// Discrete / Real / abstaining AdaBoost parameters.
    pub adaboost: AdaBoostParams,
    /// t-AdaBoost parameters.
    pub t_adaboost: TAdaBoostParams,
    /// SecBoost parameters.
    pub secboost: SecBoostParams,
    /// AdaBoost.MH / MO / MR / M2 parameters (the variant itself comes from `algorithm`).
    pub multiclass: MultiParams,
    /// The preset these parameters were built from (its settings are already in the fields
    /// above; recorded to tell preset values from the user's, see [`BoostParams::with_preset`]).
    /// By default none.
    pub preset: Option<Preset>,
    /// Shrinkage ν: each round adds `ν·α·h`, with α scaled before the weight update
    /// (see [`crate::boost::validation`] and the README's "Shrinkage"). By default 1 (no shrinkage);
    /// valid range (0, 1]. (The validation fields at their defaults are not written, so model files
    /// of runs without them are unchanged.)
    #[serde(skip_serializing_if = "is_one")]
    pub learning_rate: f64,
    /// Early stopping: stop once the validation metric has not improved for this many
    /// rounds, and keep the best iteration. Needs validation data. By default None (off); ≥ 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_stopping_rounds: Option<usize>,
    /// The validation metric. By default None: the task's (see
    /// [`EvalMetric::default_for`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eval_metric: Option<EvalMetric>,
    /// Score the validation data with the clipped model (t-AdaBoost with t < 1). By
    /// default false (the linear model).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub eval_clipped: bool,
    /// How a binary model's probabilities are calibrated (docs/explanation/probabilities.md).
    /// By default a sigmoid scale fitted on 3-fold cross-fitted scores; ignored by the
    /// multi-class boosters.
    pub calibration: CalibrationParams,
}

impl Default for BoostParams {
    fn default() -> Self {
        BoostParams {
            algorithm: Algorithm::AdaBoost,
            n_estimators: 100,
            tree: TreeParams::default(),
            max_bins: 255,
            seed: 0,
            adaboost: AdaBoostParams::default(),
            t_adaboost: TAdaBoostParams::default(),
            secboost: SecBoostParams::default(),
            multiclass: MultiParams::default(),
            preset: None,
            learning_rate: 1.0,
            early_stopping_rounds: None,
            eval_metric: None,
            eval_clipped: false,
            calibration: CalibrationParams::default(),
        }
    }
}

impl BoostParams {
    /// Checks the sizes that allocations follow against the training data, before the first
    /// round: the tree's ([`TreeParams::check_against_data`](crate::params::TreeParams::check_against_data)),
    /// then `n_estimators` × [`round_bytes`](crate::params::tree::round_bytes) of trees of at
    /// most `min(leaf limit, n_rows)` leaves and `k` outputs within
    /// [`MEMORY_BOUND`](crate::params::tree::MEMORY_BOUND) (the model a fit of that many rounds
    /// would hold). `n_rows`: the training rows (over every rank); `hist_values`: the values of
    /// one leaf's histogram.
    pub fn check_against_data(&self, n_rows: usize, k: usize, hist_values: usize) -> Result<()> {
        use crate::params::tree::{round_bytes, MEMORY_BOUND};
        self.tree.check_against_data(n_rows, hist_values)?;
        let leaves = self.tree.leaf_limit().min(n_rows.max(2));
        let per_round = round_bytes(leaves, k);
        let most = MEMORY_BOUND / per_round;
        if self.n_estimators as u64 > most {
            return Err(Error::param(
                "n_estimators",
                format!(
                    "an integer ≤ {most} (each round adds up to {per_round} bytes to the model — trees of up to \
                     {leaves} leaves — and a model may take at most 16 GiB)"
                ),
                self.n_estimators,
            ));
        }
        Ok(())
    }

    /// Refuses constraints for an algorithm that cannot keep them ([`Algorithm::supports_constraints`]).
    fn check_constraints_supported(&self) -> Result<()> {
        let supported = self.algorithm.supports_constraints();
        let given = [
            ("monotone_constraints", self.tree.monotone_constraints.is_some()),
            ("interaction_constraints", self.tree.interaction_constraints.is_some()),
        ];
        match given.iter().find(|g| g.1) {
            Some(&(name, _)) if !supported => {
                let names: Vec<&str> =
                    Algorithm::ALL.iter().filter(|(_, a)| a.supports_constraints()).map(|(n, _)| *n).collect();
                Err(Error::param(
                    name,
                    format!("no constraint for this algorithm (supported: {})", names.join(", ")),
                    self.algorithm.name(),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Validates every parameter.
    pub fn check(&self) -> Result<()> {
        if self.n_estimators == 0 {
            return Err(Error::param("n_estimators", "an integer ≥ 1", 0));
        }
        if !(2..=65535).contains(&self.max_bins) {
            return Err(Error::param("max_bins", "an integer in 2..=65535", self.max_bins));
        }
        if let Some(p) = self.preset {
            if !p.algorithms().contains(&self.algorithm) {
                let names: Vec<&str> = p.algorithms().iter().map(|a| a.name()).collect();
                return Err(Error::param(
                    "preset",
                    format!("a preset of the algorithm: `{}` is for {}", p.name(), names.join(", ")),
                    self.algorithm.name(),
                ));
            }
        }
        check_params(self)?;
        self.calibration.check()?;
        self.tree.check()?;
        self.check_constraints_supported()?;
        self.adaboost.check()?;
        match self.algorithm {
            Algorithm::TAdaBoost => self.t_adaboost.check()?,
            Algorithm::SecBoost => self.secboost.check()?,
            a if a.multi_variant().is_some() => self.multiclass.check()?,
            _ => {}
        }
        Ok(())
    }
}

/// The validation metric of early stopping (smaller is better).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvalMetric {
    /// The error rate (the Hamming loss for multi-label data).
    Error,
    /// The Hamming loss over the classes (labels); the error rate for binary models.
    Hamming,
    /// The one-error: the top-scored class is not a true one; the error rate for binary models.
    OneError,
    /// SecBoost's loss: the mean of `F(y·H(x))` (SecBoost only).
    Loss,
}

impl EvalMetric {
    /// Every metric with its name (CLI `--eval-metric`, Python `eval_metric=`).
    pub const ALL: &'static [(&'static str, EvalMetric)] = &[
        ("error", EvalMetric::Error),
        ("hamming", EvalMetric::Hamming),
        ("one-error", EvalMetric::OneError),
        ("loss", EvalMetric::Loss),
    ];

    /// The metric's name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, m)| *m == self).map_or("?", |(n, _)| n)
    }

    /// Parses a name of [`EvalMetric::ALL`].
    pub fn parse(s: &str) -> Result<EvalMetric> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, m)| *m).ok_or_else(|| {
            Error::param("eval_metric", format!("one of {:?}", Self::ALL.iter().map(|p| p.0).collect::<Vec<_>>()), s)
        })
    }
}

/// `x == 1` (serde: the default learning rate is not written).
fn is_one(x: &f64) -> bool {
    *x == 1.0
}

/// Checks shrinkage, early stopping and the validation metric (called by [`BoostParams::check`]).
fn check_params(p: &BoostParams) -> Result<()> {
    super::registry::check_number("learning_rate", p.learning_rate)?;
    if p.early_stopping_rounds == Some(0) {
        return Err(Error::param("early_stopping_rounds", "an integer ≥ 1 (or none)", 0));
    }
    if p.eval_metric == Some(EvalMetric::Loss) && p.algorithm != Algorithm::SecBoost {
        return Err(Error::param("eval_metric", "error, hamming or one-error (loss is SecBoost's)", "loss"));
    }
    Ok(())
}

/// Each algorithm's own defaults where they differ from [`BoostParams::default`] (the papers'
/// settings: stumps, 100 rounds, no shrinkage): (dotted parameter path, value as in the
/// parameters' JSON). [`BoostParams::from_json`] — the command line, the Python estimators and
/// experiment specs — applies them before a preset and the user's values; the `paper` preset
/// ([`Preset::Paper`]) restores the papers' settings. Chosen so that the calibrated
/// probabilities at the defaults are within 1.25× of LightGBM's default log loss on seven real
/// datasets, at an error no worse than the stumps' (docs/explanation/probabilities.md#probabilities-defaults).
pub fn algorithm_defaults(algorithm: Algorithm) -> Vec<(&'static str, serde_json::Value)> {
    use serde_json::json;
    match algorithm {
        // LightGBM's own tree size and shrinkage.
        Algorithm::RealAdaBoost | Algorithm::SecBoost => {
            vec![("tree.max_leaves", json!(32)), ("learning_rate", json!(0.1))]
        }
        // Sign leaves: more rounds of mid-sized trees, half shrinkage.
        Algorithm::AdaBoost => {
            vec![("tree.max_leaves", json!(8)), ("n_estimators", json!(300)), ("learning_rate", json!(0.5))]
        }
        // Tempered trees need more leaves than Real AdaBoost's for the same fit.
        Algorithm::TAdaBoost => vec![("tree.max_leaves", json!(64)), ("learning_rate", json!(0.5))],
        _ => Vec::new(),
    }
}

/// The pure-leaf policy `auto` stands for: `forbid` for t-AdaBoost, whose t = 1 with
/// pure leaves allowed lost to the authors' configuration on 7 of the 10 reproduction domains
/// (docs/reproduction.md, "Defaults chosen by evidence"); `allow` for every other booster.
pub fn default_pure_leaves(algorithm: Algorithm) -> PureLeaves {
    match algorithm {
        Algorithm::TAdaBoost => PureLeaves::Forbid,
        _ => PureLeaves::Allow,
    }
}
