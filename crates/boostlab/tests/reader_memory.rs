//! Peak memory of the readers on files whose header or lengths claim far more than the file
//! holds. Each read runs in a child process (this test binary, running only that test) that
//! reports its peak resident memory (`VmHWM` in `/proc/self/status`, Linux) before and after the
//! read, so the figure is the read's own and not that of the tests around it.

use std::path::Path;
use std::process::Command;

/// Set in the child: the file to read.
const CHILD: &str = "BOOSTLAB_READER_MEMORY_FILE";

/// The process's peak resident memory so far, in KiB (0 where /proc is not available).
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// In the child (when [`CHILD`] is set): runs `read` on the file and prints the growth of the
/// peak memory and the outcome; returns true. In the parent: false.
fn child(read: impl FnOnce(&Path) -> Result<String, String>) -> bool {
    let Ok(file) = std::env::var(CHILD) else { return false };
    let before = peak_kib();
    let outcome = read(Path::new(&file));
    let after = peak_kib();
    println!("GROWTH_KIB {}", after.saturating_sub(before));
    match outcome {
        Ok(s) => println!("OK {s}"),
        Err(e) => println!("ERR {e}"),
    }
    true
}

/// Runs test `name` of this binary in a child on `file`: (peak growth in KiB, outcome line).
fn in_child(name: &str, file: &Path) -> (u64, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, file)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    // (The figure may follow the harness's `test NAME ... ` on the same line.)
    let growth = text.lines().find_map(|l| l.split("GROWTH_KIB ").nth(1)).expect("the child's figure");
    let outcome = text.lines().find(|l| l.starts_with("OK ") || l.starts_with("ERR ")).expect("the child's outcome");
    (growth.trim().parse().unwrap(), outcome.to_string())
}

/// A header of `n` names `c0,c1,…` and one data row of zeros.
fn wide_csv(path: &Path, n: usize) {
    let mut t = String::with_capacity(n * 10);
    for i in 0..n {
        t.push_str(if i == 0 { "c0" } else { "," });
        if i > 0 {
            t.push_str(&format!("c{i}"));
        }
    }
    t.push('\n');
    for i in 0..n {
        t.push_str(if i == 0 { "0" } else { ",0" });
    }
    t.push('\n');
    std::fs::write(path, t).unwrap();
}

fn read_both(p: &Path) -> Result<String, String> {
    let o = boostlab::data::StreamOptions { label: boostlab::data::LabelSelector::Last, ..Default::default() };
    let streamed = boostlab::data::read_csv_binned(p, &o).map(|t| t.names.len()).map_err(|e| e.to_string());
    let whole = boostlab::data::read_csv(p, &Default::default()).map(|d| d.n_features()).map_err(|e| e.to_string());
    match (streamed, whole) {
        (Ok(a), Ok(b)) => Ok(format!("{a} {b}")),
        (Err(e), _) | (_, Err(e)) => Err(e),
    }
}

#[test]
fn a_two_million_column_csv_header_is_refused_in_bounded_memory() {
    if child(read_both) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("wide.csv");
    wide_csv(&p, 2_000_000);
    let size = std::fs::metadata(&p).unwrap().len();
    assert!(size > 20_000_000, "{size} bytes");
    let (growth, outcome) = in_child("reader_memory::a_two_million_column_csv_header_is_refused_in_bounded_memory", &p);
    assert!(
        outcome.ends_with(
            "wide.csv:1: the header has more than 1000000 columns, the most boostlab reads from a CSV file (for \
             wider, sparse data use the LIBSVM format)"
        ),
        "{outcome}"
    );
    // The width is counted before the header is parsed: a 64 KiB buffer, not the 21 MB header.
    eprintln!("2,000,000-column header ({size} bytes): peak growth {growth} KiB");
    assert!(growth <= 4 * 1024, "peak growth {growth} KiB");
}

#[test]
fn a_wide_csv_costs_memory_in_proportion_to_its_header() {
    if child(read_both) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("wide.csv");
    let n = 200_000;
    wide_csv(&p, n);
    let size = std::fs::metadata(&p).unwrap().len();
    let (growth, outcome) = in_child("reader_memory::a_wide_csv_costs_memory_in_proportion_to_its_header", &p);
    // One row: read and binned, every column a feature but the last (the label).
    assert_eq!(outcome, format!("OK {} {}", n - 1, n - 1));
    let per_column = growth * 1024 / n as u64;
    eprintln!("{n}-column CSV ({size} bytes): peak growth {growth} KiB, {per_column} bytes per column");
    assert!(per_column <= 1024, "{per_column} bytes per column");
}

#[cfg(feature = "arrow")]
#[test]
fn an_eight_byte_arrow_file_is_refused_in_bounded_memory() {
    let read = |p: &Path| {
        boostlab::data::read_arrow(p, boostlab::data::ArrowFormat::Ipc, &Default::default())
            .map(|d| d.n_rows().to_string())
            .map_err(|e| e.to_string())
    };
    if child(read) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tiny.arrow");
    std::fs::write(&p, b"ARROW1\0\0").unwrap();
    let (growth, outcome) = in_child("reader_memory::an_eight_byte_arrow_file_is_refused_in_bounded_memory", &p);
    assert!(outcome.starts_with("ERR ") && outcome.contains("tiny.arrow: not a valid Arrow IPC file"), "{outcome}");
    eprintln!("8-byte Arrow file: peak growth {growth} KiB");
    assert!(growth <= 1024, "peak growth {growth} KiB");
}
