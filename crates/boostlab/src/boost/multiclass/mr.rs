//! AdaBoost.MR (ranking loss) and AdaBoost.M2, in the efficient O(mk) form (docs/explanation/multiclass.md#multiclass-mr).

use rayon::prelude::*;

use super::chunk_rows;
use super::{check_labels_on, check_outputs, single_label_classes, step_of, top_label, vote};
use super::{MultiParams, MultiVariant};
use crate::boost::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::eval::multilabel;
use crate::tree::{Criterion, LeafRule};
use crate::util::par;
use crate::util::traffic::{self, Pass};

/// Discrete AdaBoost.MR (docs/explanation/multiclass.md#multiclass-mr), and AdaBoost.M2 = MR on single-label data.
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
    /// Learning rate ν.
    lr: f64,
    /// The weight of the examples with no crucial pair (their count without sample weights):
    /// weight 0, outside rloss (docs/explanation/multiclass.md#multiclass-mr), reported as the diagnostic `no_crucial_pair`.
    no_pair: f64,
    /// The ranks' collective (local by default).
    coll: Shared,
}

impl AdaBoostMr {
    /// Builds the booster for `params.variant` ∈ {`mr`, `m2`} on ±1 labels (`n × k`, `k ≥ 2`).
    /// `m2` requires single-label data. At least one example must have a crucial pair.
    pub fn new(labels: &Labels<'_>, params: &MultiParams) -> Result<AdaBoostMr> {
        Self::new_on(labels, params, &Shared::default())
    }

    /// [`AdaBoostMr::new`] for this rank's examples of the ranks of `coll`.
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
        // docs/explanation/multiclass.md#multiclass-mr: examples with no crucial pair get weight 0 and are counted.
        // Counted as the other totals are, in units of sample weight (a weight is a repetition).
        let mut no_pair: f64 = (0..n)
            .filter(|&i| n_rel[i] == 0 || n_rel[i] == k)
            .map(|i| labels.sample_weight.map_or(1.0, |w| w[i]))
            .sum();
        if coll.is_distributed() {
            // Over every rank (one call).
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
                // docs/explanation/multiclass.md#multiclass-mr: v_1(i, ℓ) = (m |Y_i| |Y − Y_i|)^(−1/2), with sample weights.
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
        // docs/explanation/multiclass.md#multiclass-mr: reuse the MH weak learner with weights w(i, ℓ), by the sign of Y_i[ℓ].
        let rows = chunk_rows(self.k);
        let c = rows * self.k;
        traffic::add(Pass::BoosterStatistics, traffic::bytes(&self.v) + traffic::bytes(&self.y), traffic::bytes(stats));
        stats.par_chunks_mut(c).zip(self.v.par_chunks(c).zip(self.y.par_chunks(c))).for_each(|(s, (v, y))| {
            for_each_w(v, y, self.k, |j, w, y| s[j] = crate::boost::signed(y, w));
        });
    }

    fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
    }

    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        self.advance(h, diag, None)
    }

    fn step_then_statistics(&mut self, h: &[f64], diag: &mut Diagnostics, stats: &mut [f64]) -> Result<Step> {
        self.advance(h, diag, Some(stats))
    }
}

