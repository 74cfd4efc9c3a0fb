//! ONNX export of the linear model, behind the `onnx` feature.
//!
//! The graph: one `ai.onnx.ml` `TreeEnsembleRegressor` summing `α_t·h_t` (and `base_score`) into
//! the raw scores `scores` (`N × n_outputs`, float32), then standard operators for the outputs
//! boostlab predicts: `label` (the predicted class index, int64 `N`; for multi-label models the
//! 0/1 label matrix `N × k`) and `probabilities` (as [`Ensemble::proba_from_scores`]). The input
//! `input` is float32 `N × n_features`, NaN for a missing value; a categorical feature's column
//! holds the category code, the level's index in the model's level order (the metadata entry
//! `boostlab.categorical_levels`); NaN, and any value that is not a level's code (−1, a fraction,
//! a code past the last level), is a missing category.
//!
//! Thresholds: ONNX compares float32 inputs with float32 thresholds. A boostlab split sends `x`
//! left when `x ≤ θ` (θ an f64 bin boundary); its ONNX threshold is the largest float32 `θ32 ≤ θ`,
//! so that for every float32 `x`, `x ≤ θ32` exactly when `x ≤ θ`: the same branch as boostlab on
//! the float32 values. Missing values take the split's missing direction
//! (`nodes_missing_value_tracks_true`).
//!
//! Categorical splits: `ai.onnx.ml` v1 trees only compare numbers, so each distinct category set
//! `S` a tree tests on feature `f` becomes one derived column, looked up by code in a constant
//! table: 0 for a code in `S`, 1 for another level's code, NaN for a missing category. The tree
//! node tests `derived ≤ 0.5` (true: the code is in `S`, boostlab's left branch) and sends NaN the
//! split's missing way, as boostlab sends missing and unseen categories. The lookup
//! (`Gather`, `Floor`/`Equal`/`Less` for the code's validity, `Where`, `Concat`) runs before the
//! tree ensemble, whose input is `input` followed by the derived columns. Graphs without
//! categorical splits have no lookup.
//!
//! Refused, with the reason: output codes (AdaBoost.MO's decoding) and the clipped t-AdaBoost
//! model (clipping after every tree is not a sum of trees). Every initializer is an input of some
//! node. The model's `metadata_props` hold `boostlab.feature_names` and `boostlab.classes` (JSON
//! lists) and `boostlab.categorical_levels` (a JSON object: feature name → its levels, in code
//! order).
//!
//! The protobuf messages are the subset of `onnx.proto` (field numbers from the ONNX IR spec) the
//! graph needs, written by hand with `prost`.

use prost::Message;

use crate::data::FeatureKind;
use crate::error::{Error, Result};
use crate::model::{Ensemble, Task};
use crate::tree::{Node, SplitRule};
use crate::util::cancel::Cancel;

/// `onnx.ModelProto`.
#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    /// IR version.
    #[prost(int64, tag = "1")]
    pub ir_version: i64,
    /// Operator sets used.
    #[prost(message, repeated, tag = "8")]
    pub opset_import: Vec<OperatorSetIdProto>,
    /// Producer name.
    #[prost(string, tag = "2")]
    pub producer_name: String,
    /// Producer version.
    #[prost(string, tag = "3")]
    pub producer_version: String,
    /// Documentation.
    #[prost(string, tag = "6")]
    pub doc_string: String,
    /// The graph.
    #[prost(message, optional, tag = "7")]
    pub graph: Option<GraphProto>,
    /// Named strings about the model.
    #[prost(message, repeated, tag = "14")]
    pub metadata_props: Vec<StringStringEntryProto>,
}

