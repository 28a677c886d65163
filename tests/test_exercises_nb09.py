"""Notebook 09's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.exercises import nb09 as ex
from course_utils.exercises.framework import NOT_ANSWERED, learner

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "09_heads_and_the_query_analogy.ipynb"


def _unanswered(*args):
    raise NotImplementedError


@pytest.mark.parametrize(
    "guess, said",
    [
        ("none change", "✅"),
        ("None-Change", "✅"),
        (None, NOT_ANSWERED),
        ("?", NOT_ANSWERED),
        ("all change", "no score changes"),
        ("some change", "turns every query and every key alike"),
        ("maybe", "answer one of"),
        (3, "answer one of"),
    ],
)
def test_rotation_guess(guess, said, capsys):
    assert ex.check_rotation_guess(guess) is (said == "✅")
    out = capsys.readouterr().out
    assert said in out and (guess is not None or "R·Rᵀ" not in out)  # unanswered: no answer given away


@pytest.mark.parametrize(
    "guess, said",
    [
        ("equal", "✅"),
        (None, NOT_ANSWERED),
        ("two matrices", "Count again"),
        ("one table", "Count again"),
        (4096, "answer one of"),
    ],
)
def test_count_guess(guess, said, shipped_model, capsys):
    assert ex.check_count_guess(guess, shipped_model.cfg) is (said == "✅")
    out = capsys.readouterr().out
    assert said in out and (guess is not None or "4096" not in out)
    assert said != "✅" or "2·64·32 = 4096" in out and "table 4096" in out


def test_count_guess_follows_the_sizes(capsys):
    class Cfg:  # one head of full width: the pair costs twice the table
        d_model, n_heads = 64, 1

    assert ex.check_count_guess("two matrices", Cfg()) and "8192" in capsys.readouterr().out
    assert not ex.check_count_guess("equal", Cfg())


def test_ov_map_worked_solution(shipped_model, capsys):
    ns = {"torch": torch, "model": shipped_model, "ex": ex}
    exec(solution_code(NOTEBOOK, "def ov_map"), ns)
    assert ex.check_ov_map(ns["ov_map"], shipped_model, "decoder.1.cross") and "✅" in capsys.readouterr().out


def _via_head_banks(attn, head):
    from course_utils.measures.weight_maps import head_banks

    return head_banks(attn.w_v, attn.n_heads)[head] @ attn.w_o.weight[:, 32 * head : 32 * head + 32].T


@pytest.mark.parametrize(
    "fn, said",
    [
        (_unanswered, NOT_ANSWERED),
        (_via_head_banks, "uses course_utils"),
        *((learner(m.gives), m.hint) for m in ex.OV_MISTAKES),
    ],
)
def test_ov_map(fn, said, shipped_model, capsys):
    assert not ex.check_ov_map(fn, shipped_model)
    assert said in (out := capsys.readouterr().out) and (fn is not _unanswered or "W^O" not in out)
