//! Flags shared by several commands: data loading and boosting parameters.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use boostlab::data::{
    read_csv, read_csv_binned, read_libsvm, BinnedData, CsvOptions, FeatureKind, LabelSelector, LibsvmOptions,
    StreamOptions,
};
use boostlab::tree::{Criterion, GrowOrder, PureLeaves};
use boostlab::{Algorithm, BoostParams, Dataset};
use clap::{Args, ValueEnum};

/// Where the data come from and how to read them.
#[derive(Args, Debug, Clone)]
pub struct DataArgs {
    /// Data file: CSV with a header, LIBSVM (.svm/.libsvm/.svmlight), Parquet (.parquet) or Arrow
    /// IPC (.arrow/.feather/.ipc); by extension, or --format.
    #[arg(long)]
    pub data: PathBuf,
    /// File format. By default from the extension (csv unless .svm, .libsvm, .svmlight).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Label column (CSV). By default the last column.
    #[arg(long)]
    pub label: Option<String>,
    /// Multi-label: comma-separated 0/1 label columns, or `PREFIX*` for every column starting with
    /// PREFIX (e.g. `label_*`).
    #[arg(long)]
    pub labels: Option<String>,
    /// Positive class of binary labels. By default the larger label (1 for 0/1 and −1/+1, the
    /// later name in alphabetical order for strings).
    #[arg(long)]
    pub positive: Option<String>,
    /// Sample-weight column (CSV).
    #[arg(long)]
    pub weight: Option<String>,
    /// Read only the first N data rows.
    #[arg(long)]
    pub max_rows: Option<usize>,
}

/// Input formats.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// LIBSVM / SVMlight sparse format.
    Libsvm,
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC (file or stream format; Feather v2).
    Arrow,
}

impl Format {
    /// The format given with `--format`, or else the one the file's extension says: LIBSVM for
    /// `.svm`, `.libsvm`, `.svmlight`, Parquet for `.parquet`, `.pq`, Arrow IPC for `.arrow`,
    /// `.feather`, `.ipc`, `.arrows`, CSV otherwise.
    pub fn of(path: &Path, given: Option<Format>) -> Format {
        given.unwrap_or_else(|| {
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_lowercase();
            match ext.as_str() {
                "svm" | "libsvm" | "svmlight" => Format::Libsvm,
                "parquet" | "pq" => Format::Parquet,
                "arrow" | "feather" | "ipc" | "arrows" => Format::Arrow,
                _ => Format::Csv,
            }
        })
    }

    /// The library's columnar format, or an error when this build has no Parquet/Arrow support.
    #[cfg(feature = "arrow")]
    pub fn columnar(self) -> Result<boostlab::data::ArrowFormat> {
        Ok(match self {
            Format::Parquet => boostlab::data::ArrowFormat::Parquet,
            _ => boostlab::data::ArrowFormat::Ipc,
        })
    }

    /// The library's columnar format, or an error when this build has no Parquet/Arrow support.
    #[cfg(not(feature = "arrow"))]
    pub fn columnar(self) -> Result<std::convert::Infallible> {
        bail!("this boostlab was built without Parquet/Arrow support (cargo feature `arrow`)")
    }
}

impl DataArgs {
    /// The label selector these flags describe.
    pub fn selector(&self) -> LabelSelector {
        if let Some(l) = &self.labels {
            if let Some(p) = l.strip_suffix('*') {
                LabelSelector::Prefix(p.to_string())
            } else {
                LabelSelector::Multi(l.split(',').map(|s| s.trim().to_string()).collect())
            }
        } else if let Some(l) = &self.label {
            LabelSelector::Name(l.clone())
        } else {
            LabelSelector::Last
        }
    }

    fn format(&self) -> Format {
        Format::of(&self.data, self.format)
    }

