//! `boostlab experiment SPEC.toml`: run an experiment grid (docs/explanation/experiments.md#experiments) with the library's harness
//! ([`boostlab::experiment`]), recording one JSON record per finished cell.
//!
//! Presentation only: the cells run through the library's [`CellRunner`] (dataset, fold, noise,
//! fit, staged evaluation; the cell parameters are documented in `boostlab::experiment`); this
//! file adds the progress bar, the interruption handling and the error summary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use boostlab::experiment::{check_settings, run_experiment, CellRunner, ExperimentSpec};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Arguments of `boostlab experiment`.
#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// The experiment spec (TOML; see the `boostlab::experiment` docs and `experiments/`).
    pub spec: PathBuf,
    /// Results directory. By default `results/<spec name>` beside the current directory.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Worker threads (cells run in parallel). 0 = one per logical CPU.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the cells as tasks on the Dask cluster at this scheduler address (e.g.
    /// `tcp://10.0.0.5:8786`), through the Python package: runs `python3 -m boostlab.experiment`
    /// (`$BOOSTLAB_PYTHON` instead of `python3` if set), which needs `pip install 'boostlab[dask]'`.
    /// Same records, resume and progress as a local run.
    #[arg(long, value_name = "ADDRESS")]
    pub dask: Option<String>,
    /// Testing aid: exit abruptly (status 3) once this many cells have been recorded by this run,
    /// as if killed.
    #[arg(long, hide = true)]
    pub stop_after: Option<usize>,
}

/// `--dask`: hands the run to the Python package's Dask runner (`boostlab.experiment`), which
/// opens the results directory through the same library code and runs the same cell runner in
/// its tasks. The Python process inherits the terminal (progress bar) and its exit status is ours.
fn run_on_dask(a: &ExperimentArgs, address: &str, out: &Path) -> Result<()> {
    let python = std::env::var_os("BOOSTLAB_PYTHON").unwrap_or_else(|| "python3".into());
    let shown = Path::new(&python).display().to_string();
    let check = std::process::Command::new(&python)
        .args(["-c", "import boostlab.experiment, distributed"])
        .stdin(std::process::Stdio::null())
        .output();
    match check {
        Err(e) => bail!(
            "--dask runs the grid through Python, but `{shown}` cannot be started ({e}); install Python ≥ 3.10 \
             with `pip install 'boostlab[dask]'`, or point $BOOSTLAB_PYTHON at such an interpreter"
        ),
        Ok(o) if !o.status.success() => {
            let err = String::from_utf8_lossy(&o.stderr);
            let last = err.lines().last().unwrap_or("").trim();
            bail!(
                "--dask needs the Python package with its Dask extra: `{shown} -c 'import boostlab.experiment, \
                 distributed'` failed ({last}); run `pip install 'boostlab[dask]'` for that interpreter, or point \
                 $BOOSTLAB_PYTHON at one that has it"
            )
        }
        Ok(_) => {}
    }
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "boostlab.experiment"]).arg(&a.spec).arg("--dask").arg(address).arg("--out").arg(out);
    if a.quiet {
        cmd.arg("--quiet");
    }
    if let Some(n) = a.stop_after {
        cmd.arg("--stop-after").arg(n.to_string());
    }
    let status = cmd.status().with_context(|| format!("running {shown} -m boostlab.experiment"))?;
    match status.code() {
        Some(0) => Ok(()),
        // The Python runner printed the reason; keep its status (1: cells failed, 3: --stop-after).
        Some(code) => std::process::exit(code),
        None => bail!("{shown} -m boostlab.experiment was killed by a signal"),
    }
}

/// `boostlab experiment`.
pub fn run(a: ExperimentArgs) -> Result<()> {
    let spec = ExperimentSpec::from_file(&a.spec)?;
    let out = a.out.clone().unwrap_or_else(|| Path::new("results").join(&spec.name));
    if let Some(address) = &a.dask {
        return run_on_dask(&a, address, &out);
    }
    let total_cells = spec.cells()?.len();
    let threads = if a.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { a.threads };
    let tty = std::io::stderr().is_terminal() && !a.quiet;
    let bar = ProgressBar::with_draw_target(
        Some(total_cells as u64),
        if tty { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {pos}/{len} cells, ETA {eta_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    if !a.quiet {
        eprintln!("{}: {total_cells} cells, {threads} threads → {}", spec.name, out.display());
    }
    check_settings(&spec)?;
    let runner = CellRunner::new();
    let cancel = crate::signals::cancel();
    let start = Instant::now();
    let calls = AtomicUsize::new(0);
    let first = AtomicUsize::new(usize::MAX);
    let last_line = AtomicUsize::new(0);
    let summary = run_experiment(
        &spec,
        &out,
        threads,
        |c| {
            cancel.check()?; // interrupted: the remaining cells are left for the next run
            runner.run(c)
        },
        |done, total| {
            let call = calls.fetch_add(1, Ordering::SeqCst);
            if call == 0 {
                first.store(done, Ordering::SeqCst);
                bar.set_position(done as u64);
                bar.reset_eta();
                return;
            }
            bar.set_position(done as u64);
            if !tty && !a.quiet {
                // One line per 10% when stderr is not a terminal.
                let decile = done * 10 / total.max(1);
                if last_line.fetch_max(decile, Ordering::SeqCst) < decile {
                    eprintln!("{done}/{total} cells, {:.0} s", start.elapsed().as_secs_f64());
                }
            }
            if let Some(n) = a.stop_after {
                if call >= n {
                    std::process::exit(3);
                }
            }
        },
    )?;
    bar.finish_and_clear();
    let secs = start.elapsed().as_secs_f64();
    if !a.quiet {
        eprintln!(
            "{} cells: {} already recorded, {} run now, {} failed; {:.1} s",
            summary.total,
            summary.already_done,
            summary.completed,
            summary.failures.len(),
            secs
        );
    }
    if cancel.is_cancelled() {
        eprintln!(
            "interrupted: {} cells recorded in {}; rerun the same command to resume",
            summary.already_done + summary.completed,
            out.display()
        );
        return Err(boostlab::Error::Cancelled.into());
    }
    // One line per distinct error (a missing file fails every fold of its dataset the same way).
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for f in &summary.failures {
        let msg = f.error.to_string();
        match groups.iter_mut().find(|g| g.0 == msg) {
            Some(g) => g.1.push(&f.key),
            None => groups.push((msg, vec![&f.key])),
        }
    }
    for (msg, keys) in groups.iter().take(20) {
        match keys.as_slice() {
            [one] => eprintln!("failed: {one}: {msg}"),
            [first, rest @ ..] => eprintln!("failed: {first} and {} more cells: {msg}", rest.len()),
            [] => {}
        }
    }
    if !summary.failures.is_empty() {
        bail!("{} cells failed (rerun the same command to retry them)", summary.failures.len());
    }
    Ok(())
}
