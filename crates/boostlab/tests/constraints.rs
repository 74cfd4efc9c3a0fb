//! Monotone and interaction constraints (docs/how-to/constraints.md): every in-scope booster's
//! score is monotone in each constrained feature on random data with missing values, no tree
//! path mixes features of two interaction groups, the constraints bind, and wrong constraints are
//! parameter errors naming what is wrong.

use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::params::{FeatureKey, MonotoneConstraints};
use boostlab::tree::{Node, Tree};
use boostlab::{Algorithm, BoostParams, Ensemble, Error, Prediction};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The algorithms that take constraints.
fn in_scope() -> impl Iterator<Item = Algorithm> {
    Algorithm::ALL.iter().map(|&(_, a)| a).filter(|a| a.supports_constraints())
}

/// `d` numeric features in [0, 1) with 10% missing values; the label is a noisy, non-monotone
/// function of the first three (a bump in `f0`), with `classes` classes.
fn random_data(seed: u64, n: usize, d: usize, classes: u32) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cols: Vec<Vec<f64>> =
        (0..d).map(|_| (0..n).map(|_| if rng.gen_bool(0.1) { f64::NAN } else { rng.gen::<f64>() }).collect()).collect();
    let y: Vec<u32> = (0..n)
        .map(|i| {
            let v = |f: usize| if cols[f][i].is_nan() { 0.5 } else { cols[f][i] };
            let bump = (v(0) - 0.5).abs();
            let s = 1.0 - 2.0 * bump + 0.8 * v(1) - 0.6 * v(2) + 0.6 * rng.gen::<f64>();
            ((s / 2.4).clamp(0.0, 0.999) * f64::from(classes)) as u32
        })
        .collect();
    let features = Features {
        names: (0..d).map(|f| format!("f{f}")).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    let classes = (0..classes).map(|c| c.to_string()).collect();
    Dataset::new(features, Some(Target::Classes { y, classes }), None).unwrap()
}

fn params(algorithm: Algorithm, seed: u64) -> BoostParams {
    let mut p = BoostParams { algorithm, n_estimators: 12, seed, ..Default::default() };
    p.tree.max_leaves = if algorithm == Algorithm::AbstainingAdaBoost { 2 } else { 8 };
    p
}

/// For `points` random rows (other features drawn, 10% missing) and each feature with a
/// direction, the scores along a grid of the feature's values: the largest decrease against the
/// direction (0 for a monotone model), over every output.
fn worst_violation(model: &Ensemble, dirs: &[i8], points: usize, seed: u64) -> f64 {
    let d = dirs.len();
    let grid: Vec<f64> = (0..=24).map(|i| -0.02 + f64::from(i) / 23.0).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut worst: f64 = 0.0;
    for (f, &dir) in dirs.iter().enumerate().filter(|(_, &dir)| dir != 0) {
        let mut cols = vec![Vec::new(); d];
        for _ in 0..points {
            let x: Vec<f64> = (0..d).map(|_| if rng.gen_bool(0.1) { f64::NAN } else { rng.gen::<f64>() }).collect();
            for &g in &grid {
                for (j, c) in cols.iter_mut().enumerate() {
                    c.push(if j == f { g } else { x[j] });
                }
            }
        }
        let feats = Features {
            names: (0..d).map(|j| format!("f{j}")).collect(),
            columns: cols.into_iter().map(Column::Numeric).collect(),
        };
        let s = model.predict(&feats, &Prediction::scores()).unwrap();
        let k = s.len() / (points * grid.len());
        for p in s.chunks_exact(grid.len() * k) {
            for (a, b) in p.chunks_exact(k).zip(p.chunks_exact(k).skip(1)) {
                for (a, b) in a.iter().zip(b) {
                    worst = worst.max(f64::from(dir) * (a - b));
                }
            }
        }
    }
    worst
}

