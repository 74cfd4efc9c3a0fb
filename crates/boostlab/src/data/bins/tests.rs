//! Tests of the binning: thresholds against naive twins, sampling, weights, summaries.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::super::Column;
use super::mapper::{numeric_bins, BinMapper, FeatureBins, BIN_BLOCK};
use super::matrix::BinData;
use super::quantiles::{midpoint, midpoints, numeric_thresholds, sort_total};
use super::sample::{bin_sample_rows, sample_rows, BIN_SAMPLE_ROWS};
use crate::data::view::{ColumnView, NumericView};
use crate::data::{Features, MISSING_CODE};
use proptest::prelude::*;
use rand::Rng;

/// The integer-key sort is `sort_unstable_by(f64::total_cmp)` bit for bit, on
/// signed zeros, NaNs of both signs, infinities, subnormals, duplicates and random values.
#[test]
fn key_sort_equals_the_total_cmp_sort() {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
    let special =
        [0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 5e-324, -5e-324, f64::MAX, f64::MIN];
    for n in [0usize, 1, 2, 17, 1000, 10_000] {
        let xs: Vec<f64> = (0..n)
            .map(|i| match i % 5 {
                0 => special[rng.gen_range(0..special.len())],
                1 => f64::from(rng.gen_range(-3i32..3)),
                2 => f64::from_bits(rng.gen::<u64>()),
                _ => rng.gen::<f64>() * 2.0 - 1.0,
            })
            .collect();
        let mut want = xs.clone();
        want.sort_unstable_by(f64::total_cmp);
        let mut got = xs;
        sort_total(&mut got);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "n = {n}");
    }
}

/// The naive thresholds: all rows, a list of distinct values.
fn naive_thresholds(v: &[f64], max_bins: usize, w: Option<&[f64]>) -> Vec<f64> {
    let mut pairs: Vec<(f64, f64)> = match w {
        None => v.iter().filter(|x| !x.is_nan()).map(|&x| (x, 1.0)).collect(),
        Some(w) => v.iter().zip(w).filter(|(x, wt)| !x.is_nan() && **wt > 0.0).map(|(&x, &wt)| (x, wt)).collect(),
    };
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut distinct: Vec<(f64, f64)> = Vec::new();
    for (x, wt) in pairs {
        match distinct.last_mut() {
            Some(last) if last.0 == x => last.1 += wt,
            _ => distinct.push((x, wt)),
        }
    }
    if distinct.len() <= max_bins {
        return distinct.windows(2).map(|p| midpoint(p[0].0, p[1].0)).collect();
    }
    let total: f64 = distinct.iter().map(|d| d.1).sum();
    let mut out = Vec::new();
    let mut acc = 0.0;
    for j in 0..distinct.len() - 1 {
        acc += distinct[j].1;
        let next_cut = total * (out.len() + 1) as f64 / max_bins as f64;
        if acc >= next_cut && out.len() < max_bins - 1 {
            out.push(midpoint(distinct[j].0, distinct[j + 1].0));
        }
    }
    out
}

fn one_feature(v: Vec<f64>) -> Features {
    Features { names: vec!["x".into()], columns: vec![Column::Numeric(v)] }
}

