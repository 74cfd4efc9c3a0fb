//! Distributed sums: the one seam between the training code and the workers.
//!
//! Data-parallel, SPMD: each worker (rank) holds some of the rows as bins and runs the same
//! training code ([`crate::Trainer::collective`]). Wherever the single-machine
//! algorithm takes a sum over rows — a histogram, a leaf's sums, a booster's sums for α, a
//! normaliser — each rank sums its own rows and then calls [`Collective::allreduce_sum`], which
//! replaces every rank's buffer by the sum over ranks. Everything after the sum is computed
//! identically on every rank from identical numbers, so every rank holds the same trees and α
//! (XGBoost's `collective::Allreduce`, LightGBM's `Network::Allreduce`).
//!
//! The one key choice: the sum over ranks is taken in rank order, `((b₀ + b₁) + b₂) + …`, by
//! whoever implements the transport, so that the result is bit-identical on every rank and from
//! one run to the next, whatever the arrival order of the messages.
//!
//! On one machine the collective is [`Local`]: the identity, and the training code never calls it
//! (every call site is guarded by `size() > 1`), so single-machine models are bit-identical to
//! the ones trained before the seam existed.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::{Error, Result};

/// A group of `size()` ranks summing buffers together. Implementations: [`Local`] (one rank),
/// [`ThreadCollective`] (ranks as threads of one process, for tests), and the Python transport of
/// `boostlab.dask` (through `boostlab._boostlab.fit_shard`).
pub trait Collective: Send + Sync {
    /// This rank's index, `0..size()`.
    fn rank(&self) -> usize;

    /// The number of ranks (≥ 1).
    fn size(&self) -> usize;

    /// Replaces `buf` by the element-wise sum of every rank's `buf` (all ranks call it with the
    /// same length, in the same sequence of calls), summed in rank order so that every rank gets
    /// the bit-identical result. A lost peer, a timeout or a transport failure is an
    /// [`Error::Distributed`] naming the problem; the fit then stops with that error.
    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<()>;
}

/// One machine: rank 0 of 1; `allreduce_sum` is the identity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

impl Collective for Local {
    fn rank(&self) -> usize {
        0
    }

    fn size(&self) -> usize {
        1
    }

    fn allreduce_sum(&self, _buf: &mut [f64]) -> Result<()> {
        Ok(())
    }
}

/// The collective a booster holds (see [`crate::boost::Booster::set_collective`]): `None` is
/// [`Local`]. [`Shared::sum`] does nothing on one rank, so a booster's single-machine arithmetic
/// is unchanged.
#[derive(Clone, Default)]
pub struct Shared(Option<Arc<dyn Collective>>);

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => write!(f, "Local"),
            Some(c) => write!(f, "Collective(rank {} of {})", c.rank(), c.size()),
        }
    }
}

impl Shared {
    /// Wraps a collective; one of size 1 is kept as [`Local`].
    pub fn new(c: Arc<dyn Collective>) -> Shared {
        if c.size() > 1 {
            Shared(Some(c))
        } else {
            Shared(None)
        }
    }

    /// True when there are several ranks.
    pub fn is_distributed(&self) -> bool {
        self.0.is_some()
    }

    /// The collective itself ([`Local`] on one machine).
    pub fn get(&self) -> &dyn Collective {
        match &self.0 {
            Some(c) => c.as_ref(),
            None => &Local,
        }
    }

    /// Sums `buf` over the ranks (nothing on one rank).
    #[inline]
    pub fn sum(&self, buf: &mut [f64]) -> Result<()> {
        match &self.0 {
            Some(c) => c.allreduce_sum(buf),
            None => Ok(()),
        }
    }

    /// The maximum of `x` over the ranks (nothing on one rank); see [`Shared::sum_max`].
    pub fn max(&self, x: f64) -> Result<f64> {
        let mut m = [x];
        self.sum_max(&mut [], &mut m)?;
        Ok(m[0])
    }

    /// In one call: `sums` summed over the ranks and `maxes` replaced by their maximum over the
    /// ranks (nothing on one rank). Each maximum travels as a one-hot vector over the ranks (the
    /// rank's value in its slot, zeros elsewhere), so its sum is exact: `size()` values per
    /// maximum.
    pub fn sum_max(&self, sums: &mut [f64], maxes: &mut [f64]) -> Result<()> {
        let Some(c) = &self.0 else { return Ok(()) };
        let (size, rank) = (c.size(), c.rank());
        let mut buf = Vec::with_capacity(sums.len() + maxes.len() * size);
        buf.extend_from_slice(sums);
        for &m in maxes.iter() {
            let at = buf.len();
            buf.resize(at + size, 0.0);
            buf[at + rank] = m;
        }
        c.allreduce_sum(&mut buf)?;
        sums.copy_from_slice(&buf[..sums.len()]);
        for (j, m) in maxes.iter_mut().enumerate() {
            let at = sums.len() + j * size;
            *m = buf[at..at + size].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        }
        Ok(())
    }

