//! Margin losses `F(z)` on the edge `z = y·H(x)`, their secant ("v-") derivatives, the optimal
//! Bregman information (OBI) and the two offset oracles of SecBoost (SPEC §6).
//!
//! The one design choice: a [`Loss`] gives **values only**. It has no derivative method at all —
//! not for the built-in losses, not for user closures — so SecBoost cannot use first-order
//! information even by accident. Everything the booster needs is computed from loss values:
//! secant slopes [`v_derivative`] / [`v_derivative2`], the OBI [`obi`] / [`obi_convex`], and the
//! offsets [`offset_grid`] / [`offset_convex`].
//!
//! Losses are named by a [`LossSpec`] string (`logistic`, `spring:Q=500`, ...) in configurations,
//! or given as a Rust closure ([`Loss::custom`]) or a batch closure ([`Loss::custom_batch`], the hook
//! for vectorised callables such as a numpy function).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{Error, Result};

/// A user loss on one edge: `z ↦ F(z)`.
pub type LossFn = Arc<dyn Fn(f64) -> f64 + Send + Sync>;

/// A user loss on many edges at once: fills `out[i] = F(z[i])` (`z` and `out` have the same length).
/// A failing evaluation should write NaN; SecBoost then stops with [`Error::Numerical`].
pub type BatchLossFn = Arc<dyn Fn(&[f64], &mut [f64]) + Send + Sync>;

/// Default `q` of the clipped logistic loss (the SecBoost paper's figure).
pub const DEFAULT_CLIP_Q: f64 = -2.0;

/// Default `Q` of the spring loss (the SecBoost paper's experiments).
pub const DEFAULT_SPRING_Q: f64 = 500.0;

/// An offset is "numerically zero" below this many units of `max(1, |edge|)` (SPEC §6, degenerate
/// cases).
const DEGENERATE_OFFSET: f64 = 1e-10;

/// Magnitude (in units of `max(1, |edge|)`) of the seeded random offset used in degenerate cases;
/// the actual magnitude is drawn uniformly in `[1, 2)` times this.
const RANDOM_OFFSET: f64 = 1e-7;

/// Interior points per pass of the unimodal (concave) search in [`obi_convex`].
const ZOOM_POINTS: usize = 16;

/// Passes of the unimodal search: each shrinks the bracket by `2/(ZOOM_POINTS + 1)`, so 10 passes
/// leave a bracket of about `4e-10` of the secant's width.
const ZOOM_PASSES: usize = 10;

/// The fine grid that checks the OBI in [`offset_grid`] has this many times more intervals than
/// the scan grid.
const OBI_REFINE: usize = 4;

/// Divisions by 2 of the guess in [`offset_convex`] before falling back to a random offset.
const MAX_CONVEX_DIVISIONS: usize = 200;

// ------------------------------------------------------------------------------------------------
// LossSpec
// ------------------------------------------------------------------------------------------------

/// A built-in loss by name, as written in configurations and on the command line (SPEC §6).
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
    /// The spring loss of the SecBoost paper's main text (SPEC §6):
    /// `ln(1 + e^(−z)) + 1 − √(1 − 4(z − round(z))²)`, bumps of height 1 at the half-integers,
    /// `F(0) = ln 2`. Not the appendix form at `Q = 1` ([`LossSpec::Spring`], whose bumps are moved
    /// by ½: `F(0) = 1 + ln 2`). No parameter. Not convex, not Lipschitz.
    SpringMain,
    /// Tempered exponential loss `exp_t(−z)^(2−t) = [1 − (1−t)z]_+^((2−t)/(1−t))` (SPEC §1, §5);
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
    /// one (SPEC §6: the theorem needs `F` continuous at every current edge).
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

// ------------------------------------------------------------------------------------------------
// Built-in loss values
// ------------------------------------------------------------------------------------------------

/// `ln(1 + e^(−z))` without overflow: `ln_1p(e^(−z))` for `z > 0`, `−z + ln_1p(e^z)` otherwise.
#[inline]
fn logistic(z: f64) -> f64 {
    if z > 0.0 {
        (-z).exp().ln_1p()
    } else {
        -z + z.exp().ln_1p()
    }
}

/// The spring loss (SPEC §6).
#[inline]
fn spring(z: f64, q: f64) -> f64 {
    let zq = q * z - 0.5;
    // |r| ≤ ½ exactly (rounding to the nearest integer), so 1 − 4r² ≥ 0 up to rounding.
    let r = zq - zq.round();
    logistic(z) + (1.0 - (1.0 - 4.0 * r * r).max(0.0).sqrt()) / q
}

/// The spring loss's main-text form (SPEC §6): `ln(1 + e^(−z)) + 1 − √(1 − 4(z − round(z))²)`.
#[inline]
fn spring_main(z: f64) -> f64 {
    // |r| ≤ ½ exactly, so 1 − 4r² ≥ 0 up to rounding.
    let r = z - z.round();
    logistic(z) + (1.0 - (1.0 - 4.0 * r * r).max(0.0).sqrt())
}

/// `exp_t(−z)^(2−t) = [1 − (1−t) z]_+^((2−t)/(1−t))`, with `t = 1` as `e^(−z)` (SPEC §1, §5).
///
/// A private helper (rather than `crate::tempered::exp_t`) so this module does not depend on the
/// tempered-arithmetic module; the two must agree on `exp_t(−z)^(2−t)`.
#[inline]
fn tempered_exp_loss(z: f64, t: f64) -> f64 {
    let one_t = 1.0 - t;
    // SPEC §1: |1 − t| < 1e−9 is t = 1.
    if one_t.abs() < 1e-9 {
        return (-z).exp();
    }
    let u = -one_t * z; // base = 1 + u
    if u <= -1.0 {
        // The base is ≤ 0: exp_t is 0 for t < 1 (weights switch off), +∞ for t > 1.
        return if t < 1.0 { 0.0 } else { f64::INFINITY };
    }
    ((2.0 - t) / one_t * u.ln_1p()).exp()
}

#[inline]
fn builtin_value(spec: LossSpec, z: f64) -> f64 {
    if z.is_nan() {
        return f64::NAN;
    }
    match spec {
        LossSpec::Logistic => logistic(z),
        LossSpec::Exponential => (-z).exp(),
        LossSpec::Square => (1.0 - z) * (1.0 - z),
        LossSpec::Hinge => (1.0 - z).max(0.0),
        LossSpec::ZeroOne => {
            if z <= 0.0 {
                1.0
            } else {
                0.0
            }
        }
        LossSpec::ClippedLogistic { q } => logistic(z).min(logistic(q)),
        LossSpec::Spring { q } => spring(z, q),
        LossSpec::SpringMain => spring_main(z),
        LossSpec::Tempered { t } => tempered_exp_loss(z, t),
    }
}

/// `out[i] = f(z[i])`, NaN in → NaN out.
#[inline]
fn fill(z: &[f64], out: &mut [f64], f: impl Fn(f64) -> f64) {
    for (o, &x) in out.iter_mut().zip(z) {
        *o = if x.is_nan() { f64::NAN } else { f(x) };
    }
}

// ------------------------------------------------------------------------------------------------
// Loss
// ------------------------------------------------------------------------------------------------

/// A margin loss `F: R → R` on the edge `z = y·H(x)`, **values only** (SPEC §6).
///
/// `Loss` deliberately has no derivative method — there is nothing like `derivative`, `grad` or
/// `hessian` on it, and user closures supply values only — so SecBoost boosts it from loss values
/// alone. This is checked at compile time:
///
/// ```compile_fail
/// let loss = boostlab::loss::Loss::from_spec(&boostlab::loss::LossSpec::Logistic).unwrap();
/// let _ = loss.derivative(0.0); // no such method
/// ```
///
/// ```
/// let loss = boostlab::loss::Loss::from_spec(&boostlab::loss::LossSpec::Logistic).unwrap();
/// assert!((loss.value(0.0) - 2f64.ln()).abs() < 1e-15);
/// ```
///
/// Besides values, a loss carries two declarations the booster trusts: [`Loss::declared_convex`]
/// (selects the convex OBI and offset oracle) and [`Loss::beta`] (a smoothness constant, which
/// gives SecBoost a closed-form leveraging coefficient). Cloning is cheap (closures are shared).
#[derive(Clone)]
pub struct Loss {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Builtin(LossSpec),
    Scalar { name: String, f: LossFn, convex: bool, beta: Option<f64> },
    Batch { name: String, f: BatchLossFn, convex: bool, beta: Option<f64> },
}

impl fmt::Debug for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loss")
            .field("name", &self.name())
            .field("convex", &self.declared_convex())
            .field("beta", &self.beta())
            .finish()
    }
}

fn check_beta(beta: Option<f64>) -> Result<()> {
    match beta {
        Some(b) if !(b.is_finite() && b > 0.0) => {
            Err(Error::param("beta", "a finite smoothness constant > 0, or none", b))
        }
        _ => Ok(()),
    }
}

impl Loss {
    /// The built-in loss named by `spec` (its parameter is checked).
    pub fn from_spec(spec: &LossSpec) -> Result<Loss> {
        spec.check()?;
        Ok(Loss { inner: Inner::Builtin(*spec) })
    }

    /// A user loss given as a closure on one edge.
    ///
    /// `convex` declares F convex (the convex OBI and offset oracle are then used — declaring a
    /// non-convex loss convex voids SecBoost's guarantees); `beta` declares F β-smooth (finite,
    /// > 0), which enables the closed-form leveraging coefficient.
    pub fn custom(name: impl Into<String>, f: LossFn, convex: bool, beta: Option<f64>) -> Result<Loss> {
        check_beta(beta)?;
        Ok(Loss { inner: Inner::Scalar { name: name.into(), f, convex, beta } })
    }

    /// A user loss given as a batch closure (`out[i] = F(z[i])`), the hook for vectorised
    /// callables; otherwise as [`Loss::custom`]. Single values are evaluated as batches of one.
    pub fn custom_batch(name: impl Into<String>, f: BatchLossFn, convex: bool, beta: Option<f64>) -> Result<Loss> {
        check_beta(beta)?;
        Ok(Loss { inner: Inner::Batch { name: name.into(), f, convex, beta } })
    }

