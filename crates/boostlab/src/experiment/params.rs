//! A cell's parameter table → [`BoostParams`].
//!
//! A cell's merged parameter table has two kinds of keys. The nested tables `tree`, `adaboost`,
//! `t_adaboost`, `secboost` and `multiclass` are written exactly as in a model file. Every other
//! key names a parameter of the registry ([`crate::params::registry`]) by its TOML key, its name
//! or its CLI flag with underscores (`rounds`, `n_estimators`, `secboost_alpha`), and is converted
//! like the command line's flag ([`crate::params::surface`]). The only keys that are not training
//! parameters are the [`RUNNER_KEYS`]: `clipped` (record the clipped model of t-AdaBoost as the
//! cell's primary `test_error`; both models are always recorded) and `train_curve` (false skips
//! the per-round training error).
//!
//! Nothing here lists the parameters: a parameter with a TOML key in the registry is accepted.
//! One default differs from the command line's: `calibration` is `none` unless the table sets it,
//! because a cell records errors, which calibration does not change.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::params::registry::ParamSpec;
use crate::params::surface::{assemble, Surface};
use crate::BoostParams;

pub use crate::params::preset::SUB_TABLES;

/// Keys of a cell's table that steer the cell runner rather than the booster.
pub const RUNNER_KEYS: &[&str] = &["clipped", "train_curve"];

fn fail(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}

fn json(v: impl serde::Serialize, what: &str) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| fail(format!("parameter `{what}`: {e}")))
}

