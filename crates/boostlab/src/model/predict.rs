//! Prediction: the ensemble's scores by blocks of rows (trees compiled to flat or leaf-mask
//! walks), staged scores, classes, probabilities and label sets.

use std::borrow::Cow;

use rayon::prelude::*;

use super::{outputs, Ensemble, MultiOutput, Task};
use crate::data::{Column, ColumnView, FeatureKind, Features, MISSING_CODE};
use crate::error::{Error, Result};
use crate::tree::{FlatTree, MaskTree, Node, SplitRule, Tree, MASK_TREE_MAX_LEAVES};
use crate::util::cancel::Cancel;

/// Rows per parallel prediction task.
const PREDICT_BLOCK: usize = 4096;

/// Rows whose leaves one tree finds together (a sub-block of a task): their leaf masks (2 KiB)
/// and the tested stretches of feature columns stay in the L1 cache across the tree's tests.
const MASK_BLOCK: usize = 256;

/// How a tree finds the leaf of each row in prediction.
enum Walk<'a> {
    /// Branch-free bit masks over a block of rows (trees of ≤ 64 leaves: the usual case).
    Masks(MaskTree),
    /// A flat walk, one row at a time (larger trees on numeric features).
    Flat(FlatTree),
    /// The reference walk (larger trees with categorical splits).
    Plain(&'a Tree),
}

/// A tree ready for prediction: its walk and the products `α_t · h` of its leaf values, indexed
/// by the walk's leaf ids (left-to-right positions for masks, leaf indices otherwise).
struct Compiled<'a> {
    walk: Walk<'a>,
    weighted: Vec<f64>,
}

/// Adds tree leaves' weighted values to the scores of consecutive rows: `out` is `rows × k`,
/// `leaves` yields each row's leaf id into `weighted` (`n_leaves × k`). With `CLIP`, each score is
/// clipped to `[−d, d]` after the addition (docs/explanation/tadaboost.md#tadaboost-clipped, clipped model:
/// `S_j = clip_[−δ,δ](S_{j−1} + α_j h_j(x))`).
#[inline(always)]
fn add_leaves<const CLIP: bool>(
    out: &mut [f64],
    k: usize,
    weighted: &[f64],
    leaves: impl Iterator<Item = usize>,
    d: f64,
) {
    if k == 1 {
        for (o, l) in out.iter_mut().zip(leaves) {
            *o += weighted[l];
            if CLIP {
                *o = o.clamp(-d, d);
            }
        }
    } else {
        for (o, l) in out.chunks_exact_mut(k).zip(leaves) {
            for (o, w) in o.iter_mut().zip(&weighted[l * k..(l + 1) * k]) {
                *o += w;
                if CLIP {
                    *o = o.clamp(-d, d);
                }
            }
        }
    }
}

/// Adds the trees, in order, to the scores of rows `r0 ..` (`out`: `rows × k`), block of
/// [`MASK_BLOCK`] rows by block: every row's score is summed in tree order whatever the blocks.
fn add_trees<const CLIP: bool>(
    trees: &[Compiled<'_>],
    columns: &[Column],
    num_cols: &[&[f64]],
    k: usize,
    d: f64,
    r0: usize,
    out: &mut [f64],
) {
    let mut masks = [0u64; MASK_BLOCK];
    for (b, o) in out.chunks_mut(MASK_BLOCK * k).enumerate() {
        let s0 = r0 + b * MASK_BLOCK;
        let m = o.len() / k;
        for t in trees {
            let w = &t.weighted;
            match &t.walk {
                Walk::Masks(mt) => {
                    let masks = &mut masks[..m];
                    mt.masks_into(columns, s0, masks);
                    // Masks are never 0 (the exit leaf's bit stays set), so the position is < 64;
                    // `weighted` is padded to 64 positions and the `& 63` drops the bounds check.
                    let pos = masks.iter().map(|x| (x.trailing_zeros() & 63) as usize);
                    match <&[f64; MASK_TREE_MAX_LEAVES]>::try_from(w.as_slice()) {
                        Ok(w) if k == 1 => {
                            for (o, p) in o.iter_mut().zip(pos) {
                                *o += w[p];
                                if CLIP {
                                    *o = o.clamp(-d, d);
                                }
                            }
                        }
                        _ => add_leaves::<CLIP>(o, k, w, pos, d),
                    }
                }
                Walk::Flat(ft) => add_leaves::<CLIP>(o, k, w, (s0..s0 + m).map(|r| ft.leaf_of(num_cols, r)), d),
                Walk::Plain(tree) => add_leaves::<CLIP>(o, k, w, (s0..s0 + m).map(|r| tree.leaf_of(columns, r)), d),
            }
        }
    }
}

/// `ln(1 + e^x)` without overflow.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The soft-max of finite `x` into `out`: `e^(x_i − max x) / Σ_j e^(x_j − max x)`.
fn softmax_into(x: &[f64], out: &mut [f64]) {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for (o, v) in out.iter_mut().zip(x) {
        *o = (v - m).exp();
    }
    let z: f64 = out.iter().sum();
    out.iter_mut().for_each(|o| *o /= z);
}

/// Plain slices of the numeric columns for flat walks (empty for categorical columns, which a
/// flat walk never reads).
fn numeric_slices(columns: &[Column]) -> Vec<&[f64]> {
    columns
        .iter()
        .map(|c| match c {
            Column::Numeric(v) => v.as_slice(),
            Column::Categorical { .. } => &[],
        })
        .collect()
}

/// What [`Ensemble::predict_into`] and [`Ensemble::predict`] compute (scikit-learn's names in
/// brackets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    /// The scores `n × n_outputs` (`decision_function`).
    #[default]
    Scores,
    /// Probability estimates `n × n_classes` (`predict_proba`); binary models give two columns.
    /// See [`Ensemble::proba_from_scores`].
    Probabilities,
    /// Staged scores `n_stages × n × n_outputs`, stage-major (`staged_decision_function`): stage
    /// `t` holds the scores of the first `t + 1` trees.
    Staged,
    /// Exact TreeSHAP contributions of the linear model, `n × (n_features + 1) × n_outputs`: each
    /// feature's contribution to each output, then the bias ([`Ensemble::expected_value`]). Each
    /// row's contributions sum to its score. Refused for the clipped model (not additive).
    Contributions,
}

