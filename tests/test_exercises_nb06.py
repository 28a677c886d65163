"""Notebook 06's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

import numpy as np
import pytest
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.exercises import NOT_ANSWERED, NOT_YET, nb06
from course_utils.exercises.framework import learner
from course_utils.measures import similarity
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import pairwise_spread, relative_distance
from course_utils.training.zoo import load_seeds


def solution(X):  # the worked solution
    X = np.asarray(X, dtype=float)
    D = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
    i, j = np.triu_indices(len(X), k=1)
    return D[i, j].mean() / np.linalg.norm(X, axis=1).mean()


def _distances(X):  # an honest helper of the learner's
    return np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


def honest(X):  # all N² distances, corrected for the N zeros and the double count
    X, n = np.asarray(X, dtype=float), len(X)
    return _distances(X).sum() / (n * (n - 1)) / np.sqrt((X**2).sum(1)).mean()


def my_spread(X):  # section 4's version, with a Python loop, as the notebook defines it
    d = [np.linalg.norm(X[i] - X[j]) for i in range(len(X)) for j in range(i + 1, len(X))]
    return np.mean(d) / np.linalg.norm(X, axis=1).mean()


def _looping(X):  # right numbers, but a loop
    return my_spread(np.asarray(X, dtype=float)) + 0 * sum(x for x in range(3))


_alias = pairwise_spread


def _unanswered(X):
    X = np.asarray(X, dtype=float)
    return None


@pytest.mark.parametrize(
    "fn, said",
    [
        (solution, "✅"),
        (honest, "✅"),
        (_unanswered, NOT_ANSWERED),
        (None, NOT_ANSWERED),
        (lambda X: 1 / 0, "raised ZeroDivisionError"),
        (lambda X: "1.4", "should return one number"),
        (3, "pass the function itself"),
        (_looping, "uses a Python loop"),
        (lambda X: _looping(X), "uses a Python loop (in _looping)"),
        (lambda X: my_spread(X), "uses my_spread"),
        (pairwise_spread, "uses pairwise_spread"),
        (lambda X: _alias(X), "uses _alias"),
        (lambda X: similarity.pairwise_spread(X), "uses similarity"),
    ],
)
def test_pairwise_spread(fn, said, capsys):
    assert nb06.check_pairwise_spread(fn) is (said == "✅")
    out = capsys.readouterr().out
    assert said in out and out.count("\n") == 1, out


@pytest.mark.parametrize("mistake", nb06.SPREAD.mistakes, ids=lambda m: m.hint[:30])
def test_pairwise_spread_names_each_mistake(mistake, capsys):
    assert not nb06.check_pairwise_spread(learner(mistake.gives))
    assert NOT_YET in (out := capsys.readouterr().out) and mistake.hint in out


def test_most_changed_word(capsys):
    spec = nb06.most_changed_spec()
    shifts = spec.reference
    assert max(shifts, key=shifts.get) == "want"
    for prediction, said in [("want", "Your prediction was right"), (" Want", "was right"), ("eat", "You predicted")]:
        assert nb06.check_most_changed_word(shifts, prediction) and said in capsys.readouterr().out
    assert nb06.check_most_changed_word(shifts) and "no prediction" in capsys.readouterr().out
    for wrong, said in [
        (None, NOT_ANSWERED),
        ({**shifts, "apple": 0.5}, "exactly the words"),
        ("want", "a dict"),
        ({w: "x" for w in shifts}, "a dict"),
        ({w: 0.1 for w in shifts}, "not these numbers"),
        *((m.gives, m.hint) for m in spec.mistakes),
    ]:
        assert not nb06.check_most_changed_word(wrong, "want")
        out = capsys.readouterr().out
        assert said in out and out.count("\n") == 1 and "moves most" not in out, out


def _head_solution(trace_a, trace_b, key, head, word="eat"):  # the worked solution
    i, j = trace_a.tokens(key).index(word), trace_b.tokens(key).index(word)
    a, b = trace_a.vectors(key, head)[i].double().numpy(), trace_b.vectors(key, head)[j].double().numpy()
    return np.linalg.norm(a - b) / ((np.linalg.norm(a) + np.linalg.norm(b)) / 2)


def test_head_shift(capsys):
    for prediction, said in [(1, "Your prediction was right"), ("1", "was right"), (0, "You predicted 0")]:
        assert nb06.check_head_shift(_head_solution, prediction) and said in capsys.readouterr().out
    for fn, said in [
        (None, NOT_ANSWERED),
        (lambda a, b, key, head, word="eat": None, NOT_ANSWERED),
        (lambda a, b, key, head, word="eat": a.missing, "raised AttributeError"),
        ("f", "pass the function itself"),
    ]:
        assert not nb06.check_head_shift(fn, 1)
        assert said in (out := capsys.readouterr().out) and out.count("\n") == 1, out


@pytest.mark.parametrize("mistake", nb06.HEAD_SHIFT.mistakes, ids=lambda m: m.hint[:30])
def test_head_shift_names_each_mistake(mistake, capsys):
    assert not nb06.check_head_shift(learner(mistake.gives), 1)
    assert mistake.hint in capsys.readouterr().out


def test_head_shift_answer_and_the_solution_note():
    """Seed 4, encoder layer 1: the head that hardly looks at the object (head 1) differs more; both layer-0 heads
    of seed 4 look at the object, so layer 1's values already carry it (the worked solution's reason)."""
    s4 = load_seeds("learned")[4].snapshots[30]
    a, b = (s4[s] for s in PAIR)
    d = [nb06.head_shift(a, b, "encoder.1.self.x1", h) for h in (0, 1)]
    on_object = [max(float(s4[s]["encoder.1.self.weights"][h, 3, 4]) for s in PAIR) for h in (0, 1)]
    assert d[1] > d[0] > 1.0 and on_object[0] > 0.6 > 0.1 > on_object[1]
    assert min(float(s4[s]["encoder.0.self.weights"][h, 3, 4]) for s in PAIR for h in (0, 1)) > 0.75
    assert nb06.head_shift(a, b, "encoder.1.self.v", 1) > 0.5  # layer 1's values of eat differ already


def test_the_notebooks_worked_solutions_pass_their_checkers(capsys):
    seeds = load_seeds("learned")
    namespace = {
        **{"np": np, "snaps": seeds[0].snapshots, "seeds": seeds, "seed4": seeds[4].snapshots[30], "PAIR": PAIR},
        **{"A": PAIR[0], "B": PAIR[1], "relative_distance": relative_distance, "word_vector": word_vector},
        **{"my_relative_distance": relative_distance, "predicted_word": None, "predicted_head": None},
        **{f.__name__: f for f in (nb06.check_pairwise_spread, nb06.check_most_changed_word, nb06.check_head_shift)},
    }
    for call in ("check_pairwise_spread(", "check_most_changed_word(", "check_head_shift("):
        exec(solution_code("06_qkv_clustering_by_epoch.ipynb", call), namespace)
        assert "✅" in capsys.readouterr().out, call
