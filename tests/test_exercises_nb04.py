"""Notebook 04 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from notebook_cells import solution_code  # tests/ is on sys.path under pytest

from course_utils.core.attention import MultiHeadAttention
from course_utils.exercises import NOT_ANSWERED, nb04
from course_utils.exercises.framework import learner


def test_head_shapes():
    # B = 3 sentences, T = 7 words, H = 16 heads of dh = 4
    assert nb04.check_head_shapes((3, 16, 7, 4), (3, 16, 7, 7), (3, 7, 64))
    assert nb04.check_head_shapes([3, 16, 7, 4], (3, 16, 7, 7), (3, 7, 64))  # lists are fine
    assert not nb04.check_head_shapes((3, 7, 16, 4), (3, 16, 7, 7), (3, 7, 64))  # forgot the transpose
    assert not nb04.check_head_shapes((3, 16, 7, 8), (3, 16, 7, 7), (3, 7, 64))  # dh of 8 heads (the table's)
    assert not nb04.check_head_shapes((3, 16, 7, 4), (3, 7, 7), (3, 7, 64))  # scores without the head axis
    assert not nb04.check_head_shapes((3, 16, 7, 4), (3, 16, 7, 4), (3, 7, 64))  # scores T x dh, not T x T
    assert not nb04.check_head_shapes((3, 16, 7, 4), (3, 16, 7, 7), (3, 7, 4))  # concat of one head
    assert not nb04.check_head_shapes((2, 8, 5, 8), (2, 8, 5, 5), (2, 5, 64))  # the old B = 2, H = 8 case
    assert not nb04.check_head_shapes(None, (3, 16, 7, 7), (3, 7, 64))
    assert not nb04.check_head_shapes(None, None, None)  # the notebook's unanswered state


def test_head_shapes_names_the_view_step(capsys):
    # q after the view, (B, T, H, dh), is not the asked shape: the checker says which step it is
    assert not nb04.check_head_shapes((3, 7, 16, 4), (3, 16, 7, 7), (3, 7, 64))
    out = capsys.readouterr().out
    assert "after the view, before the transpose" in out and "(3, 16, 7, 4)" not in out


def test_head_shapes_unanswered_gives_nothing_away(capsys):
    nb04.check_head_shapes(None, None, None)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED + "fill in") and "(B, H, T, dh)" not in out


def _solution(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the worked solution in the notebook
    B, Tq, d_model = x_q.shape
    dh = d_model // n_heads

    def split(t):  # (B, T, d_model) -> (B, H, T, dh)
        return t.view(B, t.shape[1], n_heads, dh).transpose(1, 2)

    q, k, v = split(W_q(x_q)), split(W_k(x_kv)), split(W_v(x_kv))
    scores = q @ k.transpose(-2, -1) / math.sqrt(dh)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    concat = (weights @ v).transpose(1, 2).reshape(B, Tq, d_model)
    return W_o(concat)


def _section_1_copy(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    """Section 1's walk-through wrapped in a function as it stands: self-attention, no mask."""
    B, T, d_model = x_q.shape
    H, dh = n_heads, d_model // n_heads
    q = W_q(x_q).view(B, T, H, dh).transpose(1, 2)
    k = W_k(x_q).view(B, T, H, dh).transpose(1, 2)
    v = W_v(x_q).view(B, T, H, dh).transpose(1, 2)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
    return W_o((weights @ v).transpose(1, 2).reshape(B, T, H * dh))


