//! `boostlab experiment SPEC.toml`: run an experiment grid (SPEC §7) with the library's harness
//! ([`boostlab::experiment`]), recording one JSON record per finished cell.
//!
//! Presentation only: the cells run through the library's [`CellRunner`] (dataset, fold, noise,
//! fit, staged evaluation; the cell parameters are documented in `boostlab::experiment`); this
//! file adds the progress bar, the interruption handling and the error summary.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{bail, Result};
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
    /// Testing aid: exit abruptly (status 3) once this many cells have been recorded by this run,
    /// as if killed.
    #[arg(long, hide = true)]
    pub stop_after: Option<usize>,
}

/// `boostlab experiment`.
pub fn run(a: ExperimentArgs) -> Result<()> {
    let spec = ExperimentSpec::from_file(&a.spec)?;
    let out = a.out.clone().unwrap_or_else(|| Path::new("results").join(&spec.name));
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
