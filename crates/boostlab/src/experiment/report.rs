//! Report computations on recorded cells: summaries, paired t-tests against a reference setting
//! (the paper's Table 2 counts), mean curves, and the Markdown rendering.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::storage::{CellRecord, CellResult};
use crate::error::{Error, Result};
use crate::eval::stats::{compare, mean, paired_t_test, sample_std, Comparison};

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
    /// docs/explanation/tadaboost.md#tadaboost-algorithm).
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
    /// Significance level of the two-sided paired t-test. Default 0.1 (docs/explanation/experiments.md#experiments); valid `(0, 1]`.
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
}
