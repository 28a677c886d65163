"""Notebook 06 checkers accept the worked solutions and reject typical wrong answers (and the unanswered state)."""

from __future__ import annotations

import numpy as np
import pytest
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.exercises import NOT_ANSWERED, nb06
from course_utils.measures.clustering import PAIR, word_vector
from course_utils.measures.similarity import cosine_distance, relative_distance
from course_utils.training.zoo import load_standard_model

NOT_YET = NOT_ANSWERED  # the ✍ line of an unanswered exercise


@pytest.fixture(scope="module")
def snaps():
    return load_standard_model().snapshots


def test_pairwise_spread(capsys):
    def solution(X):
        X = np.asarray(X, dtype=float)
        D = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)  # (N, N) all distances
        i, j = np.triu_indices(len(X), k=1)
        return D[i, j].mean() / np.linalg.norm(X, axis=1).mean()

    def with_diagonal(X):  # N zeros on the diagonal averaged in
        X = np.asarray(X, dtype=float)
        D = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
        return D.mean() / np.linalg.norm(X, axis=1).mean()

    def not_normalised(X):
        X = np.asarray(X, dtype=float)
        i, j = np.triu_indices(len(X), k=1)
        return np.linalg.norm(X[i] - X[j], axis=1).mean()

    def with_a_loop(X):  # right numbers, but the exercise is to do without the loop
        X = np.asarray(X, dtype=float)
        pairs = [(i, j) for i in range(len(X)) for j in range(i + 1, len(X))]
        return np.mean([np.linalg.norm(X[i] - X[j]) for i, j in pairs]) / np.linalg.norm(X, axis=1).mean()

    def crashes(X):
        raise RuntimeError("boom")

    def stub(X):  # the notebook's unanswered cell
        X = np.asarray(X, dtype=float)
        return None

    assert nb06.check_pairwise_spread(solution)
    capsys.readouterr()
    for wrong, hint in [
        (with_diagonal, "count each pair once"),
        (not_normalised, "divide the mean pairwise distance"),
        (with_a_loop, "Python loop"),
        (crashes, "raised RuntimeError"),
        (stub, NOT_YET),
        (None, NOT_YET),
    ]:
        assert not nb06.check_pairwise_spread(wrong)
        assert hint in capsys.readouterr().out


def _shifts(snaps, key="encoder.1.self.x1", epoch=30, distance=relative_distance):
    return {w: distance(*(word_vector(snaps[epoch][s], key, w) for s in PAIR)) for w in nb06.SHARED}


def test_pairwise_spread_refuses_the_course_copy_and_the_loop_version(capsys):
    """Exercise 1 asks for the spread written out: calling pairwise_spread, or section 4's looping my_spread, is
    refused (the numbers would be right); the worked solution and another honest one pass."""
    from course_utils.measures.similarity import pairwise_spread

    def my_spread(X):  # section 4's version, as the notebook defines it
        X = np.asarray(X, dtype=float)
        d = [np.linalg.norm(X[i] - X[j]) for i in range(len(X)) for j in range(i + 1, len(X))]
        return np.mean(d) / np.linalg.norm(X, axis=1).mean()

    def with_the_library(X):
        return pairwise_spread(X)

    def with_the_loop_version(X):
        return my_spread(X)

    for shortcut, name in [
        (with_the_library, "pairwise_spread"),
        (pairwise_spread, "pairwise_spread"),  # the library function passed as it is
        (with_the_loop_version, "my_spread"),
    ]:
        assert not nb06.check_pairwise_spread(shortcut)
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and out.startswith("❌") and f"calls {name}" in out, out

    def honest(X):  # the mean over all N² distances, corrected for the N zeros and the double count
        X = np.asarray(X, dtype=float)
        n = len(X)
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        return D.sum() / (n * (n - 1)) / np.sqrt((X**2).sum(1)).mean()

    assert nb06.check_pairwise_spread(honest) and "✅" in capsys.readouterr().out

    calls = []

    def right_once(X):  # right numbers, then a crash on the scaled vectors: one ❌ line, no traceback
        calls.append(1)
        if len(calls) > 3:
            raise ValueError("boom")
        return honest(X)

    assert not nb06.check_pairwise_spread(right_once)
    assert "raised ValueError: boom" in capsys.readouterr().out


