//! Presets: named sets of parameter defaults.
//!
//! A preset never overrides a value the user gave. It is applied when the parameters are built —
//! [`BoostParams::with_preset`] in Rust, [`BoostParams::from_json`] for the CLI, the Python
//! bindings and experiment specs — and then the user's own values are laid over it; `fit` uses the
//! parameters as they are. The model records every parameter's effective value and where it came
//! from ([`ParamSource`]: the library default, the preset, or the user), shown by
//! `boostlab inspect`.
//!
//! Adding a preset: a variant of [`Preset`], its name in [`Preset::ALL`], the algorithms it is
//! for in [`Preset::algorithms`] and its settings (dotted parameter paths and JSON values) in
//! [`Preset::settings`]. Nothing else changes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::{Algorithm, BoostParams};
use crate::error::{Error, Result};

/// A named set of parameter defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// t-AdaBoost as the authors' published code runs it (docs/explanation/tadaboost.md#tadaboost-authors "Reproducing the authors'
    /// code"): leaves grown by example count, pure leaves forbidden, at most 2000 split candidates
    /// per node, ties between equally good splits broken at random, canonical leaf values, and
    /// the papers' stumps, 100 rounds and no shrinkage unless given.
    Authors,
    /// The papers' settings where a booster's defaults differ from them
    /// ([`algorithm_defaults`](super::algorithm_defaults)): stumps, 100 rounds, no shrinkage.
    Paper,
}

impl Preset {
    /// Every preset with its name (CLI `--preset`, JSON `"preset"`, Python `preset=`).
    pub const ALL: &'static [(&'static str, Preset)] = &[("authors", Preset::Authors), ("paper", Preset::Paper)];

    /// The preset's name.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, p)| *p == self).map_or("?", |(n, _)| n)
    }

    /// Parses a preset name.
    pub fn parse(s: &str) -> Result<Preset> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, p)| *p).ok_or_else(|| {
            Error::param("preset", format!("one of {:?}", Self::ALL.iter().map(|p| p.0).collect::<Vec<_>>()), s)
        })
    }

    /// The algorithms the preset is made for.
    pub fn algorithms(self) -> &'static [Algorithm] {
        match self {
            Preset::Authors => &[Algorithm::TAdaBoost],
            Preset::Paper => &[Algorithm::AdaBoost, Algorithm::RealAdaBoost, Algorithm::TAdaBoost, Algorithm::SecBoost],
        }
    }

    /// The preset's settings: (dotted parameter path, value as in the parameters' JSON).
    pub fn settings(self) -> Vec<(&'static str, Value)> {
        match self {
            Preset::Authors => {
                // The authors' code: the papers' tree size, rounds and no shrinkage, and its own
                // tree learner and leaves.
                let mut s = Preset::Paper.settings();
                s.extend([
                    ("tree.grow_order", json!("count")),
                    ("tree.pure_leaves", json!("forbid")),
                    ("tree.max_split_candidates", json!(2000)),
                    ("tree.split_ties", json!("random")),
                    ("t_adaboost.leaf_values", json!("canonical")),
                ]);
                s
            }
            Preset::Paper => {
                vec![("tree.max_leaves", json!(2)), ("n_estimators", json!(100)), ("learning_rate", json!(1.0))]
            }
        }
    }
}

/// Where a parameter's effective value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamSource {
    /// The library's default.
    Default,
    /// The preset (`params.preset`).
    Preset,
    /// Given by the user.
    User,
}

/// One parameter of a trained model: its effective value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamEntry {
    /// The effective value (JSON, as in the parameters' serialisation).
    pub value: Value,
    /// Where it came from.
    pub source: ParamSource,
}

/// The nested tables of the parameters' JSON (one per booster family, and the tree learner's).
pub const SUB_TABLES: &[&str] = &["tree", "adaboost", "t_adaboost", "secboost", "multiclass"];

