//! `boostlab._boostlab`: the Python extension module behind the `boostlab` package.
//!
//! Conversion only (STYLE 12): numpy arrays in, [`boostlab`] calls, numpy arrays out. Every
//! scikit-learn convention — input validation, the `classes_` mapping, tags, pickling — lives in
//! `python/boostlab`. The one design choice: the Python side hands over *columns* (a 2-d float64
//! array, a CSC triple, or a list of numeric arrays and `(codes, levels)` categorical pairs), which
//! are read straight from the numpy buffers into the core's column vectors, and training runs with
//! the GIL released.
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

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use boostlab::boost::driver::fit_cancellable;
use boostlab::data::{Column, Dataset, Features, Target, MISSING_CODE};
use boostlab::loss::{BatchLossFn, Loss};
use boostlab::model::Task;
use boostlab::{BoostParams, Cancel, Ensemble, Error, RoundRecord};
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

/// One numeric column from a 1-d float64 array (NaN = missing).
fn numeric(a: &PyReadonlyArray1<'_, f64>) -> Column {
    Column::Numeric(a.as_array().to_vec())
}

/// One categorical column from int64 codes (negative = missing) and level names.
fn categorical(codes: &PyReadonlyArray1<'_, i64>, levels: Vec<String>) -> PyResult<Column> {
    let codes = codes
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
        .collect::<PyResult<Vec<u32>>>()?;
    Ok(Column::Categorical { codes, levels })
}

/// The columns of a CSC matrix `("csc", n_rows, indptr, indices, values)`; absent entries are 0.
fn csc_columns(t: &Bound<'_, PyTuple>) -> PyResult<Vec<Column>> {
    let (_, n_rows, indptr, indices, values): (
        String,
        usize,
        PyReadonlyArray1<'_, i64>,
        PyReadonlyArray1<'_, i64>,
        PyReadonlyArray1<'_, f64>,
    ) = t.extract()?;
    let (indptr, indices, values) = (indptr.as_array(), indices.as_array(), values.as_array());
    let bad = || PyValueError::new_err("malformed CSC matrix");
    let mut out = Vec::with_capacity(indptr.len().saturating_sub(1));
    for j in 0..indptr.len().saturating_sub(1) {
        let (lo, hi) =
            (usize::try_from(indptr[j]).map_err(|_| bad())?, usize::try_from(indptr[j + 1]).map_err(|_| bad())?);
        if lo > hi || hi > indices.len() || hi > values.len() {
            return Err(bad());
        }
        let mut col = vec![0.0; n_rows];
        for p in lo..hi {
            let i = usize::try_from(indices[p]).ok().filter(|&i| i < n_rows).ok_or_else(bad)?;
            col[i] = values[p];
        }
        out.push(Column::Numeric(col));
    }
    Ok(out)
}

/// Feature columns from the Python side's representation (see the module doc).
fn features(names: Vec<String>, data: &Bound<'_, PyAny>) -> PyResult<Features> {
    let columns = if let Ok(a) = data.extract::<PyReadonlyArray2<'_, f64>>() {
        let v = a.as_array();
        // Column views of a Fortran-ordered array are contiguous (a plain copy); of a C-ordered
        // one, strided reads of the same buffer. No intermediate array either way.
        (0..v.ncols()).map(|j| Column::Numeric(v.column(j).to_vec())).collect()
    } else if let Ok(t) = data.cast::<PyTuple>() {
        csc_columns(t)?
    } else if let Ok(list) = data.cast::<PyList>() {
        let mut cols = Vec::with_capacity(list.len());
        for item in list.iter() {
            if let Ok(a) = item.extract::<PyReadonlyArray1<'_, f64>>() {
                cols.push(numeric(&a));
            } else {
                let (codes, levels): (PyReadonlyArray1<'_, i64>, Vec<String>) = item.extract().map_err(|_| {
                    PyTypeError::new_err("a column is a float64 array or a (int64 codes, level names) pair")
                })?;
                cols.push(categorical(&codes, levels)?);
            }
        }
        cols
    } else {
        return Err(PyTypeError::new_err("features: a 2-d float64 array, a CSC tuple or a list of columns"));
    };
    Ok(Features { names, columns })
}

