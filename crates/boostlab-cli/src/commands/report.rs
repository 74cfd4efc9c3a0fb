//! `boostlab report RESULTS_DIR`: summary tables, the papers' paired comparison and SVG plots of
//! an experiment's recorded cells (computations in `boostlab::experiment`; presentation
//! here).

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use boostlab::experiment::{build_report, load_results, mean_curves, render_markdown, CellRecord, ReportOptions};
use boostlab::model::write_atomic;
use clap::Args;

use crate::svg::{line_chart, Series};

/// Arguments of `boostlab report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results directory written by `boostlab experiment`.
    pub results: PathBuf,
    /// Reference setting of the paired comparisons (expanded name, e.g. `authors[t=1]`). By
    /// default the spec's `reference`.
    #[arg(long)]
    pub reference: Option<String>,
    /// Significance level of the two-sided paired Student t-test over folds.
    #[arg(long, default_value_t = 0.1)]
    pub alpha: f64,
    /// Only these settings (comma-separated; `PREFIX*` matches by prefix). By default all.
    #[arg(long)]
    pub settings: Option<String>,
    /// Only these datasets (comma-separated). By default all.
    #[arg(long)]
    pub datasets: Option<String>,
    /// Plot curves only for these datasets (comma-separated). By default every dataset kept.
    #[arg(long)]
    pub plot_datasets: Option<String>,
    /// Plot curves only for these settings (comma-separated, `PREFIX*` allowed). By default every
    /// setting kept.
    #[arg(long)]
    pub plot_settings: Option<String>,
    /// Diagnostic drawn in the loss plots. By default `risk` when recorded (SecBoost), else
    /// `bound` (the product of the Z's).
    #[arg(long)]
    pub loss_curve: Option<String>,
    /// Output directory for report.md, report.json and the SVG files. By default
    /// `RESULTS_DIR/report`.
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// Write no SVG files.
    #[arg(long)]
    pub no_plots: bool,
    #[command(flatten)]
    pub threads: crate::args::ThreadsArg,
}

fn matcher(list: &Option<String>) -> impl Fn(&str) -> bool + '_ {
    move |name: &str| match list {
        None => true,
        Some(l) => l.split(',').map(str::trim).any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p,
        }),
    }
}

/// Safe file-name fragment.
fn slug(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect()
}

/// Tables of mean final test error: datasets × settings, one per noise rate and model.
fn matrix(records: &[CellRecord], clipped: bool) -> String {
    let mut out = String::new();
    let settings: Vec<&str> = ordered(records.iter().map(|r| r.setting.as_str()));
    let datasets: Vec<&str> = ordered(records.iter().map(|r| r.dataset.as_str()));
    let noises: Vec<f64> = ordered(records.iter().map(|r| r.noise));
    let value =
        |r: &CellRecord| if clipped { r.result.final_test_error_clipped } else { Some(r.result.final_test_error) };
    if clipped && !records.iter().any(|r| value(r).is_some()) {
        return out;
    }
    for &noise in &noises {
        let what = if clipped { "clipped model" } else { "linear model" };
        let _ = writeln!(out, "\n### Mean test error (%), {what}, noise {noise}\n");
        let _ = writeln!(out, "| dataset | {} |", settings.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(settings.len()));
        for &d in &datasets {
            let cells: Vec<String> = settings
                .iter()
                .map(|&s| {
                    let v: Vec<f64> = records
                        .iter()
                        .filter(|r| r.dataset == d && r.setting == s && r.noise == noise)
                        .filter_map(value)
                        .collect();
                    if v.is_empty() {
                        "—".into()
                    } else {
                        format!("{:.2}", 100.0 * v.iter().sum::<f64>() / v.len() as f64)
                    }
                })
                .collect();
            let _ = writeln!(out, "| {d} | {} |", cells.join(" | "));
        }
    }
    out
}

