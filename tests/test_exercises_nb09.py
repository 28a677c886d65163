"""Notebook 09's checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import pytest
import torch

from course_utils import heads, interventions
from course_utils.exercises import nb09 as ex
from course_utils.tracing import ablate_head


@pytest.fixture(scope="module")
def stats(shipped_batch):
    return heads.head_statistics(shipped_batch)


# ---- exercise 1: the head that aligns least (or most)


def test_alignment_head_solution(stats, capsys):
    assert ex.check_alignment_head(stats.loc["cross", "aligned"].idxmin(), stats, which="least")
    assert ex.check_alignment_head((0, 0), stats, which="least")  # the notebook's worked solution (seed 0)
    assert ex.check_alignment_head(stats.loc["cross", "aligned"].idxmax(), stats)  # which="most", the default
    assert "✅" in capsys.readouterr().out


@pytest.mark.parametrize("wrong", [None, (0, 1), (1, 0), (1, 1), (2, 0), "head one", [1]])
def test_alignment_head_rejects(stats, wrong, capsys):
    assert not ex.check_alignment_head(wrong, stats, which="least")
    assert "❌" in capsys.readouterr().out


def test_alignment_head_most_rejects_the_least(stats, capsys):
    assert not ex.check_alignment_head(stats.loc["cross", "aligned"].idxmin(), stats, which="most")
    assert "largest" in capsys.readouterr().out
    with pytest.raises(ValueError):
        ex.check_alignment_head((0, 0), stats, which="best")


# ---- exercise 2: q as a weighted sum of the bank's rows


def _loop(x, bank, bias):
    q = bias.clone()
    for i in range(bank.shape[0]):
        q = q + x[i] * bank[i]
    return q


def test_q_from_bank_solutions(shipped_model):
    assert ex.check_q_from_bank(_loop, shipped_model)
    assert ex.check_q_from_bank(lambda x, bank, bias: torch.einsum("i,id->d", x, bank) + bias, shipped_model)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda x, bank, bias: None, "returns None"),
        (lambda x, bank, bias: x @ bank, "bias b is missing"),
        (
            lambda x, bank, bias: sum(x[j] * bank[j] for j in range(bank.shape[1])) + bias,
            "differs",
        ),  # only 32 of 64 rows
        (lambda x, bank, bias: x @ bank.T + bias, "raised"),  # (64,) @ (32, 64): shape error
        (lambda x, bank, bias: (x @ bank + bias)[:5], "shape"),
    ],
)
def test_q_from_bank_rejects(shipped_model, wrong, hint, capsys):
    assert not ex.check_q_from_bank(wrong, shipped_model)
    assert hint in capsys.readouterr().out


# ---- exercise 3: remove a whole cross-attention layer


def test_remove_cross_layer_solutions(shipped_model, all_pairs, capsys):
    assert ex.check_remove_cross_layer(
        {"decoder.0.cross.x1": lambda x1, name: torch.zeros_like(x1)}, shipped_model, all_pairs
    )
    assert "✅" in capsys.readouterr().out
    # zero attention weights give x1 = 0 as well
    assert ex.check_remove_cross_layer(
        {"decoder.0.cross.weights": lambda w, name: torch.zeros_like(w)}, shipped_model, all_pairs
    )


@pytest.mark.parametrize(
    "wrong, hint",
    [
        ({}, "unchanged"),
        ({"decoder.0.cross.x1": ablate_head(0)}, "only one head"),
        ({"decoder.0.cross.x1": ablate_head(1)}, "only one head"),
        ({"decoder.1.cross.x1": lambda x1, name: torch.zeros_like(x1)}, "differs"),
        ({"decoder.*.cross.x1": lambda x1, name: torch.zeros_like(x1)}, "differs"),
        ({"decoder.0.cross.nothing": lambda x1, name: x1}, "raised"),
        ("decoder.0.cross.x1", "dict"),
    ],
)
def test_remove_cross_layer_rejects(shipped_model, all_pairs, wrong, hint, capsys):
    assert not ex.check_remove_cross_layer(wrong, shipped_model, all_pairs)
    assert hint in capsys.readouterr().out


def test_checkers_leave_no_hooks(shipped_model, all_pairs):
    ex.check_remove_cross_layer({"decoder.0.cross.x1": lambda x1, name: 1 / 0}, shipped_model, all_pairs)
    ex.check_q_from_bank(_loop, shipped_model)
    assert all(not m._forward_hooks for m in shipped_model.modules())


def test_solution_note_of_exercise_3(shipped_model, all_pairs):
    """The worked solution says: without cross-attention layer 0, 223 of the 240 training sentences (92.9 %)
    come out right, fewer than without either of its heads alone (0.996 and 0.975)."""
    both = interventions.accuracy(shipped_model, all_pairs, ex.reference_patches(0))["train"]
    one = [
        interventions.accuracy(shipped_model, all_pairs, {"decoder.0.cross.x1": ablate_head(h)})["train"]
        for h in range(2)
    ]
    assert both == 223 / 240
    assert one == [239 / 240, 234 / 240]  # shown as 0.996 and 0.975 in the notebook's table
    assert both < min(one)
