//! Deterministic data parallelism over rows.
//!
//! Per-row passes run over fixed chunks of [`ROW_CHUNK`] rows in parallel, and partial results are
//! combined in chunk order. Chunks depend on the row count only, never on the number of threads,
//! so results are bit-identical for any thread count; with at most [`ROW_CHUNK`] rows a pass is
//! exactly the serial loop.

use std::ops::Range;

use rayon::prelude::*;

/// Rows per chunk of every parallel per-row pass.
pub(crate) const ROW_CHUNK: usize = 1 << 15;

/// Applies `f` to the [`ROW_CHUNK`]-row chunk ranges of `0..n` (in parallel when there are
/// several) and returns its results in chunk order.
pub(crate) fn map_chunks<T: Send>(n: usize, f: impl Fn(Range<usize>) -> T + Sync + Send) -> Vec<T> {
    map_chunks_of(n, ROW_CHUNK, f)
}

/// [`map_chunks`] with chunks of `chunk` rows (a booster whose sums were validated at another
/// fixed chunk size keeps it).
pub(crate) fn map_chunks_of<T: Send>(n: usize, chunk: usize, f: impl Fn(Range<usize>) -> T + Sync + Send) -> Vec<T> {
    let chunks = n.div_ceil(chunk).max(1);
    if chunks == 1 {
        return vec![f(0..n)];
    }
    (0..chunks).into_par_iter().map(|c| f(c * chunk..((c + 1) * chunk).min(n))).collect()
}

/// Maps `items` in parallel with the fallible `f` and returns the results in order, or the error
/// of the *first failing item in order*: the same error whatever the number of threads and
/// whichever thread finished first (rayon's own `collect::<Result<_>>()` returns the error it
/// met first in time). Items after a known failure are skipped, so a bad file still fails fast.
pub(crate) fn try_map_in_order<I, T, U, E, F>(items: I, f: F) -> Result<Vec<U>, E>
where
    I: IndexedParallelIterator<Item = T>,
    F: Fn(T) -> Result<U, E> + Sync + Send,
    U: Send,
    E: Send,
{
    use std::sync::atomic::{AtomicUsize, Ordering};
    let first_failed = AtomicUsize::new(usize::MAX);
    let out: Vec<Option<Result<U, E>>> = items
        .enumerate()
        .map(|(i, x)| {
            if first_failed.load(Ordering::Relaxed) < i {
                return None;
            }
            let r = f(x);
            if r.is_err() {
                first_failed.fetch_min(i, Ordering::Relaxed);
            }
            Some(r)
        })
        .collect();
    // A skipped item (None) always follows a failed one, whose error is returned first.
    out.into_iter().flatten().collect()
}

/// A small memo of `f(x)` keyed by the bits of `x` (direct-mapped, `N` entries, a power of two:
/// 256 by default).
///
/// Per-row factors such as `exp(−α y h)` take only a few distinct values in a round (two per leaf
/// and output), so most rows find theirs here instead of calling `exp`; a value is the function's
/// own result, so the memo never changes a bit of the output.
pub(crate) struct MemoF64<F, const N: usize = 256> {
    f: F,
    keys: [u64; N],
    values: [f64; N],
}

impl<F: Fn(f64) -> f64> MemoF64<F> {
    /// An empty memo of `f` with 256 entries.
    pub(crate) fn new(f: F) -> Self {
        Self::with_slots(f)
    }
}

impl<F: Fn(f64) -> f64, const N: usize> MemoF64<F, N> {
    /// An empty memo of `f` with `N` entries (multi-class rounds have 2 × leaves × k
    /// distinct factors).
    pub(crate) fn with_slots(f: F) -> Self {
        const { assert!(N.is_power_of_two() && N >= 2) };
        // Every slot starts as a true entry: the key u64::MAX (a NaN) with its own value.
        let v = f(f64::from_bits(u64::MAX));
        MemoF64 { f, keys: [u64::MAX; N], values: [v; N] }
    }

    /// `f(x)`, from the memo when `x` was seen.
    #[inline]
    pub(crate) fn get(&mut self, x: f64) -> f64 {
        let bits = x.to_bits();
        let slot = (bits.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - N.trailing_zeros())) as usize;
        if self.keys[slot] != bits {
            self.keys[slot] = bits;
            self.values[slot] = (self.f)(x);
        }
        self.values[slot]
    }
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

    #[test]
    fn memo_returns_the_function_value_bit_for_bit() {
        let f = |u: f64| (-0.37 * u).exp();
        let mut m = MemoF64::new(f);
        let mut wide = MemoF64::<_, 1024>::with_slots(f);
        // Many distinct keys (collisions overwrite slots), repeated keys, signed zeros, NaN.
        let xs: Vec<f64> = (0..2000).map(|i| ((i * 7919) % 613) as f64 * 0.01 - 3.0).collect();
        for &x in xs.iter().chain(&xs).chain(&[0.0, -0.0, f64::NAN, f64::from_bits(u64::MAX), f64::INFINITY, -1e300]) {
            assert_eq!(m.get(x).to_bits(), f(x).to_bits(), "x = {x}");
            assert_eq!(MemoF64::new(f).get(x).to_bits(), f(x).to_bits(), "fresh memo, x = {x}");
            assert_eq!(wide.get(x).to_bits(), f(x).to_bits(), "1024 slots, x = {x}");
        }
    }

    #[test]
    fn try_map_in_order_returns_the_first_error_in_order_for_any_thread_count() {
        // Items 5 and 40 fail; the later one finishes first (the earlier one sleeps), yet the
        // error is always item 5's.
        for threads in [1, 2, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for _ in 0..20 {
                let r: Result<Vec<usize>, String> = pool.install(|| {
                    try_map_in_order((0..64usize).into_par_iter(), |i| {
                        if i == 5 {
                            std::thread::sleep(std::time::Duration::from_millis(3));
                            return Err(format!("item {i}"));
                        }
                        if i == 40 {
                            return Err(format!("item {i}"));
                        }
                        Ok(i * 2)
                    })
                });
                assert_eq!(r, Err("item 5".to_string()), "{threads} threads");
            }
            let ok: Result<Vec<usize>, String> = pool.install(|| try_map_in_order((0..100usize).into_par_iter(), Ok));
            assert_eq!(ok, Ok((0..100).collect()));
        }
    }
}
