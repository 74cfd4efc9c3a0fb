//! Cancellation (training, prediction, contributions, ONNX export), absurd parameters and a property test over hostile
//! numbers (extreme weights, temperatures, duplicated rows, constant features, a one-row class,
//! unseen categories): no panic, no NaN or infinity in any model or prediction.

use std::time::{Duration, Instant};

use boostlab::boost::multiclass::{CodeMatrix, MAX_CODE_COLUMNS};
use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams, Cancel, Ensemble, Error, Trainer};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

fn data(seed: u64, n: usize, n_features: usize) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cols: Vec<Vec<f64>> = (0..n_features).map(|_| (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()).collect();
    let y = (0..n)
        .map(|i| u32::from(cols[0][i] + 0.5 * cols[1 % n_features][i] + rng.gen_range(-0.5..0.5) > 0.0))
        .collect();
    Dataset::new(
        Features {
            names: (0..n_features).map(|j| format!("x{j}")).collect(),
            columns: cols.into_iter().map(Column::Numeric).collect(),
        },
        Some(Target::Classes { y, classes: vec!["a".into(), "b".into()] }),
        None,
    )
    .unwrap()
}

#[test]
fn a_cancelled_flag_stops_before_the_first_round() {
    let d = data(1, 200, 3);
    let c = Cancel::new();
    c.cancel();
    let r = Trainer::new(&BoostParams::default()).cancel(&c).on_round(&mut |_| panic!("no round runs")).fit(&d);
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
}

#[test]
fn on_round_can_stop_the_fit_and_a_fresh_flag_changes_nothing() {
    let d = data(2, 300, 3);
    let p = BoostParams { n_estimators: 20, ..Default::default() };
    let c = Cancel::new();
    let mut rounds = Vec::new();
    let r = Trainer::new(&p)
        .cancel(&c)
        .on_round(&mut |r| {
            rounds.push(r.round);
            if r.round == 3 {
                c.cancel();
            }
        })
        .fit(&d);
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    assert_eq!(rounds, vec![1, 2, 3]);
    // An unset flag: bit-identical to the plain fit.
    let a = fit(&d, &p).unwrap();
    let b = Trainer::new(&p).cancel(&Cancel::new()).fit(&d).unwrap();
    assert_eq!(a.to_json().unwrap(), b.to_json().unwrap());
}

#[test]
fn cancel_from_another_thread_stops_within_a_node() {
    // Big trees on 100k rows for up to 1e12 rounds: only the flag can end this fit (and no buffer
    // may be sized by n_estimators).
    let d = data(3, 100_000, 8);
    let mut p =
        BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 1_000_000_000_000, ..Default::default() };
    p.tree.max_leaves = 1_000_000_000; // limited by the data, not preallocated
    let c = Cancel::new();
    let flag = c.clone();
    let start = Instant::now();
    let mut rounds = 0;
    let r = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.cancel();
        });
        Trainer::new(&p).cancel(&c).on_round(&mut |_| rounds += 1).fit(&d)
    });
    let took = start.elapsed();
    assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    eprintln!("cancelled after {took:?} and {rounds} rounds");
}

#[test]
fn prediction_checks_the_flag_between_row_blocks() {
    let d = data(4, 3000, 3);
    let m = fit(&d, &BoostParams { n_estimators: 5, ..Default::default() }).unwrap();
    let c = Cancel::new();
    let s = m.predict(&d.features, &Prediction::scores().cancel(&c)).unwrap();
    assert_eq!(s, m.predict(&d.features, &Prediction::scores()).unwrap());
    c.cancel();
    assert!(matches!(m.predict(&d.features, &Prediction::scores().cancel(&c)), Err(Error::Cancelled)));
}

#[test]
fn contributions_stop_when_the_flag_is_set_from_another_thread() {
    // Exact contributions of a 64-leaf, 100-tree model cost about a millisecond per row: these
    // 20,000 rows take seconds, and the flag set after 100 ms must end the call well before that.
    let d = data(5, 20_000, 8);
    let mut p = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 100, ..Default::default() };
    p.tree.max_leaves = 64;
    let m = fit(&d, &p).unwrap();
    let c = Cancel::new();
    let flag = c.clone();
    let start = Instant::now();
    let r = std::thread::scope(|s| {
        s.spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            flag.cancel();
        });
        m.predict(&d.features, &Prediction::new(boostlab::Output::Contributions).cancel(&c))
    });
    let took = start.elapsed();
    assert!(matches!(r, Err(Error::Cancelled)), "contributions ran to the end: {:?}", r.map(|v| v.len()));
    assert!(took < Duration::from_secs(2), "stopped after {took:?}");
    // A fresh flag changes nothing.
    let few = Features {
        names: d.features.names.clone(),
        columns: d
            .features
            .columns
            .iter()
            .map(|c| match c {
                Column::Numeric(v) => Column::Numeric(v[..50].to_vec()),
                other => panic!("numeric data, got {other:?}"),
            })
            .collect(),
    };
    let request = Prediction::new(boostlab::Output::Contributions);
    assert_eq!(m.predict(&few, &request.cancel(&Cancel::new())).unwrap(), m.predict(&few, &request).unwrap());
}

