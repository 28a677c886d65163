"""Notebook 06's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

import numpy as np
import pytest
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils import measures
from course_utils.exercises import nb06
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import pairwise_spread, relative_distance
from course_utils.training.zoo import load_seeds


def my_spread(X):  # section 4's version, with a Python loop, as the notebook defines it
    d = [np.linalg.norm(X[i] - X[j]) for i in range(len(X)) for j in range(i + 1, len(X))]
    return np.mean(d) / np.linalg.norm(X, axis=1).mean()


def looping(X):  # right numbers, but a Python loop
    return (
        np.mean([np.linalg.norm(a - b) for i, a in enumerate(X) for b in X[i + 1 :]]) / np.linalg.norm(X, axis=1).mean()
    )


def _unanswered(X):
    X = np.asarray(X, dtype=float)
    return None


@pytest.mark.parametrize(
    "fn, said",
    [
        (None, NOT_ANSWERED),
        (_unanswered, NOT_ANSWERED),
        (looping, "uses a Python loop"),
        (lambda X: my_spread(X), "uses my_spread"),
        (pairwise_spread, "uses pairwise_spread"),
        *((learner(m.gives), m.hint) for m in nb06.SPREAD.mistakes),
    ],
)
def test_pairwise_spread(fn, said, capsys):
    assert not nb06.check_pairwise_spread(fn)
    assert said in capsys.readouterr().out


def test_most_changed_word(capsys):
    spec = nb06.most_changed_spec()
    assert nb06.check_most_changed_word(spec.reference, " Want") and "prediction was right" in capsys.readouterr().out
    for wrong, said in [(None, NOT_ANSWERED), *((m.gives, m.hint) for m in spec.mistakes)]:
        assert not nb06.check_most_changed_word(wrong, "want")
        assert said in (out := capsys.readouterr().out) and "moves most" not in out, out


@pytest.mark.parametrize(
    "fn, said", [(None, NOT_ANSWERED), *((learner(m.gives), m.hint) for m in nb06.HEAD_SHIFT.mistakes)]
)
def test_head_shift(fn, said, capsys):
    assert not nb06.check_head_shift(fn, 1)
    assert said in capsys.readouterr().out


def test_the_notebooks_worked_solutions_pass_their_checkers(capsys):
    seeds = load_seeds("learned")
    namespace = {
        **{"np": np, "snaps": seeds[0].snapshots, "seeds": seeds, "seed4": seeds[4].snapshots[30], "PAIR": PAIR},
        **{"A": PAIR[0], "B": PAIR[1], "relative_distance": relative_distance, "word_vector": word_vector},
        **{"my_relative_distance": relative_distance, "predicted_word": "want", "predicted_head": 1},
        **{"ex": nb06, "measures": measures},
    }
    for call in ("check_pairwise_spread(", "check_most_changed_word(", "check_head_shift("):
        exec(solution_code("06_qkv_clustering_by_epoch.ipynb", call), namespace)
        assert "✅" in capsys.readouterr().out, call
