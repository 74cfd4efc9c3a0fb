"""Exports of a model's trees to other tree libraries, from the model JSON (the format of
docs/reference/model-format.md): the dict form that ``shap.TreeExplainer`` takes for custom tree
ensembles, and a ``treelite.Model`` built with Treelite's model builder.

Both exports are of the linear model f(x) = base_score + Σ_t α_t h_t(x) (the raw scores), with
α_t folded into each tree's leaves. A split sends x ≤ threshold to the left child, as shap and
Treelite's ``<=`` test do, so the thresholds are kept as they are (float64 on both sides); a
missing value (NaN) takes the split's default child, boostlab's `missing_left`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

_CLIPPED_REASON = (
    "the clipped t-AdaBoost model (clipped=True) clips the score after every tree, so it is no sum "
    "of per-tree outputs, which {} adds up; export the linear model (clipped=False)"
)


def model_json(model: Any) -> dict:
    """The model JSON as a dict, from a fitted estimator, its `model_`, a JSON string or a dict."""
    if isinstance(model, dict):
        return model
    if isinstance(model, (str, bytes)):
        return json.loads(model)
    inner = getattr(model, "model_", model)
    to_json = getattr(inner, "to_json", None)
    if to_json is None:
        raise TypeError(f"expected a boostlab model, estimator, JSON string or dict, got {type(model).__name__}")
    return json.loads(to_json())


def _leaf_block(tree: dict, alpha: float) -> np.ndarray:
    """The tree's leaf values times α, shape (n_leaves, n_outputs)."""
    k = int(tree["n_outputs"])
    return alpha * np.asarray(tree["leaf_values"], dtype=np.float64).reshape(-1, k)


def to_shap(model: Any, *, clipped: bool = False) -> dict:
    """The model as the dict that ``shap.TreeExplainer`` accepts for a custom tree ensemble.

    ``model``: a fitted estimator, its ``model_``, the model JSON (string or dict). ``clipped``:
    whether the model predicts with t-AdaBoost's clipped score (refused). One tree dict per
    boostlab tree: ``children_left``, ``children_right``, ``children_default`` (the child a
    missing value takes), ``features``, ``thresholds`` (x ≤ threshold goes left, as in shap),
    ``values`` (α_t times the leaf values, shape (n_nodes, n_outputs)) and ``node_sample_weight``
    (the training covers); ``base_offset`` is the model's ``base_score``; ``tree_output`` is
    ``"raw_value"``. Multi-output models (AdaBoost.MH / MR multi-class and multi-label, and the
    code columns of AdaBoost.MO) give one ensemble whose trees have one value per output: shap
    returns values of shape (n_samples, n_features, n_outputs), as `predict_contrib` (without its
    bias column), and one expected value per output.

    Raises ValueError for what shap cannot express: categorical splits and the clipped
    t-AdaBoost model; and for a model without covers (written before they were recorded).
    """
    m = model_json(model)
    if clipped:
        raise ValueError("to_shap: " + _CLIPPED_REASON.format("shap"))
    trees = []
    for t, (tree, alpha) in enumerate(zip(m["trees"], m["alphas"])):
        nodes = tree["nodes"]
        n = len(nodes)
        covers = tree.get("covers")
        if covers is None or len(covers) != n:
            raise ValueError(
                "to_shap: the model has no node covers (it was written before they were recorded), "
                "so TreeSHAP cannot weigh the branches; retrain it"
            )
        leaves = _leaf_block(tree, float(alpha))
        left = np.full(n, -1, dtype=np.int32)
        right = np.full(n, -1, dtype=np.int32)
        default = np.full(n, -1, dtype=np.int32)
        features = np.full(n, -1, dtype=np.int32)
        thresholds = np.zeros(n, dtype=np.float64)
        values = np.zeros((n, leaves.shape[1]), dtype=np.float64)
        for i, node in enumerate(nodes):
            if node["type"] == "leaf":
                values[i] = leaves[node["leaf"]]
                continue
            rule = node["rule"]
            if rule["kind"] != "numeric":
                name = m["schema"]["names"][node["feature"]]
                raise ValueError(
                    f"to_shap: tree {t} splits the categorical feature '{name}' on a set of "
                    "categories, which shap's trees (one threshold per split) cannot express"
                )
            left[i], right[i] = node["left"], node["right"]
            default[i] = left[i] if rule["missing_left"] else right[i]
            features[i] = node["feature"]
            thresholds[i] = rule["threshold"]
        trees.append(
            {
                "children_left": left,
                "children_right": right,
                "children_default": default,
                "features": features,
                "thresholds": thresholds,
                "values": values,
                "node_sample_weight": np.asarray(covers, dtype=np.float64),
            }
        )
    return {
        "trees": trees,
        "base_offset": float(m.get("base_score", 0.0)),
        "tree_output": "raw_value",
        # boostlab's losses (exponential, tempered, SecBoost's) are none of shap's objectives: only
        # the raw output (model_output="raw") is explained.
        "objective": None,
        "input_dtype": np.float64,
        "internal_dtype": np.float64,
    }


