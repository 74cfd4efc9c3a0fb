//! Data: in-memory datasets, the CSV and LIBSVM readers, and binning.
//!
//! A [`Dataset`] holds feature columns (numeric `f64` with `NaN` for missing, or categorical codes
//! with [`MISSING_CODE`]), an optional [`Target`] and optional sample weights. [`BinMapper`] turns
//! the features into a column-major [`BinnedMatrix`], which is all the tree learner ever reads.

#[cfg(feature = "arrow")]
mod arrow_reader;
mod binned;
mod bins;
mod blocks;
mod csv_reader;
mod csv_stream;
mod fast_csv;
mod interner;
mod libsvm;
#[cfg(feature = "arrow")]
mod parquet_pages;
mod schema;
pub mod source;
mod view;
mod weights;

#[cfg(feature = "arrow")]
pub use arrow_reader::{arrow_schema, read_arrow, read_arrow_binned, ArrowBlocks, ArrowFormat};
pub use binned::BinnedData;
pub use bins::{
    bin_sample_rows, merge_summaries, shard_summaries, shard_summaries_parts, summaries_from_bytes, summaries_to_bytes,
    weight_prefix, BinData, BinMapper, BinnedMatrix, FeatureBins, FeatureSummary, NumericSummary, ShardSpec,
    BIN_SAMPLE_ROWS, BIN_SAMPLE_SEED,
};
pub use blocks::{Block, BlockLabels, CsvBlocks};
pub use csv_reader::{csv_header, read_csv, read_csv_from, CsvOptions, LabelSelector};
pub use csv_stream::{read_csv_binned, BinnedTable, ProgressFn, ReadProgress, StreamOptions, DEFAULT_CHUNK_BYTES};
pub use fast_csv::MAX_CSV_COLUMNS;
pub use interner::Interner;
pub use libsvm::{dense_cell_budget, read_libsvm, read_libsvm_from, LibsvmOptions, MAX_LIBSVM_INDEX};
pub use schema::Schema;
pub use view::{Chunk, ChunkedColumn, ColumnView, Indices, NumericView, SharedBuffer};
pub(crate) use weights::total_weight;

use serde::{Deserialize, Serialize};

use crate::error::{shown, Error, Result};

/// The code of a missing categorical value.
pub const MISSING_CODE: u32 = u32::MAX;

/// Whether a feature is numeric or categorical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FeatureKind {
    /// Real values; `NaN` marks a missing value.
    Numeric,
    /// Category codes into a list of level names; [`MISSING_CODE`] marks a missing value.
    Categorical,
}

/// One feature column.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// Real values; `NaN` is missing. Infinite values are rejected by [`Dataset::new`].
    Numeric(Vec<f64>),
    /// Codes into `levels`; [`MISSING_CODE`] is missing.
    Categorical {
        /// One code per row.
        codes: Vec<u32>,
        /// The level names, indexed by code.
        levels: Vec<String>,
    },
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::Numeric(v) => v.len(),
            Column::Categorical { codes, .. } => codes.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The feature kind.
    pub fn kind(&self) -> FeatureKind {
        match self {
            Column::Numeric(_) => FeatureKind::Numeric,
            Column::Categorical { .. } => FeatureKind::Categorical,
        }
    }

    fn take(&self, rows: &[usize]) -> Column {
        match self {
            Column::Numeric(v) => Column::Numeric(rows.iter().map(|&r| v[r]).collect()),
            Column::Categorical { codes, levels } => {
                Column::Categorical { codes: rows.iter().map(|&r| codes[r]).collect(), levels: levels.clone() }
            }
        }
    }
}

/// The training target.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// Single-label classes (binary when there are two): `y[i]` indexes `classes`.
    ///
    /// For binary problems `classes[1]` is the positive class (+1).
    Classes {
        /// Class index of each row.
        y: Vec<u32>,
        /// Class names, in the documented order (see [`order_classes`]).
        classes: Vec<String>,
    },
    /// Multi-label: `y[i * k + l] ∈ {0, 1}` tells whether row `i` has label `l`.
    Multilabel {
        /// Row-major 0/1 matrix, `n × labels.len()`.
        y: Vec<u8>,
        /// Label names.
        labels: Vec<String>,
    },
}

impl Target {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Target::Classes { y, .. } => y.len(),
            Target::Multilabel { y, labels } => y.len() / labels.len().max(1),
        }
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Class or label names.
    pub fn names(&self) -> &[String] {
        match self {
            Target::Classes { classes, .. } => classes,
            Target::Multilabel { labels, .. } => labels,
        }
    }

    /// Builds a single-label target from raw label strings: classes are ordered by
    /// [`order_classes`] (with `positive`, if given, moved last so that it is class +1).
    pub fn from_strings(values: &[String], positive: Option<&str>) -> Result<Target> {
        let mut uniq: Vec<String> = values.to_vec();
        uniq.sort();
        uniq.dedup();
        let classes = order_classes(uniq, positive)?;
        let index: std::collections::HashMap<&str, u32> =
            classes.iter().enumerate().map(|(i, c)| (c.as_str(), i as u32)).collect();
        let y = values.iter().map(|v| index[v.as_str()]).collect();
        Ok(Target::Classes { y, classes })
    }

    fn take(&self, rows: &[usize]) -> Target {
        match self {
            Target::Classes { y, classes } => {
                Target::Classes { y: rows.iter().map(|&r| y[r]).collect(), classes: classes.clone() }
            }
            Target::Multilabel { y, labels } => {
                let k = labels.len();
                let mut out = Vec::with_capacity(rows.len() * k);
                for &r in rows {
                    out.extend_from_slice(&y[r * k..(r + 1) * k]);
                }
                Target::Multilabel { y: out, labels: labels.clone() }
            }
        }
    }
}

