//! The experiment harness core (SPEC §7): a TOML spec expanded into cells, run in parallel through
//! a caller-supplied closure, recorded durably, resumable, and summarised into report tables.
//!
//! The harness does not know how a model is trained: [`run_experiment`] takes a
//! `run_cell: Fn(&Cell) -> Result<CellResult>` closure (the CLI supplies one that loads the
//! dataset, splits the fold, adds label noise and boosts). Everything a cell needs to be
//! reproducible — its parameters, fold, noise rate and seeds — is in the [`Cell`].
//!
//! # Spec format
//!
//! ```toml
//! name = "tada-table2"
//! seed = 42                 # default 0
//! folds = 10                # default 10; a dataset may override it or give a fold_file
//! noise = [0.0, 0.1]        # default [0.0]; each in [0, 1]
//! reference = "adaboost"    # optional: the setting others are compared to in the report
//!
//! [params]                  # optional defaults for every cell
//! rounds = 20
//! max_nodes = 15
//!
//! [[datasets]]
//! name = "sonar"
//! path = "datasets/sonar.csv"      # relative paths are relative to the spec file
//! label = "class"                  # optional
//!
//! [[datasets]]
//! name = "adult"
//! path = "datasets/adult.csv"
//! max_rows = 50000                 # optional
//! fold_file = "folds/adult.txt"    # optional: one fold id per data row (see folds.rs)
//! params = { max_nodes = 5 }       # optional: overrides for this dataset
//!
//! [[settings]]
//! name = "adaboost"
//! algo = "tada"                    # every key other than name/grid is a parameter
//! t = 1.0
//!
//! [[settings]]
//! name = "tada"
//! algo = "tada"
//! grid = { t = [0.0, 0.6] }        # cartesian product of lists → settings "tada[t=0]", "tada[t=0.6]"
//! ```
//!
//! # Expansion into cells
//!
//! Settings expand first: a setting without `grid` is one setting named `name`; with a grid, one
//! setting per element of the cartesian product of the grid lists (keys in sorted order, the last
//! key varying fastest), named `name[k1=v1,k2=v2]` (strings unquoted, floats in Rust's shortest
//! round-trip form, so `1.0` prints as `1`). A cell's parameters are the spec's `[params]`,
//! overridden by the setting's parameters (fixed and grid), overridden by the dataset's `params`.
//!
//! Cells are dataset × setting × noise × fold, in that nesting order (dataset outermost); the
//! position in that order is [`Cell::index`]. A cell's key is
//! `"{dataset}|{setting}|noise={noise}|fold={fold}"` (noise in Rust's shortest form, fold 0-based).
//!
//! Seeds ([`derive_seed`]): folds use the spec seed itself (the same folds for every setting and
//! noise rate); [`Cell::noise_seed`] = `derive_seed(seed, ["noise", dataset, noise, fold])` (the
//! same noisy labels for every setting, so paired comparisons are fair); [`Cell::seed`] =
//! `derive_seed(seed, ["cell", key])` for anything else the algorithm draws.
//!
//! # Results directory
//!
//! ```text
//! <dir>/spec.json           {"format": 1, "spec_hash": "...", "spec": {...}}
//! <dir>/cells/<name>.json   one CellRecord per finished cell: the source of truth
//! <dir>/results.jsonl       merged view, one CellRecord per line in cell order, rewritten at the
//!                           end of every run
//! ```
//!
//! Each cell record is written to a temporary file in `cells/`, fsynced, then renamed into place
//! (and the directory fsynced), so a kill at any moment leaves either the complete record or none
//! — never a torn line, which an appended `results.jsonl` could leave and a resume would have to
//! repair. Resuming skips every cell whose record exists. `spec.json` stores an FNV-1a hash of the
//! spec's canonical JSON; running a different spec on the directory is refused. A results
//! directory must not be used by two processes at once.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::{write_atomic, TMP_SUFFIX};

use super::folds::{fold_ids_from_file, parse_fold_ids, stratified_fold_ids};
use super::stats::{compare, mean, paired_t_test, sample_std, Comparison};
use crate::error::{Error, Result};

/// Default number of folds (SPEC §7: 10-fold cross-validation).
pub const DEFAULT_FOLDS: usize = 10;

/// Version of the results-directory layout written in `spec.json`.
pub const RESULTS_FORMAT: u32 = 1;

fn default_folds() -> usize {
    DEFAULT_FOLDS
}

fn default_noise() -> Vec<f64> {
    vec![0.0]
}

/// An experiment: datasets × settings × noise rates × folds. Parse it with
/// [`ExperimentSpec::from_file`] or [`ExperimentSpec::from_toml_str`] (which validate it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Experiment name (free text, used in reports).
    pub name: String,
    /// Master seed; every other seed derives from it. Default 0; any `u64` (TOML: 0..=2^63−1).
    #[serde(default)]
    pub seed: u64,
    /// Number of stratified folds k for datasets without their own. Default 10; valid `≥ 2`.
    #[serde(default = "default_folds")]
    pub folds: usize,
    /// Label-noise rates η applied to the training folds. Default `[0.0]`; each in `[0, 1]`,
    /// distinct, at least one.
    #[serde(default = "default_noise")]
    pub noise: Vec<f64>,
    /// The setting (expanded name) that the report compares every other setting to. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Parameters shared by every cell (lowest precedence). Default empty.
    #[serde(default)]
    pub params: toml::Table,
    /// The datasets, at least one, with distinct names.
    pub datasets: Vec<DatasetSpec>,
    /// The algorithm settings, at least one, with distinct expanded names.
    pub settings: Vec<SettingSpec>,
    /// Directory that relative dataset and fold-file paths are relative to (the spec file's
    /// directory when read with [`ExperimentSpec::from_file`]). Not part of the spec hash.
    /// Default none (paths are used as written).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

/// One dataset of an experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// Name used in keys and reports: non-empty, no `|` and no control characters.
    pub name: String,
    /// Data file; relative paths are relative to [`ExperimentSpec::base_dir`].
    pub path: PathBuf,
    /// Label column (interpreted by the cell runner). Default none (the runner's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Upper bound on the rows used; how rows are chosen is the cell runner's (documented)
    /// choice. Default none (all rows); valid `≥ 2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rows: Option<usize>,
    /// Number of stratified folds for this dataset. Default: the spec's `folds`; valid `≥ 2`.
    /// Not allowed together with `fold_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folds: Option<usize>,
    /// A user-given fold assignment (one id per data row, see
    /// [`fold_ids_from_file`]); k is read from it. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fold_file: Option<PathBuf>,
    /// Parameter overrides for this dataset (highest precedence), e.g. `{ max_nodes = 5 }`.
    /// Default empty.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub params: toml::Table,
}

/// A named algorithm setting: free-form parameters plus an optional grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingSpec {
    /// Base name: non-empty, no `|` and no control characters.
    pub name: String,
    /// Grid: parameter → list of values; the setting expands into the cartesian product.
    /// Default empty (one setting). Lists must be non-empty; a grid key may not also be a fixed
    /// parameter of the same setting.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub grid: BTreeMap<String, Vec<toml::Value>>,
    /// Every other key of the setting's table: fixed parameters (`algo`, `t`, `rounds`, ...),
    /// interpreted by the cell runner.
    #[serde(flatten)]
    pub params: toml::Table,
}

/// A setting after grid expansion.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandedSetting {
    /// Expanded name (`name` or `name[k=v,...]`).
    pub name: String,
    /// The setting's fixed parameters plus this grid point's values.
    pub params: toml::Table,
}

