//! Deterministic data parallelism over rows (issue 8).
//!
//! Per-row passes run over fixed chunks of [`ROW_CHUNK`] rows in parallel, and partial results are
//! combined in chunk order. Chunks depend on the row count only, never on the number of threads,
//! so results are bit-identical for any thread count; with at most [`ROW_CHUNK`] rows a pass is
//! exactly the serial loop.

use std::ops::Range;

use rayon::prelude::*;

/// Rows per chunk of every parallel per-row pass.
pub(crate) const ROW_CHUNK: usize = 1 << 15;

/// Applies `f` to the chunk ranges of `0..n` (in parallel when there are several) and returns its
/// results in chunk order.
pub(crate) fn map_chunks<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync + Send) -> Vec<T> {
    let chunks = n.div_ceil(ROW_CHUNK).max(1);
    if chunks == 1 {
        return vec![f(0..n)];
    }
    (0..chunks).into_par_iter().map(|c| f(c * ROW_CHUNK..((c + 1) * ROW_CHUNK).min(n))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_rows_in_order_for_any_thread_count() {
        for n in [0, 1, ROW_CHUNK, ROW_CHUNK + 1, 3 * ROW_CHUNK + 17] {
            let want: Vec<Range<usize>> = if n <= ROW_CHUNK {
                std::iter::once(0..n).collect()
            } else {
                (0..n).step_by(ROW_CHUNK).map(|a| a..(a + ROW_CHUNK).min(n)).collect()
            };
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                assert_eq!(pool.install(|| map_chunks(n, |r| r)), want);
            }
        }
    }
}
