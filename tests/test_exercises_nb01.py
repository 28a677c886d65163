"""Checkers of notebook 01 accept the worked solutions and reject typical wrong answers."""

import numpy as np
import pytest

from course_utils.exercises.nb01 import check_dot_cosine, check_eat_cake, check_four_factors


def test_dot_cosine_solution():
    a, b = np.array([0.6, 0.5]), np.array([0.2, 0.8])
    d = a @ b
    assert check_dot_cosine(d, d / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert check_dot_cosine(0.52, 0.81)  # two decimals are enough


@pytest.mark.parametrize("answer", [(None, None), (0.52, 0.52), (0.58, 0.81), (0.12 + 0.5 * 0.8, 0.9), ("x", 1)])
def test_dot_cosine_wrong(answer, capsys):
    assert not check_dot_cosine(*answer)
    assert "Not yet" in capsys.readouterr().out


def test_dot_cosine_hint_says_what_is_wrong(capsys):
    check_dot_cosine(0.52, 0.52)  # forgot to divide by the lengths
    assert "lengths" in capsys.readouterr().out


def test_eat_cake_solution():
    assert check_eat_cake((0.9, 0.0))
    assert check_eat_cake(np.array([1.0, 0.05]))


@pytest.mark.parametrize("answer", [(0.5, 0.5), (0.2, 0.9), (0.0, 0.0), (1, 2, 3), None, "cake"])
def test_eat_cake_wrong(answer):
    assert not check_eat_cake(answer)


def test_eat_cake_needs_both_measures(capsys):
    # 21° from the food axis: by cosine both 'eat' sentences win, but the long 'drink water' arrow wins by dot product
    from course_utils.vectors import SENTENCES_2D, cosine, dot

    v = (0.9, 0.35)
    assert min(cosine(v, SENTENCES_2D[s]) for s in ("eat apple", "eat bread")) > cosine(v, SENTENCES_2D["drink water"])
    assert dot(v, SENTENCES_2D["eat bread"]) < dot(v, SENTENCES_2D["drink water"])
    assert not check_eat_cake(v)
    assert "by dot product, 'drink water'" in capsys.readouterr().out


def test_four_factors():
    assert check_four_factors(100 * (11 * 21 * 31 * 41 / (10 * 20 * 30 * 40) - 1))
    assert check_four_factors(22.33)
    for wrong in (None, 0.2233, 20.83, 19.35, -22.33):
        assert not check_four_factors(wrong)
