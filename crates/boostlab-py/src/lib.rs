//! `boostlab._boostlab`: the Python extension module behind the `boostlab` package.
//!
//! Conversion only (STYLE 12): numpy arrays in, [`boostlab`] calls, numpy arrays out. Every
//! scikit-learn convention — input validation, the `classes_` mapping, tags, pickling — lives in
//! `python/boostlab`. The one design choice (issue 12): the Python side hands over *columns* — a
//! float32 or float64 matrix `("matrix", buffer, n, d, row stride, column stride)`, a CSC matrix
//! or a list of numeric `("column", buffer, n, stride)` entries and `(codes, levels)` categorical
//! pairs — and the core reads the numpy buffers in place through [`ColumnView`]s (`buffer` is a
//! contiguous 1-d view spanning a strided array, made without a copy on the Python side): no
//! float copy is made, binning and prediction run with the GIL released, and after binning only
//! the bins are kept.
//!
//! Errors: [`boostlab::Error::Io`] becomes `OSError`, every other core error `ValueError`, both
//! with the core's message.
//!
//! Interrupts (issue 14): `fit` and `decision_function` run on a scoped worker thread while the
//! calling thread, GIL released, waits for it in slices of [`POLL`] and runs
//! `PyErr_CheckSignals` between them. A pending `KeyboardInterrupt` (or any exception a signal
//! handler raises) sets the core's [`Cancel`] flag, which the boosting loop checks between rounds
//! and nodes and prediction between row blocks; the worker is joined (no thread is left running)
//! and the exception propagates. A `callbacks` function that raises stops the fit the same way.

mod experiment;
mod registry;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use boostlab::data::{BinnedData, ColumnView, FeatureKind, Indices, NumericView, Target, MISSING_CODE};
use boostlab::data::{Column, Features};
use boostlab::math::loss::{BatchLossFn, Loss};
use boostlab::model::{Schema, Task};
use boostlab::{BoostParams, Cancel, Ensemble, Error, Output, Prediction, RoundRecord, Trainer, Validation};
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// A core error as the matching Python exception.
fn py_err(e: Error) -> PyErr {
    match &e {
        // OSError(errno, message) is instantiated as the errno's subclass (FileNotFoundError, ...).
        Error::Io { source, .. } => match source.raw_os_error() {
            Some(code) => PyOSError::new_err((code, e.to_string())),
            None => PyOSError::new_err(e.to_string()),
        },
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// How often a waiting call checks for Python signals (Ctrl-C).
const POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs `work` on a scoped worker thread; the calling thread waits with the GIL released and checks
/// Python's signals every [`POLL`]. On a signal's exception, `cancel` is set, the worker joined,
/// and the exception returned. A panic of the worker is resumed on the calling thread (PyO3 turns
/// it into `PanicException`).
fn interruptible<T: Send>(py: Python<'_>, cancel: &Cancel, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    use std::sync::Condvar;
    /// Set (and notified) when the worker ends, normally or by a panic (a drop guard).
    struct Done<'a>(&'a (Mutex<bool>, Condvar));
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            *self.0 .0.lock().unwrap_or_else(|p| p.into_inner()) = true;
            self.0 .1.notify_all();
        }
    }
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _done = Done(&done);
            work()
        });
        let mut interrupted = None;
        loop {
            let finished = py.detach(|| {
                let guard = done.0.lock().unwrap_or_else(|p| p.into_inner());
                let (guard, _) = done.1.wait_timeout_while(guard, POLL, |d| !*d).unwrap_or_else(|p| p.into_inner());
                *guard
            });
            if finished {
                break;
            }
            if let Err(e) = py.check_signals() {
                cancel.cancel();
                interrupted = Some(e);
                break;
            }
        }
        let joined = py.detach(|| worker.join());
        match (joined, interrupted) {
            (Err(panic), _) => std::panic::resume_unwind(panic),
            (Ok(_), Some(e)) => Err(e),
            (Ok(out), None) => Ok(out),
        }
    })
}

/// A round record as the dict of `Model.history()` (`round`, the diagnostics, `stop_reason`).
fn record_dict<'py>(py: Python<'py>, r: &RoundRecord) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("round", r.round)?;
    for (k, v) in &r.values {
        d.set_item(k, v)?;
    }
    if let Some(s) = &r.stop_reason {
        d.set_item("stop_reason", s)?;
    }
    Ok(d)
}

/// The fit's per-round hook: calls each Python callback with the round's record (a dict), with the
/// GIL re-acquired; the first exception goes to `slot` (which stops the fit) and no callback runs
/// after it.
fn round_callbacks(callbacks: Vec<Py<PyAny>>, slot: ErrorSlot) -> impl FnMut(&RoundRecord) {
    move |r: &RoundRecord| {
        if callbacks.is_empty() || slot.is_set() {
            return;
        }
        Python::attach(|py| {
            let res =
                record_dict(py, r).and_then(|d| callbacks.iter().try_for_each(|f| f.bind(py).call1((&d,)).map(drop)));
            if let Err(e) = res {
                slot.set(e);
            }
        });
    }
}

/// Keeps the first Python exception of a fit's callbacks (or loss) and stops the fit.
#[derive(Clone)]
struct ErrorSlot {
    error: Arc<Mutex<Option<PyErr>>>,
    cancel: Cancel,
}