/// Checks that every key of `given` is a field of `known` (serde's `default` structs ignore
/// unknown fields, so a typo would otherwise pass silently).
fn check_known(given: &Map<String, Value>, known: &Value, path: &str) -> Result<()> {
    let Some(known) = known.as_object() else { return Ok(()) };
    for (k, v) in given {
        match known.get(k) {
            None => {
                let mut names: Vec<&String> = known.keys().collect();
                names.sort();
                return Err(fail(format!(
                    "unknown parameter `{path}{k}` (known: {})",
                    names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                )));
            }
            Some(kv) if SUB_TABLES.contains(&k.as_str()) && path.is_empty() => {
                if let Some(g) = v.as_object() {
                    check_known(g, kv, &format!("{k}."))?;
                }
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The flat keys a cell's table accepts: each registry parameter with a TOML key.
fn flat_keys() -> Vec<&'static str> {
    crate::params::registry::PARAMETERS.iter().filter_map(|p| p.toml_key).filter(|k| !k.contains('.')).collect()
}

/// Maps a cell's merged parameter table onto [`BoostParams`] (see the module docs). `seed` is
/// used for `seed` and `secboost.seed` unless the table sets them. The result is checked.
pub fn boost_params(table: &toml::Table, seed: u64) -> Result<BoostParams> {
    let mut given: Vec<(&'static ParamSpec, Value)> = Vec::new();
    let mut nested: Vec<(&str, Map<String, Value>)> = Vec::new();
    for (key, value) in table {
        if RUNNER_KEYS.contains(&key.as_str()) {
            continue;
        }
        if let Some(sub) = SUB_TABLES.iter().find(|s| **s == key) {
            let Value::Object(obj) = json(value, key)? else {
                return Err(fail(format!("parameter `{key}` must be a table")));
            };
            nested.push((sub, obj));
            continue;
        }
        let Some(p) = Surface::toml_parameter(key) else {
            let names = flat_keys().into_iter().chain(SUB_TABLES.iter().copied()).collect::<Vec<_>>().join(", ");
            return Err(fail(format!("unknown parameter `{key}` (known: {names}, clipped, train_curve)")));
        };
        if let Some((q, _)) = given.iter().find(|(q, _)| q.name == p.name) {
            return Err(fail(format!("parameter `{key}` is `{}` again", q.toml_key.unwrap_or(q.name))));
        }
        given.push((p, json(value, key)?));
    }
    let mut top = assemble(Surface::Toml, &given)?;
    // A cell records errors and curves, which the probability calibration does not change: it is
    // off unless the cell asks for it (it costs `calibration_folds` more fits).
    if let Value::Object(c) = top.entry("calibration").or_insert_with(|| Value::Object(Map::new())) {
        c.entry("method").or_insert_with(|| Value::from("none"));
    }
    for (sub, obj) in nested {
        let Value::Object(dst) = top.entry(sub).or_insert_with(|| Value::Object(Map::new())) else {
            return Err(fail(format!("parameter `{sub}` must be a table")));
        };
        for (k, v) in obj {
            if dst.contains_key(&k) {
                return Err(fail(format!(
                    "parameter `{sub}.{k}` sets `{sub}.{k}`, which another key of the same cell already sets"
                )));
            }
            dst.insert(k, v);
        }
    }
    top.entry("seed").or_insert_with(|| Value::from(seed));
    let top_seed = top["seed"].clone();
    if let Value::Object(sb) = top.entry("secboost").or_insert_with(|| Value::Object(Map::new())) {
        sb.entry("seed").or_insert(top_seed);
    }
    let mut known = json(BoostParams::default(), "defaults")?;
    if let Value::Object(top) = &mut known {
        // Not written at its default (1).
        top.insert("learning_rate".into(), Value::from(1.0));
    }
    if let Some(Value::Object(ta)) = known.get_mut("t_adaboost") {
        // The older spelling of `preset = "authors"` (BoostParams::from_json maps it).
        ta.insert("authors_mode".into(), Value::Bool(false));
        // `t = "auto"` (omitted from the default's serialisation).
        ta.insert("auto_t".into(), Value::Null);
        ta.insert("t_schedule".into(), Value::Null);
    }
    if let Some(Value::Object(mc)) = known.get_mut("multiclass") {
        // MR's label-set threshold (omitted at its default `auto`).
        mc.insert("label_threshold".into(), Value::Null);
    }
    check_known(&top, &known, "")?;
    // Presets first, then the cell's own values over them.
    let (p, _) = BoostParams::from_json(&Value::Object(top)).map_err(|e| fail(format!("invalid parameters: {e}")))?;
    p.check()?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Criterion, GrowOrder};
    use crate::Algorithm;

    fn table(s: &str) -> toml::Table {
        s.parse().expect("toml")
    }

    #[test]
    fn cells_leave_calibration_off_unless_they_set_it() {
        use crate::params::CalibrationMethod;
        let off = boost_params(&table("algo = \"real-adaboost\""), 1).expect("valid");
        assert_eq!(off.calibration.method, CalibrationMethod::None);
        let on = boost_params(&table("algo = \"real-adaboost\"\ncalibration = \"sigmoid\"\ncalibration_folds = 5"), 1)
            .expect("valid");
        assert_eq!((on.calibration.method, on.calibration.folds), (CalibrationMethod::Sigmoid, 5));
        // The command line's default is calibrated.
        assert_eq!(BoostParams::default().calibration.method, CalibrationMethod::Sigmoid);
    }

    #[test]
    fn aliases_and_nested_tables_map_onto_boost_params() {
        let p = boost_params(
            &table(
                "algo = \"t-adaboost\"\nrounds = 20\nt = 0.6\nmax_nodes = 15\ncriterion = \"tempered:t=0.6\"\n\
                 clipped = true\ntree = { grow_order = \"count\" }\nauthors_mode = true",
            ),
            7,
        )
        .expect("valid");
        assert_eq!(p.algorithm, Algorithm::TAdaBoost);
        assert_eq!(p.n_estimators, 20);
        assert_eq!(p.t_adaboost.t, 0.6);
        assert_eq!(p.preset, Some(crate::boost::preset::Preset::Authors));
        assert_eq!(p.tree.max_split_candidates, Some(2000), "the preset's");
        assert_eq!(p.tree.max_nodes, Some(15));
        assert_eq!(p.tree.grow_order, GrowOrder::Count);
        assert_eq!(p.tree.criterion, Some(Criterion::Tempered { t: 0.6 }));
        assert_eq!((p.seed, p.secboost.seed), (7, 7));

        let s = boost_params(
            &table(
                "algo = \"secboost\"\nloss = \"spring:Q=500\"\ndelta_init = 0.1\nsecboost_alpha = \"solve\"\nseed = 3",
            ),
            7,
        )
        .expect("valid");
        assert_eq!(s.secboost.loss.to_string(), "spring:Q=500");
        assert_eq!((s.secboost.delta_init, s.seed, s.secboost.seed), (0.1, 3, 3));
        assert_eq!(serde_json::to_value(s.secboost.alpha_rule).expect("json"), "solve");

        let m = boost_params(&table("algo = \"real-adaboost-mh\"\nsmoothing = 0.01"), 0).expect("valid");
        assert_eq!((m.adaboost.smoothing, m.multiclass.eps), (Some(0.01), Some(0.01)));
        // The algorithm names its multi-class variant in the parameters too (as on the CLI).
        let d = boost_params(&table("algorithm = \"adaboost-mh\""), 0).expect("valid");
        assert_eq!(d.multiclass.variant, crate::params::multiclass::MultiVariant::MhDiscrete);
    }

    /// Every cell of every experiment spec shipped in `experiments/` has valid parameters.
    #[test]
    fn shipped_experiment_specs_have_valid_parameters() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).expect("experiments/") {
            let path = entry.expect("entry").path();
            let spec = crate::experiment::ExperimentSpec::from_file(&path).expect("a valid spec");
            for cell in spec.cells().expect("cells") {
                boost_params(&cell.params, cell.seed)
                    .unwrap_or_else(|e| panic!("{}: setting `{}`: {e}", path.display(), cell.setting));
                n += 1;
            }
        }
        assert!(n > 1000, "{n} cells");
    }

    /// Every registry parameter with a TOML key is accepted, under its key and its name.
    #[test]
    fn every_registry_parameter_with_a_toml_key_is_accepted() {
        use crate::params::registry::PARAMETERS;
        for p in PARAMETERS {
            let Some(key) = p.toml_key else { continue };
            if let Some((sub, field)) = key.split_once('.') {
                let defaults = serde_json::to_value(BoostParams::default()).expect("json");
                assert!(
                    SUB_TABLES.contains(&sub) && defaults[sub].get(field).is_some(),
                    "parameter `{}`: TOML key `{key}` is not a field of a sub-table",
                    p.name
                );
                continue;
            }
            for k in [key, p.name] {
                assert_eq!(Surface::toml_parameter(k).map(|q| q.name), Some(p.name), "TOML key `{k}`");
            }
        }
        let p = boost_params(&table("learning_rate = 0.5\nsecboost = { max_halvings = 100 }"), 0).expect("valid");
        assert_eq!((p.learning_rate, p.secboost.max_halvings), (0.5, 100));
    }

    #[test]
    fn bad_parameters_are_refused() {
        let err = |s: &str| boost_params(&table(s), 0).expect_err("invalid").to_string();
        assert!(err("tt = 1").contains("unknown parameter `tt`"));
        assert!(err("tree = { max_node = 3 }").contains("unknown parameter `tree.max_node`"));
        assert!(err("max_nodes = 15\ntree = { max_nodes = 5 }").contains("already sets"));
        assert!(err("algo = \"t-adaboost\"\nt = 2.5").contains("t"));
        assert!(err("algo = \"nope\"").contains("algorithm") || err("algo = \"nope\"").contains("invalid"));
        assert!(err("criterion = \"tempered:t=x\"").contains("unknown criterion"));
    }
}
