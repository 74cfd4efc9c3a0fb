//! Histograms of per-example statistics: for every (feature, bin) the sum of the fixed-width
//! statistics block of the rows, in `f64`, in row order inside one feature (parallel across
//! features), with byte-bin kernels for one and many outputs.

use rayon::prelude::*;

use super::pool::{U8_ACC, U8_ACC_KEPT, U8_OUT_ACC, U8_OUT_BINS, U8_OUT_KEPT, U8_OUT_ST};
use crate::data::{BinData, BinnedMatrix};
use crate::util::par::ROW_CHUNK;
use crate::util::traffic::{self, Pass};

/// Work below this many (row × feature) cells runs on one thread.
pub(super) const PARALLEL_CELLS: usize = 1 << 15;

/// A signed statistic's histogram slot (0 = `W+`, 1 = `W−`, by the sign bit) and magnitude.
#[inline(always)]
fn slot(s: f64) -> (usize, f64) {
    let bits = s.to_bits();
    ((bits >> 63) as usize, f64::from_bits(bits & !(1 << 63)))
}

/// Adds the statistics of `rows` (or of every row, with `ordered` = all statistics) into the
/// histogram of one feature (`2k` per bin): one signed statistic per row when `k = 1`, `k`
/// statistics expanded to `(W+, W−)` pairs (`2k` per row) otherwise.
///
/// With signed statistics only the side named by the sign is added to: the other side of the
/// pair would receive `+0.0`, which leaves a sum of non-negative terms unchanged, so the histogram
/// is bit-identical to one built from pairs.
#[inline]
fn accumulate<B: Copy + Into<usize>>(col: &[B], rows: Option<&[u32]>, ordered: &[f64], k: usize, h: &mut [f64]) {
    match (rows, k) {
        (None, 1) => {
            for (&b, &s) in col.iter().zip(ordered) {
                let (side, v) = slot(s);
                h[b.into() * 2 + side] += v;
            }
        }
        (Some(rows), 1) => {
            for (&r, &s) in rows.iter().zip(ordered) {
                let (side, v) = slot(s);
                h[col[r as usize].into() * 2 + side] += v;
            }
        }
        // Several outputs: `ordered` holds `(W+, W−)` pairs (see `build_histogram`), added as one
        // contiguous block per bin (vectorised).
        (None, k) => {
            let w = 2 * k;
            for (&b, s) in col.iter().zip(ordered.chunks_exact(w)) {
                let b = b.into() * w;
                for (x, y) in h[b..b + w].iter_mut().zip(s) {
                    *x += y;
                }
            }
        }
        (Some(rows), k) => {
            let w = 2 * k;
            for (&r, s) in rows.iter().zip(ordered.chunks_exact(w)) {
                let b = col[r as usize].into() * w;
                for (x, y) in h[b..b + w].iter_mut().zip(s) {
                    *x += y;
                }
            }
        }
    }
}

/// Rows per block of the histogram kernel: a block's statistics (`ROW_BLOCK × k` f64, 64 KiB for
/// binary boosters) stay in cache while every feature of a group reads them.
pub(super) const ROW_BLOCK: usize = 8192;

