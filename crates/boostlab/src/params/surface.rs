//! Parameters as a surface names them → the parameters' JSON.
//!
//! The command line and an experiment's TOML table do not list the parameters themselves: a
//! flag or a key is looked up in the registry ([`super::registry::PARAMETERS`]), and [`assemble`]
//! turns the values given into the partial JSON object that [`BoostParams::from_json`] lays over
//! the preset and the defaults. Each value is converted by its registry entry: its kind (integer,
//! number, flag, choice, list, or text with its own syntax), its range and the fields it sets.
//! Only four parameters are handled by name, because their value does more than fill fields:
//! the algorithm (which also names the multi-class variant), `t = auto` (with `t_grid` and
//! `t_folds`), and `preset` / `authors_mode`.
//!
//! A new parameter therefore needs a registry entry and nothing here; a new text syntax needs its
//! parser named in the entry's [`ParamSpec::syntax`].

use serde_json::{Map, Value};

use super::registry::{Kind, ParamSpec, Range, PARAMETERS};
use super::{Algorithm, BoostParams, Preset};
use crate::error::{shown, Error, Result};

/// Where parameters are given; decides how a parameter is spelled in an error message and
/// whether parameters of another algorithm are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// `boostlab train` / `cv` flags: a parameter of another algorithm is an error.
    Cli,
    /// An experiment's TOML parameter table: one table serves every algorithm of a grid, so a
    /// parameter of another algorithm is accepted (and that algorithm ignores it).
    Toml,
}

impl Surface {
    /// The parameter as the user wrote it: `--max-leaves` or `` `max_leaves` ``.
    pub fn spell(self, p: &ParamSpec) -> String {
        match self {
            Surface::Cli => format!("--{}", p.cli_flag.unwrap_or(p.name)),
            Surface::Toml => format!("`{}`", p.toml_key.unwrap_or(p.name)),
        }
    }

    /// The registry entry a TOML key names: its TOML key, its name, or its CLI flag with
    /// underscores (`secboost_alpha`). Keys of sub-tables (`secboost.max_halvings`) are not flat
    /// keys.
    pub fn toml_parameter(key: &str) -> Option<&'static ParamSpec> {
        PARAMETERS.iter().find(|p| {
            let Some(k) = p.toml_key else { return false };
            !k.contains('.') && (k == key || p.name == key || p.cli_flag.is_some_and(|f| f.replace('-', "_") == key))
        })
    }
}

/// A registry entry by name (only for the names this module handles itself, which the registry
/// is tested to hold).
fn entry(name: &str) -> &'static ParamSpec {
    super::registry::spec(name).unwrap_or_else(|| unreachable!("the registry holds `{name}`"))
}

/// The JSON text of a user's value, shortened.
fn shown_value(v: &Value) -> String {
    match v {
        Value::String(s) => shown(s),
        other => shown(&other.to_string()),
    }
}

/// The error of a value that its parameter cannot take (the same words on every surface).
fn invalid(p: &ParamSpec, expected: &str, v: &Value) -> Error {
    Error::param(p.name, expected, shown_value(v))
}

/// The smallest value an integer parameter takes (its range's lower bound, and at least 0), for
/// the message that refuses a negative or malformed count.
fn least_integer(p: &ParamSpec) -> u64 {
    match p.range {
        Range::Interval { min, min_open, .. } if min.is_finite() && min > 0.0 => {
            let least = if min_open { min.floor() + 1.0 } else { min.ceil() };
            least as u64
        }
        _ => 0,
    }
}

fn number(p: &ParamSpec, v: &Value) -> Result<f64> {
    let x = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        _ => None,
    };
    x.ok_or_else(|| invalid(p, "a number", v))
}

fn check_range(p: &ParamSpec, x: f64) -> Result<()> {
    // JSON has no NaN or ∞ (serde would write `null`), so every number must be finite; a range in
    // words accepts every finite number here (the parameter's own `check` reads it).
    if !x.is_finite() {
        return Err(invalid(p, "a finite number", &Value::String(x.to_string())));
    }
    p.check_number(x)
}

