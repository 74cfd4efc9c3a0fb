//! Parameters of the tree learner and the option enums it reads.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Split criterion: the expected Bayes risk of a proper loss, minimised over the leaves (docs/explanation/weak-learners.md#weak-learners-criteria).
///
/// For statistics of width 2k the criterion is summed over the k labels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "name")]
pub enum Criterion {
    /// Empirical (0/1) risk `2 min(u, 1−u)`: the weighted error of a majority-vote tree.
    Empirical,
    /// Gini index `4u(1−u)` (CART).
    Gini,
    /// Shannon entropy in nats.
    Entropy,
    /// Matusita `2√(u(1−u))`: Schapire–Singer's Z criterion.
    Matusita,
    /// Tempered Bayes risk `L^(t)` (t = 0 Gini, t = 1 Matusita); `t` finite and ≤ 2.
    Tempered {
        /// The temperature.
        t: f64,
    },
}

impl Criterion {
    /// A criterion by name: `empirical`, `gini`, `entropy`, `matusita` or `tempered:t=T` (the
    /// CLI's `--criterion` syntax). The result is checked.
    pub fn parse(s: &str) -> Result<Criterion> {
        let c = match s {
            "empirical" => Criterion::Empirical,
            "gini" => Criterion::Gini,
            "entropy" => Criterion::Entropy,
            "matusita" => Criterion::Matusita,
            other => {
                let t = other.strip_prefix("tempered:t=").and_then(|t| t.parse::<f64>().ok()).ok_or_else(|| {
                    Error::Failed(format!(
                        "unknown criterion '{}': expected empirical, gini, entropy, matusita or tempered:t=T",
                        crate::error::shown(other)
                    ))
                })?;
                Criterion::Tempered { t }
            }
        };
        // Checked here: a non-finite t would reach the parameters' JSON as `null`.
        c.check()?;
        Ok(c)
    }

    /// Checks the parameter's range.
    pub fn check(&self) -> Result<()> {
        if let Criterion::Tempered { t } = *self {
            // An infinite t (`tempered:t=-inf`) would write a model that JSON cannot hold
            // (`null`, which does not load).
            if !(t.is_finite() && t <= 2.0) {
                return Err(Error::param("criterion.t", "a finite temperature t ≤ 2", t));
            }
        }
        Ok(())
    }
}

/// Which variant of the tempered leaf value to use (docs/explanation/weak-learners.md#weak-learners-criteria).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TemperedLink {
    /// The value that solves boosting's equation at the leaf (bounded by 1/|1−t|). Default.
    #[default]
    Optimal,
    /// What the t-AdaBoost authors' code does: `−L^(t)′(p)`.
    Canonical,
}

/// The order in which best-first growth picks the next leaf to split (docs/explanation/weak-learners.md#weak-learners-criteria).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GrowOrder {
    /// Largest total weight first (the t-AdaBoost paper's wording). Default.
    #[default]
    Weight,
    /// Most training examples first, ties to the most recently created leaf (the authors' code).
    Count,
    /// Largest criterion decrease first (LightGBM's leaf-wise growth).
    Gain,
}

/// Whether a split may create a leaf that holds weight of one class only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PureLeaves {
    /// Pure leaves are allowed (their values are smoothed or capped).
    Allow,
    /// A split is admissible only if both children hold positive weight of both classes (of every
    /// label), as in the t-AdaBoost experiments.
    Forbid,
    /// The booster's choice, resolved when a fit starts (the model records `allow` or `forbid`):
    /// `forbid` for t-AdaBoost (the ablation of docs/reproduction.md found pure leaves
    /// the reason its t = 1 lost to the authors' configuration), `allow` for every other booster.
    /// Under `auto`, a t-AdaBoost tree that would be useless with pure leaves forbidden (one leaf,
    /// or every leaf 0) is grown with them allowed (tiny or nearly separable data). Default. A tree grown directly
    /// (not by the boosting loop) with `auto` allows pure leaves.
    #[default]
    Auto,
}

/// How the split search chooses among candidates whose gains tie (docs/explanation/weak-learners.md#weak-learners-stump).
///
/// Two candidates tie when their gains differ by at most `1e−12·W` (`W` the node's total
/// weight): differences below that are rounding, not information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SplitTies {
    /// Scanning features in index order and thresholds upwards, a candidate replaces the best so
    /// far only when its gain is larger by more than the tolerance: ties go to the lowest feature
    /// index (and the lowest threshold). Default.
    #[default]
    Lowest,
    /// Uniformly at random among every candidate whose gain is within the tolerance of the
    /// largest, drawn from the run's seed (and the round and node), so that runs are reproducible
    /// and do not depend on the thread count. What the t-AdaBoost authors' code does (unseeded
    /// there); the `authors` preset's choice.
    Random,
}

