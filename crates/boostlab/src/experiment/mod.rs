//! The experiment harness core (docs/explanation/experiments.md#experiments): a TOML spec expanded into cells, run in parallel through
//! a caller-supplied closure, recorded durably, resumable, and summarised into report tables.
//!
//! The module sits above the boosters, in four parts:
//!
//! - `spec`: the TOML spec, its validation, grid expansion into [`Cell`]s and [`derive_seed`];
//! - `runner`: [`run_experiment`] runs the pending cells on a rayon pool through a
//!   `run_cell: Fn(&Cell) -> Result<CellResult>` closure; the cell runner itself is
//!   [`CellRunner`] (`cell`: dataset, fold, label noise, fit, staged evaluation — datasets read
//!   and folds binned once per run) with the parameter mapping [`boost_params`] (`params`);
//! - `storage`: [`CellRecord`]s and the results directory ([`ResultsDir`]: atomic writes,
//!   resume), the one writer for every runner — the local pool and the Dask client of the
//!   Python package (`boostlab.experiment`, whose tasks run cells by index through
//!   [`PreparedExperiment`]);
//! - `report`: summaries, paired t-tests and mean curves of recorded cells.
//!
//! Everything a cell needs to be reproducible — its parameters, fold, noise rate and seeds — is
//! in the [`Cell`], so any process that holds the spec can run any cell and get the same record.
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

mod cell;
mod params;
mod report;
mod runner;
mod spec;
mod storage;

pub use cell::{add_noise, check_settings, load_dataset, CellRunner};
pub use params::{boost_params, RUNNER_KEYS, SUB_TABLES};
pub use report::{
    build_report, compare_to_reference, mean_curves, render_markdown, summarize, ComparisonCounts, MeanCurve, Measure,
    PairedDetail, Report, ReportOptions, SummaryRow,
};
pub use runner::{run_experiment, CellFailure, PreparedExperiment, RunSummary};
pub use spec::{
    derive_seed, Cell, DatasetSpec, ExpandedSetting, ExperimentSpec, FoldSource, SettingSpec, DEFAULT_FOLDS,
};
pub use storage::{load_results, CellRecord, CellResult, ExperimentResults, ResultsDir, RESULTS_FORMAT};
