//! The parameter registry: every training parameter declared once, with its name on every
//! surface.
//!
//! [`PARAMETERS`] lists each parameter of [`BoostParams`](super::BoostParams) (and the surface-only
//! spellings that set one, such as `t_grid` or `authors_mode`): its type, default, valid range,
//! the algorithms it applies to, its topic, its CLI flag, Python keyword and experiment-TOML key,
//! and a one-line doc. The command line's flags and an experiment's TOML keys are built from it
//! (their values converted by [`super::surface`]); the Python estimators' constructor arguments
//! and the generated reference page `docs/reference/parameters.md` ([`markdown`]) are held to it
//! by tests, so that adding a parameter without adding it everywhere fails a test.
//!
//! Adding a parameter: its field (with `Default` and `check`) and one [`ParamSpec`] here; the CLI
//! and TOML then offer it, and the Python test names the estimators that must take it.

use std::fmt::Write as _;

use super::Algorithm;
use crate::error::{Error, Result};

/// The value type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A non-negative integer.
    Integer,
    /// A real number.
    Number,
    /// A flag.
    Bool,
    /// One of the listed names.
    Choice(&'static [&'static str]),
    /// A text value with its own syntax (given in the range).
    Text,
    /// A list of numbers.
    NumberList,
}

impl Kind {
    /// The type as written in the reference page.
    pub fn describe(self) -> String {
        match self {
            Kind::Integer => "integer".into(),
            Kind::Number => "number".into(),
            Kind::Bool => "bool".into(),
            Kind::Choice(names) => names.join(" \\| "),
            Kind::Text => "text".into(),
            Kind::NumberList => "list of numbers".into(),
        }
    }
}

/// The valid values of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Every value of the type.
    Any,
    /// A real interval; the bounds may be infinite.
    Interval {
        /// Lower bound.
        min: f64,
        /// Whether the lower bound itself is excluded.
        min_open: bool,
        /// Upper bound.
        max: f64,
        /// Whether the upper bound itself is excluded.
        max_open: bool,
    },
    /// Described in words (checked by the parameter's own `check`).
    Text(&'static str),
}

impl Range {
    /// Whether `x` lies in the range (NaN never does). Ranges in words accept every value here.
    pub fn contains(&self, x: f64) -> bool {
        match *self {
            Range::Any | Range::Text(_) => !x.is_nan(),
            Range::Interval { min, min_open, max, max_open } => {
                let above = if min_open { x > min } else { x >= min };
                let below = if max_open { x < max } else { x <= max };
                above && below
            }
        }
    }

    /// The range as written in the reference page and in error messages.
    pub fn describe(&self) -> String {
        match *self {
            Range::Any => "any".into(),
            Range::Text(s) => s.into(),
            Range::Interval { min, min_open, max, max_open } => format!(
                "{}{}, {}{}",
                if min_open { "(" } else { "[" },
                bound(min),
                bound(max),
                if max_open { ")" } else { "]" }
            ),
        }
    }
}

fn bound(x: f64) -> String {
    if x.is_infinite() {
        if x > 0.0 { "∞" } else { "−∞" }.into()
    } else {
        x.to_string()
    }
}

/// What a parameter is about: the reference page's sections and `boostlab train --help`'s groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    /// How the data are read and binned.
    Data,
    /// The tree learner.
    Tree,
    /// The boosting algorithm and its options.
    Booster,
    /// Validation data and early stopping.
    Validation,
    /// What the model outputs.
    Output,
}

impl Topic {
    /// Every topic, in the reference page's order.
    pub const ALL: [Topic; 5] = [Topic::Data, Topic::Tree, Topic::Booster, Topic::Validation, Topic::Output];

    /// The heading (also the CLI's `help_heading`).
    pub fn heading(self) -> &'static str {
        match self {
            Topic::Data => "Data",
            Topic::Tree => "Tree",
            Topic::Booster => "Booster",
            Topic::Validation => "Validation",
            Topic::Output => "Output",
        }
    }
}

/// One training parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The parameter's name.
    pub name: &'static str,
    /// The dotted paths in the parameters' JSON (model files) that it sets; empty for a surface
    /// spelling of another parameter.
    pub paths: &'static [&'static str],
    /// The value type.
    pub kind: Kind,
    /// The default, as text.
    pub default: &'static str,
    /// The valid values.
    pub range: Range,
    /// The algorithms it applies to.
    pub algorithms: &'static [Algorithm],
    /// Its topic.
    pub topic: Topic,
    /// The `boostlab train` flag (without `--`).
    pub cli_flag: Option<&'static str>,
    /// The keyword of the Python estimators.
    pub python_kw: Option<&'static str>,
    /// The algorithms whose Python estimators take `python_kw`, when not all of `algorithms`.
    pub python_for: Option<&'static [Algorithm]>,
    /// The key of an experiment's TOML parameter table.
    pub toml_key: Option<&'static str>,
    /// One line of documentation.
    pub doc: &'static str,
    /// For a text parameter: the parser of its syntax, giving the value of its JSON field (the
    /// CLI and TOML surfaces read the text through it; see [`super::surface`]).
    pub syntax: Option<fn(&str) -> Result<serde_json::Value>>,
}