from course_utils.measures import similarity as _similarity  # noqa: E402  (aliases a learner might write)

_spread_alias = _similarity.pairwise_spread


def _through_an_alias(X):  # the course's copy under another name
    return _spread_alias(X)


def _through_the_module(X):
    return _similarity.pairwise_spread(X)


def _through_another_course_helper(X):  # a neighbouring course measure does the distances
    from course_utils.measures.similarity import mean_pairwise_cosine_distance

    X = np.asarray(X, dtype=float)
    return mean_pairwise_cosine_distance(X) * 0 + _honest_helper_free(X) + 0 * _similarity.dot(X[0], X[0])


def _honest_helper_free(X):
    X = np.asarray(X, dtype=float)
    D = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
    i, j = np.triu_indices(len(X), k=1)
    return D[i, j].mean() / np.linalg.norm(X, axis=1).mean()


def _looping_helper(X):  # a helper of the learner's with a Python loop, called from a loop-free function
    X = np.asarray(X, dtype=float)
    d = [np.linalg.norm(X[i] - X[j]) for i in range(len(X)) for j in range(i + 1, len(X))]
    return np.mean(d) / np.linalg.norm(X, axis=1).mean()


def _through_a_looping_helper(X):
    return _looping_helper(X)


def _honest_with_own_helper(X):  # honest: its own loop-free helper does the distances
    X = np.asarray(X, dtype=float)
    return _distances(X)[np.triu_indices(len(X), k=1)].mean() / np.linalg.norm(X, axis=1).mean()


def _distances(X):
    return np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize(
    "shortcut, said",
    [
        (_through_an_alias, "calls _spread_alias"),
        (_through_the_module, "calls pairwise_spread"),
        (_through_another_course_helper, "a course helper"),
        (_through_a_looping_helper, "calls _looping_helper, a function with a Python loop"),
    ],
)
def test_pairwise_spread_refuses_course_helpers_behind_aliases_and_looping_helpers(shortcut, said, capsys):
    """Exercise 1 says: write it yourself with numpy. The course's copy behind an alias or its module, another course
    measure, and a looping helper of the learner's are refused with one line; honest answers still pass."""
    assert not nb06.check_pairwise_spread(shortcut)
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: ") and out.count("\n") == 1 and said in out, out
    for honest in (_honest_helper_free, _honest_with_own_helper):
        assert nb06.check_pairwise_spread(honest) and "✅" in capsys.readouterr().out


