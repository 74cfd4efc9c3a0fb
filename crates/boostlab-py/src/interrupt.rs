//! Interrupts: the work runs on a scoped thread while the caller checks for signals.

use super::*;

/// Runs `work` on a scoped worker thread; the calling thread waits with the GIL released and checks
/// Python's signals every [`POLL`]. On a signal's exception, `cancel` is set, the worker joined,
/// and the exception returned. A panic of the worker is resumed on the calling thread (PyO3 turns
/// it into `PanicException`).
pub(crate) fn interruptible<T: Send>(py: Python<'_>, cancel: &Cancel, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    use std::sync::Condvar;
    /// Set (and notified) when the worker ends, normally or by a panic (a drop guard).
    struct Done<'a>(&'a (Mutex<bool>, Condvar));
    impl Drop for Done<'_> {
        fn drop(&mut self) {
            *self.0 .0.lock().unwrap_or_else(|p| p.into_inner()) = true;
            self.0 .1.notify_all();
        }
    }
    let done = (Mutex::new(false), Condvar::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _done = Done(&done);
            work()
        });
        let mut interrupted = None;
        loop {
            let finished = py.detach(|| {
                let guard = done.0.lock().unwrap_or_else(|p| p.into_inner());
                let (guard, _) = done.1.wait_timeout_while(guard, POLL, |d| !*d).unwrap_or_else(|p| p.into_inner());
                *guard
            });
            if finished {
                break;
            }
            if let Err(e) = py.check_signals() {
                cancel.cancel();
                interrupted = Some(e);
                break;
            }
        }
        let joined = py.detach(|| worker.join());
        match (joined, interrupted) {
            (Err(panic), _) => std::panic::resume_unwind(panic),
            (Ok(_), Some(e)) => Err(e),
            (Ok(out), None) => Ok(out),
        }
    })
}
