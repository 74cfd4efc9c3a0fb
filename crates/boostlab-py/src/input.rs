//! Python inputs as the core's column views: numpy buffers read in place, CSC matrices,
//! categorical codes, targets.

use super::*;

/// One categorical column from int64 codes (negative = missing).
pub(crate) fn categorical_codes(codes: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<u32>> {
    codes
        .as_array()
        .iter()
        .map(|&c| {
            if c < 0 {
                Ok(MISSING_CODE)
            } else {
                u32::try_from(c)
                    .ok()
                    .filter(|&c| c != MISSING_CODE)
                    .ok_or_else(|| PyValueError::new_err(format!("category code {c} out of range")))
            }
        })
        .collect()
}

/// An int32 or int64 numpy index array of a sparse matrix, read in place.
pub(crate) enum Idx<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

impl<'py> Idx<'py> {
    pub(crate) fn new(a: &Bound<'py, PyAny>) -> PyResult<Idx<'py>> {
        if let Ok(a) = a.extract::<PyReadonlyArray1<'py, i32>>() {
            Ok(Idx::I32(a))
        } else {
            Ok(Idx::I64(a.extract::<PyReadonlyArray1<'py, i64>>()?))
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Idx::I32(a) => a.as_array().len(),
            Idx::I64(a) => a.as_array().len(),
        }
    }

    pub(crate) fn indices(&self) -> PyResult<Indices<'_>> {
        let not_contiguous = |_| PyValueError::new_err("sparse index arrays must be contiguous");
        match self {
            Idx::I32(a) => a.as_slice().map(Indices::I32).map_err(not_contiguous),
            Idx::I64(a) => a.as_slice().map(Indices::I64).map_err(not_contiguous),
        }
    }
}

/// A numpy buffer read in place: a contiguous 1-d float32 or float64 array that spans a strided
/// array's elements (the Python side makes it with `numpy.lib.stride_tricks.as_strided`, no copy).
pub(crate) enum Flat<'py> {
    F32(PyReadonlyArray1<'py, f32>),
    F64(PyReadonlyArray1<'py, f64>),
}

impl<'py> Flat<'py> {
    pub(crate) fn new(a: &Bound<'py, PyAny>) -> PyResult<Flat<'py>> {
        if let Ok(a) = a.extract::<PyReadonlyArray1<'py, f32>>() {
            Ok(Flat::F32(a))
        } else {
            Ok(Flat::F64(a.extract::<PyReadonlyArray1<'py, f64>>()?))
        }
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        match self {
            Flat::F32(a) => a.as_array().len(),
            Flat::F64(a) => a.as_array().len(),
        }
    }

    /// The view of `len` values at `offset + i · stride` of the buffer.
    pub(crate) fn view(&self, offset: usize, stride: usize, len: usize) -> PyResult<NumericView<'_>> {
        let bad = |e: boostlab::Error| PyValueError::new_err(e.to_string());
        let not_contiguous = |_| PyValueError::new_err("the buffer of a strided array must be contiguous");
        if len == 0 {
            return Ok(NumericView::f64(&[]));
        }
        match self {
            Flat::F32(a) => {
                let v = a.as_slice().map_err(not_contiguous)?;
                NumericView::strided_f32(v.get(offset..).unwrap_or(&[]), stride, len).map_err(bad)
            }
            Flat::F64(a) => {
                let v = a.as_slice().map_err(not_contiguous)?;
                NumericView::strided_f64(v.get(offset..).unwrap_or(&[]), stride, len).map_err(bad)
            }
        }
    }
}

/// One column of the list form, held for the call.
pub(crate) enum HeldColumn<'py> {
    /// `len` values at stride `stride` of the buffer.
    Numeric(Flat<'py>, usize, usize),
    /// An Arrow column's chunks (see [`crate::arrow`]).
    Chunked(ChunkedColumn),
    Categorical(Vec<u32>, Vec<String>),
}

/// The caller's features, held (numpy borrows) while the core reads them through [`ColumnView`]s:
/// float32 and float64 buffers, dense or sparse, are never copied.
pub(crate) enum Held<'py> {
    /// `("matrix", buffer, n, d, row stride, column stride)`.
    Matrix(Flat<'py>, [usize; 4]),
    Columns(Vec<HeldColumn<'py>>),
    /// `("csc", n_rows, indptr, indices, data)`: a canonical CSC matrix, read in place.
    Csc(usize, Idx<'py>, Idx<'py>, Flat<'py>),
}

impl<'py> Held<'py> {
    /// Holds `data` (see the module doc); with `schema`, categorical codes are re-coded onto the
    /// model's levels (prediction).
    pub(crate) fn new(data: &Bound<'py, PyAny>, schema: Option<&Schema>) -> PyResult<Held<'py>> {
        if let Ok(table) = data.cast::<ArrowTable>() {
            let columns = table.get().columns(schema.map(|s| s.kinds.as_slice()))?;
            let cols = columns
                .into_iter()
                .enumerate()
                .map(|(f, c)| match c {
                    ArrowColumn::Numeric(c) => HeldColumn::Chunked(c),
                    ArrowColumn::Categorical(codes, levels) => categorical_column(schema, f, codes, levels),
                })
                .collect();
            return Ok(Held::Columns(cols));
        }
        if let Ok(t) = data.cast::<PyTuple>() {
            let tag: String = t.get_item(0)?.extract()?;
            return match tag.as_str() {
                "csc" => {
                    let (_, n, indptr, indices, data): (
                        String,
                        usize,
                        Bound<'py, PyAny>,
                        Bound<'py, PyAny>,
                        Bound<'py, PyAny>,
                    ) = t.extract()?;
                    Ok(Held::Csc(n, Idx::new(&indptr)?, Idx::new(&indices)?, Flat::new(&data)?))
                }
                "matrix" => {
                    let (_, buf, n, d, s0, s1): (String, Bound<'py, PyAny>, usize, usize, usize, usize) =
                        t.extract()?;
                    Ok(Held::Matrix(Flat::new(&buf)?, [n, d, s0, s1]))
                }
                other => Err(PyValueError::new_err(format!("unknown feature form '{other}'"))),
            };
        }
        let list = data
            .cast::<PyList>()
            .map_err(|_| PyTypeError::new_err("features: a matrix tuple, a CSC tuple or a list of columns"))?;
        let mut cols = Vec::with_capacity(list.len());
        for (f, item) in list.iter().enumerate() {
            let t = item.cast::<PyTuple>().map_err(|_| PyTypeError::new_err("a column is a tuple"))?;
            if t.len() == 4 {
                let (_, buf, n, stride): (String, Bound<'py, PyAny>, usize, usize) = t.extract()?;
                cols.push(HeldColumn::Numeric(Flat::new(&buf)?, n, stride));
            } else {
                let (codes, levels): (PyReadonlyArray1<'_, i64>, Vec<String>) = t.extract().map_err(|_| {
                    PyTypeError::new_err("a column is ('column', buffer, n, stride) or (int64 codes, level names)")
                })?;
                let codes = categorical_codes(&codes)?;
                cols.push(categorical_column(schema, f, codes, levels));
            }
        }
        Ok(Held::Columns(cols))
    }

    /// Views of the held columns (a CSC matrix's indices are checked with the GIL released).
    pub(crate) fn views(&self, py: Python<'_>) -> PyResult<Vec<ColumnView<'_>>> {
        match self {
            Held::Csc(n, indptr, indices, data) => {
                let (indptr, indices) = (indptr.indices()?, indices.indices()?);
                let data = data.view(0, 1, data.len())?;
                py.detach(|| NumericView::csc_columns(*n, indptr, indices, data))
                    .map(|cols| cols.into_iter().map(ColumnView::Numeric).collect())
                    .map_err(py_err)
            }
            Held::Matrix(buf, [n, d, s0, s1]) => {
                (0..*d).map(|j| buf.view(j * s1, *s0, *n).map(ColumnView::Numeric)).collect()
            }
            Held::Columns(cols) => cols
                .iter()
                .map(|c| match c {
                    HeldColumn::Numeric(buf, n, stride) => buf.view(0, *stride, *n).map(ColumnView::Numeric),
                    HeldColumn::Chunked(c) => Ok(ColumnView::Numeric(NumericView::chunked(c))),
                    HeldColumn::Categorical(codes, levels) => {
                        Ok(ColumnView::Categorical { codes, n_levels: levels.len() })
                    }
                })
                .collect(),
        }
    }

    /// The schema of the held columns under `names`.
    pub(crate) fn schema(&self, names: Vec<String>) -> Schema {
        let levels: Vec<Option<Vec<String>>> = match self {
            Held::Matrix(_, [_, d, _, _]) => vec![None; *d],
            Held::Csc(_, indptr, ..) => vec![None; indptr.len().saturating_sub(1)],
            Held::Columns(cols) => cols
                .iter()
                .map(|c| match c {
                    HeldColumn::Categorical(_, levels) => Some(levels.clone()),
                    HeldColumn::Numeric(..) | HeldColumn::Chunked(_) => None,
                })
                .collect(),
        };
        let kinds =
            levels.iter().map(|l| if l.is_some() { FeatureKind::Categorical } else { FeatureKind::Numeric }).collect();
        Schema { names, kinds, levels }
    }
}

/// Categorical column `f`; with a model's `schema` (prediction), its codes re-coded onto the
/// model's levels.
fn categorical_column<'py>(schema: Option<&Schema>, f: usize, codes: Vec<u32>, levels: Vec<String>) -> HeldColumn<'py> {
    match schema {
        Some(s) if f < s.names.len() => {
            let codes = s.remap_codes(f, &levels, &codes);
            HeldColumn::Categorical(codes, s.levels[f].clone().unwrap_or_default())
        }
        _ => HeldColumn::Categorical(codes, levels),
    }
}

/// The number of rows of views (0 when there are none).
pub(crate) fn n_rows(views: &[ColumnView<'_>]) -> usize {
    views.first().map_or(0, ColumnView::len)
}

/// The training target: `("classes", int64 indices, class names)` or
/// `("multilabel", uint8 n × k matrix, label names)`.
pub(crate) fn target(kind: &str, y: &Bound<'_, PyAny>, names: Vec<String>) -> PyResult<Target> {
    match kind {
        "classes" => {
            let y: PyReadonlyArray1<'_, i64> = y.extract()?;
            let k = names.len();
            let y = y
                .as_array()
                .iter()
                .map(|&c| {
                    usize::try_from(c)
                        .ok()
                        .filter(|&c| c < k)
                        .map(|c| c as u32)
                        .ok_or_else(|| PyValueError::new_err(format!("class index {c} not in 0..{k}")))
                })
                .collect::<PyResult<Vec<u32>>>()?;
            Ok(Target::Classes { y, classes: names })
        }
        "multilabel" => {
            let y: PyReadonlyArray2<'_, u8> = y.extract()?;
            let v = y.as_array();
            if v.ncols() != names.len() {
                return Err(PyValueError::new_err(format!("{} label columns, {} names", v.ncols(), names.len())));
            }
            // `iter` walks the logical (row-major) order whatever the memory layout.
            Ok(Target::Multilabel { y: v.iter().copied().collect(), labels: names })
        }
        other => Err(PyValueError::new_err(format!("unknown target kind '{other}'"))),
    }
}
