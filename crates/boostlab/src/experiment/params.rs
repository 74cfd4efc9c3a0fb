//! A cell's parameter table → [`BoostParams`].
//!
//! A cell's merged parameter table deserialises into [`BoostParams`] through serde: the nested
//! tables `tree`, `adaboost`, `t_adaboost`, `secboost`, `multiclass` and the top-level fields
//! (`algorithm`, `n_estimators`, `max_bins`, `seed`) are written exactly as in a model file, and
//! the flat aliases of [`ALIASES`] (`algo`, `rounds`, `t`, `max_nodes`, `loss`, `delta_init`, ...)
//! are moved into their sub-table first. The only keys that are not training parameters are the
//! [`RUNNER_KEYS`]: `clipped` (record the clipped model of t-AdaBoost as the cell's primary
//! `test_error`; both models are always recorded) and `train_curve` (false skips the per-round
//! training error).
//!
//! To add an option: a field of [`BoostParams`] is already reachable through its sub-table; give
//! it a flat alias by adding a row to [`ALIASES`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::tree::Criterion;
use crate::BoostParams;

/// Flat aliases accepted in a cell's parameter table: `(alias, sub-table, field)`; an empty
/// sub-table means a top-level field of [`BoostParams`].
pub const ALIASES: &[(&str, &str, &str)] = &[
    ("algo", "", "algorithm"),
    ("algorithm", "", "algorithm"),
    ("rounds", "", "n_estimators"),
    ("n_estimators", "", "n_estimators"),
    ("max_bins", "", "max_bins"),
    ("seed", "", "seed"),
    ("learning_rate", "", "learning_rate"),
    ("max_leaves", "tree", "max_leaves"),
    ("max_nodes", "tree", "max_nodes"),
    ("max_depth", "tree", "max_depth"),
    ("min_leaf_weight", "tree", "min_leaf_weight"),
    ("grow_order", "tree", "grow_order"),
    ("criterion", "tree", "criterion"),
    ("pure_leaves", "tree", "pure_leaves"),
    ("max_split_candidates", "tree", "max_split_candidates"),
    ("alpha", "adaboost", "alpha"),
    ("smoothing", "adaboost", "smoothing"),
    ("t", "t_adaboost", "t"),
    ("t_grid", "t_adaboost", "auto_t"),
    ("t_folds", "t_adaboost", "auto_t"),
    ("t_schedule", "t_adaboost", "t_schedule"),
    ("leaf_values", "t_adaboost", "leaf_values"),
    ("learner_weights", "t_adaboost", "learner_weights"),
    ("overflow", "t_adaboost", "overflow"),
    ("authors_mode", "t_adaboost", "authors_mode"),
    ("preset", "", "preset"),
    ("split_ties", "tree", "split_ties"),
    ("loss", "secboost", "loss"),
    ("delta_init", "secboost", "delta_init"),
    ("h0", "secboost", "h0"),
    ("v0", "secboost", "v0"),
    ("secboost_alpha", "secboost", "alpha_rule"),
    ("alpha_rule", "secboost", "alpha_rule"),
    ("epsilon", "secboost", "epsilon"),
    ("oracle", "secboost", "oracle"),
    ("solve_alpha", "secboost", "solve_alpha"),
    ("kappa", "secboost", "kappa"),
    ("oracle_precision", "secboost", "oracle_precision"),
    ("eps", "multiclass", "eps"),
    ("code", "multiclass", "code"),
    ("decode", "multiclass", "decode"),
    ("single_label_start", "multiclass", "single_label_start"),
    ("label_threshold", "multiclass", "label_threshold"),
];

const SUB_TABLES: &[&str] = &["tree", "adaboost", "t_adaboost", "secboost", "multiclass"];

/// Keys of a cell's table that steer the cell runner rather than the booster.
pub const RUNNER_KEYS: &[&str] = &["clipped", "train_curve"];

fn fail(msg: impl Into<String>) -> Error {
    Error::Failed(msg.into())
}

fn json(v: impl serde::Serialize, what: &str) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| fail(format!("parameter `{what}`: {e}")))
}

/// A split criterion by name: `empirical`, `gini`, `entropy`, `matusita` or `tempered:t=T` (the
/// CLI's `--criterion` syntax).
pub fn parse_criterion(s: &str) -> Result<Criterion> {
    Ok(match s {
        "empirical" => Criterion::Empirical,
        "gini" => Criterion::Gini,
        "entropy" => Criterion::Entropy,
        "matusita" => Criterion::Matusita,
        other => {
            let t = other.strip_prefix("tempered:t=").and_then(|t| t.parse::<f64>().ok()).ok_or_else(|| {
                fail(format!(
                    "unknown criterion '{other}': expected empirical, gini, entropy, matusita or tempered:t=T"
                ))
            })?;
            // Checked here: a non-finite t would reach the parameters as JSON `null`.
            let c = Criterion::Tempered { t };
            c.check()?;
            c
        }
    })
}

