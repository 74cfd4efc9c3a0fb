//! The end of a SecBoost round in one pass over the rows (docs/explanation/secboost.md#secboost-speed):
//! the new edges, the convex oracle's offsets, the new weights and loss values, and every sum the
//! round records, for a loss declared convex that is not a batch closure.
//!
//! Per row the values are those of the general path (new edges, then `offset_convex` per row,
//! then `−δ_v F`), bit for bit; the sums are over the fixed chunks of [`crate::util::par`], added
//! in chunk order, as [`SecBoost::risk`] and [`SecBoost::train_error`] add them.

use rayon::prelude::*;

use super::logistic;
use super::obi::obi_convex_into;
use super::oracle::{first_guess_usable, guess_divisor, offsets_convex_into};
use super::solve_alpha::{
    is_logistic, shifted_edge, weights_from_values, with_chunk_tmp, EdgeLanes, Order2, PassSums, Sum4,
};
use super::{offset_seed, SecBoost, SolveAlphaRule};
use crate::boost::driver::outputs_of_rows;
use crate::boost::{Diagnostics, Step};
use crate::error::{Error, Result};
use crate::util::fastmath::select;
use crate::util::par::ROW_CHUNK;
use crate::util::traffic::{self, Pass};

/// What one chunk of [`SecBoost::update_convex`] (or [`SecBoost::trial_ahead`]) found: the sums
/// of the round's records over its rows, and the first row of a non-finite edge, weight or loss
/// value.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ChunkSums {
    max_obi: f64,
    /// Ahead of the budget ([`SecBoost::trial_ahead`]): some row's first guess is not kept whatever
    /// the budget (a numerically zero step or guess, a NaN OBI), and the largest OBI of a first
    /// guess over every row.
    unusable_guess: bool,
    max_guess_obi: f64,
    /// Ahead of η and M ([`SecBoost::trial_ahead`]): `Σ s w y h` and `max |h|` over the rows of
    /// positive sample weight, as [`super::solve_alpha::edge_sum_and_max`] sums them, and the
    /// first row of a non-finite output.
    pub(super) eta: Sum4,
    pub(super) m: f64,
    pub(super) bad_output: Option<usize>,
    /// `Σ s` over the rows of positive sample weight with a random offset, a negative weight, a
    /// zero weight.
    random: f64,
    negative: f64,
    zero: f64,
    /// `Σ s F(ẽ_t)` and `Σ s [wrong]` (see [`SecBoost::risk_sum`]).
    risk: f64,
    error: f64,
    /// Some row of positive sample weight has a non-zero weight.
    nonzero: bool,
    /// `Σ s w`, `Σ s |w|` and `max |ẽ_t|` over the rows of positive sample weight (the next
    /// round's [`super::StateSums`]).
    w1: f64,
    abs_total: f64,
    edge_scale: f64,
    bad_edge: Option<usize>,
    bad_weight: Option<usize>,
    bad_loss: Option<usize>,
}

impl ChunkSums {
    /// The first rows of a non-finite weight and loss value of a block whose first row is `a`,
    /// when `bad` says it has some and no earlier block had.
    fn bad_rows(&mut self, a: usize, (bad_weight, bad_loss): (bool, bool), weights: &[f64], losses: &[f64]) {
        if bad_weight && self.bad_weight.is_none() {
            self.bad_weight = first_bad_row(a, weights);
        }
        if bad_loss && self.bad_loss.is_none() {
            self.bad_loss = first_bad_row(a, losses);
        }
    }

    /// `self` then `next` (the later chunk): sums added, first rows kept.
    fn then(self, next: ChunkSums) -> ChunkSums {
        ChunkSums {
            max_obi: self.max_obi.max(next.max_obi),
            unusable_guess: self.unusable_guess || next.unusable_guess,
            max_guess_obi: self.max_guess_obi.max(next.max_guess_obi),
            eta: self.eta.then(next.eta),
            m: self.m.max(next.m),
            bad_output: self.bad_output.or(next.bad_output),
            random: self.random + next.random,
            negative: self.negative + next.negative,
            zero: self.zero + next.zero,
            risk: self.risk + next.risk,
            error: self.error + next.error,
            nonzero: self.nonzero || next.nonzero,
            w1: self.w1 + next.w1,
            abs_total: self.abs_total + next.abs_total,
            edge_scale: self.edge_scale.max(next.edge_scale),
            bad_edge: self.bad_edge.or(next.bad_edge),
            bad_weight: self.bad_weight.or(next.bad_weight),
            bad_loss: self.bad_loss.or(next.bad_loss),
        }
    }
}

/// Rows per block of [`SecBoost::update_chunk`]: the block's eight vectors of values (about
/// 64 KiB) stay in the core's cache from one step to the next.
const BLOCK: usize = 1024;

/// One chunk's `K` output slices of equal length: the new edges, offsets, weights (and loss
/// values, for [`SecBoost::update_convex`]).
struct Out<'a, const K: usize>([&'a mut [f64]; K]);

impl<'a, const K: usize> Out<'a, K> {
    /// The rows cut into pieces of `len` rows, each with its first row (from 0).
    fn pieces(self, len: usize) -> impl Iterator<Item = (usize, Out<'a, K>)> {
        let (mut rest, mut first) = (self.0, 0);
        std::iter::from_fn(move || {
            let k = len.min(rest.first().map_or(0, |v| v.len()));
            if k == 0 {
                return None;
            }
            let piece = rest.each_mut().map(|v| {
                let (head, tail) = std::mem::take(v).split_at_mut(k);
                *v = tail;
                head
            });
            first += k;
            Some((first - k, Out(piece)))
        })
    }

