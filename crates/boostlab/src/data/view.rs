//! Column views: the caller's buffers, read in place (issue 12).
//!
//! The one input seam of the library: every source — numpy arrays (f32 or f64, any order, any
//! stride), DataFrame columns, Arrow arrays, chunks of a streamed file — is presented as a list of
//! [`ColumnView`]s, and binning ([`super::BinMapper::fit_views`], [`super::BinMapper::bin_into`])
//! and prediction ([`crate::Ensemble::decision_function_views_into`]) read the views directly.
//! No float copy of the data is ever made: an `f32` value is widened to `f64` exactly when it is
//! read, so the same values given as `f32` or as `f64` give bit-identical bins and models.

use crate::error::{Error, Result};

/// The element type and buffer of a [`NumericView`].
#[derive(Debug, Clone, Copy)]
enum Values<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

/// A numeric column read in place: `len` values at `data[i * stride]` (`f32` or `f64`; `NaN` is a
/// missing value). A column of a C-ordered `n × d` matrix is the view at offset `j` with stride
/// `d`; of a Fortran-ordered one, a contiguous slice.
#[derive(Debug, Clone, Copy)]
pub struct NumericView<'a> {
    values: Values<'a>,
    stride: usize,
    len: usize,
}

/// Checks that `len` values at stride `stride` fit in a buffer of `buf` elements.
fn check_span(buf: usize, stride: usize, len: usize) -> Result<()> {
    let need =
        if len == 0 { 0 } else { (len - 1).checked_mul(stride).and_then(|s| s.checked_add(1)).unwrap_or(usize::MAX) };
    if need > buf {
        return Err(Error::InvalidData(format!(
            "a column view of {len} values at stride {stride} needs {need} elements, the buffer has {buf}"
        )));
    }
    Ok(())
}

