"""Notebook 03 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from notebook_cells import solution_blocks  # tests/ is on sys.path under pytest

from course_utils.core.attention import masked_softmax, scaled_dot_product_attention
from course_utils.exercises import nb03
from course_utils.exercises.framework import NOT_ANSWERED, NOT_YET, learner

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "03_scaled_dot_product_attention.ipynb"


def my_masked_softmax(scores, mask):  # the worked solution of exercise 1
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def my_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = my_masked_softmax(scores, mask)
    return weights @ v, weights


def _unanswered(*args):
    raise NotImplementedError


def test_masked_softmax_and_attention_accept_right_answers(capsys):
    assert nb03.check_masked_softmax(my_masked_softmax) and nb03.check_attention(my_attention)
    assert nb03.check_attention(lambda q, k, v, mask=None: my_attention(q, k, v, mask)[0])  # output only is fine
    where = lambda s, m: torch.softmax(s if m is None else torch.where(m, s, -torch.inf), dim=-1)  # noqa: E731
    assert nb03.check_masked_softmax(where)  # another right way
    assert capsys.readouterr().out.count("✅") == 4


@pytest.mark.parametrize(
    "spec, check",
    [(nb03.MASKED_SOFTMAX, nb03.check_masked_softmax), (nb03.ATTENTION, nb03.check_attention)],
    ids=["masked_softmax", "attention"],
)
def test_each_listed_mistake_gets_its_hint(spec, check, capsys):
    for mistake in spec.mistakes:
        wrong = learner(mistake.gives) if mistake.gives else learner(lambda *a, **kw: spec.reference(*a) * torch.nan)
        assert not check(wrong)
        out = capsys.readouterr().out
        assert out.startswith(NOT_YET) and mistake.hint in out, out


def _written_with(fn):
    def attention(q, k, v, mask=None):
        return fn(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), mask) @ v

    return attention


def _helper_softmax(scores, mask):  # a helper of the learner's that delegates
    return masked_softmax(scores, mask)


@pytest.mark.parametrize(
    "check, fn, used",
    [
        (nb03.check_masked_softmax, masked_softmax, "masked_softmax"),
        (nb03.check_masked_softmax, lambda s, m: masked_softmax(s, m), "masked_softmax"),
        (nb03.check_attention, scaled_dot_product_attention, "scaled_dot_product_attention"),
        (nb03.check_attention, torch.nn.functional.scaled_dot_product_attention, "scaled_dot_product_attention"),
        (nb03.check_attention, lambda q, k, v, mask=None: _helper_softmax(q @ k.mT, mask) @ v, "(in _helper_softmax)"),
    ],
)
def test_the_ready_made_versions_are_refused(check, fn, used, capsys):
    assert not check(fn)
    out = capsys.readouterr().out
    assert out.startswith(NOT_YET) and used in out and "a ready-made version" in out and out.count("\n") == 1, out


def test_unanswered_raising_or_broken_functions_get_one_line(capsys):
    for check in (nb03.check_masked_softmax, nb03.check_attention):
        for fn in (_unanswered, lambda *a, **kw: None, None):
            assert not check(fn) and capsys.readouterr().out.startswith(NOT_ANSWERED)
        assert not check(lambda *a, **kw: 1 / 0) and "ZeroDivisionError" in capsys.readouterr().out


def test_times_ten_prediction(capsys):
    assert nb03.check_times_ten("up", 0.818, 0.999)
    assert nb03.check_times_ten(" Up ", 0.818, 0.999)
    for wrong in ("same", "down"):
        assert not nb03.check_times_ten(wrong, 0.818, 0.999)
    assert "e^score" in capsys.readouterr().out  # the "same" mistake's hint
    assert nb03.check_times_ten("same", 0.5, 0.5)  # follows the measurement
    assert not nb03.check_times_ten("bigger", 0.818, 0.999)
    capsys.readouterr()
    assert not nb03.check_times_ten(None, 0.818, 0.999)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED) and "0.818" not in out and "0.999" not in out


def test_causal_prediction(capsys):
    words = ["i", "can", "eat", "apple"]
    row = torch.tensor([0.2, 0.2, 0.6, 0.0])
    assert nb03.check_causal_top("eat", row, words)
    assert not nb03.check_causal_top("apple", row, words)
    assert "hides 'apple'" in capsys.readouterr().out
    assert not nb03.check_causal_top("i", row, words)
    assert not nb03.check_causal_top("banana", row, words)
    capsys.readouterr()
    assert not nb03.check_causal_top(None, row, words)
    out = capsys.readouterr().out
    assert out.startswith(NOT_ANSWERED) and "0.6" not in out


def test_eat_apple_pair_accepts_the_worked_solution():
    W_Q2 = torch.tensor([[0.0, 2.0], [2.0, 0.0]])
    W_K2 = 2 * torch.eye(2)
    assert nb03.check_eat_apple_pair(W_Q2, W_K2)
    w = nb03.toy_weights(W_Q2, W_K2)
    assert w[3].argmax() == 2 and w[2].argmax() == 3 and w[3, 2] > 0.5 and w[2, 3] > 0.5


def test_eat_apple_pair_rejects_the_sections_matrices_their_swap_and_zeros(capsys):
    W_Q = torch.tensor([[0.0, 2.0], [0.0, 0.0]])
    W_K = torch.tensor([[0.0, 0.0], [0.0, 2.0]])
    assert not nb03.check_eat_apple_pair(W_Q, W_K)  # section 2: eat -> apple only
    assert nb03.EAT_APPLE.mistakes[1].hint in capsys.readouterr().out
    assert not nb03.check_eat_apple_pair(W_K, W_Q)  # section 6's swap: apple -> eat only
    assert nb03.EAT_APPLE.mistakes[0].hint in capsys.readouterr().out
    assert not nb03.check_eat_apple_pair(torch.zeros(2, 2), torch.zeros(2, 2))  # uniform
    assert "neither" in capsys.readouterr().out
    assert not nb03.check_eat_apple_pair(torch.zeros(3, 3), torch.zeros(3, 3))  # wrong shape: message, no error
    assert not nb03.check_eat_apple_pair(None, None)  # unanswered
    out = capsys.readouterr().out
    assert NOT_ANSWERED in out and "row" not in out.split("✍")[-1]


def test_window_mask(capsys):
    ones = torch.ones(4, 4, dtype=torch.bool)
    assert nb03.check_window_mask(ones.tril() & ones.triu(-1))
    for mistake in nb03.WINDOW_MASK.mistakes:
        assert not nb03.check_window_mask(mistake.gives) and mistake.hint in capsys.readouterr().out
    assert not nb03.check_window_mask((ones.tril() & ones.triu(-1)).int()) and "dtype" in capsys.readouterr().out
    assert not nb03.check_window_mask(ones.triu() & ones.tril(1))  # window to the right: looks ahead
    assert not nb03.check_window_mask(torch.ones(3, 3, dtype=torch.bool)) and "shape" in capsys.readouterr().out


def test_every_unanswered_state_prints_one_not_answered_line(capsys):
    """The committed notebook shows each exercise unanswered: one ✍ line each, never ❌ (a wrong answer)."""
    measured = {"xavier": 0.745, "torch_default": 0.993}
    assert not nb03.check_window_mask(None)
    assert not nb03.check_times_ten(None, 0.818, 0.999)
    assert not nb03.check_causal_top(None, torch.tensor([0.2, 0.2, 0.6, 0.0]), ["i", "can", "eat", "apple"])
    assert not nb03.check_eat_apple_pair(None, None)
    assert not nb03.check_init_guess("?", measured)
    assert not nb03.check_masked_softmax(_unanswered) and not nb03.check_attention(_unanswered)
    out = capsys.readouterr().out
    assert out.count(NOT_ANSWERED) == len(out.splitlines()) == 7 and "❌" not in out
    assert "0.99" not in out and "0.81" not in out and "0.6" not in out and "row" not in out


def test_init_guess_accepts_the_measured_answer_and_rejects_the_other_and_the_placeholder(capsys):
    measured = {"xavier": 0.745, "torch_default": 0.993}
    assert nb03.check_init_guess("torch_default", measured)
    assert nb03.check_init_guess(" Torch default ", measured)  # spelling variants of the right answer
    assert "✅" in capsys.readouterr().out
    assert not nb03.check_init_guess("xavier", measured)
    assert "❌" in capsys.readouterr().out
    for unanswered in ("?", "", None, ...):
        assert not nb03.check_init_guess(unanswered, measured)
        out = capsys.readouterr().out
        assert out.startswith(NOT_ANSWERED) and "0.993" not in out and "0.745" not in out
    for bad in ("both", 0.9, "kaiming"):
        assert not nb03.check_init_guess(bad, measured)
    # the checker follows the measurement, not a stored answer
    assert nb03.check_init_guess("xavier", {"xavier": 0.9, "torch_default": 0.5})
    with pytest.raises(ValueError):
        nb03.check_init_guess("xavier", {"xavier": 0.9})


def test_init_guess_on_the_notebooks_three_epoch_training():
    """The notebook's cell: both inits trained 3 epochs; torch_default picks harder in layer 0."""
    from course_utils.core.data import load_pairs
    from course_utils.core.model import ModelConfig
    from course_utils.measures.attention_stats import mean_row_max, trace_pairs
    from course_utils.training.train import TrainConfig, train

    pairs = load_pairs("train")
    measured = {
        init: mean_row_max(
            trace_pairs(
                train(ModelConfig(init=init), TrainConfig(epochs=3, snapshot_epochs=()), probes={}, log=None).model,
                pairs,
            ),
            "encoder self",
            0,
        )
        for init in nb03.INITS
    }
    assert measured["torch_default"] > 0.99 > 0.9 > measured["xavier"]
    assert nb03.check_init_guess("torch_default", measured) and not nb03.check_init_guess("xavier", measured)