    /// Reads the training data straight into bins (issue 12): CSV in parallel chunks, Parquet and
    /// Arrow one column at a time; the table is never held as text or floats. LIBSVM files are
    /// read whole, then binned.
    pub fn load_binned(&self, max_bins: usize) -> Result<BinnedData> {
        let opts = StreamOptions {
            label: self.selector(),
            positive: self.positive.clone(),
            weight: self.weight.clone(),
            max_rows: self.max_rows,
            max_bins,
            ..Default::default()
        };
        let path = &self.data;
        let table = match self.format() {
            Format::Csv => read_csv_binned(path, &opts)?,
            Format::Libsvm => {
                let d = self.load()?;
                d.check_trainable()?;
                return Ok(BinnedData::from_dataset(&d, max_bins)?);
            }
            f @ (Format::Parquet | Format::Arrow) => {
                #[cfg(feature = "arrow")]
                {
                    boostlab::data::read_arrow_binned(path, f.columnar()?, &opts)?
                }
                #[cfg(not(feature = "arrow"))]
                match f.columnar()? {}
            }
        };
        Ok(table.into_binned_data()?)
    }

    /// Reads the training data.
    pub fn load(&self) -> Result<Dataset> {
        load(
            &self.data,
            self.format(),
            self.selector(),
            self.positive.clone(),
            self.weight.clone(),
            self.max_rows,
            None,
            None,
        )
    }
}

/// Reads a data file. `kinds` forces feature kinds (a model's schema); `n_features` fixes the
/// LIBSVM width.
#[allow(clippy::too_many_arguments)]
pub fn load(
    path: &Path,
    format: Format,
    label: LabelSelector,
    positive: Option<String>,
    weight: Option<String>,
    max_rows: Option<usize>,
    kinds: Option<Vec<(String, FeatureKind)>>,
    n_features: Option<usize>,
) -> Result<Dataset> {
    let label_optional = kinds.is_some();
    match format {
        Format::Csv => {
            let opts = CsvOptions { label, positive, weight, kinds, max_rows, label_optional };
            Ok(read_csv(path, &opts)?)
        }
        Format::Libsvm => {
            if weight.is_some() {
                bail!("--weight is for CSV files");
            }
            let opts = LibsvmOptions { positive, n_features, ..Default::default() };
            let mut d = read_libsvm(path, &opts)?;
            if let Some(m) = max_rows {
                if m < d.n_rows() {
                    d = d.subset(&(0..m).collect::<Vec<_>>());
                }
            }
            Ok(d)
        }
        f @ (Format::Parquet | Format::Arrow) => {
            #[cfg(feature = "arrow")]
            {
                let opts = CsvOptions { label, positive, weight, kinds, max_rows, label_optional };
                Ok(boostlab::data::read_arrow(path, f.columnar()?, &opts)?)
            }
            #[cfg(not(feature = "arrow"))]
            {
                let _ = (label, positive, weight, max_rows, label_optional);
                match f.columnar()? {}
            }
        }
    }
}

