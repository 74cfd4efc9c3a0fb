//! Solve_α (docs/explanation/secboost.md#secboost-algorithm): the step size α of a round from the edges, weights and offsets — the
//! paper's rule ([`solve_alpha`]) and the certified one ([`solve_alpha_certified`]).

use rayon::prelude::*;

use super::logistic;
use super::max_abs_weighted;
use super::obi::{obi_convex_into, obi_star_many};
use crate::collective::Shared;
use crate::error::{Error, Result};
use crate::math::loss::{Loss, LossSpec};
use crate::util::traffic::{self, Pass};

/// The inputs of [`solve_alpha`]: the current round's state, all slices of length `m`.
#[derive(Debug, Clone, Copy)]
pub struct AlphaInput<'a> {
    /// The loss.
    pub loss: &'a Loss,
    /// Labels `y_i ∈ {−1, +1}`.
    pub y: &'a [f64],
    /// The weak hypothesis on the training set, `h_t(x_i)` (finite, not all 0).
    pub h: &'a [f64],
    /// Sample weights, rescaled to mean 1 (all ones when unweighted).
    pub sample_weight: &'a [f64],
    /// The previous edges `ẽ_(t−1)i = y_i H_(t−1)(x_i)`.
    pub edges: &'a [f64],
    /// The previous offsets `v_(t−1)i`.
    pub offsets: &'a [f64],
    /// The current weights `w_ti = −δ_{v_(t−1)i} F(ẽ_(t−1)i)`.
    pub weights: &'a [f64],
}

/// The output of [`solve_alpha`] (or of the closed form).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlphaSolution {
    /// The leveraging coefficient α (finite, non-zero, the sign of η).
    pub alpha: f64,
    /// `W̄_2`, the bound on the weighted order-2 v-derivative (> 0).
    pub w2: f64,
    /// ε > 0, such that `|α| = |η| / ((1 + ε) M² W̄)`.
    pub epsilon: f64,
    /// How many times α was halved.
    pub halvings: usize,
}

/// `η(w, h) = mean_i s_i w_i y_i h_i` (docs/explanation/secboost.md#secboost-algorithm), summed as
/// [`edge_sum_and_max`] sums it.
pub(super) fn edge(sw: &[f64], w: &[f64], y: &[f64], h: &[f64]) -> f64 {
    edge_sum_and_max(Some(sw), w, y, h).0 / w.len() as f64
}

/// `(Σ_i s_i w_i y_i h_i, M = max |h_i|)` in one pass (the maximum over the rows of positive sample
/// weight, as [`max_abs_weighted`]): sums in the lanes of [`Sum4`] over fixed chunks, added in
/// chunk order. `sw`
/// `None`: every sample weight is 1 (not read: the same bits).
pub(super) fn edge_sum_and_max(sw: Option<&[f64]>, w: &[f64], y: &[f64], h: &[f64]) -> (f64, f64) {
    crate::util::par::map_chunks(w.len(), |r| match sw {
        Some(sw) => edge_rows::<false>(sw, w, y, h, r, (Sum4::default(), 0.0)),
        None => edge_rows::<true>(&[], w, y, h, r, (Sum4::default(), 0.0)),
    })
    .into_iter()
    .fold((0.0, 0.0), |(s, m), (a, b)| (s + a.total(), m.max(b)))
}

/// [`edge_sum_and_max`]'s running sum (in the lanes of [`Sum4`]: `r` starts at a multiple of 4
/// in its chunk) and maximum `from` continued over the rows `r` (`UNIT`: every sample weight is
/// 1, `sw` not read).
#[inline(always)]
pub(super) fn edge_rows<const UNIT: bool>(
    sw: &[f64],
    w: &[f64],
    y: &[f64],
    h: &[f64],
    r: std::ops::Range<usize>,
    from: (Sum4, f64),
) -> (Sum4, f64) {
    let mut acc = EdgeLanes::from(from);
    in_lanes(r, |i, l| acc.row(l, if UNIT { 1.0 } else { sw[i] }, w[i], y[i], h[i]));
    acc.finish()
}

/// [`edge_sum_and_max`]'s running sum `Σ s w y h` in the lanes of [`Sum4`] and its maximum of
/// `|h|` (over the rows of positive sample weight) in four running maxima, one row at a time.
#[derive(Clone, Copy)]
pub(super) struct EdgeLanes {
    sum: [f64; 4],
    max: [f64; 4],
}

impl EdgeLanes {
    /// The sum and maximum `from` continued.
    #[inline(always)]
    pub(super) fn from((Sum4(sum), max): (Sum4, f64)) -> EdgeLanes {
        EdgeLanes { sum, max: [max; 4] }
    }

    /// A row of sample weight `s`, weight `w`, label `y` and output `h`, in lane `l`.
    #[inline(always)]
    pub(super) fn row(&mut self, l: usize, s: f64, w: f64, y: f64, h: f64) {
        self.sum[l] += s * w * y * h;
        if s > 0.0 {
            self.max[l] = self.max[l].max(h.abs());
        }
    }

    /// The sum and the maximum (of a set: the same in any order).
    #[inline(always)]
    pub(super) fn finish(self) -> (Sum4, f64) {
        let m = self.max;
        (Sum4(self.sum), m[0].max(m[1]).max(m[2].max(m[3])))
    }
}

