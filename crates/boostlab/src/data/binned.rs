//! [`BinnedData`]: everything training needs, and nothing else.
//!
//! Training reads the bins, never the feature values: once a source has been binned — from an
//! in-memory [`Dataset`], from [`ColumnView`]s of the caller's buffers, or chunk by chunk from a
//! streamed file with [`BinMapper::from_summaries`] and [`BinMapper::bin_into`] — the values can
//! be dropped. Training memory is then the bins (1 byte per row and feature, 2 with more than 255
//! bins) plus the per-row state of the boosting loop (see the README's memory formula).

use super::{check_target_and_weights, check_trainable_target, BinMapper, BinnedMatrix, ColumnView, Dataset, Target};
use crate::data::Schema;
use crate::error::{Error, Result};

/// Binned training data: the schema (names, kinds, levels), the bin mapper, the bins, the target
/// and the sample weights. [`crate::Trainer::fit_binned`] trains on it.
#[derive(Debug, Clone, PartialEq)]
pub struct BinnedData {
    /// Names, kinds and category levels of the features (stored in the model).
    pub schema: Schema,
    /// The bins of every feature (stored in the trees' thresholds).
    pub mapper: BinMapper,
    /// The bin of every (row, feature).
    pub bins: BinnedMatrix,
    /// The training target.
    pub target: Target,
    /// Per-row sample weights (finite, ≥ 0, not all zero).
    pub sample_weight: Option<Vec<f64>>,
}

impl BinnedData {
    /// Assembles and validates binned data: one mapper entry, one schema entry and one bin
    /// column per feature with matching kinds; target and weights as [`Dataset::new`] checks
    /// them.
    pub fn new(
        schema: Schema,
        mapper: BinMapper,
        bins: BinnedMatrix,
        target: Target,
        sample_weight: Option<Vec<f64>>,
    ) -> Result<BinnedData> {
        let d = schema.names.len();
        if schema.kinds.len() != d || schema.levels.len() != d || mapper.features.len() != d || bins.n_features != d {
            return Err(Error::InvalidData(format!(
                "binned data: {d} feature names, {} kinds, {} level lists, {} binned features, {} bin columns",
                schema.kinds.len(),
                schema.levels.len(),
                mapper.features.len(),
                bins.n_features
            )));
        }
        for (f, (fb, kind)) in mapper.features.iter().zip(&schema.kinds).enumerate() {
            if fb.kind() != *kind {
                return Err(Error::InvalidData(format!(
                    "feature '{}': bins and schema differ in kind",
                    schema.names[f]
                )));
            }
        }
        check_target_and_weights(bins.n_rows, Some(&target), sample_weight.as_deref())?;
        Ok(BinnedData { schema, mapper, bins, target, sample_weight })
    }

