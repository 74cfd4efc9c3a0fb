//! Per-feature summaries of a shard of the rows (distinct values or a weighted sample), merged
//! across workers into the same bins as one machine would learn, and their byte encoding.

use serde::{Deserialize, Serialize};

use rand::seq::index;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::mapper::BIN_BLOCK;
use super::quantiles::{
    cuts_of_pairs, cuts_of_sorted, cuts_of_values, insert_distinct, merge_sorted, midpoints, runs, sort_total, Cuts,
};
use super::sample::{gather_sample, BIN_SAMPLE_ROWS, BIN_SAMPLE_SEED, MAX_SAMPLE_UNITS};
use crate::data::view::{ColumnView, NumericView};
use crate::error::{Error, Result};

/// What the streaming binner gathers about one feature in a pass over the rows, to build the same
/// bins as [`BinMapper::fit_views`](super::BinMapper::fit_views) without holding the column (see [`BinMapper::from_summaries`](super::BinMapper::from_summaries)).
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
    pub(super) max_bins: usize,
    pub(super) weighted: bool,
    sampling: bool,
    pub(super) usable: f64,
    pub(super) all: Option<Vec<(f64, f64)>>,
    pub(super) sample: Vec<f64>,
    pub(super) distinct: Option<Vec<f64>>,
    pub(super) last: f64,
    /// `sample` is in [`f64::total_cmp`] order (a rank's summary sorts its
    /// sample, so that merging the ranks' samples is a merge, not a sort).
    pub(super) sorted: bool,
}

impl NumericSummary {
    /// An empty summary. `weighted`: the data have sample weights; `sampling`: [`bin_sample_rows`](super::bin_sample_rows)
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
    /// weights) and how many times [`bin_sample_rows`](super::bin_sample_rows) lists it (0 when not sampled; with
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

    /// The thresholds: the same as [`BinMapper::fit_views`](super::BinMapper::fit_views)'s for the rows pushed.
    pub(super) fn thresholds(self) -> Vec<f64> {
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

/// Where one rank's rows sit among all the rows (distributed binning): rows
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

/// How many times [`bin_sample_rows`](super::bin_sample_rows) on all the rows lists each of this rank's `n` rows, or
/// `None` when the rows are not sampled.
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

/// This rank's summaries of its rows (distributed binning): what
/// [`merge_summaries`] needs to build, from every rank's summaries in rank order, the
/// [`BinMapper`](super::BinMapper) that [`BinMapper::fit_views`](super::BinMapper::fit_views) learns on all the rows (the seeded sample of
/// [`bin_sample_rows`](super::bin_sample_rows) is drawn by global row index; `shard` says where these rows sit).
pub fn shard_summaries(
    columns: &[ColumnView<'_>],
    max_bins: usize,
    sample_weight: Option<&[f64]>,
    shard: &ShardSpec,
) -> Result<Vec<FeatureSummary>> {
    shard_summaries_parts(&[columns.to_vec()], max_bins, sample_weight, shard)
}

/// [`shard_summaries`] of a rank whose rows come as consecutive `parts` (a
/// Dask worker's partitions, in order, read where they are — no concatenated copy). Each part is
/// one view per feature, every part with the same features; `sample_weight` covers all the rows.
///
/// Unweighted and sampled (the usual case above [`BIN_SAMPLE_ROWS`] rows), a feature reads only
/// its sampled rows (gathered row by row over the features, `gather_sample`), counts its
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

/// Merges the ranks' summaries, given in rank order: the summaries of all the rows,
/// from which [`BinMapper::from_summaries`](super::BinMapper::from_summaries) gives the single machine's mapper.
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
                    // Unit weights as values only, f32 when exact.
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
                // The sample as f32 when every value is one (a float32 input's), half
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