/// Converts one given value by its registry entry.
fn convert(p: &ParamSpec, v: &Value) -> Result<Value> {
    Ok(match p.kind {
        Kind::Integer => {
            let n = match v {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => s.trim().parse::<u64>().ok(),
                _ => None,
            };
            Value::from(n.ok_or_else(|| invalid(p, &format!("an integer ≥ {}", least_integer(p)), v))?)
        }
        Kind::Number => {
            let x = number(p, v)?;
            check_range(p, x)?;
            Value::from(x)
        }
        Kind::Bool => match v {
            Value::Bool(b) => Value::Bool(*b),
            Value::String(s) if s == "true" || s == "false" => Value::Bool(s == "true"),
            _ => return Err(invalid(p, "true or false", v)),
        },
        Kind::Choice(names) => match v.as_str() {
            Some(s) if names.contains(&s) => Value::String(s.to_string()),
            _ => return Err(invalid(p, &format!("one of {}", names.join(", ")), v)),
        },
        Kind::NumberList => {
            let items: Vec<Value> = match v {
                Value::Array(a) => a.clone(),
                Value::String(s) => s.split(',').map(|x| Value::String(x.to_string())).collect(),
                _ => return Err(invalid(p, "a list of numbers", v)),
            };
            let xs = items.iter().map(|x| number(p, x)).collect::<Result<Vec<f64>>>()?;
            if let Some(x) = xs.iter().find(|x| !x.is_finite()) {
                return Err(invalid(p, "finite numbers", &Value::String(x.to_string())));
            }
            Value::from(xs)
        }
        Kind::Text => match (v, p.syntax) {
            (Value::String(s), Some(parse)) => parse(s)?,
            (Value::String(s), None) => Value::String(s.clone()),
            // A structured value (a TOML table) is the parameter's JSON form, checked by serde.
            (other, _) => other.clone(),
        },
    })
}

/// Sets `path` (`a` or `a.b`) in `obj`; refuses a path that another parameter already set.
fn set(obj: &mut Map<String, Value>, path: &str, v: Value, spelled: &str) -> Result<()> {
    let (table, field) = match path.split_once('.') {
        Some((a, b)) => {
            let sub = obj.entry(a.to_string()).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(m) = sub else { unreachable!("sub-tables are objects") };
            (m, b)
        }
        None => (obj, path),
    };
    if table.contains_key(field) {
        return Err(Error::Failed(format!("{spelled} sets `{path}`, which another parameter given already sets")));
    }
    table.insert(field.to_string(), v);
    Ok(())
}