    /// Every rank's `local` values concatenated in rank order (a copy of `local` on one rank): two
    /// calls, the lengths and then the values, each rank's values in its own slot of a zero
    /// vector, so the sum is exact. For the few end-of-fit quantities that need all the rows
    /// (the label-set threshold): `Σ len` values travel.
    pub fn gather(&self, local: &[f64]) -> Result<Vec<f64>> {
        let Some(c) = &self.0 else { return Ok(local.to_vec()) };
        let (size, rank) = (c.size(), c.rank());
        let mut lens = vec![0.0; size];
        lens[rank] = local.len() as f64;
        c.allreduce_sum(&mut lens)?;
        let offset: usize = lens[..rank].iter().map(|&l| l as usize).sum();
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        let mut all = vec![0.0; total];
        all[offset..offset + local.len()].copy_from_slice(local);
        c.allreduce_sum(&mut all)?;
        Ok(all)
    }

    /// `(n, Σ w)` over the ranks: the rows and the total sample weight (`n` without weights) of
    /// every rank, in one call.
    pub fn totals(&self, n: usize, sample_weight: Option<&[f64]>) -> Result<(usize, f64)> {
        let mut b = [n as f64, crate::data::total_weight(n, sample_weight)];
        self.sum(&mut b)?;
        Ok((b[0] as usize, b[1]))
    }
}

/// `n` ranks as threads of one process (for tests and in-process use): each rank's handle is a
/// [`ThreadRank`]; a call waits until every rank has given its buffer, then every rank gets the
/// sum in rank order. A rank whose handle is dropped while others wait (its fit failed), or a wait
/// longer than the timeout, makes the others' calls fail with [`Error::Distributed`]: no hang.
#[derive(Debug)]
pub struct ThreadCollective {
    state: Mutex<RoundState>,
    cv: Condvar,
    n: usize,
    timeout: Duration,
}

#[derive(Debug)]
struct RoundState {
    /// Number of completed calls.
    generation: u64,
    /// Buffers of the current call, by rank.
    bufs: Vec<Option<Vec<f64>>>,
    /// The result of the last completed call. A rank cannot start the call after it before every
    /// rank has read it (the next call needs every rank's buffer), so one result suffices.
    result: Vec<f64>,
    /// The first rank whose handle was dropped: no later call can complete.
    left: Option<usize>,
    /// Set once a call failed (timeout, lengths differ): every later call fails with it.
    failed: Option<String>,
}

/// One rank of a [`ThreadCollective`].
#[derive(Debug)]
pub struct ThreadRank {
    group: Arc<ThreadCollective>,
    rank: usize,
}

impl ThreadCollective {
    /// The handles of `n ≥ 1` ranks (rank order); a call fails after waiting `timeout` for the
    /// other ranks.
    pub fn ranks(n: usize, timeout: Duration) -> Vec<ThreadRank> {
        let group = Arc::new(ThreadCollective {
            state: Mutex::new(RoundState {
                generation: 0,
                bufs: vec![None; n],
                result: Vec::new(),
                left: None,
                failed: None,
            }),
            cv: Condvar::new(),
            n,
            timeout,
        });
        (0..n).map(|rank| ThreadRank { group: Arc::clone(&group), rank }).collect()
    }
}

impl RoundState {
    /// Why the current call cannot complete, if it cannot.
    fn broken(&self) -> Option<String> {
        if let Some(f) = &self.failed {
            return Some(f.clone());
        }
        self.left.map(|r| format!("rank {r} left (its fit ended)"))
    }
}

fn poisoned() -> Error {
    Error::Distributed("a rank panicked".into())
}

impl Collective for ThreadRank {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.group.n
    }

    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<()> {
        let g = &*self.group;
        let mut st = g.state.lock().map_err(|_| poisoned())?;
        if let Some(why) = st.broken() {
            return Err(Error::Distributed(why));
        }
        let generation = st.generation;
        st.bufs[self.rank] = Some(buf.to_vec());
        if st.bufs.iter().all(Option::is_some) {
            // The last to arrive sums in rank order.
            let bufs: Vec<Vec<f64>> = st.bufs.iter_mut().filter_map(Option::take).collect();
            if let Some(r) = bufs.iter().position(|b| b.len() != buf.len()) {
                let why = format!("rank {r} reduced {} values, rank {} {}", bufs[r].len(), self.rank, buf.len());
                st.failed = Some(why.clone());
                g.cv.notify_all();
                return Err(Error::Distributed(why));
            }
            let mut sum = bufs[0].clone();
            for b in &bufs[1..] {
                for (s, x) in sum.iter_mut().zip(b) {
                    *s += x;
                }
            }
            st.result = sum;
            st.generation += 1;
            g.cv.notify_all();
        } else {
            while st.generation == generation {
                if let Some(why) = st.broken() {
                    return Err(Error::Distributed(why));
                }
                let (s, t) = g.cv.wait_timeout(st, g.timeout).map_err(|_| poisoned())?;
                st = s;
                if t.timed_out() && st.generation == generation {
                    let missing: Vec<usize> = (0..g.n).filter(|&r| st.bufs[r].is_none()).collect();
                    let why = format!("timed out after {:?} waiting for rank(s) {missing:?}", g.timeout);
                    st.failed = Some(why.clone());
                    g.cv.notify_all();
                    return Err(Error::Distributed(why));
                }
            }
        }
        buf.copy_from_slice(&st.result);
        Ok(())
    }
}

