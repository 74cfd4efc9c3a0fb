//! The single boosting loop behind [`Trainer`](super::trainer::Trainer): on binned data
//! ([`BinnedData`]; a [`Dataset`] is binned first), each round ask the booster for statistics,
//! grow a tree on them, hand the tree's training outputs back to the booster, and record α and the
//! round's diagnostics.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::adaboost::AdaBoost;
use super::multiclass::{MultiBooster, MultiOutput, MultiVariant};
use super::secboost::SecBoost;
use super::tadaboost::TAdaBoost;
use super::validation::{self, FitOptions};
use super::{Booster, Diagnostics, Labels, Step};
use crate::collective::{Collective, Shared};
use crate::data::{BinnedData, Dataset, FeatureBins, Target};
use crate::error::{Error, Result};
use crate::math::loss::Loss;
use crate::model::{Ensemble, Task};
use crate::tree::{
    abstaining_stump_constrained, grow_ranks, Constraints, GrowSpec, PureLeaves, RowBuffers, TreeParams,
};
use crate::util::cancel::{self, Cancel};
use crate::util::par::ROW_CHUNK;
use crate::util::traffic::{self, Pass};

pub use crate::params::{default_pure_leaves, Algorithm, BoostParams};

pub use crate::model::RoundRecord;

/// Training labels in the boosters' form, built from a dataset's target.
pub(crate) struct OwnedLabels {
    pub n: usize,
    pub k: usize,
    pub y: Vec<f64>,
    pub class: Option<Vec<u32>>,
}

impl OwnedLabels {
    pub fn from_target(target: &Target, binary: bool) -> Result<OwnedLabels> {
        match target {
            Target::Classes { y, classes } => {
                let n = y.len();
                if binary {
                    if classes.len() != 2 {
                        return Err(Error::InvalidData(format!(
                            "this algorithm needs exactly two classes, the labels have {} ({}): use a multi-class \
                             algorithm (adaboost-mh, real-adaboost-mh, adaboost-mo, adaboost-mr, adaboost-m2)",
                            classes.len(),
                            // At most 10 names, each shortened: a 10 MB label is not echoed whole.
                            classes.iter().take(10).map(|c| crate::error::shown(c)).collect::<Vec<_>>().join(", ")
                                + if classes.len() > 10 { ", …" } else { "" }
                        )));
                    }
                    Ok(OwnedLabels {
                        n,
                        k: 1,
                        y: y.iter().map(|&c| if c == 1 { 1.0 } else { -1.0 }).collect(),
                        class: Some(y.clone()),
                    })
                } else {
                    let k = classes.len();
                    let mut m = vec![-1.0; n * k];
                    for (i, &c) in y.iter().enumerate() {
                        m[i * k + c as usize] = 1.0;
                    }
                    Ok(OwnedLabels { n, k, y: m, class: Some(y.clone()) })
                }
            }
            Target::Multilabel { y, labels } => {
                if binary {
                    return Err(Error::InvalidData(
                        "multi-label data need a multi-label algorithm (adaboost-mh, adaboost-mr)".into(),
                    ));
                }
                let k = labels.len();
                Ok(OwnedLabels {
                    n: y.len() / k,
                    k,
                    y: y.iter().map(|&v| if v == 1 { 1.0 } else { -1.0 }).collect(),
                    class: None,
                })
            }
        }
    }

    pub fn view<'a>(&'a self, w: Option<&'a [f64]>) -> Labels<'a> {
        Labels { n: self.n, k: self.k, y: &self.y, class: self.class.as_deref(), sample_weight: w }
    }
}

/// What the model needs to know about its booster besides the trees.
struct Extras {
    clip: Option<f64>,
    base_score: f64,
    output: Option<MultiOutput>,
}

