//! The boostlab side of the side-by-side benchmark (`bash bench/run.sh`, see `bench/README.md`).
//!
//! `fit` loads raw little-endian `f32` row-major matrices and `u8` labels written by
//! `bench/run.py`, times `boostlab::Trainer::fit` (binning included, loading excluded) and, optionally,
//! prediction, and prints one JSON object: times, accuracy, peak RSS per phase, and the staged
//! training-error curve on request. `bandwidth` measures the machine's memory-read bandwidth.
//! The thread count is rayon's (`RAYON_NUM_THREADS`). `fit --traffic` (a build with the feature
//! `traffic`) adds the counted memory traffic of the fit: bytes per row per round, by pass.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use boostlab::boost::tadaboost::TAdaBoostParams;
use boostlab::data::Column;
use boostlab::tree::Criterion;
use boostlab::Prediction;
use boostlab::{Algorithm, BoostParams, Dataset, Features, Target, Trainer};
use clap::{Parser, Subcommand};
use rayon::prelude::*;
use serde_json::json;

#[derive(Parser)]
#[command(about = "boostlab side of the side-by-side benchmark")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Fit (and optionally predict) one model; prints a JSON object.
    Fit(Box<FitArgs>),
    /// Reads a CSV file into bins (`boostlab::data::read_csv_binned`, as `boostlab train` does) and
    /// prints the time, the rows and a checksum of the bins.
    Csv {
        /// The CSV file (header, label in the last column).
        path: PathBuf,
    },
    /// Memory-read bandwidth (GB/s) with the current rayon pool.
    Bandwidth {
        /// Buffer size in MiB.
        #[arg(long, default_value_t = 512)]
        mib: usize,
    },
}

#[derive(clap::Args)]
struct FitArgs {
    /// Training matrix (`f32`, row-major, `n × d`); required unless `--model-in` is given.
    #[arg(long, required_unless_present = "model_in")]
    train_x: Option<PathBuf>,
    /// Training labels (`u8` class indices); required unless `--model-in` is given.
    #[arg(long, required_unless_present = "model_in")]
    train_y: Option<PathBuf>,
    /// Number of features.
    #[arg(long)]
    d: usize,
    /// Test matrix and labels (accuracy).
    #[arg(long)]
    test_x: Option<PathBuf>,
    #[arg(long)]
    test_y: Option<PathBuf>,
    /// Matrix to time prediction on (loaded after fitting).
    #[arg(long)]
    predict_x: Option<PathBuf>,
    /// Number of classes.
    #[arg(long, default_value_t = 2)]
    classes: usize,
    /// Algorithm name (`adaboost`, `real-adaboost`, `t-adaboost`, `real-adaboost-mh`, ...);
    /// required unless `--model-in` is given.
    #[arg(long, required_unless_present = "model_in")]
    algorithm: Option<String>,
    #[arg(long, default_value_t = 200)]
    rounds: usize,
    #[arg(long, default_value_t = 2)]
    leaves: usize,
    /// Temperature of t-AdaBoost.
    #[arg(long, default_value_t = 0.8)]
    t: f64,
    /// Shrinkage (the library's default, 1, when not given; the Python estimators' binary
    /// boosters default to 0.5 or 0.1).
    #[arg(long)]
    learning_rate: Option<f64>,
    /// Split criterion override (`gini`, `empirical`, `matusita`).
    #[arg(long)]
    criterion: Option<String>,
    #[arg(long, default_value_t = 255)]
    max_bins: usize,
    /// Also report the staged training-error curve (not timed).
    #[arg(long)]
    curve: bool,
    /// Write the model JSON here.
    #[arg(long)]
    model_out: Option<PathBuf>,
    /// Load this model instead of fitting one (times prediction only; the training options are
    /// then ignored).
    #[arg(long)]
    model_in: Option<PathBuf>,
    /// Report the fit's counted memory traffic (`"traffic"`: bytes per row per round, by pass);
    /// needs a build with the feature `traffic`.
    #[arg(long)]
    traffic: bool,
}

/// The counted traffic of a fit of `n` rows: per pass, bytes read and written and gathered
/// reads per row per round, and their totals.
fn traffic_json(s: &boostlab::traffic::Snapshot, n: usize) -> serde_json::Value {
    let per = (n as f64 * s.rounds.max(1) as f64).max(1.0);
    let one = |p: boostlab::traffic::PassBytes| {
        json!({
            "read": p.read as f64 / per,
            "written": p.written as f64 / per,
            "gathered_reads": p.gathered_reads as f64 / per,
        })
    };
    let passes: serde_json::Map<String, serde_json::Value> =
        boostlab::traffic::Pass::ALL.iter().map(|&p| (p.name().to_string(), one(s.get(p)))).collect();
    json!({ "rows": n, "rounds": s.rounds, "passes": passes, "total": one(s.total()) })
}

