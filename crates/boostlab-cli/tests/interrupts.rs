//! SIGINT / SIGTERM stop `train` within a second with exit status 130 / 143 and no model or
//! temporary file; an interrupted `predict --output` (computing contributions, or blocked reading
//! its data) leaves no file; an interrupted `experiment` keeps its finished cells and resumes;
//! `predict | head -1` exits quietly on the closed pipe.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_boostlab");

/// A noisy binary problem with `n` rows and 8 features (a linear congruential generator).
fn write_data(path: &Path, n: usize) {
    let mut s: u64 = 12345;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut text = String::from("a,b,c,d,e,f,g,h,label\n");
    for _ in 0..n {
        let x: Vec<f64> = (0..8).map(|_| next()).collect();
        let y = u8::from(x[0] + 0.5 * x[1] + 0.6 * next() > 1.0);
        for v in &x {
            text.push_str(&format!("{v:.5},"));
        }
        text.push_str(&format!("{y}\n"));
    }
    std::fs::write(path, text).unwrap();
}

fn send(pid: u32, sig: &str) {
    // The shell's built-in `kill`: no dependency on procps.
    let ok = Command::new("sh").args(["-c", &format!("kill {sig} {pid}")]).status().unwrap().success();
    assert!(ok, "kill {sig} {pid}");
}

/// Starts a long `train`, waits for its first round, sends `sig`, and checks the exit status, the
/// delay and that no model or temporary file exists.
fn interrupted_train(sig: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    write_data(&dir.path().join("d.csv"), 60_000);
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args([
            "train",
            "--data",
            "d.csv",
            "--algo",
            "real-adaboost",
            "--rounds",
            "1000000",
            "--max-leaves",
            "64",
            "--model",
            "m.json",
            "--log-json",
            "log.jsonl",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Training has started once the data are read: give it a moment past that.
    std::thread::sleep(Duration::from_millis(2500));
    assert!(child.try_wait().unwrap().is_none(), "train ended before the signal");
    let sent = Instant::now();
    send(child.id(), sig);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(sent.elapsed() < Duration::from_secs(5), "no exit 5 s after {sig}");
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(code), "{sig}: {err}");
    assert!(took < Duration::from_secs(1), "{sig}: exit {took:?} after the signal");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("boostlab: interrupted"), "{err}");
    let left: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left, vec!["d.csv".to_string()], "files left after {sig}");
}

#[test]
fn sigint_stops_train_with_130_and_no_model() {
    interrupted_train("-INT", 130);
}

#[test]
fn sigterm_stops_train_with_143_and_no_model() {
    interrupted_train("-TERM", 143);
}