/// Boosting parameters shared by `train`, `cv` and friends.
#[derive(Args, Debug, Clone)]
pub struct BoostArgs {
    /// Algorithm: adaboost, real-adaboost, abstaining-adaboost, t-adaboost, secboost, adaboost-mh,
    /// real-adaboost-mh, adaboost-mo, real-adaboost-mo, adaboost-mr, adaboost-m2.
    #[arg(long, default_value = "adaboost")]
    pub algo: String,
    /// Number of boosting rounds.
    #[arg(long, default_value_t = 100)]
    pub rounds: usize,
    /// Maximum number of leaves per tree (2 = stumps).
    #[arg(long)]
    pub max_leaves: Option<usize>,
    /// Maximum number of nodes per tree ("size 15" = 8 leaves); overrides --max-leaves.
    #[arg(long)]
    pub max_nodes: Option<usize>,
    /// Maximum tree depth.
    #[arg(long)]
    pub max_depth: Option<usize>,
    /// Minimum total weight of a child.
    #[arg(long)]
    pub min_leaf_weight: Option<f64>,
    /// Split criterion: empirical, gini, entropy, matusita, tempered:t=T. By default the booster's.
    #[arg(long)]
    pub criterion: Option<String>,
    /// Leaf order of best-first growth.
    #[arg(long, value_enum, default_value = "weight")]
    pub grow_order: GrowOrderArg,
    /// Evaluate at most N (feature, threshold) candidates per node (a seeded random subset).
    #[arg(long)]
    pub max_split_candidates: Option<usize>,
    /// Whether splits may create pure leaves.
    #[arg(long, value_enum, default_value = "allow")]
    pub pure_leaves: PureLeavesArg,
    /// Maximum value bins per feature.
    #[arg(long, default_value_t = 255)]
    pub max_bins: usize,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// α rule (adaboost, real-adaboost): discrete, one, linear-bound, line-search.
    #[arg(long)]
    pub alpha: Option<String>,
    /// Leaf smoothing ε of Real AdaBoost and real AdaBoost.MH/MO (weights sum to 1). By default 1/(2m).
    #[arg(long)]
    pub smoothing: Option<f64>,
    /// t-AdaBoost: the temperature t in [0, 2) (1 = AdaBoost).
    #[arg(long)]
    pub t: Option<f64>,
    /// t-AdaBoost: tempered leaf values, optimal (default) or canonical.
    #[arg(long)]
    pub leaf_values: Option<String>,
    /// t-AdaBoost: weights given to the tree, normalized (default) or co-density.
    #[arg(long)]
    pub learner_weights: Option<String>,
    /// t-AdaBoost, t > 1: fallback (default, the authors' rule) or error when a weight overflows.
    #[arg(long)]
    pub overflow: Option<String>,
    /// t-AdaBoost: exactly what the authors' code does (count order, canonical leaves, pure
    /// leaves forbidden, 2000-candidate cap).
    #[arg(long)]
    pub authors_mode: bool,
    /// SecBoost loss: logistic, exponential, square, hinge, zero-one, clipped-logistic:q=-2,
    /// spring:Q=500, tempered:t=0.5.
    #[arg(long)]
    pub loss: Option<String>,
    /// SecBoost: the initial step δ of Solve_α.
    #[arg(long)]
    pub delta_init: Option<f64>,
    /// SecBoost: α rule, auto (closed form when the loss declares β) or solve (always Solve_α).
    #[arg(long)]
    pub secboost_alpha: Option<String>,
    /// SecBoost: offset oracle, auto (dichotomic for convex losses) or grid.
    #[arg(long)]
    pub oracle: Option<String>,
    /// SecBoost: the constant initial score h_0 (the 0/1 loss needs h_0 ≠ 0).
    #[arg(long)]
    pub h0: Option<f64>,
    /// AdaBoost.MO output code: one-vs-all, random:K (or random:K:SEED), exhaustive.
    #[arg(long)]
    pub code: Option<String>,
    /// AdaBoost.MO decoding: loss (default) or hamming.
    #[arg(long)]
    pub decode: Option<String>,
    /// AdaBoost.MH on single-label data: start from D_1(i, y_i) = 1/(2m).
    #[arg(long)]
    pub single_label_start: bool,
}

/// `--grow-order` values.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum GrowOrderArg {
    /// Heaviest leaf first (default).
    Weight,
    /// Leaf with most examples first (the t-AdaBoost authors' code).
    Count,
    /// Largest gain first (LightGBM).
    Gain,
}

/// `--pure-leaves` values.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum PureLeavesArg {
    /// Pure leaves allowed (default).
    Allow,
    /// Both children must hold both classes.
    Forbid,
}

/// Parses `empirical|gini|entropy|matusita|tempered:t=T`.
pub fn parse_criterion(s: &str) -> Result<Criterion> {
    Ok(match s {
        "empirical" => Criterion::Empirical,
        "gini" => Criterion::Gini,
        "entropy" => Criterion::Entropy,
        "matusita" => Criterion::Matusita,
        other => {
            let t = other.strip_prefix("tempered:t=").and_then(|t| t.parse::<f64>().ok()).with_context(|| {
                format!("unknown criterion '{other}': expected empirical, gini, entropy, matusita or tempered:t=T")
            })?;
            Criterion::Tempered { t }
        }
    })
}

fn parse_enum<T: serde::de::DeserializeOwned>(name: &str, s: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).with_context(|| format!("invalid --{name} '{s}'"))
}