/// Orders class names: numerically when every name parses as a number, otherwise
/// lexicographically. For two classes the second is the positive class (+1): `1` for 0/1 and
/// −1/+1 labels, `true` for false/true, the later name in alphabetical order otherwise. A given
/// `positive` name is moved to the end instead.
pub fn order_classes(mut classes: Vec<String>, positive: Option<&str>) -> Result<Vec<String>> {
    let numeric: Option<Vec<f64>> = classes.iter().map(|c| c.trim().parse::<f64>().ok()).collect();
    if let Some(nums) = numeric {
        let mut pairs: Vec<(f64, String)> = nums.into_iter().zip(classes).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        classes = pairs.into_iter().map(|p| p.1).collect();
    } else {
        classes.sort();
    }
    if let Some(p) = positive {
        let pos = classes
            .iter()
            .position(|c| c == p)
            .ok_or_else(|| Error::param("positive", format!("one of the labels {classes:?}"), format!("'{p}'")))?;
        let c = classes.remove(pos);
        classes.push(c);
    }
    Ok(classes)
}

/// Feature columns with their names.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// Feature names (unique).
    pub names: Vec<String>,
    /// The columns, all of the same length.
    pub columns: Vec<Column>,
}

impl Features {
    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.columns.first().map_or(0, Column::len)
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.columns.len()
    }

    /// Feature kinds.
    pub fn kinds(&self) -> Vec<FeatureKind> {
        self.columns.iter().map(Column::kind).collect()
    }

    /// Builds numeric features from a row-major matrix (`NaN` = missing), named `f0, f1, ...`.
    pub fn from_row_major(values: &[f64], n_rows: usize, n_features: usize) -> Result<Features> {
        if values.len() != n_rows * n_features {
            return Err(Error::InvalidData(format!(
                "matrix has {} values, expected {n_rows} × {n_features}",
                values.len()
            )));
        }
        let columns = (0..n_features)
            .map(|f| Column::Numeric((0..n_rows).map(|r| values[r * n_features + f]).collect()))
            .collect();
        Ok(Features { names: (0..n_features).map(|f| format!("f{f}")).collect(), columns })
    }
}

/// A dataset: features, an optional target and optional sample weights.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// The features.
    pub features: Features,
    /// The target (absent for prediction-only data).
    pub target: Option<Target>,
    /// Per-row sample weights (finite, ≥ 0, not all zero).
    pub sample_weight: Option<Vec<f64>>,
}

impl Dataset {
    /// Builds and validates a dataset: equal column lengths, no infinite feature values,
    /// codes within their levels, a target of matching length with at least two classes (or
    /// labels), valid weights.
    pub fn new(features: Features, target: Option<Target>, sample_weight: Option<Vec<f64>>) -> Result<Dataset> {
        let n = features.n_rows();
        if features.names.len() != features.columns.len() {
            return Err(Error::InvalidData(format!(
                "{} feature names for {} columns",
                features.names.len(),
                features.columns.len()
            )));
        }
        let mut seen = std::collections::HashSet::new();
        for name in &features.names {
            if !seen.insert(name) {
                return Err(Error::InvalidData(format!("duplicate feature name '{}'", shown(name))));
            }
        }
        for (f, col) in features.columns.iter().enumerate() {
            let name = &features.names[f];
            if col.len() != n {
                return Err(Error::InvalidData(format!(
                    "feature '{}' has {} rows, expected {n}",
                    shown(name),
                    col.len()
                )));
            }
            match col {
                Column::Numeric(v) => {
                    if let Some(r) = v.iter().position(|x| x.is_infinite()) {
                        return Err(Error::InvalidData(format!(
                            "feature '{}', row {}: infinite value",
                            shown(name),
                            r + 1
                        )));
                    }
                }
                Column::Categorical { codes, levels } => {
                    if let Some(r) = codes.iter().position(|&c| c != MISSING_CODE && c as usize >= levels.len()) {
                        return Err(Error::InvalidData(format!(
                            "feature '{name}', row {}: category code {} but only {} levels",
                            r + 1,
                            codes[r],
                            levels.len()
                        )));
                    }
                }
            }
        }
        check_target_and_weights(n, target.as_ref(), sample_weight.as_deref())?;
        Ok(Dataset { features, target, sample_weight })
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.features.n_rows()
    }

    /// Number of features.
    pub fn n_features(&self) -> usize {
        self.features.n_features()
    }