    /// `f(first row, chunk)` over the fixed chunks of [`ROW_CHUNK`] rows, in parallel (one call
    /// with at most that many rows), the results in chunk order.
    fn map_chunks<R: Send>(self, f: impl Fn(usize, Out<'_, K>) -> R + Sync + Send) -> Vec<R> {
        if self.0.first().is_none_or(|v| v.len() <= ROW_CHUNK) {
            return vec![f(0, self)];
        }
        let chunks: Vec<_> = self.pieces(ROW_CHUNK).collect();
        chunks.into_par_iter().map(|(a, out)| f(a, out)).collect()
    }
}

/// A weak hypothesis's outputs on the rows: given, or a grown tree's leaves, read by the pass
/// (`h_i = values[of_row[i]]`: no vector of outputs written by one pass and read by the next).
#[derive(Clone, Copy)]
pub(super) enum Outputs<'a> {
    Dense(&'a [f64]),
    Leaves { of_row: &'a [u32], values: &'a [f64] },
}

impl<'a> Outputs<'a> {
    /// The number of rows.
    pub(super) fn len(&self) -> usize {
        match self {
            Outputs::Dense(h) => h.len(),
            Outputs::Leaves { of_row, .. } => of_row.len(),
        }
    }

    /// Row `i`'s output.
    pub(super) fn at(&self, i: usize) -> f64 {
        match self {
            Outputs::Dense(h) => h[i],
            Outputs::Leaves { of_row, values } => values[of_row[i] as usize],
        }
    }

    /// Every row's output, as a vector only when it is not one already.
    pub(super) fn dense(&self) -> std::borrow::Cow<'a, [f64]> {
        match *self {
            Outputs::Dense(h) => std::borrow::Cow::Borrowed(h),
            Outputs::Leaves { of_row, values } => {
                let mut h = vec![0.0; of_row.len()];
                crate::boost::driver::tree_outputs(of_row, values, 1, &mut h);
                std::borrow::Cow::Owned(h)
            }
        }
    }

    /// The outputs of rows `r`: a slice of the given ones, or the leaves' values written into `tmp`.
    #[inline(always)]
    fn rows<'b>(&self, r: std::ops::Range<usize>, tmp: &'b mut [f64]) -> &'b [f64]
    where
        'a: 'b,
    {
        match *self {
            Outputs::Dense(h) => &h[r],
            Outputs::Leaves { of_row, values } => {
                let tmp = &mut tmp[..r.len()];
                outputs_of_rows(&of_row[r], values, 1, tmp);
                tmp
            }
        }
    }

    /// The bytes a pass reads for them.
    fn bytes(&self) -> usize {
        match self {
            Outputs::Dense(h) => traffic::bytes(h),
            Outputs::Leaves { of_row, .. } => traffic::bytes(of_row),
        }
    }
}

/// A trial pass's inputs, the same for every block ([`SecBoost::trial_ahead`]): the trial α, the
/// weak hypothesis's outputs and the order-2 sums' inputs.
#[derive(Clone, Copy)]
struct Trial<'a> {
    alpha: f64,
    h: Outputs<'a>,
    order2: Order2<'a>,
}

/// A block's temporaries in [`SecBoost::trial_ahead`] ([`BLOCK`] values each, every one written
/// before it is read): the outputs (from the leaves), the trial edges (under shrinkage), the loss
/// values at the new edges, the partial weights and OBIs at the trial edges, and the first guesses'
/// OBIs.
struct BlockTmp<'t> {
    h: &'t mut [f64],
    trial_edges: &'t mut [f64],
    losses: &'t mut [f64],
    wt: &'t mut [f64],
    q: &'t mut [f64],
    guess_obi: &'t mut [f64],
}

impl SecBoost {
    /// Whether the round ends with [`SecBoost::update_convex`]: the convex oracle on a loss that
    /// is not a batch closure (whose values are computed per row, on any thread).
    pub(super) fn updates_in_one_pass(&self) -> bool {
        self.params.oracle == super::OffsetOracle::Auto
            && self.loss.declared_convex()
            && !self.loss.is_batch()
            && !self.general_path
    }

    /// Steps 3–5 of the round for [`SecBoost::updates_in_one_pass`]: `ẽ_t = ẽ_(t−1) + α y h`,
    /// the offsets `v_t` from [`super::oracle::offset_convex`] with budget `z`, `w_(t+1) = −δ_{v_t} F(ẽ_t)`, the
    /// records of the round, then the state replaced. `fz` is `F(ẽ_t)` when Solve_α computed it at
    /// this α (then only `F(ẽ_t + v_t)` is evaluated).
    ///
    /// # Errors
    /// [`Error::Numerical`] for a non-finite new edge (the state is kept) or a non-finite weight
    /// or loss value at the new edges.
    pub(super) fn update_convex(
        &mut self,
        alpha: f64,
        h: &[f64],
        z: f64,
        fz: Option<Vec<f64>>,
        diag: &mut Diagnostics,
    ) -> Result<Step> {
        let m = self.y.len();
        // F(ẽ_t), when known, is written in place: it becomes the loss values.
        let fz = fz.filter(|f| f.len() == m);
        let known = fz.is_some();
        let spare = &mut self.spare;
        let mut take = || {
            let mut v = spare.pop().unwrap_or_default();
            v.resize(m, 0.0);
            v
        };
        let losses = fz.unwrap_or_else(&mut take);
        let mut out = [take(), take(), take(), losses];
        // Edges, labels, outputs (the offsets and sample weights unless every sample weight is 1;
        // F(ẽ_t) when known) read; the four vectors written.
        let b = traffic::bytes(h);
        traffic::add(
            Pass::BoosterUpdate,
            (3 + 2 * usize::from(!self.unit_weights) + usize::from(known)) * b,
            (4 - usize::from(known)) * b,
        );
        let sums = Out(out.each_mut().map(|v| &mut v[..]))
            .map_chunks(|a, out| self.update_chunk(a, alpha, h, z, known, out))
            .into_iter()
            .fold(ChunkSums::default(), ChunkSums::then);
        self.finish_update(alpha, Outputs::Dense(h), out, sums, diag)
    }

