//! The fixed, seeded sample of rows whose values place the quantile thresholds of large data.

use rand::seq::index;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::data::view::{ColumnView, NumericView};

/// Above this many usable rows (the sum of the sample weights, or all rows without weights), the
/// thresholds of a numeric feature come from a sample of this many rows (LightGBM's default
/// `bin_construct_sample_cnt`). A feature with at most this many non-missing usable values is
/// binned from all of them, whatever the number of rows.
pub const BIN_SAMPLE_ROWS: usize = 200_000;

/// Seed of the row sample behind [`BIN_SAMPLE_ROWS`]: fixed, so the bins depend on the data only
/// (not on the booster's seed or the number of threads).
pub const BIN_SAMPLE_SEED: u64 = 0x6269_6e73; // "bins"

/// The increasing row indices of the binning sample: [`BIN_SAMPLE_ROWS`] of the rows with a
/// positive weight (all rows without weights), drawn with [`BIN_SAMPLE_SEED`], or `None` when
/// there are no more such rows than that (no sampling). A streaming reader that counted the rows
/// (and read the weights) calls it to know which rows to give [`NumericSummary::push`](super::NumericSummary::push) as sampled.
pub fn bin_sample_rows(n: usize, w: Option<&[f64]>) -> Option<Vec<usize>> {
    sample_rows(n, w)
}

/// Above this total weight the positions of the weighted binning sample are drawn among this many
/// equal units of weight instead of among `⌈Σ w⌉` (every position stays an exact integer).
pub(super) const MAX_SAMPLE_UNITS: f64 = (1u64 << 52) as f64;

/// The non-decreasing row indices of the binning sample: [`BIN_SAMPLE_ROWS`] of the rows, or
/// `None` when the rows count no more than that (no sampling). With sample weights (frequency
/// weights) the sample is drawn among the units of weight, row `i` holding the units
/// `[Σ_{j<i} w_j, Σ_{j≤i} w_j)`: a row appears once per sampled unit (so a row of weight 0 never),
/// and integer weights sample exactly the rows the repeated data would.
pub(super) fn sample_rows(n: usize, w: Option<&[f64]>) -> Option<Vec<usize>> {
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
pub(super) fn gathered<'a>(c: &ColumnView<'a>) -> Option<NumericView<'a>> {
    match c {
        ColumnView::Numeric(v) if !v.is_sparse() => Some(*v),
        _ => None,
    }
}

/// Sampled rows per task of [`gather_sample`].
const GATHER_BLOCK: usize = 2048;

/// The values of the sampled `rows` (non-decreasing, possibly repeated) of every numeric column
/// (empty for a categorical one), in the order of `rows`. One parallel task per block
/// of sampled rows reads each row's values of every feature, so the rows of a C-ordered matrix
/// are read from memory once, not once per feature.
pub(super) fn gather_sample(columns: &[ColumnView<'_>], rows: &[usize]) -> Vec<Vec<f64>> {
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
