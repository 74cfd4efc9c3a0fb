//! Discrete AdaBoost (docs/explanation/adaboost.md#adaboost-discrete) and confidence-rated / Real AdaBoost (docs/explanation/adaboost.md#adaboost-generalised).

use rayon::prelude::*;

use super::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::tree::{Criterion, LeafRule};
use crate::util::par;
use crate::util::traffic::{self, Pass};

pub use crate::params::adaboost::{AdaBoostParams, AlphaRule};

/// The largest vote a round can get: the discrete α of a learner with weighted error 1e−10
/// (`½ ln((1 − 1e−10)/1e−10) ≈ 11.51`). A perfect weak learner is kept with this vote and
/// boosting stops; α is never infinite.
pub const MAX_ALPHA: f64 = 11.512925464920228;

/// Discrete (sign leaves) or Real (smoothed half log-ratio leaves) AdaBoost.
#[derive(Debug, Clone)]
pub struct AdaBoost {
    y: Vec<f64>,
    d: Vec<f64>,
    scores: Vec<f64>,
    leaf_rule: LeafRule,
    criterion: Criterion,
    alpha: AlphaRule,
    log_bound: f64,
    /// The sample weights (frequency weights) and their sum; `None` without weights.
    sw: Option<(Vec<f64>, f64)>,
    /// Learning rate ν.
    lr: f64,
    /// The ranks' collective (local by default), and whether the leaf smoothing is the
    /// default `1/(2m)` (redone with the ranks' `m`).
    coll: Shared,
    default_eps: bool,
}

/// Weighted training error of scores (a score of 0 predicts the negative class).
/// Per-chunk sums of one round's edges `u = y h`: weights by the sign of `u`, `r = Σ d u`, `max |u|`.
#[derive(Debug, Default, Clone, Copy)]
struct EdgeSums {
    wp: f64,
    wn: f64,
    w0: f64,
    r: f64,
    rmax: f64,
}

impl EdgeSums {
    /// Adds one row's terms (weight `d`, edge `u`), branch-free (the signs are data-dependent;
    /// adding 0.0 leaves a sum unchanged).
    #[inline(always)]
    fn add(&mut self, d: f64, u: f64, every_row: bool) {
        let (pos, neg) = (u > 0.0, u < 0.0);
        self.wp += if pos { d } else { 0.0 };
        self.wn += if neg { d } else { 0.0 };
        self.w0 += if pos || neg { 0.0 } else { d };
        self.r += d * u;
        if every_row || d > 0.0 {
            self.rmax = self.rmax.max(u.abs());
        }
    }
}

/// The weak hypothesis' outputs on the training rows, read by chunks of rows: a dense
/// `h`, or each row's leaf and the leaves' values (no `h` written and read back).
trait Outputs: Sync {
    /// Bytes read per row (a tree output, or a leaf index).
    const WIDTH: usize;
    /// The outputs of `rows`, in order.
    fn iter(&self, rows: std::ops::Range<usize>) -> impl Iterator<Item = f64> + '_;
}

impl Outputs for [f64] {
    const WIDTH: usize = 8;
    #[inline]
    fn iter(&self, rows: std::ops::Range<usize>) -> impl Iterator<Item = f64> + '_ {
        self[rows].iter().copied()
    }
}

/// A tree's outputs: `values[of_row[i]]`.
struct Leaves<'a> {
    of_row: &'a [u32],
    values: &'a [f64],
}

impl Outputs for Leaves<'_> {
    const WIDTH: usize = 4;
    #[inline]
    fn iter(&self, rows: std::ops::Range<usize>) -> impl Iterator<Item = f64> + '_ {
        self.of_row[rows].iter().map(|&l| self.values[l as usize])
    }
}

/// docs/explanation/adaboost.md#adaboost-generalised/§4.1 on one chunk of rows (`d`, `s`, `y` and `rows` the same rows): d ← d e^(−α u),
/// F += α h, u = y h; returns (Σ d after the update, training errors after it). `before` sees each
/// row's (d, u) before its update (the fused pass adds its edge sums there).
#[inline(always)]
fn update_chunk<O: Outputs + ?Sized>(
    d: &mut [f64],
    s: &mut [f64],
    y: &[f64],
    h: &O,
    rows: std::ops::Range<usize>,
    alpha: f64,
    mut before: impl FnMut(f64, f64),
) -> (f64, usize) {
    let (mut z, mut wrong) = (0.0, 0usize);
    let mut factor = par::MemoF64::new(|u: f64| (-alpha * u).exp());
    for (((d, s), &y), h) in d.iter_mut().zip(s).zip(y).zip(h.iter(rows)) {
        let u = y * h;
        before(*d, u);
        *d *= factor.get(u);
        z += *d;
        *s += alpha * h;
        wrong += usize::from((*s > 0.0) != (y > 0.0));
    }
    (z, wrong)
}

/// Initial distribution: uniform, or proportional to the sample weights.
pub(crate) fn initial_weights(n: usize, sample_weight: Option<&[f64]>) -> Vec<f64> {
    match sample_weight {
        Some(w) => {
            let s: f64 = w.iter().sum();
            w.iter().map(|x| x / s).collect()
        }
        None => vec![1.0 / n as f64; n],
    }
}