    /// Whether a round computes its end ahead, in Solve_α's trial passes
    /// ([`SecBoost::trial_ahead`]): the one-pass update of the logistic loss under the certified
    /// rule (with or without shrinkage).
    pub(super) fn updates_ahead(&self) -> bool {
        self.updates_in_one_pass() && self.params.solve_alpha == SolveAlphaRule::Certified && is_logistic(&self.loss)
    }

    /// Whether this round's end is computed in Solve_α's trial passes: [`SecBoost::updates_ahead`]
    /// with an α from Solve_α (not a closed form, which comes first).
    pub(super) fn ends_ahead(&self) -> bool {
        let closed_form = self.params.alpha_rule == super::AlphaRule::Auto && self.loss.beta().is_some();
        self.updates_ahead() && !closed_form
    }

    /// Whether the round's first trial pass runs before η and M (and checks the outputs): its
    /// end computed ahead, on one machine. Then every pass of the round is a trial pass, but for
    /// the update pass of a refused first guess, and the passes may read a tree's leaves.
    pub(super) fn first_trial_ahead(&self) -> bool {
        self.ends_ahead() && !self.coll.is_distributed()
    }

    /// A trial pass of the certified Solve_α at `alpha` ([`super::solve_alpha::secant_pass`] with
    /// `order2`: the same sums, bit for bit) that also computes the end of the round as
    /// [`SecBoost::update_convex`] would if `alpha` is accepted (at the step `α` shrunk, under
    /// shrinkage): the new edges, the oracle's first guesses as offsets, the weights at them and
    /// the round's sums, into `out` (edges, offsets, weights: `m` values each). The loss values at
    /// the new edges are summed, not kept (the state's are recomputed if ever read:
    /// [`SecBoost::loss_values`]). It also sums η and M and checks the outputs
    /// (for the first trial, run before them: see the step). The budget is known only after the pass:
    /// [`SecBoost::ahead_holds`] tells whether every first guess is then accepted, as
    /// [`SecBoost::update_convex`] would have found (docs/explanation/secboost.md#secboost-speed).
    pub(super) fn trial_ahead(
        &self,
        alpha: f64,
        h: Outputs<'_>,
        order2: Order2<'_>,
        out: &mut [Vec<f64>; 3],
    ) -> (PassSums, ChunkSums) {
        debug_assert!(order2.qbar && self.updates_ahead());
        // The secant pass's reads (edges, labels, outputs, offsets, weights; the sample weights
        // unless all are 1); the new edges, offsets and weights written.
        let b = traffic::bytes(&self.edges);
        traffic::add(Pass::BoosterStep, (4 + usize::from(!self.unit_weights)) * b + h.bytes(), 0);
        traffic::add(Pass::BoosterUpdate, 0, 3 * b);
        let trial = Trial { alpha, h, order2 };
        let parts = Out(out.each_mut().map(|v| &mut v[..])).map_chunks(|a, out| {
            // A block's temporaries, for every block of the chunk.
            let (mut hb, mut trial_edges, mut losses) = ([0.0; BLOCK], [0.0; BLOCK], [0.0; BLOCK]);
            with_chunk_tmp(&self.loss, BLOCK, |wt, q, guess_obi| {
                let (h, trial_edges, losses) = (&mut hb, &mut trial_edges, &mut losses);
                let mut tmp = BlockTmp { h, trial_edges, losses, wt, q, guess_obi };
                self.ahead_chunk(trial, a, out, &mut tmp)
            })
        });
        // In chunk order, as secant_pass and update_convex add them.
        parts.into_iter().fold((PassSums::default(), ChunkSums::default()), |(t, s), (p, c)| (t.then(p), s.then(c)))
    }

    /// Whether the end of the round computed by [`SecBoost::trial_ahead`] (its `sums`) is
    /// [`SecBoost::update_convex`]'s at the budget `z`: every edge finite and every first guess
    /// accepted (then no row searched further).
    pub(super) fn ahead_holds(sums: &ChunkSums, z: f64) -> bool {
        sums.bad_edge.is_none() && !sums.unusable_guess && sums.max_guess_obi <= z
    }

    /// One chunk of [`SecBoost::trial_ahead`], its first row `a`, block by block
    /// ([`SecBoost::ahead_block`]): the chunk's order-2 sums and round sums.
    #[allow(unsafe_code)]
    fn ahead_chunk(&self, t: Trial<'_>, a: usize, out: Out<'_, 3>, tmp: &mut BlockTmp<'_>) -> (PassSums, ChunkSums) {
        #[cfg(target_arch = "x86_64")]
        if crate::util::fastmath::avx512() {
            // SAFETY: `avx512()` holds only when the CPU has AVX-512 (F, DQ, VL), AVX2 and FMA
            // (detected at run time), the only requirement of calling a function with those target
            // features.
            return unsafe { self.ahead_chunk_avx512(t, a, out, tmp) };
        }
        #[cfg(target_arch = "x86_64")]
        if crate::util::fastmath::avx2() {
            // SAFETY: `avx2()` holds only when the CPU has AVX2 and FMA (detected at run time),
            // the only requirement of calling a function with those target features.
            return unsafe { self.ahead_chunk_avx2(t, a, out, tmp) };
        }
        self.ahead_blocks(t, a, out, tmp)
    }

