//! Importances against a recount and a hand-checked case, TreeSHAP against brute-force
//! Shapley values and the raw scores, margins against a naive computation.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::*;
use crate::boost::driver::{fit, Algorithm, BoostParams};
use crate::data::{read_csv_from, CsvOptions, FeatureKind};
use crate::model::Schema;
use crate::tree::test_support::{random_columns, random_kinds, random_tree};
use crate::tree::Tree;
use crate::{Output, Prediction};

/// Data with a categorical feature (with missing values) and NaN, labels in `n_classes` classes.
fn data(n_classes: usize, n: usize) -> Dataset {
    let mut text = String::from("a,b,c,e,label\n");
    for i in 0..n {
        let a = (i * 7 % 23) as f64 / 3.0;
        let b = ["x", "y", "z", "", "w"][i % 5];
        let c = if i % 11 == 0 { String::new() } else { format!("{}", (i * 13 % 17) as f64 - 8.5) };
        let e = (i * 5 % 19) as f64;
        let s = a + if b == "y" { 3.0 } else { 0.0 } + if c.is_empty() { 1.0 } else { 0.0 } + (i % 3) as f64;
        let y = (s as usize / 3) % n_classes;
        text.push_str(&format!("{a},{b},{c},{e},k{y}\n"));
    }
    read_csv_from(text.as_bytes(), "x.csv", &CsvOptions::default()).unwrap()
}

/// Every model kind: binary boosters, SecBoost (with a base score), t-AdaBoost, MH, MO, MR, M2.
fn fitted(max_leaves: usize, max_depth: Option<usize>) -> Vec<(Algorithm, Dataset, Ensemble)> {
    let mut out = Vec::new();
    for (algorithm, n_classes) in [
        (Algorithm::AdaBoost, 2),
        (Algorithm::RealAdaBoost, 2),
        (Algorithm::AbstainingAdaBoost, 2),
        (Algorithm::TAdaBoost, 2),
        (Algorithm::SecBoost, 2),
        (Algorithm::RealAdaBoostMH, 3),
        (Algorithm::AdaBoostMH, 3),
        (Algorithm::AdaBoostMO, 3),
        (Algorithm::RealAdaBoostMO, 4),
        (Algorithm::AdaBoostMR, 3),
        (Algorithm::AdaBoostM2, 3),
    ] {
        let d = data(n_classes, 300);
        let mut p = BoostParams { algorithm, n_estimators: 8, ..Default::default() };
        p.tree.max_leaves = max_leaves;
        p.tree.max_depth = max_depth;
        if algorithm == Algorithm::SecBoost {
            p.secboost.h0 = 0.3;
        }
        let m = fit(&d, &p).unwrap_or_else(|e| panic!("{algorithm:?}: {e}"));
        out.push((algorithm, d, m));
    }
    out
}

/// `E[f(x) | x_S]` of one tree under the path-dependent rule: follow the row where the split's
/// feature is in `s`, else average the children by cover.
fn naive_conditional(tree: &Tree, node: usize, columns: &[Column], row: usize, s: u32, k: usize) -> Vec<f64> {
    match &tree.nodes[node] {
        Node::Leaf { leaf } => tree.leaf_values[*leaf as usize * k..(*leaf as usize + 1) * k].to_vec(),
        Node::Split { feature, left, right, .. } => {
            if s >> feature & 1 == 1 {
                let next = if tree.goes_left(node, columns, row) { *left } else { *right };
                naive_conditional(tree, next as usize, columns, row, s, k)
            } else {
                let (l, r) = (*left as usize, *right as usize);
                let (cl, cr, c) = (tree.covers[l], tree.covers[r], tree.covers[node]);
                let vl = naive_conditional(tree, l, columns, row, s, k);
                let vr = naive_conditional(tree, r, columns, row, s, k);
                vl.iter().zip(&vr).map(|(a, b)| (cl * a + cr * b) / c).collect()
            }
        }
    }
}

