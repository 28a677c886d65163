"""Notebook 04's exercise specs: right answers pass, each listed mistake gets its hint, unanswered gets ✍."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.attention import MultiHeadAttention, scaled_dot_product_attention
from course_utils.exercises import nb04
from course_utils.exercises.framework import NOT_ANSWERED, NOT_YET, learner


def _solution(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the worked solution in the notebook
    B, Tq, d_model = x_q.shape
    dh = d_model // n_heads

    def split(t):  # (B, T, d_model) -> (B, H, T, dh)
        return t.view(B, t.shape[1], n_heads, dh).transpose(1, 2)

    q, k, v = split(W_q(x_q)), split(W_k(x_kv)), split(W_v(x_kv))
    scores = q @ k.transpose(-2, -1) / math.sqrt(dh)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return W_o((torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, Tq, d_model))


def _course_attention(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the course's function, per head
    q, k, v = (t.view(*t.shape[:2], n_heads, -1).transpose(1, 2) for t in (W_q(x_q), W_k(x_kv), W_v(x_kv)))
    return W_o(scaled_dot_product_attention(q, k, v, mask)[0].transpose(1, 2).reshape(x_q.shape))


def test_head_shapes(capsys):
    assert nb04.check_head_shapes(*nb04.SHAPES) and nb04.check_head_shapes([3, 16, 7, 4], (3, 16, 7, 7), (3, 7, 64))
    wrong = [((3, 7, 16, 4), *nb04.SHAPES[1:]), ((3, 16, 7, 8), *nb04.SHAPES[1:])]
    wrong += [(nb04.SHAPES[0], (3, 7, 7), nb04.SHAPES[2])]
    for answer, mistake in zip(wrong, nb04.HEAD_SHAPES.mistakes, strict=True):
        assert not nb04.check_head_shapes(*answer) and mistake.hint in capsys.readouterr().out
    assert not nb04.check_head_shapes(*nb04.SHAPES[:2], (3, 7, 4)) and "concat" in capsys.readouterr().out


def test_predictions(capsys):
    why = "one row of weights sums to 1: half of each word."
    assert nb04.check_prediction(False, False, "one_head_keeps_both", why) and capsys.readouterr().out == f"✅ {why}\n"
    assert nb04.check_prediction(np.True_, 1, "one_head_translates_worse", why)  # numpy's bool, a truthy truth
    capsys.readouterr()
    assert not nb04.check_prediction(True, False, "one_head_keeps_both", why)
    assert capsys.readouterr().out == f"{NOT_YET}{why}\n"  # the same explanation, marked as not right
    assert not nb04.check_prediction("no", False, "x", why) and "True or False" in capsys.readouterr().out


def test_multi_head_accepts_right_answers_and_refuses_ready_made_attention(capsys):
    assert nb04.check_multi_head(_solution) and nb04.check_multi_head(lambda *a: (_solution(*a), None))
    assert nb04.check_multi_head(learner(nb04.mha_steps))  # the mistakes' recipe, with no mistake
    for fn in (nb04.MULTI_HEAD.reference, _course_attention, torch.nn.functional.multi_head_attention_forward):
        assert not nb04.check_multi_head(fn) and "write the steps yourself" in capsys.readouterr().out


@pytest.mark.parametrize("mistake", nb04.MULTI_HEAD.mistakes[:-1], ids=lambda m: m.hint[:40])
def test_multi_head_names_each_mistake(mistake, capsys):
    assert not nb04.check_multi_head(learner(mistake.gives))
    assert mistake.hint in capsys.readouterr().out


def test_multi_head_nan_cross_attention_unanswered_and_errors(capsys):
    assert not nb04.check_multi_head(lambda *a: _solution(*a[:7], None if a[7] is None else ~a[7]))  # −∞ where True
    assert nb04.MULTI_HEAD.mistakes[-1].hint in capsys.readouterr().out
    assert not nb04.check_multi_head(lambda x_q, x_kv, *a: _solution(x_q, x_q, *a))  # keys from x_q
    assert "cross-attention (Tq = 4, Tk = 6)" in capsys.readouterr().out
    assert not nb04.check_multi_head(lambda *a: None) and capsys.readouterr().out.startswith(NOT_ANSWERED)
    assert not nb04.check_multi_head(lambda *a: 1 / 0) and "ZeroDivisionError" in capsys.readouterr().out


def test_multi_head_keeps_the_learners_random_state():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    nb04.check_multi_head(_solution)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_mha_parameters(capsys):
    n = sum(p.numel() for p in MultiHeadAttention(64, 8).parameters())
    assert nb04.check_mha_parameters(n, False) and nb04.check_mha_parameters(n, np.False_)
    for answer, mistake in zip([(4 * 64 * 64, False), (8 * 64 * 64, True)], nb04.MHA_PARAMETERS.mistakes, strict=True):
        assert not nb04.check_mha_parameters(*answer) and mistake.hint in capsys.readouterr().out
    assert not nb04.check_mha_parameters(n, True) and nb04.MHA_PARAMETERS.otherwise in capsys.readouterr().out


def test_unanswered_gives_one_line_each_and_nothing_away(capsys):
    assert not nb04.check_head_shapes(None, None, None) and not nb04.check_mha_parameters(None, None)
    assert not nb04.check_prediction(None, False, "one_head_keeps_both", "one row of weights sums to 1")
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 3 and "one_head_keeps_both to True or False" in out
    assert "16640" not in out and "(B, H" not in out and "sums to 1" not in out


@pytest.mark.parametrize("wrong", [3, "X @ W", {"w": 1}])
def test_a_wrong_type_gets_one_line(wrong, capsys):
    assert not nb04.check_head_shapes(wrong, wrong, wrong) and not nb04.check_mha_parameters(16640, wrong)
    assert not nb04.check_multi_head(lambda *a: wrong)
    out = capsys.readouterr().out
    assert out.count(NOT_YET) == len(out.splitlines()) == 3, out


def test_notebook_solution_passes():
    namespace = {"torch": torch, "math": math, "ex": nb04}
    exec(solution_code("04_multi_head_attention.ipynb", "def my_multi_head"), namespace)
    assert nb04.check_multi_head(namespace["my_multi_head"])
