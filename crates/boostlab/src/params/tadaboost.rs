//! Parameters of t-AdaBoost: the temperature, its schedule and `t = auto`.

use serde::{Deserialize, Serialize};

use super::tree::TemperedLink;
use crate::error::{Error, Result};

/// Which weights the tree learner receives (docs/explanation/tadaboost.md#tadaboost-algorithm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LearnerWeights {
    /// `d = q/Σq`, the paper's choice (the authors' code passes raw `q`: same trees). Default.
    #[default]
    Normalized,
    /// The co-density `p = q^(2−t)` (on the probability simplex).
    CoDensity,
}

/// What to do when a tempered weight overflows (`t > 1`, docs/explanation/tadaboost.md#tadaboost-algorithm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum OverflowPolicy {
    /// The authors' fallback: the `n_inf` overflowed examples get weight `n_inf^(−t*)` each, all
    /// others 0 (at `t > 1` a zero weight stays zero for good), and `Z_j` is recorded as 1.
    /// Default.
    #[default]
    Fallback,
    /// Fail the round with [`Error::Numerical`]; the booster's state is left as before the round.
    Error,
}

/// Parameters of t-AdaBoost (docs/explanation/tadaboost.md#tadaboost-algorithm).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TAdaBoostParams {
    /// The temperature. `[0, 1]` carries the convergence guarantees; `t = 1` is AdaBoost (any `t`
    /// with `|1 − t| < 1e−9` is treated as exactly 1); `(1, 2)` runs with overflow detection. It is
    /// also the temperature of the default split criterion `L^(t)` and of the leaf link. By default
    /// 0.8 (inside the guaranteed range; the paper found `t ≥ 0.6` better on average and reports
    /// 0.6/0.8/0.9); valid range `[0, 2)`.
    pub t: f64,
    /// Tempered leaf link. By default `optimal`; `canonical` reproduces the authors' code (the
    /// `authors` preset's choice).
    pub leaf_values: TemperedLink,
    /// Weights handed to the tree learner. By default `normalized` (`q/Σq`); or `co-density`.
    pub learner_weights: LearnerWeights,
    /// Handling of weights that overflow for `t > 1`. By default `fallback` (the authors'); or
    /// `error`.
    pub overflow: OverflowPolicy,
    /// `t = auto`: when set, `t` is chosen from `auto_t.grid` by inner stratified
    /// cross-validation on the training rows and the model is refit with it (see
    /// [`crate::select::auto_t`]); the model's `t` is then the chosen one. By default none (`t` as given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_t: Option<AutoT>,
    /// A schedule of t over the rounds, e.g. `linear:0.5:1`: round j runs at the
    /// schedule's `t_j` (weights, `µ`, `α`, and the default criterion and leaf link), and the
    /// weights are carried across each change of t by [`TAdaBoost::retemper`](crate::boost::tadaboost::TAdaBoost::retemper). When set, `t` is
    /// not used. By default none (`t` in every round); not with `auto_t`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t_schedule: Option<TSchedule>,
}

/// A schedule of t-AdaBoost's temperature over the rounds, written `linear:T0:T1` or
/// `linear:T0:T1:N` (CLI `--t-schedule`, Python `t_schedule=`, experiment specs `t_schedule`).
///
/// `linear`: round j (1-based) runs at `t_j = T0 + (T1 − T0)(j − 1)/(N − 1)` for `j ≤ N` and at
/// `T1` after, where `N` is the given length or, without it, the fit's `n_estimators`. `T0 = T1`
/// runs every round at `T0` exactly: the same model, bit for bit, as the fixed `t = T0`. The
/// clipped model uses the schedule's last temperature `T1` (see [`TAdaBoost::clip_delta`](crate::boost::tadaboost::TAdaBoost::clip_delta)).
/// Valid: `T0`, `T1` in `[0, 2)`, `N ≥ 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TSchedule {
    /// Linear from `t0` (round 1) to `t1` (round `rounds`, by default the fit's `n_estimators`).
    Linear {
        /// Temperature of the first round.
        t0: f64,
        /// Temperature of round `rounds` and of every later round.
        t1: f64,
        /// Length of the ramp in rounds; `None`: the fit's `n_estimators`.
        rounds: Option<usize>,
    },
}

impl TSchedule {
    /// Parses `linear:T0:T1` or `linear:T0:T1:N` and checks it.
    pub fn parse(s: &str) -> Result<TSchedule> {
        let bad = || Error::param("t_schedule", "linear:T0:T1 or linear:T0:T1:N (T0, T1 in [0, 2), N ≥ 1)", s);
        let parts: Vec<&str> = s.trim().split(':').map(str::trim).collect();
        if parts.len() < 3 || parts.len() > 4 || parts[0] != "linear" {
            return Err(bad());
        }
        let t0: f64 = parts[1].parse().map_err(|_| bad())?;
        let t1: f64 = parts[2].parse().map_err(|_| bad())?;
        let rounds = match parts.get(3) {
            Some(n) => Some(n.parse::<usize>().map_err(|_| bad())?),
            None => None,
        };
        let sched = TSchedule::Linear { t0, t1, rounds };
        sched.check()?;
        Ok(sched)
    }

