//! `boostlab train`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use boostlab::model::write_atomic;
use boostlab::{Error, RoundRecord, Trainer};
use clap::Args;

use crate::args::{BoostArgs, DataArgs, ThreadsArg, ValidationArgs};

/// Arguments of `boostlab train`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub boost: BoostArgs,
    #[command(flatten)]
    pub validation: ValidationArgs,
    /// Where to save the model (JSON, written atomically).
    #[arg(long, help_heading = "Output")]
    pub model: Option<PathBuf>,
    /// Write per-round diagnostics as JSON lines (one object per round, every diagnostic) to
    /// this file.
    #[arg(long, help_heading = "Output")]
    pub log_json: Option<PathBuf>,
    /// Print a row of the per-round table every K rounds (and for the last round). By default
    /// only a summary of the last round is printed.
    #[arg(long, help_heading = "Output", value_name = "K")]
    pub log_every: Option<usize>,
    /// Print the per-round table for every round (= --log-every 1).
    #[arg(long, help_heading = "Output", short, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Print no per-round rows and no progress, only the summary.
    #[arg(long, help_heading = "Output", short)]
    pub quiet: bool,
    /// Validation data (read like --data, with the same label options): each round's validation
    /// metric goes into the history (`valid_metric`); --early-stopping-rounds stops on it.
    #[arg(long, help_heading = "Validation", value_name = "FILE")]
    pub valid: Option<PathBuf>,
    /// Continue this model (warm start) on the data it was trained on, for --rounds more rounds
    /// (100 by default); its parameters are used (only --rounds and the validation options may be
    /// given). The result equals a model trained in one go.
    #[arg(long, help_heading = "Data", value_name = "FILE")]
    pub init_model: Option<PathBuf>,
    #[command(flatten)]
    pub threads: ThreadsArg,
}

/// Diagnostics shown first, in this order, when they exist; the others follow alphabetically.
const KEY_ORDER: &[&str] = &[
    "train_error",
    "train_error_clipped",
    "hamming_loss",
    "ranking_loss",
    "one_error",
    "alpha",
    "z",
    "bound",
    "rho",
    "mu",
    "r",
];