impl ParamSpec {
    /// The algorithms whose Python estimators take the parameter.
    pub fn python_algorithms(&self) -> &'static [Algorithm] {
        self.python_for.unwrap_or(self.algorithms)
    }

    /// The algorithms it applies to when they are not (nearly) all of them: `t-adaboost`,
    /// `adaboost-mo, real-adaboost-mo`.
    pub fn specific_algorithms(&self) -> Option<String> {
        (self.algorithms != ALL && self.algorithms != TREES).then(|| algorithms_cell(self.algorithms))
    }

    /// Checks a number against the range: `Error::InvalidParam` naming the parameter and the
    /// range (`a number in (0, 1]`) when `value` is outside it or NaN.
    pub fn check_number(&self, value: f64) -> Result<()> {
        if self.range.contains(value) {
            Ok(())
        } else {
            Err(Error::param(self.name, format!("a number in {}", self.range.describe()), value))
        }
    }
}

use Algorithm::*;

const ALL: &[Algorithm] = &[
    AdaBoost,
    RealAdaBoost,
    AbstainingAdaBoost,
    TAdaBoost,
    SecBoost,
    AdaBoostMH,
    RealAdaBoostMH,
    AdaBoostMO,
    RealAdaBoostMO,
    AdaBoostMR,
    AdaBoostM2,
];
/// Every algorithm that grows trees with the tree learner (abstaining AdaBoost grows its own stumps).
const TREES: &[Algorithm] = &[
    AdaBoost,
    RealAdaBoost,
    TAdaBoost,
    SecBoost,
    AdaBoostMH,
    RealAdaBoostMH,
    AdaBoostMO,
    RealAdaBoostMO,
    AdaBoostMR,
    AdaBoostM2,
];
const ADA: &[Algorithm] = &[AdaBoost, RealAdaBoost, AbstainingAdaBoost];
const ADA_PY: &[Algorithm] = &[AdaBoost, RealAdaBoost];
const T_ADA: &[Algorithm] = &[TAdaBoost];
const SEC: &[Algorithm] = &[SecBoost];
const MULTI: &[Algorithm] = &[AdaBoostMH, RealAdaBoostMH, AdaBoostMO, RealAdaBoostMO, AdaBoostMR, AdaBoostM2];
const MH: &[Algorithm] = &[AdaBoostMH, RealAdaBoostMH];
const MO: &[Algorithm] = &[AdaBoostMO, RealAdaBoostMO];
const MR: &[Algorithm] = &[AdaBoostMR, AdaBoostM2];
/// The algorithms that take monotone and interaction constraints (docs/how-to/constraints.md).
const CONSTRAINED: &[Algorithm] =
    &[AdaBoost, RealAdaBoost, AbstainingAdaBoost, TAdaBoost, SecBoost, AdaBoostMH, RealAdaBoostMH];
/// The binary boosters: their probabilities are calibrated (docs/explanation/probabilities.md).
const BINARY: &[Algorithm] = &[AdaBoost, RealAdaBoost, AbstainingAdaBoost, TAdaBoost, SecBoost];
/// The algorithms with presets: the binary boosters that grow trees, whose defaults differ from
/// the papers' settings (`params::algorithm_defaults`; the `paper` preset restores those).
const PRESET: &[Algorithm] = &[AdaBoost, RealAdaBoost, TAdaBoost, SecBoost];
const SMOOTHED: &[Algorithm] = &[RealAdaBoost, AdaBoostMH, RealAdaBoostMH, AdaBoostMO, RealAdaBoostMO];

const ALGORITHM_NAMES: &[&str] = &[
    "adaboost",
    "real-adaboost",
    "abstaining-adaboost",
    "t-adaboost",
    "secboost",
    "adaboost-mh",
    "real-adaboost-mh",
    "adaboost-mo",
    "real-adaboost-mo",
    "adaboost-mr",
    "adaboost-m2",
];

const fn interval(min: f64, min_open: bool, max: f64, max_open: bool) -> Range {
    Range::Interval { min, min_open, max, max_open }
}
const AT_LEAST_1: Range = interval(1.0, false, f64::INFINITY, true);
const NON_NEGATIVE: Range = interval(0.0, false, f64::INFINITY, true);
const POSITIVE: Range = interval(0.0, true, f64::INFINITY, true);

/// A parameter with no surface and the defaults of most: fill in what differs.
const BASE: ParamSpec = ParamSpec {
    name: "",
    paths: &[],
    kind: Kind::Number,
    default: "",
    range: Range::Any,
    algorithms: ALL,
    topic: Topic::Booster,
    cli_flag: None,
    python_kw: None,
    python_for: None,
    toml_key: None,
    doc: "",
    syntax: None,
};

/// The parsers of the text parameters' syntaxes.
mod syntax {
    use serde_json::Value;

    use crate::error::{Error, Result};
    use crate::math::loss::LossSpec;
    use crate::params::multiclass::CodeSpec;
    use crate::params::tadaboost::TSchedule;
    use crate::params::Criterion;

    fn json(v: impl serde::Serialize) -> Result<Value> {
        serde_json::to_value(v).map_err(|e| Error::Failed(e.to_string()))
    }

    pub fn criterion(s: &str) -> Result<Value> {
        json(Criterion::parse(s)?)
    }

    pub fn loss(s: &str) -> Result<Value> {
        json(s.parse::<LossSpec>()?)
    }

