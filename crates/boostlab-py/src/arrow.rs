//! Arrow input: tables handed over through the Arrow PyCapsule interface — `__arrow_c_stream__`,
//! or `__arrow_c_array__` for one record batch (polars, pyarrow, duckdb, pandas with Arrow dtypes)
//! — imported with arrow-rs's C data interface, without pyarrow.
//!
//! The columns become the core's views as numpy arrays do. Float32 and float64 columns are read in
//! place from the Arrow buffers, one chunk per record batch ([`ChunkedColumn`]), so a table that
//! arrives in batches is never concatenated. Only a chunk with nulls is copied (NaN for the nulls,
//! the core's missing value, in the chunk's own float type: Arrow marks nulls in a separate bitmap,
//! so the values under them are arbitrary and cannot be read in place). Integer and boolean chunks
//! are converted to float64 (0/1), as the DataFrame path converts such columns. String,
//! large-string, string-view and dictionary columns (polars `Categorical` and `Enum`) are
//! categorical features whose levels are the distinct strings present, sorted — the levels the
//! pandas and polars paths make, so a model is the same whichever of them the data came through.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchReader, StructArray};
use arrow_schema::DataType;
use boostlab::data::{Chunk, ChunkedColumn, Interner};
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use super::*;

/// A table imported from the Arrow C stream or array interface: the caller's Arrow arrays,
/// held by reference count (nothing is copied on import).
#[pyclass(module = "boostlab._boostlab", name = "ArrowTable", frozen)]
pub(crate) struct ArrowTable {
    names: Vec<String>,
    types: Vec<DataType>,
    /// Per column, its arrays (one a record batch).
    columns: Vec<Vec<ArrayRef>>,
    n_rows: usize,
}

#[pymethods]
impl ArrowTable {
    /// Column names, in the table's order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// Number of rows.
    #[getter]
    fn n_rows(&self) -> usize {
        self.n_rows
    }
}

fn arrow_err(e: arrow_schema::ArrowError) -> PyErr {
    PyValueError::new_err(format!("cannot import the Arrow data: {e}"))
}

/// `arrow_table(data)`: the table of an object with `__arrow_c_stream__` (preferred) or
/// `__arrow_c_array__` (a struct array: one record batch), every batch read from the stream with
/// the GIL held (the producer may need it).
#[pyfunction]
pub(crate) fn arrow_table(data: &Bound<'_, PyAny>) -> PyResult<ArrowTable> {
    let (schema, batches) = if data.hasattr("__arrow_c_stream__")? {
        let capsule = data.call_method0("__arrow_c_stream__")?;
        let capsule = capsule.cast::<PyCapsule>()?;
        let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
        // SAFETY: a capsule named "arrow_array_stream" holds an `ArrowArrayStream` struct (the
        // PyCapsule interface); `from_raw` moves it out and leaves a released stream behind, which
        // the capsule's destructor then skips. The capsule is alive for the call.
        #[allow(unsafe_code)]
        let stream = unsafe { FFI_ArrowArrayStream::from_raw(ptr.as_ptr().cast()) };
        let reader = ArrowArrayStreamReader::try_new(stream).map_err(arrow_err)?;
        let schema = reader.schema();
        let batches = reader.collect::<Result<Vec<RecordBatch>, _>>().map_err(arrow_err)?;
        (schema, batches)
    } else {
        let pair = data.call_method0("__arrow_c_array__")?;
        let (schema_capsule, array_capsule): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) = pair.extract()?;
        let schema_ptr = schema_capsule.pointer_checked(Some(c"arrow_schema"))?;
        let array_ptr = array_capsule.pointer_checked(Some(c"arrow_array"))?;
        // SAFETY: the capsules hold an `ArrowSchema` and an `ArrowArray` struct (the PyCapsule
        // interface). The array is moved out (a released array is left for the capsule's
        // destructor); the schema is only borrowed while its capsule is alive.
        #[allow(unsafe_code)]
        let array = unsafe {
            let array = FFI_ArrowArray::from_raw(array_ptr.as_ptr().cast());
            let schema = &*schema_ptr.as_ptr().cast::<FFI_ArrowSchema>();
            from_ffi(array, schema).map_err(arrow_err)?
        };
        if !matches!(array.data_type(), DataType::Struct(_)) {
            return Err(PyValueError::new_err(format!(
                "the Arrow array of the features is of type {}, not a struct (a record batch)",
                array.data_type()
            )));
        }
        let batch = RecordBatch::from(StructArray::from(array));
        (batch.schema(), vec![batch])
    };
    let names: Vec<String> = schema.fields().iter().map(|f| f.name().clone()).collect();
    let types: Vec<DataType> = schema.fields().iter().map(|f| f.data_type().clone()).collect();
    let columns = (0..names.len()).map(|j| batches.iter().map(|b| b.column(j).clone()).collect()).collect();
    let n_rows = batches.iter().map(RecordBatch::num_rows).sum();
    Ok(ArrowTable { names, types, columns, n_rows })
}

fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float32 | DataType::Float64)
}

fn is_number(t: &DataType) -> bool {
    use DataType::*;
    matches!(t, Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Float32 | Float64 | Boolean)
}