/// The diagnostics' names in display order.
pub fn ordered_keys(history: &[RoundRecord]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for r in history {
        for k in r.values.keys() {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let rank = |k: &str| KEY_ORDER.iter().position(|x| *x == k).unwrap_or(KEY_ORDER.len());
    keys.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    keys
}

/// A number in at most 10 characters: fixed-point when readable, scientific otherwise.
fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || (1e-3..1e5).contains(&a) {
        format!("{v:.6}").chars().take(10).collect::<String>().trim_end_matches('.').to_string()
    } else {
        format!("{v:.3e}")
    }
}

/// The per-round table's layout: which columns fit in `width` characters.
pub struct TableLayout {
    keys: Vec<String>,
    widths: Vec<usize>,
    /// Columns left out for lack of width.
    pub hidden: usize,
}

impl TableLayout {
    /// Columns in display order, as many as fit in `width` (all when `None`).
    pub fn new(keys: Vec<String>, width: Option<usize>) -> TableLayout {
        let widths: Vec<usize> = keys.iter().map(|k| k.len().max(10)).collect();
        let mut used = 6;
        let mut n = 0;
        for w in &widths {
            if width.is_some_and(|max| used + 1 + w > max) && n > 0 {
                break;
            }
            used += 1 + w;
            n += 1;
        }
        TableLayout { hidden: keys.len() - n, keys: keys[..n].to_vec(), widths: widths[..n].to_vec() }
    }

    /// The header line.
    pub fn header(&self) -> String {
        let mut out = format!("{:>6}", "round");
        for (k, w) in self.keys.iter().zip(&self.widths) {
            out.push_str(&format!(" {k:>w$}"));
        }
        out
    }

    /// One round's line (and the stop reason, on a second line).
    pub fn row(&self, r: &RoundRecord) -> String {
        let mut out = format!("{:>6}", r.round);
        for (k, w) in self.keys.iter().zip(&self.widths) {
            let cell = r.values.get(k).map_or_else(|| "-".to_string(), |v| fmt_num(*v));
            out.push_str(&format!(" {cell:>w$}"));
        }
        if let Some(s) = &r.stop_reason {
            out.push_str(&format!("\nstopped: {s}"));
        }
        out
    }
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

/// The width the table may use: the terminal's when standard output is one, else `$COLUMNS`
/// when set, else unlimited (a file or a pipe gets every column).
pub fn table_width() -> Option<usize> {
    let term = console::Term::stdout();
    if term.is_term() {
        if let Some((_, cols)) = term.size_checked() {
            return Some(usize::from(cols));
        }
    }
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&c: &usize| c > 0)
}

/// The last round's key diagnostics on one line (at most `max` of them).
pub fn summary_line(history: &[RoundRecord], max: usize) -> String {
    let Some(last) = history.last() else { return String::new() };
    let keys = ordered_keys(std::slice::from_ref(last));
    let parts: Vec<String> = keys.iter().take(max).map(|k| format!("{k} {}", fmt_num(last.values[k]))).collect();
    format!("round {}: {}", last.round, parts.join(", "))
}

/// Prints one line of the report. A closed standard output (`train ... | head -1`) must not stop
/// the training or the writing of the model, so write errors are ignored here (the report is
/// informational; the model file is the result).
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// The parameters of a continued model (`--init-model`): the model's own, with
/// `--rounds` more rounds and the validation options given; any other option is refused.
fn warm_params(
    init: &boostlab::Ensemble,
    a: &TrainArgs,
    params: &boostlab::BoostParams,
    explicit: &[String],
) -> Result<(boostlab::BoostParams, Vec<String>)> {
    const FREE: &[&str] = &["n_estimators", "early_stopping_rounds", "eval_metric", "eval_clipped"];
    // A flag that repeats the model's value is harmless; one that changes it is refused.
    let (now, was) = (params.sources(&[])?, init.params.sources(&[])?);
    for path in explicit {
        let same = now.get(path).map(|e| &e.value) == was.get(path).map(|e| &e.value);
        if !FREE.contains(&path.as_str()) && !same {
            let shown = |e: Option<&boostlab::params::preset::ParamEntry>| {
                e.map_or_else(|| "unset".to_string(), |e| e.value.to_string().trim_matches('"').to_string())
            };
            anyhow::bail!(
                "--init-model continues the model with its own parameters: `{path}` is {} in the model, not {} (only \
                 --rounds and the validation options may be given)",
                shown(was.get(path)),
                shown(now.get(path)),
            );
        }
    }
    let mut p = init.params.clone();
    p.n_estimators = init.n_trees() + a.boost.rounds().unwrap_or(100);
    p.early_stopping_rounds = params.early_stopping_rounds;
    p.eval_metric = params.eval_metric;
    p.eval_clipped = params.eval_clipped;
    let mut user: Vec<String> = init
        .param_sources
        .iter()
        .filter(|(_, e)| e.source == boostlab::boost::preset::ParamSource::User)
        .map(|(k, _)| k.clone())
        .collect();
    user.extend(explicit.iter().filter(|k| FREE.contains(&k.as_str())).cloned());
    if !user.iter().any(|k| k == "n_estimators") {
        user.push("n_estimators".into());
    }
    Ok((p, user))
}

pub fn run(mut a: TrainArgs) -> Result<()> {
    let init = match &a.init_model {
        Some(p) => Some(boostlab::Ensemble::load(p).with_context(|| format!("reading --init-model {}", p.display()))?),
        None => None,
    };
    if let Some(m) = &init {
        // Without --algo, --init-model continues its model's algorithm.
        a.boost.default_algorithm(m.params.algorithm.name());
    }
    let (params, explicit) = a.boost.params_and_sources(&a.validation)?;
    let (params, explicit) = match &init {
        Some(m) => warm_params(m, &a, &params, &explicit)?,
        None => (params, explicit),
    };
    params.check()?;
    let valid = match &a.valid {
        Some(p) => {
            // The same label and weight columns (a weight column is not a feature; its values are
            // not used).
            let v = a.data.load_other(p, !a.quiet).with_context(|| format!("reading --valid {}", p.display()))?;
            let target = v.target()?.clone();
            Some(boostlab::Validation { features: v.features, target })
        }
        None => None,
    };
    // Streamed straight into bins.
    let read_start = Instant::now();
    let data = a.data.load_binned(params.max_bins, !a.quiet)?;
    let read_secs = read_start.elapsed().as_secs_f64();
    let bar = if std::io::stderr().is_terminal() && !a.quiet {
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
    let every = if a.verbose { Some(1) } else { a.log_every.filter(|_| !a.quiet) };
    if every == Some(0) {
        anyhow::bail!("--log-every must be at least 1");
    }
    let width = table_width();
    let mut layout: Option<TableLayout> = None;
    let emit = |line: String| match &bar {
        Some(b) => b.println(line),
        None => say(&line),
    };
    let start = Instant::now();
    let last_round = params.n_estimators;
    let mut on_round = |r: &RoundRecord| {
        if let Some(b) = &bar {
            b.set_position(r.round as u64);
            if let Some(e) = r.values.get("train_error") {
                b.set_message(format!("train error {e:.4}"));
            }
        }
        if let Some(k) = every {
            if r.round.is_multiple_of(k) || r.round == last_round || r.stop_reason.is_some() || r.round == 1 {
                let l = layout.get_or_insert_with(|| {
                    let l = TableLayout::new(ordered_keys(std::slice::from_ref(r)), width);
                    emit(l.header());
                    l
                });
                emit(l.row(r));
            }
        }
    };
    let mut model = Trainer::new(&params)
        .validation(valid.as_ref())
        .init_model(init.as_ref())
        .cancel(crate::signals::cancel())
        .on_round(&mut on_round)
        .fit_binned(&data)
        .with_context(|| format!("training on {}", a.data.data.display()))?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    model.target_columns = target_columns(&a.data);
    model.param_sources = params.sources(&explicit)?;
    if let Some(l) = &layout {
        if l.hidden > 0 {
            say(&format!("({} more columns in --log-json)", l.hidden));
        }
    }
    let last = model.history.last();
    say(&summary_line(&model.history, 4));
    if let Some(reason) = last.and_then(|r| r.stop_reason.as_ref()) {
        say(&format!("stopped early: {reason}"));
    }
    if let (Some(b), Some(m)) = (model.best_iteration, &model.eval_metric) {
        let v = model.history.get(b).and_then(|r| r.values.get("valid_metric")).copied().unwrap_or(f64::NAN);
        say(&format!("best iteration {} (validation {m} {}): the model keeps {} trees", b + 1, fmt_num(v), b + 1));
    }
    say(&format!("read {} into bins in {read_secs:.3} s", a.data.data.display()));
    say(&format!(
        "trained {} on {} rows × {} features: {} trees in {secs:.2} s",
        params.algorithm.name(),
        data.n_rows(),
        data.n_features(),
        model.n_trees()
    ));
    // The calibrated link, or why there is none (not said for a fit without calibration).
    if let (Some(c), Some(link)) = (&model.calibration, super::inspect::probability_link(&model)) {
        let cost = if c.not_fitted.is_none() { format!(" ({} more fits)", c.folds) } else { String::new() };
        say(&format!("probabilities {link}{cost}"));
    }
    // Nothing is written once interrupted; a signal during the writes waits for them (signals.rs).
    let _lock = crate::signals::write_lock();
    if crate::signals::cancelled() {
        return Err(Error::Cancelled.into());
    }
    if let Some(p) = &a.log_json {
        write_atomic(p, json_lines(&model.history)?.as_bytes())?;
        say(&format!("per-round diagnostics written to {}", p.display()));
    }
    match &a.model {
        Some(p) => {
            model.save(p)?;
            say(&format!("model saved to {}", p.display()));
        }
        None => say("model not saved (no --model)"),
    }
    Ok(())
}

/// The label column names to look for when predicting on a file of the same layout.
pub fn target_columns(d: &DataArgs) -> Option<String> {
    // The default label is the last column of a CSV (or Parquet/Arrow) file.
    d.labels.clone().or_else(|| d.label.clone()).or_else(|| crate::input::last_column(&d.data, d.format))
}
