"""Notebook 07's checkers accept the worked solutions and reject typical wrong answers."""

import itertools
from pathlib import Path

import numpy as np
import pytest
from test_exercises_nb09 import solution_code  # tests/ is on sys.path under pytest: one copy of the reader

from course_utils import probing
from course_utils.exercises import nb07
from course_utils.model import translate
from course_utils.training import SEEDS, load_standard_model

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07_word_order_and_position.ipynb"


def test_moved_weights_accepts_the_worked_solution(capsys):
    space = {"check_moved_weights": nb07.check_moved_weights, "np": np}
    exec(solution_code(NOTEBOOK, "def moved"), space)
    assert space["ok"] and "✅" in capsys.readouterr().out
    assert nb07.check_moved_weights(lambda W, p: np.einsum("ij,hjk,lk->hil", np.eye(4)[p], W, np.eye(4)[p]))  # P W Pᵀ


def _unanswered(W, perm):
    raise NotImplementedError


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (_unanswered, "not answered yet"),
        (lambda W, p: None, "not answered yet"),
        (lambda W, p: W, "nothing moved"),
        (lambda W, p: W[:, p], "only the rows"),
        (lambda W, p: W[:, :, p], "only the columns"),
        (lambda W, p: W[:, list(np.argsort(p))][:, :, list(np.argsort(p))], "other way round"),
        (lambda W, p: W[0][p][:, p], "keep the shape"),
        (lambda W, p: W[:, p][:, :, p] + 0.1, "differs"),
        (lambda W, p: 1 / 0, "raised ZeroDivisionError"),
    ],
)
def test_moved_weights_rejects_typical_mistakes(wrong, hint, capsys):
    assert not nb07.check_moved_weights(wrong)
    out = capsys.readouterr().out
    assert hint in out
    if hint == "not answered yet":
        assert "perm[" not in out and "column" not in out  # the unanswered message gives nothing away


def test_the_symmetry_solution_block_passes(capsys):
    space = {"check_symmetry": nb07.check_symmetry}
    exec(solution_code(NOTEBOOK, "answers = {"), space)
    assert space["ok"]


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
    assert nb07.SEEDS == SEEDS
    worked = {}  # the worked solution: a set of translations per seed
    for s in SEEDS:
        model = load_standard_model("learned", s).model
        outs = {" ".join(translate(model, list(p))) for p in itertools.permutations(nb07.FIVE_WORDS.split())}
        worked[s] = len(outs)
    assert worked == {
        s: len(probing.distinct_translations(load_standard_model("learned", s).model, nb07.FIVE_WORDS)) for s in SEEDS
    }
    assert 1 in worked.values() and max(worked.values()) > 1  # some seeds ignore order here, some do not
    assert nb07.check_distinct(worked)
    assert not nb07.check_distinct({s: 1 for s in SEEDS})  # "no model uses order"
    assert not nb07.check_distinct({s: 120 for s in SEEDS})  # every ordering its own translation
    assert not nb07.check_distinct({**worked, 0: worked[0] + 1})
    assert not nb07.check_distinct({s: None for s in SEEDS})
    assert not nb07.check_distinct({**worked, 1: True})
    assert not nb07.check_distinct({"learned": 1, "sinusoidal": 2, "none": 1})  # the old three-model answer


@pytest.mark.parametrize("answer", [{}, None, "24"])
def test_distinct_rejects_malformed_answers(answer):
    assert not nb07.check_distinct(answer)


# ---- the prediction before the lineup of models: how many of 24 orderings give the German


@pytest.mark.parametrize("guess", [24, 22])
def test_orderings_prediction_accepts_close_guesses(guess, capsys):
    assert nb07.check_orderings(guess, load_standard_model("learned").model)
    assert "for 24 of the 24 orderings" in capsys.readouterr().out


@pytest.mark.parametrize(
    "guess, hint",
    [(None, "not answered yet"), (1, "on this corpus"), (12, "on this corpus"), (30, "0 to 24"), ("2", "whole number")],
)
def test_orderings_prediction_rejects(guess, hint, capsys):
    assert not nb07.check_orderings(guess, load_standard_model("learned").model)
    out = capsys.readouterr().out
    assert hint in out
    if guess is None:
        assert "24 of the 24" not in out  # the unanswered message gives nothing away
