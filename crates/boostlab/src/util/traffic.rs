//! Memory-traffic counters (cargo feature `traffic`, off by default): the bytes of per-row state
//! each pass of a boosting round reads and writes, counted from the code's own data structures.
//!
//! Every pass over per-row state calls [`add`] once per call (never per row) with the bytes it
//! touches: rows × element width of each per-row array it reads or writes, from the slices'
//! lengths and element sizes. Small per-node or per-leaf tables (histograms, leaf values, split
//! directions) and thread-local scratch that stays in cache are not counted. A pass that reads
//! per-row data through a row index (a gather `col[rows[i]]` from a full-length array) counts the
//! logical bytes like any other read, and also the number of gathered accesses in
//! [`PassBytes::gathered_reads`]: each may pull a whole 64-byte cache line from memory, so the
//! bytes a gather really moves lie between its logical bytes and 64 × its accesses.
//!
//! These are counts, not measurements: nothing here reads a hardware counter. Without the
//! feature [`add`] and [`round`] compile to nothing and [`take`] returns zeros.

#[cfg(feature = "traffic")]
use std::sync::atomic::{AtomicU64, Ordering};

/// The passes of a boosting round over per-row state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Pass {
    /// The histogram kernels' reads of the bins (root: every row; a child: its rows, gathered).
    HistogramBins,
    /// The histogram kernels' reads of the statistics and of the row index (once per feature
    /// group: every parallel group streams the node's statistics).
    HistogramStatistics,
    /// The gather of a child's statistics into row order (`ordered[i] = stats[rows[i]]`).
    GatherStatistics,
    /// The stable partition of a leaf's rows by a split (the row index, the split feature's bins)
    /// and the row index's initialisation.
    Partition,
    /// The grower's finiteness check of the statistics.
    StatisticsCheck,
    /// The leaf of every training row once the tree is grown.
    LeafOfRow,
    /// The leaves' covers (the rows per leaf).
    Covers,
    /// The tree's outputs on the training rows (`h[i] = value[leaf[i]]`), when a booster needs them
    /// as an array.
    TreeOutputs,
    /// The booster's α / edge sums over the rows.
    BoosterStep,
    /// The booster's weight and score update.
    BoosterUpdate,
    /// The next round's statistics (fused with the normalisation where the booster fuses them).
    BoosterStatistics,
    /// A separate normalisation pass over the weights.
    Normalisation,
    /// The validation set's scores (early stopping, validation metric).
    Validation,
}

impl Pass {
    /// Every pass, in order.
    pub const ALL: [Pass; 13] = [
        Pass::HistogramBins,
        Pass::HistogramStatistics,
        Pass::GatherStatistics,
        Pass::Partition,
        Pass::StatisticsCheck,
        Pass::LeafOfRow,
        Pass::Covers,
        Pass::TreeOutputs,
        Pass::BoosterStep,
        Pass::BoosterUpdate,
        Pass::BoosterStatistics,
        Pass::Normalisation,
        Pass::Validation,
    ];

    /// The pass's name in snake case (the benchmark's JSON keys).
    pub fn name(self) -> &'static str {
        match self {
            Pass::HistogramBins => "histogram_bins",
            Pass::HistogramStatistics => "histogram_statistics",
            Pass::GatherStatistics => "gather_statistics",
            Pass::Partition => "partition",
            Pass::StatisticsCheck => "statistics_check",
            Pass::LeafOfRow => "leaf_of_row",
            Pass::Covers => "covers",
            Pass::TreeOutputs => "tree_outputs",
            Pass::BoosterStep => "booster_step",
            Pass::BoosterUpdate => "booster_update",
            Pass::BoosterStatistics => "booster_statistics",
            Pass::Normalisation => "normalisation",
            Pass::Validation => "validation",
        }
    }
}

const N_PASSES: usize = Pass::ALL.len();

/// The bytes one pass read and wrote, and its gathered (indexed) reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassBytes {
    /// Bytes of per-row state read (logical: rows × element width).
    pub read: u64,
    /// Bytes of per-row state written.
    pub written: u64,
    /// Reads through a row index (each a possible 64-byte cache line), counted in accesses.
    pub gathered_reads: u64,
}

