//! The experiment spec (docs/explanation/experiments.md#experiments): TOML parsing, validation, grid expansion into [`Cell`]s and the
//! stable seed derivation. See the [module docs](super) for the format.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::eval::folds::{fold_ids_from_file, parse_fold_ids, stratified_fold_ids};

/// Default number of folds (docs/explanation/experiments.md#experiments: 10-fold cross-validation).
pub const DEFAULT_FOLDS: usize = 10;

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

// ---------------------------------------------------------------------------------------------
// Stable hashing.

pub(crate) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

pub(crate) fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
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

    /// Checks names, ranges and uniqueness (called by the parsers and by [`super::run_experiment`]).
    pub fn validate(&self) -> Result<()> {
        // The name is the default results directory `results/<name>`: a plain file name only, so
        // that `../../x` cannot write outside `results/`.
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

    /// The settings after grid expansion, in spec order (see the [module docs](super)).
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
                    (crate::eval::folds::n_folds(&ids), FoldSource::File(path.clone()))
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
                let k = crate::eval::folds::n_folds(&ids);
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
