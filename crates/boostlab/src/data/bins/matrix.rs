//! [`BinnedMatrix`]: the bin of every (row, feature), column-major, as `u8` or `u16`.

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
