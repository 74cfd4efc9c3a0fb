//! Loading a model file takes at most 3 times the file's size in memory, measured by a
//! counting global allocator (this binary's own, so no other test allocates meanwhile). The
//! loading speed is printed, not asserted: speed is a benchmark's claim, not a test's.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use boostlab::data::{Column, Dataset, Features, Target};
use boostlab::{BoostParams, Ensemble, Trainer};

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn add(n: usize) {
    let now = IN_USE.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to `System` with the same arguments; the counters only add
// and subtract the sizes.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        add(l.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        add(l.size());
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        IN_USE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() {
            add(new - l.size());
        } else {
            IN_USE.fetch_sub(l.size() - new, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// A model of 64-leaf trees on a numeric and a categorical feature, its trees repeated until
/// its file is about `bytes` long.
fn large_model(bytes: usize) -> Ensemble {
    let n = 2000;
    let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 37.0).collect();
    let c: Vec<u32> = (0..n as u32).map(|i| (i * 31) % 40).collect();
    let y: Vec<u32> = (0..n).map(|i| u32::from((x[i] + f64::from(c[i] % 7)) % 5.0 > 2.3)).collect();
    let d = Dataset::new(
        Features {
            names: vec!["x".into(), "c".into()],
            columns: vec![
                Column::Numeric(x),
                Column::Categorical { codes: c, levels: (0..40).map(|i| format!("level{i}")).collect() },
            ],
        },
        Some(Target::Classes { y, classes: vec!["a".into(), "b".into()] }),
        None,
    )
    .unwrap();
    let mut p = BoostParams { algorithm: boostlab::Algorithm::RealAdaBoost, n_estimators: 20, ..Default::default() };
    p.tree.max_leaves = 64;
    let mut m = Trainer::new(&p).fit(&d).unwrap();
    let one = m.to_json().unwrap().len();
    let copies = bytes / one + 1;
    let (trees, alphas, history) = (m.trees.clone(), m.alphas.clone(), m.history.clone());
    for c in 1..copies {
        m.trees.extend(trees.iter().cloned());
        m.alphas.extend(alphas.iter().map(|a| a * 1e-3));
        m.history.extend(history.iter().cloned().map(|mut r| {
            r.round += c * trees.len();
            r
        }));
    }
    m.params.n_estimators = m.trees.len();
    m
}

#[test]
fn loading_a_model_takes_at_most_three_times_its_size() {
    let m = large_model(50 << 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.json");
    m.save(&path).unwrap();
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(size > 45 << 20, "{size} bytes");
    drop(m);
    let base = IN_USE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let start = Instant::now();
    let back = Ensemble::load(&path).unwrap();
    let mut secs = start.elapsed().as_secs_f64();
    let peak = PEAK.load(Ordering::Relaxed) - base;
    let held = IN_USE.load(Ordering::Relaxed) - base;
    // The speed, printed: the best of three loads (the host's other work only slows one down).
    for _ in 0..2 {
        let start = Instant::now();
        let again = Ensemble::load(&path).unwrap();
        secs = secs.min(start.elapsed().as_secs_f64());
        assert_eq!(again.n_trees(), back.n_trees());
    }
    let ratio = peak as f64 / size as f64;
    let mb_s = size as f64 / 1e6 / secs;
    eprintln!(
        "model file {:.1} MB, {} trees: peak {:.1} MB ({ratio:.2}× the file), model {:.1} MB, {secs:.2} s ({mb_s:.0} MB/s)",
        size as f64 / 1e6,
        back.n_trees(),
        peak as f64 / 1e6,
        held as f64 / 1e6
    );
    assert!(ratio <= 3.0, "peak {peak} bytes for a {size}-byte file: {ratio:.2}×");
    assert!(back.n_trees() > 1000);
}