fn thresholds(m: &BinMapper, f: usize) -> Vec<f64> {
    match &m.features[f] {
        FeatureBins::Numeric { thresholds } => thresholds.clone(),
        FeatureBins::Categorical { .. } => panic!("feature {f} is categorical"),
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

/// Rows per bin of feature 0 over all rows (value bins, then the missing bin).
fn bin_counts(m: &BinMapper, f: &Features) -> Vec<usize> {
    let b = m.transform(f).unwrap();
    let mut counts = vec![0usize; b.n_bins(0)];
    for r in 0..b.n_rows {
        counts[b.bin(r, 0)] += 1;
    }
    counts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Small data: the run-based thresholds are bit-identical to the original computation.
    #[test]
    fn thresholds_match_the_naive_twin(
        raw in proptest::collection::vec((0u8..12, -1e3f64..1e3, 0u8..4), 0..300),
        max_bins in 2usize..20,
        weighted in any::<bool>(),
    ) {
        // A few repeated values, −0/+0, NaN, and continuous values; weights 0 to 3.
        let v: Vec<f64> = raw.iter().map(|&(k, x, _)| match k {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3..=6 => f64::from(k),
            _ => x,
        }).collect();
        let w: Vec<f64> = raw.iter().map(|&(_, x, k)| f64::from(k) * (1.0 + x.abs() / 1e3)).collect();
        let w = weighted.then_some(&w[..]);
        let m = BinMapper::fit(&one_feature(v.clone()), max_bins, w).unwrap();
        prop_assert_eq!(bits(&thresholds(&m, 0)), bits(&naive_thresholds(&v, max_bins, w)));
    }
}

#[test]
fn up_to_the_sample_size_every_row_places_thresholds() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let v: Vec<f64> = (0..BIN_SAMPLE_ROWS).map(|_| rng.gen::<f64>().powi(3) * 100.0).collect();
    let w: Vec<f64> = (0..BIN_SAMPLE_ROWS).map(|i| (i % 5) as f64 * 0.5).collect();
    let f = one_feature(v.clone());
    assert_eq!(bits(&thresholds(&BinMapper::fit(&f, 255, None).unwrap(), 0)), bits(&naive_thresholds(&v, 255, None)));
    let m = BinMapper::fit(&f, 255, Some(&w)).unwrap();
    assert_eq!(bits(&thresholds(&m, 0)), bits(&naive_thresholds(&v, 255, Some(&w))));
}

/// A C-ordered `f32` matrix read as strided views (row-blocked sample gathering and
/// binning, the count of usable values stopped early) gives the thresholds of the per-feature
/// reference (`numeric_bins` reading its sampled rows itself, over contiguous `f64` columns)
/// and every bin of `bin_of_value`; NaN-heavy columns (at most `BIN_SAMPLE_ROWS` usable values:
/// exact thresholds), a sparse column, any thread count; the first infinite value is reported
/// as before (lowest feature, then first row), also inside a later block.
#[test]
fn row_blocked_binning_equals_the_per_feature_reference() {
    use super::super::view::Indices;
    let (n, d) = (BIN_SAMPLE_ROWS + 3 * BIN_BLOCK + 17, 5);
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    let mut m = vec![0.0f32; n * d];
    for i in 0..n {
        for f in 0..d {
            m[i * d + f] = match f {
                // Mostly missing: at most BIN_SAMPLE_ROWS usable values.
                1 if i % 5 != 0 => f32::NAN,
                2 => (rng.gen_range(0..40) as f32) * 0.5,
                _ if rng.gen_bool(0.02) => f32::NAN,
                _ => rng.gen::<f32>().powi(3) * 100.0,
            };
        }
    }
    let views: Vec<ColumnView<'_>> =
        (0..d).map(|f| ColumnView::Numeric(NumericView::strided_f32(&m[f..], d, n).unwrap())).collect();
    let names: Vec<String> = (0..d).map(|f| format!("f{f}")).collect();
    let cols: Vec<Vec<f64>> = (0..d).map(|f| (0..n).map(|i| f64::from(m[i * d + f])).collect()).collect();
    let sample = bin_sample_rows(n, None);
    let mapper = BinMapper::fit_views(&names, &views, 255, None).unwrap();
    for (f, col) in cols.iter().enumerate() {
        let want = numeric_bins(NumericView::f64(col), 255, None, sample.as_deref(), None);
        assert_eq!(bits(&thresholds(&mapper, f)), bits(&want), "feature {f}");
    }
    // Feature 1 has too few usable values to be sampled: every row places its thresholds.
    assert_eq!(bits(&thresholds(&mapper, 1)), bits(&numeric_thresholds(NumericView::f64(&cols[1]), 255, None)));
    for threads in [1, 2, 3] {
        let mut out = mapper.new_matrix(n);
        in_pool(threads, || mapper.bin_into(&names, &views, 0, &mut out)).unwrap();
        let BinData::U8(v) = &out.data else { panic!("u8 bins") };
        for (f, col) in cols.iter().enumerate() {
            let FeatureBins::Numeric { thresholds } = &mapper.features[f] else { panic!() };
            let want: Vec<u8> = col.iter().map(|&x| FeatureBins::bin_of_value(thresholds, x) as u8).collect();
            assert!(v[f * n..(f + 1) * n] == want[..], "feature {f}, {threads} threads");
        }
    }
    // A sparse column (its own walk over the stored rows) next to dense ones.
    let rows: Vec<i64> = (0..n as i64).filter(|r| r % 3 == 0).collect();
    let vals: Vec<f64> = rows.iter().map(|&r| (r % 1000) as f64).collect();
    let indptr = [0i64, rows.len() as i64];
    let sparse = NumericView::csc_columns(n, Indices::I64(&indptr), Indices::I64(&rows), NumericView::f64(&vals))
        .unwrap()
        .remove(0);
    let dense: Vec<f64> = (0..n).map(|i| sparse.get(i)).collect();
    let mixed = [views[0], ColumnView::Numeric(sparse)];
    let got = BinMapper::fit_views(&names[..2], &mixed, 255, None).unwrap();
    let want = numeric_bins(NumericView::f64(&dense), 255, None, sample.as_deref(), None);
    assert_eq!(bits(&thresholds(&got, 1)), bits(&want));
    assert_eq!(bits(&thresholds(&got, 0)), bits(&thresholds(&mapper, 0)));
    // Infinite values in features 3 and 4 (feature 3's first in a later block): feature 3's
    // first is reported.
    for (r, f) in [(n - 5, 3), (2 * BIN_BLOCK + 9, 3), (100, 4)] {
        m[r * d + f] = f32::INFINITY;
    }
    let views: Vec<ColumnView<'_>> =
        (0..d).map(|f| ColumnView::Numeric(NumericView::strided_f32(&m[f..], d, n).unwrap())).collect();
    let mut out = mapper.new_matrix(n);
    let e = mapper.bin_into(&names, &views, 0, &mut out).unwrap_err().to_string();
    assert!(e.contains(&format!("feature 'f3', row {}: infinite value", 2 * BIN_BLOCK + 10)), "{e}");
}

#[test]
fn sampled_thresholds_are_deterministic_in_range_and_balanced() {
    let n = 2 * BIN_SAMPLE_ROWS;
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    // Skewed, with a few ties: x³ rounded to 1e-9.
    let v: Vec<f64> = (0..n).map(|_| (rng.gen::<f64>().powi(3) * 1e9).round() / 1e9).collect();
    let f = one_feature(v.clone());
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    for (max_bins, tolerance) in [(16, 0.04), (255, 0.25)] {
        let one = in_pool(1, || BinMapper::fit(&f, max_bins, None).unwrap());
        let two = in_pool(2, || BinMapper::fit(&f, max_bins, None).unwrap());
        assert_eq!(one, two, "thread counts");
        assert_eq!(one, BinMapper::fit(&f, max_bins, None).unwrap(), "repeatable");
        let t = thresholds(&one, 0);
        assert_eq!(t.len(), max_bins - 1);
        assert!(t.windows(2).all(|p| p[0] < p[1]) && lo <= t[0] && t[max_bins - 2] <= hi, "{t:?}");
        // The sample was used (all rows would place other thresholds) ...
        assert_ne!(bits(&t), bits(&naive_thresholds(&v, max_bins, None)));
        // ... and each bin of all rows holds about its quantile share.
        let counts = bin_counts(&one, &f);
        let share = n as f64 / max_bins as f64;
        for c in &counts[..max_bins] {
            assert!((*c as f64 - share).abs() <= tolerance * share, "{max_bins} bins: {counts:?}");
        }
        assert_eq!(counts[max_bins], 0, "no missing values");
    }
}

#[test]
fn weights_of_sampled_rows_move_the_quantiles() {
    // Uniform on [0, 1), weight 3 above 1/2: the weighted median is 2/3.
    let n = 3 * BIN_SAMPLE_ROWS / 2;
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let v: Vec<f64> = (0..n).map(|_| rng.gen::<f64>()).collect();
    let w: Vec<f64> = v.iter().map(|&x| if x < 0.5 { 1.0 } else { 3.0 }).collect();
    let t = thresholds(&BinMapper::fit(&one_feature(v), 2, Some(&w)).unwrap(), 0);
    assert_eq!(t.len(), 1);
    assert!((t[0] - 2.0 / 3.0).abs() < 0.01, "{t:?}");
}

#[test]
fn few_distinct_values_stay_exact_under_sampling() {
    // 20 common values and 5 values of one row each (the sample misses some of them):
    // 25 distinct values ≤ max_bins, so every one gets its own bin, as without sampling.
    let n = 3 * BIN_SAMPLE_ROWS / 2;
    let rare = [2.5, 7.25, 11.125, 13.5, 19.75];
    let mut v: Vec<f64> = (0..n).map(|i| (i % 20) as f64).collect();
    for (k, &x) in rare.iter().enumerate() {
        v[1 + 7919 * k] = x;
    }
    v[3] = f64::NAN;
    let w: Vec<f64> = (0..n).map(|i| if i % 7 == 0 { 0.0 } else { 1.0 + (i % 3) as f64 }).collect();
    let f = one_feature(v.clone());
    for w in [None, Some(&w[..])] {
        let m = BinMapper::fit(&f, 255, w).unwrap();
        let all = naive_thresholds(&v, 255, w);
        assert_eq!(bits(&thresholds(&m, 0)), bits(&all));
    }
    // With fewer bins than distinct values, but no more sampled values than bins: one bin
    // per sampled value (every common value alone), a missed rare value beside a neighbour.
    let rows = sample_rows(n, None).unwrap();
    let mut seen: Vec<f64> = (0..20).map(f64::from).collect();
    seen.extend(rare.iter().copied().filter(|x| rows.iter().any(|&r| v[r] == *x)));
    seen.sort_by(f64::total_cmp);
    assert!(seen.len() < 25, "the sample should miss a rare value");
    let m = BinMapper::fit(&f, seen.len(), None).unwrap();
    let t = thresholds(&m, 0);
    assert_eq!(bits(&t), bits(&midpoints(&seen)));
    let common: Vec<usize> = (0..20).map(|x| FeatureBins::bin_of_value(&t, f64::from(x))).collect();
    for x in rare.into_iter().filter(|x| !seen.contains(x)) {
        let b = FeatureBins::bin_of_value(&t, x);
        assert!(b == common[x.floor() as usize] || b == common[x.ceil() as usize], "{x}: {t:?}");
    }
}

#[test]
fn zero_weight_rows_are_left_out_under_sampling() {
    // 250k rows of positive weight with 100k rows of weight 0 between them bin exactly as the
    // 250k rows alone: the sample is drawn among the rows of positive weight.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let (mut v, mut w, mut kept_v, mut kept_w) = (vec![], vec![], vec![], vec![]);
    while kept_v.len() < 250_000 {
        let x: f64 = rng.gen::<f64>() * 10.0;
        let wt = if rng.gen_bool(0.3) { 0.0 } else { rng.gen_range(0.5..2.0) };
        v.push(x);
        w.push(wt);
        if wt > 0.0 {
            kept_v.push(x);
            kept_w.push(wt);
        }
    }
    let m = BinMapper::fit(&one_feature(v), 255, Some(&w)).unwrap();
    let kept = BinMapper::fit(&one_feature(kept_v.clone()), 255, Some(&kept_w)).unwrap();
    assert_eq!(bits(&thresholds(&m, 0)), bits(&thresholds(&kept, 0)));
    assert_ne!(bits(&thresholds(&m, 0)), bits(&naive_thresholds(&kept_v, 255, Some(&kept_w))), "sampled");
}

#[test]
fn integer_weights_bin_like_repeated_rows() {
    // Frequency weights: weights 0..=3 on 160k rows (Σ w ≈ 240k > BIN_SAMPLE_ROWS, so both
    // sides sample) bin exactly as the rows repeated in place (np.repeat order): the same
    // sampled units, the same quantiles; a 12-valued feature keeps its exact midpoints.
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let n = 160_000;
    let v: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.05) { f64::NAN } else { rng.gen::<f64>() * 7.0 }).collect();
    let few: Vec<f64> = (0..n).map(|i| ((i * 7) % 12) as f64).collect();
    let w: Vec<f64> = (0..n).map(|_| f64::from(rng.gen_range(0u32..=3))).collect();
    let total: f64 = w.iter().sum();
    assert!(total > BIN_SAMPLE_ROWS as f64);
    let repeat =
        |x: &[f64]| -> Vec<f64> { x.iter().zip(&w).flat_map(|(&v, &k)| std::iter::repeat_n(v, k as usize)).collect() };
    let features = |a: Vec<f64>, b: Vec<f64>| Features {
        names: vec!["a".into(), "b".into()],
        columns: vec![Column::Numeric(a), Column::Numeric(b)],
    };
    let weighted = BinMapper::fit(&features(v.clone(), few.clone()), 255, Some(&w)).unwrap();
    let repeated = BinMapper::fit(&features(repeat(&v), repeat(&few)), 255, None).unwrap();
    for f in 0..2 {
        assert_eq!(bits(&thresholds(&weighted, f)), bits(&thresholds(&repeated, f)), "feature {f}");
    }
    assert_eq!(thresholds(&weighted, 1), midpoints(&(0..12).map(f64::from).collect::<Vec<_>>()));
    // Sampled, not exact: the full weighted quantiles differ.
    assert_ne!(bits(&thresholds(&weighted, 0)), bits(&naive_thresholds(&v, 255, Some(&w))), "sampled");
    // Huge weights (Σ w > 2^52) sample among 2^52 equal units of weight, within the range.
    let big: Vec<f64> = w.iter().map(|x| x * 1e20).collect();
    let t = thresholds(&BinMapper::fit(&one_feature(v.clone()), 255, Some(&big)).unwrap(), 0);
    assert_eq!(t.len(), 254);
    assert!(t.windows(2).all(|p| p[0] < p[1]) && t[0] > 0.0 && t[253] < 7.0);
}