/// Flattens the parameters' JSON into dotted paths (one level of sub-structures).
fn flatten(v: &Value) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Value::Object(top) = v {
        for (k, v) in top {
            match v {
                Value::Object(sub) if SUB_TABLES.contains(&k.as_str()) => {
                    for (kk, vv) in sub {
                        out.insert(format!("{k}.{kk}"), vv.clone());
                    }
                }
                _ => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// Sets `path` (dotted, at most one level deep) of a JSON object.
fn set_path(obj: &mut Map<String, Value>, path: &str, v: Value) {
    match path.split_once('.') {
        Some((a, b)) => {
            let sub = obj.entry(a.to_string()).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = sub {
                m.insert(b.to_string(), v);
            }
        }
        None => {
            obj.insert(path.to_string(), v);
        }
    }
}

/// A parameter parse error. A field's own parser reports `invalid parameter `NAME`: expected E,
/// got G` through serde; that message is given back as it is (not wrapped in a second "invalid
/// parameter `parameters`"), so the user reads which parameter is wrong.
fn param_error(e: serde_json::Error) -> Error {
    let msg = e.to_string();
    if msg.starts_with("invalid parameter `") {
        Error::Failed(msg)
    } else {
        Error::param("parameters", "valid parameters", msg)
    }
}

fn to_value(p: &BoostParams) -> Result<Value> {
    serde_json::to_value(p).map_err(|e| Error::InvalidData(format!("parameters do not serialise: {e}")))
}

impl BoostParams {
    /// The default parameters with `preset`'s settings applied and recorded (`preset` field).
    /// Change any field afterwards: the preset never comes back over it.
    ///
    /// ```
    /// use boostlab::{Algorithm, BoostParams, boost::preset::Preset};
    /// let mut p = BoostParams::with_preset(Preset::Authors);
    /// p.algorithm = Algorithm::TAdaBoost;
    /// p.tree.max_split_candidates = None; // the user's choice wins over the preset's 2000
    /// assert_eq!(p.tree.grow_order, boostlab::tree::GrowOrder::Count); // the preset's
    /// ```
    pub fn with_preset(preset: Preset) -> BoostParams {
        let mut obj = Map::new();
        obj.insert("preset".into(), json!(preset.name()));
        // The preset's settings are valid by construction (tested), so this cannot fail.
        Self::from_json(&Value::Object(obj)).map(|(p, _)| p).unwrap_or_default()
    }

    /// The defaults of `algorithm` as the command line and the Python estimators give them:
    /// [`BoostParams::default`] with the algorithm's own defaults
    /// ([`algorithm_defaults`](super::algorithm_defaults)) laid over it.
    ///
    /// ```
    /// use boostlab::{Algorithm, BoostParams};
    /// let p = BoostParams::for_algorithm(Algorithm::RealAdaBoost);
    /// assert_eq!((p.tree.max_leaves, p.learning_rate), (32, 0.1));
    /// assert_eq!(BoostParams::for_algorithm(Algorithm::AdaBoostMH).tree.max_leaves, 2);
    /// ```
    pub fn for_algorithm(algorithm: Algorithm) -> BoostParams {
        // The algorithm's defaults are valid by construction (tested), so this cannot fail.
        Self::from_json(&json!({ "algorithm": algorithm }))
            .map_or_else(|_| BoostParams { algorithm, ..Default::default() }, |(p, _)| p)
    }

    /// Parameters from a (partial) JSON object, as the CLI, the Python bindings and experiment
    /// specs give them: the defaults, the algorithm's own
    /// ([`algorithm_defaults`](super::algorithm_defaults)), then the preset's settings (`"preset": "authors"`, or the
    /// older `"t_adaboost": {"authors_mode": true}`), then every field present in `v`, which
    /// therefore always wins over the preset. Returns the parameters and the dotted paths the user
    /// gave. Does not run [`BoostParams::check`].
    pub fn from_json(v: &Value) -> Result<(BoostParams, Vec<String>)> {
        let Value::Object(given) = v else {
            return Err(Error::param("parameters", "a JSON object", v));
        };
        let mut given = given.clone();
        // The older spelling of the authors' preset (older models and specs).
        let mut legacy_authors = false;
        if let Some(Value::Object(ta)) = given.get_mut("t_adaboost") {
            if let Some(a) = ta.remove("authors_mode") {
                legacy_authors = a.as_bool().ok_or_else(|| Error::param("t_adaboost.authors_mode", "a boolean", &a))?;
            }
        }
        let preset = match given.get("preset") {
            None | Some(Value::Null) => legacy_authors.then_some(Preset::Authors),
            Some(Value::String(s)) => Some(Preset::parse(s)?),
            Some(other) => return Err(Error::param("preset", "a preset name", other)),
        };
        if legacy_authors && preset != Some(Preset::Authors) {
            return Err(Error::param("t_adaboost.authors_mode", "no other preset beside it", "true"));
        }
        let Value::Object(mut obj) = to_value(&BoostParams::default())? else {
            return Err(Error::InvalidData("parameters do not serialise to an object".into()));
        };
        // An unknown algorithm is reported by the parse below, naming the field.
        let algorithm = given.get("algorithm").and_then(|a| serde_json::from_value(a.clone()).ok()).unwrap_or_default();
        for (path, value) in super::algorithm_defaults(algorithm) {
            set_path(&mut obj, path, value);
        }
        if let Some(p) = preset {
            for (path, value) in p.settings() {
                set_path(&mut obj, path, value);
            }
            obj.insert("preset".into(), json!(p.name()));
        }
        let mut explicit = Vec::new();
        for (k, v) in given {
            match v {
                Value::Object(sub) if SUB_TABLES.contains(&k.as_str()) => {
                    for (kk, vv) in sub {
                        explicit.push(format!("{k}.{kk}"));
                        set_path(&mut obj, &format!("{k}.{kk}"), vv);
                    }
                }
                v => {
                    if k != "preset" || !v.is_null() {
                        explicit.push(k.clone());
                    }
                    if k != "preset" {
                        obj.insert(k, v);
                    }
                }
            }
        }
        let params: BoostParams = serde_json::from_value(Value::Object(obj)).map_err(param_error)?;
        Ok((params, explicit))
    }

    /// Every parameter's effective value and source, by dotted path (`tree.max_split_candidates`,
    /// ...). `explicit` lists the paths the user gave (from [`BoostParams::from_json`]); a path
    /// not listed is attributed to the preset when the preset sets it to this value, to the
    /// default when it equals the default, and to the user otherwise (a field set in code).
    pub fn sources(&self, explicit: &[String]) -> Result<BTreeMap<String, ParamEntry>> {
        // `tree.pure_leaves = auto` is listed as what it resolves to for the algorithm
        // (a default), as the model records it.
        let resolve = |mut p: BoostParams| {
            if p.tree.pure_leaves == super::PureLeaves::Auto {
                p.tree.pure_leaves = super::default_pure_leaves(self.algorithm);
            }
            p
        };
        // A learning rate of 1 is not written in the parameters' JSON; it is listed all the same.
        let listed = |p: &BoostParams| -> Result<BTreeMap<String, Value>> {
            let mut flat = flatten(&to_value(&resolve(p.clone()))?);
            flat.entry("learning_rate".into()).or_insert(json!(1.0));
            Ok(flat)
        };
        let effective = listed(self)?;
        // The algorithm's defaults, and the struct's (the papers' settings, which Rust code
        // starting from `BoostParams::default()` keeps).
        let mut defaults = listed(&BoostParams::for_algorithm(self.algorithm))?;
        defaults.remove("algorithm");
        let struct_defaults = listed(&BoostParams::default())?;
        let preset: BTreeMap<String, Value> = self
            .preset
            .map(|p| p.settings().into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            .unwrap_or_default();
        Ok(effective
            .into_iter()
            .map(|(path, value)| {
                let source = if explicit.contains(&path) {
                    ParamSource::User
                } else if let Some(pv) = preset.get(&path) {
                    if *pv == value {
                        ParamSource::Preset
                    } else {
                        ParamSource::User
                    }
                } else if defaults.get(&path) == Some(&value) || struct_defaults.get(&path) == Some(&value) {
                    ParamSource::Default
                } else {
                    ParamSource::User
                };
                (path, ParamEntry { value, source })
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{GrowOrder, PureLeaves, SplitTies, TemperedLink};

    #[test]
    fn pure_leaves_auto_is_listed_as_resolved_default() {
        let mut p = BoostParams { algorithm: Algorithm::TAdaBoost, ..Default::default() };
        assert_eq!(p.tree.pure_leaves, PureLeaves::Auto);
        let src = p.sources(&[]).unwrap();
        assert_eq!(src["tree.pure_leaves"], ParamEntry { value: json!("forbid"), source: ParamSource::Default });
        p.algorithm = Algorithm::RealAdaBoost;
        let src = p.sources(&[]).unwrap();
        assert_eq!(src["tree.pure_leaves"], ParamEntry { value: json!("allow"), source: ParamSource::Default });
        // Resolved already (as in a model's parameters): still the default; `allow` for
        // t-AdaBoost is the user's.
        p.algorithm = Algorithm::TAdaBoost;
        p.tree.pure_leaves = PureLeaves::Forbid;
        assert_eq!(p.sources(&[]).unwrap()["tree.pure_leaves"].source, ParamSource::Default);
        p.tree.pure_leaves = PureLeaves::Allow;
        assert_eq!(p.sources(&[]).unwrap()["tree.pure_leaves"].source, ParamSource::User);
    }

    fn authors_with(user: Value) -> (BoostParams, Vec<String>) {
        let mut v = json!({"algorithm": "t-adaboost", "preset": "authors"});
        if let (Value::Object(o), Value::Object(u)) = (&mut v, user) {
            o.extend(u);
        }
        BoostParams::from_json(&v).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The preset's settings apply when nothing else is given, and each one yields to
    /// a value the user gives, whatever it is (also the library default), while the others stay.
    #[test]
    fn every_preset_field_yields_to_the_user() {
        let (p, explicit) = authors_with(json!({}));
        assert_eq!(p.preset, Some(Preset::Authors));
        assert_eq!(p.tree.grow_order, GrowOrder::Count);
        assert_eq!(p.tree.pure_leaves, PureLeaves::Forbid);
        assert_eq!(p.tree.max_split_candidates, Some(2000));
        assert_eq!(p.tree.split_ties, SplitTies::Random);
        assert_eq!(p.t_adaboost.leaf_values, TemperedLink::Canonical);
        assert_eq!(explicit, vec!["algorithm", "preset"]);
        p.check().unwrap_or_else(|e| panic!("{e}"));
        let src = p.sources(&explicit).unwrap_or_else(|e| panic!("{e}"));
        for (path, _) in Preset::Authors.settings() {
            assert_eq!(src[path].source, ParamSource::Preset, "{path}");
        }
        assert_eq!(src["seed"].source, ParamSource::Default);
        assert_eq!(src["algorithm"].source, ParamSource::User);

        let overrides = [
            ("tree.grow_order", json!({"tree": {"grow_order": "weight"}})),
            ("tree.pure_leaves", json!({"tree": {"pure_leaves": "allow"}})),
            ("tree.max_split_candidates", json!({"tree": {"max_split_candidates": 100_000_000}})),
            ("tree.max_split_candidates", json!({"tree": {"max_split_candidates": null}})),
            ("tree.split_ties", json!({"tree": {"split_ties": "lowest"}})),
            ("t_adaboost.leaf_values", json!({"t_adaboost": {"leaf_values": "optimal"}})),
        ];
        for (path, user) in overrides {
            let (q, explicit) = authors_with(user.clone());
            let flat = flatten(&to_value(&q).unwrap_or_else(|e| panic!("{e}")));
            let (sub, field) = path.split_once('.').unwrap_or_else(|| panic!("{path}"));
            assert_eq!(flat[path], user[sub][field], "{path} keeps the user's value");
            let src = q.sources(&explicit).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(src[path].source, ParamSource::User, "{path}");
            for (other, value) in Preset::Authors.settings() {
                if other != path {
                    assert_eq!(src[other].value, value, "{other} stays the preset's when {path} is given");
                    assert_eq!(src[other].source, ParamSource::Preset, "{other}");
                }
            }
        }
    }

    /// The same in Rust code: `with_preset`, then fields set directly.
    #[test]
    fn with_preset_then_fields() {
        let mut p = BoostParams::with_preset(Preset::Authors);
        p.algorithm = Algorithm::TAdaBoost;
        assert_eq!(p.tree.max_split_candidates, Some(2000));
        p.tree.max_split_candidates = None;
        p.tree.split_ties = SplitTies::Lowest;
        let src = p.sources(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(src["tree.max_split_candidates"].source, ParamSource::User);
        assert_eq!(src["tree.max_split_candidates"].value, Value::Null);
        assert_eq!(src["tree.split_ties"].source, ParamSource::User);
        assert_eq!(src["tree.grow_order"].source, ParamSource::Preset);
        assert_eq!(src["algorithm"].source, ParamSource::User);
        assert_eq!(src["seed"].source, ParamSource::Default);
        assert_eq!(src["preset"].source, ParamSource::User);
        let d = BoostParams::default().sources(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(d.values().all(|e| e.source == ParamSource::Default));
    }

    #[test]
    fn legacy_authors_mode_and_bad_presets() {
        let (p, _) = BoostParams::from_json(&json!({"algorithm": "t-adaboost", "t_adaboost": {"authors_mode": true}}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p, {
            let mut q = BoostParams::with_preset(Preset::Authors);
            q.algorithm = Algorithm::TAdaBoost;
            q
        });
        let (p, _) =
            BoostParams::from_json(&json!({"t_adaboost": {"authors_mode": false}})).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p, BoostParams::for_algorithm(Algorithm::AdaBoost));
        let err = BoostParams::from_json(&json!({"preset": "lightgbm"})).unwrap_err().to_string();
        assert!(err.contains("preset") && err.contains("authors") && err.contains("paper"), "{err}");
        let err = BoostParams { preset: Some(Preset::Authors), ..Default::default() }.check().unwrap_err().to_string();
        assert!(err.contains("preset") && err.contains("t-adaboost"), "{err}");
        assert!(BoostParams::from_json(&json!({"tree": {"split_ties": "sideways"}})).is_err());
    }

    /// Each algorithm's defaults are what `from_json` gives without fields, are valid, and are
    /// recorded as defaults; the `paper` preset gives back exactly the struct's defaults (the
    /// papers' settings) for every algorithm it is for, and yields to the user's values.
    #[test]
    fn algorithm_defaults_apply_and_the_paper_preset_restores_the_papers_settings() {
        for &(name, algorithm) in Algorithm::ALL {
            let (p, explicit) = BoostParams::from_json(&json!({"algorithm": name})).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(p, BoostParams::for_algorithm(algorithm), "{name}");
            p.check().unwrap_or_else(|e| panic!("{name}: {e}"));
            let flat = flatten(&to_value(&p).unwrap_or_else(|e| panic!("{e}")));
            let changed = crate::params::algorithm_defaults(algorithm);
            for (path, value) in &changed {
                assert_eq!(flat[*path], *value, "{name} {path}");
            }
            let src = p.sources(&explicit).unwrap_or_else(|e| panic!("{e}"));
            assert!(src.iter().all(|(k, e)| k == "algorithm" || e.source == ParamSource::Default), "{name}: {src:?}");
            // `paper` is for exactly the algorithms with defaults of their own.
            assert_eq!(Preset::Paper.algorithms().contains(&algorithm), !changed.is_empty(), "{name}");
            if changed.is_empty() {
                assert_eq!(p, BoostParams { algorithm, ..Default::default() }, "{name}");
                continue;
            }
            let (paper, _) = BoostParams::from_json(&json!({"algorithm": name, "preset": "paper"}))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(paper, BoostParams { algorithm, preset: Some(Preset::Paper), ..Default::default() }, "{name}");
            let (mixed, _) =
                BoostParams::from_json(&json!({"algorithm": name, "preset": "paper", "tree": {"max_leaves": 4}}))
                    .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!((mixed.tree.max_leaves, mixed.learning_rate, mixed.n_estimators), (4, 1.0, 100), "{name}");
        }
        let e = BoostParams::from_json(&json!({"algorithm": "adaboost-mh", "preset": "paper"}))
            .and_then(|(p, _)| p.check())
            .unwrap_err()
            .to_string();
        assert!(e.contains("preset") && e.contains("real-adaboost"), "{e}");
    }
}