    /// Validates the temperatures and the length.
    pub fn check(&self) -> Result<()> {
        let TSchedule::Linear { t0, t1, rounds } = *self;
        for t in [t0, t1] {
            if !(0.0..2.0).contains(&t) {
                return Err(Error::param("t_schedule", "temperatures in [0, 2)", self));
            }
        }
        if rounds == Some(0) {
            return Err(Error::param("t_schedule", "a length N ≥ 1 (linear:T0:T1:N)", self));
        }
        Ok(())
    }

    /// The temperature of the first round.
    pub fn start(&self) -> f64 {
        let TSchedule::Linear { t0, .. } = *self;
        t0
    }

    /// The temperature of the last round of the ramp and after (the clipped model's).
    pub fn end(&self) -> f64 {
        let TSchedule::Linear { t1, .. } = *self;
        t1
    }

    /// The temperature of round `round` (1-based) of a fit of `n_estimators` rounds, before the
    /// `|1 − t| < 1e−9` snap.
    pub fn t_at(&self, round: usize, n_estimators: usize) -> f64 {
        let TSchedule::Linear { t0, t1, rounds } = *self;
        let n = rounds.unwrap_or(n_estimators);
        if t0 == t1 || round <= 1 {
            return t0;
        }
        if round >= n {
            return t1;
        }
        // 1 < round < n, so n ≥ 3 and the fraction is in (0, 1).
        t0 + (t1 - t0) * ((round - 1) as f64 / (n - 1) as f64)
    }
}

impl std::fmt::Display for TSchedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let TSchedule::Linear { t0, t1, rounds } = *self;
        match rounds {
            Some(n) => write!(f, "linear:{t0}:{t1}:{n}"),
            None => write!(f, "linear:{t0}:{t1}"),
        }
    }
}

impl Serialize for TSchedule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for TSchedule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        TSchedule::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl Default for TAdaBoostParams {
    fn default() -> Self {
        TAdaBoostParams {
            t: 0.8,
            leaf_values: TemperedLink::Optimal,
            learner_weights: LearnerWeights::Normalized,
            overflow: OverflowPolicy::Fallback,
            auto_t: None,
            t_schedule: None,
        }
    }
}

impl TAdaBoostParams {
    /// Validates every field.
    pub fn check(&self) -> Result<()> {
        if !(self.t >= 0.0 && self.t < 2.0) {
            return Err(Error::param("t", "a temperature in [0, 2)", self.t));
        }
        if let Some(a) = &self.auto_t {
            a.check()?;
        }
        if let Some(sch) = &self.t_schedule {
            sch.check()?;
            if self.auto_t.is_some() {
                return Err(Error::param("t_schedule", "no schedule with t = auto (auto chooses one fixed t)", sch));
            }
        }
        Ok(())
    }

    /// The leaf link in effect. (The authors' code's options — canonical leaves, count growth
    /// order, pure leaves forbidden, a 2000-candidate cap, random ties — are the `authors` preset,
    /// [`crate::params::Preset::Authors`]: defaults the user's values override.)
    pub fn link(&self) -> TemperedLink {
        self.leaf_values
    }
}

/// How `t = auto` chooses t-AdaBoost's temperature (set [`TAdaBoostParams::auto_t`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AutoT {
    /// The candidate temperatures, tried in this order (ties go to the first). By default
    /// `[0, 0.2, 0.4, 0.6, 0.8, 0.9, 1]` (the paper's grid without 1.1); valid: non-empty,
    /// distinct, each in `[0, 2)`.
    pub grid: Vec<f64>,
    /// Number of inner stratified folds. By default 3 (15 full-fit equivalents with the default
    /// grid); valid range `2..=` the number of training rows.
    pub folds: usize,
    /// How the inner errors choose t. By default `min`.
    #[serde(default, skip_serializing_if = "is_min")]
    pub rule: AutoTRule,
}

/// How `t = auto` turns the inner errors into a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutoTRule {
    /// The lowest inner error (ties to the first grid value). Default.
    #[default]
    Min,
    /// The one-standard-error rule towards AdaBoost: among the grid values whose inner error is
    /// within one standard error of the best one's — the standard error of the paired per-fold
    /// differences to the best, `sd_k(e_gk − e_bk)/√K` — the one closest to `t = 1` (ties to the
    /// first in the grid). A temperature other than the best is kept only when the folds cannot
    /// tell it apart from the best.
    OneSe,
}

fn is_min(r: &AutoTRule) -> bool {
    *r == AutoTRule::Min
}

/// The default grid of `t = auto`.
pub const DEFAULT_T_GRID: [f64; 7] = [0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 1.0];

impl Default for AutoT {
    fn default() -> Self {
        AutoT { grid: DEFAULT_T_GRID.to_vec(), folds: 3, rule: AutoTRule::Min }
    }
}

impl AutoT {
    /// Validates the grid and the number of folds.
    pub fn check(&self) -> Result<()> {
        if self.grid.is_empty() {
            return Err(Error::param("auto_t.grid", "at least one temperature", "[]"));
        }
        for (i, &t) in self.grid.iter().enumerate() {
            if !(0.0..2.0).contains(&t) {
                return Err(Error::param("auto_t.grid", "temperatures in [0, 2)", t));
            }
            if self.grid[..i].contains(&t) {
                return Err(Error::param("auto_t.grid", "distinct temperatures", format!("{t} twice")));
            }
        }
        if self.folds < 2 {
            return Err(Error::param("auto_t.folds", "an integer ≥ 2", self.folds));
        }
        Ok(())
    }
}