/// Prediction features, checked as a dataset (equal lengths, finite values, valid codes).
fn checked_features(names: Vec<String>, data: &Bound<'_, PyAny>) -> PyResult<Features> {
    Ok(Dataset::new(features(names, data)?, None, None).map_err(py_err)?.features)
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

/// Trains an ensemble with the GIL released; Ctrl-C stops it (see the module doc).
///
/// `names`/`columns`: the features (see the module doc); `target_kind`, `y`, `classes`: the target
/// (see [`target`]); `params_json`: a [`BoostParams`] as JSON (absent fields take their defaults);
/// `loss`: `(callable, name, convex, beta)` for a user SecBoost loss; `callbacks`: callables
/// called after each round with the round's record (a dict); one that raises stops the fit with
/// its exception.
#[pyfunction]
#[pyo3(signature = (names, columns, target_kind, y, classes, params_json, sample_weight=None, loss=None, callbacks=None))]
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
) -> PyResult<Model> {
    let given: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("invalid parameters: {e}")))?;
    // Issue 17: the preset first, the estimator's given parameters over it.
    let (params, mut explicit) = BoostParams::from_json(&given).map_err(py_err)?;
    // The estimators send every constructor argument: one equal to what the preset (or the
    // default) gives is not a choice of the user's.
    let mut base = serde_json::Map::new();
    if let Some(p) = given.get("preset") {
        base.insert("preset".into(), p.clone());
    }
    let base =
        BoostParams::from_json(&serde_json::Value::Object(base)).map_err(py_err)?.0.sources(&[]).map_err(py_err)?;
    let effective = params.sources(&[]).map_err(py_err)?;
    explicit.retain(|path| base.get(path).map(|e| &e.value) != effective.get(path).map(|e| &e.value));
    let sources = params.sources(&explicit).map_err(py_err)?;
    let data = Dataset::new(
        features(names, columns)?,
        Some(target(target_kind, y, classes)?),
        sample_weight.map(|w| w.as_array().to_vec()),
    )
    .map_err(py_err)?;
    let cancel = Cancel::new();
    let error = ErrorSlot { error: Arc::new(Mutex::new(None)), cancel: cancel.clone() };
    let loss = loss.map(|(f, name, convex, beta)| python_loss(f, name, convex, beta, error.clone())).transpose()?;
    let callbacks = callbacks.unwrap_or_default();
    let slot = error.clone();
    let mut on_round = move |r: &RoundRecord| {
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
    };
    let res = interruptible(py, &cancel, || fit_cancellable(&data, &params, loss, &cancel, &mut on_round))?;
    if let Some(e) = error.take() {
        return Err(e);
    }
    let mut inner = res.map_err(py_err)?;
    inner.param_sources = sources;
    Ok(Model { inner })
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
        use boostlab::data::FeatureKind;
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

    /// Clipping level δ of the clipped model (t-AdaBoost with t < 1), else None.
    #[getter]
    fn clip(&self) -> Option<f64> {
        self.inner.clip
    }

    /// Per-round diagnostics: a list of dicts (`round`, the diagnostics, `stop_reason` when set).
    fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for r in &self.inner.history {
            out.append(record_dict(py, r)?)?;
        }
        Ok(out)
    }

    /// Scores `n × n_outputs` of the (clipped) model, computed with the GIL released.
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        columns: &Bound<'py, PyAny>,
        clipped: bool,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let f = checked_features(names, columns)?;
        let n = f.n_rows();
        let cancel = Cancel::new();
        let s = interruptible(py, &cancel, || self.inner.decision_function_cancellable(&f, clipped, &cancel))?
            .map_err(py_err)?;
        Array2::from_shape_vec((n, self.inner.n_outputs), s)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Staged scores `n_trees × n × n_outputs` (stage t = the first t + 1 trees).
    fn staged_decision_function<'py>(
        &self,
        py: Python<'py>,
        names: Vec<String>,
        columns: &Bound<'py, PyAny>,
        clipped: bool,
    ) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let f = checked_features(names, columns)?;
        let (n, k, t) = (f.n_rows(), self.inner.n_outputs, self.inner.n_trees());
        let all = py
            .detach(|| {
                let mut all = Vec::with_capacity(t * n * k);
                self.inner.for_each_stage(&f, clipped, |_, s| all.extend_from_slice(s)).map(|_| all)
            })
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
    /// `Ensemble::predict_proba`).
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
}

/// The extension module.
#[pymodule]
fn _boostlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(model_from_json, m)?)?;
    Ok(())
}
