//! Boosting parameters: the flags and the library parameters they describe.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use boostlab::boost::preset::Preset;
use boostlab::boost::tadaboost::{LearnerWeights, OverflowPolicy};
use boostlab::tree::{GrowOrder, PureLeaves, SplitTies, TemperedLink};
use boostlab::{Algorithm, BoostParams};
use clap::{Args, ValueEnum};
use serde_json::{Map, Value};

/// Boosting parameters shared by `train`, `cv` and friends.
///
/// Every option is optional: what is not given takes the preset's value (`--preset`,
/// `--authors-mode`) or else the library's default, and what is given always wins.
#[derive(Args, Debug, Clone)]
pub struct BoostArgs {
    /// Algorithm: adaboost, real-adaboost, abstaining-adaboost, t-adaboost, secboost, adaboost-mh,
    /// real-adaboost-mh, adaboost-mo, real-adaboost-mo, adaboost-mr, adaboost-m2.
    #[arg(long, help_heading = "Booster", default_value = "adaboost")]
    pub algo: String,
    /// Number of boosting rounds [default: 100].
    #[arg(long, help_heading = "Booster")]
    pub rounds: Option<usize>,
    /// Maximum number of leaves per tree [default: 2, stumps].
    #[arg(long, help_heading = "Tree")]
    pub max_leaves: Option<usize>,
    /// Maximum number of nodes per tree ("size 15" = 8 leaves); overrides --max-leaves.
    #[arg(long, help_heading = "Tree")]
    pub max_nodes: Option<usize>,
    /// Maximum tree depth.
    #[arg(long, help_heading = "Tree")]
    pub max_depth: Option<usize>,
    /// Minimum total weight of a child [default: 0].
    #[arg(long, help_heading = "Tree", allow_negative_numbers = true)]
    pub min_leaf_weight: Option<f64>,
    /// Split criterion: empirical, gini, entropy, matusita, tempered:t=T. By default the booster's.
    #[arg(long, help_heading = "Tree", allow_hyphen_values = true)]
    pub criterion: Option<String>,
    /// Leaf order of best-first growth [default: weight].
    #[arg(long, help_heading = "Tree", value_enum)]
    pub grow_order: Option<GrowOrderArg>,
    /// Evaluate at most N (feature, threshold) candidates per node (a seeded random subset)
    /// [default: all].
    #[arg(long, help_heading = "Tree")]
    pub max_split_candidates: Option<usize>,
    /// Whether splits may create pure leaves [default: allow].
    #[arg(long, help_heading = "Tree", value_enum)]
    pub pure_leaves: Option<PureLeavesArg>,
    /// Ties between equally good splits (gains within 1e-12 of the node weight): lowest feature
    /// index first, or a uniform draw from the seed [default: lowest; random in --authors-mode].
    #[arg(long, help_heading = "Tree", value_enum)]
    pub split_ties: Option<SplitTiesArg>,
    /// Maximum value bins per feature [default: 255].
    #[arg(long, help_heading = "Data")]
    pub max_bins: Option<usize>,
    /// Random seed [default: 0].
    #[arg(long, help_heading = "Booster")]
    pub seed: Option<u64>,
    /// A preset: a named set of defaults that the options given here override. `authors`:
    /// t-AdaBoost as the authors' code runs it.
    #[arg(long, help_heading = "Booster")]
    pub preset: Option<String>,
    /// α rule (adaboost, real-adaboost): discrete, one, linear-bound, line-search.
    #[arg(long, help_heading = "Booster")]
    pub alpha: Option<String>,
    /// Leaf smoothing ε of Real AdaBoost and real AdaBoost.MH/MO (weights sum to 1). By default 1/(2m).
    #[arg(long, help_heading = "Booster", allow_negative_numbers = true)]
    pub smoothing: Option<f64>,
    /// t-AdaBoost: the temperature t in [0, 2) (1 = AdaBoost), or `auto`: chosen from
    /// --t-grid by inner stratified cross-validation (--t-folds folds), then refit.
    #[arg(long, help_heading = "Booster", allow_negative_numbers = true, value_parser = parse_t_arg)]
    pub t: Option<TArg>,
    /// t-AdaBoost, --t auto: the candidate temperatures, comma-separated
    /// [default: 0,0.2,0.4,0.6,0.8,0.9,1].
    #[arg(long, help_heading = "Booster", value_delimiter = ',', allow_negative_numbers = true)]
    pub t_grid: Option<Vec<f64>>,
    /// t-AdaBoost, --t auto: the number of inner folds [default: 3].
    #[arg(long, help_heading = "Booster")]
    pub t_folds: Option<usize>,
    /// t-AdaBoost: a schedule of t over the rounds, linear:T0:T1 (from T0 at round 1 to T1 at the
    /// last round) or linear:T0:T1:N (T1 from round N on); replaces --t. The clipped model uses T1.
    #[arg(long, help_heading = "Booster")]
    pub t_schedule: Option<String>,
    /// t-AdaBoost: tempered leaf values, optimal (default) or canonical.
    #[arg(long, help_heading = "Booster")]
    pub leaf_values: Option<String>,
    /// t-AdaBoost: weights given to the tree, normalized (default) or co-density.
    #[arg(long, help_heading = "Booster")]
    pub learner_weights: Option<String>,
    /// t-AdaBoost, t > 1: fallback (default, the authors' rule) or error when a weight overflows.
    #[arg(long, help_heading = "Booster")]
    pub overflow: Option<String>,
    /// t-AdaBoost: the `authors` preset (= --preset authors): by default what the authors' code
    /// does — count order, canonical leaves, pure leaves forbidden, 2000-candidate cap, random
    /// ties. Options given explicitly override these defaults.
    #[arg(long, help_heading = "Booster")]
    pub authors_mode: bool,
    /// SecBoost loss: logistic, exponential, square, hinge, zero-one, clipped-logistic:q=-2,
    /// spring:Q=500 (appendix form), spring-main (main-text form), tempered:t=0.5.
    #[arg(long, help_heading = "Booster")]
    pub loss: Option<String>,
    /// SecBoost: the initial step δ of Solve_α.
    #[arg(long, help_heading = "Booster", allow_negative_numbers = true)]
    pub delta_init: Option<f64>,
    /// SecBoost: α rule, solve (always Solve_α; the default) or auto (closed form when the loss declares β).
    #[arg(long, help_heading = "Booster")]
    pub secboost_alpha: Option<String>,
    /// SecBoost: offset oracle, auto (dichotomic for convex losses) or grid.
    #[arg(long, help_heading = "Booster")]
    pub oracle: Option<String>,
    /// SecBoost: Solve_α rule, certified (default: α accepted only when the round's risk decrease
    /// is certified) or paper (the paper's Algorithm 3, uncertified; to reproduce its runs).
    #[arg(long, help_heading = "Booster")]
    pub solve_alpha: Option<String>,
    /// SecBoost: κ of the certified Solve_α, in (0, 1) (default 0.5).
    #[arg(long, help_heading = "Booster")]
    pub kappa: Option<f64>,
    /// SecBoost: the constant initial score h_0 (the 0/1 loss needs h_0 ≠ 0).
    #[arg(long, help_heading = "Booster", allow_negative_numbers = true)]
    pub h0: Option<f64>,
    /// AdaBoost.MO output code: one-vs-all, random:K (or random:K:SEED), exhaustive.
    #[arg(long, help_heading = "Booster")]
    pub code: Option<String>,
    /// AdaBoost.MO decoding: loss (default) or hamming.
    #[arg(long, help_heading = "Booster")]
    pub decode: Option<String>,
    /// AdaBoost.MH on single-label data: start from D_1(i, y_i) = 1/(2m).
    #[arg(long, help_heading = "Booster")]
    pub single_label_start: bool,
    /// Multi-label label sets {f > θ}: auto (default: θ learned on the training data for
    /// adaboost-mr / adaboost-m2, θ = 0 otherwise), zero, or learned.
    #[arg(long, help_heading = "Output")]
    pub label_threshold: Option<String>,
    /// Shrinkage ν in (0, 1]: each round adds ν·α·h [default: 1].
    #[arg(long, help_heading = "Booster", allow_negative_numbers = true)]
    pub learning_rate: Option<f64>,
}

