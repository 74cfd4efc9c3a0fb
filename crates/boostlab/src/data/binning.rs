//! Binning: [`BinMapper`] learns at most `max_bins` bins per feature; [`BinnedMatrix`] stores the
//! bin of every (row, feature) column-major, as `u8` when every feature fits in 256 bins (values
//! plus the missing bin), as `u16` otherwise.
//!
//! Numeric features with no more distinct values than `max_bins` get one bin per value and
//! thresholds exactly at the midpoints between successive observed values, so small data are split
//! exactly as the papers do. Otherwise thresholds are weighted quantiles. Categorical features keep
//! their codes as bins. The last bin of every feature holds missing values.

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use super::{Column, FeatureKind, Features, MISSING_CODE};
use crate::error::{Error, Result};

/// The bins of one feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum FeatureBins {
    /// Bin `b` holds values `x` with `thresholds[b−1] < x ≤ thresholds[b]`; there are
    /// `thresholds.len() + 1` value bins.
    Numeric {
        /// Strictly increasing upper bounds.
        thresholds: Vec<f64>,
    },
    /// Bin = category code.
    Categorical {
        /// Number of levels.
        n_levels: usize,
    },
}

impl FeatureBins {
    /// The feature kind these bins are for.
    pub fn kind(&self) -> FeatureKind {
        match self {
            FeatureBins::Numeric { .. } => FeatureKind::Numeric,
            FeatureBins::Categorical { .. } => FeatureKind::Categorical,
        }
    }

    /// Number of value bins (the missing bin has this index).
    pub fn n_value_bins(&self) -> usize {
        match self {
            FeatureBins::Numeric { thresholds } => thresholds.len() + 1,
            FeatureBins::Categorical { n_levels } => *n_levels,
        }
    }

    /// The bin of a numeric value (`NaN` → the missing bin).
    #[inline]
    pub fn bin_of_value(thresholds: &[f64], x: f64) -> usize {
        if x.is_nan() {
            thresholds.len() + 1
        } else {
            thresholds.partition_point(|&t| t < x)
        }
    }
}

/// Learns the bins of every feature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinMapper {
    /// One entry per feature.
    pub features: Vec<FeatureBins>,
}

/// Midpoint `m` of `a < b` with `a ≤ m < b` even for adjacent floats.
fn midpoint(a: f64, b: f64) -> f64 {
    let m = a + (b - a) / 2.0;
    if m >= b {
        a
    } else {
        m
    }
}