    /// [`SecBoost::ahead_chunk`] compiled for AVX2: its loops over the rows four at a time (IEEE
    /// operations lane by lane, never contracted: the same bits).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    fn ahead_chunk_avx2(
        &self,
        t: Trial<'_>,
        a: usize,
        out: Out<'_, 3>,
        tmp: &mut BlockTmp<'_>,
    ) -> (PassSums, ChunkSums) {
        self.ahead_blocks(t, a, out, tmp)
    }

    /// [`SecBoost::ahead_chunk`] compiled for AVX-512: the same four-row steps as the AVX2 build,
    /// with twice the vector registers (the loops' running sums stay in them). The same bits.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
    fn ahead_chunk_avx512(
        &self,
        t: Trial<'_>,
        a: usize,
        out: Out<'_, 3>,
        tmp: &mut BlockTmp<'_>,
    ) -> (PassSums, ChunkSums) {
        self.ahead_blocks(t, a, out, tmp)
    }

    /// The blocks of [`SecBoost::ahead_chunk`], in row order.
    #[inline(always)]
    fn ahead_blocks(&self, t: Trial<'_>, a: usize, out: Out<'_, 3>, tmp: &mut BlockTmp<'_>) -> (PassSums, ChunkSums) {
        debug_assert_eq!(t.order2.sw.is_none(), self.unit_weights);
        let (mut p, mut s) = (PassSums::default(), ChunkSums::default());
        for (j, out) in out.pieces(BLOCK) {
            if self.unit_weights {
                self.ahead_block::<true>(t, a + j, out, tmp, &mut p, &mut s);
            } else {
                self.ahead_block::<false>(t, a + j, out, tmp, &mut p, &mut s);
            }
        }
        (p, s)
    }

    /// One block of [`SecBoost::trial_ahead`], its first row `a`: the new edges (the trial edges,
    /// `shifted`'s bits, without shrinkage), the first guesses as offsets, the weights and OBIs of
    /// the previous offsets at the trial edges and of the first guesses at the new edges (from one
    /// exponential without shrinkage: [`logistic::two_offsets_into`]), the order-2 sums into `p`
    /// and the round's sums into `s`.
    ///
    /// Two loops over the rows, before and after the loss's kernels, each doing for a row what the
    /// general path's loops do over the block one after the other (η and M, the new edges, the
    /// first guesses and the trial edges; the order-2 sums, the check of the guesses and the
    /// round's sums). Every sum adds the same terms in the same order, so the bits are the same;
    /// the block's values are read twice instead of seven times. `UNIT`: every sample weight is 1
    /// (not read: the same bits).
    #[inline(always)]
    fn ahead_block<const UNIT: bool>(
        &self,
        t: Trial<'_>,
        a: usize,
        out: Out<'_, 3>,
        tmp: &mut BlockTmp<'_>,
        p: &mut PassSums,
        s: &mut ChunkSums,
    ) {
        let Trial { alpha, h, order2 } = t;
        let Out([edges, offsets, weights]) = out;
        let len = edges.len();
        let r = a..a + len;
        let BlockTmp { h: hb, trial_edges, losses, wt, q, guess_obi } = tmp;
        let rows = AheadRows::<UNIT> {
            prev: &self.edges[r.clone()],
            y: &self.y[r.clone()],
            h: h.rows(r.clone(), hb),
            w: &order2.w[r.clone()],
            sw: if UNIT { &[] } else { &self.sw[r.clone()] },
            old: &self.offsets[r],
            alpha,
            // The update's step: α shrunk as the step shrinks it (α itself without shrinkage).
            step: crate::boost::shrink(self.lr, alpha),
            shrunk: self.lr != 1.0,
            div: guess_divisor(self.params.oracle_precision),
        };
        let (trial, losses) = (&mut trial_edges[..len], &mut losses[..len]);
        let (wt, q, guess_obi) = (&mut wt[..len], &mut q[..len], &mut guess_obi[..len]);
        // Before the kernels, four rows a step (the block's first row is a multiple of 4 in its
        // chunk: row j in lane j mod 4).
        let mut eta = EdgeLanes::from((s.eta, s.m));
        let mut bad = [false; 2];
        let full = len - len % 4;
        for j in (0..full).step_by(4) {
            rows.front::<4>(j, &mut eta, &mut bad, [&mut *edges, &mut *offsets, &mut *trial]);
        }
        let tail = [&mut *edges, &mut *offsets, &mut *trial];
        match len - full {
            1 => rows.front::<1>(full, &mut eta, &mut bad, tail),
            2 => rows.front::<2>(full, &mut eta, &mut bad, tail),
            3 => rows.front::<3>(full, &mut eta, &mut bad, tail),
            _ => {}
        }
        (s.eta, s.m) = eta.finish();
        if bad[0] && s.bad_edge.is_none() {
            s.bad_edge = first_bad_row(a, edges);
        }
        if bad[1] && s.bad_output.is_none() {
            s.bad_output = first_bad_row(a, rows.h);
        }
        if rows.shrunk {
            // The trial edges are Solve_α's and the new edges the update's: one exponential at each.
            logistic::weights_obis_into(&self.loss, trial, rows.old, None, wt, q);
            logistic::weights_obis_into(&self.loss, edges, offsets, Some(&mut *losses), weights, guess_obi);
        } else {
            // The trial edges are the new edges: one exponential a row for both offsets.
            logistic::two_offsets_into(&self.loss, edges, rows.old, offsets, losses, wt, q, weights, guess_obi);
        }
        // After them, four rows a step: the order-2 sums, the check of the first guesses, the
        // largest OBI and the round's sums (in locals: in registers through the loop).
        let mut back = Back {
            order2: *p,
            guesses: GuessLanes::new(),
            max_obi: s.max_obi,
            round: RoundRows::<UNIT>::from(s),
            qbar: order2.qbar,
        };
        let computed = [&*edges, &*wt, &*q, &*guess_obi];
        for j in (0..full).step_by(4) {
            rows.back::<4>(j, computed, &mut back, [&mut *offsets, &mut *weights, &mut *losses]);
        }
        let tail = [&mut *offsets, &mut *weights, &mut *losses];
        match len - full {
            1 => rows.back::<1>(full, computed, &mut back, tail),
            2 => rows.back::<2>(full, computed, &mut back, tail),
            3 => rows.back::<3>(full, computed, &mut back, tail),
            _ => {}
        }
        let Back { order2, guesses, max_obi, round, .. } = back;
        *p = order2;
        let (unusable, max) = guesses.finish();
        s.unusable_guess |= unusable;
        s.max_guess_obi = s.max_guess_obi.max(max);
        // (With every sample weight 1 every row counts in `max_obi` too: the same maximum.)
        s.max_obi = if UNIT { s.max_obi.max(max) } else { max_obi };
        let bad = round.finish(s);
        s.bad_rows(a, bad, weights, losses);
    }

    /// The round's end from its outputs `out` (new edges, offsets, weights, loss values: none, when
    /// they were summed and not kept) and sums: the state replaced and the records written, or
    /// the error of a non-finite value.
    pub(super) fn finish_update(
        &mut self,
        alpha: f64,
        h: Outputs<'_>,
        out: [Vec<f64>; 4],
        sums: ChunkSums,
        diag: &mut Diagnostics,
    ) -> Result<Step> {
        if let Some(i) = sums.bad_edge {
            self.give_back(out);
            let e = shifted_edge(self.edges[i], alpha, self.y[i], h.at(i));
            return Err(Error::Numerical(format!("SecBoost: edge {e} at example {i}")));
        }
        let [edges, offsets, weights, losses] = out;
        let old = [
            std::mem::replace(&mut self.edges, edges),
            std::mem::replace(&mut self.offsets, offsets),
            std::mem::replace(&mut self.losses, losses),
        ];
        self.give_back(old);
        if let Some(i) = sums.bad_weight.or(sums.bad_loss) {
            let w = if sums.bad_weight.is_some() { weights[i] } else { self.loss.value(self.edges[i]) };
            return Err(Error::Numerical(format!(
                "loss `{}` is not finite near edge {} (example {i}: {w})",
                self.loss.name(),
                self.edges[i]
            )));
        }
        self.spare.push(std::mem::replace(&mut self.weights, weights));
        self.state_sums = Some(super::StateSums {
            risk: sums.risk,
            w1: sums.w1,
            abs_total: sums.abs_total,
            edge_scale: sums.edge_scale.max(1.0),
        });
        let mut all_zero = !sums.nonzero;
        let n = self.n_all;
        if self.coll.is_distributed() {
            // The round's last sums and the learner's next normaliser over every rank (one call).
            let mut b = [
                sums.random,
                sums.negative,
                sums.zero,
                sums.risk,
                sums.error,
                f64::from(u8::from(sums.nonzero)),
                sums.abs_total,
            ];
            let mut max = [sums.max_obi];
            self.coll.sum_max(&mut b, &mut max)?;
            diag.insert("max_obi", max[0]);
            record_sums(diag, &b[..5], self.sw_unit, n);
            all_zero = b[5] == 0.0;
            self.dist_total = Some(b[6]);
        } else {
            diag.insert("max_obi", sums.max_obi);
            record_sums(diag, &[sums.random, sums.negative, sums.zero, sums.risk, sums.error], self.sw_unit, n);
        }
        if all_zero {
            // docs/explanation/secboost.md#secboost-algorithm: if all w_(t+1)i = 0, stop.
            return Ok(Step::AddAndStop { alpha, reason: "all weights are zero".into() });
        }
        Ok(Step::Add { alpha })
    }

    /// One chunk of [`SecBoost::update_convex`], its first row `a`: its blocks of [`BLOCK`] rows
    /// in order, each through every step before the next, so that a block's values stay in the
    /// core's cache between the steps (the sums run in row order either way).
    /// `known`: `out.losses` holds `F(ẽ_t)` already.
    fn update_chunk(&self, a: usize, alpha: f64, h: &[f64], z: f64, known: bool, out: Out<'_, 4>) -> ChunkSums {
        let mut s = ChunkSums::default();
        for (j, out) in out.pieces(BLOCK) {
            self.update_block(a + j, alpha, h, z, known, out, &mut s);
            if s.bad_edge.is_some() {
                break;
            }
        }
        s
    }

    /// One block of [`SecBoost::update_chunk`], its first row `a`, its sums added to `s`.
    #[allow(clippy::too_many_arguments)] // update_chunk's arguments and its running sums
    fn update_block(&self, a: usize, alpha: f64, h: &[f64], z: f64, known: bool, out: Out<'_, 4>, s: &mut ChunkSums) {
        let p = &self.params;
        let Out([edges, offsets, weights, losses]) = out;
        let len = edges.len();
        // (No branch in the loops over the rows: the first row at fault is looked for only when
        // there is one.)
        let mut bad = false;
        for (j, e) in edges.iter_mut().enumerate() {
            let i = a + j;
            *e = shifted_edge(self.edges[i], alpha, self.y[i], h[i]);
            bad |= !e.is_finite();
        }
        if bad {
            s.bad_edge = first_bad_row(a, edges);
            return;
        }
        let seed = |j: usize| offset_seed(p.seed, self.round, self.row0 + a + j);
        let prev = &self.edges[a..a + len];
        let sw = &self.sw[a..a + len];
        let loss = &self.loss;
        let logistic = is_logistic(loss);
        with_chunk_tmp(loss, len, |obi, fzv, _| {
            if !known && !logistic {
                loss.eval_many(edges, losses);
            }
            // The first guesses' OBIs; the logistic loss's weights at the first guesses with them
            // (from the same exponential), redone below for the rows whose guess was refused.
            let guess_obis = |v: &[f64], obi: &mut [f64]| match (logistic, known) {
                // F(ẽ_t) known: the weights from their own exponential (the same bits).
                (true, true) => logistic::weights_obis_into(loss, edges, v, None, weights, obi),
                (true, false) => logistic::weights_obis_into(loss, edges, v, Some(&mut *losses), weights, obi),
                (false, _) => obi_convex_into(loss, edges, v, obi),
            };
            let mut searched = Vec::new();
            offsets_convex_into(
                loss,
                edges,
                prev,
                z,
                p.oracle_precision,
                seed,
                offsets,
                obi,
                guess_obis,
                |j, random| {
                    searched.push(j);
                    if random && sw[j] > 0.0 {
                        s.random += sw[j];
                    }
                },
            );
            self.guess_records(a, obi, offsets, s);
            if logistic {
                for j in searched {
                    weights[j] = logistic::weight(edges[j], offsets[j], losses[j]);
                }
                return;
            }
            weights_from_values(loss, edges, offsets, losses, weights, fzv);
        });
        self.block_sums(a, edges, weights, losses, s);
    }

    /// The largest OBI of a block's offsets `obi` over its rows of positive sample weight into
    /// `s`; a row of sample weight 0 gets its offset back (its first row `a`).
    #[inline(always)]
    fn guess_records(&self, a: usize, obi: &[f64], offsets: &mut [f64], s: &mut ChunkSums) {
        s.max_obi = if self.unit_weights {
            max_of(s.max_obi, obi)
        } else {
            let r = a..a + obi.len();
            let mut max_obi = s.max_obi;
            for (((o, &q), &s_w), &old) in offsets.iter_mut().zip(obi).zip(&self.sw[r.clone()]).zip(&self.offsets[r]) {
                if s_w > 0.0 {
                    max_obi = max_obi.max(q);
                } else {
                    // A row of sample weight 0 is left out: it keeps its offset.
                    *o = old;
                }
            }
            max_obi
        };
    }

    /// [`SecBoost::add_sums`] over a block, its first row `a`, and the first rows of a non-finite
    /// weight or loss value into `s`.
    #[inline(always)]
    fn block_sums(&self, a: usize, edges: &[f64], weights: &mut [f64], losses: &mut [f64], s: &mut ChunkSums) {
        let bad = if self.unit_weights {
            self.add_sums::<true>(a, edges, weights, losses, s)
        } else {
            self.add_sums::<false>(a, edges, weights, losses, s)
        };
        s.bad_rows(a, bad, weights, losses);
    }
}