/// What the round already knows of Solve_α's input, so that Solve_α does not read the rows again
/// for it: `(M, η)` over every rank, and this rank's `max |ẽ_i|` over the rows of positive
/// sample weight (at least 1).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Known {
    pub(super) m_eta: Option<(f64, f64)>,
    pub(super) edge_scale: Option<f64>,
    /// Every sample weight is 1 (the passes need not read them).
    pub(super) unit_weights: bool,
}

/// Means and maxima over the examples of every rank: `n` examples in all, `coll` the
/// ranks' collective; [`Red::local`] on one machine (nothing reduced, the same arithmetic).
#[derive(Clone, Copy)]
pub(super) struct Red<'a> {
    pub(super) coll: &'a Shared,
    pub(super) n: f64,
}

impl Red<'_> {
    pub(super) fn local(n: usize) -> Red<'static> {
        static LOCAL: std::sync::OnceLock<Shared> = std::sync::OnceLock::new();
        Red { coll: LOCAL.get_or_init(Shared::default), n: n as f64 }
    }

    /// `Σ / n` of this rank's sum `local` over every rank.
    pub(super) fn mean(&self, local: f64) -> Result<f64> {
        let mut b = [local];
        self.coll.sum(&mut b)?;
        Ok(b[0] / self.n)
    }

    pub(super) fn max(&self, x: f64) -> Result<f64> {
        self.coll.max(x)
    }
}

/// [`edge`] over every rank (each rank's sum as [`edge_sum_and_max`] adds it).
fn edge_on(sw: &[f64], w: &[f64], y: &[f64], h: &[f64], red: Red<'_>) -> Result<f64> {
    traffic::add(Pass::BoosterStep, traffic::bytes(sw) + traffic::bytes(w) + traffic::bytes(y) + traffic::bytes(h), 0);
    if !red.coll.is_distributed() {
        return Ok(edge(sw, w, y, h));
    }
    red.mean(edge_sum_and_max(Some(sw), w, y, h).0)
}

/// Scratch buffers for secant weights.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    pub(super) z: Vec<f64>,
    pub(super) fz: Vec<f64>,
    fzv: Vec<f64>,
}

impl Scratch {
    /// `out_i = −δ_{v_i} F(z_i)` (docs/explanation/secboost.md#secboost-algorithm: the weights, or with `z = ẽ + α y h` the partial weights
    /// w̃(α)). Leaves `F(z)` in `self.fz`.
    pub(super) fn secant_weights(&mut self, loss: &Loss, z: impl Iterator<Item = f64>, v: &[f64], out: &mut [f64]) {
        self.z.clear();
        self.z.extend(z);
        let m = self.z.len();
        self.fz.resize(m, 0.0);
        if is_logistic(loss) {
            logistic::losses_and_weights_into(&self.z, v, &mut self.fz, out);
            return;
        }
        self.fzv.resize(m, 0.0);
        loss.eval_many(&self.z, &mut self.fz);
        weights_from_values(loss, &self.z, v, &self.fz, out, &mut self.fzv);
    }
}

/// `out_i = −δ_{v_i} F(z_i)` from loss values, `fz_i = F(z_i)` given (equal lengths): `z + v`
/// into `out`, `F(z + v)` into `tmp` (one call of the loss), then the secants.
pub(super) fn weights_from_values(loss: &Loss, z: &[f64], v: &[f64], fz: &[f64], out: &mut [f64], tmp: &mut [f64]) {
    for ((o, z), v) in out.iter_mut().zip(z).zip(v) {
        *o = z + v;
    }
    loss.eval_many(out, tmp);
    for ((o, (fv, f)), v) in out.iter_mut().zip(tmp.iter().zip(fz)).zip(v) {
        // docs/explanation/secboost.md#secboost-algorithm: w = −δ_v F(z) = −(F(z + v) − F(z)) / v.
        *o = -(fv - f) / v;
    }
}

/// Whether `loss` is the built-in logistic loss, whose weights and OBIs come from one exponential
/// per example (logistic.rs, docs/explanation/secboost.md#secboost-logistic).
pub(super) fn is_logistic(loss: &Loss) -> bool {
    loss.spec() == Some(&LossSpec::Logistic)
}

/// `ẽ_i + α y_i h_i`.
pub(super) fn shifted<'a>(edges: &'a [f64], alpha: f64, y: &'a [f64], h: &'a [f64]) -> impl Iterator<Item = f64> + 'a {
    edges.iter().zip(y).zip(h).map(move |((&e, &y), &h)| shifted_edge(e, alpha, y, h))
}

/// An edge moved by the step `alpha`: `e + α y h`, the one formula of every trial and new edge
/// (the same bits on every path).
#[inline(always)]
pub(super) fn shifted_edge(e: f64, alpha: f64, y: f64, h: f64) -> f64 {
    e + alpha * y * h
}

/// Rows per chunk of [`secant_pass`] (fixed, so its sums do not depend on the thread count; with
/// at most this many rows there is one chunk and the sums are the serial loop's, bit for bit).
pub(super) const SECANT_CHUNK: usize = crate::util::par::ROW_CHUNK;

/// Rows per block of a [`secant_pass`] chunk: the block's temporaries and inputs (about 80 KiB)
/// stay in the core's cache from one step to the next.
const SECANT_BLOCK: usize = 1024;