#[test]
fn missing_values_and_categories_under_sampling() {
    let n = 3 * BIN_SAMPLE_ROWS / 2;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    // 30 % missing: still more than BIN_SAMPLE_ROWS values, sampled; 90 % missing: fewer, exact.
    let some: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.3) { f64::NAN } else { rng.gen::<f64>() }).collect();
    let sparse: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.9) { f64::NAN } else { rng.gen::<f64>() }).collect();
    let codes: Vec<u32> = (0..n).map(|i| if i % 11 == 0 { MISSING_CODE } else { (i % 3) as u32 }).collect();
    let f = Features {
        names: vec!["some".into(), "sparse".into(), "c".into()],
        columns: vec![
            Column::Numeric(some.clone()),
            Column::Numeric(sparse.clone()),
            Column::Categorical { codes: codes.clone(), levels: vec!["a".into(), "b".into(), "c".into()] },
        ],
    };
    let m = BinMapper::fit(&f, 255, None).unwrap();
    assert_ne!(bits(&thresholds(&m, 0)), bits(&naive_thresholds(&some, 255, None)), "sampled");
    assert_eq!(bits(&thresholds(&m, 1)), bits(&naive_thresholds(&sparse, 255, None)), "exact");
    assert_eq!(m.features[2], FeatureBins::Categorical { n_levels: 3 });
    let b = m.transform(&f).unwrap();
    for r in 0..n {
        assert_eq!(b.bin(r, 0) == 255, some[r].is_nan());
        assert_eq!(b.bin(r, 1) == 255, sparse[r].is_nan());
        assert_eq!(b.bin(r, 2), if codes[r] == MISSING_CODE { 3 } else { codes[r] as usize });
    }
}

