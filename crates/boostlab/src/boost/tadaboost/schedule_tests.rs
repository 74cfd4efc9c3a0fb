//! A schedule of t over the rounds (`t_schedule`), and the co-density-preserving carry
//! of the weights across a change of t ([`TAdaBoost::retemper`]).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::boost::driver::{fit, fit_with_options, Algorithm, BoostParams};
use crate::boost::validation::{FitOptions, Validation};
use crate::data::{Column, Dataset, Features, Target};
use crate::model::Ensemble;

fn labels<'a>(y: &'a [f64], sw: Option<&'a [f64]>) -> Labels<'a> {
    Labels { n: y.len(), k: 1, y, class: None, sample_weight: sw }
}

/// `Σ cᵢ qᵢ^(2−t)` with the booster's multiplicities (all 1 without sample weights).
fn co_sum(b: &TAdaBoost) -> f64 {
    let e = 2.0 - b.t();
    b.q.iter().enumerate().map(|(i, q)| mult(b.c.as_deref(), i) * q.powf(e)).sum()
}

fn sched(s: &str) -> TSchedule {
    TSchedule::parse(s).expect("schedule")
}

/// A noisy binary problem on 3 numeric features on a grid (exact bins).
fn data(seed: u64, n: usize) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut cols = vec![Vec::new(); 3];
    let mut y = Vec::new();
    for _ in 0..n {
        let x: Vec<f64> = (0..3).map(|_| (rng.gen_range(-1.0..1.0f64) * 20.0).round() / 20.0).collect();
        let s = x[0] + 0.7 * x[1] * x[2] + rng.gen_range(-0.5..0.5);
        y.push(u32::from(s > 0.0));
        for (c, v) in cols.iter_mut().zip(x) {
            c.push(v);
        }
    }
    let features = Features {
        names: ["a", "b", "c"].iter().map(|s| s.to_string()).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    let target = Target::Classes { y, classes: vec!["n".into(), "p".into()] };
    Dataset::new(features, Some(target), None).expect("data")
}

fn tparams(n: usize, schedule: Option<&str>, t: f64) -> BoostParams {
    let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: n, seed: 3, ..BoostParams::default() };
    p.tree.max_leaves = 4;
    p.t_adaboost.t = t;
    p.t_adaboost.t_schedule = schedule.map(sched);
    p
}

#[test]
fn schedule_parses_checks_and_interpolates() {
    let s = sched("linear:0.2:1");
    assert_eq!(s, TSchedule::Linear { t0: 0.2, t1: 1.0, rounds: None });
    assert_eq!(s.to_string(), "linear:0.2:1");
    assert_eq!(sched(" linear : 0.5 : 1.5 : 4 ").to_string(), "linear:0.5:1.5:4");
    // t_j = T0 + (T1 − T0)(j − 1)/(N − 1), T1 from round N on.
    let want = [0.2, 0.4, 0.6000000000000001, 0.8, 1.0, 1.0];
    for (j, w) in want.iter().enumerate() {
        assert_eq!(s.t_at(j + 1, 5), *w, "round {}", j + 1);
    }
    let s4 = sched("linear:1:0:3");
    assert_eq!([s4.t_at(1, 100), s4.t_at(2, 100), s4.t_at(3, 100), s4.t_at(50, 100)], [1.0, 0.5, 0.0, 0.0]);
    assert_eq!(sched("linear:0.3:0.9").t_at(1, 1), 0.3);
    assert_eq!(sched("linear:0.3:0.9:1").t_at(2, 10), 0.9);
    for bad in
        ["", "linear:0.2", "cosine:0:1", "linear:0:2", "linear:-0.1:1", "linear:0:1:0", "linear:a:1", "linear:0:1:2:3"]
    {
        let e = TSchedule::parse(bad).unwrap_err().to_string();
        assert!(e.contains("t_schedule"), "{bad}: {e}");
    }
    // Serde: the same string form, in the parameters and in a model file.
    let json = serde_json::to_string(&s).expect("json");
    assert_eq!(json, "\"linear:0.2:1\"");
    assert_eq!(serde_json::from_str::<TSchedule>(&json).expect("back"), s);
    assert!(serde_json::from_str::<TSchedule>("\"linear:3:1\"").is_err());
    // Not with t = auto.
    let p = TAdaBoostParams { t_schedule: Some(s), auto_t: Some(Default::default()), ..Default::default() };
    assert!(p.check().unwrap_err().to_string().contains("t_schedule"));
}