thread_local! {
    /// The chunk temporaries of [`secant_pass`] and [`secant_from_values`] (`z`, `z + v`,
    /// `F(z + v)`), reused by each thread: fresh ones were three new mappings of
    /// 256 KiB per chunk and pass in a Dask worker, whose `MALLOC_TRIM_THRESHOLD_` turns glibc's
    /// adaptive mmap threshold off (see `RowBuffers` in the grower).
    static CHUNK_TMP: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Runs `f` on three buffers of `len` values from this thread's [`CHUNK_TMP`], zeroed for a batch
/// `loss` (as fresh ones: a batch loss that leaves values unwritten sees zeros; the built-in and
/// scalar losses write every value); kept for the next call when they are of at most
/// [`SECANT_CHUNK`] values.
#[inline(always)]
pub(super) fn with_chunk_tmp<R>(loss: &Loss, len: usize, f: impl FnOnce(&mut [f64], &mut [f64], &mut [f64]) -> R) -> R {
    let mut buf = CHUNK_TMP.take();
    if loss.is_batch() {
        buf.clear();
    }
    if buf.len() < 3 * len {
        buf.resize(3 * len, 0.0);
    }
    let (a, rest) = buf[..3 * len].split_at_mut(len);
    let (b, c) = rest.split_at_mut(len);
    let r = f(a, b, c);
    if buf.len() <= 3 * SECANT_CHUNK {
        CHUNK_TMP.set(buf);
    }
    r
}

/// The order-2 term of `W` (docs/explanation/secboost.md#secboost-algorithm) asked of [`secant_pass`]: the weights `w` at α = 0 and the
/// sample weights.
#[derive(Clone, Copy)]
pub(super) struct Order2<'a> {
    pub(super) w: &'a [f64],
    /// The sample weights (`None`: every one is 1).
    pub(super) sw: Option<&'a [f64]>,
    /// Also `Σ_i s_i Q_F(z_i, z_i + v_i)` over the rows of positive sample weight, the convex
    /// OBI of the offsets at the trial edges `z = ẽ + α y h` (the terms of `q̄` for a loss declared
    /// convex, [`obi_convex`] per row): computed in the same pass, with no loss value kept.
    pub(super) qbar: bool,
    /// Whether the pass's `fz` (the loss values at the trial edges) is wanted: when not, a loss
    /// whose weights need no loss value (the logistic) leaves it unwritten.
    pub(super) losses: bool,
}

/// One block's rows of the sums of [`Order2`]: labels, outputs, weights at α = 0, partial weights
/// at α and the OBI terms.
pub(super) struct Order2Rows<'a> {
    pub(super) alpha: f64,
    pub(super) y: &'a [f64],
    pub(super) h: &'a [f64],
    pub(super) w: &'a [f64],
    pub(super) wt: &'a [f64],
    pub(super) q: &'a [f64],
}

impl Order2Rows<'_> {
    /// `sums` plus the block's terms (`UNIT`: every sample weight is 1, `sw` not read: the same
    /// bits), in the lanes of [`Sum4`]: the block's first row is a multiple of 4 within its chunk.
    /// No branch: adding +0 leaves a lane as it is.
    #[inline(always)]
    pub(super) fn add<const UNIT: bool>(&self, sw: &[f64], qbar: bool, mut sums: PassSums) -> PassSums {
        in_lanes(0..self.y.len(), |i, l| {
            let s = if UNIT { 1.0 } else { sw[i] };
            sums.add_row(l, s, [self.w[i], self.wt[i], self.y[i], self.h[i]], self.alpha, qbar.then(|| self.q[i]));
        });
        sums
    }
}

/// Row `i`'s term of the order-2 sum: `s (w − w̃) y h` (0 where `α y h = 0`), which is
/// `α M² · s (h/M)² (w − w̃)/(α y h)`, the term of `W` (docs/explanation/secboost.md#secboost-algorithm),
/// as `y² = 1`: no division per row ([`order2_w`] divides the sum once).
#[inline(always)]
fn order2_term(s: f64, w: f64, wt: f64, y: f64, h: f64, alpha: f64) -> f64 {
    let e = alpha * y * h;
    let term = s * (w - wt) * (y * h);
    if e != 0.0 {
        term
    } else {
        0.0
    }
}

/// `W = |mean_i s_i (h_i/M)² (w_i − w̃_i)/(α y_i h_i)|` from the mean of [`order2_term`]'s terms.
#[inline]
pub(super) fn order2_w(mean: f64, alpha: f64, m_t: f64) -> f64 {
    (mean / (alpha * (m_t * m_t))).abs()
}

/// `f(i, l)` for every row `i` of `r` in order, `l = (i − r.start) mod 4` its lane of [`Sum4`]
/// (four rows a step, so that the four lanes' chains run side by side).
#[inline(always)]
pub(super) fn in_lanes(r: std::ops::Range<usize>, mut f: impl FnMut(usize, usize)) {
    let mut i = r.start;
    while i + 4 <= r.end {
        for l in 0..4 {
            f(i + l, l);
        }
        i += 4;
    }
    for i in i..r.end {
        f(i, (i - r.start) % 4);
    }
}

/// A sum over a chunk's rows in four lanes: the chunk's row `j` in lane `j mod 4`, the lanes added
/// as `(l₀ + l₁) + (l₂ + l₃)`. Four chains of additions instead of one; the same bits however the
/// chunk is cut into blocks whose first rows are multiples of 4.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Sum4(pub(super) [f64; 4]);

