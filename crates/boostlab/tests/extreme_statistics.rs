//! The tree learner on extreme statistics — NaN, ±∞, 1e308, subnormal, sums that overflow only
//! over several ranks — through the public `tree::grow` and `tree::grow_distributed`, with every
//! criterion (the tempered one takes the bounded scan, whose AVX2 build gathers from a table):
//! a `Numerical` error that names the problem, or a tree whose leaf values and gains are all
//! finite — never a signal or a panic.

use std::time::Duration;

use boostlab::collective::ThreadCollective;
use boostlab::data::{BinMapper, BinnedMatrix, Column, Features};
use boostlab::tree::{grow, grow_distributed, Criterion, GrowSpec, Grown, LeafRule, TemperedLink, TreeParams};
use boostlab::Error;
use proptest::prelude::*;

/// `n` rows of two numeric features (distinct values, and 7 levels) and a categorical one.
fn features(n: usize) -> Features {
    Features {
        names: vec!["a".into(), "b".into(), "c".into()],
        columns: vec![
            Column::Numeric((0..n).map(|i| i as f64).collect()),
            Column::Numeric((0..n).map(|i| (i % 7) as f64).collect()),
            Column::Categorical {
                codes: (0..n as u32).map(|i| i % 5).collect(),
                levels: (0..5).map(|i| format!("l{i}")).collect(),
            },
        ],
    }
}

fn binned(n: usize) -> (BinMapper, BinnedMatrix) {
    let f = features(n);
    let mapper = BinMapper::fit(&f, 255, None).unwrap();
    let bm = mapper.transform(&f).unwrap();
    (mapper, bm)
}

const CRITERIA: [Criterion; 8] = [
    Criterion::Tempered { t: 0.5 },
    Criterion::Tempered { t: 1.3 },
    Criterion::Tempered { t: -2.0 },
    Criterion::Tempered { t: 1.0 },
    Criterion::Matusita,
    Criterion::Gini,
    Criterion::Entropy,
    Criterion::Empirical,
];

fn spec(params: &TreeParams, criterion: Criterion) -> GrowSpec<'_> {
    let leaf_rule = match criterion {
        Criterion::Tempered { t } if t < 2.0 => LeafRule::Tempered { t, link: TemperedLink::Optimal },
        _ => LeafRule::HalfLogRatio { eps: 1e-9 },
    };
    GrowSpec { params, criterion, leaf_rule, seed: 3, row_weight: None, constraints: None }
}

/// A grown tree is finite; an error is `Numerical` (or `InvalidData`) with a message.
fn assert_finite_or_clear(r: &boostlab::Result<Grown>, what: &str) {
    match r {
        Ok(g) => {
            assert!(g.tree.leaf_values.iter().all(|v| v.is_finite()), "{what}: leaves {:?}", g.tree.leaf_values);
            assert!(g.tree.gains.iter().all(|v| v.is_finite()), "{what}: gains {:?}", g.tree.gains);
            assert!(g.leaf_stats.iter().all(|v| v.is_finite()), "{what}: sums {:?}", g.leaf_stats);
        }
        Err(Error::Numerical(m) | Error::InvalidData(m)) => assert!(!m.is_empty(), "{what}"),
        Err(e) => panic!("{what}: unexpected error {e:?}"),
    }
}

/// The reported case: 64 rows of the statistic 1e308 with a tempered criterion. The sums
/// overflow to +∞ (the AVX2 bounded scan read far outside its table on them): a `Numerical`
/// error naming the root, on the scalar and the vector build alike.
#[test]
fn tempered_scan_with_overflowing_sums_is_an_error() {
    let (mapper, bm) = binned(64);
    let params = TreeParams { max_leaves: 4, ..Default::default() };
    for criterion in CRITERIA {
        let e = grow(&bm, &mapper, &vec![1e308; 64], 1, &spec(&params, criterion)).unwrap_err();
        assert!(
            matches!(&e, Error::Numerical(m) if m.starts_with("the statistics of node 0 (64 rows) overflow: their total weight is inf")),
            "{criterion:?}: {e}"
        );
    }
    // W+ and W− each finite (1e308), their sum W not: refused too, naming the node.
    let mut stats = vec![1.0; 64];
    (stats[3], stats[40]) = (1e308, -1e308);
    let e = grow(&bm, &mapper, &stats, 1, &spec(&params, Criterion::Tempered { t: 0.5 })).unwrap_err().to_string();
    assert_eq!(
        e,
        "numerical failure: the statistics of node 0 (64 rows) overflow: their total weight is inf and the \
         criterion's cost NaN; scale the sample weights (or the statistics) down"
    );
}