#[test]
fn ragged_columns_and_weights_are_errors() {
    let f = Features {
        names: vec!["a".into(), "b".into()],
        columns: vec![Column::Numeric(vec![1.0, 2.0]), Column::Numeric(vec![1.0])],
    };
    assert!(BinMapper::fit(&f, 255, None).unwrap_err().to_string().contains("'b' has 1 rows"));
    let f = one_feature(vec![1.0, 2.0]);
    assert!(BinMapper::fit(&f, 255, Some(&[1.0])).unwrap_err().to_string().contains("1 sample weights"));
}

#[test]
fn small_data_thresholds_are_midpoints() {
    let f = Features { names: vec!["x".into()], columns: vec![Column::Numeric(vec![3.0, 1.0, 2.0, 2.0, f64::NAN])] };
    let m = BinMapper::fit(&f, 255, None).unwrap();
    assert_eq!(m.features[0], FeatureBins::Numeric { thresholds: vec![1.5, 2.5] });
    let b = m.transform(&f).unwrap();
    assert_eq!((0..5).map(|r| b.bin(r, 0)).collect::<Vec<_>>(), vec![2, 0, 1, 1, 3]);
    assert!(matches!(b.data, BinData::U8(_)));
}

#[test]
fn zero_weight_rows_place_no_thresholds() {
    // Weight 0 is the same as leaving the row out (scikit-learn's sample-weight equivalence).
    let f = Features { names: vec!["x".into()], columns: vec![Column::Numeric(vec![1.0, 2.0, 3.0, 4.0])] };
    let m = BinMapper::fit(&f, 255, Some(&[1.0, 0.0, 2.0, 1.0])).unwrap();
    assert_eq!(m.features[0], FeatureBins::Numeric { thresholds: vec![2.0, 3.5] });
    let kept = Features { names: vec!["x".into()], columns: vec![Column::Numeric(vec![1.0, 3.0, 4.0])] };
    assert_eq!(BinMapper::fit(&kept, 255, None).unwrap(), m);
}