/// Builds the histogram (`2k` sums per bin) of `rows` (all rows when `None`); `ordered` holds their
/// signed statistics (`k` per row) in the same order.
///
/// Features are split into groups, one parallel task per group; a task walks the rows in blocks
/// and, for each block, adds it into the histogram of every feature of its group, so the
/// statistics are read from memory once per group instead of once per feature. Within a feature
/// every sum still runs in row order, so the result does not depend on the grouping or on the
/// number of threads.
pub(crate) fn build_histogram(bm: &BinnedMatrix, rows: Option<&[u32]>, ordered: &[f64], k: usize, hist: &mut [f64]) {
    let width = 2 * k;
    let n = bm.n_rows;
    let n_node = rows.map_or(n, <[u32]>::len);
    let parallel = n_node * bm.n_features >= PARALLEL_CELLS;
    let n_groups = if parallel { (2 * rayon::current_num_threads()).clamp(1, bm.n_features.max(1)) } else { 1 };
    let per_group = bm.n_features.div_ceil(n_groups.max(1)).max(1);
    // Split the histogram into per-group slices (each a run of whole features).
    let mut groups: Vec<(usize, &mut [f64])> = Vec::with_capacity(n_groups);
    let mut rest = hist;
    let mut f0 = 0;
    while f0 < bm.n_features {
        let f1 = (f0 + per_group).min(bm.n_features);
        let (a, b) = rest.split_at_mut((bm.offsets[f1] - bm.offsets[f0]) * width);
        groups.push((f0, a));
        rest = b;
        f0 = f1;
    }
    let one = |(f0, h): (usize, &mut [f64])| {
        let f1 = (f0 + per_group).min(bm.n_features);
        let base = bm.offsets[f0];
        if let (BinData::U8(v), 1) = (&bm.data, k) {
            // The common case (byte bins, one output) accumulates into fixed 512-slot arrays, so
            // that a bin index (≤ 255) and a side (≤ 1) need no bounds check; same sums, same order.
            // Up to MULTI features per pass over a block, in passes of equal size.
            // The accumulators are this thread's (no allocation per histogram: a
            // fresh 4 KiB per feature was mapped, page-faulted and zeroed even for a 20-row node).
            let mut local = U8_ACC.take();
            local.clear();
            local.resize(f1 - f0, [0.0f64; 512]);
            let passes = (f1 - f0).div_ceil(MULTI).max(1);
            let per_pass = (f1 - f0).div_ceil(passes);
            for start in (0..n_node).step_by(ROW_BLOCK) {
                let end = (start + ROW_BLOCK).min(n_node);
                let st = &ordered[start..end];
                let mut f = f0;
                for group in local.chunks_mut(per_pass) {
                    let cols: Vec<&[u8]> = (f..f + group.len())
                        .map(|g| {
                            let c = &v[g * n..(g + 1) * n];
                            if rows.is_some() {
                                c
                            } else {
                                &c[start..end]
                            }
                        })
                        .collect();
                    accumulate_u8_group(&cols, rows.map(|r| &r[start..end]), st, group);
                    f += group.len();
                }
            }
            for (f, acc) in (f0..f1).zip(&local) {
                let hf = &mut h[(bm.offsets[f] - base) * width..(bm.offsets[f + 1] - base) * width];
                hf.copy_from_slice(&acc[..hf.len()]);
            }
            if local.capacity() <= U8_ACC_KEPT {
                U8_ACC.set(local);
            }
            return;
        }
        if let BinData::U8(v) = &bm.data {
            // Byte bins and several outputs: one (W+, W−) histogram per output.
            histogram_u8_outputs(v, n, (f0, f1), &bm.offsets, rows, ordered, k, h);
            return;
        }
        h.fill(0.0);
        let mut pairs = Vec::new();
        for start in (0..n_node).step_by(ROW_BLOCK) {
            let end = (start + ROW_BLOCK).min(n_node);
            let mut st = &ordered[start * k..end * k];
            if k > 1 {
                // Several outputs: expand the block's signed statistics to (W+, W−) pairs once, so
                // that every feature adds a contiguous 2k-wide block per row.
                pairs.clear();
                pairs.extend(st.iter().flat_map(|&s| {
                    let (side, v) = slot(s);
                    if side == 0 {
                        [v, 0.0]
                    } else {
                        [0.0, v]
                    }
                }));
                st = &pairs;
            }
            let blk = rows.map(|r| &r[start..end]);
            for f in f0..f1 {
                let hf = &mut h[(bm.offsets[f] - base) * width..(bm.offsets[f + 1] - base) * width];
                match &bm.data {
                    BinData::U8(v) => accumulate_block(&v[f * n..(f + 1) * n], start, blk, st, k, hf),
                    BinData::U16(v) => accumulate_block(&v[f * n..(f + 1) * n], start, blk, st, k, hf),
                }
            }
        }
    };
    // Counted once per call: every row of the node reads its bins of every feature (through the
    // row index for a child), and every feature group streams the node's statistics and rows.
    let bin_width = match &bm.data {
        BinData::U8(_) => 1,
        BinData::U16(_) => 2,
    };
    let cells = n_node * bm.n_features;
    traffic::add(Pass::HistogramBins, cells * bin_width, 0);
    traffic::add(
        Pass::HistogramStatistics,
        groups.len() * (traffic::bytes(ordered) + rows.map_or(0, traffic::bytes)),
        0,
    );
    if rows.is_some() {
        traffic::gathered(Pass::HistogramBins, cells);
    }
    if parallel {
        groups.into_par_iter().for_each(one);
    } else {
        groups.into_iter().for_each(one);
    }
}

/// Rows per block of [`histogram_u8_outputs`]: a block's statistics, one contiguous run per output
/// (`OUTPUT_BLOCK × k` f64: 224 KiB for 7 outputs), and its gathered bins stay in L2.
pub(super) const OUTPUT_BLOCK: usize = 4096;

