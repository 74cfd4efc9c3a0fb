//! Schapire & Singer's multi-class / multi-label boosters (docs/explanation/multiclass.md#multiclass, §4.5–4.7): AdaBoost.MH
//! (discrete and real), AdaBoost.MO (output codes), AdaBoost.MR and AdaBoost.M2.
//!
//! Each booster is a state machine over `(example, label)` weights and knows nothing of trees: it
//! hands the tree learner a statistics block of width `2k` per example —
//! `(W+_1, W−_1, ..., W+_k, W−_k)`, the example's weight on label ℓ placed in the `+` or `−` slot
//! by the sign of `Y_i[ℓ]` — and receives the tree's outputs `h(x_i, ℓ)` on the training rows.
//!
//! | variant        | weights              | leaf rule                   | α                       |
//! |----------------|----------------------|-----------------------------|-------------------------|
//! | `mh-discrete`  | `D(i, ℓ)`            | sign per leaf and label     | `½ ln((1+r)/(1−r))`     |
//! | `mh-real`      | `D(i, ℓ)`            | `½ ln((W+ + ε)/(W− + ε))`   | 1                       |
//! | `mo-*`         | MH on the code `λ(y)`| as MH                       | as MH                   |
//! | `mr`, `m2`     | `v(i, ℓ)` → `w(i, ℓ)`| sign per leaf and label     | `½ ln((1+r)/(1−r))`     |
//!
//! The one design choice: MR is implemented in its O(mk) form, and its weak learner is the MH one
//! fed with the per-label weights `w(i, ℓ)` (docs/explanation/multiclass.md#multiclass-mr), so every variant reuses the same tree
//! learner unchanged. The naive O(mk²) form lives in the tests, which check both agree.
//!
//! Every booster keeps its own training scores `f(x_i, ℓ)` and records per round the diagnostics
//! `alpha`, `z`, `r`, `hamming_loss` (MH, MO) or `ranking_loss` (MR), `one_error` and
//! `bound` = Π Z_t, all on the training set (weighted by the sample weights, if any).
//!
//! How a model should store and decode the outputs: see [`MultiOutput`].

mod mh;
mod mo;
mod mr;

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub(crate) use crate::model::outputs::decode_into;
pub use crate::model::outputs::{
    decode, decode_losses_into, label_set, log_decode_loss, ranking, top_label, CodeMatrix, MultiOutput,
};
pub use mh::AdaBoostMh;
pub use mo::AdaBoostMo;
pub use mr::AdaBoostMr;

use crate::boost::{Booster, Diagnostics, Labels, Step};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::tree::{Criterion, LeafRule};

pub use crate::params::multiclass::{CodeSpec, Decode, LabelThreshold, MultiParams, MultiVariant, MAX_CODE_COLUMNS};

/// The largest vote α a discrete multi-label booster gives a weak hypothesis — the same cap as the
/// binary boosters ([`super::adaboost::MAX_ALPHA`], the α of a weighted error of 1e−10). A
/// (numerically) perfect hypothesis (`r = 1`, where `½ ln((1+r)/(1−r))` is infinite) gets this vote
/// and boosting stops; any edge with `atanh(r)` above it is treated as perfect.
pub const MAX_ALPHA: f64 = super::adaboost::MAX_ALPHA;

/// Edges `r` at or below this stop discrete boosting ("no edge").
pub const MIN_EDGE: f64 = 1e-12;

/// Largest number of classes for the exhaustive code (`2^(k−1) − 1` columns: 2047 at k = 12).
pub const MAX_EXHAUSTIVE_CLASSES: usize = 12;

// ------------------------------------------------------------------------------------------------
// Parameters

// ------------------------------------------------------------------------------------------------
// Output codes

impl CodeMatrix {
    /// Builds the code `spec` for `n_classes ≥ 2` classes.
    pub fn build(spec: &CodeSpec, n_classes: usize) -> Result<CodeMatrix> {
        match *spec {
            CodeSpec::OneVsAll => CodeMatrix::one_vs_all(n_classes),
            CodeSpec::Random { columns, seed } => CodeMatrix::random(n_classes, columns, seed),
            CodeSpec::Exhaustive => CodeMatrix::exhaustive(n_classes),
        }
    }

