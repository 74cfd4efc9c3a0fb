//! Tempered arithmetic (SPEC §1). STUB: replaced by the full module.

/// Power mean M_s(a, b) (SPEC §1), s → 0 is the geometric mean.
pub fn power_mean(a: f64, b: f64, s: f64) -> f64 {
    if s.abs() < 1e-12 {
        (a * b).sqrt()
    } else if s == f64::INFINITY {
        a.max(b)
    } else if s == f64::NEG_INFINITY {
        a.min(b)
    } else {
        ((a.powf(s) + b.powf(s)) / 2.0).powf(1.0 / s)
    }
}

/// Tempered Bayes risk L^(t)(u) = 2u(1−u)/M_{1−t}(u, 1−u) (SPEC §2.2).
pub fn bayes_risk(u: f64, t: f64) -> f64 {
    if u <= 0.0 || u >= 1.0 {
        return 0.0;
    }
    2.0 * u * (1.0 - u) / power_mean(u, 1.0 - u, 1.0 - t)
}

/// `optimal` tempered leaf value (SPEC §2.2).
pub fn link_optimal(p: f64, t: f64) -> f64 {
    if (1.0 - t).abs() < 1e-9 {
        return 0.5 * (p / (1.0 - p)).ln();
    }
    let a = p.powf(1.0 - t);
    let b = (1.0 - p).powf(1.0 - t);
    (a - b) / ((1.0 - t) * (a + b))
}

/// `canonical` tempered leaf value (SPEC §2.2).
pub fn link_canonical(p: f64, t: f64) -> f64 {
    (p.powf(2.0 - t) - (1.0 - p).powf(2.0 - t)) / power_mean(p, 1.0 - p, 1.0 - t).powf(2.0 - t)
}
