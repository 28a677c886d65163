"""Notebook 07's checkers accept the worked solutions and reject typical wrong answers."""

import itertools
import linecache
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.model import translate
from course_utils.exercises import NOT_ANSWERED, nb07
from course_utils.measures.probing import distinct_translations
from course_utils.training.zoo import SEEDS, load_standard_model

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
        (_unanswered, NOT_ANSWERED),
        (lambda W, p: None, NOT_ANSWERED),
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
    if hint == NOT_ANSWERED:
        assert "perm[" not in out and "column" not in out  # the unanswered message gives nothing away


def test_the_symmetry_solution_block_passes(capsys):
    space = {"check_symmetry": nb07.check_symmetry}
    exec(solution_code(NOTEBOOK, "answers = {"), space)
    assert space["ok"]


def test_symmetry_accepts_worked_solution_and_rejects_the_blogs_answer(capsys):
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
    capsys.readouterr()
    assert not nb07.check_symmetry({k: None for k in worked})  # the committed, unanswered state
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED) and "equivariant:" not in out
    assert not nb07.check_symmetry([])


def library_counts(runs) -> dict[int, int]:
    """The counts by the library's distinct_translations, in a function of its own: check_distinct reads the code
    that calls it and refuses a caller that uses distinct_translations."""
    return {s: len(distinct_translations(runs[s].model, nb07.FIVE_WORDS)) for s in SEEDS}


def test_distinct_refuses_a_cell_that_counts_with_the_library(capsys):
    """Exercise 3 asks for the loop written out: a cell (a module of its own, as IPython compiles it) or a function
    that calls distinct_translations or distinct_counts is refused; the same counts from a written loop pass."""
    runs = {s: SimpleNamespace(model=load_standard_model("learned", s).model) for s in SEEDS}
    space = {"runs": runs, "check_distinct": nb07.check_distinct, "distinct_translations": distinct_translations}
    cell = (
        "distinct = {s: len(distinct_translations(r.model, 'i can eat apple book')) for s, r in runs.items()}\n"
        "ok = check_distinct(distinct, False)\n"
    )
    name = "<ipython-input-nb07-shortcut>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)  # what IPython does for every cell
    try:
        exec(compile(cell, name, "exec"), space)
    finally:
        del linecache.cache[name]
    assert space["ok"] is False
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("❌") and "calls distinct_translations" in out
    assert "itertools.permutations" in out

    def shortcut_cell():  # the same shortcut in a function, and the checker's own answer key
        assert not nb07.check_distinct(nb07.distinct_counts(), False)

    shortcut_cell()
    assert "calls distinct_counts" in capsys.readouterr().out

    def honest_cell():  # the worked solution's loop, written out
        distinct = {}
        for s, r in runs.items():
            outs = {" ".join(translate(r.model, list(p))) for p in itertools.permutations(nb07.FIVE_WORDS.split())}
            distinct[s] = len(outs)
        return nb07.check_distinct(distinct, False)

    assert honest_cell() and "✅" in capsys.readouterr().out


def test_distinct_accepts_the_worked_solution_and_rejects_wrong_counts(capsys):
    assert nb07.SEEDS == SEEDS
    runs = {s: SimpleNamespace(model=load_standard_model("learned", s).model) for s in SEEDS}
    space = {"runs": runs, "translate": translate, "check_distinct": nb07.check_distinct, "one_each": False}
    exec(solution_code(NOTEBOOK, "itertools.permutations"), space)  # the worked solution, as the notebook shows it
    worked = space["distinct"]
    assert space["ok"]
    out = capsys.readouterr().out
    assert "✅" in out and "one_each = False was right" in out  # seed 3 gives two translations
    assert worked == library_counts(runs)
    assert 1 in worked.values() and max(worked.values()) > 1  # some seeds ignore order here, some do not
    assert nb07.check_distinct(worked, True) and "one_each = True was not right" in capsys.readouterr().out
    assert nb07.check_distinct(worked, "no") and "True or False" in capsys.readouterr().out
    assert not nb07.check_distinct({s: 1 for s in SEEDS}, False)  # "no model uses order"
    assert "was right" not in capsys.readouterr().out  # the prediction is judged only once the counts are right
    assert not nb07.check_distinct({s: 120 for s in SEEDS})  # counted the orderings, not the translations
    assert "120 is the number of orderings" in capsys.readouterr().out
    assert not nb07.check_distinct({**worked, 0: worked[0] + 1})
    assert not nb07.check_distinct({**worked, 1: True})
    assert not nb07.check_distinct({"learned": 1, "sinusoidal": 2, "none": 1})  # the old three-model answer
    capsys.readouterr()
    assert not nb07.check_distinct({s: None for s in SEEDS}, None)  # the committed, unanswered state
    out = capsys.readouterr().out
    assert NOT_ANSWERED in out and "set" not in out and "seed(s)" not in out  # gives nothing away


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
    [(None, NOT_ANSWERED), (1, "on this corpus"), (12, "on this corpus"), (30, "0 to 24"), ("2", "whole number")],
)
def test_orderings_prediction_rejects(guess, hint, capsys):
    assert not nb07.check_orderings(guess, load_standard_model("learned").model)
    out = capsys.readouterr().out
    assert hint in out
    if guess is None:
        assert "24 of the 24" not in out  # the unanswered message gives nothing away
