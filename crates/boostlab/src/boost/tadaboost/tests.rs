// The tests index several parallel arrays by example; iterator chains would hide that.
#![allow(clippy::needless_range_loop)]

use super::*;
use crate::math::tempered::{co_simplex_normalize, k_t, tempered_update};
use crate::tree::TemperedLink;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn labels<'a>(y: &'a [f64], sw: Option<&'a [f64]>) -> Labels<'a> {
    Labels { n: y.len(), k: 1, y, class: None, sample_weight: sw }
}

fn params(t: f64) -> TAdaBoostParams {
    TAdaBoostParams { t, ..Default::default() }
}

fn random_labels(rng: &mut ChaCha8Rng, n: usize) -> Vec<f64> {
    (0..n).map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 }).collect()
}

/// A synthetic weak hypothesis: ±1 outputs right with probability 0.6–0.85 (`kind` 0), or
/// real outputs in [−2, 2] leaning towards the label (`kind` 1).
fn random_h(rng: &mut ChaCha8Rng, y: &[f64], kind: usize) -> Vec<f64> {
    if kind == 0 {
        let p = rng.gen_range(0.6..0.85);
        y.iter().map(|&yi| if rng.gen_bool(p) { yi } else { -yi }).collect()
    } else {
        y.iter().map(|&yi| (rng.gen_range(-2.0..2.0) + 0.7 * yi).clamp(-2.0, 2.0)).collect()
    }
}