/// A prediction request: what to compute ([`Output`]) and how. `Prediction::default()` asks for
/// the scores of every tree of the linear model.
///
/// ```
/// # use boostlab::{Output, Prediction};
/// let p = Prediction::new(Output::Probabilities).clipped(true);
/// assert_eq!(p.output, Output::Probabilities);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Prediction<'a> {
    /// What to compute.
    pub output: Output,
    /// The clipped model's scores (t-AdaBoost; the same as the linear ones for a model with no
    /// clipping level).
    pub clipped: bool,
    /// Use only the first `n_rounds` trees (all when `None`, or when larger than the model).
    /// Not available for [`Output::Contributions`].
    pub n_rounds: Option<usize>,
    /// Stop with [`Error::Cancelled`] once set (checked between blocks of rows).
    pub cancel: Option<&'a Cancel>,
}

impl<'a> Prediction<'a> {
    /// A request for `output` with the defaults: linear model, every tree, not cancellable.
    pub fn new(output: Output) -> Prediction<'a> {
        Prediction { output, ..Default::default() }
    }

    /// The scores (`decision_function`): the same as `Prediction::default()`.
    pub fn scores() -> Prediction<'a> {
        Prediction::new(Output::Scores)
    }

    /// The clipped (`true`) or linear model.
    pub fn clipped(self, clipped: bool) -> Prediction<'a> {
        Prediction { clipped, ..self }
    }

    /// Only the first `n` trees.
    pub fn n_rounds(self, n: usize) -> Prediction<'a> {
        Prediction { n_rounds: Some(n), ..self }
    }

    /// Cancellable through `cancel`.
    pub fn cancel(self, cancel: &'a Cancel) -> Prediction<'a> {
        Prediction { cancel: Some(cancel), ..self }
    }
}