    fn need_two_classes(k: usize) -> Result<()> {
        if k < 2 {
            return Err(Error::InvalidData(format!("an output code needs at least 2 classes, got {k}")));
        }
        Ok(())
    }

    /// The one-vs-all code: `λ(y)[ℓ] = +1` iff `ℓ = y`.
    pub fn one_vs_all(k: usize) -> Result<CodeMatrix> {
        Self::need_two_classes(k)?;
        let entries = (0..k * k).map(|j| if j / k == j % k { 1 } else { -1 }).collect();
        Ok(CodeMatrix { n_classes: k, n_columns: k, entries })
    }

    /// The exhaustive code: column `c` (0-based) gives class 0 the entry +1 and class `y ≥ 1` the
    /// entry +1 iff bit `y − 1` of `c` is set; the all-ones mask is left out. `2^(k−1) − 1`
    /// columns, for `2 ≤ k ≤` [`MAX_EXHAUSTIVE_CLASSES`].
    pub fn exhaustive(k: usize) -> Result<CodeMatrix> {
        Self::need_two_classes(k)?;
        if k > MAX_EXHAUSTIVE_CLASSES {
            return Err(Error::param(
                "code",
                format!("exhaustive only for at most {MAX_EXHAUSTIVE_CLASSES} classes"),
                format!("exhaustive with {k} classes"),
            ));
        }
        let kp = (1usize << (k - 1)) - 1;
        let mut entries = vec![0i8; k * kp];
        for c in 0..kp {
            entries[c] = 1;
            for y in 1..k {
                entries[y * kp + c] = if c >> (y - 1) & 1 == 1 { 1 } else { -1 };
            }
        }
        Ok(CodeMatrix { n_classes: k, n_columns: kp, entries })
    }