impl AdaBoost {
    /// Confidence-rated AdaBoost with abstaining stumps (docs/explanation/adaboost.md#adaboost-alpha-abstain); `α` by `rule` (default
    /// [`AlphaRule::Abstain`]).
    pub fn abstaining(labels: Labels<'_>, rule: Option<AlphaRule>) -> Result<Self> {
        Self::new(labels, LeafRule::Sign, Criterion::Matusita, rule.unwrap_or(AlphaRule::Abstain))
    }

    /// Discrete AdaBoost: sign leaves, empirical-risk splits (weighted error), `α` by `rule`
    /// (default [`AlphaRule::Discrete`]).
    pub fn discrete(labels: Labels<'_>, rule: Option<AlphaRule>) -> Result<Self> {
        Self::new(labels, LeafRule::Sign, Criterion::Empirical, rule.unwrap_or(AlphaRule::Discrete))
    }

    /// Real AdaBoost: Matusita (Z) splits, smoothed half log-ratio leaves, `α` by `rule`
    /// (default [`AlphaRule::One`]).
    pub fn real(labels: Labels<'_>, params: &AdaBoostParams) -> Result<Self> {
        // docs/explanation/weak-learners.md#weak-learners-smoothing/§4.4: ε = 1/(2m) with weights summing to 1, m = Σ wᵢ (the number of rows
        // without sample weights): integer weights give the ε of the repeated rows.
        let eps = params.smoothing.unwrap_or(1.0 / (2.0 * labels.total_weight()));
        let mut b = Self::new(
            labels,
            LeafRule::HalfLogRatio { eps },
            Criterion::Matusita,
            params.alpha.unwrap_or(AlphaRule::One),
        )?;
        b.default_eps = params.smoothing.is_none();
        Ok(b)
    }

    fn new(labels: Labels<'_>, leaf_rule: LeafRule, criterion: Criterion, alpha: AlphaRule) -> Result<Self> {
        if labels.k != 1 {
            return Err(Error::InvalidData(format!(
                "binary AdaBoost needs two classes, the data have {} (use adaboost-mh)",
                labels.k
            )));
        }
        if alpha == AlphaRule::Discrete && leaf_rule != LeafRule::Sign {
            return Err(Error::param("alpha", "one, linear-bound or line-search for real-valued leaves", "discrete"));
        }
        let n = labels.n;
        Ok(AdaBoost {
            y: labels.y.to_vec(),
            d: initial_weights(n, labels.sample_weight),
            scores: vec![0.0; n],
            leaf_rule,
            criterion,
            alpha,
            log_bound: 0.0,
            sw: labels.sample_weight.map(|w| (w.to_vec(), labels.total_weight())),
            lr: 1.0,
            coll: Shared::default(),
            default_eps: false,
        })
    }

    /// The current distribution d_t.
    pub fn weights(&self) -> &[f64] {
        &self.d
    }
}

/// Exact minimiser of `Z(α) = Σ d_i e^(−α u_i)` (docs/explanation/adaboost.md#adaboost-alpha-exact), or `None` when the non-zero
/// `u` share a sign (α unbounded). Safeguarded Newton on `Z'(α) = 0`, relative tolerance 1e−12.
pub fn line_search_alpha(d: &[f64], u: &[f64]) -> Option<f64> {
    // Local: nothing is reduced, nothing can fail.
    line_search_alpha_on(d, u, &Shared::default()).ok().flatten()
}

/// [`line_search_alpha`] over the rows of every rank: one call for the signs and the
/// range of `u`, then one per Newton step (`Z'` and `Z''`).
pub(crate) fn line_search_alpha_on(d: &[f64], u: &[f64], coll: &Shared) -> Result<Option<f64>> {
    let dist = coll.is_distributed();
    let mut pos = d.iter().zip(u).any(|(d, u)| *d > 0.0 && *u > 0.0);
    let mut neg = d.iter().zip(u).any(|(d, u)| *d > 0.0 && *u < 0.0);
    // max_i(−a u_i) = max(−a·min u, −a·max u) exactly (rounding is monotone).
    let mut range = [0.0, 0.0];
    if dist {
        let lo = u.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = u.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut m = [f64::from(u8::from(pos)), f64::from(u8::from(neg)), -lo, hi];
        coll.sum_max(&mut [], &mut m)?;
        (pos, neg, range) = (m[0] > 0.0, m[1] > 0.0, [-m[2], m[3]]);
    }
    if !(pos && neg) {
        return Ok(None);
    }
    // g(α) = Z'(α)/scale, computed with a shift so that no exponential overflows.
    // The caller's edges `y h` (label and output read, edge written).
    traffic::add(Pass::BoosterStep, 2 * traffic::bytes(u), traffic::bytes(u));
    let deriv = |a: f64| -> Result<(f64, f64)> {
        traffic::add(Pass::BoosterStep, traffic::bytes(d) + traffic::bytes(u), 0);
        let shift = if dist {
            (-a * range[0]).max(-a * range[1])
        } else {
            u.iter().map(|u| -a * u).fold(f64::NEG_INFINITY, f64::max)
        };
        let (mut g, mut h) = (0.0, 0.0);
        for (d, u) in d.iter().zip(u) {
            let e = d * (-a * u - shift).exp();
            g -= u * e;
            h += u * u * e;
        }
        let mut b = [g, h];
        coll.sum(&mut b)?;
        Ok((b[0], b[1]))
    };
    let (g0, _) = deriv(0.0)?;
    if g0 == 0.0 {
        return Ok(Some(0.0));
    }
    let dir = if g0 < 0.0 { 1.0 } else { -1.0 };
    // Bracket the root between lo and hi (in the direction of descent).
    let (mut lo, mut hi) = (0.0f64, dir);
    let mut steps = 0;
    while deriv(hi)?.0 * dir < 0.0 {
        lo = hi;
        hi *= 2.0;
        steps += 1;
        if steps > 60 {
            return Ok(None);
        }
    }
    let mut a = (lo + hi) / 2.0;
    for _ in 0..200 {
        let (g, h) = deriv(a)?;
        if g == 0.0 {
            return Ok(Some(a));
        }
        if g * dir < 0.0 {
            lo = a;
        } else {
            hi = a;
        }
        let newton = a - g / h;
        let next = if h > 0.0 && (newton - lo) * (newton - hi) < 0.0 { newton } else { (lo + hi) / 2.0 };
        if (next - a).abs() <= 1e-12 * a.abs().max(1e-300) {
            return Ok(Some(next));
        }
        a = next;
    }
    Ok(Some(a))
}

