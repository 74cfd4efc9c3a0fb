//! Distributed training through the `Collective` seam. For every booster, on data with
//! a categorical feature, missing values and sample weights, split into uneven shards over 2 and
//! 3 in-process ranks ([`ThreadCollective`], one shard empty in one case): the same trees as the
//! single-machine fit on the same rows (splits exactly), α and leaf values within 1e−9 relative
//! (sums over ranks are taken in another order than the single machine's: last-bit differences,
//! amplified by at most a few orders over the rounds), the same predicted classes; every rank
//! returns the same model, and two distributed runs are bit-identical. A collective that fails
//! mid-fit gives a clean error on every rank.

use std::sync::Arc;
use std::time::Duration;

use boostlab::collective::{Collective, CountingCollective, FailingCollective, ThreadCollective};
use boostlab::data::{
    merge_summaries, shard_summaries, shard_summaries_parts, summaries_from_bytes, summaries_to_bytes, weight_prefix,
    BinMapper, BinnedData, Column, ColumnView, Dataset, Features, ShardSpec, Target, MISSING_CODE,
};
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams, Ensemble, Result, Trainer};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` rows: 3 numeric features (one with 15 % missing, one with ties), a categorical one with 5
/// levels and missing codes; labels with 2 or 3 classes from a noisy rule; sample weights in
/// [0, 3) with some zeros.
fn data(seed: u64, n: usize, classes: usize) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x0: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let x1: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.15) { f64::NAN } else { rng.gen_range(-1.0..1.0) }).collect();
    let x2: Vec<f64> = (0..n).map(|_| f64::from(rng.gen_range(0..20)) / 4.0).collect();
    let cat: Vec<u32> = (0..n).map(|_| if rng.gen_bool(0.1) { MISSING_CODE } else { rng.gen_range(0..5) }).collect();
    let y: Vec<u32> = (0..n)
        .map(|i| {
            let c = if cat[i] == MISSING_CODE { 0.3 } else { [0.5, -0.5, 0.2, -0.1, 0.0][cat[i] as usize] };
            let s =
                x0[i] + if x1[i].is_nan() { -0.2 } else { 0.7 * x1[i] } + c + 0.1 * x2[i] + rng.gen_range(-0.5..0.5);
            if classes == 2 {
                u32::from(s > 0.2)
            } else if s < -0.2 {
                0
            } else if s < 0.6 {
                1
            } else {
                2
            }
        })
        .collect();
    let w: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.05) { 0.0 } else { rng.gen_range(0.0..3.0) }).collect();
    let features = Features {
        names: vec!["x0".into(), "x1".into(), "x2".into(), "cat".into()],
        columns: vec![
            Column::Numeric(x0),
            Column::Numeric(x1),
            Column::Numeric(x2),
            Column::Categorical { codes: cat, levels: (0..5).map(|i| format!("c{i}")).collect() },
        ],
    };
    let names = ["a", "b", "c"][..classes].iter().map(|s| s.to_string()).collect();
    Dataset::new(features, Some(Target::Classes { y, classes: names }), Some(w)).unwrap()
}

/// Shard `r` of `cuts`: rows `cuts[r]..cuts[r + 1]` binned with the full data's mapper.
fn shard(full: &BinnedData, d: &Dataset, rows: std::ops::Range<usize>) -> BinnedData {
    let part = d.subset(&rows.collect::<Vec<_>>());
    let bins = full.mapper.transform(&part.features).unwrap();
    BinnedData::new(full.schema.clone(), full.mapper.clone(), bins, part.target.unwrap(), part.sample_weight).unwrap()
}

/// One fit per rank, over a [`ThreadCollective`] of `cuts.len() − 1` ranks; `wrap` may wrap a
/// rank's collective (counting, failing).
fn distributed(
    d: &Dataset,
    params: &BoostParams,
    cuts: &[usize],
    wrap: &(dyn Fn(usize, boostlab::collective::ThreadRank) -> Arc<dyn Collective> + Sync),
) -> Vec<Result<Ensemble>> {
    let full = BinnedData::from_dataset(d, params.max_bins).unwrap();
    let shards: Vec<BinnedData> = cuts.windows(2).map(|c| shard(&full, d, c[0]..c[1])).collect();
    let ranks = ThreadCollective::ranks(shards.len(), Duration::from_secs(60));
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .into_iter()
            .zip(&shards)
            .enumerate()
            .map(|(r, (rank, data))| {
                let coll = wrap(r, rank);
                s.spawn(move || Trainer::new(params).collective(coll).fit_binned(data))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn plain(_: usize, r: boostlab::collective::ThreadRank) -> Arc<dyn Collective> {
    Arc::new(r)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs())
}

fn bits(m: &Ensemble) -> String {
    // The model file: every number with its exact bits (serde_json float_roundtrip).
    serde_json::to_string(m).unwrap()
}

/// The distributed model `got` against the single machine's `want`.
fn assert_same_model(what: &str, got: &Ensemble, want: &Ensemble, d: &Dataset) {
    assert_eq!(got.n_trees(), want.n_trees(), "{what}: number of trees");
    assert!(want.n_trees() >= 3, "{what}: the test needs several rounds");
    for (j, (a, b)) in got.trees.iter().zip(&want.trees).enumerate() {
        assert_eq!(a.nodes, b.nodes, "{what}: tree {j} splits");
        // Relative to the tree's largest leaf value: a leaf value near 0 (a cancellation, e.g.
        // 6e-5 among leaves of order 1) differs in its 10th digit from sums taken in another order.
        let scale = b.leaf_values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (x, y) in a.leaf_values.iter().zip(&b.leaf_values) {
            assert!(
                x == y || (x - y).abs() <= 1e-9 * scale,
                "{what}: tree {j} leaf value {x} vs {y} (largest {scale})"
            );
        }
        for (x, y) in a.covers.iter().zip(&b.covers) {
            assert!(close(*x, *y, 1e-9), "{what}: tree {j} cover {x} vs {y}");
        }
        for (x, y) in a.gains.iter().zip(&b.gains) {
            assert!(close(*x, *y, 1e-6) || (x - y).abs() < 1e-12, "{what}: tree {j} gain {x} vs {y}");
        }
    }
    for (j, (x, y)) in got.alphas.iter().zip(&want.alphas).enumerate() {
        assert!(close(*x, *y, 1e-9), "{what}: α of round {j}: {x} vs {y}");
    }
    assert!(close(got.base_score, want.base_score, 1e-9), "{what}: base score");
    assert_eq!(got.clip, want.clip, "{what}: clip level");
    let clipped = want.clip.is_some();
    let (a, b) = (
        got.predict(&d.features, &Prediction::scores().clipped(clipped)).unwrap(),
        want.predict(&d.features, &Prediction::scores().clipped(clipped)).unwrap(),
    );
    let k = got.n_outputs;
    for (i, (x, y)) in a.chunks(k).zip(b.chunks(k)).enumerate() {
        for (p, q) in x.iter().zip(y) {
            assert!((p - q).abs() <= 1e-9 * q.abs().max(1.0), "{what}: row {i} score {p} vs {q}");
        }
        let arg = |v: &[f64]| v.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1)).map(|p| p.0);
        if k == 1 {
            assert_eq!(x[0] > 0.0, y[0] > 0.0, "{what}: row {i} predicted class");
        } else {
            assert_eq!(arg(x), arg(y), "{what}: row {i} predicted class");
        }
    }
    for (ra, rb) in got.history.iter().zip(&want.history) {
        for (key, v) in &rb.values {
            let g = ra.values.get(key).copied().unwrap_or(f64::NAN);
            assert!(close(g, *v, 1e-8) || (g - v).abs() < 1e-12, "{what}: round {} {key}: {g} vs {v}", rb.round);
        }
    }
}

/// Fits `params` on 2 and 3 ranks (uneven shards; one empty) and checks the models.
fn check(what: &str, params: &BoostParams, classes: usize) {
    let n = 500;
    let d = data(13, n, classes);
    let want = Trainer::new(params)
        .fit_binned(&BinnedData::from_dataset(&d, params.max_bins).unwrap())
        .unwrap_or_else(|e| panic!("{what}: single machine: {e}"));
    for cuts in [vec![0, 130, n], vec![0, 0, 310, n], vec![0, 40, 77, n]] {
        let what = format!("{what}, shards {cuts:?}");
        let run = distributed(&d, params, &cuts, &plain);
        let models: Vec<Ensemble> = run.into_iter().map(|m| m.unwrap_or_else(|e| panic!("{what}: {e}"))).collect();
        for m in &models[1..] {
            assert_eq!(bits(m), bits(&models[0]), "{what}: every rank holds the same model");
        }
        assert_same_model(&what, &models[0], &want, &d);
        let again = distributed(&d, params, &cuts, &plain);
        assert_eq!(bits(again[0].as_ref().unwrap()), bits(&models[0]), "{what}: two runs are bit-identical");
    }
}

fn params(algorithm: Algorithm) -> BoostParams {
    let mut p = BoostParams { algorithm, n_estimators: 8, ..Default::default() };
    p.tree.max_leaves = 8;
    p
}

#[test]
fn adaboost_discrete_and_real_distributed_equal_single_machine() {
    check("adaboost", &params(Algorithm::AdaBoost), 2);
    check("real-adaboost", &params(Algorithm::RealAdaBoost), 2);
    let mut p = params(Algorithm::RealAdaBoost);
    p.adaboost.alpha = Some(boostlab::boost::adaboost::AlphaRule::LineSearch);
    check("real-adaboost, line search", &p, 2);
    let mut p = params(Algorithm::AdaBoost);
    p.tree.grow_order = boostlab::tree::GrowOrder::Count;
    check("adaboost, count order", &p, 2);
}

/// Constraints read only the reduced sums: the ranks grow the single machine's trees.
#[test]
fn constrained_fit_distributed_equals_single_machine() {
    use boostlab::params::{FeatureKey, MonotoneConstraints};
    for (algorithm, classes) in [(Algorithm::RealAdaBoost, 2), (Algorithm::RealAdaBoostMH, 3)] {
        let mut p = params(algorithm);
        p.tree.monotone_constraints = Some(MonotoneConstraints::Dense(vec![1.0, -1.0, 0.0, 0.0]));
        p.tree.interaction_constraints = Some(vec![
            vec![FeatureKey::Index(0), FeatureKey::Index(1)],
            vec![FeatureKey::Index(2), FeatureKey::Index(3)],
        ]);
        check(&format!("{}, constrained", algorithm.name()), &p, classes);
    }
}

#[test]
fn t_adaboost_distributed_equal_single_machine() {
    let mut p = params(Algorithm::TAdaBoost);
    p.t_adaboost.t = 0.8;
    // t < 1: the model is clipped (δ = 1/(1 − t)); the clipped scores are compared too.
    check("t-adaboost t = 0.8", &p, 2);
    let mut co = p.clone();
    co.t_adaboost.learner_weights = boostlab::boost::tadaboost::LearnerWeights::CoDensity;
    check("t-adaboost t = 0.8, co-density", &co, 2);
    // A t schedule: every rank retempers alike (the renormaliser summed over the ranks).
    let mut sch = p.clone();
    sch.t_adaboost.t_schedule = Some(boostlab::boost::tadaboost::TSchedule::parse("linear:0.4:1.2:6").unwrap());
    check("t-adaboost linear:0.4:1.2:6", &sch, 2);
    sch.t_adaboost.t_schedule = Some(boostlab::boost::tadaboost::TSchedule::parse("linear:1.5:0.6").unwrap());
    check("t-adaboost linear:1.5:0.6", &sch, 2);
    // The authors' preset: count growth order, pure leaves forbidden, a seeded candidate cap and
    // random tie-breaking (every random choice seeded per node from the summed histograms).
    let mut authors = BoostParams::with_preset(boostlab::boost::preset::Preset::Authors);
    authors.algorithm = Algorithm::TAdaBoost;
    authors.n_estimators = 8;
    authors.tree.max_leaves = 8;
    authors.tree.max_split_candidates = Some(40);
    authors.t_adaboost.t = 0.6;
    check("t-adaboost t = 0.6, authors' preset, 40 candidates", &authors, 2);
}

#[test]
fn secboost_distributed_equal_single_machine() {
    for loss in ["logistic", "tempered:t=0.5"] {
        let mut p = params(Algorithm::SecBoost);
        p.secboost.loss = loss.parse().unwrap();
        check(&format!("secboost {loss}"), &p, 2);
    }
    // The paper's Solve_α (one reduction per trial α) and the certified one on a β-smooth loss
    // (the closed-form α refused by the certificate falls back to Solve_α).
    let mut p = params(Algorithm::SecBoost);
    p.secboost.loss = "square".parse().unwrap();
    p.secboost.solve_alpha = boostlab::boost::secboost::SolveAlphaRule::Paper;
    check("secboost square, paper's Solve_α", &p, 2);
}

#[test]
fn multiclass_distributed_equal_single_machine() {
    for algo in [
        Algorithm::AdaBoostMH,
        Algorithm::RealAdaBoostMH,
        Algorithm::AdaBoostMO,
        Algorithm::AdaBoostMR,
        Algorithm::AdaBoostM2,
    ] {
        check(algo.name(), &params(algo), 3);
    }
}

/// A rank whose collective fails at its 6th call: every rank's fit ends with an error naming
/// the problem (the failing rank's own, the others' "rank 1 left"), no hang, no panic.
#[test]
fn a_failing_collective_fails_every_rank_cleanly() {
    let d = data(13, 300, 2);
    let p = params(Algorithm::RealAdaBoost);
    let fail = |r: usize, rank: boostlab::collective::ThreadRank| -> Arc<dyn Collective> {
        if r == 1 {
            Arc::new(FailingCollective::new(rank, 5))
        } else {
            Arc::new(rank)
        }
    };
    let t = std::time::Instant::now();
    let run = distributed(&d, &p, &[0, 100, 200, 300], &fail);
    assert!(t.elapsed() < Duration::from_secs(30), "no waiting for the timeout");
    let errs: Vec<String> = run.into_iter().map(|r| r.unwrap_err().to_string()).collect();
    assert!(errs[1].contains("peer lost (simulated at call 5)"), "{errs:?}");
    for e in [&errs[0], &errs[2]] {
        assert!(e.starts_with("distributed training: rank 1 left"), "{errs:?}");
    }
}

#[test]
fn refused_options_are_errors() {
    let d = data(13, 100, 2);
    let mut p = params(Algorithm::AbstainingAdaBoost);
    p.tree.max_leaves = 2;
    let run = distributed(&d, &p, &[0, 50, 100], &plain);
    assert!(run[0].as_ref().unwrap_err().to_string().contains("abstaining-adaboost is not supported"));
}

/// The number of allreduce calls and f64 values per round, per booster, for 8-leaf trees on 28
/// numeric features with 255 bins (printed for docs/explanation/distributed.md; asserted for the tree).
#[test]
fn communication_per_round() {
    let n = 3000;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let cols: Vec<Vec<f64>> = (0..28).map(|_| (0..n).map(|_| rng.gen_range(0.0..1.0)).collect()).collect();
    let y: Vec<u32> =
        (0..n).map(|i| u32::from(cols[0][i] + cols[1][i] * cols[2][i] + rng.gen_range(-0.3..0.3) > 0.8)).collect();
    let y3: Vec<u32> = (0..n).map(|i| y[i] + u32::from(cols[3][i] > 0.6)).collect();
    let features = Features {
        names: (0..28).map(|f| format!("f{f}")).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    let binary =
        Dataset::new(features.clone(), Some(Target::Classes { y, classes: vec!["a".into(), "b".into()] }), None)
            .unwrap();
    let multi = Dataset::new(
        features,
        Some(Target::Classes { y: y3, classes: vec!["a".into(), "b".into(), "c".into()] }),
        None,
    )
    .unwrap();
    let mut rows = Vec::new();
    for (name, algo, t, d) in [
        ("adaboost", Algorithm::AdaBoost, None, &binary),
        ("real-adaboost", Algorithm::RealAdaBoost, None, &binary),
        ("t-adaboost t=0.8", Algorithm::TAdaBoost, Some(0.8), &binary),
        ("secboost logistic", Algorithm::SecBoost, None, &binary),
        ("adaboost-mh (3 classes)", Algorithm::AdaBoostMH, None, &multi),
        ("real-adaboost-mh (3 classes)", Algorithm::RealAdaBoostMH, None, &multi),
        ("adaboost-mo (3 classes)", Algorithm::AdaBoostMO, None, &multi),
        ("adaboost-mr (3 classes)", Algorithm::AdaBoostMR, None, &multi),
        ("adaboost-m2 (3 classes)", Algorithm::AdaBoostM2, None, &multi),
    ] {
        let mut p = params(algo);
        p.n_estimators = 5;
        // The boosting loop's own traffic (calibration's fold fits would add theirs).
        p.calibration = boostlab::params::CalibrationParams::none();
        if let Some(t) = t {
            p.t_adaboost.t = t;
        }
        let counters: Vec<Arc<CountingCollective<boostlab::collective::ThreadRank>>> = Vec::new();
        let counters = std::sync::Mutex::new(counters);
        let wrap = |_: usize, r: boostlab::collective::ThreadRank| -> Arc<dyn Collective> {
            let c = Arc::new(CountingCollective::new(r));
            counters.lock().unwrap().push(Arc::clone(&c));
            c
        };
        let run = distributed(d, &p, &[0, 1000, n], &wrap);
        let m = run.into_iter().next().unwrap().unwrap_or_else(|e| panic!("{name}: {e}"));
        let (calls, values) = counters.lock().unwrap()[0].counts();
        let rounds = m.history.len() as f64;
        rows.push(format!(
            "{name}: {rounds} rounds, {calls} calls ({:.1}/round), {values} f64 ({:.0}/round, {:.0} KiB/round)",
            calls as f64 / rounds,
            values as f64 / rounds,
            values as f64 * 8.0 / rounds / 1024.0
        ));
        if algo == Algorithm::RealAdaBoost {
            // Per tree: 7 histograms (root + 6 splits; the last split needs none) of
            // 28 · 256 bins · 2 values (+ row counts), the covers (15 nodes); plus the
            // booster's step; plus 1 call at the start (n, Σ w) and the booster's setup.
            let hist = 28 * 256 * 2;
            let per_tree = hist * 7 + 1 + 6 * 4 + 15;
            assert!(values >= per_tree * 5 && values < per_tree * 5 + 200, "{values}");
        }
    }
    println!("{}", rows.join("\n"));
}

/// Distributed binning: the ranks' summaries merged in rank order give the single machine's
/// mapper — unsampled, sampled (more than 200 000 rows) and weighted-sampled (Σ w > 200 000) —
/// with an empty shard among them.
#[test]
fn distributed_binning_equals_single_machine() {
    let n = 260_000;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let x: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.1) { f64::NAN } else { rng.gen::<f64>().powi(3) }).collect();
    let few: Vec<f64> = (0..n).map(|_| f64::from(rng.gen_range(0..30))).collect();
    let codes: Vec<u32> = (0..n).map(|_| rng.gen_range(0..4)).collect();
    let w: Vec<f64> =
        (0..n).map(|_| if rng.gen_bool(0.1) { 0.0 } else { f64::from(rng.gen_range(1..3)) * 0.75 }).collect();
    let names: Vec<String> = ["x", "few", "cat"].iter().map(|s| s.to_string()).collect();
    for rows in [1000, n] {
        for weighted in [false, true] {
            let views = |a: usize, b: usize| -> Vec<ColumnView<'_>> {
                vec![
                    ColumnView::Numeric(boostlab::NumericView::f64(&x[a..b])),
                    ColumnView::Numeric(boostlab::NumericView::f64(&few[a..b])),
                    ColumnView::Categorical { codes: &codes[a..b], n_levels: 4 },
                ]
            };
            let sw = weighted.then(|| &w[..rows]);
            let want = BinMapper::fit_views(&names, &views(0, rows), 255, sw).unwrap();
            let cuts = [0, rows / 3, rows / 3, rows * 4 / 5, rows];
            let mut offset = 0.0;
            let offsets: Vec<f64> = cuts
                .windows(2)
                .map(|c| {
                    let o = offset;
                    offset = weight_prefix(offset, &w[c[0]..c[1]]);
                    o
                })
                .collect();
            let summaries = cuts
                .windows(2)
                .zip(&offsets)
                .map(|(c, &o)| {
                    let spec =
                        ShardSpec { global_offset: c[0], global_n: rows, weight_offset: o, total_weight: offset };
                    let s = shard_summaries(&views(c[0], c[1]), 255, sw.map(|w| &w[c[0]..c[1]]), &spec).unwrap();
                    boostlab::data::summaries_from_bytes(&boostlab::data::summaries_to_bytes(&s)).unwrap()
                })
                .collect();
            let got = BinMapper::from_summaries(&names, merge_summaries(summaries).unwrap(), 255).unwrap();
            assert_eq!(got, want, "{rows} rows, weighted {weighted}");
            let json = serde_json::to_string(&got).unwrap();
            assert_eq!(serde_json::from_str::<BinMapper>(&json).unwrap(), want);
        }
    }
}

/// A rank's rows given as its partitions (read in place, no concatenation), its sample
/// sorted and sent as f32 when the values are f32, merged as sorted lists: still the single
/// machine's mapper — f64 and f32 columns, weighted or not, sampled or not, ranks of several
/// uneven parts (an empty part, an empty rank), and columns whose sample has few distinct values
/// while the column has a few more (values the sample missed: exact midpoints) or many more.
#[test]
fn binning_from_partitions_equals_single_machine() {
    let n = 260_000;
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let x: Vec<f64> =
        (0..n).map(|_| if rng.gen_bool(0.1) { f64::NAN } else { f64::from(rng.gen::<f32>()).powi(3) }).collect();
    // 100 common values and 5 rare ones (once each): the sample misses some, the column has 105.
    let rare: Vec<f64> =
        (0..n).map(|i| if i % 50_000 == 7 { 1000.0 + i as f64 } else { f64::from(rng.gen_range(0..100)) }).collect();
    // 200 common values and 400 rare ones: the sample has at most 255, the column more.
    let many: Vec<f64> =
        (0..n).map(|i| if i % 600 == 3 { 0.5 + (i / 600) as f64 } else { f64::from(rng.gen_range(0..200)) }).collect();
    let codes: Vec<u32> = (0..n).map(|_| rng.gen_range(0..4)).collect();
    let w: Vec<f64> =
        (0..n).map(|_| if rng.gen_bool(0.1) { 0.0 } else { f64::from(rng.gen_range(1..3)) * 0.75 }).collect();
    let f32s = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
    let (x32, rare32, many32) = (f32s(&x), f32s(&rare), f32s(&many));
    let names: Vec<String> = ["x", "rare", "many", "cat"].iter().map(|s| s.to_string()).collect();
    for single in [false, true] {
        let views = |a: usize, b: usize| -> Vec<ColumnView<'_>> {
            let num = |v: &'static str| -> boostlab::NumericView<'_> {
                match (single, v) {
                    (false, "x") => boostlab::NumericView::f64(&x[a..b]),
                    (false, "rare") => boostlab::NumericView::f64(&rare[a..b]),
                    (false, _) => boostlab::NumericView::f64(&many[a..b]),
                    (true, "x") => boostlab::NumericView::f32(&x32[a..b]),
                    (true, "rare") => boostlab::NumericView::f32(&rare32[a..b]),
                    (true, _) => boostlab::NumericView::f32(&many32[a..b]),
                }
            };
            vec![
                ColumnView::Numeric(num("x")),
                ColumnView::Numeric(num("rare")),
                ColumnView::Numeric(num("many")),
                ColumnView::Categorical { codes: &codes[a..b], n_levels: 4 },
            ]
        };
        for rows in [1000, n] {
            for weighted in [false, true] {
                let sw = weighted.then(|| &w[..rows]);
                let want = BinMapper::fit_views(&names, &views(0, rows), 255, sw).unwrap();
                // Three ranks of parts: [0, a) in two parts and an empty one, [a, a) empty, [a, rows) in three.
                let a = rows * 2 / 5;
                let ranks: Vec<Vec<(usize, usize)>> = vec![
                    vec![(0, rows / 7), (rows / 7, rows / 7), (rows / 7, a)],
                    vec![(a, a)],
                    vec![(a, a + rows / 10), (a + rows / 10, rows * 9 / 10), (rows * 9 / 10, rows)],
                ];
                let mut offset = 0.0;
                let offsets: Vec<f64> = ranks
                    .iter()
                    .map(|parts| {
                        let o = offset;
                        offset = weight_prefix(offset, &w[parts[0].0..parts[parts.len() - 1].1]);
                        o
                    })
                    .collect();
                let summaries: Vec<Vec<boostlab::data::FeatureSummary>> = ranks
                    .iter()
                    .zip(&offsets)
                    .map(|(parts, &o)| {
                        let (start, end) = (parts[0].0, parts[parts.len() - 1].1);
                        let spec =
                            ShardSpec { global_offset: start, global_n: rows, weight_offset: o, total_weight: offset };
                        let pv: Vec<Vec<ColumnView<'_>>> = parts.iter().map(|&(p, q)| views(p, q)).collect();
                        let s = shard_summaries_parts(&pv, 255, sw.map(|w| &w[start..end]), &spec).unwrap();
                        let bytes = summaries_to_bytes(&s);
                        if single && !weighted {
                            // f32 values travel as f32: at most 4 bytes a value and the headers
                            // (rows kept as every value while a rank has few, plus its sample).
                            let values = 3 * (end - start + 200_000 * (end - start) / rows + 2000);
                            assert!(bytes.len() < 4 * values + 400, "{} bytes, {values} values", bytes.len());
                        }
                        summaries_from_bytes(&bytes).unwrap()
                    })
                    .collect();
                let got = BinMapper::from_summaries(&names, merge_summaries(summaries).unwrap(), 255).unwrap();
                assert_eq!(got, want, "{rows} rows, weighted {weighted}, f32 {single}");
            }
        }
    }
}

/// Validation rows `rows` of `v` (a rank's share of the validation data; possibly none).
fn validation_rows(v: &Dataset, rows: std::ops::Range<usize>) -> boostlab::Validation {
    let part = v.subset(&rows.collect::<Vec<_>>());
    boostlab::Validation { features: part.features, target: part.target.unwrap() }
}

/// One fit per rank with options: rank `r` trains on rows `cuts[r]..cuts[r + 1]` of `d`, with
/// validation rows `valid.1[r]..valid.1[r + 1]` of `valid.0`, continuing `init`.
fn distributed_with(
    d: &Dataset,
    params: &BoostParams,
    cuts: &[usize],
    valid: Option<(&Dataset, &[usize])>,
    init: Option<&Ensemble>,
) -> Vec<Result<Ensemble>> {
    let full = BinnedData::from_dataset(d, params.max_bins).unwrap();
    let shards: Vec<BinnedData> = cuts.windows(2).map(|c| shard(&full, d, c[0]..c[1])).collect();
    let valids: Vec<Option<boostlab::Validation>> =
        (0..shards.len()).map(|r| valid.map(|(v, vc)| validation_rows(v, vc[r]..vc[r + 1]))).collect();
    let ranks = ThreadCollective::ranks(shards.len(), Duration::from_secs(60));
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .into_iter()
            .zip(shards.iter().zip(&valids))
            .map(|(rank, (data, v))| {
                s.spawn(move || {
                    Trainer::new(params)
                        .validation(v.as_ref())
                        .init_model(init)
                        .collective(Arc::new(rank))
                        .fit_binned(data)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn early_stopping_over_ranks_equals_single_machine() {
    let d = data(21, 400, 2);
    let v = data(22, 200, 2);
    let full = BinnedData::from_dataset(&d, 255).unwrap();
    let all = validation_rows(&v, 0..200);
    for (algo, metric) in [
        (Algorithm::RealAdaBoost, None),
        (Algorithm::SecBoost, Some(boostlab::EvalMetric::Loss)),
        (Algorithm::AdaBoost, Some(boostlab::EvalMetric::Hamming)),
    ] {
        let mut p = params(algo);
        p.n_estimators = 200;
        p.tree.max_leaves = 4;
        p.early_stopping_rounds = Some(3);
        p.eval_metric = metric;
        let want = Trainer::new(&p).validation(&all).fit_binned(&full).unwrap();
        assert!(want.history.len() < 200, "{algo:?}: early stopping must stop");
        assert!(want.best_iteration.is_some());
        // The validation rows over three ranks, the last one holding none.
        let run = distributed_with(&d, &p, &[0, 150, 260, 400], Some((&v, &[0, 80, 200, 200])), None);
        let models: Vec<Ensemble> = run.into_iter().map(Result::unwrap).collect();
        for m in &models[1..] {
            assert_eq!(bits(m), bits(&models[0]), "{algo:?}: every rank holds the same model");
        }
        let got = &models[0];
        assert_eq!(got.history.len(), want.history.len(), "{algo:?}: stopped at the same round");
        assert_eq!(got.best_iteration, want.best_iteration, "{algo:?}");
        assert_eq!(got.eval_metric, want.eval_metric);
        for (a, b) in got.history.iter().zip(&want.history) {
            let (x, y) = (a.values["valid_metric"], b.values["valid_metric"]);
            assert!(close(x, y, 1e-12), "{algo:?} round {}: valid metric {x} vs {y}", a.round);
            assert_eq!(a.stop_reason.is_some(), b.stop_reason.is_some());
        }
        assert_same_model(&format!("{algo:?} early stopping"), got, &want, &d);
    }
    // No validation rows on any rank: a clear error on every rank.
    let mut p = params(Algorithm::RealAdaBoost);
    p.early_stopping_rounds = Some(3);
    let run = distributed_with(&d, &p, &[0, 200, 400], Some((&v, &[0, 0, 0])), None);
    for r in run {
        assert!(r.unwrap_err().to_string().contains("validation data: no rows"));
    }
}

#[test]
fn warm_start_over_ranks_equals_single_machine() {
    let d = data(31, 300, 2);
    let full = BinnedData::from_dataset(&d, 255).unwrap();
    for algo in [Algorithm::RealAdaBoost, Algorithm::TAdaBoost, Algorithm::SecBoost] {
        let mut p5 = params(algo);
        p5.n_estimators = 5;
        let init = Trainer::new(&p5).fit_binned(&full).unwrap();
        let p12 = BoostParams { n_estimators: 12, ..p5.clone() };
        let want = Trainer::new(&p12).fit_binned(&full).unwrap();
        let run = distributed_with(&d, &p12, &[0, 100, 300], None, Some(&init));
        let models: Vec<Ensemble> = run.into_iter().map(Result::unwrap).collect();
        assert_eq!(bits(&models[0]), bits(&models[1]), "{algo:?}: every rank holds the same model");
        // The init model's α are kept bit for bit; the continuation is the one-go fit's.
        assert_eq!(models[0].alphas[..5], init.alphas[..], "{algo:?}");
        assert_same_model(&format!("{algo:?} warm start"), &models[0], &want, &d);
        // Other rows than the model's: the replay refuses on every rank.
        let other = data(32, 300, 2);
        for r in distributed_with(&other, &p12, &[0, 100, 300], None, Some(&init)) {
            assert!(r.unwrap_err().to_string().contains("warm start"), "{algo:?}");
        }
    }
}

/// Real AdaBoost on 8-leaf trees costs 8 reductions a round — the 7 histograms and one
/// for the booster's step (Z, the training errors and the edge sums in one call) — and the trees'
/// covers one call at the end of the fit (asserted from the calls of a 12-round fit minus those
/// of a 4-round one, so the set-up's calls cancel); the covers equal the single machine's.
#[test]
fn real_adaboost_reduces_eight_times_a_round() {
    let d = data(7, 3000, 2);
    let calls = |rounds: usize| {
        let mut p = params(Algorithm::RealAdaBoost);
        p.n_estimators = rounds;
        p.calibration = boostlab::params::CalibrationParams::none();
        let counters = std::sync::Mutex::new(Vec::new());
        let wrap = |_: usize, r: boostlab::collective::ThreadRank| -> Arc<dyn Collective> {
            let c = Arc::new(CountingCollective::new(r));
            counters.lock().unwrap().push(Arc::clone(&c));
            c
        };
        let m = distributed(&d, &p, &[0, 1100, 3000], &wrap).into_iter().next().unwrap().unwrap();
        assert_eq!(m.n_trees(), rounds);
        assert!(m.trees.iter().all(|t| t.n_leaves() == 8), "every tree has 8 leaves");
        let want = Trainer::new(&p).fit_binned(&BinnedData::from_dataset(&d, p.max_bins).unwrap()).unwrap();
        for (a, b) in m.trees.iter().zip(&want.trees) {
            assert_eq!(a.covers.len(), 15);
            for (x, y) in a.covers.iter().zip(&b.covers) {
                assert!(close(*x, *y, 1e-12), "cover {x} vs {y}");
            }
        }
        let c = counters.lock().unwrap();
        assert_eq!(c[0].counts().0, c[1].counts().0, "every rank makes the same calls");
        c[0].counts()
    };
    let (few, few_values) = calls(4);
    let (many, many_values) = calls(12);
    assert_eq!(many - few, 8 * 8, "8 reductions a round");
    // Per round: 7 histograms of 4 features' bins · 2 (+ row counts), the step's 8 sums and the
    // maximum's 2 one-hot slots; the covers' 15 per tree in the call at the end.
    let bins = BinnedData::from_dataset(&d, 255).unwrap().bins.total_bins();
    let per_round = 7 * bins * 2 + 1 + 6 * 4 + 10 + 15;
    assert_eq!(many_values - few_values, 8 * per_round, "values a round ({bins} bins)");
}

/// T = auto over the ranks (uneven shards, one empty; sample weights) chooses the
/// single machine's t, with its inner scores within rounding, and the same model.
#[test]
fn t_auto_over_ranks_chooses_the_single_machine_t() {
    let n = 600;
    let d = data(21, n, 2);
    let mut p = params(Algorithm::TAdaBoost);
    p.n_estimators = 5;
    p.tree.max_leaves = 4;
    p.t_adaboost.auto_t =
        Some(boostlab::select::auto_t::AutoT { grid: vec![0.0, 0.5, 0.9, 1.0], folds: 3, ..Default::default() });
    let want = Trainer::new(&p).fit_binned(&BinnedData::from_dataset(&d, p.max_bins).unwrap()).unwrap();
    let want_sel = want.t_selection.clone().unwrap();
    assert!(want_sel.scores.iter().any(|s| *s != want_sel.scores[0]), "the grid's errors differ");
    for cuts in [vec![0, 250, n], vec![0, 0, 170, n]] {
        let models: Vec<Ensemble> = distributed(&d, &p, &cuts, &plain).into_iter().map(|m| m.unwrap()).collect();
        for m in &models[1..] {
            assert_eq!(bits(m), bits(&models[0]), "every rank holds the same model");
        }
        let sel = models[0].t_selection.clone().unwrap();
        assert_eq!(
            (sel.t, &sel.grid, sel.folds, sel.fold_seed),
            (want_sel.t, &want_sel.grid, want_sel.folds, want_sel.fold_seed)
        );
        for (a, b) in sel.scores.iter().zip(&want_sel.scores) {
            assert!(close(*a, *b, 1e-12), "{cuts:?}: inner score {a} vs {b}");
        }
        assert_same_model(&format!("t = auto, shards {cuts:?}"), &models[0], &want, &d);
    }
}