/// Where a cell's fold assignment comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum FoldSource {
    /// Seeded stratified k-fold ([`stratified_fold_ids`]).
    Stratified {
        /// Number of folds.
        k: usize,
        /// Seed (the spec seed).
        seed: u64,
    },
    /// A fold file (path resolved against the spec's directory).
    File(PathBuf),
}

/// One unit of work: a dataset, a setting, a noise rate and a fold.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Position in the expansion order (dataset × setting × noise × fold).
    pub index: usize,
    /// Stable key `"{dataset}|{setting}|noise={noise}|fold={fold}"`.
    pub key: String,
    /// The dataset, with `path` and `fold_file` resolved against the spec's directory.
    pub dataset: DatasetSpec,
    /// Expanded setting name.
    pub setting: String,
    /// Merged parameters: spec `[params]` < setting < dataset `params`.
    pub params: toml::Table,
    /// Label-noise rate η for the training fold.
    pub noise: f64,
    /// The test fold, `0..n_folds`.
    pub fold: usize,
    /// Number of folds of this dataset.
    pub n_folds: usize,
    /// How to compute the fold assignment ([`Cell::fold_ids`]).
    pub folds: FoldSource,
    /// Seed for anything the algorithm draws: `derive_seed(spec.seed, ["cell", key])`.
    pub seed: u64,
    /// Seed for the label noise: `derive_seed(spec.seed, ["noise", dataset, noise, fold])`,
    /// shared by all settings.
    pub noise_seed: u64,
}

/// Finished-cell output: per-round curves and final numbers. Non-finite values round-trip through
/// the JSON records (as the strings `"NaN"`, `"inf"`, `"-inf"`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "CellResultRepr", into = "CellResultRepr")]
pub struct CellResult {
    /// Test error after each round.
    pub test_error: Vec<f64>,
    /// Test error of the clipped model after each round, when the algorithm has one (SPEC §5).
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

/// A cell whose runner (or whose record write) failed.
#[derive(Debug)]
pub struct CellFailure {
    /// The cell's key.
    pub key: String,
    /// What went wrong.
    pub error: Error,
}

/// What [`run_experiment`] did.
#[derive(Debug)]
#[must_use = "failed cells are reported here, not as an Err"]
pub struct RunSummary {
    /// Number of cells in the experiment.
    pub total: usize,
    /// Cells already recorded before this run (skipped).
    pub already_done: usize,
    /// Cells run and recorded by this run.
    pub completed: usize,
    /// Cells whose runner failed; they are not recorded and will run again on resume.
    pub failures: Vec<CellFailure>,
}

impl RunSummary {
    /// True when every cell of the experiment is recorded.
    pub fn is_complete(&self) -> bool {
        self.failures.is_empty() && self.already_done + self.completed == self.total
    }
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
// Stable hashing.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stable seed derivation (stable across platforms, Rust versions and runs — unlike `std`'s
/// `DefaultHasher`): FNV-1a 64 over the 8 little-endian bytes of `seed`, then each part's UTF-8
/// bytes followed by the byte 0x1F, finished by the SplitMix64 mixer.
pub fn derive_seed(seed: u64, parts: &[&str]) -> u64 {
    let mut h = fnv1a(FNV_OFFSET, &seed.to_le_bytes());
    for p in parts {
        h = fnv1a(h, p.as_bytes());
        h = fnv1a(h, &[0x1f]);
    }
    splitmix64(h)
}

// ---------------------------------------------------------------------------------------------
// Spec parsing, validation and expansion.

fn toml_error(e: &toml::de::Error, text: &str, file: &str) -> Error {
    let line = e.span().map_or(0, |s| text[..s.start.min(text.len())].matches('\n').count() + 1);
    Error::Parse { file: file.to_string(), line, column: None, message: e.message().to_string() }
}

fn check_name(kind: &'static str, name: &str) -> Result<()> {
    if name.is_empty() || name.contains('|') || name.chars().any(char::is_control) {
        return Err(Error::param(kind, "a non-empty name without '|' or control characters", format!("{name:?}")));
    }
    Ok(())
}

/// A parameter value as it appears in expanded names: strings unquoted, floats in Rust's shortest
/// round-trip form.
fn fmt_value(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => other.to_string(),
    }
}

impl ExperimentSpec {
    /// Parses and validates a spec from TOML text; relative paths stay relative to the current
    /// directory (`base_dir` is none). Errors name the line of a TOML error.
    pub fn from_toml_str(text: &str) -> Result<Self> {
        Self::parse(text, "<spec>")
    }

    /// Reads, parses and validates a spec file; relative paths in it are relative to its directory.
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut spec = Self::parse(&text, &path.display().to_string())?;
        spec.base_dir = Some(path.parent().map_or_else(PathBuf::new, Path::to_path_buf));
        Ok(spec)
    }

    fn parse(text: &str, file: &str) -> Result<Self> {
        let spec: ExperimentSpec = toml::from_str(text).map_err(|e| toml_error(&e, text, file))?;
        spec.validate()?;
        Ok(spec)
    }

    /// Checks names, ranges and uniqueness (called by the parsers and by [`run_experiment`]).
    pub fn validate(&self) -> Result<()> {
        // The name is the default results directory `results/<name>`: a plain file name only, so
        // that `../../x` cannot write outside `results/` (issue 14).
        let plain = !self.name.trim().is_empty()
            && self.name != "."
            && self.name != ".."
            && !self.name.chars().any(|c| c == '/' || c == '\\' || c == ':' || c.is_control());
        if !plain {
            return Err(Error::param(
                "name",
                "a plain file name for the experiment (no '/', '\\', ':', control characters, not '.' or '..')",
                format!("{:?}", crate::error::shown(&self.name)),
            ));
        }
        if self.folds < 2 {
            return Err(Error::param("folds", "an integer ≥ 2", self.folds));
        }
        if self.noise.is_empty() {
            return Err(Error::param("noise", "a non-empty list of rates in [0, 1]", "[]"));
        }
        let mut seen = HashSet::new();
        for &eta in &self.noise {
            if !(0.0..=1.0).contains(&eta) {
                return Err(Error::param("noise", "rates in [0, 1]", eta));
            }
            if !seen.insert(eta.to_string()) {
                return Err(Error::param("noise", "distinct rates", eta));
            }
        }
        if self.datasets.is_empty() {
            return Err(Error::param("datasets", "at least one [[datasets]] entry", "none"));
        }
        let mut names = HashSet::new();
        for d in &self.datasets {
            check_name("datasets.name", &d.name)?;
            if !names.insert(d.name.as_str()) {
                return Err(Error::param("datasets.name", "distinct dataset names", &d.name));
            }
            if let Some(k) = d.folds {
                if k < 2 {
                    return Err(Error::param("datasets.folds", "an integer ≥ 2", k));
                }
                if d.fold_file.is_some() {
                    return Err(Error::param(
                        "datasets.folds",
                        format!("either `folds` or `fold_file` for dataset `{}`, not both", d.name),
                        "both",
                    ));
                }
            }
            if let Some(m) = d.max_rows {
                if m < 2 {
                    return Err(Error::param("datasets.max_rows", "an integer ≥ 2", m));
                }
            }
        }
        if self.settings.is_empty() {
            return Err(Error::param("settings", "at least one [[settings]] entry", "none"));
        }
        let expanded = self.expanded_settings()?;
        if let Some(r) = &self.reference {
            if !expanded.iter().any(|s| &s.name == r) {
                let known: Vec<&str> = expanded.iter().map(|s| s.name.as_str()).collect();
                return Err(Error::param("reference", format!("one of the settings {known:?}"), format!("{r:?}")));
            }
        }
        Ok(())
    }