/// Rows per tile of [`histogram_u8_outputs`]' transposition (`TILE × k` f64 read from L1).
const TILE: usize = 64;

/// Byte bins and `k > 1` outputs: adds the statistics of `rows` (all rows when `None`;
/// `ordered` holds their `k` signed statistics each, in the same order) into the histogram `h` of
/// the features `f0..f1` (`2k` sums per bin: `(W+, W−)` for output 0, then output 1, …).
///
/// As LightGBM keeps one histogram per class, each output gets its own 512-slot `(W+, W−)`
/// histogram per feature, filled two outputs at a time by [`accumulate_u8_two_outputs`] (up to
/// `MULTI / 2` features per pass, the pair's histograms in L1; an odd last output by the
/// one-output kernel [`accumulate_u8_group`]): per block of rows, the bins of the listed rows are
/// gathered once, the statistics are transposed to one contiguous run per output, then every
/// pair of outputs adds its runs. A row adds `k` values per feature, only on the side its signs name — the
/// former kernel added a `2k`-wide block whose other half was `+0.0`, which changes no sum of
/// non-negative terms. Every (feature, output, side) sum runs in row order, so the histogram is
/// bit-identical to it (and to the naive one) whatever the grouping and the thread count.
#[allow(clippy::too_many_arguments)]
fn histogram_u8_outputs(
    v: &[u8],
    n: usize,
    (f0, f1): (usize, usize),
    offsets: &[usize],
    rows: Option<&[u32]>,
    ordered: &[f64],
    k: usize,
    h: &mut [f64],
) {
    let nf = f1 - f0;
    let n_node = rows.map_or(n, <[u32]>::len);
    let cap = OUTPUT_BLOCK.min(n_node).max(1);
    // The accumulators, the transposed statistics and the gathered bins are this
    // thread's, reused across groups, nodes and rounds (fresh, they were 0.4–1.7 MiB a group
    // with 26 outputs: mapped, page-faulted and zeroed at every node). Every accumulator slot
    // the interleave reads is zeroed here (a feature's bins), every `st` and `bins` element read
    // is written first in its block.
    let (mut kept, mut st, mut bins) = (U8_OUT_ACC.take(), U8_OUT_ST.take(), U8_OUT_BINS.take());
    if kept.len() < k * nf {
        kept.resize(k * nf, [0.0f64; 512]);
    }
    // local[j * nf + g]: output j, feature f0 + g.
    let local = &mut kept[..k * nf];
    for (i, acc) in local.iter_mut().enumerate() {
        let f = f0 + i % nf.max(1);
        acc[..2 * (offsets[f + 1] - offsets[f])].fill(0.0);
    }
    let passes = nf.div_ceil(MULTI).max(1);
    let per_pass = nf.div_ceil(passes).max(1);
    let stride = cap + 8;
    st.clear();
    st.resize(stride * k, 0.0);
    bins.clear();
    bins.resize(if rows.is_some() { cap * nf } else { 0 }, 0);
    for start in (0..n_node).step_by(cap) {
        let end = (start + cap).min(n_node);
        let len = end - start;
        if let Some(rows) = rows {
            // The node's rows are scattered: gather their bins once, then every output reads them
            // contiguously.
            for (g, dst) in bins.chunks_exact_mut(cap).enumerate() {
                let col = &v[(f0 + g) * n..(f0 + g + 1) * n];
                for (d, &r) in dst[..len].iter_mut().zip(&rows[start..end]) {
                    *d = col[r as usize];
                }
            }
        }
        // Output-major statistics of the block: st[j * stride + i] = statistic j of the block's
        // row i. In tiles of TILE rows (read from L1), each output's run written contiguously; the
        // runs are `stride` apart, not a multiple of 4 KiB, so that they do not share cache sets.
        let blk = &ordered[start * k..end * k];
        for t in (0..len).step_by(TILE) {
            let tile = &blk[t * k..(t + TILE).min(len) * k];
            for (j, run) in st.chunks_exact_mut(stride).enumerate() {
                for (d, s) in run[t..].iter_mut().zip(tile.chunks_exact(k)) {
                    *d = s[j];
                }
            }
        }
        let col = |f: usize| -> &[u8] {
            match rows {
                Some(_) => &bins[(f - f0) * cap..(f - f0) * cap + len],
                None => &v[f * n + start..f * n + end],
            }
        };
        let mut cols: Vec<&[u8]> = Vec::with_capacity(MULTI);
        // Two outputs per pass over at most MULTI / 2 features (their 2 × 4 histograms, 32 KiB,
        // stay in L1), so that 2 × 4 add chains overlap and each gathered bin is read once for
        // two outputs. For every group size (before, only for groups of ≤ 4 features;
        // wider groups ran one output per pass over up to 8 features).
        let (passes2, paired) = (nf.div_ceil(MULTI / 2).max(1), k / 2 * 2);
        let per2 = nf.div_ceil(passes2).max(1);
        for (p, hs) in local.chunks_exact_mut(2 * nf.max(1)).enumerate() {
            let (h0, h1) = hs.split_at_mut(nf);
            let (j0, j1) = (2 * p * stride, (2 * p + 1) * stride);
            let (s0, s1) = (&st[j0..j0 + len], &st[j1..j1 + len]);
            let mut f = f0;
            for (a, b) in h0.chunks_mut(per2).zip(h1.chunks_mut(per2)) {
                cols.clear();
                cols.extend((f..f + a.len()).map(col));
                accumulate_u8_two_outputs(&cols, [s0, s1], a, b);
                f += a.len();
            }
        }
        for (j, hs) in local.chunks_exact_mut(nf.max(1)).enumerate().skip(paired) {
            let sj = &st[j * stride..j * stride + len];
            let mut f = f0;
            for group in hs.chunks_mut(per_pass) {
                cols.clear();
                cols.extend((f..f + group.len()).map(col));
                accumulate_u8_group(&cols, None, sj, group);
                f += group.len();
            }
        }
    }
    // Interleave into the 2k-wide layout the criteria read.
    let (base, w) = (offsets[f0], 2 * k);
    for f in f0..f1 {
        let hf = &mut h[(offsets[f] - base) * w..(offsets[f + 1] - base) * w];
        for j in 0..k {
            let acc = &local[j * nf + (f - f0)];
            for (cell, pair) in hf.chunks_exact_mut(w).zip(acc.chunks_exact(2)) {
                cell[2 * j] = pair[0];
                cell[2 * j + 1] = pair[1];
            }
        }
    }
    if kept.len() <= U8_OUT_KEPT {
        U8_OUT_ACC.set(kept);
    }
    U8_OUT_ST.set(st);
    U8_OUT_BINS.set(bins);
}