impl BoostArgs {
    /// The library parameters these flags describe.
    pub fn params(&self) -> Result<BoostParams> {
        let mut p = BoostParams {
            algorithm: Algorithm::parse(&self.algo)?,
            n_estimators: self.rounds,
            max_bins: self.max_bins,
            seed: self.seed,
            ..Default::default()
        };
        let t = &mut p.tree;
        if let Some(l) = self.max_leaves {
            t.max_leaves = l;
        }
        t.max_nodes = self.max_nodes;
        t.max_depth = self.max_depth;
        if let Some(w) = self.min_leaf_weight {
            t.min_leaf_weight = w;
        }
        t.criterion = self.criterion.as_deref().map(parse_criterion).transpose()?;
        t.grow_order = match self.grow_order {
            GrowOrderArg::Weight => GrowOrder::Weight,
            GrowOrderArg::Count => GrowOrder::Count,
            GrowOrderArg::Gain => GrowOrder::Gain,
        };
        t.pure_leaves = match self.pure_leaves {
            PureLeavesArg::Allow => PureLeaves::Allow,
            PureLeavesArg::Forbid => PureLeaves::Forbid,
        };
        t.max_split_candidates = self.max_split_candidates;
        p.adaboost.alpha = self.alpha.as_deref().map(|a| parse_enum("alpha", a)).transpose()?;
        p.adaboost.smoothing = self.smoothing;
        // Options of one booster given to another are mistakes, not no-ops.
        let only = |given: bool, flag: &str, algos: &[Algorithm]| -> Result<()> {
            if given && !algos.contains(&p.algorithm) {
                let names: Vec<&str> = algos.iter().map(|a| a.name()).collect();
                bail!("{flag} applies to --algo {}, not {}", names.join(" / "), p.algorithm.name());
            }
            Ok(())
        };
        let mh = [Algorithm::AdaBoostMH, Algorithm::RealAdaBoostMH];
        let mo = [Algorithm::AdaBoostMO, Algorithm::RealAdaBoostMO];
        let t_ada = [Algorithm::TAdaBoost];
        only(self.t.is_some(), "--t", &t_ada)?;
        only(self.leaf_values.is_some(), "--leaf-values", &t_ada)?;
        only(self.learner_weights.is_some(), "--learner-weights", &t_ada)?;
        only(self.overflow.is_some(), "--overflow", &t_ada)?;
        only(self.authors_mode, "--authors-mode", &t_ada)?;
        let sec = [Algorithm::SecBoost];
        only(self.loss.is_some(), "--loss", &sec)?;
        only(self.delta_init.is_some(), "--delta-init", &sec)?;
        only(self.secboost_alpha.is_some(), "--secboost-alpha", &sec)?;
        only(self.oracle.is_some(), "--oracle", &sec)?;
        only(self.h0.is_some(), "--h0", &sec)?;
        only(self.code.is_some(), "--code", &mo)?;
        only(self.decode.is_some(), "--decode", &mo)?;
        only(self.single_label_start, "--single-label-start", &mh)?;
        let ta = &mut p.t_adaboost;
        if let Some(t) = self.t {
            ta.t = t;
        }
        if let Some(v) = &self.leaf_values {
            ta.leaf_values = parse_enum("leaf-values", v)?;
        }
        if let Some(v) = &self.learner_weights {
            ta.learner_weights = parse_enum("learner-weights", v)?;
        }
        if let Some(v) = &self.overflow {
            ta.overflow = parse_enum("overflow", v)?;
        }
        ta.authors_mode = self.authors_mode;
        let sb = &mut p.secboost;
        if let Some(l) = &self.loss {
            sb.loss = l.parse()?;
        }
        if let Some(d) = self.delta_init {
            sb.delta_init = d;
        }
        if let Some(v) = &self.secboost_alpha {
            sb.alpha_rule = parse_enum("secboost-alpha", v)?;
        }
        if let Some(v) = &self.oracle {
            sb.oracle = parse_enum("oracle", v)?;
        }
        if let Some(h) = self.h0 {
            sb.h0 = h;
        }
        sb.seed = self.seed;
        let mc = &mut p.multiclass;
        mc.eps = self.smoothing;
        if let Some(c) = &self.code {
            mc.code = c.parse()?;
        }
        if let Some(d) = &self.decode {
            mc.decode = d.parse()?;
        }
        mc.single_label_start = self.single_label_start;
        if p.algorithm.multi_variant().is_some() {
            mc.variant = p.algorithm.multi_variant().unwrap_or_default();
        }
        p.check()?;
        Ok(p)
    }
}
