"""scikit-learn's estimator checks, for every boostlab estimator (and a few non-default settings).

The binary boosters carry the tag `classifier_tags.multi_class = False`, so scikit-learn skips its
multi-class checks for them and runs `check_classifier_not_supporting_multiclass` instead.
"""

import pytest
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

# Sample weights are frequency weights for every estimator: scikit-learn's
# check_sample_weight_equivalence_on_dense_data / _on_sparse_data run with no expected failure.


# No check may see a FutureWarning or DeprecationWarning (scikit-learn 1.9), and none is an
# expected failure.
@pytest.mark.filterwarnings("error::FutureWarning", "error::DeprecationWarning")
@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)
