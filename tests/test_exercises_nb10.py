"""Notebook 10's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.places import trace_key
from course_utils.core.pretrained import load_minilm
from course_utils.exercises import nb10 as ex
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.trace.pretrained import trace_sentence

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "10_a_real_pretrained_transformer.ipynb"


@pytest.fixture(scope="module")
def model():
    torch.set_num_threads(1)
    return load_minilm()


def _unanswered(w):
    raise NotImplementedError


def _through_head_masses(w):  # the course's own measure does the indexing
    from course_utils.measures.pretrained import head_masses

    return head_masses({"encoder.0.self.weights": w[None]}, torch.tensor([w.shape[-1]]), 1)


@pytest.mark.parametrize(
    "fn, said",
    [
        (_unanswered, NOT_ANSWERED),
        (_through_head_masses, "uses course_utils"),
        *((learner(m.gives), m.hint) for m in ex.PREVIOUS.mistakes),
    ],
)
def test_detector(fn, said, capsys):
    assert not ex.PREVIOUS.check(fn) and said in capsys.readouterr().out


def test_worked_solution_of_exercise_2(model, capsys):
    ns = {"torch": torch, "trace_sentence": trace_sentence, "model": model, "ex": ex, "trace_key": trace_key}
    exec(solution_code(NOTEBOOK, "previous_token_mass"), ns)
    assert ns["my_previous_token_head"] == (0, 2) and "✅" in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer, said",
    [
        (None, NOT_ANSWERED + "detector done"),
        ((1, 2), "numbered from 0"),
        ((7, 0), "0..5"),
        ((1, 8), "not the head with the largest"),
    ],
)
def test_previous_token_head(answer, said, model, capsys):
    assert not ex.check_previous_token_head(learner(ex.PREVIOUS.reference), answer, model)
    assert said in (out := capsys.readouterr().out) and "(0, 2)" not in out and "i − 1" not in out, out


DIST = {0: 0.18, 1: 0.27, 2: 0.28, 3: 0.29, 4: 0.28, 5: 0.68}


@pytest.mark.parametrize(
    "answer, said", [("layer 5", "✅"), (5, "✅"), (None, NOT_ANSWERED), ("layer 0", "the last layer separates most")]
)
def test_eat_layer_prediction(answer, said, capsys):
    assert ex.check_eat_layer_prediction(answer, DIST) is (said == "✅")
    assert said in (out := capsys.readouterr().out) and (answer is not None or "0.68" not in out), out
    assert ex.check_eat_layer_prediction("layer 0", {**DIST, 0: 0.9})  # it follows the measured numbers


def test_worked_solution_of_exercise_1():
    ns = {"ex": ex, "eat_distances": DIST}
    exec(solution_code(NOTEBOOK, "my_prediction"), ns)
    assert ns["my_prediction"] == "layer 5"
