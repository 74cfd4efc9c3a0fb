//! The caller's arrays (what the Python bindings pass): columns read in place through
//! [`ColumnView`]s. The binned read is [`BinnedData::from_views`], which never copies the values;
//! the whole read and the prediction blocks copy them into owned columns.

use super::{Blocks, Schema, TableSource};
use crate::data::{BinnedData, Block, BlockLabels, Column, ColumnView, Dataset, Features, Target, MISSING_CODE};
use crate::error::{Error, Result};

/// Feature columns owned by the caller, with their schema (names, kinds, category levels), and
/// an optional target and sample weights.
///
/// Categorical columns hold codes into the schema's levels; a code outside them is missing (as
/// the binner reads it). Blocks read the columns in order: they must be in the order of the
/// schema given to [`TableSource::blocks`].
#[derive(Debug, Clone)]
pub struct ArraySource<'a> {
    schema: Schema,
    columns: Vec<ColumnView<'a>>,
    target: Option<Target>,
    sample_weight: Option<Vec<f64>>,
}

impl<'a> ArraySource<'a> {
    /// The columns `columns`, named and typed by `schema` (one entry per column), with the target
    /// and the sample weights, when given. Checks that every column, the target and the weights
    /// have the same number of rows (and the checks of [`Dataset::new`] on target and weights).
    pub fn new(
        schema: Schema,
        columns: Vec<ColumnView<'a>>,
        target: Option<Target>,
        sample_weight: Option<Vec<f64>>,
    ) -> Result<ArraySource<'a>> {
        if columns.len() != schema.names.len() {
            return Err(Error::InvalidData(format!(
                "{} feature columns for {} feature names",
                columns.len(),
                schema.names.len()
            )));
        }
        let n = columns.first().map_or(0, ColumnView::len);
        if let Some(f) = columns.iter().position(|c| c.len() != n) {
            return Err(Error::InvalidData(format!(
                "feature '{}' has {} rows, expected {n}",
                schema.names[f],
                columns[f].len()
            )));
        }
        crate::data::check_target_and_weights(n, target.as_ref(), sample_weight.as_deref())?;
        Ok(ArraySource { schema, columns, target, sample_weight })
    }

    fn n_rows(&self) -> usize {
        self.columns.first().map_or(0, ColumnView::len)
    }
}

/// A view copied into an owned column; category codes outside `levels` become missing.
fn owned(view: &ColumnView<'_>, levels: Option<&Vec<String>>) -> Column {
    match *view {
        ColumnView::Numeric(v) => {
            let mut values = vec![0.0; v.len()];
            v.copy_into(&mut values);
            Column::Numeric(values)
        }
        ColumnView::Categorical { codes, .. } => {
            let levels = levels.cloned().unwrap_or_default();
            let codes = codes.iter().map(|&c| if (c as usize) < levels.len() { c } else { MISSING_CODE }).collect();
            Column::Categorical { codes, levels }
        }
    }
}

impl TableSource for ArraySource<'_> {
    fn column_names(&self) -> Result<Vec<String>> {
        Ok(self.schema.names.clone())
    }

    fn read(&self) -> Result<Dataset> {
        let columns = self.columns.iter().zip(&self.schema.levels).map(|(v, l)| owned(v, l.as_ref())).collect();
        let features = Features { names: self.schema.names.clone(), columns };
        Dataset::new(features, self.target.clone(), self.sample_weight.clone())
    }

    fn read_binned(&self, max_bins: usize) -> Result<BinnedData> {
        let target = self.target.clone().ok_or_else(|| Error::InvalidData("the data have no label column".into()))?;
        BinnedData::from_views(self.schema.clone(), &self.columns, target, self.sample_weight.clone(), max_bins)
    }

    fn blocks(&self, schema: &Schema, block_rows: usize) -> Result<Blocks<'_>> {
        if self.columns.len() != schema.names.len() {
            return Err(Error::InvalidData(format!(
                "{} feature columns, the model has {}",
                self.columns.len(),
                schema.names.len()
            )));
        }
        let (n, step) = (self.n_rows(), block_rows.max(1));
        let (names, levels) = (schema.names.clone(), schema.levels.clone());
        Ok(Box::new((0..n).step_by(step).map(move |start| {
            let end = (start + step).min(n);
            let columns =
                self.columns.iter().zip(&levels).map(|(v, l)| owned(&v.rows(start, end), l.as_ref())).collect();
            let labels = match &self.target {
                Some(Target::Classes { y, classes }) => {
                    Some(BlockLabels::Single(y[start..end].iter().map(|&c| classes[c as usize].clone()).collect()))
                }
                Some(Target::Multilabel { y, labels }) => {
                    let k = labels.len();
                    Some(BlockLabels::Multi(y[start * k..end * k].to_vec()))
                }
                None => None,
            };
            Ok(Block { features: Features { names: names.clone(), columns }, labels })
        })))
    }
}