impl Sum4 {
    /// The sum: its lanes added.
    pub(super) fn total(self) -> f64 {
        let [a, b, c, d] = self.0;
        (a + b) + (c + d)
    }

    /// `self` then the sum `next` of a later chunk: their totals added (in lane 0).
    pub(super) fn then(self, next: Sum4) -> Sum4 {
        Sum4([self.total() + next.total(), 0.0, 0.0, 0.0])
    }
}

/// The sums of one [`secant_pass`] with [`Order2`], each over fixed chunks in chunk order.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct PassSums {
    /// `Σ_i s_i (w_i − w̃_i) y_i h_i` ([`order2_term`]; [`order2_w`] gives `W`).
    pub(super) order2: Sum4,
    /// `Σ_i s_i Q_F(z_i, z_i + v_i)` when [`Order2::qbar`] is set, else 0.
    pub(super) qbar: Sum4,
}

impl PassSums {
    /// A row's terms in lane `l`: its sample weight `s`, `[w, w̃, y, h]` (weight at α = 0, partial
    /// weight, label, output), the trial `alpha` and its OBI term when `q̄` is summed. No branch:
    /// adding +0 leaves a lane as it is.
    #[inline(always)]
    pub(super) fn add_row(&mut self, l: usize, s: f64, [w, wt, y, h]: [f64; 4], alpha: f64, q: Option<f64>) {
        self.order2.0[l] += order2_term(s, w, wt, y, h, alpha);
        self.qbar.0[l] += match q {
            Some(q) if s > 0.0 => s * q,
            _ => 0.0,
        };
    }

    /// `self` then the sums of a later chunk.
    pub(super) fn then(self, next: PassSums) -> PassSums {
        PassSums { order2: self.order2.then(next.order2), qbar: self.qbar.then(next.qbar) }
    }
}

/// One pass for the (partial) weights and `W`. `out_i = −δ_{v_i} F(ẽ_i + α y_i h_i)`
/// (when `out` is given) and `fz_i = F(ẽ_i + α y_i h_i)` (docs/explanation/secboost.md#secboost-algorithm: the weights at α = 0, the partial weights w̃(α)
/// otherwise), and, with `order2`, the sum `Σ_i s_i (h_i/M)² (w_i − w̃_i)/(α y_i h_i)` of
/// [`order2_bound`] (rows with `α y_i h_i = 0` left out). Parallel over fixed chunks, partial sums
/// in chunk order; a batch loss runs as one chunk on this thread (it is never called concurrently).
/// Per-row values are those of [`Scratch::secant_weights`], bit for bit.
#[allow(clippy::too_many_arguments)]
pub(super) fn secant_pass(
    loss: &Loss,
    edges: &[f64],
    alpha: f64,
    y: &[f64],
    h: &[f64],
    v: &[f64],
    out: Option<&mut [f64]>,
    fz: &mut [f64],
    order2: Option<Order2<'_>>,
) -> PassSums {
    let m = edges.len();
    let chunk = if loss.is_batch() { m.max(1) } else { SECANT_CHUNK };
    // Edges, labels, outputs and offsets read (with the second-order sum: the weights and the
    // sample weights; the block's labels and outputs are in the cache); the secant weights (if
    // kept) and the loss values (unless the logistic loss's are not wanted) written.
    let second = if order2.is_some() { 2 * traffic::bytes(edges) } else { 0 };
    let losses_written = !(is_logistic(loss) && order2.is_some_and(|o| o.qbar && !o.losses));
    traffic::add(
        Pass::BoosterStep,
        traffic::bytes(edges) + traffic::bytes(y) + traffic::bytes(h) + traffic::bytes(v) + second,
        out.as_ref().map_or(0, |o| traffic::bytes(o)) + if losses_written { traffic::bytes(fz) } else { 0 },
    );
    // One block of a chunk, its first row `a`, its sums added to `sums` (in row order).
    let block = |a: usize, out: Option<&mut [f64]>, fz: &mut [f64], sums: &mut PassSums| {
        let b = a + fz.len();
        with_chunk_tmp(loss, b - a, |z, zv, fzv| {
            z.iter_mut().zip(shifted(&edges[a..b], alpha, &y[a..b], &h[a..b])).for_each(|(d, s)| *d = s);
            let qbar = order2.is_some_and(|o| o.qbar);
            let logistic = is_logistic(loss);
            let v = &v[a..b];
            // The partial weights into `out`, or into a temporary when not kept.
            let wt = match out {
                Some(o) => o,
                None => zv,
            };
            if logistic && qbar {
                // With the convex OBI of every row over `fzv`, `mean_obi`'s terms bit for bit; the
                // loss values only when they are wanted.
                let fz = order2.is_some_and(|o| o.losses).then_some(fz);
                logistic::weights_obis_into(loss, z, v, fz, wt, fzv);
            } else if logistic {
                logistic::losses_and_weights_into(z, v, fz, wt);
            } else {
                loss.eval_many(z, fz);
                weights_from_values(loss, z, v, fz, wt, fzv);
                if qbar {
                    // The convex OBI of every row over `F(z + v)` (no longer needed), `mean_obi`'s
                    // terms bit for bit (`z` is the trial edge as `shifted` computes it).
                    obi_convex_into(loss, z, v, fzv);
                }
            }
            let Some(o) = order2 else { return };
            let rows = Order2Rows { alpha, y: &y[a..b], h: &h[a..b], w: &o.w[a..b], wt: &*wt, q: &*fzv };
            *sums = match o.sw {
                Some(sw) => rows.add::<false>(&sw[a..b], o.qbar, *sums),
                None => rows.add::<true>(&[], o.qbar, *sums),
            };
        })
    };
    // A chunk, block by block: a block's temporaries stay in the core's cache between its steps
    // (a batch loss as one block: one call of its callable per pass).
    let sub = if loss.is_batch() { chunk } else { SECANT_BLOCK };
    let one = |k: usize, out: Option<&mut [f64]>, fz: &mut [f64]| -> PassSums {
        let mut sums = PassSums::default();
        match out {
            Some(out) => {
                for (j, (o, f)) in out.chunks_mut(sub).zip(fz.chunks_mut(sub)).enumerate() {
                    block(k * chunk + j * sub, Some(o), f, &mut sums);
                }
            }
            None => {
                for (j, f) in fz.chunks_mut(sub).enumerate() {
                    block(k * chunk + j * sub, None, f, &mut sums);
                }
            }
        }
        sums
    };
    let parts: Vec<PassSums> = if loss.is_batch() || m <= chunk {
        vec![one(0, out, fz)]
    } else {
        match out {
            Some(out) => out
                .par_chunks_mut(chunk)
                .zip(fz.par_chunks_mut(chunk))
                .enumerate()
                .map(|(k, (o, f))| one(k, Some(o), f))
                .collect(),
            None => fz.par_chunks_mut(chunk).enumerate().map(|(k, f)| one(k, None, f)).collect(),
        }
    };
    parts.into_iter().fold(PassSums::default(), PassSums::then)
}

