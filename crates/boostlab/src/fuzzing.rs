//! Fuzzing harnesses: one function per fuzz target, shared by the cargo-fuzz targets
//! in `fuzz/` and by the replay test `tests/fuzz_corpus.rs`, which runs every committed corpus
//! file and every regression input through the same code on stable Rust.
//!
//! Each harness takes arbitrary bytes. Errors returned by the library are the expected outcome
//! for most inputs; a harness panics only when an invariant breaks (a model holding or predicting
//! a NaN/∞, a save/load round trip that changes the model or its predictions) — those panics are
//! the fuzzer's findings, so unlike the rest of the library this module asserts on purpose.
//! Not part of the public API.

use arbitrary::{Result as ArbResult, Unstructured};

use crate::boost::adaboost::AlphaRule;
use crate::boost::driver::{Algorithm, BoostParams};
use crate::boost::multiclass::{CodeSpec, Decode, MultiOutput};
use crate::boost::secboost::OffsetOracle;
use crate::boost::tadaboost::{LearnerWeights, OverflowPolicy};
use crate::data::{
    read_csv_binned, read_csv_from, read_libsvm_from, BinMapper, Column, CsvOptions, Dataset, FeatureKind, Features,
    LabelSelector, LibsvmOptions, Target, MISSING_CODE,
};
use crate::eval::folds::parse_fold_ids;
use crate::experiment::ExperimentSpec;
use crate::math::loss::LossSpec;
use crate::model::{Ensemble, Prediction};
use crate::tree::{Criterion, GrowOrder, PureLeaves, SplitTies, TemperedLink};

/// The fuzz targets, by name (the names of `fuzz/fuzz_targets/*.rs` and `fuzz/corpus/*`).
/// `parquet` and `arrow_ipc` need the `arrow` cargo feature; without it their harnesses do nothing.
pub const TARGETS: [&str; 9] =
    ["csv", "csv_stream", "libsvm", "model_json", "spec_toml", "fold_file", "train_roundtrip", "parquet", "arrow_ipc"];

/// Runs the harness of target `name` on `data`; false for an unknown name.
pub fn run(name: &str, data: &[u8]) -> bool {
    match name {
        "csv" => csv(data),
        "csv_stream" => csv_stream(data),
        "libsvm" => libsvm(data),
        "model_json" => model_json(data),
        "spec_toml" => spec_toml(data),
        "fold_file" => fold_file(data),
        "train_roundtrip" => train_roundtrip(data),
        "parquet" => parquet(data),
        "arrow_ipc" => arrow_ipc(data),
        _ => return false,
    }
    true
}

/// Checks the invariants every dataset a reader returns must hold.
fn check_dataset(d: &Dataset) {
    let n = d.n_rows();
    assert_eq!(d.features.names.len(), d.features.columns.len());
    for c in &d.features.columns {
        assert_eq!(c.len(), n);
        match c {
            Column::Numeric(v) => assert!(v.iter().all(|x| !x.is_infinite()), "infinite feature value"),
            Column::Categorical { codes, levels } => {
                assert!(codes.iter().all(|&c| c == MISSING_CODE || (c as usize) < levels.len()), "bad code")
            }
        }
    }
    if let Some(t) = &d.target {
        assert_eq!(t.len(), n);
    }
}

/// The CSV reader: the first byte picks the options (label selector, weight column, row cap, level cap).
pub fn csv(data: &[u8]) {
    let (opt, text) = data.split_first().unwrap_or((&0, &[]));
    let label = match opt % 4 {
        0 => LabelSelector::Last,
        1 => LabelSelector::None,
        2 => LabelSelector::Name("y".into()),
        _ => LabelSelector::Prefix("l".into()),
    };
    let opts = CsvOptions {
        label,
        weight: (opt & 4 != 0).then(|| "w".to_string()),
        max_rows: (opt & 8 != 0).then_some(5),
        label_optional: opt & 16 != 0,
        positive: (opt & 32 != 0).then(|| "1".to_string()),
        kinds: (opt & 64 != 0).then(|| vec![("a".to_string(), FeatureKind::Categorical)]),
        max_levels: (opt & 128 != 0).then_some(3),
    };
    if let Ok(d) = read_csv_from(text, "fuzz.csv", &opts) {
        check_dataset(&d);
    }
}

