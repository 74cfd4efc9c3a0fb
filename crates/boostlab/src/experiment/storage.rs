//! Storage of an experiment's results: the cell records, their JSON encoding (non-finite values
//! as strings), the results directory (atomic writes, resume, the spec check) and its loading.
//! See the [module docs](super) for the layout.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::spec::{fnv1a, Cell, ExperimentSpec, FNV_OFFSET};
use crate::error::{Error, Result};
use crate::model::{write_atomic, TMP_SUFFIX};

/// Version of the results-directory layout written in `spec.json`.
pub const RESULTS_FORMAT: u32 = 1;

/// Finished-cell output: per-round curves and final numbers. Non-finite values round-trip through
/// the JSON records (as the strings `"NaN"`, `"inf"`, `"-inf"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "CellResultRepr", into = "CellResultRepr")]
pub struct CellResult {
    /// Test error after each round.
    pub test_error: Vec<f64>,
    /// Test error of the clipped model after each round, when the algorithm has one (docs/explanation/tadaboost.md#tadaboost-algorithm).
    pub test_error_clipped: Option<Vec<f64>>,
    /// Training error (on the possibly noisy training labels) after each round.
    pub train_error: Vec<f64>,
    /// Per-round diagnostics, name → one value per round (`rho`, `mu`, `alpha`, `z`, ...).
    pub diagnostics: BTreeMap<String, Vec<f64>>,
    /// Test error of the final model.
    pub final_test_error: f64,
    /// Test error of the final clipped model, when there is one.
    pub final_test_error_clipped: Option<f64>,
    /// Training error of the final model.
    pub final_train_error: f64,
    /// Any other final numbers (rounds run, noisy training labels flipped, ...).
    pub extra: BTreeMap<String, f64>,
    /// Why boosting stopped early, if it did.
    pub stop_reason: Option<String>,
}

impl CellResult {
    /// A result whose final numbers are the last entries of the curves (NaN for an empty curve).
    pub fn from_curves(test_error: Vec<f64>, test_error_clipped: Option<Vec<f64>>, train_error: Vec<f64>) -> Self {
        let last = |v: &[f64]| v.last().copied().unwrap_or(f64::NAN);
        CellResult {
            final_test_error: last(&test_error),
            final_test_error_clipped: test_error_clipped.as_deref().map(last),
            final_train_error: last(&train_error),
            test_error,
            test_error_clipped,
            train_error,
            ..CellResult::default()
        }
    }
}

/// One recorded cell: its identity and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// [`Cell::index`].
    pub index: usize,
    /// [`Cell::key`].
    pub key: String,
    /// Dataset name.
    pub dataset: String,
    /// Expanded setting name.
    pub setting: String,
    /// Noise rate.
    pub noise: f64,
    /// Test fold.
    pub fold: usize,
    /// [`Cell::seed`].
    pub seed: u64,
    /// What the cell runner returned.
    pub result: CellResult,
}

/// A results directory as loaded by [`load_results`].
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentResults {
    /// The spec stored in `spec.json`.
    pub spec: ExperimentSpec,
    /// Its hash.
    pub spec_hash: String,
    /// The recorded cells, in cell order.
    pub records: Vec<CellRecord>,
}

// ---------------------------------------------------------------------------------------------
// JSON encoding of results (non-finite values as strings).

#[derive(Debug, Clone, Copy)]
struct JsonF64(f64);

impl Serialize for JsonF64 {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let v = self.0;
        if v.is_finite() {
            s.serialize_f64(v)
        } else if v.is_nan() {
            s.serialize_str("NaN")
        } else if v > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }
}