/// Owned columns of views (the whole matrix, widened to `f64`).
pub(crate) fn owned_columns(columns: &[ColumnView<'_>]) -> Vec<Column> {
    columns
        .iter()
        .map(|c| match c {
            ColumnView::Numeric(v) => {
                let mut buf = vec![0.0; v.len()];
                v.copy_into(&mut buf);
                Column::Numeric(buf)
            }
            ColumnView::Categorical { codes, .. } => Column::Categorical { codes: codes.to_vec(), levels: Vec::new() },
        })
        .collect()
}

impl Ensemble {
    /// The number of values per row that `request` writes: `out` of [`Ensemble::predict_into`]
    /// holds `n × output_width` values. Scores: `n_outputs`; probabilities: the number of
    /// classes (labels), 2 for a binary model; staged: `n_stages × n_outputs` (stored
    /// stage-major); contributions: `(n_features + 1) × n_outputs`.
    pub fn output_width(&self, request: &Prediction<'_>) -> usize {
        let k = self.n_outputs;
        match request.output {
            Output::Scores => k,
            Output::Probabilities => match (&self.output, &self.task) {
                (Some(MultiOutput::Code { .. }), _) => self.task.names().len(),
                (_, Task::Binary { .. }) => 2,
                _ => k,
            },
            Output::Staged => self.n_stages(request) * k,
            Output::Contributions => (self.schema.names.len() + 1) * k,
        }
    }

    /// The number of trees that `request` uses.
    fn n_stages(&self, request: &Prediction<'_>) -> usize {
        request.n_rounds.unwrap_or(self.trees.len()).min(self.trees.len())
    }

    /// Predicts what `request` asks for into `out` (`n × output_width`, see
    /// [`Ensemble::output_width`] and [`Output`]) from column views of the caller's buffers:
    /// `columns` are the model's features in schema order, all of the same length `n`,
    /// categorical codes in the model's levels (see [`Schema::remap_codes`]).
    ///
    /// Blocks of rows run in parallel; each block's values are widened to `f64` into a small
    /// scratch buffer (never the whole matrix, except for contributions, whose cost dwarfs the
    /// copy), so the values are the same bits as [`Ensemble::predict`] on the same values, as
    /// `f32` or `f64`, in any layout and on any number of threads. An infinite value is an error
    /// naming the feature and the row.
    ///
    /// [`Schema::remap_codes`]: crate::data::Schema::remap_codes
    pub fn predict_into(&self, columns: &[ColumnView<'_>], request: &Prediction<'_>, out: &mut [f64]) -> Result<()> {
        let (clipped, cancel) = (request.clipped, request.cancel);
        match request.output {
            Output::Scores => self.views_into(columns, request.n_rounds, clipped, out, cancel),
            Output::Staged => self.staged_into(columns, self.n_stages(request), clipped, out, cancel),
            Output::Probabilities => {
                let n = self.check_views(columns)?;
                let width = self.output_width(request);
                if out.len() != n * width {
                    return Err(Error::InvalidData(format!(
                        "output buffer of {} for {n} × {width} probabilities",
                        out.len()
                    )));
                }
                let mut s = vec![0.0; n * self.n_outputs];
                self.views_into(columns, request.n_rounds, clipped, &mut s, cancel)?;
                out.copy_from_slice(&self.proba_from_scores(&s));
                Ok(())
            }
            Output::Contributions => {
                Self::check_all_rounds(request)?;
                crate::util::cancel::check(cancel)?;
                self.contributions_into(&owned_columns(columns), clipped, out, cancel)
            }
        }
    }

    /// Contributions explain the whole model.
    fn check_all_rounds(request: &Prediction<'_>) -> Result<()> {
        match request.n_rounds {
            Some(r) => Err(Error::param("n_rounds", "none: contributions explain every tree", r)),
            None => Ok(()),
        }
    }

    /// [`Ensemble::predict_into`] of `features`, allocated: `n × output_width` values. The
    /// columns are matched to the model's by name (else by position), category codes by level
    /// name (see [`Ensemble::align`]).
    pub fn predict(&self, features: &Features, request: &Prediction<'_>) -> Result<Vec<f64>> {
        let (clipped, cancel) = (request.clipped, request.cancel);
        match request.output {
            Output::Scores => self.scores_of_features(features, request.n_rounds, clipped, cancel),
            Output::Probabilities => {
                let s = self.scores_of_features(features, request.n_rounds, clipped, cancel)?;
                Ok(self.proba_from_scores(&s))
            }
            Output::Staged => {
                let t_max = self.n_stages(request);
                let mut out = Vec::with_capacity(t_max * features.n_rows() * self.n_outputs);
                let mut cancelled = Ok(());
                self.for_each_stage(features, clipped, |t, s| {
                    if t <= t_max && cancelled.is_ok() {
                        cancelled = crate::util::cancel::check(cancel);
                        out.extend_from_slice(s);
                    }
                })?;
                cancelled.map(|_| out)
            }
            Output::Contributions => {
                Self::check_all_rounds(request)?;
                crate::util::cancel::check(cancel)?;
                let cols = self.align(features)?;
                let mut out = vec![0.0; features.n_rows() * self.output_width(request)];
                self.contributions_into(&cols, clipped, &mut out, cancel)?;
                Ok(out)
            }
        }
    }
}

impl Ensemble {
    /// Maps `features` onto the model's schema: columns by name when every model feature is
    /// present, else by position when the counts match; category codes re-mapped by level name
    /// (unseen levels become missing).
    pub fn align(&self, features: &Features) -> Result<Vec<Column>> {
        let s = &self.schema;
        let by_name = s.names.iter().all(|n| features.names.contains(n));
        if !by_name && features.n_features() != s.names.len() {
            return Err(Error::InvalidData(format!(
                "the data have {} features, the model expects {} ({})",
                features.n_features(),
                s.names.len(),
                s.names.join(", ")
            )));
        }
        let mut out = Vec::with_capacity(s.names.len());
        for (f, name) in s.names.iter().enumerate() {
            let j = if by_name { features.names.iter().position(|n| n == name).unwrap_or(f) } else { f };
            let col = &features.columns[j];
            out.push(match (s.kinds[f], col) {
                (FeatureKind::Numeric, Column::Numeric(v)) => Column::Numeric(v.clone()),
                (FeatureKind::Categorical, Column::Categorical { codes, levels }) => {
                    let model_levels = s.levels[f].as_deref().unwrap_or(&[]);
                    let map: Vec<u32> = levels
                        .iter()
                        .map(|l| model_levels.iter().position(|m| m == l).map_or(MISSING_CODE, |p| p as u32))
                        .collect();
                    Column::Categorical {
                        codes: codes.iter().map(|&c| if c == MISSING_CODE { c } else { map[c as usize] }).collect(),
                        levels: model_levels.to_vec(),
                    }
                }
                (want, _) => {
                    return Err(Error::InvalidData(format!(
                        "feature '{name}' is {} in the data but {} in the model",
                        if want == FeatureKind::Numeric { "categorical" } else { "numeric" },
                        if want == FeatureKind::Numeric { "numeric" } else { "categorical" },
                    )))
                }
            });
        }
        Ok(out)
    }

    /// Scores of the first `n_rounds` trees (all when `None`) into `out` (`n × n_outputs`,
    /// row-major); with `clipped`, the clipped model's scores (equal to the linear ones when the
    /// model has no clipping level). `columns` are the model's features in schema order (see
    /// [`Ensemble::align`]), all of the same length `n`.
    pub(crate) fn decision_function_into(
        &self,
        columns: &[Column],
        n_rounds: Option<usize>,
        clipped: bool,
        out: &mut [f64],
    ) -> Result<()> {
        let n = columns.first().map_or(0, Column::len);
        let k = self.n_outputs;
        if columns.iter().any(|c| c.len() != n) {
            return Err(Error::InvalidData("feature columns of different lengths".into()));
        }
        if out.len() != n * k {
            return Err(Error::InvalidData(format!("output buffer of {} for {n} × {k} scores", out.len())));
        }
        out.fill(self.base_score);
        let t_max = n_rounds.unwrap_or(self.trees.len()).min(self.trees.len());
        if n == 0 || k == 0 {
            return Ok(());
        }
        let kinds: Vec<FeatureKind> = columns.iter().map(Column::kind).collect();
        let trees = self.compile(t_max, &kinds)?;
        self.add_compiled(&trees, columns, clipped, out, None)
    }

    /// Checks views against the schema: one per model feature, in schema order, of the model's
    /// kinds, all of the same length (returned).
    fn check_views(&self, columns: &[ColumnView<'_>]) -> Result<usize> {
        let s = &self.schema;
        if columns.len() != s.names.len() {
            return Err(Error::InvalidData(format!(
                "the data have {} features, the model expects {} ({})",
                columns.len(),
                s.names.len(),
                s.names.join(", ")
            )));
        }
        let n = columns.first().map_or(0, ColumnView::len);
        for (f, (c, kind)) in columns.iter().zip(&s.kinds).enumerate() {
            if c.len() != n {
                return Err(Error::InvalidData(format!("feature '{}' has {} rows, expected {n}", s.names[f], c.len())));
            }
            if c.kind() != *kind {
                // The message of `Ensemble::align`.
                let word = |k: FeatureKind| if k == FeatureKind::Numeric { "numeric" } else { "categorical" };
                return Err(Error::InvalidData(format!(
                    "feature '{}' is {} in the data but {} in the model",
                    s.names[f],
                    word(c.kind()),
                    word(*kind)
                )));
            }
        }
        Ok(n)
    }

    /// Scores of the first `n_rounds` trees (all when `None`) into `out` (`n × n_outputs`) from
    /// column views, the kernel of [`Output::Scores`].
    fn views_into(
        &self,
        columns: &[ColumnView<'_>],
        n_rounds: Option<usize>,
        clipped: bool,
        out: &mut [f64],
        cancel: Option<&Cancel>,
    ) -> Result<()> {
        let n = self.check_views(columns)?;
        let k = self.n_outputs;
        if out.len() != n * k {
            return Err(Error::InvalidData(format!("output buffer of {} for {n} × {k} scores", out.len())));
        }
        out.fill(self.base_score);
        let t_max = n_rounds.unwrap_or(self.trees.len()).min(self.trees.len());
        if n == 0 || k == 0 {
            return Ok(());
        }
        let trees = self.compile(t_max, &self.schema.kinds)?;
        let clip = if clipped { self.clip } else { None };
        let block = |scratch: &mut Vec<Column>, (b, o): (usize, &mut [f64])| -> Result<()> {
            crate::util::cancel::check(cancel)?;
            let r0 = b * PREDICT_BLOCK;
            self.gather_block(columns, r0, o.len() / k, scratch)?;
            let num_cols = numeric_slices(scratch);
            match clip {
                Some(d) => add_trees::<true>(&trees, scratch, &num_cols, k, d, 0, o),
                None => add_trees::<false>(&trees, scratch, &num_cols, k, 0.0, 0, o),
            }
            Ok(())
        };
        let results: Vec<Result<()>> = if n >= 2 * PREDICT_BLOCK {
            out.par_chunks_mut(PREDICT_BLOCK * k).enumerate().map_init(Vec::new, block).collect()
        } else {
            let mut scratch = Vec::new();
            out.chunks_mut(PREDICT_BLOCK * k).enumerate().map(|x| block(&mut scratch, x)).collect()
        };
        results.into_iter().collect()
    }

    /// Staged scores of the first `t_max` trees from column views into `out` (`t_max × n ×
    /// n_outputs`), the kernel of [`Output::Staged`].
    fn staged_into(
        &self,
        columns: &[ColumnView<'_>],
        t_max: usize,
        clipped: bool,
        out: &mut [f64],
        cancel: Option<&Cancel>,
    ) -> Result<()> {
        let n = self.check_views(columns)?;
        let k = self.n_outputs;
        if out.len() != t_max * n * k {
            return Err(Error::InvalidData(format!("output buffer of {} for {t_max} × {n} × {k} scores", out.len())));
        }
        if n == 0 || k == 0 {
            return Ok(());
        }
        let trees = self.compile(t_max, &self.schema.kinds)?;
        let clip = if clipped { self.clip } else { None };
        let blocks: Vec<Result<Vec<f64>>> = (0..n.div_ceil(PREDICT_BLOCK))
            .into_par_iter()
            .map_init(Vec::new, |scratch, b| {
                crate::util::cancel::check(cancel)?;
                let r0 = b * PREDICT_BLOCK;
                let m = PREDICT_BLOCK.min(n - r0);
                self.gather_block(columns, r0, m, scratch)?;
                let num_cols = numeric_slices(scratch);
                let mut s = vec![self.base_score; m * k];
                let mut stages = Vec::with_capacity(t_max * m * k);
                for tree in trees.chunks(1) {
                    match clip {
                        Some(d) => add_trees::<true>(tree, scratch, &num_cols, k, d, 0, &mut s),
                        None => add_trees::<false>(tree, scratch, &num_cols, k, 0.0, 0, &mut s),
                    }
                    stages.extend_from_slice(&s);
                }
                Ok(stages)
            })
            .collect();
        for (b, stages) in blocks.into_iter().enumerate() {
            let stages = stages?;
            let (r0, mk) = (b * PREDICT_BLOCK * k, stages.len() / t_max.max(1));
            for (t, st) in stages.chunks_exact(mk.max(1)).enumerate() {
                out[t * n * k + r0..t * n * k + r0 + mk].copy_from_slice(st);
            }
        }
        Ok(())
    }

    /// Rows `r0 .. r0 + m` of the views as owned columns in `scratch` (reused between blocks).
    fn gather_block(&self, columns: &[ColumnView<'_>], r0: usize, m: usize, scratch: &mut Vec<Column>) -> Result<()> {
        scratch.resize_with(columns.len(), || Column::Numeric(Vec::new()));
        for (f, (view, dst)) in columns.iter().zip(scratch.iter_mut()).enumerate() {
            match view.rows(r0, r0 + m) {
                ColumnView::Numeric(v) => {
                    if !matches!(dst, Column::Numeric(_)) {
                        *dst = Column::Numeric(Vec::new());
                    }
                    if let Column::Numeric(buf) = dst {
                        buf.resize(m, 0.0);
                        v.copy_into(buf);
                        if let Some(r) = buf.iter().position(|x| x.is_infinite()) {
                            return Err(Error::InvalidData(format!(
                                "feature '{}', row {}: infinite value",
                                self.schema.names[f],
                                r0 + r + 1
                            )));
                        }
                    }
                }
                ColumnView::Categorical { codes, .. } => {
                    if !matches!(dst, Column::Categorical { .. }) {
                        *dst = Column::Categorical { codes: Vec::new(), levels: Vec::new() };
                    }
                    if let Column::Categorical { codes: buf, .. } = dst {
                        buf.clear();
                        buf.extend_from_slice(codes);
                    }
                }
            }
        }
        Ok(())
    }

    /// The first `n_trees` trees ready for prediction on `columns`: each tree's walk (masks when
    /// it has at most 64 leaves, else a flat walk when its splits are all numeric, else the
    /// reference walk) and its products `α_t · h` (docs/explanation/adaboost.md#adaboost-notation: `H(x) = Σ_j α_j h_j(x)`).
    fn compile(&self, n_trees: usize, kinds: &[FeatureKind]) -> Result<Vec<Compiled<'_>>> {
        let k = self.n_outputs;
        let mut out = Vec::with_capacity(n_trees);
        for (t, (tree, &a)) in self.trees.iter().zip(&self.alphas).take(n_trees).enumerate() {
            let mut numeric_only = true;
            for node in &tree.nodes {
                if let Node::Split { feature, rule, .. } = node {
                    let kind = kinds.get(*feature as usize).ok_or_else(|| {
                        Error::InvalidData(format!(
                            "tree {t} splits on feature {feature}, the data have {} features",
                            kinds.len()
                        ))
                    })?;
                    numeric_only &= matches!((rule, kind), (SplitRule::Numeric { .. }, FeatureKind::Numeric));
                }
            }
            let value = |l: usize| -> Result<&[f64]> {
                tree.leaf_values
                    .get(l * k..(l + 1) * k)
                    .ok_or_else(|| Error::InvalidModel(format!("tree {t}: leaf {l} has no values")))
            };
            let (walk, leaves) = match MaskTree::new(tree) {
                Some(mt) => {
                    let order = mt.leaf_at().iter().map(|&l| l as usize).collect();
                    (Walk::Masks(mt), order)
                }
                None => {
                    let walk = match FlatTree::new(tree) {
                        Some(ft) if numeric_only => Walk::Flat(ft),
                        _ => Walk::Plain(tree),
                    };
                    (walk, (0..tree.n_leaves()).collect::<Vec<usize>>())
                }
            };
            let mut weighted = Vec::with_capacity(leaves.len().max(MASK_TREE_MAX_LEAVES) * k);
            for l in leaves {
                weighted.extend(value(l)?.iter().map(|h| a * h));
            }
            if matches!(walk, Walk::Masks(_)) {
                weighted.resize(MASK_TREE_MAX_LEAVES * k, 0.0);
            }
            out.push(Compiled { walk, weighted });
        }
        Ok(out)
    }

    /// Adds `trees` in order to the scores `out` (`n × n_outputs`) of `columns`: row blocks in
    /// parallel, every score summed in tree order, so the result does not depend on the number
    /// of threads.
    /// With `cancel`, blocks not yet started are skipped once it is set, and the call returns
    /// [`Error::Cancelled`].
    fn add_compiled(
        &self,
        trees: &[Compiled<'_>],
        columns: &[Column],
        clipped: bool,
        out: &mut [f64],
        cancel: Option<&Cancel>,
    ) -> Result<()> {
        let k = self.n_outputs;
        let n = out.len() / k.max(1);
        // Plain slices of the numeric columns for flat walks (empty for categorical columns,
        // which a flat walk never reads).
        let num_cols = numeric_slices(columns);
        let clip = if clipped { self.clip } else { None };
        let block = |(b, o): (usize, &mut [f64])| {
            if cancel.is_some_and(Cancel::is_cancelled) {
                return;
            }
            let r0 = b * PREDICT_BLOCK;
            match clip {
                Some(d) => add_trees::<true>(trees, columns, &num_cols, k, d, r0, o),
                None => add_trees::<false>(trees, columns, &num_cols, k, 0.0, r0, o),
            }
        };
        if n >= 2 * PREDICT_BLOCK {
            out.par_chunks_mut(PREDICT_BLOCK * k).enumerate().for_each(block);
        } else {
            out.chunks_mut(PREDICT_BLOCK * k).enumerate().for_each(block);
        }
        crate::util::cancel::check(cancel)
    }

    /// The model's columns of `features`: borrowed when they already match the schema (same
    /// names in order, same kinds, same category levels), else re-mapped by [`Ensemble::align`].
    fn aligned<'a>(&self, features: &'a Features) -> Result<Cow<'a, [Column]>> {
        let s = &self.schema;
        let same = features.names == s.names
            && features.columns.iter().zip(&s.kinds).zip(&s.levels).all(|((c, kind), lv)| match c {
                Column::Numeric(_) => *kind == FeatureKind::Numeric,
                Column::Categorical { levels, .. } => {
                    *kind == FeatureKind::Categorical && lv.as_deref() == Some(levels.as_slice())
                }
            });
        if same {
            Ok(Cow::Borrowed(&features.columns))
        } else {
            Ok(Cow::Owned(self.align(features)?))
        }
    }

    /// Scores of the first `n_rounds` trees of every example of `features` (`n × n_outputs`), the
    /// kernel of [`Ensemble::predict`]'s [`Output::Scores`].
    fn scores_of_features(
        &self,
        features: &Features,
        n_rounds: Option<usize>,
        clipped: bool,
        cancel: Option<&Cancel>,
    ) -> Result<Vec<f64>> {
        let cols = self.aligned(features)?;
        let n = features.n_rows();
        if cols.iter().any(|c| c.len() != n) {
            return Err(Error::InvalidData("feature columns of different lengths".into()));
        }
        let mut out = vec![self.base_score; n * self.n_outputs];
        if n == 0 || self.n_outputs == 0 {
            return Ok(out);
        }
        let kinds: Vec<FeatureKind> = cols.iter().map(Column::kind).collect();
        let t_max = n_rounds.unwrap_or(self.trees.len()).min(self.trees.len());
        let trees = self.compile(t_max, &kinds)?;
        self.add_compiled(&trees, &cols, clipped, &mut out, cancel)?;
        Ok(out)
    }

    /// Calls `f(round, scores)` after each tree is added (staged scores), `round` 1-based.
    pub fn for_each_stage(&self, features: &Features, clipped: bool, mut f: impl FnMut(usize, &[f64])) -> Result<()> {
        let cols = self.aligned(features)?;
        let n = features.n_rows();
        let mut s = vec![self.base_score; n * self.n_outputs];
        let kinds: Vec<FeatureKind> = cols.iter().map(Column::kind).collect();
        let trees = self.compile(self.trees.len(), &kinds)?;
        for (t, tree) in trees.iter().enumerate() {
            if !s.is_empty() {
                self.add_compiled(std::slice::from_ref(tree), &cols, clipped, &mut s, None)?;
            }
            f(t + 1, &s);
        }
        Ok(())
    }

    /// Predicted class index of each row from its scores (binary: 1 iff score > 0; multi-class:
    /// the arg-max, ties to the lowest index).
    pub fn classes_from_scores(&self, scores: &[f64]) -> Vec<u32> {
        let k = self.n_outputs;
        if let Some(out) = &self.output {
            return scores.chunks_exact(k).map(|row| out.predict_class(row) as u32).collect();
        }
        match &self.task {
            Task::Binary { .. } => scores.iter().map(|&s| u32::from(s > 0.0)).collect(),
            _ => scores
                .chunks_exact(k)
                .map(|row| {
                    let mut best = 0;
                    for (j, &v) in row.iter().enumerate() {
                        if v > row[best] {
                            best = j;
                        }
                    }
                    best as u32
                })
                .collect(),
        }
    }

    /// Probability estimates from scores `n × n_outputs` ([`Output::Probabilities`]): binary
    /// `P(+1|x) = 1/(1 + e^(−a·f))` with the model's [`probability_scale`](Ensemble::probability_scale)
    /// `a` (calibrated, or 2: docs/explanation/probabilities.md), one column per
    /// class (`n × 2`); multi-class: `σ(2 f_ℓ)` normalised over the classes; multi-label:
    /// `σ(2 f_ℓ)` per label. For output codes (AdaBoost.MO) the class probabilities are
    /// proportional to `1/L_c` (the soft-max of [`Ensemble::class_scores`]).
    pub fn proba_from_scores(&self, s: &[f64]) -> Vec<f64> {
        let sig = |f: f64| 1.0 / (1.0 + (-2.0 * f).exp());
        if let Some(MultiOutput::Code { .. }) = &self.output {
            let cs = self.class_scores(s);
            let c = self.task.names().len();
            return cs
                .chunks_exact(c)
                .flat_map(|row| {
                    let mut p = vec![0.0; row.len()];
                    softmax_into(row, &mut p);
                    p
                })
                .collect();
        }
        match &self.task {
            Task::Binary { .. } => {
                let a = self.probability_scale();
                s.iter()
                    .flat_map(|&f| {
                        let p = 1.0 / (1.0 + (-a * f).exp());
                        [1.0 - p, p]
                    })
                    .collect()
            }
            Task::Multilabel { .. } => s.iter().map(|&f| sig(f)).collect(),
            Task::Multiclass { .. } => s
                .chunks_exact(self.n_outputs)
                .flat_map(|row| {
                    let mut p: Vec<f64> = row.iter().map(|&f| sig(f)).collect();
                    let z: f64 = p.iter().sum();
                    if z > 0.0 {
                        p.iter_mut().for_each(|x| *x /= z);
                    } else {
                        // Every σ(2f) underflowed (all scores ≲ −370): normalise in the log domain,
                        // ln σ(2f) = −ln(1 + e^(−2f)), so no row ever gets 0/0.
                        let logs: Vec<f64> = row.iter().map(|&f| -softplus(-2.0 * f)).collect();
                        softmax_into(&logs, &mut p);
                    }
                    p
                })
                .collect(),
        }
    }

    /// Names of the score columns (class or label names; one unnamed score for binary models).
    pub fn output_names(&self) -> Vec<String> {
        if self.n_outputs == 1 {
            return vec!["score".into()];
        }
        let names = self.task.names();
        if names.len() == self.n_outputs {
            names.to_vec()
        } else {
            (0..self.n_outputs).map(|j| format!("code{j}")).collect()
        }
    }

    /// Predicted label of each row as text: the class name, or for multi-label models the
    /// labels with a positive score joined by `;`.
    pub fn predict_labels_from_scores(&self, scores: &[f64]) -> Vec<String> {
        let names = self.task.names();
        // MR's learned threshold (0 when none).
        let theta = self.label_threshold.unwrap_or(0.0);
        match &self.task {
            Task::Multilabel { labels } => scores
                .chunks_exact(self.n_outputs)
                .map(|row| {
                    labels
                        .iter()
                        .zip(row)
                        .filter(|(_, f)| **f > theta)
                        .map(|(l, _)| l.as_str())
                        .collect::<Vec<_>>()
                        .join(";")
                })
                .collect(),
            _ => self.classes_from_scores(scores).into_iter().map(|c| names[c as usize].clone()).collect(),
        }
    }

    /// Per-class (or per-label) decision values of each row, `n × n_classes`: the label scores
    /// themselves; for output codes (AdaBoost.MO) `−ln L_c` with loss-based decoding (`L_c` the
    /// decoding loss of class `c`) and minus the Hamming distance with Hamming decoding, so the
    /// arg-max is the decoded class; binary models give `[−f, f]`.
    pub fn class_scores(&self, scores: &[f64]) -> Vec<f64> {
        match (&self.output, &self.task) {
            (Some(MultiOutput::Code { code, decode }), _) => {
                let c = code.n_classes;
                let mut v = vec![0.0; scores.len() / self.n_outputs * c];
                for (row, o) in scores.chunks_exact(self.n_outputs).zip(v.chunks_exact_mut(c)) {
                    outputs::decode_losses_into(code, row, *decode, o);
                    for (y, x) in o.iter_mut().enumerate() {
                        *x = match decode {
                            // Exponential losses overflow any probability map: use their log.
                            outputs::Decode::Loss if x.is_finite() && *x >= f64::MIN_POSITIVE => -x.ln(),
                            // The loss itself over- or underflowed: its log, −ln Σ_ℓ e^(−λ_ℓ f_ℓ),
                            // by log-sum-exp (no −∞ class score, no NaN probability).
                            outputs::Decode::Loss => -outputs::log_decode_loss(code.codeword(y), row),
                            outputs::Decode::Hamming => -*x,
                        };
                    }
                }
                v
            }
            (_, Task::Binary { .. }) => scores.iter().flat_map(|&f| [-f, f]).collect(),
            _ => scores.to_vec(),
        }
    }
}

#[cfg(test)]
mod multiclass_tests {
    use crate::boost::driver::{fit, Algorithm, BoostParams};
    use crate::boost::multiclass::MultiVariant;
    use crate::data::{Column, Dataset, Features, Target};
    use crate::Prediction;

    #[test]
    fn output_code_probabilities_follow_the_decoded_class() {
        let n = 240;
        let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 101) as f64).collect();
        let z: Vec<f64> = (0..n).map(|i| ((i * 11) % 13) as f64).collect();
        let y: Vec<u32> = (0..n).map(|i| ((x[i] / 34.0) as u32 + u32::from(z[i] > 10.0)) % 4).collect();
        let data = Dataset::new(
            Features { names: vec!["x".into(), "z".into()], columns: vec![Column::Numeric(x), Column::Numeric(z)] },
            Some(Target::Classes { y, classes: (0..4).map(|c| format!("c{c}")).collect() }),
            None,
        )
        .unwrap();
        let mut p = BoostParams { algorithm: Algorithm::AdaBoostMO, n_estimators: 20, ..Default::default() };
        p.multiclass.code = "random:7:3".parse().unwrap();
        p.tree.max_leaves = 4;
        let m = fit(&data, &p).unwrap();
        assert_eq!(m.params.multiclass.variant, MultiVariant::MoDiscrete, "the variant that ran is recorded");
        assert_eq!(m.n_outputs, 7);
        let s = m.predict(&data.features, &Prediction::scores()).unwrap();
        let proba = m.proba_from_scores(&s);
        let pred = m.classes_from_scores(&s);
        assert_eq!(proba.len(), n * 4);
        for (row, &c) in proba.chunks_exact(4).zip(&pred) {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            assert!(row.iter().all(|p| p.is_finite() && *p >= 0.0));
            let best = row.iter().enumerate().fold(0, |b, (j, v)| if *v > row[b] { j } else { b });
            assert_eq!(best as u32, c);
        }
    }
}

#[cfg(test)]
mod prediction_tests {
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::boost::driver::{fit, Algorithm, BoostParams};
    use crate::data::{read_csv_from, CsvOptions};
    use crate::data::{Dataset, Schema};
    use crate::tree::test_support::{random_columns, random_kinds, random_tree};

    /// The reference: every row walks every tree with [`Tree::values_of`] and adds `α·h` in tree
    /// order, clipping after each addition (the implementation before the fast paths).
    fn naive_decision_function(m: &Ensemble, columns: &[Column], n_rounds: Option<usize>, clipped: bool) -> Vec<f64> {
        let n = columns.first().map_or(0, Column::len);
        let k = m.n_outputs;
        let clip = if clipped { m.clip } else { None };
        let t_max = n_rounds.unwrap_or(m.trees.len()).min(m.trees.len());
        let mut out = vec![m.base_score; n * k];
        for i in 0..n {
            for (tree, &a) in m.trees[..t_max].iter().zip(&m.alphas) {
                for (o, h) in out[i * k..(i + 1) * k].iter_mut().zip(tree.values_of(columns, i)) {
                    *o += a * h;
                    if let Some(d) = clip {
                        *o = o.clamp(-d, d);
                    }
                }
            }
        }
        out
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    fn fast(m: &Ensemble, columns: &[Column], n_rounds: Option<usize>, clipped: bool) -> Vec<f64> {
        let mut out = vec![f64::NAN; columns.first().map_or(0, Column::len) * m.n_outputs];
        m.decision_function_into(columns, n_rounds, clipped, &mut out).unwrap();
        out
    }

    /// A random ensemble over `kinds`: `n_trees` trees of 1–16 leaves (mask walks), some of
    /// 65–80 (flat or reference walks); a clipping level half of the time.
    fn random_ensemble(rng: &mut ChaCha8Rng, kinds: &[FeatureKind], k: usize, n_trees: usize) -> Ensemble {
        let schema = Schema {
            names: (0..kinds.len()).map(|f| format!("f{f}")).collect(),
            kinds: kinds.to_vec(),
            levels: kinds
                .iter()
                .map(|kind| match kind {
                    FeatureKind::Categorical => Some((0..12).map(|l| format!("l{l}")).collect()),
                    FeatureKind::Numeric => None,
                })
                .collect(),
        };
        let task = if k == 1 {
            Task::Binary { classes: vec!["neg".into(), "pos".into()] }
        } else {
            Task::Multiclass { classes: (0..k).map(|c| format!("c{c}")).collect() }
        };
        let mut m = Ensemble::new(schema, task, BoostParams::default(), k);
        for _ in 0..n_trees {
            let leaves = if rng.gen_bool(0.15) { rng.gen_range(65..=80) } else { rng.gen_range(1..=16) };
            let tree = random_tree(rng, kinds, leaves, k);
            m.push(tree, rng.gen_range(-1.5..1.5));
        }
        m.clip = rng.gen_bool(0.5).then(|| rng.gen_range(0.5..3.0));
        m.base_score = rng.gen_range(-0.5..0.5);
        m
    }

    /// Scores and staged scores of `m` on `columns` equal the reference's, bit for bit.
    fn assert_agrees(m: &Ensemble, columns: &[Column]) {
        let half = Some(m.n_trees() / 2);
        for (rounds, clipped) in [(None, false), (None, true), (half, false), (half, true)] {
            assert_eq!(
                bits(&fast(m, columns, rounds, clipped)),
                bits(&naive_decision_function(m, columns, rounds, clipped)),
                "rounds {rounds:?}, clipped {clipped}"
            );
        }
        let features = Features { names: m.schema.names.clone(), columns: columns.to_vec() };
        for clipped in [false, true] {
            let mut stages = 0;
            m.for_each_stage(&features, clipped, |t, s| {
                assert_eq!(bits(s), bits(&naive_decision_function(m, columns, Some(t), clipped)), "stage {t}");
                stages += 1;
            })
            .unwrap();
            assert_eq!(stages, m.n_trees());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Random trees (all three walks), NaN, missing and unseen categories, one or three
        /// outputs, clipped or not: the same bits as the reference.
        #[test]
        fn prediction_is_bit_identical_to_the_reference(seed in any::<u64>(), n in 0usize..700, k in 1usize..=3) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let d = rng.gen_range(1..6);
            let p_cat = if rng.gen_bool(0.5) { 0.0 } else { 0.4 };
            let kinds = random_kinds(&mut rng, d, p_cat);
            let n_trees = rng.gen_range(0..12);
            let m = random_ensemble(&mut rng, &kinds, k, n_trees);
            let columns = random_columns(&mut rng, &kinds, n);
            assert_agrees(&m, &columns);
        }
    }

    #[test]
    fn parallel_blocks_and_columns_of_the_wrong_kind() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let kinds = [FeatureKind::Numeric, FeatureKind::Categorical, FeatureKind::Numeric, FeatureKind::Categorical];
        // Several parallel blocks and a ragged last one.
        let n = 2 * PREDICT_BLOCK + MASK_BLOCK + 77;
        for k in [1, 3] {
            let m = random_ensemble(&mut rng, &kinds, k, 10);
            assert_agrees(&m, &random_columns(&mut rng, &kinds, n));
            // `decision_function_into` takes columns as given: a column of the other kind makes
            // every split on it go right, as in the reference walk.
            let flipped: Vec<FeatureKind> = kinds
                .iter()
                .map(|k| if *k == FeatureKind::Numeric { FeatureKind::Categorical } else { FeatureKind::Numeric })
                .collect();
            let columns = random_columns(&mut rng, &flipped, 300);
            assert_eq!(bits(&fast(&m, &columns, None, true)), bits(&naive_decision_function(&m, &columns, None, true)));
        }
    }

    #[test]
    fn bad_columns_are_errors() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let kinds = [FeatureKind::Numeric; 3];
        let m = random_ensemble(&mut rng, &kinds, 1, 5);
        let mut out = vec![0.0; 10];
        let short = random_columns(&mut rng, &kinds[..1], 10);
        let e = m.decision_function_into(&short, None, false, &mut out).unwrap_err().to_string();
        assert!(e.contains("the data have 1 features"), "{e}");
        let mut ragged = random_columns(&mut rng, &kinds, 10);
        ragged[2] = Column::Numeric(vec![0.0; 9]);
        let e = m.decision_function_into(&ragged, None, false, &mut out).unwrap_err().to_string();
        assert!(e.contains("different lengths"), "{e}");
    }

    /// Data with a categorical feature (with missing values) and NaN, labels in three classes.
    fn data(n_classes: usize) -> Dataset {
        let mut text = String::from("a,b,c,label\n");
        for i in 0..600 {
            let a = (i * 7 % 23) as f64 / 3.0;
            let b = ["x", "y", "z", "", "w"][i % 5];
            let c = if i % 11 == 0 { String::new() } else { format!("{}", (i * 13 % 17) as f64 - 8.5) };
            let s = a + if b == "y" { 3.0 } else { 0.0 } + if c.is_empty() { 1.0 } else { 0.0 } + (i % 3) as f64;
            let y = (s as usize / 3) % n_classes;
            text.push_str(&format!("{a},{b},{c},k{y}\n"));
        }
        read_csv_from(text.as_bytes(), "p.csv", &CsvOptions::default()).unwrap()
    }

    #[test]
    fn fitted_models_predict_as_the_reference() {
        for (algorithm, n_classes) in [
            (Algorithm::RealAdaBoost, 2),
            (Algorithm::TAdaBoost, 2),
            (Algorithm::AdaBoost, 2),
            (Algorithm::RealAdaBoostMH, 3),
            (Algorithm::AdaBoostMO, 3),
        ] {
            let d = data(n_classes);
            let mut p = BoostParams { algorithm, n_estimators: 12, ..Default::default() };
            p.tree.max_leaves = 6;
            let m = fit(&d, &p).unwrap();
            assert_eq!(m.clip.is_some(), algorithm == Algorithm::TAdaBoost, "{algorithm:?}");
            let cols = m.align(&d.features).unwrap();
            assert_agrees(&m, &cols);
            // The allocating entry points go the same way.
            let s = m.predict(&d.features, &Prediction::scores().clipped(true)).unwrap();
            assert_eq!(bits(&s), bits(&naive_decision_function(&m, &cols, None, true)));
            assert_eq!(
                m.predict(&d.features, &Prediction::new(Output::Probabilities).clipped(true)).unwrap(),
                m.proba_from_scores(&s)
            );
        }
    }

    #[test]
    fn every_output_is_the_same_from_views_and_from_features() {
        for (algorithm, n_classes) in [(Algorithm::TAdaBoost, 2), (Algorithm::AdaBoostMO, 3)] {
            let d = data(n_classes);
            let mut p = BoostParams { algorithm, n_estimators: 9, ..Default::default() };
            p.tree.max_leaves = 5;
            let m = fit(&d, &p).unwrap();
            let cols = m.align(&d.features).unwrap();
            let views: Vec<ColumnView<'_>> = cols
                .iter()
                .map(|c| match c {
                    Column::Numeric(v) => ColumnView::Numeric(crate::data::NumericView::f64(v)),
                    Column::Categorical { codes, levels } => ColumnView::Categorical { codes, n_levels: levels.len() },
                })
                .collect();
            let n = d.n_rows();
            let cancel = Cancel::new();
            for output in [Output::Scores, Output::Probabilities, Output::Staged, Output::Contributions] {
                for n_rounds in [None, Some(4)] {
                    if output == Output::Contributions && n_rounds.is_some() {
                        continue;
                    }
                    let mut request = Prediction::new(output).clipped(output != Output::Contributions).cancel(&cancel);
                    request.n_rounds = n_rounds;
                    let mut out = vec![f64::NAN; n * m.output_width(&request)];
                    m.predict_into(&views, &request, &mut out).unwrap();
                    let want = m.predict(&d.features, &request).unwrap();
                    assert_eq!(bits(&out), bits(&want), "{algorithm:?} {output:?} {n_rounds:?}");
                }
            }
            // Staged stage t is the scores of the first t + 1 trees.
            let staged = m.predict(&d.features, &Prediction::new(Output::Staged)).unwrap();
            let k = m.n_outputs;
            let third = m.predict(&d.features, &Prediction::scores().n_rounds(3)).unwrap();
            assert_eq!(bits(&staged[2 * n * k..3 * n * k]), bits(&third));
            // A wrong buffer, contributions of part of the model and a set flag are errors.
            assert!(m.predict_into(&views, &Prediction::scores(), &mut [0.0; 3]).is_err());
            assert!(m.predict(&d.features, &Prediction::new(Output::Contributions).n_rounds(2)).is_err());
            cancel.cancel();
            let e = m.predict(&d.features, &Prediction::scores().cancel(&cancel)).unwrap_err();
            assert!(matches!(e, Error::Cancelled), "{e}");
        }
    }
}