fn ordered<T: PartialEq + Copy>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// `boostlab report`.
pub fn run(a: ReportArgs) -> Result<()> {
    if !(a.alpha > 0.0 && a.alpha <= 1.0) {
        bail!("--alpha must be in (0, 1], got {}", a.alpha);
    }
    let loaded = load_results(&a.results)?;
    let (keep_s, keep_d) = (matcher(&a.settings), matcher(&a.datasets));
    let mut records: Vec<CellRecord> =
        loaded.records.into_iter().filter(|r| keep_s(&r.setting) && keep_d(&r.dataset)).collect();
    records.sort_by_key(|r| r.index);
    if records.is_empty() {
        bail!("no recorded cells match (--settings / --datasets)");
    }
    let reference = a.reference.clone().or(loaded.spec.reference.clone());
    if let Some(r) = &reference {
        if !records.iter().any(|c| &c.setting == r) {
            bail!("reference setting `{r}` has no recorded cells among those kept");
        }
    }
    let opts = ReportOptions { reference, alpha: a.alpha };
    let report = build_report(&records, &opts)?;
    let out = a.out.clone().unwrap_or_else(|| a.results.join("report"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let total = loaded.spec.cells()?.len();
    let mut md = format!(
        "# {} — {} of {} cells recorded (after filters: {})\n\n",
        loaded.spec.name,
        load_results(&a.results)?.records.len(),
        total,
        records.len()
    );
    md.push_str(&render_markdown(&report));
    md.push_str("\n## Mean test error per dataset and setting\n");
    md.push_str(&matrix(&records, false));
    md.push_str(&matrix(&records, true));
    write_atomic(&out.join("report.md"), md.as_bytes())?;
    write_atomic(&out.join("report.json"), serde_json::to_string_pretty(&report)?.as_bytes())?;

    let mut written = Vec::new();
    if !a.no_plots {
        let (plot_d, plot_s) = (matcher(&a.plot_datasets), matcher(&a.plot_settings));
        let shown: Vec<CellRecord> =
            records.iter().filter(|r| plot_d(&r.dataset) && plot_s(&r.setting)).cloned().collect();
        let has = |name: &str| shown.iter().any(|r| r.result.diagnostics.contains_key(name));
        let loss = a.loss_curve.clone().unwrap_or_else(|| if has("risk") { "risk".into() } else { "bound".into() });
        let datasets: Vec<String> =
            ordered(shown.iter().map(|r| r.dataset.as_str())).into_iter().map(String::from).collect();
        let noises: Vec<f64> = ordered(shown.iter().map(|r| r.noise));
        let test = mean_curves(&shown, "test_error");
        let clipped = mean_curves(&shown, "test_error_clipped");
        let minw = mean_curves(&shown, "min_weight");
        let maxw = mean_curves(&shown, "max_weight");
        let lossc = mean_curves(&shown, &loss);
        for (dataset, &noise) in datasets.iter().flat_map(|d| noises.iter().map(move |n| (d, n))) {
            let sel = |v: &[boostlab::experiment::MeanCurve], suffix: &str, dashed: bool| -> Vec<Series> {
                v.iter()
                    .filter(|c| c.dataset == *dataset && c.noise == noise)
                    .map(|c| Series { name: format!("{}{suffix}", c.setting), values: c.mean.clone(), dashed })
                    .collect()
            };
            let stem = format!("{}_noise{}", slug(dataset), noise);
            let title = format!("{dataset}, η = {noise}");
            let mut s = sel(&test, "", false);
            s.extend(sel(&clipped, " (clipped)", true));
            if !s.is_empty() {
                let p = out.join(format!("test-error_{stem}.svg"));
                line_chart(&p, &format!("test error — {title}"), "test error", &s, false)?;
                written.push(p);
            }
            let mut w = sel(&maxw, " max", false);
            w.extend(sel(&minw, " min", true));
            if !w.is_empty() {
                let p = out.join(format!("weights_{stem}.svg"));
                line_chart(&p, &format!("co-density weight (max solid, min dashed) — {title}"), "weight", &w, true)?;
                written.push(p);
            }
            let l = sel(&lossc, "", false);
            if !l.is_empty() {
                let p = out.join(format!("loss_{stem}.svg"));
                line_chart(&p, &format!("{loss} — {title}"), &loss, &l, loss == "bound")?;
                written.push(p);
            }
        }
    }
    outln!("{md}");
    eprintln!("wrote {} and {} SVG files to {}", out.join("report.md").display(), written.len(), out.display());
    Ok(())
}
