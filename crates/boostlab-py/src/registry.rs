//! The parameter registry ([`boostlab::params::registry`]) for Python: the estimators' tests hold
//! their constructor arguments to it, and the estimators check ranges with it.

use boostlab::params::registry::{check_number, Kind, Range, PARAMETERS};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// `parameter_registry() -> list[dict]`: every training parameter, one dict each with `name`,
/// `paths`, `kind`, `choices` (or None), `default`, `range`, `algorithms`, `topic`, `cli_flag`,
/// `python_kw`, `python_algorithms` (the algorithms whose estimators take `python_kw`),
/// `toml_key`, `doc`, and `interval`: `(min, min_open, max, max_open)` for a range that is an
/// interval (bounds may be infinite), else None.
#[pyfunction]
pub fn parameter_registry(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    PARAMETERS
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("paths", p.paths.to_vec())?;
            d.set_item("kind", p.kind.describe())?;
            d.set_item("choices", if let Kind::Choice(c) = p.kind { Some(c.to_vec()) } else { None })?;
            d.set_item("default", p.default)?;
            d.set_item("range", p.range.describe())?;
            let interval = match p.range {
                Range::Interval { min, min_open, max, max_open } => Some((min, min_open, max, max_open)),
                _ => None,
            };
            d.set_item("interval", interval)?;
            d.set_item("algorithms", p.algorithms.iter().map(|a| a.name()).collect::<Vec<_>>())?;
            d.set_item("topic", p.topic.heading().to_lowercase())?;
            d.set_item("cli_flag", p.cli_flag)?;
            d.set_item("python_kw", p.python_kw)?;
            d.set_item("python_algorithms", p.python_algorithms().iter().map(|a| a.name()).collect::<Vec<_>>())?;
            d.set_item("toml_key", p.toml_key)?;
            d.set_item("doc", p.doc)?;
            Ok(d)
        })
        .collect()
}

/// `check_parameter(name, value)`: raises `ValueError` when the number `value` is outside the
/// registry's range of parameter `name` (the same check and message as the CLI and the core).
#[pyfunction]
pub fn check_parameter(name: &str, value: f64) -> PyResult<()> {
    check_number(name, value).map_err(crate::py_err)
}