impl Drop for ThreadRank {
    fn drop(&mut self) {
        // No later call can complete without this rank: the others' calls fail at once.
        if let Ok(mut st) = self.group.state.lock() {
            st.left.get_or_insert(self.rank);
            self.group.cv.notify_all();
        }
    }
}

/// A collective that forwards to `inner` and fails its `fail_at`-th call (0-based) with
/// [`Error::Distributed`] (tests of fault handling).
#[derive(Debug)]
pub struct FailingCollective<C> {
    /// The collective forwarded to.
    pub inner: C,
    /// The call that fails.
    pub fail_at: usize,
    calls: std::sync::atomic::AtomicUsize,
}

impl<C> FailingCollective<C> {
    /// Wraps `inner`; its call number `fail_at` fails.
    pub fn new(inner: C, fail_at: usize) -> Self {
        FailingCollective { inner, fail_at, calls: std::sync::atomic::AtomicUsize::new(0) }
    }
}

impl<C: Collective> Collective for FailingCollective<C> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    fn size(&self) -> usize {
        self.inner.size()
    }

    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<()> {
        let i = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if i == self.fail_at {
            return Err(Error::Distributed(format!("rank {}: peer lost (simulated at call {i})", self.rank())));
        }
        self.inner.allreduce_sum(buf)
    }
}

/// A collective that forwards to `inner` and counts the calls and the values reduced (to
/// measure the communication of a fit).
#[derive(Debug)]
pub struct CountingCollective<C> {
    /// The collective forwarded to.
    pub inner: C,
    calls: std::sync::atomic::AtomicUsize,
    values: std::sync::atomic::AtomicUsize,
}

impl<C> CountingCollective<C> {
    /// Wraps `inner`.
    pub fn new(inner: C) -> Self {
        CountingCollective {
            inner,
            calls: std::sync::atomic::AtomicUsize::new(0),
            values: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// `(calls, f64 values)` reduced so far.
    pub fn counts(&self) -> (usize, usize) {
        use std::sync::atomic::Ordering::SeqCst;
        (self.calls.load(SeqCst), self.values.load(SeqCst))
    }
}

impl<C: Collective> Collective for CountingCollective<C> {
    fn rank(&self) -> usize {
        self.inner.rank()
    }

    fn size(&self) -> usize {
        self.inner.size()
    }

    fn allreduce_sum(&self, buf: &mut [f64]) -> Result<()> {
        use std::sync::atomic::Ordering::SeqCst;
        self.calls.fetch_add(1, SeqCst);
        self.values.fetch_add(buf.len(), SeqCst);
        self.inner.allreduce_sum(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_collective_sums_in_rank_order_on_every_rank() {
        let ranks = ThreadCollective::ranks(3, Duration::from_secs(10));
        let out: Vec<Vec<f64>> = std::thread::scope(|s| {
            let hs: Vec<_> = ranks
                .iter()
                .map(|r| {
                    s.spawn(move || {
                        let mut all = Vec::new();
                        for call in 0..20 {
                            // Values whose sum depends on the order: 1e16, 1, -1e16.
                            let x = [1e16, 1.0, -1e16][r.rank()] * (call as f64 + 1.0);
                            let mut b = vec![x, r.rank() as f64];
                            r.allreduce_sum(&mut b).unwrap();
                            all.extend(b);
                        }
                        all
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for o in &out[1..] {
            assert_eq!(
                o.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                out[0].iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        // Rank order: (1e16 + 1) − 1e16 = 0 (1 is lost), not 1e16 − 1e16 + 1 = 1.
        assert_eq!(out[0][0], (1e16 + 1.0) - 1e16);
        assert_eq!(out[0][1], 3.0);
    }

    #[test]
    fn a_rank_that_leaves_fails_the_others_without_hanging() {
        let mut ranks = ThreadCollective::ranks(2, Duration::from_secs(30));
        let r1 = ranks.pop().unwrap();
        let r0 = ranks.pop().unwrap();
        let t = std::thread::spawn(move || {
            let mut b = [1.0];
            r0.allreduce_sum(&mut b)
        });
        std::thread::sleep(Duration::from_millis(50));
        drop(r1);
        let e = t.join().unwrap().unwrap_err();
        assert!(e.to_string().contains("rank 1 left"), "{e}");
    }

    #[test]
    fn a_missing_rank_times_out() {
        let ranks = ThreadCollective::ranks(2, Duration::from_millis(100));
        let mut b = [1.0];
        let e = ranks[0].allreduce_sum(&mut b).unwrap_err();
        assert!(e.to_string().contains("timed out") && e.to_string().contains("[1]"), "{e}");
    }
}
