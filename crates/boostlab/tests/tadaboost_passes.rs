//! T-AdaBoost's models are pinned: the model files (JSON: trees, α, every per-round diagnostic)
//! of fits covering every kernel and regime of the update, over several of the per-row passes'
//! chunks, are hashed and compared with a table, at 1 and 2 threads. Any change of a bit of any
//! of these models fails here. What is hashed is what training computed: the model file's
//! `trees`, `alphas` and `history` (the whole files are byte-identical at 1 and 2 threads).
//!
//! Regenerate (only for a deliberate model change, saying in CHANGELOG.md by how much the models
//! moved) with `BOOSTLAB_REGENERATE=1 cargo test -p boostlab --test tests tadaboost_passes:: --
//! --nocapture`, which prints the new table instead of checking it.

use boostlab::boost::tadaboost::{LearnerWeights, TAdaBoostParams, TSchedule};
use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::{Algorithm, BoostParams};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

/// 20,000 rows (ten of the booster's 2,048-row chunks) × 5 features, 2 % missing, noisy labels;
/// with `weighted`, sample weights in [0.2, 3) with every 53rd row at 0.
fn data(weighted: bool) -> Dataset {
    let (n, d) = (20_000, 5);
    let mut rng = ChaCha8Rng::seed_from_u64(1808);
    let cols: Vec<Vec<f64>> = (0..d)
        .map(|_| (0..n).map(|_| if rng.gen_bool(0.02) { f64::NAN } else { rng.gen::<f64>() }).collect())
        .collect();
    let y: Vec<u32> = (0..n)
        .map(|i| {
            let s =
                cols[0][i].max(0.0) - 0.8 * cols[1][i].max(0.0) + 0.5 * cols[2][i].max(0.0) + 0.6 * rng.gen::<f64>();
            u32::from(s > 0.6)
        })
        .collect();
    let sw = weighted.then(|| (0..n).map(|i| if i % 53 == 0 { 0.0 } else { rng.gen_range(0.2..3.0) }).collect());
    let features = Features {
        names: (0..d).map(|f| format!("f{f}")).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    Dataset::new(features, Some(Target::Classes { y, classes: vec!["0".into(), "1".into()] }), sw).expect("valid data")
}

/// FNV-1a, 64 bits.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool").install(f)
}

/// (name, weighted data, parameters): every update kernel (integer power t = 0.8, `powf` t = 0.6,
/// the relative kernel near 1, t = 1, t > 1), sample weights, a schedule (unfused statistics),
/// shrinkage, stumps and the co-density learner weights.
fn cases() -> Vec<(&'static str, bool, BoostParams)> {
    let base = |t: f64, leaves: usize| {
        let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 12, ..Default::default() };
        p.tree.max_leaves = leaves;
        p.t_adaboost = TAdaBoostParams { t, ..Default::default() };
        p
    };
    let mut sched = base(0.8, 8);
    sched.t_adaboost.t_schedule = Some(TSchedule::Linear { t0: 0.5, t1: 0.9, rounds: None });
    let mut shrunk = base(0.8, 2);
    shrunk.learning_rate = 0.5;
    let mut co = base(0.8, 8);
    co.t_adaboost.learner_weights = LearnerWeights::CoDensity;
    vec![
        ("t=0.8 8 leaves", false, base(0.8, 8)),
        ("t=0.8 8 leaves, sample weights", true, base(0.8, 8)),
        ("t=0.6 8 leaves, sample weights", true, base(0.6, 8)),
        ("t=0.97 8 leaves", false, base(0.97, 8)),
        ("t=1 8 leaves", false, base(1.0, 8)),
        ("t=1.3 8 leaves", false, base(1.3, 8)),
        ("t=0 8 leaves", false, base(0.0, 8)),
        ("schedule 0.5→0.9", false, sched),
        ("t=0.8 stumps, learning rate 0.5", false, shrunk),
        ("t=0.8 co-density", false, co),
    ]
}

/// The model files' hashes of [`cases`].
const PINNED: &[(&str, u64)] = &[
    ("t=0.8 8 leaves", 0x2f2c0f1d26995816),
    ("t=0.8 8 leaves, sample weights", 0x41b75d899d378d1a),
    ("t=0.6 8 leaves, sample weights", 0xda36e5749812779a),
    ("t=0.97 8 leaves", 0x8a180eafbd8c273f),
    ("t=1 8 leaves", 0x3032f264aed1f9d5),
    ("t=1.3 8 leaves", 0x9ece8047f5aaf153),
    ("t=0 8 leaves", 0xa0cb0fe7556b74a8),
    ("schedule 0.5→0.9", 0x7c599bdc0a2e388c),
    ("t=0.8 stumps, learning rate 0.5", 0xc54342ce79c55bcb),
    ("t=0.8 co-density", 0x0b5c0a8e57b7b848),
];

#[test]
fn models_match_their_pinned_hashes_at_any_thread_count() {
    let (plain, weighted) = (data(false), data(true));
    let bless = std::env::var_os("BOOSTLAB_REGENERATE").is_some();
    let mut table = Vec::new();
    for (name, w, p) in cases() {
        let ds = if w { &weighted } else { &plain };
        let json = |threads| in_pool(threads, || serde_json::to_string(&fit(ds, &p).expect("fit")).expect("json"));
        let one = json(1);
        assert!(one == json(2), "{name}: the models of 1 and 2 threads differ");
        let model: serde_json::Value = serde_json::from_str(&one).expect("json");
        let rounds = model["trees"].as_array().map_or(0, Vec::len);
        assert!(rounds >= 6, "{name}: only {rounds} trees");
        // What training computed (not the file's other fields).
        let trained = ["trees", "alphas", "history"].map(|k| model[k].to_string()).join("|");
        assert!(trained.contains("\"min_weight\""), "{name}: no per-round diagnostics");
        table.push((name, fnv(trained.as_bytes())));
    }
    if bless {
        for (name, h) in &table {
            println!("    ({name:?}, {h:#018x}),");
        }
        return;
    }
    assert_eq!(table.len(), PINNED.len(), "one hash per case");
    for ((name, got), (want_name, want)) in table.iter().zip(PINNED) {
        assert_eq!(name, want_name);
        assert!(got == want, "{name}: model file hash {got:#018x}, pinned {want:#018x}");
    }
}
