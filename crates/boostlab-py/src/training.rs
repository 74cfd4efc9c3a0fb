//! `fit`: training from Python (parameters, round callbacks, user losses, validation data,
//! warm start, threads).

use super::*;

/// A round record as the dict of `Model.history()` (`round`, the diagnostics, `stop_reason`).
pub(crate) fn record_dict<'py>(py: Python<'py>, r: &RoundRecord) -> PyResult<Bound<'py, PyDict>> {
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
pub(crate) fn round_callbacks(callbacks: Vec<Py<PyAny>>, slot: ErrorSlot) -> impl FnMut(&RoundRecord) {
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

/// A SecBoost loss from a Python callable `f(z: 1-d float64 array) -> 1-d float64 array`, called
/// once per batch of edges with the GIL re-acquired. A Python exception is kept in `error` (and the
/// batch filled with NaN, which stops the core); `fit` raises it afterwards.
pub(crate) fn python_loss(
    func: Py<PyAny>,
    name: String,
    convex: bool,
    beta: Option<f64>,
    error: ErrorSlot,
) -> PyResult<Loss> {
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

/// A local pool of worker threads for one call, scikit-learn's `n_jobs`: None or −1
/// = one per logical CPU, −2 = all but one, ..., a positive n = n threads; 0 is refused.
pub(crate) fn thread_pool(n_jobs: Option<i64>) -> PyResult<rayon::ThreadPool> {
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

/// Validation data from Python: `(columns, target kind, y, class names)`, the forms
/// of the training data's.
pub(crate) type ValidTuple<'py> = (Bound<'py, PyAny>, String, Bound<'py, PyAny>, Vec<String>);

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
pub(crate) fn fit(
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
pub(crate) struct FitArgs<'a, 'py> {
    pub(crate) names: Vec<String>,
    pub(crate) target_kind: &'a str,
    pub(crate) classes: Vec<String>,
    pub(crate) params_json: &'a str,
    pub(crate) sample_weight: Option<PyReadonlyArray1<'py, f64>>,
    pub(crate) loss: Option<(Py<PyAny>, String, bool, Option<f64>)>,
    pub(crate) callbacks: Option<Vec<Py<PyAny>>>,
    pub(crate) valid: Option<ValidTuple<'py>>,
    pub(crate) init_model: Option<PyRef<'py, Model>>,
    pub(crate) n_jobs: Option<i64>,
}

/// A rank's part of a distributed fit: the bin mapper every rank bins with, and the
/// transport `(allreduce, rank, size)`.
pub(crate) struct ShardArgs {
    /// None when the rows come binned ([`ShardBins`]).
    pub(crate) mapper: Option<boostlab::data::BinMapper>,
    pub(crate) allreduce: Py<PyAny>,
    pub(crate) rank: usize,
    pub(crate) size: usize,
}

/// The parameters of `params_json` (the algorithm's defaults and the preset first, the
/// estimator's given parameters over them) and their sources: the estimators send every
/// constructor argument that is not None, so one equal to what the preset (or the algorithm's
/// default) gives is not a choice of the user's.
pub(crate) fn params_and_sources(
    params_json: &str,
) -> PyResult<(BoostParams, std::collections::BTreeMap<String, boostlab::boost::preset::ParamEntry>)> {
    let given: serde_json::Value =
        serde_json::from_str(params_json).map_err(|e| PyValueError::new_err(format!("invalid parameters: {e}")))?;
    let (params, mut explicit) = BoostParams::from_json(&given).map_err(py_err)?;
    let mut base = serde_json::Map::new();
    for key in ["algorithm", "preset"] {
        if let Some(v) = given.get(key) {
            base.insert(key.into(), v.clone());
        }
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
pub(crate) fn train(
    py: Python<'_>,
    columns: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
    args: FitArgs<'_, '_>,
    shard: Option<ShardArgs>,
) -> PyResult<Model> {
    let pool = thread_pool(args.n_jobs)?;
    let (params, sources) = params_and_sources(args.params_json)?;
    // A rank's rows already binned on its worker ([`bin_shard`]).
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
    // Validation data, copied into columns of the training schema (categories re-coded
    // onto the training levels).
    let valid = args
        .valid
        .map(|(vcols, kind, vy, vclasses)| -> PyResult<Validation> {
            let vheld = Held::new(&vcols, Some(&schema))?;
            let vviews = vheld.views(py)?;
            if vviews.len() != schema.names.len() {
                return Err(PyValueError::new_err(format!(
                    "the validation data have {} features, the training data {}",
                    vviews.len(),
                    schema.names.len()
                )));
            }
            // The caller's arrays are read as every input is: through their `TableSource`.
            let features =
                ArraySource::new(schema.clone(), vviews, None, None).map_err(py_err)?.read().map_err(py_err)?.features;
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
                    let data =
                        ArraySource::new(schema, views, Some(target), sample_weight)?.read_binned(params.max_bins)?;
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
