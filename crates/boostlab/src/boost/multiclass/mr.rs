//! AdaBoost.MR (ranking loss) and AdaBoost.M2, in the efficient O(mk) form (SPEC §4.7).

use super::{check_labels_on, check_outputs, single_label_classes, step_of, vote};
use super::{MultiParams, MultiVariant};
use crate::boost::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::eval::multilabel;
use crate::tree::{Criterion, LeafRule};

/// Discrete AdaBoost.MR (SPEC §4.7), and AdaBoost.M2 = MR on single-label data.
///
/// The distribution over crucial pairs (ℓ0 ∉ Y_i, ℓ1 ∈ Y_i) is never stored: it is
/// `D(i, ℓ0, ℓ1) = v(i, ℓ0) v(i, ℓ1)` with one weight `v(i, ℓ)` per (example, label), so memory and
/// time per round are O(mk). The weak learner is AdaBoost.MH's, fed with the per-label weights
/// `w(i, ℓ) = ½ v(i, ℓ) Σ_{ℓ' : Y_i[ℓ'] ≠ Y_i[ℓ]} v(i, ℓ')` (which sum to 1): the edge is then
/// `r = Σ w Y h`, maximised by sign leaves under the empirical criterion, and
/// `α = ½ ln((1+r)/(1−r))`.
///
/// Examples with no crucial pair (no relevant or no irrelevant label) carry no weight; the others
/// start at `D_1(i, ·, ·) = s_i / (S |Y_i| |Y − Y_i|)`, s_i the sample weight (1 by default) and
/// S the total over those examples. `bound` = Π Z_t bounds the ranking loss over them.
#[derive(Debug, Clone)]
pub struct AdaBoostMr {
    n: usize,
    k: usize,
    y: Vec<f64>,
    sw: Vec<f64>,
    /// `v_t(i, ℓ)`, n × k.
    v: Vec<f64>,
    f: Vec<f64>,
    log_bound: f64,
    /// Learning rate ν (issue 15).
    lr: f64,
    /// The weight of the examples with no crucial pair (their count without sample weights):
    /// weight 0, outside rloss (SPEC §4.7), reported as the diagnostic `no_crucial_pair`.
    no_pair: f64,
    /// Issue 13: the ranks' collective (local by default).
    coll: Shared,
}

impl AdaBoostMr {
    /// Builds the booster for `params.variant` ∈ {`mr`, `m2`} on ±1 labels (`n × k`, `k ≥ 2`).
    /// `m2` requires single-label data. At least one example must have a crucial pair.
    pub fn new(labels: &Labels<'_>, params: &MultiParams) -> Result<AdaBoostMr> {
        Self::new_on(labels, params, &Shared::default())
    }