    /// The loss's name: the canonical [`LossSpec`] string for built-ins, the given name otherwise.
    pub fn name(&self) -> String {
        match &self.inner {
            Inner::Builtin(s) => s.to_string(),
            Inner::Scalar { name, .. } | Inner::Batch { name, .. } => name.clone(),
        }
    }

    /// The spec of a built-in loss; `None` for user losses.
    pub fn spec(&self) -> Option<&LossSpec> {
        match &self.inner {
            Inner::Builtin(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the loss is declared convex.
    pub fn declared_convex(&self) -> bool {
        match &self.inner {
            Inner::Builtin(s) => s.declared_convex(),
            Inner::Scalar { convex, .. } | Inner::Batch { convex, .. } => *convex,
        }
    }

    /// The declared smoothness constant β, if any.
    pub fn beta(&self) -> Option<f64> {
        match &self.inner {
            Inner::Builtin(s) => s.beta(),
            Inner::Scalar { beta, .. } | Inner::Batch { beta, .. } => *beta,
        }
    }

    /// Whether the loss is a user batch closure (which SecBoost calls from one thread only, so
    /// that a callable tied to an interpreter lock is never called concurrently).
    pub fn is_batch(&self) -> bool {
        matches!(self.inner, Inner::Batch { .. })
    }

    /// `F(z)`.
    #[inline]
    pub fn value(&self, z: f64) -> f64 {
        match &self.inner {
            Inner::Builtin(s) => builtin_value(*s, z),
            Inner::Scalar { f, .. } => f(z),
            Inner::Batch { f, .. } => {
                let mut out = [f64::NAN];
                f(&[z], &mut out);
                out[0]
            }
        }
    }

    /// `out[i] = F(z[i])` for every `i`.
    ///
    /// # Panics
    /// If `z` and `out` have different lengths (a programming error).
    pub fn eval_many(&self, z: &[f64], out: &mut [f64]) {
        assert_eq!(z.len(), out.len(), "Loss::eval_many: z and out differ in length");
        match &self.inner {
            // One match per batch, not per element (STYLE 4).
            Inner::Builtin(spec) => match *spec {
                LossSpec::Logistic => fill(z, out, logistic),
                LossSpec::Exponential => fill(z, out, |x| (-x).exp()),
                LossSpec::Square => fill(z, out, |x| (1.0 - x) * (1.0 - x)),
                LossSpec::Hinge => fill(z, out, |x| (1.0 - x).max(0.0)),
                LossSpec::ZeroOne => fill(z, out, |x| if x <= 0.0 { 1.0 } else { 0.0 }),
                LossSpec::ClippedLogistic { q } => {
                    let cap = logistic(q);
                    fill(z, out, |x| logistic(x).min(cap))
                }
                LossSpec::Spring { q } => fill(z, out, |x| spring(x, q)),
                LossSpec::SpringMain => fill(z, out, spring_main),
                LossSpec::Tempered { t } => fill(z, out, |x| tempered_exp_loss(x, t)),
            },
            Inner::Scalar { f, .. } => {
                for (o, &x) in out.iter_mut().zip(z) {
                    *o = f(x);
                }
            }
            Inner::Batch { f, .. } => f(z, out),
        }
    }

    /// `F` on a fresh vector (allocating convenience over [`Loss::eval_many`]).
    pub fn values(&self, z: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; z.len()];
        self.eval_many(z, &mut out);
        out
    }
}

// ------------------------------------------------------------------------------------------------
// v-derivatives and OBI
// ------------------------------------------------------------------------------------------------

/// The v-derivative (secant slope) `δ_v F(z) = (F(z + v) − F(z)) / v` (SPEC §6). `v ≠ 0`; `v = 0`
/// gives NaN.
pub fn v_derivative(loss: &Loss, z: f64, v: f64) -> f64 {
    if v == 0.0 {
        return f64::NAN;
    }
    let mut out = [0.0; 2];
    loss.eval_many(&[z + v, z], &mut out);
    // SPEC §6: δ_v F(z) = (F(z + v) − F(z)) / v.
    (out[0] - out[1]) / v
}

/// The order-2 v-derivative `δ_{v1,v2} F(z) = (δ_{v1} F(z + v2) − δ_{v1} F(z)) / v2` (SPEC §6),
/// evaluated in its unravelled form `(F(z+v1+v2) + F(z) − F(z+v1) − F(z+v2)) / (v1 v2)`, which is
/// exactly symmetric in `(v1, v2)` in floating point. Zero offsets give NaN.
pub fn v_derivative2(loss: &Loss, z: f64, v1: f64, v2: f64) -> f64 {
    if v1 == 0.0 || v2 == 0.0 {
        return f64::NAN;
    }
    let mut out = [0.0; 4];
    loss.eval_many(&[z + (v1 + v2), z, z + v1, z + v2], &mut out);
    ((out[0] + out[1]) - (out[2] + out[3])) / (v1 * v2)
}

/// The optimal Bregman information `Q_F(a, b, c)` on a grid (SPEC §6): with the line through
/// `(a, F(a))` and `(b, F(b))`, the maximum of `line(x) − F(x)` over the `n + 1` equally spaced
/// points `x` from `a` to `c` inclusive (`n = 0` is read as 1). Always ≥ 0 (the point `x = a`
/// gives 0). For any `F` this is a lower estimate of the exact OBI that improves as `n` grows.
/// `b = a` (no line) or a NaN value gives NaN.
pub fn obi(loss: &Loss, a: f64, b: f64, c: f64, n: usize) -> f64 {
    let n = n.max(1);
    let mut x: Vec<f64> = (0..=n).map(|k| a + (c - a) * (k as f64 / n as f64)).collect();
    x[n] = c;
    x.push(b);
    let mut f = vec![0.0; x.len()];
    loss.eval_many(&x, &mut f);
    let (fa, fb) = (f[0], f[n + 1]);
    obi_from_values(a, b, fa, fb, &x[..=n], &f[..=n])
}

/// `max(0, max_k (line(x_k) − F(x_k)))` for the line through `(a, fa)`, `(b, fb)`; NaN if any value
/// involved is NaN or the line is undefined.
fn obi_from_values(a: f64, b: f64, fa: f64, fb: f64, x: &[f64], f: &[f64]) -> f64 {
    if a == b || !fa.is_finite() || !fb.is_finite() {
        return f64::NAN;
    }
    let s = (fb - fa) / (b - a);
    let mut best = 0.0_f64;
    for (&xk, &fk) in x.iter().zip(f) {
        // SPEC §6: Q_F(a, b, c) = max over x between a and c of [line(x) − F(x)].
        let g = fa + s * (xk - a) - fk;
        if g.is_nan() {
            return f64::NAN;
        }
        best = best.max(g);
    }
    best
}

/// The grid point `z*` of SPEC §6's general oracle: among `(xs, fs)`, the secant from `(e_t, f_t)`
/// with the smallest slope when `d = ẽ_{t−1} − ẽ_t > 0` (the largest otherwise); ties go to the
/// first point. `None` when every slope is NaN.
fn best_secant_point(xs: &[f64], fs: &[f64], e_t: f64, f_t: f64, d: f64) -> Option<f64> {
    let mut best: Option<(f64, f64)> = None; // (slope, z_c)
    for (&xc, &fc) in xs.iter().zip(fs) {
        let s = (fc - f_t) / (xc - e_t);
        if s.is_nan() {
            continue;
        }
        // SPEC §6: smallest slope if ẽ_t < ẽ_(t−1), largest otherwise.
        let better = match best {
            None => true,
            Some((sb, _)) => (d > 0.0 && s < sb) || (d < 0.0 && s > sb),
        };
        if better {
            best = Some((s, xc));
        }
    }
    best.map(|b| b.1)
}

/// One pass of the convex OBI's unimodal search: `line − F` at the points `(xs, fs)` (line through
/// `(z, fa)` with slope `s`). Returns the best value and the new bracket, or `None` on a NaN.
fn zoom_pass(xs: &[f64], fs: &[f64], z: f64, fa: f64, s: f64, lo: f64, hi: f64) -> Option<(f64, f64, f64)> {
    let mut jbest = 0;
    let mut gbest = f64::NEG_INFINITY;
    for (j, (&x, &f)) in xs.iter().zip(fs).enumerate() {
        // SPEC §6: line(x) − F(x), concave for convex F.
        let g = fa + s * (x - z) - f;
        if g.is_nan() {
            return None;
        }
        if g > gbest {
            gbest = g;
            jbest = j;
        }
    }
    // The maximiser of a concave function lies between the best point's neighbours.
    let new_lo = if jbest == 0 { lo } else { xs[jbest - 1] };
    let new_hi = if jbest + 1 == xs.len() { hi } else { xs[jbest + 1] };
    Some((gbest, new_lo, new_hi))
}

/// The OBI of a convex loss, `Q_F(z, z + v, z + v)` (SPEC §6, the convex form of `Q*`).
///
/// The built-in convex losses (logistic, exponential, square, hinge, tempered) use their closed
/// form, the exact maximum (issue 18; `LossSpec::obi_closed_form`). For user losses `line − F` is
/// concave between `z` and `z + v`, so its maximum is found by a unimodal search (repeated
/// 16-point grids that zoom on the best point, each a single [`Loss::eval_many`] call: 162 loss
/// evaluations, a lower bound of the maximum). Only meaningful for convex `F` (for others it is a
/// local search). `v = 0` gives NaN.
pub fn obi_convex(loss: &Loss, z: f64, v: f64) -> f64 {
    let b = z + v;
    if v == 0.0 || b == z {
        return f64::NAN;
    }
    // Issue 18: the built-in convex losses' exact maximum, no loss evaluation at all.
    if let Some(q) = loss.spec().and_then(|s| s.obi_closed_form(z, b)) {
        return q;
    }
    let mut ends = [0.0; 2];
    loss.eval_many(&[z, b], &mut ends);
    let (fa, fb) = (ends[0], ends[1]);
    if !fa.is_finite() || !fb.is_finite() {
        return f64::NAN;
    }
    let s = (fb - fa) / (b - z);
    let (mut lo, mut hi) = if z < b { (z, b) } else { (b, z) };
    let mut x = [0.0; ZOOM_POINTS];
    let mut f = [0.0; ZOOM_POINTS];
    let mut best = 0.0_f64;
    for _ in 0..ZOOM_PASSES {
        let step = (hi - lo) / (ZOOM_POINTS + 1) as f64;
        if step.is_nan() || step <= 0.0 {
            break;
        }
        for (j, xj) in x.iter_mut().enumerate() {
            *xj = lo + step * (j + 1) as f64;
        }
        loss.eval_many(&x, &mut f);
        let Some((gbest, new_lo, new_hi)) = zoom_pass(&x, &f, z, fa, s, lo, hi) else { return f64::NAN };
        best = best.max(gbest);
        lo = new_lo;
        hi = new_hi;
    }
    best
}

/// `Q*_F(z, z_prev, v)` (SPEC §6): [`obi_convex`]`(z, v)` if the loss is declared convex,
/// otherwise [`obi`]`(z, z + v, z_prev, n)` on `n + 1` grid points.
pub fn obi_star(loss: &Loss, z: f64, z_prev: f64, v: f64, n: usize) -> f64 {
    if loss.declared_convex() {
        obi_convex(loss, z, v)
    } else {
        obi(loss, z, z + v, z_prev, n)
    }
}

/// Grid points evaluated per [`Loss::eval_many`] call in [`obi_star_many`] (bounds its memory).
const OBI_MANY_POINTS: usize = 1 << 16;

/// [`obi_star`] for many examples: `out[i] = Q*_F(zs[i], z_prev[i], vs[i])`, the non-convex form
/// on `n + 1` grid points. Bit-identical to calling [`obi_star`] on each example; the loss is
/// evaluated in chunks of examples (one [`Loss::eval_many`] call per chunk of about 65536 points),
/// so a batch loss (e.g. a Python callable) is called a few times, not once per example.
///
/// # Panics
/// If the three slices differ in length (a programming error).
pub fn obi_star_many(loss: &Loss, zs: &[f64], z_prev: &[f64], vs: &[f64], n: usize) -> Vec<f64> {
    assert!(zs.len() == z_prev.len() && zs.len() == vs.len(), "obi_star_many: slices differ in length");
    if loss.declared_convex() {
        return obi_convex_many(loss, zs, vs);
    }
    let n = n.max(1);
    let per = (OBI_MANY_POINTS / (n + 2)).max(1);
    let mut out = Vec::with_capacity(zs.len());
    let mut x = Vec::new();
    let mut f = Vec::new();
    for start in (0..zs.len()).step_by(per) {
        let end = (start + per).min(zs.len());
        x.clear();
        for i in start..end {
            // The grid of [`obi`]: a + (c − a)·k/n for k = 0..n, the last point c itself, then b.
            let (a, c) = (zs[i], z_prev[i]);
            let s0 = x.len();
            x.extend((0..=n).map(|k| a + (c - a) * (k as f64 / n as f64)));
            x[s0 + n] = c;
            x.push(a + vs[i]);
        }
        f.resize(x.len(), 0.0);
        loss.eval_many(&x, &mut f);
        for (k, i) in (start..end).enumerate() {
            let (xb, fb) = (&x[k * (n + 2)..(k + 1) * (n + 2)], &f[k * (n + 2)..(k + 1) * (n + 2)]);
            out.push(obi_from_values(zs[i], zs[i] + vs[i], fb[0], fb[n + 1], &xb[..=n], &fb[..=n]));
        }
    }
    out
}

// ------------------------------------------------------------------------------------------------
// Closed-form OBI of the built-in convex losses (issue 18)
// ------------------------------------------------------------------------------------------------

/// Below this `|v|` the closed-form OBI of the logistic and exponential losses is its Taylor
/// expansion at the secant's midpoint (relative truncation error of order `(v/2)⁴ ≤ 7e−14`);
/// above it, the exact formula (relative rounding error of order `ε/|v| ≤ 1e−12`).
const OBI_TAYLOR_V: f64 = 1e-3;

/// `σ(x) = 1/(1 + e^(−x))` without overflow (`e^(−x) = ∞` gives 0).
#[inline]
fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// `max(0, s·u − ΔF(u))` over the two forms of a line minus a convex function.
#[inline]
fn gap(s: f64, u: f64, df: f64) -> f64 {
    // SPEC §6: line(x) − F(x) = F(z) + s(x − z) − F(x) with x = z + u.
    (s * u - df).max(0.0)
}

/// `u* = x* − z` clamped to the interval between 0 and `v`.
#[inline]
fn clamp_between(u: f64, v: f64) -> f64 {
    if v > 0.0 {
        u.clamp(0.0, v)
    } else {
        u.clamp(v, 0.0)
    }
}

impl LossSpec {
    /// The exact OBI `Q_F(z, z + v, z + v)` of a built-in convex loss (SPEC §6: "closed form"),
    /// from `z` and `b = z + v` (the secant's ends as the search would use them); `None` for the
    /// other losses, or when the closed form is not finite (the caller then searches).
    ///
    /// For a convex differentiable `F`, `line − F` is concave and peaks where `F′(x*) = s`, the
    /// secant slope, clamped to `[z, b]`:
    /// - logistic: `F′(x) = −1/(1 + eˣ)`, `x* = ln(−(1 + s)/s)`. `F = −x + softplus(x)`, and a
    ///   linear term changes no OBI, so the gap is computed from whichever of `F` and
    ///   `G = softplus` has the smaller slope (no cancellation against a slope near −1);
    /// - exponential: `F′(x) = −e^(−x)`, `x* = −ln(−s)`, i.e. `u* = x* − z = −ln r` with
    ///   `r = (1 − e^(−v))/v`;
    /// - square: `v²/4` (the midpoint);
    /// - hinge: the kink `x = 1` when it lies strictly inside, where the gap is
    ///   `(1 − lo)(hi − 1)/(hi − lo)`; 0 otherwise (the loss is linear on the interval);
    /// - tempered `F = [1 − (1−t)x]_+^((2−t)/(1−t))`, convex for every allowed `t < 2` (power
    ///   `p ≥ 1` of a linear base for `t < 1`, `p < 0` of a positive increasing base for
    ///   `1 < t < 2`): `F′(x) = −(2−t)·base^(1/(1−t))` where the base is positive, so
    ///   `base* = (−s/(2−t))^(1−t)` and `x* = (1 − base*)/(1−t)`; `s = 0` (both ends where `F = 0`)
    ///   gives 0. `t = 1` is the exponential loss.
    ///
    /// Numerically: for the logistic and exponential losses `F(z + u) − F(z)` is evaluated without
    /// cancellation (`ln_1p`/`exp_m1` forms), and for `|v| < 10⁻³` the gap is the Taylor expansion
    /// `F″h²/2 + h⁴(F⁗/24 + F‴²/(72F″))` at the midpoint (`h = v/2`), so the result keeps a
    /// relative error below 10⁻⁹ down to `|v| = 10⁻¹²` (checked against 50-digit references in
    /// `tests/issue_18_obi_closed_form.rs`). The tempered loss's gap is computed from loss values,
    /// like the search (absolute error a few ulps of `F`).
    pub(crate) fn obi_closed_form(&self, z: f64, b: f64) -> Option<f64> {
        let v = b - z;
        if v == 0.0 || v.is_nan() {
            return None;
        }
        let q = match *self {
            LossSpec::Square => 0.25 * v * v,
            LossSpec::Hinge => {
                let (lo, hi) = if v > 0.0 { (z, b) } else { (b, z) };
                if lo < 1.0 && 1.0 < hi {
                    // SPEC §6: the line at the kink, F(1) = 0.
                    (1.0 - lo) * (hi - 1.0) / (hi - lo)
                } else {
                    0.0
                }
            }
            LossSpec::Logistic => logistic_obi(z, v),
            LossSpec::Exponential => exponential_obi(z, v),
            LossSpec::Tempered { t } if (1.0 - t).abs() < 1e-9 => exponential_obi(z, v),
            LossSpec::Tempered { t } => tempered_obi(z, b, t),
            _ => return None,
        };
        q.is_finite().then_some(q)
    }
}

/// The logistic loss's OBI (see [`LossSpec::obi_closed_form`]).
fn logistic_obi(z: f64, v: f64) -> f64 {
    if v.abs() < OBI_TAYLOR_V {
        // Taylor at the midpoint c: p = σ(−c), F″ = p(1−p), F‴ = −F″(1 − 2p), F⁗ = F″(1 − 6p(1−p)).
        let (h, c) = (0.5 * v, z + 0.5 * v);
        let (p, q) = (sigmoid(-c), sigmoid(c));
        let f2 = p * q;
        let d = q - p;
        return f2 * (0.5 * h * h + h * h * h * h * ((1.0 - 6.0 * f2) / 24.0 + d * d / 72.0));
    }
    // ΔF(u) = F(z+u) − F(z), ΔG(u) = G(z+u) − G(z) for G = softplus = F + x: −s = −ΔF(v)/v ∈ (0, 1),
    // 1 + s = ΔG(v)/v, both without cancellation.
    // F(z + u) − F(z) = softplus(−z − u) − softplus(−z) = ln(1 + σ(−z)·(e^(−u) − 1)) without
    // cancellation, and G(z + u) − G(z) = ln(1 + σ(z)·(e^u − 1)); σ(∓z) once each (session 7).
    let (pm, pp) = (sigmoid(-z), sigmoid(z));
    let dfv = (pm * (-v).exp_m1()).ln_1p();
    let dgv = (pp * v.exp_m1()).ln_1p();
    let (s, s1) = (dfv / v, dgv / v);
    // SPEC §6 / issue 18: F′(x*) = −1/(1 + e^x*) = s ⇒ x* = ln(−(1 + s)/s).
    let u = clamp_between((s1 / -s).ln() - z, v);
    if s > -0.5 {
        gap(s, u, (pm * (-u).exp_m1()).ln_1p())
    } else {
        gap(s1, u, (pp * u.exp_m1()).ln_1p())
    }
}

/// The exponential loss's OBI (see [`LossSpec::obi_closed_form`]).
fn exponential_obi(z: f64, v: f64) -> f64 {
    if v.abs() < OBI_TAYLOR_V {
        // Taylor at the midpoint: every derivative is ±e^(−c): e^(−c)(h²/2 + h⁴/18).
        let (h, c) = (0.5 * v, z + 0.5 * v);
        return (-c).exp() * (0.5 * h * h + h * h * h * h / 18.0);
    }
    // F(z+u) − F(z) = e^(−z)(e^(−u) − 1); s = e^(−z)·(−r), r = (1 − e^(−v))/v.
    let r = -(-v).exp_m1() / v;
    // SPEC §6 / issue 18: F′(x*) = −e^(−x*) = s ⇒ x* = −ln(−s), u* = −ln r.
    let u = clamp_between(-r.ln(), v);
    (-z).exp() * gap(-r, u, (-u).exp_m1())
}

/// The tempered exponential loss's OBI, `t ≠ 1` (see [`LossSpec::obi_closed_form`]).
fn tempered_obi(z: f64, b: f64, t: f64) -> f64 {
    let (fa, fb) = (tempered_exp_loss(z, t), tempered_exp_loss(b, t));
    if !(fa.is_finite() && fb.is_finite()) {
        return f64::NAN;
    }
    let s = (fb - fa) / (b - z);
    if s >= 0.0 {
        // Both ends where F = 0 (t < 1): F is 0 in between.
        return 0.0;
    }
    let one_t = 1.0 - t;
    // F′(x) = −(2−t)·base^(1/(1−t)) = s ⇒ base* = (−s/(2−t))^(1−t), x* = (1 − base*)/(1−t).
    let base = (-s / (2.0 - t)).powf(one_t);
    let (lo, hi) = if z < b { (z, b) } else { (b, z) };
    let x = ((1.0 - base) / one_t).clamp(lo, hi);
    (fa + s * (x - z) - tempered_exp_loss(x, t)).max(0.0)
}

// ------------------------------------------------------------------------------------------------
// Offset oracles
// ------------------------------------------------------------------------------------------------

/// An offset returned by an oracle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OffsetChoice {
    /// The offset `v` (never 0).
    pub v: f64,
    /// `Q*` at `v` as the oracle evaluated it (0 for a random offset, which is not checked).
    pub obi: f64,
    /// Whether `v` is the seeded random offset of a degenerate case (`ẽ_t = ẽ_{t−1}` or a
    /// numerically zero offset), as in the SecBoost authors' implementation.
    pub random: bool,
}

/// Whether `v` is numerically zero next to the edge `e`.
#[inline]
fn negligible(v: f64, e: f64) -> bool {
    v.abs() <= DEGENERATE_OFFSET * e.abs().max(1.0)
}

/// The seeded tiny random offset of the degenerate cases: magnitude uniform in
/// `[1, 2) · 1e−7 · max(1, |e|)`, random sign.
fn random_offset(e: f64, seed: u64) -> OffsetChoice {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mag = RANDOM_OFFSET * e.abs().max(1.0) * (1.0 + rng.gen::<f64>());
    let v = if rng.gen::<bool>() { mag } else { -mag };
    OffsetChoice { v, obi: 0.0, random: true }
}

/// The general offset oracle, for any `F` (SPEC §6; the SecBoost paper's simple oracle).
///
/// Scans `Z = precision` equal steps from `e_t` (= ẽ_t) to `e_prev` (= ẽ_{t−1}), both included at
/// the far end, and takes the grid point `z*` whose secant from `(e_t, F(e_t))` has the smallest
/// slope if `e_t < e_prev` (the largest otherwise; ties go to the point nearest `e_t`); the offset
/// is `v = z* − e_t`. It then checks `Q*_F(e_t, e_prev, v) ≤ z` ([`obi_star`], non-convex form on a
/// grid `4Z` fine); if the check fails it doubles `Z` and retries, at most `max_doublings` times.
///
/// Returns `None` when no admissible offset was found — for example when `F` jumps by more than
/// `z` between `e_t` and `e_prev`: SecBoost's documented early stop. Degenerate cases
/// (`e_t = e_prev`, or a numerically zero offset) return the seeded random offset drawn from
/// `ChaCha8Rng::seed_from_u64(seed)`.
pub fn offset_grid(
    loss: &Loss,
    e_t: f64,
    e_prev: f64,
    z: f64,
    precision: usize,
    max_doublings: usize,
    seed: u64,
) -> Option<OffsetChoice> {
    let d = e_prev - e_t;
    if negligible(d, e_t) {
        // SPEC §6: ẽ_t = ẽ_(t−1) → a small random non-zero offset.
        return Some(random_offset(e_t, seed));
    }
    let f_t = loss.value(e_t);
    if !f_t.is_finite() {
        return None;
    }
    offset_grid_from(loss, e_t, e_prev, z, precision, 0, max_doublings, seed, f_t)
}

/// [`offset_grid`]'s scan from its `k0`-th doubling on (`f_t = F(e_t)`, finite; `e_t ≠ e_prev`).
#[allow(clippy::too_many_arguments)]
fn offset_grid_from(
    loss: &Loss,
    e_t: f64,
    e_prev: f64,
    z: f64,
    precision: usize,
    k0: usize,
    max_doublings: usize,
    seed: u64,
    f_t: f64,
) -> Option<OffsetChoice> {
    let d = e_prev - e_t;
    let mut x = Vec::new();
    let mut f = Vec::new();
    for k in k0..=max_doublings {
        let zk = precision.max(1) << k;
        // Scan grid z_c = e_t + j·d/Z, j = 1..Z (the last point is e_prev itself).
        x.clear();
        x.extend((1..=zk).map(|j| e_t + d * (j as f64 / zk as f64)));
        x[zk - 1] = e_prev;
        f.resize(zk, 0.0);
        loss.eval_many(&x, &mut f);
        let z_star = best_secant_point(&x, &f, e_t, f_t, d)?;
        let v = z_star - e_t;
        if negligible(v, e_t) {
            return Some(random_offset(e_t, seed));
        }
        // Check Q* ≤ z on a finer grid.
        let q = obi_star(loss, e_t, e_prev, v, OBI_REFINE * zk);
        if q <= z {
            return Some(OffsetChoice { v, obi: q, random: false });
        }
    }
    None
}

/// Issue 18: [`offset_grid`]`(loss, e_t, e_prev, z, precision, max_doublings, seed)` and
/// [`obi_star`]`(loss, e_t, e_prev, v_prev, qbar_points)` — the OBI of the previous offset at the
/// new edge, a term of SecBoost's `q̄` — for a loss not declared convex from one evaluation of `F`
/// on the grid they share (a convex loss's OBI is not on a grid: the two calls are made).
///
/// With `qbar_points = 4·precision` the `4Z + 1` points of `q̄`'s grid from `e_t` to `e_prev` are
/// those of the oracle's first check, and every fourth one is a point of its first scan (`j/Z`
/// and `4j/4Z` round to the same double): `4Z + 3` loss evaluations instead of `9Z + 4`. Both
/// results are bit-identical to the two calls (otherwise the two calls are made).
#[allow(clippy::too_many_arguments)]
pub fn offset_grid_and_obi(
    loss: &Loss,
    e_t: f64,
    e_prev: f64,
    v_prev: f64,
    z: f64,
    precision: usize,
    max_doublings: usize,
    seed: u64,
    qbar_points: usize,
) -> (Option<OffsetChoice>, f64) {
    let d = e_prev - e_t;
    let zk = precision.max(1);
    let m = OBI_REFINE * zk;
    if loss.declared_convex() || negligible(d, e_t) || m != qbar_points.max(1) {
        let q = obi_star(loss, e_t, e_prev, v_prev, qbar_points);
        return (offset_grid(loss, e_t, e_prev, z, precision, max_doublings, seed), q);
    }
    // The grid of `obi`: e_t + d·k/m for k = 0..m, the last point e_prev itself, then the second
    // points of the two lines (the previous offset's, evaluated now; the new one's, later).
    let mut x: Vec<f64> = (0..=m).map(|k| e_t + d * (k as f64 / m as f64)).collect();
    x[m] = e_prev;
    x.push(e_t + v_prev);
    let mut f = vec![0.0; x.len()];
    loss.eval_many(&x, &mut f);
    let q_prev = obi_from_values(e_t, e_t + v_prev, f[0], f[m + 1], &x[..=m], &f[..=m]);
    let f_t = loss.value(e_t);
    if !f_t.is_finite() {
        return (None, q_prev);
    }
    // The first scan: z_c = e_t + d·j/Z, j = 1..Z — the grid's points 4j (the last is e_prev).
    let xs: Vec<f64> = (1..=zk).map(|j| x[OBI_REFINE * j]).collect();
    let fs: Vec<f64> = (1..=zk).map(|j| f[OBI_REFINE * j]).collect();
    let Some(z_star) = best_secant_point(&xs, &fs, e_t, f_t, d) else { return (None, q_prev) };
    let v = z_star - e_t;
    if negligible(v, e_t) {
        return (Some(random_offset(e_t, seed)), q_prev);
    }
    // The first check, Q* ≤ z, on the same grid (`obi_star`, non-convex form).
    let b = e_t + v;
    let q = obi_from_values(e_t, b, f[0], loss.value(b), &x[..=m], &f[..=m]);
    if q <= z {
        return (Some(OffsetChoice { v, obi: q, random: false }), q_prev);
    }
    (offset_grid_from(loss, e_t, e_prev, z, precision, 1, max_doublings, seed, f_t), q_prev)
}

/// The offset oracle for a convex `F` (SPEC §6, dichotomic version).
///
/// Starts from the guess `v = (e_prev − e_t) / precision` (pointing from ẽ_t towards ẽ_{t−1}) and
/// halves it until the convex OBI `Q_F(e_t, e_t + v, e_t + v)` ([`obi_convex`]) is ≤ `z`. For a
/// convex `F` this always succeeds as `v → 0`; when the offset becomes numerically zero first (or
/// `e_t = e_prev`), the seeded random offset of the degenerate case is returned instead.
pub fn offset_convex(loss: &Loss, e_t: f64, e_prev: f64, z: f64, precision: usize, seed: u64) -> OffsetChoice {
    let d = e_prev - e_t;
    if negligible(d, e_t) {
        return random_offset(e_t, seed);
    }
    let mut v = d / precision.max(1) as f64;
    for _ in 0..MAX_CONVEX_DIVISIONS {
        if negligible(v, e_t) {
            break;
        }
        let q = obi_convex(loss, e_t, v);
        if q <= z {
            return OffsetChoice { v, obi: q, random: false };
        }
        v *= 0.5;
    }
    random_offset(e_t, seed)
}

// ------------------------------------------------------------------------------------------------
// Batched oracles: the same computations for many examples at once
// ------------------------------------------------------------------------------------------------

/// [`obi_convex`] for many `(z, v)` pairs, run in lockstep so that each step of the search makes a
/// single [`Loss::eval_many`] call for all pairs still searching. Bit-identical to calling
/// [`obi_convex`] on each pair.
pub fn obi_convex_many(loss: &Loss, zs: &[f64], vs: &[f64]) -> Vec<f64> {
    let n = zs.len();
    let mut out = vec![f64::NAN; n];
    // (index, fa, slope, lo, hi, best)
    let mut live: Vec<(usize, f64, f64, f64, f64, f64)> = Vec::new();
    let mut todo: Vec<usize> = (0..n).filter(|&i| !(vs[i] == 0.0 || zs[i] + vs[i] == zs[i])).collect();
    if let Some(spec) = loss.spec() {
        // Issue 18: the closed form where there is one (as `obi_convex`), the search for the rest.
        todo.retain(|&i| match spec.obi_closed_form(zs[i], zs[i] + vs[i]) {
            Some(q) => {
                out[i] = q;
                false
            }
            None => true,
        });
    }
    let mut x: Vec<f64> = todo.iter().flat_map(|&i| [zs[i], zs[i] + vs[i]]).collect();
    let mut f = vec![0.0; x.len()];
    loss.eval_many(&x, &mut f);
    for (k, &i) in todo.iter().enumerate() {
        let (z, b) = (zs[i], zs[i] + vs[i]);
        let (fa, fb) = (f[2 * k], f[2 * k + 1]);
        if !fa.is_finite() || !fb.is_finite() {
            continue;
        }
        let (lo, hi) = if z < b { (z, b) } else { (b, z) };
        live.push((i, fa, (fb - fa) / (b - z), lo, hi, 0.0));
    }
    for _ in 0..ZOOM_PASSES {
        // Pairs whose bracket can no longer shrink are done (as the scalar search's `break`).
        let (done, still): (Vec<_>, Vec<_>) = live.into_iter().partition(|l| {
            let step = (l.4 - l.3) / (ZOOM_POINTS + 1) as f64;
            step.is_nan() || step <= 0.0
        });
        for l in done {
            out[l.0] = l.5;
        }
        live = still;
        if live.is_empty() {
            break;
        }
        x.clear();
        for l in &live {
            let step = (l.4 - l.3) / (ZOOM_POINTS + 1) as f64;
            x.extend((0..ZOOM_POINTS).map(|j| l.3 + step * (j + 1) as f64));
        }
        f.resize(x.len(), 0.0);
        loss.eval_many(&x, &mut f);
        let mut next = Vec::with_capacity(live.len());
        for (k, mut l) in live.into_iter().enumerate() {
            let (xs, fs) = (&x[k * ZOOM_POINTS..(k + 1) * ZOOM_POINTS], &f[k * ZOOM_POINTS..(k + 1) * ZOOM_POINTS]);
            let Some((gbest, new_lo, new_hi)) = zoom_pass(xs, fs, zs[l.0], l.1, l.2, l.3, l.4) else {
                out[l.0] = f64::NAN;
                continue;
            };
            l.5 = l.5.max(gbest);
            l.3 = new_lo;
            l.4 = new_hi;
            next.push(l);
        }
        live = next;
    }
    for l in live {
        out[l.0] = l.5;
    }
    out
}

/// [`offset_grid`] (or, with `convex`, [`offset_convex`]) for every example `i` at once:
/// `e_t[i]`, `e_prev[i]`, `seeds[i]`. The examples run in lockstep, so a batch loss (e.g. a Python
/// callable) is called once per oracle step for all examples instead of once per example.
/// Bit-identical to the per-example oracles.
#[allow(clippy::too_many_arguments)] // the per-example oracles' arguments, plus which oracle
pub fn offsets_many(
    loss: &Loss,
    e_t: &[f64],
    e_prev: &[f64],
    z: f64,
    precision: usize,
    max_doublings: usize,
    convex: bool,
    seeds: &[u64],
) -> Vec<Option<OffsetChoice>> {
    let n = e_t.len();
    let mut out: Vec<Option<OffsetChoice>> = vec![None; n];
    let mut active: Vec<usize> = Vec::with_capacity(n);
    for i in 0..n {
        if negligible(e_prev[i] - e_t[i], e_t[i]) {
            out[i] = Some(random_offset(e_t[i], seeds[i]));
        } else {
            active.push(i);
        }
    }
    if convex {
        // offset_convex: halve v until the convex OBI is within z.
        let mut v: Vec<f64> = active.iter().map(|&i| (e_prev[i] - e_t[i]) / precision.max(1) as f64).collect();
        for _ in 0..MAX_CONVEX_DIVISIONS {
            let mut keep_i = Vec::with_capacity(active.len());
            let mut keep_v = Vec::with_capacity(active.len());
            for (&i, &vi) in active.iter().zip(&v) {
                if negligible(vi, e_t[i]) {
                    out[i] = Some(random_offset(e_t[i], seeds[i]));
                } else {
                    keep_i.push(i);
                    keep_v.push(vi);
                }
            }
            if keep_i.is_empty() {
                return out;
            }
            let zs: Vec<f64> = keep_i.iter().map(|&i| e_t[i]).collect();
            let q = obi_convex_many(loss, &zs, &keep_v);
            active.clear();
            v.clear();
            for ((&i, &vi), &qi) in keep_i.iter().zip(&keep_v).zip(&q) {
                if qi <= z {
                    out[i] = Some(OffsetChoice { v: vi, obi: qi, random: false });
                } else {
                    active.push(i);
                    v.push(vi * 0.5);
                }
            }
        }
        for &i in &active {
            out[i] = Some(random_offset(e_t[i], seeds[i]));
        }
        return out;
    }
    // offset_grid.
    let starts: Vec<f64> = active.iter().map(|&i| e_t[i]).collect();
    let mut f_t = vec![0.0; starts.len()];
    loss.eval_many(&starts, &mut f_t);
    let mut live: Vec<(usize, f64)> =
        active.iter().zip(&f_t).filter(|(_, f)| f.is_finite()).map(|(&i, &f)| (i, f)).collect();
    let mut x = Vec::new();
    let mut f = Vec::new();
    for k in 0..=max_doublings {
        if live.is_empty() {
            break;
        }
        let zk = precision.max(1) << k;
        x.clear();
        for &(i, _) in &live {
            let (et, d) = (e_t[i], e_prev[i] - e_t[i]);
            let start = x.len();
            x.extend((1..=zk).map(|j| et + d * (j as f64 / zk as f64)));
            x[start + zk - 1] = e_prev[i];
        }
        f.resize(x.len(), 0.0);
        loss.eval_many(&x, &mut f);
        // Candidates (i, f_t, v) whose OBI is checked next.
        let mut cand: Vec<(usize, f64, f64)> = Vec::with_capacity(live.len());
        for (k2, &(i, ft)) in live.iter().enumerate() {
            let (et, d) = (e_t[i], e_prev[i] - e_t[i]);
            let block = k2 * zk..(k2 + 1) * zk;
            // No secant at all: no admissible offset (None).
            let Some(z_star) = best_secant_point(&x[block.clone()], &f[block], et, ft, d) else { continue };
            let v = z_star - et;
            if negligible(v, et) {
                out[i] = Some(random_offset(et, seeds[i]));
            } else {
                cand.push((i, ft, v));
            }
        }
        // Q* ≤ z on a finer grid (obi_star).
        let q: Vec<f64> = if loss.declared_convex() {
            let zs: Vec<f64> = cand.iter().map(|c| e_t[c.0]).collect();
            let vs: Vec<f64> = cand.iter().map(|c| c.2).collect();
            obi_convex_many(loss, &zs, &vs)
        } else {
            let m = (OBI_REFINE * zk).max(1);
            x.clear();
            for &(i, _, v) in &cand {
                let (a, c) = (e_t[i], e_prev[i]);
                let start = x.len();
                x.extend((0..=m).map(|j| a + (c - a) * (j as f64 / m as f64)));
                x[start + m] = c;
                x.push(a + v);
            }
            f.resize(x.len(), 0.0);
            loss.eval_many(&x, &mut f);
            cand.iter()
                .enumerate()
                .map(|(k2, &(i, _, v))| {
                    let block = &x[k2 * (m + 2)..(k2 + 1) * (m + 2)];
                    let fb = &f[k2 * (m + 2)..(k2 + 1) * (m + 2)];
                    obi_from_values(e_t[i], e_t[i] + v, fb[0], fb[m + 1], &block[..=m], &fb[..=m])
                })
                .collect()
        };
        live.clear();
        for (&(i, ft, v), &qi) in cand.iter().zip(&q) {
            if qi <= z {
                out[i] = Some(OffsetChoice { v, obi: qi, random: false });
            } else {
                live.push((i, ft));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn builtins() -> Vec<LossSpec> {
        vec![
            LossSpec::Logistic,
            LossSpec::Exponential,
            LossSpec::Square,
            LossSpec::Hinge,
            LossSpec::ZeroOne,
            LossSpec::ClippedLogistic { q: -2.0 },
            LossSpec::Spring { q: 500.0 },
            LossSpec::Spring { q: 1.0 },
            LossSpec::SpringMain,
            LossSpec::Tempered { t: 0.5 },
            LossSpec::Tempered { t: 0.0 },
            LossSpec::Tempered { t: 1.0 },
            LossSpec::Tempered { t: 1.5 },
        ]
    }

    fn loss(s: &str) -> Loss {
        Loss::from_spec(&s.parse().expect("valid spec")).expect("valid loss")
    }

    #[test]
    fn golden_values() {
        let ln2 = 2f64.ln();
        let cases: &[(&str, f64, f64)] = &[
            ("logistic", 0.0, ln2),
            ("logistic", 2.0, (1.0 + (-2f64).exp()).ln()),
            ("exponential", 1.0, (-1f64).exp()),
            ("square", -1.0, 4.0),
            ("hinge", 0.25, 0.75),
            ("hinge", 3.0, 0.0),
            ("zero-one", 0.0, 1.0),
            ("zero-one", 1e-300, 0.0),
            ("zero-one", -5.0, 1.0),
            // Clipped at q = −2: ln(1 + e²) = 2.126928...
            ("clipped-logistic:q=-2", -10.0, (1.0 + 2f64.exp()).ln()),
            ("clipped-logistic:q=-2", 1.0, (1.0 + (-1f64).exp()).ln()),
            // Spring, Q = 1: z_Q = z − ½. z = 0: r = ±½, bump 1 → ln 2 + 1. z = ½: r = 0 → ln(1+e^−½).
            ("spring:Q=1", 0.0, ln2 + 1.0),
            ("spring:Q=1", 0.5, (1.0 + (-0.5f64).exp()).ln()),
            // z = 0.25: z_Q = −¼, r = −¼, bump 1 − √(3/4).
            ("spring:Q=1", 0.25, (1.0 + (-0.25f64).exp()).ln() + 1.0 - 0.75f64.sqrt()),
            // Main-text spring: bumps of height 1 at the half-integers, F(0) = ln 2 (SPEC §6).
            ("spring-main", 0.0, ln2),
            ("spring-main", 0.5, (1.0 + (-0.5f64).exp()).ln() + 1.0),
            ("spring-main", -1.5, (1.0 + 1.5f64.exp()).ln() + 1.0),
            ("spring-main", 1.0, (1.0 + (-1f64).exp()).ln()),
            // z = 0.25: r = ¼, bump 1 − √(3/4) (the same bump as the appendix form at Q = 1, z = ¾).
            ("spring-main", 0.25, (1.0 + (-0.25f64).exp()).ln() + 1.0 - 0.75f64.sqrt()),
            ("spring-main", -0.75, (1.0 + 0.75f64.exp()).ln() + 1.0 - 0.75f64.sqrt()),
            // Q = 500 at z = 0.001: z_Q = 0, bottom of a U.
            ("spring:Q=500", 0.001, (1.0 + (-0.001f64).exp()).ln()),
            // Tempered t = ½: [1 − z/2]_+^3.
            ("tempered:t=0.5", 0.0, 1.0),
            ("tempered:t=0.5", 1.0, 0.125),
            ("tempered:t=0.5", -2.0, 8.0),
            ("tempered:t=0.5", 2.0, 0.0),
            ("tempered:t=0.5", 7.0, 0.0),
            // t = 0: [1 − z]_+².
            ("tempered:t=0", -1.0, 4.0),
            // t = 1: e^−z.
            ("tempered:t=1", 2.0, (-2f64).exp()),
            // t = 1.5: (1 + z/2)^−1.
            ("tempered:t=1.5", 2.0, 0.5),
            ("tempered:t=1.5", -2.0, f64::INFINITY),
        ];
        for &(s, z, want) in cases {
            let l = loss(s);
            let got = l.value(z);
            if want.is_infinite() {
                assert_eq!(got, want, "{s} at {z}");
            } else {
                assert!((got - want).abs() <= 1e-13 * want.abs().max(1.0), "{s} at {z}: {got} vs {want}");
            }
            // Batch and scalar evaluation agree exactly.
            assert_eq!(l.values(&[z])[0].to_bits(), got.to_bits(), "{s} batch at {z}");
        }
    }

    #[test]
    fn issue_16_spring_main_text_form_is_not_the_appendix_form_at_q1() {
        // SPEC §6: the appendix form at Q = 1 is the main-text loss with its bumps moved by ½.
        let (main, app) = (loss("spring-main"), loss("spring:Q=1"));
        assert_eq!("spring-main".parse::<LossSpec>().expect("parses"), LossSpec::SpringMain);
        assert_eq!("Spring_Main".parse::<LossSpec>().expect("parses").to_string(), "spring-main");
        assert!("spring-main:Q=2".parse::<LossSpec>().is_err());
        assert_eq!(main.value(0.0), 2f64.ln());
        assert!((app.value(0.0) - (1.0 + 2f64.ln())).abs() < 1e-15);
        for k in -40..=40 {
            let z = k as f64 * 0.0873;
            let bump_main = main.value(z) - logistic(z);
            let bump_app = app.value(z + 0.5) - logistic(z + 0.5);
            assert!((bump_main - bump_app).abs() < 1e-12, "z = {z}: {bump_main} vs {bump_app}");
            assert!((0.0..=1.0 + 1e-15).contains(&bump_main));
        }
        assert!(!LossSpec::SpringMain.declared_convex() && LossSpec::SpringMain.beta().is_none());
        assert_eq!(LossSpec::ZeroOne.known_jumps(), &[0.0]);
        assert!(builtins().iter().filter(|s| **s != LossSpec::ZeroOne).all(|s| s.known_jumps().is_empty()));
    }

    #[test]
    fn obi_star_many_matches_obi_star() {
        for spec in builtins() {
            let l = Loss::from_spec(&spec).expect("valid");
            let zs: Vec<f64> = (0..37).map(|i| -1.3 + 0.071 * i as f64).collect();
            let zp: Vec<f64> = zs.iter().enumerate().map(|(i, z)| z + 0.3 * ((i % 5) as f64 - 2.0)).collect();
            let vs: Vec<f64> = (0..37).map(|i| if i % 2 == 0 { 0.05 } else { -0.2 }).collect();
            for n in [1, 7, 400] {
                let many = obi_star_many(&l, &zs, &zp, &vs, n);
                for i in 0..zs.len() {
                    let one = obi_star(&l, zs[i], zp[i], vs[i], n);
                    assert!(
                        many[i].to_bits() == one.to_bits() || (many[i].is_nan() && one.is_nan()),
                        "{spec} n={n} i={i}: {} vs {one}",
                        many[i]
                    );
                }
            }
        }
    }

    #[test]
    fn tempered_is_continuous_at_t_one() {
        for &z in &[-3.0, -0.5, 0.0, 0.7, 4.0] {
            let a = tempered_exp_loss(z, 1.0 - 1e-7);
            let b = tempered_exp_loss(z, 1.0);
            assert!((a - b).abs() < 1e-5 * b, "z = {z}: {a} vs {b}");
        }
    }

    #[test]
    fn stable_logistic_at_extremes() {
        let l = loss("logistic");
        assert_eq!(l.value(1000.0), 0.0);
        assert_eq!(l.value(-1000.0), 1000.0);
        // Agrees with the naive formula where the latter is accurate.
        for &z in &[-30.0_f64, -3.0, -0.1, 0.1, 3.0] {
            let naive = (1.0 + (-z).exp()).ln();
            assert!((l.value(z) - naive).abs() <= 1e-14 * naive, "z = {z}");
        }
        // Tiny values keep their relative precision: ln(1 + e^−40) ≈ e^−40.
        let v = l.value(40.0);
        assert!((v / (-40f64).exp() - 1.0).abs() < 1e-15);
        // Clipped and spring losses inherit the stability.
        assert!(loss("clipped-logistic:q=-2").value(-1000.0).is_finite());
        assert!((loss("spring:Q=500").value(-1000.0) - 1000.0).abs() <= 2.0 / 500.0);
    }

    /// Analytic derivatives, used only to test that secant slopes converge to them.
    fn analytic_derivative(spec: &LossSpec, z: f64) -> f64 {
        match *spec {
            LossSpec::Logistic => -1.0 / (1.0 + z.exp()),
            LossSpec::Exponential => -(-z).exp(),
            LossSpec::Square => -2.0 * (1.0 - z),
            // d/dz [1 − (1−t)z]^p = −p(1−t)[..]^(p−1), p = (2−t)/(1−t).
            LossSpec::Tempered { t } => {
                let p = (2.0 - t) / (1.0 - t);
                -p * (1.0 - t) * (1.0 - (1.0 - t) * z).powf(p - 1.0)
            }
            _ => unreachable!("smooth losses only"),
        }
    }

    #[test]
    fn v_derivative_converges_to_the_derivative() {
        let smooth = [
            LossSpec::Logistic,
            LossSpec::Exponential,
            LossSpec::Square,
            LossSpec::Tempered { t: 0.5 },
            LossSpec::Tempered { t: 1.5 },
        ];
        for spec in smooth {
            let l = Loss::from_spec(&spec).expect("valid");
            for &z in &[-1.3, -0.2, 0.0, 0.4, 1.1] {
                let d = analytic_derivative(&spec, z);
                let mut prev_err = f64::INFINITY;
                for &v in &[1e-1, 1e-2, 1e-3, 1e-4, -1e-4] {
                    let err = (v_derivative(&l, z, v) - d).abs();
                    if v > 0.0 {
                        assert!(err < prev_err, "{spec} z={z} v={v}: error {err} not decreasing");
                        prev_err = err;
                    }
                    // First-order convergence: |δ_v F − F′| = O(|v|).
                    assert!(err < 5.0 * v.abs() * d.abs().max(1.0), "{spec} z={z} v={v}: {err}");
                }
            }
        }
        assert!(v_derivative(&loss("logistic"), 0.0, 0.0).is_nan());
    }

    #[test]
    fn order2_converges_to_second_derivative() {
        // Exponential: F″ = e^−z.
        let l = loss("exponential");
        for &z in &[-1.0_f64, 0.0, 2.0] {
            let got = v_derivative2(&l, z, 1e-3, -2e-3);
            assert!((got - (-z).exp()).abs() < 1e-2 * (-z).exp(), "z={z}: {got}");
        }
        // Square: exactly 2 for any offsets.
        let sq = loss("square");
        assert!((v_derivative2(&sq, 0.3, 0.7, -1.9) - 2.0).abs() < 1e-12);
    }

    #[test]
    fn obi_is_zero_for_a_line() {
        let lin = Loss::custom("line", Arc::new(|z| 3.0 - 2.0 * z), true, None).expect("valid");
        for &(a, b, c) in &[(0.0, 1.0, -2.0), (-1.5, -1.0, 4.0), (2.0, 0.5, 0.0)] {
            assert!(obi(&lin, a, b, c, 1000).abs() < 1e-12);
        }
        for &(z, v) in &[(0.0, 1.0), (3.0, -2.5)] {
            assert!(obi_convex(&lin, z, v).abs() < 1e-12);
        }
    }

    /// Convex conjugates, used only for the identity Q_F(z, z+v, z+v) = D_F(z ‖ δ_v F(z)).
    fn conjugate(spec: &LossSpec, s: f64) -> f64 {
        match spec {
            // sup_t ts − e^−t = −s ln(−s) + s for s < 0.
            LossSpec::Exponential => -s * (-s).ln() + s,
            // sup_t ts − ln(1 + e^−t) = p ln p + (1−p) ln(1−p), p = −s ∈ (0, 1).
            LossSpec::Logistic => {
                let p = -s;
                p * p.ln() + (1.0 - p) * (1.0 - p).ln()
            }
            // sup_t ts − (1 − t)² = s + s²/4.
            LossSpec::Square => s + s * s / 4.0,
            _ => unreachable!(),
        }
    }

    #[test]
    fn convex_obi_identity() {
        // Lemma B.5 of the SecBoost paper: for convex F, Q_F(z, z+v, z+v) = D_F(z ‖ s) =
        // F(z) + F*(s) − z s with s = δ_v F(z).
        for spec in [LossSpec::Exponential, LossSpec::Logistic, LossSpec::Square] {
            let l = Loss::from_spec(&spec).expect("valid");
            for &(z, v) in &[(0.0, 1.0), (0.5, -2.0), (-1.0, 0.3), (2.0, 3.0), (1.0, -0.05)] {
                let s = v_derivative(&l, z, v);
                let bregman = l.value(z) + conjugate(&spec, s) - z * s;
                let q = obi_convex(&l, z, v);
                assert!((q - bregman).abs() < 1e-10 * bregman.max(1e-3), "{spec} z={z} v={v}: {q} vs {bregman}");
                // The grid version agrees up to its resolution, from below.
                let qg = obi(&l, z, z + v, z + v, 20_000);
                assert!(qg <= q + 1e-12 && q - qg < 1e-6 * q.max(1e-3), "{spec}: grid {qg} vs {q}");
                // Q* uses the convex form for a convex loss, whatever z_prev.
                assert_eq!(obi_star(&l, z, z + 100.0, v, 10), q);
            }
        }
        // Square: closed form v²/4 equals the unimodal search on the same loss given as a closure.
        let sq = Loss::custom("sq", Arc::new(|z: f64| (1.0 - z) * (1.0 - z)), true, Some(2.0)).expect("valid");
        let q = obi_convex(&sq, 0.3, 1.7);
        assert!((q - 1.7 * 1.7 / 4.0).abs() < 1e-12, "{q}");
    }

    #[test]
    fn obi_of_a_jump() {
        // 0/1 loss, line through (−0.5, 1) and (0.5, 0): on [−0.5, 0.5] the largest gap is just
        // right of 0, where the line is at ≈ ½ and F = 0.
        let l = loss("zero-one");
        let q = obi(&l, -0.5, 0.5, 0.5, 1000);
        assert!((q - 0.5).abs() < 2e-3, "{q}");
        // Going the other way (towards the jump from the right, horizontal line): nothing.
        assert_eq!(obi(&l, 0.5, 0.25, -0.5, 1000), 0.0);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        #[test]
        fn obi_is_non_negative(k in 0usize..12, a in -5.0f64..5.0, b in -5.0f64..5.0, c in -5.0f64..5.0) {
            prop_assume!((a - b).abs() > 1e-6);
            let l = Loss::from_spec(&builtins()[k]).expect("valid");
            let q = obi(&l, a, b, c, 200);
            prop_assert!(q >= 0.0 || q.is_nan());
            if !q.is_nan() {
                // The grid of 50 intervals is a sub-grid of the grid of 200: it never finds more.
                prop_assert!(obi(&l, a, b, c, 50) <= q + 1e-12);
            }
            if l.declared_convex() && l.value(a).is_finite() && l.value(b).is_finite() {
                prop_assert!(obi_convex(&l, a, b - a) >= 0.0);
            }
        }

        #[test]
        fn order2_is_symmetric(k in 0usize..12, z in -3.0f64..3.0, v1 in -2.0f64..2.0, v2 in -2.0f64..2.0) {
            prop_assume!(v1.abs() > 1e-3 && v2.abs() > 1e-3);
            let l = Loss::from_spec(&builtins()[k]).expect("valid");
            let a = v_derivative2(&l, z, v1, v2);
            let b = v_derivative2(&l, z, v2, v1);
            prop_assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
            // And it equals the nested definition (δ_{v1}F(z+v2) − δ_{v1}F(z))/v2 up to rounding.
            let nested = (v_derivative(&l, z + v2, v1) - v_derivative(&l, z, v1)) / v2;
            if a.is_finite() && nested.is_finite() {
                let scale = l.value(z).abs().max(l.value(z + v1 + v2).abs()).max(1.0);
                prop_assert!((a - nested).abs() <= 1e-9 * scale / (v1 * v2).abs());
            }
        }

        #[test]
        fn convex_losses_have_non_negative_order2(k in 0usize..5, z in -3.0f64..3.0, v1 in -2.0f64..2.0, v2 in -2.0f64..2.0) {
            // Lemma 5.2 of the SecBoost paper.
            prop_assume!(v1.abs() > 1e-2 && v2.abs() > 1e-2);
            let specs = [LossSpec::Logistic, LossSpec::Exponential, LossSpec::Square, LossSpec::Hinge, LossSpec::Tempered { t: 0.5 }];
            let l = Loss::from_spec(&specs[k]).expect("valid");
            prop_assert!(v_derivative2(&l, z, v1, v2) >= -1e-9);
        }
    }

    #[test]
    fn spec_round_trips() {
        for spec in builtins() {
            let s = spec.to_string();
            assert_eq!(s.parse::<LossSpec>().expect("parses"), spec, "{s}");
            let json = serde_json::to_string(&spec).expect("serialises");
            assert_eq!(json, format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<LossSpec>(&json).expect("deserialises"), spec);
        }
        assert_eq!(LossSpec::ClippedLogistic { q: -2.0 }.to_string(), "clipped-logistic:q=-2");
        assert_eq!(LossSpec::Spring { q: 500.0 }.to_string(), "spring:Q=500");
        assert_eq!(LossSpec::Tempered { t: 0.5 }.to_string(), "tempered:t=0.5");
        assert_eq!(LossSpec::default(), LossSpec::Logistic);
        // Odd floats round-trip too.
        let odd = LossSpec::ClippedLogistic { q: 0.1 + 0.2 };
        assert_eq!(odd.to_string().parse::<LossSpec>().expect("parses"), odd);
    }

    #[test]
    fn spec_parsing_is_lenient_on_case_and_defaults() {
        let p = |s: &str| s.parse::<LossSpec>().expect(s);
        assert_eq!(p("Logistic"), LossSpec::Logistic);
        assert_eq!(p(" zero_one "), LossSpec::ZeroOne);
        assert_eq!(p("0/1"), LossSpec::ZeroOne);
        assert_eq!(p("clipped-logistic"), LossSpec::ClippedLogistic { q: -2.0 });
        assert_eq!(p("clipped_logistic:q = -3.5"), LossSpec::ClippedLogistic { q: -3.5 });
        assert_eq!(p("spring"), LossSpec::Spring { q: 500.0 });
        assert_eq!(p("spring:q=2"), LossSpec::Spring { q: 2.0 });
        assert_eq!(p("tempered:t=-1"), LossSpec::Tempered { t: -1.0 });
    }

    #[test]
    fn spec_errors_are_clear() {
        let bad = [
            ("logit", "one of"),
            ("logistic:q=1", "no parameter"),
            ("clipped-logistic:q=abc", "a number for `q`"),
            ("clipped-logistic:t=1", "the parameter `q` only"),
            ("clipped-logistic:q=1,q=2", "given once"),
            ("clipped-logistic:q", "key=value"),
            ("clipped-logistic:q=inf", "finite"),
            ("spring:Q=0", "> 0"),
            ("spring:Q=-3", "> 0"),
            ("tempered", "`t=<value>`"),
            ("tempered:t=2", "< 2"),
            ("tempered:t=NaN", "< 2"),
        ];
        for (s, needle) in bad {
            let err = s.parse::<LossSpec>().expect_err(s).to_string();
            assert!(err.contains(needle), "`{s}`: {err}");
            assert!(matches!(s.parse::<LossSpec>(), Err(Error::InvalidParam { .. })));
        }
        assert!(serde_json::from_str::<LossSpec>("\"spring:Q=0\"").is_err());
        assert!(Loss::from_spec(&LossSpec::Spring { q: -1.0 }).is_err());
    }

    #[test]
    fn flags() {
        assert!(loss("logistic").declared_convex());
        assert_eq!(loss("logistic").beta(), Some(0.25));
        assert_eq!(loss("square").beta(), Some(2.0));
        assert_eq!(loss("exponential").beta(), None);
        assert!(!loss("zero-one").declared_convex());
        assert!(!loss("clipped-logistic").declared_convex());
        assert!(!loss("spring").declared_convex());
        assert!(loss("tempered:t=0.3").declared_convex());
        assert_eq!(loss("tempered:t=0").beta(), Some(2.0));
        assert_eq!(loss("tempered:t=0.3").beta(), None);
        assert!(Loss::custom("bad", Arc::new(|z| z), true, Some(0.0)).is_err());
        assert!(Loss::custom("bad", Arc::new(|z| z), true, Some(f64::NAN)).is_err());
    }

    #[test]
    fn custom_and_batch_losses() {
        let f = Loss::custom("softplus", Arc::new(|z: f64| (1.0 + (-z).exp()).ln()), true, Some(0.25)).expect("valid");
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c2 = Arc::clone(&calls);
        let g = Loss::custom_batch(
            "softplus-batch",
            Arc::new(move |z: &[f64], out: &mut [f64]| {
                c2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                for (o, &x) in out.iter_mut().zip(z) {
                    *o = (1.0 + (-x).exp()).ln();
                }
            }),
            true,
            None,
        )
        .expect("valid");
        let z: Vec<f64> = (0..50).map(|i| -3.0 + 0.1 * i as f64).collect();
        assert_eq!(f.values(&z), g.values(&z));
        assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1, "one batch call");
        assert_eq!(g.value(0.0), 2f64.ln());
        assert_eq!(f.name(), "softplus");
        assert!(f.spec().is_none() && g.is_batch() && !f.is_batch());
        assert_eq!(format!("{:?}", loss("spring")), "Loss { name: \"spring:Q=500\", convex: false, beta: None }");
        // The convex OBI of the batch closure uses batches of 16 points.
        let before = calls.load(std::sync::atomic::Ordering::Relaxed);
        let q = obi_convex(&g, 0.0, 1.0);
        let used = calls.load(std::sync::atomic::Ordering::Relaxed) - before;
        assert!(used <= ZOOM_PASSES + 1, "{used} batch calls");
        assert!((q - obi_convex(&loss("logistic"), 0.0, 1.0)).abs() < 1e-14);
    }

    #[test]
    fn grid_oracle_finds_admissible_offsets() {
        for s in ["logistic", "clipped-logistic:q=-2", "spring:Q=500", "spring:Q=1", "hinge"] {
            let l = loss(s);
            // Several of these edges sit on a cusp of a spring loss (Qz − ½ a half-integer), where
            // F rises like √ and Q* ≈ (c/4)·√(grid step): the budget must allow for it.
            for &(e_t, e_prev) in &[(0.3, -0.2), (-0.2, 0.3), (2.0, 1.0), (-1.0, -3.0)] {
                let z = 1e-2;
                let c = offset_grid(&l, e_t, e_prev, z, 100, 8, 7).unwrap_or_else(|| panic!("{s} {e_t} {e_prev}"));
                assert!(!c.random);
                assert!(c.v != 0.0 && c.v.signum() == (e_prev - e_t).signum(), "{s}: {c:?}");
                assert!(c.obi <= z, "{s}: {c:?}");
                // The offset stays between the two edges.
                assert!(c.v.abs() <= (e_prev - e_t).abs() * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn convex_oracle_respects_the_bound() {
        for s in ["logistic", "exponential", "square", "hinge", "tempered:t=0.5"] {
            let l = loss(s);
            for &(e_t, e_prev, z) in &[(0.3, -0.2, 1e-4), (-0.2, 0.3, 1e-8), (2.0, 1.0, 1e-2), (0.9, 1.2, 1e-12)] {
                let c = offset_convex(&l, e_t, e_prev, z, 10, 3);
                if !c.random {
                    assert!(c.obi <= z, "{s}: {c:?}");
                    assert_eq!(c.v.signum(), (e_prev - e_t).signum());
                    assert!((obi_convex(&l, e_t, c.v) - c.obi).abs() == 0.0);
                }
            }
        }
        // Tiny budget on a strictly convex loss: the offset shrinks like √z.
        let c = offset_convex(&loss("square"), 0.0, 1.0, 1e-10, 1, 0);
        assert!(!c.random && c.v > 0.0 && c.v * c.v / 4.0 <= 1e-10 && c.v > 1e-5);
    }

    #[test]
    fn degenerate_offsets_are_seeded() {
        let l = loss("logistic");
        let a = offset_grid(&l, 0.5, 0.5, 1e-3, 100, 4, 42).expect("random offset");
        let b = offset_grid(&l, 0.5, 0.5, 1e-3, 100, 4, 42).expect("random offset");
        let c = offset_grid(&l, 0.5, 0.5, 1e-3, 100, 4, 43).expect("random offset");
        assert!(a.random && a.v != 0.0 && a.v.abs() < 1e-6);
        assert_eq!(a, b, "same seed, same offset");
        assert_ne!(a.v, c.v, "another seed, another offset");
        let d = offset_convex(&l, -2.0, -2.0, 1e-3, 100, 42);
        assert!(d.random && d.v.abs() >= 1e-7 * 2.0 && d.v.abs() < 4e-7);
        // An impossible budget ends in the random offset too.
        assert!(offset_convex(&l, 0.0, 1.0, -1.0, 1, 1).random);
    }

    #[test]
    fn jump_larger_than_budget_has_no_offset() {
        // Logistic plus an upward step of 1 at z = 0.3 (F(0.3) is the high value).
        let jump = Loss::custom(
            "jump",
            Arc::new(|z: f64| (1.0 + (-z).exp()).ln() + if z >= 0.3 { 1.0 } else { 0.0 }),
            false,
            None,
        )
        .expect("valid");
        // ẽ_t on the jump, ẽ_{t−1} on the low side: every secant from (ẽ_t, F(ẽ_t)) passes above
        // F just left of the jump by about the jump's height, so I_ti(z) is empty (the paper's
        // Fig. 4c) whatever the grid.
        assert_eq!(offset_grid(&jump, 0.3, 0.1, 0.05, 100, 4, 0), None);
        // With a budget above the jump an offset exists (Lemma B.4 of the paper).
        assert!(offset_grid(&jump, 0.3, 0.1, 1.5, 100, 4, 0).is_some());
        // Away from the jump, or with the jump behind ẽ_t, small budgets suffice.
        assert!(offset_grid(&jump, 0.3, 0.5, 0.05, 100, 4, 0).is_some());
        assert!(offset_grid(&jump, 0.1, 0.5, 0.05, 100, 4, 0).is_some());
        assert!(offset_grid(&jump, 0.5, 0.1, 0.05, 100, 4, 0).is_some());
    }
}

#[cfg(test)]
mod batch_tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The lockstep oracles give exactly the per-example oracles' offsets, for convex and
    /// non-convex losses, both oracle kinds, on random edges (including degenerate ones).
    #[test]
    fn issue_7_lockstep_oracles_equal_per_example_oracles() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for spec in ["logistic", "exponential", "square", "spring:Q=500", "clipped-logistic:q=-2", "zero-one", "hinge"]
        {
            let loss = Loss::from_spec(&spec.parse().unwrap()).unwrap();
            let n = 60;
            let e_t: Vec<f64> = (0..n).map(|_| rng.gen_range(-3.0..3.0)).collect();
            let e_prev: Vec<f64> = e_t
                .iter()
                .enumerate()
                .map(|(i, e)| if i % 10 == 0 { *e } else { e + rng.gen_range(-1.0..1.0) })
                .collect();
            let seeds: Vec<u64> = (0..n as u64).collect();
            for z in [1e-4, 0.05, 1.0] {
                for convex in [false, true] {
                    if convex && !loss.declared_convex() {
                        continue;
                    }
                    let many = offsets_many(&loss, &e_t, &e_prev, z, 20, 3, convex, &seeds);
                    for i in 0..n {
                        let one = if convex {
                            Some(offset_convex(&loss, e_t[i], e_prev[i], z, 20, seeds[i]))
                        } else {
                            offset_grid(&loss, e_t[i], e_prev[i], z, 20, 3, seeds[i])
                        };
                        let same = match (one, many[i]) {
                            (Some(a), Some(b)) => {
                                a.v.to_bits() == b.v.to_bits()
                                    && a.obi.to_bits() == b.obi.to_bits()
                                    && a.random == b.random
                            }
                            (None, None) => true,
                            _ => false,
                        };
                        assert!(same, "{spec} z={z} convex={convex} i={i}: {one:?} vs {:?}", many[i]);
                    }
                }
            }
        }
    }

    /// Issue 18: the shared-grid oracle returns exactly `offset_grid` and `obi_star`, for every
    /// loss, budgets that accept at the first check or need doublings, and degenerate edges.
    #[test]
    fn issue_18_offset_grid_and_obi_equal_the_two_calls() {
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        for spec in ["spring:Q=500", "clipped-logistic:q=-2", "spring-main", "zero-one", "logistic", "hinge"] {
            let loss = Loss::from_spec(&spec.parse().unwrap()).unwrap();
            for i in 0..300 {
                let e_t: f64 = rng.gen_range(-3.0..3.0);
                let e_prev = if i % 17 == 0 { e_t } else { e_t + rng.gen_range(-1.0..1.0) };
                let v_prev: f64 = rng.gen_range(-0.5..0.5);
                let z = [1e-6, 1e-3, 0.05, 1.0][i % 4];
                let (precision, doublings) = ([100, 7, 1][i % 3], i % 4);
                for points in [4 * precision, 10] {
                    let (c, q) = offset_grid_and_obi(&loss, e_t, e_prev, v_prev, z, precision, doublings, 9, points);
                    let c2 = offset_grid(&loss, e_t, e_prev, z, precision, doublings, 9);
                    let q2 = obi_star(&loss, e_t, e_prev, v_prev, points);
                    assert_eq!(format!("{c:?}"), format!("{c2:?}"), "{spec} {i}");
                    if let (Some(a), Some(b)) = (c, c2) {
                        assert!(a.v.to_bits() == b.v.to_bits() && a.obi.to_bits() == b.obi.to_bits());
                    }
                    assert!(q.to_bits() == q2.to_bits() || (q.is_nan() && q2.is_nan()), "{spec} {i}: {q} vs {q2}");
                }
            }
        }
    }

    #[test]
    fn issue_18_logistic_obi_shares_its_sigmoids_bit_for_bit() {
        // The closed form before session 7 (each difference computing its own σ): the same bits.
        fn diff(z: f64, u: f64) -> f64 {
            (sigmoid(-z) * (-u).exp_m1()).ln_1p()
        }
        fn before(z: f64, v: f64) -> f64 {
            let (s, s1) = (diff(z, v) / v, diff(-z, -v) / v);
            let u = clamp_between((s1 / -s).ln() - z, v);
            if s > -0.5 {
                gap(s, u, diff(z, u))
            } else {
                gap(s1, u, diff(-z, -u))
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(18);
        for _ in 0..20_000 {
            let z = rng.gen_range(-40.0..40.0);
            let v = rng.gen_range(1e-3..30.0) * if rng.gen::<bool>() { 1.0 } else { -1.0 };
            assert_eq!(logistic_obi(z, v).to_bits(), before(z, v).to_bits(), "z = {z}, v = {v}");
        }
    }
}