/// The reader options the first byte of an input picks: the label selector (bits 0–1: the last
/// column, `y`, or the columns starting with `l`), a weight column `w` (bit 2) and a cap of 5 rows
/// (bit 3).
fn reader_options(opt: u8) -> (LabelSelector, Option<String>, Option<usize>) {
    let label = match opt % 3 {
        0 => LabelSelector::Last,
        1 => LabelSelector::Name("y".into()),
        _ => LabelSelector::Prefix("l".into()),
    };
    (label, (opt & 4 != 0).then(|| "w".to_string()), (opt & 8 != 0).then_some(5))
}

/// The streamed CSV reader, differentially: the first byte picks the options (label,
/// weights, row limit, positive class, bins, tiny chunks so that rows straddle chunk cuts). The
/// bytes are read both by [`read_csv_binned`] (from a temporary file) and by [`read_csv_from`]
/// followed by [`BinMapper::fit`] and `transform`; both must fail, or both succeed with the same
/// names, target, weights, bin boundaries and bins.
pub fn csv_stream(data: &[u8]) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let (opt, text) = data.split_first().unwrap_or((&0, &[]));
    let (label, weight, max_rows) = reader_options(*opt);
    let positive = (opt & 16 != 0).then(|| "1".to_string());
    let max_bins = if opt & 32 != 0 { 3 } else { 255 };
    let chunk_bytes = if opt & 64 != 0 { 1 + 7 * usize::from(opt >> 7) } else { crate::data::DEFAULT_CHUNK_BYTES };
    let path = std::env::temp_dir().join(format!(
        "boostlab-fuzz-{}-{}.csv",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::write(&path, text).is_err() {
        return;
    }
    let sopts = crate::data::StreamOptions {
        label: label.clone(),
        positive: positive.clone(),
        weight: weight.clone(),
        max_rows,
        max_bins,
        chunk_bytes,
        ..Default::default()
    };
    let streamed = read_csv_binned(&path, &sopts);
    let _ = std::fs::remove_file(&path);
    let opts = CsvOptions { label, weight, max_rows, label_optional: false, positive, kinds: None, max_levels: None };
    let whole = read_csv_from(text, "fuzz.csv", &opts).and_then(|d| {
        d.target()?;
        let m = BinMapper::fit(&d.features, max_bins, d.sample_weight.as_deref())?;
        let b = m.transform(&d.features)?;
        Ok((d, m, b))
    });
    match (streamed, whole) {
        (Ok(s), Ok((d, m, b))) => {
            assert_eq!(s.names, d.features.names, "names");
            assert_eq!(Some(&s.target), d.target.as_ref(), "target");
            assert_eq!(s.sample_weight, d.sample_weight, "weights");
            assert_eq!(s.mapper, m, "bin boundaries");
            assert_eq!(s.bins, b, "bins");
        }
        (Err(_), Err(_)) => {}
        (s, w) => panic!(
            "the streamed and whole-file readers disagree: streamed {:?}, whole {:?}",
            s.err().map(|e| e.to_string()),
            w.err().map(|e| e.to_string())
        ),
    }
}

/// The LIBSVM reader: the first byte picks the options (index base, multi-label, feature count).
pub fn libsvm(data: &[u8]) {
    let (opt, text) = data.split_first().unwrap_or((&0, &[]));
    let opts = LibsvmOptions {
        zero_based: match opt % 3 {
            0 => None,
            1 => Some(true),
            _ => Some(false),
        },
        n_features: (opt & 4 != 0).then_some(usize::from(opt >> 4)),
        positive: None,
        multilabel: opt & 8 != 0,
    };
    if let Ok(d) = read_libsvm_from(text, "fuzz.svm", &opts) {
        check_dataset(&d);
    }
}

/// Values of the fixed prediction dataset's numeric columns: ordinary, extreme and missing.
const PROBE_VALUES: [f64; 8] = [0.0, -1.0, 0.5, 3.0, f64::NAN, -1e300, 1e300, 1e-300];

/// A fixed dataset of 8 rows on the model's schema: every numeric column takes the
/// [`PROBE_VALUES`] (shifted per feature), every categorical column each level, an unseen level and
/// a missing value.
fn probe_features(m: &Ensemble) -> Features {
    let s = &m.schema;
    let columns = s
        .kinds
        .iter()
        .zip(&s.levels)
        .enumerate()
        .map(|(f, (kind, levels))| match kind {
            FeatureKind::Numeric => Column::Numeric((0..8).map(|r| PROBE_VALUES[(r + f) % 8]).collect()),
            FeatureKind::Categorical => {
                let mut levels = levels.clone().unwrap_or_default();
                levels.push("\u{1}unseen".into());
                let n_levels = levels.len() as u32;
                let codes = (0..8u32).map(|r| if r == 7 { MISSING_CODE } else { (r + f as u32) % n_levels }).collect();
                Column::Categorical { codes, levels }
            }
        })
        .collect();
    Features { names: s.names.clone(), columns }
}

/// Every prediction of `m` on `x`: scores (linear and clipped), probabilities, class scores and
/// labels. Panics on a non-finite value or a probability row that does not sum to 1.
fn check_predictions(m: &Ensemble, x: &Features) -> Vec<f64> {
    let mut all = Vec::new();
    for clipped in [false, true] {
        let s = match m.predict(x, &Prediction::scores().clipped(clipped)) {
            Ok(s) => s,
            Err(e) => panic!("a validated model cannot predict its own schema: {e}"),
        };
        assert!(s.iter().all(|v| v.is_finite()), "non-finite score");
        let p = m.proba_from_scores(&s);
        assert!(p.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)), "probability outside [0, 1]: {p:?}");
        if !matches!(m.task, crate::model::Task::Multilabel { .. })
            || matches!(m.output, Some(MultiOutput::Code { .. }))
        {
            let width = p.len() / x.n_rows().max(1);
            for row in p.chunks_exact(width.max(1)) {
                let z: f64 = row.iter().sum();
                assert!((z - 1.0).abs() < 1e-9, "probabilities sum to {z}");
            }
        }
        let cs = m.class_scores(&s);
        assert!(cs.iter().all(|v| !v.is_nan()), "NaN class score");
        let labels = m.predict_labels_from_scores(&s);
        assert_eq!(labels.len(), x.n_rows());
        let classes = m.classes_from_scores(&s);
        assert!(classes.iter().all(|&c| (c as usize) < m.task.names().len().max(1)), "class index out of range");
        all.extend(s);
        all.extend(p);
    }
    let mut stages = 0;
    let staged = m.for_each_stage(x, false, |_, s| {
        stages += 1;
        assert!(s.iter().all(|v| v.is_finite()), "non-finite staged score");
    });
    assert!(staged.is_ok());
    assert_eq!(stages, m.n_trees());
    all
}

