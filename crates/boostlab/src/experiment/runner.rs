//! Running an experiment: every pending cell in parallel on a rayon pool, each finished cell
//! recorded through [`super::storage`] as soon as it is done.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use super::cell::{check_settings, CellRunner};
use super::spec::{Cell, ExperimentSpec};
use super::storage::{CellRecord, CellResult, ResultsDir};
use crate::error::{Error, Result};

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

/// Runs every cell of `spec` not yet recorded in `results_dir`, in parallel, recording each
/// finished cell durably (see the [module docs](super) for the layout).
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
    let dir = ResultsDir::open(spec, results_dir, &cells)?;
    let total = cells.len();
    let pending: Vec<&Cell> = cells.iter().filter(|c| !dir.is_recorded(&c.key)).collect();
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
            let outcome = run_cell(cell).and_then(|result| dir.write_record(&cell.record(result)));
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
    dir.write_merged()?;
    Ok(RunSummary { total, already_done, completed: completed.into_inner(), failures })
}

/// An expanded experiment whose cells run one at a time, by index, in any process that holds the
/// spec: the entry point of the Dask tasks (`boostlab.experiment`), which get the spec's text and
/// a batch of cell indices and return the records for the client to write through
/// [`ResultsDir`]. A cell's record depends only on the spec and the cell, so it is the same
/// whichever process runs it. Holds a [`CellRunner`]: the cells of one (dataset, fold) that run
/// in the same process share its split and bins.
pub struct PreparedExperiment {
    /// The validated spec.
    pub spec: ExperimentSpec,
    /// Its cells, in expansion order ([`Cell::index`] = position).
    pub cells: Vec<Cell>,
    runner: CellRunner,
}

impl PreparedExperiment {
    /// Validates `spec`, checks every setting's parameters ([`check_settings`]) and expands it.
    pub fn new(spec: ExperimentSpec) -> Result<Self> {
        spec.validate()?;
        check_settings(&spec)?;
        let cells = spec.cells()?;
        Ok(PreparedExperiment { spec, cells, runner: CellRunner::new() })
    }

    /// [`PreparedExperiment::new`] on a spec given as TOML text; relative paths in it are
    /// relative to `base_dir` (the spec file's directory), or to the current directory.
    pub fn from_toml(text: &str, base_dir: Option<&Path>) -> Result<Self> {
        let mut spec = ExperimentSpec::from_toml_str(text)?;
        spec.base_dir = base_dir.map(Path::to_path_buf);
        Self::new(spec)
    }

    /// Runs the cell at `index` and returns its record.
    pub fn run_cell(&self, index: usize) -> Result<CellRecord> {
        let cell = self
            .cells
            .get(index)
            .ok_or_else(|| Error::param("cell", format!("a cell index below {}", self.cells.len()), index))?;
        Ok(cell.record(self.runner.run(cell)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::report::{build_report, render_markdown, ReportOptions};
    use crate::experiment::storage::{cell_file_name, load_results, CellRecord, CELLS_DIR, MERGED_FILE};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::path::Path;

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
}