/// Brute-force Shapley values of the ensemble at `row`, `(d + 1) × k` (bias last), by
/// enumerating every feature subset.
fn naive_shapley(m: &Ensemble, columns: &[Column], row: usize) -> Vec<f64> {
    let d = m.schema.names.len();
    let k = m.n_outputs;
    let v = |s: u32| -> Vec<f64> {
        let mut out = vec![m.base_score; k];
        for (tree, &a) in m.trees.iter().zip(&m.alphas) {
            for (o, x) in out.iter_mut().zip(naive_conditional(tree, 0, columns, row, s, k)) {
                *o += a * x;
            }
        }
        out
    };
    let fact = |n: usize| (1..=n).map(|x| x as f64).product::<f64>();
    let mut phi = vec![0.0; (d + 1) * k];
    for i in 0..d {
        for s in 0u32..(1 << d) {
            if s >> i & 1 == 1 {
                continue;
            }
            let size = s.count_ones() as usize;
            let w = fact(size) * fact(d - size - 1) / fact(d);
            let (with, without) = (v(s | 1 << i), v(s));
            for o in 0..k {
                phi[i * k + o] += w * (with[o] - without[o]);
            }
        }
    }
    phi[d * k..].copy_from_slice(&v(0));
    phi
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

/// Random positive covers, consistent (a split's cover is its children's sum).
fn with_random_covers(mut tree: Tree, rng: &mut ChaCha8Rng) -> Tree {
    let leaves: Vec<u32> = (0..tree.n_leaves()).map(|_| rng.gen_range(1..20)).collect();
    let rows: Vec<u32> =
        leaves.iter().enumerate().flat_map(|(l, &c)| std::iter::repeat_n(l as u32, c as usize)).collect();
    tree.record_covers(&rows, None);
    tree
}

#[test]
fn treeshap_equals_brute_force_shapley_on_random_trees() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for trial in 0..60 {
        let d = rng.gen_range(1..=6);
        let kinds = random_kinds(&mut rng, d, 0.3);
        let k = [1, 1, 2, 3][trial % 4];
        let schema = Schema {
            names: (0..d).map(|f| format!("f{f}")).collect(),
            kinds: kinds.clone(),
            levels: kinds
                .iter()
                .map(|kind| (*kind == FeatureKind::Categorical).then(|| (0..12).map(|l| format!("l{l}")).collect()))
                .collect(),
        };
        let task = if k == 1 {
            Task::Binary { classes: vec!["a".into(), "b".into()] }
        } else {
            Task::Multiclass { classes: (0..k).map(|c| format!("c{c}")).collect() }
        };
        let mut m = Ensemble::new(schema, task, BoostParams::default(), k);
        m.base_score = rng.gen_range(-1.0..1.0);
        for _ in 0..rng.gen_range(1..4) {
            // Depth ≤ 3 needs ≤ 8 leaves; random shapes can be deeper, which only makes the check harder.
            let n_leaves = rng.gen_range(1..=8);
            let tree = with_random_covers(random_tree(&mut rng, &kinds, n_leaves, k), &mut rng);
            m.push(tree, rng.gen_range(-1.5..1.5));
        }
        let columns = random_columns(&mut rng, &kinds, 40);
        let mut out = vec![0.0; 40 * (d + 1) * k];
        m.contributions_into(&columns, false, &mut out, None).unwrap();
        let mut scores = vec![0.0; 40 * k];
        m.decision_function_into(&columns, None, false, &mut scores).unwrap();
        for row in 0..40 {
            let phi = &out[row * (d + 1) * k..(row + 1) * (d + 1) * k];
            let want = naive_shapley(&m, &columns, row);
            assert!(close(phi, &want, 1e-9), "trial {trial} row {row}: {phi:?} vs {want:?}");
            for o in 0..k {
                let sum: f64 = (0..=d).map(|j| phi[j * k + o]).sum();
                assert!((sum - scores[row * k + o]).abs() <= 1e-9, "trial {trial} row {row}: sum {sum}");
            }
        }
    }
}

#[test]
fn contributions_of_every_model_kind_sum_to_the_raw_score_and_match_brute_force() {
    // Depth ≤ 3, 4 features (with a categorical one, NaN and missing categories).
    for (algorithm, d, m) in fitted(6, Some(3)) {
        let cols = m.align(&d.features).unwrap();
        let n = d.features.n_rows();
        let (nf, k) = (m.schema.names.len(), m.n_outputs);
        let phi = m.predict(&d.features, &Prediction::new(Output::Contributions)).unwrap();
        let scores = m.predict(&d.features, &Prediction::scores()).unwrap();
        for row in 0..n {
            let p = &phi[row * (nf + 1) * k..(row + 1) * (nf + 1) * k];
            for o in 0..k {
                let sum: f64 = (0..=nf).map(|j| p[j * k + o]).sum();
                assert!((sum - scores[row * k + o]).abs() <= 1e-9, "{algorithm:?} row {row} output {o}");
            }
            if row % 7 == 0 {
                let want = naive_shapley(&m, &cols, row);
                assert!(close(p, &want, 1e-9), "{algorithm:?} row {row}: {p:?} vs {want:?}");
            }
        }
        if algorithm == Algorithm::SecBoost {
            assert_eq!(m.base_score, 0.3);
        }
    }
}