/// `out_i = −(F(z_i + v_i) − fz_i) / v_i` with `fz_i = F(z_i)` already known
/// (the weights of [`secant_pass`] at α = 0, bit for bit, with one loss evaluation a row instead
/// of two). Parallel over fixed chunks (a batch loss as one chunk on this thread).
pub(super) fn secant_from_values(loss: &Loss, z: &[f64], v: &[f64], fz: &[f64], out: &mut [f64]) {
    traffic::add(Pass::BoosterUpdate, traffic::bytes(z) + traffic::bytes(v) + traffic::bytes(fz), traffic::bytes(out));
    let m = z.len();
    let chunk = if loss.is_batch() { m.max(1) } else { SECANT_CHUNK };
    let one = |k: usize, out: &mut [f64]| {
        let a = k * chunk;
        let b = a + out.len();
        if is_logistic(loss) {
            logistic::weights_into(&z[a..b], &v[a..b], &fz[a..b], out);
            return;
        }
        with_chunk_tmp(loss, b - a, |tmp, _, _| weights_from_values(loss, &z[a..b], &v[a..b], &fz[a..b], out, tmp));
    };
    if loss.is_batch() || m <= chunk {
        one(0, out);
    } else {
        out.par_chunks_mut(chunk).enumerate().for_each(|(k, o)| one(k, o));
    }
}

/// `W = |mean_i s_i (h_i/M)² δ_{α y_i h_i, v_i} F(ẽ_i)|` (docs/explanation/secboost.md#secboost-algorithm), from the weights `w` at α = 0
/// and the partial weights `wt` at α: `δ_{e,v}F(ẽ) = (δ_vF(ẽ + e) − δ_vF(ẽ))/e = (w − w̃)/e`.
#[allow(clippy::too_many_arguments)]
pub(super) fn order2_bound(
    sw: &[f64],
    y: &[f64],
    h: &[f64],
    w: &[f64],
    wt: &[f64],
    alpha: f64,
    m_t: f64,
    red: Red<'_>,
) -> Result<f64> {
    traffic::add(Pass::BoosterStep, 3 * traffic::bytes(w) + traffic::bytes(sw) + traffic::bytes(wt), 0);
    // The terms of `secant_pass` in the lanes of one chunk (the same bits on one chunk).
    let mut acc = Sum4::default();
    in_lanes(0..w.len(), |i, l| acc.0[l] += order2_term(sw[i], w[i], wt[i], y[i], h[i], alpha));
    // Over every rank (`n` = the number of examples).
    Ok(order2_w(red.mean(acc.total())?, alpha, m_t))
}

/// Solve_α, extended (docs/explanation/secboost.md#secboost-algorithm): the leveraging coefficient α, the bound `W̄` and ε.
///
/// 1. `α = δ·sign(η₀)` with `δ = delta_init, delta_init/2, ...` until
///    `|η(w̃(α), h) − η₀| < |η₀|` (at most `max_halvings` halvings);
/// 2. `W = |mean_i (h_i/M)² δ_{α y_i h_i, v_i} F(ẽ_i)|`; if it is (machine) zero, `W = 1` halved
///    while `|α| > |η₀|/(W M²)`;
/// 3. `ε = |η₀|/(W M² |α|) − 1`; if `ε ≤ 0`, α is halved and `W`, ε recomputed (bounded too).
///
/// Step 1 needs `F` continuous at the current edges (Theorem 5.8 of the paper): for a loss that
/// jumps there (the 0/1 loss with every edge at 0) no α is accepted.
///
/// # Errors
/// [`Error::InvalidData`] if the slices differ in length or `η₀` is 0 or not finite;
/// [`Error::Numerical`] if no α is accepted within the halvings, or W/ε cannot be made finite
/// and positive.
pub fn solve_alpha(input: &AlphaInput<'_>, delta_init: f64, max_halvings: usize) -> Result<AlphaSolution> {
    solve_alpha_on(input, delta_init, max_halvings, Red::local(input.y.len()), Known::default(), &mut Vec::new())
}