impl ErrorSlot {
    fn set(&self, e: PyErr) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
        self.cancel.cancel();
    }

    fn is_set(&self) -> bool {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    fn take(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// One categorical column from int64 codes (negative = missing).
fn categorical_codes(codes: &PyReadonlyArray1<'_, i64>) -> PyResult<Vec<u32>> {
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
enum Idx<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

impl<'py> Idx<'py> {
    fn new(a: &Bound<'py, PyAny>) -> PyResult<Idx<'py>> {
        if let Ok(a) = a.extract::<PyReadonlyArray1<'py, i32>>() {
            Ok(Idx::I32(a))
        } else {
            Ok(Idx::I64(a.extract::<PyReadonlyArray1<'py, i64>>()?))
        }
    }

    fn len(&self) -> usize {
        match self {
            Idx::I32(a) => a.as_array().len(),
            Idx::I64(a) => a.as_array().len(),
        }
    }

    fn indices(&self) -> PyResult<Indices<'_>> {
        let not_contiguous = |_| PyValueError::new_err("sparse index arrays must be contiguous");
        match self {
            Idx::I32(a) => a.as_slice().map(Indices::I32).map_err(not_contiguous),
            Idx::I64(a) => a.as_slice().map(Indices::I64).map_err(not_contiguous),
        }
    }
}

/// A numpy buffer read in place: a contiguous 1-d float32 or float64 array that spans a strided
/// array's elements (the Python side makes it with `numpy.lib.stride_tricks.as_strided`, no copy).
enum Flat<'py> {
    F32(PyReadonlyArray1<'py, f32>),
    F64(PyReadonlyArray1<'py, f64>),
}

impl<'py> Flat<'py> {
    fn new(a: &Bound<'py, PyAny>) -> PyResult<Flat<'py>> {
        if let Ok(a) = a.extract::<PyReadonlyArray1<'py, f32>>() {
            Ok(Flat::F32(a))
        } else {
            Ok(Flat::F64(a.extract::<PyReadonlyArray1<'py, f64>>()?))
        }
    }

    /// Number of elements.
    fn len(&self) -> usize {
        match self {
            Flat::F32(a) => a.as_array().len(),
            Flat::F64(a) => a.as_array().len(),
        }
    }

    /// The view of `len` values at `offset + i · stride` of the buffer.
    fn view(&self, offset: usize, stride: usize, len: usize) -> PyResult<NumericView<'_>> {
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
enum HeldColumn<'py> {
    /// `len` values at stride `stride` of the buffer.
    Numeric(Flat<'py>, usize, usize),
    Categorical(Vec<u32>, Vec<String>),
}

/// The caller's features, held (numpy borrows) while the core reads them through [`ColumnView`]s:
/// float32 and float64 buffers, dense or sparse, are never copied.
enum Held<'py> {
    /// `("matrix", buffer, n, d, row stride, column stride)`.
    Matrix(Flat<'py>, [usize; 4]),
    Columns(Vec<HeldColumn<'py>>),
    /// `("csc", n_rows, indptr, indices, data)`: a canonical CSC matrix, read in place.
    Csc(usize, Idx<'py>, Idx<'py>, Flat<'py>),
}

impl<'py> Held<'py> {
    /// Holds `data` (see the module doc); with `schema`, categorical codes are re-coded onto the
    /// model's levels (prediction).
    fn new(data: &Bound<'py, PyAny>, schema: Option<&Schema>) -> PyResult<Held<'py>> {
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
                cols.push(match schema {
                    Some(s) if f < s.names.len() => {
                        let codes = s.remap_codes(f, &levels, &codes);
                        HeldColumn::Categorical(codes, s.levels[f].clone().unwrap_or_default())
                    }
                    _ => HeldColumn::Categorical(codes, levels),
                });
            }
        }
        Ok(Held::Columns(cols))
    }

    /// Views of the held columns (a CSC matrix's indices are checked with the GIL released).
    fn views(&self, py: Python<'_>) -> PyResult<Vec<ColumnView<'_>>> {
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
                    HeldColumn::Categorical(codes, levels) => {
                        Ok(ColumnView::Categorical { codes, n_levels: levels.len() })
                    }
                })
                .collect(),
        }
    }

    /// The schema of the held columns under `names`.
    fn schema(&self, names: Vec<String>) -> Schema {
        let levels: Vec<Option<Vec<String>>> = match self {
            Held::Matrix(_, [_, d, _, _]) => vec![None; *d],
            Held::Csc(_, indptr, ..) => vec![None; indptr.len().saturating_sub(1)],
            Held::Columns(cols) => cols
                .iter()
                .map(|c| match c {
                    HeldColumn::Categorical(_, levels) => Some(levels.clone()),
                    HeldColumn::Numeric(..) => None,
                })
                .collect(),
        };
        let kinds =
            levels.iter().map(|l| if l.is_some() { FeatureKind::Categorical } else { FeatureKind::Numeric }).collect();
        Schema { names, kinds, levels }
    }
}

/// The number of rows of views (0 when there are none).
fn n_rows(views: &[ColumnView<'_>]) -> usize {
    views.first().map_or(0, ColumnView::len)
}

/// The training target: `("classes", int64 indices, class names)` or
/// `("multilabel", uint8 n × k matrix, label names)`.
fn target(kind: &str, y: &Bound<'_, PyAny>, names: Vec<String>) -> PyResult<Target> {
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

/// A SecBoost loss from a Python callable `f(z: 1-d float64 array) -> 1-d float64 array`, called
/// once per batch of edges with the GIL re-acquired. A Python exception is kept in `error` (and the
/// batch filled with NaN, which stops the core); `fit` raises it afterwards.
fn python_loss(func: Py<PyAny>, name: String, convex: bool, beta: Option<f64>, error: ErrorSlot) -> PyResult<Loss> {
    let f: BatchLossFn = Arc::new(move |z: &[f64], out: &mut [f64]| {
        Python::attach(|py| {
            if error.is_set() {
                out.fill(f64::NAN);
                return;
            }
            let res = (|| -> PyResult<()> {
                let r = func.bind(py).call1((PyArray1::from_slice(py, z),))?;
                let r: PyReadonlyArray1<'_, f64> = r.extract()?;
                let r = r.as_array();
                if r.len() != out.len() {
                    return Err(PyValueError::new_err(format!(
                        "the loss returned {} values for {} edges",
                        r.len(),
                        out.len()
                    )));
                }
                for (o, v) in out.iter_mut().zip(r.iter()) {
                    *o = *v;
                }
                Ok(())
            })();
            if let Err(e) = res {
                error.set(e);
                out.fill(f64::NAN);
            }
        })
    });
    Loss::custom_batch(name, f, convex, beta).map_err(py_err)
}

/// A local pool of worker threads for one call (issue 15), scikit-learn's `n_jobs`: None or −1
/// = one per logical CPU, −2 = all but one, ..., a positive n = n threads; 0 is refused.
fn thread_pool(n_jobs: Option<i64>) -> PyResult<rayon::ThreadPool> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
    let n = match n_jobs {
        None => cpus,
        Some(0) => {
            return Err(PyValueError::new_err("invalid parameter `n_jobs`: expected None or a non-zero integer, got 0"))
        }
        Some(n) if n > 0 => n,
        Some(n) => (cpus + 1 + n).max(1),
    };
    let n = usize::try_from(n).map_err(|_| PyValueError::new_err(format!("invalid parameter `n_jobs`: {n}")))?;
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| PyValueError::new_err(format!("n_jobs = {n}: cannot start the worker threads: {e}")))
}

/// Views copied into owned columns (validation data, issue 15): numeric values, and category
/// codes with the schema's levels.
fn owned_columns(views: &[ColumnView<'_>], schema: &Schema) -> PyResult<Vec<Column>> {
    if views.len() != schema.names.len() {
        return Err(PyValueError::new_err(format!(
            "the validation data have {} features, the training data {}",
            views.len(),
            schema.names.len()
        )));
    }
    views
        .iter()
        .enumerate()
        .map(|(f, v)| match v {
            ColumnView::Numeric(nv) => {
                let mut buf = vec![0.0; nv.len()];
                nv.copy_into(&mut buf);
                Ok(Column::Numeric(buf))
            }
            ColumnView::Categorical { codes, .. } => Ok(Column::Categorical {
                codes: codes.to_vec(),
                levels: schema.levels.get(f).cloned().flatten().unwrap_or_default(),
            }),
            _ => Err(PyValueError::new_err(format!("validation feature {f}: an unsupported column form"))),
        })
        .collect()
}

/// Validation data from Python (issue 15): `(columns, target kind, y, class names)`, the forms
/// of the training data's.
type ValidTuple<'py> = (Bound<'py, PyAny>, String, Bound<'py, PyAny>, Vec<String>);

/// Trains an ensemble with the GIL released; Ctrl-C stops it (see the module doc).
///
/// `names`/`columns`: the features (see the module doc); `target_kind`, `y`, `classes`: the target
/// (see [`target`]); `params_json`: a [`BoostParams`] as JSON (absent fields take their defaults);
/// `loss`: `(callable, name, convex, beta)` for a user SecBoost loss; `callbacks`: callables
/// called after each round with the round's record (a dict); one that raises stops the fit with
/// its exception.
#[pyfunction]
#[pyo3(signature = (names, columns, target_kind, y, classes, params_json, sample_weight=None, loss=None, callbacks=None, valid=None, init_model=None, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
fn fit(
    py: Python<'_>,
    names: Vec<String>,
    columns: &Bound<'_, PyAny>,
    target_kind: &str,
    y: &Bound<'_, PyAny>,
    classes: Vec<String>,
    params_json: &str,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    loss: Option<(Py<PyAny>, String, bool, Option<f64>)>,
    callbacks: Option<Vec<Py<PyAny>>>,
    valid: Option<ValidTuple<'_>>,
    init_model: Option<PyRef<'_, Model>>,
    n_jobs: Option<i64>,
) -> PyResult<Model> {
    let args =
        FitArgs { names, target_kind, classes, params_json, sample_weight, loss, callbacks, valid, init_model, n_jobs };
    train(py, columns, y, args, None)
}

/// The arguments `fit` and `fit_shard` share (see [`fit`]).
struct FitArgs<'a, 'py> {
    names: Vec<String>,
    target_kind: &'a str,
    classes: Vec<String>,
    params_json: &'a str,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    loss: Option<(Py<PyAny>, String, bool, Option<f64>)>,
    callbacks: Option<Vec<Py<PyAny>>>,
    valid: Option<ValidTuple<'py>>,
    init_model: Option<PyRef<'py, Model>>,
    n_jobs: Option<i64>,
}

/// A rank's part of a distributed fit (issue 13): the bin mapper every rank bins with, and the
/// transport `(allreduce, rank, size)`.
struct ShardArgs {
    /// None when the rows come binned ([`ShardBins`]).
    mapper: Option<boostlab::data::BinMapper>,
    allreduce: Py<PyAny>,
    rank: usize,
    size: usize,
}

/// The parameters of `params_json` (the preset first, the estimator's given parameters over it,
/// issue 17) and their sources: the estimators send every constructor argument, so one equal to
/// what the preset (or the default) gives is not a choice of the user's.
fn params_and_sources(
    params_json: &str,
) -> PyResult<(BoostParams, std::collections::BTreeMap<String, boostlab::boost::preset::ParamEntry>)> {
    let given: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("invalid parameters: {e}")))?;
    let (params, mut explicit) = BoostParams::from_json(&given).map_err(py_err)?;
    let mut base = serde_json::Map::new();
    if let Some(p) = given.get("preset") {
        base.insert("preset".into(), p.clone());
    }
    let base =
        BoostParams::from_json(&serde_json::Value::Object(base)).map_err(py_err)?.0.sources(&[]).map_err(py_err)?;
    let effective = params.sources(&[]).map_err(py_err)?;
    explicit.retain(|path| base.get(path).map(|e| &e.value) != effective.get(path).map(|e| &e.value));
    let sources = params.sources(&explicit).map_err(py_err)?;
    Ok((params, sources))
}

/// `fit` (`shard` None: bins learned from the rows) or a rank's `fit_shard` (the rows binned with
/// the shared mapper, the sums over the ranks through `allreduce`): the conversions, then the fit
/// with the GIL released.
fn train(
    py: Python<'_>,
    columns: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    args: FitArgs<'_, '_>,
    shard: Option<ShardArgs>,
) -> PyResult<Model> {
    let pool = thread_pool(args.n_jobs)?;
    let (params, sources) = params_and_sources(args.params_json)?;
    // Issue 13 (session 8): a rank's rows already binned on its worker ([`bin_shard`]).
    let pre_binned = match columns.cast::<ShardBins>() {
        Ok(s) if shard.is_some() => Some(s.get().take()?),
        Ok(_) => return Err(PyTypeError::new_err("a ShardBins is for fit_shard only")),
        Err(_) => None,
    };
    let held = if pre_binned.is_none() { Some(Held::new(columns, None)?) } else { None };
    let views = match &held {
        Some(h) => h.views(py)?,
        None => Vec::new(),
    };
    let schema = match (&held, &pre_binned) {
        (_, Some(b)) => {
            if args.names != b.schema.names {
                return Err(PyValueError::new_err("the feature names differ from the shard's"));
            }
            b.schema.clone()
        }
        (Some(h), None) => {
            if args.names.len() != views.len() {
                return Err(PyValueError::new_err(format!(
                    "{} feature names for {} columns",
                    args.names.len(),
                    views.len()
                )));
            }
            h.schema(args.names)
        }
        (None, None) => return Err(PyValueError::new_err("internal: no features")),
    };
    // Issue 15: validation data, copied into columns of the training schema (categories re-coded
    // onto the training levels).
    let valid = args
        .valid
        .map(|(vcols, kind, vy, vclasses)| -> PyResult<Validation> {
            let vheld = Held::new(&vcols, Some(&schema))?;
            let columns = owned_columns(&vheld.views(py)?, &schema)?;
            let features = Features { names: schema.names.clone(), columns };
            Ok(Validation { features, target: target(&kind, &vy, vclasses)? })
        })
        .transpose()?;
    let init = args.init_model.as_ref().map(|m| m.inner.clone());
    let target = target(args.target_kind, y, args.classes)?;
    let sample_weight = args.sample_weight.map(|w| w.as_array().to_vec());
    let cancel = Cancel::new();
    let error = ErrorSlot { error: Arc::new(Mutex::new(None)), cancel: cancel.clone() };
    let loss =
        args.loss.map(|(f, name, convex, beta)| python_loss(f, name, convex, beta, error.clone())).transpose()?;
    let mut on_round = round_callbacks(args.callbacks.unwrap_or_default(), error.clone());
    let shard = shard.map(|s| {
        let coll: Arc<dyn boostlab::collective::Collective> = Arc::new(PyCollective {
            func: s.allreduce,
            rank: s.rank,
            size: s.size,
            error: error.clone(),
            inputs: Mutex::new(Vec::new()),
        });
        (s.mapper, coll)
    });
    // Binning reads the caller's buffers with the GIL released; only the bins are kept.
    let res = interruptible(py, &cancel, || {
        pool.install(|| {
            params.check()?;
            let trainer = Trainer::new(&params)
                .loss(loss)
                .validation(valid.as_ref())
                .init_model(init.as_ref())
                .cancel(&cancel)
                .on_round(&mut on_round);
            match shard {
                None => {
                    let data = BinnedData::from_views(schema, &views, target, sample_weight, params.max_bins)?;
                    trainer.fit_binned(&data)
                }
                Some((None, coll)) => {
                    let b = pre_binned.ok_or_else(|| Error::InvalidData("internal: no binned shard".into()))?;
                    let data = BinnedData::new(schema, b.mapper, b.bins, target, sample_weight)?;
                    trainer.collective(coll).fit_binned(&data)
                }
                Some((Some(mapper), coll)) => {
                    let mut bins = mapper.new_matrix(n_rows(&views));
                    mapper.bin_into(&schema.names, &views, 0, &mut bins)?;
                    let data = BinnedData::new(schema, mapper, bins, target, sample_weight)?;
                    trainer.collective(coll).fit_binned(&data)
                }
            }
        })
    })?;
    if let Some(e) = error.take() {
        return Err(e);
    }
    let mut inner = res.map_err(py_err)?;
    inner.param_sources = sources;
    Ok(Model { inner })
}

// ---- Issue 13: distributed training (the Rust side of `boostlab.dask`) ----------------------
//
// Each worker (rank) holds some of the rows, in rank order. Binning: every rank calls
// `shard_summary` on its rows, the driver merges the bytes in rank order with
// `bin_mapper_from_summaries` (the single machine's bins on the same rows) and broadcasts the
// mapper's JSON; training: every rank calls `fit_shard` with the mapper and a Python `allreduce`
// callable (the transport), and every rank returns the same model.

/// The parameters of a `params_json` (a [`BoostParams`] as JSON, the preset applied).
fn params_of(params_json: &str) -> PyResult<BoostParams> {
    let given: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("invalid parameters: {e}")))?;
    Ok(BoostParams::from_json(&given).map_err(py_err)?.0)
}

/// `weight_prefix(start: float, sample_weight: float64 array) -> float`: `start + Σ w` summed left
/// to right. Chained over the ranks in order (rank 0 from 0.0, each next rank from the previous
/// result) it gives each rank's `weight_offset` and, after the last, `total_weight` for
/// [`shard_summary`] — exactly the single machine's cumulative sums.
#[pyfunction]
fn weight_prefix(start: f64, sample_weight: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
    let w = sample_weight.as_array();
    Ok(w.iter().fold(start, |acc, &x| acc + x))
}

/// `shard_summary(names, columns, params_json, global_offset, global_n, sample_weight=None,
/// weight_offset=0.0, total_weight=0.0) -> bytes`: the binning summary of this rank's rows.
///
/// `columns` as `fit` takes them (the same forms as the local estimators send; categorical
/// columns with the same levels on every rank), or `("parts", [columns, ...])`: the rank's
/// partitions in order, each in one of those forms, read in place (session 8); the rows are rows
/// `global_offset..global_offset + n` of `global_n` (rank order). With `sample_weight`,
/// `weight_offset`/`total_weight` come from chaining [`weight_prefix`]. Only `max_bins` is read
/// from `params_json`. Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (names, columns, params_json, global_offset, global_n, sample_weight=None, weight_offset=0.0, total_weight=0.0))]
#[allow(clippy::too_many_arguments)]
fn shard_summary<'py>(
    py: Python<'py>,
    names: Vec<String>,
    columns: &Bound<'py, PyAny>,
    params_json: &str,
    global_offset: usize,
    global_n: usize,
    sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    weight_offset: f64,
    total_weight: f64,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let params = params_of(params_json)?;
    let held = held_parts(columns)?;
    let parts = held.iter().map(|h| h.views(py)).collect::<PyResult<Vec<_>>>()?;
    check_part_widths(&parts, &names)?;
    let w = sample_weight.as_ref().map(|w| w.as_array().to_vec());
    let shard = boostlab::data::ShardSpec { global_offset, global_n, weight_offset, total_weight };
    let bytes = py
        .detach(|| {
            boostlab::data::shard_summaries_parts(&parts, params.max_bins, w.as_deref(), &shard)
                .map(|s| boostlab::data::summaries_to_bytes(&s))
        })
        .map_err(py_err)?;
    Ok(pyo3::types::PyBytes::new(py, &bytes))
}

/// `bin_mapper_from_summaries(names, summaries: list[bytes], params_json) -> str`: merges the
/// ranks' [`shard_summary`] bytes, given in rank order, into the bin mapper the single machine
/// learns on all the rows; returns it as JSON (for `fit_shard`).
#[pyfunction]
fn bin_mapper_from_summaries(names: Vec<String>, summaries: Vec<Vec<u8>>, params_json: &str) -> PyResult<String> {
    let params = params_of(params_json)?;
    let ranks = summaries
        .iter()
        .map(|b| boostlab::data::summaries_from_bytes(b))
        .collect::<Result<Vec<_>, _>>()
        .map_err(py_err)?;
    let merged = boostlab::data::merge_summaries(ranks).map_err(py_err)?;
    let mapper = boostlab::data::BinMapper::from_summaries(&names, merged, params.max_bins).map_err(py_err)?;
    serde_json::to_string(&mapper).map_err(|e| PyValueError::new_err(format!("bin mapper: {e}")))
}

/// Every partition of a rank has one column a feature name.
fn check_part_widths(parts: &[Vec<ColumnView<'_>>], names: &[String]) -> PyResult<()> {
    match parts.iter().position(|v| v.len() != names.len()) {
        Some(p) => Err(PyValueError::new_err(format!(
            "{} feature names for {} columns (part {p})",
            names.len(),
            parts[p].len()
        ))),
        None => Ok(()),
    }
}

/// The features of `columns`: one held part, or the parts of `("parts", [columns, ...])` (a
/// rank's partitions, in order; issue 13, session 8).
fn held_parts<'py>(columns: &Bound<'py, PyAny>) -> PyResult<Vec<Held<'py>>> {
    if let Ok(t) = columns.cast::<PyTuple>() {
        if t.len() == 2 && t.get_item(0)?.extract::<String>().is_ok_and(|tag| tag == "parts") {
            let list = t.get_item(1)?;
            let list = list.cast::<PyList>().map_err(|_| PyTypeError::new_err("('parts', list of column forms)"))?;
            return list.iter().map(|p| Held::new(&p, None)).collect();
        }
    }
    Ok(vec![Held::new(columns, None)?])
}

/// A rank's rows as bins (issue 13, session 8): what [`bin_shard`] makes on the rank's worker
/// and [`fit_shard`] trains on, so the worker keeps the bins, not a copy of its partitions'
/// values. Its bins are moved into the fit (a shard trains once).
#[pyclass(module = "boostlab._boostlab", name = "ShardBins", frozen)]
struct ShardBins {
    inner: Mutex<Option<PreBinned>>,
}

/// The contents of a [`ShardBins`].
struct PreBinned {
    schema: Schema,
    mapper: boostlab::data::BinMapper,
    bins: boostlab::data::BinnedMatrix,
}

impl ShardBins {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<PreBinned>> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn take(&self) -> PyResult<PreBinned> {
        self.lock().take().ok_or_else(|| PyValueError::new_err("this shard's bins were already trained on"))
    }
}

#[pymethods]
impl ShardBins {
    /// Rows binned (0 once trained on).
    #[getter]
    fn n_rows(&self) -> usize {
        self.lock().as_ref().map_or(0, |b| b.bins.n_rows)
    }

    /// Bytes of the bins (n_rows × features × 1 or 2).
    #[getter]
    fn nbytes(&self) -> usize {
        self.lock().as_ref().map_or(0, |b| match &b.bins.data {
            boostlab::data::BinData::U8(v) => v.len(),
            boostlab::data::BinData::U16(v) => 2 * v.len(),
        })
    }

    /// What Dask counts for this object in the worker's memory.
    fn __sizeof__(&self) -> usize {
        64 + self.nbytes()
    }

    /// A copy of the bins as an (n_rows, features) uint16 array (for tests).
    fn bins<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u16>>> {
        let g = self.lock();
        let b = g.as_ref().ok_or_else(|| PyValueError::new_err("this shard's bins were already trained on"))?;
        let (n, d) = (b.bins.n_rows, b.bins.n_features);
        Ok(Array2::from_shape_fn((n, d), |(i, f)| b.bins.bin(i, f) as u16).into_pyarray(py))
    }
}

/// `bin_shard(names, columns, bin_mapper_json) -> ShardBins`: a rank's rows binned with the
/// merged mapper (issue 13, session 8). `columns` as [`shard_summary`] takes them — with
/// `("parts", [...])` each partition is binned straight into its rows of the one matrix (the
/// row-blocked binning reads each partition once), so no concatenated copy is made. Runs with the
/// GIL released.
#[pyfunction]
fn bin_shard(
    py: Python<'_>,
    names: Vec<String>,
    columns: &Bound<'_, PyAny>,
    bin_mapper_json: &str,
) -> PyResult<ShardBins> {
    let mapper: boostlab::data::BinMapper =
        serde_json::from_str(bin_mapper_json).map_err(|e| PyValueError::new_err(format!("invalid bin mapper: {e}")))?;
    let held = held_parts(columns)?;
    let parts = held.iter().map(|h| h.views(py)).collect::<PyResult<Vec<_>>>()?;
    check_part_widths(&parts, &names)?;
    let schema = held
        .first()
        .map(|h| h.schema(names.clone()))
        .ok_or_else(|| PyValueError::new_err("bin_shard: no parts (give at least one, possibly of no rows)"))?;
    if let Some(p) = held.iter().position(|h| h.schema(names.clone()) != schema) {
        return Err(PyValueError::new_err(format!("part {p}: other feature kinds or levels than part 0's")));
    }
    let n: usize = parts.iter().map(|v| n_rows(v)).sum();
    let bins = py
        .detach(|| {
            let mut bins = mapper.new_matrix(n);
            let mut row0 = 0;
            for v in &parts {
                mapper.bin_into(&names, v, row0, &mut bins)?;
                row0 += n_rows(v);
            }
            Ok::<_, Error>(bins)
        })
        .map_err(py_err)?;
    Ok(ShardBins { inner: Mutex::new(Some(PreBinned { schema, mapper, bins })) })
}

/// The transport of `fit_shard`: a Python callable `allreduce(buf: 1-d float64 array) -> 1-d
/// float64 array` (the sum over ranks in rank order), called with the GIL re-acquired. Its
/// exception is kept in `error` (re-raised by `fit_shard`) and fails the fit.
struct PyCollective {
    func: Py<PyAny>,
    rank: usize,
    size: usize,
    error: ErrorSlot,
    /// The arrays handed to `func`, one per length, reused (session 9): a fresh array of 128 KiB
    /// or more — a histogram — is a new mapping in a Dask worker (see `RowBuffers` in the core),
    /// page-faulted in at every reduction. `func` only reads its argument.
    inputs: Mutex<Vec<Py<PyArray1<f64>>>>,
}

impl PyCollective {
    /// This collective's array of `buf.len()` values, holding a copy of `buf`.
    fn input<'py>(&self, py: Python<'py>, buf: &[f64]) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut inputs = self.inputs.lock().map_err(|_| PyValueError::new_err("allreduce buffers poisoned"))?;
        let arr = match inputs.iter().find(|a| numpy::PyUntypedArrayMethods::len(a.bind(py)) == buf.len()) {
            Some(a) => a.bind(py).clone(),
            None => {
                if inputs.len() >= 8 {
                    inputs.remove(0);
                }
                let a = PyArray1::<f64>::zeros(py, buf.len(), false);
                inputs.push(a.clone().unbind());
                a
            }
        };
        numpy::PyArrayMethods::readwrite(&arr).as_slice_mut()?.copy_from_slice(buf);
        Ok(arr)
    }
}