/// Finite statistics on each of two ranks whose sums overflow only over both (no per-rank check
/// can see it): every rank returns the same `Numerical` error naming the root; and where the
/// sums stay finite, every rank grows the same finite tree.
#[test]
fn sums_that_overflow_only_over_the_ranks_are_an_error_on_every_rank() {
    let n = 64;
    let (mapper, _) = binned(n);
    let f = features(n);
    let shard = |r: std::ops::Range<usize>| {
        let part = Features {
            names: f.names.clone(),
            columns: f
                .columns
                .iter()
                .map(|c| match c {
                    Column::Numeric(v) => Column::Numeric(v[r.clone()].to_vec()),
                    Column::Categorical { codes, levels } => {
                        Column::Categorical { codes: codes[r.clone()].to_vec(), levels: levels.clone() }
                    }
                })
                .collect(),
        };
        mapper.transform(&part).unwrap()
    };
    let shards = [shard(0..32), shard(32..64)];
    let params = TreeParams { max_leaves: 6, ..Default::default() };
    for (value, overflows) in [(1e308 / 20.0, true), (1e305, false)] {
        // 20 rows of 5e306 per rank: each rank's total (1e308) is finite, the sum over ranks (2e308) is not.
        let stats: Vec<Vec<f64>> =
            (0..2).map(|_| (0..32).map(|i| if i < 20 { value } else { 0.0 }).collect()).collect();
        for criterion in CRITERIA {
            let ranks = ThreadCollective::ranks(2, Duration::from_secs(30));
            let results: Vec<_> = std::thread::scope(|s| {
                let hs: Vec<_> = ranks
                    .into_iter()
                    .zip(&shards)
                    .zip(&stats)
                    .map(|((rank, bm), st)| {
                        let (mapper, params) = (&mapper, &params);
                        s.spawn(move || grow_distributed(bm, mapper, st, 1, &spec(params, criterion), None, &rank))
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for r in &results {
                if overflows {
                    let e = r.as_ref().unwrap_err().to_string();
                    assert!(e.contains("the statistics of node 0 (64 rows) overflow"), "{criterion:?}: {e}");
                } else {
                    assert_finite_or_clear(r, &format!("{criterion:?}"));
                }
            }
        }
    }
}

/// One extreme statistic value.
fn extreme() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -4.0..4.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(1e308),
        1 => Just(-1e308),
        1 => Just(f64::MAX),
        1 => Just(f64::from_bits(1)),
        1 => Just(-f64::MIN_POSITIVE / 4.0),
        1 => Just(1e300),
        1 => Just(1e200),
        1 => Just(0.0),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Random statistics mixing ordinary and extreme values, one or two outputs, every
    /// criterion, stumps to 12 leaves, on one machine and over two ranks: a clear error or a
    /// finite tree, and the two ranks agree.
    #[test]
    fn extreme_statistics_give_a_clear_error_or_a_finite_tree(
        ordinary in prop::collection::vec(-4.0..4.0f64, 96),
        extremes in prop::collection::vec((extreme(), prop::bool::weighted(0.05)), 96),
        finite_only in any::<bool>(),
        k in 1usize..=2,
        c in 0..CRITERIA.len(),
        leaves in 2usize..12,
    ) {
        // Ordinary values with a few extreme ones (only finite ones in half the cases, so that
        // some trees grow past the root).
        let stats: Vec<f64> = ordinary
            .iter()
            .zip(&extremes)
            .map(|(&o, &(e, pick))| if pick && (e.is_finite() || !finite_only) { e } else { o })
            .collect();
        let n = 96 / k;
        let stats = &stats[..n * k];
        let (mapper, bm) = binned(n);
        let params = TreeParams { max_leaves: leaves, ..Default::default() };
        let criterion = CRITERIA[c];
        let one = grow(&bm, &mapper, stats, k, &spec(&params, criterion));
        assert_finite_or_clear(&one, &format!("{criterion:?} k = {k}"));
        // The same rows over two ranks.
        let f = features(n);
        let half = n / 2;
        let part = |r: std::ops::Range<usize>| {
            let cols = f.columns.iter().map(|col| match col {
                Column::Numeric(v) => Column::Numeric(v[r.clone()].to_vec()),
                Column::Categorical { codes, levels } => Column::Categorical { codes: codes[r.clone()].to_vec(), levels: levels.clone() },
            }).collect();
            mapper.transform(&Features { names: f.names.clone(), columns: cols }).unwrap()
        };
        let shards = [part(0..half), part(half..n)];
        let st = [&stats[..half * k], &stats[half * k..]];
        let ranks = ThreadCollective::ranks(2, Duration::from_secs(30));
        let results: Vec<_> = std::thread::scope(|s| {
            let hs: Vec<_> = ranks.into_iter().zip(&shards).zip(st).map(|((rank, bm), st)| {
                let (mapper, params) = (&mapper, &params);
                s.spawn(move || grow_distributed(bm, mapper, st, k, &spec(params, criterion), None, &rank))
            }).collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &results {
            assert_finite_or_clear(r, &format!("{criterion:?} k = {k}, distributed"));
        }
        prop_assert_eq!(results[0].is_ok(), results[1].is_ok());
        if let (Ok(a), Ok(b)) = (&results[0], &results[1]) {
            prop_assert_eq!(&a.tree.nodes, &b.tree.nodes);
        }
    }
}