fn make_booster(
    params: &BoostParams,
    labels: Labels<'_>,
    loss: Option<Loss>,
    coll: &Shared,
) -> Result<(Box<dyn Booster>, Extras)> {
    let mut extras = Extras { clip: None, base_score: 0.0, output: None };
    let b: Box<dyn Booster> = match params.algorithm {
        Algorithm::AdaBoost => Box::new(AdaBoost::discrete(labels, params.adaboost.alpha)?),
        Algorithm::RealAdaBoost => Box::new(AdaBoost::real(labels, &params.adaboost)?),
        Algorithm::AbstainingAdaBoost => Box::new(AdaBoost::abstaining(labels, params.adaboost.alpha)?),
        Algorithm::TAdaBoost => {
            // Built on every rank's totals (a rank may hold no examples).
            let mut b = TAdaBoost::new_on(&params.t_adaboost, labels, coll)?;
            b.set_schedule_rounds(params.n_estimators); // The schedule's default length
            extras.clip = b.clip_delta();
            Box::new(b)
        }
        Algorithm::SecBoost => {
            let loss = match loss {
                Some(l) => l,
                None => Loss::from_spec(&params.secboost.loss)?,
            };
            // Built on every rank's totals (a rank may hold no examples).
            let b = SecBoost::new_on(params.secboost.clone(), loss, labels, coll)?;
            extras.base_score = b.init_score();
            Box::new(b)
        }
        a => {
            let mut mp = params.multiclass.clone();
            mp.variant = a.multi_variant().ok_or_else(|| Error::param("algorithm", "a known algorithm", a.name()))?;
            let b = MultiBooster::new_on(&labels, &mp, coll)?;
            extras.output = Some(b.output());
            Box::new(b)
        }
    };
    Ok((b, extras))
}

/// Test shorthand: [`Trainer::fit`](super::trainer::Trainer::fit) with nothing but the parameters.
#[cfg(test)]
pub(crate) fn fit(data: &Dataset, params: &BoostParams) -> Result<Ensemble> {
    super::trainer::Trainer::new(params).fit(data)
}

/// Test shorthand: [`Trainer::fit`](super::trainer::Trainer::fit) with a round callback.
#[cfg(test)]
pub(crate) fn fit_with(
    data: &Dataset,
    params: &BoostParams,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    super::trainer::Trainer::new(params).on_round(on_round).fit(data)
}

/// Test shorthand: [`Trainer::fit_binned`](super::trainer::Trainer::fit_binned) with a round callback.
#[cfg(test)]
pub(crate) fn fit_binned(
    data: &BinnedData,
    params: &BoostParams,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    super::trainer::Trainer::new(params).on_round(on_round).fit_binned(data)
}

/// The checks of a fit on a dataset (parameters, then the data, then the labels against the
/// algorithm), in that order, before the data are binned.
fn bin_dataset(data: &Dataset, params: &BoostParams) -> Result<BinnedData> {
    params.check()?;
    data.check_trainable()?;
    OwnedLabels::from_target(data.target()?, params.algorithm.is_binary())?;
    BinnedData::from_dataset(data, params.max_bins)
}

/// A user-defined loss is a SecBoost feature: any other algorithm is refused.
fn custom_loss_needs_secboost(params: &BoostParams) -> Result<()> {
    if params.algorithm == Algorithm::SecBoost {
        Ok(())
    } else {
        Err(Error::param("algorithm", "secboost (a custom loss is a SecBoost feature)", params.algorithm.name()))
    }
}

/// Trains on a dataset with the options of [`FitOptions`] (validation data and early stopping,
/// warm start, cancel flag): bins the data, then [`fit_binned_with_options`]. `loss`: a user
/// loss for SecBoost. The body of [`Trainer::fit`](super::trainer::Trainer::fit).
pub(crate) fn fit_with_options(
    data: &Dataset,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    if loss.is_some() {
        custom_loss_needs_secboost(params)?;
    }
    fit_options(&bin_dataset(data, params)?, params, loss, opts, on_round, &Shared::default())
}

/// [`fit_with_options`] on binned data: the body of
/// [`Trainer::fit_binned`](super::trainer::Trainer::fit_binned) on one machine.
pub(crate) fn fit_binned_with_options(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    if loss.is_some() {
        custom_loss_needs_secboost(params)?;
    }
    fit_options(data, params, loss, opts, on_round, &Shared::default())
}

