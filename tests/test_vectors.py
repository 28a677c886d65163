"""Notebook 01's helpers: the blog's numbers (core/toys.py), the matrices and the topic check
(measures/sentence_vectors.py), the plot functions (views/vectors.py)."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from course_utils.core.errors import CourseInputError
from course_utils.core.toys import SENTENCES_2D, SENTENCES_3D, WORDS_2D
from course_utils.measures.sentence_vectors import as_matrix, cosine_matrix_of, dot_matrix, topic, topic_check
from course_utils.measures.similarity import cosine, dot
from course_utils.views.vectors import TOPIC_COLOURS, plot_pair, plot_sentence_vectors, plot_vectors_3d


def _dot_by_hand(a, b):
    return sum(x * y for x, y in zip(a, b))


def _cosine_by_hand(a, b):
    return _dot_by_hand(a, b) / math.sqrt(_dot_by_hand(a, a) * _dot_by_hand(b, b))


def test_blog_values_and_products():
    # the source blog's three sentences and its two printed dot products (0.8·0.7 + 0.1·0.2, 0.8·0.2 + 0.1·0.8)
    assert SENTENCES_2D["eat apple"] == (0.8, 0.1)
    assert SENTENCES_2D["eat bread"] == (0.7, 0.2)
    assert SENTENCES_2D["read book"] == (0.2, 0.8)
    assert math.isclose(dot(SENTENCES_2D["eat apple"], SENTENCES_2D["eat bread"]), 0.58)
    assert math.isclose(dot(SENTENCES_2D["eat apple"], SENTENCES_2D["read book"]), 0.24)


@pytest.mark.parametrize("vectors", [SENTENCES_2D, SENTENCES_3D, WORDS_2D], ids=["2d", "3d", "words"])
def test_dot_and_cosine_match_a_computation_by_hand(vectors):
    for a in vectors.values():
        for b in vectors.values():
            assert math.isclose(dot(a, b), _dot_by_hand(a, b), rel_tol=1e-12)
            assert math.isclose(cosine(a, b), _cosine_by_hand(a, b), rel_tol=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.normal(size=5), rng.normal(size=5)
        assert math.isclose(dot(a, b), _dot_by_hand(a, b), rel_tol=1e-9, abs_tol=1e-12)
        assert math.isclose(cosine(a, b), _cosine_by_hand(a, b), rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.parametrize("vectors", [SENTENCES_2D, SENTENCES_3D], ids=["2d", "3d"])
def test_matrices_match_a_computation_by_hand(vectors):
    D, C = dot_matrix(vectors), cosine_matrix_of(vectors)
    X, labels = as_matrix(vectors)
    n = len(vectors)
    assert D.shape == C.shape == (n, n) and labels == list(vectors)
    np.testing.assert_array_equal(X, np.array(list(vectors.values())))
    for i, a in enumerate(vectors.values()):
        for j, b in enumerate(vectors.values()):
            assert math.isclose(D[i, j], _dot_by_hand(a, b), rel_tol=1e-12)
            assert math.isclose(C[i, j], _cosine_by_hand(a, b), rel_tol=1e-12)


def test_cosine_ignores_length_dot_does_not():
    a, b = np.array([0.3, 0.4]), np.array([0.6, 0.8])
    assert math.isclose(cosine(a, b), 1.0)
    assert math.isclose(dot(a, b), 0.5) and math.isclose(dot(a, a), 0.25)  # 0.18 + 0.32; 0.09 + 0.16
    with pytest.raises(CourseInputError):
        cosine([0, 0], [1, 0])


def _topic_check_by_hand(M, vectors):
    """Independent reference for topic_check: the topic is the sentence's first word."""
    names = list(vectors)
    verb = [s.split(" ", 1)[0] for s in names]
    pairs = [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    same = [M[i, j] for i, j in pairs if verb[i] == verb[j]]
    cross = {(i, j): M[i, j] for i, j in pairs if verb[i] != verb[j]}
    per = {}
    for i, s in enumerate(names):
        best_same = max(M[i, j] for j in range(len(names)) if j != i and verb[j] == verb[i])
        best_other = max(M[i, j] for j in range(len(names)) if verb[j] != verb[i])
        per[s] = bool(best_same > best_other)
    worst = max(cross, key=cross.get)
    return {
        "per_sentence": per,
        "min_same": min(same),
        "max_cross": cross[worst],
        "global_ok": bool(min(same) > cross[worst]),
        "worst_cross": (names[worst[0]], names[worst[1]]),
    }


def _assert_same_topic_check(got, want):
    assert got["per_sentence"] == want["per_sentence"]
    assert got["min_same"] == pytest.approx(want["min_same"]) and got["max_cross"] == pytest.approx(want["max_cross"])
    assert got["global_ok"] == want["global_ok"] and got["worst_cross"] == want["worst_cross"]


def test_topic_check_2d_and_3d():
    for vectors in (SENTENCES_2D, SENTENCES_3D):
        for M in (dot_matrix(vectors), cosine_matrix_of(vectors)):
            _assert_same_topic_check(topic_check(M, vectors), _topic_check_by_hand(M, vectors))
    d2, c2 = (
        topic_check(dot_matrix(SENTENCES_2D), SENTENCES_2D),
        topic_check(cosine_matrix_of(SENTENCES_2D), SENTENCES_2D),
    )
    assert all(d2["per_sentence"].values()) and all(c2["per_sentence"].values())
    assert not d2["global_ok"] and d2["worst_cross"] == ("drink beer", "read newspaper")
    assert c2["global_ok"]
    for M in (dot_matrix(SENTENCES_3D), cosine_matrix_of(SENTENCES_3D)):
        r = topic_check(M, SENTENCES_3D)
        assert r["global_ok"] and all(r["per_sentence"].values())


def test_topic_check_on_random_matrices():
    rng = np.random.default_rng(1)
    for _ in range(30):
        M = rng.normal(size=(len(SENTENCES_3D),) * 2)
        M = M + M.T  # a symmetric similarity matrix
        _assert_same_topic_check(topic_check(M, SENTENCES_3D), _topic_check_by_hand(M, SENTENCES_3D))


def test_topic_check_detects_a_mixed_up_topic():
    swapped = dict(SENTENCES_2D, **{"eat apple": SENTENCES_2D["read newspaper"]})
    r = topic_check(dot_matrix(swapped), swapped)
    assert not r["per_sentence"]["eat apple"] and not r["global_ok"]
    _assert_same_topic_check(r, _topic_check_by_hand(dot_matrix(swapped), swapped))


def test_topic_and_words():
    assert topic("drink beer") == "drink"
    for vectors in (SENTENCES_2D, SENTENCES_3D):
        assert {topic(s) for s in vectors} == {"eat", "drink", "read"}
    # the closing question: "devour" leans to "apple" (cos by hand), far from "book"
    devour, apple, book = WORDS_2D["devour"], WORDS_2D["apple"], WORDS_2D["book"]
    assert cosine(devour, apple) == pytest.approx(_cosine_by_hand(devour, apple))
    assert cosine(devour, book) == pytest.approx(_cosine_by_hand(devour, book))
    assert cosine(devour, book) < cosine(devour, apple)


def test_plot_functions_return_labelled_figures():
    for fig in (plot_sentence_vectors(), plot_pair("eat apple", "read book")):
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


def test_vectors_3d_names_each_axis_next_to_its_own_topic_and_hides_no_arrow():
    """Issue 12: the axis names sat next to the wrong topic's arrows, and an arrow hid behind others."""
    import itertools

    from mpl_toolkits.mplot3d import proj3d

    fig = plot_vectors_3d()
    ax = fig.axes[0]
    assert ax.get_title()
    fig.canvas.draw()
    M = ax.get_proj()

    def screen(v):
        return np.array(proj3d.proj_transform(*v, M)[:2])

    origin = screen((0, 0, 0))
    names = {t.get_text().split()[0]: t for t in ax.texts if "axis" in t.get_text()}
    assert set(names) == {"food", "drink", "reading"}
    for name, verb in (("food", "eat"), ("drink", "drink"), ("reading", "read")):
        assert names[name].get_color() == TOPIC_COLOURS[verb]
        at = np.array(names[name].xy)  # where the axis name sits, on screen (a 2-D annotation)
        nearest = min(SENTENCES_3D, key=lambda s: np.linalg.norm(screen(SENTENCES_3D[s]) - at))
        assert topic(nearest) == verb, (name, nearest)  # the closest arrow tip is its own topic's
    angle = {s: np.arctan2(*(screen(v) - origin)[::-1]) for s, v in SENTENCES_3D.items()}
    gaps = [abs((angle[a] - angle[b] + np.pi) % (2 * np.pi) - np.pi) for a, b in itertools.combinations(angle, 2)]
    assert np.degrees(min(gaps)) > 4  # every pair of arrows at least 4° apart on screen: none hides another
    words = {t.get_text() for t in ax.texts}
    assert {s.split()[1] for s in SENTENCES_3D} <= words
    plt.close(fig)
