//! The model file: versioned JSON, written atomically, validated when read.

use std::path::Path;

use super::Ensemble;
use crate::error::{Error, Result};
use crate::util::fs::write_atomic;

/// The model-file format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

impl Ensemble {
    /// Serialises to JSON.
    pub fn to_json(&self) -> Result<String> {
        serde_json::to_string(self).map_err(|e| Error::InvalidModel(e.to_string()))
    }

    /// Parses and validates a model from JSON.
    pub fn from_json(text: &str) -> Result<Ensemble> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::InvalidModel(format!("not valid JSON: {e}")))?;
        match v.get("format_version").and_then(serde_json::Value::as_u64) {
            Some(x) if x == u64::from(FORMAT_VERSION) => {}
            Some(x) => {
                return Err(Error::InvalidModel(format!("format_version {x}; this build reads {FORMAT_VERSION}")))
            }
            None => return Err(Error::InvalidModel("no format_version: not a boostlab model".into())),
        }
        let m: Ensemble = serde_json::from_value(v).map_err(|e| Error::InvalidModel(e.to_string()))?;
        m.validate()?;
        Ok(m)
    }

    /// Writes the model atomically: to a temporary file beside `path`, flushed, then renamed.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        write_atomic(path.as_ref(), self.to_json()?.as_bytes())
    }

    /// Reads and validates a model file.
    pub fn load(path: impl AsRef<Path>) -> Result<Ensemble> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Ensemble::from_json(&text).map_err(|e| match e {
            Error::InvalidModel(m) => Error::InvalidModel(format!("{}: {m}", path.display())),
            other => other,
        })
    }
}