/// The fit of `params` on this rank's rows (`coll`; [`Shared::default`] on one machine): when the
/// parameters ask for calibration, the fit on all rows then the probability scale from
/// cross-fitted scores ([`crate::select::calibration`]), else [`fit_uncalibrated`]. Either checks
/// the parameters and the data before any work.
fn fit_options(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
    coll: &Shared,
) -> Result<Ensemble> {
    if crate::select::calibration::applies(params) {
        return crate::select::calibration::fit(data, params, loss, opts, on_round, coll);
    }
    fit_uncalibrated(data, params, loss, opts, on_round, coll)
}

/// One fit without calibration (`params.calibration` is not looked at): `t = auto`'s inner
/// cross-validation and refit, or the one fit of the parameters as they are. `coll`: the ranks of
/// a distributed fit ([`Shared::default`] on one machine).
pub(crate) fn fit_uncalibrated(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
    coll: &Shared,
) -> Result<Ensemble> {
    if params.algorithm == Algorithm::TAdaBoost && params.t_adaboost.auto_t.is_some() {
        // T chosen by inner cross-validation, then a refit (`fit_inner`), on one machine or over
        // the ranks.
        refuse_auto_t_with(&opts)?;
        params.check()?;
        if coll.is_distributed() {
            return crate::select::auto_t::fit_on(data, params, loss, opts.cancel, on_round, coll);
        }
        data.check_trainable()?;
        return crate::select::auto_t::fit(data, params, loss, opts.cancel, on_round);
    }
    fit_inner_on(data, params, loss, opts, on_round, coll)
}

/// Distributed training: this rank's part of a fit whose rows are spread over the
/// ranks of `collective`. Every rank calls it with its own rows as bins (`data`: the same bin
/// mapper, schema, classes and parameters on every rank; a rank may hold no rows) and the same
/// `params`; every rank returns the same model, the one the single machine trains on all the
/// rows (up to the rounding of sums taken in another order: α and leaf values agree within about
/// 1e−12 relative, trees and predictions exactly unless two splits tie within that). Every sum
/// over the rows — histograms, leaf sums and covers, each booster's sums for α, its normalisers,
/// line searches, Solve_α steps, training errors — is summed over the ranks by
/// [`Collective::allreduce_sum`]; see the README's "Distributed training" for the calls per
/// round. `loss`: a user loss for SecBoost. `opts.cancel` stops this rank
/// (the others then fail in their next reduction).
///
/// Validation data (`opts.valid`): each rank passes its own validation rows (possibly none); the
/// metric's sums are added over the ranks each round, so every rank stops at the same round
/// (early stopping) with the model of one machine given all the validation rows. Warm start
/// (`opts.init_model`): every rank replays the model's trees on its rows; each replayed α must
/// match the stored one within 1e−9 relative (the sums round in another order) and is kept.
///
/// A t schedule retempers every rank's weights alike (the renormaliser summed over the
/// ranks). `t = auto`: the single machine's inner folds over every rank's rows, each
/// inner fit and the refit distributed, so every rank chooses the single machine's t. Not
/// distributed (an error): abstaining AdaBoost. Nothing in training samples rows (the only random choices —
/// the candidate cap and random tie-breaking — are seeded per node from the summed histograms),
/// so every rank draws the same. A collective of one rank is exactly [`fit_binned_with_options`].
pub(crate) fn fit_binned_distributed(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    collective: std::sync::Arc<dyn Collective>,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    let coll = Shared::new(collective);
    if !coll.is_distributed() {
        return fit_binned_with_options(data, params, loss, opts, on_round);
    }
    if loss.is_some() {
        custom_loss_needs_secboost(params)?;
    }
    let refuse = |what: &str| Err(Error::Distributed(format!("{what} is not supported in distributed training")));
    if params.algorithm == Algorithm::AbstainingAdaBoost {
        return refuse("abstaining-adaboost");
    }
    fit_options(data, params, loss, opts, on_round, &coll)
}

