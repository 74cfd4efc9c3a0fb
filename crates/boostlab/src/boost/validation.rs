//! The practitioner's controls that live beside the boosting loop: shrinkage's
//! parameter check, validation tracking with early stopping, and warm start (continuing a model).
//!
//! * **Shrinkage** (`learning_rate` ν ∈ (0, 1]): every booster scales its α by ν *before* its
//!   weight update ([`super::Booster::set_learning_rate`]), so the weights are always those of the
//!   shrunk model (AdaBoost: `d ∝ exp(−y F)` with `F = Σ ν α h`). At ν = 1 nothing is multiplied.
//! * **Validation** ([`Validation`]): after every round the new tree's `α·h` is added to running
//!   validation scores — the operations prediction performs, so round `t`'s value equals the
//!   metric of the model's first `t` trees exactly — and the metric ([`EvalMetric`]) is recorded in
//!   the round's record as `valid_metric` (the model's [`crate::Ensemble::eval_metric`] names it).
//!   With `early_stopping_rounds = K`, boosting stops once K rounds have passed without a strictly
//!   better value, and the model is **truncated** to its best iteration
//!   ([`crate::Ensemble::best_iteration`], 0-based; the history keeps every round's record).
//! * **Warm start** ([`Trainer::init_model`](crate::Trainer::init_model)): nothing of the booster's state is saved in the
//!   model; it is *recomputed* by replaying the model's own trees on the training data through the
//!   booster's ordinary steps (weights, margins, SecBoost's edges and offsets, t-AdaBoost's
//!   normaliser product and clipped scores). Every replayed α must equal the stored one bit for
//!   bit, which checks that the data are the model's training data. The trees' random choices are
//!   seeded by `(seed, round)`, and SecBoost's random offsets by `(seed, round, example)`, so no
//!   generator state needs saving either: the continued model is bit-identical to one trained in
//!   one go.

use rayon::prelude::*;

use crate::collective::Shared;
use crate::data::{BinnedData, BinnedMatrix, Column, Features, Target};
use crate::error::{Error, Result};
use crate::eval::multilabel;
use crate::math::loss::Loss;
use crate::model::{Ensemble, Task};
pub use crate::params::EvalMetric;
use crate::params::{Algorithm, BoostParams};
use crate::tree::{Node, SplitRule, Tree};
use crate::util::cancel::Cancel;
use crate::util::par::ROW_CHUNK;

impl EvalMetric {
    /// The task's metric: SecBoost's loss, the error for binary models, the one-error for
    /// multi-class data, the Hamming loss for multi-label data.
    pub fn default_for(algorithm: Algorithm, task: &Task) -> EvalMetric {
        match task {
            _ if algorithm == Algorithm::SecBoost => EvalMetric::Loss,
            Task::Binary { .. } => EvalMetric::Error,
            Task::Multiclass { .. } => EvalMetric::OneError,
            Task::Multilabel { .. } => EvalMetric::Hamming,
        }
    }
}

/// Held-out data for the validation curve and early stopping: features (matched to the model's
/// by name, else by position, categories by level name, as prediction does) and labels (matched
/// to the training classes by name).
#[derive(Debug, Clone)]
pub struct Validation {
    /// The features.
    pub features: Features,
    /// The labels.
    pub target: Target,
}

/// Optional inputs of a fit beyond the data and the parameters.
#[derive(Default, Clone, Copy)]
pub(crate) struct FitOptions<'a> {
    /// Validation data: each round's metric goes into the history (`valid_metric`); needed by
    /// `early_stopping_rounds`. By default none.
    pub valid: Option<&'a Validation>,
    /// A model to continue (warm start): trained on the same data with the same parameters
    /// (`n_estimators` and the validation settings aside); the fit replays its trees, then adds
    /// rounds up to `n_estimators` in all. By default none.
    pub init_model: Option<&'a Ensemble>,
    /// Stops the fit with [`Error::Cancelled`] once set. By default none.
    pub cancel: Option<&'a Cancel>,
}