impl SecBoost {
    /// The round's sums over one block of new edges, weights and loss values, its first row `a`,
    /// added to `s` in row order ([`RoundRows`]); the weights and loss values of rows of sample
    /// weight 0 set to 0. Returns whether some weight, and some loss value, is not finite.
    /// `UNIT`: every sample weight is 1 (not read: the same bits).
    #[inline(always)]
    fn add_sums<const UNIT: bool>(
        &self,
        a: usize,
        edges: &[f64],
        weights: &mut [f64],
        losses: &mut [f64],
        s: &mut ChunkSums,
    ) -> (bool, bool) {
        let mut acc = RoundRows::<UNIT>::from(s);
        let len = edges.len();
        let y = &self.y[a..a + len];
        let sws = if UNIT { &[][..] } else { &self.sw[a..a + len] };
        for j in 0..len {
            let (mut w, mut f) = ([weights[j]], [losses[j]]);
            acc.rows::<1>([if UNIT { 1.0 } else { sws[j] }], [y[j]], [edges[j]], &mut w, &mut f);
            (weights[j], losses[j]) = (w[0], f[0]);
        }
        acc.finish(s)
    }
}

/// `v[j..j + N]` as an array.
#[inline(always)]
fn at<const N: usize>(v: &[f64], j: usize) -> [f64; N] {
    let a: &[f64; N] = v[j..j + N].try_into().expect("N values");
    *a
}

