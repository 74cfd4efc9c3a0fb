//! AdaBoost.MH, discrete and real (docs/explanation/multiclass.md#multiclass-mh).

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

/// AdaBoost.MH over a distribution `D(i, ℓ)` on (example, label) pairs (docs/explanation/multiclass.md#multiclass-mh).
///
/// - Discrete: the weak hypothesis takes values in {−1, +1} per label. With trees it is the sign
///   of each label's weighted majority in each leaf ([`LeafRule::Sign`] applied to each label's
///   `(W+_ℓ, W−_ℓ)`), which generalises Schapire–Singer's stump form `h(x, ℓ) = v_ℓ φ(x)` (SPEC
///   §2.3): a stump with votes `v_ℓ` is the special case where every label flips sign across the
///   split, whereas here a label may vote the same way in both leaves. The default criterion,
///   [`Criterion::Empirical`] summed over labels, is `2 Σ D [Y ≠ h]` for sign leaves, so the tree
///   maximises the edge `r = Σ D Y h`; `α = ½ ln((1+r)/(1−r))`.
/// - Real: leaves `½ ln((W+_ℓ + ε)/(W−_ℓ + ε))` per label, α = 1; the default criterion is
///   [`Criterion::Matusita`], i.e. Schapire–Singer's `Z = 2 Σ_j Σ_ℓ √(W+_jℓ W−_jℓ)`.
///
/// `D` sums to 1 over all pairs; the sample weights, if any, scale each example's row.
#[derive(Debug, Clone)]
pub struct AdaBoostMh {
    n: usize,
    k: usize,
    /// `Y_i[ℓ]`, n × k ±1.
    y: Vec<f64>,
    /// Normalised sample weights (for the diagnostics).
    sw: Vec<f64>,
    /// `D_t(i, ℓ)`, n × k, sums to 1.
    d: Vec<f64>,
    /// Training scores `f(x_i, ℓ)`.
    f: Vec<f64>,
    real: bool,
    eps: f64,
    /// `Σ_t ln Z_t`.
    log_bound: f64,
    /// Learning rate ν.
    lr: f64,
    /// The ranks' collective (local by default).
    coll: Shared,
}

impl AdaBoostMh {
    /// Builds the booster for `params.variant` ∈ {`mh-discrete`, `mh-real`} on ±1 labels
    /// (`n × k`, `k ≥ 1`). With `single_label_start` the data must be single-label (`labels.class`,
    /// or exactly one +1 per row) and `k ≥ 2`.
    pub fn new(labels: &Labels<'_>, params: &MultiParams) -> Result<AdaBoostMh> {
        Self::new_on(labels, params, &Shared::default())
    }

    /// [`AdaBoostMh::new`] for this rank's examples of the ranks of `coll`.
    pub(crate) fn new_on(labels: &Labels<'_>, params: &MultiParams, coll: &Shared) -> Result<AdaBoostMh> {
        params.check()?;
        let real = match params.variant {
            MultiVariant::MhDiscrete => false,
            MultiVariant::MhReal => true,
            v => return Err(Error::param("variant", "mh-discrete or mh-real for AdaBoost.MH", v)),
        };
        let c = check_labels_on(labels, coll)?;
        let start = if params.single_label_start {
            if c.k < 2 {
                return Err(Error::param("single_label_start", "false with a single label column", true));
            }
            Some(single_label_classes(labels)?)
        } else {
            None
        };
        let mh = AdaBoostMh::from_parts(c.n, c.k, c.y, c.sw, real, params.smoothing(c.m), start.as_deref());
        Ok(mh.with_collective(coll.clone()))
    }

    /// Builds from checked parts (also used by AdaBoost.MO on coded labels).
    pub(crate) fn from_parts(
        n: usize,
        k: usize,
        y: Vec<f64>,
        sw: Vec<f64>,
        real: bool,
        eps: f64,
        start: Option<&[u32]>,
    ) -> AdaBoostMh {
        let mut d = vec![0.0; n * k];
        for i in 0..n {
            let row = &mut d[i * k..(i + 1) * k];
            match start {
                // docs/explanation/multiclass.md#multiclass-mh: D_1(i, y_i) = 1/(2m), D_1(i, ℓ ≠ y_i) = 1/(2m(k−1)).
                Some(cls) => {
                    for (l, v) in row.iter_mut().enumerate() {
                        *v = if l == cls[i] as usize { sw[i] / 2.0 } else { sw[i] / (2.0 * (k - 1) as f64) };
                    }
                }
                // docs/explanation/multiclass.md#multiclass-mh: D_1(i, ℓ) = 1/(mk).
                None => row.fill(sw[i] / k as f64),
            }
        }
        AdaBoostMh { n, k, y, sw, d, f: vec![0.0; n * k], real, eps, log_bound: 0.0, lr: 1.0, coll: Shared::default() }
    }