/// [`solve_alpha`] over the examples of every rank: one call per trial α. On success
/// `fz` holds `F(ẽ_i + α y_i h_i)` at the returned α (the step reuses it).
pub(super) fn solve_alpha_on(
    input: &AlphaInput<'_>,
    delta_init: f64,
    max_halvings: usize,
    red: Red<'_>,
    known: Known,
    fz: &mut Vec<f64>,
) -> Result<AlphaSolution> {
    let AlphaInput { loss, y, h, sample_weight: sw, edges, offsets, weights: w } = *input;
    let (m, m_t, eta0) = checked_input(input, red, known)?;
    let mut wt = vec![0.0; m];
    fz.clear();
    fz.resize(m, 0.0);
    let mut delta = delta_init;
    let mut accepted = None;
    // docs/explanation/secboost.md#secboost-solve-alpha Solve_α step 1: α = δ·sign(η₀), accept if |η(w̃(α), h) − η₀| < |η₀|, else halve δ.
    for k in 0..=max_halvings {
        let alpha = delta * eta0.signum();
        secant_pass(loss, edges, alpha, y, h, offsets, Some(&mut wt), fz, None);
        let eta_new = edge_on(sw, &wt, y, h, red)?;
        if (eta_new - eta0).abs() < eta0.abs() {
            accepted = Some((alpha, k));
            break;
        }
        delta *= 0.5;
    }
    let Some((mut alpha, mut halvings)) = accepted else {
        return Err(Error::Numerical(format!(
            "Solve_α accepted no α after {max_halvings} halvings from δ_init = {delta_init} (loss `{}`): \
             the loss is probably discontinuous at some current edge (e.g. the zero-one loss with h0 = 0; \
             choose h0 ≠ 0)",
            loss.name()
        )));
    };
    for _ in 0..=max_halvings {
        // docs/explanation/secboost.md#secboost-solve-alpha Solve_α step 2: W = |mean (h/M)² δ_{αyh, v} F(ẽ)|.
        let mut big_w = order2_bound(sw, y, h, w, &wt, alpha, m_t, red)?;
        if !big_w.is_finite() {
            return Err(Error::Numerical(format!("Solve_α: W̄ is not finite ({big_w}) at α = {alpha}")));
        }
        if big_w < f64::MIN_POSITIVE {
            // Machine zero: any W with |α| ≤ |η₀|/(W M²) will do.
            big_w = 1.0;
            while alpha.abs() > eta0.abs() / (big_w * m_t * m_t) && big_w >= f64::MIN_POSITIVE {
                big_w *= 0.5;
            }
        }
        // docs/explanation/secboost.md#secboost-solve-alpha Solve_α step 3: ε = |η₀|/(W M² |α|) − 1.
        let epsilon = eta0.abs() / (big_w * m_t * m_t * alpha.abs()) - 1.0;
        if epsilon > 0.0 && epsilon.is_finite() && big_w > 0.0 {
            return Ok(AlphaSolution { alpha, w2: big_w, epsilon, halvings });
        }
        // ε ≤ 0: α lies outside η₀·(0, 1/(M² W)); halve it and recompute W and ε.
        alpha *= 0.5;
        halvings += 1;
        secant_pass(loss, edges, alpha, y, h, offsets, Some(&mut wt), fz, None);
    }
    Err(Error::Numerical(format!(
        "Solve_α: no α with ε > 0 after {max_halvings} further halvings (loss `{}`)",
        loss.name()
    )))
}

/// Grid points of `q̄`'s OBI per unit of `oracle_precision` (the offset oracle's check uses the
/// same `4Z`).
pub(super) const QBAR_GRID: usize = 4;

/// The certified Solve_α needs `B > B_ROUNDING·|α η₀|` (B above the rounding of its two terms).
const B_ROUNDING: f64 = 64.0 * f64::EPSILON;

/// A step `|α| M` at most this many units of `max(1, max |ẽ|)` is numerically zero.
const NULL_STEP: f64 = 1e-10;

/// Examples per parallel chunk of [`mean_obi`] (fixed, so sums do not depend on the thread count).
const QBAR_CHUNK: usize = 256;

