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

/// Runs `f` on this thread while the pool's other threads wait for work *actively*: each polls
/// the pool (running any job it finds, [`rayon::yield_now`]) until `f` returns, instead of going
/// to sleep once idle.
///
/// The tree learner forks and joins a few times per node (histogram feature groups, the
/// children's split searches, their features). On small data each of those steps lasts tens of
/// microseconds, about what it takes to wake a sleeping thread, so a pool that sleeps between
/// steps ran a 10,000-row fit no faster on two threads than on one. A polling thread takes each
/// step's jobs at once. After [`SPIN_POLLS`] empty polls in a row it also yields its core to the
/// operating system between polls, so that other processes' threads still run when the host is
/// oversubscribed.
///
/// Which thread runs a job never changes a result (every parallel step of the library combines
/// its parts in a fixed order). Without a pool of several threads around the call (`f` not on a
/// rayon worker, or one thread) this is `f()`. Use it around one fit that has the pool to itself:
/// a polling thread holds its core until `f` returns, which would slow down other work sharing
/// the pool (fits run side by side in one pool leave it off).
pub(crate) fn active_wait<R>(f: impl FnOnce() -> R) -> R {
    use std::sync::atomic::{AtomicBool, Ordering};
    let Some(owner) = rayon::current_thread_index() else { return f() };
    if rayon::current_num_threads() < 2 {
        return f();
    }
    /// Sets the stop flag when `f` returns or unwinds, so the pollers always end.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let stop = AtomicBool::new(false);
    rayon::in_place_scope(|s| {
        // One poller per other thread; the owner's copy (run when the owner next looks for
        // work, at the latest when the scope ends) returns at once.
        s.spawn_broadcast(|_, ctx| {
            if ctx.index() == owner {
                return;
            }
            let mut idle = 0u32;
            while !stop.load(Ordering::Acquire) {
                if let Some(rayon::Yield::Executed) = rayon::yield_now() {
                    idle = 0;
                } else if idle < SPIN_POLLS {
                    idle += 1;
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        });
        let _stop = StopOnDrop(&stop);
        f()
    })
}

/// Empty polls in a row after which an [`active_wait`] poller yields its core between polls.
const SPIN_POLLS: u32 = 256;

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

    /// Runs `f` on another thread and fails (instead of hanging the suite) when it has not
    /// returned within a minute.
    fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(f()).unwrap());
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("active_wait did not return")
    }

    #[test]
    fn active_wait_returns_the_value_of_f_run_on_the_calling_thread() {
        for threads in [1, 2, 4] {
            let (value, same_thread, sum) = within_a_minute(move || {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    let caller = rayon::current_thread_index();
                    active_wait(|| {
                        // Parallel work inside: the pollers take some of it.
                        let sum: u64 = (0..100_000u64).into_par_iter().map(|i| i % 7).sum();
                        (42, rayon::current_thread_index() == caller, sum)
                    })
                })
            });
            assert_eq!((value, same_thread), (42, true), "{threads} threads");
            assert_eq!(sum, (0..100_000u64).map(|i| i % 7).sum::<u64>());
        }
        // Outside a pool it is the call itself.
        assert_eq!(active_wait(|| 7), 7);
    }

    #[test]
    fn active_wait_ends_its_pollers_when_f_panics() {
        let caught = within_a_minute(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
            let r = pool.install(|| std::panic::catch_unwind(|| active_wait(|| -> u32 { panic!("inside f") })));
            // The pool is still usable: the pollers ended.
            let after = pool.install(|| active_wait(|| (0..1000u32).into_par_iter().sum::<u32>()));
            (r.is_err(), after)
        });
        assert_eq!(caught, (true, 499_500));
    }

    #[test]
    fn active_waits_side_by_side_in_one_pool_all_finish() {
        // Several owners at once (as if fits ran side by side): a poller may be taken by another
        // owner's thread, which then polls until that owner ends; every call still returns.
        let sums = within_a_minute(|| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            pool.install(|| {
                (0..8u64)
                    .into_par_iter()
                    .map(|k| active_wait(|| (0..20_000u64).into_par_iter().map(|i| i * k % 11).sum::<u64>()))
                    .collect::<Vec<u64>>()
            })
        });
        let want: Vec<u64> = (0..8u64).map(|k| (0..20_000u64).map(|i| i * k % 11).sum()).collect();
        assert_eq!(sums, want);
    }
}