/// (VmRSS, VmHWM) of this process in KiB.
fn rss_kib() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets the peak-RSS counter (Linux ≥ 4.0), so that each phase reports its own peak.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Reads a row-major `f32` matrix straight into `f64` columns, in chunks (no full `f32` copy).
fn read_features(path: &Path, d: usize) -> Result<Features> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let bytes = file.metadata()?.len() as usize;
    if d == 0 || !bytes.is_multiple_of(4 * d) {
        bail!("{}: {bytes} bytes is not a multiple of 4 × {d}", path.display());
    }
    let n = bytes / (4 * d);
    let mut cols: Vec<Vec<f64>> = (0..d).map(|_| Vec::with_capacity(n)).collect();
    let mut r = BufReader::with_capacity(1 << 20, file);
    let rows_per_chunk = 4096;
    let mut buf = vec![0u8; rows_per_chunk * d * 4];
    let mut left = n;
    while left > 0 {
        let rows = left.min(rows_per_chunk);
        let chunk = &mut buf[..rows * d * 4];
        r.read_exact(chunk)?;
        for row in chunk.chunks_exact(d * 4) {
            for (c, v) in cols.iter_mut().zip(row.chunks_exact(4)) {
                c.push(f64::from(f32::from_le_bytes([v[0], v[1], v[2], v[3]])));
            }
        }
        left -= rows;
    }
    Ok(Features {
        names: (0..d).map(|f| format!("f{f}")).collect(),
        columns: cols.into_iter().map(Column::Numeric).collect(),
    })
}

fn read_dataset(x: &Path, y: &Path, d: usize, classes: usize) -> Result<Dataset> {
    let features = read_features(x, d)?;
    let y: Vec<u32> = std::fs::read(y)?.into_iter().map(u32::from).collect();
    let target = Target::Classes { y, classes: (0..classes).map(|c| c.to_string()).collect() };
    Ok(Dataset::new(features, Some(target), None)?)
}

fn labels(d: &Dataset) -> &[u32] {
    match &d.target {
        Some(Target::Classes { y, .. }) => y,
        _ => &[],
    }
}

fn params(a: &FitArgs) -> Result<BoostParams> {
    let mut p = BoostParams {
        algorithm: Algorithm::parse(a.algorithm.as_deref().unwrap_or_default())?,
        n_estimators: a.rounds,
        max_bins: a.max_bins,
        ..Default::default()
    };
    p.tree.max_leaves = a.leaves;
    if let Some(lr) = a.learning_rate {
        p.learning_rate = lr;
    }
    // The peers' fits do not calibrate their probabilities: the same work, the trees alone.
    p.calibration = boostlab::params::CalibrationParams::none();
    if p.algorithm == Algorithm::TAdaBoost {
        p.t_adaboost = TAdaBoostParams { t: a.t, ..Default::default() };
    }
    p.tree.criterion = match a.criterion.as_deref() {
        None => None,
        Some("gini") => Some(Criterion::Gini),
        Some("empirical") => Some(Criterion::Empirical),
        Some("matusita") => Some(Criterion::Matusita),
        Some(c) => bail!("unknown criterion {c}"),
    };
    Ok(p)
}

fn run_fit(a: &FitArgs) -> Result<serde_json::Value> {
    let Some(path) = &a.model_in else {
        return fit_and_predict(a);
    };
    let model = boostlab::Ensemble::load(path)?;
    let out = json!({
        "library": "boostlab",
        "threads": rayon::current_num_threads(),
        "model_in": path.display().to_string(),
        "rounds": model.n_trees(),
    });
    evaluate(a, &model, out)
}