/// `q̄ = mean_i s_i Q*_F(new_edges_i, edges_i, offsets_i)` (docs/explanation/secboost.md#secboost-algorithm) on `n + 1` grid points, over
/// the rows of positive sample weight. Per-example values are computed in fixed chunks (in
/// parallel unless the loss is a batch closure, which is called from this thread only) and summed
/// in order, so the result does not depend on the thread count. NaN if some value is NaN.
pub(super) fn mean_obi(
    loss: &Loss,
    sw: &[f64],
    new_edges: &[f64],
    edges: &[f64],
    offsets: &[f64],
    n: usize,
    red: Red<'_>,
) -> Result<f64> {
    let m = sw.len();
    // The new edges, the edges, the offsets and the sample weights read; the terms written.
    traffic::add(Pass::BoosterStep, 4 * traffic::bytes(sw), traffic::bytes(sw));
    let q: Vec<f64> = if loss.is_batch() {
        obi_star_many(loss, new_edges, edges, offsets, n)
    } else {
        let starts: Vec<usize> = (0..m).step_by(QBAR_CHUNK).collect();
        let parts: Vec<Vec<f64>> = starts
            .into_par_iter()
            .map(|a| {
                let b = (a + QBAR_CHUNK).min(m);
                obi_star_many(loss, &new_edges[a..b], &edges[a..b], &offsets[a..b], n)
            })
            .collect();
        parts.concat()
    };
    // docs/explanation/secboost.md#secboost-algorithm: q̄ = mean_i Q*_F(ẽ_ti, ẽ_(t−1)i, v_(t−1)i); rows of weight 0 are left out.
    // Over every rank (`red.n` examples; `m` on one machine).
    red.mean(q.iter().zip(sw).filter(|(_, s)| **s > 0.0).map(|(q, s)| s * q).sum::<f64>())
}

/// The output of [`solve_alpha_certified`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CertifiedAlpha {
    /// α, `W̄`, ε (with `ε α² M² W̄ = κB`) and the number of halvings.
    pub solution: AlphaSolution,
    /// `B = |α η₀| − α² M² W̄ > 0`.
    pub b: f64,
    /// `q̄ = mean_i Q*_F(ẽ_i + α y_i h_i, ẽ_i, v_i) ≤ κB`.
    pub qbar: f64,
}

/// Both Solve_α rules' input checks: `(m, M, η)` of equal-length non-empty slices with a finite
/// non-zero edge η and a finite non-zero `M = max |h|` (over examples of positive weight).
fn checked_input(input: &AlphaInput<'_>, red: Red<'_>, known: Known) -> Result<(usize, f64, f64)> {
    let AlphaInput { y, h, sample_weight: sw, edges, offsets, weights: w, .. } = *input;
    let m = y.len();
    // A rank may hold no examples; `red.n` counts every rank's.
    if [h.len(), sw.len(), edges.len(), offsets.len(), w.len()].iter().any(|&l| l != m) || red.n == 0.0 {
        return Err(Error::InvalidData("solve_alpha: the input slices must be non-empty and of equal length".into()));
    }
    let (m_t, eta0) = match known.m_eta {
        Some(k) => k,
        None => {
            traffic::add(Pass::BoosterStep, traffic::bytes(h) + traffic::bytes(sw), 0);
            (red.max(max_abs_weighted(h, sw))?, edge_on(sw, w, y, h, red)?)
        }
    };
    if !(eta0 != 0.0 && eta0.is_finite() && m_t > 0.0 && m_t.is_finite()) {
        return Err(Error::InvalidData(format!(
            "solve_alpha needs a finite non-zero edge η and a finite non-zero h (η = {eta0}, M = {m_t})"
        )));
    }
    Ok((m, m_t, eta0))
}

/// Solve_α, certified (docs/explanation/secboost.md#secboost-certificate as corrected).
///
/// For `δ = delta_init, delta_init/2, ...` (at most `max_halvings` halvings), `α = δ·sign(η₀)`:
/// - `W = |mean_i (h_i/M)² δ_{α y_i h_i, v_i} F(ẽ_i)|`; if it is (machine) 0, `W = 1` halved while
///   `|α| ≥ |η₀|/(W M²)`;
/// - `B = |α η₀| − α² M² W` and `q̄ = mean_i Q*_F(ẽ_i + α y_i h_i, ẽ_i, v_i)` on `obi_points + 1`
///   grid points;
/// - accept if `B > 0` and `q̄ ≤ κB`; then `ε = κ(|η₀|/(W M² |α|) − 1)`, so that the OBI budget
///   `z = ε α² M² W` is `κB` and the round decreases the risk by at least `(1 − κ)B`.
///
/// Returns `Ok(None)` when no α is accepted (SecBoost then stops and keeps `H_(t−1)`).
///
/// # Errors
/// [`Error::InvalidData`] if the slices differ in length or `η₀` is 0 or not finite;
/// [`Error::InvalidParam`] if κ is not in `(0, 1)`.
pub fn solve_alpha_certified(
    input: &AlphaInput<'_>,
    delta_init: f64,
    max_halvings: usize,
    kappa: f64,
    obi_points: usize,
) -> Result<Option<CertifiedAlpha>> {
    let red = Red::local(input.y.len());
    let fz = &mut Vec::new();
    solve_alpha_certified_on(
        input,
        delta_init,
        max_halvings,
        kappa,
        obi_points,
        red,
        Known::default(),
        fz,
        false,
        None,
        None,
    )
}

