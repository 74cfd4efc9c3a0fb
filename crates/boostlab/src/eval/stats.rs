//! Summary statistics and the two-sided Student paired t-test over folds (docs/explanation/experiments.md#experiments: each setting is
//! compared to a reference at p = 0.1 and counted better / equivalent / worse).

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::error::{Error, Result};

/// Arithmetic mean; NaN for an empty slice.
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (denominator n − 1, two-pass); 0 for one value, NaN for none.
pub fn sample_std(x: &[f64]) -> f64 {
    match x.len() {
        0 => f64::NAN,
        1 => 0.0,
        n => {
            let m = mean(x);
            let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
            (ss / (n - 1) as f64).sqrt()
        }
    }
}

/// Result of a paired t-test on differences `d_i = a_i − b_i`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedTTest {
    /// t statistic `mean(d) / (sd(d)/√n)`; ±∞ for a constant non-zero difference, 0 when a = b.
    pub t: f64,
    /// Degrees of freedom, `n − 1`.
    pub df: f64,
    /// Two-sided p-value `P(|T_df| ≥ |t|)` in [0, 1].
    pub p: f64,
    /// Mean difference `mean(a − b)` (negative: `a` lower).
    pub mean_diff: f64,
}

/// Two-sided Student paired t-test of `a` against `b` (same length n ≥ 2, all values finite), as
/// `scipy.stats.ttest_rel(a, b)`.
///
/// Zero variance of the differences is handled without NaN: identical samples give t = 0, p = 1;
/// a constant non-zero difference gives t = ±∞, p = 0.
pub fn paired_t_test(a: &[f64], b: &[f64]) -> Result<PairedTTest> {
    if a.len() != b.len() {
        return Err(Error::InvalidData(format!(
            "paired t-test needs samples of equal length, got {} and {}",
            a.len(),
            b.len()
        )));
    }
    let n = a.len();
    if n < 2 {
        return Err(Error::InvalidData(format!("paired t-test needs at least 2 pairs, got {n}")));
    }
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        return Err(Error::InvalidData("paired t-test on a non-finite value".into()));
    }
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let mean_diff = mean(&d);
    let sd = sample_std(&d);
    let df = (n - 1) as f64;
    if sd == 0.0 {
        // All differences equal: zero → no evidence (p = 1); non-zero → certain (p = 0).
        return Ok(if mean_diff == 0.0 {
            PairedTTest { t: 0.0, df, p: 1.0, mean_diff }
        } else {
            PairedTTest { t: mean_diff.signum() * f64::INFINITY, df, p: 0.0, mean_diff }
        });
    }
    let t = mean_diff / (sd / (n as f64).sqrt());
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|e| Error::Numerical(e.to_string()))?;
    // Two-sided: 2 P(T > |t|), computed from the upper tail for accuracy at small p.
    let p = (2.0 * dist.sf(t.abs())).clamp(0.0, 1.0);
    Ok(PairedTTest { t, df, p, mean_diff })
}

/// Outcome of comparing a candidate's errors to a reference's errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Comparison {
    /// Significantly lower error than the reference.
    Better,
    /// No significant difference.
    Equivalent,
    /// Significantly higher error than the reference.
    Worse,
}

