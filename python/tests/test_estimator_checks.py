"""scikit-learn's estimator checks, for every boostlab estimator (and a few non-default settings).

The binary boosters carry the tag `classifier_tags.multi_class = False`, so scikit-learn skips its
multi-class checks for them and runs `check_classifier_not_supporting_multiclass` instead.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

import boostlab

ESTIMATORS = [
    boostlab.AdaBoostClassifier(),
    boostlab.RealAdaBoostClassifier(),
    boostlab.TAdaBoostClassifier(),
    boostlab.TAdaBoostClassifier(t=0.5, clipped=True, max_leaves=4),
    boostlab.SecBoostClassifier(),
    boostlab.AdaBoostMHClassifier(),
    boostlab.AdaBoostMHClassifier(variant="discrete", max_leaves=3),
    boostlab.AdaBoostMOClassifier(),
    boostlab.AdaBoostMOClassifier(code="exhaustive", decode="hamming", variant="discrete"),
    boostlab.AdaBoostMRClassifier(),
]

# Why sample weights are not repetitions for these estimators (scikit-learn marks its own
# AdaBoostClassifier and HistGradientBoostingClassifier as expected failures of the same checks).
# Where the algorithm makes them equivalent, test_sample_weight.py checks it exactly.
_SMOOTHING = (
    "the default leaf smoothing is ε = 1/(2·n_samples): it counts rows, so repeating a row changes "
    "the leaf values (with an explicit `smoothing` weights equal repetitions: "
    "test_sample_weight.py)"
)
_TEMPERED = (
    "t-AdaBoost (t ≠ 1) scales α by m^(1−t*) with m the number of examples of positive weight "
    "(SPEC §5), which repetitions change; at t = 1 weights equal repetitions (test_sample_weight.py)"
)
_SECBOOST = "SecBoost's leaves use the smoothing ε = 1/(2·n_samples), which counts rows"


def expected_failed_checks(estimator):
    reason = None
    if isinstance(estimator, boostlab.RealAdaBoostClassifier):
        reason = _SMOOTHING
    elif isinstance(estimator, boostlab.TAdaBoostClassifier):
        reason = _TEMPERED
    elif isinstance(estimator, boostlab.SecBoostClassifier):
        reason = _SECBOOST
    elif isinstance(estimator, (boostlab.AdaBoostMHClassifier, boostlab.AdaBoostMOClassifier)):
        if estimator.variant == "real":
            reason = _SMOOTHING
    if reason is None:
        return {}
    return {
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason,
    }


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
