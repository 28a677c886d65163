"""Notebook 08's checkers accept the worked solutions and reject typical wrong answers."""

import numpy as np

from course_utils import probing
from course_utils.exercises import nb08


def my_word_spread(V):  # the worked solution in the notebook
    V = V / np.linalg.norm(V, axis=1, keepdims=True)
    C = V @ V.T
    i, j = np.triu_indices(len(V), 1)
    return float((1 - C[i, j]).mean())


def test_word_spread_accepts_worked_solution():
    assert nb08.check_word_spread(my_word_spread)


def test_word_spread_rejects_typical_mistakes(capsys):
    def similarity(V):  # mean cosine instead of 1 - cosine
        return 1 - my_word_spread(V)

    def with_diagonal(V):  # all pairs including i = j
        V = V / np.linalg.norm(V, axis=1, keepdims=True)
        return float((1 - V @ V.T).mean())

    def euclidean(V):
        i, j = np.triu_indices(len(V), 1)
        return float(np.linalg.norm(V[i] - V[j], axis=1).mean())

    def stub(V):
        return None

    def broken(V):
        raise RuntimeError("oops")

    for fn in (similarity, with_diagonal, euclidean, stub, broken, "not a function"):
        assert not nb08.check_word_spread(fn)
    assert "Not yet" in capsys.readouterr().out


def test_zero_place_accepts_worked_solution_and_rejects_others():
    table = probing.spread_table(probing.five_sentences())
    ws = probing.spread_pivot(table, "word spread")
    zero = ws[(ws[["q", "k", "v", "x1", "out"]] < 1e-6).all(axis=1)].index.tolist()  # the worked solution
    assert zero == ["decoder L0 self"]
    assert nb08.check_zero_place(zero[0])
    assert nb08.check_zero_place("decoder.0.self")
    for wrong in ("encoder L0 self", "decoder L0 cross", "decoder L1 self", None, ""):
        assert not nb08.check_zero_place(wrong)