/// One block's inputs of [`SecBoost::ahead_block`] (`UNIT`: every sample weight is 1, `sw` not
/// read), and its loops' steps over `N ≤ 4` rows at a time: row `j + l` in lane `l` of [`Sum4`]
/// (`j` a multiple of 4 in the chunk), each statement over the `N` lanes (vector instructions),
/// every sum in row order within its lane.
struct AheadRows<'a, const UNIT: bool> {
    prev: &'a [f64],
    y: &'a [f64],
    h: &'a [f64],
    w: &'a [f64],
    sw: &'a [f64],
    old: &'a [f64],
    alpha: f64,
    step: f64,
    shrunk: bool,
    div: f64,
}

/// The running sums of [`SecBoost::ahead_block`] after the loss's kernels.
struct Back<const UNIT: bool> {
    order2: PassSums,
    guesses: GuessLanes,
    max_obi: f64,
    round: RoundRows<UNIT>,
    qbar: bool,
}

impl<const UNIT: bool> AheadRows<'_, UNIT> {
    #[inline(always)]
    fn sample_weights<const N: usize>(&self, j: usize) -> [f64; N] {
        if UNIT {
            [1.0; N]
        } else {
            at(self.sw, j)
        }
    }

    /// Before the kernels, rows `j..j + N`: η's sum and M (as [`super::solve_alpha::edge_rows`]),
    /// the new edges into `out[0]` and whether one, or an output, is not finite (`bad`), the first
    /// guesses into `out[1]` (as [`super::oracle::first_guesses`]) and, under shrinkage, the trial
    /// edges into `out[2]` (as `shifted`).
    #[inline(always)]
    fn front<const N: usize>(&self, j: usize, eta: &mut EdgeLanes, bad: &mut [bool; 2], out: [&mut [f64]; 3]) {
        let (prev, y, h, w) = (at::<N>(self.prev, j), at::<N>(self.y, j), at::<N>(self.h, j), at::<N>(self.w, j));
        let s = self.sample_weights::<N>(j);
        for l in 0..N {
            eta.row(l, s[l], w[l], y[l], h[l]);
        }
        let e: [f64; N] = std::array::from_fn(|l| shifted_edge(prev[l], self.step, y[l], h[l]));
        for l in 0..N {
            bad[0] |= !e[l].is_finite();
            bad[1] |= !h[l].is_finite();
        }
        let [edges, offsets, trial] = out;
        edges[j..j + N].copy_from_slice(&e);
        offsets[j..j + N].copy_from_slice(&std::array::from_fn::<f64, N, _>(|l| (prev[l] - e[l]) / self.div));
        if self.shrunk {
            trial[j..j + N]
                .copy_from_slice(&std::array::from_fn::<f64, N, _>(|l| shifted_edge(prev[l], self.alpha, y[l], h[l])));
        }
    }

    /// After the kernels, rows `j..j + N` of the new edges, partial weights, OBIs at the trial
    /// edges and the guesses' OBIs (`computed`): the order-2 sums (as [`PassSums::add_row`] in
    /// Order2Rows::add), the check of the guesses, the largest OBI (a row of sample weight 0 gets
    /// its offset back in `out[0]`) and the round's sums (as [`SecBoost::add_sums`], on the
    /// weights and loss values `out[1]`, `out[2]`).
    #[inline(always)]
    fn back<const N: usize>(&self, j: usize, computed: [&[f64]; 4], b: &mut Back<UNIT>, out: [&mut [f64]; 3]) {
        let [e, wt, q, obi] = computed.map(|v| at::<N>(v, j));
        let (prev, y, h, w) = (at::<N>(self.prev, j), at::<N>(self.y, j), at::<N>(self.h, j), at::<N>(self.w, j));
        let s = self.sample_weights::<N>(j);
        let [offsets, weights, losses] = out;
        let v = at::<N>(offsets, j);
        for l in 0..N {
            b.order2.add_row(l, s[l], [w[l], wt[l], y[l], h[l]], self.alpha, b.qbar.then_some(q[l]));
        }
        for l in 0..N {
            b.guesses.row(l, e[l], prev[l], v[l], obi[l]);
        }
        if !UNIT {
            for l in 0..N {
                if s[l] > 0.0 {
                    b.max_obi = b.max_obi.max(obi[l]);
                } else {
                    // A row of sample weight 0 is left out: it keeps its offset.
                    offsets[j + l] = self.old[j + l];
                }
            }
        }
        let (mut wn, mut f) = (at::<N>(weights, j), at::<N>(losses, j));
        b.round.rows(s, y, e, &mut wn, &mut f);
        if !UNIT {
            weights[j..j + N].copy_from_slice(&wn);
            losses[j..j + N].copy_from_slice(&f);
        }
    }
}