/// Parameters of training on validation data: only `train` has validation data (`--valid`).
#[derive(Args, Debug, Clone, Default)]
pub struct ValidationArgs {
    /// Stop once the validation metric (--valid) has not improved for K rounds; the model keeps
    /// its best iteration.
    #[arg(long, help_heading = "Validation", value_name = "K")]
    pub early_stopping_rounds: Option<usize>,
    /// Validation metric: error, hamming, one-error, loss (SecBoost) [default: the task's].
    #[arg(long, help_heading = "Validation")]
    pub eval_metric: Option<String>,
    /// t-AdaBoost: score the validation data with the clipped model.
    #[arg(long, help_heading = "Validation")]
    pub eval_clipped: bool,
}

/// A `--t` value: a temperature, or `auto`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TArg {
    /// A fixed temperature.
    Value(f64),
    /// Chosen by inner cross-validation.
    Auto,
}

fn parse_t_arg(s: &str) -> std::result::Result<TArg, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(TArg::Auto);
    }
    s.trim()
        .parse::<f64>()
        .map(TArg::Value)
        .map_err(|_| format!("expected a temperature in [0, 2) or `auto`, got `{s}`"))
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

/// `--split-ties` values.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum SplitTiesArg {
    /// The lowest feature index (and threshold) wins (default).
    Lowest,
    /// A uniform draw among the tied candidates, from the seed (the authors' code).
    Random,
}