/// One fit with the parameters as they are (`t_adaboost.auto_t` is not looked at).
pub(crate) fn fit_inner(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
) -> Result<Ensemble> {
    fit_inner_on(data, params, loss, opts, on_round, &Shared::default())
}

/// [`fit_inner`] on this rank's rows ([`Shared::default`] on one machine).
pub(crate) fn fit_inner_on(
    data: &BinnedData,
    params: &BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'_>,
    on_round: &mut dyn FnMut(&RoundRecord),
    coll: &Shared,
) -> Result<Ensemble> {
    let cancel = opts.cancel;
    params.check()?;
    // The training rows over every rank.
    let n_rows = if coll.is_distributed() {
        // A rank may hold no rows, or one class only: the checks are on every rank's rows.
        if data.n_features() == 0 {
            return Err(Error::InvalidData("no feature columns".into()));
        }
        let (n, total) = coll.totals(data.n_rows(), data.sample_weight.as_deref())?;
        if n == 0 || total.is_nan() || total <= 0.0 {
            return Err(Error::InvalidData(format!("no rows of positive weight on any rank ({n} rows)")));
        }
        n
    } else {
        data.check_trainable()?;
        data.n_rows()
    };
    if let Some(f) = data.mapper.features.iter().position(|b| match b {
        FeatureBins::Numeric { .. } => b.n_value_bins() > params.max_bins,
        FeatureBins::Categorical { .. } => false,
    }) {
        return Err(Error::InvalidData(format!(
            "feature '{}' has {} bins, more than max_bins = {}: bin with the training parameters' max_bins",
            data.schema.names.get(f).map_or("?", String::as_str),
            data.mapper.features[f].n_value_bins(),
            params.max_bins
        )));
    }
    // Presets were applied when the parameters were built: used as they are.
    let mut params = params.clone();
    let target = &data.target;
    if let Some(v) = params.algorithm.multi_variant() {
        // The model records the variant that actually ran.
        params.multiclass.variant = v;
        if params.multiclass.label_threshold == super::multiclass::LabelThreshold::Learned
            && matches!(v, MultiVariant::MoDiscrete | MultiVariant::MoReal)
        {
            return Err(Error::param(
                "label_threshold",
                "zero or auto for AdaBoost.MO (its outputs are code columns, not label scores)",
                "learned",
            ));
        }
    }
    let binary = params.algorithm.is_binary();
    let labels = OwnedLabels::from_target(target, binary)?;
    let weights = data.sample_weight.as_deref();
    let custom_loss = loss.as_ref().map(Loss::name);
    if params.early_stopping_rounds.is_some() && opts.valid.is_none() {
        return Err(Error::param(
            "early_stopping_rounds",
            "validation data (--valid, eval_set or validation_fraction) to stop on",
            params.early_stopping_rounds.unwrap_or(0),
        ));
    }
    if let Some(init) = opts.init_model {
        validation::check_init(init, data, &params, loss.as_ref())?;
    }
    let eval_loss = loss.clone();
    let (mut booster, extras) = make_booster(&params, labels.view(weights), loss, coll)?;
    // Sizes that allocations follow, against the data and the memory bound, before the rounds.
    let k = booster.n_outputs();
    params.check_against_data(n_rows, k, data.bins.total_bins() * 2 * k)?;
    if coll.is_distributed() {
        booster.set_collective(coll.clone(), labels.view(weights))?;
    }
    booster.set_learning_rate(params.learning_rate);
    drop(labels); // the booster keeps its own copy; free it before the rounds (peak RSS)
    let task = match target {
        Target::Classes { classes, .. } if binary => Task::Binary { classes: classes.clone() },
        Target::Classes { classes, .. } => Task::Multiclass { classes: classes.clone() },
        Target::Multilabel { labels, .. } => Task::Multilabel { labels: labels.clone() },
    };
    let mut model = Ensemble::new(data.schema.clone(), task, params.clone(), booster.n_outputs());
    model.clip = extras.clip;
    model.base_score = extras.base_score;
    model.output = extras.output.clone();
    let tracker = opts.valid.map(|v| validation::Tracker::new(&model, v, &params, eval_loss, coll)).transpose()?;
    let mut model = run_with(data, &params, booster, model, tracker, opts.init_model, cancel, on_round, coll)?;
    model.clip = extras.clip;
    model.base_score = extras.base_score;
    model.output = extras.output;
    model.custom_loss = custom_loss;
    if let Some(v) = params.algorithm.multi_variant().filter(|&v| params.multiclass.label_threshold.learns(v)) {
        // (docs/explanation/multiclass.md#multiclass-mr): the label-set threshold, learned on the training rows.
        model.label_threshold = Some(learn_label_threshold(data, &model, v, coll)?);
    }
    // Front ends that know which values the user gave refine this with `BoostParams::sources`.
    model.param_sources = params.sources(&[])?;
    model.validate()?;
    Ok(model)
}