/// Bit patterns, so that NaN-free vectors compare exactly (and −0 ≠ +0).
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Saves and reloads `m`: the reloaded model must equal it and predict bit-identically on `x`.
fn check_roundtrip(m: &Ensemble, x: &Features, predictions: &[f64]) {
    let json = match m.to_json() {
        Ok(j) => j,
        Err(e) => panic!("a valid model cannot be written: {e}"),
    };
    let back = match Ensemble::from_json(&json) {
        Ok(b) => b,
        Err(e) => panic!("a written model does not load: {e}"),
    };
    assert!(back == *m, "the reloaded model differs");
    assert_eq!(bits(&check_predictions(&back, x)), bits(predictions), "predictions changed by save/load");
}

/// The model loader followed by every prediction on a fixed dataset, then a save/load round trip.
pub fn model_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(m) = Ensemble::from_json(text) else { return };
    let x = probe_features(&m);
    let p = check_predictions(&m, &x);
    check_roundtrip(&m, &x, &p);
}

/// The experiment spec parser (TOML), then its grid expansion, cells' names and hash.
pub fn spec_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = ExperimentSpec::from_toml_str(text) {
        let settings = spec.expanded_settings();
        assert!(settings.is_ok(), "a validated spec fails to expand");
        let _ = spec.spec_hash();
        for s in settings.iter().flatten() {
            let _ = s.params.len();
        }
    }
}