/// `onnx.StringStringEntryProto`.
#[derive(Clone, PartialEq, Message)]
pub struct StringStringEntryProto {
    /// Key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `onnx.OperatorSetIdProto`.
#[derive(Clone, PartialEq, Message)]
pub struct OperatorSetIdProto {
    /// Domain ("" = the default ONNX domain).
    #[prost(string, tag = "1")]
    pub domain: String,
    /// Version.
    #[prost(int64, tag = "2")]
    pub version: i64,
}

/// `onnx.GraphProto`.
#[derive(Clone, PartialEq, Message)]
pub struct GraphProto {
    /// Nodes, in topological order.
    #[prost(message, repeated, tag = "1")]
    pub node: Vec<NodeProto>,
    /// Name.
    #[prost(string, tag = "2")]
    pub name: String,
    /// Constant tensors.
    #[prost(message, repeated, tag = "5")]
    pub initializer: Vec<TensorProto>,
    /// Inputs.
    #[prost(message, repeated, tag = "11")]
    pub input: Vec<ValueInfoProto>,
    /// Outputs.
    #[prost(message, repeated, tag = "12")]
    pub output: Vec<ValueInfoProto>,
}

/// `onnx.NodeProto`.
#[derive(Clone, PartialEq, Message)]
pub struct NodeProto {
    /// Input names.
    #[prost(string, repeated, tag = "1")]
    pub input: Vec<String>,
    /// Output names.
    #[prost(string, repeated, tag = "2")]
    pub output: Vec<String>,
    /// Node name.
    #[prost(string, tag = "3")]
    pub name: String,
    /// Operator.
    #[prost(string, tag = "4")]
    pub op_type: String,
    /// Attributes.
    #[prost(message, repeated, tag = "5")]
    pub attribute: Vec<AttributeProto>,
    /// Operator domain.
    #[prost(string, tag = "7")]
    pub domain: String,
}

/// `onnx.AttributeProto` (the kinds used here).
#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// FLOAT value.
    #[prost(float, tag = "2")]
    pub f: f32,
    /// INT value.
    #[prost(int64, tag = "3")]
    pub i: i64,
    /// STRING value.
    #[prost(bytes = "vec", tag = "4")]
    pub s: Vec<u8>,
    /// FLOATS value.
    #[prost(float, repeated, tag = "7")]
    pub floats: Vec<f32>,
    /// INTS value.
    #[prost(int64, repeated, tag = "8")]
    pub ints: Vec<i64>,
    /// STRINGS value.
    #[prost(bytes = "vec", repeated, tag = "9")]
    pub strings: Vec<Vec<u8>>,
    /// AttributeType: FLOAT 1, INT 2, STRING 3, FLOATS 6, INTS 7, STRINGS 8.
    #[prost(int32, tag = "20")]
    pub r#type: i32,
}

/// `onnx.TensorProto` (dense float or int64 data).
#[derive(Clone, PartialEq, Message)]
pub struct TensorProto {
    /// Shape.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// Element type (1 = FLOAT, 7 = INT64).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// FLOAT data.
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// INT64 data.
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    /// Name.
    #[prost(string, tag = "8")]
    pub name: String,
}

/// `onnx.ValueInfoProto`.
#[derive(Clone, PartialEq, Message)]
pub struct ValueInfoProto {
    /// Name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Type.
    #[prost(message, optional, tag = "2")]
    pub r#type: Option<TypeProto>,
}

/// `onnx.TypeProto` (tensor types only).
#[derive(Clone, PartialEq, Message)]
pub struct TypeProto {
    /// A tensor type.
    #[prost(message, optional, tag = "1")]
    pub tensor_type: Option<TensorTypeProto>,
}

/// `onnx.TypeProto.Tensor`.
#[derive(Clone, PartialEq, Message)]
pub struct TensorTypeProto {
    /// Element type.
    #[prost(int32, tag = "1")]
    pub elem_type: i32,
    /// Shape.
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
}

/// `onnx.TensorShapeProto`.
#[derive(Clone, PartialEq, Message)]
pub struct TensorShapeProto {
    /// Dimensions.
    #[prost(message, repeated, tag = "1")]
    pub dim: Vec<Dimension>,
}

/// `onnx.TensorShapeProto.Dimension`: a size or a symbolic name.
#[derive(Clone, PartialEq, Message)]
pub struct Dimension {
    /// A fixed size.
    #[prost(int64, optional, tag = "1")]
    pub dim_value: Option<i64>,
    /// A symbolic size.
    #[prost(string, optional, tag = "2")]
    pub dim_param: Option<String>,
}

const FLOAT: i32 = 1;
const INT64: i32 = 7;

fn ints(name: &str, v: Vec<i64>) -> AttributeProto {
    AttributeProto { name: name.into(), ints: v, r#type: 7, ..Default::default() }
}

fn floats(name: &str, v: Vec<f32>) -> AttributeProto {
    AttributeProto { name: name.into(), floats: v, r#type: 6, ..Default::default() }
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i: v, r#type: 2, ..Default::default() }
}

fn string(name: &str, v: &str) -> AttributeProto {
    AttributeProto { name: name.into(), s: v.as_bytes().to_vec(), r#type: 3, ..Default::default() }
}

fn strings(name: &str, v: Vec<&str>) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        strings: v.iter().map(|s| s.as_bytes().to_vec()).collect(),
        r#type: 8,
        ..Default::default()
    }
}

fn node(op: &str, domain: &str, input: &[&str], output: &[&str], attribute: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: input.iter().map(|s| s.to_string()).collect(),
        output: output.iter().map(|s| s.to_string()).collect(),
        name: output[0].to_string(),
        op_type: op.into(),
        attribute,
        domain: domain.into(),
    }
}

