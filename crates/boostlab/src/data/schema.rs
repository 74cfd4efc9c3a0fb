//! The schema of a model's features: names, kinds, category levels.

use serde::{Deserialize, Serialize};

use super::{Column, FeatureKind, Features, MISSING_CODE};

/// Names, kinds and category levels of the features a model was trained on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    /// Feature names.
    pub names: Vec<String>,
    /// Feature kinds.
    pub kinds: Vec<FeatureKind>,
    /// Level names of categorical features (`None` for numeric ones).
    pub levels: Vec<Option<Vec<String>>>,
}

impl Schema {
    /// The schema of `features`.
    pub fn from_features(features: &Features) -> Schema {
        Schema {
            names: features.names.clone(),
            kinds: features.kinds(),
            levels: features
                .columns
                .iter()
                .map(|c| match c {
                    Column::Categorical { levels, .. } => Some(levels.clone()),
                    Column::Numeric(_) => None,
                })
                .collect(),
        }
    }

    /// Category codes of feature `f` given against `levels`, re-coded onto the model's levels by
    /// name: a level the model never saw, and [`MISSING_CODE`], become [`MISSING_CODE`].
    pub fn remap_codes(&self, f: usize, levels: &[String], codes: &[u32]) -> Vec<u32> {
        let model_levels = self.levels.get(f).and_then(|l| l.as_deref()).unwrap_or(&[]);
        if model_levels == levels {
            return codes.to_vec();
        }
        let map: Vec<u32> = levels
            .iter()
            .map(|l| model_levels.iter().position(|m| m == l).map_or(MISSING_CODE, |p| p as u32))
            .collect();
        codes.iter().map(|&c| map.get(c as usize).copied().unwrap_or(MISSING_CODE)).collect()
    }

    /// Name/kind pairs, to force kinds when reading prediction data.
    pub fn kinds_by_name(&self) -> Vec<(String, FeatureKind)> {
        self.names.iter().cloned().zip(self.kinds.iter().copied()).collect()
    }
}
