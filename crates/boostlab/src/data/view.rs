//! Column views: the caller's buffers, read in place.
//!
//! The one input seam of the library: every source — numpy arrays (f32 or f64, any order, any
//! stride), scipy CSC matrices ([`NumericView::csc_columns`]: the stored entries, never a dense
//! copy), DataFrame columns, Arrow arrays, chunks of a streamed file — is presented as a list of
//! [`ColumnView`]s, and binning ([`super::BinMapper::fit_views`], [`super::BinMapper::bin_into`])
//! and prediction ([`crate::Ensemble::predict_into`]) read the views directly.
//! No float copy of the data is ever made: an `f32` value is widened to `f64` exactly when it is
//! read, so the same values given as `f32` or as `f64` give bit-identical bins and models.

use crate::error::{Error, Result};

/// A contiguous `f32` or `f64` buffer.
#[derive(Debug, Clone, Copy)]
enum Dense<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
}

impl<'a> Dense<'a> {
    fn len(&self) -> usize {
        match self {
            Dense::F32(v) => v.len(),
            Dense::F64(v) => v.len(),
        }
    }

    /// Element `p` as `f64` (exact for `f32`).
    #[inline]
    fn at(&self, p: usize) -> f64 {
        match self {
            Dense::F32(v) => f64::from(v[p]),
            Dense::F64(v) => v[p],
        }
    }

    /// Elements `lo..hi`.
    fn slice(&self, lo: usize, hi: usize) -> Dense<'a> {
        match *self {
            Dense::F32(v) => Dense::F32(&v[lo..hi]),
            Dense::F64(v) => Dense::F64(&v[lo..hi]),
        }
    }
}

/// The row indices of a sparse matrix (scipy's `indices` and `indptr`), `i32` or `i64`, read in
/// place.
#[derive(Debug, Clone, Copy)]
pub enum Indices<'a> {
    /// 32-bit indices.
    I32(&'a [i32]),
    /// 64-bit indices.
    I64(&'a [i64]),
}

impl<'a> Indices<'a> {
    /// Number of indices.
    pub fn len(&self) -> usize {
        match self {
            Indices::I32(v) => v.len(),
            Indices::I64(v) => v.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Index `p` (widened; may be negative in unchecked input).
    #[inline]
    fn at(&self, p: usize) -> i64 {
        match self {
            Indices::I32(v) => i64::from(v[p]),
            Indices::I64(v) => v[p],
        }
    }

    /// Index `p` of checked input (see [`NumericView::csc_columns`]): a row number.
    #[inline]
    fn row(&self, p: usize) -> usize {
        self.at(p) as usize
    }

    fn slice(&self, lo: usize, hi: usize) -> Indices<'a> {
        match *self {
            Indices::I32(v) => Indices::I32(&v[lo..hi]),
            Indices::I64(v) => Indices::I64(&v[lo..hi]),
        }
    }

    /// The first position `p` with `row(p) ≥ r` (the indices increase).
    fn lower_bound(&self, r: usize) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.row(mid) < r {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// One column of a CSC matrix, read in place: the stored `(row, value)` pairs of the view's rows
/// `first_row .. first_row + len` (rows strictly increasing). A row not stored holds 0.0; a stored
/// NaN is missing.
#[derive(Debug, Clone, Copy)]
struct Sparse<'a> {
    rows: Indices<'a>,
    values: Dense<'a>,
    /// The column row that is row 0 of the view.
    first_row: usize,
}

impl Sparse<'_> {
    /// Value of view row `i`: the stored value, or 0.0.
    #[inline]
    fn get(&self, i: usize) -> f64 {
        let r = self.first_row + i;
        let p = self.rows.lower_bound(r);
        if p < self.rows.len() && self.rows.row(p) == r {
            self.values.at(p)
        } else {
            0.0
        }
    }

    /// Calls `f(i, x)` for view rows `0..len` in order, 0.0 for the rows not stored. The one place
    /// where a sparse column becomes the values the binner and the predictor see.
    #[inline]
    fn for_each(&self, len: usize, mut f: impl FnMut(usize, f64)) {
        let mut next = 0;
        for p in 0..self.rows.len() {
            let i = self.rows.row(p) - self.first_row;
            for z in next..i {
                f(z, 0.0);
            }
            f(i, self.values.at(p));
            next = i + 1;
        }
        for z in next..len {
            f(z, 0.0);
        }
    }
}

/// A caller's buffer of one chunk, shared (an Arrow buffer, or a column the bindings converted).
pub type SharedBuffer<T> = std::sync::Arc<dyn AsRef<[T]> + Send + Sync>;

/// One chunk of a [`ChunkedColumn`]: an `f32` or `f64` buffer, held by reference count.
#[derive(Clone)]
pub enum Chunk {
    /// `f32` values.
    F32(SharedBuffer<f32>),
    /// `f64` values.
    F64(SharedBuffer<f64>),
}

impl Chunk {
    fn dense(&self) -> Dense<'_> {
        match self {
            Chunk::F32(b) => Dense::F32((**b).as_ref()),
            Chunk::F64(b) => Dense::F64((**b).as_ref()),
        }
    }
}

/// A numeric column in chunks, read in place (an Arrow chunked array: one buffer per record
/// batch). [`NumericView::chunked`] reads it as one column of the chunks' total length, so a
/// table that arrives in batches is binned without concatenating its columns.
#[derive(Clone, Default)]
pub struct ChunkedColumn {
    chunks: Vec<Chunk>,
    /// The first row of each chunk, then the number of rows.
    starts: Vec<usize>,
}

impl std::fmt::Debug for ChunkedColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkedColumn").field("starts", &self.starts).finish()
    }
}

