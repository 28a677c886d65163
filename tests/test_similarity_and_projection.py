"""Independent references for course_utils.measures.similarity and for measures.projection.fit_projection.

fit_projection's PCA (behind every projection figure and view of notebooks 06, 08 and 10) is compared with a PCA
written here: numpy's SVD of the centred data, each component up to its sign, plus two cases whose scores are
known by hand (rank 1 and rank 2). Every cosine and distance of similarity.py is compared with small
hand-computed cases. Each check is a function, run on the library and on deliberately broken copies (PCA without
centring, a cosine without normalising, ...) to show that it can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils.core.errors import CourseInputError
from course_utils.measures import similarity
from course_utils.measures.projection import fit_projection

# ---------------------------------------------------------------- PCA (fit_projection)


def pca_by_svd(X, k: int) -> np.ndarray:
    """Reference PCA: the centred rows projected on the first k right singular vectors of the centred data."""
    X = np.asarray(X, dtype=np.float64)
    centred = X - X.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:k].T


def check_pca_up_to_sign(fit, X, k: int) -> None:
    """fit(X, "pca", k) gives the reference PCA scores, each component up to its sign."""
    Y, ref = np.asarray(fit(X, "pca", k)), pca_by_svd(X, k)
    assert Y.shape == ref.shape == (len(X), k)
    tol = 1e-9 * max(1.0, float(np.abs(ref).max()))
    for j in range(k):
        err = min(np.abs(Y[:, j] - ref[:, j]).max(), np.abs(Y[:, j] + ref[:, j]).max())
        assert err <= tol, f"component {j} differs from the reference PCA by {err:.3g}"


def check_pca_known_scores(fit) -> None:
    """Two cases whose PCA is known by hand, signs included (fit_projection turns each axis so that its largest
    |score| is positive; each case has one unique largest |score| per axis)."""
    # rank 1: the points 3 + t·(0.6, 0.8) on a line; centred t = (-3, -2, -1, 0, 6) is the score, nothing else varies
    t = np.array([0.0, 1.0, 2.0, 3.0, 9.0])
    X1 = 3.0 + t[:, None] * np.array([0.6, 0.8])
    Y1 = np.asarray(fit(X1, "pca", 2))
    np.testing.assert_allclose(Y1[:, 0], [-3.0, -2.0, -1.0, 0.0, 6.0], atol=1e-9)
    np.testing.assert_allclose(Y1[:, 1], 0.0, atol=1e-9)
    # rank 2 in 3-D: 5 + a·u + b·w, u ⟂ w unit vectors, a ⟂ b centred, |a|² = 12 > |b|² = 6: the scores are a and b
    u, w = np.array([1.0, 2.0, 2.0]) / 3, np.array([2.0, 1.0, -2.0]) / 3
    a, b = np.array([3.0, -1.0, -1.0, -1.0]), np.array([0.0, 1.0, 1.0, -2.0])
    X2 = 5.0 + a[:, None] * u + b[:, None] * w
    Y2 = np.asarray(fit(X2, "pca", 2))
    np.testing.assert_allclose(Y2, np.stack([a, -b], axis=1), atol=1e-9)  # b's largest |score| (-2) turned positive


def check_pca_sign_convention(fit, X, k: int) -> None:
    """Stable plots: in each component the entry of largest |score| is positive."""
    Y = np.asarray(fit(X, "pca", k))
    assert (Y[np.abs(Y).argmax(axis=0), range(k)] > 0).all()


# 12 points in 5-D with clearly different variances per direction, not centred (the mean is about 2)
RANDOM_X = 2.0 + np.random.default_rng(0).normal(size=(12, 5)) * np.array([3.0, 2.0, 1.5, 1.0, 0.5])


def _uncentred_pca(X, method="pca", k=2):
    X = np.asarray(X, dtype=np.float64)
    _, _, vt = np.linalg.svd(X, full_matrices=False)
    return X @ vt[:k].T


def _whitened_pca(X, method="pca", k=2):
    X = np.asarray(X, dtype=np.float64)
    centred = X - X.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    return centred @ vt[:k].T / s[:k]


def _flipped_pca(X, method="pca", k=2):
    return -fit_projection(X, method, k)


@pytest.mark.parametrize("k", [2, 3])
def test_fit_projection_is_the_pca_of_the_centred_data(k):
    check_pca_up_to_sign(fit_projection, RANDOM_X, k)
    check_pca_sign_convention(fit_projection, RANDOM_X, k)


def test_fit_projection_gives_the_hand_computed_scores_of_rank_1_and_rank_2_data():
    check_pca_known_scores(fit_projection)


@pytest.mark.parametrize("broken", [_uncentred_pca, _whitened_pca], ids=["no centring", "whitened"])
def test_the_pca_checks_reject_a_wrong_pca(broken):
    with pytest.raises(AssertionError):
        check_pca_up_to_sign(broken, RANDOM_X, 2)
    with pytest.raises(AssertionError):
        check_pca_known_scores(broken)


def test_the_pca_check_is_blind_to_signs_and_the_convention_check_is_not():
    check_pca_up_to_sign(_flipped_pca, RANDOM_X, 2)  # a sign is no error of the PCA ...
    with pytest.raises(AssertionError):
        check_pca_sign_convention(_flipped_pca, RANDOM_X, 2)  # ... but breaks the documented convention
    with pytest.raises(AssertionError):
        check_pca_known_scores(_flipped_pca)


# ---------------------------------------------------------------- cosines and distances

# (a, b, cos(a, b)) computed by hand
HAND_COSINES = [
    ([1.0, 0.0], [0.0, 2.0], 0.0),  # perpendicular
    ([3.0, 4.0], [4.0, 3.0], 24 / 25),  # 12 + 12 over 5 · 5
    ([1.0, 1.0], [-2.0, -2.0], -1.0),  # opposite
    ([2.0, 0.0, 0.0], [5.0, 5.0, 0.0], 1 / math.sqrt(2)),  # 45°
    ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0], 32 / math.sqrt(14 * 77)),
]


def check_cosine(cosine) -> None:
    for a, b, want in HAND_COSINES:
        assert cosine(a, b) == pytest.approx(want, abs=1e-12), (a, b)
        assert cosine(b, a) == pytest.approx(want, abs=1e-12)
        assert cosine(7 * np.array(a), 0.5 * np.array(b)) == pytest.approx(want, abs=1e-12)  # lengths divided out
    try:
        cosine([0.0, 0.0], [1.0, 0.0])
    except CourseInputError as err:
        assert "zero vector" in str(err)
    else:
        raise AssertionError("a zero vector has no cosine: a worded CourseInputError expected")


def check_cosine_distance(cosine_distance) -> None:
    """1 − cos, never below 0: [0.1, 0.7] with itself has a float cosine just above 1 (1 − cos = −2.2e-16)."""
    for a, b, want in HAND_COSINES:
        assert cosine_distance(np.array(a), np.array(b)) == pytest.approx(1 - want, abs=1e-12), (a, b)
    a = np.array([0.1, 0.7])
    assert 1 - a @ a / (np.linalg.norm(a) * np.linalg.norm(a)) < 0  # the float rounding this case is about
    assert cosine_distance(a, a) == 0.0


def check_cosine_matrix(cosine_matrix) -> None:
    A = np.array([[1.0, 0.0], [1.0, 1.0]])
    B = np.array([[0.0, 1.0], [2.0, 0.0], [-1.0, -1.0]])
    r = 1 / math.sqrt(2)
    np.testing.assert_allclose(cosine_matrix(A, B), [[0.0, 1.0, -r], [r, r, -1.0]], atol=1e-12)
    for a, b, want in HAND_COSINES:  # one row against one row
        np.testing.assert_allclose(cosine_matrix([a], [b]), [[want]], atol=1e-12)
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(4, 6)), rng.normal(size=(3, 6))
    by_hand = [[sum(x * z) / math.sqrt(sum(x * x) * sum(z * z)) for z in Z] for x in X]
    np.testing.assert_allclose(cosine_matrix(X, Z), by_hand, atol=1e-12)


def check_rowwise_cosine(rowwise_cosine) -> None:
    """Row i of A with row i of B; a zero row has no direction and gives 0 (not NaN)."""
    A = np.array([[1.0, 0.0], [3.0, 4.0], [0.0, 0.0], [1.0, 1.0]])
    B = np.array([[0.0, 5.0], [6.0, 8.0], [1.0, 1.0], [-3.0, -3.0]])
    np.testing.assert_allclose(rowwise_cosine(A, B), [0.0, 1.0, 0.0, -1.0], atol=1e-12)
    for a, b, want in HAND_COSINES:
        np.testing.assert_allclose(rowwise_cosine(np.array([a]), np.array([b])), [want], atol=1e-12)


def check_mean_pairwise_cosine_distance(mpcd) -> None:
    """Mean of 1 − cos over the pairs i < j only."""
    assert mpcd([[1, 0], [2, 0], [3, 0]]) == pytest.approx(0.0, abs=1e-12)  # one direction
    assert mpcd([[1, 0], [0, 1]]) == pytest.approx(1.0)
    assert mpcd([[1, 0], [-1, 0]]) == pytest.approx(2.0)
    assert mpcd([[1, 0], [0, 1], [1, 0]]) == pytest.approx(2 / 3)  # pairs: 1, 0, 1
    assert mpcd([[3, 4], [4, 3], [0, 5]]) == pytest.approx(((1 - 24 / 25) + (1 - 4 / 5) + (1 - 3 / 5)) / 3)
    with pytest.raises(ValueError):
        mpcd([[1, 0]])


def check_pairwise_spread(pairwise_spread) -> None:
    """Mean Euclidean distance over the pairs i < j, divided by the mean row length."""
    assert pairwise_spread(np.eye(2)) == pytest.approx(math.sqrt(2))  # √2 apart, length 1
    assert pairwise_spread(np.ones((4, 3))) == pytest.approx(0.0)
    assert pairwise_spread([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]]) == pytest.approx(2.0)  # (2 + 1 + 1)/3 over 2/3
    assert pairwise_spread([[3.0, 4.0], [0.0, 0.0]]) == pytest.approx(2.0)  # 5 over (5 + 0)/2
    X = np.random.default_rng(2).normal(size=(10, 5))
    assert pairwise_spread(7 * X) == pytest.approx(pairwise_spread(X))  # scale-free
    with pytest.raises(ValueError, match="at least two"):
        pairwise_spread(np.ones((1, 3)))


def check_relative_distance(relative_distance) -> None:
    """‖a − b‖ over the mean length of a and b."""
    a, b = np.array([1.0, 0.0]), np.array([0.0, 2.0])
    assert relative_distance(a, a) == 0.0
    assert relative_distance(a, b) == pytest.approx(math.sqrt(5) / 1.5)
    assert relative_distance(np.array([3.0, 4.0]), np.array([-3.0, -4.0])) == pytest.approx(10 / 5)


CHECKS = {
    "cosine": check_cosine,
    "cosine_distance": check_cosine_distance,
    "cosine_matrix": check_cosine_matrix,
    "rowwise_cosine": check_rowwise_cosine,
    "mean_pairwise_cosine_distance": check_mean_pairwise_cosine_distance,
    "pairwise_spread": check_pairwise_spread,
    "relative_distance": check_relative_distance,
}


def _dot_as_cosine(a, b):  # not normalised
    return float(np.dot(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))


def _one_norm_cosine(a, b):  # divided by |a| only
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not np.linalg.norm(a) or not np.linalg.norm(b):
        raise CourseInputError("cosine is undefined for a zero vector")
    return float(a @ b / np.linalg.norm(a))


def _nan_for_zero_cosine(a, b):  # right where defined, but no worded error for a zero vector
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _unclipped_cosine_distance(a, b):
    return float(1.0 - np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def _dot_distance(a, b):
    return float(1.0 - np.dot(a, b))


def _dot_matrix(A, B):
    return np.asarray(A, dtype=float) @ np.asarray(B, dtype=float).T


def _rowwise_dot(A, B):
    return (np.asarray(A) * np.asarray(B)).sum(-1)


def _mpcd_with_the_diagonal(V):  # all ordered pairs, i = j included
    V = np.asarray(V, dtype=float)
    if len(V) < 2:
        raise ValueError("need at least two vectors")
    return float((1.0 - similarity.cosine_matrix(V, V)).mean())


def _spread_not_scale_free(X):  # the mean distance alone
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError("need at least two vectors")
    i, j = np.triu_indices(len(X), k=1)
    return float(np.linalg.norm(X[i] - X[j], axis=1).mean())


def _relative_to_a(a, b):  # ‖a − b‖ / ‖a‖
    return float(np.linalg.norm(a - b) / np.linalg.norm(a))


BROKEN = [
    ("cosine", _dot_as_cosine),
    ("cosine", _one_norm_cosine),
    ("cosine", _nan_for_zero_cosine),
    ("cosine_distance", _unclipped_cosine_distance),
    ("cosine_distance", _dot_distance),
    ("cosine_matrix", _dot_matrix),
    ("rowwise_cosine", _rowwise_dot),
    ("mean_pairwise_cosine_distance", _mpcd_with_the_diagonal),
    ("pairwise_spread", _spread_not_scale_free),
    ("relative_distance", _relative_to_a),
]


@pytest.mark.parametrize("name", list(CHECKS))
def test_similarity_measure_gives_the_hand_computed_values(name):
    CHECKS[name](getattr(similarity, name))


@pytest.mark.parametrize(("name", "broken"), BROKEN, ids=[f"{n}-{f.__name__.lstrip('_')}" for n, f in BROKEN])
def test_the_hand_computed_values_reject_a_wrong_measure(name, broken):
    with pytest.raises(AssertionError):
        CHECKS[name](broken)
