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

mod mapper;
mod matrix;
mod quantiles;
mod sample;
mod summaries;
#[cfg(test)]
mod tests;

pub use mapper::{BinMapper, FeatureBins};
pub use matrix::{BinData, BinnedMatrix};
pub use sample::{bin_sample_rows, BIN_SAMPLE_ROWS, BIN_SAMPLE_SEED};
pub use summaries::{
    merge_summaries, shard_summaries, shard_summaries_parts, summaries_from_bytes, summaries_to_bytes, weight_prefix,
    FeatureSummary, NumericSummary, ShardSpec,
};