#[test]
fn quantile_bins_respect_the_limit_and_balance() {
    let v: Vec<f64> = (0..10_000).map(|i| (i as f64).sqrt()).collect();
    let f = Features { names: vec!["x".into()], columns: vec![Column::Numeric(v)] };
    let m = BinMapper::fit(&f, 16, None).unwrap();
    let FeatureBins::Numeric { thresholds } = &m.features[0] else { panic!() };
    assert_eq!(thresholds.len(), 15);
    let b = m.transform(&f).unwrap();
    let mut counts = [0usize; 17];
    for r in 0..10_000 {
        counts[b.bin(r, 0)] += 1;
    }
    for c in &counts[..16] {
        assert!((*c as i64 - 625).abs() <= 2, "{counts:?}");
    }
}

#[test]
fn wide_bins_and_categorical_limits() {
    let v: Vec<f64> = (0..1000).map(f64::from).collect();
    let f = Features { names: vec!["x".into()], columns: vec![Column::Numeric(v)] };
    let b = BinMapper::fit(&f, 1000, None).unwrap().transform(&f).unwrap();
    assert!(matches!(b.data, BinData::U16(_)));
    assert_eq!(b.bin(999, 0), 999);
    let levels: Vec<String> = (0..300).map(|i| format!("c{i}")).collect();
    let f =
        Features { names: vec!["c".into()], columns: vec![Column::Categorical { codes: (0..300).collect(), levels }] };
    let e = BinMapper::fit(&f, 255, None).unwrap_err().to_string();
    assert!(e.contains("300 categories"), "{e}");
    assert!(BinMapper::fit(&f, 300, None).is_ok());
}