/// The round's running sums over a block's rows, in locals (registers), into the chunk's
/// [`ChunkSums`] at the block's end. The sums of reals run in row order; what does not depend on
/// the order (counts, maxima, flags) runs in four lanes. `UNIT`: every sample weight is 1; then
/// the sums of weights are counts, kept as integers (exact, as sums of ones below 2⁵³ are in any
/// order: the same bits, shorter chains).
struct RoundRows<const UNIT: bool> {
    negative: f64,
    zero: f64,
    error: f64,
    risk: f64,
    w1: f64,
    abs_total: f64,
    /// Negative weights, zero weights, wrong predictions (`UNIT`).
    counts: [[u32; 4]; 3],
    nonzero: [bool; 4],
    edge_scale: [f64; 4],
    bad_weight: [bool; 4],
    bad_loss: [bool; 4],
}

impl<const UNIT: bool> RoundRows<UNIT> {
    #[inline(always)]
    fn from(s: &ChunkSums) -> Self {
        let ChunkSums { negative, zero, error, nonzero, risk, w1, abs_total, edge_scale, .. } = *s;
        RoundRows {
            negative,
            zero,
            error,
            risk,
            w1,
            abs_total,
            counts: [[0; 4]; 3],
            nonzero: [nonzero, false, false, false],
            edge_scale: [edge_scale; 4],
            bad_weight: [false; 4],
            bad_loss: [false; 4],
        }
    }