    /// [`AdaBoostMr::new`] for this rank's examples of the ranks of `coll` (issue 13).
    pub(crate) fn new_on(labels: &Labels<'_>, params: &MultiParams, coll: &Shared) -> Result<AdaBoostMr> {
        params.check()?;
        match params.variant {
            MultiVariant::Mr => {}
            MultiVariant::M2 => {
                single_label_classes(labels)?;
            }
            v => return Err(Error::param("variant", "mr or m2 for AdaBoost.MR", v)),
        }
        let c = check_labels_on(labels, coll)?;
        if c.k < 2 {
            return Err(Error::InvalidData("AdaBoost.MR needs at least 2 labels".into()));
        }
        let (n, k) = (c.n, c.k);
        // Relevant-label count of each example, and the total weight of the examples with pairs.
        let n_rel: Vec<usize> = c.y.chunks_exact(k).map(|r| r.iter().filter(|&&v| v > 0.0).count()).collect();
        let mut total: f64 = (0..n).filter(|&i| n_rel[i] > 0 && n_rel[i] < k).map(|i| c.sw[i]).sum();
        // SPEC §4.7: examples with no crucial pair get weight 0 and are counted.
        // Counted as the other totals are, in units of sample weight (a weight is a repetition).
        let mut no_pair: f64 = (0..n)
            .filter(|&i| n_rel[i] == 0 || n_rel[i] == k)
            .map(|i| labels.sample_weight.map_or(1.0, |w| w[i]))
            .sum();
        if coll.is_distributed() {
            // Issue 13: over every rank (one call).
            let mut b = [total, no_pair];
            coll.sum(&mut b)?;
            [total, no_pair] = b;
        }
        if total <= 0.0 {
            return Err(Error::InvalidData(
                "AdaBoost.MR needs an example (of positive weight) with both a relevant and an \
                 irrelevant label"
                    .into(),
            ));
        }
        let mut v = vec![0.0; n * k];
        for i in 0..n {
            if n_rel[i] > 0 && n_rel[i] < k {
                // SPEC §4.7: v_1(i, ℓ) = (m |Y_i| |Y − Y_i|)^(−1/2), with sample weights.
                let vi = (c.sw[i] / (total * (n_rel[i] * (k - n_rel[i])) as f64)).sqrt();
                v[i * k..(i + 1) * k].fill(vi);
            }
        }
        Ok(AdaBoostMr {
            n,
            k,
            y: c.y,
            sw: c.sw,
            v,
            f: vec![0.0; n * k],
            log_bound: 0.0,
            lr: 1.0,
            no_pair,
            coll: coll.clone(),
        })
    }

    /// Number of labels k.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The per-(example, label) weights `v_t(i, ℓ)` (`n × k`).
    pub fn v(&self) -> &[f64] {
        &self.v
    }

    /// `D_t(i, ℓ0, ℓ1) = v_t(i, ℓ0) v_t(i, ℓ1)` if (ℓ0, ℓ1) is a crucial pair of example i
    /// (ℓ0 irrelevant, ℓ1 relevant), else 0.
    pub fn pair_weight(&self, i: usize, l0: usize, l1: usize) -> f64 {
        let k = self.k;
        if self.y[i * k + l0] < 0.0 && self.y[i * k + l1] > 0.0 {
            self.v[i * k + l0] * self.v[i * k + l1]
        } else {
            0.0
        }
    }

    /// The training scores `f(x_i, ℓ)` (`n × k`, row-major).
    pub fn training_scores(&self) -> &[f64] {
        &self.f
    }

    /// Π_t Z_t so far (bounds the training ranking loss).
    pub fn bound(&self) -> f64 {
        self.log_bound.exp()
    }

    /// Calls `each(index, w(i, ℓ), Y_i[ℓ])` for every pair, with
    /// `w(i, ℓ) = ½ v(i, ℓ) Σ_{ℓ' : Y_i[ℓ'] ≠ Y_i[ℓ]} v(i, ℓ')` (SPEC §4.7).
    fn for_each_w(&self, mut each: impl FnMut(usize, f64, f64)) {
        let k = self.k;
        for (i, (vr, yr)) in self.v.chunks_exact(k).zip(self.y.chunks_exact(k)).enumerate() {
            let (mut vp, mut vn) = (0.0, 0.0);
            for (v, y) in vr.iter().zip(yr) {
                if *y > 0.0 {
                    vp += v;
                } else {
                    vn += v;
                }
            }
            for (l, (v, y)) in vr.iter().zip(yr).enumerate() {
                let other = if *y > 0.0 { vn } else { vp };
                each(i * k + l, 0.5 * v * other, *y);
            }
        }
    }
}

impl Booster for AdaBoostMr {
    fn n_outputs(&self) -> usize {
        self.k
    }

    fn default_criterion(&self) -> Criterion {
        // Σ w [Y ≠ h] is minimised by sign leaves, which maximises r = Σ w Y h = 1 − 2 Σ w [Y ≠ h].
        Criterion::Empirical
    }

    fn leaf_rule(&self) -> LeafRule {
        LeafRule::Sign
    }

    fn statistics(&self, stats: &mut [f64]) {
        debug_assert_eq!(stats.len(), self.n * self.k);
        // SPEC §4.7: reuse the MH weak learner with weights w(i, ℓ), by the sign of Y_i[ℓ].
        self.for_each_w(|j, w, y| stats[j] = crate::boost::signed(y, w));
    }

    fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        check_outputs(h, self.n * self.k)?;
        // SPEC §4.7: r = Σ_{i,ℓ} w(i,ℓ) Y_i[ℓ] h(x_i,ℓ) = ½ Σ D(i,ℓ0,ℓ1)(h(x_i,ℓ1) − h(x_i,ℓ0)).
        let mut r = 0.0;
        self.for_each_w(|j, w, y| r += w * y * h[j]);
        if self.coll.is_distributed() {
            // Issue 13: the edge over every rank.
            let mut b = [r];
            self.coll.sum(&mut b)?;
            r = b[0];
        }
        let (alpha, step) = step_of(vote(r), r);
        // Issue 15: shrinkage, α ← ν·α before the weight update.
        let (alpha, step) = (crate::boost::shrink(self.lr, alpha), crate::boost::shrink_step(self.lr, step));
        diag.insert("r", r);
        if let Step::Stop { .. } = step {
            return Ok(step);
        }
        // SPEC §4.7: v'(i,ℓ) = v(i,ℓ) exp(−½ α Y_i[ℓ] h(x_i,ℓ)) (= e^{½αh} for ℓ ∉ Y_i and
        // e^{−½αh} for ℓ ∈ Y_i); Z = Σ_i [Σ_{ℓ ∉ Y_i} v'] · [Σ_{ℓ ∈ Y_i} v'].
        let k = self.k;
        let mut z = 0.0;
        for ((vr, yr), hr) in self.v.chunks_exact_mut(k).zip(self.y.chunks_exact(k)).zip(h.chunks_exact(k)) {
            let (mut vp, mut vn) = (0.0, 0.0);
            for ((v, y), hv) in vr.iter_mut().zip(yr).zip(hr) {
                *v *= (-0.5 * alpha * y * hv).exp();
                if *y > 0.0 {
                    vp += *v;
                } else {
                    vn += *v;
                }
            }
            z += vp * vn;
        }
        let mut metrics = None;
        if self.coll.is_distributed() {
            // Issue 13: Z and the training metrics' sums over every rank (one call; the scores
            // move first, which changes nothing: they do not depend on Z).
            for (f, hv) in self.f.iter_mut().zip(h) {
                *f += alpha * hv;
            }
            let [a, b] = multilabel::metric_sums(2, &self.y, &self.f, self.k, &self.sw);
            let [c, d] = multilabel::metric_sums(1, &self.y, &self.f, self.k, &self.sw);
            let mut buf = [z, a, b, c, d];
            self.coll.sum(&mut buf)?;
            z = buf[0];
            metrics = Some([multilabel::mean_of_sums([buf[1], buf[2]]), multilabel::mean_of_sums([buf[3], buf[4]])]);
        }
        if !(z > 0.0 && z.is_finite()) {
            return Err(Error::Numerical(format!("AdaBoost.MR normaliser Z = {z} (weights under- or overflowed)")));
        }
        // SPEC §4.7: v_{t+1} = v'/√Z_t.
        let sz = z.sqrt();
        for v in &mut self.v {
            *v /= sz;
        }
        if metrics.is_none() {
            for (f, hv) in self.f.iter_mut().zip(h) {
                *f += alpha * hv;
            }
        }
        self.log_bound += z.ln();
        diag.insert("alpha", alpha);
        diag.insert("z", z);
        diag.insert("no_crucial_pair", self.no_pair);
        let [rank_loss, one] = match metrics {
            Some(m) => m,
            None => [
                multilabel::ranking_loss(&self.y, &self.f, self.k, Some(&self.sw))?,
                multilabel::one_error(&self.y, &self.f, self.k, Some(&self.sw))?,
            ],
        };
        diag.insert("ranking_loss", rank_loss);
        diag.insert("one_error", one);
        diag.insert("bound", self.bound());
        Ok(step)
    }
}
