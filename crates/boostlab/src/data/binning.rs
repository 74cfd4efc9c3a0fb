//! Binning: [`BinMapper`] learns at most `max_bins` bins per feature; [`BinnedMatrix`] stores the
//! bin of every (row, feature) column-major, as `u8` when every feature fits in 256 bins (values
//! plus the missing bin), as `u16` otherwise.
//!
//! Numeric features with no more distinct values than `max_bins` get one bin per value and
//! thresholds exactly at the midpoints between successive observed values, so small data are split
//! exactly as the papers do. Otherwise thresholds are weighted quantiles. Categorical features keep
//! their codes as bins. The last bin of every feature holds missing values.
//!
//! Large data: when more than [`BIN_SAMPLE_ROWS`] rows can place a numeric feature's thresholds,
//! the quantiles come from a fixed, seeded sample of [`BIN_SAMPLE_ROWS`] rows (LightGBM's
//! `bin_construct_sample_cnt`), so learning the bins costs a sort of the sample instead of the
//! whole column. The one key choice: the sample only moves quantile thresholds. Whether a feature
//! has at most `max_bins` distinct values is still decided on all its rows, so such a feature gets
//! exactly the midpoints it would get without sampling, including values the sample missed.

use serde::{Deserialize, Serialize};

use rand::seq::index;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::view::{ColumnView, NumericView};
use super::{FeatureKind, Features, MISSING_CODE};
use crate::error::{Error, Result};

/// Above this many usable rows (the sum of the sample weights, or all rows without weights), the
/// thresholds of a numeric feature come from a sample of this many rows (LightGBM's default
/// `bin_construct_sample_cnt`). A feature with at most this many non-missing usable values is
/// binned from all of them, whatever the number of rows.
pub const BIN_SAMPLE_ROWS: usize = 200_000;

/// Seed of the row sample behind [`BIN_SAMPLE_ROWS`]: fixed, so the bins depend on the data only
/// (not on the booster's seed or the number of threads).
pub const BIN_SAMPLE_SEED: u64 = 0x6269_6e73; // "bins"

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
    /// Sample weights are frequency weights (issue 14): a row of weight `w` is treated as `w`
    /// repeated rows, and a row of weight zero places no thresholds (the same as leaving it out).
    /// When the rows count more than [`BIN_SAMPLE_ROWS`] (their number, or `Σ w` with weights), a
    /// uniform sample of [`BIN_SAMPLE_ROWS`] of them (of the repeated rows: units of weight,
    /// [`bin_sample_rows`]), drawn once with [`BIN_SAMPLE_SEED`] and shared by every feature,
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
        // Issue 18: the sampled values of every feature, read row by row in one pass.
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
    /// Issue 18: in blocks of [`BIN_BLOCK`] rows, one parallel task per block binning every
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
const BIN_BLOCK: usize = 4096;

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

/// What the streaming binner gathers about one feature in a pass over the rows, to build the same
/// bins as [`BinMapper::fit_views`] without holding the column (see [`BinMapper::from_summaries`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum FeatureSummary {
    /// A numeric feature.
    Numeric(NumericSummary),
    /// A categorical feature with `n_levels` levels.
    Categorical {
        /// Number of levels.
        n_levels: usize,
    },
}

/// The summary of a numeric feature: the sampled rows' values, every usable value while they
/// count at most [`BIN_SAMPLE_ROWS`] (`Σ w` with weights), and the distinct usable values while
/// there are at most `max_bins` of them. Memory: at most `BIN_SAMPLE_ROWS` (value, weight) pairs
/// and `BIN_SAMPLE_ROWS` sampled values.
#[derive(Debug, Clone)]
pub struct NumericSummary {
    max_bins: usize,
    weighted: bool,
    sampling: bool,
    usable: f64,
    all: Option<Vec<(f64, f64)>>,
    sample: Vec<f64>,
    distinct: Option<Vec<f64>>,
    last: f64,
    /// Issue 13 (session 8): `sample` is in [`f64::total_cmp`] order (a rank's summary sorts its
    /// sample, so that merging the ranks' samples is a merge, not a sort).
    sorted: bool,
}

impl NumericSummary {
    /// An empty summary. `weighted`: the data have sample weights; `sampling`: [`bin_sample_rows`]
    /// returned a sample (the rows count more than [`BIN_SAMPLE_ROWS`]).
    pub fn new(max_bins: usize, weighted: bool, sampling: bool) -> NumericSummary {
        NumericSummary {
            max_bins,
            weighted,
            sampling,
            usable: 0.0,
            all: Some(Vec::new()),
            sample: Vec::new(),
            distinct: Some(Vec::new()),
            last: f64::NAN,
            sorted: false,
        }
    }

