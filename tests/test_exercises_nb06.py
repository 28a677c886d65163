"""Notebook 06 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import numpy as np

from course_utils.clustering import PAIR, relative_distance, word_vector
from course_utils.exercises import nb06
from course_utils.training import load_standard_model


def test_pairwise_spread():
    def solution(X):
        X = np.asarray(X, dtype=float)
        i, j = np.triu_indices(len(X), k=1)
        return np.linalg.norm(X[i] - X[j], axis=1).mean() / np.linalg.norm(X, axis=1).mean()

    def with_diagonal(X):  # the notebook's stub: N zeros on the diagonal averaged in
        X = np.asarray(X, dtype=float)
        D = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
        return D.mean() / np.linalg.norm(X, axis=1).mean()

    def not_normalised(X):
        X = np.asarray(X, dtype=float)
        i, j = np.triu_indices(len(X), k=1)
        return np.linalg.norm(X[i] - X[j], axis=1).mean()

    def crashes(X):
        raise RuntimeError("boom")

    assert nb06.check_pairwise_spread(solution)
    for wrong in (with_diagonal, not_normalised, crashes, None):
        assert not nb06.check_pairwise_spread(wrong)


def test_most_changed_word():
    snaps = load_standard_model().snapshots
    a, b = PAIR
    shifts = {
        w: relative_distance(
            word_vector(snaps[30][a], "encoder.1.self.x1", w), word_vector(snaps[30][b], "encoder.1.self.x1", w)
        )
        for w in ["we", "want", "to", "eat"]
    }
    solution = max(shifts, key=shifts.get)
    assert nb06.check_most_changed_word(solution)
    assert not nb06.check_most_changed_word("eat")  # the notebook's placeholder
    assert not nb06.check_most_changed_word("we")
    assert not nb06.check_most_changed_word("apple")  # not shared by both sentences
    for s in PAIR:  # the worked solution's reasons: "to" (head 0) looks at the last word, "we" hardly does
        w = snaps[30][s]["encoder.1.self.weights"]
        assert w[0, 2].argmax() == 4 and w[:, 0, 4].max() < 0.05


def test_first_difference():
    snaps = load_standard_model().snapshots
    a, b = PAIR
    order = [f"encoder.{layer}.self.{k}" for layer in (0, 1) for k in ("q", "k", "v", "x1", "out")]
    order = order[:5] + ["encoder.0.layer_out"] + order[5:] + ["encoder.1.layer_out"]
    solution = next(
        k
        for k in order
        if relative_distance(word_vector(snaps[30][a], k, "eat"), word_vector(snaps[30][b], k, "eat")) > 1e-6
    )
    assert nb06.check_first_difference(solution)
    assert not nb06.check_first_difference("encoder.0.self.x1")  # the blog's expectation
    assert not nb06.check_first_difference("encoder.1.self.q")
    assert not nb06.check_first_difference("encoder.1.layer_out")  # differs, but later
    assert not nb06.check_first_difference("decoder.0.cross.k")