/// The counters since the last [`take`]: per pass, and the number of boosting rounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Indexed like [`Pass::ALL`].
    pub passes: [PassBytes; N_PASSES],
    /// Boosting rounds run.
    pub rounds: u64,
}

impl Snapshot {
    /// The counters of one pass.
    pub fn get(&self, pass: Pass) -> PassBytes {
        self.passes[pass as usize]
    }

    /// The sums over every pass.
    pub fn total(&self) -> PassBytes {
        self.passes.iter().fold(PassBytes::default(), |a, p| PassBytes {
            read: a.read + p.read,
            written: a.written + p.written,
            gathered_reads: a.gathered_reads + p.gathered_reads,
        })
    }
}

#[cfg(feature = "traffic")]
struct Counters {
    read: [AtomicU64; N_PASSES],
    written: [AtomicU64; N_PASSES],
    gathered: [AtomicU64; N_PASSES],
    rounds: AtomicU64,
}

#[cfg(feature = "traffic")]
#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);

#[cfg(feature = "traffic")]
static COUNTERS: Counters =
    Counters { read: [ZERO; N_PASSES], written: [ZERO; N_PASSES], gathered: [ZERO; N_PASSES], rounds: ZERO };

/// Counts one call of `pass`: `read` and `written` bytes of per-row state. No-op without the
/// `traffic` feature.
#[inline(always)]
pub fn add(pass: Pass, read: usize, written: usize) {
    #[cfg(feature = "traffic")]
    {
        COUNTERS.read[pass as usize].fetch_add(read as u64, Ordering::Relaxed);
        COUNTERS.written[pass as usize].fetch_add(written as u64, Ordering::Relaxed);
    }
    #[cfg(not(feature = "traffic"))]
    let _ = (pass, read, written);
}

/// Counts `accesses` reads of `pass` through a row index (besides their bytes, given to [`add`]).
/// No-op without the `traffic` feature.
#[inline(always)]
pub fn gathered(pass: Pass, accesses: usize) {
    #[cfg(feature = "traffic")]
    COUNTERS.gathered[pass as usize].fetch_add(accesses as u64, Ordering::Relaxed);
    #[cfg(not(feature = "traffic"))]
    let _ = (pass, accesses);
}

/// Counts one boosting round. No-op without the `traffic` feature.
#[inline(always)]
pub fn round() {
    #[cfg(feature = "traffic")]
    COUNTERS.rounds.fetch_add(1, Ordering::Relaxed);
}

/// The bytes of a slice (its length × its element size).
#[inline(always)]
pub fn bytes<T>(s: &[T]) -> usize {
    std::mem::size_of_val(s)
}

/// Returns the counters and resets them (zeros without the `traffic` feature).
pub fn take() -> Snapshot {
    #[cfg(feature = "traffic")]
    {
        let mut s = Snapshot { rounds: COUNTERS.rounds.swap(0, Ordering::Relaxed), ..Snapshot::default() };
        for (i, p) in s.passes.iter_mut().enumerate() {
            p.read = COUNTERS.read[i].swap(0, Ordering::Relaxed);
            p.written = COUNTERS.written[i].swap(0, Ordering::Relaxed);
            p.gathered_reads = COUNTERS.gathered[i].swap(0, Ordering::Relaxed);
        }
        s
    }
    #[cfg(not(feature = "traffic"))]
    Snapshot::default()
}

// `cfg(test)` and `cfg(feature)` stacked (the same as `cfg(all(test, feature = "traffic"))`).
#[cfg(test)]
#[cfg(feature = "traffic")]
mod tests {
    use super::*;
    use crate::boost::trainer::Trainer;
    use crate::data::{Dataset, Features, Target};
    use crate::params::{Algorithm, BoostParams};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// `n` rows of `d` uniform features; the label is the sign of a noisy sum of two of them.
    fn data(n: usize, d: usize) -> Dataset {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let x: Vec<f64> = (0..n * d).map(|_| rng.gen::<f64>()).collect();
        let y: Vec<String> = (0..n)
            .map(|i| {
                let s = x[i * d] + x[i * d + 1] + 0.6 * (rng.gen::<f64>() - 0.5);
                if s > 1.0 { "1" } else { "0" }.to_string()
            })
            .collect();
        let target = Target::from_strings(&y, None).expect("labels");
        Dataset::new(Features::from_row_major(&x, n, d).expect("features"), Some(target), None).expect("dataset")
    }