/// The label-set threshold θ of a multi-class / multi-label model (docs/explanation/multiclass.md#multiclass-mr): the one
/// with the lowest Hamming loss of `{ℓ : f(x, ℓ) > θ}` on the training rows (weighted by the
/// sample weights), scored on the training bins. Every row counts, those without a crucial pair
/// (no relevant or no irrelevant label; MR gives them weight 0 in training) included: their
/// label sets are predicted like any other's. Distributed, the scores, labels and
/// weights of every rank are gathered in rank order — the rows of the single machine, in its
/// order — so every rank learns the single machine's θ.
fn learn_label_threshold(data: &BinnedData, model: &Ensemble, variant: MultiVariant, coll: &Shared) -> Result<f64> {
    let k = model.n_outputs;
    let n = data.n_rows();
    if matches!(model.output, Some(MultiOutput::Code { .. })) {
        return Err(Error::param(
            "label_threshold",
            "zero or auto for AdaBoost.MO (its outputs are code columns, not label scores)",
            format!("learned with {variant}"),
        ));
    }
    let mut f = vec![model.base_score; n * k];
    for (tree, &a) in model.trees.iter().zip(&model.alphas) {
        for (r, row) in f.chunks_exact_mut(k).enumerate() {
            let leaf = tree.leaf_of_bins(&data.bins, r);
            for (v, h) in row.iter_mut().zip(&tree.leaf_values[leaf * k..(leaf + 1) * k]) {
                *v += a * h;
            }
        }
    }
    let y = OwnedLabels::from_target(&data.target, false)?;
    if !coll.is_distributed() {
        return crate::eval::multilabel::best_threshold(&y.y, &f, k, data.sample_weight.as_deref());
    }
    let f = coll.gather(&f)?;
    let y = coll.gather(&y.y)?;
    // Weights of 1 where a rank has none: the same calls on every rank, the same θ.
    let w = match data.sample_weight.as_deref() {
        Some(w) => coll.gather(w)?,
        None => coll.gather(&vec![1.0; data.n_rows()])?,
    };
    crate::eval::multilabel::best_threshold(&y, &f, k, Some(&w))
}

/// `h` (`n × k`) = the leaf values of each row's leaf; parallel over fixed row chunks.
pub(crate) fn tree_outputs(leaf_of_row: &[u32], leaf_values: &[f64], k: usize, h: &mut [f64]) {
    traffic::add(Pass::TreeOutputs, traffic::bytes(leaf_of_row), traffic::bytes(h));
    let fill = |(h, leaves): (&mut [f64], &[u32])| outputs_of_rows(leaves, leaf_values, k, h);
    h.par_chunks_mut(ROW_CHUNK * k).zip(leaf_of_row.par_chunks(ROW_CHUNK)).for_each(fill);
}