impl boostlab::collective::Collective for PyCollective {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn allreduce_sum(&self, buf: &mut [f64]) -> boostlab::Result<()> {
        Python::attach(|py| {
            let res = (|| -> PyResult<()> {
                let r = self.func.bind(py).call1((self.input(py, buf)?,))?;
                let r: PyReadonlyArray1<'_, f64> = r.extract()?;
                let r = r.as_array();
                if r.len() != buf.len() {
                    return Err(PyValueError::new_err(format!(
                        "allreduce returned {} values for {}",
                        r.len(),
                        buf.len()
                    )));
                }
                buf.iter_mut().zip(r.iter()).for_each(|(b, v)| *b = *v);
                Ok(())
            })();
            res.map_err(|e| {
                let msg = format!("rank {}: allreduce failed: {e}", self.rank);
                self.error.set(e);
                Error::Distributed(msg)
            })
        })
    }
}

/// `fit_shard(names, columns, target_kind, y, classes, params_json, bin_mapper_json, rank, size,
/// allreduce, sample_weight=None, loss=None, callbacks=None, n_jobs=None, valid=None,
/// init_model=None) -> Model`: this rank's part of a distributed fit (issue 13); every rank
/// returns the same model.
///
/// `columns`: this rank's rows as `fit` takes them, binned here with `bin_mapper_json`, or a
/// [`ShardBins`] from [`bin_shard`] (already binned; `bin_mapper_json` is then not read).
/// `names`, `target_kind`, `y`, `classes`, `sample_weight`, `loss`, `callbacks`,
/// `n_jobs`: as `fit`, for this rank's rows (the same names, categorical levels and `classes` on
/// every rank; a rank may have no rows). `valid`: this rank's validation rows, as `fit`'s (every
/// rank passes one, possibly of no rows, or none does). `init_model`: the model to continue
/// (warm start), the same on every rank. `bin_mapper_json`: from [`bin_mapper_from_summaries`].
/// `allreduce(buf: numpy float64 1-d) -> numpy float64 1-d`: the sum over the `size` ranks of
/// every rank's `buf`, in rank order, the same on every rank; every rank makes the same sequence
/// of calls. The fit runs with the GIL released; `allreduce` is called with it re-acquired, and
/// an exception it raises aborts the fit and is re-raised. `t = 'auto'`, a t schedule and
/// abstaining AdaBoost are refused.
#[pyfunction]
#[pyo3(signature = (names, columns, target_kind, y, classes, params_json, bin_mapper_json, rank, size, allreduce, sample_weight=None, loss=None, callbacks=None, n_jobs=None, valid=None, init_model=None))]
#[allow(clippy::too_many_arguments)]
fn fit_shard(
    py: Python<'_>,
    names: Vec<String>,
    columns: &Bound<'_, PyAny>,
    target_kind: &str,
    y: &Bound<'_, PyAny>,
    classes: Vec<String>,
    params_json: &str,
    bin_mapper_json: &str,
    rank: usize,
    size: usize,
    allreduce: Py<PyAny>,
    sample_weight: Option<PyReadonlyArray1<'_, f64>>,
    loss: Option<(Py<PyAny>, String, bool, Option<f64>)>,
    callbacks: Option<Vec<Py<PyAny>>>,
    n_jobs: Option<i64>,
    valid: Option<ValidTuple<'_>>,
    init_model: Option<PyRef<'_, Model>>,
) -> PyResult<Model> {
    if size == 0 || rank >= size {
        return Err(PyValueError::new_err(format!("rank {rank} of {size} ranks")));
    }
    let mapper = if columns.cast::<ShardBins>().is_ok() {
        None
    } else {
        Some(
            serde_json::from_str::<boostlab::data::BinMapper>(bin_mapper_json)
                .map_err(|e| PyValueError::new_err(format!("invalid bin mapper: {e}")))?,
        )
    };
    let args =
        FitArgs { names, target_kind, classes, params_json, sample_weight, loss, callbacks, valid, init_model, n_jobs };
    train(py, columns, y, args, Some(ShardArgs { mapper, allreduce, rank, size }))
}

