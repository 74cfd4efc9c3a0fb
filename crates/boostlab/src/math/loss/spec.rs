//! [`LossSpec`]: the built-in losses by name, written and parsed as `logistic`, `spring:Q=500`, ...

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{DEFAULT_CLIP_Q, DEFAULT_SPRING_Q};
use crate::error::{Error, Result};

/// A built-in loss by name, as written in configurations and on the command line (docs/explanation/secboost.md#secboost-algorithm).
///
/// Grammar: `logistic | exponential | square | hinge | zero-one | clipped-logistic[:q=<real>] |
/// spring[:Q=<real>] | spring-main | tempered:t=<real>` (names are case-insensitive, `_` may replace `-`,
/// `0/1` is accepted for `zero-one`). [`fmt::Display`] writes the canonical form, which parses back
/// to the same value; serde reads and writes the same string. By default, `logistic`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum LossSpec {
    /// `ln(1 + e^(−z))`, evaluated stably. Convex, β = 1/4.
    #[default]
    Logistic,
    /// `e^(−z)`. Convex, not globally smooth.
    Exponential,
    /// `(1 − z)²`. Convex, β = 2.
    Square,
    /// `max(0, 1 − z)`. Convex, not differentiable.
    Hinge,
    /// `[z ≤ 0]`: piecewise constant, discontinuous at 0.
    ZeroOne,
    /// `min{ln(1 + e^(−z)), ln(1 + e^(−q))}`: the logistic loss clipped above at its value at `q`.
    /// Not convex.
    ClippedLogistic {
        /// The clipping abscissa. By default −2; any finite real.
        q: f64,
    },
    /// Spring loss `ln(1 + e^(−z)) + (1 − √(1 − 4(z_Q − round(z_Q))²))/Q`, `z_Q = Qz − ½`: the
    /// logistic loss plus bumps of height `1/Q` every `1/Q`. Not convex, not Lipschitz.
    Spring {
        /// The paper's `Q` (bump frequency). By default 500; valid range `(0, ∞)`.
        q: f64,
    },
    /// The spring loss of the SecBoost paper's main text (docs/explanation/secboost.md#secboost-algorithm):
    /// `ln(1 + e^(−z)) + 1 − √(1 − 4(z − round(z))²)`, bumps of height 1 at the half-integers,
    /// `F(0) = ln 2`. Not the appendix form at `Q = 1` ([`LossSpec::Spring`], whose bumps are moved
    /// by ½: `F(0) = 1 + ln 2`). No parameter. Not convex, not Lipschitz.
    SpringMain,
    /// Tempered exponential loss `exp_t(−z)^(2−t) = [1 − (1−t)z]_+^((2−t)/(1−t))` (docs/explanation/tadaboost.md#tadaboost-loss, §5);
    /// `t = 1` is `e^(−z)`. Convex; β = 2 at `t = 0` only. For `t > 1` it is `+∞` for
    /// `z ≤ −1/(t−1)`, which SecBoost reports as [`Error::Numerical`] if an edge gets there.
    Tempered {
        /// The temperature. No default (must be given); valid range `(−∞, 2)`, finite.
        t: f64,
    },
}

/// What a loss string may look like (used in error messages).
const LOSS_GRAMMAR: &str = "one of `logistic`, `exponential`, `square`, `hinge`, `zero-one`, \
     `clipped-logistic[:q=<real>]`, `spring[:Q=<real > 0>]`, `spring-main`, `tempered:t=<real < 2>`";

impl LossSpec {
    /// Checks the parameter of the loss (see each variant for its range).
    pub fn check(&self) -> Result<()> {
        match *self {
            LossSpec::ClippedLogistic { q } if !q.is_finite() => Err(Error::param("loss.q", "a finite real", q)),
            LossSpec::Spring { q } if !(q.is_finite() && q > 0.0) => {
                Err(Error::param("loss.Q", "a finite real > 0", q))
            }
            LossSpec::Tempered { t } if !(t.is_finite() && t < 2.0) => {
                Err(Error::param("loss.t", "a finite real < 2", t))
            }
            _ => Ok(()),
        }
    }

    /// Whether the loss is convex (the convex offset oracle and OBI may then be used).
    pub fn declared_convex(&self) -> bool {
        matches!(
            self,
            LossSpec::Logistic | LossSpec::Exponential | LossSpec::Square | LossSpec::Hinge | LossSpec::Tempered { .. }
        )
    }