    pub fn code(s: &str) -> Result<Value> {
        json(s.parse::<CodeSpec>()?)
    }

    pub fn t_schedule(s: &str) -> Result<Value> {
        json(TSchedule::parse(s)?)
    }

    pub fn monotone(s: &str) -> Result<Value> {
        json(crate::params::MonotoneConstraints::parse(s)?)
    }

    pub fn interaction(s: &str) -> Result<Value> {
        json(crate::params::tree::parse_interaction_constraints(s)?)
    }
}

/// Every training parameter, grouped by topic.
// Every entry ends in `..BASE`, also those that give every field, so that a new field of
// `ParamSpec` has one default.
#[allow(clippy::needless_update)]
pub static PARAMETERS: &[ParamSpec] = &[
    // ---------------------------------------------------------------------------------- data
    ParamSpec {
        name: "max_bins",
        paths: &["max_bins"],
        kind: Kind::Integer,
        default: "255",
        range: interval(2.0, false, 65535.0, false),
        topic: Topic::Data,
        cli_flag: Some("max-bins"),
        python_kw: Some("max_bins"),
        toml_key: Some("max_bins"),
        doc: "Maximum number of value bins per feature (one more bin holds missing values).",
        ..BASE
    },
    // ---------------------------------------------------------------------------------- tree
    ParamSpec {
        name: "max_leaves",
        paths: &["tree.max_leaves"],
        kind: Kind::Integer,
        default: "8 (adaboost), 32 (real-adaboost, secboost), 64 (t-adaboost), 2 otherwise",
        range: interval(2.0, false, f64::INFINITY, true),
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("max-leaves"),
        python_kw: Some("max_leaves"),
        toml_key: Some("max_leaves"),
        doc: "Maximum number of leaves per tree (2: stumps); a tree also stops at one leaf per training row. One tree's open leaves' histograms must fit in 16 GiB (checked against the data before the first round).",
        ..BASE
    },
    ParamSpec {
        name: "max_nodes",
        paths: &["tree.max_nodes"],
        kind: Kind::Integer,
        default: "none",
        range: interval(3.0, false, f64::INFINITY, true),
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("max-nodes"),
        python_kw: Some("max_nodes"),
        toml_key: Some("max_nodes"),
        doc: "Maximum number of nodes per tree (size 15 = 8 leaves); overrides max_leaves.",
        ..BASE
    },
    ParamSpec {
        name: "max_depth",
        paths: &["tree.max_depth"],
        kind: Kind::Integer,
        default: "none (unlimited)",
        range: AT_LEAST_1,
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("max-depth"),
        python_kw: Some("max_depth"),
        toml_key: Some("max_depth"),
        doc: "Maximum tree depth (the root has depth 0).",
        ..BASE
    },
    ParamSpec {
        name: "min_leaf_weight",
        paths: &["tree.min_leaf_weight"],
        kind: Kind::Number,
        default: "0",
        range: NON_NEGATIVE,
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("min-leaf-weight"),
        python_kw: Some("min_leaf_weight"),
        toml_key: Some("min_leaf_weight"),
        doc: "Minimum total weight (sum of the statistics) of each child of a split.",
        ..BASE
    },
    ParamSpec {
        name: "criterion",
        paths: &["tree.criterion"],
        kind: Kind::Text,
        default: "the booster's",
        range: Range::Text("empirical, gini, entropy, matusita or tempered:t=T (T finite, ≤ 2)"),
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("criterion"),
        python_kw: Some("criterion"),
        toml_key: Some("criterion"),
        doc: "Split criterion: the Bayes risk of a proper loss, minimised over the leaves.",
        syntax: Some(syntax::criterion),
        ..BASE
    },
    ParamSpec {
        name: "grow_order",
        paths: &["tree.grow_order"],
        kind: Kind::Choice(&["weight", "count", "gain"]),
        default: "weight",
        range: Range::Any,
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("grow-order"),
        python_kw: Some("grow_order"),
        toml_key: Some("grow_order"),
        doc: "Which leaf best-first growth splits next: heaviest, most examples, or largest gain.",
        ..BASE
    },
    ParamSpec {
        name: "max_split_candidates",
        paths: &["tree.max_split_candidates"],
        kind: Kind::Integer,
        default: "none (all)",
        range: AT_LEAST_1,
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("max-split-candidates"),
        python_kw: Some("max_split_candidates"),
        toml_key: Some("max_split_candidates"),
        doc: "Evaluate at most this many (feature, threshold) candidates per node, a seeded random subset.",
        ..BASE
    },
    ParamSpec {
        name: "pure_leaves",
        paths: &["tree.pure_leaves"],
        kind: Kind::Choice(&["auto", "allow", "forbid"]),
        default: "auto (forbid for t-adaboost, allow otherwise)",
        range: Range::Any,
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("pure-leaves"),
        python_kw: Some("pure_leaves"),
        toml_key: Some("pure_leaves"),
        doc: "Whether a split may create a leaf holding weight of one class only.",
        ..BASE
    },
    ParamSpec {
        name: "split_ties",
        paths: &["tree.split_ties"],
        kind: Kind::Choice(&["lowest", "random"]),
        default: "lowest",
        range: Range::Any,
        algorithms: TREES,
        topic: Topic::Tree,
        cli_flag: Some("split-ties"),
        python_kw: Some("split_ties"),
        toml_key: Some("split_ties"),
        doc: "Ties between equally good splits: lowest feature index first, or a seeded uniform draw.",
        ..BASE
    },
    ParamSpec {
        name: "monotone_constraints",
        paths: &["tree.monotone_constraints"],
        kind: Kind::Text,
        default: "none",
        range: Range::Text("NAME:DIR,... or DIR,... (one per feature), DIR in {-1, 0, 1}; numeric features only"),
        algorithms: CONSTRAINED,
        topic: Topic::Tree,
        cli_flag: Some("monotone"),
        python_kw: Some("monotone_constraints"),
        toml_key: Some("monotone_constraints"),
        doc: "Monotone constraints: the score never decreases (1) or never increases (-1) in each feature; see docs/how-to/constraints.md.",
        syntax: Some(syntax::monotone),
        ..BASE
    },
    ParamSpec {
        name: "interaction_constraints",
        paths: &["tree.interaction_constraints"],
        kind: Kind::Text,
        default: "none",
        range: Range::Text("groups of feature names: x1,x2;x3,x4 (a feature in no group is used only alone)"),
        algorithms: CONSTRAINED,
        topic: Topic::Tree,
        cli_flag: Some("interaction"),
        python_kw: Some("interaction_constraints"),
        toml_key: Some("interaction_constraints"),
        doc: "Interaction constraints: every path of a tree splits on features of one group; see docs/how-to/constraints.md.",
        syntax: Some(syntax::interaction),
        ..BASE
    },
    // ---------------------------------------------------------------------------------- booster
    ParamSpec {
        name: "algorithm",
        paths: &["algorithm", "multiclass.variant"],
        kind: Kind::Choice(ALGORITHM_NAMES),
        default: "adaboost",
        range: Range::Any,
        cli_flag: Some("algo"),
        toml_key: Some("algo"),
        doc: "The boosting algorithm (in Python: the estimator class).",
        ..BASE
    },
    ParamSpec {
        name: "n_estimators",
        paths: &["n_estimators"],
        kind: Kind::Integer,
        default: "300 (adaboost), 100 otherwise",
        range: AT_LEAST_1,
        cli_flag: Some("rounds"),
        python_kw: Some("n_estimators"),
        toml_key: Some("rounds"),
        doc: "Number of boosting rounds (trees); the model of that many rounds must fit in 16 GiB, at up to 1 KiB + (128 + 8 × outputs) bytes per leaf a round (checked before the first round).",
        ..BASE
    },
    ParamSpec {
        name: "learning_rate",
        paths: &["learning_rate"],
        kind: Kind::Number,
        default: "0.5 (adaboost, t-adaboost), 0.1 (real-adaboost, secboost), 1 otherwise",
        range: interval(0.0, true, 1.0, false),
        cli_flag: Some("learning-rate"),
        python_kw: Some("learning_rate"),
        toml_key: Some("learning_rate"),
        doc: "Shrinkage ν: each round adds ν·α·h, with α scaled before the weight update.",
        ..BASE
    },
    ParamSpec {
        name: "seed",
        paths: &["seed", "secboost.seed"],
        kind: Kind::Integer,
        default: "0",
        range: Range::Any,
        cli_flag: Some("seed"),
        python_kw: Some("random_state"),
        toml_key: Some("seed"),
        doc: "Seed of every random choice (candidate subsets, random ties and codes, SecBoost's offsets).",
        ..BASE
    },
    ParamSpec {
        name: "preset",
        paths: &["preset"],
        kind: Kind::Choice(&["authors", "paper"]),
        default: "none",
        range: Range::Any,
        algorithms: PRESET,
        cli_flag: Some("preset"),
        python_kw: Some("preset"),
        toml_key: Some("preset"),
        doc: "A named set of defaults that the parameters given override (authors: the t-AdaBoost authors' code; paper: the papers' stumps, 100 rounds and no shrinkage).",
        ..BASE
    },
    ParamSpec {
        name: "authors_mode",
        kind: Kind::Bool,
        default: "false",
        algorithms: T_ADA,
        cli_flag: Some("authors-mode"),
        python_kw: Some("authors_mode"),
        toml_key: Some("authors_mode"),
        doc: "The `authors` preset (as preset = authors): count order, canonical leaves, pure leaves forbidden, a 2000-candidate cap, random ties.",
        ..BASE
    },
    ParamSpec {
        name: "alpha",
        paths: &["adaboost.alpha"],
        kind: Kind::Choice(&["discrete", "one", "linear-bound", "line-search", "abstain", "abstain-conservative"]),
        default: "discrete (adaboost), one (real-adaboost), abstain (abstaining-adaboost)",
        range: Range::Any,
        algorithms: ADA,
        python_for: Some(ADA_PY),
        cli_flag: Some("alpha"),
        python_kw: Some("alpha"),
        toml_key: Some("alpha"),
        doc: "How AdaBoost chooses α each round.",
        ..BASE
    },
    ParamSpec {
        name: "smoothing",
        paths: &["adaboost.smoothing", "multiclass.eps"],
        kind: Kind::Number,
        default: "1/(2m), m the sum of the sample weights",
        range: NON_NEGATIVE,
        algorithms: SMOOTHED,
        cli_flag: Some("smoothing"),
        python_kw: Some("smoothing"),
        toml_key: Some("smoothing"),
        doc: "Smoothing ε of the real leaves ½ ln((W+ + ε)/(W− + ε)), weights summing to 1.",
        ..BASE
    },
    ParamSpec {
        name: "t",
        paths: &["t_adaboost.t", "t_adaboost.auto_t"],
        kind: Kind::Number,
        default: "0.8",
        range: Range::Text("[0, 2), or auto (chosen by inner cross-validation)"),
        algorithms: T_ADA,
        cli_flag: Some("t"),
        python_kw: Some("t"),
        toml_key: Some("t"),
        doc: "t-AdaBoost's temperature (1 = AdaBoost).",
        ..BASE
    },
    ParamSpec {
        name: "t_grid",
        paths: &["t_adaboost.auto_t.grid"],
        kind: Kind::NumberList,
        default: "0, 0.2, 0.4, 0.6, 0.8, 0.9, 1",
        range: Range::Text("distinct temperatures in [0, 2)"),
        algorithms: T_ADA,
        cli_flag: Some("t-grid"),
        python_kw: Some("t_grid"),
        toml_key: Some("t_grid"),
        doc: "With t = auto: the candidate temperatures.",
        ..BASE
    },
    ParamSpec {
        name: "t_folds",
        paths: &["t_adaboost.auto_t.folds"],
        kind: Kind::Integer,
        default: "3",
        range: interval(2.0, false, f64::INFINITY, true),
        algorithms: T_ADA,
        cli_flag: Some("t-folds"),
        python_kw: Some("t_folds"),
        toml_key: Some("t_folds"),
        doc: "With t = auto: the number of inner stratified folds.",
        ..BASE
    },
    ParamSpec {
        name: "t_schedule",
        paths: &["t_adaboost.t_schedule"],
        kind: Kind::Text,
        default: "none",
        range: Range::Text("linear:T0:T1 or linear:T0:T1:N (T0, T1 in [0, 2), N ≥ 1)"),
        algorithms: T_ADA,
        cli_flag: Some("t-schedule"),
        python_kw: Some("t_schedule"),
        toml_key: Some("t_schedule"),
        doc: "A schedule of t over the rounds; replaces t.",
        syntax: Some(syntax::t_schedule),
        ..BASE
    },
    ParamSpec {
        name: "leaf_values",
        paths: &["t_adaboost.leaf_values"],
        kind: Kind::Choice(&["optimal", "canonical"]),
        default: "optimal",
        range: Range::Any,
        algorithms: T_ADA,
        cli_flag: Some("leaf-values"),
        python_kw: Some("leaf_values"),
        toml_key: Some("leaf_values"),
        doc: "t-AdaBoost's tempered leaf link (canonical: the authors' code).",
        ..BASE
    },
    ParamSpec {
        name: "learner_weights",
        paths: &["t_adaboost.learner_weights"],
        kind: Kind::Choice(&["normalized", "co-density"]),
        default: "normalized",
        range: Range::Any,
        algorithms: T_ADA,
        cli_flag: Some("learner-weights"),
        python_kw: Some("learner_weights"),
        toml_key: Some("learner_weights"),
        doc: "The weights t-AdaBoost hands the tree learner: q/Σq or the co-density q^(2−t).",
        ..BASE
    },
    ParamSpec {
        name: "overflow",
        paths: &["t_adaboost.overflow"],
        kind: Kind::Choice(&["fallback", "error"]),
        default: "fallback",
        range: Range::Any,
        algorithms: T_ADA,
        cli_flag: Some("overflow"),
        python_kw: Some("overflow"),
        toml_key: Some("overflow"),
        doc: "t > 1: what to do when a tempered weight overflows (the authors' fallback, or an error).",
        ..BASE
    },
    ParamSpec {
        name: "loss",
        paths: &["secboost.loss"],
        kind: Kind::Text,
        default: "logistic",
        range: Range::Text(
            "logistic, exponential, square, hinge, zero-one, clipped-logistic:q=Q, spring:Q=Q, spring-main, \
             tempered:t=T (Python: also a callable)",
        ),
        algorithms: SEC,
        cli_flag: Some("loss"),
        python_kw: Some("loss"),
        toml_key: Some("loss"),
        doc: "The loss SecBoost boosts, from its values only.",
        syntax: Some(syntax::loss),
        ..BASE
    },
    ParamSpec {
        name: "delta_init",
        paths: &["secboost.delta_init"],
        kind: Kind::Number,
        default: "1",
        range: interval(0.0, true, f64::INFINITY, true),
        algorithms: SEC,
        cli_flag: Some("delta-init"),
        python_kw: Some("delta_init"),
        toml_key: Some("delta_init"),
        doc: "First trial value of |α| in Solve_α, halved until accepted.",
        ..BASE
    },
    ParamSpec {
        name: "h0",
        paths: &["secboost.h0"],
        kind: Kind::Number,
        default: "0",
        range: Range::Text("finite"),
        algorithms: SEC,
        cli_flag: Some("h0"),
        python_kw: Some("h0"),
        toml_key: Some("h0"),
        doc: "SecBoost's constant initial score (the 0/1 loss needs h0 ≠ 0).",
        ..BASE
    },
    ParamSpec {
        name: "v0",
        paths: &["secboost.v0"],
        kind: Kind::Number,
        default: "0.1",
        range: Range::Text("finite, non-zero"),
        algorithms: SEC,
        toml_key: Some("v0"),
        doc: "SecBoost's initial offset of every example.",
        ..BASE
    },
    ParamSpec {
        name: "alpha_rule",
        paths: &["secboost.alpha_rule"],
        kind: Kind::Choice(&["solve", "auto"]),
        default: "solve",
        range: Range::Any,
        algorithms: SEC,
        cli_flag: Some("secboost-alpha"),
        python_kw: Some("alpha_rule"),
        toml_key: Some("alpha_rule"),
        doc: "How SecBoost chooses α: always Solve_α, or the closed form when the loss declares β.",
        ..BASE
    },
    ParamSpec {
        name: "solve_alpha",
        paths: &["secboost.solve_alpha"],
        kind: Kind::Choice(&["certified", "paper"]),
        default: "certified",
        range: Range::Any,
        algorithms: SEC,
        cli_flag: Some("solve-alpha"),
        python_kw: Some("solve_alpha"),
        toml_key: Some("solve_alpha"),
        doc: "Which Solve_α: the certified rule, or the paper's Algorithm 3 (uncertified).",
        ..BASE
    },
    ParamSpec {
        name: "kappa",
        paths: &["secboost.kappa"],
        kind: Kind::Number,
        default: "0.5",
        range: interval(0.0, true, 1.0, true),
        algorithms: SEC,
        cli_flag: Some("kappa"),
        python_kw: Some("kappa"),
        toml_key: Some("kappa"),
        doc: "κ of the certified Solve_α: α is accepted when q̄ ≤ κB.",
        ..BASE
    },
    ParamSpec {
        name: "epsilon",
        paths: &["secboost.epsilon"],
        kind: Kind::Number,
        default: "1",
        range: POSITIVE,
        algorithms: SEC,
        toml_key: Some("epsilon"),
        doc: "The ε of SecBoost's closed-form α.",
        ..BASE
    },
    ParamSpec {
        name: "oracle",
        paths: &["secboost.oracle"],
        kind: Kind::Choice(&["auto", "grid"]),
        default: "auto",
        range: Range::Any,
        algorithms: SEC,
        cli_flag: Some("oracle"),
        python_kw: Some("oracle"),
        toml_key: Some("oracle"),
        doc: "SecBoost's offset oracle: dichotomic for convex losses, or the grid for every loss.",
        ..BASE
    },
    ParamSpec {
        name: "oracle_precision",
        paths: &["secboost.oracle_precision"],
        kind: Kind::Integer,
        default: "100",
        range: interval(1.0, false, 1e6, false),
        algorithms: SEC,
        toml_key: Some("oracle_precision"),
        doc: "Steps Z of the grid oracle between the two last edges.",
        ..BASE
    },
    ParamSpec {
        name: "oracle_max_doublings",
        paths: &["secboost.oracle_max_doublings"],
        kind: Kind::Integer,
        default: "8",
        range: Range::Text("[0, 30], with oracle_precision·2^doublings ≤ 2^24"),
        algorithms: SEC,
        toml_key: Some("secboost.oracle_max_doublings"),
        doc: "How many times the grid oracle may double Z before no offset is admissible.",
        ..BASE
    },
    ParamSpec {
        name: "max_halvings",
        paths: &["secboost.max_halvings"],
        kind: Kind::Integer,
        default: "200",
        range: interval(1.0, false, 2000.0, false),
        algorithms: SEC,
        toml_key: Some("secboost.max_halvings"),
        doc: "Maximum number of halvings of α in Solve_α.",
        ..BASE
    },
    ParamSpec {
        name: "code",
        paths: &["multiclass.code"],
        kind: Kind::Text,
        default: "one-vs-all",
        range: Range::Text("one-vs-all, random:K, random:K:SEED (1 ≤ K ≤ 4095) or exhaustive (≤ 12 classes)"),
        algorithms: MO,
        cli_flag: Some("code"),
        python_kw: Some("code"),
        toml_key: Some("code"),
        doc: "AdaBoost.MO's output code.",
        syntax: Some(syntax::code),
        ..BASE
    },
    ParamSpec {
        name: "decode",
        paths: &["multiclass.decode"],
        kind: Kind::Choice(&["loss", "hamming"]),
        default: "loss",
        range: Range::Any,
        algorithms: MO,
        cli_flag: Some("decode"),
        python_kw: Some("decode"),
        toml_key: Some("decode"),
        doc: "AdaBoost.MO's decoding.",
        ..BASE
    },
    ParamSpec {
        name: "single_label_start",
        paths: &["multiclass.single_label_start"],
        kind: Kind::Bool,
        default: "false",
        range: Range::Any,
        algorithms: MH,
        cli_flag: Some("single-label-start"),
        python_kw: Some("single_label_start"),
        toml_key: Some("single_label_start"),
        doc: "AdaBoost.MH on single-label data: start from D₁(i, yᵢ) = 1/(2m).",
        ..BASE
    },
    // ---------------------------------------------------------------------------------- validation
    ParamSpec {
        name: "early_stopping_rounds",
        paths: &["early_stopping_rounds"],
        kind: Kind::Integer,
        default: "none (off)",
        range: AT_LEAST_1,
        topic: Topic::Validation,
        cli_flag: Some("early-stopping-rounds"),
        python_kw: Some("n_iter_no_change"),
        doc: "Stop once the validation metric has not improved for this many rounds; keep the best iteration.",
        ..BASE
    },
    ParamSpec {
        name: "eval_metric",
        paths: &["eval_metric"],
        kind: Kind::Choice(&["error", "hamming", "one-error", "loss"]),
        default: "the task's (loss for secboost)",
        range: Range::Text("loss is SecBoost's"),
        topic: Topic::Validation,
        cli_flag: Some("eval-metric"),
        python_kw: Some("eval_metric"),
        doc: "The validation metric (smaller is better).",
        ..BASE
    },
    ParamSpec {
        name: "eval_clipped",
        paths: &["eval_clipped"],
        kind: Kind::Bool,
        default: "false",
        range: Range::Any,
        algorithms: T_ADA,
        topic: Topic::Validation,
        cli_flag: Some("eval-clipped"),
        python_kw: Some("clipped"),
        doc: "Score the validation data with t-AdaBoost's clipped model (Python: `clipped` predicts with it too).",
        ..BASE
    },
    // ---------------------------------------------------------------------------------- output
    ParamSpec {
        name: "label_threshold",
        paths: &["multiclass.label_threshold"],
        kind: Kind::Choice(&["auto", "zero", "learned"]),
        default: "auto (learned for adaboost-mr / adaboost-m2, zero otherwise)",
        range: Range::Text("zero or auto for AdaBoost.MO"),
        algorithms: MULTI,
        python_for: Some(MR),
        topic: Topic::Output,
        cli_flag: Some("label-threshold"),
        python_kw: Some("label_threshold"),
        toml_key: Some("label_threshold"),
        doc: "The threshold θ of predicted label sets {ℓ : f(x, ℓ) > θ}.",
        ..BASE
    },
    ParamSpec {
        name: "calibration",
        paths: &["calibration.method"],
        kind: Kind::Choice(&["none", "sigmoid"]),
        default: "sigmoid",
        range: Range::Any,
        algorithms: BINARY,
        topic: Topic::Output,
        cli_flag: Some("calibration"),
        python_kw: Some("calibration"),
        toml_key: Some("calibration"),
        doc: "Probabilities: sigmoid is P(+1|x) = σ(a·f) with the scale a fitted on cross-fitted scores of the training rows; none is the papers' σ(2f). Labels and scores do not depend on it; see docs/explanation/probabilities.md.",
        ..BASE
    },
    ParamSpec {
        name: "calibration_folds",
        paths: &["calibration.folds"],
        kind: Kind::Integer,
        default: "3",
        range: interval(2.0, false, f64::INFINITY, true),
        algorithms: BINARY,
        topic: Topic::Output,
        cli_flag: Some("calibration-folds"),
        python_kw: Some("calibration_folds"),
        toml_key: Some("calibration_folds"),
        doc: "Folds of the sigmoid calibration's cross-fitting: one fit on (k−1)/k of the rows per fold, besides the fit on all of them.",
        ..BASE
    },
];

