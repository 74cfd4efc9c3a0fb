//! Core errors as Python exceptions, and the slot that carries a Python exception out of a
//! callback or a user loss into the fit that called it.

use super::*;

/// A core error as the matching Python exception.
pub(crate) fn py_err(e: Error) -> PyErr {
    match &e {
        // OSError(errno, message) is instantiated as the errno's subclass (FileNotFoundError, ...).
        Error::Io { source, .. } => match source.raw_os_error() {
            Some(code) => PyOSError::new_err((code, e.to_string())),
            None => PyOSError::new_err(e.to_string()),
        },
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// How often a waiting call checks for Python signals (Ctrl-C).
pub(crate) const POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Keeps the first Python exception of a fit's callbacks (or loss) and stops the fit.
#[derive(Clone)]
pub(crate) struct ErrorSlot {
    pub(crate) error: Arc<Mutex<Option<PyErr>>>,
    pub(crate) cancel: Cancel,
}

impl ErrorSlot {
    pub(crate) fn set(&self, e: PyErr) {
        let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(e);
        }
        self.cancel.cancel();
    }

    pub(crate) fn is_set(&self) -> bool {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    pub(crate) fn take(&self) -> Option<PyErr> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}
