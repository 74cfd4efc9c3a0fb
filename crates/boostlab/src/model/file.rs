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
    ///
    /// Deserialised straight into the typed model (no intermediate JSON tree, which took about
    /// 11 times the file's size): peak memory is the text plus the model. Only when that fails is
    /// the text read a second time, skipping everything but `format_version`, to tell a file
    /// that is not JSON, not a model, or from another format version from a corrupt model of
    /// this version.
    pub fn from_json(text: &str) -> Result<Ensemble> {
        let mut m = match serde_json::from_str::<Ensemble>(text) {
            Ok(m) => m,
            Err(e) => {
                check_format_version(text)?;
                return Err(Error::InvalidModel(without_position(&e)));
            }
        };
        if m.format_version != FORMAT_VERSION {
            return Err(version_error(&serde_json::Value::from(m.format_version)));
        }
        m.validate()?;
        if matches!(m.task, super::Task::Binary { .. })
            && m.calibration.is_none()
            && m.params.calibration.method == crate::params::CalibrationMethod::Sigmoid
        {
            // Written before calibration existed (its parameters have no `calibration`, read as
            // the default): its probabilities are σ(2f), and its parameters say so.
            m.params.calibration.method = crate::params::CalibrationMethod::None;
        }
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

/// The error of a `format_version` other than this build's (`value` is the file's).
fn version_error(value: &serde_json::Value) -> Error {
    match value {
        serde_json::Value::Number(x) if x.is_u64() || x.is_i64() => {
            Error::InvalidModel(format!("format_version {x}; this build reads {FORMAT_VERSION}"))
        }
        _ => Error::InvalidModel(format!(
            "format_version must be an integer (this build reads {FORMAT_VERSION}), got {}",
            crate::error::shown(&value.to_string())
        )),
    }
}

/// The checks that come before the model's own fields, on a text that did not parse as a model:
/// valid JSON (the parser's message and position), a `format_version` (a top-level key; the last
/// one counts, as in any JSON object), an integer, this build's. One pass that keeps nothing
/// but that value.
fn check_format_version(text: &str) -> Result<()> {
    let probe: Probe = serde_json::from_str(text).map_err(|e| Error::InvalidModel(format!("not valid JSON: {e}")))?;
    match probe.0 {
        None => Err(Error::InvalidModel("no format_version: not a boostlab model".into())),
        Some(v) if v.as_u64() == Some(u64::from(FORMAT_VERSION)) => Ok(()),
        Some(v) => Err(version_error(&v)),
    }
}

/// serde_json's message without its " at line L column C" (the typed model is read from the
/// text, whose positions the messages did not carry when it was read from a JSON tree).
fn without_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    match s.strip_suffix(&suffix) {
        Some(m) if e.line() > 0 => m.to_string(),
        _ => s,
    }
}

/// Any JSON value, keeping only a top-level object's `format_version`.
struct Probe(Option<serde_json::Value>);

impl<'de> serde::Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Probe;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Probe, A::Error> {
                let mut version = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "format_version" {
                        version = Some(map.next_value::<serde_json::Value>()?);
                    } else {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(Probe(version))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Probe, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Probe(None))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Probe, E> {
                Ok(Probe(None))
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Probe, E> {
                Ok(Probe(None))
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Probe, E> {
                Ok(Probe(None))
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Probe, E> {
                Ok(Probe(None))
            }
            fn visit_str<E>(self, _: &str) -> std::result::Result<Probe, E> {
                Ok(Probe(None))
            }
            fn visit_unit<E>(self) -> std::result::Result<Probe, E> {
                Ok(Probe(None))
            }
        }
        d.deserialize_any(V)
    }
}