    /// The edge `r` and whether `h` is non-zero anywhere, summed over every rank (one call);
    /// the local values on one machine.
    fn edge_over_ranks(&self, r: f64, nonzero: bool) -> Result<(f64, bool)> {
        if !self.coll.is_distributed() {
            return Ok((r, nonzero));
        }
        let mut b = [r, f64::from(u8::from(nonzero))];
        self.coll.sum(&mut b)?;
        Ok((b[0], b[1] != 0.0))
    }

    /// The booster summing over the ranks of `coll`.
    pub(crate) fn with_collective(mut self, coll: Shared) -> Self {
        self.coll = coll;
        self
    }

    /// The ranks' collective.
    pub(crate) fn collective(&self) -> &Shared {
        &self.coll
    }

    /// Number of labels k.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The current distribution `D_t(i, ℓ)` (`n × k`, row-major, sums to 1).
    pub fn distribution(&self) -> &[f64] {
        &self.d
    }

    /// The training scores `f(x_i, ℓ) = Σ_t α_t h_t(x_i, ℓ)` (`n × k`, row-major).
    pub fn training_scores(&self) -> &[f64] {
        &self.f
    }

    /// The training-loss bound Π_t Z_t so far.
    pub fn bound(&self) -> f64 {
        self.log_bound.exp()
    }

    /// The smoothing ε of the real leaves.
    pub fn eps(&self) -> f64 {
        self.eps
    }

    /// The normalised sample weights.
    pub(crate) fn sample_weights(&self) -> &[f64] {
        &self.sw
    }
}

impl Booster for AdaBoostMh {
    fn n_outputs(&self) -> usize {
        self.k
    }

    fn default_criterion(&self) -> Criterion {
        if self.real {
            Criterion::Matusita
        } else {
            Criterion::Empirical
        }
    }

    fn leaf_rule(&self) -> LeafRule {
        if self.real {
            LeafRule::HalfLogRatio { eps: self.eps }
        } else {
            LeafRule::Sign
        }
    }