/// Parameters of the tree learner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TreeParams {
    /// Maximum number of leaves. By default 2 (a stump); valid range ≥ 2.
    pub max_leaves: usize,
    /// Maximum number of nodes (internal + leaves); overrides `max_leaves` with ⌊(K+1)/2⌋ leaves
    /// ("size 15" = 8 leaves). By default unset; valid range ≥ 3.
    pub max_nodes: Option<usize>,
    /// Maximum depth (root = depth 0). By default unlimited; valid range ≥ 1.
    pub max_depth: Option<usize>,
    /// Minimum total weight (sum of the statistics block) in each child. By default 0 (a child must
    /// only have positive weight); valid range ≥ 0.
    pub min_leaf_weight: f64,
    /// Leaf selection order for best-first growth. By default `weight`.
    pub grow_order: GrowOrder,
    /// Split criterion. By default chosen by the booster (`None`).
    pub criterion: Option<Criterion>,
    /// Pure-leaf policy. By default `auto` (the booster's choice: `forbid` for t-AdaBoost, `allow`
    /// otherwise; see [`PureLeaves::Auto`]).
    pub pure_leaves: PureLeaves,
    /// Evaluate at most this many (feature, threshold) candidates per node, a seeded random subset.
    /// By default unlimited; valid range ≥ 1.
    pub max_split_candidates: Option<usize>,
    /// How ties between equally good splits are broken. By default `lowest`; or `random`.
    pub split_ties: SplitTies,
    /// Monotone constraints (docs/how-to/constraints.md): a direction −1, 0 or +1 per feature, in
    /// column order or by feature name; every tree (and the ensemble's score) is then
    /// non-decreasing (+1) or non-increasing (−1) in each constrained numeric feature. By default
    /// none (absent from the parameters' JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monotone_constraints: Option<MonotoneConstraints>,
    /// Interaction constraints (docs/how-to/constraints.md): groups of features (indices or
    /// names); every root-to-leaf path splits only on features of one common group, a feature in
    /// no group only alone. By default none (absent from the parameters' JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interaction_constraints: Option<Vec<Vec<FeatureKey>>>,
}

/// A feature named in a constraint: its column index (from 0) or its name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FeatureKey {
    /// The column index, from 0.
    Index(usize),
    /// The column name.
    Name(String),
}

impl std::fmt::Display for FeatureKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FeatureKey::Index(i) => write!(f, "{i}"),
            FeatureKey::Name(n) => write!(f, "'{n}'"),
        }
    }
}

/// Monotone constraints as given: one direction per feature, or the directions of named
/// features (the others unconstrained). A direction is −1 (non-increasing), 0 (free) or +1
/// (non-decreasing); it is a number so that a wrong one is a parameter error naming it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MonotoneConstraints {
    /// One direction per feature, in column order (the length must be the number of features).
    Dense(Vec<f64>),
    /// The directions of the named features.
    ByName(std::collections::BTreeMap<String, f64>),
}

impl MonotoneConstraints {
    /// The CLI's and TOML's syntax: `NAME:DIR,NAME:DIR,...` (by feature name) or `DIR,DIR,...`
    /// (one per feature, in column order); `DIR` is −1, 0 or 1 (also `+1`).
    pub fn parse(s: &str) -> Result<MonotoneConstraints> {
        let expected = "NAME:DIR,... or DIR,... with DIR one of -1, 0, 1";
        let bad = || Error::param("monotone_constraints", expected, s);
        let dir = |d: &str| d.trim().parse::<f64>().map_err(|_| bad());
        let items: Vec<&str> = s.split(',').map(str::trim).collect();
        if items.iter().all(|i| !i.contains(':')) {
            return Ok(MonotoneConstraints::Dense(items.into_iter().map(dir).collect::<Result<_>>()?));
        }
        let mut map = std::collections::BTreeMap::new();
        for item in items {
            let (name, d) = item.rsplit_once(':').ok_or_else(bad)?;
            if name.is_empty() || map.insert(name.to_string(), dir(d)?).is_some() {
                return Err(bad());
            }
        }
        Ok(MonotoneConstraints::ByName(map))
    }

    /// Checks every direction is −1, 0 or 1 (the features are resolved at fit time).
    pub fn check(&self) -> Result<()> {
        let check = |what: String, d: f64| {
            if d == -1.0 || d == 0.0 || d == 1.0 {
                Ok(())
            } else {
                Err(Error::param("monotone_constraints", format!("-1, 0 or 1 for {what}"), d))
            }
        };
        match self {
            MonotoneConstraints::Dense(v) => {
                v.iter().enumerate().try_for_each(|(i, &d)| check(format!("feature {i}"), d))
            }
            MonotoneConstraints::ByName(m) => m.iter().try_for_each(|(n, &d)| check(format!("feature '{n}'"), d)),
        }
    }
}