/// A trial pass in place of [`secant_pass`]: given α and the [`Order2`] asked for, it returns the
/// same sums, bit for bit, and keeps what it needs of the rows itself (it may do more with them
/// while they are at hand: the update computed ahead, update.rs).
pub(super) type TrialPass<'a> = &'a mut dyn FnMut(f64, Order2<'_>) -> PassSums;

/// [`solve_alpha_certified`] over the examples of every rank: two calls per trial α. `fz` is
/// the passes' buffer of loss values; with `keep_losses`, when an α is accepted it holds
/// `F(ẽ_i + α y_i h_i)` at it (the step reuses it), else its values are unspecified. `trial`, when
/// given, runs the trial passes (the last one it runs is the accepted α's; `fz` is then not
/// touched). `first`: the sums of the first trial's pass (at `α = δ_init·sign(η₀)`), run already
/// (by `trial`, or by [`secant_pass`] with its loss values in `fz`).
#[allow(clippy::too_many_arguments)] // the public rule's arguments, the ranks' reducer, what the round knows, F's buffer, whether it is kept, the trial pass and its first sums
pub(super) fn solve_alpha_certified_on(
    input: &AlphaInput<'_>,
    delta_init: f64,
    max_halvings: usize,
    kappa: f64,
    obi_points: usize,
    red: Red<'_>,
    known: Known,
    fz: &mut Vec<f64>,
    keep_losses: bool,
    mut trial: Option<TrialPass<'_>>,
    mut first: Option<PassSums>,
) -> Result<Option<CertifiedAlpha>> {
    let AlphaInput { loss, y, h, sample_weight: sw, edges, offsets, weights: w } = *input;
    let (m, m_t, eta0) = checked_input(input, red, known)?;
    if !(kappa > 0.0 && kappa < 1.0) {
        return Err(Error::param("kappa", "a real in (0, 1)", kappa));
    }
    if trial.is_none() {
        // This function's own passes write the loss values into `fz`.
        if fz.len() != m {
            first = None;
        }
        if first.is_none() {
            fz.clear();
            fz.resize(m, 0.0);
        }
    }
    // A convex loss's q̄ terms are closed forms or short searches: computed in the pass of the
    // partial weights (a trial rejected before its q̄ test wastes them; one rarely is). A
    // non-convex loss's grid OBI costs `4Z + 2` loss values a row: only where the test needs it.
    let fused_qbar = loss.declared_convex() && !loss.is_batch();
    let mut new_edges = if fused_qbar { Vec::new() } else { vec![0.0; m] };
    let local_scale = known
        .edge_scale
        .unwrap_or_else(|| edges.iter().zip(sw).filter(|(_, s)| **s > 0.0).fold(1.0_f64, |a, (e, _)| a.max(e.abs())));
    let edge_scale = red.max(local_scale)?;
    let mut delta = delta_init;
    for k in 0..=max_halvings {
        let alpha = delta * eta0.signum();
        delta *= 0.5;
        // docs/explanation/secboost.md#secboost-algorithm: W = |mean_i (h_i/M)² δ_{α y_i h_i, v_i} F(ẽ_i)|: in the pass that
        // computes the partial weights (parallel chunks).
        let order2 = Order2 { w, sw: (!known.unit_weights).then_some(sw), qbar: fused_qbar, losses: keep_losses };
        let sums = match (first.take(), trial.as_mut()) {
            (Some(sums), _) => sums,
            (None, Some(pass)) => pass(alpha, order2),
            (None, None) => secant_pass(loss, edges, alpha, y, h, offsets, None, fz, Some(order2)),
        };
        // Over every rank (`n` = the number of examples).
        let mut big_w = order2_w(red.mean(sums.order2.total())?, alpha, m_t);
        if !big_w.is_finite() {
            continue;
        }
        if big_w < f64::MIN_POSITIVE {
            // Machine zero: W = 1, halved while |α| ≥ |η₀|/(W M²) (strict, so B > 0).
            big_w = 1.0;
            while alpha.abs() >= eta0.abs() / (big_w * m_t * m_t) && big_w >= f64::MIN_POSITIVE {
                big_w *= 0.5;
            }
        }
        // docs/explanation/secboost.md#secboost-algorithm: B = |α η₀| − α² M² W.
        let b = (alpha * eta0).abs() - alpha * alpha * m_t * m_t * big_w;
        // B > 0 beyond rounding: a B within a few ulps of |α η₀| − α²M²W is a 0 (e.g. the 0/1
        // loss from its jump, where B = 0 exactly but rounds to ±1e−14).
        if !(b > B_ROUNDING * (alpha * eta0).abs() && b.is_finite()) {
            continue;
        }
        if alpha.abs() * m_t <= NULL_STEP * edge_scale {
            // The step is numerically zero next to the edges (the oracle's "numerically zero
            // offset" threshold): its B and q̄ would be rounding, and so would every smaller α's.
            break;
        }
        let qbar = if fused_qbar {
            red.mean(sums.qbar.total())?
        } else {
            for (ne, e) in new_edges.iter_mut().zip(shifted(edges, alpha, y, h)) {
                *ne = e;
            }
            mean_obi(loss, sw, &new_edges, edges, offsets, obi_points, red)?
        };
        // docs/explanation/secboost.md#secboost-algorithm: accept if B > 0 and q̄ ≤ κB.
        if qbar <= kappa * b {
            // docs/explanation/secboost.md#secboost-algorithm: ε = κ(|η₀|/(W M² |α|) − 1), so z = ε α² M² W = κB.
            let epsilon = kappa * (eta0.abs() / (big_w * m_t * m_t * alpha.abs()) - 1.0);
            if epsilon > 0.0 && epsilon.is_finite() {
                return Ok(Some(CertifiedAlpha {
                    solution: AlphaSolution { alpha, w2: big_w, epsilon, halvings: k },
                    b,
                    qbar,
                }));
            }
        }
    }
    Ok(None)
}
