//! Presets: named sets of parameter defaults (see [`crate::params::preset`], where they live).

pub use crate::params::preset::{ParamEntry, ParamSource, Preset};