/// The fold-file parser: ids are dense 0..k with k ≥ 2 and no empty fold.
pub fn fold_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(ids) = parse_fold_ids(text, "fuzz.folds") {
        let k = crate::eval::folds::n_folds(&ids);
        assert!(k >= 2 && ids.iter().all(|&i| i < k));
        for f in 0..k {
            assert!(ids.contains(&f), "fold {f} empty");
        }
    }
}

/// Every algorithm, for the structured target.
const ALGORITHMS: [Algorithm; 12] = [
    Algorithm::AdaBoost,
    Algorithm::RealAdaBoost,
    Algorithm::AbstainingAdaBoost,
    Algorithm::TAdaBoost,
    Algorithm::SecBoost,
    Algorithm::AdaBoostMH,
    Algorithm::RealAdaBoostMH,
    Algorithm::AdaBoostMO,
    Algorithm::RealAdaBoostMO,
    Algorithm::AdaBoostMR,
    Algorithm::AdaBoostM2,
    Algorithm::AdaBoost,
];

/// A number in `[lo, hi)` from one byte-pair.
fn unit(u: &mut Unstructured<'_>, lo: f64, hi: f64) -> ArbResult<f64> {
    let x = f64::from(u.arbitrary::<u16>()?) / 65536.0;
    Ok(lo + (hi - lo) * x)
}

/// A feature value: mostly small grid values (ties, duplicates), sometimes extreme or missing.
fn feature_value(u: &mut Unstructured<'_>) -> ArbResult<f64> {
    Ok(match u.int_in_range(0u8..=15)? {
        0 => f64::NAN,
        1 => 1e300,
        2 => -1e300,
        3 => 1e-300,
        4 => {
            let x: f64 = u.arbitrary()?;
            if x.is_infinite() {
                0.0
            } else {
                x
            }
        }
        v => f64::from(v) - 8.0,
    })
}

fn criterion(u: &mut Unstructured<'_>) -> ArbResult<Option<Criterion>> {
    Ok(match u.int_in_range(0u8..=5)? {
        0 => None,
        1 => Some(Criterion::Empirical),
        2 => Some(Criterion::Gini),
        3 => Some(Criterion::Entropy),
        4 => Some(Criterion::Matusita),
        _ => Some(Criterion::Tempered { t: unit(u, 0.0, 2.0)? }),
    })
}

fn loss(u: &mut Unstructured<'_>) -> ArbResult<LossSpec> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 => LossSpec::Logistic,
        1 => LossSpec::Exponential,
        2 => LossSpec::Square,
        3 => LossSpec::Hinge,
        4 => LossSpec::ZeroOne,
        5 => LossSpec::ClippedLogistic { q: unit(u, -3.0, 3.0)? },
        6 => LossSpec::Spring { q: unit(u, 0.01, 4.0)? },
        _ => LossSpec::Tempered { t: unit(u, 0.0, 2.0)? },
    })
}