impl Booster for AdaBoost {
    fn n_outputs(&self) -> usize {
        1
    }

    fn default_criterion(&self) -> Criterion {
        self.criterion
    }

    fn leaf_rule(&self) -> LeafRule {
        self.leaf_rule
    }

    fn statistics(&self, stats: &mut [f64]) {
        let c = par::ROW_CHUNK;
        traffic::add(Pass::BoosterStatistics, traffic::bytes(&self.y) + traffic::bytes(&self.d), traffic::bytes(stats));
        stats.par_chunks_mut(c).zip(self.y.par_chunks(c).zip(self.d.par_chunks(c))).for_each(|(s, (y, d))| {
            for ((s, &y), &d) in s.iter_mut().zip(y).zip(d) {
                *s = super::signed(y, d);
            }
        });
    }

    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        self.advance(h, diag, None)
    }

    fn set_learning_rate(&mut self, lr: f64) {
        self.lr = lr;
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
        let _ = h; // not needed: the outputs are read from the leaves
        if leaf_of_row.len() != self.y.len() {
            return Err(Error::InvalidData(format!(
                "the leaves of {} rows for a booster of {} rows",
                leaf_of_row.len(),
                self.y.len()
            )));
        }
        // The leaves come from the tree learner (every leaf index < the number of leaves).
        self.advance(&Leaves { of_row: leaf_of_row, values: leaf_values }, diag, Some(stats))
    }

    fn set_collective(&mut self, c: Shared, _labels: Labels<'_>) -> Result<()> {
        // The initial distribution and m = Σ w over every rank's rows.
        let (n, total) = c.totals(self.y.len(), self.sw.as_ref().map(|p| p.0.as_slice()))?;
        self.d = match &self.sw {
            Some((w, _)) => w.iter().map(|x| x / total).collect(),
            None => vec![1.0 / n as f64; self.y.len()],
        };
        if let Some((_, t)) = &mut self.sw {
            *t = total;
        }
        if self.default_eps {
            self.leaf_rule = LeafRule::HalfLogRatio { eps: 1.0 / (2.0 * total) };
        }
        self.coll = c;
        Ok(())
    }
}

