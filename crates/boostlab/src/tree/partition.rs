//! Partitions of the row index: stable partitions of a leaf's rows by a split, and the leaf of
//! every training row once a tree is grown.

use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::data::{BinData, BinnedMatrix};
use crate::util::par::ROW_CHUNK;
use crate::util::traffic::{self, Pass};

/// Stable partition of `rows` by `left_of_bin[col[row]]`; returns the number going left.
pub(super) fn stable_partition<B: Copy + Into<usize>>(
    col: &[B],
    left_of_bin: &[bool],
    rows: &mut [u32],
    scratch: &mut Vec<u32>,
) -> usize {
    // Branch-free: every row is written to both sides and only the matching cursor advances
    // (split directions are data-dependent and mispredict badly as branches).
    scratch.clear();
    scratch.resize(rows.len(), 0);
    let (mut w, mut s) = (0usize, 0usize);
    for k in 0..rows.len() {
        let r = rows[k];
        let left = usize::from(left_of_bin[col[r as usize].into()]);
        rows[w] = r;
        scratch[s] = r;
        w += left;
        s += 1 - left;
    }
    rows[w..].copy_from_slice(&scratch[..s]);
    w
}

/// [`stable_partition`] over fixed chunks of rows in parallel: each chunk partitions itself, then
/// the chunks' left parts (in chunk order) and right parts are concatenated. The result is the
/// same stable partition, whatever the number of threads.
pub(super) fn par_stable_partition<B: Copy + Into<usize> + Sync>(
    col: &[B],
    left_of_bin: &[bool],
    rows: &mut [u32],
    scratch: &mut Vec<u32>,
) -> usize {
    // Every chunk reads its rows and their bins of the split feature (gathered), writes each row
    // twice (both sides) and copies its right part back.
    let m = rows.len();
    let (idx, bins) = (traffic::bytes(rows), m * std::mem::size_of::<B>());
    traffic::gathered(Pass::Partition, m);
    if m < 2 * ROW_CHUNK {
        let n_left = stable_partition(col, left_of_bin, rows, scratch);
        let right = 4 * (m - n_left);
        traffic::add(Pass::Partition, idx + bins + right, 2 * idx + right);
        return n_left;
    }
    let lefts: Vec<usize> = rows
        .par_chunks_mut(ROW_CHUNK)
        .map_init(Vec::new, |tmp, chunk| stable_partition(col, left_of_bin, chunk, tmp))
        .collect();
    let n_left: usize = lefts.iter().sum();
    // The chunks' passes, then the concatenation into the scratch and the copy back.
    let right = 4 * (m - n_left);
    traffic::add(Pass::Partition, idx + bins + right + 2 * idx, 2 * idx + right + 2 * idx);
    scratch.clear();
    scratch.resize(rows.len(), 0);
    // Disjoint destinations: chunk c's left part after the left parts of chunks < c, its right
    // part after all left parts and the right parts of chunks < c.
    let (mut lo, mut hi) = scratch.split_at_mut(n_left);
    let mut dest = Vec::with_capacity(lefts.len());
    for (c, &l) in lefts.iter().enumerate() {
        let len = ROW_CHUNK.min(rows.len() - c * ROW_CHUNK);
        let (a, rest_lo) = lo.split_at_mut(l);
        let (b, rest_hi) = hi.split_at_mut(len - l);
        dest.push((a, b));
        lo = rest_lo;
        hi = rest_hi;
    }
    rows.par_chunks(ROW_CHUNK).zip(dest).zip(lefts.par_iter()).for_each(|((chunk, (a, b)), &l)| {
        a.copy_from_slice(&chunk[..l]);
        b.copy_from_slice(&chunk[l..]);
    });
    rows.par_chunks_mut(ROW_CHUNK).zip(scratch.par_chunks(ROW_CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
    n_left
}

/// The split that was not partitioned (the last one): rows `start..end` of the index go to leaf
/// `left` when `left_of_bin[bin]` of `feature`, else to leaf `right`.
pub(super) struct LastSplit {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) feature: usize,
    pub(super) left_of_bin: Vec<bool>,
    pub(super) left: u32,
    pub(super) right: u32,
}

/// The leaf of every row, from the leaves' ranges of the row index (`(start, end, leaf)`) and the
/// unpartitioned last split. Parallel over fixed pieces of the ranges; each row is written exactly
/// once, so relaxed atomic stores give the same result whatever the number of threads.
/// `out`: a buffer to fill (its contents are never read; reused across rounds).
pub(super) fn leaves_of_rows(
    bm: &BinnedMatrix,
    index: &[u32],
    ranges: &[(usize, usize, u32)],
    last: Option<&LastSplit>,
    out: Vec<u32>,
) -> Vec<u32> {
    let n = bm.n_rows;
    if index.is_empty() {
        return leaves_of_rows_in_order(bm, ranges, last, out);
    }
    // The ranges' rows of the index read, every row's leaf written (scattered), and the last
    // split's rows' bins gathered.
    let ranged: usize = ranges.iter().map(|r| r.1 - r.0).sum::<usize>() + last.map_or(0, |l| l.end - l.start);
    let last_rows = last.map_or(0, |l| l.end - l.start);
    let bin_width = match &bm.data {
        BinData::U8(_) => 1,
        BinData::U16(_) => 2,
    };
    traffic::add(Pass::LeafOfRow, 4 * ranged + bin_width * last_rows, 4 * n);
    traffic::gathered(Pass::LeafOfRow, last_rows);
    // Filled in parallel (it was a serial pass over the rows every round). The buffer
    // becomes atomics in place (same size and alignment: no copy); every row is written below.
    let mut out: Vec<AtomicU32> = out.into_iter().map(AtomicU32::new).collect();
    out.resize_with(n, || AtomicU32::new(0));
    let mut pieces: Vec<(usize, usize, Option<u32>)> = Vec::new();
    let mut cut = |start: usize, end: usize, leaf: Option<u32>| {
        for a in (start..end).step_by(ROW_CHUNK) {
            pieces.push((a, (a + ROW_CHUNK).min(end), leaf));
        }
    };
    for &(start, end, leaf) in ranges {
        cut(start, end, Some(leaf));
    }
    if let Some(l) = last {
        cut(l.start, l.end, None);
    }
    let write = |&(start, end, leaf): &(usize, usize, Option<u32>)| match (leaf, last) {
        (Some(leaf), _) => index[start..end].iter().for_each(|&r| out[r as usize].store(leaf, Ordering::Relaxed)),
        (None, Some(l)) => {
            let side = |b: usize| if l.left_of_bin[b] { l.left } else { l.right };
            let f = l.feature;
            for &r in &index[start..end] {
                let leaf = match &bm.data {
                    BinData::U8(v) => side(usize::from(v[f * n + r as usize])),
                    BinData::U16(v) => side(usize::from(v[f * n + r as usize])),
                };
                out[r as usize].store(leaf, Ordering::Relaxed);
            }
        }
        (None, None) => {}
    };
    if n < 2 * ROW_CHUNK {
        pieces.iter().for_each(write);
    } else {
        pieces.par_iter().for_each(write);
    }
    out.into_iter().map(AtomicU32::into_inner).collect()
}

/// [`leaves_of_rows`] when the row index was never partitioned (stumps, and trees of one
/// leaf): the index is the identity, so a leaf's range and the last split's range are runs of rows,
/// written straight into the result over fixed chunks in parallel (no index, no atomics). Every row
/// gets the leaf [`leaves_of_rows`] gives it.
fn leaves_of_rows_in_order(
    bm: &BinnedMatrix,
    ranges: &[(usize, usize, u32)],
    last: Option<&LastSplit>,
    mut out: Vec<u32>,
) -> Vec<u32> {
    let n = bm.n_rows;
    out.clear();
    out.resize(n, 0);
    // Every row's leaf written; the last split's rows read their bins in order.
    let bin_width = match &bm.data {
        BinData::U8(_) => 1,
        BinData::U16(_) => 2,
    };
    traffic::add(Pass::LeafOfRow, bin_width * last.map_or(0, |l| l.end - l.start), 4 * n);
    let fill = |(c, dst): (usize, &mut [u32])| {
        let a = c * ROW_CHUNK;
        let b = a + dst.len();
        for &(start, end, leaf) in ranges {
            let (s, e) = (start.max(a), end.min(b));
            if s < e {
                dst[s - a..e - a].fill(leaf);
            }
        }
        if let Some(l) = last {
            let (s, e) = (l.start.max(a), l.end.min(b));
            if s < e {
                let (f, dst) = (l.feature, &mut dst[s - a..e - a]);
                let side = |b: usize| if l.left_of_bin[b] { l.left } else { l.right };
                match &bm.data {
                    BinData::U8(v) => {
                        for (o, &bin) in dst.iter_mut().zip(&v[f * n + s..f * n + e]) {
                            *o = side(usize::from(bin));
                        }
                    }
                    BinData::U16(v) => {
                        for (o, &bin) in dst.iter_mut().zip(&v[f * n + s..f * n + e]) {
                            *o = side(usize::from(bin));
                        }
                    }
                }
            }
        }
    };
    if n < 2 * ROW_CHUNK {
        fill((0, &mut out));
    } else {
        out.par_chunks_mut(ROW_CHUNK).enumerate().for_each(fill);
    }
    out
}