/// Running validation scores and the early-stopping state.
pub(crate) struct Tracker {
    columns: Vec<Column>,
    n: usize,
    k: usize,
    /// Model class index of each row (single-label data).
    class: Option<Vec<u32>>,
    /// `n × n_classes` ±1 labels over the model's classes (multi-class and multi-label).
    y_pm: Vec<f64>,
    scores: Vec<f64>,
    clip: Option<f64>,
    metric: EvalMetric,
    loss: Option<Loss>,
    patience: Option<usize>,
    /// (number of trees, value) of the best model so far.
    best: Option<(usize, f64)>,
}

impl Tracker {
    /// `model`: the empty model being trained, its schema, task, clip level, base score and
    /// output decoding already set.
    /// Distributed, `v` holds this rank's validation rows (possibly none; there must be
    /// some on one rank at least) and every rank builds its tracker (one reduction: the row count).
    pub(crate) fn new(
        model: &Ensemble,
        v: &Validation,
        params: &BoostParams,
        loss: Option<Loss>,
        coll: &Shared,
    ) -> Result<Tracker> {
        let columns = model
            .align(&v.features)
            .map_err(|e| Error::InvalidData(format!("validation data: {}", strip_invalid(&e))))?;
        let n = columns.first().map_or(0, Column::len);
        let mut total = [n as f64];
        coll.sum(&mut total)?;
        if total[0] == 0.0 {
            return Err(Error::InvalidData("validation data: no rows".into()));
        }
        let names = model.task.names();
        let nc = names.len();
        let (class, y_pm) = match (&v.target, &model.task) {
            (Target::Classes { y, classes }, Task::Binary { .. } | Task::Multiclass { .. }) => {
                let map: Vec<u32> = classes
                    .iter()
                    .map(|c| {
                        names.iter().position(|t| t == c).map(|i| i as u32).ok_or_else(|| {
                            Error::InvalidData(format!(
                                "validation data: label '{}' is not a training class ({})",
                                crate::error::shown(c),
                                names.join(", ")
                            ))
                        })
                    })
                    .collect::<Result<_>>()?;
                let class: Vec<u32> = y.iter().map(|&c| map[c as usize]).collect();
                let mut pm = vec![-1.0; n * nc];
                for (i, &c) in class.iter().enumerate() {
                    pm[i * nc + c as usize] = 1.0;
                }
                (Some(class), pm)
            }
            (Target::Multilabel { y, labels }, Task::Multilabel { labels: trained }) => {
                if labels != trained {
                    return Err(Error::InvalidData(format!(
                        "validation data: labels {} differ from the training labels {}",
                        labels.join(", "),
                        trained.join(", ")
                    )));
                }
                (None, y.iter().map(|&b| if b == 1 { 1.0 } else { -1.0 }).collect())
            }
            _ => {
                return Err(Error::InvalidData(
                    "validation data: a target of another kind than the training one".into(),
                ))
            }
        };
        let metric = params.eval_metric.unwrap_or_else(|| EvalMetric::default_for(params.algorithm, &model.task));
        let loss = match (metric, loss) {
            (EvalMetric::Loss, Some(l)) => Some(l),
            (EvalMetric::Loss, None) => Some(Loss::from_spec(&params.secboost.loss)?),
            _ => None,
        };
        let k = model.n_outputs;
        Ok(Tracker {
            columns,
            n,
            k,
            class,
            y_pm,
            scores: vec![model.base_score; n * k],
            clip: if params.eval_clipped { model.clip } else { None },
            metric,
            loss,
            patience: params.early_stopping_rounds,
            best: None,
        })
    }

    pub(crate) fn metric(&self) -> EvalMetric {
        self.metric
    }

