"""boostlab: the AdaBoost family as scikit-learn estimators over a Rust core.

Estimators (one per booster family): :class:`AdaBoostClassifier` (discrete),
:class:`RealAdaBoostClassifier`, :class:`TAdaBoostClassifier`, :class:`SecBoostClassifier`
(binary), :class:`AdaBoostMHClassifier` (multi-class and multi-label),
:class:`AdaBoostMOClassifier` (multi-class, output codes) and :class:`AdaBoostMRClassifier`
(multi-class and multi-label, ranking loss). Model files are shared with the ``boostlab``
command-line tool: :func:`load_model`, ``estimator.save_model(path)``. ONNX:
``estimator.to_onnx()``; skl2onnx converts boostlab's estimators, alone or in pipelines
(:mod:`boostlab.onnx`).
"""

from . import onnx
from ._boostlab import __version__
from ._estimators import (
    AdaBoostClassifier,
    AdaBoostMHClassifier,
    AdaBoostMOClassifier,
    AdaBoostMRClassifier,
    RealAdaBoostClassifier,
    SecBoostClassifier,
    TAdaBoostClassifier,
)
from ._io import load_model

# skl2onnx converts boostlab's estimators once it is imported (before or after boostlab).
onnx._register_when_imported()

__all__ = [
    "AdaBoostClassifier",
    "AdaBoostMHClassifier",
    "AdaBoostMOClassifier",
    "AdaBoostMRClassifier",
    "RealAdaBoostClassifier",
    "SecBoostClassifier",
    "TAdaBoostClassifier",
    "__version__",
    "load_model",
]