def _mistake(kind):
    """A learner's multi-head forward with one typical mistake."""

    def fn(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
        B, Tq, d = x_q.shape
        h = 1 if kind == "no split" else n_heads
        dh = d // h
        q, k, v = W_q(x_q), W_k(x_kv), W_v(x_kv)
        if kind == "weight not transposed":
            q, k, v = (t @ W.weight + W.bias for t, W in ((x_q, W_q), (x_kv, W_k), (x_kv, W_v)))
        if kind == "reshape without transpose":
            q, k, v = (t.reshape(B, h, t.shape[1], dh) for t in (q, k, v))
        elif kind == "split with Tq":
            q, k, v = (t.view(B, Tq, h, dh).transpose(1, 2) for t in (q, k, v))
        else:
            q, k, v = (t.view(B, t.shape[1], h, dh).transpose(1, 2) for t in (q, k, v))
        scale = math.sqrt(d) if kind == "sqrt d_model" else math.sqrt(dh)
        scores = q @ k.transpose(-2, -1) / scale
        if mask is not None and kind != "mask ignored":
            if kind == "mask inverted":
                scores = scores.masked_fill(mask, float("-inf"))
            elif kind == "mask inverted, -1e9":
                scores = scores.masked_fill(mask, -1e9)
            elif kind == "masked to 0":
                scores = scores.masked_fill(~mask, 0.0)
            elif kind != "mask after softmax":
                scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if kind == "mask after softmax" and mask is not None:
            weights = weights * mask
        x1 = weights @ v  # (B, H, Tq, dh)
        if kind == "heads reversed":
            x1 = x1.flip(1)
        if kind in ("merge without transpose", "reshape without transpose"):
            concat = x1.reshape(B, Tq, d)
        else:
            concat = x1.transpose(1, 2).reshape(B, Tq, d)
        if kind == "no W^O":
            return concat
        if kind == "weight not transposed":
            return concat @ W_o.weight + W_o.bias
        return W_o(concat)

    return fn


def test_heads_alike():
    tokens = ["we", "want", "to", "eat", "apple"]
    different = torch.zeros(2, 5, 5)
    different[0, torch.arange(5), torch.arange(5)] = 1.0  # head 0: each word itself
    different[1, torch.arange(5), torch.tensor([1, 2, 3, 4, 4])] = 1.0  # head 1: the next word (4 of 5 differ)
    same = different[[0, 0]]  # both heads: each word itself
    assert nb04.check_heads_alike(False, different, tokens)
    assert not nb04.check_heads_alike(True, different, tokens)
    assert nb04.check_heads_alike(True, same, tokens)
    assert not nb04.check_heads_alike(False, same, tokens)
    assert not nb04.check_heads_alike(None, different, tokens)  # the notebook's unanswered state
    assert not nb04.check_heads_alike("no", different, tokens)


def test_heads_alike_unanswered_gives_nothing_away(capsys):
    nb04.check_heads_alike(None, torch.eye(5).expand(2, 5, 5), list("abcde"))
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED + "set heads_attend_alike") and "same for" not in out


def test_one_head_worse():
    mostly_tied = {0: True, 1: False, 2: False, 3: True, 4: False}  # the shipped seeds' pattern
    mostly_worse = {0: True, 1: True, 2: True, 3: False, 4: True}
    assert nb04.check_one_head_worse(False, mostly_tied)
    assert not nb04.check_one_head_worse(True, mostly_tied)
    assert nb04.check_one_head_worse(True, mostly_worse)
    assert not nb04.check_one_head_worse(False, mostly_worse)
    assert not nb04.check_one_head_worse(None, mostly_tied)
    assert not nb04.check_one_head_worse(1, mostly_tied)


def test_one_head_worse_unanswered_gives_nothing_away(capsys):
    nb04.check_one_head_worse(None, {0: True, 1: False})
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED + "set one_head_translates_worse") and "seeds" not in out


def test_multi_head_accepts_the_solution():
    assert nb04.check_multi_head(_solution)
    assert nb04.check_multi_head(lambda *a: (_solution(*a), None))  # (out, weights) like the module is fine


def test_multi_head_cases_go_beyond_section_1():
    """Section 1's walk-through (self-attention, no mask) does not answer the exercise: copied as it stands, it passes
    the first case only, and the checker says which case failed."""
    kinds = [case[4] for case in nb04.MH_CASES]
    assert kinds[0] is None and "causal" in kinds and "padding" in kinds
    assert any(tq != tk for _, _, tq, tk, _ in nb04.MH_CASES)  # cross-attention: Tq ≠ Tk
    assert len({h for _, h, *_ in nb04.MH_CASES}) > 1  # more than the 2 heads of section 1


def test_section_1_copy_is_not_enough(capsys):
    assert not nb04.check_multi_head(_section_1_copy)
    out = capsys.readouterr().out
    assert "self-attention with a causal mask" in out and "without a mask" in out


def test_each_listed_mistake_gets_its_hint(capsys):
    for mistake in nb04.MULTI_HEAD.mistakes[:-1]:  # the last is the NaN predicate, tested below
        assert not nb04.check_multi_head(learner(mistake.gives))
        assert mistake.hint in capsys.readouterr().out


@pytest.mark.parametrize(
    "kind, hint",
    [
        ("no split", "slices of dh"),
        ("reshape without transpose", "mixes positions into heads"),
        ("sqrt d_model", "√dh (its own width), not by √d_model"),
        ("no W^O", "W^O mixes them"),
        ("heads reversed", "wrong order"),
        ("merge without transpose", "transpose(1, 2) back"),
        ("weight not transposed", "(out, in)"),
        ("mask ignored", "without a mask"),
        ("mask inverted", "has NaN"),
        ("mask inverted, -1e9", "wrong way round"),
        ("masked to 0", "must be −∞"),
        ("mask after softmax", "before the softmax"),
        ("split with Tq", "Tq = 4 ≠ Tk = 6"),
    ],
)
def test_multi_head_rejects_typical_mistakes(kind, hint, capsys):
    assert not nb04.check_multi_head(_mistake(kind))
    assert hint in capsys.readouterr().out