    /// The settings after grid expansion, in spec order (see the [module docs](self)).
    pub fn expanded_settings(&self) -> Result<Vec<ExpandedSetting>> {
        let mut out = Vec::new();
        let mut names = HashSet::new();
        for s in &self.settings {
            check_name("settings.name", &s.name)?;
            for (key, values) in &s.grid {
                if values.is_empty() {
                    return Err(Error::param(
                        "settings.grid",
                        format!("a non-empty list for `{key}` in setting `{}`", s.name),
                        "[]",
                    ));
                }
                if s.params.contains_key(key) {
                    return Err(Error::param(
                        "settings.grid",
                        format!("`{key}` either fixed or in the grid of setting `{}`, not both", s.name),
                        "both",
                    ));
                }
            }
            // Cartesian product, keys in sorted order, last key fastest.
            let mut points: Vec<Vec<(&String, &toml::Value)>> = vec![Vec::new()];
            for (key, values) in &s.grid {
                points = points
                    .into_iter()
                    .flat_map(|p| {
                        values.iter().map(move |v| {
                            let mut q = p.clone();
                            q.push((key, v));
                            q
                        })
                    })
                    .collect();
            }
            for point in points {
                let mut params = s.params.clone();
                let name = if point.is_empty() {
                    s.name.clone()
                } else {
                    let inner: Vec<String> = point.iter().map(|(k, v)| format!("{k}={}", fmt_value(v))).collect();
                    format!("{}[{}]", s.name, inner.join(","))
                };
                for (k, v) in point {
                    params.insert(k.clone(), v.clone());
                }
                if !names.insert(name.clone()) {
                    return Err(Error::param("settings.name", "distinct expanded setting names", name));
                }
                out.push(ExpandedSetting { name, params });
            }
        }
        Ok(out)
    }

    /// `p` resolved against [`ExperimentSpec::base_dir`] (unchanged if absolute or no base).
    pub fn resolve_path(&self, p: &Path) -> PathBuf {
        match &self.base_dir {
            Some(base) if p.is_relative() => base.join(p),
            _ => p.to_path_buf(),
        }
    }

    /// Hash of the spec's canonical JSON (FNV-1a 64, 16 hex digits); `base_dir` is excluded.
    pub fn spec_hash(&self) -> Result<String> {
        let json = serde_json::to_string(self).map_err(|e| Error::InvalidData(format!("spec: {e}")))?;
        Ok(format!("{:016x}", fnv1a(FNV_OFFSET, json.as_bytes())))
    }

    /// All cells in expansion order. Reads the fold files (to learn their k), nothing else.
    pub fn cells(&self) -> Result<Vec<Cell>> {
        let settings = self.expanded_settings()?;
        let mut cells = Vec::new();
        for d in &self.datasets {
            let mut dataset = d.clone();
            dataset.path = self.resolve_path(&d.path);
            dataset.fold_file = d.fold_file.as_deref().map(|p| self.resolve_path(p));
            let (n_folds, folds) = match &dataset.fold_file {
                Some(path) => {
                    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
                    let ids = parse_fold_ids(&text, &path.display().to_string())?;
                    (super::folds::n_folds(&ids), FoldSource::File(path.clone()))
                }
                None => {
                    let k = d.folds.unwrap_or(self.folds);
                    (k, FoldSource::Stratified { k, seed: self.seed })
                }
            };
            for s in &settings {
                // Precedence (module docs): spec params < setting params < dataset params.
                let mut params = self.params.clone();
                params.extend(s.params.clone());
                params.extend(d.params.clone());
                for &noise in &self.noise {
                    let noise_str = noise.to_string();
                    for fold in 0..n_folds {
                        let key = format!("{}|{}|noise={noise_str}|fold={fold}", d.name, s.name);
                        let fold_str = fold.to_string();
                        cells.push(Cell {
                            index: cells.len(),
                            seed: derive_seed(self.seed, &["cell", &key]),
                            noise_seed: derive_seed(self.seed, &["noise", &d.name, &noise_str, &fold_str]),
                            key,
                            dataset: dataset.clone(),
                            setting: s.name.clone(),
                            params: params.clone(),
                            noise,
                            fold,
                            n_folds,
                            folds: folds.clone(),
                        });
                    }
                }
            }
        }
        Ok(cells)
    }
}

// ---------------------------------------------------------------------------------------------
// Cells.

impl Cell {
    /// The fold assignment of this cell's dataset for rows with these labels (any ordered label
    /// type; for ±1 labels pass e.g. `y > 0.0`). Stratified folds use the spec seed; a fold file
    /// must have one id per row and the k seen at expansion.
    pub fn fold_ids<L: Ord>(&self, labels: &[L]) -> Result<Vec<usize>> {
        match &self.folds {
            FoldSource::Stratified { k, seed } => stratified_fold_ids(labels, *k, *seed),
            FoldSource::File(path) => {
                let ids = fold_ids_from_file(path, labels.len())?;
                let k = super::folds::n_folds(&ids);
                if k != self.n_folds {
                    return Err(Error::InvalidData(format!(
                        "{}: {k} folds, but {} when the experiment was expanded (file changed?)",
                        path.display(),
                        self.n_folds
                    )));
                }
                Ok(ids)
            }
        }
    }

    /// The raw value of a parameter, if set.
    pub fn param(&self, name: &str) -> Option<&toml::Value> {
        self.params.get(name)
    }

    fn param_error(&self, name: &str, what: &str, v: &toml::Value) -> Error {
        Error::InvalidParam {
            name: "params",
            expected: format!("`{name}` to be {what} (cell {})", self.key),
            got: v.to_string(),
        }
    }

