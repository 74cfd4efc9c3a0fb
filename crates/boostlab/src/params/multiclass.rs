//! Parameters of AdaBoost.MH / MO / MR / M2.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest number of columns of a random code (twice the exhaustive code's 2047): each column is a
/// binary problem boosted every round, so more would only exhaust memory
/// (`random:10000000` is refused at once).
pub const MAX_CODE_COLUMNS: usize = 4095;

/// Which member of the Schapire–Singer family to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MultiVariant {
    /// Discrete AdaBoost.MH: `h ∈ {−1, +1}` per label, α from the edge r (docs/explanation/multiclass.md#multiclass-mh).
    MhDiscrete,
    /// Real AdaBoost.MH: smoothed half-log-ratio leaves per label, α = 1 (docs/explanation/multiclass.md#multiclass-mh). Default.
    #[default]
    MhReal,
    /// AdaBoost.MO with discrete MH on the coded labels (docs/explanation/multiclass.md#multiclass-mo). Single-label data only.
    MoDiscrete,
    /// AdaBoost.MO with real MH on the coded labels (docs/explanation/multiclass.md#multiclass-mo). Single-label data only.
    MoReal,
    /// Discrete AdaBoost.MR, ranking loss (docs/explanation/multiclass.md#multiclass-mr).
    Mr,
    /// AdaBoost.M2: discrete MR on single-label data (docs/explanation/multiclass.md#multiclass-mr).
    M2,
}

impl MultiVariant {
    /// The variant's name as parsed by [`FromStr`]: `mh-discrete`, `mh-real`, `mo-discrete`,
    /// `mo-real`, `mr`, `m2`.
    pub fn name(self) -> &'static str {
        match self {
            MultiVariant::MhDiscrete => "mh-discrete",
            MultiVariant::MhReal => "mh-real",
            MultiVariant::MoDiscrete => "mo-discrete",
            MultiVariant::MoReal => "mo-real",
            MultiVariant::Mr => "mr",
            MultiVariant::M2 => "m2",
        }
    }

    /// Whether the weak hypotheses are confidence-rated (real leaves, α = 1).
    pub fn is_real(self) -> bool {
        matches!(self, MultiVariant::MhReal | MultiVariant::MoReal)
    }
}

impl fmt::Display for MultiVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MultiVariant {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "mh-discrete" => MultiVariant::MhDiscrete,
            "mh-real" => MultiVariant::MhReal,
            "mo-discrete" => MultiVariant::MoDiscrete,
            "mo-real" => MultiVariant::MoReal,
            "mr" => MultiVariant::Mr,
            "m2" => MultiVariant::M2,
            _ => return Err(Error::param("variant", "one of mh-discrete, mh-real, mo-discrete, mo-real, mr, m2", s)),
        })
    }
}

/// How AdaBoost.MO turns the `k'` column scores into a class (docs/explanation/multiclass.md#multiclass-mo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Decode {
    /// Variant 1: the codeword nearest in Hamming distance to `sign f(x, ·)`. A score of exactly 0
    /// counts as half a mismatch whatever the code entry.
    Hamming,
    /// Variant 2: the codeword with the smallest exponential loss `Σ_ℓ' exp(−λ(y)[ℓ'] f(x, ℓ'))`.
    /// Default.
    #[default]
    Loss,
}

impl fmt::Display for Decode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decode::Hamming => "hamming",
            Decode::Loss => "loss",
        })
    }
}

impl FromStr for Decode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "hamming" => Ok(Decode::Hamming),
            "loss" => Ok(Decode::Loss),
            _ => Err(Error::param("decode", "hamming or loss", s)),
        }
    }
}

/// Which output code AdaBoost.MO uses (docs/explanation/multiclass.md#multiclass-mo). Written and parsed as `one-vs-all`,
/// `random:K` (seed 0) or `random:K:SEED`, and `exhaustive`; serialised as that string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(try_from = "String", into = "String")]
pub enum CodeSpec {
    /// `k' = k` columns, `λ(y)[ℓ] = +1` iff `ℓ = y`. With loss decoding MO then predicts MH's
    /// argmax. Default.
    #[default]
    OneVsAll,
    /// `columns` random columns, each entry ±1 with probability ½ from
    /// `ChaCha8Rng::seed_from_u64(seed)`; constant columns and columns equal to another column or
    /// to its complement (the same binary problem) are redrawn, as are codes with two equal
    /// codewords. At most `2^(k−1) − 1` columns exist; at least `⌈log2 k⌉` are needed.
    Random {
        /// Number of columns k', ≥ 1.
        columns: usize,
        /// The RNG seed.
        seed: u64,
    },
    /// Every non-constant column up to complement: `2^(k−1) − 1` columns, for
    /// `k ≤` [`MAX_EXHAUSTIVE_CLASSES`](crate::boost::multiclass::MAX_EXHAUSTIVE_CLASSES).
    Exhaustive,
}

impl fmt::Display for CodeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CodeSpec::OneVsAll => f.write_str("one-vs-all"),
            CodeSpec::Random { columns, seed } => write!(f, "random:{columns}:{seed}"),
            CodeSpec::Exhaustive => f.write_str("exhaustive"),
        }
    }
}

