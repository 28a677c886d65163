"""Notebook 10's checkers accept the worked solutions and reject the typical wrong answers with their hints."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_cells import course_imports, solution_code  # tests/ is on sys.path under pytest

from course_utils.core.places import trace_key
from course_utils.core.pretrained import load_minilm
from course_utils.exercises import NOT_ANSWERED
from course_utils.exercises import nb10 as ex

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


def unanswered(w):
    raise NotImplementedError


# ---- exercise 2: the previous-token detector and head


def test_detector_accepts_right_answers(capsys):
    assert ex.check_previous_token_mass(right)
    assert ex.check_previous_token_mass(loop_solution)
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (lambda w: w[:, torch.arange(w.shape[-1]), torch.arange(w.shape[-1]) - 1].mean(-1), "wraps round"),
        (lambda w: w.diagonal(1, dim1=-2, dim2=-1).mean(-1), "NEXT token"),
        (lambda w: w.diagonal(-1, dim1=-2, dim2=-1).sum(-1), "summed"),
        (lambda w: w.diagonal(-1, dim1=-2, dim2=-1).sum(-1) / w.shape[-1], "divided by T"),
        (lambda w: w.transpose(-1, -2).diagonal(-1, dim1=-2, dim2=-1).mean(-1), "rows and columns swapped"),
        (lambda w: w.diagonal(-1, dim1=-2, dim2=-1), "one number per head"),
        (lambda w: w.diagonal(0, dim1=-2, dim2=-1).mean(-1), "not the mean weight on the previous key"),
        (lambda w: 1 / 0, "ZeroDivisionError"),
        ("not a function", "must be a function"),
    ],
)
def test_detector_rejects_typical_mistakes(fn, hint, capsys):
    assert not ex.check_previous_token_mass(fn)
    out = capsys.readouterr().out
    assert "❌" in out and hint in out, out


def test_unanswered_detector_gives_nothing_away(capsys):
    assert not ex.check_previous_token_head(unanswered, None)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED) and "diagonal" not in out and "i − 1" not in out
    assert "(0, 2)" not in out and "head 2" not in out  # the answer is not in the message


def test_previous_token_head_answer(model, capsys):
    layer, head = ex.previous_token_head(model)
    assert (layer, head) == (0, 2)  # measured: layer 0, head 2 puts ~1.0 of every query's weight on the previous token
    assert ex.check_previous_token_head(right, (layer, head), model)
    capsys.readouterr()
    assert not ex.check_previous_token_head(right, None, model)  # detector right, head not named yet
    assert capsys.readouterr().out.splitlines()[-1].startswith(NOT_ANSWERED + "detector done")
    assert not ex.check_previous_token_head(right, (layer + 1, head), model)
    assert "numbered from 0" in capsys.readouterr().out
    assert not ex.check_previous_token_head(right, (1, 8), model)  # the next-token head
    assert not ex.check_previous_token_head(right, (7, 0), model)
    assert "0..5" in capsys.readouterr().out.splitlines()[-1]
    assert not ex.check_previous_token_head(right, "zero", model)


def test_worked_solution_of_exercise_2(model, capsys):
    ns = {"torch": torch, **course_imports(NOTEBOOK), "model": model, "ex": ex, "trace_key": trace_key}
    exec(solution_code(NOTEBOOK, "previous_token_mass"), ns)
    assert ns["my_previous_token_head"] == (0, 2)
    assert "✅" in capsys.readouterr().out


# ---- exercise 1: predict which layer separates eat more

DIST = {0: 0.18, 1: 0.27, 2: 0.28, 3: 0.29, 4: 0.28, 5: 0.68}


@pytest.mark.parametrize("answer", ["layer 5", "Layer 5", 5, "5"])
def test_prediction_accepted(answer, capsys):
    assert ex.check_eat_layer_prediction(answer, DIST)
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize(
    "answer, hint",
    [
        (None, NOT_ANSWERED),
        ("layer 0", "the last layer separates most"),
        (0, "the last layer separates most"),
        ("layer 6", "'layer 0' or 'layer 5'"),
        ("both", "'layer 0' or 'layer 5'"),
        (True, "'layer 0' or 'layer 5'"),
    ],
)
def test_prediction_rejected(answer, hint, capsys):
    assert not ex.check_eat_layer_prediction(answer, DIST)
    out = capsys.readouterr().out
    assert hint in out, out
    if answer is None:
        assert "0.68" not in out and "0.18" not in out  # the unanswered message gives no number away


def test_prediction_follows_the_measured_numbers():
    flipped = {**DIST, 0: 0.9}
    assert ex.check_eat_layer_prediction("layer 0", flipped)
    assert not ex.check_eat_layer_prediction("layer 5", flipped)


def test_worked_solution_of_exercise_1(capsys):
    ns = {"ex": ex, "eat_distances": DIST}
    exec(solution_code(NOTEBOOK, "my_prediction"), ns)
    assert ns["my_prediction"] == "layer 5"


# ---- shortcuts and wrong types


def _through_head_masses(w):  # the course's own measure does the indexing
    from course_utils.measures.pretrained import head_masses

    H, T, _ = w.shape
    table = head_masses({"encoder.0.self.weights": w[None]}, torch.tensor([T]), 1)
    return torch.tensor(table["previous"].to_numpy())


def test_detector_refuses_the_course_helpers(capsys):
    from course_utils.measures.pretrained import head_masses

    for shortcut, name in [(head_masses, "head_masses"), (_through_head_masses, "head_masses")]:
        assert not ex.check_previous_token_mass(shortcut)
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and out.startswith("❌") and name in out and "course helper" in out, out
    assert ex.check_previous_token_mass(right)  # the honest version still passes
    assert capsys.readouterr().out.startswith("✅")


@pytest.mark.parametrize("wrong", [3, "w.diagonal(-1)", [0.1, 0.2], {"previous": 0.3}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    distances = {0: 0.2, 5: 0.6}
    for check in (
        lambda: ex.check_previous_token_mass(wrong),
        lambda: ex.check_previous_token_head(right, wrong),
        lambda: ex.check_eat_layer_prediction(wrong, distances),
    ):
        assert check() is False
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and out.startswith("❌"), out