    /// Adds `α·h` of a new tree to the scores, as prediction does (`S += α·v` per leaf value,
    /// clipped after the addition when scoring the clipped model).
    pub(crate) fn add(&mut self, tree: &Tree, alpha: f64) {
        let k = self.k;
        let weighted: Vec<f64> = tree.leaf_values.iter().map(|h| alpha * h).collect();
        // The validation scores read and written (the rows' walk down the tree reads its columns,
        // not counted).
        crate::util::traffic::add(
            crate::util::traffic::Pass::Validation,
            crate::util::traffic::bytes(&self.scores),
            crate::util::traffic::bytes(&self.scores),
        );
        let (columns, clip) = (&self.columns, self.clip);
        self.scores.par_chunks_mut(ROW_CHUNK * k).enumerate().for_each(|(c, s)| {
            for (j, row) in s.chunks_exact_mut(k).enumerate() {
                let l = tree.leaf_of(columns, c * ROW_CHUNK + j);
                for (o, w) in row.iter_mut().zip(&weighted[l * k..(l + 1) * k]) {
                    *o += w;
                    if let Some(d) = clip {
                        *o = o.clamp(-d, d);
                    }
                }
            }
        });
    }

    /// The metric of the current scores: of every rank's validation rows when distributed (issue
    /// 13: each rank's `[numerator, denominator]` summed over the ranks, one reduction, so every
    /// rank gets the same value; the error counts are exact, SecBoost's loss sums round in another
    /// order than one machine's).
    pub(crate) fn value(&self, model: &Ensemble, coll: &Shared) -> Result<f64> {
        crate::util::traffic::add(crate::util::traffic::Pass::Validation, crate::util::traffic::bytes(&self.scores), 0);
        let mut sums = self.value_sums(model)?;
        coll.sum(&mut sums)?;
        Ok(multilabel::mean_of_sums(sums))
    }

    /// The `[numerator, denominator]` of the metric on this tracker's rows.
    fn value_sums(&self, model: &Ensemble) -> Result<[f64; 2]> {
        let binary = matches!(model.task, Task::Binary { .. });
        let n = self.n as f64;
        let errors = || -> f64 {
            let pred = model.classes_from_scores(&self.scores);
            let class = self.class.as_deref().unwrap_or(&[]);
            pred.iter().zip(class).filter(|(p, c)| p != c).count() as f64
        };
        let nc = model.task.names().len();
        Ok(match self.metric {
            EvalMetric::Loss => {
                let loss = self.loss.as_ref().ok_or_else(|| Error::param("eval_metric", "a SecBoost model", "loss"))?;
                let class = self.class.as_deref().unwrap_or(&[]);
                let edges: Vec<f64> =
                    self.scores.iter().zip(class).map(|(f, &c)| if c == 1 { *f } else { -*f }).collect();
                [loss.values(&edges).iter().sum::<f64>(), n]
            }
            _ if binary => [errors(), n],
            EvalMetric::Error if self.class.is_some() => [errors(), n],
            EvalMetric::Error | EvalMetric::Hamming => {
                multilabel::metric_sums(false, &self.y_pm, &model.class_scores(&self.scores), nc)?
            }
            EvalMetric::OneError => multilabel::metric_sums(true, &self.y_pm, &model.class_scores(&self.scores), nc)?,
        })
    }

    /// Records the value of the model of `n_trees` trees; returns why to stop once
    /// `early_stopping_rounds` trees have passed without a strictly better value.
    pub(crate) fn observe(&mut self, n_trees: usize, value: f64) -> Option<String> {
        match self.best {
            Some((_, b)) if value >= b || value.is_nan() => {}
            _ => self.best = Some((n_trees, value)),
        }
        let (best_trees, best) = self.best?;
        let k = self.patience?;
        (n_trees - best_trees >= k).then(|| {
            format!(
                "early stopping: validation {} has not improved for {k} rounds (best {best} at round {best_trees})",
                self.metric.name()
            )
        })
    }

    /// The number of trees of the best model so far.
    pub(crate) fn best_trees(&self) -> Option<usize> {
        self.best.map(|b| b.0)
    }
}