impl FromStr for CodeSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let expected = "one-vs-all, random:K, random:K:SEED or exhaustive";
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "one-vs-all" => return Ok(CodeSpec::OneVsAll),
            "exhaustive" => return Ok(CodeSpec::Exhaustive),
            _ => {}
        }
        let mut parts = t.split(':');
        if parts.next() != Some("random") {
            return Err(Error::param("code", expected, s));
        }
        let columns =
            parts.next().and_then(|c| c.parse::<usize>().ok()).ok_or_else(|| Error::param("code", expected, s))?;
        let seed = match parts.next() {
            None => 0,
            Some(v) => v.parse::<u64>().map_err(|_| Error::param("code", expected, s))?,
        };
        if parts.next().is_some() {
            return Err(Error::param("code", expected, s));
        }
        Ok(CodeSpec::Random { columns, seed })
    }
}

impl TryFrom<String> for CodeSpec {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl From<CodeSpec> for String {
    fn from(c: CodeSpec) -> String {
        c.to_string()
    }
}

/// Parameters of the multi-class / multi-label boosters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MultiParams {
    /// Which booster. By default `mh-real`; one of `mh-discrete`, `mh-real`, `mo-discrete`,
    /// `mo-real`, `mr`, `m2`.
    pub variant: MultiVariant,
    /// Smoothing ε of the real leaves `½ ln((W+ + ε)/(W− + ε))`, with the weights D summing to 1
    /// over all (example, label) pairs. Ignored by the discrete variants. By default `1/(2m)`
    /// (m = number of training examples, Schapire–Singer's choice); valid range: finite, ≥ 0.
    pub eps: Option<f64>,
    /// Start real or discrete MH on single-label data from `D_1(i, y_i) = 1/(2m)`,
    /// `D_1(i, ℓ ≠ y_i) = 1/(2m(k−1))` instead of the uniform `1/(mk)` (docs/explanation/multiclass.md#multiclass-mh). The bound
    /// `bound` then bounds the `D_1`-weighted Hamming loss. By default `false`; `mh-*` only.
    pub single_label_start: bool,
    /// Output code of AdaBoost.MO. Ignored by the other variants. By default `one-vs-all`; one of
    /// `one-vs-all`, `random:K[:SEED]` (K ≥ 1), `exhaustive` (k ≤ 12).
    pub code: CodeSpec,
    /// Decoding of AdaBoost.MO. Ignored by the other variants. By default `loss`; `hamming` or
    /// `loss`.
    pub decode: Decode,
    /// Predicted label sets `{ℓ : f(x, ℓ) > θ}` (docs/explanation/multiclass.md#multiclass-mr). By default `auto`:
    /// `learned` for AdaBoost.MR/M2 (which learn a ranking, not a threshold), `zero` (θ = 0)
    /// for the others; `learned` fits θ on the training data (lowest training Hamming loss,
    /// [`crate::eval::multilabel::best_threshold`]) and stores it in the model.
    #[serde(default, skip_serializing_if = "LabelThreshold::is_auto")]
    pub label_threshold: LabelThreshold,
}

/// How multi-label (and one-hot) label sets are read off the scores (docs/explanation/multiclass.md#multiclass-mr).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LabelThreshold {
    /// `learned` for AdaBoost.MR and M2, `zero` otherwise. Default.
    #[default]
    Auto,
    /// θ = 0: `{ℓ : f(x, ℓ) > 0}` (docs/explanation/multiclass.md#multiclass-mh).
    Zero,
    /// θ learned on the training data.
    Learned,
}

impl LabelThreshold {
    fn is_auto(&self) -> bool {
        *self == LabelThreshold::Auto
    }

    /// Whether `variant` learns a threshold under this setting.
    pub fn learns(self, variant: MultiVariant) -> bool {
        match self {
            LabelThreshold::Auto => matches!(variant, MultiVariant::Mr | MultiVariant::M2),
            LabelThreshold::Zero => false,
            LabelThreshold::Learned => true,
        }
    }
}

impl MultiParams {
    /// Validates every field (run at the start of every fit).
    pub fn check(&self) -> Result<()> {
        if let Some(e) = self.eps {
            if !(e.is_finite() && e >= 0.0) {
                return Err(Error::param("eps", "a finite number ≥ 0", e));
            }
        }
        if self.single_label_start && !matches!(self.variant, MultiVariant::MhDiscrete | MultiVariant::MhReal) {
            return Err(Error::param(
                "single_label_start",
                "false unless the variant is mh-discrete or mh-real",
                format!("true with variant {}", self.variant),
            ));
        }
        if let CodeSpec::Random { columns, .. } = self.code {
            if !(1..=MAX_CODE_COLUMNS).contains(&columns) {
                return Err(Error::param("code", format!("random:K with 1 ≤ K ≤ {MAX_CODE_COLUMNS}"), self.code));
            }
        }
        Ok(())
    }

    /// The smoothing ε used with `m` training examples (`m = Σ wᵢ` with sample weights, the
    /// number of rows without: see [`crate::boost::Labels::total_weight`]): `eps`, or `1/(2m)`
    /// when unset.
    pub fn smoothing(&self, m: f64) -> f64 {
        // docs/explanation/multiclass.md#multiclass-mh: Schapire–Singer's experiments used ε = 1/(2m), m = number of examples
        // (frequency weights: Σ wᵢ, so that integer weights give the ε of the repeated rows).
        self.eps.unwrap_or(1.0 / (2.0 * m.max(1.0)))
    }
}