    /// One test only: the counters are global and tests run on parallel threads, so it is run
    /// alone (`cargo test -p boostlab --features traffic --lib traffic`): a fit of another test
    /// beside it would add to its counts.
    #[test]
    fn counted_bytes_follow_the_passes_of_a_round() {
        let (n, d, rounds) = (20_000usize, 4usize, 10u64);
        let data = data(n, d);
        let (n64, d64) = (n as u64, d as u64);
        let mut params =
            BoostParams { algorithm: Algorithm::AdaBoost, n_estimators: rounds as usize, ..BoostParams::default() };
        // The boosting rounds' own passes (calibration's fold fits would add theirs).
        params.calibration = crate::params::CalibrationParams::none();

        // Stumps: one root histogram a round, no partition, no gather.
        params.tree.max_leaves = 2;
        let _ = take();
        let model = Trainer::new(&params).fit(&data).expect("fit");
        let s = take();
        assert_eq!(model.n_trees() as u64, rounds);
        assert_eq!(s.rounds, rounds);
        let bins = s.get(Pass::HistogramBins);
        assert_eq!(bins.read, rounds * n64 * d64, "the root reads every bin once (u8 bins)");
        assert_eq!(bins.gathered_reads, 0);
        let hs = s.get(Pass::HistogramStatistics).read;
        assert!(
            hs >= rounds * n64 * 8 && hs.is_multiple_of(rounds * n64 * 8),
            "whole passes over the statistics: {hs}"
        );
        assert_eq!(s.get(Pass::Partition), PassBytes::default());
        assert_eq!(s.get(Pass::GatherStatistics), PassBytes::default());
        assert_eq!(
            s.get(Pass::StatisticsCheck),
            PassBytes::default(),
            "finite statistics are checked on the root's totals"
        );
        assert_eq!(s.get(Pass::LeafOfRow).written, rounds * n64 * 4);
        assert_eq!(s.get(Pass::Covers).read, rounds * n64 * 4);
        // Discrete AdaBoost: the edge (weight, label, leaf), the update (weight, score, label,
        // leaf; weight and score written), the normalisation with the statistics (weight, label;
        // weight and statistic written), and the first statistics before round 1.
        assert_eq!(s.get(Pass::BoosterStep).read, rounds * n64 * 20);
        assert_eq!(
            s.get(Pass::BoosterUpdate),
            PassBytes { read: rounds * n64 * 28, written: rounds * n64 * 16, gathered_reads: 0 }
        );
        let st = s.get(Pass::BoosterStatistics);
        assert_eq!(st.written, (2 * rounds + 1) * n64 * 8, "the statistics: n × 8 a round (and the weights)");
        assert_eq!(st.read, (rounds + 1) * n64 * 16, "weight and label, each call");
        assert_eq!(s.get(Pass::TreeOutputs), PassBytes::default(), "the fused step reads the leaves");

        // Eight leaves: the smaller child of each of the six partitioned splits is built from its
        // rows (gathered), so the bins read lie between n·d and (1 + log2 8)·n·d a round.
        params.tree.max_leaves = 8;
        let _ = take();
        Trainer::new(&params).fit(&data).expect("fit");
        let s = take();
        assert_eq!(s.rounds, rounds);
        let bins = s.get(Pass::HistogramBins);
        assert!(bins.read > rounds * n64 * d64 && bins.read <= rounds * 4 * n64 * d64, "{bins:?}");
        let child_cells = bins.read - rounds * n64 * d64;
        assert_eq!(bins.gathered_reads, child_cells, "every child cell is a gathered read");
        let gather = s.get(Pass::GatherStatistics);
        assert_eq!(gather.gathered_reads * d64, child_cells, "one gathered statistic per child row");
        assert_eq!(gather.written, gather.gathered_reads * 8);
        assert!(s.get(Pass::Partition).read > 0);
        assert_eq!(
            s.get(Pass::StatisticsCheck),
            PassBytes::default(),
            "finite statistics are checked on the root's totals"
        );
        assert_eq!(s.total().read, Pass::ALL.iter().map(|&p| s.get(p).read).sum::<u64>());
    }
}