fn value_info(name: &str, elem_type: i32, dims: &[Option<i64>]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| match d {
            Some(v) => Dimension { dim_value: Some(*v), dim_param: None },
            None => Dimension { dim_value: None, dim_param: Some("N".into()) },
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto { elem_type, shape: Some(TensorShapeProto { dim }) }),
        }),
    }
}

fn float_const(name: &str, dims: Vec<i64>, v: Vec<f32>) -> TensorProto {
    TensorProto { dims, data_type: FLOAT, float_data: v, name: name.into(), ..Default::default() }
}

fn int_const(name: &str, dims: Vec<i64>, v: Vec<i64>) -> TensorProto {
    TensorProto { dims, data_type: INT64, int64_data: v, name: name.into(), ..Default::default() }
}

/// The largest float32 not above `x` (f32::MAX for larger finite values): for every float32
/// `v`, `v ≤ result` exactly when `v ≤ x`.
pub fn f32_threshold(x: f64) -> f32 {
    if x >= f64::from(f32::MAX) {
        return f32::MAX;
    }
    if x < f64::from(f32::MIN) {
        return f32::MIN;
    }
    let r = x as f32; // nearest
    if f64::from(r) <= x {
        r
    } else {
        next_down(r)
    }
}

/// The next float32 towards −∞ of a finite `r` (`f32::next_down` needs Rust 1.86).
fn next_down(r: f32) -> f32 {
    let bits = r.to_bits();
    if r == 0.0 {
        -f32::from_bits(1)
    } else if r > 0.0 {
        f32::from_bits(bits - 1)
    } else {
        f32::from_bits(bits + 1)
    }
}

/// The next float32 towards +∞ of a finite `r`.
#[cfg(test)]
fn next_up(r: f32) -> f32 {
    -next_down(-r)
}

/// The derived columns of the categorical splits: one per distinct (feature, category set).
struct CategoricalColumns {
    /// The categorical features split on, in feature order, with their number of levels.
    features: Vec<(u32, usize)>,
    /// The distinct sets: feature and the sorted codes that go left.
    sets: Vec<(u32, Vec<u32>)>,
}

impl CategoricalColumns {
    fn of(m: &Ensemble, d: usize) -> CategoricalColumns {
        let mut sets: Vec<(u32, Vec<u32>)> = Vec::new();
        for tree in &m.trees {
            for n in &tree.nodes {
                if let Node::Split { feature, rule: SplitRule::Categorical { left, .. }, .. } = n {
                    if !sets.iter().any(|(f, s)| f == feature && s == left) {
                        sets.push((*feature, left.clone()));
                    }
                }
            }
        }
        sets.sort();
        let mut features: Vec<(u32, usize)> = sets
            .iter()
            .map(|(f, _)| {
                let n_levels = m.schema.levels.get(*f as usize).and_then(|l| l.as_ref()).map_or(0, Vec::len);
                (*f, n_levels)
            })
            .collect();
        features.dedup();
        debug_assert!(features.iter().all(|(f, _)| (*f as usize) < d));
        CategoricalColumns { features, sets }
    }

    /// The derived column (counted from 0 after the input's columns) of a split.
    fn column(&self, feature: u32, left: &[u32]) -> usize {
        self.sets.iter().position(|(f, s)| *f == feature && s == left).expect("every categorical split has a column")
    }

