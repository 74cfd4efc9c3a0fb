//! The training-parameter flags, built from the parameter registry.
//!
//! No flag is written here: every registry parameter with a CLI flag
//! (`boostlab::params::registry::PARAMETERS`) becomes an option of `train` (and, except the
//! validation ones, of `cv`), under the help heading of its topic, with its doc, range and
//! default as help, a typed value parser (so that `--rounds x` is refused by name) and, for a
//! choice, its possible values (which the shell completions offer). The values given are handed
//! to `boostlab::params::surface`, which converts, range-checks and places them exactly as it
//! does for an experiment's TOML keys.

use anyhow::Result;
use boostlab::params::registry::{Kind, ParamSpec, Range, Topic, PARAMETERS};
use boostlab::params::surface::{self, Surface};
use boostlab::BoostParams;
use clap::builder::PossibleValuesParser;
use clap::{value_parser, Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use serde_json::Value;

/// Which flags a group holds: the validation parameters (`train` only: `cv` has no validation
/// data) or all the others.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Boost,
    Validation,
}

impl Group {
    fn holds(self, p: &ParamSpec) -> bool {
        p.cli_flag.is_some() && ((p.topic == Topic::Validation) == (self == Group::Validation))
    }

    fn parameters(self) -> impl Iterator<Item = &'static ParamSpec> {
        PARAMETERS.iter().filter(move |p| self.holds(p))
    }

    fn args(self) -> impl Iterator<Item = Arg> {
        self.parameters().map(arg)
    }

    /// The flags given, as text (the surface converts them).
    fn given(self, m: &ArgMatches) -> Vec<(&'static ParamSpec, Value)> {
        self.parameters()
            .filter_map(|p| match p.kind {
                Kind::Bool => {
                    m.try_get_one::<bool>(p.name).ok().flatten().filter(|b| **b).map(|_| (p, Value::Bool(true)))
                }
                _ => m.try_get_raw(p.name).ok().flatten().map(|raw| {
                    let text: Vec<String> = raw.map(|v| v.to_string_lossy().into_owned()).collect();
                    (p, Value::String(text.join(",")))
                }),
            })
            .collect()
    }
}

/// `--t`: a temperature or `auto`.
fn parse_t(s: &str) -> std::result::Result<String, String> {
    if s.trim().eq_ignore_ascii_case("auto") || s.trim().parse::<f64>().is_ok() {
        Ok(s.to_string())
    } else {
        Err(format!("expected a temperature in [0, 2) or `auto`, got `{s}`"))
    }
}

/// An integer flag: a count that fits 64 bits, or a negative integer, which the parameter
/// conversion refuses with the parameter's range (`--rounds -1`: "expected an integer ≥ 1").
fn parse_count(s: &str) -> std::result::Result<String, String> {
    let negative = s.trim().strip_prefix('-').is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    match s.trim().parse::<u64>() {
        Ok(_) => Ok(s.to_string()),
        Err(_) if negative => Ok(s.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// The help line of a parameter: the algorithms it applies to, its doc, its values and default.
fn help(p: &ParamSpec) -> String {
    let mut h = String::new();
    if let Some(algos) = p.specific_algorithms() {
        h.push_str(&format!("[{algos}] "));
    }
    h.push_str(p.doc);
    match (p.kind, p.range) {
        (Kind::Choice(_) | Kind::Bool, _) | (_, Range::Any) => {}
        (_, range) => h.push_str(&format!(" Values: {}.", range.describe())),
    }
    if p.kind != Kind::Bool {
        h.push_str(&format!(" [default: {}]", p.default));
    }
    h
}

fn arg(p: &'static ParamSpec) -> Arg {
    let flag = p.cli_flag.unwrap_or(p.name);
    let a = Arg::new(p.name).long(flag).help(help(p)).help_heading(p.topic.heading());
    match p.kind {
        Kind::Bool => a.action(ArgAction::SetTrue),
        Kind::Integer => a.value_name("N").value_parser(parse_count).allow_negative_numbers(true),
        Kind::Number if p.name == "t" => a.value_name("T|auto").value_parser(parse_t).allow_negative_numbers(true),
        Kind::Number => a.value_name("X").value_parser(value_parser!(f64)).allow_negative_numbers(true),
        Kind::Choice(names) => a.value_name("NAME").value_parser(PossibleValuesParser::new(names.iter().copied())),
        Kind::Text => a.value_name("SPEC").allow_hyphen_values(true),
        Kind::NumberList => a
            .value_name("X,...")
            .action(ArgAction::Append)
            .value_delimiter(',')
            .value_parser(value_parser!(f64))
            .allow_negative_numbers(true),
    }
}

/// Boosting parameters shared by `train` and `cv`: every registry parameter with a flag, except
/// the validation ones.
///
/// Every option is optional: what is not given takes the preset's value (`--preset`,
/// `--authors-mode`) or else the library's default, and what is given always wins.
#[derive(Debug, Clone, Default)]
pub struct BoostArgs {
    given: Vec<(&'static ParamSpec, Value)>,
}

/// Parameters of training on validation data: only `train` has validation data (`--valid`).
#[derive(Debug, Clone, Default)]
pub struct ValidationArgs {
    given: Vec<(&'static ParamSpec, Value)>,
}

impl BoostArgs {
    fn text(&self, name: &str) -> Option<&str> {
        self.given.iter().find(|(p, _)| p.name == name).and_then(|(_, v)| v.as_str())
    }

    /// The random seed (`--seed`, 0 by default).
    pub fn seed(&self) -> u64 {
        self.text("seed").and_then(|s| s.parse().ok()).unwrap_or(0)
    }

    /// The number of rounds given (`--rounds`).
    pub fn rounds(&self) -> Option<usize> {
        self.text("n_estimators").and_then(|s| s.parse().ok())
    }

    /// Sets the algorithm unless `--algo` was given (a warm start continues its model's).
    pub fn default_algorithm(&mut self, name: &str) {
        if self.text("algorithm").is_none() {
            let p = boostlab::params::registry::spec("algorithm").expect("the registry has `algorithm`");
            self.given.push((p, Value::from(name)));
        }
    }

    /// The library parameters these flags describe, without validation options.
    pub fn params(&self) -> Result<BoostParams> {
        Ok(self.params_and_sources(&ValidationArgs::default())?.0)
    }

    /// The library parameters these flags and the validation flags describe, checked, and the
    /// dotted paths of the parameters the user gave (for [`BoostParams::sources`]). The preset is
    /// applied first, the flags over it.
    pub fn params_and_sources(&self, validation: &ValidationArgs) -> Result<(BoostParams, Vec<String>)> {
        let given: Vec<_> = self.given.iter().chain(&validation.given).cloned().collect();
        Ok(surface::boost_params(Surface::Cli, &given)?)
    }
}

macro_rules! registry_args {
    ($ty:ident, $group:expr) => {
        impl FromArgMatches for $ty {
            fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
                Ok(Self { given: $group.given(m) })
            }

            fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
                *self = Self::from_arg_matches(m)?;
                Ok(())
            }
        }

        impl Args for $ty {
            fn augment_args(cmd: Command) -> Command {
                cmd.args($group.args())
            }

            fn augment_args_for_update(cmd: Command) -> Command {
                Self::augment_args(cmd)
            }
        }
    };
}

registry_args!(BoostArgs, Group::Boost);
registry_args!(ValidationArgs, Group::Validation);