/// [`tree_outputs`] of some rows, on this thread (`h`: `leaf_of_row.len() × k`).
#[inline]
pub(crate) fn outputs_of_rows(leaf_of_row: &[u32], leaf_values: &[f64], k: usize, h: &mut [f64]) {
    if k == 1 {
        for (h, &l) in h.iter_mut().zip(leaf_of_row) {
            *h = leaf_values[l as usize];
        }
    } else {
        for (h, &l) in h.chunks_exact_mut(k).zip(leaf_of_row) {
            let l = l as usize;
            h.copy_from_slice(&leaf_values[l * k..(l + 1) * k]);
        }
    }
}

/// The boosting loop: `model` is the empty model (its clip level, base score and decoding set
/// for the validation scores), `tracker` the validation data, `init` a model whose
/// trees are replayed first (warm start, see [`super::validation`]).
#[allow(clippy::too_many_arguments)]
fn run_with(
    data: &BinnedData,
    params: &BoostParams,
    mut booster: Box<dyn Booster>,
    mut model: Ensemble,
    mut tracker: Option<validation::Tracker>,
    init: Option<&Ensemble>,
    cancel: Option<&Cancel>,
    on_round: &mut dyn FnMut(&RoundRecord),
    coll: &Shared,
) -> Result<Ensemble> {
    cancel::check(cancel)?;
    let (mapper, binned) = (&data.mapper, &data.bins);
    let n = data.n_rows();
    let k = booster.n_outputs();
    let mut stats = vec![0.0; n * k];
    let mut h = vec![0.0; n * k];
    let n_init = init.map_or(0, Ensemble::n_trees);
    // `pure_leaves = auto` is the booster's policy (`default_pure_leaves`), recorded in
    // the model as resolved. When it forbids pure leaves and the tree is then useless (one leaf, or
    // every leaf 0: tiny or nearly separable data), that round's tree is grown again with pure
    // leaves allowed, so the default does not stop where allowing them would not. An explicit
    // `forbid` (the authors' preset) is never relaxed.
    let auto_pure = params.tree.pure_leaves == PureLeaves::Auto;
    let mut tree_params = params.tree.clone();
    if auto_pure {
        tree_params.pure_leaves = default_pure_leaves(params.algorithm);
        model.params.tree.pure_leaves = tree_params.pure_leaves;
    }
    let relaxed = TreeParams { pure_leaves: PureLeaves::Allow, ..tree_params.clone() };
    // Monotone and interaction constraints by feature index (docs/how-to/constraints.md).
    let constraints = Constraints::resolve(&params.tree, &data.schema.names, mapper)?;
    let monotone: &[i8] = constraints.as_ref().map_or(&[], |c| c.monotone.as_slice());
    booster.statistics(&mut stats);
    // The grower's per-row buffers, reused by every round.
    let mut row_bufs = RowBuffers::default();
    for round in 1..=params.n_estimators {
        cancel::check(cancel)?;
        traffic::round();
        let (tree, leaf_of_row) = if round <= n_init {
            // Warm start: replay the init model's tree (its outputs on the training bins).
            let tree = init.map(|m| m.trees[round - 1].clone()).ok_or_else(|| Error::InvalidModel("no init".into()))?;
            validation::tree_outputs_on_bins(&tree, binned, k, &mut h);
            (tree, None)
        } else {
            let criterion = params.tree.criterion.unwrap_or_else(|| booster.default_criterion());
            let mut spec = GrowSpec {
                params: &tree_params,
                criterion,
                leaf_rule: booster.leaf_rule(),
                seed: params.seed.wrapping_add(round as u64),
                row_weight: data.sample_weight.as_deref(),
                constraints: constraints.as_ref(),
            };
            let mut grown = if params.algorithm == Algorithm::AbstainingAdaBoost {
                abstaining_stump_constrained(binned, mapper, &stats, data.sample_weight.as_deref(), monotone)?
            } else {
                let g = grow_ranks(binned, mapper, &stats, k, &spec, cancel, coll.get(), &mut row_bufs)?;
                let useless = g.tree.n_leaves() == 1 || g.tree.leaf_values.iter().all(|v| *v == 0.0);
                if auto_pure && tree_params.pure_leaves == PureLeaves::Forbid && useless {
                    spec.params = &relaxed;
                    row_bufs.recycle_leaves(g.leaf_of_row);
                    grow_ranks(binned, mapper, &stats, k, &spec, cancel, coll.get(), &mut row_bufs)?
                } else {
                    g
                }
            };
            booster.finish_leaves(&mut grown.tree.leaf_values);
            if let Some(v) = grown.tree.leaf_values.iter().find(|v| !v.is_finite()) {
                return Err(Error::Numerical(format!("round {round}: leaf value {v}")));
            }
            (grown.tree, Some(grown.leaf_of_row))
        };
        let mut diag = Diagnostics::new();
        // The step also writes the next round's statistics (one pass over the examples); on a
        // grown tree it reads the leaves of the rows.
        let step = match &leaf_of_row {
            Some(leaves) => booster.step_on_leaves(leaves, &tree.leaf_values, &mut h, &mut diag, &mut stats)?,
            None => booster.step_then_statistics(&h, &mut diag, &mut stats)?,
        };
        if let Some(leaves) = leaf_of_row {
            row_bufs.recycle_leaves(leaves);
        }
        let (mut alpha, mut stop_reason) = match step {
            Step::Add { alpha } => (Some(alpha), None),
            Step::AddAndStop { alpha, reason } => (Some(alpha), Some(reason)),
            Step::Stop { reason } => (None, Some(reason)),
        };
        if let Some(init) = init.filter(|_| round <= n_init) {
            let want = init.alphas[round - 1];
            if coll.is_distributed() {
                // The ranks' sums round in another order than the machine that trained
                // `init`, so its α is matched within rounding, and kept as it is.
                if !alpha.is_some_and(|a| validation::replay_close(a, want)) {
                    return Err(validation::replay_mismatch(round, alpha, want));
                }
                alpha = Some(want);
            } else if alpha.map(f64::to_bits) != Some(want.to_bits()) {
                return Err(validation::replay_mismatch(round, alpha, want));
            }
        }
        let mut values: BTreeMap<String, f64> =
            diag.into_iter().filter(|(_, v)| v.is_finite()).map(|(k, v)| (k.to_string(), v + 0.0)).collect(); // + 0.0: no −0
        if let Some(a) = alpha {
            if !a.is_finite() {
                return Err(Error::Numerical(format!("round {round}: α = {a}")));
            }
            // The ensemble is monotone when every term α·h is (docs/how-to/constraints.md#the-ensemble):
            // the learner's trees are, but a negative α, or a booster's leaf adjustment, can break
            // a term. Such a term is not added: a replayed one is an error, a new one stops.
            if constraints.as_ref().is_some_and(|c| !c.monotone_term(&tree, a)) {
                if round <= n_init {
                    return Err(Error::param(
                        "monotone_constraints",
                        "an init model whose trees keep the constraints",
                        format!("round {round}'s tree, which breaks them"),
                    ));
                }
                let reason = format!(
                    "round {round}'s tree with α = {a} would break the monotone constraints (docs/how-to/constraints.md#the-ensemble)"
                );
                let record = RoundRecord { round, values, stop_reason: Some(reason) };
                on_round(&record);
                cancel::check(cancel)?;
                model.history.push(record);
                break;
            }
            if let Some(tr) = tracker.as_mut() {
                // The validation curve, and early stopping.
                tr.add(&tree, a);
                model.push(tree, a);
                let v = tr.value(&model, coll)?;
                values.insert("valid_metric".into(), v + 0.0);
                if let Some(reason) = tr.observe(model.n_trees(), v) {
                    stop_reason.get_or_insert(reason);
                }
            } else {
                model.push(tree, a);
            }
        }
        let record = RoundRecord { round, values, stop_reason: stop_reason.clone() };
        on_round(&record);
        cancel::check(cancel)?; // `on_round` may have asked to stop
        model.history.push(record);
        if stop_reason.is_some() {
            break;
        }
    }
    if model.trees.is_empty() {
        let reason = model.history.last().and_then(|r| r.stop_reason.clone()).unwrap_or_default();
        return Err(Error::InvalidData(format!("boosting stopped before the first tree: {reason}")));
    }
    if let Some(tr) = &tracker {
        model.eval_metric = Some(tr.metric().name().to_string());
        if params.early_stopping_rounds.is_some() {
            // The model keeps its best iteration (truncated; the history keeps every round).
            let keep = tr.best_trees().unwrap_or(model.n_trees()).max(1);
            model.trees.truncate(keep);
            model.alphas.truncate(keep);
            model.best_iteration = Some(keep - 1);
        }
    }
    sum_covers(&mut model, n_init, coll)?;
    Ok(model)
}