impl<'a> NumericView<'a> {
    /// A contiguous `f64` column.
    pub fn f64(data: &'a [f64]) -> NumericView<'a> {
        NumericView { values: Values::F64(data), stride: 1, len: data.len() }
    }

    /// A contiguous `f32` column.
    pub fn f32(data: &'a [f32]) -> NumericView<'a> {
        NumericView { values: Values::F32(data), stride: 1, len: data.len() }
    }

    /// `len` `f64` values at `data[0], data[stride], ...`; an error when they do not fit in `data`.
    /// A stride of 0 repeats `data[0]`.
    pub fn strided_f64(data: &'a [f64], stride: usize, len: usize) -> Result<NumericView<'a>> {
        check_span(data.len(), stride, len)?;
        Ok(NumericView { values: Values::F64(data), stride, len })
    }

    /// `len` `f32` values at `data[0], data[stride], ...`; an error when they do not fit in `data`.
    pub fn strided_f32(data: &'a [f32], stride: usize, len: usize) -> Result<NumericView<'a>> {
        check_span(data.len(), stride, len)?;
        Ok(NumericView { values: Values::F32(data), stride, len })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the view has no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True for an `f32` buffer.
    pub fn is_f32(&self) -> bool {
        matches!(self.values, Values::F32(_))
    }

    /// Value `i` as `f64` (exact for `f32`). Panics when `i ≥ len` (an index the library controls).
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        match self.values {
            Values::F32(v) => f64::from(v[i * self.stride]),
            Values::F64(v) => v[i * self.stride],
        }
    }

    /// The values of rows `start..end` (clamped to the view) as a view.
    pub fn rows(&self, start: usize, end: usize) -> NumericView<'a> {
        let end = end.min(self.len);
        let start = start.min(end);
        let len = end - start;
        if len == 0 {
            return NumericView { values: self.values, stride: self.stride, len: 0 };
        }
        let at = start * self.stride;
        let values = match self.values {
            Values::F32(v) => Values::F32(&v[at..]),
            Values::F64(v) => Values::F64(&v[at..]),
        };
        NumericView { values, stride: self.stride, len }
    }

    /// Calls `f(i, x)` for every value in order; the element type is matched once, outside the
    /// loop.
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        if self.len == 0 {
            return;
        }
        let span = (self.len - 1) * self.stride + 1;
        match self.values {
            Values::F32(v) => {
                for (i, &x) in v[..span].iter().step_by(self.stride.max(1)).take(self.len).enumerate() {
                    f(i, f64::from(x));
                }
            }
            Values::F64(v) => {
                for (i, &x) in v[..span].iter().step_by(self.stride.max(1)).take(self.len).enumerate() {
                    f(i, x);
                }
            }
        }
        if self.stride == 0 {
            // `step_by(1)` over a one-element span yields one value: repeat it.
            let x = self.get(0);
            for i in 1..self.len {
                f(i, x);
            }
        }
    }

    /// The values as an iterator of `f64`.
    pub fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        (0..self.len).map(move |i| self.get(i))
    }

    /// Writes the values into `out` (`len` values), widened to `f64`.
    pub fn copy_into(&self, out: &mut [f64]) {
        self.for_each(|i, x| out[i] = x);
    }
}

/// A column of features as the binner and the predictor read it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum ColumnView<'a> {
    /// Numeric values, read in place.
    Numeric(NumericView<'a>),
    /// Category codes (`MISSING_CODE` = missing; any code ≥ `n_levels` is missing too when
    /// binned) into `n_levels` levels.
    Categorical {
        /// One code per row.
        codes: &'a [u32],
        /// Number of levels.
        n_levels: usize,
    },
}

impl<'a> ColumnView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            ColumnView::Numeric(v) => v.len(),
            ColumnView::Categorical { codes, .. } => codes.len(),
        }
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The feature kind.
    pub fn kind(&self) -> super::FeatureKind {
        match self {
            ColumnView::Numeric(_) => super::FeatureKind::Numeric,
            ColumnView::Categorical { .. } => super::FeatureKind::Categorical,
        }
    }

    /// The rows `start..end` of the column.
    pub fn rows(&self, start: usize, end: usize) -> ColumnView<'a> {
        match *self {
            ColumnView::Numeric(v) => ColumnView::Numeric(v.rows(start, end)),
            ColumnView::Categorical { codes, n_levels } => {
                let end = end.min(codes.len());
                ColumnView::Categorical { codes: &codes[start.min(end)..end], n_levels }
            }
        }
    }

    /// A view of an owned column.
    pub fn of(column: &'a super::Column) -> ColumnView<'a> {
        match column {
            super::Column::Numeric(v) => ColumnView::Numeric(NumericView::f64(v)),
            super::Column::Categorical { codes, levels } => ColumnView::Categorical { codes, n_levels: levels.len() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_12_strided_views_read_the_right_values() {
        // A C-ordered 3 × 2 matrix: column 1 is at offset 1, stride 2.
        let m = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let c1 = NumericView::strided_f32(&m[1..], 2, 3).unwrap();
        assert_eq!(c1.iter().collect::<Vec<_>>(), vec![2.0, 4.0, 6.0]);
        let mut seen = vec![];
        c1.for_each(|i, x| seen.push((i, x)));
        assert_eq!(seen, vec![(0, 2.0), (1, 4.0), (2, 6.0)]);
        assert_eq!(c1.rows(1, 3).iter().collect::<Vec<_>>(), vec![4.0, 6.0]);
        assert!(c1.rows(3, 3).is_empty());
        let z = NumericView::strided_f64(&[7.0], 0, 3).unwrap();
        let mut out = vec![0.0; 3];
        z.copy_into(&mut out);
        assert_eq!(out, vec![7.0; 3]);
        let e = NumericView::strided_f32(&m[1..], 2, 4).unwrap_err().to_string();
        assert!(e.contains("needs 7 elements, the buffer has 5"), "{e}");
        // f32 values widen exactly.
        let x = 0.1f32;
        assert_eq!(NumericView::f32(&[x]).get(0), f64::from(x));
    }
}