fn co_sum(q: &[f64], t: f64) -> f64 {
    q.iter().map(|v| v.powf(2.0 - t)).sum()
}

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// Runs `rounds` rounds on random hypotheses and checks every docs/explanation/tadaboost.md#tadaboost-algorithm invariant at each one.
fn check_invariants(t: f64, seed: u64, kind: usize, rounds: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = 40;
    let y = random_labels(&mut rng, n);
    let mut b = match TAdaBoost::new(&params(t), labels(&y, None)) {
        Ok(b) => b,
        Err(e) => panic!("construction failed: {e}"),
    };
    let (tt, s) = (b.t(), 1.0 - b.t());
    assert!(rel_close(co_sum(b.weights(), tt), 1.0, 1e-12));
    let mut h_sum = vec![0.0; n];
    let mut c_sum = vec![0.0; n];
    for round in 0..rounds {
        let h = random_h(&mut rng, &y, kind);
        let q_old = b.weights().to_vec();
        let mut diag = Diagnostics::new();
        let step = match b.step(&h, &mut diag) {
            Ok(st) => st,
            Err(e) => panic!("t={t} seed={seed} round={round}: {e}"),
        };
        let alpha = match step {
            Step::Add { alpha } => alpha,
            Step::AddAndStop { alpha, .. } => alpha,
            Step::Stop { .. } => break,
        };
        let ctx = format!("t={t} seed={seed} kind={kind} round={round} diag={diag:?}");
        for (k, v) in &diag {
            assert!(v.is_finite(), "{k} not finite: {ctx}");
        }
        assert!(alpha.is_finite() && alpha == diag["alpha"], "{ctx}");
        // Co-simplex after every round.
        assert!((co_sum(b.weights(), tt) - 1.0).abs() < 1e-9, "{ctx}");
        // Bounded leverage |µ| ≤ 1/(R|1−t|).
        let (mu, r, rho, z) = (diag["mu"], diag["r"], diag["rho"], diag["z"]);
        if tt != 1.0 {
            assert!(mu.abs() <= 1.0 / (r * s.abs()) * (1.0 + 1e-12), "{ctx}");
        }
        assert!((-1.0..=1.0).contains(&rho));
        // Training error of both models ≤ Π Z^(2−t) ≤ Π (1 + m† q†^(2−t)) K_t(ρ).
        assert!(diag["train_error"] <= diag["bound"] + 1e-12, "{ctx}");
        assert!(diag["train_error_clipped"] <= diag["bound"] + 1e-12, "{ctx}");
        let factor = 1.0 + diag["switched_off"] * diag["q_dagger"].powf(2.0 - tt);
        // Z ≤ K_t(ρ) holds for the exact µ; a (nearly) perfect hypothesis stops with a capped
        // µ, whose Z is above K_t(ρ) → 0 (seed 261560: ρ = 1 − 2e−16, Z = 1e−5).
        if !matches!(step, Step::AddAndStop { .. }) {
            assert!(z.powf(2.0 - tt) <= factor * k_t(rho, tt) * (1.0 + 1e-9) + 1e-15, "{ctx}");
        }
        // The update is the scalar tempered update, normalised.
        for i in 0..n {
            let expected = tempered_update(q_old[i], mu, y[i] * h[i], tt) / z;
            assert!(rel_close(b.weights()[i], expected, 1e-9) || expected < 1e-290, "{ctx} i={i}");
        }
        // Models: H = Σ α h, S = clipped sum.
        for i in 0..n {
            h_sum[i] += alpha * h[i];
            c_sum[i] = match b.clip_delta() {
                Some(d) => (c_sum[i] + alpha * h[i]).clamp(-d, d),
                None => h_sum[i],
            };
        }
        assert!(b.scores().iter().zip(&h_sum).all(|(a, e)| rel_close(*a, *e, 1e-12) || a == e));
        assert!(b.clipped_scores().iter().zip(&c_sum).all(|(a, e)| (a - e).abs() < 1e-12));
        if matches!(step, Step::AddAndStop { .. }) {
            break;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn invariants_over_seeds(seed in 0u64..1_000_000, kind in 0usize..2) {
        for t in [0.0, 0.2, 0.5, 0.8, 0.9, 1.0] {
            check_invariants(t, seed, kind, 15);
        }
    }

    /// t > 1 has no guarantee but must stay finite and on the co-simplex.
    #[test]
    fn above_one_stays_finite(seed in 0u64..1_000_000, kind in 0usize..2) {
        for t in [1.2, 1.5, 1.9] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let y = random_labels(&mut rng, 30);
            let mut b = TAdaBoost::new(&params(t), labels(&y, None)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for _ in 0..15 {
                let h = random_h(&mut rng, &y, kind);
                let mut diag = Diagnostics::new();
                let step = b.step(&h, &mut diag).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(diag.values().all(|v| v.is_finite()), "{:?}", diag);
                // With docs/explanation/tadaboost.md#tadaboost-update: R_j no weight overflows unless ρ rounds to ±1 (module doc).
                prop_assert_eq!(diag.get("n_infinite").copied().unwrap_or(0.0), 0.0);
                if !matches!(step, Step::Add { .. }) { break; }
                prop_assert!((co_sum(b.weights(), t) - 1.0).abs() < 1e-9);
            }
        }
    }
}

/// Switched-off weights (t < 1): with some weights forced to 0, ρ uses q† (docs/explanation/tadaboost.md#tadaboost-algorithm), the
/// per-round bound Z^(2−t) ≤ (1 + m† q†^(2−t)) K_t(ρ) holds, and an off weight comes back on as
/// [−(1−t)µu]_+^(1/(1−t)) when its example is misclassified.
#[test]
fn switched_off_weights() {
    for t in [0.0, 0.5, 0.9] {
        for seed in 0..6u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
            let n = 30;
            let y = random_labels(&mut rng, n);
            let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            for i in 0..6 {
                b.q[i] = 0.0;
            }
            let _ = co_simplex_normalize(&mut b.q, t);
            b.resync_powers(); // q was changed behind the booster's back
            let mut came_back = false;
            for round in 0..8 {
                let h = random_h(&mut rng, &y, 1);
                let q_old = b.weights().to_vec();
                let off = q_old.iter().filter(|&&q| q == 0.0).count();
                let mut diag = Diagnostics::new();
                let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
                if !matches!(step, Step::Add { .. }) {
                    break;
                }
                let ctx = format!("t={t} seed={seed} round={round} {diag:?}");
                assert!(diag.values().all(|v| v.is_finite()), "{ctx}");
                assert_eq!(diag["switched_off"], off as f64);
                assert!((co_sum(b.weights(), t) - 1.0).abs() < 1e-9, "{ctx}");
                assert!(diag["mu"].abs() <= 1.0 / (diag["r"] * (1.0 - t)) * (1.0 + 1e-12));
                let factor = 1.0 + diag["switched_off"] * diag["q_dagger"].powf(2.0 - t);
                assert!(diag["z"].powf(2.0 - t) <= factor * k_t(diag["rho"], t) * (1.0 + 1e-9), "{ctx}");
                for i in 0..n {
                    let expected = tempered_update(q_old[i], diag["mu"], y[i] * h[i], t) / diag["z"];
                    assert!(rel_close(b.weights()[i], expected, 1e-9), "{ctx} i={i}");
                    came_back |= q_old[i] == 0.0 && b.weights()[i] > 0.0;
                }
            }
            assert!(came_back, "t={t} seed={seed}");
        }
    }
}

/// Weights are the tempered exponential of the margin: q_{J+1} Π Z = m^(−t*) exp_t(−y H), which
/// checks α = m^(1−t*) (Π Z)^(1−t) µ against the update (derivation in the report).
#[test]
fn weights_are_tempered_exponential_of_margins() {
    for t in [0.0, 0.3, 0.7, 1.0, 1.3] {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 25;
        let y = random_labels(&mut rng, n);
        let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        for round in 0..10 {
            let h = random_h(&mut rng, &y, round % 2);
            let mut diag = Diagnostics::new();
            let _ = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(diag["n_zero"], 0.0);
            let scale = b.ln_prod_z.exp();
            for i in 0..n {
                let lhs = b.weights()[i] * scale;
                let rhs = (n as f64).powf(-t_star(t)) * crate::math::tempered::exp_t(-y[i] * b.scores()[i], t);
                assert!(rel_close(lhs, rhs, 1e-9), "t={t} round={round} i={i}: {lhs} vs {rhs}");
            }
        }
    }
}

/// t = 1 is AdaBoost with α = ½ ln((1+r)/(1−r)) on h/R (docs/explanation/adaboost.md#adaboost-alpha-linear), computed naively.
#[test]
fn t_one_is_adaboost() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let n = 30;
    let y = random_labels(&mut rng, n);
    let mut b = TAdaBoost::new(&params(1.0), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
    let mut big_h = vec![0.0f64; n];
    for round in 0..12 {
        let h = random_h(&mut rng, &y, round % 2);
        // Naive AdaBoost: d ∝ exp(−y H).
        let d: Vec<f64> = (0..n).map(|i| (-y[i] * big_h[i]).exp()).collect();
        let total: f64 = d.iter().sum();
        for i in 0..n {
            assert!(rel_close(b.weights()[i], d[i] / total, 1e-12), "round {round} weight {i}");
        }
        let rmax = h.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let r: f64 = (0..n).map(|i| d[i] / total * y[i] * h[i] / rmax).sum();
        let alpha = 0.5 * ((1.0 + r) / (1.0 - r)).ln() / rmax;
        let mut diag = Diagnostics::new();
        let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(step, Step::Add { alpha: diag["alpha"] });
        assert!(rel_close(diag["alpha"], alpha, 1e-12), "round {round}: {} vs {alpha}", diag["alpha"]);
        assert_eq!(diag["alpha"], diag["mu"]);
        assert!((diag["rho"] - r).abs() < 1e-14);
        for i in 0..n {
            big_h[i] += alpha * h[i];
        }
    }
}

/// t = 1 − 1e−9 (which rounds to within the 1e−9 tolerance, so is computed as 1) and the
/// genuinely tempered t = 1 ± 2e−9, 1 − 1e−7 match t = 1 to 1e−6.
#[test]
fn continuity_at_t_one() {
    assert!(is_one(1.0 - 1e-9) && !is_one(1.0 - 2e-9));
    for (kind, t_near) in [(0, 1.0 - 1e-9), (0, 1.0 - 2e-9), (1, 1.0 - 2e-9), (0, 1.0 + 2e-9), (1, 1.0 - 1e-7)] {
        let mut rng = ChaCha8Rng::seed_from_u64(5 + kind as u64);
        let n = 30;
        let y = random_labels(&mut rng, n);
        let hs: Vec<Vec<f64>> = (0..10).map(|_| random_h(&mut rng, &y, kind)).collect();
        let mut b1 = TAdaBoost::new(&params(1.0), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        let mut b2 = TAdaBoost::new(&params(t_near), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(b2.t() == 1.0, is_one(t_near));
        for h in &hs {
            let (mut d1, mut d2) = (Diagnostics::new(), Diagnostics::new());
            let _ = b1.step(h, &mut d1).unwrap_or_else(|e| panic!("{e}"));
            let _ = b2.step(h, &mut d2).unwrap_or_else(|e| panic!("{e}"));
            for key in ["alpha", "mu", "rho", "z", "bound", "r", "min_weight", "max_weight"] {
                assert!(rel_close(d1[key], d2[key], 1e-6), "{key}: {} vs {}", d1[key], d2[key]);
            }
            for (a, c) in b1.weights().iter().zip(b2.weights()) {
                assert!(rel_close(*a, *c, 1e-6));
            }
            assert_eq!(d1["train_error"], d2["train_error"]);
        }
    }
}

/// A perfect (ρ = 1) or perfectly wrong (ρ = −1) hypothesis gives a finite µ for t < 1; at t = 1
/// AdaBoost's rule keeps it with α = ½ ln((1 − 1e−10)/1e−10)/R ≈ 11.5129/R and stops.
#[test]
fn perfect_weak_hypothesis() {
    let y = [1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0];
    for t in [0.0, 0.5, 0.9, 1.0, 1.5] {
        for sign in [1.0, -1.0] {
            let h: Vec<f64> = y.iter().map(|v| sign * 2.0 * v).collect();
            let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
            let mut diag = Diagnostics::new();
            let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
            assert!(diag.values().all(|v| v.is_finite()), "t={t}: {diag:?}");
            assert!((diag["rho"] - sign).abs() < 1e-12);
            let mu = diag["mu"];
            assert!(mu.is_finite() && mu * sign > 0.0);
            if t == 1.0 {
                let alpha = sign * 0.5 * ((1.0 - 1e-10) / 1e-10f64).ln() / 2.0;
                assert!((alpha.abs() * 2.0 - 11.512925464970229).abs() < 1e-9);
                assert!(matches!(step, Step::AddAndStop { alpha: a, .. } if a == alpha), "{step:?}");
            } else {
                // |µ| = 1/(R|1−t|) at |ρ| = 1 (up to the rounding of ρ).
                let bound = 1.0 / (diag["r"] * (1.0 - t).abs());
                assert!(rel_close(mu.abs(), bound, 1e-12), "t={t}: {mu} vs {bound}");
                if t < 1.0 {
                    // Every weight switches off: Z = 0, training error 0, stop.
                    assert!(matches!(step, Step::AddAndStop { .. }), "t={t}: {step:?}");
                    assert_eq!((diag["z"], diag["bound"], diag["n_zero"]), (0.0, 0.0, 7.0));
                    assert!(b.weights().iter().all(|&q| q == 0.0));
                } else {
                    assert!(matches!(step, Step::Add { .. }));
                    assert!((co_sum(b.weights(), t) - 1.0).abs() < 1e-9);
                }
            }
            assert!(diag["train_error"] <= diag["bound"] + 1e-12);
        }
    }
}

/// Overflow at t = 1.5: one example of sample weight 2^−80 is maximally wrong while ρ rounds to
/// exactly 1 (all numbers are powers of two, so every step is exact). Its weight's bracket
/// q^(1−t) − (1−t)µu is exactly 0: +∞.
#[test]
fn overflow_fallback_and_error() {
    let y = [1.0, 1.0, -1.0, 1.0, -1.0];
    let sw = [2f64.powi(-80), 1.0, 1.0, 1.0, 1.0];
    // Frequency weights: every copy starts at q_1 = n^(−t*) = 1/25 (multiplicities
    // of mean 1); the example of negligible weight is the one wrong, so ρ rounds to 1 and its
    // weight overflows.
    let mut h: Vec<f64> = y.to_vec();
    h[0] = -y[0];

    let mut b = TAdaBoost::new(&params(1.5), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
    for i in 0..5 {
        assert!((b.weights()[i] - 0.04).abs() < 1e-17, "{:?}", b.weights());
    }
    let mut diag = Diagnostics::new();
    let step = b.step(&h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(diag["rho"], 1.0);
    // n_inf counts copies: the overflowed example weighs 2^−80 (in sample-weight units), and
    // its copies get weight n_inf^(−t*) in the multiplicities' unit, c_0^(−2).
    assert!((diag["n_infinite"] - sw[0]).abs() < 1e-15 * sw[0]);
    assert_eq!(diag["z"], 1.0);
    let c0 = sw[0] * 5.0 / (4.0 + sw[0]);
    assert!((b.weights()[0] / c0.powi(-2) - 1.0).abs() < 1e-12, "{:?}", b.weights());
    assert_eq!(&b.weights()[1..], &[0.0, 0.0, 0.0, 0.0]);
    assert!((diag["n_zero"] - 4.0).abs() < 1e-12);
    assert!(matches!(step, Step::Add { alpha } if alpha.is_finite() && alpha > 0.0));
    assert!(diag.values().all(|v| v.is_finite()));
    let survivor = b.weights()[0];
    // The dead weights stay dead; boosting continues on the survivor.
    let mut diag = Diagnostics::new();
    let _ = b.step(&[1.0, 1.0, 1.0, 1.0, 1.0], &mut diag).unwrap_or_else(|e| panic!("{e}"));
    assert!((b.weights()[0] / survivor - 1.0).abs() < 1e-12, "{:?}", b.weights());
    assert_eq!(&b.weights()[1..], &[0.0, 0.0, 0.0, 0.0]);

    let p = TAdaBoostParams { t: 1.5, overflow: OverflowPolicy::Error, ..Default::default() };
    let mut b = TAdaBoost::new(&p, labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
    let before = b.weights().to_vec();
    let res = b.step(&h, &mut Diagnostics::new());
    assert!(matches!(res, Err(Error::Numerical(_))), "{res:?}");
    assert_eq!(b.weights(), &before[..]);
    assert!(b.scores().iter().all(|&v| v == 0.0));
}

/// Over several chunks of examples, the per-example passes give bit-identical
/// weights and diagnostics with 1 and 2 threads, the cached `q^(1−t)` stays within 1e−12 of
/// `q^(1−t)` over 40 rounds, and every weight is the scalar tempered update to 1e−9.
#[test]
fn chunked_passes_and_cached_powers() {
    let n = 2 * MAX_CHUNK + 123;
    for t in [0.3, 0.8, 1.0, 1.5] {
        let mut rng = ChaCha8Rng::seed_from_u64(80);
        let y = random_labels(&mut rng, n);
        let hs: Vec<Vec<f64>> = (0..40).map(|r| random_h(&mut rng, &y, r % 2)).collect();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap_or_else(|e| panic!("{e}"));
            pool.install(|| {
                let mut b = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
                let mut trace = Vec::new();
                for h in &hs {
                    let q_old = b.weights().to_vec();
                    let mut diag = Diagnostics::new();
                    let step = b.step(h, &mut diag).unwrap_or_else(|e| panic!("{e}"));
                    if !matches!(step, Step::Add { .. }) {
                        break;
                    }
                    if threads == 1 {
                        let s = 1.0 - b.t();
                        for i in 0..n {
                            let q = b.weights()[i];
                            if s != 0.0 {
                                assert!(rel_close(b.qs[i], q.powf(s), 1e-12), "t={t} i={i}");
                            }
                            let want = tempered_update(q_old[i], diag["mu"], y[i] * h[i], b.t()) / diag["z"];
                            assert!(rel_close(q, want, 1e-9), "t={t} i={i}: {q} vs {want}");
                        }
                        assert!((co_sum(b.weights(), b.t()) - 1.0).abs() < 1e-12);
                    }
                    trace.push(format!("{diag:?}"));
                }
                let bits: Vec<u64> = b.weights().iter().chain(b.scores()).map(|v| v.to_bits()).collect();
                (trace, bits)
            })
        };
        let (a, b) = (run(1), run(2));
        assert!(a.0.len() > 10, "t={t}: only {} rounds", a.0.len());
        assert_eq!(a, b, "t={t}");
    }
}

#[test]
fn zero_hypothesis_and_no_edge_stop() {
    let y = [1.0, -1.0, 1.0, -1.0];
    let mut b = TAdaBoost::new(&params(0.5), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
    let step = b.step(&[0.0; 4], &mut Diagnostics::new()).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(step, Step::Stop { .. }));
    // ρ = 0: right on half the weight, wrong on the other half.
    let step = b.step(&[1.0, 1.0, 1.0, 1.0], &mut Diagnostics::new()).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(step, Step::Stop { .. }), "{step:?}");
    assert!(b.step(&[1.0, f64::NAN, 0.0, 0.0], &mut Diagnostics::new()).is_err());
    assert!(b.step(&[1.0], &mut Diagnostics::new()).is_err());
}

#[test]
fn sample_weights() {
    let y = [1.0, -1.0, 1.0, -1.0, 1.0];
    let h = [1.0, -0.5, -1.0, 0.3, 2.0];
    for t in [0.0, 0.6, 1.0, 1.4] {
        // Equal sample weights change nothing.
        let mut a = TAdaBoost::new(&params(t), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        let sw = [3.0; 5];
        let mut b = TAdaBoost::new(&params(t), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
        let (mut da, mut db) = (Diagnostics::new(), Diagnostics::new());
        let _ = a.step(&h, &mut da).unwrap_or_else(|e| panic!("{e}"));
        let _ = b.step(&h, &mut db).unwrap_or_else(|e| panic!("{e}"));
        assert!(rel_close(da["alpha"], db["alpha"], 1e-14));
        // A zero sample weight keeps the example out, even when it is badly misclassified.
        let sw = [1.0, 1.0, 0.0, 1.0, 1.0];
        let mut c = TAdaBoost::new(&params(t), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
        let mut stats = vec![0.0; 5];
        for _ in 0..3 {
            let _ = c.step(&h, &mut Diagnostics::new()).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c.weights()[2], 0.0);
            c.statistics(&mut stats);
            assert_eq!(stats[2], 0.0);
        }
    }
    // Frequency weights: every copy starts at the same q_1 (co-density 1/m per copy,
    // here in the unit of the multiplicities c = w n/Σw: 1/n), the tree's weights ∝ w.
    let sw = [1.0, 2.0, 3.0, 4.0, 0.0];
    let b = TAdaBoost::new(&params(0.5), labels(&y, Some(&sw))).unwrap_or_else(|e| panic!("{e}"));
    let mut stats = vec![0.0; 5];
    b.statistics(&mut stats);
    for i in 0..5 {
        let want = if sw[i] > 0.0 { 1.0 / 5.0 } else { 0.0 };
        assert!((b.weights()[i].powf(1.5) - want).abs() < 1e-15, "{i}");
        assert!((stats[i].abs() - sw[i] / 10.0).abs() < 1e-15, "{i}: {stats:?}");
    }
}

#[test]
fn statistics_layout() {
    let y = [1.0, -1.0, -1.0];
    for lw in [LearnerWeights::Normalized, LearnerWeights::CoDensity] {
        let p = TAdaBoostParams { t: 0.0, learner_weights: lw, ..Default::default() };
        let b = TAdaBoost::new(&p, labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
        let mut stats = vec![9.0; 3];
        b.statistics(&mut stats);
        let stats = crate::boost::expand_signed(&stats);
        // t = 0: q = 3^(−1/2), normalised 1/3; co-density q² = 1/3.
        let third = 1.0 / 3.0;
        for (got, want) in stats.iter().zip([third, 0.0, 0.0, third, 0.0, third]) {
            assert!((got - want).abs() < 1e-15, "{lw:?}: {stats:?}");
        }
    }
}

/// Rounds of a booster on `n` random examples (several chunks), with hypotheses whose few
/// distinct values mimic a tree's leaves; returns the statistics written after each round.
fn run(t: f64, sw: Option<&[f64]>, y: &[f64], seed: u64, fused: bool) -> (Vec<Vec<f64>>, TAdaBoost) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut b = match TAdaBoost::new(&params(t), labels(y, sw)) {
        Ok(b) => b,
        Err(e) => panic!("t = {t}: {e}"),
    };
    let mut stats = vec![0.0; y.len()];
    b.statistics(&mut stats);
    let mut out = vec![stats.clone()];
    for _ in 0..6 {
        let leaves: Vec<f64> = (0..8).map(|_| rng.gen_range(-1.5..1.5)).collect();
        let h: Vec<f64> = y.iter().map(|&yi| leaves[rng.gen_range(0..8)] + 0.3 * yi).collect();
        let mut diag = Diagnostics::new();
        let step = if fused {
            b.step_then_statistics(&h, &mut diag, &mut stats)
        } else {
            b.step(&h, &mut diag).inspect(|_| b.statistics(&mut stats))
        };
        match step {
            Ok(Step::Add { .. }) => out.push(stats.clone()),
            Ok(_) => break,
            Err(e) => panic!("t = {t}: {e}"),
        }
    }
    (out, b)
}

#[test]
fn fused_last_pass_writes_the_statistics_of_the_two_calls() {
    // 20,000 examples: three of the booster's 8,192-row chunks.
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(1818);
    let y = random_labels(&mut rng, n);
    let sw: Vec<f64> = (0..n).map(|i| if i % 97 == 0 { 0.0 } else { rng.gen_range(0.2..3.0) }).collect();
    for t in [0.0, 0.5, 0.6, 0.8, 1.0, 1.3] {
        for w in [None, Some(&sw[..])] {
            let (fused, b) = run(t, w, &y, 7, true);
            let (two_calls, b2) = run(t, w, &y, 7, false);
            let ctx = format!("t = {t}, weights: {}", w.is_some());
            assert!(fused.len() > 3, "{ctx}: only {} rounds", fused.len());
            // Bit for bit: statistics of every round, final weights and scores.
            assert_eq!(fused.len(), two_calls.len(), "{ctx}");
            for (a, c) in fused.iter().zip(&two_calls) {
                assert!(a.iter().zip(c).all(|(a, c)| a.to_bits() == c.to_bits()), "{ctx}");
            }
            assert!(b.q.iter().zip(&b2.q).all(|(a, c)| a.to_bits() == c.to_bits()), "{ctx}");
            assert!(b.scores.iter().zip(&b2.scores).all(|(a, c)| a.to_bits() == c.to_bits()), "{ctx}");
            // And they are docs/explanation/tadaboost.md#tadaboost-algorithm: d = c q/Σ c q (naive serial sum), signed by the label.
            let last = &fused[fused.len() - 1];
            let c = |i: usize| b.c.as_ref().map_or(1.0, |c| c[i]);
            let total: f64 = (0..n).map(|i| c(i) * b.q[i]).sum();
            for i in 0..n {
                let want = y[i] * c(i) * b.q[i] / total;
                assert!(rel_close(last[i], want, 1e-13) || (last[i] == 0.0 && want == 0.0), "{ctx} i = {i}");
            }
            // The co-simplex holds to 1e−12 (docs/explanation/tadaboost.md#tadaboost-algorithm), each copy counted.
            let tt = b.t();
            let co: f64 = (0..n).map(|i| c(i) * b.q[i].powf(2.0 - tt)).sum();
            assert!((co - 1.0).abs() < 1e-12, "{ctx}: Σ c q^(2−t) = {co}");
        }
    }
}

#[test]
fn integer_power_kernel_matches_the_scalar_update() {
    // t = 0.8 (1/(1−t) snapped to 5) and t = 0.5 (2), 0.75 (4): the update by powi_seq agrees with
    // docs/explanation/tadaboost.md#tadaboost-update: scalar update `tempered_update` (exp/log, no snap) to 1e−12 relative, on three
    // chunks of weights that move over several orders of magnitude.
    let n = 20_000;
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    let y = random_labels(&mut rng, n);
    for t in [0.5, 0.75, 0.8] {
        assert!(snapped_int_exponent(1.0 / (1.0 - t)).is_some(), "t = {t}");
        let mut b = match TAdaBoost::new(&params(t), labels(&y, None)) {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        };
        let mut checked = 0;
        for round in 0..10 {
            let h = random_h(&mut rng, &y, 1);
            let q_old = b.weights().to_vec();
            let mut diag = Diagnostics::new();
            match b.step(&h, &mut diag) {
                Ok(Step::Add { .. }) => {}
                other => panic!("t = {t} round {round}: {other:?}"),
            }
            let (mu, z) = (diag["mu"], diag["z"]);
            for i in 0..n {
                let want = tempered_update(q_old[i], mu, y[i] * h[i], t) / z;
                assert!(rel_close(b.weights()[i], want, 1e-12), "t = {t} round {round} i = {i}");
                checked += 1;
            }
            let co: f64 = b.weights().iter().map(|q| q.powf(2.0 - t)).sum();
            assert!((co - 1.0).abs() < 1e-12, "t = {t} round {round}: {co}");
            // q^(1−t) is kept in step with q.
            assert!(b.q.iter().zip(&b.qs).all(|(q, qs)| rel_close(q.powf(1.0 - t), *qs, 1e-13)));
        }
        assert_eq!(checked, 10 * n);
    }
}

#[test]
fn fused_passes_are_the_same_at_any_thread_count() {
    let n = 40_000;
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let y = random_labels(&mut rng, n);
    let sw: Vec<f64> = (0..n).map(|_| rng.gen_range(0.5..2.0)).collect();
    for (t, w) in [(0.8, None), (0.6, Some(&sw[..])), (1.0, None)] {
        let run = |threads: usize| {
            let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                Ok(p) => p,
                Err(e) => panic!("{e}"),
            };
            pool.install(|| {
                let (stats, b) = run(t, w, &y, 3, true);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                (stats.iter().map(|s| bits(s)).collect::<Vec<_>>(), bits(&b.q), bits(&b.scores))
            })
        };
        let one = run(1);
        assert!(one.0.len() > 3);
        for threads in [2, 3] {
            assert!(one == run(threads), "t = {t}: 1 and {threads} threads differ");
        }
    }
}

/// `step_on_leaves` (the passes read each row's leaf and the leaf values;
/// the models move in the update's pass) gives the dense `step_then_statistics`'s state bit for
/// bit — weights, `q^(1−t)`, both models, statistics, diagnostics — for every kernel and regime,
/// with and without sample weights, with shrinkage, at 1 and 2 threads.
#[test]
fn step_on_leaves_equals_the_dense_step() {
    let n = 2 * MAX_CHUNK + 777;
    let mut rng = ChaCha8Rng::seed_from_u64(1888);
    let y = random_labels(&mut rng, n);
    let sw: Vec<f64> = (0..n).map(|i| if i % 61 == 0 { 0.0 } else { rng.gen_range(0.3..2.5) }).collect();
    let rounds: Vec<(Vec<u32>, Vec<f64>)> = (0..6)
        .map(|_| {
            let leaves = rng.gen_range(2..9u32);
            let values: Vec<f64> = (0..leaves).map(|_| rng.gen_range(-1.2..1.2)).collect();
            // Leaves that lean towards the label, so that the rounds have an edge.
            let of_row = y
                .iter()
                .map(|&yi| {
                    let l = rng.gen_range(0..leaves);
                    if rng.gen_bool(0.3) && values[l as usize] * yi < 0.0 {
                        (l + 1) % leaves
                    } else {
                        l
                    }
                })
                .collect();
            (of_row, values)
        })
        .collect();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for t in [0.0, 0.5, 0.6, 0.8, 0.97, 1.0, 1.3] {
        for w in [None, Some(&sw[..])] {
            for lr in [1.0, 0.6] {
                let make = || {
                    let mut b = match TAdaBoost::new(&params(t), labels(&y, w)) {
                        Ok(b) => b,
                        Err(e) => panic!("t = {t}: {e}"),
                    };
                    b.set_learning_rate(lr);
                    b
                };
                for threads in [1, 2] {
                    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                        Ok(p) => p,
                        Err(e) => panic!("{e}"),
                    };
                    let ctx = format!("t = {t}, weights: {}, ν = {lr}, {threads} thread(s)", w.is_some());
                    let (mut dense, mut leaves) = (make(), make());
                    let (mut s1, mut s2, mut h) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                    let (mut added, mut naive) = (0, vec![0.0; n]);
                    for (of_row, values) in &rounds {
                        let hd: Vec<f64> = of_row.iter().map(|&l| values[l as usize]).collect();
                        let (mut g1, mut g2) = (Diagnostics::new(), Diagnostics::new());
                        let a = pool.install(|| dense.step_then_statistics(&hd, &mut g1, &mut s1));
                        let b = pool.install(|| leaves.step_on_leaves(of_row, values, &mut h, &mut g2, &mut s2));
                        let (a, b) = match (a, b) {
                            (Ok(a), Ok(b)) => (a, b),
                            other => panic!("{ctx}: {other:?}"),
                        };
                        assert_eq!(a, b, "{ctx}");
                        assert_eq!(bits(&dense.q), bits(&leaves.q), "{ctx}: weights");
                        assert_eq!(bits(&dense.qs), bits(&leaves.qs), "{ctx}: q^(1−t)");
                        assert_eq!(bits(&dense.scores), bits(&leaves.scores), "{ctx}: scores");
                        assert_eq!(bits(&dense.clipped), bits(&leaves.clipped), "{ctx}: clipped scores");
                        assert_eq!(bits(&s1), bits(&s2), "{ctx}: statistics");
                        assert_eq!(format!("{g1:?}"), format!("{g2:?}"), "{ctx}: diagnostics");
                        let Step::Add { alpha } = a else { break };
                        // The linear model moved by α h (docs/explanation/tadaboost.md#tadaboost-algorithm), h = the leaf values of the rows.
                        for (f, hv) in naive.iter_mut().zip(&hd) {
                            *f += alpha * hv;
                        }
                        assert_eq!(bits(&naive), bits(&leaves.scores), "{ctx}: H = Σ α h");
                        added += 1;
                    }
                    assert!(added >= 3, "{ctx}: only {added} rounds");
                    let d = leaves.delta.unwrap_or(f64::INFINITY);
                    assert!(leaves.clipped_scores().iter().all(|v| v.abs() <= d), "{ctx}");
                }
            }
        }
    }
    // A leaf index the tree learner would never write is a bad tree output of its row, not a
    // panic; a wrong number of rows is an error; neither changes the booster.
    let mut b = match TAdaBoost::new(&params(0.8), labels(&y, None)) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let q0 = b.q.clone();
    let (mut h, mut st) = (vec![0.0; n], vec![0.0; n]);
    let mut of_row = vec![0u32; n];
    of_row[5] = 9;
    let err = b.step_on_leaves(&of_row, &[0.5, -0.5], &mut h, &mut Diagnostics::new(), &mut st);
    assert!(matches!(&err, Err(Error::Numerical(m)) if m == "tree output NaN at row 5"), "{err:?}");
    let err = b.step_on_leaves(&[0, 1], &[0.5, -0.5], &mut h, &mut Diagnostics::new(), &mut st);
    assert!(matches!(&err, Err(Error::InvalidData(m)) if m.ends_with("examples but 2 leaves")), "{err:?}");
    assert_eq!(bits(&b.q), bits(&q0));
}

#[test]
fn non_finite_tree_output_names_its_row() {
    let y = vec![1.0, -1.0, 1.0, -1.0];
    let mut b = match TAdaBoost::new(&params(0.8), labels(&y, None)) {
        Ok(b) => b,
        Err(e) => panic!("{e}"),
    };
    let q = b.weights().to_vec();
    let err = b.step(&[0.5, f64::NAN, 0.5, f64::INFINITY], &mut Diagnostics::new());
    assert!(matches!(&err, Err(Error::Numerical(m)) if m == "tree output NaN at row 1"), "{err:?}");
    assert_eq!(b.weights(), &q[..], "a failed round leaves the weights as they were");
}

#[test]
fn parameters() {
    let p = TAdaBoostParams::default();
    assert!(p.check().is_ok());
    for bad in [-0.1, 2.0, f64::NAN, f64::INFINITY] {
        let p = TAdaBoostParams { t: bad, ..Default::default() };
        assert!(matches!(p.check(), Err(Error::InvalidParam { name: "t", .. })));
    }
    let json = serde_json::to_string(&p).unwrap_or_default();
    assert!(json.contains("\"leaf_values\":\"optimal\"") && json.contains("\"overflow\":\"fallback\""));
    let back: TAdaBoostParams = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, p);
    let partial: TAdaBoostParams =
        serde_json::from_str(r#"{"t": 0.6, "learner_weights": "co-density"}"#).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(partial.t, 0.6);
    assert_eq!(partial.learner_weights, LearnerWeights::CoDensity);

    let y = [1.0, -1.0];
    let b = TAdaBoost::new(&params(0.6), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.stat_width(), 2);
    assert_eq!(b.n_outputs(), 1);
    assert_eq!(b.default_criterion(), Criterion::Tempered { t: 0.6 });
    assert_eq!(b.leaf_rule(), LeafRule::Tempered { t: 0.6, link: TemperedLink::Optimal });
    assert_eq!(b.clip_delta(), Some(2.5));
    let b = TAdaBoost::new(&params(1.0 - 1e-10), labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.t(), 1.0);
    assert_eq!(b.clip_delta(), None);

    let p = TAdaBoostParams { t: 0.6, leaf_values: TemperedLink::Canonical, ..Default::default() };
    let b = TAdaBoost::new(&p, labels(&y, None)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b.leaf_rule(), LeafRule::Tempered { t: 0.6, link: TemperedLink::Canonical });

    // Bad labels.
    assert!(TAdaBoost::new(&p, labels(&[1.0, 0.0], None)).is_err());
    assert!(TAdaBoost::new(&p, Labels { n: 2, k: 2, y: &[1.0, -1.0, 1.0, -1.0], class: None, sample_weight: None })
        .is_err());
    assert!(TAdaBoost::new(&p, labels(&y, Some(&[0.0, 0.0]))).is_err());
    assert!(TAdaBoost::new(&p, labels(&y, Some(&[1.0, -1.0]))).is_err());
    assert!(TAdaBoost::new(&p, labels(&y, Some(&[1.0]))).is_err());
    assert!(TAdaBoost::new(&p, labels(&[], None)).is_err());
}

/// The passes' chunks: a sixteenth of the rows as a power of two within the bounds, so that small
/// data splits into several chunks and large data into chunks of the largest size.
#[test]
fn chunks_follow_the_row_count() {
    assert_eq!(chunk_len(0), 1024);
    assert_eq!(chunk_len(500), 1024);
    assert_eq!(chunk_len(10_000), 1024);
    assert_eq!(10_000usize.div_ceil(chunk_len(10_000)), 10);
    assert_eq!(chunk_len(20_000), 2048);
    assert_eq!(chunk_len(100_000), MAX_CHUNK);
    assert_eq!(chunk_len(1_000_000), MAX_CHUNK);
    let mut last = 0;
    for n in (0..300_000).step_by(977) {
        let c = chunk_len(n);
        assert!(c.is_power_of_two() && (1024..=MAX_CHUNK).contains(&c) && c >= last, "{n}: {c}");
        last = c;
    }
}

/// The general loop of the round's last pass (`finish_impl`) for one chunk, tempered, with
/// statistics, without sample weights or multiplicities: the reference of [`finish_plain`].
fn finish_reference(
    q: &mut [f64],
    qs: &mut [f64],
    st: &mut [f64],
    y: &[i8],
    (scale, scale_s, s, norm): (f64, f64, f64, f64),
) -> FinishSums {
    let mut p = FinishSums::default();
    for i in 0..q.len() {
        q[i] *= scale;
        qs[i] *= scale_s;
        if q[i] < f64::MIN_POSITIVE {
            q[i] = 0.0;
            qs[i] = 0.0;
        } else if !(qs[i] > 0.0 && qs[i].is_finite()) {
            qs[i] = q[i].powf(s);
        }
        let co = q[i] * qs[i];
        st[i] = stat_value(f64::from(y[i]), 1.0, q[i], norm);
        p.pmin = p.pmin.min(co);
        p.pmax = p.pmax.max(co);
        if co == 0.0 {
            p.n_zero += 1.0;
        }
    }
    p
}

/// The same value, NaN equal to NaN (a NaN's payload is not part of the contract).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// One build of the round's last pass over `(q, q^(1−t), statistics)`.
type LastPass<'a> = dyn Fn(&mut [f64], &mut [f64], &mut [f64]) -> FinishSums + 'a;

/// Runs the reference, the portable and the AVX2 (when the CPU has it) builds of the plain
/// last pass on copies of the same rows and checks that they agree: rows, statistics, range
/// and zero count.
fn check_plain_finish(q: &[f64], qs: &[f64], y: &[i8], consts: (f64, f64, f64, f64)) {
    let n = q.len();
    let run = |f: &LastPass<'_>| {
        let (mut q, mut qs, mut st) = (q.to_vec(), qs.to_vec(), vec![0.0; n]);
        let p = f(&mut q, &mut qs, &mut st);
        (q, qs, st, [p.pmin, p.pmax, p.n_zero])
    };
    let want = run(&|q, qs, st| finish_reference(q, qs, st, y, consts));
    let portable = run(&|q, qs, st| finish_plain_scalar((q, qs, st), y, consts));
    let fast = run(&|q, qs, st| finish_plain((q, qs, st), y, consts));
    for got in [&portable, &fast] {
        for (k, (a, b)) in [(&want.0, &got.0), (&want.1, &got.1), (&want.2, &got.2)].into_iter().enumerate() {
            for (i, (x, z)) in a.iter().zip(b.iter()).enumerate() {
                assert!(same(*x, *z), "array {k}, row {i} of {n}: {x:e} vs {z:e}");
            }
        }
        for (x, z) in want.3.iter().zip(&got.3) {
            assert!(same(*x, *z), "range or count: {:?} vs {:?}", want.3, got.3);
        }
    }
}

/// The vectorised last pass of a round gives the general loop's bits: weights a round's scale
/// sends to zero, to subnormals or keeps, cached powers that are zero, negative, infinite or NaN
/// (recomputed), every length around the groups of four.
#[test]
fn plain_finish_gives_the_general_bits() {
    let mut rng = ChaCha8Rng::seed_from_u64(2718);
    for n in 0..45 {
        for _ in 0..20 {
            let q: Vec<f64> = (0..n)
                .map(|_| match rng.gen_range(0..10) {
                    0 => 0.0,
                    1 => 1e-310,
                    2 => f64::MIN_POSITIVE,
                    _ => rng.gen_range(1e-9..1.0),
                })
                .collect();
            let qs: Vec<f64> = q
                .iter()
                .map(|&v| match rng.gen_range(0..12) {
                    0 => 0.0,
                    1 => -1.0,
                    2 => f64::INFINITY,
                    3 => f64::NAN,
                    _ => v.powf(0.2),
                })
                .collect();
            let y: Vec<i8> = (0..n).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect();
            let scale = rng.gen_range(0.5..3.0);
            let s = 0.2;
            check_plain_finish(&q, &qs, &y, (scale, scale.powf(s), s, rng.gen_range(0.5..2.0)));
        }
    }
}

proptest! {
    /// The vectorised last pass (its loads and stores are `unsafe`) is total and agrees with the
    /// general loop for arbitrary bit patterns — NaN, ±∞, subnormals, negative zeros — and lengths.
    #[test]
    fn plain_finish_is_total(
        rows in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<bool>()), 0..70),
        scale in any::<u64>(),
        norm in any::<u64>(),
    ) {
        let q: Vec<f64> = rows.iter().map(|r| f64::from_bits(r.0)).collect();
        let qs: Vec<f64> = rows.iter().map(|r| f64::from_bits(r.1)).collect();
        let y: Vec<i8> = rows.iter().map(|r| if r.2 { 1 } else { -1 }).collect();
        let (scale, norm) = (f64::from_bits(scale), f64::from_bits(norm));
        check_plain_finish(&q, &qs, &y, (scale, scale.abs().powf(0.3), 0.3, norm));
    }
}

/// Runs `update_chunk`'s integer-power kernel and its AVX2 twin on copies of the same chunk and
/// checks that every row (weights, powers, both models) and every sum agree bit for bit.
#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
fn check_power_int_update(
    q: &[f64],
    qs: &[f64],
    y: &[i8],
    h: &[f64],
    scores: &[f64],
    clipped: &[f64],
    (k, s, n_int, comeback, alpha, delta): (f64, f64, u32, bool, f64, f64),
    clip: bool,
) {
    if !crate::util::fastmath::avx2() {
        return;
    }
    let ctx = UpdateCtx {
        y,
        h,
        w: None,
        c: None,
        s,
        nu: 0.5,
        inv_umax: 1.0,
        r_rel: 1.0,
        k,
        inv_s: 1.0 / s,
        n_int,
        comeback,
        alpha,
        delta,
        uniform: 1.0 / q.len().max(1) as f64,
    };
    assert!(update_power_int_applies(KERNEL_POWER_INT, &ctx));
    let run = |fast: bool| {
        let (mut q, mut qs, mut sc, mut cl) = (q.to_vec(), qs.to_vec(), scores.to_vec(), clipped.to_vec());
        let p = match (fast, clip) {
            #[allow(unsafe_code)]
            // SAFETY: `update_power_int_applies` checked AVX2.
            (true, true) => unsafe {
                update_power_int_avx2::<true, [f64]>(&ctx, 0, (&mut q, &mut qs), (&mut sc, &mut cl))
            },
            #[allow(unsafe_code)]
            // SAFETY: as above.
            (true, false) => unsafe {
                update_power_int_avx2::<false, [f64]>(&ctx, 0, (&mut q, &mut qs), (&mut sc, &mut cl))
            },
            (false, true) => {
                update_chunk::<KERNEL_POWER_INT, true, [f64]>(&ctx, 0, (&mut q, &mut qs), (&mut sc, &mut cl))
            }
            (false, false) => {
                update_chunk::<KERNEL_POWER_INT, false, [f64]>(&ctx, 0, (&mut q, &mut qs), (&mut sc, &mut cl))
            }
        };
        let sums =
            [p.sum, p.qsum, p.qmax, p.n_inf as f64, p.inf_weight, p.err, p.err_clipped, p.clip_upper, p.clip_lower];
        (q, qs, sc, if clip { cl } else { Vec::new() }, sums)
    };
    let (want, got) = (run(false), run(true));
    for (name, a, b) in
        [("q", &want.0, &got.0), ("qs", &want.1, &got.1), ("scores", &want.2, &got.2), ("clipped", &want.3, &got.3)]
    {
        for (i, (x, z)) in a.iter().zip(b.iter()).enumerate() {
            assert!(same(*x, *z), "{name}[{i}] of {}: {x:e} vs {z:e}", q.len());
        }
    }
    for (i, (x, z)) in want.4.iter().zip(&got.4).enumerate() {
        assert!(same(*x, *z), "sum {i}: {:?} vs {:?}", want.4, got.4);
    }
}

/// The vectorised integer-power update gives `update_chunk`'s bits: weights that stay, switch off
/// (a non-positive power), come back or overflow, scores that cross zero, clipped scores beyond
/// ±δ, every length around the groups of four, with and without the clipped model.
#[cfg(target_arch = "x86_64")]
#[test]
fn power_int_update_gives_the_general_bits() {
    let mut rng = ChaCha8Rng::seed_from_u64(4242);
    for n in 0..41 {
        for rep in 0..12 {
            let q: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.15) { 0.0 } else { rng.gen_range(1e-6..1.0) }).collect();
            let qs: Vec<f64> = q.iter().map(|&v| if v == 0.0 { 0.0 } else { v.powf(0.2) }).collect();
            let y: Vec<i8> = (0..n).map(|_| if rng.gen_bool(0.5) { 1 } else { -1 }).collect();
            let h: Vec<f64> = (0..n).map(|_| rng.gen_range(-2.0..2.0)).collect();
            let scores: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let clipped: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.2..1.2)).collect();
            let k = rng.gen_range(-0.8..0.8);
            let (s, n_int) = if rep % 4 == 3 { (-0.5, 2) } else { (0.2, [1, 2, 5, 10][rep % 4]) };
            let consts = (k, s, n_int, rep % 2 == 1, rng.gen_range(-1.0..1.0), rng.gen_range(0.1..1.5));
            check_power_int_update(&q, &qs, &y, &h, &scores, &clipped, consts, rep % 3 != 0);
        }
    }
}

#[cfg(target_arch = "x86_64")]
proptest! {
    /// The vectorised integer-power update is total and agrees with `update_chunk` for arbitrary
    /// bit patterns — NaN, ±∞, subnormals, negative zeros — and lengths.
    #[test]
    fn power_int_update_is_total(
        rows in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>(), any::<bool>()), 0..40),
        k in any::<u64>(),
        alpha in any::<u64>(),
        delta in 0.0f64..10.0,
        n_int in 1u32..17,
        comeback in any::<bool>(),
        clip in any::<bool>(),
    ) {
        let col = |j: usize| -> Vec<f64> {
            rows.iter().map(|r| f64::from_bits([r.0, r.1, r.2, r.3, r.4][j])).collect()
        };
        let y: Vec<i8> = rows.iter().map(|r| if r.5 { 1 } else { -1 }).collect();
        let consts = (f64::from_bits(k), 0.2, n_int, comeback, f64::from_bits(alpha), delta);
        check_power_int_update(&col(0), &col(1), &y, &col(2), &col(3), &col(4), consts, clip);
    }
}