    /// Appends the lookup's nodes and constants; returns the name of `input` followed by the
    /// derived columns.
    fn lookup(&self, nodes: &mut Vec<NodeProto>, init: &mut Vec<TensorProto>) -> &'static str {
        let m = self.features.len() as i64;
        let s = self.sets.len() as i64;
        // Per set: the offset of its table in `cat_table`, the position of its feature in `cat_x`.
        let (mut table, mut offsets, mut positions) = (Vec::new(), Vec::new(), Vec::new());
        for (f, left) in &self.sets {
            let p = self.features.iter().position(|(g, _)| g == f).expect("the set's feature is listed");
            let n_levels = self.features[p].1;
            positions.push(p as i64);
            offsets.push(table.len() as i64);
            // Index 0: a missing category; index c + 1: code c.
            table.push(f32::NAN);
            table.extend((0..n_levels as u32).map(|c| if left.binary_search(&c).is_ok() { 0.0 } else { 1.0 }));
        }
        let features: Vec<i64> = self.features.iter().map(|(f, _)| i64::from(*f)).collect();
        let n_levels: Vec<f32> = self.features.iter().map(|(_, n)| *n as f32).collect();
        let table_len = table.len() as i64;
        init.push(int_const("cat_features", vec![m], features));
        init.push(float_const("cat_levels", vec![m], n_levels));
        init.push(int_const("cat_position", vec![s], positions));
        init.push(int_const("cat_offset", vec![s], offsets));
        init.push(float_const("cat_table", vec![table_len], table));
        let ops: [(&str, &[&str], &str, Vec<AttributeProto>); 13] = [
            ("Gather", &["input", "cat_features"], "cat_x", vec![int("axis", 1)]),
            // A code is a whole number in [0, n_levels); NaN fails every comparison.
            ("Floor", &["cat_x"], "cat_floor", vec![]),
            ("Equal", &["cat_x", "cat_floor"], "cat_whole", vec![]),
            ("Less", &["cat_x", "zero"], "cat_negative", vec![]),
            ("Not", &["cat_negative"], "cat_nonnegative", vec![]),
            ("Less", &["cat_x", "cat_levels"], "cat_below", vec![]),
            ("And", &["cat_whole", "cat_nonnegative"], "cat_whole_nonnegative", vec![]),
            ("And", &["cat_whole_nonnegative", "cat_below"], "cat_valid", vec![]),
            ("Add", &["cat_x", "one"], "cat_x1", vec![]),
            ("Where", &["cat_valid", "cat_x1", "zero"], "cat_index_f", vec![]),
            ("Cast", &["cat_index_f"], "cat_index", vec![int("to", i64::from(INT64))]),
            ("Gather", &["cat_index", "cat_position"], "cat_set_index", vec![int("axis", 1)]),
            ("Add", &["cat_set_index", "cat_offset"], "cat_table_index", vec![]),
        ];
        for (op, input, output, attrs) in ops {
            nodes.push(node(op, "", input, &[output], attrs));
        }
        nodes.push(node("Gather", "", &["cat_table", "cat_table_index"], &["cat_derived"], vec![int("axis", 0)]));
        nodes.push(node("Concat", "", &["input", "cat_derived"], &["tree_input"], vec![int("axis", 1)]));
        "tree_input"
    }
}

impl Ensemble {
    /// The linear model as a serialised ONNX `ModelProto` (see the [module doc](crate::onnx)):
    /// input `input` (float32 `N × n_features`), outputs `label`, `probabilities` and `scores`.
    /// `clipped` asks for the clipped t-AdaBoost model, which is refused (not a sum of trees).
    pub fn to_onnx(&self, clipped: bool) -> Result<Vec<u8>> {
        self.to_onnx_cancellable(clipped, None)
    }