/// Rebuilds a model from its JSON (the unpickling function of [`Model`]).
#[pyfunction]
fn model_from_json(text: &str) -> PyResult<Model> {
    Model::from_json(text)
}

/// A trained ensemble ([`Ensemble`]). Pickles as its model JSON.
#[pyclass(module = "boostlab._boostlab", name = "Model", frozen)]
struct Model {
    inner: Ensemble,
}

impl Model {
    fn scores_vec(&self, scores: &PyReadonlyArray2<'_, f64>) -> PyResult<(usize, Vec<f64>)> {
        let v = scores.as_array();
        if v.ncols() != self.inner.n_outputs {
            return Err(PyValueError::new_err(format!(
                "scores have {} columns, the model has {} outputs",
                v.ncols(),
                self.inner.n_outputs
            )));
        }
        Ok((v.nrows(), v.iter().copied().collect()))
    }

    /// Columns of the per-class outputs: 2 for binary models, else one per class (label).
    fn n_classes(&self) -> usize {
        match &self.inner.task {
            Task::Binary { .. } => 2,
            t => t.names().len(),
        }
    }
}

fn matrix(py: Python<'_>, n: usize, k: usize, v: Vec<f64>) -> PyResult<Bound<'_, PyArray2<f64>>> {
    Array2::from_shape_vec((n, k), v).map(|a| a.into_pyarray(py)).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl Model {
    /// Parses and validates a model from JSON.
    #[staticmethod]
    fn from_json(text: &str) -> PyResult<Model> {
        Ok(Model { inner: Ensemble::from_json(text).map_err(py_err)? })
    }

    /// The model as JSON (the model-file format).
    fn to_json(&self) -> PyResult<String> {
        self.inner.to_json().map_err(py_err)
    }

    /// Reads and validates a model file (the CLI's format).
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Model> {
        Ok(Model { inner: Ensemble::load(path).map_err(py_err)? })
    }

    /// Writes the model file atomically.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.inner.save(path).map_err(py_err)
    }

    fn __repr__(&self) -> String {
        format!(
            "Model(algorithm='{}', task='{}', n_features={}, n_trees={})",
            self.algorithm(),
            self.task(),
            self.inner.schema.names.len(),
            self.inner.n_trees()
        )
    }

    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let f = py.import("boostlab._boostlab")?.getattr("model_from_json")?;
        Ok((f, (self.to_json()?,)))
    }

    /// The algorithm's CLI name (`adaboost`, `t-adaboost`, ...).
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.inner.params.algorithm.name()
    }

    /// The training parameters as JSON.
    #[getter]
    fn params_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner.params).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Every parameter's effective value and source (default, preset, user) as JSON:
    /// `{"tree.max_split_candidates": {"value": 2000, "source": "preset"}, ...}`.
    #[getter]
    fn param_sources_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner.param_sources).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// `binary`, `multiclass` or `multilabel`.
    #[getter]
    fn task(&self) -> &'static str {
        match self.inner.task {
            Task::Binary { .. } => "binary",
            Task::Multiclass { .. } => "multiclass",
            Task::Multilabel { .. } => "multilabel",
        }
    }

    /// Class (or label) names, in the model's order.
    #[getter]
    fn classes(&self) -> Vec<String> {
        self.inner.task.names().to_vec()
    }

    /// Feature names.
    #[getter]
    fn feature_names(&self) -> Vec<String> {
        self.inner.schema.names.clone()
    }

    /// `numeric` or `categorical` per feature.
    #[getter]
    fn feature_kinds(&self) -> Vec<&'static str> {
        self.inner
            .schema
            .kinds
            .iter()
            .map(|k| match k {
                FeatureKind::Numeric => "numeric",
                FeatureKind::Categorical => "categorical",
            })
            .collect()
    }

    /// Scores per example.
    #[getter]
    fn n_outputs(&self) -> usize {
        self.inner.n_outputs
    }

    /// The learned label-set threshold θ (`{ℓ : f > θ}`; AdaBoost.MR/M2, issue 16), or None (θ = 0).
    #[getter]
    fn label_threshold(&self) -> Option<f64> {
        self.inner.label_threshold
    }

    /// Number of trees.
    #[getter]
    fn n_trees(&self) -> usize {
        self.inner.n_trees()
    }

    /// Tree weights α_t.
    #[getter]
    fn alphas<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.inner.alphas)
    }

    /// Early stopping's best iteration (0-based; the model keeps `best_iteration + 1` trees), or
    /// None (issue 15).
    #[getter]
    fn best_iteration(&self) -> Option<usize> {
        self.inner.best_iteration
    }

    /// The validation metric recorded as `valid_metric` in the history, or None (issue 15).
    #[getter]
    fn eval_metric(&self) -> Option<String> {
        self.inner.eval_metric.clone()
    }

    /// Clipping level δ of the clipped model (t-AdaBoost with t < 1), else None.
    #[getter]
    fn clip(&self) -> Option<f64> {
        self.inner.clip
    }

    /// t-AdaBoost with `t = "auto"` (issue 16): the grid, the inner cross-validated errors and the
    /// chosen t as JSON (`{"grid", "scores", "t", "folds", "fold_seed"}`), else None.
    #[getter]
    fn t_selection_json(&self) -> PyResult<Option<String>> {
        self.inner
            .t_selection
            .as_ref()
            .map(|s| serde_json::to_string(s).map_err(|e| PyValueError::new_err(e.to_string())))
            .transpose()
    }

    /// Per-round diagnostics: a list of dicts (`round`, the diagnostics, `stop_reason` when set).
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for r in &self.inner.history {
            out.append(record_dict(py, r)?)?;
        }
        Ok(out)
    }

    /// Scores `n × n_outputs` of the (clipped) model, computed with the GIL released from the
    /// caller's buffers (no float copy), on `n_jobs` threads (see [`thread_pool`]).
    #[pyo3(signature = (names, columns, clipped, n_jobs=None))]
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        columns: &Bound<'py, PyAny>,
        clipped: bool,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let pool = thread_pool(n_jobs)?;
        let _ = names; // columns come in the model's order (the Python side checks the names)
        let held = Held::new(columns, Some(&self.inner.schema))?;
        let views = held.views(py)?;
        let (n, k) = (n_rows(&views), self.inner.n_outputs);
        let cancel = Cancel::new();
        let s = interruptible(py, &cancel, || {
            pool.install(|| {
                let mut s = vec![0.0; n * k];
                let request = Prediction::scores().clipped(clipped).cancel(&cancel);
                self.inner.predict_into(&views, &request, &mut s).map(|_| s)
            })
        })?
        .map_err(py_err)?;
        matrix(py, n, k, s)
    }

    /// Staged scores `n_trees × n × n_outputs` (stage t = the first t + 1 trees).
    #[pyo3(signature = (names, columns, clipped, n_jobs=None))]
    fn staged_decision_function<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        columns: &Bound<'py, PyAny>,
        clipped: bool,
        n_jobs: Option<i64>,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let pool = thread_pool(n_jobs)?;
        let _ = names;
        let held = Held::new(columns, Some(&self.inner.schema))?;
        let views = held.views(py)?;
        let (n, k, t) = (n_rows(&views), self.inner.n_outputs, self.inner.n_trees());
        let cancel = Cancel::new();
        let all = interruptible(py, &cancel, || {
            pool.install(|| {
                let mut all = vec![0.0; t * n * k];
                let request = Prediction::new(Output::Staged).clipped(clipped).cancel(&cancel);
                self.inner.predict_into(&views, &request, &mut all).map(|_| all)
            })
        })?
        .map_err(py_err)?;
        Array3::from_shape_vec((t, n, k), all)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Per-class (per-label) decision values `n × n_classes` from scores (binary: `[−f, f]`).
    fn class_scores<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (n, s) = self.scores_vec(&scores)?;
        matrix(py, n, self.n_classes(), self.inner.class_scores(&s))
    }

    /// Probability estimates from scores: binary `n × 2`, otherwise `n × n_classes` (see
    /// `Output::Probabilities`).
    fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (n, s) = self.scores_vec(&scores)?;
        matrix(py, n, self.n_classes(), self.inner.proba_from_scores(&s))
    }

    /// Predicted class index of each row from scores.
    fn predict_index<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let (_, s) = self.scores_vec(&scores)?;
        let idx: Array1<i64> = self.inner.classes_from_scores(&s).into_iter().map(i64::from).collect();
        Ok(idx.into_pyarray(py))
    }

    /// Feature importances (issue 15), `kind` = `"gain"` or `"split"`, normalised to sum 1.
    fn feature_importance<'py>(&self, py: Python<'py>, kind: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let kind = boostlab::explain::ImportanceKind::parse(kind).map_err(py_err)?;
        Ok(Array1::from(self.inner.feature_importance(kind)).into_pyarray(py))
    }

    /// Exact TreeSHAP contributions `n × (n_features + 1) × n_outputs` (bias last), computed
    /// with the GIL released; an error for the clipped model (not additive).
    fn contributions<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        columns: &Bound<'py, PyAny>,
        clipped: bool,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let _ = names;
        let held = Held::new(columns, Some(&self.inner.schema))?;
        let views = held.views(py)?;
        let (n, d, k) = (n_rows(&views), self.inner.schema.names.len(), self.inner.n_outputs);
        let phi = py
            .detach(|| {
                let mut phi = vec![0.0; n * (d + 1) * k];
                let request = Prediction::new(Output::Contributions).clipped(clipped);
                self.inner.predict_into(&views, &request, &mut phi).map(|_| phi)
            })
            .map_err(py_err)?;
        Array3::from_shape_vec((n, d + 1, k), phi)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Sorted normalised margins `y·f(x)/N` of the linear model after each of `rounds`
    /// (`Ensemble::margins`); the target as `fit` takes it.
    #[allow(clippy::too_many_arguments)]
    fn margins<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        columns: &Bound<'py, PyAny>,
        target_kind: &str,
        y: &Bound<'py, PyAny>,
        classes: Vec<String>,
        rounds: Vec<usize>,
    ) -> PyResult<Vec<Bound<'py, PyArray1<f64>>>> {
        let _ = names;
        let target = target(target_kind, y, classes)?;
        let held = Held::new(columns, Some(&self.inner.schema))?;
        let views = held.views(py)?;
        let margins = py
            .detach(|| {
                let cols = boostlab::explain::columns_of_views(&views);
                self.inner.margins_of_columns(&cols, &target, &rounds)
            })
            .map_err(py_err)?;
        Ok(margins.into_iter().map(|m| Array1::from(m).into_pyarray(py)).collect())
    }

    /// The linear model as serialised ONNX (`Ensemble::to_onnx`); `clipped` is refused.
    fn to_onnx<'py>(&self, py: Python<'py>, clipped: bool) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let bytes = self.inner.to_onnx(clipped).map_err(py_err)?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// The margin normaliser after each round (`Ensemble::margin_norms`).
    fn margin_norms<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        Array1::from(self.inner.margin_norms()).into_pyarray(py)
    }
}

/// The extension module.
#[pymodule]
fn _boostlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(model_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(weight_prefix, m)?)?;
    m.add_function(wrap_pyfunction!(shard_summary, m)?)?;
    m.add_function(wrap_pyfunction!(bin_mapper_from_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(fit_shard, m)?)?;
    m.add_function(wrap_pyfunction!(bin_shard, m)?)?;
    m.add_function(wrap_pyfunction!(registry::parameter_registry, m)?)?;
    m.add_function(wrap_pyfunction!(registry::check_parameter, m)?)?;
    m.add_class::<ShardBins>()?;
    // Issue 13: experiment grids on Dask (src/experiment.rs).
    m.add_class::<experiment::ExperimentRun>()?;
    m.add_function(wrap_pyfunction!(experiment::experiment_run_cells, m)?)?;
    Ok(())
}