/// Turns parameters given on `surface` into the partial parameters' JSON (see the module docs):
/// every value is converted and range-checked by its registry entry, a parameter of another
/// algorithm is refused on the command line, and two parameters setting one field are refused.
/// The result is ready for [`BoostParams::from_json`] and [`BoostParams::check`].
pub fn assemble(surface: Surface, given: &[(&'static ParamSpec, Value)]) -> Result<Map<String, Value>> {
    let find = |name: &str| given.iter().find(|(p, _)| p.name == name).map(|(_, v)| v);
    let algo = entry("algorithm");
    let algorithm = match find("algorithm") {
        None => Algorithm::default(),
        Some(v) => match v.as_str() {
            Some(s) => Algorithm::parse(s)?,
            None => return Err(invalid(algo, "an algorithm's name", v)),
        },
    };
    let auto_t = find("t").and_then(Value::as_str).is_some_and(|s| s.trim().eq_ignore_ascii_case("auto"));
    let mut obj = Map::new();
    let mut preset: Option<(Preset, String)> = None;
    for (p, v) in given {
        let spelled = surface.spell(p);
        if surface == Surface::Cli && !p.algorithms.contains(&algorithm) {
            let names: Vec<&str> = p.algorithms.iter().map(|a| a.name()).collect();
            return Err(Error::Failed(format!(
                "{spelled} applies to {} {}, not {}",
                surface.spell(algo),
                names.join(" / "),
                algorithm.name()
            )));
        }
        match p.name {
            "algorithm" => {
                set(&mut obj, "algorithm", Value::from(algorithm.name()), &spelled)?;
                if let Some(variant) = algorithm.multi_variant() {
                    let variant = serde_json::to_value(variant).map_err(|e| Error::Failed(e.to_string()))?;
                    set(&mut obj, "multiclass.variant", variant, &spelled)?;
                }
            }
            "t" if auto_t => {
                let mut a = serde_json::to_value(super::tadaboost::AutoT::default())
                    .map_err(|e| Error::Failed(e.to_string()))?;
                for name in ["t_grid", "t_folds"] {
                    if let Some(v) = find(name) {
                        let q = entry(name);
                        let field = q.paths[0].rsplit('.').next().unwrap_or(name);
                        a[field] = convert(q, v)?;
                    }
                }
                set(&mut obj, "t_adaboost.auto_t", a, &spelled)?;
            }
            "t" => {
                let x = number(p, v).map_err(|_| invalid(p, "a temperature in [0, 2) or auto", v))?;
                check_range(p, x)?;
                set(&mut obj, "t_adaboost.t", Value::from(x), &spelled)?;
            }
            "t_grid" | "t_folds" if !auto_t => {
                let t = surface.spell(entry("t"));
                return Err(Error::Failed(format!("{spelled} goes with {t} auto")));
            }
            // Read with `t = auto` above.
            "t_grid" | "t_folds" => {}
            "preset" | "authors_mode" => {
                let named = match v {
                    Value::Bool(false) => continue,
                    Value::Bool(true) => Preset::Authors,
                    Value::String(s) if p.name == "preset" => Preset::parse(s)?,
                    _ => {
                        let expected = if p.name == "preset" { "a preset's name" } else { "true or false" };
                        return Err(invalid(p, expected, v));
                    }
                };
                match &preset {
                    Some((other, by)) if *other != named => {
                        return Err(Error::Failed(format!(
                            "{spelled} is the {} preset, but {by} names the {} preset",
                            named.name(),
                            other.name()
                        )))
                    }
                    Some(_) => {}
                    None => {
                        set(&mut obj, "preset", Value::from(named.name()), &spelled)?;
                        preset = Some((named, spelled));
                    }
                }
            }
            _ => {
                let value = convert(p, v)?;
                for path in p.paths {
                    set(&mut obj, path, value.clone(), &spelled)?;
                }
            }
        }
    }
    if find("t_schedule").is_some() && find("t").is_some() {
        let (s, t) = (surface.spell(entry("t_schedule")), surface.spell(entry("t")));
        return Err(Error::Failed(format!("{s} replaces {t}: give one of them")));
    }
    Ok(obj)
}

/// [`assemble`], then the parameters (the preset first, the given values over it), checked; with
/// the dotted paths the user gave (for [`BoostParams::sources`]).
pub fn boost_params(surface: Surface, given: &[(&'static ParamSpec, Value)]) -> Result<(BoostParams, Vec<String>)> {
    let obj = assemble(surface, given)?;
    let (p, explicit) = BoostParams::from_json(&Value::Object(obj))?;
    p.check()?;
    Ok((p, explicit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::registry::spec;

    fn given(pairs: &[(&str, Value)]) -> Vec<(&'static ParamSpec, Value)> {
        pairs.iter().map(|(n, v)| (spec(n).expect("a registry name"), v.clone())).collect()
    }

    fn cli(pairs: &[(&str, Value)]) -> Result<BoostParams> {
        boost_params(Surface::Cli, &given(pairs)).map(|p| p.0)
    }

    #[test]
    fn values_reach_every_path_their_entry_declares() {
        let p = cli(&[
            ("algorithm", "real-adaboost-mh".into()),
            ("smoothing", "0.01".into()),
            ("seed", "7".into()),
            ("max_nodes", "15".into()),
        ])
        .expect("valid");
        assert_eq!((p.adaboost.smoothing, p.multiclass.eps), (Some(0.01), Some(0.01)));
        assert_eq!((p.seed, p.secboost.seed), (7, 7));
        assert_eq!(p.tree.max_nodes, Some(15));
        assert_eq!(p.multiclass.variant, crate::params::multiclass::MultiVariant::MhReal);
    }

    #[test]
    fn every_choice_and_syntax_deserialises_into_its_field() {
        for p in PARAMETERS {
            if matches!(p.name, "algorithm" | "preset" | "t" | "t_grid" | "t_folds" | "authors_mode") {
                continue;
            }
            let algo = p.algorithms[0].name();
            let samples: Vec<&str> = match p.kind {
                Kind::Choice(names) => names.to_vec(),
                Kind::Text => match p.name {
                    "criterion" => vec!["gini", "tempered:t=0.5"],
                    "loss" => vec!["logistic", "spring:Q=500"],
                    "code" => vec!["one-vs-all", "random:5"],
                    "t_schedule" => vec!["linear:0.2:0.8"],
                    "monotone_constraints" => vec!["x1:1,x3:-1", "1,0,-1"],
                    "interaction_constraints" => vec!["x1,x2;x3", "x1"],
                    other => panic!("add samples of the text parameter `{other}`"),
                },
                _ => continue,
            };
            for s in samples {
                // `loss` as an evaluation metric is SecBoost's only.
                let algo = if p.name == "eval_metric" && s == "loss" { "secboost" } else { algo };
                let r = cli(&[("algorithm", algo.into()), (p.name, s.into())]);
                assert!(r.is_ok(), "{} = {s} on {algo}: {:?}", p.name, r.err());
            }
        }
    }

    #[test]
    fn auto_t_collects_its_grid_and_folds() {
        let p = cli(&[
            ("algorithm", "t-adaboost".into()),
            ("t", "auto".into()),
            ("t_grid", "0,0.5,1".into()),
            ("t_folds", "4".into()),
        ])
        .expect("valid");
        let a = p.t_adaboost.auto_t.expect("auto t");
        assert_eq!((a.grid, a.folds), (vec![0.0, 0.5, 1.0], 4));
    }

    #[test]
    fn mistakes_are_refused_naming_the_parameter() {
        let err = |pairs: &[(&str, Value)]| cli(pairs).expect_err("invalid").to_string();
        assert_eq!(err(&[("t", "0.5".into())]), "--t applies to --algo t-adaboost, not adaboost");
        let t_ada = ("algorithm", Value::from("t-adaboost"));
        assert_eq!(err(&[t_ada.clone(), ("t", "0.5".into()), ("t_grid", "0,1".into())]), "--t-grid goes with --t auto");
        assert!(
            err(&[t_ada.clone(), ("t", "0.5".into()), ("t_schedule", "linear:0:1".into())]).contains("replaces --t")
        );
        assert!(err(&[t_ada.clone(), ("t", "2.5".into())]).contains("[0, 2)"));
        assert_eq!(
            err(&[("learning_rate", "1.5".into())]),
            "invalid parameter `learning_rate`: expected a number in (0, 1], got 1.5"
        );
        assert!(err(&[("learning_rate", "nan".into())]).contains("finite"));
        assert_eq!(
            err(&[("n_estimators", "-3".into())]),
            "invalid parameter `n_estimators`: expected an integer ≥ 1, got -3"
        );
        assert!(err(&[("seed", "-1".into())]).contains("expected an integer ≥ 0, got -1"));
        assert!(err(&[("alpha", "fast".into())]).contains("one of discrete, one"));
        assert!(err(&[("criterion", "tempered:t=x".into())]).contains("unknown criterion"));
        let authors =
            cli(&[t_ada, ("preset", "authors".into()), ("authors_mode", true.into())]).expect("the same preset");
        assert_eq!(authors.preset, Some(Preset::Authors));
    }

    #[test]
    fn toml_keys_find_their_entries_by_key_name_and_flag() {
        assert_eq!(Surface::toml_parameter("rounds").map(|p| p.name), Some("n_estimators"));
        assert_eq!(Surface::toml_parameter("n_estimators").map(|p| p.name), Some("n_estimators"));
        assert_eq!(Surface::toml_parameter("algo").map(|p| p.name), Some("algorithm"));
        assert_eq!(Surface::toml_parameter("algorithm").map(|p| p.name), Some("algorithm"));
        assert_eq!(Surface::toml_parameter("secboost_alpha").map(|p| p.name), Some("alpha_rule"));
        assert_eq!(Surface::toml_parameter("max_halvings").map(|p| p.name), None, "a sub-table key");
        assert_eq!(Surface::toml_parameter("early_stopping_rounds").map(|p| p.name), None, "not in TOML");
    }
}