    /// [`Ensemble::to_onnx`], stopped with [`Error::Cancelled`] once `cancel` is set (checked
    /// before each tree).
    pub fn to_onnx_cancellable(&self, clipped: bool, cancel: Option<&Cancel>) -> Result<Vec<u8>> {
        let refuse = |why: String| Err(Error::InvalidData(format!("cannot export to ONNX: {why}")));
        if clipped && self.clip.is_some() {
            return refuse(
                "the clipped t-AdaBoost model clips its score after every tree, which is not a sum of trees; \
                 export the linear model (without the clipped option)"
                    .into(),
            );
        }
        if matches!(self.output, Some(crate::boost::multiclass::MultiOutput::Code { .. })) {
            return refuse(
                "AdaBoost.MO's output-code decoding is not expressed in the exported graph; use AdaBoost.MH".into(),
            );
        }
        let k = self.n_outputs;
        let d = self.schema.names.len();
        let cat = CategoricalColumns::of(self, d);
        let (mut tree_ids, mut node_ids, mut features, mut values, mut modes) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut true_ids, mut false_ids, mut missing_true) = (Vec::new(), Vec::new(), Vec::new());
        let (mut t_tree, mut t_node, mut t_ids, mut t_weights) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (t, (tree, &a)) in self.trees.iter().zip(&self.alphas).enumerate() {
            crate::util::cancel::check(cancel)?;
            for (i, n) in tree.nodes.iter().enumerate() {
                tree_ids.push(t as i64);
                node_ids.push(i as i64);
                match n {
                    Node::Split { feature, rule, left, right } => {
                        let missing_left = match rule {
                            SplitRule::Numeric { threshold, missing_left, .. } => {
                                features.push(i64::from(*feature));
                                values.push(f32_threshold(*threshold));
                                *missing_left
                            }
                            SplitRule::Categorical { left, missing_left } => {
                                // The derived column is 0 for a code in the set: `≤ 0.5` is the left branch.
                                features.push((d + cat.column(*feature, left)) as i64);
                                values.push(0.5);
                                *missing_left
                            }
                        };
                        modes.push("BRANCH_LEQ");
                        true_ids.push(i64::from(*left));
                        false_ids.push(i64::from(*right));
                        missing_true.push(i64::from(missing_left));
                    }
                    Node::Leaf { leaf } => {
                        features.push(0);
                        values.push(0.0);
                        modes.push("LEAF");
                        true_ids.push(0);
                        false_ids.push(0);
                        missing_true.push(0);
                        let l = *leaf as usize;
                        for (o, h) in tree.leaf_values[l * k..(l + 1) * k].iter().enumerate() {
                            // docs/explanation/adaboost.md#adaboost-notation: H(x) = Σ_t α_t h_t(x).
                            t_tree.push(t as i64);
                            t_node.push(i as i64);
                            t_ids.push(o as i64);
                            t_weights.push((a * h) as f32);
                        }
                    }
                }
            }
        }
        let ml = "ai.onnx.ml";
        let mut init = vec![
            float_const("zero", vec![], vec![0.0]),
            float_const("one", vec![], vec![1.0]),
            // The link's scale: σ(a·f), a = the calibrated scale of a binary model, 2 otherwise
            // (docs/explanation/probabilities.md).
            float_const("link_scale", vec![], vec![self.probability_scale() as f32]),
            // The label sets of a multi-label model are {f > θ} (θ = 0 without a learned one).
            float_const("theta", vec![], vec![self.label_threshold.unwrap_or(0.0) as f32]),
            int_const("flat", vec![1], vec![-1]),
            int_const("axis1", vec![1], vec![1]),
        ];
        let mut nodes = Vec::new();
        let tree_input = if cat.sets.is_empty() { "input" } else { cat.lookup(&mut nodes, &mut init) };
        nodes.push(node(
            "TreeEnsembleRegressor",
            ml,
            &[tree_input],
            &["scores"],
            vec![
                ints("nodes_treeids", tree_ids),
                ints("nodes_nodeids", node_ids),
                ints("nodes_featureids", features),
                floats("nodes_values", values),
                strings("nodes_modes", modes),
                ints("nodes_truenodeids", true_ids),
                ints("nodes_falsenodeids", false_ids),
                ints("nodes_missing_value_tracks_true", missing_true),
                ints("target_treeids", t_tree),
                ints("target_nodeids", t_node),
                ints("target_ids", t_ids),
                floats("target_weights", t_weights),
                int("n_targets", k as i64),
                string("aggregate_function", "SUM"),
                string("post_transform", "NONE"),
                floats("base_values", vec![self.base_score as f32; k]),
            ],
        ));
        // P(+1|x) = σ(a·f) (docs/explanation/probabilities.md; per label / class with a = 2,
        // normalised over the classes).
        nodes.push(node("Mul", "", &["scores", "link_scale"], &["scores2"], vec![]));
        nodes.push(node("Sigmoid", "", &["scores2"], &["sig"], vec![]));
        let label_dims: Vec<Option<i64>> = match &self.task {
            Task::Binary { .. } => {
                nodes.push(node("Sub", "", &["one", "sig"], &["p0"], vec![]));
                nodes.push(node("Concat", "", &["p0", "sig"], &["probabilities"], vec![int("axis", 1)]));
                nodes.push(node("Greater", "", &["scores", "zero"], &["positive"], vec![]));
                nodes.push(node("Cast", "", &["positive"], &["label2d"], vec![int("to", i64::from(INT64))]));
                nodes.push(node("Reshape", "", &["label2d", "flat"], &["label"], vec![]));
                vec![None]
            }
            Task::Multiclass { .. } => {
                nodes.push(node("ReduceSum", "", &["sig", "axis1"], &["sig_sum"], vec![int("keepdims", 1)]));
                nodes.push(node("Div", "", &["sig", "sig_sum"], &["probabilities"], vec![]));
                // Ties go to the lowest index, as boostlab's arg-max.
                nodes.push(node("ArgMax", "", &["scores"], &["label"], vec![int("axis", 1), int("keepdims", 0)]));
                vec![None]
            }
            Task::Multilabel { .. } => {
                nodes.push(node("Identity", "", &["sig"], &["probabilities"], vec![]));
                nodes.push(node("Greater", "", &["scores", "theta"], &["positive"], vec![]));
                nodes.push(node("Cast", "", &["positive"], &["label"], vec![int("to", i64::from(INT64))]));
                vec![None, Some(k as i64)]
            }
        };
        let p_cols = if matches!(self.task, Task::Binary { .. }) { 2 } else { k as i64 };
        // Only the constants some node reads (onnxruntime warns about the others on every load).
        init.retain(|t| nodes.iter().any(|n| n.input.contains(&t.name)));
        let graph = GraphProto {
            node: nodes,
            name: "boostlab".into(),
            initializer: init,
            input: vec![value_info("input", FLOAT, &[None, Some(d as i64)])],
            output: vec![
                value_info("label", INT64, &label_dims),
                value_info("probabilities", FLOAT, &[None, Some(p_cols)]),
                value_info("scores", FLOAT, &[None, Some(k as i64)]),
            ],
        };
        let model = ModelProto {
            ir_version: 8,
            opset_import: vec![
                OperatorSetIdProto { domain: String::new(), version: 13 },
                OperatorSetIdProto { domain: ml.into(), version: 1 },
            ],
            producer_name: "boostlab".into(),
            producer_version: env!("CARGO_PKG_VERSION").into(),
            doc_string: format!(
                "{} model of {} trees; inputs in the order: {}",
                self.params.algorithm.name(),
                self.trees.len(),
                self.schema.names.join(", ")
            ),
            graph: Some(graph),
            metadata_props: self.onnx_metadata(),
        };
        Ok(model.encode_to_vec())
    }

    /// `boostlab.feature_names`, `boostlab.classes` and `boostlab.categorical_levels` (JSON).
    fn onnx_metadata(&self) -> Vec<StringStringEntryProto> {
        let levels: serde_json::Map<String, serde_json::Value> = self
            .schema
            .names
            .iter()
            .zip(&self.schema.kinds)
            .zip(&self.schema.levels)
            .filter(|((_, kind), _)| **kind == FeatureKind::Categorical)
            .map(|((name, _), lv)| (name.clone(), serde_json::json!(lv.clone().unwrap_or_default())))
            .collect();
        [
            ("boostlab.feature_names", serde_json::json!(self.schema.names)),
            ("boostlab.classes", serde_json::json!(self.task.names())),
            ("boostlab.categorical_levels", serde_json::Value::Object(levels)),
        ]
        .into_iter()
        .map(|(key, value)| StringStringEntryProto { key: key.into(), value: value.to_string() })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use crate::boost::driver::{fit, Algorithm, BoostParams};
    use crate::data::{read_csv_from, Column, CsvOptions, Dataset, MISSING_CODE};
    use crate::Prediction;

    /// Numeric columns `a` (exact in float32), `b` (some missing) and a categorical `colour` (some
    /// missing) that decides much of the label; `classes` labels (2 or 3).
    fn data(classes: usize) -> Dataset {
        let mut text = String::from("a,b,colour,label\n");
        for i in 0..300 {
            let a = (i * 7 % 23) as f64 / 4.0;
            let colour = ["red", "green", "blue", "violet", "", "amber"][i * 5 % 6];
            let b = if i % 11 == 0 { String::new() } else { format!("{}", (i * 13 % 17) as f64 - 8.5) };
            let s = a / 2.0
                + if colour == "red" || colour == "blue" { 3.0 } else { 0.0 }
                + if colour.is_empty() { 1.5 } else { 0.0 };
            let y = if classes == 2 { usize::from(s > 3.5) } else { usize::from(s > 2.5) + usize::from(s > 4.5) };
            text.push_str(&format!("{a},{b},{colour},c{y}\n"));
        }
        read_csv_from(text.as_bytes(), "m.csv", &CsvOptions::default()).unwrap()
    }

    fn model(d: &Dataset, algorithm: Algorithm) -> Ensemble {
        let mut p = BoostParams { algorithm, n_estimators: 12, ..Default::default() };
        p.tree.max_leaves = 6;
        fit(d, &p).unwrap()
    }

    fn decode(m: &Ensemble) -> ModelProto {
        ModelProto::decode(m.to_onnx(false).unwrap().as_slice()).unwrap()
    }

    fn constant<'a>(g: &'a GraphProto, name: &str) -> Option<&'a TensorProto> {
        g.initializer.iter().find(|t| t.name == name)
    }

    /// The graph's raw scores for `rows`, evaluated from its constants and tree attributes as the
    /// lookup's nodes and `TreeEnsembleRegressor` define them.
    fn graph_scores(model: &ModelProto, rows: &[Vec<f32>]) -> Vec<f64> {
        let g = model.graph.as_ref().unwrap();
        let ens = g.node.iter().find(|n| n.op_type == "TreeEnsembleRegressor").unwrap();
        let attr = |name: &str| ens.attribute.iter().find(|a| a.name == name).unwrap();
        let (tree, id) = (&attr("nodes_treeids").ints, &attr("nodes_nodeids").ints);
        let at: HashMap<(i64, i64), usize> = (0..tree.len()).map(|i| ((tree[i], id[i]), i)).collect();
        let k = attr("n_targets").i as usize;
        let n_trees = tree.iter().max().map_or(0, |t| t + 1);
        let mut out = Vec::new();
        for row in rows {
            let mut x = row.clone();
            if let Some(features) = constant(g, "cat_features") {
                let levels = &constant(g, "cat_levels").unwrap().float_data;
                let offsets = &constant(g, "cat_offset").unwrap().int64_data;
                let table = &constant(g, "cat_table").unwrap().float_data;
                for (&p, &o) in constant(g, "cat_position").unwrap().int64_data.iter().zip(offsets) {
                    let v = row[features.int64_data[p as usize] as usize];
                    let valid = v.floor() == v && v >= 0.0 && v < levels[p as usize];
                    x.push(table[(o + if valid { v as i64 + 1 } else { 0 }) as usize]);
                }
            }
            let mut s: Vec<f64> = attr("base_values").floats.iter().map(|&b| f64::from(b)).collect();
            for t in 0..n_trees {
                let mut i = at[&(t, 0)];
                while attr("nodes_modes").strings[i] != b"LEAF" {
                    let v = x[attr("nodes_featureids").ints[i] as usize];
                    let go_true = if v.is_nan() {
                        attr("nodes_missing_value_tracks_true").ints[i] == 1
                    } else {
                        v <= attr("nodes_values").floats[i]
                    };
                    let next = if go_true { &attr("nodes_truenodeids") } else { &attr("nodes_falsenodeids") };
                    i = at[&(t, next.ints[i])];
                }
                let targets = attr("target_treeids").ints.iter().zip(&attr("target_nodeids").ints);
                for (j, _) in targets.enumerate().filter(|(_, (&tt, &nn))| tt == t && nn == id[i]) {
                    s[attr("target_ids").ints[j] as usize] += f64::from(attr("target_weights").floats[j]);
                }
            }
            assert_eq!(s.len(), k);
            out.extend(s);
        }
        out
    }

    /// The rows as the ONNX input: numbers as float32, category codes as floats, NaN missing.
    fn onnx_rows(d: &Dataset) -> Vec<Vec<f32>> {
        (0..d.n_rows())
            .map(|r| {
                d.features
                    .columns
                    .iter()
                    .map(|c| match c {
                        Column::Numeric(v) => v[r] as f32,
                        Column::Categorical { codes, .. } if codes[r] == MISSING_CODE => f32::NAN,
                        Column::Categorical { codes, .. } => codes[r] as f32,
                    })
                    .collect()
            })
            .collect()
    }

    fn has_categorical_split(m: &Ensemble) -> bool {
        m.trees
            .iter()
            .flat_map(|t| &t.nodes)
            .any(|n| matches!(n, Node::Split { rule: SplitRule::Categorical { .. }, .. }))
    }

    #[test]
    fn categorical_splits_export_and_route_as_boostlab() {
        for (classes, algorithm) in [(2, Algorithm::RealAdaBoost), (2, Algorithm::AdaBoost), (3, Algorithm::AdaBoostMH)]
        {
            let d = data(classes);
            let m = model(&d, algorithm);
            assert!(has_categorical_split(&m), "{algorithm:?}: the data should give categorical splits");
            let proto = decode(&m);
            let want = m.predict(&d.features, &Prediction::scores()).unwrap();
            let rows = onnx_rows(&d);
            let got = graph_scores(&proto, &rows);
            assert_eq!(got.len(), want.len());
            let scale = 1.0 + want.iter().fold(0.0f64, |a, b| a.max(b.abs()));
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-5 * scale, "{algorithm:?}: graph {g}, boostlab {w}");
            }
            // −1, a fraction and a code past the last level are missing categories, as NaN is.
            let missing = graph_scores(&proto, &rows.iter().map(|r| vec![r[0], r[1], f32::NAN]).collect::<Vec<_>>());
            for bad in [-1.0, 0.5, 6.0, 1e9] {
                let got = graph_scores(&proto, &rows.iter().map(|r| vec![r[0], r[1], bad]).collect::<Vec<_>>());
                assert_eq!(got, missing, "code {bad}");
            }
            // The missing category routes as boostlab routes a missing value.
            let missing_rows: Vec<usize> = (0..d.n_rows())
                .filter(|&r| matches!(&d.features.columns[2], Column::Categorical { codes, .. } if codes[r] == MISSING_CODE))
                .collect();
            assert!(!missing_rows.is_empty());
            let k = m.n_outputs;
            for r in missing_rows {
                assert_eq!(&got[r * k..(r + 1) * k], &missing[r * k..(r + 1) * k]);
            }
        }
    }

    #[test]
    fn every_initializer_is_read_by_a_node() {
        for (classes, algorithm) in [(2, Algorithm::RealAdaBoost), (3, Algorithm::AdaBoostMH)] {
            let d = data(classes);
            let mut numeric = d.clone();
            numeric.features.columns[2] = Column::Numeric((0..d.n_rows()).map(|r| (r % 3) as f64).collect());
            for m in [model(&d, algorithm), model(&numeric, algorithm)] {
                let g = decode(&m).graph.unwrap();
                assert!(!g.initializer.is_empty());
                for t in &g.initializer {
                    assert!(g.node.iter().any(|n| n.input.contains(&t.name)), "{algorithm:?}: '{}' unused", t.name);
                }
                let lookup = g.node.iter().any(|n| n.input.iter().any(|i| i == "cat_table"));
                assert_eq!(lookup, has_categorical_split(&m));
            }
        }
    }

    #[test]
    fn metadata_names_the_features_classes_and_levels_in_code_order() {
        let d = data(3);
        let proto = decode(&model(&d, Algorithm::AdaBoostMH));
        let meta: HashMap<&str, serde_json::Value> =
            proto.metadata_props.iter().map(|e| (e.key.as_str(), serde_json::from_str(&e.value).unwrap())).collect();
        assert_eq!(meta["boostlab.feature_names"], serde_json::json!(["a", "b", "colour"]));
        assert_eq!(meta["boostlab.classes"], serde_json::json!(["c0", "c1", "c2"]));
        let Column::Categorical { levels, .. } = &d.features.columns[2] else { panic!("colour is categorical") };
        assert_eq!(meta["boostlab.categorical_levels"], serde_json::json!({ "colour": levels }));
        assert_eq!(levels, &["amber", "blue", "green", "red", "violet"]);
    }

    #[test]
    fn f32_thresholds_give_the_same_branch_for_float32_inputs() {
        let mut rng_state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng_state ^= rng_state << 13;
            rng_state ^= rng_state >> 7;
            rng_state ^= rng_state << 17;
            rng_state
        };
        for _ in 0..20_000 {
            // Midpoints of float32 neighbours (bin boundaries of float32 data) and random doubles.
            let a = f32::from_bits((next() % 0x7f00_0000) as u32) * if next() % 2 == 0 { 1.0 } else { -1.0 };
            let b = next_up(a);
            let theta = (f64::from(a) + f64::from(b)) / 2.0;
            let t32 = f32_threshold(theta);
            for x in [a, b, next_down(a), next_up(b), t32, next_up(t32)] {
                assert_eq!(x <= t32, f64::from(x) <= theta, "x {x:e}, θ {theta:e}");
            }
        }
        assert_eq!(f32_threshold(f64::MAX), f32::MAX);
        // 0.1f32 is 0.100000001490116… > 0.1: the threshold is its lower neighbour.
        assert_eq!(f32_threshold(0.1), next_down(0.1f32));
        assert_eq!(f32_threshold(0.5), 0.5f32);
    }
}