def to_treelite(model: Any, *, clipped: bool = False):
    """The model as a ``treelite.Model`` built with Treelite's model builder (needs the treelite
    package).

    ``model``: a fitted estimator, its ``model_``, the model JSON (string or dict). Thresholds and
    leaves are float64; α_t is folded into the leaves; numeric splits are ``x <= threshold`` with
    boostlab's default child for a missing value (NaN); categorical splits are category-list tests
    (the listed codes go left; the input holds the level's code, in the order of the model's
    schema ``levels``, and NaN for a missing or unseen level). Binary models: one output, the
    postprocessor σ(a·f) with the model's calibrated scale a (boostlab's `predict_proba`,
    docs/explanation/probabilities.md); multi-class models: one score per class, raw (boostlab
    normalises σ(2f_k), which Treelite's postprocessors do not); multi-label models: one target per
    label, σ(2f) each. ``treelite.gtil.predict(m, X, pred_margin=True)`` gives the raw scores.

    Raises ValueError for the clipped t-AdaBoost model and AdaBoost.MO's output-code decoding.
    """
    try:
        import treelite
        from treelite.model_builder import Metadata, ModelBuilder, PostProcessorFunc, TreeAnnotation
    except ImportError as e:
        raise ImportError(
            "to_treelite needs the treelite package, an optional dependency: pip install 'boostlab[treelite]'"
        ) from e
    m = model_json(model)
    if clipped:
        raise ValueError("to_treelite: " + _CLIPPED_REASON.format("Treelite"))
    output = m.get("output") or {}
    if output.get("kind") == "code":
        raise ValueError(
            "to_treelite: AdaBoost.MO's output-code decoding (its code columns' scores decoded "
            "into classes) is no postprocessor of Treelite's; to_shap explains the code columns"
        )
    n_trees = len(m["trees"])
    k = int(m["n_outputs"])
    kind = m["task"]["kind"]
    base = float(m.get("base_score", 0.0))
    if kind == "binary":
        metadata = Metadata(
            num_feature=len(m["schema"]["names"]),
            task_type="kBinaryClf",
            average_tree_output=False,
            num_target=1,
            num_class=[1],
            leaf_vector_shape=(1, 1),
        )
        annotation = TreeAnnotation(num_tree=n_trees, target_id=[0] * n_trees, class_id=[0] * n_trees)
        # σ(a·f) with the model's calibrated scale a (2 without calibration).
        scale = float((m.get("calibration") or {}).get("scale", 2.0))
        if not scale > 0.0:
            raise ValueError(
                f"to_treelite: the calibrated probability scale is {scale}; Treelite's sigmoid needs a "
                "positive one (the raw scores, pred_margin=True, are unaffected)"
            )
        post = PostProcessorFunc(name="sigmoid", sigmoid_alpha=scale)
        base_scores = [base]
    elif kind == "multiclass":
        metadata = Metadata(
            num_feature=len(m["schema"]["names"]),
            task_type="kMultiClf",
            average_tree_output=False,
            num_target=1,
            num_class=[k],
            leaf_vector_shape=(1, k),
        )
        annotation = TreeAnnotation(num_tree=n_trees, target_id=[0] * n_trees, class_id=[-1] * n_trees)
        post = PostProcessorFunc(name="identity_multiclass")
        base_scores = [base] * k
    else:
        metadata = Metadata(
            num_feature=len(m["schema"]["names"]),
            task_type="kBinaryClf",
            average_tree_output=False,
            num_target=k,
            num_class=[1] * k,
            leaf_vector_shape=(k, 1),
        )
        annotation = TreeAnnotation(num_tree=n_trees, target_id=[-1] * n_trees, class_id=[0] * n_trees)
        post = PostProcessorFunc(name="sigmoid", sigmoid_alpha=2.0)
        base_scores = [base] * k
    builder = ModelBuilder(
        threshold_type="float64",
        leaf_output_type="float64",
        metadata=metadata,
        tree_annotation=annotation,
        postprocessor=post,
        base_scores=base_scores,
    )
    for tree, alpha in zip(m["trees"], m["alphas"]):
        leaves = _leaf_block(tree, float(alpha))
        covers = tree.get("covers")
        builder.start_tree()
        for i, node in enumerate(tree["nodes"]):
            builder.start_node(i)
            if node["type"] == "leaf":
                v = leaves[node["leaf"]]
                builder.leaf(float(v[0]) if k == 1 else v.tolist())
            else:
                rule = node["rule"]
                if rule["kind"] == "numeric":
                    builder.numerical_test(
                        feature_id=node["feature"],
                        threshold=float(rule["threshold"]),
                        default_left=bool(rule["missing_left"]),
                        opname="<=",
                        left_child_key=node["left"],
                        right_child_key=node["right"],
                    )
                else:
                    builder.categorical_test(
                        feature_id=node["feature"],
                        default_left=bool(rule["missing_left"]),
                        category_list=[int(c) for c in rule["left"]],
                        category_list_right_child=False,
                        left_child_key=node["left"],
                        right_child_key=node["right"],
                    )
            if covers is not None:
                builder.sum_hess(float(covers[i]))
            builder.end_node()
        builder.end_tree()
    out = builder.commit()
    assert isinstance(out, treelite.Model)
    return out