#[test]
fn contributions_are_bit_identical_across_thread_counts_and_refuse_the_clipped_model() {
    let d = data(2, 1500);
    let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 10, ..Default::default() };
    p.tree.max_leaves = 8;
    let m = fit(&d, &p).unwrap();
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| m.predict(&d.features, &Prediction::new(Output::Contributions)).unwrap())
    };
    let one: Vec<u64> = run(1).iter().map(|x| x.to_bits()).collect();
    let two: Vec<u64> = run(2).iter().map(|x| x.to_bits()).collect();
    assert_eq!(one, two);
    let e = m.predict(&d.features, &Prediction::new(Output::Contributions).clipped(true)).unwrap_err().to_string();
    assert!(e.contains("not additive"), "{e}");
    // A model without covers (written by an older version) is refused with the reason.
    let mut old = m.clone();
    old.trees.iter_mut().for_each(|t| t.covers.clear());
    let e = old.predict(&d.features, &Prediction::new(Output::Contributions)).unwrap_err().to_string();
    assert!(e.contains("no recorded covers"), "{e}");
}

/// Split counts and gains recounted by walking each tree from its root.
fn naive_importance(m: &Ensemble) -> (Vec<f64>, Vec<f64>) {
    let nf = m.schema.names.len();
    let (mut split, mut gain) = (vec![0.0; nf], vec![0.0; nf]);
    for tree in &m.trees {
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if let Node::Split { feature, left, right, .. } = &tree.nodes[i] {
                split[*feature as usize] += 1.0;
                gain[*feature as usize] += tree.gains[i];
                stack.extend([*left as usize, *right as usize]);
            }
        }
    }
    (split, gain)
}