/// Compares per-fold errors `a` (candidate) to `b` (reference), paired by position: `Better` if
/// the paired t-test gives `p < alpha` and `mean(a) < mean(b)` (lower error is better), `Worse` if
/// `p < alpha` and `mean(a) > mean(b)`, `Equivalent` otherwise.
///
/// `alpha`: significance level, valid range `(0, 1]` (the paper, and the report default, use 0.1).
pub fn compare(a: &[f64], b: &[f64], alpha: f64) -> Result<Comparison> {
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(Error::param("alpha", "a significance level in (0, 1]", alpha));
    }
    let test = paired_t_test(a, b)?;
    Ok(if test.p < alpha && test.mean_diff < 0.0 {
        Comparison::Better
    } else if test.p < alpha && test.mean_diff > 0.0 {
        Comparison::Worse
    } else {
        Comparison::Equivalent
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn mean_and_std() {
        assert_eq!(mean(&[1.0, 2.0, 3.0, 4.0]), 2.5);
        // Σ(x − 2.5)² = 5, / 3.
        assert!(close(sample_std(&[1.0, 2.0, 3.0, 4.0]), (5.0f64 / 3.0).sqrt(), 1e-15));
        assert_eq!(sample_std(&[7.0]), 0.0);
        assert!(mean(&[]).is_nan() && sample_std(&[]).is_nan());
    }

    /// df = 3: closed-form CDF F(t) = ½ + (1/π)[x/(1+x²) + atan x], x = t/√3, so the two-sided
    /// p-value is 1 − (2/π)[x/(1+x²) + atan x] with x = |t|/√3 — independent of statrs.
    #[test]
    fn golden_df3() {
        let a = [0.10, 0.12, 0.15, 0.11];
        let b = [0.13, 0.14, 0.15, 0.16];
        let r = paired_t_test(&a, &b).expect("valid");
        // d = (−0.03, −0.02, 0, −0.05): mean −0.025, sd √(0.0013/3), t = −0.025/(sd/2).
        let t_hand = -0.025 / ((0.0013f64 / 3.0).sqrt() / 2.0);
        assert!(close(r.t, t_hand, 1e-9), "{} vs {t_hand}", r.t);
        assert!(close(r.t, -2.401_922_307_076_307, 1e-9));
        assert_eq!(r.df, 3.0);
        let x = r.t.abs() / 3f64.sqrt();
        let p_closed = 1.0 - 2.0 / std::f64::consts::PI * (x / (1.0 + x * x) + x.atan());
        assert!(close(r.p, p_closed, 1e-10), "{} vs {p_closed}", r.p);
        assert!(close(r.p, 0.095_708_924_634_029_6, 1e-6));
        assert_eq!(compare(&a, &b, 0.1).expect("ok"), Comparison::Better);
        assert_eq!(compare(&b, &a, 0.1).expect("ok"), Comparison::Worse);
        assert_eq!(compare(&a, &b, 0.05).expect("ok"), Comparison::Equivalent);
    }

    /// df = 2: F(t) = ½ + t/(2√(2 + t²)), so p = 1 − |t|/√(2 + t²).
    #[test]
    fn golden_df2() {
        let r = paired_t_test(&[1.0, 2.0, 4.0], &[1.5, 2.1, 5.0]).expect("valid");
        let p_closed = 1.0 - r.t.abs() / (2.0 + r.t * r.t).sqrt();
        assert!(close(r.t, -2.048_590_078_926_335, 1e-9));
        assert!(close(r.p, p_closed, 1e-10));
        assert!(close(r.p, 0.177_048_800_202_176_6, 1e-6));
    }

    /// Table value: t_{0.95}(9) = 1.833113, so a two-sided p of 0.1 (10 folds).
    #[test]
    fn table_value_ten_folds() {
        // Build differences with mean m and sd s such that t = m/(s/√10) = 1.833113.
        let d = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let s = sample_std(&d);
        let shift = 1.833_113 * s / 10f64.sqrt();
        let a: Vec<f64> = d.iter().map(|x| x + shift).collect();
        let r = paired_t_test(&a, &[0.0; 10]).expect("valid");
        assert!(close(r.t, 1.833_113, 1e-9));
        assert!(close(r.p, 0.1, 1e-6), "{}", r.p);
    }

    #[test]
    fn zero_variance_cases() {
        let a = [0.2, 0.3, 0.25];
        let r = paired_t_test(&a, &a).expect("valid");
        assert_eq!((r.t, r.p), (0.0, 1.0));
        assert_eq!(compare(&a, &a, 0.1).expect("ok"), Comparison::Equivalent);
        let b = [1.0, 2.0, 3.0];
        let c = [2.0, 3.0, 4.0];
        let r = paired_t_test(&b, &c).expect("valid");
        assert_eq!((r.t, r.p), (f64::NEG_INFINITY, 0.0));
        assert_eq!(compare(&b, &c, 0.1).expect("ok"), Comparison::Better);
        assert_eq!(compare(&c, &b, 0.1).expect("ok"), Comparison::Worse);
    }

    #[test]
    fn invalid_inputs() {
        assert!(paired_t_test(&[1.0], &[2.0]).is_err());
        assert!(paired_t_test(&[1.0, 2.0], &[2.0]).is_err());
        assert!(paired_t_test(&[1.0, f64::NAN], &[2.0, 1.0]).is_err());
        assert!(compare(&[1.0, 2.0], &[2.0, 1.0], 0.0).is_err());
        assert!(compare(&[1.0, 2.0], &[2.0, 1.0], f64::NAN).is_err());
    }
}