    /// A random code with `columns` columns (see [`CodeSpec::Random`]). Fails if no such code
    /// exists (`columns > 2^(k−1) − 1` or `2^columns < k`) or none was found in 1000 draws.
    pub fn random(k: usize, columns: usize, seed: u64) -> Result<CodeMatrix> {
        Self::need_two_classes(k)?;
        let max_cols = if k >= usize::BITS as usize { usize::MAX } else { (1usize << (k - 1)) - 1 };
        let min_cols = usize::BITS as usize - (k - 1).leading_zeros() as usize; // ⌈log2 k⌉
        if columns == 0 || columns > max_cols || columns < min_cols || columns > MAX_CODE_COLUMNS {
            return Err(Error::param(
                "code",
                format!(
                    "random:K with {min_cols} ≤ K ≤ {} for {k} classes (distinct, non-constant \
                     columns up to complement, distinct codewords)",
                    max_cols.min(MAX_CODE_COLUMNS)
                ),
                columns,
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        const TRIES: usize = 1000;
        for _ in 0..TRIES {
            // Draw column by column; column-major scratch, transposed at the end.
            let mut cols: Vec<Vec<i8>> = Vec::with_capacity(columns);
            // The columns drawn so far, each with its first entry made +1 (a column and its
            // complement are one key): the duplicate test is a hash look-up, so the draw is
            // linear in the number of columns, not quadratic.
            let mut seen: HashSet<Vec<i8>> = HashSet::with_capacity(columns);
            let mut failed = false;
            while cols.len() < columns {
                let mut ok = false;
                for _ in 0..TRIES {
                    let col: Vec<i8> = (0..k).map(|_| if rng.gen::<bool>() { 1 } else { -1 }).collect();
                    let constant = col.iter().all(|&e| e == col[0]);
                    let key: Vec<i8> = col.iter().map(|&e| e * col[0]).collect();
                    if !constant && seen.insert(key) {
                        cols.push(col);
                        ok = true;
                        break;
                    }
                }
                if !ok {
                    failed = true;
                    break;
                }
            }
            if failed {
                continue;
            }
            let mut entries = vec![0i8; k * columns];
            for (c, col) in cols.iter().enumerate() {
                for (y, &e) in col.iter().enumerate() {
                    entries[y * columns + c] = e;
                }
            }
            let code = CodeMatrix { n_classes: k, n_columns: columns, entries };
            if code.min_distance() > 0 {
                return Ok(code);
            }
        }
        Err(Error::param(
            "code",
            "a random code that can be drawn (try more columns or another seed)",
            CodeSpec::Random { columns, seed },
        ))
    }

    /// The coded labels `λ(class_i)` of `n` examples, an `n × k'` row-major ±1 matrix.
    pub fn encode(&self, class: &[u32]) -> Vec<f64> {
        let mut y = Vec::with_capacity(class.len() * self.n_columns);
        for &c in class {
            y.extend(self.codeword(c as usize).iter().map(|&e| f64::from(e)));
        }
        y
    }
}

// ------------------------------------------------------------------------------------------------
// Shared plumbing

/// Validated training labels: `y` (n × k ±1) and sample weights normalised to sum to 1.
pub(crate) struct Checked {
    pub n: usize,
    /// The number of examples `m` of the formulas: `Σ wᵢ` (frequency weights), or `n`.
    pub m: f64,
    pub k: usize,
    pub y: Vec<f64>,
    pub sw: Vec<f64>,
}

/// The checked labels of this rank's examples of the ranks of `coll` ([`Shared::default`]
/// on one machine): the sample weights normalised by their total over every rank, `m` over every
/// rank (one call); a rank may hold no examples.
pub(crate) fn check_labels_on(labels: &Labels<'_>, coll: &Shared) -> Result<Checked> {
    let (n, k) = (labels.n, labels.k);
    let global = if coll.is_distributed() { Some(coll.totals(n, labels.sample_weight)?) } else { None };
    let n_all = global.map_or(n, |g| g.0);
    if n_all == 0 || k == 0 {
        return Err(Error::InvalidData(format!("multi-label boosting needs examples and labels, got {n} × {k}")));
    }
    if labels.y.len() != n * k {
        return Err(Error::InvalidData(format!("label matrix has {} entries, expected {n} × {k}", labels.y.len())));
    }
    if let Some(p) = labels.y.iter().position(|&v| v != 1.0 && v != -1.0) {
        return Err(Error::InvalidData(format!(
            "label of example {} (label {}) is {}, expected −1 or +1",
            p / k,
            p % k,
            labels.y[p]
        )));
    }
    let sw = match labels.sample_weight {
        None => vec![1.0 / n_all as f64; n],
        Some(w) => {
            if w.len() != n {
                return Err(Error::InvalidData(format!("{} sample weights for {n} examples", w.len())));
            }
            if w.iter().any(|&v| !(v.is_finite() && v >= 0.0)) {
                return Err(Error::InvalidData("sample weights must be finite and non-negative".into()));
            }
            let s: f64 = global.map_or_else(|| w.iter().sum(), |g| g.1);
            if !(s > 0.0 && s.is_finite()) {
                return Err(Error::InvalidData("sample weights sum to zero (or overflow)".into()));
            }
            w.iter().map(|&v| v / s).collect()
        }
    };
    let m = global.map_or_else(|| labels.total_weight(), |g| g.1);
    Ok(Checked { n, m, k, y: labels.y.to_vec(), sw })
}

/// The class of each example of single-label data: `labels.class`, or the one +1 of each row.
pub(crate) fn single_label_classes(labels: &Labels<'_>) -> Result<Vec<u32>> {
    let (n, k) = (labels.n, labels.k);
    if let Some(c) = labels.class {
        if c.len() != n {
            return Err(Error::InvalidData(format!("{} class indices for {n} examples", c.len())));
        }
        if let Some(i) = c.iter().position(|&v| v as usize >= k) {
            return Err(Error::InvalidData(format!("class index {} of example {i} is not below {k}", c[i])));
        }
        return Ok(c.to_vec());
    }
    let mut out = Vec::with_capacity(n);
    for (i, row) in labels.y.chunks_exact(k).enumerate() {
        let mut pos = row.iter().enumerate().filter(|(_, &v)| v > 0.0);
        match (pos.next(), pos.next()) {
            (Some((l, _)), None) => out.push(l as u32),
            _ => {
                return Err(Error::InvalidData(format!(
                    "this variant needs single-label data; example {i} does not have exactly one label"
                )))
            }
        }
    }
    Ok(out)
}

/// Rows per chunk of the multi-class boosters' per-row passes: about [`ROW_CHUNK`] (row, output)
/// pairs, and at least [`MIN_CHUNK_ROWS`] rows. The chunks depend on the row and output counts
/// only, so every pass gives the same bits for any number of threads; with k outputs a
/// 20,000-row pass is split into parallel chunks where whole-row chunks of [`ROW_CHUNK`] would
/// leave it on one thread.
///
/// [`ROW_CHUNK`]: crate::util::par::ROW_CHUNK
pub(crate) fn chunk_rows(k: usize) -> usize {
    (crate::util::par::ROW_CHUNK / k.max(1)).max(MIN_CHUNK_ROWS)
}

/// The fewest rows in a chunk of [`chunk_rows`].
const MIN_CHUNK_ROWS: usize = 1024;

/// Checks the weak hypothesis' outputs on the training rows.
pub(crate) fn check_outputs(h: &[f64], expected: usize) -> Result<()> {
    if h.len() != expected {
        return Err(Error::InvalidData(format!("weak hypothesis gave {} outputs, expected {expected}", h.len())));
    }
    if h.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical("weak hypothesis output is not finite".into()));
    }
    Ok(())
}

/// α of a discrete round from its edge r (docs/explanation/multiclass.md#multiclass-mh-discrete, §4.5, §4.7): `α = ½ ln((1+r)/(1−r))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Vote {
    /// `r ≤ MIN_EDGE`: discard the hypothesis and stop.
    NoEdge,
    /// An ordinary round.
    Alpha(f64),
    /// `α ≥ MAX_ALPHA` (r numerically 1): add with `MAX_ALPHA` and stop.
    Perfect,
}

