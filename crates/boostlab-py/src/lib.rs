//! `boostlab._boostlab`: the Python extension module behind the `boostlab` package.
//!
//! Conversion only (STYLE 12): numpy arrays in, [`boostlab`] calls, numpy arrays out. Every
//! scikit-learn convention — input validation, the `classes_` mapping, tags, pickling — lives in
//! `python/boostlab`. The one design choice: the Python side hands over *columns* — a
//! float32 or float64 matrix `("matrix", buffer, n, d, row stride, column stride)`, a CSC matrix
//! or a list of numeric `("column", buffer, n, stride)` entries and `(codes, levels)` categorical
//! pairs, or an imported Arrow table ([`arrow`]) — and the core reads the numpy and Arrow buffers in place through [`ColumnView`]s (`buffer` is a
//! contiguous 1-d view spanning a strided array, made without a copy on the Python side): no
//! float copy is made, binning and prediction run with the GIL released, and after binning only
//! the bins are kept.
//!
//! Errors: [`boostlab::Error::Io`] becomes `OSError`, every other core error `ValueError`, both
//! with the core's message.
//!
//! Interrupts: `fit` and `decision_function` run on a scoped worker thread while the
//! calling thread, GIL released, waits for it in slices of [`POLL`] and runs
//! `PyErr_CheckSignals` between them. A pending `KeyboardInterrupt` (or any exception a signal
//! handler raises) sets the core's [`Cancel`] flag, which the boosting loop checks between rounds
//! and nodes and prediction between row blocks; the worker is joined (no thread is left running)
//! and the exception propagates. A `callbacks` function that raises stops the fit the same way.

mod arrow;
mod errors;
mod experiment;
mod input;
mod interrupt;
mod model;
mod registry;
mod shard;
mod training;

use arrow::*;
use errors::*;
use input::*;
use interrupt::*;
use model::*;
use shard::*;
use training::*;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use boostlab::data::source::{ArraySource, TableSource};
use boostlab::data::{BinnedData, ChunkedColumn, ColumnView, FeatureKind, Indices, NumericView, Target, MISSING_CODE};
use boostlab::math::loss::{BatchLossFn, Loss};
use boostlab::model::{Schema, Task};
use boostlab::{BoostParams, Cancel, Ensemble, Error, Output, Prediction, RoundRecord, Trainer, Validation};
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

/// The extension module.
#[pymodule]
fn _boostlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Model>()?;
    m.add_class::<ArrowTable>()?;
    m.add_function(wrap_pyfunction!(arrow::arrow_table, m)?)?;
    m.add_function(wrap_pyfunction!(training::fit, m)?)?;
    m.add_function(wrap_pyfunction!(model::model_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(shard::weight_prefix, m)?)?;
    m.add_function(wrap_pyfunction!(shard::shard_summary, m)?)?;
    m.add_function(wrap_pyfunction!(shard::bin_mapper_from_summaries, m)?)?;
    m.add_function(wrap_pyfunction!(shard::fit_shard, m)?)?;
    m.add_function(wrap_pyfunction!(shard::bin_shard, m)?)?;
    m.add_function(wrap_pyfunction!(registry::parameter_registry, m)?)?;
    m.add_function(wrap_pyfunction!(registry::check_parameter, m)?)?;
    m.add_class::<ShardBins>()?;
    // Experiment grids on Dask (src/experiment.rs).
    m.add_class::<experiment::ExperimentRun>()?;
    m.add_function(wrap_pyfunction!(experiment::experiment_run_cells, m)?)?;
    Ok(())
}