/// Two outputs at once over `N ≤ MULTI / 2` features of a block (consecutive rows of `cols`):
/// adds the statistics `st[0]` into `h0` and `st[1]` into `h1`, each feature's and output's sums in
/// row order, exactly as [`accumulate_u8_multi`] one output at a time.
#[inline]
fn accumulate_u8_two_outputs_n<const N: usize>(
    cols: [&[u8]; N],
    st: [&[f64]; 2],
    h0: &mut [[f64; 512]; N],
    h1: &mut [[f64; 512]; N],
) {
    let len = cols.iter().fold(st[0].len().min(st[1].len()), |m, c| m.min(c.len()));
    let (cols, s0, s1) = (cols.map(|c| &c[..len]), &st[0][..len], &st[1][..len]);
    for i in 0..len {
        let (side0, v0) = slot(s0[i]);
        let (side1, v1) = slot(s1[i]);
        for j in 0..N {
            let b = usize::from(cols[j][i]) * 2;
            h0[j][b + side0] += v0;
            h1[j][b + side1] += v1;
        }
    }
}

/// [`accumulate_u8_two_outputs_n`] over 1 to `MULTI / 2` features: dispatches on the count.
fn accumulate_u8_two_outputs(cols: &[&[u8]], st: [&[f64]; 2], h0: &mut [[f64; 512]], h1: &mut [[f64; 512]]) {
    fn go<const N: usize>(cols: &[&[u8]], st: [&[f64]; 2], h0: &mut [[f64; 512]], h1: &mut [[f64; 512]]) {
        if let (Ok(c), Ok(a), Ok(b)) =
            (<[&[u8]; N]>::try_from(cols), <&mut [[f64; 512]; N]>::try_from(h0), <&mut [[f64; 512]; N]>::try_from(h1))
        {
            accumulate_u8_two_outputs_n(c, st, a, b);
        }
    }
    match cols.len() {
        1 => go::<1>(cols, st, h0, h1),
        2 => go::<2>(cols, st, h0, h1),
        3 => go::<3>(cols, st, h0, h1),
        _ => go::<4>(cols, st, h0, h1),
    }
}