/// Calls `each(j, w(i, ℓ), Y_i[ℓ])` for every pair `j = i·k + ℓ` of the rows of `v` and `y` (a
/// chunk of rows, `j` counted from its start), with
/// `w(i, ℓ) = ½ v(i, ℓ) Σ_{ℓ' : Y_i[ℓ'] ≠ Y_i[ℓ]} v(i, ℓ')` (docs/explanation/multiclass.md#multiclass-mr).
#[inline]
fn for_each_w(v: &[f64], y: &[f64], k: usize, mut each: impl FnMut(usize, f64, f64)) {
    for (i, (vr, yr)) in v.chunks_exact(k).zip(y.chunks_exact(k)).enumerate() {
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

/// What the update pass of one chunk of rows sums.
#[derive(Default)]
struct UpdateSums {
    /// `Σ_i [Σ_{ℓ ∉ Y_i} v'] · [Σ_{ℓ ∈ Y_i} v']` (the normaliser Z).
    z: f64,
    /// Ranking-loss numerator and denominator (examples with a crucial pair).
    rloss: f64,
    rloss_den: f64,
    /// One-error numerator and denominator (every example).
    one_error: f64,
    den: f64,
    /// A score became NaN.
    nan: bool,
}

impl AdaBoostMr {
    /// One round (docs/explanation/multiclass.md#multiclass-mr): the edge, α, the update of `v` with the training diagnostics and,
    /// with `stats`, the next round's statistics written in the normalisation pass.
    ///
    /// As AdaBoost.MH's step, fixed chunks of [`chunk_rows`] rows in parallel, sums in
    /// row order within a chunk and in chunk order across chunks (the serial loop's result within
    /// one chunk, the same result for any thread count).
    fn advance(&mut self, h: &[f64], diag: &mut Diagnostics, stats: Option<&mut [f64]>) -> Result<Step> {
        check_outputs(h, self.n * self.k)?;
        let k = self.k;
        let rows = chunk_rows(k);
        let c = rows * k;
        let (v, y) = (&self.v, &self.y);
        // The edge: the weights, labels and outputs read.
        traffic::add(Pass::BoosterStep, traffic::bytes(v) + traffic::bytes(y) + traffic::bytes(h), 0);
        // docs/explanation/multiclass.md#multiclass-mr: r = Σ_{i,ℓ} w(i,ℓ) Y_i[ℓ] h(x_i,ℓ) = ½ Σ D(i,ℓ0,ℓ1)(h(x_i,ℓ1) − h(x_i,ℓ0)).
        let parts = par::map_chunks_of(self.n, rows, |rows| {
            let e = rows.start * k..rows.end * k;
            let (h, mut r) = (&h[e.clone()], 0.0);
            for_each_w(&v[e.clone()], &y[e], k, |j, w, y| r += w * y * h[j]);
            r
        });
        let mut r = parts.iter().fold(0.0, |a, p| a + p);
        if self.coll.is_distributed() {
            // The edge over every rank.
            let mut b = [r];
            self.coll.sum(&mut b)?;
            r = b[0];
        }
        let (alpha, step) = step_of(vote(r), r);
        // Shrinkage, α ← ν·α before the weight update.
        let (alpha, step) = (crate::boost::shrink(self.lr, alpha), crate::boost::shrink_step(self.lr, step));
        diag.insert("r", r);
        if let Step::Stop { .. } = step {
            return Ok(step);
        }
        // docs/explanation/multiclass.md#multiclass-mr: v'(i,ℓ) = v(i,ℓ) exp(−½ α Y_i[ℓ] h(x_i,ℓ)) (= e^{½αh} for ℓ ∉ Y_i and
        // e^{−½αh} for ℓ ∈ Y_i); Z = Σ_i [Σ_{ℓ ∉ Y_i} v'] · [Σ_{ℓ ∈ Y_i} v']; f += α h. One pass
        // that also sums the diagnostics on the updated scores.
        let sw = &self.sw;
        // The update: the weights, scores, labels, outputs and sample weights read; the weights
        // and scores written.
        let vb = traffic::bytes(&self.v);
        traffic::add(Pass::BoosterUpdate, 4 * vb + traffic::bytes(sw), 2 * vb);
        let parts: Vec<UpdateSums> = (self.v.par_chunks_mut(c).zip(self.f.par_chunks_mut(c)))
            .zip(self.y.par_chunks(c).zip(h.par_chunks(c)).zip(sw.par_chunks(rows)))
            .map(|((v, f), ((y, h), sw))| {
                let mut u = UpdateSums::default();
                // y = ±1, so −½α·(y h) is −½α·y·h bit for bit.
                let mut factor = par::MemoF64::new(|x: f64| (-0.5 * alpha * x).exp());
                let mut order = Vec::with_capacity(k);
                for ((((vr, fr), yr), hr), &w) in v
                    .chunks_exact_mut(k)
                    .zip(f.chunks_exact_mut(k))
                    .zip(y.chunks_exact(k))
                    .zip(h.chunks_exact(k))
                    .zip(sw)
                {
                    let (mut vp, mut vn) = (0.0, 0.0);
                    for (((v, f), &y), &hv) in vr.iter_mut().zip(fr.iter_mut()).zip(yr).zip(hr) {
                        *v *= factor.get(y * hv);
                        if y > 0.0 {
                            vp += *v;
                        } else {
                            vn += *v;
                        }
                        *f += alpha * hv;
                        u.nan |= f.is_nan();
                    }
                    u.z += vp * vn;
                    // As `multilabel::ranking_loss` and `one_error`, row by row.
                    if let Some(l) = multilabel::ranking_loss_row(yr, fr, &mut order) {
                        u.rloss += w * l;
                        u.rloss_den += w;
                    }
                    u.one_error += w * if yr[top_label(fr)] > 0.0 { 0.0 } else { 1.0 };
                    u.den += w;
                }
                u
            })
            .collect();
        let mut t = UpdateSums::default();
        for p in &parts {
            t.z += p.z;
            t.rloss += p.rloss;
            t.rloss_den += p.rloss_den;
            t.one_error += p.one_error;
            t.den += p.den;
            t.nan |= p.nan;
        }
        if self.coll.is_distributed() {
            // Z and the training metrics' sums over every rank (one call).
            let mut buf = [t.z, t.rloss, t.rloss_den, t.one_error, t.den, f64::from(u8::from(t.nan))];
            self.coll.sum(&mut buf)?;
            (t.z, t.rloss, t.rloss_den, t.one_error, t.den, t.nan) =
                (buf[0], buf[1], buf[2], buf[3], buf[4], buf[5] != 0.0);
        }
        let z = t.z;
        if !(z > 0.0 && z.is_finite()) {
            return Err(Error::Numerical(format!("AdaBoost.MR normaliser Z = {z} (weights under- or overflowed)")));
        }
        // docs/explanation/multiclass.md#multiclass-mr: v_{t+1} = v'/√Z_t; the next round's w from the normalised v.
        let sz = z.sqrt();
        // The normalisation, fused with the next statistics when they are asked for.
        let vb = traffic::bytes(&self.v);
        match &stats {
            Some(stats) => traffic::add(Pass::BoosterStatistics, 2 * vb, vb + traffic::bytes(stats)),
            None => traffic::add(Pass::Normalisation, vb, vb),
        }
        match stats {
            Some(stats) => (self.v.par_chunks_mut(c).zip(stats.par_chunks_mut(c)).zip(self.y.par_chunks(c))).for_each(
                |((v, s), y)| {
                    v.iter_mut().for_each(|v| *v /= sz);
                    for_each_w(v, y, k, |j, w, y| s[j] = crate::boost::signed(y, w));
                },
            ),
            None => self.v.par_chunks_mut(c).for_each(|v| v.iter_mut().for_each(|v| *v /= sz)),
        }
        self.log_bound += z.ln();
        diag.insert("alpha", alpha);
        diag.insert("z", z);
        diag.insert("no_crucial_pair", self.no_pair);
        if t.nan {
            // The metrics' own error ("a score is NaN").
            diag.insert("ranking_loss", multilabel::ranking_loss(&self.y, &self.f, self.k, Some(&self.sw))?);
        }
        let mean = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
        diag.insert("ranking_loss", mean(t.rloss, t.rloss_den));
        diag.insert("one_error", mean(t.one_error, t.den));
        diag.insert("bound", self.bound());
        Ok(step)
    }
}
