"""Notebook 07's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

import itertools
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.model import translate
from course_utils.exercises import NOT_ANSWERED, NOT_YET, nb07
from course_utils.exercises.framework import learner, uses
from course_utils.measures.probing import distinct_translations
from course_utils.training.zoo import SEEDS, load_standard_model

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "07_word_order_and_position.ipynb"


def _unanswered(*args):
    raise NotImplementedError


def test_moved_weights(capsys):
    space = {"check_moved_weights": nb07.check_moved_weights, "np": np}
    exec(solution_code(NOTEBOOK, "def moved"), space)  # the worked solution
    assert space["ok"] and nb07.check_moved_weights(
        lambda W, p: np.einsum("ij,hjk,lk->hil", np.eye(4)[p], W, np.eye(4)[p])
    )
    capsys.readouterr()
    for fn, said in [
        (_unanswered, NOT_ANSWERED),
        (lambda W, p: None, NOT_ANSWERED),
        (lambda W, p: W[0][p][:, p], "has shape"),
        (lambda W, p: W[:, p][:, :, p] + 0.1, nb07.MOVED_WEIGHTS.otherwise),
        (lambda W, p: 1 / 0, "raised ZeroDivisionError"),
    ]:
        assert not nb07.check_moved_weights(fn)
        out = capsys.readouterr().out
        assert said in out and out.count("\n") == 1 and (said != NOT_ANSWERED or "column" not in out), out


@pytest.mark.parametrize("mistake", nb07.MOVED_WEIGHTS.mistakes, ids=lambda m: m.hint[:30])
def test_moved_weights_names_each_mistake(mistake, capsys):
    assert not nb07.check_moved_weights(mistake.gives)
    assert NOT_YET + mistake.hint in capsys.readouterr().out


def test_symmetry(capsys):
    space = {"check_symmetry": nb07.check_symmetry}
    exec(solution_code(NOTEBOOK, "answers = {"), space)
    assert space["ok"] and nb07.check_symmetry({k: v.upper() for k, v in nb07.SYMMETRY.items()})
    capsys.readouterr()
    for wrong, said in [
        ({k: None for k in nb07.SYMMETRY}, NOT_ANSWERED),  # the committed, unanswered state
        (nb07.SYMMETRY_SPEC.mistakes[0].gives, nb07.SYMMETRY_SPEC.mistakes[0].hint),  # the blog's "invariant"
        ({**nb07.SYMMETRY, "encoder output, learned PE": "equivariant"}, "not all five right"),
        ({**nb07.SYMMETRY, "encoder output, learned PE": "moved"}, "each 'invariant'"),
        ([], "exactly the keys"),
    ]:
        assert not nb07.check_symmetry(wrong)
        out = capsys.readouterr().out
        assert said in out and out.count("\n") == 1 and (said != NOT_ANSWERED or "Equivariant:" not in out), out


def _honest(model, sentence):  # the worked solution's loop, written out
    return len({" ".join(translate(model, list(p))) for p in itertools.permutations(sentence.split())})


def _honest_with_a_shortcut_like_name(model, sentence):  # "distinct" in a name is not the helper
    distinct = set()
    for order in itertools.permutations(sentence.split()):
        distinct.add(tuple(translate(model, list(order))))
    return len(distinct)


def _via_alias(model, sentence):
    from course_utils.measures.probing import distinct_translations as count

    return len(count(model, sentence))


def _via_batch(model, sentence):
    from course_utils.core.model import translate_batch

    return len({" ".join(t) for t in translate_batch(model, list(itertools.permutations(sentence.split())))})


def _via_own_helper(model, sentence):
    return _helper(model, sentence)


def _helper(model, sentence):  # a learner's own helper function that delegates
    count = distinct_translations
    return len(count(model, sentence))


@pytest.mark.parametrize(
    "fn, said",
    [
        (distinct_translations, "uses distinct_translations"),
        (nb07.distinct_counts, "uses distinct_counts"),
        (_via_alias, "uses distinct_translations"),
        (lambda m, s: nb07.distinct_counts(s)[0], "uses distinct_counts"),
        (_via_batch, "uses translate_batch"),
        (_via_own_helper, "uses distinct_translations (in _helper)"),
        (None, NOT_ANSWERED),
        (_unanswered, NOT_ANSWERED),
        (lambda m, s: None, NOT_ANSWERED),
        (lambda m, s: 1, "(seed 3): translate every ordering"),  # "no model uses order"
        (lambda m, s: True, "one whole number"),
        (lambda m, s: {0: 1}, "one whole number"),
        (lambda m, s: 1 / 0, "raised ZeroDivisionError"),
        (3, "pass the function itself"),
    ],
)
def test_distinct(fn, said, capsys):
    assert nb07.check_distinct(fn, False) is False
    out = capsys.readouterr().out
    assert said in out and out.count("\n") == 1 and "was right" not in out, out
    assert fn is not None or "set" not in out  # the unanswered line gives nothing away


@pytest.mark.parametrize("mistake", nb07.DISTINCT.mistakes, ids=lambda m: m.hint[:30])
def test_distinct_names_each_mistake(mistake, capsys):
    assert not nb07.check_distinct(lambda m, s: len(list(itertools.permutations(s.split()))))  # 120 orderings
    assert mistake.hint in capsys.readouterr().out


def test_distinct_accepts_honest_solutions_and_compares_the_prediction(capsys):
    runs = {s: SimpleNamespace(model=load_standard_model("learned", s).model) for s in SEEDS}
    space = {"runs": runs, "translate": translate, "check_distinct": nb07.check_distinct, "one_each": False}
    exec(solution_code(NOTEBOOK, "itertools.permutations"), space)  # the worked solution, as the notebook shows it
    out = capsys.readouterr().out
    assert space["ok"] and "one_each = False was right" in out and str(nb07.distinct_counts()) in out
    truth = nb07.distinct_counts()
    assert 1 in truth.values() and max(truth.values()) > 1  # some seeds ignore order here, some do not
    fast = learner(nb07.DISTINCT.reference)  # the counts, cached
    assert nb07.check_distinct(fast, True) and "was not right" in capsys.readouterr().out
    assert nb07.check_distinct(fast, "no") and "True or False" in capsys.readouterr().out
    assert uses(_honest_with_a_shortcut_like_name, nb07.DISTINCT.forbid) is None and uses(_honest, ()) is None


@pytest.mark.parametrize(
    "guess, said",
    [(24, "✅"), (22, "✅"), (None, NOT_ANSWERED), (12, "on this corpus"), (30, "0 to 24"), ("2", "whole number")],
)
def test_orderings_prediction(guess, said, capsys):
    assert nb07.check_orderings(guess, load_standard_model("learned").model) is (said == "✅")
    out = capsys.readouterr().out
    assert said in out and (guess is not None or "24 of the 24" not in out)
    assert not nb07.check_orderings(24, "model") and "a course model" in capsys.readouterr().out