    /// A numeric parameter (TOML float or integer), if set.
    pub fn param_f64(&self, name: &str) -> Result<Option<f64>> {
        match self.param(name) {
            None => Ok(None),
            Some(toml::Value::Float(f)) => Ok(Some(*f)),
            Some(toml::Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(v) => Err(self.param_error(name, "a number", v)),
        }
    }

    /// A non-negative integer parameter, if set.
    pub fn param_usize(&self, name: &str) -> Result<Option<usize>> {
        match self.param(name) {
            None => Ok(None),
            Some(v @ toml::Value::Integer(i)) => {
                usize::try_from(*i).map(Some).map_err(|_| self.param_error(name, "a non-negative integer", v))
            }
            Some(v) => Err(self.param_error(name, "a non-negative integer", v)),
        }
    }

    /// A boolean parameter, if set.
    pub fn param_bool(&self, name: &str) -> Result<Option<bool>> {
        match self.param(name) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.param_error(name, "a boolean", v)),
        }
    }

    /// A string parameter, if set.
    pub fn param_str(&self, name: &str) -> Result<Option<&str>> {
        match self.param(name) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.param_error(name, "a string", v)),
        }
    }

    fn record(&self, result: CellResult) -> CellRecord {
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

const SPEC_FILE: &str = "spec.json";
const CELLS_DIR: &str = "cells";
const MERGED_FILE: &str = "results.jsonl";

#[derive(Serialize, Deserialize)]
struct StoredSpec {
    format: u32,
    spec_hash: String,
    spec: ExperimentSpec,
}

/// File name of a cell record: the key with characters outside `[A-Za-z0-9._=-]` replaced by
/// `_`, cut to 120 bytes, plus the key's FNV-1a hash (names stay unique and short enough).
fn cell_file_name(key: &str) -> String {
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

/// Runs every cell of `spec` not yet recorded in `results_dir`, in parallel, recording each
/// finished cell durably (see the [module docs](self) for the layout).
///
/// - `threads`: worker threads for the cells (and for any rayon work inside `run_cell`); 0 means
///   rayon's default (all logical CPUs, or `RAYON_NUM_THREADS`). Default 0; any value.
/// - `run_cell`: computes one cell. It must be a deterministic function of the cell for results
///   to be reproducible; the harness adds nothing time- or order-dependent to the records.
/// - `progress(done, total)`: called once before any cell runs (with the already-recorded
///   count) and after every finished or failed cell, from worker threads.
///
/// A cell whose runner returns an error is not recorded; the run continues with the other cells
/// and the failure is listed in [`RunSummary::failures`] (resume retries it). `Err` is returned
/// only for harness problems: an invalid spec, an unreadable or foreign results directory, or a
/// spec different from the one that created the directory. A panic in `run_cell` propagates
/// (cells recorded before it stay recorded). `results.jsonl` is rewritten at the end.
pub fn run_experiment<F, P>(
    spec: &ExperimentSpec,
    results_dir: &Path,
    threads: usize,
    run_cell: F,
    progress: P,
) -> Result<RunSummary>
where
    F: Fn(&Cell) -> Result<CellResult> + Sync,
    P: Fn(usize, usize) + Sync,
{
    spec.validate()?;
    let cells = spec.cells()?;
    let cells_dir = prepare_dir(spec, results_dir)?;
    let by_key: HashMap<&str, &Cell> = cells.iter().map(|c| (c.key.as_str(), c)).collect();
    let existing = read_records(&cells_dir)?;
    let mut done = HashSet::new();
    for r in &existing {
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
    let total = cells.len();
    let pending: Vec<&Cell> = cells.iter().filter(|c| !done.contains(&c.key)).collect();
    let already_done = total - pending.len();
    progress(already_done, total);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::param("threads", "a number of threads the system can start", e))?;
    let finished = AtomicUsize::new(already_done);
    let completed = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    pool.install(|| {
        pending.par_iter().with_max_len(1).for_each(|cell| {
            let outcome = run_cell(cell).and_then(|result| {
                let record = cell.record(result);
                let json = serde_json::to_string(&record)
                    .map_err(|e| Error::InvalidData(format!("record {}: {e}", cell.key)))?;
                write_atomic(&cells_dir.join(cell_file_name(&cell.key)), format!("{json}\n").as_bytes())
            });
            match outcome {
                Ok(()) => {
                    completed.fetch_add(1, Ordering::Relaxed);
                }
                Err(error) => {
                    if let Ok(mut f) = failures.lock() {
                        f.push(CellFailure { key: cell.key.clone(), error });
                    }
                }
            }
            progress(finished.fetch_add(1, Ordering::Relaxed) + 1, total);
        });
    });
    let mut failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    let index: HashMap<&str, usize> = cells.iter().map(|c| (c.key.as_str(), c.index)).collect();
    failures.sort_by_key(|f| index.get(f.key.as_str()).copied().unwrap_or(usize::MAX));
    write_merged(results_dir, &read_records(&cells_dir)?)?;
    Ok(RunSummary { total, already_done, completed: completed.into_inner(), failures })
}

// ---------------------------------------------------------------------------------------------
// Report computations.

/// Which final error a summary or comparison uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Measure {
    /// [`CellResult::final_test_error`].
    TestError,
    /// [`CellResult::final_test_error_clipped`]. A candidate without a clipped model is left out;
    /// a reference without one uses its unclipped error (at t = 1, δ = ∞, the models coincide,
    /// SPEC §5).
    TestErrorClipped,
}

impl Measure {
    fn label(self) -> &'static str {
        match self {
            Measure::TestError => "test error",
            Measure::TestErrorClipped => "clipped test error",
        }
    }

    fn value(self, r: &CellResult, is_reference: bool) -> Option<f64> {
        match self {
            Measure::TestError => Some(r.final_test_error),
            Measure::TestErrorClipped if is_reference => Some(r.final_test_error_clipped.unwrap_or(r.final_test_error)),
            Measure::TestErrorClipped => r.final_test_error_clipped,
        }
    }
}

/// Mean ± sample standard deviation over folds of one (dataset, setting, noise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SummaryRow {
    /// Dataset name.
    pub dataset: String,
    /// Setting name.
    pub setting: String,
    /// Noise rate.
    pub noise: f64,
    /// Number of recorded folds.
    pub n_folds: usize,
    /// Mean final test error.
    pub test_mean: f64,
    /// Standard deviation of the final test error.
    pub test_std: f64,
    /// Mean and standard deviation of the final clipped test error, when every fold has one.
    pub clipped: Option<(f64, f64)>,
    /// Mean final training error.
    pub train_mean: f64,
    /// Standard deviation of the final training error.
    pub train_std: f64,
}

/// One paired t-test of a setting against the reference on one dataset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedDetail {
    /// Dataset name.
    pub dataset: String,
    /// Candidate setting.
    pub setting: String,
    /// Noise rate.
    pub noise: f64,
    /// Which error was compared.
    pub measure: Measure,
    /// Folds present for both.
    pub n_pairs: usize,
    /// Candidate's mean error over those folds.
    pub mean: f64,
    /// Reference's mean error over those folds.
    pub reference_mean: f64,
    /// t statistic (candidate − reference).
    pub t: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Outcome at the report's α.
    pub outcome: Comparison,
}

/// Better / equivalent / worse counts over datasets for one setting and noise rate (the paper's
/// Table 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonCounts {
    /// Candidate setting.
    pub setting: String,
    /// Noise rate.
    pub noise: f64,
    /// Which error was compared.
    pub measure: Measure,
    /// Datasets where the candidate is significantly better.
    pub better: usize,
    /// Datasets with no significant difference.
    pub equivalent: usize,
    /// Datasets where the candidate is significantly worse.
    pub worse: usize,
    /// Datasets left out: fewer than 2 paired folds, or a non-finite error.
    pub skipped: usize,
}

/// A per-round curve averaged over folds for one (dataset, setting, noise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeanCurve {
    /// Dataset name.
    pub dataset: String,
    /// Setting name.
    pub setting: String,
    /// Noise rate.
    pub noise: f64,
    /// Curve name (`test_error`, `test_error_clipped`, `train_error` or a diagnostic).
    pub curve: String,
    /// Number of folds averaged.
    pub n_folds: usize,
    /// Mean per round. A fold that stopped early keeps its last value for later rounds (its
    /// model no longer changes).
    pub mean: Vec<f64>,
    /// Sample standard deviation per round (same convention).
    pub std: Vec<f64>,
}

/// Options of [`build_report`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportOptions {
    /// Reference setting for the paired comparisons. Default none (no comparisons).
    pub reference: Option<String>,
    /// Significance level of the two-sided paired t-test. Default 0.1 (SPEC §7); valid `(0, 1]`.
    pub alpha: f64,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions { reference: None, alpha: 0.1 }
    }
}

/// Everything [`render_markdown`] prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Options used.
    pub options: ReportOptions,
    /// Summary rows in cell order.
    pub summary: Vec<SummaryRow>,
    /// Counts per (measure, noise, setting), for every non-reference setting.
    pub comparisons: Vec<ComparisonCounts>,
    /// The individual tests behind the counts.
    pub details: Vec<PairedDetail>,
    /// Mean curves of `test_error`, `test_error_clipped` (where present) and `train_error`.
    pub curves: Vec<MeanCurve>,
}