pub(crate) fn vote(r: f64) -> Vote {
    if r.is_nan() || r <= MIN_EDGE {
        return Vote::NoEdge;
    }
    // docs/explanation/multiclass.md#multiclass-mh: α_t = ½ ln((1 + r_t)/(1 − r_t)) = atanh(r_t).
    let a = r.min(1.0).atanh();
    if a >= MAX_ALPHA {
        Vote::Perfect
    } else {
        Vote::Alpha(a)
    }
}

/// Turns a vote into a step, recording α.
pub(crate) fn step_of(v: Vote, r: f64) -> (f64, Step) {
    match v {
        Vote::NoEdge => (0.0, Step::Stop { reason: format!("weak hypothesis has no edge (r = {r:e})") }),
        Vote::Alpha(a) => (a, Step::Add { alpha: a }),
        Vote::Perfect => (
            MAX_ALPHA,
            Step::AddAndStop {
                alpha: MAX_ALPHA,
                reason: format!("perfect weak hypothesis (r = {r}); its vote is capped at {MAX_ALPHA}"),
            },
        ),
    }
}

// ------------------------------------------------------------------------------------------------
// The booster enum

/// Any of the multi-class / multi-label boosters, chosen by [`MultiParams::variant`].
#[derive(Debug, Clone)]
pub enum MultiBooster {
    /// AdaBoost.MH, discrete or real.
    Mh(AdaBoostMh),
    /// AdaBoost.MO.
    Mo(AdaBoostMo),
    /// AdaBoost.MR or M2.
    Mr(AdaBoostMr),
}

impl MultiBooster {
    /// Checks `params` and the labels and builds the booster of `params.variant`.
    pub fn new(labels: &Labels<'_>, params: &MultiParams) -> Result<MultiBooster> {
        Self::new_on(labels, params, &Shared::default())
    }

    /// [`MultiBooster::new`] for this rank's examples of the ranks of `coll`.
    pub(crate) fn new_on(labels: &Labels<'_>, params: &MultiParams, coll: &Shared) -> Result<MultiBooster> {
        params.check()?;
        Ok(match params.variant {
            MultiVariant::MhDiscrete | MultiVariant::MhReal => {
                MultiBooster::Mh(AdaBoostMh::new_on(labels, params, coll)?)
            }
            MultiVariant::MoDiscrete | MultiVariant::MoReal => {
                MultiBooster::Mo(AdaBoostMo::new_on(labels, params, coll)?)
            }
            MultiVariant::Mr | MultiVariant::M2 => MultiBooster::Mr(AdaBoostMr::new_on(labels, params, coll)?),
        })
    }

