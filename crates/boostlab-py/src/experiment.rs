//! Experiment grids from Python: the conversion layer under `boostlab.experiment`.
//!
//! The Dask client opens the results directory ([`ExperimentRun`]: the spec check, resume, atomic
//! record writes — the library's [`ResultsDir`], as `boostlab experiment` uses it) and sends
//! batches of cell indices to the workers; each task calls [`experiment_run_cells`] with the
//! spec's text, which runs the cells with the library's cell runner and returns their records as
//! JSON. Nothing here decides anything about a cell.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use boostlab::experiment::{CellRecord, PreparedExperiment, ResultsDir};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::py_err;

/// The prepared experiment of the last spec this process ran cells of, keyed by (spec text, base
/// directory): the cells of one (dataset, fold) that later tasks bring to this worker reuse its
/// split and bins.
static PREPARED: Mutex<Option<Prepared>> = Mutex::new(None);

/// (spec text, base directory, the experiment prepared from them).
type Prepared = (String, Option<PathBuf>, Arc<PreparedExperiment>);

/// One cell's outcome: `(index, record_json, None)` or `(index, None, error_message)`.
type CellOutcome = (usize, Option<String>, Option<String>);

fn prepared(spec_text: &str, base_dir: Option<PathBuf>) -> PyResult<Arc<PreparedExperiment>> {
    let mut slot = PREPARED.lock().map_err(|_| PyValueError::new_err("experiment cache poisoned by a panic"))?;
    if let Some((text, dir, p)) = slot.as_ref() {
        if text == spec_text && *dir == base_dir {
            return Ok(p.clone());
        }
    }
    let p = Arc::new(PreparedExperiment::from_toml(spec_text, base_dir.as_deref()).map_err(py_err)?);
    *slot = Some((spec_text.to_string(), base_dir, p.clone()));
    Ok(p)
}

/// Runs the cells `indices` of the spec `spec_text` (TOML; relative paths relative to
/// `base_dir`) on `n_threads` threads (cells in parallel; default 1, one core per Dask worker
/// thread) and returns, per cell in the given order, `(index, record_json, None)` or
/// `(index, None, error_message)`. Releases the GIL while the cells run.
#[pyfunction]
#[pyo3(signature = (spec_text, base_dir, indices, n_threads = 1))]
pub fn experiment_run_cells(
    py: Python<'_>,
    spec_text: &str,
    base_dir: Option<PathBuf>,
    indices: Vec<usize>,
    n_threads: usize,
) -> PyResult<Vec<CellOutcome>> {
    let exp = prepared(spec_text, base_dir)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n_threads.max(1))
        .build()
        .map_err(|e| PyValueError::new_err(format!("n_threads = {n_threads}: cannot start the threads: {e}")))?;
    Ok(py.detach(|| {
        pool.install(|| {
            indices
                .par_iter()
                .with_max_len(1)
                .map(|&i| {
                    let rec = exp.run_cell(i).and_then(|r| {
                        serde_json::to_string(&r).map_err(|e| boostlab::Error::InvalidData(format!("record: {e}")))
                    });
                    match rec {
                        Ok(json) => (i, Some(json), None),
                        Err(e) => (i, None, Some(e.to_string())),
                    }
                })
                .collect()
        })
    }))
}

/// A results directory opened by the client of a Dask run: checks (or writes) `spec.json`, knows
/// which cells are recorded, writes each returned record atomically, and rewrites
/// `results.jsonl` at the end — the same files, checks and resume rule as `boostlab experiment`.
#[pyclass(module = "boostlab._boostlab")]
pub struct ExperimentRun {
    exp: PreparedExperiment,
    dir: ResultsDir,
}

#[pymethods]
impl ExperimentRun {
    /// Opens `out` for the spec `spec_text` (relative paths relative to `base_dir`).
    #[new]
    #[pyo3(signature = (spec_text, base_dir, out))]
    fn new(spec_text: &str, base_dir: Option<PathBuf>, out: PathBuf) -> PyResult<Self> {
        let exp = PreparedExperiment::from_toml(spec_text, base_dir.as_deref()).map_err(py_err)?;
        let dir = ResultsDir::open(&exp.spec, Path::new(&out), &exp.cells).map_err(py_err)?;
        Ok(ExperimentRun { exp, dir })
    }

    /// The experiment's name.
    #[getter]
    fn name(&self) -> String {
        self.exp.spec.name.clone()
    }

    /// Number of cells.
    #[getter]
    fn total(&self) -> usize {
        self.exp.cells.len()
    }

    /// Number of cells recorded before this run.
    #[getter]
    fn n_recorded(&self) -> usize {
        self.dir.n_recorded()
    }

    /// The cells not yet recorded, in cell order, as `(index, key, dataset, fold)`.
    fn pending(&self) -> Vec<(usize, String, String, usize)> {
        self.exp
            .cells
            .iter()
            .filter(|c| !self.dir.is_recorded(&c.key))
            .map(|c| (c.index, c.key.clone(), c.dataset.name.clone(), c.fold))
            .collect()
    }

    /// Writes one record returned by [`experiment_run_cells`], after checking that it is a record
    /// of this spec's cell at its index (returns the cell's key).
    fn write(&self, py: Python<'_>, record_json: &str) -> PyResult<String> {
        let record: CellRecord =
            serde_json::from_str(record_json).map_err(|e| PyValueError::new_err(format!("not a cell record: {e}")))?;
        match self.exp.cells.get(record.index) {
            Some(c) if c.key == record.key && c.seed == record.seed => {}
            _ => {
                return Err(PyValueError::new_err(format!(
                    "record for cell {} (index {}) is not a cell of experiment {}",
                    record.key, record.index, self.exp.spec.name
                )))
            }
        }
        py.detach(|| self.dir.write_record(&record)).map_err(py_err)?;
        Ok(record.key)
    }

    /// Rewrites `results.jsonl` from every record in the directory, in cell order.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.dir.write_merged()).map_err(py_err)
    }
}
