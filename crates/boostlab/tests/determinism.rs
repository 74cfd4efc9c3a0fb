//! A full `fit` gives a bit-identical model (its JSON, byte for byte) whatever the number
//! of threads, and prediction gives bit-identical scores. The data are large enough for every
//! parallel path (binning, histograms, split search, row-block prediction) to split work.

use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Trains with nothing but the parameters (the [`Trainer`](boostlab::Trainer)'s shortest form).
fn fit(data: &boostlab::Dataset, params: &boostlab::BoostParams) -> boostlab::Result<boostlab::Ensemble> {
    boostlab::Trainer::new(params).fit(data)
}

fn data(n: usize, d: usize, classes: u32, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cols: Vec<Vec<f64>> = (0..d)
        .map(|_| (0..n).map(|_| if rng.gen_bool(0.02) { f64::NAN } else { rng.gen::<f64>() }).collect())
        .collect();
    let y: Vec<u32> = (0..n)
        .map(|i| {
            let s = cols[0][i].max(0.0) + 0.7 * cols[1][i].max(0.0) - cols[2][i].max(0.0) + 0.3 * rng.gen::<f64>();
            ((s + 1.0).max(0.0) * f64::from(classes) / 2.7) as u32 % classes
        })
        .collect();
    let features = Features {
        names: (0..d).map(|f| format!("f{f}")).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    };
    Dataset::new(features, Some(Target::Classes { y, classes: (0..classes).map(|c| c.to_string()).collect() }), None)
        .expect("valid data")
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool").install(f)
}

#[test]
fn fit_is_bit_identical_for_1_and_2_threads() {
    // 150k rows: more than four of the library's fixed 32k-row chunks, so the chunked passes
    // (row partition, gathers, leaf assignment, the boosters' sums and updates) split work.
    let binary = data(150_000, 6, 2, 8);
    let multi = data(6_000, 6, 3, 9);
    for (algorithm, leaves, ds) in [
        (Algorithm::AdaBoost, 2, &binary),
        (Algorithm::RealAdaBoost, 8, &binary),
        (Algorithm::TAdaBoost, 8, &binary),
        (Algorithm::RealAdaBoostMH, 8, &multi),
    ] {
        let mut p = BoostParams { algorithm, n_estimators: 8, ..Default::default() };
        p.tree.max_leaves = leaves;
        let run = |threads| {
            in_pool(threads, || {
                let m = fit(ds, &p).unwrap();
                let scores = m.predict(&ds.features, &Prediction::scores()).unwrap();
                (serde_json::to_string(&m).unwrap(), scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>())
            })
        };
        let a = run(1);
        for threads in [2, 3] {
            let b = run(threads);
            assert!(a.0 == b.0, "{}: models differ between 1 and {threads} threads", algorithm.name());
            assert!(a.1 == b.1, "{}: scores differ between 1 and {threads} threads", algorithm.name());
        }
    }
}