    /// `N ≤ 4` rows (row `l` in lane `l`) of sample weights `sw`, labels `y`, new edges `edge`,
    /// weights `w` and loss values `f` (set to 0 for a row of sample weight 0).
    #[inline(always)]
    fn rows<const N: usize>(&mut self, sw: [f64; N], y: [f64; N], edge: [f64; N], w: &mut [f64; N], f: &mut [f64; N]) {
        if !UNIT {
            // A row of sample weight 0 is left out: weight and loss value 0.
            for l in 0..N {
                let kept = sw[l] != 0.0;
                (w[l], f[l]) = (select(kept, w[l], 0.0), select(kept, f[l], 0.0));
            }
        }
        for l in 0..N {
            self.bad_weight[l] |= !w[l].is_finite();
            self.bad_loss[l] |= !f[l].is_finite();
        }
        if UNIT {
            for l in 0..N {
                self.counts[0][l] += u32::from(w[l] < 0.0);
                self.counts[1][l] += u32::from(w[l] == 0.0);
                self.counts[2][l] += u32::from(is_wrong(y[l], edge[l]));
                self.nonzero[l] |= w[l] != 0.0;
                // (`f64::max` on values ≥ +0, by a comparison: a NaN edge, refused later, leaves
                // the maximum as `f64::max` would.)
                let e = edge[l].abs();
                self.edge_scale[l] = if e > self.edge_scale[l] { e } else { self.edge_scale[l] };
            }
            for l in 0..N {
                self.risk += f[l];
                self.w1 += w[l];
                self.abs_total += w[l].abs();
            }
            return;
        }
        for l in 0..N {
            let pos = sw[l] > 0.0;
            self.nonzero[l] |= (w[l] != 0.0) & (sw[l] != 0.0);
            self.edge_scale[l] = self.edge_scale[l].max(select(pos, edge[l].abs(), 0.0));
        }
        for l in 0..N {
            let (sw, w, f) = (sw[l], w[l], f[l]);
            let pos = sw > 0.0;
            // (Adding +0 leaves every sum as it is: none of them is ever −0.)
            self.negative += select(pos & (w < 0.0), sw, 0.0);
            self.zero += select(pos & (w == 0.0), sw, 0.0);
            self.risk += sw * f;
            self.error += wrong(y[l], edge[l], sw);
            self.w1 += sw * w;
            self.abs_total += w.abs() * sw;
        }
    }

    /// The block's sums into `s`; whether some weight, and some loss value, is not finite.
    #[inline(always)]
    fn finish(self, s: &mut ChunkSums) -> (bool, bool) {
        let [negatives, zeros, errors] = self.counts.map(|c| f64::from(c.iter().sum::<u32>()));
        (s.negative, s.zero, s.error) = if UNIT {
            (self.negative + negatives, self.zero + zeros, self.error + errors)
        } else {
            (self.negative, self.zero, self.error)
        };
        let m = self.edge_scale;
        // (The lanes' maxima by the comparison of `rows` with `UNIT`, else `f64::max`: the
        // serial loop's value either way.)
        s.edge_scale = if UNIT {
            let max = |a: f64, b: f64| if b > a { b } else { a };
            max(max(m[0], m[1]), max(m[2], m[3]))
        } else {
            m[0].max(m[1]).max(m[2].max(m[3]))
        };
        (s.nonzero, s.risk, s.w1, s.abs_total) = (self.nonzero.iter().any(|b| *b), self.risk, self.w1, self.abs_total);
        (self.bad_weight.iter().any(|b| *b), self.bad_loss.iter().any(|b| *b))
    }
}

/// Over a block's first guesses: whether some guess `v` (for the edges `e_t` now and `e_prev`
/// before) is not kept whatever the budget (see [`first_guess_usable`]; or its OBI is NaN), and
/// the largest OBI, −∞ for none (four running maxima: see [`max_of`]).
struct GuessLanes {
    unusable: [bool; 4],
    max: [f64; 4],
}

impl GuessLanes {
    #[inline(always)]
    fn new() -> GuessLanes {
        GuessLanes { unusable: [false; 4], max: [f64::NEG_INFINITY; 4] }
    }

    /// A row's edges, guess and the guess's OBI, in lane `l`.
    #[inline(always)]
    fn row(&mut self, l: usize, e_t: f64, e_prev: f64, v: f64, obi: f64) {
        self.unusable[l] |= !first_guess_usable(e_t, e_prev, v) | obi.is_nan();
        self.max[l] = self.max[l].max(obi);
    }

    #[inline(always)]
    fn finish(self) -> (bool, f64) {
        let m = self.max;
        (self.unusable.iter().any(|b| *b), (m[0].max(m[1])).max(m[2].max(m[3])))
    }
}

/// The row of the first non-finite value of a block whose first row is `a`.
fn first_bad_row(a: usize, v: &[f64]) -> Option<usize> {
    v.iter().position(|x| !x.is_finite()).map(|j| a + j)
}

/// `max(m, max q)`, four running maxima: the maximum of a set does not depend on the order it is
/// taken in (NaNs are skipped by `f64::max` in any order), so this is the serial loop's value.
#[inline(always)]
fn max_of(m: f64, q: &[f64]) -> f64 {
    let mut acc = [m; 4];
    let mut groups = q.chunks_exact(4);
    for g in &mut groups {
        for l in 0..4 {
            acc[l] = acc[l].max(g[l]);
        }
    }
    groups.remainder().iter().fold(acc[0].max(acc[1]).max(acc[2].max(acc[3])), |m, &q| m.max(q))
}

/// The round's records from its sums `[random, negative, zero, risk, error]` (sums of sample
/// weights, in the unit `sw_unit`; `n` examples).
fn record_sums(diag: &mut Diagnostics, b: &[f64], sw_unit: f64, n: f64) {
    diag.insert("random_offsets", b[0] * sw_unit);
    diag.insert("negative_weights", b[1] * sw_unit);
    diag.insert("zero_weights", b[2] * sw_unit);
    diag.insert("risk", b[3] / n);
    diag.insert("train_error", b[4] / n);
}

/// `s` when the score `y·ẽ` predicts the wrong class (a score of 0 predicts −1), else 0.
#[inline]
pub(super) fn wrong(y: f64, edge: f64, s: f64) -> f64 {
    // `s·1` or `s·0` (`+0`, as `s ≥ 0`), not a branch: a quarter of the rows may be wrong, in no
    // order a branch predictor can follow.
    s * f64::from(u8::from(is_wrong(y, edge)))
}

/// Whether the score `y·ẽ` (`H = y·ẽ`) predicts the wrong class (a score of 0 predicts −1).
#[inline]
fn is_wrong(y: f64, edge: f64) -> bool {
    (y * edge > 0.0) != (y > 0.0)
}