#[test]
fn retemper_keeps_the_co_density_and_the_bound() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    for with_weights in [false, true] {
        for (t, t_new) in [(0.2, 0.9), (0.9, 0.2), (0.5, 1.0), (1.0, 0.4), (0.7, 1.6), (1.5, 0.0), (0.0, 1.9)] {
            let n = 300;
            let y: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 }).collect();
            let sw: Vec<f64> = (0..n).map(|i| if i % 17 == 0 { 0.0 } else { rng.gen_range(0.1..3.0) }).collect();
            let sw = with_weights.then_some(&sw[..]);
            let mut b = TAdaBoost::new(&TAdaBoostParams { t, ..Default::default() }, labels(&y, sw)).expect("booster");
            for _ in 0..4 {
                let h: Vec<f64> = y.iter().map(|&yi| (rng.gen_range(-2.0..2.0) + 0.6 * yi).clamp(-2.0, 2.0)).collect();
                b.step(&h, &mut Diagnostics::new()).expect("step");
            }
            let e = 2.0 - b.t();
            let p_before: Vec<f64> = b.q.iter().map(|q| q.powf(e)).collect();
            let bound = b.bound();
            b.retemper(t_new);
            let t_eff = if is_one(t_new) { 1.0 } else { t_new };
            assert_eq!(b.t(), t_eff);
            assert!((co_sum(&b) - 1.0).abs() <= 1e-12, "t {t} → {t_new}: Σ c q^(2−t') = {}", co_sum(&b));
            for (i, (q, p)) in b.q.iter().zip(&p_before).enumerate() {
                let p_after = q.powf(2.0 - t_eff);
                assert!(
                    (p_after - p).abs() <= 1e-12 * p.max(1e-300),
                    "t {t} → {t_new}, example {i}: p {p} → {p_after}"
                );
                assert_eq!(*q == 0.0, *p == 0.0);
            }
            assert!((b.bound() - bound).abs() <= 1e-12 * bound, "bound {bound} → {}", b.bound());
            // q^(1−t) is in step with q at the new t (the update's recurrence relies on it).
            if t_eff != 1.0 {
                for (q, qs) in b.q.iter().zip(&b.qs) {
                    let want = if *q > 0.0 { q.powf(1.0 - t_eff) } else { 0.0 };
                    assert!((want - qs).abs() <= 1e-12 * qs.max(1e-300), "q {q}: q^(1−t) {qs} vs {want}");
                }
            }
            assert_eq!(b.regime == Regime::Below, t_eff < 1.0);
        }
    }
}

#[test]
fn co_simplex_invariant_after_every_scheduled_change() {
    for (s, with_weights) in
        [("linear:0:1", false), ("linear:1:0", true), ("linear:0.3:1.5", false), ("linear:1.6:0.2:7", true)]
    {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let n = 400;
        let y: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 }).collect();
        let sw: Vec<f64> = (0..n).map(|_| rng.gen_range(0.0..2.0)).collect();
        let sw = with_weights.then_some(&sw[..]);
        let sch = sched(s);
        let p = TAdaBoostParams { t_schedule: Some(sch), ..Default::default() };
        let mut b = TAdaBoost::new(&p, labels(&y, sw)).expect("booster");
        let rounds = 12;
        b.set_schedule_rounds(rounds);
        assert_eq!(b.t(), sch.t_at(1, rounds));
        for j in 1..=rounds {
            let h: Vec<f64> = y.iter().map(|&yi| if rng.gen_bool(0.7) { yi } else { -yi }).collect();
            let mut diag = Diagnostics::new();
            let step = b.step(&h, &mut diag).expect("step");
            assert_eq!(diag["t"], if is_one(sch.t_at(j, rounds)) { 1.0 } else { sch.t_at(j, rounds) }, "{s} round {j}");
            if !matches!(step, Step::Add { .. }) {
                break;
            }
            // After the step and the change to the next round's t.
            let want_t = sch.t_at(j + 1, rounds);
            assert_eq!(b.t(), if is_one(want_t) { 1.0 } else { want_t });
            assert!((co_sum(&b) - 1.0).abs() <= 1e-12, "{s} after round {j}: {}", co_sum(&b));
            assert!(b.q.iter().all(|q| q.is_finite() && *q >= 0.0));
        }
        // The clipped model is that of the last temperature.
        let t1 = sch.end();
        assert_eq!(b.clip_delta(), (t1 < 1.0).then(|| 1.0 / (1.0 - t1)), "{s}");
    }
}