def test_every_worked_solution_in_the_notebook_is_accepted(capsys):
    blocks = solution_blocks(NOTEBOOK)
    assert len(blocks) == 4  # exercise 1, the init guess, exercises 2 and 3
    space = {"torch": torch, "math": math, "ex": nb03}
    for code in blocks:
        exec(code, space)
    assert nb03.check_masked_softmax(space["my_masked_softmax"]) and nb03.check_attention(space["my_attention"])
    assert nb03.check_eat_apple_pair(space["W_Q2"], space["W_K2"]) and nb03.check_window_mask(space["window_mask"])
    assert space["my_guess"] == "torch_default"
    assert "❌" not in capsys.readouterr().out


def test_the_predictions_on_the_notebooks_toy_sentence():
    """What the two predict prompts reveal, computed as the notebook does: × 10 sharpens eat's row; under the causal
    mask eat's largest weight is on itself."""
    from course_utils.core.attention import scaled_dot_product_attention
    from course_utils.core.toys import toy_embeddings

    X = toy_embeddings(nb03.TOY_WORDS)
    W_Q = torch.tensor([[0.0, 2.0], [0.0, 0.0]])
    W_K = torch.tensor([[0.0, 0.0], [0.0, 2.0]])
    energy = (X @ W_Q) @ (X @ W_K).T / math.sqrt(2)
    before, after = torch.softmax(energy, -1)[2, 3].item(), torch.softmax(10 * energy, -1)[2, 3].item()
    assert nb03.check_times_ten("up", before, after) and not nb03.check_times_ten("same", before, after)
    _, w_causal = scaled_dot_product_attention(X @ W_Q, X @ W_K, X, torch.ones(4, 4, dtype=torch.bool).tril())
    assert nb03.check_causal_top("eat", w_causal[2], nb03.TOY_WORDS)
    assert not nb03.check_causal_top("apple", w_causal[2], nb03.TOY_WORDS)
