//! [`Trainer`]: the one way to train an ensemble.
//!
//! A builder over the parameters and the optional inputs of a fit — a user loss for SecBoost,
//! validation data, a model to continue, a cancel flag, a collective for distributed training and
//! a per-round callback — ending in [`Trainer::fit`] (a [`Dataset`], binned with
//! `params.max_bins`) or [`Trainer::fit_binned`] (bins from any source). Both run the single
//! boosting loop of [`super::driver`].
//!
//! ```
//! use boostlab::{data::Features, Algorithm, BoostParams, Dataset, Target, Trainer};
//! let x = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];
//! let y: Vec<String> = ["a", "a", "b", "a", "b", "b"].iter().map(|s| s.to_string()).collect();
//! let data = Dataset::new(Features::from_row_major(&x, 6, 1)?, Some(Target::from_strings(&y, None)?), None)?;
//! let params = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 5, ..Default::default() };
//! let mut rounds = 0;
//! let mut count = |_: &boostlab::RoundRecord| rounds += 1;
//! let model = Trainer::new(&params).on_round(&mut count).fit(&data)?;
//! assert_eq!(model.n_trees(), 5);
//! assert_eq!(rounds, 5);
//! # Ok::<(), boostlab::Error>(())
//! ```

use std::sync::Arc;

use super::driver::{self, RoundRecord};
use super::validation::{FitOptions, Validation};
use crate::collective::Collective;
use crate::data::{BinnedData, Dataset};
use crate::error::{Error, Result};
use crate::math::loss::Loss;
use crate::model::Ensemble;
use crate::params::BoostParams;
use crate::util::cancel::Cancel;

/// Trains an ensemble: the parameters, then the optional inputs, then [`Trainer::fit`] or
/// [`Trainer::fit_binned`]. The parameters are checked ([`BoostParams::check`]) at the start of
/// every fit.
pub struct Trainer<'a> {
    params: &'a BoostParams,
    loss: Option<Loss>,
    opts: FitOptions<'a>,
    collective: Option<Arc<dyn Collective>>,
    on_round: Option<&'a mut dyn FnMut(&RoundRecord)>,
    active_wait: bool,
}

impl<'a> Trainer<'a> {
    /// A trainer with `params` and nothing else: no user loss, validation data, initial model,
    /// cancel flag, collective (one machine) or round callback.
    pub fn new(params: &'a BoostParams) -> Trainer<'a> {
        Trainer { params, loss: None, opts: FitOptions::default(), collective: None, on_round: None, active_wait: true }
    }

    /// A user-defined loss (a Rust closure, or a Python callable through the bindings) for
    /// SecBoost; any other algorithm is refused. By default (or `None`) the loss of
    /// `params.secboost.loss`.
    pub fn loss(mut self, loss: impl Into<Option<Loss>>) -> Trainer<'a> {
        self.loss = loss.into();
        self
    }