/// The CLI's and TOML's syntax of interaction constraints: groups separated by `;`, the features
/// of a group (column names) by `,`: `x1,x2;x3,x4`.
pub fn parse_interaction_constraints(s: &str) -> Result<Vec<Vec<FeatureKey>>> {
    let groups: Vec<Vec<FeatureKey>> = s
        .split(';')
        .map(|g| g.split(',').map(str::trim).filter(|n| !n.is_empty()).map(|n| FeatureKey::Name(n.into())).collect())
        .collect();
    if groups.iter().any(Vec::is_empty) {
        return Err(Error::param(
            "interaction_constraints",
            "groups of feature names, the features separated by ',' and the groups by ';' (x1,x2;x3)",
            s,
        ));
    }
    Ok(groups)
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            max_leaves: 2,
            max_nodes: None,
            max_depth: None,
            min_leaf_weight: 0.0,
            grow_order: GrowOrder::Weight,
            criterion: None,
            pure_leaves: PureLeaves::Auto,
            max_split_candidates: None,
            split_ties: SplitTies::Lowest,
            monotone_constraints: None,
            interaction_constraints: None,
        }
    }
}

/// The memory a fit may plan for, in bytes (16 GiB): the model's trees over every round, and
/// the histograms of one tree's open leaves, are each checked against it before the first
/// round (see [`TreeParams::check_against_data`] and
/// [`BoostParams::check_against_data`](crate::params::BoostParams::check_against_data)).
pub const MEMORY_BOUND: u64 = 16 << 30;

/// An upper estimate of the bytes one round adds to a model in memory with trees of at most
/// `leaves` leaves and `k` outputs: 1 KiB for the tree's header, α and the round's record,
/// then per leaf two nodes of at most 48 bytes with their gain and cover (128 bytes) and `k`
/// leaf values (`8k`).
pub fn round_bytes(leaves: usize, k: usize) -> u64 {
    1024 + leaves as u64 * (128 + 8 * k as u64)
}

impl TreeParams {
    /// Checks the tree's size against the training data, before anything is allocated from it:
    /// the histograms of the open leaves — at most the leaf limit (`max_leaves`, or `max_nodes`'
    /// ⌊(K+1)/2⌋) and at most one per training row (`n_rows`), `hist_values` values of 8 bytes
    /// each — within [`MEMORY_BOUND`]. A leaf limit above the rows is allowed: growth stops when
    /// every leaf is pure or too small to split, so it costs nothing.
    pub fn check_against_data(&self, n_rows: usize, hist_values: usize) -> Result<()> {
        let leaves = self.leaf_limit();
        let name = if self.max_nodes.is_some() { "max_nodes" } else { "max_leaves" };
        let as_param = |l: usize| if self.max_nodes.is_some() { (2 * l).saturating_sub(1) } else { l };
        let got = self.max_nodes.unwrap_or(self.max_leaves);
        let rows = n_rows.max(2);
        let per_leaf = 8 * hist_values.max(1) as u64;
        let fits = MEMORY_BOUND / per_leaf;
        if leaves.min(rows) as u64 > fits {
            let most = usize::try_from(fits).unwrap_or(usize::MAX).max(2);
            return Err(Error::param(
                name,
                format!(
                    "an integer ≤ {} (each open leaf keeps a histogram of {per_leaf} bytes, and a tree's may take at \
                     most 16 GiB)",
                    as_param(most)
                ),
                got,
            ));
        }
        Ok(())
    }

    /// Validates every field.
    pub fn check(&self) -> Result<()> {
        if self.max_leaves < 2 {
            return Err(Error::param("max_leaves", "an integer ≥ 2", self.max_leaves));
        }
        if let Some(k) = self.max_nodes {
            if k < 3 {
                return Err(Error::param("max_nodes", "an integer ≥ 3", k));
            }
        }
        if self.max_depth == Some(0) {
            return Err(Error::param("max_depth", "an integer ≥ 1", 0));
        }
        if !(self.min_leaf_weight >= 0.0 && self.min_leaf_weight.is_finite()) {
            return Err(Error::param("min_leaf_weight", "a finite number ≥ 0", self.min_leaf_weight));
        }
        if self.max_split_candidates == Some(0) {
            return Err(Error::param("max_split_candidates", "an integer ≥ 1", 0));
        }
        if let Some(c) = &self.criterion {
            c.check()?;
        }
        if let Some(m) = &self.monotone_constraints {
            m.check()?;
        }
        if self.interaction_constraints.as_ref().is_some_and(|g| g.iter().any(Vec::is_empty)) {
            return Err(Error::param("interaction_constraints", "non-empty groups of features", "an empty group"));
        }
        Ok(())
    }

    /// The effective leaf limit.
    pub fn leaf_limit(&self) -> usize {
        match self.max_nodes {
            Some(k) => k.div_ceil(2),
            None => self.max_leaves,
        }
    }
}