/// The covers of the trees grown in this fit (not the replayed ones of a
/// warm start, already summed) summed over the ranks in one call at the end, instead of one call
/// per round ([`grow_ranks`] leaves them as this rank's). Nothing on one machine.
fn sum_covers(model: &mut Ensemble, n_init: usize, coll: &Shared) -> Result<()> {
    if !coll.is_distributed() {
        return Ok(());
    }
    let grown = model.trees.get_mut(n_init..).unwrap_or_default();
    let mut all: Vec<f64> = grown.iter().flat_map(|t| t.covers.iter().copied()).collect();
    coll.sum(&mut all)?;
    let mut at = 0;
    for t in grown {
        let len = t.covers.len();
        t.covers.copy_from_slice(&all[at..at + len]);
        at += len;
    }
    Ok(())
}

/// `t = auto` chooses t by its own inner cross-validation: validation data or an init model
/// need a fixed t (the same refusal on one machine and on ranks).
fn refuse_auto_t_with(opts: &FitOptions<'_>) -> Result<()> {
    if opts.valid.is_some() || opts.init_model.is_some() {
        return Err(Error::param(
            "t",
            "a fixed t with validation data or an init model (t = auto chooses t by its own inner \
             cross-validation)",
            "auto",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_pure_leaves_falls_back_when_forbidding_leaves_no_split() {
        use crate::data::{Features, Target};
        // Every split of these 4 rows leaves a pure child: with pure leaves forbidden the tree is
        // one balanced leaf (value 0) and boosting cannot start.
        let x = [0.0, 1.0, 2.0, 3.0];
        let y: Vec<String> = ["0", "0", "1", "1"].iter().map(|s| s.to_string()).collect();
        let d = Dataset::new(
            Features::from_row_major(&x, 4, 1).unwrap(),
            Some(Target::from_strings(&y, None).unwrap()),
            None,
        )
        .unwrap();
        let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, n_estimators: 2, ..Default::default() };
        let m = fit(&d, &p).unwrap();
        assert_eq!(m.params.tree.pure_leaves, PureLeaves::Forbid);
        assert_eq!(m.trees[0].n_leaves(), 2);
        p.tree.pure_leaves = PureLeaves::Allow;
        let allowed = fit(&d, &p).unwrap();
        assert_eq!((&m.trees, &m.alphas), (&allowed.trees, &allowed.alphas));
        // An explicit `forbid` is never relaxed.
        p.tree.pure_leaves = PureLeaves::Forbid;
        assert!(fit(&d, &p).unwrap_err().to_string().contains("before the first tree"));
    }

    #[test]
    fn every_algorithm_name_round_trips_through_serde() {
        let all: Vec<Algorithm> = Algorithm::ALL.iter().map(|p| p.1).collect();
        assert_eq!(all.len(), 11);
        for (name, a) in Algorithm::ALL {
            assert_eq!(Algorithm::parse(name).unwrap(), *a);
            assert_eq!(serde_json::to_string(a).unwrap(), format!("\"{name}\""));
            assert_eq!(a.name(), *name);
        }
        assert!(Algorithm::parse("xgboost").unwrap_err().to_string().contains("t-adaboost"));
    }
}