    fn statistics(&self, stats: &mut [f64]) {
        debug_assert_eq!(stats.len(), self.n * self.k);
        // docs/explanation/weak-learners.md#weak-learners-multilabel: W^{ℓ±} sums D(i, ℓ) over the examples with Y_i[ℓ] = ±1.
        let rows = chunk_rows(self.k);
        let c = rows * self.k;
        traffic::add(Pass::BoosterStatistics, traffic::bytes(&self.d) + traffic::bytes(&self.y), traffic::bytes(stats));
        stats.par_chunks_mut(c).zip(self.d.par_chunks(c).zip(self.y.par_chunks(c))).for_each(|(s, (d, y))| {
            for ((s, &d), &y) in s.iter_mut().zip(d).zip(y) {
                *s = crate::boost::signed(y, d);
            }
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

    fn step_on_leaves(
        &mut self,
        leaf_of_row: &[u32],
        leaf_values: &[f64],
        h: &mut [f64],
        diag: &mut Diagnostics,
        stats: &mut [f64],
    ) -> Result<Step> {
        if self.real {
            // One fused pass from the leaves, then the normalisation.
            return self.advance_real_on_leaves(leaf_of_row, leaf_values, diag, Some(stats));
        }
        crate::boost::driver::tree_outputs(leaf_of_row, leaf_values, self.k, h);
        self.advance(h, diag, Some(stats))
    }
}

/// What the update pass of one chunk of rows sums.
#[derive(Default)]
struct UpdateSums {
    /// `Σ D_t(i,ℓ) e^(−α Y h)` (the normaliser Z).
    z: f64,
    /// Hamming loss numerator `Σ sw_i |{ℓ : [f > 0] ≠ [Y > 0]}| / k`.
    hamming: f64,
    /// One-error numerator `Σ sw_i [Y_i[top(f_i)] < 0]`.
    one_error: f64,
    /// `Σ sw_i`.
    den: f64,
    /// A score became NaN.
    nan: bool,
}

/// docs/explanation/multiclass.md#multiclass-mh on one row (`k` pairs): `D(i,ℓ) ← D(i,ℓ) e^(−α Y h)`, `f += α h`, adding the row's
/// terms of Z and of the diagnostics to `u` (the one update of the dense and the fused pass).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn update_row<F: Fn(f64) -> f64>(
    d: &mut [f64],
    f: &mut [f64],
    y: &[f64],
    h: &[f64],
    w: f64,
    alpha: f64,
    factor: &mut par::MemoF64<F, 1024>,
    u: &mut UpdateSums,
) {
    let k = y.len();
    let mut wrong = 0usize;
    for (((d, f), &y), &h) in d.iter_mut().zip(f.iter_mut()).zip(y).zip(h) {
        *d *= factor.get(y * h);
        u.z += *d;
        *f += alpha * h;
        wrong += usize::from((*f > 0.0) != (y > 0.0));
        u.nan |= f.is_nan();
    }
    // As `multilabel::hamming_loss` and `one_error`, row by row.
    u.hamming += w * (wrong as f64 / k as f64);
    u.one_error += w * if y[top_label(f)] > 0.0 { 0.0 } else { 1.0 };
    u.den += w;
}

impl AdaBoostMh {
    /// One round (docs/explanation/multiclass.md#multiclass-mh): the edge, α, the weight update with the training diagnostics and,
    /// with `stats`, the next round's statistics written in the normalisation pass.
    ///
    /// Every pass runs over fixed chunks of [`chunk_rows`] rows (about [`par::ROW_CHUNK`] pairs) in
    /// parallel, each chunk summing in row order and the chunks' sums combined in chunk order, so the
    /// result is the same for any thread count, and within one chunk it is exactly the
    /// serial loop's. The diagnostics (Hamming loss, one-error) are summed in the update pass, the
    /// statistics written in the normalisation pass: three passes over `n × k` a round.
    fn advance(&mut self, h: &[f64], diag: &mut Diagnostics, stats: Option<&mut [f64]>) -> Result<Step> {
        check_outputs(h, self.n * self.k)?;
        let k = self.k;
        let rows = chunk_rows(k);
        let c = rows * k;
        let (d, y) = (&self.d, &self.y);
        // The edge (weights, labels, outputs), then the update (the same and the sample weights
        // read; the weights and the scores read and written).
        let (db, sb) = (traffic::bytes(d), traffic::bytes(&self.sw));
        traffic::add(Pass::BoosterStep, 3 * db, 0);
        traffic::add(Pass::BoosterUpdate, 4 * db + sb, 2 * db);
        // docs/explanation/multiclass.md#multiclass-mh: r_t = Σ_{i,ℓ} D_t(i,ℓ) Y_i[ℓ] h_t(x_i,ℓ); and whether h is identically zero.
        let parts = par::map_chunks_of(self.n, rows, |rows| {
            let e = rows.start * k..rows.end * k;
            let mut r = 0.0;
            let mut nonzero = false;
            for ((d, y), &h) in d[e.clone()].iter().zip(&y[e.clone()]).zip(&h[e]) {
                r += d * y * h;
                nonzero |= h != 0.0;
            }
            (r, nonzero)
        });
        let r = parts.iter().fold(0.0, |a, p| a + p.0);
        let nonzero = parts.iter().any(|p| p.1);
        let (r, nonzero) = self.edge_over_ranks(r, nonzero)?;
        let (alpha, step) = self.decide(r, nonzero);
        if let Step::Stop { .. } = step {
            diag.insert("r", r);
            return Ok(step);
        }
        // docs/explanation/multiclass.md#multiclass-mh: D_{t+1}(i,ℓ) = D_t(i,ℓ) exp(−α_t Y_i[ℓ] h_t(x_i,ℓ)) / Z_t; f += α h. One pass
        // that also sums the diagnostics on the updated scores.
        let sw = &self.sw;
        let parts: Vec<UpdateSums> = (self.d.par_chunks_mut(c).zip(self.f.par_chunks_mut(c)))
            .zip(self.y.par_chunks(c).zip(h.par_chunks(c)).zip(sw.par_chunks(rows)))
            .map(|((d, f), ((y, h), sw))| {
                let mut u = UpdateSums::default();
                // Real MH: the factors take 2 × leaves × k distinct values a round.
                let mut factor = par::MemoF64::<_, 1024>::with_slots(|v: f64| (-alpha * v).exp());
                for ((((d, f), y), h), &w) in d
                    .chunks_exact_mut(k)
                    .zip(f.chunks_exact_mut(k))
                    .zip(y.chunks_exact(k))
                    .zip(h.chunks_exact(k))
                    .zip(sw)
                {
                    update_row(d, f, y, h, w, alpha, &mut factor, &mut u);
                }
                u
            })
            .collect();
        self.finish(&parts, r, alpha, step, diag, stats)
    }

    /// Real AdaBoost.MH's round on a grown tree: the same round as
    /// [`Self::advance`] on the dense outputs `h[i·k + ℓ] = values[of_row[i]·k + ℓ]`, bit for bit,
    /// in two passes over `n × k` instead of four. No `h` is written and read back, and the edge
    /// pass is fused with the update pass: with α = ν whatever the sums (docs/explanation/multiclass.md#multiclass-mh, real MH folds
    /// α into the leaves), each row's terms of `r` are taken from `D_t` just before its update, in
    /// the same order and chunks as the separate pass. A round that then stops (`h` = 0 on every
    /// row of every rank) leaves `D` and `f` as they were: every factor is `e^0 = 1` and every
    /// `α h` is ±0, added to scores that are never −0.
    fn advance_real_on_leaves(
        &mut self,
        of_row: &[u32],
        values: &[f64],
        diag: &mut Diagnostics,
        stats: Option<&mut [f64]>,
    ) -> Result<Step> {
        let k = self.k;
        let n_leaves = values.len() / k.max(1);
        if of_row.len() != self.n || values.len() != n_leaves * k {
            return Err(Error::InvalidData(format!(
                "the leaves of {} rows ({} leaf values) for a booster of {} rows × {k} outputs",
                of_row.len(),
                values.len(),
                self.n
            )));
        }
        // The leaves' range check, then one pass: the weights, scores, labels, leaves and sample
        // weights read, the weights and the scores written.
        let (db, sb) = (traffic::bytes(&self.d), traffic::bytes(&self.sw));
        traffic::add(Pass::BoosterStep, traffic::bytes(of_row), 0);
        traffic::add(Pass::BoosterUpdate, 3 * db + traffic::bytes(of_row) + sb, 2 * db);
        if let Some(&l) = of_row.par_iter().max() {
            if l as usize >= n_leaves {
                return Err(Error::InvalidData(format!("leaf {l} of a tree with {n_leaves} leaves")));
            }
        }
        let rows = chunk_rows(k);
        let c = rows * k;
        // α before the sums: real MH's α = 1, shrunk (the value `decide` gives a non-zero `h`).
        let alpha = crate::boost::shrink(self.lr, 1.0);
        let sw = &self.sw;
        let parts: Vec<(f64, bool, UpdateSums)> = (self.d.par_chunks_mut(c).zip(self.f.par_chunks_mut(c)))
            .zip(self.y.par_chunks(c).zip(of_row.par_chunks(rows)).zip(sw.par_chunks(rows)))
            .map(|((d, f), ((y, of_row), sw))| {
                let (mut r, mut nonzero) = (0.0, false);
                let mut u = UpdateSums::default();
                let mut factor = par::MemoF64::<_, 1024>::with_slots(|v: f64| (-alpha * v).exp());
                for ((((d, f), y), &l), &w) in
                    d.chunks_exact_mut(k).zip(f.chunks_exact_mut(k)).zip(y.chunks_exact(k)).zip(of_row).zip(sw)
                {
                    let h = &values[l as usize * k..(l as usize + 1) * k];
                    // docs/explanation/multiclass.md#multiclass-mh: r_t = Σ_{i,ℓ} D_t(i,ℓ) Y_i[ℓ] h_t(x_i,ℓ), on D_t (before the update).
                    for ((d, y), &h) in d.iter().zip(y).zip(h) {
                        r += d * y * h;
                        nonzero |= h != 0.0;
                    }
                    update_row(d, f, y, h, w, alpha, &mut factor, &mut u);
                }
                (r, nonzero, u)
            })
            .collect();
        let r = parts.iter().fold(0.0, |a, p| a + p.0);
        let nonzero = parts.iter().any(|p| p.1);
        let (r, nonzero) = self.edge_over_ranks(r, nonzero)?;
        let (alpha_t, step) = self.decide(r, nonzero);
        if let Step::Stop { .. } = step {
            diag.insert("r", r);
            return Ok(step);
        }
        debug_assert_eq!(alpha_t.to_bits(), alpha.to_bits());
        let sums: Vec<UpdateSums> = parts.into_iter().map(|p| p.2).collect();
        self.finish(&sums, r, alpha, step, diag, stats)
    }

    /// α and the step of a round from the edge `r` and whether `h` is non-zero anywhere (over
    /// every rank).
    fn decide(&self, r: f64, nonzero: bool) -> (f64, Step) {
        let (alpha, step) = if self.real {
            // docs/explanation/multiclass.md#multiclass-mh: real MH folds α into the leaves (α = 1).
            if !nonzero {
                (0.0, Step::Stop { reason: "weak hypothesis is identically zero".into() })
            } else {
                (1.0, Step::Add { alpha: 1.0 })
            }
        } else {
            step_of(vote(r), r)
        };
        // Shrinkage, α ← ν·α before the weight update.
        (crate::boost::shrink(self.lr, alpha), crate::boost::shrink_step(self.lr, step))
    }

    /// The end of a round once the update pass has run: the sums of its chunks (in chunk order)
    /// over every rank, the normaliser Z, the normalisation pass (which writes the next round's
    /// statistics with `stats`), the bound and the diagnostics.
    fn finish(
        &mut self,
        parts: &[UpdateSums],
        r: f64,
        alpha: f64,
        step: Step,
        diag: &mut Diagnostics,
        stats: Option<&mut [f64]>,
    ) -> Result<Step> {
        let rows = chunk_rows(self.k);
        let c = rows * self.k;
        let mut t = UpdateSums::default();
        for p in parts {
            (t.z, t.hamming, t.one_error, t.den, t.nan) =
                (t.z + p.z, t.hamming + p.hamming, t.one_error + p.one_error, t.den + p.den, t.nan | p.nan);
        }
        if self.coll.is_distributed() {
            // Z and the training metrics' sums over every rank (one call).
            let mut buf = [t.z, t.hamming, t.one_error, t.den, f64::from(u8::from(t.nan))];
            self.coll.sum(&mut buf)?;
            (t.z, t.hamming, t.one_error, t.den, t.nan) = (buf[0], buf[1], buf[2], buf[3], buf[4] != 0.0);
        }
        let z = t.z;
        if !(z > 0.0 && z.is_finite()) {
            return Err(Error::Numerical(format!("AdaBoost.MH normaliser Z = {z} (weights under- or overflowed)")));
        }
        // The normalisation by Z, fused with the next statistics when they are asked for.
        let db = traffic::bytes(&self.d);
        match &stats {
            Some(stats) => traffic::add(Pass::BoosterStatistics, 2 * db, db + traffic::bytes(stats)),
            None => traffic::add(Pass::Normalisation, db, db),
        }
        match stats {
            Some(stats) => (self.d.par_chunks_mut(c).zip(stats.par_chunks_mut(c)).zip(self.y.par_chunks(c))).for_each(
                |((d, s), y)| {
                    for ((d, s), &y) in d.iter_mut().zip(s).zip(y) {
                        *d /= z;
                        *s = crate::boost::signed(y, *d);
                    }
                },
            ),
            None => self.d.par_chunks_mut(c).for_each(|d| d.iter_mut().for_each(|d| *d /= z)),
        }
        self.log_bound += z.ln();
        diag.insert("alpha", alpha);
        diag.insert("z", z);
        diag.insert("r", r);
        if t.nan {
            // The metrics' own error ("a score is NaN").
            diag.insert("hamming_loss", multilabel::hamming_loss(&self.y, &self.f, self.k, Some(&self.sw))?);
        }
        let mean = |num: f64| if t.den > 0.0 { num / t.den } else { 0.0 };
        diag.insert("hamming_loss", mean(t.hamming));
        diag.insert("one_error", mean(t.one_error));
        diag.insert("bound", self.bound());
        Ok(step)
    }
}
