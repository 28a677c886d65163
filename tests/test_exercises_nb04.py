"""Notebook 04 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from course_utils.attention import MultiHeadAttention
from course_utils.exercises import nb04


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


def test_head_shapes_unanswered_gives_nothing_away(capsys):
    nb04.check_head_shapes(None, None, None)
    out = capsys.readouterr().out
    assert "Not yet: fill in" in out and "(B, H, T, dh)" not in out


def _solution(x, W_q, W_k, W_v, W_o, n_heads):  # the worked solution in the notebook
    B, T, d_model = x.shape
    dh = d_model // n_heads

    def split(t):  # (B, T, d_model) -> (B, H, T, dh)
        return t.view(B, T, n_heads, dh).transpose(1, 2)

    q, k, v = split(W_q(x)), split(W_k(x)), split(W_v(x))
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)
    concat = (weights @ v).transpose(1, 2).reshape(B, T, d_model)
    return W_o(concat)


def _mistake(kind):
    """A learner's multi-head forward with one typical mistake."""

    def fn(x, W_q, W_k, W_v, W_o, n_heads):
        B, T, d = x.shape
        h = 1 if kind == "no split" else n_heads
        dh = d // h
        q, k, v = W_q(x), W_k(x), W_v(x)
        if kind == "weight not transposed":
            q, k, v = (x @ W.weight + W.bias for W in (W_q, W_k, W_v))
        if kind == "reshape without transpose":
            q, k, v = (t.reshape(B, h, T, dh) for t in (q, k, v))
        else:
            q, k, v = (t.view(B, T, h, dh).transpose(1, 2) for t in (q, k, v))
        scale = math.sqrt(d) if kind == "sqrt d_model" else math.sqrt(dh)
        x1 = torch.softmax(q @ k.transpose(-2, -1) / scale, dim=-1) @ v  # (B, H, T, dh)
        if kind == "heads reversed":
            x1 = x1.flip(1)
        if kind in ("merge without transpose", "reshape without transpose"):
            concat = x1.reshape(B, T, d)
        else:
            concat = x1.transpose(1, 2).reshape(B, T, d)
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
    assert "Not yet: set heads_attend_alike" in out and "same for" not in out


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
    assert "Not yet: set one_head_translates_worse" in out and "seeds" not in out


def test_multi_head_accepts_the_solution():
    assert nb04.check_multi_head(_solution)
    assert nb04.check_multi_head(lambda *a: (_solution(*a), None))  # (out, weights) like the module is fine


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
    ],
)
def test_multi_head_rejects_typical_mistakes(kind, hint, capsys):
    assert not nb04.check_multi_head(_mistake(kind))
    assert hint in capsys.readouterr().out


def test_multi_head_unanswered_and_broken(capsys):
    def unanswered(x, W_q, W_k, W_v, W_o, n_heads):
        raise NotImplementedError

    def returns_none(x, W_q, W_k, W_v, W_o, n_heads):
        return None

    def crashes(x, W_q, W_k, W_v, W_o, n_heads):
        return x @ torch.ones(3, 3)

    assert not nb04.check_multi_head(unanswered)
    assert "Not yet: write the body" in capsys.readouterr().out
    assert not nb04.check_multi_head(returns_none)
    assert "Not yet: write the body" in capsys.readouterr().out
    assert not nb04.check_multi_head(crashes)
    assert "raised RuntimeError" in capsys.readouterr().out
    assert not nb04.check_multi_head(None)
    assert not nb04.check_multi_head(lambda x, *a: x[:, :, :32])  # wrong shape
    assert "should be (2, 5, 64)" in capsys.readouterr().out


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


def test_notebook_solution_passes():
    """The worked solution in notebook 04's <details> block passes the checker (and the committed cell is unanswered)."""
    nb = json.loads((Path(__file__).resolve().parents[1] / "notebooks" / "04_multi_head_attention.ipynb").read_text())
    sources = ["".join(c["source"]) for c in nb["cells"]]
    block = next(s for s in sources if s.startswith("<details>") and "def my_multi_head" in s)
    solution = block.split("```python")[1].split("```")[0]
    namespace = {"torch": torch, "math": math, "check_multi_head": nb04.check_multi_head}
    exec(solution.replace("check_multi_head(my_multi_head)", ""), namespace)
    assert nb04.check_multi_head(namespace["my_multi_head"])
    exercise = next(s for s in sources if s.startswith("def my_multi_head"))
    assert "raise NotImplementedError" in exercise
