//! Interrupts: SIGINT and SIGTERM set the library's cancellation flag, which the
//! boosting loop checks between rounds and the tree grower between nodes, so `train`, `cv` and
//! `experiment` stop within a node's work; `main` then exits with 128 + the signal's number (130
//! for SIGINT, 143 for SIGTERM). Steps that do not check the flag (reading a large file) are cut
//! short by a watchdog after [`GRACE`]. Files are written only while holding [`write_lock`], which
//! the watchdog takes before exiting, so an atomic write is never cut in half (no partial model,
//! no temporary file left); a command checks [`cancelled`] after taking the lock and writes nothing
//! once interrupted. A second signal exits at once (after any write in progress).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use boostlab::Cancel;

/// How long a step that does not check the cancellation flag may run on after a signal.
pub const GRACE: Duration = Duration::from_millis(500);

static CANCEL: OnceLock<Cancel> = OnceLock::new();
static CODE: AtomicI32 = AtomicI32::new(0);
static WRITE: Mutex<()> = Mutex::new(());

/// The process's cancellation flag (set by SIGINT / SIGTERM once [`install`] ran).
pub fn cancel() -> &'static Cancel {
    CANCEL.get_or_init(Cancel::new)
}

/// True once a signal asked to stop.
pub fn cancelled() -> bool {
    cancel().is_cancelled()
}

/// The exit status after a signal (128 + its number), if one arrived.
pub fn exit_code() -> Option<i32> {
    Some(CODE.load(Ordering::SeqCst)).filter(|&c| c != 0)
}

/// Held while writing an output file: the watchdog waits for it before exiting.
pub fn write_lock() -> MutexGuard<'static, ()> {
    WRITE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Temporary files being written (an output streamed block by block): removed if the process
/// exits on a signal before they are renamed into place.
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Registers a temporary file for removal on an exit by signal.
pub fn remove_on_exit(path: &Path) {
    TEMPORARY.lock().unwrap_or_else(|p| p.into_inner()).push(path.to_path_buf());
}

/// Unregisters a temporary file (renamed into place, or removed already).
pub fn keep_on_exit(path: &Path) {
    TEMPORARY.lock().unwrap_or_else(|p| p.into_inner()).retain(|p| p != path);
}

pub fn exit_now(code: i32) -> ! {
    let _g = write_lock();
    for p in TEMPORARY.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        let _ = std::fs::remove_file(p);
    }
    eprintln!("boostlab: interrupted");
    std::process::exit(code)
}

/// Installs the handlers (a thread that waits for the signals). Without them the default
/// disposition stays (the process is killed), which is also what happens if installing fails.
#[cfg(unix)]
pub fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else { return };
    let flag = cancel().clone();
    let spawned = std::thread::Builder::new().name("signals".into()).spawn(move || {
        for sig in signals.forever() {
            let code = 128 + sig;
            if CODE.compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst).is_err() {
                exit_now(CODE.load(Ordering::SeqCst)); // a second signal
            }
            flag.cancel();
            let _ = std::thread::Builder::new().name("watchdog".into()).spawn(move || {
                std::thread::sleep(GRACE);
                exit_now(code)
            });
        }
    });
    drop(spawned);
}

/// Signals are not handled on this platform (the default: the process is killed).
#[cfg(not(unix))]
pub fn install() {}