impl AdaBoost {
    /// One round (docs/explanation/adaboost.md#adaboost-generalised, §4.1–4.4): α, the weight update and, with `stats`, the next round's
    /// statistics written in the normalisation pass.
    fn advance<O: Outputs + ?Sized>(
        &mut self,
        h: &O,
        diag: &mut Diagnostics,
        stats: Option<&mut [f64]>,
    ) -> Result<Step> {
        // Edges u_i = y_i h_i, recomputed where needed instead of stored (8 bytes a row less).
        let (d, y) = (&self.d, &self.y);
        // R = max |u| over the examples: with sample weights, those of positive weight (a row of
        // weight 0 is a row left out; its d is 0 from the start and stays 0).
        let every_row = self.sw.is_none();
        // When α does not depend on the sums (α = 1, no sample weights), the sums and the
        // weight update share one pass (each row's terms are those of the two passes, in the same
        // order). A round that then stops (h = 0 on every row) leaves d and F as they were: every
        // factor is e^0 = 1 and every α h is ±0.
        let fused = (self.alpha == AlphaRule::One && every_row).then(|| super::shrink(self.lr, 1.0));
        let c = par::ROW_CHUNK;
        let mut updated: Option<(f64, usize)> = None;
        // Per row: the label, the weight and the tree output; the fused pass also moves the
        // weight and the score.
        let n = d.len();
        match fused {
            None => traffic::add(Pass::BoosterStep, n * (8 + 8 + O::WIDTH), 0),
            Some(_) => traffic::add(Pass::BoosterUpdate, n * (8 + 8 + 8 + O::WIDTH), n * 16),
        }
        // One parallel pass for every sum (fixed row chunks: the same result for any number of
        // threads). docs/explanation/adaboost.md#adaboost-discrete: ε = Σ d [y ≠ f(x)]; r = Σ d u; docs/explanation/adaboost.md#adaboost-alpha-abstain: W_b = Σ_{u_i = b} d(i).
        let parts = match fused {
            None => par::map_chunks(d.len(), |rows| {
                let mut e = EdgeSums::default();
                for (&d, u) in d[rows.clone()].iter().zip(y[rows.clone()].iter().zip(h.iter(rows)).map(|(y, h)| y * h))
                {
                    e.add(d, u, every_row);
                }
                e
            }),
            Some(alpha) => {
                let parts: Vec<(EdgeSums, f64, usize)> = (self.d.par_chunks_mut(c).zip(self.scores.par_chunks_mut(c)))
                    .enumerate()
                    .map(|(ci, (d, s))| {
                        let rows = ci * c..ci * c + d.len();
                        let mut e = EdgeSums::default();
                        let (z, wrong) =
                            update_chunk(d, s, &self.y[rows.clone()], h, rows, alpha, |d, u| e.add(d, u, true));
                        (e, z, wrong)
                    })
                    .collect();
                updated = Some((parts.iter().fold(0.0, |z, p| z + p.1), parts.iter().map(|p| p.2).sum()));
                parts.into_iter().map(|p| p.0).collect()
            }
        };
        let mut e = EdgeSums::default();
        for p in parts {
            (e.wp, e.wn, e.w0, e.r, e.rmax) = (e.wp + p.wp, e.wn + p.wn, e.w0 + p.w0, e.r + p.r, e.rmax.max(p.rmax));
        }
        // With α = 1 the edge sums are only reported, so on several ranks
        // they travel with Z's reduction below (one call a round instead of two).
        let defer = self.coll.is_distributed() && self.alpha == AlphaRule::One;
        if self.coll.is_distributed() && !defer {
            // The edge sums of every rank's rows (one call).
            let (mut sums, mut max) = ([e.wp, e.wn, e.w0, e.r], [e.rmax]);
            self.coll.sum_max(&mut sums, &mut max)?;
            ([e.wp, e.wn, e.w0, e.r], e.rmax) = (sums, max[0]);
        }
        let (eps, r, rmax) = (e.wn, e.r, e.rmax);
        if !defer {
            diag.insert("epsilon", eps);
            diag.insert("r", r);
            if rmax == 0.0 {
                return Ok(Step::Stop { reason: "the weak hypothesis is zero everywhere".into() });
            }
        }
        let mut stop: Option<String> = None;
        let alpha = match self.alpha {
            AlphaRule::Discrete => {
                if eps >= 0.5 {
                    return Ok(Step::Stop {
                        reason: format!("weighted error ε = {eps:.6} ≥ ½: no better than chance"),
                    });
                }
                if eps <= 0.0 {
                    stop = Some("perfect weak learner (ε = 0)".into());
                    MAX_ALPHA
                } else {
                    // docs/explanation/adaboost.md#adaboost-discrete: α = ½ ln((1 − ε)/ε).
                    (0.5 * ((1.0 - eps) / eps).ln()).min(MAX_ALPHA)
                }
            }
            AlphaRule::One => 1.0,
            AlphaRule::LinearBound => {
                // docs/explanation/adaboost.md#adaboost-alpha-linear on h/R: α' = ½ ln((1 + r')/(1 − r')), r' = r/R; vote α'/R.
                let rr = r / rmax;
                if rr <= 0.0 {
                    return Ok(Step::Stop { reason: format!("edge r = {rr:.6} ≤ 0: no better than chance") });
                }
                let a = if rr >= 1.0 {
                    stop = Some("perfect weak learner (r = 1)".into());
                    MAX_ALPHA
                } else {
                    (0.5 * ((1.0 + rr) / (1.0 - rr)).ln()).min(MAX_ALPHA)
                };
                a / rmax
            }
            AlphaRule::Abstain | AlphaRule::AbstainConservative => {
                let (wp, wn, w0) = (e.wp, e.wn, e.w0);
                diag.insert("w_abstain", w0);
                let (a, b) = if self.alpha == AlphaRule::Abstain { (wp, wn) } else { (wp + 0.5 * w0, wn + 0.5 * w0) };
                if a <= b {
                    return Ok(Step::Stop {
                        reason: format!("W+ = {wp:.6} ≤ W− = {wn:.6}: no better than chance")
                    });
                }
                if b <= 0.0 {
                    stop = Some("perfect weak learner on the examples it does not abstain on (W− = 0)".into());
                    MAX_ALPHA / rmax
                } else {
                    (0.5 * (a / b).ln()).min(MAX_ALPHA) / rmax
                }
            }
            AlphaRule::LineSearch => match line_search_alpha_on(
                &self.d,
                &self.y.iter().zip(h.iter(0..self.y.len())).map(|(y, h)| y * h).collect::<Vec<_>>(),
                &self.coll,
            )? {
                Some(a) if a > 0.0 => a.min(MAX_ALPHA / rmax),
                Some(_) => return Ok(Step::Stop { reason: "the exact α is ≤ 0: no better than chance".into() }),
                None => {
                    if r > 0.0 {
                        stop = Some("perfect weak learner: every non-zero edge is positive, α unbounded".into());
                        MAX_ALPHA / rmax
                    } else {
                        return Ok(Step::Stop { reason: "every non-zero edge is negative".into() });
                    }
                }
            },
        };
        // Shrinkage, α ← ν·α before the update (so d_{t+1} ∝ exp(−y F) with F = Σ ν α h).
        let alpha = super::shrink(self.lr, alpha);
        // docs/explanation/adaboost.md#adaboost-generalised/§4.1: d_{t+1} = d_t e^(−α u) / Z_t; F += α h. One parallel pass that also counts
        // the training errors, then the normalisation.
        let (mut z, mut wrong) = match updated {
            Some((z, wrong)) => {
                debug_assert_eq!(fused.map(f64::to_bits), Some(alpha.to_bits()));
                (z, wrong as f64)
            }
            None => {
                traffic::add(Pass::BoosterUpdate, n * (8 + 8 + 8 + O::WIDTH), n * 16);
                let parts: Vec<(f64, usize)> = (self.d.par_chunks_mut(c).zip(self.scores.par_chunks_mut(c)))
                    .enumerate()
                    .map(|(ci, (d, s))| {
                        let rows = ci * c..ci * c + d.len();
                        update_chunk(d, s, &self.y[rows.clone()], h, rows, alpha, |_, _| {})
                    })
                    .collect();
                (parts.iter().fold(0.0, |z, p| z + p.0), parts.iter().map(|p| p.1).sum::<usize>() as f64)
            }
        };
        // The training error's sum (of the repeated rows with sample weights: their weights).
        let mut werr = match &self.sw {
            None => 0.0,
            Some((w, _)) => {
                let (s, y) = (&self.scores, &self.y);
                // The weighted training error: sample weight, score and label.
                traffic::add(Pass::BoosterUpdate, 3 * traffic::bytes(w), 0);
                let parts = par::map_chunks(w.len(), |rows| {
                    rows.map(|i| if (s[i] > 0.0) != (y[i] > 0.0) { w[i] } else { 0.0 }).sum::<f64>()
                });
                parts.iter().sum::<f64>()
            }
        };
        let mut n = self.y.len() as f64;
        if defer {
            // Z, the training errors and the deferred edge sums of every rank's rows (one call).
            // The edges decide nothing for α = 1 but the stop on a zero hypothesis, whose update
            // above changed nothing (e^0 = 1, F += 0), so stopping here leaves the same state.
            let (mut b, mut max) = ([z, wrong, n, werr, e.wp, e.wn, e.w0, e.r], [e.rmax]);
            self.coll.sum_max(&mut b, &mut max)?;
            [z, wrong, n, werr, e.wp, e.wn, e.w0, e.r] = b;
            diag.insert("epsilon", e.wn);
            diag.insert("r", e.r);
            if max[0] == 0.0 {
                return Ok(Step::Stop { reason: "the weak hypothesis is zero everywhere".into() });
            }
        } else if self.coll.is_distributed() {
            // Z and the training errors of every rank's rows (one call).
            let mut b = [z, wrong, n, werr];
            self.coll.sum(&mut b)?;
            [z, wrong, n, werr] = b;
        }
        let train_error = match &self.sw {
            None => wrong / n.max(1.0),
            // Weighted by the sample weights: the error rate of the repeated rows.
            Some((_, total)) => werr / total,
        };
        if !(z.is_finite() && z > 0.0) {
            return Err(Error::Numerical(format!("normaliser Z = {z} after α = {alpha}")));
        }
        // The normalisation by Z, fused with the next statistics when they are asked for.
        match &stats {
            Some(stats) => {
                let d = traffic::bytes(&self.d);
                traffic::add(Pass::BoosterStatistics, 2 * d, d + traffic::bytes(stats));
            }
            None => traffic::add(Pass::Normalisation, traffic::bytes(&self.d), traffic::bytes(&self.d)),
        }
        match stats {
            Some(stats) => (self.d.par_chunks_mut(c).zip(stats.par_chunks_mut(c)).zip(self.y.par_chunks(c))).for_each(
                |((d, s), y)| {
                    for ((d, s), &y) in d.iter_mut().zip(s).zip(y) {
                        *d /= z;
                        *s = super::signed(y, *d);
                    }
                },
            ),
            None => self.d.par_chunks_mut(c).for_each(|d| d.iter_mut().for_each(|d| *d /= z)),
        }
        self.log_bound += z.ln();
        diag.insert("alpha", alpha);
        diag.insert("z", z);
        diag.insert("bound", self.log_bound.exp());
        diag.insert("train_error", train_error);
        Ok(match stop {
            Some(reason) => Step::AddAndStop { alpha, reason },
            None => Step::Add { alpha },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boost::driver::{fit, Algorithm, BoostParams};
    use crate::data::{Column, Dataset, Features, Target};
    use crate::tree::{Node, SplitRule};
    use crate::Prediction;

    /// docs/explanation/adaboost.md#adaboost-golden golden example: x = 1..10, y = (+,+,+,−,−,−,+,+,+,−).
    fn golden_data() -> Dataset {
        let x: Vec<f64> = (1..=10).map(f64::from).collect();
        let y = vec![1, 1, 1, 0, 0, 0, 1, 1, 1, 0];
        Dataset::new(
            Features { names: vec!["x".into()], columns: vec![Column::Numeric(x)] },
            Some(Target::Classes { y, classes: vec!["-".into(), "+".into()] }),
            None,
        )
        .unwrap()
    }

    #[test]
    fn spec_3_golden_three_rounds() {
        let data = golden_data();
        let params = BoostParams { n_estimators: 3, ..Default::default() };
        let m = fit(&data, &params).unwrap();
        // Tolerance 5e-5: the SPEC states α to 4 decimals.
        let want_alpha = [0.4236, 0.6496, 0.7520];
        let want_eps = [0.3, 0.2143, 0.1818];
        let want_thr = [3.5, 9.5, 6.5];
        for t in 0..3 {
            assert!((m.alphas[t] - want_alpha[t]).abs() < 5e-5, "round {t}: α = {}", m.alphas[t]);
            let eps = m.history[t].values["epsilon"];
            assert!((eps - want_eps[t]).abs() < 5e-5, "round {t}: ε = {eps}");
            let Node::Split { rule: SplitRule::Numeric { threshold, .. }, .. } = &m.trees[t].nodes[0] else { panic!() };
            assert_eq!(*threshold, want_thr[t]);
        }
        // Polarities: rounds 1 and 2 "+1 if x < θ", round 3 "−1 if x < 6.5".
        assert_eq!(m.trees[0].leaf_values, vec![1.0, -1.0]);
        assert_eq!(m.trees[1].leaf_values, vec![1.0, -1.0]);
        assert_eq!(m.trees[2].leaf_values, vec![-1.0, 1.0]);
        // Exact α of round 1: ½ ln(0.7/0.3).
        assert!((m.alphas[0] - 0.5 * (0.7f64 / 0.3).ln()).abs() < 1e-12);
        let s = m.predict(&data.features, &Prediction::scores()).unwrap();
        let want = [0.321, 0.321, 0.321, -0.526, -0.526, -0.526, 0.978, 0.978, 0.978, -0.321];
        for (a, b) in s.iter().zip(want) {
            assert!((a - b).abs() < 5e-4, "{s:?}");
        }
        assert_eq!(m.history[2].values["train_error"], 0.0);
    }

    #[test]
    fn spec_3_round_one_weights() {
        let data = golden_data();
        let y: Vec<f64> = vec![1., 1., 1., -1., -1., -1., 1., 1., 1., -1.];
        let labels = Labels { n: 10, k: 1, y: &y, class: None, sample_weight: None };
        let mut b = AdaBoost::discrete(labels, None).unwrap();
        let h: Vec<f64> = (1..=10).map(|x| if x < 4 { 1.0 } else { -1.0 }).collect();
        let mut diag = Diagnostics::new();
        b.step(&h, &mut diag).unwrap();
        for (i, w) in b.weights().iter().enumerate() {
            let want = if (7..=9).contains(&(i + 1)) { 1.0 / 6.0 } else { 1.0 / 14.0 };
            assert!((w - want).abs() < 1e-15, "{i}: {w}");
        }
        // After the update the learner has weighted error exactly ½.
        let err: f64 = b.weights().iter().zip(&y).zip(&h).filter(|((_, y), h)| **y != **h).map(|((w, _), _)| w).sum();
        assert!((err - 0.5).abs() < 1e-15);
        let _ = data;
    }

    fn random_data(seed: u64, n: usize) -> Dataset {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut cols = vec![Vec::new(); 3];
        let mut y = Vec::new();
        for _ in 0..n {
            let x: Vec<f64> = (0..3).map(|_| rng.gen_range(-1.0..1.0)).collect();
            let noise: f64 = rng.gen_range(-0.5..0.5);
            y.push(u32::from(x[0] + 0.5 * x[1] * x[2] + noise > 0.0));
            for (c, v) in cols.iter_mut().zip(x) {
                c.push((v * 20.0f64).round() / 20.0);
            }
        }
        Dataset::new(
            Features {
                names: vec!["a".into(), "b".into(), "c".into()],
                columns: cols.into_iter().map(Column::Numeric).collect(),
            },
            Some(Target::Classes { y, classes: vec!["0".into(), "1".into()] }),
            None,
        )
        .unwrap()
    }

    #[test]
    fn training_error_is_bounded_by_product_of_z() {
        for seed in 0..5 {
            let data = random_data(seed, 300);
            for algo in [Algorithm::AdaBoost, Algorithm::RealAdaBoost] {
                let mut p = BoostParams { algorithm: algo, n_estimators: 30, ..Default::default() };
                p.tree.max_leaves = 4;
                let m = fit(&data, &p).unwrap();
                for r in &m.history {
                    assert!(
                        r.values["train_error"] <= r.values["bound"] + 1e-12,
                        "{algo:?} seed {seed} round {}",
                        r.round
                    );
                }
            }
        }
    }

    #[test]
    fn alpha_rules_coincide_on_discrete_hypotheses() {
        let data = random_data(7, 200);
        let mut alphas = Vec::new();
        for rule in [AlphaRule::Discrete, AlphaRule::LinearBound, AlphaRule::LineSearch] {
            let mut p = BoostParams { n_estimators: 10, ..Default::default() };
            p.adaboost.alpha = Some(rule);
            alphas.push(fit(&data, &p).unwrap().alphas);
        }
        for ((a, b), c) in alphas[0].iter().zip(&alphas[1]).zip(&alphas[2]) {
            assert!((a - b).abs() < 1e-12);
            assert!((a - c).abs() < 1e-9, "{a} vs {c}");
        }
    }

    #[test]
    fn line_search_makes_h_uncorrelated_with_the_new_weights() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let n = 40;
            let mut d: Vec<f64> = (0..n).map(|_| rng.gen_range(0.01..1.0)).collect();
            let s: f64 = d.iter().sum();
            d.iter_mut().for_each(|x| *x /= s);
            let u: Vec<f64> = (0..n).map(|_| rng.gen_range(-2.0..3.0)).collect();
            let a = line_search_alpha(&d, &u).unwrap();
            // docs/explanation/adaboost.md#adaboost-alpha-exact: at the optimum Σ d_{t+1}(i) u_i = 0.
            let w: Vec<f64> = d.iter().zip(&u).map(|(d, u)| d * (-a * u).exp()).collect();
            let z: f64 = w.iter().sum();
            let corr: f64 = w.iter().zip(&u).map(|(w, u)| w / z * u).sum();
            assert!(corr.abs() < 1e-10, "{corr}");
        }
        assert_eq!(line_search_alpha(&[0.5, 0.5], &[1.0, 0.0]), None);
    }

    #[test]
    fn real_adaboost_line_search_and_linear_bound_run() {
        let data = random_data(11, 300);
        for rule in [AlphaRule::One, AlphaRule::LineSearch, AlphaRule::LinearBound] {
            let mut p = BoostParams { algorithm: Algorithm::RealAdaBoost, n_estimators: 20, ..Default::default() };
            p.tree.max_leaves = 8;
            p.adaboost.alpha = Some(rule);
            let m = fit(&data, &p).unwrap();
            assert!(m.history.last().unwrap().values["train_error"] < 0.2, "{rule:?}");
            assert!(m.alphas.iter().all(|a| a.is_finite()));
        }
        let mut p = BoostParams { n_estimators: 2, ..Default::default() };
        p.adaboost.alpha = Some(AlphaRule::One);
        assert!(fit(&data, &p).is_ok(), "α = 1 on ±1 stumps is allowed");
        p.algorithm = Algorithm::RealAdaBoost;
        p.adaboost.alpha = Some(AlphaRule::Discrete);
        assert!(fit(&data, &p).unwrap_err().to_string().contains("alpha"));
    }
}

#[cfg(test)]
mod fused_step_tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The step on a tree's leaves (α = 1 fusing the sums with the update) leaves the
    /// booster exactly where the step on the dense outputs does — weights, scores, the next
    /// statistics, diagnostics and α, bit for bit — for every α rule, with and without sample
    /// weights, over several rounds of more rows than a few fixed chunks, for any thread count;
    /// and a round whose outputs are all zero stops without changing the weights.
    #[test]
    fn step_on_leaves_equals_the_dense_step() {
        let n = 3 * par::ROW_CHUNK + 101;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(18);
        let y: Vec<f64> = (0..n).map(|_| if rng.gen_bool(0.4) { 1.0 } else { -1.0 }).collect();
        let sw: Vec<f64> = (0..n).map(|i| if i % 7 == 0 { 0.0 } else { rng.gen_range(0.5..2.0) }).collect();
        let rounds: Vec<(Vec<u32>, Vec<f64>)> = (0..4)
            .map(|_| {
                let leaves = rng.gen_range(2..9);
                let of_row = (0..n).map(|_| rng.gen_range(0..leaves)).collect();
                let values = (0..leaves).map(|_| rng.gen_range(-0.6..0.6)).collect();
                (of_row, values)
            })
            .collect();
        let rules = [
            AlphaRule::One,
            AlphaRule::Discrete,
            AlphaRule::LinearBound,
            AlphaRule::LineSearch,
            AlphaRule::Abstain,
            AlphaRule::AbstainConservative,
        ];
        for rule in rules {
            for weights in [None, Some(&sw[..])] {
                let labels = Labels { n, k: 1, y: &y, class: None, sample_weight: weights };
                let make = || {
                    let mut b = AdaBoost::new(labels, LeafRule::Sign, Criterion::Matusita, rule).unwrap();
                    b.set_learning_rate(0.7);
                    b
                };
                for threads in [1, 2] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let (mut dense, mut leaves) = (make(), make());
                    let (mut s1, mut s2, mut h) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                    for (of_row, values) in &rounds {
                        // Discrete α wants ±1 outputs.
                        let values: Vec<f64> = match rule {
                            AlphaRule::Discrete => values.iter().map(|v| if *v >= 0.0 { 1.0 } else { -1.0 }).collect(),
                            AlphaRule::Abstain | AlphaRule::AbstainConservative => {
                                values.iter().map(|v| (v * 3.0).round().clamp(-1.0, 1.0)).collect()
                            }
                            _ => values.clone(),
                        };
                        let hd: Vec<f64> = of_row.iter().map(|&l| values[l as usize]).collect();
                        let (mut g1, mut g2) = (Diagnostics::new(), Diagnostics::new());
                        let a = pool.install(|| dense.step_then_statistics(&hd, &mut g1, &mut s1)).unwrap();
                        let b =
                            pool.install(|| leaves.step_on_leaves(of_row, &values, &mut h, &mut g2, &mut s2)).unwrap();
                        assert_eq!(a, b, "{rule:?}");
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(bits(&dense.d), bits(&leaves.d), "{rule:?} weights");
                        assert_eq!(bits(&dense.scores), bits(&leaves.scores), "{rule:?} scores");
                        assert_eq!(bits(&s1), bits(&s2), "{rule:?} statistics");
                        assert_eq!(format!("{g1:?}"), format!("{g2:?}"), "{rule:?} diagnostics");
                        if !matches!(a, Step::Add { .. }) {
                            break;
                        }
                    }
                }
            }
        }
        // All-zero outputs: the fused step stops and the weights and scores stay as they were.
        let labels = Labels { n, k: 1, y: &y, class: None, sample_weight: None };
        let mut b =
            AdaBoost::new(labels, LeafRule::HalfLogRatio { eps: 1e-6 }, Criterion::Matusita, AlphaRule::One).unwrap();
        let (d0, f0) = (b.d.clone(), b.scores.clone());
        let (mut h, mut st) = (vec![0.0; n], vec![0.0; n]);
        let step = b.step_on_leaves(&vec![1; n], &[0.3, -0.0], &mut h, &mut Diagnostics::new(), &mut st).unwrap();
        assert!(matches!(step, Step::Stop { .. }), "{step:?}");
        assert_eq!(b.d, d0);
        assert_eq!(
            b.scores.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            f0.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        let e = b.step_on_leaves(&[0, 1], &[0.3, 0.1], &mut h, &mut Diagnostics::new(), &mut st).unwrap_err();
        assert!(e.to_string().contains("the leaves of 2 rows for a booster of"), "{e}");
    }
}

