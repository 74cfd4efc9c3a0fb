//! Margin losses `F(z)` on the edge `z = y·H(x)` and their secant ("v-") derivatives (docs/explanation/secboost.md#secboost-algorithm).
//!
//! The one design choice: a [`Loss`] gives **values only**. It has no derivative method at all —
//! not for the built-in losses, not for user closures — so SecBoost cannot use first-order
//! information even by accident. Everything the booster needs is computed from loss values:
//! secant slopes [`v_derivative`] / [`v_derivative2`] here, and the OBI and the offset oracles in
//! [`crate::boost::secboost::obi`] and [`crate::boost::secboost::oracle`].
//!
//! Losses are named by a [`LossSpec`] string (`logistic`, `spring:Q=500`, ...) in configurations,
//! or given as a Rust closure ([`Loss::custom`]) or a batch closure ([`Loss::custom_batch`], the hook
//! for vectorised callables such as a numpy function).

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

mod builtin;
mod spec;

pub(crate) use builtin::tempered_exp_loss;
use builtin::{builtin_value, fill, logistic, spring_from_logistic, spring_main_from_logistic};
pub use spec::LossSpec;

/// A user loss on one edge: `z ↦ F(z)`.
pub type LossFn = Arc<dyn Fn(f64) -> f64 + Send + Sync>;

/// A user loss on many edges at once: fills `out[i] = F(z[i])` (`z` and `out` have the same length).
/// A failing evaluation should write NaN; SecBoost then stops with [`Error::Numerical`].
pub type BatchLossFn = Arc<dyn Fn(&[f64], &mut [f64]) + Send + Sync>;

/// Default `q` of the clipped logistic loss (the SecBoost paper's figure).
pub const DEFAULT_CLIP_Q: f64 = -2.0;

/// Default `Q` of the spring loss (the SecBoost paper's experiments).
pub const DEFAULT_SPRING_Q: f64 = 500.0;

// ------------------------------------------------------------------------------------------------
// Loss
// ------------------------------------------------------------------------------------------------

/// A margin loss `F: R → R` on the edge `z = y·H(x)`, **values only** (docs/explanation/secboost.md#secboost-algorithm).
///
/// `Loss` deliberately has no derivative method — there is nothing like `derivative`, `grad` or
/// `hessian` on it, and user closures supply values only — so SecBoost boosts it from loss values
/// alone. This is checked at compile time:
///
/// ```compile_fail
/// let loss = boostlab::math::loss::Loss::from_spec(&boostlab::math::loss::LossSpec::Logistic).unwrap();
/// let _ = loss.derivative(0.0); // no such method
/// ```
///
/// ```
/// let loss = boostlab::math::loss::Loss::from_spec(&boostlab::math::loss::LossSpec::Logistic).unwrap();
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
                // Vectorised where the CPU allows, the bits of `logistic` either way.
                LossSpec::Logistic => crate::util::fastmath::logistic_loss_many(z, out),
                LossSpec::Exponential => fill(z, out, |x| (-x).exp()),
                LossSpec::Square => fill(z, out, |x| (1.0 - x) * (1.0 - x)),
                LossSpec::Hinge => fill(z, out, |x| (1.0 - x).max(0.0)),
                LossSpec::ZeroOne => fill(z, out, |x| if x <= 0.0 { 1.0 } else { 0.0 }),
                // The logistic part vectorised, then the rest per value: the bits of the scalar
                // forms (`logistic(x).min(cap)`, `spring`, `spring_main`).
                LossSpec::ClippedLogistic { q } => {
                    let cap = logistic(q);
                    crate::util::fastmath::logistic_loss_many(z, out);
                    for (o, &x) in out.iter_mut().zip(z) {
                        *o = if x.is_nan() { f64::NAN } else { o.min(cap) };
                    }
                }
                LossSpec::Spring { q } => {
                    crate::util::fastmath::logistic_loss_many(z, out);
                    for (o, &x) in out.iter_mut().zip(z) {
                        *o = spring_from_logistic(x, *o, q);
                    }
                }
                LossSpec::SpringMain => {
                    crate::util::fastmath::logistic_loss_many(z, out);
                    for (o, &x) in out.iter_mut().zip(z) {
                        *o = spring_main_from_logistic(x, *o);
                    }
                }
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
// v-derivatives
// ------------------------------------------------------------------------------------------------

/// The v-derivative (secant slope) `δ_v F(z) = (F(z + v) − F(z)) / v` (docs/explanation/secboost.md#secboost-algorithm). `v ≠ 0`; `v = 0`
/// gives NaN.
pub fn v_derivative(loss: &Loss, z: f64, v: f64) -> f64 {
    if v == 0.0 {
        return f64::NAN;
    }
    let mut out = [0.0; 2];
    loss.eval_many(&[z + v, z], &mut out);
    // docs/explanation/secboost.md#secboost-algorithm: δ_v F(z) = (F(z + v) − F(z)) / v.
    (out[0] - out[1]) / v
}

/// The order-2 v-derivative `δ_{v1,v2} F(z) = (δ_{v1} F(z + v2) − δ_{v1} F(z)) / v2` (docs/explanation/secboost.md#secboost-algorithm),
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::boost::secboost::obi::{obi_convex, ZOOM_PASSES};
    use proptest::prelude::*;

    pub(crate) fn builtins() -> Vec<LossSpec> {
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

    pub(crate) fn loss(s: &str) -> Loss {
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
            // Main-text spring: bumps of height 1 at the half-integers, F(0) = ln 2 (docs/explanation/secboost.md#secboost-algorithm).
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
    fn spring_main_text_form_is_not_the_appendix_form_at_q1() {
        // docs/explanation/secboost.md#secboost-algorithm: the appendix form at Q = 1 is the main-text loss with its bumps moved by ½.
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

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

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
}
