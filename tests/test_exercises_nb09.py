"""Notebook 09's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.places import trace_key
from course_utils.exercises import nb09 as ex
from course_utils.exercises.framework import NOT_ANSWERED, learner
from course_utils.measures.attention_stats import head_statistics
from course_utils.measures.interventions import score_interventions
from course_utils.trace.interventions import ablate_head, uniform_attention

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "09_heads_and_the_query_analogy.ipynb"


def itself_mass(w):  # the measure cell's three functions the worked solution reuses
    return w.diagonal()


def previous_mass(w):
    return w.diagonal(-1)


def aligned_mass_of(w, aligned):
    return torch.stack([w[i, cols].sum() for i, cols in enumerate(aligned)])


def _unanswered(*args):
    raise NotImplementedError


def test_head_detector_worked_solution(shipped_batch, capsys):
    ns = {"batch": shipped_batch, "torch": torch, "trace_key": trace_key, "ex": ex, "itself_mass": itself_mass}
    exec(
        solution_code(NOTEBOOK, "head_detector"),
        ns | {"previous_mass": previous_mass, "aligned_mass_of": aligned_mass_of},
    )
    assert "✅" in capsys.readouterr().out


def _delegates(batch, place, layer, head):
    stats = head_statistics(batch)
    return {m: float(stats.loc[(place, layer, head), m]) for m in ("itself", "previous", "aligned")}


@pytest.mark.parametrize(
    "fn, said",
    [
        (_unanswered, NOT_ANSWERED),
        (_delegates, "uses head_statistics"),
        *((learner(m.gives), m.hint) for m in ex.DETECTOR.mistakes),
    ],
)
def test_head_detector(fn, said, shipped_batch, capsys):
    assert not ex.check_head_detector(fn, shipped_batch)
    assert said in (out := capsys.readouterr().out) and (fn is not _unanswered or "diagonal" not in out)


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


@pytest.fixture(scope="module")
def uniform_table(shipped_model, all_pairs):
    cross_uniform = {f"decoder.{layer}.cross.weights": uniform_attention for layer in range(2)}
    return score_interventions(shipped_model, all_pairs, {ex.PREDICTED_ROW: cross_uniform})


@pytest.mark.parametrize(
    "guess, said",
    [
        (0.5, "✅"),
        (52, "✅"),
        (None, NOT_ANSWERED),
        (0.1, "more than most expect"),
        (0.95, "loses about half"),
        ("most", "a share"),
    ],
)
def test_cross_uniform_prediction(uniform_table, guess, said, capsys):
    assert ex.check_cross_uniform_prediction(guess, uniform_table) is (said == "✅")
    assert said in (out := capsys.readouterr().out) and (guess is not None or "0.5" not in out)


def _zeros(x, name):
    return torch.zeros_like(x)


@pytest.mark.parametrize(
    "patches, said",
    [
        ({"decoder.0.cross.x1": _zeros}, "✅"),
        ({"decoder.0.cross.weights": _zeros}, "✅"),  # zero attention weights give x1 = 0 as well
        ({}, NOT_ANSWERED),
        ({"decoder.0.cross.x1": lambda x1, name: x1}, "unchanged"),
        ({"decoder.0.cross.x1": ablate_head(1)}, "only one head"),
        ({"decoder.1.cross.x1": _zeros}, "not the output without"),
        ({"decoder.0.cross.nothing": _zeros}, "patches that run"),
    ],
)
def test_remove_cross_layer(patches, said, shipped_model, all_pairs, capsys):
    assert ex.check_remove_cross_layer(patches, shipped_model, all_pairs) is (said == "✅")
    assert said in (out := capsys.readouterr().out) and (said == "✅" or "decoder.0.cross.x1" not in out)
    assert all(not m._forward_hooks for m in shipped_model.modules())  # no hook left behind
