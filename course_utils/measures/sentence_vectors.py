"""Notebook 01's numbers: the toy sentence vectors' dot products and cosines, and whether they keep topics apart.

    D = dot_matrix(SENTENCES_2D)             # (6, 6) all pairwise dot products X Xᵀ
    C = cosine_matrix_of(SENTENCES_2D)       # (6, 6) all pairwise cosines
    topic_check(D, SENTENCES_2D)             # does each sentence score highest with its own topic?

A sentence's topic is its verb (`topic`: 'eat apple' -> 'eat'). The vectors are `core.toys.SENTENCES_2D` and
`SENTENCES_3D`; their figures are `views.vectors`.
"""

from __future__ import annotations

import numpy as np

from course_utils.core.errors import CourseInputError
from course_utils.measures.similarity import cosine_matrix

AXIS_TOPICS = ("eat", "drink", "read")  # dim 1, dim 2, dim 3 of SENTENCES_3D


def topic(sentence: str) -> str:
    """The topic of a sentence is its verb: 'eat apple' -> 'eat'.

    Taught in notebook 01 (More dimensions keep more topics apart); used in 10 §2.
    """
    return sentence.split()[0]


def as_matrix(vectors: dict) -> tuple[np.ndarray, list[str]]:
    """{sentence: vector} -> (N, d) array and the N sentence labels, in dict order.

    Used by dot_matrix and cosine_matrix_of (notebook 01, Six sentences as arrows).
    """
    labels = list(vectors)
    return np.array([vectors[s] for s in labels], dtype=np.float64), labels


def sentence_vector(sentence: str, vectors: dict) -> np.ndarray:
    """The vector of `sentence` in `vectors` as float64; an unknown sentence is a CourseInputError naming the choices.

    Used by views.vectors.plot_pair (notebook 01, Try it: pick two sentences).
    """
    if sentence not in vectors:
        raise CourseInputError(f"Unknown sentence {sentence!r}; choose one of: {', '.join(vectors)}")
    return np.asarray(vectors[sentence], dtype=np.float64)


def dot_matrix(vectors: dict) -> np.ndarray:
    """(N, N) matrix of all pairwise dot products X Xᵀ.

    Taught in notebook 01 (Six sentences as arrows).
    """
    X, _ = as_matrix(vectors)
    return X @ X.T


def cosine_matrix_of(vectors: dict) -> np.ndarray:
    """(N, N) matrix of all pairwise cosines (`cosine_matrix` of the dict's vectors with themselves).

    Taught in notebook 01 (Six sentences as arrows).
    """
    X, _ = as_matrix(vectors)
    return cosine_matrix(X, X)


def topic_check(M: np.ndarray, vectors: dict) -> dict:
    """How well a similarity matrix M separates the topics (the diagonal, a sentence with itself, is ignored).

    Returns:
      per_sentence  {sentence: True if its best same-topic partner beats every other-topic sentence}
      min_same      the smallest same-topic score (over pairs of different sentences)
      max_cross     the largest cross-topic score
      global_ok     min_same > max_cross: every same-topic pair beats every cross-topic pair
      worst_cross   the pair that scores max_cross

    Taught in notebook 01 (Six sentences as arrows).
    """
    labels = list(vectors)
    topics = [topic(s) for s in labels]
    n = len(labels)
    per, same, cross = {}, [], []
    for i in range(n):
        mine = [M[i, j] for j in range(n) if j != i and topics[j] == topics[i]]
        other = [M[i, j] for j in range(n) if topics[j] != topics[i]]
        per[labels[i]] = bool(mine) and bool(max(mine) > max(other))
        for j in range(i + 1, n):
            (same if topics[i] == topics[j] else cross).append((M[i, j], labels[i], labels[j]))
    worst = max(cross)
    return {
        "per_sentence": per,
        "min_same": float(min(same)[0]),
        "max_cross": float(worst[0]),
        "global_ok": bool(min(same)[0] > worst[0]),
        "worst_cross": (worst[1], worst[2]),
    }
