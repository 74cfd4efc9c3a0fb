//! Distributed training: the Rust side of `boostlab.dask` (shard summaries, the bin mapper,
//! binned shards, the collective over the Python transport, a rank's fit).

use super::*;

// ---- Distributed training (the Rust side of `boostlab.dask`) ----------------------
//
// Each worker (rank) holds some of the rows, in rank order. Binning: every rank calls
// `shard_summary` on its rows, the driver merges the bytes in rank order with
// `bin_mapper_from_summaries` (the single machine's bins on the same rows) and broadcasts the
// mapper's JSON; training: every rank calls `fit_shard` with the mapper and a Python `allreduce`
// callable (the transport), and every rank returns the same model.

/// The parameters of a `params_json` (a [`BoostParams`] as JSON, the preset applied).
pub(crate) fn params_of(params_json: &str) -> PyResult<BoostParams> {
    let given: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("invalid parameters: {e}")))?;
    Ok(BoostParams::from_json(&given).map_err(py_err)?.0)
}

/// `weight_prefix(start: float, sample_weight: float64 array) -> float`: `start + Σ w` summed left
/// to right. Chained over the ranks in order (rank 0 from 0.0, each next rank from the previous
/// result) it gives each rank's `weight_offset` and, after the last, `total_weight` for
/// [`shard_summary`] — exactly the single machine's cumulative sums.
#[pyfunction]
pub(crate) fn weight_prefix(start: f64, sample_weight: PyReadonlyArray1<'_, f64>) -> PyResult<f64> {
    let w = sample_weight.as_array();
    Ok(w.iter().fold(start, |acc, &x| acc + x))
}

/// `shard_summary(names, columns, params_json, global_offset, global_n, sample_weight=None,
/// weight_offset=0.0, total_weight=0.0) -> bytes`: the binning summary of this rank's rows.
///
/// `columns` as `fit` takes them (the same forms as the local estimators send; categorical
/// columns with the same levels on every rank), or `("parts", [columns, ...])`: the rank's
/// partitions in order, each in one of those forms, read in place; the rows are rows
/// `global_offset..global_offset + n` of `global_n` (rank order). With `sample_weight`,
/// `weight_offset`/`total_weight` come from chaining [`weight_prefix`]. Only `max_bins` is read
/// from `params_json`. Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (names, columns, params_json, global_offset, global_n, sample_weight=None, weight_offset=0.0, total_weight=0.0))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn shard_summary<'py>(
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
pub(crate) fn bin_mapper_from_summaries(
    names: Vec<String>,
    summaries: Vec<Vec<u8>>,
    params_json: &str,
) -> PyResult<String> {
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
pub(crate) fn check_part_widths(parts: &[Vec<ColumnView<'_>>], names: &[String]) -> PyResult<()> {
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
/// rank's partitions, in order).
pub(crate) fn held_parts<'py>(columns: &Bound<'py, PyAny>) -> PyResult<Vec<Held<'py>>> {
    if let Ok(t) = columns.cast::<PyTuple>() {
        if t.len() == 2 && t.get_item(0)?.extract::<String>().is_ok_and(|tag| tag == "parts") {
            let list = t.get_item(1)?;
            let list = list.cast::<PyList>().map_err(|_| PyTypeError::new_err("('parts', list of column forms)"))?;
            return list.iter().map(|p| Held::new(&p, None)).collect();
        }
    }
    Ok(vec![Held::new(columns, None)?])
}

/// A rank's rows as bins: what [`bin_shard`] makes on the rank's worker
/// and [`fit_shard`] trains on, so the worker keeps the bins, not a copy of its partitions'
/// values. Its bins are moved into the fit (a shard trains once).
#[pyclass(module = "boostlab._boostlab", name = "ShardBins", frozen)]
pub(crate) struct ShardBins {
    pub(crate) inner: Mutex<Option<PreBinned>>,
}

/// The contents of a [`ShardBins`].
pub(crate) struct PreBinned {
    pub(crate) schema: Schema,
    pub(crate) mapper: boostlab::data::BinMapper,
    pub(crate) bins: boostlab::data::BinnedMatrix,
}

impl ShardBins {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Option<PreBinned>> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn take(&self) -> PyResult<PreBinned> {
        self.lock().take().ok_or_else(|| PyValueError::new_err("this shard's bins were already trained on"))
    }
}

#[pymethods]
impl ShardBins {
    /// Rows binned (0 once trained on).
    #[getter]
    pub(crate) fn n_rows(&self) -> usize {
        self.lock().as_ref().map_or(0, |b| b.bins.n_rows)
    }

    /// Bytes of the bins (n_rows × features × 1 or 2).
    #[getter]
    pub(crate) fn nbytes(&self) -> usize {
        self.lock().as_ref().map_or(0, |b| match &b.bins.data {
            boostlab::data::BinData::U8(v) => v.len(),
            boostlab::data::BinData::U16(v) => 2 * v.len(),
        })
    }

    /// What Dask counts for this object in the worker's memory.
    pub(crate) fn __sizeof__(&self) -> usize {
        64 + self.nbytes()
    }

    /// A copy of the bins as an (n_rows, features) uint16 array (for tests).
    pub(crate) fn bins<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u16>>> {
        let g = self.lock();
        let b = g.as_ref().ok_or_else(|| PyValueError::new_err("this shard's bins were already trained on"))?;
        let (n, d) = (b.bins.n_rows, b.bins.n_features);
        Ok(Array2::from_shape_fn((n, d), |(i, f)| b.bins.bin(i, f) as u16).into_pyarray(py))
    }
}

/// `bin_shard(names, columns, bin_mapper_json) -> ShardBins`: a rank's rows binned with the
/// merged mapper. `columns` as [`shard_summary`] takes them — with
/// `("parts", [...])` each partition is binned straight into its rows of the one matrix (the
/// row-blocked binning reads each partition once), so no concatenated copy is made. Runs with the
/// GIL released.
#[pyfunction]
pub(crate) fn bin_shard(
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
pub(crate) struct PyCollective {
    pub(crate) func: Py<PyAny>,
    pub(crate) rank: usize,
    pub(crate) size: usize,
    pub(crate) error: ErrorSlot,
    /// The arrays handed to `func`, one per length, reused: a fresh array of 128 KiB
    /// or more — a histogram — is a new mapping in a Dask worker (see `RowBuffers` in the core),
    /// page-faulted in at every reduction. `func` only reads its argument.
    pub(crate) inputs: Mutex<Vec<Py<PyArray1<f64>>>>,
}

impl PyCollective {
    /// This collective's array of `buf.len()` values, holding a copy of `buf`.
    pub(crate) fn input<'py>(&self, py: Python<'py>, buf: &[f64]) -> PyResult<Bound<'py, PyArray1<f64>>> {
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
/// init_model=None) -> Model`: this rank's part of a distributed fit; every rank
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
pub(crate) fn fit_shard(
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
