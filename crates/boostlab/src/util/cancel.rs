//! Cooperative cancellation: a flag that a caller sets (from a signal handler, another thread, a
//! Python `KeyboardInterrupt`) and the library checks between rounds (the boosting loop), between
//! nodes (the tree grower) and between row blocks (prediction). A cancelled call returns
//! [`Error::Cancelled`] and leaves no partial result behind.
//!
//! The check is one relaxed atomic load, so it costs nothing next to a node's histogram; as in
//! LightGBM's and XGBoost's training loops, a long call stops within one node's work.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::error::{Error, Result};

/// A shareable cancellation flag (clones share the flag). By default, not cancelled.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// A new flag, not set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Asks every computation holding this flag (or a clone) to stop. Safe from a signal handler
    /// thread; idempotent.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// True once [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Error::Cancelled)` once the flag is set.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// [`Cancel::check`] on an optional flag.
pub(crate) fn check(cancel: Option<&Cancel>) -> Result<()> {
    cancel.map_or(Ok(()), Cancel::check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let a = Cancel::new();
        let b = a.clone();
        assert!(!b.is_cancelled());
        assert!(b.check().is_ok());
        a.cancel();
        assert!(b.is_cancelled());
        assert!(matches!(b.check(), Err(Error::Cancelled)));
        assert!(matches!(check(Some(&b)), Err(Error::Cancelled)));
        assert!(check(None).is_ok());
    }
}
