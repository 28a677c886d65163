"""TODO measures.similarity"""

from __future__ import annotations

import numpy as np
import torch

from course_utils.core.errors import CourseInputError


def cosine_matrix(A, B) -> np.ndarray:
    """(n, d) x (m, d) -> (n, m) cosine similarities."""
    A = torch.as_tensor(np.asarray(A), dtype=torch.float64)
    B = torch.as_tensor(np.asarray(B), dtype=torch.float64)
    return torch.nn.functional.cosine_similarity(A[:, None, :], B[None, :, :], dim=-1).numpy()


def dot(a, b) -> float:
    """a · b = Σ a_i b_i."""
    return float(np.dot(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))


def cosine(a, b) -> float:
    """cos(angle) = a · b / (|a| |b|): the dot product with the lengths divided out."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise CourseInputError("cosine is undefined for a zero vector")
    return float(a @ b / (na * nb))


def cosine_distance(a, b) -> float:
    return float(max(0.0, 1.0 - np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))) + 0.0


def relative_distance(a, b) -> float:
    """‖a − b‖ divided by the mean length of a and b (0: the same vector; about 1.4: unrelated directions)."""
    return float(np.linalg.norm(a - b) / ((np.linalg.norm(a) + np.linalg.norm(b)) / 2)) + 0.0


# ---- pairwise spread (claim B6) and kind clusters (claim B5) ----


def pairwise_spread(X) -> float:
    """The *pairwise spread* of a point cloud: mean Euclidean distance over all pairs of different rows,
    divided by the mean row length (scale-free).

    0 means all vectors are the same; vectors pointing in unrelated directions give about √2 ≈ 1.41.
    It measures how wide a cloud of many different words is. Not to be confused with notebook 08's
    "word spread" (how far the *same* word moves between sentences, 1 − cos) or its "cloud spread"
    (mean distance to the centroid / mean length), see `probing`.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"need at least two vectors as an (N, dim) array; got shape {X.shape}")
    i, j = np.triu_indices(len(X), k=1)
    return float(np.linalg.norm(X[i] - X[j], axis=1).mean() / np.linalg.norm(X, axis=1).mean())


def rowwise_cosine(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A, B = A.reshape(-1, A.shape[-1]), B.reshape(-1, B.shape[-1])
    return (A * B).sum(-1) / np.maximum(np.linalg.norm(A, axis=-1) * np.linalg.norm(B, axis=-1), 1e-12)


def mean_pairwise_cosine_distance(V) -> float:
    """Mean of 1 - cos(v_i, v_j) over all pairs i < j of the rows of V (n, dim): 0 = all point the same way."""
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or len(V) < 2:
        raise ValueError(f"need at least two vectors as rows of a 2-D array; got shape {V.shape}")
    C = cosine_matrix(V, V)
    return float(np.clip(1.0 - C[np.triu_indices(len(V), 1)], 0.0, 2.0).mean())  # clip: no -0.000 from rounding
