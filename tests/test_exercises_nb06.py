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
    wa, wb = (snaps[30][s]["encoder.1.self.weights"] for s in PAIR)  # the worked solution's reason
    assert wa[0, 1, 4] > 0.3 and wb[0, 1, 4] < 0.15


def test_object_position():
    """Exercise 3: patch each English position of the encoder output from the bread run (seed 0)."""
    from course_utils.clustering import copy_row_from, next_word_log_probs
    from course_utils.data import load_probes
    from course_utils.tracing import run_with_trace

    refs = load_probes("context_pair")
    a, b = PAIR

    def effects(model):
        bread = run_with_trace(model, b)
        de = model.tgt_vocab.stoi
        out = {}
        for pos, word in enumerate(a.split()):
            lp = next_word_log_probs(model, a, refs[a], {"encoder.1.layer_out": copy_row_from(bread, pos)})
            out[word] = float(lp[2, de["einen"]] - lp[2, de["brot"]])
        return out

    effect = effects(load_standard_model().model.eval())
    solution = min(effect, key=effect.get)
    assert solution == "apple" and effect["apple"] < 0 < effect["eat"]  # the worked solution's text
    assert nb06.check_object_position(solution)
    assert not nb06.check_object_position("eat")  # the notebook's placeholder
    assert not nb06.check_object_position("to")
    assert not nb06.check_object_position("bread")  # not a word of the apple sentence
    assert not nb06.check_object_position(4)  # a position instead of the word
    seed4 = effects(load_standard_model("learned", 4).model.eval())  # "try seed 4: there it is eat's row"
    assert min(seed4, key=seed4.get) == "eat"
