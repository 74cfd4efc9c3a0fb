//! `--monotone` and `--interaction` through the binary: the model keeps the constraints (its
//! score along a constrained column never moves against the direction; no path mixes groups),
//! the parameters reach the model, and wrong constraints are refused by name.

use crate::support::run;
use boostlab::tree::{Node, Tree};
use boostlab::Prediction;
use std::path::{Path, PathBuf};

/// Columns `age`, `income`, `debt` (some missing) and a label that is a bump in `age`.
fn write_bump(dir: &Path) -> PathBuf {
    let mut s = String::from("age,income,debt,label\n");
    for i in 0..400u64 {
        let age = (i * 37 % 101) as f64 / 100.0;
        let income = (i * 13 % 17) as f64 / 16.0;
        let debt = if i % 11 == 0 { String::new() } else { format!("{}", (i * 29 % 23) as f64 / 22.0) };
        let y = u8::from((age - 0.5f64).abs() < 0.25) ^ u8::from(i % 9 == 0);
        s.push_str(&format!("{age},{income},{debt},{y}\n"));
    }
    let p = dir.join("bump.csv");
    std::fs::write(&p, s).unwrap();
    p
}

fn paths(t: &Tree, i: usize, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
    match &t.nodes[i] {
        Node::Leaf { .. } => out.push(path.clone()),
        Node::Split { feature, left, right, .. } => {
            path.push(*feature);
            paths(t, *left as usize, path, out);
            paths(t, *right as usize, path, out);
            path.pop();
        }
    }
}

#[test]
fn monotone_and_interaction_flags_constrain_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_bump(dir.path());
    let model = dir.path().join("m.json");
    let (ok, _, se) = run(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--algo",
        "real-adaboost",
        "--rounds",
        "15",
        "--max-leaves",
        "6",
        "--monotone",
        "age:1,debt:-1",
        "--interaction",
        "age,income;debt",
        "--model",
        model.to_str().unwrap(),
    ]);
    assert!(ok, "{se}");
    let m = boostlab::Ensemble::load(&model).unwrap();
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    assert_eq!(json["params"]["tree"]["monotone_constraints"], serde_json::json!({"age": 1.0, "debt": -1.0}));
    assert_eq!(json["params"]["tree"]["interaction_constraints"], serde_json::json!([["age", "income"], ["debt"]]));
    // Along `age` (income and debt fixed, debt sometimes missing) the score never decreases.
    let grid: Vec<f64> = (0..=40).map(|i| f64::from(i) / 40.0).collect();
    let mut text = String::from("age,income,debt,label\n");
    for (income, debt) in [(0.1, "0.2"), (0.9, ""), (0.5, "0.7")] {
        for a in &grid {
            text.push_str(&format!("{a},{income},{debt},0\n"));
        }
    }
    let grid_csv = dir.path().join("grid.csv");
    std::fs::write(&grid_csv, text).unwrap();
    let ds = boostlab::data::read_csv(&grid_csv, &Default::default()).unwrap();
    let s = m.predict(&ds.features, &Prediction::scores()).unwrap();
    for line in s.chunks_exact(grid.len()) {
        assert!(line.windows(2).all(|w| w[0] <= w[1]), "the score decreases along age: {line:?}");
    }
    assert!(m.trees.iter().any(|t| t.nodes.iter().any(|n| matches!(n, Node::Split { feature: 0, .. }))));
    for t in &m.trees {
        let mut out = Vec::new();
        paths(t, 0, &mut Vec::new(), &mut out);
        for p in out {
            assert!(p.iter().all(|&f| f <= 1) || p.iter().all(|&f| f == 2), "a path mixes groups: {p:?}");
        }
    }
}

#[test]
fn wrong_constraint_flags_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let data = write_bump(dir.path());
    let d = data.to_str().unwrap();
    let fails_with = |args: &[&str], want: &str| {
        let (ok, _, se) = run(args);
        assert!(!ok && se.contains(want), "{args:?}: {se}");
    };
    fails_with(&["train", "--data", d, "--monotone", "age:2"], "-1, 0 or 1 for feature 'age'");
    fails_with(&["train", "--data", d, "--monotone", "height:1"], "unknown feature 'height'");
    fails_with(&["train", "--data", d, "--monotone", "1,0"], "one direction per feature (3 features)");
    fails_with(&["train", "--data", d, "--monotone", "age=1"], "monotone_constraints");
    fails_with(&["train", "--data", d, "--interaction", "age;;debt"], "interaction_constraints");
    fails_with(&["train", "--data", d, "--interaction", "age,height"], "unknown feature 'height'");
}
