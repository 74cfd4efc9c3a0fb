//! [`BinMapper`]: the bins of every feature (thresholds of numeric features, codes of categorical
//! ones) and the binning of columns into a [`BinnedMatrix`].

use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use super::matrix::{BinData, BinnedMatrix};
use super::quantiles::{all_distinct_values_if_few, cuts_of_values, midpoints, numeric_thresholds, Cuts};
use super::sample::{bin_sample_rows, gather_sample, gathered, BIN_SAMPLE_ROWS};
use super::summaries::FeatureSummary;
use crate::data::view::{ColumnView, NumericView};
use crate::data::{FeatureKind, Features, MISSING_CODE};
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

impl BinMapper {
    /// Learns bins from `features` (weighted by `sample_weight` when given): [`BinMapper::fit_views`]
    /// over views of the columns.
    pub fn fit(features: &Features, max_bins: usize, sample_weight: Option<&[f64]>) -> Result<BinMapper> {
        let views: Vec<ColumnView<'_>> = features.columns.iter().map(ColumnView::of).collect();
        BinMapper::fit_views(&features.names, &views, max_bins, sample_weight)
    }

    /// Learns bins from column views (`names` for error messages), weighted by `sample_weight`
    /// when given.
    ///
    /// `max_bins`: value bins per feature, by default 255; valid range 2..=65535. A categorical
    /// feature with more levels than `max_bins` is an error.
    ///
    /// Sample weights are frequency weights: a row of weight `w` is treated as `w`
    /// repeated rows, and a row of weight zero places no thresholds (the same as leaving it out).
    /// When the rows count more than [`BIN_SAMPLE_ROWS`] (their number, or `Σ w` with weights), a
    /// uniform sample of [`BIN_SAMPLE_ROWS`] of them (of the repeated rows: units of weight,
    /// [`bin_sample_rows`]), drawn once with [`BIN_SAMPLE_SEED`](super::BIN_SAMPLE_SEED) and shared by every feature,
    /// stands in for the rows when placing quantile thresholds, each sampled unit with weight 1: a
    /// feature's missing values in the sample are skipped. With integer weights the sample is
    /// exactly the sample of the repeated rows (`np.repeat` order). A feature whose non-missing
    /// usable values count at most [`BIN_SAMPLE_ROWS`] (`Σ w` with weights), or whose values (all
    /// rows of positive weight) have at most `max_bins` distinct values, gets exactly the
    /// thresholds it would get without sampling. Otherwise the thresholds are the sample's
    /// quantiles, midpoints between successive sampled values, which lie within the data's range;
    /// a value the sample missed shares a bin with its sampled neighbours. The result does not
    /// depend on the number of threads, nor on whether a column is given as `f32` or `f64` values,
    /// nor on its memory layout.
    pub fn fit_views(
        names: &[String],
        columns: &[ColumnView<'_>],
        max_bins: usize,
        sample_weight: Option<&[f64]>,
    ) -> Result<BinMapper> {
        if !(2..=65535).contains(&max_bins) {
            return Err(Error::param("max_bins", "an integer in 2..=65535", max_bins));
        }
        let n = columns.first().map_or(0, ColumnView::len);
        let name = |f: usize| names.get(f).map_or("?", String::as_str);
        if let Some(f) = columns.iter().position(|c| c.len() != n) {
            return Err(Error::InvalidData(format!(
                "feature '{}' has {} rows, the first feature {n}",
                name(f),
                columns[f].len()
            )));
        }
        if let Some(w) = sample_weight {
            if w.len() != n {
                return Err(Error::InvalidData(format!("{} sample weights for {n} rows", w.len())));
            }
        }
        let sample = bin_sample_rows(n, sample_weight);
        // The sampled values of every feature, read row by row in one pass.
        let sampled = sample.as_deref().map(|rows| gather_sample(columns, rows));
        let mut sampled: Vec<Option<Vec<f64>>> = match sampled {
            Some(s) => s.into_iter().zip(columns).map(|(xs, c)| gathered(c).map(|_| xs)).collect(),
            None => Vec::new(),
        };
        sampled.resize_with(columns.len(), || None);
        // Features are independent: learn them in parallel (each result is the same as alone).
        // The first bad feature in order, whichever thread finished first.
        let out = crate::util::par::try_map_in_order(
            columns.par_iter().zip(sampled).enumerate(),
            |(f, (col, pre))| match col {
                ColumnView::Numeric(v) => Ok(FeatureBins::Numeric {
                    thresholds: numeric_bins(*v, max_bins, sample_weight, sample.as_deref(), pre),
                }),
                ColumnView::Categorical { n_levels, .. } => categorical_bins(name(f), *n_levels, max_bins),
            },
        )?;
        Ok(BinMapper { features: out })
    }

    /// The mapper of features summarised while streaming (see [`FeatureSummary`]): identical to
    /// [`BinMapper::fit_views`] on the same rows, weights and `max_bins`.
    pub fn from_summaries(names: &[String], summaries: Vec<FeatureSummary>, max_bins: usize) -> Result<BinMapper> {
        if !(2..=65535).contains(&max_bins) {
            return Err(Error::param("max_bins", "an integer in 2..=65535", max_bins));
        }
        let features = summaries
            .into_iter()
            .enumerate()
            .map(|(f, s)| match s {
                FeatureSummary::Numeric(s) => {
                    if s.max_bins != max_bins {
                        return Err(Error::param("max_bins", format!("{} (as summarised)", s.max_bins), max_bins));
                    }
                    Ok(FeatureBins::Numeric { thresholds: s.thresholds() })
                }
                FeatureSummary::Categorical { n_levels } => {
                    categorical_bins(names.get(f).map_or("?", String::as_str), n_levels, max_bins)
                }
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(BinMapper { features })
    }

    /// Bins `features` (which must have the kinds this mapper was fitted on).
    pub fn transform(&self, features: &Features) -> Result<BinnedMatrix> {
        let views: Vec<ColumnView<'_>> = features.columns.iter().map(ColumnView::of).collect();
        let mut out = self.new_matrix(features.n_rows());
        self.bin_into(&features.names, &views, 0, &mut out)?;
        Ok(out)
    }

    /// An all-zero binned matrix of `n_rows` rows for this mapper's features (`u8` when every
    /// feature has at most 256 bins with its missing bin, else `u16`), to fill with
    /// [`BinMapper::bin_into`]. The memory is requested zeroed, so untouched pages cost nothing.
    pub fn new_matrix(&self, n_rows: usize) -> BinnedMatrix {
        let wide = self.features.iter().any(|b| b.n_value_bins() + 1 > 256);
        let mut offsets = Vec::with_capacity(self.features.len() + 1);
        offsets.push(0);
        for b in &self.features {
            offsets.push(offsets.last().copied().unwrap_or(0) + b.n_value_bins() + 1);
        }
        let cells = n_rows * self.features.len();
        let data = if wide { BinData::U16(vec![0; cells]) } else { BinData::U8(vec![0; cells]) };
        BinnedMatrix { n_rows, n_features: self.features.len(), offsets, data }
    }

    /// Bins a chunk of rows: `columns` (one view per feature, all of the same length `m`, of the
    /// kinds this mapper was fitted on) go to rows `row0 .. row0 + m` of `out` (from
    /// [`BinMapper::new_matrix`]). One feature per parallel task; each bin depends on its value
    /// only, so the result does not depend on the chunking or the number of threads. An infinite
    /// value is an error naming the feature (from `names`) and the row (1-based, `row0` + its
    /// position).
    pub fn bin_into(
        &self,
        names: &[String],
        columns: &[ColumnView<'_>],
        row0: usize,
        out: &mut BinnedMatrix,
    ) -> Result<()> {
        let name = |f: usize| names.get(f).map_or("?", String::as_str);
        if columns.len() != self.features.len() || out.n_features != self.features.len() {
            return Err(Error::InvalidData(format!(
                "{} features, the bin mapper expects {}",
                columns.len(),
                self.features.len()
            )));
        }
        let m = columns.first().map_or(0, ColumnView::len);
        if let Some(f) = columns.iter().position(|c| c.len() != m) {
            return Err(Error::InvalidData(format!(
                "feature '{}' has {} rows, the first feature {m}",
                name(f),
                columns[f].len()
            )));
        }
        for (f, (fb, col)) in self.features.iter().zip(columns).enumerate() {
            if fb.kind() != col.kind() {
                return Err(Error::InvalidData(format!(
                    "feature '{}' changed kind between fitting and binning",
                    name(f)
                )));
            }
        }
        let n = out.n_rows;
        if row0.checked_add(m).is_none_or(|end| end > n) {
            return Err(Error::InvalidData(format!("rows {row0}..{row0}+{m} do not fit a matrix of {n} rows")));
        }
        if n == 0 || m == 0 {
            return Ok(());
        }
        // Written straight into the final width, one column per task: no wider temporary copy.
        let bad = match &mut out.data {
            BinData::U8(v) => self.fill_bins(columns, row0, n, v, |b| b as u8),
            BinData::U16(v) => self.fill_bins(columns, row0, n, v, |b| b as u16),
        };
        match bad {
            Some((f, r)) => {
                Err(Error::InvalidData(format!("feature '{}', row {}: infinite value", name(f), row0 + r + 1)))
            }
            None => Ok(()),
        }
    }

    /// Fills rows `row0..` of the column-major `out` (`n` rows per feature) with the bins of
    /// `columns` (kinds already checked). Returns the first (feature, row) holding an infinite
    /// value, if any.
    ///
    /// In blocks of [`BIN_BLOCK`] rows, one parallel task per block binning every
    /// feature of it (it was one task per feature over all the rows): the rows of a C-ordered
    /// matrix (a column is a strided view) are then read from memory once, not once per feature.
    /// Each bin depends on its value only, so the bins are the same.
    fn fill_bins<T: Copy + Send, C: Fn(u32) -> T + Copy + Sync>(
        &self,
        columns: &[ColumnView<'_>],
        row0: usize,
        n: usize,
        out: &mut [T],
        conv: C,
    ) -> Option<(usize, usize)> {
        let m = columns.first().map_or(0, ColumnView::len);
        let n_blocks = m.div_ceil(BIN_BLOCK);
        // blocks[b][f]: rows of block b of feature f.
        let mut blocks: Vec<Vec<&mut [T]>> = (0..n_blocks).map(|_| Vec::with_capacity(columns.len())).collect();
        for col in out.chunks_mut(n) {
            for (blk, piece) in blocks.iter_mut().zip(col[row0..row0 + m].chunks_mut(BIN_BLOCK)) {
                blk.push(piece);
            }
        }
        let bad: Vec<Vec<Option<usize>>> = blocks
            .into_par_iter()
            .enumerate()
            .map(|(b, dsts)| {
                let (a, e) = (b * BIN_BLOCK, ((b + 1) * BIN_BLOCK).min(m));
                dsts.into_iter()
                    .zip(self.features.iter().zip(columns))
                    .map(|(dst, (fb, col))| fill_bin_block(fb, &col.rows(a, e), dst, conv).map(|r| a + r))
                    .collect()
            })
            .collect();
        // The first feature with an infinite value, and its first such row.
        (0..columns.len()).find_map(|f| bad.iter().find_map(|blk| blk.get(f).copied().flatten()).map(|r| (f, r)))
    }
}

/// Rows per task of [`BinMapper::fill_bins`]: a block of a C-ordered `f32` matrix of 28 features
/// (448 KiB) stays in L2 while every feature of it is binned.
pub(super) const BIN_BLOCK: usize = 4096;

/// Bins one block of one feature into `dst`; returns the block's first row holding an infinite
/// value, if any.
fn fill_bin_block<T: Copy, C: Fn(u32) -> T>(
    fb: &FeatureBins,
    col: &ColumnView<'_>,
    dst: &mut [T],
    conv: C,
) -> Option<usize> {
    match (fb, col) {
        (FeatureBins::Numeric { thresholds }, ColumnView::Numeric(v)) => {
            // A branch-free binary search (std's); searching 8 values side by side
            // with a fixed-depth table was measured only 15–25 % faster (1M × 28:
            // 0.24 s of CPU), not worth a second kernel.
            let mut inf = None;
            v.for_each(|i, x| {
                if x.is_infinite() && inf.is_none() {
                    inf = Some(i);
                }
                dst[i] = conv(FeatureBins::bin_of_value(thresholds, x) as u32);
            });
            inf
        }
        (FeatureBins::Categorical { n_levels }, ColumnView::Categorical { codes, .. }) => {
            for (o, &c) in dst.iter_mut().zip(codes.iter()) {
                let b = if c == MISSING_CODE || c as usize >= *n_levels { *n_levels as u32 } else { c };
                *o = conv(b);
            }
            None
        }
        // Kinds are checked by `bin_into` before.
        _ => None,
    }
}

/// The bins of a categorical feature with `n_levels` levels, or an error when they exceed
/// `max_bins`.
fn categorical_bins(name: &str, n_levels: usize, max_bins: usize) -> Result<FeatureBins> {
    if n_levels > max_bins {
        return Err(Error::InvalidData(format!(
            "categorical feature '{name}' has {n_levels} categories, more than max_bins = {max_bins} \
             (raise max_bins, up to 65535, or recode the feature)"
        )));
    }
    Ok(FeatureBins::Categorical { n_levels })
}

/// The thresholds of one numeric column; `sample` from [`sample_rows`], `pre` the values of its
/// rows when already gathered ([`gather_sample`]).
pub(super) fn numeric_bins(
    v: NumericView<'_>,
    max_bins: usize,
    w: Option<&[f64]>,
    sample: Option<&[usize]>,
    pre: Option<Vec<f64>>,
) -> Vec<f64> {
    let Some(rows) = sample else { return numeric_thresholds(v, max_bins, w) };
    // Frequency weights: the non-missing values count Σ w (the number of repeated rows), summed
    // in row order.
    let few = match w {
        // The count stops once it exceeds the limit (all the decision needs), in blocks
        // of rows; it was a full pass over the column.
        None => {
            let (mut usable, mut start) = (0usize, 0usize);
            while start < v.len() && usable <= BIN_SAMPLE_ROWS {
                let end = (start + BIN_BLOCK).min(v.len());
                v.rows(start, end).for_each(|_, x| usable += usize::from(!x.is_nan()));
                start = end;
            }
            usable <= BIN_SAMPLE_ROWS
        }
        Some(w) => {
            let mut usable = 0.0;
            v.for_each(|i, x| {
                if !x.is_nan() {
                    usable += w[i];
                }
            });
            usable <= BIN_SAMPLE_ROWS as f64
        }
    };
    if few {
        // Few enough values to sort them all: exact, the same as without sampling.
        return numeric_thresholds(v, max_bins, w);
    }
    // The sampled rows (all of positive weight, once per sampled unit of weight: each with
    // weight 1), their missing values skipped.
    let xs = match pre {
        Some(mut xs) => {
            xs.retain(|x| !x.is_nan());
            xs
        }
        None => {
            let mut xs = Vec::with_capacity(rows.len());
            v.for_rows(rows, |_, x| {
                if !x.is_nan() {
                    xs.push(x);
                }
            });
            xs
        }
    };
    let cuts = cuts_of_values(xs, max_bins);
    match cuts {
        Cuts::Quantiles(t) => t,
        Cuts::Distinct(seen) => {
            // The sample has few distinct values: if the whole column has at most `max_bins`,
            // give it exactly the unsampled midpoints (values the sample missed included);
            // otherwise one bin per sampled value, and a value the sample missed shares the bin of
            // a neighbouring sampled value (the midpoints decide which).
            let values = all_distinct_values_if_few(v, w, seen.clone(), max_bins).unwrap_or(seen);
            midpoints(&values)
        }
    }
}
