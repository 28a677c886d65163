"""Checkers of notebook 01 accept the worked solutions and reject typical wrong answers."""

import math

import numpy as np
import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.exercises import NOT_ANSWERED, not_answered
from course_utils.exercises.nb01 import (
    check_eat_cake,
    check_four_factors,
    check_my_cosine,
    check_nearest_to_cake,
    check_same_topic_prediction,
)
from course_utils.measures.similarity import cosine, dot


def _solution_cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_my_cosine_solution():
    assert check_my_cosine(_solution_cosine)
    assert check_my_cosine(lambda a, b: np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b)))  # another right way


def _unanswered(a, b):
    raise NotImplementedError


@pytest.mark.parametrize(
    "fn, hint",
    [
        (None, NOT_ANSWERED),
        (_unanswered, NOT_ANSWERED),
        (lambda a, b: float(a @ b), "dot product"),
        (lambda a, b: float(a @ b / (np.dot(a, a) * np.dot(b, b))), "squared lengths"),
        (lambda a, b: float(a @ b / np.linalg.norm(a)), "BOTH"),
        (lambda a, b: float(np.arccos(_solution_cosine(a, b))), "angle"),
        (lambda a, b: a * b / (np.linalg.norm(a) * np.linalg.norm(b)), "one number"),
        (lambda a, b: abs(_solution_cosine(a, b)), "different number"),
        (lambda a, b: a.x, "raised AttributeError"),
    ],
)
def test_my_cosine_rejects_typical_mistakes(fn, hint, capsys):
    assert not check_my_cosine(fn)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED if hint == NOT_ANSWERED else "❌ Not yet: ") and hint in out


def test_nearest_to_cake():
    from course_utils.core.toys import SENTENCES_3D

    cake = np.array(SENTENCES_3D["eat cake"])
    others = [s for s in SENTENCES_3D if s != "eat cake"]
    best = max(others, key=lambda s: _solution_cosine(cake, np.array(SENTENCES_3D[s])))
    assert best == "eat bread" and check_nearest_to_cake(best)


@pytest.mark.parametrize(
    "answer, hint",
    [
        (None, NOT_ANSWERED),
        ("eat cake", "cosine 1 with itself"),
        ("eat apple", "largest dot product"),
        ("drink tea", "all eight"),
        ("eat pizza", "one of the nine"),
    ],
)
def test_nearest_to_cake_wrong(answer, hint, capsys):
    assert not check_nearest_to_cake(answer)
    assert hint in capsys.readouterr().out


def test_same_topic_prediction(capsys):
    from course_utils.core.toys import SENTENCES_2D
    from course_utils.measures.sentence_vectors import dot_matrix, topic_check

    truth = topic_check(dot_matrix(SENTENCES_2D), SENTENCES_2D)["global_ok"]
    assert truth is False and check_same_topic_prediction(truth)
    assert not check_same_topic_prediction(True) and "long" in capsys.readouterr().out
    assert not check_same_topic_prediction(None) and NOT_ANSWERED in capsys.readouterr().out
    assert not check_same_topic_prediction("no") and "True or False" in capsys.readouterr().out


def test_not_answered_prints_one_line_and_returns_false(capsys):
    assert not_answered("set x, then re-run.") is False
    assert (
        capsys.readouterr().out == NOT_ANSWERED + "set x, then re-run.\n" == "✍ Not answered yet: set x, then re-run.\n"
    )


def test_unanswered_messages_do_not_give_the_answer_away(capsys):
    for check in (check_my_cosine, check_nearest_to_cake, check_same_topic_prediction, check_eat_cake):
        assert not check(None)
    out = capsys.readouterr().out
    assert "eat bread" not in out and "False:" not in out and "0.9" not in out
    assert out.count(NOT_ANSWERED) == 4 and "❌" not in out


def test_eat_cake_solution():
    assert check_eat_cake((0.9, 0.0))
    assert check_eat_cake(np.array([1.0, 0.05]))


@pytest.mark.parametrize(
    "answer, hint",
    [
        ((0.5, 0.5), "closer to the food axis"),
        ((0.2, 0.9), "closer to the food axis"),
        ((0.0, 0.0), "not both zero; got"),
        ((1, 2, 3), "two numbers"),
        ("cake", "two numbers"),
        (None, NOT_ANSWERED),
    ],
)
def test_eat_cake_wrong(answer, hint, capsys):
    assert not check_eat_cake(answer)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED if hint == NOT_ANSWERED else "❌ Not yet: ") and hint in out


