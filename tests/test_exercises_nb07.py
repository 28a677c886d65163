"""Notebook 07's checkers accept the worked solutions and reject typical wrong answers."""

import itertools
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


def _honest(model, sentence):
    """The worked solution's loop, written out."""
    return len({" ".join(translate(model, list(p))) for p in itertools.permutations(sentence.split())})


def _honest_with_a_shortcut_like_name(model, sentence):  # "distinct" in a name is not the helper
    distinct = set()
    for order in itertools.permutations(sentence.split()):
        distinct.add(tuple(translate(model, list(order))))
    return len(distinct)


def _via_library(model, sentence):
    return len(distinct_translations(model, sentence))


def _via_alias(model, sentence):
    from course_utils.measures.probing import distinct_translations as count

    return len(count(model, sentence))


def _via_answer_key(model, sentence):
    return nb07.distinct_counts(sentence)[0]


def _via_batch(model, sentence):
    from course_utils.core.model import translate_batch

    return len({" ".join(t) for t in translate_batch(model, list(itertools.permutations(sentence.split())))})


def _helper(model, sentence):  # a learner's own helper function that delegates
    return len(distinct_translations(model, sentence))


def _via_own_helper(model, sentence):
    return _helper(model, sentence)


@pytest.mark.parametrize(
    "shortcut, name",
    [
        (distinct_translations, "distinct_translations"),
        (nb07.distinct_counts, "distinct_counts"),
        (_via_library, "distinct_translations"),
        (_via_alias, "count"),
        (_via_answer_key, "nb07.distinct_counts"),
        (_via_batch, "translate_batch"),
        (_via_own_helper, "distinct_translations (in _helper)"),
    ],
)
def test_distinct_refuses_the_course_helpers(shortcut, name, capsys):
    """Exercise 3 asks for the loop written out: a function that is, or calls, the course's counter (by any name,
    or through a helper of the learner's), its answer key or its batch translator is refused, in one line."""
    assert nb07.check_distinct(shortcut, False) is False
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith("❌") and f"uses the course's {name}" in out, out
    assert "itertools.permutations" in out


def test_distinct_still_accepts_honest_solutions(capsys):
    assert nb07.check_distinct(_honest, False) and "✅" in capsys.readouterr().out
    assert nb07.check_distinct(_honest_with_a_shortcut_like_name, False) and "✅" in capsys.readouterr().out


def test_distinct_accepts_the_worked_solution_and_rejects_wrong_counts(capsys):
    assert nb07.SEEDS == SEEDS
    runs = {s: SimpleNamespace(model=load_standard_model("learned", s).model) for s in SEEDS}
    space = {"runs": runs, "translate": translate, "check_distinct": nb07.check_distinct, "one_each": False}
    exec(solution_code(NOTEBOOK, "itertools.permutations"), space)  # the worked solution, as the notebook shows it
    assert space["ok"]
    out = capsys.readouterr().out
    assert "✅" in out and "one_each = False was right" in out  # seed 3 gives two translations
    truth = {s: len(distinct_translations(runs[s].model, nb07.FIVE_WORDS)) for s in SEEDS}
    assert truth == nb07.distinct_counts() and str(truth) in out
    assert 1 in truth.values() and max(truth.values()) > 1  # some seeds ignore order here, some do not
    assert nb07.check_distinct(_honest, True) and "one_each = True was not right" in capsys.readouterr().out
    assert nb07.check_distinct(_honest, "no") and "True or False" in capsys.readouterr().out
    assert not nb07.check_distinct(lambda m, s: 1, False)  # "no model uses order"
    assert "was right" not in capsys.readouterr().out  # the prediction is judged only once the counts are right
    assert not nb07.check_distinct(lambda m, s: len(list(itertools.permutations(s.split()))))  # the orderings
    assert "120 is the number of orderings" in capsys.readouterr().out
    assert not nb07.check_distinct(lambda m, s: True) and "whole number" in capsys.readouterr().out
    assert not nb07.check_distinct(lambda m, s: {0: 1}) and "whole number" in capsys.readouterr().out
    assert not nb07.check_distinct(lambda m, s: 1 / 0) and "raised ZeroDivisionError" in capsys.readouterr().out


def _unanswered_count(model, sentence):
    raise NotImplementedError


@pytest.mark.parametrize("unanswered", [None, _unanswered_count, lambda m, s: None])
def test_distinct_unanswered_gives_nothing_away(unanswered, capsys):
    assert not nb07.check_distinct(unanswered, None)  # the committed, unanswered state
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED) and "set" not in out and "seed(s)" not in out


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


# ---- every checker, given a wrong type


@pytest.mark.parametrize("wrong", [3, "we can eat apple", [1, 3, 0, 2], {"seed": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    checks = [
        lambda: nb07.check_moved_weights(wrong),
        lambda: nb07.check_symmetry(wrong),
        lambda: nb07.check_distinct(wrong, wrong),
        lambda: nb07.check_orderings(wrong if not isinstance(wrong, int) else 30, wrong),
        lambda: nb07.check_orderings(24, wrong),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out
