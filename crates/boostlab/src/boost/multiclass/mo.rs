//! AdaBoost.MO: AdaBoost.MH on output-coded labels (docs/explanation/multiclass.md#multiclass-mo).

use super::{check_labels_on, single_label_classes, AdaBoostMh, CodeMatrix, Decode, MultiParams};
use super::{decode_into, MultiVariant};
use crate::boost::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::tree::{Criterion, LeafRule};
use crate::util::par;
use crate::util::traffic::{self, Pass};

/// AdaBoost.MO (docs/explanation/multiclass.md#multiclass-mo): single-label data with k classes, a code λ with k' columns, and
/// AdaBoost.MH (discrete or real) run on the coded labels `λ(y_i) ∈ {−1, +1}^{k'}`. The tree
/// learner sees `2k'` statistics per example and returns `k'` outputs.
///
/// Diagnostics: `hamming_loss` is over the k' coded bits (bounded by `bound` = Π Z_t);
/// `one_error` is the training error of the decoded class, which is at most `(k'/ρ) Π Z_t` with
/// loss decoding and `(2k'/ρ) Π Z_t` with Hamming decoding (ρ = [`CodeMatrix::min_distance`]).
#[derive(Debug, Clone)]
pub struct AdaBoostMo {
    mh: AdaBoostMh,
    code: CodeMatrix,
    class: Vec<u32>,
    decode: Decode,
}

impl AdaBoostMo {
    /// Builds the booster for `params.variant` ∈ {`mo-discrete`, `mo-real`}: the classes come from
    /// `labels.class` or the single +1 of each row of `labels.y` (`k = labels.k ≥ 2` classes), the
    /// code from `params.code`.
    pub fn new(labels: &Labels<'_>, params: &MultiParams) -> Result<AdaBoostMo> {
        Self::new_on(labels, params, &Shared::default())
    }

    /// [`AdaBoostMo::new`] for this rank's examples of the ranks of `coll`.
    pub(crate) fn new_on(labels: &Labels<'_>, params: &MultiParams, coll: &Shared) -> Result<AdaBoostMo> {
        params.check()?;
        let real = match params.variant {
            MultiVariant::MoDiscrete => false,
            MultiVariant::MoReal => true,
            v => return Err(Error::param("variant", "mo-discrete or mo-real for AdaBoost.MO", v)),
        };
        let c = check_labels_on(labels, coll)?;
        let class = single_label_classes(labels)?;
        let code = CodeMatrix::build(&params.code, c.k)?;
        // docs/explanation/multiclass.md#multiclass-mo: run AdaBoost.MH on (x_i, λ(y_i)).
        let y = code.encode(&class);
        let mh = AdaBoostMh::from_parts(c.n, code.n_columns, y, c.sw, real, params.smoothing(c.m), None)
            .with_collective(coll.clone());
        Ok(AdaBoostMo { mh, code, class, decode: params.decode })
    }

    /// The output code (store it in the model file).
    pub fn code(&self) -> &CodeMatrix {
        &self.code
    }

    /// The decoding rule.
    pub fn decode_rule(&self) -> Decode {
        self.decode
    }

    /// The underlying AdaBoost.MH on the coded labels.
    pub fn mh(&self) -> &AdaBoostMh {
        &self.mh
    }

    /// The training column scores `f(x_i, ℓ')` (`n × k'`, row-major).
    pub fn training_scores(&self) -> &[f64] {
        self.mh.training_scores()
    }

    /// Π_t Z_t so far (bounds the Hamming loss over the coded bits).
    pub fn bound(&self) -> f64 {
        self.mh.bound()
    }

    /// Weighted training error of the decoded classes: fixed chunks of [`par::ROW_CHUNK`] rows in
    /// parallel, summed in row order within a chunk and in chunk order across them.
    fn class_error(&self) -> f64 {
        let kp = self.code.n_columns;
        let (sw, scores) = (self.mh.sample_weights(), self.training_scores());
        // The decoding of every row's scores (with its class and sample weight).
        traffic::add(Pass::BoosterStep, traffic::bytes(scores) + traffic::bytes(sw) + traffic::bytes(&self.class), 0);
        let parts = par::map_chunks(self.class.len(), |rows| {
            let mut losses = vec![0.0; self.code.n_classes];
            let mut err = 0.0;
            for i in rows {
                if decode_into(&self.code, &scores[i * kp..(i + 1) * kp], self.decode, &mut losses)
                    != self.class[i] as usize
                {
                    err += sw[i];
                }
            }
            err
        });
        parts.iter().fold(0.0, |a, p| a + p)
    }
}

impl Booster for AdaBoostMo {
    fn n_outputs(&self) -> usize {
        self.mh.n_outputs()
    }
    fn default_criterion(&self) -> Criterion {
        self.mh.default_criterion()
    }
    fn leaf_rule(&self) -> LeafRule {
        self.mh.leaf_rule()
    }
    fn statistics(&self, stats: &mut [f64]) {
        self.mh.statistics(stats)
    }
    fn set_learning_rate(&mut self, lr: f64) {
        self.mh.set_learning_rate(lr);
    }

    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        let step = self.mh.step(h, diag)?;
        if !matches!(step, Step::Stop { .. }) {
            let mut err = [self.class_error()];
            // Over every rank (the weights are normalised over every rank).
            self.mh.collective().sum(&mut err)?;
            diag.insert("one_error", err[0]);
        }
        Ok(step)
    }

    fn step_then_statistics(&mut self, h: &[f64], diag: &mut Diagnostics, stats: &mut [f64]) -> Result<Step> {
        let step = self.mh.step_then_statistics(h, diag, stats)?;
        if !matches!(step, Step::Stop { .. }) {
            let mut err = [self.class_error()];
            // Over every rank (the weights are normalised over every rank).
            self.mh.collective().sum(&mut err)?;
            diag.insert("one_error", err[0]);
        }
        Ok(step)
    }
}