impl<'de> Deserialize<'de> for JsonF64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = JsonF64;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number or one of \"NaN\", \"inf\", \"-inf\"")
            }
            fn visit_f64<E>(self, v: f64) -> std::result::Result<JsonF64, E> {
                Ok(JsonF64(v))
            }
            fn visit_i64<E>(self, v: i64) -> std::result::Result<JsonF64, E> {
                Ok(JsonF64(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> std::result::Result<JsonF64, E> {
                Ok(JsonF64(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<JsonF64, E> {
                match v {
                    "NaN" => Ok(JsonF64(f64::NAN)),
                    "inf" => Ok(JsonF64(f64::INFINITY)),
                    "-inf" => Ok(JsonF64(f64::NEG_INFINITY)),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

fn wrap(v: Vec<f64>) -> Vec<JsonF64> {
    v.into_iter().map(JsonF64).collect()
}

fn unwrap(v: Vec<JsonF64>) -> Vec<f64> {
    v.into_iter().map(|x| x.0).collect()
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CellResultRepr {
    test_error: Vec<JsonF64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    test_error_clipped: Option<Vec<JsonF64>>,
    #[serde(default)]
    train_error: Vec<JsonF64>,
    #[serde(default)]
    diagnostics: BTreeMap<String, Vec<JsonF64>>,
    final_test_error: JsonF64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_test_error_clipped: Option<JsonF64>,
    final_train_error: JsonF64,
    #[serde(default)]
    extra: BTreeMap<String, JsonF64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<String>,
}

impl From<CellResult> for CellResultRepr {
    fn from(r: CellResult) -> Self {
        CellResultRepr {
            test_error: wrap(r.test_error),
            test_error_clipped: r.test_error_clipped.map(wrap),
            train_error: wrap(r.train_error),
            diagnostics: r.diagnostics.into_iter().map(|(k, v)| (k, wrap(v))).collect(),
            final_test_error: JsonF64(r.final_test_error),
            final_test_error_clipped: r.final_test_error_clipped.map(JsonF64),
            final_train_error: JsonF64(r.final_train_error),
            extra: r.extra.into_iter().map(|(k, v)| (k, JsonF64(v))).collect(),
            stop_reason: r.stop_reason,
        }
    }
}

impl From<CellResultRepr> for CellResult {
    fn from(r: CellResultRepr) -> Self {
        CellResult {
            test_error: unwrap(r.test_error),
            test_error_clipped: r.test_error_clipped.map(unwrap),
            train_error: unwrap(r.train_error),
            diagnostics: r.diagnostics.into_iter().map(|(k, v)| (k, unwrap(v))).collect(),
            final_test_error: r.final_test_error.0,
            final_test_error_clipped: r.final_test_error_clipped.map(|x| x.0),
            final_train_error: r.final_train_error.0,
            extra: r.extra.into_iter().map(|(k, v)| (k, v.0)).collect(),
            stop_reason: r.stop_reason,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Results directory.

pub(crate) const SPEC_FILE: &str = "spec.json";
pub(crate) const CELLS_DIR: &str = "cells";
pub(crate) const MERGED_FILE: &str = "results.jsonl";

#[derive(Serialize, Deserialize)]
struct StoredSpec {
    format: u32,
    spec_hash: String,
    spec: ExperimentSpec,
}

/// File name of a cell record: the key with characters outside `[A-Za-z0-9._=-]` replaced by
/// `_`, cut to 120 bytes, plus the key's FNV-1a hash (names stay unique and short enough).
pub(crate) fn cell_file_name(key: &str) -> String {
    let safe: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '=' | '-') { c } else { '_' })
        .take(120)
        .collect();
    format!("{safe}-{:016x}.json", fnv1a(FNV_OFFSET, key.as_bytes()))
}

fn read_records(cells_dir: &Path) -> Result<Vec<CellRecord>> {
    let mut records = Vec::new();
    let entries = match std::fs::read_dir(cells_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(records),
        Err(e) => return Err(Error::io(cells_dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(cells_dir, e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let record: CellRecord = serde_json::from_str(&text).map_err(|e| Error::Parse {
            file: path.display().to_string(),
            line: e.line(),
            column: None,
            message: format!("not a cell record: {e}"),
        })?;
        records.push(record);
    }
    records.sort_by(|a, b| a.index.cmp(&b.index).then_with(|| a.key.cmp(&b.key)));
    for w in records.windows(2) {
        if w[0].key == w[1].key {
            return Err(Error::InvalidData(format!("{}: two records for cell {}", cells_dir.display(), w[0].key)));
        }
    }
    Ok(records)
}

fn read_stored_spec(path: &Path) -> Result<StoredSpec> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let stored: StoredSpec = serde_json::from_str(&text).map_err(|e| Error::Parse {
        file: path.display().to_string(),
        line: e.line(),
        column: None,
        message: format!("not a boostlab experiment spec record: {e}"),
    })?;
    if stored.format != RESULTS_FORMAT {
        return Err(Error::InvalidData(format!(
            "{}: results format {}, this version reads format {RESULTS_FORMAT}",
            path.display(),
            stored.format
        )));
    }
    Ok(stored)
}

/// Loads a results directory: its stored spec and every recorded cell, in cell order.
pub fn load_results(results_dir: &Path) -> Result<ExperimentResults> {
    let stored = read_stored_spec(&results_dir.join(SPEC_FILE))?;
    let records = read_records(&results_dir.join(CELLS_DIR))?;
    Ok(ExperimentResults { spec: stored.spec, spec_hash: stored.spec_hash, records })
}

/// Prepares `results_dir` for `spec`: creates it and `spec.json`, or checks that an existing one
/// was created by the same spec; removes temporary files left by a killed run.
fn prepare_dir(spec: &ExperimentSpec, results_dir: &Path) -> Result<PathBuf> {
    let hash = spec.spec_hash()?;
    let cells_dir = results_dir.join(CELLS_DIR);
    std::fs::create_dir_all(&cells_dir).map_err(|e| Error::io(&cells_dir, e))?;
    let spec_path = results_dir.join(SPEC_FILE);
    if spec_path.exists() {
        let stored = read_stored_spec(&spec_path)?;
        if stored.spec_hash != hash {
            return Err(Error::InvalidParam {
                name: "results_dir",
                expected: format!(
                    "a results directory of this spec (hash {hash}); {} was created by a different \
                     spec (hash {}, experiment {:?}) — use a new directory, or restore that spec to resume",
                    results_dir.display(),
                    stored.spec_hash,
                    stored.spec.name
                ),
                got: results_dir.display().to_string(),
            });
        }
    } else {
        if !read_records(&cells_dir)?.is_empty() {
            return Err(Error::InvalidData(format!(
                "{} holds cell records but no {SPEC_FILE}; refusing to mix experiments",
                results_dir.display()
            )));
        }
        let stored = StoredSpec { format: RESULTS_FORMAT, spec_hash: hash, spec: spec.clone() };
        let json = serde_json::to_string_pretty(&stored).map_err(|e| Error::InvalidData(format!("spec: {e}")))?;
        write_atomic(&spec_path, json.as_bytes())?;
    }
    // Temporary files can only come from a killed run (one process per directory).
    let entries = std::fs::read_dir(&cells_dir).map_err(|e| Error::io(&cells_dir, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(TMP_SUFFIX) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(cells_dir)
}

fn write_merged(results_dir: &Path, records: &[CellRecord]) -> Result<()> {
    let mut out = String::new();
    for r in records {
        let line = serde_json::to_string(r).map_err(|e| Error::InvalidData(format!("record {}: {e}", r.key)))?;
        out.push_str(&line);
        out.push('\n');
    }
    write_atomic(&results_dir.join(MERGED_FILE), out.as_bytes())
}

/// A results directory opened for writing by one run: `spec.json` checked (or created), stray
/// temporary files of a killed run removed, and the cells already recorded known. Every runner —
/// the local pool ([`super::run_experiment`]) and the Dask client (`boostlab.experiment`) — writes
/// through it, so records, atomicity and resume are the same whatever ran the cells.
#[derive(Debug)]
pub struct ResultsDir {
    dir: PathBuf,
    cells_dir: PathBuf,
    done: HashSet<String>,
}

impl ResultsDir {
    /// Opens `results_dir` for `spec` (whose expansion is `cells`): creates it and `spec.json`,
    /// or checks that an existing directory was created by the same spec and that its records
    /// are cells of it.
    pub fn open(spec: &ExperimentSpec, results_dir: &Path, cells: &[Cell]) -> Result<ResultsDir> {
        let cells_dir = prepare_dir(spec, results_dir)?;
        let by_key: HashMap<&str, &Cell> = cells.iter().map(|c| (c.key.as_str(), c)).collect();
        let mut done = HashSet::new();
        for r in &read_records(&cells_dir)? {
            match by_key.get(r.key.as_str()) {
                Some(c) if c.index == r.index => {
                    done.insert(r.key.clone());
                }
                _ => {
                    return Err(Error::InvalidData(format!(
                        "{}: record for cell {} (index {}) does not match the spec's cells (fold file changed?)",
                        cells_dir.display(),
                        r.key,
                        r.index
                    )))
                }
            }
        }
        Ok(ResultsDir { dir: results_dir.to_path_buf(), cells_dir, done })
    }

    /// True when the cell with this key was recorded before this directory was opened.
    pub fn is_recorded(&self, key: &str) -> bool {
        self.done.contains(key)
    }

    /// Number of cells recorded before this directory was opened.
    pub fn n_recorded(&self) -> usize {
        self.done.len()
    }

    /// Writes one cell's record atomically (a temporary file, fsync, rename, directory fsync).
    pub fn write_record(&self, record: &CellRecord) -> Result<()> {
        let json =
            serde_json::to_string(record).map_err(|e| Error::InvalidData(format!("record {}: {e}", record.key)))?;
        write_atomic(&self.cells_dir.join(cell_file_name(&record.key)), format!("{json}\n").as_bytes())
    }

    /// Rewrites `results.jsonl` from every record in the directory, in cell order.
    pub fn write_merged(&self) -> Result<()> {
        write_merged(&self.dir, &read_records(&self.cells_dir)?)
    }
}

impl Cell {
    /// The record of this cell with this result.
    pub fn record(&self, result: CellResult) -> CellRecord {
        CellRecord {
            index: self.index,
            key: self.key.clone(),
            dataset: self.dataset.name.clone(),
            setting: self.setting.clone(),
            noise: self.noise,
            fold: self.fold,
            seed: self.seed,
            result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_values_round_trip() {
        let mut r = CellResult::from_curves(vec![0.1, f64::NAN], None, vec![]);
        r.diagnostics.insert("z".into(), vec![f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e-300]);
        r.stop_reason = Some("perfect".into());
        let json = serde_json::to_string(&r).expect("ser");
        assert!(json.contains("\"NaN\"") && json.contains("\"-inf\""), "{json}");
        let back: CellResult = serde_json::from_str(&json).expect("de");
        assert!(back.final_test_error.is_nan() && back.final_train_error.is_nan());
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.test_error), bits(&r.test_error));
        assert_eq!(bits(&back.diagnostics["z"]), bits(&r.diagnostics["z"]));
        assert_eq!(back.stop_reason, r.stop_reason);
        assert!(serde_json::from_str::<CellResult>("{\"test_error\": [\"nan\"]}").is_err());
    }

    #[test]
    fn cell_file_names_are_safe() {
        let n = cell_file_name("d/x|tada[t=0.5]|noise=0.1|fold=3");
        assert!(n.starts_with("d_x_tada_t=0.5__noise=0.1_fold=3-") && n.ends_with(".json"), "{n}");
        let long = "x".repeat(500);
        assert!(cell_file_name(&long).len() < 150);
    }
}