/// Distinct values in order of first appearance (records are in cell order).
fn ordered<'a, T: PartialEq + Clone + 'a>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for it in items {
        if !out.contains(&it) {
            out.push(it);
        }
    }
    out
}

struct Groups<'a> {
    datasets: Vec<&'a str>,
    settings: Vec<&'a str>,
    noises: Vec<f64>,
}

impl<'a> Groups<'a> {
    fn new(records: &'a [CellRecord]) -> Self {
        let mut sorted: Vec<&CellRecord> = records.iter().collect();
        sorted.sort_by_key(|r| r.index);
        Groups {
            datasets: ordered(sorted.iter().map(|r| r.dataset.as_str())),
            settings: ordered(sorted.iter().map(|r| r.setting.as_str())),
            noises: ordered(sorted.iter().map(|r| r.noise)),
        }
    }
}

/// The records of one (dataset, setting, noise), sorted by fold.
fn group<'a>(records: &'a [CellRecord], dataset: &str, setting: &str, noise: f64) -> Vec<&'a CellRecord> {
    let mut g: Vec<&CellRecord> =
        records.iter().filter(|r| r.dataset == dataset && r.setting == setting && r.noise == noise).collect();
    g.sort_by_key(|r| r.fold);
    g
}

/// Mean ± std of the final errors per (dataset, setting, noise), in cell order.
pub fn summarize(records: &[CellRecord]) -> Vec<SummaryRow> {
    let groups = Groups::new(records);
    let mut rows = Vec::new();
    for &d in &groups.datasets {
        for &s in &groups.settings {
            for &noise in &groups.noises {
                let g = group(records, d, s, noise);
                if g.is_empty() {
                    continue;
                }
                let test: Vec<f64> = g.iter().map(|r| r.result.final_test_error).collect();
                let train: Vec<f64> = g.iter().map(|r| r.result.final_train_error).collect();
                let clipped: Option<Vec<f64>> = g.iter().map(|r| r.result.final_test_error_clipped).collect();
                rows.push(SummaryRow {
                    dataset: d.to_string(),
                    setting: s.to_string(),
                    noise,
                    n_folds: g.len(),
                    test_mean: mean(&test),
                    test_std: sample_std(&test),
                    clipped: clipped.map(|c| (mean(&c), sample_std(&c))),
                    train_mean: mean(&train),
                    train_std: sample_std(&train),
                });
            }
        }
    }
    rows
}

/// Paired comparisons of every setting against `reference` for `measure`, per noise rate: each
/// dataset is a two-sided paired t-test over the folds both have (see [`compare`]), counted as
/// better / equivalent / worse at level `alpha` (lower error is better). Returns the counts (per
/// noise, then setting, in cell order) and the individual tests.
pub fn compare_to_reference(
    records: &[CellRecord],
    reference: &str,
    measure: Measure,
    alpha: f64,
) -> Result<(Vec<ComparisonCounts>, Vec<PairedDetail>)> {
    if !(alpha > 0.0 && alpha <= 1.0) {
        return Err(Error::param("alpha", "a significance level in (0, 1]", alpha));
    }
    let groups = Groups::new(records);
    if !groups.settings.contains(&reference) {
        return Err(Error::param(
            "reference",
            format!("one of the recorded settings {:?}", groups.settings),
            format!("{reference:?}"),
        ));
    }
    let mut counts = Vec::new();
    let mut details = Vec::new();
    for &noise in &groups.noises {
        for &s in groups.settings.iter().filter(|&&s| s != reference) {
            let mut c = ComparisonCounts {
                setting: s.to_string(),
                noise,
                measure,
                better: 0,
                equivalent: 0,
                worse: 0,
                skipped: 0,
            };
            let mut any_value = false;
            for &d in &groups.datasets {
                let cand: BTreeMap<usize, f64> = group(records, d, s, noise)
                    .iter()
                    .filter_map(|r| measure.value(&r.result, false).map(|v| (r.fold, v)))
                    .collect();
                let refs: BTreeMap<usize, f64> = group(records, d, reference, noise)
                    .iter()
                    .filter_map(|r| measure.value(&r.result, true).map(|v| (r.fold, v)))
                    .collect();
                any_value |= !cand.is_empty();
                let (a, b): (Vec<f64>, Vec<f64>) =
                    cand.iter().filter_map(|(f, &v)| refs.get(f).map(|&w| (v, w))).unzip();
                let test = if a.len() >= 2 { paired_t_test(&a, &b).ok() } else { None };
                let (Some(test), Ok(outcome)) = (test, compare(&a, &b, alpha)) else {
                    if !cand.is_empty() || !refs.is_empty() {
                        c.skipped += 1;
                    }
                    continue;
                };
                match outcome {
                    Comparison::Better => c.better += 1,
                    Comparison::Equivalent => c.equivalent += 1,
                    Comparison::Worse => c.worse += 1,
                }
                details.push(PairedDetail {
                    dataset: d.to_string(),
                    setting: s.to_string(),
                    noise,
                    measure,
                    n_pairs: a.len(),
                    mean: mean(&a),
                    reference_mean: mean(&b),
                    t: test.t,
                    p: test.p,
                    outcome,
                });
            }
            if any_value {
                counts.push(c);
            }
        }
    }
    Ok((counts, details))
}

/// Mean (and std) over folds, per round, of one curve: `test_error`, `test_error_clipped`,
/// `train_error` or a diagnostic name. Groups where no fold has the curve are left out; a fold
/// whose curve is shorter (early stop) keeps its last value, a fold without the curve is left out.
pub fn mean_curves(records: &[CellRecord], curve: &str) -> Vec<MeanCurve> {
    let groups = Groups::new(records);
    let pick = |r: &'_ CellResult| -> Option<Vec<f64>> {
        match curve {
            "test_error" => Some(r.test_error.clone()),
            "test_error_clipped" => r.test_error_clipped.clone(),
            "train_error" => Some(r.train_error.clone()),
            other => r.diagnostics.get(other).cloned(),
        }
    };
    let mut out = Vec::new();
    for &d in &groups.datasets {
        for &s in &groups.settings {
            for &noise in &groups.noises {
                let series: Vec<Vec<f64>> = group(records, d, s, noise)
                    .iter()
                    .filter_map(|r| pick(&r.result))
                    .filter(|v| !v.is_empty())
                    .collect();
                let rounds = series.iter().map(Vec::len).max().unwrap_or(0);
                if rounds == 0 {
                    continue;
                }
                let (mut m, mut sd) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
                for j in 0..rounds {
                    let col: Vec<f64> = series.iter().map(|v| v[j.min(v.len() - 1)]).collect();
                    m.push(mean(&col));
                    sd.push(sample_std(&col));
                }
                out.push(MeanCurve {
                    dataset: d.to_string(),
                    setting: s.to_string(),
                    noise,
                    curve: curve.to_string(),
                    n_folds: series.len(),
                    mean: m,
                    std: sd,
                });
            }
        }
    }
    out
}