/// An error's message without the `invalid data: ` prefix of its display.
fn strip_invalid(e: &Error) -> String {
    match e {
        Error::InvalidData(m) => m.clone(),
        e => e.to_string(),
    }
}

/// A stored tree's outputs `h` (`n × k`) on the binned training rows (warm start's replay).
pub(crate) fn tree_outputs_on_bins(tree: &Tree, bm: &BinnedMatrix, k: usize, h: &mut [f64]) {
    crate::util::traffic::add(crate::util::traffic::Pass::TreeOutputs, 0, crate::util::traffic::bytes(h));
    h.par_chunks_mut(ROW_CHUNK * k).enumerate().for_each(|(c, h)| {
        for (j, row) in h.chunks_exact_mut(k).enumerate() {
            let l = tree.leaf_of_bins(bm, c * ROW_CHUNK + j);
            row.copy_from_slice(&tree.leaf_values[l * k..(l + 1) * k]);
        }
    });
}

/// The parameters a continued fit may change: the number of rounds, the validation settings and
/// the probability calibration (fitted anew by every fit; the trees do not depend on it).
const WARM_FREE: &[&str] = &["n_estimators", "early_stopping_rounds", "eval_metric", "eval_clipped", "calibration"];

/// Checks that `init` can be continued on `data` with `params` (warm start): the same parameters
/// (but [`WARM_FREE`]), `n_estimators` ≥ its trees, the same features, task and loss, and bins
/// that agree with every threshold of its trees.
pub(crate) fn check_init(init: &Ensemble, data: &BinnedData, params: &BoostParams, loss: Option<&Loss>) -> Result<()> {
    let flat = |p: &BoostParams| -> Result<std::collections::BTreeMap<String, serde_json::Value>> {
        Ok(p.sources(&[])?
            .into_iter()
            .filter(|(k, _)| !WARM_FREE.contains(&k.as_str()))
            .map(|(k, e)| (k, e.value))
            .collect())
    };
    // `pure_leaves = auto` is recorded resolved: compare resolved policies.
    let resolved = |p: &BoostParams| {
        let mut p = p.clone();
        if p.tree.pure_leaves == crate::tree::PureLeaves::Auto {
            p.tree.pure_leaves = super::driver::default_pure_leaves(p.algorithm);
        }
        p
    };
    let (was, now) = (flat(&resolved(&init.params))?, flat(&resolved(params))?);
    let defaults = flat(&resolved(&BoostParams { algorithm: params.algorithm, ..BoostParams::default() }))?;
    let null = serde_json::Value::Null;
    let keys: std::collections::BTreeSet<&String> = was.keys().chain(now.keys()).collect();
    for k in keys {
        // A field an older model does not write has its default.
        let [a, b] = [&was, &now].map(|m| m.get(k).or_else(|| defaults.get(k)).unwrap_or(&null));
        if a != b {
            let shown = |v: &serde_json::Value| if v.is_null() { "its default".to_string() } else { v.to_string() };
            let (a, b) = (shown(a), shown(b));
            return Err(Error::param(
                "init_model",
                format!("a model trained with the same parameters (`{k}` was {a}; only n_estimators may change)"),
                format!("`{k}` = {b}"),
            ));
        }
    }
    if params.n_estimators < init.n_trees() {
        return Err(Error::param(
            "n_estimators",
            format!("at least the init model's {} trees (warm start adds rounds)", init.n_trees()),
            params.n_estimators,
        ));
    }
    if let Some(sch) = params.t_adaboost.t_schedule.filter(|_| params.algorithm == Algorithm::TAdaBoost) {
        // A schedule whose length is the fit's n_estimators would give the replayed
        // rounds other temperatures than they were trained with.
        let super::tadaboost::TSchedule::Linear { rounds, .. } = sch;
        if rounds.is_none() && init.params.n_estimators != params.n_estimators {
            return Err(Error::param(
                "t_schedule",
                format!(
                    "a schedule with its length fixed (linear:T0:T1:N) to continue a model with another \
                     n_estimators (the init model's {} rounds set this schedule's length)",
                    init.params.n_estimators
                ),
                sch,
            ));
        }
    }
    let (s, t) = (&init.schema, &data.schema);
    let kind = |k: &crate::data::FeatureKind| match k {
        crate::data::FeatureKind::Numeric => "numeric",
        crate::data::FeatureKind::Categorical => "categorical",
    };
    if s.names == t.names && s.kinds.len() == t.kinds.len() {
        // The same columns: name the first whose kind or categories changed.
        for (f, name) in t.names.iter().enumerate() {
            if s.kinds[f] != t.kinds[f] {
                return Err(Error::InvalidData(format!(
                    "warm start: column '{}' is {} in the data but {} in the init model: give the column the \
                     init model's kind (or train without the init model)",
                    crate::error::shown(name),
                    kind(&t.kinds[f]),
                    kind(&s.kinds[f])
                )));
            }
            if s.levels.get(f) != t.levels.get(f) {
                return Err(Error::InvalidData(format!(
                    "warm start: column '{}' has {} categories in the data but {} in the init model (or in \
                     another order): warm start needs the init model's categories",
                    crate::error::shown(name),
                    t.levels.get(f).and_then(Option::as_ref).map_or(0, Vec::len),
                    s.levels.get(f).and_then(Option::as_ref).map_or(0, Vec::len)
                )));
            }
        }
    }
    if s.names != t.names || s.kinds != t.kinds || s.levels != t.levels {
        return Err(Error::InvalidData(format!(
            "warm start: the data's features ({}: {}) differ from the init model's ({}: {})",
            t.names.len(),
            t.names.join(", "),
            s.names.len(),
            s.names.join(", ")
        )));
    }
    if Task::from_target(&data.target).names() != init.task.names() {
        return Err(Error::InvalidData("warm start: the data's classes differ from the init model's".into()));
    }
    if init.custom_loss.as_deref() != loss.filter(|l| l.spec().is_none()).map(Loss::name).as_deref() {
        return Err(Error::param("loss", "the init model's loss", loss.map_or("the built-in".into(), Loss::name)));
    }
    for (t, tree) in init.trees.iter().enumerate() {
        for node in &tree.nodes {
            let Node::Split { feature, rule: SplitRule::Numeric { threshold, bin_threshold, .. }, .. } = node else {
                continue;
            };
            let f = *feature as usize;
            let ok = match data.mapper.features.get(f) {
                Some(crate::data::FeatureBins::Numeric { thresholds }) => match thresholds.get(*bin_threshold as usize)
                {
                    Some(x) => x.to_bits() == threshold.to_bits(),
                    None => *threshold == f64::MAX,
                },
                _ => false,
            };
            if !ok {
                return Err(Error::InvalidData(format!(
                    "warm start: tree {t}'s split on '{}' at {threshold} is not a bin boundary of the data: \
                     continue on the data the model was trained on",
                    s.names.get(f).map_or("?", String::as_str)
                )));
            }
        }
    }
    Ok(())
}

/// Distributed warm start: a replayed α equals the init model's up to the rounding of
/// sums taken over the ranks (1e−9 relative, the tolerance the distributed fit is held to).
pub(crate) fn replay_close(got: f64, want: f64) -> bool {
    got.to_bits() == want.to_bits() || (got - want).abs() <= 1e-9 * got.abs().max(want.abs())
}

/// The error of a replayed round whose α differs from the init model's.
pub(crate) fn replay_mismatch(round: usize, got: Option<f64>, want: f64) -> Error {
    Error::InvalidData(format!(
        "warm start: round {round} replayed on the data gives α = {}, the init model has {want}: continue on \
         the model's training data (same rows in the same order, same sample weights)",
        got.map_or("no tree (boosting stopped)".to_string(), |a| a.to_string())
    ))
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