fn set_unique(obj: &mut Map<String, Value>, field: &str, v: Value, from: &str) -> Result<()> {
    if obj.contains_key(field) {
        return Err(fail(format!(
            "parameter `{from}` sets `{field}`, which another key of the same cell already sets"
        )));
    }
    obj.insert(field.to_string(), v);
    Ok(())
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

/// Maps a cell's merged parameter table onto [`BoostParams`] (see the module docs). `seed` is
/// used for `seed` and `secboost.seed` unless the table sets them. The result is checked.
pub fn boost_params(table: &toml::Table, seed: u64) -> Result<BoostParams> {
    let mut top = Map::new();
    let mut subs: HashMap<&str, Map<String, Value>> = HashMap::new();
    for (key, value) in table {
        if RUNNER_KEYS.contains(&key.as_str()) {
            continue;
        }
        let mut v = json(value, key)?;
        if let Some(sub) = SUB_TABLES.iter().find(|s| **s == key) {
            let Value::Object(obj) = v else { return Err(fail(format!("parameter `{key}` must be a table"))) };
            let dst = subs.entry(sub).or_default();
            for (k, v) in obj {
                set_unique(dst, &k, v, &format!("{key}.{k}"))?;
            }
            continue;
        }
        let Some(&(_, sub, field)) = ALIASES.iter().find(|a| a.0 == key) else {
            let names: Vec<&str> = ALIASES.iter().map(|a| a.0).chain(SUB_TABLES.iter().copied()).collect();
            return Err(fail(format!("unknown parameter `{key}` (known: {}, clipped, train_curve)", names.join(", "))));
        };
        if key == "t" && v.as_str() == Some("auto") {
            // `t = "auto"` (with optional `t_grid`, `t_folds`) is t-AdaBoost's auto_t.
            let grid = table.get("t_grid").map(|g| json(g, "t_grid")).transpose()?;
            let folds = table.get("t_folds").map(|f| json(f, "t_folds")).transpose()?;
            let mut a = json(crate::select::auto_t::AutoT::default(), "t")?;
            if let Some(g) = grid {
                a["grid"] = g;
            }
            if let Some(k) = folds {
                a["folds"] = k;
            }
            set_unique(subs.entry("t_adaboost").or_default(), "auto_t", a, key)?;
            continue;
        }
        if key == "t_grid" || key == "t_folds" {
            if table.get("t").and_then(|t| t.as_str()) != Some("auto") {
                return Err(fail(format!("parameter `{key}` goes with t = \"auto\"")));
            }
            continue;
        }
        if field == "criterion" {
            if let Some(s) = v.as_str() {
                v = json(parse_criterion(s)?, key)?;
            }
        }
        if key == "smoothing" {
            // As the CLI's --smoothing: Real AdaBoost's ε and real AdaBoost.MH/MO's ε.
            set_unique(subs.entry("multiclass").or_default(), "eps", v.clone(), key)?;
        }
        if sub.is_empty() {
            set_unique(&mut top, field, v, key)?;
        } else {
            set_unique(subs.entry(sub).or_default(), field, v, key)?;
        }
    }
    top.entry("seed").or_insert_with(|| Value::from(seed));
    let sb = subs.entry("secboost").or_default();
    if !sb.contains_key("seed") {
        sb.insert("seed".into(), top["seed"].clone());
    }
    for (k, v) in subs {
        top.insert(k.to_string(), Value::Object(v));
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
    use crate::tree::GrowOrder;
    use crate::Algorithm;

    fn table(s: &str) -> toml::Table {
        s.parse().expect("toml")
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
    }

    /// Every registry parameter with a TOML key is accepted here, and every alias sets a registry
    /// parameter that has one.
    #[test]
    fn toml_keys_match_the_parameter_registry() {
        use crate::params::registry::PARAMETERS;
        let defaults = serde_json::to_value(BoostParams::default()).expect("json");
        for p in PARAMETERS {
            let Some(key) = p.toml_key else { continue };
            match key.split_once('.') {
                Some((sub, field)) => assert!(
                    SUB_TABLES.contains(&sub) && defaults[sub].get(field).is_some(),
                    "parameter `{}`: TOML key `{key}` is not a field of a sub-table",
                    p.name
                ),
                None => assert!(
                    ALIASES.iter().any(|a| a.0 == key),
                    "parameter `{}`: TOML key `{key}` is not in experiment::params::ALIASES",
                    p.name
                ),
            }
        }
        for (alias, sub, field) in ALIASES {
            let path = if sub.is_empty() { field.to_string() } else { format!("{sub}.{field}") };
            assert!(
                PARAMETERS
                    .iter()
                    .any(|p| p.toml_key.is_some() && (p.toml_key == Some(alias) || p.paths.contains(&path.as_str()))),
                "TOML alias `{alias}` sets `{path}`, which no registry parameter with a TOML key declares"
            );
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