fn parse_enum<T: serde::de::DeserializeOwned + serde::Serialize>(name: &str, s: &str) -> Result<Value> {
    let v: T =
        serde_json::from_value(Value::String(s.to_string())).with_context(|| format!("invalid --{name} '{s}'"))?;
    Ok(serde_json::to_value(v)?)
}

/// A float flag's value as JSON. JSON has no NaN or ∞ (serde writes them as `null`, which the
/// parameters' parser would report as a type error), so a non-finite value is refused here,
/// naming the parameter.
fn finite(name: &'static str, v: f64) -> Result<Value> {
    if v.is_finite() {
        Ok(v.into())
    } else {
        Err(boostlab::Error::param(name, "a finite number", v).into())
    }
}

impl BoostArgs {
    /// The random seed (`--seed`, 0 by default).
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(0)
    }

    /// The library parameters these flags describe, without validation options.
    pub fn params(&self) -> Result<BoostParams> {
        Ok(self.params_and_sources(&ValidationArgs::default())?.0)
    }

    /// The library parameters these flags and the validation flags describe, and the dotted
    /// paths of the parameters the user gave (for [`BoostParams::sources`]). The preset is
    /// applied first, the flags over it.
    pub fn params_and_sources(&self, validation: &ValidationArgs) -> Result<(BoostParams, Vec<String>)> {
        let algorithm = Algorithm::parse(&self.algo)?;
        // Options of one booster given to another are mistakes, not no-ops.
        let only = |given: bool, flag: &str, algos: &[Algorithm]| -> Result<()> {
            if given && !algos.contains(&algorithm) {
                let names: Vec<&str> = algos.iter().map(|a| a.name()).collect();
                bail!("{flag} applies to --algo {}, not {}", names.join(" / "), algorithm.name());
            }
            Ok(())
        };
        let mh = [Algorithm::AdaBoostMH, Algorithm::RealAdaBoostMH];
        let mo = [Algorithm::AdaBoostMO, Algorithm::RealAdaBoostMO];
        let t_ada = [Algorithm::TAdaBoost];
        only(self.t.is_some(), "--t", &t_ada)?;
        let auto_t = self.t == Some(TArg::Auto);
        if !auto_t && (self.t_grid.is_some() || self.t_folds.is_some()) {
            bail!("--t-grid and --t-folds go with --t auto");
        }
        only(self.t_schedule.is_some(), "--t-schedule", &t_ada)?;
        if self.t_schedule.is_some() && self.t.is_some() {
            bail!("--t-schedule replaces --t: give one of them");
        }
        only(self.leaf_values.is_some(), "--leaf-values", &t_ada)?;
        only(self.learner_weights.is_some(), "--learner-weights", &t_ada)?;
        only(self.overflow.is_some(), "--overflow", &t_ada)?;
        only(self.authors_mode, "--authors-mode", &t_ada)?;
        let sec = [Algorithm::SecBoost];
        only(self.loss.is_some(), "--loss", &sec)?;
        only(self.delta_init.is_some(), "--delta-init", &sec)?;
        only(self.secboost_alpha.is_some(), "--secboost-alpha", &sec)?;
        only(self.oracle.is_some(), "--oracle", &sec)?;
        only(self.solve_alpha.is_some(), "--solve-alpha", &sec)?;
        only(self.kappa.is_some(), "--kappa", &sec)?;
        only(self.h0.is_some(), "--h0", &sec)?;
        only(self.code.is_some(), "--code", &mo)?;
        only(self.decode.is_some(), "--decode", &mo)?;
        only(self.single_label_start, "--single-label-start", &mh)?;
        only(validation.eval_clipped, "--eval-clipped", &t_ada)?;

        // The given flags as a partial parameter object (BoostParams::from_json lays it over the
        // preset and the defaults).
        let mut top = Map::new();
        let mut sub: BTreeMap<&str, Map<String, Value>> = BTreeMap::new();
        let mut put = |table: &'static str, key: &str, v: Value| {
            if table.is_empty() {
                top.insert(key.to_string(), v);
            } else {
                sub.entry(table).or_default().insert(key.to_string(), v);
            }
        };
        put("", "algorithm", serde_json::to_value(algorithm)?);
        let preset = match (&self.preset, self.authors_mode) {
            (Some(p), true) if p != "authors" => bail!("--authors-mode is --preset authors, not --preset {p}"),
            (Some(p), _) => Some(Preset::parse(p)?),
            (None, true) => Some(Preset::Authors),
            (None, false) => None,
        };
        if let Some(p) = preset {
            put("", "preset", serde_json::to_value(p)?);
        }
        if let Some(r) = self.rounds {
            put("", "n_estimators", r.into());
        }
        if let Some(v) = self.learning_rate {
            boostlab::params::registry::check_number("learning_rate", v)?;
            put("", "learning_rate", v.into());
        }
        if let Some(k) = validation.early_stopping_rounds {
            put("", "early_stopping_rounds", k.into());
        }
        if let Some(m) = &validation.eval_metric {
            put("", "eval_metric", serde_json::to_value(boostlab::EvalMetric::parse(m)?)?);
        }
        if validation.eval_clipped {
            put("", "eval_clipped", true.into());
        }
        if let Some(b) = self.max_bins {
            put("", "max_bins", b.into());
        }
        if let Some(s) = self.seed {
            put("", "seed", s.into());
        }
        if let Some(l) = self.max_leaves {
            put("tree", "max_leaves", l.into());
        }
        if let Some(k) = self.max_nodes {
            put("tree", "max_nodes", k.into());
        }
        if let Some(d) = self.max_depth {
            put("tree", "max_depth", d.into());
        }
        if let Some(w) = self.min_leaf_weight {
            put("tree", "min_leaf_weight", finite("min_leaf_weight", w)?);
        }
        if let Some(c) = &self.criterion {
            put("tree", "criterion", serde_json::to_value(boostlab::experiment::parse_criterion(c)?)?);
        }
        if let Some(o) = self.grow_order {
            let o = match o {
                GrowOrderArg::Weight => GrowOrder::Weight,
                GrowOrderArg::Count => GrowOrder::Count,
                GrowOrderArg::Gain => GrowOrder::Gain,
            };
            put("tree", "grow_order", serde_json::to_value(o)?);
        }
        if let Some(pl) = self.pure_leaves {
            let pl = match pl {
                PureLeavesArg::Allow => PureLeaves::Allow,
                PureLeavesArg::Forbid => PureLeaves::Forbid,
            };
            put("tree", "pure_leaves", serde_json::to_value(pl)?);
        }
        if let Some(c) = self.max_split_candidates {
            put("tree", "max_split_candidates", c.into());
        }
        if let Some(st) = self.split_ties {
            let st = match st {
                SplitTiesArg::Lowest => SplitTies::Lowest,
                SplitTiesArg::Random => SplitTies::Random,
            };
            put("tree", "split_ties", serde_json::to_value(st)?);
        }
        if let Some(a) = &self.alpha {
            put("adaboost", "alpha", parse_enum::<boostlab::boost::adaboost::AlphaRule>("alpha", a)?);
        }
        if let Some(e) = self.smoothing {
            // Real AdaBoost's ε and real AdaBoost.MH/MO's ε.
            put("adaboost", "smoothing", finite("smoothing", e)?);
            put("multiclass", "eps", e.into());
        }
        match self.t {
            Some(TArg::Value(t)) => put("t_adaboost", "t", finite("t", t)?),
            Some(TArg::Auto) => {
                let mut a = boostlab::select::auto_t::AutoT::default();
                if let Some(g) = &self.t_grid {
                    a.grid.clone_from(g);
                }
                if let Some(k) = self.t_folds {
                    a.folds = k;
                }
                put("t_adaboost", "auto_t", serde_json::to_value(a)?);
            }
            None => {}
        }
        if let Some(v) = &self.t_schedule {
            // Checked here so that a bad schedule is reported as the flag's error.
            let sch = boostlab::boost::tadaboost::TSchedule::parse(v).context("--t-schedule")?;
            put("t_adaboost", "t_schedule", serde_json::to_value(sch)?);
        }
        if let Some(v) = &self.leaf_values {
            put("t_adaboost", "leaf_values", parse_enum::<TemperedLink>("leaf-values", v)?);
        }
        if let Some(v) = &self.learner_weights {
            put("t_adaboost", "learner_weights", parse_enum::<LearnerWeights>("learner-weights", v)?);
        }
        if let Some(v) = &self.overflow {
            put("t_adaboost", "overflow", parse_enum::<OverflowPolicy>("overflow", v)?);
        }
        if let Some(l) = &self.loss {
            let loss: boostlab::math::loss::LossSpec = l.parse()?;
            put("secboost", "loss", serde_json::to_value(loss)?);
        }
        if let Some(d) = self.delta_init {
            put("secboost", "delta_init", finite("delta_init", d)?);
        }
        if let Some(v) = &self.secboost_alpha {
            put("secboost", "alpha_rule", parse_enum::<boostlab::boost::secboost::AlphaRule>("secboost-alpha", v)?);
        }
        if let Some(v) = &self.oracle {
            put("secboost", "oracle", parse_enum::<boostlab::boost::secboost::OffsetOracle>("oracle", v)?);
        }
        if let Some(v) = &self.solve_alpha {
            put("secboost", "solve_alpha", parse_enum::<boostlab::boost::secboost::SolveAlphaRule>("solve-alpha", v)?);
        }
        if let Some(k) = self.kappa {
            put("secboost", "kappa", finite("kappa", k)?);
        }
        if let Some(h) = self.h0 {
            put("secboost", "h0", finite("h0", h)?);
        }
        if let Some(s) = self.seed {
            put("secboost", "seed", s.into());
        }
        if let Some(c) = &self.code {
            let code: boostlab::boost::multiclass::CodeSpec = c.parse()?;
            put("multiclass", "code", serde_json::to_value(code)?);
        }
        if let Some(d) = &self.decode {
            let d: boostlab::boost::multiclass::Decode = d.parse()?;
            put("multiclass", "decode", serde_json::to_value(d)?);
        }
        if self.single_label_start {
            put("multiclass", "single_label_start", true.into());
        }
        if let Some(v) = &self.label_threshold {
            if algorithm.multi_variant().is_none() {
                bail!(
                    "--label-threshold applies to the multi-class / multi-label algorithms, not {}",
                    algorithm.name()
                );
            }
            let lt = parse_enum::<boostlab::boost::multiclass::LabelThreshold>("label-threshold", v)?;
            put("multiclass", "label_threshold", lt);
        }
        if let Some(v) = algorithm.multi_variant() {
            put("multiclass", "variant", serde_json::to_value(v)?);
        }
        for (k, v) in sub {
            top.insert(k.to_string(), Value::Object(v));
        }
        let (p, explicit) = BoostParams::from_json(&Value::Object(top))?;
        p.check()?;
        Ok((p, explicit))
    }
}