/// Random valid parameters: every booster, t ∈ [0, 2), every loss, small trees and few rounds.
fn params(u: &mut Unstructured<'_>) -> ArbResult<BoostParams> {
    let mut p = BoostParams {
        algorithm: *u.choose(&ALGORITHMS)?,
        n_estimators: u.int_in_range(1..=6)?,
        max_bins: u.int_in_range(2..=300)?,
        seed: u.arbitrary()?,
        ..BoostParams::default()
    };
    let t = &mut p.tree;
    t.max_leaves = u.int_in_range(2..=6)?;
    t.max_nodes = if u.ratio(1, 8)? { Some(u.int_in_range(3..=11)?) } else { None };
    t.max_depth = if u.ratio(1, 4)? { Some(u.int_in_range(1..=3)?) } else { None };
    t.min_leaf_weight = if u.ratio(1, 4)? { unit(u, 0.0, 3.0)? } else { 0.0 };
    t.grow_order = *u.choose(&[GrowOrder::Weight, GrowOrder::Count, GrowOrder::Gain])?;
    t.criterion = criterion(u)?;
    t.pure_leaves = if u.ratio(1, 4)? { PureLeaves::Forbid } else { PureLeaves::Allow };
    t.max_split_candidates = if u.ratio(1, 4)? { Some(u.int_in_range(1..=5)?) } else { None };
    let a = &mut p.adaboost;
    a.alpha = match u.int_in_range(0u8..=6)? {
        0 => Some(AlphaRule::Discrete),
        1 => Some(AlphaRule::One),
        2 => Some(AlphaRule::LinearBound),
        3 => Some(AlphaRule::LineSearch),
        4 => Some(AlphaRule::Abstain),
        5 => Some(AlphaRule::AbstainConservative),
        _ => None,
    };
    a.smoothing = if u.ratio(1, 4)? { Some(unit(u, 0.0, 1.0)?) } else { None };
    let ta = &mut p.t_adaboost;
    ta.t = unit(u, 0.0, 2.0)?;
    ta.leaf_values = if u.arbitrary()? { TemperedLink::Canonical } else { TemperedLink::Optimal };
    ta.learner_weights = if u.arbitrary()? { LearnerWeights::CoDensity } else { LearnerWeights::Normalized };
    ta.overflow = if u.arbitrary()? { OverflowPolicy::Error } else { OverflowPolicy::Fallback };
    p.tree.split_ties = if u.ratio(1, 8)? { SplitTies::Random } else { SplitTies::Lowest };
    let s = &mut p.secboost;
    s.loss = loss(u)?;
    s.oracle = if u.arbitrary()? { OffsetOracle::Grid } else { OffsetOracle::Auto };
    s.seed = u.arbitrary()?;
    let m = &mut p.multiclass;
    if let Some(v) = p.algorithm.multi_variant() {
        m.variant = v;
    }
    m.eps = if u.ratio(1, 4)? { Some(unit(u, 0.0, 1.0)?) } else { None };
    m.code = match u.int_in_range(0u8..=2)? {
        0 => CodeSpec::OneVsAll,
        1 => CodeSpec::Random { columns: u.int_in_range(1..=8)?, seed: u.arbitrary()? },
        _ => CodeSpec::Exhaustive,
    };
    m.decode = if u.arbitrary()? { Decode::Hamming } else { Decode::Loss };
    Ok(p)
}

/// A random small dataset: 2–40 rows, 1–4 numeric or categorical features (missing values,
/// extremes, ties), 2–5 classes or 2–4 labels, optional sample weights.
fn dataset(u: &mut Unstructured<'_>, multi: bool) -> ArbResult<Option<Dataset>> {
    let n: usize = u.int_in_range(2..=40)?;
    let d: usize = u.int_in_range(1..=4)?;
    let mut columns = Vec::with_capacity(d);
    for _ in 0..d {
        if u.ratio(1, 4)? {
            let n_levels = u.int_in_range(1u32..=6)?;
            let levels = (0..n_levels).map(|l| format!("c{l}")).collect();
            let mut codes = Vec::with_capacity(n);
            for _ in 0..n {
                let c = u.int_in_range(0..=n_levels)?;
                codes.push(if c == n_levels { MISSING_CODE } else { c });
            }
            columns.push(Column::Categorical { codes, levels });
        } else {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(feature_value(u)?);
            }
            columns.push(Column::Numeric(v));
        }
    }
    let names = (0..d).map(|f| format!("x{f}")).collect();
    let target = if multi && u.ratio(1, 3)? {
        let k = u.int_in_range(2usize..=4)?;
        let mut y = Vec::with_capacity(n * k);
        for _ in 0..n * k {
            y.push(u8::from(u.arbitrary::<bool>()?));
        }
        Target::Multilabel { y, labels: (0..k).map(|l| format!("l{l}")).collect() }
    } else {
        let k = if multi { u.int_in_range(2u32..=5)? } else { 2 };
        let mut labels = Vec::with_capacity(n);
        for _ in 0..n {
            labels.push(format!("k{}", u.int_in_range(0..=k - 1)?));
        }
        match Target::from_strings(&labels, None) {
            Ok(t) => t,
            Err(_) => return Ok(None),
        }
    };
    let weights = if u.ratio(1, 4)? {
        let mut w = Vec::with_capacity(n);
        for _ in 0..n {
            w.push(f64::from(u.int_in_range(0u8..=8)?) / 2.0);
        }
        Some(w)
    } else {
        None
    };
    Ok(Dataset::new(Features { names, columns }, Some(target), weights).ok())
}

