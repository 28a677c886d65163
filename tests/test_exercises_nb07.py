"""Notebook 07's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

import itertools
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.model import translate
from course_utils.exercises import nb07
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.training.zoo import SEEDS, load_standard_model

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07_word_order_and_position.ipynb"


def _unanswered(*args):
    raise NotImplementedError


@pytest.mark.parametrize(
    "fn, said", [(_unanswered, NOT_ANSWERED), *((m.gives, m.hint) for m in nb07.MOVED_WEIGHTS.mistakes)]
)
def test_moved_weights(fn, said, capsys):
    space = {"ex": nb07, "np": np}
    exec(solution_code(NOTEBOOK, "def moved"), space)  # the worked solution
    assert space["ok"] and not nb07.check_moved_weights(fn)
    assert said in (out := capsys.readouterr().out.splitlines()[-1]) and (said != NOT_ANSWERED or "column" not in out)


WRONG_SYMMETRY = [
    ({k: None for k in nb07.SYMMETRY}, NOT_ANSWERED),  # the committed, unanswered state
    ({**nb07.SYMMETRY, "encoder output, learned PE": "moved"}, nb07.SYMMETRY_SPEC.mistakes[0].hint),
    (nb07.SYMMETRY_SPEC.mistakes[1].gives, nb07.SYMMETRY_SPEC.mistakes[1].hint),  # the blog's "invariant"
]


@pytest.mark.parametrize("wrong, said", WRONG_SYMMETRY)
def test_symmetry(wrong, said, capsys):
    space = {"ex": nb07}
    exec(solution_code(NOTEBOOK, "answers = {"), space)  # the worked solution
    assert space["ok"] and not nb07.check_symmetry(wrong)
    assert said in (out := capsys.readouterr().out.splitlines()[-1]) and (
        said != NOT_ANSWERED or "Equivariant" not in out
    )


def _via_batch(model, sentence):
    from course_utils.core.model import translate_batch

    return len({" ".join(t) for t in translate_batch(model, list(itertools.permutations(sentence.split())))})


def _via_distinct(model, sentence):
    from course_utils.measures.probing import distinct_translations

    return len(distinct_translations(model, sentence))


@pytest.mark.parametrize(
    "fn, said",
    [
        (_unanswered, NOT_ANSWERED),
        (_via_distinct, "uses distinct_translations"),
        (_via_batch, "uses translate_batch"),
        (lambda m, s: len(list(itertools.permutations(s.split()))), nb07.DISTINCT.mistakes[0].hint),  # 120
    ],
)
def test_distinct(fn, said, capsys):
    assert not nb07.check_distinct(fn, False)
    assert said in (out := capsys.readouterr().out) and (fn is not _unanswered or "set" not in out)


def test_distinct_worked_solution_and_the_prediction(capsys):
    runs = {s: SimpleNamespace(model=load_standard_model("learned", s).model) for s in SEEDS}
    space = {"runs": runs, "translate": translate, "ex": nb07, "one_each": False}
    exec(solution_code(NOTEBOOK, "itertools.permutations"), space)  # the worked solution, as the notebook shows it
    assert space["ok"] and "prediction was right" in capsys.readouterr().out
    assert (
        nb07.check_distinct(learner(nb07.DISTINCT.reference), True) and "You predicted True" in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    "guess, said", [(24, "✅"), (22, "✅"), (None, NOT_ANSWERED), (12, "the words alone"), ("2", "a whole number")]
)
def test_orderings_prediction(guess, said, capsys):
    assert nb07.check_orderings(guess, load_standard_model("learned").model) is (said == "✅")
    assert said in (out := capsys.readouterr().out) and (guess is not None or "24 of the 24" not in out)