def test_eat_cake_needs_both_measures(capsys):
    # 21° from the food axis: by cosine both 'eat' sentences win, but the long 'drink water' arrow wins by dot product
    from course_utils.core.toys import SENTENCES_2D
    from course_utils.measures.similarity import cosine, dot

    v = (0.9, 0.35)
    assert min(cosine(v, SENTENCES_2D[s]) for s in ("eat apple", "eat bread")) > cosine(v, SENTENCES_2D["drink water"])
    assert dot(v, SENTENCES_2D["eat bread"]) < dot(v, SENTENCES_2D["drink water"])
    assert not check_eat_cake(v)
    assert "by dot product, 'drink water'" in capsys.readouterr().out


def test_four_factors():
    assert check_four_factors(100 * (11 * 21 * 31 * 41 / (10 * 20 * 30 * 40) - 1))
    assert check_four_factors(22.33)
    for wrong in (None, 0.2233, 20.83, 19.35, -22.33, "lots"):
        assert not check_four_factors(wrong)


def test_the_notebooks_worked_solution_to_exercise_1_passes(capsys):
    """Exec the code of the Solution block below exercise 1 in notebook 01."""
    code = solution_code("01_sentence_vectors.ipynb", "my_nearest = max(")
    from course_utils.core.toys import SENTENCES_3D

    ns = {
        "np": np,
        "SENTENCES_3D": SENTENCES_3D,
        "check_my_cosine": check_my_cosine,
        "check_nearest_to_cake": check_nearest_to_cake,
    }
    exec(code, ns)
    assert ns["my_nearest"] == "eat bread" and check_my_cosine(ns["my_cosine"])
    assert capsys.readouterr().out.count("✅") == 3


# ---- Exercise 1a says "NumPy only": torch and the course's helpers are refused ----


def _course_cosine(a, b):
    return cosine(a, b)


def _course_dot(a, b):  # the notebook imports dot from course_utils
    return dot(a, b) / np.sqrt(dot(a, a) * dot(b, b))


def _torch_cosine(a, b):
    return float(torch.nn.functional.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=0))


def _torch_norm(x):  # a helper of the learner's that is not NumPy
    return float(torch.linalg.norm(torch.as_tensor(x)))


def _through_a_helper(a, b):
    return float(np.dot(a, b)) / (_torch_norm(a) * _torch_norm(b))


@pytest.mark.parametrize(
    "fn, used",
    [
        (_course_cosine, "calls cosine"),
        (_course_dot, "calls dot"),
        (_torch_cosine, "calls torch.nn.functional.cosine_similarity"),
        (_through_a_helper, "calls torch.linalg.norm (in _torch_norm)"),
        (cosine, "course_utils's own function"),
    ],
)
def test_my_cosine_refuses_what_is_not_numpy(fn, used, capsys):
    assert not check_my_cosine(fn)
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: my_") and used in out and "NumPy only" in out and out.count("\n") == 1, out


def _numpy_helper(x):
    return math.sqrt(x @ x)


def _honest_with_a_helper(a, b):
    norm = np.linalg.norm
    return float(a @ b) / (_numpy_helper(a) * norm(b))


def test_my_cosine_accepts_numpy_math_and_the_learners_own_helpers():
    assert check_my_cosine(_solution_cosine) and check_my_cosine(_honest_with_a_helper)


@pytest.mark.parametrize("wrong", [3, "eat cake?", ["eat", "cake"], {"eat": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    for check in (
        check_my_cosine,
        check_nearest_to_cake,
        check_eat_cake,
        check_four_factors,
        check_same_topic_prediction,
    ):
        assert check(wrong) is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, (check.__name__, out)


@pytest.mark.parametrize(
    "check, wrong",
    [
        (check_four_factors, "22.33"),  # the right number, typed as a string
        (check_eat_cake, ("0.9", "0")),
        (check_eat_cake, {"food": 0.9, "reading": 0.0}),
        (check_nearest_to_cake, ["eat bread"]),  # the right sentence, inside a list
        (check_same_topic_prediction, "False"),
        (check_same_topic_prediction, 0),
    ],
)
def test_a_right_answer_of_the_wrong_type_is_refused_with_one_line(check, wrong, capsys):
    assert check(wrong) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


@pytest.mark.parametrize("returned", [3.0 + 0j, "0.5", [0.5], {"cos": 0.5}, None, (0.5, 0.5)])
def test_my_cosine_returning_a_wrong_type_gets_one_line(returned, capsys):
    assert check_my_cosine(lambda a, b: returned) is False
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: my_cosine(") and out.count("\n") == 1, out