    /// Bins column views of the caller's buffers (`schema.names` name them in errors): learns the
    /// bins ([`BinMapper::fit_views`], the sample rule included) and bins every row. Nothing but
    /// the bins is kept; the views are only read.
    pub fn from_views(
        schema: Schema,
        columns: &[ColumnView<'_>],
        target: Target,
        sample_weight: Option<Vec<f64>>,
        max_bins: usize,
    ) -> Result<BinnedData> {
        if columns.len() != schema.names.len() {
            return Err(Error::InvalidData(format!(
                "{} feature columns for {} feature names",
                columns.len(),
                schema.names.len()
            )));
        }
        let n = columns.first().map_or(0, ColumnView::len);
        // Target and weights first: their errors do not wait for the binning.
        check_target_and_weights(n, Some(&target), sample_weight.as_deref())?;
        let mapper = BinMapper::fit_views(&schema.names, columns, max_bins, sample_weight.as_deref())?;
        let mut bins = mapper.new_matrix(n);
        mapper.bin_into(&schema.names, columns, 0, &mut bins)?;
        BinnedData::new(schema, mapper, bins, target, sample_weight)
    }

    /// Bins a dataset (which must have a target) with at most `max_bins` bins per feature.
    pub fn from_dataset(data: &Dataset, max_bins: usize) -> Result<BinnedData> {
        let views: Vec<ColumnView<'_>> = data.features.columns.iter().map(ColumnView::of).collect();
        BinnedData::from_views(
            Schema::from_features(&data.features),
            &views,
            data.target()?.clone(),
            data.sample_weight.clone(),
            max_bins,
        )
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.bins.n_rows
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.bins.n_features
    }

    /// Checks that the data can be trained on (see [`Dataset::check_trainable`]).
    pub fn check_trainable(&self) -> Result<()> {
        check_trainable_target(self.n_rows(), self.n_features(), &self.target, self.sample_weight.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::boost::driver::{fit_binned, fit_with};
    use crate::data::{
        bin_sample_rows, Column, FeatureSummary, Features, Indices, NumericSummary, NumericView, BIN_SAMPLE_ROWS,
    };
    use crate::{Algorithm, BoostParams, Output, Prediction};

    /// A C-ordered `n × d` f32 matrix: continuous, few distinct values, mostly missing, with
    /// ties; and a label depending on it.
    fn matrix(n: usize, d: usize, seed: u64) -> (Vec<f32>, Vec<u32>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut x = vec![0f32; n * d];
        for r in 0..n {
            for f in 0..d {
                x[r * d + f] = match f % 4 {
                    0 => rng.gen::<f32>() * 10.0 - 5.0,
                    1 => (rng.gen_range(0..7) as f32) * 0.5,
                    2 if rng.gen_bool(0.9) => f32::NAN,
                    2 => rng.gen::<f32>(),
                    _ => (rng.gen::<f32>() * 100.0).round() / 100.0,
                };
            }
        }
        let y = (0..n).map(|r| u32::from(x[r * d] + x[r * d + 1] > 1.0 || rng.gen_bool(0.1))).collect();
        (x, y)
    }

    fn dataset(x: &[f32], y: &[u32], n: usize, d: usize, w: Option<Vec<f64>>) -> Dataset {
        let columns = (0..d).map(|f| Column::Numeric((0..n).map(|r| f64::from(x[r * d + f])).collect())).collect();
        let names = (0..d).map(|f| format!("f{f}")).collect();
        let target = Target::Classes { y: y.to_vec(), classes: vec!["0".into(), "1".into()] };
        Dataset::new(Features { names, columns }, Some(target), w).unwrap()
    }

    fn c_order_views(x: &[f32], n: usize, d: usize) -> Vec<ColumnView<'_>> {
        (0..d).map(|f| ColumnView::Numeric(NumericView::strided_f32(&x[f..], d, n).unwrap())).collect()
    }

    /// Staged prediction stops with `Cancelled` once the token is set (Ctrl-C in Python), and
    /// equals the plain staged prediction otherwise.
    #[test]
    fn staged_prediction_is_cancellable() {
        let (n, d) = (1500, 4);
        let (x, y) = matrix(n, d, 3);
        let data = dataset(&x, &y, n, d, None);
        let params = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 5, ..Default::default() };
        let model = fit_with(&data, &params, &mut |_| {}).unwrap();
        let views = c_order_views(&x, n, d);
        let mut plain = vec![0.0; 5 * n];
        model.predict_into(&views, &Prediction::new(Output::Staged), &mut plain).unwrap();
        let cancel = crate::util::cancel::Cancel::new();
        let mut out = vec![0.0; 5 * n];
        model.predict_into(&views, &Prediction::new(Output::Staged).cancel(&cancel), &mut out).unwrap();
        assert_eq!(out, plain);
        cancel.cancel();
        let err = model.predict_into(&views, &Prediction::new(Output::Staged).cancel(&cancel), &mut out).unwrap_err();
        assert!(matches!(err, crate::Error::Cancelled), "{err}");
    }

    #[test]
    fn fit_binned_on_f32_views_equals_fit_on_f64_columns() {
        let (n, d) = (3000, 6);
        let (x, y) = matrix(n, d, 1);
        let w: Vec<f64> = (0..n).map(|i| (i % 3) as f64 * 0.5).collect();
        for (algo, leaves, weights) in [
            (Algorithm::AdaBoost, 2, None),
            (Algorithm::RealAdaBoost, 8, Some(w.clone())),
            (Algorithm::TAdaBoost, 8, None),
        ] {
            let mut params = BoostParams { algorithm: algo, n_estimators: 15, ..Default::default() };
            params.tree.max_leaves = leaves;
            let data = dataset(&x, &y, n, d, weights.clone());
            let reference = fit_with(&data, &params, &mut |_| {}).unwrap().to_json().unwrap();
            let binned = BinnedData::from_views(
                Schema::from_features(&data.features),
                &c_order_views(&x, n, d),
                data.target.clone().unwrap(),
                weights,
                params.max_bins,
            )
            .unwrap();
            let model = fit_binned(&binned, &params, &mut |_| {}).unwrap();
            assert_eq!(model.to_json().unwrap(), reference, "{algo:?}");
            // Prediction straight from the f32 views (any block), and staged, equal the columns'.
            let views = c_order_views(&x, n, d);
            let mut s = vec![0.0; n];
            model.predict_into(&views, &Prediction::scores().clipped(true), &mut s).unwrap();
            assert_eq!(s, model.predict(&data.features, &Prediction::scores().clipped(true)).unwrap());
            let t = model.n_trees();
            let mut staged = vec![0.0; t * n];
            model.predict_into(&views, &Prediction::new(Output::Staged), &mut staged).unwrap();
            let mut expect = Vec::new();
            model.for_each_stage(&data.features, false, |_, st| expect.extend_from_slice(st)).unwrap();
            assert_eq!(staged, expect);
        }
    }

    #[test]
    fn bins_in_chunks_equal_bins_at_once_and_infinity_is_an_error() {
        let (n, d) = (5000, 4);
        let (x, _) = matrix(n, d, 2);
        let names: Vec<String> = (0..d).map(|f| format!("f{f}")).collect();
        let views = c_order_views(&x, n, d);
        let mapper = BinMapper::fit_views(&names, &views, 255, None).unwrap();
        let mut whole = mapper.new_matrix(n);
        mapper.bin_into(&names, &views, 0, &mut whole).unwrap();
        let mut chunked = mapper.new_matrix(n);
        for r0 in (0..n).step_by(777) {
            let chunk: Vec<ColumnView<'_>> = views.iter().map(|v| v.rows(r0, r0 + 777)).collect();
            mapper.bin_into(&names, &chunk, r0, &mut chunked).unwrap();
        }
        assert_eq!(whole, chunked);
        // The same values as f64 in Fortran order bin identically.
        let fortran: Vec<f64> =
            (0..d).flat_map(|f| (0..n).map(move |r| (f, r))).map(|(f, r)| f64::from(x[r * d + f])).collect();
        let fviews: Vec<ColumnView<'_>> =
            (0..d).map(|f| ColumnView::Numeric(NumericView::f64(&fortran[f * n..(f + 1) * n]))).collect();
        assert_eq!(BinMapper::fit_views(&names, &fviews, 255, None).unwrap(), mapper);
        let mut y = x.clone();
        y[7 * d + 2] = f32::INFINITY;
        let e = mapper.bin_into(&names, &c_order_views(&y, n, d), 0, &mut whole).unwrap_err().to_string();
        assert!(e.contains("feature 'f2', row 8: infinite value"), "{e}");
        let e = mapper.bin_into(&names, &views, n - 10, &mut whole).unwrap_err().to_string();
        assert!(e.contains("do not fit"), "{e}");
    }

    #[test]
    fn mapper_from_streamed_summaries_equals_fit_views() {
        // Sampled (more than BIN_SAMPLE_ROWS rows) and unsampled, weighted and not, max_bins 255
        // and 16: every kind of feature of `matrix` (continuous, 7 values, 90 % missing, ties),
        // plus 20 common values with 5 rare ones the sample misses.
        for (n, max_bins, weighted) in
            [(BIN_SAMPLE_ROWS + 50_000, 255, false), (BIN_SAMPLE_ROWS + 50_000, 16, true), (5000, 255, true)]
        {
            let d = 4;
            let (mut x, _) = matrix(n, d, 3);
            let rare = [2.5f32, 7.25, 11.125, 13.5, 19.75];
            for r in 0..n {
                x[r * d + 1] = (r % 20) as f32;
            }
            for (k, &v) in rare.iter().enumerate() {
                let r = (1 + 7919 * k) % n;
                x[r * d + 1] = v;
            }
            let w: Vec<f64> = (0..n).map(|i| if i % 7 == 0 { 0.0 } else { 1.0 + (i % 3) as f64 }).collect();
            let w = weighted.then_some(&w[..]);
            let names: Vec<String> = (0..d).map(|f| format!("f{f}")).collect();
            let mut views = c_order_views(&x, n, d);
            let codes: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
            views.push(ColumnView::Categorical { codes: &codes, n_levels: 3 });
            let mut names5 = names.clone();
            names5.push("c".into());
            let fitted = BinMapper::fit_views(&names5, &views, max_bins, w).unwrap();
            let sample = bin_sample_rows(n, w);
            let mut sums: Vec<NumericSummary> =
                (0..d).map(|_| NumericSummary::new(max_bins, weighted, sample.is_some())).collect();
            let mut next = sample.as_deref().unwrap_or(&[]).iter().copied().peekable();
            for r in 0..n {
                // Frequency weights: a row is listed once per sampled unit of its weight.
                let mut times = 0;
                while next.next_if_eq(&r).is_some() {
                    times += 1;
                }
                for (f, s) in sums.iter_mut().enumerate() {
                    s.push(f64::from(x[r * d + f]), w.map_or(1.0, |w| w[r]), times);
                }
            }
            let mut summaries: Vec<FeatureSummary> = sums.into_iter().map(FeatureSummary::Numeric).collect();
            summaries.push(FeatureSummary::Categorical { n_levels: 3 });
            let streamed = BinMapper::from_summaries(&names5, summaries, max_bins).unwrap();
            assert_eq!(streamed, fitted, "n = {n}, max_bins = {max_bins}, weighted = {weighted}");
        }
    }

    /// A sparse version of `matrix` (column-major `f64` columns, 80 % of the non-missing values set
    /// to 0) and its CSC arrays: every value whose bits are not +0.0 is stored (NaN and −0.0
    /// included), and every 5th +0.0 too, as an explicit zero.
    #[allow(clippy::type_complexity)]
    fn sparse_matrix(n: usize, d: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<i64>, Vec<i64>, Vec<f64>) {
        let (x, _) = matrix(n, d, seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed + 100);
        let mut cols = vec![vec![0.0; n]; d];
        let (mut indptr, mut indices, mut data) = (vec![0i64], Vec::new(), Vec::new());
        for (f, col) in cols.iter_mut().enumerate() {
            for (r, c) in col.iter_mut().enumerate() {
                let v = f64::from(x[r * d + f]);
                *c = if v.is_nan() || rng.gen_bool(0.2) { v } else { 0.0 };
                if r % 977 == 3 {
                    *c = -0.0;
                }
                if c.to_bits() != 0 || r % 5 == 0 {
                    indices.push(r as i64);
                    data.push(*c);
                }
            }
            indptr.push(indices.len() as i64);
        }
        (cols, indptr, indices, data)
    }

    #[test]
    fn sparse_columns_bin_and_fit_exactly_as_dense_ones() {
        // Unsampled and sampled (more than BIN_SAMPLE_ROWS rows), weighted and not; indices as
        // i32 and i64, values as f32 and f64: the same mapper, bins and (small n) model.
        for (n, weighted, fit) in [(3000, true, true), (3000, false, true), (BIN_SAMPLE_ROWS + 30_000, false, false)] {
            let d = 4;
            let (cols, indptr, indices, data) = sparse_matrix(n, d, 7);
            let names: Vec<String> = (0..d).map(|f| format!("f{f}")).collect();
            let dense: Vec<ColumnView<'_>> = cols.iter().map(|c| ColumnView::Numeric(NumericView::f64(c))).collect();
            let w: Vec<f64> = (0..n).map(|i| if i % 7 == 0 { 0.0 } else { 1.0 + (i % 3) as f64 }).collect();
            let w = weighted.then_some(&w[..]);
            let mapper = BinMapper::fit_views(&names, &dense, 255, w).unwrap();
            let mut bins = mapper.new_matrix(n);
            mapper.bin_into(&names, &dense, 0, &mut bins).unwrap();
            let (p32, i32s): (Vec<i32>, Vec<i32>) =
                (indptr.iter().map(|&p| p as i32).collect(), indices.iter().map(|&i| i as i32).collect());
            let d32: Vec<f32> = data.iter().map(|&v| v as f32).collect();
            let variants = [
                (Indices::I64(&indptr), Indices::I64(&indices), NumericView::f64(&data)),
                (Indices::I32(&p32), Indices::I32(&i32s), NumericView::f32(&d32)),
                (Indices::I32(&p32), Indices::I32(&i32s), NumericView::f64(&data)),
                (Indices::I64(&indptr), Indices::I64(&indices), NumericView::f32(&d32)),
            ];
            for (k, (ip, ix, vals)) in variants.into_iter().enumerate() {
                let sparse: Vec<ColumnView<'_>> =
                    NumericView::csc_columns(n, ip, ix, vals).unwrap().into_iter().map(ColumnView::Numeric).collect();
                // The values the binner sees: the dense ones, bit for bit.
                for (c, v) in cols.iter().zip(&sparse) {
                    let ColumnView::Numeric(v) = v else { unreachable!() };
                    let mut seen = vec![1.0; n];
                    v.copy_into(&mut seen);
                    assert!(seen.iter().zip(c).all(|(a, b)| a.to_bits() == b.to_bits()), "variant {k}");
                    for i in [0, 1, 3, 5, n / 2, n - 1] {
                        assert_eq!(v.get(i).to_bits(), c[i].to_bits());
                    }
                    let picked = [0, 2, 3, 977, 978, n / 3, n - 2];
                    let mut got = Vec::new();
                    v.rows(0, n).for_rows(&picked, |r, x| got.push((r, x.to_bits())));
                    assert_eq!(got, picked.iter().map(|&r| (r, c[r].to_bits())).collect::<Vec<_>>());
                    let window = v.rows(977, 977 + 2000);
                    assert!(window.iter().zip(&c[977..]).all(|(a, b)| a.to_bits() == b.to_bits()));
                }
                let m = BinMapper::fit_views(&names, &sparse, 255, w).unwrap();
                assert_eq!(m, mapper, "n = {n}, variant {k}");
                let mut sb = m.new_matrix(n);
                for r0 in (0..n).step_by(4096) {
                    let chunk: Vec<ColumnView<'_>> = sparse.iter().map(|v| v.rows(r0, r0 + 4096)).collect();
                    m.bin_into(&names, &chunk, r0, &mut sb).unwrap();
                }
                assert_eq!(sb, bins, "n = {n}, variant {k}");
                if !fit {
                    continue;
                }
                let y: Vec<u32> = (0..n).map(|r| u32::from(cols[0][r] + cols[1][r] > 0.5 || r % 11 == 0)).collect();
                let target = Target::Classes { y, classes: vec!["0".into(), "1".into()] };
                let schema = Schema::from_features(&Features {
                    names: names.clone(),
                    columns: cols.iter().map(|c| Column::Numeric(c.clone())).collect(),
                });
                let mut params =
                    BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 10, ..Default::default() };
                params.tree.max_leaves = 8;
                let wv = w.map(<[f64]>::to_vec);
                let model = |views: &[ColumnView<'_>]| {
                    let b = BinnedData::from_views(schema.clone(), views, target.clone(), wv.clone(), 255).unwrap();
                    fit_binned(&b, &params, &mut |_| {}).unwrap()
                };
                let (md, ms) = (model(&dense), model(&sparse));
                assert_eq!(ms.to_json().unwrap(), md.to_json().unwrap(), "variant {k}");
                let (mut a, mut b) = (vec![0.0; n], vec![0.0; n]);
                md.predict_into(&dense, &Prediction::scores().clipped(true), &mut a).unwrap();
                ms.predict_into(&sparse, &Prediction::scores().clipped(true), &mut b).unwrap();
                assert_eq!(a, b);
                let t = md.n_trees();
                let (mut a, mut b) = (vec![0.0; t * n], vec![0.0; t * n]);
                md.predict_into(&dense, &Prediction::new(Output::Staged), &mut a).unwrap();
                ms.predict_into(&sparse, &Prediction::new(Output::Staged), &mut b).unwrap();
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn malformed_csc_is_an_error_naming_the_problem() {
        let vals = [1.0, 2.0, 3.0];
        let err = |ip: &[i64], ix: &[i64], n: usize| {
            NumericView::csc_columns(n, Indices::I64(ip), Indices::I64(ix), NumericView::f64(&vals))
                .unwrap_err()
                .to_string()
        };
        assert!(err(&[0, 2, 3], &[1, 0, 2], 4).contains("column 0: row index 0 after 1"));
        assert!(err(&[0, 2, 3], &[0, 1, 4], 4).contains("column 1: row index 4"));
        assert!(err(&[0, 2, 4], &[0, 1, 2], 4).contains("column 1 spans 2..4 of 3 stored values"));
        assert!(err(&[0, 2, 1], &[0, 1, 2], 4).contains("column 1 spans 2..1"));
        assert!(err(&[], &[], 4).contains("indptr is empty"));
        let strided = NumericView::strided_f64(&vals, 2, 2).unwrap();
        let e = NumericView::csc_columns(4, Indices::I64(&[0, 2]), Indices::I64(&[0, 1]), strided).unwrap_err();
        assert!(e.to_string().contains("contiguous"), "{e}");
        // Empty columns and an all-zero matrix are fine.
        let ok =
            NumericView::csc_columns(3, Indices::I32(&[0, 0, 0]), Indices::I32(&[]), NumericView::f64(&[])).unwrap();
        assert_eq!(ok.len(), 2);
        assert_eq!(ok[1].iter().collect::<Vec<_>>(), vec![0.0; 3]);
    }
}
