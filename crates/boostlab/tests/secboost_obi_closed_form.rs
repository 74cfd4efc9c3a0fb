//! The closed-form OBI of the built-in convex losses (docs/explanation/secboost.md#secboost-obi: "the OBI (closed form or
//! a unimodal search, since line − F is concave)").
//!
//! References: `golden/obi_reference.json`, 50-digit values from `golden/obi_reference.py`
//! (mpmath) for the logistic, exponential and tempered losses at edges from −30 to 20 and offsets
//! from ±3 down to 10⁻¹², where the gap `line − F` cancels to 10⁻³⁸ next to terms of order 1.

use std::sync::Arc;

use boostlab::boost::secboost::obi::{obi, obi_convex, obi_convex_many};
use boostlab::math::loss::{Loss, LossSpec};

fn builtin(s: &str) -> Loss {
    Loss::from_spec(&s.parse::<LossSpec>().expect("valid spec")).expect("valid loss")
}

/// The same loss as a user closure declared convex: SecBoost then uses the unimodal search.
fn as_closure(s: &str) -> Loss {
    let l = builtin(s);
    Loss::custom(format!("{s}-closure"), Arc::new(move |z| l.value(z)), true, None).expect("valid")
}

#[test]
fn closed_form_obi_matches_50_digit_references() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/obi_reference.json");
    let text = std::fs::read_to_string(path).expect("reference file");
    let refs: Vec<serde_json::Value> = serde_json::from_str(&text).expect("json");
    assert!(refs.len() > 250, "{} references", refs.len());
    let mut worst = std::collections::BTreeMap::<String, f64>::new();
    for r in &refs {
        let name = r["loss"].as_str().expect("loss");
        let (z, v, want) = (r["z"].as_f64().unwrap(), r["v"].as_f64().unwrap(), r["q"].as_f64().unwrap());
        let l = builtin(name);
        let got = obi_convex(&l, z, v);
        let err = (got - want).abs();
        if name.starts_with("tempered") {
            // The tempered gap is computed from loss values (as the search): a few ulps of F.
            let scale = l.value(z).max(l.value(z + v));
            assert!(err <= 8.0 * f64::EPSILON * scale, "{name} z={z} v={v}: {got} vs {want}");
        } else {
            // Logistic and exponential: relative error ≤ 1e−11 at every offset (the claim of
            // `LossSpec::obi_closed_form`: ln_1p/exp_m1 differences, midpoint series at small |v|).
            let rel = err / want;
            assert!(want > 0.0 && rel <= 1e-11, "{name} z={z} v={v}: {got} vs {want} (relative {rel:e})");
            let e = worst.entry(name.to_string()).or_insert(0.0);
            *e = e.max(rel);
        }
    }
    eprintln!("worst relative errors: {worst:?}");
}

#[test]
fn closed_form_is_the_maximum_the_search_approaches() {
    // The search returns the best of its grid points: a lower bound of the exact maximum, within
    // its resolution (a bracket of ≈ 4e−10 of the secant's width) where the gap is not cancelled
    // (|v| ≥ 0.01 here).
    for s in ["logistic", "exponential", "square", "tempered:t=0.5", "tempered:t=1.5", "tempered:t=0"] {
        let (exact, search) = (builtin(s), as_closure(s));
        for &z in &[-4.0, -1.0, -0.2, 0.0, 0.5, 2.0, 6.0] {
            for &v in &[2.5, -1.5, 0.4, -0.1, 0.01] {
                if !(exact.value(z).is_finite() && exact.value(z + v).is_finite()) {
                    continue;
                }
                let q = obi_convex(&exact, z, v);
                let qs = obi_convex(&search, z, v);
                let scale = exact.value(z).abs().max(exact.value(z + v).abs()).max(1e-300);
                assert!(qs <= q + 16.0 * f64::EPSILON * scale, "{s} z={z} v={v}: search {qs} > exact {q}");
                assert!(q - qs <= 1e-9 * q + 16.0 * f64::EPSILON * scale, "{s} z={z} v={v}: {q} vs search {qs}");
            }
        }
    }
}

#[test]
fn hinge_obi_is_the_gap_at_the_kink() {
    let l = builtin("hinge");
    // Line through (0, 1) and (2, 0): at the kink x = 1 the line is at ½ and F = 0.
    assert_eq!(obi_convex(&l, 0.0, 2.0), 0.5);
    assert_eq!(obi_convex(&l, 2.0, -2.0), 0.5);
    // (1 − lo)(hi − 1)/(hi − lo) in general; 0 where the loss is linear on the interval.
    assert!((obi_convex(&l, -2.0, 5.0) - 3.0 * 2.0 / 5.0).abs() < 1e-15);
    assert_eq!(obi_convex(&l, 1.5, 3.0), 0.0);
    assert_eq!(obi_convex(&l, -3.0, 3.9), 0.0);
    assert_eq!(obi_convex(&l, 1.0, 0.5), 0.0, "the kink at an end");
    // The fine grid approaches it from below.
    let g = obi(&l, -1.0, 3.0, 3.0, 40_000);
    assert!(g <= 1.0 && 1.0 - g < 1e-4, "{g}");
    assert_eq!(obi_convex(&l, -1.0, 4.0), 1.0);
}

#[test]
fn batch_and_scalar_closed_forms_agree_bit_for_bit() {
    for s in ["logistic", "exponential", "square", "hinge", "tempered:t=0.5", "tempered:t=1.5"] {
        let l = builtin(s);
        let zs: Vec<f64> = (0..60).map(|i| -3.0 + 0.1 * i as f64).collect();
        let vs: Vec<f64> = (0..60).map(|i| [1.0, -0.3, 1e-4, -2e-8, 0.0][i % 5]).collect();
        let many = obi_convex_many(&l, &zs, &vs);
        for i in 0..zs.len() {
            let one = obi_convex(&l, zs[i], vs[i]);
            assert!(one.to_bits() == many[i].to_bits() || (one.is_nan() && many[i].is_nan()), "{s} {i}");
        }
    }
    // Non-finite ends give NaN, as the search.
    assert!(obi_convex(&builtin("tempered:t=1.5"), -3.0, 1.0).is_nan());
    assert!(obi_convex(&builtin("exponential"), -800.0, 1.0).is_nan());
}