fn fit_and_predict(a: &FitArgs) -> Result<serde_json::Value> {
    let (Some(train_x), Some(train_y)) = (&a.train_x, &a.train_y) else {
        bail!("--train-x and --train-y are required without --model-in");
    };
    let train = read_dataset(train_x, train_y, a.d, a.classes)?;
    let p = params(a)?;
    if a.traffic && !cfg!(feature = "traffic") {
        bail!("--traffic needs boostlab-bench built with `--features traffic`");
    }
    let (rss_loaded, _) = rss_kib();
    reset_peak();
    let _ = boostlab::traffic::take();
    // A round's time: the median interval between rounds' ends, the first round left out (it
    // follows the binning), steadier than the difference of two fits' times.
    let mut ends = Vec::new();
    let mut on_round = |_: &boostlab::RoundRecord| ends.push(Instant::now());
    let t0 = Instant::now();
    let model = Trainer::new(&p).on_round(&mut on_round).fit(&train)?;
    let fit_s = t0.elapsed().as_secs_f64();
    let mut gaps: Vec<f64> = ends.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    gaps.sort_by(f64::total_cmp);
    let counted = boostlab::traffic::take();
    let (_, hwm_fit) = rss_kib();
    let mut out = json!({
        "library": "boostlab",
        "threads": rayon::current_num_threads(),
        "n_train": train.n_rows(),
        "fit_s": fit_s,
        "rounds": model.n_trees(),
        "per_round_s": fit_s / model.n_trees().max(1) as f64,
        "round_median_s": gaps.get(gaps.len() / 2).copied(),
        "rss_loaded_kib": rss_loaded,
        "peak_fit_kib": hwm_fit,
    });
    if a.traffic {
        out["traffic"] = traffic_json(&counted, train.n_rows());
    }
    if a.curve {
        let y = labels(&train);
        let mut curve = Vec::new();
        model.for_each_stage(&train.features, false, |_, s| {
            let pred = model.classes_from_scores(s);
            curve.push(pred.iter().zip(y).filter(|(p, y)| p != y).count() as f64 / y.len() as f64);
        })?;
        out["train_error_curve"] = json!(curve);
    }
    if let Some(path) = &a.model_out {
        model.save(path)?;
    }
    drop(train);
    evaluate(a, &model, out)
}

/// Test accuracy and timed prediction (each optional) of a fitted or loaded model.
fn evaluate(a: &FitArgs, model: &boostlab::Ensemble, mut out: serde_json::Value) -> Result<serde_json::Value> {
    if let (Some(tx), Some(ty)) = (&a.test_x, &a.test_y) {
        let test = read_dataset(tx, ty, a.d, a.classes)?;
        let pred = model.classes_from_scores(&model.predict(&test.features, &Prediction::scores())?);
        let right = pred.iter().zip(labels(&test)).filter(|(p, y)| p == y).count();
        out["accuracy"] = json!(right as f64 / pred.len().max(1) as f64);
    }
    if let Some(px) = &a.predict_x {
        let x = read_features(px, a.d)?;
        let (rss_before, _) = rss_kib();
        reset_peak();
        let t0 = Instant::now();
        let pred = model.classes_from_scores(&model.predict(&x, &Prediction::scores())?);
        out["predict_s"] = json!(t0.elapsed().as_secs_f64());
        out["predict_rows"] = json!(pred.len());
        out["predict_positive"] = json!(pred.iter().filter(|&&c| c == 1).count());
        let (_, hwm) = rss_kib();
        out["rss_predict_loaded_kib"] = json!(rss_before);
        out["peak_predict_kib"] = json!(hwm);
    }
    Ok(out)
}

/// Sums a large buffer of `u64` in parallel (each thread streams its own half of the chunks);
/// best of 5 passes.
fn bandwidth(mib: usize) -> serde_json::Value {
    let n = mib * (1 << 20) / 8;
    let v: Vec<u64> = (0..n as u64).collect();
    let mut best = f64::INFINITY;
    let mut check = 0u64;
    for _ in 0..5 {
        let t0 = Instant::now();
        let s: u64 = v.par_chunks(1 << 16).map(|c| c.iter().fold(0u64, |a, &b| a.wrapping_add(b))).sum();
        best = best.min(t0.elapsed().as_secs_f64());
        check = check.wrapping_add(s);
    }
    json!({ "threads": rayon::current_num_threads(), "mib": mib, "gb_per_s": (n * 8) as f64 / best / 1e9, "check": check })
}

fn read_csv(path: &Path) -> Result<serde_json::Value> {
    let bytes = std::fs::metadata(path)?.len();
    let t0 = Instant::now();
    let table = boostlab::data::read_csv_binned(path, &boostlab::data::StreamOptions::default())?;
    let s = t0.elapsed().as_secs_f64();
    // FNV-1a of the bins and thresholds: equal checksums, equal tables.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
    match &table.bins.data {
        boostlab::data::BinData::U8(v) => v.iter().for_each(|&b| eat(b)),
        boostlab::data::BinData::U16(v) => v.iter().flat_map(|b| b.to_le_bytes()).for_each(&mut eat),
    }
    for f in &table.mapper.features {
        if let boostlab::data::FeatureBins::Numeric { thresholds } = f {
            thresholds.iter().flat_map(|t| t.to_bits().to_le_bytes()).for_each(&mut eat);
        }
    }
    Ok(
        json!({"read_s": s, "mb_per_s": bytes as f64 / 1e6 / s, "rows": table.bins.n_rows, "checksum": format!("{h:016x}"),
              "peak_rss_kib": rss_kib().1}),
    )
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let v = match cli.cmd {
        Cmd::Fit(a) => run_fit(&a)?,
        Cmd::Bandwidth { mib } => bandwidth(mib),
        Cmd::Csv { path } => read_csv(&path)?,
    };
    println!("{v}");
    Ok(())
}