/// Summary, comparisons (both measures when any cell has a clipped model) and mean curves.
pub fn build_report(records: &[CellRecord], options: &ReportOptions) -> Result<Report> {
    let has_clipped = records.iter().any(|r| r.result.final_test_error_clipped.is_some());
    let mut comparisons = Vec::new();
    let mut details = Vec::new();
    if let Some(reference) = &options.reference {
        let mut measures = vec![Measure::TestError];
        if has_clipped {
            measures.push(Measure::TestErrorClipped);
        }
        for m in measures {
            let (c, d) = compare_to_reference(records, reference, m, options.alpha)?;
            comparisons.extend(c);
            details.extend(d);
        }
    } else if !(options.alpha > 0.0 && options.alpha <= 1.0) {
        return Err(Error::param("alpha", "a significance level in (0, 1]", options.alpha));
    }
    let mut curves = mean_curves(records, "test_error");
    if has_clipped {
        curves.extend(mean_curves(records, "test_error_clipped"));
    }
    curves.extend(mean_curves(records, "train_error"));
    Ok(Report { options: options.clone(), summary: summarize(records), comparisons, details, curves })
}

fn pm(m: f64, s: f64) -> String {
    format!("{m:.4} ± {s:.4}")
}

/// Renders the summary and comparison tables as GitHub-flavoured Markdown (curves are data for
/// plots and are not printed).
pub fn render_markdown(report: &Report) -> String {
    let mut out = String::new();
    let has_clipped = report.summary.iter().any(|r| r.clipped.is_some());
    let _ = writeln!(out, "## Final error (mean ± std over folds)\n");
    if has_clipped {
        let _ = writeln!(out, "| dataset | setting | noise | folds | test error | clipped test error | train error |");
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|");
    } else {
        let _ = writeln!(out, "| dataset | setting | noise | folds | test error | train error |");
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    }
    for r in &report.summary {
        let clipped = match (has_clipped, r.clipped) {
            (false, _) => String::new(),
            (true, Some((m, s))) => format!(" {} |", pm(m, s)),
            (true, None) => " — |".to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |{clipped} {} |",
            r.dataset,
            r.setting,
            r.noise,
            r.n_folds,
            pm(r.test_mean, r.test_std),
            pm(r.train_mean, r.train_std)
        );
    }
    if let Some(reference) = &report.options.reference {
        let _ = writeln!(out, "\n## Paired t-test against `{reference}` (two-sided, p < {})\n", report.options.alpha);
        let _ = writeln!(out, "| setting | noise | measure | better | equivalent | worse | skipped |");
        let _ = writeln!(out, "|---|---:|---|---:|---:|---:|---:|");
        for c in &report.comparisons {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} |",
                c.setting,
                c.noise,
                c.measure.label(),
                c.better,
                c.equivalent,
                c.worse,
                c.skipped
            );
        }
        if !report.details.is_empty() {
            let _ = writeln!(out, "\n### Per dataset\n");
            let _ =
                writeln!(out, "| dataset | setting | noise | measure | folds | mean | reference | t | p | outcome |");
            let _ = writeln!(out, "|---|---|---:|---|---:|---:|---:|---:|---:|---|");
            for d in &report.details {
                let outcome = match d.outcome {
                    Comparison::Better => "better",
                    Comparison::Equivalent => "equivalent",
                    Comparison::Worse => "worse",
                };
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {:.4} | {:.4} | {:.3} | {:.4} | {outcome} |",
                    d.dataset,
                    d.setting,
                    d.noise,
                    d.measure.label(),
                    d.n_pairs,
                    d.mean,
                    d.reference_mean,
                    d.t,
                    d.p
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const SPEC: &str = r#"
name = "small"
seed = 7
folds = 3
noise = [0.0, 0.1]
reference = "base"

[params]
rounds = 5
max_nodes = 15

[[datasets]]
name = "d1"
path = "data/d1.csv"
label = "y"

[[datasets]]
name = "d2"
path = "/abs/d2.csv"
folds = 2
params = { max_nodes = 5 }

[[settings]]
name = "base"
algo = "adaboost"

[[settings]]
name = "tada"
algo = "tada"
max_nodes = 7
grid = { t = [0.0, 0.5], clipped = [true, false] }
"#;

    #[test]
    fn derive_seed_is_pinned() {
        // Values computed independently (Python: FNV-1a 64 + SplitMix64 as documented).
        assert_eq!(derive_seed(0, &[]), 6_603_144_262_649_002_859);
        assert_eq!(derive_seed(42, &["cell", "iris|ada|noise=0.1|fold=3"]), 7_187_896_504_034_626_209);
        assert_eq!(derive_seed(7, &["noise", "iris", "0.1", "3"]), 10_838_659_984_574_544_593);
        assert_eq!(fnv1a(FNV_OFFSET, b"hello"), 0xa430_d846_80aa_bd0b);
    }

    #[test]
    fn parse_and_expand() {
        let spec = ExperimentSpec::from_toml_str(SPEC).expect("valid spec");
        let names: Vec<String> = spec.expanded_settings().expect("ok").into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "base",
                "tada[clipped=true,t=0]",
                "tada[clipped=true,t=0.5]",
                "tada[clipped=false,t=0]",
                "tada[clipped=false,t=0.5]"
            ]
        );
        let cells = spec.cells().expect("cells");
        // d1: 5 settings × 2 noise × 3 folds; d2: 5 × 2 × 2.
        assert_eq!(cells.len(), 30 + 20);
        assert!(cells.iter().enumerate().all(|(i, c)| c.index == i));
        assert_eq!(cells[0].key, "d1|base|noise=0|fold=0");
        assert_eq!(cells[29].key, "d1|tada[clipped=false,t=0.5]|noise=0.1|fold=2");
        assert_eq!(cells[49].key, "d2|tada[clipped=false,t=0.5]|noise=0.1|fold=1");
        let keys: HashSet<&str> = cells.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys.len(), cells.len());
        let seeds: HashSet<u64> = cells.iter().map(|c| c.seed).collect();
        assert_eq!(seeds.len(), cells.len());
        assert_eq!(cells[0].seed, derive_seed(7, &["cell", "d1|base|noise=0|fold=0"]));
        // Parameter precedence: spec < setting < dataset.
        let c = &cells[10]; // d1, tada[clipped=true,t=0], noise 0.1, fold 1
        assert_eq!(c.key, "d1|tada[clipped=true,t=0]|noise=0.1|fold=1");
        assert_eq!(c.param_usize("rounds").expect("ok"), Some(5));
        assert_eq!(c.param_usize("max_nodes").expect("ok"), Some(7));
        assert_eq!(c.param_f64("t").expect("ok"), Some(0.0));
        assert_eq!(c.param_bool("clipped").expect("ok"), Some(true));
        assert_eq!(c.param_str("algo").expect("ok"), Some("tada"));
        assert_eq!(c.param_f64("missing").expect("ok"), None);
        assert!(c.param_f64("algo").is_err());
        assert!(c.param_bool("t").is_err());
        assert_eq!(c.noise, 0.1);
        assert_eq!((c.fold, c.n_folds), (1, 3));
        assert_eq!(c.folds, FoldSource::Stratified { k: 3, seed: 7 });
        assert_eq!(c.dataset.label.as_deref(), Some("y"));
        let d2 = cells.iter().find(|c| c.dataset.name == "d2" && c.setting != "base").expect("d2");
        assert_eq!(d2.param_usize("max_nodes").expect("ok"), Some(5));
        assert_eq!(d2.n_folds, 2);
        // The noise seed is shared by all settings of a (dataset, noise, fold), and only those.
        for a in &cells {
            for b in &cells {
                let same = a.dataset.name == b.dataset.name && a.noise == b.noise && a.fold == b.fold;
                assert_eq!(a.noise_seed == b.noise_seed, same, "{} {}", a.key, b.key);
            }
        }
        // Stratified fold ids come from the spec seed.
        let labels = [0u32, 1, 0, 1, 0, 1, 1];
        assert_eq!(c.fold_ids(&labels).expect("ok"), stratified_fold_ids(&labels, 3, 7).expect("ok"));
    }

    #[test]
    fn spec_hash_tracks_content() {
        let a = ExperimentSpec::from_toml_str(SPEC).expect("valid");
        let mut b = a.clone();
        assert_eq!(a.spec_hash().expect("ok"), b.spec_hash().expect("ok"));
        b.base_dir = Some(PathBuf::from("/elsewhere"));
        assert_eq!(a.spec_hash().expect("ok"), b.spec_hash().expect("ok"));
        b.noise.push(0.2);
        assert_ne!(a.spec_hash().expect("ok"), b.spec_hash().expect("ok"));
    }

    #[test]
    fn from_file_resolves_paths_and_reads_fold_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("f.txt"), "1\n2\n3\n4\n1\n2\n3\n4\n").expect("write");
        let text = SPEC.replace("label = \"y\"", "label = \"y\"\nfold_file = \"f.txt\"");
        let p = dir.path().join("exp.toml");
        std::fs::write(&p, text).expect("write");
        let spec = ExperimentSpec::from_file(&p).expect("valid");
        let cells = spec.cells().expect("cells");
        assert_eq!(cells.len(), 5 * 2 * 4 + 20);
        assert_eq!(cells[0].dataset.path, dir.path().join("data/d1.csv"));
        assert_eq!(cells[0].n_folds, 4);
        assert_eq!(cells[0].folds, FoldSource::File(dir.path().join("f.txt")));
        assert_eq!(cells[0].fold_ids(&[0u8; 8]).expect("ok"), vec![0, 1, 2, 3, 0, 1, 2, 3]);
        assert!(cells[0].fold_ids(&[0u8; 7]).is_err());
        assert_eq!(cells[45].dataset.path, PathBuf::from("/abs/d2.csv"));
    }

    #[test]
    fn spec_errors_are_clear() {
        let err = |text: &str| ExperimentSpec::from_toml_str(text).expect_err("invalid").to_string();
        let typo = SPEC.replace("folds = 3", "fold = 3");
        let e = err(&typo);
        // SPEC starts with a newline: `folds` is on line 4.
        assert!(e.contains("<spec>:4") && e.contains("unknown field `fold`"), "{e}");
        assert!(err(&SPEC.replace("label = \"y\"", "lable = \"y\"")).contains("unknown field `lable`"));
        assert!(err(&SPEC.replace("folds = 2", "folds = 2\nfold_file = \"f\"")).contains("not both"));
        assert!(err(&SPEC.replace("0.1]", "1.5]")).contains("noise"));
        assert!(err(&SPEC.replace("0.1]", "0.0]")).contains("distinct"));
        assert!(err(&SPEC.replace("name = \"d2\"", "name = \"d1\"")).contains("distinct dataset"));
        assert!(err(&SPEC.replace("name = \"d2\"", "name = \"d|2\"")).contains("'|'"));
        assert!(err(&SPEC.replace("reference = \"base\"", "reference = \"nope\"")).contains("reference"));
        assert!(err(&SPEC.replace("max_nodes = 7", "t = 0.3")).contains("not both"));
        assert!(err(&SPEC.replace("t = [0.0, 0.5]", "t = []")).contains("non-empty list"));
        assert!(err(&SPEC.replace("folds = 3", "folds = 1")).contains("folds"));
        let dup = SPEC
            .replace("name = \"tada\"", "name = \"base\"")
            .replace("grid = { t = [0.0, 0.5], clipped = [true, false] }\n", "");
        assert!(err(&dup).contains("distinct expanded setting names"), "{}", err(&dup));
    }

    /// A deterministic stand-in for training: a function of the cell's seeds only. Setting
    /// "good" is 0.05 better than "plain" on every fold (same shared noise draw).
    fn fake(cell: &Cell) -> Result<CellResult> {
        let mut shared = ChaCha8Rng::seed_from_u64(cell.noise_seed);
        let mut own = ChaCha8Rng::seed_from_u64(cell.seed);
        let base = 0.2 + 0.1 * shared.gen::<f64>();
        let shift = if cell.setting == "good" { -0.05 } else { 0.0 };
        let rounds = 3 + (cell.seed % 3) as usize;
        let test: Vec<f64> = (0..rounds).map(|j| base + shift + 0.01 * own.gen::<f64>() / (j + 1) as f64).collect();
        let clipped: Vec<f64> = test.iter().map(|e| e + 0.001).collect();
        let train: Vec<f64> = test.iter().map(|e| e / 2.0).collect();
        let mut r = CellResult::from_curves(test, Some(clipped), train);
        r.diagnostics.insert("alpha".into(), (0..rounds).map(|j| own.gen::<f64>() + j as f64).collect());
        r.diagnostics.insert("bound".into(), vec![f64::INFINITY; rounds]);
        r.extra.insert("rounds".into(), rounds as f64);
        Ok(r)
    }

    const RUN_SPEC: &str = r#"