/// Byte bins and one output: adds the statistics `st` of the block's rows (consecutive rows of
/// the columns when `rows` is `None`, else the listed rows) into fixed-size histograms of `N`
/// features at once, so that each statistic is read and decoded once and the features' add chains
/// overlap. A bin (≤ 255) and a side (≤ 1) index a 512-slot array without bounds checks. Each
/// feature's sums run in row order, exactly as one feature at a time.
#[inline]
fn accumulate_u8_multi<const N: usize>(cols: [&[u8]; N], rows: Option<&[u32]>, st: &[f64], hs: &mut [[f64; 512]; N]) {
    match rows {
        None => {
            let len = cols.iter().fold(st.len(), |m, c| m.min(c.len()));
            let (cols, st) = (cols.map(|c| &c[..len]), &st[..len]);
            for i in 0..len {
                let (side, v) = slot(st[i]);
                for j in 0..N {
                    hs[j][usize::from(cols[j][i]) * 2 + side] += v;
                }
            }
        }
        Some(rows) => {
            for (&r, &s) in rows.iter().zip(st) {
                let (side, v) = slot(s);
                let r = r as usize;
                for j in 0..N {
                    hs[j][usize::from(cols[j][r]) * 2 + side] += v;
                }
            }
        }
    }
}

/// Features per pass of [`accumulate_u8_multi`] (their histograms, 4 KiB each, stay in L1).
const MULTI: usize = 8;

/// [`accumulate_u8_multi`] over any number of features (≤ [`MULTI`]): dispatches on the count.
fn accumulate_u8_group(cols: &[&[u8]], rows: Option<&[u32]>, st: &[f64], hs: &mut [[f64; 512]]) {
    fn go<const N: usize>(cols: &[&[u8]], rows: Option<&[u32]>, st: &[f64], hs: &mut [[f64; 512]]) {
        if let (Ok(c), Ok(h)) = (<[&[u8]; N]>::try_from(cols), <&mut [[f64; 512]; N]>::try_from(hs)) {
            accumulate_u8_multi(c, rows, st, h);
        }
    }
    match cols.len() {
        1 => go::<1>(cols, rows, st, hs),
        2 => go::<2>(cols, rows, st, hs),
        3 => go::<3>(cols, rows, st, hs),
        4 => go::<4>(cols, rows, st, hs),
        5 => go::<5>(cols, rows, st, hs),
        6 => go::<6>(cols, rows, st, hs),
        7 => go::<7>(cols, rows, st, hs),
        _ => go::<MULTI>(cols, rows, st, hs),
    }
}

/// Adds one block of rows into a feature's histogram: the block's consecutive rows from `start` of the
/// column when `rows` is `None`, else the listed rows.
#[inline]
fn accumulate_block<B: Copy + Into<usize>>(
    col: &[B],
    start: usize,
    rows: Option<&[u32]>,
    st: &[f64],
    k: usize,
    h: &mut [f64],
) {
    let per_row = if k == 1 { 1 } else { 2 * k };
    match rows {
        None => accumulate(&col[start..start + st.len() / per_row], None, st, k, h),
        Some(r) => accumulate(col, Some(r), st, k, h),
    }
}

/// Gathers the signed statistics of `rows` (`k` each) into `ordered`, in row order; parallel over
/// fixed chunks (pure data movement).
pub(super) fn gather_statistics(stats: &[f64], k: usize, rows: &[u32], ordered: &mut Vec<f64>) {
    ordered.clear();
    ordered.resize(rows.len() * k, 0.0);
    // The row index and the gathered statistics read, the ordered statistics written.
    traffic::add(
        Pass::GatherStatistics,
        traffic::bytes(rows) + traffic::bytes(ordered.as_slice()),
        traffic::bytes(ordered.as_slice()),
    );
    traffic::gathered(Pass::GatherStatistics, rows.len());
    let fill = |(dst, src): (&mut [f64], &[u32])| {
        if k == 1 {
            for (d, &r) in dst.iter_mut().zip(src) {
                *d = stats[r as usize];
            }
        } else {
            for (d, &r) in dst.chunks_exact_mut(k).zip(src) {
                d.copy_from_slice(&stats[r as usize * k..(r as usize + 1) * k]);
            }
        }
    };
    if rows.len() < 2 * ROW_CHUNK {
        fill((ordered, rows));
    } else {
        ordered.par_chunks_mut(ROW_CHUNK * k).zip(rows.par_chunks(ROW_CHUNK)).for_each(fill);
    }
}