/// Parameters that exist only inside the parameters' JSON (no surface spells them): listed for
/// the reference page and the completeness test.
pub static JSON_ONLY: &[ParamSpec] = &[ParamSpec {
    name: "auto_t.rule",
    paths: &["t_adaboost.auto_t.rule"],
    kind: Kind::Choice(&["min", "one-se"]),
    default: "min",
    range: Range::Any,
    algorithms: T_ADA,
    doc: "With t = auto: the lowest inner error, or the one-standard-error rule towards t = 1.",
    ..BASE
}];

/// The registry entry of `name`.
pub fn spec(name: &str) -> Option<&'static ParamSpec> {
    PARAMETERS.iter().find(|p| p.name == name)
}

/// Checks a numeric parameter against its registry range: `Error::InvalidParam` naming the
/// parameter and the range (`a number in (0, 1]`) when `value` is outside it or NaN.
pub fn check_number(name: &str, value: f64) -> Result<()> {
    let Some(p) = spec(name) else {
        return Err(Error::param("parameter", "a parameter of the registry", name));
    };
    p.check_number(value)
}

fn cell(s: Option<&str>, prefix: &str) -> String {
    s.map_or_else(|| "—".to_string(), |s| format!("`{prefix}{s}`"))
}

fn algorithms_cell(algos: &[Algorithm]) -> String {
    if algos == ALL {
        "all".into()
    } else if algos == TREES {
        "all but abstaining-adaboost".into()
    } else {
        algos.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
    }
}

