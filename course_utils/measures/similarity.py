"""Every cosine and distance of the course, once: the dot product, the cosine, and three distances between vectors.

    dot(a, b), cosine(a, b)              01: a · b, and a · b / (|a| |b|) (the dot product without the lengths)
    cosine_matrix(A, B)                  (n, d) x (m, d) -> (n, m): every row of A with every row of B
    relative_distance(a, b)              06: ‖a − b‖ over the mean length of a and b
    pairwise_spread(X)                   06: how wide a cloud of many different words is
    mean_pairwise_cosine_distance(V)     08: how far one word's vectors move between sentences (its word spread)

Every cosine is `rowwise_cosine` underneath. Nothing here knows about models or traces: `measures.clustering`,
`measures.probing`, `views.tables` and `views.vectors` compute their numbers with these.
"""

from __future__ import annotations

import numpy as np

from course_utils.core.errors import CourseInputError


def dot(a, b) -> float:
    """a · b = Σ a_i b_i.

    Taught in notebook 01 (Six sentences as arrows).
    """
    return float(np.dot(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))


def rowwise_cosine(A, B) -> np.ndarray:
    """The course's one cosine: cos = a · b / (|a| |b|) along the last axis, for arrays that broadcast, e.g.
    (n, d) with (n, d) -> (n,) (row i with row i) or (n, 1, d) with (1, m, d) -> (n, m). Every other cosine and
    cosine distance below is this one. A zero vector has no direction: its cosine is 0 (not NaN).

    Taught in notebook 01 (Six sentences as arrows).
    """
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    lengths = np.linalg.norm(A, axis=-1) * np.linalg.norm(B, axis=-1)
    return (A * B).sum(-1) / np.maximum(lengths, 1e-300)


def cosine_matrix(A, B) -> np.ndarray:
    """(n, d) x (m, d) -> (n, m): the cosine of every row of A with every row of B.

    Taught in notebook 01 (Six sentences as arrows); used in 02 §2 and throughout 07.
    """
    A, B = np.asarray(A, dtype=np.float64), np.asarray(B, dtype=np.float64)
    return rowwise_cosine(A[:, None, :], B[None, :, :])


def cosine(a, b) -> float:
    """cos(angle) = a · b / (|a| |b|): the dot product with the lengths divided out.

    Taught in notebook 01 (Six sentences as arrows).
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if not np.linalg.norm(a) or not np.linalg.norm(b):
        raise CourseInputError("cosine is undefined for a zero vector")
    return float(rowwise_cosine(a, b))


def cosine_distance(a, b) -> float:
    """1 − cos(a, b), never below 0 (rounding can put cos a hair above 1).

    Used by measures.clustering.context_distance_table (notebook 06 §3) and the checkers of notebook 06.
    """
    return max(0.0, 1.0 - float(rowwise_cosine(a, b))) + 0.0


def relative_distance(a, b) -> float:
    """‖a − b‖ divided by the mean length of a and b (0: the same vector; about 1.4: unrelated directions).

    Taught in notebook 06 §2; used in 06 §3 and 10 §3.
    """
    return float(np.linalg.norm(a - b) / ((np.linalg.norm(a) + np.linalg.norm(b)) / 2)) + 0.0


# ---- how spread out a set of vectors is (claim B6 in notebook 06, B9 in notebook 08) ----


def pairwise_spread(X) -> float:
    """The *pairwise spread* of a point cloud: mean Euclidean distance over all pairs of different rows,
    divided by the mean row length (scale-free).

    0 means all vectors are the same; vectors pointing in unrelated directions give about √2 ≈ 1.41.
    It measures how wide a cloud of many different words is. Not to be confused with notebook 08's
    "word spread" (how far the *same* word moves between sentences, 1 − cos) or its "cloud spread"
    (mean distance to the centroid / mean length), see `measures.probing`.

    Taught in notebook 06 §4.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"need at least two vectors as an (N, dim) array; got shape {X.shape}")
    i, j = np.triu_indices(len(X), k=1)
    return float(np.linalg.norm(X[i] - X[j], axis=1).mean() / np.linalg.norm(X, axis=1).mean())


def mean_pairwise_cosine_distance(V) -> float:
    """Mean of 1 - cos(v_i, v_j) over all pairs i < j of the rows of V (n, dim): 0 = all point the same way.

    Taught in notebook 08 (The vectors we compare), as one word's word spread.
    """
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or len(V) < 2:
        raise ValueError(f"need at least two vectors as rows of a 2-D array; got shape {V.shape}")
    C = cosine_matrix(V, V)
    return float(np.clip(1.0 - C[np.triu_indices(len(V), 1)], 0.0, 2.0).mean())  # clip: no -0.000 from rounding