@pytest.mark.parametrize("wrong", [3, "my_pairwise_spread", [1.0, 2.0], {"X": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    def returns(value):
        return lambda *args, **kw: value

    checks = [
        lambda: nb06.check_pairwise_spread(wrong),
        lambda: nb06.check_pairwise_spread(returns(wrong)),  # a function that returns the wrong type
        lambda: nb06.check_most_changed_word(wrong, "want"),
        lambda: nb06.check_most_changed_word({w: wrong for w in nb06.SHARED}, "want"),
        lambda: nb06.check_head_shift(wrong, 1),
        lambda: nb06.check_head_shift(returns(wrong), 1),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


def test_most_changed_word(snaps, capsys):
    shifts = _shifts(snaps)  # the worked solution
    assert max(shifts, key=shifts.get) == "want"
    assert nb06.check_most_changed_word(shifts, "want")
    assert "Your prediction was right" in capsys.readouterr().out
    assert nb06.check_most_changed_word(shifts, "eat")  # a wrong guess is compared, not graded
    assert "You predicted 'eat'" in capsys.readouterr().out
    assert nb06.check_most_changed_word(shifts)
    assert "no prediction" in capsys.readouterr().out
    assert nb06.check_most_changed_word(shifts, " Want")  # case and spaces do not make a right guess wrong
    assert "Your prediction was right" in capsys.readouterr().out
    for wrong, hint in [
        (None, NOT_YET),
        (_shifts(snaps, "encoder.0.self.x1"), "layer 0"),
        (_shifts(snaps, distance=cosine_distance), "cosine distance"),
        (_shifts(snaps, epoch=1), "epoch 1"),
        (_shifts(snaps, "encoder.1.layer_out"), "layer's output"),
        ({**shifts, "apple": 0.5}, "exactly the words"),
        ({w: 0.1 for w in nb06.SHARED}, "not these numbers"),
        ("want", "should be a dict"),
    ]:
        assert not nb06.check_most_changed_word(wrong, "want")
        assert hint in capsys.readouterr().out
    wa, wb = (snaps[30][s]["encoder.1.self.weights"] for s in PAIR)  # the worked solution's reason
    assert wa[0, 1, 4] > 0.3 and wb[0, 1, 4] < 0.15


def test_head_shift(capsys):
    def solution(trace_a, trace_b, key, head, word="eat"):  # the worked solution
        i, j = trace_a.tokens(key).index(word), trace_b.tokens(key).index(word)
        a = trace_a.vectors(key, head)[i].double().numpy()
        b = trace_b.vectors(key, head)[j].double().numpy()
        return np.linalg.norm(a - b) / ((np.linalg.norm(a) + np.linalg.norm(b)) / 2)

    def both_heads(trace_a, trace_b, key, head, word="eat"):
        return nb06.head_shift(trace_a, trace_b, key, None, word)

    def cosine(trace_a, trace_b, key, head, word="eat"):
        return cosine_distance(word_vector(trace_a, key, word, head), word_vector(trace_b, key, word, head))

    def plain_norm(trace_a, trace_b, key, head, word="eat"):
        return np.linalg.norm(word_vector(trace_a, key, word, head) - word_vector(trace_b, key, word, head))

    def stub(trace_a, trace_b, key, head, word="eat"):
        return None

    assert nb06.check_head_shift(solution, 1)
    out = capsys.readouterr().out
    assert "Your prediction was right" in out
    assert nb06.check_head_shift(solution, 0) and "You predicted 0" in capsys.readouterr().out
    assert nb06.check_head_shift(solution, "1") and "Your prediction was right" in capsys.readouterr().out
    for wrong, hint in [
        (both_heads, "both heads"),
        (cosine, "cosine distance"),
        (plain_norm, "‖a − b‖ alone"),
        (stub, NOT_YET),
        (None, NOT_YET),
    ]:
        assert not nb06.check_head_shift(wrong, 1)
        assert hint in capsys.readouterr().out


def test_head_shift_answer_and_the_solution_note():
    """Seed 4, encoder layer 1: the head that hardly looks at the object (head 1) differs more; both layer-0 heads
    of seed 4 look at the object, so layer 1's values already carry it (the worked solution's reason)."""
    s4 = load_standard_model("learned", 4).snapshots[30]
    a, b = (s4[s] for s in PAIR)
    d = [nb06.head_shift(a, b, "encoder.1.self.x1", h) for h in (0, 1)]
    on_object = [max(float(s4[s]["encoder.1.self.weights"][h, 3, 4]) for s in PAIR) for h in (0, 1)]
    assert d[1] > d[0] > 1.0 and on_object[0] > 0.6 > 0.1 > on_object[1]
    layer0 = [min(float(s4[s]["encoder.0.self.weights"][h, 3, 4]) for s in PAIR) for h in (0, 1)]
    assert min(layer0) > 0.75
    assert nb06.head_shift(a, b, "encoder.1.self.v", 1) > 0.5  # layer 1's values of eat differ already


def test_the_notebooks_worked_solutions_pass_their_checkers(snaps, capsys):
    from course_utils.exercises.nb06 import check_head_shift, check_most_changed_word, check_pairwise_spread
    from course_utils.training.zoo import load_seeds

    seeds = load_seeds("learned")
    a, b = PAIR
    namespace = {
        "np": np,
        "snaps": snaps,
        "seeds": seeds,
        "seed4": seeds[4].snapshots[30],
        "A": a,
        "B": b,
        "PAIR": PAIR,
        "relative_distance": relative_distance,
        "word_vector": word_vector,
        "my_relative_distance": relative_distance,
        "predicted_word": None,
        "predicted_head": None,
        "check_pairwise_spread": check_pairwise_spread,
        "check_most_changed_word": check_most_changed_word,
        "check_head_shift": check_head_shift,
    }
    for call in ("check_pairwise_spread(", "check_most_changed_word(", "check_head_shift("):
        exec(solution_code("06_qkv_clustering_by_epoch.ipynb", call), namespace)
        assert "✅" in capsys.readouterr().out, call