    /// The smoothness constant β (|F′(z) − F′(z′)| ≤ β|z − z′|) when the loss has one.
    pub fn beta(&self) -> Option<f64> {
        match *self {
            // F″ = σ(z)σ(−z) ≤ 1/4.
            LossSpec::Logistic => Some(0.25),
            // F″ = 2.
            LossSpec::Square => Some(2.0),
            // t = 0: F = [1 − z]_+², F′ is 2-Lipschitz. Other t: F″ is unbounded.
            LossSpec::Tempered { t: 0.0 } => Some(2.0),
            _ => None,
        }
    }

    /// The edges where the loss is known to jump (be discontinuous): `[0]` for the 0/1 loss, none
    /// for the other built-ins. SecBoost refuses an initial score `h_0` whose edges `±h_0` fall on
    /// one (docs/explanation/secboost.md#secboost-algorithm: the theorem needs `F` continuous at every current edge).
    pub fn known_jumps(&self) -> &'static [f64] {
        match self {
            LossSpec::ZeroOne => &[0.0],
            _ => &[],
        }
    }
}

impl fmt::Display for LossSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `{}` on f64 prints the shortest string that parses back to the same value.
        match *self {
            LossSpec::Logistic => f.write_str("logistic"),
            LossSpec::Exponential => f.write_str("exponential"),
            LossSpec::Square => f.write_str("square"),
            LossSpec::Hinge => f.write_str("hinge"),
            LossSpec::ZeroOne => f.write_str("zero-one"),
            LossSpec::ClippedLogistic { q } => write!(f, "clipped-logistic:q={q}"),
            LossSpec::Spring { q } => write!(f, "spring:Q={q}"),
            LossSpec::SpringMain => f.write_str("spring-main"),
            LossSpec::Tempered { t } => write!(f, "tempered:t={t}"),
        }
    }
}

impl FromStr for LossSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (name, args) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let name = name.trim().to_ascii_lowercase().replace('_', "-");
        let args = parse_args(s, args)?;
        let spec = match name.as_str() {
            "logistic" | "exponential" | "square" | "hinge" | "zero-one" | "0/1" | "0-1" | "spring-main" => {
                if let Some((k, _)) = args.first() {
                    return Err(Error::param(
                        "loss",
                        format!("no parameter for `{name}` ({LOSS_GRAMMAR})"),
                        format!("`{s}` (parameter `{k}`)"),
                    ));
                }
                match name.as_str() {
                    "logistic" => LossSpec::Logistic,
                    "exponential" => LossSpec::Exponential,
                    "square" => LossSpec::Square,
                    "hinge" => LossSpec::Hinge,
                    "spring-main" => LossSpec::SpringMain,
                    _ => LossSpec::ZeroOne,
                }
            }
            "clipped-logistic" => LossSpec::ClippedLogistic { q: one_arg(s, &args, "q", Some(DEFAULT_CLIP_Q))? },
            "spring" => LossSpec::Spring { q: one_arg(s, &args, "Q", Some(DEFAULT_SPRING_Q))? },
            "tempered" => LossSpec::Tempered { t: one_arg(s, &args, "t", None)? },
            _ => return Err(Error::param("loss", LOSS_GRAMMAR, format!("`{s}`"))),
        };
        spec.check()?;
        Ok(spec)
    }
}

/// Parses `k=v,k=v` after the colon into (key, value) pairs.
fn parse_args(whole: &str, args: Option<&str>) -> Result<Vec<(String, f64)>> {
    let Some(args) = args else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for part in args.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            return Err(Error::param(
                "loss",
                format!("parameters as `key=value` ({LOSS_GRAMMAR})"),
                format!("`{whole}`"),
            ));
        };
        let k = k.trim().to_string();
        let v: f64 = v
            .trim()
            .parse()
            .map_err(|_| Error::param("loss", format!("a number for `{k}`"), format!("`{}` in `{whole}`", v.trim())))?;
        out.push((k, v));
    }
    Ok(out)
}

/// The loss's single parameter `key` (case-insensitive), or its default when absent.
fn one_arg(whole: &str, args: &[(String, f64)], key: &str, default: Option<f64>) -> Result<f64> {
    let mut found = None;
    for (k, v) in args {
        if !k.eq_ignore_ascii_case(key) {
            return Err(Error::param(
                "loss",
                format!("the parameter `{key}` only ({LOSS_GRAMMAR})"),
                format!("`{whole}` (parameter `{k}`)"),
            ));
        }
        if found.replace(*v).is_some() {
            return Err(Error::param("loss", format!("`{key}` given once"), format!("`{whole}`")));
        }
    }
    found
        .or(default)
        .ok_or_else(|| Error::param("loss", format!("`{key}=<value>` ({LOSS_GRAMMAR})"), format!("`{whole}`")))
}

impl Serialize for LossSpec {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for LossSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