    /// Adds the next row, in row order: its value `x` (`NaN` = missing), its weight (1 without
    /// weights) and how many times [`bin_sample_rows`] lists it (0 when not sampled; with
    /// frequency weights a row is listed once per sampled unit of its weight).
    pub fn push(&mut self, x: f64, weight: f64, times_sampled: usize) {
        if x.is_nan() {
            return;
        }
        // Σ w of the non-missing values in row order, as `numeric_bins` sums it.
        self.usable += weight;
        if weight <= 0.0 || weight.is_nan() {
            return;
        }
        if let Some(all) = &mut self.all {
            if !self.sampling || self.usable <= BIN_SAMPLE_ROWS as f64 {
                all.push((x, weight));
            } else {
                self.all = None;
            }
        }
        if self.sampling && times_sampled > 0 {
            self.sample.extend(std::iter::repeat_n(x, times_sampled));
            self.sorted = false;
        }
        if x != self.last {
            if let Some(d) = &mut self.distinct {
                if !insert_distinct(d, x, self.max_bins) {
                    self.distinct = None;
                }
            }
            self.last = x;
        }
    }

    /// The thresholds: the same as [`BinMapper::fit_views`]'s for the rows pushed.
    fn thresholds(self) -> Vec<f64> {
        if let Some(all) = self.all {
            // Unsampled, or few enough values to sort them all: exact.
            let cuts = if self.weighted {
                cuts_of_pairs(all, self.max_bins)
            } else {
                cuts_of_values(all.into_iter().map(|p| p.0).collect(), self.max_bins)
            };
            return match cuts {
                Cuts::Distinct(values) => midpoints(&values),
                Cuts::Quantiles(t) => t,
            };
        }
        // The sampled units of weight, each with weight 1.
        let cuts = if self.sorted {
            cuts_of_sorted(|f| runs(self.sample.iter().map(|&x| (x, 1.0)), f), self.max_bins)
        } else {
            cuts_of_values(self.sample, self.max_bins)
        };
        match cuts {
            Cuts::Quantiles(t) => t,
            Cuts::Distinct(seen) => midpoints(&self.distinct.unwrap_or(seen)),
        }
    }
}

/// Where one rank's rows sit among all the rows (issue 13, distributed binning): rows
/// `global_offset..global_offset + n` of `global_n`, in rank order. With sample weights,
/// `weight_offset` is the cumulative weight of the rows before (summed left to right from 0 over
/// every earlier row: chain [`weight_prefix`] over the ranks in order) and `total_weight` the
/// cumulative weight of all the rows; both are ignored without weights.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShardSpec {
    /// Global index of this rank's first row.
    pub global_offset: usize,
    /// Number of rows over all ranks.
    pub global_n: usize,
    /// Cumulative sample weight of the rows before this rank's (0 without weights).
    #[serde(default)]
    pub weight_offset: f64,
    /// Cumulative sample weight of all the rows (0 without weights).
    #[serde(default)]
    pub total_weight: f64,
}

/// `start + w₀ + w₁ + …`, summed left to right: chained over the ranks in order (each rank's
/// `start` the previous rank's result, the first's 0), it gives every rank the exact
/// [`ShardSpec::weight_offset`] and the last one the `total_weight` of the single machine's
/// cumulative sums.
pub fn weight_prefix(start: f64, w: &[f64]) -> f64 {
    w.iter().fold(start, |acc, &x| acc + x)
}