    /// The output code (MO only), for the model file.
    pub fn code(&self) -> Option<&CodeMatrix> {
        match self {
            MultiBooster::Mo(b) => Some(b.code()),
            _ => None,
        }
    }

    /// What the model's outputs mean (store it in the model file).
    pub fn output(&self) -> MultiOutput {
        match self {
            MultiBooster::Mh(b) => MultiOutput::LabelScores { n_labels: b.k() },
            MultiBooster::Mr(b) => MultiOutput::LabelScores { n_labels: b.k() },
            MultiBooster::Mo(b) => MultiOutput::Code { code: b.code().clone(), decode: b.decode_rule() },
        }
    }

    /// The training scores `f(x_i, ·)` so far (`n × n_outputs`, row-major).
    pub fn training_scores(&self) -> &[f64] {
        match self {
            MultiBooster::Mh(b) => b.training_scores(),
            MultiBooster::Mo(b) => b.training_scores(),
            MultiBooster::Mr(b) => b.training_scores(),
        }
    }

    /// Π Z_t so far.
    pub fn bound(&self) -> f64 {
        match self {
            MultiBooster::Mh(b) => b.bound(),
            MultiBooster::Mo(b) => b.bound(),
            MultiBooster::Mr(b) => b.bound(),
        }
    }

    fn inner(&self) -> &dyn Booster {
        match self {
            MultiBooster::Mh(b) => b,
            MultiBooster::Mo(b) => b,
            MultiBooster::Mr(b) => b,
        }
    }
}

impl Booster for MultiBooster {
    fn n_outputs(&self) -> usize {
        self.inner().n_outputs()
    }
    fn default_criterion(&self) -> Criterion {
        self.inner().default_criterion()
    }
    fn leaf_rule(&self) -> LeafRule {
        self.inner().leaf_rule()
    }
    fn statistics(&self, stats: &mut [f64]) {
        self.inner().statistics(stats)
    }
    fn set_learning_rate(&mut self, lr: f64) {
        match self {
            MultiBooster::Mh(b) => b.set_learning_rate(lr),
            MultiBooster::Mo(b) => b.set_learning_rate(lr),
            MultiBooster::Mr(b) => b.set_learning_rate(lr),
        }
    }
    fn step(&mut self, h: &[f64], diag: &mut Diagnostics) -> Result<Step> {
        match self {
            MultiBooster::Mh(b) => b.step(h, diag),
            MultiBooster::Mo(b) => b.step(h, diag),
            MultiBooster::Mr(b) => b.step(h, diag),
        }
    }
    fn set_collective(&mut self, _c: Shared, _labels: Labels<'_>) -> Result<()> {
        // Built on every rank's totals by `new_on` (the driver builds it so).
        Ok(())
    }
    fn step_then_statistics(&mut self, h: &[f64], diag: &mut Diagnostics, stats: &mut [f64]) -> Result<Step> {
        // Each booster's fused step (one pass fewer over n × k a round).
        match self {
            MultiBooster::Mh(b) => b.step_then_statistics(h, diag, stats),
            MultiBooster::Mo(b) => b.step_then_statistics(h, diag, stats),
            MultiBooster::Mr(b) => b.step_then_statistics(h, diag, stats),
        }
    }
    fn step_on_leaves(
        &mut self,
        leaf_of_row: &[u32],
        leaf_values: &[f64],
        h: &mut [f64],
        diag: &mut Diagnostics,
        stats: &mut [f64],
    ) -> Result<Step> {
        // Real AdaBoost.MH's step reads the leaves (one pass fused).
        match self {
            MultiBooster::Mh(b) => b.step_on_leaves(leaf_of_row, leaf_values, h, diag, stats),
            MultiBooster::Mo(b) => b.step_on_leaves(leaf_of_row, leaf_values, h, diag, stats),
            MultiBooster::Mr(b) => b.step_on_leaves(leaf_of_row, leaf_values, h, diag, stats),
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil;

#[cfg(test)]
mod tests;