#[cfg(test)]
mod abstain_tests {
    use super::*;
    use crate::boost::driver::{fit, Algorithm, BoostParams};
    use crate::data::{Column, Dataset, Features, Target};

    #[test]
    fn abstaining_alpha_is_the_exact_minimiser_and_z_matches() {
        let d = [0.1, 0.2, 0.3, 0.15, 0.25];
        let u = [1.0, -1.0, 0.0, 1.0, 1.0];
        let y = [1.0; 5];
        let labels = Labels { n: 5, k: 1, y: &y, class: None, sample_weight: Some(&d) };
        let mut b = AdaBoost::abstaining(labels, None).unwrap();
        let mut diag = Diagnostics::new();
        let Step::Add { alpha } = b.step(&u, &mut diag).unwrap() else { panic!() };
        let (wp, wn, w0): (f64, f64, f64) = (0.5, 0.2, 0.3);
        assert!((alpha - 0.5 * (wp / wn).ln()).abs() < 1e-15);
        assert!((alpha - line_search_alpha(&d, &u).unwrap()).abs() < 1e-10);
        // docs/explanation/adaboost.md#adaboost-alpha-abstain: Z = W_0 + 2√(W_+ W_−).
        assert!((diag["z"] - (w0 + 2.0 * (wp * wn).sqrt())).abs() < 1e-15);
    }

    #[test]
    fn abstaining_adaboost_learns_and_abstains_on_missing() {
        // x in 0..100, y = +1 iff x < 30; x missing for rows with label noise.
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..200 {
            let v = f64::from(i % 100);
            let lab = u32::from(v < 30.0);
            if i % 10 == 0 {
                x.push(f64::NAN);
                y.push(u32::from(i % 20 == 0));
            } else {
                x.push(v);
                y.push(lab);
            }
        }
        let data = Dataset::new(
            Features { names: vec!["x".into()], columns: vec![Column::Numeric(x)] },
            Some(Target::Classes { y, classes: vec!["0".into(), "1".into()] }),
            None,
        )
        .unwrap();
        let p = BoostParams { algorithm: Algorithm::AbstainingAdaBoost, n_estimators: 5, ..Default::default() };
        let m = fit(&data, &p).unwrap();
        let first = &m.trees[0];
        assert_eq!(first.n_leaves(), 3, "a missing-value region of its own");
        assert!(first.leaf_values.contains(&0.0), "it abstains somewhere: {:?}", first.leaf_values);
        m.trees.iter().for_each(|t| t.validate(1).unwrap());
        assert!(m.history[0].values["train_error"] <= 0.1);
    }
}
