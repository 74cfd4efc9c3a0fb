//! Per-thread buffers of the tree learner, reused across features, nodes, trees and rounds so
//! that the scan and the histogram kernels allocate nothing in their inner calls.

thread_local! {
    /// The split scan's per-feature arrays, reused across features, nodes and rounds by each
    /// thread (no allocations in the scan's inner calls).
    pub(super) static SCAN_BINS: std::cell::Cell<Vec<usize>> = const { std::cell::Cell::new(Vec::new()) };
    pub(super) static SCAN_ACC: std::cell::Cell<Vec<(f64, f64)>> = const { std::cell::Cell::new(Vec::new()) };
    pub(super) static SCAN_GAINS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    /// The nodes' histograms of this thread's finished trees, reused by its
    /// next trees ([`pooled_hist_for_overwrite`], [`recycle_hist`]).
    pub(super) static HIST_POOL: std::cell::Cell<Vec<Vec<f64>>> = const { std::cell::Cell::new(Vec::new()) };
    /// The byte-bin kernel's per-feature 512-slot accumulators, reused by
    /// each thread across histograms (see [`build_histogram`]).
    pub(super) static U8_ACC: std::cell::Cell<Vec<[f64; 512]>> = const { std::cell::Cell::new(Vec::new()) };
    /// The k-output scan's running sums, children's sums and pair costs.
    pub(super) static SCAN_OUTPUTS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    /// [`histogram_u8_outputs`]' per-(output, feature) accumulators, its
    /// output-major block of statistics and its gathered bins, reused by each thread.
    pub(super) static U8_OUT_ACC: std::cell::Cell<Vec<[f64; 512]>> = const { std::cell::Cell::new(Vec::new()) };
    pub(super) static U8_OUT_ST: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    pub(super) static U8_OUT_BINS: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// The tempered scan's upper bounds of the gains, beside `SCAN_GAINS`' lower ones.
    pub(super) static SCAN_HI: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    /// The tempered scan's curvature bounds of the gains, and the left sums and indices of the
    /// candidates it refines.
    pub(super) static SCAN_TOPS: std::cell::Cell<Vec<f64>> = const { std::cell::Cell::new(Vec::new()) };
    pub(super) static SCAN_LEFT: std::cell::Cell<Vec<(f64, f64)>> = const { std::cell::Cell::new(Vec::new()) };
    pub(super) static SCAN_IDX: std::cell::Cell<Vec<usize>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Bytes of histogram buffers a thread keeps between trees: every histogram of a
/// tree of small or mid-size data, a few of very wide data.
pub(super) const HIST_POOL_BYTES: usize = 16 << 20;

/// Accumulators of [`U8_ACC`] a thread keeps between histograms (4 MiB: 1024 features).
pub(super) const U8_ACC_KEPT: usize = 1024;

/// Accumulators of [`U8_OUT_ACC`] a thread keeps between histograms (8 MiB: 26 outputs × 78
/// features of a group).
pub(super) const U8_OUT_KEPT: usize = 2048;

/// A histogram buffer of `len` values for [`build_histogram`], which writes every one of them: a
/// buffer of this thread's pool when it has one. A fresh `vec![0.0; len]`
/// of a node's histogram (features × bins × 2 values: 176 KiB on sonar) was a new mapping of the
/// allocator, page-faulted in, zeroed and unmapped again at every node of every tree — on a
/// 187-row tree, more CPU than the rows' own work. The pooled buffer is not zeroed
/// either (with 26 outputs a node's histogram is 1.7 MiB, zeroed on the growing thread alone and
/// then overwritten); it keeps old values until `build_histogram` writes them, and the growth of
/// a short one is zeroed.
pub(super) fn pooled_hist_for_overwrite(len: usize) -> Vec<f64> {
    let mut pool = HIST_POOL.take();
    let buf = pool.pop();
    HIST_POOL.set(pool);
    match buf {
        Some(mut v) => {
            v.truncate(len);
            v.resize(len, 0.0);
            v
        }
        None => vec![0.0; len],
    }
}

/// Gives a histogram buffer back to this thread's pool (dropped when the pool holds
/// [`HIST_POOL_BYTES`]).
pub(super) fn recycle_hist(v: Vec<f64>) {
    if v.capacity() == 0 {
        return;
    }
    let mut pool = HIST_POOL.take();
    let held: usize = pool.iter().map(Vec::capacity).sum();
    if (held + v.capacity()) * std::mem::size_of::<f64>() <= HIST_POOL_BYTES {
        pool.push(v);
    }
    HIST_POOL.set(pool);
}
