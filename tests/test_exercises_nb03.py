"""Notebook 03 checkers accept the worked solutions and reject typical wrong answers."""

from __future__ import annotations

import math

import pytest
import torch

from course_utils.exercises import nb03


def test_divisor_accepts_sqrt_d_and_rejects_typical_mistakes(capsys):
    assert nb03.check_divisor_256(math.sqrt(256))
    assert nb03.check_divisor_256(16)
    for wrong in (1.0, 256, 8, 0, -16, "sixteen"):
        assert not nb03.check_divisor_256(wrong), wrong
    assert "❌" in capsys.readouterr().out


def test_apple_attends_to_eat():
    W_Q2 = torch.tensor([[0.0, 0.0], [2.0, 0.0]])
    W_K2 = torch.tensor([[2.0, 0.0], [0.0, 0.0]])
    assert nb03.check_apple_attends_to_eat(W_Q2, W_K2)
    assert nb03.toy_weights(W_Q2, W_K2)[3, 2] > 0.5


def test_apple_rejects_the_notebooks_eat_to_apple_matrices_and_zeros():
    W_Q = torch.tensor([[0.0, 2.0], [0.0, 0.0]])
    W_K = torch.tensor([[0.0, 0.0], [0.0, 2.0]])
    assert not nb03.check_apple_attends_to_eat(W_Q, W_K)  # eat -> apple, but apple's own row prefers apple
    assert not nb03.check_apple_attends_to_eat(torch.zeros(2, 2), torch.zeros(2, 2))  # uniform
    assert not nb03.check_apple_attends_to_eat(torch.zeros(3, 3), torch.zeros(3, 3))  # wrong shape: message, no error


def test_window_mask():
    ones = torch.ones(4, 4, dtype=torch.bool)
    assert nb03.check_window_mask(ones.tril() & ones.triu(-1))
    assert not nb03.check_window_mask(ones.tril())  # full causal mask
    assert not nb03.check_window_mask(~(ones.tril() & ones.triu(-1)))  # opposite convention
    assert not nb03.check_window_mask((ones.tril() & ones.triu(-1)).int())  # not bool
    assert not nb03.check_window_mask(ones.triu() & ones.tril(1))  # window to the right: looks ahead
    assert not nb03.check_window_mask(torch.ones(3, 3, dtype=torch.bool))


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
        assert out.startswith("✍ Write your guess first") and "0.993" not in out and "0.745" not in out
    for bad in ("both", 0.9, "kaiming"):
        assert not nb03.check_init_guess(bad, measured)
    # the checker follows the measurement, not a stored answer
    assert nb03.check_init_guess("xavier", {"xavier": 0.9, "torch_default": 0.5})
    with pytest.raises(ValueError):
        nb03.check_init_guess("xavier", {"xavier": 0.9})


def test_init_guess_on_the_notebooks_three_epoch_training():
    """The notebook's cell: both inits trained 3 epochs; torch_default picks harder in layer 0."""
    from course_utils.data import load_pairs
    from course_utils.heads import mean_row_max, trace_pairs
    from course_utils.model import ModelConfig
    from course_utils.training import TrainConfig, train

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