name = "run"
seed = 3
folds = 3
reference = "plain"
[[datasets]]
name = "a"
path = "a.csv"
[[datasets]]
name = "b"
path = "b.csv"
[[settings]]
name = "plain"
[[settings]]
name = "good"
"#;

    fn records_of(dir: &Path) -> Vec<CellRecord> {
        load_results(dir).expect("load").records
    }

    #[test]
    fn kill_and_resume_equals_uninterrupted_run() {
        let spec = ExperimentSpec::from_toml_str(RUN_SPEC).expect("valid");
        let tmp = tempfile::tempdir().expect("tempdir");
        let (full, partial) = (tmp.path().join("full"), tmp.path().join("partial"));

        let calls = AtomicUsize::new(0);
        let last = Mutex::new((0, 0));
        let s = run_experiment(&spec, &full, 2, fake, |d, t| {
            calls.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut l) = last.lock() {
                *l = (l.0.max(d), t);
            }
        })
        .expect("run");
        assert!(s.is_complete());
        assert_eq!((s.total, s.already_done, s.completed), (12, 0, 12));
        assert_eq!(calls.load(Ordering::Relaxed), 13, "one initial call plus one per cell");
        assert_eq!(*last.lock().expect("lock"), (12, 12));
        let reference = records_of(&full);
        assert_eq!(reference.len(), 12);

        // "Kill" after 5 cells: the runner fails from then on.
        let n = AtomicUsize::new(0);
        let dying = |c: &Cell| {
            if n.fetch_add(1, Ordering::SeqCst) < 5 {
                fake(c)
            } else {
                Err(Error::Numerical("killed".into()))
            }
        };
        let s = run_experiment(&spec, &partial, 2, dying, |_, _| {}).expect("run");
        assert_eq!((s.completed, s.failures.len()), (5, 7));
        assert!(!s.is_complete());
        assert_eq!(records_of(&partial).len(), 5);

        // Resume: only the 7 missing cells run.
        let runs = AtomicUsize::new(0);
        let counting = |c: &Cell| {
            runs.fetch_add(1, Ordering::SeqCst);
            fake(c)
        };
        let s = run_experiment(&spec, &partial, 1, counting, |_, _| {}).expect("resume");
        assert_eq!((s.already_done, s.completed), (5, 7));
        assert_eq!(runs.load(Ordering::SeqCst), 7);
        assert_eq!(records_of(&partial), reference);

        // Lose two records and leave a torn temporary file, as a kill mid-write would; resume.
        let cells = spec.cells().expect("cells");
        for c in [&cells[1], &cells[8]] {
            std::fs::remove_file(partial.join(CELLS_DIR).join(cell_file_name(&c.key))).expect("rm");
        }
        let torn = partial.join(CELLS_DIR).join(".x.json.1.2.tmp");
        std::fs::write(&torn, "{\"index\": 3, \"ke").expect("write");
        let s = run_experiment(&spec, &partial, 2, fake, |_, _| {}).expect("resume");
        assert_eq!((s.already_done, s.completed), (10, 2));
        assert!(!torn.exists());
        assert_eq!(records_of(&partial), reference);
        let merged = |d: &Path| std::fs::read(d.join(MERGED_FILE)).expect("merged");
        assert_eq!(merged(&partial), merged(&full));
        assert_eq!(String::from_utf8(merged(&full)).expect("utf8").lines().count(), 12);

        // Nothing left to do.
        let s =
            run_experiment(&spec, &partial, 2, |_: &Cell| Err(Error::Numerical("no".into())), |_, _| {}).expect("noop");
        assert_eq!((s.already_done, s.completed, s.failures.len()), (12, 0, 0));
    }

    #[test]
    fn a_different_spec_is_refused() {
        let spec = ExperimentSpec::from_toml_str(RUN_SPEC).expect("valid");
        let tmp = tempfile::tempdir().expect("tempdir");
        let _ = run_experiment(&spec, tmp.path(), 1, fake, |_, _| {}).expect("run");
        let mut other = spec.clone();
        other.seed = 4;
        let e = run_experiment(&other, tmp.path(), 1, fake, |_, _| {}).expect_err("refused");
        assert!(matches!(e, Error::InvalidParam { name: "results_dir", .. }));
        assert!(e.to_string().contains("different spec"), "{e}");
        // Records without spec.json are refused too.
        let bare = tmp.path().join("bare");
        std::fs::create_dir_all(bare.join(CELLS_DIR)).expect("mkdir");
        std::fs::copy(
            tmp.path().join(CELLS_DIR).join(cell_file_name("a|plain|noise=0|fold=0")),
            bare.join(CELLS_DIR).join("x.json"),
        )
        .expect("copy");
        assert!(run_experiment(&spec, &bare, 1, fake, |_, _| {}).is_err());
    }

    #[test]
    fn report_on_the_fake_run() {
        let spec = ExperimentSpec::from_toml_str(RUN_SPEC).expect("valid");
        let tmp = tempfile::tempdir().expect("tempdir");
        let _ = run_experiment(&spec, tmp.path(), 2, fake, |_, _| {}).expect("run");
        let loaded = load_results(tmp.path()).expect("load");
        assert_eq!(loaded.spec, spec);
        let opts = ReportOptions { reference: spec.reference.clone(), ..ReportOptions::default() };
        let report = build_report(&loaded.records, &opts).expect("report");
        assert_eq!(report.summary.len(), 4);
        // "good" beats "plain" by 0.05 ± 0.01 on both datasets, for both measures.
        assert_eq!(report.comparisons.len(), 2);
        for c in &report.comparisons {
            assert_eq!((c.setting.as_str(), c.better, c.equivalent, c.worse), ("good", 2, 0, 0));
        }
        // Non-finite diagnostics survive the round trip.
        assert!(loaded.records[0].result.diagnostics["bound"].iter().all(|v| *v == f64::INFINITY));
        let md = render_markdown(&report);
        assert!(md.contains("| good | 0 | test error | 2 | 0 | 0 | 0 |"), "{md}");
    }

    fn rec(index: usize, setting: &str, fold: usize, test: Vec<f64>, clipped: Option<f64>) -> CellRecord {
        let mut result = CellResult::from_curves(test.clone(), None, test.iter().map(|e| e / 2.0).collect());
        result.final_test_error_clipped = clipped;
        CellRecord {
            index,
            key: format!("d|{setting}|noise=0|fold={fold}"),
            dataset: "d".into(),
            setting: setting.into(),
            noise: 0.0,
            fold,
            seed: 0,
            result,
        }
    }

    #[test]
    fn report_golden_numbers() {
        let records = vec![
            rec(0, "ref", 0, vec![0.20], None),
            rec(1, "ref", 1, vec![0.30], None),
            rec(2, "ref", 2, vec![0.25], None),
            rec(3, "cand", 0, vec![0.3, 0.10], Some(0.30)),
            rec(4, "cand", 1, vec![0.22], Some(0.30)),
            rec(5, "cand", 2, vec![0.4, 0.2, 0.14], Some(0.25)),
        ];
        let summary = summarize(&records);
        assert_eq!(summary[0].setting, "ref");
        assert!((summary[0].test_mean - 0.25).abs() < 1e-15);
        assert!((summary[0].test_std - 0.05).abs() < 1e-15);
        assert_eq!(summary[0].clipped, None);
        let (m, s) = summary[1].clipped.expect("clipped");
        assert!((m - 0.85 / 3.0).abs() < 1e-15 && (s - sample_std(&[0.3, 0.3, 0.25])).abs() < 1e-15);

        // Differences (−0.10, −0.08, −0.11): t = mean/(sd/√3), df 2, p = 1 − |t|/√(2 + t²).
        let (counts, details) = compare_to_reference(&records, "ref", Measure::TestError, 0.1).expect("ok");
        assert_eq!((counts[0].better, counts[0].equivalent, counts[0].worse), (1, 0, 0));
        let d = [-0.10, -0.08, -0.11];
        let t = mean(&d) / (sample_std(&d) / 3f64.sqrt());
        assert!((details[0].t - t).abs() < 1e-9);
        assert!((details[0].p - (1.0 - t.abs() / (2.0 + t * t).sqrt())).abs() < 1e-9);
        // Clipped: candidate (0.30, 0.30, 0.25) against the reference's unclipped errors
        // (0.20, 0.30, 0.25): differences (0.1, 0, 0), p = 0.42 → equivalent.
        let (counts, _) = compare_to_reference(&records, "ref", Measure::TestErrorClipped, 0.1).expect("ok");
        assert_eq!((counts[0].better, counts[0].equivalent, counts[0].worse), (0, 1, 0));
        assert!(compare_to_reference(&records, "nope", Measure::TestError, 0.1).is_err());

        // Curves: a fold that stopped early keeps its last value.
        let curves = mean_curves(&records, "test_error");
        let cand = curves.iter().find(|c| c.setting == "cand").expect("cand");
        let expect = [(0.3 + 0.22 + 0.4) / 3.0, (0.1 + 0.22 + 0.2) / 3.0, (0.1 + 0.22 + 0.14) / 3.0];
        assert_eq!(cand.mean.len(), 3);
        for (a, b) in cand.mean.iter().zip(expect) {
            assert!((a - b).abs() < 1e-15);
        }
        assert!(mean_curves(&records, "test_error_clipped").is_empty());

        let report = build_report(&records, &ReportOptions { reference: Some("ref".into()), alpha: 0.1 }).expect("ok");
        let md = render_markdown(&report);
        assert!(md.contains("| d | ref | 0 | 3 | 0.2500 ± 0.0500 | — |"), "{md}");
        assert!(md.contains("| cand | 0 | test error | 1 | 0 | 0 | 0 |"), "{md}");
        assert!(md.contains("| cand | 0 | clipped test error | 0 | 1 | 0 | 0 |"), "{md}");
        assert!(build_report(&records, &ReportOptions { reference: None, alpha: 0.0 }).is_err());
    }

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