impl BinMapper {
    /// Learns bins from `features` (weighted by `sample_weight` when given).
    ///
    /// `max_bins`: value bins per feature, by default 255; valid range 2..=65535. A categorical
    /// feature with more levels than `max_bins` is an error.
    pub fn fit(features: &Features, max_bins: usize, sample_weight: Option<&[f64]>) -> Result<BinMapper> {
        if !(2..=65535).contains(&max_bins) {
            return Err(Error::param("max_bins", "an integer in 2..=65535", max_bins));
        }
        // Features are independent: learn them in parallel (each result is the same as alone).
        let out = features
            .columns
            .par_iter()
            .enumerate()
            .map(|(f, col)| match col {
                Column::Numeric(v) => {
                    Ok(FeatureBins::Numeric { thresholds: numeric_thresholds(v, max_bins, sample_weight) })
                }
                Column::Categorical { levels, .. } => {
                    if levels.len() > max_bins {
                        return Err(Error::InvalidData(format!(
                            "categorical feature '{}' has {} categories, more than max_bins = {max_bins} \
                             (raise max_bins, up to 65535, or recode the feature)",
                            features.names[f],
                            levels.len()
                        )));
                    }
                    Ok(FeatureBins::Categorical { n_levels: levels.len() })
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(BinMapper { features: out })
    }

    /// Bins `features` (which must have the kinds this mapper was fitted on).
    pub fn transform(&self, features: &Features) -> Result<BinnedMatrix> {
        if features.n_features() != self.features.len() {
            return Err(Error::InvalidData(format!(
                "{} features, the bin mapper expects {}",
                features.n_features(),
                self.features.len()
            )));
        }
        let n = features.n_rows();
        let wide = self.features.iter().any(|b| b.n_value_bins() + 1 > 256);
        let mut offsets = Vec::with_capacity(self.features.len() + 1);
        offsets.push(0);
        for b in &self.features {
            offsets.push(offsets.last().copied().unwrap_or(0) + b.n_value_bins() + 1);
        }
        for (f, (fb, col)) in self.features.iter().zip(&features.columns).enumerate() {
            if fb.kind() != col.kind() {
                return Err(Error::InvalidData(format!(
                    "feature '{}' changed kind between fitting and binning",
                    features.names[f]
                )));
            }
        }
        // Written straight into the final width, one column per task: no wider temporary copy.
        let data = if wide {
            let mut v = vec![0u16; n * self.features.len()];
            self.fill_bins(features, &mut v, |b| b as u16);
            BinData::U16(v)
        } else {
            let mut v = vec![0u8; n * self.features.len()];
            self.fill_bins(features, &mut v, |b| b as u8);
            BinData::U8(v)
        };
        Ok(BinnedMatrix { n_rows: n, n_features: self.features.len(), offsets, data })
    }

    /// Fills the column-major `out` (`n × n_features`) with the bins of `features` (kinds already
    /// checked), one feature per parallel task.
    fn fill_bins<T: Copy + Send>(&self, features: &Features, out: &mut [T], conv: fn(u32) -> T) {
        let n = features.n_rows();
        if n == 0 {
            return;
        }
        out.par_chunks_mut(n).zip(self.features.par_iter().zip(&features.columns)).for_each(|(dst, (fb, col))| {
            match (fb, col) {
                (FeatureBins::Numeric { thresholds }, Column::Numeric(v)) => {
                    for (o, &x) in dst.iter_mut().zip(v) {
                        *o = conv(FeatureBins::bin_of_value(thresholds, x) as u32);
                    }
                }
                (FeatureBins::Categorical { n_levels }, Column::Categorical { codes, .. }) => {
                    for (o, &c) in dst.iter_mut().zip(codes) {
                        let b = if c == MISSING_CODE || c as usize >= *n_levels { *n_levels as u32 } else { c };
                        *o = conv(b);
                    }
                }
                // Kinds are checked by `transform` before.
                _ => {}
            }
        });
    }
}

fn numeric_thresholds(v: &[f64], max_bins: usize, w: Option<&[f64]>) -> Vec<f64> {
    // Distinct values with their total weight.
    let mut distinct: Vec<(f64, f64)> = Vec::new();
    match w {
        None => {
            // Unit weights: sort the bare values (half the bytes of (value, weight) pairs) and
            // count; counts are exact integers, the same as summing ones in any order.
            let mut xs: Vec<f64> = v.iter().copied().filter(|x| !x.is_nan()).collect();
            xs.sort_unstable_by(f64::total_cmp);
            for x in xs {
                match distinct.last_mut() {
                    Some(last) if last.0 == x => last.1 += 1.0,
                    _ => distinct.push((x, 1.0)),
                }
            }
        }
        Some(w) => {
            // Rows of zero weight do not place thresholds: weight 0 is the same as leaving the row out.
            let mut pairs: Vec<(f64, f64)> =
                v.iter().zip(w).filter(|(x, wt)| !x.is_nan() && **wt > 0.0).map(|(&x, &wt)| (x, wt)).collect();
            pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (x, wt) in pairs {
                match distinct.last_mut() {
                    Some(last) if last.0 == x => last.1 += wt,
                    _ => distinct.push((x, wt)),
                }
            }
        }
    }
    if distinct.is_empty() {
        return Vec::new();
    }
    if distinct.len() <= max_bins {
        return distinct.windows(2).map(|p| midpoint(p[0].0, p[1].0)).collect();
    }
    // Weighted quantiles: cut whenever the cumulative weight passes the next multiple of
    // total / max_bins (a distinct value is never split).
    let total: f64 = distinct.iter().map(|d| d.1).sum();
    let mut out = Vec::with_capacity(max_bins - 1);
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

/// The bins of every (feature, row), column-major.
#[derive(Debug, Clone, PartialEq)]
pub enum BinData {
    /// One byte per bin (every feature has at most 256 bins including the missing bin).
    U8(Vec<u8>),
    /// Two bytes per bin.
    U16(Vec<u16>),
}

/// A binned feature matrix: column-major, one contiguous column per feature.
#[derive(Debug, Clone, PartialEq)]
pub struct BinnedMatrix {
    /// Number of rows.
    pub n_rows: usize,
    /// Number of features.
    pub n_features: usize,
    /// `offsets[f]..offsets[f+1]` are feature `f`'s bins (values then missing) in a histogram.
    pub offsets: Vec<usize>,
    /// The bins.
    pub data: BinData,
}

impl BinnedMatrix {
    /// Total number of histogram slots (all features, all bins including missing ones).
    pub fn total_bins(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Number of bins of feature `f`, including its missing bin.
    pub fn n_bins(&self, f: usize) -> usize {
        self.offsets[f + 1] - self.offsets[f]
    }

    /// The bin of (row, feature).
    #[inline]
    pub fn bin(&self, row: usize, f: usize) -> usize {
        match &self.data {
            BinData::U8(v) => v[f * self.n_rows + row] as usize,
            BinData::U16(v) => v[f * self.n_rows + row] as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_data_thresholds_are_midpoints() {
        let f =
            Features { names: vec!["x".into()], columns: vec![Column::Numeric(vec![3.0, 1.0, 2.0, 2.0, f64::NAN])] };
        let m = BinMapper::fit(&f, 255, None).unwrap();
        assert_eq!(m.features[0], FeatureBins::Numeric { thresholds: vec![1.5, 2.5] });
        let b = m.transform(&f).unwrap();
        assert_eq!((0..5).map(|r| b.bin(r, 0)).collect::<Vec<_>>(), vec![2, 0, 1, 1, 3]);
        assert!(matches!(b.data, BinData::U8(_)));
    }

    #[test]
    fn issue_7_zero_weight_rows_place_no_thresholds() {
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
        let f = Features {
            names: vec!["c".into()],
            columns: vec![Column::Categorical { codes: (0..300).collect(), levels }],
        };
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
}