#[test]
fn every_booster_is_monotone_in_its_constrained_features() {
    // The five binary boosters and the two AdaBoost.MH.
    assert_eq!(in_scope().count(), 7);
    for seed in 0..3u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(100 + seed);
        let dirs: Vec<i8> = (0..4).map(|_| rng.gen_range(-1..=1)).collect();
        let dirs = if dirs.iter().all(|&d| d == 0) { vec![1, -1, 0, 0] } else { dirs };
        for algorithm in in_scope() {
            let classes = if algorithm.is_binary() { 2 } else { 3 };
            let data = random_data(seed, 600, 4, classes);
            let mut p = params(algorithm, seed);
            p.tree.monotone_constraints =
                Some(MonotoneConstraints::Dense(dirs.iter().map(|&d| f64::from(d)).collect()));
            let model = boostlab::Trainer::new(&p).fit(&data).unwrap();
            let worst = worst_violation(&model, &dirs, 40, seed);
            // Not vacuous: the trees split on constrained features (Real AdaBoost.MH's smoothed
            // leaves move the labels' scores apart, so one direction for every label rarely admits
            // a split on an informative feature; it is held to monotonicity all the same).
            let constrained_splits = model
                .trees
                .iter()
                .flat_map(|t| &t.nodes)
                .filter(|n| matches!(n, Node::Split { feature, .. } if dirs[*feature as usize] != 0))
                .count();
            assert!(
                constrained_splits > 0 || algorithm == Algorithm::RealAdaBoostMH,
                "{} seed {seed}: no split on a constrained feature",
                algorithm.name()
            );
            assert!(
                worst == 0.0,
                "{} seed {seed} directions {dirs:?}: the score moves against a direction by {worst}",
                algorithm.name()
            );
        }
    }
}

#[test]
fn monotone_constraint_binds_where_the_free_model_is_not_monotone() {
    // The label is a bump in f0: a free model goes up then down in f0.
    let data = random_data(7, 800, 3, 2);
    for algorithm in [Algorithm::RealAdaBoost, Algorithm::AdaBoostMH] {
        let data = if algorithm.is_binary() { data.clone() } else { random_data(7, 800, 3, 3) };
        let free = boostlab::Trainer::new(&params(algorithm, 1)).fit(&data).unwrap();
        assert!(
            worst_violation(&free, &[1, 0, 0], 30, 1) > 0.0,
            "{}: the free model is already monotone",
            algorithm.name()
        );
        assert!(
            worst_violation(&free, &[-1, 0, 0], 30, 1) > 0.0,
            "{}: the free model is already monotone",
            algorithm.name()
        );
        let mut p = params(algorithm, 1);
        p.tree.monotone_constraints = Some(MonotoneConstraints::ByName([("f0".to_string(), 1.0)].into()));
        let up = boostlab::Trainer::new(&p).fit(&data).unwrap();
        assert_eq!(worst_violation(&up, &[1, 0, 0], 30, 1), 0.0, "{}", algorithm.name());
        // The constrained model still splits on f0.
        let uses_f0 = up.trees.iter().any(|t| t.nodes.iter().any(|n| matches!(n, Node::Split { feature: 0, .. })));
        assert!(uses_f0, "{}: the constrained model never splits on f0", algorithm.name());
    }
}