    /// The rows `rows` (in that order) as a new dataset.
    pub fn subset(&self, rows: &[usize]) -> Dataset {
        Dataset {
            features: Features {
                names: self.features.names.clone(),
                columns: self.features.columns.iter().map(|c| c.take(rows)).collect(),
            },
            target: self.target.as_ref().map(|t| t.take(rows)),
            sample_weight: self.sample_weight.as_ref().map(|w| rows.iter().map(|&r| w[r]).collect()),
        }
    }

    /// The target, or an error saying that labels are needed.
    pub fn target(&self) -> Result<&Target> {
        self.target.as_ref().ok_or_else(|| Error::InvalidData("the data have no label column".into()))
    }

    /// Checks that the target can be trained on: at least one row, at least two classes present
    /// (or, for multi-label data, at least one label that is both present and absent somewhere).
    /// With sample weights only rows of positive weight count: a row of weight 0 is a row left
    /// out (frequency weights).
    pub fn check_trainable(&self) -> Result<()> {
        if self.n_rows() == 0 {
            return Err(Error::InvalidData("no rows".into()));
        }
        if self.n_features() == 0 {
            return Err(Error::InvalidData("no feature columns".into()));
        }
        check_trainable_target(self.n_rows(), self.n_features(), self.target()?, self.sample_weight.as_deref())
    }
}

/// The checks of [`Dataset::new`] on a target and sample weights for `n` rows.
pub(crate) fn check_target_and_weights(n: usize, target: Option<&Target>, sample_weight: Option<&[f64]>) -> Result<()> {
    if let Some(t) = target {
        if t.len() != n {
            return Err(Error::InvalidData(format!("target has {} rows, features have {n}", t.len())));
        }
        match t {
            Target::Classes { y, classes } => {
                if let Some(r) = y.iter().position(|&c| c as usize >= classes.len()) {
                    return Err(Error::InvalidData(format!("row {}: class index out of range", r + 1)));
                }
            }
            Target::Multilabel { y, labels } => {
                if labels.is_empty() {
                    return Err(Error::InvalidData("multi-label target with no labels".into()));
                }
                if y.iter().any(|&v| v > 1) {
                    return Err(Error::InvalidData("multi-label values must be 0 or 1".into()));
                }
            }
        }
    }
    if let Some(w) = sample_weight {
        if w.len() != n {
            return Err(Error::InvalidData(format!("{} sample weights for {n} rows", w.len())));
        }
        if let Some(r) = w.iter().position(|x| !(x.is_finite() && *x >= 0.0)) {
            return Err(Error::InvalidData(format!(
                "sample weight of row {} is {}: weights must be finite and ≥ 0",
                r + 1,
                w[r]
            )));
        }
        if n > 0 && w.iter().all(|&x| x == 0.0) {
            return Err(Error::InvalidData("all sample weights are zero".into()));
        }
        // Frequency weights: Σ w is the number of examples the boosters count.
        let total: f64 = w.iter().sum();
        if !total.is_finite() {
            return Err(Error::InvalidData(format!(
                "the sample weights sum to {total} (more than {:e}): scale them down",
                f64::MAX
            )));
        }
    }
    Ok(())
}

/// The checks of [`Dataset::check_trainable`] on `n_rows × n_features` data with `target` and
/// optional sample weights: only rows of positive weight count (a row of weight 0 is a row left
/// out: frequency weights).
pub(crate) fn check_trainable_target(
    n_rows: usize,
    n_features: usize,
    target: &Target,
    sample_weight: Option<&[f64]>,
) -> Result<()> {
    if n_rows == 0 {
        return Err(Error::InvalidData("no rows".into()));
    }
    if n_features == 0 {
        return Err(Error::InvalidData("no feature columns".into()));
    }
    let kept = |i: usize| sample_weight.is_none_or(|w| w[i] > 0.0);
    match target {
        Target::Classes { y, classes } => {
            let mut present = vec![false; classes.len()];
            let mut present_all = vec![false; classes.len()];
            for (i, &c) in y.iter().enumerate() {
                present_all[c as usize] = true;
                if kept(i) {
                    present[c as usize] = true;
                }
            }
            let n_present = present.iter().filter(|&&p| p).count();
            if n_present < 2 {
                let class = classes.iter().zip(&present).find(|p| *p.1).map_or("none", |p| p.0);
                return Err(Error::InvalidData(if present_all.iter().filter(|&&p| p).count() >= 2 {
                    format!(
                        "the sample weights are positive on one class only ({class}): training needs two \
                         classes of positive weight"
                    )
                } else {
                    format!("only one class ({class}) in the training labels: need at least two")
                }));
            }
        }
        Target::Multilabel { y, labels } => {
            let k = labels.len();
            let n_kept = (0..n_rows).filter(|&i| kept(i)).count();
            let varied = (0..k).any(|l| {
                let s: usize =
                    y.iter().skip(l).step_by(k).enumerate().filter(|(i, _)| kept(*i)).map(|(_, &v)| v as usize).sum();
                s > 0 && s < n_kept
            });
            if !varied {
                return Err(Error::InvalidData(
                    "every label is constant over the training rows (of positive sample weight)".into(),
                ));
            }
        }
    }
    Ok(())
}