#[cfg(feature = "onnx")]
#[test]
fn onnx_export_stops_when_the_flag_is_set() {
    let d = data(6, 300, 3);
    let m = fit(&d, &BoostParams { n_estimators: 5, ..Default::default() }).unwrap();
    let c = Cancel::new();
    assert_eq!(m.to_onnx_cancellable(false, Some(&c)).unwrap(), m.to_onnx(false).unwrap());
    c.cancel();
    assert!(matches!(m.to_onnx_cancellable(false, Some(&c)), Err(Error::Cancelled)));
}

/// The naive random code draw (a linear scan for duplicates): the hashed draw must give
/// the same codes.
fn naive_random_code(k: usize, columns: usize, seed: u64) -> Vec<Vec<i8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut cols: Vec<Vec<i8>> = Vec::new();
    while cols.len() < columns {
        let col: Vec<i8> = (0..k).map(|_| if rng.gen::<bool>() { 1 } else { -1 }).collect();
        let constant = col.iter().all(|&e| e == col[0]);
        let dup = cols.iter().any(|c| c == &col || c.iter().zip(&col).all(|(a, b)| *a == -*b));
        if !constant && !dup {
            cols.push(col);
        }
    }
    cols
}

#[test]
fn random_codes_are_drawn_in_linear_time_and_bounded() {
    for (k, cols, seed) in [(5, 10, 0), (10, 100, 3), (26, 300, 7)] {
        let code = CodeMatrix::random(k, cols, seed).unwrap();
        let naive = naive_random_code(k, cols, seed);
        for (c, col) in naive.iter().enumerate() {
            for (y, &e) in col.iter().enumerate() {
                assert_eq!(code.codeword(y)[c], e, "k {k}, column {c}, class {y}");
            }
        }
    }
    let start = Instant::now();
    let e = CodeMatrix::random(26, 10_000_000, 0).unwrap_err();
    assert!(e.to_string().contains("random:K with 5 ≤ K ≤ 4095"), "{e}");
    assert!(CodeMatrix::random(26, MAX_CODE_COLUMNS, 0).is_ok());
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}", start.elapsed());
}

#[test]
fn absurd_parameters_are_clear_errors() {
    let d = data(5, 100, 2);
    let mut p = BoostParams { max_bins: 1_000_000_000, ..Default::default() };
    let e = fit(&d, &p).unwrap_err().to_string();
    assert_eq!(e, "invalid parameter `max_bins`: expected an integer in 2..=65535, got 1000000000");
    p.max_bins = 255;
    p.n_estimators = 0;
    assert_eq!(
        fit(&d, &p).unwrap_err().to_string(),
        "invalid parameter `n_estimators`: expected an integer ≥ 1, got 0"
    );
    // A million categories in a column: more levels than bins.
    let n = 1_000_000;
    let levels: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    let codes: Vec<u32> = (0..n as u32).collect();
    let y: Vec<u32> = (0..n as u32).map(|i| i % 2).collect();
    let big = Dataset::new(
        Features { names: vec!["cat".into()], columns: vec![Column::Categorical { codes, levels }] },
        Some(Target::Classes { y, classes: vec!["0".into(), "1".into()] }),
        None,
    )
    .unwrap();
    let e = fit(&big, &BoostParams::default()).unwrap_err().to_string();
    assert!(e.contains("1000000 categories") || e.contains("1000000 levels"), "{e}");
}

// ------------------------------------------------------------------------------------------------
// The property test.

const LOSSES: &[&str] = &[
    "logistic",
    "exponential",
    "square",
    "hinge",
    "zero-one",
    "clipped-logistic:q=-2",
    "spring:Q=500",
    "tempered:t=0.5",
];

#[derive(Debug, Clone)]
struct Case {
    algorithm: Algorithm,
    t: f64,
    loss: usize,
    leaves: usize,
    n_levels: usize,
    rows: Vec<(f64, u32, u32, f64)>, // (x, category, class, weight exponent)
    dup: usize,
    classes: u32,
    tempered_criterion: bool,
}