/// The features of every root-to-leaf path of `tree`.
fn paths(tree: &Tree) -> Vec<Vec<usize>> {
    fn walk(t: &Tree, i: usize, path: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        match &t.nodes[i] {
            Node::Leaf { .. } => out.push(path.clone()),
            Node::Split { feature, left, right, .. } => {
                path.push(*feature as usize);
                walk(t, *left as usize, path, out);
                walk(t, *right as usize, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, 0, &mut Vec::new(), &mut out);
    out
}

#[test]
fn no_tree_path_mixes_features_of_two_interaction_groups() {
    // Groups {f0, f1} and {f2, f3}; f4 is in no group: used only alone on a path.
    let groups: Vec<Vec<usize>> = vec![vec![0, 1], vec![2, 3], vec![4]];
    for algorithm in [Algorithm::RealAdaBoost, Algorithm::TAdaBoost, Algorithm::SecBoost, Algorithm::RealAdaBoostMH] {
        let data = random_data(3, 800, 5, if algorithm.is_binary() { 2 } else { 3 });
        let mut p = params(algorithm, 3);
        p.n_estimators = 10;
        p.tree.interaction_constraints = Some(vec![
            vec![FeatureKey::Name("f0".into()), FeatureKey::Index(1)],
            vec![FeatureKey::Index(2), FeatureKey::Name("f3".into())],
        ]);
        let model = boostlab::Trainer::new(&p).fit(&data).unwrap();
        let mut mixed_within_a_group = false;
        for tree in &model.trees {
            for path in paths(tree) {
                assert!(
                    groups.iter().any(|g| path.iter().all(|f| g.contains(f))),
                    "{}: a path splits on {path:?}",
                    algorithm.name()
                );
                mixed_within_a_group |= path.iter().any(|&f| f != path[0]);
            }
        }
        assert!(mixed_within_a_group, "{}: no path uses two features (the test would be vacuous)", algorithm.name());
        // Without the constraint the same fit mixes groups (the constraint binds).
        p.tree.interaction_constraints = None;
        let free = boostlab::Trainer::new(&p).fit(&data).unwrap();
        let mixes =
            free.trees.iter().flat_map(paths).any(|path| !groups.iter().any(|g| path.iter().all(|f| g.contains(f))));
        assert!(mixes, "{}: the free model never mixes groups", algorithm.name());
    }
}

#[test]
fn constrained_fit_is_bit_identical_for_1_and_2_threads() {
    let data = random_data(11, 3000, 4, 2);
    let mut p = params(Algorithm::RealAdaBoost, 2);
    p.tree.monotone_constraints = Some(MonotoneConstraints::Dense(vec![1.0, -1.0, 0.0, 1.0]));
    p.tree.interaction_constraints = Some(vec![vec![FeatureKey::Index(0), FeatureKey::Index(1), FeatureKey::Index(2)]]);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| serde_json::to_string(&boostlab::Trainer::new(&p).fit(&data).unwrap()).unwrap())
    };
    assert!(run(1) == run(2), "models differ between 1 and 2 threads");
}

fn fit_error(p: &BoostParams, data: &Dataset) -> String {
    match boostlab::Trainer::new(p).fit(data) {
        Err(e @ Error::InvalidParam { .. }) => e.to_string(),
        Err(e) => panic!("not a parameter error: {e}"),
        Ok(_) => panic!("the constraints were accepted"),
    }
}

#[test]
fn wrong_constraints_are_parameter_errors_naming_the_problem() {
    let data = random_data(5, 200, 3, 2);
    let with = |m: MonotoneConstraints| {
        let mut p = params(Algorithm::AdaBoost, 0);
        p.tree.monotone_constraints = Some(m);
        p
    };
    let e = fit_error(&with(MonotoneConstraints::Dense(vec![1.0, 0.0])), &data);
    assert!(e.contains("monotone_constraints") && e.contains("3 features") && e.contains("2 directions"), "{e}");
    let e = fit_error(&with(MonotoneConstraints::Dense(vec![1.0, 2.0, 0.0])), &data);
    assert!(e.contains("-1, 0 or 1 for feature 1") && e.contains("got 2"), "{e}");
    let e = fit_error(&with(MonotoneConstraints::ByName([("nope".to_string(), 1.0)].into())), &data);
    assert!(e.contains("unknown feature 'nope'") && e.contains("f0, f1, f2"), "{e}");
    let mut p = params(Algorithm::AdaBoost, 0);
    p.tree.interaction_constraints = Some(vec![vec![FeatureKey::Index(0), FeatureKey::Index(9)]]);
    let e = fit_error(&p, &data);
    assert!(e.contains("interaction_constraints") && e.contains("below 3"), "{e}");
    // A categorical feature has no order.
    let mut cat = data.features.clone();
    cat.names.push("colour".into());
    cat.columns.push(Column::Categorical {
        codes: (0..200).map(|i| i % 3).collect(),
        levels: vec!["r".into(), "g".into(), "b".into()],
    });
    let cat = Dataset::new(cat, data.target.clone(), None).unwrap();
    let e = fit_error(&with(MonotoneConstraints::ByName([("colour".to_string(), -1.0)].into())), &cat);
    assert!(e.contains("categorical feature 'colour'"), "{e}");
    // Algorithms where the constraint cannot be made exact are refused by name.
    for algorithm in [Algorithm::AdaBoostMO, Algorithm::RealAdaBoostMO, Algorithm::AdaBoostMR, Algorithm::AdaBoostM2] {
        let mut p = with(MonotoneConstraints::Dense(vec![1.0, 0.0, 0.0]));
        p.algorithm = algorithm;
        let e = fit_error(&p, &random_data(5, 200, 3, 3));
        assert!(e.contains("monotone_constraints") && e.contains(algorithm.name()), "{e}");
    }
}

#[test]
fn models_without_constraints_keep_their_json() {
    // Nothing new is written for a model without constraints, and a model's parameters without
    // the fields load (older files).
    let p = BoostParams::default();
    let json = serde_json::to_value(&p).unwrap();
    assert!(json["tree"].get("monotone_constraints").is_none());
    assert!(json["tree"].get("interaction_constraints").is_none());
    let back: BoostParams = serde_json::from_value(json).unwrap();
    assert_eq!(back.tree.monotone_constraints, None);
    let mut p = BoostParams::default();
    p.tree.monotone_constraints = Some(MonotoneConstraints::ByName([("x1".to_string(), -1.0)].into()));
    p.tree.interaction_constraints = Some(vec![vec![FeatureKey::Name("x1".into()), FeatureKey::Index(2)]]);
    let back: BoostParams = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
    assert_eq!(back.tree, p.tree);
}