/// The structured target: random valid parameters and a random small dataset; a fit either fails
/// with an error or gives a valid model with finite numbers whose predictions survive a save/load
/// round trip bit for bit.
pub fn train_roundtrip(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(p) = params(&mut u) else { return };
    if let Err(e) = p.check() {
        panic!("the generator made invalid parameters: {e}");
    }
    let Ok(Some(d)) = dataset(&mut u, p.algorithm.multi_variant().is_some()) else { return };
    let Ok(m) = crate::Trainer::new(&p).fit(&d) else { return };
    if let Err(e) = m.validate() {
        panic!("a trained model fails validation: {e}");
    }
    assert!(m.alphas.iter().all(|a| a.is_finite()), "non-finite α");
    assert!(m.trees.iter().all(|t| t.leaf_values.iter().all(|v| v.is_finite())), "non-finite leaf value");
    assert!(m.history.iter().all(|r| r.values.values().all(|v| v.is_finite())), "non-finite diagnostic");
    let p = check_predictions(&m, &d.features);
    check_roundtrip(&m, &d.features, &p);
    let x = probe_features(&m);
    let probe = check_predictions(&m, &x);
    check_roundtrip(&m, &x, &probe);
}

/// A columnar file through every reader of its format: the first byte picks the options (label
/// selector, weight column, row cap, bins), the rest is the file. [`crate::data::read_arrow`] must
/// give a dataset that holds the readers' invariants or an error; [`crate::data::read_arrow_binned`]
/// and the prediction blocks ([`crate::data::ArrowBlocks`]) must return, not panic.
#[cfg(feature = "arrow")]
fn columnar(data: &[u8], format: crate::data::ArrowFormat, ext: &str) {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let (opt, bytes) = data.split_first().unwrap_or((&0, &[]));
    let (label, weight, max_rows) = reader_options(*opt);
    let path = std::env::temp_dir().join(format!(
        "boostlab-fuzz-{}-{}.{ext}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    let opts = CsvOptions { label: label.clone(), weight: weight.clone(), max_rows, ..Default::default() };
    if let Ok(d) = crate::data::read_arrow(&path, format, &opts) {
        check_dataset(&d);
        let kinds = d.features.names.iter().cloned().zip(d.features.columns.iter().map(Column::kind)).collect();
        if let Ok(blocks) = crate::data::ArrowBlocks::open(&path, format, kinds, label.clone(), 3) {
            for b in blocks.take(64).flatten() {
                assert!(b.features.columns.iter().all(|c| c.len() == b.features.columns[0].len()));
            }
        }
    }
    let sopts = crate::data::StreamOptions {
        label,
        weight,
        max_rows,
        max_bins: if opt & 16 != 0 { 3 } else { 255 },
        ..Default::default()
    };
    if let Ok(t) = crate::data::read_arrow_binned(&path, format, &sopts) {
        assert_eq!(t.bins.n_rows, t.target.len(), "binned rows");
        assert_eq!(t.bins.n_features, t.names.len(), "binned features");
    }
    let _ = std::fs::remove_file(&path);
}

/// The Parquet reader (see `columnar` below); nothing without the `arrow` feature.
pub fn parquet(data: &[u8]) {
    #[cfg(feature = "arrow")]
    columnar(data, crate::data::ArrowFormat::Parquet, "parquet");
    #[cfg(not(feature = "arrow"))]
    let _ = data;
}

/// The Arrow IPC reader, file and stream formats (see `columnar` below); nothing without the `arrow`
/// feature.
pub fn arrow_ipc(data: &[u8]) {
    #[cfg(feature = "arrow")]
    columnar(data, crate::data::ArrowFormat::Ipc, "arrow");
    #[cfg(not(feature = "arrow"))]
    let _ = data;
}