def test_multi_head_rejects_swapped_inputs(capsys):
    def swapped(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # queries from the keys' sequence
        return _solution(x_kv, x_q, W_q, W_k, W_v, W_o, n_heads, mask)

    def keys_from_x_q(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # self-attention only
        return _solution(x_q, x_q, W_q, W_k, W_v, W_o, n_heads, mask)

    for fn in (swapped, keys_from_x_q):
        assert not nb04.check_multi_head(fn)
        out = capsys.readouterr().out
        assert "cross-attention" in out and "the queries come from x_q" in out


def test_multi_head_unanswered_and_broken(capsys):
    def unanswered(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
        raise NotImplementedError

    def returns_none(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
        return None

    def crashes(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
        return x_q @ torch.ones(3, 3)

    assert not nb04.check_multi_head(unanswered)
    assert capsys.readouterr().out.startswith(NOT_ANSWERED + "write the body")
    assert not nb04.check_multi_head(returns_none)
    assert capsys.readouterr().out.startswith(NOT_ANSWERED + "write the body")
    assert not nb04.check_multi_head(crashes)
    assert "raised RuntimeError" in capsys.readouterr().out
    assert not nb04.check_multi_head(None)
    assert not nb04.check_multi_head(lambda x, *a: x[:, :, :32])  # wrong shape
    assert "the answer has shape (2, 5, 64)" in capsys.readouterr().out


def test_multi_head_keeps_the_learners_random_state():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    nb04.check_multi_head(_solution)
    assert torch.equal(torch.random.get_rng_state(), before)


def test_mha_parameters():
    n = 4 * (64 * 64 + 64)
    assert n == sum(p.numel() for p in MultiHeadAttention(64, 8).parameters())
    assert nb04.check_mha_parameters(n, False)
    assert not nb04.check_mha_parameters(n, True)  # heads add no parameters
    assert not nb04.check_mha_parameters(4 * 64 * 64, False)  # forgot the biases
    assert not nb04.check_mha_parameters(64 * 64 * 8, True)
    assert not nb04.check_mha_parameters("many", False)
    assert not nb04.check_mha_parameters(None, None)  # the notebook's unanswered state


def test_mha_parameters_unanswered_gives_nothing_away(capsys):
    nb04.check_mha_parameters(None, None)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED + "fill in n_params") and "16640" not in out and "bias" not in out


def test_notebook_solution_passes():
    """The worked solution in notebook 04's <details> block passes the checker (and the committed cell is unanswered)."""
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "04_multi_head_attention.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    solution = solution_code("04_multi_head_attention.ipynb", "def my_multi_head")
    namespace = {"torch": torch, "math": math, "check_multi_head": nb04.check_multi_head}
    exec(solution.replace("check_multi_head(my_multi_head)", ""), namespace)
    assert nb04.check_multi_head(namespace["my_multi_head"])
    exercise = next(s for s in sources if s.startswith("def my_multi_head"))
    assert "raise NotImplementedError" in exercise
    assert "def my_multi_head(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None)" in exercise


# ---- exercise 2 is written out: ready-made attention and handing the work to a layer are refused ----


def _course_module(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the course's MultiHeadAttention
    m = MultiHeadAttention(x_q.shape[-1], n_heads)
    with torch.no_grad():
        for mine, given in zip((m.w_q, m.w_k, m.w_v, m.w_o), (W_q, W_k, W_v, W_o)):
            mine.weight.copy_(given.weight)
            mine.bias.copy_(given.bias)
    return m(x_q, x_kv, x_kv, mask)[0]


def _split(t, n_heads):
    B, T, d = t.shape
    return t.view(B, T, n_heads, d // n_heads).transpose(1, 2)


def _course_attention(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the course's function, per head
    from course_utils.core.attention import scaled_dot_product_attention

    q, k, v = (_split(t, n_heads) for t in (W_q(x_q), W_k(x_kv), W_v(x_kv)))
    x1, _ = scaled_dot_product_attention(q, k, v, mask)
    return W_o(x1.transpose(1, 2).reshape(x_q.shape))


def _course_softmax(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # the course's masked softmax
    from course_utils.core.attention import masked_softmax

    q, k, v = (_split(t, n_heads) for t in (W_q(x_q), W_k(x_kv), W_v(x_kv)))
    weights = masked_softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask)
    return W_o((weights @ v).transpose(1, 2).reshape(x_q.shape))


def _torch_layer(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # torch's nn.MultiheadAttention
    m = torch.nn.MultiheadAttention(x_q.shape[-1], n_heads, batch_first=True)
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([W_q.weight, W_k.weight, W_v.weight]))
        m.in_proj_bias.copy_(torch.cat([W_q.bias, W_k.bias, W_v.bias]))
        m.out_proj.weight.copy_(W_o.weight)
        m.out_proj.bias.copy_(W_o.bias)
    return m(x_q, x_kv, x_kv, attn_mask=None if mask is None else ~mask.expand(-1, n_heads, -1, -1).flatten(0, 1))[0]


def _torch_functional(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # F.multi_head_attention_forward
    F = torch.nn.functional
    d = x_q.shape[-1]
    out, _ = F.multi_head_attention_forward(
        *(t.transpose(0, 1) for t in (x_q, x_kv, x_kv)),
        d,
        n_heads,
        torch.cat([W_q.weight, W_k.weight, W_v.weight]),
        torch.cat([W_q.bias, W_k.bias, W_v.bias]),
        None,
        None,
        False,
        0.0,
        W_o.weight,
        W_o.bias,
        need_weights=False,
    )
    return out.transpose(0, 1)


def _torch_sdpa(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):  # F.scaled_dot_product_attention, per head
    from torch.nn.functional import scaled_dot_product_attention as attend  # an alias

    q, k, v = (_split(t, n_heads) for t in (W_q(x_q), W_k(x_kv), W_v(x_kv)))
    return W_o(attend(q, k, v, attn_mask=mask).transpose(1, 2).reshape(x_q.shape))


@pytest.mark.parametrize(
    "fn, said",
    [
        (_course_module, "MultiHeadAttention"),
        (_course_attention, "course_utils"),
        (_course_softmax, "course_utils"),
        (_torch_layer, "MultiheadAttention"),
        (_torch_functional, "multi_head_attention_forward"),
        (_torch_sdpa, "scaled_dot_product_attention"),
        (torch.nn.functional.multi_head_attention_forward, "multi_head_attention_forward"),
    ],
)
def test_multi_head_refuses_ready_made_attention(fn, said, capsys):
    assert not nb04.check_multi_head(fn)
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet: my_multi_head uses ") and said in out and out.count("\n") == 1, out
    assert "write the steps yourself" in out


def _honest_with_names_like_the_shortcuts(x_q, x_kv, W_q, W_k, W_v, W_o, n_heads, mask=None):
    attention = torch.nn.Softmax(dim=-1)  # a plain layer with no weights, like torch.softmax
    layer = W_o
    B, Tq, d = x_q.shape
    q, k, v = (_split(t, n_heads) for t in (W_q(x_q), W_k.forward(x_kv), W_v(x_kv)))
    scaled_dot_product_attention = q @ k.transpose(-2, -1) / math.sqrt(d // n_heads)
    if mask is not None:
        scaled_dot_product_attention = scaled_dot_product_attention.masked_fill(~mask, float("-inf"))
    return layer((attention(scaled_dot_product_attention) @ v).transpose(1, 2).reshape(B, Tq, d))


def test_multi_head_still_accepts_honest_solutions():
    assert nb04.check_multi_head(_solution) and nb04.check_multi_head(_honest_with_names_like_the_shortcuts)


@pytest.mark.parametrize("wrong", [3, "X @ W", [1.0, 2.0], {"w": 1}])
def test_every_checker_answers_a_wrong_type_with_one_line(wrong, capsys):
    tokens = ["we", "want", "to", "eat", "apple"]
    checks = [
        lambda: nb04.check_head_shapes(wrong, wrong, wrong),
        lambda: nb04.check_heads_alike(wrong, torch.eye(5).expand(2, 5, 5), tokens),
        lambda: nb04.check_one_head_worse(wrong, {0: True, 1: False}),
        lambda: nb04.check_multi_head(wrong),
        lambda: nb04.check_multi_head(lambda *args: wrong),  # a function that returns the wrong type
        lambda: nb04.check_mha_parameters(wrong, wrong),
        lambda: nb04.check_mha_parameters(4 * (64 * 64 + 64), wrong),
    ]
    for check in checks:
        assert check() is False
        out = capsys.readouterr().out
        assert out.startswith("❌ Not yet: ") and out.count("\n") == 1, out


def test_predictions_accept_numpy_bools():
    import numpy as np

    assert nb04.check_one_head_worse(np.False_, {0: True, 1: False, 2: False})
    assert nb04.check_heads_alike(np.True_, torch.eye(5).expand(2, 5, 5), list("abcde"))
    assert nb04.check_mha_parameters(4 * (64 * 64 + 64), np.False_)