impl ChunkedColumn {
    /// The column of `chunks`, in row order. Every chunk must hold the same element type (as the
    /// chunks of one Arrow column do); an error otherwise.
    pub fn new(chunks: Vec<Chunk>) -> Result<ChunkedColumn> {
        if chunks.windows(2).any(|w| std::mem::discriminant(&w[0]) != std::mem::discriminant(&w[1])) {
            return Err(Error::InvalidData("the chunks of a column mix f32 and f64 values".into()));
        }
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0usize;
        starts.push(0);
        for c in &chunks {
            at += c.dense().len();
            starts.push(at);
        }
        Ok(ChunkedColumn { chunks, starts })
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// True when the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rows `first .. first + len` of a chunked column.
#[derive(Debug, Clone, Copy)]
struct Chunked<'a> {
    column: &'a ChunkedColumn,
    first: usize,
}

impl Chunked<'_> {
    /// Value of view row `i`: a binary search for its chunk.
    #[inline]
    fn get(&self, i: usize) -> f64 {
        let r = self.first + i;
        let s = &self.column.starts;
        let c = s.partition_point(|&x| x <= r) - 1;
        self.column.chunks[c].dense().at(r - s[c])
    }

    /// Calls `f(i, x)` for view rows `0..len` in order, chunk by chunk.
    #[inline]
    fn for_each(&self, len: usize, mut f: impl FnMut(usize, f64)) {
        let (lo, hi) = (self.first, self.first + len);
        for (c, chunk) in self.column.chunks.iter().enumerate() {
            let (s, e) = (self.column.starts[c], self.column.starts[c + 1]);
            if e <= lo || s >= hi {
                continue;
            }
            let (a, b) = (lo.max(s), hi.min(e));
            match chunk.dense() {
                Dense::F32(v) => {
                    v[a - s..b - s].iter().enumerate().for_each(|(k, &x)| f(a - lo + k, f64::from(x)));
                }
                Dense::F64(v) => v[a - s..b - s].iter().enumerate().for_each(|(k, &x)| f(a - lo + k, x)),
            }
        }
    }
}