#[test]
fn importances_equal_a_recount_from_the_trees_and_sum_to_one() {
    for (algorithm, _, m) in fitted(5, None) {
        let (split, gain) = naive_importance(&m);
        assert_eq!(m.feature_importance_raw(ImportanceKind::Split), split, "{algorithm:?}");
        assert!(close(&m.feature_importance_raw(ImportanceKind::Gain), &gain, 1e-12), "{algorithm:?}");
        for kind in [ImportanceKind::Split, ImportanceKind::Gain] {
            let v = m.feature_importance(kind);
            assert!((v.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{algorithm:?} {kind:?}: {v:?}");
            assert!(v.iter().all(|x| *x >= 0.0));
        }
        // Gains are ≥ 0 at splits (an empirical-risk split may leave the risk unchanged), 0 at
        // leaves, and positive somewhere.
        let mut total = 0.0;
        for tree in &m.trees {
            assert_eq!(tree.gains.len(), tree.nodes.len());
            for (node, g) in tree.nodes.iter().zip(&tree.gains) {
                assert!(*g >= 0.0 && (matches!(node, Node::Split { .. }) || *g == 0.0), "{algorithm:?}");
                total += g;
            }
        }
        assert!(total > 0.0, "{algorithm:?}");
    }
}

#[test]
fn gains_of_the_textbook_example_are_hand_checked() {
    // docs/explanation/adaboost.md#adaboost-discrete: x = 1..10, y = (+,+,+,−,−,−,+,+,+,−), stumps on the empirical risk 2·min(W+, W−).
    // Round 1 (weights 1/10): parent 2·0.4 = 0.8; x < 3.5 leaves (0.3, 0) and (0.3, 0.4):
    // children 0 + 0.6, gain 0.2. Round 2 (1/14 right, 1/6 wrong): W+ = 5/7, W− = 2/7, parent
    // 4/7; x < 9.5 leaves (5/7, 3/14) and (0, 1/14): children 3/7, gain 1/7. A second feature,
    // the constant 0, is never split on.
    let mut text = String::from("x,z,label\n");
    for (x, y) in (1..=10).zip(["+", "+", "+", "-", "-", "-", "+", "+", "+", "-"]) {
        text.push_str(&format!("{x},0,{y}\n"));
    }
    let d = read_csv_from(text.as_bytes(), "t.csv", &CsvOptions::default()).unwrap();
    let m = fit(&d, &BoostParams { n_estimators: 3, ..Default::default() }).unwrap();
    assert!((m.trees[0].gains[0] - 0.2).abs() < 1e-12, "{:?}", m.trees[0].gains);
    assert!((m.trees[1].gains[0] - 1.0 / 7.0).abs() < 1e-12, "{:?}", m.trees[1].gains);
    assert_eq!(m.feature_importance(ImportanceKind::Split), vec![1.0, 0.0]);
    assert_eq!(m.feature_importance(ImportanceKind::Gain), vec![1.0, 0.0]);
    // Covers: 3 | 7 examples at round 1's leaves, 9 | 1 at round 2's.
    assert_eq!(m.trees[0].covers, vec![10.0, 3.0, 7.0]);
    assert_eq!(m.trees[1].covers, vec![10.0, 9.0, 1.0]);
    // A hand-built two-feature ensemble: gains 3 and 1 on feature 1, 4 on feature 0.
    let split = |feature, left, right| Node::Split {
        feature,
        rule: crate::tree::SplitRule::Numeric { threshold: 0.5, bin_threshold: 0, missing_left: false },
        left,
        right,
    };
    let leaf = |leaf| Node::Leaf { leaf };
    let mut t1 = Tree::new(vec![split(1, 1, 2), split(0, 3, 4), leaf(0), leaf(1), leaf(2)], 1, vec![1.0, -1.0, 1.0]);
    t1.gains = vec![3.0, 4.0, 0.0, 0.0, 0.0];
    let mut t2 = Tree::new(vec![split(1, 1, 2), leaf(0), leaf(1)], 1, vec![1.0, -1.0]);
    t2.gains = vec![1.0, 0.0, 0.0];
    let mut hand = m.clone();
    hand.trees = vec![t1, t2];
    hand.alphas = vec![0.5, 0.25];
    assert_eq!(hand.feature_importance(ImportanceKind::Split), vec![1.0 / 3.0, 2.0 / 3.0]);
    assert_eq!(hand.feature_importance(ImportanceKind::Gain), vec![0.5, 0.5]);
    // Trees without gains (older models) count 0.
    hand.trees.iter_mut().for_each(|t| t.gains.clear());
    assert_eq!(hand.feature_importance(ImportanceKind::Gain), vec![0.0, 0.0]);
}

#[test]
fn margins_equal_a_naive_computation() {
    for (algorithm, d, m) in fitted(4, None) {
        let rounds: Vec<usize> = vec![1, m.n_trees().div_ceil(2), m.n_trees()];
        let got = m.margins(&d, &rounds).unwrap();
        let cols = m.align(&d.features).unwrap();
        let n = d.features.n_rows();
        let k = m.n_outputs;
        let Target::Classes { y, classes } = d.target().unwrap() else { unreachable!() };
        for (r, g) in rounds.iter().zip(&got) {
            let mut s = vec![0.0; n * k];
            m.decision_function_into(&cols, Some(*r), false, &mut s).unwrap();
            let mut norm = m.base_score.abs();
            for t in 0..*r {
                let hmax = m.trees[t].leaf_values.iter().map(|v| v.abs()).fold(0.0, f64::max);
                norm += m.alphas[t].abs() * hmax;
            }
            let mut want = Vec::new();
            for i in 0..n {
                let c = m.task.names().iter().position(|x| *x == classes[y[i] as usize]).unwrap();
                for o in 0..k {
                    let sign = match &m.output {
                        Some(MultiOutput::Code { code, .. }) => f64::from(code.codeword(c)[o]),
                        _ if k == 1 => {
                            if c == 1 {
                                1.0
                            } else {
                                -1.0
                            }
                        }
                        _ => {
                            if c == o {
                                1.0
                            } else {
                                -1.0
                            }
                        }
                    };
                    want.push(sign * s[i * k + o] / norm);
                }
            }
            want.sort_by(f64::total_cmp);
            assert!(close(g, &want, 1e-12), "{algorithm:?} round {r}");
            assert!(g.iter().all(|x| (-1.0 - 1e-12..=1.0 + 1e-12).contains(x)), "{algorithm:?}");
            // The CDF at θ counts margins ≤ θ.
            let theta = 0.1;
            let naive = want.iter().filter(|&&x| x <= theta).count() as f64 / want.len() as f64;
            assert_eq!(margin_cdf(g, theta), naive);
        }
        assert!(m.margins(&d, &[0]).is_err() && m.margins(&d, &[m.n_trees() + 1]).is_err());
    }
}

#[test]
fn models_without_gains_and_covers_still_load() {
    let (_, d, m) = fitted(4, None).swap_remove(1);
    let mut v: serde_json::Value = serde_json::from_str(&m.to_json().unwrap()).unwrap();
    for t in v["trees"].as_array_mut().unwrap() {
        let t = t.as_object_mut().unwrap();
        assert!(t.remove("gains").is_some() && t.remove("covers").is_some());
    }
    let old = Ensemble::from_json(&v.to_string()).unwrap();
    assert_eq!(
        old.predict(&d.features, &Prediction::scores()).unwrap(),
        m.predict(&d.features, &Prediction::scores()).unwrap()
    );
    assert_eq!(old.feature_importance(ImportanceKind::Split), m.feature_importance(ImportanceKind::Split));
    assert!(old.feature_importance(ImportanceKind::Gain).iter().all(|x| *x == 0.0));
    assert!(old
        .predict(&d.features, &Prediction::new(Output::Contributions))
        .unwrap_err()
        .to_string()
        .contains("no recorded covers"));
    // Hostile covers are refused when loading.
    let mut bad: serde_json::Value = serde_json::from_str(&m.to_json().unwrap()).unwrap();
    bad["trees"][0]["covers"] = serde_json::json!([1.0]);
    assert!(Ensemble::from_json(&bad.to_string()).unwrap_err().to_string().contains("covers"));
}
