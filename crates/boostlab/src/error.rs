//! The one error type of the library.
//!
//! Every failure a user can cause — bad data, an impossible parameter, a corrupt model file — is
//! an [`Error`] naming the problem (and, for files, the file, line and column). The library never
//! panics on user input.

use std::path::PathBuf;

/// Result alias used throughout the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in boostlab.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be opened, read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A data file is malformed at a known place.
    #[error("{file}:{line}{col}: {message}", col = column.as_ref().map(|c| format!(": column '{}'", shown(c))).unwrap_or_default())]
    Parse {
        /// The file (or `<memory>`).
        file: String,
        /// 1-based line number (the header is line 1 for CSV).
        line: usize,
        /// The column name or 1-based index, when known.
        column: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The data are well-formed but unusable (one class only, no rows, NaN labels, ...).
    #[error("invalid data: {0}")]
    InvalidData(String),
    /// A parameter is out of its valid range.
    #[error("invalid parameter `{name}`: expected {expected}, got {got}")]
    InvalidParam {
        /// The parameter's name, as in the library and CLI (`n_estimators`, `t`, ...).
        name: &'static str,
        /// What would have been valid.
        expected: String,
        /// What was given.
        got: String,
    },
    /// A model file is corrupt, from an unsupported version, or does not match the data.
    #[error("invalid model: {0}")]
    InvalidModel(String),
    /// A computation could not proceed without producing NaN or infinity.
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// The computation was cancelled through a [`crate::Cancel`] flag (Ctrl-C, a signal, a
    /// callback that raised); nothing partial was produced.
    #[error("cancelled")]
    Cancelled,
    /// A step supplied by the caller failed (an experiment's cell runner); the message says why.
    #[error("{0}")]
    Failed(String),
    /// Distributed training: a peer was lost, a reduction timed out, or the ranks
    /// disagree; the message names the rank or worker.
    #[error("distributed training: {0}")]
    Distributed(String),
}

impl Error {
    /// Shorthand for [`Error::InvalidParam`].
    /// `got` is shown shortened (see [`shown`]).
    pub fn param(name: &'static str, expected: impl Into<String>, got: impl std::fmt::Display) -> Self {
        Error::InvalidParam { name, expected: expected.into(), got: shown(&got.to_string()) }
    }

    /// Shorthand for [`Error::Io`].
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// How many characters of a user's value an error message shows.
pub const SHOWN_CHARS: usize = 60;

/// A user's value as an error message shows it: whole when at most [`SHOWN_CHARS`] characters,
/// else its first [`SHOWN_CHARS`] characters, an ellipsis and the full length (a 10 MB
/// field is not echoed whole).
pub fn shown(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}… ({} characters)", &s[..cut], s.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_shortened() {
        assert_eq!(shown("abc"), "abc");
        let exact = "x".repeat(SHOWN_CHARS);
        assert_eq!(shown(&exact), exact);
        let long = "é".repeat(10_000_000);
        let s = shown(&long);
        assert_eq!(s, format!("{}… (10000000 characters)", "é".repeat(SHOWN_CHARS)));
    }
}
