"""Notebook 07's checkers accept the worked solutions and reject typical wrong answers."""

import pytest

from course_utils import probing
from course_utils.exercises import nb07
from course_utils.training import load_standard_model


def test_permutation_accepts_worked_solution_and_rejects_wrong_orders(capsys):
    a = "we can eat apple".split()
    worked = [a.index(w) for w in nb07.SCRAMBLED.split()]  # the worked solution: where each new word sat before
    assert worked == [1, 0, 3, 2]
    assert nb07.check_permutation(worked)
    assert not nb07.check_permutation([3, 2, 1, 0])  # the reversal of exercise text, not this sentence
    assert not nb07.check_permutation([0, 1, 2, 3])  # "nothing moves" = invariance
    assert not nb07.check_permutation([1, 0, 2, 3])
    assert not nb07.check_permutation(None)
    assert not nb07.check_permutation([0, 0, 1, 2])
    assert "Not yet" in capsys.readouterr().out


def test_symmetry_accepts_worked_solution_and_rejects_the_blogs_answer():
    worked = {
        "encoder output, no PE": "equivariant",
        "decoder output for the same German input, no PE": "invariant",
        "encoder output, learned PE": "neither",
        "encoder layer-0 attention weights, no PE": "equivariant",
        "the translation, no PE": "invariant",
    }
    assert nb07.check_symmetry(worked)
    assert nb07.check_symmetry({k: v.upper() for k, v in worked.items()})
    assert not nb07.check_symmetry({k: "invariant" for k in worked})  # "permutation invariant" everywhere
    assert not nb07.check_symmetry({**worked, "encoder output, learned PE": "equivariant"})
    assert not nb07.check_symmetry({k: None for k in worked})
    assert not nb07.check_symmetry([])


def test_distinct_accepts_worked_solution_and_rejects_wrong_counts():
    models = {pe: load_standard_model(pe).model for pe in ("learned", "sinusoidal", "none")}
    worked = {pe: len(probing.distinct_translations(models[pe], "i can eat apple book")) for pe in models}
    assert worked["none"] == 1  # a bag of words: one translation for every order
    assert nb07.check_distinct(worked)
    assert not nb07.check_distinct({pe: 1 for pe in worked})  # "no model uses order"
    assert not nb07.check_distinct({**worked, "sinusoidal": worked["sinusoidal"] + 1})
    assert not nb07.check_distinct({"learned": 120, "sinusoidal": 120, "none": 120})
    assert not nb07.check_distinct({"learned": None, "sinusoidal": None, "none": None})
    assert not nb07.check_distinct({"learned": True, "sinusoidal": 2, "none": 1})


@pytest.mark.parametrize("answer", [{}, None, "24"])
def test_distinct_rejects_malformed_answers(answer):
    assert not nb07.check_distinct(answer)