/// The parameters reference page (`docs/reference/parameters.md`), generated from [`PARAMETERS`].
pub fn markdown() -> String {
    let mut s = String::new();
    s.push_str(
        "<!-- Generated from crates/boostlab/src/params/registry.rs by `params::registry::markdown()`; do not \
         edit. Regenerate with BOOSTLAB_REGENERATE=1 cargo test -p boostlab --lib registry. -->\n\n",
    );
    s.push_str("# Parameters\n\n");
    s.push_str(
        "Every training parameter, with its name on each surface: the `boostlab train` flag, the Python \
         estimators' keyword and the key of an experiment's TOML parameter table. A dash means the surface \
         does not offer it (the parameters' JSON, `{\"secboost\": {\"max_halvings\": 100}}`, always does). \
         The command line's flags are built from this table, and an experiment's TOML table accepts a \
         parameter by its TOML key, its name or its flag spelled with underscores. Parameters of one \
         algorithm given to another are refused by the CLI.\n",
    );
    for topic in Topic::ALL {
        let params: Vec<&ParamSpec> = PARAMETERS.iter().chain(JSON_ONLY).filter(|p| p.topic == topic).collect();
        if params.is_empty() {
            continue;
        }
        let _ = write!(s, "\n## {}\n\n", topic.heading());
        s.push_str("| Parameter | Type | Default | Range | Algorithms | CLI | Python | TOML |\n");
        s.push_str("|---|---|---|---|---|---|---|---|\n");
        for p in params {
            let py = match (p.python_kw, p.python_for) {
                (Some(kw), Some(only)) => format!("`{kw}` ({})", algorithms_cell(only)),
                (kw, _) => cell(kw, ""),
            };
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
                p.name,
                p.kind.describe(),
                p.default,
                p.range.describe(),
                algorithms_cell(p.algorithms),
                cell(p.cli_flag, "--"),
                py,
                cell(p.toml_key, ""),
            );
        }
        s.push('\n');
        for p in PARAMETERS.iter().chain(JSON_ONLY).filter(|p| p.topic == topic) {
            let _ = writeln!(s, "- `{}`: {}", p.name, p.doc);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::*;
    use crate::params::BoostParams;

    #[test]
    fn names_and_surface_spellings_are_unique() {
        let all: Vec<&ParamSpec> = PARAMETERS.iter().chain(JSON_ONLY).collect();
        for get in [
            |p: &ParamSpec| Some(p.name),
            |p: &ParamSpec| p.cli_flag,
            |p: &ParamSpec| p.python_kw,
            |p: &ParamSpec| p.toml_key,
        ] {
            let mut seen = BTreeSet::new();
            for p in &all {
                if let Some(n) = get(p) {
                    assert!(seen.insert(n), "{n} twice");
                }
            }
        }
        for p in &all {
            assert!(!p.doc.is_empty() && !p.default.is_empty() && !p.algorithms.is_empty(), "{}", p.name);
            if let Some(only) = p.python_for {
                assert!(only.iter().all(|a| p.algorithms.contains(a)), "{}", p.name);
            }
        }
    }

    /// Every field of the parameters' JSON (the model files' `params`) is some registry entry's.
    #[test]
    fn every_parameter_field_is_in_the_registry() {
        let mut v = serde_json::to_value(BoostParams::default()).expect("json");
        // Fields not written at their defaults.
        v["t_adaboost"]["t_schedule"] = Value::Null;
        v["t_adaboost"]["auto_t"] = serde_json::to_value(crate::params::tadaboost::AutoT::default()).expect("json");
        v["multiclass"]["label_threshold"] = Value::Null;
        v["tree"]["monotone_constraints"] = Value::Null;
        v["tree"]["interaction_constraints"] = Value::Null;
        for k in ["learning_rate", "early_stopping_rounds", "eval_metric", "eval_clipped"] {
            v[k] = Value::Null;
        }
        let mut paths = Vec::new();
        for (k, v) in v.as_object().expect("object") {
            match v {
                Value::Object(sub) => paths.extend(sub.keys().map(|kk| format!("{k}.{kk}"))),
                _ => paths.push(k.clone()),
            }
        }
        paths.extend(["grid", "folds", "rule"].map(|f| format!("t_adaboost.auto_t.{f}")));
        let declared: BTreeSet<&str> =
            PARAMETERS.iter().chain(JSON_ONLY).flat_map(|p| p.paths.iter().copied()).collect();
        for p in &paths {
            assert!(declared.contains(p.as_str()), "parameter `{p}` is not declared in params::registry::PARAMETERS");
        }
        for p in &declared {
            assert!(paths.iter().any(|q| q == p), "the registry declares `{p}`, which BoostParams lacks");
        }
    }

    #[test]
    fn learning_rate_range_comes_from_the_registry() {
        for ok in [1e-9, 0.5, 1.0] {
            check_number("learning_rate", ok).expect("valid");
        }
        for bad in [0.0, -1.0, 1.5, f64::NAN, f64::INFINITY] {
            let e = check_number("learning_rate", bad).expect_err("invalid").to_string();
            assert!(e.contains("learning_rate") && e.contains("a number in (0, 1]"), "{e}");
        }
    }

    /// `docs/reference/parameters.md` is [`markdown`]'s output; `BOOSTLAB_REGENERATE=1` rewrites it.
    #[test]
    fn parameters_reference_page_is_generated() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/parameters.md");
        let want = markdown();
        if std::env::var_os("BOOSTLAB_REGENERATE").is_some() {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &want).expect("write");
            return;
        }
        let got = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            got == want,
            "docs/reference/parameters.md differs from params::registry::markdown(): regenerate it with \
             BOOSTLAB_REGENERATE=1 cargo test -p boostlab --lib registry"
        );
    }
}