fn case() -> impl Strategy<Value = Case> {
    let algos = prop::sample::select(Algorithm::ALL.iter().map(|a| a.1).collect::<Vec<_>>());
    (algos, 0.0..1.99f64, 0..LOSSES.len(), 2usize..9, 2usize..=255, 0usize..4, any::<bool>()).prop_flat_map(
        |(algorithm, t, loss, leaves, n_levels, dup, tempered_criterion)| {
            let classes = if algorithm.is_binary() { 2 } else { 3 };
            let row = (-3.0..3.0f64, 0..n_levels as u32, 0..classes, -300.0..300.0f64);
            prop::collection::vec(row, 6..40).prop_map(move |rows| Case {
                algorithm,
                t,
                loss,
                leaves,
                n_levels,
                rows,
                dup,
                classes,
                tempered_criterion,
            })
        },
    )
}

fn build(c: &Case) -> (Dataset, Features, BoostParams) {
    let mut rows = c.rows.clone();
    // Duplicated rows, and every class present with the last one on a single row.
    let copies: Vec<_> = rows.iter().take(c.dup).cloned().collect();
    rows.extend(copies);
    for r in rows.iter_mut() {
        r.2 = r.2.min(c.classes - 2);
    }
    rows[0].2 = c.classes - 1; // the one-row class
    for k in 0..c.classes - 1 {
        rows[1 + k as usize].2 = k;
    }
    let n = rows.len();
    let levels: Vec<String> = (0..c.n_levels).map(|i| format!("L{i}")).collect();
    let features = Features {
        names: vec!["x".into(), "constant".into(), "cat".into()],
        columns: vec![
            Column::Numeric(rows.iter().map(|r| r.0).collect()),
            Column::Numeric(vec![7.0; n]),
            Column::Categorical { codes: rows.iter().map(|r| r.1).collect(), levels: levels.clone() },
        ],
    };
    let w: Vec<f64> = rows.iter().map(|r| 10f64.powf(r.3)).collect();
    let classes = (0..c.classes).map(|k| format!("k{k}")).collect();
    let y = rows.iter().map(|r| r.2).collect();
    let d = Dataset::new(features, Some(Target::Classes { y, classes }), Some(w)).unwrap();
    // Prediction data: the same numbers and categories never seen in training.
    let mut plevels = levels;
    plevels.push("unseen-1".into());
    plevels.push("unseen-2".into());
    let m = plevels.len() as u32;
    let pf = Features {
        names: d.features.names.clone(),
        columns: vec![
            Column::Numeric((0..n).map(|i| -4.0 + i as f64).collect()),
            Column::Numeric(vec![-7.0; n]),
            Column::Categorical { codes: (0..n as u32).map(|i| i % m).collect(), levels: plevels },
        ],
    };
    let mut p = BoostParams { algorithm: c.algorithm, n_estimators: 8, ..Default::default() };
    p.tree.max_leaves = c.leaves;
    p.t_adaboost.t = c.t;
    if c.tempered_criterion && c.algorithm != Algorithm::AbstainingAdaBoost {
        p.tree.criterion = Some(boostlab::tree::Criterion::Tempered { t: c.t });
    }
    p.secboost.loss = LOSSES[c.loss].parse().unwrap();
    if LOSSES[c.loss] == "zero-one" {
        // The 0/1 loss needs h0 ≠ 0 (README), and an offset v0 that crosses its step.
        p.secboost.h0 = 0.5;
        p.secboost.v0 = 1.0;
    }
    (d, pf, p)
}

fn check_finite(m: &Ensemble, f: &Features) {
    assert!(m.alphas.iter().all(|a| a.is_finite()), "α {:?}", m.alphas);
    for t in &m.trees {
        assert!(t.leaf_values.iter().all(|v| v.is_finite()), "leaves {:?}", t.leaf_values);
    }
    for clipped in [false, true] {
        let s = m.predict(f, &Prediction::scores().clipped(clipped)).unwrap();
        assert!(s.iter().all(|v| v.is_finite()), "scores {s:?}");
        let p = m.proba_from_scores(&s);
        assert!(p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)), "proba {p:?}");
    }
    let back = Ensemble::from_json(&m.to_json().unwrap()).unwrap();
    assert_eq!(back.predict(f, &Prediction::scores()).unwrap(), m.predict(f, &Prediction::scores()).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn hostile_numbers_give_finite_models_or_clear_errors(c in case()) {
        let (d, pf, p) = build(&c);
        match fit(&d, &p) {
            Ok(m) => check_finite(&m, &pf),
            // A refusal is fine when it names the problem; a panic or a NaN is not.
            Err(e @ (Error::InvalidData(_) | Error::InvalidParam { .. } | Error::Numerical(_))) => {
                let msg = e.to_string();
                prop_assert!(!msg.is_empty());
                eprintln!("{:?} t={:.3} loss={}: {msg}", c.algorithm, c.t, LOSSES[c.loss]);
            }
            Err(e) => prop_assert!(false, "unexpected error {e:?}"),
        }
    }
}
