"""Checkers of notebook 02 accept the worked solutions and reject typical wrong answers;
plus the course_utils.projections helpers the notebook and its widget use."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from course_utils.errors import UnknownWordError  # noqa: E402
from course_utils.exercises.nb02 import check_cross_shapes, check_head_query, check_toy_query  # noqa: E402
from course_utils.projections import (
    TOY_VOCAB,
    TOY_WQ,
    head_banks,
    one_hot,
    places_table,
    plot_word_qkv,  # noqa: E402
    qkv_of_sentence,
    query_bank,
    word_qkv,
)
from course_utils.tracing import run_with_trace  # noqa: E402
from course_utils.training import load_standard_model  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return load_standard_model().model


# ---- exercise 1: shapes in cross-attention ----


def test_cross_shapes_solution_matches_the_real_trace(model):
    t = run_with_trace(model, "i can eat bread")
    assert t.translation == ["ich", "kann", "brot", "essen"]
    q, k = tuple(t["decoder.0.cross.q"].shape), tuple(t["decoder.0.cross.k"].shape)
    assert (q, k) == ((2, 5, 32), (2, 4, 32))
    assert check_cross_shapes(q, k)
    assert check_cross_shapes(t["decoder.0.cross.q"].shape, t["decoder.0.cross.k"].shape)  # torch.Size works too


@pytest.mark.parametrize(
    "q, k, hint",
    [
        ((2, 4, 32), (2, 5, 32), "swapped"),
        ((2, 4, 32), (2, 4, 32), "<bos>"),
        ((2, 5, 64), (2, 4, 64), "dh"),
        ((5, 32), (4, 32), "dh"),
        ((2, 5, 32), (2, 5, 32), "one per English word"),
        (None, None, "tuples"),
    ],
)
def test_cross_shapes_wrong(q, k, hint, capsys):
    assert not check_cross_shapes(q, k)
    assert hint in capsys.readouterr().out


# ---- exercise 2: a mixed one-hot query ----


def test_toy_query_solution():
    answer = 0.25 * TOY_WQ[0] + 0.75 * TOY_WQ[2]
    assert torch.equal(answer, (0.25 * one_hot("eat") + 0.75 * one_hot("read")) @ TOY_WQ)
    assert check_toy_query(answer)
    assert check_toy_query([2.5, 0.0, 0.5])


@pytest.mark.parametrize("wrong", [TOY_WQ[2], 0.75 * TOY_WQ[0] + 0.25 * TOY_WQ[2], [2.5, 0.0], None, "q"])
def test_toy_query_wrong(wrong):
    assert not check_toy_query(wrong)


# ---- exercise 3: one head's query by hand ----


def test_head_query_solution(model):
    attn = model.encoder[0].self_attn
    x = run_with_trace(model, "we want to eat apple")["encoder.embed"]
    answer = x[4] @ attn.w_q.weight[32:64].T + attn.w_q.bias[32:64]
    assert check_head_query(answer, model)


def test_head_query_checker_follows_the_model_it_is_given(learned_seeds, capsys):
    """Every seed: its own hand-computed query passes, seed 0's answer is rejected for another seed."""
    answers = {}
    for seed, res in learned_seeds.items():
        attn = res.model.encoder[0].self_attn
        x = run_with_trace(res.model, "we want to eat apple")["encoder.embed"]
        answers[seed] = x[4] @ attn.w_q.weight[32:64].T + attn.w_q.bias[32:64]
        assert check_head_query(answers[seed], res.model)
    assert not check_head_query(answers[0], learned_seeds[1].model)
    capsys.readouterr()


def test_head_query_wrong(model, capsys):
    attn = model.encoder[0].self_attn
    x = run_with_trace(model, "we want to eat apple")["encoder.embed"][4]
    W, b = attn.w_q.weight, attn.w_q.bias
    cases = [
        (x @ W[32:64].T, "bias"),  # forgot the bias
        (x @ W[:32].T + b[:32], "head 0"),  # wrong head
        (x @ W[:, 32:64] + b[32:64], "columns"),  # the PyTorch-convention mistake
        (x @ W.T + b, "dh = 32"),  # all heads
        (None, "32 numbers"),
    ]
    for answer, hint in cases:
        assert not check_head_query(answer, model)
        assert hint in capsys.readouterr().out


# ---- projections helpers ----


def test_one_hot_selects_a_row_and_mixes_rows():
    for i, w in enumerate(TOY_VOCAB):
        assert torch.equal(one_hot(w) @ TOY_WQ, TOY_WQ[i])
    with pytest.raises(ValueError, match="toy vocabulary"):
        one_hot("book")


def test_query_bank_is_the_transposed_weight_and_heads_are_column_blocks(model):
    attn = model.encoder[0].self_attn
    bank = query_bank(attn.w_q)
    assert torch.equal(bank, attn.w_q.weight.T)
    banks = head_banks(attn.w_q, attn.n_heads)
    assert torch.equal(torch.cat(banks, dim=1), bank)
    x = torch.randn(64, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(torch.cat([x @ B for B in banks]) + attn.w_q.bias, attn.w_q(x), atol=1e-5)


def test_qkv_of_sentence_matches_trace_in_both_layers(model):
    t = run_with_trace(model, "we want to eat bread")
    for layer in (0, 1):
        qkv, words = qkv_of_sentence(model, "we want to eat bread", layer)
        assert words == t.src_tokens
        for kind in "qkv":
            assert torch.allclose(qkv[kind], t[f"encoder.{layer}.self.{kind}"], atol=1e-5)


def test_word_qkv_positions_and_errors(model):
    M, note = word_qkv(model, "we want to eat apple", "eat", head=1)
    qkv, _ = qkv_of_sentence(model, "we want to eat apple")
    assert torch.equal(M, torch.stack([qkv[k][1, 3] for k in "qkv"])) and "position 3" in note
    M2, note2 = word_qkv(model, "we want to eat apple", "bread", head=0)
    assert M2.shape == (3, 32) and "alone" in note2
    with pytest.raises(UnknownWordError, match="Did you mean: apple"):
        word_qkv(model, "we want to eat apple", "apples", head=0)
    with pytest.raises(UnknownWordError):
        word_qkv(model, "we want to eat pizza", "eat", head=0)  # unknown word in the sentence
    with pytest.raises(IndexError, match="heads 0..1"):
        word_qkv(model, "we want to eat apple", "eat", head=2)
    with pytest.raises(IndexError, match="layers 0..1"):
        word_qkv(model, "we want to eat apple", "eat", head=0, layer=2)


def test_widget_shows_a_message_for_an_unknown_word(model):
    from functools import partial

    import ipywidgets as widgets

    from course_utils.widgets import render

    out = widgets.Output()
    msg = render(
        partial(plot_word_qkv, model), {"sentence": "we want to eat apple", "word": "xyz", "head": 0, "layer": 0}, out
    )
    assert msg is not None and "Unknown English word 'xyz'" in msg
    assert (
        render(partial(plot_word_qkv, model), {"sentence": "we eat apple", "word": "eat", "head": 1, "layer": 1}, out)
        is None
    )
    plt.close("all")


def test_places_table(model):
    t = run_with_trace(model, "we want to eat apple")
    df = places_table(t)
    assert df.loc["cross-attention", "k (H, Tk, dh)"] == (2, 5, 32)
    assert df.loc["cross-attention", "key tokens"] == "we want to eat apple"
    assert df.loc["decoder self-attention", "q (H, Tq, dh)"] == (2, 6, 32)
