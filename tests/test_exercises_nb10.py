"""Notebook 10's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.places import trace_key
from course_utils.core.pretrained import load_minilm
from course_utils.exercises import NOT_ANSWERED, NOT_YET
from course_utils.exercises import nb10 as ex
from course_utils.exercises.framework import learner
from course_utils.trace.pretrained import trace_sentence

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "10_a_real_pretrained_transformer.ipynb"


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return load_minilm()


def right(w):
    return w.diagonal(-1, dim1=-2, dim2=-1).mean(-1)


def loop_solution(w):
    H, T, _ = w.shape
    return [sum(float(w[h, i, i - 1]) for i in range(1, T)) / (T - 1) for h in range(H)]


def _through_head_masses(w):  # the course's own measure does the indexing
    from course_utils.measures.pretrained import head_masses

    return head_masses({"encoder.0.self.weights": w[None]}, torch.tensor([w.shape[-1]]), 1)


def test_detector_right_answers_and_one_line_otherwise(capsys):
    assert ex.PREVIOUS.check(right) and ex.PREVIOUS.check(loop_solution)
    capsys.readouterr()
    for fn, said in [
        (lambda w: _raise(), NOT_ANSWERED),
        (lambda w: 1 / 0, "raised ZeroDivisionError"),
        (lambda w: w.diagonal(-1, dim1=-2, dim2=-1), "has shape"),
        (lambda w: "w", "should return one number per head"),
        (_through_head_masses, "uses course_utils"),
        ("not a function", "pass the function itself"),
        (lambda w: w.diagonal(0, dim1=-2, dim2=-1).mean(-1), ex.PREVIOUS.otherwise),
    ]:
        assert not ex.PREVIOUS.check(fn)
        out = capsys.readouterr().out
        assert said in out and out.count("\n") == 1, out


def _raise():
    raise NotImplementedError


@pytest.mark.parametrize("mistake", ex.PREVIOUS.mistakes, ids=lambda m: m.hint[:30])
def test_detector_names_each_mistake(mistake, capsys):
    assert not ex.PREVIOUS.check(learner(mistake.gives))
    assert NOT_YET in (out := capsys.readouterr().out) and mistake.hint in out


def test_previous_token_head(model, capsys):
    assert ex.previous_token_head(model) == (0, 2)  # layer 0, head 2 puts ~1.0 on the previous token
    assert ex.check_previous_token_head(right, (0, 2), model)
    capsys.readouterr()
    for fn, answer, said in [
        (lambda w: _raise(), None, NOT_ANSWERED + "write the body"),
        (right, None, NOT_ANSWERED + "detector done"),
        (right, (1, 2), "numbered from 0"),
        (right, (7, 0), "0..5"),
        (right, (1, 8), "not the head with the largest"),
        (right, "zero", "a pair (layer, head)"),
    ]:
        assert not ex.check_previous_token_head(fn, answer, model)
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and said in out and "(0, 2)" not in out and "i − 1" not in out, out


def test_worked_solution_of_exercise_2(model, capsys):
    ns = {"torch": torch, "trace_sentence": trace_sentence, "model": model, "ex": ex, "trace_key": trace_key}
    exec(solution_code(NOTEBOOK, "previous_token_mass"), ns)
    assert ns["my_previous_token_head"] == (0, 2) and "✅" in capsys.readouterr().out


DIST = {0: 0.18, 1: 0.27, 2: 0.28, 3: 0.29, 4: 0.28, 5: 0.68}


@pytest.mark.parametrize(
    "answer, said",
    [
        ("layer 5", "✅"),
        (5, "✅"),
        ("5", "✅"),
        (None, NOT_ANSWERED),
        ("layer 0", "the last layer separates most"),
        (0, "the last layer separates most"),
        ("layer 6", "answer one of"),
        (True, "answer one of"),
    ],
)
def test_eat_layer_prediction(answer, said, capsys):
    assert ex.check_eat_layer_prediction(answer, DIST) is (said == "✅")
    out = capsys.readouterr().out
    assert said in out and out.count("\n") == 1 and (answer is not None or "0.68" not in out), out
    assert ex.check_eat_layer_prediction("layer 0", {**DIST, 0: 0.9})  # it follows the measured numbers


def test_worked_solution_of_exercise_1():
    ns = {"ex": ex, "eat_distances": DIST}
    exec(solution_code(NOTEBOOK, "my_prediction"), ns)
    assert ns["my_prediction"] == "layer 5"
