"""ONNX: boostlab's converter for skl2onnx.

:func:`register` makes skl2onnx convert every boostlab estimator (alone or inside a scikit-learn
pipeline) by embedding the estimator's own exported graph (``estimator.to_onnx()``): its input is
the estimator's input, its outputs the class labels (``classes_`` values) and the probabilities.
``import boostlab`` registers the converter once skl2onnx is imported (before or after boostlab),
so ``skl2onnx.to_onnx(pipeline, X[:1].astype(np.float32))`` needs no extra call. Multi-label
models are refused (skl2onnx's classifier outputs hold one label per row).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings

import numpy as np

__all__ = ["register"]

_registered = False


def register() -> None:
    """Registers the converter of every boostlab estimator with skl2onnx (needs skl2onnx; a second
    call does nothing). Options as for scikit-learn's classifiers: ``zipmap`` and ``nocl`` (labels
    are class indices)."""
    global _registered
    if _registered:
        return
    from skl2onnx import update_registered_converter

    from ._estimator import BoostClassifier

    for cls in _subclasses(BoostClassifier):
        update_registered_converter(
            cls,
            f"Boostlab{cls.__name__}",
            _shape_calculator,
            _converter,
            options={"zipmap": [True, False, "columns"], "nocl": [True, False]},
        )
    _registered = True


def _subclasses(cls) -> list:
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


def _labels(scope, est) -> np.ndarray:
    """The label values (``classes_``, or their indices with option ``nocl``), refusing types
    skl2onnx's classifier outputs cannot hold."""
    from skl2onnx.common.utils_classifier import get_label_classes

    if est.model_.task == "multilabel":
        raise NotImplementedError(
            "boostlab's skl2onnx converter takes binary and multi-class models; export a "
            "multi-label model with its to_onnx()"
        )
    classes = np.asarray(get_label_classes(scope, est))
    if classes.dtype.kind not in "iubUSO":
        raise NotImplementedError(
            f"boostlab's skl2onnx converter takes integer, boolean or string classes, not dtype "
            f"{classes.dtype}"
        )
    return classes


def _shape_calculator(operator) -> None:
    from skl2onnx.common.data_types import FloatTensorType, Int64TensorType, StringTensorType

    classes = _labels(operator.scope_inst, operator.raw_operator)
    n = operator.inputs[0].get_first_dimension()
    label_type = Int64TensorType if classes.dtype.kind in "iub" else StringTensorType
    operator.outputs[0].type = label_type([n])
    operator.outputs[1].type = FloatTensorType([n, len(classes)])


def _converter(scope, operator, container) -> None:
    from onnx import TensorProto, helper, numpy_helper
    from skl2onnx.common.data_types import DoubleTensorType

    est = operator.raw_operator
    graph = est.to_onnx().graph
    if container.target_opset < 13:
        raise RuntimeError(
            f"boostlab's graph needs opset 13 or later; skl2onnx targets {container.target_opset}"
        )
    source = operator.inputs[0]
    x = source.full_name
    if isinstance(source.type, DoubleTensorType):
        x = scope.get_unique_variable_name("boostlab_input")
        container.add_node(
            "Cast", [source.full_name], [x], name=scope.get_unique_operator_name("BoostlabCast"),
            to=TensorProto.FLOAT,
        )
    names = {"input": x}

    def name(n: str) -> str:
        if n not in names:
            names[n] = scope.get_unique_variable_name(f"boostlab_{n}")
        return names[n]

    for t in graph.initializer:
        value = numpy_helper.to_array(t)
        container.add_initializer(name(t.name), t.data_type, list(t.dims), value.ravel().tolist())
    for node in graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        container.add_node(
            node.op_type,
            [name(i) for i in node.input],
            [name(o) for o in node.output],
            op_domain=node.domain,
            op_version=1 if node.domain == "ai.onnx.ml" else 13,
            name=scope.get_unique_operator_name(f"Boostlab{node.op_type}"),
            **attrs,
        )
    label, proba = operator.outputs[0].full_name, operator.outputs[1].full_name
    # The graph's label is an index into classes_: gathered into the label values.
    classes = _labels(scope, est)
    classes_name = scope.get_unique_variable_name("boostlab_classes")
    if classes.dtype.kind in "iub":
        values = classes.astype(np.int64).tolist()
        container.add_initializer(classes_name, TensorProto.INT64, [len(values)], values)
    else:
        values = [str(c).encode("utf-8") for c in classes]
        container.add_initializer(classes_name, TensorProto.STRING, [len(values)], values)
    container.add_node(
        "Gather", [classes_name, names["label"]], [label], axis=0,
        name=scope.get_unique_operator_name("BoostlabClasses"),
    )
    container.add_node(
        "Identity", [names["probabilities"]], [proba],
        name=scope.get_unique_operator_name("BoostlabProbabilities"),
    )


def _register_quietly() -> None:
    try:
        register()
    except Exception as e:  # an incompatible skl2onnx must not break its own import
        warnings.warn(f"boostlab could not register its skl2onnx converter: {e}", stacklevel=2)


class _RegisteringLoader(importlib.abc.Loader):
    """skl2onnx's own loader, registering boostlab's converter once skl2onnx has run."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _register_quietly()

    def __getattr__(self, attr):
        return getattr(self._loader, attr)


class _Skl2onnxImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: on skl2onnx's first import, wraps its loader to register the
    converter after the import, then leaves ``sys.meta_path``."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "skl2onnx":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


def _register_when_imported() -> None:
    """Registers now if skl2onnx is imported, otherwise right after its import."""
    if "skl2onnx" in sys.modules:
        _register_quietly()
    elif not any(isinstance(f, _Skl2onnxImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _Skl2onnxImport())
