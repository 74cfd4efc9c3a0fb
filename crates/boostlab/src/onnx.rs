//! ONNX export of the linear model, behind the `onnx` feature.
//!
//! The graph: one `ai.onnx.ml` `TreeEnsembleRegressor` summing `α_t·h_t` (and `base_score`) into
//! the raw scores `scores` (`N × n_outputs`, float32), then standard operators for the outputs
//! boostlab predicts: `label` (the predicted class index, int64 `N`; for multi-label models the
//! 0/1 label matrix `N × k`) and `probabilities` (as [`Ensemble::proba_from_scores`]). The input
//! `input` is float32 `N × n_features`, NaN for a missing value.
//!
//! Thresholds: ONNX compares float32 inputs with float32 thresholds. A boostlab split sends `x`
//! left when `x ≤ θ` (θ an f64 bin boundary); its ONNX threshold is the largest float32 `θ32 ≤ θ`,
//! so that for every float32 `x`, `x ≤ θ32` exactly when `x ≤ θ`: the same branch as boostlab on
//! the float32 values. Missing values take the split's missing direction
//! (`nodes_missing_value_tracks_true`). Refused, with the reason: categorical splits (a set test
//! has no `ai.onnx.ml` v1 node), output codes (AdaBoost.MO's decoding), and the clipped
//! t-AdaBoost model (clipping after every tree is not a sum of trees).
//!
//! The protobuf messages are the subset of `onnx.proto` (field numbers from the ONNX IR spec) the
//! graph needs, written by hand with `prost`.

use prost::Message;

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
                        let SplitRule::Numeric { threshold, missing_left, .. } = rule else {
                            return refuse(format!(
                                "tree {t} splits on the categorical feature '{}' (a category-set test has no \
                                 ai.onnx.ml node); encode it numerically to export",
                                self.schema.names[*feature as usize]
                            ));
                        };
                        features.push(i64::from(*feature));
                        values.push(f32_threshold(*threshold));
                        modes.push("BRANCH_LEQ");
                        true_ids.push(i64::from(*left));
                        false_ids.push(i64::from(*right));
                        missing_true.push(i64::from(*missing_left));
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
        let mut nodes = vec![node(
            "TreeEnsembleRegressor",
            ml,
            &["input"],
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
        )];
        // docs/explanation/adaboost.md#adaboost-discrete: P(+1|x) = σ(2f) (per label / class; normalised over the classes).
        let mut init = vec![float_const("two", vec![], vec![2.0]), float_const("zero", vec![], vec![0.0])];
        // The label sets of a multi-label model are {f > θ} (θ = 0 without a learned one).
        init.push(float_const("theta", vec![], vec![self.label_threshold.unwrap_or(0.0) as f32]));
        nodes.push(node("Mul", "", &["scores", "two"], &["scores2"], vec![]));
        nodes.push(node("Sigmoid", "", &["scores2"], &["sig"], vec![]));
        let label_dims: Vec<Option<i64>> = match &self.task {
            Task::Binary { .. } => {
                init.push(float_const("one", vec![], vec![1.0]));
                init.push(int_const("flat", vec![1], vec![-1]));
                nodes.push(node("Sub", "", &["one", "sig"], &["p0"], vec![]));
                nodes.push(node("Concat", "", &["p0", "sig"], &["probabilities"], vec![int("axis", 1)]));
                nodes.push(node("Greater", "", &["scores", "zero"], &["positive"], vec![]));
                nodes.push(node("Cast", "", &["positive"], &["label2d"], vec![int("to", i64::from(INT64))]));
                nodes.push(node("Reshape", "", &["label2d", "flat"], &["label"], vec![]));
                vec![None]
            }
            Task::Multiclass { .. } => {
                init.push(int_const("axis1", vec![1], vec![1]));
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
        };
        Ok(model.encode_to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