/// How many times [`bin_sample_rows`] on all the rows lists each of this rank's `n` rows, or
/// `None` when the rows are not sampled (issue 13).
fn shard_sample_counts(n: usize, w: Option<&[f64]>, shard: &ShardSpec) -> Result<Option<Vec<usize>>> {
    let (start, global_n) = (shard.global_offset, shard.global_n);
    if start.checked_add(n).is_none_or(|end| end > global_n) {
        return Err(Error::InvalidData(format!("shard rows {start}..{start}+{n} beyond the {global_n} rows")));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(BIN_SAMPLE_SEED);
    let mut counts = vec![0usize; n];
    match w {
        None => {
            if global_n <= BIN_SAMPLE_ROWS {
                return Ok(None);
            }
            // The same draw as `sample_rows` on all the rows; this rank's rows of it.
            for p in index::sample(&mut rng, global_n, BIN_SAMPLE_ROWS).into_iter() {
                if (start..start + n).contains(&p) {
                    counts[p - start] += 1;
                }
            }
        }
        Some(w) => {
            let total = shard.total_weight;
            if total.is_nan() || total <= BIN_SAMPLE_ROWS as f64 {
                return Ok(None);
            }
            let (units, unit) = if total <= MAX_SAMPLE_UNITS {
                (total.ceil(), 1.0)
            } else {
                (MAX_SAMPLE_UNITS, total / MAX_SAMPLE_UNITS)
            };
            // This rank's cumulative weights, continuing the single machine's left-to-right sums.
            let cum: Vec<f64> = w
                .iter()
                .scan(shard.weight_offset, |acc, &x| {
                    *acc += x;
                    Some(*acc)
                })
                .collect();
            let last_rank = start + n == global_n;
            for k in index::sample(&mut rng, units as usize, BIN_SAMPLE_ROWS).into_iter() {
                let point = k as f64 * unit;
                // The row holding the point: the first whose cumulative weight exceeds it; on the
                // single machine, a point beyond every row goes to the last row.
                if n == 0 || point < shard.weight_offset {
                    continue;
                }
                let i = cum.partition_point(|&c| c <= point);
                if i < n {
                    counts[i] += 1;
                } else if last_rank {
                    counts[n - 1] += 1;
                }
            }
        }
    }
    Ok(Some(counts))
}

/// This rank's summaries of its rows (issue 13, distributed binning): what
/// [`merge_summaries`] needs to build, from every rank's summaries in rank order, the
/// [`BinMapper`] that [`BinMapper::fit_views`] learns on all the rows (the seeded sample of
/// [`bin_sample_rows`] is drawn by global row index; `shard` says where these rows sit).
pub fn shard_summaries(
    columns: &[ColumnView<'_>],
    max_bins: usize,
    sample_weight: Option<&[f64]>,
    shard: &ShardSpec,
) -> Result<Vec<FeatureSummary>> {
    shard_summaries_parts(&[columns.to_vec()], max_bins, sample_weight, shard)
}

/// [`shard_summaries`] of a rank whose rows come as consecutive `parts` (issue 13, session 8: a
/// Dask worker's partitions, in order, read where they are — no concatenated copy). Each part is
/// one view per feature, every part with the same features; `sample_weight` covers all the rows.
///
/// Unweighted and sampled (the usual case above [`BIN_SAMPLE_ROWS`] rows), a feature reads only
/// its sampled rows (gathered row by row over the features, [`gather_sample`]), counts its
/// non-missing values only until they exceed [`BIN_SAMPLE_ROWS`] (all the merge needs: `usable`
/// is then a lower bound), and looks for the column's distinct values only when its sample has
/// at most `max_bins` of them (otherwise the merged sample has more, and they are never used).
/// The sample is sorted ([`f64::total_cmp`] order), so [`merge_summaries`] merges sorted lists.
/// The summaries are those the row-by-row [`NumericSummary::push`] gives, up to these two
/// unused fields.
pub fn shard_summaries_parts(
    parts: &[Vec<ColumnView<'_>>],
    max_bins: usize,
    sample_weight: Option<&[f64]>,
    shard: &ShardSpec,
) -> Result<Vec<FeatureSummary>> {
    if !(2..=65535).contains(&max_bins) {
        return Err(Error::param("max_bins", "an integer in 2..=65535", max_bins));
    }
    let Some(first) = parts.first() else {
        return Err(Error::InvalidData("a shard of no parts: give at least one (possibly of no rows)".into()));
    };
    let d = first.len();
    let mut starts = Vec::with_capacity(parts.len() + 1);
    starts.push(0usize);
    for (p, cols) in parts.iter().enumerate() {
        if cols.len() != d {
            return Err(Error::InvalidData(format!("part {p} has {} columns, part 0 {d}", cols.len())));
        }
        let m = cols.first().map_or(0, ColumnView::len);
        if let Some(f) = cols.iter().position(|c| c.len() != m) {
            return Err(Error::InvalidData(format!("part {p}: column {f} has {} rows, the first {m}", cols[f].len())));
        }
        if let Some(f) = (0..d).find(|&f| cols[f].kind() != first[f].kind()) {
            return Err(Error::InvalidData(format!("part {p}: column {f} is not of part 0's kind")));
        }
        starts.push(starts[p] + m);
    }
    let n = starts[parts.len()];
    if sample_weight.is_some_and(|w| w.len() != n) {
        return Err(Error::InvalidData(format!(
            "{} sample weights for {n} rows",
            sample_weight.map_or(0, <[f64]>::len)
        )));
    }
    let counts = shard_sample_counts(n, sample_weight, shard)?;
    let sampling = counts.is_some();
    // The sampled rows of each part (local indices, a row once per time sampled), and their values
    // of every dense numeric feature, read row by row.
    let gathered_parts: Vec<Vec<Vec<f64>>> = match (&counts, sample_weight) {
        (Some(c), None) => parts
            .iter()
            .zip(starts.windows(2))
            .map(|(cols, se)| {
                let rows: Vec<usize> = (se[0]..se[1]).flat_map(|i| std::iter::repeat_n(i - se[0], c[i])).collect();
                let mut g = gather_sample(cols, &rows);
                for (f, col) in cols.iter().enumerate() {
                    if let ColumnView::Numeric(v) = col {
                        if v.is_sparse() {
                            v.for_rows(&rows, |_, x| g[f].push(x));
                        }
                    }
                }
                g
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok((0..d)
        .into_par_iter()
        .map(|f| match &first[f] {
            ColumnView::Categorical { n_levels, .. } => FeatureSummary::Categorical { n_levels: *n_levels },
            ColumnView::Numeric(_) => {
                let weighted = sample_weight.is_some();
                let mut s = NumericSummary::new(max_bins, weighted, sampling);
                let numeric = |p: usize| match &parts[p][f] {
                    ColumnView::Numeric(v) => Some(*v),
                    _ => None,
                };
                if gathered_parts.is_empty() {
                    // Weighted, or not sampled: every row, pushed in row order.
                    for (p, se) in starts.windows(2).enumerate() {
                        if let Some(v) = numeric(p) {
                            v.for_each(|i, x| {
                                let wt = sample_weight.map_or(1.0, |w| w[se[0] + i]);
                                s.push(x, wt, counts.as_ref().map_or(0, |c| c[se[0] + i]));
                            });
                        }
                    }
                } else {
                    s.summarise_sampled(parts.len(), numeric, &gathered_parts, f);
                }
                if sampling && !s.sorted {
                    sort_total(&mut s.sample);
                    s.sorted = true;
                }
                FeatureSummary::Numeric(s)
            }
        })
        .collect())
}

impl NumericSummary {
    /// The unweighted sampled summary of a feature over `n_parts` consecutive parts (see
    /// [`shard_summaries_parts`]): `numeric(p)` the feature's view in part `p`, `gathered[p][f]`
    /// its sampled values there, in row order.
    fn summarise_sampled<'a>(
        &mut self,
        n_parts: usize,
        numeric: impl Fn(usize) -> Option<NumericView<'a>>,
        gathered: &[Vec<Vec<f64>>],
        f: usize,
    ) {
        // The non-missing values, counted until they exceed the limit (`usable` is then a lower
        // bound, as good for the merge's decision); while they do not, kept as `all`.
        let mut usable = 0usize;
        let mut all = Vec::new();
        'parts: for p in 0..n_parts {
            let Some(v) = numeric(p) else { continue };
            let mut start = 0;
            while start < v.len() {
                let end = (start + BIN_BLOCK).min(v.len());
                v.rows(start, end).for_each(|_, x| {
                    if !x.is_nan() {
                        usable += 1;
                        if usable <= BIN_SAMPLE_ROWS {
                            all.push((x, 1.0));
                        }
                    }
                });
                if usable > BIN_SAMPLE_ROWS {
                    break 'parts;
                }
                start = end;
            }
        }
        self.usable = usable as f64;
        self.all = (usable <= BIN_SAMPLE_ROWS).then_some(all);
        self.sample = gathered.iter().flat_map(|g| g[f].iter().copied().filter(|x| !x.is_nan())).collect();
        sort_total(&mut self.sample);
        self.sorted = true;
        // The column's distinct values matter only when the merged sample has at most `max_bins`
        // distinct values, so only when this rank's sample has (see `thresholds`).
        let mut distinct_in_sample = 0usize;
        runs(self.sample.iter().map(|&x| (x, 1.0)), |_, _| distinct_in_sample += 1);
        self.distinct = None;
        if distinct_in_sample <= self.max_bins {
            let mut known = Vec::new();
            let mut last = f64::NAN;
            let mut full = false;
            for p in 0..n_parts {
                let Some(v) = numeric(p) else { continue };
                v.for_each(|_, x| {
                    if full || x.is_nan() || x == last {
                        return;
                    }
                    full = !insert_distinct(&mut known, x, self.max_bins);
                    last = x;
                });
            }
            self.distinct = (!full).then_some(known);
        }
    }
}

/// Merges the ranks' summaries, given in rank order (issue 13): the summaries of all the rows,
/// from which [`BinMapper::from_summaries`] gives the single machine's mapper.
pub fn merge_summaries(ranks: Vec<Vec<FeatureSummary>>) -> Result<Vec<FeatureSummary>> {
    let mut it = ranks.into_iter();
    let Some(mut out) = it.next() else {
        return Err(Error::InvalidData("no summaries to merge".into()));
    };
    for (r, next) in it.enumerate() {
        if next.len() != out.len() {
            return Err(Error::InvalidData(format!(
                "rank {} summarised {} features, rank 0 {}",
                r + 1,
                next.len(),
                out.len()
            )));
        }
        for (f, (a, b)) in out.iter_mut().zip(next).enumerate() {
            match (a, b) {
                (FeatureSummary::Numeric(a), FeatureSummary::Numeric(b)) => a.merge(b, f)?,
                (FeatureSummary::Categorical { n_levels: x }, FeatureSummary::Categorical { n_levels: y })
                    if *x == y => {}
                _ => return Err(Error::InvalidData(format!("feature {f}: the ranks' summaries differ in kind"))),
            }
        }
    }
    Ok(out)
}

impl NumericSummary {
    /// Appends the summary of the next rows (rank order).
    fn merge(&mut self, b: NumericSummary, f: usize) -> Result<()> {
        if (self.max_bins, self.weighted, self.sampling) != (b.max_bins, b.weighted, b.sampling) {
            return Err(Error::InvalidData(format!("feature {f}: the ranks' summaries differ in settings")));
        }
        self.usable += b.usable;
        self.all = match (self.all.take(), b.all) {
            (Some(mut x), Some(y)) if !self.sampling || self.usable <= BIN_SAMPLE_ROWS as f64 => {
                x.extend(y);
                Some(x)
            }
            _ => None,
        };
        if self.sorted && b.sorted {
            self.sample = merge_sorted(std::mem::take(&mut self.sample), b.sample);
        } else {
            self.sample.extend(b.sample);
            self.sorted = false;
        }
        self.distinct = match (self.distinct.take(), b.distinct) {
            (Some(mut x), Some(y)) => y.into_iter().all(|v| insert_distinct(&mut x, v, self.max_bins)).then_some(x),
            _ => None,
        };
        Ok(())
    }
}

/// Summaries as bytes (little-endian; for the ranks to send them to whoever merges them).
pub fn summaries_to_bytes(summaries: &[FeatureSummary]) -> Vec<u8> {
    let mut out = Vec::new();
    let u64_ = |out: &mut Vec<u8>, x: usize| out.extend_from_slice(&(x as u64).to_le_bytes());
    let f64s = |out: &mut Vec<u8>, v: &[f64]| {
        out.extend_from_slice(&(v.len() as u64).to_le_bytes());
        v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
    };
    // Values as f32 (tag 1) when every one is an f32 (a float32 input's: half the bytes), else f64.
    let values = |out: &mut Vec<u8>, v: &[f64]| {
        if v.iter().all(|&x| f64::from(x as f32).to_bits() == x.to_bits()) {
            out.push(1);
            out.extend_from_slice(&(v.len() as u64).to_le_bytes());
            v.iter().for_each(|&x| out.extend_from_slice(&(x as f32).to_le_bytes()));
        } else {
            out.push(0);
            f64s(out, v);
        }
    };
    out.extend_from_slice(b"BLSUM2");
    u64_(&mut out, summaries.len());
    for s in summaries {
        match s {
            FeatureSummary::Categorical { n_levels } => {
                out.push(1);
                u64_(&mut out, *n_levels);
            }
            FeatureSummary::Numeric(s) => {
                out.push(0);
                u64_(&mut out, s.max_bins);
                out.extend([u8::from(s.weighted), u8::from(s.sampling)]);
                out.extend_from_slice(&s.usable.to_le_bytes());
                match &s.all {
                    // Session 8: unit weights as values only, f32 when exact.
                    Some(all) if all.iter().all(|p| p.1 == 1.0) => {
                        out.push(2);
                        values(&mut out, &all.iter().map(|p| p.0).collect::<Vec<_>>());
                    }
                    Some(all) => {
                        out.push(1);
                        f64s(&mut out, &all.iter().flat_map(|p| [p.0, p.1]).collect::<Vec<_>>());
                    }
                    None => out.push(0),
                }
                // Session 8: the sample as f32 when every value is one (a float32 input's), half
                // the bytes; its order flag.
                out.push(u8::from(s.sorted));
                values(&mut out, &s.sample);
                match &s.distinct {
                    Some(d) => {
                        out.push(1);
                        f64s(&mut out, d);
                    }
                    None => out.push(0),
                }
            }
        }
    }
    out
}

/// Summaries from [`summaries_to_bytes`]; malformed bytes are an error.
pub fn summaries_from_bytes(bytes: &[u8]) -> Result<Vec<FeatureSummary>> {
    struct Rd<'a>(&'a [u8]);
    impl Rd<'_> {
        fn take(&mut self, n: usize) -> Result<&[u8]> {
            if self.0.len() < n {
                return Err(Error::InvalidData("binning summaries: truncated bytes".into()));
            }
            let (a, b) = self.0.split_at(n);
            self.0 = b;
            Ok(a)
        }
        fn u8(&mut self) -> Result<u8> {
            Ok(self.take(1)?[0])
        }
        fn u64(&mut self) -> Result<usize> {
            let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| Error::InvalidData("binning summaries".into()))?;
            usize::try_from(u64::from_le_bytes(b)).map_err(|_| Error::InvalidData("binning summaries: a length".into()))
        }
        fn f64(&mut self) -> Result<f64> {
            let b: [u8; 8] = self.take(8)?.try_into().map_err(|_| Error::InvalidData("binning summaries".into()))?;
            Ok(f64::from_le_bytes(b))
        }
        fn f64s(&mut self) -> Result<Vec<f64>> {
            let n = self.u64()?;
            if n > self.0.len() / 8 {
                return Err(Error::InvalidData("binning summaries: truncated bytes".into()));
            }
            (0..n).map(|_| self.f64()).collect()
        }
        /// What `summaries_to_bytes`'s `values` wrote.
        fn values(&mut self) -> Result<Vec<f64>> {
            if self.u8()? == 0 {
                return self.f64s();
            }
            let n = self.u64()?;
            if n > self.0.len() / 4 {
                return Err(Error::InvalidData("binning summaries: truncated bytes".into()));
            }
            Ok(self
                .take(4 * n)?
                .chunks_exact(4)
                .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect())
        }
    }
    let mut r = Rd(bytes);
    if r.take(6)? != b"BLSUM2" {
        return Err(Error::InvalidData("binning summaries: not summary bytes".into()));
    }
    let d = r.u64()?;
    if d > bytes.len() {
        return Err(Error::InvalidData("binning summaries: truncated bytes".into()));
    }
    let mut out = Vec::with_capacity(d);
    for _ in 0..d {
        out.push(match r.u8()? {
            1 => FeatureSummary::Categorical { n_levels: r.u64()? },
            0 => {
                let max_bins = r.u64()?;
                let (weighted, sampling) = (r.u8()? == 1, r.u8()? == 1);
                let usable = r.f64()?;
                let all = match r.u8()? {
                    1 => Some(r.f64s()?.chunks_exact(2).map(|p| (p[0], p[1])).collect()),
                    2 => Some(r.values()?.into_iter().map(|x| (x, 1.0)).collect()),
                    _ => None,
                };
                let sorted = r.u8()? == 1;
                let sample = r.values()?;
                let distinct = match r.u8()? {
                    1 => Some(r.f64s()?),
                    _ => None,
                };
                FeatureSummary::Numeric(NumericSummary {
                    max_bins,
                    weighted,
                    sampling,
                    usable,
                    all,
                    sample,
                    distinct,
                    last: f64::NAN,
                    sorted,
                })
            }
            t => return Err(Error::InvalidData(format!("binning summaries: unknown feature tag {t}"))),
        });
    }
    Ok(out)
}

/// Inserts `x` into the increasing distinct values `known` (−0 and +0 are one value); false when
/// it is new and `known` already holds `max_bins` values.
fn insert_distinct(known: &mut Vec<f64>, x: f64, max_bins: usize) -> bool {
    // `<`/`>` rather than `total_cmp`: −0 and +0 are one value, as in `runs`.
    match known.binary_search_by(|p| {
        if *p < x {
            std::cmp::Ordering::Less
        } else if *p > x {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    }) {
        Ok(_) => true,
        Err(i) if known.len() < max_bins => {
            known.insert(i, x);
            true
        }
        Err(_) => false,
    }
}

/// The increasing row indices of the binning sample: [`BIN_SAMPLE_ROWS`] of the rows with a
/// positive weight (all rows without weights), drawn with [`BIN_SAMPLE_SEED`], or `None` when
/// there are no more such rows than that (no sampling). A streaming reader that counted the rows
/// (and read the weights) calls it to know which rows to give [`NumericSummary::push`] as sampled.
pub fn bin_sample_rows(n: usize, w: Option<&[f64]>) -> Option<Vec<usize>> {
    sample_rows(n, w)
}

/// Above this total weight the positions of the weighted binning sample are drawn among this many
/// equal units of weight instead of among `⌈Σ w⌉` (every position stays an exact integer).
const MAX_SAMPLE_UNITS: f64 = (1u64 << 52) as f64;

/// The non-decreasing row indices of the binning sample: [`BIN_SAMPLE_ROWS`] of the rows, or
/// `None` when the rows count no more than that (no sampling). With sample weights (frequency
/// weights) the sample is drawn among the units of weight, row `i` holding the units
/// `[Σ_{j<i} w_j, Σ_{j≤i} w_j)`: a row appears once per sampled unit (so a row of weight 0 never),
/// and integer weights sample exactly the rows the repeated data would.
fn sample_rows(n: usize, w: Option<&[f64]>) -> Option<Vec<usize>> {
    let Some(w) = w else {
        if n <= BIN_SAMPLE_ROWS {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(BIN_SAMPLE_SEED);
        let mut pos = index::sample(&mut rng, n, BIN_SAMPLE_ROWS).into_vec();
        pos.sort_unstable();
        return Some(pos);
    };
    let cum: Vec<f64> = w
        .iter()
        .scan(0.0, |acc, &wt| {
            *acc += wt;
            Some(*acc)
        })
        .collect();
    let total = cum.last().copied().unwrap_or(0.0);
    if total.is_nan() || total <= BIN_SAMPLE_ROWS as f64 {
        return None;
    }
    // Units of weight 1 (⌈Σw⌉ of them, the last one partial), or 2^52 equal units beyond that.
    let (units, unit) =
        if total <= MAX_SAMPLE_UNITS { (total.ceil(), 1.0) } else { (MAX_SAMPLE_UNITS, total / MAX_SAMPLE_UNITS) };
    let mut rng = ChaCha8Rng::seed_from_u64(BIN_SAMPLE_SEED);
    let mut pos = index::sample(&mut rng, units as usize, BIN_SAMPLE_ROWS).into_vec();
    pos.sort_unstable();
    // The row holding the point k·unit: the first row whose cumulative weight exceeds it.
    Some(pos.into_iter().map(|k| cum.partition_point(|&c| c <= k as f64 * unit).min(n - 1)).collect())
}

/// The thresholds of one numeric column; `sample` from [`sample_rows`].
/// The numeric view [`gather_sample`] reads: a dense (strided) one; a sparse column keeps its
/// merged walk over the stored rows ([`NumericView::for_rows`]).
fn gathered<'a>(c: &ColumnView<'a>) -> Option<NumericView<'a>> {
    match c {
        ColumnView::Numeric(v) if !v.is_sparse() => Some(*v),
        _ => None,
    }
}

/// Sampled rows per task of [`gather_sample`].
const GATHER_BLOCK: usize = 2048;

/// The values of the sampled `rows` (non-decreasing, possibly repeated) of every numeric column
/// (empty for a categorical one), in the order of `rows` (issue 18). One parallel task per block
/// of sampled rows reads each row's values of every feature, so the rows of a C-ordered matrix
/// are read from memory once, not once per feature.
fn gather_sample(columns: &[ColumnView<'_>], rows: &[usize]) -> Vec<Vec<f64>> {
    let parts: Vec<Vec<Vec<f64>>> = rows
        .par_chunks(GATHER_BLOCK)
        .map(|blk| {
            let mut out: Vec<Vec<f64>> = columns
                .iter()
                .map(|c| if gathered(c).is_some() { Vec::with_capacity(blk.len()) } else { Vec::new() })
                .collect();
            let views: Vec<Option<NumericView<'_>>> = columns.iter().map(gathered).collect();
            for &r in blk {
                for (o, v) in out.iter_mut().zip(&views) {
                    if let Some(v) = v {
                        o.push(v.get(r));
                    }
                }
            }
            out
        })
        .collect();
    // Each block's part is freed as soon as it is copied: the sampled values are held about once.
    let mut parts = parts;
    (0..columns.len())
        .map(|f| {
            let mut xs = Vec::with_capacity(parts.iter().map(|p| p[f].len()).sum());
            for p in &mut parts {
                xs.extend_from_slice(&std::mem::take(&mut p[f]));
            }
            xs
        })
        .collect()
}

/// The thresholds of one numeric column; `sample` from [`sample_rows`], `pre` the values of its
/// rows when already gathered ([`gather_sample`]).
fn numeric_bins(
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
        // Issue 18: the count stops once it exceeds the limit (all the decision needs), in blocks
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

/// All thresholds from all rows (no sampling).
fn numeric_thresholds(v: NumericView<'_>, max_bins: usize, w: Option<&[f64]>) -> Vec<f64> {
    let cuts = match w {
        None => {
            let mut xs = Vec::with_capacity(v.len());
            v.for_each(|_, x| {
                if !x.is_nan() {
                    xs.push(x);
                }
            });
            cuts_of_values(xs, max_bins)
        }
        // Rows of zero weight do not place thresholds: weight 0 is the same as leaving the row out.
        Some(w) => {
            let mut pairs = Vec::with_capacity(v.len());
            v.for_each(|i, x| {
                if !x.is_nan() && w[i] > 0.0 {
                    pairs.push((x, w[i]));
                }
            });
            cuts_of_pairs(pairs, max_bins)
        }
    };
    match cuts {
        Cuts::Distinct(values) => midpoints(&values),
        Cuts::Quantiles(t) => t,
    }
}

/// What the values of a feature give.
enum Cuts {
    /// At most `max_bins` distinct values, increasing: one bin each.
    Distinct(Vec<f64>),
    /// More: the weighted-quantile thresholds.
    Quantiles(Vec<f64>),
}

/// Thresholds at the midpoints between successive distinct values.
fn midpoints(values: &[f64]) -> Vec<f64> {
    values.windows(2).map(|p| midpoint(p[0], p[1])).collect()
}

/// [`Cuts`] of unit-weight non-missing values (any order; sorted here, in place).
fn cuts_of_values(mut xs: Vec<f64>, max_bins: usize) -> Cuts {
    // Unit weights: sort the bare values (half the bytes of (value, weight) pairs) and count;
    // counts are exact integers, the same as summing ones in any order.
    sort_total(&mut xs);
    cuts_of_sorted(|f| runs(xs.iter().map(|&x| (x, 1.0)), f), max_bins)
}

/// Sorts `xs` in [`f64::total_cmp`] order by sorting the integers that order compares (session 6:
/// a primitive integer sort instead of a comparator, a third of a small fit's binning). Values
/// equal under `total_cmp` have equal bits, so the result is `sort_unstable_by(f64::total_cmp)`'s
/// bit for bit.
fn sort_total(xs: &mut [f64]) {
    // `total_cmp`'s key: negative values get their magnitude bits flipped (an involution).
    let key = |b: u64| (b ^ ((((b as i64) >> 63) as u64) >> 1)) as i64;
    let mut keys: Vec<i64> = xs.iter().map(|x| key(x.to_bits())).collect();
    keys.sort_unstable();
    for (x, &k) in xs.iter_mut().zip(&keys) {
        *x = f64::from_bits(key(k as u64) as u64);
    }
}

/// The merge of two lists in [`f64::total_cmp`] order, in that order (values equal under it have
/// equal bits, so the result is that of sorting the concatenation).
fn merge_sorted(a: Vec<f64>, b: Vec<f64>) -> Vec<f64> {
    if b.is_empty() {
        return a;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if b[j].total_cmp(&a[i]).is_lt() {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// [`Cuts`] of non-missing values with positive weights (any order; sorted here, in place).
fn cuts_of_pairs(mut pairs: Vec<(f64, f64)>, max_bins: usize) -> Cuts {
    // Stable: the weights of one value are summed in row order.
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    cuts_of_sorted(|f| runs(pairs.iter().copied(), f), max_bins)
}

/// Calls `f(value, total weight)` for each distinct value of the increasing `(value, weight)`
/// sequence, in order; −0 and +0 are one value. The weights of a value are summed left to right.
fn runs(sorted: impl Iterator<Item = (f64, f64)>, mut f: impl FnMut(f64, f64)) {
    let mut run: Option<(f64, f64)> = None;
    for (x, wt) in sorted {
        match &mut run {
            Some(r) if r.0 == x => r.1 += wt,
            _ => {
                if let Some((rx, rw)) = run {
                    f(rx, rw);
                }
                run = Some((x, wt));
            }
        }
    }
    if let Some((rx, rw)) = run {
        f(rx, rw);
    }
}

/// [`Cuts`] from the distinct values of increasing data, which `each` visits (in two passes, so
/// no list of distinct values is kept: it could be as long as the data).
fn cuts_of_sorted(each: impl Fn(&mut dyn FnMut(f64, f64)), max_bins: usize) -> Cuts {
    let (mut count, mut total) = (0usize, 0.0);
    each(&mut |_, wt| {
        count += 1;
        total += wt;
    });
    if count <= max_bins {
        let mut values = Vec::with_capacity(count);
        each(&mut |x, _| values.push(x));
        return Cuts::Distinct(values);
    }
    // Weighted quantiles: cut whenever the cumulative weight passes the next multiple of
    // total / max_bins (a distinct value is never split).
    let mut out = Vec::with_capacity(max_bins - 1);
    let mut acc = 0.0;
    let mut prev: Option<(f64, f64)> = None;
    each(&mut |x, wt| {
        if let Some((px, pw)) = prev {
            acc += pw;
            let next_cut = total * (out.len() + 1) as f64 / max_bins as f64;
            if acc >= next_cut && out.len() < max_bins - 1 {
                out.push(midpoint(px, x));
            }
        }
        prev = Some((x, wt));
    });
    Cuts::Quantiles(out)
}

/// The distinct usable values of the whole column (increasing), starting from the increasing
/// `known` ones, or `None` as soon as there are more than `max_bins`. One binary search per row.
fn all_distinct_values_if_few(
    v: NumericView<'_>,
    w: Option<&[f64]>,
    mut known: Vec<f64>,
    max_bins: usize,
) -> Option<Vec<f64>> {
    let mut last = f64::NAN; // runs of one value skip the search
    let mut full = false;
    v.for_each(|i, x| {
        if full || x.is_nan() || w.is_some_and(|w| w[i] <= 0.0) {
            return;
        }
        if x != last && !insert_distinct(&mut known, x, max_bins) {
            full = true;
        }
        last = x;
    });
    (!full).then_some(known)
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
    use super::super::Column;
    use super::*;
    use proptest::prelude::*;
    use rand::Rng;

    /// Session 6: the integer-key sort is `sort_unstable_by(f64::total_cmp)` bit for bit, on
    /// signed zeros, NaNs of both signs, infinities, subnormals, duplicates and random values.
    #[test]
    fn issue_18_key_sort_equals_the_total_cmp_sort() {
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

    /// The thresholds as first written (before issue 8): all rows, a list of distinct values.
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
    fn issue_8_up_to_the_sample_size_every_row_places_thresholds() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let v: Vec<f64> = (0..BIN_SAMPLE_ROWS).map(|_| rng.gen::<f64>().powi(3) * 100.0).collect();
        let w: Vec<f64> = (0..BIN_SAMPLE_ROWS).map(|i| (i % 5) as f64 * 0.5).collect();
        let f = one_feature(v.clone());
        assert_eq!(
            bits(&thresholds(&BinMapper::fit(&f, 255, None).unwrap(), 0)),
            bits(&naive_thresholds(&v, 255, None))
        );
        let m = BinMapper::fit(&f, 255, Some(&w)).unwrap();
        assert_eq!(bits(&thresholds(&m, 0)), bits(&naive_thresholds(&v, 255, Some(&w))));
    }

    /// Issue 18: a C-ordered `f32` matrix read as strided views (row-blocked sample gathering and
    /// binning, the count of usable values stopped early) gives the thresholds of the per-feature
    /// reference (`numeric_bins` reading its sampled rows itself, over contiguous `f64` columns)
    /// and every bin of `bin_of_value`; NaN-heavy columns (at most `BIN_SAMPLE_ROWS` usable values:
    /// exact thresholds), a sparse column, any thread count; the first infinite value is reported
    /// as before (lowest feature, then first row), also inside a later block.
    #[test]
    fn issue_18_row_blocked_binning_equals_the_per_feature_reference() {
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
    fn issue_8_sampled_thresholds_are_deterministic_in_range_and_balanced() {
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
    fn issue_8_weights_of_sampled_rows_move_the_quantiles() {
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
    fn issue_8_few_distinct_values_stay_exact_under_sampling() {
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
    fn issue_8_zero_weight_rows_are_left_out_under_sampling() {
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
    fn issue_14_integer_weights_bin_like_repeated_rows() {
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
        let repeat = |x: &[f64]| -> Vec<f64> {
            x.iter().zip(&w).flat_map(|(&v, &k)| std::iter::repeat_n(v, k as usize)).collect()
        };
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
    fn issue_8_missing_values_and_categories_under_sampling() {
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
