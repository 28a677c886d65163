"""course_utils.vectors (notebook 01): the blog's numbers, the matrices, the topic check, the plot functions."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course_utils.errors import CourseInputError  # noqa: E402
from course_utils.vectors import (
    SENTENCES_2D,
    SENTENCES_3D,
    WORDS_2D,
    as_matrix,
    cosine,
    cosine_matrix,
    dot,  # noqa: E402
    dot_matrix,
    plot_pair,
    plot_sentence_vectors,
    plot_vectors_3d,
    topic,
    topic_check,
)


def test_blog_values_and_products():
    assert SENTENCES_2D["eat apple"] == (0.8, 0.1)
    assert SENTENCES_2D["eat bread"] == (0.7, 0.2)
    assert SENTENCES_2D["read book"] == (0.2, 0.8)
    assert math.isclose(dot(SENTENCES_2D["eat apple"], SENTENCES_2D["eat bread"]), 0.58)
    assert math.isclose(dot(SENTENCES_2D["eat apple"], SENTENCES_2D["read book"]), 0.24)


def test_matrices_match_pairwise_functions():
    D, C = dot_matrix(SENTENCES_2D), cosine_matrix(SENTENCES_2D)
    X, labels = as_matrix(SENTENCES_2D)
    assert D.shape == C.shape == (6, 6) and labels == list(SENTENCES_2D)
    for i, a in enumerate(X):
        for j, b in enumerate(X):
            assert math.isclose(D[i, j], dot(a, b))
            assert math.isclose(C[i, j], cosine(a, b))
    assert np.allclose(D, D.T) and np.allclose(np.diag(C), 1.0)


def test_cosine_ignores_length_dot_does_not():
    a, b = np.array([0.3, 0.4]), np.array([0.6, 0.8])
    assert math.isclose(cosine(a, b), 1.0)
    assert dot(a, b) > dot(a, a)
    with pytest.raises(CourseInputError):
        cosine([0, 0], [1, 0])


def test_topic_check_2d_and_3d():
    d2, c2 = topic_check(dot_matrix(SENTENCES_2D), SENTENCES_2D), topic_check(cosine_matrix(SENTENCES_2D), SENTENCES_2D)
    assert all(d2["per_sentence"].values()) and all(c2["per_sentence"].values())
    assert not d2["global_ok"] and d2["worst_cross"] == ("drink beer", "read newspaper")
    assert c2["global_ok"]
    for M in (dot_matrix(SENTENCES_3D), cosine_matrix(SENTENCES_3D)):
        r = topic_check(M, SENTENCES_3D)
        assert r["global_ok"] and all(r["per_sentence"].values())


def test_topic_check_detects_a_mixed_up_topic():
    swapped = dict(SENTENCES_2D, **{"eat apple": SENTENCES_2D["read newspaper"]})
    r = topic_check(dot_matrix(swapped), swapped)
    assert not r["per_sentence"]["eat apple"] and not r["global_ok"]


def test_topic_and_words():
    assert topic("drink beer") == "drink"
    assert set(WORDS_2D) == {"eat", "apple", "book"}


def test_plot_functions_return_labelled_figures():
    for fig in (plot_sentence_vectors(), plot_pair("eat apple", "read book"), plot_vectors_3d()):
        ax = fig.axes[0]
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
        plt.close(fig)
    fig = plot_pair("eat apple", "eat bread")
    assert "dot = 0.58" in fig.axes[0].get_title()
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert set(SENTENCES_2D) <= texts
    plt.close(fig)


def test_plot_pair_unknown_sentence_is_a_clear_value_error():
    with pytest.raises(ValueError, match="Unknown sentence 'eat soup'.*eat apple"):
        plot_pair("eat soup", "read book")
    assert not plt.get_fignums() or plt.close("all") is None
