//! The `Model` class: prediction, staged prediction, explanation and the model file.

use super::*;

/// Rebuilds a model from its JSON (the unpickling function of [`Model`]).
#[pyfunction]
pub(crate) fn model_from_json(text: &str) -> PyResult<Model> {
    Model::from_json(text)
}

/// A trained ensemble ([`Ensemble`]). Pickles as its model JSON.
#[pyclass(module = "boostlab._boostlab", name = "Model", frozen)]
pub(crate) struct Model {
    pub(crate) inner: Ensemble,
}

impl Model {
    pub(crate) fn scores_vec(&self, scores: &PyReadonlyArray2<'_, f64>) -> PyResult<(usize, Vec<f64>)> {
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
    pub(crate) fn n_classes(&self) -> usize {
        match &self.inner.task {
            Task::Binary { .. } => 2,
            t => t.names().len(),
        }
    }
}

pub(crate) fn matrix(py: Python<'_>, n: usize, k: usize, v: Vec<f64>) -> PyResult<Bound<'_, PyArray2<f64>>> {
    Array2::from_shape_vec((n, k), v).map(|a| a.into_pyarray(py)).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl Model {
    /// Parses and validates a model from JSON.
    #[staticmethod]
    pub(crate) fn from_json(text: &str) -> PyResult<Model> {
        Ok(Model { inner: Ensemble::from_json(text).map_err(py_err)? })
    }

    /// The model as JSON (the model-file format).
    pub(crate) fn to_json(&self) -> PyResult<String> {
        self.inner.to_json().map_err(py_err)
    }

    /// Reads and validates a model file (the CLI's format).
    #[staticmethod]
    pub(crate) fn load(path: PathBuf) -> PyResult<Model> {
        Ok(Model { inner: Ensemble::load(path).map_err(py_err)? })
    }

    /// Writes the model file atomically.
    pub(crate) fn save(&self, path: PathBuf) -> PyResult<()> {
        self.inner.save(path).map_err(py_err)
    }

    pub(crate) fn __repr__(&self) -> String {
        format!(
            "Model(algorithm='{}', task='{}', n_features={}, n_trees={})",
            self.algorithm(),
            self.task(),
            self.inner.schema.names.len(),
            self.inner.n_trees()
        )
    }

    pub(crate) fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let f = py.import("boostlab._boostlab")?.getattr("model_from_json")?;
        Ok((f, (self.to_json()?,)))
    }

    /// The algorithm's CLI name (`adaboost`, `t-adaboost`, ...).
    #[getter]
    pub(crate) fn algorithm(&self) -> &'static str {
        self.inner.params.algorithm.name()
    }

    /// The training parameters as JSON.
    #[getter]
    pub(crate) fn params_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner.params).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Every parameter's effective value and source (default, preset, user) as JSON:
    /// `{"tree.max_split_candidates": {"value": 2000, "source": "preset"}, ...}`.
    #[getter]
    pub(crate) fn param_sources_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.inner.param_sources).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// `binary`, `multiclass` or `multilabel`.
    #[getter]
    pub(crate) fn task(&self) -> &'static str {
        match self.inner.task {
            Task::Binary { .. } => "binary",
            Task::Multiclass { .. } => "multiclass",
            Task::Multilabel { .. } => "multilabel",
        }
    }

    /// Class (or label) names, in the model's order.
    #[getter]
    pub(crate) fn classes(&self) -> Vec<String> {
        self.inner.task.names().to_vec()
    }

    /// Feature names.
    #[getter]
    pub(crate) fn feature_names(&self) -> Vec<String> {
        self.inner.schema.names.clone()
    }

    /// `numeric` or `categorical` per feature.
    #[getter]
    pub(crate) fn feature_kinds(&self) -> Vec<&'static str> {
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
    pub(crate) fn n_outputs(&self) -> usize {
        self.inner.n_outputs
    }

    /// The learned label-set threshold θ (`{ℓ : f > θ}`; AdaBoost.MR/M2), or None (θ = 0).
    #[getter]
    pub(crate) fn label_threshold(&self) -> Option<f64> {
        self.inner.label_threshold
    }

    /// Number of trees.
    #[getter]
    pub(crate) fn n_trees(&self) -> usize {
        self.inner.n_trees()
    }

    /// Tree weights α_t.
    #[getter]
    pub(crate) fn alphas<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, &self.inner.alphas)
    }

    /// Early stopping's best iteration (0-based; the model keeps `best_iteration + 1` trees), or
    /// None.
    #[getter]
    pub(crate) fn best_iteration(&self) -> Option<usize> {
        self.inner.best_iteration
    }

    /// The validation metric recorded as `valid_metric` in the history, or None.
    #[getter]
    pub(crate) fn eval_metric(&self) -> Option<String> {
        self.inner.eval_metric.clone()
    }

    /// The scale `a` of a binary model's probabilities `σ(a·f)`: the calibrated one, or 2.
    #[getter]
    pub(crate) fn probability_scale(&self) -> f64 {
        self.inner.probability_scale()
    }

    /// Why a binary model's calibration could not be fitted (its probabilities are then σ(2f)),
    /// else None.
    #[getter]
    pub(crate) fn calibration_not_fitted(&self) -> Option<String> {
        self.inner.calibration.as_ref().and_then(|c| c.not_fitted.clone())
    }

    /// Clipping level δ of the clipped model (t-AdaBoost with t < 1), else None.
    #[getter]
    pub(crate) fn clip(&self) -> Option<f64> {
        self.inner.clip
    }

    /// t-AdaBoost with `t = "auto"`: the grid, the inner cross-validated errors and the
    /// chosen t as JSON (`{"grid", "scores", "t", "folds", "fold_seed"}`), else None.
    #[getter]
    pub(crate) fn t_selection_json(&self) -> PyResult<Option<String>> {
        self.inner
            .t_selection
            .as_ref()
            .map(|s| serde_json::to_string(s).map_err(|e| PyValueError::new_err(e.to_string())))
            .transpose()
    }

    /// Per-round diagnostics: a list of dicts (`round`, the diagnostics, `stop_reason` when set).
    pub(crate) fn history<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for r in &self.inner.history {
            out.append(record_dict(py, r)?)?;
        }
        Ok(out)
    }

    /// Scores `n × n_outputs` of the (clipped) model, computed with the GIL released from the
    /// caller's buffers (no float copy), on `n_jobs` threads (see [`thread_pool`]).
    #[pyo3(signature = (names, columns, clipped, n_jobs=None))]
    pub(crate) fn decision_function<'py>(
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
    pub(crate) fn staged_decision_function<'py>(
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
    pub(crate) fn class_scores<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (n, s) = self.scores_vec(&scores)?;
        matrix(py, n, self.n_classes(), self.inner.class_scores(&s))
    }

    /// Probability estimates from scores: binary `n × 2`, otherwise `n × n_classes` (see
    /// `Output::Probabilities`).
    pub(crate) fn predict_proba<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (n, s) = self.scores_vec(&scores)?;
        matrix(py, n, self.n_classes(), self.inner.proba_from_scores(&s))
    }

    /// Predicted class index of each row from scores.
    pub(crate) fn predict_index<'py>(
        &self,
        py: Python<'py>,
        scores: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let (_, s) = self.scores_vec(&scores)?;
        let idx: Array1<i64> = self.inner.classes_from_scores(&s).into_iter().map(i64::from).collect();
        Ok(idx.into_pyarray(py))
    }

    /// Feature importances, `kind` = `"gain"` or `"split"`, normalised to sum 1.
    pub(crate) fn feature_importance<'py>(&self, py: Python<'py>, kind: &str) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let kind = boostlab::explain::ImportanceKind::parse(kind).map_err(py_err)?;
        Ok(Array1::from(self.inner.feature_importance(kind)).into_pyarray(py))
    }

    /// Exact TreeSHAP contributions `n × (n_features + 1) × n_outputs` (bias last), computed
    /// with the GIL released and stopped by Ctrl-C; an error for the clipped model (not additive).
    pub(crate) fn contributions<'py>(
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
        let cancel = Cancel::new();
        let phi = interruptible(py, &cancel, || {
            let mut phi = vec![0.0; n * (d + 1) * k];
            let request = Prediction::new(Output::Contributions).clipped(clipped).cancel(&cancel);
            self.inner.predict_into(&views, &request, &mut phi).map(|_| phi)
        })?
        .map_err(py_err)?;
        Array3::from_shape_vec((n, d + 1, k), phi)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Sorted normalised margins `y·f(x)/N` of the linear model after each of `rounds`
    /// (`Ensemble::margins`); the target as `fit` takes it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn margins<'py>(
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
    pub(crate) fn to_onnx<'py>(&self, py: Python<'py>, clipped: bool) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let cancel = Cancel::new();
        let bytes =
            interruptible(py, &cancel, || self.inner.to_onnx_cancellable(clipped, Some(&cancel)))?.map_err(py_err)?;
        Ok(pyo3::types::PyBytes::new(py, &bytes))
    }

    /// The margin normaliser after each round (`Ensemble::margin_norms`).
    pub(crate) fn margin_norms<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        Array1::from(self.inner.margin_norms()).into_pyarray(py)
    }
}