#[test]
fn midpoint_of_adjacent_floats_separates_them() {
    let a = 1.0f64;
    let b = f64::from_bits(a.to_bits() + 1);
    let m = midpoint(a, b);
    assert!(a <= m && m < b);
}

/// Chunked columns (an Arrow table in record batches, empty batches included, boundaries inside
/// the binning blocks) give the thresholds and bins of the same values in one buffer, on any
/// number of threads.
#[test]
fn chunked_columns_bin_as_one_buffer() {
    use crate::data::view::{Chunk, ChunkedColumn};
    use std::sync::Arc;
    let n = 2 * BIN_BLOCK + BIN_SAMPLE_ROWS / 3 + 17;
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let a: Vec<f32> = (0..n).map(|_| if rng.gen_bool(0.05) { f32::NAN } else { rng.gen::<f32>() * 50.0 }).collect();
    let b: Vec<f64> = (0..n).map(|_| (rng.gen_range(0..30) as f64) * 0.25).collect();
    let mut cuts: Vec<usize> = (0..6).map(|_| rng.gen_range(0..=n)).collect();
    cuts.extend([0, n, BIN_BLOCK, BIN_BLOCK]);
    cuts.sort_unstable();
    let ca =
        ChunkedColumn::new(cuts.windows(2).map(|w| Chunk::F32(Arc::new(a[w[0]..w[1]].to_vec()))).collect()).unwrap();
    let cb =
        ChunkedColumn::new(cuts.windows(2).map(|w| Chunk::F64(Arc::new(b[w[0]..w[1]].to_vec()))).collect()).unwrap();
    let names = vec!["a".to_string(), "b".to_string()];
    let whole = [ColumnView::Numeric(NumericView::f32(&a)), ColumnView::Numeric(NumericView::f64(&b))];
    let chunked = [ColumnView::Numeric(NumericView::chunked(&ca)), ColumnView::Numeric(NumericView::chunked(&cb))];
    let want = BinMapper::fit_views(&names, &whole, 255, None).unwrap();
    let got = BinMapper::fit_views(&names, &chunked, 255, None).unwrap();
    for f in 0..2 {
        assert_eq!(bits(&thresholds(&got, f)), bits(&thresholds(&want, f)), "feature {f}");
    }
    let mut want_bins = want.new_matrix(n);
    want.bin_into(&names, &whole, 0, &mut want_bins).unwrap();
    for threads in [1, 2, 3] {
        let mut out = want.new_matrix(n);
        in_pool(threads, || want.bin_into(&names, &chunked, 0, &mut out)).unwrap();
        let (BinData::U8(x), BinData::U8(y)) = (&out.data, &want_bins.data) else { panic!("u8 bins") };
        assert!(x == y, "{threads} threads");
    }
}