fn is_text(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_stringy(t: &DataType) -> bool {
    is_text(t) || matches!(t, DataType::Dictionary(_, v) if is_text(v))
}

/// A float chunk of element type `$t`: its value buffer, read in place, or a copy with NaN for
/// the nulls.
macro_rules! float_chunk {
    ($a:expr, $t:ty, $variant:ident) => {{
        let p = $a.as_primitive::<$t>();
        if p.null_count() == 0 {
            Chunk::$variant(Arc::new(p.values().clone()))
        } else {
            Chunk::$variant(Arc::new(
                p.iter().map(|x| x.unwrap_or(<$t as ArrowPrimitiveType>::Native::NAN)).collect::<Vec<_>>(),
            ))
        }
    }};
}

/// An integer or boolean chunk as `f64` (null → NaN).
fn f64_chunk(a: &dyn Array) -> Chunk {
    macro_rules! prim {
        ($t:ty) => {
            a.as_primitive::<$t>().iter().map(|v| v.map_or(f64::NAN, |x| x as f64)).collect()
        };
    }
    let v: Vec<f64> = match a.data_type() {
        DataType::Int8 => prim!(Int8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::UInt64 => prim!(UInt64Type),
        _ => a.as_boolean().iter().map(|v| v.map_or(f64::NAN, |b| f64::from(u8::from(b)))).collect(),
    };
    Chunk::F64(Arc::new(v))
}

/// The values of a string, large-string or string-view array, borrowed (`None` for a null).
fn texts<'a>(a: &'a dyn Array) -> Box<dyn Iterator<Item = Option<&'a str>> + 'a> {
    match a.data_type() {
        DataType::Utf8 => Box::new(a.as_string::<i32>().iter()),
        DataType::LargeUtf8 => Box::new(a.as_string::<i64>().iter()),
        _ => Box::new(a.as_string_view().iter()),
    }
}

/// A categorical column: string and dictionary arrays by their text; integers (a model's
/// categorical feature given as numbers) by their decimal text and booleans as `True`/`False`,
/// as the DataFrame path names them.
fn categorical(arrays: &[ArrayRef]) -> (Vec<u32>, Vec<String>) {
    let mut levels = Interner::default();
    let mut codes: Vec<u32> = Vec::with_capacity(arrays.iter().map(|a| a.len()).sum());
    for a in arrays {
        let t = a.data_type();
        if is_text(t) {
            codes.extend(texts(a.as_ref()).map(|s| s.map_or(MISSING_CODE, |s| levels.code(s))));
        } else if let Some(d) = a.as_any_dictionary_opt() {
            // Each dictionary entry is coded once, when a row first uses it (levels are the values
            // present, as in the pandas and polars paths).
            let entries: Vec<Option<&str>> = texts(d.values().as_ref()).collect();
            let mut coded: Vec<Option<u32>> = vec![None; entries.len()];
            let keys = d.normalized_keys();
            let nulls = a.logical_nulls();
            for (i, k) in keys.into_iter().enumerate() {
                let present = nulls.as_ref().is_none_or(|n| n.is_valid(i));
                let code = match entries.get(k) {
                    Some(Some(s)) if present => *coded[k].get_or_insert_with(|| levels.code(s)),
                    _ => MISSING_CODE,
                };
                codes.push(code);
            }
        } else if matches!(t, DataType::Boolean) {
            let names = ["False", "True"];
            codes.extend(a.as_boolean().iter().map(|v| v.map_or(MISSING_CODE, |b| levels.code(names[usize::from(b)]))));
        } else {
            // Integers: through f64 (exact for the codes a category takes), written as integers.
            let Chunk::F64(v) = f64_chunk(a.as_ref()) else { continue };
            let v: &[f64] = (*v).as_ref();
            for &x in v {
                codes.push(if x.is_nan() { MISSING_CODE } else { levels.code(&format!("{x:.0}")) });
            }
        }
    }
    levels.into_sorted(codes)
}

/// One column of an imported table, as [`Held`] keeps it.
pub(crate) enum ArrowColumn {
    Numeric(ChunkedColumn),
    Categorical(Vec<u32>, Vec<String>),
}

impl ArrowTable {
    /// The columns as the core reads them; `kinds` (a model's) makes a column categorical where
    /// the model's feature is. Errors name the column and its Arrow type.
    pub(crate) fn columns(&self, kinds: Option<&[FeatureKind]>) -> PyResult<Vec<ArrowColumn>> {
        let mut out = Vec::with_capacity(self.names.len());
        for (j, (name, t)) in self.names.iter().zip(&self.types).enumerate() {
            let arrays = &self.columns[j];
            let want = kinds.and_then(|k| k.get(j)).copied();
            let numeric = match want {
                Some(FeatureKind::Categorical) => false,
                _ => is_number(t),
            };
            if numeric {
                let chunks = arrays
                    .iter()
                    .map(|a| match a.data_type() {
                        DataType::Float32 => float_chunk!(a, Float32Type, F32),
                        DataType::Float64 => float_chunk!(a, Float64Type, F64),
                        _ => f64_chunk(a.as_ref()),
                    })
                    .collect();
                out.push(ArrowColumn::Numeric(ChunkedColumn::new(chunks).map_err(py_err)?));
                continue;
            }
            if want == Some(FeatureKind::Categorical) && is_float(t) {
                return Err(PyValueError::new_err(format!(
                    "column '{name}' holds floating-point numbers ({t}), but the model's feature '{name}' is \
                     categorical: pass its levels as strings or a dictionary (categorical) type"
                )));
            }
            if want == Some(FeatureKind::Numeric) && is_stringy(t) {
                return Err(PyValueError::new_err(format!(
                    "column '{name}' holds strings ({t}), but the model's feature '{name}' is numeric"
                )));
            }
            if !(is_stringy(t) || is_number(t)) {
                return Err(PyValueError::new_err(format!(
                    "column '{name}' has Arrow type {t}, which boostlab cannot read: it takes numeric, boolean, \
                     string and dictionary (categorical) columns"
                )));
            }
            let (codes, levels) = categorical(arrays);
            out.push(ArrowColumn::Categorical(codes, levels));
        }
        Ok(out)
    }
}
