"""Notebook 01's exercise specs: the right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

import numpy as np
import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.toys import SENTENCES_2D, SENTENCES_3D
from course_utils.exercises import nb01
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.measures.sentence_vectors import dot_matrix, topic_check
from course_utils.measures.similarity import cosine


def _solution_cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def _torch_norm(x):  # a helper of the learner's that is not NumPy
    return float(torch.linalg.norm(torch.as_tensor(x)))


def _through_a_helper(a, b):
    return float(np.dot(a, b)) / (_torch_norm(a) * _torch_norm(b))


def test_my_cosine_accepts_right_answers_and_refuses_what_is_not_numpy(capsys):
    assert nb01.check_my_cosine(_solution_cosine)
    assert nb01.check_my_cosine(lambda a, b: np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b)))
    for fn, used in [
        (cosine, "cosine"),
        (lambda a, b: cosine(a, b), "cosine"),
        (_through_a_helper, "(in _torch_norm)"),
    ]:
        assert not nb01.check_my_cosine(fn)
        assert used in capsys.readouterr().out.split("NumPy only")[0]


@pytest.mark.parametrize("mistake", nb01.COSINE.mistakes, ids=lambda m: m.hint[:30])
def test_my_cosine_names_each_mistake(mistake, capsys):
    assert not nb01.check_my_cosine(learner(mistake.gives))
    assert mistake.hint in capsys.readouterr().out


def test_nearest_to_cake(capsys):
    cake = np.array(SENTENCES_3D["eat cake"])
    best = max((s for s in SENTENCES_3D if s != "eat cake"), key=lambda s: _solution_cosine(cake, SENTENCES_3D[s]))
    assert best == "eat bread" and nb01.check_nearest_to_cake(best)
    for answer, hint in [("eat cake", "itself"), ("eat apple", "largest dot product"), ("drink tea", "all eight")]:
        assert not nb01.check_nearest_to_cake(answer) and hint in capsys.readouterr().out


def test_same_topic_prediction(capsys):
    truth = topic_check(dot_matrix(SENTENCES_2D), SENTENCES_2D)["global_ok"]
    assert truth is False and nb01.check_same_topic_prediction(truth)
    assert not nb01.check_same_topic_prediction(True) and "long" in capsys.readouterr().out


def test_eat_cake(capsys):
    assert nb01.check_eat_cake((0.9, 0.0)) and nb01.check_eat_cake(np.array([1.0, 0.05]))
    for wrong, hint in [((0.5, 0.5), "food axis"), ((0.0, 0.0), "not both zero"), ("cake", "two numbers")]:
        assert not nb01.check_eat_cake(wrong) and hint in capsys.readouterr().out
    # 21° from the food axis: by cosine both 'eat' sentences win, but the long 'drink water' arrow by dot product
    assert not nb01.check_eat_cake((0.9, 0.35)) and nb01.EAT_CAKE.mistakes[1].hint in capsys.readouterr().out


CHECKS = [
    nb01.check_my_cosine,
    nb01.check_nearest_to_cake,
    nb01.check_same_topic_prediction,
    nb01.check_eat_cake,
]


def test_unanswered_prints_one_line_each_and_gives_nothing_away(capsys):
    for check in CHECKS:
        assert check(None) is False
    assert not nb01.check_my_cosine(lambda a, b: None)
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 5
    assert "eat bread" not in out and "False:" not in out and "0.9" not in out


def test_the_notebooks_worked_solution_to_exercise_1_passes(capsys):
    ns = {"np": np, "SENTENCES_3D": SENTENCES_3D, "ex": nb01}
    exec(solution_code("01_sentence_vectors.ipynb", "my_nearest = max("), ns)
    assert ns["my_nearest"] == "eat bread" and nb01.check_my_cosine(ns["my_cosine"])
    assert capsys.readouterr().out.count("✅") == 3
