//! `boostlab train`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use boostlab::model::write_atomic;
use boostlab::{fit_binned, RoundRecord};
use clap::Args;

use crate::common::{BoostArgs, DataArgs};

/// Arguments of `boostlab train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub boost: BoostArgs,
    /// Where to save the model (JSON, written atomically).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// Write per-round diagnostics as JSON lines (one object per round) to this file.
    #[arg(long)]
    pub log_json: Option<PathBuf>,
    /// Print no per-round table.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Formats the per-round diagnostics as a table (all keys seen, `round` first).
pub fn table(history: &[RoundRecord]) -> String {
    let mut keys: Vec<&str> = Vec::new();
    for r in history {
        for k in r.values.keys() {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let mut out = format!("{:>6}", "round");
    for k in &keys {
        out.push_str(&format!(" {k:>14}"));
    }
    out.push('\n');
    for r in history {
        out.push_str(&format!("{:>6}", r.round));
        for k in &keys {
            match r.values.get(*k) {
                Some(v) => out.push_str(&format!(" {v:>14.6}")),
                None => out.push_str(&format!(" {:>14}", "-")),
            }
        }
        out.push('\n');
        if let Some(s) = &r.stop_reason {
            out.push_str(&format!("stopped: {s}\n"));
        }
    }
    out
}

/// JSON lines of the history.
pub fn json_lines(history: &[RoundRecord]) -> Result<String> {
    let mut s = String::new();
    for r in history {
        s.push_str(&serde_json::to_string(r)?);
        s.push('\n');
    }
    Ok(s)
}

pub fn run(a: TrainArgs) -> Result<()> {
    let params = a.boost.params()?;
    // Streamed straight into bins (issue 12).
    let read_start = Instant::now();
    let data = a.data.load_binned(params.max_bins)?;
    let read_secs = read_start.elapsed().as_secs_f64();
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(params.n_estimators as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} rounds [{elapsed_precise} < {eta_precise}] {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(b)
    } else {
        None
    };
    let start = Instant::now();
    let mut model = fit_binned(&data, &params, &mut |r| {
        if let Some(b) = &bar {
            b.set_position(r.round as u64);
            if let Some(e) = r.values.get("train_error") {
                b.set_message(format!("train error {e:.4}"));
            }
        }
    })
    .with_context(|| format!("training on {}", a.data.data.display()))?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    model.target_columns = target_columns(&a.data);
    if !a.quiet {
        print!("{}", table(&model.history));
    }
    println!("read {} into bins in {read_secs:.3} s", a.data.data.display());
    println!(
        "trained {} on {} rows × {} features: {} trees in {secs:.2} s",
        params.algorithm.name(),
        data.n_rows(),
        data.n_features(),
        model.n_trees()
    );
    if let Some(p) = &a.log_json {
        write_atomic(p, json_lines(&model.history)?.as_bytes())?;
    }
    if let Some(p) = &a.model {
        model.save(p)?;
        println!("model saved to {}", p.display());
    }
    Ok(())
}

/// The label column names to look for when predicting on a file of the same layout.
pub fn target_columns(d: &DataArgs) -> Option<String> {
    d.labels.clone().or_else(|| d.label.clone()).or_else(|| {
        // The default label is the last column of a CSV (or Parquet/Arrow) file.
        match crate::common::Format::of(&d.data, d.format) {
            crate::common::Format::Csv => boostlab::data::csv_header(&d.data).ok().and_then(|h| h.last().cloned()),
            #[cfg(feature = "arrow")]
            f @ (crate::common::Format::Parquet | crate::common::Format::Arrow) => f
                .columnar()
                .ok()
                .and_then(|f| boostlab::data::arrow_schema(&d.data, f).ok())
                .and_then(|s| s.last().map(|c| c.0.clone())),
            _ => None,
        }
    })
}