/// The buffer of a [`NumericView`].
#[derive(Debug, Clone, Copy)]
enum Values<'a> {
    /// `len` values at `[i * stride]`.
    Strided(Dense<'a>),
    /// A sparse column (the stride is unused).
    Sparse(Sparse<'a>),
    /// A chunked column (the stride is unused).
    Chunked(Chunked<'a>),
}

/// A numeric column read in place (`NaN` is a missing value): `len` values at `data[i * stride]`
/// (`f32` or `f64`), or one column of a CSC matrix. A column of a C-ordered `n × d` matrix is the
/// view at offset `j` with stride `d`; of a Fortran-ordered one, a contiguous slice.
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
        NumericView { values: Values::Strided(Dense::F64(data)), stride: 1, len: data.len() }
    }

    /// A contiguous `f32` column.
    pub fn f32(data: &'a [f32]) -> NumericView<'a> {
        NumericView { values: Values::Strided(Dense::F32(data)), stride: 1, len: data.len() }
    }

    /// `len` `f64` values at `data[0], data[stride], ...`; an error when they do not fit in `data`.
    /// A stride of 0 repeats `data[0]`.
    pub fn strided_f64(data: &'a [f64], stride: usize, len: usize) -> Result<NumericView<'a>> {
        check_span(data.len(), stride, len)?;
        Ok(NumericView { values: Values::Strided(Dense::F64(data)), stride, len })
    }

    /// `len` `f32` values at `data[0], data[stride], ...`; an error when they do not fit in `data`.
    pub fn strided_f32(data: &'a [f32], stride: usize, len: usize) -> Result<NumericView<'a>> {
        check_span(data.len(), stride, len)?;
        Ok(NumericView { values: Values::Strided(Dense::F32(data)), stride, len })
    }

    /// A chunked column, read in place (a column of one chunk is that chunk's contiguous view).
    pub fn chunked(column: &'a ChunkedColumn) -> NumericView<'a> {
        let len = column.len();
        match column.chunks.as_slice() {
            [one] => NumericView { values: Values::Strided(one.dense()), stride: 1, len },
            _ => NumericView { values: Values::Chunked(Chunked { column, first: 0 }), stride: 1, len },
        }
    }

    /// The columns of an `n_rows`-row CSC matrix (scipy's `indptr`, `indices`, `data`; `data` a
    /// contiguous view), read in place: column `j` holds `data[p]` at row `indices[p]` for `p` in
    /// `indptr[j] .. indptr[j + 1]`, and 0.0 at the rows not stored. The format must be canonical
    /// (row indices strictly increasing within a column, as after scipy's `sum_duplicates`);
    /// anything else is an error naming the problem. One pass over the indices.
    pub fn csc_columns(
        n_rows: usize,
        indptr: Indices<'a>,
        indices: Indices<'a>,
        data: NumericView<'a>,
    ) -> Result<Vec<NumericView<'a>>> {
        let bad = |what: String| Err(Error::InvalidData(format!("malformed CSC matrix: {what}")));
        let values = match data.values {
            Values::Strided(d) if data.stride == 1 && d.len() == data.len => d,
            _ => return bad("its values must be a contiguous buffer".into()),
        };
        if indptr.is_empty() {
            return bad("indptr is empty".into());
        }
        let nnz = indices.len().min(values.len());
        let mut out = Vec::with_capacity(indptr.len() - 1);
        for j in 0..indptr.len() - 1 {
            let (lo, hi) = (indptr.at(j), indptr.at(j + 1));
            if lo < 0 || lo > hi || hi as u64 > nnz as u64 {
                return bad(format!("column {j} spans {lo}..{hi} of {nnz} stored values"));
            }
            let (lo, hi) = (lo as usize, hi as usize);
            let mut prev = -1i64;
            for p in lo..hi {
                let r = indices.at(p);
                if r <= prev || r as u64 >= n_rows as u64 {
                    return bad(format!(
                        "column {j}: row index {r} after {prev} (indices must increase within 0..{n_rows}; \
                         call sum_duplicates)"
                    ));
                }
                prev = r;
            }
            let col = Sparse { rows: indices.slice(lo, hi), values: values.slice(lo, hi), first_row: 0 };
            out.push(NumericView { values: Values::Sparse(col), stride: 0, len: n_rows });
        }
        Ok(out)
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the view has no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True for a column of a sparse matrix (read by its stored rows, not by position).
    pub fn is_sparse(&self) -> bool {
        matches!(self.values, Values::Sparse(_))
    }

    /// True for `f32` values.
    pub fn is_f32(&self) -> bool {
        match self.values {
            Values::Strided(d) | Values::Sparse(Sparse { values: d, .. }) => matches!(d, Dense::F32(_)),
            Values::Chunked(c) => matches!(c.column.chunks.first(), Some(Chunk::F32(_))),
        }
    }

    /// Value `i` as `f64` (exact for `f32`; a binary search in a sparse column). Panics when
    /// `i ≥ len` (an index the library controls).
    #[inline]
    pub fn get(&self, i: usize) -> f64 {
        match self.values {
            Values::Strided(v) => v.at(i * self.stride),
            Values::Sparse(s) => {
                assert!(i < self.len, "row {i} of a sparse column of {} rows", self.len);
                s.get(i)
            }
            Values::Chunked(c) => {
                assert!(i < self.len, "row {i} of a chunked column of {} rows", self.len);
                c.get(i)
            }
        }
    }

    /// The values of rows `start..end` (clamped to the view) as a view.
    pub fn rows(&self, start: usize, end: usize) -> NumericView<'a> {
        let end = end.min(self.len);
        let start = start.min(end);
        let len = end - start;
        let values = match self.values {
            Values::Strided(_) if len == 0 => self.values,
            Values::Strided(v) => {
                let at = start * self.stride;
                Values::Strided(v.slice(at, v.len()))
            }
            Values::Sparse(s) => {
                let (r0, r1) = (s.first_row + start, s.first_row + end);
                let (lo, hi) = (s.rows.lower_bound(r0), s.rows.lower_bound(r1));
                Values::Sparse(Sparse { rows: s.rows.slice(lo, hi), values: s.values.slice(lo, hi), first_row: r0 })
            }
            Values::Chunked(c) => Values::Chunked(Chunked { column: c.column, first: c.first + start }),
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
            Values::Sparse(s) => return s.for_each(self.len, f),
            Values::Chunked(c) => return c.for_each(self.len, f),
            Values::Strided(Dense::F32(v)) => {
                for (i, &x) in v[..span].iter().step_by(self.stride.max(1)).take(self.len).enumerate() {
                    f(i, f64::from(x));
                }
            }
            Values::Strided(Dense::F64(v)) => {
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

    /// Calls `f(r, x)` for each of the non-decreasing row indices `rows` (each `< len`; a row may be
    /// listed more than once, as in a frequency-weighted sample) with its value:
    /// direct reads from a strided view, one merged walk over a sparse column's stored rows.
    pub fn for_rows(&self, rows: &[usize], mut f: impl FnMut(usize, f64)) {
        match self.values {
            Values::Sparse(s) => {
                let mut p = 0;
                for &r in rows {
                    let abs = s.first_row + r;
                    while p < s.rows.len() && s.rows.row(p) < abs {
                        p += 1;
                    }
                    let stored = p < s.rows.len() && s.rows.row(p) == abs;
                    f(r, if stored { s.values.at(p) } else { 0.0 });
                }
            }
            Values::Strided(_) | Values::Chunked(_) => rows.iter().for_each(|&r| f(r, self.get(r))),
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
    fn strided_views_read_the_right_values() {
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

    #[test]
    fn chunked_views_read_the_values_of_every_chunk_in_order() {
        use std::sync::Arc;
        let parts: Vec<Vec<f32>> = vec![vec![1.0, 2.0], vec![], vec![3.0, 4.0, 5.0]];
        let chunks = parts.iter().map(|p| Chunk::F32(Arc::new(p.clone()))).collect();
        let col = ChunkedColumn::new(chunks).unwrap();
        let v = NumericView::chunked(&col);
        assert!(v.is_f32());
        assert_eq!(v.len(), 5);
        assert_eq!(v.iter().collect::<Vec<_>>(), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        let mut seen = vec![];
        v.rows(1, 4).for_each(|i, x| seen.push((i, x)));
        assert_eq!(seen, vec![(0, 2.0), (1, 3.0), (2, 4.0)]);
        let mut picked = vec![];
        v.rows(1, 5).for_rows(&[0, 2, 2, 3], |r, x| picked.push((r, x)));
        assert_eq!(picked, vec![(0, 2.0), (2, 4.0), (2, 4.0), (3, 5.0)]);
        let one = ChunkedColumn::new(vec![Chunk::F64(Arc::new(vec![7.0, 8.0]))]).unwrap();
        assert_eq!(NumericView::chunked(&one).iter().collect::<Vec<_>>(), vec![7.0, 8.0]);
        let mixed = vec![Chunk::F64(Arc::new(vec![1.0])), Chunk::F32(Arc::new(vec![1.0f32]))];
        assert!(ChunkedColumn::new(mixed).is_err());
    }
}