    /// Validation data: each round's metric goes into the history (`valid_metric`); needed by
    /// `early_stopping_rounds` (see [`super::validation`]). By default none; takes `&v` or an
    /// `Option`.
    pub fn validation(mut self, valid: impl Into<Option<&'a Validation>>) -> Trainer<'a> {
        self.opts.valid = valid.into();
        self
    }

    /// A model to continue (warm start), trained on the same data with the same parameters
    /// (`n_estimators` and the validation settings aside): its trees are replayed, then rounds
    /// are added up to `n_estimators` in all. By default none; takes `&m` or an `Option`.
    pub fn init_model(mut self, model: impl Into<Option<&'a Ensemble>>) -> Trainer<'a> {
        self.opts.init_model = model.into();
        self
    }

    /// Stops the fit with [`Error::Cancelled`] once `cancel` is set (checked between rounds and
    /// between the tree's nodes). By default none; takes `&c` or an `Option`.
    pub fn cancel(mut self, cancel: impl Into<Option<&'a Cancel>>) -> Trainer<'a> {
        self.opts.cancel = cancel.into();
        self
    }

    /// Distributed training: this process holds one rank's rows of a fit spread over the ranks
    /// of `collective`, and every sum over the rows is summed over the ranks (see
    /// [`crate::collective`]). Every rank gives the same parameters and bins from the same mapper
    /// ([`Trainer::fit_binned`]), and every rank gets the model one machine trains on all the rows,
    /// up to the rounding of sums taken in another order. A collective of one rank changes
    /// nothing. By default one machine.
    pub fn collective(mut self, collective: Arc<dyn Collective>) -> Trainer<'a> {
        self.collective = Some(collective);
        self
    }

    /// Called after every round with its record (progress, logs); it may set the cancel flag to
    /// stop the fit. By default none.
    pub fn on_round(mut self, on_round: &'a mut dyn FnMut(&RoundRecord)) -> Trainer<'a> {
        self.on_round = Some(on_round);
        self
    }

    /// Whether the thread pool's idle threads poll for work during a fit on one machine instead
    /// of sleeping between the tree learner's short parallel steps (docs/explanation/performance.md#performance-threads).
    /// By default on: on 10,000 rows two threads then fit in about 0.75× the time of one
    /// sleeping helper. Turn it off when several fits run side by side in one pool (as the
    /// experiment runner does): a polling thread keeps its core until its fit ends. Never changes
    /// the model; a distributed fit never polls (a rank waits for its peers).
    pub fn active_wait(mut self, on: bool) -> Trainer<'a> {
        self.active_wait = on;
        self
    }

    /// Trains on a dataset: checks the parameters, the data and the labels, bins the features
    /// with `params.max_bins` bins per feature, then trains as [`Trainer::fit_binned`]. Not with
    /// a collective of several ranks (their bins must come from one shared mapper).
    pub fn fit(self, data: &Dataset) -> Result<Ensemble> {
        if self.collective.as_ref().is_some_and(|c| c.size() > 1) {
            return Err(Error::Distributed(
                "distributed training takes every rank's rows as bins of one shared mapper: use fit_binned".into(),
            ));
        }
        let mut nothing = |_: &RoundRecord| {};
        let on_round = self.on_round.unwrap_or(&mut nothing);
        polling(self.active_wait, || driver::fit_with_options(data, self.params, self.loss, self.opts, on_round))
    }

    /// Trains on binned data, the one training path every input feeds. The bins must come from
    /// a mapper learned with at most `params.max_bins` bins per feature; the same rows, bins,
    /// target, weights and parameters give the same model as [`Trainer::fit`] on a [`Dataset`]
    /// of those values.
    pub fn fit_binned(self, data: &BinnedData) -> Result<Ensemble> {
        let mut nothing = |_: &RoundRecord| {};
        let on_round = self.on_round.unwrap_or(&mut nothing);
        match self.collective {
            Some(c) => driver::fit_binned_distributed(data, self.params, self.loss, self.opts, c, on_round),
            None => polling(self.active_wait, || {
                driver::fit_binned_with_options(data, self.params, self.loss, self.opts, on_round)
            }),
        }
    }
}

/// `f` inside [`crate::util::par::active_wait`] when `on`, else `f` as it is.
fn polling<R>(on: bool, f: impl FnOnce() -> R) -> R {
    if on {
        crate::util::par::active_wait(f)
    } else {
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collective::Local;
    use crate::data::{Features, Target};
    use crate::params::Algorithm;

    fn data() -> Dataset {
        let x: Vec<f64> = (0..60).map(|i| ((i * 37) % 23) as f64).collect();
        let y: Vec<String> = (0..60).map(|i| if (i * 37) % 23 > 11 { "b" } else { "a" }.to_string()).collect();
        Dataset::new(
            Features::from_row_major(&x, 60, 1).expect("features"),
            Some(Target::from_strings(&y, None).expect("target")),
            None,
        )
        .expect("data")
    }

    /// `fit` on a dataset, `fit_binned` on its bins and a collective of one rank give one model.
    #[test]
    fn every_entry_gives_the_same_model() {
        let d = data();
        let p = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 6, ..Default::default() };
        let a = Trainer::new(&p).fit(&d).expect("fit").to_json().expect("json");
        let binned = BinnedData::from_dataset(&d, p.max_bins).expect("bins");
        let b = Trainer::new(&p).fit_binned(&binned).expect("fit_binned").to_json().expect("json");
        let c = Trainer::new(&p).collective(Arc::new(Local)).fit_binned(&binned).expect("one rank");
        assert_eq!(a, b);
        assert_eq!(a, c.to_json().expect("json"));
    }

    /// Polling or sleeping idle threads, one thread or three: the same model, bit for bit, on
    /// data large enough for every parallel step of the learner.
    #[test]
    fn active_wait_never_changes_the_model() {
        let (n, d) = (6000, 6);
        let x: Vec<f64> = (0..n * d).map(|i| ((i * 7919) % 1009) as f64 / 7.0).collect();
        let y: Vec<String> =
            (0..n).map(|r| if (x[r * d] + x[r * d + 3] * 0.5) % 97.0 > 40.0 { "b" } else { "a" }.to_string()).collect();
        let data = Dataset::new(
            Features::from_row_major(&x, n, d).expect("features"),
            Some(Target::from_strings(&y, None).expect("target")),
            None,
        )
        .expect("data");
        for algorithm in [Algorithm::RealAdaBoost, Algorithm::TAdaBoost] {
            let mut p = BoostParams { algorithm, n_estimators: 8, ..Default::default() };
            p.tree.max_leaves = 8;
            let fit = |threads: usize, active: bool| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool");
                pool.install(|| Trainer::new(&p).active_wait(active).fit(&data).expect("fit").to_json().expect("json"))
            };
            let want = fit(1, false);
            for (threads, active) in [(3, true), (3, false), (2, true)] {
                assert!(fit(threads, active) == want, "{algorithm:?}, {threads} threads, active wait {active}");
            }
        }
    }

    #[test]
    fn a_user_loss_needs_secboost() {
        let l = Loss::from_spec(&crate::math::loss::LossSpec::Logistic).expect("loss");
        let e = Trainer::new(&BoostParams::default()).loss(l).fit(&data()).expect_err("adaboost");
        assert!(e.to_string().contains("secboost"), "{e}");
    }
}