#[test]
fn interrupted_experiment_keeps_finished_cells_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    write_data(&dir.path().join("d.csv"), 3000);
    let spec = "name = \"int\"\nseed = 1\nfolds = 10\nnoise = [0.0]\n[params]\nrounds = 400\nmax_leaves = 16\n\
                [[datasets]]\nname = \"d\"\npath = \"d.csv\"\n[[settings]]\nname = \"real\"\nalgo = \"real-adaboost\"\n";
    std::fs::write(dir.path().join("int.toml"), spec).unwrap();
    let cells = dir.path().join("results/int/cells");
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args(["experiment", "int.toml", "--threads", "1"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first finished cell, then interrupt.
    let start = Instant::now();
    while std::fs::read_dir(&cells)
        .map_or(0, |d| d.filter(|e| e.as_ref().is_ok_and(|e| is_record(e.path().as_path()))).count())
        == 0
    {
        assert!(start.elapsed() < Duration::from_secs(120), "no cell finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    send(child.id(), "-INT");
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    let kept = count_records(&cells);
    assert!((1..10).contains(&kept), "{kept} cells kept: {err}");
    // The rerun only runs what is missing.
    let out =
        Command::new(BIN).current_dir(dir.path()).args(["experiment", "int.toml", "--threads", "1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("10 cells: {kept} already recorded, {} run now, 0 failed", 10 - kept)), "{err}");
    assert_eq!(count_records(&cells), 10);
}

fn is_record(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
}

fn count_records(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().filter(|e| is_record(&e.as_ref().unwrap().path())).count()
}

/// `boostlab train` of a 3-round model `m.json` on `d.csv` in `dir`.
fn train_small_model(dir: &Path) {
    let ok = Command::new(BIN)
        .current_dir(dir)
        .args(["train", "--data", "d.csv", "--rounds", "3", "--model", "m.json", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

#[test]
fn predict_into_a_closed_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    write_data(&dir.path().join("d.csv"), 200_000);
    train_small_model(dir.path());
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args(["predict", "--model", "m.json", "--data", "d.csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `| head -1`: read one line, close the pipe.
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert_eq!(first, "prediction,score\n");
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(err, "", "nothing on stderr");
}

/// `inspect` and `cv` into a pipe whose reader has gone (`| head -0`): status 0, no panic, nothing
/// on stderr (they printed with `println!`, which panics on a closed pipe).
#[test]
fn inspect_and_cv_into_a_closed_pipe_exit_quietly() {
    let dir = tempfile::tempdir().unwrap();
    write_data(&dir.path().join("d.csv"), 2_000);
    train_small_model(dir.path());
    for args in [&["inspect", "--model", "m.json"][..], &["cv", "--data", "d.csv", "--folds", "3", "--rounds", "3"][..]]
    {
        let mut child = Command::new(BIN)
            .current_dir(dir.path())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command has written anything.
        drop(child.stdout.take());
        let status = child.wait().unwrap();
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(status.code(), Some(0), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}: nothing on stderr");
    }
}

/// The files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut left: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    left
}

/// Waits for `child` to exit after a signal sent at `sent`; its status and standard error.
fn exit_after_signal(child: &mut std::process::Child, sent: Instant) -> (Option<i32>, Duration, String) {
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(sent.elapsed() < Duration::from_secs(5), "no exit 5 s after the signal");
        std::thread::sleep(Duration::from_millis(10));
    };
    let took = sent.elapsed();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), took, err)
}

/// `predict --contrib --output` of a large model, interrupted mid-way: the contributions stop
/// within a second, status 130, and neither the output nor its temporary file is left.
#[test]
fn interrupted_contributions_stop_and_leave_no_file() {
    let dir = tempfile::tempdir().unwrap();
    write_data(&dir.path().join("d.csv"), 20_000);
    let ok = Command::new(BIN)
        .current_dir(dir.path())
        .args(["train", "--data", "d.csv", "--algo", "real-adaboost", "--rounds", "100", "--max-leaves", "64"])
        .args(["--model", "m.json", "-q"])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args(["predict", "--model", "m.json", "--data", "d.csv", "--contrib", "--output", "phi.csv"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The temporary output exists once the header is written: the contributions are under way.
    let start = Instant::now();
    while !files_in(dir.path()).iter().any(|f| f.starts_with(".phi.csv")) {
        assert!(start.elapsed() < Duration::from_secs(30), "no temporary output: {:?}", files_in(dir.path()));
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "the contributions ended before the signal");
    let sent = Instant::now();
    send(child.id(), "-INT");
    let (code, took, err) = exit_after_signal(&mut child, sent);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(1), "exit {took:?} after the signal");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(files_in(dir.path()), vec!["d.csv", "m.json"], "files left");
}

/// `predict --output` blocked reading its data (a named pipe that sends a few rows and then
/// nothing): the step cannot see the flag, so the watchdog ends the process after its grace period,
/// and the temporary output is removed.
#[test]
fn predict_output_interrupted_while_reading_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    write_data(&dir.path().join("d.csv"), 300);
    train_small_model(dir.path());
    let fifo = dir.path().join("rows.csv");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args(["predict", "--model", "m.json", "--data", "rows.csv", "--output", "p.csv"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rows = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        f.write_all(rows.lines().take(20).collect::<Vec<_>>().join("\n").as_bytes()).unwrap();
        f.write_all(b"\n").unwrap();
        f.flush().unwrap();
        // Held open (the reader waits for more) until the process is gone.
        std::thread::sleep(Duration::from_secs(4));
    });
    let start = Instant::now();
    while !files_in(dir.path()).iter().any(|f| f.starts_with(".p.csv")) {
        assert!(start.elapsed() < Duration::from_secs(10), "no temporary output: {:?}", files_in(dir.path()));
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    send(child.id(), "-INT");
    let (code, took, err) = exit_after_signal(&mut child, sent);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(2), "exit {took:?} after the signal");
    assert_eq!(files_in(dir.path()), vec!["d.csv", "m.json", "rows.csv"], "files left");
    writer.join().unwrap();
}