#[test]
fn constant_schedule_is_fixed_t_bit_for_bit() {
    let d = data(1, 300);
    for t in [0.0, 0.6, 1.0, 1.3] {
        let fixed = fit(&d, &tparams(15, None, t)).expect("fixed t");
        for s in [format!("linear:{t}:{t}"), format!("linear:{t}:{t}:4")] {
            let m = fit(&d, &tparams(15, Some(&s), 0.8)).expect("schedule");
            assert_eq!(m.trees, fixed.trees, "t = {t}, {s}");
            assert_eq!(
                m.alphas.iter().map(|a| a.to_bits()).collect::<Vec<_>>(),
                fixed.alphas.iter().map(|a| a.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(m.clip, fixed.clip);
            for (a, b) in m.history.iter().zip(&fixed.history) {
                let mut va = a.values.clone();
                assert_eq!(va.remove("t"), Some(t));
                assert_eq!(va, b.values, "t = {t}, round {}", a.round);
            }
        }
    }
}

#[test]
fn model_records_the_schedule_and_each_rounds_t() {
    let d = data(2, 300);
    let s = "linear:0.2:1";
    let m = fit(&d, &tparams(9, Some(s), 0.8)).expect("fit");
    assert_eq!(m.params.t_adaboost.t_schedule, Some(sched(s)));
    let ts: Vec<f64> = m.history.iter().map(|r| r.values["t"]).collect();
    assert_eq!(ts, (1..=9).map(|j| sched(s).t_at(j, 9)).collect::<Vec<_>>());
    assert_eq!(ts[0], 0.2);
    assert_eq!(ts[8], 1.0);
    // t_9 = 1: no clipped model.
    assert_eq!(m.clip, None);
    // Through a model file, and an old model file without the field still loads (no schedule).
    let back = Ensemble::from_json(&m.to_json().expect("json")).expect("back");
    assert_eq!(back, m);
    let fixed = fit(&d, &tparams(3, None, 0.6)).expect("fixed");
    let json = fixed.to_json().expect("json");
    assert!(!json.contains("t_schedule"));
    assert_eq!(Ensemble::from_json(&json).expect("old").params.t_adaboost.t_schedule, None);
    // A schedule and a fixed t differ once t changes.
    let other = fit(&d, &tparams(9, None, 0.2)).expect("t = 0.2");
    assert_eq!(other.trees[0], m.trees[0]);
    assert_ne!(other.alphas, m.alphas);
}

#[test]
fn clipped_model_uses_the_last_temperature() {
    let d = data(3, 300);
    for s in ["linear:1:0.5", "linear:0:0.6", "linear:1.4:0.3"] {
        let m = fit(&d, &tparams(12, Some(s), 0.8)).expect("fit");
        let t1 = sched(s).end();
        assert_eq!(m.clip, Some(1.0 / (1.0 - t1)), "{s}");
        // The training curve of the clipped model is that of the saved clipped model.
        let last = m.history.last().expect("rounds");
        let err = m.error_rate(&d, true).expect("error");
        assert!(
            (last.values["train_error_clipped"] - err).abs() < 1e-12,
            "{s}: {} vs {err}",
            last.values["train_error_clipped"]
        );
        let err_lin = m.error_rate(&d, false).expect("error");
        assert!((last.values["train_error"] - err_lin).abs() < 1e-12, "{s}");
    }
}

#[test]
fn schedule_warm_start_and_early_stopping() {
    let d = data(4, 300);
    // A fixed length: continuing gives the one-go model.
    let p = tparams(20, Some("linear:0.3:1:20"), 0.8);
    let one_go = fit(&d, &p).expect("one go");
    let first = fit(&d, &BoostParams { n_estimators: 8, ..p.clone() }).expect("8 rounds");
    let opts = FitOptions { init_model: Some(&first), ..FitOptions::default() };
    let continued = fit_with_options(&d, &p, None, opts, &mut |_| {}).expect("continued");
    assert_eq!(continued.to_json().expect("json"), one_go.to_json().expect("json"));
    // A length given by n_estimators: refused clearly.
    let p = tparams(20, Some("linear:0.3:1"), 0.8);
    let first = fit(&d, &BoostParams { n_estimators: 8, ..p.clone() }).expect("8 rounds");
    let opts = FitOptions { init_model: Some(&first), ..FitOptions::default() };
    let e = fit_with_options(&d, &p, None, opts, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("t_schedule") && e.contains("linear:T0:T1:N"), "{e}");
    // Early stopping: the kept trees are the full run's first ones, each round at its scheduled t.
    let p = tparams(40, Some("linear:0:1"), 0.8);
    let full = fit(&d, &p).expect("full");
    let held = data(5, 300);
    let valid = Validation { features: held.features.clone(), target: held.target.clone().expect("target") };
    let es = BoostParams { early_stopping_rounds: Some(3), ..p.clone() };
    let m = fit_with_options(&d, &es, None, FitOptions { valid: Some(&valid), ..FitOptions::default() }, &mut |_| {})
        .expect("early stopping");
    let kept = m.n_trees();
    assert!(kept < 40 && m.best_iteration == Some(kept - 1), "{kept}");
    assert_eq!(m.trees[..], full.trees[..kept]);
    assert_eq!(m.alphas[..], full.alphas[..kept]);
    for (a, b) in m.history.iter().zip(&full.history) {
        assert_eq!(a.values["t"], b.values["t"]);
    }
}
